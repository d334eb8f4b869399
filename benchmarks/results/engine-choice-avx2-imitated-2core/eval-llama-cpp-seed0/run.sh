cd /work/main
export PATH=/work/main/.venv/bin:$PATH
OUT=benchmarks/results/engine-choice-avx2-imitated-2core/eval-llama-cpp-seed0
PORT=18911
dragoman serve --architecture llama-cpp --cache-mib 0 --port $PORT --host 127.0.0.1 > /tmp/q/chain7-serve.log 2>&1 &
S=$!
for i in $(seq 1 300); do curl -sf 127.0.0.1:$PORT/ready >/dev/null && break; sleep 1; done
dragoman eval --url http://127.0.0.1:$PORT --pairs en-fr,en-de,en-es,en-ko,en-zh,en-ja --kinds ui,sentence,paragraph --per-pair 20 --seed 0 --concurrency 8 --server-flags "--architecture llama-cpp --cache-mib 0 (xllamacpp wheel, AVX2 build)" --label "dragoman on llama.cpp (xllamacpp wheel, AVX2 build), Q4_K_M GGUF" --out $OUT
echo EVAL EXIT $?
kill $S; wait $S

# dragoman serve (llama-cpp) fresh with --max-num-seqs N, 16 clients x 32 texts; alternate 16/32
cd /work/main && source .venv/bin/activate
for N in "$@"; do
  dragoman serve --architecture llama-cpp --cache-mib 0 --port 8399 --max-num-seqs $N --log-level warning > /tmp/lv/serve-$N.log 2>&1 &
  SP=$!
  for i in $(seq 1 240); do curl -sf http://127.0.0.1:8399/ready >/dev/null && break; sleep 1; done
  echo "slots $N: $(python benchmarks/llamacpp/fresh_closed_loop.py http://127.0.0.1:8399 16 32 | tr '\n' ' ')"
  kill $SP; wait $SP
  sleep 2
done

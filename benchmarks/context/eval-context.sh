#!/usr/bin/env bash
# Neighbour context on vs off: for each MODE (off, previous, both) start `dragoman serve
# --sentence-context MODE --cache-mib 0`, wait for /ready, run `dragoman eval` on the
# paragraphs (the multi-sentence inputs, cut into sentences by default), stop the server, and
# count the replies the context guard asked again (service/context.py logs each). Run it under
# the engine lock:
#   flock /tmp/dragoman-engine.lock benchmarks/context/eval-context.sh OUT_DIR off previous both
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$1"; shift
port="${PORT:-8437}"
per_pair="${PER_PAIR:-40}"
py="${PYTHON:-$root/.venv/bin/python}"
flags="${SERVER_FLAGS:-}"  # more serve flags for every mode, e.g. --no-retry-invalid
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
. "$root/benchmarks/serve.sh"
for mode in "$@"; do
  log="/tmp/dragoman-context-$mode-$port.log"
  serve_start "$log" -m dragoman serve --host 127.0.0.1 --port "$port" --cache-mib 0 \
    --sentence-context "$mode" $flags
  "$py" -m dragoman eval --url "http://127.0.0.1:$port" --concurrency 16 --per-pair "$per_pair" \
    --seed 0 --kinds paragraph --pairs en-fr,en-de,en-es,en-zh \
    --server-flags "dragoman serve --cache-mib 0 --sentence-context $mode $flags" \
    --label "paragraphs, sentence context $mode, avx512-bf16 2-core host" \
    --out "$out/$mode"
  serve_stop
  echo "replies asked again without context: $(grep -c 'context dropped' "$log" || true)" \
    > "$out/$mode/guard.txt"
  grep -o 'the reply [a-z ]*' "$log" | sort | uniq -c >> "$out/$mode/guard.txt" || true
done

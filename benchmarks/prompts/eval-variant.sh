#!/usr/bin/env bash
# Start `dragoman serve` with a prompt variant (benchmarks/prompts/variants.py), wait for
# /ready, run `dragoman eval` against it, stop the server. Run it under the engine lock:
#   flock /tmp/dragoman-engine.lock benchmarks/prompts/eval-variant.sh VARIANT OUT_DIR [eval flags]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
variant="$1"; out="$2"; shift 2
port="${PORT:-8431}"
py="${PYTHON:-$root/.venv/bin/python}"
export PYTHONPATH="$root/src${PYTHONPATH:+:$PYTHONPATH}"
. "$root/benchmarks/serve.sh"
serve_start "/tmp/dragoman-variant-$port.log" "$root/benchmarks/prompts/variants.py" "$variant" \
  serve --host 127.0.0.1 --port "$port" --cache-mib 0
"$py" -m dragoman eval --url "http://127.0.0.1:$port" --concurrency 16 --per-pair 20 --seed 0 \
  --server-flags "dragoman serve --cache-mib 0, prompt variant $variant (benchmarks/prompts/variants.py)" \
  --label "prompt variant $variant, default model and settings, avx512-bf16 2-core host" \
  --out "$out" "$@"

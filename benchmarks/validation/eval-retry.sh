#!/usr/bin/env bash
# `dragoman eval` (seed 0, 20 texts per pair and kind, en->fr/de/es/ko) against a server with
# the reply check and retry on or off; saves the server's /metrics after the run (retries by
# reason, vLLM's request count, tokens and engine time). Run it under the engine lock:
#   flock /tmp/dragoman-engine.lock benchmarks/validation/eval-retry.sh on|off OUT_DIR
# SRC names another source tree to serve from (a before/after pair in one sitting), HOST the
# host's words for the label.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
mode="$1"; out="$2"; shift 2
port="${PORT:-8437}"
py="${PYTHON:-$root/.venv/bin/python}"
export PYTHONPATH="${SRC:-$root/src}${PYTHONPATH:+:$PYTHONPATH}"
flag=--retry-invalid; [ "$mode" = off ] && flag=--no-retry-invalid
. "$root/benchmarks/serve.sh"
serve_start "/tmp/dragoman-validation-$port.log" -m dragoman serve --host 127.0.0.1 \
  --port "$port" --cache-mib 0 "$flag"
"$py" -m dragoman eval --url "http://127.0.0.1:$port" --concurrency 16 --per-pair 20 --seed 0 \
  --pairs en-fr,en-de,en-es,en-ko \
  --server-flags "dragoman serve --cache-mib 0 $flag (all other defaults)" \
  --label "reply check and retry $mode, default model and settings, ${HOST:-avx512-bf16 2-core host}" \
  --out "$out" "$@"
curl -fs "http://127.0.0.1:$port/metrics" > "$out/metrics.txt"

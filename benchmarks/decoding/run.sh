#!/usr/bin/env bash
# Decoding settings measured with `dragoman eval` (issue 12, item 2): the repetition penalty
# (1.0, the default 1.05, 1.1) and raw completion with worked examples (the `few-shot` prompt
# format, no chat template) against the default chat prompt. Same set as the committed default
# eval (seed 0, 20 per pair and kind). Run it under the engine lock:
#   flock /tmp/dragoman-engine.lock benchmarks/decoding/run.sh OUT_DIR
# ONLY="rp1.10 raw-completion" runs some of them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="$1"
mkdir -p "$out"
config="$out/raw-completion.toml"
cat > "$config" <<'TOML'
[[models]]
name = "qwen2.5-coder-0.5b-instruct"
model = "qwen2.5-coder-0.5b-instruct"
prompt = "few-shot"
languages = ["en", "fr", "de", "es"]
TOML
run() {  # name, environment assignments, --, eval flags
  local name="$1"; shift
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do envs+=("$1"); shift; done
  [ $# -gt 0 ] && shift
  env "${envs[@]}" "$root/benchmarks/prompts/eval-variant.sh" default "$out/$name" "$@"
}
only="${ONLY:-rp1.05 rp1.00 rp1.10 raw-completion}"
for name in $only; do
  case "$name" in
    rp1.05) run rp1.05 DRAGOMAN_REPETITION_PENALTY=1.05 ;;
    rp1.00) run rp1.00 DRAGOMAN_REPETITION_PENALTY=1.0 ;;
    rp1.10) run rp1.10 DRAGOMAN_REPETITION_PENALTY=1.1 ;;
    # The few-shot completion prompt has examples for en, fr, de, es (and it, pt, nl) only.
    raw-completion) run raw-completion DRAGOMAN_CONFIG="$config" -- --pairs en-fr,en-de,en-es ;;
  esac
done

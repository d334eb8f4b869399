# Sourced by the eval scripts (benchmarks/prompts/eval-variant.sh, validation/eval-retry.sh,
# context/eval-context.sh): start a server in the background, wait for its /ready, stop it.
# Needs $py (the Python to run) and $port (where the server listens).

# serve_start LOG ARGS...: runs `$py ARGS...` with its output in LOG, sets $server to its pid,
# stops it when the script exits, and returns once /ready answers (or exits 1 after 600 s or
# when the server dies, with the end of LOG).
serve_start() {
  local log="$1"; shift
  "$py" "$@" > "$log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null; wait "$server" 2>/dev/null || true' EXIT
  local deadline=$((SECONDS + 600))
  until curl -fs "http://127.0.0.1:$port/ready" >/dev/null; do
    if ! kill -0 "$server" 2>/dev/null || [ $SECONDS -gt $deadline ]; then
      echo "server did not come up; log: $log" >&2
      tail -20 "$log" >&2
      exit 1
    fi
    sleep 2
  done
}

serve_stop() {
  kill "$server"
  wait "$server" 2>/dev/null || true
  trap - EXIT
}

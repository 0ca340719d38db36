# Sourced by the benchmark scripts (server-bench.sh, events-bench.sh), which set `iapkit`, `work` and `pids`.
# serve PORT ARGS... starts iapkit serve on PORT with the benchmark's authority ($work/pki) and key, its output in
# $work/serve-PORT.log and its process id appended to pids, and returns once this process answers /health.
serve() {
  local port=$1; shift
  "$iapkit" serve --port "$port" --pki "$work/pki" --api-key bench-key-0123456789abcdef "$@" >"$work/serve-$port.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 1 200); do
    # The health answer must come from this process: another one may already hold the port.
    if curl -fs "http://127.0.0.1:$port/health" >/dev/null 2>&1 && kill -0 "${pids[-1]}" 2>/dev/null; then return 0; fi
    kill -0 "${pids[-1]}" 2>/dev/null || break
    sleep 0.05
  done
  echo "iapkit serve on $port did not start"; cat "$work/serve-$port.log"; exit 1
}

#!/usr/bin/env bash
# The outbox benchmark: how many events a second one `iapkit serve` (release build) delivers from its outbox to a
# webhook on loopback (Debian's nginx answering 204, Scripts/nginx-receiver.sh), on an SQLite file and on PostgreSQL.
#
#   1. an instance with `events.send` off records COUNT new transactions (wrk posting simulator-signed documents, as
#      in the server benchmark): COUNT events wait, unannounced, in the transactions' rows;
#   2. it stops; an instance with sending on starts on the same database, and the time from its first health answer
#      to the last delivery recorded is measured (the database polled every 50 ms): events derived and stored, then
#      delivered.
#
#   Scripts/events-bench.sh [CONCURRENCY]      (default 16 deliveries in flight)
#   SIGNED=FOLDER Scripts/events-bench.sh      (reuse FOLDER/pki and FOLDER/bodies.jsonl of an earlier run)
#
# Every server is started here and stopped by its process id; each phase is bounded in time.
set -euo pipefail
cd "$(dirname "$0")/.."
concurrency="${1:-16}"
work=.build/events-bench
rm -rf "$work"
mkdir -p "$work"
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null
swift build -c release --product iapkit 2>&1 | grep -E "error:|complete" | tail -1 || true
iapkit=.build/release/iapkit
secret=bench-webhook-secret-0123
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

source Scripts/bench-serve.sh
serve_events() { # serve_events PORT SENDS ARGS...: an instance sending (true) or not (false) to the receiver
  local port=$1 sends=$2; shift 2
  IAPKIT_EVENTS_SEND=$sends IAPKIT_EVENTS_CONCURRENCY=$concurrency IAPKIT_EVENTS_POLL_INTERVAL=50 \
    serve "$port" --webhook "http://127.0.0.1:18339/hooks" --webhook-secret "$secret" "$@"
}
stop() { kill "$1"; wait "$1" 2>/dev/null || true; }

receiver=$(bash Scripts/nginx-receiver.sh 18339 "$work/nginx")
pids+=("$receiver")

if [ -n "${SIGNED:-}" ] && [ -f "$SIGNED/bodies.jsonl" ] && [ -d "$SIGNED/pki" ]; then
  # SIGNED=FOLDER reuses the authority and documents of an earlier run (signing takes minutes).
  cp -r "$SIGNED/pki" "$SIGNED/bodies.jsonl" "$work/"
else
  echo "== signing transactions with the local App Store"
  serve_events 18330 true --database :memory:
  python3 Scripts/server-bench/make-bodies.py 18330 400 50 "$work/bodies.jsonl"
  stop "${pids[-1]}"
fi
count=$(wc -l <"$work/bodies.jsonl")
echo "$count bodies"

declare -A rate
measure() { # measure NAME DATABASE COUNTSQL...
  local name=$1 database=$2; shift 2
  echo "== $name: $count events into the outbox, sending off"
  serve_events 18331 false --database "$database"
  BODIES="$work/bodies.jsonl" wrk -t1 -c16 -d30s --timeout 5s -s Scripts/server-bench/post-once.lua \
    "http://127.0.0.1:18331" | grep RESULT
  stop "${pids[-1]}"
  # Writes of new transactions wait in their rows until a sender announces them (one endpoint: one delivery each).
  local stored; stored=$("$@" "SELECT (SELECT COUNT(*) FROM iap_deliveries WHERE state = 'pending')
    + (SELECT COUNT(*) FROM iap_transactions WHERE announce_at IS NOT NULL)")
  echo "$stored deliveries waiting (announced or not)"
  echo "== $name: sending"
  local start; start=$(date +%s.%N)
  serve_events 18332 true --database "$database"
  local delivered=0 deadline=$(( $(date +%s) + 300 ))
  while [ "$delivered" -lt "$stored" ] && [ "$(date +%s)" -lt "$deadline" ]; do
    sleep 0.05
    delivered=$("$@" "SELECT COUNT(*) FROM iap_deliveries WHERE state = 'delivered'")
  done
  local end; end=$(date +%s.%N)
  stop "${pids[-1]}"
  rate[$name]=$(python3 -c "print(round($delivered / ($end - $start)))")
  echo "$delivered delivered in $(python3 -c "print(round($end - $start, 2))") s: ${rate[$name]} events/s"
}

sqlite_count() { sqlite3 "$work/events.sqlite" "$1"; }
measure sqlite "$work/events.sqlite" sqlite_count

if command -v pg_ctlcluster >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  read -r pg_data pg_url < <(bash Scripts/postgres.sh start 55441)
  trap 'cleanup; bash Scripts/postgres.sh stop "$pg_data" || true' EXIT
  pg_count() { psql -qtA "${pg_url%%\?*}" -c "$1"; }
  measure postgres "$pg_url" pg_count
fi

echo
echo "| outbox to a loopback webhook, $count events, $concurrency in flight | events/s |"
echo "|---|---|"
for name in sqlite postgres; do
  [ -n "${rate[$name]:-}" ] || continue
  label="one iapkit serve, SQLite file"
  [ "$name" = postgres ] && label="one iapkit serve, PostgreSQL"
  echo "| $label | ${rate[$name]} |"
done

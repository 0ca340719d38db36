#!/usr/bin/env bash
# A/B of two iapkit binaries on the server benchmark's documents, alternating, so a change is measured against the
# code before it in the same session (this VM's speed moves by up to 30% between runs; alternation cancels most of it).
#
#   Scripts/server-ab.sh OLD_BINARY NEW_BINARY [ROUNDS]      (ROUNDS defaults to 3)
#
# Needs the documents and authority Scripts/server-bench.sh leaves in .build/server-bench (run it once first). Each
# round starts each binary on a fresh SQLite file on 127.0.0.1, posts new transactions for 3 s, then the re-post mix
# for 10 s (wrk, 16 connections), and stops it by its process id. Prints requests a second per run and the averages.
set -euo pipefail
cd "$(dirname "$0")/.."
old=$1
new=$2
rounds=${3:-3}
work=.build/server-bench
[ -f "$work/bodies.jsonl" ] || { echo "run Scripts/server-bench.sh first (it writes $work/bodies.jsonl)"; exit 2; }
rps() { sed -n 's/.*rps=\([0-9]*\).*/\1/p'; }
run() { # BINARY LABEL
  local dir pid fresh mix
  dir=$(mktemp -d)
  "$1" serve --port 18390 --pki "$work/pki" --api-key bench-key-0123456789abcdef --database "$dir/ab.sqlite" \
    >/dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 200); do curl -fs http://127.0.0.1:18390/health >/dev/null 2>&1 && break; sleep 0.05; done
  fresh=$(BODIES="$work/bodies.jsonl" wrk -t1 -c16 -d3s --timeout 5s -s Scripts/server-bench/post-bodies.lua \
    http://127.0.0.1:18390 | grep RESULT | rps)
  mix=$(BODIES="$work/bodies.jsonl" wrk -t1 -c16 -d10s --timeout 5s -s Scripts/server-bench/post-bodies.lua \
    http://127.0.0.1:18390 | grep RESULT | rps)
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
  echo "$2 $fresh $mix"
}
results=()
for round in $(seq 1 "$rounds"); do
  line=$(run "$old" old); echo "round $round: $line"; results+=("$line")
  line=$(run "$new" new); echo "round $round: $line"; results+=("$line")
done
printf '%s\n' "${results[@]}" | awk '
  { fresh[$1] += $2; mix[$1] += $3; n[$1]++ }
  END {
    printf "new transactions: old %.0f, new %.0f a second (%+.1f%%)\n", fresh["old"]/n["old"], fresh["new"]/n["new"],
      100 * (fresh["new"]/n["new"] - fresh["old"]/n["old"]) / (fresh["old"]/n["old"])
    printf "re-post mix:      old %.0f, new %.0f a second (%+.1f%%)\n", mix["old"]/n["old"], mix["new"]/n["new"],
      100 * (mix["new"]/n["new"] - mix["old"]/n["old"]) / (mix["old"]/n["old"])
  }'

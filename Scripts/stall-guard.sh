#!/usr/bin/env bash
# Runs a command (CI: the README's `swift test`) and watches it for a stall: no output and no CPU time used by the
# command's processes for STALL_MINUTES (10 by default; STALL_SECONDS for its own test). A slow test uses CPU or prints; a stalled one does neither.
#
# Why: once in many runs (2026-11-29), `swift test` stopped for good with four tests started and none ending, the test
# process idle (every thread waiting, nothing runnable) and no child running. Swift Testing runs at most twice as many
# test cases at once as there are cores and prints "started" before a case passes that gate, so one test that never
# ends holds the cases queued behind it too: of the tests listed as not ended, one hangs and the rest wait for it. Without this, such a run holds CI for
# its whole time limit and says nothing about why. On a stall this prints what is needed to find the cause (the tests
# started and not ended, every process of the run, and the test process's thread stacks), stops the run by its
# session, and runs the command once more, saying so loudly. A second stall, or any failure, fails: a failing
# test is never run again.
#
# Usage: bash Scripts/stall-guard.sh COMMAND [ARGUMENTS...]
set -uo pipefail
quiet_seconds=${STALL_SECONDS:-$((${STALL_MINUTES:-10} * 60))}
poll_seconds=$((quiet_seconds < 60 ? 1 : 15))
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# The CPU seconds every process of session $1 has used so far.
session_cpu() {
  ps -o times= --sid "$1" 2>/dev/null | awk '{ total += $1 } END { print total + 0 }'
}

# What a stalled run looked like: unfinished tests, processes, stacks.
describe_stall() {
  local session=$1
  echo "== stall: no output and no CPU time for ${quiet_seconds} s"
  echo "-- tests started and not ended:"
  python3 - "$log" <<'PY' || true
import re, sys
started, ended = [], set()
# Swift Testing prints "Test NAME started." and "Test NAME [with N test cases] passed/failed after ..." (the cases of
# a parameterized test start one by one but end together with it).
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Test (.+?) started\.", line)
    if m and not m.group(1).startswith("case passing ") and m.group(1) != "run":
        started.append(m.group(1))
    m = re.search(r"Test (.+?)(?: with \d+ test cases?)? (passed|failed|skipped)", line)
    if m:
        ended.add(m.group(1))
for name in started:
    if name not in ended:
        print("   ", name)
PY
  echo "-- processes of the run:"
  ps -o pid,ppid,stat,etimes,times,wchan:24,args --sid "$session" 2>/dev/null | cut -c1-220
  local pid
  for pid in $(ps -o pid=,args= --sid "$session" | awk '/\.xctest/ { print $1 }'); do
    echo "-- thread stacks of $pid:"
    if command -v eu-stack >/dev/null; then
      timeout 60 eu-stack -p "$pid" 2>&1 | head -400
    else
      for task in /proc/"$pid"/task/*; do echo "   $(cat "$task/comm") $(cat "$task/wchan" 2>/dev/null)"; done
    fi
  done
}

# Runs the command once; returns its status, or 124 after a stall (the run then stopped).
run_watched() {
  : >"$log"
  setsid "$@" >"$log" 2>&1 &
  local session=$!
  tail -n +1 -f --pid="$session" "$log" &
  local tailer=$!
  local size=0 cpu quiet_since=$SECONDS
  cpu=$(session_cpu "$session")
  while kill -0 "$session" 2>/dev/null; do
    sleep "$poll_seconds"
    local now_size now_cpu
    now_size=$(stat -c %s "$log")
    now_cpu=$(session_cpu "$session")
    if [ "$now_size" != "$size" ] || awk -v a="$now_cpu" -v b="$cpu" 'BEGIN { exit !(a - b >= 2) }'; then
      size=$now_size
      cpu=$now_cpu
      quiet_since=$SECONDS
    elif [ $((SECONDS - quiet_since)) -ge "$quiet_seconds" ]; then
      describe_stall "$session"
      # By session, not process group: swift-test gives the test process a group of its own, and the servers a test
      # starts have theirs too; all share the session.
      pkill -TERM -s "$session" 2>/dev/null
      sleep 5
      pkill -KILL -s "$session" 2>/dev/null
      wait "$session" 2>/dev/null
      wait "$tailer" 2>/dev/null
      return 124
    fi
  done
  local status=0
  wait "$session" || status=$?
  wait "$tailer" 2>/dev/null
  return "$status"
}

status=0
run_watched "$@" || status=$?
if [ "$status" = 124 ]; then
  echo "== THE RUN STALLED (above): running '$*' once more"
  status=0
  run_watched "$@" || status=$?
  [ "$status" = 124 ] && echo "== the run stalled again"
fi
exit "$status"

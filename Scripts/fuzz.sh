#!/usr/bin/env bash
# Coverage-guided fuzzing of IAPKit's parsers with libFuzzer (the toolchain's -sanitize=fuzzer,address).
#
#   Scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# Targets: receipt, jws, json, catalog, scenario (all by default); 60 seconds each by default. Each run is bounded in
# time, each input in time (-timeout, so hangs and quadratic paths count as findings) and memory (-rss_limit_mb).
# The corpus grows in .build-fuzz/corpus/TARGET (seeded from ../shared/testdata, Examples and Tests/Regressions);
# findings land in .build-fuzz/findings/TARGET. Leak detection is off: LeakSanitizer cannot follow Swift's tagged
# pointers in enums and lazy globals and reports them as leaks; memory stays bounded by -rss_limit_mb and
# -malloc_limit_mb (one allocation over 1 GiB is a finding). A finding makes the script exit 1: copy the file into
# Tests/Regressions/TARGET (FuzzRegressionTests replays every file there) and fix what it shows.
# FUZZ_RUNS=N makes a run repeatable (N executions from seed 1, still capped at SECONDS); FUZZ_CONFIGURATION=debug
# builds faster and runs slower. CI uses both.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${1:-60}"
shift || true
if [ "$#" -gt 0 ]; then targets=("$@"); else targets=(receipt jws json catalog scenario); fi
scratch=.build-fuzz
shared=../shared/testdata

configuration="${FUZZ_CONFIGURATION:-release}"
echo "== building the fuzzer ($configuration, -sanitize=fuzzer,address) in $scratch"
swift build -c "$configuration" --scratch-path "$scratch" --product iapkit-fuzz \
  -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -DIAPKIT_LIBFUZZER 2>&1 \
  | grep -vE "warning: Cannot export local symbol|^\[" || true
binary="$scratch/$configuration/iapkit-fuzz"
[ -x "$binary" ] || { echo "the fuzzer did not build"; exit 2; }

seed() {  # seed TARGET DIR: copy the inputs that suit TARGET into DIR
  local target="$1" dir="$2"
  cp -f Tests/Regressions/"$target"/* "$dir"/ 2>/dev/null || true
  case "$target" in
    receipt) cp -f "$shared"/receipts/* "$dir"/ 2>/dev/null || true ;;
    jws) cp -f "$shared"/jws/* "$dir"/ 2>/dev/null || true ;;
    json) find "$shared"/json -name '*.json' -exec cp -f {} "$dir"/ \; 2>/dev/null || true ;;
    catalog) cp -f "$shared"/storekit/* Examples/Florist/*.storekit "$dir"/ 2>/dev/null || true ;;
    scenario) cp -f Examples/Florist/*.yaml Examples/Florist/*.json "$dir"/ 2>/dev/null || true ;;
  esac
}

max_len() {
  case "$1" in
    receipt) echo 131072 ;;
    jws) echo 65536 ;;
    *) echo 32768 ;;
  esac
}

status=0
summary=()
for target in "${targets[@]}"; do
  corpus="$scratch/corpus/$target"
  findings="$scratch/findings/$target"
  mkdir -p "$corpus" "$findings"
  seed "$target" "$corpus"
  log="$scratch/fuzz-$target.log"
  echo "== $target: ${seconds}s"
  repeatable=()
  if [ -n "${FUZZ_RUNS:-}" ]; then repeatable=(-runs="$FUZZ_RUNS" -seed=1); fi
  ASAN_OPTIONS=detect_leaks=0 SWIFT_BACKTRACE=enable=no IAPKIT_FUZZ_TARGET="$target" IAPKIT_TESTDATA="$shared" \
    "$binary" "$corpus" "${repeatable[@]}" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=4096 -malloc_limit_mb=1024 -detect_leaks=0 -max_len="$(max_len "$target")" \
    -artifact_prefix="$findings/" -print_final_stats=1 -close_fd_mask=1 >"$log" 2>&1 || true
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || echo "?")
  found=$(find "$findings" -type f | wc -l)
  size=$(find "$corpus" -type f | wc -l)
  summary+=("$target: ${seconds}s, $runs executions, corpus $size inputs, $found findings")
  if [ "$found" -gt 0 ]; then
    status=1
    echo "FINDINGS for $target:"; find "$findings" -type f
    grep -E "ERROR|SUMMARY|Fatal error|timeout" "$log" | head -20 || true
  fi
done
echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$status"

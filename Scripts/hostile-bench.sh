#!/usr/bin/env bash
# The hostile-input benchmark: for each parser, the time per byte of hand-made worst cases (and of every input the
# fuzzers kept, when .build-fuzz/corpus exists) against a normal document of the same size, through the same harness
# the fuzzers drive (parse, verify, then the entitlement engine where it applies), in a release build on one core.
#
#   Scripts/hostile-bench.sh [SHARED_TESTDATA]     (default ../shared/testdata)
#
# Prints a Markdown table: per parser, the normal document's ns/byte, the worst hand-made case and its ratio, and the
# slowest fuzzer-corpus input and its ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
shared="${1:-../shared/testdata}"
[ -d "$shared" ] || { echo "needs the shared corpus at $shared"; exit 2; }

swift build -c release --product iapkit-fuzz 2>&1 | grep -E "error:|complete" | tail -1 || true
binary=.build/release/iapkit-fuzz
inputs=.build/hostile-inputs
rm -rf "$inputs"
python3 Scripts/hostile-inputs.py "$inputs" "$shared"

results=.build/hostile-results.tsv
: >"$results"
for target in receipt jws json catalog scenario; do
  IAPKIT_TESTDATA="$shared" taskset -c 1 "$binary" --time "$target" "$inputs/$target"/* | sed "s/^/$target\t/" \
    >>"$results"
  corpus=.build-fuzz/corpus/$target
  if [ -d "$corpus" ]; then
    # Every corpus input, bounded: at most 400 files, the largest first (where per-byte costs show).
    ls -S "$corpus" | awk 'NR <= 400' | sed "s#^#$corpus/#" | xargs -r env IAPKIT_TESTDATA="$shared" taskset -c 1 \
      "$binary" --time "$target" | sed "s/^/$target\t/" >>"$results"
  fi
done

python3 - "$results" <<'PY'
import os, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1]) if line.count("\t") == 4]
print("| parser | normal document | ns/byte | worst hand-made case (same size) | ns/byte | ratio | slowest fuzz-corpus input (>= 256 B) | ns/byte | ratio |")
print("|---|---|---|---|---|---|---|---|---|")
for target in ["receipt", "jws", "json", "catalog", "scenario"]:
    mine = [r for r in rows if r[0] == target]
    normal = [r for r in mine if os.path.basename(r[1]).startswith("normal-")]
    worst = [r for r in mine if os.path.basename(r[1]).startswith("worst-")]
    corpus = [r for r in mine if "/corpus/" in r[1] and int(r[2]) >= 256]
    if not normal:
        continue
    n = normal[0]
    base = float(n[4])
    w = max(worst, key=lambda r: float(r[4]))
    cells = [target, f"{os.path.basename(n[1])[7:]} ({int(n[2]):,} B)", f"{base:.1f}",
             f"{os.path.basename(w[1])[6:]} ({int(w[2]):,} B)", f"{float(w[4]):.1f}", f"{float(w[4]) / base:.2f}x"]
    if corpus:
        c = max(corpus, key=lambda r: float(r[4]))
        cells += [f"{int(c[2]):,} B", f"{float(c[4]):.1f}", f"{float(c[4]) / base:.2f}x"]
    else:
        cells += ["(no corpus)", "", ""]
    print("| " + " | ".join(cells) + " |")
print()
print("All hand-made cases:")
for r in rows:
    if os.path.basename(r[1]).startswith(("normal-", "worst-")):
        print(f"  {r[0]:9} {os.path.basename(r[1]):45} {int(r[2]):>9,} B {int(r[3]):>12,} ns {float(r[4]):>9.1f} ns/B")
PY

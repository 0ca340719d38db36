#!/usr/bin/env bash
# The bulk commands measured as users run them, against the library under them, in one run:
#  1. documents: a simulated year (iapkit simulate) copied round-robin into 4,000 receipt files and 4,000 JWS files;
#  2. one core (taskset): the library's cost per document (Benchmarks' BulkBaseline: files read into memory first,
#     verification only) and the whole `iapkit receipt verify DIR --jobs 1` / `iapkit jws verify DIR --jobs 1`
#     process (start-up, reading, verification, output), with the ratio command / library;
#  3. two cores: the same commands with --jobs 2, and the speed-up over one core; for the machine's own ceiling, two
#     independent processes at once, one per core, each verifying half the files;
#  4. MANY (default 40,000, about the system's argument limit) files named on the command line, as a shell's `*.jws`
#     gives them, against the same files as one folder, for each bulk command (one core), with the ratio;
#  5. LINES (default 1,000,000) JWS lines through `iapkit jws verify --lines - --json`: wall time, peak RSS, and the
#     output for the first 200 lines compared with one-file-at-a-time runs.
# Usage: Scripts/bulk-bench.sh [WORKDIR]   (MANY=N, LINES=N to change steps 4 and 5; 0 skips one)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=${1:-$(mktemp -d /tmp/iapkit-bulk-XXXXXX)}
lines=${LINES:-1000000}
many=${MANY:-40000}
count=4000
mkdir -p "$work"
cd "$root"

# Both built the way a command-line tool is shipped on Linux: release, Swift runtime linked in.
echo "== building (release, --static-swift-stdlib)"
swift build -c release --static-swift-stdlib --product iapkit >/dev/null
(cd Benchmarks && swift build -c release --static-swift-stdlib --product BulkBaseline >/dev/null)
iapkit="$root/.build/release/iapkit"
baseline="$root/Benchmarks/.build/release/BulkBaseline"

echo "== documents in $work"
rm -rf "$work/sim" "$work/jws" "$work/receipts"
"$iapkit" simulate Examples/Florist/florist-year.yaml --out "$work/sim" >/dev/null
mkdir -p "$work/jws" "$work/receipts"
spread() { # spread SOURCE_GLOB_DIR EXT TARGET
    local sources=("$1"/*."$2") i
    for ((i = 0; i < count; i++)); do
        cp "${sources[i % ${#sources[@]}]}" "$(printf '%s/%05d.%s' "$3" "$i" "$2")"
    done
    echo "$count $2 files from ${#sources[@]} distinct documents"
}
spread "$work/sim/jws" jws "$work/jws"
spread "$work/sim/receipts" der "$work/receipts"
jwsroot="$work/sim/roots/jws-root.der"
receiptroot="$work/sim/roots/receipt-root.der"

# seconds (to the microsecond) and peak RSS (KiB) of one command run, output thrown away
measure() {
    local log start end
    log=$(mktemp)
    start=$(date +%s%N)
    /usr/bin/time -f '%M' -o "$log" "$@" >/dev/null 2>&1 || true
    end=$(date +%s%N)
    echo "$(awk "BEGIN{printf \"%.4f\", ($end - $start) / 1e9}") $(tail -n 1 "$log")"
    rm -f "$log"
}
best_of_5() { # prints the best wall time of five runs and the peak RSS of that run
    local best="" rss="" t m
    for _ in 1 2 3 4 5; do
        read -r t m < <(measure "$@")
        if [[ -z $best ]] || awk "BEGIN{exit !($t < $best)}"; then best=$t; rss=$m; fi
    done
    echo "$best $rss"
}

report() { # report KIND ROOT FOLDER
    local kind=$1 rootfile=$2 folder=$3 library_us one two one_us ratio speedup rss1 rss2
    local library
    library=$(taskset -c 0 "$baseline" "$kind" "$folder" "$rootfile" 5)
    echo "$library"
    library_us=$(sed -E 's/.*, ([0-9.]+) us per document.*/\1/' <<<"$library")
    read -r one rss1 < <(best_of_5 taskset -c 0 "$iapkit" "$kind" verify "$folder" --root "$rootfile" --jobs 1)
    read -r two rss2 < <(best_of_5 taskset -c 0,1 "$iapkit" "$kind" verify "$folder" --root "$rootfile" --jobs 2)
    one_us=$(awk "BEGIN{printf \"%.1f\", $one * 1e6 / $count}")
    one=$(awk "BEGIN{printf \"%.3f\", $one}")
    two=$(awk "BEGIN{printf \"%.3f\", $two}")
    ratio=$(awk "BEGIN{printf \"%.2f\", $one_us / $library_us}")
    speedup=$(awk "BEGIN{printf \"%.2f\", $one / $two}")
    echo "command $kind verify, 1 core: $count files in ${one}s = ${one_us} us per document ($(awk "BEGIN{printf \"%.0f\", $count / $one}")/s), peak RSS $((rss1 / 1024)) MiB; ratio to the library ${ratio}x"
    echo "command $kind verify, 2 cores (--jobs 2): ${two}s ($(awk "BEGIN{printf \"%.0f\", $count / $two}")/s), peak RSS $((rss2 / 1024)) MiB; speed-up over 1 core ${speedup}x"
    # The ceiling: nothing shared but the machine (two processes, one core and half the files each, both started at once).
    local halves=$work/halves-$kind ceiling
    rm -rf "$halves" && mkdir -p "$halves/a" "$halves/b"
    local files=("$folder"/*) i
    for ((i = 0; i < ${#files[@]}; i++)); do
        ln "${files[i]}" "$halves/$([[ $i -lt $((${#files[@]} / 2)) ]] && echo a || echo b)/"
    done
    printf '%s\n' "taskset -c 0 $iapkit $kind verify $halves/a --root $rootfile --jobs 1 >/dev/null &" \
        "taskset -c 1 $iapkit $kind verify $halves/b --root $rootfile --jobs 1 >/dev/null" wait >"$halves/run.sh"
    read -r ceiling _ < <(best_of_5 bash "$halves/run.sh")
    echo "ceiling on this machine: two processes at once, one core and half the files each: $(awk "BEGIN{printf \"%.3f\", $ceiling}")s; speed-up $(awk "BEGIN{printf \"%.2f\", $one / $ceiling}")x"
}

echo "== receipts"
report receipt "$receiptroot" "$work/receipts"
echo "== JWS"
report jws "$jwsroot" "$work/jws"

if ((many > 0)); then
    echo "== $many files as arguments against the same files as a folder (1 core, --jobs 1)"
    # Hard links to the documents above, named short, so $many names fit the kernel's argument limit.
    for kind in jws receipts; do
        rm -rf "$work/many-$kind" && mkdir -p "$work/many-$kind"
        sources=("$work/$kind"/*)
        for ((i = 0; i < many; i++)); do ln "${sources[i % ${#sources[@]}]}" "$work/many-$kind/$i"; done
    done
    compare() { # compare FOLDER COMMAND... : the command over "." and over every name, in FOLDER
        local folder=$1 folder_time args_time
        shift
        read -r folder_time _ < <(cd "$folder" && best_of_5 taskset -c 0 "$@" . --jobs 1)
        read -r args_time _ < <(cd "$folder" && best_of_5 taskset -c 0 "$@" * --jobs 1)
        echo "$*: folder ${folder_time}s, $many arguments ${args_time}s, ratio $(awk "BEGIN{printf \"%.2f\", $args_time / $folder_time}")x"
    }
    compare "$work/many-jws" "$iapkit" jws verify --root "$jwsroot"
    compare "$work/many-jws" "$iapkit" jws decode
    compare "$work/many-receipts" "$iapkit" receipt verify --root "$receiptroot"
    compare "$work/many-receipts" "$iapkit" receipt inspect
fi

if ((lines > 0)); then
    echo "== $lines JWS lines through --lines - (2 cores)"
    sample=("$work"/jws/*.jws)
    generate() { # LINES lines cycling over the distinct documents
        python3 - "$lines" "$work/sim/jws" <<'PY'
import os, sys
n, folder = int(sys.argv[1]), sys.argv[2]
docs = [open(os.path.join(folder, f), "rb").read().strip() + b"\n" for f in sorted(os.listdir(folder))]
out = sys.stdout.buffer
for i in range(n):
    out.write(docs[i % len(docs)])
PY
    }
    log=$(mktemp)
    generate | /usr/bin/time -f '%e %M' -o "$log" "$iapkit" jws verify --lines - --root "$jwsroot" --json 2>"$work/lines-summary.txt" |
        awk -v head="$work/lines-head.jsonl" 'NR <= 200 { print > head } END { print NR }' >"$work/lines-count"
    read -r seconds rss < <(tail -n 1 "$log")
    echo "$(cat "$work/lines-count") results in ${seconds}s ($(awk "BEGIN{printf \"%.0f\", $lines / $seconds}")/s), peak RSS $((rss / 1024)) MiB"
    echo "summary: $(tail -n 1 "$work/lines-summary.txt")"
    # the same documents one file at a time, names aside
    distinct=("$work"/sim/jws/*.jws)
    : >"$work/files-head.jsonl"
    for ((i = 0; i < 200; i++)); do
        "$iapkit" jws verify "${distinct[i % ${#distinct[@]}]}" --root "$jwsroot" --json 2>/dev/null >>"$work/files-head.jsonl" || true
    done
    if python3 - "$work/lines-head.jsonl" "$work/files-head.jsonl" <<'PY'; then
import json, sys
def load(path):
    rows = [json.loads(line) for line in open(path)]
    for row in rows: row.pop("file", None)
    return rows
a, b = load(sys.argv[1]), load(sys.argv[2])
sys.exit(0 if len(a) == 200 and a == b else 1)
PY
        echo "first 200 results identical to one-file-at-a-time runs (file names aside)"
    else
        echo "MISMATCH between --lines and one-file-at-a-time output"
        exit 1
    fi
fi

#!/usr/bin/env bash
# Times `agentsim detect` end to end on the benchmark histories, as whole processes, with
# /usr/bin/time (GNU time, Debian's `time` package): the figures of docs/benchmarks.md's "Detecting
# a file" section, reproducible with public tools.
#
#   sim/scripts/bench-detect.sh [-n RUNS] [-d DIR] stream|batch AGENTSIM [BASELINE]
#
#   stream  `detect --stream H --idle-ms 0 --json` on the 10,000,000-record history
#   batch   `detect H --json` on the 1,000,000-record history
#
# The history is written once into DIR (default ${TMPDIR:-/tmp}/agentsim-bench) by
# `AGENTSIM bench history` (seed 1: the same bytes on every machine; 4.1 GB for the stream's,
# 400 MB for the batch's) and reused by later calls (remove it to write it again). Each run's output goes to
# /dev/null. With BASELINE (another agentsim binary), the two run in turn, A B A B ..., and
# the wall-time ratio A/B is taken pair by pair, so that a drift of the machine's speed during
# the call moves both of a pair alike. One warm-up run of each (not counted) puts the history
# in the page cache. Prints each figure as min, median and max over RUNS (default 5): quote
# the median. Exits 1 if a run fails, 2 on bad arguments.
#
#   cargo build --profile dist
#   sim/scripts/bench-detect.sh -n 10 stream target/dist/agentsim
#   sim/scripts/bench-detect.sh -n 10 batch target/dist/agentsim /tmp/agentsim-main
set -euo pipefail

usage() {
    sed -n '6,10p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit "${1:-2}"
}

runs=5
dir="${TMPDIR:-/tmp}/agentsim-bench"
while getopts "n:d:h" opt; do
    case $opt in
        n) runs=$OPTARG ;;
        d) dir=$OPTARG ;;
        h) usage 0 ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || [ $# -eq 3 ] || usage
mode=$1
a=$2
b=${3:-}
case $runs in
    '' | *[!0-9]* | 0) echo "bench-detect: -n wants a positive whole number, not '$runs'" >&2; exit 2 ;;
esac
[ -x /usr/bin/time ] || { echo "bench-detect: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
for bin in "$a" ${b:+"$b"}; do
    [ -x "$bin" ] || { echo "bench-detect: $bin is not an executable" >&2; exit 2; }
done
case $mode in
    stream) records=10000000 ;;
    batch) records=1000000 ;;
    *) echo "bench-detect: the mode is stream or batch, not '$mode'" >&2; exit 2 ;;
esac

mkdir -p "$dir"
history="$dir/h$records.jsonl"
# Written under another name and renamed, so a history that is there is whole.
if [ ! -e "$history" ]; then
    echo "bench-detect: writing $history ($records records)" >&2
    "$a" bench history --records "$records" -o "$history.part"
    mv "$history.part" "$history"
fi

# One run of BIN: appends "wall cpu peak_kib" to FILE.
once() {
    local bin=$1 file=$2 stats
    stats=$(mktemp)
    if [ "$mode" = stream ]; then
        /usr/bin/time -o "$stats" -f '%e %U %S %M' \
            "$bin" detect --stream "$history" --idle-ms 0 --json >/dev/null
    else
        /usr/bin/time -o "$stats" -f '%e %U %S %M' "$bin" detect "$history" --json >/dev/null
    fi || {
        echo "bench-detect: $bin failed on $history" >&2
        rm -f "$stats"
        exit 1
    }
    # Only the last line: GNU time puts a "Command exited with non-zero status" line first.
    tail -n 1 "$stats" | awk '{ printf "%.3f %.3f %.0f\n", $1, $2 + $3, $4 }' >>"$file"
    rm -f "$stats"
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
once "$a" /dev/null
[ -z "$b" ] || once "$b" /dev/null
for _ in $(seq "$runs"); do
    once "$a" "$work/a"
    [ -z "$b" ] || once "$b" "$work/b"
done

# min median max of column COL of FILE (the median of an even count is the mean of the middle two).
stat3() {
    cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 }
        END { m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
              printf "%12.3f %12.3f %12.3f", v[1], m, v[NR] }'
}
row() { printf '%-18s%s\n' "$1" "$2"; }

echo "$mode: $history, $records records, $runs runs each"
printf '%-18s%12s %12s %12s\n' "" min median max
for side in a b; do
    [ -f "$work/$side" ] || continue
    name=$(echo "$side" | tr ab AB)
    row "$name wall s" "$(stat3 "$work/$side" 1)"
    row "$name cpu s" "$(stat3 "$work/$side" 2)"
    awk '{ printf "%.3f\n", $3 / 1024 }' "$work/$side" >"$work/$side.mib"
    row "$name peak MiB" "$(stat3 "$work/$side.mib" 1)"
    awk -v n="$records" '{ printf "%.0f\n", n / $1 }' "$work/$side" >"$work/$side.rate"
    row "$name records/s" "$(stat3 "$work/$side.rate" 1 | awk '{ printf "%12d %12d %12d", $1, $2, $3 }')"
done
if [ -f "$work/b" ]; then
    paste -d' ' "$work/a" "$work/b" | awk '{ printf "%.4f\n", $1 / $4 }' >"$work/ratio"
    row "A/B wall" "$(stat3 "$work/ratio" 1 | awk '{ printf "%12.4f %12.4f %12.4f", $1, $2, $3 }')"
fi

#!/usr/bin/env bash
# Runs every fuzz target for SECONDS each (default 15), one after another, and fails if any
# finds a crash, a timeout or an input that passes the memory limit. Installs cargo-fuzz if
# absent. cargo-fuzz wants nightly's -Z flags: a nightly toolchain is used when there is one,
# else the default (stable) one with RUSTC_BOOTSTRAP=1 (a fresh CI machine has only stable, and no
# other toolchain can be fetched there). Without AddressSanitizer (`-s none`): the workspace
# forbids `unsafe`, so ASan would only slow the build; panics, timeouts and memory limits are
# what the runs look for. Each run starts from the committed seeds
# (seeds/TARGET, copied from scenarios/; seeds/langgraph_blob holds the blobs of the example
# checkpointer databases, written by make_langgraph_seeds.py) in a scratch corpus, so nothing
# in the tree changes; a failing input is kept in artifacts/TARGET/ and printed.
#
#   sim/fuzz/run.sh 15      # 12 targets x 15 s (CI runs 10 s each)
#   sim/fuzz/run.sh 600     # locally, longer
set -euo pipefail
secs=${1:-15}
cd "$(dirname "$0")"
if rustup run nightly true 2>/dev/null; then
    tc=(+nightly)
else
    tc=()
    export RUSTC_BOOTSTRAP=1
fi
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
# Memory: every input may use at most 1 GiB of RSS (a single allocation at most 512 MiB);
# time: at most 10 s per input. The inputs are at most 4 KiB (libFuzzer's default here),
# except OTLP/JSON's 8 KiB: its seeds, real traces, are up to 7 KiB, and a seed cut short is
# only a JSON syntax error.
flags=(-max_total_time="$secs" -rss_limit_mb=1024 -malloc_limit_mb=512 -timeout=10
       -print_final_stats=1)
max_len() {
    case $1 in
        otlp_json) echo 8192 ;;
        *) echo 4096 ;;
    esac
}
cargo "${tc[@]}" fuzz build -s none 2>&1 | tail -n 3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for t in $(cargo "${tc[@]}" fuzz list); do
    mkdir -p "$scratch/$t" "artifacts/$t"
    log="$scratch/$t.log"
    if cargo "${tc[@]}" fuzz run -s none "$t" "$scratch/$t" "seeds/$t" -- "${flags[@]}" \
        -max_len="$(max_len "$t")" -artifact_prefix="artifacts/$t/" >"$log" 2>&1; then
        status=ok
    else
        status=FAILED
        failed+=("$t")
        grep -E "ERROR|panicked|Test unit written|Base64" "$log" | head -n 8 || true
    fi
    execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
    units=$(ls "$scratch/$t" | wc -l)
    echo "fuzz $t: $status, $execs executions in ${secs} s, $units new corpus units"
done
if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz: failures in ${failed[*]} (inputs in sim/fuzz/artifacts/)"
    exit 1
fi

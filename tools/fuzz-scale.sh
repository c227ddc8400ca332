#!/usr/bin/env bash
# Fuzzing at scale: runs prebuilt cargo-fuzz binaries in libFuzzer's fork mode on every core for a
# fixed time each, keeping on past crashes so one run finds them all, and prints the executions
# each target reached. Used on a many-core machine with binaries built here:
#   RUSTC_BOOTSTRAP=1 cargo fuzz build -O -a -s none
#   tools/fuzz-scale.sh BIN_DIR CORPUS_DIR OUT_DIR SECONDS target...
# Crash, out-of-memory (over 2 GiB) and timeout (over 10 s) inputs land in
# OUT_DIR/<target>-{crash,oom,timeout}-*; the summary in OUT_DIR/summary.txt.
set -uo pipefail
bin=$1 corpus=$2 out=$3 seconds=$4
shift 4
jobs=$(nproc)
mkdir -p "$out"
for target in "$@"; do
    mkdir -p "$corpus/$target"
    log="$out/$target.log"
    "$bin/$target" -fork="$jobs" -ignore_crashes=1 -ignore_ooms=1 -ignore_timeouts=1 \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 \
        -artifact_prefix="$out/$target-" "$corpus/$target" >"$log" 2>&1
    # Fork mode prints "#N: cov: ... exec/s: ..." lines; N is the executions so far.
    runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    count() { find "$out" -maxdepth 1 -name "$target-$1-*" | wc -l; }
    echo "$target: ${runs:-0} executions in ${seconds}s on $jobs cores," \
        "$(count crash) crash, $(count oom) out-of-memory, $(count timeout) timeout inputs" |
        tee -a "$out/summary.txt"
done

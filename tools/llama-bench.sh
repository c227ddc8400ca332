#!/usr/bin/env bash
# llama.cpp (llama-cpp-python's ggml) on the tangle driver, on lavapipe 26 and on its own CPU
# back end, in the same run, THREADS threads each: tokens per second, peak memory and per-op
# times (issue 31 item 1; figures in docs/performance.md and docs/executor.md "Real
# kernels"). Usage: tools/llama-bench.sh [OUT] (default target/llama-bench), with:
#   LLAMA_DIR   where tools/llama-cpp-vulkan.sh builds (default target/llama; its venv/)
#   LLAMA_VENV  an environment already built by it, used as it is (no install step)
#   LVP_SID     the chroot of tools/lavapipe-sid.sh (default target/lavapipe-sid)
#   THREADS     threads of every back end (default 2): n_threads, TANGLE_THREADS, LP_NUM_THREADS
#   PROMPT GEN  prompt tokens (one batch; default 64) and generated tokens (default 4): 64 is
#               the smallest batch that takes ggml's matrix-matrix kernels; 512 is out of reach
#               on 2 cores while tangle runs ggml's kernels on its reference path (a 64-token
#               prompt takes 5-40 s there, and the cost grows faster than the batch; see
#               docs/executor.md, "Real kernels")
#   MODELS      model names (tests/llama/models.py's ARCH-WTYPE, comma-separated; default all)
#   FLASH_ATTN  flash attention: 1, 0 or 0,1 (default 1)
#   BACKENDS    default cpu,tangle,lavapipe
#   CPU_REPS    timed repetitions of the CPU back end, the best kept (default 5)
# Needs root (chroot). The driver is the release build (cargo build --release -p tangle-icd).
# tools/llama_bench.py --out OUT --tables-only writes OUT/tables.md again from its results.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
target=${CARGO_TARGET_DIR:-$repo/target}
out=$(realpath -m "${1:-$target/llama-bench}")
mkdir -p "$out"
threads=${THREADS:-2}

echo "== the driver, release build"
cargo build --quiet --release -p tangle-icd
# `tangle driver --manifest` only writes the loader's JSON: any tangle binary will do.
[ -x "$target/debug/tangle" ] || cargo build --quiet -p tangle
"$target/debug/tangle" driver --manifest "$out/tangle_icd.json" \
    --library "$target/release/libtangle_icd.so"

echo "== llama-cpp-python with ggml-vulkan"
if [ -n "${LLAMA_VENV:-}" ]; then
    venv=$(realpath "$LLAMA_VENV")
else
    llama_dir=$(realpath -m "${LLAMA_DIR:-$target/llama}")
    tools/llama-cpp-vulkan.sh "$llama_dir"
    venv=$llama_dir/venv
fi
python=$venv/bin/python

echo "== random-weight models (tests/llama/models.py)"
"$python" tests/llama/models.py "$out/models" ${MODELS:+${MODELS//,/ }}

echo "== lavapipe 26 chroot, with Python and llama_cpp"
lvp=$(realpath -m "${LVP_SID:-$target/lavapipe-sid}")
tools/lavapipe-sid.sh "$lvp"
tools/lavapipe-sid-llama.sh "$lvp" "$venv"

echo "== run ($(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg))"
"$python" tools/llama_bench.py --models "$out/models" --out "$out" \
    --manifest "$out/tangle_icd.json" --chroot "$lvp" --threads "$threads" \
    --prompt "${PROMPT:-64}" --gen "${GEN:-4}" --flash-attn "${FLASH_ATTN:-1}" \
    --backends "${BACKENDS:-cpu,tangle,lavapipe}" --cpu-reps "${CPU_REPS:-5}" ${MODELS:+--only "$MODELS"}
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg); tables in $out/tables.md"

#!/usr/bin/env bash
# Runs tangle's conformance suites through `tangle diff` on the Vulkan devices of this machine and
# writes a summary (the source of docs/conformance.md):
#   scripts/gpu-conformance.sh TANGLE_BIN SCRIPTS_DIR OUT_DIR [DEVICE [SUITE...]]
# SCRIPTS_DIR holds the suites, one folder each: `repository/` (every Amber script of the
# repository: examples/ and tests/amber/), `reconvergence/` (the oracle's random programs:
# cargo run --release -p tangle-oracle --example amber -- DIR 2000), and `rotate/`, `dot/`,
# `coopmat/` (scripts/gen-conformance-scripts.py DIR). Every script's diff output is kept under
# OUT_DIR/logs; OUT_DIR/summary.md counts per suite: agree, differ (with each difference line),
# not run (the RUN failed or stopped on one side), unsupported (with the reason), unusable.
# TANGLE_DIFF_ARGS adds options to every `tangle diff` (e.g. `--policy maximal,true-first,by-selector`
# for a driver that keeps invocations of one switch case apart by selector value, as NVIDIA's does).
set -uo pipefail
tangle=${1:?TANGLE_BIN}; scripts=${2:?SCRIPTS_DIR}; out=${3:?OUT_DIR}; device=${4:-0}
# The suites to run, in order (default: every folder of SCRIPTS_DIR); the summary grows as each
# ends, so a run cut short still reports the suites it finished.
shift $(( $# < 4 ? $# : 4 ))
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
    for d in "$scripts"/*/; do suites+=("$(basename "$d")"); done
fi
mkdir -p "$out/logs"
summary=$out/summary.md
{
    echo "# tangle diff on $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo '```'
    "$tangle" profiles --devices 2>&1
    echo '```'
} > "$summary"
for suite in "${suites[@]}"; do
    suite_dir=$scripts/$suite/
    agree=0; differ=0; notrun=0; unsupported=0; unusable=0; total=0
    details=$out/logs/$suite.details
    : > "$details"
    while IFS= read -r script; do
        total=$((total + 1))
        log=$out/logs/$suite-$(echo "${script#"$suite_dir"}" | tr '/' '_').log
        # shellcheck disable=SC2086 # TANGLE_DIFF_ARGS is a list of words.
        timeout 300 "$tangle" diff --device "$device" --time-limit 60 ${TANGLE_DIFF_ARGS:-} "$script" > "$log" 2>&1
        code=$?
        last=$(tail -n 1 "$log")
        case $code in
            0) agree=$((agree + 1))
               # Differences explained by the CPU executor's undefined-behaviour findings.
               if ! grep -q ' 0 differences' "$log"; then
                   { echo "explained ${script#"$scripts"/}:"; grep -v '^AGREE' "$log" | head -20; } >> "$details"
               fi ;;
            77) unsupported=$((unsupported + 1)); echo "unsupported ${script#"$scripts"/}: $last" >> "$details" ;;
            2) if grep -q "device failure" "$log"; then notrun=$((notrun + 1)); else unusable=$((unusable + 1)); fi
               echo "exit 2 ${script#"$scripts"/}: $last" >> "$details" ;;
            1) if grep -q '^DIFFER' "$log"; then
                   differ=$((differ + 1))
                   { echo "DIFFER ${script#"$scripts"/}:"; grep -v '^DIFFER' "$log" | head -20; } >> "$details"
               else
                   notrun=$((notrun + 1)); echo "not run ${script#"$scripts"/}: $last" >> "$details"
               fi ;;
            *) notrun=$((notrun + 1)); echo "exit $code ${script#"$scripts"/}: $last" >> "$details" ;;
        esac
    done < <(find "$suite_dir" -name '*.amber' | sort)
    {
        echo
        echo "## $suite: $total scripts"
        echo
        echo "$agree agree, $differ differ, $notrun not run, $unsupported unsupported, $unusable unusable"
        if [ -s "$details" ]; then
            echo
            echo '```'
            cat "$details"
            echo '```'
        fi
    } >> "$summary"
    echo "$suite: $total scripts: $agree agree, $differ differ, $notrun not run, $unsupported unsupported, $unusable unusable"
done

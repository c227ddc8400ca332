#!/usr/bin/env bash
# Clones REPO (its committed HEAD) into a temporary folder that has no `shared/` beside it and runs
# the two commands of the README's first code block there, verbatim: the example and the tests.
# Tests over the absent conformance corpora must then be reported as ignored, never as passed.
set -euo pipefail
repo=${1:-.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone --quiet "$repo" "$work/tangle"
cd "$work/tangle"
test ! -e ../shared || { echo "readme-commands: ../shared exists beside the clone" >&2; exit 1; }
# The first ```sh block of the README; each line is a command, a trailing `# comment` dropped.
mapfile -t commands < <(awk '/^```sh$/ {on = 1; next} on && /^```$/ {exit} on' README.md | sed 's/ *#.*$//')
test "${#commands[@]}" -eq 2 || { echo "readme-commands: expected 2 commands, found ${#commands[@]}" >&2; exit 1; }
unset TANGLE_REQUIRE_CONFORMANCE
log=$work/log
for c in "${commands[@]}"; do
    echo "\$ $c"
    bash -c "set -o pipefail; $c" 2>&1 | tee -a "$log"
done
# cargo test prints "N ignored" per test binary; the conformance tests must be among them.
ignored=$(grep -o 'ignored, needs ../shared/conformance' "$log" | wc -l)
echo "readme-commands: both commands passed; $ignored conformance tests not run (no ../shared)"
test "$ignored" -gt 0 || { echo "readme-commands: the conformance tests did not report themselves as not run" >&2; exit 1; }

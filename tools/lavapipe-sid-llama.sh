#!/usr/bin/env bash
# Makes the lavapipe-sid chroot (tools/lavapipe-sid.sh) able to run llama.cpp, for
# tools/llama-bench.sh: Python and the packages llama_cpp imports from the chroot's own apt
# (sid's; the system's apt sources are never touched), then the llama_cpp package with its
# shared libraries (libllama, libggml-*: built on Debian 12, they run on sid's newer glibc)
# copied from the virtual environment of tools/llama-cpp-vulkan.sh into CHROOT/opt/llama/site.
# Usage: tools/lavapipe-sid-llama.sh CHROOT VENV   (needs root)
# The Python step is done once (marker CHROOT/opt/llama/python-ready); the copy every time.
set -euo pipefail
root=$(realpath "$1")
venv=$(realpath "$2")
test -e "$root/tangle-ready" || { echo "$root: not a chroot of tools/lavapipe-sid.sh" >&2; exit 1; }
mkdir -p "$root/opt/llama"
if [ ! -e "$root/opt/llama/python-ready" ]; then
    # sid's Release files say how long they are valid; a chroot made weeks ago, or a clock
    # ahead of the mirror, would refuse them, so their dates are not checked.
    chroot "$root" /bin/sh -c 'export DEBIAN_FRONTEND=noninteractive;
        apt-get -o Acquire::Check-Valid-Until=false update -qq &&
        apt-get install -y -qq --no-install-recommends python3 python3-numpy python3-jinja2 \
            python3-typing-extensions python3-diskcache libgomp1 libstdc++6' > "$root/opt/llama/apt.log" 2>&1 || {
        tail -20 "$root/opt/llama/apt.log" >&2
        exit 1
    }
    chroot "$root" python3 -c 'import numpy, jinja2, diskcache, typing_extensions'
    touch "$root/opt/llama/python-ready"
fi
site=$(echo "$venv"/lib/python3*/site-packages)
test -d "$site/llama_cpp" || { echo "$site: no llama_cpp package" >&2; exit 1; }
rm -rf "$root/opt/llama/site"
mkdir -p "$root/opt/llama/site"
cp -a "$site/llama_cpp" "$root/opt/llama/site/"
chroot "$root" env PYTHONPATH=/opt/llama/site python3 -c 'import llama_cpp; print("llama_cpp", llama_cpp.__version__, "in the chroot")'

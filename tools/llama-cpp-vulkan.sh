#!/usr/bin/env bash
# Installs llama-cpp-python (pinned) with ggml's Vulkan back end into a virtual environment in the
# build folder, by the package's documented route (pip with CMAKE_ARGS), for tests/llama/ and for
# people: see docs/llama.md. Usage: tools/llama-cpp-vulkan.sh [DIR] (default target/llama);
# the environment is DIR/venv. Builds everything from nothing on a fresh Debian 12 machine:
#  * Debian 13's header-only libvulkan-dev and spirv-headers (bookworm's Vulkan headers are too old
#    for ggml-vulkan), fetched with a private apt state and unpacked with dpkg -x; the system's apt
#    sources and lists are never touched; bookworm's loader is used at run time;
#  * tools/glslc (the workspace's glslc on the glslang crate), since bookworm's glslc fails ggml's
#    cooperative-matrix, integer-dot and bfloat16 probes and ggml would then leave those paths out;
#  * cmake and ninja from PyPI: pip's isolated build environment takes them (scikit-build-core
#    asks for both), pinned through PIP_CONSTRAINT with the build back end itself;
#  * gguf (PyPI) in the environment too, for the test models (tests/llama/models.py).
# A second run with the same pins does nothing (the stamp DIR/venv/tangle-build.stamp).
# CMAKE_BUILD_PARALLEL_LEVEL (default 2) sets the build's parallelism.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
dir=$(realpath -m "${1:-${CARGO_TARGET_DIR:-$repo/target}/llama}")
llama_version=0.3.36
cmake_version=4.4.5
ninja_version=1.13.2
scikit_build_core_version=1.1.2
gguf_version=0.19.0
vulkan_headers=1.4.309.0-1
spirv_headers=1.6.1+1.4.309.0-1
stamp_key="llama-cpp-python=$llama_version cmake=$cmake_version ninja=$ninja_version scikit-build-core=$scikit_build_core_version gguf=$gguf_version libvulkan-dev=$vulkan_headers spirv-headers=$spirv_headers"
venv=$dir/venv
stamp=$venv/tangle-build.stamp
if [ -e "$stamp" ] && [ "$(cat "$stamp")" = "$stamp_key" ] &&
    "$venv/bin/python" -c 'import llama_cpp, gguf' 2>/dev/null; then
    echo "llama-cpp-python $llama_version (Vulkan) already in $venv"
    exit 0
fi
mkdir -p "$dir"
start=$(date +%s)
load_before=$(cut -d" " -f1-3 /proc/loadavg)

echo "== glslc on the glslang crate"
cargo build --quiet -p glslc
glslc=${CARGO_TARGET_DIR:-$repo/target}/debug/glslc
test -x "$glslc"

echo "== Debian 13 Vulkan headers and SPIR-V headers (private apt state, dpkg -x)"
apt_state=$dir/trixie-apt
headers=$apt_state/root
if [ ! -e "$headers/.done-$vulkan_headers-$spirv_headers" ]; then
    mkdir -p "$apt_state/lists/partial" "$apt_state/cache/archives/partial" "$apt_state/sources" "$apt_state/etc"
    # The mirror of the system's bookworm entry.
    mirror=$(grep -rhoE '^URIs: *[^ ]+/debian/?$' /etc/apt/sources.list.d/ 2>/dev/null | head -1 | awk '{print $2}')
    mirror=${mirror:-$(grep -hoE '^deb +[^ ]+/debian/? ' /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')}
    mirror=${mirror:-http://deb.debian.org/debian}
    printf 'Types: deb\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        "$mirror" > "$apt_state/sources/trixie.sources"
    apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_state/sources"
        -o "Dir::Etc::Preferences=/dev/null" -o "Dir::Etc::PreferencesParts=$apt_state/etc"
        -o "Dir::State::Lists=$apt_state/lists" -o "Dir::Cache=$apt_state/cache"
        -o "Dir::State::status=/dev/null" -o "APT::Sandbox::User=root" -o "APT::Architecture=amd64" -o "APT::Architectures=amd64")
    apt-get "${apt_opts[@]}" -qq update
    rm -rf "$headers" && mkdir -p "$headers"
    (cd "$apt_state/cache" && apt-get "${apt_opts[@]}" -qq download \
        "libvulkan-dev=$vulkan_headers" "spirv-headers=$spirv_headers")
    for deb in "$apt_state"/cache/libvulkan-dev_*.deb "$apt_state"/cache/spirv-headers_*.deb; do
        dpkg -x "$deb" "$headers"
    done
    touch "$headers/.done-$vulkan_headers-$spirv_headers"
fi
spirv_cmake=$(dirname "$(find "$headers" -name SPIRV-HeadersConfig.cmake | head -1)")
test -e "$headers/usr/include/vulkan/vulkan.h" && test -d "$spirv_cmake"

echo "== virtual environment, with gguf"
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "gguf==$gguf_version"
printf 'cmake==%s\nninja==%s\nscikit-build-core==%s\n' "$cmake_version" "$ninja_version" \
    "$scikit_build_core_version" > "$dir/build-constraints.txt"
export PIP_CONSTRAINT=$dir/build-constraints.txt

echo "== llama-cpp-python $llama_version with GGML_VULKAN (log: $dir/build.log)"
# glslc's probes: GL_NV_cooperative_matrix2 (and its decode vector) and the OCP float8/float4
# types are reported unsupported, as the tangle driver offers none of them: ggml then skips
# compiling their ~500 shaders. Cooperative matrix, integer dot product and bfloat16 stay on.
export GLSLC_UNSUPPORTED_EXTENSIONS=GL_NV_cooperative_matrix2,GL_NV_cooperative_matrix_decode_vector,GL_EXT_float_e2m1,GL_EXT_float_e4m3
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-2}
export CMAKE_ARGS="-DGGML_VULKAN=on -DVulkan_INCLUDE_DIR=$headers/usr/include -DVulkan_GLSLC_EXECUTABLE=$glslc -DVulkan_LIBRARY=/usr/lib/x86_64-linux-gnu/libvulkan.so.1 -DSPIRV-Headers_DIR=$spirv_cmake -DGGML_NATIVE=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF"
if ! "$venv/bin/python" -m pip install -v --disable-pip-version-check --no-cache-dir \
    --no-binary llama-cpp-python "llama-cpp-python==$llama_version" > "$dir/build.log" 2>&1; then
    tail -50 "$dir/build.log" >&2
    echo "llama-cpp-python build failed (log: $dir/build.log)" >&2
    exit 1
fi

echo "== glslc probe verdicts"
for ext in GL_KHR_cooperative_matrix GL_EXT_integer_dot_product GL_EXT_bfloat16; do
    if ! grep -q -- "$ext supported by glslc" "$dir/build.log"; then
        echo "ggml's probe did not find $ext in glslc (log: $dir/build.log)" >&2
        exit 1
    fi
    echo "$ext supported by glslc"
done
echo "$stamp_key" > "$stamp"
echo "built in $(($(date +%s) - start)) s with CMAKE_BUILD_PARALLEL_LEVEL=$CMAKE_BUILD_PARALLEL_LEVEL (load average at the start: $load_before, at the end: $(cut -d" " -f1-3 /proc/loadavg))"

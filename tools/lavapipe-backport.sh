#!/usr/bin/env bash
# Fetches a newer lavapipe (Mesa's CPU Vulkan driver) than Debian 12's 22.3 — the one in
# bookworm-backports (25.0: it has VK_KHR_shader_subgroup_rotate and maximal reconvergence, so
# `tangle bench` can compare `rotate_conv` with it) — into a folder of its own, without
# touching the system's apt sources or packages, and writes a driver manifest for it.
# Usage: tools/lavapipe-backport.sh [DIR]   (default target/lavapipe-backport)
# then:  VK_ICD_FILENAMES=DIR/lvp_icd.json LP_NUM_THREADS=2 cargo run --release -- bench --threads 2
# Needs Debian 12 (its LLVM 15 and libdrm, which the backport links to) and the Vulkan loader
# (libvulkan1).
set -euo pipefail
dir=$(realpath -m "${1:-target/lavapipe-backport}")
mkdir -p "$dir/lists/partial" "$dir/debs"
echo "deb http://deb.debian.org/debian bookworm-backports main" > "$dir/sources.list"
# Apt with a private source list and package lists: the system's stay as they are.
apt_private=(-o "Dir::Etc::SourceList=$dir/sources.list" -o "Dir::Etc::SourceParts=-"
    -o "Dir::State::Lists=$dir/lists" -o "APT::Sandbox::User=root")
apt-get "${apt_private[@]}" update -qq
(cd "$dir/debs" && apt-get "${apt_private[@]}" download -qq mesa-vulkan-drivers/bookworm-backports)
rm -rf "$dir/root"
dpkg-deb -x "$dir"/debs/mesa-vulkan-drivers_*.deb "$dir/root"
lib=$(find "$dir/root" -name libvulkan_lvp.so | head -1)
test -n "$lib" || { echo "no libvulkan_lvp.so in the package" >&2; exit 1; }
if ldd "$lib" | grep -q "not found"; then
    echo "the backport's libraries are missing here:" >&2
    ldd "$lib" | grep "not found" >&2
    exit 1
fi
cat > "$dir/lvp_icd.json" <<JSON
{ "file_format_version": "1.0.0", "ICD": { "library_path": "$lib", "api_version": "1.3.0" } }
JSON
echo "VK_ICD_FILENAMES=$dir/lvp_icd.json"

#!/usr/bin/env bash
# Makes a Debian unstable (sid) chroot with Mesa's lavapipe from sid (26.x at the time of
# writing) and the Vulkan loader, so that `tangle diff` can compare tangle with a current
# lavapipe on a Debian 12 machine, whose own libraries are too old for sid's driver. The
# system's apt sources and packages are left as they are: debootstrap writes the chroot's own.
# Usage: tools/lavapipe-sid.sh [DIR]   (default target/lavapipe-sid; needs root and debootstrap)
# then:  TANGLE_LAVAPIPE_SID=DIR cargo test -p tangle --test driver_bugs
# A DIR that already holds a finished chroot is kept (the marker file `tangle-ready` says so).
set -euo pipefail
dir=$(realpath -m "${1:-target/lavapipe-sid}")
if [ -e "$dir/tangle-ready" ]; then
    echo "lavapipe-sid: $dir is ready ($(cat "$dir/tangle-ready"))"
    exit 0
fi
command -v debootstrap >/dev/null || {
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap
}
rm -rf "$dir"
mkdir -p "$dir"
debootstrap --variant=minbase --include=mesa-vulkan-drivers,libvulkan1 sid "$dir" \
    http://deb.debian.org/debian >"$dir.log" 2>&1 || {
    tail -20 "$dir.log" >&2
    exit 1
}
version=$(chroot "$dir" dpkg-query -W -f '${Version}' mesa-vulkan-drivers)
ls "$dir"/usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null
echo "mesa-vulkan-drivers $version" > "$dir/tangle-ready"
echo "lavapipe-sid: made $dir (mesa-vulkan-drivers $version)"

#!/usr/bin/env bash
# Builds the root filesystem of the bench VM (bench/vm/run.sh boots it with qemu: KVM or TCG).
#
# Why a VM: a bench that holds 50,000 connections in one process needs 50,000+ file descriptors in
# the agent and in the target, and a sandbox's hard RLIMIT_NOFILE (20,000 on our dev machines, with
# no CAP_SYS_RESOURCE to raise it) cannot be lifted from inside. A guest has its own kernel and its
# own root, so there the limit is ours to set.
#
# The image: Debian bookworm (debootstrap minbase), this host's own `node` binary (the same Node the
# other benches run), the modules of the installed Debian kernel (for the 9p share the repository is
# mounted through) and bench/vm/guest-init.sh as its init. Needs root, debootstrap, e2fsprogs, a
# Debian kernel in /boot (linux-image-amd64) and the network to a Debian mirror. About a minute.
#
#   sudo bash bench/vm/build-image.sh            # writes bench/.tools/vm/rootfs.ext4
set -euo pipefail
cd "$(dirname "$0")/../.."

OUT=bench/.tools/vm
MIRROR=${VOLLEY_VM_MIRROR:-http://deb.debian.org/debian}
SUITE=${VOLLEY_VM_SUITE:-bookworm}

die() { echo "build-image: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (debootstrap and a root-owned image); run it with sudo"
command -v debootstrap >/dev/null || die "debootstrap is missing: apt-get install -y debootstrap"
command -v mke2fs >/dev/null || die "mke2fs is missing: apt-get install -y e2fsprogs"
kernel=$(find /boot -maxdepth 1 -name 'vmlinuz-*' | sort -V | tail -n 1)
[ -n "$kernel" ] || die "no kernel in /boot: apt-get install -y linux-image-amd64"
kver=${kernel#/boot/vmlinuz-}
[ -d "/lib/modules/$kver" ] || die "/lib/modules/$kver is missing (reinstall linux-image-$kver)"
node_bin=$(command -v node) || die "node is not on PATH"

mkdir -p "$OUT"
stage=$(mktemp -d "$OUT/stage.XXXXXX")
trap 'rm -rf "$stage"' EXIT

echo "build-image: debootstrap $SUITE from $MIRROR" >&2
debootstrap --variant=minbase --include=iproute2,procps,util-linux,time,kmod "$SUITE" "$stage" "$MIRROR" >"$OUT/debootstrap.log" 2>&1 \
  || die "debootstrap failed; see $OUT/debootstrap.log"

install -m 0755 "$(readlink -f "$node_bin")" "$stage/usr/local/bin/node"
mkdir -p "$stage/lib/modules"
cp -a "/lib/modules/$kver" "$stage/lib/modules/"
install -m 0755 bench/vm/guest-init.sh "$stage/sbin/volley-init"
mkdir -p "$stage/volley" "$stage/vmio"
echo volley-bench >"$stage/etc/hostname"

size_mb=$(( $(du -sm "$stage" | cut -f1) + 512 ))
rm -f "$OUT/rootfs.ext4"
mke2fs -q -t ext4 -d "$stage" -L volley-root "$OUT/rootfs.ext4" "${size_mb}M"
cp "$kernel" "$OUT/vmlinuz"
cp "/boot/initrd.img-$kver" "$OUT/initrd.img"
echo "$kver $("$node_bin" --version)" >"$OUT/image.version"
echo "build-image: $OUT/rootfs.ext4 (${size_mb} MB), kernel $kver, node $("$node_bin" --version)" >&2

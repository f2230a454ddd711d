#!/usr/bin/env bash
# Runs one command inside the bench VM (the qemu guest bench/vm/build-image.sh builds) and exits with
# its exit code. The guest sees this repository read-only at its own working directory (9p), runs
# the command as root with fs.nr_open and RLIMIT_NOFILE raised to 1,048,576, and powers off.
# The command's stdout is this script's stdout; its stderr and the guest's console go to stderr.
#
#   bash bench/vm/run.sh node --import tsx bench/idle-many.ts 1 50000 40 180
#
# VOLLEY_VM_MEMORY (default 8G), VOLLEY_VM_CPUS (2), VOLLEY_VM_TIMEOUT (seconds, 3600),
# VOLLEY_VM_ACCEL (tcg or kvm; see below).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)
img=bench/.tools/vm

die() { echo "vm: $*" >&2; exit 2; }
[ "$#" -gt 0 ] || die "usage: bash bench/vm/run.sh <command> [args...]"
[ -f "$img/rootfs.ext4" ] || die "no VM image at $img/rootfs.ext4; build it once with: sudo bash bench/vm/build-image.sh"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is missing: apt-get install -y qemu-system-x86"
# KVM where it really runs guests; TCG (software emulation) otherwise. On our dev VMs /dev/kvm opens
# but guests hang in early boot (nested KVM without CPUID support), so TCG is the default: fit for
# what a bench measures in here (connections held, fds, memory), never for CPU time or latency.
case "${VOLLEY_VM_ACCEL:-tcg}" in
  kvm) accel=(-enable-kvm -cpu "${VOLLEY_VM_CPU_MODEL:-host,-arch-capabilities}") ;;
  tcg) accel=(-accel "tcg,thread=multi" -cpu max) ;;
  *) die "VOLLEY_VM_ACCEL must be kvm or tcg" ;;
esac
host_node=$(node --version)
image_node=$(cut -d' ' -f2 "$img/image.version")
[ "$host_node" = "$image_node" ] || echo "vm: the image has node $image_node, this host $host_node; rebuild the image to match" >&2

vmio=$(mktemp -d "${TMPDIR:-/tmp}/volley-vm.XXXXXX")
trap 'rm -rf "$vmio"' EXIT
chmod 0777 "$vmio"
printf '%q ' "$@" >"$vmio/cmd.sh"
echo >>"$vmio/cmd.sh"

echo "vm: booting (${VOLLEY_VM_ACCEL:-tcg}, ${VOLLEY_VM_CPUS:-2} vCPUs, ${VOLLEY_VM_MEMORY:-8G}) to run: $*" >&2
set +e
timeout --kill-after=10 "${VOLLEY_VM_TIMEOUT:-3600}" qemu-system-x86_64 \
  "${accel[@]}" -smp "${VOLLEY_VM_CPUS:-2}" -m "${VOLLEY_VM_MEMORY:-8G}" \
  -display none -monitor none -serial stdio -no-reboot -nic none \
  -kernel "$img/vmlinuz" -initrd "$img/initrd.img" \
  -append "root=/dev/vda rw console=ttyS0 init=/sbin/volley-init quiet loglevel=3 panic=-1" \
  -drive "file=$img/rootfs.ext4,format=raw,if=virtio,snapshot=on" \
  -virtfs "local,path=$repo,mount_tag=volley,security_model=none,readonly=on" \
  -virtfs "local,path=$vmio,mount_tag=vmio,security_model=none" \
  </dev/null >&2
qemu=$?
set -e
[ "$qemu" = 0 ] || die "qemu exited $qemu (124: VOLLEY_VM_TIMEOUT passed)"
[ -f "$vmio/exit" ] || die "the guest powered off without running the command (see the console above)"
cat "$vmio/stdout"
exit "$(cat "$vmio/exit")"

#!/bin/bash
# PID 1 of the bench VM (installed as /sbin/volley-init by build-image.sh). Mounts the repository
# (9p tag "volley", read-only) and the exchange folder (9p tag "vmio", read-write), raises the
# limits a many-connection bench needs, runs /vmio/cmd.sh from the repository root and powers off.
# stdout goes to /vmio/stdout, stderr to /vmio/stderr and the console, the exit code to /vmio/exit.
export PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8

mountpoint -q /proc || mount -t proc proc /proc
mountpoint -q /sys || mount -t sysfs sys /sys
mountpoint -q /dev || mount -t devtmpfs dev /dev
mount -t tmpfs -o size=50% tmp /tmp
mount -o remount,rw / 2>/dev/null

modprobe 9pnet_virtio && modprobe 9p
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288,ro volley /volley
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 vmio /vmio

ip link set lo up
# One process per side holds every connection: each needs an fd per connection plus its own.
sysctl -qw fs.nr_open=1048576 fs.file-max=2097152 net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535
ulimit -Hn 1048576
ulimit -n 1048576

cd /volley || { echo "volley-init: the repository share did not mount" >&2; echo 97 >/vmio/exit; echo 1 >/proc/sys/kernel/sysrq; echo o >/proc/sysrq-trigger; }
bash /vmio/cmd.sh >/vmio/stdout 2> >(tee /vmio/stderr >&2)
code=$?
wait  # for tee to write the last of stderr
echo "$code" >/vmio/exit
sync
echo 1 >/proc/sys/kernel/sysrq
echo o >/proc/sysrq-trigger
sleep 10

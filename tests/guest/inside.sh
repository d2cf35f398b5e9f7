#!/usr/bin/env bash
# The test guest's second stage, PID 1 on the overlay root (started by
# /share/run, which tests/guest/check.sh writes): the mounts the cases
# need, then each case script, its output in /share/tap, its exit status
# and seconds in /share/status, and "done" there when all ran. Then power off.
set -u
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs shm /dev/shm
# The host's /tmp and /run are not the guest's. A checkout under one of
# them (a clone in /tmp) is put back at its path over the guest's own.
src=$(cd "$(dirname "$0")/../.." && pwd -P)
case $src in /tmp/* | /run/*)
	mkdir -p /.numalot-src
	mount --bind "$src" /.numalot-src
	;;
esac
mount -t tmpfs -o mode=1777 tmp /tmp
mount -t tmpfs -o mode=0755 run /run
if [ -d /.numalot-src ]; then
	mkdir -p "$src"
	mount --bind /.numalot-src "$src"
fi
# The host's name, which its /etc/hosts knows; slurmctld also needs an
# address besides 127.0.0.1 on lo to resolve itself.
hostname "$(cat /etc/hostname)"
ip link set lo up
ip addr add 127.0.0.2/8 dev lo
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
cd "$(dirname "$0")/../.."
for t in ${GUEST_CASES:-numa cgroup slurm movepages peers calibrate kernels eval model}; do
	start=$SECONDS
	bash "tests/guest/${t}_cases.sh" >>/share/tap 2>&1 </dev/null
	echo "$t $? $((SECONDS - start))" >>/share/status
done
echo done >>/share/status
/bin/busybox poweroff -f

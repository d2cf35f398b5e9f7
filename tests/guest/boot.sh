#!/usr/bin/env bash
# Boot the test guest with NODES NUMA nodes (2 or 4) and run SHARE/run in
# it; the console goes to SHARE/console.log. Exits with QEMU's status.
#   tests/guest/boot.sh GUESTDIR NODES SHARE TIMEOUT_S
# TCG, no KVM: a real kernel's topology, scheduler, cgroups and page
# migration, not real memory latency (docs/real-node.md).
set -eu
dir=$1 nodes=$2 share=$3 limit=$4
# One socket per node (the kernel warns and taints otherwise); 2G in all.
case $nodes in
2) smp="4,sockets=2,cores=2,threads=1" mem=1G
	dist="-numa dist,src=0,dst=1,val=21" ;;
4) smp="4,sockets=4,cores=1,threads=1" mem=512M
	# Two pairs of close nodes (12), the pairs 20 and 22 apart.
	dist="-numa dist,src=0,dst=1,val=12 -numa dist,src=2,dst=3,val=12
	-numa dist,src=0,dst=2,val=20 -numa dist,src=1,dst=3,val=20
	-numa dist,src=0,dst=3,val=22 -numa dist,src=1,dst=2,val=22" ;;
*) echo "boot.sh: NODES is 2 or 4" >&2; exit 2 ;;
esac
numa=()
cpus_per_node=$((4 / nodes))
for ((n = 0; n < nodes; n++)); do
	first=$((n * cpus_per_node))
	numa+=(-object "memory-backend-ram,id=m$n,size=$mem"
		-numa "node,nodeid=$n,cpus=$first-$((first + cpus_per_node - 1)),memdev=m$n")
done
# One host thread runs the 4 vCPUs in turn (thread=single): the guest takes
# one core of a shared machine, and no vCPU spins waiting for one the host
# is not running (with a thread per vCPU on a loaded 2-core host the guest
# hit soft lockups). -cpu max has no AVX-512: no -march=native binaries.
# shellcheck disable=SC2086
exec timeout -k 5 "$limit" qemu-system-x86_64 \
	-machine q35 -accel tcg,thread=single -cpu max -m 2G -smp "$smp" "${numa[@]}" $dist \
	-kernel "$dir/vmlinux" -initrd "$dir/initramfs.img" \
	-append "console=ttyS0 quiet panic=-1" \
	-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
	-virtfs "local,path=$share,mount_tag=share,security_model=none" \
	-nographic -no-reboot -nic none -monitor none </dev/null >"$share/console.log" 2>&1

#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): numalot-workload's NAS-like
# kernels on a real kernel with 2 or 4 NUMA nodes verify their results,
# and their data is where its initialiser ran: each thread's share on its
# own node (first touch), or all of it on the master's (tests/workload/
# README.md). NUMA balancing is off so that only the first touch places
# pages.
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
W=$B/numalot-workload
T=$(mktemp -d)
. tests/lib.sh
# The 4-node guest only (its shares span more nodes), within make check's
# time; GUEST_ALL=1 runs it in the 2-node guest too.
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
if [ "$nodes" -lt 4 ] && [ -z "${GUEST_ALL:-}" ]; then
	echo "skip - kernels: $nodes nodes (the 4-node guest runs them; GUEST_ALL=1 here too)"
	rm -rf "$T"
	exit 0
fi
old=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)
echo 0 >/proc/sys/kernel/numa_balancing 2>/dev/null
cpus=$(nproc)
echo "# THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)"
# Bound threads (--bind) with first touch: each share on its thread's
# node, the shares over several nodes. Master: all on one node, its
# threads bound too, and the master while it initialises (unbound, a
# guest slowed by a busy host had its load balancer move the master
# between nodes while it initialised: 75%).
# (Unbound first touch would be told only: the load balancer may move a
# thread while it initialises; test_workload_kernels.sh runs it.) The guest's kernel has THP on for all memory: a huge page
# at a share's end goes to whichever thread touched it first, so the
# harness samples each share's middle, 2 MiB in from either end.
for k in cg mg ft is; do
	for how in "first-touch --bind" "master --bind"; do
		set -- $how
		# Shares of at least 4 MiB: 2 MiB at each end of a share
		# (a huge page) are not sampled.
		"$W" --kernel "$k" --threads "$cpus" --size 64 --init "$@" \
			--iterations 1 >"$T/out" 2>&1
		check "$k, $how, $cpus threads: verified" \
			grep -q "^$k: verification passed" "$T/out"
		grep "^$k: pages" "$T/out" | sed "s/^/($how) /"
		# ft's grid is a power of two a side: at 64 MiB its shares
		# are 4 MiB, all margin (the same harness places it).
		[ "$k" = ft ] && continue
		pct=$(sed -n "s/^$k: pages: \([0-9]*\)% on the node their initialiser ran on.*/\1/p" "$T/out")
		check "$k, $how: pages where their initialiser ran (${pct:-?}%, at least 90%)" \
			test "${pct:-0}" -ge 90
		if [ "$1" = master ]; then
			check "$k, master: every share initialised on one node" \
				grep -qE "^$k: pages: .*initialised on node [0-9]+\)$" "$T/out"
		else
			check "$k, bound first touch: the shares on several nodes" \
				grep -qE "^$k: pages: .*initialised on nodes [0-9]+," "$T/out"
		fi
	done
done
"$W" --kernel ep --threads "$cpus" --size 16 >"$T/out" 2>&1
check "ep, $cpus threads: verified" grep -q "^ep: verification passed" "$T/out"
[ -n "$old" ] && echo "$old" >/proc/sys/kernel/numa_balancing
rm -rf "$T"

#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): numalot moves a process's
# pages between real NUMA nodes (move_pages), watched through
# /proc/PID/numa_maps, with the kernel's NUMA balancing off (numalot alone
# moves pages) and on (numalot and the kernel side by side). The workload's
# threads are bound to node 1, its memory preferred on node 0 (memory it
# bound itself numalot leaves alone). Like tests/cli/test_real_pages.sh,
# but waiting on what it watches instead of sleeping: the guest is slow.
# Not among make check's cases (1.5-2 minutes a guest): GUEST_CASES=pages.
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
N=$B/numalot
W=$B/numalot-workload
T=$(mktemp -d)
. tests/lib.sh
cd "$T"
cpus1=$(cat /sys/devices/system/node/node1/cpulist)
mb=32
# Two threads' buffers, in pages, less a tenth for what is not touched yet.
buffers=$((2 * mb * 256 * 9 / 10))
# pages_on PID NODE: PID's pages on NODE (N<node>= over its mappings).
pages_on() {
	local maps
	maps=$(<"/proc/$1/numa_maps") || return 1
	awk -v k="N$2=" '{for (i = 1; i <= NF; i++) if (index($i, k) == 1)
		s += substr($i, length(k) + 1)} END {print s + 0}' <<<"$maps"
}
# wait_pages PID NODE COUNT: until PID has COUNT pages on NODE (20 s at
# most); prints how many it has.
wait_pages() {
	local n=0 until=$((SECONDS + 20))
	while [ $SECONDS -lt $until ]; do
		n=$(pages_on "$1" "$2") || break
		[ "$n" -ge "$3" ] && break
		sleep 0.2
	done
	echo "$n"
}

for balancing in off on; do
	if [ $balancing = on ]; then value=1; else value=0; fi
	echo $value >/proc/sys/kernel/numa_balancing
	what="pages, NUMA balancing $balancing"
	"$N" run --policy=lbma --period=0.5 --report=$balancing.json -- \
		numactl --preferred=0 taskset -c "$cpus1" \
		"$W" --threads 2 --seconds 50 --mode memory --mem-mb $mb >/dev/null 2>&1 &
	run=$!
	w=""
	for _ in $(seq 100); do
		# Read whole, not with `read` (tests/lib.sh, status_cpus).
		{ w=$(<"/proc/$run/task/$run/children"); } 2>/dev/null
		w=${w%% *}
		[ -n "$w" ] && break
		sleep 0.1
	done
	before0=$(wait_pages "$w" 0 $buffers)
	before1=$(pages_on "$w" 1)
	after1=$(wait_pages "$w" 1 $((before1 + buffers)))
	after0=$(pages_on "$w" 0)
	# The workload ends (numalot run writes the report and exits with it).
	kill "$w" 2>/dev/null
	wait $run
	read -r moved back <<<"$(json $balancing.json "int(sum(p['pages']['moved_bytes'] \
		for p in r['processes']) / 1048576), sum(e['kind'] == 'pages' and e.get('to_node') == 0 \
		for e in r['events'])" 2>/dev/null | tr -d '(),')"
	check "$what: the workload's memory first on node 0 ($before0 pages there, ${before1:-?} on node 1)" \
		test "${before0:-0}" -ge $buffers
	check "$what: then on node 1, where its threads run ($after1 pages there, ${after0:-?} on node 0)" \
		test "${after1:-0}" -ge $((${before1:-0} + buffers))
	if [ $balancing = off ]; then
		check "$what: numalot moved them (report: $moved MiB)" test "${moved:-0}" -ge $mb
	else
		# The kernel may get there first: numalot must not pull back.
		check "$what: numalot moved none back to node 0 (report: $moved MiB moved)" \
			test "${back:-1}" -eq 0
	fi
done
echo 1 >/proc/sys/kernel/numa_balancing
# The reports, for a person (build/guest/run-N/ on the host).
[ -d /share ] && for f in off on; do cp $f.json /share/pages-$f.json 2>/dev/null; done
rm -rf "$T"
[ $fails -eq 0 ]

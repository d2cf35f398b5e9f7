#!/usr/bin/env bash
# numalot moves a real process's pages between real NUMA nodes
# (move_pages(2)): its threads bound to node 1, its memory placed on node 0,
# watched from outside through /proc/PID/numa_maps. Needs a kernel with two
# NUMA nodes or more (the QEMU guest of make guest-check has them); on one
# node there is nowhere to move a page to, and it says so.
set -u
N=${NUMALOT:-build/numalot}
W=${WORKLOAD:-build/numalot-workload}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if [ ! -d /sys/devices/system/node/node1 ]; then
	echo "skip: real page moves: this kernel has one NUMA node, so a page has nowhere to go (make guest-check runs this on 2 and 4 nodes)"
	exit 0
fi
if ! command -v numactl >/dev/null; then
	echo "skip: real page moves: numactl is not installed (make deps)"
	exit 0
fi
cpus1=$(cat /sys/devices/system/node/node1/cpulist)
# Pages of node $2 in process $1 (sum of N<node>= over its mappings).
pages_on() {
	awk -v k="N$2=" '{for (i = 1; i <= NF; i++) if (index($i, k) == 1)
		s += substr($i, length(k) + 1)} END {print s + 0}' \
		"/proc/$1/numa_maps" 2>/dev/null
}
# attach_touched NAME NUMACTL-OPTION NUMALOT-OPTION...: the workload (2
# threads of 64 MiB each on node 1's CPUs, 12 s of walks; pid w) started
# under numactl NUMACTL-OPTION; once 90% of its memory is touched
# (bounded), p0 and p1 are its pages on nodes 0 and 1; then numalot attach
# with NUMALOT-OPTION... (pid run, report $T/NAME.json, output with the
# workload's in $T/NAME.out), and the walks start once numalot holds the
# threads' counters (held: how many; --go-file), bounded. numalot is not
# started with the workload: in a loaded emulated guest the first touch
# was so slow that numalot had moved most pages before the first sample
# (the interleaved pages, 88% on node 1 once; the preferred ones twice in
# three CI-like runs).
attach_touched() {
	local name=$1 placement=$2
	shift 2
	numactl "$placement" taskset -c "$cpus1" "$W" --threads 2 --seconds 12 \
		--mode memory --mem-mb 64 --go-file "$T/$name.go" >"$T/$name.out" 2>&1 &
	w=$!
	p0=0 p1=0
	for _ in $(seq 300); do
		p0=$(pages_on "$w" 0)
		p1=$(pages_on "$w" 1)
		[ $((p0 + p1)) -ge $((2 * 16384 * 9 / 10)) ] && break
		kill -0 "$w" 2>/dev/null || break
		sleep 0.1
	done
	"$N" attach --nice=0 "$@" --report="$T/$name.json" "$w" >>"$T/$name.out" 2>&1 &
	run=$!
	# 4 software events a thread, the main one's too.
	for _ in $(seq 300); do
		held=$(ls -l "/proc/$run/fd" 2>/dev/null | grep -c perf_event)
		[ "$held" -ge 12 ] && break
		kill -0 "$run" 2>/dev/null || break
		sleep 0.2
	done
	touch "$T/$name.go"
}
# --preferred, not --membind: memory the process bound itself is left
# where it asked (numalot refuses to move it). Kept there
# (--keep-bindings): its threads cannot go to the data, so the data must
# come to them.
attach_touched r --preferred=0 --policy=lbma --period=4 --keep-bindings
check "numalot took over the workload's threads ($held counters)" test "$held" -ge 12
before0=$p0 before1=$p1 after1=0
while kill -0 "$w" 2>/dev/null; do
	after1=$(pages_on "$w" 1)
	[ "${after1:-0}" -gt $((${before1:-0} + 4096)) ] && break
	sleep 0.2
done
wait "$run"
wait "$w"
check "the workload ran under numalot" test -s "$T/r.json"
check "its pages started on node 0 ($before0 there, $before1 on node 1)" \
	test "${before0:-0}" -gt "${before1:-0}"
check "pages moved to node 1, where its threads run ($before1 -> $after1)" \
	test "${after1:-0}" -gt $((${before1:-0} + 4096))
check "the report counts the bytes moved" python3 -c "
import json, sys
r = json.load(open('$T/r.json'))
moved = sum(p['pages']['moved_bytes'] for p in r['processes'])
events = [e for e in r['events'] if e['kind'] == 'pages']
if not (moved > 0 and events and any(e['bytes'] > 0 for e in events)):
    sys.exit('moved %r, page events %r, processes %s' % (moved, events,
             json.dumps([(q['pid'], q['threads'], q.get('pages')) for q in r['processes']])))" ||
	tail -n 5 "$T/r.out"

# Memory the process interleaved itself over nodes 0 and 1, its threads on
# node 1: with bindings free (the default) that is a starting placement.
# Taking it onto one node is a trial that only op counts can judge
# (docs/algorithms.md, "Concentrating is a trial"): with them numalot
# brings the pages together where the threads are; without them (no PMU,
# as in the guests) it leaves them spread. bound_by_its_policy stays false.
attach_touched i --interleave=0,1 --policy=lbma --period=4
i0=$p0 i1=$p1
share=""
check "interleaved: its pages started on both nodes ($i0 and $i1)" \
	test "${i0:-0}" -gt 4096 -a "${i1:-0}" -gt 4096
# Read while the walker holds its memory: as it exits, its mappings go
# one by one and a reading then says nothing of where numalot put them.
while kill -0 "$w" 2>/dev/null; do
	a0=$(pages_on "$w" 0)
	a1=$(pages_on "$w" 1)
	total=$((${a0:-0} + ${a1:-0}))
	[ "$total" -ge $(((i0 + i1) * 9 / 10)) ] && [ "$total" -gt 0 ] &&
		share=$((100 * (a0 > a1 ? a0 : a1) / total))
	[ "${share:-0}" -ge 80 ] && break
	sleep 0.2
done
wait "$run"
wait "$w"
ops=$(python3 -c "
import json
print(int(bool(json.load(open('$T/i.json'))['counters']['perf_terms'].get('ops_per_s'))))" 2>/dev/null)
if [ "${ops:-0}" = 1 ]; then
	check "interleaved, op counts: numalot brought its pages onto one node (${share:-?}% on one)" \
		test "${share:-0}" -ge 80
else
	check "interleaved, no op counts: numalot left its pages spread (${share:-?}% on one)" \
		test -n "$share" -a "${share:-100}" -lt 80
fi
check "interleaved: the report does not call it bound by its policy, and says what it moved" python3 -c "
import json, sys
r = json.load(open('$T/i.json'))
moved = [p for p in r['processes'] if p['pages']['moved_bytes'] > 0]
if bool(moved) != ('${ops:-0}' == '1') or \
        any(q['pages']['bound_by_its_policy'] for q in r['processes']):
    sys.exit(json.dumps([q['pages'] for q in r['processes']]))"

#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): the model beside the real
# kernel (docs/machine-model.md, "The model beside the real kernel"). Each
# setup runs on the guest's kernel, watched by tests/guest/locality.py
# (locality, time to 90% local, pages migrated, where the threads end), and
# in `numalot sim --timeline` on the guest's topology
# (tests/guest/model/NODES-SETUP.json); tests/guest/beside.py checks that
# they agree (its header says on what, and within which factor). The
# walkers of numalot-workload wait, their memory touched, until the watch
# lets them go, so that both start from the setup's placement.
# GUEST_CASES=model make guest-check (not part of make check): in the
# 4-node guest (about 60 s); GUEST_ALL=1: the 2-node one
# too, and a first-touch setup shown, not checked. MODEL_MB=128: the
# master-initialised walkers' size (default 64).
set -u
cd "$(dirname "$0")/../.."
S=$PWD/tests/guest
B=$(realpath "${BUILD:-build}")
N=$B/numalot
W=$B/numalot-workload
T=$(mktemp -d)
. tests/lib.sh
. tests/guest/lib.sh
cd "$T"
sysnode=/sys/devices/system/node
nodes=$(ls -d $sysnode/node[0-9]* | wc -l)
if [ "$nodes" -lt 4 ] && [ -z "${GUEST_ALL:-}" ]; then
	echo "skip - model beside kernel: $nodes nodes (the 4-node guest runs it; GUEST_ALL=1 here too)"
	rm -rf "$T"
	exit 0
fi
# Memory on node 0 (A), threads on the last node (Z).
Z=$((nodes - 1))
cpus_a=$(cat $sysnode/node0/cpulist)
cpus_z=$(cat $sysnode/node$Z/cpulist)
cpus_1=$(cat $sysnode/node1/cpulist)
cpu_list "$cpus_z"
per_node=${#CPUS[@]}
balancing_was=$(cat /proc/sys/kernel/numa_balancing)
pids="" watch=() WP=""
finish() {
	kill $pids 2>/dev/null
	wait 2>/dev/null
	echo "$balancing_was" >/proc/sys/kernel/numa_balancing
	[ -d /share ] && mkdir -p /share/model && cp ./*.watch ./*.json /share/model/ 2>/dev/null
	rm -rf "$T"
}
trap finish EXIT

# anon_pages PID: its anonymous pages, over every node.
anon_pages() {
	local maps
	maps=$(<"/proc/$1/numa_maps") || return 1
	awk '/anon=/ {for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) {
		split($i, kv, "="); s += kv[2] }} END {print s + 0}' <<<"$maps"
}
# touched PID PAGES: until PID has PAGES anonymous pages (60 s at most: a
# loaded emulated guest once took 15 s to touch 16 MiB).
touched() {
	local until=$((SECONDS + 60)) n=0
	while [ $SECONDS -lt $until ]; do
		n=$(anon_pages "$1") || return 1
		[ "$n" -ge "$2" ] && return 0
		sleep 0.3
	done
	return 1
}
# workload NAME THREADS MB ARGS...: THREADS memory walkers of MB MiB each,
# started with ARGS before it (numactl, taskset, numalot run), for longer
# than any watch, their walks waiting for go.NAME (bound threads only: an
# unbound one, waking every 50 ms to look for it, is placed anew each
# time); the walkers' process in WP once its memory is touched (empty if
# never). GO=0: the program itself waits for go.NAME before it starts
# any thread or touches memory, and WP at once.
workload() {
	local name=$1 threads=$2 mb=$3 run
	shift 3
	# Not there yet (a setup run again has the same name).
	[ -n "${pids// /}" ] || rm -f "$T/go.$name"
	"$@" "$W" --threads "$threads" --mode memory --mem-mb "$mb" \
		--seconds 300 ${INIT:+--init $INIT} \
		$([ "${GO:-1}" = 1 ] && echo --go-file || echo --start-file) \
		"$T/go.$name" >/dev/null 2>&1 &
	run=$!
	pids="$pids $run"
	WP=$run
	# numalot run forks it (among other children: the one that checks the
	# report can be written); numactl and taskset exec it (the same pid).
	if [ "${1:-}" = "$N" ]; then
		WP=""
		for _ in $(seq 100); do
			local c kids="" exe
			{ kids=$(<"/proc/$run/task/$run/children"); } 2>/dev/null
			for c in $kids; do
				exe=$(readlink "/proc/$c/exe" 2>/dev/null)
				[ "$exe" = "$(readlink -f "$W")" ] && WP=$c
			done
			[ -n "$WP" ] && break
			sleep 0.1
		done
	fi
	[ "${GO:-1}" = 0 ] && return
	[ -n "$WP" ] && touched "$WP" $((threads * mb * 256 * 9 / 10)) || WP=""
}
# running PID...: one of them runs (not gone, nor a zombie not yet reaped).
running() {
	local p st
	for p; do
		{ st=$(<"/proc/$p/stat"); } 2>/dev/null || continue
		st=${st##*) }
		[ "${st%% *}" != Z ] && return 0
	done
	return 1
}
# beside NAME SETUP POLICY [ARGS...] -- PID...: watch the PIDs from the
# moment their walks start, stop them, run the setup's scenario (or
# SETUP, a file) under POLICY in the model (ARGS: more sim options; a
# numalot run's report is then compared too) and check the two (CHECKS:
# which, tests/guest/beside.py).
beside() {
	local name=$1 sc=$S/model/$nodes-$2.json policy=$3 extra=() report=""
	[[ $2 == */* ]] && sc=$2
	local t1=$SECONDS
	shift 3
	while [ "$1" != -- ]; do extra+=("$1") && shift; done
	shift
	python3 "$S/locality.py" --go="$T/go.$name" "${watch[@]}" "$@" >"$name.watch"
	kill ${@#--unbind} 2>/dev/null
	# numalot run ends with its command, its report written (10 s at most).
	for _ in $(seq 100); do
		running $pids || break
		sleep 0.1
	done
	kill $pids 2>/dev/null
	wait 2>/dev/null
	pids=""
	[ -s "$name.report.json" ] && report=$name.report.json
	"$N" sim "$sc" --policy="$policy" --timeline=0.1 "${extra[@]}" \
		--report="$name.model.json" >/dev/null 2>"$name.sim.err" ||
		echo "not ok - model beside kernel, $name: numalot sim ran ($(head -c 300 "$name.sim.err"))"
	python3 "$S/beside.py" "$name" "$name.watch" "$name.model.json" $report \
		--checks="${CHECKS:-locality,moved,t90}"
	local rc=$?
	echo "# $name: set up in $((t1 - t0)) s, watched and modelled in $((SECONDS - t1)) s"
	t0=$SECONDS
	return $rc
}

# Each setup: its workloads started and set up, then beside(); a setup
# that could not be set up says so.
# Master-initialised: the main thread touches both walkers' memory
# (MODEL_MB MiB each, default 64), then walks as thread 0 beside the
# other, where the kernel puts it; watched from the moment all is
# touched. NUMA balancing on, then off: there only whether pages moved is
# checked, as where the load balancer leaves unbound threads depends on
# when it spreads them (docs/machine-model.md, "The model beside the real
# kernel").
mmb=${MODEL_MB:-64}
sed "s/\"mem_bytes\": [0-9]*/\"mem_bytes\": $((mmb * 1048576))/" \
	"$S/model/$nodes-master.json" >"$T/master.json"
master() {
	local b=$1
	echo $([ $b = on ] && echo 1 || echo 0) >/proc/sys/kernel/numa_balancing
	watch=(--pages=$((2 * mmb * 256 * 9 / 10)))
	GO=0 INIT=master workload "master-$b" 2 "$mmb"
	CHECKS=$([ $b = on ] && echo locality,moved,t90 || echo moved) \
		beside "master-$b" "$T/master.json" \
		"$([ $b = on ] && echo linux || echo linux-nonuma)" -- $WP
}
# First touch, NUMA balancing off: each walker touches its own memory
# where it runs. Shown, not checked (the same reason); GUEST_ALL=1 only.
first_off() {
	echo 0 >/proc/sys/kernel/numa_balancing
	watch=(--pages=$((2 * 16 * 256 * 9 / 10)))
	GO=0 workload first-off 2 16
	CHECKS=none beside first-off first linux-nonuma -- $WP
}
# Two processes, each with its threads on the other's memory's node, free
# to move: P1 touches its memory on node 1, which migratepages takes to
# node 0; P2 the other way. The watch frees their threads. Nodes 0 and 1:
# no third node is nearer either's memory (the 4-node guest's pair 12
# apart); with P1 on node 3 the kernel sometimes moved its thread to node
# 1, next to its memory, first (docs/machine-model.md, "The model beside
# the real kernel").
two_on() {
	local p1 p2
	echo 1 >/proc/sys/kernel/numa_balancing
	watch=()
	workload two-on "$per_node" 16 taskset -c "$cpus_1"
	p1=$WP
	workload two-on "$per_node" 16 taskset -c "$cpus_a"
	p2=$WP
	[ -n "$p1" ] && [ -n "$p2" ] || return 2
	migratepages "$p1" 1 0
	migratepages "$p2" 0 1
	beside two-on two linux -- --unbind "$p1" "$p2"
}
# Memory under a policy of its own (numactl), threads on the last node:
# nothing may move (the three at once).
policies_on() {
	local pp="" mem
	echo 1 >/proc/sys/kernel/numa_balancing
	watch=()
	for mem in --preferred=0 --membind=0 --interleave=all; do
		workload policies-on 1 16 numactl --cpunodebind=$Z $mem
		pp="$pp $WP"
	done
	[ "$(wc -w <<<"$pp")" -eq 3 ] || return 2
	beside policies-on policies linux -- $pp
}
# numalot beside them (lbma, software counters: the guest has no PMU),
# outside any job: the process's own binding is its limit. It starts once
# numalot manages it, and is watched from its touch's end: numalot moves
# pages of threads that wait.
lbma() {
	local setup=$1 mem=--membind=0
	[ $setup = preferred ] && mem=--preferred=0
	echo 1 >/proc/sys/kernel/numa_balancing
	GO=0 workload "$setup-lbma" "$per_node" 16 "$N" run --policy=lbma \
		--report="$T/$setup-lbma.report.json" -- \
		numactl --cpunodebind=$Z $mem
	watch=(--pages=$((per_node * 16 * 256 * 9 / 10)))
	[ -n "$WP" ] || return 2
	beside "$setup-lbma" $setup lbma --counters=software -- $WP
}
# twice SETUP ARGS...: the setup, and once more when a check failed: the
# guest's kernel is not deterministic where the model is (in 1 run of
# about 5 of a setup it moved a thread to the node next to its own and
# back, or left a tenth of the pages to its next scan pass:
# docs/machine-model.md, "The model beside the real kernel"). A model that
# disagrees fails both. The first run's lines are kept, as comments.
twice() {
	local rc
	# In this shell (the workloads' pids kept for finish), into a file.
	"$@" >"$T/try" 2>&1
	rc=$?
	if [ $rc -eq 2 ]; then
		cat "$T/try"
		bad "model beside kernel, $*: set up"
		return
	fi
	if [ $rc -eq 0 ] && ! grep -q '^not ok' "$T/try"; then
		cat "$T/try"
		return
	fi
	sed 's/^/# first run: /' "$T/try"
	"$@" >"$T/try" 2>&1
	rc=$?
	cat "$T/try"
	fails=$((fails + $(grep -c '^not ok' "$T/try")))
	[ $rc -eq 2 ] && bad "model beside kernel, $*: set up"
}
t0=$SECONDS
twice master on
twice master off
[ -n "${GUEST_ALL:-}" ] && twice first_off
twice two_on
twice policies_on
twice lbma ind
twice lbma preferred
[ $fails -eq 0 ]

#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): numalot on a real kernel with
# 2 or 4 NUMA nodes, its topology read live (no --topology). What this
# shows and what it cannot: docs/real-node.md.
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
N=$B/numalot
W=$B/numalot-workload
T=$(mktemp -d)
. tests/lib.sh
. tests/guest/lib.sh
cd "$T"
sysnode=/sys/devices/system/node
nodes=$(ls -d $sysnode/node[0-9]* | wc -l)
data=$((nodes - 1))
data_cpus=$(cat $sysnode/node$data/cpulist)
all_cpus=$(cat /sys/devices/system/cpu/online)

cpu_list "$data_cpus"
workers=${#CPUS[@]}
data_set=",$(IFS=,; echo "${CPUS[*]}"),"
# on_data_node LIST: every CPU of LIST is one of the data node's.
on_data_node() {
	local c
	cpu_list "$1"
	for c in "${CPUS[@]}"; do [[ $data_set == *",$c,"* ]] || return 1; done
}
# anon_sample NODE PID [PAGES]: from one read of PID's numa_maps, "PCT;
# SEEN": the percentage of its anonymous pages on NODE (empty while it has
# fewer than PAGES, default 1) and "N pages on node M, ..." (one read, so
# the two never disagree).
anon_sample() {
	local maps
	maps=$(<"/proc/$2/numa_maps") || return 1
	awk -v node="N$1" -v least="${3:-1}" '/anon=/ {
		for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) {
			split($i, kv, "="); all += kv[2]; n[kv[1]] += kv[2]
		}
	} END { s = ""; for (k in n) s = s (s ? ", " : "") n[k] " pages on " k
		printf "%s;%s\n", (all >= least ? int(100 * n[node] / all) : ""),
			s ? s : "no anonymous page" }' <<<"$maps"
}

# anon_share_on NODE PID [PAGES]: the percentage alone.
anon_share_on() {
	local s
	s=$(anon_sample "$@") || return 1
	echo "${s%%;*}"
}

# numalot info: the kernel's nodes, their CPUs and the SLIT, through hwloc.
"$N" info >info.out 2>&1
check "info exits 0" test $? -eq 0
check "info: the live topology, $nodes NUMA nodes" grep -q "^  $nodes NUMA nodes," info.out
for ((n = 0; n < nodes; n++)); do
	cpu_list "$(cat $sysnode/node$n/cpulist)"
	c=${#CPUS[@]}
	check "info: node $n has its $c CPUs" grep -qE "^  node $n: $c CPUs?\b" info.out
done
slit=$(cat $sysnode/node[0-9]*/distance)
shown=$(sed -n '/distances (from the machine):/,$p' info.out | sed -n "2,$((nodes + 1))p" |
	tr -s ' ' | sed 's/^ //')
check "info: the SLIT is the machine's ($(echo $slit | tr ' ' /))" test "$shown" = "$slit"
check "info: NUMA balancing seen on" grep -q 'numa_balancing): on' info.out

# Pages really move between nodes here (what issue 9 needs): a process's
# memory bound to the last node, moved to node 0 by migratepages.
numactl --membind=$data "$W" --threads 1 --mode memory --mem-mb 32 --seconds 60 >/dev/null &
wp=$!
# Until its whole buffer is touched (32 MiB: 8,192 pages; bounded by time:
# a loaded emulated guest once took 15 s to touch 16 MiB): pages it
# touched after migratepages would land on its own node again.
until=$((SECONDS + 120))
while [ $SECONDS -lt $until ] && kill -0 $wp 2>/dev/null; do
	before=$(anon_share_on $data $wp 8000)
	[ "${before:-0}" -ge 90 ] && break
	sleep 0.2
done
migratepages $wp $data 0
after=$(anon_share_on 0 $wp)
kill $wp
wait $wp 2>/dev/null
check "migratepages: pages from node $data (${before:-?}%) to node 0 (${after:-?}%)" \
	test "${before:-0}" -ge 90 -a "${after:-0}" -ge 90

# The policies on a real kernel: the workload's memory bound to the last
# node (numactl --membind), its threads free on every CPU, as many busy
# threads as that node has CPUs. The kernel's NUMA balancing is off so
# that only numalot moves threads; watched from outside every 0.2 s.
echo 0 >/proc/sys/kernel/numa_balancing
# Linux alone, as a control (in the 2-node guest only, for time): no pins.
policies="imar2 lbma"
[ "$nodes" -eq 2 ] && policies="monitor $policies"
# numalot is attached to the workload once its memory is touched, and its
# walks start once numalot holds its threads (--go-file): in a loaded
# emulated guest the first touch of 16 MiB once took 9 s and once 15 s,
# and numalot's own start 7 s; a run started with the workload (`numalot
# run`) could not know the data's node before (a late move failed CI).
# numalot reads where a process's pages are when it takes it over; the
# policies get the walks' 12 s and are judged from their 4th second
# (imar2's period walks 1, 2, 4 x 0.25 s while it has nothing to move,
# and a draw may stay).
settle_s=4
for policy in $policies; do
	seconds=12
	[ $policy = monitor ] && seconds=8
	go=$T/$policy.go
	numactl --membind=$data "$W" --threads "$workers" --mode memory \
		--mem-mb 16 --seconds $seconds --go-file "$go" >$policy.out 2>&1 &
	wp=$!
	# Until 90% of its buffers (16 MiB a thread) are touched, bounded;
	# what was last seen otherwise, for the message.
	mem_pct="" mem_seen="no sample"
	for _ in $(seq 300); do
		sample=$(anon_sample $data $wp $((workers * 4096 * 9 / 10)) 2>/dev/null) &&
			mem_seen=${sample#*;} mem_pct=${sample%%;*}
		[ -n "$mem_pct" ] && break
		kill -0 $wp 2>/dev/null || break
		sleep 0.2
	done
	"$N" attach --policy=$policy --period=0.25 --report=$policy.json $wp \
		>$policy.attach 2>&1 &
	np=$!
	# Until numalot holds the threads' counters (4 software events a
	# thread), bounded; then the walks.
	for _ in $(seq 300); do
		held=$(ls -l /proc/$np/fd 2>/dev/null | grep -c perf_event)
		[ "$held" -ge $((4 * (workers + 1))) ] && break
		kill -0 $np 2>/dev/null || break
		sleep 0.2
	done
	touch "$go"
	: >$policy.watch
	# Whole seconds since the go, from the microsecond clock (no fork):
	# SECONDS' difference can call 3.0 s "4".
	start=${EPOCHREALTIME//[!0-9]/}
	while kill -0 $np 2>/dev/null; do
		# "SECONDS TID CPUS CPU" for every thread: the CPUs it may
		# use and the one it last ran on (stat field 39; the fields
		# after the name's ")" start at 3).
		t=$(((${EPOCHREALTIME//[!0-9]/} - start) / 1000000))
		for s in /proc/$wp/task/*/status; do
			tid=${s#/proc/$wp/task/}
			tid=${tid%/status}
			stat=$(<"${s%status}stat") || continue
			read -ra f <<<"${stat##*) }"
			status_cpus "$s" && echo "$t $tid $STATUS_CPUS ${f[36]}"
		done >>$policy.watch 2>/dev/null
		sleep 0.2
	done
	wait $np
	status=$?
	wait $wp
	# The report and watch log, for a person (build/guest/run-N/ on the host).
	[ -d /share ] && cp $policy.json $policy.watch $policy.out $policy.attach /share/ 2>/dev/null
	# Only whole samples are judged: a thread that ended while it was
	# read can leave a line that says nothing of where a thread may run;
	# they are counted, not taken for a pin.
	whole='^[0-9]+ [0-9]+ [0-9,-]+ [0-9]+$'
	broken=$(grep -cvE "$whole" $policy.watch || true)
	grep -E "$whole" $policy.watch >$policy.watch.ok || true
	mv $policy.watch.ok $policy.watch
	check "$policy: numalot attach exits 0$(head -c 300 $policy.attach | tr '\n' ' ')" test $status -eq 0
	check "$policy: the workload's memory is on node $data (${mem_pct:-?}%; $mem_seen)" \
		test "${mem_pct:-0}" -ge 90
	check "$policy: its threads were watched ($broken lines not whole samples)" test -s $policy.watch
	# From the report: nodes, where the SLIT came from, moves between
	# nodes, arrivals of a busy thread (not the idle main one) on the
	# data's node (a swap's partner goes the other way), and the busy
	# threads' share of CPU time there.
	read -r rnodes source moves to_data pct <<<"$(json $policy.json "r['machine']['nodes'], \
		r['machine']['distances_source'], \
		sum(e['kind'] in ('migrate', 'swap') and e['from_node'] != e['to_node'] for e in r['events']), \
		sum(e['kind'] in ('migrate', 'swap') and e['to_node'] == $data and e['tid'] != $wp \
			or e['kind'] == 'swap' and e['from_node'] == $data and e['other_tid'] != $wp \
			for e in r['events']), \
		int(100 * sum(t['time_per_node_s'][$data] for t in r['threads'] if t['tid'] != t['pid']) \
		/ max(1e-9, sum(sum(t['time_per_node_s']) for t in r['threads'] if t['tid'] != t['pid'])))" |
		tr -d "(),'")"
	check "$policy: report of $nodes nodes with the machine's SLIT" test "$rnodes $source" = "$nodes machine"
	# Watch samples: any thread pinned (narrower than the machine), and a
	# busy thread bound inside the data's node.
	pinned=0 bound=0 first_pinned=""
	while read -r t tid list ran; do
		[ "$list" = "$all_cpus" ] && continue
		pinned=$((pinned + 1))
		[ -n "$first_pinned" ] || first_pinned=": at ${t} s thread $tid on $list (ran on $ran)"
		[ "$tid" != "$wp" ] && on_data_node "$list" && bound=$((bound + 1))
	done <$policy.watch
	if [ $policy = monitor ]; then
		check "monitor: no thread ever pinned (watched from /proc; $pinned samples$first_pinned)" \
			test $pinned -eq 0
		check "monitor: no move in the report" test "$moves" -eq 0
		continue
	fi
	# Where the scheduler put every busy thread on the data's node from
	# the start (numalot moved nothing, and 90% of their CPU time was
	# there), there is nothing to move: the checks of moves below say so
	# instead (the settling checks still hold).
	placed=no there=""
	if [ "$moves" -eq 0 ] && [ "$pct" -ge 90 ]; then
		placed=yes there=", none needed: the scheduler put them on node $data"
	fi
	# What numalot does on a real kernel, whatever the policy decides.
	check "$policy: the report moves threads between nodes ($moves moves$there)" \
		test "$moves" -ge 1 -o $placed = yes
	check "$policy: threads seen pinned from /proc ($pinned samples$there)" \
		test $pinned -ge 1 -o $placed = yes
	# What the issue asks of the policies: the busy threads go to their
	# data's node (reported and seen from /proc) and stay there: each,
	# from settle_s on, running on that node (the CPU it last ran on,
	# whether numalot pinned it or the OS put it there) in 80% of the
	# samples, and 60% of their CPU time there in the report (Linux
	# alone: 50% with 2 nodes, 25% with 4).
	check "$policy: the report moves busy threads to node $data ($to_data moves$there)" \
		test "$to_data" -ge 1 -o $placed = yes
	check "$policy: a busy thread seen bound to node $data's CPUs ($data_cpus$there)" \
		test $bound -ge 1 -o $placed = yes
	late=$(awk -v main="$wp" -v from=$settle_s '$1 >= from && $2 != main {n[$2]++}
		END {for (t in n) print t, n[t]}' $policy.watch)
	# Settled: on the node in 80% of at least 2 samples; or, a thread the
	# OS took off it that numalot brought back and pinned there (it pins
	# only what it moves), in most of them and in the last (a slow
	# watcher in a loaded guest took 3 samples in 4 s, one of them in the
	# second the OS had the thread elsewhere).
	settled=0
	while read -r tid n; do
		[ -n "$tid" ] && [ "$n" -ge 2 ] || continue
		on=0 last=0
		while read -r t id list ran; do
			[ "$id" = "$tid" ] && [ "$t" -ge $settle_s ] || continue
			last=0
			on_data_node "$ran" && on=$((on + 1)) && on_data_node "$list" && last=1
		done <$policy.watch
		[ $((100 * on)) -ge $((80 * n)) ] || [ $((2 * on)) -gt "$n" -a $last = 1 ] &&
			settled=$((settled + 1))
	done <<<"$late"
	check "$policy: the $workers busy threads settled on node $data from the ${settle_s}th s ($settled did)" \
		test $settled -eq "$workers"
	check "$policy: report: the busy threads' CPU time mostly on node $data ($pct%)" \
		test "$pct" -ge 60
done
echo 1 >/proc/sys/kernel/numa_balancing
rm -rf "$T"
[ $fails -eq 0 ]

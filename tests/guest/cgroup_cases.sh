#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): which cgroup is a process's
# allocation on cgroup v2 (issue 23, finding 3; docs/slurm.md). Two
# workloads, each bound to the last node's CPUs, their memory on node 0,
# under one `numalot attach --policy=lbma`: one in "foo.service" (no
# job's cgroup, as slurmd's service is to a task without task/cgroup), one
# in "job_1/step_0" (named as Slurm's), both cgroups on every CPU. The
# step's threads may go to node 0, their data's; the service's never
# leave their binding. Watched from outside every 0.2 s.
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
N=$B/numalot
W=$B/numalot-workload
T=$(mktemp -d)
. tests/lib.sh
. tests/guest/lib.sh
cd "$T"
CG=/sys/fs/cgroup
sysnode=/sys/devices/system/node
nodes=$(ls -d $sysnode/node[0-9]* | wc -l)
bind=$((nodes - 1))
bind_cpus=$(cat $sysnode/node$bind/cpulist)
all_cpus=$(cat /sys/devices/system/cpu/online)
cpu_list "$bind_cpus"
workers=${#CPUS[@]}
bind_set=",$(IFS=,; echo "${CPUS[*]}"),"
# on_bind_node LIST: every CPU of LIST is one of the bound node's.
on_bind_node() {
	local c
	cpu_list "$1"
	for c in "${CPUS[@]}"; do [[ $bind_set == *",$c,"* ]] || return 1; done
}
finish() {
	kill $svc $step 2>/dev/null
	wait 2>/dev/null
	rmdir $CG/foo.service $CG/job_1/step_0 $CG/job_1 2>/dev/null
	[ -d /share ] && cp cg.json cg.watch cg.attach /share/ 2>/dev/null
	rm -rf "$T"
}
svc="" step=""
trap finish EXIT
# cpuset for the cgroups below the root, and job_1's child.
echo +cpuset >$CG/cgroup.subtree_control &&
	mkdir $CG/foo.service $CG/job_1 &&
	echo +cpuset >$CG/job_1/cgroup.subtree_control &&
	mkdir $CG/job_1/step_0 &&
	echo "$all_cpus" >$CG/foo.service/cpuset.cpus &&
	echo "$all_cpus" >$CG/job_1/step_0/cpuset.cpus
check "cgroups foo.service and job_1/step_0 with cpusets on every CPU" test $? -eq 0
# start CGROUP NAME: a workload in CGROUP, bound to the last node, its
# memory on node 0, waiting for $T/go.
start() {
	(echo $BASHPID >"$CG/$1/cgroup.procs" &&
		exec numactl --cpunodebind=$bind --membind=0 "$W" --threads $workers \
			--mode memory --mem-mb 16 --seconds 8 --go-file "$T/go") \
		>"$2.out" 2>&1 &
}
start foo.service svc
svc=$!
start job_1/step_0 step
step=$!
# Until both have touched 90% of their memory (in a loaded emulated guest
# the first touch of 16 MiB once took 15 s), bounded.
pages() { awk '/anon=/ {for (i = 1; i <= NF; i++) if ($i ~ /^N0=/) {
	split($i, kv, "="); n += kv[2] } } END {print n + 0}' "/proc/$1/numa_maps" 2>/dev/null; }
for _ in $(seq 300); do
	[ "$(pages $svc)" -ge $((workers * 4096 * 9 / 10)) ] &&
		[ "$(pages $step)" -ge $((workers * 4096 * 9 / 10)) ] && break
	sleep 0.2
done
"$N" attach --policy=lbma --period=0.25 --report=cg.json $svc $step >cg.attach 2>&1 &
np=$!
# Until numalot holds both workloads' threads' counters (4 events each).
for _ in $(seq 300); do
	held=$(ls -l /proc/$np/fd 2>/dev/null | grep -c perf_event)
	[ "$held" -ge $((8 * (workers + 1))) ] && break
	kill -0 $np 2>/dev/null || break
	sleep 0.2
done
touch go
: >cg.watch
# "WHICH TID CPUS CPU" for every thread of both: the CPUs it may use and
# the one it last ran on (stat field 39).
while kill -0 $np 2>/dev/null; do
	for p in svc:$svc step:$step; do
		for s in /proc/${p#*:}/task/*/status; do
			tid=${s#/proc/${p#*:}/task/}
			tid=${tid%/status}
			stat=$(<"${s%status}stat") || continue
			read -ra f <<<"${stat##*) }"
			status_cpus "$s" && echo "${p%:*} $tid $STATUS_CPUS ${f[36]}"
		done
	done >>cg.watch 2>/dev/null
	sleep 0.2
done
wait $np
status=$?
check "numalot attach exits 0$(head -c 300 cg.attach | tr '\n' ' ')" test $status -eq 0
whole='^(svc|step) [0-9]+ [0-9,-]+ [0-9]+$'
grep -E "$whole" cg.watch >cg.watch.ok
mv cg.watch.ok cg.watch
check "both workloads' threads were watched" \
	test "$(grep -c '^svc ' cg.watch)" -gt 0 -a "$(grep -c '^step ' cg.watch)" -gt 0
limit() { json cg.json "[p['placement_limit'] for p in r['processes'] if p['pid'] == $1][0]" 2>/dev/null; }
svc_limit=$(limit $svc)
step_limit=$(limit $step)
check "foo.service is no allocation: the limit is the binding ($svc_limit)" \
	test "${svc_limit#its own CPU binding}" != "$svc_limit"
check "job_1/step_0 is the allocation ($step_limit)" \
	test "$step_limit" = "cgroup v2 cpuset /job_1/step_0"
# The service's threads: every sample inside the bound node's CPUs, where
# they may run and where they ran.
out=0 first=""
while read -r which tid list ran; do
	[ "$which" = svc ] || continue
	on_bind_node "$list" && on_bind_node "$ran" && continue
	out=$((out + 1))
	[ -n "$first" ] || first=": thread $tid on $list (ran on $ran)"
done <cg.watch
check "foo.service: no thread ever left node $bind's CPUs ($bind_cpus; $out samples out$first)" \
	test $out -eq 0
# The step's: its allocation let numalot take a busy thread to node 0,
# their data's (the control: the same policy would move the service's).
moved=$(json cg.json "sum(e['kind'] in ('migrate', 'swap') and e['to_node'] != $bind \
	and e['tid'] in {t['tid'] for t in r['threads'] if t['pid'] == $step} \
	for e in r['events'])" 2>/dev/null)
seen=$(awk '$1 == "step" {print $3}' cg.watch | while read -r l; do
	on_bind_node "$l" || echo "$l"
done | head -1)
check "job_1/step_0: numalot moved a thread off node $bind (${moved:-?} moves, seen on ${seen:-none})" \
	test "${moved:-0}" -ge 1 -a -n "$seen"
[ $fails -eq 0 ]

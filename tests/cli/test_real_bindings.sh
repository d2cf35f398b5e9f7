#!/usr/bin/env bash
# Where numalot may put a thread on a real node (docs/algorithms.md): a
# task's own binding (taskset, numactl, --cpu-bind) is only where it
# starts; the limit is its allocation, the cpuset of its Slurm job's or
# step's cgroup (named job_N/step_N as Slurm names them; any other cgroup,
# such as slurmd's service or the root, allocates nothing, and there the
# binding is the limit: issue 23, finding 3); with --keep-bindings the
# binding is the limit. Watched from outside through
# /proc/PID/task/*/status. On this one-node machine the two CPUs are
# described as two nodes; the workload's pages are on node 0 (CPU 0).
# Needs cgroup v1's cpuset (as here) and root; cgroup v2 is covered in the
# guest (tests/guest/numa_cases.sh).
set -u
N=${NUMALOT:-build/numalot}
W=${WORKLOAD:-build/numalot-workload}
T=$(mktemp -d)
V1=/sys/fs/cgroup/cpuset
TOP=$V1/numalot-test.$$
ALLOC=$TOP/job_1/step_0
CG=$TOP/job_2/step_0
SVC=$TOP/slurmd.service
trap 'echo $$ >$V1/tasks 2>/dev/null
	rmdir "$ALLOC" "$CG" "$TOP"/job_[12] "$SVC" "$TOP" 2>/dev/null
	rm -rf "$T"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if [ "$(nproc)" -lt 2 ]; then
	echo "skip: bindings: needs 2 CPUs (have $(nproc))"
	exit 0
fi
TOPO="numa:2 core:1 pu:1"

# Every CPU list the threads of the program started by `numalot run` ever
# had once it is the workload: the known pid's status files, read by the
# shell, every 50 ms.
watched_run() {
	local out=$1 rep=$2 pid=""
	shift 2
	$N run --policy=lbma --period=0.2 --topology="$TOPO" \
		--report="$rep" "$@" >"$T/run.out" 2>&1 &
	local np=$!
	for _ in $(seq 100); do
		pid=$(cat /proc/$np/task/$np/children 2>/dev/null)
		pid=${pid%% *}
		[ -n "$pid" ] && break
		sleep 0.02
	done
	# Watched from the workload's exec: before it, the child is numalot's
	# fork or taskset, whose binding is not yet set (a taskset on the
	# command line binds itself, then execs the workload).
	for _ in $(seq 150); do
		case $(readlink /proc/"$pid"/exe 2>/dev/null) in
		*/"${W##*/}") break ;;
		esac
		sleep 0.02
	done
	: >"$out"
	while kill -0 $np 2>/dev/null; do
		thread_cpus "$pid" | while read -r _ v; do echo "$v"; done >>"$out"
		sleep 0.05
	done
	wait $np
}
prog=("$W" --threads 1 --seconds 2.5 --mode memory --mem-mb 32)
# cgroup DIR CPUS: a cpuset cgroup (and its parents, on all CPUs); this
# shell and what it starts go in.
mkcg() {
	[ -d "$1" ] && return 0
	mkdir "$1" 2>/dev/null && echo "$2" >"$1/cpuset.cpus" &&
		cat $V1/cpuset.mems >"$1/cpuset.mems"
}
cgroup() {
	mkcg "$TOP" 0-1 && mkcg "$(dirname "$1")" 0-1 && mkcg "$1" "$2" &&
		echo $$ >"$1/tasks"
}
if ! cgroup "$ALLOC" 0-1; then
	echo "skip: bindings: cannot make a cpuset cgroup here (cgroup v1 cpuset at $V1, as root; cgroup v2: make guest-check)"
	exit 0
fi

# 1. In a step's cgroup, bound to CPU 1 (node 1), its data on node 0:
#    numalot takes it to CPU 0, outside the binding, inside the
#    allocation.
watched_run "$T/free" "$T/free.json" -- taskset -c 1 "${prog[@]}"
check "binding: run succeeded" test $? -eq 0
check "binding: a thread was moved outside its binding to CPU 0 (seen in /proc)" \
	grep -qx 0 "$T/free"
check "binding: the report names the allocation as the limit" \
	grep -q "\"placement_limit\": \"cgroup v1 cpuset /numalot-test.$$/job_1/step_0\"" "$T/free.json"

# 2. --keep-bindings: never outside CPU 1.
watched_run "$T/keep" "$T/keep.json" --keep-bindings -- taskset -c 1 "${prog[@]}"
check "--keep-bindings: run succeeded" test $? -eq 0
check "--keep-bindings: affinities watched" test -s "$T/keep"
check "--keep-bindings: no thread ever left CPU 1 (seen in /proc)" \
	test "$(grep -cvx 1 "$T/keep")" -eq 0
check "--keep-bindings: the report says so" \
	grep -q "keep_bindings=1" "$T/keep.json"

# 3. A step's cgroup whose cpuset is CPU 1 only: never outside it, binding
# or not.
# numalot and its command are both in the cgroup before the take-over, as
# Slurm's task/cgroup places a task before it runs.
if cgroup "$CG" 1; then
	watched_run "$T/cg" "$T/cg.json" -- "${prog[@]}"
	check "cgroup: run succeeded" test $? -eq 0
	check "cgroup: affinities watched" test -s "$T/cg"
	check "cgroup: no thread ever left its cgroup's CPU 1 (seen in /proc)" \
		test "$(grep -cvx 1 "$T/cg")" -eq 0
	check "cgroup: the report names the cgroup" \
		grep -q "\"placement_limit\": \"cgroup v1 cpuset /numalot-test.$$/job_2/step_0\"" "$T/cg.json"
fi
# 4. A cgroup that is no job's, as slurmd's service is to a task started
#    without task/cgroup, on every CPU: not an allocation. The task's
#    binding (CPU 1) is its limit, though case 1 shows numalot would take
#    it to CPU 0 if it might (the issue: moved to CPU 0, "cgroup v1 cpuset
#    .../slurmd.service"). Bound before numalot takes it over, as in 5
#    (`run` takes its command over at its exec: taskset's, before it
#    binds).
if cgroup "$SVC" 0-1; then
	N="taskset -c 1 $N" watched_run "$T/svc" "$T/svc.json" -- "${prog[@]}"
	check "service cgroup: run succeeded" test $? -eq 0
	check "service cgroup: affinities watched" test -s "$T/svc"
	check "service cgroup: no thread ever left its binding, CPU 1 (seen in /proc)" \
		test "$(grep -cvx 1 "$T/svc")" -eq 0
	check "service cgroup: the report says the binding was the limit, not the cgroup" \
		grep -q '"placement_limit": "its own CPU binding' "$T/svc.json"
else
	bad "service cgroup: made $SVC"
fi
# 5. In the root cgroup nothing allocates CPUs: the binding (set before
#    numalot takes the program over) is the limit.
echo $$ >$V1/tasks
N="taskset -c 1 $N" watched_run "$T/root" "$T/root.json" -- "${prog[@]}"
check "root cgroup: no thread ever left its binding (seen in /proc)" \
	test "$(grep -cvx 1 "$T/root")" -eq 0
check "root cgroup: the report says the binding was the limit" \
	grep -q '"placement_limit": "its own CPU binding' "$T/root.json"
# 6. taskset as the command, in the root cgroup: `run` takes it over at
#    taskset's exec, before taskset binds; the binding it then sets is the
#    limit all the same (docs/real-node.md, "Other placers"). Before that
#    was so, numalot moved the thread to CPU 0 as in case 1.
watched_run "$T/wrap" "$T/wrap.json" -- taskset -c 1 "${prog[@]}"
check "wrapper taskset: run succeeded" test $? -eq 0
check "wrapper taskset: affinities watched" test -s "$T/wrap"
check "wrapper taskset: no thread ever left CPU 1, the binding taskset set (seen in /proc)" \
	test "$(grep -cvx 1 "$T/wrap")" -eq 0
# 7. Another placer: in a step's cgroup numalot moves the thread from CPU 1
#    to CPU 0 (case 1); then "another program" binds it back to CPU 1.
#    numalot lets go of the process: the thread stays on CPU 1, and the
#    report says why.
if cgroup "$ALLOC" 0-1; then
	$N run --policy=lbma --period=0.2 --topology="$TOPO" \
		--report="$T/peer.json" -- taskset -c 1 "${prog[@]}" \
		--seconds 4 >"$T/peer.out" 2>&1 &
	np=$!
	pid="" moved=""
	for _ in $(seq 150); do
		[ -z "$pid" ] && pid=$(cat /proc/$np/task/$np/children 2>/dev/null) &&
			pid=${pid%% *}
		[ -n "$pid" ] && moved=$(thread_cpus "$pid" | awk '$2 == "0" {print $1}')
		[ -n "$moved" ] && break
		sleep 0.02
	done
	check "peer: numalot moved a thread to CPU 0 first (seen in /proc)" test -n "$moved"
	for tid in $moved; do taskset -pc 1 "$tid" >/dev/null; done
	: >"$T/after"
	sleep 0.5 # two of numalot's periods
	while kill -0 "$pid" 2>/dev/null; do
		thread_cpus "$pid" | while read -r _ v; do echo "$v"; done >>"$T/after"
		sleep 0.05
	done
	wait $np
	check "peer: run succeeded" test $? -eq 0
	check "peer: affinities watched after the other program's move" test -s "$T/after"
	check "peer: numalot never took the thread back from CPU 1 (seen in /proc)" \
		test "$(grep -cvx 1 "$T/after")" -eq 0
	check "peer: the report says numalot let go and why" \
		grep -q '"let_go": "another program bound its thread [0-9]* to CPUs 1, where numalot had placed it on CPU 0' "$T/peer.json"
else
	bad "peer: made $ALLOC"
fi

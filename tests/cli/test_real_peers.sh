#!/usr/bin/env bash
# Another placer's hand in a process numalot runs (docs/real-node.md,
# "Other placers"), with real processes on this node: its memory policy
# changed after numalot took it over (libnuma's numa_set_preferred, as
# a program or numad's peers would), and a thread bound outside its limit
# (taskset -p). numalot lets go of it, leaves it as it is, and says so.
# This node's two CPUs are described as two nodes.
set -u
N=${NUMALOT:-build/numalot}
W=${WORKLOAD:-build/numalot-workload}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

if [ "$(nproc)" -lt 2 ]; then
	echo "skip: peers: needs 2 CPUs (have $(nproc))"
	exit 0
fi
TOPO="numa:2 core:1 pu:1"

# 1. A process (64 MiB touched) that sets itself a preferred node 3 s in,
#    then touches a little memory on and on (a still process is not read).
if python3 -c 'import ctypes; ctypes.CDLL("libnuma.so.1")' 2>/dev/null; then
	cat >"$T/prefer.py" <<'EOF'
import ctypes, time
b = bytearray(b"\1") * (64 << 20)
time.sleep(3)
ctypes.CDLL("libnuma.so.1").numa_set_preferred(0)
end = time.time() + 5
while time.time() < end:
	c = bytearray(b"\1") * (1 << 20)
	time.sleep(0.1)
EOF
	$N run --policy=lbma --period=0.2 --topology="$TOPO" \
		--report="$T/prefer.json" -- python3 "$T/prefer.py" \
		>"$T/prefer.out" 2>&1 &
	np=$!
	pid=""
	for _ in $(seq 100); do
		pid=$(cat /proc/$np/task/$np/children 2>/dev/null)
		pid=${pid%% *}
		[ -n "$pid" ] && break
		sleep 0.02
	done
	sleep 7 # numalot has let go: what it left
	cpus=$(thread_cpus "$pid" | awk '{print $2}' | sort -u | tr '\n' ' ')
	wait $np
	check "policy: run succeeded" test $? -eq 0
	check "policy: the report says numalot let go and why" \
		grep -q '"let_go": "the memory policy of [0-9]* MiB of its pages changed (100% under a policy of its own, 0% before): numalot left the process to it' "$T/prefer.json"
	check "policy: its thread left on every CPU, no pin of numalot's (seen in /proc: $cpus)" \
		test "$cpus" = "0-1 "
else
	echo "skip: policy: no python3 with libnuma.so.1"
fi

# 2. numalot run under `taskset -c 1`: CPU 1 is the process's limit (no
#    job's cgroup; docs/algorithms.md). Bound to CPU 0 from outside, it is
#    let go of and stays there.
taskset -c 1 $N run --policy=lbma --period=0.2 --topology="$TOPO" \
	--report="$T/out.json" -- "$W" --threads 1 --seconds 4 --mode memory \
	--mem-mb 32 >"$T/out.out" 2>&1 &
np=$!
pid=""
for _ in $(seq 100); do
	pid=$(cat /proc/$np/task/$np/children 2>/dev/null)
	pid=${pid%% *}
	[ -n "$pid" ] && break
	sleep 0.02
done
sleep 1
for tid in $(thread_cpus "$pid" | awk '{print $1}'); do
	taskset -pc 0 "$tid" >/dev/null
done
sleep 0.5 # two of numalot's periods
: >"$T/after"
while kill -0 "$pid" 2>/dev/null; do
	thread_cpus "$pid" | awk '{print $2}' >>"$T/after"
	sleep 0.05
done
wait $np
check "outside its limit: run succeeded" test $? -eq 0
check "outside its limit: affinities watched" test -s "$T/after"
check "outside its limit: numalot never took a thread back from CPU 0 (seen in /proc)" \
	test "$(grep -cvx 0 "$T/after")" -eq 0
check "outside its limit: the report says numalot let go and why" \
	grep -Eq '"let_go": "another program bound its thread [0-9]+ to CPUs 0(, outside its limit 1|, where numalot had placed it on CPU 1):' "$T/out.json"
[ "$fails" -eq 0 ]

#!/usr/bin/env bash
# Benchmark with a real local Slurm: time added to `srun -n1 true` by the
# plugin (agent running / agent to start / plugin absent), median of N; and
# the agent's CPU use with 4 jobs of 8 threads each over S seconds.
# Usage: tests/bench/bench_slurm.sh [BUILD] [N] [S]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
N=${2:-20}
S=${3:-60}
ROOT=$PWD
. tests/slurm/cluster.sh
T=$(mktemp -d /tmp/numalot-bench.XXXXXX)
chmod 755 "$T"
SOCK=$T/numalotd.sock
agent_pid() { agent_pid_of "$ROOT/$B/numalot" "$SOCK"; }
trap 'ap=$(agent_pid); [ -n "$ap" ] && kill $ap; cluster_stop; rm -rf "$T"' EXIT
PLUG="$ROOT/$B/numalot.so agent=$ROOT/$B/numalotd socket=$SOCK log=$T/agent.log idle_exit=600"
cluster_start "$T" $PLUG >/dev/null || exit 1
cd "$T"
median() { sort -n | awk '{a[NR] = $1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }
run_n() { # label, then srun arguments; prints the median wall time in ms
	local label=$1
	shift
	for _ in $(seq "$N"); do
		[ "$label" = start ] && { ap=$(agent_pid); [ -n "$ap" ] && kill $ap; sleep 0.2; }
		local t0 t1
		t0=$(date +%s%N)
		srun -Q -n1 "$@" true >/dev/null 2>&1
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000000))
	done | median
}
echo "plugstack: none" >&2
echo "" >"$T/plugstack.conf"
absent=$(run_n absent)
echo "required $PLUG" >"$T/plugstack.conf"
off=$(run_n off)
srun -Q -n1 --numalot=monitor true >/dev/null 2>&1 # agent up
running=$(run_n running --numalot=monitor)
start=$(run_n start --numalot=monitor)
printf "srun -n1 true, median of %d (ms):\n" "$N"
printf "  plugin absent                      %6s\n" "$absent"
printf "  plugin, numalot off                %6s\n" "$off"
printf "  plugin, --numalot, agent running   %6s\n" "$running"
printf "  plugin, --numalot, agent to start  %6s\n" "$start"

# Agent CPU: 4 jobs x 8 threads, lbma, 1 s period, S seconds.
srun -Q -n1 --numalot=monitor true >/dev/null 2>&1
ap=$(agent_pid)
read -r u0 s0 < <(awk '{print $14, $15}' /proc/$ap/stat)
for j in 1 2 3 4; do
	srun -Q --oversubscribe -n1 -c1 --numalot=lbma --numalot-period=1 \
		"$ROOT/$B/numalot-workload" --threads 8 --seconds "$S" --mode mixed \
		>/dev/null 2>&1 &
done
wait
read -r u1 s1 < <(awk '{print $14, $15}' /proc/$ap/stat)
hz=$(getconf CLK_TCK)
python3 -c "
cpu = (($u1 - $u0) + ($s1 - $s0)) / $hz
print('agent CPU with 4 jobs x 8 threads over $S s: %.2f s (%.3f%% of one core)' % (cpu, 100 * cpu / $S))"

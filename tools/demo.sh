#!/usr/bin/env bash
# numalot's main job, end to end on this machine: a throw-away single-node
# Slurm cluster with the numalot plugin, two co-scheduled jobs under
# srun --numalot=lbma and --numalot=imar2, their reports; then the same
# policies on a modelled multi-node NUMA machine. Stops all it started.
set -u
cd "$(dirname "$0")/.."
B=${BUILD:-build}
ROOT=$PWD
say() { printf '\n== %s\n' "$*"; }
if [ "$(id -u)" != 0 ]; then
	echo "demo: the Slurm part needs root (it starts munge, slurmctld and slurmd)"
	exit 1
fi
. tests/slurm/cluster.sh
T=$(mktemp -d /tmp/numalot-demo.XXXXXX)
chmod 755 "$T"
SOCK=$T/numalotd.sock
stop_all() {
	local ap
	ap=$(agent_pid_of "$ROOT/$B/numalot" "$SOCK")
	[ -n "$ap" ] && kill "$ap" 2>/dev/null
	cluster_stop
	rm -rf "$T"
}
trap stop_all EXIT

nodes=$("$B/numalot" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["machine"]["nodes"])')
cpus=$(nproc)
topo=""
say "this machine"
"$B/numalot" info | sed -n '3,6p;/counters/,/auto picks/p' | grep -v '^      '
if [ "$nodes" = 1 ] && [ $((cpus % 2)) -eq 0 ]; then
	topo="topology=numa:2,core:$((cpus / 2)),pu:1"
	echo "One NUMA node here: the agent is told to treat the $cpus CPUs as 2 nodes"
	echo "(numa:2,core:$((cpus / 2)),pu:1), so that the policies have somewhere to move threads."
fi

say "a single-node Slurm cluster with the numalot plugin"
# Root runs only an agent no user could replace (docs/slurm.md,
# "Security"): a checkout may be a user's, so a copy in root's folder.
install -m 0755 "$ROOT/$B/numalotd" "$T/numalotd"
cluster_start "$T" "$ROOT/$B/numalot.so" agent="$T/numalotd" \
	socket="$SOCK" log="$T/agent.log" $topo || exit 1
grep -v '^$' "$T/plugstack.conf"
cd "$T"

say "two jobs sharing the node: srun --numalot=lbma and srun --numalot=imar2"
W="$ROOT/$B/numalot-workload"
set -x
srun -Q --oversubscribe -n1 -c"$cpus" --numalot=lbma --numalot-period=0.25 \
	"$W" --threads 4 --seconds 6 --mode mixed >lbma.out 2>&1 &
srun -Q --oversubscribe -n1 -c"$cpus" --numalot=imar2 --numalot-period=0.25 \
	"$W" --threads 4 --seconds 6 --mode memory --mem-mb 32 >imar2.out 2>&1 &
{ set +x; } 2>/dev/null
sleep 2
"$ROOT/$B/numalot" status --socket="$SOCK"
wait
tail -n 1 lbma.out imar2.out

say "their reports, a folder per job (numalot report numalot-*/)"
"$ROOT/$B/numalot" report numalot-*/

say "the agent's log"
cat agent.log

cd "$ROOT"
say "the same policies on modelled NUMA machines (numalot bench)"
echo "two-node-remote: 8 latency-bound threads whose data is bound to node 0,"
echo "started on node 1; four-node-mix: four 16-thread programs on 4 x 16 cores."
"$B/numalot" bench --seeds=3 --policies=imar2,lbma,static \
	etc/scenarios/two-node-remote.json etc/scenarios/four-node-mix.json |
	sed -n '1,8p'
echo "(all 74 scenarios: numalot bench; what they show: docs/evaluation.md)"
say "done: cluster and agent stopped"

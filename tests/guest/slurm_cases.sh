#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): the real Slurm tests' core
# cases (tests/slurm/test_slurm.sh) on a real NUMA kernel, with the plugin
# under proctrack/cgroup + task/cgroup on cgroup v2, the agent deciding on
# the live topology. See docs/real-node.md.
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
	echo "skip: Slurm is not installed (make deps installs it)"
	exit 0
fi
. tests/slurm/cluster.sh
. tests/lib.sh
. tests/guest/lib.sh
T=$(mktemp -d /tmp/numalot-slurm.XXXXXX)
chmod 755 "$T"
SOCK=$T/numalotd.sock
W=$B/numalot-workload
finish() {
	cluster_stop
	# The logs, for a person (build/guest/run-N/ on the host).
	[ -d /share ] && cp -r "$T/log" "$T/agent.log" "$T"/*.json "$T"/numalot-* "$T"/*.out /share/ 2>/dev/null
	rm -rf "$T"
}
trap finish EXIT
sysnode=/sys/devices/system/node
nodes=$(ls -d $sysnode/node[0-9]* | wc -l)
cpu_list "$(cat $sysnode/node0/cpulist)"
per_node=${#CPUS[@]}
agent_pid() { agent_pid_of "$B/numalot" "$SOCK"; }
# agent_cgroup SRUN_PID: wait, while that srun runs, for the agent to
# answer; AGENT becomes its pid and AGENT_CG its cgroup (v2), CAPTURED 1
# if that is a job's.
agent_cgroup() {
	AGENT="" AGENT_CG="" CAPTURED=""
	while [ -z "$AGENT_CG" ] && kill -0 "$1" 2>/dev/null; do
		AGENT=$(agent_pid)
		[ -n "$AGENT" ] && AGENT_CG=$(cut -d: -f3 /proc/"$AGENT"/cgroup 2>/dev/null)
		sleep 0.2
	done
	[[ $AGENT_CG == */job_* ]] && CAPTURED=1
}

# cgroup v2 without systemd: Slurm makes its own scope under system.slice,
# and needs the controllers it uses enabled down to there.
mkdir -p /sys/fs/cgroup/system.slice
for cg in /sys/fs/cgroup /sys/fs/cgroup/system.slice; do
	echo "+cpuset +cpu +memory +pids" >$cg/cgroup.subtree_control
done
export CLUSTER_PROCTRACK=proctrack/cgroup CLUSTER_TASK=task/cgroup,task/affinity
export CLUSTER_CGROUP_CONF="CgroupPlugin=cgroup/v2
IgnoreSystemd=yes
ConstrainCores=yes"
# wait=30 (the most the plugin takes): in a loaded emulated guest the
# agent's start (its program and libraries read over 9p, the topology, the
# counter probe) once took more than 5 s, and the step ran unmanaged, as it
# should, but checked nothing; numalot's own start once took 7 s.
cluster_start "$T" "$B/numalot.so" agent="$(cluster_agent "$T" "$B/numalotd")" socket="$SOCK" \
	log="$T/agent.log" idle_exit=120 wait=30 || {
	echo "not ok - the cluster (cgroup v2) started"
	exit 1
}
cd "$T"
scope=$(ls -d /sys/fs/cgroup/system.slice/*slurmstepd.scope 2>/dev/null)
check "Slurm runs its steps in cgroup v2 ($scope)" test -n "$scope"

# The core cases in one step (each srun costs 10-15 s in the guest): two
# tasks bound to different nodes (one socket per node here), lbma, two
# threads each; where the agent is while it serves; one report holding
# both tasks, and numalot kept each task's threads on its task's node.
# The agent leaves the job's cgroups before it serves (it would be killed
# with the step's processes, before it could send the report).
srun -Q -l --numalot=lbma --numalot-period=0.25 -n2 -c"$per_node" \
	--cpu-bind=verbose,sockets "$W" --threads 2 --seconds 6 >step.out 2>&1 &
job=$!
agent_cgroup $job
wait $job
check "a two-task step exits 0" test $? -eq 0
node_mask() { printf 0x%x $(((1 << per_node) - 1 << $1 * per_node)); }
masks=$(sed -n 's/.*task *\([01]\) .*mask \(0x[0-9a-f]*\) set.*/\1 \2/p' step.out |
	sort | tr '\n' ' ')
check "Slurm bound task 0 to node 0 and task 1 to node 1 ($masks)" \
	test "$masks" = "0 $(node_mask 0) 1 $(node_mask 1) "
check "the agent answered while the step ran" test -n "$AGENT_CG"
check "the agent runs outside the job's cgroup (${AGENT_CG:-?})" \
	test -n "$AGENT_CG" -a -z "$CAPTURED"
sleep 1
check "the agent outlives the step" kill -0 "$AGENT" 2>/dev/null
report=$(ls numalot-*/*.json 2>/dev/null | head -1)
check "a report in the job's folder of the working directory" test -n "$report"
# The report's policy, Slurm identity, nodes, processes and threads, and
# each process's nodes (those where its threads had CPU time), sorted.
read -r policy step tasks rnodes procs threads nodes_of <<<"$(json "${report:-/dev/null}" \
	"r['policy']['name'], r['slurm']['step'], r['slurm']['tasks'], r['machine']['nodes'], \
	len(r['processes']), len(r['threads']), \
	' '.join(sorted(''.join(str(n) for n in sorted({n for t in r['threads'] if t['pid'] == p['pid'] \
	for n, s in enumerate(t['time_per_node_s']) if s > 0})) for p in r['processes']))" 2>/dev/null |
	tr -d "(),'")"
check "report: policy lbma, step 0 of 2 tasks" \
	test "$policy $step $tasks" = "lbma 0 2"
check "report: the agent decided on the $nodes live nodes" \
	test "${rnodes:-0}" -eq "$nodes"
check "report: both tasks, each with its 2 threads and main" \
	test "${procs:-0} ${threads:-0}" = "2 6"
# Each task's limit is the step's cgroup (bindings=free): its threads may
# use the other task's node too, never a node outside the step.
check "report: the tasks' threads ran on their own nodes, within the step's two (${nodes_of:-none})" \
	test -n "$(echo "${nodes_of:-x}" | grep -xE '0(1)? (0)?1')"
# task/cgroup on v2: each task's limit is its step's cgroup (Slurm's
# .../job_J/step_0/user/task_T), not slurmstepd's scope nor its binding.
limits=$(json "${report:-/dev/null}" "' '.join(sorted({p['placement_limit'] for p in r['processes']}))" 2>/dev/null)
in_step=$(json "${report:-/dev/null}" "all(__import__('re').match(r'cgroup v2 cpuset /system.slice/[^/]*slurmstepd.scope/job_[0-9]+/step_0(/|\$)', \
	p['placement_limit']) for p in r['processes']) and len(r['processes']) == 2" 2>/dev/null)
check "report: each task's limit is its step's cgroup ($limits)" test "$in_step" = True

# When every job has ended, Slurm has removed their cgroups (an agent left
# in one keeps it alive).
for _ in $(seq 20); do
	left=$(ls -d "$scope"/job_* 2>/dev/null)
	[ -z "$left" ] && break
	sleep 0.5
done
check "the jobs' cgroups are removed after the jobs (${left:-none left})" test -z "$left"
[ $fails -eq 0 ] || { echo "agent log:"; tail -20 agent.log; }
[ $fails -eq 0 ]

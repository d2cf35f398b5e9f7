#!/usr/bin/env bash
# numalot under proctrack/cgroup + task/cgroup on cgroup v1 (issue 11, item
# 1): the agent the plugin starts from job 1's step leaves that job's
# cgroups before it serves, outlives the job on every CPU, serves job 2,
# and Slurm removes both jobs' cgroups. Watched from outside. cgroup v2 is
# covered in the guest (tests/guest/slurm_cases.sh).
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
ROOT=$PWD
V1=/sys/fs/cgroup
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null ||
	! command -v munged >/dev/null; then
	echo "skip: needs root and Slurm (make deps installs it)"
	exit 0
fi
# Slurm's cgroup/v1 needs the v1 freezer, cpuset and cpuacct hierarchies,
# writable (not so in some containers).
for h in freezer cpuset cpuacct; do
	if ! grep -q " $V1/$h .* - cgroup cgroup .*\b$h\b" /proc/self/mountinfo ||
		! mkdir "$V1/$h/numalot-probe.$$" 2>/dev/null; then
		echo "skip: no writable cgroup v1 $h hierarchy here (cgroup v2: make guest-check)"
		exit 0
	fi
	rmdir "$V1/$h/numalot-probe.$$"
done
. tests/slurm/cluster.sh
. tests/lib.sh
T=$(mktemp -d /tmp/numalot-slurm-cg.XXXXXX)
chmod 755 "$T"
SOCK=$T/numalotd.sock
agent_pid() { agent_pid_of "$ROOT/$B/numalot" "$SOCK"; }
finish() {
	local ap
	ap=$(agent_pid)
	[ -n "$ap" ] && kill "$ap" 2>/dev/null
	cluster_stop
	[ "${KEEP:-0}" = 1 ] || rm -rf "$T"
}
trap finish EXIT
W="$ROOT/$B/numalot-workload"
export CLUSTER_PROCTRACK=proctrack/cgroup CLUSTER_TASK=task/cgroup,task/affinity
export CLUSTER_CGROUP_CONF="CgroupPlugin=cgroup/v1
ConstrainCores=yes"
cluster_start "$T" "$ROOT/$B/numalot.so" agent="$(cluster_agent "$T" "$ROOT/$B/numalotd")" \
	socket="$SOCK" log="$T/agent.log" idle_exit=120 || {
	echo "not ok - the cluster (proctrack/cgroup, cgroup v1) started"
	tail -5 "$T"/log/slurmd.log
	exit 1
}
cd "$T"
all_cpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)

# job_cgroups: the Slurm job cgroups now in the freezer and cpuset
# hierarchies (cgroup/v1 makes slurm/uid_U/job_J in each).
job_cgroups() { ls -d "$V1"/{freezer,cpuset}/slurm*/uid_*/job_* 2>/dev/null; }

# Job 1 on one CPU: while it runs, the agent it started answers; its
# cgroups (every hierarchy) and allowed CPUs, read from /proc.
srun -Q --numalot=lbma --numalot-period=0.2 -n1 -c1 --numalot-report="$T/j1.json" \
	"$W" --threads 2 --seconds 3 >j1.out 2>&1 &
j1=$!
agent="" in_job="" seen_job=""
while kill -0 $j1 2>/dev/null; do
	[ -n "$seen_job" ] || seen_job=$(job_cgroups)
	[ -n "$agent" ] || agent=$(agent_pid)
	if [ -n "$agent" ] && [ -n "$seen_job" ]; then
		in_job=$(grep -c '/job_[0-9]' /proc/"$agent"/cgroup)
		break
	fi
	sleep 0.2
done
wait $j1
check "job 1 exits 0" test $? -eq 0
check "Slurm ran job 1 in cgroup v1 job cgroups (${seen_job:-none seen})" test -n "$seen_job"
check "the agent answered while job 1 ran" test -n "$agent"
check "the agent is in no job cgroup ($(tr '\n' ' ' </proc/"${agent:-0}"/cgroup 2>/dev/null))" \
	test "${in_job:-1}" -eq 0
check "the agent says where it went" grep -q "left the job's cgroups it was started in: .*freezer /slurm" agent.log
check "job 1's report" test -s j1.json
# task/cgroup on v1: the task's limit is its step's cpuset cgroup, as
# Slurm names it (docs/slurm.md, "A task's allocation").
check "job 1's task's limit is its step's cgroup ($(grep -o '"placement_limit": "[^"]*' j1.json))" \
	grep -qE '"placement_limit": "cgroup v1 cpuset /slurm[^/]*/uid_[0-9]+/job_[0-9]+/step_0"' j1.json
sleep 0.5
check "the agent outlives job 1" kill -0 "${agent:-0}"
acpus=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/"${agent:-0}"/status 2>/dev/null)
check "the agent may run on every CPU after job 1 ($acpus, the node $all_cpus)" test "$acpus" = "$all_cpus"

# Job 2: served by the same agent.
srun -Q --numalot=imar2 --numalot-period=0.2 -n1 -c1 --numalot-report="$T/j2.json" \
	"$W" --threads 2 --seconds 1.5 >j2.out 2>&1
check "job 2 exits 0" test $? -eq 0
check "job 2 served by the same agent" test "$(agent_pid)" = "$agent"
check "job 2's report: imar2, its 2 threads and main measured" \
	test "$(json j2.json "r['policy']['name'], sum(t['periods'] > 0 for t in r['threads'])" 2>/dev/null)" = "imar2 3"

# When both jobs have ended Slurm removes their cgroups (an agent left in
# one would keep it) and logs no task/cgroup error.
for _ in $(seq 40); do
	left=$(job_cgroups)
	[ -z "$left" ] && break
	sleep 0.25
done
check "the jobs' cgroups are removed after the jobs (${left:-none left})" test -z "$left"
check "slurmd logged no task/cgroup error" \
	bash -c "! grep -E 'task_g_post_step|Unspecified error' '$T/log/slurmd.log'"
[ $fails -eq 0 ] || { echo "agent log:"; tail -20 agent.log; }
[ $fails -eq 0 ]

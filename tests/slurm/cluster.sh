# numalot: a throw-away single-node Slurm cluster (munge, slurmctld, slurmd
# on localhost), for the tests and the demo. Source it, then:
#   cluster_start DIR PLUGIN PLUGSTACK_ARGS...   (sets SLURM_CONF)
#   cluster_stop                                  (by the PIDs it recorded)
# Everything lives under DIR; nothing is started through systemd.
# CLUSTER_PROCTRACK, CLUSTER_TASK and CLUSTER_CGROUP_CONF (cgroup.conf's
# text) replace the plugins that need no cgroups (tests/guest/ uses them).

cluster_log() { echo "cluster: $*" >&2; }

# cluster_agent DIR NUMALOTD: a copy of NUMALOTD in DIR (the cluster's
# folder, root's), its path printed. The plugin runs only an agent no
# user could replace (docs/slurm.md, "Security"), and a checkout may be
# a user's.
cluster_agent() { install -m 0755 "$2" "$1/numalotd" && echo "$1/numalotd"; }

# The pid the agent at socket $2 gives for itself (numalot binary $1).
agent_pid_of() {
	"$1" request --socket="$2" '{"v":1,"op":"hello"}' 2>/dev/null |
		sed -n 's/.*"pid":\([0-9]*\).*/\1/p'
}

cluster_stop() {
	local f pid
	for f in slurmd slurmctld munged; do
		[ -n "${CLUSTER_DIR:-}" ] && [ -f "$CLUSTER_DIR/$f.pid" ] || continue
		pid=$(cat "$CLUSTER_DIR/$f.pid")
		[ -n "$pid" ] && kill "$pid" 2>/dev/null
	done
	# Wait (bounded) for them to go; a zombie counts as gone.
	for _ in $(seq 50); do
		local alive=0
		for f in slurmd slurmctld munged; do
			[ -f "$CLUSTER_DIR/$f.pid" ] || continue
			pid=$(cat "$CLUSTER_DIR/$f.pid")
			if [ -n "$pid" ] && [ -e /proc/$pid ] &&
				! grep -q '^State:.*Z' /proc/$pid/status 2>/dev/null; then
				alive=1
			fi
		done
		[ $alive -eq 0 ] && break
		sleep 0.1
	done
	for f in slurmd slurmctld munged; do
		[ -f "$CLUSTER_DIR/$f.pid" ] || continue
		pid=$(cat "$CLUSTER_DIR/$f.pid")
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
		rm -f "$CLUSTER_DIR/$f.pid"
	done
}

# cluster_start DIR PLUGIN [plugstack arguments...]
cluster_start() {
	local dir=$1 plugin=$2
	shift 2
	CLUSTER_DIR=$dir
	mkdir -p "$dir"/{munge,state,spool,log}
	chmod 0755 "$dir" "$dir/munge"
	local host
	host=$(hostname -s)
	# munge: our own key, socket, pid and seed files.
	dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 0600 "$dir/munge/munge.key"
	/usr/sbin/munged --key-file="$dir/munge/munge.key" \
		--socket="$dir/munge/munge.sock" \
		--pid-file="$dir/munged.pid" --seed-file="$dir/munge/seed" \
		--log-file="$dir/log/munged.log" --force ||
		{ cluster_log "munged did not start"; return 1; }
	local cpus sockets cores threads mem
	eval "$(slurmd -C | head -1 | tr ' ' '\n' | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore|RealMemory)=' | sed 's/^/C_/')"
	mem=$((C_RealMemory * 9 / 10))
	cat >"$dir/slurm.conf" <<CONF
ClusterName=numalot-test
SlurmctldHost=$host
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
SlurmctldPort=${CLUSTER_PORT:-16817}
SlurmdPort=$(( ${CLUSTER_PORT:-16817} + 1 ))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmdDebug=debug
ProctrackType=${CLUSTER_PROCTRACK:-proctrack/linuxproc}
TaskPlugin=${CLUSTER_TASK:-task/affinity}
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
MailProg=/bin/true
KillWait=5
ReturnToService=2
SchedulerParameters=sched_interval=1
PlugStackConfig=$dir/plugstack.conf
NodeName=$host NodeAddr=127.0.0.1 CPUs=$C_CPUs Boards=${C_Boards:-1} SocketsPerBoard=$C_SocketsPerBoard CoresPerSocket=$C_CoresPerSocket ThreadsPerCore=$C_ThreadsPerCore RealMemory=$mem State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES:4
CONF
	echo "required $plugin $*" >"$dir/plugstack.conf"
	[ -z "${CLUSTER_CGROUP_CONF:-}" ] || echo "$CLUSTER_CGROUP_CONF" >"$dir/cgroup.conf"
	export SLURM_CONF=$dir/slurm.conf
	/usr/sbin/slurmctld -i -f "$SLURM_CONF" ||
		{ cluster_log "slurmctld did not start"; return 1; }
	/usr/sbin/slurmd -N "$host" -f "$SLURM_CONF" ||
		{ cluster_log "slurmd did not start"; return 1; }
	# Wait (bounded) for the node to be idle.
	for _ in $(seq 100); do
		if sinfo -h -o %t 2>/dev/null | grep -q '^idle'; then
			return 0
		fi
		sleep 0.1
	done
	cluster_log "the node did not become idle:"
	sinfo 2>&1 | head -5 >&2
	tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2
	return 1
}

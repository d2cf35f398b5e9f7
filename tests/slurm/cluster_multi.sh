# numalot: a throw-away two-node Slurm cluster on this one machine, for the
# multi-node cases. Two slurmd, nodes "nla" and "nlb" (Slurm's names, not
# the host's), each on its own port and with its own plugstack file, so
# that each node has its own agent socket as two real nodes would. Source
# it (after tests/slurm/cluster.sh), then:
#   cluster_multi_start DIR PLUGIN   (sets SLURM_CONF; plugstack files:
#                                     DIR/plugstack{,-nla,-nlb}.conf)
#   cluster_multi_stop               (by the PIDs it recorded)
# CLUSTER_PORT: slurmctld's port; the nodes take the next two.
# CLUSTER_MULTI_CONF: more lines for slurm.conf.

CLUSTER_NODES="nla nlb"

# The PIDs of this cluster's slurmstepd: those with a file of DIR open (a
# step still finishing when the cluster stops).
cluster_multi_stepds() {
	local p
	for p in $(pgrep -x slurmstepd); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -q -- "$1/" && echo "$p"
	done
}

cluster_multi_stop() {
	local f pids="" p
	[ -n "${CLUSTER_DIR:-}" ] || return 0
	# Recorded first: a slurmd removes its PID file as it begins to stop.
	for f in "$CLUSTER_DIR"/slurmd-*.pid; do
		[ -f "$f" ] && pids="$pids $(cat "$f")"
	done
	pids="$pids $(cluster_multi_stepds "$CLUSTER_DIR")"
	for p in $pids; do kill "$p" 2>/dev/null; done
	cluster_stop
	for _ in $(seq 50); do
		local alive=0
		for p in $pids; do
			[ -e "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null && alive=1
		done
		[ $alive -eq 0 ] && break
		sleep 0.1
	done
	# slurmstepd ignores SIGTERM: what is left goes now.
	for p in $pids; do kill -9 "$p" 2>/dev/null; done
	rm -f "$CLUSTER_DIR"/slurmd-*.pid
}

cluster_multi_start() {
	local dir=$1 plugin=$2 port=${CLUSTER_PORT:-16817} n host k=1
	# The one-node cluster first (munge, the configuration), then its
	# slurmd and slurmctld give way to two nodes.
	cluster_start "$dir" "$plugin" || return 1
	for f in slurmd slurmctld; do
		kill "$(cat "$dir/$f.pid")" 2>/dev/null
	done
	for _ in $(seq 50); do
		kill -0 "$(cat "$dir/slurmd.pid" 2>/dev/null)" 2>/dev/null ||
			kill -0 "$(cat "$dir/slurmctld.pid" 2>/dev/null)" 2>/dev/null ||
			break
		sleep 0.1
	done
	rm -f "$dir/slurmd.pid"
	host=$(hostname -s)
	sed -i -e '/^NodeName=/d' -e '/^PartitionName=/d' \
		-e "s|^SlurmdSpoolDir=.*|SlurmdSpoolDir=$dir/spool-%n|" \
		-e "s|^SlurmdPidFile=.*|SlurmdPidFile=$dir/slurmd-%n.pid|" \
		-e "s|^SlurmdLogFile=.*|SlurmdLogFile=$dir/log/slurmd-%n.log|" \
		"$dir/slurm.conf"
	{
		for n in $CLUSTER_NODES; do
			echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$((port + k)) CPUs=$(nproc) State=UNKNOWN"
			k=$((k + 1))
		done
		echo "PartitionName=test Nodes=${CLUSTER_NODES// /,} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES:4"
		# salloc starts the user's shell as an interactive step.
		echo "LaunchParameters=use_interactive_step"
		[ -z "${CLUSTER_MULTI_CONF:-}" ] || echo "$CLUSTER_MULTI_CONF"
	} >>"$dir/slurm.conf"
	# Each node its own plugstack file (its own agent).
	for n in $CLUSTER_NODES; do
		cp "$dir/plugstack.conf" "$dir/plugstack-$n.conf"
		sed "s|^PlugStackConfig=.*|PlugStackConfig=$dir/plugstack-$n.conf|" \
			"$dir/slurm.conf" >"$dir/slurm-$n.conf"
	done
	/usr/sbin/slurmctld -i -f "$SLURM_CONF" ||
		{ cluster_log "slurmctld did not start"; return 1; }
	for n in $CLUSTER_NODES; do
		/usr/sbin/slurmd -N "$n" -f "$dir/slurm-$n.conf" ||
			{ cluster_log "slurmd $n did not start"; return 1; }
	done
	for _ in $(seq 150); do
		[ "$(sinfo -h -N -o %t 2>/dev/null | grep -c '^idle')" -eq 2 ] && return 0
		sleep 0.1
	done
	cluster_log "the two nodes did not become idle:"
	sinfo -N 2>&1 | head -5 >&2
	tail -5 "$dir/log/slurmctld.log" >&2
	return 1
}

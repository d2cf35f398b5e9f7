#!/usr/bin/env bash
# numalot with a real Slurm of two nodes on this machine (cluster_multi.sh):
# where reports go (a folder per job, srun's tokens, never two nodes to one
# file, %N Slurm's node name), what a site collects (user_reports=,
# report_dir, site_log), a report that cannot be written told on srun's
# stderr, salloc's interactive step, and the options set by #SBATCH and
# the environment (docs/slurm.md).
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
ROOT=$PWD
if [ "$(id -u)" != 0 ] || ! command -v slurmctld >/dev/null ||
	! command -v munged >/dev/null; then
	echo "skip: needs root and Slurm (make deps installs it)"
	exit 0
fi
. tests/slurm/cluster.sh
. tests/slurm/cluster_multi.sh
T=$(mktemp -d /tmp/numalot-slurm-site.XXXXXX)
chmod 755 "$T"
finish() {
	local n ap
	for n in $CLUSTER_NODES; do
		ap=$(agent_pid_of "$ROOT/$B/numalot" "$T/$n.sock")
		[ -n "$ap" ] && kill "$ap" 2>/dev/null
	done
	cluster_multi_stop
	[ "${KEEP:-0}" = 1 ] || rm -rf "$T"
}
trap finish EXIT
. tests/lib.sh
N="$ROOT/$B/numalot"
W="$ROOT/$B/numalot-workload"
BASE="agent=$(cluster_agent "$T" "$ROOT/$B/numalotd") topology=numa:2,core:1,pu:1 idle_exit=120"
# plugstack ARGS...: srun's file, and each node's with its own agent.
plugstack() {
	local n
	echo "required $ROOT/$B/numalot.so $BASE socket=$T/srun.sock $*" >"$T/plugstack.conf"
	for n in $CLUSTER_NODES; do
		echo "required $ROOT/$B/numalot.so $BASE socket=$T/$n.sock log=$T/agent-$n.log $*" \
			>"$T/plugstack-$n.conf"
	done
}
plugstack
# slurmctld's epilog puts each job's totals in its AdminComment (the
# recipe of docs/slurm.md), from the site copies; sacctmgr is stood in for
# (no slurmdbd here): it keeps what it was asked.
mkdir -p "$T/bin"
printf '#!/bin/sh\necho "$SLURM_JOB_ID $*" >>"%s/sacctmgr.log"\n' "$T" >"$T/bin/sacctmgr"
chmod 755 "$T/bin/sacctmgr"
cat >"$T/epilog-ctld.sh" <<SH
#!/bin/sh
export PATH=$T/bin:/usr/sbin:/usr/bin:/sbin:/bin
export NUMALOT=$N NUMALOT_REPORT_DIR=$T/site/reports
exec $ROOT/etc/numalot-admincomment.sh
SH
chmod 755 "$T/epilog-ctld.sh"
CLUSTER_MULTI_CONF="EpilogSlurmctld=$T/epilog-ctld.sh" \
	cluster_multi_start "$T" "$ROOT/$B/numalot.so" || { echo "not ok - cluster did not start"; exit 1; }
plugstack
cd "$T"
host=$(hostname -s)
last_job() { squeue -h -t all -o %i 2>/dev/null | sort -n | tail -1; }

# (m1) A step on both nodes, no --numalot-report: a folder for the job,
# a file per node named with Slurm's node name (not the host's).
srun -Q -N2 -n2 --numalot=monitor --numalot-period=0.2 "$W" --threads 2 --seconds 1 >m1.out 2>&1
check "(m1) a two-node step exits 0" test $? -eq 0
j=$(last_job)
check "(m1) a report per node in numalot-$j/" test -s "numalot-$j/0.nla.json" -a -s "numalot-$j/0.nlb.json"
check "(m1) nothing else there" test "$(ls "numalot-$j" | wc -l)" -eq 2
if [ -s "numalot-$j/0.nlb.json" ]; then
	check "(m1) each report names its Slurm node (the host is $host)" \
		test "$(json "numalot-$j/0.nla.json" "r['slurm']['node']") $(json "numalot-$j/0.nlb.json" "r['slurm']['node']")" = "nla nlb"
	check "(m1) ...and holds its node's task" \
		test "$(json "numalot-$j/0.nlb.json" "len(r['processes']), r['policy']['name']")" = "1 monitor"
fi

# (m2) A pattern that names one file on two nodes: each node writes its
# own (%N added), and srun says so.
srun -Q -N2 -n2 --numalot=monitor --numalot-report="$T/m2.json" "$W" --threads 1 --seconds 0.5 >m2.out 2>m2.err
check "(m2) exits 0" test $? -eq 0
check "(m2) never two nodes to one file" test ! -e m2.json -a -s m2.nla.json -a -s m2.nlb.json
check "(m2) srun's stderr says so, once" \
	test "$(grep -c "names one file for the step's nodes: each node writes its own, $T/m2.%N.json" m2.err)" -eq 1

# (m3) Every token of srun(1).
srun -Q -N2 -n2 -J tokjob --numalot=monitor \
	--numalot-report="$T/tok-%A-%a-%J-%j-%N-%n-%s-%t-%u-%x-%%-%4j.json" true >m3.out 2>&1
j=$(last_job)
pj=$(printf %04d "$j")
check "(m3) %A %a %J %j %N %n %s %t %u %x %% and padding, node nla" \
	test -s "tok-$j-4294967294-$j.0-$j-nla-0-0-0-root-tokjob-%-$pj.json"
check "(m3) ...node nlb (its index and first task)" \
	test -s "tok-$j-4294967294-$j.0-$j-nlb-1-0-1-root-tokjob-%-$pj.json"

# (m4) A bad token fails srun before the job, naming it.
srun -Q -n1 --numalot=monitor --numalot-report="$T/r-%q.json" touch "$T/m4.ran" >m4.out 2>&1
check "(m4) srun fails on an unknown token" test $? -ne 0 -a ! -e m4.ran
check "(m4) ...naming it and the valid ones" \
	grep -q 'unknown token "%q" (valid: %A %a %J %j %N %n %s %t %u %x %%)' m4.out

# (m5) numalot report over a job's folder: a table per node, the job's
# totals, and the merged JSON.
j=$(ls -d numalot-* | head -1)
"$N" report "$j" >m5.out 2>&1
check "(m5) numalot report FOLDER exits 0" test $? -eq 0
check "(m5) a row per node" test "$(grep -cE '^  (nla|nlb) +0 +monitor' m5.out)" -eq 2
check "(m5) the job's totals" grep -qE "^  all +2 reports" m5.out
"$N" report --json "$j"/*.json >m5.json
check "(m5) --json: the job, its two nodes, totals" \
	test "$(json m5.json "len(r['jobs']), len(r['jobs'][0]['nodes']), r['jobs'][0]['totals']['nodes']")" = "1 2 2"

# (w) A report the user named that cannot be written is refused on the
# node before the program runs (issue 26, item 2), by name; one found
# only at the end (the default path, which the user did not name, in a
# working folder nobody may not write) is told on srun's stderr, and the
# job's status is its own.
echo x >"$T/afile"
srun -Q -n1 -w nla --numalot=monitor --numalot-report="$T/afile/w.json" touch "$T/w.ran" >w.out 2>w.err
check "(w) a named report under a file: srun fails before the program" test $? -ne 0 -a ! -e "$T/w.ran"
check "(w) ...saying which file and why" \
	grep -q "numalot: cannot write report $T/afile/w.json: $T/afile is not a folder; the program was not started" w.err
mkdir -p "$T/w-ro"
srun -Q -n1 -w nla --uid=nobody --chdir="$T/w-ro" --numalot=monitor "$W" --threads 1 --seconds 0.3 >w2.out 2>w2.err
check "(w) the default report, unwritable at the end: the job still exits 0" test $? -eq 0
check "(w) ...srun's stderr says the report was not written, and why" \
	grep -q "numalot: cannot write the report $T/w-ro/numalot-[0-9]*/0.nla.json: Permission denied" w2.err

# (s1) Site collection with default=monitor: a step nobody asked numalot
# for leaves no file with its user (user_reports=request), a site copy in
# a report_dir made 0750 (files 0640), and a line per step per node.
plugstack default=monitor report_dir=$T/site/reports site_log=$T/site/steps.jsonl
mkdir -p s1 && (cd s1 && srun -Q -N2 -n2 hostname >../s1.out 2>&1)
check "(s1) srun hostname exits 0" test $? -eq 0
j=$(last_job)
check "(s1) no report in the user's folder" test -z "$(ls s1)"
check "(s1) report_dir made 0750" test "$(stat -c %a site/reports 2>/dev/null)" = 750
check "(s1) a site copy per node, 0640" \
	test "$(stat -c %a "site/reports/numalot-$j.0.nla.json" "site/reports/numalot-$j.0.nlb.json" 2>/dev/null | sort -u)" = 640
check "(s1) the site log: 0640, a line per node for the step" \
	test "$(stat -c %a site/steps.jsonl 2>/dev/null) $(grep -c "\"job\":$j," site/steps.jsonl)" = "640 2"
line=$(grep "\"job\":$j," site/steps.jsonl | grep '"node":"nlb"')
echo "$line" >s1.line
check "(s1) the line: job, step, node, user, policy, counts, CPU share, locality, advice" \
	test "$(json s1.line "r['job'] == $j and r['step'] == 0 and r['node'] == 'nlb' and r['user'] == 'root' and r['policy'] == 'monitor' and {'periods', 'migrations', 'page_moves', 'cpu_share_per_numa_node', 'locality_last', 'advice'} <= set(r) and isinstance(r['advice'], list)")" = True
# A short step: its program's name, not slurmstepd's.
check "(s1) a short step is named by its program" \
	test "$(json "site/reports/numalot-$j.0.nla.json" "[p['name'] for p in r['processes']]")" = "['hostname']"

# The recipes of docs/slurm.md on what the site collected.
if command -v jq >/dev/null; then
	"$ROOT/etc/numalot-textfile.sh" site/steps.jsonl site/numalot.prom
	check "(s1) node_exporter textfile: the steps per policy" \
		grep -qx 'numalot_steps_total{policy="monitor"} 2' site/numalot.prom
	for _ in $(seq 50); do
		grep -q "^$j " sacctmgr.log 2>/dev/null && break
		sleep 0.1
	done
	check "(s1) EpilogSlurmctld put the job's totals over its nodes in its AdminComment" \
		grep -q "^$j -i update job where jobid=$j set AdminComment=numalot:{\"job\":$j,\"reports\":2,\"nodes\":2," sacctmgr.log
fi

# (s2) user_reports=always: the same step leaves the user a report.
plugstack default=monitor user_reports=always
mkdir -p s2 && (cd s2 && srun -Q -n1 -w nla hostname >/dev/null 2>&1)
j=$(last_job)
check "(s2) user_reports=always: a report for the user" test -s "s2/numalot-$j/0.nla.json"

# (s3) user_reports=never: none even when asked; srun says the option
# is ignored.
plugstack user_reports=never report_dir=$T/site/reports
mkdir -p s3 && (cd s3 && srun -Q -n1 -w nla --numalot=monitor --numalot-report="$T/s3/r.json" hostname >../s3.out 2>&1)
j=$(last_job)
check "(s3) user_reports=never: no report for the user" test -z "$(ls s3)"
check "(s3) ...srun says --numalot-report is ignored" grep -q "user_reports=never): --numalot-report is ignored" s3.out
check "(s3) ...the site still has its copy" test -s "site/reports/numalot-$j.0.nla.json"

# (x1) The job's environment names no node for root: a SLURMD_NODENAME
# that climbs folders, or a plain fake one, changes neither the site
# copy's name nor the site log's node (docs/slurm.md, "Security").
mkdir -p rootonly && chmod 700 rootonly && echo "root's" >rootonly/config.json
plugstack report_dir=$T/site/reports site_log=$T/site/steps.jsonl
SLURMD_NODENAME=/../../../rootonly/config srun -Q -n1 -w nla --numalot=monitor true >x1.out 2>&1
check "(x1) a step with a hostile SLURMD_NODENAME exits 0" test $? -eq 0
j=$(last_job)
check "(x1) root wrote nothing in a root-only folder" \
	test "$(ls rootonly) $(cat rootonly/config.json)" = "config.json root's"
check "(x1) the site copy is named by Slurm's node" test -s "site/reports/numalot-$j.0.nla.json"
check "(x1) ...and the site log says nla" \
	test "$(grep -c "\"job\":$j,.*\"node\":\"nla\"" site/steps.jsonl)" -eq 1
SLURMD_NODENAME=fake srun -Q -n1 -w nlb --numalot=monitor true >x2.out 2>&1
j=$(last_job)
check "(x1) a fake SLURMD_NODENAME: the copy and line still name nlb" \
	test -s "site/reports/numalot-$j.0.nlb.json" -a ! -e "site/reports/numalot-$j.0.fake.json" \
	-a "$(grep -c "\"job\":$j,.*\"node\":\"nlb\"" site/steps.jsonl)" -eq 1

# (x2) report_dir not yet made, under a sticky world-writable folder,
# where a user put a link first: root writes nothing through it, and
# says why in the step's log.
mkdir -p sticky && chmod 1777 sticky
su nobody -s /bin/sh -c "ln -s $T/rootonly $T/sticky/reports" 2>/dev/null ||
	{ ln -s "$T/rootonly" sticky/reports && chown -h nobody sticky/reports; }
plugstack report_dir=$T/sticky/reports
srun -Q -n1 -w nla --numalot=monitor true >x3.out 2>&1
check "(x2) the step exits 0" test $? -eq 0
j=$(last_job)
check "(x2) nothing written through the user's link" \
	test "$(ls rootonly)" = "config.json"
check "(x2) ...and the step says why" \
	grep -q "cannot write the site copy in $T/sticky/reports: $T/sticky/reports is a symbolic link of uid $(id -u nobody)" x3.out log/slurmd-nla.log

# (x4) The kernel prints a socket's name in /proc/net/unix as it is,
# newlines too: a local user's sockets add lines there that name the
# step's slurmstepd socket's inode with a name of the user's choosing.
# The site copy and log line still name nla: the name is asked of
# slurmstepd's own socket (docs/slurm.md, "Security"). The node's agent
# is stopped first, so that the step starts one: the forger's window.
plugstack report_dir=$T/site/reports site_log=$T/site/steps.jsonl
mkdir -p forger && chown nobody forger
j=$(($(last_job) + 1))
ap=$(agent_pid_of "$N" "$T/nla.sock")
[ -n "$ap" ] && kill "$ap"
for _ in $(seq 50); do [ -e "$T/nla.sock" ] || break; sleep 0.1; done
setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
	/usr/bin/python3 "$ROOT/tests/slurm/forge_unix.py" nla "$j.0" "$T/forger" EVIL >x4.forge 2>&1 &
fp=$!
# The forger watches before the step starts, and the step lasts long
# enough for its 300 binds on a busy machine (beside two CPU-bound jobs
# a 0.5 s step ended before a forger still starting had found it).
for _ in $(seq 100); do grep -q '^watching' x4.forge && break; sleep 0.1; done
srun -Q -n1 -w nla --numalot=monitor --numalot-report="$T/x4-%N.json" \
	"$W" --threads 1 --seconds 3 >x4.out 2>&1
check "(x4) the step exits 0" test $? -eq 0
check "(x4) the forger's lines were there while the step ran" grep -q '^forged' x4.forge
check "(x4) the site copy names nla, not the forger's name" \
	test -s "site/reports/numalot-$j.0.nla.json" -a ! -e "site/reports/numalot-$j.0.EVIL.json"
check "(x4) ...and so do the site log and the user's %N" \
	test "$(grep -c "\"job\":$j,.*\"node\":\"nla\"" site/steps.jsonl) $(ls x4-*.json)" = "1 x4-nla.json"
kill "$fp" 2>/dev/null
wait "$fp" 2>/dev/null

# (x5) A job's strings reach slurmd's log (root's) escaped: a report
# pattern holding a newline and a line of its own making (a step on two
# nodes logs its pattern) forges no line there.
plugstack
srun -Q -N2 -n2 --numalot=monitor \
	--numalot-report="$T/x5"$'\n''[2099-01-01T00:00:00.000] error: FORGED.json' true >x5.out 2>&1
check "(x5) the step exits 0" test $? -eq 0
check "(x5) no line of the job's making in slurmd's logs" \
	test "$(cat log/slurmd-nla.log log/slurmd-nlb.log | grep -c '^\[2099')" -eq 0
check "(x5) ...the pattern is there, escaped" \
	grep -qF 'x5\x0a[2099-01-01T00:00:00.000] error: FORGED.json' log/slurmd-nla.log

# (e) The option from the environment, and from #SBATCH lines (in jobs
# of nobody's: a job of root's takes its report from srun's command line
# only, test_slurm.sh (x9)).
plugstack
mkdir -p "$T/e" && chmod 777 "$T/e"
SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot=lbma \
	SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot_report="$T/e/e1.json" \
	srun -Q -n1 -w nla --uid=nobody --chdir="$T/e" "$W" --threads 1 --seconds 0.3 >e1.out 2>&1
check "(e) SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot=lbma works" \
	test "$(json e/e1.json "r['policy']['name']" 2>/dev/null)" = lbma
SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot=lbma \
	srun -Q -n1 -w nla --numalot=monitor --numalot-report="$T/e3.json" true >e3.out 2>&1
check "(e) ...the command line wins over it" \
	test "$(json e3.json "r['policy']['name']" 2>/dev/null)" = monitor
srun -Q -n1 -w nla --numalot=lbma --numalot=imar2 touch "$T/e4.ran" >e4.out 2>&1
check "(e) a repeated --numalot with two values is refused before the job" \
	test $? -ne 0 -a ! -e "$T/e4.ran"
check "(e) ...naming both" grep -q 'numalot: --numalot given twice, as "lbma" and "imar2": give it once' e4.out
srun --help >e5.out 2>&1
check "(e) srun --help: each numalot option's text starts with [numalot]" \
	test "$(grep -c '\[numalot\]' e5.out)" -ge 4
cat >e/e2.sh <<SH
#!/bin/bash
#SBATCH --numalot=imar2
#SBATCH --numalot-report=$T/e/e2-%j.%s.%N.json
srun -n1 $W --threads 1 --seconds 0.3
SH
chmod 755 e/e2.sh
sbatch -W -Q -N1 -w nlb --uid=nobody --chdir="$T/e" -o "$T/e/e2.out" e/e2.sh >/dev/null 2>&1
check "(e) #SBATCH --numalot=imar2: the job's steps use it" \
	test "$(json "$(ls e/e2-*.0.nlb.json 2>/dev/null | head -1)" "r['policy']['name']" 2>/dev/null)" = imar2
check "(e) ...and the batch step has no report" test -z "$(ls e/e2-*.batch.* 2>/dev/null)"

# (i) salloc's interactive step (LaunchParameters=use_interactive_step) is
# the user's shell, like the batch step: not managed; its sruns are.
mkdir -p i && cd i
# The commands are typed only once the shell has printed its prompt: srun
# --pty puts the terminal in raw mode with TCSAFLUSH, which discards
# whatever was typed ahead of it (on a fast machine, all of it).
# salloc starts the interactive step as `srun --pty $SHELL`: a CI job or
# a cron job may have no SHELL, and then srun has no command to run.
# The inner srun reads no terminal: by default it forwards its stdin to
# the task, and a typed-ahead "exit" went to the workload, leaving the
# shell waiting until the timeout (60 s of every run).
: >../i.out
{
	for _ in $(seq 300); do [ -s ../i.out ] && break; sleep 0.1; done
	sleep 0.5
	printf 'srun -Q -n1 %s --threads 1 --seconds 0.3 </dev/null; exit\n' "$W"
} | SHELL=/bin/sh timeout 60 script -q -c "salloc -Q -N1 -w nla --numalot=monitor" /dev/null >../i.out 2>&1
irc=${PIPESTATUS[1]}
cd ..
j=$(last_job)
# The shell's step ends with salloc: wait (bounded) until its slurmstepd
# has gone, so that none is left behind when the cluster stops.
for _ in $(seq 100); do
	[ -z "$(ls spool-nla/nla_"$j".* 2>/dev/null)" ] && break
	sleep 0.2
done
check "(i) salloc ends with the shell's exit, not at the timeout (status $irc)" test "$irc" -ne 124
check "(i) salloc: the srun step inside has its report" test -s "i/numalot-$j/0.nla.json"
check "(i) ...the interactive step none" test "$(ls "i/numalot-$j" 2>/dev/null | wc -l)" -eq 1
check "(i) ...and no agent took the shell" \
	test "$(grep -c "job $j step 4294967290" agent-nla.log 2>/dev/null)" -eq 0
check "(i) the interactive step's slurmstepd ended with salloc" \
	test -z "$(ls spool-nla/nla_"$j".* 2>/dev/null)"

[ $fails -eq 0 ] || { echo "salloc printed:"; cat -v i.out | tail -n 20; echo "slurmd logs:"; tail -n 5 log/slurmd-nla.log log/slurmd-nlb.log; }
[ $fails -eq 0 ]

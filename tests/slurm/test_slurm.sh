#!/usr/bin/env bash
# numalot with a real Slurm: a throw-away single-node cluster started here
# and stopped by PID whatever happens. Cases (a) to (h) of the Slurm issue;
# (f2) and (n): issue 26's items 2 and 3; (f3) and (x3): what a user may
# make root write (docs/slurm.md, "Security").
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
T=$(mktemp -d /tmp/numalot-slurm.XXXXXX)
chmod 755 "$T"
SOCK=$T/numalotd.sock
bg=()
finish() {
	kill "${bg[@]}" 2>/dev/null
	local ap
	ap=$(agent_pid)
	[ -n "$ap" ] && kill "$ap" 2>/dev/null
	cluster_stop
	[ "${KEEP:-0}" = 1 ] || rm -rf "$T"
}
trap finish EXIT
. tests/lib.sh
agent_pid() { agent_pid_of "$ROOT/$B/numalot" "$SOCK"; }
W="$ROOT/$B/numalot-workload"
AGENT=$(cluster_agent "$T" "$ROOT/$B/numalotd")
BASE="agent=$AGENT socket=$SOCK log=$T/agent.log topology=numa:2,core:1,pu:1 idle_exit=120"
plugstack() { echo "required $ROOT/$B/numalot.so $BASE $*" >"$T/plugstack.conf"; }

cluster_start "$T" "$ROOT/$B/numalot.so" $BASE || { echo "not ok - cluster did not start"; exit 1; }
cd "$T"

# (a) one step, lbma, four threads.
srun -Q --numalot=lbma --numalot-period=0.2 -n1 -c2 "$W" --threads 4 --seconds 2 >a.out 2>&1
check "(a) job exits 0" test $? -eq 0
ra=$(ls numalot-*/*.json 2>/dev/null | head -1)
check "(a) a report in the job's folder of the working directory" test -n "$ra"
if [ -n "$ra" ]; then
	check "(a) report: policy lbma" test "$(json "$ra" "r['policy']['name']")" = lbma
	check "(a) report: the 4 threads and main" test "$(json "$ra" "len(r['threads'])")" -eq 5
	check "(a) report: every thread measured" test "$(json "$ra" "min(t['periods'] for t in r['threads'])")" -ge 1
	check "(a) report: at least 2 periods" test "$(json "$ra" "r['summary']['periods']")" -ge 2
	check "(a) report: Slurm identity" test "$(json "$ra" "r['slurm']['step'], r['slurm']['tasks']")" = "0 1"
	# proctrack/linuxproc: no cgroup allocates the step's CPUs, so the
	# task's own binding is the limit (another job's CPUs stay out).
	check "(a) report: without a cgroup allocation the binding is the limit" \
		grep -q '"placement_limit": "its own CPU binding' "$ra"
fi
rm -rf numalot-*/
# The agent the plugin started keeps nothing of slurmstepd's place: its
# folder is /, its umask 022, its environment PATH alone.
ap=$(agent_pid)
check "(a) the agent runs in /" test "$(readlink "/proc/$ap/cwd" 2>/dev/null)" = /
check "(a) ...with umask 0022" grep -q "^Umask:[[:space:]]*0022" "/proc/$ap/status"
check "(a) ...and PATH its whole environment" \
	test "$(tr '\0' '\n' <"/proc/$ap/environ" | cut -d= -f1 | tr '\n' ' ')" = "PATH "

# (a4) --numalot-bindings=keep: the task's own binding is the limit.
srun -Q --numalot=lbma --numalot-bindings=keep --numalot-period=0.2 -n1 -c1 \
	--numalot-report="$T/a4.json" "$W" --threads 2 --seconds 1 >a4.out 2>&1
check "(a4) --numalot-bindings=keep: job exits 0" test $? -eq 0
check "(a4) the report says the bindings were kept" \
	grep -q "keep_bindings=1" "$T/a4.json"
srun -Q --numalot=lbma --numalot-bindings=maybe -n1 true >a4b.out 2>&1
check "(a4) a bad --numalot-bindings is refused" test $? -ne 0
check "(a4) ...naming it" grep -q "numalot-bindings wants keep or free" a4b.out

# (a2) a step of two tasks: one report holding both.
srun -Q --numalot=imar2 --numalot-period=0.2 -n2 -c1 --numalot-report="$T/a2.json" \
	"$W" --threads 2 --seconds 1.5 >a2.out 2>&1
check "(a2) a two-task step exits 0" test $? -eq 0
check "(a2) its report holds both tasks" test "$(json a2.json "len(r['processes']), r['slurm']['tasks']")" = "2 2"

# (a3) a job script that starts the program: the program is managed too,
# and is not born pinned by its waiting shell.
srun -Q --numalot=lbma --numalot-period=0.2 -n1 -c2 --numalot-report="$T/a3.json" \
	sh -c "sleep 0.5; grep Cpus_allowed_list /proc/self/status; '$W' --threads 2 --seconds 1.5" >a3.out 2>&1
check "(a3) the job exits 0" test $? -eq 0
check "(a3) the program the shell started is in the step's report" \
	test "$(json a3.json "sum(p['name'] == 'numalot-workloa' and p['threads'] == 3 for p in r['processes'])")" -eq 1
check "(a3) what the shell starts keeps the job's CPUs" \
	grep -q "Cpus_allowed_list:[[:space:]]*0-1" a3.out

# (b) two jobs at once on disjoint CPUs: two reports, one agent, and no
# thread ever outside its job's CPUs (watched from outside). With the two
# CPUs described as two nodes, each policy keeps proposing the other node:
# only the allowed-set rule keeps the threads on their job's CPU.
srun -Q --numalot=imar2 --numalot-period=0.2 -n1 -c1 --numalot-report="$T/b1.json" \
	"$W" --threads 3 --seconds 3.1 >b1.out 2>&1 &
j1=$!
srun -Q --numalot=lbma --numalot-period=0.2 -n1 -c1 --numalot-report="$T/b2.json" \
	"$W" --threads 3 --seconds 3.2 >b2.out 2>&1 &
j2=$!
bg+=($j1 $j2)
: >b.aff
agents=0
# Watch the two known programs only (found by their own command lines,
# one pgrep each until seen), reading their threads' status files with
# the shell's own read: cheap and bounded on a busy machine.
w1="" w2=""
while kill -0 $j1 2>/dev/null || kill -0 $j2 2>/dev/null; do
	[ -n "$w1" ] || w1=$(pgrep -f -n -- "^$W --threads 3 --seconds 3\.1" || true)
	[ -n "$w2" ] || w2=$(pgrep -f -n -- "^$W --threads 3 --seconds 3\.2" || true)
	for p in $w1 $w2; do
		thread_cpus "$p" | while read -r _ v; do echo "$p $v"; done
	done >>b.aff
	n=$(pgrep -fc "numalotd --socket=$SOCK" 2>/dev/null || true)
	[ "${n:-0}" -gt "$agents" ] && agents=$n
	sleep 0.1
done
wait $j1; r1=$?
wait $j2; r2=$?
check "(b) both jobs exit 0" test "$r1$r2" = 00
check "(b) two reports" test -s b1.json -a -s b2.json
check "(b) one agent process on the node" test "$agents" -eq 1
# Every CPU each job's threads were ever allowed, per process.
sets=$(awk '$2 != "" {a[$1] = a[$1] " " $2} END {for (p in a) print a[p]}' b.aff |
	while read -r line; do echo "$line" | tr ' ' '\n' | sort -u | paste -sd, -; done | sort)
check "(b) watched both jobs' threads" test "$(echo "$sets" | grep -c .)" -eq 2
check "(b) each job's threads stayed on its own single CPU" \
	test "$(echo "$sets" | grep -c '^[0-9]*$')" -eq 2
check "(b) the two jobs had different CPUs" test "$(echo "$sets" | sort -u | grep -c .)" -eq 2
if [ -s b1.json ] && [ -s b2.json ]; then
	check "(b) the reports name their policies" \
		test "$(json b1.json "r['policy']['name']") $(json b2.json "r['policy']['name']")" = "imar2 lbma"
fi

# (c) sbatch with two concurrent srun --exact steps: one domain for the
# job, a report per step.
cat >c.sh <<SH
#!/bin/bash
srun --exact -n1 -c1 --numalot=lbma --numalot-period=0.2 --numalot-report=$T/c-%j.%s.json $W --threads 2 --seconds 3 &
sleep 0.5
srun --exact -n1 -c1 --numalot=lbma --numalot-period=0.2 --numalot-report=$T/c-%j.%s.json $W --threads 2 --seconds 2 &
wait
SH
sbatch -W -Q -n2 -c1 -o c.out c.sh >/dev/null 2>&1
check "(c) batch job exits 0" test $? -eq 0
check "(c) a report for each of the two steps" test "$(ls c-*.0.json c-*.1.json 2>/dev/null | wc -l)" -eq 2
check "(c) no report for the batch step itself" test "$(ls -d numalot-* 2>/dev/null | wc -l)" -eq 0
c0=$(ls c-*.0.json 2>/dev/null | head -1)
c1=$(ls c-*.1.json 2>/dev/null | head -1)
if [ -n "$c0" ] && [ -n "$c1" ]; then
	check "(c) the job's two steps share one migration domain" \
		grep -q "step [01] (uid 0): joins the job's lbma domain" agent.log
	check "(c) ...yet each report holds only its own step's task" \
		test "$(json "$c0" "len(r['processes']), r['slurm']['step']") $(json "$c1" "len(r['processes']), r['slurm']['step']")" = "1 0 1 1"
	check "(c) ...and only its own threads" \
		test "$(json "$c0" "len(r['threads'])")" -eq 3 -a "$(json "$c1" "len(r['threads'])")" -eq 3
fi

# The agent the plugin started raised its own priority (its periods on
# time when jobs oversubscribe the CPUs), or says why not.
check "(c) the agent says at which nice it runs" \
	grep -Eq "runs at nice -?[0-9]+|cannot set its own priority" agent.log
if [ "$(cut -d' ' -f19 /proc/self/stat)" -ge -10 ] && can_raise_nice -10; then
	check "(c) ...nice -10" grep -q "runs at nice -10" agent.log
fi

# (d) a bad value fails srun before any task runs, listing the policies.
srun -Q --numalot=bogus touch "$T/d.ran" >d.out 2>&1
check "(d) srun fails on --numalot=bogus" test $? -ne 0
check "(d) no task ran" test ! -e "$T/d.ran"
check "(d) the message lists the policies" grep -q "imar2, lbma, monitor, off" d.out

# More of (d): help, srun --help, sbatch.
srun --numalot=help >dh.out 2>&1
check "(d) --numalot=help exits 0" test $? -eq 0
check "(d) ...and lists the policies and the site's limits" grep -q "This cluster: allowed imar2, lbma, monitor, off" dh.out
srun --help 2>&1 | grep -q -- "--numalot=POLICY"
check "(d) srun --help shows --numalot" test $? -eq 0
sbatch -Q --numalot=bogus --wrap="touch $T/d2.ran" >d2.out 2>&1
check "(d) sbatch fails on --numalot=bogus" test $? -ne 0
check "(d) ...with the policies listed" grep -q "imar2, lbma, monitor, off" d2.out

# (e) the agent killed mid-step: the step finishes; the loss is reported;
# the next step starts a new agent.
srun -Q --numalot=lbma --numalot-period=0.2 -n1 -c2 --numalot-report="$T/e.json" \
	"$W" --threads 2 --seconds 4 >e.out 2>&1 &
je=$!
bg+=($je)
killed=""
for _ in $(seq 50); do
	if "$ROOT/$B/numalot" status --socket="$SOCK" 2>/dev/null | grep -q '^[0-9]'; then
		killed=$(agent_pid)
		[ -n "$killed" ] && kill -9 "$killed"
		break
	fi
	sleep 0.1
done
wait $je
check "(e) the step completes with exit 0 after SIGKILL of the agent" test $? -eq 0 -a -n "$killed"
check "(e) its report says the agent was lost" grep -q "agent was lost" e.json
check "(e) so does Slurm's log" grep -q "agent was lost" log/slurmd.log
srun -Q --numalot=monitor --numalot-period=0.2 -n1 --numalot-report="$T/e2.json" \
	"$W" --threads 2 --seconds 1 >e2.out 2>&1
new=$(agent_pid)
check "(e) the next step started a new agent" test -n "$new" -a "$new" != "$killed"
check "(e) ...and got a full report" test "$(json e2.json "r['policy']['name']")" = monitor

# (f) a job of nobody's: the report is nobody's; nobody cannot register
# root's processes through the socket.
mkdir -p "$T/nobody" && chmod 777 "$T/nobody"
(cd "$T/nobody" && srun -Q --uid=nobody --numalot=lbma --numalot-period=0.2 -n1 \
	"$W" --threads 2 --seconds 1 >/dev/null 2>&1)
check "(f) nobody's job exits 0" test $? -eq 0
rf=$(ls "$T"/nobody/numalot-*/*.json 2>/dev/null | head -1)
check "(f) its report is owned by nobody" test -n "$rf" -a "$(stat -c %U "$rf" 2>/dev/null)" = nobody
check "(f) ...and so is the job's folder" test "$(stat -c %U "$(dirname "${rf:-/}")")" = nobody
sleep 60 &
rootpid=$!
bg+=($rootpid)
nuid=$(id -u nobody)
su nobody -s /bin/sh -c "'$ROOT/$B/numalot' request --socket='$SOCK' \
	'{\"v\":1,\"op\":\"register\",\"job\":99,\"step\":0,\"uid\":$nuid,\"pid\":$rootpid,\"policy\":\"lbma\",\"cpus\":\"0\"}'" >f.out 2>&1
check "(f) nobody registering a root-owned PID is refused" grep -q '"permission"' f.out
su nobody -s /bin/sh -c "'$ROOT/$B/numalot' request --socket='$SOCK' \
	'{\"v\":1,\"op\":\"register\",\"job\":99,\"step\":0,\"uid\":0,\"pid\":$rootpid,\"policy\":\"lbma\",\"cpus\":\"0\"}'" >f2.out 2>&1
check "(f) nobody registering as root is refused" grep -q '"permission"' f2.out
kill $rootpid
# (f2) a report nobody may not write (a folder of root's): srun fails
# before the program runs, saying so once; the step's end does not try
# again (issue 26, item 2).
mkdir -p "$T/rootonly" && chmod 755 "$T/rootonly"
(cd "$T/nobody" && srun -Q --uid=nobody --numalot=monitor -n1 \
	--numalot-report="$T/rootonly/%j.json" touch "$T/nobody/f2.ran" >"$T/f2.out" 2>&1)
rc=$?
check "(f2) a report nobody cannot write: srun fails ($rc)" test $rc -ne 0
check "(f2) ...before the program ran" test ! -e "$T/nobody/f2.ran"
check "(f2) ...saying which file and why" \
	grep -q "numalot: cannot write report $T/rootonly/[0-9]*.json: Permission denied; the program was not started" f2.out
check "(f2) ...once" test "$(grep -c 'cannot write' f2.out)" -eq 1
# ...the same with the plugin optional, as sites load it: Slurm goes on
# past an optional plugin's failing hook, so the task stops itself.
echo "optional $ROOT/$B/numalot.so $BASE" >"$T/plugstack.conf"
(cd "$T/nobody" && srun -Q --uid=nobody --numalot=monitor -n1 \
	--numalot-report="$T/rootonly/%j.json" touch "$T/nobody/f2b.ran" >"$T/f2b.out" 2>&1)
check "(f2) ...and so with the plugin optional" test $? -ne 0 -a ! -e "$T/nobody/f2b.ran"
plugstack

# (f3) What the early check saw is not what the report trusts: nobody's
# program turns the report's folder into a link to root's folder, and
# the report's name into a link to root's file, after the check. The
# report is written as nobody, never through either (docs/slurm.md,
# "Security").
echo precious >"$T/rootonly/precious" && chmod 644 "$T/rootonly/precious"
mkdir -p "$T/nobody/f3" && chown nobody "$T/nobody/f3"
printf '#!/bin/sh\nrm -rf %s/f3 && ln -s %s %s/f3\nln -s %s %s/f3b.json\n' \
	"$T/nobody" "$T/rootonly" "$T/nobody" "$T/rootonly/precious" "$T/nobody" >"$T/nobody/f3.sh"
chmod 755 "$T/nobody/f3.sh"
(cd "$T/nobody" && srun -Q --uid=nobody --numalot=monitor -n1 \
	--numalot-report="$T/nobody/f3/r.json" "$T/nobody/f3.sh" >"$T/f3.out" 2>&1)
check "(f3) the step whose report folder became a link exits 0" test $? -eq 0
check "(f3) ...nothing written in root's folder through it" \
	test "$(ls "$T/rootonly")" = precious
check "(f3) ...and srun says why" grep -q "cannot write the report $T/nobody/f3/r.json: Permission denied" "$T/f3.out"
rm -f "$T/nobody/f3b.json"
(cd "$T/nobody" && srun -Q --uid=nobody --numalot=monitor -n1 \
	--numalot-report="$T/nobody/f3b.json" "$T/nobody/f3.sh" >"$T/f3b.out" 2>&1)
check "(f3) a report name that became a link to root's file: root's file untouched" \
	test "$(cat "$T/rootonly/precious")" = precious -a -L "$T/nobody/f3b.json"
check "(f3) ...and srun says why" grep -q "cannot write the report $T/nobody/f3b.json: a file there is not yours" "$T/f3b.out"
rm -f "$T/rootonly/precious"

# (x3) The agent's socket and log in a shared sticky folder (as /tmp),
# where a user put links to root's folder first: root makes no lock, log
# or folder through them; the step runs without numalot (socket) or the
# agent logs to syslog (log), and the step's log says why.
mkdir -p "$T/sticky" && chmod 1777 "$T/sticky"
su nobody -s /bin/sh -c "ln -s '$T/rootonly' '$T/sticky/run'; ln -s '$T/rootonly' '$T/sticky/logs'"
plugstack socket=$T/sticky/run/numalotd.sock log=$T/sticky/logs/agent.log
srun -Q --numalot=monitor -n1 --numalot-report="$T/x3.json" true >x3.out 2>&1
check "(x3) a socket folder that is a user's link: the step exits 0" test $? -eq 0
check "(x3) ...no lock, log or socket made in root's folder" test -z "$(ls "$T/rootonly")"
check "(x3) ...and the report says why" grep -q "is a symbolic link of uid $(id -u nobody)" x3.json
plugstack socket=$T/x3run/numalotd.sock log=$T/sticky/logs/agent.log
srun -Q --numalot=monitor -n1 --numalot-report="$T/x3b.json" true >x3b.out 2>&1
check "(x3) a log that is a user's link: the step exits 0, managed" \
	test "$(json x3b.json "len(r['processes']) == 1 and 'error' not in r" 2>/dev/null)" = True
check "(x3) ...nothing written in root's folder" test -z "$(ls "$T/rootonly")"
check "(x3) ...and the step's log says why" \
	grep -q "the agent's log $T/sticky/logs/agent.log: $T/sticky/logs is a symbolic link of uid $(id -u nobody); it logs to syslog instead" log/slurmd.log
ap=$(agent_pid_of "$ROOT/$B/numalot" "$T/x3run/numalotd.sock")
[ -n "$ap" ] && kill "$ap"
plugstack

# (x7) A job of root's has its report written by root: a user's link in
# the shared sticky folder where its report goes (as numalot-JOB in /tmp)
# gets no report written through it; named with --numalot-report, the
# program does not run, and srun says why (docs/slurm.md, "Security").
su nobody -s /bin/sh -c "ln -s '$T/rootonly' '$T/sticky/x7'"
srun -Q --numalot=monitor -n1 --numalot-report="$T/sticky/x7/r.json" touch "$T/x7.ran" >x7.out 2>&1
check "(x7) root's job, its report through a user's link: refused before the program" \
	test $? -ne 0 -a ! -e "$T/x7.ran"
check "(x7) ...nothing in root's folder" test -z "$(ls "$T/rootonly")"
check "(x7) ...and srun says why" \
	grep -q "cannot write report $T/sticky/x7/r.json: $T/sticky/x7 is a symbolic link of uid $(id -u nobody) (a job of root's" x7.out

# (x8) A job of root's whose --numalot-report names a file of root's that
# is not a report (the path may come from a user's environment root ran
# srun in: sudo -E): the program does not run, the file stays as it was.
printf '{"root": true}\n' >"$T/rootonly/conf.json"
srun -Q --numalot=monitor -n1 --numalot-report="$T/rootonly/conf.json" touch "$T/x8.ran" >x8.out 2>&1
check "(x8) root's job, its report over a file of root's: refused before the program" \
	test $? -ne 0 -a ! -e "$T/x8.ran"
check "(x8) ...the file unchanged" grep -qx '{"root": true}' "$T/rootonly/conf.json"
check "(x8) ...and srun says why" grep -q "is not a numalot report" x8.out
rm -f "$T/rootonly/conf.json"
srun -Q --numalot=monitor -n1 --numalot-report="$T/rootonly/passwd" touch "$T/x8.ran" >x8b.out 2>&1
check "(x8) root's report named otherwise than *.json: refused before the program" \
	test $? -ne 0 -a ! -e "$T/x8.ran" -a ! -e "$T/rootonly/passwd"
check "(x8) ...and srun says why" grep -q "only to a name ending in .json" x8b.out
# (x9) A --numalot-report that reaches root's srun from the environment
# (a user's, kept by sudo -E), even with the plugin's own mark forged:
# root makes no file there; the job runs as if none had been given. On
# srun's command line it is root's own, and written.
E=SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot_report
env "$E=$T/rootonly/nologin" NUMALOT_REPORT_GIVEN="$T/rootonly/nologin" \
	srun -Q -n1 touch "$T/x9.ran" >x9.out 2>&1
check "(x9) root's job, a report named by the environment: the job runs" \
	test $? -eq 0 -a -e "$T/x9.ran"
check "(x9) ...no file made there" test ! -e "$T/rootonly/nologin"
check "(x9) ...and srun says why" grep -q "comes from the environment" x9.out
env "$E=$T/rootonly/nologin" srun -Q -n1 --numalot-report="$T/x9.json" true >x9b.out 2>&1
check "(x9) ...on the command line it wins: root's report written" \
	test -s "$T/x9.json" -a ! -e "$T/rootonly/nologin"
# ...nor the mark carried in an export list srun reads (SLURM_EXPORT_ENV):
# root's srun is refused.
env SLURM_EXPORT_ENV="ALL,NUMALOT_REPORT_GIVEN=$T/rootonly/e.json,_SLURM_SPANK_OPTION_numalot_numalot_report=$T/rootonly/e.json" \
	"$E=$T/rootonly/e.json" srun -Q -n1 touch "$T/x9c.ran" >x9c.out 2>&1
check "(x9) the mark smuggled in SLURM_EXPORT_ENV: refused, no file made" \
	test $? -ne 0 -a ! -e "$T/x9c.ran" -a ! -e "$T/rootonly/e.json"
check "(x9) ...and srun says why" grep -q "carries NUMALOT_REPORT_GIVEN in SLURM_EXPORT_ENV" x9c.out

# (x6) agent= a program a user could replace (their file, or root's in
# their folder): root never runs it; the step runs without numalot and
# says why (docs/slurm.md, "Security").
mkdir -p "$T/rbin" "$T/ubin" && chown nobody "$T/ubin"
printf '#!/bin/sh\ntouch %s/rootonly/ran-as-root\nexec %s "$@"\n' "$T" "$ROOT/$B/numalotd" >"$T/rbin/numalotd"
chmod 755 "$T/rbin/numalotd" && chown nobody "$T/rbin/numalotd"
plugstack agent=$T/rbin/numalotd socket=$T/x6run/numalotd.sock
srun -Q --numalot=monitor -n1 --numalot-report="$T/x6.json" true >x6.out 2>&1
check "(x6) an agent that is a user's file: the step exits 0" test $? -eq 0
check "(x6) ...root did not run it" test ! -e "$T/rootonly/ran-as-root"
check "(x6) ...and the report says why" grep -q "numalotd is uid $(id -u nobody)'s, mode 0755" x6.json
cp -p "$T/rbin/numalotd" "$T/ubin/numalotd" && chown root "$T/ubin/numalotd"
plugstack agent=$T/ubin/numalotd socket=$T/x6run/numalotd.sock
srun -Q --numalot=monitor -n1 --numalot-report="$T/x6b.json" true >x6b.out 2>&1
check "(x6) root's agent in a user's folder: not run either" \
	test ! -e "$T/rootonly/ran-as-root"
check "(x6) ...and the report says why" grep -q "$T/ubin belongs to uid $(id -u nobody)" x6b.json
ap=$(agent_pid_of "$ROOT/$B/numalot" "$T/x6run/numalotd.sock")
[ -n "$ap" ] && kill "$ap"
rm -f "$T/rootonly/ran-as-root"
plugstack

# (g) no option, or off: no agent contact, no report.
before=$(grep -c "task pid" agent.log)
srun -Q -n1 "$W" --threads 2 --seconds 0.5 >/dev/null 2>&1
check "(g) no option: job exits 0" test $? -eq 0
srun -Q --numalot=off -n1 "$W" --threads 2 --seconds 0.5 >/dev/null 2>&1
check "(g) off: job exits 0" test $? -eq 0
check "(g) no task registered with the agent" test "$(grep -c "task pid" agent.log)" -eq "$before"
check "(g) no report written" test "$(ls -d numalot-* 2>/dev/null | wc -l)" -eq 0
# (n) --numalot-report alone, the site's default off: the step is
# watched (monitor) and the report written (issue 26, item 3).
srun -Q -n1 --numalot-report="$T/n.json" sleep 1 >n.out 2>&1
check "(n) --numalot-report alone: the job exits 0" test $? -eq 0
check "(n) ...its report, policy monitor" test "$(json n.json "r['policy']['name']" 2>/dev/null)" = monitor
check "(n) ...and srun says so" grep -q "numalot watches the step (--numalot=monitor)" n.out

# (g2) an agent that cannot be started: the job runs as if numalot were
# off; the report and the log say why.
plugstack agent=/nonexistent/numalotd socket=$T/other.sock
srun -Q --numalot=lbma -n1 --numalot-report="$T/g2.json" "$W" --threads 2 --seconds 0.5 >g2.out 2>&1
check "(g2) no agent: the job exits 0" test $? -eq 0
check "(g2) the report says why" grep -q "cannot be run" g2.json
check "(g2) so does the step's log" grep -q "runs on without numalot" log/slurmd.log

# (h) site policy: force= overrides the user, allow= rejects.
plugstack force=monitor
srun -Q --numalot=lbma --numalot-period=0.2 -n1 --numalot-report="$T/h.json" \
	"$W" --threads 2 --seconds 1 >h.out 2>&1
check "(h) force=monitor: the job runs" test $? -eq 0
check "(h) force=monitor overrides --numalot=lbma" test "$(json h.json "r['policy']['name']")" = monitor
check "(h) the user is told" grep -q "forces --numalot=monitor" h.out
plugstack allow=imar2,monitor
srun -Q --numalot=lbma true >h2.out 2>&1
check "(h) allow= rejects lbma" test $? -ne 0
check "(h) ...with a clear message" grep -q 'policy "lbma" is not allowed on this cluster (allowed: imar2, monitor, off)' h2.out
plugstack allow=imar2,lbma
srun -Q -n1 --numalot-report="$T/n2.json" touch "$T/n2.ran" >n2.out 2>&1
check "(n) --numalot-report alone where monitor is not allowed: refused" test $? -ne 0 -a ! -e "$T/n2.ran"
check "(n) ...saying why and what is allowed" \
	grep -q "numalot-report needs numalot on for the step; alone it asks for monitor, which this cluster does not allow (allowed: imar2, lbma, off): add --numalot=POLICY" n2.out
echo "optional $ROOT/$B/numalot.so $BASE allow=imar2,lbma" >"$T/plugstack.conf"
srun -Q -n1 --numalot-report="$T/n3.json" touch "$T/n3.ran" >n3.out 2>&1
check "(n) ...and so with the plugin optional" test $? -ne 0 -a ! -e "$T/n3.ran"
plugstack bogus_key=1 period=abc
srun -Q -n1 true >h3.out 2>&1
check "(h) a bad plugstack argument does not stop jobs" test $? -eq 0
check "(h) ...and is logged by name in slurmd's log" grep -q 'invalid option "bogus_key=1"' log/slurmd.log
check "(h) ...while srun says one line" \
	test "$(grep -c 'numalot: ' h3.out) $(grep -c 'numalot is misconfigured on this cluster' h3.out)" = "1 1"
# (h2) A typo in allow= or force= fails closed: every policy but off is
# refused, in one line for the user (issue 23, finding 8).
plugstack allow=monitor,imar3 force=monitr
srun -Q -n1 --numalot=lbma touch "$T/h4.ran" >h4.out 2>&1
check "(h2) a typo in allow=/force=: --numalot=lbma is refused" test $? -ne 0 -a ! -e "$T/h4.ran"
check "(h2) ...in one line saying numalot is misconfigured" \
	test "$(grep -c 'numalot: ' h4.out) $(grep -c 'misconfigured on this cluster.*only --numalot=off' h4.out)" = "1 1"
srun -Q -n1 --numalot=off true >h6.out 2>&1
check "(h2) ...--numalot=off still runs" test $? -eq 0
check "(h2) slurmd's log names the bad arguments" \
	grep -q 'invalid value in "allow=monitor,imar3".*invalid value in "force=monitr"' log/slurmd.log

# (h3) The site's file (numalot.conf; config= names it here): its allow=
# holds in srun, the plugstack line wins over it, its report_dir= gets the
# site's copy, and one others may write fails closed (issue 26, item 4).
printf '# the site\nallow=imar2,monitor\nreport_dir=%s\n' "$T/site3" >"$T/site.conf"
plugstack config=$T/site.conf
srun -Q -n1 --numalot=lbma touch "$T/h7.ran" >h7.out 2>&1
check "(h3) the site file's allow=: --numalot=lbma refused before the job" test $? -ne 0 -a ! -e "$T/h7.ran"
check "(h3) ...saying what it allows" grep -q 'policy "lbma" is not allowed on this cluster (allowed: imar2, monitor, off)' h7.out
srun -Q -n1 --numalot=monitor --numalot-period=0.2 "$W" --threads 2 --seconds 0.5 >h8.out 2>&1
j=$(squeue -h -t all -o %i 2>/dev/null | sort -n | tail -1)
check "(h3) ...its report_dir= gets the step's site copy" test -s "$(ls "$T"/site3/numalot-"$j".0.*.json 2>/dev/null | head -1)"
plugstack config=$T/site.conf allow=imar2,lbma
srun -Q -n1 --numalot=lbma touch "$T/h9.ran" >h9.out 2>&1
check "(h3) the plugstack line's allow= wins over the file's" test $? -eq 0 -a -e "$T/h9.ran"
chmod 666 "$T/site.conf"
plugstack config=$T/site.conf
srun -Q -n1 --numalot=monitor touch "$T/h10.ran" >h10.out 2>&1
check "(h3) a site file others may write: refused, numalot misconfigured" \
	sh -c "test ! -e '$T/h10.ran' && grep -q 'misconfigured on this cluster.*only --numalot=off' h10.out"
srun -Q -n1 true >h11.out 2>&1
check "(h3) ...a step without numalot runs, and slurmd's log says why" grep -q "site.conf is not used: it must be root's and writable by root alone" log/slurmd.log
plugstack

# (h4) A service's agent (a socket systemd-socket-activate holds, as
# numalotd.socket does): it serves the step, and plugstack.conf's allow=,
# which that agent does not read, is told in slurmd's log.
if command -v systemd-socket-activate >/dev/null; then
	printf 'allow=imar2,monitor\n' >"$T/svc.conf"
	systemd-socket-activate -l "$T/svc.sock" -- "$ROOT/$B/numalotd" --idle-exit=0 \
		--config="$T/svc.conf" --socket="$T/svc.sock" --topology="numa:2 core:1 pu:1" \
		>/dev/null 2>"$T/svc.log" &
	bg+=($!)
	for _ in $(seq 100); do [ -S "$T/svc.sock" ] && break; sleep 0.05; done
	echo "required $ROOT/$B/numalot.so agent=$AGENT socket=$T/svc.sock topology=numa:2,core:1,pu:1 allow=imar2,monitor" >"$T/plugstack.conf"
	srun -Q -n1 --numalot=monitor --numalot-period=0.2 --numalot-report="$T/h12.json" \
		"$W" --threads 2 --seconds 1 >h12.out 2>&1
	check "(h4) a service's agent serves the step" \
		sh -c "grep -q 'passed by systemd' '$T/svc.log' && grep -q 'step 0 (uid 0): monitor' '$T/svc.log' && test \"\$(python3 -c \"import json; print(json.load(open('$T/h12.json'))['policy']['name'])\")\" = monitor"
	check "(h4) ...and slurmd's log says the plugstack line's allow= does not reach it" \
		grep -q "plugstack.conf sets .*allow=, which the service's agent at $T/svc.sock does not read" log/slurmd.log
	plugstack
else
	echo "skip: (h4) systemd-socket-activate is not installed"
fi

# (i) issue 14 case 6: the agent stopped (SIGTERM) mid-step hands the
# step's report to its user and the site; the plugin never replaces a
# report with data by its "agent lost" stub.
mkdir -p "$T/site" && chmod 755 "$T/site"
plugstack report_dir=$T/site
ap=$(agent_pid)
[ -n "$ap" ] && kill "$ap" && sleep 0.3
srun -Q --numalot=lbma --numalot-period=0.2 -n1 -c2 --numalot-report="$T/i.json" \
	"$W" --threads 3 --seconds 4 >i.out 2>&1 &
ji=$!
bg+=($ji)
stopped=""
for _ in $(seq 100); do
	if "$ROOT/$B/numalot" status --socket="$SOCK" 2>/dev/null | grep -q '^[0-9]'; then
		sleep 0.6
		stopped=$(agent_pid)
		[ -n "$stopped" ] && kill -TERM "$stopped"
		break
	fi
	sleep 0.1
done
wait $ji
check "(i) the step completes after SIGTERM of the agent" test $? -eq 0 -a -n "$stopped"
check "(i) the user's report keeps the agent's data" \
	test "$(json i.json "len(r['threads']) >= 4 and 'stopped' in r['error']")" = True
si=$(ls "$T"/site/numalot-*.json 2>/dev/null | head -1)
check "(i) so does the site copy" test -n "$si" -a "$(json "${si:-/dev/null}" "'threads' in r")" = True

# (j) issue 14 case 10: a stopped agent costs a step at most wait= (1 s),
# and the report and srun's stderr say why.
plugstack wait=1
srun -Q --numalot=monitor -n1 true >/dev/null 2>&1 # an agent up
ap=$(agent_pid)
kill -STOP "$ap"
t0=$(date +%s%N)
srun -Q --numalot=lbma -n1 --numalot-report="$T/j.json" "$W" --threads 1 --seconds 0.2 >j.out 2>j.err
rc=$?
t1=$(date +%s%N)
kill -CONT "$ap"
ms=$(((t1 - t0) / 1000000))
check "(j) a stopped agent: the job exits 0" test $rc -eq 0
check "(j) ...within 4 s ($ms ms; 11 s before)" test "$ms" -lt 4000
check "(j) ...the report says why" grep -q "does not answer" j.json
check "(j) ...and so does srun's stderr" grep -q "numalot: .*does not answer" j.err
kill "$ap"
sleep 0.3
plugstack agent=$T socket=$T/k.sock
t0=$(date +%s%N)
srun -Q --numalot=lbma -n1 --numalot-report="$T/k.json" true >k.out 2>k.err
t1=$(date +%s%N)
check "(j) agent= naming a folder: refused at once ($(((t1 - t0) / 1000000)) ms)" \
	test $(((t1 - t0) / 1000000)) -lt 4000
check "(j) ...the report says why" grep -q "not a regular file" k.json
plugstack topology=garbage socket=$T/k2.sock
t0=$(date +%s%N)
srun -Q --numalot=lbma -n1 --numalot-report="$T/k2.json" true >k2.out 2>k2.err
t1=$(date +%s%N)
check "(j) topology=garbage: fast ($(((t1 - t0) / 1000000)) ms)" test $(((t1 - t0) / 1000000)) -lt 4000
check "(j) ...and the report gives the agent's reason" grep -q "synthetic" k2.json

# (l) issue 14 case 8: with force=monitor, a job id a user registered
# over the socket beforehand does not give her srun her own policy.
plugstack force=monitor
srun -Q --numalot=monitor -n1 true >/dev/null 2>&1 # agent up, next job id
next=$(($(squeue -h -o %i -t all 2>/dev/null | sort -n | tail -1) + 0))
last=$(scontrol show job 2>/dev/null | sed -n 's/^JobId=\([0-9]*\).*/\1/p' | sort -n | tail -1)
next=$((${last:-$next} + 1))
su nobody -s /bin/sh -c "sleep 20 >/dev/null 2>&1 & echo \$! >'$T/nobody/pre.pid'" &
bg+=($!)
for _ in $(seq 50); do [ -s "$T/nobody/pre.pid" ] && break; sleep 0.05; done
npre=$(cat "$T/nobody/pre.pid")
for j in $next $((next + 1)) $((next + 2)); do
	su nobody -s /bin/sh -c "'$ROOT/$B/numalot' request --socket='$SOCK' \
		'{\"v\":1,\"op\":\"register\",\"job\":$j,\"step\":0,\"uid\":$nuid,\"pid\":$npre,\"policy\":\"lbma\",\"cpus\":\"0\",\"params\":{\"max_migrations\":\"1000000\"}}'" >/dev/null 2>&1
	npre=$(su nobody -s /bin/sh -c "sleep 20 >/dev/null 2>&1 & echo \$!") # another pid for the next
done
(cd "$T/nobody" && srun -Q --uid=nobody --numalot=lbma --numalot-period=0.2 -n1 \
	--numalot-report="$T/nobody/l.json" "$W" --threads 2 --seconds 1 >/dev/null 2>&1)
check "(l) the pre-registered job runs under the forced policy" \
	test "$(json "$T/nobody/l.json" "r['policy']['name']")" = monitor

# (m) One user's churn (issue 23, finding 2): nobody's step starts 1,800
# short processes while root's step runs beside it; both reports come
# back whole, the churn's with at most 1,000 ended children listed and
# the rest counted.
plugstack
mkdir -p "$T/churn" && chmod 777 "$T/churn"
(cd "$T/churn" && srun -Q --uid=nobody --numalot=monitor --numalot-period=0.1 -n1 \
	--numalot-report="$T/churn/m1.json" bash -c 'for i in $(seq 60); do for k in $(seq 30); do /bin/sleep 0.15 & done; wait; done' >m1.out 2>&1) &
mp=$!
sleep 2
srun -Q --numalot=monitor --numalot-period=0.2 -n1 --numalot-report="$T/m2.json" \
	"$W" --threads 2 --seconds 3 >m2.out 2>&1
check "(m) root's step beside the churn exits 0" test $? -eq 0
check "(m) ...its report is whole (its process, its periods, no error)" \
	test "$(json "$T/m2.json" "len(r['processes']) == 1 and r['summary']['periods'] >= 5 and 'error' not in r")" = True
wait $mp
check "(m) the churning step exits 0" test $? -eq 0
check "(m) ...its report came back, bounded: at most 1,000 ended children listed" \
	test "$(json "$T/churn/m1.json" "r.get('error', sum('completion_s' in p for p in r['processes']) <= 1001)")" = True
check "(m) ...the rest counted as forgotten" \
	test "$(json "$T/churn/m1.json" "r['summary']['processes_dropped']")" -gt 0

# (ev) numalot eval --srun inside an allocation: each process a step with
# --numalot= the system's policy (off for linux) and numactl's binding;
# monitor's steps get the plugin's reports (docs/evaluation.md, "On your
# own nodes").
plugstack
mkdir -p "$T/ev" && cd "$T/ev"
salloc -Q -N1 "$ROOT/$B/numalot" eval --srun --reps=1 --kernels=cg,ep \
	--size=small --iterations=2 --threads=1 --workload="$W" --no-warmup \
	--systems=linux,monitor --json="$T/ev/e.json" >ev.out 2>&1
check "(ev) eval --srun in salloc exits 0" test $? -eq 0
check "(ev) ...every run done and ok, placed by numactl under srun" python3 -c "
import json; r = json.load(open('$T/ev/e.json'))
assert r['srun'] and r['placement'] == 'numactl' and r['complete']
assert sorted(x['system'] for x in r['runs'] if x['ok']) == ['linux', 'monitor'], r['runs']"
check "(ev) ...the monitor steps' reports (two), none for linux's (off)" \
	test "$(ls numalot-*/*.json 2>/dev/null | wc -l)" -eq 2
cd "$T"

[ $fails -eq 0 ] || { echo "agent log:"; tail -20 agent.log; }
[ $fails -eq 0 ]

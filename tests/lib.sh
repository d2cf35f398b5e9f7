# numalot's shell tests: what every test script shares. Source it after
# setting T (a scratch folder) and N (the numalot binary).

fails=0
ok() { echo "ok - $1"; }
bad() { echo "not ok - $1"; fails=$((fails + 1)); }
# check DESCRIPTION COMMAND...: the command must succeed.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
# expect_usage_error DESCRIPTION TEXT ARGS...: numalot ARGS exits 2 and its
# error output holds TEXT.
expect_usage_error() {
	local what=$1 text=$2
	shift 2
	"$N" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$text" "$T/err"; then
		ok "$what"
	else
		bad "$what (status $rc, stderr: $(cat "$T/err"))"
	fi
}
# json FILE EXPRESSION: print a Python expression of the JSON in FILE (r).
json() { python3 -c "import json,sys; r=json.load(open('$1')); print($2)"; }
# pinned_threads PID: how many threads of PID are bound to a single CPU.
pinned_threads() {
	grep -h Cpus_allowed_list /proc/"$1"/task/*/status 2>/dev/null |
		awk '$2 ~ /^[0-9]+$/' | wc -l
}
# threads_not_on PID CPULIST: how many threads of PID have another set.
threads_not_on() {
	grep -h Cpus_allowed_list /proc/"$1"/task/*/status 2>/dev/null |
		awk -v all="$2" '$2 != all' | wc -l
}
# status_cpus FILE: STATUS_CPUS is the "Cpus_allowed_list:" value of the
# /proc status FILE (empty if it cannot be read). The file is read whole
# with $(<), never with `read`: bash 5.2's read buffers a seekable file and
# seeks back past what it did not use, and when the thread ends between
# the two the seek fails and the rest of that file is handed to the next
# `read` of any file (seen in the guest: a status file's Mems_allowed line
# read as a watch sample).
status_cpus() {
	local st
	STATUS_CPUS=""
	{ st=$(<"$1"); } 2>/dev/null || return 1
	[[ $st == *$'\n'Cpus_allowed_list:* ]] || return 1
	st=${st#*$'\n'Cpus_allowed_list:}
	st=${st%%$'\n'*}
	STATUS_CPUS=${st//[$' \t']/}
}
# thread_cpus PID: "TID CPULIST" for every thread of PID, read by the
# shell itself (no process started per thread: cheap on a busy machine).
thread_cpus() {
	local s tid
	for s in /proc/"$1"/task/*/status; do
		tid=${s#/proc/$1/task/}
		tid=${tid%/status}
		status_cpus "$s" && echo "$tid $STATUS_CPUS"
	done 2>/dev/null
}
# can_raise_nice N: whether this shell's children may set a nice of N
# (CAP_SYS_NICE, bit 23 of CapEff, or an RLIMIT_NICE of at least 20 - N).
can_raise_nice() {
	local cap lim
	cap=$(awk '/^CapEff:/ {print $2}' /proc/self/status)
	[ -n "$cap" ] && [ $(((0x$cap >> 23) & 1)) -eq 1 ] && return 0
	lim=$(ulimit -e 2>/dev/null)
	[ "$lim" = unlimited ] && return 0
	[ -n "$lim" ] && [ "$lim" -ge $((20 - $1)) ]
}

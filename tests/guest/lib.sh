# What the guest's case scripts share, on top of tests/lib.sh (source that
# first).

# todo ISSUE DESCRIPTION COMMAND...: a check that the work of another issue
# should make pass. Failing, it is a TAP "not ok ... # TODO": shown and
# counted apart by tests/guest/check.sh, not a failure of the run. Once
# that issue has landed, make it a check.
todo() {
	local issue=$1 what=$2
	shift 2
	if "$@"; then ok "$what"; else echo "not ok - $what # TODO issue $issue"; fi
}
# check_or_todo ISSUE DESCRIPTION COMMAND...: a check, or when ISSUE is
# not empty (an earlier check found that issue's bug in its way) a todo.
check_or_todo() {
	local issue=$1
	shift
	if [ -n "$issue" ]; then todo "$issue" "$@"; else check "$@"; fi
}
# cpu_list LIST: CPUS becomes the array of the CPUs of a list like 0-1,3.
cpu_list() {
	local IFS=, range c
	CPUS=()
	for range in $1; do
		for ((c = ${range%-*}; c <= ${range#*-}; c++)); do CPUS+=("$c"); done
	done
}

#!/usr/bin/env bash
# Run the unit test binaries and the command-line tests; print one closing
# line "tests: N passed, M failed" and exit non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
passed=0
failed=0
skipped=0
failures=()
for t in "$@"; do
	out=$("$t" 2>&1)
	rc=$?
	p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' <<<"$out" | tail -1)
	f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' <<<"$out" | tail -1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ $rc -ne 0 ] || [ -z "$p" ]; then
		[ -z "$f" ] && failed=$((failed + 1))
		failures+=("$t")
		echo "$out" | grep -v '^\[ \+\(RUN\|OK\) \+\]' | tail -40
	fi
	echo "$(basename "$t"): ${p:-0} passed, ${f:-0} failed"
done
# The Slurm tests load the plugin into slurmstepd, which cannot take a
# sanitizer build: they run in the plain pass only, one after another (a
# cluster on fixed ports) as one job beside the others.
slurm=()
[ "${SAN:-}" = 1 ] || slurm=(tests/slurm/test_*.sh)
scripts=("${slurm[@]}" tests/cli/test_*.sh)
[ "${SAN:-}" = 1 ] || scripts+=(tests/fuzz/test_*.sh)
# Most scripts wait on real periods of the agent, so TEST_JOBS (default 2)
# of them run at once; each writes to its own folder and socket. These run
# first, each with none beside it: test_agent_hostile.sh steers the next
# pid the kernel hands out and times the agent's answers; test_eval.sh
# counts the workloads left on the machine, and on a NUMA machine switches
# the kernel's NUMA balancing (and numad) for every process.
alone() { [[ $1 == */test_agent_hostile.sh || $1 == */test_eval.sh ]]; }
jobs_max=${TEST_JOBS:-2}
[[ $jobs_max =~ ^[1-9][0-9]*$ ]] || jobs_max=1
O=$(mktemp -d /tmp/numalot-tests.XXXXXX) || exit 1
# Interrupted, the scripts running beside are stopped too (they ignore
# the terminal's SIGINT; SIGTERM runs their own clean-up).
stop() {
	local p
	for p in $(jobs -p); do
		pkill -TERM -P "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	wait
	rm -rf "$O"
}
trap stop EXIT
trap 'exit 130' INT TERM
run_one() { # script, output file: status and seconds in FILE.rc
	local t0=$SECONDS
	bash "$1" >"$2" 2>&1
	echo "$? $((SECONDS - t0))" >"$2.rc"
}
run_slurm() {
	local k
	for k in "${!slurm[@]}"; do run_one "${slurm[$k]}" "$O/$((k + 1))"; done
}
i=0
for t in "${scripts[@]}"; do
	i=$((i + 1))
	[ -e "$t" ] && alone "$t" && run_one "$t" "$O/$i"
done
[ ${#slurm[@]} -gt 0 ] && [ -e "${slurm[0]}" ] && run_slurm &
i=0
for t in "${scripts[@]}"; do
	i=$((i + 1))
	[ -e "$t" ] || continue
	[[ $t == tests/slurm/* ]] || alone "$t" && continue
	while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
	run_one "$t" "$O/$i" &
done
wait
i=0
for t in "${scripts[@]}"; do
	i=$((i + 1))
	[ -e "$t" ] || continue
	out=$(cat "$O/$i" 2>/dev/null)
	# A script that left no status (its runner killed) failed.
	rc=1 secs=?
	[ -e "$O/$i.rc" ] && read -r rc secs <"$O/$i.rc"
	# Each "ok - ..." line of a script is a test; so is each "not ok".
	p=$(grep -c '^ok - ' <<<"$out")
	f=$(grep -c '^not ok - ' <<<"$out")
	[ $rc -ne 0 ] && [ "$f" -eq 0 ] && f=1
	k=$(grep -c '^skip' <<<"$out")
	# A script that skipped is not a pass; one that only says it ran is.
	[ $rc -eq 0 ] && [ "$p" -eq 0 ] && [ "$k" -eq 0 ] && p=1
	skipped=$((skipped + k))
	passed=$((passed + p))
	failed=$((failed + f))
	if [ $rc -ne 0 ]; then
		failures+=("$t")
		# Every "not ok" line, then the end of what it printed.
		grep '^not ok - ' <<<"$out"
		echo "$out" | tail -40
	else
		grep -E '^(skip|fuzz_)' <<<"$out"
	fi
	echo "$(basename "$t"): $p passed, $f failed$([ "$k" -gt 0 ] && echo ", $k skipped") ($secs s)"
done
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

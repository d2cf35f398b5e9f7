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
scripts=(tests/cli/test_*.sh)
# The Slurm tests load the plugin into slurmstepd, which cannot take a
# sanitizer build: they run in the plain pass only.
[ "${SAN:-}" = 1 ] || scripts+=(tests/fuzz/test_*.sh tests/slurm/test_*.sh)
for t in "${scripts[@]}"; do
	[ -e "$t" ] || continue
	t0=$SECONDS
	out=$(bash "$t" 2>&1)
	rc=$?
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
	echo "$(basename "$t"): $p passed, $f failed$([ "$k" -gt 0 ] && echo ", $k skipped") ($((SECONDS - t0)) s)"
done
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Run each libFuzzer target (make fuzz builds them, with clang) for a while.
# Usage: tests/fuzz/run-fuzz.sh BUILD SECONDS
# (make check runs them briefly; for a long run: make fuzz FUZZ_SECONDS=600)
set -eu
build=${1:-build}
secs=${2:-5}
cd "$(dirname "$0")/../.."
for t in protocol site; do
	if [ ! -x "$build/fuzz/fuzz_$t" ]; then
		echo "skip: $build/fuzz/fuzz_$t is not built (make fuzz builds" \
			"the targets; they need clang, which make deps installs)"
		exit 0
	fi
done
for t in protocol site; do
	corpus="$build/fuzz/corpus-$t"
	mkdir -p "$corpus"
	"$build/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=4096 \
		-print_final_stats=1 "$corpus" "tests/fuzz/seeds/$t" 2>&1 |
		grep -E "stat::number_of_executed_units|ERROR|SUMMARY" |
		sed "s/^/fuzz_$t: /"
	[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz_$t: FAILED"; exit 1; }
done

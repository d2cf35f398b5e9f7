#!/usr/bin/env bash
# Build the libFuzzer targets with clang and run each for a while.
# Usage: tests/fuzz/run-fuzz.sh BUILD SECONDS
# (make check runs them briefly; for a long run: make fuzz FUZZ_SECONDS=600)
set -eu
build=${1:-build}
secs=${2:-5}
cd "$(dirname "$0")/../.."
if ! command -v clang >/dev/null; then
	echo "skip: fuzzing needs clang (make deps installs it)"
	exit 0
fi
mkdir -p "$build/fuzz"
flags="-g -O1 -fsanitize=fuzzer,address,undefined -std=c11 -D_GNU_SOURCE \
	-Icore -Icore/agent -Ispank $(pkg-config --cflags json-c)"
clang $flags -o "$build/fuzz/fuzz_protocol" tests/fuzz/fuzz_protocol.c \
	core/agent/protocol.c core/util.c $(pkg-config --libs json-c)
clang $flags -o "$build/fuzz/fuzz_site" tests/fuzz/fuzz_site.c spank/site.c -lm
for t in protocol site; do
	corpus="$build/fuzz/corpus-$t"
	mkdir -p "$corpus"
	"$build/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=4096 \
		-print_final_stats=1 "$corpus" "tests/fuzz/seeds/$t" 2>&1 |
		grep -E "stat::number_of_executed_units|ERROR|SUMMARY" |
		sed "s/^/fuzz_$t: /"
	[ "${PIPESTATUS[0]}" -eq 0 ] || { echo "fuzz_$t: FAILED"; exit 1; }
done

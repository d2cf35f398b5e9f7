#!/usr/bin/env bash
# Benchmarks: repeatable commands that print figures (not timed tests).
set -eu
build=${1:-build}
cd "$(dirname "$0")/../.."
echo "== one policy step, 1024 threads, 24 nodes x 8 cores"
"$build/bench/bench_step"
ir() { # instructions of a bench_step run with $1 steps per policy
	valgrind --tool=callgrind --callgrind-out-file=/dev/null \
		"$build/bench/bench_step" "numa:24 core:8 pu:1" 1024 "$1" 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
if command -v valgrind >/dev/null; then
	a=$(ir 10)
	b=$(ir 30)
	echo "instructions per policy step (callgrind, (Ir(30)-Ir(10))/40): $(((b - a) / 40))"
fi
echo "== simulating 4 processes x 16 threads, 4 nodes x 16 cores, 120 s, lbma"
for i in 1 2 3; do
	/usr/bin/time -f "wall %e s, user %U s, max rss %M KiB" \
		"$build/numalot" sim etc/scenarios/bench-4x16.json --policy=lbma \
		--seed=$i | grep -E "^(makespan|stopped)"
done

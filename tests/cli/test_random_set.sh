#!/usr/bin/env bash
# Generalisation on every run (docs/evaluation.md, "Random scenarios"): a
# small set of freshly generated random scenarios, under the counters a
# real node with PEBS and one without a PMU have. The seed is new each
# time and printed: NUMALOT_RANDOM_SEED=S repeats a run.
#
# What it fails on: a run that errors, and a run more than 35% slower
# than linux (a policy gone wrong: before issue 24's fixes such runs came
# at -45%). The issue's target, no run more than 2% slower, is NOT met yet
# (about 3% of random runs miss it, docs/evaluation.md): every such run is
# printed here with its seed, and `make bench-random` checks the 2% on a
# large set (and fails today).
set -u
N=${NUMALOT:-build/numalot}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

seed=${NUMALOT_RANDOM_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
count=${NUMALOT_RANDOM_COUNT:-8}
echo "random set: $count scenarios from --seed=$seed (repeat: NUMALOT_RANDOM_SEED=$seed bash $0)"
"$N" bench --random="$count" --seed="$seed" --seeds=1 --jobs=2 \
	--policies=imar2,lbma --counters=pebs,software --fail-worse=2 \
	--save="$T/set" >"$T/table" 2>"$T/err"
rc=$?
check "bench ran (status $rc: 0, or 1 for runs more than 2% slower)" \
	test "$rc" = 0 -o "$rc" = 1
# Every run more than 2% slower is told; more than 35% fails.
sed 's/^/note: /' "$T/err"
worst=$(sed -n 's/.*: \([0-9.]*\)% slower than linux.*/\1/p' "$T/err" |
	sort -g | tail -1)
check "no run more than 35% slower than linux (worst ${worst:-none}%, --seed=$seed)" \
	awk -v w="${worst:-0}" 'BEGIN { exit !(w <= 35) }'
[ -n "$worst" ] && awk -v w="$worst" 'BEGIN { exit !(w > 35) }' && rc=2
if [ "$rc" = 2 ]; then
	mkdir -p build/random-failures
	cp "$T"/set/*.json build/random-failures/ 2>/dev/null
	echo "the scenarios are kept in build/random-failures/"
fi
check "both backends' tables printed" \
	test "$(grep -c '^numalot bench: .*counters: ' "$T/table")" = 2
check "the scenarios were saved" test "$(ls "$T/set" | wc -l)" = "$count"

# --fail-worse itself: a run it must catch. On smt-oversubscribed.json
# (24 threads on 16 hardware threads) static's pins at take-over lose to
# the OS's balancer, which spreads threads as others end (scenarios.md).
"$N" bench --seeds=1 --jobs=1 --policies=static --fail-worse=2 \
	etc/scenarios/smt-oversubscribed.json >/dev/null 2>"$T/err2"
rc=$?
check "--fail-worse=2 fails on a losing run ($rc)" test "$rc" = 1
check "and names it" grep -q "smt-oversubscribed, static, seed 1" "$T/err2"
"$N" bench --seeds=1 --jobs=1 --fail-worse=abc etc/scenarios/smt-oversubscribed.json \
	>/dev/null 2>"$T/err3"
check "a bad --fail-worse is refused (2)" test "$?" = 2
check "naming it" grep -q -- "--fail-worse" "$T/err3"
[ $fails -eq 0 ]

#!/usr/bin/env bash
# Generalisation on every run (docs/evaluation.md, "Random scenarios"): a
# small set of freshly generated random scenarios, under the counters a
# real node with a PMU and one without have, and no policy's run may be
# more than 2% slower than linux. The seed is new each time and printed:
# NUMALOT_RANDOM_SEED=S repeats a failure.
set -u
N=${NUMALOT:-build/numalot}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

seed=${NUMALOT_RANDOM_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
count=${NUMALOT_RANDOM_COUNT:-12}
echo "random set: $count scenarios from --seed=$seed (repeat: NUMALOT_RANDOM_SEED=$seed bash $0)"
"$N" bench --random="$count" --seed="$seed" --seeds=1 --jobs=2 \
	--policies=imar2,lbma --counters=pebs,software --fail-worse=2 \
	--save="$T/set" >"$T/table" 2>"$T/err"
rc=$?
check "no run more than 2% slower than linux (--seed=$seed)" test "$rc" = 0
if [ "$rc" != 0 ]; then
	cat "$T/err"
	mkdir -p build/random-failures
	cp "$T"/set/*.json build/random-failures/ 2>/dev/null
	echo "the scenarios are kept in build/random-failures/"
fi
check "both backends' tables printed" \
	test "$(grep -c '^numalot bench: .*counters: ' "$T/table")" = 2
check "the scenarios were saved" test "$(ls "$T/set" | wc -l)" = "$count"

# --fail-worse itself: a run it must catch. monitor never moves a thread,
# so on this scenario (static's pins, which the OS would have spread,
# are the worst placement) static loses; a bar of 0 catches any loss.
cat >"$T/lose.json" <<'J'
{"name": "lose", "machine": {"topology": "numa:2 core:2 pu:1"},
 "processes": [{"kind": "compute", "threads": 2, "work": 2e9, "start_node": 0},
               {"kind": "compute", "threads": 2, "work": 2e9, "start_s": 1}]}
J
"$N" bench --seeds=1 --jobs=1 --policies=static --fail-worse=0 "$T/lose.json" \
	>/dev/null 2>"$T/err2"
rc=$?
check "--fail-worse=0 fails on a losing run ($rc)" test "$rc" = 1
check "and names it" grep -q "lose, static, seed 1" "$T/err2"
"$N" bench --seeds=1 --jobs=1 --fail-worse=abc "$T/lose.json" >/dev/null 2>"$T/err3"
check "a bad --fail-worse is refused (2)" test "$?" = 2
check "naming it" grep -q -- "--fail-worse" "$T/err3"
[ $fails -eq 0 ]

#!/usr/bin/env bash
# numalot eval, short: the bundled kernels at the small size, each system
# that can run here run (the others skipped, saying why), the table, the
# JSON and the page; the one-node overhead mode announced; a seed giving
# the same order; SIGINT stopping the children and --resume finishing the
# plan; a failing command told; bad options refused by name.
set -u
N=${NUMALOT:-build/numalot}
W=${WORKLOAD:-build/numalot-workload}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nodes" -ge 1 ] || nodes=1
K="--size=small --iterations=2 --threads=1 --workload=$W"

"$N" eval --reps=2 $K --seed=11 --json="$T/e.json" --html="$T/e.html" \
	>"$T/out" 2>"$T/err"
rc=$?
check "eval exits 0 (status $rc)" test $rc -eq 0
[ $rc -eq 0 ] || tail -20 "$T/err"
check "the seed is printed" grep -q "seed 11" "$T/err"
check "progress on stderr, a line a run" grep -q '^numalot eval: \[[0-9]*/[0-9]*\] ' "$T/err"
check "a warm-up run, not counted" grep -q "warm-up: .* (not counted)" "$T/err"
check "the table: a row for linux" grep -qE '^linux +2 ' "$T/out"
check "numalot's own cost: monitor's slow-down" grep -q "monitor  slow-down [+-]" "$T/out"
check "the JSON: every system that runs ran each repetition, ok; skips say why" \
	python3 - "$T/e.json" "$nodes" "$(id -u)" <<'P'
import json, sys
r = json.load(open(sys.argv[1])); nodes = int(sys.argv[2]); root = sys.argv[3] == "0"
assert r["numalot_eval"] == 1 and r["complete"] and r["seed"] == "11"
systems = {s["name"]: s for s in r["systems"]}
assert set(systems) == {"linux", "linux-nobalance", "numad", "monitor",
                        "imar2", "lbma", "best-static"}
ran = [n for n, s in systems.items() if s["runs"]]
for n, s in systems.items():
    assert s["runs"] or len(s.get("skipped", "")) > 10, (n, s)
if nodes == 1:
    assert r["mode"] == "overhead-only" and "one NUMA node" in r["note"]
    assert sorted(ran) == ["linux", "monitor"], ran
    assert r["classes"] == ["direct"]
else:
    assert r["mode"] == "placement"
    assert {"linux", "monitor", "imar2", "lbma", "best-static"} <= set(ran)
    assert r["classes"] == ["direct", "ind", "interleave"]
for c in r["classes"]:
    for n in ran:
        runs = [x for x in r["runs"] if x["class"] == c and x["system"] == n]
        assert len(runs) == 2 and all(x["done"] and x["ok"] for x in runs), (c, n, runs)
        assert all(x["makespan_s"] > 0 and len(x["process_s"]) == 4 for x in runs)
        if n in ("monitor", "imar2", "lbma"):
            assert all(x["numalot_cpu_s"] > 0 for x in runs), runs
        s = r["summary"][c][n]
        assert s["runs"] == 2 and s["ci_low_s"] <= s["median_s"] <= s["ci_high_s"]
        assert abs(s["ci_level"] - 0.5) < 1e-9  # two runs: [min, max] covers 50%
        if n != "linux":
            assert 0 <= s["better_share"] <= 1 and s["best_improvement"] >= s["mean_improvement"] - 1e-12
    assert "monitor_slowdown" in r["overhead"][c]
assert [x["name"] for x in r["commands"]] == ["cg", "mg", "ft", "ep"]
# Randomised: not every system's runs in one block.
order = [x["system"] for x in r["runs"]]
assert order != sorted(order, key=lambda s: list(systems).index(s)) or len(order) < 4
P
if [ "$nodes" -eq 1 ]; then
	check "one node: says plainly that it measures overhead only" \
		grep -q "one NUMA node: nothing to place, so this measures only numalot's overhead" "$T/err"
	check "one node: the table says so too" grep -q "^One NUMA node: nothing to place" "$T/out"
fi
check "the page holds the table" grep -q "<h2>class direct</h2>" "$T/e.html"

# The same seed, the same order (a plan, no run: --systems=linux, one
# command that exits at once).
"$N" eval --reps=3 --seed=11 --no-warmup --json="$T/a.json" -- true >/dev/null 2>&1
"$N" eval --reps=3 --seed=11 --no-warmup --json="$T/b.json" -- true >/dev/null 2>&1
"$N" eval --reps=3 --seed=12 --no-warmup --json="$T/c.json" -- true >/dev/null 2>&1
order() { json "$1" '[(x["class"], x["system"], x["rep"]) for x in r["runs"]]'; }
check "the same seed gives the same order" test "$(order "$T/a.json")" = "$(order "$T/b.json")"
[ "$nodes" -gt 1 ] || [ "$(json "$T/a.json" 'len(r["runs"])')" -lt 4 ] ||
	check "another seed another order" test "$(order "$T/a.json")" != "$(order "$T/c.json")"

# SIGINT in the middle: the children stopped, the JSON kept, --resume
# finishes the plan and keeps the runs done.
"$N" eval --reps=2 --size=small --iterations=40 --threads=1 --workload="$W" \
	--kernels=ep --no-warmup --seed=5 --json="$T/i.json" >/dev/null 2>"$T/ierr" &
pid=$!
for _ in $(seq 200); do
	grep -q '\[1/' "$T/ierr" && break
	sleep 0.1
done
sleep 0.3
kill -INT $pid
wait $pid
rc=$?
check "SIGINT: exit 130 (status $rc)" test $rc -eq 130
check "SIGINT: says how to go on" grep -q "go on with: numalot eval --resume=$T/i.json" "$T/ierr"
left=$(ps -eo pgid=,args= | awk -v w="$W" '$2 == w' | wc -l)
check "SIGINT: no workload left running ($left)" test "$left" -eq 0
check "SIGINT: the JSON has some runs done, not all" python3 -c "
import json; r = json.load(open('$T/i.json')); d = [x['done'] for x in r['runs']]
assert not r['complete'] and any(d) and not all(d), d"
before=$(json "$T/i.json" '[x.get("makespan_s") for x in r["runs"] if x["done"]]')
"$N" eval --resume="$T/i.json" >/dev/null 2>"$T/rerr"
rc=$?
check "--resume: exit 0 (status $rc)" test $rc -eq 0
check "--resume: says so" grep -q "(resumed)" "$T/rerr"
check "--resume: every run done, the earlier ones kept" python3 -c "
import json; r = json.load(open('$T/i.json'))
assert r['complete'] and all(x['done'] and x['ok'] for x in r['runs'])
kept = $before
got = [x['makespan_s'] for x in r['runs']][:len(kept)]
assert all(k in [x['makespan_s'] for x in r['runs']] for k in kept), (kept, got)"

# A failing command is told, with its status, and fails the evaluation.
"$N" eval --reps=1 --no-warmup --json="$T/f.json" -- true -- sh -c 'exit 3' >/dev/null 2>"$T/ferr"
rc=$?
check "a failing command: exit 1 (status $rc)" test $rc -eq 1
check "a failing command: its status told" grep -q "sh exited with status 3" "$T/ferr"
check "a failing command: two commands in the JSON" test "$(json "$T/f.json" 'len(r["commands"])')" = 2

expect_usage_error "--reps=0 refused" "--reps wants a whole number from 1 to 1000" eval --reps=0
expect_usage_error "an unknown class named" 'unknown "diagonal" (valid: direct, ind, interleave)' eval --classes=diagonal
expect_usage_error "an unknown system named" 'unknown "autonuma"' eval --systems=autonuma
expect_usage_error "an unknown kernel named" '--kernels: unknown "lu"' eval --kernels=lu --workload="$W"
expect_usage_error "at most 4 commands" "at most 4 commands at once" eval -- a -- b -- c -- d -- e
expect_usage_error "a command without --" 'commands come after "--"' eval true
expect_usage_error "--srun outside Slurm" "not inside a Slurm allocation" eval --srun --workload="$W"
echo '{"x": 1}' >"$T/x.json"
chmod 644 "$T/x.json"
expect_usage_error "--resume of another JSON refused" "not written by numalot eval" eval --resume="$T/x.json"
# A plan's commands run as whoever resumes it: one that another user wrote
# or may change is refused before anything runs (root would have run a
# user's command: docs/evaluation.md, "On your own nodes").
python3 -c "
import json; r = json.load(open('$T/i.json')); r['complete'] = False
r['commands'] = [{'name': 'x', 'argv': ['touch', '$T/ran']}]
json.dump(r, open('$T/u.json', 'w'))"
chmod 666 "$T/u.json"
expect_usage_error "--resume of a plan others may write refused" "must be your own file that nobody else may write" eval --resume="$T/u.json"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chmod 644 "$T/u.json" && chown nobody "$T/u.json"
	expect_usage_error "--resume of another user's plan refused" "uid $(id -u nobody)'s, mode 0644" eval --resume="$T/u.json"
fi
check "...and nothing of it ran" test ! -e "$T/ran"
"$N" eval --help >"$T/help"
check "--help names every option" grep -q -- "--resume=FILE" "$T/help"
exit $((fails > 0))

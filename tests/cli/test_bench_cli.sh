#!/usr/bin/env bash
# numalot bench and the sim baselines from the command line: the table, the
# JSON (fields, summaries consistent with the runs), the chart, determinism
# whatever --jobs, bad input; and the committed scenario set matches its
# generator.
set -u
N=${NUMALOT:-build/numalot}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

mkdir "$T/set"
cat >"$T/set/a-master.json" <<'J'
{"name": "a-master", "machine": {"topology": "numa:2 core:4 pu:1"},
 "processes": [{"kind": "latency", "threads": 4, "work": 3e9, "placement": "master"},
               {"kind": "stream", "threads": 2, "work": 2e9, "start_s": 0.5}]}
J
cat >"$T/set/b-mix.json" <<'J'
{"name": "b-mix", "machine": {"topology": "numa:2 core:2 pu:1"},
 "processes": [{"kind": "mixed", "threads": 2, "work": 3e9},
               {"kind": "compute", "threads": 2, "work": 4e9, "placement": "interleave"}]}
J

check "bench runs (1 job)" \
	"$N" bench --seeds=2 --jobs=1 --json="$T/a.json" --svg="$T/a.svg" "$T/set" \
	>"$T/table"
check "table has the per-scenario and summary parts" \
	grep -q "Makespan: improvement over linux" "$T/table"
check "table names each scenario" grep -q "^b-mix " "$T/table"
check "table has the completion-time summary" \
	grep -q "Mean process completion time: improvement over linux" "$T/table"
check "bench runs (2 jobs)" \
	"$N" bench --seeds=2 --jobs=2 --json="$T/b.json" "$T/set/a-master.json" \
	"$T/set/b-mix.json" >/dev/null
check "results do not depend on --jobs" cmp -s "$T/a.json" "$T/b.json"
"$N" bench --seeds=2 --jobs=3 --json="$T/c.json" "$T/set" >/dev/null
check "same seeds, byte-identical JSON" cmp -s "$T/a.json" "$T/c.json"
"$N" bench --seeds=1 --jobs=1 --policies=lbma --json="$T/d.json" "$T/set" >/dev/null
check "--policies adds the references linux and best-static" \
	test "$(tr -d ' \n' <"$T/d.json" | grep -o '"policies":\[[^]]*\]')" = \
	'"policies":["lbma","linux","best-static"]'


if command -v python3 >/dev/null; then
	check "JSON fields present, summaries consistent with the runs" \
		python3 - "$T/a.json" <<'PY'
import json, statistics, sys
b = json.load(open(sys.argv[1]))
assert b["reference"] == "linux" and b["seeds"] == 2
pols = b["policies"]
assert pols == ["imar2", "lbma", "imar2-paper", "lbma-paper", "static",
                "linux-nonuma", "best-static", "ideal-locality", "linux"], pols
scen = [s["name"] for s in b["scenarios"]]
assert scen == ["a-master", "b-mix"], scen
runs = b["runs"]
assert len(runs) == len(scen) * len(pols) * 2
run = {}
for r in runs:
    for k in ("scenario", "policy", "seed", "completion_s", "end_s",
              "makespan_s", "mean_completion_s", "migrations",
              "os_migrations", "pages_migrated_bytes", "unfinished"):
        assert k in r, k
    sc = next(s for s in b["scenarios"] if s["name"] == r["scenario"])
    assert len(r["completion_s"]) == len(sc["processes"])
    assert abs(max(r["end_s"]) - r["makespan_s"]) < 1e-6
    assert abs(statistics.mean(r["completion_s"]) -
               r["mean_completion_s"]) < 1e-6
    run[(r["scenario"], r["policy"], r["seed"])] = r
for r in runs:
    if r["policy"] in ("linux", "linux-nonuma", "best-static",
                       "ideal-locality", "static"):
        assert r["migrations"] == 0, r
    assert r["unfinished"] == 0
def imp(s, p, seed, key):
    ref = run[(s, "linux", seed)][key]
    return (ref - run[(s, p, seed)][key]) / ref
def gap(s, p, seed):
    best = run[(s, "best-static", seed)]["makespan_s"]
    return (run[(s, p, seed)]["makespan_s"] - best) / best
close = lambda a, c: abs(a - c) < 1e-6
for x in b["summary"]["per_scenario"]:
    s, p = x["scenario"], x["policy"]
    assert close(x["makespan_improvement"],
                 statistics.mean(imp(s, p, k, "makespan_s") for k in (1, 2)))
    assert close(x["mean_completion_improvement"],
                 statistics.mean(imp(s, p, k, "mean_completion_s")
                                 for k in (1, 2)))
    assert close(x["gap_to_best_static"],
                 statistics.mean(gap(s, p, k) for k in (1, 2)))
assert len(b["summary"]["per_policy"]) == len(pols)
for x in b["summary"]["per_policy"]:
    p = x["policy"]
    assert x["runs"] == 4
    for key, name in (("makespan_s", "makespan_improvement"),
                      ("mean_completion_s", "mean_completion_improvement")):
        v = [imp(s, p, k, key) for s in scen for k in (1, 2)]
        st = x[name]
        assert close(st["mean"], statistics.mean(v)), (p, name)
        assert close(st["median"], statistics.median(v)), (p, name)
        assert close(st["min"], min(v)) and close(st["max"], max(v))
        assert close(st["better_share"], sum(i > 0 for i in v) / len(v))
        assert close(st["worse_2pct_share"],
                     sum(i < -0.02 for i in v) / len(v))
    g = [gap(s, p, k) for s in scen for k in (1, 2)]
    assert close(x["gap_to_best_static"]["mean"], statistics.mean(g))
    if p == "linux":
        assert x["makespan_improvement"]["max"] == 0
    if p in ("static", "ideal-locality"):
        # best-static is never worse than static, ideal-locality never
        # worse than best-static
        assert (max(g) if p == "ideal-locality" else min(g)) * (
            1 if p == "ideal-locality" else -1) <= 1e-9, (p, g)
PY
	check "the chart is well-formed SVG with a row per policy" \
		python3 -c '
import sys, xml.etree.ElementTree as E
r = E.parse(sys.argv[1]).getroot()
assert r.tag.endswith("svg")
t = " ".join(x.text or "" for x in r.iter() if x.tag.endswith("text"))
for p in ("imar2", "lbma", "static", "linux-nonuma", "best-static",
          "ideal-locality"):
    assert p in t, p
' "$T/a.svg"
	rm -rf "$T/gen" && mkdir "$T/gen"
	python3 etc/scenarios/set/generate.py "$T/gen" >/dev/null
	check "committed scenario set matches its generator" \
		diff -r -x generate.py -x __pycache__ "$T/gen" etc/scenarios/set
	check "the set has at least 24 scenarios" \
		test "$(ls etc/scenarios/set/*.json | wc -l)" -ge 24
fi

# Bad input: a clear error and status 2, nothing run.
cat >"$T/bad-kind.json" <<'J'
{"machine": {"topology": "numa:2 core:2 pu:1"},
 "processes": [{"name": "a", "kind": "warp", "threads": 2}]}
J
expect_usage_error "bad scenario names file and field" \
	"bad-kind.json: processes[0].kind" bench "$T/set/b-mix.json" "$T/bad-kind.json" \
	--json="$T/bad.json"
check "nothing written on bad input" test ! -e "$T/bad.json"
expect_usage_error "unknown policy lists the valid ones" \
	"unknown policy \"fast\" (valid: imar2, lbma, monitor, static, linux, linux-nonuma, best-static, ideal-locality, imar2-paper, lbma-paper)" \
	bench --policies=imar2,fast "$T/set"
expect_usage_error "missing scenario file" "nope.json: cannot open" \
	bench "$T/nope.json"
expect_usage_error "bad --seeds" "--seeds" bench --seeds=0 "$T/set"
expect_usage_error "bad --jobs" "--jobs" bench --jobs=x "$T/set"
expect_usage_error "unknown option" "--frobnicate" bench --frobnicate "$T/set"
expect_usage_error "unknown parameter" "tickets.preferred" bench --param nope=1 "$T/set"
expect_usage_error "unknown OS model" "linux, linux-ideal, linux-nonuma, none" bench --os=dos "$T/set"
"$N" bench --seeds=1 --jobs=1 --os=none --policies=static --json="$T/e.json" \
	"$T/set/a-master.json" >/dev/null
check "--os=none: no page migration under the policies" \
	python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"]
assert all(x["pages_migrated_bytes"] == 0 for x in r if x["policy"] == "static")
assert any(x["pages_migrated_bytes"] > 0 for x in r if x["policy"] == "linux")' "$T/e.json"

# numalot sim with the baselines.
S="$T/set/a-master.json"
for p in linux linux-nonuma best-static ideal-locality; do
	"$N" sim "$S" --policy=$p --seed=2 --report="$T/$p.json" >"$T/out"
	check "sim --policy=$p runs" test $? -eq 0
	check "sim --policy=$p report" grep -q "\"policy\": \"$p\"" "$T/$p.json"
done
"$N" sim "$S" --policy=imar2 --os=none >"$T/out"
check "sim --os=none runs" grep -q "os none$" "$T/out"
"$N" sim "$S" --policy=imar2 >"$T/sim.txt"
check "sim names the OS model underneath" grep -q "os linux$" "$T/sim.txt"
expect_usage_error "sim: unknown policy lists the baselines" \
	"best-static, ideal-locality" sim "$S" --policy=best
expect_usage_error "sim: unknown OS model" "linux, linux-ideal, linux-nonuma, none" \
	sim "$S" --os=windows
expect_usage_error "sim: --os with a linux baseline" "--os does not apply" \
	sim "$S" --policy=linux --os=none


# Random scenarios (docs/scenarios.md, "Random scenarios"). Seed 3: its
# first three scenarios run in well under a second.
R="--random=3 --seed=3 --seeds=1 --policies=imar2 --jobs=1"
# shellcheck disable=SC2086
"$N" bench $R --save="$T/rand/sub" >"$T/r1" 2>"$T/r1.err"
check "--random runs" test $? -eq 0
check "--save writes one file per scenario, DIR made" \
	test "$(ls "$T"/rand/sub/rand-3-000[0-2]-*.json | wc -l)" -eq 3
check "--random and no file: the random scenarios only" \
	test "$(grep -c '^rand-3-' "$T/r1")" -eq 9
check "a given --seed is not announced" test ! -s "$T/r1.err"
# shellcheck disable=SC2086
"$N" bench $R >"$T/r2"
check "the same command twice, the same table" \
	cmp -s <(tail -n +2 "$T/r1") <(tail -n +2 "$T/r2")
"$N" bench --seeds=1 --policies=imar2 --jobs=1 "$T/rand/sub" >"$T/r3"
check "the saved files give the same table" \
	cmp -s <(tail -n +2 "$T/r1") <(tail -n +2 "$T/r3")
check "a saved file says what was drawn" \
	grep -q '"description": "Random scenario 0 of --seed=3: ' \
	"$T"/rand/sub/rand-3-0000-*.json
"$N" bench --random=1 --seeds=1 --policies=imar2 --jobs=1 \
	"$T/set/b-mix.json" >"$T/r4" 2>"$T/r4.err"
seed=$(sed -n 's/^numalot bench: random scenarios from --seed=\([0-9]*\)$/\1/p' "$T/r4.err")
check "no --seed: a fresh one, printed" test -n "$seed"
check "files and --random: both run" \
	test "$(grep -c '^\(b-mix\|rand-\)' "$T/r4")" -eq 6
"$N" bench --random=1 --seed="$seed" --seeds=1 --policies=imar2 --jobs=1 \
	"$T/set/b-mix.json" >"$T/r5"
check "the printed seed (--seed=$seed) repeats the run" \
	cmp -s <(tail -n +2 "$T/r4") <(tail -n +2 "$T/r5")
"$N" bench --random=1 --seed=3 --perturb=0.5 --seeds=1 --policies=imar2 \
	--jobs=1 --save="$T/pert" >/dev/null
check "--perturb writes the drawn constants into the file" \
	grep -q '"peak_ops_per_s": ' "$T"/pert/rand-3-0000-*.json
expect_usage_error "--random=0 refused" '--random wants a whole number from 1 to 10000, not "0"' \
	bench --random=0
expect_usage_error "--random=x refused" '--random wants a whole number from 1 to 10000, not "x"' \
	bench --random=x
expect_usage_error "--random=10001 refused" '--random wants a whole number from 1 to 10000, not "10001"' \
	bench --random=10001
expect_usage_error "--perturb=1 refused" '--perturb wants a number from 0 to 0.9, not "1"' \
	bench --random=1 --perturb=1
expect_usage_error "--perturb=-0.1 refused" '--perturb wants a number from 0 to 0.9, not "-0.1"' \
	bench --random=1 --perturb=-0.1
expect_usage_error "--perturb=nan refused" '--perturb wants a number from 0 to 0.9, not "nan"' \
	bench --random=1 --perturb=nan
expect_usage_error "--seed=-1 refused" '--seed wants a whole number from 0 to 18446744073709551615, not "-1"' \
	bench --random=1 --seed=-1
expect_usage_error "--seed beyond 64 bits refused" '--seed wants a whole number' \
	bench --random=1 --seed=18446744073709551616
expect_usage_error "--seed without --random refused" \
	"--seed applies to random scenarios only: give --random=N too" \
	bench --seed=1 "$T/set"
expect_usage_error "--perturb without --random refused" \
	"--perturb applies to random scenarios only" bench --perturb=0.1 "$T/set"
touch "$T/plain"
expect_usage_error "--save under a file refused" \
	"--save=$T/plain/x: cannot make that folder: Not a directory" \
	bench --random=1 --seed=1 --save="$T/plain/x"

[ $fails -eq 0 ]

#!/usr/bin/env bash
# numalot sim from the command line: good runs, bad input, determinism.
set -u
N=${NUMALOT:-build/numalot}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

S=etc/scenarios/two-node-remote.json
check "sim runs and writes a report" \
	"$N" sim "$S" --policy=lbma --seed=4 --report="$T/a.json"
check "report is JSON naming the policy" grep -q '"name": "lbma"' "$T/a.json"
"$N" sim "$S" --policy lbma --seed 4 --report "$T/b.json" >"$T/table"
check "same seed, byte-identical report" cmp -s "$T/a.json" "$T/b.json"
check "table lists the process and totals" grep -q "makespan_s" "$T/table"
# The model has no page addresses: the report does not claim hot pages.
check "pages: guided by page locations only, the model says why" \
	grep -q '"guided_by": "page locations only (the model has no page addresses)"' "$T/a.json"
check "pages: no hot-page figures from the model" test -z "$(grep -o '"hot_pages"' "$T/a.json")"

# Memory under a policy of its own takes no NUMA hinting faults: Linux's
# NUMA balancing migrates a node:1 process's pages towards its threads on
# node 0, and none of a --preferred=1 one's (as the kernel in the guests).
for p in '"placement": "node:1"' '"preferred": 1'; do
	echo '{"machine": {"topology": "numa:2 core:4 pu:1"}, "processes":
	[{"kind": "stream", "threads": 4, '"$p"', "cpunodebind": "0"}]}' >"$T/m.json"
	"$N" sim "$T/m.json" --policy=linux >"$T/m.out" 2>&1
	grep -o 'pages migrated [0-9.]*' "$T/m.out" | tr -d 'a-z ' >>"$T/mig"
done
check "linux: node:1 pages migrated towards the threads" \
	awk 'NR == 1 && $1 > 100 {ok = 1} END {exit !ok}' "$T/mig"
check "linux: no preferred=1 page migrated (no hinting faults)" \
	awk 'NR == 2 && $1 == 0 {ok = 1} END {exit !ok}' "$T/mig"

# --timeline: the machine sampled every 0.5 s. A node:1 process whose
# threads are bound to node 0 goes from 0 to 100% local as Linux migrates
# its pages; the samples' times step by 0.5; the table says when it was
# first 90% local; a policy's report carries one too.
echo '{"machine": {"topology": "numa:2 core:4 pu:1"}, "duration_s": 6, "processes":
[{"kind": "stream", "threads": 4, "mem_bytes": 16777216, "shared_fraction": 0, "placement": "node:1",
"cpunodebind": "0"}]}' >"$T/tl.json"
"$N" sim "$T/tl.json" --policy=linux --timeline=0.5 --report="$T/tl.r.json" >"$T/tl.out"
check "--timeline: 12 samples, 0.5 s apart, locality from 0 to 1" python3 - "$T/tl.r.json" <<'P'
import json, sys
tl = json.load(open(sys.argv[1]))["timeline"]
assert [round(s["t"], 6) for s in tl] == [0.5 * k for k in range(1, 13)], tl
loc = [s["processes"][0]["locality"] for s in tl]
assert loc[0] == 0 and loc[-1] > 0.99, loc
assert tl[-1]["processes"][0]["thread_nodes"] == [0, 0, 0, 0]
assert tl[-1]["pages_migrated_bytes"] > 0
P
check "--timeline: the table says when it was 90% local" \
	grep -qE '^stream-0: locality 0% first, 100% last, 90% local at [0-9.]+ s$' "$T/tl.out"
"$N" sim "$T/tl.json" --policy=lbma --timeline=1 --report="$T/tl.p.json" >/dev/null
check "--timeline: a policy's report holds the machine's timeline" \
	python3 -c "import json; assert len(json.load(open('$T/tl.p.json'))['timeline']) == 6"
expect_usage_error "--timeline: not for best-static" "many placements" \
	sim "$T/tl.json" --policy=best-static --timeline=1
expect_usage_error "--timeline: seconds above 0" "--timeline wants seconds" \
	sim "$T/tl.json" --policy=linux --timeline=0

# "limit": "binding" (outside any job): numalot keeps the threads of a
# numactl --cpunodebind=0 --membind=1 process on node 0, as the real node
# does; with the allocation (cpus) as its limit lbma takes them to node 1.
for lim in cpus binding; do
	echo '{"machine": {"topology": "numa:2 core:4 pu:1"}, "duration_s": 8, "processes":
	[{"kind": "latency", "threads": 2, "cpunodebind": "0", "membind": 1,
	"limit": "'$lim'"}]}' >"$T/lim.json"
	"$N" sim "$T/lim.json" --policy=lbma --counters=software --report="$T/lim-$lim.json" >/dev/null
done
check "limit cpus: lbma moves the threads to their memory's node" \
	python3 -c "import json; r = json.load(open('$T/lim-cpus.json')); \
assert r['summary']['migrations'] > 0 and {t['last_cpu'] for t in r['threads']} <= {4, 5, 6, 7}"
check "limit binding: they stay on their binding, which the report names" \
	python3 -c "import json; r = json.load(open('$T/lim-binding.json')); \
assert r['summary']['migrations'] == 0 and {t['last_cpu'] for t in r['threads']} <= {0, 1, 2, 3}; \
assert 'its own CPU binding' in r['processes'][0]['placement_limit']"
sed 's/"limit": "binding"/"limit": "job"/' "$T/lim.json" >"$T/badlim.json"
expect_usage_error "limit: only cpus or binding" 'processes[0].limit: "job" is not a limit' \
	sim "$T/badlim.json"

expect_usage_error "no scenario" "usage" sim
expect_usage_error "unknown policy lists the valid ones" \
	"imar2, lbma, monitor, static" sim "$S" --policy=fast
expect_usage_error "unknown parameter lists the valid ones" \
	"tickets.preferred" sim "$S" --param nope=1
expect_usage_error "bad parameter value names it" \
	"undo_threshold" sim "$S" --param undo_threshold=2
expect_usage_error "bad seed" "--seed" sim "$S" --seed=-1
expect_usage_error "unknown option" "--frobnicate" sim "$S" --frobnicate
expect_usage_error "missing file" "nope.json" sim "$T/nope.json"

cat >"$T/bad-kind.json" <<'J'
{"machine": {"topology": "numa:2 core:2 pu:1"},
 "processes": [{"name": "a", "kind": "warp", "threads": 2}]}
J
expect_usage_error "unknown kind names file and field" \
	"bad-kind.json: processes[0].kind" sim "$T/bad-kind.json" \
	--report="$T/bad.json"
check "nothing written on bad input" test ! -e "$T/bad.json"

cat >"$T/zero.json" <<'J'
{"machine": {"topology": "numa:2 core:2 pu:1"},
 "processes": [{"name": "a", "kind": "compute", "threads": 0}]}
J
expect_usage_error "zero threads" "processes[0].threads" sim "$T/zero.json"

cat >"$T/notopo.json" <<'J'
{"machine": {}, "processes": [{"name": "a", "kind": "compute", "threads": 2}]}
J
expect_usage_error "missing topology" "machine.topology" sim "$T/notopo.json"

printf '{"machine": ' >"$T/broken.json"
expect_usage_error "malformed JSON names the file" "broken.json" sim "$T/broken.json"

expect_usage_error "unknown counter backend lists the valid ones" \
	'unknown counter backend "pmu" (valid: pebs, perf, software)' \
	sim etc/scenarios/two-node-remote.json --counters=pmu
expect_usage_error "bench: an unknown backend in the list, named" \
	'--counters: unknown counter backend "x"' \
	bench --counters=pebs,x etc/scenarios/two-node-remote.json
"$N" sim etc/scenarios/two-node-remote.json --counters=software \
	--report="$T/sw.json" >/dev/null
check "the report records the modelled backend" \
	test "$(json "$T/sw.json" "r['counters']['backend']")" = model-software

[ $fails -eq 0 ]

#!/usr/bin/env bash
# numalot calibrate on this node (a short run), its machine file, and
# sim and bench --machine=FILE taking it or refusing bad ones by name.
set -u
N=${NUMALOT:-build/numalot}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nodes" -ge 1 ] || nodes=1
"$N" calibrate --quick --seconds=2 -o "$T/m.json" >"$T/out" 2>"$T/err"
check "calibrate --quick exits 0" test $? -eq 0
check "progress on stderr, one line a measurement" \
	grep -q "^numalot calibrate: \[$((3 * nodes))/$((3 * nodes))\] bandwidth all cores" "$T/err"
check "the memory bound is stated" grep -q "memory at most [0-9]* MiB" "$T/err"
check "the latency matrix is printed" grep -q "^load latency (ns)" "$T/out"
check "beside the firmware's SLIT" grep -q "the firmware's SLIT" "$T/out"
if [ "$nodes" -eq 1 ]; then
	check "one node: says there is nothing remote to measure" \
		grep -q "one NUMA node, nothing remote to measure" "$T/out"
fi
check "SMT measured or why not" grep -qE "^SMT: (two hardware threads|not measured: .)" "$T/out"
check "the machine file is JSON with a full node-pair matrix" python3 - "$T/m.json" "$nodes" <<'P'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
m, meas = r["machine"], r["measured"]
assert r["numalot_machine"] == 1
for k in ("latency_ns", "bandwidth_one_thread_bytes_per_s",
          "bandwidth_all_cores_bytes_per_s", "firmware_slit"):
    assert len(meas[k]) == n and all(len(row) == n for row in meas[k]), k
assert all(v > 0 for row in meas["latency_ns"] for v in row)
lat = meas["latency_ns"]
assert abs(m["local_latency_ns"] - sum(lat[i][i] for i in range(n)) / n) < 1e-6 * m["local_latency_ns"]
assert m["node_bandwidth_bytes_per_s"] > 1e6
assert len(m["distances"]) == n and all(m["distances"][i][i] == 10 for i in range(n))
assert ("link_bandwidth_bytes_per_s" in m) == (n > 1)
assert "peak_ops_per_s" in r["not_measured"]
P

cat >"$T/s.json" <<'J'
{"machine": {"topology": "numa:2 core:8 pu:1"},
 "processes": [{"name": "cg", "kind": "latency", "threads": 2}]}
J
"$N" sim "$T/s.json" --machine="$T/m.json" --report="$T/r.json" >"$T/sim" 2>&1
check "sim --machine runs" test $? -eq 0
check "sim names the machine file" grep -q "^machine file: $T/m.json" "$T/sim"
check "sim runs on the file's topology" grep -q "^machine: $nodes NUMA node" "$T/sim"
check "the report's bandwidth ceiling is the measured one" python3 -c "
import json; r = json.load(open('$T/r.json')); m = json.load(open('$T/m.json'))
assert r['machine']['ceilings']['bandwidth_bytes_per_s'] == m['machine']['node_bandwidth_bytes_per_s']
assert r['machine']['machine_file'] == '$T/m.json'"
# Twice the local latency: a latency-bound process must take longer.
python3 -c "
import json; m = json.load(open('$T/m.json'))
m['machine']['local_latency_ns'] *= 2; json.dump(m, open('$T/slow.json', 'w'))"
a=$("$N" sim "$T/s.json" --machine="$T/m.json" | awk '$1 == "cg" {print $4}')
b=$("$N" sim "$T/s.json" --machine="$T/slow.json" | awk '$1 == "cg" {print $4}')
check "the file's latency takes effect ($a s, twice the latency $b s)" \
	python3 -c "assert float('$b') > 1.2 * float('$a')"
"$N" bench "$T/s.json" --machine="$T/m.json" --seeds=1 --policies=imar2 \
	--json="$T/b.json" >/dev/null 2>&1
check "bench --machine runs" test $? -eq 0

# An XML topology (what calibrate writes when hwloc's synthetic form
# cannot describe the node) is found beside the machine file.
mkdir -p "$T/site"
cp tests/data/2n4c-slit.xml "$T/site/node-topology.xml"
python3 -c "
import json; m = json.load(open('$T/m.json'))
m['machine'] = {'topology': 'node-topology.xml', 'local_latency_ns': 120}
json.dump(m, open('$T/site/node.json', 'w'))"
"$N" sim "$T/s.json" --machine="$T/site/node.json" >"$T/sim" 2>&1
check "a relative XML topology is read beside the machine file" \
	grep -q "^machine: 2 NUMA nodes, 8 CPUs (.*site/node-topology.xml" "$T/sim"

expect_usage_error "a missing machine file is named" \
	"machine file $T/nope.json: cannot open" sim "$T/s.json" --machine="$T/nope.json"
printf '{"numalot_machine": 1,\n "machine": {' >"$T/broken.json"
expect_usage_error "a malformed machine file: file, line and column" \
	"broken.json: malformed JSON at line 2" sim "$T/s.json" --machine="$T/broken.json"
python3 -c "
import json; m = json.load(open('$T/m.json')); m['extra'] = 1
json.dump(m, open('$T/top.json', 'w'))
m = json.load(open('$T/m.json')); m['machine']['local_latncy_ns'] = 90
json.dump(m, open('$T/typo.json', 'w'))
m = json.load(open('$T/m.json')); m['machine']['smt_share'] = 3
json.dump(m, open('$T/range.json', 'w'))
m = json.load(open('$T/m.json')); del m['numalot_machine']
json.dump(m, open('$T/scen.json', 'w'))"
expect_usage_error "an unknown top-level field, named with the valid ones" \
	"top.json: extra: unknown field (valid: numalot_machine, description, machine" \
	sim "$T/s.json" --machine="$T/top.json"
expect_usage_error "an unknown machine field, named" \
	"typo.json: machine.local_latncy_ns: unknown field" \
	sim "$T/s.json" --machine="$T/typo.json"
expect_usage_error "a constant out of range, named with its range" \
	"range.json: machine.smt_share: must be from 0.5 to 1, got 3" \
	sim "$T/s.json" --machine="$T/range.json"
expect_usage_error "not a machine file (no numalot_machine)" \
	"scen.json: numalot_machine: missing" sim "$T/s.json" --machine="$T/scen.json"
expect_usage_error "bench: a bad machine file is named" \
	"typo.json: machine.local_latncy_ns" bench "$T/s.json" --machine="$T/typo.json"
cat >"$T/far.json" <<J
{"machine": {"topology": "numa:2 core:8 pu:1"},
 "processes": [{"name": "cg", "kind": "latency", "threads": 2, "start_node": $nodes}]}
J
expect_usage_error "a scenario that does not fit the file's machine says so" \
	"processes[0].start_node: must be from 0 to $((nodes - 1)), got $nodes (on the machine of $T/m.json)" \
	sim "$T/far.json" --machine="$T/m.json"
expect_usage_error "bench: --machine with --random refused" \
	"--machine applies to scenario files, not to --random" \
	bench --random=2 --machine="$T/m.json"
expect_usage_error "calibrate: a bad --seconds" "--seconds wants 1 to 3600" \
	calibrate --seconds=0
expect_usage_error "calibrate takes no operand" "takes no operand" calibrate x
"$N" --help >"$T/help"
check "numalot --help lists calibrate" grep -q "^  calibrate" "$T/help"
"$N" calibrate --help >"$T/help"
check "calibrate --help tells its options" grep -q -- "--quick" "$T/help"

[ $fails -eq 0 ]

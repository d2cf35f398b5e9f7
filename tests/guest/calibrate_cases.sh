#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): numalot calibrate on a real
# kernel with 2 or 4 NUMA nodes produces a full node-pair matrix, with
# each buffer on the node asked for, beside the guest's SLIT, and a
# machine file the model takes. QEMU TCG emulates every node's memory
# alike: the figures prove the mechanism, not a machine
# (docs/real-node.md, "Calibrating the model").
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
N=$B/numalot
T=$(mktemp -d)
. tests/lib.sh
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
# Small buffers: under TCG setting one up (a random chase) is slow.
"$N" calibrate --seconds=20 --buffer=4 -o "$T/m.json" >"$T/out" 2>"$T/err"
rc=$?
# Kept for the reader: BUILD/guest/run-N/calibrate.out and .json.
[ -d /share ] && cp "$T/out" /share/calibrate.out && cp "$T/m.json" /share/calibrate.json
check "calibrate exits 0 on $nodes nodes" test $rc -eq 0
[ $rc -eq 0 ] || { tail -5 "$T/err"; cat "$T/out"; }
check "progress for each of the $((3 * nodes * nodes)) measurements" \
	grep -q "^numalot calibrate: \[$((3 * nodes * nodes))/$((3 * nodes * nodes))\]" "$T/err"
check "the SLIT is compared (remote pairs exist)" \
	grep -q "^SLIT against measurement: remote penalty" "$T/out"
slit=$(for n in $(seq 0 $((nodes - 1))); do
	cat /sys/devices/system/node/node$n/distance
done | tr '\n' ' ')
check "a full $nodes x $nodes matrix, pages where asked, the guest's SLIT" \
	python3 - "$T/m.json" "$nodes" "$slit" <<'P'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
slit = [int(x) for x in sys.argv[3].split()]
meas = r["measured"]
for k in ("latency_ns", "bandwidth_one_thread_bytes_per_s",
          "bandwidth_all_cores_bytes_per_s"):
    m = meas[k]
    assert len(m) == n and all(len(row) == n and all(v > 0 for v in row)
                               for row in m), (k, m)
assert [v for row in meas["firmware_slit"] for v in row] == slit, meas["firmware_slit"]
assert meas["pages_on_node_min"] >= 0.9, meas["pages_on_node_min"]
assert len(r["machine"]["distances"]) == n
assert r["machine"]["link_bandwidth_bytes_per_s"] > 0
P
[ $? -eq 0 ] || cat "$T/m.json"
cat >"$T/s.json" <<J
{"machine": {"topology": "numa:$nodes core:1 pu:1"},
 "processes": [{"kind": "latency", "threads": 2, "placement": "node:$((nodes - 1))", "start_node": 0}]}
J
"$N" sim "$T/s.json" --machine="$T/m.json" >"$T/sim" 2>&1
check "sim takes the guest's machine file" grep -q "^machine: $nodes NUMA nodes" "$T/sim"
rm -rf "$T"

#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): another placer on a real
# multi-node kernel (docs/real-node.md, "Other placers"). A process numalot
# runs has its pages moved to another node by numactl's migratepages
# (migrate_pages(2), as numad moves them), NUMA balancing off: numalot lets
# go of it, never moves the pages back, and its report says why. numad
# itself: tests/guest/numad_cases.sh.
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
N=$B/numalot
T=$(mktemp -d)
. tests/lib.sh
balancing_was=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)
trap 'echo "$balancing_was" >/proc/sys/kernel/numa_balancing 2>/dev/null
	[ -d /share ] && mkdir -p /share/peers && cp "$T"/moved.* /share/peers/
	rm -rf "$T"' EXIT
if ! command -v migratepages >/dev/null ||
	! python3 -c 'import ctypes' 2>/dev/null; then
	echo "skip: peers: migratepages (numactl) or python3 missing (make deps)"
	exit 0
fi
echo 0 >/proc/sys/kernel/numa_balancing
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
# Node with most of PID's anonymous pages.
main_node() {
	awk '/anon=/ {for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) {
		split(substr($i, 2), kv, "="); s[kv[1]] += kv[2] }}
		END {m = -1; for (n in s) if (m < 0 || s[n] > s[m]) m = n; print m}' \
		"/proc/$1/numa_maps" 2>/dev/null
}
# Share (%) of PID's anonymous pages on node NODE.
share_on() {
	awk -v k="N$2=" '/anon=/ {for (i = 1; i <= NF; i++) {
		if (index($i, k) == 1) s += substr($i, length(k) + 1)
		if ($i ~ /^N[0-9]+=/) { split($i, kv, "="); a += kv[2] }}}
		END {print a ? int(100 * s / a) : 0}' "/proc/$1/numa_maps" 2>/dev/null
}
# 128 MiB touched, then walked on and on (a process that runs), 1 MiB
# touched and freed every 0.2 s (a still process has its pages read only
# every 30 s: docs/real-node.md, "Cost").
cat >"$T/walk.py" <<'EOF'
import sys, time
b = bytearray(b"\1") * (128 << 20)
open(sys.argv[1], "w").close()
end = time.time() + 20
fresh = 0
while time.time() < end:
	for i in range(0, len(b), 4096):
		b[i] = 2
	if time.time() > fresh:
		c = bytearray(b"\1") * (1 << 20)
		fresh = time.time() + 0.2
EOF
$N run --policy=lbma --period=0.2 --report="$T/moved.json" -- \
	python3 "$T/walk.py" "$T/touched" >"$T/moved.out" 2>&1 &
np=$!
pid=""
for _ in $(seq 200); do
	pid=$(cat /proc/$np/task/$np/children 2>/dev/null)
	pid=${pid%% *}
	[ -n "$pid" ] && break
	sleep 0.05
done
# All 128 MiB touched (the script says so, not a fixed 5 s: a guest
# slowed by a busy host may take longer), then taken over and its pages
# read.
for _ in $(seq 300); do
	[ -e "$T/touched" ] && break
	sleep 0.1
done
sleep 4
from=$(main_node "$pid")
to=$(((from + 1) % nodes))
migratepages "$pid" "$from" "$to"
# What migratepages moved: a page the walker is writing may be skipped
# (in a guest slowed by a busy host, 61% to 72% moved).
moved=$(share_on "$pid" "$to")
sleep 4 # numalot reads its pages again within 2 s
at_to=$(share_on "$pid" "$to")
alive=$(cat "/proc/$pid/comm" 2>/dev/null || echo "no process $pid")
wait $np
check "peers: run succeeded (output: $(tail -2 "$T/moved.out" | tr '\n' ' '))" test $? -eq 0
check "peers: migratepages moved its pages from node $from to node $to (${moved:-?}%, at least 50%), and numalot left them there ($at_to% on node $to 4 s later; $alive)" \
	test "${moved:-0}" -ge 50 -a "${at_to:-0}" -ge $((${moved:-0} - 5))
check "peers: the report says numalot let go and why ($(grep -o '"let_go": "[^"]*' "$T/moved.json"))" \
	grep -Eq "\"let_go\": \"[0-9]+ MiB of its pages moved from node $from to node $to without numalot: numalot left the process to it" "$T/moved.json"

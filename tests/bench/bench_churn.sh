#!/usr/bin/env bash
# Benchmark of numalotd under one user's process churn (issue 23): a
# registered process of nobody's keeps about ALIVE children alive, each
# living 0.3 s, for SECONDS s (default 200 and 30: about 20,000 children),
# beside root's unrelated one-process step. Printed: root's hello latency
# during the churn, the time root's report takes at the end, the churning
# step's report (processes listed and forgotten), and the agent's memory
# and CPU.
# Usage (root): tests/bench/bench_churn.sh [BUILD] [ALIVE] [SECONDS]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
ALIVE=${2:-200}
SECS=${3:-30}
N=$PWD/$B/numalot D=$PWD/$B/numalotd W=$PWD/$B/numalot-workload
[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 || { echo "bench_churn: needs root and a user nobody"; exit 0; }
T=$(mktemp -d /tmp/numalot-bchurn.XXXXXX)
chmod 755 "$T"
mkdir -m 777 "$T/pub"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
S=$T/s.sock
"$D" --socket="$S" --idle-exit=0 --min-period=0.1 --log-level=warning 2>"$T/agent.log" &
AP=$!
pids+=($AP)
for _ in $(seq 100); do "$N" request --socket="$S" '{"v":1,"op":"hello"}' >/dev/null 2>&1 && break; sleep 0.05; done
rss_mb() { awk '/VmRSS/ {printf "%.0f", $2 / 1024}' /proc/"$AP"/status; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' /proc/"$1"/stat; }
# Root's step: one process.
"$W" --threads 1 --seconds 600 --mode sleep >/dev/null 2>&1 &
op=$!
pids+=($op)
"$N" request --socket="$S" "{\"v\":1,\"op\":\"register\",\"job\":2,\"step\":0,\"uid\":0,\"pid\":$op,\"policy\":\"monitor\",\"cpus\":\"0\",\"period\":0.5}" >/dev/null
# nobody's churn: a shell that starts a child every 0.3/ALIVE s.
gap=$(python3 -c "print(0.3 / $ALIVE * 10)")
cat >"$T/pub/churn.sh" <<SH
#!/bin/bash
echo \$\$ >"$T/pub/churn.pid"
read -r _ <"$T/pub/go"
end=\$((SECONDS + $SECS))
while [ \$SECONDS -lt \$end ]; do
	for _ in 1 2 3 4 5 6 7 8 9 10; do /bin/sleep 0.3 & done
	/bin/sleep $gap
done
wait
SH
chmod 755 "$T/pub/churn.sh"
mkfifo -m 666 "$T/pub/go"
su nobody -s /bin/bash -c "$T/pub/churn.sh" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$T/pub/churn.pid" ] && break; sleep 0.05; done
cp=$(cat "$T/pub/churn.pid")
su nobody -s /bin/sh -c "'$N' request --socket='$S' '{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":$(id -u nobody),\"pid\":$cp,\"policy\":\"monitor\",\"cpus\":\"0\",\"period\":0.2}'" >/dev/null
echo go >"$T/pub/go"
echo "== nobody: about $ALIVE children alive, each 0.3 s, for $SECS s; root's one-process step beside it"
echo "agent before: $(rss_mb) MB"
c0=$(cpu_s "$AP") w0=$(date +%s.%N)
python3 - "$S" "$SECS" <<'PY'
import socket, struct, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
body = b'{"v":1,"op":"hello"}'
ms = []
end = time.monotonic() + secs
while time.monotonic() < end:
    t0 = time.monotonic()
    try:
        c = socket.socket(socket.AF_UNIX); c.settimeout(10); c.connect(path)
        c.sendall(struct.pack(">I", len(body)) + body)
        b = b""
        while len(b) < 4: b += c.recv(4 - len(b))
        need = struct.unpack(">I", b)[0]; b = b""
        while len(b) < need: b += c.recv(need - len(b))
        c.close()
        ms.append((time.monotonic() - t0) * 1e3)
    except OSError:
        ms.append(99999)
    time.sleep(0.2)
ms.sort()
print("root's hello during the churn: p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d hellos)" % (
    ms[(len(ms) - 1) // 2], ms[max(0, -(-len(ms) * 99 // 100) - 1)], ms[-1], len(ms)))
PY
c1=$(cpu_s "$AP") w1=$(date +%s.%N)
echo "agent after: $(rss_mb) MB; CPU $(python3 -c "print('%.0f%%' % (100 * ($c1 - $c0) / ($w1 - $w0)))") of a core during the churn"
t0=$(date +%s%N)
"$N" request --socket="$S" '{"v":1,"op":"report","job":2,"step":0,"uid":0}' >"$T/r2.json"
t1=$(date +%s%N)
echo "root's report: $(((t1 - t0) / 1000000)) ms; $(python3 -c "import json; r=json.load(open('$T/r2.json'))['report']; print('%d process, %d periods' % (len(r['processes']), r['summary']['periods']))")"
t0=$(date +%s%N)
su nobody -s /bin/sh -c "'$N' request --socket='$S' '{\"v\":1,\"op\":\"report\",\"job\":1,\"step\":0}'" >"$T/r1.json"
t1=$(date +%s%N)
echo "the churning step's report: $(((t1 - t0) / 1000000)) ms; $(python3 -c "
import json; r=json.load(open('$T/r1.json'))['report']
print('%d processes listed, %s forgotten, %d threads' % (len(r['processes']), r['summary'].get('processes_dropped', '(not counted)'), len(r['threads'])))")"
echo "agent at the end: $(rss_mb) MB"

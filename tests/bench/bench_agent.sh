#!/usr/bin/env bash
# Benchmarks of numalotd under load (issue 14), figures printed:
#  (1) STEPS steps (default 500) of THREADS/STEPS threads each (default
#      10,000 in all): how fast the socket answers (hello, ms) while they
#      run, and the agent's CPU;
#  (2) one user (nobody) with BIG threads (default 10,000) in one process
#      beside another user's 4-thread step: that step's hello latency,
#      its report (threads, periods) and the big one's report.
# Usage (root): tests/bench/bench_agent.sh [BUILD] [STEPS] [THREADS] [BIG]
set -u
cd "$(dirname "$0")/../.."
B=${1:-build}
STEPS=${2:-500}
THREADS=${3:-10000}
BIG=${4:-10000}
N=$PWD/$B/numalot D=$PWD/$B/numalotd W=$PWD/$B/numalot-workload
[ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1 || { echo "bench_agent: needs root and a user nobody"; exit 0; }
T=$(mktemp -d /tmp/numalot-bagent.XXXXXX)
chmod 755 "$T"
mkdir -m 777 "$T/pub"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
hello_ms() {
	local t0 t1
	t0=$(date +%s%N)
	timeout 10 "$N" request --socket="$1" '{"v":1,"op":"hello"}' >/dev/null 2>&1 || { echo 99999; return; }
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
# latencies SOCKET COUNT: "p50 p99 max" of COUNT hellos, 0.1 s apart,
# each from connect to the last byte of the reply (one client process, so
# that no program start is counted).
latencies() {
	python3 - "$1" "$2" <<'PY'
import socket, struct, sys, time
path, n = sys.argv[1], int(sys.argv[2])
body = b'{"v":1,"op":"hello"}'
ms = []
for _ in range(n):
    t0 = time.monotonic()
    try:
        c = socket.socket(socket.AF_UNIX)
        c.settimeout(10)
        c.connect(path)
        c.sendall(struct.pack(">I", len(body)) + body)
        def take(k):
            b = b""
            while len(b) < k:
                part = c.recv(k - len(b))
                if not part:
                    raise OSError("closed")
                b += part
            return b
        need = struct.unpack(">I", take(4))[0]
        take(need)
        c.close()
        ms.append((time.monotonic() - t0) * 1e3)
    except OSError:
        ms.append(99999)
    time.sleep(0.1)
ms.sort()
load = open("/proc/loadavg").read().split()[:3]
print("p50 %.1f ms, p99 %.1f ms, max %.1f ms (%d hellos; load %s)" % (ms[(n - 1) // 2],
      ms[max(0, -(-n * 99 // 100) - 1)], ms[-1], n, " ".join(load)))
PY
}
# The CPU time (s) of pid so far.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.2f", ($14 + $15) / hz}' /proc/"$1"/stat; }
# The agent's descriptor limit: NOFILE (default 524288, the hard limit
# systemd gives a service such as numalotd.service), not this shell's;
# the counter budget follows from it (docs/protocol.md).
NOFILE=${NOFILE:-524288}
start_agent() {
	(
		ulimit -n "$NOFILE" 2>/dev/null || echo "bench_agent: cannot set NOFILE=$NOFILE; the agent keeps $(ulimit -Hn)" >&2
		exec "$D" --socket="$1" --idle-exit=0 --min-period=0.1 --log-level=warning 2>"$T/agent.log"
	) &
	AP=$!
	pids+=($AP)
	for _ in $(seq 100); do [ "$(hello_ms "$1")" -lt 99999 ] && return; sleep 0.05; done
}
# A baseline: the hello of an idle agent.
S=$T/a/s.sock
start_agent "$S"
echo "agent descriptors: $(awk '/Max open files/ {print $4, $5}' /proc/"$AP"/limits) (soft, hard)"
echo "idle agent: hello $(latencies "$S" 10)"

# (1) many steps.
per=$((THREADS / STEPS))
echo "== $STEPS steps x $per threads ($((STEPS * per)) threads), period 1 s"
t0=$(date +%s)
for i in $(seq "$STEPS"); do
	"$W" --threads "$((per - 1))" --seconds 600 --mode sleep >/dev/null 2>&1 &
	pids+=($!)
	"$N" request --socket="$S" "{\"v\":1,\"op\":\"register\",\"job\":$i,\"step\":0,\"uid\":0,\"pid\":$!,\"policy\":\"monitor\",\"cpus\":\"0\",\"period\":1}" >>"$T/reg.out" 2>&1
done
echo "registrations answered ok: $(grep -c '"ok":true' "$T/reg.out") of $STEPS"
# What the others were answered, the most common first.
grep -v '"ok":true' "$T/reg.out" | sed 's/[0-9][0-9]*/N/g' | sort | uniq -c | sort -rn | head -5
echo "registered in $(($(date +%s) - t0)) s (load $(cut -d" " -f1-3 /proc/loadavg)); $(timeout 10 "$N" status --socket="$S" 2>/dev/null | grep -c '^[0-9]') steps"
sleep 3
c0=$(cpu_s "$AP") w0=$(date +%s.%N)
echo "hello while they run: $(latencies "$S" 100)"
c1=$(cpu_s "$AP") w1=$(date +%s.%N)
python3 -c "print('agent CPU over the hellos: %.2f s in %.1f s (%.0f%% of a core)' % ($c1 - $c0, $w1 - $w0, 100 * ($c1 - $c0) / ($w1 - $w0)))"
timeout 10 "$N" request --socket="$S" '{"v":1,"op":"report","job":1,"step":0,"uid":0}' |
	python3 -c "import json,sys; r=json.load(sys.stdin)['report']; print('step 1: %d threads, %d periods' % (len(r['threads']), r['summary']['periods']))"
kill "$AP"
wait "$AP" 2>/dev/null
for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
pids=()

# (2) one user with BIG threads beside another user's step.
echo "== nobody: one process of $BIG threads, beside root's 4-thread step"
S=$T/b/s.sock
start_agent "$S"
su nobody -s /bin/sh -c "echo \$\$ >'$T/pub/big.pid'; exec '$W' --threads $((BIG - 1)) --seconds 600 --mode sleep" >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$T/pub/big.pid" ] && break; sleep 0.05; done
bp=$(cat "$T/pub/big.pid")
pids+=($bp)
for _ in $(seq 600); do [ "$(ls /proc/"$bp"/task 2>/dev/null | wc -l)" -ge "$BIG" ] && break; sleep 0.1; done
echo "its threads: $(ls /proc/"$bp"/task | wc -l)"
"$W" --threads 4 --seconds 600 --mode sleep >/dev/null 2>&1 &
op=$!
pids+=($op)
"$N" request --socket="$S" "{\"v\":1,\"op\":\"register\",\"job\":2,\"step\":0,\"uid\":0,\"pid\":$op,\"policy\":\"monitor\",\"cpus\":\"0\",\"period\":0.5}" >/dev/null
su nobody -s /bin/sh -c "'$N' request --socket='$S' '{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":$(id -u nobody),\"pid\":$bp,\"policy\":\"monitor\",\"cpus\":\"0\",\"period\":0.2}'" >/dev/null
sleep 3
c0=$(cpu_s "$AP") w0=$(date +%s.%N)
echo "the other step's hello: $(latencies "$S" 100)"
c1=$(cpu_s "$AP") w1=$(date +%s.%N)
python3 -c "print('agent CPU over the hellos: %.2f s in %.1f s (%.0f%% of a core)' % ($c1 - $c0, $w1 - $w0, 100 * ($c1 - $c0) / ($w1 - $w0)))"
timeout 10 "$N" request --socket="$S" '{"v":1,"op":"report","job":2,"step":0,"uid":0}' |
	python3 -c "import json,sys; r=json.load(sys.stdin)['report']; print('the other step: %d threads (5 expected), %d periods, %s' % (len(r['threads']), r['summary']['periods'], 'budget note: ' + r['budget'] if 'budget' in r else 'all counted'))"
su nobody -s /bin/sh -c "'$N' request --socket='$S' '{\"v\":1,\"op\":\"report\",\"job\":1,\"step\":0}'" |
	python3 -c "import json,sys; r=json.load(sys.stdin)['report']; print('the big step: %d threads, %d periods; %s' % (len(r['threads']), r['summary']['periods'], r.get('budget', 'all counted')))"
echo "agent log warnings: $(grep -c warning "$T/agent.log"), 'Too many open files': $(grep -c 'Too many open files' "$T/agent.log")"

#!/usr/bin/env bash
# Benchmark: numalot's own CPU time per engine period on real threads
# (software counters, 1 s period), for 16, 256 and 1024 threads of a real
# process (docs/real-node.md, "Cost").
# Usage: tests/bench/bench_real.sh [BUILD] [SECONDS] [callgrind]
#   MODE=compute|idle (default compute): what the workload's threads do.
#   THREADS="16 256 1024": the sizes.
#   With "callgrind" each run is also made under valgrind's callgrind,
#   which counts instructions (repeatable on a busy machine, unlike time):
#   instructions per thread per period, the taking over apart
#   (CG_KEEP=F keeps each run's callgrind output as F.N).
set -eu
build=${1:-build}
secs=${2:-10}
cg=${3:-}
mode=${MODE:-compute}
sizes=${THREADS:-16 256 1024}
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
topo="live"
[ "$(nproc)" -ge 2 ] && topo="numa:2 core:1 pu:$(($(nproc) / 2))"
[ "$(($(nproc) % 2))" -ne 0 ] && topo="live"
# startup_s: once a run (libraries, topology, counter probe). take_over:
# once a thread (its limit, counters and stat file), us per thread.
# release: once a thread that ended (its descriptors closed), us per thread.
# us/thread/period: the CPU of the periods apart from taking threads over
# and letting them go,
# per thread the workload asked for and per period: the running cost.
# "all in" divides the whole CPU time (startup, taking over and the
# report included) by the same periods and threads. nice: numalot's own
# (raised where allowed); late_max_s: how late its periods came at worst;
# wakes: refreshes that read every idle thread at once (the process's CPU
# clock rose, as when a thread wakes).
echo "mode $mode, $secs s, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%8s %6s %8s %10s %10s %10s %8s %17s %8s %12s %5s %11s %6s\n" threads seen periods "cpu_s" "startup_s" "take_over" "release" "us/thread/period" "all in" "% of a core" nice late_max_s wakes
for n in $sizes; do
	"$build/numalot" run ${NICE:+--nice=$NICE} --policy=lbma --period=1 --topology="$topo" \
		--report="$T/r.json" -- "$build/numalot-workload" --threads "$n" \
		--seconds "$secs" --mode "$mode" >/dev/null
	python3 - "$T/r.json" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
o = r["numalot_overhead"]; cpu = o["cpu_s"]; st = o.get("startup_cpu_s", 0)
run = o.get("periods_cpu_s", cpu - st)
tk = o.get("takeover_cpu_s", 0); taken = o.get("threads_taken_over", 0)
rl = o.get("release_cpu_s", 0); rel = o.get("threads_released", 0)
p = r["summary"]["periods"]; d = r["summary"]["duration_s"]
print("%8d %6d %8d %10.3f %10.3f %10.1f %8.1f %17.1f %8.1f %12.3f %5d %11.2f %6d" % (n, len(r["threads"]), p, cpu, st,
      tk / taken * 1e6 if taken else 0, rl / rel * 1e6 if rel else 0,
      (run - tk - rl) / p / n * 1e6, cpu / p / n * 1e6, 100 * (run - tk - rl) / d,
      o["priority"]["nice"], o["period_late_max_s"], o.get("wake_reads", 0)))
PY
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [ "$cg" = callgrind ]; then
	command -v valgrind >/dev/null || { echo "callgrind: valgrind not installed"; exit 0; }
	# Only the engine's periods are counted (nl_engine_step_due and what
	# it calls); the taking over (thread_init) is subtracted.
	printf "%8s %6s %8s %14s %14s %20s\n" threads seen periods "Ir periods" "Ir take_over" "Ir/thread/period"
	for n in $sizes; do
		# attach to a started workload: under valgrind, run's own
		# start of the command is slowed down with it.
		"$build/numalot-workload" --threads "$n" --seconds "$((secs + 2))" \
			--mode "$mode" >/dev/null 2>&1 &
		wp=$!
		for _ in $(seq 100); do
			[ "$(ls /proc/$wp/task 2>/dev/null | wc -l)" -gt "$n" ] && break
			sleep 0.1
		done
		valgrind --tool=callgrind --toggle-collect=nl_engine_step_due \
			--callgrind-out-file="$T/cg.out" "$build/numalot" attach \
			--policy=lbma --period=1 --topology="$topo" --report="$T/r.json" \
			"$wp" >/dev/null 2>&1
		wait "$wp" || true
		callgrind_annotate --inclusive=yes --threshold=100 "$T/cg.out" >"$T/cg.txt" 2>/dev/null
		if [ -n "${CG_KEEP:-}" ]; then cp "$T/cg.out" "$CG_KEEP.$n"; fi
		python3 - "$T/r.json" "$n" "$T/cg.txt" <<'PY'
import json, re, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
tot = tk = 0
for line in open(sys.argv[3]):
    m = re.match(r"\s*([\d,]+) \(.*?\)\s+(\S+)", line)
    if not m:
        continue
    v = int(m.group(1).replace(",", ""))
    if m.group(2) == "PROGRAM":
        tot = v
    elif m.group(2).endswith("thread_init"):
        tk = max(tk, v)
p = max(r["summary"]["periods"], 1)
print("%8d %6d %8d %14d %14d %20.0f" % (n, len(r["threads"]), p, tot, tk, (tot - tk) / p / n))
PY
	done
fi

# numad, where installed, on the same kind of process: its own CPU time
# over the same span, and its log's word on what it scanned.
if command -v numad >/dev/null && [ "$(id -u)" = 0 ]; then
	"$build/numalot-workload" --threads 256 --seconds "$((secs + 2))" --mode compute >/dev/null &
	wp=$!
	sleep 1
	numad -i 1:1 -p "$wp" -l 6 >/dev/null 2>&1
	sleep 0.5
	nd=$(cat /var/run/numad.pid 2>/dev/null)
	if [ -n "$nd" ] && [ -e "/proc/$nd" ]; then
		sleep "$secs"
		read -r u s < <(awk '{print $14, $15}' "/proc/$nd/stat")
		kill "$nd"
		python3 -c "
hz = $(getconf CLK_TCK); cpu = ($u + $s) / hz
print('numad, 256 threads, %d s at 1 s scans: %.3f s of CPU (%.3f%% of a core)' % ($secs, cpu, 100 * cpu / $secs))"
		grep -m1 "Nodes:" /var/log/numad.log 2>/dev/null | sed 's/^/numad log: /'
		grep -q "Nodes: 1" /var/log/numad.log 2>/dev/null &&
			echo "numad: one NUMA node here, so it scans no process (nothing to compare)"
	else
		echo "numad: did not start"
	fi
	wait "$wp"
else
	echo "numad: not installed (apt-get install numad) or not root: no comparison"
fi

# What this machine charges for the same reads, apart from numalot (the
# floor under the per-thread figure): one pass over N idle threads.
if command -v cc >/dev/null; then
	if cc -O2 -o "$T/floor" tests/bench/syscall_floor.c -lpthread 2>/dev/null; then
		echo "the floor on this machine (tests/bench/syscall_floor.c):"
		for n in $sizes; do
			[ "$n" -ge 256 ] && "$T/floor" "$n"
		done
	fi
fi

#!/usr/bin/env bash
# Benchmark: numalot's own CPU time per engine period on real threads
# (software counters), for 16, 256 and 1024 threads of a real process.
# Usage: tests/bench/bench_real.sh [BUILD] [SECONDS]
set -eu
build=${1:-build}
secs=${2:-10}
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
topo="live"
[ "$(nproc)" -ge 2 ] && topo="numa:2 core:1 pu:$(($(nproc) / 2))"
[ "$(($(nproc) % 2))" -ne 0 ] && topo="live"
# us/thread/period counts the CPU of the periods (taking threads over
# included), apart from what happens once a run: startup (libraries,
# topology, counter probe; startup_s) and building the report at the end.
# "all in" divides the whole CPU time by the same periods and threads.
printf "%8s %8s %10s %10s %17s %8s %12s\n" threads periods "cpu_s" "startup_s" "us/thread/period" "all in" "% of a core"
for n in 16 256 1024; do
	"$build/numalot" run --policy=lbma --period=1 --topology="$topo" \
		--report="$T/r.json" -- "$build/numalot-workload" --threads "$n" \
		--seconds "$secs" --mode compute >/dev/null
	python3 - "$T/r.json" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
o = r["numalot_overhead"]; cpu = o["cpu_s"]; st = o.get("startup_cpu_s", 0)
run = o.get("periods_cpu_s", cpu - st)
p = r["summary"]["periods"]; d = r["summary"]["duration_s"]
print("%8d %8d %10.3f %10.3f %17.1f %8.1f %12.3f" % (n, p, cpu, st, run / p / n * 1e6,
      cpu / p / n * 1e6, 100 * run / d))
PY
done

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

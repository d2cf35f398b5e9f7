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
printf "%8s %8s %10s %14s %12s\n" threads periods "cpu_s" "us/thread/period" "% of a core"
for n in 16 256 1024; do
	"$build/numalot" run --policy=lbma --period=1 --topology="$topo" \
		--report="$T/r.json" -- "$build/numalot-workload" --threads "$n" \
		--seconds "$secs" --mode compute >/dev/null
	python3 - "$T/r.json" "$n" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); n = int(sys.argv[2])
cpu = r["numalot_overhead"]["cpu_s"]; p = r["summary"]["periods"]
d = r["summary"]["duration_s"]
print("%8d %8d %10.3f %14.1f %12.3f" % (n, p, cpu, cpu / p / n * 1e6, 100 * cpu / d))
PY
done

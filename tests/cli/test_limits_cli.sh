#!/usr/bin/env bash
# Bad files never crash or hang numalot, nor make it grow: every input has
# size and range limits checked before work starts; errors name the field;
# exit 2 (issue 14, case 12). numalot report shows a report's text, never
# its control characters (case 11).
set -u
N=${NUMALOT:-build/numalot}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
# Each run is bounded: 20 s, and 512 MiB of address space (not under
# ASan, which reserves terabytes of shadow address space up front).
bounded() {
	if [ "${SAN:-}" = 1 ]; then
		timeout 20 "$N" "$@"
	else
		(ulimit -v 524288 && timeout 20 "$N" "$@")
	fi
}
# scenario TOPOLOGY CPUS [START_S] [THREADS] [PROCS]
scenario() {
	python3 -c "
import json, sys
p = {'kind': 'compute', 'threads': int(sys.argv[4])}
if sys.argv[2] != '-': p['cpus'] = sys.argv[2]
if sys.argv[3] != '-': p['start_s'] = float(sys.argv[3])
print(json.dumps({'machine': {'topology': sys.argv[1]}, 'processes': [p] * int(sys.argv[5])}))
" "$1" "$2" "${3:--}" "${4:-2}" "${5:-1}" >"$T/s.json"
}
# limited DESCRIPTION TEXT ARGS...: exit 2, in time, the message holds TEXT.
limited() {
	local what=$1 text=$2
	shift 2
	bounded "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$text" "$T/err"; then
		ok "$what"
	else
		bad "$what (status $rc, stderr: $(head -c 300 "$T/err"))"
	fi
}

for c in "0-" "1099511627776" "-1" "0-99999999999" "1,,2" "3-1"; do
	scenario "numa:2 core:2 pu:1" "$c"
	limited "cpus \"$c\" is refused, naming the field" "processes[0].cpus" sim "$T/s.json"
done
scenario "numa:1024 core:64 pu:2" 0
limited "a huge synthetic topology is refused before it is built" "processing units" sim "$T/s.json"
scenario "numa:65 core:1 pu:1" 0
limited "more than 64 NUMA nodes is refused" "NUMA nodes" sim "$T/s.json"
scenario "xml:/dev/zero" 0
limited "an XML topology that is not a regular file is refused" "regular file" sim "$T/s.json"
mkfifo "$T/fifo.xml"
scenario "xml:$T/fifo.xml" 0
limited "an XML topology that is a FIFO is refused at once" "fifo.xml\": not a regular file (a FIFO)" sim "$T/s.json"
# Scenarios are read through the same checked reader (issue 23, 6).
mkfifo "$T/fifo-s.json"
limited "sim of a FIFO is refused at once" \
	"fifo-s.json: not a regular file (a FIFO)" sim "$T/fifo-s.json"
limited "bench of a FIFO is refused at once" \
	"fifo-s.json: not a regular file (a FIFO)" bench --seeds=1 "$T/fifo-s.json"
mkdir "$T/set" && mkfifo "$T/set/fifo.json"
limited "bench of a folder holding a FIFO is refused at once" \
	"set/fifo.json: not a regular file (a FIFO)" bench --seeds=1 "$T/set"
scenario "numa:2 core:2 pu:1" - 1e9
limited "start_s far away is refused" "processes[0].start_s" sim "$T/s.json"
scenario "numa:2 core:2 pu:1" - - 999 1000
limited "1000 x 999 threads are refused" "too many" sim "$T/s.json"
scenario "numa:2 core:2 pu:1" - - 999 1
limited "999 threads on 4 CPUs are refused" "per CPU" sim "$T/s.json"

echo '{"reports": 5}' >"$T/r1.json"
limited "report: \"reports\" not an array" '"reports" must be an array' report "$T/r1.json"
echo '{"policy": {"name": "lbma"}, "threads": "x", "processes": 3}' >"$T/r2.json"
bounded report "$T/r2.json" >"$T/out" 2>&1
check "report: threads and processes of the wrong type do not crash it" test $? -eq 0
echo '{"reports": [{"policy": {"name": "x"}, "processes": [1, "x"], "threads": [2, {"cpus": [3, [1]]}], "events": [4]}]}' >"$T/r3.json"
bounded report --events "$T/r3.json" >"$T/out" 2>&1
check "report: list items of the wrong type do not crash it" test $? -eq 0
# A list holding what is no report: refused, by name (issue 26, item 5).
echo '{"reports": [5, {"processes": [1, "x"]}]}' >"$T/r4.json"
limited "report: a list of things that are not reports is refused" \
	'an entry of "reports" is not a report' report "$T/r4.json"
limited "report /dev/zero is refused at once" "not a regular file" report /dev/zero
# The pictures read through the same checked reader (issue 23, 5): no
# 2 GB from /dev/zero, no wait on a FIFO, each named.
mkfifo "$T/fifo.json"
limited "report --html /dev/zero is refused at once" \
	"/dev/zero: not a regular file (a character device)" report --html="$T/z.html" /dev/zero
limited "report --html FIFO is refused at once" \
	"fifo.json: not a regular file (a FIFO)" report --html="$T/f.html" "$T/fifo.json"
limited "report --svg FIFO is refused at once" \
	"fifo.json: not a regular file (a FIFO)" report --svg="$T/f" "$T/fifo.json"
"$N" sim etc/scenarios/two-node-remote.json --seed=1 --report="$T/good.json" >/dev/null
limited "report --html of a report and a FIFO: the FIFO is refused" \
	"fifo.json: not a regular file (a FIFO)" report --html="$T/g.html" "$T/good.json" "$T/fifo.json"
check "...the page is drawn and names it" grep -q "fifo.json: not a regular file (a FIFO)" "$T/g.html"
printf '{"policy": {"name": "x\\u001b]0;owned\\u0007\\u001b[2J"}, "error": "a\\nb"}' >"$T/r4.json"
bounded report "$T/r4.json" >"$T/out" 2>&1
check "report: no control character reaches the terminal" \
	test "$(tr -d '\n' <"$T/out" | tr -d '[:print:]' | wc -c)" -eq 0
check "...they are shown escaped" grep -qF 'x\x1b]0;owned' "$T/out"
[ $fails -eq 0 ]

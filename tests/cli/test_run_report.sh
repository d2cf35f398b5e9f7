#!/usr/bin/env bash
# numalot run / attach and their report (issue 26, items 1 and 4): a
# report path that cannot be written is refused before the program starts
# (status 2, the path and why), as the user who runs numalot; one that
# fails at the end (a full disk) makes run exit non-zero and say so; run
# and attach end with one line saying what moved, or why nothing did;
# attach says at its start what it took over and how to stop it.
set -u
N=${NUMALOT:-build/numalot}
W=${WORKLOAD:-build/numalot-workload}
T=$(mktemp -d /tmp/numalot-runreport.XXXXXX)
chmod 755 "$T"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
NA=$(cd "$(dirname "$N")" && pwd)/$(basename "$N")
WA=$(cd "$(dirname "$W")" && pwd)/$(basename "$W")
mkdir "$T/pub" && chmod 777 "$T/pub"

# refused DESCRIPTION TEXT ARGS...: numalot ARGS (a run whose command
# would make $T/pub/ran) exits 2, says TEXT in one line, runs nothing.
refused() {
	local what=$1 text=$2
	shift 2
	rm -f "$T/pub/ran"
	"$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$text" "$T/err" &&
		[ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/pub/ran" ]; then
		ok "$what"
	else
		bad "$what (status $rc, ran: $([ -e "$T/pub/ran" ] && echo yes || echo no), stderr: $(cat "$T/err"))"
	fi
}

# 1. Refused before the program starts, whoever runs numalot.
refused "run: a missing folder is refused before the command runs" \
	"numalot run: cannot write report $T/no/such/r.json: its folder $T/no/such does not exist" \
	"$N" run --report="$T/no/such/r.json" -- touch "$T/pub/ran"
: >"$T/file"
refused "run: a file on the way is named" \
	"cannot write report $T/file/r.json: $T/file is not a folder" \
	"$N" run --report="$T/file/r.json" -- touch "$T/pub/ran"
refused "run: a folder is not a report" \
	"cannot write report $T/pub: it is a folder" \
	"$N" run --report="$T/pub" -- touch "$T/pub/ran"
sleep 30 &
sp=$!
pids+=($sp)
refused "attach: a missing folder is refused before it attaches" \
	"numalot attach: cannot write report $T/no/r.json: its folder $T/no does not exist" \
	timeout 10 "$N" attach --report="$T/no/r.json" $sp
kill $sp

# ...as the user numalot runs as: nobody may not write root's folders.
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	as_nobody() { su nobody -s /bin/sh -c "$*"; }
	refused "nobody: run --report=/root/r.json: Permission denied, the command never ran" \
		"numalot run: cannot write report /root/r.json: Permission denied" \
		as_nobody "'$NA' run --report=/root/r.json -- touch '$T/pub/ran'"
	mkdir "$T/rootdir"
	refused "nobody: a folder of root's (0755)" \
		"cannot write report $T/rootdir/r.json: Permission denied" \
		as_nobody "'$NA' run --report='$T/rootdir/r.json' -- touch '$T/pub/ran'"
	echo '{}' >"$T/pub/roots.json"
	chmod 644 "$T/pub/roots.json"
	refused "nobody: a file of root's in a folder nobody may write" \
		"cannot write report $T/pub/roots.json: Permission denied" \
		as_nobody "'$NA' run --report='$T/pub/roots.json' -- touch '$T/pub/ran'"
	check "...the file is left as it was" test "$(cat "$T/pub/roots.json")" = '{}'
	su nobody -s /bin/sh -c "echo \$\$ >'$T/pub/s.pid'; exec sleep 30" >/dev/null 2>&1 &
	pids+=($!)
	for _ in $(seq 50); do [ -s "$T/pub/s.pid" ] && break; sleep 0.05; done
	sp=$(cat "$T/pub/s.pid")
	pids+=($sp)
	t0=$(date +%s%N)
	refused "nobody: attach --report=/root/r.json to its own process: refused" \
		"numalot attach: cannot write report /root/r.json: Permission denied" \
		as_nobody "timeout 10 '$NA' attach --report=/root/r.json $sp"
	check "...at once, without taking it over ($((($(date +%s%N) - t0) / 1000000)) ms)" \
		test $((($(date +%s%N) - t0) / 1000000)) -lt 5000
	kill $sp
	as_nobody "'$NA' run --policy=monitor --report='$T/pub/mine.json' -- touch '$T/pub/ran'" >/dev/null 2>&1
	check "nobody: a report in a folder nobody may write: written, the command ran" \
		test -s "$T/pub/mine.json" -a -e "$T/pub/ran" -a "$(stat -c %U "$T/pub/mine.json")" = nobody
else
	echo "skip: the other user's cases need root and a user nobody"
fi

# A report that fails only at the end (a full disk: /dev/full): the
# command ran, run says so and exits 1; a command that failed keeps its
# status.
rm -f "$T/pub/ran"
"$N" run --policy=monitor --report=/dev/full -- touch "$T/pub/ran" >"$T/out" 2>"$T/err"
rc=$?
check "a full disk at the end: the command ran, run exits 1 ($rc)" test -e "$T/pub/ran" -a $rc -eq 1
check "...saying the report was not written, and why" \
	sh -c "grep -q 'cannot write /dev/full: No space left on device' '$T/err' &&
		grep -q 'exit status 1: the command exited 0, but its report was not written' '$T/err'"
"$N" run --policy=monitor --report=/dev/full -- sh -c 'exit 3' >"$T/out" 2>"$T/err"
check "...a command that failed keeps its own status" test $? -eq 3

# 4. The closing line: one, on stderr, the last one.
nodes=$("$N" info --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["machine"]["nodes"])')
closing() { grep -c '^numalot \(run\|attach\): [0-9]* periods\?, [0-9]* thread moves\?.*, [0-9]* page moves\?' "$1"; }
"$N" run --period=0.2 --report="$T/r1.json" -- "$W" --threads 1 --seconds 0.8 >/dev/null 2>"$T/r1.err"
check "run: exit 0 and one closing line" test $? -eq 0 -a "$(closing "$T/r1.err")" -eq 1
check "...the last line of its stderr" test "$(tail -1 "$T/r1.err" | closing /dev/stdin)" -eq 1
p=$(json "$T/r1.json" "r['summary']['periods']")
check "...its periods are the report's ($p)" grep -q "^numalot run: $p periods\?, " "$T/r1.err"
moves=$(json "$T/r1.json" "sum(r['summary'][k] for k in ('migrations', 'swaps', 'rollbacks'))")
check "...its thread moves are the report's ($moves)" grep -q "^numalot run: $p periods\?, $moves thread moves\?" "$T/r1.err"
# On one node numalot may still move a thread off a CPU it shares (with
# another program on a busy machine): the reason is for a run without.
if [ "$nodes" = 1 ] && [ "$moves" = 0 ]; then
	check "...on one NUMA node: nothing to migrate between" \
		grep -qx "numalot run: [0-9]* periods\?, 0 thread moves, 0 page moves (1 NUMA node: nothing to migrate between)" "$T/r1.err"
fi
"$N" run --policy=monitor --period=0.2 -- "$W" --threads 2 --seconds 0.5 >/dev/null 2>"$T/m.err"
check "run --policy=monitor: numalot only watched" \
	grep -qx "numalot run: [0-9]* periods\?, 0 thread moves, 0 page moves (monitor: numalot only watched)" "$T/m.err"

if [ "$(nproc)" -ge 2 ]; then
	# Two single-CPU "NUMA nodes" over CPUs 0 and 1: moves to count.
	TOPO="numa:2 core:1 pu:1"
	"$N" run --policy=lbma --param profile=paper --topology="$TOPO" --period=0.2 \
		--report="$T/r2.json" -- "$W" --threads 4 --seconds 1.2 >/dev/null 2>"$T/r2.err"
	moves=$(json "$T/r2.json" "sum(r['summary'][k] for k in ('migrations', 'swaps', 'rollbacks'))")
	check "two nodes: the line counts the report's thread moves ($moves)" \
		grep -q "^numalot run: [0-9]* periods\?, $moves thread moves\?" "$T/r2.err"
	if [ "$moves" -eq 0 ]; then
		check "...and says why none" grep -q "page moves\? (.*)$" "$T/r2.err"
	fi
	"$N" run --topology="$TOPO" -- true >/dev/null 2>"$T/t.err"
	check "two nodes, a command that ends at once: before the first period" \
		grep -q "0 page moves (it ended before numalot's first period)$" "$T/t.err"
fi

# attach: what it took over and how to stop it, once, first; then the
# closing line when SIGINT stops it.
"$W" --threads 3 --seconds 10 >/dev/null 2>&1 &
wp=$!
pids+=($wp)
for _ in $(seq 50); do
	[ "$(ls /proc/$wp/task 2>/dev/null | wc -l)" -ge 4 ] && break
	sleep 0.05
done
"$N" attach --policy=lbma --period=0.2 $wp >/dev/null 2>"$T/a.err" &
ap=$!
pids+=($ap)
for _ in $(seq 50); do
	grep -q managing "$T/a.err" 2>/dev/null && break
	sleep 0.05
done
sleep 0.5
kill -INT $ap
wait $ap
check "attach: stopped by SIGINT, exit 0" test $? -eq 0
check "attach: its first line says what it took over and how to stop it" \
	test "$(head -1 "$T/a.err")" = "numalot attach: managing pid $wp (numalot-workloa, 4 threads) with lbma; stop with Ctrl-C (SIGINT) or SIGTERM"
check "...once" test "$(grep -c managing "$T/a.err")" -eq 1
check "...and it ends with the closing line" test "$(tail -1 "$T/a.err" | closing /dev/stdin)" -eq 1
kill $wp

[ $fails -eq 0 ]

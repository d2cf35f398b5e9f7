#!/usr/bin/env bash
# In the test guest (tests/guest/inside.sh): the real numad beside numalot
# on a real multi-node kernel (docs/real-node.md, "Other placers" and
# "numad in the guests"). numalot lbma runs a process whose data is on one
# node and places it (its threads near the data, or the data near its
# threads); then numad starts, binds the
# process's threads to the nodes it picks and moves its memory there.
# numalot must see numad's hand, let go of the process (the report's
# let_go says why) and never put a thread or a page back. numad skips
# every process while CLOCK_MONOTONIC is under 300 s, so it runs in a time
# namespace 1000 s ahead; it manages only processes of more than 300 MB
# using half a CPU: two threads walking 170 MiB each for up to 45 s.
# GUEST_CASES=numad (not in make check: 90 to 140 s a guest).
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
N=$B/numalot
W=$B/numalot-workload
T=$(mktemp -d)
. tests/lib.sh
. tests/guest/lib.sh
PIDFILE=/var/run/numad.pid LOG=/var/log/numad.log
if ! command -v numad >/dev/null; then
	echo "skip: numad: numad missing (make deps)"
	rm -rf "$T"
	exit 0
fi
if ! unshare --time --fork --monotonic 1000 true 2>/dev/null; then
	echo "skip: numad: no time namespace (unshare --time: util-linux 2.36, Linux 5.6)"
	rm -rf "$T"
	exit 0
fi
if [ -s $PIDFILE ]; then
	echo "skip: numad: numad already runs (pid $(cat $PIDFILE))"
	rm -rf "$T"
	exit 0
fi
balancing_was=$(cat /proc/sys/kernel/numa_balancing 2>/dev/null)
stop_numad() {
	[ -s $PIDFILE ] || return 0
	numad -i 0 >/dev/null 2>&1
	for _ in $(seq 50); do
		[ -e $PIDFILE ] || return 0
		sleep 0.1
	done
}
trap 'stop_numad
	echo "$balancing_was" >/proc/sys/kernel/numa_balancing 2>/dev/null
	[ -d /share ] && mkdir -p /share/numad && cp "$T"/* $LOG /share/numad/ 2>/dev/null
	rm -rf "$T"' EXIT
# As numad is run: the kernel's balancing off (docs/evaluation.md).
echo 0 >/proc/sys/kernel/numa_balancing
nodes=$(ls -d /sys/devices/system/node/node[0-9]* | wc -l)
rm -f $LOG
t0=$SECONDS
read -r up0 wall0 <<<"$(cut -d' ' -f1 /proc/uptime) $(date +%s.%N)"

# Anonymous pages of PID on each node: "N0 N1 ...".
node_pages() {
	awk -v n="$nodes" '/anon=/ {for (i = 1; i <= NF; i++) if ($i ~ /^N[0-9]+=/) {
		split(substr($i, 2), kv, "="); s[kv[1]] += kv[2] }}
		END {for (k = 0; k < n; k++) printf "%d%s", s[k], k < n - 1 ? " " : "\n"}' \
		"/proc/$1/numa_maps" 2>/dev/null
}
# A sample: seconds since the start (the guest's uptime less up0), the
# CPU sets of its threads (each
# once), its pages on each node.
sample() {
	local sets pages
	sets=$(thread_cpus "$pid" | awk '{print $2}' | sort -u | paste -sd' ')
	pages=$(node_pages "$pid")
	[ -n "$pages" ] && echo "$(awk -v u="$up0" '{printf "%.1f", $1 - u}' /proc/uptime) [$sets] $pages" >>"$T/watch"
}
# Two threads walking 170 MiB each, all of it touched first by the main
# thread (--init master): on its node, where lbma takes the threads.
$N run --policy=lbma --period=0.2 --report="$T/numad.json" -- \
	"$W" --threads 2 --mode memory --mem-mb 170 --init master \
	--seconds 45 >"$T/numad.out" 2>&1 &
np=$!
pid=""
for _ in $(seq 200); do
	pid=$(cat /proc/$np/task/$np/children 2>/dev/null)
	pid=${pid%% *}
	[ -n "$pid" ] && break
	sleep 0.05
done
started=$(sed 's/.*) //' /proc/"$pid"/stat 2>/dev/null | cut -d' ' -f20)
# "OFF ALL": its pages off the node that holds most (%), and all of them.
spread() { node_pages "$1" | tr ' ' '\n' | sort -n |
	awk '{a += $1; m = $1} END {print (a ? int(100 * (a - m) / a) : 0), a}'; }
# numad comes once numalot has placed the process (a thread pinned, or
# 5% of its pages moved off its data's node since all were touched: a
# page move of numalot's under way), or after 20 s.
pinned=0 off=0 touched=""
while [ -n "$pid" ] && [ -d /proc/"$pid" ] && [ $((SECONDS - t0)) -lt 20 ]; do
	sample
	pinned=$(pinned_threads "$pid")
	read -r off all <<<"$(spread "$pid")"
	[ -z "$touched" ] && [ "${all:-0}" -ge 85000 ] && touched=$off
	[ "$pinned" -ge 1 ] && break
	[ -n "$touched" ] && [ "$off" -ge $((touched + 5)) ] && break
	sleep 0.5
done
came=$((SECONDS - t0))
# Not a check: where the scheduler already ran both threads on their
# data's node numalot had no reason to act (1 run of 14).
if [ "$pinned" -ge 1 ] || [ "$off" -ge $((${touched:-100} + 5)) ]; then
	placed="numalot had placed it"
else
	placed="numalot had not placed it"
fi
echo "# numad comes at $came s: $placed ($pinned thread(s) pinned, $off% of its pages off its data's node, ${touched:-?}% once touched; $(thread_cpus "$pid" | paste -sd' '))"
# -i 1:2: a look every 1-2 s (default 5-15); -u 100: a process may fill
# its nodes (default 85); -l 7: why it does what it does, in its log.
unshare --time --fork --monotonic 1000 numad -i 1:2 -u 100 -l 7
numad_pid=""
for _ in $(seq 50); do
	numad_pid=$(cat $PIDFILE 2>/dev/null)
	[ -n "$numad_pid" ] && break
	sleep 0.1
done
check "numad: numad started and wrote its pid file $PIDFILE (pid ${numad_pid:-none})" \
	test -n "$numad_pid" -a "$(cat /proc/"${numad_pid:-0}"/comm 2>/dev/null)" = numad
check "numad: its monotonic clock runs 1000 s ahead ($(grep monotonic /proc/"${numad_pid:-0}"/timens_offsets 2>/dev/null); the guest has been up $(cut -d' ' -f1 /proc/uptime) s)" \
	grep -q '^monotonic *1000 ' /proc/"${numad_pid:-0}"/timens_offsets
info=$("$N" info 2>&1 | grep numad)
check "numad: numalot info sees it ($info)" \
	test "${info%%:*}" = "numad runs (pid $numad_pid)"
# Until 6 samples after numad's log says it moved the process (3 s and
# more: the loaded guest starves this loop, and once took no sample in
# numad's 7 s move and the 25 s walks' end), then the workload is stopped.
since=0 stopped=""
while [ -n "$pid" ] && [ -d /proc/"$pid" ]; do
	sample
	grep -q "PID $pid moved to node(s) " $LOG 2>/dev/null && since=$((since + 1))
	[ $since -ge 6 ] && [ -z "$stopped" ] && kill "$pid" 2>/dev/null && stopped=1
	sleep 0.5
done
wait $np
rc=$?
took=$((SECONDS - t0))
stop_numad
check "numad: run succeeded (status $rc, ${stopped:+stopped by the case, }$(tail -1 "$T/numad.out"))" \
	test $rc -eq 0 -o \( -n "$stopped" -a $rc -eq 143 \)
awk 'NR % 4 == 1' "$T/watch" | sed 's/^/# watch: /'
moved=$(grep -m1 "PID $pid moved to node(s) " $LOG 2>/dev/null)
grep -h -m1 "Advising pid $pid " $LOG 2>/dev/null | sed 's/^/# numad: /'
grep -h "Moving memory from" $LOG 2>/dev/null | sed 's/^/# numad: /'
check "numad: numad moved the process (its log: ${moved:-nothing about pid $pid})" \
	test -n "$moved"
to=$(sed -n 's/.*moved to node(s) \([0-9,-]*\) in .*/\1/p' <<<"$moved")
# The CPUs numad bound it to: those of its nodes, as a sorted comma list.
expand() { cpu_list "$1"; printf '%s\n' "${CPUS[@]}" | sort -n | paste -sd,; }
cpus="" to_nodes=""
if [ -n "$to" ]; then
	to_nodes=$(expand "$to")
	cpu_list "$to"
	for n in "${CPUS[@]}"; do
		cpus="$cpus,$(cat /sys/devices/system/node/node"$n"/cpulist)"
	done
	cpus=$(expand "${cpus#,}")
fi
# Each sample: every thread bound to exactly numad's CPUs or not, and the
# share of its pages on numad's nodes.
first_bound="" off_after=0 last_share=""
while read -r t sets_pages; do
	sets=${sets_pages#[}
	sets=${sets%%]*}
	read -ra pages <<<"${sets_pages#*] }"
	all=1
	[ -n "$sets" ] || all=0
	for s in $sets; do [ "$(expand "$s")" = "$cpus" ] || all=0; done
	if [ $all -eq 1 ]; then
		[ -z "$first_bound" ] && first_bound=$t
	elif [ -n "$first_bound" ]; then
		off_after=$((off_after + 1))
	fi
	a=0 s=0
	for k in "${!pages[@]}"; do
		a=$((a + pages[k]))
		[[ ",$to_nodes," == *",$k,"* ]] && s=$((s + pages[k]))
	done
	[ $a -gt 0 ] && last_share=$((100 * s / a))
done <"$T/watch"
check "numad: numad bound its threads to the CPUs of node(s) ${to:-?} (${cpus:-?}) at ${first_bound:-no} s, and they stayed there to the end (samples elsewhere after: $off_after)" \
	test -n "$cpus" -a -n "$first_bound" -a "$off_after" -eq 0
check "numad: its pages on numad's node(s) ${to:-?} at the end, none taken away (${last_share:-?}%)" \
	test "${last_share:-0}" -ge 90
let_go=$(json "$T/numad.json" "[p.get('let_go') for p in r['processes'] if p['pid'] == $pid][0]" 2>/dev/null)
check "numad: the report says numalot let go and why ($let_go)" \
	grep -Eq "^numad \(pid $numad_pid\) runs and .*: numalot left the process to it$" <<<"$let_go"
# When, on the watch's clock: numalot let go (the process's start, stat's
# field 22, is its start_s on numalot's clock), and numad bound it (its
# log's "Advising" line, to the second, just before it binds).
let_at=$(json "$T/numad.json" "[p['completion_s'] - p['start_s'] for p in r['processes'] if p['pid'] == $pid][0]" 2>/dev/null)
let_at=$(awk -v s="${started:-0}" -v l="${let_at:-x}" -v u="$up0" -v hz="$(getconf CLK_TCK)" \
	'BEGIN {if (l == "x") print "none"; else printf "%.1f", s / hz + l - u}')
advised=$(grep -m1 "Advising pid $pid " $LOG 2>/dev/null | sed 's/: Advising.*//')
adv_at=$(date -d "$advised" +%s 2>/dev/null | awk -v w="$wall0" '{printf "%.1f", $1 - w}')
check "numad: numalot let go at $let_at s, at most 3 s after numad bound it (in the second from ${adv_at:-?} s; seen at ${first_bound:-?} s)" \
	awk -v l="$let_at" -v a="${adv_at:-x}" 'BEGIN {exit !(l != "none" && a != "x" && l >= a - 1 && l <= a + 3)}'
# Its one process: every event is about it.
after=$(json "$T/numad.json" "[e['kind'] for p in r['processes'] if p['pid'] == $pid for e in r['events'] if e['t_s'] > p['completion_s'] and e['kind'] in ('migrate', 'swap', 'rollback', 'pages')]" 2>/dev/null)
check "numad: numalot moved none of its threads or pages after it let go (${after:-no report})" \
	test "$after" = "[]"
echo "# numad case took $took s ($nodes nodes)"

# numalot eval's numad system with a process numad manages: mg, 320 MiB,
# one thread, its memory interleaved over every node; eval in the same
# time namespace (numad is its child). numad must have moved it, and eval
# must say so (docs/evaluation.md, "On your own nodes").
t1=$SECONDS
unshare --time --fork --monotonic 1000 --boottime 1000 \
	"$N" eval --systems=numad --classes=interleave --kernels=mg \
	--size=320 --iterations=8 --threads=1 --reps=1 --no-warmup \
	--workload="$W" --seed=25 --json="$T/e.json" --logs="$T/elogs" \
	>"$T/eout" 2>"$T/eerr"
rc=$?
echo "# eval took $((SECONDS - t1)) s"
sed 's/^/# /' "$T/eerr" "$T/eout"
check "numad: eval's numad run exits 0 (status $rc)" test $rc -eq 0
emoved=$(json "$T/e.json" "[x.get('numad_moved') for x in r['runs'] if x['system'] == 'numad']" 2>/dev/null)
check "numad: eval's JSON says numad moved its process ($emoved)" \
	test "$emoved" = "[1]"
check "numad: eval's table says so" \
	grep -q "^numad moved 1 of the 1 processes of its 1 run (its log)$" "$T/eout"

#!/usr/bin/env bash
# numalot-workload --kernel: each NAS-like kernel at the small size, with
# first-touch and master-initialised data, verifies its result and prints
# its figure of merit; with an error injected its check fails (exit 3).
# And the synthetic walkers' --init master and --start-file.
set -u
W=${WORKLOAD:-build/numalot-workload}
N=${NUMALOT:-build/numalot}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

declare -A unit=([cg]=Mflop/s [mg]=MB/s [ep]=Mpairs/s [ft]=Mflop/s [is]=Mkeys/s)
for k in cg mg ep ft is; do
	for init in first-touch master; do
		"$W" --kernel "$k" --threads 3 --init "$init" >"$T/out" 2>&1
		rc=$?
		check "$k, $init: verifies its result (exit 0)" \
			grep -q "^$k: verification passed: " "$T/out"
		[ $rc -eq 0 ] || { bad "$k, $init: exit $rc"; cat "$T/out"; }
		check "$k, $init: 3 threads, the data as asked" \
			grep -q "^$k: 3 threads, $([ $init = master ] && echo master-initialised || echo first-touch) data, size small" "$T/out"
		check "$k, $init: a figure of merit in ${unit[$k]}" \
			grep -qE "^$k: [0-9.]+ s, [0-9.]+ ${unit[$k]}\$" "$T/out"
	done
	"$W" --kernel "$k" --threads 2 --inject-error >"$T/out" 2>&1
	rc=$?
	check "$k: an injected error fails its check (exit 3, not $rc)" test $rc -eq 3
	check "$k: ...and says so" grep -q "^$k: verification FAILED: .*--inject-error" "$T/out"
done
# One thread and more threads than CPUs: the same answers.
"$W" --kernel cg --threads 1 --iterations 40 >"$T/out" 2>&1
check "cg: one thread, 40 iterations, verified" grep -q "^cg: verification passed" "$T/out"
"$W" --kernel is --threads 7 --size 2 >"$T/out" 2>&1
check "is: 7 threads, 2 MiB, verified" grep -q "^is: verification passed" "$T/out"
"$W" --kernel mg --threads 5 --iterations 7 >"$T/out" 2>&1
check "mg: an odd number of sweeps, verified" grep -q "^mg: verification passed" "$T/out"

"$W" --kernel ft --threads 2 --bind >"$T/out" 2>&1
check "ft --bind: bound threads, verified" \
	sh -c "grep -q '^ft: 2 threads (bound, one a CPU)' '$T/out' && grep -q '^ft: verification passed' '$T/out'"
check "the pages are told against where their initialiser ran" \
	grep -qE "^ft: pages: [0-9]+% on the node their initialiser ran on" "$T/out"
"$W" --kernel bt >"$T/out" 2>&1
rc=$?
check "an unknown kernel: exit 2, the valid ones named" \
	sh -c "[ $rc -eq 2 ] && grep -q 'unknown kernel \"bt\" (valid: cg, mg, ep, ft, is)' '$T/out'"
"$W" --kernel cg --size huge >"$T/out" 2>&1
rc=$?
check "a bad --size: exit 2, named" \
	sh -c "[ $rc -eq 2 ] && grep -q -- '--size is small, medium, large, node or MiB' '$T/out'"
"$W" --kernel cg --init lazy >"$T/out" 2>&1
rc=$?
check "a bad --init: exit 2" sh -c "[ $rc -eq 2 ] && grep -q -- '--init is first-touch or master' '$T/out'"
"$W" --help >"$T/out" 2>&1
check "--help: exit 0, the kernels and sizes told" \
	sh -c "[ $? -eq 0 ] && grep -q '^  is  bucket sort' '$T/out' && grep -q '^sizes: small 4 MiB' '$T/out'"
# The synthetic walkers: --start-file holds the whole program (one task,
# no memory touched) until the file exists; --init master makes the main
# thread touch every walker's memory and then walk as thread 0 (2 tasks
# for 2 walkers, not 3).
"$W" --threads 2 --mode memory --mem-mb 8 --seconds 2 --init master \
	--start-file "$T/start" >"$T/out" 2>&1 &
wp=$!
sleep 0.5
held=$(ls /proc/$wp/task | wc -l)
rss=$(awk '/^VmRSS:/ {print $2}' /proc/$wp/status)
touch "$T/start"
tasks=0
for _ in $(seq 15); do
	n=$(ls /proc/$wp/task 2>/dev/null | wc -l)
	[ "$n" -gt "$tasks" ] && tasks=$n
	sleep 0.1
done
wait $wp
check "--start-file: one task and less than 8 MiB resident until it exists ($held, $rss kB)" \
	test "$held" -eq 1 -a "$rss" -lt 8192
check "--init master: the main thread is walker 0 (at most 2 tasks for 2 walkers, saw $tasks)" \
	test "$tasks" -eq 2
check "--init master: both walkers report" \
	sh -c "grep -q '^thread 1: ' '$T/out' && grep -q '^workload: 2 threads' '$T/out'"
"$W" --mode memory --init master --late 1 >"$T/out" 2>&1
rc=$?
check "--init master with --late: exit 2, named" \
	sh -c "[ $rc -eq 2 ] && grep -q 'no --late' '$T/out'"
# Under numalot run: its exit status passes through (3 when wrong).
"$N" run --policy=monitor -- "$W" --kernel ep --threads 2 --inject-error >"$T/out" 2>&1
check "under numalot run a failed check is still exit 3" test $? -eq 3

[ $fails -eq 0 ]

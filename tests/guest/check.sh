#!/usr/bin/env bash
# make guest-check: numalot on a real kernel with 2 and 4 NUMA nodes, in
# QEMU guests that run this machine's own userland (docs/real-node.md).
# Prints the guests' ok / not ok / skip lines, each guest's time, and one
# closing line "guest: N passed, M failed, K skipped, J todo"; exits
# non-zero when a check failed. A guest that cannot be had here is a skip.
# GUEST_CASES (default "numa cgroup slurm movepages peers calibrate kernels
# eval": tests/guest/*_cases.sh; "model", "pages" and "numad" run only when
# named, 1-2.5 minutes a guest each; GUEST_ALL=1: kernels, eval and model in
# the 2-node guest too) and
# GUEST_TIMEOUT (seconds a guest may run, default 600: only a hung guest
# should meet it; beside two CPU hogs and a benchmark the 4-node guest's
# default cases took 410 s) and
# GUEST_NODES (default "2 4") narrow a run; MODEL_MB reaches
# tests/guest/model_cases.sh.
set -u
cd "$(dirname "$0")/../.."
B=$(realpath "${BUILD:-build}")
G=$B/guest
passed=0 failed=0 skipped=0 todo=0
started=$SECONDS
summary() {
	echo "guest: $passed passed, $failed failed, $skipped skipped, $todo todo" \
		"($((SECONDS - started)) s in all)"
	[ $failed -eq 0 ]
	exit
}
out=$(tests/guest/build.sh "$G" 2>&1)
rc=$?
if [ $rc -eq 3 ]; then
	grep '^skip:' <<<"$out"
	skipped=1
	summary
elif [ $rc -ne 0 ]; then
	echo "$out" | tail -20
	echo "not ok - the guest's kernel and initramfs are built"
	failed=1
	summary
fi
nodes_list=""
for n in ${GUEST_NODES:-}; do
	case $n in
	2 | 4) nodes_list="$nodes_list $n" ;;
	*) echo "GUEST_NODES: \"$n\" is not 2 or 4" >&2 && exit 2 ;;
	esac
done
for nodes in ${nodes_list:-2 4}; do
	share=$G/run-$nodes
	rm -rf "$share"
	mkdir -p "$share"
	cat >"$share/run" <<RUN
export BUILD=$B GUEST_CASES="${GUEST_CASES:-numa cgroup slurm movepages peers calibrate kernels eval}" GUEST_ALL="${GUEST_ALL:-}" MODEL_MB="${MODEL_MB:-}"
exec /bin/bash $PWD/tests/guest/inside.sh
RUN
	t0=$SECONDS
	tests/guest/boot.sh "$G" $nodes "$share" "${GUEST_TIMEOUT:-600}"
	rc=$?
	took=$((SECONDS - t0))
	touch "$share/tap" "$share/status"
	# Each line as the project's tests print them, naming the guest.
	sed -n "s/^\(ok\|not ok\) - /\1 - $nodes nodes: /p; s/^skip: /skip: $nodes nodes: /p" \
		"$share/tap"
	p=$(grep -c '^ok - ' "$share/tap")
	k=$(grep -c '^skip' "$share/tap")
	d=$(grep -c '^not ok - .*# TODO' "$share/tap")
	f=$(($(grep -c '^not ok - ' "$share/tap") - d))
	if ! grep -q '^done$' "$share/status"; then
		echo "not ok - $nodes nodes: the guest ran every case (QEMU status $rc, $took s)"
		tail -15 "$share/console.log"
		f=$((f + 1))
	fi
	# A case script that failed without saying which check.
	while read -r name status secs; do
		[ "$name" = done ] && continue
		echo "$nodes nodes: $name cases: status $status, $secs s"
		[ "$status" -ne 0 ] && [ "$f" -eq 0 ] && f=1
	done <"$share/status"
	[ "$f" -gt 0 ] && grep -v '^\(ok\|not ok\|skip\)' "$share/tap" | tail -30
	echo "$nodes-node guest: $p passed, $f failed, $k skipped, $d todo ($took s)"
	passed=$((passed + p)) failed=$((failed + f))
	skipped=$((skipped + k)) todo=$((todo + d))
done
summary

#!/usr/bin/env bash
# The tests' own /proc readers (tests/lib.sh) beside threads that end while
# they are read: what they read of one file never reaches the next read of
# another (bash's `read` did, see status_cpus).
set -u
T=$(mktemp -d)
churn=""
trap 'kill $churn 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
if ! command -v python3 >/dev/null; then
	echo "skip: needs python3 (threads that end while they are read)"
	exit 0
fi

# A process whose threads live about a millisecond each, 20 at a time.
python3 -c '
import threading, time
while True:
    ts = [threading.Thread(target=time.sleep, args=(0.001,)) for _ in range(20)]
    [t.start() for t in ts]
    [t.join() for t in ts]' &
churn=$!
echo "marker line" >"$T/plain"
# Each thread's allowed CPUs (status_cpus, as the guest's watcher reads
# them), then a read of a plain file, and the same through thread_cpus,
# for 3 s or until a read gives something else. A status_cpus that stops
# reading at its line with bash's `read` fails here at once (it did 389
# times in 1,816 tries in 4 s).
rounds=0 foreign="" listed=0 bad_list="" gone=0
declare -A seen
end=$((SECONDS + 3))
while [ $SECONDS -lt $end ] && [ -z "$foreign" ]; do
	for s in /proc/"$churn"/task/*/status; do
		tid=${s%/status}
		seen[${tid##*/}]=1
		status_cpus "$s" || { gone=$((gone + 1)) && continue; }
		listed=$((listed + 1))
		[[ $STATUS_CPUS =~ ^[0-9,-]+$ ]] || bad_list=$STATUS_CPUS
		read -r line <"$T/plain"
		[ "$line" = "marker line" ] || foreign=$line
	done
	thread_cpus $churn >"$T/list"
	read -r line <"$T/plain"
	[ "$line" = "marker line" ] || foreign=$line
	while read -r tid cpus; do
		listed=$((listed + 1))
		[[ $tid =~ ^[0-9]+$ && $cpus =~ ^[0-9,-]+$ ]] || bad_list="$tid $cpus"
	done <"$T/list"
	rounds=$((rounds + 1))
done
# The race was run: threads came and went under the reads (more thread
# ids than the 21 live at once).
came_and_went() { kill -0 "$churn" 2>/dev/null && [ ${#seen[@]} -gt 21 ]; }
check "threads came and went (${#seen[@]} seen, $gone gone before their read)" came_and_went
check "no read of a plain file gets a thread's status text ($rounds rounds${foreign:+: \"${foreign:0:60}\"})" \
	test -z "$foreign"
check "every thread read gives a CPU list ($listed lines${bad_list:+: \"${bad_list:0:60}\"})" \
	test -z "$bad_list"
check "threads were read ($listed)" test "$listed" -gt 0

#!/usr/bin/env bash
# numalot report (issue 26, items 1, 5 and 6): files that are not reports
# refused by name with status 2; the events counted by reason, or each
# with --events; and the advice, on real programs that make the mistakes
# this 1-node, 2-CPU machine can show: all threads on one CPU (taskset),
# more busy threads than CPUs, a multi-process program whose children
# were not followed. The rules that need several NUMA nodes or SMT are
# tested on hand-written reports in tests/unit/digest/test_advice.c
# (docs/advice.md, "Where each rule was tested").
set -u
N=${NUMALOT:-build/numalot}
W=${WORKLOAD:-build/numalot-workload}
T=$(mktemp -d /tmp/numalot-advice.XXXXXX)
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

# refused DESCRIPTION TEXT FILE...: numalot report exits 2 naming TEXT.
refused() {
	local what=$1 text=$2
	shift 2
	"$N" report "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -qF -- "$text" "$T/err"; then
		ok "$what"
	else
		bad "$what (status $rc, stderr: $(cat "$T/err"))"
	fi
}

# 1. Not reports.
refused "a scenario file is refused, named, with what to do" \
	"numalot report: etc/scenarios/four-node-mix.json: not a numalot report but a scenario (it has no policy and no error): run it with numalot sim etc/scenarios/four-node-mix.json" \
	etc/scenarios/four-node-mix.json
refused "a folder of scenarios: each file refused by name" \
	"etc/scenarios/two-node-remote.json: not a numalot report but a scenario" \
	etc/scenarios
check "...every one of them" test "$(grep -c 'not a numalot report' "$T/err")" -eq "$(ls etc/scenarios/*.json | wc -l)"
echo '{"name": "x"}' >"$T/other.json"
refused "a JSON object that is no report" \
	"$T/other.json: not a numalot report (it has no policy and no error)" \
	"$T/other.json"
echo '{"reports": [{"policy": {"name": "imar2"}}, {"jobs": 1}]}' >"$T/list.json"
refused "a list of reports holding a non-report" \
	"$T/list.json: not a numalot report (an entry of \"reports\" is not a report)" \
	"$T/list.json"

# 2. All threads on one CPU: taskset -c 0 over two busy threads.
"$N" run --period=0.2 --report="$T/one.json" -- \
	taskset -c 0 "$W" --threads 2 --seconds 2 --mode compute >/dev/null 2>&1
"$N" report "$T/one.json" >"$T/one.txt" 2>&1
check "report: a real report is not refused" test $? -eq 0
check "taskset -c 0: advice one_cpu" grep -qF "all its threads shared one CPU [one_cpu]" "$T/one.txt"
check "...its evidence: the CPU and how many threads" grep -qE "evidence: its 2 busy threads were all on CPU 0 when numalot first sampled them" "$T/one.txt"
check "...what numalot did" grep -qE "numalot: numalot (moved [0-9]+ of them to other CPUs|did not move them)" "$T/one.txt"
check "...what to set next time: srun and OpenMP" grep -qE "next time, without numalot: .*srun --cpus-per-task=N --cpu-bind=cores.*OMP_PLACES=cores OMP_PROC_BIND=close" "$T/one.txt"
check "...the report records the sampled CPUs, bounded" test \
	"$(json "$T/one.json" "all(1 <= len(t['cpus']) <= 16 and t['cpus'][0][1] == 0 for t in r['threads'])")" = True
# Events: numalot sees taskset's one CPU and moves nothing here, so the
# events come from a modelled 2-node run that migrates and releases.
"$N" sim etc/scenarios/two-node-remote.json --report="$T/sim.json" >/dev/null
"$N" report "$T/sim.json" >"$T/sim.txt" 2>&1
check "events counted by kind and reason" grep -qE "^ +[0-9]+ migrate +[a-z]" "$T/sim.txt"
check "...with a pointer to --events" grep -qF "events by kind and reason (numalot report --events lists each)" "$T/sim.txt"
check "...no such list where there is no event" bash -c "! grep -qF 'events by kind' '$T/one.txt'"
"$N" report --events "$T/sim.json" >"$T/ev.txt"
nev=$(json "$T/sim.json" "len(r['events'])")
check "--events: one line per event ($nev)" test "$nev" -gt 0 -a \
	"$(grep -cE '^ +[0-9.]+ s  [a-z]+ ' "$T/ev.txt")" -eq "$nev"
"$N" report --events "$T/one.json" >"$T/ev1.txt"
check "...no unknown CPU written as -1" bash -c "! grep -q -- '-1' '$T/ev.txt' '$T/ev1.txt'"
"$N" report --html="$T/one.html" "$T/one.json" >/dev/null
check "the HTML page shows the advice" grep -qF 'class="advice" data-rule="one_cpu"' "$T/one.html"
check "...and no \"CPU -1 (node -1)\" in a hover text" bash -c "! grep -qF 'CPU -1' '$T/one.html'"

# 3. More busy threads than CPUs: four on two (monitor: numalot moves
# nothing, the placement is the OS's).
"$N" run --policy=monitor --period=0.2 --report="$T/over.json" -- \
	"$W" --threads 4 --seconds 2 --mode compute >/dev/null 2>&1
"$N" report "$T/over.json" >"$T/over.txt"
check "4 threads on 2 CPUs: advice oversubscribed" grep -qF "more busy threads than CPUs [oversubscribed]" "$T/over.txt"
check "...its evidence" grep -qE "evidence: 4 busy threads at once on the [12] CPUs? its threads ran on; a busy thread had [0-9]+% of a CPU" "$T/over.txt"
check "...what to set next time" grep -qF "OMP_NUM_THREADS" "$T/over.txt"

# 4. Children not followed: a shell that starts two programs.
"$N" run --period=0.2 --report="$T/kids.json" -- sh -c \
	"'$W' --threads 1 --seconds 2 & '$W' --threads 1 --seconds 2 & wait" >/dev/null 2>&1
"$N" report "$T/kids.json" >"$T/kids.txt"
check "sh starting two programs, no --children: advice children_not_followed" grep -qF "[children_not_followed]" "$T/kids.txt"
check "...the report counts them" test "$(json "$T/kids.json" "r['processes'][0].get('children_not_followed')")" = 2
check "...the hint: --children" grep -qF "add --children (numalot run --children -- CMD)" "$T/kids.txt"
"$N" run --children --period=0.2 --report="$T/kids2.json" -- sh -c \
	"'$W' --threads 1 --seconds 1 & '$W' --threads 1 --seconds 1 & wait" >/dev/null 2>&1
"$N" report "$T/kids2.json" >"$T/kids2.txt"
check "...with --children: no such advice, the children are managed" bash -c \
	"! grep -qF children_not_followed '$T/kids2.txt' && test \"\$(grep -c '^  process ' '$T/kids2.txt')\" -ge 3"

# 5. An older report (no cpus, no smt_siblings): still summarised and
# drawn, no advice guessed.
python3 -c "
import json; r = json.load(open('$T/one.json'))
for t in r['threads']: t.pop('cpus', None)
r['summary'].pop('cpus_dropped', None)
json.dump(r, open('$T/old.json', 'w'))"
"$N" report --html="$T/old.html" "$T/old.json" >"$T/old.txt" 2>&1
check "an older report: summarised, drawn, no one_cpu guessed" bash -c \
	"test -s '$T/old.html' && grep -q 'periods:' '$T/old.txt' && ! grep -q one_cpu '$T/old.txt'"

[ "$fails" -eq 0 ]

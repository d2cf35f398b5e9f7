#!/usr/bin/env bash
# The site collection recipes of docs/slurm.md: the site log as
# node_exporter textfile metrics (etc/numalot-textfile.sh), and a job's
# totals into its AdminComment (etc/numalot-admincomment.sh, sacctmgr
# stood in for).
set -u
cd "$(dirname "$0")/../.."
N=$(readlink -f "${NUMALOT:-build/numalot}")
if ! command -v jq >/dev/null; then
	echo "skip: the recipes need jq"
	exit 0
fi
T=$(mktemp -d /tmp/numalot-recipes.XXXXXX)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh

cat >"$T/steps.jsonl" <<'L'
{"time":"t","job":1,"step":0,"node":"n","policy":"lbma","migrations":3,"swaps":0,"rollbacks":1,"page_moves":2,"pages_moved_bytes":8192,"cpu_s_per_numa_node":[1.5,0.5]}
{"time":"t","job":2,"step":0,"node":"n","policy":"lbma","migrations":4,"error":"lost","cpu_s_per_numa_node":[1,1]}
{"time":"t","job":3,"step
{"time":"t","job":3,"step":0,"node":"n","policy":"monitor","cpu_s_per_numa_node":null}
L
mkdir -p "$T/prom"
etc/numalot-textfile.sh "$T/steps.jsonl" "$T/prom/numalot.prom"
check "textfile: exit 0, nothing left behind" \
	test $? -eq 0 -a "$(ls "$T/prom")" = numalot.prom
p="$T/prom/numalot.prom"
check "textfile: steps per policy (a torn line skipped)" \
	grep -qx 'numalot_steps_total{policy="lbma"} 2' "$p"
check "textfile: ...monitor" grep -qx 'numalot_steps_total{policy="monitor"} 1' "$p"
check "textfile: errors" grep -qx 'numalot_step_errors_total{policy="lbma"} 1' "$p"
check "textfile: migrations summed" grep -qx 'numalot_migrations_total{policy="lbma"} 7' "$p"
check "textfile: bytes of pages moved" grep -qx 'numalot_pages_moved_bytes_total{policy="lbma"} 8192' "$p"
check "textfile: CPU seconds per NUMA node" \
	grep -qx 'numalot_cpu_seconds_total{policy="lbma",numa_node="1"} 1.5' "$p"
check "textfile: every metric has HELP and TYPE" \
	test "$(grep -c '^# TYPE numalot_.* counter$' "$p")" -eq 8 -a "$(grep -c '^# HELP' "$p")" -eq 8

# textfile run by root into a folder another user may write (the
# textfile folder is often the prometheus user's): never through that
# user's link, neither at the temporary name (the script's pid, planted
# just before it runs) nor at the output's (a link to a folder).
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	nb() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }
	chmod 755 "$T" # the user reaches their folder
	mkdir -m 700 "$T/rootonly"
	echo "root's" >"$T/rootonly/target"
	mkdir "$T/theirs" && chown nobody "$T/theirs"
	o="$T/theirs/numalot.prom"
	sh -c 'p=$$; setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups \
		ln -s "$1/rootonly/target" "$2.tmp.$p"; exec etc/numalot-textfile.sh "$1/steps.jsonl" "$2"' \
		sh "$T" "$o" 2>/dev/null
	check "textfile as root: a user's link at its temporary name is not written through" \
		test "$(cat "$T/rootonly/target")" = "root's"
	rm -f "$T"/theirs/*
	nb ln -s "$T/rootonly" "$o"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$o" 2>/dev/null
	check "textfile as root: a user's link to a folder at the output's name is replaced, not followed" \
		test "$(ls "$T/rootonly")" = target -a -f "$o" -a ! -L "$o"
	check "...the metrics are there" grep -q '^numalot_steps_total' "$o"
fi

# AdminComment: the totals of the job's site copies, through scontrol.
mkdir -p "$T/site" "$T/bin"
for n in nla nlb; do
	cat >"$T/site/numalot-42.0.$n.json" <<J
{"numalot": "t", "policy": {"name": "lbma"}, "machine": {"nodes": 2},
 "slurm": {"job": 42, "step": 0, "uid": 0, "node": "$n", "tasks": 1},
 "processes": [], "threads": [{"tid": 1, "time_per_node_s": [1, 1]}],
 "summary": {"periods": 4, "migrations": 2, "swaps": 0, "rollbacks": 0,
  "duration_s": 4}}
J
done
printf '#!/bin/sh\nprintf "%%s\\n" "$@" >"%s/sacctmgr.args"\n' "$T" >"$T/bin/sacctmgr"
chmod 755 "$T/bin/sacctmgr"
PATH="$T/bin:$PATH" NUMALOT="$N" NUMALOT_REPORT_DIR="$T/site" SLURM_JOB_ID=42 \
	etc/numalot-admincomment.sh
check "admincomment: exit 0" test $? -eq 0
check "admincomment: sacctmgr updates the job's record" \
	test "$(head -5 "$T/sacctmgr.args" | tr '\n' ' ')" = "-i update job where jobid=42 "
c=$(sed -n 's/^AdminComment=numalot://p' "$T/sacctmgr.args")
echo "$c" >"$T/comment.json"
check "admincomment: the job's totals, compact JSON" \
	test "$(json "$T/comment.json" "r['job'], r['nodes'], r['migrations']")" = "42 2 4"
rm -f "$T/sacctmgr.args"
PATH="$T/bin:$PATH" NUMALOT="$N" NUMALOT_REPORT_DIR="$T/site" SLURM_JOB_ID=42 \
	SLURM_ARRAY_JOB_ID=40 SLURM_ARRAY_TASK_ID=2 etc/numalot-admincomment.sh
check "admincomment: an array's task is ARRAYJOB_TASK" \
	grep -qx "jobid=40_2" "$T/sacctmgr.args"
rm -f "$T/sacctmgr.args"
PATH="$T/bin:$PATH" NUMALOT="$N" NUMALOT_REPORT_DIR="$T/site" SLURM_JOB_ID=43 \
	etc/numalot-admincomment.sh
check "admincomment: a job without reports: nothing done" \
	test $? -eq 0 -a ! -e "$T/sacctmgr.args"

[ $fails -eq 0 ]

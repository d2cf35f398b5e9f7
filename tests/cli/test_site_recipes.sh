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

	# Who writes (docs/slurm.md, "Security"): root only where no other
	# user can change anything on the way; in a user's folder, that
	# user, who could swap root's temporary file for a link there (a
	# race, so the writer is checked rather than the race run).
	own() { stat -c '%U %a' -- "$1" 2>/dev/null; }
	check "textfile as root in a user's folder: written as that user, 0644" \
		test "$(own "$o")" = "nobody 644"
	check "...with that user's own group" test "$(stat -c %g "$o")" = "$(id -g nobody)"
	rm -f "$o"
	(cd "$T/theirs" && "$OLDPWD/etc/numalot-textfile.sh" ../steps.jsonl numalot.prom)
	check "...a relative output too" test "$(own "$o")" = "nobody 644"
	rm -f "$o"
	# Root's link (in root's folder) to the user's folder: the folder
	# the link leads to decides, not the link.
	mkdir -m 755 "$T/links" && ln -s "$T/theirs" "$T/links/prom"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$T/links/prom/numalot.prom"
	check "...reached through root's link: written as that user" \
		test "$(own "$o")" = "nobody 644"
	ln -s ../theirs/. "$T/links/rel"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$T/links/./rel//numalot.prom"
	check "...through a relative link, with . and //: as that user" \
		test "$(own "$o")" = "nobody 644"
	# The first folder on the way that is not root's decides: root's
	# folder made inside the user's is not root's to write in.
	mkdir -m 755 "$T/theirs/roots"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$T/theirs/roots/numalot.prom" 2>/dev/null
	check "...root's folder inside the user's: not written (as the user)" \
		test $? -ne 0 -a -z "$(ls -A "$T/theirs/roots")"
	# Root's folders: root's alone, or a sticky one such as /tmp, root
	# writes; one others may write that is not sticky (or its group)
	# is refused, naming it.
	mkdir -m 755 "$T/mine"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$T/mine/numalot.prom"
	check "textfile as root in root's folder: written as root" \
		test "$(own "$T/mine/numalot.prom")" = "root 644"
	mkdir "$T/sticky" && chmod 1777 "$T/sticky"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$T/sticky/numalot.prom"
	check "textfile as root in a shared sticky folder: written as root" \
		test "$(own "$T/sticky/numalot.prom")" = "root 644"
	# A link of root's in the sticky folder, as any user's hard link of
	# one of root's links would be (fs.protected_hardlinks=0): not
	# followed.
	mkdir -m 755 "$T/mine2" && ln -s "$T/mine2" "$T/sticky/rl"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$T/sticky/rl/numalot.prom" 2>"$T/err"
	check "textfile as root through root's link in a sticky folder: refused" \
		test $? -ne 0 -a -z "$(ls -A "$T/mine2")"
	check "...naming it" grep -q "$T/sticky/rl is a link in a folder others may write" "$T/err"
	# A user's link there too (another user's hard link of it would be
	# that user's): not followed, not written as its owner.
	rm -f "$o"
	nb ln -s "$T/theirs" "$T/sticky/ul"
	etc/numalot-textfile.sh "$T/steps.jsonl" "$T/sticky/ul/numalot.prom" 2>"$T/err"
	check "textfile as root through a user's link in a sticky folder: refused" \
		test $? -ne 0 -a ! -e "$T/theirs/numalot.prom"
	check "...naming it" grep -q "$T/sticky/ul is a link in a folder others may write" "$T/err"
	for m in 777 775; do
		mkdir "$T/open$m" && chmod $m "$T/open$m"
		etc/numalot-textfile.sh "$T/steps.jsonl" "$T/open$m/numalot.prom" 2>"$T/err"
		check "textfile as root in root's folder others may write ($m): refused" \
			test $? -ne 0 -a -z "$(ls -A "$T/open$m")"
		check "...naming it" grep -q "$T/open$m is root's but others may write it" "$T/err"
	done
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

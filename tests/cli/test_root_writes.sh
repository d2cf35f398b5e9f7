#!/usr/bin/env bash
# numalot run by root (a site's `numalot eval`, `report --html`, `run
# --report`...) never writes where a user chooses (docs/slurm.md,
# "Security"): a file in a folder a user owns or may write is refused,
# naming the folder, before anything runs; in a shared sticky folder such
# as /tmp the file is replaced by root's own, never written through a
# link a user planted there. Run as another user, numalot writes as before.
set -u
N=${NUMALOT:-build/numalot}
T=$(mktemp -d /tmp/numalot-rootwrites.XXXXXX)
chmod 755 "$T"
trap 'rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1; then
	echo "skip: needs root and the user nobody"
	exit 0
fi
N=$(cd "$(dirname "$N")" && pwd)/$(basename "$N")
S=$PWD/etc/scenarios/two-node-remote.json
as_nobody() { setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$@"; }

# Root's own file the user aims at, in a folder only root may change.
mkdir -m 700 "$T/rootonly"
echo "root's" >"$T/rootonly/target"
untouched() { test "$(cat "$T/rootonly/target")" = "root's"; }
# A folder of the user's, and a shared sticky one (as /tmp).
mkdir "$T/user" && chown nobody "$T/user"
mkdir -m 1777 "$T/sticky"
plant() { as_nobody ln -sf "$T/rootonly/target" "$1"; }

# refused DESCRIPTION FILE ARGS...: numalot ARGS exits non-zero, saying
# it will not write FILE as root and which folder a user controls, and
# the target is untouched.
refused() {
	local what=$1 file=$2
	shift 2
	"$N" "$@" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -ne 0 ] && untouched &&
		grep -qF "will not write $file as root: $T/user belongs to uid $(id -u nobody)" "$T/err"; then
		ok "$what"
	else
		bad "$what (status $rc, target: $(cat "$T/rootonly/target"), stderr: $(cat "$T/err"))"
	fi
	echo "root's" >"$T/rootonly/target"
}

# 1. A folder of the user's: refused, whichever way numalot writes.
plant "$T/user/r.json"
refused "sim --report in a user's folder, at a user's link: refused" \
	"$T/user/r.json" sim "$S" --policy=lbma --seed=1 --report="$T/user/r.json"
refused "...and a new file there too" \
	"$T/user/new.json" sim "$S" --policy=lbma --seed=1 --report="$T/user/new.json"
check "...nothing made there" test ! -e "$T/user/new.json"
"$N" sim "$S" --policy=lbma --seed=1 --report="$T/r.json" >/dev/null 2>&1
plant "$T/user/r.html"
refused "report --html in a user's folder: refused" \
	"$T/user/r.html" report "$T/r.json" --html="$T/user/r.html"
plant "$T/user/run.json"
rm -f "$T/ran"
refused "run --report in a user's folder: refused" \
	"$T/user/run.json" run --report="$T/user/run.json" -- touch "$T/ran"
check "...before the command ran" test ! -e "$T/ran"
refused "eval --logs in a user's folder: refused before any run" \
	"$T/user/logs" eval --reps=1 --logs="$T/user/logs" --json="$T/e.json" -- true
check "...no folder made there" test ! -e "$T/user/logs"
# Below a folder of the user's, a folder of root's is the user's to move.
mkdir "$T/user/rootsub"
refused "a root's folder inside a user's: refused" \
	"$T/user/rootsub/r.json" sim "$S" --policy=lbma --seed=1 --report="$T/user/rootsub/r.json"
# Relative names are the working folder's.
(cd "$T/user" && "$N" sim "$S" --policy=lbma --seed=1 --report=rel.json >"$T/out" 2>"$T/err")
check "a relative name in a user's working folder: refused" \
	test $? -ne 0 -a ! -e "$T/user/rel.json"

# 2. A shared sticky folder: root's file replaces the user's link.
plant "$T/sticky/r.json"
"$N" sim "$S" --policy=lbma --seed=1 --report="$T/sticky/r.json" >"$T/out" 2>"$T/err"
check "sim --report at a user's link in a sticky folder: written" test $? -eq 0
check "...not through the link" untouched
check "...root's own regular file in its place" \
	test ! -L "$T/sticky/r.json" -a "$(stat -c %U "$T/sticky/r.json")" = root
check "...holding the report" test "$(json "$T/sticky/r.json" "r['policy']['name']")" = lbma
echo "root's" >"$T/rootonly/target"
plant "$T/sticky/r.html"
"$N" report "$T/r.json" --html="$T/sticky/r.html" >/dev/null 2>&1
check "report --html at a user's link in a sticky folder: not through it" \
	test $? -eq 0 -a ! -L "$T/sticky/r.html" -a -s "$T/sticky/r.html"
check "...the target untouched" untouched
as_nobody mkfifo "$T/sticky/f.json"
timeout 20 "$N" sim "$S" --policy=lbma --seed=1 --report="$T/sticky/f.json" >/dev/null 2>&1
check "a user's FIFO there: replaced, not waited on" test $? -eq 0 -a -f "$T/sticky/f.json"
check "nothing left beside them" \
	test "$(ls -A "$T/sticky" | sort | tr '\n' ' ')" = "f.json r.html r.json "

# A path through a user's link and "..": what root renames is the path
# it checked (the sticky folder's), not where the user's link leads.
mkdir "$T/user/sub"
as_nobody ln -s "$T/user/sub" "$T/sticky/ulink"
"$N" eval --reps=1 --json="$T/sticky/ulink/../e.json" -- true >"$T/out" 2>"$T/err"
check "eval --json through a user's link and ..: written ($(tail -1 "$T/err"))" \
	test $? -eq 0 -a -s "$T/sticky/e.json" -a ! -L "$T/sticky/e.json"
check "...nothing of it in the user's folders" \
	test -z "$(ls -A "$T/user" | grep e.json)"
rm -f "$T/sticky/ulink" "$T/sticky/e.json"

# 3. Root's own folders and devices work as before.
"$N" sim "$S" --policy=lbma --seed=1 --report="$T/own.json" >/dev/null 2>&1
check "root's own folder: written" test -s "$T/own.json"
mkdir "$T/sub"
(cd "$T/sub" && "$N" sim "$S" --policy=lbma --seed=1 --report=../up.json >/dev/null 2>&1)
check "a relative name through .. in root's folders: written" test -s "$T/up.json"
"$N" sim "$S" --policy=lbma --seed=1 --report=/dev/null >/dev/null 2>&1
check "a device root names (/dev/null): written to" test $? -eq 0 -a -c /dev/null

# 4. Another user writes in their own folder as before.
as_nobody "$N" sim "$S" --policy=lbma --seed=1 --report="$T/user/mine.json" >/dev/null 2>&1
check "nobody in their own folder: written" \
	test -s "$T/user/mine.json" -a "$(stat -c %U "$T/user/mine.json")" = nobody

[ $fails -eq 0 ]

#!/bin/sh
# numalot: the site log (plugstack site_log=, one JSON line per job step
# on this node) as metrics for Prometheus' node_exporter, through its
# textfile collector (docs/slurm.md, "Site collection").
#
#   numalot-textfile.sh SITE_LOG OUTPUT.prom
#
# Run it every minute (a systemd timer or cron) with OUTPUT in the folder
# node_exporter reads (--collector.textfile.directory). Counters count
# from the log's start: when the log is rotated they start again, which
# Prometheus takes as a counter reset. Needs jq, and run by root setpriv
# (util-linux).
set -eu
log=${1:?usage: numalot-textfile.sh SITE_LOG OUTPUT.prom}
out=${2:?usage: numalot-textfile.sh SITE_LOG OUTPUT.prom}
me=numalot-textfile.sh
case $out in /*) ;; *) out=$(pwd -P)/$out ;; esac
# Who writes the output, run by root (docs/slurm.md, "Security"): a file
# root made by name in a folder another user may change could be swapped
# for that user's link before root wrote or chmod'ed it. Root writes only
# where no other user can change anything on the way: every folder and
# link root's, none writable by others but sticky ones (/tmp). Else the
# owner of the first folder or link on the way that is not root's (the
# prometheus user's textfile folder) writes, in its own group: that user
# could change the folder anyway, and goes only where it may. A folder of
# root's that others may write and is not sticky is refused. Links are
# followed as the kernel follows them: a link's target is walked too
# (root's link to a user's folder leads to that user's folder).
owner=0
if [ "$(id -u)" = 0 ]; then
	at='' rest=${out%/*} links=0 open=0
	while :; do
		rest=${rest#"${rest%%[!/]*}"} # the slashes in front
		[ -n "$rest" ] || break
		c=${rest%%/*}
		rest=${rest#"$c"}
		case $c in
		.) continue ;;
		..)
			at=${at%/*} # at is a folder, no link in it
			m=$(stat -c %f -- "${at:-/}") || exit 1
			open=$(((0x$m & 0022) != 0))
			continue
			;;
		esac
		st=$(stat -c '%u %f' -- "$at/$c") || exit 1 # a link itself
		uid=${st% *} mode=$((0x${st#* }))
		# In a folder others may write (/tmp), a link, whoever owns
		# it, may be another user's hard link of it from elsewhere
		# (fs.protected_hardlinks=0): who put it there cannot be
		# told, so it is not followed.
		if [ $((mode & 0xf000)) -eq $((0xa000)) ] && [ "$open" = 1 ]; then
			echo "$me: $at/$c is a link in a folder others" \
				"may write: give the output's real folder" >&2
			exit 1
		fi
		if [ "$uid" != 0 ]; then
			owner=$uid
			break
		fi
		if [ $((mode & 0xf000)) -eq $((0xa000)) ]; then
			links=$((links + 1))
			if [ $links -gt 40 ]; then
				echo "$me: $at/$c: too many links" >&2
				exit 1
			fi
			t=$(readlink -- "$at/$c")
			case $t in /*) at= open=0 ;; esac
			rest=$t/$rest
			continue
		fi
		if [ $((mode & 0xf000)) -ne $((0x4000)) ]; then
			echo "$me: $at/$c is not a folder" >&2
			exit 1
		fi
		if [ $((mode & 0022)) -ne 0 ] && [ $((mode & 01000)) -eq 0 ]; then
			echo "$me: $at/$c is root's but others may write it:" \
				"make it root's alone, or give the output's folder" \
				"to the user who reads it" >&2
			exit 1
		fi
		at=$at/$c
		open=$(((mode & 0022) != 0))
	done
fi
# The owner's own group (never the folder's, which may be root's).
if [ "$owner" != 0 ]; then
	if ! group=$(id -g -- "$owner" 2>/dev/null); then
		echo "$me: uid $owner, the owner of the output's folder," \
			"has no name: not writing as it" >&2
		exit 1
	fi
	if [ "$group" = 0 ]; then
		echo "$me: uid $owner's group is root's: not writing as it" >&2
		exit 1
	fi
	if ! command -v setpriv >/dev/null; then
		echo "$me: needs setpriv (util-linux) to write as uid $owner" >&2
		exit 1
	fi
fi
metrics() {
	# A torn or foreign line is skipped, never fatal.
	jq -nrR '
	[inputs | fromjson? | select(type == "object" and has("job"))] as $all
	| ($all | group_by(.policy // "none")) as $by
	| def metric($name; $help; f):
		"# HELP numalot_\($name) \($help)",
		"# TYPE numalot_\($name) counter",
		($by[] | "numalot_\($name){policy=\"\(.[0].policy // "none")\"} \(f)");
	metric("steps_total"; "Job steps numalot reported on this node."; length),
	metric("step_errors_total"; "Job steps whose report holds an error.";
		map(select(.error)) | length),
	metric("migrations_total"; "Threads moved (migrations).";
		map(.migrations // 0) | add),
	metric("swaps_total"; "Thread swaps."; map(.swaps // 0) | add),
	metric("rollbacks_total"; "Moves undone."; map(.rollbacks // 0) | add),
	metric("page_moves_total"; "Page moves."; map(.page_moves // 0) | add),
	metric("pages_moved_bytes_total"; "Bytes of pages moved.";
		map(.pages_moved_bytes // 0) | add),
	"# HELP numalot_cpu_seconds_total CPU time of managed threads per NUMA node.",
	"# TYPE numalot_cpu_seconds_total counter",
	($by[] | (.[0].policy // "none") as $p
		| [.[] | (.cpu_s_per_numa_node // []) | to_entries[]]
		| group_by(.key)[]
		| "numalot_cpu_seconds_total{policy=\"\($p)\",numa_node=\"\(.[0].key)\"} \(map(.value // 0) | add)")
' <"$log"
}
m=$(metrics) # jq failed: nothing written
# Written by the owner found above (no capability, no way back to root):
# a new file beside the output (mktemp: O_EXCL, no link followed), renamed
# over it (mv -T: a link there, even to a folder, is replaced, never
# followed).
as_owner() {
	if [ "$owner" = 0 ]; then
		"$@"
	else
		setpriv --reuid="$owner" --regid="$group" --clear-groups \
			--inh-caps=-all "$@"
	fi
}
# shellcheck disable=SC2016
printf '%s\n' "$m" | as_owner sh -c 'set -eu
umask 022
tmp=$(mktemp "$1.XXXXXX")
trap '\''rm -f "$tmp"'\'' EXIT
cat >"$tmp"
chmod 0644 "$tmp"
mv -fT "$tmp" "$1"
trap - EXIT' sh "$out"

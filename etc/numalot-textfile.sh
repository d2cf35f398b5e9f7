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
# Prometheus takes as a counter reset. Needs jq.
set -eu
log=${1:?usage: numalot-textfile.sh SITE_LOG OUTPUT.prom}
out=${2:?usage: numalot-textfile.sh SITE_LOG OUTPUT.prom}
# A new file beside the output (mktemp: O_EXCL, no link followed), renamed
# over it (mv -T: a link there, even to a folder, is replaced, never
# followed): run by root in a folder another user may write (the
# prometheus user's), that user chooses nothing (docs/slurm.md,
# "Security").
tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
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
' <"$log" >"$tmp"
chmod 0644 "$tmp"
mv -fT "$tmp" "$out"
trap - EXIT

#!/usr/bin/env bash
# numalot's and numalotd's command lines (numalot(1), numalotd(8)): --help
# on every command, options with their value after a space or an '=',
# bad options named; numalot report over a job's files: a row per node and
# step, the job's totals, and --json.
set -u
N=${NUMALOT:-build/numalot}
D=${NUMALOTD:-$(dirname "$N")/numalotd}
T=$(mktemp -d /tmp/numalot-options.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "$0")/../lib.sh"

# --help on every command: its own usage, on stdout, exit 0.
for c in sim bench run attach info status request report calibrate eval version; do
	"$N" "$c" --help >"$T/out" 2>"$T/err"
	rc=$?
	check "numalot $c --help: exit 0, its usage on stdout" \
		test $rc -eq 0 -a ! -s "$T/err" -a "$(head -1 "$T/out" | cut -d' ' -f1-3)" = "usage: numalot $c"
	"$N" "$c" -h >"$T/out2" 2>&1
	check "numalot $c -h: the same" cmp -s "$T/out" "$T/out2"
done
check "numalot --help lists the commands" sh -c "'$N' --help | grep -q 'report    summarise'"
check "numalot help sim: sim's usage" sh -c "'$N' help sim | grep -q 'usage: numalot sim'"
check "numalot help params: each parameter's row, from core/policy/params.c" \
	sh -c "'$N' help params | grep -qF '| \`hold_s\` | 5 | 0 | 0 to 86400 | s |'"
"$D" --help >"$T/out" 2>"$T/err"
check "numalotd --help: exit 0, its usage" test $? -eq 0 -a ! -s "$T/err" -a "$(head -1 "$T/out")" = "usage: numalotd [OPTIONS]"
check "numalotd --version" sh -c "'$D' --version | grep -q '^numalotd '"

# The man pages: EXAMPLES, ENVIRONMENT and FILES, and man renders them
# without a warning.
man_dir="$(dirname "$0")/../../docs/man"
for m in numalot.1 numalotd.8 numalot-spank.8; do
	check "$m: EXAMPLES, ENVIRONMENT and FILES" \
		test "$(grep -cE '^\.SH (EXAMPLES|ENVIRONMENT|FILES)$' "$man_dir/$m")" -eq 3
	if command -v man >/dev/null; then
		check "$m: man renders it without a warning" \
			test -z "$(MANWIDTH=80 man --warnings -l "$man_dir/$m" 2>&1 >/dev/null)"
	fi
done
# Every plugstack key, numalotd option and --os model the code takes is
# in its man page (a user reading the page meets what they may write).
src="$(dirname "$0")/../.."
keys="config $(grep -o '{"[a-z_]*", "[a-z-]*"}' "$src/core/protocol/siteconf.c" | cut -d'"' -f2)"
missing=$(for k in $keys; do grep -q "$k=" "$man_dir/numalot-spank.8" || echo "$k"; done)
check "numalot-spank(8) has every plugstack key ($(echo $keys | wc -w); missing: ${missing:-none})" \
	test -n "$keys" -a -z "$missing"
opts=$(grep -o '{"[a-z-]*", \(required\|no\)_argument' "$src/core/agent/agent_args.c" | cut -d'"' -f2)
missing=$(for o in $opts; do grep -qF -- "\\-\\-$(sed 's/-/\\-/g' <<<"$o")" "$man_dir/numalotd.8" || echo "$o"; done)
check "numalotd(8) has every option ($(echo $opts | wc -w); missing: ${missing:-none})" \
	test -n "$opts" -a -z "$missing"
oses=$("$N" sim etc/scenarios/two-node-remote.json --os=bogus 2>&1 | sed -n 's/.*(valid: \(.*\))$/\1/p' | tr -d ,)
missing=$(for o in $oses; do grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$man_dir/numalot.1" || echo "$o"; done)
check "numalot(1) has every --os model ($oses; missing: ${missing:-none})" \
	test -n "$oses" -a -z "$missing"
check "numalot-spank(8) documents #SBATCH and the SLURM_SPANK_ variable" \
	sh -c "grep -q '#SBATCH \\\\-\\\\-numalot=' '$man_dir/numalot-spank.8' && grep -q SLURM_SPANK__SLURM_SPANK_OPTION_numalot_numalot '$man_dir/numalot-spank.8'"

# report --help no longer opens a file of that name.
expect_usage_error "report: an unknown option is named, not opened" \
	'unknown or ambiguous option "--frob" (valid: --html, --svg, --json, --events, --help)' report --frob
expect_usage_error "report: --json takes no value" '--json takes no value' report --json=x "$T"
expect_usage_error "report: no report" 'no report given' report --json
expect_usage_error "info: a value missing" '--topology wants a value' info --topology
expect_usage_error "status: an operand" 'takes no operand (got "x")' status x
expect_usage_error "request: two requests" 'one request at a time' request '{}' '{}'
expect_usage_error "bench: unknown option" '"--frobnicate"' bench --frobnicate
expect_usage_error "run: a bad option before the command" '"--nope"' run --nope -- true
expect_usage_error "version: an operand" 'takes no operand' version x
# run: the options end at the command; its own options are its own.
check "run: the command's options are not numalot's" \
	"$N" run --policy monitor --topology "numa:1 core:1 pu:1" -- sh -c 'exit 0' --policy=x
"$N" run --period 0.2 -- sh -c 'exit 3'
check "run: a value after a space; the command's status" test $? -eq 3

# numalotd --socket PATH (a space, not only '=') serves there.
if [ "$(id -u)" = 0 ]; then
	"$D" --socket "$T/run/s.sock" --idle-exit 0 2>"$T/agent.log" &
	pids+=($!)
	for _ in $(seq 50); do
		"$N" request --socket "$T/run/s.sock" '{"v":1,"op":"hello"}' >/dev/null 2>&1 && break
		sleep 0.05
	done
	check "numalotd --socket PATH serves at PATH" \
		sh -c "'$N' request --socket '$T/run/s.sock' '{\"v\":1,\"op\":\"hello\"}' | grep -q '\"ok\":true'"
fi
"$D" --socket 2>"$T/err"
check "numalotd: --socket without a value: exit 2, named" \
	test $? -eq 2 -a -n "$(grep -- '--socket wants a value' "$T/err")"
"$D" --idle-exit=soon 2>"$T/err"
check "numalotd: a bad value named" test $? -eq 2 -a -n "$(grep '"soon"' "$T/err")"

# numalot report over a job's files (one per node and step).
mkdir -p "$T/job"
node_report() { # FILE JOB STEP NODE MIGRATIONS CPU0 CPU1 [error]
	local err=""
	[ -n "${8:-}" ] && err="\"error\": \"$8\","
	cat >"$1" <<J
{"numalot": "t", $err "policy": {"name": "lbma"}, "machine": {"nodes": 2},
 "slurm": {"job": $2, "step": $3, "uid": 0, "node": "$4", "tasks": 1},
 "processes": [{"pid": 1, "name": "app", "threads": 2,
   "pages": {"moves": 1, "moved_bytes": 1048576, "locality_before": 0.5,
   "locality_after": 0.75}, "pages_per_node_last": [3, 1]}],
 "threads": [{"tid": 1, "time_per_node_s": [$6, $7]}],
 "summary": {"periods": 10, "migrations": $5, "swaps": 0, "rollbacks": 1,
   "duration_s": 10}}
J
}
node_report "$T/job/0.nla.json" 77 0 nla 3 3 1
node_report "$T/job/0.nlb.json" 77 0 nlb 5 1 3
node_report "$T/job/1.nla.json" 77 1 nla 0 2 2 "the agent was lost"
node_report "$T/other.json" 78 0 nla 1 1 0
"$N" report "$T/job" "$T/other.json" >"$T/table" 2>&1
check "report FOLDER FILE: exit 0" test $? -eq 0
check "each file summarised as before" test "$(grep -c "^$T/" "$T/table")" -eq 4
check "a table per job" test "$(grep -c '^job 7[78]: ' "$T/table")" -eq 2
check "job 77: 2 nodes, 2 steps" grep -q '^job 77: 2 node(s), 2 step(s)' "$T/table"
check "a row per node and step, by step then node" \
	test "$(grep -E '^  nl[ab] ' "$T/table" | awk '{print $1 $2}' | head -3 | tr '\n' ' ')" = "nla0 nlb0 nla1 "
check "a row's CPU share per NUMA node and page locality" \
	grep -qE '^  nla +0 +lbma +1 +1 +10 +3 +0 +1 +1 +1.0  75% 25% +50% -> 75%' "$T/table"
check "an error under its row" grep -q '^    error: the agent was lost' "$T/table"
check "the job's totals" grep -qE '^  all +3 reports +3 +3 +- +8 +0 +3 +3 +3.0  50% 50% +50% -> 75%' "$T/table"
"$N" report --json "$T/job" "$T/other.json" >"$T/merged.json" 2>"$T/err"
check "report --json: only JSON on stdout" test $? -eq 0 -a ! -s "$T/err"
check "--json: the jobs, their rows and totals" \
	test "$(json "$T/merged.json" "[j['job'] for j in r['jobs']], len(r['jobs'][0]['nodes']), r['jobs'][0]['totals']['migrations'], r['jobs'][0]['totals']['errors'], r['jobs'][0]['totals']['cpu_share_per_numa_node']")" = "[77, 78] 3 8 1 [0.5, 0.5]"
# A task that ended before numalot took it over (a short step).
echo '{"numalot": "t", "policy": {"name": "monitor"}, "processes": [{"pid": 3, "name": "hostname", "taken_over": false, "threads": 0}]}' >"$T/short.json"
check "a process never taken over is said so" \
	sh -c "'$N' report '$T/short.json' | grep -q 'process 3 (hostname): ended before numalot took it over'"
mkdir -p "$T/empty"
expect_usage_error "report: a folder without reports" "a folder with no report" report "$T/empty"


# A user's slips, said plainly (issue 26, 4).
"$N" run -- numalot-no-such-command >"$T/out" 2>"$T/err"
rc=$?
check "run -- a missing command: exit 127, as a shell ($rc), 'command not found'" \
	test $rc -eq 127 -a "$(grep -c 'command not found: "numalot-no-such-command" is not in PATH' "$T/err")" -eq 1
printf 'echo hi\n' >"$T/noexec.sh"
chmod 644 "$T/noexec.sh"
"$N" run -- "$T/noexec.sh" >"$T/out" 2>"$T/err"
rc=$?
check "run -- a file that is not executable: exit 126 ($rc), said so" \
	test $rc -eq 126 -a "$(grep -c 'not executable' "$T/err")" -eq 1
"$N" status --socket="$T/no-agent.sock" >"$T/out" 2>"$T/err"
check "status with no agent says how to start one" \
	grep -qF "no agent at $T/no-agent.sock: No such file or directory; start one with \`numalotd\` (as root), or as the service the packages install but do not enable: \`systemctl enable --now numalotd.socket\`" "$T/err"
expect_usage_error "sim NAME.json not here: says it looked among the installed scenarios" \
	"nor as numalot-no-such.json in /" sim numalot-no-such.json
check "...naming the installed folder" grep -q 'share/numalot/scenarios/ or .*share/numalot/scenarios/set/' "$T/err"
mkdir -p "$T/job1"
cat >"$T/one.json" <<'J'
{"name": "one", "machine": {"topology": "numa:1 core:1 pu:1"},
 "duration_s": 5,
 "processes": [{"name": "solo", "kind": "compute", "threads": 1}]}
J
"$N" sim "$T/one.json" --seed=1 --report="$T/job1/0.vm.json" >"$T/sim.out" 2>&1
check "sim on one node, one CPU: singular words" \
	grep -q '^machine: 1 NUMA node, 1 CPU (' "$T/sim.out"
"$N" report "$T/job1/" >"$T/out" 2>&1
check "report FOLDER/: the file's path has no doubled slash" \
	grep -qx "$T/job1/0.vm.json" "$T/out"
check "...and one thread, one node, one CPU in the singular" \
	test "$(grep -c 'machine: 1 NUMA node, 1 CPU (\|(solo): 1 thread, \|^  1 thread, ' "$T/out")" -eq 3

[ $fails -eq 0 ]

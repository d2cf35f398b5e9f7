#!/usr/bin/env bash
# The site's file (/etc/numalot/numalot.conf; here --config=FILE, this
# machine's /etc is not the test's) holds in an agent started as
# numalotd.service starts it: by systemd's socket activation
# (systemd-socket-activate), with the unit's ExecStart= options. Its
# allow= refuses a policy, its force= overrides one, its report_dir= gets
# the site's copy; the command line wins over it; a bad file stops the
# agent, naming the file and line (docs/slurm.md, "Site policy").
set -u
N=${NUMALOT:-build/numalot}
D=${NUMALOTD:-$(dirname "$N")/numalotd}
W=${WORKLOAD:-build/numalot-workload}
B=$(dirname "$N")
if [ "$(id -u)" != 0 ] || ! command -v systemd-socket-activate >/dev/null; then
	echo "skip: needs root and systemd-socket-activate (package systemd)"
	exit 0
fi
T=$(mktemp -d /tmp/numalot-siteconf.XXXXXX)
chmod 755 "$T"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"

# The unit's ExecStart= words after the program (--idle-exit=0 --syslog).
unit=$B/numalotd.service
[ -s "$unit" ] || unit=$(dirname "${BASH_SOURCE[0]}")/../../etc/numalotd.service.in
read -ra exec_args <<<"$(sed -n 's/^ExecStart=[^ ]* //p' "$unit")"
check "the unit's ExecStart= has options (${exec_args[*]})" test ${#exec_args[@]} -ge 1

"$W" --threads 2 --seconds 30 >/dev/null 2>&1 &
wp=$!
pids+=($wp)
all=$(awk '/Cpus_allowed_list/ {print $2}' /proc/$wp/status)
# start NAME: an agent on socket T/NAME.sock the way systemd starts it,
# reading T/NAME.conf; the socket is there when this returns.
start() {
	systemd-socket-activate -l "$T/$1.sock" -- "$D" "${exec_args[@]}" \
		--config="$T/$1.conf" --socket="$T/$1.sock" "${@:2}" \
		>/dev/null 2>"$T/$1.log" &
	pids+=($!)
	for _ in $(seq 100); do [ -S "$T/$1.sock" ] && break; sleep 0.05; done
}
register() { # SOCKET-NAME STEP POLICY
	timeout 30 "$N" request --socket="$T/$1.sock" "{\"v\":1,\"op\":\"register\",\"job\":7,\"step\":$2,\"uid\":0,\"pid\":$wp,\"policy\":\"$3\",\"cpus\":\"$all\",\"period\":0.5}" 2>&1
}

# allow= and report_dir= from the file.
mkdir -m 700 "$T/site"
printf '# the site\nallow=imar2,monitor  report_dir=%s\ndefault=off wait=2 # the plugin'"'"'s\n' "$T/site" >"$T/a.conf"
start a
r=$(register a 0 lbma)
check "the file's allow=: lbma is refused ($r)" grep -q 'not allowed on this node' <<<"$r"
r=$(register a 1 monitor)
check "...and monitor taken" grep -q '"ok":true' <<<"$r"
ap=$(timeout 30 "$N" request --socket="$T/a.sock" '{"v":1,"op":"hello"}' 2>&1 | sed -n 's/.*"pid":\([0-9]*\).*/\1/p')
[ -n "$ap" ] && kill -TERM "$ap"
for _ in $(seq 200); do [ -s "$T/site/numalot-7.1."*.json ] 2>/dev/null && break; sleep 0.05; done
check "the file's report_dir=: the stopped agent's site copy is there" \
	test -s "$(ls "$T"/site/numalot-7.1.*.json 2>/dev/null | head -1)"

# force= from the file; the command line wins over the file.
printf 'force=lbma\nidle_exit=0.3 period=0.5\n' >"$T/f.conf"
start f
r=$(register f 0 monitor)
check "the file's force=: monitor becomes lbma ($r)" grep -q 'forces lbma' <<<"$r"
check "...and the command line's --idle-exit=0 wins over idle_exit=0.3" \
	sh -c "sleep 1; timeout 30 '$N' request --socket='$T/f.sock' '{\"v\":1,\"op\":\"hello\"}' | grep -q '\"ok\":true'"
printf 'allow=lbma\n' >"$T/o.conf"
start o --allow=monitor
r=$(register o 0 monitor)
check "--allow on the command line wins over the file's allow=" grep -q '"ok":true' <<<"$r"

# What the agent enforces, and from where, in its log (no --syslog here).
printf 'allow=monitor force=monitor report_dir=%s\n' "$T/site" >"$T/l.conf"
timeout 5 "$D" --config="$T/l.conf" --socket="$T/l.sock" --idle-exit=0.2 2>"$T/l.log"
check "the agent logs what it enforces and where it came from" \
	grep -q "site: allow monitor, force monitor, report_dir $T/site (settings: $T/l.conf, then the command line)" "$T/l.log"

# A bad file: no agent, saying which file, line and word.
printf 'allow=monitor\nforce=fastest\n' >"$T/b.conf"
timeout 10 systemd-socket-activate -l "$T/b.sock" -- "$D" "${exec_args[@]}" \
	--config="$T/b.conf" --socket="$T/b.sock" >/dev/null 2>"$T/b.log" &
bp=$!
for _ in $(seq 100); do [ -S "$T/b.sock" ] && break; sleep 0.05; done
timeout 5 "$N" request --socket="$T/b.sock" '{"v":1,"op":"hello"}' >/dev/null 2>&1
wait $bp
rc=$?
check "a bad force= in the file: the agent exits 2 (got $rc)" test $rc -eq 2
check "...naming the file, line and word" grep -q "b.conf line 2: force=fastest" "$T/b.log"
printf 'allow=monitor\n' >"$T/w.conf"
chmod 666 "$T/w.conf"
"$D" --config="$T/w.conf" --socket="$T/w.sock" 2>"$T/w.log"
check "a file others may write: refused (exit $?)" grep -q "writable by root alone" "$T/w.log"
[ $fails -eq 0 ] || tail -5 "$T"/*.log
[ $fails -eq 0 ]

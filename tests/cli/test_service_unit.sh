#!/usr/bin/env bash
# The systemd units of the agent (etc/numalotd.service.in, numalotd.socket):
# systemd's own checks find nothing wrong, `systemd-analyze security` rates
# the service below 5 and as its comments say, ExecStart= is the installed
# agent, and the socket is where the plugin looks by default.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh
unit=$B/numalotd.service
make -s BUILD="$B" "$unit" >"$T/log" 2>&1
check "the service unit is generated" test -s "$unit"
prefix=$(cut -d" " -f1 "$B/prefix") # the stamp: PREFIX CONFDIR
check "ExecStart= is the agent under PREFIX ($prefix)" \
	grep -q "^ExecStart=$prefix/sbin/numalotd " "$unit"
check "no placeholder is left" test "$(grep -c "@[A-Z]*@" "$unit")" -eq 0
check "RuntimeDirectory=numalot, kept for the socket" \
	grep -qx "RuntimeDirectory=numalot" "$unit"
check "...kept when the service stops" grep -qx "RuntimeDirectoryPreserve=yes" "$unit"
check "no CAP_SYS_ADMIN nor CAP_DAC_OVERRIDE" \
	test "$(grep -c 'CAP_SYS_ADMIN\|CAP_DAC_OVERRIDE' <(grep '^CapabilityBoundingSet' "$unit"))" -eq 0
check "the socket is the plugin's and the agent's default" \
	grep -qx "ListenStream=/run/numalot/numalotd.sock" etc/numalotd.socket
check "...as the plugin has it" grep -q '"/run/numalot/numalotd.sock"' spank/site.c

if ! command -v systemd-analyze >/dev/null; then
	echo "skip: systemd-analyze is not installed (package systemd): no security score, no verify"
	exit $((fails > 0))
fi
# verify: unknown keys, bad values, a missing ExecStart= program (the
# built agent stands in for the installed one).
sed "s|^ExecStart=[^ ]*|ExecStart=$PWD/$B/numalotd|" "$unit" >"$T/numalotd.service"
cp etc/numalotd.socket "$T/"
(cd "$T" && systemd-analyze verify --man=no numalotd.service numalotd.socket) >"$T/verify" 2>&1
check "systemd-analyze verify finds nothing ($(head -c 300 "$T/verify"))" \
	test ! -s "$T/verify"
if systemd-analyze security --help 2>/dev/null | grep -q -- --offline; then
	systemd-analyze security --offline=true --no-pager "$unit" >"$T/sec" 2>&1
	score=$(sed -n 's/.*Overall exposure level for numalotd.service: \([0-9.]*\).*/\1/p' "$T/sec")
	check "systemd-analyze security gives a score ($score)" test -n "$score"
	check "...below 5" awk -v s="${score:-99}" 'BEGIN { exit !(s < 5) }'
	check "...the one the unit's comments give" \
		grep -q "^# systemd-analyze security: $score " "$unit"
else
	echo "skip: this systemd-analyze has no --offline (systemd 250 and later): no security score"
fi
[ $fails -eq 0 ] || cat "$T/sec" 2>/dev/null | tail -30
[ $fails -eq 0 ]

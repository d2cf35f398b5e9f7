#!/usr/bin/env bash
# make install / uninstall into a scratch DESTDIR: every part lands where
# the docs say, and uninstall takes all of it away.
set -u
cd "$(dirname "$0")/../.."
if [ "${SAN:-}" = 1 ]; then
	echo "skip: install is checked in the plain build"
	exit 0
fi
B=${BUILD:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh
make -s BUILD="$B" install DESTDIR="$T" PREFIX=/usr/local >"$T/log" 2>&1
check "make install succeeds" test $? -eq 0
for f in /usr/local/bin/numalot /usr/local/sbin/numalotd \
	/usr/local/share/man/man1/numalot.1 /usr/local/share/man/man8/numalotd.8 \
	/usr/local/share/man/man8/numalot-spank.8 \
	/usr/local/share/numalot/examples/plugstack.conf.example \
	/usr/local/share/numalot/examples/numalotd.service \
	/usr/local/share/numalot/scenarios/two-node-remote.json; do
	check "installed $f" test -s "$T$f"
done
check "installed the plugin in Slurm's plugin folder" \
	test -n "$(find "$T" -name numalot.so -path '*slurm*')"
check "the plugin starts the installed agent" \
	grep -q "/usr/local/sbin/numalotd" "$(find "$T" -name numalot.so | head -1)"
check "the scenario set is installed" \
	test "$(ls "$T"/usr/local/share/numalot/scenarios/set/*.json | wc -l)" -ge 24
make -s BUILD="$B" uninstall DESTDIR="$T" PREFIX=/usr/local >>"$T/log" 2>&1
check "make uninstall leaves no file" test "$(find "$T" -type f ! -name log | wc -l)" -eq 0

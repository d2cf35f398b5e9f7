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
	/usr/local/share/numalot/examples/numalot.conf \
	/usr/local/share/numalot/examples/numalot-site.conf \
	/usr/local/lib/systemd/system/numalotd.service \
	/usr/local/lib/systemd/system/numalotd.socket \
	/usr/local/share/numalot/examples/numalot-textfile.sh \
	/usr/local/share/numalot/examples/numalot-admincomment.sh \
	/usr/local/share/doc/numalot/slurm.md \
	/usr/local/share/doc/numalot/report-format.md \
	/usr/local/share/numalot/scenarios/two-node-remote.json; do
	check "installed $f" test -s "$T$f"
done
check "the documents are installed once (not in share/numalot/doc too)" \
	test ! -e "$T/usr/local/share/numalot/doc"
# The HTML report names the installed report-format.md, and it is there.
"$T/usr/local/bin/numalot" sim etc/scenarios/two-node-remote.json --seed=1 \
	--report="$T/r.json" >/dev/null 2>&1
"$T/usr/local/bin/numalot" report --html="$T/r.html" "$T/r.json" >/dev/null 2>&1
fmt=$(grep -o 'the format is [^ <]*report-format\.md' "$T/r.html" | cut -d' ' -f4)
check "the HTML report points at the installed format (${fmt:-none})" \
	test -n "$fmt" -a -s "$T$fmt"
rm -f "$T/r.json" "$T/r.html"
pd=$(tools/plugindir.sh "" /usr/local)
check "installed the plugin in Slurm's plugin folder ($pd)" test -s "$T$pd/numalot.so"
check "the plugin starts the installed agent" \
	grep -q "/usr/local/sbin/numalotd" "$T$pd/numalot.so"
check "the service starts the installed agent" \
	grep -q "^ExecStart=/usr/local/sbin/numalotd " "$T/usr/local/lib/systemd/system/numalotd.service"
check "the scenario set is installed" \
	test "$(ls "$T"/usr/local/share/numalot/scenarios/set/*.json | wc -l)" -ge 24
check "no plugstack.conf.d snippet in Slurm's folder unless asked" \
	test -z "$(find "$T" -path '*slurm/plugstack.conf.d*' -type f)"
check "the plugstack lines are optional, not required" \
	test "$(grep -h '^required' etc/plugstack.conf.example etc/plugstack.conf.d/numalot.conf | wc -l)" -eq 0

# The plugin exports only what Slurm looks up; everything is hardened.
exports=$(nm -D --defined-only "$T$pd/numalot.so" | awk '{print $3}')
check "the plugin exports only SPANK symbols ($(echo $exports))" \
	test -z "$(grep -Ev '^(slurm_spank_[a-z_]+|plugin_(name|type|version)|spank_plugin_version|spank_options)$' <<<"$exports")"
check "...among them slurm_spank_init and plugin_version" \
	test "$(grep -cx 'slurm_spank_init\|plugin_version' <<<"$exports")" -eq 2
for f in /usr/local/bin/numalot /usr/local/sbin/numalotd "$pd/numalot.so"; do
	check "$f: full RELRO (BIND_NOW)" grep -q BIND_NOW <(readelf -d "$T$f")
	check "$f: stack protector" grep -q __stack_chk_fail <(nm -D "$T$f")
	check "$f: FORTIFY_SOURCE" grep -q '__[a-z]*_chk@' <(nm -D "$T$f")
done
for f in /usr/local/bin/numalot /usr/local/sbin/numalotd; do
	check "$f: position-independent" grep -q 'Type: *DYN' <(readelf -h "$T$f")
done

# Where the plugin goes: PLUGINDIR=, else Slurm's slurm.pc (SLURM_PREFIX
# searched first), else scontrol's PluginDir.
make -s BUILD="$B" install DESTDIR="$T/o" PREFIX=/usr/local PLUGINDIR=/opt/x/plugins \
	SLURM_CONFDIR=/etc/slurm >>"$T/log" 2>&1
check "PLUGINDIR= puts the plugin there" test -s "$T/o/opt/x/plugins/numalot.so"
check "SLURM_CONFDIR= gets plugstack.conf.d/numalot.conf" \
	grep -q "^optional numalot.so" "$T/o/etc/slurm/plugstack.conf.d/numalot.conf"
check "...and the site's file in CONFDIR, every setting commented out" \
	test -s "$T/o/etc/numalot/numalot.conf" -a \
	-z "$(grep -v '^#' "$T/o/etc/numalot/numalot.conf")"
check "the plugin and the agent read /etc/numalot/numalot.conf" \
	sh -c "grep -q /etc/numalot/numalot.conf '$T/o/opt/x/plugins/numalot.so' && grep -q /etc/numalot/numalot.conf '$T/o/usr/local/sbin/numalotd'"
check "no site file in /etc unless asked" test ! -e "$T/etc/numalot"
make -s BUILD="$B" uninstall DESTDIR="$T/o" PREFIX=/usr/local PLUGINDIR=/opt/x/plugins \
	SLURM_CONFDIR=/etc/slurm >>"$T/log" 2>&1
check "...and uninstall takes them away" test "$(find "$T/o" -type f | wc -l)" -eq 0
mkdir -p "$T/slurm/lib64/pkgconfig" "$T/bin"
printf 'prefix=/opt/slurm\nlibdir=/opt/slurm/lib64\n\nName: slurm\nDescription: x\nVersion: 23.02.7\n' \
	>"$T/slurm/lib64/pkgconfig/slurm.pc"
check "slurm.pc under SLURM_PREFIX gives its libdir/slurm" \
	test "$(tools/plugindir.sh "$T/slurm" /usr/local)" = /opt/slurm/lib64/slurm
printf '#!/bin/sh\necho "PluginDir               = /site/slurm/plugins:/more"\n' >"$T/bin/scontrol"
chmod 755 "$T/bin/scontrol"
check "without slurm.pc, scontrol show config's PluginDir" \
	test "$(PKG_CONFIG_PATH= PATH="$T/bin:$PATH" tools/plugindir.sh "" /usr/local)" = /site/slurm/plugins

make -s BUILD="$B" uninstall DESTDIR="$T" PREFIX=/usr/local >>"$T/log" 2>&1
check "make uninstall leaves no file" \
	test "$(find "$T" -type f ! -name log ! -path "$T/slurm/*" ! -path "$T/bin/*" | wc -l)" -eq 0
[ $fails -eq 0 ] || tail -20 "$T/log"
[ $fails -eq 0 ]

#!/usr/bin/env bash
# The packages: the Debian package is built here from a copy of the tree
# (dpkg-buildpackage -b) and unpacked into a throw-away root (dpkg -x):
# every part lands where Slurm, systemd and man look; then installed with
# dpkg -i into an overlay of this root: nothing is enabled or started; the
# RPM spec parses (rpmspec -P) where Debian's rpm package is installed.
set -u
cd "$(dirname "$0")/../.."
if [ "${SAN:-}" = 1 ]; then
	echo "skip: the packages are checked in the plain build"
	exit 0
fi
T=$(mktemp -d /tmp/numalot-pkg.XXXXXX)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh

if command -v rpmspec >/dev/null; then
	rpmspec -P packaging/rpm/numalot.spec >"$T/spec" 2>&1
	check "rpmspec parses packaging/rpm/numalot.spec" test $? -eq 0
	check "...the plugin goes to %{_libdir}/slurm" \
		grep -q "PLUGINDIR=$(rpm --eval %{_libdir})/slurm" "$T/spec"
	check "...the Slurm version is in Release:" grep -q '^Release: *1\.slurm' "$T/spec"
	check "...the units and plugstack.conf.d are packaged" \
		test "$(grep -c '^/.*/numalotd\.socket$\|^/.*/numalotd\.service$\|^%config(noreplace) /etc/slurm/plugstack\.conf\.d/numalot\.conf$' "$T/spec")" -eq 3
	check "...its License: is GPL-2.0-or-later" grep -qx 'License: *GPL-2.0-or-later' "$T/spec"
	check "...and LICENSE is packaged as %license" grep -qx '%license LICENSE' "$T/spec"
	check ".../etc/numalot/numalot.conf is %config(noreplace)" \
		grep -qx '%config(noreplace) /etc/numalot/numalot.conf' "$T/spec"
	check "...and its scriptlets enable and start nothing (presets only)" \
		test -z "$(sed -n '/^%post/,/^%files/p' "$T/spec" | grep -E 'systemctl.*(enable|start)|--now')"
else
	echo "skip: rpmspec is not installed (package rpm): the spec is not parsed"
fi

# The licence: GPL-2.0-or-later, the text in LICENSE, debian/copyright
# machine-readable (DEP-5) with a License: paragraph for what it names.
if [ -r /usr/share/common-licenses/GPL-2 ]; then
	check "LICENSE is the GPL version 2" cmp -s LICENSE /usr/share/common-licenses/GPL-2
fi
check "debian/copyright is DEP-5 (Format: first)" \
	grep -qx 'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/' \
	<(head -1 debian/copyright)
check "...Files: * is GPL-2+, with the licence's own paragraph" \
	test "$(awk -v RS= '/^Files: \*\n/ && /\nLicense: GPL-2\+(\n|$)/ {f++} /^License: GPL-2\+\n .*common-licenses\/GPL-2/ {l++} END {print f + 0, l + 0}' debian/copyright)" = "1 1"
check "...and grants what it says (no 'not to be redistributed')" \
	test "$(cat debian/copyright README.md | grep -ci 'not to be redistributed\|^License: none')" -eq 0

if ! command -v dpkg-buildpackage >/dev/null || ! command -v dh >/dev/null; then
	echo "skip: dpkg-buildpackage or debhelper is not installed (make deps)"
	exit $((fails > 0))
fi
src=$T/numalot-0.1.0
mkdir "$src"
git ls-files -co --exclude-standard | grep -v '^build' | tar -cf - -T - | tar -xf - -C "$src"
# What a checkout has in build/ (the guests' kernel) outlives the build.
mkdir -p "$src/build/guest"
echo kernel >"$src/build/guest/kernel-keep"
(cd "$src" && find . -type f | sort) >"$T/before"
if ! (cd "$src" && dpkg-checkbuilddeps) >"$T/deps" 2>&1; then
	echo "skip: the package's build dependencies are missing: $(cat "$T/deps")"
	exit $((fails > 0))
fi
t0=$(date +%s)
(cd "$src" && DEB_BUILD_OPTIONS="nocheck noautodbgsym parallel=$(nproc)" dpkg-buildpackage -b -us -uc) \
	>"$T/build.log" 2>&1
rc=$?
deb=$(ls "$T"/numalot_*.deb 2>/dev/null | head -1)
check "dpkg-buildpackage -b builds the package ($(($(date +%s) - t0)) s)" test $rc -eq 0 -a -n "$deb"
if [ -z "$deb" ]; then
	tail -30 "$T/build.log"
	exit 1
fi
check "debian/rules clean leaves build/ alone" test -s "$src/build/guest/kernel-keep"
new=$(cd "$src" && find . -type f | sort | comm -13 "$T/before" - | sed 's|^\./||')
left=$(for f in $new; do git check-ignore -q --no-index "$f" || echo "$f"; done)
check "...and what the package build leaves is in .gitignore (${left:-all})" test -z "$left"
R=$T/root
dpkg -x "$deb" "$R"
pd=/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)/slurm-wlm
for f in /usr/bin/numalot /usr/sbin/numalotd "$pd/numalot.so" \
	/lib/systemd/system/numalotd.service /lib/systemd/system/numalotd.socket \
	/etc/slurm/plugstack.conf.d/numalot.conf \
	/usr/share/man/man1/numalot.1.gz /usr/share/man/man8/numalotd.8.gz \
	/usr/share/man/man8/numalot-spank.8.gz \
	/usr/share/numalot/scenarios/two-node-remote.json; do
	check "the package has $f" test -s "$R$f"
done
check "the documents are in /usr/share/doc/numalot, once" \
	test -s "$R/usr/share/doc/numalot/slurm.md" -a ! -e "$R/usr/share/numalot/doc"
check "...where the HTML report points, uncompressed" \
	grep -q /usr/share/doc/numalot/report-format.md "$R/usr/bin/numalot"
check "...and report-format.md is there" test -s "$R/usr/share/doc/numalot/report-format.md"
check "the package's copyright says GPL-2+" \
	grep -qx 'License: GPL-2+' "$R/usr/share/doc/numalot/copyright"
check "the service starts /usr/sbin/numalotd" \
	grep -q '^ExecStart=/usr/sbin/numalotd ' "$R/lib/systemd/system/numalotd.service"
check "the plugin is loaded as optional with default=off" \
	grep -qx 'optional numalot.so default=off' "$R/etc/slurm/plugstack.conf.d/numalot.conf"
check "the plugin exports only SPANK symbols" \
	test -z "$(nm -D --defined-only "$R$pd/numalot.so" | awk '{print $3}' |
		grep -Ev '^(slurm_spank_[a-z_]+|plugin_(name|type|version)|spank_plugin_version|spank_options)$')"
check "the packaged agent runs" "$R/usr/sbin/numalotd" --version
dpkg-deb -e "$deb" "$T/ctl"
check "plugstack.conf.d/numalot.conf is a conffile" \
	grep -qx /etc/slurm/plugstack.conf.d/numalot.conf "$T/ctl/conffiles"
check "/etc/numalot/numalot.conf is a conffile" \
	grep -qx /etc/numalot/numalot.conf "$T/ctl/conffiles"
check "...with every setting commented out" \
	test -s "$R/etc/numalot/numalot.conf" -a -z "$(grep -v '^#' "$R/etc/numalot/numalot.conf")"
# Nothing starts at install (dh_installsystemd --no-enable --no-start):
# the maintainer scripts neither enable nor start a unit.
# (Its enable stays for an upgrade where the administrator had enabled a
# unit: the install below shows that a new one is left alone.)
check "the postinst starts no unit" \
	test -z "$(grep -E 'deb-systemd-invoke|systemctl.* (start|restart)' "$T/ctl/postinst")"

# The package installed for real, with dpkg -i, into a copy of this
# machine's root (an overlay in a mount namespace of our own, so the
# machine itself is untouched): no unit enabled or started, and the
# installed agent takes the site's policy from /etc/numalot/numalot.conf.
if ! unshare -m true 2>/dev/null || ! grep -qw overlay /proc/filesystems; then
	echo "skip: no mount namespace or overlayfs here: the package is not installed"
else
	mkdir -p "$T/up" "$T/work" "$T/m"
	sleep 60 &
	sp=$!
	cpus=$(awk '/Cpus_allowed_list/ {print $2}' /proc/$sp/status)
	cat >"$T/inside.sh" <<SH
set -u
mount -t overlay overlay -o lowerdir=/,upperdir=$T/up,workdir=$T/work $T/m || exit 3
mount --rbind /proc $T/m/proc && mount --rbind /sys $T/m/sys && mount --rbind /dev $T/m/dev
# A systemd manager is running, as far as the scripts can tell.
mkdir -p $T/m/run/systemd/system
exec chroot $T/m sh -c '
	dpkg -i $deb >$T/dpkg.log 2>&1; echo "dpkg -i: \$?"
	find /etc/systemd/system -name "numalotd*" | sed "s/^/enabled: /"
	export DPKG_MAINTSCRIPT_PACKAGE=numalot DPKG_MAINTSCRIPT_NAME=postinst
	deb-systemd-helper --quiet is-enabled numalotd.socket && echo "enabled: socket"
	deb-systemd-helper --quiet is-enabled numalotd.service && echo "enabled: service"
	sh -x /var/lib/dpkg/info/numalot.postinst configure 2>$T/postinst.trace >/dev/null
	find /etc/systemd/system -name "numalotd*" | sed "s/^/enabled: /"
	unset DPKG_MAINTSCRIPT_PACKAGE DPKG_MAINTSCRIPT_NAME
	echo "allow=monitor  # the site" >>/etc/numalot/numalot.conf
	args=\$(sed -n "s/^ExecStart=[^ ]* //p" /lib/systemd/system/numalotd.service)
	systemd-socket-activate -l /tmp/n.sock -- /usr/sbin/numalotd \$args \
		--socket=/tmp/n.sock >/dev/null 2>&1 &
	for i in \$(seq 100); do [ -S /tmp/n.sock ] && break; sleep 0.05; done
	timeout 20 numalot request --socket=/tmp/n.sock \
		"{\"v\":1,\"op\":\"register\",\"job\":1,\"step\":0,\"uid\":0,\"pid\":$sp,\"cpus\":\"$cpus\",\"policy\":\"lbma\"}"
	echo; kill \$! 2>/dev/null; wait
	dpkg --purge numalot >>$T/dpkg.log 2>&1; echo "dpkg --purge: \$?"
	test -e /etc/numalot/numalot.conf && echo "left: numalot.conf"
	test -e /usr/sbin/numalotd && echo "left: numalotd"
'
SH
	timeout 120 unshare -m --propagation private sh "$T/inside.sh" >"$T/inside.out" 2>&1
	kill $sp 2>/dev/null
	check "dpkg -i installs the package (in an overlay of this root)" grep -qx 'dpkg -i: 0' "$T/inside.out"
	check "...enables no unit (no link in /etc/systemd/system, deb-systemd-helper says none)" \
		test -z "$(grep '^enabled' "$T/inside.out")"
	check "...and its postinst, with systemd seemingly running, starts none" \
		test -s "$T/up$T/postinst.trace" -a -z "$(grep -E 'deb-systemd-invoke|systemctl .*(start|restart)' "$T/up$T/postinst.trace")"
	check "the installed agent, started as its unit starts it, takes allow= from /etc/numalot/numalot.conf" \
		grep -q 'policy lbma is not allowed on this node' "$T/inside.out"
	check "dpkg --purge removes it, numalot.conf too" \
		sh -c "grep -qx 'dpkg --purge: 0' '$T/inside.out' && ! grep -q '^left' '$T/inside.out'"
	[ $fails -eq 0 ] || cat "$T/inside.out" "$T/up$T/dpkg.log"
fi
series=$(dpkg-query -W -f='${Version}' libslurm-dev 2>/dev/null | cut -d. -f1,2)
dep=$(dpkg-deb -f "$deb" Depends)
check "it depends on the Slurm release it was built for ($series): $dep" \
	grep -q "slurm-wlm-basic-plugins (>= $series)" <<<"$dep"
check "...and on no later one" grep -q "slurm-wlm-basic-plugins (<< " <<<"$dep"
[ $fails -eq 0 ] || tail -30 "$T/build.log"
[ $fails -eq 0 ]

#!/usr/bin/env bash
# make deps installs what building numalot and its demo need, and no more;
# make check (tools/deps.sh test) adds what the tests need. Checked against
# this machine's packages: every header the build includes and every
# program the demo runs comes from a package of the build set; the tests'
# heavy ones (chromium, QEMU, valgrind, clang) are only in the test set.
set -u
cd "$(dirname "$0")/../.."
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
. tests/lib.sh
if ! command -v dpkg >/dev/null; then
	echo "skip: not a Debian system (no dpkg)"
	exit 0
fi
build=" $(tools/deps.sh build --list) "
tests=" $(tools/deps.sh test --list) "
for p in chromium qemu-system-x86 valgrind clang libcmocka-dev busybox-static; do
	check "make deps leaves $p to make check" \
		sh -c "case '$build' in *' $p '*) exit 1;; esac; case '$tests' in *' $p '*) exit 0;; esac; exit 1"
done
# owner FILE: the package that holds FILE (dpkg -S), arch suffix dropped.
# A -minimal package counts as the package it is the base of (python3).
owner() {
	{ dpkg -S "$1" || dpkg -S "$(realpath "$1")"; } 2>/dev/null | head -1 |
		cut -d: -f1 | sed 's/-minimal$//'
}
for h in hwloc.h json-c/json.h papi.h numa.h slurm/spank.h; do
	f=$(echo "#include <$h>" | cpp -H $(pkg-config --cflags hwloc json-c 2>/dev/null) -o /dev/null 2>&1 |
		sed -n 's/^\. //p' | head -1)
	p=$([ -n "$f" ] && owner "$f")
	check "the build's $h comes from a package make deps installs (${p:-not found})" \
		test -n "$p" -a -n "$(grep -o " $p " <<<"$build")"
done
# Debian's own programs (a python3 of pyenv's may come first in PATH).
sys_path=/usr/sbin:/usr/bin:/sbin:/bin
for c in srun slurmctld slurmd munged python3 cc; do
	f=$(PATH=$sys_path command -v "$c")
	p=$([ -n "$f" ] && owner "$f")
	[ "$c" = cc ] && p=build-essential # cc is an alternative: gcc, by build-essential
	check "the demo's $c comes from a package make deps installs (${p:-not found})" \
		test -n "$p" -a -n "$(grep -o " $p " <<<"$build")"
done
p=$(owner /usr/include/cmocka.h)
check "cmocka (the unit tests) comes with make check's set (${p:-not found})" \
	test -n "$p" -a -n "$(grep -o " $p " <<<"$tests")"
check "an unknown set is refused by name" \
	sh -c "tools/deps.sh demo 2>&1 >/dev/null | grep -q '\"demo\" is not build, test or --list'"
check "make deps no longer fetches the guests' kernel" \
	test -z "$(make -n deps | grep guest)"
check "make check runs check-deps first" \
	test "$(make -n check 2>/dev/null | grep -o 'check-deps\|run-tests' | head -1)" = check-deps
# make guest-check alone builds what the guests run: every $B/... file
# tests/guest/ names is made by it from a clean build folder.
plan=$(make -n BUILD="$T/b" guest-check 2>/dev/null)
for f in $(grep -oh '\$B/[a-zA-Z_./-]*' tests/guest/*.sh | sort -u | sed 's|^\$B/||'); do
	[ "$f" = guest ] && continue # the kernel: tests/guest/build.sh
	check "make guest-check alone builds $f" grep -q -- "-o $T/b/$f\( \|$\)" <<<"$plan"
done

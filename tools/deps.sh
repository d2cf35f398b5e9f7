#!/usr/bin/env bash
# Install the Debian packages numalot needs, as root; otherwise print the
# apt-get line. tools/deps.sh [build|test] [--list]:
#   build (make deps): building numalot and its demo (a local Slurm);
#   test (make check, make guest-check): those and what the tests add:
#     cmocka, valgrind, clang's libFuzzer, chromium (the HTML report
#     headless), QEMU and busybox (the guests; their kernel is fetched by
#     tests/guest/build.sh), numactl, debhelper and rpm (the packages), jq.
# --list prints the packages and installs nothing.
set -eu
build="build-essential pkg-config libhwloc-dev hwloc-nox libjson-c-dev
	libnuma-dev libpapi-dev python3 slurm-wlm slurmctld slurmd slurm-client
	libslurm-dev munge"
tests="libcmocka-dev valgrind clang libclang-rt-dev chromium qemu-system-x86
	busybox-static numactl debhelper rpm jq"
set_name=build list=0
for a in "$@"; do
	case $a in
	build | test) set_name=$a ;;
	--list) list=1 ;;
	*) echo "deps: \"$a\" is not build, test or --list" >&2 && exit 2 ;;
	esac
done
pkgs=$build
[ "$set_name" = test ] && pkgs="$build $tests"
if [ $list = 1 ]; then
	echo $pkgs
	exit 0
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps ($set_name): all installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps ($set_name): missing:$missing"
	echo "run as root: apt-get install --no-install-recommends$missing"
	exit 1
fi
echo "deps ($set_name): installing$missing"
# Slurm's and munge's packages try to start their services: keep them from
# it (numalot's tests and demo start their own, on their own ports).
rc_d=/usr/sbin/policy-rc.d
made_rc_d=0
if [ ! -e "$rc_d" ]; then
	printf '#!/bin/sh\nexit 101\n' >"$rc_d"
	chmod 755 "$rc_d"
	made_rc_d=1
fi
trap '[ $made_rc_d = 1 ] && rm -f "$rc_d"' EXIT
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing

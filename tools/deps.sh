#!/usr/bin/env bash
# Install the Debian packages numalot builds, tests and demonstrates with.
# As root: installs what is missing. Otherwise: prints the apt-get line.
# The test guests' kernel is downloaded, not installed (tests/guest/build.sh).
# debhelper and rpm: the package test builds the Debian package and parses
# the RPM spec (tests/cli/test_packages.sh).
set -eu
pkgs="build-essential pkg-config libhwloc-dev hwloc-nox libjson-c-dev
	libcmocka-dev libnuma-dev libpapi-dev valgrind python3 clang
	libclang-rt-dev slurm-wlm slurmctld slurmd slurm-client libslurm-dev
	munge chromium qemu-system-x86 busybox-static numactl debhelper rpm jq"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -z "$missing" ]; then
	echo "deps: all installed"
	exit 0
fi
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing:$missing"
	echo "run as root: apt-get install --no-install-recommends$missing"
	exit 1
fi
echo "deps: installing$missing"
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

#!/bin/sh
# Slurm's plugin folder (its PluginDir), where numalot.so goes, asked of
# Slurm itself (docs/slurm.md, "Installing"):
#   1. slurm.pc: pkg-config's libdir of slurm, plus /slurm (SchedMD's
#      packages and Slurm built from source; SLURM_PREFIX's pkgconfig
#      folders are searched first);
#   2. the running cluster: PluginDir in `scontrol show config`;
#   3. Debian's own Slurm (libslurm-dev ships no slurm.pc):
#      /usr/lib/<multiarch>/slurm-wlm, when its spank.h is the one used;
#   4. otherwise SLURM_PREFIX/lib/slurm, or PREFIX/lib/slurm without
#      SLURM_PREFIX (Slurm's own default for a prefix).
# `make install PLUGINDIR=...` skips all this.
# Usage: tools/plugindir.sh SLURM_PREFIX PREFIX
set -u
slurm_prefix=${1:-}
prefix=${2:-/usr/local}
if [ -n "$slurm_prefix" ]; then
	PKG_CONFIG_PATH="$slurm_prefix/lib/pkgconfig:$slurm_prefix/lib64/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
	export PKG_CONFIG_PATH
fi
d=$(pkg-config --variable=libdir slurm 2>/dev/null)
if [ -n "$d" ]; then
	echo "$d/slurm"
	exit 0
fi
sc=scontrol
[ -n "$slurm_prefix" ] && [ -x "$slurm_prefix/bin/scontrol" ] && sc=$slurm_prefix/bin/scontrol
if command -v "$sc" >/dev/null 2>&1; then
	d=$(timeout 5 "$sc" show config 2>/dev/null |
		sed -n 's/^PluginDir *= *\([^:]*\).*/\1/p' | head -1)
	if [ -n "$d" ]; then
		echo "$d"
		exit 0
	fi
fi
if [ -z "$slurm_prefix" ] && command -v dpkg-query >/dev/null 2>&1 &&
	dpkg-query -S /usr/include/slurm/spank.h 2>/dev/null | grep -q '^libslurm-dev'; then
	arch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null ||
		${CC:-cc} -print-multiarch 2>/dev/null)
	if [ -n "$arch" ]; then
		echo "/usr/lib/$arch/slurm-wlm"
		exit 0
	fi
fi
echo "${slurm_prefix:-$prefix}/lib/slurm"

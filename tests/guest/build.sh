#!/usr/bin/env bash
# numalot's test guest: Debian's own kernel (downloaded, never installed)
# and a small initramfs that mounts the host's / read-only over 9p.
#   tests/guest/build.sh DIR     -> DIR/vmlinux, DIR/initramfs.img
# Everything is cached in DIR; a second run only checks. Prints "skip: ..."
# and exits 3 when the guest cannot be had here. See docs/real-node.md.
set -eu
cd "$(dirname "$0")/../.."
out=$1
skip() { echo "skip: $*"; exit 3; }
for tool in qemu-system-x86_64 busybox xz dpkg-deb; do
	command -v "$tool" >/dev/null || skip "no $tool (make deps installs it)"
done
busybox_bin=$(command -v busybox)
ldd "$busybox_bin" 2>&1 | grep -q 'not a dynamic' ||
	skip "$busybox_bin is not static (make deps installs busybox-static)"
mkdir -p "$out"
out=$(cd "$out" && pwd)

# The kernel package linux-image-amd64 currently points to, downloaded
# into DIR and unpacked there (apt-get download needs no root).
kpkg=$(cat "$out/kernel-package" 2>/dev/null || true)
if [ -z "$kpkg" ] || ! ls "$out"/pkg/"$kpkg"_*.deb >/dev/null 2>&1; then
	kpkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -1)
	[ -n "$kpkg" ] || skip "apt knows no linux-image-amd64 kernel package"
	rm -rf "$out/pkg" "$out/kernel"
	mkdir -p "$out/pkg"
	(cd "$out/pkg" && apt-get download -q "$kpkg" >/dev/null 2>&1) ||
		skip "apt-get download $kpkg failed (no network or package source?)"
	echo "$kpkg" >"$out/kernel-package"
fi
deb=$(ls "$out"/pkg/"$kpkg"_*.deb | head -1)
kver=${kpkg#linux-image-}
if [ ! -e "$out/kernel/boot/vmlinuz-$kver" ]; then
	rm -rf "$out/kernel"
	dpkg-deb -x "$deb" "$out/kernel"
fi

# An uncompressed vmlinux boots in about half the time of the vmlinuz
# (QEMU loads it as a PVH ELF): cut the xz payload out of the bzImage.
if [ ! -s "$out/vmlinux" ] || [ "$out/vmlinux" -ot "$deb" ]; then
	z=$out/kernel/boot/vmlinuz-$kver
	at=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$z" | head -1 | cut -d: -f1)
	[ -n "$at" ] || skip "no xz payload found in $z"
	tail -c +$((at + 1)) "$z" | xz -dc --single-stream >"$out/vmlinux.tmp"
	mv "$out/vmlinux.tmp" "$out/vmlinux"
fi
echo "$kver" >"$out/kernel-version"

# The initramfs: busybox, the modules for virtio, 9p and overlay with a
# modules.dep of their own (busybox modprobe loads the dependencies), and
# tests/guest/init.
img=$out/initramfs.img
if [ ! -s "$img" ] || [ "$img" -ot tests/guest/init ] || [ "$img" -ot "$deb" ] ||
	[ "$img" -ot tests/guest/build.sh ]; then
	r=$out/initramfs
	rm -rf "$r"
	mkdir -p "$r"/{bin,dev,proc,sys,lower,rw,newroot} "$r/lib/modules/$kver"
	cp "$busybox_bin" "$r/bin/busybox"
	for applet in sh mount mkdir modprobe switch_root cat poweroff sleep; do
		ln -s busybox "$r/bin/$applet"
	done
	src=$out/kernel/lib/modules/$kver
	dep=$out/modules.dep.all
	if [ ! -s "$dep" ]; then
		busybox depmod -b "$out/kernel" "$kver"
		cp "$src/modules.dep" "$dep"
	fi
	for m in virtio_pci 9pnet_virtio 9p overlay; do
		line=$(grep "/$m\.ko:" "$dep") || skip "kernel $kver has no module $m"
		for f in ${line/:/}; do
			mkdir -p "$r/lib/modules/$kver/$(dirname "$f")"
			cp "$src/$f" "$r/lib/modules/$kver/$f"
		done
	done
	busybox depmod -b "$r" "$kver"
	install -m 0755 tests/guest/init "$r/init"
	(cd "$r" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1 >"$img.tmp")
	mv "$img.tmp" "$img"
fi
echo "guest: kernel $kver and initramfs in $out"

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Build the vmtest guest's initramfs (cpio newc, gzip) at OUT from:
# busybox-static (sh, mount, switch_root, poweroff, ...), the project's
# binaries from BUILD, the shared libraries they load (found with ldd) at
# the paths ldd names, a few modules of the guest kernel, and
# tools/vmtest/init as /init.
#
# Guest layout: /bin/devcg, /bin/devcg-reader, /bin/kernel-tests (the
# privileged suite, build/tests/kernel), busybox applets in /bin, /sbin,
# /usr/bin, /usr/sbin, /usr/bin/ldd (tools/vmtest/ldd); runc and crun at
# the host's paths when the host has them (the suite's runtime tests skip
# where they are missing).
set -eu
build=${1:?usage: mkinitramfs.sh BUILD OUT}
out=${2:?usage: mkinitramfs.sh BUILD OUT}
here=$(dirname "$0")
busybox=/bin/busybox
root="$build/vmtest/root"

[ -x "$busybox" ] || { echo "vmtest: $busybox is missing (busybox-static)" >&2; exit 1; }
if ldd "$busybox" >/dev/null 2>&1; then
	echo "vmtest: $busybox is not statically linked (install busybox-static)" >&2
	exit 1
fi

rm -rf "$root"
mkdir -p "$root"
for d in bin sbin usr/bin usr/sbin etc dev proc sys tmp run root newroot; do
	mkdir -p "$root/$d"
done
chmod 1777 "$root/tmp"

cp "$busybox" "$root/bin/busybox"
# one link per applet, where busybox itself would install it
"$busybox" --list-full | while read -r applet; do
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done

# the project's binaries
install -m 0755 "$build/devcg" "$root/bin/devcg"
install -m 0755 "$build/devcg-reader" "$root/bin/devcg-reader"
install -m 0755 "$build/tests/kernel" "$root/bin/kernel-tests"

# the container runtimes the suite drives, where the host has them
# (VMTEST_RUNTIMES, default "runc crun"), at the host's paths
bins="$build/devcg $build/devcg-reader $build/tests/kernel"
for rt in ${VMTEST_RUNTIMES-runc crun}; do
	path=$(command -v "$rt" 2>/dev/null) || continue
	mkdir -p "$root${path%/*}"
	cp -L "$path" "$root$path"
	bins="$bins $path"
	echo "vmtest: initramfs gets $path"
done

# their shared libraries and the dynamic loader, at the paths ldd names
for bin in $bins; do
	ldd "$bin" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u | while read -r lib; do
	mkdir -p "$root${lib%/*}"
	cp -L "$lib" "$root$lib"
done

# kernel modules the guest loads at boot (VMTEST_MODULES, default "fuse":
# the runtime tests open /dev/fuse), from the unpacked kernel package
release=$(cat "$build/vmtest/kernel-release")
mkdir -p "$root/lib/modules"
for m in ${VMTEST_MODULES-fuse}; do
	ko=$(find "$build/vmtest/kernel/lib/modules/$release" -name "$m.ko" | head -n1)
	[ -n "$ko" ] || { echo "vmtest: no module $m.ko in Linux $release" >&2; exit 1; }
	cp "$ko" "$root/lib/modules/"
done

install -m 0755 "$here/init" "$root/init"
install -m 0755 "$here/ldd" "$root/usr/bin/ldd"
cat > "$root/etc/passwd" <<'PASSWD'
root:x:0:0:root:/root:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
PASSWD
cat > "$root/etc/group" <<'GROUP'
root:x:0:
nogroup:x:65534:
GROUP
echo devcg-vmtest > "$root/etc/hostname"

(cd "$root" && find . | LC_ALL=C sort | "$busybox" cpio -o -H newc -R 0:0 2>/dev/null) |
	gzip -6 > "$out.tmp"
mv "$out.tmp" "$out"
echo "vmtest: initramfs $out ($(du -k "$out" | cut -f1) KiB)"

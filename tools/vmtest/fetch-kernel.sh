#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Fetch Debian's cloud kernel for the vmtest guest into DIR (build/vmtest)
# with `apt-get download` and unpack it there with `dpkg -x`: nothing is
# installed on the host. Leaves DIR/vmlinuz and DIR/kernel-release.
#
# The package is what linux-image-cloud-amd64 (Debian 12: Linux 6.1)
# depends on, or $VMTEST_KERNEL_PKG (e.g. linux-image-6.1.0-57-cloud-amd64).
#
# Usage: fetch-kernel.sh DIR [SUITE [META]]
#   SUITE: another Debian suite than the host's (the k8s-node guest: trixie,
#   Linux 6.12), whose package lists aptsuite.sh keeps under DIR; META the
#   package to resolve (default linux-image-cloud-amd64)
set -eu
dir=${1:?usage: fetch-kernel.sh DIR [SUITE [META]]}
suite=${2:-}
meta=${3:-linux-image-cloud-amd64}
here=$(cd "$(dirname "$0")" && pwd)
if [ -n "$suite" ]; then
	mkdir -p "$dir"
	apt_get() { "$here/aptsuite.sh" "$dir" "$suite" apt-get "$@"; }
	apt_cache() { "$here/aptsuite.sh" "$dir" "$suite" apt-cache "$@"; }
else
	apt_get() { apt-get "$@"; }
	apt_cache() { apt-cache "$@"; }
fi

resolve() {
	if [ -n "${VMTEST_KERNEL_PKG:-}" ]; then
		echo "$VMTEST_KERNEL_PKG"
		return
	fi
	apt_cache depends "$meta" 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[^ ]*-cloud-amd64\)$/\1/p' | head -n1
}

pkg=$(resolve)
if [ -z "$pkg" ] || ! apt_cache show "$pkg" >/dev/null 2>&1; then
	echo "vmtest: package lists have no $meta; running apt-get update" >&2
	apt_get update -qq
	pkg=$(resolve)
fi
[ -n "$pkg" ] || { echo "vmtest: cannot resolve $meta to a kernel package" >&2; exit 1; }

mkdir -p "$dir"
rm -rf "$dir/kernel" "$dir"/linux-image-*.deb
echo "vmtest: downloading $pkg"
# as root apt would warn that its _apt user cannot write here; it need not
dir=$(cd "$dir" && pwd)
(cd "$dir" && apt_get download -q -o APT::Sandbox::User=root "$pkg" >/dev/null)
deb=$(ls "$dir"/"$pkg"_*.deb)
dpkg -x "$deb" "$dir/kernel"
img=$(ls "$dir"/kernel/boot/vmlinuz-* | head -n1)
[ -f "$img" ] || { echo "vmtest: no vmlinuz in $deb" >&2; exit 1; }
release=${img##*/vmlinuz-}
config="$dir/kernel/boot/config-$release"
# what the guest needs built in (no modules are loaded in the guest)
for opt in SERIAL_8250_CONSOLE DEVTMPFS BLK_DEV_INITRD RD_GZIP TMPFS BPF_SYSCALL CGROUP_BPF \
	   DEBUG_INFO_BTF FTRACE_SYSCALLS KPROBES ACPI; do
	grep -q "^CONFIG_$opt=y" "$config" || { echo "vmtest: $release lacks CONFIG_$opt=y" >&2; exit 1; }
done
echo "$release" > "$dir/kernel-release"
cp "$img" "$dir/vmlinuz.tmp"
mv "$dir/vmlinuz.tmp" "$dir/vmlinuz"
echo "vmtest: kernel $release ($deb)"

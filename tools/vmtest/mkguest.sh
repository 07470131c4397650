#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Build the systemd guests' initramfs (one image for systemd-v2 and
# systemd-v1: they differ only in the kernel command line) at OUT:
#   - the Debian 12 root from mkroot.sh (cached by package list),
#   - the project's packages from `make deb` (libdevcg0, devcg) installed
#     into it with `dpkg --root`, as a user would have them,
#   - the test binaries and helpers under /usr/lib/devcg-vmtest/
#     (devcg-errno-reader, devcg-reader, kernel-tests, run, and the guest
#     scripts' parts: lib.sh, soak.sh, revoke.sh, hotplug-systemd.sh,
#     sd-enclosing.sh, trace-service.sh, sd-devices.sh),
#   - tools/vmtest/init-systemd as /init, the runner devcg-vmtest.service,
#   - the trimming: units the guest never needs are masked.
# The archive is an uncompressed cpio (newc): it is made anew each time the
# project changes, and neither gzip here nor gunzip under TCG is needed.
# A run's own script is a second, small cpio appended by run.sh.
#
# The k8s-node guest (GUEST k8s-node) is built the same way from a Debian 13
# (trixie) root with containerd, and gets on top (k8s/mknode.sh): the
# containerd configuration (k8s/config.toml), the CDI specs (k8s/*.yaml in
# /etc/cdi), the pause and workload images as OCI layouts (k8s/mkoci.sh),
# the CRI client (k8s/cri.py) with its stubs generated from the api.proto
# of Debian's golang-github-kubernetes-cri-api-dev, and guest/k8s-node.sh's
# parts.
#
# Usage: mkguest.sh BUILD OUT [GUEST]
set -eu
build=${1:?usage: mkguest.sh BUILD OUT [GUEST]}
out=${2:?usage: mkguest.sh BUILD OUT [GUEST]}
guest=${3:-systemd}
here=$(dirname "$0")
dir=$build/vmtest
work=$dir/systemd-root
if [ "$guest" = k8s-node ]; then
	work=$dir/k8s-root
	# Debian 13: containerd 1.7 (CRI, NRI, CDI), runc, crun, systemd 257;
	# python3-grpcio for the CRI client (python3-yaml: its daemonset
	# command), python3-grpc-tools to generate its stubs (purged from the
	# image afterwards); no podman. Nothing to purge: trixie's root is
	# merged without usrmerge and has no perl beyond perl-base.
	export VMTEST_SUITE=${VMTEST_K8S_SUITE:-trixie} VMTEST_ROOT_NAME=debian-${VMTEST_K8S_SUITE:-trixie}-root VMTEST_ROOT_PURGE=
	export VMTEST_ROOT_BASE="systemd-sysv dbus containerd runc crun busybox-static bpftool python3-grpcio python3-grpc-tools python3-yaml"
fi

debs=$(ls "$build"/deb/libdevcg[0-9]*_*.deb "$build"/deb/devcg_*.deb 2>/dev/null) || {
	echo "vmtest: no packages in $build/deb (make deb)" >&2
	exit 1
}
# what the packages need from Debian goes into the cached root
deps=$(for deb in $debs; do dpkg-deb -f "$deb" Depends; done |
	tr ',|' '\n\n' | sed 's/(.*)//; s/ //g' | grep -v '^libdevcg' | grep -v '^$' | LC_ALL=C sort -u)
root=$("$here/mkroot.sh" "$dir" $deps | tail -n1)
[ -d "$root" ] || exit 1

rm -rf "$work"
cp -a "$root" "$work"
rm -f "$work/.complete"
dpkg --root="$work" -i $debs >"$dir/dpkg.log" 2>&1 || {
	echo "vmtest: dpkg --root could not install $debs:" >&2
	sed 's/^/  | /' "$dir/dpkg.log" >&2
	exit 1
}
[ -x "$work/usr/bin/devcg" ] || { echo "vmtest: devcg is not installed in the guest root" >&2; exit 1; }
# the ldconfig trigger (libdevcg0) runs in the root, as dpkg would there
chroot "$work" /sbin/ldconfig
[ "$guest" = k8s-node ] && k8s=1 || k8s=

lib=$work/usr/lib/devcg-vmtest
mkdir -p "$lib"
install -m 0755 "$dir/devcg-errno-reader" "$lib/devcg-errno-reader"
install -m 0755 "$build/devcg-reader" "$lib/devcg-reader"
install -m 0755 "$build/tests/kernel" "$lib/kernel-tests"
install -m 0755 "$here/systemd/run" "$lib/run"
for part in lib soak revoke hotplug-systemd sd-enclosing trace-service sd-devices; do
	install -m 0644 "$here/guest/$part.sh" "$lib/$part.sh"
done
if [ -n "$k8s" ]; then
	. "$here/k8s/mknode.sh"
fi
install -m 0644 "$here/systemd/devcg-vmtest.service" "$work/etc/systemd/system/"
ln -sf ../devcg-vmtest.service "$work/etc/systemd/system/multi-user.target.wants/devcg-vmtest.service"
install -m 0755 "$here/init-systemd" "$work/init"

# A fixed machine id: an empty one makes every boot a first boot
# (ConditionFirstBoot units, presets). The guest is never networked.
echo 0d3c9e2a7f4b4e61a5c8d1f0b2e3a4c5 > "$work/etc/machine-id"
echo devcg-vmtest > "$work/etc/hostname"
# root may log in on the console without a password when debugging by hand
sed -i 's/^root:[^:]*:/root::/' "$work/etc/shadow"

# Trimming: what a default Debian boot starts that no test needs. Each is
# masked (a link to /dev/null), so systemd neither runs nor waits for it.
mask() {
	for unit; do
		ln -sf /dev/null "$work/etc/systemd/system/$unit"
	done
}
# a generator is masked the same way in /etc/systemd/system-generators
# (systemd.generator(7)); all of them run again on every daemon-reload
mask_generators() {
	mkdir -p "$work/etc/systemd/system-generators"
	for gen; do
		[ -e "$work/usr/lib/systemd/system-generators/$gen" ] ||
			echo "vmtest: no generator $gen in the root to mask" >&2
		ln -sf /dev/null "$work/etc/systemd/system-generators/$gen"
	done
}
. "$here/systemd/masked"

(cd "$work" && find . | LC_ALL=C sort | busybox cpio -o -H newc 2>/dev/null) > "$out.tmp"
mv "$out.tmp" "$out"
echo "vmtest: systemd guest image $out ($(du -m "$out" | cut -f1) MB; root $(du -sm "$work" | cut -f1) MB)"

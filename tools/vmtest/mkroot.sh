#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Build the Debian 12 root of the systemd guests with mmdebstrap, once per
# package list: DIR/debian-root-KEY/ where KEY hashes the list, the suite,
# the mirror and this script. A root already there is reused as it is; a
# new one replaces the older ones. Prints the root's path on the last line.
#
# Usage: mkroot.sh DIR EXTRA_PACKAGE...
#   EXTRA_PACKAGEs are added to the base list: the Depends of the project's
#   own .debs (the debs themselves are installed later, by mkguest.sh, so a
#   rebuild of the project does not rebuild the root).
# Environment: VMTEST_MIRROR (a mirror URL or a sources file; default the
#   host's /etc/apt/sources.list.d/debian.sources, else mmdebstrap's own
#   default), VMTEST_SUITE (default bookworm; another suite than the host's
#   gets the host's sources with its codename replaced, aptsuite.sh),
#   VMTEST_ROOT_BASE (the base package list instead of the one below),
#   VMTEST_ROOT_PURGE (packages purged at the end instead of the ones below),
#   VMTEST_ROOT_NAME (the root's directory name before -KEY, default
#   debian-root; the k8s-node guest's is debian-trixie-root).
#
# Root mode (we are root): mmdebstrap's unshare and fakechroot modes are not
# needed, and root mode leaves real owners and device nodes in the tree.
set -eu
# mmdebstrap's filters (mmtarfilter) are python3 scripts run through env:
# the system's python3, not a per-user shim found first in PATH
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
dir=${1:?usage: mkroot.sh DIR EXTRA_PACKAGE...}
shift
suite=${VMTEST_SUITE:-bookworm}
# systemd as PID 1 and what the guest tests and their users drive;
# usr-is-merged answers init-system-helpers' "usrmerge | usr-is-merged"
# (the root is merged already), so usrmerge and with it the whole of perl
# (50 MB the guest copies at each boot) can go (the customize hook below);
# bpftool (2 MB) lets a guest script pin a program and list a cgroup's
# programs (guest/bpfprogram.sh)
base=${VMTEST_ROOT_BASE:-systemd-sysv dbus runc crun podman conmon busybox-static usr-is-merged bpftool}
unneeded=${VMTEST_ROOT_PURGE-usrmerge libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl perl libperl5.36 perl-modules-5.36}
name=${VMTEST_ROOT_NAME:-debian-root}
pkgs=$(printf '%s\n' $base "$@" | LC_ALL=C sort -u | tr '\n' ' ')
mirror=${VMTEST_MIRROR:-}
host_suite=$(. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}")
if [ "$suite" != "${host_suite:-bookworm}" ] && { [ -z "$mirror" ] || [ -f "$mirror" ]; }; then
	# the host's sources name the host's suites: the same with this one
	mirror=$("$(dirname "$0")/aptsuite.sh" "$dir/$suite" "$suite" sources)
elif [ -z "$mirror" ] && [ -f /etc/apt/sources.list.d/debian.sources ]; then
	mirror=/etc/apt/sources.list.d/debian.sources
fi
mirror_text=$mirror
[ -f "$mirror" ] && mirror_text=$(cat "$mirror")

key=$( {
	echo "$suite"
	echo "$pkgs"
	echo "$unneeded"
	echo "$mirror_text"
	cat "$0"
} | sha256sum | cut -c1-16)
root=$dir/$name-$key
if [ -f "$root/.complete" ]; then
	echo "vmtest: Debian root $root is cached ($pkgs)" >&2
	echo "$root"
	exit 0
fi

command -v mmdebstrap >/dev/null || {
	echo "vmtest: mmdebstrap is missing (make vmtest-deps)" >&2
	exit 1
}
[ "$(id -u)" = 0 ] || { echo "vmtest: building the Debian root needs root (mmdebstrap --mode=root)" >&2; exit 1; }

mkdir -p "$dir"
rm -rf "$root" "$root.tmp"
log=$dir/mmdebstrap${VMTEST_ROOT_NAME:+-$name}.log
echo "vmtest: building the Debian $suite root with mmdebstrap: $pkgs (log in $log)" >&2
start=$(date +%s)
# documentation, manuals and translations are left out (the guest lives in
# RAM); the host's apt settings for this mirror (release files past their
# Valid-Until on a snapshot) are repeated here, mmdebstrap does not read them
set -- --variant=apt --mode=root --format=directory \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/doc/*' \
	--dpkgopt='path-include=/usr/share/doc/*/copyright' \
	--dpkgopt='path-exclude=/usr/share/locale/*' \
	--dpkgopt='path-exclude=/usr/share/info/*' \
	--include="$(echo $pkgs | tr ' ' ',')" \
	"$suite" "$root.tmp"
[ -n "$unneeded" ] && set -- --customize-hook="chroot \"\$1\" dpkg --purge $unneeded" "$@"
[ -n "$mirror" ] && set -- "$@" "$mirror"
if ! mmdebstrap "$@" >"$log" 2>&1; then
	echo "vmtest: mmdebstrap failed: the systemd guests have no root (no network to the Debian mirror?); the end of $log:" >&2
	tail -n 15 "$log" | sed 's/^/  | /' >&2
	rm -rf "$root.tmp"
	exit 1
fi
touch "$root.tmp/.complete"
mv "$root.tmp" "$root"
# older roots (other package lists) go
for old in "$dir/$name"-*; do
	[ "$old" = "$root" ] || rm -rf "$old"
done
echo "vmtest: Debian root $root built in $(($(date +%s) - start))s, $(du -sm "$root" | cut -f1) MB" >&2
echo "$root"

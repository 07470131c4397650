#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Install what devcg builds and tests with, from Debian packages; idempotent.
set -eu
pkgs="make gcc g++ dpkg-dev clang llvm libbpf-dev libelf-dev zlib1g-dev bpftool libjansson-dev libsystemd-dev libyaml-dev protobuf-c-compiler libprotobuf-c-dev pkg-config libclang-rt-14-dev runc crun busybox-static"
# kubectl, for the client-side parse of the DaemonSet manifest (tests/deploy):
# Debian's kubernetes-client, unless a kubectl is there already (another
# package's, e.g. the Google Cloud SDK's kubectl, owns /usr/bin/kubectl too
# and the two cannot both be installed)
command -v kubectl >/dev/null 2>&1 || pkgs="$pkgs kubernetes-client"
# extra sets: 'deps.sh bench' adds what make bench needs
case "${1:-}" in
bench) pkgs="$pkgs python3 gnuplot-nox" ;;
vmtest) pkgs="$pkgs qemu-system-x86 mmdebstrap" ;; # the guest kernel and root are fetched, not installed
esac
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "deps: missing packages:$missing (run 'make deps' as root)" >&2
	exit 1
fi
echo "deps: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends $missing >/dev/null

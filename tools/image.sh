#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make image: the node agent's OCI image, built from this tree's .debs (make
# deb) with nothing fetched: libdevcg0 and devcg unpacked (dpkg-deb -x) into
# a root, the shared libraries the entrypoint loads copied from this host
# (the dynamic loader lists them), and that root written as a one-layer OCI
# image layout tarball by the k8s-node guest's writer
# (tools/vmtest/k8s/mkoci.sh), which `ctr -n k8s.io images import` reads.
# The DaemonSet (deploy/kubernetes/devcg-nri.yaml) names the same reference.
# Usage: image.sh BUILD VERSION [OUT REF ENTRYPOINT...]
#   default: BUILD/devcg-nri-image.tar, localhost/devcg/devcg-nri:VERSION,
#   /usr/bin/devcg-nri --socket /var/run/nri/nri.sock
set -eu
build=${1:?usage: image.sh BUILD VERSION [OUT REF ENTRYPOINT...]}
version=${2:?usage: image.sh BUILD VERSION [OUT REF ENTRYPOINT...]}
out=${3:-$build/devcg-nri-image.tar}
ref=${4:-localhost/devcg/devcg-nri:$version}
if [ $# -gt 4 ]; then shift 4; else set -- /usr/bin/devcg-nri --socket /var/run/nri/nri.sock; fi
here=$(cd "$(dirname "$0")" && pwd)
major=${version%%.*}
arch=$(dpkg --print-architecture)
[ "$arch" = amd64 ] || { echo "image.sh: the image writer makes amd64 images only, not $arch" >&2; exit 2; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
for p in "libdevcg$major" devcg; do
	deb=$build/deb/${p}_$version-1_$arch.deb
	[ -f "$deb" ] || { echo "image.sh: $deb: missing (make deb)" >&2; exit 1; }
	dpkg-deb -x "$deb" "$root"
done
[ -x "$root$1" ] || { echo "image.sh: $1 is not in the packages (the agent is built when the tree has user/nri/)" >&2; exit 1; }

# the libraries the entrypoint loads, as the dynamic loader resolves them
# here with the image's own libdevcg first, each at its path on this host,
# with the loader itself; the packages' own files are not replaced
loader=/lib64/ld-linux-x86-64.so.2
libs=$(LD_LIBRARY_PATH="$root/usr/lib/$(dpkg-architecture -qDEB_HOST_MULTIARCH)" "$loader" --list "$root$1" |
	sed -n 's/^.* => \(\/[^ ]*\) (0x[0-9a-f]*)$/\1/p')
for l in $libs "$loader"; do
	case $l in "$root"/*) continue ;; esac
	mkdir -p "$root$(dirname "$l")"
	[ -e "$root$l" ] || cp -L "$l" "$root$l"
done
# what the runtime mounts over, and the directories the agent uses (its
# state in /run/devcg, the NRI socket under /var/run/nri)
for d in dev proc sys tmp run run/devcg var/run/nri etc; do mkdir -p "$root/$d"; done
chmod 1777 "$root/tmp"
chmod 0700 "$root/run/devcg"
# the documentation of the packages is in the .debs; the image carries the
# program (its copyright stays: /usr/share/doc/*/copyright)
rm -rf "$root/usr/share/man" "$root/usr/share/bash-completion" "$root/usr/share/containers" "$root/usr/lib/systemd"
"$here/vmtest/k8s/mkoci.sh" "$out" "$ref" "$root" "$@"
echo "  IMAGE    $out ($ref)"

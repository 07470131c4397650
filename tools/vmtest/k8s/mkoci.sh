#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Write a one-layer OCI image as an OCI image layout in a tar archive, the
# form `ctr images import` reads: oci-layout, index.json, blobs/sha256/ with
# the layer (an uncompressed tar of ROOTDIR: its digest is its diff_id),
# the image config and the manifest. The index names the image REF
# (io.containerd.image.name, and org.opencontainers.image.ref.name).
# Nothing is fetched: the k8s-node guest has no network, its pause and
# workload images are made with this from the guest root's busybox-static.
#
# Usage: mkoci.sh OUT.tar REF ROOTDIR ENTRYPOINT...
#   e.g. mkoci.sh pause.tar localhost/devcg/pause:1 DIR /bin/sleep infinity
set -eu
out=${1:?usage: mkoci.sh OUT.tar REF ROOTDIR ENTRYPOINT...}
ref=${2:?usage: mkoci.sh OUT.tar REF ROOTDIR ENTRYPOINT...}
rootdir=${3:?usage: mkoci.sh OUT.tar REF ROOTDIR ENTRYPOINT...}
shift 3
[ $# -gt 0 ] || { echo "usage: mkoci.sh OUT.tar REF ROOTDIR ENTRYPOINT..." >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blobs/sha256"

# a blob from standard input: prints "DIGEST SIZE"
blob() {
	cat > "$work/blob.tmp"
	d=$(sha256sum "$work/blob.tmp" | cut -d' ' -f1)
	mv "$work/blob.tmp" "$work/blobs/sha256/$d"
	echo "$d $(wc -c < "$work/blobs/sha256/$d")"
}

# the entrypoint as a JSON array of strings (no quotes or backslashes in them)
ep=
for a; do
	case $a in *'"'* | *'\'*) echo "mkoci.sh: no quotes or backslashes in the entrypoint" >&2; exit 2 ;; esac
	ep="$ep${ep:+, }\"$a\""
done

set -- $(tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$rootdir" -cf - . | blob)
layer=$1 layer_size=$2
set -- $(printf '{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/bin"],"Entrypoint":[%s],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
	"$ep" "$layer" | blob)
config=$1 config_size=$2
set -- $(printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:%s","size":%s}]}' \
	"$config" "$config_size" "$layer" "$layer_size" | blob)
manifest=$1 manifest_size=$2
printf '{"imageLayoutVersion":"1.0.0"}' > "$work/oci-layout"
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"%s","org.opencontainers.image.ref.name":"%s"}}]}' \
	"$manifest" "$manifest_size" "$ref" "${ref##*:}" > "$work/index.json"
rm -f "$work/blob.tmp"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$work" -cf "$out.tmp" oci-layout index.json blobs
mv "$out.tmp" "$out"

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The node agent's deployment, checked without a cluster (make test; the
# agent's run on a node is the k8s-node guest's):
# - the OCI image (tools/image.sh, from BUILD/deb/*.deb): a valid image
#   layout (tests/deploy/ocicheck.c: index, manifest, config, sizes, the
#   entrypoint, diff_ids; sha256sum: every blob's content is its name),
#   whose layer holds the entrypoint with every library it loads (it runs
#   in a chroot of the layer). The image is of devcg-nri when the tree
#   builds it; until then of the devcg CLI from the same packages, so that
#   the writer and the checks are tested all the same.
# - the DaemonSet manifest (deploy/kubernetes/devcg-nri.yaml): parsed by
#   kubectl client-side with no API server (`kubectl label --local`: YAML
#   syntax, apiVersion and kind of each object; kubectl checks no schema
#   offline, it gets that from the server), then kubectl's parse of it held
#   to what the agent needs: hostPID, each mount's host path and read-only
#   flag, the capabilities, the image named as the image script names it,
#   the command its entrypoint. Unknown field names elsewhere are not seen.
# Each check has a control: a damaged copy that the same check rejects.
# Usage: test.sh BUILD   (from the top of the tree)
set -u
build=${1:-build}
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
skp() { echo "skip $1: $2"; skip=$((skip + 1)); }
check() { name=$1; shift; if out=$("$@" 2>&1); then ok "$name"; else bad "$name" "$out"; fi; }
# the control: the check must fail, for the reason WHY (a grep pattern)
refuses() {
	name=$1 why=$2
	shift 2
	if out=$("$@" 2>&1); then
		bad "$name" "accepted"
	elif ! echo "$out" | grep -q -- "$why"; then
		bad "$name" "refused for another reason than '$why': $out"
	else
		ok "$name"
	fi
}

work=$(mktemp -d /tmp/devcg-deploy-XXXXXX)
trap 'rm -rf "$work"' EXIT
version=$(sed -n 's/^#define DEVCG_VERSION "\(.*\)"/\1/p' include/devcg.h)
ref=localhost/devcg/devcg-nri:$version
# the agent's command: the image's entrypoint and the DaemonSet's command
agent="/usr/bin/devcg-nri --socket /var/run/nri/nri.sock"
manifest=deploy/kubernetes/devcg-nri.yaml

# ---- the image
# layout_ok DIR REF ENTRYPOINT...: the layout, and every blob's digest
layout_ok() {
	d=$1
	shift
	for b in "$d"/blobs/sha256/*; do
		[ "$(sha256sum < "$b" | cut -d' ' -f1)" = "${b##*/}" ] || { echo "blob ${b##*/}: content hashes otherwise"; return 1; }
	done
	"$work/ocicheck" "$d" "$@"
}
# layer_of DIR: the layer blob of the one manifest of the layout
layer_of() {
	m=$(sed -n 's/.*"manifests":\[{[^}]*"digest":"sha256:\([0-9a-f]*\)".*/\1/p' "$1/index.json")
	sed -n 's/.*"layers":\[{[^}]*"digest":"sha256:\([0-9a-f]*\)".*/\1/p' "$1/blobs/sha256/$m"
}

if ! out=$(cc -std=gnu11 -Wall -Wextra -Werror -o "$work/ocicheck" tests/deploy/ocicheck.c -ljansson 2>&1); then
	bad ocicheck_builds "$out"
elif [ "$(dpkg --print-architecture)" != amd64 ]; then
	skp image_layout_is_valid "the image writer makes amd64 images only"
else
	# the agent's image when the tree builds it (the Makefile's WITH_NRI)
	if [ -n "$(printf 'devcg-with-nri:\n\t@echo $(WITH_NRI)\n' | make --no-print-directory -s -f Makefile -f - devcg-with-nri BUILD="$build")" ]; then
		what=agent img_ref=$ref entry=$agent probe="/usr/bin/devcg-nri --version"
	else
		# no agent in this tree yet: the CLI from the same .debs
		what=cli img_ref=localhost/devcg/devcg-image-test:$version entry="/usr/bin/devcg --version" \
			probe="/usr/bin/devcg --version"
	fi
	if [ ! -f "$build/deb/devcg_$version-1_$(dpkg --print-architecture).deb" ] &&
		! out=$(make --no-print-directory -s deb BUILD="$build" 2>&1); then
		bad image_script_builds_the_layout "make deb: $out"
	elif ! out=$(tools/image.sh "$build" "$version" "$work/image.tar" "$img_ref" $entry 2>&1); then
		bad image_script_builds_the_layout "$out"
	else
		ok image_script_builds_the_layout
		mkdir "$work/layout"
		tar -xf "$work/image.tar" -C "$work/layout"
		check "image_layout_is_valid_with_its_entrypoint_$what" layout_ok "$work/layout" "$img_ref" $entry
		# the controls: a layer changed by one byte, a config whose
		# entrypoint is another, an index naming another image
		cp -a "$work/layout" "$work/corrupt"
		l=$work/corrupt/blobs/sha256/$(layer_of "$work/corrupt")
		printf 'X' | dd of="$l" bs=1 seek=100 conv=notrunc 2>/dev/null
		refuses image_check_rejects_a_layer_whose_digest_does_not_match "content hashes otherwise" layout_ok "$work/corrupt" "$img_ref" $entry
		refuses image_check_rejects_another_entrypoint "Entrypoint" layout_ok "$work/layout" "$img_ref" /usr/bin/other
		refuses image_check_rejects_another_image_name "no manifest named" layout_ok "$work/layout" "$img_ref-other" $entry
		mkdir "$work/root"
		tar -xf "$work/layout/blobs/sha256/$(layer_of "$work/layout")" -C "$work/root"
		if [ "$(id -u)" != 0 ]; then
			skp "image_entrypoint_runs_with_the_layers_libraries_$what" "chroot needs root"
		else
			check "image_entrypoint_runs_with_the_layers_libraries_$what" chroot "$work/root" $probe
			# the control: without one library the layer holds, it does not run
			rm -f "$work/root"/lib/*/libjansson.so.4 "$work/root"/usr/lib/*/libjansson.so.4
			refuses image_run_check_fails_without_a_library "libjansson" chroot "$work/root" $probe
		fi
	fi
fi

# ---- the manifest
kubectl=${KUBECTL:-kubectl}
# no cluster: a kubeconfig that names none, so nothing is asked of a server
export KUBECONFIG=/dev/null

# kparse FILE: the objects as kubectl names them, parsed client-side
kparse() { "$kubectl" label --local -o name devcg.test/parsed=yes -f "$1"; }
# kpath FILE JSONPATH: a value of the DaemonSet of FILE (the document that
# kubectl names daemonset.apps/...), from kubectl's parse
kpath() {
	if [ "$1" != "$ds_of" ]; then
		rm -f "$work"/doc.*
		awk -v w="$work" '/^---/ { n++; next } { print > (w "/doc." n ".yaml") }' "$1"
		for d in "$work"/doc.*; do
			[ "$(kparse "$d" 2>/dev/null)" != daemonset.apps/devcg-nri ] || cp "$d" "$work/ds.yaml"
		done
		ds_of=$1
	fi
	"$kubectl" label --local devcg.test/parsed=yes -f "$work/ds.yaml" -o jsonpath="$2"
}
ds_of=

parses() {
	objs=$(kparse "$1") || return 1
	[ "$(echo $objs)" = "namespace/devcg-system serviceaccount/devcg-nri daemonset.apps/devcg-nri" ] ||
		{ echo "objects: $objs"; return 1; }
}

# what the agent needs, as MOUNTPATH HOSTPATH ro|rw (docs/kubernetes.md)
cat > "$work/mounts.want" <<'MOUNTS'
/dev /dev rw
/etc/cdi /etc/cdi ro
/run/dbus /run/dbus ro
/run/devcg /run/devcg rw
/run/systemd /run/systemd ro
/sys/fs/cgroup /sys/fs/cgroup rw
/var/run/cdi /var/run/cdi ro
/var/run/nri /var/run/nri rw
MOUNTS
caps_want="BPF CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER MKNOD NET_ADMIN PERFMON SYS_ADMIN SYS_CHROOT SYS_PTRACE SYS_RESOURCE"

# holds FILE: kubectl's parse of the DaemonSet has what the agent needs
holds() {
	f=$1
	rm -f "$work/ds.yaml"
	ds_of=
	spec=.spec.template.spec
	c="$spec.containers[0]"
	v=$(kpath "$f" "{$spec.hostPID}") && [ "$v" = true ] || { echo "hostPID: '$v', not true"; return 1; }
	v=$(kpath "$f" "{$c.image}") && [ "$v" = "$ref" ] || { echo "image: '$v', not $ref (tools/image.sh's)"; return 1; }
	v=$(kpath "$f" "{$c.imagePullPolicy}") && [ "$v" = Never ] || { echo "imagePullPolicy: '$v', not Never"; return 1; }
	v=$(kpath "$f" "{range $c.command[*]}{@} {end}") && [ "$v" = "$agent " ] ||
		{ echo "command: '$v', not the image's entrypoint '$agent'"; return 1; }
	# each mount: its volume's host path and its read-only flag
	kpath "$f" "{range $spec.volumes[*]}{.name} {.hostPath.path}{\"\\n\"}{end}" > "$work/volumes" || return 1
	kpath "$f" "{range $c.volumeMounts[*]}{.name} {.mountPath} {.readOnly}{\"\\n\"}{end}" |
		awk -v vols="$work/volumes" '
			BEGIN { while ((getline l < vols) > 0) { split(l, a, " "); host[a[1]] = a[2] } }
			NF { if (!($1 in host) || host[$1] == "") { print "mount " $1 ": no hostPath volume"; bad = 1 }
			     print $2, host[$1], ($3 == "true" ? "ro" : "rw") > "/dev/stdout" }
			END { exit bad }' | sort > "$work/mounts.have" || { cat "$work/mounts.have"; return 1; }
	diff "$work/mounts.want" "$work/mounts.have" || { echo "mounts differ (want, have)"; return 1; }
	v=$(kpath "$f" "{$c.securityContext.privileged}") && [ "$v" != true ] || { echo "privileged: true"; return 1; }
	v=$(kpath "$f" "{range $c.securityContext.capabilities.add[*]}{@}{\"\\n\"}{end}" | sort | tr '\n' ' ')
	[ "$v" = "$caps_want " ] || { echo "capabilities: '$v', not '$caps_want'"; return 1; }
	v=$(kpath "$f" "{range $c.securityContext.capabilities.drop[*]}{@}{end}") && [ "$v" = ALL ] ||
		{ echo "capabilities.drop: '$v', not ALL"; return 1; }
	v=$(kpath "$f" "{$spec.tolerations[0].operator}") && [ "$v" = Exists ] || { echo "tolerations: not every taint"; return 1; }
	v=$(kpath "$f" "{$spec.priorityClassName}") && [ "$v" = system-node-critical ] || { echo "priorityClassName: '$v'"; return 1; }
	# the selector picks the template's pods (the API server refuses it otherwise)
	s=$(kpath "$f" '{.spec.selector.matchLabels.app\.kubernetes\.io/name}')
	t=$(kpath "$f" '{.spec.template.metadata.labels.app\.kubernetes\.io/name}')
	[ -n "$s" ] && [ "$s" = "$t" ] || { echo "selector '$s' does not pick the template's label '$t'"; return 1; }
}

if ! command -v "$kubectl" >/dev/null; then
	skp manifest_parses_with_kubectl_client_side "no kubectl (tools/deps.sh installs kubernetes-client)"
else
	echo "# $("$kubectl" version --client 2>/dev/null | head -n1)"
	check manifest_parses_with_kubectl_client_side parses "$manifest"
	check manifest_holds_what_the_agent_needs holds "$manifest"
	# the controls: copies damaged as a hand edit could
	sed 's/^      hostPID: true$/     hostPID: true/' "$manifest" > "$work/indent.yaml"
	refuses kubectl_rejects_a_manifest_indented_wrong "error parsing" parses "$work/indent.yaml"
	sed 's/^kind: Namespace$//' "$manifest" > "$work/nokind.yaml"
	refuses kubectl_rejects_an_object_without_kind "Kind.* is missing" parses "$work/nokind.yaml"
	sed 's/^      hostPID: true$/      hostPid: true/' "$manifest" > "$work/hostpid.yaml"
	refuses manifest_check_rejects_a_misspelt_hostPID "^hostPID" holds "$work/hostpid.yaml"
	sed 's/^              mountPath: \/run\/devcg$/              mountpath: \/run\/devcg/' "$manifest" > "$work/mountpath.yaml"
	refuses manifest_check_rejects_a_mount_without_its_mountPath "mounts differ" holds "$work/mountpath.yaml"
	sed 's/^              readOnly: true$//' "$manifest" > "$work/rw.yaml"
	refuses manifest_check_rejects_a_mount_made_writable "mounts differ" holds "$work/rw.yaml"
	sed "s|image: $ref|image: localhost/devcg/devcg-nri:0.0.0|" "$manifest" > "$work/image.yaml"
	refuses manifest_check_rejects_another_image_than_the_scripts "^image:" holds "$work/image.yaml"
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]

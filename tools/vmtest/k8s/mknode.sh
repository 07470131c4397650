# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The k8s-node guest's own parts, sourced by mkguest.sh (GUEST k8s-node)
# once the project's packages and /usr/lib/devcg-vmtest ($lib) are in the
# root ($work): containerd's configuration, the CDI specs, the CRI client
# and its stubs, the pause and workload images.
k8sdir=$here/k8s
suite=${VMTEST_K8S_SUITE:-trixie}

install -D -m 0644 "$k8sdir/config.toml" "$work/etc/containerd/config.toml"
install -D -m 0644 "$k8sdir/nvidia.yaml" "$work/etc/cdi/nvidia.yaml"
install -D -m 0644 "$k8sdir/hook.yaml" "$work/etc/cdi/devcg-hook.yaml"
install -D -m 0644 "$k8sdir/filter.yaml" "$work/etc/cdi/devcg-filter.yaml"
mkdir -p "$work/etc/nri/conf.d" "$work/opt/nri/plugins"

# The CRI client's stubs, generated in the root from the CRI API definition
# of the suite's golang-github-kubernetes-cri-api-dev (downloaded, unpacked
# with dpkg -x, not installed; kept under DIR/trixie). Its api.proto
# imports gogoproto for options of the Go code only: those lines go.
apidir=$dir/$suite/cri-api
if ! ls "$apidir"/golang-github-kubernetes-cri-api-dev_*.deb >/dev/null 2>&1; then
	rm -rf "$apidir"
	mkdir -p "$apidir"
	aptsuite=$(cd "$here" && pwd)/aptsuite.sh
	suitedir=$(cd "$dir" && pwd)/$suite
	(cd "$apidir" && "$aptsuite" "$suitedir" "$suite" apt-get download -q \
		golang-github-kubernetes-cri-api-dev >/dev/null) || {
		echo "vmtest: cannot download golang-github-kubernetes-cri-api-dev ($suite)" >&2
		exit 1
	}
fi
rm -rf "$apidir/x"
dpkg -x "$apidir"/golang-github-kubernetes-cri-api-dev_*.deb "$apidir/x"
proto=$apidir/x/usr/share/gocode/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto
[ -f "$proto" ] || { echo "vmtest: no runtime/v1/api.proto in golang-github-kubernetes-cri-api-dev" >&2; exit 1; }
mkdir -p "$work/tmp/cri-proto" "$lib/cri"
sed '/gogoproto/d' "$proto" > "$work/tmp/cri-proto/api.proto"
chroot "$work" python3 -m grpc_tools.protoc -I/tmp/cri-proto --python_out=/usr/lib/devcg-vmtest/cri \
	--grpc_python_out=/usr/lib/devcg-vmtest/cri /tmp/cri-proto/api.proto || {
	echo "vmtest: generating the CRI stubs failed" >&2
	exit 1
}
rm -rf "$work/tmp/cri-proto" "$apidir/x"
chroot "$work" dpkg --purge python3-grpc-tools >/dev/null
install -m 0755 "$k8sdir/cri.py" "$lib/cri/cri.py"
ln -sf cri/cri.py "$lib/devcg-cri"
chroot "$work" python3 -c 'import sys; sys.path.insert(0, "/usr/lib/devcg-vmtest/cri"); import api_pb2, api_pb2_grpc' || {
	echo "vmtest: the CRI stubs do not import" >&2
	exit 1
}

# The images: busybox-static of the root, and in the workload the errno
# reader (static); the pause image's process sleeps.
img=$dir/k8s-images
rm -rf "$img"
mkdir -p "$img/pause/bin" "$img/workload/bin" "$img/workload/dev" "$img/workload/proc" "$img/workload/state" \
	"$img/pause/dev" "$img/pause/proc" "$lib/images"
cp "$work/bin/busybox" "$img/pause/bin/busybox"
ln -s busybox "$img/pause/bin/sleep"
cp "$work/bin/busybox" "$img/workload/bin/busybox"
for applet in $(chroot "$work" /bin/busybox --list); do
	[ "$applet" = busybox ] || ln -s busybox "$img/workload/bin/$applet"
done
cp "$dir/devcg-errno-reader" "$img/workload/bin/reader"
"$k8sdir/mkoci.sh" "$lib/images/pause.tar" localhost/devcg/pause:1 "$img/pause" /bin/sleep infinity
"$k8sdir/mkoci.sh" "$lib/images/workload.tar" localhost/devcg/workload:1 "$img/workload" /bin/sh
rm -rf "$img"
# the node agent's image (make image's, tools/image.sh) and its DaemonSet
# manifest: the agent part (k8s-nri.sh) runs the agent as that pod too
version=$(dpkg-deb -f "$(ls "$build"/deb/devcg_*.deb | head -n1)" Version)
"$here/../image.sh" "$build" "${version%-*}" "$lib/images/devcg-nri.tar" >/dev/null
install -m 0644 "$here/../../deploy/kubernetes/devcg-nri.yaml" "$lib/devcg-nri.yaml"

# systemd 257 runs more generators than 252 on every daemon-reload; none
# has anything to generate here: all are masked
mkdir -p "$work/etc/systemd/system-generators"
for gen in "$work"/usr/lib/systemd/system-generators/*; do
	[ -e "$gen" ] && ln -sf /dev/null "$work/etc/systemd/system-generators/${gen##*/}"
done

# containerd's package has tools and shims the guest does not run (40 MB
# the guest would copy at each boot): the stress tool and the v1 shims
rm -f "$work/usr/bin/containerd-stress" "$work/usr/bin/containerd-shim" "$work/usr/bin/containerd-shim-runc-v1"

# what a first boot of this root runs at every boot of the guest (its /etc
# and /var are new each time): the linker cache and the journal catalog are
# built already
for unit in ldconfig.service systemd-journal-catalog-update.service systemd-update-done.service \
	systemd-hostnamed.socket systemd-hostnamed.service e2scrub_reap.service; do
	ln -sf /dev/null "$work/etc/systemd/system/$unit"
done

# the guest script itself, for a run with other counts:
#   K8S_UPDATES=100 K8S_RELOADS=100 . /usr/lib/devcg-vmtest/k8s-node.sh
install -m 0644 "$here/guest/k8s-node.sh" "$lib/k8s-node.sh"
install -m 0644 "$here/guest/k8s-nri.sh" "$lib/k8s-nri.sh"

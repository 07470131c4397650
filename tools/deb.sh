#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make deb: Debian packages from the same `make install` step, with dpkg-deb
# alone (nothing downloaded): libdevcg0 (the shared library), libdevcg-dev
# (header, static library, pkg-config file) and devcg (CLI, man page, bash
# completion). Depends come from dpkg-shlibdeps on the built binaries.
# Usage: deb.sh BUILD VERSION   -> BUILD/deb/*.deb
set -eu
build=$1 version=$2
debver=$version-1
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
out=$build/deb
stage=$out/stage
major=${version%%.*}
rm -rf "$out"
mkdir -p "$stage"
make --no-print-directory -s install BUILD="$build" DESTDIR="$(realpath "$stage")" PREFIX=/usr \
	LIBDIR=/usr/lib/"$multiarch"

# shlibs:Depends of the ELF files given, as dpkg-shlibdeps computes it
# (it wants a debian/control to exist; a minimal one in a scratch dir does)
shlibdeps() {
	tmp=$(mktemp -d)
	mkdir "$tmp/debian"
	printf 'Source: devcg\n\nPackage: devcg\nArchitecture: any\n' > "$tmp/debian/control"
	for f; do set -- "$@" "$(realpath "$f")"; shift; done
	(cd "$tmp" && dpkg-shlibdeps -O "$@" 2>/dev/null) | sed -n 's/^shlibs:Depends=//p'
	rm -rf "$tmp"
}

# package NAME SECTION DEPENDS DESCRIPTION FILE... (paths relative to the stage)
package() {
	name=$1 section=$2 depends=$3 description=$4
	shift 4
	root=$out/$name
	mkdir -p "$root/DEBIAN" "$root/usr/share/doc/$name"
	for f; do
		mkdir -p "$root/$(dirname "$f")"
		cp -a "$stage/$f" "$root/$f"
	done
	cp LICENSE "$root/usr/share/doc/$name/copyright"
	size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
	{
		echo "Package: $name"
		echo "Version: $debver"
		echo "Architecture: $arch"
		echo "Section: $section"
		echo "Priority: optional"
		echo "Maintainer: devcg maintainers <devcg@localhost>"
		echo "Installed-Size: $size"
		[ -z "$depends" ] || echo "Depends: $depends"
		[ "$name" != "libdevcg$major" ] || echo "Multi-Arch: same"
		echo "Description: $description"
		cat "tools/deb/$name.description"
	} > "$root/DEBIAN/control"
	if [ "$name" = "libdevcg$major" ]; then
		echo "libdevcg $major libdevcg$major (>= $version)" > "$root/DEBIAN/shlibs"
		echo "activate-noawait ldconfig" > "$root/DEBIAN/triggers"
	fi
	dpkg-deb --root-owner-group -Zxz --build "$root" "$out/${name}_${debver}_$arch.deb" >/dev/null
	echo "  DEB      $out/${name}_${debver}_$arch.deb"
}

lib=usr/lib/$multiarch
package "libdevcg$major" libs "$(shlibdeps "$stage/$lib/libdevcg.so.$version")" \
	"device access policies for cgroups (shared library)" \
	"$lib/libdevcg.so.$version" "$lib/libdevcg.so.$major"
package libdevcg-dev libdevel "libdevcg$major (= $debver), libbpf-dev, libjansson-dev, libsystemd-dev, libyaml-dev" \
	"device access policies for cgroups (development files)" \
	usr/include/devcg.h "$lib/libdevcg.so" "$lib/libdevcg.a" "$lib/pkgconfig/devcg.pc"
package devcg admin "$(shlibdeps "$stage/usr/bin/devcg")" \
	"device access for container cgroups without the EPERM window" \
	usr/bin/devcg usr/share/man/man8/devcg.8 usr/share/bash-completion/completions/devcg \
	usr/share/containers/oci/hooks.d/devcg.json
rm -rf "$stage"

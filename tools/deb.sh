#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make deb: Debian packages from the same `make install` step, with dpkg-deb
# alone (nothing downloaded): libdevcg0 (the shared library), libdevcg-dev
# (header, static library, pkg-config file) and devcg (CLI, man page, bash
# completion, OCI hook file, devcg-trace.service: shipped disabled, see
# docs/trace.md; the node agent devcg-nri and devcg-nri.service, shipped
# disabled too, when the tree builds it: docs/kubernetes.md). Depends come
# from dpkg-shlibdeps on the built binaries.
# As Debian ships them: the ELF files stripped, their debug information in
# libdevcg0-dbgsym and devcg-dbgsym (/usr/lib/debug/.build-id/, found by
# build id and by a .gnu_debuglink), the man page gzipped, each package's
# /usr/share/doc/PKG with copyright and changelog.Debian.gz.
# Usage: deb.sh BUILD VERSION   -> BUILD/deb/*.deb
set -eu
build=$1 version=$2
debver=$version-1
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
out=$build/deb
stage=$out/stage
major=${version%%.*}
lib=usr/lib/$multiarch
maintainer="devcg developers <devcg@packages.invalid>"
# the date of the last commit, so that the same tree makes the same packages
when=$(git log -1 --format=%ct 2>/dev/null || date +%s)
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
	# a binary linked with libdevcg.so.N: found in the stage, named by the
	# shlibs file of libdevcgN's tree (built first)
	set -- -S"$(realpath "$out")/libdevcg$major" -l"$(realpath "$stage")/$lib" "$@"
	(cd "$tmp" && dpkg-shlibdeps -O "$@" 2>/dev/null) |
		sed -n 's/^shlibs:Depends=//p'
	rm -rf "$tmp"
}

# The build id of ELF file $1 (hex), or nothing.
build_id() {
	readelf -n "$1" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1
}

# strip_into PKG FILE: FILE (in PKG's tree) stripped as dh_strip does, its
# debug information moved to PKG-dbgsym's tree under its build id
strip_into() {
	pkg=$1 f=$2
	id=$(build_id "$f")
	[ -n "$id" ] || { echo "deb.sh: $f has no build id" >&2; exit 1; }
	dbg=$out/$pkg-dbgsym/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
	mkdir -p "$(dirname "$dbg")"
	objcopy --only-keep-debug --compress-debug-sections "$f" "$dbg"
	chmod 644 "$dbg"
	case $f in
	*.so*) strip --remove-section=.comment --remove-section=.note --strip-unneeded "$f" ;;
	*) strip --remove-section=.comment --remove-section=.note "$f" ;;
	esac
	objcopy --add-gnu-debuglink="$dbg" "$f"
	echo "$id" >> "$out/$pkg.build-ids"
}

# doc NAME: /usr/share/doc/NAME with copyright and changelog.Debian.gz
doc() {
	d=$out/$1/usr/share/doc/$1
	mkdir -p "$d"
	cp LICENSE "$d/copyright"
	{
		echo "devcg ($debver) unstable; urgency=medium"
		echo
		echo "  * Built from the devcg source tree by tools/deb.sh (make deb)."
		echo
		echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$when")"
	} | gzip -9n > "$d/changelog.Debian.gz"
	chmod 644 "$d/copyright" "$d/changelog.Debian.gz"
}

# control NAME SECTION DEPENDS DESCRIPTION [EXTRA...]: DEBIAN/control
control() {
	c_name=$1 c_section=$2 c_depends=$3 c_description=$4
	shift 4
	mkdir -p "$out/$c_name/DEBIAN"
	size=$(du -sk --exclude=DEBIAN "$out/$c_name" | cut -f1)
	{
		echo "Package: $c_name"
		echo "Version: $debver"
		echo "Architecture: $arch"
		echo "Section: $c_section"
		echo "Priority: optional"
		echo "Maintainer: $maintainer"
		echo "Installed-Size: $size"
		[ -z "$c_depends" ] || echo "Depends: $c_depends"
		for extra; do echo "$extra"; done
		echo "Description: $c_description"
		[ ! -f "tools/deb/$c_name.description" ] || cat "tools/deb/$c_name.description"
	} > "$out/$c_name/DEBIAN/control"
}

build() {
	dpkg-deb --root-owner-group -Zxz --build "$out/$1" "$out/${1}_${debver}_$arch.deb" >/dev/null
	echo "  DEB      $out/${1}_${debver}_$arch.deb"
}

# package NAME SECTION DEPENDS DESCRIPTION FILE... (paths relative to the stage)
package() {
	name=$1 section=$2 depends=$3 description=$4
	shift 4
	root=$out/$name
	mkdir -p "$root/DEBIAN"
	for f; do
		mkdir -p "$root/$(dirname "$f")"
		cp -a "$stage/$f" "$root/$f"
		case $f in
		*.a) strip --strip-debug --remove-section=.comment "$root/$f" ;;
		*/man/*) gzip -9n "$root/$f" ;;
		esac
		if [ -f "$root/$f" ] && [ ! -L "$root/$f" ] && [ "$(head -c4 "$root/$f")" = "$(printf '\177ELF')" ] &&
			[ "${f%.a}" = "$f" ]; then
			strip_into "$name" "$root/$f"
		fi
	done
	doc "$name"
	ma=
	[ "$name" != "libdevcg$major" ] || ma="Multi-Arch: same"
	control "$name" "$section" "$depends" "$description" ${ma:+"$ma"}
	if [ "$name" = "libdevcg$major" ]; then
		echo "libdevcg $major libdevcg$major (>= $version)" > "$root/DEBIAN/shlibs"
		echo "activate-noawait ldconfig" > "$root/DEBIAN/triggers"
	fi
	build "$name"
	if [ -f "$out/$name.build-ids" ]; then
		# NAME-dbgsym, as Debian's debhelper makes it: its doc directory is
		# a link to NAME's
		mkdir -p "$out/$name-dbgsym/usr/share/doc"
		ln -s "$name" "$out/$name-dbgsym/usr/share/doc/$name-dbgsym"
		control "$name-dbgsym" debug "$name (= $debver)" "debug symbols for $name" \
			"Auto-Built-Package: debug-symbols" \
			"Build-Ids: $(sort "$out/$name.build-ids" | tr '\n' ' ' | sed 's/ $//')" ${ma:+"$ma"}
		build "$name-dbgsym"
		rm -f "$out/$name.build-ids"
	fi
}

package "libdevcg$major" libs "$(shlibdeps "$stage/$lib/libdevcg.so.$version")" \
	"device access policies for cgroups (shared library)" \
	"$lib/libdevcg.so.$version" "$lib/libdevcg.so.$major"
package libdevcg-dev libdevel "libdevcg$major (= $debver), libbpf-dev, libjansson-dev, libsystemd-dev, libyaml-dev" \
	"device access policies for cgroups (development files)" \
	usr/include/devcg.h "$lib/libdevcg.so" "$lib/libdevcg.a" "$lib/pkgconfig/devcg.pc"
# the agent, when `make install` staged it (the Makefile's WITH_NRI: NRI_AGENT)
nri=
[ ! -f "$stage/usr/bin/devcg-nri" ] || nri="usr/bin/devcg-nri usr/lib/systemd/system/devcg-nri.service usr/share/man/man8/devcg-nri.8
	usr/share/bash-completion/completions/devcg-nri"
package devcg admin "$(shlibdeps "$stage/usr/bin/devcg" ${nri:+"$stage/usr/bin/devcg-nri"})" \
	"device access for container cgroups without the EPERM window" \
	usr/bin/devcg usr/share/man/man8/devcg.8 usr/share/bash-completion/completions/devcg \
	usr/share/containers/oci/hooks.d/devcg.json usr/lib/systemd/system/devcg-trace.service $nri
rm -rf "$stage"

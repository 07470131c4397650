#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# `make install` into a scratch DESTDIR, then what a distribution and an
# outside project see of it: the files and links, the exported ABI (exactly
# the header's DEVCG_API functions), and three consumers built only from
# the staged files through pkg-config: C99 -pedantic, C++17, static.
# Usage: test.sh BUILD   (run from the top of the tree; no root needed)
set -u
build=${1:-build}
pass=0 fail=0 skip=0
ok() { echo "ok   $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
skp() { echo "skip $1: $2"; skip=$((skip + 1)); }
check() { name=$1; shift; if out=$("$@" 2>&1); then ok "$name"; else bad "$name" "$out"; fi; }

stage=$(mktemp -d /tmp/devcg-install-XXXXXX)
trap 'rm -rf "$stage"' EXIT
dest=$stage/root
version=$(sed -n 's/^#define DEVCG_VERSION "\(.*\)"/\1/p' include/devcg.h)
major=${version%%.*}
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || ${CC:-gcc} -print-multiarch 2>/dev/null)
libdir=/usr/lib${multiarch:+/$multiarch}
lib=$dest$libdir
# the node agent is installed and packaged when the tree builds it: the
# Makefile's WITH_NRI, asked of make itself (WITH_NRI=1 in the environment
# sets it by hand)
nri=$(printf 'devcg-with-nri:\n\t@echo $(WITH_NRI)\n' | make --no-print-directory -s -f Makefile -f - devcg-with-nri BUILD="$build")

if ! out=$(make --no-print-directory -s install BUILD="$build" DESTDIR="$dest" PREFIX=/usr 2>&1); then
	bad install_into_destdir "$out"
	echo "$pass passed, $fail failed, $skip skipped"
	exit 1
fi
ok install_into_destdir

installs_every_file() {
	for f in usr/include/devcg.h ${libdir#/}/libdevcg.so.$version ${libdir#/}/libdevcg.a \
		${libdir#/}/pkgconfig/devcg.pc usr/bin/devcg usr/share/man/man8/devcg.8 \
		usr/share/bash-completion/completions/devcg usr/share/containers/oci/hooks.d/devcg.json \
		usr/lib/systemd/system/devcg-trace.service; do
		[ -f "$dest/$f" ] || { echo "missing $f"; return 1; }
	done
	[ "$(readlink "$lib/libdevcg.so.$major")" = "libdevcg.so.$version" ] || { echo "bad .so.$major link"; return 1; }
	[ "$(readlink "$lib/libdevcg.so")" = "libdevcg.so.$major" ] || { echo "bad .so link"; return 1; }
	if [ -n "$nri" ]; then
		for f in usr/bin/devcg-nri usr/lib/systemd/system/devcg-nri.service usr/share/man/man8/devcg-nri.8 \
			usr/share/bash-completion/completions/devcg-nri; do
			[ -f "$dest/$f" ] || { echo "missing $f"; return 1; }
		done
	fi
	# nothing else, and nothing outside the prefix
	# (with the agent: its binary, unit, man page and completion)
	n=$(find "$dest" -type f -o -type l | wc -l) want=11
	[ -z "$nri" ] || want=15
	[ "$n" = "$want" ] || { echo "expected $want files and links, found $n:"; find "$dest"; return 1; }
}
check installs_every_file installs_every_file

hooks_d_file_runs_the_installed_devcg_on_the_annotation() {
	f=$dest/usr/share/containers/oci/hooks.d/devcg.json
	grep -q '"path": "/usr/bin/devcg"' "$f" && grep -q '"args": \["devcg", "oci-hook", "--runtime", "auto"\]' "$f" &&
		grep -q 'io\\\\.devcg\\\\.rules' "$f" && ! grep -q @ "$f"
}
check hooks_d_file_runs_the_installed_devcg_on_the_annotation hooks_d_file_runs_the_installed_devcg_on_the_annotation

# the unit's keys are systemd's (systemd-analyze verify, when there: its
# complaint that the staged binary is not at /usr/bin aside)
trace_unit_runs_the_installed_devcg_with_journal_and_metrics() {
	f=$dest/usr/lib/systemd/system/devcg-trace.service
	grep -qx 'ExecStart=/usr/bin/devcg trace --journal --metrics /var/lib/prometheus/node-exporter/devcg-trace.prom' "$f" &&
		grep -qx 'Restart=on-failure' "$f" && grep -qx 'WantedBy=multi-user.target' "$f" && ! grep -q @ "$f" &&
		{ ! command -v systemd-analyze >/dev/null || systemd-analyze verify --man=no "$f" 2>&1 |
			grep -v 'is not executable' | { ! grep 'devcg-trace.service'; }; }
}
check trace_unit_runs_the_installed_devcg_with_journal_and_metrics trace_unit_runs_the_installed_devcg_with_journal_and_metrics

# the agent's unit as installed (or, while the tree has no agent, as
# `make install` would write it): after the runtime, never given up on,
# shipped disabled (no enable link: WantedBy= only), systemd's own keys
nri_unit_runs_the_agent_after_containerd_and_restarts_always() {
	f=$dest/usr/lib/systemd/system/devcg-nri.service
	[ -n "$nri" ] || { f=$stage/devcg-nri.service; sed 's|@BINDIR@|/usr/bin|' tools/systemd/devcg-nri.service.in > "$f"; }
	grep -qx 'ExecStart=/usr/bin/devcg-nri --socket /var/run/nri/nri.sock' "$f" &&
		grep -qx 'After=containerd.service.*' "$f" && grep -qx 'Wants=containerd.service' "$f" &&
		grep -qx 'Restart=always' "$f" && grep -qx 'RuntimeDirectoryPreserve=yes' "$f" &&
		grep -qx 'WantedBy=multi-user.target' "$f" && ! grep -q @ "$f" &&
		[ -z "$(find "$dest" -path '*.wants/*')" ] &&
		{ ! command -v systemd-analyze >/dev/null || systemd-analyze verify --man=no "$f" 2>&1 |
			grep -v 'is not executable' | { ! grep 'devcg-nri.service'; }; }
}
check nri_unit_runs_the_agent_after_containerd_and_restarts_always nri_unit_runs_the_agent_after_containerd_and_restarts_always

# the control: the same verification rejects a key in the wrong section
nri_unit_check_notices_a_misplaced_key() {
	f=$stage/misplaced.service
	sed -e 's|@BINDIR@|/usr/bin|' -e 's|^Restart=always$|Restart=always\nStartLimitBurst=5|' \
		-e '/^StartLimitIntervalSec=/d' tools/systemd/devcg-nri.service.in |
		sed 's|^RestartSec=1s$|RestartSec=1s\nStartLimitIntervalSec=0|' > "$f"
	! command -v systemd-analyze >/dev/null ||
		systemd-analyze verify --man=no "$f" 2>&1 | grep -q "Unknown key 'StartLimitIntervalSec' in section \[Service\]"
}
check nri_unit_check_notices_a_misplaced_key nri_unit_check_notices_a_misplaced_key

soname_is_the_major_version() {
	readelf -d "$lib/libdevcg.so.$version" | grep -q "SONAME.*\[libdevcg.so.$major\]"
}
check soname_is_the_major_version soname_is_the_major_version

pc_names_the_prefix_and_private_requirements() {
	grep -qx "libdir=$libdir" "$lib/pkgconfig/devcg.pc" &&
		grep -qx "Version: $version" "$lib/pkgconfig/devcg.pc" &&
		grep -qx 'Requires.private: libbpf jansson libsystemd yaml-0.1' "$lib/pkgconfig/devcg.pc"
}
check pc_names_the_prefix_and_private_requirements pc_names_the_prefix_and_private_requirements

tests/install/api-list.sh include/devcg.h > "$stage/api"
shared_library_exports_exactly_the_api() {
	nm -D --defined-only "$lib/libdevcg.so.$version" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
		sort > "$stage/so" && [ -s "$stage/api" ] && diff "$stage/api" "$stage/so" &&
		! nm -D --defined-only "$lib/libdevcg.so.$version" | awk '$2 ~ /[BDGRSTVW]/' | grep -v LIBDEVCG_ |
		awk '{ sub(/@.*/, "", $3); print $3 }' | grep -vxF -f "$stage/api"
}
check shared_library_exports_exactly_the_api shared_library_exports_exactly_the_api

static_library_has_no_other_global_symbol() {
	nm -g --defined-only "$lib/libdevcg.a" | awk 'NF == 3 { print $3 }' | sort > "$stage/a" &&
		diff "$stage/api" "$stage/a"
}
check static_library_has_no_other_global_symbol static_library_has_no_other_global_symbol

# the control: the same comparison must notice one function too many
abi_check_notices_an_extra_symbol() {
	{ cat "$stage/so"; echo devcg_not_in_the_header; } | sort > "$stage/so+"
	! diff -q "$stage/api" "$stage/so+" >/dev/null
}
check abi_check_notices_an_extra_symbol abi_check_notices_an_extra_symbol

export PKG_CONFIG_SYSROOT_DIR="$dest" PKG_CONFIG_PATH="$lib/pkgconfig"
if ! pkg-config --exists devcg; then
	bad pkg_config_finds_devcg "$(pkg-config --print-errors --exists devcg 2>&1)"
else
	ok pkg_config_finds_devcg
	cflags=$(pkg-config --cflags devcg)
	libs=$(pkg-config --libs devcg)
	cp tests/install/consumer.c "$stage/consumer.c"
	cp tests/install/consumer.c "$stage/consumer.cc"
	check c99_pedantic_consumer_builds cc -std=c99 -pedantic -Wall -Wextra -Werror $cflags \
		-o "$stage/c99" "$stage/consumer.c" $libs
	check c99_pedantic_consumer_runs env LD_LIBRARY_PATH="$lib" "$stage/c99"
	if command -v c++ >/dev/null; then
		check cxx17_consumer_builds c++ -std=c++17 -pedantic -Wall -Wextra -Werror $cflags \
			-o "$stage/cxx" "$stage/consumer.cc" $libs
		check cxx17_consumer_runs env LD_LIBRARY_PATH="$lib" "$stage/cxx"
	else
		skp cxx17_consumer_builds "no C++ compiler (c++)"
	fi
	static_libs=$(pkg-config --static --libs-only-l devcg | sed 's/-ldevcg//')
	check static_consumer_builds cc -std=c99 $cflags -o "$stage/static" "$stage/consumer.c" \
		"$lib/libdevcg.a" $static_libs
	static_consumer_needs_no_libdevcg_so() {
		! readelf -d "$stage/static" | grep -q 'libdevcg' && "$stage/static"
	}
	check static_consumer_needs_no_libdevcg_so static_consumer_needs_no_libdevcg_so
fi

library_goes_to_the_multiarch_directory_under_usr() {
	[ -n "$multiarch" ] || { echo "no multiarch name from dpkg-architecture or the compiler"; return 1; }
	[ -f "$dest/usr/lib/$multiarch/libdevcg.so.$version" ] && [ ! -e "$dest/usr/lib/libdevcg.so.$version" ]
}
check library_goes_to_the_multiarch_directory_under_usr library_goes_to_the_multiarch_directory_under_usr

uninstall_removes_exactly_what_was_installed() {
	touch "$lib/not-ours"
	make --no-print-directory -s uninstall BUILD="$build" DESTDIR="$dest" PREFIX=/usr || return 1
	left=$(find "$dest" -type f -o -type l)
	[ "$left" = "$lib/not-ours" ] || { echo "left: $left"; return 1; }
}
check uninstall_removes_exactly_what_was_installed uninstall_removes_exactly_what_was_installed

# the directories only devcg's files needed are gone; the GNU ones stay
uninstall_removes_the_directories_it_made_and_keeps_the_others() {
	for d in usr/share/containers usr/share/bash-completion usr/share/man/man8 ${libdir#/}/pkgconfig usr/lib/systemd; do
		[ ! -e "$dest/$d" ] || { echo "$d left"; return 1; }
	done
	for d in usr/bin usr/include "${libdir#/}" usr/share/man; do
		[ -d "$dest/$d" ] || { echo "$d removed"; return 1; }
	done
}
check uninstall_removes_the_directories_it_made_and_keeps_the_others \
	uninstall_removes_the_directories_it_made_and_keeps_the_others

# the control: a directory that still holds a file of someone else's stays
uninstall_keeps_a_directory_that_is_not_empty() {
	make --no-print-directory -s install BUILD="$build" DESTDIR="$dest" PREFIX=/usr || return 1
	touch "$dest/usr/share/man/man8/other.8"
	make --no-print-directory -s uninstall BUILD="$build" DESTDIR="$dest" PREFIX=/usr || return 1
	[ -f "$dest/usr/share/man/man8/other.8" ] && [ ! -e "$dest/usr/share/containers" ]
}
check uninstall_keeps_a_directory_that_is_not_empty uninstall_keeps_a_directory_that_is_not_empty

# make deb: three packages from the same install step
if ! command -v dpkg-deb >/dev/null || ! command -v dpkg-shlibdeps >/dev/null; then
	skp make_deb_builds_three_packages "no dpkg-deb or dpkg-shlibdeps (dpkg-dev)"
elif ! out=$(make --no-print-directory -s deb BUILD="$build" 2>&1); then
	bad make_deb_builds_three_packages "$out"
else
	debs=$(ls "$build"/deb/*.deb 2>/dev/null | wc -l)
	if [ "$debs" = 5 ]; then ok make_deb_builds_three_packages_and_two_dbgsym; else bad make_deb_builds_three_packages_and_two_dbgsym "$debs .deb files"; fi
	contents() { dpkg-deb -c "$build"/deb/"$1"_*.deb | awk '{ print $6 }' | grep -v '/$' | sed 's|^\./||' | sort | tr '\n' ' '; }
	field() { dpkg-deb -f "$build"/deb/"$1"_*.deb "$2"; }
	# holds PACKAGE FILE...: each FILE (a path ending) is in PACKAGE
	holds() {
		pkg=$1
		shift
		for f; do contents "$pkg" | grep -q "$f " || { echo "$pkg lacks $f"; return 1; }; done
	}
	each_package_holds_its_files() {
		holds libdevcg$major "$multiarch/libdevcg.so.$version" "$multiarch/libdevcg.so.$major" &&
			! contents libdevcg$major | grep -q 'devcg.h\|libdevcg.a\|bin/devcg' &&
			holds libdevcg-dev usr/include/devcg.h "$multiarch/libdevcg.a" /libdevcg.so pkgconfig/devcg.pc &&
			holds devcg usr/bin/devcg man8/devcg.8.gz completions/devcg hooks.d/devcg.json \
				usr/lib/systemd/system/devcg-trace.service &&
			if [ -n "$nri" ]; then
				holds devcg usr/bin/devcg-nri usr/lib/systemd/system/devcg-nri.service man8/devcg-nri.8.gz \
					completions/devcg-nri
			else
				! contents devcg | grep -q 'devcg-nri'
			fi
	}
	check each_package_holds_its_files each_package_holds_its_files
	versions_and_depends_are_right() {
		[ "$(field devcg Version)" = "$version-1" ] &&
			field libdevcg$major Depends | grep -q 'libbpf1' &&
			field libdevcg$major Depends | grep -q 'libjansson4' &&
			field libdevcg-dev Depends | grep -q "libdevcg$major (= $version-1)" &&
			field libdevcg$major Depends | grep -q 'libsystemd0' &&
			field devcg Depends | grep -q 'libbpf1'
	}
	check versions_and_depends_are_right versions_and_depends_are_right
	# as Debian's own packages
	unpacked=$stage/unpacked
	for d in "$build"/deb/*.deb; do dpkg-deb -x "$d" "$unpacked"; done
	man_page_is_gzipped() {
		contents devcg | grep -q 'man8/devcg.8.gz ' && ! contents devcg | grep -q 'man8/devcg.8 ' &&
			gzip -t "$unpacked/usr/share/man/man8/devcg.8.gz"
	}
	check man_page_is_gzipped man_page_is_gzipped
	each_package_has_copyright_and_changelog() {
		for p in libdevcg$major libdevcg-dev devcg; do
			holds "$p" "usr/share/doc/$p/copyright" "usr/share/doc/$p/changelog.Debian.gz" || return 1
			zcat "$unpacked/usr/share/doc/$p/changelog.Debian.gz" | head -n1 |
				grep -q "^devcg ($version-1) " || { echo "$p: changelog"; return 1; }
		done
	}
	check each_package_has_copyright_and_changelog each_package_has_copyright_and_changelog
	# no_debug_info FILE: stripped (no .debug_* section, no symbol table)
	no_debug_info() { ! readelf -S -W "$1" | grep -q ' \.debug_\| \.symtab '; }
	binaries_are_stripped_with_their_debug_info_in_dbgsym() {
		for f in usr/bin/devcg "${libdir#/}/libdevcg.so.$version"; do
			no_debug_info "$unpacked/$f" || { echo "$f is not stripped"; return 1; }
			id=$(readelf -n "$unpacked/$f" | sed -n 's/^ *Build ID: *//p')
			dbg=$unpacked/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
			readelf -S -W "$dbg" | grep -q ' \.debug_info ' || { echo "$f: no debug info in $dbg"; return 1; }
			readelf -p .gnu_debuglink "$unpacked/$f" | grep -q "$(echo "$id" | cut -c3-).debug" ||
				{ echo "$f: no debuglink"; return 1; }
		done
		[ "$(field devcg-dbgsym Depends)" = "devcg (= $version-1)" ] &&
			[ "$(field libdevcg$major-dbgsym Section)" = debug ]
	}
	check binaries_are_stripped_with_their_debug_info_in_dbgsym binaries_are_stripped_with_their_debug_info_in_dbgsym
	# the control: the built binary has debug info, which the check sees
	stripped_check_sees_debug_info() { ! no_debug_info "$build/devcg"; }
	check stripped_check_sees_debug_info stripped_check_sees_debug_info
	maintainer_is_a_name_and_an_address() {
		for p in libdevcg$major libdevcg-dev devcg; do
			field "$p" Maintainer | grep -q '^devcg developers <[^@ ]*@[^ >]*>$' &&
				! field "$p" Maintainer | grep -q localhost || { echo "$p: $(field "$p" Maintainer)"; return 1; }
		done
	}
	check maintainer_is_a_name_and_an_address maintainer_is_a_name_and_an_address
	no_package_depends_on_libelf() { ! field libdevcg$major Depends | grep -q libelf && ! field devcg Depends | grep -q libelf; }
	check no_package_depends_on_libelf no_package_depends_on_libelf
	if command -v lintian >/dev/null; then
		check lintian_finds_no_error lintian --fail-on error "$build"/deb/libdevcg"$major"_*.deb "$build"/deb/devcg_*.deb
	else
		skp lintian_finds_no_error "lintian is not installed (optional)"
	fi
	# a real dpkg install into a scratch root (its dependencies are the
	# host's, so they are forced), then the installed CLI runs
	packages_install_with_dpkg_and_the_cli_runs() {
		r=$stage/dpkgroot
		mkdir -p "$r/var/lib/dpkg/updates" "$r/var/lib/dpkg/info" && touch "$r/var/lib/dpkg/status" &&
			dpkg --root="$r" --force-depends --force-script-chrootless --log=/dev/null \
				-i "$build"/deb/*.deb >/dev/null 2>&1 &&
			[ "$(dpkg --root="$r" -l | grep -c '^ii')" = 5 ] &&
			[ "$("$r/usr/bin/devcg" --version)" = "devcg $version" ]
	}
	check packages_install_with_dpkg_and_the_cli_runs packages_install_with_dpkg_and_the_cli_runs
	# apt resolves every Depends against this Debian's own packages
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		check apt_can_satisfy_every_dependency apt-get -s -q install "$(realpath "$build")"/deb/*.deb
	else
		skp apt_can_satisfy_every_dependency "needs root and apt-get"
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]

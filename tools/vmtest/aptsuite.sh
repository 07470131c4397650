#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Run apt-get or apt-cache on the host against another Debian suite than the
# host's own, with a private configuration under DIR (nothing of the host's
# apt state is touched): DIR/SUITE.sources is the host's
# /etc/apt/sources.list.d/debian.sources (or VMTEST_MIRROR, a URL) with the
# host's codename replaced by SUITE; the package lists go to DIR/apt-SUITE/
# and are fetched (apt-get update) once, or again when the sources change.
#
# Usage: aptsuite.sh DIR SUITE apt-get|apt-cache ARG...
#        aptsuite.sh DIR SUITE sources      print the sources file's path
# Used for the k8s-node guest (Debian 13, trixie) from a Debian 12 host: the
# kernel (fetch-kernel.sh) and the CRI API definition (mkguest.sh).
set -eu
dir=${1:?usage: aptsuite.sh DIR SUITE apt-get|apt-cache|sources ARG...}
suite=${2:?usage: aptsuite.sh DIR SUITE apt-get|apt-cache|sources ARG...}
shift 2
cmd=${1:?usage: aptsuite.sh DIR SUITE apt-get|apt-cache|sources ARG...}
shift
dir=$(cd "$dir" 2>/dev/null && pwd || { mkdir -p "$dir" && cd "$dir" && pwd; })
state=$dir/apt-$suite
src=$dir/$suite.sources
host=/etc/apt/sources.list.d/debian.sources
new=$(mktemp)
if [ -n "${VMTEST_MIRROR:-}" ] && [ ! -f "${VMTEST_MIRROR}" ]; then
	printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$VMTEST_MIRROR" "$suite" > "$new"
elif [ -f "${VMTEST_MIRROR:-$host}" ]; then
	# the host's codename (bookworm, bookworm-updates, bookworm-security)
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
	sed "s/\b$codename\b/$suite/g; s/\b$codename-/$suite-/g" "${VMTEST_MIRROR:-$host}" > "$new"
else
	printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$suite" > "$new"
fi
if ! cmp -s "$new" "$src" 2>/dev/null; then
	mv "$new" "$src"
	rm -rf "$state"
else
	rm -f "$new"
fi
[ "$cmd" = sources ] && { echo "$src"; exit 0; }

mkdir -p "$state/etc/sources.list.d" "$state/lists/partial" "$state/cache/archives/partial"
cp "$src" "$state/etc/sources.list.d/debian.sources"
# as root apt would warn that its _apt user cannot write here; it need not
apt() { # COMMAND ARG...
	c=$1
	shift
	"$c" -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$state/etc/sources.list.d" \
		-o Dir::State::Lists="$state/lists" -o Dir::State::Status=/dev/null -o Dir::Cache="$state/cache" \
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts="$state/etc" \
		-o Acquire::Check-Valid-Until=false -o APT::Sandbox::User=root "$@"
}
if ! ls "$state/lists/"*_Packages* >/dev/null 2>&1; then
	echo "vmtest: fetching the Debian $suite package lists ($src)" >&2
	apt apt-get -qq update >&2
fi
apt "$cmd" "$@"

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The layout's rules (user/lib/README.md), as tests with a result line each
# and the summary line tools/run-tests.sh reads:
#  - no #include runs in a circle among the files under user/ and include/;
#  - a file of a library room includes nothing of a room above its own
#    (base < rules < filter < live < integration), nor the library's
#    umbrella internal.h, the trace or the CLI;
#  - no C file under user/ is longer than 800 lines;
#  - with BUILD (the build directory) holding the library's objects: no
#    library file calls another in a circle, and none calls a room above.
# Usage: tools/check-layout.sh [BUILD]   (from the top of the tree)
set -u
export LC_ALL=C
build=${1:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0 skip=0

result() { # NAME STATUS [DETAIL FILE]
	case $2 in
	ok) pass=$((pass + 1)); echo "ok   $1" ;;
	skip) skip=$((skip + 1)); echo "skip $1" ;;
	*) fail=$((fail + 1)); echo "FAIL $1"; sed 's/^/    /' "$3" ;;
	esac
}

# The rank of a file's room: 1 base ... 5 integration; 9 for the library's
# top (internal.h), the trace, the CLI and devcg-nri (the programs above
# the library); 0 for what is not the library's.
rank() {
	case $1 in
	user/lib/base/*) echo 1 ;;
	user/lib/rules/*) echo 2 ;;
	user/lib/filter/*) echo 3 ;;
	user/lib/live/*) echo 4 ;;
	user/lib/integration/*) echo 5 ;;
	user/lib/* | user/trace/* | user/cli/* | user/nri/*) echo 9 ;;
	*) echo 0 ;;
	esac
}

# Every quoted #include of the C files under user/ and include/, resolved as
# the compiler does (the file's own folder, then the Makefile's -I list):
# "FILE INCLUDED" pairs; what resolves to no file here (generated skeleton
# headers) is left out.
for f in $(find user include -name '*.[ch]' | sort); do
	dir=$(dirname "$f")
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f" | while read -r inc; do
		for d in "$dir" include user/lib user/trace bpf; do
			if [ -f "$d/$inc" ]; then
				echo "$f $d/$inc"
				break
			fi
		done
	done
done > "$tmp/includes"

if tsort "$tmp/includes" > /dev/null 2> "$tmp/cycle"; then
	result no_include_runs_in_a_circle_under_user_and_include ok
else
	result no_include_runs_in_a_circle_under_user_and_include FAIL "$tmp/cycle"
fi

: > "$tmp/up"
while read -r from to; do
	rf=$(rank "$from") rt=$(rank "$to")
	if [ "$rf" -ge 1 ] && [ "$rf" -le 5 ] && [ "$rt" -gt "$rf" ]; then
		echo "$from (rank $rf) includes $to (rank $rt)" >> "$tmp/up"
	fi
done < "$tmp/includes"
if [ -s "$tmp/up" ]; then
	result no_library_room_includes_a_room_above_it FAIL "$tmp/up"
else
	result no_library_room_includes_a_room_above_it ok
fi

find user -name '*.[ch]' -exec wc -l {} + | awk '$2 != "total" && $1 > 800 { print $2 ": " $1 " lines" }' \
	> "$tmp/long"
if [ -s "$tmp/long" ]; then
	result no_c_file_under_user_is_longer_than_800_lines FAIL "$tmp/long"
else
	result no_c_file_under_user_is_longer_than_800_lines ok
fi

# The calls, from the objects: each undefined symbol of an object matched
# to the object of the library that defines it.
# (only objects whose source is still there: a build directory from before
# a file moved keeps its old object)
objs=$(find "${build:-/nonexistent}/lib" -name '*.o' 2> /dev/null | sort | while read -r o; do
	src=user/lib/${o#"$build"/lib/}
	[ -f "${src%.o}.c" ] && echo "$o"
done)
if [ -z "$objs" ]; then
	result the_library_calls_no_file_in_a_circle_and_no_room_above skip
else
	for o in $objs; do
		src=user/lib/${o#"$build"/lib/}
		nm --defined-only "$o" | awk -v f="${src%.o}.c" '$2 ~ /^[TDBRV]$/ { print $3, f }'
	done | sort > "$tmp/defs"
	for o in $objs; do
		src=user/lib/${o#"$build"/lib/}
		nm -u "$o" | awk -v f="${src%.o}.c" '{ print $2, f }'
	done | sort > "$tmp/undef"
	join "$tmp/undef" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u > "$tmp/calls"
	: > "$tmp/bad"
	tsort "$tmp/calls" > /dev/null 2>> "$tmp/bad"
	while read -r from to; do
		rf=$(rank "$from") rt=$(rank "$to")
		[ "$rt" -gt "$rf" ] && echo "$from (rank $rf) calls $to (rank $rt)" >> "$tmp/bad"
	done < "$tmp/calls"
	if [ -s "$tmp/bad" ]; then
		result the_library_calls_no_file_in_a_circle_and_no_room_above FAIL "$tmp/bad"
	else
		result the_library_calls_no_file_in_a_circle_and_no_room_above ok
	fi
fi

echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]

#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Run every test suite in BUILD and close with one total line that CI reads:
# "N passed, N failed, N skipped".
set -u
build=${1:-build}
total_p=0 total_f=0 total_s=0 status=0
run() {
	name=$1
	shift
	echo "== $name"
	out=$(mktemp)
	"$@" 2>&1 | tee "$out"
	rc=$(tail -n1 "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p')
	if [ -z "$rc" ]; then
		echo "$name: no summary line (crashed?)"
		total_f=$((total_f + 1))
		status=1
	else
		set -- $rc
		total_p=$((total_p + $1)) total_f=$((total_f + $2)) total_s=$((total_s + $3))
		[ "$2" = 0 ] || status=1
	fi
	rm -f "$out"
}
run layout tools/check-layout.sh "$build"
run unit "$build/tests/unit"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
	run unit-asan "$build/asan/unit"
run install tests/install/test.sh "$build"
run deploy tests/deploy/test.sh "$build"
run docs tools/check-docs.sh
run vmtest-runner sh tools/vmtest/selftest.sh
DEVCG=$build/devcg run kernel "$build/tests/kernel"
echo "== total"
echo "$total_p passed, $total_f failed, $total_s skipped"
exit $status

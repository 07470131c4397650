#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The vmtest runner's own tests (make test runs them; no qemu, no root): a
# stand-in qemu-system-x86_64 on PATH prints a console as a guest would, and
# run.sh and vmtest.sh are judged on what they make of it:
# - a guest whose kernel hangs (a CPU stuck for a minute) is ended at once
#   with status 75, not left to the time limit;
# - vmtest.sh boots such a guest once more, says so, keeps the hung console,
#   and counts the second boot's results; a second hang fails the guest;
# - a short soft lockup (under the minute) is only reported.
# Prints "N passed, N failed, N skipped" last.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

check() { # NAME CONDITION-STATUS DETAIL
	if [ "$2" = 0 ]; then
		echo "ok   $1"
		passed=$((passed + 1))
	else
		echo "FAIL $1: $3"
		failed=$((failed + 1))
	fi
}

# the stand-in: each boot takes the next line of $work/plan (hang, stall,
# pass) and prints the console of such a guest; a hung guest prints the
# watchdog's lines and then nothing until it is killed
mkdir -p "$work/bin" "$work/dir"
cat > "$work/bin/qemu-system-x86_64" <<'EOF'
#!/bin/sh
n=$(cat "$VMTEST_SELFTEST/boots" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > "$VMTEST_SELFTEST/boots"
what=$(sed -n "${n}p" "$VMTEST_SELFTEST/plan")
echo "[    1.000000] Linux version 6.1.0 (selftest)"
echo "VMTEST-START"
echo "VMTEST-TEST PASS before_the_hang"
case $what in
hang)
	echo "[  140.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 23s! [reader:155]"
	echo "[  168.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 49s! [reader:155]"
	echo "[  196.000000] watchdog: BUG: soft lockup - CPU#1 stuck for 75s! [reader:155]"
	exec sleep 120
	;;
stall)
	echo "[  140.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [systemd:1]"
	;;
esac
echo "VMTEST-TEST 2 passed, 0 failed, 0 skipped"
echo "VMTEST-END 0"
EOF
chmod +x "$work/bin/qemu-system-x86_64"
: > "$work/dir/vmlinuz"
: > "$work/dir/systemd.cpio"
echo 'true' > "$work/script"
export VMTEST_SELFTEST=$work PATH="$work/bin:$PATH"

boot() { # PLAN...: run vmtest.sh over one systemd-v1 guest
	rm -f "$work/boots" "$work/dir"/guest-*.log
	printf '%s\n' "$@" > "$work/plan"
	t0=$(date +%s)
	VMTEST_NO_BUILD=1 VMTEST_TIMEOUT=100 sh "$here/vmtest.sh" "$work/dir" systemd-v1 > "$work/out" 2>&1
	st=$?
	secs=$(($(date +%s) - t0))
	boots=$(cat "$work/boots" 2>/dev/null || echo 0)
}

# run.sh alone: the hang ends qemu at once, with 75
printf 'hang\n' > "$work/plan"
rm -f "$work/boots"
t0=$(date +%s)
VMTEST_GUEST=systemd-v1 VMTEST_SCRIPT="$work/script" VMTEST_SUMMARY=1 VMTEST_TIMEOUT=100 \
	sh "$here/run.sh" "$work/dir" > "$work/out" 2>&1
st=$?
secs=$(($(date +%s) - t0))
[ "$st" = 75 ] && [ "$secs" -lt 60 ]
check run_ends_a_hung_guest_at_once_with_75 $? "status $st after ${secs}s: $(tail -n 3 "$work/out" | tr '\n' ' ')"
grep -q 'the guest.s kernel hung' "$work/out"
check run_says_the_kernel_hung $? "$(tail -n 5 "$work/out" | tr '\n' ' ')"

boot hang pass
[ "$st" = 0 ] && [ "$boots" = 2 ] && grep -q '^vmtest: 2 passed, 0 failed, 0 skipped$' "$work/out" &&
	grep -q 'kernel hung on the first boot' "$work/out" && [ -s "$work/dir/guest-systemd-v1.hung.log" ]
check vmtest_boots_a_hung_guest_once_more_and_says_so $? "status $st, $boots boots: $(tail -n 4 "$work/out" | tr '\n' ' ')"

# the control: a second hang is a failure, and there is no third boot
boot hang hang pass
[ "$st" != 0 ] && [ "$boots" = 2 ] && grep -q '^vmtest: 0 passed, 1 failed, 0 skipped$' "$work/out"
check vmtest_fails_a_guest_that_hangs_twice $? "status $st, $boots boots: $(tail -n 4 "$work/out" | tr '\n' ' ')"

# a soft lockup under a minute is reported, the guest goes on
boot stall
[ "$st" = 0 ] && [ "$boots" = 1 ] && grep -q 'guest kernel: .*soft lockup' "$work/out"
check vmtest_reports_a_short_lockup_and_goes_on $? "status $st, $boots boots: $(tail -n 4 "$work/out" | tr '\n' ' ')"

echo "$passed passed, $failed failed, 0 skipped"
[ "$failed" = 0 ]

#!/bin/sh
# Boot the vmtest guest under qemu (TCG only), print its progress as it
# comes over the serial console, keep the whole console in DIR/guest.log and
# turn the suite's last "N passed, N failed, N skipped" line into the exit
# status: 0 only when the guest reported that line with no failure.
#
# Usage: run.sh DIR [GLOB...]
#   DIR holds vmlinuz, initramfs.gz and kernel-release (build/vmtest).
#   GLOBs select tests of the suite, as build/tests/kernel takes them.
# Environment: VMTEST_TIMEOUT (seconds for qemu, default 270), VMTEST_CGROUP
# (v2, the default: pure cgroup v2; hybrid: cgroup2 on /sys/fs/cgroup/unified
# and the v1 devices and freezer hierarchies beside it), VMTEST_APPEND
# (more kernel parameters; NAME=VALUE ones reach the suite's environment,
# e.g. VMTEST_APPEND=DEVCG_TEST_VERBOSE=1).
set -u
dir=${1:?usage: run.sh DIR [GLOB...]}
shift
kernel=$dir/vmlinuz
initrd=$dir/initramfs.gz
log=$dir/guest.log
limit=${VMTEST_TIMEOUT:-270}
release=$(cat "$dir/kernel-release" 2>/dev/null || echo unknown)
cr=$(printf '\r')

for f in "$kernel" "$initrd"; do
	[ -f "$f" ] || { echo "vmtest: $f is missing (make vmtest builds it)" >&2; exit 1; }
done
command -v qemu-system-x86_64 >/dev/null || { echo "vmtest: qemu-system-x86_64 is missing (make vmtest-deps)" >&2; exit 1; }

cgroup=${VMTEST_CGROUP:-v2}
case $cgroup in
v2 | hybrid) ;;
*) echo "vmtest: VMTEST_CGROUP is v2 (default) or hybrid, not $cgroup" >&2; exit 2 ;;
esac
# NAME=VALUE parameters the kernel does not know reach /init's environment;
# panic=-1 with -no-reboot: a guest panic ends qemu at once
append="console=ttyS0 panic=-1 VMTEST_CGROUP=$cgroup ${VMTEST_APPEND:-}"
[ $# -gt 0 ] && append="$append -- $*"

start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start))s"; }

echo "vmtest: booting Linux $release under qemu (TCG, 2 vCPUs, 2 GiB, cgroup $cgroup, at most ${limit}s); console in $log"
fifo=$dir/console.fifo
rm -f "$fifo"
mkfifo "$fifo" || exit 1
# stdin is not the terminal: qemu neither reads it nor changes its mode.
# timeout runs qemu in a process group of its own, so a Ctrl-C or a TERM
# reaches it only through the trap below; timeout passes it on to qemu.
timeout -k 10 "$limit" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m 2G -smp 2 \
	-nographic -nic none -no-reboot -kernel "$kernel" -initrd "$initrd" -append "$append" \
	</dev/null >"$fifo" 2>&1 &
timeout_pid=$!
interrupted=
trap 'interrupted=1; kill -TERM $timeout_pid 2>/dev/null' INT TERM HUP
# the console, line by line, until qemu (and timeout) close it; a signal may
# cut a read short, so read once more to the end after one
reread=
while :; do
	while IFS= read -r line || [ -n "$line" ]; do
		line=${line%"$cr"}
		printf '%s\n' "$line" >&3
		# the firmware's terminal escapes may precede the first line of ours
		case $line in
		?*VMTEST-*) line=VMTEST-${line#*VMTEST-} ;;
		esac
		case $line in
		*"] Linux version "*) echo "vmtest: [$(elapsed)] guest kernel booting" ;;
		VMTEST-INFO*) echo "vmtest: [$(elapsed)] guest: ${line#VMTEST-INFO }" ;;
		"VMTEST-START "?*) echo "vmtest: [$(elapsed)] the kernel test suite starts: ${line#VMTEST-START }" ;;
		VMTEST-START*) echo "vmtest: [$(elapsed)] the kernel test suite starts" ;;
		VMTEST-TEST*) echo "  ${line#VMTEST-TEST }" ;;
		VMTEST-END*) echo "vmtest: [$(elapsed)] the suite exited with status ${line#VMTEST-END }; powering off" ;;
		*"Kernel panic"* | *"BUG:"* | *"Oops:"* | *"WARNING:"* | *"Call Trace"*)
			echo "vmtest: [$(elapsed)] guest kernel: $line" ;;
		esac
		line=
	done
	[ -n "$interrupted" ] && [ -z "$reread" ] || break
	reread=1
done <"$fifo" 3>"$log"
wait $timeout_pid
qemu_status=$?
trap - INT TERM HUP
rm -f "$fifo"

summary=$(sed -n 's/^VMTEST-TEST \([0-9]* passed, [0-9]* failed, [0-9]* skipped\)$/\1/p' "$log" | tail -n1)
suite_status=$(sed -n 's/^VMTEST-END //p' "$log" | tail -n1)

echo "vmtest: qemu ended after $(elapsed) (status $qemu_status)"
if [ -n "$interrupted" ]; then
	echo "vmtest: interrupted"
elif [ "$qemu_status" = 124 ] || [ "$qemu_status" = 137 ]; then
	echo "vmtest: timed out after ${limit}s (VMTEST_TIMEOUT)"
fi
if [ -z "$summary" ]; then
	echo "vmtest: the guest never reported the suite's results; the end of $log:"
	tail -n 25 "$log" | sed 's/^/  | /'
	echo "== vmtest total (Linux $release guest)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
set -- $summary
echo "== vmtest total (Linux $release guest)"
echo "$summary"
if [ "$3" != 0 ]; then
	exit 1
elif [ "$suite_status" != 0 ]; then
	echo "vmtest: the suite exited with status $suite_status"
	exit 1
elif [ $(($1 + $3 + $5)) = 0 ]; then
	echo "vmtest: no test matched: $*"
	exit 1
fi
exit 0

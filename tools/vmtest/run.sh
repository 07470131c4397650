#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Boot a vmtest guest under qemu (TCG only), print its progress as it comes
# over the serial console, keep the whole console in a log and turn the
# guest's report into the exit status.
#
# Usage: run.sh DIR [GLOB...]
#   DIR holds vmlinuz, kernel-release and the guests' images (build/vmtest):
#   initramfs.gz (busybox), systemd.cpio (systemd-v2, systemd-v1).
#   GLOBs select tests of the kernel suite (busybox guest without a script).
# Environment:
#   VMTEST_GUEST    busybox (default): the kernel suite from a busybox
#                   initramfs; systemd-v2: Debian 12 with systemd as PID 1 on
#                   pure cgroup v2; systemd-v1: the same with
#                   systemd.unified_cgroup_hierarchy=0 (legacy/hybrid v1);
#                   k8s-node: Debian 13 with systemd 257 and containerd 1.7
#                   (CRI, NRI, CDI) on Debian 13's kernel (DIR/trixie/), pure
#                   cgroup v2; its lines "TRACE-JSON {...}" are kept in
#                   DIR/k8s-node-trace.json, not printed
#   VMTEST_SCRIPT   a file the guest runs as root instead of the suite (the
#                   systemd guests: once systemd has reached its default
#                   target); its output goes to standard output, progress to
#                   standard error, and the exit status is the script's
#   VMTEST_SUMMARY  with a script: judge its last "N passed, N failed,
#                   N skipped" line as the suite's, not its exit status
#   VMTEST_TIMEOUT  seconds for qemu (default 1500 busybox, 1200 systemd,
#                   1800 k8s-node)
#   VMTEST_CGROUP   busybox guest: v2 (default, pure cgroup v2) or hybrid
#                   (cgroup2 on /sys/fs/cgroup/unified, v1 devices, freezer)
#   VMTEST_APPEND   more kernel parameters; NAME=VALUE ones reach the busybox
#                   guest's suite, e.g. VMTEST_APPEND=DEVCG_TEST_VERBOSE=1;
#                   vmtest.blame makes a systemd guest print systemd-analyze
#                   blame
#   VMTEST_LOG      the console log (default DIR/guest.log, busybox, or
#                   DIR/guest-GUEST.log)
# Exit status: 0 when the suite passed, 1 when it did not, 2 on bad usage,
# 75 when the guest's kernel hung (a soft lockup of HUNG_S seconds or more:
# qemu is ended at once, as nothing more will come; vmtest.sh boots such a
# guest once more).
set -u
dir=${1:?usage: run.sh DIR [GLOB...]}
shift
globs=$*
guest=${VMTEST_GUEST:-busybox}
script=${VMTEST_SCRIPT:-}
kernel=$dir/vmlinuz
kdir=$dir
[ "$guest" = k8s-node ] && kdir=$dir/${VMTEST_K8S_SUITE:-trixie} kernel=$dir/${VMTEST_K8S_SUITE:-trixie}/vmlinuz
release=$(cat "$kdir/kernel-release" 2>/dev/null || echo unknown)
mem=2G
cr=$(printf '\r')
# a CPU stuck this long in the guest's kernel: the guest is not coming back
HUNG_S=60
hung=

case $guest in
busybox)
	initrd=$dir/initramfs.gz
	log=${VMTEST_LOG:-$dir/guest.log}
	limit=${VMTEST_TIMEOUT:-1500}
	;;
systemd-v2 | systemd-v1)
	initrd=$dir/systemd.cpio
	log=${VMTEST_LOG:-$dir/guest-$guest.log}
	limit=${VMTEST_TIMEOUT:-1200}
	[ -n "$script" ] || { echo "vmtest: the $guest guest runs a script (VMTEST_SCRIPT)" >&2; exit 2; }
	;;
k8s-node)
	initrd=$dir/k8s.cpio
	log=${VMTEST_LOG:-$dir/guest-$guest.log}
	# 1,043 s from qemu's start to the power-off at a host load of 7-8
	limit=${VMTEST_TIMEOUT:-1800}
	# the root is larger (containerd, python3), and the initramfs and its
	# copy are both in memory until switch_root
	mem=3G
	[ -n "$script" ] || { echo "vmtest: the $guest guest runs a script (VMTEST_SCRIPT)" >&2; exit 2; }
	;;
*) echo "vmtest: VMTEST_GUEST is busybox (default), systemd-v2, systemd-v1 or k8s-node, not $guest" >&2; exit 2 ;;
esac
# with a script and no summary wanted (make vmrun), standard output is the
# script's alone: progress goes to standard error
if [ -n "$script" ] && [ -z "${VMTEST_SUMMARY:-}" ]; then
	exec 4>&2
	raw=1
	[ -f "$script" ] || { echo "vmtest: no script $script" >&2; exit 2; }
else
	exec 4>&1
	raw=
fi

for f in "$kernel" "$initrd"; do
	[ -f "$f" ] || { echo "vmtest: $f is missing (make vmtest or make vmrun builds it)" >&2; exit 1; }
done
command -v qemu-system-x86_64 >/dev/null || { echo "vmtest: qemu-system-x86_64 is missing (make vmtest-deps)" >&2; exit 1; }

# NAME=VALUE parameters the kernel does not know reach /init's environment;
# panic=-1 with -no-reboot: a guest panic ends qemu at once
append="console=ttyS0 panic=-1"
case $guest in
busybox)
	cgroup=${VMTEST_CGROUP:-v2}
	case $cgroup in
	v2 | hybrid) ;;
	*) echo "vmtest: VMTEST_CGROUP is v2 (default) or hybrid, not $cgroup" >&2; exit 2 ;;
	esac
	append="$append VMTEST_CGROUP=$cgroup"
	;;
systemd-v2)
	cgroup="v2 (systemd)"
	;;
systemd-v1)
	# systemd 252 still honours it: v1 controllers, cgroup2 on .../unified
	cgroup="v1 hybrid (systemd)"
	append="$append systemd.unified_cgroup_hierarchy=0"
	;;
k8s-node)
	cgroup="v2 (systemd, containerd)"
	;;
esac
case $guest in
systemd-* | k8s-node)
	# kernel messages at warning and worse (warnings too: a soft lockup's
	# registers and stack come at the default level, 4); systemd's status
	# lines without colours (TERM is read from the command line by PID 1),
	# they show the boot's progress
	append="$append loglevel=5 TERM=dumb systemd.show_status=1"
	# no speculation mitigations: with page table isolation each system
	# call switches page tables, and TCG drops its software TLB on each
	# switch; a daemon-reload, systemctl and the readers' opens take about
	# half the time without (the guest runs nothing untrusted)
	append="$append mitigations=off"
	;;
esac
append="$append ${VMTEST_APPEND:-}"
[ $# -gt 0 ] && [ "$guest" = busybox ] && append="$append -- $*"

# the run's script travels as a second cpio after the guest's image (the
# kernel unpacks concatenated archives in turn): /vmtest/script
if [ -n "$script" ]; then
	[ -f "$script" ] || { echo "vmtest: no script $script" >&2; exit 2; }
	stage=$dir/script-$guest
	rm -rf "$stage"
	mkdir -p "$stage/vmtest"
	install -m 0755 "$script" "$stage/vmtest/script"
	combined=$dir/run-$guest.cpio
	# the kernel reads the next archive's magic only at a multiple of 4
	# bytes (init/initramfs.c, unpack_to_rootfs): zeros pad the first one
	size=$(wc -c < "$initrd")
	{
		cat "$initrd"
		head -c $(((4 - size % 4) % 4)) /dev/zero
		(cd "$stage" && find . | LC_ALL=C sort | busybox cpio -o -H newc -R 0:0 2>/dev/null)
	} > "$combined" || exit 1
	rm -rf "$stage"
	initrd=$combined
fi

start=$(date +%s)
elapsed() { echo "$(($(date +%s) - start))s"; }

echo "vmtest: booting the $guest guest, Linux $release under qemu (TCG, 2 vCPUs, ${mem%G} GiB, cgroup $cgroup, at most ${limit}s)${script:+, running $script}; console in $log" >&4
fifo=$dir/console.fifo
rm -f "$fifo"
mkfifo "$fifo" || exit 1
# stdin is not the terminal: qemu neither reads it nor changes its mode.
# timeout runs qemu in a process group of its own, so a Ctrl-C or a TERM
# reaches it only through the trap below; timeout passes it on to qemu.
timeout -k 10 "$limit" qemu-system-x86_64 -accel tcg,thread=multi -cpu max -m "$mem" -smp 2 \
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
		*"] Linux version "*) echo "vmtest: [$(elapsed)] guest kernel booting" >&4 ;;
		*"Reached target "*) echo "vmtest: [$(elapsed)] guest systemd: Reached target ${line#*Reached target }" >&4 ;;
		VMTEST-INFO*) echo "vmtest: [$(elapsed)] guest: ${line#VMTEST-INFO }" >&4 ;;
		"VMTEST-START "?*) echo "vmtest: [$(elapsed)] the kernel test suite starts: ${line#VMTEST-START }" >&4 ;;
		VMTEST-START*) echo "vmtest: [$(elapsed)] ${script:-the kernel test suite} starts" >&4 ;;
		"VMTEST-TEST TRACE-JSON "*) ;;
		VMTEST-TEST*)
			if [ "$raw" ]; then
				printf '%s\n' "${line#VMTEST-TEST }"
			else
				echo "  ${line#VMTEST-TEST }"
			fi
			;;
		VMTEST-END*) echo "vmtest: [$(elapsed)] ${script:-the suite} exited with status ${line#VMTEST-END }; powering off" >&4 ;;
		*"BUG: soft lockup - CPU#"*" stuck for "*)
			echo "vmtest: [$(elapsed)] guest kernel: $line" >&4
			stuck=${line##* stuck for }
			stuck=${stuck%%s!*}
			case $stuck in
			*[!0-9]* | '') ;;
			*)
				if [ -z "$hung" ] && [ "$stuck" -ge "$HUNG_S" ]; then
					hung=$line
					echo "vmtest: [$(elapsed)] the guest's kernel hung (a CPU stuck for ${stuck}s); ending qemu" >&4
					kill -TERM $timeout_pid 2>/dev/null
				fi
				;;
			esac
			;;
		*"Kernel panic"* | *"BUG:"* | *"Oops:"* | *"WARNING:"* | *"Call Trace"*)
			echo "vmtest: [$(elapsed)] guest kernel: $line" >&4 ;;
		esac
		line=
	done
	[ -n "$interrupted$hung" ] && [ -z "$reread" ] || break
	reread=1
done <"$fifo" 3>"$log"
wait $timeout_pid
qemu_status=$?
trap - INT TERM HUP
rm -f "$fifo"

# the k8s-node guest's trace, a test artifact
if [ "$guest" = k8s-node ]; then
	sed -n 's/^VMTEST-TEST TRACE-JSON //p' "$log" > "$dir/k8s-node-trace.json"
	[ -s "$dir/k8s-node-trace.json" ] &&
		echo "vmtest: the guest's devcg trace (JSON) is in $dir/k8s-node-trace.json" >&4
fi

summary=$(sed -n 's/^VMTEST-TEST \([0-9]* passed, [0-9]* failed, [0-9]* skipped\)$/\1/p' "$log" | tail -n1)
suite_status=$(sed -n 's/^VMTEST-END //p' "$log" | tail -n1)

echo "vmtest: qemu ended after $(elapsed) (status $qemu_status)" >&4
if [ -n "$interrupted" ]; then
	echo "vmtest: interrupted" >&4
elif [ -n "$hung" ]; then
	echo "vmtest: the guest's kernel hung: ${hung#*] }; the end of $log:" >&4
	tail -n 40 "$log" | sed 's/^/  | /' >&4
	echo "== vmtest total ($guest guest, Linux $release)" >&4
	echo "0 passed, 1 failed, 0 skipped" >&4
	exit 75
elif [ "$qemu_status" = 124 ] || [ "$qemu_status" = 137 ]; then
	echo "vmtest: timed out after ${limit}s (VMTEST_TIMEOUT)" >&4
fi

# make vmrun: the script's own exit status
if [ "$raw" ]; then
	case $suite_status in
	[0-9]*) exit "$suite_status" ;;
	esac
	echo "vmtest: the guest never reported the end of $script; the end of $log:" >&2
	tail -n 25 "$log" | sed 's/^/  | /' >&2
	exit 1
fi

if [ -z "$summary" ]; then
	echo "vmtest: the guest never reported the suite's results; the end of $log:"
	tail -n 25 "$log" | sed 's/^/  | /'
	echo "== vmtest total ($guest guest, Linux $release)"
	echo "0 passed, 1 failed, 0 skipped"
	exit 1
fi
set -- $summary
echo "== vmtest total ($guest guest, Linux $release)"
echo "$summary"
if [ "$3" != 0 ]; then
	exit 1
elif [ "$suite_status" != 0 ]; then
	echo "vmtest: ${script:-the suite} exited with status $suite_status"
	exit 1
elif [ $(($1 + $3 + $5)) = 0 ]; then
	echo "vmtest: no test ran${globs:+ (globs: $globs)}"
	exit 1
fi
exit 0

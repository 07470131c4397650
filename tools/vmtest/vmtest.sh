#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make vmtest: run the guests one after the other, each judged by run.sh,
# and end with the sum of their "N passed, N failed, N skipped" lines.
#   busybox      the kernel suite (GLOBs select its tests)
#   systemd-v2   tools/vmtest/guest/systemd-v2.sh in Debian 12 with systemd
#   systemd-v1   tools/vmtest/guest/systemd-v1.sh, systemd.unified_cgroup_
#                hierarchy=0
#   k8s-node     tools/vmtest/guest/k8s-node.sh in Debian 13 with systemd
#                257 and containerd 1.7 driven over CRI (its own image,
#                $MAKE vmtest-k8s-image, built just before it runs)
# The systemd guests' image is built ($MAKE vmtest-systemd-image) just
# before the first of them runs; when that fails (no network to the Debian
# mirror, ...) each systemd guest counts as one failed test, and the exit
# status is non-zero. VMTEST_NO_BUILD=1 (make vmtest-run) builds nothing.
# A guest whose kernel hung (run.sh's status 75: a CPU stuck in the kernel
# for a minute, seen once under TCG on a loaded host) is booted once more;
# the hung boot's console is kept (DIR/guest-GUEST.hung.log), the guest's
# line in the summary says so, and a second hang fails it.
#
# Usage: vmtest.sh DIR 'GUEST...' [GLOB...]
set -uf
dir=${1:?usage: vmtest.sh DIR 'GUEST...' [GLOB...]}
guests=${2:?usage: vmtest.sh DIR 'GUEST...' [GLOB...]}
shift 2
globs=$*
here=$(dirname "$0")
start=$(date +%s)
passed=0 failed=0 skipped=0 status=0 image= k8s_image=
report=

# run.sh with its output shown and kept in DIR/summary-GUEST.txt; a hung
# kernel boots the guest once more
run_guest() { # GUEST [ENV=VALUE...]
	g=$1
	shift
	for attempt in 1 2; do
		{
			env VMTEST_GUEST="$g" "$@" "$here/run.sh" "$dir" $globs
			echo $? > "$dir/status-$g"
		} | tee "$dir/summary-$g.txt"
		st=$(cat "$dir/status-$g")
		out=$(cat "$dir/summary-$g.txt")
		rm -f "$dir/status-$g" "$dir/summary-$g.txt"
		[ "$st" = 75 ] && [ "$attempt" = 1 ] || break
		log=$dir/guest-$g.log
		[ "$g" = busybox ] && log=$dir/guest.log
		mv -f "$log" "$dir/guest-$g.hung.log" 2>/dev/null
		note="$note (its kernel hung on the first boot, console in $dir/guest-$g.hung.log; booted again)"
		echo "vmtest: the $g guest's kernel hung; booting it once more (the hung boot's console: $dir/guest-$g.hung.log)"
	done
	[ "$st" = 0 ] || status=1
}

add() { # GUEST SECONDS "N passed, N failed, N skipped"
	set -- "$1" "$2" $3
	passed=$((passed + $3)) failed=$((failed + $5)) skipped=$((skipped + $7))
	report="$report
  $1: $3 passed, $5 failed, $7 skipped (${2}s)$note"
}

for guest in $guests; do
	t0=$(date +%s) note=
	echo "== vmtest: $guest guest ($((t0 - start))s since the start)"
	case $guest in
	busybox)
		run_guest busybox
		;;
	systemd-v2 | systemd-v1)
		if [ -z "$image" ] && [ -n "${VMTEST_NO_BUILD:-}" ]; then
			# make vmtest-run: what is there
			image=ok
		elif [ -z "$image" ]; then
			if ${MAKE:-make} --no-print-directory vmtest-systemd-image; then
				image=ok
			else
				echo "vmtest: the systemd guests' image could not be built (see above)"
				image=failed
			fi
		fi
		if [ "$image" = failed ]; then
			status=1
			out="0 passed, 1 failed, 0 skipped"
			echo "== vmtest total ($guest guest): no image"
			echo "$out"
		else
			globs_kept=$globs globs=
			run_guest "$guest" VMTEST_SCRIPT="$here/guest/$guest.sh" VMTEST_SUMMARY=1
			globs=$globs_kept
		fi
		;;
	k8s-node)
		if [ -n "${VMTEST_NO_BUILD:-}" ]; then
			k8s_image=ok
		elif ${MAKE:-make} --no-print-directory vmtest-k8s-image; then
			k8s_image=ok
		else
			echo "vmtest: the k8s-node guest's image could not be built (see above)"
			k8s_image=failed
		fi
		if [ "$k8s_image" = failed ]; then
			status=1
			out="0 passed, 1 failed, 0 skipped"
			echo "== vmtest total ($guest guest): no image"
			echo "$out"
		else
			globs_kept=$globs globs=
			run_guest "$guest" VMTEST_SCRIPT="$here/guest/$guest.sh" VMTEST_SUMMARY=1
			globs=$globs_kept
		fi
		;;
	*)
		echo "vmtest: unknown guest $guest (busybox, systemd-v2, systemd-v1, k8s-node)"
		status=1
		out="0 passed, 1 failed, 0 skipped"
		;;
	esac
	summary=$(printf '%s\n' "$out" | grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' | tail -n1)
	[ -n "$summary" ] || { summary="0 passed, 1 failed, 0 skipped"; status=1; }
	add "$guest" $(($(date +%s) - t0)) "$summary"
done

echo "== vmtest: $(echo $guests | wc -w) guests in $(($(date +%s) - start))s$report"
echo "vmtest: $passed passed, $failed failed, $skipped skipped"
exit $status

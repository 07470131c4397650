#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest: systemd's own device program (sd_devices) for several
# DevicePolicy=/DeviceAllow= sets, decided by devcg as the kernel decides.
#
# 1. The reader on systemd's programs: the kernel test
#    reader_decides_systemds_programs_as_the_kernel_on_every_probe
#    (tests/kernel/test_progread.c) starts a transient service per set,
#    runs the reader on its sd_devices program and compares, probe by
#    probe, with the kernel (its control: a reader flipping one decision
#    fails).
# 2. devcg check on each unit's cgroup against the kernel's own answers
#    there: a probe joins the unit's cgroup and opens (r: the errno reader;
#    w: a shell redirection) and mknods each node; EPERM is a refusal, OK,
#    ENXIO (a node of an unregistered major: no driver behind the check)
#    or EIO (the pty driver, c 136:9, no such pty: also after the check) an
#    access, anything else an error of the probe (a failure). `devcg check CGROUP TYPE M:N ACC` must say
#    allow (exit 0) or deny (exit 1) alike. Control: the answers of each
#    unit compared with the next unit's `devcg check` differ somewhere (the
#    probes tell the sets apart, so a check that ignored the unit would
#    fail).
# Sourced by systemd-v2.sh, or alone:
#   make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/guest/sd-devices.sh
if [ -z "${DEVCG_VMTEST_LIB:-}" ]; then
	. /usr/lib/devcg-vmtest/lib.sh
	sd_alone=1
	make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
fi
SD_DIR=/dev/devcg-sd-probe # (not /run: it is nodev, an open there is EACCES)
# (each strict set allows /dev/null: systemd opens it for the service's
# standard input, and the service would not start without it)
SD_SETS=(
	"DevicePolicy=closed|DeviceAllow=/dev/null rw"
	"DevicePolicy=strict|DeviceAllow=/dev/null rw|DeviceAllow=/dev/zero r|DeviceAllow=char-pts rw|DeviceAllow=$FAKEGPU rw"
	"DevicePolicy=closed|DeviceAllow=char-mem rwm|DeviceAllow=block-loop r"
	"DevicePolicy=strict|DeviceAllow=/dev/null rw|DeviceAllow=/dev/full m|DeviceAllow=/dev/urandom w|DeviceAllow=$FAKEGPU r"
	"DevicePolicy=strict|DeviceAllow=/dev/null rw"
)
# PATH TYPE MAJOR MINOR: real devices, and nodes of unregistered majors
# (240, 241: an allowed open is ENXIO)
SD_NODES=(
	"/dev/null c 1 3" "/dev/zero c 1 5" "/dev/full c 1 7" "/dev/random c 1 8" "/dev/urandom c 1 9"
	"/dev/tty c 5 0" "/dev/ptmx c 5 2" "$FAKEGPU c 240 0" "$SD_DIR/c-240-1 c 240 1"
	"$SD_DIR/c-241-0 c 241 0" "$SD_DIR/b-240-0 b 240 0" "$SD_DIR/c-136-9 c 136 9"
)

# the kernel's answers in CGROUP: one line "TYPE MAJOR:MINOR ACC allow|deny"
# per node and access (r, w, m), from a shell that joined CGROUP
sd_kernel() { # CGROUP
	bash -c '
		echo $$ > "$1/cgroup.procs" || exit 1
		shift
		for n; do
			set -- $n
			[ -c "$1" ] || [ -b "$1" ] || { echo "$2 $3:$4 r no-node"; continue; }
			out=$('"$READER"' -1 "$1")
			case "$out" in *" EPERM") r=deny ;; *" OK" | *" ENXIO" | *" 5") r=allow ;; *) r="error(${out##* })" ;; esac
			echo "$2 $3:$4 r $r"
			err=$( (exec 3>"$1") 2>&1 )
			case "$err" in "" | *"No such device or address"* | *"Input/output error"*) r=allow ;;
			*"Operation not permitted"*) r=deny ;;
			*) r="error(${err##*: })" ;; esac
			echo "$2 $3:$4 w $r"
			rm -f "$SD_M"
			if err=$(mknod "$SD_M" "$2" "$3" "$4" 2>&1); then r=allow
			else case "$err" in *"Operation not permitted"*) r=deny ;; *) r="error(${err##*: })" ;; esac; fi
			echo "$2 $3:$4 m $r"
			rm -f "$SD_M"
		done' sd-probe "$1" "${SD_NODES[@]}"
}

# devcg check's answers for the same requests on CGROUP ("error" when it
# could not decide)
sd_devcg() { # CGROUP
	local n acc rc
	for n in "${SD_NODES[@]}"; do
		set -- $n
		for acc in r w m; do
			devcg check "$CG_CHECK" "$2" "$3:$4" "$acc" >/dev/null 2>&1
			rc=$?
			case $rc in 0) echo "$2 $3:$4 $acc allow" ;; 1) echo "$2 $3:$4 $acc deny" ;; *) echo "$2 $3:$4 $acc error" ;; esac
		done
	done
}

mkdir -p "$SD_DIR"
export SD_M=$SD_DIR/m-probe
for n in "${SD_NODES[@]}"; do
	set -- $n
	case $1 in "$SD_DIR"/*) rm -f "$1"; mknod -m 0666 "$1" "$2" "$3" "$4" ;; esac
done

# ---- 1. the reader on systemd's programs -----------------------------------
out=$("$DEVCG_VMTEST_LIB/kernel-tests" 'reader_decides_systemds_programs_as_the_kernel_on_every_probe' 2>&1)
if printf '%s\n' "$out" | grep -q '^1 passed, 0 failed, 0 skipped$'; then
	pass sd_reader_decides_systemds_programs_as_the_kernel
else
	fail sd_reader_decides_systemds_programs_as_the_kernel "$(printf '%s\n' "$out" | tail -n 5 | tr '\n' ' ')"
fi

# ---- 2. devcg check on each unit's cgroup, against the kernel ---------------
declare -a sd_cgs sd_kern
i=0
for set in "${SD_SETS[@]}"; do
	unit=devcg-sd-$i.service
	props=()
	IFS='|' read -r -a parts <<<"$set"
	for p in "${parts[@]}"; do props+=(-p "$p"); done
	systemctl stop "$unit" 2>/dev/null
	systemctl reset-failed "$unit" 2>/dev/null
	if ! systemd-run --quiet --unit="$unit" "${props[@]}" sleep 600; then
		fail "sd_check_$i" "systemd-run ${parts[*]} failed"
		i=$((i + 1))
		continue
	fi
	settle "$unit"
	cg=$(cgroup_of "$unit")
	if [ "$(systemctl show -P ActiveState "$unit")" != active ] || [ "$cg" = /sys/fs/cgroup ] ||
		[ ! -d "$cg" ]; then
		fail "sd_check_equals_the_kernel_$i" "$unit (${parts[*]}) is not running: $(systemctl show -P Result "$unit")"
		i=$((i + 1))
		continue
	fi
	sd_cgs[$i]=$cg
	sd_kern[$i]=$(sd_kernel "$cg")
	CG_CHECK=$cg
	mine=$(sd_devcg)
	info "set $i: ${parts[*]}: $(printf '%s\n' "${sd_kern[$i]}" | grep -c ' allow$') of $(printf '%s\n' "${sd_kern[$i]}" | wc -l) probes allowed"
	d=$(diff <(printf '%s\n' "${sd_kern[$i]}") <(printf '%s\n' "$mine") | grep '^[<>]' | head -n 12 | tr '\n' ' ')
	if [ -n "${sd_kern[$i]}" ] && [ -z "$d" ]; then
		pass "sd_check_equals_the_kernel_$i"
	else
		fail "sd_check_equals_the_kernel_$i" "${parts[*]}: kernel < > devcg check: ${d:-no probes}"
	fi
	i=$((i + 1))
done
# control: each unit's answers against the next unit's devcg check
for ((k = 0; k < i; k++)); do
	next=$(((k + 1) % i))
	[ -n "${sd_cgs[$k]}" ] && [ -n "${sd_cgs[$next]}" ] || continue
	CG_CHECK=${sd_cgs[$next]}
	if [ "$(sd_devcg)" != "${sd_kern[$k]}" ]; then
		pass "sd_control_probes_tell_set_${k}_from_set_$next"
	else
		fail "sd_control_probes_tell_set_${k}_from_set_$next" "devcg check of set $next answers set $k's probes alike"
	fi
done
for ((k = 0; k < i; k++)); do
	systemctl stop "devcg-sd-$k.service" 2>/dev/null
	systemctl reset-failed "devcg-sd-$k.service" 2>/dev/null
done
rm -rf "$SD_DIR"
[ -n "${sd_alone:-}" ] && summary

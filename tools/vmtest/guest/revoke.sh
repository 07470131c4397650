#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest: does `devcg trace` name systemd's re-attached device
# program as a revocation, and only where devcg's systemd step is off?
#
# Two transient services (DevicePolicy=closed, DeviceAllow=/dev/null rw)
# run the errno reader over /dev/null and the fake GPU (c 240:0, no driver:
# ENXIO when allowed, EPERM when refused). `devcg replace` grants each the
# unit's policy plus the fake GPU: one with devcg's systemd step (the
# default: the unit's DeviceAllow= widened to hold the grant), one with
# --no-systemd (the control). Then, under one
# `devcg trace -j --cgroup /system.slice`, REVOKE_RELOADS (3)
# daemon-reloads and one `set-property --runtime UNIT DeviceAllow=/dev/null
# rw` on each unit. systemd re-attaches its program for both units on each
# (a new one in multi mode, then the previous one detached, both by PID 1:
# src/core/bpf-devices.c). The control must be named once per operation
# (REVOKE_RELOADS + 1 revoke events by comm systemd refusing c 240:0), the
# unit with the step never; no other revocation.
# Sourced by systemd-v2.sh, or alone:
#   make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/guest/revoke.sh
if [ -z "${DEVCG_VMTEST_LIB:-}" ]; then
	. /usr/lib/devcg-vmtest/lib.sh
	revoke_alone=1
	make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
fi
REVOKE_RELOADS=${REVOKE_RELOADS:-3}
REVOKE_OUT=/run/devcg-revoke-trace.json
REVOKE_ERR=/run/devcg-revoke-trace.err

# revoke events by WRITER_COMM refusing c 240:0 on the cgroup REL
revoke_count() { # REL WRITER_COMM
	grep '"type":"revoke"' "$REVOKE_OUT" | grep -F "\"cgroup\":\"$1\"" |
		grep -F "\"writer_comm\":\"$2\"" | grep -cF '"dev":"c 240:0"'
}

revoke_test() {
	local fix=devcg-revoke-step ctl=devcg-revoke-nosd unit rel_fix rel_ctl out trace_pid i status got s0 s1
	local t0=$SECONDS policy=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm'
		'/dev/urandom rwm' '/dev/null rw' "$FAKEGPU rw")

	for unit in $fix $ctl; do
		if ! WORKLOAD_PAUSE=10000 start_workload "$unit" DevicePolicy=closed 'DeviceAllow=/dev/null rw' -- \
			/dev/null "$FAKEGPU"; then
			fail revoke_units_granted "the service $unit did not start"
			return
		fi
	done
	rel_fix=$(systemctl show -P ControlGroup $fix)
	rel_ctl=$(systemctl show -P ControlGroup $ctl)
	if ! out=$(devcg replace "/sys/fs/cgroup$rel_fix" "${policy[@]}" 2>&1) ||
		! out=$(devcg replace --no-systemd "/sys/fs/cgroup$rel_ctl" "${policy[@]}" 2>&1); then
		fail revoke_units_granted "devcg replace: $out"
		return
	fi
	# granted: the readers see ENXIO only
	for unit in $fix $ctl; do
		s0=$(snapshot $unit)
		wait_gens $unit 3
		s1=$(snapshot $unit)
		if [ "$(delta "$s0" "$s1" "$FAKEGPU" EPERM)" != 0 ] || [ "$(delta "$s0" "$s1" "$FAKEGPU" ENXIO)" = 0 ]; then
			fail revoke_units_granted "$unit: the reader should see only ENXIO: $(window "$s0" "$s1" "$FAKEGPU")"
			return
		fi
	done
	pass revoke_units_granted

	if ! start_trace "$REVOKE_OUT" "$REVOKE_ERR" --cgroup /system.slice; then
		fail revoke_trace_started "devcg trace did not start: $(tr '\n' ' ' < "$REVOKE_ERR")"
		return
	fi
	trace_pid=$TRACE_PID
	pass revoke_trace_started
	info "devcg trace: $(grep '"type":"hooks"' "$REVOKE_OUT")"
	# the readers' opens under the grants alone first: nothing to name
	wait_gens $fix 3
	wait_gens $ctl 3

	for i in $(seq "$REVOKE_RELOADS") set-property; do
		if [ "$i" = set-property ]; then
			systemctl set-property --runtime $fix 'DeviceAllow=/dev/null rw' &&
				systemctl set-property --runtime $ctl 'DeviceAllow=/dev/null rw'
		else
			systemctl daemon-reload
		fi || fail revoke_operations "operation $i failed"
		settle $fix
		# opens after the change: an episode is reported when opens were
		# refused since it
		wait_gens $fix 5
		wait_gens $ctl 5
	done

	kill -INT "$trace_pid"
	wait "$trace_pid"
	status=$?
	if [ "$status" = 0 ] && grep -q '"type":"summary"' "$REVOKE_OUT"; then
		pass revoke_trace_ended
	else
		fail revoke_trace_ended "devcg trace exited with $status: $(tr '\n' ' ' < "$REVOKE_ERR")"
	fi
	grep '"type":"revoke"' "$REVOKE_OUT" | sed 's/^/# /'
	grep '"type":"summary"' "$REVOKE_OUT" | sed 's/^/# /'

	got=$(revoke_count "$rel_ctl" systemd)
	if [ "$got" = $((REVOKE_RELOADS + 1)) ]; then
		pass revoke_named_per_operation_without_systemd_step
	else
		fail revoke_named_per_operation_without_systemd_step \
			"$got revoke(s) of $rel_ctl by systemd refusing c 240:0, expected $((REVOKE_RELOADS + 1))"
	fi
	got=$(grep '"type":"revoke"' "$REVOKE_OUT" | grep -cF "\"cgroup\":\"$rel_fix\"")
	if [ "$got" = 0 ]; then
		pass revoke_none_with_systemd_step
	else
		fail revoke_none_with_systemd_step "$got revoke(s) of $rel_fix"
	fi
	got=$(grep '"type":"revoke"' "$REVOKE_OUT" | grep -vcF "\"cgroup\":\"$rel_ctl\"")
	if [ "$got" = 0 ]; then
		pass revoke_none_elsewhere
	else
		fail revoke_none_elsewhere "$got revoke(s) of other cgroups"
	fi
	info "revoke: $REVOKE_RELOADS reloads and a set-property under devcg trace in $((SECONDS - t0))s"
}

revoke_test
stop_workload devcg-revoke-step
stop_workload devcg-revoke-nosd
[ -n "${revoke_alone:-}" ] && summary
true

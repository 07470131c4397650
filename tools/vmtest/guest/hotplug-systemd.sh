#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest: a hot-plug into a systemd unit survives what systemd
# does on reload. The workload is a transient service with DevicePolicy=
# closed and a TemporaryFileSystem= (its own mount namespace, with a nodev
# tmpfs at /run/hp: a container's /dev as far as devcg is concerned;
# PrivateDevices= would do, but systemd mounts that /dev read-only) running
# the errno reader over /run/hp/fakegpu0 (ENOENT at first) and /dev/null.
# `devcg attach` gives it the fake GPU (bind-mounted: ENXIO from then on);
# then `systemctl daemon-reload` re-applies the unit's own device program.
# With the systemd step (the unit's DeviceAllow= widened after the swap)
# the grant is kept. The control shows that the same reload revokes it
# without the step: the unit's own policy installed with `devcg replace
# --no-systemd` (which takes the place of systemd's program), then `attach
# --no-systemd`.
# Sourced by systemd-v2.sh, or alone:
#   make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/guest/hotplug-systemd.sh
if [ -z "${DEVCG_VMTEST_LIB:-}" ]; then
	. /usr/lib/devcg-vmtest/lib.sh
	hotplug_alone=1
	info "systemd $(systemctl --version | sed -n '1s/^systemd //p')"
	make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
fi

# what systemd installs for the unit (DevicePolicy=closed: the standard
# pseudo devices), for the control's `devcg replace`
UNIT_POLICY=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm' '/dev/urandom rwm')

hp_n=0
# attach_then NAME EXPECT [ATTACH OPTION...]: EXPECT is keeps or revokes;
# with --no-systemd, the unit's policy is installed with `devcg replace
# --no-systemd` first
attach_then() {
	local name=$1 expect=$2 unit pid s0 s1 s2 out result node=/run/hp/fakegpu0
	shift 2
	hp_n=$((hp_n + 1))
	unit=devcg-hp-$hp_n
	if ! start_workload "$unit" DevicePolicy=closed TemporaryFileSystem=/run/hp:mode=755 -- "$node" /dev/null; then
		fail "$name" "the workload $unit did not start"
		stop_workload "$unit"
		return
	fi
	pid=$(systemctl show -P MainPID "$unit")
	s0=$(snapshot "$unit")
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	if [ "$(delta "$s0" "$s1" "$node" ENOENT)" = 0 ]; then
		fail "$name" "before attach the reader should see ENOENT: $(window "$s0" "$s1" "$node")"
		stop_workload "$unit"
		return
	fi
	if [ "${1:-}" = --no-systemd ] &&
		! out=$(devcg replace --no-systemd "$(cgroup_of "$unit")" "${UNIT_POLICY[@]}" 2>&1); then
		fail "$name" "devcg replace: $out"
		stop_workload "$unit"
		return
	fi
	if ! out=$(devcg attach -p "$pid" "$@" "$FAKEGPU=$node" 2>&1); then
		fail "$name" "devcg attach: $out"
		stop_workload "$unit"
		return
	fi
	info "$name: devcg attach -p $pid $*: $(echo "$out" | tr '\n' ' ')"
	wait_gens "$unit" 3
	s0=$(snapshot "$unit")
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	if [ "$(delta "$s0" "$s1" "$node" ENXIO)" = 0 ] || [ "$(delta "$s0" "$s1" "$node" EPERM)" != 0 ]; then
		fail "$name" "after attach the reader should see only ENXIO: $(window "$s0" "$s1" "$node")"
		stop_workload "$unit"
		return
	fi
	s0=$(snapshot "$unit")
	systemctl daemon-reload
	observe "$unit" "$unit" "$node" "$s0"
	result=$OP_RESULT
	info "$name: daemon-reload: after: $OP_AFTER -> $result"
	if [ "$result" = "$expect" ]; then
		pass "$name"
	else
		fail "$name" "the attach $result, expected: $expect"
	fi
	if [ "$expect" = keeps ]; then
		if out=$(devcg detach -p "$pid" "$FAKEGPU=$node" 2>&1) && wait_gens "$unit" 3 && s0=$(snapshot "$unit") &&
			wait_gens "$unit" 3 && s1=$(snapshot "$unit") && [ "$(delta "$s0" "$s1" "$node" ENXIO)" = 0 ]; then
			pass "${name}_then_detach_removes_it"
		else
			fail "${name}_then_detach_removes_it" "$out"
		fi
	fi
	stop_workload "$unit"
}

attach_then daemon_reload_keeps_an_attach keeps
attach_then control_without_the_systemd_step_daemon_reload_revokes_it revokes --no-systemd

# `attach --no-systemd` on a unit whose cgroup has devcg's filter beside
# systemd's own program (what the hook leaves on a runc scope: `devcg
# replace` with the systemd step) is not refused as "2 device programs":
# --no-systemd only stops the DeviceAllow= step, systemd's program is still
# recognised, and devcg's filter takes its place (no --force), so the fake
# GPU opens (ENXIO) until systemd's next reload.
attach_no_systemd_beside_systemds_program() {
	local name=attach_no_systemd_beside_systemds_program_is_not_refused unit pid s0 s1 out node=/run/hp/fakegpu0
	hp_n=$((hp_n + 1))
	unit=devcg-hp-$hp_n
	if ! start_workload "$unit" DevicePolicy=closed TemporaryFileSystem=/run/hp:mode=755 -- "$node" /dev/null; then
		fail "$name" "the workload $unit did not start"
		stop_workload "$unit"
		return
	fi
	pid=$(systemctl show -P MainPID "$unit")
	if ! out=$(devcg replace "$(cgroup_of "$unit")" "${UNIT_POLICY[@]}" 2>&1); then
		fail "$name" "devcg replace: $out"
		stop_workload "$unit"
		return
	fi
	if ! out=$(devcg attach --no-systemd -p "$pid" "$FAKEGPU=$node" 2>&1); then
		fail "$name" "devcg attach --no-systemd: $out"
		stop_workload "$unit"
		return
	fi
	info "$name: devcg attach --no-systemd -p $pid: $(echo "$out" | tr '\n' ' ')"
	wait_gens "$unit" 3
	s0=$(snapshot "$unit")
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	if [ "$(delta "$s0" "$s1" "$node" ENXIO)" = 0 ] || [ "$(delta "$s0" "$s1" "$node" EPERM)" != 0 ]; then
		fail "$name" "after attach --no-systemd the reader should see only ENXIO: $(window "$s0" "$s1" "$node")"
	else
		pass "$name"
	fi
	stop_workload "$unit"
}
attach_no_systemd_beside_systemds_program

[ -n "${hotplug_alone:-}" ] && summary
true

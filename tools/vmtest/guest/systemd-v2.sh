#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest (Debian 12, systemd 252 as PID 1, pure cgroup v2): a
# grant made with devcg on a systemd unit's cgroup, and systemd re-applying
# the unit's own device program. Each check: a fresh transient service with
# DevicePolicy=closed and DeviceAllow=/dev/null rw runs the errno reader
# over /dev/null and a fake GPU (a node of an unregistered major: allowed
# -> ENXIO, refused -> EPERM); `devcg replace` installs the unit's whole
# policy plus the fake GPU; then one systemd operation; the reader's opens
# before and after tell whether the grant survived it. With --no-systemd
# (devcg's systemd step off) every operation revokes the grant: the field
# failure. With the step (the default) devcg first widens the unit's
# runtime DeviceAllow= to hold its policy, and every operation keeps it.
# Then the soak (soak.sh: 100 reloads, runc and podman containers) and the
# trace's revocations (revoke.sh).
# Run by make vmtest (or: make vmrun GUEST=systemd-v2 SCRIPT=this file).
. /usr/lib/devcg-vmtest/lib.sh

# What systemd installs for the unit (systemd.resource-control(5): closed
# allows the standard pseudo devices, plus DeviceAllow=), with the fake GPU:
# the whole policy, so plain `devcg replace` adopts systemd's program (no
# --force: the unit has exactly one device program, systemd's).
POLICY=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm' '/dev/urandom rwm'
	'/dev/null rw' "$FAKEGPU rw")
UNIT_PROPS=(DevicePolicy=closed 'DeviceAllow=/dev/null rw')

t_start=$SECONDS
info "systemd $(systemctl --version | sed -n '1s/^systemd //p')"
info "devcg $(devcg --version 2>&1 | head -n1) from $(dpkg-query -W -f='${Package} ${Version}' devcg)"
make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }

# ---- the fake GPU tells access from refusal -----------------------------
out=$("$READER" -1 "$FAKEGPU")
if [ "$out" = "$FAKEGPU ENXIO" ]; then pass fakegpu_allowed_open_is_enxio
else fail fakegpu_allowed_open_is_enxio "got '$out', want ENXIO (no device program on the runner's cgroup)"; fi

out=$("$READER" -1 /dev/fakegpu-missing)
if [ "$out" = "/dev/fakegpu-missing ENOENT" ]; then pass fakegpu_missing_node_is_enoent
else fail fakegpu_missing_node_is_enoent "got '$out'"; fi

out=$(open_in_scope "${UNIT_PROPS[@]}" -- "$FAKEGPU" /dev/null 2>&1)
if [ "$out" = "$FAKEGPU EPERM
/dev/null OK" ]; then pass fakegpu_refused_open_is_eperm
else fail fakegpu_refused_open_is_eperm "got '$out' in a scope with ${UNIT_PROPS[*]}"; fi

# ---- one operation on a granted unit ---------------------------------------
# check NAME EXPECT OPERATION...: EXPECT is "revokes" (after the operation
# the reader sees EPERM and no ENXIO) or "keeps" (no EPERM from before the
# operation to the end of the window, and ENXIO after it); the operation's
# words may use @UNIT@ for the unit's name. The grant is `devcg replace
# $REPLACE_OPTS`: with --no-systemd, the unit's DeviceAllow= must stay
# without the fake GPU and devcg prints no systemd line; without it, devcg
# must print "systemd: UNIT: ..." and the unit's DeviceAllow= must name
# /dev/char/240:0 (the first check of each kind says so as a test of its own).
n=0
REPLACE_OPTS=
said_step=
# the readers pause 1 ms between rounds: a busy one takes a whole vCPU from
# systemd under TCG, and a revocation lasts until the next change anyway
WORKLOAD_PAUSE=1000
check() {
	local name=$1 expect=$2 unit cg s0 s1 s2 before after during result words=() allow why
	shift 2
	n=$((n + 1))
	unit=devcg-wl-$n
	if ! start_workload "$unit" "${UNIT_PROPS[@]}" -- /dev/null "$FAKEGPU"; then
		fail "$name" "the workload $unit did not start"
		stop_workload "$unit"
		return
	fi
	cg=$(cgroup_of "$unit")
	s0=$(snapshot "$unit")
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	before=$(window "$s0" "$s1" "$FAKEGPU")
	if [ "$(delta "$s0" "$s1" "$FAKEGPU" EPERM)" = 0 ] || [ "$(delta "$s0" "$s1" "$FAKEGPU" ENXIO)" != 0 ]; then
		fail "$name" "before the grant the reader should see only EPERM on $FAKEGPU: $before"
		stop_workload "$unit"
		return
	fi
	if ! out=$(devcg replace $REPLACE_OPTS "$cg" "${POLICY[@]}" 2>&1); then
		fail "$name" "devcg replace $REPLACE_OPTS $cg: $out"
		stop_workload "$unit"
		return
	fi
	allow=$(systemctl show -P DeviceAllow "$unit" | tr '\n' ';')
	why=
	if [ -z "$REPLACE_OPTS" ]; then
		grep -q "^systemd: $unit.service: [1-9][0-9]* DeviceAllow= entr" <<<"$out" ||
			why="devcg replace printed no 'systemd: $unit.service: N DeviceAllow= entries ...' line: $out"
		[[ $allow == */dev/char/240:0\ rw* ]] || why="${why:+$why; }the unit's DeviceAllow= lacks /dev/char/240:0 rw: $allow"
	else
		! grep -q '^systemd:' <<<"$out" || why="devcg replace --no-systemd printed a systemd line: $out"
		[[ $allow != *240:0* ]] || why="${why:+$why; }with --no-systemd the unit's DeviceAllow= names 240:0: $allow"
	fi
	if [ "$said_step" != "$REPLACE_OPTS." ]; then
		said_step=$REPLACE_OPTS.
		info "devcg replace $REPLACE_OPTS: $(tr '\n' ' ' <<<"$out"); DeviceAllow=$allow"
		if [ -z "$REPLACE_OPTS" ]; then
			test=replace_widens_unit_deviceallow
		else
			test=replace_no_systemd_leaves_unit_deviceallow
		fi
		if [ -z "$why" ]; then pass "$test"; else fail "$test" "$why"; fi
	fi
	if [ -n "$why" ]; then
		fail "$name" "$why"
		stop_workload "$unit"
		return
	fi
	wait_gens "$unit" 3
	s0=$(snapshot "$unit")
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	after=$(window "$s0" "$s1" "$FAKEGPU")
	if [ "$(delta "$s0" "$s1" "$FAKEGPU" EPERM)" != 0 ] || [ "$(delta "$s0" "$s1" "$FAKEGPU" ENXIO)" = 0 ]; then
		fail "$name" "after devcg replace the reader should see only ENXIO on $FAKEGPU: $after"
		stop_workload "$unit"
		return
	fi

	for w in "$@"; do words+=("${w//@UNIT@/$unit}"); done
	s0=$(snapshot "$unit")
	if ! out=$("${words[@]}" 2>&1); then
		fail "$name" "${words[*]}: $out"
		stop_workload "$unit"
		return
	fi
	settle "$unit"
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	wait_gens "$unit" 5
	s2=$(snapshot "$unit")
	during=$(window "$s0" "$s1" "$FAKEGPU")
	after=$(window "$s1" "$s2" "$FAKEGPU")
	result=$(outcome "$s0" "$s1" "$s2" "$FAKEGPU")
	info "$name: ${words[*]}: during: $during; after: $after -> $result"
	info "  $(devcg show "$cg" 2>&1 | grep '^#' | tr '\n' ' ')"
	if [ "$result" = "$expect" ]; then
		pass "$name"
	else
		fail "$name" "the grant $result, expected: $expect (during: $during; after: $after)"
	fi
	stop_workload "$unit"
}

# The operations, each on a unit of its own: a query (the control: it
# changes nothing, and the check can tell so); a set-property of
# DeviceAllow= (what runc's systemd driver does on every `runc update`);
# daemon-reload; set-property of other resources; daemon-reexec. On systemd
# 252 each makes systemd build the unit's device program anew and attach it
# beside devcg's (README.md).
operations() { # EXPECT: keeps or revokes
	local e=$1 p=${REPLACE_OPTS:+no_systemd_}
	check ${p}show_keeps_grant keeps systemctl show @UNIT@
	check ${p}set_property_deviceallow_${e}_grant "$e" \
		systemctl set-property --runtime @UNIT@ 'DeviceAllow=/dev/null rw'
	check ${p}daemon_reload_${e}_grant "$e" systemctl daemon-reload
	check ${p}set_property_memorymax_${e}_grant "$e" systemctl set-property --runtime @UNIT@ MemoryMax=512M
	check ${p}set_property_allowedcpus_${e}_grant "$e" systemctl set-property --runtime @UNIT@ AllowedCPUs=0-1
	check ${p}set_property_cpuweight_${e}_grant "$e" systemctl set-property --runtime @UNIT@ CPUWeight=200
	check ${p}set_property_tasksmax_${e}_grant "$e" systemctl set-property --runtime @UNIT@ TasksMax=4000
	check ${p}set_property_ioweight_${e}_grant "$e" systemctl set-property --runtime @UNIT@ IOWeight=200
	check ${p}daemon_reexec_${e}_grant "$e" systemctl daemon-reexec
}

# without devcg's systemd step: the field failure
t0=$SECONDS
REPLACE_OPTS=--no-systemd
operations revokes
info "time: the checks without the systemd step: $((SECONDS - t0))s"
# with it (the default)
t0=$SECONDS
REPLACE_OPTS=
operations keeps
info "time: the checks with the systemd step: $((SECONDS - t0))s"

# ---- 100 reloads: a service, runc and podman containers -------------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/soak.sh"
info "time: the soak: $((SECONDS - t0))s"

# ---- devcg trace names the revocations ------------------------------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/revoke.sh"
info "time: the trace: $((SECONDS - t0))s"

info "time: the systemd-v2 tests: $((SECONDS - t_start))s"
summary

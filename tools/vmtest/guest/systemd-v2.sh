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
# failure. With the step (the default) devcg, right after its swap, widens the unit's
# runtime DeviceAllow= to hold its policy, and every operation keeps it.
# Then the soak (soak.sh: 100 reloads, runc and podman containers), a
# hot-plug through a reload (hotplug-systemd.sh), the step on a unit above
# the cgroup written (sd-enclosing.sh), the trace's
# revocations (revoke.sh), devcg-trace.service (trace-service.sh) and
# systemd's own programs for several DevicePolicy=/DeviceAllow= sets
# decided by devcg as by the kernel (sd-devices.sh).
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
	observe "$unit" "$unit" "$FAKEGPU" "$s0"
	during=$OP_DURING after=$OP_AFTER result=$OP_RESULT
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

# ---- allow and deny on a unit whose only program is systemd's -----------
# `devcg allow` starts from the unit's own policy (read over D-Bus): the
# pseudo devices of DevicePolicy=closed and /dev/null stay open, a second
# node of the fake major stays refused, the fake GPU opens, and a reload
# keeps it. `devcg deny` then refuses it again, and leaves the unit's
# DeviceAllow= as it was (never narrowed: devcg's program decides).
# `devcg reset` leaves it too, so the fake GPU opens again; `systemctl
# revert` drops the widening.
t0=$SECONDS
FAKEGPU1=/dev/fakegpu1
rm -f "$FAKEGPU1"
mknod -m 0666 "$FAKEGPU1" c 240 1
unit=devcg-wl-allow
# each PATH's opens in a window: KIND=N for each KIND=N given, else FAIL
expect_window() { # TEST S0 S1 PATH KIND=N|KIND>0...
	local test=$1 a=$2 b=$3 path=$4 want k v got
	shift 4
	for want; do
		if [[ $want == *'>0' ]]; then
			k=${want%>0}
			got=$(delta "$a" "$b" "$path" "$k")
			[ "$got" != 0 ] || { fail "$test" "$path: $(window "$a" "$b" "$path"), want $want"; return 1; }
		else
			k=${want%=*} v=${want#*=}
			got=$(delta "$a" "$b" "$path" "$k")
			[ "$got" = "$v" ] || { fail "$test" "$path: $(window "$a" "$b" "$path"), want $want"; return 1; }
		fi
	done
}
# the reader's window over every path, as wanted for a grant of the fake GPU
granted_window() { # TEST GRANTED(yes|no)
	local a b
	a=$(snapshot "$unit")
	wait_gens "$unit" 3
	b=$(snapshot "$unit")
	expect_window "$1" "$a" "$b" /dev/null 'ok>0' EPERM=0 &&
		expect_window "$1" "$a" "$b" /dev/zero 'ok>0' EPERM=0 &&
		expect_window "$1" "$a" "$b" "$FAKEGPU1" 'EPERM>0' ENXIO=0 &&
		if [ "$2" = yes ]; then
			expect_window "$1" "$a" "$b" "$FAKEGPU" 'ENXIO>0' EPERM=0
		else
			expect_window "$1" "$a" "$b" "$FAKEGPU" 'EPERM>0' ENXIO=0
		fi
}
if start_workload "$unit" "${UNIT_PROPS[@]}" -- /dev/null /dev/zero "$FAKEGPU" "$FAKEGPU1"; then
	cg=$(cgroup_of "$unit")
	# devcg check reads systemd's program through the unit: /dev/null
	# (c 1:3) allowed, the fake GPU refused, by systemd's program
	check_null=$(devcg check "$cg" c 1:3 rw 2>&1); st_null=$?
	check_gpu=$(devcg check "$cg" c 240:0 rw 2>&1); st_gpu=$?
	info "devcg check c 1:3 rw: $check_null (status $st_null); c 240:0 rw: $check_gpu (status $st_gpu)"
	if [ "$st_null" = 0 ] && [ "$st_gpu" = 1 ] && [[ $check_gpu == *"systemd's program"*"$unit.service"* ]]; then
		pass check_decides_by_systemds_program
	else
		fail check_decides_by_systemds_program "c 1:3: $check_null ($st_null); c 240:0: $check_gpu ($st_gpu)"
	fi
	if out=$(devcg allow "$cg" "c 240:0 rw" 2>&1) && grep -q "^systemd: $unit.service: " <<<"$out"; then
		info "devcg allow: $(tr '\n' ' ' <<<"$out")"
		info "  $(devcg show "$cg" 2>&1 | tr '\n' ' ')"
		# after the grant: allowed by both programs; the second node of
		# the major refused (the control)
		check_gpu=$(devcg check "$cg" c 240:0 rw 2>&1); st_gpu=$?
		check_gpu1=$(devcg check "$cg" c 240:1 rw 2>&1); st_gpu1=$?
		if [ "$st_gpu" = 0 ] && [ "$st_gpu1" = 1 ]; then
			pass check_after_allow_decides_both
		else
			fail check_after_allow_decides_both "c 240:0: $check_gpu ($st_gpu); c 240:1: $check_gpu1 ($st_gpu1)"
		fi
		granted_window allow_starts_from_unit_policy yes && pass allow_starts_from_unit_policy
		systemctl daemon-reload
		settle "$unit"
		wait_gens "$unit" 3
		granted_window allow_keeps_grant_through_daemon_reload yes &&
			pass allow_keeps_grant_through_daemon_reload
		before=$(systemctl show -P DeviceAllow "$unit" | sort | tr '\n' ';')
		if out=$(devcg deny "$cg" "c 240:0 rw" 2>&1); then
			after=$(systemctl show -P DeviceAllow "$unit" | sort | tr '\n' ';')
			info "devcg deny: $(tr '\n' ' ' <<<"$out"); DeviceAllow=$after"
			if granted_window deny_refuses_and_leaves_deviceallow no; then
				if [ "$before" = "$after" ] && [[ $after == */dev/char/240:0\ rw* ]]; then
					pass deny_refuses_and_leaves_deviceallow
				else
					fail deny_refuses_and_leaves_deviceallow "DeviceAllow= was $before, is $after"
				fi
			fi
			# devcg reset detaches devcg's program and nothing else: the
			# unit's widened DeviceAllow= stays, and systemd's program
			# alone now lets the fake GPU through, denied or not
			if out=$(devcg reset "$cg" 2>&1); then
				info "devcg reset: $(tr '\n' ' ' <<<"$out")"
				granted_window reset_leaves_the_widening_in_force yes &&
					pass reset_leaves_the_widening_in_force
				# systemctl revert removes the unit's runtime drop-ins
				# (/run/systemd/system.control/UNIT.d), the widening among
				# them
				out=$(systemctl revert "$unit" 2>&1)
				settle "$unit"
				wait_gens "$unit" 3
				after=$(systemctl show -P DeviceAllow "$unit" | sort | tr '\n' ';')
				info "systemctl revert $unit: $(tr '\n' ' ' <<<"$out"); DeviceAllow=$after"
				if granted_window revert_drops_the_widening no; then
					if [ "$after" = "/dev/null rw;" ]; then
						pass revert_drops_the_widening
					else
						fail revert_drops_the_widening "DeviceAllow=$after"
					fi
				fi
			else
				fail reset_leaves_the_widening_in_force "devcg reset: $out"
			fi
		else
			fail deny_refuses_and_leaves_deviceallow "devcg deny: $out"
		fi
	else
		fail allow_starts_from_unit_policy "devcg allow $cg (expected a systemd line): $out"
	fi
else
	fail allow_starts_from_unit_policy "the workload $unit did not start"
fi
stop_workload "$unit"
rm -f "$FAKEGPU1"
info "time: allow and deny: $((SECONDS - t0))s"

# ---- devcg doctor names the grant the next daemon-reload revokes ---------
# A grant made with --no-systemd (the unit's DeviceAllow= left without the
# fake GPU) is found (systemd-reload, and nothing else, exit 1); the same
# grant made with devcg's systemd step (DeviceAllow= widened) is not (exit
# 0: the control); the daemon-reload then keeps the grant.
t0=$SECONDS
unit=devcg-doctor
if start_workload "$unit" "${UNIT_PROPS[@]}" -- /dev/null "$FAKEGPU"; then
	cg=$(cgroup_of "$unit")
	if out=$(devcg replace --no-systemd "$cg" "${POLICY[@]}" 2>&1); then
		out=$(devcg doctor "$cg" "$FAKEGPU" 2>&1); st=$?
		ids=$(sed -n 's/^  \([a-z0-9-]*\): .*/\1/p' <<<"$out" | tr '\n' ' ')
		info "devcg doctor after replace --no-systemd: $(tr '\n' ' ' <<<"$out")"
		if [ "$st" = 1 ] && [ "$ids" = "systemd-reload " ] && grep -q "fix: systemctl set-property --runtime $unit.service DeviceAllow=" <<<"$out"; then
			pass doctor_finds_the_grant_a_reload_revokes
		else
			fail doctor_finds_the_grant_a_reload_revokes "exit $st, findings '$ids': $out"
		fi
		if out=$(devcg replace "$cg" "${POLICY[@]}" 2>&1); then
			out=$(devcg doctor "$cg" "$FAKEGPU" 2>&1); st=$?
			info "devcg doctor after replace (DeviceAllow= widened): $(tr '\n' ' ' <<<"$out")"
			if [ "$st" = 0 ] && grep -q '^no findings' <<<"$out"; then
				pass doctor_control_a_widened_unit_is_no_finding
			else
				fail doctor_control_a_widened_unit_is_no_finding "exit $st: $out"
			fi
		else
			fail doctor_control_a_widened_unit_is_no_finding "devcg replace $cg: $out"
		fi
	else
		fail doctor_finds_the_grant_a_reload_revokes "devcg replace --no-systemd $cg: $out"
	fi
else
	fail doctor_finds_the_grant_a_reload_revokes "the workload $unit did not start"
fi
stop_workload "$unit"
info "time: doctor: $((SECONDS - t0))s"

# ---- 100 reloads: a service, runc and podman containers -------------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/soak.sh"
info "time: the soak: $((SECONDS - t0))s"

# ---- a hot-plug survives a reload -----------------------------------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/hotplug-systemd.sh"
info "time: the hot-plug: $((SECONDS - t0))s"

# ---- the unit above crun's child "container" -------------------------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/sd-enclosing.sh"
info "time: the unit above a child: $((SECONDS - t0))s"

# ---- devcg trace names the revocations ------------------------------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/revoke.sh"
info "time: the trace: $((SECONDS - t0))s"

# ---- devcg-trace.service: the journal and the metrics file ----------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/trace-service.sh"
info "time: the trace service: $((SECONDS - t0))s"

# ---- systemd's own programs, decided by devcg as by the kernel ------------
t0=$SECONDS
. "$DEVCG_VMTEST_LIB/sd-devices.sh"
info "time: systemd's programs: $((SECONDS - t0))s"

info "time: the systemd-v2 tests: $((SECONDS - t_start))s"
summary

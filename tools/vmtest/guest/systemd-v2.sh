#!/bin/bash
# systemd-v2 guest (Debian 12, systemd 252 as PID 1, pure cgroup v2): the
# field failure. A grant made with devcg on a systemd unit's cgroup is
# undone when systemd re-applies the unit's own device program. Each test:
# a fresh transient service with DevicePolicy=closed and
# DeviceAllow=/dev/null rw runs the errno reader over /dev/null and a fake
# GPU (a node of an unregistered major: allowed -> ENXIO, refused -> EPERM);
# `devcg replace` installs the unit's whole policy plus the fake GPU; then
# one systemd operation; the reader's opens before and after tell whether
# the grant survived it.
# Run by make vmtest (or: make vmrun GUEST=systemd-v2 SCRIPT=this file).
. /usr/lib/devcg-vmtest/lib.sh

# What systemd installs for the unit (systemd.resource-control(5): closed
# allows the standard pseudo devices, plus DeviceAllow=), with the fake GPU:
# the whole policy, so plain `devcg replace` adopts systemd's program (no
# --force: the unit has exactly one device program, systemd's).
POLICY=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm' '/dev/urandom rwm'
	'/dev/null rw' "$FAKEGPU rw")
UNIT_PROPS=(DevicePolicy=closed 'DeviceAllow=/dev/null rw')

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
# words may use @UNIT@ for the unit's name
n=0
check() {
	local name=$1 expect=$2 unit cg s0 s1 s2 before after during result words=()
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
	if ! out=$(devcg replace "$cg" "${POLICY[@]}" 2>&1); then
		fail "$name" "devcg replace $cg: $out"
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
	if [ "$(delta "$s1" "$s2" "$FAKEGPU" ENXIO)" = 0 ] && [ "$(delta "$s1" "$s2" "$FAKEGPU" EPERM)" != 0 ]; then
		result=revokes
	elif [ "$(delta "$s0" "$s2" "$FAKEGPU" EPERM)" = 0 ] && [ "$(delta "$s1" "$s2" "$FAKEGPU" ENXIO)" != 0 ]; then
		result=keeps
	else
		result=mixed
	fi
	info "$name: ${words[*]}: during: $during; after: $after -> $result"
	info "  $(devcg show "$cg" 2>&1 | grep '^#' | tr '\n' ' ')"
	if [ "$result" = "$expect" ]; then
		pass "$name"
	else
		fail "$name" "the grant $result, expected: $expect (during: $during; after: $after)"
	fi
	stop_workload "$unit"
}

# the control: a query changes nothing, and the check can tell so
check show_keeps_grant keeps systemctl show @UNIT@
# what runc's systemd driver does on every `runc update`
check set_property_deviceallow_revokes_grant revokes \
	systemctl set-property --runtime @UNIT@ 'DeviceAllow=/dev/null rw'
check daemon_reload_revokes_grant revokes systemctl daemon-reload
check set_property_memorymax_revokes_grant revokes systemctl set-property --runtime @UNIT@ MemoryMax=512M
check set_property_allowedcpus_revokes_grant revokes systemctl set-property --runtime @UNIT@ AllowedCPUs=0-1
check set_property_cpuweight_revokes_grant revokes systemctl set-property --runtime @UNIT@ CPUWeight=200
check set_property_tasksmax_revokes_grant revokes systemctl set-property --runtime @UNIT@ TasksMax=4000
check set_property_ioweight_revokes_grant revokes systemctl set-property --runtime @UNIT@ IOWeight=200
check daemon_reexec_revokes_grant revokes systemctl daemon-reexec

summary

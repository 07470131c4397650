#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v1 guest (Debian 12, systemd 252 as PID 1 with
# systemd.unified_cgroup_hierarchy=0: the v1 devices controller): does
# systemd's own rewrite of a unit's device rules leave an EPERM window? A
# service with DeviceAllow=/dev/urandom r runs the errno reader over
# /dev/urandom while set-property on its devices and daemon-reloads run in
# a loop; the EPERMs it saw are counted and reported as facts.
# Run by make vmtest (or: make vmrun GUEST=systemd-v1 SCRIPT=this file).
. /usr/lib/devcg-vmtest/lib.sh

# a set-property takes about 0.2 s under TCG here, a daemon-reload about 4 s
ROUNDS=${ROUNDS:-40}
RELOADS=${RELOADS:-10}
info "systemd $(systemctl --version | sed -n '1s/^systemd //p')"

if [ -e /sys/fs/cgroup/devices/devices.list ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
	pass v1_devices_controller_mounted
else
	fail v1_devices_controller_mounted "no /sys/fs/cgroup/devices (systemd.unified_cgroup_hierarchy=0 not honoured?)"
	summary
	exit
fi

# the reader can see EPERM here: a scope whose policy lacks the fake GPU
make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
out=$(open_in_scope DevicePolicy=closed 'DeviceAllow=/dev/null r' -- "$FAKEGPU" /dev/null 2>&1)
if [ "$out" = "$FAKEGPU EPERM
/dev/null OK" ]; then pass v1_refused_open_is_eperm
else fail v1_refused_open_is_eperm "got '$out'"; fi
out=$("$READER" -1 "$FAKEGPU")
if [ "$out" = "$FAKEGPU ENXIO" ]; then pass v1_allowed_open_is_enxio
else fail v1_allowed_open_is_enxio "got '$out'"; fi

unit=devcg-v1-urandom
if ! start_workload "$unit" 'DeviceAllow=/dev/urandom r' -- /dev/urandom; then
	fail v1_workload_starts "systemd-run $unit failed"
	summary
	exit
fi
cg=/sys/fs/cgroup/devices$(systemctl show -P ControlGroup "$unit")
info "$cg/devices.list: $(tr '\n' ';' < "$cg/devices.list" 2>&1)"
s0=$(snapshot "$unit")
wait_gens "$unit" 5
s1=$(snapshot "$unit")
w=$(window "$s0" "$s1" /dev/urandom)
if [ "$(delta "$s0" "$s1" /dev/urandom ok)" != 0 ] && [ "$(delta "$s0" "$s1" /dev/urandom EPERM)" = 0 ]; then
	pass v1_reader_opens_urandom_at_rest
else
	fail v1_reader_opens_urandom_at_rest "$w"
fi

# The loops: the EPERM counts are facts, reported, not judged (how many
# opens land in systemd's deny-all-then-replay window is a race). The test
# is that the reader went on opening /dev/urandom through the loop.
loop() { # LABEL ROUNDS COMMAND...
	local label=$1 rounds=$2 i t0 a b
	shift 2
	a=$(snapshot "$unit")
	t0=$SECONDS
	for i in $(seq "$rounds"); do
		"$@" >/dev/null 2>&1 || info "$label: round $i: $* failed"
	done
	settle "$unit"
	wait_gens "$unit" 3
	b=$(snapshot "$unit")
	info "FACT v1: $rounds x $label in $((SECONDS - t0))s: /dev/urandom $(window "$a" "$b" /dev/urandom)"
	name="v1_reader_goes_on_through_${label//[^a-zA-Z0-9]/_}"
	if [ "$(delta "$a" "$b" /dev/urandom ok)" != 0 ] && systemctl -q is-active "$unit"; then
		pass "$name"
	else
		fail "$name" "$(window "$a" "$b" /dev/urandom); $unit $(systemctl is-active "$unit")"
	fi
}
loop "set-property DeviceAllow" "$ROUNDS" systemctl set-property --runtime "$unit" 'DeviceAllow=/dev/urandom r'
loop "set-property MemoryMax" "$ROUNDS" systemctl set-property --runtime "$unit" MemoryMax=512M
loop "daemon-reload" "$RELOADS" systemctl daemon-reload
info "$cg/devices.list after: $(tr '\n' ';' < "$cg/devices.list" 2>&1)"

# ---- devcg trace names systemd's rewrites as gaps -------------------------
# Under `devcg trace -j --only gap`, TRACE_ROUNDS set-property DeviceAllow=
# calls: each is one rewrite of the unit's devices.list by PID 1 ('a' to
# devices.deny, then the replay), so one gap of kind v1_deny_all by
# systemd, pid 1, with the rules replayed (the unit's one entry and the
# standard ones) and the freeze state. The EPERMs the reader met during
# them are the opens the gaps count (refusals happen only in the window).
TRACE_ROUNDS=${TRACE_ROUNDS:-10}
trace_out=/run/devcg-v1-trace.json trace_err=/run/devcg-v1-trace.err
rel=$(systemctl show -P ControlGroup "$unit")
if start_trace "$trace_out" "$trace_err" --only gap; then
	trace_pid=$TRACE_PID
	info "devcg trace: $(grep '"type":"hooks"' "$trace_out")"
	a=$(snapshot "$unit")
	for i in $(seq "$TRACE_ROUNDS"); do
		systemctl set-property --runtime "$unit" 'DeviceAllow=/dev/urandom r' || info "set-property $i failed"
	done
	settle "$unit"
	wait_gens "$unit" 3
	b=$(snapshot "$unit")
	kill -INT "$trace_pid"
	wait "$trace_pid"
	st=$?
	eperm=$(delta "$a" "$b" /dev/urandom EPERM)
	gaps=$(grep '"type":"gap"' "$trace_out" | grep -F "\"cgroup\":\"$rel\"")
	n=$(grep -c . <<<"$gaps")
	[ -n "$gaps" ] || n=0
	by_systemd=$(grep -F '"writer_pid":1,' <<<"$gaps" | grep -F '"writer_comm":"systemd"' |
		grep -F '"kind":"v1_deny_all"' | grep -c '"rules":[1-9]')
	denied=$(grep -o '"denied":[0-9]*' <<<"$gaps" | awk -F: '{s += $2} END {print s + 0}')
	lost=$(grep '"type":"summary"' "$trace_out" | grep -o '"total":[0-9]*' | head -1)
	grep -m1 . <<<"$gaps" | sed 's/^/# a gap: /'
	info "devcg trace over $TRACE_ROUNDS set-property calls: $n gap(s) on $rel, $by_systemd by systemd (pid 1) with rules replayed; $denied denied opens in them; the reader met $eperm EPERM; lost $lost; trace status $st"
	if [ "$st" = 0 ] && [ "$n" = "$TRACE_ROUNDS" ] && [ "$by_systemd" = "$n" ] && grep -q '"freeze":"' <<<"$gaps"; then
		pass v1_trace_names_each_systemd_rewrite_a_gap
	else
		fail v1_trace_names_each_systemd_rewrite_a_gap "$n gaps, $by_systemd by systemd with rules, expected $TRACE_ROUNDS; status $st: $(tr '\n' ' ' < "$trace_err")"
	fi
	if [ "$lost" = '"total":0' ] && [ "$denied" = "$eperm" ]; then
		pass v1_trace_gaps_count_the_readers_eperms
	else
		fail v1_trace_gaps_count_the_readers_eperms "gaps counted $denied denied opens, the reader met $eperm EPERM ($lost lost)"
		# each gap's width, rules and denied opens, for whoever reads why
		grep -o '"window_ns":[0-9]*,"rules":[0-9]*,"denied":[0-9]*' <<<"$gaps" | tr '\n' ' ' | sed 's/^/# the gaps: /'
		echo
	fi
else
	fail v1_trace_names_each_systemd_rewrite_a_gap "devcg trace did not start: $(tr '\n' ' ' < "$trace_err")"
fi
stop_workload "$unit"

# ---- devcg's grant on v1: no systemd step, and systemd's rewrite wins ------
# devcg keeps a unit's DeviceAllow= in step only where systemd enforces it
# with BPF programs (/sys/fs/cgroup is cgroup2). Here the unit's v1
# devices.list decides too: devcg replace on the unit's cgroup2 directory
# gives the v1 devices cgroup of its processes the same policy first (a
# hybrid host, README "On a hybrid host"), so the grant reaches the reader;
# one written to the v1 devices.list (by either) is undone by systemd's
# next rewrite of that list (a deny-all, then the unit's own list).
policy=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm' '/dev/urandom rwm'
	'/dev/null rw' "$FAKEGPU rw")
unit=devcg-v1-grant
if WORKLOAD_PAUSE=1000 start_workload "$unit" DevicePolicy=closed 'DeviceAllow=/dev/null rw' -- /dev/null "$FAKEGPU"; then
	v2cg=$(cgroup_of "$unit")
	v1cg=/sys/fs/cgroup/devices$(systemctl show -P ControlGroup "$unit")
	out=$(devcg replace "$v2cg" "${policy[@]}" 2>&1)
	st=$?
	allow=$(systemctl show -P DeviceAllow "$unit" | tr '\n' ';')
	info "devcg replace $v2cg: $(tr '\n' ' ' <<<"$out"); DeviceAllow=$allow"
	if [ "$st" = 0 ] && ! grep -q '^systemd:' <<<"$out" && [[ $allow != *240:0* ]]; then
		pass v1_replace_has_no_systemd_step
	else
		fail v1_replace_has_no_systemd_step "status $st: $out; DeviceAllow=$allow"
	fi
	s0=$(snapshot "$unit")
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	info "devices.list of $v1cg: $(tr '\n' ';' < "$v1cg/devices.list")"
	if [ "$(delta "$s0" "$s1" "$FAKEGPU" EPERM)" = 0 ] && [ "$(delta "$s0" "$s1" "$FAKEGPU" ENXIO)" != 0 ] &&
		grep -q '^c 240:0 rw$' "$v1cg/devices.list" && grep -q -- "$v1cg: devices.list set" <<<"$out"; then
		pass v1_replace_of_the_v2_cgroup_grants_on_both_layers
	else
		fail v1_replace_of_the_v2_cgroup_grants_on_both_layers "$(window "$s0" "$s1" "$FAKEGPU")"
	fi
	if out=$(devcg replace --v1 "$v1cg" "${policy[@]}" 2>&1); then
		info "devcg replace --v1 $v1cg: $out; devices.list: $(tr '\n' ';' < "$v1cg/devices.list")"
		s0=$(snapshot "$unit")
		wait_gens "$unit" 3
		s1=$(snapshot "$unit")
		if [ "$(delta "$s0" "$s1" "$FAKEGPU" EPERM)" = 0 ] && [ "$(delta "$s0" "$s1" "$FAKEGPU" ENXIO)" != 0 ]; then
			pass v1_replace_v1_grants_fakegpu
			s0=$(snapshot "$unit")
			systemctl daemon-reload
			observe "$unit" "$unit" "$FAKEGPU" "$s0"
			result=$OP_RESULT
			info "daemon-reload: after: $OP_AFTER -> $result; devices.list: $(tr '\n' ';' < "$v1cg/devices.list")"
			if [ "$result" = revokes ]; then
				pass v1_daemon_reload_revokes_devcg_v1_grant
			else
				fail v1_daemon_reload_revokes_devcg_v1_grant "the grant $result, expected: revokes"
			fi
		else
			fail v1_replace_v1_grants_fakegpu "$(window "$s0" "$s1" "$FAKEGPU")"
		fi
	else
		fail v1_replace_v1_grants_fakegpu "devcg replace --v1 $v1cg: $out"
	fi
else
	fail v1_replace_has_no_systemd_step "systemd-run $unit failed"
fi
stop_workload "$unit"

summary

#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest: a devcg grant through SOAK_RELOADS (100) daemon-reloads
# and SOAK_ROUNDS (20) rounds of set-property on each unit (DeviceAllow=
# re-sets among them, AllowedCPUs=, MemoryMax=, CPUWeight=, TasksMax=,
# IOWeight=), for a systemd-run service, runc containers (runc's systemd
# cgroup driver, devcg's hook at createRuntime) and podman containers
# (podman 4.3.1 with runc and crun, systemd's cgroup manager, the package's
# hooks.d). The workloads all run at once, each a reader of /dev/null and
# the fake GPU; with devcg's systemd step (the default) each must see zero
# EPERM on both from its grant to the end; the controls, granted the same
# way with --no-systemd, must lose the fake GPU. Before the reloads: a
# `runc update --memory` on the runc containers (what runc's systemd driver
# does: SetUnitProperties, then its own device program), and `devcg allow`
# on a runc container started without the hook.
# Sourced by systemd-v2.sh, or alone:
#   make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/guest/soak.sh
if [ -z "${DEVCG_VMTEST_LIB:-}" ]; then
	. /usr/lib/devcg-vmtest/lib.sh
	soak_alone=1
	make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
fi
SOAK_RELOADS=${SOAK_RELOADS:-100}
SOAK_ROUNDS=${SOAK_ROUNDS:-20}
SOAK_PROPS=('DeviceAllow=/dev/null rw' 'AllowedCPUs=0-1' 'MemoryMax=512M' 'CPUWeight=150' 'TasksMax=4000'
	'IOWeight=150' 'DeviceAllow=/dev/null rw' 'AllowedCPUs=0' 'MemoryMax=1G' 'CPUWeight=100')
# the unit's whole policy plus the fake GPU (as in systemd-v2.sh)
SOAK_POLICY=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm' '/dev/urandom rwm'
	'/dev/null rw' "$FAKEGPU rw")
# hooks.d: the package's hook with --annotation-allow for the fake GPU (as
# README tells an operator: a copy of the package's entry, the devices the
# annotation may add in its args); for the podman control, also --no-systemd
SOAK_HOOKS_PKG=/usr/share/containers/oci/hooks.d
SOAK_HOOKS=$CTR_DIR/hooks
SOAK_HOOKS_NOSD=$CTR_DIR/hooks-no-systemd

declare -A W_UNIT W_CG W_EXPECT W_GRANT W_STOP W_OWN
W=()

# NAME is granted the fake GPU now: the reader sees only ENXIO on it; with
# EXPECT keeps, the unit's DeviceAllow= names it (devcg's systemd step),
# with revokes it does not (--no-systemd)
soak_granted() { # NAME
	local name=$1 s0 s1 allow
	s0=$(snapshot "$name")
	wait_gens "$name" 3
	s1=$(snapshot "$name")
	allow=$(systemctl show -P DeviceAllow "${W_UNIT[$name]}" | tr '\n' ';')
	# is the grant on the unit's own cgroup?
	W_OWN[$name]=no
	[ "$(cgroup_of "${W_UNIT[$name]}")" = "${W_CG[$name]}" ] && W_OWN[$name]=yes
	info "$name: ${W_UNIT[$name]} ${W_CG[$name]}; DeviceAllow=$allow"
	if [ "$(delta "$s0" "$s1" "$FAKEGPU" EPERM)" != 0 ] || [ "$(delta "$s0" "$s1" "$FAKEGPU" ENXIO)" = 0 ]; then
		fail "soak_${name//-/_}_granted" "the reader should see only ENXIO on $FAKEGPU: $(window "$s0" "$s1" "$FAKEGPU")"
		return 1
	fi
	case ${W_EXPECT[$name]}:$allow in
	keeps:*/dev/char/240:0* | keeps:*char-240\ * | keeps:*char-\** ) ;;
	keeps:*)
		if [ "${W_OWN[$name]}" = yes ]; then
			fail "soak_${name//-/_}_granted" "the unit's DeviceAllow= does not hold the grant: $allow"
			return 1
		fi
		info "$name: the grant is on ${W_CG[$name]}, below its unit ${W_UNIT[$name]}: devcg leaves the unit's DeviceAllow= alone"
		;;
	revokes:*/dev/char/240:0*)
		fail "soak_${name//-/_}_granted" "with --no-systemd the unit's DeviceAllow= names 240:0: $allow"
		return 1
		;;
	esac
	W+=("$name")
	W_GRANT[$name]=$s1
	pass "soak_${name//-/_}_granted"
}

soak_unit() { # NAME EXPECT [REPLACE_OPTION]
	local name=$1 out
	W_EXPECT[$name]=$2 W_UNIT[$name]=$1.service W_STOP[$name]=stop_workload
	if ! WORKLOAD_PAUSE=$CTR_PAUSE start_workload "$name" DevicePolicy=closed 'DeviceAllow=/dev/null rw' -- \
		/dev/null "$FAKEGPU"; then
		fail "soak_${name//-/_}_granted" "the service did not start"
		stop_workload "$name"
		return 1
	fi
	W_CG[$name]=$(cgroup_of "$name")
	if ! out=$(devcg replace ${3:+"$3"} "${W_CG[$name]}" "${SOAK_POLICY[@]}" 2>&1); then
		fail "soak_${name//-/_}_granted" "devcg replace ${3:-} ${W_CG[$name]}: $out"
		stop_workload "$name"
		return 1
	fi
	soak_granted "$name" || { stop_workload "$name"; return 1; }
}

soak_runc() { # NAME EXPECT [HOOK_ARG]
	local name=$1
	W_EXPECT[$name]=$2 W_UNIT[$name]=devcg-$1.scope W_STOP[$name]=stop_runc
	if ! start_runc "$name" hook ${3:+"$3"}; then
		fail "soak_${name//-/_}_granted" "runc did not start the container"
		stop_runc "$name"
		return 1
	fi
	W_CG[$name]=$(cgroup_of "${W_UNIT[$name]}")
	soak_granted "$name" || { stop_runc "$name"; return 1; }
}

soak_podman() { # NAME EXPECT RUNTIME HOOKS_DIR
	local name=$1
	W_EXPECT[$name]=$2 W_STOP[$name]=stop_podman
	if ! start_podman "$name" "$3" "$4"; then
		fail "soak_${name//-/_}_granted" "podman did not start the container"
		stop_podman "$name"
		return 1
	fi
	W_UNIT[$name]=$(podman_unit "$name")
	W_CG[$name]=$(podman_cgroup "$name")
	soak_granted "$name" || { stop_podman "$name"; return 1; }
}

# what runc update does to a granted container (runc's systemd driver sets
# the scope's properties over D-Bus, systemd re-applies the scope's cgroup)
soak_runc_update() { # NAME
	local name=$1 s0 s1 s2 result want=${W_EXPECT[$1]}
	s0=$(snapshot "$name")
	if ! out=$(runc --systemd-cgroup update --memory 512M "$name" 2>&1); then
		fail "runc_update_${name//-/_}_${want}_grant" "runc update: $out"
		return
	fi
	observe "$name" "${W_UNIT[$name]}" "$FAKEGPU" "$s0"
	result=$OP_RESULT
	info "$name: runc update --memory 512M: after: $OP_AFTER -> $result"
	info "  $(devcg show "${W_CG[$name]}" 2>&1 | grep '^#' | tr '\n' ' ')"
	if [ "$result" = "$want" ]; then
		pass "runc_update_${name//-/_}_${want}_grant"
	else
		fail "runc_update_${name//-/_}_${want}_grant" "the grant $result, expected: $want"
	fi
}

t_soak=$SECONDS
make_rootfs || fail soak_rootfs "cannot make the containers' root $CTR_ROOTFS"
mkdir -p "$SOAK_HOOKS" "$SOAK_HOOKS_NOSD"
sed "s/\"--runtime\", \"auto\"/\"--runtime\", \"auto\", \"--annotation-allow\", \"$CTR_RULES\"/" \
	"$SOAK_HOOKS_PKG/devcg.json" > "$SOAK_HOOKS/devcg.json"
grep -q -- --annotation-allow "$SOAK_HOOKS/devcg.json" ||
	fail soak_hooks_d "the package's hooks.d entry has changed: no place for --annotation-allow"
sed 's/"--runtime", "auto"/"--runtime", "auto", "--no-systemd"/' "$SOAK_HOOKS/devcg.json" > "$SOAK_HOOKS_NOSD/devcg.json"
grep -q -- --no-systemd "$SOAK_HOOKS_NOSD/devcg.json" ||
	info "the package's hooks.d entry has changed: the podman control runs with the systemd step"

soak_unit soak-unit keeps
soak_unit soak-unit-nosd revokes --no-systemd
soak_runc soak-runc keeps
soak_runc soak-runc-nosd revokes --no-systemd
soak_podman soak-podman keeps runc "$SOAK_HOOKS"
soak_podman soak-podman-nosd revokes runc "$SOAK_HOOKS_NOSD"
soak_podman soak-podman-crun keeps crun "$SOAK_HOOKS"

# devcg allow on a runc container started without the hook: its scope has
# runc's own program; devcg reads its rules back and takes it over in one
# swap, no --force: the policy is runc's list and the grant, not allow-all
name=soak-runc-nohook
W_EXPECT[$name]=keeps W_UNIT[$name]=devcg-$name.scope W_STOP[$name]=stop_runc
if start_runc "$name" nohook; then
	W_CG[$name]=$(cgroup_of "${W_UNIT[$name]}")
	info "$name: $(devcg show "${W_CG[$name]}" 2>&1 | grep '^#' | tr '\n' ' ')"
	if out=$(devcg allow "${W_CG[$name]}" "c 240:0 rw" 2>&1); then
		info "$name: devcg allow: $out"
		policy=$(devcg show "${W_CG[$name]}" 2>&1 | grep -v '^#')
		info "$name: $(tr '\n' ' ' <<<"$policy")"
		# runc's tun (c 10:200) kept, the grant added, nothing widened to all
		if grep -qx 'allow c 10:200 rwm' <<<"$policy" && grep -qx 'allow c 240:0 rw' <<<"$policy" &&
			! grep -qx 'allow a' <<<"$policy" && grep -qx 'deny a' <<<"$policy"; then
			pass allow_without_hook_takes_runcs_program_over_keeping_its_rules
		else
			fail allow_without_hook_takes_runcs_program_over_keeping_its_rules "$policy"
		fi
		soak_granted "$name" || stop_runc "$name"
	else
		fail allow_without_hook_takes_runcs_program_over_keeping_its_rules "devcg allow: $out"
		fail "soak_${name//-/_}_granted" "devcg allow: $out"
		stop_runc "$name"
	fi
else
	fail "soak_${name//-/_}_granted" "runc did not start the container"
	stop_runc "$name"
fi
info "soak: ${#W[@]} workloads granted in $((SECONDS - t_soak))s: ${W[*]}"

for name in soak-runc soak-runc-nosd; do
	[ -n "${W_GRANT[$name]:-}" ] && soak_runc_update "$name"
done

declare -A W_START
for name in "${W[@]}"; do W_START[$name]=$(snapshot "$name"); done
t0=$SECONDS
round=0 every=$((SOAK_RELOADS / (SOAK_ROUNDS ? SOAK_ROUNDS : 1)))
reload_failed=0
rm -f "$CTR_DIR/failed"
for i in $(seq "$SOAK_RELOADS"); do
	systemctl daemon-reload || reload_failed=$((reload_failed + 1))
	if [ "$round" -lt "$SOAK_ROUNDS" ] && [ $((i % every)) = 0 ]; then
		prop=${SOAK_PROPS[round % ${#SOAK_PROPS[@]}]}
		# the units' set-property calls at once (systemd takes them one
		# after the other; under TCG most of each is systemctl starting)
		for name in "${W[@]}"; do
			# (not on a scope whose grant is below it: there a first
			# DeviceAllow= turns on systemd's policy for the whole scope,
			# tested on its own below)
			[ "$prop" != "${prop#DeviceAllow=}" ] && [ "${W_OWN[$name]}" = no ] && continue
			{ systemctl set-property --runtime "${W_UNIT[$name]}" "$prop" || echo "${W_UNIT[$name]} $prop" >>"$CTR_DIR/failed"; } &
		done
		wait
		round=$((round + 1))
	fi
done
t_loop=$((SECONDS - t0))
property_failed=$(cat "$CTR_DIR/failed" 2>/dev/null | wc -l)
for name in "${W[@]}"; do settle "${W_UNIT[$name]}"; done
for name in "${W[@]}"; do wait_gens "$name" 3; done
info "soak: $SOAK_RELOADS daemon-reloads and $round rounds of set-property on ${#W[@]} units in ${t_loop}s" \
	"($reload_failed reloads and $property_failed set-property calls failed)"
[ "$reload_failed" = 0 ] && [ "$property_failed" = 0 ] && pass soak_operations_succeed ||
	fail soak_operations_succeed "$reload_failed reloads and $property_failed set-property calls failed"

for name in "${W[@]}"; do
	end=$(snapshot "$name")
	gpu=$(window "${W_GRANT[$name]}" "$end" "$FAKEGPU")
	null=$(window "${W_GRANT[$name]}" "$end" /dev/null)
	last=$(sed -n "s|^$FAKEGPU last=\([^ ]*\) .*|\1|p" <<<"$end")
	want=${W_EXPECT[$name]}
	info "FACT soak: $name (${W_UNIT[$name]}), from the grant to the end: $FAKEGPU $gpu (last $last); /dev/null $null"
	test="soak_${name//-/_}_${want}_grant"
	if [ "$(delta "${W_GRANT[$name]}" "$end" /dev/null EPERM)" != 0 ]; then
		fail "$test" "EPERM on /dev/null: $null"
	elif [ "$want" = keeps ]; then
		if [ "$(delta "${W_GRANT[$name]}" "$end" "$FAKEGPU" EPERM)" = 0 ] &&
			[ "$(delta "${W_START[$name]}" "$end" "$FAKEGPU" ENXIO)" != 0 ] && [ "$last" = ENXIO ]; then
			pass "$test"
		else
			fail "$test" "$FAKEGPU: $gpu, last $last"
		fi
	elif [ "$(delta "${W_START[$name]}" "$end" "$FAKEGPU" EPERM)" != 0 ] && [ "$last" = EPERM ]; then
		pass "$test"
	else
		fail "$test" "the control kept $FAKEGPU: $gpu, last $last"
	fi
done
[ -n "${W_CG[soak-unit]:-}" ] && info "  $(devcg show "${W_CG[soak-unit]}" 2>&1 | grep '^#' | tr '\n' ' ')"

# What devcg's systemd step does not cover: crun (under podman) runs the
# container in a child "container" of the scope, where systemd attaches
# nothing, and the scope has DevicePolicy=auto and no DeviceAllow=: no
# program of systemd's applies, and reloads keep the grant without devcg's
# help. A first DeviceAllow= on the scope turns on systemd's policy for the
# scope (auto with an entry: the pseudo devices and the entries only), and
# its program applies to the child too: the grant is revoked. devcg widens
# a scope above the cgroup it writes only where systemd restricts that
# scope already (a DevicePolicy= other than auto, or a DeviceAllow=
# entry: the k8s-node guest's crun pods); it leaves an unrestricted one
# unrestricted.
name=soak-podman-crun
if [ -n "${W_GRANT[$name]:-}" ] && [ "${W_OWN[$name]}" = no ]; then
	s0=$(snapshot "$name")
	if systemctl set-property --runtime "${W_UNIT[$name]}" 'DeviceAllow=/dev/null rw'; then
		observe "$name" "${W_UNIT[$name]}" "$FAKEGPU" "$s0"
		result=$OP_RESULT
		info "$name: set-property DeviceAllow=/dev/null rw on its scope: after: $OP_AFTER -> $result"
		if [ "$result" = revokes ]; then
			pass podman_crun_scope_first_deviceallow_revokes_grant
		else
			fail podman_crun_scope_first_deviceallow_revokes_grant "the grant $result, expected: revokes"
		fi
	else
		fail podman_crun_scope_first_deviceallow_revokes_grant "set-property failed"
	fi
fi
for name in "${W[@]}"; do "${W_STOP[$name]}" "$name"; done
info "soak: $((SECONDS - t_soak))s in all"
[ -n "${soak_alone:-}" ] && summary
true

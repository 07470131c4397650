#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest: devcg's systemd step on a cgroup below a unit (crun's
# child "container" of a scope). devcg widens the unit above only when the
# cgroup's subtree is all the unit holds and systemd restricts the unit's
# devices. A transient service (Delegate=yes, as a container's scope)
# whose process moved into its child "container":
#   - DevicePolicy=closed: `devcg replace` of the child puts the fake GPU
#     into the service's DeviceAllow= (widened), and a daemon-reload then
#     keeps the GPU open in the child (systemd's program on the service
#     would refuse it otherwise: the next control);
#   - the same with a second, empty child beside "container" (the control):
#     the service is left alone (its DeviceAllow= unchanged), and the GPU
#     is refused in the child, by systemd's program on the service;
#   - DevicePolicy=auto and no DeviceAllow= (podman's crun scopes): left
#     alone, no first entry that would turn systemd's policy on.
# Sourced by systemd-v2.sh, or alone:
#   make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/guest/sd-enclosing.sh
if [ -z "${DEVCG_VMTEST_LIB:-}" ]; then
	. /usr/lib/devcg-vmtest/lib.sh
	enc_alone=1
	make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
fi

ENC_DEV=$(set -- $FAKEGPU_DEV; echo "$2:$3")

# enclosing NAME POLICY SIBLING: a service NAME with DevicePolicy=POLICY
# (closed: with DeviceAllow=/dev/null rw), its process in the child
# "container" (and an empty child "other" when SIBLING is 1); devcg replace
# of the child with the fake GPU; sets ENC_ALLOW (the service's
# DeviceAllow= after) and ENC_OPEN (what the child's open of the fake GPU
# gives after a daemon-reload)
enclosing() {
	local name=$1 policy=$2 sibling=$3 cg pid out props
	props=(-p Delegate=yes -p "DevicePolicy=$policy")
	ENC_ALLOW= ENC_OPEN=
	[ "$policy" = closed ] && props+=(-p 'DeviceAllow=/dev/null rw')
	if ! systemd-run --quiet --unit="$name" "${props[@]}" sleep 600; then
		fail "$name" "systemd-run failed"
		return 1
	fi
	cg=$(cgroup_of "$name.service") pid=$(systemctl show -P MainPID "$name.service")
	mkdir "$cg/container" && echo "$pid" > "$cg/container/cgroup.procs" || {
		fail "$name" "cannot move $pid into $cg/container"
		return 1
	}
	[ "$sibling" = 1 ] && mkdir "$cg/other"
	out=$(devcg replace "$cg/container" 'deny a' '/dev/null rwm' "$FAKEGPU rw" 2>&1)
	info "$name: devcg replace $cg/container: $(tr '\n' ' ' <<<"$out")"
	ENC_ALLOW=$(systemctl show -P DeviceAllow "$name.service" | tr '\n' ';')
	systemctl daemon-reload
	ENC_OPEN=$(bash -c 'echo $$ > "$1/cgroup.procs" && exec "$2" -1 "$3"' _ "$cg/container" "$READER" "$FAKEGPU")
	ENC_OPEN=${ENC_OPEN##* }
	info "$name: DeviceAllow=$ENC_ALLOW; after a daemon-reload the child opens $FAKEGPU: $ENC_OPEN"
}

enclosing_stop() { # NAME
	local cg
	cg=$(cgroup_of "$1.service")
	systemctl stop "$1.service" 2>/dev/null
	systemctl reset-failed "$1.service" 2>/dev/null
	rmdir "$cg/container" "$cg/other" 2>/dev/null
	return 0
}

if enclosing devcg-enc-1 closed 0; then
	if [[ $ENC_ALLOW == *"/dev/char/$ENC_DEV rw"* ]] && [ "$ENC_OPEN" = ENXIO ]; then
		pass enclosing_unit_widened_when_the_child_is_all_it_holds
	else
		fail enclosing_unit_widened_when_the_child_is_all_it_holds "DeviceAllow=$ENC_ALLOW, open: $ENC_OPEN"
	fi
fi
enclosing_stop devcg-enc-1
if enclosing devcg-enc-2 closed 1; then
	if [[ $ENC_ALLOW != *"$ENC_DEV"* ]] && [ "$ENC_OPEN" = EPERM ]; then
		pass enclosing_unit_left_alone_with_another_child
	else
		fail enclosing_unit_left_alone_with_another_child "DeviceAllow=$ENC_ALLOW, open: $ENC_OPEN"
	fi
fi
enclosing_stop devcg-enc-2
if enclosing devcg-enc-3 auto 0; then
	if [ -z "$ENC_ALLOW" ] && [ "$ENC_OPEN" = ENXIO ]; then
		pass enclosing_unit_without_device_policy_left_alone
	else
		fail enclosing_unit_without_device_policy_left_alone "DeviceAllow=$ENC_ALLOW, open: $ENC_OPEN"
	fi
fi
enclosing_stop devcg-enc-3
[ -n "${enc_alone:-}" ] && summary
true

#!/bin/sh
# The systemd guest (systemd-v2, systemd as PID 1 on pure cgroup v2): does
# `devcg trace` name systemd's re-attached device program as a revocation?
#
#   make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/systemd/revoke.sh
#
# A transient service (DevicePolicy=closed, DeviceAllow=/dev/null rw) opens
# /dev/fakegpu0 (c 240:0, no driver: ENXIO when allowed, EPERM when
# refused) and /dev/null every 100 ms. `devcg replace` puts devcg's filter,
# granting both rw, in place of systemd's program. Then, under
# `devcg trace -j --cgroup UNIT_CGROUP`, REVOKE_RELOADS (default 3)
# `systemctl daemon-reload`s and one `systemctl set-property --runtime
# UNIT DeviceAllow='/dev/null rw'`, 3 s apart. systemd re-attaches its own
# program for the unit on each (a new one in multi mode, then the previous
# one detached, both from PID 1: src/core/bpf-devices.c).
#
# Without the fix (the unit's DeviceAllow= left as it was), systemd's new
# program allows only /dev/null, so each reload and the set-property is
# one revoke, by comm systemd, refusing c 240:0. With the fix (devcg
# replace widens the unit's runtime DeviceAllow= to hold its policy), none.
# Which one is expected is read from the unit's DeviceAllow= after the
# replace (does it name 240:0 or /dev/fakegpu0?); REVOKE_EXPECT=each or
# REVOKE_EXPECT=none overrides that.
#
# Prints "ok NAME", "FAIL NAME: why", "skip NAME: why" lines and ends with
# "N passed, N failed, N skipped". DEVCG names the devcg binary.
set -u
DEVCG=${DEVCG:-devcg}
RELOADS=${REVOKE_RELOADS:-3}
UNIT=devcg-revoke-reader.service
NODE=/dev/fakegpu0
OUT=/run/devcg-revoke-trace.json
ERR=/run/devcg-revoke-trace.err
pass=0 fail=0 skip=0

ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1: $2"; fail=$((fail + 1)); }
info() { echo "# $*"; }
finish() {
	[ -n "${trace_pid:-}" ] && kill "$trace_pid" 2>/dev/null
	systemctl stop "$UNIT" 2>/dev/null
	rm -f "$NODE"
	echo "$pass passed, $fail failed, $skip skipped"
	[ "$fail" -eq 0 ]
	exit $?
}
# lines of the trace of type revoke, by systemd, refusing c 240:0
count() { grep '"type":"revoke"' "$OUT" | grep "$1" | grep -c "$2"; }

rm -f "$NODE"
if mknod -m 0666 "$NODE" c 240 0; then ok revoke_node; else bad revoke_node "mknod $NODE c 240 0 failed"; finish; fi

systemctl stop "$UNIT" 2>/dev/null
if systemd-run --quiet --unit="$UNIT" -p DevicePolicy=closed -p "DeviceAllow=/dev/null rw" \
	/bin/sh -c "while :; do cat $NODE 2>/dev/null; cat /dev/null; sleep 0.1; done"; then
	ok revoke_unit_started
else
	bad revoke_unit_started "systemd-run failed"
	finish
fi
cg=$(systemctl show -p ControlGroup --value "$UNIT")
info "unit $UNIT, cgroup $cg"
if [ -z "$cg" ] || [ ! -d "/sys/fs/cgroup$cg" ]; then
	bad revoke_unit_cgroup "no cgroup for $UNIT ('$cg')"
	finish
fi

# devcg's filter in place of systemd's program (adopted: one foreign
# program needs no --force; several would)
if "$DEVCG" replace "/sys/fs/cgroup$cg" 'deny a' 'allow /dev/null rw' "allow $NODE rw"; then
	ok revoke_devcg_replace
elif "$DEVCG" replace --force "/sys/fs/cgroup$cg" 'deny a' 'allow /dev/null rw' "allow $NODE rw"; then
	info "devcg replace needed --force (more than one device program on the unit's cgroup)"
	ok revoke_devcg_replace
else
	bad revoke_devcg_replace "devcg replace failed"
	finish
fi
"$DEVCG" show "/sys/fs/cgroup$cg" | sed 's/^/# /'
if "$DEVCG" check "/sys/fs/cgroup$cg" c 240:0 r >/dev/null; then
	ok revoke_devcg_grants_the_node
else
	bad revoke_devcg_grants_the_node "devcg check says c 240:0 r is refused"
fi

allow=$(systemctl show -p DeviceAllow --value "$UNIT")
info "DeviceAllow= after the replace: $allow"
expect=${REVOKE_EXPECT:-}
if [ -z "$expect" ]; then
	case $allow in
	*240:0* | *fakegpu0* | *char-240*) expect=none ;;
	*) expect=each ;;
	esac
fi
case $expect in
none) want=0 ;;
each) want=$((RELOADS + 1)) ;;
*) bad revoke_expect "REVOKE_EXPECT is each or none, not $expect"; finish ;;
esac
info "expecting $want revoke(s) by systemd ($expect)"

"$DEVCG" trace -j --cgroup "$cg" >"$OUT" 2>"$ERR" &
trace_pid=$!
i=0
while ! grep -q '"type":"hooks"' "$OUT" 2>/dev/null; do
	i=$((i + 1))
	if [ "$i" -gt 300 ] || ! kill -0 "$trace_pid" 2>/dev/null; then
		bad revoke_trace_started "devcg trace did not start: $(cat "$ERR")"
		trace_pid=
		finish
	fi
	sleep 0.1
done
ok revoke_trace_started
sleep 3 # the reader's opens under devcg's filter alone: nothing to name

i=0
while [ "$i" -lt "$RELOADS" ]; do
	i=$((i + 1))
	systemctl daemon-reload || bad revoke_daemon_reload "systemctl daemon-reload failed"
	sleep 3 # the reader opens the node about 30 times
done
systemctl set-property --runtime "$UNIT" "DeviceAllow=/dev/null rw" ||
	bad revoke_set_property "systemctl set-property failed"
sleep 3

kill -INT "$trace_pid"
wait "$trace_pid"
status=$?
trace_pid=
if [ "$status" -eq 0 ] && grep -q '"type":"summary"' "$OUT"; then
	ok revoke_trace_ended
else
	bad revoke_trace_ended "devcg trace exited with $status: $(cat "$ERR")"
fi
grep '"type":"revoke"' "$OUT" | sed 's/^/# /'
grep '"type":"summary"' "$OUT" | sed 's/^/# /'

got=$(count '"writer_comm":"systemd"' '"dev":"c 240:0"')
all=$(grep -c '"type":"revoke"' "$OUT")
if [ "$got" -eq "$want" ]; then
	ok revoke_one_per_reload_by_systemd
else
	bad revoke_one_per_reload_by_systemd "$got revoke(s) by systemd refusing c 240:0, expected $want ($expect)"
fi
if [ "$all" -eq "$got" ]; then
	ok revoke_none_by_others
else
	bad revoke_none_by_others "$all revoke(s) in all, $got of them by systemd refusing c 240:0"
fi
finish

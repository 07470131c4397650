#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# systemd-v2 guest: two ways of keeping systemd from narrowing devcg's
# policy on a unit's cgroup, measured side by side (issue 13).
#
#  (b)  what devcg does: `devcg replace` swaps devcg's program in and widens
#       the unit's runtime DeviceAllow= over D-Bus (user/lib/live/systemd.c);
#       systemd's own program stays attached beside it.
#  (a1) devcg's program handed to systemd after devcg attached it:
#       `devcg replace --no-systemd` (takes the place of systemd's program),
#       `bpftool prog pin`, then BPFProgram=device:PIN with systemd's own
#       list emptied (DevicePolicy=auto, DeviceAllow= reset, so that it
#       attaches no program of its own): with `systemctl set-property
#       --runtime` where systemd takes BPFProgram= at runtime; systemd 252
#       refuses it ("Cannot set property BPFProgram"), so there the three
#       go into a runtime drop-in (/run/systemd/system.control/UNIT.d/,
#       never /etc) that a daemon-reload loads.
#  (a2) the same program handed to systemd alone, so that systemd is the
#       one that attaches it: built on a scratch unit, pinned, the scratch
#       unit stopped (its cgroup goes, the pin keeps the program); then the
#       same set-property, or on 252 the unit started with
#       -p BPFProgram=device:PIN -p DevicePolicy=auto.
#
# Each workload is a transient service (DevicePolicy=closed, DeviceAllow=
# /dev/null rw) running the errno reader over /dev/null, the fake GPU
# /dev/fakegpu0 (c 240:0, granted: ENXIO) and /dev/fakegpu1 (c 240:1,
# refused by devcg's policy: EPERM). For each operation (daemon-reload,
# set-property DeviceAllow=/dev/null rw as runc's systemd driver sends it,
# set-property MemoryMax=, daemon-reexec) one fresh unit per way; then the
# operation; the reader's counts from just before it to a while after say
#   - whether the grant stays (no EPERM on fakegpu0),
#   - whether the policy stays devcg's (fakegpu1 never ENXIO: an ENXIO there
#     is an open no program refused, i.e. devcg's program was detached),
# and `devcg trace` (running throughout) lists what systemd did to the
# unit's device programs (prog_attach/prog_detach, their results), gaps and
# revocations. bpftool lists the programs attached after each step.
#
# Run: make vmrun GUEST=systemd-v2 SCRIPT=tools/vmtest/guest/bpfprogram.sh
. /usr/lib/devcg-vmtest/lib.sh

FAKEGPU1=/dev/fakegpu1
POLICY=('deny a' '/dev/null rwm' '/dev/zero rwm' '/dev/full rwm' '/dev/random rwm' '/dev/urandom rwm'
	'/dev/null rw' "$FAKEGPU rw")
UNIT_PROPS=(DevicePolicy=closed 'DeviceAllow=/dev/null rw')
PINDIR=/sys/fs/bpf/devcg-vmtest
TRACE_OUT=/run/devcg-bpfprogram-trace.json
TRACE_ERR=/run/devcg-bpfprogram-trace.err
RESULTS=/run/devcg-bpfprogram-results
# 10 ms between the reader's rounds: three readers and devcg trace beside
# systemd under TCG; a detached program for the length of a reload (about
# a second) still shows as dozens of opens
WORKLOAD_PAUSE=10000
WAYS="b a1 a2"
t_start=$SECONDS

info "systemd $(systemctl --version | sed -n '1s/^systemd //p'), Linux $(uname -r)"
info "devcg $(devcg --version 2>&1 | head -n1)"
make_fakegpu || { fail fakegpu_mknod "mknod $FAKEGPU $FAKEGPU_DEV failed"; summary; exit; }
rm -f "$FAKEGPU1"
mknod -m 0666 "$FAKEGPU1" c 240 1 || { fail fakegpu_mknod "mknod $FAKEGPU1 failed"; summary; exit; }
: > "$RESULTS"

if ! command -v bpftool >/dev/null; then
	skip bpfprogram "no bpftool in the guest (tools/vmtest/mkroot.sh installs it)"
	summary
	exit
fi
info "$(bpftool version 2>&1 | head -n1)"
if ! mountpoint -q /sys/fs/bpf; then
	mount -t bpf bpf /sys/fs/bpf || { fail bpffs "cannot mount bpffs on /sys/fs/bpf"; summary; exit; }
	info "mounted bpffs on /sys/fs/bpf"
fi
mkdir -p "$PINDIR"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# the device programs attached to CGROUP: "ID(name) ..."
progs_of() { # CGROUP
	bpftool -j cgroup show "$1" 2>/dev/null | tr '{' '\n' |
		sed -n -e 's/.*"id":\([0-9]*\).*"attach_type":"[a-z_]*device".*"name":"\([^"]*\)".*/\1(\2)/p' -e t \
			-e 's/.*"id":\([0-9]*\).*"attach_type":"[a-z_]*device".*/\1/p' | tr '\n' ' '
}
prog_ids_of() { # CGROUP
	progs_of "$1" | sed 's/([^)]*)//g'
}

# ---- the trace: every bpf(2) change of a device program under system.slice
if start_trace "$TRACE_OUT" "$TRACE_ERR" --cgroup /system.slice; then
	trace_pid=$TRACE_PID
	pass trace_started
else
	trace_pid=
	fail trace_started "devcg trace did not start: $(tr '\n' ' ' < "$TRACE_ERR")"
fi

# the trace's lines about the cgroup REL from line FROM on, one word each:
# bpf changes as COMM:OP[flags](prog ids)=RET, gaps and revocations as
# GAP/REVOKE:WRITER
trace_since() { # REL FROM
	sleep 0.3 # what the trace has read, written
	tail -n "+$2" "$TRACE_OUT" | grep -F "\"cgroup\":\"$1\"" | sed -n \
		-e 's/.*"type":"bpf_prog_change".*"comm":"\([^"]*\)".*"op":"prog_\([^"]*\)","flags":\[\([^]]*\)\],"prog_ids":\[\([^]]*\)\].*"ret":\(-\{0,1\}[0-9]*\).*/\1:\2[\3](\4)=\5/p' \
		-e 's/.*"type":"gap".*"writer_comm":"\([^"]*\)".*/GAP:\1/p' \
		-e 's/.*"type":"revoke".*"writer_comm":"\([^"]*\)".*/REVOKE:\1/p' | tr -d '"' | tr '\n' ' '
}
trace_mark() {
	sleep 0.3
	echo $(($(wc -l < "$TRACE_OUT") + 1))
}

# ---- BPFProgram= at runtime: does set-property take it on this systemd? --
# (a probe on a unit of its own: an unknown property is refused before
# anything is changed)
probe=devcg-bp-probe
A2_VIA=set-property
if start_workload "$probe" -- /dev/null; then
	if out=$(systemctl set-property --runtime "$probe" "BPFProgram=device:$PINDIR/none" 2>&1); then
		info "set-property --runtime BPFProgram= accepted (a path that does not exist: $(systemctl show -P BPFProgram "$probe"))"
	else
		info "set-property --runtime BPFProgram= refused: $out"
		info "so (a1) hands the program over with a runtime drop-in and a daemon-reload, (a2) starts its units with BPFProgram="
		A2_VIA=start
	fi
fi
stop_workload "$probe"

# ---- the ways' setups ----------------------------------------------------
# Each sets SETUP_MS (and SETUP_DETAIL) and PROG (devcg's program id), or
# returns 1 with WHY.

# (b): devcg's systemd step
setup_b() { # UNIT CGROUP
	local t0 out
	t0=$(now_ms)
	out=$(devcg replace "$2" "${POLICY[@]}" 2>&1) || { WHY="devcg replace: $out"; return 1; }
	SETUP_MS=$(($(now_ms) - t0))
	SETUP_DETAIL="devcg replace $SETUP_MS ms"
	PROG=$(devcg show "$2" 2>/dev/null | sed -n 's/.*: devcg program \([0-9]*\),.*/\1/p')
	info "  b: $(grep '^systemd:' <<<"$out")"
}

# (a1): devcg attaches, then hands its program to systemd. systemd 252's
# set-property refuses BPFProgram= (the probe above), so when it does the
# property goes into a runtime drop-in (/run, never /etc) with the emptied
# device list, and a daemon-reload makes systemd load it.
setup_a1() { # UNIT CGROUP
	local t0 t1 t2 out dropin=/run/systemd/system.control/$1.service.d
	t0=$(now_ms)
	out=$(devcg replace --no-systemd "$2" "${POLICY[@]}" 2>&1) || { WHY="devcg replace --no-systemd: $out"; return 1; }
	t1=$(now_ms)
	PROG=$(devcg show "$2" 2>/dev/null | sed -n 's/.*: devcg program \([0-9]*\),.*/\1/p')
	[ -n "$PROG" ] || { WHY="no devcg program after replace: $(devcg show "$2" 2>&1 | tr '\n' ' ')"; return 1; }
	out=$(bpftool prog pin id "$PROG" "$PINDIR/$1" 2>&1) || { WHY="bpftool prog pin id $PROG: $out"; return 1; }
	if [ "$A2_VIA" = set-property ]; then
		out=$(systemctl set-property --runtime "$1" "BPFProgram=device:$PINDIR/$1" DevicePolicy=auto DeviceAllow= 2>&1) ||
			{ WHY="set-property BPFProgram=: $out"; return 1; }
		SETUP_DETAIL="pin and set-property"
	else
		mkdir -p "$dropin"
		printf '[Service]\nDevicePolicy=auto\nDeviceAllow=\nBPFProgram=device:%s\n' "$PINDIR/$1" > "$dropin/60-devcg-bpfprogram.conf"
		out=$(systemctl daemon-reload 2>&1) || { WHY="daemon-reload: $out"; return 1; }
		SETUP_DETAIL="pin, runtime drop-in and daemon-reload"
	fi
	settle "$1"
	t2=$(now_ms)
	SETUP_MS=$((t2 - t0))
	SETUP_DETAIL="devcg replace --no-systemd $((t1 - t0)) ms + $SETUP_DETAIL $((t2 - t1)) ms"
}

# (a2): the program built on a scratch unit, pinned, handed to systemd alone
build_pinned() { # PIN -> PROG, BUILD_MS
	local scratch=devcg-bp-build out cg t0
	systemd-run --quiet --unit="$scratch" sleep infinity || { WHY="scratch unit did not start"; return 1; }
	cg=$(cgroup_of "$scratch")
	t0=$(now_ms)
	out=$(devcg replace --no-systemd "$cg" "${POLICY[@]}" 2>&1) || { WHY="devcg replace on $cg: $out"; stop_workload "$scratch"; return 1; }
	PROG=$(devcg show "$cg" 2>/dev/null | sed -n 's/.*: devcg program \([0-9]*\),.*/\1/p')
	out=$(bpftool prog pin id "$PROG" "$1" 2>&1) || { WHY="bpftool prog pin id $PROG: $out"; stop_workload "$scratch"; return 1; }
	BUILD_MS=$(($(now_ms) - t0))
	stop_workload "$scratch"
}
setup_a2() { # UNIT CGROUP
	local t0 t1 out
	[ "$A2_VIA" = set-property ] || { WHY="(started with BPFProgram=)"; return 1; }
	build_pinned "$PINDIR/$1" || return 1
	t0=$(now_ms)
	out=$(systemctl set-property --runtime "$1" "BPFProgram=device:$PINDIR/$1" DevicePolicy=auto DeviceAllow= 2>&1) ||
		{ WHY="set-property BPFProgram=: $out"; return 1; }
	settle "$1"
	t1=$(now_ms)
	SETUP_MS=$((BUILD_MS + t1 - t0))
	SETUP_DETAIL="devcg replace on a scratch unit and pin $BUILD_MS ms + set-property $((t1 - t0)) ms"
}

# the reader's window over the three nodes, as one line
counts() { # S0 S1
	echo "fakegpu0 $(window "$1" "$2" "$FAKEGPU"); fakegpu1 $(window "$1" "$2" "$FAKEGPU1"); null $(window "$1" "$2" /dev/null)"
}
# the grant in force and the policy exactly devcg's, over a window
exact() { # S0 S1
	[ "$(delta "$1" "$2" "$FAKEGPU" EPERM)" = 0 ] && [ "$(delta "$1" "$2" "$FAKEGPU" ENXIO)" != 0 ] &&
		[ "$(delta "$1" "$2" "$FAKEGPU1" ENXIO)" = 0 ] && [ "$(delta "$1" "$2" "$FAKEGPU1" EPERM)" != 0 ] &&
		[ "$(delta "$1" "$2" /dev/null EPERM)" = 0 ]
}

# start UNIT for WAY and grant the fake GPU that way; sets CG, REL, PROG,
# SETUP_MS; 1 on failure (reported)
prepare() { # WAY UNIT OPNAME
	local way=$1 unit=$2 s0 s1 s2 props=("${UNIT_PROPS[@]}")
	if [ "$way" = a2 ] && [ "$A2_VIA" = start ]; then
		build_pinned "$PINDIR/$unit" || { fail "${way}_${3}_setup" "$WHY"; return 1; }
		props=(DevicePolicy=auto "BPFProgram=device:$PINDIR/$unit")
		SETUP_MS=$BUILD_MS SETUP_DETAIL="devcg replace on a scratch unit and pin $BUILD_MS ms, unit started with BPFProgram="
	fi
	if ! start_workload "$unit" "${props[@]}" -- /dev/null "$FAKEGPU" "$FAKEGPU1"; then
		fail "${way}_${3}_setup" "the workload $unit did not start"
		return 1
	fi
	CG=$(cgroup_of "$unit")
	REL=${CG#/sys/fs/cgroup}
	s0=$(snapshot "$unit")
	if ! { [ "$way" = a2 ] && [ "$A2_VIA" = start ]; }; then
		wait_gens "$unit" 3
		s1=$(snapshot "$unit")
		if [ "$(delta "$s0" "$s1" "$FAKEGPU" ENXIO)" != 0 ]; then
			fail "${way}_${3}_setup" "before the grant the fake GPU opened: $(counts "$s0" "$s1")"
			return 1
		fi
		WHY=
		if ! "setup_$way" "$unit" "$CG"; then
			fail "${way}_${3}_setup" "$WHY"
			return 1
		fi
	fi
	wait_gens "$unit" 3
	s1=$(snapshot "$unit")
	wait_gens "$unit" 5
	s2=$(snapshot "$unit")
	info "  $way $unit: setup $SETUP_MS ms ($SETUP_DETAIL); during it: $(counts "$s0" "$s1")"
	info "  $way $unit: programs $(progs_of "$CG"); DevicePolicy=$(systemctl show -P DevicePolicy "$unit") DeviceAllow=$(systemctl show -P DeviceAllow "$unit" | tr '\n' ';') BPFProgram=$(systemctl show -P BPFProgram "$unit" | tr '\n' ';')"
	if ! exact "$s1" "$s2"; then
		fail "${way}_${3}_setup" "after the setup the reader should see fakegpu0 ENXIO only, fakegpu1 EPERM only: $(counts "$s1" "$s2")"
		return 1
	fi
	case $way in
	a1 | a2)
		# what systemd said about the program it was handed
		info "  $way $unit: journal: $(journalctl -b -q -o cat -u "$unit" 2>/dev/null | grep -i 'bpf' | tail -n 3 | tr '\n' ';')"
		# systemd's list emptied: devcg's program alone on the cgroup
		if [ "$(prog_ids_of "$CG")" != "$PROG " ]; then
			fail "${way}_${3}_setup" "programs on $CG: $(progs_of "$CG"), want devcg's $PROG alone"
			return 1
		fi ;;
	esac
	echo "setup $way $SETUP_MS" >> "$RESULTS"
}

# ---- the operations ------------------------------------------------------
# Each on one fresh unit per way. The operation's words may use @UNIT@:
# such an operation runs once per unit, each in turn; the others run once.
run_op() { # OPNAME WORD...
	local opname=$1 way unit w words mark t0 ms s0 s1 s2 c after progs ids tr result verdict want
	local -A units cgs rels progs_of_way snap0
	shift
	info "== $opname: $*"
	for way in $WAYS; do
		unit=devcg-bp-$way-$opname
		if prepare "$way" "$unit" "$opname"; then
			units[$way]=$unit cgs[$way]=$CG rels[$way]=$REL progs_of_way[$way]=$PROG
		else
			stop_workload "$unit"
		fi
	done
	mark=$(trace_mark)
	for way in "${!units[@]}"; do snap0[$way]=$(snapshot "${units[$way]}"); done
	t0=$(now_ms)
	if [[ "$*" == *@UNIT@* ]]; then
		for way in $WAYS; do
			[ -n "${units[$way]:-}" ] || continue
			words=()
			for w in "$@"; do words+=("${w//@UNIT@/${units[$way]}}"); done
			"${words[@]}" >/dev/null 2>&1 || fail "${way}_${opname}" "${words[*]} failed"
			settle "${units[$way]}"
		done
	else
		"$@" >/dev/null 2>&1 || fail "$opname" "$* failed"
	fi
	ms=$(($(now_ms) - t0))
	for way in $WAYS; do
		unit=${units[$way]:-}
		[ -n "$unit" ] || continue
		settle "$unit"
		wait_gens "$unit" 3
		s1=$(snapshot "$unit")
		wait_gens "$unit" 5
		s2=$(snapshot "$unit")
		s0=${snap0[$way]}
		c=$(counts "$s0" "$s2")
		progs=$(progs_of "${cgs[$way]}")
		ids=$(prog_ids_of "${cgs[$way]}")
		tr=$(trace_since "${rels[$way]}" "$mark")
		# the grant: no EPERM on fakegpu0 from the operation on, ENXIO after it
		if [ "$(delta "$s0" "$s2" "$FAKEGPU" EPERM)" = 0 ] && [ "$(delta "$s1" "$s2" "$FAKEGPU" ENXIO)" != 0 ]; then
			result=keeps
		elif [ "$(delta "$s1" "$s2" "$FAKEGPU" ENXIO)" = 0 ] && [ "$(delta "$s1" "$s2" "$FAKEGPU" EPERM)" != 0 ]; then
			result=revokes
		else
			result=mixed
		fi
		# the policy: fakegpu1 refused throughout (ENXIO there: no program
		# refused it, devcg's was not attached)
		if [ "$(delta "$s0" "$s2" "$FAKEGPU1" ENXIO)" = 0 ]; then after=exact; else after=unfiltered; fi
		[[ " $ids" == *" ${progs_of_way[$way]} "* ]] || after="$after, devcg's program gone"
		info "  $way: $result, $after; $c; programs after: $progs; systemd and devcg on the cgroup: ${tr:-none}"
		verdict=$result
		if [ "$result" = keeps ]; then
			if [ "$after" != exact ] || grep -q 'systemd:detach[^ ]*(\([0-9]*,\)*'"${progs_of_way[$way]}"'[,)][^ ]*=0' <<<"$tr"; then
				verdict=detaches
			fi
		fi
		echo "op $opname $way $verdict $(delta "$s0" "$s2" "$FAKEGPU" EPERM) $(delta "$s0" "$s2" "$FAKEGPU1" ENXIO) $(wc -w <<<"$ids") $(grep -o 'systemd:detach[^ ]*(\([0-9]*,\)*'"${progs_of_way[$way]}"'[,)][^ ]*=0' <<<"$tr" | wc -l) $(grep -o 'GAP:[^ ]*' <<<"$tr" | wc -l) $(grep -o 'REVOKE:[^ ]*' <<<"$tr" | wc -l) $ms" >> "$RESULTS"
		want=${EXPECT[$way $opname]}
		if [ "$verdict" = "$want" ]; then
			pass "${way}_${opname}_${want}"
		else
			fail "${way}_${opname}_${want}" "measured: $verdict ($result, $after; $c; trace: ${tr:-none})"
		fi
		stop_workload "$unit"
		rm -f "$PINDIR/$unit"
		rm -rf "/run/systemd/system.control/$unit.service.d"
	done
}

# What each way does, as measured on systemd 252 (README.md, "devcg and
# systemd"): keeps (the grant and exactly devcg's policy throughout),
# revokes (systemd's own program refuses the grant from then on), detaches
# (systemd detaches devcg's program and attaches it again: for a moment the
# unit has no device filter at all). In (a1) systemd's own attach of the
# program fails (EINVAL: the kernel takes a program once per cgroup in
# multi mode; the journal says "Attaching foreign BPF program ... failed"),
# so devcg's attachment is the one in force and systemd never detaches it;
# in (a2) systemd owns the attachment and drops it on reload and re-exec.
declare -A EXPECT=(
	[b daemon-reload]=keeps [a1 daemon-reload]=keeps [a2 daemon-reload]=detaches
	[b set-property-deviceallow]=keeps [a1 set-property-deviceallow]=revokes [a2 set-property-deviceallow]=revokes
	[b set-property-memorymax]=keeps [a1 set-property-memorymax]=keeps [a2 set-property-memorymax]=keeps
	[b daemon-reexec]=keeps [a1 daemon-reexec]=keeps [a2 daemon-reexec]=detaches
)
t0=$SECONDS
run_op daemon-reload systemctl daemon-reload
run_op set-property-deviceallow systemctl set-property --runtime @UNIT@ 'DeviceAllow=/dev/null rw'
run_op set-property-memorymax systemctl set-property --runtime @UNIT@ MemoryMax=512M
run_op daemon-reexec systemctl daemon-reexec
info "time: the operations: $((SECONDS - t0))s"

if [ -n "$trace_pid" ]; then
	kill -INT "$trace_pid"
	wait "$trace_pid"
	grep '"type":"summary"' "$TRACE_OUT" | sed 's/^/# trace: /'
fi

# ---- the table -------------------------------------------------------------
info "results (op way verdict fakegpu0-EPERM fakegpu1-ENXIO programs-after systemd-detached-devcg gaps revokes op-ms):"
sed 's/^/#   /' "$RESULTS"
for way in $WAYS; do
	info "setup $way: $(awk -v w="$way" '$1 == "setup" && $2 == w { printf "%s ", $3 }' "$RESULTS")ms"
done
info "time: bpfprogram.sh: $((SECONDS - t_start))s"
rm -f "$FAKEGPU1"
rmdir "$PINDIR" 2>/dev/null
summary

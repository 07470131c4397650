# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# Helpers of the systemd guests' test scripts (bash), installed in the
# guest as /usr/lib/devcg-vmtest/lib.sh. A test prints one line, "PASS name",
# "FAIL name: why" or "SKIP name: why"; facts and context are "# ..." lines;
# `summary` prints "N passed, N failed, N skipped" and returns non-zero on a
# failure.
#
# Workloads are transient services (systemd-run) running the errno reader
# over device nodes; its state file says how its opens ended, by errno
# (errno-reader.c). A window of the reader is the difference between two
# snapshots of that file.

DEVCG_VMTEST_LIB=/usr/lib/devcg-vmtest
READER=$DEVCG_VMTEST_LIB/devcg-errno-reader
FAKEGPU=/dev/fakegpu0
# an unregistered major (240-254: local/experimental use, Documentation/
# admin-guide/devices.txt): an allowed open fails with ENXIO, a refused one
# with EPERM (errno-reader.c)
FAKEGPU_DEV="c 240 0"

npass=0 nfail=0 nskip=0
pass() { npass=$((npass + 1)); echo "PASS $1"; }
fail() { nfail=$((nfail + 1)); echo "FAIL $1: $2"; }
skip() { nskip=$((nskip + 1)); echo "SKIP $1: $2"; }
info() { echo "# $*"; }
summary() {
	echo "$npass passed, $nfail failed, $nskip skipped"
	[ "$nfail" = 0 ]
}

make_fakegpu() {
	rm -f "$FAKEGPU"
	mknod "$FAKEGPU" $FAKEGPU_DEV && chmod 0666 "$FAKEGPU"
}

# one open of each PATH by the reader in a transient scope with PROPERTY...
# (systemd-run --scope), printing "PATH ERRNO" lines
open_in_scope() { # PROPERTY... -- PATH...
	local props=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		props+=(-p "$1")
		shift
	done
	shift
	systemd-run --quiet --scope "${props[@]}" "$READER" -1 "$@"
}

# start UNIT (a transient service) running the reader over PATH...;
# PROPERTY arguments go to systemd-run as -p; waits until the reader has
# written its state twice. With WORKLOAD_PAUSE set, the reader sleeps that
# many microseconds between rounds (errno-reader.c -p).
start_workload() { # UNIT PROPERTY... -- PATH...
	local unit=$1 props=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		props+=(-p "$1")
		shift
	done
	shift
	rm -f "/run/$unit.state"
	systemd-run --quiet --unit="$unit" "${props[@]}" "$READER" ${WORKLOAD_PAUSE:+-p "$WORKLOAD_PAUSE"} \
		"/run/$unit.state" "$@" || return 1
	wait_gens "$unit" 2
}

stop_workload() { # UNIT
	systemctl stop "$1" 2>/dev/null
	systemctl reset-failed "$1" 2>/dev/null
	rm -f "/run/$1.state"
	return 0
}

# the unit's cgroup directory
cgroup_of() { # UNIT
	local cg
	cg=$(systemctl show -P ControlGroup "$1") || return 1
	[ -n "$cg" ] || return 1
	if [ -e /sys/fs/cgroup/cgroup.controllers ]; then
		echo "/sys/fs/cgroup$cg"
	else
		echo "/sys/fs/cgroup/unified$cg"
	fi
}

gen_of() { # UNIT
	sed -n 's/^gen //p' "/run/$1.state" 2>/dev/null
}

# wait until the reader has written its state N more times (it writes about
# every 20 ms of its own time); 1 if it stopped writing for 60 s
wait_gens() { # UNIT N
	local unit=$1 n=$2 start now deadline
	start=$(gen_of "$unit")
	start=${start:-0}
	deadline=$((SECONDS + 60))
	while :; do
		now=$(gen_of "$unit")
		[ -n "$now" ] && [ "$now" -ge $((start + n)) ] && return 0
		[ $SECONDS -lt $deadline ] || return 1
		sleep 0.05
	done
}

snapshot() { # UNIT -> the state file's content
	cat "/run/$1.state"
}

# KIND's count (ok, EPERM, ENXIO, ENOENT, other) for PATH between two
# snapshots
delta() { # OLD NEW PATH KIND
	window "$1" "$2" "$3" | tr ' ' '\n' | sed -n "s/^$4=//p"
}

# a one-line account of a window: "ok=N EPERM=N ENXIO=N ENOENT=N other=N"
window() { # OLD NEW PATH
	printf '%s\n--\n%s\n' "$1" "$2" | awk -v p="$3" -v new=0 '
		$0 == "--" { new = 1; next }
		$1 == p { for (i = 3; i <= NF; i++) { split($i, kv, "="); c[new, kv[1]] = kv[2] } }
		END { printf "ok=%d EPERM=%d ENXIO=%d ENOENT=%d other=%d\n",
			c[1, "ok"] - c[0, "ok"], c[1, "EPERM"] - c[0, "EPERM"], c[1, "ENXIO"] - c[0, "ENXIO"],
			c[1, "ENOENT"] - c[0, "ENOENT"], c[1, "other"] - c[0, "other"] }'
}

# How a grant of PATH (the fake GPU) fared over an operation, from three
# snapshots: S0 before it, S1 a few generations after it, S2 later:
# "revokes" (from S1 on only EPERM), "keeps" (no EPERM from S0 to S2, and
# ENXIO from S1 on) or "mixed"
outcome() { # S0 S1 S2 PATH
	if [ "$(delta "$2" "$3" "$4" ENXIO)" = 0 ] && [ "$(delta "$2" "$3" "$4" EPERM)" != 0 ]; then
		echo revokes
	elif [ "$(delta "$1" "$3" "$4" EPERM)" = 0 ] && [ "$(delta "$2" "$3" "$4" ENXIO)" != 0 ]; then
		echo keeps
	else
		echo mixed
	fi
}

# What an operation did to a grant: S0 is the reader's snapshot from just
# before it. Waits for the unit's realization and the reader's next rounds;
# sets OP_DURING (the reader's opens of PATH until then), OP_AFTER (in the
# five rounds after) and OP_RESULT (outcome).
observe() { # NAME UNIT PATH S0
	local s1 s2
	settle "$2"
	wait_gens "$1" 3
	s1=$(snapshot "$1")
	wait_gens "$1" 5
	s2=$(snapshot "$1")
	OP_DURING=$(window "$4" "$s1" "$3")
	OP_AFTER=$(window "$s1" "$s2" "$3")
	OP_RESULT=$(outcome "$4" "$s1" "$s2" "$3")
}

# Start `devcg trace -j ARGS...` in the background (its lines in OUT, its
# standard error in ERR; TRACE_PID its pid) and wait for its first line,
# the hooks it chose: 0 then, 1 if it exited or took a minute (stopped).
start_trace() { # OUT ERR ARGS...
	local out=$1 err=$2 i=0
	shift 2
	devcg trace -j "$@" >"$out" 2>"$err" &
	TRACE_PID=$!
	while ! grep -q '"type":"hooks"' "$out" 2>/dev/null; do
		i=$((i + 1))
		if [ "$i" -gt 600 ] || ! kill -0 "$TRACE_PID" 2>/dev/null; then
			kill -INT "$TRACE_PID" 2>/dev/null
			sleep 2
			kill -KILL "$TRACE_PID" 2>/dev/null
			wait "$TRACE_PID" 2>/dev/null
			return 1
		fi
		sleep 0.1
	done
}

# a round trip to PID 1: the cgroup realization a set-property queues runs
# from the manager's loop (src/core/manager.c, manager_loop()) before the
# next bus message is read, so it is done by the time this is answered
settle() { # UNIT
	systemctl show -P ActiveState "$1" >/dev/null
}

# ---- containers: runc and podman with a busybox root -------------------
# Their process is the (static) errno reader over /dev/null and the fake
# GPU, pausing CTR_PAUSE us between rounds (100 ms: several readers at
# once, each busy, made a daemon-reload take 10-20 s under TCG instead of
# 1-2 s; ten rounds a second still see a revocation within 0.1 s, and a
# revocation lasts until the next change); its state file is on a bind
# mount of CTR_STATE, and /run/NAME.state links to it, so that the helpers
# above (wait_gens, snapshot) work on a container NAME as on a unit.
CTR_DIR=/run/devcg-ctr
CTR_ROOTFS=$CTR_DIR/rootfs
CTR_STATE=$CTR_DIR/state
CTR_PAUSE=${CTR_PAUSE:-100000}
CTR_RULES='allow c 240:0 rw'
# podman 4.3.1 here: vfs (the guest has no overlay module, and overlay over
# the tmpfs root is refused), no network (no bridge module), systemd's
# cgroup manager (a scope per container, libpod-ID.scope)
PODMAN=(podman --storage-driver=vfs --cgroup-manager=systemd)

make_rootfs() {
	[ -x "$CTR_ROOTFS/bin/reader" ] && return 0
	mkdir -p "$CTR_ROOTFS/bin" "$CTR_ROOTFS/proc" "$CTR_ROOTFS/dev" "$CTR_ROOTFS/state" "$CTR_STATE" &&
		cp /bin/busybox "$CTR_ROOTFS/bin/busybox" &&
		"$CTR_ROOTFS/bin/busybox" --install -s "$CTR_ROOTFS/bin" &&
		cp "$READER" "$CTR_ROOTFS/bin/reader"
}

# A runc container NAME run with runc's systemd cgroup driver
# (cgroupsPath system.slice:devcg:NAME: the scope devcg-NAME.scope). The
# fake GPU is in linux.devices (runc makes the node, and allows it in no
# rule of its own, README.md "Using devcg from a runtime"); its resources
# deny everything (runc's defaults follow). With HOOK "hook", devcg's hook
# runs at createRuntime with --runtime runc and the ARGs after it, and the
# annotation io.devcg.rules grants the fake GPU rw (the hook is given
# --annotation-allow for it: an annotation may only narrow otherwise).
start_runc() { # NAME hook|nohook [ARG...]
	local name=$1 hook=$2 dir=$CTR_DIR/bundle-$1 args= a hooks=
	shift 2
	for a; do args="$args, \"$a\""; done
	[ "$hook" = hook ] && hooks="\"hooks\": {\"createRuntime\": [{\"path\": \"/usr/bin/devcg\",
	\"args\": [\"devcg\", \"oci-hook\", \"--runtime\", \"runc\", \"--annotation-allow\", \"$CTR_RULES\"$args]}]},
\"annotations\": {\"io.devcg.rules\": \"$CTR_RULES\"},"
	make_rootfs || return 1
	mkdir -p "$dir"
	cat > "$dir/config.json" <<JSON
{
"ociVersion": "1.0.2",
"process": {"terminal": false, "user": {"uid": 0, "gid": 0},
  "args": ["/bin/reader", "-p", "$CTR_PAUSE", "/state/$name.state", "/dev/null", "$FAKEGPU"],
  "env": ["PATH=/bin"], "cwd": "/", "noNewPrivileges": true},
"root": {"path": "$CTR_ROOTFS", "readonly": true},
"hostname": "$name",
$hooks
"mounts": [
  {"destination": "/proc", "type": "proc", "source": "proc"},
  {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "mode=755", "size=1m"]},
  {"destination": "/state", "type": "bind", "source": "$CTR_STATE", "options": ["rbind", "rw"]}
],
"linux": {
  "cgroupsPath": "system.slice:devcg:$name",
  "devices": [{"path": "$FAKEGPU", "type": "c", "major": 240, "minor": 0, "fileMode": 438, "uid": 0, "gid": 0}],
  "resources": {"devices": [{"allow": false, "access": "rwm"}]},
  "namespaces": [{"type": "pid"}, {"type": "ipc"}, {"type": "uts"}, {"type": "mount"}, {"type": "network"}]
}
}
JSON
	rm -f "$CTR_STATE/$name.state"
	ln -sfn "$CTR_STATE/$name.state" "/run/$name.state"
	# (runc says on standard error that it skips /dev/net/tun for systemd:
	# the guest has no such device)
	runc --systemd-cgroup run -d --bundle "$dir" "$name" </dev/null >"$dir/runc.log" 2>&1 || {
		sed 's/^/# runc: /' "$dir/runc.log"
		return 1
	}
	wait_gens "$name" 2
}

stop_runc() { # NAME
	runc delete -f "$1" >/dev/null 2>&1
	rm -rf "$CTR_DIR/bundle-$1" "$CTR_STATE/$1.state" "/run/$1.state"
	return 0
}

# A podman container NAME (its runtime RUNTIME, its hooks from HOOKS_DIR).
# The fake GPU is bind-mounted (-v), not given with --device: podman turns
# --device into a rule of the container's own, and runc's systemd driver
# then puts it in the scope's DeviceAllow= itself; a bind-mounted node has
# no rule anywhere, so only devcg's hook (the annotation) grants it.
start_podman() { # NAME RUNTIME HOOKS_DIR
	local name=$1
	make_rootfs || return 1
	rm -f "$CTR_STATE/$name.state"
	ln -sfn "$CTR_STATE/$name.state" "/run/$name.state"
	"${PODMAN[@]}" --runtime "$2" --hooks-dir "$3" run -d --name "$name" --network=none \
		--annotation io.devcg.rules="$CTR_RULES" -v "$FAKEGPU:$FAKEGPU" -v "$CTR_STATE:/state" \
		--rootfs "$CTR_ROOTFS" /bin/reader -p "$CTR_PAUSE" "/state/$name.state" /dev/null "$FAKEGPU" \
		>"$CTR_DIR/podman-$name.log" 2>&1 || {
		sed 's/^/# podman: /' "$CTR_DIR/podman-$name.log"
		return 1
	}
	wait_gens "$name" 2
}

stop_podman() { # NAME
	"${PODMAN[@]}" rm -f -t 0 "$1" >/dev/null 2>&1
	rm -f "$CTR_STATE/$1.state" "/run/$1.state"
	return 0
}

# the unit of a podman container (its scope)
podman_unit() { # NAME
	local id
	id=$("${PODMAN[@]}" inspect -f '{{.Id}}' "$1") && echo "libpod-$id.scope"
}

# the cgroup directory a container's process runs in (crun puts it in a
# child "container" of the scope; runc in the scope itself)
podman_cgroup() { # NAME
	local pid
	pid=$("${PODMAN[@]}" inspect -f '{{.State.Pid}}' "$1") || return 1
	echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$pid/cgroup")"
}

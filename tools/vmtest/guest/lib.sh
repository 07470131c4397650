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

READER=/usr/lib/devcg-vmtest/devcg-errno-reader
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
# written its state twice
start_workload() { # UNIT PROPERTY... -- PATH...
	local unit=$1 props=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		props+=(-p "$1")
		shift
	done
	shift
	rm -f "/run/$unit.state"
	systemd-run --quiet --unit="$unit" "${props[@]}" "$READER" "/run/$unit.state" "$@" || return 1
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

# a round trip to PID 1: the cgroup realization a set-property queues runs
# from the manager's loop (src/core/manager.c, manager_loop()) before the
# next bus message is read, so it is done by the time this is answered
settle() { # UNIT
	systemctl show -P ActiveState "$1" >/dev/null
}

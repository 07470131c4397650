#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# make demo: the gap that devcg removes, measured on this machine.
# A reader opens /dev/urandom and /dev/null in a tight loop inside a scratch
# cgroup while the device policy is swapped many times:
#   - with devcg on cgroup v2 (BPF_F_REPLACE): no EPERM;
#   - then, as a control, a policy without /dev/urandom: EPERM, so the
#     filter is really live;
#   - where cgroup v1 devices is mounted, the deny-all-then-replay update
#     that runtimes do today, on the same reader: EPERMs;
#   - a hot-plug: devcg attach gives a pseudo-container (a process of the
#     cgroup with its own mount namespace and a tmpfs as its /dev) a device
#     no driver has, which it then opens (ENXIO: allowed, no driver), and
#     devcg detach takes it back (ENOENT).
# Everything it creates is removed on exit, also on failure.
set -eu
build=${1:-build}
devcg=$build/devcg
reader=$build/devcg-reader
swaps=${DEMO_SWAPS:-1000}
cycles=${DEMO_CYCLES:-200}

[ "$(id -u)" = 0 ] || { echo "demo: needs root (it makes cgroups and loads BPF programs)" >&2; exit 1; }
cg2=$(awk '$3 == "cgroup2" {print $2; exit}' /proc/mounts)
[ -n "$cg2" ] || { echo "demo: no cgroup2 mount found" >&2; exit 1; }
v1=$(awk '$3 == "cgroup" && $4 ~ /(^|,)devices(,|$)/ {print $2; exit}' /proc/mounts)

name=devcg-demo-$$
work=$(mktemp -d)
pids=""
ctr=""
cleanup() {
	for p in $pids $ctr; do kill "$p" 2>/dev/null || true; done
	for p in $pids $ctr; do wait "$p" 2>/dev/null || true; done
	[ -d "$cg2/$name" ] && { "$devcg" reset "$cg2/$name" >/dev/null 2>&1 || true; rmdir "$cg2/$name" 2>/dev/null || true; }
	[ -n "$v1" ] && [ -d "$v1/$name" ] && rmdir "$v1/$name" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

# start_reader PROCS_FILE OUT: a reader that joins the cgroup, then loops
start_reader() {
	"$reader" -c "$1" /dev/urandom /dev/null > "$2" &
	rpid=$!
	pids="$pids $rpid"
	until [ -s "$2" ]; do sleep 0.01; done
}
stop_reader() {
	kill "$rpid"
	wait "$rpid" || true
	pids=""
}
eperm() { awk -v p="$2" '$1 == p {sub("eperm=", "", $3); print $3}' "$1"; }
opens() { awk -v p="$2" '$1 == p {sub("opens=", "", $2); print $2}' "$1"; }

base="deny a
allow c 1:3 rwm
allow c 1:5 rwm
allow c 1:7 rwm
allow c 1:8 rwm
allow c 1:9 rwm
allow c 5:0 rwm
allow c 5:1 rwm
allow c 5:2 rwm
allow c 136:* rwm"
printf '%s\n' "$base" > "$work/a.rules"
printf '%s\nallow c 10:200 rwm\n' "$base" > "$work/b.rules"
printf 'deny a\nallow c 1:3 rwm\n' > "$work/no-urandom.rules"

echo "== devcg on cgroup v2 ($cg2/$name)"
mkdir "$cg2/$name"
"$devcg" replace "$cg2/$name" -f "$work/a.rules"
start_reader "$cg2/$name/cgroup.procs" "$work/v2.out"
i=0
start=$(date +%s%N)
while [ $i -lt "$swaps" ]; do
	if [ $((i % 2)) = 0 ]; then f=b; else f=a; fi
	"$devcg" replace "$cg2/$name" -f "$work/$f.rules" >/dev/null
	i=$((i + 1))
done
end=$(date +%s%N)
stop_reader
echo "  $swaps policy swaps in $(( (end - start) / 1000000 )) ms (whole 'devcg replace' commands)"
echo "  reader: $(opens "$work/v2.out" /dev/urandom) opens of /dev/urandom, EPERM: $(eperm "$work/v2.out" /dev/urandom); /dev/null EPERM: $(eperm "$work/v2.out" /dev/null)"
v2_eperm=$(( $(eperm "$work/v2.out" /dev/urandom) + $(eperm "$work/v2.out" /dev/null) ))

echo "== control: a policy without /dev/urandom must refuse it"
"$devcg" replace "$cg2/$name" -f "$work/no-urandom.rules" >/dev/null
start_reader "$cg2/$name/cgroup.procs" "$work/ctl.out"
sleep 0.2
stop_reader
echo "  reader: /dev/urandom EPERM: $(eperm "$work/ctl.out" /dev/urandom) (must be > 0); /dev/null EPERM: $(eperm "$work/ctl.out" /dev/null) (must be 0)"
ctl=$(eperm "$work/ctl.out" /dev/urandom)
"$devcg" show "$cg2/$name" | sed 's/^/  /'

v1_eperm=n/a
if [ -n "$v1" ]; then
	echo "== the v1 way: 'a' to devices.deny, then the allow list replayed ($v1/$name)"
	mkdir "$v1/$name"
	printf '%s\n' "$base" | sed '1d; s/^allow //' > "$work/allow.list"
	echo a > "$v1/$name/devices.deny"
	while read -r line; do echo "$line" > "$v1/$name/devices.allow"; done < "$work/allow.list"
	start_reader "$v1/$name/cgroup.procs" "$work/v1.out"
	i=0
	while [ $i -lt "$cycles" ]; do
		echo a > "$v1/$name/devices.deny"
		while read -r line; do echo "$line" > "$v1/$name/devices.allow"; done < "$work/allow.list"
		i=$((i + 1))
	done
	stop_reader
	v1_eperm=$(( $(eperm "$work/v1.out" /dev/urandom) + $(eperm "$work/v1.out" /dev/null) ))
	echo "  $cycles deny-all-then-replay cycles: reader saw $v1_eperm EPERMs ($(eperm "$work/v1.out" /dev/urandom) on /dev/urandom)"
fi

echo "== hot-plug: devcg attach and detach on a pseudo-container in $cg2/$name"
# a char major no driver has: opening its node says ENXIO when allowed
major=""
for m in 240 241 242 243 244 245 246 247 248 249 250 251 252 253 254 234 235 236 237 238 239; do
	awk -v m="$m" '/^Character/ {c = 1; next} /^Block/ {c = 0} c && $1 == m {f = 1} END {exit !f}' \
		/proc/devices || { major=$m; break; }
done
mknod -m 0660 "$work/fakegpu0" c "$major" 0
mkdir "$work/dev"
"$devcg" replace "$cg2/$name" -f "$work/a.rules" >/dev/null
sh -c 'echo $$ > "$1/cgroup.procs"; exec unshare -m --propagation private sh -c \
	"mount -t tmpfs -o mode=755 tmpfs \"\$0\" && exec sleep 600" "$2"' - "$cg2/$name" "$work/dev" &
ctr=$!
until grep -q " $work/dev " "/proc/$ctr/mountinfo" 2>/dev/null; do sleep 0.01; done
# open(2) of the node from inside: a process of the cgroup in its mount namespace
use() {
	sh -c 'echo $$ > "$1/cgroup.procs"; exec nsenter -t "$2" -m head -c0 "$3"' - "$cg2/$name" "$ctr" \
		"$work/dev/gpu/fakegpu0" 2>&1 | sed 's/.*: //'
}
before=$(use)
echo "  before attach, opening its dev/gpu/fakegpu0 in the container: $before"
"$devcg" attach -p "$ctr" "$work/fakegpu0=$work/dev/gpu/fakegpu0" | sed 's/^/  /'
during=$(use)
echo "  after attach: $during (allowed: the open reached the missing driver)"
nsenter -t "$ctr" -m ls -ln "$work/dev/gpu" | sed -n 's/^/  /; /fakegpu0/p'
"$devcg" detach -p "$ctr" "$work/fakegpu0=$work/dev/gpu/fakegpu0" | sed 's/^/  /'
after=$(use)
echo "  after detach: $after"
hotplug=failed
case "$before|$during|$after" in
"No such file or directory|No such device or address|No such file or directory") hotplug=ok ;;
esac

echo "== summary"
echo "  devcg replace, $swaps swaps on v2:      $v2_eperm EPERM"
echo "  v1 deny-all replay, $cycles cycles:      $v1_eperm EPERM"
echo "  control (policy without /dev/urandom): $ctl EPERM"
echo "  hot-plug (ENOENT, attach: ENXIO, detach: ENOENT): $hotplug"
[ "$v2_eperm" = 0 ] && [ "$ctl" -gt 0 ] && [ "$hotplug" = ok ]

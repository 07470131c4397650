# SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
# The k8s-node guest's second part, sourced by k8s-node.sh after its own
# (installed as /usr/lib/devcg-vmtest/k8s-nri.sh): the same pods and
# operations with devcg's node agent, devcg-nri, running as the .deb's
# devcg-nri.service on containerd's NRI socket. The first part, without
# the agent, is this part's control: there the operations revoke what
# EXPECT says; here every grant must stay, with these exceptions measured
# and explained in docs/kubernetes.md: crun 1.21's update replaces the
# container's program with its own, whose list lacks what a hook or a
# hot-plug granted, and the agent puts devcg's policy back when NRI tells
# it the update is done (PostUpdateContainer), so the reader may see EPERM
# in between ("mixed") but never after ("revokes" fails).
# Then: the agent killed with SIGKILL and restarted by systemd; stopped,
# a pod removed and one started without it, the one taken over and the
# other forgotten at its Synchronize when it starts again; K8S_NRI_PODS
# pods made and removed in parallel, with nothing of them left behind; the
# agent run as its DaemonSet's pod (below).

# (make vmtest's counts keep CI's time; k8s-node-100.sh runs the issue's:
# 100 reloads and 100 pods with the agent too)
K8S_NRI_PODS=${K8S_NRI_PODS:-8}
K8S_RELOADS=${K8S_AGENT_RELOADS:-10}
NRI_STATE=/run/devcg/containers
t_nri=$SECONDS
info "---- with the node agent (devcg-nri) ----"
for p in "${PODS[@]}"; do stop_pod "$p"; done
OUT=() NEED_NEW=() RESULT=() START_STATE=() INST_CG=() INST_OUTCOME=() INST_KIND=()

# the programs on CGROUP's own directory: "ID:OWNER ..."
programs_on() { # CGROUP (absolute)
	devcg show -j "$1" | python3 -c 'import json, sys
d = json.load(sys.stdin)
print(" ".join("%d:%s" % (p["id"], p["owner"]) for p in d["programs"] if p["cgroup"] == d["cgroup"]))'
}
# exactly one devcg program there, and nothing else but systemd's
one_devcg_program() { # "ID:OWNER ..."
	[ "$(tr ' ' '\n' <<<"$1" | grep -c ':devcg$')" = 1 ] &&
		! tr ' ' '\n' <<<"$1" | grep -qv ':devcg$\|:systemd$\|^$'
}
# wait_devcg_program POD: until its cgroup has devcg's program alone (60 s
# at most); OWN is what is on it then
wait_devcg_program() {
	local i
	for i in $(seq 120); do
		own=$(programs_on "/sys/fs/cgroup${CG[$1]}")
		one_devcg_program "$own" && return 0
		sleep 0.5
	done
	return 1
}
# judge() first waits (60 s at most) until every running pod's cgroup has
# devcg's program again: the agent acts on PostUpdateContainer after the
# runtime's update returned, one container after the other
settle_agent() {
	local p
	for p in "${PODS[@]}"; do
		[ -z "${OUT[$p]:-}" ] && [ -n "${PID[$p]:-}" ] || continue
		wait_devcg_program "$p"
	done
}
# how many times the agent has registered with containerd (its log)
registrations() {
	journalctl -q -o cat -u devcg-nri 2>/dev/null | grep -c 'registered'
}
wait_registered() { # COUNT_BEFORE
	local i
	for i in $(seq 120); do
		[ "$(registrations)" -gt "$1" ] && return 0
		sleep 0.5
	done
	return 1
}
agent_log() {
	journalctl -q -o cat -u devcg-nri 2>/dev/null | tail -n "${1:-5}" | tr '\n' ' '
}

n0=$(registrations)
if ! out=$(systemctl start devcg-nri 2>&1); then
	fail agent_service_starts "systemctl start devcg-nri: $out $(agent_log)"
elif ! wait_registered "$n0"; then
	fail agent_registers_with_containerd "no registration in 60 s: $(agent_log)"
else
	pass agent_registers_with_containerd
	info "devcg-nri: $(agent_log 3)"
fi

TP=agent_
ATTACH_BY=container
declare -A START_EXPECT=(
	[cdi-runc]=opens [cdi-crun]=opens [hooknosd-runc]=opens [hooknosd-crun]=opens
	[hook-runc]=opens [hook-crun]=opens [attach-runc]=opens [attach-crun]=opens
)
EXPECT=()
for op in "${OPS[@]}" kill9; do
	for p in "${PODS[@]}"; do EXPECT[$op:$p]=keeps; done
done
for op in update kill9; do
	EXPECT[$op:hooknosd-crun]='keeps|mixed' EXPECT[$op:hook-crun]='keeps|mixed' EXPECT[$op:attach-crun]='keeps|mixed'
done

TRACE_OUT=/run/devcg-k8s/trace-agent.json
TRACE_ERR=/run/devcg-k8s/trace-agent.err
trace_ok=
if start_trace "$TRACE_OUT" "$TRACE_ERR" --cgroup /kubepods.slice; then trace_ok=1
else fail agent_trace_starts "devcg trace: $(cat "$TRACE_ERR")"; fi

t0=$SECONDS
for p in "${PODS[@]}"; do
	start_pod "$p" || { OUT[$p]=1; continue; }
	st=${START_STATE[$p]}
	info "FACT k8s agent: $p at start: the GPU $st"
	if [ "$st" = "${START_EXPECT[$p]}" ]; then pass "agent_$(kind_of "$p")_gpu_${st}_at_start_$(runtime_of "$p")"
	else fail "agent_$(kind_of "$p")_gpu_${START_EXPECT[$p]}_at_start_$(runtime_of "$p")" "measured: $st"; fi
	[ "$st" = opens ] || OUT[$p]=1
	own=$(programs_on "/sys/fs/cgroup${CG[$p]}")
	if one_devcg_program "$own"; then pass "agent_installs_one_devcg_program_$p"
	else fail "agent_installs_one_devcg_program_$p" "programs on ${CG[$p]}: $own"; fi
	if [ -e "$NRI_STATE/${CTR[$p]}.json" ]; then pass "agent_remembers_$p"
	else fail "agent_remembers_$p" "no $NRI_STATE/${CTR[$p]}.json: $(ls "$NRI_STATE" 2>&1 | tr '\n' ' ')"; fi
done
info "with the agent, the pods started in $((SECONDS - t0))s"

run_ops

# ---- SIGKILL: the agent dies mid-run and systemd starts it again ------------
ready
S0=()
ctrs=
for p in "${PODS[@]}"; do
	[ -z "${OUT[$p]:-}" ] && [ -n "${PID[$p]:-}" ] || continue
	S0[$p]=$(snapshot "$p")
	ctrs=$ctrs${ctrs:+,}${CTR[$p]}
done
n0=$(registrations)
main=$(systemctl show -P MainPID devcg-nri)
if [ -n "$main" ] && [ "$main" != 0 ] && kill -KILL "$main"; then
	info "devcg-nri (pid $main) killed with SIGKILL"
	if wait_registered "$n0"; then
		pass agent_restarts_after_sigkill
		info "devcg-nri: pid $(systemctl show -P MainPID devcg-nri), $(systemctl show -P NRestarts devcg-nri) restarts"
	else
		fail agent_restarts_after_sigkill "not registered again in 60 s: $(agent_log)"
	fi
	# the restarted agent put back what crun's updates take, hot-plugged
	# devices included (attach-*: devcg attach --container, kept in the
	# agent's state)
	out=$(cri update "$ctrs" 2 2>&1) || fail agent_update_after_restart_runs "$out"
	judge kill9
	for p in "${PODS[@]}"; do
		[ -z "${OUT[$p]:-}" ] && [ -n "${PID[$p]:-}" ] || continue
		own=$(programs_on "/sys/fs/cgroup${CG[$p]}")
		if one_devcg_program "$own"; then pass "agent_restart_leaves_one_devcg_program_$p"
		else fail "agent_restart_leaves_one_devcg_program_$p" "programs on ${CG[$p]}: $own"; fi
	done
else
	fail agent_restarts_after_sigkill "no main pid of devcg-nri: '$main'"
fi

# ---- the agent stopped: pods still start; Synchronize takes them over ------
# The pod is removed while the agent is away: its state stays until the
# agent's next Synchronize, which forgets it.
p=cdi-crun
if systemctl stop devcg-nri; then
	gone_ctr=${CTR[$p]:-}
	stop_pod "$p"
	if [ -n "$gone_ctr" ] && [ -e "$NRI_STATE/$gone_ctr.json" ]; then stale=1; else stale=; fi
	if start_pod "$p" && [ "${START_STATE[$p]}" = opens ]; then
		pass agent_stopped_pods_still_start
		own=$(programs_on "/sys/fs/cgroup${CG[$p]}")
		# the control: without the agent the pod keeps crun's own program
		if grep -q ':crun$' <<<"$(tr ' ' '\n' <<<"$own")" && ! grep -q ':devcg' <<<"$own"; then
			pass agent_stopped_pod_keeps_the_runtimes_program
		else
			fail agent_stopped_pod_keeps_the_runtimes_program "programs on ${CG[$p]}: $own"
		fi
		n0=$(registrations)
		s0=$(snapshot "$p")
		systemctl start devcg-nri
		wait_registered "$n0" || fail agent_registers_again "$(agent_log)"
		wait_devcg_program "$p"
		wait_gens "$p" 3
		s1=$(snapshot "$p")
		if ! one_devcg_program "$own"; then
			fail agent_synchronize_takes_over_running_pod "programs on ${CG[$p]}: $own"
		elif [ "$(delta "$s0" "$s1" "$GPU" EPERM)" != 0 ]; then
			fail agent_synchronize_takes_over_running_pod "the reader: $(window "$s0" "$s1" "$GPU")"
		else
			pass agent_synchronize_takes_over_running_pod
		fi
		# the control: the state was there while the agent was away; the
		# agent forgets it after Synchronize's containers (60 s at most)
		for i in $(seq 120); do
			[ -e "$NRI_STATE/$gone_ctr.json" ] || break
			sleep 0.5
		done
		if [ -z "$stale" ]; then
			fail agent_synchronize_forgets_pods_removed_meanwhile "no state of ${gone_ctr:0:12} while the agent was away"
		elif [ -e "$NRI_STATE/$gone_ctr.json" ]; then
			fail agent_synchronize_forgets_pods_removed_meanwhile "$NRI_STATE/$gone_ctr.json is still there: $(agent_log)"
		else
			pass agent_synchronize_forgets_pods_removed_meanwhile
		fi
	else
		fail agent_stopped_pods_still_start "$p: ${START_STATE[$p]:-did not start}"
	fi
else
	fail agent_stopped_pods_still_start "systemctl stop devcg-nri failed"
fi

# ---- what the trace saw with the agent -------------------------------------
if [ -n "$trace_ok" ]; then
	kill -INT "$TRACE_PID"
	wait "$TRACE_PID"
	grep -E '"type":"(revoke|summary)"' "$TRACE_OUT" | sed 's/^/TRACE-JSON-AGENT /'
	# the trace names each revocation, the ones the agent undoes too
	# (crun's update until PostUpdateContainer: "mixed" above); one that
	# lasted is an operation after which the reader still saw EPERM
	info "devcg trace with the agent: $(grep -c '"type":"revoke"' "$TRACE_OUT") revocations, $(python3 -c 'import json, sys
w = [e["window_ns"] for e in map(json.loads, open(sys.argv[1])) if e["type"] == "revoke"]
print("windows %.2f s at most, %.2f s in all" % (max(w) / 1e9, sum(w) / 1e9) if w else "none")' "$TRACE_OUT")"
	lasted=
	for key in "${!RESULT[@]}"; do
		[ "${RESULT[$key]}" = revokes ] && lasted="$lasted $key"
	done
	if [ -z "$lasted" ]; then pass agent_no_revocation_lasted
	else fail agent_no_revocation_lasted "revoked after:$lasted"; fi
fi

# ---- many pods made and removed at once: nothing left behind ---------------
progs() { bpftool -j prog show 2>/dev/null | python3 -c 'import json, sys
print(sum(1 for p in json.load(sys.stdin) if p.get("type") == "cgroup_device"))'; }
states() { ls "$NRI_STATE" 2>/dev/null | grep -c '\.json$'; }
# the units' runtime settings that name devices (the scopes' own, and the
# systemd step's DeviceAllow=)
dropins() { grep -rl '^DeviceAllow=' /run/systemd/transient /run/systemd/system.control 2>/dev/null | wc -l; }
p0=$(progs) st0=$(states) d0=$(dropins)
t0=$SECONDS
if out=$(cri many "$K8S_NRI_PODS" runc,crun -- /bin/sleep 100000 2>&1); then
	info "$K8S_NRI_PODS pods started in $((SECONDS - t0))s"
	bad= pods=
	while read -r pod ctr pid; do
		pods=$pods${pods:+,}$pod
		cg=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
		own=$(programs_on "/sys/fs/cgroup$cg")
		one_devcg_program "$own" || bad="$bad $ctr:$own"
	done <<<"$out"
	if [ -z "$bad" ]; then pass "agent_installs_devcg_on_${K8S_NRI_PODS}_pods_started_at_once"
	else fail "agent_installs_devcg_on_${K8S_NRI_PODS}_pods_started_at_once" "$bad"; fi
	t0=$SECONDS
	out=$(cri rmmany "$pods" 2>&1) || fail agent_many_pods_removed "$out"
	info "$K8S_NRI_PODS pods removed in $((SECONDS - t0))s"
	# the kernel frees a removed cgroup's programs in its own time
	for i in $(seq 60); do [ "$(progs)" -le "$p0" ] && break; sleep 1; done
	p1=$(progs) st1=$(states) d1=$(dropins)
	info "device programs $p0 -> $p1, agent states $st0 -> $st1, DeviceAllow drop-ins $d0 -> $d1"
	if [ "$p1" -le "$p0" ] && [ "$st1" = "$st0" ] && [ "$d1" -le "$d0" ]; then
		pass "agent_leaves_nothing_of_${K8S_NRI_PODS}_removed_pods"
	else
		fail "agent_leaves_nothing_of_${K8S_NRI_PODS}_removed_pods" "programs $p0 -> $p1, states $st0 -> $st1, drop-ins $d0 -> $d1"
	fi
else
	fail "agent_installs_devcg_on_${K8S_NRI_PODS}_pods_started_at_once" "devcg-cri many: $out"
fi

# ---- the agent as its DaemonSet runs it: the image's entrypoint in a pod ---
# deploy/kubernetes/devcg-nri.yaml, run by devcg-cri daemonset as kubelet
# would run its pod: not privileged, the manifest's capabilities, hostPID,
# the host paths; its cgroup namespace its own, as for every pod on cgroup
# v2, where /proc/PID/cgroup shows the containers as "/../..." paths: the
# agent enters the host's (devcg_host_cgroupns). The service is stopped
# meanwhile (one agent a node). A hot-plug by container
# ID through the pod's state (/run/devcg, a host path), then an update on
# crun: the agent in the pod puts devcg's policy back. The control: after
# the pod is gone, a pod starts with crun's program only.
t0=$SECONDS
ds_log=
if ! systemctl stop devcg-nri; then
	fail agent_image_entrypoint_registers_with_containerd "systemctl stop devcg-nri failed"
elif ! out=$(ctr -n k8s.io images import --snapshotter native --platform linux/amd64 \
	"$DEVCG_VMTEST_LIB/images/devcg-nri.tar" 2>&1); then
	fail agent_image_entrypoint_registers_with_containerd "ctr images import devcg-nri.tar: $out"
elif ! out=$(cri daemonset "$DEVCG_VMTEST_LIB/devcg-nri.yaml" 2>&1); then
	fail agent_image_entrypoint_registers_with_containerd "devcg-cri daemonset: $out"
else
	read -r ds_pod ds_ctr ds_pid ds_log <<<"$out"
	info "the DaemonSet's pod ${ds_pod:0:12}: container ${ds_ctr:0:12} pid $ds_pid, cgroup $(sed -n 's/^0:://p' "/proc/$ds_pid/cgroup")"
	# registered, and done with Synchronize: until then the agent reads no
	# request, and containerd gives up one that waits 2 s (a pod started
	# meanwhile is left to the next Synchronize)
	for i in $(seq 240); do
		grep -q 'synchronize: done' "$ds_log" 2>/dev/null && break
		sleep 0.5
	done
	if grep -q registered "$ds_log" 2>/dev/null && grep -q 'synchronize: done' "$ds_log"; then
		pass agent_image_entrypoint_registers_with_containerd
		p=attach-crun
		stop_pod "$p"
		if start_pod "$p" && [ "${START_STATE[$p]}" = opens ]; then
			pass agent_daemonset_pod_gpu_opens_after_attach_by_container_id
		else
			fail agent_daemonset_pod_gpu_opens_after_attach_by_container_id "$p: ${START_STATE[$p]:-did not start}"
		fi
		if [ -n "${PID[$p]:-}" ]; then
			cri update "${CTR[$p]}" 2 >/dev/null 2>&1 || fail agent_daemonset_update_runs "devcg-cri update failed"
			wait_devcg_program "$p"
			s0=$(snapshot "$p")
			wait_gens "$p" 3
			s1=$(snapshot "$p")
			if ! one_devcg_program "$own"; then
				fail agent_daemonset_puts_devcg_back_after_crun_update "programs on ${CG[$p]}: $own"
			elif [ "$(delta "$s0" "$s1" "$GPU" EPERM)" != 0 ] || [ "$(delta "$s0" "$s1" "$GPU" ENXIO)" = 0 ]; then
				fail agent_daemonset_puts_devcg_back_after_crun_update "the reader: $(window "$s0" "$s1" "$GPU")"
			else
				pass agent_daemonset_puts_devcg_back_after_crun_update
			fi
		fi
	else
		fail agent_image_entrypoint_registers_with_containerd "no registration and Synchronize in 120 s: $(tail -n 5 "$ds_log" 2>&1 | tr '\n' ' ')"
	fi
	[ -f "$ds_log" ] && sed 's/^/# devcg-nri pod: /' "$ds_log" | tail -n 40
	cri rm "$ds_pod" >/dev/null 2>&1 || fail agent_daemonset_pod_removed "devcg-cri rm ${ds_pod:0:12} failed"
	# the control: no agent now, a new pod keeps crun's own program
	p=cdi-crun
	stop_pod "$p"
	if start_pod "$p"; then
		own=$(programs_on "/sys/fs/cgroup${CG[$p]}")
		if grep -q ':crun$' <<<"$(tr ' ' '\n' <<<"$own")" && ! grep -q ':devcg' <<<"$own"; then
			pass agent_daemonset_removed_pod_keeps_the_runtimes_program
		else
			fail agent_daemonset_removed_pod_keeps_the_runtimes_program "programs on ${CG[$p]}: $own"
		fi
	fi
fi
systemctl start devcg-nri
info "the DaemonSet's agent: $((SECONDS - t0))s"

info "TABLE-AGENT | operation | $(printf '%s | ' "${PODS[@]}")"
row="| at start |"
for p in "${PODS[@]}"; do row="$row ${START_STATE[$p]:-?} |"; done
info "TABLE-AGENT $row"
for op in "${OPS[@]}" kill9; do
	row="| $op |"
	for p in "${PODS[@]}"; do row="$row ${RESULT[$op:$p]:-n/a} |"; done
	info "TABLE-AGENT $row"
done
# the agent's own account (its journal), for whoever reads the console
journalctl -q -o cat -u devcg-nri 2>/dev/null | tail -n "${K8S_AGENT_LOG:-400}" | sed 's/^/# devcg-nri: /'
info "with the agent: $((SECONDS - t_nri))s"

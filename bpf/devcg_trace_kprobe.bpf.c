// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devcg trace from kprobes, where the kernel has them: cgroup_file_write()
 * sees every write to a cgroup file with its kernfs file at hand, and
 * devcgroup_check_permission() gives the exact device and the decision.
 */
#include "vmlinux.h"
#include "trace_common.h"

SEC("kprobe/cgroup_file_write")
int BPF_KPROBE(devcg_kp_cgroup_write, struct kernfs_open_file *of, char *buf, size_t nbytes)
{
	__u64 target = 0;
	__u32 file = cgroup_file_kind(BPF_CORE_READ(of, file), &target);

	if (file)
		write_enter(file, target, buf, nbytes, false);
	return 0;
}

SEC("kretprobe/cgroup_file_write")
int BPF_KRETPROBE(devcg_kp_cgroup_write_ret, long ret)
{
	write_exit(ret, DEVCG_SRC_KPROBE);
	return 0;
}

struct pending_check {
	__u64 ts;
	__u32 type, major, minor, access;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct pending_check);
} pending_checks SEC(".maps");

SEC("kprobe/devcgroup_check_permission")
int BPF_KPROBE(devcg_kp_check, short type, u32 major, u32 minor, short access)
{
	struct pending_check c = { .ts = bpf_ktime_get_ns(), .type = (__u32)type, .major = major,
				   .minor = minor, .access = (__u32)access };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (bpf_map_update_elem(&pending_checks, &tid, &c, BPF_ANY))
		count_lost(DEVCG_LOST_RINGBUF);
	return 0;
}

SEC("kretprobe/devcgroup_check_permission")
int BPF_KRETPROBE(devcg_kp_check_ret, int ret)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_check *c = bpf_map_lookup_elem(&pending_checks, &tid);
	struct devcg_trace_event *e;

	if (!c)
		return 0;
	if (ret && (e = denial_reserve())) {
		e->type = DEVCG_EV_DEV_CHECK;
		fill_task(e, DEVCG_SRC_KPROBE);
		e->ts_ns = c->ts;
		e->ts_exit_ns = bpf_ktime_get_ns();
		e->ret = ret;
		e->check.type = c->type;
		e->check.major = c->major;
		e->check.minor = c->minor;
		e->check.access = c->access;
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&pending_checks, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * devcg trace from fentry/fexit, the cheapest hooks where the kernel lets
 * them load: the same functions as the kprobe variant, with arguments and
 * return value together at fexit.
 */
#include "vmlinux.h"
#include "trace_common.h"

SEC("fentry/cgroup_file_write")
int BPF_PROG(devcg_fe_cgroup_write, struct kernfs_open_file *of, char *buf, size_t nbytes)
{
	__u64 target = 0;
	__u32 file = cgroup_file_kind(BPF_CORE_READ(of, file), &target);

	if (file)
		write_enter(file, target, buf, nbytes, false);
	return 0;
}

SEC("fexit/cgroup_file_write")
int BPF_PROG(devcg_fx_cgroup_write, struct kernfs_open_file *of, char *buf, size_t nbytes,
	     loff_t off, ssize_t ret)
{
	write_exit(ret, DEVCG_SRC_FENTRY);
	return 0;
}

SEC("fexit/devcgroup_check_permission")
int BPF_PROG(devcg_fx_check, short type, u32 major, u32 minor, short access, int ret)
{
	struct devcg_trace_event *e;

	if (!ret || !(e = denial_reserve()))
		return 0;
	e->type = DEVCG_EV_DEV_CHECK;
	fill_task(e, DEVCG_SRC_FENTRY);
	e->ts_ns = e->ts_exit_ns = bpf_ktime_get_ns();
	e->ret = ret;
	e->check.type = (__u32)type;
	e->check.major = major;
	e->check.minor = minor;
	e->check.access = (__u32)access;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What every devcg trace object shares: the ring buffer and loss counters
 * (user space makes the objects share one of each), and the helpers that
 * fill the common part of an event. Include after vmlinux.h.
 */
#ifndef DEVCG_TRACE_COMMON_H
#define DEVCG_TRACE_COMMON_H

#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#if defined(DEVCG_CROSS_ARCH) && defined(__TARGET_ARCH_arm64)
/* Built for arm64 against the build machine's vmlinux.h, which has no arm64
 * register struct for bpf_tracing.h's PT_REGS macros: its layout from
 * arch/arm64/include/uapi/asm/ptrace.h, relocated by CO-RE at load time. */
struct user_pt_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
} __attribute__((preserve_access_index));
#endif
#include <bpf/bpf_tracing.h>

#include "devcg_trace.h"

#define CGROUP_SUPER_MAGIC 0x27e0eb
#define EPERM 1

/* Two rings: rule changes are rare and must survive a flood of denials. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} denials SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, DEVCG_LOST_MAX);
	__type(key, __u32);
	__type(value, __u64);
} lost SEC(".maps");

static __always_inline void count_lost(__u32 what)
{
	__u64 *n = bpf_map_lookup_elem(&lost, &what);

	if (n)
		(*n)++;
}

static __always_inline struct devcg_trace_event *event_reserve(void)
{
	struct devcg_trace_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e)
		count_lost(DEVCG_LOST_RINGBUF);
	return e;
}

static __always_inline struct devcg_trace_event *denial_reserve(void)
{
	struct devcg_trace_event *e = bpf_ringbuf_reserve(&denials, sizeof(*e), 0);

	if (!e)
		count_lost(DEVCG_LOST_RINGBUF);
	return e;
}

/* The task's v1 devices cgroup, as the kernfs id of its directory. */
static __always_inline __u64 devices_cgroup(struct task_struct *task)
{
	int id = bpf_core_enum_value(enum cgroup_subsys_id, devices_cgrp_id);
	struct cgroup_subsys_state *css;

	if (!bpf_core_enum_value_exists(enum cgroup_subsys_id, devices_cgrp_id))
		return 0;
	css = BPF_CORE_READ(task, cgroups, subsys[id & 15]);
	if (!css)
		return 0;
	return BPF_CORE_READ(css, cgroup, kn, id);
}

static __always_inline void fill_task(struct devcg_trace_event *e, __u32 source)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct task_struct *parent = BPF_CORE_READ(task, real_parent);
	__u64 id = bpf_get_current_pid_tgid();

	e->source = source;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ppid = BPF_CORE_READ(parent, tgid);
	e->flags = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	BPF_CORE_READ_STR_INTO(&e->pcomm, parent, comm);
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->devices_cg = devices_cgroup(task);
}

/* The struct file of descriptor FD of the current task, or NULL. */
static __always_inline struct file *fd_file(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct fdtable *fdt = BPF_CORE_READ(task, files, fdt);
	struct file **fds;
	struct file *f = NULL;

	if (fd < 0 || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	fds = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]);
	return f;
}

/* Is F an anonymous-inode file of this kind ("bpf-prog", "bpf_link")? */
static __always_inline bool anon_file_is(struct file *f, const char *kind, int len)
{
	char name[10] = {};
	int i;

	if (!f || bpf_probe_read_kernel_str(name, sizeof(name), BPF_CORE_READ(f, f_path.dentry, d_name.name)) < 0)
		return false;
	for (i = 0; i < len; i++)
		if (name[i] != kind[i])
			return false;
	return name[len] == '\0';
}

/* Is F a cgroup v1 file we trace? Returns its enum devcg_ev_file, or 0. */
static __always_inline __u32 cgroup_file_kind(struct file *f, __u64 *target)
{
	char name[16] = {};
	const unsigned char *p;

	if (!f || BPF_CORE_READ(f, f_inode, i_sb, s_magic) != CGROUP_SUPER_MAGIC)
		return 0;
	p = BPF_CORE_READ(f, f_path.dentry, d_name.name);
	if (bpf_probe_read_kernel_str(name, sizeof(name), p) < 0)
		return 0;
	*target = BPF_CORE_READ(f, f_path.dentry, d_parent, d_inode, i_ino);
	/* "devices.allow", "devices.deny", "freezer.state" */
	if (name[0] == 'd' && name[7] == '.' && name[8] == 'a' && name[12] == 'w')
		return DEVCG_FILE_DEVICES_ALLOW;
	if (name[0] == 'd' && name[7] == '.' && name[8] == 'd' && name[11] == 'y')
		return DEVCG_FILE_DEVICES_DENY;
	if (name[0] == 'f' && name[7] == '.' && name[8] == 's' && name[12] == 'e')
		return DEVCG_FILE_FREEZER_STATE;
	return 0;
}

/* A write to a traced cgroup file, from entry to return. */
struct pending_write {
	__u64 ts;
	__u64 target;
	__u32 file;
	__u32 len;
	char data[DEVCG_EV_DATA];
};

/* LRU: an entry whose exit never came (a thread gone mid-call) cannot
 * fill the map and silently stop the tracing of later writes. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct pending_write);
} pending_writes SEC(".maps");

static __always_inline void write_enter(__u32 file, __u64 target, const void *buf, __u64 count,
					bool user)
{
	struct pending_write w = { .ts = bpf_ktime_get_ns(), .target = target, .file = file };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u32 n = count > DEVCG_EV_DATA ? DEVCG_EV_DATA : (__u32)count;
	long err;

	w.len = count > 0xffffffff ? 0xffffffff : (__u32)count;
	if (n) {
		/* n is at most DEVCG_EV_DATA already; the mask only lets the
		 * verifier see a bound */
		n &= DEVCG_EV_DATA * 2 - 1;
		err = user ? bpf_probe_read_user(w.data, n, buf) : bpf_probe_read_kernel(w.data, n, buf);
		if (err)
			count_lost(DEVCG_LOST_READ);
	}
	if (bpf_map_update_elem(&pending_writes, &tid, &w, BPF_ANY))
		count_lost(DEVCG_LOST_RINGBUF);
}

static __always_inline void write_exit(long ret, __u32 source)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_write *w = bpf_map_lookup_elem(&pending_writes, &tid);
	struct devcg_trace_event *e;

	if (!w)
		return;
	e = event_reserve();
	if (e) {
		e->type = DEVCG_EV_CGROUP_WRITE;
		fill_task(e, source);
		e->ts_ns = w->ts;
		e->ts_exit_ns = bpf_ktime_get_ns();
		e->ret = ret;
		e->write.target = w->target;
		e->write.file = w->file;
		e->write.len = w->len;
		if (w->len > DEVCG_EV_DATA)
			e->flags |= DEVCG_EVF_TRUNCATED;
		__builtin_memcpy(e->write.data, w->data, DEVCG_EV_DATA);
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&pending_writes, &tid);
}

#endif

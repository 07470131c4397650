/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What devcg trace does at bpf(2) and at the open syscalls, whichever hook
 * calls it: the syscall tracepoints (devcg_trace_tp.bpf.c) or fentry/fexit
 * on the syscalls themselves (devcg_trace_sys.bpf.c), which spare every
 * other syscall the tracing slow path. Include after trace_common.h.
 */
#ifndef DEVCG_TRACE_SYSCALLS_H
#define DEVCG_TRACE_SYSCALLS_H

#define CMD_PROG_ATTACH 8
#define CMD_PROG_DETACH 9
#define CMD_LINK_CREATE 28
#define CMD_LINK_UPDATE 29
#define CMD_LINK_DETACH 34
#define ATTACH_CGROUP_DEVICE 6
#define F_REPLACE (1U << 2) /* BPF_F_REPLACE */

/* bpf(2): from entry (the fds are valid) to return (the result). */
struct pending_bpf {
	__u64 ts;
	__u64 target;
	__u32 cmd;
	__u32 attach_flags;
	__u32 prog_id;
	__u32 replace_id;
	__u32 link_id;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct pending_bpf);
} pending_bpfs SEC(".maps");

static __always_inline __u32 prog_id_of(int fd)
{
	struct file *f = fd_file(fd);
	struct bpf_prog *prog;

	/* a detach may pass no program fd at all (kernel: "detach the one
	 * program"); then the fd is whatever it is, not a program */
	if (!anon_file_is(f, "bpf-prog", 8))
		return 0;
	prog = BPF_CORE_READ(f, private_data);
	return prog ? BPF_CORE_READ(prog, aux, id) : 0;
}

static __always_inline __u64 cgroup_id_of(int fd)
{
	struct file *f = fd_file(fd);

	/* a cgroup2 directory's inode number is its cgroup id (kernfs id) */
	return f ? BPF_CORE_READ(f, f_inode, i_ino) : 0;
}

/* Before 6.x moved it into struct bpf_link, the attach type of a cgroup
 * link lived in struct bpf_cgroup_link. */
struct bpf_cgroup_link___old {
	struct bpf_link link;
	struct cgroup *cgroup;
	enum bpf_attach_type type;
} __attribute__((preserve_access_index));

/* A cgroup device link behind FD: fills the ids, returns 1. */
static __always_inline int device_link(int fd, struct pending_bpf *p)
{
	struct file *f = fd_file(fd);
	struct bpf_link *link;
	struct bpf_cgroup_link *cl;
	__u32 type;

	if (!anon_file_is(f, "bpf_link", 8))
		return 0;
	link = BPF_CORE_READ(f, private_data);
	if (!link || BPF_CORE_READ(link, type) != BPF_LINK_TYPE_CGROUP)
		return 0;
	if (bpf_core_field_exists(struct bpf_link, attach_type))
		type = BPF_CORE_READ(link, attach_type);
	else
		type = BPF_CORE_READ((struct bpf_cgroup_link___old *)link, type);
	if (type != ATTACH_CGROUP_DEVICE)
		return 0;
	cl = (struct bpf_cgroup_link *)link;
	p->link_id = BPF_CORE_READ(link, id);
	p->prog_id = BPF_CORE_READ(link, prog, aux, id);
	p->target = BPF_CORE_READ(cl, cgroup, kn, id);
	return 1;
}

/* At entry to bpf(2) with CMD and the user's ATTR: remember a change of a
 * cgroup device program until the exit. */
static __always_inline void bpf_enter(__u32 cmd, const void *attr)
{
	__u32 a[5] = {};
	struct pending_bpf p = { .cmd = cmd };
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (cmd != CMD_PROG_ATTACH && cmd != CMD_PROG_DETACH && cmd != CMD_LINK_CREATE &&
	    cmd != CMD_LINK_UPDATE && cmd != CMD_LINK_DETACH)
		return;
	if (bpf_probe_read_user(a, sizeof(a), attr)) {
		count_lost(DEVCG_LOST_READ);
		return;
	}
	if (cmd == CMD_PROG_ATTACH || cmd == CMD_PROG_DETACH) {
		/* target_fd, attach_bpf_fd, attach_type, attach_flags, replace_bpf_fd */
		if (a[2] != ATTACH_CGROUP_DEVICE)
			return;
		p.target = cgroup_id_of((int)a[0]);
		p.prog_id = prog_id_of((int)a[1]);
		p.attach_flags = a[3];
		if (cmd == CMD_PROG_ATTACH && (a[3] & F_REPLACE))
			p.replace_id = prog_id_of((int)a[4]);
	} else if (cmd == CMD_LINK_CREATE) {
		/* prog_fd, target_fd, attach_type, flags */
		if (a[2] != ATTACH_CGROUP_DEVICE)
			return;
		p.prog_id = prog_id_of((int)a[0]);
		p.target = cgroup_id_of((int)a[1]);
		p.attach_flags = a[3];
	} else if (cmd == CMD_LINK_UPDATE) {
		/* link_fd, new_prog_fd, flags, old_prog_fd */
		if (!device_link((int)a[0], &p))
			return;
		p.replace_id = p.prog_id;
		p.prog_id = prog_id_of((int)a[1]);
		p.attach_flags = a[2];
	} else if (!device_link((int)a[0], &p)) { /* LINK_DETACH: link_fd */
		return;
	}
	p.ts = bpf_ktime_get_ns();
	if (bpf_map_update_elem(&pending_bpfs, &tid, &p, BPF_ANY))
		count_lost(DEVCG_LOST_RINGBUF);
}

/* At its exit, with RET: the change and its result, as one event. */
static __always_inline void bpf_exit(long ret, __u32 src)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct pending_bpf *p = bpf_map_lookup_elem(&pending_bpfs, &tid);
	struct devcg_trace_event *e;

	if (!p)
		return;
	e = event_reserve();
	if (e) {
		e->type = DEVCG_EV_BPF_PROG_CHANGE;
		fill_task(e, src);
		e->ts_ns = p->ts;
		e->ts_exit_ns = bpf_ktime_get_ns();
		e->ret = ret;
		e->bpf.target = p->target;
		e->bpf.cmd = p->cmd;
		e->bpf.attach_flags = p->attach_flags;
		e->bpf.prog_id = p->prog_id;
		e->bpf.replace_id = p->replace_id;
		e->bpf.link_id = p->link_id;
		e->bpf.pad = 0;
		bpf_ringbuf_submit(e, 0);
	}
	bpf_map_delete_elem(&pending_bpfs, &tid);
}

/*
 * Opens: only the return matters, and only EPERM. The path and the flags
 * are read back from the syscall's saved registers, so that successful
 * opens cost one compare and no map update at entry.
 */
enum open_call { OPEN, OPENAT, OPENAT2 };

static __always_inline void open_denied(long ret, enum open_call call, __u32 src)
{
	/* openat and openat2 resolve a relative path against their dirfd */
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(task);
	struct devcg_trace_event *e;
	const char *path;
	__u64 flags = 0;
	long n;

	e = denial_reserve();
	if (!e)
		return;
	e->type = DEVCG_EV_OPEN_DENIED;
	fill_task(e, src);
	e->ts_ns = e->ts_exit_ns = bpf_ktime_get_ns();
	e->ret = ret;
	path = (const char *)(call != OPEN ? BPF_CORE_READ(regs, si) : BPF_CORE_READ(regs, di));
	e->open.dirfd = call != OPEN ? (__s32)BPF_CORE_READ(regs, di) : -100; /* AT_FDCWD */
	/* open(path, flags), openat(dirfd, path, flags), openat2(dirfd, path,
	 * how): struct open_how starts with its u64 flags */
	if (call == OPEN)
		flags = BPF_CORE_READ(regs, si);
	else if (call == OPENAT)
		flags = BPF_CORE_READ(regs, dx);
	else if (bpf_probe_read_user(&flags, sizeof(flags), (const void *)BPF_CORE_READ(regs, dx)))
		count_lost(DEVCG_LOST_READ);
	e->open.oflags = (__u32)flags;
	n = bpf_probe_read_user_str(e->open.path, sizeof(e->open.path), path);
	if (n < 0) {
		count_lost(DEVCG_LOST_READ);
		n = 0;
		e->open.path[0] = '\0';
	}
	e->open.len = (__u32)n;
	if (n == sizeof(e->open.path))
		e->flags |= DEVCG_EVF_TRUNCATED;
	bpf_ringbuf_submit(e, 0);
}

#endif

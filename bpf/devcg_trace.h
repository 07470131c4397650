/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * devcg trace: the one event struct that every trace program fills (the
 * syscall-tracepoint, kprobe and fentry variants alike) and user space
 * reads from the ring buffer. Fixed-width fields only, no pointers.
 */
#ifndef DEVCG_TRACE_H
#define DEVCG_TRACE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum devcg_ev_type {
	DEVCG_EV_CGROUP_WRITE = 1,    /* a write to a v1 devices.allow/deny or freezer.state */
	DEVCG_EV_BPF_PROG_CHANGE = 2, /* bpf(2) on a cgroup device program */
	DEVCG_EV_OPEN_DENIED = 3,     /* open/openat/openat2 returned EPERM */
	DEVCG_EV_DEV_CHECK = 4,       /* the kernel's permission check denied (kprobe/fentry) */
};

enum devcg_ev_file {
	DEVCG_FILE_DEVICES_ALLOW = 1,
	DEVCG_FILE_DEVICES_DENY = 2,
	DEVCG_FILE_FREEZER_STATE = 3,
};

/* Which hook produced an event. */
enum devcg_ev_source {
	DEVCG_SRC_TRACEPOINT = 1,
	DEVCG_SRC_KPROBE = 2,
	DEVCG_SRC_FENTRY = 3,
};

/* Counters of what could not be reported (a per-CPU array). */
enum devcg_lost {
	DEVCG_LOST_RINGBUF = 0, /* ring buffer full */
	DEVCG_LOST_READ = 1,    /* user or kernel memory could not be read */
	DEVCG_LOST_MAX = 2,
};

/* The bpf(2) commands traced (values of the kernel's enum bpf_cmd). */
enum devcg_bpf_cmd {
	DEVCG_CMD_PROG_ATTACH = 8,
	DEVCG_CMD_PROG_DETACH = 9,
	DEVCG_CMD_LINK_CREATE = 28,
	DEVCG_CMD_LINK_UPDATE = 29,
	DEVCG_CMD_LINK_DETACH = 34,
};

#define DEVCG_EV_DATA 64
#define DEVCG_EV_PATH 128

struct devcg_trace_event {
	__u32 type;   /* enum devcg_ev_type */
	__u32 source; /* enum devcg_ev_source */
	__u64 ts_ns;      /* syscall or function entry (CLOCK_MONOTONIC) */
	__u64 ts_exit_ns; /* its return */
	__u32 pid;
	__u32 tid;
	__u32 ppid;
	__u32 flags; /* DEVCG_EVF_* */
	char comm[16];
	char pcomm[16];
	__u64 cgroup_id;  /* the task's cgroup v2 id */
	__u64 devices_cg; /* the task's v1 devices cgroup (kernfs id), 0 if none */
	__s64 ret;
	union {
		struct {
			__u64 target; /* kernfs id of the cgroup written to */
			__u32 file;   /* enum devcg_ev_file */
			__u32 len;    /* bytes written (the data is cut at 64) */
			char data[DEVCG_EV_DATA];
		} write;
		struct {
			__u64 target; /* cgroup id (v2) */
			__u32 cmd;    /* BPF_PROG_ATTACH, BPF_LINK_UPDATE, ... */
			__u32 attach_flags;
			__u32 prog_id;    /* the program attached, detached or linked */
			__u32 replace_id; /* BPF_F_REPLACE or BPF_LINK_UPDATE old program */
			__u32 link_id;
			__u32 pad;
		} bpf;
		struct {
			__u32 len;
			__s32 dirfd; /* AT_FDCWD (-100) or the openat dirfd */
			__u32 oflags; /* the open flags (O_ACCMODE, O_TRUNC, ...) */
			char path[DEVCG_EV_PATH];
		} open;
		struct {
			__u32 type; /* 1 block, 2 char */
			__u32 major;
			__u32 minor;
			__u32 access; /* 1 mknod, 2 read, 4 write */
		} check;
	};
};

#define DEVCG_EVF_TRUNCATED 1 /* data or path was cut */

#endif

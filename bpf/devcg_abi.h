/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The compiled policy as the device filter and user space both see it:
 * the one definition of the filter's config, map key and value, and audit
 * event. Fixed-width fields only, no pointers.
 */
#ifndef DEVCG_ABI_H
#define DEVCG_ABI_H

#include <linux/types.h>

/* "devcgpol" in the config tells our filter from any other device program. */
#define DEVCG_MAGIC 0x6c6f706763766564ULL
#define DEVCG_ABI_VERSION 1
#define DEVCG_PROG_NAME "devcg_filter"
#define DEVCG_PROG_NAME_AUDIT "devcg_audit"

/*
 * Which key shapes the exception map holds, one bit per (type, shape), so
 * the filter looks up only shapes that exist: bit = type_slot * 4 + shape,
 * type_slot 0 for block and 1 for char; shape bit 1 means major is '*',
 * shape bit 0 means minor is '*'.
 */
#define DEVCG_SHAPE_BIT(type, major_any, minor_any) \
	(1u << (((type) == 2 ? 4 : 0) + ((major_any) ? 2 : 0) + ((minor_any) ? 1 : 0)))

/* Read-only config of one filter version (the program's .rodata). */
struct devcg_config {
	__u64 magic;
	__u32 abi;
	__u32 default_allow; /* 1: allow unless an exception overlaps */
	__u32 shapes;        /* DEVCG_SHAPE_BIT()s present in the map */
	__u32 count;         /* exceptions in the map */
	__u32 audit;         /* report denials to the audit ring buffer */
	__u32 pad;
};

/* One exception: the key is unique, as in the kernel's list. */
struct devcg_key {
	__u32 type; /* 1 block, 2 char: BPF_DEVCG_DEV_* */
	__u32 major; /* 0xffffffff for '*' */
	__u32 minor;
};

struct devcg_value {
	__u32 access; /* BPF_DEVCG_ACC_* bits */
};

/* A denial, as the filter reports it with --audit. */
struct devcg_audit_event {
	__u64 ts_ns;
	__u64 cgroup_id;
	__u32 pid;
	__u32 tid;
	__u32 type;
	__u32 major;
	__u32 minor;
	__u32 access;
	__u32 decided; /* 1: the exception below decided; 0: the default */
	struct devcg_key decider;
	__u32 decider_access;
	char comm[16];
};

#endif

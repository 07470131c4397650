/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The compiled policy as the device filter and user space both see it:
 * the one definition of the filter's policy value and audit event.
 * Fixed-width fields only, no pointers.
 */
#ifndef DEVCG_ABI_H
#define DEVCG_ABI_H

#include <linux/types.h>

/* "devcgpol" in the policy tells our filter from any other device program. */
#define DEVCG_MAGIC 0x6c6f706763766564ULL
/* 2: the policy is one sorted array in one frozen map value (1: a hash
 * map and a .rodata config); a filter of another ABI counts as foreign */
#define DEVCG_ABI_VERSION 2
#define DEVCG_PROG_NAME "devcg_filter"
#define DEVCG_PROG_NAME_AUDIT "devcg_audit"
#define DEVCG_POLICY_MAP "devcg_policy"

/*
 * The exceptions are kept in segments, one per (type, shape), so that a
 * request is looked up only in the shapes that exist: segment = type_slot
 * * 4 + shape, type_slot 0 for block and 1 for char; shape bit 1 means
 * major is '*', shape bit 0 means minor is '*'. A last segment holds the
 * exceptions no request can match (a major above 4095 or a minor above
 * 2^20 - 1: the kernel's dev_t has 12 and 20 bits), kept to be read back.
 */
#define DEVCG_SEGMENT(type, major_any, minor_any) \
	(((type) == 2 ? 4 : 0) + ((major_any) ? 2 : 0) + ((minor_any) ? 1 : 0))
#define DEVCG_SEGMENT_NEVER 8
#define DEVCG_SEGMENTS 9
#define DEVCG_MAJOR_BITS 12
#define DEVCG_MINOR_BITS 20
/* The search key of a request or an exception within its segment: the
 * parts that are not '*', major above minor, in 32 bits. */
#define DEVCG_KEY(major, minor) (((__u32)(major) << DEVCG_MINOR_BITS) | (__u32)(minor))

/* The start of the policy map's one value. */
struct devcg_policy_head {
	__u64 magic;
	__u32 abi;
	__u32 default_allow; /* 1: allow unless an exception overlaps */
	__u32 count;         /* entries after the head */
	__u32 audit;         /* the filter reports denials to the audit ring */
	__u32 start[DEVCG_SEGMENTS]; /* first entry of each segment */
	__u32 len[DEVCG_SEGMENTS];   /* its entries, sorted by key */
};

/* One exception: (type, major, minor) is unique, as in the kernel's list;
 * '*' is 0xffffffff. KEY orders its segment. */
struct devcg_entry {
	__u32 key;
	__u32 major;
	__u32 minor;
	__u16 type;   /* 1 block, 2 char: BPF_DEVCG_DEV_* */
	__u16 access; /* BPF_DEVCG_ACC_* bits */
};

/* The whole value: value_size is sizeof(head) + count * sizeof(entry). */
struct devcg_policy_value {
	struct devcg_policy_head head;
	struct devcg_entry entries[];
};

/* The exception that decided a denial, in an audit event. */
struct devcg_key {
	__u32 type;
	__u32 major;
	__u32 minor;
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

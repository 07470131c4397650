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
/* 2: the policy is a hash table in the one value of one frozen array map
 * (1: a hash map and a .rodata config); a filter of another ABI counts as
 * foreign */
#define DEVCG_ABI_VERSION 2
#define DEVCG_PROG_NAME "devcg_filter"
#define DEVCG_PROG_NAME_AUDIT "devcg_audit"
#define DEVCG_POLICY_MAP "devcg_policy"

/*
 * Each exception belongs to a segment, one per (type, shape), so that a
 * request is looked up only in the shapes that exist: segment = type_slot
 * * 4 + shape, type_slot 0 for block and 1 for char; shape bit 1 means
 * major is '*', shape bit 0 means minor is '*'.
 */
#define DEVCG_SEGMENT(type, major_any, minor_any) \
	(((type) == 2 ? 4 : 0) + ((major_any) ? 2 : 0) + ((minor_any) ? 1 : 0))
/* A request's major and minor fit in 12 and 20 bits (the kernel's dev_t);
 * an exception with a larger one (not '*') can match no request. */
#define DEVCG_MAJOR_BITS 12
#define DEVCG_MINOR_BITS 20

/*
 * A slot of the table: 0 when empty, else the exception's access, its
 * segment + 1 and its key (the parts that are not '*', major above minor).
 * A lookup compares the low 40 bits.
 */
#define DEVCG_TAG(access, segment, major, minor)                                   \
	((__u64)(access) << 40 | (__u64)((segment) + 1) << 32 |                     \
	 (__u64)(major) << DEVCG_MINOR_BITS | (__u64)(minor))
#define DEVCG_TAG_KEY 0xffffffffffULL
/* A slot's segment (0 to 7; an empty slot gives more) */
#define DEVCG_TAG_SEGMENT(tag) ((unsigned int)(((tag) >> 32) & 0xff) - 1)
/*
 * Where a key lies is the writer's own business: each version's program is
 * written for its table (user/lib/filter/program.c), with the multiplier of the
 * hash it was filled under among its instructions, and a reader scans every
 * slot. The multipliers tried start from this one (2^32 / the golden
 * ratio).
 */
#define DEVCG_HASH_MULT 0x9e3779b1U
/* a hash table's keys lie fewer than this many slots past their first;
 * where no multiplier and size tried gives that (keys chosen against
 * them), the table is sorted by key instead, and a lookup is a binary
 * search: head.probes, more than this, says so */
#define DEVCG_MAX_PROBES 8

/* The start of the policy map's one value. */
struct devcg_policy_head {
	__u64 magic;
	__u32 abi;
	__u32 default_allow; /* 1: allow unless an exception overlaps */
	__u32 count;         /* exceptions: used slots and the others */
	__u32 audit;         /* the filter reports denials to the audit ring */
	__u32 present;       /* 1 << segment for each segment with exceptions */
	__u32 bits;          /* the table has 1 << bits slots */
	__u32 probes;        /* a lookup looks at most at this many slots */
	__u32 others;        /* exceptions that can match no request */
};

/* One exception that no request can match ('*' is 0xffffffff), after the
 * table, kept so that the policy reads back whole. */
struct devcg_entry {
	__u32 type; /* 1 block, 2 char: BPF_DEVCG_DEV_* */
	__u32 major;
	__u32 minor;
	__u32 access; /* BPF_DEVCG_ACC_* bits */
};

/* The whole value: the head, 1 << bits slots (linear probing, or sorted
 * by key with the empty ones first), then the others as struct
 * devcg_entry. */
struct devcg_policy_value {
	struct devcg_policy_head head;
	__u64 slot[];
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

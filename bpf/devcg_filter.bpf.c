// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device filter: a BPF_CGROUP_DEVICE program deciding each request as
 * devcgroup_legacy_check_permission() in security/device_cgroup.c does.
 * One program version per policy; its exceptions are one sorted array in
 * the one value of a map that belongs to it alone, filled and frozen
 * before the program is loaded.
 *
 * The map is read-only for the program and frozen, so the verifier reads
 * the head (default, segment starts and lengths) as constants
 * (bpf_map_direct_read() in kernel/bpf/verifier.c): it walks only the
 * segments that exist, each search for exactly as many halving steps as
 * its length needs, and proves every index within the value. The steps
 * are branchless, so that the verifier follows one path per search,
 * whatever the entries hold.
 *
 * User space loads these instructions itself (user/lib/filter.c): the
 * only relocations are the three maps below.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#include "devcg_abi.h"

/* value_size is set per version: the head and the entries */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, __u32);
	__type(value, struct devcg_policy_head);
} devcg_policy SEC(".maps");

/* Created only for the audit variant, which alone refers to them: the
 * denials, and how many of them did not fit in the ring. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} audit_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} audit_lost SEC(".maps");

/* hides a value from the compiler, so that arithmetic on it is not turned
 * back into a compare and a branch */
#define opaque(x) asm volatile("" : "+r"(x))

static __always_inline void audit(struct bpf_cgroup_dev_ctx *ctx, __u32 type, __u32 access,
				  const struct devcg_entry *ex)
{
	struct devcg_audit_event *e;
	__u64 id;

	e = bpf_ringbuf_reserve(&audit_events, sizeof(*e), 0);
	if (!e) {
		__u32 zero = 0;
		__u64 *lost = bpf_map_lookup_elem(&audit_lost, &zero);

		if (lost)
			(*lost)++;
		return;
	}
	id = bpf_get_current_pid_tgid();
	e->ts_ns = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->type = type;
	e->major = ctx->major;
	e->minor = ctx->minor;
	e->access = access;
	e->decided = ex != 0;
	if (ex) {
		e->decider.type = ex->type;
		e->decider.major = ex->major;
		e->decider.minor = ex->minor;
		e->decider_access = ex->access;
	} else {
		__builtin_memset(&e->decider, 0, sizeof(e->decider));
		e->decider_access = 0;
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* The entry of segment SEG with KEY, or NULL. */
static __always_inline const struct devcg_entry *search(const struct devcg_policy_value *p, __u32 seg,
							__u64 key)
{
	__u64 base = p->head.start[seg], len = p->head.len[seg];
	const struct devcg_entry *e;

	if (!len)
		return 0;
	/* the last entry not above the key lies in [base, base + len); the
	 * verifier knows len, so the loop ends and every index is in range */
	while (len > 1) {
		__u64 half = len >> 1, ekey, step;

		ekey = p->entries[base + half].key;
		opaque(ekey);
		/* 1 when the entry is not above the key (both below 2^33, so the
		 * sign of the difference tells), applied by a multiply, not a
		 * branch or a mask of 0 or ~0, on which the verifier would fork */
		step = ((key - ekey) >> 63) ^ 1;
		opaque(step);
		base += half * step;
		len -= half;
	}
	e = &p->entries[base];
	return e->key == key ? e : 0;
}

static __always_inline int filter(struct bpf_cgroup_dev_ctx *ctx, const bool with_audit)
{
	__u32 type = ctx->access_type & 0xffff;
	__u32 access = ctx->access_type >> 16;
	const struct devcg_policy_value *p;
	const struct devcg_entry *e;
	__u32 zero = 0, first, shape;

	p = bpf_map_lookup_elem(&devcg_policy, &zero);
	if (!p)
		return 0;
	/* the type's first segment as a constant on each path */
	if (type == BPF_DEVCG_DEV_CHAR)
		first = DEVCG_SEGMENT(BPF_DEVCG_DEV_CHAR, 0, 0);
	else if (type == BPF_DEVCG_DEV_BLOCK)
		first = DEVCG_SEGMENT(BPF_DEVCG_DEV_BLOCK, 0, 0);
	else
		goto by_default;
	/*
	 * One key shape after another (exact, minor '*', major '*', both):
	 * on default allow an overlapping access bit denies, on default deny
	 * one exception must hold every requested bit. A loop, not four
	 * copies: the verifier walks it once per shape all the same, and a
	 * short program loads faster.
	 */
#pragma clang loop unroll(disable)
	for (shape = 0; shape < 4; shape++) {
		/* a request's major and minor fit in 12 and 20 bits (dev_t);
		 * in 64 bits, any other would match nothing */
		e = search(p, first + shape, ((__u64)(shape & 2 ? 0 : ctx->major) << DEVCG_MINOR_BITS) |
						     (shape & 1 ? 0 : ctx->minor));
		if (!e)
			continue;
		if (p->head.default_allow) {
			if (!(e->access & access))
				continue;
			if (with_audit)
				audit(ctx, type, access, e);
			return 0;
		}
		if ((access & ~e->access) == 0)
			return 1;
	}
by_default:
	if (!p->head.default_allow && with_audit)
		audit(ctx, type, access, 0);
	return p->head.default_allow;
}

/* Two variants, so that a filter without --audit carries no ring buffer;
 * user space loads one of them. */
SEC("cgroup/dev")
int devcg_filter(struct bpf_cgroup_dev_ctx *ctx)
{
	return filter(ctx, false);
}

SEC("cgroup/dev")
int devcg_audit(struct bpf_cgroup_dev_ctx *ctx)
{
	return filter(ctx, true);
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device filter: a BPF_CGROUP_DEVICE program deciding each request as
 * devcgroup_legacy_check_permission() in security/device_cgroup.c does.
 * One program version per policy; its exceptions are a hash table in the
 * one value of a map that belongs to it alone, filled and frozen before
 * the program is loaded.
 *
 * The map is read-only for the program and frozen, so the verifier reads
 * the head (default, segments present, table size, longest probe) as
 * constants (bpf_map_direct_read() in kernel/bpf/verifier.c): it walks
 * only the segments that exist, each lookup for at most that many slots,
 * and proves every index within the value.
 *
 * User space loads these instructions itself (user/lib/filter.c): the
 * only relocations are the three maps below.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#include "devcg_abi.h"

/* hides a value from the compiler, so that it is not turned back into a
 * branch on what it was computed from */
#define opaque(x) asm volatile("" : "+r"(x))

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

/* SEG and TAG: the exception that decided, if any (TAG 0: the default). */
static __always_inline void audit(struct bpf_cgroup_dev_ctx *ctx, __u32 type, __u32 access, __u32 seg,
				  __u64 tag)
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
	e->decided = tag != 0;
	if (tag) {
		e->decider.type = seg >= 4 ? BPF_DEVCG_DEV_CHAR : BPF_DEVCG_DEV_BLOCK;
		e->decider.major = seg & 2 ? 0xffffffff : (__u32)(tag >> DEVCG_MINOR_BITS) & 0xfff;
		e->decider.minor = seg & 1 ? 0xffffffff : (__u32)tag & 0xfffff;
		e->decider_access = (__u32)(tag >> 40) & 0xff;
	} else {
		__builtin_memset(&e->decider, 0, sizeof(e->decider));
		e->decider_access = 0;
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* set in what lookup() returns when it found the key: bit 22 of the
 * access bits (tag >> 40), beyond any access the kernel passes */
#define FOUND (1ULL << 62)

/*
 * The tag of the slot holding WANT (segment + 1 and key) with FOUND set, or
 * 0. It looks at as many slots as the table's longest probe, all of them,
 * without a branch (a key lies that close to its own slot and nowhere
 * else, so at most one matches): the verifier walks each probe once, where
 * a loop left at the first empty slot had it walk what follows once per
 * way out (about twice the instructions, and 30% more time per load).
 */
static __always_inline __u64 lookup(const struct devcg_policy_value *p, __u64 want, __u64 shift, __u64 mask)
{
	__u64 at = (want * DEVCG_HASH_MULT) >> shift, found = 0, tag, differs, negated;
	__u32 i;

#pragma clang loop unroll(disable)
	for (i = 0; i < p->head.probes; i++) {
		tag = p->slot[(at + i) & mask];
		differs = (tag & DEVCG_TAG_KEY) ^ want;
		/* 1 unless equal: (x | -x) >> 63, with -x hidden so that the
		 * compiler does not turn it back into x != 0, a branch */
		negated = -differs;
		opaque(negated);
		differs = (differs | negated) >> 63;
		found |= (tag | FOUND) & (differs - 1);
	}
	return found;
}

static __always_inline int filter(struct bpf_cgroup_dev_ctx *ctx, const bool with_audit)
{
	__u32 type = ctx->access_type & 0xffff;
	__u64 access = ctx->access_type >> 16;
	__u64 major = ctx->major, minor = ctx->minor;
	__u64 first, shape, seg, want, beyond, tag, major_in, minor_in, shift, mask;
	const struct devcg_policy_value *p;
	__u32 zero = 0;

	p = bpf_map_lookup_elem(&devcg_policy, &zero);
	if (!p)
		return 0;
	if (type != BPF_DEVCG_DEV_CHAR && type != BPF_DEVCG_DEV_BLOCK)
		goto by_default;
	/* the type's first segment (block 0, char 4) without a branch, so that
	 * the verifier walks the shapes once for both types; a segment the
	 * type lacks is looked up all the same and holds no key */
	first = (type & BPF_DEVCG_DEV_CHAR) << 1;
	opaque(first);
	shift = 64 - p->head.bits;
	mask = (1ULL << p->head.bits) - 1;
	/*
	 * One key shape after another (exact, minor '*', major '*', both):
	 * on default allow an overlapping access bit denies, on default deny
	 * one exception must hold every requested bit. A loop, not four
	 * copies: a short program loads faster. A shape that neither type
	 * has is skipped by the verifier itself (the head is a constant to
	 * it); nothing else in the loop branches but a decision that
	 * returns, so the verifier walks each shape once.
	 */
#pragma clang loop unroll(disable)
	for (shape = 0; shape < 4; shape++) {
		if (!(p->head.present & (0x11u << shape)))
			continue;
		seg = first + shape;
		/* all ones where the shape names the number, 0 for a '*' */
		major_in = ((shape >> 1) & 1) - 1;
		minor_in = (shape & 1) - 1;
		opaque(major_in);
		opaque(minor_in);
		want = (seg + 1) << 32 | (major << DEVCG_MINOR_BITS & major_in) | (minor & minor_in);
		/* a number beyond dev_t's can only meet a '*': bits above the
		 * key, which no slot holds */
		beyond = (major >> DEVCG_MAJOR_BITS & major_in) | (minor >> DEVCG_MINOR_BITS & minor_in);
		tag = lookup(p, want | beyond << 44, shift, mask);
		if (p->head.default_allow) {
			if (!((tag >> 40) & access))
				continue;
			if (with_audit)
				audit(ctx, type, (__u32)access, (__u32)seg, tag);
			return 0;
		}
		/* found, and every requested bit held */
		if (((access | FOUND >> 40) & ~(tag >> 40)) == 0)
			return 1;
	}
by_default:
	if (!p->head.default_allow && with_audit)
		audit(ctx, type, (__u32)access, 0, 0);
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

// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The device filter: a BPF_CGROUP_DEVICE program deciding each request as
 * devcgroup_legacy_check_permission() in security/device_cgroup.c does.
 * One program version per policy; its exceptions live in a hash map that
 * belongs to it alone, filled and frozen before attach, so the cost per
 * access is at most four lookups whatever the number of rules.
 */
#include <linux/bpf.h>
#include <stdbool.h>
#include <bpf/bpf_helpers.h>

#include "devcg_abi.h"

const volatile struct devcg_config cfg = { .magic = DEVCG_MAGIC, .abi = DEVCG_ABI_VERSION };

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* sized to the policy before load */
	__uint(map_flags, BPF_F_RDONLY_PROG);
	__type(key, struct devcg_key);
	__type(value, struct devcg_value);
} exceptions SEC(".maps");

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

static __always_inline void audit(struct bpf_cgroup_dev_ctx *ctx, __u32 type, __u32 access,
				  const struct devcg_key *key, const struct devcg_value *val)
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
	e->decided = key != 0;
	if (key) {
		e->decider = *key;
		e->decider_access = val->access;
	} else {
		__builtin_memset(&e->decider, 0, sizeof(e->decider));
		e->decider_access = 0;
	}
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, 0);
}

/* Look up one key shape; on default allow an overlapping access bit denies,
 * on default deny one exception must hold every requested bit. Returns 1
 * when this exception decides the request. */
static __always_inline int decide(struct bpf_cgroup_dev_ctx *ctx, __u32 type, __u32 access,
				  __u32 major_any, __u32 minor_any, const bool with_audit)
{
	struct devcg_key key = {
		.type = type,
		.major = major_any ? 0xffffffff : ctx->major,
		.minor = minor_any ? 0xffffffff : ctx->minor,
	};
	struct devcg_value *val;

	if (!(cfg.shapes & DEVCG_SHAPE_BIT(type, major_any, minor_any)))
		return 0;
	val = bpf_map_lookup_elem(&exceptions, &key);
	if (!val)
		return 0;
	if (cfg.default_allow) {
		if (!(val->access & access))
			return 0;
		if (with_audit)
			audit(ctx, type, access, &key, val);
		return 1;
	}
	return (access & ~val->access) == 0;
}

static __always_inline int filter(struct bpf_cgroup_dev_ctx *ctx, const bool with_audit)
{
	__u32 type = ctx->access_type & 0xffff;
	__u32 access = ctx->access_type >> 16;

	if (decide(ctx, type, access, 0, 0, with_audit) || decide(ctx, type, access, 0, 1, with_audit) ||
	    decide(ctx, type, access, 1, 0, with_audit) || decide(ctx, type, access, 1, 1, with_audit))
		return !cfg.default_allow;
	if (!cfg.default_allow && with_audit)
		audit(ctx, type, access, 0, 0);
	return cfg.default_allow;
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

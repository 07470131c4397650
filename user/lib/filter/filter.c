// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * One filter version: the device program with its own policy map, filled
 * and frozen before the program is loaded; and the way back, reading a
 * policy from an attached program alone.
 *
 * A version is one map, one update, a freeze and one BPF_PROG_LOAD of
 * instructions written for its value (program.c). The value is the
 * policy: a head, a hash table of the exceptions (or, where keys were
 * chosen against its hash, the same slots sorted), and the exceptions no
 * request can match; how the table was filled (its hash multiplier, how
 * far each shape's keys lie from their first slot) is for the program
 * alone, a reader scans every slot.
 */
#include "filter/filter.h"
#include "devcg_abi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define VERIFIER_LOG_BYTES (64 * 1024)
#define AUDIT_RING_BYTES (256 * 1024)

/* the maps a version may use */
enum { MAP_POLICY, MAP_AUDIT_EVENTS, MAP_AUDIT_LOST, MAP_KINDS };

/* Can a request match EX? Its segment then (see devcg_abi.h). Without a
 * branch on the exception (random ones mispredict): its tag, or 0 when no
 * request can match it. */
static inline __u64 tag_of(const struct devcg_exception *ex)
{
	bool major_any = ex->major == DEVCG_ANY, minor_any = ex->minor == DEVCG_ANY;
	__u32 major = major_any ? 0 : ex->major, minor = minor_any ? 0 : ex->minor;
	unsigned int seg = DEVCG_SEGMENT(ex->type, major_any, minor_any);
	bool fits = !(major >> DEVCG_MAJOR_BITS) & !(minor >> DEVCG_MINOR_BITS);

	return fits ? DEVCG_TAG(ex->access, seg, major, minor) : 0;
}

/* devcg_filter_value(), the value from devcg_filter_take() when KEEP
 * (then devcg_filter_give() it back) */
static int filter_value(const struct devcg_policy *policy, bool audit, struct devcg_policy_value **out,
			size_t *size, struct devcg_table *t, bool keep)
{
	size_t n = devcg_policy_count(policy), i, k = 0, others;
	struct devcg_exception *ex = devcg_filter_take(n * sizeof(*ex));
	__u64 *tags = devcg_filter_take(n * sizeof(*tags));
	struct devcg_policy_value *v = NULL;
	struct devcg_entry *far, *rest;
	unsigned int present = 0;
	__u64 any[2];
	size_t nany = 0;
	int ret;

	if (!ex || !tags) {
		devcg_filter_give(ex);
		devcg_filter_give(tags);
		return -ENOMEM;
	}
	devcg_policy_collect(policy, ex);
	/* one pass: the '*:*' keys (at most one a type) go last (any_any()):
	 * no other key is moved for them */
	for (i = 0; i < n; i++) {
		__u64 tag = tag_of(&ex[i]);
		unsigned int shape = DEVCG_TAG_SEGMENT(tag) & 3;

		if (!tag)
			continue;
		present |= 1u << DEVCG_TAG_SEGMENT(tag);
		if (shape == 3 && nany < 2)
			any[nany++] = tag;
		else
			tags[k++] = tag;
	}
	for (i = 0; i < nany; i++)
		tags[k++] = any[i];
	others = n - k;
	/* the exceptions no request can match, set aside so that EX's
	 * memory is given back before the table is filled (its block may
	 * hold the table's scratch) */
	rest = devcg_filter_take(others * sizeof(*rest));
	if (!rest) {
		devcg_filter_give(ex);
		devcg_filter_give(tags);
		return -ENOMEM;
	}
	for (i = 0, others = 0; i < n && others < n - k; i++)
		if (!tag_of(&ex[i]))
			rest[others++] = (struct devcg_entry){ .type = ex[i].type, .major = ex[i].major,
							       .minor = ex[i].minor, .access = ex[i].access };
	devcg_filter_give(ex);
	memset(t, 0, sizeof(*t));
	t->any_access[0] = t->any_access[1] = -1;
	ret = devcg_table_fill(tags, k, others, &v, size, t, keep);
	devcg_filter_give(tags);
	if (ret) {
		devcg_filter_give(rest);
		return ret;
	}
	far = (struct devcg_entry *)&v->slot[(size_t)1 << v->head.bits];
	if (others)
		memcpy(far, rest, others * sizeof(*rest));
	v->head.others = (__u32)others;
	devcg_filter_give(rest);
	v->head.magic = DEVCG_MAGIC;
	v->head.abi = DEVCG_ABI_VERSION;
	v->head.default_allow = devcg_policy_default_allow(policy);
	v->head.count = (__u32)n;
	v->head.audit = audit;
	v->head.present = present;
	*out = v;
	return 0;
}

int devcg_filter_value(const struct devcg_policy *policy, bool audit, struct devcg_policy_value **out,
		       size_t *size, struct devcg_table *t)
{
	return filter_value(policy, audit, out, size, t, false);
}

/* The policy map of one version, filled with V (SIZE bytes) and frozen:
 * from here on the policy of this version cannot change. */
static int policy_map(const struct devcg_policy_value *v, size_t size, const char *fail_at,
		      struct devcg_error *err)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_RDONLY_PROG);
	int fd, ret;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, DEVCG_POLICY_MAP, sizeof(__u32), (__u32)size, 1, &o);
	if (fd < 0)
		return devcg_err(err, -errno, "cannot create the policy map: %s",
				 devcg_why(-errno, DEVCG_CAPS_FILTER));
	if (devcg_fault(fail_at, "fill"))
		ret = devcg_err(err, -EIO, "injected failure at fill");
	else if (bpf_map_update_elem(fd, &(__u32){ 0 }, v, BPF_ANY))
		ret = devcg_err(err, -errno, "cannot fill the policy map: %s",
				devcg_why(-errno, DEVCG_CAPS_FILTER));
	else if (devcg_fault(fail_at, "freeze"))
		ret = devcg_err(err, -EIO, "cannot freeze the policy map: injected failure");
	else if (bpf_map_freeze(fd))
		ret = devcg_err(err, -errno, "cannot freeze the policy map: %s", strerror(errno));
	else
		ret = fd;
	if (ret < 0)
		close(fd);
	return ret;
}

/* The audit ring and loss count: those of AUDIT_FROM, so that a reader
 * (devcg trace) follows the cgroup across swaps, or new ones. */
static int audit_maps(int audit_from, int fds[MAP_KINDS], struct devcg_error *err)
{
	if (audit_from >= 0) {
		fds[MAP_AUDIT_EVENTS] = devcg_filter_audit_ring(audit_from);
		fds[MAP_AUDIT_LOST] = devcg_filter_audit_lost(audit_from);
	}
	if (fds[MAP_AUDIT_EVENTS] < 0)
		fds[MAP_AUDIT_EVENTS] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "audit_events", 0, 0,
						       AUDIT_RING_BYTES, NULL);
	if (fds[MAP_AUDIT_LOST] < 0 && fds[MAP_AUDIT_EVENTS] >= 0)
		fds[MAP_AUDIT_LOST] = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "audit_lost", sizeof(__u32),
						     sizeof(__u64), 1, NULL);
	if (fds[MAP_AUDIT_EVENTS] < 0 || fds[MAP_AUDIT_LOST] < 0)
		return devcg_err(err, -errno, "cannot create the audit maps: %s",
				 devcg_why(-errno, DEVCG_CAPS_FILTER));
	return 0;
}

/* The program for the value V on the maps FDS (user/lib/program.c),
 * loaded: a new fd, or a negative errno. */
static int load_program(const struct devcg_policy_value *v, const struct devcg_table *table, bool audit,
			const int fds[MAP_KINDS],
			const char *fail_at, struct devcg_error *err)
{
	const char *name = audit ? DEVCG_PROG_NAME_AUDIT : DEVCG_PROG_NAME;
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	struct bpf_insn *insns;
	char *log = NULL;
	size_t cnt;
	int fd, ret;

	ret = devcg_program_build(v, table, audit, fds, &insns, &cnt);
	if (ret == -E2BIG)
		return devcg_err(err, ret, "the policy's exceptions crowd its hash table: a lookup would read "
				 "more slots than one program can hold");
	if (ret)
		return devcg_err(err, ret, "cannot write the device filter's program: %s", strerror(-ret));
	/* a program the verifier must reject: the first instruction exits
	 * before R0 is set */
	if (devcg_fault(fail_at, "verifier"))
		insns[0] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	if (devcg_fault(fail_at, "load")) {
		errno = EIO;
		fd = -1;
	} else {
		fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "Dual BSD/GPL", insns, cnt, &o);
	}
	if (fd >= 0) {
		free(insns);
		return fd;
	}
	ret = -errno;
	/* the verifier's log only for a load that failed: loaded again with
	 * a buffer (a load without one is the fast path) */
	if (ret != -EPERM && ret != -EIO && (log = calloc(1, VERIFIER_LOG_BYTES))) {
		LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = log, .log_size = VERIFIER_LOG_BYTES,
			    .log_level = 1);

		fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "Dual BSD/GPL", insns, cnt, &lo);
		if (fd >= 0)
			close(fd); /* refused once, loaded now: still the first answer */
	}
	{
		size_t len = log ? strlen(log) : 0;
		const char *tail = len > 700 ? log + len - 700 : log ? log : "";

		devcg_err(err, ret, "cannot load the device filter: %s%s%s",
			  devcg_why(ret, DEVCG_CAPS_FILTER), *tail ? "; verifier log:\n" : "", tail);
	}
	free(log);
	free(insns);
	return ret;
}

int devcg_filter_load(const struct devcg_policy *policy, bool audit, int audit_from,
		      const char *fail_at, struct devcg_filter_version *out, struct devcg_error *err)
{
	int fds[MAP_KINDS] = { -1, -1, -1 }, ret, i;
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct devcg_policy_value *v = NULL;
	struct devcg_bpf_log bl;
	size_t size;
	struct devcg_table table;

	memset(out, 0, sizeof(*out));
	out->prog_fd = -1;
	if (devcg_policy_count(policy) > DEVCG_MAX_RULES)
		return devcg_err(err, -E2BIG, "the policy has %zu exceptions; at most %d fit",
				 devcg_policy_count(policy), DEVCG_MAX_RULES);
	if (filter_value(policy, audit, &v, &size, &table, true))
		return devcg_err(err, -ENOMEM, "out of memory");
	devcg_bpf_log_begin(&bl);
	ret = fds[MAP_POLICY] = policy_map(v, size, fail_at, err);
	if (ret >= 0 && audit)
		ret = audit_maps(audit_from, fds, err);
	if (ret >= 0)
		ret = out->prog_fd = load_program(v, &table, audit, fds, fail_at, err);
	devcg_filter_give(v);
	/* the program holds its maps from here on */
	for (i = 0; i < MAP_KINDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ret >= 0 && bpf_obj_get_info_by_fd(out->prog_fd, &info, &info_len))
		ret = devcg_err(err, -errno, "cannot read the filter's id: %s", strerror(errno));
	if (ret < 0) {
		if (out->prog_fd >= 0)
			close(out->prog_fd);
		out->prog_fd = -1;
		return devcg_bpf_log_end(&bl, ret, err);
	}
	out->prog_id = info.id;
	return devcg_bpf_log_end(&bl, 0, err);
}

int devcg_filter_load_program(int policy_map_fd, const void *value, struct devcg_error *err)
{
	int fds[MAP_KINDS] = { policy_map_fd, -1, -1 };

	struct devcg_table table;

	if (devcg_table_of(value, &table))
		return devcg_err(err, -ENOMEM, "out of memory");
	return load_program(value, &table, false, fds, NULL, err);
}

void devcg_filter_close(struct devcg_filter_version *v)
{
	if (v->prog_fd >= 0)
		close(v->prog_fd);
	v->prog_fd = -1;
}

/* A map named NAME of type TYPE of the program PROG_FD, as a new fd (with
 * its info in MI when given), or a negative errno. */
static int prog_map(int prog_fd, const char *name, __u32 type, struct bpf_map_info *mi_out)
{
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info), map_ids[8], i;

	info.nr_map_ids = 8;
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return -errno;
	for (i = 0; i < info.nr_map_ids && i < 8; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mi_len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(map_ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mi_len) && mi.type == type && !strcmp(mi.name, name)) {
			if (mi_out)
				*mi_out = mi;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

int devcg_filter_audit_ring(int prog_fd)
{
	return prog_map(prog_fd, "audit_events", BPF_MAP_TYPE_RINGBUF, NULL);
}

int devcg_filter_audit_lost(int prog_fd)
{
	return prog_map(prog_fd, "audit_lost", BPF_MAP_TYPE_PERCPU_ARRAY, NULL);
}

/* The policy of a frozen policy map's value V of SIZE bytes. */
static int read_value(const struct devcg_policy_value *v, size_t size, struct devcg_policy **out,
		      struct devcg_error *err)
{
	size_t n = v->head.count, i, k = 0, table = v->head.bits < 30 ? (size_t)1 << v->head.bits : 0;
	const struct devcg_entry *far = (const struct devcg_entry *)&v->slot[table];
	struct devcg_exception *ex;
	struct devcg_policy *policy;
	int ret;

	if (!table || size != sizeof(v->head) + table * sizeof(v->slot[0]) + v->head.others * sizeof(*far) ||
	    v->head.others > n)
		return devcg_err(err, -EBADMSG, "the filter holds %zu bytes for %zu exceptions", size, n);
	ex = calloc(n ? n : 1, sizeof(*ex));
	policy = devcg_policy_new();
	if (!ex || !policy) {
		free(ex);
		devcg_policy_free(policy);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < table && k <= n; i++) {
		__u64 tag = v->slot[i];
		unsigned int seg = DEVCG_TAG_SEGMENT(tag);

		if (!tag)
			continue;
		if (k == n || seg > 7) {
			k = n + 1;
			break;
		}
		ex[k++] = (struct devcg_exception){
			.type = seg >= 4 ? DEVCG_CHAR : DEVCG_BLOCK, .access = (uint8_t)(tag >> 40),
			.major = seg & 2 ? DEVCG_ANY : (uint32_t)(tag >> DEVCG_MINOR_BITS) & 0xfff,
			.minor = seg & 1 ? DEVCG_ANY : (uint32_t)tag & 0xfffff,
		};
	}
	for (i = 0; i < v->head.others && k < n; i++)
		ex[k++] = (struct devcg_exception){ .type = (uint8_t)far[i].type, .access = (uint8_t)far[i].access,
						    .major = far[i].major, .minor = far[i].minor };
	if (k != n || i != v->head.others) {
		free(ex);
		devcg_policy_free(policy);
		return devcg_err(err, -EBADMSG, "the filter holds another number of exceptions than it says (%zu)",
				 n);
	}
	ret = devcg_policy_set(policy, v->head.default_allow, ex, n, err);
	free(ex);
	if (ret)
		devcg_policy_free(policy);
	else
		*out = policy;
	return ret;
}

int devcg_filter_read(int prog_fd, struct devcg_policy **policy, bool *audit, struct devcg_error *err)
{
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct devcg_policy_value *v;
	struct bpf_map_info mi;
	int fd, ret = 0;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return devcg_err(err, -errno, "cannot read program info: %s", strerror(errno));
	if (info.type != BPF_PROG_TYPE_CGROUP_DEVICE ||
	    (strcmp(info.name, DEVCG_PROG_NAME) && strcmp(info.name, DEVCG_PROG_NAME_AUDIT)))
		return 0;
	fd = prog_map(prog_fd, DEVCG_POLICY_MAP, BPF_MAP_TYPE_ARRAY, &mi);
	/* a filter of another devcg ABI cannot be read back: it counts as
	 * foreign, so that it can still be shown, replaced or adopted */
	if (fd < 0 || mi.key_size != sizeof(__u32) || mi.max_entries != 1 ||
	    mi.value_size < sizeof(struct devcg_policy_head)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	v = malloc(mi.value_size);
	if (!v) {
		close(fd);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	if (bpf_map_lookup_elem(fd, &(__u32){ 0 }, v))
		ret = devcg_err(err, -errno, "cannot read the policy map: %s", strerror(errno));
	else if (v->head.magic == DEVCG_MAGIC && v->head.abi == DEVCG_ABI_VERSION) {
		ret = 1;
		if (audit)
			*audit = v->head.audit;
		if (policy && (ret = read_value(v, mi.value_size, policy, err)) == 0)
			ret = 1;
	}
	free(v);
	close(fd);
	return ret;
}

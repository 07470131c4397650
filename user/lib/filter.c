// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * One filter version: the device program with its own exception map,
 * loaded, filled and frozen before anyone attaches it; and the way back,
 * reading a policy from an attached program alone.
 */
#include "internal.h"
#include "devcg_abi.h"
#include "devcg_filter.skel.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define VERIFIER_LOG_BYTES (64 * 1024)

static void fill_config(const struct devcg_policy *policy, const struct devcg_exception *ex,
			size_t n, bool audit, struct devcg_config *cfg)
{
	size_t i;

	cfg->magic = DEVCG_MAGIC;
	cfg->abi = DEVCG_ABI_VERSION;
	cfg->default_allow = devcg_policy_default_allow(policy);
	cfg->count = (__u32)n;
	cfg->audit = audit;
	cfg->shapes = 0;
	for (i = 0; i < n; i++)
		cfg->shapes |= DEVCG_SHAPE_BIT(ex[i].type, ex[i].major == DEVCG_ANY,
					       ex[i].minor == DEVCG_ANY);
}

static int fill_map(int map_fd, const struct devcg_exception *ex, __u32 n, struct devcg_error *err)
{
	__u32 i, count = n;
	struct devcg_key *keys;
	struct devcg_value *vals;
	int ret = 0;

	if (!n)
		return 0;
	keys = calloc(n, sizeof(*keys));
	vals = calloc(n, sizeof(*vals));
	if (!keys || !vals) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		keys[i] = (struct devcg_key){ .type = ex[i].type, .major = ex[i].major, .minor = ex[i].minor };
		vals[i].access = ex[i].access;
	}
	/* one syscall for the whole policy */
	if (bpf_map_update_batch(map_fd, keys, vals, &count, NULL))
		ret = devcg_err(err, -errno, "cannot fill the exception map: %s",
				devcg_why(-errno, DEVCG_CAPS_FILTER));
	else if (count != n)
		ret = devcg_err(err, -EIO, "the exception map took %u of %u exceptions", count, n);
out:
	free(keys);
	free(vals);
	return ret;
}

int devcg_filter_load(const struct devcg_policy *policy, bool audit, int audit_from,
		      const char *fail_at, struct devcg_filter_version *out, struct devcg_error *err)
{
	size_t n = devcg_policy_count(policy);
	char *log = calloc(1, VERIFIER_LOG_BYTES);
	LIBBPF_OPTS(bpf_object_open_opts, open_opts, .kernel_log_buf = log,
		    .kernel_log_size = VERIFIER_LOG_BYTES);
	struct devcg_filter *skel = NULL;
	struct devcg_exception *ex = NULL;
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct devcg_bpf_log bl;
	int ret, map_fd;

	memset(out, 0, sizeof(*out));
	out->prog_fd = -1;
	if (!log)
		return devcg_err(err, -ENOMEM, "out of memory");
	devcg_bpf_log_begin(&bl);
	ex = calloc(n ? n : 1, sizeof(*ex));
	if (!ex) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto fail;
	}
	devcg_policy_collect(policy, ex);
	skel = devcg_filter__open_opts(&open_opts);
	if (!skel) {
		ret = devcg_err(err, -errno, "cannot open the device filter: %s",
				devcg_why(-errno, DEVCG_CAPS_FILTER));
		goto fail;
	}
	fill_config(policy, ex, n, audit, &skel->rodata->cfg);
	ret = bpf_map__set_max_entries(skel->maps.exceptions, n ? (__u32)n : 1);
	/* one variant is loaded; only the audit one has a ring buffer */
	if (!ret)
		ret = bpf_program__set_autoload(audit ? skel->progs.devcg_filter : skel->progs.devcg_audit,
						false) ?:
		      bpf_map__set_autocreate(skel->maps.audit_events, audit) ?:
		      bpf_map__set_autocreate(skel->maps.audit_lost, audit);
	/* a new version keeps the audit ring (and its loss count) of the one it
	 * replaces, so that a reader (devcg trace) follows the cgroup across swaps */
	if (!ret && audit && audit_from >= 0) {
		int ring = devcg_filter_audit_ring(audit_from), lost = devcg_filter_audit_lost(audit_from);

		if (ring >= 0)
			ret = bpf_map__reuse_fd(skel->maps.audit_events, ring);
		if (!ret && lost >= 0)
			ret = bpf_map__reuse_fd(skel->maps.audit_lost, lost);
		if (ring >= 0)
			close(ring);
		if (lost >= 0)
			close(lost);
	}
	if (ret) {
		devcg_err(err, ret, "cannot prepare the filter's maps: %s", strerror(-ret));
		goto fail;
	}
	if (!ret && devcg_fault(fail_at, "verifier")) {
		/* a program the verifier must reject: the first instruction exits
		 * before R0 is set (same length, so the BTF line info still fits) */
		struct bpf_program *prog = audit ? skel->progs.devcg_audit : skel->progs.devcg_filter;
		size_t cnt = bpf_program__insn_cnt(prog);
		struct bpf_insn *bad = calloc(cnt, sizeof(*bad));

		ret = bad ? 0 : -ENOMEM;
		if (bad) {
			memcpy(bad, bpf_program__insns(prog), cnt * sizeof(*bad));
			bad[0] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
			ret = bpf_program__set_insns(prog, bad, cnt);
			free(bad);
		}
	}
	if (!ret)
		ret = devcg_fault(fail_at, "load") ? -EIO : devcg_filter__load(skel);
	if (ret) {
		size_t len = strlen(log);
		const char *tail = len > 700 ? log + len - 700 : log;
		const char *why = devcg_why(ret, DEVCG_CAPS_FILTER);
		bool named = strstr(why, DEVCG_NEEDS_ROOT) != NULL;

		/* libbpf's words before the verifier's lines, then no more of them */
		devcg_err(err, ret, "cannot load the device filter: %s%s%s%s%s%s", why,
			  bl.len && !named ? " (libbpf: " : "", named ? "" : bl.text,
			  bl.len && !named ? ")" : "", *tail ? "; verifier log:\n" : "", tail);
		bl.len = 0;
		goto fail;
	}
	map_fd = bpf_map__fd(skel->maps.exceptions);
	ret = devcg_fault(fail_at, "fill") ? devcg_err(err, -EIO, "injected failure at fill")
					   : fill_map(map_fd, ex, (__u32)n, err);
	if (ret)
		goto fail;
	/* from here on the policy of this version cannot change */
	if (devcg_fault(fail_at, "freeze") || bpf_map_freeze(map_fd)) {
		ret = devcg_err(err, devcg_fault(fail_at, "freeze") ? -EIO : -errno,
				"cannot freeze the exception map: %s",
				devcg_fault(fail_at, "freeze") ? "injected failure" : strerror(errno));
		goto fail;
	}
	out->prog_fd = bpf_program__fd(audit ? skel->progs.devcg_audit : skel->progs.devcg_filter);
	if (bpf_obj_get_info_by_fd(out->prog_fd, &info, &info_len)) {
		ret = devcg_err(err, -errno, "cannot read the filter's id: %s", strerror(errno));
		goto fail;
	}
	out->prog_id = info.id;
	out->skel = skel;
	free(ex);
	free(log);
	return devcg_bpf_log_end(&bl, 0, err);
fail:
	devcg_filter__destroy(skel);
	free(ex);
	free(log);
	out->prog_fd = -1;
	return devcg_bpf_log_end(&bl, ret, err);
}

void devcg_filter_close(struct devcg_filter_version *v)
{
	devcg_filter__destroy(v->skel);
	v->skel = NULL;
	v->prog_fd = -1;
}

/* A map named NAME of the program PROG_FD, as a new fd, or a negative errno. */
static int prog_map(int prog_fd, const char *name, __u32 type)
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
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mi_len) && mi.type == type && !strcmp(mi.name, name))
			return fd;
		close(fd);
	}
	return -ENOENT;
}

int devcg_filter_audit_ring(int prog_fd)
{
	return prog_map(prog_fd, "audit_events", BPF_MAP_TYPE_RINGBUF);
}

int devcg_filter_audit_lost(int prog_fd)
{
	return prog_map(prog_fd, "audit_lost", BPF_MAP_TYPE_PERCPU_ARRAY);
}

/* Read the frozen exception map back into a policy. */
static int read_exceptions(int map_fd, const struct devcg_config *cfg, struct devcg_policy **out,
			   struct devcg_error *err)
{
	struct devcg_exception *ex = calloc(cfg->count ? cfg->count : 1, sizeof(*ex));
	struct devcg_key key, next;
	struct devcg_value val;
	struct devcg_policy *policy = devcg_policy_new();
	__u32 n = 0;
	void *prev = NULL;
	int ret = 0;

	if (!ex || !policy) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	while (!bpf_map_get_next_key(map_fd, prev, &next)) {
		if (n == cfg->count) {
			ret = devcg_err(err, -EBADMSG, "the filter holds more exceptions than it says");
			goto out;
		}
		if (bpf_map_lookup_elem(map_fd, &next, &val)) {
			ret = devcg_err(err, -errno, "cannot read the exception map: %s", strerror(errno));
			goto out;
		}
		ex[n++] = (struct devcg_exception){ .type = (uint8_t)next.type, .access = (uint8_t)val.access,
						    .major = next.major, .minor = next.minor };
		key = next;
		prev = &key;
	}
	if (n != cfg->count) {
		ret = devcg_err(err, -EBADMSG, "the filter holds %u exceptions, it says %u", n, cfg->count);
		goto out;
	}
	ret = devcg_policy_set(policy, cfg->default_allow, ex, n, err);
out:
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
	__u32 info_len = sizeof(info), map_ids[8], i;
	struct devcg_config cfg = { 0 };
	int cfg_fd = -1, exc_fd = -1, ret = 0;

	info.nr_map_ids = 8;
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return devcg_err(err, -errno, "cannot read program info: %s", strerror(errno));
	if (info.type != BPF_PROG_TYPE_CGROUP_DEVICE || info.nr_map_ids > 8 ||
	    (strcmp(info.name, DEVCG_PROG_NAME) && strcmp(info.name, DEVCG_PROG_NAME_AUDIT)))
		return 0;
	for (i = 0; i < info.nr_map_ids; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mi_len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(map_ids[i]);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mi_len)) {
			close(fd);
			continue;
		}
		if (mi.type == BPF_MAP_TYPE_ARRAY && mi.value_size == sizeof(cfg) && cfg_fd < 0 &&
		    strstr(mi.name, ".rodata"))
			cfg_fd = fd;
		else if (mi.type == BPF_MAP_TYPE_HASH && !strcmp(mi.name, "exceptions") &&
			 mi.key_size == sizeof(struct devcg_key) &&
			 mi.value_size == sizeof(struct devcg_value) && exc_fd < 0)
			exc_fd = fd;
		else
			close(fd);
	}
	if (cfg_fd >= 0 && exc_fd >= 0 && !bpf_map_lookup_elem(cfg_fd, &(__u32){ 0 }, &cfg) &&
	    cfg.magic == DEVCG_MAGIC) {
		/* a filter of another devcg ABI cannot be read back: it counts as
		 * foreign, so that it can still be shown, replaced or adopted */
		ret = cfg.abi == DEVCG_ABI_VERSION;
		if (ret && policy && (ret = read_exceptions(exc_fd, &cfg, policy, err)) == 0)
			ret = 1;
		if (audit)
			*audit = cfg.audit;
	}
	if (cfg_fd >= 0)
		close(cfg_fd);
	if (exc_fd >= 0)
		close(exc_fd);
	return ret;
}

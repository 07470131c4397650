// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The swap: put a new filter version in place of whatever device program
 * a cgroup has, with no moment of no filter or a deny-all one. The kernel
 * side is kernel/bpf/cgroup.c: with BPF_F_ALLOW_MULTI, BPF_F_REPLACE swaps
 * the named program in place (or fails with ENOENT when it is gone: our
 * compare-and-swap); in override and exclusive modes, attaching replaces
 * the one program in place.
 */
#include "internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define MAX_PROGS 64 /* BPF_CGROUP_MAX_PROGS */
#define CAS_RETRIES 1000

struct attached {
	uint32_t mode; /* enum devcg_attach_mode */
	uint32_t n;
	uint32_t ids[MAX_PROGS];
	int fds[MAX_PROGS];
	bool devcg[MAX_PROGS];
	bool audit[MAX_PROGS];
};

static const char *why(int code)
{
	return devcg_why(code, DEVCG_CAPS_FILTER);
}

uint32_t devcg_mode_of(uint32_t attach_flags)
{
	if (attach_flags & BPF_F_ALLOW_MULTI)
		return DEVCG_MODE_MULTI;
	if (attach_flags & BPF_F_ALLOW_OVERRIDE)
		return DEVCG_MODE_OVERRIDE;
	return DEVCG_MODE_EXCLUSIVE;
}

static void attached_close(struct attached *a)
{
	uint32_t i;

	for (i = 0; i < a->n; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	a->n = 0;
}

/* The device programs attached to the cgroup itself, with an fd for each;
 * with CLASSIFY, which of them are devcg filters (and audit ones). */
static int query_attached(int cg_fd, bool classify, struct attached *a, struct devcg_error *err)
{
	__u32 flags = 0, cnt = MAX_PROGS, i;

	memset(a, 0, sizeof(*a));
	if (bpf_prog_query(cg_fd, BPF_CGROUP_DEVICE, 0, &flags, a->ids, &cnt))
		return devcg_err(err, -errno, "cannot query device programs: %s", why(-errno));
	a->mode = devcg_mode_of(flags);
	for (i = 0; i < cnt; i++) {
		int ret;

		a->fds[i] = bpf_prog_get_fd_by_id(a->ids[i]);
		a->n = i + 1;
		if (a->fds[i] < 0) {
			/* detached and freed since the query: let the caller retry */
			ret = -errno;
			attached_close(a);
			return devcg_err(err, ret == -ENOENT ? -EAGAIN : ret,
					 "cannot open program %u: %s", a->ids[i], why(ret));
		}
		if (!classify)
			continue;
		ret = devcg_filter_read(a->fds[i], NULL, &a->audit[i], err);
		if (ret < 0) {
			attached_close(a);
			return ret;
		}
		a->devcg[i] = ret == 1;
	}
	return 0;
}

static void list_ids(const struct attached *a, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < a->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u%s", i ? ", " : "", a->ids[i],
					a->devcg[i] ? " (devcg)" : "");
}

/*
 * The bpf_link through which PROG_ID is attached to the cgroup with inode
 * INO, as a new fd, or -ENOENT. A program attached by a link is replaced
 * with BPF_LINK_UPDATE, never by BPF_PROG_ATTACH (kernel/bpf/cgroup.c
 * matches BPF_F_REPLACE and detach against non-link entries only).
 */
static int link_of(uint64_t ino, uint32_t prog_id)
{
	__u32 id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_CGROUP &&
		    info.prog_id == prog_id && info.cgroup.cgroup_id == ino &&
		    info.cgroup.attach_type == BPF_CGROUP_DEVICE)
			return fd;
		close(fd);
	}
	return -ENOENT;
}

/* Put back the program at TARGET of BEFORE after a failed check (NEW_FD in
 * its place, through LINK when it was link-attached); a negative errno if
 * that failed too. */
static int roll_back(int cg_fd, const struct attached *before, int target, int new_fd, int link)
{
	int ret;

	if (target < 0) {
		ret = bpf_prog_detach2(new_fd, cg_fd, BPF_CGROUP_DEVICE);
	} else if (link >= 0) {
		LIBBPF_OPTS(bpf_link_update_opts, o, .flags = BPF_F_REPLACE, .old_prog_fd = new_fd);
		ret = bpf_link_update(link, before->fds[target], &o);
	} else if (before->mode == DEVCG_MODE_MULTI) {
		LIBBPF_OPTS(bpf_prog_attach_opts, o, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE,
			    .replace_prog_fd = new_fd);
		ret = bpf_prog_attach_opts(before->fds[target], cg_fd, BPF_CGROUP_DEVICE, &o);
	} else {
		ret = bpf_prog_attach(before->fds[target], cg_fd, BPF_CGROUP_DEVICE,
				      before->mode == DEVCG_MODE_OVERRIDE ? BPF_F_ALLOW_OVERRIDE : 0);
	}
	return ret ? -errno : 0;
}

/* Detach program I of A, whether attached directly or by a link. */
static int detach_one(int cg_fd, uint64_t ino, const struct attached *a, uint32_t i)
{
	int link, ret;

	if (!bpf_prog_detach2(a->fds[i], cg_fd, BPF_CGROUP_DEVICE))
		return 0;
	if (errno != ENOENT)
		return -errno;
	link = link_of(ino, a->ids[i]);
	if (link < 0)
		return 0; /* gone already */
	ret = bpf_link_detach(link) ? -errno : 0;
	close(link);
	return ret;
}

static int replace_once(struct devcg_cgroup *cg, const struct devcg_policy *policy,
			struct devcg_replace_opts *opts, struct devcg_error *err)
{
	const char *fail_at = DEVCG_OPT(opts, devcg_replace_opts, fail_at, NULL);
	uint32_t expect = DEVCG_OPT(opts, devcg_replace_opts, expect_prog_id, 0);
	bool force = DEVCG_OPT(opts, devcg_replace_opts, force, false);
	struct devcg_filter_version v = { .prog_fd = -1 };
	struct attached before, after;
	int target = -1, ret, i, link = -1;
	bool audit, ours = true;
	struct stat st;
	char ids[512];

	if (devcg_fault(fail_at, "query"))
		return devcg_err(err, -EIO, "injected failure at query");
	ret = query_attached(cg->fd, true, &before, err);
	if (ret)
		return ret;
	list_ids(&before, ids, sizeof(ids));
	for (i = 0; i < (int)before.n; i++)
		if (expect ? before.ids[i] == expect : before.devcg[i] && target < 0)
			target = i;
	if (expect && target < 0) {
		ret = devcg_err(err, -ENOENT, "program %u is no longer attached to %s", expect, cg->rel);
		goto out;
	}
	if (before.n > 1 && !force) {
		ret = devcg_err(err, -EBUSY,
				"%s has %u device programs attached (%s); devcg replaces one "
				"program: pass --force to replace them all",
				cg->rel, before.n, ids);
		goto out;
	}
	if (target < 0 && before.n)
		target = 0; /* adopt the foreign program */

	audit = DEVCG_OPT(opts, devcg_replace_opts, audit, false);
	ret = devcg_filter_load(policy, audit,
				audit && target >= 0 && before.audit[target] ? before.fds[target] : -1,
				fail_at, &v, err);
	if (ret)
		goto out;
	if (devcg_fault(fail_at, "attach")) {
		ret = devcg_err(err, -EIO, "injected failure at attach");
	} else if (target < 0) {
		/* first install */
		if (bpf_prog_attach(v.prog_fd, cg->fd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI))
			ret = -errno;
	} else if (before.mode == DEVCG_MODE_MULTI) {
		LIBBPF_OPTS(bpf_prog_attach_opts, o, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE,
			    .replace_prog_fd = before.fds[target]);
		if (bpf_prog_attach_opts(v.prog_fd, cg->fd, BPF_CGROUP_DEVICE, &o))
			ret = -errno;
		/* not found as a direct attachment: it may hang on a bpf_link */
		if (ret == -ENOENT && !fstat(cg->fd, &st) &&
		    (link = link_of(st.st_ino, before.ids[target])) >= 0) {
			LIBBPF_OPTS(bpf_link_update_opts, lo, .flags = BPF_F_REPLACE,
				    .old_prog_fd = before.fds[target]);

			ret = bpf_link_update(link, v.prog_fd, &lo) ? -errno : 0;
		}
	} else {
		/* one program in override or exclusive mode: replaced in place */
		if (bpf_prog_attach(v.prog_fd, cg->fd, BPF_CGROUP_DEVICE,
				    before.mode == DEVCG_MODE_OVERRIDE ? BPF_F_ALLOW_OVERRIDE : 0))
			ret = -errno;
	}
	if (ret == -ENOENT && target >= 0)
		ret = devcg_err(err, -ENOENT, "program %u was replaced by another writer",
				before.ids[target]);
	else if (ret && !devcg_fault(fail_at, "attach"))
		ret = devcg_err(err, ret, "cannot attach the filter to %s: %s", cg->rel, why(ret));
	if (ret)
		goto out;

	/* --force: the new filter is in place; only now drop the others */
	for (i = 0; i < (int)before.n; i++) {
		if (i == target || fstat(cg->fd, &st))
			continue;
		ret = detach_one(cg->fd, st.st_ino, &before, (uint32_t)i);
		if (ret) {
			ret = devcg_err(err, ret, "the filter is attached, but program %u could not "
					"be detached: %s", before.ids[i], why(ret));
			goto out;
		}
	}

	/* confirm that exactly the new program is attached */
	ret = devcg_fault(fail_at, "verify") ? -EIO : query_attached(cg->fd, false, &after, err);
	if (!ret) {
		if (after.n != 1 || after.ids[0] != v.prog_id) {
			list_ids(&after, ids, sizeof(ids));
			ret = devcg_err(err, -EAGAIN, "after the swap %s has programs %s, expected %u only",
					cg->rel, ids, v.prog_id);
			for (ours = false, i = 0; i < (int)after.n; i++)
				ours |= after.ids[i] == v.prog_id;
		}
		attached_close(&after);
	} else if (ret == -EIO) {
		devcg_err(err, ret, "injected failure at verify");
	}
	/*
	 * Put the previous program back. In multi mode the kernel checks that
	 * ours is still the one replaced; in the other modes only our own look
	 * does, so another writer's program is never overwritten.
	 */
	if (ret && before.n <= 1 && (ours || before.mode == DEVCG_MODE_MULTI || link >= 0)) {
		int rb = roll_back(cg->fd, &before, target, v.prog_fd, link);

		if (rb && rb != -ENOENT && err)
			snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
				 "; putting back program %u failed too: %s",
				 target >= 0 ? before.ids[target] : 0, why(rb));
	}
	if (ret)
		goto out;
	if (opts && DEVCG_OPTS_HAS(opts, devcg_replace_opts, replaced_id)) {
		opts->prog_id = v.prog_id;
		opts->replaced_id = target >= 0 ? before.ids[target] : 0;
	}
out:
	if (link >= 0)
		close(link);
	devcg_filter_close(&v);
	attached_close(&before);
	return ret;
}

/* The first install on a cgroup is a plain attach that another writer could
 * race with; devcg writers take the cgroup directory's flock for it. */
static int replace_resolved(struct devcg_cgroup *cg, const struct devcg_policy *policy,
			    struct devcg_replace_opts *opts, struct devcg_error *err)
{
	int ret, tries;

	if (flock(cg->fd, LOCK_EX))
		return devcg_err(err, -errno, "cannot lock %s: %s", cg->rel, strerror(errno));
	/* a plain replace (not compare-and-swap) goes on when another writer
	 * swapped the program between our query and our attach */
	bool cas = DEVCG_OPT(opts, devcg_replace_opts, expect_prog_id, 0) != 0;

	for (tries = 0; tries < 10; tries++) {
		ret = replace_once(cg, policy, opts, err);
		if (ret != -EAGAIN && (ret != -ENOENT || cas))
			break;
	}
	flock(cg->fd, LOCK_UN);
	return ret;
}

int devcg_replace(const char *cgroup, const struct devcg_policy *policy,
		  struct devcg_replace_opts *opts, struct devcg_error *err)
{
	struct devcg_cgroup cg;
	int ret;

	if ((ret = DEVCG_REPLACE_OPTS_VALID(opts, err)))
		return ret;
	if (devcg_fault(DEVCG_OPT(opts, devcg_replace_opts, fail_at, NULL), "resolve"))
		return devcg_err(err, -EIO, "injected failure at resolve");
	ret = devcg_cgroup_resolve(cgroup, &cg, err);
	if (!ret)
		ret = replace_resolved(&cg, policy, opts, err);
	devcg_cgroup_close(&cg);
	return ret;
}

/* The live devcg policy of CG (allow-all when there is none) and its id. */
static int read_own(struct devcg_cgroup *cg, bool force, struct devcg_policy **policy, uint32_t *id,
		    bool *audit, struct devcg_error *err)
{
	struct attached a;
	uint32_t i;
	char ids[512];
	int ret;

	*policy = NULL;
	*id = 0;
	*audit = false;
	ret = query_attached(cg->fd, true, &a, err);
	/* without our filter, a foreign program's rules cannot be read: one
	 * rule applied to allow-all would silently drop them */
	for (i = 0; !ret && i < a.n && !a.devcg[i]; i++)
		;
	if (!ret && a.n && i == a.n && !force) {
		list_ids(&a, ids, sizeof(ids));
		ret = devcg_err(err, -EBUSY,
				"%s has device programs of others (%s) and no devcg filter; devcg cannot "
				"read their rules, so one rule would replace them all: install the whole "
				"policy with 'devcg replace' first, or pass --force to start from allow-all",
				cg->rel, ids);
	}
	for (i = 0; !ret && i < a.n; i++) {
		if (!a.devcg[i])
			continue;
		ret = devcg_filter_read(a.fds[i], policy, audit, err);
		ret = ret == 1 ? 0 : ret < 0 ? ret : -EAGAIN;
		*id = a.ids[i];
		break;
	}
	attached_close(&a);
	if (!ret && !*policy && !(*policy = devcg_policy_new()))
		ret = devcg_err(err, -ENOMEM, "out of memory");
	return ret;
}

int devcg_update(const char *cgroup, const struct devcg_rule *rule,
		 struct devcg_replace_opts *opts, struct devcg_error *err)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	unsigned int seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
	struct devcg_cgroup cg;
	int ret, tries;

	if ((ret = DEVCG_REPLACE_OPTS_VALID(opts, err)))
		return ret;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	o.sz = sizeof(o);
	ret = devcg_cgroup_resolve(cgroup, &cg, err);
	for (tries = 0; !ret && tries < CAS_RETRIES; tries++) {
		struct devcg_policy *policy = NULL;
		bool locked = false, audit;
		uint32_t id;

		ret = read_own(&cg, o.force, &policy, &id, &audit, err);
		if (!ret && !id) {
			/* no devcg filter yet: the first install cannot name a
			 * program, so devcg writers decide it under the cgroup's
			 * lock, after reading again */
			devcg_policy_free(policy);
			policy = NULL;
			if (flock(cg.fd, LOCK_EX)) {
				ret = devcg_err(err, -errno, "cannot lock %s: %s", cg.rel, strerror(errno));
				break;
			}
			locked = true;
			ret = read_own(&cg, o.force, &policy, &id, &audit, err);
		}
		if (!ret)
			ret = devcg_policy_apply(policy, rule, err);
		if (!ret) {
			o.expect_prog_id = id;
			/* a filter with --audit keeps it: its readers follow the ring */
			o.audit = DEVCG_OPT(opts, devcg_replace_opts, audit, false) || audit;
			ret = replace_once(&cg, policy, &o, err);
		}
		if (locked)
			flock(cg.fd, LOCK_UN);
		devcg_policy_free(policy);
		if (ret != -ENOENT && ret != -EAGAIN)
			break;
		/* another writer won: back off a little, re-read and retry */
		nanosleep(&(struct timespec){ .tv_nsec = (rand_r(&seed) % 200 + 1) * 1000L }, NULL);
		ret = 0;
	}
	if (!ret && tries == CAS_RETRIES)
		ret = devcg_err(err, -EBUSY, "%s: gave up after %d conflicting updates", cg.rel, CAS_RETRIES);
	if (!ret && opts && DEVCG_OPTS_HAS(opts, devcg_replace_opts, replaced_id)) {
		opts->prog_id = o.prog_id;
		opts->replaced_id = o.replaced_id;
	}
	devcg_cgroup_close(&cg);
	return ret;
}

int devcg_reset(const char *cgroup, struct devcg_error *err)
{
	struct devcg_cgroup cg;
	struct attached a = { 0 };
	int ret, detached = 0;
	uint32_t i;

	ret = devcg_cgroup_resolve(cgroup, &cg, err);
	if (!ret)
		ret = query_attached(cg.fd, true, &a, err);
	for (i = 0; !ret && i < a.n; i++) {
		if (!a.devcg[i])
			continue;
		if (bpf_prog_detach2(a.fds[i], cg.fd, BPF_CGROUP_DEVICE) && errno != ENOENT)
			ret = devcg_err(err, -errno, "cannot detach program %u: %s", a.ids[i], why(-errno));
		else
			detached++;
	}
	attached_close(&a);
	devcg_cgroup_close(&cg);
	return ret ? ret : detached;
}

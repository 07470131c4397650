// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The device programs attached to a cgroup, as the swap (swap.c) and the
 * reset see them: their ids and fds, the attach mode, which are devcg's
 * filters and which systemd's own (attached.h).
 */
#include "live/attached.h"
#include "live/progread.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

static const char *why(int code)
{
	return devcg_why(code, DEVCG_CAPS_FILTER);
}

void devcg_attached_close(struct attached *a)
{
	uint32_t i;

	for (i = 0; i < a->n; i++)
		if (a->fds[i] >= 0)
			close(a->fds[i]);
	a->n = 0;
}

/* Is PROG_FD systemd's own device program (by its name)? */
static bool is_systemds(int prog_fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	return !bpf_obj_get_info_by_fd(prog_fd, &info, &len) &&
	       info.type == BPF_PROG_TYPE_CGROUP_DEVICE && !strcmp(info.name, DEVCG_SYSTEMD_PROG_NAME);
}

/* Which of the programs of A are devcg filters (and audit ones), and
 * systemd's. */
int devcg_classify_attached(struct attached *a, struct devcg_error *err)
{
	uint32_t i;
	int ret;

	for (i = 0; i < a->n; i++) {
		ret = devcg_filter_read(a->fds[i], NULL, &a->audit[i], err);
		if (ret < 0) {
			devcg_attached_close(a);
			return ret;
		}
		a->devcg[i] = ret == 1;
		a->systemd[i] = !a->devcg[i] && is_systemds(a->fds[i]);
	}
	return 0;
}

/* The ids of the device programs attached to the cgroup itself (no fds). */
int devcg_query_ids(int cg_fd, struct attached *a, struct devcg_error *err)
{
	__u32 flags = 0, cnt = MAX_PROGS, i;

	memset(a, 0, sizeof(*a));
	if (bpf_prog_query(cg_fd, BPF_CGROUP_DEVICE, 0, &flags, a->ids, &cnt))
		return devcg_err(err, -errno, "cannot query device programs: %s", why(-errno));
	a->mode = devcg_mode_of(flags);
	a->n = cnt;
	for (i = 0; i < cnt; i++)
		a->fds[i] = -1;
	return 0;
}

/* The fast path of a swap through a cache (swap.c): what a swap by
 * compare-and-swap of one program needs, in one query. */
int devcg_query_one(struct devcg_cache *cache, int cg_fd, struct attached *a, struct devcg_cache_entry **pin,
		    struct devcg_error *err)
{
	int ret = devcg_query_ids(cg_fd, a, err);

	*pin = NULL;
	if (ret)
		return ret;
	if (a->n != 1 || a->mode != DEVCG_MODE_MULTI)
		return 1;
	*pin = devcg_cache_pin(cache, a->ids[0], &a->fds[0]);
	if (*pin)
		return 0;
	a->fds[0] = bpf_prog_get_fd_by_id(a->ids[0]);
	if (a->fds[0] >= 0)
		return 0;
	/* detached and freed since the query: let the caller retry */
	ret = -errno;
	return devcg_err(err, ret == -ENOENT ? -EAGAIN : ret, "cannot open program %u: %s", a->ids[0], why(ret));
}

/* The device programs attached to the cgroup itself, with an fd for each;
 * with CLASSIFY, which of them are devcg filters (and audit ones). */
int devcg_query_attached(int cg_fd, bool classify, struct attached *a, struct devcg_error *err)
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
			devcg_attached_close(a);
			return devcg_err(err, ret == -ENOENT ? -EAGAIN : ret,
					 "cannot open program %u: %s", a->ids[i], why(ret));
		}
	}
	return classify ? devcg_classify_attached(a, err) : 0;
}

/*
 * On a unit's cgroup that devcg keeps in step with systemd, systemd's own
 * program stays: devcg has widened the unit's DeviceAllow= so that it
 * allows at least what devcg's filter allows, and systemd would attach it
 * again on its next reload anyway. What remains is what devcg swaps.
 */
void devcg_leave_systemds(const struct devcg_cgroup *cg, struct attached *a)
{
	uint32_t i, n = 0;

	if (!cg->unit[0])
		return;
	for (i = 0; i < a->n; i++) {
		if (a->systemd[i]) {
			close(a->fds[i]);
			continue;
		}
		a->ids[n] = a->ids[i];
		a->fds[n] = a->fds[i];
		a->devcg[n] = a->devcg[i];
		a->audit[n] = a->audit[i];
		a->systemd[n++] = false;
	}
	a->n = n;
}

/*
 * How many programs of A besides TARGET (devcg's, or -1) a swap without
 * --force may not detach. Under no_systemd (devcg does not keep the unit
 * in step, and looks up no unit) systemd's own program is still told
 * apart by its name: devcg's filter takes its place, as it does when it is
 * the only program, and systemd attaches it again on its next reload.
 */
uint32_t devcg_blocking(const struct attached *a, int target, bool no_systemd)
{
	uint32_t i, n = 0;

	for (i = 0; i < a->n; i++)
		n += (int)i != target && !(no_systemd && a->systemd[i]);
	return n;
}

void devcg_list_ids(const struct attached *a, char *buf, size_t len)
{
	size_t off = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < a->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u%s", i ? ", " : "", a->ids[i],
					a->devcg[i] ? " (devcg)" : a->systemd[i] ? " (systemd's)" : "");
}

/* Are exactly the programs of T attached, as A found them? */
bool devcg_taking_same(const struct taking *t, const struct attached *a)
{
	uint32_t i, j;

	if (t->n != a->n)
		return false;
	for (i = 0; i < t->n; i++) {
		for (j = 0; j < a->n && a->ids[j] != t->ids[i]; j++)
			;
		if (j == a->n)
			return false;
	}
	return true;
}

/* Can the reader read program I of A back (progread.c)? WHY_NOT says why
 * not. */
static bool readable(const struct attached *a, uint32_t i, struct devcg_policy **policy,
		     struct devcg_error *why_not)
{
	struct devcg_reader *r = NULL;
	int rr = devcg_reader_open(a->fds[i], a->ids[i], NULL, &r, why_not);

	if (!rr)
		rr = devcg_reader_policy(r, policy, why_not);
	devcg_reader_free(r);
	return !rr;
}

uint32_t devcg_first_unreadable(const struct attached *a, bool no_systemd, struct devcg_error *why_not)
{
	uint32_t i;

	for (i = 0; i < a->n; i++) {
		struct devcg_policy *p = NULL;
		bool ok;

		if (a->devcg[i] || (no_systemd && a->systemd[i]))
			continue;
		ok = readable(a, i, &p, why_not);
		devcg_policy_free(p);
		if (!ok)
			return a->ids[i];
	}
	return 0;
}

/*
 * Several programs on CG, one of them at least another's (not devcg's, nor
 * systemd's that NO_SYSTEMD lets devcg's filter replace): the policy to
 * start from is what they allow together, each read back (devcg's from its
 * table, any other by the reader, progread.c); the swap replaces devcg's
 * (else the first) and detaches the others one by one, none of which
 * widens what the cgroup allows. Any program that cannot be read refuses
 * the take-over, naming it: its rules would be dropped.
 */
int devcg_read_all(struct devcg_cgroup *cg, const struct attached *a, bool no_systemd,
		   struct devcg_policy **policy, uint32_t *id, bool *audit, uint32_t *others,
		   struct taking *take, struct devcg_error *err)
{
	struct devcg_policy *ps[MAX_PROGS] = { 0 };
	struct devcg_error why_not = { 0 };
	uint32_t i, n = 0, bad = 0;
	int target = -1, ret = 0;
	char ids[512];

	devcg_list_ids(a, ids, sizeof(ids));
	for (i = 0; i < a->n && !ret; i++) {
		take->ids[i] = a->ids[i];
		*others += !a->devcg[i];
		if (no_systemd && a->systemd[i])
			continue;
		if (a->devcg[i]) {
			bool aud = false;

			ret = devcg_filter_read(a->fds[i], &ps[n], &aud, err);
			ret = ret == 1 ? 0 : ret < 0 ? ret : -EAGAIN;
			if (!ret && target < 0) {
				target = (int)i;
				*audit = aud;
			}
		} else if (!readable(a, i, &ps[n], &why_not)) {
			bad = a->ids[i];
			ret = -EBUSY;
		}
		n += !ret;
	}
	take->n = a->n;
	if (ret == -EBUSY)
		ret = devcg_err(err, -EBUSY,
				"%s has %u device programs attached (%s), and devcg cannot read the rules of "
				"program %u (%s): taking them over would drop them; install the whole policy with "
				"'devcg replace --force', or pass --force to start from allow-all",
				devcg_cgroup_rel(cg), a->n, ids, bad, why_not.msg);
	if (!ret) {
		ret = devcg_policy_intersect((const struct devcg_policy *const *)ps, n, policy, err);
		if (ret)
			ret = devcg_err_wrap(err, ret, "%s has %u device programs attached (%s)",
					     devcg_cgroup_rel(cg), a->n, ids);
	}
	if (!ret)
		*id = a->ids[target >= 0 ? target : 0];
	for (i = 0; i < n; i++)
		devcg_policy_free(ps[i]);
	return ret;
}

/*
 * The bpf_link through which PROG_ID is attached to the cgroup with inode
 * INO, as a new fd, or -ENOENT. BPF_PROG_ATTACH cannot replace nor detach
 * a program attached by a link (kernel/bpf/cgroup.c matches BPF_F_REPLACE
 * and detach against non-link entries only).
 */
int devcg_link_of(uint64_t ino, uint32_t prog_id)
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

/* Detach program I of A, whether attached directly or by a link: which of
 * DETACHED_* it was (NONE: gone already), or a negative errno. */
int devcg_detach_one(int cg_fd, uint64_t ino, const struct attached *a, uint32_t i)
{
	int link, ret;

	if (!bpf_prog_detach2(a->fds[i], cg_fd, BPF_CGROUP_DEVICE))
		return DETACHED_DIRECT;
	if (errno != ENOENT)
		return -errno;
	link = devcg_link_of(ino, a->ids[i]);
	if (link < 0)
		return DETACHED_NONE;
	ret = bpf_link_detach(link) ? -errno : DETACHED_LINK;
	close(link);
	return ret;
}

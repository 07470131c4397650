// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * From raw trace events to revocations: a device program attached,
 * replaced or linked on a cgroup by someone other than devcg, after which
 * opens in that cgroup or below are refused that devcg allows.
 *
 * In multi mode every program of a cgroup and of its ancestors must allow
 * an access (kernel/bpf/cgroup.c, __cgroup_bpf_check_dev_permission runs
 * the effective array), so a narrower program attached beside devcg's
 * filter refuses what the filter grants, and the refusal is EPERM like the
 * filter's own. The two are told apart here by reading the filter's policy
 * back from its own maps and deciding the refused open with it: when every
 * devcg filter that applies allows it, another program refused it, and the
 * last foreign change on the opener's cgroup or an ancestor is named.
 *
 * A foreign writer that takes devcg's filter itself off (crun's update puts
 * its own program in its place) leaves the filter's policy in its episode:
 * while the episode is open, that policy says what the cgroup had.
 *
 * Where no devcg filter applies, nothing states what should be allowed: the
 * trace sees only refused opens, and the kernel runs no device program on
 * request from user space (cgroup device programs have no test run), so no
 * revocation is named there.
 *
 * One writer's changes on a cgroup less than EPISODE_NS apart, and its
 * detaches, are one episode (systemd attaches its new program, then
 * detaches its old one; a detach only removes a program that must allow,
 * so it cannot be what refuses); the episode ends with the next change on
 * the cgroup by anyone else, or the trace's end, and is reported then if
 * refusals were attributed to it.
 */
#include "internal.h"
#include "trace.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define MAX_PROGS 64
/* changes by one writer this close together are one episode */
#define EPISODE_NS 100000000ull
#define MEMO_POLICIES 16

struct prog {
	uint32_t id;
	int owner; /* enum devcg_prog_owner */
	struct devcg_policy *policy;
};

#define MAX_REPLACED 4

struct episode {
	struct devcg_revoke rv;
	bool open;
	uint64_t last_ns; /* the return of its last change */
	uint64_t lost_at_start;
	/* the policies of devcg filters the episode's changes took off the
	 * cgroup (crun's update puts its own program in place of devcg's
	 * filter): what the cgroup had, while the episode is open */
	struct devcg_policy *replaced[MAX_REPLACED];
	uint32_t nreplaced;
};

struct cg {
	uint64_t id;
	char path[512]; /* "" until known */
	bool retired;   /* removed: another cgroup has its path now */
	uint32_t progs[MAX_PROGS];
	uint32_t nprogs;
	struct episode ep;
};

struct devcg_revokes {
	struct devcg_cgpaths *paths;
	struct devcg_revoke_source src;
	devcg_revoke_cb cb;
	void *ctx;
	struct cg *cgs;
	size_t ncgs;
	struct prog *progs;
	size_t nprogs;
	size_t nopen; /* open episodes */
	uint64_t lost;
	uint64_t now_ns; /* the last event fed */
	uint64_t generation; /* bumped by every change: invalidates the memo */
	/* what applies to the last opener's cgroup, while nothing changes */
	struct {
		bool valid;
		uint64_t cgroup_id, generation;
		long episode;   /* index in cgs of the cgroup whose episode is named, or -1 */
		bool decidable; /* every program on the path could be read */
		size_t npolicies;
		const struct devcg_policy *policies[MEMO_POLICIES];
	} memo;
};

uint8_t devcg_open_access(uint32_t flags)
{
	/* fs/open.c build_open_flags(): the access mode asks for read, write
	 * or both (3 reads as both, ACC_MODE()), O_TRUNC asks for write too;
	 * may_open() passes them on to the device cgroup (fs/namei.c). O_PATH
	 * opens are not checked at all. */
	static const uint8_t mode[4] = { DEVCG_ACC_READ, DEVCG_ACC_WRITE,
					 DEVCG_ACC_READ | DEVCG_ACC_WRITE,
					 DEVCG_ACC_READ | DEVCG_ACC_WRITE };
	uint8_t access;

	if (flags & O_PATH)
		return 0;
	access = mode[flags & O_ACCMODE];
	if (flags & O_TRUNC)
		access |= DEVCG_ACC_WRITE;
	return access;
}

static int kernel_prog(void *ctx, uint32_t id, struct devcg_policy **policy)
{
	int fd = bpf_prog_get_fd_by_id(id), ret;

	(void)ctx;
	if (fd < 0)
		return DEVCG_PROG_UNKNOWN;
	ret = devcg_filter_read(fd, policy, NULL, NULL);
	close(fd);
	return ret == 1 ? DEVCG_PROG_DEVCG : ret == 0 ? DEVCG_PROG_FOREIGN : DEVCG_PROG_UNKNOWN;
}

static const char *kernel_path(void *ctx, uint64_t id)
{
	return devcg_cgpaths_lookup(ctx, DEVCG_H_V2, id);
}

struct devcg_revokes *devcg_revokes_new(struct devcg_cgpaths *paths,
					const struct devcg_revoke_source *src, devcg_revoke_cb cb,
					void *ctx)
{
	struct devcg_revokes *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->paths = paths;
	r->cb = cb;
	r->ctx = ctx;
	if (src)
		r->src = *src;
	if (!r->src.prog)
		r->src.prog = kernel_prog;
	if (!r->src.path) {
		r->src.path = kernel_path;
		r->src.ctx = paths;
	}
	return r;
}

void devcg_revokes_free(struct devcg_revokes *r)
{
	size_t i;

	if (!r)
		return;
	for (i = 0; i < r->nprogs; i++)
		devcg_policy_free(r->progs[i].policy);
	for (i = 0; i < r->ncgs; i++)
		while (r->cgs[i].ep.nreplaced)
			devcg_policy_free(r->cgs[i].ep.replaced[--r->cgs[i].ep.nreplaced]);
	free(r->progs);
	free(r->cgs);
	free(r);
}

/* Who owns program ID: read once, when first seen, and kept while it is
 * attached somewhere (a program's policy never changes: its maps are
 * frozen before it is attached, filter.c). */
static const struct prog *prog_of(struct devcg_revokes *r, uint32_t id)
{
	struct devcg_policy *policy = NULL;
	struct prog *p;
	size_t i;

	for (i = 0; i < r->nprogs; i++)
		if (r->progs[i].id == id)
			return &r->progs[i];
	p = realloc(r->progs, (r->nprogs + 1) * sizeof(*p));
	if (!p)
		return NULL;
	r->progs = p;
	p = &p[r->nprogs++];
	p->id = id;
	p->owner = r->src.prog(r->src.ctx, id, &policy);
	if (p->owner == DEVCG_PROG_DEVCG && !policy)
		p->owner = DEVCG_PROG_UNKNOWN;
	p->policy = p->owner == DEVCG_PROG_DEVCG ? policy : NULL;
	if (p->owner != DEVCG_PROG_DEVCG)
		devcg_policy_free(policy);
	return p;
}

static int owner_of(struct devcg_revokes *r, uint32_t id)
{
	const struct prog *p = prog_of(r, id);

	return p ? p->owner : DEVCG_PROG_UNKNOWN;
}

/* Forget program ID once no cgroup holds it. */
static void prog_forget(struct devcg_revokes *r, uint32_t id)
{
	size_t i, k;

	for (i = 0; i < r->ncgs; i++)
		for (k = 0; k < r->cgs[i].nprogs; k++)
			if (r->cgs[i].progs[k] == id)
				return;
	for (i = 0; i < r->nprogs; i++) {
		if (r->progs[i].id == id) {
			devcg_policy_free(r->progs[i].policy);
			r->progs[i] = r->progs[--r->nprogs];
			return;
		}
	}
}

static void close_episode(struct devcg_revokes *r, struct cg *c, uint64_t end);

/*
 * A cgroup removed and made again under the same path (a unit restarted)
 * has a new id. The old one went with its programs, detached by the
 * kernel without a bpf(2) call (cgroup_bpf_release() in
 * kernel/bpf/cgroup.c): it must not stand on the new one's path.
 */
static void retire_namesakes(struct devcg_revokes *r, const struct cg *c)
{
	uint32_t ids[MAX_PROGS], n, k;
	size_t i;

	for (i = 0; i < r->ncgs; i++) {
		struct cg *d = &r->cgs[i];

		if (d == c || d->retired || strcmp(d->path, c->path))
			continue;
		if (d->ep.open)
			close_episode(r, d, r->now_ns);
		d->retired = true;
		n = d->nprogs;
		memcpy(ids, d->progs, n * sizeof(ids[0]));
		d->nprogs = 0;
		for (k = 0; k < n; k++)
			prog_forget(r, ids[k]);
		r->generation++;
	}
}

static const char *cg_path(struct devcg_revokes *r, struct cg *c)
{
	const char *p;

	if (c->retired)
		return NULL;
	if (!c->path[0] && (p = r->src.path(r->src.ctx, c->id))) {
		snprintf(c->path, sizeof(c->path), "%s", p);
		retire_namesakes(r, c);
	}
	return c->path[0] ? c->path : NULL;
}

static struct cg *cg_of(struct devcg_revokes *r, uint64_t id)
{
	struct cg *c;
	size_t i;

	for (i = 0; i < r->ncgs; i++)
		if (r->cgs[i].id == id && !r->cgs[i].retired)
			return &r->cgs[i];
	c = realloc(r->cgs, (r->ncgs + 1) * sizeof(*c));
	if (!c)
		return NULL;
	r->cgs = c;
	c = memset(&c[r->ncgs++], 0, sizeof(*c));
	c->id = id;
	cg_path(r, c);
	return c;
}

void devcg_revokes_seed(struct devcg_revokes *r, uint64_t cgroup_id, const uint32_t *ids, uint32_t n)
{
	struct cg *c = cg_of(r, cgroup_id);
	uint32_t i;

	for (i = 0; c && i < n && c->nprogs < MAX_PROGS; i++) {
		c->progs[c->nprogs++] = ids[i];
		prog_of(r, ids[i]);
	}
	r->generation++;
}

static int seed_one(void *ctx, uint64_t id, const char *path)
{
	struct devcg_revokes *r = ctx;
	__u32 ids[MAX_PROGS], cnt = MAX_PROGS, flags = 0;
	char full[8192];
	int fd;

	snprintf(full, sizeof(full), "%s%s", devcg_cgpaths_mount(r->paths, DEVCG_H_V2),
		 strcmp(path, "/") ? path : "");
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt) && cnt)
		devcg_revokes_seed(r, id, ids, cnt);
	close(fd);
	return 0;
}

int devcg_revokes_seed_v2(struct devcg_revokes *r)
{
	return devcg_cgpaths_each(r->paths, DEVCG_H_V2, seed_one, r);
}

static bool adds_program(const struct devcg_trace_event *ev)
{
	return ev->bpf.prog_id && (ev->bpf.cmd == DEVCG_CMD_PROG_ATTACH ||
				   ev->bpf.cmd == DEVCG_CMD_LINK_CREATE ||
				   ev->bpf.cmd == DEVCG_CMD_LINK_UPDATE);
}

void devcg_revokes_note(struct devcg_revokes *r, const struct devcg_trace_event *ev)
{
	if (ev->type == DEVCG_EV_BPF_PROG_CHANGE && ev->ret >= 0 && adds_program(ev))
		prog_of(r, ev->bpf.prog_id);
}

static void list_progs(struct devcg_revokes *r, const struct cg *c, uint32_t *n,
		       struct devcg_revoke_prog *out)
{
	uint32_t i;

	for (*n = 0, i = 0; i < c->nprogs && *n < DEVCG_REVOKE_MAX_PROGS; i++) {
		out[*n].id = c->progs[i];
		out[(*n)++].owner = owner_of(r, c->progs[i]);
	}
}

static void close_episode(struct devcg_revokes *r, struct cg *c, uint64_t end)
{
	struct episode *ep = &c->ep;

	ep->open = false;
	r->nopen--;
	ep->rv.end_ns = end > ep->rv.start_ns ? end : ep->rv.start_ns;
	ep->rv.lost = r->lost != ep->lost_at_start;
	if (ep->rv.denied && r->cb)
		r->cb(r->ctx, &ep->rv);
	while (ep->nreplaced)
		devcg_policy_free(ep->replaced[--ep->nreplaced]);
	r->generation++;
}

/* Keep the policy of devcg's filter ID, which a change of the open episode
 * EP took off its cgroup. */
static void keep_replaced(struct devcg_revokes *r, struct episode *ep, uint32_t id)
{
	const struct prog *p = prog_of(r, id);
	struct devcg_policy *copy;

	if (!p || p->owner != DEVCG_PROG_DEVCG || !p->policy || ep->nreplaced == MAX_REPLACED)
		return;
	copy = devcg_policy_dup(p->policy);
	if (copy)
		ep->replaced[ep->nreplaced++] = copy;
}

static void open_episode(struct devcg_revokes *r, struct cg *c, const struct devcg_trace_event *ev)
{
	struct devcg_revoke *rv = &c->ep.rv;
	const char *path = cg_path(r, c);

	memset(rv, 0, sizeof(*rv));
	rv->cgroup_id = c->id;
	snprintf(rv->cgroup, sizeof(rv->cgroup), "%s", path ? path : "?");
	rv->writer_pid = ev->pid;
	rv->writer_ppid = ev->ppid;
	memcpy(rv->writer_comm, ev->comm, sizeof(rv->writer_comm));
	memcpy(rv->writer_pcomm, ev->pcomm, sizeof(rv->writer_pcomm));
	rv->writer_comm[15] = rv->writer_pcomm[15] = '\0';
	rv->start_ns = ev->ts_ns;
	list_progs(r, c, &rv->nbefore, rv->before);
	c->ep.open = true;
	c->ep.lost_at_start = r->lost;
	r->nopen++;
}

static void feed_bpf(struct devcg_revokes *r, const struct devcg_trace_event *ev)
{
	uint32_t old[MAX_PROGS], nold, i;
	struct episode *ep;
	bool foreign, joins;
	struct cg *c;

	if (ev->ret < 0)
		return; /* refused by the kernel: nothing changed */
	c = cg_of(r, ev->bpf.target);
	if (!c)
		return;
	r->generation++;
	ep = &c->ep;
	/* devcg's own changes are intended: its filter, or its own process
	 * (a devcg filter of another ABI reads as foreign) */
	foreign = adds_program(ev) && owner_of(r, ev->bpf.prog_id) == DEVCG_PROG_FOREIGN &&
		  strncmp(ev->comm, "devcg", sizeof(ev->comm));
	joins = ep->open && ep->rv.writer_pid == ev->pid &&
		(ev->ts_ns <= ep->last_ns + EPISODE_NS || !adds_program(ev));
	if (ep->open && !joins)
		close_episode(r, c, ev->ts_ns);
	if (!joins && foreign)
		open_episode(r, c, ev);
	memcpy(old, c->progs, sizeof(old));
	nold = c->nprogs;
	devcg_trace_progs_apply(c->progs, &c->nprogs, MAX_PROGS, ev);
	if (ep->open) {
		ep->rv.changes++;
		ep->last_ns = ev->ts_exit_ns;
		list_progs(r, c, &ep->rv.nafter, ep->rv.after);
		/* a devcg filter the foreign writer took off (replaced or
		 * detached): its policy still says what the cgroup had */
		for (i = 0; i < nold; i++) {
			uint32_t k;

			for (k = 0; k < c->nprogs && c->progs[k] != old[i]; k++)
				;
			if (k == c->nprogs)
				keep_replaced(r, ep, old[i]);
		}
	}
	for (i = 0; i < nold; i++)
		prog_forget(r, old[i]);
}

/* Is PATH (relative to the cgroup2 mount) ANCESTOR or below it? */
static bool under(const char *path, const char *ancestor)
{
	size_t n = strlen(ancestor);

	if (!strcmp(ancestor, "/"))
		return true;
	return !strncmp(path, ancestor, n) && (path[n] == '\0' || path[n] == '/');
}

/* What applies to the opener's cgroup ID: the latest open episode on it or
 * an ancestor, and the policies of the devcg filters on the same path. */
static bool memo_fill(struct devcg_revokes *r, uint64_t id)
{
	const char *found = r->src.path(r->src.ctx, id);
	char opener[sizeof(r->cgs[0].path)];
	size_t i;
	uint32_t k;

	if (!found)
		return false; /* not memoized: the cgroup may be found on a later walk */
	/* a copy: the next lookup may walk the tree again and free it */
	snprintf(opener, sizeof(opener), "%s", found);
	/* every path first: finding one may retire another cgroup */
	for (i = 0; i < r->ncgs; i++)
		cg_path(r, &r->cgs[i]);
	r->memo.valid = true;
	r->memo.cgroup_id = id;
	r->memo.generation = r->generation;
	r->memo.episode = -1;
	r->memo.decidable = true;
	r->memo.npolicies = 0;
	for (i = 0; i < r->ncgs; i++) {
		struct cg *c = &r->cgs[i];
		const char *path = cg_path(r, c);

		if (!path || !under(opener, path))
			continue;
		if (c->ep.open && (r->memo.episode < 0 ||
				   c->ep.rv.start_ns > r->cgs[r->memo.episode].ep.rv.start_ns))
			r->memo.episode = (long)i;
		for (k = 0; c->ep.open && k < c->ep.nreplaced; k++) {
			if (r->memo.npolicies == MEMO_POLICIES)
				r->memo.decidable = false;
			else
				r->memo.policies[r->memo.npolicies++] = c->ep.replaced[k];
		}
		for (k = 0; k < c->nprogs; k++) {
			const struct prog *p = prog_of(r, c->progs[k]);

			if (!p || p->owner == DEVCG_PROG_UNKNOWN || r->memo.npolicies == MEMO_POLICIES)
				r->memo.decidable = false;
			else if (p->owner == DEVCG_PROG_DEVCG)
				r->memo.policies[r->memo.npolicies++] = p->policy;
		}
	}
	return true;
}

static void add_victim(struct devcg_revoke *rv, const struct devcg_trace_event *ev)
{
	uint32_t i;

	for (i = 0; i < rv->nvictims; i++)
		if (rv->victims[i].pid == ev->pid)
			return;
	if (rv->nvictims < DEVCG_REVOKE_MAX_VICTIMS) {
		rv->victims[rv->nvictims].pid = ev->pid;
		memcpy(rv->victims[rv->nvictims].comm, ev->comm, 16);
		rv->victims[rv->nvictims++].comm[15] = '\0';
	}
}

static void add_device(struct devcg_revoke *rv, uint32_t type, uint32_t major, uint32_t minor,
		       uint8_t access)
{
	uint32_t i;

	for (i = 0; i < rv->ndevices; i++)
		if (rv->devices[i].type == type && rv->devices[i].major == major &&
		    rv->devices[i].minor == minor)
			break;
	if (i == rv->ndevices) {
		if (i == DEVCG_REVOKE_MAX_DEVICES)
			return; /* counted in denied, not listed */
		rv->devices[i].type = type;
		rv->devices[i].major = major;
		rv->devices[i].minor = minor;
		rv->devices[i].access = 0;
		rv->devices[i].count = 0;
		rv->ndevices++;
	}
	rv->devices[i].access |= access;
	rv->devices[i].count++;
}

static void feed_open(struct devcg_revokes *r, const struct devcg_trace_event *ev, uint32_t type,
		      uint32_t major, uint32_t minor)
{
	uint8_t access = devcg_open_access(ev->open.oflags);
	struct devcg_revoke *rv;
	size_t i;

	/* the common case, and a flood of refusals with no foreign change,
	 * end here */
	if (!r->nopen || !type)
		return;
	if ((!r->memo.valid || r->memo.cgroup_id != ev->cgroup_id ||
	     r->memo.generation != r->generation) && !memo_fill(r, ev->cgroup_id))
		return;
	if (r->memo.episode < 0 || !r->memo.decidable || !r->memo.npolicies)
		return;
	/* a refusal of devcg's own policy is intended, not a revocation */
	for (i = 0; i < r->memo.npolicies; i++)
		if (devcg_policy_check(r->memo.policies[i], (uint8_t)type, major, minor, access, NULL,
				       NULL) != 1)
			return;
	rv = &r->cgs[r->memo.episode].ep.rv;
	if (!rv->denied++)
		rv->first_denied_ns = ev->ts_ns;
	rv->last_denied_ns = ev->ts_ns;
	add_device(rv, type, major, minor, access);
	add_victim(rv, ev);
}

void devcg_revokes_feed(struct devcg_revokes *r, const struct devcg_trace_event *ev,
			uint32_t dev_type, uint32_t dev_major, uint32_t dev_minor, uint64_t lost)
{
	r->lost = lost;
	r->now_ns = ev->ts_ns;
	if (ev->type == DEVCG_EV_BPF_PROG_CHANGE)
		feed_bpf(r, ev);
	else if (ev->type == DEVCG_EV_OPEN_DENIED)
		feed_open(r, ev, dev_type, dev_major, dev_minor);
}

void devcg_revokes_flush(struct devcg_revokes *r, uint64_t now_ns)
{
	size_t i;

	for (i = 0; i < r->ncgs; i++)
		if (r->cgs[i].ep.open)
			close_episode(r, &r->cgs[i], now_ns);
}

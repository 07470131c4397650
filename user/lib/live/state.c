// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What runs for a cgroup: the device programs attached to it and to its
 * ancestors, which of them are effective (BPF_F_QUERY_EFFECTIVE), the
 * policies of ours, read back from the programs themselves, and those of
 * systemd's, read from their units.
 */
#include "live/live.h"
#include "live/progread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define MAX_PROGS 64

struct id_list {
	__u32 *ids;
	__u32 n;
};

struct devcg_state {
	char cgroup[4096];
	struct devcg_program *progs;
	struct devcg_reader **readers; /* per program: a foreign one's, or NULL */
	size_t n;
	const struct devcg_program *own;
};

/* A foreign program read back by the reader (progread.c): its owner, its
 * rules when a devices list can say them, and the reader kept to decide
 * when none can; why not, when it cannot be read. */
static void read_foreign(struct devcg_program *p, int fd, struct devcg_reader **reader)
{
	struct devcg_error e = { 0 };
	int ret = devcg_reader_open(fd, p->id, NULL, reader, &e);

	if (!ret) {
		snprintf(p->owner, sizeof(p->owner), "%s", devcg_reader_owner(*reader));
		ret = devcg_reader_policy(*reader, &p->policy, &e);
		p->read = !ret;
		/* a program that can be followed but says what no list can:
		 * decided request by request */
		if (ret && !strstr(e.msg, "no devices list can say")) {
			devcg_reader_free(*reader);
			*reader = NULL;
		}
	}
	if (ret)
		snprintf(p->why_unreadable, sizeof(p->why_unreadable), "%s", e.msg);
}

/* Add program ID, attached to the cgroup at REL ("?" where it cannot be
 * seen) in MODE; EFF is the effective set. */
static int add_program(struct devcg_state *s, const char *rel, bool visible, uint32_t mode,
		       uint32_t id, const struct id_list *eff, struct devcg_error *err)
{
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info), i;
	struct devcg_program *p, *v;
	int fd, ret;

	if (strlen(rel) >= sizeof(p->cgroup))
		return devcg_err(err, -ENAMETOOLONG, "the path of a cgroup is too long: %.64s...", rel);
	struct devcg_reader **rv;

	v = realloc(s->progs, (s->n + 1) * sizeof(*v));
	if (!v)
		return devcg_err(err, -ENOMEM, "out of memory");
	s->progs = v;
	rv = realloc(s->readers, (s->n + 1) * sizeof(*rv));
	if (!rv)
		return devcg_err(err, -ENOMEM, "out of memory");
	s->readers = rv;
	rv[s->n] = NULL;
	p = memset(&v[s->n], 0, sizeof(*p));
	p->id = id;
	p->mode = (uint8_t)mode;
	p->visible = visible;
	strcpy(p->cgroup, rel);
	for (i = 0; i < eff->n; i++)
		p->effective |= eff->ids[i] == id;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return devcg_err(err, -errno == -ENOENT ? -EAGAIN : -errno,
				 "cannot open program %u: %s", id, devcg_why(-errno, DEVCG_CAPS_FILTER));
	if (!bpf_obj_get_info_by_fd(fd, &info, &info_len))
		snprintf(p->name, sizeof(p->name), "%s", info.name);
	ret = devcg_filter_read(fd, &p->policy, &p->audit, err);
	if (ret < 0) {
		close(fd);
		return ret;
	}
	p->devcg = ret == 1;
	strcpy(p->owner, p->devcg ? "devcg" : "unknown");
	if (!p->devcg)
		read_foreign(p, fd, &s->readers[s->n]);
	close(fd);
	s->n++;
	return 0;
}

/* The device programs of FD (QFLAGS 0: attached to it; BPF_F_QUERY_EFFECTIVE:
 * every one that runs for it, wherever attached), however many. */
static int query(int fd, __u32 qflags, __u32 *flags, struct id_list *out, struct devcg_error *err)
{
	__u32 cnt = MAX_PROGS;

	for (;;) {
		__u32 *ids = realloc(out->ids, (cnt ? cnt : 1) * sizeof(*ids));

		if (!ids)
			return devcg_err(err, -ENOMEM, "out of memory");
		out->ids = ids;
		out->n = cnt;
		/* ENOSPC: more than CNT, and CNT now says how many */
		if (!bpf_prog_query(fd, BPF_CGROUP_DEVICE, qflags, flags, out->ids, &out->n))
			return 0;
		if (errno != ENOSPC || out->n <= cnt)
			break;
		cnt = out->n;
	}
	out->n = 0;
	return devcg_err(err, -errno, "cannot query device programs: %s",
			 devcg_why(-errno, DEVCG_CAPS_FILTER));
}

static bool listed(const struct devcg_state *s, uint32_t id)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->progs[i].id == id)
			return true;
	return false;
}

/*
 * systemd's own program on a unit's own cgroup enforces the unit's
 * DevicePolicy= and DeviceAllow= (systemd builds it from them and attaches
 * it again whenever they change, systemd.c): ask systemd for them. Any
 * failure leaves the program undecidable, as every other foreign one.
 */
static void read_systemds(struct devcg_program *p, int cgroup_fd)
{
	struct devcg_policy *unit = NULL;

	if (p->devcg || !p->visible || strcmp(p->name, DEVCG_SYSTEMD_PROG_NAME))
		return;
	devcg_systemd_read(p->cgroup, cgroup_fd, p->systemd_unit, sizeof(p->systemd_unit), &unit);
	/* what the unit says, read over D-Bus, before the program's rules
	 * read back (which it was built from) */
	if (unit) {
		devcg_policy_free(p->policy);
		p->policy = unit;
		p->read = false;
	}
}

static int state_read(const char *cgroup, bool systemd, struct devcg_state **out,
		      struct devcg_error *err)
{
	struct devcg_state *s = calloc(1, sizeof(*s));
	struct id_list eff = { 0 }, att = { 0 };
	struct devcg_lineage l = { 0 };
	struct devcg_cgroup cg;
	size_t level, levels, own_end = 0, i;
	__u32 flags;
	int ret;

	if (!s)
		return devcg_err(err, -ENOMEM, "out of memory");
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_READ, &cg, err);
	/* the truth: every program that runs for the cgroup, whichever path
	 * reached it (compute_effective_progs() in kernel/bpf/cgroup.c) */
	if (!ret)
		ret = query(cg.fd, BPF_F_QUERY_EFFECTIVE, &flags, &eff, err);
	/* where they are attached: the ancestors that can be seen, found by
	 * identity; without them only the cgroup itself */
	if (!ret && devcg_cgroup_lineage(&cg, &l))
		memset(&l, 0, sizeof(l));
	levels = l.n ? l.n : 1;
	if (!ret && strlen(l.n ? l.rels[0] : devcg_cgroup_rel(&cg)) >= sizeof(s->cgroup))
		ret = devcg_err(err, -ENAMETOOLONG, "%s: its path is too long", cgroup);
	if (!ret)
		strcpy(s->cgroup, l.n ? l.rels[0] : devcg_cgroup_rel(&cg));
	for (level = 0; !ret && level < levels; level++) {
		const char *rel = l.n ? l.rels[level] : devcg_cgroup_rel(&cg);

		ret = query(l.n ? l.fds[level] : cg.fd, 0, &flags, &att, err);
		for (i = 0; !ret && i < att.n; i++) {
			ret = add_program(s, rel, true, devcg_mode_of(flags), att.ids[i], &eff, err);
			/* ancestors' programs are listed only when they apply */
			if (!ret && level && !s->progs[s->n - 1].effective) {
				devcg_policy_free(s->progs[s->n - 1].policy);
				devcg_reader_free(s->readers[s->n - 1]);
				s->n--;
			} else if (!ret && systemd) {
				read_systemds(&s->progs[s->n - 1], l.n ? l.fds[level] : cg.fd);
			}
		}
		if (!level)
			own_end = s->n;
	}
	/* what runs but is attached above what can be seen (outside this
	 * cgroup namespace or mounted subtree) is still read and decided */
	for (i = 0; !ret && i < eff.n; i++)
		if (!listed(s, eff.ids[i]))
			ret = add_program(s, "?", false, 0, eff.ids[i], &eff, err);
	devcg_lineage_free(&l);
	devcg_cgroup_close(&cg);
	free(eff.ids);
	free(att.ids);
	if (ret) {
		devcg_state_free(s);
		return ret;
	}
	for (i = 0; i < own_end && !s->own; i++)
		if (s->progs[i].devcg)
			s->own = &s->progs[i];
	*out = s;
	return 0;
}

int devcg_state_read(const char *cgroup, struct devcg_state **out, struct devcg_error *err)
{
	return state_read(cgroup, true, out, err);
}

int devcg_state_read_programs(const char *cgroup, struct devcg_state **out, struct devcg_error *err)
{
	return state_read(cgroup, false, out, err);
}

void devcg_state_free(struct devcg_state *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++) {
		devcg_policy_free(s->progs[i].policy);
		devcg_reader_free(s->readers[i]);
	}
	free(s->readers);
	free(s->progs);
	free(s);
}

const char *devcg_state_cgroup(const struct devcg_state *s)
{
	return s->cgroup;
}

size_t devcg_state_count(const struct devcg_state *s)
{
	return s->n;
}

const struct devcg_program *devcg_state_program(const struct devcg_state *s, size_t i)
{
	return i < s->n ? &s->progs[i] : NULL;
}

const struct devcg_program *devcg_state_own(const struct devcg_state *s)
{
	return s->own;
}

int devcg_state_check(const struct devcg_state *s, uint8_t type, uint32_t major, uint32_t minor,
		      uint8_t access, const struct devcg_program **by,
		      struct devcg_exception *decider, bool *decided)
{
	const struct devcg_program *unknown = NULL;
	size_t i;

	if (decided)
		*decided = false;
	if (by)
		*by = NULL;
	if ((type == DEVCG_BLOCK || type == DEVCG_CHAR) && !(access & ~DEVCG_ACC_ALL) &&
	    !devcg_request_checked(type, major, minor, access))
		return 1; /* no program is run, a foreign one neither */
	if (!major && !minor)
		access = DEVCG_ACC_MKNOD; /* a block 0:0 mknod: only its 'm' is asked */
	/* every effective program must allow (BPF_PROG_RUN_ARRAY_CG) */
	for (i = 0; i < s->n; i++) {
		const struct devcg_program *p = &s->progs[i];
		int ret;

		if (!p->effective)
			continue;
		if (!p->policy && s->readers[i]) {
			/* a foreign program no list can say: the reader decides */
			ret = devcg_reader_decide(s->readers[i], type, major, minor, access, NULL);
			if (ret == 0) {
				if (by)
					*by = p;
				return 0;
			}
			if (ret == 1)
				continue;
		}
		if (!p->policy) {
			unknown = unknown ? unknown : p;
			continue;
		}
		ret = devcg_policy_check(p->policy, type, major, minor, access, decider, decided);
		if (ret < 0)
			return ret;
		if (!ret) {
			if (by)
				*by = p;
			return 0;
		}
	}
	if (unknown) {
		if (by)
			*by = unknown;
		return -EOPNOTSUPP;
	}
	return 1;
}

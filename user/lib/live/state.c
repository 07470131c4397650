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
	size_t own_end; /* progs[0..own_end) are attached to the cgroup itself */
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
	s->own_end = own_end;
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

/* Whose program P is, for a message. */
static const char *whose(const struct devcg_program *p)
{
	static const char *const owners[][2] = {
		{ "devcg", "devcg's" }, { "systemd", "systemd's" }, { "runc", "runc's" }, { "crun", "crun's" },
	};

	for (size_t i = 0; i < sizeof(owners) / sizeof(owners[0]); i++)
		if (!strcmp(p->owner, owners[i][0]))
			return owners[i][1];
	return "a foreign";
}

/* Which of the accesses ASK of the device program I of S refuses (one it
 * cannot decide refuses none). */
static uint8_t refused_by(const struct devcg_state *s, size_t i, uint8_t type, uint32_t major, uint32_t minor,
			  uint8_t ask)
{
	static const uint8_t bits[] = { DEVCG_ACC_READ, DEVCG_ACC_WRITE, DEVCG_ACC_MKNOD };
	const struct devcg_program *p = &s->progs[i];
	uint8_t refused = 0;

	for (size_t b = 0; b < sizeof(bits); b++) {
		int ret = -EOPNOTSUPP;

		if (!(ask & bits[b]) || !devcg_request_checked(type, major, minor, bits[b]))
			continue;
		if (p->policy)
			ret = devcg_policy_check(p->policy, type, major, minor, bits[b], NULL, NULL);
		else if (s->readers[i])
			ret = devcg_reader_decide(s->readers[i], type, major, minor, bits[b], NULL);
		if (ret == 0)
			refused |= bits[b];
	}
	return refused;
}

/* The first program of S on an ancestor that refuses a grant of G[0..N)
 * (*K, the accesses in *REFUSED): its index, or -1. */
static long first_refusal(const struct devcg_state *s, const struct devcg_grant *g, size_t n, const char *skip,
			  size_t *k, uint8_t *refused)
{
	for (*k = 0; *k < n; (*k)++) {
		uint8_t ask = g[*k].access & (DEVCG_ACC_READ | DEVCG_ACC_WRITE);

		for (size_t i = s->own_end; i < s->n; i++) {
			if (skip && s->progs[i].visible && !strcmp(s->progs[i].owner, "systemd") &&
			    !strcmp(s->progs[i].cgroup, skip))
				continue;
			*refused = s->progs[i].effective ? refused_by(s, i, g[*k].type, g[*k].major, g[*k].minor,
								      ask ? ask : g[*k].access) : 0;
			if (*refused)
				return (long)i;
		}
	}
	return -1;
}

/* Does devcg's systemd step, on a write of CGROUP, widen the unit whose
 * own cgroup is ANCESTOR (as systemd names it)? */
static bool step_widens(const char *cgroup, const char *ancestor)
{
	struct devcg_cgroup cg;
	char unit[256], unit_cg[4200];
	bool yes;

	if (devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_READ, &cg, NULL))
		return false;
	yes = devcg_systemd_unit_of(&cg, unit, sizeof(unit), unit_cg, sizeof(unit_cg), NULL) == 1 &&
	      !strcmp(unit_cg, ancestor);
	devcg_cgroup_close(&cg);
	return yes;
}

/*
 * The grants G[0..N) on CGROUP: a device a program on one of its ancestors
 * refuses stays refused there whatever CGROUP's own filter says (every
 * program on the path must allow), and devcg does not change ancestors. So
 * what an open asks of a device granted (r and w; m when m alone is
 * granted) is decided by each program that runs for CGROUP from an
 * ancestor (as devcg_state_check() does; one devcg cannot decide is passed
 * over), and the first refusal is an error naming that ancestor cgroup and
 * the program's owner. The state is read without systemd's units (no
 * D-Bus call): systemd's program is decided by its instructions. With
 * SYSTEMD_STEP, systemd's program on the unit that devcg's systemd step
 * widens for CGROUP (a scope above crun's child "container", systemd.c) is
 * passed over: the step makes it allow what devcg's filter does.
 */
int devcg_ancestors_refuse(const char *cgroup, const struct devcg_grant *g, size_t n, bool systemd_step,
			   struct devcg_error *err)
{
	struct devcg_state *s = NULL;
	const struct devcg_program *p;
	char skip[4200] = "";
	uint32_t seen = 0;
	uint8_t refused = 0;
	char acc[8], where[4200];
	long i = -1;
	size_t k;
	int ret;

	/*
	 * A program that runs for the cgroup but that no cgroup of the path
	 * lists is attached above what can be seen, or was swapped between
	 * the read's two queries (a writer of the cgroup or of an ancestor,
	 * meanwhile): it is believed only when a second read finds it again.
	 */
	for (int tries = 0; n && tries < 5; tries++) {
		/* (a cgroup that cannot be read: the swap says why) */
		if (devcg_state_read_programs(cgroup, &s, NULL))
			return 0;
		i = first_refusal(s, g, n, skip[0] ? skip : NULL, &k, &refused);
		if (i >= 0 && systemd_step && !skip[0] && s->progs[i].visible && !strcmp(s->progs[i].owner, "systemd") &&
		    step_widens(cgroup, s->progs[i].cgroup)) {
			snprintf(skip, sizeof(skip), "%s", s->progs[i].cgroup);
			i = first_refusal(s, g, n, skip, &k, &refused);
		}
		if (i < 0 || s->progs[i].visible || s->progs[i].id == seen)
			break;
		seen = s->progs[i].id;
		i = -1;
		devcg_state_free(s);
		s = NULL;
	}
	if (i < 0) {
		devcg_state_free(s);
		return 0;
	}
	p = &s->progs[i];
	devcg_access_format(refused, acc);
	if (p->visible)
		snprintf(where, sizeof(where), "its ancestor cgroup %s", p->cgroup);
	else
		snprintf(where, sizeof(where), "an ancestor cgroup not visible from here");
	ret = devcg_err(err, -EACCES,
			"%s: %c %u:%u %s would still be refused by %s program %u (%s) on %s, which devcg "
			"does not change: nothing changed (allow it there first)",
			s->cgroup, g[k].type == DEVCG_BLOCK ? 'b' : 'c', g[k].major, g[k].minor, acc, whose(p),
			p->id, p->name[0] ? p->name : "no name", where);
	devcg_state_free(s);
	return ret;
}

/*
 * The devices that the allow rules among RULE (or RULES) grant, each rule
 * of one device: -EACCES, nothing changed, when a program on an ancestor
 * of CGROUP would still refuse it (devcg_ancestors_refuse()). A rule of a
 * range ('c 10:* rw', 'a') is not checked: an ancestor that allows only
 * part of it is the usual case (a container's parent unit).
 */
int devcg_rules_ancestors_refuse(const char *cgroup, const struct devcg_rule *rule,
				 const struct devcg_rules *rules, bool systemd_step, struct devcg_error *err)
{
	size_t n = rules ? devcg_rules_count(rules) : 1, k, ng = 0;
	struct devcg_grant *g = calloc(n ? n : 1, sizeof(*g));
	int ret;

	if (!g)
		return devcg_err(err, -ENOMEM, "out of memory");
	for (k = 0; k < n; k++) {
		const struct devcg_rule *r = rules ? devcg_rules_get(rules, k) : rule;

		if (r && r->verb == DEVCG_VERB_ALLOW && (r->type == DEVCG_CHAR || r->type == DEVCG_BLOCK) &&
		    r->major != DEVCG_ANY && r->minor != DEVCG_ANY && r->access)
			g[ng++] = (struct devcg_grant){ r->type, r->major, r->minor, r->access };
	}
	ret = devcg_ancestors_refuse(cgroup, g, ng, systemd_step, err);
	free(g);
	return ret;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What runs for a cgroup: the device programs attached to it and to its
 * ancestors, which of them are effective (BPF_F_QUERY_EFFECTIVE), and the
 * policies of ours, read back from the programs themselves.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define MAX_PROGS 64

struct devcg_state {
	char cgroup[4096];
	struct devcg_program *progs;
	size_t n;
	const struct devcg_program *own;
};

static int add_program(struct devcg_state *s, const char *rel, uint32_t mode,
		       uint32_t id, const uint32_t *eff, uint32_t neff, struct devcg_error *err)
{
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info), i;
	struct devcg_program *p, *v;
	int fd, ret;

	v = realloc(s->progs, (s->n + 1) * sizeof(*v));
	if (!v)
		return devcg_err(err, -ENOMEM, "out of memory");
	s->progs = v;
	p = memset(&v[s->n], 0, sizeof(*p));
	p->id = id;
	p->mode = (uint8_t)mode;
	snprintf(p->cgroup, sizeof(p->cgroup), "%s", rel);
	for (i = 0; i < neff; i++)
		p->effective |= eff[i] == id;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return devcg_err(err, -errno == -ENOENT ? -EAGAIN : -errno,
				 "cannot open program %u: %s", id, devcg_why(-errno, DEVCG_CAPS_FILTER));
	if (!bpf_obj_get_info_by_fd(fd, &info, &info_len))
		snprintf(p->name, sizeof(p->name), "%s", info.name);
	ret = devcg_filter_read(fd, &p->policy, &p->audit, err);
	close(fd);
	if (ret < 0)
		return ret;
	p->devcg = ret == 1;
	s->n++;
	return 0;
}

static int query(int fd, __u32 qflags, __u32 *flags, __u32 *ids, __u32 *cnt, struct devcg_error *err)
{
	*cnt = MAX_PROGS;
	if (bpf_prog_query(fd, BPF_CGROUP_DEVICE, qflags, flags, ids, cnt))
		return devcg_err(err, -errno, "cannot query device programs: %s",
				 devcg_why(-errno, DEVCG_CAPS_FILTER));
	return 0;
}

int devcg_state_read(const char *cgroup, struct devcg_state **out, struct devcg_error *err)
{
	struct devcg_state *s = calloc(1, sizeof(*s));
	__u32 eff[MAX_PROGS], neff, ids[MAX_PROGS], n, flags, i;
	struct devcg_cgroup cg;
	char rel[4096];
	int ret;

	if (!s)
		return devcg_err(err, -ENOMEM, "out of memory");
	ret = devcg_cgroup_resolve(cgroup, &cg, err);
	if (!ret)
		ret = query(cg.fd, BPF_F_QUERY_EFFECTIVE, &flags, eff, &neff, err);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cg.rel);
	snprintf(rel, sizeof(rel), "%s", cg.rel);
	/* the cgroup itself, then each ancestor up to the mount */
	while (!ret) {
		char path[8192];
		int fd;

		snprintf(path, sizeof(path), "%s%s", cg.mount, strcmp(rel, "/") ? rel : "");
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			char q[1024];

			ret = -errno;
			devcg_err(err, ret, "%s: %s", devcg_quote(q, sizeof(q), path, (size_t)-1),
				  strerror(-ret));
			break;
		}
		ret = query(fd, 0, &flags, ids, &n, err);
		for (i = 0; !ret && i < n; i++) {
			size_t before = s->n;

			ret = add_program(s, rel, devcg_mode_of(flags), ids[i], eff, neff, err);
			/* ancestors' programs are listed only when they apply */
			if (!ret && strcmp(rel, s->cgroup) && !s->progs[before].effective) {
				devcg_policy_free(s->progs[before].policy);
				s->n--;
			}
		}
		close(fd);
		if (!strcmp(rel, "/"))
			break;
		*strrchr(rel, '/') = '\0';
		if (!rel[0])
			strcpy(rel, "/");
	}
	devcg_cgroup_close(&cg);
	if (ret) {
		devcg_state_free(s);
		return ret;
	}
	for (i = 0; i < s->n; i++)
		if (!s->own && s->progs[i].devcg && !strcmp(s->progs[i].cgroup, s->cgroup))
			s->own = &s->progs[i];
	*out = s;
	return 0;
}

void devcg_state_free(struct devcg_state *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->n; i++)
		devcg_policy_free(s->progs[i].policy);
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
	/* every effective program must allow (BPF_PROG_RUN_ARRAY_CG) */
	for (i = 0; i < s->n; i++) {
		const struct devcg_program *p = &s->progs[i];
		int ret;

		if (!p->effective)
			continue;
		if (!p->devcg) {
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

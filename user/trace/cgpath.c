// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * From a cgroup's kernfs id, as the trace programs report it, to its path.
 * A cgroup directory's inode number is its kernfs id, so a walk of each
 * hierarchy with stat() gives the map; it is walked again on a miss.
 */
#include "internal.h"
#include "trace.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct entry {
	uint64_t id;
	char *path;
};

struct tree {
	char mount[4096];
	struct entry *v;
	size_t n, cap;
	uint64_t walked_ns;
};

struct devcg_cgpaths {
	struct tree t[DEVCG_H_MAX];
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void add(struct tree *t, uint64_t id, const char *rel)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		struct entry *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n].id = id;
	t->v[t->n].path = strdup(rel[0] ? rel : "/");
	if (t->v[t->n].path)
		t->n++;
}

static void walk(struct tree *t, int dirfd, char *rel, size_t len, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;

	if (!d) {
		close(dirfd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (len + strlen(de->d_name) + 2 >= 4096 || depth > 64)
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		snprintf(rel + len, 4096 - len, "/%s", de->d_name);
		add(t, st.st_ino, rel);
		walk(t, fd, rel, strlen(rel), depth + 1);
		rel[len] = '\0';
	}
	closedir(d);
}

static void rewalk(struct tree *t)
{
	char rel[4096] = "";
	struct stat st;
	size_t i;
	int fd;

	for (i = 0; i < t->n; i++)
		free(t->v[i].path);
	t->n = 0;
	t->walked_ns = now_ns();
	fd = open(t->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!fstat(fd, &st))
		add(t, st.st_ino, "/");
	walk(t, fd, rel, 0, 0);
}

struct devcg_cgpaths *devcg_cgpaths_new(void)
{
	struct devcg_cgpaths *c = calloc(1, sizeof(*c));
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];

	if (!c || !f) {
		if (f)
			fclose(f);
		return c;
	}
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - "), mnt[4096], fstype[64], src[256], opts[1024];
		enum devcg_hierarchy h;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 ||
		    sscanf(sep + 3, "%63s %255s %1023s", fstype, src, opts) != 3)
			continue;
		if (!strcmp(fstype, "cgroup2"))
			h = DEVCG_H_V2;
		else if (!strcmp(fstype, "cgroup") && strstr(opts, "devices"))
			h = DEVCG_H_DEVICES;
		else if (!strcmp(fstype, "cgroup") && strstr(opts, "freezer"))
			h = DEVCG_H_FREEZER;
		else
			continue;
		if (!c->t[h].mount[0])
			snprintf(c->t[h].mount, sizeof(c->t[h].mount), "%s", mnt);
	}
	fclose(f);
	return c;
}

void devcg_cgpaths_free(struct devcg_cgpaths *c)
{
	int h;
	size_t i;

	if (!c)
		return;
	for (h = 0; h < DEVCG_H_MAX; h++) {
		for (i = 0; i < c->t[h].n; i++)
			free(c->t[h].v[i].path);
		free(c->t[h].v);
	}
	free(c);
}

const char *devcg_cgpaths_mount(const struct devcg_cgpaths *c, enum devcg_hierarchy h)
{
	return c->t[h].mount[0] ? c->t[h].mount : NULL;
}

static const char *find(struct tree *t, uint64_t id)
{
	size_t i;

	for (i = t->n; i-- > 0;)
		if (t->v[i].id == id)
			return t->v[i].path;
	return NULL;
}

const char *devcg_cgpaths_lookup(struct devcg_cgpaths *c, enum devcg_hierarchy h, uint64_t id)
{
	struct tree *t = &c->t[h];
	const char *p;

	if (!t->mount[0] || !id)
		return NULL;
	p = find(t, id);
	/* a cgroup made since the last walk; at most one walk per 20 ms */
	if (!p && now_ns() - t->walked_ns > 20000000ull) {
		rewalk(t);
		p = find(t, id);
	}
	return p;
}

int devcg_cgpaths_each(struct devcg_cgpaths *c, enum devcg_hierarchy h,
		       int (*cb)(void *ctx, uint64_t id, const char *path), void *ctx)
{
	struct tree *t = &c->t[h];
	size_t i;
	int ret = 0;

	if (!t->mount[0])
		return 0;
	rewalk(t);
	for (i = 0; i < t->n && !ret; i++)
		ret = cb(ctx, t->v[i].id, t->v[i].path);
	return ret;
}

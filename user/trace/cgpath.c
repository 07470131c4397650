// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * From a cgroup's kernfs id, as the trace programs report it, to its path.
 * A cgroup directory's inode number is its kernfs id, so one walk of each
 * hierarchy with fstat() fills a hash table from id to path; a lookup is
 * then one hash and a probe or two, however many cgroups there are.
 *
 * An id the table does not hold (a cgroup made since the walk, or one
 * removed before its events were read) is looked up once on its own: its
 * kernfs file handle is the id (kernfs_encode_fh() in fs/kernfs/mount.c),
 * so open_by_handle_at() on the hierarchy's mount opens it and
 * /proc/self/fd names it. Where that cannot be done (no
 * CAP_DAC_READ_SEARCH, a file system that is not kernfs), the hierarchy is
 * walked again, at most once for each unknown id and at most once every
 * 20 ms. An id found nowhere is remembered as unknown: kernfs never gives
 * an id twice, so it stays unknown, and asking again costs a probe.
 */
#include "internal.h"
#include "trace.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

/* FILEID_KERNFS (include/linux/exportfs.h) */
#define KERNFS_HANDLE_TYPE 0xfe
/* at most one walk for unknown ids in this long */
#define REWALK_NS 20000000ull
/* ids learned since the last walk (unknown ones too) before the table is
 * walked afresh, which forgets them: memory stays bounded on a host that
 * makes and removes cgroups all the time */
#define MAX_LEARNED 65536

struct slot {
	uint64_t id;  /* 0: empty */
	char *path;   /* NULL: an id known to be unknown */
};

struct tree {
	char mount[PATH_MAX];
	int mfd;          /* the mount's root, for open_by_handle_at(); -1 until needed */
	bool by_handle;   /* open_by_handle_at() works here (until it says otherwise) */
	bool walked;
	struct slot *slots;
	size_t cap;       /* a power of two, or 0 */
	size_t used;      /* slots taken, unknown ids too */
	size_t unknown;   /* slots that hold an unknown id */
	size_t learned;   /* ids put since the last walk */
	uint64_t walked_ns;
	struct devcg_cgpaths_stats st;
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

/* Fibonacci hashing: kernfs ids come from a cyclic counter, and
 * consecutive keys land far apart. */
static size_t home(const struct tree *t, uint64_t id)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 32) & (t->cap - 1);
}

/* The slot of ID, or the empty slot where it would go; the slots looked
 * at are added to *COUNT (when not NULL). */
static struct slot *probe_counted(struct tree *t, uint64_t id, uint64_t *count)
{
	size_t i = home(t, id);

	for (;;) {
		if (count)
			(*count)++;
		if (!t->slots[i].id || t->slots[i].id == id)
			return &t->slots[i];
		i = (i + 1) & (t->cap - 1);
	}
}

static struct slot *probe(struct tree *t, uint64_t id)
{
	return probe_counted(t, id, NULL);
}

static void drop_all(struct tree *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		free(t->slots[i].path);
	free(t->slots);
	t->slots = NULL;
	t->cap = t->used = t->unknown = 0;
}

/* Room for one more id, at a load of at most one half: -ENOMEM, or 0. */
static int reserve(struct tree *t)
{
	struct slot *old = t->slots;
	size_t cap = t->cap, i;

	if ((t->used + 1) * 2 <= t->cap)
		return 0;
	t->slots = calloc(cap ? cap * 2 : 1024, sizeof(*t->slots));
	if (!t->slots) {
		t->slots = old;
		return -ENOMEM;
	}
	t->cap = cap ? cap * 2 : 1024;
	for (i = 0; i < cap; i++)
		if (old[i].id)
			*probe(t, old[i].id) = old[i];
	free(old);
	return 0;
}

/* Set the path of ID (NULL: unknown); the old path is freed. */
static void put(struct tree *t, uint64_t id, const char *path)
{
	struct slot *s;
	char *copy = NULL;

	if (!id || reserve(t) || (path && !(copy = strdup(path))))
		return;
	s = probe(t, id);
	if (!s->id) {
		s->id = id;
		t->used++;
	} else if (!s->path) {
		t->unknown--;
	}
	free(s->path);
	s->path = copy;
	t->unknown += !copy;
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
		if (len + strlen(de->d_name) + 2 >= PATH_MAX || depth > 64)
			continue;
		fd = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st)) {
			if (fd >= 0)
				close(fd);
			continue;
		}
		snprintf(rel + len, PATH_MAX - len, "/%s", de->d_name);
		put(t, st.st_ino, rel);
		walk(t, fd, rel, strlen(rel), depth + 1);
		rel[len] = '\0';
	}
	closedir(d);
}

/* Walk the hierarchy afresh: the table then holds what is there now and,
 * unless FORGET, the ids known to be unknown (no id comes back). */
static void rewalk(struct tree *t, bool forget)
{
	char rel[PATH_MAX] = "";
	uint64_t *keep = NULL;
	size_t n = 0, i;
	struct stat st;
	int fd;

	t->st.walks++;
	t->walked = true;
	if (!forget && t->unknown && (keep = malloc(t->unknown * sizeof(*keep))))
		for (i = 0; i < t->cap; i++)
			if (t->slots[i].id && !t->slots[i].path)
				keep[n++] = t->slots[i].id;
	drop_all(t);
	for (i = 0; i < n; i++)
		put(t, keep[i], NULL);
	free(keep);
	fd = open(t->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (!fstat(fd, &st))
			put(t, st.st_ino, "/");
		walk(t, fd, rel, 0, 0);
	}
	t->learned = 0;
	/* the interval counts from its end: a long walk is not followed at once by another */
	t->walked_ns = now_ns();
}

/*
 * The path of cgroup ID, looked up on its own (see above): 1 found (put in
 * the table), 0 gone (no such cgroup now), or -1 when this way cannot tell.
 */
static int by_handle(struct tree *t, uint64_t id)
{
	struct {
		struct file_handle fh;
		unsigned char id[8];
	} h = { .fh = { .handle_bytes = 8, .handle_type = KERNFS_HANDLE_TYPE } };
	char link[64], path[PATH_MAX];
	size_t mlen = strlen(t->mount);
	struct statfs sfs;
	struct stat a, b;
	const char *rel;
	ssize_t n;
	int fd, ret = -1;

	if (!t->by_handle)
		return -1;
	if (t->mfd < 0)
		t->mfd = open(t->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* a kernfs handle means nothing to another file system */
	if (t->mfd < 0 || fstatfs(t->mfd, &sfs) ||
	    (sfs.f_type != CGROUP2_SUPER_MAGIC && sfs.f_type != CGROUP_SUPER_MAGIC)) {
		t->by_handle = false;
		return -1;
	}
	memcpy(h.id, &id, sizeof(h.id));
	t->st.handles++;
	fd = open_by_handle_at(t->mfd, &h.fh, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0) {
		/* ESTALE: kernfs has no node of that id (any more) */
		if (errno == ESTALE || errno == ENOENT)
			return 0;
		/* EPERM without CAP_DAC_READ_SEARCH; not kernfs; too old */
		t->by_handle = false;
		return -1;
	}
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && fstat(fd, &a) == 0 && a.st_ino == id) {
		path[n] = '\0';
		/* below the mount it was opened through; checked to be that
		 * very directory, which a removed one (" (deleted)") is not */
		rel = !strcmp(t->mount, "/") ? path : path + mlen;
		if ((!strcmp(t->mount, "/") || (!strncmp(path, t->mount, mlen) &&
						  (path[mlen] == '/' || !path[mlen]))) &&
		    !fstatat(t->mfd, rel[0] && strcmp(rel, "/") ? rel + 1 : ".", &b, AT_SYMLINK_NOFOLLOW) &&
		    b.st_ino == a.st_ino && b.st_dev == a.st_dev) {
			put(t, id, rel[0] ? rel : "/");
			ret = 1;
		}
	}
	close(fd);
	return ret;
}

struct devcg_cgpaths *devcg_cgpaths_new(void)
{
	struct devcg_cgpaths *c = devcg_cgpaths_new_at(NULL);
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];

	if (!c || !f) {
		if (f)
			fclose(f);
		return c;
	}
	while (fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - "), mnt[PATH_MAX], fstype[64], src[256], opts[1024];
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
		devcg_mountinfo_unescape(mnt);
		if (!c->t[h].mount[0])
			snprintf(c->t[h].mount, sizeof(c->t[h].mount), "%s", mnt);
	}
	fclose(f);
	return c;
}

struct devcg_cgpaths *devcg_cgpaths_new_at(const char *const mounts[DEVCG_H_MAX])
{
	struct devcg_cgpaths *c = calloc(1, sizeof(*c));
	int h;

	if (!c)
		return NULL;
	for (h = 0; h < DEVCG_H_MAX; h++) {
		c->t[h].mfd = -1;
		c->t[h].by_handle = true;
		if (mounts && mounts[h])
			snprintf(c->t[h].mount, sizeof(c->t[h].mount), "%s", mounts[h]);
	}
	return c;
}

void devcg_cgpaths_free(struct devcg_cgpaths *c)
{
	int h;

	if (!c)
		return;
	for (h = 0; h < DEVCG_H_MAX; h++) {
		drop_all(&c->t[h]);
		if (c->t[h].mfd >= 0)
			close(c->t[h].mfd);
	}
	free(c);
}

const char *devcg_cgpaths_mount(const struct devcg_cgpaths *c, enum devcg_hierarchy h)
{
	return c->t[h].mount[0] ? c->t[h].mount : NULL;
}

const char *devcg_cgpaths_lookup(struct devcg_cgpaths *c, enum devcg_hierarchy h, uint64_t id)
{
	struct tree *t = &c->t[h];
	struct slot *s;
	int found;

	if (!t->mount[0] || !id)
		return NULL;
	t->st.lookups++;
	if (!t->walked)
		rewalk(t, false);
	if (t->cap && (s = probe_counted(t, id, &t->st.probes))->id)
		return s->path; /* NULL for an id known to be unknown */
	if (t->learned >= MAX_LEARNED) {
		rewalk(t, true);
		if (t->cap && (s = probe(t, id))->id)
			return s->path;
	}
	/* not seen yet: on its own, else by a walk (at most one per unknown
	 * id, and one per REWALK_NS) */
	found = by_handle(t, id);
	if (found < 0) {
		if (now_ns() - t->walked_ns < REWALK_NS)
			return NULL;
		rewalk(t, false);
		found = t->cap && probe(t, id)->id;
	}
	t->learned++;
	if (!found) {
		put(t, id, NULL);
		return NULL;
	}
	return t->cap ? probe(t, id)->path : NULL;
}

int devcg_cgpaths_each(struct devcg_cgpaths *c, enum devcg_hierarchy h,
		       int (*cb)(void *ctx, uint64_t id, const char *path), void *ctx)
{
	struct tree *t = &c->t[h];
	uint64_t *ids;
	size_t i, n = 0;
	int ret = 0;

	if (!t->mount[0])
		return 0;
	rewalk(t, false);
	/* the ids first: CB may look up others, which may grow the table */
	ids = malloc((t->used ? t->used : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < t->cap; i++)
		if (t->slots[i].id && t->slots[i].path)
			ids[n++] = t->slots[i].id;
	/* and CB gets a copy of the path, which stays its own */
	for (i = 0; i < n && !ret; i++) {
		struct slot *s = probe(t, ids[i]);
		char *path = s->id && s->path ? strdup(s->path) : NULL;

		if (path)
			ret = cb(ctx, ids[i], path);
		free(path);
	}
	free(ids);
	return ret;
}

void devcg_cgpaths_stats(const struct devcg_cgpaths *c, enum devcg_hierarchy h,
			 struct devcg_cgpaths_stats *out)
{
	*out = c->t[h].st;
	out->entries = c->t[h].used - c->t[h].unknown;
	out->unknown = c->t[h].unknown;
}

/* The hierarchy of C that the directory FD is a cgroup of, and its id:
 * 0, or -ENOTDIR when it is none of them. */
static int tree_of(struct devcg_cgpaths *c, int fd, enum devcg_hierarchy *h, uint64_t *id)
{
	struct statfs sfs;
	struct stat st, m;
	int i;

	if (fstat(fd, &st) || fstatfs(fd, &sfs))
		return -errno;
	if (sfs.f_type != CGROUP2_SUPER_MAGIC && sfs.f_type != CGROUP_SUPER_MAGIC)
		return -ENOTDIR;
	for (i = 0; i < DEVCG_H_MAX; i++) {
		if (c->t[i].mount[0] && !stat(c->t[i].mount, &m) && m.st_dev == st.st_dev) {
			*h = (enum devcg_hierarchy)i;
			*id = st.st_ino;
			return 0;
		}
	}
	return -ENOTDIR;
}

/* REL of the directory FD when it is a cgroup of one of C's hierarchies
 * (else FALLBACK, when not NULL): 1, else 0. */
static int rel_of(struct devcg_cgpaths *c, int fd, const char *fallback, char *rel, size_t len)
{
	enum devcg_hierarchy h;
	const char *p = NULL;
	uint64_t id;

	if (!tree_of(c, fd, &h, &id))
		p = devcg_cgpaths_lookup(c, h, id);
	if (!p && !fallback)
		return 0;
	snprintf(rel, len, "%s", p ? p : fallback);
	return 1;
}

int devcg_cgpaths_resolve(struct devcg_cgpaths *c, const char *arg, char *rel, size_t len,
			  struct devcg_error *err)
{
	struct devcg_error why = { 0 };
	struct devcg_cgroup cg;
	char full[PATH_MAX + 8], q[1024], where[DEVCG_H_MAX * (PATH_MAX + 4)] = "";
	const char *mounts[DEVCG_H_MAX];
	int ret, fd, i, n = 0, found;

	/* as every other verb takes it: relative to the cgroup2 mount, or an
	 * absolute path of a cgroup2 directory */
	ret = devcg_cgroup_resolve(arg, DEVCG_RESOLVE_READ, &cg, &why);
	if (!ret) {
		found = rel_of(c, cg.fd, devcg_cgroup_rel(&cg), rel, len);
		devcg_cgroup_close(&cg);
		if (found)
			return 0;
	}
	if (ret && ret != -ENOENT && ret != -ENOTDIR)
		return devcg_err(err, ret, "%s", why.msg);
	/* an absolute path of a v1 devices or freezer directory */
	if (arg[0] == '/' && (fd = open(arg, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		found = rel_of(c, fd, NULL, rel, len);
		close(fd);
		if (found)
			return 0;
	}
	/* a path below a hierarchy's root, as the trace names cgroups */
	for (i = 0; i < DEVCG_H_MAX; i++) {
		const char *mnt = c->t[i].mount;

		if (!mnt[0])
			continue;
		mounts[n++] = mnt;
		if ((size_t)snprintf(full, sizeof(full), "%s/%s", strcmp(mnt, "/") ? mnt : "",
				     arg + (arg[0] == '/')) >= sizeof(full))
			continue;
		fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			continue;
		found = rel_of(c, fd, NULL, rel, len);
		close(fd);
		if (found)
			return 0;
	}
	for (i = 0; i < n; i++)
		snprintf(where + strlen(where), sizeof(where) - strlen(where), "%s%s",
			 !i ? "" : i + 1 < n ? ", " : " or ", mounts[i]);
	return devcg_err(err, -ENOENT, "%s: not a cgroup directory, nor a cgroup below %s: %s",
			 devcg_quote(q, sizeof(q), arg, (size_t)-1), n ? where : "a cgroup mount",
			 strerror(ENOENT));
}

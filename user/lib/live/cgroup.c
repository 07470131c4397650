// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Finding the cgroup2 mount, resolving a cgroup argument against it, and
 * telling cgroups apart by identity rather than by path string: a cgroup
 * can be reached through a bind mount or from inside a cgroup namespace,
 * where its path says nothing about its place in the hierarchy.
 */
#include "live/live.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <linux/magic.h>

/* Deeper than any hierarchy anyone builds; bounds a walk up. */
#define MAX_DEPTH 4096

/* mountinfo escapes spaces and the like as \ooo */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

/*
 * Call FN with the mount point of each cgroup2 mount in
 * /proc/self/mountinfo, in order, until it returns non-zero (returned).
 * Mount points too long for PATH_MAX are skipped: never shortened.
 */
static int each_cgroup2_mount(int (*fn)(const char *mnt, void *arg), void *arg,
			      struct devcg_error *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	if (!f)
		return devcg_err(err, -errno, "cannot read /proc/self/mountinfo: %s", strerror(errno));
	/* getline: a line longer than any fixed buffer stays one line */
	while (!ret && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *sep = strstr(line, " - "), *mnt, *save = NULL;
		int field;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		mnt = strtok_r(line, " ", &save);
		for (field = 0; mnt && field < 4; field++)
			mnt = strtok_r(NULL, " ", &save);
		if (!mnt)
			continue;
		unescape(mnt);
		if (strlen(mnt) < PATH_MAX)
			ret = fn(mnt, arg);
	}
	free(line);
	fclose(f);
	return ret;
}

struct first_mount {
	char *buf;
	size_t len;
};

static int take_first(const char *mnt, void *arg)
{
	struct first_mount *fm = arg;

	if (strlen(mnt) >= fm->len)
		return -ENAMETOOLONG;
	strcpy(fm->buf, mnt);
	return 1;
}

int devcg_cgroup2_mount(char *buf, size_t len, struct devcg_error *err)
{
	struct first_mount fm = { buf, len };
	int ret = each_cgroup2_mount(take_first, &fm, err);

	if (ret == 1)
		return 0;
	if (ret == -ENAMETOOLONG)
		return devcg_err(err, ret, "the cgroup2 mount point is too long for a path");
	if (ret)
		return ret;
	return devcg_err(err, -ENOENT, "no cgroup2 file system is mounted");
}

/* What tells two directories apart, and the mount they were reached through. */
struct ident {
	dev_t dev;
	ino_t ino;
	uint64_t mnt;
	bool mount_root; /* the root of the mount it was reached through */
	bool mount_root_known; /* statx() tells mount_root (Linux 5.8 on) */
};

/* The directory PATH names from FD (FD itself when PATH is ""), without
 * following a symlink at its end. */
static int ident_at(int fd, const char *path, struct ident *id)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[MAX_HANDLE_SZ];
	} h = { .fh.handle_bytes = MAX_HANDLE_SZ };
	int flags = AT_SYMLINK_NOFOLLOW | (path[0] ? 0 : AT_EMPTY_PATH);
	struct statx stx;
	int mnt_id;

	if (statx(fd, path, flags, STATX_INO | STATX_MNT_ID, &stx))
		return -errno;
	id->dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	id->ino = stx.stx_ino;
	id->mnt = stx.stx_mnt_id;
	id->mount_root = stx.stx_attributes_mask & stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
	id->mount_root_known = stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT;
	/* STATX_MNT_ID came with Linux 5.8; before it, the mount id that
	 * name_to_handle_at() reports (cgroupfs and tmpfs give handles) */
	if (stx.stx_mask & STATX_MNT_ID)
		return 0;
	if (name_to_handle_at(fd, path, &h.fh, &mnt_id, flags & AT_EMPTY_PATH))
		return -errno;
	id->mnt = (uint64_t)mnt_id;
	return 0;
}

static int ident_of(int fd, struct ident *id)
{
	return ident_at(fd, "", id);
}

static bool same_dir(const struct ident *a, const struct ident *b)
{
	return a->dev == b->dev && a->ino == b->ino;
}

/*
 * Is FD the top of what the mount it was reached through shows? Its ".."
 * then leaves the mount (or, at "/", is itself): follow_dotdot() in
 * fs/namei.c crosses to the parent mount at a mount's root. 1 yes, 0 no,
 * or a negative errno. *UP gets ".." when it is still in the mount.
 */
static int is_mount_top(int fd, int *up)
{
	struct ident self, parent;
	int ufd, ret;

	*up = -1;
	ret = ident_of(fd, &self);
	if (ret)
		return ret;
	ufd = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ufd < 0)
		return -errno;
	ret = ident_of(ufd, &parent);
	if (ret) {
		close(ufd);
		return ret;
	}
	if (parent.mnt != self.mnt || same_dir(&parent, &self)) {
		close(ufd);
		return 1;
	}
	*up = ufd;
	return 0;
}

/*
 * kernfs numbers the root node of a hierarchy 1 (kernfs_create_root() in
 * fs/kernfs/dir.c), and a cgroup directory's inode number is its node id:
 * cgroup id 1 is the root cgroup, however it is reached.
 */
static bool is_hierarchy_root(int fd)
{
	struct stat st;

	return !fstat(fd, &st) && st.st_ino == 1;
}

/* What devcg_cgroup_refuse_root() says of a hierarchy's root cgroup
 * (HIERARCHY_ROOT) or of the top of its mount (MOUNT_TOP, 1), or 0. */
static int refuse(bool hierarchy_root, int mount_top, const char *arg, const char *path, const char *kind,
		  struct devcg_error *err)
{
	if (hierarchy_root)
		return devcg_err(err, -EINVAL,
				 "'%s' resolves to the %s root %s; devcg never writes the root "
				 "cgroup's device policy", arg, kind, path);
	if (mount_top < 0)
		return devcg_err(err, mount_top, "%s: cannot tell whether it is the root of its mount: %s",
				 arg, strerror(-mount_top));
	if (mount_top)
		return devcg_err(err, -EINVAL,
				 "'%s' resolves to %s, the root of the %s mount it is reached "
				 "through (as a cgroup namespace's root is); devcg never writes a "
				 "root cgroup's device policy: name a cgroup below it", arg, path, kind);
	return 0;
}

int devcg_cgroup_refuse_root(int fd, const char *arg, const char *path, const char *kind,
			     struct devcg_error *err)
{
	int up, ret;

	if (is_hierarchy_root(fd))
		return refuse(true, 0, arg, path, kind, err);
	ret = is_mount_top(fd, &up);
	if (up >= 0)
		close(up);
	return refuse(false, ret, arg, path, kind, err);
}

/*
 * How many ".." steps from FD up to the top of its mount (0: FD is that
 * top), or -errno; *HIERARCHY_ROOT: FD is a hierarchy's root cgroup. One
 * walk that looks at each directory once serves both the refusal of a
 * root and the mount's path.
 */
static int depth_in_mount(int fd, const struct ident *seen, bool *hierarchy_root)
{
	struct ident self, parent;
	char up[PATH_MAX];
	size_t len = 0;
	int cur = fd, next, depth = 0, ret;

	ret = seen ? 0 : ident_of(fd, &self);
	if (ret)
		return ret;
	if (seen)
		self = *seen;
	*hierarchy_root = self.ino == 1; /* is_hierarchy_root() */
	for (;;) {
		/* the root of a mount is its top (statx() says so since Linux
		 * 5.8) without a look at its ".." */
		if (self.mount_root) {
			if (cur != fd)
				close(cur);
			return depth;
		}
		/*
		 * The top of a mount: its ".." leaves the mount, or is itself
		 * at "/" (is_mount_top()). Each level is looked at by one
		 * statx() of "..", "../..", ... from CUR: the walk of a path
		 * crosses ".." exactly as an openat() of each would
		 * (follow_dotdot() in fs/namei.c); past PATH_MAX, CUR is the
		 * directory the path reached, opened.
		 */
		if (len + 3 >= sizeof(up)) {
			next = openat(cur, up, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (cur != fd)
				close(cur);
			if (next < 0)
				return -errno;
			cur = next;
			len = 0;
		}
		memcpy(up + len, len ? "/.." : "..", len ? 4 : 3);
		len += len ? 3 : 2;
		ret = ident_at(cur, up, &parent);
		if (!ret && (parent.mnt != self.mnt || same_dir(&parent, &self)))
			ret = 1;
		else if (!ret && ++depth > MAX_DEPTH)
			ret = -ELOOP;
		if (ret) {
			if (cur != fd)
				close(cur);
			return ret < 0 ? ret : depth;
		}
		self = parent;
	}
}

/* The path FD was opened at, as the kernel names it (d_path() through
 * /proc/self/fd: one readlink instead of realpath()'s one per component),
 * or realpath() of JOINED where /proc does not name it. */
static int path_of(int fd, const char *joined, char path[PATH_MAX])
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, PATH_MAX);
	if (n > 0 && n < PATH_MAX && path[0] == '/') {
		path[n] = '\0';
		if (!strstr(path, " (deleted)"))
			return 0;
	}
	return realpath(joined, path) ? 0 : -errno;
}

/* CG's mount and path below it, from its path (found) and its fd: how
 * many steps below the top of the mount it is, or a negative errno. */
static int split_names(struct devcg_cgroup *cg, bool *hierarchy_root)
{
	char *end, *mount = cg->name.mount, *path = cg->name.path;
	struct ident seen = { .dev = (dev_t)cg->seen.dev, .ino = cg->ino, .mnt = cg->seen.mnt,
			      .mount_root = cg->seen.mount_root, .mount_root_known = true };
	int depth, d;

	/* the mount and the path below it, by as many steps as ".." takes to
	 * leave the mount: right through bind mounts of subtrees too */
	depth = depth_in_mount(cg->fd, cg->seen.known ? &seen : NULL, hierarchy_root);
	if (depth < 0)
		return depth;
	strcpy(mount, path);
	for (d = depth, end = mount + strlen(mount); d > 0 && end > mount; d--) {
		while (end > mount && end[-1] != '/')
			end--;
		if (end > mount + 1)
			end--;
		*end = '\0';
	}
	strcpy(cg->name.rel, path[strlen(mount)] ? path + strlen(mount) : "/");
	if (!strcmp(mount, "/"))
		strcpy(cg->name.rel, path);
	return depth;
}

static struct devcg_cgroup *named(const struct devcg_cgroup *c)
{
	struct devcg_cgroup *cg = (struct devcg_cgroup *)c; /* the names are a cache */
	bool root;

	if (!cg->named) {
		cg->named = true;
		if (cg->fd < 0 || path_of(cg->fd, cg->joined, cg->name.path) || split_names(cg, &root) < 0) {
			snprintf(cg->name.path, sizeof(cg->name.path), "%s", cg->joined);
			snprintf(cg->name.rel, sizeof(cg->name.rel), "%s", cg->joined);
			cg->name.mount[0] = '\0';
		}
	}
	return cg;
}

const char *devcg_cgroup_mount(const struct devcg_cgroup *cg)
{
	return named(cg)->name.mount;
}

const char *devcg_cgroup_path(const struct devcg_cgroup *cg)
{
	return named(cg)->name.path;
}

const char *devcg_cgroup_rel(const struct devcg_cgroup *cg)
{
	return named(cg)->name.rel;
}

/* the device of a cgroup2 file system this process met, + 1 (0: none yet) */
static uint64_t cgroup2_dev;

int devcg_cgroup_resolve(const char *arg, enum devcg_resolve_for use, struct devcg_cgroup *cg,
			 struct devcg_error *err)
{
	char q[1024], mnt[PATH_MAX] = "";
	bool hierarchy_root = false;
	struct statfs sfs;
	struct ident self;
	int ret, n, depth;

	memset(cg, 0, sizeof(*cg));
	cg->fd = -1;
	if (!arg[0] && use == DEVCG_RESOLVE_WRITE) {
		devcg_cgroup2_mount(mnt, sizeof(mnt), NULL);
		return devcg_err(err, -EINVAL,
				 "empty cgroup argument (an unset variable?): it would name the "
				 "cgroup2 root %s; devcg never writes the root cgroup's device policy", mnt);
	}
	if (arg[0] == '/') {
		n = snprintf(cg->joined, sizeof(cg->joined), "%s", arg);
	} else {
		ret = devcg_cgroup2_mount(mnt, sizeof(mnt), err);
		if (ret)
			return ret;
		n = snprintf(cg->joined, sizeof(cg->joined), "%s/%s", mnt, arg);
	}
	/* the kernel takes no longer path either (getname() in fs/namei.c);
	 * a shortened one could name the parent, or the root */
	if (n < 0 || (size_t)n >= sizeof(cg->joined))
		return devcg_err(err, -ENAMETOOLONG,
				 "cgroup argument of %zu bytes is longer than a path can be (%d): "
				 "refused, never shortened", strlen(arg), PATH_MAX - 1);
	/* the fd is what devcg acts on; the strings only name it */
	cg->fd = open(cg->joined, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0)
		return devcg_err(err, -errno, "%s: %s", devcg_quote(q, sizeof(q), arg, (size_t)-1), strerror(errno));
	ret = ident_of(cg->fd, &self);
	if (ret) {
		ret = devcg_err(err, ret, "%s: %s", devcg_quote(q, sizeof(q), arg, (size_t)-1), strerror(-ret));
		goto fail;
	}
	/* a directory of a cgroup2 file system met before needs no statfs():
	 * its device names the same superblock */
	if (__atomic_load_n(&cgroup2_dev, __ATOMIC_RELAXED) != (uint64_t)self.dev + 1) {
		if (fstatfs(cg->fd, &sfs)) {
			ret = devcg_err(err, -errno, "%s: %s", devcg_quote(q, sizeof(q), arg, (size_t)-1),
					strerror(errno));
			goto fail;
		}
		if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
			devcg_cgroup2_mount(mnt, sizeof(mnt), NULL);
			ret = devcg_err(err, -ENOTDIR,
					"%s is not a cgroup v2 directory (cgroup2 is mounted at %s)%s",
					devcg_quote(q, sizeof(q), arg, (size_t)-1), mnt[0] ? mnt : "?",
					sfs.f_type == CGROUP_SUPER_MAGIC ? "; it is in a cgroup v1 hierarchy" : "");
			goto fail;
		}
		__atomic_store_n(&cgroup2_dev, (uint64_t)self.dev + 1, __ATOMIC_RELAXED);
	}
	cg->ino = self.ino;
	/* (only where statx() says whether it is a mount's root) */
	cg->seen.known = self.mount_root_known;
	cg->seen.mount_root = self.mount_root;
	cg->seen.dev = self.dev;
	cg->seen.mnt = self.mnt;
	/* a writer needs no names when statx() says whether the directory is
	 * the root of its mount (Linux 5.8 on) and it is not: the other
	 * refusals need them, and so does a reader */
	if (use == DEVCG_RESOLVE_WRITE && self.mount_root_known && !self.mount_root && self.ino != 1)
		return 0;
	cg->named = true;
	ret = path_of(cg->fd, cg->joined, cg->name.path);
	if (ret) {
		ret = devcg_err(err, ret, "%s: %s", devcg_quote(q, sizeof(q), arg, (size_t)-1), strerror(-ret));
		goto fail;
	}
	depth = split_names(cg, &hierarchy_root);
	if (use == DEVCG_RESOLVE_WRITE && (hierarchy_root || depth >= 0)) {
		ret = refuse(hierarchy_root, depth == 0, arg, cg->name.path, "cgroup2", err);
		if (ret)
			goto fail;
	}
	if ((ret = depth) < 0) {
		ret = devcg_err(err, ret, "%s: cannot find the root of its mount: %s",
				devcg_quote(q, sizeof(q), arg, (size_t)-1), strerror(-ret));
		goto fail;
	}
	return 0;
fail:
	devcg_cgroup_close(cg);
	return ret;
}

void devcg_cgroup_close(struct devcg_cgroup *cg)
{
	if (cg->fd >= 0)
		close(cg->fd);
	cg->fd = -1;
}

/* ---- the real hierarchy above a cgroup ---------------------------------- */

static bool is_entry(int parent, const char *name, const struct ident *child)
{
	struct stat st;

	return !fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode) &&
	       st.st_dev == child->dev && st.st_ino == child->ino;
}

/* The entry of PARENT that is the directory CHILD: its name, or NULL. HINT
 * (may be NULL), the name the path gave, spares reading the directory. */
static char *name_in(int parent, const struct ident *child, const char *hint)
{
	int dfd;
	DIR *d;
	struct dirent *e;
	char *name = NULL;

	if (hint && hint[0] && strcmp(hint, ".") && strcmp(hint, "..") && !strchr(hint, '/') &&
	    is_entry(parent, hint, child))
		return strdup(hint);
	dfd = dup(parent);
	d = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!d) {
		if (dfd >= 0)
			close(dfd);
		return NULL;
	}
	while (!name && (e = readdir(d))) {
		if (e->d_ino != child->ino || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		/* d_ino alone could be stale: stat the entry */
		if (is_entry(parent, e->d_name, child))
			name = strdup(e->d_name);
	}
	closedir(d);
	return name;
}

void devcg_lineage_free(struct devcg_lineage *l)
{
	size_t i;

	for (i = 0; i < l->n; i++) {
		if (l->fds[i] >= 0)
			close(l->fds[i]);
		free(l->rels[i]);
	}
	free(l->fds);
	free(l->rels);
	memset(l, 0, sizeof(*l));
}

static int lineage_push(struct devcg_lineage *l, int fd, char *name)
{
	int *fds = realloc(l->fds, (l->n + 1) * sizeof(*fds));
	char **rels;

	if (fds)
		l->fds = fds;
	rels = fds ? realloc(l->rels, (l->n + 1) * sizeof(*rels)) : NULL;
	if (!rels)
		return -ENOMEM;
	l->rels = rels;
	l->fds[l->n] = fd;
	l->rels[l->n++] = name; /* the name in its parent, for now */
	return 0;
}

/*
 * Walk up from START (taken over) to the top of its mount, naming each step
 * by what its parent lists, so every level is proven to be the parent of
 * the one below. Levels get paths relative to that top; a path that would
 * not fit PATH_MAX fails the walk (-ENAMETOOLONG) rather than be shortened.
 * HINT (may be NULL): START's path below the top, as its string says.
 */
static int walk_up(int start, const char *hint, struct devcg_lineage *l)
{
	char *names = hint ? strdup(hint) : NULL, *last;
	int cur = start, up, ret;
	size_t i;

	memset(l, 0, sizeof(*l));
	for (;;) {
		struct ident self;
		char *name = NULL;

		ret = is_mount_top(cur, &up);
		if (ret < 0)
			break;
		if (!ret) {
			last = names ? strrchr(names, '/') : NULL;
			ret = ident_of(cur, &self);
			name = ret ? NULL : name_in(up, &self, last ? last + 1 : NULL);
			if (last)
				*last = '\0';
			if (!ret && !name)
				ret = -ESTALE; /* moved or removed meanwhile */
		}
		if (ret >= 0 && l->n >= MAX_DEPTH)
			ret = -ELOOP;
		if (ret < 0 || lineage_push(l, cur, name) < 0) {
			free(name);
			if (up >= 0)
				close(up);
			ret = ret < 0 ? ret : -ENOMEM;
			break;
		}
		cur = -1;
		if (ret == 1)
			break;
		cur = up;
	}
	free(names);
	if (cur >= 0)
		close(cur);
	if (ret < 0) {
		devcg_lineage_free(l);
		return ret;
	}
	/* the top is "/", each level below it its parent's path and its name */
	l->rels[l->n - 1] = strdup("/");
	ret = l->rels[l->n - 1] ? 0 : -ENOMEM;
	for (i = l->n - 1; !ret && i-- > 0;) {
		const char *above = l->rels[i + 1];
		size_t len = strlen(above) + 1 + strlen(l->rels[i]) + 1;
		char *rel = len <= PATH_MAX ? malloc(len) : NULL;

		if (!rel) {
			ret = len <= PATH_MAX ? -ENOMEM : -ENAMETOOLONG;
			break;
		}
		snprintf(rel, len, "%s/%s", strcmp(above, "/") ? above : "", l->rels[i]);
		free(l->rels[i]);
		l->rels[i] = rel;
	}
	if (ret)
		devcg_lineage_free(l);
	return ret;
}

struct best_view {
	struct ident target;
	void *handle;
	struct devcg_lineage best;
};

/* Another cgroup2 mount may show more of the hierarchy above the cgroup:
 * reach the same cgroup through it by its file handle (kernfs_fh_to_dentry()
 * in fs/kernfs/mount.c finds a node by id) and walk up there. */
static int try_mount(const char *mnt, void *arg)
{
	struct best_view *v = arg;
	struct devcg_lineage l;
	struct ident got, top, mine;
	int mfd, fd;

	mfd = open(mnt, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return 0;
	fd = open_by_handle_at(mfd, v->handle, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || ident_of(fd, &got) || !same_dir(&got, &v->target) || ident_of(mfd, &mine)) {
		if (fd >= 0)
			close(fd);
		close(mfd);
		return 0;
	}
	close(mfd);
	if (walk_up(fd, NULL, &l))
		return 0;
	/* the walk must end at that mount's own root, where its paths start */
	if (!ident_of(l.fds[l.n - 1], &top) && same_dir(&top, &mine) && top.mnt == mine.mnt &&
	    l.n > v->best.n) {
		devcg_lineage_free(&v->best);
		v->best = l;
	} else {
		devcg_lineage_free(&l);
	}
	return 0;
}

int devcg_cgroup_lineage(const struct devcg_cgroup *cg, struct devcg_lineage *out)
{
	struct {
		struct file_handle fh;
		unsigned char bytes[MAX_HANDLE_SZ];
	} h = { .fh.handle_bytes = MAX_HANDLE_SZ };
	struct best_view v = { .handle = &h.fh };
	int fd, mnt_id, ret;

	memset(out, 0, sizeof(*out));
	ret = ident_of(cg->fd, &v.target);
	if (ret)
		return ret;
	/* first the mount it was named through, which wins a tie */
	fd = dup(cg->fd);
	if (fd < 0)
		return -errno;
	ret = walk_up(fd, devcg_cgroup_rel(cg), &v.best);
	/* another mount can show more only when this walk stopped below the
	 * hierarchy's root */
	if (!(v.best.n && is_hierarchy_root(v.best.fds[v.best.n - 1])) &&
	    !name_to_handle_at(cg->fd, "", &h.fh, &mnt_id, AT_EMPTY_PATH))
		each_cgroup2_mount(try_mount, &v, NULL);
	if (!v.best.n)
		return ret ? ret : -ENOENT;
	*out = v.best;
	return 0;
}

void devcg_mountinfo_unescape(char *s)
{
	unescape(s);
}

int devcg_proc_cgroup(int pid, char *rel, size_t len, char *v1, size_t v1len,
		      struct devcg_error *err)
{
	char path[64], line[4608];
	FILE *f;
	int ret = -ENOENT;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	f = fopen(path, "re");
	if (!f)
		return devcg_err(err, errno == ENOENT ? -ESRCH : -errno, "process %d: %s", pid,
				 errno == ENOENT ? "no such process" : strerror(errno));
	if (v1)
		v1[0] = '\0';
	while (fgets(line, sizeof(line), f)) {
		char *first = strchr(line, ':'), *second = first ? strchr(first + 1, ':') : NULL;

		line[strcspn(line, "\n")] = '\0';
		if (!second)
			continue;
		if (!strncmp(line, "0::", 3)) {
			snprintf(rel, len, "%s", line + 3);
			ret = 0;
		}
		if (!v1)
			continue;
		*second = '\0';
		/* "devices" among the controllers of a v1 line, not at its root */
		char *save = NULL;

		for (char *c = strtok_r(first + 1, ",", &save); c; c = strtok_r(NULL, ",", &save))
			if (!strcmp(c, "devices") && strcmp(second + 1, "/"))
				snprintf(v1, v1len, "%s", second + 1);
	}
	fclose(f);
	if (ret)
		return devcg_err(err, ret, "process %d is in no cgroup v2 cgroup", pid);
	return 0;
}

uint32_t devcg_mode_of(uint32_t attach_flags)
{
	if (attach_flags & BPF_F_ALLOW_MULTI)
		return DEVCG_MODE_MULTI;
	if (attach_flags & BPF_F_ALLOW_OVERRIDE)
		return DEVCG_MODE_OVERRIDE;
	return DEVCG_MODE_EXCLUSIVE;
}

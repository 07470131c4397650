// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The device nodes a container has in its /dev, and whether a new policy
 * would refuse one of them that the container's current (devcg) program
 * allows.
 *
 * The /dev is the container's, so everything in it is hostile: it is
 * reached through /proc/PID/root of one of the cgroup's processes (pinned by
 * a pidfd, checked alive after the open), and walked by fd: openat() with
 * O_NOFOLLOW, statx() with AT_SYMLINK_NOFOLLOW and AT_STATX_DONT_SYNC (a
 * mount point's file system is not asked: a FUSE server that stops
 * answering blocks nothing), and directories entered only on /dev's own
 * file system, checked to be the one stat'ed.
 */
#include "integration/devnodes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAX_DEPTH 8
#define MAX_ENTRIES 100000

struct walk {
	unsigned int mask;
	devcg_dev_node_fn node;
	void *ctx;
	size_t entries;
	dev_t dev; /* /dev's own file system */
	struct devcg_error *err;
};

/* Walk the directory FD (named PATH; closed here). */
static int walk_dir(struct walk *w, int fd, const char *path, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		close(fd);
		return 0; /* not a directory any more: nothing to say about it */
	}
	while (!ret && (e = readdir(d))) {
		char sub[DEVCG_DEV_PATH_MAX];
		struct statx stx;
		struct stat st;
		int cfd;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (++w->entries > MAX_ENTRIES) {
			ret = devcg_err(w->err, -E2BIG, "its /dev holds more than %d entries", MAX_ENTRIES);
			break;
		}
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub))
			continue; /* a name no policy check is worth */
		if (statx(dirfd(d), e->d_name, AT_SYMLINK_NOFOLLOW | AT_STATX_DONT_SYNC,
			  STATX_TYPE | STATX_INO | w->mask, &stx))
			continue; /* gone meanwhile */
		if (S_ISCHR(stx.stx_mode) || S_ISBLK(stx.stx_mode)) {
			ret = w->node(w->ctx, sub, &stx);
			continue;
		}
		if (!S_ISDIR(stx.stx_mode) || depth >= MAX_DEPTH ||
		    makedev(stx.stx_dev_major, stx.stx_dev_minor) != w->dev)
			continue;
		cfd = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (cfd < 0)
			continue;
		/* the directory opened is the one stat'ed, on /dev's file system */
		if (fstat(cfd, &st) || st.st_dev != w->dev || st.st_ino != stx.stx_ino) {
			close(cfd);
			continue;
		}
		ret = walk_dir(w, cfd, sub, depth + 1);
	}
	closedir(d);
	return ret;
}

int devcg_dev_walk(int dfd, unsigned int mask, devcg_dev_node_fn node, void *ctx, struct devcg_error *err)
{
	struct walk w = { .mask = mask, .node = node, .ctx = ctx, .err = err };
	struct stat st;

	if (fstat(dfd, &st)) {
		int ret = -errno;

		close(dfd);
		return devcg_err(err, ret, "/dev: %s", strerror(-ret));
	}
	w.dev = st.st_dev;
	return walk_dir(&w, dfd, "/dev", 0);
}

/* devcg_dev_nodes()'s list */
struct list {
	struct devcg_node *nodes;
	size_t n, cap;
	struct devcg_error *err;
};

static int add_node(void *ctx, const char *path, const struct statx *stx)
{
	struct list *w = ctx;

	if (strlen(path) >= sizeof(w->nodes[0].path))
		return 0;
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct devcg_node *v = realloc(w->nodes, cap * sizeof(*v));

		if (!v)
			return devcg_err(w->err, -ENOMEM, "out of memory");
		w->nodes = v;
		w->cap = cap;
	}
	snprintf(w->nodes[w->n].path, sizeof(w->nodes[w->n].path), "%s", path);
	w->nodes[w->n].type = S_ISCHR(stx->stx_mode) ? DEVCG_CHAR : DEVCG_BLOCK;
	w->nodes[w->n].major = stx->stx_rdev_major;
	w->nodes[w->n].minor = stx->stx_rdev_minor;
	w->n++;
	return 0;
}

/* The /dev of process PID, open, or -1 (and *gone) when it has none or is
 * gone; a negative errno on another failure. */
static int open_dev(int pid, struct devcg_error *err)
{
	char root[64];
	int pidfd, rfd, dfd;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return errno == ESRCH ? -ESRCH : devcg_err(err, -errno, "process %d: %s", pid, strerror(errno));
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	/* the magic link is followed on purpose: it is the process's root */
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	dfd = rfd < 0 ? -1 : openat(rfd, "dev", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (rfd >= 0)
		close(rfd);
	/* the /proc entry was that process's only if it is still alive */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)) {
		if (dfd >= 0)
			close(dfd);
		dfd = -ESRCH;
	} else if (dfd < 0) {
		dfd = -ENOENT; /* no /dev (or a symbolic link): no nodes */
	}
	close(pidfd);
	return dfd;
}

int devcg_dev_nodes(const char *cgroup, struct devcg_node **nodes, size_t *count, struct devcg_error *err)
{
	struct list w = { .err = err };
	struct devcg_cgroup cg;
	char line[32];
	FILE *procs = NULL;
	int fd, ret;

	*nodes = NULL;
	*count = 0;
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_READ, &cg, err);
	if (ret)
		return ret;
	fd = openat(cg.fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(procs = fdopen(fd, "re"))) {
		ret = devcg_err(err, -errno, "%s/cgroup.procs: %s", devcg_cgroup_path(&cg), strerror(errno));
		if (fd >= 0)
			close(fd);
		goto out;
	}
	/* the first process whose /dev can be opened */
	fd = -ENOENT;
	while (fd < 0 && fgets(line, sizeof(line), procs)) {
		fd = open_dev(atoi(line), err);
		if (fd < 0 && fd != -ESRCH && fd != -ENOENT) {
			ret = fd;
			goto out;
		}
		if (fd == -ENOENT)
			break; /* a process without a /dev: its fellows share its root */
	}
	if (fd < 0)
		goto out; /* no process, or no /dev: no nodes */
	ret = devcg_dev_walk(fd, 0, add_node, &w, err);
	if (ret) {
		devcg_err_wrap(err, ret, "%s", devcg_cgroup_path(&cg));
		free(w.nodes);
		goto out;
	}
	*nodes = w.nodes;
	*count = w.n;
out:
	if (procs)
		fclose(procs);
	devcg_cgroup_close(&cg);
	return ret;
}

int devcg_replace_refuses_node(const char *cgroup, const struct devcg_policy *policy, struct devcg_node *node,
			       uint8_t *access, uint32_t *prog_id, struct devcg_error *err)
{
	/* r, w, m first: the simplest access lost is named */
	static const uint8_t acc[] = { 2, 4, 1, 6, 3, 5, 7 };
	const struct devcg_program *own;
	struct devcg_state *state = NULL;
	struct devcg_node *nodes = NULL;
	size_t n = 0;
	int ret;

	struct devcg_cgroup cg;

	*prog_id = 0;
	/* what devcg_replace() would refuse (a root cgroup), refused the same */
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_WRITE, &cg, err);
	if (ret)
		return ret;
	devcg_cgroup_close(&cg);
	ret = devcg_state_read_programs(cgroup, &state, err);
	if (ret)
		return ret;
	own = devcg_state_own(state);
	/* only devcg's own program can be read back */
	if (!own || !own->policy)
		goto out;
	*prog_id = own->id;
	ret = devcg_dev_nodes(cgroup, &nodes, &n, err);
	for (size_t i = 0; !ret && i < n; i++)
		for (size_t a = 0; a < sizeof(acc); a++) {
			const struct devcg_node *d = &nodes[i];

			if (devcg_policy_check(own->policy, d->type, d->major, d->minor, acc[a], NULL, NULL) == 1 &&
			    devcg_policy_check(policy, d->type, d->major, d->minor, acc[a], NULL, NULL) != 1) {
				*node = *d;
				*access = acc[a];
				ret = 1;
				break;
			}
		}
out:
	free(nodes);
	devcg_state_free(state);
	return ret;
}

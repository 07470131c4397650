// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug, the holders: the processes of a container that hold a device
 * open, for detach to list. hotplug.c puts the steps in order
 * (hotplug_steps.h).
 */
#include "hotplug_steps.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

/* ---- holders ---------------------------------------------------------------- */

#define MAX_HOLDERS 64

/*
 * The open files of the container's processes that are device nodes,
 * found without touching their file systems: a file on a FUSE mount whose
 * server stopped answering blocks a stat() for ever (fuse_getattr() asks
 * the server), after detach made its changes. So each fd is looked at
 * with statx(AT_STATX_DONT_SYNC) -- the attributes the kernel has, no
 * request to the file system (fs/fuse/dir.c, fuse_update_get_attr()) --
 * and in the process in the container's mount namespace, which the caller
 * waits for HOLDERS_TIMEOUT_MS at most, then kills: a file system that
 * blocks anyway costs a few seconds and a note, not the command.
 */
#define MAX_OPEN_DEVS 4096

/* In that process: the entries of the directory DFD, by getdents64 (no
 * malloc: a process killed at the timeout must not hold malloc's lock,
 * which it shares with the caller); FN(DFD, name, d_type, arg) for each
 * but "." and "..". */
static void each_entry(int dfd, void (*fn)(int, const char *, unsigned char, void *), void *arg)
{
	char buf[8192];
	long n;

	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);

			off += d->reclen;
			if (strcmp(d->name, ".") && strcmp(d->name, ".."))
				fn(dfd, d->name, d->type, arg);
		}
	}
}

struct scan {
	struct holders_scan *hs; /* the records go to hs->v */
	int32_t pid;
	char comm[16];
	int level;      /* of the cgroup scanned, below the container's */
};

static void scan_fd(int dfd, const char *name, unsigned char type, void *arg)
{
	struct scan *sc = arg;
	struct open_dev d = { .pid = sc->pid };
	struct statx stx;

	(void)type;
	if (sc->hs->n >= MAX_OPEN_DEVS ||
	    statx(dfd, name, AT_STATX_DONT_SYNC, STATX_TYPE, &stx) || !(stx.stx_mask & STATX_TYPE) ||
	    !(S_ISCHR(stx.stx_mode) || S_ISBLK(stx.stx_mode)))
		return;
	d.fd = (int32_t)strtol(name, NULL, 10);
	d.type = S_ISBLK(stx.stx_mode) ? DEVCG_BLOCK : DEVCG_CHAR;
	d.major = stx.stx_rdev_major;
	d.minor = stx.stx_rdev_minor;
	memcpy(d.comm, sc->comm, sizeof(d.comm));
	/* the record, then the count: a scan killed midway leaves whole records */
	sc->hs->v[sc->hs->n] = d;
	__atomic_store_n(&sc->hs->n, sc->hs->n + 1, __ATOMIC_RELEASE);
}

static void scan_pid(struct scan *sc, int32_t pid)
{
	char path[64];
	ssize_t n;
	int fd;

	sc->pid = pid;
	memset(sc->comm, 0, sizeof(sc->comm));
	snprintf(path, sizeof(path), "%d/comm", (int)pid);
	if ((fd = openat(sc->hs->proc_fd, path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, sc->comm, sizeof(sc->comm) - 1);
		sc->comm[n > 0 ? n : 0] = '\0';
		sc->comm[strcspn(sc->comm, "\n")] = '\0';
		close(fd);
	}
	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	if ((fd = openat(sc->hs->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	each_entry(fd, scan_fd, sc);
	close(fd);
}

static void scan_cgroup(int cgfd, struct scan *sc);

static void scan_sub(int dfd, const char *name, unsigned char type, void *arg)
{
	struct scan *sc = arg;
	int fd;

	if (type != DT_DIR || sc->hs->n >= MAX_OPEN_DEVS)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	scan_cgroup(fd, sc);
	close(fd);
}

/* The processes of the cgroup CGFD and below (16 levels at most). */
static void scan_cgroup(int cgfd, struct scan *sc)
{
	char buf[4096], *p, *nl;
	size_t have = 0;
	ssize_t n;
	int fd = openat(cgfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
			have += (size_t)n;
			buf[have] = '\0';
			for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
				*nl = '\0';
				scan_pid(sc, (int32_t)strtol(p, NULL, 10));
			}
			have = strlen(p);
			memmove(buf, p, have);
		}
		close(fd);
	}
	if (sc->level > 16)
		return;
	sc->level++;
	each_entry(cgfd, scan_sub, sc);
	sc->level--;
}

/*
 * The scan is made by the process in the container's mount namespace, at
 * its command 'S' (after the permission swap, when no process can open
 * the device any more), through /proc and the cgroup opened here, in our
 * mount namespace, before that process enters the container's; the
 * records go to an array of ours (that process shares our memory). No
 * process is forked for it: a fork write-protects all of the caller's
 * memory. The caller waits for it HOLDERS_TIMEOUT_MS at most, then kills
 * it (a file system that blocks anyway costs a few seconds and a note,
 * not the command), and does not wait for one it cannot kill (nodes.c).
 */
int hp_open_devs_prepare(const char *cg, bool stop, struct holders_scan *hs)
{
	memset(hs, 0, sizeof(*hs));
	hs->proc_fd = hs->cg_fd = -1;
	hs->stop = stop;
	hs->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	hs->cg_fd = hs->proc_fd < 0 ? -1 : open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* (not zeroed: each record is whole before it is counted) */
	hs->v = hs->cg_fd < 0 ? NULL : malloc(MAX_OPEN_DEVS * sizeof(*hs->v));
	if (!hs->v) {
		int ret = hs->cg_fd < 0 ? -errno : -ENOMEM;

		hp_open_devs_cancel(hs);
		return ret;
	}
	return 0;
}

/* In the process in the container's mount namespace, at 'S'. */
void hp_open_devs_scan(void *arg)
{
	struct holders_scan *hs = arg;
	struct scan sc = { .hs = hs };

	if (!hs->v)
		return;
	if (hs->stop)
		kill(getpid(), SIGSTOP);
	scan_cgroup(hs->cg_fd, &sc);
	__atomic_store_n(&hs->done, true, __ATOMIC_RELEASE);
}

void hp_open_devs_take(struct holders_scan *hs, struct open_devs *od)
{
	memset(od, 0, sizeof(*od));
	od->incomplete = !__atomic_load_n(&hs->done, __ATOMIC_ACQUIRE);
	od->n = __atomic_load_n(&hs->n, __ATOMIC_ACQUIRE);
	od->v = hs->v;
	hs->v = NULL;
	hp_open_devs_cancel(hs);
}

void hp_open_devs_cancel(struct holders_scan *hs)
{
	if (hs->proc_fd >= 0)
		close(hs->proc_fd);
	if (hs->cg_fd >= 0)
		close(hs->cg_fd);
	free(hs->v);
	hs->proc_fd = hs->cg_fd = -1;
	hs->v = NULL;
}

/* The holders of the device TYPE MAJOR:MINOR among OD. */
void hp_holders_of(const struct open_devs *od, uint8_t type, uint32_t maj, uint32_t min,
		       struct holders *h)
{
	for (size_t i = 0; i < od->n && h->n < MAX_HOLDERS; i++) {
		const struct open_dev *d = &od->v[i];
		struct devcg_hotplug_holder *more;

		if (d->type != type || d->major != maj || d->minor != min)
			continue;
		more = realloc(h->v, (h->n + 1) * sizeof(*h->v));
		if (!more)
			break;
		h->v = more;
		memset(&h->v[h->n], 0, sizeof(h->v[h->n]));
		h->v[h->n].pid = d->pid;
		h->v[h->n].fd = d->fd;
		memcpy(h->v[h->n].comm, d->comm, sizeof(h->v[h->n].comm));
		h->v[h->n].comm[sizeof(h->v[h->n].comm) - 1] = '\0';
		h->n++;
	}
}

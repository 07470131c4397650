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
 * and in a child that the caller waits for HOLDERS_TIMEOUT_MS at most,
 * then kills: a file system that blocks anyway costs a few seconds and a
 * note, not the command.
 */
#define MAX_OPEN_DEVS 4096

/* In the child: the entries of the directory DFD, by getdents64 (no
 * malloc after a fork of a threaded caller); FN(DFD, name, d_type, arg) for
 * each but "." and "..". */
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
	int out;        /* the pipe to the parent */
	int32_t pid;
	char comm[16];
	size_t sent;
	int level;      /* of the cgroup scanned, below the container's */
};

static void scan_fd(int dfd, const char *name, unsigned char type, void *arg)
{
	struct scan *sc = arg;
	struct open_dev d = { .pid = sc->pid };
	struct statx stx;

	(void)type;
	if (sc->sent >= MAX_OPEN_DEVS ||
	    statx(dfd, name, AT_STATX_DONT_SYNC, STATX_TYPE, &stx) || !(stx.stx_mask & STATX_TYPE) ||
	    !(S_ISCHR(stx.stx_mode) || S_ISBLK(stx.stx_mode)))
		return;
	d.fd = (int32_t)strtol(name, NULL, 10);
	d.type = S_ISBLK(stx.stx_mode) ? DEVCG_BLOCK : DEVCG_CHAR;
	d.major = stx.stx_rdev_major;
	d.minor = stx.stx_rdev_minor;
	memcpy(d.comm, sc->comm, sizeof(d.comm));
	if (write(sc->out, &d, sizeof(d)) == (ssize_t)sizeof(d))
		sc->sent++;
}

static void scan_pid(struct scan *sc, int32_t pid)
{
	char path[64];
	ssize_t n;
	int fd;

	sc->pid = pid;
	memset(sc->comm, 0, sizeof(sc->comm));
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, sc->comm, sizeof(sc->comm) - 1);
		sc->comm[n > 0 ? n : 0] = '\0';
		sc->comm[strcspn(sc->comm, "\n")] = '\0';
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	each_entry(fd, scan_fd, sc);
	close(fd);
}

static void scan_cgroup(int cgfd, struct scan *sc);

static void scan_sub(int dfd, const char *name, unsigned char type, void *arg)
{
	struct scan *sc = arg;
	int fd;

	if (type != DT_DIR || sc->sent >= MAX_OPEN_DEVS)
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

/* The scanner (a grandchild of the caller, see hp_open_devs_start()): it
 * keeps only its two ends, sends its pid, waits for the go, then sends
 * the records and a record of pid 0. */
static void scan_main(const char *cg, bool stop, int go, int out)
{
	struct scan sc = { .out = out };
	int lo = go < out ? go : out, hi = go < out ? out : go;
	struct open_dev d;
	pid_t self = getpid();
	char c;
	int fd;

	/* not the caller's files: the process in the container's mount
	 * namespace, above all, sees its peer's end close when ours do */
	if (lo > 0)
		close_range(0, (unsigned int)lo - 1, 0);
	if (hi > lo + 1)
		close_range((unsigned int)lo + 1, (unsigned int)hi - 1, 0);
	close_range((unsigned int)hi + 1, ~0u, 0);
	if (write(out, &self, sizeof(self)) != (ssize_t)sizeof(self))
		_exit(1);
	/* no go (the caller's end closed): the call failed, nothing to scan */
	if (read(go, &c, 1) != 1)
		_exit(0);
	if (stop)
		kill(self, SIGSTOP);
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0)
		scan_cgroup(fd, &sc);
	/* the end: a record of pid 0 */
	memset(&d, 0, sizeof(d));
	if (fd < 0 || write(out, &d, sizeof(d)) != (ssize_t)sizeof(d))
		_exit(1);
	_exit(0);
}

/*
 * The scanner of the open files of the cgroup CG (absolute) and below,
 * which scans at hp_open_devs_read()'s go: a grandchild of the caller,
 * not waited for (a process in a FUSE request the server has read waits
 * it out even after SIGKILL, fs/fuse/dev.c, request_wait_answer(), so a
 * wait for it could be for ever). The process in the container's mount
 * namespace forks it (hp_open_devs_fork(), its first step, before it
 * enters), so that the caller forks once per call: each fork write-
 * protects all of the caller's memory again, and each page it then writes
 * is copied, with a TLB flush of the other CPUs. Made early, while the
 * call does its other steps, it scans only at the go, after the permission
 * is taken, when no process can open the device any more. With STOP (a
 * testing aid), it stops itself at the go, as a scan stuck would. Without
 * a scanner (no memory, no process), the read finds the list incomplete.
 */
void hp_open_devs_prepare(const char *cg, bool stop, struct holders_scan *hs)
{
	int go[2], out[2];

	hs->go = hs->out = hs->child_go = hs->child_out = -1;
	hs->cg = cg;
	hs->stop = stop;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go))
		return;
	if (pipe2(out, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		return;
	}
	hs->go = go[0];
	hs->child_go = go[1];
	hs->out = out[0];
	hs->child_out = out[1];
}

/* In the process in the container's mount namespace, first: fork the
 * scanner (_Fork(): no atfork handler of the caller runs; the scanner
 * makes only system calls), and keep none of its ends. */
void hp_open_devs_fork(void *arg)
{
	struct holders_scan *hs = arg;

	if (hs->child_go >= 0 && _Fork() == 0)
		scan_main(hs->cg, hs->stop, hs->child_go, hs->child_out);
	if (hs->go >= 0) {
		close(hs->go);
		close(hs->out);
		close(hs->child_go);
		close(hs->child_out);
	}
}

/* The child is made (or not): the scanner's ends are its. */
void hp_open_devs_forked(struct holders_scan *hs)
{
	if (hs->child_go >= 0) {
		close(hs->child_go);
		close(hs->child_out);
	}
	hs->child_go = hs->child_out = -1;
}

static void scan_reap(struct holders_scan *hs)
{
	hp_open_devs_forked(hs);
	if (hs->go >= 0)
		close(hs->go);
	if (hs->out >= 0)
		close(hs->out);
	hs->go = hs->out = -1;
}

void hp_open_devs_cancel(struct holders_scan *hs)
{
	scan_reap(hs);
}

/*
 * The device nodes the processes of the cgroup hold open, from the
 * scanner HS started: it is told to go, and read within
 * HOLDERS_TIMEOUT_MS. It sends its pid first, to be killed if it is late;
 * a scan stuck for good ends when its file system does, or at its next
 * write (SIGPIPE).
 */
void hp_open_devs_read(struct holders_scan *hs, struct open_devs *od)
{
	struct timespec t0, t;
	struct open_dev d;
	size_t got = 0;
	pid_t scanner = 0;

	memset(od, 0, sizeof(*od));
	od->incomplete = true;
	if (hs->go < 0 || send(hs->go, "g", 1, MSG_NOSIGNAL) != 1) {
		scan_reap(hs);
		return;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf = { .fd = hs->out, .events = POLLIN };
		size_t want = scanner ? sizeof(d) : sizeof(scanner);
		char *into = scanner ? (char *)&d : (char *)&scanner;
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = HOLDERS_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || (poll(&pf, 1, (int)left) < 0 && errno != EINTR))
			break;
		if (!pf.revents)
			continue;
		n = read(hs->out, into + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got < want)
			continue;
		got = 0;
		if (into == (char *)&scanner)
			continue;
		if (!d.pid) {
			od->incomplete = false;
			break;
		}
		if (od->n < MAX_OPEN_DEVS) {
			struct open_dev *more = realloc(od->v, (od->n + 1) * sizeof(*more));

			if (more) {
				od->v = more;
				od->v[od->n++] = d;
			}
		}
	}
	/* late: stuck in a file system, or stopped */
	if (od->incomplete && scanner > 0)
		kill(scanner, SIGKILL);
	scan_reap(hs);
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

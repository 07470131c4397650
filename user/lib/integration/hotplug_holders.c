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
	int proc_fd;    /* /proc, as the caller sees it */
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
	snprintf(path, sizeof(path), "%d/comm", (int)pid);
	if ((fd = openat(sc->proc_fd, path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, sc->comm, sizeof(sc->comm) - 1);
		sc->comm[n > 0 ? n : 0] = '\0';
		sc->comm[strcspn(sc->comm, "\n")] = '\0';
		close(fd);
	}
	snprintf(path, sizeof(path), "%d/fd", (int)pid);
	if ((fd = openat(sc->proc_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
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

/* Close every fd but the N of KEEP (N <= 4). */
static void close_all_but(const int *keep, int n)
{
	int k[4], i, j, lo = 0;

	memcpy(k, keep, (size_t)n * sizeof(int));
	for (i = 1; i < n; i++) /* (sorted: a handful) */
		for (j = i; j > 0 && k[j - 1] > k[j]; j--) {
			int t = k[j];

			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	for (i = 0; i < n; i++) {
		if (k[i] > lo)
			close_range((unsigned int)lo, (unsigned int)k[i] - 1, 0);
		lo = k[i] + 1;
	}
	close_range((unsigned int)lo, ~0u, 0);
}

/* The scanner (a grandchild of the caller, see hp_open_devs_fork()): it
 * keeps only its ends and the two directories, sends its pid, waits for
 * the go, then sends the records and a record of pid 0. */
static void scan_main(const struct holders_scan *hs)
{
	struct scan sc = { .out = hs->child_out, .proc_fd = hs->proc_fd };
	int keep[4] = { hs->child_go, hs->child_out, hs->proc_fd, hs->cg_fd };
	struct open_dev d;
	pid_t self = getpid();
	char c;

	/* not the caller's files: the process in the container's mount
	 * namespace, above all, sees its peer's end close when ours do */
	close_all_but(keep, 4);
	if (write(sc.out, &self, sizeof(self)) != (ssize_t)sizeof(self))
		_exit(1);
	/* no go (the caller's end closed): the call failed, nothing to scan */
	if (read(hs->child_go, &c, 1) != 1)
		_exit(0);
	if (hs->stop)
		kill(self, SIGSTOP);
	scan_cgroup(hs->cg_fd, &sc);
	/* the end: a record of pid 0 */
	memset(&d, 0, sizeof(d));
	if (write(sc.out, &d, sizeof(d)) != (ssize_t)sizeof(d))
		_exit(1);
	_exit(0);
}

/*
 * The scanner of the open files of the cgroup CG (absolute) and below,
 * which scans at hp_open_devs_read()'s go: a grandchild of the caller,
 * not waited for (a process in a FUSE request the server has read waits
 * it out even after SIGKILL, fs/fuse/dev.c, request_wait_answer(), so a
 * wait for it could be for ever), and no child of the caller's to reap:
 * the process in the container's mount namespace forks it, at its
 * command 'H', after the permission swap (a fork write-protects the
 * caller's memory while it lives, and each page the caller then writes is
 * copied, with a TLB flush of the other CPUs). It scans only at the go,
 * when no process can open the device any more. What it reads, /proc and
 * the cgroup, is opened here, in our mount namespace, before that process
 * enters the container's. With STOP (a testing aid), it stops itself at
 * the go, as a scan stuck would. Without a scanner (no memory, no
 * process), the read finds the list incomplete.
 */
void hp_open_devs_prepare(const char *cg, bool stop, struct holders_scan *hs)
{
	int go[2], out[2];

	hs->go = hs->out = hs->child_go = hs->child_out = hs->proc_fd = hs->cg_fd = -1;
	hs->stop = stop;
	hs->proc_fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	hs->cg_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (hs->proc_fd < 0 || hs->cg_fd < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, go)) {
		hp_open_devs_cancel(hs);
		return;
	}
	if (pipe2(out, O_CLOEXEC)) {
		close(go[0]);
		close(go[1]);
		hp_open_devs_cancel(hs);
		return;
	}
	hs->go = go[0];
	hs->child_go = go[1];
	hs->out = out[0];
	hs->child_out = out[1];
}

/* In the process in the container's mount namespace, at 'H': fork the
 * scanner (_Fork(): no atfork handler of the caller runs; the scanner
 * makes only system calls, with the caller's signal mask), and keep none
 * of its fds. HS is the caller's (shared memory): only read. */
void hp_open_devs_fork(void *arg, const sigset_t *caller_mask)
{
	const struct holders_scan *hs = arg;

	if (hs->child_go < 0)
		return;
	if (_Fork() == 0) {
		sigprocmask(SIG_SETMASK, caller_mask, NULL);
		scan_main(hs);
	}
	close(hs->child_go);
	close(hs->child_out);
	close(hs->proc_fd);
	close(hs->cg_fd);
}

/* The scanner is made (or not): its fds are its own. */
void hp_open_devs_forked(struct holders_scan *hs)
{
	int *fds[] = { &hs->child_go, &hs->child_out, &hs->proc_fd, &hs->cg_fd };

	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
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

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The lock devcg writers take on a cgroup where the kernel cannot compare
 * and swap for them (swap.c says where: a first install names no program,
 * a linked program is adopted in two steps, ...). It is an flock on a
 * file of its own under /run/devcg, a directory only root can enter, so
 * no other user can hold it (an flock on the cgroup directory, which
 * anyone may open, could be held forever by anyone). Waiting is bounded.
 */
#include "live/live.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#define POLL_NS (10 * 1000 * 1000L)

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A permission error says whether devcg lacks privileges, as elsewhere. */
static int refused(struct devcg_error *err, int code, const char *what, const char *path)
{
	const char *missing = code == -EACCES || code == -EPERM ? devcg_privilege_missing() : NULL;

	if (missing)
		return devcg_err(err, -EPERM, "cannot %s %s: %s", what, path, missing);
	return devcg_err(err, code, "cannot %s %s: %s", what, path, strerror(-code));
}

/* DIR, made if missing; only when no one but root can write in it. */
static int open_dir(const char *dir, struct devcg_error *err)
{
	struct stat st;
	int fd, ret;

	/* O_NOFOLLOW: a symlink planted in its place is refused (ELOOP) */
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdir(dir, 0700) && errno != EEXIST)
			return refused(err, -errno, "create the lock directory", dir);
		fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		ret = -errno;
		if (ret == -ELOOP || ret == -ENOTDIR)
			return devcg_err(err, -ENOTDIR, "the lock directory %s is not a directory "
					 "(a symlink?); refusing to use it", dir);
		return refused(err, ret, "open the lock directory", dir);
	}
	if (fstat(fd, &st)) {
		ret = refused(err, -errno, "stat", dir);
		close(fd);
		return ret;
	}
	if (st.st_uid != 0 || (st.st_mode & 022)) {
		close(fd);
		return devcg_err(err, -EPERM, "the lock directory %s is owned by uid %u with mode %04o; "
				 "devcg uses it only when root owns it and no one else can write in it",
				 dir, (unsigned int)st.st_uid, (unsigned int)(st.st_mode & 07777));
	}
	return fd;
}

/* The pid holding an flock on the file ST, from /proc/locks, or 0. */
static int holder_of(const struct stat *st)
{
	FILE *f = fopen("/proc/locks", "re");
	char line[256];
	int pid = 0;

	while (f && !pid && fgets(line, sizeof(line), f)) {
		unsigned long long i;
		unsigned int maj, min;
		int p;

		/* "1: FLOCK  ADVISORY  WRITE 1234 00:19:5678 0 EOF" */
		if (sscanf(line, "%*s FLOCK %*s %*s %d %x:%x:%llu", &p, &maj, &min, &i) == 4 &&
		    i == st->st_ino && maj == major(st->st_dev) && min == minor(st->st_dev))
			pid = p;
	}
	if (f)
		fclose(f);
	return pid;
}

int devcg_lock_take(const char *dir, uint64_t cgroup_id, const char *what, struct devcg_lock *lock,
		    struct devcg_error *err)
{
	long long deadline = now_ms() + DEVCG_LOCK_WAIT_MS;
	struct stat held, named;
	int fd, ret;

	lock->fd = -1;
	lock->dir_fd = open_dir(dir, err);
	if (lock->dir_fd < 0)
		return lock->dir_fd;
	snprintf(lock->name, sizeof(lock->name), "cgroup-%" PRIu64 ".lock", cgroup_id);
	for (;;) {
		fd = openat(lock->dir_fd, lock->name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0) {
			ret = refused(err, -errno, "open the lock file in", dir);
			break;
		}
		if (fstat(fd, &held) || !S_ISREG(held.st_mode) || held.st_uid != 0) {
			ret = devcg_err(err, -EPERM, "%s/%s is not a regular file of root's; refusing it",
					dir, lock->name);
			break;
		}
		if (!flock(fd, LOCK_EX | LOCK_NB)) {
			/* the previous holder removes the file before it lets go:
			 * holding a removed file locks nothing, so take the new one */
			if (!fstatat(lock->dir_fd, lock->name, &named, AT_SYMLINK_NOFOLLOW) &&
			    named.st_ino == held.st_ino && named.st_dev == held.st_dev) {
				lock->fd = fd;
				return 0;
			}
		} else if (errno != EWOULDBLOCK) {
			ret = devcg_err(err, -errno, "cannot lock %s/%s: %s", dir, lock->name,
					strerror(errno));
			break;
		}
		if (now_ms() >= deadline) {
			int pid = holder_of(&held);
			char by[64] = "";

			if (pid > 0)
				snprintf(by, sizeof(by), " (held by pid %d)", pid);
			ret = devcg_err(err, -ETIMEDOUT, "%s: another devcg writer held its lock %s/%s%s "
					"for %d s; giving up", what, dir, lock->name, by,
					DEVCG_LOCK_WAIT_MS / 1000);
			break;
		}
		close(fd);
		nanosleep(&(struct timespec){ .tv_nsec = POLL_NS }, NULL);
	}
	if (fd >= 0)
		close(fd);
	close(lock->dir_fd);
	lock->dir_fd = -1;
	return ret;
}

int devcg_lock_cgroup(const struct devcg_cgroup *cg, struct devcg_lock *lock, struct devcg_error *err)
{
	lock->fd = lock->dir_fd = -1;
	/* a cgroup2 directory's inode number is the cgroup id (kernfs) */
	return devcg_lock_take(DEVCG_LOCK_DIR, cg->ino, devcg_cgroup_rel(cg), lock, err);
}

void devcg_lock_release(struct devcg_lock *lock)
{
	if (lock->fd < 0)
		return;
	/* removed while still held, so no lock file is left per cgroup; a
	 * waiter that opened it sees that it is gone and opens a new one */
	unlinkat(lock->dir_fd, lock->name, 0);
	close(lock->fd);
	close(lock->dir_fd);
	lock->fd = lock->dir_fd = -1;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The container side of a hot-plug, in the child: what it looks at before
 * it acts (the walk to a node's directory without following a symbolic
 * link, the node there, its mount) and the failure it records; nodes.c
 * makes and removes the nodes with them (nodes_child.h).
 */
#include "nodes_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/fsuid.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>

/* ---- in the child ------------------------------------------------------- */

/* The host's /proc/self/fd of the child, opened before it enters the
 * container: a path to an fd that no container mount can change. The
 * child shares the caller's memory and the calling thread's TLS (nodes.c):
 * thread-local, so that the children of two threads never read each
 * other's fd number. */
__thread int hp_proc_fd = -1;

const char *hp_strerror(int e)
{
	const char *s = strerrordesc_np(e);

	return s ? s : "unknown error";
}

/* Record why node I failed at STEP; returns CODE. */
__attribute__((format(printf, 5, 6))) int hp_fail(struct hp_shared *sh, int i, const char *step,
						      int code, const char *fmt, ...)
{
	va_list ap;

	sh->err = code;
	sh->failed = i;
	snprintf(sh->step, sizeof(sh->step), "%s", step);
	va_start(ap, fmt);
	vsnprintf(sh->msg, sizeof(sh->msg), fmt, ap);
	va_end(ap);
	return code;
}

/* Testing aid: is STEP the one to fail, at node I, the last one worked on? */
bool hp_fault(const struct hp_shared *sh, int i, int last, const char *step)
{
	return i == last && !strcmp(sh->fail_at, step);
}

/* Testing aid: with fail_at "stop-STEP", the child stops itself (SIGSTOP)
 * at STEP of node I, the last one worked on, for a test to play the
 * container that changes its directory meanwhile; SIGCONT goes on. */
void hp_stop_at(const struct hp_shared *sh, int i, int last, const char *step)
{
	if (i == last && !strncmp(sh->fail_at, "stop-", 5) && !strcmp(sh->fail_at + 5, step))
		kill(getpid(), SIGSTOP); /* (the child's own pid) */
}

/* Is ST a device node of FMT MAJOR:MINOR (FMT 0: of any)? */
bool hp_is_dev(const struct stat *st, uint32_t fmt, uint32_t maj, uint32_t min)
{
	uint32_t f = st->st_mode & S_IFMT;

	return (f == S_IFCHR || f == S_IFBLK) && (!fmt || (f == fmt && major(st->st_rdev) == maj &&
							   minor(st->st_rdev) == min));
}

/* The device node N is about: its numbers, or those hp_look() saw there. */
bool hp_is_ndev(const struct stat *st, const struct hp_node *n)
{
	return n->fmt ? hp_is_dev(st, n->fmt, n->major, n->minor)
		      : hp_is_dev(st, n->seen_fmt, n->seen_major, n->seen_minor);
}

/* Is DFD/NAME (not followed) the inode ST? */
bool hp_same_inode(int dfd, const char *name, const struct stat *st)
{
	struct stat now;

	return !fstatat(dfd, name, &now, AT_SYMLINK_NOFOLLOW) && now.st_dev == st->st_dev &&
	       now.st_ino == st->st_ino;
}

/* Unlink DFD/NAME if it is still the inode ST (what devcg made there). */
void hp_unlink_if(int dfd, const char *name, const struct stat *st)
{
	if (hp_same_inode(dfd, name, st))
		unlinkat(dfd, name, 0);
}

/* umount2() of the mount whose root MFD is (an fd, not a path): through
 * the host's /proc/self/fd, which no container mount can change. */
static int umount_fd(int mfd)
{
	char num[16];
	int ret = 0;

	if (hp_proc_fd < 0)
		return -EBADF;
	snprintf(num, sizeof(num), "%d", mfd);
	if (fchdir(hp_proc_fd))
		return -errno;
	if (umount2(num, MNT_DETACH))
		ret = -errno;
	if (chdir("/"))
		ret = ret ? ret : -errno;
	return ret;
}

/* The mount id of what FD is (0: unknown, before Linux 5.8). */
uint64_t hp_mount_id(int fd)
{
	struct statx stx;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) || !(stx.stx_mask & STATX_MNT_ID))
		return 0;
	return stx.stx_mnt_id;
}

/* Is FD (of DFD/...) the root of a mount? */
static bool fd_is_mount_root(int dfd, int fd)
{
	struct statx stx;
	struct stat st, up;

	if (!statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS, &stx) &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
	return !fstat(fd, &st) && !fstat(dfd, &up) && st.st_dev != up.st_dev;
}

/*
 * Unmount the bound node at DFD/NAME: reached through the directory
 * checked (DFD), opened without following, and only if it is a mount
 * root of the device of N (and, with MNT_ID, that very mount). Returns 0
 * or -errno; -ESTALE: something else is there now.
 */
int hp_unmount_node(int dfd, const char *name, const struct hp_node *n, uint64_t mnt_id)
{
	int mfd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC), ret;
	struct stat st;

	if (mfd < 0)
		return -errno;
	if (fstat(mfd, &st) || !hp_is_ndev(&st, n) || !fd_is_mount_root(dfd, mfd) ||
	    (mnt_id && hp_mount_id(mfd) != mnt_id)) {
		close(mfd);
		return -ESTALE;
	}
	ret = umount_fd(mfd);
	close(mfd);
	return ret;
}

/*
 * The directory of PATH, opened component by component from the
 * container's root, never through a symbolic link (O_NOFOLLOW on each): a
 * container could otherwise point the path anywhere it likes, such as a
 * host volume it has mounted. With MADE, missing directories are made (as
 * their parent's owner), the first of them recorded in MADE->dirs_at. With
 * NEAREST, a missing directory is no error: its nearest existing ancestor
 * is returned and *MISSING set. Returns an fd, or -errno (ELOOP: a symbolic
 * link on the way, ENOTDIR: something else); *NAME is the last component.
 */
int hp_walk(const char *path, struct hp_node *made, bool nearest, bool *missing, const char **name)
{
	char buf[PATH_MAX], *comp, *next;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), sub;

	if (missing)
		*missing = false;
	*name = strrchr(path, '/') + 1;
	if (fd < 0)
		return -errno;
	snprintf(buf, sizeof(buf), "%s", path);
	for (comp = buf + 1; (next = strchr(comp, '/')); comp = next + 1) {
		*next = '\0';
		sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 && errno == ENOENT && made) {
			struct stat up;
			bool new_dir = !mkdirat(fd, comp, 0755);
			int why = new_dir || errno == EEXIST ? 0 : errno;

			sub = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (new_dir && sub >= 0) {
				if (!made->dirs_at)
					made->dirs_at = (int)(next - buf);
				/* the owner goes on the directory opened, not on a name */
				if (!fstat(fd, &up))
					fchown(sub, up.st_uid, up.st_gid);
			}
			/* still missing: why mkdir failed (EROFS, EACCES...) */
			if (sub < 0 && errno == ENOENT && why)
				errno = why;
		}
		if (sub < 0 && errno == ENOENT && nearest) {
			*missing = true;
			return fd;
		}
		if (sub < 0) {
			int e = errno;
			struct stat st;

			/* O_DIRECTORY | O_NOFOLLOW on a symlink says ENOTDIR */
			if (e == ENOTDIR && !fstatat(fd, comp, &st, AT_SYMLINK_NOFOLLOW) && S_ISLNK(st.st_mode))
				e = ELOOP;
			close(fd);
			return -e;
		}
		close(fd);
		fd = sub;
	}
	return fd;
}

/* statx() knows mount roots (STATX_ATTR_MOUNT_ROOT, Linux 5.8); before
 * that, a mount root has another device than its directory. */
static bool is_mount_point(int dfd, const char *name)
{
	struct statx stx;
	struct stat st, up;

	if (!statx(dfd, name, AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &stx) &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
	return !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && !fstat(dfd, &up) && st.st_dev != up.st_dev;
}

void hp_look(struct hp_node *n)
{
	struct statvfs vfs;
	struct stat st;
	const char *name;
	bool missing;
	int dfd = hp_walk(n->path, NULL, true, &missing, &name);

	n->state = HP_ABSENT;
	n->mounted = false;
	if (dfd < 0) {
		n->state = HP_BAD_PATH;
		n->seen_errno = -dfd;
		return;
	}
	/* where the node would be (or its nearest existing ancestor, where the
	 * directories would be made): would a node there be refused at open
	 * for nodev? */
	if (!fstatvfs(dfd, &vfs))
		n->nodev = vfs.f_flag & ST_NODEV;
	if (!fstat(dfd, &st))
		n->dir_dev = st.st_dev;
	if (missing || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW)) {
		close(dfd);
		return;
	}
	n->mounted = is_mount_point(dfd, name);
	close(dfd);
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		n->state = HP_NOT_DEV;
		return;
	}
	n->seen_fmt = st.st_mode & S_IFMT;
	n->seen_major = major(st.st_rdev);
	n->seen_minor = minor(st.st_rdev);
	n->seen_mode = st.st_mode & 07777;
	n->seen_uid = st.st_uid;
	n->seen_gid = st.st_gid;
	if (n->fmt && (n->seen_fmt != n->fmt || n->seen_major != n->major || n->seen_minor != n->minor))
		n->state = HP_OTHER_DEV;
	else if (((n->set & DEVCG_HOTPLUG_SET_MODE) && n->seen_mode != n->mode) ||
		 ((n->set & DEVCG_HOTPLUG_SET_UID) && n->seen_uid != n->uid) ||
		 ((n->set & DEVCG_HOTPLUG_SET_GID) && n->seen_gid != n->gid))
		n->state = HP_DIFFERS;
	else
		n->state = HP_SAME;
}

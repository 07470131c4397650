// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The container side of a hot-plug: a child process that enters the
 * container's mount namespace and makes, or removes, device nodes there.
 *
 * Why a child: setns(CLONE_NEWNS) refuses a process that shares its
 * fs_struct, as every thread does (fs/namespace.c, mntns_install()), and it
 * would move the caller itself; a child process is single-threaded and
 * thrown away. It shares the caller's memory (clone(CLONE_VM), as
 * posix_spawn() does), not a copy of it: a fork write-protects all of the
 * caller's memory, and every page the caller then writes while the child
 * lives is copied, with a TLB flush of the other CPUs, which cost more
 * than the child's own work. Sharing, the two never run at once: the
 * caller works only while the child waits for a command, and waits for
 * the child's answer to each (the child runs on the calling thread's
 * thread-local storage: errno, malloc's cache). The child runs on a stack
 * of its own below its table, with a guard page, and all signals blocked:
 * a handler of the caller must not run on it. It never enters the container's user namespace: mknod of a
 * device needs CAP_MKNOD in the initial user namespace (fs/namei.c,
 * vfs_mknod()), which only the host's root has.
 *
 * Where the container cannot hold a node -- its mount namespace belongs to
 * another user namespace, whose mounts the kernel marks SB_I_NODEV
 * (fs/super.c, alloc_super()), or the directory is on a nodev mount -- a
 * node made there could never be opened (fs/namei.c, may_open_dev()). The
 * host node is bind-mounted instead: open_tree(OPEN_TREE_CLONE) in our
 * mount namespace makes a detached copy of its mount, and move_mount()
 * attaches it in the container's, as runc does at create time for a
 * user-namespaced container.
 *
 * No node appears with a wrong mode: it is made under a temporary name in
 * its target directory, given its owner and mode, and renamed into place
 * (RENAME_NOREPLACE; RENAME_EXCHANGE replaces a node atomically, the old
 * one kept aside until the end for an undo). A bind mount goes onto an
 * empty file of mode 0, which nobody in the container can open.
 *
 * The container can change its directories at any moment, so no step
 * names a path it controls and trusts what is there: directories are
 * opened one component at a time without following a symbolic link; the
 * owner and mode go on the node made, through an O_PATH fd checked to be
 * that device node (fchownat(AT_EMPTY_PATH); fchmodat() through the
 * host's /proc/self/fd, opened before entering the container, since
 * fchmod() refuses O_PATH fds and the container's /proc is its own); the
 * name is checked to be that node before the rename; what is set aside or
 * removed is checked to be the device first; a mount is unmounted through
 * an fd of its root, checked to be the device's (and, for an undo, the
 * very mount made), never by its path.
 *
 * The parent and the child share the node table (the child shares all of
 * the parent's memory) and step through it with one-byte commands over a
 * socket pair.
 */
#include "nodes_child.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
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


/* ---- in the child (the nodes' primitives: nodes_look.c) ------------------- */

/*
 * Create as the owner of the directory created in: a file system mounted in
 * the container's user namespace (its /dev tmpfs) takes new files only from
 * ids mapped there (fs/namei.c, may_o_create() -> fsuidgid_has_mapping()),
 * and the host's root is not one; the directory's owner is (in a
 * user-namespaced container, the container's root). Moving the fsuid away
 * from 0 drops the file capabilities from the effective set
 * (security/commoncap.c, cap_task_fix_setuid()); the child takes them back
 * from its permitted set, to make nodes and set owners as root would.
 */
static void act_as_owner_of(const char *path)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];
	const char *name;
	struct stat st;
	bool missing;
	int dfd = hp_walk(path, NULL, true, &missing, &name);

	if (dfd < 0)
		return;
	if (!fstat(dfd, &st)) {
		setfsuid(st.st_uid);
		setfsgid(st.st_gid);
	}
	close(dfd);
	if (!syscall(SYS_capget, &hdr, data)) {
		data[0].effective = data[0].permitted;
		data[1].effective = data[1].permitted;
		syscall(SYS_capset, &hdr, data);
	}
}

/* Back to 0, which gives the file capabilities back by itself. */
static void act_as_root(void)
{
	setfsuid(0);
	setfsgid(0);
}

/* Remove the directories hp_walk() made for N, deepest first; one that
 * holds something now (another command's node) stays. */
static void unmake_dirs(struct hp_node *n)
{
	char buf[PATH_MAX], *slash;

	if (!n->dirs_at)
		return;
	snprintf(buf, sizeof(buf), "%s", n->path);
	while ((slash = strrchr(buf, '/')) && slash - buf >= n->dirs_at) {
		const char *name;
		int dfd;

		*slash = '\0';
		dfd = hp_walk(buf, NULL, false, NULL, &name);
		if (dfd < 0)
			break;
		if (unlinkat(dfd, name, AT_REMOVEDIR)) {
			close(dfd);
			break;
		}
		close(dfd);
	}
	n->dirs_at = 0;
}

/* The node wanted is at DFD/NAME now (another command made it meanwhile). */
static bool wanted_now(int dfd, const char *name, const struct hp_node *n)
{
	struct stat st;

	return !fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) && (st.st_mode & S_IFMT) == n->fmt &&
	       major(st.st_rdev) == n->major && minor(st.st_rdev) == n->minor;
}

/* fchmod() of an O_PATH fd, which fchmod() itself refuses: fchmodat()
 * through the host's /proc/self/fd/FD (a magic link to the very inode). */
static int chmod_fd(int fd, mode_t mode)
{
	char num[16];

	if (hp_proc_fd < 0) {
		errno = EBADF;
		return -1;
	}
	snprintf(num, sizeof(num), "%d", fd);
	return fchmodat(hp_proc_fd, num, mode, 0);
}

static int make_node(struct hp_shared *sh, int i, int last, struct hp_node *n)
{
	const char *name;
	int dfd, fd, ret = 0;

	if (hp_fault(sh, i, last, "mkdir"))
		return hp_fail(sh, i, "mkdir", -EIO, "injected failure");
	dfd = hp_walk(n->path, n, false, NULL, &name);
	if (dfd < 0)
		return hp_fail(sh, i, "mkdir", dfd, "the directory of %s: %s", hp_q(n->path),
			    dfd == -ELOOP ? "a symbolic link on the way" : hp_strerror(-dfd));
	snprintf(n->tmp, sizeof(n->tmp), TMP_PREFIX "%d-%d", (int)getpid(), i);
	if (n->bind) {
		if (n->tree_fd < 0) {
			ret = hp_fail(sh, i, "bind", n->tree_err, "cannot clone the mount of %s: %s",
				   n->host_path[0] ? hp_q(n->host_path) : "(no host node)",
				   n->tree_why[0] ? n->tree_why : hp_strerror(-n->tree_err));
			goto out;
		}
		if (n->state != HP_ABSENT) {
			if (n->mounted) {
				ret = hp_fail(sh, i, "rename", -EBUSY, "%s is a mount point", hp_q(n->path));
				goto out;
			}
			if (renameat2(dfd, name, dfd, n->tmp, RENAME_NOREPLACE)) {
				ret = hp_fail(sh, i, "rename", -errno, "set %s aside: %s", hp_q(n->path), hp_strerror(errno));
				goto out;
			}
			memcpy(n->aside, n->tmp, sizeof(n->aside));
		}
		fd = openat(dfd, name, O_CREAT | O_EXCL | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd < 0) {
			ret = hp_fail(sh, i, "bind", -errno, "create the mount point %s: %s", hp_q(n->path),
				   hp_strerror(errno));
			goto out;
		}
		n->file_made = true;
		if (fstat(fd, &n->made_st))
			memset(&n->made_st, 0, sizeof(n->made_st));
		if (hp_fault(sh, i, last, "bind")) {
			close(fd);
			ret = hp_fail(sh, i, "bind", -EIO, "injected failure");
			goto out;
		}
		/* onto the very file made (its fd), whatever the name holds now */
		if (syscall(SYS_move_mount, n->tree_fd, "", fd, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH)) {
			ret = hp_fail(sh, i, "bind", -errno, "move_mount %s onto %s: %s", hp_q(n->host_path), hp_q(n->path),
				   hp_strerror(errno));
			close(fd);
			goto out;
		}
		close(fd);
		n->mount_made = true;
		n->mnt_id = hp_mount_id(n->tree_fd);
		n->done = n->state == HP_ABSENT ? HP_DID_BOUND : HP_DID_REPLACED;
		goto out;
	}
	if (hp_fault(sh, i, last, "mknod")) {
		ret = hp_fail(sh, i, "mknod", -EIO, "injected failure");
		goto out;
	}
	/* mode 0 until it has its owner: a new name nobody looks for anyway */
	if (mknodat(dfd, n->tmp, n->fmt, makedev(n->major, n->minor))) {
		ret = hp_fail(sh, i, "mknod", -errno, "mknod %s: %s", hp_q(n->path), hp_strerror(errno));
		goto out;
	}
	n->tmp_made = true;
	hp_stop_at(sh, i, last, "mknod");
	/* the owner and mode go on the node made, through an fd of it that is
	 * checked to be that device node: never through a name the container
	 * can point elsewhere */
	fd = openat(dfd, n->tmp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &n->made_st) || !hp_is_dev(&n->made_st, n->fmt, n->major, n->minor)) {
		if (fd >= 0)
			close(fd);
		memset(&n->made_st, 0, sizeof(n->made_st));
		n->tmp_made = false; /* not ours any more: left alone */
		ret = hp_fail(sh, i, "mknod", -ESTALE, "the temporary node %s was replaced meanwhile (not the "
			   "device node made): no owner or mode set, left alone", hp_q(n->tmp));
		goto out;
	}
	if (fchownat(fd, "", n->uid, n->gid, AT_EMPTY_PATH) || chmod_fd(fd, n->mode)) {
		ret = hp_fail(sh, i, "mknod", -errno, "set the owner and mode of %s: %s", hp_q(n->path),
			   hp_strerror(errno));
		close(fd);
		goto out;
	}
	close(fd);
	if (hp_fault(sh, i, last, "rename")) {
		ret = hp_fail(sh, i, "rename", -EIO, "injected failure");
		goto out;
	}
	/* the name is still the node made (else the rename would move the
	 * container's file into place and call it ours) */
	if (!hp_same_inode(dfd, n->tmp, &n->made_st)) {
		n->tmp_made = false;
		ret = hp_fail(sh, i, "rename", -ESTALE, "the temporary node %s was replaced meanwhile: left alone",
			   hp_q(n->tmp));
		goto out;
	}
	if (n->state == HP_ABSENT) {
		if (!renameat2(dfd, n->tmp, dfd, name, RENAME_NOREPLACE)) {
			n->tmp_made = false;
			n->done = HP_DID_MADE;
			/* the container's file moved in between the check and the
			 * rename goes back where it put it */
			if (!hp_same_inode(dfd, name, &n->made_st)) {
				renameat2(dfd, name, dfd, n->tmp, RENAME_NOREPLACE);
				n->done = 0;
				ret = hp_fail(sh, i, "rename", -ESTALE, "the temporary node %s was replaced meanwhile: "
					   "left alone", hp_q(n->tmp));
			}
		} else if (errno == EEXIST && wanted_now(dfd, name, n)) {
			hp_unlink_if(dfd, n->tmp, &n->made_st);
			n->tmp_made = false;
			n->done = HP_DID_RACED;
		} else {
			ret = hp_fail(sh, i, "rename", -errno, "rename into %s: %s", hp_q(n->path), hp_strerror(errno));
		}
		goto out;
	}
	if (n->mounted) {
		ret = hp_fail(sh, i, "rename", -EBUSY, "%s is a mount point", hp_q(n->path));
		goto out;
	}
	if (renameat2(dfd, n->tmp, dfd, name, RENAME_EXCHANGE)) {
		ret = hp_fail(sh, i, "rename", -errno, "exchange %s: %s", hp_q(n->path), hp_strerror(errno));
		goto out;
	}
	n->tmp_made = false;
	n->exchanged = true;
	memcpy(n->aside, n->tmp, sizeof(n->aside));
	n->done = HP_DID_REPLACED;
	/* ours is in place, and what was set aside is the node hp_look() saw
	 * (else the undo exchanges them back) */
	{
		struct stat old;

		if (!hp_same_inode(dfd, name, &n->made_st) || fstatat(dfd, n->aside, &old, AT_SYMLINK_NOFOLLOW) ||
		    !hp_is_dev(&old, n->seen_fmt, n->seen_major, n->seen_minor))
			ret = hp_fail(sh, i, "rename", -ESTALE, "%s was changed meanwhile: left alone", hp_q(n->path));
	}
out:
	close(dfd);
	return ret;
}

/* Put N back as it was before make_node() or remove_node(). */
static void undo_node(struct hp_node *n)
{
	const char *name;
	int dfd = hp_walk(n->path, NULL, false, NULL, &name), fd;

	if (dfd < 0)
		return;
	/* only the mount made, through the directory checked */
	if (n->mount_made)
		hp_unmount_node(dfd, name, n, n->mnt_id);
	if (n->file_made || n->done == HP_DID_MADE)
		hp_unlink_if(dfd, name, &n->made_st);
	if (n->tmp_made)
		hp_unlink_if(dfd, n->tmp, &n->made_st);
	if (n->exchanged) {
		/* ours is at the aside name after the exchange back */
		if (!renameat2(dfd, n->aside, dfd, name, RENAME_EXCHANGE))
			hp_unlink_if(dfd, n->aside, &n->made_st);
	} else if (n->aside[0]) {
		renameat2(dfd, n->aside, dfd, name, RENAME_NOREPLACE);
	}
	if (n->done == HP_DID_UNMOUNTED && n->tree_fd >= 0) {
		/* the mount point may still be there (its unlink failed) */
		fd = openat(dfd, name, O_CREAT | O_WRONLY | O_NOFOLLOW | O_CLOEXEC, 0);
		if (fd >= 0) {
			syscall(SYS_move_mount, n->tree_fd, "", fd, "",
				MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
			close(fd);
		}
	}
	unmake_dirs(n);
	close(dfd);
	n->mount_made = n->file_made = n->tmp_made = n->exchanged = false;
	n->aside[0] = '\0';
	n->done = 0;
	n->mnt_id = 0;
	memset(&n->made_st, 0, sizeof(n->made_st));
}

static void undo(struct hp_node *n)
{
	act_as_owner_of(n->path);
	undo_node(n);
	act_as_root();
}

static int remove_node(struct hp_shared *sh, int i, int last, struct hp_node *n)
{
	const char *name;
	int dfd = hp_walk(n->path, NULL, false, NULL, &name), ret = 0;

	if (dfd < 0)
		return hp_fail(sh, i, "unlink", dfd, "the directory of %s: %s", hp_q(n->path), hp_strerror(-dfd));
	snprintf(n->tmp, sizeof(n->tmp), TMP_PREFIX "%d-%d", (int)getpid(), i);
	hp_stop_at(sh, i, last, "unlink");
	if (hp_fault(sh, i, last, "unlink")) {
		ret = hp_fail(sh, i, "unlink", -EIO, "injected failure");
	} else if (n->mounted) {
		struct stat st;
		int e;

		/* a bound node, unmounted through the directory checked: the
		 * undo mounts the host node again */
		if ((e = hp_unmount_node(dfd, name, n, 0)))
			ret = hp_fail(sh, i, "unlink", e, "umount %s: %s", hp_q(n->path), e == -ESTALE ?
				   "it was changed meanwhile (not a mount of the device): left alone" : hp_strerror(-e));
		else if (n->done = HP_DID_UNMOUNTED, fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
			ret = hp_fail(sh, i, "unlink", -errno, "unlink %s: %s", hp_q(n->path), hp_strerror(errno));
		else if (!S_ISREG(st.st_mode)) /* the mount point is a file */
			ret = hp_fail(sh, i, "unlink", -ESTALE, "unlink %s: not the mount point any more: left "
				   "alone", hp_q(n->path));
		else if (unlinkat(dfd, name, 0))
			ret = hp_fail(sh, i, "unlink", -errno, "unlink %s: %s", hp_q(n->path), hp_strerror(errno));
	} else if (renameat2(dfd, name, dfd, n->tmp, RENAME_NOREPLACE)) {
		/* set aside until the permission is gone: the undo renames it back */
		ret = hp_fail(sh, i, "unlink", -errno, "unlink %s: %s", hp_q(n->path), hp_strerror(errno));
	} else {
		struct stat st;

		memcpy(n->aside, n->tmp, sizeof(n->aside));
		n->done = HP_DID_REMOVED;
		/* only a node of the device: another set aside goes back */
		if (fstatat(dfd, n->aside, &st, AT_SYMLINK_NOFOLLOW) || !hp_is_ndev(&st, n))
			ret = hp_fail(sh, i, "unlink", -ESTALE, "%s was changed meanwhile (not a node of the "
				   "device): left alone", hp_q(n->path));
	}
	close(dfd);
	return ret;
}

/* Drop what was set aside: the nodes replaced (attach) or removed (detach). */
static void commit_node(struct hp_node *n)
{
	const char *name;
	int dfd;

	if (!n->aside[0])
		return;
	dfd = hp_walk(n->path, NULL, false, NULL, &name);
	if (dfd >= 0) {
		struct stat st;

		/* a device node set aside, not what the container put there */
		if (!fstatat(dfd, n->aside, &st, AT_SYMLINK_NOFOLLOW) && hp_is_dev(&st, 0, 0, 0))
			unlinkat(dfd, n->aside, 0);
		close(dfd);
	}
	n->aside[0] = '\0';
	n->exchanged = false;
}

static int last_work(const struct hp_shared *sh)
{
	int i, last = -1;

	for (i = 0; i < sh->n; i++)
		if (sh->nodes[i].work)
			last = i;
	return last;
}

static int run_all(struct hp_shared *sh, bool make)
{
	int i, last = last_work(sh), ret = 0;

	for (i = 0; !ret && i < sh->n; i++) {
		struct hp_node *n = &sh->nodes[i];

		if (!n->work || (make && n->state == HP_SAME) || (!make && n->state != HP_SAME))
			continue;
		act_as_owner_of(n->path);
		ret = make ? make_node(sh, i, last, n) : remove_node(sh, i, last, n);
		act_as_root();
	}
	/* on failure, the child undoes its own work at once */
	if (ret)
		while (i-- > 0)
			undo(&sh->nodes[i]);
	return ret;
}

static char run_cmd(struct hp_shared *sh, char cmd)
{
	int i;

	switch (cmd) {
	case 'M':
		return run_all(sh, true) ? 1 : 0;
	case 'R':
		return run_all(sh, false) ? 1 : 0;
	case 'U':
		for (i = sh->n - 1; i >= 0; i--)
			undo(&sh->nodes[i]);
		return 0;
	case 'C':
		for (i = 0; i < sh->n; i++)
			commit_node(&sh->nodes[i]);
		return 0;
	case 'S':
		if (sh->scan_fn)
			sh->scan_fn(sh->scan_arg);
		return 0;
	}
	return 1;
}

/*
 * The mount of N's host node, cloned (open_tree(OPEN_TREE_CLONE)) for a
 * bind mount: the node is opened once, without following a symbolic link,
 * checked to be the device (type and numbers), and that fd is cloned, so
 * what is bound is what was checked.
 */
static void clone_host_node(struct hp_node *n, bool trees)
{
	struct stat st;
	int fd;

	n->tree_fd = -1;
	n->tree_err = -ENOENT;
	n->tree_why[0] = '\0';
	if (!n->host_path[0] || !trees)
		return;
	fd = open(n->host_path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		n->tree_err = -errno;
		snprintf(n->tree_why, sizeof(n->tree_why), "%s", hp_strerror(errno));
		return;
	}
	if (fstat(fd, &st)) {
		n->tree_err = -errno;
		snprintf(n->tree_why, sizeof(n->tree_why), "%s", hp_strerror(errno));
	} else if (S_ISLNK(st.st_mode)) {
		n->tree_err = -ELOOP;
		snprintf(n->tree_why, sizeof(n->tree_why), "it is a symbolic link (devcg bind-mounts only "
			 "the device node itself: give the path it points to)");
	} else if (!hp_is_dev(&st, n->fmt, n->major, n->minor) || !hp_is_dev(&st, 0, 0, 0)) {
		n->tree_err = -ENODEV;
		snprintf(n->tree_why, sizeof(n->tree_why), "it is not the device node %c %u:%u (it changed "
			 "since it was looked at)", n->fmt == S_IFBLK ? 'b' : 'c', n->major, n->minor);
	} else {
		n->tree_fd = (int)syscall(SYS_open_tree, fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
					  AT_EMPTY_PATH);
		if (n->tree_fd < 0) {
			n->tree_err = -errno;
			snprintf(n->tree_why, sizeof(n->tree_why), "%s", hp_strerror(errno));
		}
	}
	close(fd);
}

/* Close every fd but the N of KEEP (-1s ignored). */
static void close_all_but(const int *keep, int n)
{
	int k[8], m = 0, i, j, lo = 0;

	for (i = 0; i < n && m < 8; i++)
		if (keep[i] >= 0)
			k[m++] = keep[i];
	for (i = 1; i < m; i++) /* (sorted: a handful) */
		for (j = i; j > 0 && k[j - 1] > k[j]; j--) {
			int t = k[j];

			k[j] = k[j - 1];
			k[j - 1] = t;
		}
	for (i = 0; i < m; i++) {
		if (k[i] > lo)
			close_range((unsigned int)lo, (unsigned int)k[i] - 1, 0);
		lo = k[i] + 1;
	}
	close_range((unsigned int)lo, ~0u, 0);
}

void hp_child_main(struct hp_shared *sh)
{
	int sock = sh->sock, mntns_fd = sh->mntns_fd, root_fd = sh->root_fd;
	int keep[5] = { sock, mntns_fd, root_fd, sh->keep_fds[0], sh->keep_fds[1] };
	char reply = 0, cmd;
	int i;

	/* none of the caller's files but what it needs (this fd table is a
	 * copy): the caller's end of the pair, whose close it must see, and
	 * what a child left behind (stuck in the kernel) would hold for ever,
	 * as a lock file of the caller's */
	close_all_but(keep, 5);

	umask(0);
	hp_proc_fd = open("/proc/self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sh->trees && !strcmp(sh->fail_at, "stop-tree"))
		kill(getpid(), SIGSTOP); /* (the child's own pid) */
	/* the host nodes' mounts are cloned here, in our mount namespace */
	for (i = 0; i < sh->n; i++)
		clone_host_node(&sh->nodes[i], sh->trees);
	if (setns(mntns_fd, CLONE_NEWNS)) {
		hp_fail(sh, -1, "setns", -errno, "enter the container's mount namespace: %s", hp_strerror(errno));
		reply = 1;
	} else if (fchdir(root_fd) || chroot(".") || chdir("/")) {
		hp_fail(sh, -1, "chroot", -errno, "enter the container's root: %s", hp_strerror(errno));
		reply = 1;
	} else {
		for (i = 0; i < sh->n; i++)
			hp_look(&sh->nodes[i]);
	}
	close(mntns_fd);
	close(root_fd);
	if (send(sock, &reply, 1, MSG_NOSIGNAL) != 1 || reply)
		return;
	/* 'R' waits for the verdict ('C' or 'U'), and 'C' for 'S' when there
	 * is a scan; every other command is the last (each round trip costs
	 * the parent a wake-up) */
	while (recv(sock, &cmd, 1, 0) == 1 && cmd != 'Q') {
		sh->err = 0;
		sh->failed = -1;
		reply = run_cmd(sh, cmd);
		if (cmd == 'M' && !reply)
			run_cmd(sh, 'C');
		if (send(sock, &reply, 1, MSG_NOSIGNAL) != 1 || reply ||
		    !(cmd == 'R' || (cmd == 'C' && sh->scan_fn)))
			return;
	}
	/* the parent is gone or done: what was set aside goes */
	run_cmd(sh, 'C');
}

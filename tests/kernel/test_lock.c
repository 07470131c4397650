// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The lock of devcg writers (issue "Hardening", 3): only root can hold it,
 * and waiting for it ends. An flock on the cgroup directory, which any
 * user may open, let anyone block devcg forever; devcg now locks a file
 * of its own under /run/devcg (user/lib/live/lock.c).
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "internal.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* A hang guard only: the old code waited here forever. */
#define HANG_GUARD_S 60

static uint32_t attached(const char *cg, uint32_t *ids)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY);
	__u32 cnt = 64, flags = 0;

	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	return cnt;
}

static uint64_t cgroup_id(const char *cg)
{
	struct stat st;

	CHECK(!stat(cg, &st));
	return (uint64_t)st.st_ino;
}

/* A child that runs FN(ARG) (its result is sent back as one byte), then
 * holds what it took until child_end(). */
struct child {
	pid_t pid;
	int stop;
};

static int child_start(struct child *c, int (*fn)(void *arg), void *arg)
{
	int ready[2], stop[2];
	char r = 0, x;

	CHECK(!pipe(ready) && !pipe(stop));
	c->pid = fork();
	CHECK(c->pid >= 0);
	if (c->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		close(stop[1]);
		r = (char)fn(arg);
		if (write(ready[1], &r, 1) != 1)
			_exit(1);
		while (read(stop[0], &x, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(stop[0]);
	c->stop = stop[1];
	CHECK(read(ready[0], &r, 1) == 1);
	close(ready[0]);
	return r;
}

static void child_end(struct child *c)
{
	int status;

	close(c->stop);
	CHECK(waitpid(c->pid, &status, 0) == c->pid);
	CHECK_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
}

/* As nobody: a shared flock on each cgroup directory of ARG (two paths),
 * as any local user can take; and an attempt at devcg's own lock.
 * Returns 0 when the flocks are held and devcg's lock was refused. */
static int nobody_holds_flocks(void *arg)
{
	char (*cgs)[4096] = arg;
	struct devcg_lock lock;

	if (setgid(65534) || setuid(65534))
		return 2;
	for (int i = 0; i < 2; i++) {
		int fd = open(cgs[i], O_RDONLY | O_DIRECTORY);

		if (fd < 0 || flock(fd, LOCK_SH))
			return 3;
		/* the fd stays open: the flock lasts until the child exits */
	}
	if (devcg_lock_take(DEVCG_LOCK_DIR, cgroup_id(cgs[0]), "test", &lock, NULL) != -EPERM)
		return 4;
	return 0;
}

TEST(an_unprivileged_flock_on_the_cgroup_directory_does_not_block_devcg)
{
	struct devcg_policy *a = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_rule deny = { .verb = DEVCG_VERB_DENY, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				   .major = 1, .minor = 9 };
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	char cgs[2][4096];
	struct child nobody;
	uint32_t ids[64];
	int fd;

	need_v2();
	for (int i = 0; i < 2; i++)
		CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cgs[i], sizeof(cgs[i])));
	CHECK_INT(child_start(&nobody, nobody_holds_flocks, cgs), 0);
	/* control: the flock is real; the old code's LOCK_EX waited on it */
	fd = open(cgs[0], O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK(flock(fd, LOCK_EX | LOCK_NB) && errno == EWOULDBLOCK);
	close(fd);
	alarm(HANG_GUARD_S);
	/* a first install by replace, and by a first update */
	CHECK_MSG(!devcg_replace(cgs[0], a, &o, &err), "replace: %s", err.msg);
	CHECK_MSG(!devcg_update(cgs[1], &deny, NULL, &err), "deny: %s", err.msg);
	alarm(0);
	CHECK_INT(attached(cgs[0], ids), 1);
	CHECK_INT(ids[0], o.prog_id);
	CHECK_INT(attached(cgs[1], ids), 1);
	child_end(&nobody);
	devcg_policy_free(a);
}

static int root_holds_devcg_lock(void *arg)
{
	struct devcg_lock lock;

	return devcg_lock_take(DEVCG_LOCK_DIR, cgroup_id(arg), "test", &lock, NULL) ? 1 : 0;
}

/* A first install takes the lock: on an empty cgroup, a plain attach
 * names no program the kernel could compare. */
TEST(a_held_devcg_lock_ends_the_wait_with_etimedout_and_changes_nothing)
{
	struct devcg_policy *a = policy_of("deny a\nallow c 1:3 rwm\n");
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	struct child holder;
	char cg[4096], pid[32];
	uint32_t ids[64];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK_INT(child_start(&holder, root_holds_devcg_lock, cg), 0);
	alarm(HANG_GUARD_S);
	CHECK_INT(devcg_replace(cg, a, NULL, &err), -ETIMEDOUT);
	alarm(0);
	snprintf(pid, sizeof(pid), "pid %d", (int)holder.pid);
	CHECK_MSG(strstr(err.msg, DEVCG_LOCK_DIR) && strstr(err.msg, pid), "%s", err.msg);
	CHECK_INT(attached(cg, ids), 0);
	/* control: once the holder is gone, the same replace goes through */
	child_end(&holder);
	CHECK_MSG(!devcg_replace(cg, a, &o, &err), "%s", err.msg);
	CHECK_INT(attached(cg, ids), 1);
	CHECK_INT(ids[0], o.prog_id);
	devcg_policy_free(a);
}

static int try_lock(const char *dir, uint64_t id, struct devcg_error *err)
{
	struct devcg_lock lock;
	int ret = devcg_lock_take(dir, id, "test", &lock, err);

	if (!ret)
		devcg_lock_release(&lock);
	return ret;
}

TEST(the_lock_directory_is_used_only_when_root_alone_can_write_it)
{
	struct devcg_error err = { 0 };
	char base[64], ok[128], link[128], open_dir[128], others[128], file[160], out[128];
	struct stat st;

	if (geteuid() != 0)
		SKIP("needs root");
	snprintf(base, sizeof(base), "/tmp/devcg-test-%s-lock-XXXXXX", scratch_tag());
	CHECK(mkdtemp(base));
	snprintf(ok, sizeof(ok), "%s/ok", base);
	snprintf(link, sizeof(link), "%s/link", base);
	snprintf(open_dir, sizeof(open_dir), "%s/open", base);
	snprintf(others, sizeof(others), "%s/others", base);
	snprintf(out, sizeof(out), "%s/out", base);

	/* made 0700 when missing, and no lock file is left after use */
	CHECK_MSG(!try_lock(ok, 7, &err), "%s", err.msg);
	CHECK(!lstat(ok, &st) && S_ISDIR(st.st_mode) && (st.st_mode & 0777) == 0700 && st.st_uid == 0);
	snprintf(file, sizeof(file), "%s/cgroup-7.lock", ok);
	CHECK(access(file, F_OK) && errno == ENOENT);

	/* a symlink in its place */
	CHECK(!symlink(ok, link));
	CHECK_INT(try_lock(link, 7, &err), -ENOTDIR);
	CHECK(strstr(err.msg, "symlink") != NULL);
	/* writable by others */
	CHECK(!mkdir(open_dir, 0700) && !chmod(open_dir, 0777));
	CHECK_INT(try_lock(open_dir, 7, &err), -EPERM);
	CHECK(strstr(err.msg, "0777") != NULL);
	/* owned by someone else */
	CHECK(!mkdir(others, 0700) && !chown(others, 65534, 65534));
	CHECK_INT(try_lock(others, 7, &err), -EPERM);
	CHECK(strstr(err.msg, "uid 65534") != NULL);
	/* a lock file that is a symlink (O_NOFOLLOW) */
	CHECK(!mkdir(out, 0700));
	CHECK(!symlink(out, file));
	CHECK_INT(try_lock(ok, 7, &err), -ELOOP);
	/* control: the good directory still works with another id */
	CHECK_MSG(!try_lock(ok, 8, &err), "%s", err.msg);

	CHECK(!unlink(file) && !unlink(link) && !rmdir(ok) && !rmdir(open_dir) && !rmdir(others) &&
	      !rmdir(out) && !rmdir(base));
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug's first step: the container a call works on (its cgroup, a
 * process of it, its mount namespace and root). hotplug.c puts the steps
 * in order (hotplug_steps.h).
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>

/* ---- the container ------------------------------------------------------- */

void hp_target_close(struct target *t)
{
	if (t->mntns_fd >= 0)
		close(t->mntns_fd);
	if (t->root_fd >= 0)
		close(t->root_fd);
	t->mntns_fd = t->root_fd = -1;
}

/* A process of the cgroup at PATH or below (depth first): its pid, or 0. */
static int32_t pid_in(const char *path, int depth)
{
	char file[4200], buf[64];
	int32_t pid = 0;
	FILE *f;
	DIR *d;
	struct dirent *e;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	f = fopen(file, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			pid = (int32_t)strtol(buf, NULL, 10);
		fclose(f);
	}
	if (pid > 0 || depth > 16 || !(d = opendir(path)))
		return pid;
	while (!pid && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		pid = pid_in(file, depth + 1);
	}
	closedir(d);
	return pid;
}

/* Is REL (of a process) the cgroup CG or one below it? */
static bool under(const char *rel, const char *cg)
{
	size_t n = strlen(cg);

	return !strcmp(cg, "/") || (!strncmp(rel, cg, n) && (rel[n] == '\0' || rel[n] == '/'));
}

static int same_userns(int mntns_fd, bool *other)
{
	struct stat a, b;
	int fd = ioctl(mntns_fd, NS_GET_USERNS);

	*other = false;
	if (fd < 0)
		return -errno;
	if (!fstat(fd, &a) && !stat("/proc/self/ns/user", &b))
		*other = a.st_ino != b.st_ino || a.st_dev != b.st_dev;
	close(fd);
	return 0;
}

static bool same_mntns(int32_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return !stat(path, &a) && !stat("/proc/self/ns/mnt", &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

int hp_target_open(const char *cgroup, int32_t pid, struct target *t, struct devcg_error *err)
{
	struct devcg_cgroup cg = { .fd = -1 };
	char rel[4096] = "", v1[4096], path[64];
	int ret;

	memset(t, 0, sizeof(*t));
	t->mntns_fd = t->root_fd = -1;
	if (!cgroup && pid <= 0)
		return devcg_err(err, -EINVAL, "no container: give a cgroup or a process");
	if (pid > 0) {
		ret = devcg_proc_cgroup(pid, rel, sizeof(rel), v1, sizeof(v1), err);
		if (ret)
			return ret;
		if (!cgroup && !strcmp(rel, "/"))
			return devcg_err(err, -EPERM, "process %d is in the root cgroup: devcg never "
					 "attaches a program there", (int)pid);
	}
	ret = devcg_cgroup_resolve(cgroup ? cgroup : rel[0] == '/' ? rel + 1 : rel, DEVCG_RESOLVE_WRITE,
				   &cg, err);
	if (!ret) {
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", devcg_cgroup_path(&cg));
		snprintf(t->rel, sizeof(t->rel), "%s", devcg_cgroup_rel(&cg));
	}
	devcg_cgroup_close(&cg);
	if (ret)
		return ret;
	if (!strcmp(t->rel, "/"))
		return devcg_err(err, -EINVAL, "%s is the root cgroup, not a container's",
				 pid > 0 ? "the process's cgroup" : hp_q(cgroup));
	if (pid > 0 && cgroup && !under(rel, t->rel))
		return devcg_err(err, -EINVAL, "process %d is in %s, not in %s", (int)pid, hp_q(rel), hp_q(t->rel));
	if (pid <= 0) {
		pid = pid_in(t->cgroup, 0);
		if (pid <= 0)
			return devcg_err(err, -ESRCH, "%s has no process to take the mount namespace "
					 "from: give one with -p PID", hp_q(t->rel));
		ret = devcg_proc_cgroup(pid, rel, sizeof(rel), v1, sizeof(v1), err);
		if (ret)
			return ret;
	}
	if (!ret && same_mntns(pid))
		return devcg_err(err, -EINVAL, "process %d shares devcg's own mount namespace: it is "
				 "not in a container, and its nodes are the host's", (int)pid);
	/* a hybrid host: its v1 devices cgroup decides too, and gets the
	 * permission with v2's (hp_v1_perms()) */
	if (v1[0] && (ret = devcg_v1_of_pid(pid, true, t->v1, sizeof(t->v1), err)) < 0)
		return ret;
	t->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	t->mntns_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	t->root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->mntns_fd < 0 || t->root_fd < 0) {
		ret = devcg_err(err, -errno, "process %d: cannot open its mount namespace and root: %s",
				(int)pid, strerror(errno));
		hp_target_close(t);
		return ret;
	}
	/* it is still the process of that cgroup (not a new one with its pid) */
	ret = devcg_proc_cgroup(pid, rel, sizeof(rel), v1, sizeof(v1), err);
	if (!ret && !under(rel, t->rel))
		ret = devcg_err(err, -ESRCH, "process %d left %s", (int)pid, hp_q(t->rel));
	if (!ret && same_userns(t->mntns_fd, &t->other_userns))
		t->other_userns = false; /* no NS_GET_USERNS (before 4.9): assume the same */
	if (ret)
		hp_target_close(t);
	return ret;
}

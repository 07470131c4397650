// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Finding the cgroup2 mount and resolving a cgroup argument against it. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

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

int devcg_cgroup2_mount(char *buf, size_t len, struct devcg_error *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];
	int ret = -ENOENT;

	if (!f)
		return devcg_err(err, -errno, "cannot read /proc/self/mountinfo: %s", strerror(errno));
	while (ret && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *sep = strstr(line, " - "), mnt[4096];

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		unescape(mnt);
		snprintf(buf, len, "%s", mnt);
		ret = 0;
	}
	fclose(f);
	if (ret)
		return devcg_err(err, ret, "no cgroup2 file system is mounted");
	return 0;
}

/*
 * The root of the cgroup2 mount that PATH (absolute, resolved) is on: its
 * last ancestor that is still cgroup2 on the same device. Cheaper than
 * reading mountinfo, and right where several cgroup2 mounts exist.
 */
static void mount_of(const char *path, char *mount, size_t len)
{
	char cur[4096];
	struct stat st, up;
	struct statfs sfs;
	char *slash;

	snprintf(cur, sizeof(cur), "%s", path);
	snprintf(mount, len, "%s", path);
	if (stat(cur, &st))
		return;
	while ((slash = strrchr(cur, '/')) && slash != cur) {
		*slash = '\0';
		if (statfs(cur, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC || stat(cur, &up) ||
		    up.st_dev != st.st_dev)
			break;
		snprintf(mount, len, "%s", cur);
	}
}

int devcg_cgroup_resolve(const char *arg, struct devcg_cgroup *cg, struct devcg_error *err)
{
	char joined[PATH_MAX * 2];
	struct statfs sfs;
	size_t mlen;
	int ret;

	memset(cg, 0, sizeof(*cg));
	cg->fd = -1;
	if (arg[0] == '/') {
		snprintf(joined, sizeof(joined), "%s", arg);
	} else {
		ret = devcg_cgroup2_mount(cg->mount, sizeof(cg->mount), err);
		if (ret)
			return ret;
		snprintf(joined, sizeof(joined), "%s/%s", cg->mount, arg);
	}
	if (!realpath(joined, cg->path))
		return devcg_err(err, -errno, "%s: %s", arg, strerror(errno));
	if (statfs(cg->path, &sfs))
		return devcg_err(err, -errno, "%s: %s", arg, strerror(errno));
	if (sfs.f_type != CGROUP2_SUPER_MAGIC) {
		char mnt[4096] = "?";

		devcg_cgroup2_mount(mnt, sizeof(mnt), NULL);
		return devcg_err(err, -ENOTDIR,
				 "%s is not a cgroup v2 directory (cgroup2 is mounted at %s%s)", arg, mnt,
				 sfs.f_type == CGROUP_SUPER_MAGIC ? "; for cgroup v1 use --v1" : "");
	}
	mount_of(cg->path, cg->mount, sizeof(cg->mount));
	mlen = strlen(cg->mount);
	snprintf(cg->rel, sizeof(cg->rel), "%s", cg->path[mlen] ? cg->path + mlen : "/");
	cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0)
		return devcg_err(err, -errno, "%s: %s", arg, strerror(errno));
	return 0;
}

void devcg_cgroup_close(struct devcg_cgroup *cg)
{
	if (cg->fd >= 0)
		close(cg->fd);
	cg->fd = -1;
}

void devcg_mountinfo_unescape(char *s)
{
	unescape(s);
}

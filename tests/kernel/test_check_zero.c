// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Device 0:0 in the kernel: under devcg's 'deny a', a child of the cgroup
 * opens a c 0:0 node and mknods a c 0:0 node (an overlayfs whiteout) without
 * EPERM, and `devcg check` on the cgroup says allow for both. The control:
 * the same under the same policy for c 240:0 is refused, and check says so.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

static const struct scratch_node nodes[] = {
	{ "c-0-0", 'c', 0, 0 },
	{ "c-240-0", 'c', 240, 0 },
};

static char dir[256];

/* 1: open(ARG) was not refused by the device cgroup; 0: EPERM. */
static int opens(void *arg)
{
	int fd = open((const char *)arg, O_RDWR);

	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != EPERM;
}

/* 1: mknod of the char device ARG ("MAJ:MIN") was not refused; 0: EPERM. */
static int mknods(void *arg)
{
	unsigned int maj, min;
	char path[320];

	if (sscanf((const char *)arg, "%u:%u", &maj, &min) != 2)
		return 2;
	snprintf(path, sizeof(path), "%s/made-%u-%u", dir, maj, min);
	if (!mknod(path, S_IFCHR | 0600, makedev(maj, min))) {
		unlink(path);
		return 1;
	}
	return errno == EPERM ? 0 : 3;
}

/* `devcg check CG c REQUEST rwm`: its exit code. */
static int check(const char *cg, const char *dev, const char *access)
{
	const char *bin = getenv("DEVCG") ? getenv("DEVCG") : "build/devcg";
	char cmd[8192];
	int st;

	snprintf(cmd, sizeof(cmd), "%s check '%s' c %s %s >/dev/null 2>&1", bin, cg, dev, access);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void deny_all(char *cg, size_t len)
{
	struct devcg_policy *p = policy_of("deny a");
	struct devcg_error err = { 0 };

	need_v2();
	CHECK(!scratch_devdir_create(dir, sizeof(dir), nodes, 2));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, len));
	CHECK_MSG(!devcg_replace(cg, p, NULL, &err), "%s", err.msg);
	devcg_policy_free(p);
}

TEST(device_0_0_is_allowed_under_deny_a_by_the_kernel_and_by_check)
{
	char cg[4096], path[320];

	deny_all(cg, sizeof(cg));
	snprintf(path, sizeof(path), "%s/c-0-0", dir);
	CHECK_INT(scratch_run(cg, opens, path), 1);
	CHECK_INT(scratch_run(cg, mknods, "0:0"), 1);
	CHECK_INT(check(cg, "0:0", "rwm"), 0);
}

/* The control: another device under the same policy is refused, and check
 * says deny. */
TEST(device_240_0_under_deny_a_is_refused_by_the_kernel_and_by_check)
{
	char cg[4096], path[320];

	deny_all(cg, sizeof(cg));
	snprintf(path, sizeof(path), "%s/c-240-0", dir);
	CHECK_INT(scratch_run(cg, opens, path), 0);
	CHECK_INT(scratch_run(cg, mknods, "240:0"), 0);
	CHECK_INT(check(cg, "240:0", "rwm"), 1);
}

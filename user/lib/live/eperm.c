// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Why the kernel said EPERM. Missing privileges are one cause; with them,
 * an attach is also refused by the attach modes of the cgroup and its
 * ancestors (kernel/bpf/cgroup.c, __cgroup_bpf_attach() and
 * hierarchy_allows_attach()), which no capability overrides.
 */
#include "live/live.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/capability.h>

/* Outside the initial user namespace, capabilities do not reach bpf(2),
 * whatever capget() says (kernel/bpf/syscall.c checks init_user_ns). */
static bool in_user_namespace(void)
{
	FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long inside, outside, count;
	bool initial = true;

	if (!f)
		return false;
	/* the initial namespace maps all of 0..2^32-2 onto itself */
	if (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		initial = inside == 0 && outside == 0 && count == 4294967295UL;
	fclose(f);
	return !initial;
}

/* Keeps errno: callers pass -errno beside it in one call. */
const char *devcg_privilege_missing(void)
{
	const char *missing;
	int saved = errno;

	missing = devcg_caps_missing(DEVCG_CAPS_FILTER);
	if (!missing && in_user_namespace())
		missing = "permission denied (devcg needs root in the initial user namespace; this "
			  "process runs in a user namespace)";
	errno = saved;
	return missing;
}

static const char *mode_name(uint32_t mode)
{
	return mode == DEVCG_MODE_MULTI ? "multi" : mode == DEVCG_MODE_OVERRIDE ? "override" : "exclusive";
}

void devcg_attach_refusal(const struct devcg_cgroup *cg, uint32_t attach_flags, char *buf, size_t len)
{
	const char *missing = devcg_privilege_missing();
	__u32 ids[64], cnt = 64, flags = 0;
	char rel[4096], path[8192];

	if (missing) {
		snprintf(buf, len, "%s", missing);
		return;
	}
	/* the cgroup itself: programs only attach in the mode already there */
	if (!bpf_prog_query(cg->fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt) && cnt &&
	    devcg_mode_of(flags) != devcg_mode_of(attach_flags)) {
		snprintf(buf, len, "permission denied: %s has device programs in %s mode (attached "
			 "meanwhile), and the kernel attaches only in the mode already there",
			 devcg_cgroup_rel(cg), mode_name(devcg_mode_of(flags)));
		return;
	}
	/* the ancestors, nearest first: the first with a program decides */
	snprintf(rel, sizeof(rel), "%s", devcg_cgroup_rel(cg));
	while (strcmp(rel, "/")) {
		int fd;

		*strrchr(rel, '/') = '\0';
		if (!rel[0])
			strcpy(rel, "/");
		snprintf(path, sizeof(path), "%s%s", devcg_cgroup_mount(cg), strcmp(rel, "/") ? rel : "");
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			break;
		cnt = 64;
		flags = 0;
		if (bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt))
			cnt = 0;
		close(fd);
		if (flags & BPF_F_ALLOW_MULTI)
			break;
		if (cnt == 1 && !(flags & BPF_F_ALLOW_OVERRIDE)) {
			snprintf(buf, len, "permission denied: the ancestor %s has device program %u "
				 "attached in exclusive mode (neither BPF_F_ALLOW_OVERRIDE nor "
				 "BPF_F_ALLOW_MULTI), and the kernel lets no device program attach "
				 "below it", path, ids[0]);
			return;
		}
		if (cnt)
			break;
	}
	snprintf(buf, len, "permission denied by the kernel (devcg has CAP_SYS_ADMIN, and no "
		 "ancestor in view of the cgroup2 mount forbids attaching: a security module?)");
}

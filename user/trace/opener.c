// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The trace: the device behind a path an opener was refused, seen from the
 * opener (trace.h).
 */
#include "trace.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* The device behind a path an opener was refused, seen from the opener. */
static bool path_device_uncached(const struct devcg_trace_event *ev, uint32_t *type,
				 uint32_t *major, uint32_t *minor)
{
	char full[4200];
	struct stat st;

	/* seen from the opener (its root, its cwd or dirfd); when it is gone,
	 * the device stays unknown rather than guessed from our own view */
	if (ev->open.path[0] == '/')
		snprintf(full, sizeof(full), "/proc/%u/root%s", ev->pid, ev->open.path);
	else if (ev->open.dirfd == -100)
		snprintf(full, sizeof(full), "/proc/%u/cwd/%s", ev->pid, ev->open.path);
	else
		snprintf(full, sizeof(full), "/proc/%u/fd/%d/%s", ev->pid, ev->open.dirfd, ev->open.path);
	if (stat(full, &st))
		return false;
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
		return false;
	*type = S_ISCHR(st.st_mode) ? DEVCG_CHAR : DEVCG_BLOCK;
	*major = major(st.st_rdev);
	*minor = minor(st.st_rdev);
	return true;
}

/* The last answers of devcg_trace_path_device(), by path and opener: a refused opener
 * usually retries the same path, and each answer costs a stat(). */
static struct dev_cache {
	uint32_t pid;
	bool ok;
	uint32_t type, major, minor;
	char path[DEVCG_EV_PATH];
} dev_cache[64];

bool devcg_trace_path_device(const struct devcg_trace_event *ev, uint32_t *type, uint32_t *major,
			     uint32_t *minor)
{
	uint32_t h = ev->pid;
	struct dev_cache *c;
	size_t i;

	for (i = 0; i < sizeof(ev->open.path) && ev->open.path[i]; i++)
		h = h * 31 + (unsigned char)ev->open.path[i];
	c = &dev_cache[h % 64];
	if (c->pid != ev->pid || strncmp(c->path, ev->open.path, sizeof(c->path))) {
		c->pid = ev->pid;
		memcpy(c->path, ev->open.path, sizeof(c->path));
		c->ok = path_device_uncached(ev, &c->type, &c->major, &c->minor);
	}
	*type = c->type;
	*major = c->major;
	*minor = c->minor;
	return c->ok;
}

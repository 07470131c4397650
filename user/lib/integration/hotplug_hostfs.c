// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug, the host's file systems: a container directory on one of them
 * (the host's /dev, a file system the host has mounted, that of a host
 * node) is refused, since a node made or removed there would be the
 * host's. hotplug.c puts the steps in order (hotplug_steps.h).
 */
#include "hotplug_steps.h"
#include "nodes.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/*
 * A container whose directory is on the very file system of the host's
 * /dev (devtmpfs bind-mounted in, or a mount namespace without its own
 * /dev) or of the host node: making or removing a node there would change
 * the host's. Refused.
 */
/*
 * The mount point in the host's mount namespace -- init's (/proc/1) or
 * devcg's own -- of a file system of device DEV, in WHERE; false if the
 * host has none mounted. A node made on one (a container sharing the
 * host's /dev/shm, as --ipc=host does) would be the host's too.
 */
static bool host_mounted(dev_t dev, char *where, size_t size)
{
	static const char *const tables[] = { "/proc/1/mountinfo", "/proc/self/mountinfo" };
	char line[8192];
	bool found = false;

	for (size_t t = 0; t < 2 && !found; t++) {
		FILE *f = fopen(tables[t], "re");

		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f)) {
			unsigned int maj, min;
			char mnt[4096];

			/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
			if (sscanf(line, "%*s %*s %u:%u %*s %4095s", &maj, &min, mnt) == 3 &&
			    makedev(maj, min) == dev) {
				snprintf(where, size, "%s", mnt);
				found = true;
			}
		}
		fclose(f);
	}
	return found;
}



void hp_host_fs_read(const struct hp_list *items, struct host_fs *h)
{
	static const char *const tables[] = { "/proc/1/mountinfo", "/proc/self/mountinfo" };
	char line[8192];
	struct stat st;

	memset(h, 0, sizeof(*h));
	h->dev_ok = !stat("/dev", &st);
	h->dev = st.st_dev;
	h->mounted_ok = true;
	for (size_t t = 0; t < 2; t++) {
		FILE *f = fopen(tables[t], "re");

		if (!f)
			continue;
		while (h->mounted_ok && fgets(line, sizeof(line), f)) {
			unsigned int maj, min;
			dev_t *more;

			/* ID PARENT MAJ:MIN ... */
			if (sscanf(line, "%*s %*s %u:%u", &maj, &min) != 2)
				continue;
			more = realloc(h->mounted, (h->nmounted + 1) * sizeof(*more));
			if (!more) {
				h->mounted_ok = false;
				break;
			}
			h->mounted = more;
			h->mounted[h->nmounted++] = makedev(maj, min);
		}
		fclose(f);
	}
	for (size_t i = 0; i < items->n && i < HP_MAX_NODES; i++) {
		const struct hp_item *it = &items->v[i];
		char dir[PATH_MAX], *slash;

		if (it->probe || !it->host_path)
			continue;
		snprintf(dir, sizeof(dir), "%s", it->host_path);
		slash = strrchr(dir, '/');
		if (!slash)
			continue;
		*(slash == dir ? slash + 1 : slash) = '\0';
		h->dir_ok[i] = !stat(dir, &st);
		h->dir[i] = st.st_dev;
	}
}

static bool host_mounted_dev(const struct host_fs *h, dev_t dev, char *where, size_t size)
{
	size_t i;

	if (!h->mounted_ok)
		return host_mounted(dev, where, size);
	for (i = 0; i < h->nmounted && h->mounted[i] != dev; i++)
		;
	/* the mount point, for the message, from the tables again */
	if (i < h->nmounted && !host_mounted(dev, where, size))
		snprintf(where, size, "a mount of %u:%u", major(dev), minor(dev));
	return i < h->nmounted;
}

int hp_host_fs_guard(const struct hp_item *it, size_t i, const struct hp_node *n, const struct host_fs *h,
		     struct fs_seen *seen, struct devcg_error *err)
{
	char where[PATH_MAX];
	size_t k;

	if (it->probe || !n->dir_dev)
		return 0;
	for (k = 0; k < seen->n && seen->dev[k] != n->dir_dev; k++)
		;
	if (k == seen->n) {
		if (h->dev_ok && h->dev == n->dir_dev)
			return devcg_err(err, -EXDEV, "%s: the container's directory is on the host's /dev file "
					 "system: devcg does not change the host's nodes", hp_q(n->path));
		if (host_mounted_dev(h, (dev_t)n->dir_dev, where, sizeof(where)))
			return devcg_err(err, -EXDEV, "%s: the container's directory is on a file system the "
					 "host has mounted too (on %s): devcg does not change the host's nodes",
					 hp_q(n->path), hp_q(where));
		if (seen->n < HP_MAX_NODES)
			seen->dev[seen->n++] = n->dir_dev;
	}
	if (it->host_path && i < HP_MAX_NODES && h->dir_ok[i] && h->dir[i] == n->dir_dev)
		return devcg_err(err, -EXDEV, "%s: the container's directory is on the file system of "
				 "the host node %s: devcg does not change the host's nodes", hp_q(n->path),
				 hp_q(it->host_path));
	return 0;
}

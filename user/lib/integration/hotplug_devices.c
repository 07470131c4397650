// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug, the devices of a call: their paths cleaned, their numbers from
 * the host node or from CDI specs, merged by path. hotplug.c puts the
 * steps in order (hotplug_steps.h).
 */
#include "hotplug_steps.h"
#include "cdi.h"

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

/* ---- the devices of a call -------------------------------------------------- */

/* PATH made canonical in OUT: absolute, no "." or ".." or empty component. */
static int clean_path(const char *path, char *out, size_t len, struct devcg_error *err)
{
	size_t o = 0;
	const char *p = path;

	if (!path || path[0] != '/')
		return devcg_err(err, -EINVAL, "'%s': a container path must be absolute", hp_q(path));
	while (*p) {
		const char *start, *end;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		if ((end - start == 1 && start[0] == '.') || (end - start == 2 && !strncmp(start, "..", 2)))
			return devcg_err(err, -EINVAL, "'%s': no '.' or '..' in a container path", hp_q(path));
		if (o + 1 + (size_t)(end - start) + 64 >= len)
			return devcg_err(err, -ENAMETOOLONG, "'%s': too long", hp_q(path));
		out[o++] = '/';
		memcpy(out + o, start, (size_t)(end - start));
		o += (size_t)(end - start);
		p = end;
	}
	if (!o)
		return devcg_err(err, -EINVAL, "'%s' is not a path for a device node", hp_q(path));
	out[o] = '\0';
	return 0;
}

char hp_type_char(uint8_t type)
{
	return type == DEVCG_BLOCK ? 'b' : 'c';
}

/* Fill in what the host node says: numbers (unless known), mode and owner
 * (unless set). Attach needs a host node or known numbers. */
static int host_info(struct hp_item *it, bool attach, struct devcg_error *err)
{
	struct stat st;

	if (!it->host_path || stat(it->host_path, &st)) {
		int code = it->host_path ? -errno : -ENOENT;

		if (attach && !it->known && !it->probe)
			return devcg_err(err, code, "%s: %s", hp_q(it->host_path ? it->host_path : it->path),
					 strerror(-code));
		/* a node made from a spec's numbers alone: as runtimes default it */
		if (!(it->set & DEVCG_HOTPLUG_SET_MODE))
			it->mode = 0666;
		if (attach && !it->probe) {
			free(it->host_path);
			it->host_path = NULL;
		}
		return 0;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		if (it->probe)
			return 0;
		return devcg_err(err, -EINVAL, "%s is not a device node", hp_q(it->host_path));
	}
	if (!it->known) {
		it->known = true;
		it->type = S_ISBLK(st.st_mode) ? DEVCG_BLOCK : DEVCG_CHAR;
		it->major = major(st.st_rdev);
		it->minor = minor(st.st_rdev);
	}
	if (!(it->set & DEVCG_HOTPLUG_SET_MODE))
		it->mode = st.st_mode & 07777;
	if (!(it->set & DEVCG_HOTPLUG_SET_UID))
		it->uid = st.st_uid;
	if (!(it->set & DEVCG_HOTPLUG_SET_GID))
		it->gid = st.st_gid;
	return 0;
}

/* The items of a call: DEVICES, then the CDI devices' nodes (with the other
 * devices of their specs as probes, for detach); one item per path. */
int hp_collect(const struct devcg_hotplug_device *devices, size_t count,
		   const struct devcg_hotplug_opts *opts, bool attach, struct hp_list *items,
		   struct devcg_error *err)
{
	const char *const *cdi = DEVCG_OPT(opts, devcg_hotplug_opts, cdi, NULL);
	const char *const *dirs = DEVCG_OPT(opts, devcg_hotplug_opts, cdi_spec_dirs, NULL);
	uint8_t access = DEVCG_OPT(opts, devcg_hotplug_opts, access, 0);
	size_t i, k;
	int ret = 0;

	if (access & ~DEVCG_ACC_ALL)
		return devcg_err(err, -EINVAL, "bad access 0x%x", access);
	for (i = 0; i < count; i++) {
		struct hp_item it = { 0 };

		if (!devices[i].host_path)
			return devcg_err(err, -EINVAL, "device %zu has no host path", i);
		if (devices[i].access & ~DEVCG_ACC_ALL)
			return devcg_err(err, -EINVAL, "%s: bad access 0x%x", hp_q(devices[i].host_path),
					 devices[i].access);
		it.host_path = (char *)devices[i].host_path;
		it.path = (char *)(devices[i].path ? devices[i].path : devices[i].host_path);
		it.access = devices[i].access ? devices[i].access : access ? access : DEVCG_ACC_ALL;
		it.set = devices[i].set & 7;
		it.mode = devices[i].mode & 07777;
		it.uid = devices[i].uid;
		it.gid = devices[i].gid;
		if (hp_list_add(items, &it))
			return devcg_err(err, -ENOMEM, "out of memory");
	}
	ret = hp_cdi_resolve(cdi, dirs, !attach, items, err);
	for (i = 0; !ret && i < items->n; i++) {
		struct hp_item *it = &items->v[i];
		char clean[PATH_MAX];

		ret = clean_path(it->path, clean, sizeof(clean), err);
		if (!ret) {
			free(it->path);
			it->path = strdup(clean);
			ret = it->path ? 0 : devcg_err(err, -ENOMEM, "out of memory");
		}
		if (!ret)
			ret = host_info(it, attach, err);
	}
	/* one item per path: the same device twice merges, two devices conflict */
	for (i = 0; !ret && i < items->n; i++) {
		for (k = i + 1; k < items->n;) {
			struct hp_item *a = &items->v[i], *b = &items->v[k];

			if (strcmp(a->path, b->path) || a->probe != b->probe) {
				k++;
				continue;
			}
			if (a->known && b->known &&
			    (a->type != b->type || a->major != b->major || a->minor != b->minor))
				return devcg_err(err, -EINVAL, "%s is named twice, for %c %u:%u and %c %u:%u",
						 hp_q(a->path), hp_type_char(a->type), a->major, a->minor,
						 hp_type_char(b->type), b->major, b->minor);
			a->access |= b->access;
			a->no_access &= b->no_access;
			a->common &= b->common;
			if (!a->note) {
				a->note = b->note;
				b->note = NULL;
			}
			hp_item_free(b);
			memmove(b, b + 1, (items->n - k - 1) * sizeof(*b));
			items->n--;
		}
	}
	if (!ret && items->n > HP_MAX_NODES)
		ret = devcg_err(err, -E2BIG, "%zu device nodes in one command (at most %d)", items->n,
				HP_MAX_NODES);
	if (!ret && !items->n)
		ret = devcg_err(err, -EINVAL, "no device given");
	/* What attach takes, detach must be able to take back: detach also
	 * looks at the other devices of the CDI specs, and those count. */
	if (!ret && attach && cdi && cdi[0]) {
		struct hp_list back = { 0 };

		ret = hp_collect(devices, count, opts, false, &back, err);
		hp_list_free(&back);
		if (ret == -E2BIG)
			devcg_err_wrap(err, ret, "refused: detach could not take these devices back, since it "
				       "also looks at the other devices of their CDI specs");
	}
	return ret;
}

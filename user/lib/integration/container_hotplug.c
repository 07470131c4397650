// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug by container ID (devcg_hotplug_opts.container): the container's
 * pid and cgroup come from its state (devcg_container_find(), checked
 * live), the attach or detach runs as given a pid, and what it changed is
 * recorded in the state under the container's lock, held throughout, so
 * that devcg_container_updated() and a restarted agent put back what was
 * attached, and never what was detached: a detached device leaves the
 * hot-plugged list, and its own exception leaves the container's baseline
 * policy too (detach means "the container shall not have this device").
 */
#include "integration/container.h"
#include "integration/hotplug_steps.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Record what R did in S. */
static int record(struct ctr_state *s, const struct devcg_hotplug_result *r, bool attach,
		  struct devcg_error *err)
{
	for (size_t i = 0; i < r->count; i++) {
		const struct devcg_hotplug_entry *e = &r->entries[i];
		const struct devcg_exception ex = { .type = e->type, .access = e->access,
						    .major = e->major, .minor = e->minor };
		struct perm k = { .type = e->type, .major = e->major, .minor = e->minor };
		struct perms ps = { .v = &k, .n = 1 };
		int ret;

		if (attach && (e->permission == DEVCG_PERM_ADDED || e->permission == DEVCG_PERM_ALREADY) &&
		    e->access && ctr_state_hot_add(s, &ex))
			return devcg_err(err, -ENOMEM, "out of memory");
		if (attach || e->permission == DEVCG_PERM_KEPT)
			continue;
		ctr_state_hot_remove(s, e->type, e->major, e->minor);
		/* (1: the baseline had no exception of its own for it) */
		ret = hp_edit_detach(s->baseline, &ps, err);
		if (ret < 0)
			return ret;
	}
	return 0;
}

static int by_container(bool attach, const struct devcg_hotplug_device *devices, size_t count,
		    const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
		    struct devcg_error *err)
{
	const char *id = opts->container;
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_hotplug_opts o;
	struct ctr_state s = { 0 };
	struct devcg_error e2 = { 0 };
	char cgroup[4096];
	int32_t pid = 0;
	int ret;

	if (result)
		*result = NULL;
	if ((ret = DEVCG_OPTS_VALID(opts, devcg_hotplug_opts, state_dir, err)))
		return ret;
	/* the caller's options as this library's struct (none past it is set) */
	memset(&o, 0, sizeof(o));
	memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	o.sz = sizeof(o);
	if (o.pid)
		return devcg_err(err, -EINVAL, "a container by its id and a pid: give one of them");
	ret = ctr_id_check(id, err);
	if (!ret)
		ret = ctr_dir_open(o.state_dir, false, &d, err);
	if (!ret)
		ret = ctr_dir_lock(&d, id, err);
	if (!ret)
		ret = devcg_container_find(id, o.state_dir, &pid, cgroup, sizeof(cgroup), err);
	if (!ret && (ret = ctr_state_load(&d, id, &s, err)) == -ENOENT)
		devcg_err(err, ret, "container %s: its state is gone", id);
	if (ret) {
		ctr_dir_close(&d);
		return ret;
	}
	o.container = NULL;
	o.state_dir = NULL;
	o.pid = pid;
	ret = attach ? hp_attach(cgroup, devices, count, &o, &r, err)
		     : hp_detach(cgroup, devices, count, &o, &r, err);
	if (!ret) {
		ret = record(&s, r, attach, &e2);
		if (!ret) {
			if (r->prog_id)
				s.prog_id = r->prog_id;
			ret = ctr_state_save(&d, &s, &e2);
		}
		/* the change is made: the state is what failed */
		if (ret)
			devcg_err(err, ret, "container %s: %s done, but recording it in its state failed (%s): "
				  "an update of the container may undo it", id, attach ? "attach" : "detach", e2.msg);
	}
	ctr_state_clear(&s);
	ctr_dir_close(&d);
	if (!ret && result)
		*result = r;
	else
		devcg_hotplug_result_free(r);
	return ret;
}

int devcg_attach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
		 const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
		 struct devcg_error *err)
{
	if (!DEVCG_OPT(opts, devcg_hotplug_opts, container, NULL))
		return hp_attach(cgroup, devices, count, opts, result, err);
	if (result)
		*result = NULL;
	if (cgroup && cgroup[0])
		return devcg_err(err, -EINVAL, "a container by its id and a cgroup: give one of them");
	return by_container(true, devices, count, opts, result, err);
}

int devcg_detach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
		 const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
		 struct devcg_error *err)
{
	if (!DEVCG_OPT(opts, devcg_hotplug_opts, container, NULL))
		return hp_detach(cgroup, devices, count, opts, result, err);
	if (result)
		*result = NULL;
	if (cgroup && cgroup[0])
		return devcg_err(err, -EINVAL, "a container by its id and a cgroup: give one of them");
	return by_container(false, devices, count, opts, result, err);
}

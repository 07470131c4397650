// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reset: every devcg filter of a cgroup detached (devcg reset), under
 * the cgroup's lock (lock.c).
 */
#include "live/attached.h"

#include <errno.h>
#include <stdio.h>

/*
 * Detach every devcg filter of the cgroup, under the lock, until a query
 * finds none (a writer that swapped in multi mode meanwhile, without the
 * lock, may have put a new one in place). A filter that hangs on a
 * bpf_link of another process (an older devcg updated such links) can
 * only be removed by detaching that link; its holder keeps a link that is
 * attached to nothing.
 */
int devcg_reset_opts(const char *cgroup, struct devcg_reset_opts *opts, struct devcg_error *err)
{
	struct devcg_lock lock = { .fd = -1 };
	uint32_t i, found = 1, removed = 0, links = 0;
	struct devcg_cgroup cg;
	struct attached a;
	int ret, round;

	if ((ret = DEVCG_RESET_OPTS_VALID(opts, err)))
		return ret;
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_WRITE, &cg, err);
	if (!ret)
		ret = devcg_lock_cgroup(&cg, &lock, err);
	for (round = 0; !ret && found && round < 10; round++) {
		ret = devcg_query_attached(cg.fd, true, &a, err);
		if (ret)
			break;
		for (found = 0, i = 0; i < a.n; i++) {
			if (!a.devcg[i])
				continue;
			found++;
			ret = devcg_detach_one(cg.fd, cg.ino, &a, i);
			if (ret < 0) {
				ret = devcg_err(err, ret, "cannot detach program %u from %s: %s%s", a.ids[i],
						devcg_cgroup_rel(&cg), devcg_why(ret, DEVCG_CAPS_FILTER),
						removed ? " (other devcg filters were removed)" : "");
				break;
			}
			removed += ret != DETACHED_NONE;
			links += ret == DETACHED_LINK;
			ret = 0;
		}
		devcg_attached_close(&a);
	}
	if (!ret && found)
		ret = devcg_err(err, -EAGAIN, "%s: other writers kept attaching devcg filters", devcg_cgroup_rel(&cg));
	devcg_lock_release(&lock);
	if (!ret && opts && DEVCG_OPTS_HAS(opts, devcg_reset_opts, cgroup))
		snprintf(opts->cgroup, sizeof(opts->cgroup), "%s", devcg_cgroup_rel(&cg));
	devcg_cgroup_close(&cg);
	if (ret)
		return ret;
	if (opts && DEVCG_OPTS_HAS(opts, devcg_reset_opts, links_detached)) {
		opts->removed = removed;
		opts->links_detached = links;
	}
	return (int)removed;
}

int devcg_reset(const char *cgroup, struct devcg_error *err)
{
	return devcg_reset_opts(cgroup, NULL, err);
}

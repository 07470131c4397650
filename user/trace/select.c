// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The trace's --cgroup: which cgroups' events and audit rings a trace of a
 * cgroup reads (trace.h).
 */
#include "trace.h"
#include "internal.h"

#include <stdio.h>
#include <string.h>

/* Is PATH (relative to its hierarchy) FILTER or below it? */
bool devcg_trace_under(const char *path, const char *filter)
{
	size_t n;

	if (!filter)
		return true;
	if (!path)
		return false;
	n = strlen(filter);
	while (n > 1 && filter[n - 1] == '/')
		n--;
	return !strncmp(path, filter, n) && (path[n] == '\0' || path[n] == '/' || n == 1);
}

bool devcg_trace_related(const char *cgroup, const char *path)
{
	return !cgroup || devcg_trace_under(path, cgroup) || devcg_trace_under(cgroup, path);
}

struct follow {
	struct devcg_tracer *tracer;
	struct devcg_cgpaths *paths;
	const char *cgroup;
	devcg_trace_cb cb;
	void *ctx;
};

static int follow_one(void *ctx, uint64_t id, const char *path)
{
	struct follow *f = ctx;
	struct devcg_state *state;
	char full[8192];
	size_t i;

	(void)id;
	snprintf(full, sizeof(full), "%s%s", devcg_cgpaths_mount(f->paths, DEVCG_H_V2),
		 strcmp(path, "/") ? path : "");
	if (devcg_state_read_programs(full, &state, NULL))
		return 0;
	for (i = 0; i < devcg_state_count(state); i++) {
		const struct devcg_program *p = devcg_state_program(state, i);

		if (p->devcg && p->audit && !strcmp(p->cgroup, path) && devcg_trace_related(f->cgroup, path))
			devcg_tracer_follow_audit(f->tracer, p->id, f->cb, f->ctx);
	}
	devcg_state_free(state);
	return 0;
}

void devcg_trace_follow_existing(struct devcg_tracer *t, struct devcg_cgpaths *paths, const char *cgroup,
				 devcg_trace_cb cb, void *ctx)
{
	struct follow f = { .tracer = t, .paths = paths, .cgroup = cgroup, .cb = cb, .ctx = ctx };

	devcg_cgpaths_each(paths, DEVCG_H_V2, follow_one, &f);
}

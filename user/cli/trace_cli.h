/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* devcg trace in the CLI: the session trace.c runs and trace_summary.c
 * sums up. */
#ifndef DEVCG_TRACE_CLI_H
#define DEVCG_TRACE_CLI_H

#include "cli.h"
#include "service.h"
#include "trace.h"

enum only { ONLY_ALL, ONLY_GAP, ONLY_REVOKE, ONLY_WRITES, ONLY_DENIALS };

struct session {
	struct cli *cli;
	struct devcg_tracer *tracer;
	struct devcg_cgpaths *paths;
	struct devcg_gaps *gaps;
	struct devcg_revokes *revokes;
	uint64_t start_ns;
	enum only only;
	long pid;
	const char *comm;
	const char *cgroup; /* --cgroup, relative to its hierarchy's root */
	char cgroup_rel[4096];
	/* what was shown, and what was seen (all cgroups and processes) */
	uint64_t counts[7], seen[7];
	/* events wait here until they are REORDER_NS old, so that those of
	 * the two rings and the audit rings are handled in time order */
	struct devcg_trace_queue queue;
	/* programs to follow once the ring buffer is not being read */
	uint32_t follow[64];
	int nfollow;
	struct devcg_trace_losses lost;
	/* --metrics FILE, --journal: the service's (user/trace/service.h) */
	struct devcg_metrics *metrics;
	bool journal;
};

#define REORDER_NS 20000000ull

enum { N_WRITE, N_BPF, N_OPEN, N_DEVICE, N_GAP, N_REVOKE, N_TOTAL };
/* The names of the kinds above, as JSON and the summary say them. */
extern const char *const trace_type_names[];

/* CLOCK_MONOTONIC now, in ns: the clock of every event's ts_ns. */
uint64_t trace_mono_ns(void);
/* The summary of session S after ELAPSED ns; with STATS, each trace
 * program's run count and time. */
void trace_summary(struct session *s, uint64_t elapsed, bool stats);

#endif

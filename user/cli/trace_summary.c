// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg trace: the summary that ends a trace (trace_cli.h). */
#include "cli.h"
#include "trace.h"
#include "trace_cli.h"

#include <stdio.h>
#include <unistd.h>

/* The summary, in text and JSON alike: every number is taken once, here.
 * The counts are of what was shown; "seen" counts every event the trace
 * read, of all cgroups and processes, before --cgroup, --pid, --comm and
 * --only. */
void trace_summary(struct session *s, uint64_t elapsed, bool stats)
{
	const struct devcg_trace_losses *l = &s->lost;
	uint64_t lost = l->ringbuf + l->read + l->audit, events = 0;
	bool filtered = s->cgroup || s->pid >= 0 || s->comm || s->only != ONLY_ALL;
	struct devcg_prog_stats st[16];
	int n = stats ? devcg_tracer_stats(s->tracer, st, 16) : 0, i;
	double rate;

	for (i = 0; i < N_GAP; i++)
		events += s->counts[i];
	rate = elapsed ? (double)events * 1e9 / (double)elapsed : 0.0;
	if (s->cli->json) {
		json_t *by = json_object(), *seen = json_object(), *o;

		for (i = 0; i < N_TOTAL; i++) {
			json_object_set_new(by, trace_type_names[i], json_integer((json_int_t)s->counts[i]));
			json_object_set_new(seen, trace_type_names[i], json_integer((json_int_t)s->seen[i]));
		}
		o = json_pack("{s:s, s:I, s:i, s:s, s:I, s:o, s:I, s:I, s:o, s:{s:I, s:I, s:I, s:I}, s:I, s:f}",
			      "type", "summary", "ts_ns", (json_int_t)trace_mono_ns(), "pid", (int)getpid(),
			      "comm", "devcg", "duration_ns", (json_int_t)elapsed, "events", by, "gaps",
			      (json_int_t)s->counts[N_GAP], "revokes", (json_int_t)s->counts[N_REVOKE],
			      "seen", seen,
			      "lost", "total", (json_int_t)lost, "ringbuf",
			      (json_int_t)l->ringbuf, "read", (json_int_t)l->read, "audit",
			      (json_int_t)l->audit, "audit_before_start", (json_int_t)l->audit_before_start,
			      "events_per_second", rate);
		if (stats) {
			json_t *progs = json_array();

			for (i = 0; i < n; i++)
				json_array_append_new(progs, json_pack("{s:s, s:I, s:I, s:f}", "program", st[i].name,
								       "run_cnt", (json_int_t)st[i].run_cnt,
								       "run_time_ns", (json_int_t)st[i].run_time_ns,
								       "avg_ns", st[i].run_cnt ? (double)st[i].run_time_ns /
									       (double)st[i].run_cnt : 0.0));
			json_object_set_new(o, "programs", progs);
		}
		cli_print_json(o);
		return;
	}
	/* after the events on standard output, when both go to one file */
	fflush(stdout);
	fprintf(stderr, "-- %.3f s: %s", (double)elapsed / 1e9, filtered ? "shown: " : "");
	for (i = 0; i < N_GAP; i++)
		fprintf(stderr, "%s%s %llu", i ? ", " : "", trace_type_names[i], (unsigned long long)s->counts[i]);
	fprintf(stderr, "; gaps %llu; revokes %llu", (unsigned long long)s->counts[N_GAP],
		(unsigned long long)s->counts[N_REVOKE]);
	if (filtered) {
		fprintf(stderr, "; seen (all cgroups and processes): ");
		for (i = 0; i < N_GAP; i++)
			fprintf(stderr, "%s%s %llu", i ? ", " : "", trace_type_names[i], (unsigned long long)s->seen[i]);
		fprintf(stderr, ", gaps %llu, revokes %llu", (unsigned long long)s->seen[N_GAP],
			(unsigned long long)s->seen[N_REVOKE]);
	}
	fprintf(stderr, "; lost %llu (ring buffer %llu, reads %llu, audit %llu); "
		"audit denials from before the start skipped %llu; %.0f events/s\n",
		(unsigned long long)lost,
		(unsigned long long)l->ringbuf, (unsigned long long)l->read,
		(unsigned long long)l->audit, (unsigned long long)l->audit_before_start, rate);
	for (i = 0; i < n; i++)
		fprintf(stderr, "   %-28s runs %10llu  time %12llu ns  avg %8.1f ns\n", st[i].name,
			(unsigned long long)st[i].run_cnt, (unsigned long long)st[i].run_time_ns,
			st[i].run_cnt ? (double)st[i].run_time_ns / (double)st[i].run_cnt : 0.0);
}

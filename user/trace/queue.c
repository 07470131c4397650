// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The trace's reordering queue: events of the two rings and the audit
 * rings wait here and are handed on in time order (trace.h).
 */
#include "trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int devcg_trace_queue_push(struct devcg_trace_queue *q, const struct devcg_trace_event *ev,
			   const struct devcg_audit_event *a)
{
	struct devcg_trace_pending *p;

	if (q->n == q->cap) {
		size_t cap = q->cap ? q->cap * 2 : 1024;

		p = realloc(q->v, cap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		q->v = p;
		q->cap = cap;
	}
	p = &q->v[q->n++];
	p->audit = a != NULL;
	if (a) {
		p->a = *a;
		p->ts = a->ts_ns;
	} else {
		p->ev = *ev;
		p->ts = ev->ts_ns;
	}
	return 0;
}

static int by_time(const void *x, const void *y)
{
	const struct devcg_trace_pending *a = x, *b = y;

	return a->ts < b->ts ? -1 : a->ts > b->ts;
}

void devcg_trace_queue_drain(struct devcg_trace_queue *q, uint64_t before_ns,
			     void (*fn)(void *ctx, const struct devcg_trace_event *ev,
					const struct devcg_audit_event *a),
			     void *ctx)
{
	size_t i, n = 0;

	qsort(q->v, q->n, sizeof(*q->v), by_time);
	while (n < q->n && (!before_ns || q->v[n].ts < before_ns))
		n++;
	for (i = 0; i < n; i++)
		fn(ctx, q->v[i].audit ? NULL : &q->v[i].ev, q->v[i].audit ? &q->v[i].a : NULL);
	memmove(q->v, q->v + n, (q->n - n) * sizeof(*q->v));
	q->n -= n;
}

void devcg_trace_queue_free(struct devcg_trace_queue *q)
{
	free(q->v);
	memset(q, 0, sizeof(*q));
}

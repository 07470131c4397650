// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * From raw trace events to permission gaps, per cgroup:
 * - cgroup v1: a successful "a" written to devices.deny opens a window in
 *   which every device is refused; the writes that follow replay the allow
 *   list, and the window closes when that burst of writes ends (no write to
 *   the cgroup for BURST_NS). EPERM opens by tasks of that devices cgroup
 *   inside the window are its victims. A write of FROZEN to freezer.state
 *   of the same path just before says whether the workload was frozen.
 * - cgroup v2: the device programs attached to each cgroup are followed
 *   from bpf(2) events (seeded by a query at start); a detach that leaves
 *   none opens a window with no filter, the next attach closes it.
 */
#include "internal.h"
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define BURST_NS 100000000ull /* a pause in writes that ends a replay */
/* An open refused inside a window returns, and is stamped, a little later.
 * Where the kernel's check itself is hooked (fentry, kprobes), the refused
 * open is placed at its check instead: the same task's latest denied check
 * (one is kept per task) of the open's own device, at most CHECK_AGE_NS
 * before the open returned. */
#define LATE_NS 2000000ull
#define CHECK_AGE_NS 1000000000ull
#define MAX_CHECKS 64
#define FREEZE_LOOKBACK_NS 2000000000ull
#define MAX_PROGS 64

/* Denials seen after the last write of an open window: they join it only
 * if another write follows (the window was still being replayed). */
struct tentative {
	uint64_t denied, first_ns, last_ns;
	uint32_t ndevices;
	struct { uint32_t type, major, minor; } devices[DEVCG_GAP_MAX_DEVICES];
};

struct window {
	struct devcg_gap gap;
	struct tentative later;
	bool open;
	uint64_t last_ns; /* the last write (v1) or change (v2) */
	/* v1: the devices list as the window's writes have left it (deny all,
	 * then each rule replayed); NULL when not known */
	struct devcg_policy *list;
	uint64_t lost_at_start;
	/* v2: the device programs attached */
	uint32_t progs[MAX_PROGS];
	uint32_t nprogs;
};

static void extend(struct window *w, uint64_t ts);

struct freeze {
	char path[512];
	uint64_t ts;
	int64_t ret;
	bool frozen;
};

struct devcg_gaps {
	struct devcg_cgpaths *paths;
	devcg_gap_cb cb;
	void *ctx;
	struct window *v1, *v2;
	size_t n1, n2;
	struct freeze *freezes;
	size_t nfreeze;
	uint64_t lost;
	/* the latest denied check (DEVCG_EV_DEV_CHECK) of up to MAX_CHECKS
	 * tasks, a ring */
	struct { uint32_t tid, type, major, minor, access; uint64_t ts; } checks[MAX_CHECKS];
	size_t next_check;
};

struct devcg_gaps *devcg_gaps_new(struct devcg_cgpaths *paths, devcg_gap_cb cb, void *ctx)
{
	struct devcg_gaps *g = calloc(1, sizeof(*g));

	if (g) {
		g->paths = paths;
		g->cb = cb;
		g->ctx = ctx;
	}
	return g;
}

void devcg_gaps_free(struct devcg_gaps *g)
{
	size_t i;

	if (!g)
		return;
	for (i = 0; i < g->n1; i++)
		devcg_policy_free(g->v1[i].list);
	free(g->v1);
	free(g->v2);
	free(g->freezes);
	free(g);
}

static struct window *window_of(struct devcg_gaps *g, bool v2, uint64_t id)
{
	struct window **v = v2 ? &g->v2 : &g->v1, *w;
	size_t *n = v2 ? &g->n2 : &g->n1, i;
	const char *path;

	for (i = 0; i < *n; i++)
		if ((*v)[i].gap.cgroup_id == id)
			return &(*v)[i];
	w = realloc(*v, (*n + 1) * sizeof(*w));
	if (!w)
		return NULL;
	*v = w;
	w = memset(&w[(*n)++], 0, sizeof(*w));
	w->gap.cgroup_id = id;
	w->gap.kind = v2 ? DEVCG_GAP_V2_NO_FILTER : DEVCG_GAP_V1_DENY_ALL;
	path = devcg_cgpaths_lookup(g->paths, v2 ? DEVCG_H_V2 : DEVCG_H_DEVICES, id);
	snprintf(w->gap.cgroup, sizeof(w->gap.cgroup), "%s", path ? path : "?");
	return w;
}

static void open_window(struct window *w, const struct devcg_trace_event *ev, uint64_t start,
			uint64_t lost)
{
	struct devcg_gap *gap = &w->gap;

	w->open = true;
	w->last_ns = ev->ts_exit_ns;
	w->lost_at_start = lost;
	gap->writer_pid = ev->pid;
	gap->writer_ppid = ev->ppid;
	memcpy(gap->writer_comm, ev->comm, sizeof(gap->writer_comm));
	memcpy(gap->writer_pcomm, ev->pcomm, sizeof(gap->writer_pcomm));
	gap->writer_comm[15] = gap->writer_pcomm[15] = '\0';
	gap->start_ns = start;
	gap->end_ns = 0;
	gap->rules = 0;
	gap->denied = gap->first_denied_ns = gap->last_denied_ns = 0;
	gap->ndevices = 0;
	gap->lost = false;
	memset(&w->later, 0, sizeof(w->later));
	devcg_policy_free(w->list);
	w->list = NULL;
	if (gap->kind == DEVCG_GAP_V1_DENY_ALL) {
		w->list = devcg_policy_new();
		if (w->list && devcg_policy_set(w->list, false, NULL, 0, NULL) < 0) {
			devcg_policy_free(w->list);
			w->list = NULL;
		}
	}
}

/* A successful write of EV to devices.allow or devices.deny inside window
 * W, applied to the list the window's writes have built; a write that
 * cannot be read whole makes the list unknown. */
static void replay_write(struct window *w, const struct devcg_trace_event *ev)
{
	struct devcg_parse_opts opts = { .sz = sizeof(opts) };
	struct devcg_rules *rules;
	struct devcg_error err;
	bool ok;

	if (!w->list)
		return;
	opts.verb = ev->write.file == DEVCG_FILE_DEVICES_ALLOW ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
	rules = devcg_rules_new();
	ok = rules && !(ev->flags & DEVCG_EVF_TRUNCATED) &&
	     devcg_rules_parse(rules, ev->write.data, strnlen(ev->write.data, sizeof(ev->write.data)),
			       "devices write", &opts, &err) >= 0 &&
	     devcg_policy_apply_all(w->list, rules, &err) >= 0;
	devcg_rules_free(rules);
	if (!ok) {
		devcg_policy_free(w->list);
		w->list = NULL;
	}
}

/* Whether the list window W's writes have left allows request TYPE
 * MAJOR:MINOR ACCESS (no when either is not known). */
static bool list_allows(const struct window *w, uint32_t type, uint32_t major, uint32_t minor,
			uint32_t access)
{
	bool decided;

	return w->list && type && access &&
	       devcg_policy_check(w->list, (uint8_t)type, major, minor, (uint8_t)access, NULL, &decided) == 1;
}

static const char *freeze_state(struct devcg_gaps *g, const struct devcg_gap *gap)
{
	const struct freeze *best = NULL;
	size_t i;

	if (!devcg_cgpaths_mount(g->paths, DEVCG_H_FREEZER))
		return "not traced";
	for (i = 0; i < g->nfreeze; i++) {
		const struct freeze *f = &g->freezes[i];

		if (strcmp(f->path, gap->cgroup) || f->ts > gap->start_ns ||
		    f->ts + FREEZE_LOOKBACK_NS < gap->start_ns)
			continue;
		if (!best || f->ts > best->ts)
			best = f;
	}
	/* the last freezer write before the window decides; THAWED means none */
	if (!best || !best->frozen)
		return "none";
	return best->ret < 0 ? "failed" : "frozen";
}

static void close_window(struct devcg_gaps *g, struct window *w, uint64_t end)
{
	w->open = false;
	w->gap.end_ns = end > w->gap.start_ns ? end : w->gap.start_ns;
	w->gap.lost = g->lost != w->lost_at_start;
	w->gap.freeze = w->gap.kind == DEVCG_GAP_V1_DENY_ALL ? freeze_state(g, &w->gap) : "none";
	if (g->cb)
		g->cb(g->ctx, &w->gap);
}

static void record_freeze(struct devcg_gaps *g, const struct devcg_trace_event *ev)
{
	const char *path = devcg_cgpaths_lookup(g->paths, DEVCG_H_FREEZER, ev->write.target);
	struct freeze *f;
	size_t i, n = 0;

	if (!path)
		return;
	/* only the last FREEZE_LOOKBACK_NS can matter to a window */
	for (i = 0; i < g->nfreeze; i++)
		if (g->freezes[i].ts + FREEZE_LOOKBACK_NS >= ev->ts_ns)
			g->freezes[n++] = g->freezes[i];
	g->nfreeze = n;
	f = realloc(g->freezes, (g->nfreeze + 1) * sizeof(*f));
	if (!f)
		return;
	g->freezes = f;
	f = &f[g->nfreeze++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->ts = ev->ts_ns;
	f->ret = ev->ret;
	f->frozen = !strncmp(ev->write.data, "FROZEN", 6);
}

static void feed_write(struct devcg_gaps *g, const struct devcg_trace_event *ev)
{
	struct window *w;

	if (ev->write.file == DEVCG_FILE_FREEZER_STATE) {
		record_freeze(g, ev);
		return;
	}
	w = window_of(g, false, ev->write.target);
	if (!w)
		return;
	if (ev->write.file == DEVCG_FILE_DEVICES_DENY && ev->write.data[0] == 'a' && ev->ret >= 0) {
		/* device_cgroup.c: 'a' on devices.deny cleans the list and denies all */
		if (w->open)
			close_window(g, w, w->last_ns);
		open_window(w, ev, ev->ts_ns, g->lost);
		return;
	}
	if (w->open) {
		w->gap.rules++;
		if (ev->ret >= 0)
			replay_write(w, ev);
		extend(w, ev->ts_exit_ns);
	}
}

static void add_device(uint32_t *n, void *devices, uint32_t type, uint32_t major, uint32_t minor)
{
	struct { uint32_t type, major, minor; } *d = devices;
	uint32_t i;

	if (!type)
		return;
	for (i = 0; i < *n; i++)
		if (d[i].type == type && d[i].major == major && d[i].minor == minor)
			return;
	if (*n < DEVCG_GAP_MAX_DEVICES) {
		d[*n].type = type;
		d[*n].major = major;
		d[(*n)++].minor = minor;
	}
}

/* A refused open of TYPE MAJOR:MINOR for ACCESS (0: not known), refused at
 * TS. One stamped past LATE_NS after the last write is tentative, unless
 * the list the window's writes have left grants that very request: the v1
 * list could not have refused it after those writes, so it was refused in
 * the window and stamped late (its CPU taken away between the check and
 * the stamp: a virtual CPU of a loaded host, an interrupt). */
static void count_denied(struct window *w, uint64_t ts, uint32_t type, uint32_t major, uint32_t minor,
			 uint32_t access)
{
	struct devcg_gap *gap = &w->gap;

	if (!w->open || ts < gap->start_ns)
		return;
	if (ts > w->last_ns + LATE_NS && !list_allows(w, type, major, minor, access)) {
		struct tentative *t = &w->later;

		if (!t->denied++)
			t->first_ns = ts;
		t->last_ns = ts;
		add_device(&t->ndevices, t->devices, type, major, minor);
		return;
	}
	if (!gap->denied++)
		gap->first_denied_ns = ts;
	gap->last_denied_ns = ts;
	add_device(&gap->ndevices, gap->devices, type, major, minor);
}

/* Another write to an open window: the denials since its last one were
 * inside it after all. */
static void extend(struct window *w, uint64_t ts)
{
	struct tentative *t = &w->later;
	struct devcg_gap *gap = &w->gap;
	uint32_t i;

	if (t->denied) {
		if (!gap->denied)
			gap->first_denied_ns = t->first_ns;
		gap->denied += t->denied;
		gap->last_denied_ns = t->last_ns;
		for (i = 0; i < t->ndevices; i++)
			add_device(&gap->ndevices, gap->devices, t->devices[i].type, t->devices[i].major,
				   t->devices[i].minor);
		memset(t, 0, sizeof(*t));
	}
	w->last_ns = ts;
}

static void prog_remove(uint32_t *progs, uint32_t *n, uint32_t id)
{
	uint32_t i;

	for (i = 0; i < *n; i++) {
		if (progs[i] == id) {
			progs[i] = progs[--*n];
			return;
		}
	}
}

static void prog_add(uint32_t *progs, uint32_t *n, uint32_t max, uint32_t id)
{
	if (id && *n < max)
		progs[(*n)++] = id;
}

void devcg_trace_progs_apply(uint32_t *progs, uint32_t *n, uint32_t max,
			     const struct devcg_trace_event *ev)
{
	switch (ev->bpf.cmd) {
	case DEVCG_CMD_PROG_ATTACH:
		if (ev->bpf.replace_id)
			prog_remove(progs, n, ev->bpf.replace_id);
		else if (!(ev->bpf.attach_flags & BPF_F_ALLOW_MULTI))
			*n = 0; /* override or exclusive: replaced in place */
		prog_add(progs, n, max, ev->bpf.prog_id);
		break;
	case DEVCG_CMD_LINK_CREATE:
		prog_add(progs, n, max, ev->bpf.prog_id);
		break;
	case DEVCG_CMD_LINK_UPDATE:
		prog_remove(progs, n, ev->bpf.replace_id);
		prog_add(progs, n, max, ev->bpf.prog_id);
		break;
	case DEVCG_CMD_PROG_DETACH:
		if (ev->bpf.prog_id)
			prog_remove(progs, n, ev->bpf.prog_id);
		else
			*n = 0; /* legacy detach of the single program */
		break;
	case DEVCG_CMD_LINK_DETACH:
		prog_remove(progs, n, ev->bpf.prog_id);
		break;
	}
}

static void feed_bpf(struct devcg_gaps *g, const struct devcg_trace_event *ev)
{
	struct window *w;
	uint32_t before;

	if (ev->ret < 0)
		return;
	w = window_of(g, true, ev->bpf.target);
	if (!w)
		return;
	before = w->nprogs;
	devcg_trace_progs_apply(w->progs, &w->nprogs, MAX_PROGS, ev);
	if (w->open) {
		w->gap.rules++;
		extend(w, ev->ts_exit_ns);
		if (w->nprogs)
			close_window(g, w, ev->ts_exit_ns);
	} else if (before && !w->nprogs) {
		open_window(w, ev, ev->ts_exit_ns, g->lost);
	}
}

/* The slot of task TID's denied check, or MAX_CHECKS. */
static size_t check_of(const struct devcg_gaps *g, uint32_t tid)
{
	size_t i;

	for (i = 0; i < MAX_CHECKS; i++)
		if (g->checks[i].ts && g->checks[i].tid == tid)
			return i;
	return MAX_CHECKS;
}

static void note_check(struct devcg_gaps *g, const struct devcg_trace_event *ev)
{
	size_t i = check_of(g, ev->tid);

	if (i == MAX_CHECKS) {
		i = g->next_check;
		g->next_check = (g->next_check + 1) % MAX_CHECKS;
	}
	g->checks[i].tid = ev->tid;
	g->checks[i].type = ev->check.type;
	g->checks[i].major = ev->check.major;
	g->checks[i].minor = ev->check.minor;
	g->checks[i].access = ev->check.access;
	g->checks[i].ts = ev->ts_ns;
}

/* When the open EV of device TYPE MAJOR:MINOR (type 0: not known) was
 * refused: at its task's denied check of that device before it returned
 * (taken, so that it places one open), else at its return; *ACCESS is the
 * access refused (the check's, else the open's). */
static uint64_t refused_at(struct devcg_gaps *g, const struct devcg_trace_event *ev, uint32_t type,
			   uint32_t major, uint32_t minor, uint32_t *access)
{
	size_t i = check_of(g, ev->tid);
	uint64_t ts;

	*access = devcg_open_access(ev->open.oflags);
	if (i == MAX_CHECKS || !type || g->checks[i].type != type || g->checks[i].major != major ||
	    g->checks[i].minor != minor || g->checks[i].ts > ev->ts_ns ||
	    g->checks[i].ts + CHECK_AGE_NS < ev->ts_ns)
		return ev->ts_ns;
	ts = g->checks[i].ts;
	if (g->checks[i].access)
		*access = g->checks[i].access;
	g->checks[i].ts = 0;
	return ts;
}

void devcg_gaps_feed(struct devcg_gaps *g, const struct devcg_trace_event *ev, uint32_t dev_type,
		     uint32_t dev_major, uint32_t dev_minor, uint64_t lost)
{
	uint32_t access;
	uint64_t ts;
	size_t i;

	/* windows whose burst ended before this event close first */
	devcg_gaps_flush(g, ev->ts_ns);
	g->lost = lost;
	switch (ev->type) {
	case DEVCG_EV_CGROUP_WRITE:
		feed_write(g, ev);
		break;
	case DEVCG_EV_BPF_PROG_CHANGE:
		feed_bpf(g, ev);
		break;
	case DEVCG_EV_DEV_CHECK:
		note_check(g, ev);
		break;
	case DEVCG_EV_OPEN_DENIED:
		ts = refused_at(g, ev, dev_type, dev_major, dev_minor, &access);
		for (i = 0; i < g->n1; i++)
			if (g->v1[i].gap.cgroup_id == ev->devices_cg)
				count_denied(&g->v1[i], ts, dev_type, dev_major, dev_minor, access);
		for (i = 0; i < g->n2; i++)
			if (g->v2[i].gap.cgroup_id == ev->cgroup_id)
				count_denied(&g->v2[i], ts, dev_type, dev_major, dev_minor, access);
		break;
	}
}

void devcg_gaps_flush(struct devcg_gaps *g, uint64_t now_ns)
{
	size_t i;

	for (i = 0; i < g->n1; i++)
		if (g->v1[i].open && (!now_ns || g->v1[i].last_ns + BURST_NS < now_ns))
			close_window(g, &g->v1[i], g->v1[i].last_ns);
	for (i = 0; !now_ns && i < g->n2; i++)
		if (g->v2[i].open)
			close_window(g, &g->v2[i], g->v2[i].last_ns);
}

static int seed_one(void *ctx, uint64_t id, const char *path)
{
	struct devcg_gaps *g = ctx;
	char full[8192];
	__u32 ids[MAX_PROGS], cnt = MAX_PROGS, flags = 0, i;
	struct window *w;
	int fd;

	snprintf(full, sizeof(full), "%s%s", devcg_cgpaths_mount(g->paths, DEVCG_H_V2),
		 strcmp(path, "/") ? path : "");
	fd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt) && cnt) {
		w = window_of(g, true, id);
		for (i = 0; w && i < cnt; i++)
			prog_add(w->progs, &w->nprogs, MAX_PROGS, ids[i]);
	}
	close(fd);
	return 0;
}

int devcg_gaps_seed_v2(struct devcg_gaps *g)
{
	return devcg_cgpaths_each(g->paths, DEVCG_H_V2, seed_one, g);
}

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * devcg trace, inside libdevcg but not part of its public API (the CLI
 * links the static library): the kernel side chosen at run time, then the
 * correlation of raw events into permission gaps.
 */
#ifndef DEVCG_TRACE_INTERNAL_H
#define DEVCG_TRACE_INTERNAL_H

#include "devcg.h"
#include "devcg_abi.h"
#include "devcg_trace.h"

#include <stdbool.h>
#include <stdint.h>

/* ---- hooks (trace.c) ------------------------------------------------------ */

enum devcg_hooks {
	DEVCG_HOOKS_AUTO = 0, /* fentry, else kprobe, else tracepoints */
	DEVCG_HOOKS_TRACEPOINT,
	DEVCG_HOOKS_KPROBE,
	DEVCG_HOOKS_FENTRY,
};

struct devcg_tracer_opts {
	size_t sz;
	enum devcg_hooks hooks;
	/* mount tracefs in a private mount namespace when it is not mounted */
	bool mount_tracefs;
	/* collect BPF run-time statistics (--stats) */
	bool stats;
};

struct devcg_tracer;

/* A raw event, or an audit event of a devcg filter (ev NULL, audit set). */
typedef int (*devcg_trace_cb)(void *ctx, const struct devcg_trace_event *ev,
			      const struct devcg_audit_event *audit);

int devcg_tracer_open(struct devcg_tracer **out, const struct devcg_tracer_opts *opts,
		      struct devcg_error *err);
void devcg_tracer_close(struct devcg_tracer *t);
/* Which hooks were chosen and why, one line each. */
const char *devcg_tracer_hooks(const struct devcg_tracer *t);
/* The chosen source for cgroup writes (enum devcg_ev_source). */
int devcg_tracer_write_source(const struct devcg_tracer *t);
/* When the trace began (CLOCK_MONOTONIC, the clock of every event's ts_ns):
 * taken before any hook is attached. */
uint64_t devcg_tracer_start_ns(const struct devcg_tracer *t);
/* Poll for up to TIMEOUT_MS; calls CB for each event. Returns events seen. */
int devcg_tracer_poll(struct devcg_tracer *t, int timeout_ms, devcg_trace_cb cb, void *ctx);
/*
 * Follow a devcg filter's audit ring (found from its program id). A ring
 * seen for the first time is read at once: what was queued in it before
 * the trace began is skipped (counted in audit_before_start), what came
 * since goes to CB; its loss counter is taken as the baseline.
 */
int devcg_tracer_follow_audit(struct devcg_tracer *t, uint32_t prog_id, devcg_trace_cb cb,
			      void *ctx);

/* What could not be reported, by cause, since the trace began. */
struct devcg_trace_losses {
	uint64_t ringbuf; /* trace events the trace's own ring buffers had no room for */
	uint64_t read;    /* trace events whose user or kernel memory could not be read */
	uint64_t audit;   /* denials the followed audit rings had no room for, counted
			   * from when the trace began to follow each ring */
	/* not losses: audit denials queued before the trace began, skipped */
	uint64_t audit_before_start;
};
void devcg_tracer_losses(const struct devcg_tracer *t, struct devcg_trace_losses *out);

struct devcg_prog_stats {
	char name[32];
	uint64_t run_cnt;
	uint64_t run_time_ns;
};
/* Up to MAX program statistics (needs opts.stats); returns how many. */
int devcg_tracer_stats(const struct devcg_tracer *t, struct devcg_prog_stats *out, int max);

/*
 * Try to load (and, with ATTACH, attach) one kind of hook on its own.
 * Returns 0, or a negative errno with the reason in ERR. For tests of the
 * kprobe and fentry variants on kernels that cannot attach them.
 */
int devcg_tracer_probe(enum devcg_hooks hooks, bool attach, struct devcg_error *err);

/* ---- cgroup paths (cgpath.c) ---------------------------------------------- */

enum devcg_hierarchy { DEVCG_H_V2, DEVCG_H_DEVICES, DEVCG_H_FREEZER, DEVCG_H_MAX };

struct devcg_cgpaths;
/* The hierarchies of /proc/self/mountinfo (the first mount of each). */
struct devcg_cgpaths *devcg_cgpaths_new(void);
/* The directories MOUNTS[h] (NULL: none) as the hierarchies, for tests. */
struct devcg_cgpaths *devcg_cgpaths_new_at(const char *const mounts[DEVCG_H_MAX]);
void devcg_cgpaths_free(struct devcg_cgpaths *c);
/* The mount of a hierarchy, or NULL. */
const char *devcg_cgpaths_mount(const struct devcg_cgpaths *c, enum devcg_hierarchy h);
/*
 * The path of cgroup ID (kernfs id, st_ino) relative to its root, or NULL;
 * valid until the next call. Constant time: a hash table filled by one
 * walk of the hierarchy on first use. An id not in it is looked up once
 * on its own (open_by_handle_at()), else by one more walk (at most one per
 * unknown id and per 20 ms); an id found nowhere is remembered as unknown.
 */
const char *devcg_cgpaths_lookup(struct devcg_cgpaths *c, enum devcg_hierarchy h, uint64_t id);
/* Walk hierarchy H afresh and call CB for each cgroup until it returns non-zero. */
int devcg_cgpaths_each(struct devcg_cgpaths *c, enum devcg_hierarchy h,
		       int (*cb)(void *ctx, uint64_t id, const char *path), void *ctx);
/* What the lookups of a hierarchy cost, so far. */
struct devcg_cgpaths_stats {
	uint64_t lookups; /* devcg_cgpaths_lookup() calls */
	uint64_t probes;  /* table slots the lookups looked at */
	uint64_t walks;   /* walks of the whole hierarchy */
	uint64_t handles; /* ids looked up on their own (open_by_handle_at()) */
	uint64_t entries; /* cgroups in the table */
	uint64_t unknown; /* ids remembered as unknown */
};
void devcg_cgpaths_stats(const struct devcg_cgpaths *c, enum devcg_hierarchy h,
			 struct devcg_cgpaths_stats *out);
/*
 * The cgroup ARG names, in any form the other verbs take (relative to the
 * cgroup2 mount, or an absolute path of a cgroup2 or cgroup v1 devices or
 * freezer directory) or as a path relative to a hierarchy's root
 * ("/mycontainer"): its path relative to its hierarchy's root into REL
 * (LEN bytes). -ENOENT (with a message) when no hierarchy has it.
 */
int devcg_cgpaths_resolve(struct devcg_cgpaths *c, const char *arg, char *rel, size_t len,
			  struct devcg_error *err);

/* ---- device program lists (gap.c) ------------------------------------------ */

/* Apply a successful bpf(2) change of a cgroup's device programs to its
 * list PROGS of *N ids (at most MAX). */
void devcg_trace_progs_apply(uint32_t *progs, uint32_t *n, uint32_t max,
			     const struct devcg_trace_event *ev);

/* ---- gaps (gap.c) --------------------------------------------------------- */

#define DEVCG_GAP_MAX_DEVICES 8

struct devcg_gap {
	enum { DEVCG_GAP_V1_DENY_ALL, DEVCG_GAP_V2_NO_FILTER } kind;
	uint64_t cgroup_id;
	char cgroup[512];
	uint32_t writer_pid, writer_ppid;
	char writer_comm[16], writer_pcomm[16];
	uint64_t start_ns, end_ns;
	uint32_t rules;   /* writes (v1) or attaches (v2) that followed */
	uint64_t denied;  /* EPERM opens in the window */
	uint64_t first_denied_ns, last_denied_ns;
	uint32_t ndevices;
	struct { uint32_t type, major, minor; } devices[DEVCG_GAP_MAX_DEVICES];
	const char *freeze; /* "none", "frozen", "failed", "not traced" */
	bool lost;          /* events were lost while it was open */
};

struct devcg_gaps;
typedef void (*devcg_gap_cb)(void *ctx, const struct devcg_gap *gap);

struct devcg_gaps *devcg_gaps_new(struct devcg_cgpaths *paths, devcg_gap_cb cb, void *ctx);
void devcg_gaps_free(struct devcg_gaps *g);
/* Seed the v2 state: the device programs attached under the cgroup2 mount. */
int devcg_gaps_seed_v2(struct devcg_gaps *g);
/* Feed a raw event; DEV is the device of an open_denied path when known
 * (type 0 otherwise); LOST is the running count of lost events. */
void devcg_gaps_feed(struct devcg_gaps *g, const struct devcg_trace_event *ev, uint32_t dev_type,
		     uint32_t dev_major, uint32_t dev_minor, uint64_t lost);
/* Close windows whose burst ended before NOW_NS (or all, with NOW_NS 0). */
void devcg_gaps_flush(struct devcg_gaps *g, uint64_t now_ns);

/* ---- revocations (revoke.c) ---------------------------------------------- */

#define DEVCG_REVOKE_MAX_PROGS 8
#define DEVCG_REVOKE_MAX_DEVICES 8
#define DEVCG_REVOKE_MAX_VICTIMS 4

/* Who a device program belongs to, as far as the trace can tell. */
enum devcg_prog_owner {
	DEVCG_PROG_UNKNOWN = -1, /* it could not be read (already freed) */
	DEVCG_PROG_FOREIGN = 0,
	DEVCG_PROG_DEVCG = 1, /* a devcg filter: its policy can be read back */
};

/*
 * A revocation: a foreign device-program change on a cgroup (one writer's
 * consecutive changes, an episode), after which opens in that cgroup or
 * below were refused although every devcg filter that applies allows them.
 */
struct devcg_revoke {
	uint64_t cgroup_id;
	char cgroup[512];
	uint32_t writer_pid, writer_ppid;
	char writer_comm[16], writer_pcomm[16];
	uint64_t start_ns;  /* the episode's first change (its bpf(2) entry) */
	uint64_t end_ns;    /* when it ended: the next change by another, or the trace's end */
	uint32_t changes;   /* program changes in the episode */
	uint32_t nbefore, nafter;
	struct devcg_revoke_prog {
		uint32_t id;
		int owner; /* enum devcg_prog_owner */
	} before[DEVCG_REVOKE_MAX_PROGS], after[DEVCG_REVOKE_MAX_PROGS];
	uint64_t denied; /* refused opens attributed to it */
	uint64_t first_denied_ns, last_denied_ns;
	uint32_t ndevices;
	struct {
		uint32_t type, major, minor;
		uint8_t access; /* the accesses refused (DEVCG_ACC_*) */
		uint64_t count;
	} devices[DEVCG_REVOKE_MAX_DEVICES];
	uint32_t nvictims; /* the first openers refused, in order */
	struct { uint32_t pid; char comm[16]; } victims[DEVCG_REVOKE_MAX_VICTIMS];
	bool lost; /* events were lost while it was open */
};

/* Where the correlation learns what is not in the events; NULL members
 * (or a NULL source) read the kernel and the cgroup2 tree. */
struct devcg_revoke_source {
	/* Who owns program ID; for a devcg filter, *POLICY is set to its
	 * policy (the caller frees it). */
	int (*prog)(void *ctx, uint32_t id, struct devcg_policy **policy);
	/* The path of v2 cgroup ID, or NULL. */
	const char *(*path)(void *ctx, uint64_t id);
	void *ctx;
};

struct devcg_revokes;
typedef void (*devcg_revoke_cb)(void *ctx, const struct devcg_revoke *rv);

struct devcg_revokes *devcg_revokes_new(struct devcg_cgpaths *paths,
					const struct devcg_revoke_source *src, devcg_revoke_cb cb,
					void *ctx);
void devcg_revokes_free(struct devcg_revokes *r);
/* Seed the device programs attached under the cgroup2 mount. */
int devcg_revokes_seed_v2(struct devcg_revokes *r);
/* Seed cgroup ID with the programs IDS (as a query at start finds them). */
void devcg_revokes_seed(struct devcg_revokes *r, uint64_t cgroup_id, const uint32_t *ids, uint32_t n);
/* Learn who owns the program of a bpf(2) event as soon as it arrives,
 * before the program can be replaced and freed. */
void devcg_revokes_note(struct devcg_revokes *r, const struct devcg_trace_event *ev);
/* Feed a raw event in time order; DEV is the device of an open_denied path
 * when known (type 0 otherwise); LOST is the running count of lost events. */
void devcg_revokes_feed(struct devcg_revokes *r, const struct devcg_trace_event *ev,
			uint32_t dev_type, uint32_t dev_major, uint32_t dev_minor, uint64_t lost);
/* The end of the trace at NOW_NS: close every episode. */
void devcg_revokes_flush(struct devcg_revokes *r, uint64_t now_ns);
/* The device access an open with FLAGS asks for (DEVCG_ACC_*). */
uint8_t devcg_open_access(uint32_t flags);

/* ---- the order of events (queue.c) and their devices (opener.c) --------- */

/* An event of a ring (or an audit ring's, AUDIT) waiting for its turn. */
struct devcg_trace_pending {
	uint64_t ts;
	bool audit;
	union {
		struct devcg_trace_event ev;
		struct devcg_audit_event a;
	};
};

struct devcg_trace_queue {
	struct devcg_trace_pending *v;
	size_t n, cap;
};

/* Queue a copy of EV, or of A when A is set; 0 or -ENOMEM. */
int devcg_trace_queue_push(struct devcg_trace_queue *q, const struct devcg_trace_event *ev,
			   const struct devcg_audit_event *a);
/* Hand the events older than BEFORE_NS (all, with 0) to FN, in time order,
 * and drop them. */
void devcg_trace_queue_drain(struct devcg_trace_queue *q, uint64_t before_ns,
			     void (*fn)(void *ctx, const struct devcg_trace_event *ev,
					const struct devcg_audit_event *a),
			     void *ctx);
void devcg_trace_queue_free(struct devcg_trace_queue *q);

/* The device behind the path of EV (an open refused), seen from the
 * opener: its root, its cwd or dirfd. false when it is gone or no device
 * node is there. The last answers are kept, by path and opener. */
bool devcg_trace_path_device(const struct devcg_trace_event *ev, uint32_t *type, uint32_t *major,
			     uint32_t *minor);

/* ---- --cgroup (select.c) --------------------------------------------------- */

/* Is PATH (relative to its hierarchy) FILTER or below it? Every path is,
 * for a NULL FILTER; a NULL PATH is not. */
bool devcg_trace_under(const char *path, const char *filter);
/* May a filter attached at PATH deny the opens of CGROUP (NULL: any), or
 * those of its descendants? Only the audit rings of those are read: another
 * cgroup's denials and losses are not this trace's to report, nor to take
 * from another reader of that ring. */
bool devcg_trace_related(const char *cgroup, const char *path);
/* Follow the audit rings (devcg_tracer_follow_audit(), with CB and CTX) of
 * the devcg audit filters attached now to cgroups related to CGROUP. */
void devcg_trace_follow_existing(struct devcg_tracer *t, struct devcg_cgpaths *paths, const char *cgroup,
				 devcg_trace_cb cb, void *ctx);

#endif

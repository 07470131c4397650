/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * devcg trace as a service: what a trace that runs for days keeps for
 * whoever is on call. Counters in a Prometheus text-format file for
 * node_exporter's textfile collector (metrics.c), and each gap and
 * revocation in the systemd journal with structured fields (journal.c).
 * Both take the events the trace reports (struct devcg_gap, struct
 * devcg_revoke), as its JSON output does.
 */
#ifndef DEVCG_TRACE_SERVICE_H
#define DEVCG_TRACE_SERVICE_H

#include "trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* ---- names the JSON output, the journal and the metrics share ------------ */

/* "c 1:9" or "b 7:0" into BUF; returns BUF. */
const char *devcg_trace_dev_string(uint32_t type, uint32_t major, uint32_t minor, char *buf, size_t len);
/* "v1_deny_all" or "v2_no_filter". */
const char *devcg_gap_kind_name(const struct devcg_gap *g);
/* "devcg", "foreign" or "unknown" (enum devcg_prog_owner). */
const char *devcg_prog_owner_name(int owner);

/* ---- metrics (metrics.c) -------------------------------------------------- */

/* Label sets kept per metric; the opens of further cgroups or devices are
 * counted in the one whose labels are all "_other". */
#define DEVCG_METRICS_MAX_SERIES 1000
/* How often the file is rewritten, when something changed (default). */
#define DEVCG_METRICS_INTERVAL_NS 5000000000ull

struct devcg_metrics;

struct devcg_metrics *devcg_metrics_new(void);
void devcg_metrics_free(struct devcg_metrics *m);
/* Count a gap, a revocation, an open refused (by its cgroup2 path CGROUP,
 * its cgroup v1 devices path DEVICES_CGROUP, NULL when none, and its device
 * DEVICE, NULL when unknown). Strings are the trace's (untrusted). */
void devcg_metrics_gap(struct devcg_metrics *m, const struct devcg_gap *g);
void devcg_metrics_revoke(struct devcg_metrics *m, const struct devcg_revoke *rv);
void devcg_metrics_refused_open(struct devcg_metrics *m, const char *cgroup, const char *devices_cgroup,
				const char *device);
/* The trace's running loss counters. */
void devcg_metrics_losses(struct devcg_metrics *m, const struct devcg_trace_losses *l);
/* The whole file in the text format (NUL-terminated, malloc'd) into *OUT:
 * its length, or -ENOMEM. */
long devcg_metrics_format(const struct devcg_metrics *m, char **out);
/* A label value as the text format quotes it: TEXT escaped as the trace's
 * JSON strings are (devcg_escape() with DEVCG_ESCAPE_MESSAGE: always valid
 * UTF-8), then backslash, double quote and newline as \\, \" and \n.
 * Returns the whole length, as snprintf() does. */
size_t devcg_prom_label_value(char *buf, size_t len, const char *text);

/*
 * Replace the file NAME in directory DIRFD with LEN bytes of BUF (mode
 * 0644), never leaving a half file: a temporary file in the same directory
 * (NAME.tmp.PID, not matched by node_exporter's *.prom), written fully,
 * fsync'd, renamed over NAME, then the directory fsync'd. On failure the
 * temporary file is removed and NAME is left as it was. 0 or -errno.
 */
int devcg_write_atomic(int dirfd, const char *name, const void *buf, size_t len, struct devcg_error *err);

/*
 * Keep PATH as the metrics file of M, rewritten at most every INTERVAL_NS
 * (0: the default) when something changed. Writes it once now, so that a
 * file that cannot be written fails here, before the trace attaches
 * anything: -errno with a one-line message.
 */
int devcg_metrics_open(struct devcg_metrics *m, const char *path, uint64_t interval_ns,
		       struct devcg_error *err);
/* Rewrite the file if something changed and INTERVAL_NS passed since the
 * last write (NOW_NS, CLOCK_MONOTONIC). A failure is returned once (0
 * after), until a write succeeds again; the next tick retries. */
int devcg_metrics_tick(struct devcg_metrics *m, uint64_t now_ns, struct devcg_error *err);
/* Rewrite the file now (at the end of the trace). */
int devcg_metrics_write(struct devcg_metrics *m, struct devcg_error *err);

/* ---- the journal (journal.c) ---------------------------------------------- */

/*
 * The systemd unit of cgroup path CGROUP (relative to its hierarchy's
 * root), read from the path as systemd names its cgroups: the first
 * component after the slices (/system.slice/foo.service/payload:
 * foo.service), or the last slice of a path of slices only. false (UNIT
 * "") when the path is not systemd's.
 */
bool devcg_trace_cgroup_unit(const char *cgroup, char *unit, size_t len);

#define DEVCG_JOURNAL_MAX_FIELDS 32
/* A journal entry: "FIELD=value" strings, as sd_journal_sendv() takes them. */
struct devcg_journal_entry {
	struct iovec iov[DEVCG_JOURNAL_MAX_FIELDS];
	int n;
	bool nomem;
};

/* The entry of a gap, of a revocation; free it with devcg_journal_entry_free(). */
void devcg_journal_gap_entry(struct devcg_journal_entry *e, const struct devcg_gap *g);
void devcg_journal_revoke_entry(struct devcg_journal_entry *e, const struct devcg_revoke *rv);
void devcg_journal_entry_free(struct devcg_journal_entry *e);
/* The value of FIELD in E, or NULL. */
const char *devcg_journal_entry_get(const struct devcg_journal_entry *e, const char *field);
/* Is the journal there to log to? 0, or -errno with a one-line message. */
int devcg_journal_check(struct devcg_error *err);
/* Log a gap, a revocation: 0 or -errno. */
int devcg_journal_gap(const struct devcg_gap *g);
int devcg_journal_revoke(const struct devcg_revoke *rv);

#endif

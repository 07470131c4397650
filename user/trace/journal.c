// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg trace --journal: each gap and revocation as one entry of the
 * systemd journal, with structured fields (service.h). The values are the
 * event's, escaped as the trace's JSON strings are; MESSAGE is one line.
 */
#include "internal.h"
#include "service.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

#define JOURNAL_SOCKET "/run/systemd/journal/socket"

/* The unit-type suffixes of units that have cgroups (a slice's aside). */
static bool unit_suffix(const char *name, size_t n)
{
	static const char *const sfx[] = { ".service", ".scope", ".socket", ".mount", ".swap" };
	size_t i, k;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		k = strlen(sfx[i]);
		if (n > k && !memcmp(name + n - k, sfx[i], k))
			return true;
	}
	return false;
}

static bool is_slice(const char *name, size_t n)
{
	return n > 6 && !memcmp(name + n - 6, ".slice", 6);
}

/* Copy the cgroup name NAME (N bytes) into UNIT: systemd prefixes with '_'
 * the names that could clash with the kernel's files (cg_escape()). */
static bool set_unit(char *unit, size_t len, const char *name, size_t n)
{
	if (n && name[0] == '_')
		name++, n--;
	if (!n || n >= len)
		return false;
	memcpy(unit, name, n);
	unit[n] = '\0';
	return true;
}

bool devcg_trace_cgroup_unit(const char *cgroup, char *unit, size_t len)
{
	const char *p = cgroup, *slice = NULL, *name;
	size_t n, slice_n = 0;

	if (len)
		unit[0] = '\0';
	if (!cgroup || cgroup[0] != '/' || !len)
		return false;
	for (;;) {
		while (*p == '/')
			p++;
		name = p;
		n = strcspn(p, "/");
		if (!n)
			break;
		if (is_slice(name, n)) {
			slice = name;
			slice_n = n;
			p += n;
			continue;
		}
		/* the first name after the slices is the unit's, or not systemd's */
		return unit_suffix(name, n) && set_unit(unit, len, name, n);
	}
	return slice && set_unit(unit, len, slice, slice_n);
}

/* Add "FIELD=value" (printf) to E. */
__attribute__((format(printf, 3, 4))) static void add(struct devcg_journal_entry *e, const char *field,
						       const char *fmt, ...)
{
	char *s = NULL, *v = NULL;
	va_list ap;
	int k;

	if (e->n >= DEVCG_JOURNAL_MAX_FIELDS) {
		e->nomem = true;
		return;
	}
	va_start(ap, fmt);
	k = vasprintf(&v, fmt, ap);
	va_end(ap);
	if (k < 0 || asprintf(&s, "%s=%s", field, v) < 0) {
		free(v);
		e->nomem = true;
		return;
	}
	free(v);
	e->iov[e->n].iov_base = s;
	e->iov[e->n].iov_len = strlen(s);
	e->n++;
}

/* Untrusted text (N bytes, (size_t)-1: up to its NUL) as the JSON output
 * escapes it (valid UTF-8; newlines kept), or, with ONE_LINE, on one line
 * (for MESSAGE). Into BUF; returns BUF. */
static const char *esc(char *buf, size_t len, const char *s, size_t n, bool one_line)
{
	devcg_escape(buf, len, s ? s : "?", s ? n : (size_t)-1, one_line ? 0 : DEVCG_ESCAPE_MESSAGE);
	return buf;
}

static void add_text(struct devcg_journal_entry *e, const char *field, const char *s, size_t n)
{
	char buf[2048];

	add(e, field, "%s", esc(buf, sizeof(buf), s, n, false));
}

static void head(struct devcg_journal_entry *e, const char *event, int priority, const char *cgroup,
		 uint32_t pid, const char *comm, uint32_t ppid, const char *pcomm)
{
	char unit[256];

	memset(e, 0, sizeof(*e));
	add(e, "PRIORITY", "%d", priority);
	add(e, "SYSLOG_IDENTIFIER", "devcg-trace");
	add(e, "DEVCG_EVENT", "%s", event);
	add_text(e, "DEVCG_CGROUP", cgroup, (size_t)-1);
	if (devcg_trace_cgroup_unit(cgroup, unit, sizeof(unit)))
		add_text(e, "DEVCG_UNIT", unit, (size_t)-1);
	add(e, "DEVCG_WRITER_PID", "%u", pid);
	add_text(e, "DEVCG_WRITER_COMM", comm, strnlen(comm, 16));
	add(e, "DEVCG_WRITER_PPID", "%u", ppid);
	add_text(e, "DEVCG_WRITER_PCOMM", pcomm, strnlen(pcomm, 16));
}

void devcg_journal_gap_entry(struct devcg_journal_entry *e, const struct devcg_gap *g)
{
	char devs[DEVCG_GAP_MAX_DEVICES * 24 + 1] = "", dev[24], cg[1024], comm[80];
	uint64_t window = g->end_ns - g->start_ns;
	uint32_t i;

	head(e, "gap", g->denied ? LOG_WARNING : LOG_NOTICE, g->cgroup, g->writer_pid, g->writer_comm,
	     g->writer_ppid, g->writer_pcomm);
	for (i = 0; i < g->ndevices && i < DEVCG_GAP_MAX_DEVICES; i++) {
		if (i)
			strcat(devs, ",");
		strcat(devs, devcg_trace_dev_string(g->devices[i].type, g->devices[i].major, g->devices[i].minor,
						    dev, sizeof(dev)));
	}
	add(e, "DEVCG_GAP_KIND", "%s", devcg_gap_kind_name(g));
	add(e, "DEVCG_START_NS", "%llu", (unsigned long long)g->start_ns);
	add(e, "DEVCG_WINDOW_NS", "%llu", (unsigned long long)window);
	add(e, "DEVCG_RULES", "%u", g->rules);
	add(e, "DEVCG_DENIED", "%llu", (unsigned long long)g->denied);
	add(e, "DEVCG_DEVICES", "%s", devs);
	add(e, "DEVCG_FREEZE", "%s", g->freeze ? g->freeze : "not traced");
	add(e, "DEVCG_LOST", "%s", g->lost ? "true" : "false");
	add(e, "MESSAGE", "permission gap (%s) in %s: %llu ns, writer %u/%s, %u rules, %llu opens refused%s%s%s",
	    g->kind == DEVCG_GAP_V1_DENY_ALL ? "v1 deny-all" : "v2 no filter",
	    esc(cg, sizeof(cg), g->cgroup, (size_t)-1, true), (unsigned long long)window, g->writer_pid,
	    esc(comm, sizeof(comm), g->writer_comm, strnlen(g->writer_comm, 16), true), g->rules,
	    (unsigned long long)g->denied, devs[0] ? " (" : "", devs, devs[0] ? ")" : "");
}

static void progs_string(char *buf, size_t len, const struct devcg_revoke_prog *p, uint32_t n)
{
	size_t off = 0;
	uint32_t i;

	buf[0] = '\0';
	for (i = 0; i < n && i < DEVCG_REVOKE_MAX_PROGS && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%u:%s", i ? "," : "", p[i].id,
					devcg_prog_owner_name(p[i].owner));
}

void devcg_journal_revoke_entry(struct devcg_journal_entry *e, const struct devcg_revoke *rv)
{
	char devs[DEVCG_REVOKE_MAX_DEVICES * 24 + 1] = "", acc[DEVCG_REVOKE_MAX_DEVICES * 4 + 1] = "";
	char victims[DEVCG_REVOKE_MAX_VICTIMS * 96 + 1] = "", before[256], after[256];
	char dev[24], a[4], cg[1024], comm[80];
	uint32_t i;

	head(e, "revoke", LOG_WARNING, rv->cgroup, rv->writer_pid, rv->writer_comm, rv->writer_ppid,
	     rv->writer_pcomm);
	for (i = 0; i < rv->ndevices && i < DEVCG_REVOKE_MAX_DEVICES; i++) {
		if (i) {
			strcat(devs, ",");
			strcat(acc, ",");
		}
		strcat(devs, devcg_trace_dev_string(rv->devices[i].type, rv->devices[i].major,
						    rv->devices[i].minor, dev, sizeof(dev)));
		strcat(acc, devcg_access_format(rv->devices[i].access, a));
	}
	for (i = 0; i < rv->nvictims && i < DEVCG_REVOKE_MAX_VICTIMS; i++)
		snprintf(victims + strlen(victims), sizeof(victims) - strlen(victims), "%s%u/%s", i ? "," : "",
			 rv->victims[i].pid, esc(comm, sizeof(comm), rv->victims[i].comm,
						 strnlen(rv->victims[i].comm, 16), false));
	progs_string(before, sizeof(before), rv->before, rv->nbefore);
	progs_string(after, sizeof(after), rv->after, rv->nafter);
	add(e, "DEVCG_START_NS", "%llu", (unsigned long long)rv->start_ns);
	add(e, "DEVCG_WINDOW_NS", "%llu", (unsigned long long)(rv->end_ns - rv->start_ns));
	add(e, "DEVCG_CHANGES", "%u", rv->changes);
	add(e, "DEVCG_PROGS_BEFORE", "%s", before);
	add(e, "DEVCG_PROGS_AFTER", "%s", after);
	add(e, "DEVCG_DENIED", "%llu", (unsigned long long)rv->denied);
	add(e, "DEVCG_DEVICES", "%s", devs);
	add(e, "DEVCG_ACCESS", "%s", acc);
	add(e, "DEVCG_VICTIMS", "%s", victims);
	add(e, "DEVCG_LOST", "%s", rv->lost ? "true" : "false");
	add(e, "MESSAGE", "revocation in %s: a device program change by %u/%s refused %llu opens devcg allows%s%s%s",
	    esc(cg, sizeof(cg), rv->cgroup, (size_t)-1, true), rv->writer_pid,
	    esc(comm, sizeof(comm), rv->writer_comm, strnlen(rv->writer_comm, 16), true),
	    (unsigned long long)rv->denied, devs[0] ? " (" : "", devs, devs[0] ? ")" : "");
}

void devcg_journal_entry_free(struct devcg_journal_entry *e)
{
	int i;

	for (i = 0; i < e->n; i++)
		free(e->iov[i].iov_base);
	e->n = 0;
}

const char *devcg_journal_entry_get(const struct devcg_journal_entry *e, const char *field)
{
	size_t k = strlen(field);
	int i;

	for (i = 0; i < e->n; i++) {
		const char *s = e->iov[i].iov_base;

		if (!strncmp(s, field, k) && s[k] == '=')
			return s + k + 1;
	}
	return NULL;
}

int devcg_journal_check(struct devcg_error *err)
{
	if (access(JOURNAL_SOCKET, W_OK))
		return devcg_err(err, -errno, "--journal: no systemd journal to log to (%s: %s)", JOURNAL_SOCKET,
				 strerror(errno));
	return 0;
}

static int send_entry(struct devcg_journal_entry *e)
{
	int ret = e->nomem ? -ENOMEM : sd_journal_sendv(e->iov, e->n);

	devcg_journal_entry_free(e);
	return ret;
}

int devcg_journal_gap(const struct devcg_gap *g)
{
	struct devcg_journal_entry e;

	devcg_journal_gap_entry(&e, g);
	return send_entry(&e);
}

int devcg_journal_revoke(const struct devcg_revoke *rv)
{
	struct devcg_journal_entry e;

	devcg_journal_revoke_entry(&e, rv);
	return send_entry(&e);
}

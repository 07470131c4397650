// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg-nri's lines: one per action and one per event of the plugin's own
 * life. On stderr ("devcg-nri: ..."), or under systemd (JOURNAL_STREAM set)
 * in the journal with the action's fields: DEVCG_CONTAINER_ID, DEVCG_POD,
 * DEVCG_CGROUP, DEVCG_ACTION, DEVCG_DEVICES, and MESSAGE the same line.
 * What the runtime sent (IDs, names, paths, method names) is escaped with
 * devcg_escape(): no line of the runtime's making. */
#include "nri.h"

#include <devcg.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-journal.h>

static nri_log_sink sink;
static void *sink_ctx;
static int verbose;

void nri_log_set_sink(nri_log_sink s, void *ctx)
{
	sink = s;
	sink_ctx = ctx;
}

void nri_log_set_verbose(int v)
{
	verbose = v;
}

static bool journal(void)
{
	const char *j = getenv("JOURNAL_STREAM");

	return j && *j;
}

static void emit(int level, const char *line, const char *action, const char *id, const char *pod,
		 const char *cgroup, const char *devices)
{
	if (level == NRI_LOG_DEBUG && verbose < 1)
		return;
	if (sink) {
		sink(sink_ctx, level, line);
		return;
	}
	if (journal()) {
		if (action)
			sd_journal_send("MESSAGE=%s", line, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=devcg-nri",
					"DEVCG_ACTION=%s", action, "DEVCG_CONTAINER_ID=%s", id, "DEVCG_POD=%s", pod,
					"DEVCG_CGROUP=%s", cgroup, "DEVCG_DEVICES=%s", devices, NULL);
		else
			sd_journal_send("MESSAGE=%s", line, "PRIORITY=%d", level, "SYSLOG_IDENTIFIER=devcg-nri",
					NULL);
		return;
	}
	fprintf(stderr, "devcg-nri: %s\n", line);
}

void nri_log(int level, const char *fmt, ...)
{
	char raw[1024], line[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(raw, sizeof(raw), fmt, ap);
	va_end(ap);
	devcg_escape(line, sizeof(line), raw, (size_t)-1, 0);
	emit(level, line, NULL, NULL, NULL, NULL, NULL);
}

/* "c 195:0 /dev/nvidia0, ..." (bounded; "..." when cut). */
static void devices_text(const struct nri_container *c, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < c->ndevices; i++) {
		const struct nri_device *d = &c->devices[i];
		int n = snprintf(buf + off, len - off, "%s%c %lld:%lld %s", i ? ", " : "", d->type,
				 (long long)d->major, (long long)d->minor, d->path ? d->path : "");

		if (n < 0 || (size_t)n >= len - off) {
			if (len > 4)
				strcpy(buf + len - 4, "...");
			return;
		}
		off += (size_t)n;
	}
}

static void esc(char *buf, size_t len, const char *s)
{
	devcg_escape(buf, len, s ? s : "", (size_t)-1, 0);
}

void nri_log_action(const char *action, const struct nri_container *c, const struct nri_outcome *o, int err)
{
	char line[8192], raw[1024], pod[1024], devices[2048], id[1024], name[1024], cg[4096], why[2048];

	snprintf(raw, sizeof(raw), "%s%s%s", c->pod_namespace ? c->pod_namespace : "",
		 c->pod_namespace ? "/" : "", c->pod_name ? c->pod_name : "");
	esc(pod, sizeof(pod), raw);
	devices_text(c, raw, sizeof(raw));
	esc(devices, sizeof(devices), raw);
	esc(id, sizeof(id), c->id);
	esc(name, sizeof(name), c->name);
	esc(cg, sizeof(cg), o ? o->cgroup : "");
	if (err < 0) {
		/* the library's messages are escaped already: only their line breaks go */
		devcg_escape(why, sizeof(why), o && o->error[0] ? o->error : strerror(-err), (size_t)-1,
			     DEVCG_ESCAPE_MESSAGE);
		for (char *p = why; *p; p++)
			if (*p == '\n' || *p == '\t')
				*p = ' ';
		snprintf(line, sizeof(line), "%s %s (%s%s%s): failed: %s", action, id, pod, *pod ? " " : "", name,
			 why);
	} else {
		esc(why, sizeof(why), o && o->what[0] ? o->what : "done");
		snprintf(line, sizeof(line), "%s %s (%s%s%s): %s%s%s", action, id, pod, *pod ? " " : "", name, why,
			 *cg ? ", cgroup " : "", cg);
	}
	emit(err < 0 ? NRI_LOG_ERR : NRI_LOG_INFO, line, action, id, pod, cg, devices);
}

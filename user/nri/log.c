// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg-nri's lines: one per action and one per event of the plugin's own
 * life. On stderr ("devcg-nri: ..."), or under systemd (JOURNAL_STREAM set)
 * in the journal with the action's fields: DEVCG_CONTAINER_ID, DEVCG_POD,
 * DEVCG_CGROUP, DEVCG_ACTION, DEVCG_DEVICES, and MESSAGE the same line. */
#include "nri.h"

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
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
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

void nri_log_action(const char *action, const struct nri_container *c, const struct nri_outcome *o, int err)
{
	char line[6144], pod[512], devices[1024];
	const char *cg = o && o->cgroup[0] ? o->cgroup : "";

	snprintf(pod, sizeof(pod), "%s%s%s", c->pod_namespace ? c->pod_namespace : "",
		 c->pod_namespace ? "/" : "", c->pod_name ? c->pod_name : "");
	devices_text(c, devices, sizeof(devices));
	if (err < 0)
		snprintf(line, sizeof(line), "%s %s (%s%s%s): failed: %s",
			 action, c->id, pod, *pod ? " " : "", c->name ? c->name : "",
			 o && o->error[0] ? o->error : strerror(-err));
	else
		snprintf(line, sizeof(line), "%s %s (%s%s%s): %s%s%s", action, c->id, pod, *pod ? " " : "",
			 c->name ? c->name : "", o && o->what[0] ? o->what : "done", *cg ? ", cgroup " : "", cg);
	emit(err < 0 ? NRI_LOG_ERR : NRI_LOG_INFO, line, action, c->id, pod, cg, devices);
}

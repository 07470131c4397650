// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg trace: device-permission jitter, and the writes that caused it.
#include "cli.h"
#include "internal.h"
#include "trace.h"
#include "trace_cli.h"

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

const char *const trace_type_names[] = { "cgroup_write", "bpf_prog_change", "open_denied",
					  "device_denied", "gap", "revoke" };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

uint64_t trace_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Text output for a terminal: process names, paths, written bytes and
 * cgroup names are whatever a traced process chose, escape sequences too.
 * Each call has its own of four buffers, so one printf() may hold four.
 */
static const char *tsafe(const char *s, size_t n)
{
	static char bufs[4][4 * 4096 + 1];
	static int next;
	char *buf = bufs[next++ % 4];

	devcg_escape(buf, sizeof(bufs[0]), s ? s : "?", s ? n : (size_t)-1, 0);
	return buf;
}
#define TSAFE(s) tsafe((s), (size_t)-1)

static bool related(struct session *s, const char *path)
{
	return devcg_trace_related(s->cgroup, path);
}

static bool keep(struct session *s, enum only kind, uint32_t pid, const char *comm,
		 const char *cg1, const char *cg2)
{
	if (s->only != ONLY_ALL && s->only != kind)
		return false;
	if (s->pid >= 0 && pid != (uint32_t)s->pid)
		return false;
	if (s->comm && strncmp(comm, s->comm, 15))
		return false;
	if (s->cgroup && !devcg_trace_under(cg1, s->cgroup) && !devcg_trace_under(cg2, s->cgroup))
		return false;
	return true;
}

static const char *dev_string(uint32_t type, uint32_t major, uint32_t minor, char *buf, size_t len)
{
	return devcg_trace_dev_string(type, major, minor, buf, len);
}

static const char *source_name(uint32_t src)
{
	return src == DEVCG_SRC_FENTRY ? "fentry" : src == DEVCG_SRC_KPROBE ? "kprobe" : "tracepoint";
}

static json_t *common(struct session *s, const char *type, uint64_t ts, uint32_t pid, uint32_t tid,
		      const char *comm, uint32_t ppid, const char *pcomm, const char *source)
{
	return json_pack("{s:s, s:I, s:I, s:I, s:I, s:o, s:I, s:o, s:s}", "type", type, "ts_ns",
			 (json_int_t)ts, "offset_ns", (json_int_t)(ts - s->start_ns), "pid",
			 (json_int_t)pid, "tid", (json_int_t)tid, "comm", cli_text(comm, strnlen(comm, 16)),
			 "ppid", (json_int_t)ppid, "pcomm", cli_text(pcomm, strnlen(pcomm, 16)), "source", source);
}

static void text_head(struct session *s, uint64_t ts, const char *type, uint32_t pid, const char *comm)
{
	uint64_t off = ts > s->start_ns ? ts - s->start_ns : 0;

	printf("+%llu.%09llu %-15s pid=%u comm=%s", (unsigned long long)(off / 1000000000ull),
	       (unsigned long long)(off % 1000000000ull), type, pid, tsafe(comm, strnlen(comm, 16)));
}

static void emit_write(struct session *s, const struct devcg_trace_event *ev)
{
	enum devcg_hierarchy h = ev->write.file == DEVCG_FILE_FREEZER_STATE ? DEVCG_H_FREEZER
									    : DEVCG_H_DEVICES;
	const char *cg = devcg_cgpaths_lookup(s->paths, h, ev->write.target);
	const char *file = ev->write.file == DEVCG_FILE_DEVICES_ALLOW ? "devices.allow"
			   : ev->write.file == DEVCG_FILE_DEVICES_DENY ? "devices.deny" : "freezer.state";
	char data[DEVCG_EV_DATA + 1];
	size_t n = ev->write.len < DEVCG_EV_DATA ? ev->write.len : DEVCG_EV_DATA;

	memcpy(data, ev->write.data, n);
	while (n && (data[n - 1] == '\n' || data[n - 1] == '\0'))
		n--;
	data[n] = '\0';
	s->seen[N_WRITE]++;
	if (!keep(s, ONLY_WRITES, ev->pid, ev->comm, cg, NULL))
		return;
	s->counts[N_WRITE]++;
	if (s->cli->json) {
		json_t *o = common(s, "cgroup_write", ev->ts_ns, ev->pid, ev->tid, ev->comm, ev->ppid,
				   ev->pcomm, source_name(ev->source));

		json_object_set_new(o, "cgroup", cli_text(cg ? cg : "?", (size_t)-1));
		json_object_set_new(o, "hierarchy", cli_text(h == DEVCG_H_FREEZER ? "freezer" : "devices", (size_t)-1));
		json_object_set_new(o, "file", cli_text(file, (size_t)-1));
		json_object_set_new(o, "data", cli_text(data, n));
		json_object_set_new(o, "len", json_integer(ev->write.len));
		json_object_set_new(o, "ret", json_integer(ev->ret));
		json_object_set_new(o, "enter_ns", json_integer((json_int_t)ev->ts_ns));
		json_object_set_new(o, "exit_ns", json_integer((json_int_t)ev->ts_exit_ns));
		cli_print_json(o);
		return;
	}
	text_head(s, ev->ts_ns, "cgroup_write", ev->pid, ev->comm);
	printf(" parent=%u/%s %s:%s %s '%s' ret=%lld (%llu ns)\n", ev->ppid,
	       tsafe(ev->pcomm, strnlen(ev->pcomm, 16)), h == DEVCG_H_FREEZER ? "freezer" : "devices",
	       TSAFE(cg), file, tsafe(data, n),
	       (long long)ev->ret, (unsigned long long)(ev->ts_exit_ns - ev->ts_ns));
}

static const char *bpf_op(uint32_t cmd)
{
	switch (cmd) {
	case 8: return "prog_attach";
	case 9: return "prog_detach";
	case 28: return "link_create";
	case 29: return "link_update";
	case 34: return "link_detach";
	}
	return "?";
}

static void emit_bpf(struct session *s, const struct devcg_trace_event *ev)
{
	const char *cg = devcg_cgpaths_lookup(s->paths, DEVCG_H_V2, ev->bpf.target);
	json_t *flags = json_array(), *ids = json_array();
	char text[64] = "";

	s->seen[N_BPF]++;
	if (ev->ret >= 0 && ev->bpf.prog_id && s->nfollow < 64 && (!cg || related(s, cg)))
		s->follow[s->nfollow++] = ev->bpf.prog_id;
	if (ev->bpf.attach_flags & BPF_F_ALLOW_MULTI)
		json_array_append_new(flags, cli_text("multi", (size_t)-1)), strcat(text, "multi,");
	if (ev->bpf.attach_flags & BPF_F_ALLOW_OVERRIDE)
		json_array_append_new(flags, cli_text("override", (size_t)-1)), strcat(text, "override,");
	if (ev->bpf.attach_flags & BPF_F_REPLACE || ev->bpf.cmd == 29)
		json_array_append_new(flags, cli_text("replace", (size_t)-1)), strcat(text, "replace,");
	if (ev->bpf.prog_id)
		json_array_append_new(ids, json_integer(ev->bpf.prog_id));
	if (ev->bpf.replace_id)
		json_array_append_new(ids, json_integer(ev->bpf.replace_id));
	if (!keep(s, ONLY_WRITES, ev->pid, ev->comm, NULL, cg)) {
		json_decref(flags);
		json_decref(ids);
		return;
	}
	s->counts[N_BPF]++;
	if (s->cli->json) {
		json_t *o = common(s, "bpf_prog_change", ev->ts_ns, ev->pid, ev->tid, ev->comm, ev->ppid,
				   ev->pcomm, "tracepoint");

		json_object_set_new(o, "cgroup", cli_text(cg ? cg : "?", (size_t)-1));
		json_object_set_new(o, "op", cli_text(bpf_op(ev->bpf.cmd), (size_t)-1));
		json_object_set_new(o, "flags", flags);
		json_object_set_new(o, "prog_ids", ids);
		if (ev->bpf.link_id)
			json_object_set_new(o, "link_id", json_integer(ev->bpf.link_id));
		json_object_set_new(o, "ret", json_integer(ev->ret));
		cli_print_json(o);
		return;
	}
	json_decref(flags);
	json_decref(ids);
	if (text[0])
		text[strlen(text) - 1] = '\0';
	text_head(s, ev->ts_ns, "bpf_prog_change", ev->pid, ev->comm);
	printf(" %s cgroup:%s flags=%s prog=%u replaced=%u ret=%lld\n", bpf_op(ev->bpf.cmd),
	       TSAFE(cg), text[0] ? text : "none", ev->bpf.prog_id, ev->bpf.replace_id,
	       (long long)ev->ret);
}

static void emit_open(struct session *s, const struct devcg_trace_event *ev, bool has_dev,
		      uint32_t type, uint32_t major, uint32_t minor)
{
	const char *cg2 = devcg_cgpaths_lookup(s->paths, DEVCG_H_V2, ev->cgroup_id);
	const char *cg1 = devcg_cgpaths_lookup(s->paths, DEVCG_H_DEVICES, ev->devices_cg);
	char dev[32], acc[4];

	s->seen[N_OPEN]++;
	if (!keep(s, ONLY_DENIALS, ev->pid, ev->comm, cg1, cg2))
		return;
	s->counts[N_OPEN]++;
	if (s->metrics)
		devcg_metrics_refused_open(s->metrics, cg2, cg1, has_dev ? dev_string(type, major, minor, dev,
										    sizeof(dev)) : NULL);
	devcg_access_format(devcg_open_access(ev->open.oflags), acc);
	if (s->cli->json) {
		json_t *o = common(s, "open_denied", ev->ts_ns, ev->pid, ev->tid, ev->comm, ev->ppid,
				   ev->pcomm, "tracepoint");

		json_object_set_new(o, "path", cli_text(ev->open.path, strnlen(ev->open.path, DEVCG_EV_PATH)));
		json_object_set_new(o, "cgroup", cli_text(cg2 ? cg2 : "?", (size_t)-1));
		if (cg1)
			json_object_set_new(o, "devices_cgroup", cli_text(cg1, (size_t)-1));
		if (has_dev)
			json_object_set_new(o, "dev", cli_text(dev_string(type, major, minor, dev, sizeof(dev)), (size_t)-1));
		json_object_set_new(o, "access", cli_text(acc, (size_t)-1));
		json_object_set_new(o, "ret", json_integer(ev->ret));
		cli_print_json(o);
		return;
	}
	text_head(s, ev->ts_ns, "open_denied", ev->pid, ev->comm);
	printf(" %s%s%s access=%s cgroup:%s%s%s\n", tsafe(ev->open.path, strnlen(ev->open.path, 128)),
	       has_dev ? " dev=" : "", has_dev ? dev_string(type, major, minor, dev, sizeof(dev)) : "",
	       acc, TSAFE(cg2), cg1 ? " devices:" : "", cg1 ? TSAFE(cg1) : "");
}

/* A denial from the kernel's permission check (kprobe or fentry). */
static void emit_check(struct session *s, const struct devcg_trace_event *ev)
{
	const char *cg2 = devcg_cgpaths_lookup(s->paths, DEVCG_H_V2, ev->cgroup_id);
	const char *cg1 = devcg_cgpaths_lookup(s->paths, DEVCG_H_DEVICES, ev->devices_cg);
	char dev[32], acc[4];

	s->seen[N_DEVICE]++;
	if (!keep(s, ONLY_DENIALS, ev->pid, ev->comm, cg1, cg2))
		return;
	s->counts[N_DEVICE]++;
	dev_string(ev->check.type, ev->check.major, ev->check.minor, dev, sizeof(dev));
	devcg_access_format(ev->check.access, acc);
	if (s->cli->json) {
		json_t *o = common(s, "device_denied", ev->ts_ns, ev->pid, ev->tid, ev->comm, ev->ppid,
				   ev->pcomm, source_name(ev->source));

		json_object_set_new(o, "cgroup", cli_text(cg2 ? cg2 : "?", (size_t)-1));
		if (cg1)
			json_object_set_new(o, "devices_cgroup", cli_text(cg1, (size_t)-1));
		json_object_set_new(o, "dev", cli_text(dev, (size_t)-1));
		json_object_set_new(o, "access", cli_text(acc, (size_t)-1));
		json_object_set_new(o, "decision", cli_text("deny", (size_t)-1));
		json_object_set_new(o, "ret", json_integer(ev->ret));
		cli_print_json(o);
		return;
	}
	text_head(s, ev->ts_ns, "device_denied", ev->pid, ev->comm);
	printf(" %s access=%s cgroup:%s (%s)\n", dev, acc, TSAFE(cg2), source_name(ev->source));
}

/* A denial reported by a devcg filter loaded with --audit. */
static void emit_audit(struct session *s, const struct devcg_audit_event *a)
{
	const char *cg = devcg_cgpaths_lookup(s->paths, DEVCG_H_V2, a->cgroup_id);
	struct devcg_exception ex = { .type = (uint8_t)a->decider.type, .access = (uint8_t)a->decider_access,
				      .major = a->decider.major, .minor = a->decider.minor };
	char dev[32], acc[4], exc[64] = "";
	char comm[16];

	memcpy(comm, a->comm, 16);
	comm[15] = '\0';
	s->seen[N_DEVICE]++;
	if (!keep(s, ONLY_DENIALS, a->pid, comm, NULL, cg))
		return;
	s->counts[N_DEVICE]++;
	dev_string(a->type, a->major, a->minor, dev, sizeof(dev));
	devcg_access_format(a->access, acc);
	if (a->decided)
		cli_format_exception(&ex, exc, sizeof(exc));
	if (s->cli->json) {
		json_t *o = common(s, "device_denied", a->ts_ns, a->pid, a->tid, comm, 0, "", "audit");

		json_object_set_new(o, "cgroup", cli_text(cg ? cg : "?", (size_t)-1));
		json_object_set_new(o, "dev", cli_text(dev, (size_t)-1));
		json_object_set_new(o, "access", cli_text(acc, (size_t)-1));
		json_object_set_new(o, "decision", cli_text("deny", (size_t)-1));
		json_object_set_new(o, "decided_by", cli_text(a->decided ? "exception" : "default", (size_t)-1));
		if (a->decided)
			json_object_set_new(o, "exception", cli_text(exc, (size_t)-1));
		cli_print_json(o);
		return;
	}
	text_head(s, a->ts_ns, "device_denied", a->pid, comm);
	printf(" %s access=%s cgroup:%s by %s%s%s\n", dev, acc, TSAFE(cg),
	       a->decided ? "exception '" : "the default", exc, a->decided ? "'" : "");
}

static void on_gap(void *ctx, const struct devcg_gap *g)
{
	struct session *s = ctx;
	uint64_t window = g->end_ns - g->start_ns;
	char dev[32];
	uint32_t i;

	s->seen[N_GAP]++;
	if (!keep(s, ONLY_GAP, g->writer_pid, g->writer_comm, g->cgroup, g->cgroup))
		return;
	s->counts[N_GAP]++;
	if (s->metrics)
		devcg_metrics_gap(s->metrics, g);
	if (s->journal)
		devcg_journal_gap(g);
	if (s->cli->json) {
		json_t *devs = json_array();
		json_t *o = common(s, "gap", g->start_ns, g->writer_pid, g->writer_pid, g->writer_comm,
				   g->writer_ppid, g->writer_pcomm,
				   g->kind == DEVCG_GAP_V1_DENY_ALL ? "cgroup_write" : "bpf_prog_change");

		for (i = 0; i < g->ndevices; i++)
			json_array_append_new(devs, cli_text(dev_string(g->devices[i].type, g->devices[i].major,
									   g->devices[i].minor, dev, sizeof(dev)), (size_t)-1));
		json_object_set_new(o, "kind", cli_text(devcg_gap_kind_name(g), (size_t)-1));
		json_object_set_new(o, "cgroup", cli_text(g->cgroup, (size_t)-1));
		json_object_set_new(o, "writer_pid", json_integer(g->writer_pid));
		json_object_set_new(o, "writer_comm", cli_text(g->writer_comm, strnlen(g->writer_comm, 16)));
		json_object_set_new(o, "writer_ppid", json_integer(g->writer_ppid));
		json_object_set_new(o, "writer_pcomm", cli_text(g->writer_pcomm, strnlen(g->writer_pcomm, 16)));
		json_object_set_new(o, "start_ns", json_integer((json_int_t)g->start_ns));
		json_object_set_new(o, "end_ns", json_integer((json_int_t)g->end_ns));
		json_object_set_new(o, "window_ns", json_integer((json_int_t)window));
		json_object_set_new(o, "rules", json_integer(g->rules));
		json_object_set_new(o, "denied", json_integer((json_int_t)g->denied));
		if (g->denied) {
			json_object_set_new(o, "first_denied_offset_ns",
					    json_integer((json_int_t)(g->first_denied_ns - g->start_ns)));
			json_object_set_new(o, "last_denied_offset_ns",
					    json_integer((json_int_t)(g->last_denied_ns - g->start_ns)));
		}
		json_object_set_new(o, "devices", devs);
		json_object_set_new(o, "freeze", cli_text(g->freeze, (size_t)-1));
		json_object_set_new(o, "lost", json_boolean(g->lost));
		cli_print_json(o);
		return;
	}
	text_head(s, g->start_ns, "gap", g->writer_pid, g->writer_comm);
	printf(" %s %s:%s window=%llu ns writer=%u/%s parent=%u/%s rules=%u denied=%llu",
	       g->kind == DEVCG_GAP_V1_DENY_ALL ? "deny-all (v1)" : "no filter (v2)",
	       g->kind == DEVCG_GAP_V1_DENY_ALL ? "devices" : "cgroup", TSAFE(g->cgroup),
	       (unsigned long long)window, g->writer_pid,
	       tsafe(g->writer_comm, strnlen(g->writer_comm, 16)), g->writer_ppid,
	       tsafe(g->writer_pcomm, strnlen(g->writer_pcomm, 16)), g->rules, (unsigned long long)g->denied);
	if (g->denied)
		printf(" first=+%llu ns last=+%llu ns", (unsigned long long)(g->first_denied_ns - g->start_ns),
		       (unsigned long long)(g->last_denied_ns - g->start_ns));
	for (i = 0; i < g->ndevices; i++)
		printf("%s%s", i ? "," : " devices=",
		       dev_string(g->devices[i].type, g->devices[i].major, g->devices[i].minor, dev, sizeof(dev)));
	printf(" freeze=%s%s\n", g->freeze, g->lost ? " (events were lost: incomplete)" : "");
}

static const char *owner_name(int owner)
{
	return devcg_prog_owner_name(owner);
}

static json_t *json_progs(const struct devcg_revoke_prog *p, uint32_t n)
{
	json_t *a = json_array();
	uint32_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_pack("{s:I, s:s}", "id", (json_int_t)p[i].id, "owner",
						   owner_name(p[i].owner)));
	return a;
}

static void text_progs(const char *name, const struct devcg_revoke_prog *p, uint32_t n)
{
	uint32_t i;

	printf(" %s=", name);
	for (i = 0; i < n; i++)
		printf("%s%u:%s", i ? "," : "", p[i].id, owner_name(p[i].owner));
	if (!n)
		printf("none");
}

/* A foreign program change after which devcg's grants were refused. */
static void on_revoke(void *ctx, const struct devcg_revoke *rv)
{
	struct session *s = ctx;
	char dev[32], acc[4];
	uint32_t i;

	s->seen[N_REVOKE]++;
	if (!keep(s, ONLY_REVOKE, rv->writer_pid, rv->writer_comm, rv->cgroup, rv->cgroup))
		return;
	s->counts[N_REVOKE]++;
	if (s->metrics)
		devcg_metrics_revoke(s->metrics, rv);
	if (s->journal)
		devcg_journal_revoke(rv);
	if (s->cli->json) {
		json_t *devs = json_array(), *victims = json_array();
		json_t *o = common(s, "revoke", rv->start_ns, rv->writer_pid, rv->writer_pid, rv->writer_comm,
				   rv->writer_ppid, rv->writer_pcomm, "bpf_prog_change");

		for (i = 0; i < rv->ndevices; i++) {
			devcg_access_format(rv->devices[i].access, acc);
			json_array_append_new(devs, json_pack("{s:o, s:s, s:I}", "dev",
				cli_text(dev_string(rv->devices[i].type, rv->devices[i].major, rv->devices[i].minor,
						    dev, sizeof(dev)), (size_t)-1),
				"access", acc, "count", (json_int_t)rv->devices[i].count));
		}
		for (i = 0; i < rv->nvictims; i++)
			json_array_append_new(victims, json_pack("{s:I, s:o}", "pid", (json_int_t)rv->victims[i].pid,
				"comm", cli_text(rv->victims[i].comm, strnlen(rv->victims[i].comm, 16))));
		json_object_set_new(o, "cgroup", cli_text(rv->cgroup, (size_t)-1));
		json_object_set_new(o, "writer_pid", json_integer(rv->writer_pid));
		json_object_set_new(o, "writer_comm", cli_text(rv->writer_comm, strnlen(rv->writer_comm, 16)));
		json_object_set_new(o, "writer_ppid", json_integer(rv->writer_ppid));
		json_object_set_new(o, "writer_pcomm", cli_text(rv->writer_pcomm, strnlen(rv->writer_pcomm, 16)));
		json_object_set_new(o, "start_ns", json_integer((json_int_t)rv->start_ns));
		json_object_set_new(o, "end_ns", json_integer((json_int_t)rv->end_ns));
		json_object_set_new(o, "window_ns", json_integer((json_int_t)(rv->end_ns - rv->start_ns)));
		json_object_set_new(o, "changes", json_integer(rv->changes));
		json_object_set_new(o, "progs_before", json_progs(rv->before, rv->nbefore));
		json_object_set_new(o, "progs_after", json_progs(rv->after, rv->nafter));
		json_object_set_new(o, "denied", json_integer((json_int_t)rv->denied));
		json_object_set_new(o, "first_denied_offset_ns",
				    json_integer((json_int_t)(rv->first_denied_ns - rv->start_ns)));
		json_object_set_new(o, "last_denied_offset_ns",
				    json_integer((json_int_t)(rv->last_denied_ns - rv->start_ns)));
		json_object_set_new(o, "devices", devs);
		json_object_set_new(o, "victims", victims);
		json_object_set_new(o, "lost", json_boolean(rv->lost));
		cli_print_json(o);
		return;
	}
	text_head(s, rv->start_ns, "revoke", rv->writer_pid, rv->writer_comm);
	printf(" cgroup:%s", TSAFE(rv->cgroup));
	printf(" writer=%u/%s", rv->writer_pid, tsafe(rv->writer_comm, strnlen(rv->writer_comm, 16)));
	printf(" parent=%u/%s changes=%u", rv->writer_ppid,
	       tsafe(rv->writer_pcomm, strnlen(rv->writer_pcomm, 16)), rv->changes);
	text_progs("before", rv->before, rv->nbefore);
	text_progs("after", rv->after, rv->nafter);
	printf(" denied=%llu first=+%llu ns last=+%llu ns", (unsigned long long)rv->denied,
	       (unsigned long long)(rv->first_denied_ns - rv->start_ns),
	       (unsigned long long)(rv->last_denied_ns - rv->start_ns));
	for (i = 0; i < rv->ndevices; i++) {
		devcg_access_format(rv->devices[i].access, acc);
		printf("%s%s %s x%llu", i ? "," : " devices=",
		       dev_string(rv->devices[i].type, rv->devices[i].major, rv->devices[i].minor, dev, sizeof(dev)),
		       acc, (unsigned long long)rv->devices[i].count);
	}
	for (i = 0; i < rv->nvictims; i++)
		printf("%s%u/%s", i ? "," : " victims=", rv->victims[i].pid,
		       tsafe(rv->victims[i].comm, strnlen(rv->victims[i].comm, 16)));
	printf(" window=%llu ns%s\n", (unsigned long long)(rv->end_ns - rv->start_ns),
	       rv->lost ? " (events were lost: incomplete)" : "");
}

static void dispatch(struct session *s, const struct devcg_trace_event *ev,
		     const struct devcg_audit_event *a)
{
	uint32_t type = 0, major = 0, minor = 0;
	bool has_dev = false;

	if (a) {
		emit_audit(s, a);
		return;
	}
	switch (ev->type) {
	case DEVCG_EV_CGROUP_WRITE:
		emit_write(s, ev);
		break;
	case DEVCG_EV_BPF_PROG_CHANGE:
		emit_bpf(s, ev);
		break;
	case DEVCG_EV_OPEN_DENIED:
		has_dev = devcg_trace_path_device(ev, &type, &major, &minor);
		emit_open(s, ev, has_dev, type, major, minor);
		break;
	case DEVCG_EV_DEV_CHECK:
		emit_check(s, ev);
		break;
	}
	devcg_gaps_feed(s->gaps, ev, type, major, minor, s->lost.ringbuf + s->lost.read);
	devcg_revokes_feed(s->revokes, ev, type, major, minor, s->lost.ringbuf + s->lost.read);
}

static int on_event(void *ctx, const struct devcg_trace_event *ev, const struct devcg_audit_event *a)
{
	struct session *s = ctx;

	if (devcg_trace_queue_push(&s->queue, ev, a))
		return -ENOMEM;
	/* the program may be replaced and freed before its turn comes */
	if (!a)
		devcg_revokes_note(s->revokes, ev);
	return 0;
}

static void dispatch_one(void *ctx, const struct devcg_trace_event *ev, const struct devcg_audit_event *a)
{
	dispatch(ctx, ev, a);
}

/* Handle the waiting events older than BEFORE_NS (all, with 0), in order. */
static void drain(struct session *s, uint64_t before_ns)
{
	devcg_trace_queue_drain(&s->queue, before_ns, dispatch_one, s);
}

/* A reader that went away or a full disk ends the trace: what follows
 * would be lost, and the summary could not be told. */
static bool out_failed(struct cli *cli)
{
	errno = 0;
	if (!fflush(stdout) && !ferror(stdout))
		return false;
	cli->out_errno = errno;
	return true;
}

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cgroup", required_argument, NULL, 'c' },
		{ "pid", required_argument, NULL, 'p' },
		{ "comm", required_argument, NULL, 'C' },
		{ "duration", required_argument, NULL, 'd' },
		{ "only", required_argument, NULL, 'o' },
		{ "hooks", required_argument, NULL, 'H' },
		{ "stats", no_argument, NULL, 's' },
		{ "metrics", required_argument, NULL, 'M' },
		{ "metrics-interval", required_argument, NULL, 'I' },
		{ "journal", no_argument, NULL, 'J' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct devcg_tracer_opts to = { .sz = sizeof(to), .mount_tracefs = true };
	struct session s = { .cli = cli, .pid = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct devcg_error err = { 0 };
	double duration = 0, interval = 0;
	const char *metrics = NULL;
	uint64_t deadline = 0, now;
	char *end;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'c': s.cgroup = optarg; break;
		case 'p':
			s.pid = strtol(optarg, &end, 10);
			if (*end || s.pid < 0)
				return cli_usage(cli, "--pid takes a process id, not '%s'", optarg);
			break;
		case 'C': s.comm = optarg; break;
		case 'd':
			duration = strtod(optarg, &end);
			if (*end || !(duration > 0 && duration <= 1e7))
				return cli_usage(cli, "--duration takes seconds, more than 0 and at most 1e7, not '%s'",
						 optarg);
			break;
		case 'o':
			if (!strcmp(optarg, "gap"))
				s.only = ONLY_GAP;
			else if (!strcmp(optarg, "revoke"))
				s.only = ONLY_REVOKE;
			else if (!strcmp(optarg, "writes"))
				s.only = ONLY_WRITES;
			else if (!strcmp(optarg, "denials"))
				s.only = ONLY_DENIALS;
			else
				return cli_usage(cli, "--only takes gap, revoke, writes or denials, not '%s'", optarg);
			break;
		case 'H':
			if (!strcmp(optarg, "auto"))
				to.hooks = DEVCG_HOOKS_AUTO;
			else if (!strcmp(optarg, "tracepoint"))
				to.hooks = DEVCG_HOOKS_TRACEPOINT;
			else if (!strcmp(optarg, "kprobe"))
				to.hooks = DEVCG_HOOKS_KPROBE;
			else if (!strcmp(optarg, "fentry"))
				to.hooks = DEVCG_HOOKS_FENTRY;
			else
				return cli_usage(cli, "--hooks takes auto, tracepoint, kprobe or fentry");
			break;
		case 's': to.stats = true; break;
		case 'M': metrics = optarg; break;
		case 'I':
			interval = strtod(optarg, &end);
			if (*end || !(interval >= 0.1 && interval <= 86400))
				return cli_usage(cli, "--metrics-interval takes seconds, from 0.1 to 86400, not '%s'",
						 optarg);
			break;
		case 'J': s.journal = true; break;
		case 'j': cli->json = true; break;
		case 'h': return cli_help(&verb_trace);
		default: return cli_bad_option(cli, argv, "jh");
		}
	}
	if (optind != argc)
		return cli_usage(cli, "unexpected argument '%s'", argv[optind]);
	if (interval && !metrics)
		return cli_usage(cli, "--metrics-interval needs --metrics FILE");
	/* --cgroup as the other verbs take it, and the trace names cgroups:
	 * by its path below its hierarchy's root */
	s.paths = devcg_cgpaths_new();
	if (s.paths && s.cgroup) {
		ret = devcg_cgpaths_resolve(s.paths, s.cgroup, s.cgroup_rel, sizeof(s.cgroup_rel), &err);
		if (ret) {
			devcg_cgpaths_free(s.paths);
			return cli_fail(cli, ret, &err);
		}
		s.cgroup = s.cgroup_rel;
	}
	/* a file or a journal that cannot be written fails before anything is attached */
	ret = s.journal ? devcg_journal_check(&err) : 0;
	if (!ret && metrics && !(s.metrics = devcg_metrics_new()))
		ret = devcg_err(&err, -ENOMEM, "out of memory");
	if (!ret && metrics)
		ret = devcg_metrics_open(s.metrics, metrics, (uint64_t)(interval * 1e9), &err);
	if (!ret)
		ret = devcg_tracer_open(&s.tracer, &to, &err);
	if (ret) {
		devcg_cgpaths_free(s.paths);
		devcg_metrics_free(s.metrics);
		return cli_fail(cli, ret, &err);
	}
	/* the tracer's start: an audit denial queued before it is not reported */
	s.start_ns = devcg_tracer_start_ns(s.tracer);
	s.gaps = s.paths ? devcg_gaps_new(s.paths, on_gap, &s) : NULL;
	s.revokes = s.paths ? devcg_revokes_new(s.paths, NULL, on_revoke, &s) : NULL;
	if (!s.gaps || !s.revokes) {
		ret = cli_failf(cli, -ENOMEM, "out of memory");
		goto out;
	}
	devcg_gaps_seed_v2(s.gaps);
	devcg_revokes_seed_v2(s.revokes);
	devcg_trace_follow_existing(s.tracer, s.paths, s.cgroup, on_event, &s);
	if (cli->json) {
		json_t *o = json_pack("{s:s, s:I, s:i, s:s, s:s, s:o}", "type", "hooks", "ts_ns",
				      (json_int_t)trace_mono_ns(), "pid", (int)getpid(), "comm", "devcg", "writes",
				      source_name((uint32_t)devcg_tracer_write_source(s.tracer)), "why",
				      cli_text(devcg_tracer_hooks(s.tracer), (size_t)-1));

		cli_print_json(o);
	} else {
		const char *hooks = devcg_tracer_hooks(s.tracer);
		size_t n = strlen(hooks);

		/* on lines of their own: what follows never continues the last */
		fprintf(stderr, "devcg trace: hooks chosen:\n%s%s", hooks, n && hooks[n - 1] != '\n' ? "\n" : "");
	}
	if (out_failed(cli)) {
		ret = EXIT_ERROR;
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (duration > 0)
		deadline = s.start_ns + (uint64_t)(duration * 1e9);
	while (!stop && (!deadline || trace_mono_ns() < deadline)) {
		ret = devcg_tracer_poll(s.tracer, 50, on_event, &s);
		if (ret < 0) {
			ret = cli_failf(cli, ret, "reading events: %s", strerror(-ret));
			goto out;
		}
		/* ring_buffer__add() may not run inside ring_buffer__poll() */
		while (s.nfollow)
			devcg_tracer_follow_audit(s.tracer, s.follow[--s.nfollow], on_event, &s);
		devcg_tracer_losses(s.tracer, &s.lost);
		now = trace_mono_ns();
		drain(&s, now - REORDER_NS);
		devcg_gaps_flush(s.gaps, now - REORDER_NS);
		if (s.metrics) {
			devcg_metrics_losses(s.metrics, &s.lost);
			if (devcg_metrics_tick(s.metrics, now, &err))
				fprintf(stderr, "devcg trace: warning: %s\n", err.msg);
		}
		if (out_failed(cli)) {
			ret = EXIT_ERROR; /* main says why, once */
			goto out;
		}
	}
	/* what is still in the ring buffer, then every open window */
	devcg_tracer_poll(s.tracer, 0, on_event, &s);
	devcg_tracer_losses(s.tracer, &s.lost);
	drain(&s, 0);
	devcg_gaps_flush(s.gaps, 0);
	devcg_revokes_flush(s.revokes, trace_mono_ns());
	trace_summary(&s, trace_mono_ns() - s.start_ns, to.stats);
	ret = EXIT_OK;
	if (s.metrics) {
		devcg_metrics_losses(s.metrics, &s.lost);
		if (devcg_metrics_write(s.metrics, &err))
			ret = cli_fail(cli, err.code, &err);
	}
out:
	devcg_gaps_free(s.gaps);
	devcg_revokes_free(s.revokes);
	devcg_cgpaths_free(s.paths);
	devcg_tracer_close(s.tracer);
	devcg_trace_queue_free(&s.queue);
	devcg_metrics_free(s.metrics);
	return ret;
}

const struct verb verb_trace = {
	.name = "trace",
	.run = run,
	.summary = "watch device-rule changes and EPERM opens; report permission gaps and revocations",
	.usage =
	"Usage: devcg trace [-j] [--cgroup CGROUP] [--pid PID] [--comm NAME]\n"
	"                   [--duration SECONDS] [--only gap|revoke|writes|denials]\n"
	"                   [--hooks auto|tracepoint|kprobe|fentry] [--stats]\n"
	"                   [--metrics FILE [--metrics-interval SECONDS]] [--journal]\n\n"
	"Trace writes to cgroup v1 devices.allow, devices.deny and freezer.state,\n"
	"bpf(2) changes of cgroup device programs, opens that fail with EPERM, and\n"
	"the denials of devcg filters loaded with --audit; and report each permission\n"
	"gap: a 'deny a' (or a v2 detach that leaves no filter) and the writes that\n"
	"follow, with its writer, width, rules replayed and the opens it refused;\n"
	"and each revocation: a device program another process attached, replaced\n"
	"or linked, after which opens were refused that every devcg filter applying\n"
	"to the opener allows, with the writer, the programs before and after, and\n"
	"the devices refused since (named only where a devcg filter applies).\n"
	"It tries fentry, then kprobes, then syscall tracepoints, and says which it\n"
	"chose and why. Ends on Ctrl-C or --duration with a summary of what happened\n"
	"during the trace: events by type, gaps and revocations shown (with\n"
	"--cgroup, --pid, --comm or --only, also those seen before they filtered),\n"
	"events lost (trace ring buffers, reads: of every cgroup; audit rings) and\n"
	"audit denials queued before it began (skipped).\n\n"
	"Options:\n"
	"      --cgroup CGROUP    only events of this cgroup and below: a cgroup v2\n"
	"                         directory, absolute or relative to the cgroup2\n"
	"                         mount (as the other verbs take it), a cgroup v1\n"
	"                         devices or freezer directory, or a path below a\n"
	"                         hierarchy's root as the trace names cgroups\n"
	"                         (/mycontainer); its path is matched in every\n"
	"                         hierarchy; one that does not exist is refused.\n"
	"                         Only the audit rings of filters on it, above or\n"
	"                         below it are read\n"
	"      --pid PID          only events of this process\n"
	"      --comm NAME        only events of this command name\n"
	"      --duration SECONDS stop after this long\n"
	"      --only KIND        only gaps, revocations (revoke), writes (cgroup_write,\n"
	"                         bpf_prog_change) or denials (open_denied,\n"
	"                         device_denied)\n"
	"      --hooks KIND       use only this kind of hook (default auto)\n"
	"      --stats            report each trace program's run count and run time\n"
	"      --metrics FILE     keep FILE as Prometheus text-format counters (for\n"
	"                         node_exporter's textfile collector) of gaps,\n"
	"                         revocations, refused opens by cgroup and device,\n"
	"                         and lost events: replaced whole (never half\n"
	"                         written) when something changed, and at the end;\n"
	"                         counts what is shown (--cgroup, --pid, --comm,\n"
	"                         --only); a FILE that cannot be written is refused\n"
	"                         before anything is attached\n"
	"      --metrics-interval SECONDS\n"
	"                         rewrite FILE at most this often (default 5)\n"
	"      --journal          log each gap and revocation to the systemd journal\n"
	"                         with DEVCG_* fields (devcg-trace.service does)\n"
	"  -j, --json             one JSON object per line: every event has type,\n"
	"                         ts_ns, pid, comm; a summary object ends the output\n"
	"  -h, --help             this help\n\n"
	"Examples:\n"
	"  devcg trace --only gap\n"
	"  devcg trace --only revoke --cgroup /system.slice/gpu.service\n"
	"  devcg trace -j --cgroup /mycontainer --duration 60\n"
	"  devcg trace --stats --duration 10\n"
	"  devcg trace --journal --metrics /var/lib/prometheus/node-exporter/devcg-trace.prom\n",
};

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The kernel side of devcg trace, chosen at run time by trying each kind
 * of hook for real: fentry/fexit, then kprobes, then syscall tracepoints.
 * Whatever is chosen fills the same event struct into one ring buffer.
 */
#include "internal.h"
#include "trace.h"
#include "devcg_trace_tp.skel.h"
#include "devcg_trace_kprobe.skel.h"
#include "devcg_trace_fentry.skel.h"
#include "devcg_trace_sys.skel.h"

#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define MAX_LINKS 16
#define MAX_AUDIT 64

struct devcg_tracer {
	struct devcg_trace_tp *tp;
	struct devcg_trace_kprobe *kp;
	struct devcg_trace_fentry *fe;
	struct devcg_trace_sys *sys;
	struct bpf_link *links[MAX_LINKS];
	const struct bpf_program *progs[MAX_LINKS];
	int nlinks;
	struct ring_buffer *rb;
	devcg_trace_cb cb;
	void *cb_ctx;
	int stats_fd;
	int write_source;
	int seen;
	/* which hooks were chosen and why, a line each: as long as it takes */
	char *hooks;
	size_t hooks_len;
	uint64_t start_ns;
	uint32_t audit_ids[MAX_AUDIT];
	int audit_fds[MAX_AUDIT];
	int audit_lost_fds[MAX_AUDIT];
	/* a filter's loss counter and ring outlive the trace: both are shared
	 * by every version of the cgroup's filter since the first (filter.c) */
	uint64_t audit_lost_base[MAX_AUDIT];
	uint64_t audit_before_start;
	int naudit;
};

/* Add a line to the hooks note: whole, with its newline (out of memory,
 * the line is left out; a line is never cut, nor glued to the next). */
__attribute__((format(printf, 2, 3)))
static void note(struct devcg_tracer *t, const char *fmt, ...)
{
	char *line = NULL, *more;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&line, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	more = realloc(t->hooks, t->hooks_len + (size_t)n + 2);
	if (more) {
		t->hooks = more;
		memcpy(t->hooks + t->hooks_len, line, (size_t)n);
		t->hooks_len += (size_t)n;
		t->hooks[t->hooks_len++] = '\n';
		t->hooks[t->hooks_len] = '\0';
	}
	free(line);
}

static bool tracefs_ready(void)
{
	return !access("/sys/kernel/tracing/events/syscalls", F_OK) ||
	       !access("/sys/kernel/debug/tracing/events/syscalls", F_OK);
}

/* libbpf finds tracepoints through tracefs; mount it where only we see it. */
static int ensure_tracefs(struct devcg_tracer *t, bool may_mount, struct devcg_error *err)
{
	if (tracefs_ready())
		return 0;
	if (!may_mount)
		return devcg_err(err, -ENOENT, "tracefs is not mounted (/sys/kernel/tracing)");
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return devcg_err(err, -errno, "tracefs is not mounted and mounting it failed: %s",
				 devcg_why(-errno, DEVCG_CAPS_TRACE));
	note(t, "tracefs: was not mounted; mounted in devcg's own mount namespace");
	return tracefs_ready() ? 0 : devcg_err(err, -ENOENT, "tracefs has no syscall tracepoints");
}

static int attach_prog(struct devcg_tracer *t, struct bpf_program *prog, struct devcg_error *err)
{
	struct bpf_link *link;

	if (t->nlinks == MAX_LINKS)
		return devcg_err(err, -E2BIG, "too many trace programs");
	link = bpf_program__attach(prog);
	if (!link) {
		int ret = -errno;

		return devcg_err(err, ret, "cannot attach %s: %s", bpf_program__name(prog),
				 devcg_why(ret, DEVCG_CAPS_TRACE));
	}
	t->links[t->nlinks] = link;
	t->progs[t->nlinks++] = prog;
	return 0;
}

static void detach_from(struct devcg_tracer *t, int first)
{
	while (t->nlinks > first) {
		t->nlinks--;
		bpf_link__destroy(t->links[t->nlinks]);
	}
}

/* Make a variant's ring buffer and loss counters those of the tp object. */
static int share_maps(struct devcg_tracer *t, struct bpf_map *events, struct bpf_map *denials,
		      struct bpf_map *lost)
{
	return bpf_map__reuse_fd(events, bpf_map__fd(t->tp->maps.events)) ?:
	       bpf_map__reuse_fd(denials, bpf_map__fd(t->tp->maps.denials)) ?:
	       bpf_map__reuse_fd(lost, bpf_map__fd(t->tp->maps.lost));
}

static int try_fentry(struct devcg_tracer *t, bool attach, struct devcg_error *err)
{
	int first = t->nlinks, ret;
	struct devcg_bpf_log bl;

	/* a probe of its own: libbpf's words on why this hook failed go with it */
	devcg_bpf_log_begin(&bl);
	t->fe = devcg_trace_fentry__open();
	if (!t->fe) {
		ret = devcg_err(err, -errno, "fentry: cannot open: %s", strerror(errno));
		return devcg_bpf_log_end(&bl, ret, err);
	}
	ret = share_maps(t, t->fe->maps.events, t->fe->maps.denials, t->fe->maps.lost);
	if (!ret && (ret = devcg_trace_fentry__load(t->fe)))
		devcg_err(err, ret, "fentry: loading refused: %s", devcg_why(ret, DEVCG_CAPS_TRACE));
	if (!ret && attach &&
	    (ret = attach_prog(t, t->fe->progs.devcg_fx_cgroup_write, err) ?:
		   attach_prog(t, t->fe->progs.devcg_fe_cgroup_write, err) ?:
		   attach_prog(t, t->fe->progs.devcg_fx_check, err)))
		devcg_err_wrap(err, ret, "fentry: attach failed");
	if (ret) {
		detach_from(t, first);
		devcg_trace_fentry__destroy(t->fe);
		t->fe = NULL;
	}
	return devcg_bpf_log_end(&bl, ret, err);
}

/* bpf(2) and the open syscalls on fentry/fexit instead of tracepoints. */
static int try_sys(struct devcg_tracer *t, struct devcg_error *err)
{
	int first = t->nlinks, ret;
	struct devcg_bpf_log bl;

	devcg_bpf_log_begin(&bl);
	t->sys = devcg_trace_sys__open();
	if (!t->sys) {
		ret = devcg_err(err, -errno, "cannot open: %s", strerror(errno));
		return devcg_bpf_log_end(&bl, ret, err);
	}
	ret = share_maps(t, t->sys->maps.events, t->sys->maps.denials, t->sys->maps.lost);
	if (!ret && (ret = devcg_trace_sys__load(t->sys)))
		devcg_err(err, ret, "loading refused: %s", devcg_why(ret, DEVCG_CAPS_TRACE));
	/* exits first: an entry is never recorded without its exit */
	if (!ret && (ret = attach_prog(t, t->sys->progs.devcg_fx_sys_bpf, err) ?:
			   attach_prog(t, t->sys->progs.devcg_fe_sys_bpf, err) ?:
			   attach_prog(t, t->sys->progs.devcg_fx_sys_openat, err) ?:
			   attach_prog(t, t->sys->progs.devcg_fx_sys_openat2, err)))
		devcg_err_wrap(err, ret, "attach failed");
#if defined(__x86_64__)
	if (!ret && (ret = attach_prog(t, t->sys->progs.devcg_fx_sys_open, err)))
		devcg_err_wrap(err, ret, "attach failed");
#endif
	if (ret) {
		detach_from(t, first);
		devcg_trace_sys__destroy(t->sys);
		t->sys = NULL;
	}
	return devcg_bpf_log_end(&bl, ret, err);
}

static int try_kprobe(struct devcg_tracer *t, bool attach, struct devcg_error *err)
{
	int first = t->nlinks, ret;
	struct devcg_bpf_log bl;

	devcg_bpf_log_begin(&bl);
	t->kp = devcg_trace_kprobe__open();
	if (!t->kp) {
		ret = devcg_err(err, -errno, "kprobe: cannot open: %s", strerror(errno));
		return devcg_bpf_log_end(&bl, ret, err);
	}
	ret = share_maps(t, t->kp->maps.events, t->kp->maps.denials, t->kp->maps.lost);
	if (!ret && (ret = devcg_trace_kprobe__load(t->kp)))
		devcg_err(err, ret, "kprobe: loading refused: %s", devcg_why(ret, DEVCG_CAPS_TRACE));
	if (!ret && attach &&
	    (ret = attach_prog(t, t->kp->progs.devcg_kp_cgroup_write_ret, err) ?:
		   attach_prog(t, t->kp->progs.devcg_kp_cgroup_write, err) ?:
		   attach_prog(t, t->kp->progs.devcg_kp_check_ret, err) ?:
		   attach_prog(t, t->kp->progs.devcg_kp_check, err)))
		devcg_err_wrap(err, ret, "kprobe: attach failed%s",
			       ret == -ENOENT || ret == -EOPNOTSUPP ? " (no kprobes in this kernel?)" : "");
	if (ret) {
		detach_from(t, first);
		devcg_trace_kprobe__destroy(t->kp);
		t->kp = NULL;
	}
	return devcg_bpf_log_end(&bl, ret, err);
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct devcg_tracer *t = ctx;

	if (size < sizeof(struct devcg_trace_event))
		return 0;
	t->seen++;
	return t->cb ? t->cb(t->cb_ctx, data, NULL) : 0;
}

static int on_audit(void *ctx, void *data, size_t size)
{
	struct devcg_tracer *t = ctx;

	if (size < sizeof(struct devcg_audit_event))
		return 0;
	/* queued before the trace began: old news, not a denial of now */
	if (((const struct devcg_audit_event *)data)->ts_ns < t->start_ns) {
		t->audit_before_start++;
		return 0;
	}
	t->seen++;
	return t->cb ? t->cb(t->cb_ctx, NULL, data) : 0;
}

static int open_tp(struct devcg_tracer *t, struct devcg_error *err)
{
	int ret;

	t->tp = devcg_trace_tp__open();
	if (!t->tp)
		return devcg_err(err, -errno, "cannot open the trace programs: %s", strerror(errno));
	ret = devcg_trace_tp__load(t->tp);
	if (ret)
		return devcg_err(err, ret, "cannot load the trace programs: %s",
				 devcg_why(ret, DEVCG_CAPS_TRACE));
	return 0;
}

static int tracer_open(struct devcg_tracer **out, const struct devcg_tracer_opts *opts,
		       struct devcg_error *err)
{
	enum devcg_hooks hooks = DEVCG_OPT(opts, devcg_tracer_opts, hooks, DEVCG_HOOKS_AUTO);
	struct devcg_tracer *t = calloc(1, sizeof(*t));
	struct devcg_error why = { 0 };
	int ret;

	struct timespec now;

	if (!t)
		return devcg_err(err, -ENOMEM, "out of memory");
	t->stats_fd = -1;
	/* before any hook: every event of the trace's own rings comes after;
	 * bpf_ktime_get_ns() reads the same clock */
	clock_gettime(CLOCK_MONOTONIC, &now);
	t->start_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	ret = ensure_tracefs(t, DEVCG_OPT(opts, devcg_tracer_opts, mount_tracefs, false), err) ?:
	      open_tp(t, err);
	if (ret)
		goto fail;
	if (DEVCG_OPT(opts, devcg_tracer_opts, stats, false)) {
		t->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
		if (t->stats_fd < 0) {
			ret = devcg_err(err, -errno, "cannot enable BPF statistics: %s", strerror(errno));
			goto fail;
		}
	}
	/* cgroup writes and the permission check: the best hook that works */
	t->write_source = DEVCG_SRC_TRACEPOINT;
	if (hooks == DEVCG_HOOKS_AUTO || hooks == DEVCG_HOOKS_FENTRY) {
		if (!try_fentry(t, true, &why)) {
			t->write_source = DEVCG_SRC_FENTRY;
			note(t, "cgroup writes, device checks: fentry/fexit on cgroup_file_write, "
				"devcgroup_check_permission");
		} else if (hooks == DEVCG_HOOKS_FENTRY) {
			ret = devcg_err(err, why.code, "%s", why.msg);
			goto fail;
		} else {
			note(t, "not fentry: %s", why.msg);
		}
	}
	if (t->write_source == DEVCG_SRC_TRACEPOINT &&
	    (hooks == DEVCG_HOOKS_AUTO || hooks == DEVCG_HOOKS_KPROBE)) {
		if (!try_kprobe(t, true, &why)) {
			t->write_source = DEVCG_SRC_KPROBE;
			note(t, "cgroup writes, device checks: kprobes on cgroup_file_write, "
				"devcgroup_check_permission");
		} else if (hooks == DEVCG_HOOKS_KPROBE) {
			ret = devcg_err(err, why.code, "%s", why.msg);
			goto fail;
		} else {
			note(t, "not kprobe: %s", why.msg);
		}
	}
	if (t->write_source == DEVCG_SRC_TRACEPOINT) {
		/* exits first: an entry is never recorded without its exit */
		ret = attach_prog(t, t->tp->progs.devcg_tp_write_exit, err) ?:
		      attach_prog(t, t->tp->progs.devcg_tp_write_enter, err);
		if (ret)
			goto fail;
		note(t, "cgroup writes: syscall tracepoints sys_enter_write/sys_exit_write "
			"(no exact device decision; denied opens are resolved by path)");
	}
	/* where fentry works, bpf(2) and the opens too: no syscall tracepoint
	 * at all then, and other syscalls pay nothing */
	if (t->write_source == DEVCG_SRC_FENTRY && !try_sys(t, &why)) {
		note(t, "bpf(2) device program changes, denied opens: fentry/fexit on the syscalls bpf, "
			"open, openat, openat2 (no syscall tracepoint)");
	} else {
		if (t->write_source == DEVCG_SRC_FENTRY)
			note(t, "not fentry on the syscalls: %s", why.msg);
		ret = attach_prog(t, t->tp->progs.devcg_tp_bpf_exit, err) ?:
		      attach_prog(t, t->tp->progs.devcg_tp_bpf_enter, err) ?:
		      attach_prog(t, t->tp->progs.devcg_tp_openat_exit, err) ?:
		      attach_prog(t, t->tp->progs.devcg_tp_openat2_exit, err) ?:
		      attach_prog(t, t->tp->progs.devcg_tp_open_exit, err);
		if (ret)
			goto fail;
		note(t, "bpf(2) device program changes: syscall tracepoints sys_enter_bpf/sys_exit_bpf");
		note(t, "denied opens: syscall tracepoints sys_exit_open/openat/openat2");
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->tp->maps.events), on_event, t, NULL);
	if (t->rb && ring_buffer__add(t->rb, bpf_map__fd(t->tp->maps.denials), on_event, t)) {
		ring_buffer__free(t->rb);
		t->rb = NULL;
	}
	if (!t->rb) {
		ret = devcg_err(err, -errno, "cannot read the ring buffer: %s", strerror(errno));
		goto fail;
	}
	*out = t;
	return 0;
fail:
	devcg_tracer_close(t);
	return ret;
}

int devcg_tracer_open(struct devcg_tracer **out, const struct devcg_tracer_opts *opts,
		      struct devcg_error *err)
{
	struct devcg_bpf_log bl;
	int ret;

	/* its callers initialise it with braces, which may leave padding
	 * unset: only what lies past the whole struct must be zero */
	if ((ret = devcg_opts_check(opts, sizeof(*opts), "devcg_tracer_opts", err)))
		return ret;
	devcg_bpf_log_begin(&bl);
	ret = tracer_open(out, opts, err);
	return devcg_bpf_log_end(&bl, ret, err);
}

void devcg_tracer_close(struct devcg_tracer *t)
{
	int i;

	if (!t)
		return;
	ring_buffer__free(t->rb);
	detach_from(t, 0);
	devcg_trace_sys__destroy(t->sys);
	devcg_trace_fentry__destroy(t->fe);
	devcg_trace_kprobe__destroy(t->kp);
	devcg_trace_tp__destroy(t->tp);
	for (i = 0; i < t->naudit; i++) {
		close(t->audit_fds[i]);
		if (t->audit_lost_fds[i] >= 0)
			close(t->audit_lost_fds[i]);
	}
	if (t->stats_fd >= 0)
		close(t->stats_fd);
	free(t->hooks);
	free(t);
}

uint64_t devcg_tracer_start_ns(const struct devcg_tracer *t)
{
	return t->start_ns;
}

const char *devcg_tracer_hooks(const struct devcg_tracer *t)
{
	return t->hooks ? t->hooks : "";
}

int devcg_tracer_write_source(const struct devcg_tracer *t)
{
	return t->write_source;
}

int devcg_tracer_poll(struct devcg_tracer *t, int timeout_ms, devcg_trace_cb cb, void *ctx)
{
	struct devcg_bpf_log bl;
	int ret;

	t->cb = cb;
	t->cb_ctx = ctx;
	t->seen = 0;
	devcg_bpf_log_begin(&bl);
	ret = ring_buffer__poll(t->rb, timeout_ms);
	devcg_bpf_log_end(&bl, 0, NULL);
	return ret < 0 && ret != -EINTR ? ret : t->seen;
}

/* The sum over CPUs of entry K of a per-CPU array of counters. */
static int percpu_sum(int fd, __u32 k, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus(), c;

	*sum = 0;
	if (ncpu <= 0)
		return ncpu ? ncpu : -EINVAL;
	{
		uint64_t v[ncpu];

		if (bpf_map_lookup_elem(fd, &k, v))
			return -errno;
		for (c = 0; c < ncpu; c++)
			*sum += v[c];
	}
	return 0;
}

/* Read what a ring holds now, through a reader of its own: the consumer
 * position lives in the ring's shared page, so the main reader then
 * starts after it (kernel/bpf/ringbuf.c). */
static int read_ring_now(struct devcg_tracer *t, int ring, devcg_trace_cb cb, void *ctx)
{
	struct ring_buffer *rb = ring_buffer__new(ring, on_audit, t, NULL);
	int ret;

	if (!rb)
		return -errno;
	t->cb = cb;
	t->cb_ctx = ctx;
	ret = ring_buffer__consume(rb);
	ring_buffer__free(rb);
	return ret < 0 ? ret : 0;
}

int devcg_tracer_follow_audit(struct devcg_tracer *t, uint32_t prog_id, devcg_trace_cb cb,
			      void *ctx)
{
	struct bpf_map_info mi = { 0 };
	__u32 mi_len = sizeof(mi);
	int prog_fd, ring, lost, i, ret;
	uint64_t base = 0;
	bool audit = false;

	prog_fd = bpf_prog_get_fd_by_id(prog_id);
	if (prog_fd < 0)
		return -errno;
	if (devcg_filter_read(prog_fd, NULL, &audit, NULL) != 1 || !audit) {
		close(prog_fd);
		return 0;
	}
	ring = devcg_filter_audit_ring(prog_fd);
	lost = devcg_filter_audit_lost(prog_fd);
	close(prog_fd);
	if (ring < 0) {
		if (lost >= 0)
			close(lost);
		return ring;
	}
	i = bpf_obj_get_info_by_fd(ring, &mi, &mi_len) ? -1 : 0;
	for (; i >= 0 && i < t->naudit; i++)
		if (t->audit_ids[i] == mi.id)
			break; /* a later version sharing the same ring */
	if (i != t->naudit || t->naudit == MAX_AUDIT || ring_buffer__add(t->rb, ring, on_audit, t)) {
		close(ring);
		if (lost >= 0)
			close(lost);
		return i >= 0 && i < t->naudit ? 0 : -ENOSPC;
	}
	/* the losses before now are not the trace's: start from the count as it is */
	if (lost >= 0 && percpu_sum(lost, 0, &base)) {
		close(lost);
		lost = -1;
	}
	t->audit_ids[t->naudit] = mi.id;
	t->audit_lost_fds[t->naudit] = lost;
	t->audit_lost_base[t->naudit] = base;
	t->audit_fds[t->naudit++] = ring;
	/* at once, so that a full ring has room again for the denials of now */
	ret = read_ring_now(t, ring, cb, ctx);
	return ret ? ret : 1;
}

void devcg_tracer_losses(const struct devcg_tracer *t, struct devcg_trace_losses *out)
{
	int map = bpf_map__fd(t->tp->maps.lost), i;
	uint64_t now;

	/* the trace's own counters are new with it: all they hold is the trace's */
	memset(out, 0, sizeof(*out));
	percpu_sum(map, DEVCG_LOST_RINGBUF, &out->ringbuf);
	percpu_sum(map, DEVCG_LOST_READ, &out->read);
	for (i = 0; i < t->naudit; i++)
		if (t->audit_lost_fds[i] >= 0 && !percpu_sum(t->audit_lost_fds[i], 0, &now) &&
		    now > t->audit_lost_base[i])
			out->audit += now - t->audit_lost_base[i];
	out->audit_before_start = t->audit_before_start;
}

int devcg_tracer_stats(const struct devcg_tracer *t, struct devcg_prog_stats *out, int max)
{
	int i, n = 0;

	for (i = 0; i < t->nlinks && n < max; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (bpf_obj_get_info_by_fd(bpf_program__fd(t->progs[i]), &info, &len))
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", bpf_program__name(t->progs[i]));
		out[n].run_cnt = info.run_cnt;
		out[n].run_time_ns = info.run_time_ns;
		n++;
	}
	return n;
}

int devcg_tracer_probe(enum devcg_hooks hooks, bool attach, struct devcg_error *err)
{
	struct devcg_tracer *t = calloc(1, sizeof(*t));
	struct devcg_bpf_log bl;
	int ret;

	if (!t)
		return devcg_err(err, -ENOMEM, "out of memory");
	t->stats_fd = -1;
	devcg_bpf_log_begin(&bl);
	ret = open_tp(t, err);
	if (!ret && hooks == DEVCG_HOOKS_FENTRY)
		ret = try_fentry(t, attach, err);
	else if (!ret && hooks == DEVCG_HOOKS_KPROBE)
		ret = try_kprobe(t, attach, err);
	devcg_tracer_close(t);
	return devcg_bpf_log_end(&bl, ret, err);
}

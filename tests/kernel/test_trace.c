// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg trace end to end, on this kernel's hooks: the v1 deny-all replay
 * is reported as a gap with its writer and victims; devcg's atomic replace
 * is seen as bpf_prog_change events and no gap; a detach-then-attach is a
 * window with no filter; the kprobe and fentry variants load (or are
 * refused with a clear reason) and selection falls back.
 */
#include "devcg.h"
#include "harness.h"
#include "reader.h"
#include "scratch.h"
#include "trace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

static const char *devcg_bin(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

struct tracer {
	pid_t pid;
	char out[64];
};

/* Start `devcg [-j] trace --cgroup CGROUP_REL` with its output (standard
 * output and, in text mode, standard error) in a file; wait until it is
 * tracing (it prints the hooks it chose first). */
static struct tracer trace_start_as(const char *cgroup_rel, bool json)
{
	struct tracer t = { 0 };
	int fd;

	snprintf(t.out, sizeof(t.out), "/tmp/devcg-test-%s-trace-XXXXXX", scratch_tag());
	fd = mkstemp(t.out);
	CHECK(fd >= 0);
	t.pid = fork();
	CHECK(t.pid >= 0);
	if (t.pid == 0) {
		/* trace takes -j among its own options too */
		char *argv[] = { (char *)devcg_bin(), "trace", "--duration", "60", "--cgroup",
				 (char *)cgroup_rel, json ? "-j" : NULL, NULL };

		/* not left behind (perhaps stopped) when a CHECK ends the test */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 1);
		if (!json)
			dup2(fd, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd);
	for (int i = 0; i < 1000; i++) {
		char buf[256] = "";

		fd = open(t.out, O_RDONLY);
		if (read(fd, buf, sizeof(buf) - 1) > 0 && strstr(buf, "hooks")) {
			close(fd);
			return t;
		}
		close(fd);
		CHECK_MSG(waitpid(t.pid, NULL, WNOHANG) == 0, "devcg trace exited early");
		usleep(10000);
	}
	test_fail(__FILE__, __LINE__, "devcg trace did not start");
}

static struct tracer trace_start(const char *cgroup_rel)
{
	return trace_start_as(cgroup_rel, true);
}

/* Stop it (as Ctrl-C does) and open its output. */
static FILE *trace_end(struct tracer *t)
{
	int status;
	FILE *f;

	usleep(150 * 1000); /* let the last events through the reorder delay */
	kill(t->pid, SIGINT);
	kill(t->pid, SIGCONT);
	CHECK(waitpid(t->pid, &status, 0) == t->pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "devcg trace failed: %d", status);
	f = fopen(t->out, "r");
	CHECK(f != NULL);
	unlink(t->out);
	return f;
}

/* Stop it and return its JSON lines as an array. */
static json_t *trace_stop(struct tracer *t)
{
	json_t *all = json_array();
	char line[8192];
	FILE *f = trace_end(t);

	while (fgets(line, sizeof(line), f)) {
		json_error_t e;
		json_t *o = json_loads(line, 0, &e);

		CHECK_MSG(o != NULL, "not JSON: %s", line);
		json_array_append_new(all, o);
	}
	fclose(f);
	return all;
}

/* Stop a text-mode trace and return its summary line ("-- ..."). */
static void trace_stop_text(struct tracer *t, char *summary, size_t size)
{
	char line[8192];
	FILE *f = trace_end(t);

	summary[0] = '\0';
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "-- ", 3))
			snprintf(summary, size, "%s", line);
	fclose(f);
	CHECK_MSG(summary[0], "no summary line in %s", line);
}

static const char *str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : "";
}

static long long num(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static size_t count_type(json_t *all, const char *type)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(all, i, o)
		n += !strcmp(str(o, "type"), type);
	return n;
}

static const char *rel_of(const char *cg, const char *root)
{
	return cg + strlen(root);
}

static const char *const urandom_path[1] = { "/dev/urandom" };

static void need_root(void)
{
	if (geteuid() != 0)
		SKIP("needs root");
	CHECK(access(devcg_bin(), X_OK) == 0);
}

static const char *const allows[] = { "c 1:3 rwm", "c 1:5 rwm", "c 1:7 rwm", "c 1:8 rwm",
				      "c 1:9 rwm", "c 5:0 rwm", "c 5:1 rwm", "c 5:2 rwm",
				      "c 136:* rwm" };

TEST(trace_reports_the_v1_deny_all_replay_as_gaps_with_writer_and_victims)
{
	char cg[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *o;
	size_t i, gaps = 0, gaps_with_victims = 0, urandom = 0, deny_a = 0;
	int cycles = 0;
	struct readers *r;

	need_root();
	if (!scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	CHECK(!scratch_cgroup_create(scratch_devices_root(), cg, sizeof(cg)));
	rel = rel_of(cg, scratch_devices_root());
	CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
	for (i = 0; i < 9; i++)
		CHECK(!scratch_cgroup_write(cg, "devices.allow", allows[i]));
	t = trace_start(rel);
	r = readers_start(cg, 1, urandom_path, 1);
	CHECK(r != NULL);
	/* the writer is this process: deny all, then replay nine allows */
	while (cycles < 20 || (!readers_eperm(r, 0) && cycles < 5000)) {
		CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
		for (i = 0; i < 9; i++)
			CHECK(!scratch_cgroup_write(cg, "devices.allow", allows[i]));
		cycles++;
		usleep(cycles % 5 ? 0 : 120 * 1000); /* some pauses end bursts */
	}
	/* the trace names the device of a refused open from the opener's
	 * /proc entry when it handles the event, a little later: the reader
	 * stays until then (refused in the last cycle and gone, its device
	 * would be unknown, as the trace says of an opener that left) */
	usleep(500 * 1000);
	CHECK_INT(readers_stop(r), 0);
	CHECK(readers_eperm(r, 0) > 0); /* the gap is real: the reader was refused */
	readers_free(r);
	all = trace_stop(&t);
	json_array_foreach(all, i, o) {
		if (!strcmp(str(o, "type"), "cgroup_write") && !strcmp(str(o, "file"), "devices.deny") &&
		    !strcmp(str(o, "data"), "a") && !strcmp(str(o, "cgroup"), rel)) {
			deny_a++;
			CHECK_INT(num(o, "pid"), getpid());
			CHECK_INT(num(o, "ret"), 1);
		}
		if (!strcmp(str(o, "type"), "open_denied") && !strcmp(str(o, "path"), "/dev/urandom")) {
			urandom++;
			CHECK_STR(str(o, "dev"), "c 1:9");
			CHECK_STR(str(o, "devices_cgroup"), rel);
		}
		if (!strcmp(str(o, "type"), "gap")) {
			CHECK_STR(str(o, "cgroup"), rel);
			CHECK_STR(str(o, "kind"), "v1_deny_all");
			CHECK_INT(num(o, "writer_pid"), getpid());
			CHECK(num(o, "window_ns") > 0 && num(o, "window_ns") < 1000000000LL);
			CHECK(num(o, "rules") >= 9);
			CHECK_STR(str(o, "freeze"), "none");
			gaps++;
			if (num(o, "denied") > 0) {
				gaps_with_victims++;
				CHECK(num(o, "first_denied_offset_ns") >= 0);
				/* an open refused inside the window returns (and is
				 * stamped) a little later, more so under emulation */
				CHECK(num(o, "last_denied_offset_ns") <= num(o, "window_ns") + 100000000);
				CHECK(json_array_size(json_object_get(o, "devices")) >= 1);
			}
		}
	}
	CHECK_INT(deny_a, cycles);
	CHECK(urandom > 0);
	CHECK(gaps >= 4 && gaps <= (size_t)cycles);
	CHECK(gaps_with_victims > 0);
	CHECK_INT(count_type(all, "summary"), 1);
	json_decref(all);
}

TEST(trace_reports_the_freeze_written_before_a_gap)
{
	char cg[4096], frz[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *o;
	size_t i, gaps = 0;

	need_root();
	if (!scratch_devices_root() || !scratch_freezer_root())
		SKIP("the cgroup v1 devices and freezer controllers are not both mounted");
	CHECK(!scratch_cgroup_create(scratch_devices_root(), cg, sizeof(cg)));
	rel = rel_of(cg, scratch_devices_root());
	/* the same path in the freezer hierarchy, as runc makes it */
	snprintf(frz, sizeof(frz), "%s%s", scratch_freezer_root(), rel);
	CHECK(!mkdir(frz, 0755));
	t = trace_start(rel);
	CHECK(!scratch_cgroup_write(frz, "freezer.state", "FROZEN"));
	CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
	CHECK(!scratch_cgroup_write(cg, "devices.allow", "c 1:9 rwm"));
	CHECK(!scratch_cgroup_write(frz, "freezer.state", "THAWED"));
	usleep(150 * 1000);
	/* control: the same update without a freeze */
	CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
	CHECK(!scratch_cgroup_write(cg, "devices.allow", "c 1:9 rwm"));
	all = trace_stop(&t);
	json_array_foreach(all, i, o) {
		if (strcmp(str(o, "type"), "gap"))
			continue;
		CHECK_STR(str(o, "freeze"), gaps ? "none" : "frozen");
		gaps++;
	}
	CHECK_INT(gaps, 2);
	json_decref(all);
}

static struct devcg_policy *policy_of(const char *text)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();

	CHECK(!devcg_rules_parse(rules, text, strlen(text), "test", NULL, NULL));
	CHECK(!devcg_policy_apply_all(p, rules, NULL));
	devcg_rules_free(rules);
	return p;
}

TEST(trace_sees_devcg_replace_as_atomic_with_no_gap_and_no_denial)
{
	struct devcg_policy *a = policy_of("deny a\nallow c 1:9 rwm\nallow c 1:3 rwm\n"),
			    *b = policy_of("deny a\nallow c 1:* rwm\n");
	char cg[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *o;
	size_t i, replaces = 0;
	struct readers *r;

	need_root();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	rel = rel_of(cg, scratch_cgroup2_root());
	CHECK(!devcg_replace(cg, a, NULL, NULL));
	t = trace_start(rel);
	r = readers_start(cg, 1, urandom_path, 1);
	CHECK(r != NULL);
	for (i = 0; i < 100; i++)
		CHECK(!devcg_replace(cg, i % 2 ? a : b, NULL, NULL));
	CHECK_INT(readers_stop(r), 0);
	CHECK_INT(readers_eperm(r, 0), 0);
	readers_free(r);
	all = trace_stop(&t);
	json_array_foreach(all, i, o) {
		if (!strcmp(str(o, "type"), "bpf_prog_change")) {
			json_t *flags = json_object_get(o, "flags"), *f;
			size_t k;
			bool replace = false;

			CHECK_STR(str(o, "cgroup"), rel);
			CHECK_STR(str(o, "op"), "prog_attach");
			json_array_foreach(flags, k, f)
				replace |= !strcmp(json_string_value(f), "replace");
			CHECK(replace);
			CHECK_INT(json_array_size(json_object_get(o, "prog_ids")), 2);
			replaces++;
		}
	}
	CHECK_INT(replaces, 100);
	CHECK_INT(count_type(all, "gap"), 0);
	CHECK_INT(count_type(all, "open_denied"), 0);
	json_decref(all);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

static int foreign_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "test_dev", "GPL", insns, 2, NULL);

	CHECK(fd >= 0);
	return fd;
}

TEST(trace_reports_a_detach_then_attach_as_a_window_with_no_filter)
{
	char cg[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *o;
	size_t i, gaps = 0;
	int cfd, pfd;

	need_root();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	rel = rel_of(cg, scratch_cgroup2_root());
	cfd = open(cg, O_RDONLY | O_DIRECTORY);
	pfd = foreign_prog();
	CHECK(!bpf_prog_attach(pfd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	t = trace_start(rel);
	CHECK(!bpf_prog_detach2(pfd, cfd, BPF_CGROUP_DEVICE));
	usleep(2000);
	CHECK(!bpf_prog_attach(pfd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	all = trace_stop(&t);
	json_array_foreach(all, i, o) {
		if (strcmp(str(o, "type"), "gap"))
			continue;
		gaps++;
		CHECK_STR(str(o, "kind"), "v2_no_filter");
		CHECK_STR(str(o, "cgroup"), rel);
		CHECK_INT(num(o, "writer_pid"), getpid());
		CHECK(num(o, "window_ns") >= 2000000);
	}
	CHECK_INT(gaps, 1);
	close(pfd);
	close(cfd);
	json_decref(all);
}

TEST(kprobe_variant_loads_and_passes_the_verifier)
{
	struct devcg_error err = { 0 };

	need_root();
	CHECK_MSG(devcg_tracer_probe(DEVCG_HOOKS_KPROBE, false, &err) == 0, "%s", err.msg);
}

TEST(kprobe_variant_attaches_or_is_refused_with_a_reason)
{
	struct devcg_error err = { 0 };
	int ret;

	need_root();
	ret = devcg_tracer_probe(DEVCG_HOOKS_KPROBE, true, &err);
	if (ret) /* here: no kprobes in the kernel */
		CHECK_MSG(strstr(err.msg, "kprobe: attach failed") != NULL, "%s", err.msg);
}

TEST(fentry_variant_loads_or_is_refused_with_a_reason)
{
	struct devcg_error err = { 0 };
	int ret;

	need_root();
	ret = devcg_tracer_probe(DEVCG_HOOKS_FENTRY, false, &err);
	if (ret) /* this machine refuses fentry programs with EPERM */
		CHECK_MSG(ret == -EPERM && strstr(err.msg, "fentry: loading refused"), "%d: %s", ret, err.msg);
}

TEST(hook_selection_says_what_it_chose_and_falls_back)
{
	struct devcg_tracer_opts to = { .sz = sizeof(to), .mount_tracefs = false };
	struct devcg_error err = { 0 };
	struct devcg_tracer *tr;
	int kp, fe;

	need_root();
	kp = devcg_tracer_probe(DEVCG_HOOKS_KPROBE, true, NULL);
	fe = devcg_tracer_probe(DEVCG_HOOKS_FENTRY, true, NULL);
	if (access("/sys/kernel/tracing/events/syscalls", F_OK) &&
	    access("/sys/kernel/debug/tracing/events/syscalls", F_OK))
		to.mount_tracefs = true; /* only in our own (forked) mount namespace */
	CHECK_MSG(!devcg_tracer_open(&tr, &to, &err), "%s", err.msg);
	if (!fe) {
		CHECK_INT(devcg_tracer_write_source(tr), DEVCG_SRC_FENTRY);
	} else if (!kp) {
		CHECK_INT(devcg_tracer_write_source(tr), DEVCG_SRC_KPROBE);
		CHECK(strstr(devcg_tracer_hooks(tr), "not fentry:") != NULL);
	} else {
		CHECK_INT(devcg_tracer_write_source(tr), DEVCG_SRC_TRACEPOINT);
		CHECK(strstr(devcg_tracer_hooks(tr), "not fentry:") != NULL);
		CHECK(strstr(devcg_tracer_hooks(tr), "not kprobe:") != NULL);
	}
	devcg_tracer_close(tr);
}

TEST(asking_for_hooks_the_kernel_lacks_fails_with_a_message)
{
	char cmd[512];
	int status;

	need_root();
	if (!devcg_tracer_probe(DEVCG_HOOKS_KPROBE, true, NULL))
		SKIP("this kernel attaches kprobes");
	snprintf(cmd, sizeof(cmd), "%s trace --hooks kprobe --duration 1 2>&1 | grep -q 'kprobe: attach failed'",
		 devcg_bin());
	status = system(cmd);
	CHECK_INT(WEXITSTATUS(status), 0);
}

#include <bpf/libbpf.h>

static int quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN && getenv("DEVCG_TEST_VERBOSE") ? vfprintf(stderr, fmt, ap) : 0;
}

/* The probes of hooks this kernel lacks fail on purpose: keep libbpf quiet. */
__attribute__((constructor)) static void quiet_libbpf(void)
{
	libbpf_set_print(quiet);
}

TEST(trace_stats_report_each_program_run_count_and_time)
{
	char cmd[512], line[65536];
	json_t *summary = NULL, *progs, *p;
	size_t i;
	uint64_t runs = 0;
	FILE *f;

	need_root();
	/* writes of the shell itself run the write tracepoints at least */
	snprintf(cmd, sizeof(cmd), "%s -j trace --stats --duration 1 & sleep 0.6; "
		 "for i in 1 2 3; do echo x > /dev/null; done; wait", devcg_bin());
	f = popen(cmd, "r");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "\"summary\""))
			summary = json_loads(line, 0, NULL);
	pclose(f);
	CHECK(summary != NULL);
	progs = json_object_get(summary, "programs");
	CHECK(json_array_size(progs) >= 5);
	json_array_foreach(progs, i, p) {
		CHECK(json_is_string(json_object_get(p, "program")));
		CHECK(json_is_integer(json_object_get(p, "run_time_ns")));
		runs += (uint64_t)num(p, "run_cnt");
	}
	CHECK(runs > 0);
	CHECK(json_is_number(json_object_get(summary, "events_per_second")));
	json_decref(summary);
}

static int open_urandom_once(void *arg)
{
	int fd = open("/dev/urandom", O_RDONLY);

	(void)arg;
	return fd < 0 && errno == EPERM ? 0 : 1;
}

TEST(with_fentry_or_kprobes_a_refused_open_carries_the_exact_device_and_decision)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
	const char *hooks_src = NULL;
	char cg[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *o;
	size_t i, checks = 0;

	need_root();
	if (devcg_tracer_probe(DEVCG_HOOKS_FENTRY, true, NULL) &&
	    devcg_tracer_probe(DEVCG_HOOKS_KPROBE, true, NULL))
		SKIP("this kernel attaches neither fentry nor kprobes (the tracepoint path has no device check)");
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	rel = rel_of(cg, scratch_cgroup2_root());
	CHECK(!devcg_replace(cg, p, NULL, NULL));
	t = trace_start(rel);
	CHECK_INT(scratch_run(cg, open_urandom_once, NULL), 0);
	all = trace_stop(&t);
	json_array_foreach(all, i, o) {
		if (!strcmp(str(o, "type"), "hooks"))
			hooks_src = str(o, "writes");
		if (strcmp(str(o, "type"), "device_denied") || !strcmp(str(o, "source"), "audit"))
			continue;
		/* from the hook the startup line named, with the kernel's own decision */
		CHECK(hooks_src != NULL);
		CHECK_STR(str(o, "source"), hooks_src);
		CHECK_STR(str(o, "dev"), "c 1:9");
		CHECK_STR(str(o, "access"), "r");
		CHECK_STR(str(o, "decision"), "deny");
		CHECK_STR(str(o, "cgroup"), rel);
		checks++;
	}
	CHECK(hooks_src && (!strcmp(hooks_src, "fentry") || !strcmp(hooks_src, "kprobe")));
	CHECK_INT(checks, 1);
	json_decref(all);
	devcg_policy_free(p);
}

/* ---- audit rings: only what happened during the trace ------------------ */

#include "internal.h"

/* Open /dev/urandom (long)ARG times; exit 0 when every open was refused. */
static int refused_opens(void *arg)
{
	long n = (long)arg, refused = 0;

	for (long i = 0; i < n; i++) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
		refused += fd < 0 && errno == EPERM;
	}
	return refused == n ? 0 : 1;
}

/* The audit loss counter of the filter attached to CG (all CPUs). */
static uint64_t audit_lost_of(uint32_t prog_id)
{
	int ncpu = libbpf_num_possible_cpus(), prog = bpf_prog_get_fd_by_id(prog_id), lost;
	uint64_t v[256] = { 0 }, sum = 0;

	CHECK(ncpu > 0 && ncpu <= 256 && prog >= 0);
	lost = devcg_filter_audit_lost(prog);
	CHECK(lost >= 0);
	CHECK(!bpf_map_lookup_elem(lost, &(__u32){ 0 }, v));
	for (int c = 0; c < ncpu; c++)
		sum += v[c];
	close(lost);
	close(prog);
	return sum;
}

static json_t *summary_of(json_t *all)
{
	size_t i;
	json_t *o;

	json_array_foreach(all, i, o)
		if (!strcmp(str(o, "type"), "summary"))
			return o;
	test_fail(__FILE__, __LINE__, "no summary");
}

/* A field of the summary's "lost" object, which must be there. */
static long long lost_field(json_t *summary, const char *k)
{
	json_t *v = json_object_get(json_object_get(summary, "lost"), k);

	CHECK_MSG(json_is_integer(v), "the summary has no lost.%s", k);
	return json_integer_value(v);
}

/* A scratch cgroup under a deny-all filter loaded with --audit. */
static uint32_t audited_cgroup(char *cg, size_t size)
{
	struct devcg_policy *p = policy_of("deny a\n");
	DEVCG_OPTS(devcg_replace_opts, o, .audit = true);
	struct devcg_error err = { 0 };

	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, size));
	CHECK_MSG(!devcg_replace(cg, p, &o, &err), "%s", err.msg);
	devcg_policy_free(p);
	return o.prog_id;
}

TEST(trace_skips_audit_denials_queued_before_it_started_and_counts_only_its_own_losses)
{
	char cg[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *o, *sum;
	uint64_t lost_before;
	uint32_t prog;
	size_t i, reported = 0;
	pid_t during;

	need_root();
	prog = audited_cgroup(cg, sizeof(cg));
	rel = rel_of(cg, scratch_cgroup2_root());
	/* before the trace: more refused opens than the ring holds, unread */
	CHECK_INT(scratch_run(cg, refused_opens, (void *)20000L), 0);
	lost_before = audit_lost_of(prog);
	CHECK(lost_before > 0 && lost_before < 20000); /* the ring is full, the rest counted */
	t = trace_start(rel);
	/* during the trace: five more, from another process */
	during = scratch_spawn(cg, refused_opens, (void *)5L);
	CHECK(during > 0);
	CHECK_INT(scratch_wait(during), 0);
	all = trace_stop(&t);
	json_array_foreach(all, i, o) {
		if (strcmp(str(o, "type"), "device_denied") || strcmp(str(o, "source"), "audit"))
			continue;
		/* none of the 20000 of before; each of the five, as it was */
		CHECK_INT(num(o, "pid"), during);
		CHECK_STR(str(o, "dev"), "c 1:9");
		CHECK_STR(str(o, "access"), "r");
		CHECK_STR(str(o, "cgroup"), rel);
		CHECK(num(o, "offset_ns") > 0);
		reported++;
	}
	CHECK_INT(reported, 5);
	sum = summary_of(all);
	/* nothing was lost during the trace; what was queued before is skipped */
	CHECK_INT(lost_field(sum, "audit"), 0);
	CHECK_INT(audit_lost_of(prog), lost_before);
	CHECK_INT(num(sum, "audit_before_start"), 20000 - lost_before);
	json_decref(all);
}

TEST(trace_text_and_json_summaries_report_the_same_audit_losses_of_the_trace)
{
	unsigned long long total, ringbuf, reads, audit, before;
	char cg[4096], text[8192];
	const char *rel, *p;
	struct tracer tj, tt;
	uint64_t lost0, lost1;
	json_t *all, *o, *sum;
	uint32_t prog;
	size_t i, reported = 0;

	need_root();
	prog = audited_cgroup(cg, sizeof(cg));
	rel = rel_of(cg, scratch_cgroup2_root());
	tj = trace_start_as(rel, true);
	tt = trace_start_as(rel, false);
	lost0 = audit_lost_of(prog);
	/* with both readers stopped, a flood must overflow the ring */
	CHECK(!kill(tj.pid, SIGSTOP) && !kill(tt.pid, SIGSTOP));
	CHECK_INT(scratch_run(cg, refused_opens, (void *)20000L), 0);
	lost1 = audit_lost_of(prog);
	CHECK(lost1 > lost0);
	/* one after the other: the JSON one reads the ring, the text one finds it empty */
	all = trace_stop(&tj);
	sum = summary_of(all);
	CHECK_INT(lost_field(sum, "audit"), lost1 - lost0);
	CHECK_INT(lost_field(sum, "total"), lost_field(sum, "ringbuf") + lost_field(sum, "read") +
						    lost_field(sum, "audit"));
	/* every refused open of the flood is either reported or counted lost */
	json_array_foreach(all, i, o)
		reported += !strcmp(str(o, "type"), "device_denied") && !strcmp(str(o, "source"), "audit");
	CHECK_INT(reported + (lost1 - lost0), 20000);
	CHECK_INT(num(sum, "audit_before_start"), 0);
	/* the text summary: the same fields, the same numbers */
	trace_stop_text(&tt, text, sizeof(text));
	p = strstr(text, "; lost ");
	CHECK_MSG(p && sscanf(p, "; lost %llu (ring buffer %llu, reads %llu, audit %llu)", &total,
			      &ringbuf, &reads, &audit) == 4, "%s", text);
	CHECK_INT(audit, lost1 - lost0);
	CHECK_INT(total, ringbuf + reads + audit);
	p = strstr(text, "audit denials from before the start skipped ");
	CHECK_MSG(p && sscanf(p, "audit denials from before the start skipped %llu", &before) == 1, "%s",
		  text);
	CHECK_INT(before, 0);
	json_decref(all);
}

static int count_records(void *ctx, void *data, size_t size)
{
	(void)data;
	(void)size;
	(*(int *)ctx)++;
	return 0;
}

TEST(trace_of_one_cgroup_leaves_the_audit_ring_of_another_alone)
{
	char mine[4096], other[4096];
	const char *rel;
	struct ring_buffer *rb;
	struct tracer t;
	json_t *all, *o;
	uint32_t other_prog;
	size_t i, reported = 0;
	int prog, ring, left = 0;

	need_root();
	audited_cgroup(mine, sizeof(mine));
	other_prog = audited_cgroup(other, sizeof(other));
	rel = rel_of(mine, scratch_cgroup2_root());
	t = trace_start(rel);
	CHECK_INT(scratch_run(mine, refused_opens, (void *)5L), 0);
	CHECK_INT(scratch_run(other, refused_opens, (void *)7L), 0);
	all = trace_stop(&t);
	/* control: the denials of the traced cgroup are read and reported */
	json_array_foreach(all, i, o) {
		if (strcmp(str(o, "type"), "device_denied") || strcmp(str(o, "source"), "audit"))
			continue;
		CHECK_STR(str(o, "cgroup"), rel);
		reported++;
	}
	CHECK_INT(reported, 5);
	/* the other cgroup's seven are still in its ring, for its own reader */
	prog = bpf_prog_get_fd_by_id(other_prog);
	CHECK(prog >= 0);
	ring = devcg_filter_audit_ring(prog);
	CHECK(ring >= 0);
	rb = ring_buffer__new(ring, count_records, &left, NULL);
	CHECK(rb != NULL);
	CHECK(ring_buffer__consume(rb) >= 0);
	CHECK_INT(left, 7);
	ring_buffer__free(rb);
	close(ring);
	close(prog);
	json_decref(all);
}

/* ---- revocations: a foreign program refuses what devcg's filter grants -- */

/*
 * A reader in the scratch cgroup that opens /dev/null and a node with no
 * driver behind it (c 240:0) once a millisecond: an allowed open of the
 * node fails with ENXIO (chrdev_open() in fs/char_dev.c, after the device
 * cgroup check), a refused one with EPERM. Paced, so that the trace keeps
 * up and every refusal is reported, and counted here to compare.
 */
struct paced {
	volatile int stop;
	volatile uint64_t opens[2], eperm[2];
	char node[4096];
};

static int paced_loop(void *arg)
{
	struct paced *p = arg;
	const char *paths[2] = { "/dev/null", p->node };

	prctl(PR_SET_NAME, "revreader");
	while (!p->stop) {
		for (int i = 0; i < 2; i++) {
			int fd = open(paths[i], O_RDONLY | O_CLOEXEC);

			if (fd >= 0)
				close(fd);
			else if (errno == EPERM)
				p->eperm[i]++;
			p->opens[i]++;
		}
		usleep(1000);
	}
	return 0;
}

static struct paced *paced_start(const char *cg, const char *node, pid_t *pid)
{
	struct paced *p = mmap(NULL, sizeof(*p), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	CHECK(p != MAP_FAILED);
	snprintf(p->node, sizeof(p->node), "%s", node);
	*pid = scratch_spawn(cg, paced_loop, p);
	CHECK(*pid > 0);
	while (p->opens[1] < 5)
		usleep(1000);
	return p;
}

/* Let the reader open the node N more times. */
static void paced_more(struct paced *p, uint64_t n)
{
	uint64_t until = p->opens[1] + n;

	while (p->opens[1] < until)
		usleep(1000);
}

static void paced_stop(struct paced *p, pid_t pid)
{
	p->stop = 1;
	CHECK_INT(scratch_wait(pid), 0);
}

/*
 * A cgroup device program loaded from raw instructions, as a runtime or
 * systemd loads its own: allow only c 1:3, or (ALL) everything. The
 * context is struct bpf_cgroup_dev_ctx: access_type (the type in its low
 * 16 bits), major, minor.
 */
static int device_prog(bool all)
{
	const struct bpf_insn only_null[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1, .off = 0 },
		{ .code = BPF_ALU | BPF_AND | BPF_K, .dst_reg = BPF_REG_2, .imm = 0xffff },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_2, .off = 6, .imm = BPF_DEVCG_DEV_CHAR },
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1, .off = 4 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_2, .off = 4, .imm = 1 },
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_1, .off = 8 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = BPF_REG_2, .off = 2, .imm = 3 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	const struct bpf_insn allow_all[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return all ? bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "allow_all", "GPL", allow_all, 2, NULL)
		   : bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "only_null", "GPL", only_null, 11, NULL);
}

/* Another process, named COMM, attaches its own program to CG beside
 * devcg's (multi mode) and exits; returns its pid. */
static pid_t foreign_attach(const char *cg, const char *comm, bool all)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		int cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC), pfd;

		prctl(PR_SET_NAME, comm);
		pfd = device_prog(all);
		_exit(cfd < 0 || pfd < 0 || bpf_prog_attach(pfd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI) ? 1 : 0);
	}
	CHECK_INT(scratch_wait(pid), 0);
	return pid;
}

/* A scratch cgroup under a devcg filter granting /dev/null and c 240:0 rw,
 * and a directory holding the c 240:0 node. */
static void granted_cgroup(char *cg, size_t cgsize, char *node, size_t nodesize)
{
	static const struct scratch_node fake = { "fakegpu0", 'c', 240, 0 };
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rw\nallow c 240:0 rw\n");
	char dir[4096];

	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, cgsize));
	CHECK(!devcg_replace(cg, p, NULL, NULL));
	devcg_policy_free(p);
	CHECK(!scratch_devdir_create(dir, sizeof(dir), &fake, 1));
	snprintf(node, nodesize, "%s/fakegpu0", dir);
}

static json_t *only_type(json_t *all, const char *type)
{
	json_t *out = json_array(), *o;
	size_t i;

	json_array_foreach(all, i, o)
		if (!strcmp(str(o, "type"), type))
			json_array_append(out, o);
	return out;
}

TEST(trace_names_a_foreign_program_that_refuses_what_devcg_grants_as_one_revoke)
{
	char cg[4096], node[4096];
	json_t *all, *rv, *o, *devs, *progs, *p;
	struct paced *reader;
	struct tracer t;
	pid_t rpid, writer;
	size_t i, foreign = 0, devcg = 0;
	const char *rel;

	need_root();
	granted_cgroup(cg, sizeof(cg), node, sizeof(node));
	rel = rel_of(cg, scratch_cgroup2_root());
	t = trace_start(rel);
	reader = paced_start(cg, node, &rpid);
	CHECK_INT(reader->eperm[1], 0); /* granted: ENXIO, not EPERM */
	writer = foreign_attach(cg, "narrower", false);
	while (reader->eperm[1] < 100)
		usleep(1000);
	paced_stop(reader, rpid);
	CHECK_INT(reader->eperm[0], 0); /* /dev/null: granted by both */
	all = trace_stop(&t);
	/* the count below is exact only when no event was lost (the reader
	 * is paced; a flood elsewhere on the machine could still fill the ring) */
	CHECK_MSG(lost_field(summary_of(all), "total") == 0, "the trace lost events");
	rv = only_type(all, "revoke");
	CHECK_INT(json_array_size(rv), 1);
	o = json_array_get(rv, 0);
	CHECK_STR(str(o, "cgroup"), rel);
	CHECK_INT(num(o, "writer_pid"), writer);
	CHECK_STR(str(o, "writer_comm"), "narrower");
	CHECK_STR(str(o, "comm"), "narrower");
	CHECK_INT(num(o, "changes"), 1);
	/* every refusal the reader saw, and nothing else */
	CHECK_INT(num(o, "denied"), reader->eperm[1]);
	devs = json_object_get(o, "devices");
	CHECK_INT(json_array_size(devs), 1);
	CHECK_STR(str(json_array_get(devs, 0), "dev"), "c 240:0");
	CHECK_STR(str(json_array_get(devs, 0), "access"), "r");
	CHECK_INT(num(json_array_get(devs, 0), "count"), reader->eperm[1]);
	CHECK_INT(num(json_array_get(json_object_get(o, "victims"), 0), "pid"), rpid);
	CHECK_STR(str(json_array_get(json_object_get(o, "victims"), 0), "comm"), "revreader");
	/* before: devcg's filter alone; after: it and the foreign program */
	progs = json_object_get(o, "progs_before");
	CHECK_INT(json_array_size(progs), 1);
	CHECK_STR(str(json_array_get(progs, 0), "owner"), "devcg");
	json_array_foreach(json_object_get(o, "progs_after"), i, p) {
		devcg += !strcmp(str(p, "owner"), "devcg");
		foreign += !strcmp(str(p, "owner"), "foreign");
	}
	CHECK(devcg == 1 && foreign == 1);
	CHECK(num(o, "first_denied_offset_ns") > 0);
	CHECK(num(o, "last_denied_offset_ns") >= num(o, "first_denied_offset_ns"));
	/* the summary counts the machine's revocations, not only these */
	CHECK(num(summary_of(all), "revokes") >= 1);
	CHECK_INT(count_type(all, "gap"), 0); /* a revocation is not a gap */
	json_decref(rv);
	json_decref(all);
	munmap(reader, sizeof(*reader));
}

TEST(trace_names_no_revoke_for_a_foreign_program_that_allows_everything)
{
	char cg[4096], node[4096];
	struct paced *reader;
	struct tracer t;
	json_t *all;
	pid_t rpid;
	const char *rel;

	need_root();
	granted_cgroup(cg, sizeof(cg), node, sizeof(node));
	rel = rel_of(cg, scratch_cgroup2_root());
	t = trace_start(rel);
	reader = paced_start(cg, node, &rpid);
	foreign_attach(cg, "allowall", true);
	paced_more(reader, 100);
	paced_stop(reader, rpid);
	CHECK_INT(reader->eperm[1], 0);
	all = trace_stop(&t);
	CHECK_INT(count_type(all, "bpf_prog_change"), 1); /* the attach was seen */
	CHECK_INT(count_type(all, "revoke"), 0);
	json_decref(all);
	munmap(reader, sizeof(*reader));
}

TEST(trace_names_no_revoke_when_devcg_itself_narrows_the_policy)
{
	struct devcg_policy *narrower = policy_of("deny a\nallow c 1:3 rw\n");
	char cg[4096], node[4096];
	struct paced *reader;
	struct tracer t;
	json_t *all, *o;
	size_t i, refused = 0;
	pid_t rpid;
	const char *rel;

	need_root();
	granted_cgroup(cg, sizeof(cg), node, sizeof(node));
	rel = rel_of(cg, scratch_cgroup2_root());
	t = trace_start(rel);
	reader = paced_start(cg, node, &rpid);
	/* from this process (not named devcg): told apart by its program */
	CHECK(!devcg_replace(cg, narrower, NULL, NULL));
	while (reader->eperm[1] < 100)
		usleep(1000);
	paced_stop(reader, rpid);
	all = trace_stop(&t);
	/* the refusals were seen, and are devcg's own */
	json_array_foreach(all, i, o)
		refused += !strcmp(str(o, "type"), "open_denied") && !strcmp(str(o, "dev"), "c 240:0");
	CHECK_INT(refused, reader->eperm[1]);
	CHECK_INT(count_type(all, "revoke"), 0);
	json_decref(all);
	munmap(reader, sizeof(*reader));
	devcg_policy_free(narrower);
}

/* ---- cgroups: thousands of them, every form of --cgroup, what is counted -- */

/* N empty cgroups below a new scratch cgroup (PARENT); their ids in IDS
 * and their paths below the cgroup2 root in RELS (when not NULL). */
static void empty_cgroups(char *parent, size_t size, int n, uint64_t *ids, char (*rels)[128])
{
	const char *root = scratch_cgroup2_root();
	char cg[4096];
	struct stat st;

	CHECK(!scratch_cgroup_create(root, parent, size));
	for (int i = 0; i < n; i++) {
		CHECK(!scratch_cgroup_create(parent, cg, sizeof(cg)));
		CHECK(!stat(cg, &st));
		if (ids)
			ids[i] = st.st_ino;
		if (rels)
			snprintf(rels[i], sizeof(rels[i]), "%s", rel_of(cg, root));
	}
}

/* A scratch cgroup whose devcg filter refuses every device. */
static void refusing_cgroup(char *cg, size_t size)
{
	struct devcg_policy *p = policy_of("deny a\n");
	struct devcg_error err = { 0 };

	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, size));
	CHECK_MSG(!devcg_replace(cg, p, NULL, &err), "%s", err.msg);
	devcg_policy_free(p);
}

struct flood {
	long n, eperm;
};

static int flood_opens(void *arg)
{
	struct flood *f = arg;

	for (long i = 0; i < f->n; i++) {
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd >= 0)
			close(fd);
		else
			f->eperm += errno == EPERM;
	}
	return 0;
}

/* N opens of /dev/urandom by a child in CG: the EPERMs it met; its pid in *PID. */
static long refused_in(const char *cg, long n, pid_t *pid)
{
	struct flood *f = mmap(NULL, sizeof(*f), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long eperm;

	CHECK(f != MAP_FAILED);
	f->n = n;
	f->eperm = 0;
	*pid = scratch_spawn(cg, flood_opens, f);
	CHECK(*pid > 0);
	CHECK_INT(scratch_wait(*pid), 0);
	eperm = f->eperm;
	munmap(f, sizeof(*f));
	return eperm;
}

/* The open_denied events of PID, each checked to name cgroup REL. */
static size_t denied_of(json_t *all, pid_t pid, const char *rel)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(all, i, o) {
		if (strcmp(str(o, "type"), "open_denied") || num(o, "pid") != pid)
			continue;
		CHECK_STR(str(o, "cgroup"), rel);
		n++;
	}
	return n;
}

#define MANY_CGROUPS 3000

TEST(cgroup_paths_name_thousands_of_real_cgroups_after_one_walk_and_a_new_one_by_its_handle)
{
	static uint64_t ids[MANY_CGROUPS];
	static char rels[MANY_CGROUPS][128];
	struct devcg_cgpaths_stats st;
	char parent[4096], late[4096];
	struct devcg_cgpaths *c;
	struct stat sb;

	need_root();
	empty_cgroups(parent, sizeof(parent), MANY_CGROUPS, ids, rels);
	c = devcg_cgpaths_new();
	CHECK(c != NULL);
	for (int i = 0; i < MANY_CGROUPS; i++)
		CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, ids[i]), rels[i]);
	devcg_cgpaths_stats(c, DEVCG_H_V2, &st);
	CHECK_INT(st.walks, 1);
	CHECK_MSG(st.probes <= 2 * st.lookups, "%llu probes for %llu lookups",
		  (unsigned long long)st.probes, (unsigned long long)st.lookups);
	/* one made since the walk: looked up on its own, not by a walk */
	CHECK(!scratch_cgroup_create(parent, late, sizeof(late)));
	CHECK(!stat(late, &sb));
	CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, sb.st_ino), rel_of(late, scratch_cgroup2_root()));
	/* one removed before it was ever looked up: unknown, once */
	CHECK(!scratch_cgroup_create(parent, late, sizeof(late)));
	CHECK(!stat(late, &sb));
	CHECK(!scratch_cgroup_remove(late));
	CHECK(devcg_cgpaths_lookup(c, DEVCG_H_V2, sb.st_ino) == NULL);
	CHECK(devcg_cgpaths_lookup(c, DEVCG_H_V2, sb.st_ino) == NULL);
	devcg_cgpaths_stats(c, DEVCG_H_V2, &st);
	CHECK_INT(st.walks, 1);
	CHECK_INT(st.handles, 2);
	CHECK_INT(st.unknown, 1);
	devcg_cgpaths_free(c);
}

TEST(trace_of_a_flood_of_refused_opens_among_thousands_of_empty_cgroups_loses_none)
{
	char parent[4096], cg[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *sum;
	long eperm;
	pid_t pid;

	need_root();
	empty_cgroups(parent, sizeof(parent), MANY_CGROUPS, NULL, NULL);
	refusing_cgroup(cg, sizeof(cg));
	rel = rel_of(cg, scratch_cgroup2_root());
	t = trace_start(rel);
	/* well within the ring (8 MiB, 248 bytes an event): however slow
	 * the reader, none may be lost */
	eperm = refused_in(cg, 20000, &pid);
	/* control: the policy refused every one of them, to be counted */
	CHECK_INT(eperm, 20000);
	all = trace_stop(&t);
	sum = summary_of(all);
	CHECK_INT(lost_field(sum, "total"), 0);
	CHECK_INT(denied_of(all, pid, rel), eperm);
	CHECK_INT(num(json_object_get(sum, "events"), "open_denied"), eperm);
	json_decref(all);
}

TEST(trace_cgroup_takes_every_form_the_other_verbs_take)
{
	char cg[4096], other[4096], slash[4200];
	const char *rel, *forms[4];
	struct tracer t;
	json_t *all;
	pid_t pid;

	need_root();
	refusing_cgroup(cg, sizeof(cg));
	refusing_cgroup(other, sizeof(other));
	rel = rel_of(cg, scratch_cgroup2_root());
	snprintf(slash, sizeof(slash), "%s/", cg);
	forms[0] = rel + 1; /* relative to the cgroup2 mount, as show and replace take it */
	forms[1] = cg;      /* its absolute path */
	forms[2] = slash;   /* with a trailing slash */
	forms[3] = rel;     /* below the hierarchy's root, as the trace names it */
	for (int i = 0; i < 4; i++) {
		t = trace_start_as(forms[i], true);
		CHECK_INT(refused_in(cg, 5, &pid), 5);
		all = trace_stop(&t);
		CHECK_MSG(denied_of(all, pid, rel) == 5, "--cgroup %s showed %zu of 5", forms[i],
			  denied_of(all, pid, rel));
		json_decref(all);
	}
	/* control: a trace of another cgroup shows none of them */
	t = trace_start_as(other, true);
	CHECK_INT(refused_in(cg, 5, &pid), 5);
	all = trace_stop(&t);
	CHECK_INT(denied_of(all, pid, rel), 0);
	json_decref(all);
}

TEST(trace_cgroup_takes_a_v1_devices_directory)
{
	char cg[4096];
	const char *rel;
	struct tracer t;
	json_t *all, *o;
	size_t i, n = 0;
	pid_t pid;

	need_root();
	if (!scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	CHECK(!scratch_cgroup_create(scratch_devices_root(), cg, sizeof(cg)));
	CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
	rel = rel_of(cg, scratch_devices_root());
	t = trace_start_as(cg, true);
	CHECK_INT(refused_in(cg, 5, &pid), 5);
	all = trace_stop(&t);
	json_array_foreach(all, i, o) {
		if (strcmp(str(o, "type"), "open_denied") || num(o, "pid") != pid)
			continue;
		CHECK_STR(str(o, "devices_cgroup"), rel);
		n++;
	}
	CHECK_INT(n, 5);
	json_decref(all);
}

/* `devcg trace ARGS` with its standard output and error in BUF: its exit status. */
static int run_trace(const char *args, char *buf, size_t size)
{
	char cmd[8192];
	size_t n;
	FILE *p;
	int status;

	snprintf(cmd, sizeof(cmd), "%s trace %s 2>&1", devcg_bin(), args);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	n = fread(buf, 1, size - 1, p);
	buf[n] = '\0';
	status = pclose(p);
	CHECK(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static size_t lines_in(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

TEST(trace_refuses_a_cgroup_that_does_not_exist_in_one_line)
{
	char cg[4096], gone[4096], args[8192], out[8192];
	const char *forms[3];

	need_root();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), gone, sizeof(gone)));
	CHECK(!scratch_cgroup_remove(gone));
	forms[0] = rel_of(gone, scratch_cgroup2_root()) + 1;
	forms[1] = rel_of(gone, scratch_cgroup2_root());
	forms[2] = gone;
	for (int i = 0; i < 3; i++) {
		snprintf(args, sizeof(args), "--cgroup '%s' --duration 0.1", forms[i]);
		CHECK_MSG(run_trace(args, out, sizeof(out)) == 1, "%s: %s", forms[i], out);
		CHECK_MSG(lines_in(out) == 1 && strstr(out, "not a cgroup directory, nor a cgroup below") &&
			  strstr(out, "No such file or directory"), "%s", out);
	}
	/* control: one that exists is traced */
	snprintf(args, sizeof(args), "--cgroup '%s' --duration 0.1", rel_of(cg, scratch_cgroup2_root()) + 1);
	CHECK_MSG(run_trace(args, out, sizeof(out)) == 0, "%s", out);
	CHECK(strstr(out, "\n-- ") != NULL);
}

TEST(trace_summary_with_cgroup_counts_what_it_shows_and_says_what_it_saw)
{
	unsigned long long shown, seen;
	char mine[4096], other[4096], text[8192];
	const char *rel, *p;
	struct tracer tj, tt;
	json_t *all, *sum;
	pid_t pid, opid;

	need_root();
	refusing_cgroup(mine, sizeof(mine));
	refusing_cgroup(other, sizeof(other));
	rel = rel_of(mine, scratch_cgroup2_root());
	tj = trace_start_as(rel, true);
	tt = trace_start_as(rel, false);
	CHECK_INT(refused_in(mine, 5, &pid), 5);
	CHECK_INT(refused_in(other, 7, &opid), 7);
	all = trace_stop(&tj);
	sum = summary_of(all);
	CHECK_INT(denied_of(all, pid, rel), 5);
	CHECK_INT(count_type(all, "open_denied"), 5);
	CHECK_INT(num(json_object_get(sum, "events"), "open_denied"), 5);
	/* control: the other cgroup's seven were traced, and not shown */
	CHECK(num(json_object_get(sum, "seen"), "open_denied") >= 12);
	json_decref(all);
	trace_stop_text(&tt, text, sizeof(text));
	p = strstr(text, "shown: ");
	CHECK_MSG(p && sscanf(p, "shown: cgroup_write %*u, bpf_prog_change %*u, open_denied %llu", &shown) == 1,
		  "%s", text);
	CHECK_INT(shown, 5);
	p = strstr(text, "seen (all cgroups and processes): ");
	CHECK_MSG(p && sscanf(p, "seen (all cgroups and processes): cgroup_write %*u, bpf_prog_change %*u, "
			      "open_denied %llu", &seen) == 1, "%s", text);
	CHECK(seen >= 12);
}

static bool starts_with(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* The last line of TEXT (which must end with a newline). */
static const char *last_line(const char *text, char *buf, size_t size)
{
	size_t n = strlen(text);
	const char *start;

	CHECK_MSG(n && text[n - 1] == '\n', "does not end with a newline: %s", text);
	for (start = text + n - 1; start > text && start[-1] != '\n'; start--)
		;
	snprintf(buf, size, "%.*s", (int)(text + n - 1 - start), start);
	return buf;
}

TEST(trace_hooks_note_is_whole_in_json_and_text_and_the_summary_has_a_line_of_its_own)
{
	char cg[4096], last[2048], line[8192];
	const char *rel, *why = NULL;
	struct tracer tj, tt;
	json_t *all, *o;
	bool in_note = false, note_done = false, summary = false;
	size_t i;
	FILE *f;

	need_root();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	rel = rel_of(cg, scratch_cgroup2_root());
	tj = trace_start_as(rel, true);
	tt = trace_start_as(rel, false);
	all = trace_stop(&tj);
	json_array_foreach(all, i, o)
		if (!strcmp(str(o, "type"), "hooks"))
			why = str(o, "why");
	CHECK(why != NULL);
	/* whole: its last line is the last thing chosen, the denied opens' hooks */
	last_line(why, last, sizeof(last));
	CHECK_MSG(starts_with(last, "denied opens: ") ||
		  starts_with(last, "bpf(2) device program changes, denied opens: "), "%s", why);
	/* the text: the same note, line for line, then the events, then the summary */
	f = trace_end(&tt);
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "devcg trace: hooks chosen:")) {
			in_note = true;
		} else if (in_note) {
			CHECK_MSG(strstr(why, line) != NULL, "a line not in the note: %s", line);
			if (!strcmp(line, last)) {
				in_note = false;
				note_done = true;
			}
		} else if (!strncmp(line, "-- ", 3)) {
			summary = true;
		}
	}
	fclose(f);
	CHECK_MSG(note_done, "the note's last line never came whole: %s", last);
	CHECK(summary);
	json_decref(all);
}

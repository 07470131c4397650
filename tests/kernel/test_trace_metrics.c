// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg trace --metrics end to end, on this kernel's hooks: the file the
 * trace keeps parses strictly as the Prometheus text format (tests/prom.h)
 * and its counters equal what the same trace reported as JSON: refused
 * opens by cgroup and device, gaps, revocations, lost events. Controls: a
 * device the cgroup allows gives no refused-open counter; a foreign
 * program that allows everything gives no revocation.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "prom.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
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

struct mtrace {
	pid_t pid;
	char out[64];
	char prom[128];
};

/* Start `devcg trace -j --cgroup REL --metrics FILE --metrics-interval 0.1`
 * with its output in a file; wait until it is tracing. */
static struct mtrace mtrace_start(const char *rel)
{
	struct mtrace t = { 0 };
	int fd;

	snprintf(t.out, sizeof(t.out), "/tmp/devcg-test-%s-trace-XXXXXX", scratch_tag());
	snprintf(t.prom, sizeof(t.prom), "/tmp/devcg-test-%s-metrics-%d.prom", scratch_tag(), (int)getpid());
	fd = mkstemp(t.out);
	CHECK(fd >= 0);
	t.pid = fork();
	CHECK(t.pid >= 0);
	if (t.pid == 0) {
		char *argv[] = { (char *)devcg_bin(), "trace", "-j", "--duration", "60", "--cgroup", (char *)rel,
				 "--metrics", t.prom, "--metrics-interval", "0.1", NULL };

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(fd, 1);
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

/* Stop it as systemd does (SIGTERM): its JSON lines into *ALL, its
 * metrics file, read strictly, into F. */
static void mtrace_stop(struct mtrace *t, json_t **all, struct prom_file *f)
{
	char line[8192], *text;
	int status;
	FILE *in;
	long n;

	usleep(150 * 1000); /* let the last events through the reorder delay */
	kill(t->pid, SIGTERM);
	CHECK(waitpid(t->pid, &status, 0) == t->pid);
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "devcg trace failed: %d", status);
	in = fopen(t->out, "r");
	CHECK(in != NULL);
	unlink(t->out);
	*all = json_array();
	while (fgets(line, sizeof(line), in)) {
		json_t *o = json_loads(line, 0, NULL);

		CHECK_MSG(o != NULL, "not JSON: %s", line);
		json_array_append_new(*all, o);
	}
	fclose(in);
	in = fopen(t->prom, "r");
	CHECK_MSG(in != NULL, "no metrics file %s", t->prom);
	text = calloc(1, 1 << 20);
	CHECK(text);
	n = (long)fread(text, 1, (1 << 20) - 1, in);
	fclose(in);
	unlink(t->prom);
	CHECK(n > 0);
	CHECK_MSG(!prom_parse(text, f), "%s in:\n%s", f->err, text);
	free(text);
}

static const char *str(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : NULL;
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

/*
 * Every counter of F equals the JSON of the same trace: each refused-open
 * series the number of open_denied events with its cgroup, devices cgroup
 * and device; each gap series the gaps of its cgroup and kind; each
 * revocation series the revocations of its cgroup; the losses the
 * summary's. And nothing is counted that the JSON did not report.
 */
static void check_metrics_equal_json(json_t *all, const struct prom_file *f)
{
	json_t *o, *lost = NULL;
	size_t i, j;

	json_array_foreach(all, i, o) {
		const char *type = str(o, "type");
		long long n = 0;
		json_t *p;

		if (!strcmp(type, "summary"))
			lost = json_object_get(o, "lost");
		if (!strcmp(type, "open_denied")) {
			const char *cg = str(o, "cgroup"), *cg1 = str(o, "devices_cgroup"), *dev = str(o, "dev");

			json_array_foreach(all, j, p)
				n += !strcmp(str(p, "type"), "open_denied") && !strcmp(str(p, "cgroup"), cg) &&
				     !strcmp(str(p, "devices_cgroup") ? str(p, "devices_cgroup") : "", cg1 ? cg1 : "") &&
				     !strcmp(str(p, "dev") ? str(p, "dev") : "unknown", dev ? dev : "unknown");
			CHECK_MSG(prom_value(f, "devcg_trace_refused_opens_total", "cgroup", cg, "devices_cgroup",
					     cg1 ? cg1 : "", "device", dev ? dev : "unknown", NULL) == n,
				  "refused opens of %s %s", cg, dev ? dev : "unknown");
		} else if (!strcmp(type, "gap")) {
			json_array_foreach(all, j, p)
				n += !strcmp(str(p, "type"), "gap") && !strcmp(str(p, "cgroup"), str(o, "cgroup")) &&
				     !strcmp(str(p, "kind"), str(o, "kind"));
			CHECK_MSG(prom_value(f, "devcg_trace_gaps_total", "cgroup", str(o, "cgroup"), "kind",
					     str(o, "kind"), NULL) == n, "gaps of %s", str(o, "cgroup"));
		} else if (!strcmp(type, "revoke")) {
			json_array_foreach(all, j, p)
				n += !strcmp(str(p, "type"), "revoke") && !strcmp(str(p, "cgroup"), str(o, "cgroup"));
			CHECK_MSG(prom_value(f, "devcg_trace_revocations_total", "cgroup", str(o, "cgroup"), NULL) == n,
				  "revocations of %s", str(o, "cgroup"));
		}
	}
	CHECK_INT(prom_sum(f, "devcg_trace_refused_opens_total"), count_type(all, "open_denied"));
	CHECK_INT(prom_sum(f, "devcg_trace_gaps_total"), count_type(all, "gap"));
	CHECK_INT(prom_sum(f, "devcg_trace_revocations_total"), count_type(all, "revoke"));
	CHECK(lost != NULL);
	CHECK_INT(prom_value(f, "devcg_trace_lost_events_total", "cause", "ringbuf", NULL), num(lost, "ringbuf"));
	CHECK_INT(prom_value(f, "devcg_trace_lost_events_total", "cause", "read", NULL), num(lost, "read"));
	CHECK_INT(prom_value(f, "devcg_trace_lost_events_total", "cause", "audit", NULL), num(lost, "audit"));
	CHECK(prom_declared(f, "devcg_trace_gaps_total", "counter"));
	CHECK(prom_declared(f, "devcg_trace_revocations_total", "counter"));
	CHECK(prom_declared(f, "devcg_trace_refused_opens_total", "counter"));
	CHECK(prom_declared(f, "devcg_trace_lost_events_total", "counter"));
}

/* The label KEY of sample S, or "". */
static const char *label(const struct prom_sample *s, const char *key)
{
	for (int i = 0; i < s->nlabels; i++)
		if (!strcmp(s->key[i], key))
			return s->val[i];
	return "";
}

/* The refused opens of DEVICE in cgroup CG, whatever the v1 devices cgroup. */
static long long refused_of(const struct prom_file *f, const char *cg, const char *device)
{
	long long n = 0;

	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->s[i].name, "devcg_trace_refused_opens_total") && !strcmp(label(&f->s[i], "cgroup"), cg) &&
		    !strcmp(label(&f->s[i], "device"), device))
			n += (long long)f->s[i].value;
	return n;
}

static void need_root(void)
{
	if (geteuid() != 0)
		SKIP("needs root");
	CHECK(access(devcg_bin(), X_OK) == 0);
}

/* A child that opens PATHS[0] and PATHS[1] N times each, counts its EPERMs,
 * then stays (its /proc entry names the devices of its refused opens)
 * until told to go. */
struct opener {
	volatile int done, go;
	long n, eperm[2];
	char paths[2][64];
};

static int opener_loop(void *arg)
{
	struct opener *o = arg;

	prctl(PR_SET_NAME, "metricsopener");
	for (long i = 0; i < o->n; i++) {
		for (int k = 0; k < 2; k++) {
			int fd = open(o->paths[k], O_RDONLY | O_CLOEXEC);

			if (fd >= 0)
				close(fd);
			else if (errno == EPERM)
				o->eperm[k]++;
		}
	}
	o->done = 1;
	while (!o->go)
		usleep(1000);
	return 0;
}

TEST(trace_metrics_count_each_refused_open_the_json_reports_and_none_of_an_allowed_device)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rw\n");
	struct opener *o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct devcg_error err = { 0 };
	struct prom_file f;
	struct mtrace t;
	char cg[4096];
	const char *rel;
	json_t *all;
	pid_t pid;

	need_root();
	need_v2();
	CHECK(o != MAP_FAILED);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK_MSG(!devcg_replace(cg, p, NULL, &err), "%s", err.msg);
	devcg_policy_free(p);
	rel = cg + strlen(scratch_cgroup2_root());
	t = mtrace_start(rel);
	o->n = 40;
	snprintf(o->paths[0], sizeof(o->paths[0]), "/dev/urandom"); /* c 1:9: refused */
	snprintf(o->paths[1], sizeof(o->paths[1]), "/dev/null");    /* c 1:3: allowed */
	pid = scratch_spawn(cg, opener_loop, o);
	CHECK(pid > 0);
	while (!o->done)
		usleep(1000);
	mtrace_stop(&t, &all, &f);
	o->go = 1;
	CHECK_INT(scratch_wait(pid), 0);
	CHECK_INT(o->eperm[0], 40);
	CHECK_INT(o->eperm[1], 0);
	check_metrics_equal_json(all, &f);
	/* every refusal, of its device, in its cgroup; the control: the
	 * allowed device has no counter */
	CHECK_INT(refused_of(&f, rel, "c 1:9"), 40);
	CHECK_INT(refused_of(&f, rel, "c 1:3"), 0);
	CHECK_INT(prom_sum(&f, "devcg_trace_refused_opens_total"), 40);
	prom_free(&f);
	json_decref(all);
	munmap(o, sizeof(*o));
}

TEST(trace_metrics_count_the_gaps_the_json_reports_by_cgroup_and_kind)
{
	static const char *const allows[] = { "c 1:3 rwm", "c 1:5 rwm", "c 1:9 rwm", "c 136:* rwm" };
	struct prom_file f;
	struct mtrace t;
	char cg[4096];
	const char *rel;
	json_t *all;
	size_t i;

	need_root();
	if (!scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	CHECK(!scratch_cgroup_create(scratch_devices_root(), cg, sizeof(cg)));
	rel = cg + strlen(scratch_devices_root());
	t = mtrace_start(rel);
	/* three deny-all replays, each its own burst */
	for (int c = 0; c < 3; c++) {
		CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
		for (i = 0; i < sizeof(allows) / sizeof(allows[0]); i++)
			CHECK(!scratch_cgroup_write(cg, "devices.allow", allows[i]));
		usleep(300 * 1000);
	}
	mtrace_stop(&t, &all, &f);
	CHECK(count_type(all, "gap") >= 1);
	check_metrics_equal_json(all, &f);
	CHECK_INT(prom_value(&f, "devcg_trace_gaps_total", "cgroup", rel, "kind", "v1_deny_all", NULL),
		  count_type(all, "gap"));
	prom_free(&f);
	json_decref(all);
}

/* A device program that allows only c 1:3 (NARROW) or everything. */
static int device_prog(bool narrow)
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

	return narrow ? bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "only_null", "GPL", only_null, 11, NULL)
		      : bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "allow_all", "GPL", allow_all, 2, NULL);
}

/* A child named "foreigner" attaches a program to CG beside devcg's. */
static void foreign_attach(const char *cg, bool narrow)
{
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		int cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC), pfd;

		prctl(PR_SET_NAME, "foreigner");
		pfd = device_prog(narrow);
		_exit(cfd < 0 || pfd < 0 || bpf_prog_attach(pfd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI) ? 1 : 0);
	}
	CHECK_INT(scratch_wait(pid), 0);
}

/* A foreign program (NARROW: allowing only c 1:3) joins devcg's filter,
 * which grants c 1:3 and c 1:9; then a child opens /dev/urandom and
 * /dev/null. Returns the trace's JSON and metrics. */
static void revoke_case(bool narrow, json_t **all, struct prom_file *f, const char **rel, char *cg, size_t size)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rw\nallow c 1:9 rw\n");
	struct opener *o = mmap(NULL, sizeof(*o), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct devcg_error err = { 0 };
	struct mtrace t;
	pid_t pid;

	CHECK(o != MAP_FAILED);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, size));
	CHECK_MSG(!devcg_replace(cg, p, NULL, &err), "%s", err.msg);
	devcg_policy_free(p);
	*rel = cg + strlen(scratch_cgroup2_root());
	t = mtrace_start(*rel);
	foreign_attach(cg, narrow);
	o->n = 20;
	snprintf(o->paths[0], sizeof(o->paths[0]), "/dev/urandom");
	snprintf(o->paths[1], sizeof(o->paths[1]), "/dev/null");
	pid = scratch_spawn(cg, opener_loop, o);
	CHECK(pid > 0);
	while (!o->done)
		usleep(1000);
	mtrace_stop(&t, all, f);
	o->go = 1;
	CHECK_INT(scratch_wait(pid), 0);
	CHECK_INT(o->eperm[0], narrow ? 20 : 0);
	CHECK_INT(o->eperm[1], 0);
	munmap(o, sizeof(*o));
}

TEST(trace_metrics_count_the_revocation_the_json_reports)
{
	struct prom_file f;
	const char *rel;
	char cg[4096];
	json_t *all;

	need_root();
	need_v2();
	revoke_case(true, &all, &f, &rel, cg, sizeof(cg));
	CHECK_INT(count_type(all, "revoke"), 1);
	check_metrics_equal_json(all, &f);
	CHECK_INT(prom_value(&f, "devcg_trace_revocations_total", "cgroup", rel, NULL), 1);
	prom_free(&f);
	json_decref(all);
}

/* the control: a foreign program that refuses nothing revokes nothing */
TEST(trace_metrics_count_no_revocation_for_a_foreign_program_that_allows_everything)
{
	struct prom_file f;
	const char *rel;
	char cg[4096];
	json_t *all;

	need_root();
	need_v2();
	revoke_case(false, &all, &f, &rel, cg, sizeof(cg));
	CHECK_INT(count_type(all, "revoke"), 0);
	CHECK_INT(count_type(all, "bpf_prog_change"), 1); /* the attach was seen */
	check_metrics_equal_json(all, &f);
	CHECK_INT(prom_sum(&f, "devcg_trace_revocations_total"), 0);
	CHECK_INT(prom_sum(&f, "devcg_trace_refused_opens_total"), 0);
	prom_free(&f);
	json_decref(all);
}

/* `devcg trace ARGS` with its output in BUF: its exit status. */
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

TEST(trace_refuses_a_metrics_file_it_cannot_write_in_one_line_before_tracing)
{
	char dir[128], args[512], out[4096], file[256];
	struct stat st;

	need_root();
	snprintf(dir, sizeof(dir), "/tmp/devcg-test-%s-metricsdir-%d", scratch_tag(), (int)getpid());
	CHECK(!mkdir(dir, 0755));
	/* a directory that is not there */
	snprintf(args, sizeof(args), "--duration 0.1 --metrics %s/none/x.prom", dir);
	CHECK_INT(run_trace(args, out, sizeof(out)), 1);
	CHECK_MSG(!strcmp(out + strcspn(out, "\n"), "\n") && strstr(out, "cannot open its directory") &&
		  strstr(out, "No such file or directory") && !strstr(out, "hooks"), "%s", out);
	/* a directory where the file should be */
	snprintf(file, sizeof(file), "%s/x.prom", dir);
	CHECK(!mkdir(file, 0755));
	snprintf(args, sizeof(args), "--duration 0.1 --metrics %s", file);
	CHECK_INT(run_trace(args, out, sizeof(out)), 1);
	CHECK_MSG(!strcmp(out + strcspn(out, "\n"), "\n") && strstr(out, "not a regular file") &&
		  !strstr(out, "hooks"), "%s", out);
	CHECK(!rmdir(file));
	/* the control: a file that can be written is, and the trace runs */
	CHECK_INT(run_trace(args, out, sizeof(out)), 0);
	CHECK(strstr(out, "hooks") != NULL);
	CHECK(!stat(file, &st) && S_ISREG(st.st_mode));
	CHECK(!unlink(file));
	CHECK(!rmdir(dir));
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// make bench: devcg against the designs in use today, side by side in one
// run. Benchmarks report numbers; nothing here passes or fails a test.
//
// Rows, at 10, 100, 1,000 and 10,000 rules (seeded random rule sets; the
// probed device, /dev/null, is matched by no rule: the worst case for a
// chain of compare blocks):
//   replace  devcg_replace() in process, the `devcg replace` command, a
//            compare-chain program (one block per rule, as runc, crun and
//            systemd generate) loaded and swapped with the same
//            BPF_F_REPLACE, and the cgroup v1 rewrite ('a' + the list);
//   access   open()+close() of /dev/null per second with no program, with
//            devcg's filter and with the chain, alternated in rounds;
//   gap      EPERMs readers see during swaps: v1 deny-all replay,
//            devcg replace --v1, devcg on v2;
//   trace    the open loop with and without `devcg trace`; its event rate.
#include "devcg.h"
#include "harness.h"
#include "reader.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>

void (*test_cleanup_hook)(void);

static const int sizes[] = { 10, 100, 1000, 10000 };
#define NSIZES 4

static bool quick;
static const char *devcg_bin = "build/devcg";
static const char *outdir = "build/bench";
static json_t *results;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	double median, p10, p90, p99;
	int n;
};

static struct stats summarize(double *v, int n)
{
	struct stats s = { .n = n };

	if (!n)
		return s;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	s.median = v[n / 2];
	s.p10 = v[n / 10];
	s.p90 = v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1];
	s.p99 = v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	return s;
}

static json_t *stats_json(struct stats s, const char *unit)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:i, s:s}", "median", s.median, "p10", s.p10, "p90",
			 s.p90, "p99", s.p99, "n", s.n, "unit", unit);
}

/* ---- rule sets ------------------------------------------------------------ */

static uint64_t rng_state;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

/*
 * N exceptions that never match c 1:3, c 1:9 or anything of major 1:
 * majors 2..4095, minors 0..1023 or '*' (one in ten).
 */
static struct devcg_policy *random_policy(int n, bool default_allow, uint64_t seed,
					  const char *extra_allows)
{
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_rule r = { .verb = default_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY,
				.type = DEVCG_ALL, .access = DEVCG_ACC_ALL, .major = DEVCG_ANY,
				.minor = DEVCG_ANY };

	rng_state = seed * 0x9E3779B97F4A7C15ull + 1;
	devcg_policy_apply(p, &r, NULL);
	if (extra_allows) {
		struct devcg_rules *rules = devcg_rules_new();

		devcg_rules_parse(rules, extra_allows, strlen(extra_allows), "bench", NULL, NULL);
		devcg_policy_apply_all(p, rules, NULL);
		devcg_rules_free(rules);
	}
	while ((int)devcg_policy_count(p) < n) {
		r = (struct devcg_rule){ .verb = default_allow ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW,
					 .type = rnd() % 4 ? DEVCG_CHAR : DEVCG_BLOCK,
					 .access = (uint8_t)(rnd() % 7 + 1), .major = 2 + rnd() % 4094,
					 .minor = rnd() % 10 ? rnd() % 1024 : DEVCG_ANY };
		devcg_policy_apply(p, &r, NULL);
	}
	return p;
}

static void write_rules_file(const struct devcg_policy *p, const char *path)
{
	struct devcg_rules *rules;
	FILE *f = fopen(path, "w");
	size_t i;

	if (!f || devcg_policy_to_rules(p, &rules))
		die(path);
	for (i = 0; i < devcg_rules_count(rules); i++) {
		char line[64];

		devcg_rule_format(devcg_rules_get(rules, i), line, sizeof(line));
		fprintf(f, "%s\n", line);
	}
	devcg_rules_free(rules);
	fclose(f);
}

/* ---- the compare chain (the bench's own generator, for comparison) ----- */

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* One block of type, access, major and minor tests per exception, then the
 * default: the shape of the programs runtimes generate today. */
static int chain_load(const struct devcg_policy *p, double *load_ms)
{
	const struct devcg_exception *ex = devcg_policy_exceptions(p);
	size_t n = devcg_policy_count(p), i, k = 0;
	bool allow = devcg_policy_default_allow(p);
	struct bpf_insn *v = calloc(n * 10 + 16, sizeof(*v));
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	uint64_t t0;
	int fd;

	v[k++] = INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_2, BPF_REG_1, 0, 0); /* access_type */
	v[k++] = INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_4, BPF_REG_1, 4, 0); /* major */
	v[k++] = INSN(BPF_LDX | BPF_W | BPF_MEM, BPF_REG_5, BPF_REG_1, 8, 0); /* minor */
	v[k++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_3, BPF_REG_2, 0, 0);
	v[k++] = INSN(BPF_ALU64 | BPF_RSH | BPF_K, BPF_REG_3, 0, 0, 16);      /* access */
	v[k++] = INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xffff);  /* type */
	for (i = 0; i < n; i++) {
		size_t start = k, j;

		v[k++] = INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 0, ex[i].type);
		v[k++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_1, BPF_REG_3, 0, 0);
		if (allow) { /* any shared bit denies */
			v[k++] = INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_1, 0, 0, ex[i].access);
			v[k++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_1, 0, 0, 0);
		} else { /* every requested bit must be held */
			v[k++] = INSN(BPF_ALU64 | BPF_AND | BPF_K, BPF_REG_1, 0, 0, ~ex[i].access & 7);
			v[k++] = INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_1, 0, 0, 0);
		}
		if (ex[i].major != DEVCG_ANY)
			v[k++] = INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 0, (int32_t)ex[i].major);
		if (ex[i].minor != DEVCG_ANY)
			v[k++] = INSN(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_5, 0, 0, (int32_t)ex[i].minor);
		v[k++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, !allow);
		v[k++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
		for (j = start; j < k - 2; j++) /* every test jumps to the next block */
			if (BPF_CLASS(v[j].code) == BPF_JMP)
				v[j].off = (int16_t)(k - j - 1);
	}
	v[k++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, allow);
	v[k++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	t0 = now_ns();
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "chain", "GPL", v, k, &o);
	*load_ms = (double)(now_ns() - t0) / 1e6;
	free(v);
	return fd < 0 ? -errno : fd;
}

/* ---- cgroups and loops ---------------------------------------------------- */

static void make_cg(char *cg, size_t len)
{
	if (scratch_cgroup_create(scratch_cgroup2_root(), cg, len))
		die("cannot make a scratch cgroup");
}

static void attach_fd(const char *cg, int fd, int replace_fd)
{
	int cfd = open(cg, O_RDONLY | O_DIRECTORY);
	LIBBPF_OPTS(bpf_prog_attach_opts, o, .flags = BPF_F_ALLOW_MULTI | (replace_fd >= 0 ? BPF_F_REPLACE : 0),
		    .replace_prog_fd = replace_fd >= 0 ? replace_fd : 0);

	if (cfd < 0 || bpf_prog_attach_opts(fd, cfd, BPF_CGROUP_DEVICE, &o))
		die("attach");
	close(cfd);
}

struct loop_arg {
	uint64_t ns;
	int pipe;
};

static int open_loop(void *arg)
{
	struct loop_arg *a = arg;
	uint64_t end = now_ns() + a->ns, n = 0;

	while ((n & 255) || now_ns() < end) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0)
			close(fd);
		n++;
	}
	if (write(a->pipe, &n, sizeof(n)) != sizeof(n))
		return 1;
	return 0;
}

/* open()+close() per second of a process in CG for MS milliseconds. */
static double opens_per_second(const char *cg, int ms)
{
	int p[2];
	uint64_t n = 0;
	struct loop_arg a = { .ns = (uint64_t)ms * 1000000ull };
	pid_t pid;

	if (pipe(p))
		die("pipe");
	a.pipe = p[1];
	pid = scratch_spawn(cg, open_loop, &a);
	if (read(p[0], &n, sizeof(n)) != sizeof(n))
		n = 0;
	scratch_wait(pid);
	close(p[0]);
	close(p[1]);
	return (double)n * 1000.0 / ms;
}

/* ---- readers for the gap row (tests/reader.c) ---------------------------- */

static const char *const reader_paths[2] = { "/dev/urandom", "/dev/null" };
static struct readers *rd;

static void readers_begin(const char *cg)
{
	rd = readers_start(cg, 2, reader_paths, 2);
	if (!rd)
		die("readers");
}

static uint64_t readers_end(void)
{
	uint64_t e;

	readers_stop(rd);
	e = readers_eperm(rd, 0) + readers_eperm(rd, 1);
	readers_free(rd);
	return e;
}

static void write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, text, strlen(text)) < 0)
		die(path);
	close(fd);
}

/* The v1 update runtimes do today: 'a' to devices.deny, then the list. */
static void v1_replay(const char *dir, const struct devcg_policy *p)
{
	const struct devcg_exception *ex = devcg_policy_exceptions(p);
	char path[4200], line[64];
	size_t i;

	snprintf(path, sizeof(path), "%s/devices.deny", dir);
	write_file(path, "a");
	snprintf(path, sizeof(path), "%s/devices.allow", dir);
	for (i = 0; i < devcg_policy_count(p); i++) {
		struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = ex[i].type, .access = ex[i].access,
					.major = ex[i].major, .minor = ex[i].minor };

		devcg_rule_format(&r, line, sizeof(line));
		write_file(path, line + 6);
	}
}

/* ---- rows ------------------------------------------------------------------ */

static int run_cmd(char *const argv[])
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void row_replace(int n, json_t *row)
{
	struct devcg_policy *a = random_policy(n, false, (uint64_t)n, "allow c 1:3 rwm\nallow c 1:9 rwm\n"),
			    *b = random_policy(n, false, (uint64_t)n + 7, "allow c 1:3 rwm\nallow c 1:9 rwm\n");
	int reps = quick ? 20 : n >= 10000 ? 60 : 300, cli_reps = quick ? 5 : 20, i;
	double *v = calloc((size_t)reps, sizeof(double));
	char cg[4096], fa[256], fb[256];
	struct stats s;

	make_cg(cg, sizeof(cg));
	devcg_replace(cg, a, NULL, NULL);
	for (i = 0; i < reps; i++) {
		uint64_t t0 = now_ns();

		if (devcg_replace(cg, i % 2 ? a : b, NULL, NULL))
			die("devcg_replace");
		v[i] = (double)(now_ns() - t0) / 1e6;
	}
	s = summarize(v, reps);
	json_object_set_new(row, "replace_lib_ms", stats_json(s, "ms"));
	fprintf(stderr, "  %6d rules: devcg_replace %.3f ms median, p99 %.3f ms\n", n, s.median, s.p99);

	snprintf(fa, sizeof(fa), "%s/rules-%d-a.txt", outdir, n);
	snprintf(fb, sizeof(fb), "%s/rules-%d-b.txt", outdir, n);
	write_rules_file(a, fa);
	write_rules_file(b, fb);
	for (i = 0; i < cli_reps; i++) {
		char *argv[] = { (char *)devcg_bin, "replace", cg, "-f", i % 2 ? fa : fb, NULL };
		uint64_t t0 = now_ns();

		if (run_cmd(argv))
			die("devcg replace");
		v[i] = (double)(now_ns() - t0) / 1e6;
	}
	s = summarize(v, cli_reps);
	json_object_set_new(row, "replace_cli_ms", stats_json(s, "ms"));
	fprintf(stderr, "  %6d rules: devcg replace (command) %.3f ms median\n", n, s.median);

	/* the compare chain: load (nearly all verifier) and the same swap */
	{
		int creps = quick || n >= 1000 ? 3 : 20, ok = 0, prev = -1, err = 0;
		char ccg[4096];

		make_cg(ccg, sizeof(ccg));
		for (i = 0; i < creps; i++) {
			double ms;
			uint64_t t0 = now_ns();
			int fd = chain_load(i % 2 ? a : b, &ms);

			if (fd < 0) {
				err = fd;
				v[ok] = ms;
				break;
			}
			attach_fd(ccg, fd, prev);
			if (prev >= 0)
				close(prev);
			prev = fd;
			v[ok++] = (double)(now_ns() - t0) / 1e6;
		}
		if (prev >= 0)
			close(prev);
		if (err) {
			json_object_set_new(row, "chain_ms", json_pack("{s:s, s:f}", "refused", strerror(-err),
								       "after_ms", v[ok]));
			fprintf(stderr, "  %6d rules: compare chain refused by the verifier (%s) after %.0f ms\n",
				n, strerror(-err), v[ok]);
		} else {
			s = summarize(v, ok);
			json_object_set_new(row, "chain_ms", stats_json(s, "ms"));
			fprintf(stderr, "  %6d rules: compare chain load+swap %.3f ms median\n", n, s.median);
		}
	}

	/* cgroup v1: 'a' and the allow list */
	if (scratch_devices_root()) {
		char v1[4096];
		int vreps = quick ? 5 : 20;

		if (scratch_cgroup_create(scratch_devices_root(), v1, sizeof(v1)))
			die("v1 cgroup");
		for (i = 0; i < vreps; i++) {
			uint64_t t0 = now_ns();

			v1_replay(v1, i % 2 ? a : b);
			v[i] = (double)(now_ns() - t0) / 1e6;
		}
		s = summarize(v, vreps);
		json_object_set_new(row, "v1_rewrite_ms", stats_json(s, "ms"));
		fprintf(stderr, "  %6d rules: v1 'a' + list %.3f ms median\n", n, s.median);
	}
	free(v);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

static void row_access(int n, json_t *row)
{
	/* default allow, N deny exceptions, none of which matches /dev/null */
	struct devcg_policy *p = random_policy(n, true, (uint64_t)n + 3, NULL);
	int rounds = quick ? 3 : 7, i, ms = quick ? 100 : 250, fd;
	double rd[16], rc[16], none_ops[16], dummy;
	char none[4096], dev[4096], ch[4096];
	struct stats sd, sc;

	make_cg(none, sizeof(none));
	make_cg(dev, sizeof(dev));
	make_cg(ch, sizeof(ch));
	if (devcg_replace(dev, p, NULL, NULL))
		die("devcg_replace");
	fd = chain_load(p, &dummy);
	if (fd >= 0) {
		attach_fd(ch, fd, -1);
		close(fd);
	}
	/* alternate, so that drift of the machine cancels in each ratio */
	for (i = 0; i < rounds; i++) {
		double base = opens_per_second(none, ms), d = opens_per_second(dev, ms);
		double c = fd >= 0 ? opens_per_second(ch, ms) : 0;
		double base2 = opens_per_second(none, ms);

		none_ops[i] = (base + base2) / 2;
		rd[i] = none_ops[i] / d;
		rc[i] = fd >= 0 ? none_ops[i] / c : 0;
	}
	sd = summarize(rd, rounds);
	sc = summarize(rc, rounds);
	json_object_set_new(row, "opens_per_s_none", stats_json(summarize(none_ops, rounds), "1/s"));
	json_object_set_new(row, "cost_devcg", stats_json(sd, "x"));
	if (fd >= 0)
		json_object_set_new(row, "cost_chain", stats_json(sc, "x"));
	else
		json_object_set_new(row, "cost_chain", json_pack("{s:s}", "refused", strerror(-fd)));
	fprintf(stderr, "  %6d rules: per open, devcg %.3fx, chain %s%.3fx of no program\n", n, sd.median,
		fd >= 0 ? "" : "(refused) ", sc.median);
	devcg_policy_free(p);
}

static void row_gap(int n, json_t *row)
{
	const char *keep = "allow c 1:3 rwm\nallow c 1:9 rwm\n";
	struct devcg_policy *a = random_policy(n, false, (uint64_t)n + 11, keep),
			    *b = random_policy(n, false, (uint64_t)n + 13, keep);
	int swaps = quick ? 20 : n >= 10000 ? 20 : n >= 1000 ? 100 : 200, i;
	char cg[4096];
	uint64_t e;

	make_cg(cg, sizeof(cg));
	devcg_replace(cg, a, NULL, NULL);
	readers_begin(cg);
	for (i = 0; i < swaps; i++)
		devcg_replace(cg, i % 2 ? a : b, NULL, NULL);
	e = readers_end();
	json_object_set_new(row, "eperm_devcg_v2", json_pack("{s:I, s:i}", "eperm", (json_int_t)e, "swaps", swaps));
	fprintf(stderr, "  %6d rules: EPERM during %d swaps: devcg v2 %llu", n, swaps, (unsigned long long)e);
	if (scratch_devices_root()) {
		char v1[4096];

		if (scratch_cgroup_create(scratch_devices_root(), v1, sizeof(v1)))
			die("v1 cgroup");
		v1_replay(v1, a);
		readers_begin(v1);
		for (i = 0; i < swaps; i++)
			v1_replay(v1, i % 2 ? a : b);
		e = readers_end();
		json_object_set_new(row, "eperm_v1_replay", json_pack("{s:I, s:i}", "eperm", (json_int_t)e, "swaps", swaps));
		fprintf(stderr, ", v1 replay %llu", (unsigned long long)e);
		readers_begin(v1);
		for (i = 0; i < swaps; i++)
			devcg_replace_v1(v1, i % 2 ? a : b, NULL);
		e = readers_end();
		json_object_set_new(row, "eperm_devcg_v1", json_pack("{s:I, s:i}", "eperm", (json_int_t)e, "swaps", swaps));
		fprintf(stderr, ", devcg replace --v1 %llu", (unsigned long long)e);
	}
	fputc('\n', stderr);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

static json_t *last_summary(const char *log)
{
	char line[65536];
	json_t *summary = NULL;
	FILE *f = fopen(log, "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"summary\"")) {
			json_decref(summary);
			summary = json_loads(line, 0, NULL);
		}
	}
	if (f)
		fclose(f);
	return summary;
}

/* The open loop with and without `devcg trace` (alternated rounds), then a
 * flood of refused opens for the rate at which it handles events. */
static void row_trace(json_t *out)
{
	int rounds = quick ? 3 : 7, ms = quick ? 100 : 250, i;
	double ratio[16];
	char cg[4096], log[256];
	json_t *loop_summary = NULL;
	pid_t tp;

	make_cg(cg, sizeof(cg));
	for (i = 0; i <= rounds; i++) {
		bool flood = i == rounds;
		double off = flood ? 0 : opens_per_second(cg, ms), on;

		snprintf(log, sizeof(log), "%s/trace-%s.jsonl", outdir, flood ? "flood" : "loop");
		tp = fork();
		if (tp == 0) {
			int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);

			dup2(fd, 1);
			dup2(null, 2);
			execl(devcg_bin, devcg_bin, "-j", "trace", (char *)NULL);
			_exit(127);
		}
		usleep(600 * 1000); /* started and attached */
		if (flood) {
			struct devcg_policy *deny = devcg_policy_new();
			struct devcg_rule r = { .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL, .access = 7,
						.major = DEVCG_ANY, .minor = DEVCG_ANY };

			devcg_policy_apply(deny, &r, NULL);
			devcg_replace(cg, deny, NULL, NULL);
			opens_per_second(cg, 500);
			devcg_reset(cg, NULL);
			devcg_policy_free(deny);
		} else {
			on = opens_per_second(cg, ms);
			ratio[i] = off / on;
		}
		kill(tp, SIGINT);
		waitpid(tp, NULL, 0);
		if (i == 0)
			loop_summary = last_summary(log);
	}
	json_object_set_new(out, "trace_cost", stats_json(summarize(ratio, rounds), "x"));
	if (loop_summary)
		json_object_set_new(out, "trace_loop_summary", loop_summary);
	snprintf(log, sizeof(log), "%s/trace-flood.jsonl", outdir);
	json_object_set_new(out, "trace_flood_summary", last_summary(log) ?: json_null());
	fprintf(stderr, "  trace: open loop %.3fx with devcg trace running\n", summarize(ratio, rounds).median);
}

static void bench(void)
{
	json_t *rows = json_array();
	int s;

	results = json_object();
	for (s = 0; s < NSIZES; s++) {
		json_t *row = json_pack("{s:i}", "rules", sizes[s]);

		fprintf(stderr, "bench: %d rules\n", sizes[s]);
		row_replace(sizes[s], row);
		row_access(sizes[s], row);
		row_gap(sizes[s], row);
		json_array_append_new(rows, row);
		scratch_cleanup();
	}
	json_object_set_new(results, "rows", rows);
	fprintf(stderr, "bench: trace cost\n");
	row_trace(results);
	scratch_cleanup();
}

int main(int argc, char **argv)
{
	char path[512];
	int i, status;
	pid_t pid;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--out") && i + 1 < argc)
			outdir = argv[++i];
		else if (!strcmp(argv[i], "--devcg") && i + 1 < argc)
			devcg_bin = argv[++i];
	}
	if (geteuid() != 0 || !scratch_cgroup2_root()) {
		fprintf(stderr, "bench: needs root and a cgroup2 mount\n");
		return 1;
	}
	/* the work runs in a child; this process cleans up after it, whatever happens */
	pid = fork();
	if (pid == 0) {
		bench();
		json_object_set_new(results, "quick", json_boolean(quick));
		snprintf(path, sizeof(path), "%s/results.json", outdir);
		if (json_dump_file(results, path, JSON_INDENT(2)))
			die(path);
		_exit(0);
	}
	signal(SIGINT, SIG_IGN);
	waitpid(pid, &status, 0);
	scratch_cleanup();
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

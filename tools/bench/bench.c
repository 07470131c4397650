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
//            devcg's filter and with the chain, alternated in rounds (each
//            the best of five short windows: least disturbed by the rest
//            of a shared machine);
//   gap      EPERMs readers see during swaps: v1 deny-all replay,
//            devcg replace --v1, devcg on v2;
//   trace    the open loop with and without `devcg trace`; its event rate;
//   crafted  at about 10,000 and 100,000 rules chosen against the filter's
//            hash (tests/crafted.h: all sharing one first slot under the
//            old fixed multiplier, and 16 against each multiplier devcg
//            tries with the secret its source shows, 0, so that its table
//            would be sorted), measured under a secret of the bench's own
//            drawing, as every devcg process draws one; and random rules
//            of the same number in the same rounds: devcg_replace()
//            beside the floor, and the per-open cost.
#include "devcg.h"
#include "harness.h"
#include "internal.h" /* devcg_filter_load(): one version alone, for the breakdown */
#include "crafted.h"
#include "bench.h"
#include "hotplug.h"
#include "reader.h"
#include "scratch.h"

#include <sys/random.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include <linux/perf_event.h>
#include <sched.h>

void (*test_cleanup_hook)(void);

/* tests/scratch.c fails a test through this (harness.h); here it ends
 * the bench */
void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench: %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ... and skips one through this: a bench cannot skip a row, it ends */
void test_skip(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bench: cannot run: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static const int sizes[] = { 10, 100, 1000, 10000 };
#define NSIZES 4

static bool quick;
static const char *only; /* --rows: a comma-separated list of rows to run */
static const char *devcg_bin = "build/devcg";
static const char *kernel_tests = "build/tests/kernel";
static const char *outdir = "build/bench";
static json_t *results;

/* CPU time of this thread (user and system), ns: what a swap costs
 * whatever else the machine runs */
static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

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

/* ---- the floor of a swap (raw bpf(2), no libbpf) ---------------------------- */

/* What the verifier walked for the floor's program. */
static unsigned int floor_verified;

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/*
 * The least any swap of a policy held in a map can cost: one array map
 * with one value of SIZE bytes (VALUE), filled and frozen, a minimal
 * BPF_CGROUP_DEVICE program that refers to it (allow everything), loaded
 * and attached with BPF_F_REPLACE in place of *PREV (or attached first).
 * Returns the new program's fd; *PREV is closed. DEVCG_PROG: the same
 * steps with devcg's program in place of the minimal one, which tells
 * how much of devcg's time is its program (verified and compiled).
 */
int floor_swap(int cg_fd, const void *value, size_t size, int *prev, bool devcg_prog)
{
	union bpf_attr a;
	struct bpf_insn prog[4];
	int map, fd;
	__u32 zero = 0;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = (__u32)size;
	a.max_entries = 1;
	a.map_flags = BPF_F_RDONLY_PROG;
	map = (int)sys_bpf(BPF_MAP_CREATE, &a);
	if (map < 0)
		die("floor: map create");
	memset(&a, 0, sizeof(a));
	a.map_fd = (__u32)map;
	a.key = (__u64)(unsigned long)&zero;
	a.value = (__u64)(unsigned long)value;
	if (sys_bpf(BPF_MAP_UPDATE_ELEM, &a))
		die("floor: map update");
	memset(&a, 0, sizeof(a));
	a.map_fd = (__u32)map;
	if (sys_bpf(BPF_MAP_FREEZE, &a))
		die("floor: map freeze");
	/* r1 = &value (binds the map to the program); r0 = 1; exit */
	prog[0] = INSN(BPF_LD | BPF_IMM | BPF_DW, BPF_REG_1, BPF_PSEUDO_MAP_VALUE, 0, map);
	prog[1] = INSN(0, 0, 0, 0, 0);
	prog[2] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
	prog[3] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (__u64)(unsigned long)prog;
	a.insn_cnt = 4;
	a.license = (__u64)(unsigned long)"GPL";
	fd = devcg_prog ? devcg_filter_load_program(map, value, NULL) : (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		die("floor: prog load");
	if (!floor_verified && !devcg_prog) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(fd, &info, &len))
			floor_verified = info.verified_insns;
	}
	close(map);
	memset(&a, 0, sizeof(a));
	a.target_fd = (__u32)cg_fd;
	a.attach_bpf_fd = (__u32)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI | (*prev >= 0 ? BPF_F_REPLACE : 0);
	a.replace_bpf_fd = *prev >= 0 ? (__u32)*prev : 0;
	if (sys_bpf(BPF_PROG_ATTACH, &a))
		die("floor: attach");
	if (*prev >= 0)
		close(*prev);
	*prev = fd;
	return fd;
}

/* What the verifier walked for devcg's program on CG (bpf_prog_info). */
static unsigned int verified_insns;

/* The value of the policy map of devcg's program on CG (what the floor
 * holds too), malloc'd, and its size. */
void *devcg_value(const char *cg, size_t *size)
{
	__u32 ids[4], cnt = 4, map_ids[8], i;
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int cfd = open(cg, O_RDONLY | O_DIRECTORY), pfd;
	void *v = NULL;

	if (cfd < 0 || bpf_prog_query(cfd, BPF_CGROUP_DEVICE, 0, NULL, ids, &cnt) || cnt != 1)
		die("devcg_value: query");
	close(cfd);
	pfd = bpf_prog_get_fd_by_id(ids[0]);
	info.nr_map_ids = 8;
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &info, &len))
		die("devcg_value: prog info");
	verified_insns = info.verified_insns;
	for (i = 0; i < info.nr_map_ids && !v; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int mfd = bpf_map_get_fd_by_id(map_ids[i]);

		if (mfd >= 0 && !bpf_obj_get_info_by_fd(mfd, &mi, &mlen) && !strcmp(mi.name, "devcg_policy")) {
			v = malloc(mi.value_size);
			*size = mi.value_size;
			if (!v || bpf_map_lookup_elem(mfd, &(__u32){ 0 }, v))
				die("devcg_value: lookup");
		}
		if (mfd >= 0)
			close(mfd);
	}
	close(pfd);
	if (!v)
		die("devcg_value: no policy map");
	return v;
}

/* ---- the floor of a trace: empty programs on the same hooks ----------------- */

/* The syscall tracepoints devcg trace uses where neither fentry nor kprobes
 * load (bpf/devcg_trace_tp.bpf.c). */
static const char *const trace_tps[] = { "sys_enter_write", "sys_exit_write", "sys_enter_bpf",
					 "sys_exit_bpf",    "sys_exit_openat", "sys_exit_openat2",
					 "sys_exit_open" };
#define NTRACE_TPS 7

static int empty_prog(enum bpf_prog_type type)
{
	struct bpf_insn prog[2] = { INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0),
				    INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) };
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = type;
	a.insns = (__u64)(unsigned long)prog;
	a.insn_cnt = 2;
	a.license = (__u64)(unsigned long)"GPL";
	return (int)sys_bpf(BPF_PROG_LOAD, &a);
}

/* In a child of its own mount namespace (tracefs is mounted there when the
 * host has it nowhere, as devcg trace does): attach an empty program to each
 * of the seven tracepoints (RAW false), or to the raw sys_enter and sys_exit
 * tracepoints (RAW true); write one byte to READY, hold until DONE closes. */
static int hold_empty_programs(bool raw, int ready, int done)
{
	char dir[] = "/tmp/devcg-bench-tracefs-XXXXXX", path[512], c;
	int i, fd, prog;

	if (raw) {
		prog = empty_prog(BPF_PROG_TYPE_RAW_TRACEPOINT);
		for (i = 0; i < 2 && prog >= 0; i++) {
			union bpf_attr a;

			memset(&a, 0, sizeof(a));
			a.raw_tracepoint.name = (__u64)(unsigned long)(i ? "sys_exit" : "sys_enter");
			a.raw_tracepoint.prog_fd = (__u32)prog;
			if (sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a) < 0)
				return 1;
		}
	} else {
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) || !mkdtemp(dir) ||
		    mount("tracefs", dir, "tracefs", 0, NULL))
			return 1;
		prog = empty_prog(BPF_PROG_TYPE_TRACEPOINT);
		for (i = 0; i < NTRACE_TPS && prog >= 0; i++) {
			struct perf_event_attr pa = { .type = PERF_TYPE_TRACEPOINT, .size = sizeof(pa),
						      .sample_period = 1, .wakeup_events = 1 };
			FILE *f;

			snprintf(path, sizeof(path), "%s/events/syscalls/%s/id", dir, trace_tps[i]);
			f = fopen(path, "r");
			if (!f || fscanf(f, "%llu", (unsigned long long *)&pa.config) != 1)
				return 1;
			fclose(f);
			fd = (int)syscall(__NR_perf_event_open, &pa, -1, 0, -1, 0);
			if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog) || ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
				return 1;
		}
		umount2(dir, MNT_DETACH);
		rmdir(dir);
	}
	if (prog < 0 || write(ready, "r", 1) != 1)
		return 1;
	while (read(done, &c, 1) > 0)
		;
	return 0;
}

struct holder {
	pid_t pid;
	int done;
};

static bool holder_start(struct holder *h, bool raw)
{
	int r[2], d[2];
	char c;

	if (pipe(r) || pipe(d))
		die("pipe");
	h->pid = fork();
	if (h->pid == 0) {
		close(r[0]);
		close(d[1]);
		_exit(hold_empty_programs(raw, r[1], d[0]));
	}
	close(r[1]);
	close(d[0]);
	h->done = d[1];
	if (read(r[0], &c, 1) != 1) {
		close(r[0]);
		close(h->done);
		waitpid(h->pid, NULL, 0);
		return false;
	}
	close(r[0]);
	return true;
}

static void holder_stop(struct holder *h)
{
	close(h->done);
	waitpid(h->pid, NULL, 0);
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

/* The best of K windows of MS of the open loop in CG (tests/scratch.c). */
static double best_opens_per_second(const char *cg, int k, int ms)
{
	double v = scratch_best_opens_per_second(cg, k, ms);

	if (v <= 0) {
		errno = v < 0 ? -(int)v : EIO;
		die("the open loop");
	}
	return v;
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
	int reps = quick ? 20 : n >= 10000 ? 60 : 300, cli_reps = quick ? 9 : 40, i;
	double *v = calloc((size_t)reps, sizeof(double));
	char cg[4096], fa[256], fb[256];
	struct stats s;

	double *fl = calloc((size_t)reps, sizeof(double)), *ratio = calloc((size_t)reps, sizeof(double)),
	       *load = calloc((size_t)reps, sizeof(double)), *flp = calloc((size_t)reps, sizeof(double)),
	       *cpu = calloc((size_t)reps, sizeof(double));
	void *val[2];
	size_t vsize[2];
	char fcg[4096], pcg[4096];
	int fcg_fd, pcg_fd, prev = -1, pprev = -1;

	make_cg(cg, sizeof(cg));
	make_cg(fcg, sizeof(fcg));
	make_cg(pcg, sizeof(pcg));
	devcg_replace(cg, b, NULL, NULL);
	val[1] = devcg_value(cg, &vsize[1]);
	devcg_replace(cg, a, NULL, NULL);
	val[0] = devcg_value(cg, &vsize[0]);
	fcg_fd = open(fcg, O_RDONLY | O_DIRECTORY);
	if (fcg_fd < 0)
		die(fcg);
	pcg_fd = open(pcg, O_RDONLY | O_DIRECTORY);
	if (pcg_fd < 0)
		die(pcg);
	floor_swap(fcg_fd, val[0], vsize[0], &prev, false);
	floor_swap(pcg_fd, val[0], vsize[0], &pprev, true);
	/* devcg and the floor side by side, in alternation; the floor's steps
	 * with devcg's program; and the part of devcg's time that is one
	 * filter version (map, fill, freeze, load) */
	for (i = 0; i < reps; i++) {
		struct devcg_filter_version fv;
		uint64_t t0 = now_ns(), c0 = cpu_ns(), c1;

		if (devcg_replace(cg, i % 2 ? a : b, NULL, NULL))
			die("devcg_replace");
		v[i] = (double)(now_ns() - t0) / 1e6;
		c1 = cpu_ns();
		t0 = now_ns();
		floor_swap(fcg_fd, val[i % 2 ? 0 : 1], vsize[i % 2 ? 0 : 1], &prev, false);
		fl[i] = (double)(now_ns() - t0) / 1e6;
		ratio[i] = v[i] / fl[i];
		cpu[i] = (double)(c1 - c0) / (double)(cpu_ns() - c1);
		t0 = now_ns();
		floor_swap(pcg_fd, val[i % 2 ? 0 : 1], vsize[i % 2 ? 0 : 1], &pprev, true);
		flp[i] = (double)(now_ns() - t0) / 1e6;
		t0 = now_ns();
		if (devcg_filter_load(i % 2 ? a : b, false, -1, NULL, &fv, NULL))
			die("devcg_filter_load");
		load[i] = (double)(now_ns() - t0) / 1e6;
		devcg_filter_close(&fv);
	}
	close(prev);
	close(fcg_fd);
	close(pprev);
	close(pcg_fd);
	s = summarize(v, reps);
	json_object_set_new(row, "replace_lib_ms", stats_json(s, "ms"));
	json_object_set_new(row, "replace_floor_ms", stats_json(summarize(fl, reps), "ms"));
	json_object_set_new(row, "replace_vs_floor", stats_json(summarize(ratio, reps), "x"));
	json_object_set_new(row, "replace_vs_floor_cpu", stats_json(summarize(cpu, reps), "x"));
	json_object_set_new(row, "filter_load_ms", stats_json(summarize(load, reps), "ms"));
	json_object_set_new(row, "floor_devcg_prog_ms", stats_json(summarize(flp, reps), "ms"));
	json_object_set_new(row, "policy_value_bytes", json_integer((json_int_t)vsize[0]));
	json_object_set_new(row, "verified_insns", json_integer(verified_insns));
	json_object_set_new(row, "floor_verified_insns", json_integer(floor_verified));
	fprintf(stderr, "  %6d rules: devcg_replace %.3f ms median, p99 %.3f ms; floor %.3f ms; ratio %.2fx "
		"(CPU time %.2fx); of which one filter version %.3f ms; the floor with devcg's program %.3f ms\n",
		n, s.median, s.p99, fl[reps / 2], summarize(ratio, reps).median, summarize(cpu, reps).median,
		load[reps / 2], flp[reps / 2]);
	free(val[0]);
	free(val[1]);
	free(fl);
	free(ratio);
	free(load);
	free(flp);
	free(cpu);

	snprintf(fa, sizeof(fa), "%s/rules-%d-a.txt", outdir, n);
	snprintf(fb, sizeof(fb), "%s/rules-%d-b.txt", outdir, n);
	write_rules_file(a, fa);
	write_rules_file(b, fb);
	{
		/* the command beside `devcg --version` (process start: its floor) */
		double *ver = calloc((size_t)cli_reps, sizeof(double)), *cr = calloc((size_t)cli_reps, sizeof(double));

		for (i = 0; i < cli_reps; i++) {
			char *argv[] = { (char *)devcg_bin, "replace", cg, "-f", i % 2 ? fa : fb, NULL };
			char *vargv[] = { (char *)devcg_bin, "--version", NULL };
			uint64_t t0 = now_ns();

			if (run_cmd(argv))
				die("devcg replace");
			v[i] = (double)(now_ns() - t0) / 1e6;
			t0 = now_ns();
			if (run_cmd(vargv))
				die("devcg --version");
			ver[i] = (double)(now_ns() - t0) / 1e6;
			cr[i] = v[i] / ver[i];
		}
		s = summarize(v, cli_reps);
		json_object_set_new(row, "replace_cli_ms", stats_json(s, "ms"));
		json_object_set_new(row, "version_cli_ms", stats_json(summarize(ver, cli_reps), "ms"));
		json_object_set_new(row, "cli_vs_version", stats_json(summarize(cr, cli_reps), "x"));
		fprintf(stderr, "  %6d rules: devcg replace (command) %.3f ms median; devcg --version %.3f ms; "
			"ratio %.2fx\n", n, s.median, ver[cli_reps / 2], summarize(cr, cli_reps).median);
		free(ver);
		free(cr);
	}

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
	int rounds = quick ? 3 : 9, i, ms = quick ? 30 : 50, fd;
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
		double base = best_opens_per_second(none, 5, ms), d = best_opens_per_second(dev, 5, ms);
		double c = fd >= 0 ? best_opens_per_second(ch, 5, ms) : 0;
		double base2 = best_opens_per_second(none, 5, ms);

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

/* Start `devcg -j trace` with its lines in LOG; return once it says which
 * hooks it attached (its first line), so that its start-up, which parses
 * the kernel's BTF, is not counted as its cost. */
static pid_t trace_start(const char *log)
{
	pid_t tp;
	int i;

	unlink(log); /* not the previous run's first line */
	tp = fork();
	if (tp == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(null, 2);
		execl(devcg_bin, devcg_bin, "-j", "trace", (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 1000; i++) {
		char buf[256] = "";
		FILE *f = fopen(log, "r");
		bool up = f && fgets(buf, sizeof(buf), f) && strstr(buf, "\"hooks\"");

		if (f)
			fclose(f);
		if (up)
			break;
		usleep(10 * 1000);
	}
	/* what it does once, after its first line, is not its cost */
	usleep(1000 * 1000);
	return tp;
}

static void trace_stop(pid_t tp)
{
	kill(tp, SIGINT);
	waitpid(tp, NULL, 0);
}

/*
 * The open loop with and without `devcg trace`, and with the floor of the
 * mechanism: empty programs on the same seven tracepoints (and, to see
 * whether they would be cheaper, on the raw sys_enter and sys_exit
 * tracepoints), each against the loop without anything just before and
 * after it, in alternated rounds, each measure the best of five short
 * windows; then a flood of refused opens for the rate at which the trace
 * handles events.
 */
static void row_trace(json_t *out)
{
	int rounds = quick ? 3 : 11, ms = quick ? 40 : 60, i, nfloor = 0, nraw = 0, ntrace = 0;
	double ratio[16], floor_ratio[16], raw_ratio[16], pp[16];
	char cg[4096], log[256];
	json_t *loop_summary = NULL;
	pid_t tp;

	make_cg(cg, sizeof(cg));
	snprintf(log, sizeof(log), "%s/trace-loop.jsonl", outdir);
	for (i = 0; i < rounds; i++) {
		double off1 = best_opens_per_second(cg, 5, ms), off2, off3, on, fl = 0;
		struct holder h;

		if (holder_start(&h, false)) {
			on = best_opens_per_second(cg, 5, ms);
			holder_stop(&h);
			off2 = best_opens_per_second(cg, 5, ms);
			fl = floor_ratio[nfloor++] = (off1 + off2) / 2 / on;
		} else {
			off2 = off1;
		}
		tp = trace_start(log);
		on = best_opens_per_second(cg, 5, ms);
		trace_stop(tp);
		off3 = best_opens_per_second(cg, 5, ms);
		ratio[ntrace] = (off2 + off3) / 2 / on;
		pp[ntrace] = fl ? (ratio[ntrace] - fl) * 100 : 0;
		ntrace++;
		if (holder_start(&h, true)) {
			on = best_opens_per_second(cg, 5, ms);
			holder_stop(&h);
			raw_ratio[nraw++] = (off3 + best_opens_per_second(cg, 5, ms)) / 2 / on;
		}
		if (i == 0)
			loop_summary = last_summary(log);
	}
	/* the flood */
	snprintf(log, sizeof(log), "%s/trace-flood.jsonl", outdir);
	tp = trace_start(log);
	{
		struct devcg_policy *deny = devcg_policy_new();
		struct devcg_rule r = { .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL, .access = 7,
					.major = DEVCG_ANY, .minor = DEVCG_ANY };

		devcg_policy_apply(deny, &r, NULL);
		devcg_replace(cg, deny, NULL, NULL);
		scratch_opens_per_second(cg, 500); /* a flood of refused opens */
		devcg_reset(cg, NULL);
		devcg_policy_free(deny);
	}
	trace_stop(tp);
	json_object_set_new(out, "trace_cost", stats_json(summarize(ratio, ntrace), "x"));
	if (nfloor) {
		json_object_set_new(out, "trace_floor_cost", stats_json(summarize(floor_ratio, nfloor), "x"));
		json_object_set_new(out, "trace_over_floor_pp", stats_json(summarize(pp, ntrace), "pp"));
	}
	if (nraw)
		json_object_set_new(out, "trace_raw_floor_cost", stats_json(summarize(raw_ratio, nraw), "x"));
	if (loop_summary)
		json_object_set_new(out, "trace_loop_summary", loop_summary);
	json_object_set_new(out, "trace_flood_summary", last_summary(log) ?: json_null());
	fprintf(stderr, "  trace: open loop %.3fx with devcg trace; floor (7 empty tracepoint programs) %.3fx; "
		"raw sys_enter/sys_exit floor %.3fx; trace over floor %+.1f pp (median of rounds)\n",
		summarize(ratio, ntrace).median, nfloor ? summarize(floor_ratio, nfloor).median : 0,
		nraw ? summarize(raw_ratio, nraw).median : 0, nfloor ? summarize(pp, ntrace).median : 0);
}

/*
 * Real peers: Debian's crun and runc updating a container's device list,
 * on v1 and on v2, beside devcg replacing the same list in the same
 * container, under the same readers. The containers are made by the
 * kernel tests' runtime helpers (tests/kernel/test_runtimes.c, section 5),
 * which write the rows to a file.
 */
static void row_peers(json_t *out)
{
	char path[512], quick_env[] = "DEVCG_BENCH_QUICK=1";
	json_t *rows;
	pid_t pid;
	int st;

	snprintf(path, sizeof(path), "%s/peers.json", outdir);
	unlink(path);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		setenv("DEVCG_BENCH_PEERS", path, 1);
		setenv("DEVCG", devcg_bin, 1);
		if (quick)
			putenv(quick_env);
		execl(kernel_tests, kernel_tests, "make_bench_runtime_updates_beside_devcg_in_one_container",
		      (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	rows = json_load_file(path, 0, NULL);
	if (!rows) {
		fprintf(stderr, "  peers: no results (%s exited %d)\n", kernel_tests,
			WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return;
	}
	for (size_t i = 0; i < json_array_size(rows); i++) {
		json_t *r = json_array_get(rows, i);

		if (json_object_get(r, "skipped"))
			fprintf(stderr, "  %s on %s: skipped (%s)\n", json_string_value(json_object_get(r, "runtime")),
				json_string_value(json_object_get(r, "cgroup")),
				json_string_value(json_object_get(r, "skipped")));
		else
			fprintf(stderr, "  %-5s in a %s container on %s: %lld EPERM in %lld updates, %.1f ms per update\n",
				json_string_value(json_object_get(r, "who")),
				json_string_value(json_object_get(r, "runtime")),
				json_string_value(json_object_get(r, "cgroup")),
				(long long)json_integer_value(json_object_get(r, "eperm")),
				(long long)json_integer_value(json_object_get(r, "updates")),
				json_real_value(json_object_get(r, "ms_per_update")));
	}
	json_object_set_new(out, "peers", rows);
}

/* ---- many containers --------------------------------------------------------- */

static int sleeper_pipe[2];

/* A process asleep in its cgroup until the bench closes the pipe. */
static int sleeper(void *arg)
{
	char c;

	(void)arg;
	close(sleeper_pipe[1]);
	while (read(sleeper_pipe[0], &c, 1) > 0)
		;
	return 0;
}

/* memlock: of FD (a program or a map), from /proc/self/fdinfo. */
static long long fd_memlock(int fd)
{
	char path[64], line[256];
	long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %lld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* The kernel memory of the device programs on CG and their maps. */
static long long cgroup_memlock(const char *cg)
{
	__u32 ids[4], cnt = 4, map_ids[8], i, j;
	int cfd = open(cg, O_RDONLY | O_DIRECTORY);
	long long sum = 0;

	if (cfd < 0 || bpf_prog_query(cfd, BPF_CGROUP_DEVICE, 0, NULL, ids, &cnt))
		die("memlock: query");
	close(cfd);
	for (i = 0; i < cnt; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int pfd = bpf_prog_get_fd_by_id(ids[i]);

		info.nr_map_ids = 8;
		info.map_ids = (__u64)(unsigned long)map_ids;
		if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &info, &len))
			die("memlock: prog");
		sum += fd_memlock(pfd);
		for (j = 0; j < info.nr_map_ids && j < 8; j++) {
			int mfd = bpf_map_get_fd_by_id(map_ids[j]);

			if (mfd >= 0) {
				sum += fd_memlock(mfd);
				close(mfd);
			}
		}
		close(pfd);
	}
	return sum;
}

/*
 * N scratch cgroups, each with a process asleep in it and a 100-rule devcg
 * policy: the time to install all of them, to replace each once again, the
 * kernel memory they take, and the cost of an open in one of them with the
 * others loaded, against a cgroup with no program (alternated rounds).
 */
static long long distinct_memlock(char (*cgs)[4096], int n, int *progs);

static void row_scale(int n, bool shared, json_t *row)
{
	struct devcg_cache *cache = shared ? devcg_cache_new(16) : NULL;
	DEVCG_OPTS(devcg_replace_opts, o, .cache = cache);
	int progs = 0;
	struct devcg_policy *a = random_policy(100, true, 101, NULL), *b = random_policy(100, true, 102, NULL);
	char (*cgs)[4096] = calloc((size_t)n, sizeof(*cgs)), none[4096];
	int i, rounds = quick ? 3 : 9, ms = quick ? 30 : 50;
	double install, replace, ratio[16];
	long long memlock = 0;
	uint64_t t0;
	pid_t *pids = calloc((size_t)n, sizeof(pid_t));

	if (!cgs || !pids || pipe(sleeper_pipe))
		die("scale");
	for (i = 0; i < n; i++) {
		make_cg(cgs[i], sizeof(cgs[i]));
		pids[i] = scratch_spawn(cgs[i], sleeper, NULL);
	}
	make_cg(none, sizeof(none));
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (devcg_replace(cgs[i], a, &o, NULL))
			die("scale: install");
	install = (double)(now_ns() - t0) / 1e6;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		if (devcg_replace(cgs[i], b, &o, NULL))
			die("scale: replace");
	replace = (double)(now_ns() - t0) / 1e6;
	/* a program several cgroups share counts once */
	memlock = distinct_memlock(cgs, n, &progs);
	for (i = 0; i < rounds; i++) {
		double base = best_opens_per_second(none, 5, ms), d = best_opens_per_second(cgs[0], 5, ms);

		ratio[i] = (base + best_opens_per_second(none, 5, ms)) / 2 / d;
	}
	close(sleeper_pipe[1]);
	close(sleeper_pipe[0]);
	for (i = 0; i < n; i++)
		scratch_wait(pids[i]);
	json_object_set_new(row, "shared", json_boolean(shared));
	json_object_set_new(row, "programs", json_integer(progs));
	json_object_set_new(row, "install_all_ms", json_real(install));
	json_object_set_new(row, "replace_all_ms", json_real(replace));
	json_object_set_new(row, "memlock_bytes", json_integer(memlock));
	json_object_set_new(row, "cost_one_of_many", stats_json(summarize(ratio, rounds), "x"));
	fprintf(stderr, "  %5d cgroups%s: install all %.1f ms (%.3f each), replace all %.1f ms (%.3f each), "
		"memlock %.2f MiB (%.1f KiB each), an open in one of them %.3fx of no program\n",
		n, shared ? " sharing" : "", install, install / n, replace, replace / n, (double)memlock / 1048576.0,
		(double)memlock / 1024.0 / n, summarize(ratio, rounds).median);
	free(cgs);
	free(pids);
	devcg_cache_free(cache);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

/* ---- shared programs (devcg_replace_opts.cache) ------------------------------ */

/* The kernel memory (memlock) of the distinct programs attached to the N
 * cgroups CGS and of their maps: a program several share counts once.
 * *PROGS: how many distinct programs. */
static long long distinct_memlock(char (*cgs)[4096], int n, int *progs)
{
	__u32 *seen = calloc((size_t)n + 1, sizeof(__u32)), map_ids[8], j;
	int i, k, nseen = 0;
	long long sum = 0;

	if (!seen)
		die("memlock");
	for (i = 0; i < n; i++) {
		__u32 ids[4], cnt = 4;
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int cfd = open(cgs[i], O_RDONLY | O_DIRECTORY), pfd;

		if (cfd < 0 || bpf_prog_query(cfd, BPF_CGROUP_DEVICE, 0, NULL, ids, &cnt) || cnt != 1)
			die("memlock: query");
		close(cfd);
		for (k = 0; k < nseen && seen[k] != ids[0]; k++)
			;
		if (k < nseen)
			continue;
		seen[nseen++] = ids[0];
		pfd = bpf_prog_get_fd_by_id(ids[0]);
		info.nr_map_ids = 8;
		info.map_ids = (__u64)(unsigned long)map_ids;
		if (pfd < 0 || bpf_obj_get_info_by_fd(pfd, &info, &len))
			die("memlock: prog");
		sum += fd_memlock(pfd);
		for (j = 0; j < info.nr_map_ids && j < 8; j++) {
			int mfd = bpf_map_get_fd_by_id(map_ids[j]);

			if (mfd >= 0) {
				sum += fd_memlock(mfd);
				close(mfd);
			}
		}
		close(pfd);
	}
	free(seen);
	*progs = nseen;
	return sum;
}

/* Bytes in the kernel's kmalloc caches now (active objects times their
 * size, /proc/slabinfo): what an attachment takes is not memlock. */
static long long kmalloc_bytes(void)
{
	FILE *f = fopen("/proc/slabinfo", "r");
	char line[512], name[64];
	long long sum = 0, active, total, size;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld %lld %lld", name, &active, &total, &size) == 4 &&
		    !strncmp(name, "kmalloc-", 8) && strncmp(name, "kmalloc-rcl", 11))
			sum += active * size;
	if (f)
		fclose(f);
	return sum;
}

static double load_average(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");

	if (f && fscanf(f, "%lf", &l) != 1)
		l = -1;
	if (f)
		fclose(f);
	return l;
}

static void install_cached(const char *cg, const struct devcg_policy *p, struct devcg_cache *c)
{
	DEVCG_OPTS(devcg_replace_opts, o, .cache = c);
	struct devcg_error err = { 0 };

	if (devcg_replace(cg, p, &o, &err)) {
		fprintf(stderr, "bench: %s\n", err.msg);
		exit(1);
	}
}

/*
 * The floor of a compare-and-swap by a cgroup's path, in raw calls: open
 * the directory, query its one program, attach FD in its place by
 * BPF_F_REPLACE (PREV: that program's fd, known, as a cache knows the
 * programs it holds), close. What devcg_replace() through a cache cannot
 * do without, given a path and no fd.
 */
static void path_cas(const char *cg, int fd, int prev)
{
	__u32 ids[4], cnt = 4;
	union bpf_attr a;
	int cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	memset(&a, 0, sizeof(a));
	a.query.target_fd = (__u32)cfd;
	a.query.attach_type = BPF_CGROUP_DEVICE;
	a.query.prog_ids = (__u64)(unsigned long)ids;
	a.query.prog_cnt = cnt;
	if (cfd < 0 || sys_bpf(BPF_PROG_QUERY, &a) || a.query.prog_cnt != 1)
		die("path floor: query");
	memset(&a, 0, sizeof(a));
	a.target_fd = (__u32)cfd;
	a.attach_bpf_fd = (__u32)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE;
	a.replace_bpf_fd = (__u32)prev;
	if (sys_bpf(BPF_PROG_ATTACH, &a))
		die("path floor: attach");
	close(cfd);
}

/* An allow-all program with no map, for the floor of bare attaches. */
static int bare_prog(void)
{
	struct bpf_insn prog[2] = { INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1),
				    INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0) };
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
	a.insns = (__u64)(unsigned long)prog;
	a.insn_cnt = 2;
	a.license = (__u64)(unsigned long)"GPL";
	fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	if (fd < 0)
		die("bare program");
	return fd;
}

/* One raw BPF_PROG_ATTACH of FD in place of PREV (-1: a first attach). */
static void bare_attach(int cg_fd, int fd, int prev)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.target_fd = (__u32)cg_fd;
	a.attach_bpf_fd = (__u32)fd;
	a.attach_type = BPF_CGROUP_DEVICE;
	a.attach_flags = BPF_F_ALLOW_MULTI | (prev >= 0 ? BPF_F_REPLACE : 0);
	a.replace_bpf_fd = prev >= 0 ? (__u32)prev : 0;
	if (sys_bpf(BPF_PROG_ATTACH, &a))
		die("bare attach");
}

#define SHARE_CGROUPS 1000
#define SHARE_POLICIES 10

/*
 * One 100-rule policy on 1,000 cgroups through one cache, beside the floor
 * of 1,000 bare attaches (raw BPF_PROG_ATTACH with BPF_F_REPLACE of one
 * program loaded already, on 1,000 other cgroups), in alternated rounds;
 * a cached replace beside today's floor of a swap (floor_swap(): map,
 * fill, freeze, load, attach); the kernel memory of 1,000 cgroups sharing
 * one program against one cgroup's, and what an attachment takes; and 10
 * distinct policies over 1,000 cgroups against 10 cgroups'.
 */
static void row_share(json_t *out)
{
	int n = SHARE_CGROUPS, rounds = quick ? 3 : 7, reps = quick ? 40 : 300, i, r, progs;
	struct devcg_policy *pol[SHARE_POLICIES + 1];
	char (*cgs)[4096] = calloc((size_t)n, sizeof(*cgs)), (*fcgs)[4096] = calloc((size_t)n, sizeof(*fcgs));
	char one[4096], ten[SHARE_POLICIES][4096], fcg[4096];
	int *ffd = calloc((size_t)n, sizeof(int)), bare[2], fcg_fd, prev = -1;
	double *inst = calloc((size_t)rounds, sizeof(double)), *flr = calloc((size_t)rounds, sizeof(double)),
	       *pflr = calloc((size_t)rounds, sizeof(double)), *pratio = calloc((size_t)rounds, sizeof(double)),
	       *iratio = calloc((size_t)rounds, sizeof(double)), *rep = calloc((size_t)reps, sizeof(double)),
	       *rfl = calloc((size_t)reps, sizeof(double)), *rratio = calloc((size_t)reps, sizeof(double));
	double cold_ms, cold_floor_ms, load0 = load_average();
	long long mem_one, mem_shared, mem_ten_ref = 0, mem_ten, slab0, slab1, per_attach;
	struct devcg_cache *cache = devcg_cache_new(64);
	struct devcg_cache_stats st = { .sz = sizeof(st) };
	json_t *row = json_object();
	size_t vsize;
	void *val;
	uint64_t t0;

	if (!cgs || !fcgs || !ffd || !inst || !flr || !pflr || !pratio || !iratio || !rep || !rfl || !rratio || !cache)
		die("share");
	for (i = 0; i <= SHARE_POLICIES; i++)
		pol[i] = random_policy(100, true, 201 + (uint64_t)i, NULL);
	bare[0] = bare_prog();
	bare[1] = bare_prog();
	for (i = 0; i < n; i++) {
		make_cg(cgs[i], sizeof(cgs[i]));
		make_cg(fcgs[i], sizeof(fcgs[i]));
		ffd[i] = open(fcgs[i], O_RDONLY | O_DIRECTORY);
		if (ffd[i] < 0)
			die(fcgs[i]);
	}
	/* what an attachment takes: 1,000 first attaches of one program */
	slab0 = kmalloc_bytes();
	for (i = 0; i < n; i++)
		bare_attach(ffd[i], bare[0], -1);
	slab1 = kmalloc_bytes();
	per_attach = (slab1 - slab0) / n;
	/* each cgroup starts with a program of its own (a runtime's, say):
	 * then every install below is a BPF_F_REPLACE, as the floor's */
	for (i = 0; i < n; i++)
		install_cached(cgs[i], pol[SHARE_POLICIES], NULL);

	/* the first install of a policy (one load, then hits), beside the floor */
	t0 = now_ns();
	for (i = 0; i < n; i++)
		install_cached(cgs[i], pol[0], cache);
	cold_ms = (double)(now_ns() - t0) / 1e6;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		bare_attach(ffd[i], bare[1], bare[0]);
	cold_floor_ms = (double)(now_ns() - t0) / 1e6;
	/* then again in alternated rounds, both policies cached; the floor of
	 * a compare-and-swap by path swaps the floor's cgroups to the other
	 * program, the bare attaches back (they run bare[1] here) */
	for (r = 0; r < rounds; r++) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			install_cached(cgs[i], pol[r % 2 ? 0 : 1], cache);
		inst[r] = (double)(now_ns() - t0) / 1e6;
		t0 = now_ns();
		for (i = 0; i < n; i++)
			path_cas(fcgs[i], bare[0], bare[1]);
		pflr[r] = (double)(now_ns() - t0) / 1e6;
		t0 = now_ns();
		for (i = 0; i < n; i++)
			bare_attach(ffd[i], bare[1], bare[0]);
		flr[r] = (double)(now_ns() - t0) / 1e6;
		iratio[r] = inst[r] / flr[r];
		pratio[r] = inst[r] / pflr[r];
	}
	/* back to policy 0 everywhere for the memory below */
	for (i = 0; i < n; i++)
		install_cached(cgs[i], pol[0], cache);

	/* a cached replace on one cgroup beside today's floor (load + attach) */
	make_cg(fcg, sizeof(fcg));
	install_cached(cgs[0], pol[0], NULL);
	val = devcg_value(cgs[0], &vsize);
	install_cached(cgs[0], pol[0], cache);
	fcg_fd = open(fcg, O_RDONLY | O_DIRECTORY);
	if (fcg_fd < 0)
		die(fcg);
	floor_swap(fcg_fd, val, vsize, &prev, false);
	for (i = 0; i < reps; i++) {
		t0 = now_ns();
		install_cached(cgs[0], pol[i % 2], cache);
		rep[i] = (double)(now_ns() - t0) / 1e6;
		t0 = now_ns();
		floor_swap(fcg_fd, val, vsize, &prev, false);
		rfl[i] = (double)(now_ns() - t0) / 1e6;
		rratio[i] = rep[i] / rfl[i];
	}
	install_cached(cgs[0], pol[0], cache);
	close(prev);
	close(fcg_fd);
	free(val);

	/* memory: one cgroup's, 1,000 sharing one program, 10 policies */
	make_cg(one, sizeof(one));
	install_cached(one, pol[0], NULL);
	mem_one = cgroup_memlock(one);
	mem_shared = distinct_memlock(cgs, n, &progs);
	if (progs != 1)
		die("share: 1,000 cgroups do not run one program");
	for (i = 0; i < SHARE_POLICIES; i++) {
		make_cg(ten[i], sizeof(ten[i]));
		install_cached(ten[i], pol[i], NULL);
		mem_ten_ref += cgroup_memlock(ten[i]);
	}
	for (i = 0; i < n; i++)
		install_cached(cgs[i], pol[i % SHARE_POLICIES], cache);
	mem_ten = distinct_memlock(cgs, n, &progs);
	if (progs != SHARE_POLICIES)
		die("share: 10 policies are not 10 programs");
	devcg_cache_stats(cache, &st);

	json_object_set_new(row, "cgroups", json_integer(n));
	json_object_set_new(row, "install_cold_ms", json_real(cold_ms));
	json_object_set_new(row, "install_cold_floor_ms", json_real(cold_floor_ms));
	json_object_set_new(row, "install_cold_vs_floor", json_real(cold_ms / cold_floor_ms));
	json_object_set_new(row, "install_all_ms", stats_json(summarize(inst, rounds), "ms"));
	json_object_set_new(row, "bare_attaches_ms", stats_json(summarize(flr, rounds), "ms"));
	json_object_set_new(row, "install_vs_floor", stats_json(summarize(iratio, rounds), "x"));
	json_object_set_new(row, "path_cas_ms", stats_json(summarize(pflr, rounds), "ms"));
	json_object_set_new(row, "install_vs_path_cas", stats_json(summarize(pratio, rounds), "x"));
	json_object_set_new(row, "cached_replace_ms", stats_json(summarize(rep, reps), "ms"));
	json_object_set_new(row, "floor_swap_ms", stats_json(summarize(rfl, reps), "ms"));
	json_object_set_new(row, "cached_replace_vs_floor", stats_json(summarize(rratio, reps), "x"));
	json_object_set_new(row, "memlock_one", json_integer(mem_one));
	json_object_set_new(row, "memlock_shared", json_integer(mem_shared));
	json_object_set_new(row, "per_attachment_bytes", json_integer(per_attach));
	json_object_set_new(row, "memlock_ten_reference", json_integer(mem_ten_ref));
	json_object_set_new(row, "memlock_ten_shared", json_integer(mem_ten));
	json_object_set_new(row, "cache_hits", json_integer((json_int_t)st.hits));
	json_object_set_new(row, "cache_misses", json_integer((json_int_t)st.misses));
	json_object_set_new(row, "load_average", json_pack("[f, f]", load0, load_average()));
	fprintf(stderr, "  %d cgroups, one 100-rule policy through a cache: first install %.1f ms (%.3f each) "
		"vs %d bare attaches %.1f ms: %.2fx; again, both cached: %.2fx (%.1f ms vs %.1f ms)\n",
		n, cold_ms, cold_ms / n, n, cold_floor_ms, cold_ms / cold_floor_ms, summarize(iratio, rounds).median,
		summarize(inst, rounds).median, summarize(flr, rounds).median);
	fprintf(stderr, "  the floor of a compare-and-swap by path (open, query, attach, close) %.1f ms: "
		"the cached install %.2fx of it; it %.2fx of the bare attaches\n", summarize(pflr, rounds).median,
		summarize(pratio, rounds).median, summarize(pflr, rounds).median / summarize(flr, rounds).median);
	fprintf(stderr, "  a cached replace %.3f ms vs the floor (load + attach) %.3f ms: %.2fx\n",
		summarize(rep, reps).median, summarize(rfl, reps).median, summarize(rratio, reps).median);
	fprintf(stderr, "  kernel memory: one cgroup %lld B; %d sharing one program %lld B (%.2fx) plus %lld B "
		"per attachment (kmalloc, measured); 10 policies over %d cgroups %lld B vs 10 cgroups %lld B "
		"(%.2fx); load average %.2f -> %.2f\n",
		mem_one, n, mem_shared, (double)mem_shared / (double)mem_one, per_attach, n, mem_ten, mem_ten_ref,
		(double)mem_ten / (double)mem_ten_ref, load0, load_average());
	json_object_set_new(out, "share", row);
	for (i = 0; i < n; i++)
		close(ffd[i]);
	close(bare[0]);
	close(bare[1]);
	devcg_cache_free(cache);
	for (i = 0; i <= SHARE_POLICIES; i++)
		devcg_policy_free(pol[i]);
	free(cgs);
	free(fcgs);
	free(ffd);
	free(inst);
	free(flr);
	free(pflr);
	free(pratio);
	free(iratio);
	free(rep);
	free(rfl);
	free(rratio);
}

/*
 * About N exceptions chosen against the filter's hash (tests/crafted.h),
 * on DEFAULT_ALLOW, from the first slot FIRST: one of each other key
 * shape too, so that an open looks up every shape; none matches
 * /dev/null (c 1:3).
 */
static struct devcg_policy *crafted_bench_policy(int n, bool default_allow, uint32_t first)
{
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_rule r = { .verb = default_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY, .type = DEVCG_ALL,
				.access = DEVCG_ACC_ALL, .major = DEVCG_ANY, .minor = DEVCG_ANY };

	if (!p || devcg_policy_apply(p, &r, NULL))
		die("crafted policy");
	crafted_add(p, CRAFTED_OLD_MULT, first, (size_t)n - 100);
	r.verb = default_allow ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW;
	r.type = DEVCG_CHAR;
	r.major = 7;
	devcg_policy_apply(p, &r, NULL);
	r.type = DEVCG_BLOCK;
	r.major = DEVCG_ANY;
	r.minor = 7;
	devcg_policy_apply(p, &r, NULL);
	if (crafted_against_every_multiplier(p, false) < 0)
		die("crafted policy: devcg still hashes it");
	return p;
}

/* The policy map values of devcg's filter for A and B, as devcg_replace()
 * installs them on CG (what the floor holds too). */
static void crafted_values(const char *cg, struct devcg_policy *a, struct devcg_policy *b, void *val[2],
			   size_t vsize[2])
{
	if (devcg_replace(cg, b, NULL, NULL))
		die("devcg_replace");
	val[1] = devcg_value(cg, &vsize[1]);
	if (devcg_replace(cg, a, NULL, NULL))
		die("devcg_replace");
	val[0] = devcg_value(cg, &vsize[0]);
}

/*
 * Crafted rules (crafted_bench_policy()) and, alternated with them in the
 * same rounds, seeded random ones of the same number (random_policy()):
 * devcg_replace() beside the floor holding the same bytes, and the open
 * loop beside no program.
 */
static void row_crafted(int n, json_t *row)
{
	struct devcg_policy *pol[2][2], *open_pol[2];
	int reps = quick ? 9 : n > 10000 ? 21 : 60, rounds = quick ? 3 : 9, ms = quick ? 30 : 50, i, k;
	double *v[2], *fl[2], *ratio[2], *cpu[2], rd[2][16], none_ops[16];
	char cg[2][4096], fcg[2][4096], none[4096], dev[2][4096];
	int fcg_fd[2], prev[2] = { -1, -1 }, cnt;
	unsigned int insns[2];
	struct devcg_policy_value *pv;
	struct devcg_table t;
	void *val[2][2];
	size_t vsize[2][2], size;
	static const char *const kinds[2] = { "crafted", "random" };
	uint32_t secret;

	/* crafted as anyone can from devcg's source: against the multipliers
	 * of secret 0, where the table is sorted; then a secret drawn as
	 * devcg draws its own */
	devcg_filter_hash_secret(0);
	pol[0][0] = crafted_bench_policy(n, false, 1000);
	pol[0][1] = crafted_bench_policy(n, false, 3000);
	open_pol[0] = crafted_bench_policy(n, true, 5000);
	if (devcg_filter_value(pol[0][0], false, &pv, &size, &t))
		die("crafted");
	json_object_set_new(row, "layout_secret_known", json_string(t.sorted ? "sorted" : "hash"));
	free(pv);
	if (getrandom(&secret, sizeof(secret), 0) != (ssize_t)sizeof(secret))
		die("getrandom");
	devcg_filter_hash_secret(secret);
	cnt = (int)devcg_policy_count(pol[0][0]);
	pol[1][0] = random_policy(cnt, false, (uint64_t)n + 21, NULL);
	pol[1][1] = random_policy(cnt, false, (uint64_t)n + 22, NULL);
	open_pol[1] = random_policy(cnt, true, (uint64_t)n + 23, NULL);
	if (devcg_filter_value(pol[0][0], false, &pv, &size, &t))
		die("crafted");
	json_object_set_new(row, "rules", json_integer(cnt));
	json_object_set_new(row, "layout", json_string(t.sorted ? "sorted" : "hash"));
	json_object_set_new(row, "lookup_slots", json_integer(pv->head.probes));
	free(pv);
	for (k = 0; k < 2; k++) {
		v[k] = calloc((size_t)reps, sizeof(double));
		fl[k] = calloc((size_t)reps, sizeof(double));
		ratio[k] = calloc((size_t)reps, sizeof(double));
		cpu[k] = calloc((size_t)reps, sizeof(double));
		if (!v[k] || !fl[k] || !ratio[k] || !cpu[k])
			die("crafted");
		make_cg(cg[k], sizeof(cg[k]));
		make_cg(fcg[k], sizeof(fcg[k]));
		crafted_values(cg[k], pol[k][0], pol[k][1], val[k], vsize[k]);
		insns[k] = verified_insns;
		fcg_fd[k] = open(fcg[k], O_RDONLY | O_DIRECTORY);
		if (fcg_fd[k] < 0)
			die(fcg[k]);
		floor_swap(fcg_fd[k], val[k][0], vsize[k][0], &prev[k], false);
	}
	/* devcg and the floor with the same bytes, crafted then random, in
	 * alternation */
	for (i = 0; i < reps; i++)
		for (k = 0; k < 2; k++) {
			uint64_t t0 = now_ns(), c0 = cpu_ns(), c1;

			if (devcg_replace(cg[k], pol[k][i % 2 ? 0 : 1], NULL, NULL))
				die("devcg_replace");
			v[k][i] = (double)(now_ns() - t0) / 1e6;
			c1 = cpu_ns();
			t0 = now_ns();
			floor_swap(fcg_fd[k], val[k][i % 2 ? 0 : 1], vsize[k][i % 2 ? 0 : 1], &prev[k], false);
			fl[k][i] = (double)(now_ns() - t0) / 1e6;
			ratio[k][i] = v[k][i] / fl[k][i];
			cpu[k][i] = (double)(c1 - c0) / (double)(cpu_ns() - c1);
		}
	/* the open loop: no program, devcg's filter of crafted deny
	 * exceptions on default allow, of random ones, alternated */
	make_cg(none, sizeof(none));
	for (k = 0; k < 2; k++) {
		make_cg(dev[k], sizeof(dev[k]));
		if (devcg_replace(dev[k], open_pol[k], NULL, NULL))
			die("devcg_replace");
	}
	for (i = 0; i < rounds; i++) {
		double base = best_opens_per_second(none, 5, ms), d0 = best_opens_per_second(dev[0], 5, ms),
		       d1 = best_opens_per_second(dev[1], 5, ms);

		none_ops[i] = (base + best_opens_per_second(none, 5, ms)) / 2;
		rd[0][i] = none_ops[i] / d0;
		rd[1][i] = none_ops[i] / d1;
	}
	json_object_set_new(row, "opens_per_s_none", stats_json(summarize(none_ops, rounds), "1/s"));
	for (k = 0; k < 2; k++) {
		json_t *o = json_object();

		close(prev[k]);
		close(fcg_fd[k]);
		json_object_set_new(o, "policy_value_bytes", json_integer((json_int_t)vsize[k][0]));
		json_object_set_new(o, "verified_insns", json_integer(insns[k]));
		json_object_set_new(o, "replace_lib_ms", stats_json(summarize(v[k], reps), "ms"));
		json_object_set_new(o, "replace_floor_ms", stats_json(summarize(fl[k], reps), "ms"));
		json_object_set_new(o, "replace_vs_floor", stats_json(summarize(ratio[k], reps), "x"));
		json_object_set_new(o, "replace_vs_floor_cpu", stats_json(summarize(cpu[k], reps), "x"));
		json_object_set_new(o, "cost_devcg", stats_json(summarize(rd[k], rounds), "x"));
		fprintf(stderr, "  %6d %s rules (%u instructions): devcg_replace %.3f ms median, floor %.3f ms, ratio "
			"%.2fx (CPU time %.2fx); per open %.3fx of no program\n", cnt, kinds[k], insns[k],
			summarize(v[k], reps).median, summarize(fl[k], reps).median, summarize(ratio[k], reps).median,
			summarize(cpu[k], reps).median, summarize(rd[k], rounds).median);
		json_object_set_new(row, kinds[k], o);
		free(val[k][0]);
		free(val[k][1]);
		free(v[k]);
		free(fl[k]);
		free(ratio[k]);
		free(cpu[k]);
		devcg_policy_free(pol[k][0]);
		devcg_policy_free(pol[k][1]);
		devcg_policy_free(open_pol[k]);
	}
}

static bool want(const char *row)
{
	size_t n = strlen(row);
	const char *p = only;

	if (!only)
		return true;
	for (; (p = strstr(p, row)); p += n)
		if ((p == only || p[-1] == ',') && (!p[n] || p[n] == ','))
			return true;
	return false;
}

static void bench(void)
{
	json_t *rows = json_array();
	int s;

	results = json_object();
	for (s = 0; s < NSIZES; s++) {
		json_t *row = json_pack("{s:i}", "rules", sizes[s]);

		if (want("replace") || want("access") || want("gap"))
			fprintf(stderr, "bench: %d rules\n", sizes[s]);
		if (want("replace"))
			row_replace(sizes[s], row);
		if (want("access"))
			row_access(sizes[s], row);
		if (want("gap"))
			row_gap(sizes[s], row);
		json_array_append_new(rows, row);
		scratch_cleanup();
	}
	json_object_set_new(results, "rows", rows);
	if (want("share")) {
		fprintf(stderr, "bench: shared programs\n");
		row_share(results);
		scratch_cleanup();
	}
	if (want("peers")) {
		fprintf(stderr, "bench: runtimes\n");
		row_peers(results);
		scratch_cleanup();
	}
	if (want("trace")) {
		fprintf(stderr, "bench: trace cost\n");
		row_trace(results);
		scratch_cleanup();
	}
	if (want("hotplug"))
		bench_hotplug(results, devcg_bin, quick);
	if (want("crafted")) {
		static const int counts[] = { 10000, 100000 };
		json_t *crafted = json_array();

		fprintf(stderr, "bench: rules crafted against the filter's hash\n");
		for (s = 0; s < 2; s++) {
			json_t *row = json_object();

			row_crafted(counts[s], row);
			json_array_append_new(crafted, row);
			scratch_cleanup();
		}
		json_object_set_new(results, "crafted", crafted);
	}
	/* last: tearing down 10,000 processes makes the load average (which
	 * the other rows report) a stale number for minutes */
	if (want("scale")) {
		static const int counts[] = { 10, 100, 1000, 10000 };
		json_t *scale = json_array();

		fprintf(stderr, "bench: many cgroups, a 100-rule policy and a sleeping process in each\n");
		for (s = 0; s < 8; s++) {
			json_t *row = json_pack("{s:i}", "cgroups", counts[s / 2]);

			row_scale(counts[s / 2], s % 2, row);
			json_array_append_new(scale, row);
			scratch_cleanup();
		}
		json_object_set_new(results, "scale", scale);
	}
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
		else if (!strcmp(argv[i], "--tests") && i + 1 < argc)
			kernel_tests = argv[++i];
		else if (!strcmp(argv[i], "--rows") && i + 1 < argc)
			only = argv[++i];
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

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * For make vmbench (tools/vmtest/vmbench.mk): the cost of `devcg trace` on
 * an open()+close() loop, with and without the trace in alternated rounds
 * (each the best of five short windows), on whatever kernel runs the suite
 * (the 6.1 guest, where fentry loads).
 * It prints one line, "bench-trace: {json}", that vmbench collects; it is
 * skipped unless DEVCG_BENCH_TRACE is set.
 */
#include "harness.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* The best of K windows of MS of the open loop in CG (scratch.c). */
static double best_opens_per_second(const char *cg, int k, int ms)
{
	double v = scratch_best_opens_per_second(cg, k, ms);

	CHECK_MSG(v > 0, "the open loop in %s: %s", cg, strerror(-(int)v));
	return v;
}

/* `devcg -j trace --hooks HOOK_KIND` with its lines in LOG, once it says
 * which hooks it attached (its first line, kept in HOOKS); -1 when it
 * ended first (those hooks refused). */
static pid_t trace_start(const char *log, const char *hook_kind, char *hooks, size_t size)
{
	const char *devcg = getenv("DEVCG") ? getenv("DEVCG") : "build/devcg";
	pid_t pid;

	unlink(log); /* not the previous run's first line */
	pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644), null = open("/dev/null", O_WRONLY);

		dup2(fd, 1);
		dup2(null, 2);
		execl(devcg, devcg, "-j", "trace", "--hooks", hook_kind, (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 12000; i++) {
		FILE *f = fopen(log, "r");
		bool up = f && fgets(hooks, (int)size, f) && strstr(hooks, "\"hooks\"");

		if (f)
			fclose(f);
		if (up) {
			/* what it does once, after its first line, is not its cost */
			usleep(1000 * 1000);
			return pid;
		}
		/* refused (--hooks kprobe where kprobes do not load) */
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		usleep(10 * 1000);
	}
	kill(pid, SIGKILL);
	test_fail(__FILE__, __LINE__, "devcg trace did not start within 120 s");
	return -1;
}

/*
 * The floor of the fentry hooks: empty programs on the functions the
 * trace hooks with fentry/fexit (its choice where fentry loads), attached
 * by this test itself; the fds of their links in FDS (-1 for none). Returns
 * how many attached; 0 where fentry does not load.
 */
static const struct {
	const char *fn;
	enum bpf_attach_type type;
} fentry_hooks[] = {
	{ "cgroup_file_write", BPF_TRACE_FENTRY },	{ "cgroup_file_write", BPF_TRACE_FEXIT },
	{ "devcgroup_check_permission", BPF_TRACE_FEXIT }, { "__x64_sys_bpf", BPF_TRACE_FENTRY },
	{ "__x64_sys_bpf", BPF_TRACE_FEXIT },		{ "__x64_sys_openat", BPF_TRACE_FEXIT },
	{ "__x64_sys_openat2", BPF_TRACE_FEXIT },	{ "__x64_sys_open", BPF_TRACE_FEXIT },
};
#define NHOOKS (sizeof(fentry_hooks) / sizeof(fentry_hooks[0]))

static int fentry_floor_attach(int fds[NHOOKS])
{
	struct bpf_insn prog[2] = { { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
				    { .code = BPF_JMP | BPF_EXIT } };
	int n = 0;

	for (size_t i = 0; i < NHOOKS; i++) {
		int id = libbpf_find_vmlinux_btf_id(fentry_hooks[i].fn, fentry_hooks[i].type), prog_fd;
		LIBBPF_OPTS(bpf_prog_load_opts, o, .expected_attach_type = fentry_hooks[i].type,
			    .attach_btf_id = (__u32)id);

		fds[i] = -1;
		if (id < 0)
			continue;
		prog_fd = bpf_prog_load(BPF_PROG_TYPE_TRACING, "floor", "GPL", prog, 2, &o);
		if (prog_fd < 0)
			continue;
		fds[i] = bpf_link_create(prog_fd, 0, fentry_hooks[i].type, NULL);
		close(prog_fd);
		n += fds[i] >= 0;
	}
	return n;
}

static void fentry_floor_detach(int fds[NHOOKS])
{
	for (size_t i = 0; i < NHOOKS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(v[0]), cmp_double);
	return v[n / 2];
}

/*
 * Each round: the loop alone, with `devcg trace` (its own choice of
 * hooks), alone, with empty programs on the same fentry hooks (where
 * fentry loads: the floor of that mechanism), alone, with `devcg trace
 * --hooks kprobe` (where kprobes load: bpf(2) and the opens on syscall
 * tracepoints, as every trace did before fentry on the syscalls), alone.
 */
TEST(make_bench_trace_cost_of_an_open_loop)
{
	int rounds = getenv("DEVCG_BENCH_ROUNDS") ? atoi(getenv("DEVCG_BENCH_ROUNDS")) : 7, ms = 100, k = 7, i;
	char cg[4096], log[256], hooks[4096] = "", other[4096] = "", *nl;
	double ratio[32], tp_ratio[32], floor_ratio[32], r10, r90;
	int ntp = 0, nfloor = 0, floor_fds[NHOOKS], attached = 0;
	struct utsname u;

	if (!getenv("DEVCG_BENCH_TRACE"))
		SKIP("for make vmbench (DEVCG_BENCH_TRACE)");
	if (geteuid() || !scratch_cgroup2_root())
		SKIP("needs root and a cgroup2 mount");
	if (rounds < 1 || rounds > 32)
		rounds = 7;
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	snprintf(log, sizeof(log), "/tmp/devcg-bench-trace-%s.jsonl", scratch_tag());
	best_opens_per_second(cg, 2, ms); /* warm up */
	for (i = 0; i < rounds; i++) {
		double off1 = best_opens_per_second(cg, k, ms), on, off2, off3;
		pid_t tp = trace_start(log, "auto", hooks, sizeof(hooks));

		on = best_opens_per_second(cg, k, ms);
		CHECK(!kill(tp, SIGINT));
		CHECK(waitpid(tp, NULL, 0) == tp);
		off2 = best_opens_per_second(cg, k, ms);
		CHECK(on > 0 && off1 > 0 && off2 > 0);
		ratio[i] = (off1 + off2) / 2 / on;
		/* the empty programs on the same fentry hooks */
		attached = fentry_floor_attach(floor_fds);
		if (attached) {
			on = best_opens_per_second(cg, k, ms);
			fentry_floor_detach(floor_fds);
			off3 = best_opens_per_second(cg, k, ms);
			floor_ratio[nfloor++] = (off2 + off3) / 2 / on;
			off2 = off3;
		} else {
			fentry_floor_detach(floor_fds);
		}
		/* kprobes may not load: then only the first */
		tp = trace_start(log, "kprobe", other, sizeof(other));
		if (tp > 0) {
			on = best_opens_per_second(cg, k, ms);
			CHECK(!kill(tp, SIGINT));
			CHECK(waitpid(tp, NULL, 0) == tp);
			off3 = best_opens_per_second(cg, k, ms);
			tp_ratio[ntp++] = (off2 + off3) / 2 / on;
		}
	}
	unlink(log);
	uname(&u);
	if ((nl = strchr(hooks, '\n')))
		*nl = 0;
	qsort(ratio, (size_t)rounds, sizeof(ratio[0]), cmp_double);
	r10 = ratio[rounds / 10];
	r90 = ratio[(rounds * 9) / 10];
	/* the hooks line is JSON already: embedded as it is */
	printf("bench-trace: {\"kernel\": \"%s\", \"rounds\": %d, \"ratio\": %.4f, \"p10\": %.4f, "
	       "\"p90\": %.4f, \"tracepoint_ratio\": %.4f, \"fentry_floor_ratio\": %.4f, "
	       "\"fentry_floor_hooks\": %d, \"hooks_line\": %s}\n",
	       u.release, rounds, ratio[rounds / 2], r10, r90, ntp ? median(tp_ratio, ntp) : 0.0,
	       nfloor ? median(floor_ratio, nfloor) : 0.0, attached, hooks[0] ? hooks : "null");
	CHECK_INT(scratch_cgroup_remove(cg), 0);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reader of any device program against the kernel: a program (runc's
 * and crun's from real containers, devcg's own with and without audit, one
 * shaped like libnvidia-container's, random compare chains) is attached to
 * a scratch cgroup, a child there probes device nodes (every default
 * device of the runtimes, wildcard majors at several minors, unlisted
 * majors, block and char; open r, w, rw and mknod), and the reader's
 * decision must equal the kernel's on every probe, and so must the rules it
 * reads back. Controls: a deliberately wrong reader (one decision flipped)
 * fails the same differential; a program calling a helper the reader does
 * not know is unreadable.
 */
#include "ktest.h"
#include "runtime.h"
#include "live/progread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, i) I(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define JMP_IMM(op, d, i, o) I(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP32_IMM(op, d, i, o) I(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* The probed nodes: the runtimes' default devices, wildcard majors (136,
 * 4) at several minors, unlisted majors and minors, block devices. Block
 * minors of loop stay below 8 (probe.h says why). */
static const struct scratch_node nodes[] = {
	{ "c-1-3", 'c', 1, 3 },      { "c-1-5", 'c', 1, 5 },     { "c-1-7", 'c', 1, 7 },
	{ "c-1-8", 'c', 1, 8 },      { "c-1-9", 'c', 1, 9 },     { "c-5-0", 'c', 5, 0 },
	{ "c-5-1", 'c', 5, 1 },      { "c-5-2", 'c', 5, 2 },     { "c-136-0", 'c', 136, 0 },
	{ "c-136-7", 'c', 136, 7 },  { "c-4-0", 'c', 4, 0 },     { "c-4-9", 'c', 4, 9 },
	{ "c-10-200", 'c', 10, 200 }, { "c-10-229", 'c', 10, 229 }, { "c-1-4", 'c', 1, 4 },
	{ "c-5-3", 'c', 5, 3 },      { "c-7-0", 'c', 7, 0 },     { "c-10-5", 'c', 10, 5 },
	{ "c-195-0", 'c', 195, 0 },  { "c-195-255", 'c', 195, 255 }, { "c-508-0", 'c', 508, 0 },
	{ "c-4095-4095", 'c', 4095, 4095 }, { "b-7-0", 'b', 7, 0 }, { "b-7-5", 'b', 7, 5 },
	{ "b-1-3", 'b', 1, 3 },      { "b-4095-7", 'b', 4095, 7 },
};
#define NNODES (sizeof(nodes) / sizeof(nodes[0]))
enum { PR_R, PR_W, PR_RW, PR_M, NPR };
static const uint8_t pr_access[NPR] = { DEVCG_ACC_READ, DEVCG_ACC_WRITE, DEVCG_ACC_READ | DEVCG_ACC_WRITE,
					DEVCG_ACC_MKNOD };
static const char *const pr_name[NPR] = { "open r", "open w", "open rw", "mknod" };

struct probe_job {
	const char *dir;
	uint8_t *res; /* shared: 1 when the kernel refused (EPERM) */
};

static int probe_child(void *arg)
{
	struct probe_job *j = arg;
	size_t k;

	for (k = 0; k < NNODES; k++) {
		const int flags[3] = { O_RDONLY, O_WRONLY, O_RDWR };
		char path[512], tmp[512];
		int p, fd;

		snprintf(path, sizeof(path), "%s/%s", j->dir, nodes[k].name);
		for (p = 0; p < 3; p++) {
			fd = open(path, flags[p] | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
			j->res[k * NPR + p] = fd < 0 && errno == EPERM;
			if (fd >= 0)
				close(fd);
		}
		snprintf(tmp, sizeof(tmp), "%s/m-%s", j->dir, nodes[k].name);
		j->res[k * NPR + PR_M] =
			mknod(tmp, (nodes[k].type == 'c' ? S_IFCHR : S_IFBLK) | 0600,
			      makedev(nodes[k].major, nodes[k].minor)) && errno == EPERM;
		unlink(tmp);
	}
	return 0;
}

/* The kernel's refusals of every probe by the programs of CGROUP. */
static void kernel_probe(const char *cgroup, const char *dir, uint8_t res[NNODES * NPR])
{
	uint8_t *shared = mmap(NULL, NNODES * NPR, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct probe_job j = { dir, shared };

	CHECK(shared != MAP_FAILED);
	CHECK_INT(scratch_run(cgroup, probe_child, &j), 0);
	memcpy(res, shared, NNODES * NPR);
	munmap(shared, NNODES * NPR);
}

/*
 * Attach PROG_FD to a new scratch cgroup, probe there, and compare with
 * the reader of the program (opts: a wrong reader for the control) and
 * with the rules it reads back. The number of probes that differ; *WHAT
 * says the first.
 */
static size_t differential(int prog_fd, const struct devcg_reader_opts *opts, bool *has_rules, char *what,
			   size_t len)
{
	char cg[4096], dir[4096];
	uint8_t res[NNODES * NPR];
	struct devcg_reader *r;
	struct devcg_policy *p = NULL;
	struct devcg_error err = { 0 };
	size_t k, q, bad = 0;
	int fd, ret;

	what[0] = '\0';
	CHECK_INT(scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)), 0);
	CHECK_INT(scratch_devdir_create(dir, sizeof(dir), nodes, NNODES), 0);
	fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_MSG(!bpf_prog_attach(prog_fd, fd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI), "attach: %s",
		  strerror(errno));
	close(fd);
	kernel_probe(cg, dir, res);
	CHECK_MSG(!devcg_reader_open(prog_fd, 0, opts, &r, &err), "%s", err.msg);
	ret = devcg_reader_policy(r, &p, &err);
	/* only a program no devices list can say has no rules */
	CHECK_MSG(!ret || (has_rules && ret == -ENOTSUP && strstr(err.msg, "no devices list can say")), "%s",
		  err.msg);
	if (has_rules)
		*has_rules = !ret;
	for (k = 0; k < NNODES; k++)
		for (q = 0; q < NPR; q++) {
			uint8_t type = nodes[k].type == 'c' ? DEVCG_CHAR : DEVCG_BLOCK;
			int kernel = !res[k * NPR + q];
			int reader = devcg_reader_decide(r, type, nodes[k].major, nodes[k].minor, pr_access[q], &err);
			int rules = p ? devcg_policy_check(p, type, nodes[k].major, nodes[k].minor, pr_access[q], NULL, NULL)
				      : kernel;

			CHECK_MSG(reader >= 0, "%s", err.msg);
			if (reader != kernel || rules != kernel) {
				if (!bad++)
					snprintf(what, len, "%s of %c %u:%u: kernel %s, reader %s, its rules %s", pr_name[q],
						 nodes[k].type, nodes[k].major, nodes[k].minor, kernel ? "allows" : "refuses",
						 reader ? "allows" : "refuses", rules ? "allow" : "refuse");
			}
		}
	devcg_policy_free(p);
	devcg_reader_free(r);
	scratch_devdir_remove(dir);
	scratch_cgroup_remove(cg);
	return bad;
}

/* The differential must hold, and fail under a reader that flips the
 * decision of one probed device (the control). */
static void differential_and_control(int prog_fd, const char *whose)
{
	DEVCG_OPTS(devcg_reader_opts, wrong, .flip_type = DEVCG_CHAR, .flip_major = 1, .flip_minor = 3);
	char what[512];
	bool wrong_rules; /* a flipped decision may be one no list says */
	size_t bad = differential(prog_fd, NULL, NULL, what, sizeof(what));

	CHECK_MSG(!bad, "%s: %zu probes differ, first %s", whose, bad, what);
	CHECK_MSG(differential(prog_fd, &wrong, &wrong_rules, what, sizeof(what)) > 0,
		  "%s: a reader flipping c 1:3 passed the differential", whose);
}

static uint32_t only_program(const char *cg)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	__u32 ids[8], cnt = 8, flags = 0;

	CHECK_MSG(fd >= 0, "open %s: %s", cg, strerror(errno));
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	CHECK_INT(cnt, 1);
	return ids[0];
}

static void runtime_differential(const char *rt)
{
	struct ctr c;
	int fd;
	struct devcg_reader *r;
	struct devcg_error err = { 0 };

	need(rt, V2);
	ctr_start(&c, rt, V2);
	fd = bpf_prog_get_fd_by_id(only_program(c.cg));
	CHECK(fd >= 0);
	CHECK_MSG(!devcg_reader_open(fd, 0, NULL, &r, &err), "%s", err.msg);
	CHECK_STR(devcg_reader_owner(r), rt);
	devcg_reader_free(r);
	differential_and_control(fd, rt);
	close(fd);
	ctr_destroy(&c);
}

TEST(reader_decides_runcs_program_as_the_kernel_on_every_probe)
{
	runtime_differential("runc");
}

TEST(reader_decides_cruns_program_as_the_kernel_on_every_probe)
{
	runtime_differential("crun");
}

/* devcg's own program, installed on a scratch cgroup by devcg_replace() */
static void devcg_differential(bool audit)
{
	struct devcg_policy *p = policy_of("a\nc 1:3 rwm\nc 1:5 rw\nc 136:* rw\nc 4:* r\nb 7:0 rw\nc 10:200 rwm\n"
					   "c 5:1 m\n");
	DEVCG_OPTS(devcg_replace_opts, o, .audit = audit);
	struct devcg_error err = { 0 };
	char cg[4096];
	int fd;

	need_v2();
	CHECK_INT(scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)), 0);
	CHECK_MSG(!devcg_replace(cg, p, &o, &err), "%s", err.msg);
	fd = bpf_prog_get_fd_by_id(o.prog_id);
	CHECK(fd >= 0);
	differential_and_control(fd, audit ? "devcg (audit)" : "devcg");
	close(fd);
	devcg_policy_free(p);
}

TEST(reader_decides_devcgs_own_program_as_the_kernel_on_every_probe)
{
	devcg_differential(false);
}

TEST(reader_decides_devcgs_own_audit_program_as_the_kernel_on_every_probe)
{
	devcg_differential(true);
}

/* Load hand-written instructions as a device program. */
static int load(const struct bpf_insn *insns, size_t n, const char *name)
{
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "GPL", insns, n, &o);

	CHECK_MSG(fd >= 0, "loading %s: %s", name, strerror(errno));
	return fd;
}

/* runc's prologue, and one rule block in its shape: TYPE ('a' any),
 * MAJOR, MINOR (-1 any), ACCESS; a match returns ALLOW */
static size_t prologue(struct bpf_insn *p)
{
	p[0] = LDX(BPF_W, 2, 1, 0);
	p[1] = ALU32_IMM(BPF_AND, 2, 0xffff);
	p[2] = LDX(BPF_W, 3, 1, 0);
	p[3] = ALU32_IMM(BPF_RSH, 3, 16);
	p[4] = LDX(BPF_W, 4, 1, 4);
	p[5] = LDX(BPF_W, 5, 1, 8);
	return 6;
}

static size_t block_in(struct bpf_insn *p, char type, int32_t major, int32_t minor, uint8_t access, int allow,
		       uint8_t scratch)
{
	size_t n = 0, k;
	size_t skips[4], ns = 0;

	if (type != 'a') {
		skips[ns++] = n;
		p[n++] = JMP_IMM(BPF_JNE, 2, type == 'c' ? DEVCG_CHAR : DEVCG_BLOCK, 0);
	}
	if (access != DEVCG_ACC_ALL) {
		p[n++] = MOV64_REG(scratch, 3);
		p[n++] = ALU32_IMM(BPF_AND, scratch, ~access & 7);
		skips[ns++] = n;
		p[n++] = JMP_IMM(BPF_JNE, scratch, 0, 0);
	}
	if (major >= 0) {
		skips[ns++] = n;
		p[n++] = JMP_IMM(BPF_JNE, 4, major, 0);
	}
	if (minor >= 0) {
		skips[ns++] = n;
		p[n++] = JMP32_IMM(BPF_JNE, 5, minor, 0);
	}
	p[n++] = MOV64_IMM(0, allow);
	p[n++] = EXIT();
	for (k = 0; k < ns; k++)
		p[skips[k]].off = (int16_t)(n - skips[k] - 1);
	return n;
}

static size_t block(struct bpf_insn *p, char type, int32_t major, int32_t minor, uint8_t access, int allow)
{
	return block_in(p, type, major, minor, access, allow, 1);
}

/* A program shaped like libnvidia-container's: its rules (the GPU, its
 * control and uvm devices) prepended to a runtime's program. */
TEST(reader_decides_an_nvidia_shaped_program_as_the_kernel_on_every_probe)
{
	struct bpf_insn p[256];
	size_t n;
	int fd;

	need_v2();
	n = prologue(p);
	/* (its blocks keep the context in r1 for the runtime's prologue) */
	n += block_in(p + n, 'c', 195, 0, DEVCG_ACC_READ | DEVCG_ACC_WRITE, 1, 6);
	n += block_in(p + n, 'c', 195, 255, DEVCG_ACC_READ | DEVCG_ACC_WRITE, 1, 6);
	n += block_in(p + n, 'c', 508, -1, DEVCG_ACC_READ | DEVCG_ACC_WRITE, 1, 6);
	/* the runtime's own, prologue again */
	n += prologue(p + n);
	n += block(p + n, 'a', -1, -1, DEVCG_ACC_MKNOD, 1);
	n += block(p + n, 'c', 1, 3, DEVCG_ACC_ALL, 1);
	n += block(p + n, 'c', 1, 5, DEVCG_ACC_ALL, 1);
	n += block(p + n, 'c', 136, -1, DEVCG_ACC_ALL, 1);
	n += block(p + n, 'c', 5, 2, DEVCG_ACC_ALL, 1);
	p[n++] = MOV64_IMM(0, 0);
	p[n++] = EXIT();
	fd = load(p, n, "nvidia_like");
	differential_and_control(fd, "nvidia-shaped");
	close(fd);
}

static uint64_t seed = 0x243f6a8885a308d3ull;

static uint32_t rnd32(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (uint32_t)seed;
}

/* Random compare chains of the probed numbers, allow and deny blocks. */
TEST(reader_decides_random_compare_chains_as_the_kernel_on_every_probe)
{
	static const int32_t majs[] = { 1, 4, 5, 7, 10, 136, 195, 4095 };
	static const int32_t mins[] = { 0, 3, 5, 7, 9, 200, 255, 4095 };
	unsigned int round, with_rules = 0;

	need_v2();
	for (round = 0; round < 12; round++) {
		struct bpf_insn p[512];
		size_t n = prologue(p), k, blocks = 1 + rnd32() % 10;
		char name[16], what[512];
		int fd;
		bool has_rules = false;

		for (k = 0; k < blocks; k++) {
			char type = "acb"[rnd32() % 3];
			int32_t major = rnd32() % 4 ? majs[rnd32() % 8] : -1;
			int32_t minor = rnd32() % 3 ? mins[rnd32() % 8] : -1;

			n += block(p + n, type, major, minor, (uint8_t)(1 + rnd32() % 7), (int)(rnd32() % 3 != 0));
		}
		p[n++] = MOV64_IMM(0, (int32_t)(rnd32() % 2));
		p[n++] = EXIT();
		snprintf(name, sizeof(name), "chain_%u", round);
		fd = load(p, n, name);
		CHECK_MSG(!differential(fd, NULL, &has_rules, what, sizeof(what)), "chain %u: %s", round, what);
		with_rules += has_rules;
		close(fd);
	}
	/* most chains say what a devices list can (the others: r and w
	 * allowed apart from rw, which no v1 list says) */
	CHECK_MSG(with_rules >= 6, "only %u of 12 chains had rules read back", with_rules);
}

/* Control: a program calling a helper the reader does not know (the
 * random number) is unreadable, loaded by the kernel all the same. */
TEST(reader_calls_a_loaded_program_with_an_unknown_helper_unreadable)
{
	const struct bpf_insn p[] = { CALL(BPF_FUNC_get_prandom_u32), ALU32_IMM(BPF_AND, 0, 1), EXIT() };
	struct devcg_reader *r;
	struct devcg_error err = { 0 };
	int fd;

	need_v2();
	fd = load(p, sizeof(p) / sizeof(p[0]), "prandom");
	CHECK_MSG(!devcg_reader_open(fd, 0, NULL, &r, &err), "%s", err.msg);
	CHECK_INT(devcg_reader_decide(r, DEVCG_CHAR, 1, 3, DEVCG_ACC_READ, &err), -ENOTSUP);
	CHECK_MSG(strstr(err.msg, "calls a helper the reader does not know"), "%s", err.msg);
	devcg_reader_free(r);
	close(fd);
}

/*
 * attach into a container a runtime made without devcg: no --force, no
 * config.json. The runtime's program is read back and taken over in one
 * swap; every probe the runtime allowed (and refused) is decided the same
 * afterwards, and a reader in the container sees no EPERM meanwhile.
 */
static void attach_takes_over(const char *rt)
{
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	uint8_t before[NNODES * NPR], after[NNODES * NPR];
	struct devcg_hotplug_result *res = NULL;
	struct devcg_hotplug_device d = { 0 };
	struct devcg_error err = { 0 };
	char dir[4096], gdir[4096], host[4200];
	size_t k, allowed = 0;
	struct creader rd;
	struct devcg_state *s;
	uint32_t runtime;
	struct ctr c;
	unsigned int cycle;

	need(rt, V2);
	ctr_start(&c, rt, V2);
	runtime = only_program(c.cg);
	CHECK_INT(scratch_devdir_create(dir, sizeof(dir), nodes, NNODES), 0);
	CHECK_INT(scratch_devdir_create(gdir, sizeof(gdir), (const struct scratch_node[]){ { "gpu", 'c', 4094, 0 } }, 1),
		  0);
	snprintf(host, sizeof(host), "%s/gpu", gdir);
	d.host_path = host;
	d.path = "/dev/fakegpu0";
	kernel_probe(c.cg, dir, before);
	for (k = 0; k < NNODES * NPR; k++)
		allowed += !before[k];
	/* the probes tell the runtime's allowed devices from its refused ones */
	CHECK(allowed > 0 && allowed < NNODES * NPR);

	creader_start(&c, &rd);
	CHECK_MSG(!devcg_attach(c.cg, &d, 1, NULL, &res, &err), "%s", err.msg);
	CHECK(res->swapped);
	CHECK_INT(res->replaced_id, runtime);
	CHECK_INT(res->entries[0].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(res);
	for (cycle = 0; cycle < 20; cycle++) {
		CHECK_MSG(!devcg_detach(c.cg, &d, 1, NULL, NULL, &err), "%s", err.msg);
		CHECK_MSG(!devcg_attach(c.cg, &d, 1, NULL, NULL, &err), "%s", err.msg);
	}
	creader_stop(&rd, eperm, opens);
	CHECK(opens[0] > 0 && opens[1] > 0);
	CHECK_INT(eperm[0], 0);
	CHECK_INT(eperm[1], 0);

	/* devcg's filter alone now, deciding every probe as the runtime's did */
	CHECK(!devcg_state_read(c.cg, &s, &err));
	CHECK(devcg_state_own(s) != NULL);
	CHECK_INT(devcg_state_count(s), 1);
	devcg_state_free(s);
	kernel_probe(c.cg, dir, after);
	for (k = 0; k < NNODES * NPR; k++)
		CHECK_MSG(before[k] == after[k], "%s of %c %u:%u: %s before attach, %s after", pr_name[k % NPR],
			  nodes[k / NPR].type, nodes[k / NPR].major, nodes[k / NPR].minor,
			  before[k] ? "refused" : "allowed", after[k] ? "refused" : "allowed");
	/* control: the same reader counts the EPERMs of a policy without urandom */
	creader_refused_control(&c);
	scratch_devdir_remove(dir);
	scratch_devdir_remove(gdir);
	ctr_destroy(&c);
}

TEST(attach_takes_over_runcs_program_keeping_every_device_it_allowed)
{
	attach_takes_over("runc");
}

TEST(attach_takes_over_cruns_program_keeping_every_device_it_allowed)
{
	attach_takes_over("crun");
}

/* `devcg ARGS...` (a shell-quoted string), its standard output in BUF and
 * its exit code. */
static int cli(char *buf, size_t size, const char *args)
{
	char cmd[8192];
	size_t len = 0, got;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", devcg_bin(), args);
	p = popen(cmd, "r");
	CHECK(p);
	while (len + 1 < size && (got = fread(buf + len, 1, size - 1 - len, p)) > 0)
		len += got;
	buf[len] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* show and check on a container a runtime made: its program named as the
 * runtime's, its rules printed, a refusal named as the runtime's */
static void show_and_check(const char *rt)
{
	char out[16384], args[8192];
	struct ctr c;
	json_t *o, *p;

	need(rt, V2);
	if (access(devcg_bin(), X_OK))
		SKIP("%s is not built", devcg_bin());
	ctr_start(&c, rt, V2);
	snprintf(args, sizeof(args), "show '%s'", c.cg);
	CHECK_INT(cli(out, sizeof(out), args), 0);
	CHECK_MSG(strstr(out, rt) && strstr(out, "its rules, read back from its instructions:") &&
			  strstr(out, "#     allow c 1:3 rwm") && strstr(out, "#     allow c 136:* rwm") &&
			  !strstr(out, "cannot read"),
		  "devcg show: %s", out);
	snprintf(args, sizeof(args), "-j show '%s'", c.cg);
	CHECK_INT(cli(out, sizeof(out), args), 0);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o, "not JSON: %s", out);
	p = json_array_get(json_object_get(o, "programs"), 0);
	CHECK_STR(jstr(p, "owner"), rt);
	CHECK(json_is_true(json_object_get(p, "read")));
	CHECK(json_object_get(p, "policy") != NULL);
	json_decref(o);
	/* check decides: allowed by the runtime's rules, refused by them */
	snprintf(args, sizeof(args), "check '%s' c 1:3 rw", c.cg);
	CHECK_MSG(cli(out, sizeof(out), args) == 0 && strstr(out, "allow"), "check c 1:3: %s", out);
	snprintf(args, sizeof(args), "check '%s' c 10:229 rw", c.cg);
	CHECK_MSG(cli(out, sizeof(out), args) == 1 && strstr(out, "deny") && strstr(out, rt), "check c 10:229: %s",
		  out);
	ctr_destroy(&c);
}

TEST(show_and_check_read_runcs_program)
{
	show_and_check("runc");
}

TEST(show_and_check_read_cruns_program)
{
	show_and_check("crun");
}

/* Control of the above: an unreadable program is shown with the reason, and
 * check cannot decide it (exit 3). */
TEST(show_and_check_say_why_a_program_cannot_be_read)
{
	const struct bpf_insn p[] = { CALL(BPF_FUNC_get_prandom_u32), ALU32_IMM(BPF_AND, 0, 1), EXIT() };
	char out[16384], args[8192], cg[4096];
	int fd, cfd;

	need_v2();
	if (access(devcg_bin(), X_OK))
		SKIP("%s is not built", devcg_bin());
	CHECK_INT(scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)), 0);
	fd = load(p, sizeof(p) / sizeof(p[0]), "prandom");
	cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cfd >= 0 && !bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	snprintf(args, sizeof(args), "show '%s'", cg);
	CHECK_INT(cli(out, sizeof(out), args), 0);
	CHECK_MSG(strstr(out, "devcg cannot read its rules") && strstr(out, "helper the reader does not know"),
		  "devcg show: %s", out);
	snprintf(args, sizeof(args), "check '%s' c 1:3 r", cg);
	CHECK_MSG(cli(out, sizeof(out), args) == 3 && strstr(out, "helper the reader does not know"), "check: %s",
		  out);
	close(cfd);
	close(fd);
}

/*
 * systemd's own program (sd_devices), as systemd as PID 1 on a pure cgroup
 * v2 host builds it for a transient service with each DevicePolicy= and
 * DeviceAllow= set below (the systemd guests: tools/vmtest/guest/
 * sd-devices.sh runs this test there; elsewhere it is skipped): the
 * reader's decisions and its rules read back equal the kernel's on every
 * probe, and a reader flipping one decision fails (the control). The
 * program is attached, by its fd, to a scratch cgroup of the test's.
 * (Each strict set allows /dev/null: systemd opens it for the service's
 * standard input, and the service would not start without it.)
 */
static bool systemd_v2_host(void)
{
	char comm[32] = "";
	FILE *f = fopen("/proc/1/comm", "r");

	if (f) {
		if (!fgets(comm, sizeof(comm), f))
			comm[0] = '\0';
		fclose(f);
	}
	return !strcmp(comm, "systemd\n") && !access("/sys/fs/cgroup/cgroup.controllers", F_OK);
}

/* Start a transient service with PROPS (-p arguments), find its device
 * program by name on its cgroup, stop it: the program, by a new fd. */
static int systemds_program(const char *props, unsigned int k)
{
	char cmd[2048], unit[64], cg[4096], path[4200];
	__u32 ids[8], cnt = 8, flags = 0, i;
	int cfd, fd = -1;
	FILE *p;

	snprintf(unit, sizeof(unit), "devcg-progread-sd-%d-%u.service", (int)getpid(), k);
	snprintf(cmd, sizeof(cmd), "systemd-run --quiet --unit=%s %s sleep 600", unit, props);
	CHECK_MSG(system(cmd) == 0, "%s failed", cmd);
	snprintf(cmd, sizeof(cmd), "systemctl show -P ControlGroup %s", unit);
	p = popen(cmd, "r");
	CHECK(p && fgets(cg, sizeof(cg), p));
	pclose(p);
	cg[strcspn(cg, "\n")] = '\0';
	CHECK_MSG(cg[0] == '/', "%s (%s) is not running (no cgroup)", unit, props);
	snprintf(path, sizeof(path), "/sys/fs/cgroup%s", cg);
	cfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK_MSG(cfd >= 0, "open %s: %s", path, strerror(errno));
	CHECK(!bpf_prog_query(cfd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(cfd);
	for (i = 0; i < cnt && fd < 0; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);
		int f = bpf_prog_get_fd_by_id(ids[i]);

		if (f >= 0 && !bpf_obj_get_info_by_fd(f, &info, &len) && !strcmp(info.name, "sd_devices"))
			fd = f;
		else if (f >= 0)
			close(f);
	}
	snprintf(cmd, sizeof(cmd), "systemctl stop %s", unit);
	CHECK(system(cmd) == 0);
	CHECK_MSG(fd >= 0, "%s (%s) has no sd_devices program", unit, props);
	return fd;
}

TEST(reader_decides_systemds_programs_as_the_kernel_on_every_probe)
{
	static const char *const sets[] = {
		"-p DevicePolicy=closed -p 'DeviceAllow=/dev/null rw'",
		"-p DevicePolicy=strict -p 'DeviceAllow=/dev/null rw' -p 'DeviceAllow=/dev/zero r' "
		"-p 'DeviceAllow=char-pts rw'",
		"-p DevicePolicy=closed -p 'DeviceAllow=char-mem rwm' -p 'DeviceAllow=block-loop r'",
		"-p DevicePolicy=strict -p 'DeviceAllow=/dev/null rw' -p 'DeviceAllow=/dev/full m' "
		"-p 'DeviceAllow=/dev/urandom w'",
		"-p DevicePolicy=strict -p 'DeviceAllow=/dev/null rw'",
		"-p DevicePolicy=auto -p 'DeviceAllow=/dev/null rwm' -p 'DeviceAllow=char-tty rw'",
	};

	need_v2();
	if (!systemd_v2_host())
		SKIP("needs systemd as PID 1 on a pure cgroup v2 host (the systemd-v2 guest)");
	for (unsigned int k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
		char whose[512];
		int fd = systemds_program(sets[k], k);

		snprintf(whose, sizeof(whose), "sd_devices of %s", sets[k]);
		differential_and_control(fd, whose);
		close(fd);
	}
}

/*
 * The programs named in DEVCG_TEST_PROG_IDS, "ID:OWNER ..." (OWNER as
 * devcg_reader_owner() must name it), each read and decided as the kernel
 * decides, with its control: the programs a Kubernetes node's runtimes and
 * systemd installed on its pods' cgroups (the k8s-node guest,
 * tools/vmtest/guest/k8s-node.sh, sets it). SKIP without the variable.
 */
TEST(reader_decides_the_programs_in_DEVCG_TEST_PROG_IDS_as_the_kernel_on_every_probe)
{
	const char *env = getenv("DEVCG_TEST_PROG_IDS");
	char copy[4096], *tok, *save = NULL;
	unsigned int n = 0;

	if (!env || !*env)
		SKIP("DEVCG_TEST_PROG_IDS is not set (the k8s-node guest sets it to its pods' programs)");
	need_v2();
	CHECK_MSG(strlen(env) < sizeof(copy), "DEVCG_TEST_PROG_IDS is too long");
	snprintf(copy, sizeof(copy), "%s", env);
	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		struct devcg_error err = { 0 };
		struct devcg_reader *r;
		char *end, whose[128];
		unsigned long id = strtoul(tok, &end, 10);
		int fd;

		CHECK_MSG(end != tok && *end == ':' && end[1], "DEVCG_TEST_PROG_IDS: '%s' is not ID:OWNER", tok);
		fd = bpf_prog_get_fd_by_id((uint32_t)id);
		CHECK_MSG(fd >= 0, "program %lu: %s", id, strerror(errno));
		CHECK_MSG(!devcg_reader_open(fd, 0, NULL, &r, &err), "program %lu: %s", id, err.msg);
		CHECK_MSG(!strcmp(devcg_reader_owner(r), end + 1), "program %lu: the reader says it is %s's, not %s's",
			  id, devcg_reader_owner(r), end + 1);
		devcg_reader_free(r);
		snprintf(whose, sizeof(whose), "%s's program %lu", end + 1, id);
		differential_and_control(fd, whose);
		close(fd);
		n++;
	}
	CHECK_MSG(n > 0, "DEVCG_TEST_PROG_IDS names no program");
}

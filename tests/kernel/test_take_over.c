// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * allow and attach on a cgroup with several device programs of others (in
 * multi mode a runtime's program and a vendor hook's run side by side, and
 * a request is allowed only when each allows it): devcg reads every one,
 * starts from what they allow together, replaces one of them
 * (BPF_F_REPLACE) and detaches the others one by one. The prober (probe.h)
 * in the cgroup says what the kernel allows before, between the steps and
 * after: nothing is ever allowed that was refused, but the device the
 * operation grants, and nothing allowed is lost. Controls: a take-over
 * that keeps only the first program's rules is caught by the same
 * comparison; a program devcg cannot read refuses the take-over, naming
 * it, and changes nothing.
 *
 * replace, given a whole new policy, on two and three programs of others:
 * devcg's filter alone is left, deciding every probe as the new policy
 * does on a cgroup of its own; between the steps (a failure injected after
 * the first) every probe that the old and the new policy allow is
 * allowed, and none the new one refuses; a reader of devices both allow
 * sees no EPERM. Controls: the other order (the others detached first) is
 * caught by the same check; readers of a device the new policy refuses
 * are refused; a program devcg cannot read refuses the replace unless
 * --force, naming it.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "probe.h"
#include "reader.h"
#include "runtime.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* One rule of a runc-shaped program: TYPE ('a' any), MAJOR, MINOR (-1
 * any), the accesses it allows. */
struct blk {
	char type;
	int32_t major, minor;
	uint8_t access;
};

#define M DEVCG_ACC_MKNOD
#define RW (DEVCG_ACC_READ | DEVCG_ACC_WRITE)
#define RWM DEVCG_ACC_ALL

/* A program in runc's shape: its prologue (type, access, major, minor in
 * r2-r5), a block per rule that returns 1 on a match, 0 at the end. */
static int load_runc_shaped(const char *name, const struct blk *b, size_t nb)
{
	struct bpf_insn p[512];
	size_t n = 0, k, j;
	int fd;

	p[n++] = LDX(BPF_W, 2, 1, 0);
	p[n++] = ALU32_IMM(BPF_AND, 2, 0xffff);
	p[n++] = LDX(BPF_W, 3, 1, 0);
	p[n++] = ALU32_IMM(BPF_RSH, 3, 16);
	p[n++] = LDX(BPF_W, 4, 1, 4);
	p[n++] = LDX(BPF_W, 5, 1, 8);
	for (k = 0; k < nb; k++) {
		size_t skips[4], ns = 0;

		if (b[k].type != 'a') {
			skips[ns++] = n;
			p[n++] = JMP_IMM(BPF_JNE, 2, b[k].type == 'c' ? DEVCG_CHAR : DEVCG_BLOCK, 0);
		}
		if (b[k].access != DEVCG_ACC_ALL) {
			p[n++] = MOV64_REG(1, 3);
			p[n++] = ALU32_IMM(BPF_AND, 1, ~b[k].access & 7);
			skips[ns++] = n;
			p[n++] = JMP_IMM(BPF_JNE, 1, 0, 0);
		}
		if (b[k].major >= 0) {
			skips[ns++] = n;
			p[n++] = JMP_IMM(BPF_JNE, 4, b[k].major, 0);
		}
		if (b[k].minor >= 0) {
			skips[ns++] = n;
			p[n++] = JMP32_IMM(BPF_JNE, 5, b[k].minor, 0);
		}
		p[n++] = MOV64_IMM(0, 1);
		p[n++] = EXIT();
		for (j = 0; j < ns; j++)
			p[skips[j]].off = (int16_t)(n - skips[j] - 1);
	}
	p[n++] = MOV64_IMM(0, 0);
	p[n++] = EXIT();
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "GPL", p, n, &o);
	CHECK_MSG(fd >= 0, "loading %s: %s", name, strerror(errno));
	return fd;
}

/* The runtime's program: mknod of anything, some char devices. */
static const struct blk runtime_rules[] = {
	{ 'a', -1, -1, M },   { 'c', 1, 3, RWM }, { 'c', 1, 5, RWM }, { 'c', 1, 7, RWM },
	{ 'c', 5, -1, RW },   { 'c', 10, 3, RW },
};
/* A vendor hook's beside it: some of the same, some others. Together they
 * allow m of anything, c 1:3 rwm, c 1:5 rw(m) and c 5:* rw; c 1:7 and
 * c 10:3 are the runtime's alone, c 7:5, c 10:5 and b 7:3 the vendor's. */
static const struct blk vendor_rules[] = {
	{ 'a', -1, -1, M }, { 'c', 1, 3, RWM }, { 'c', 1, 5, RW }, { 'c', 5, -1, RWM },
	{ 'c', 7, 5, RW },  { 'c', 10, 5, DEVCG_ACC_READ },      { 'b', 7, 3, DEVCG_ACC_READ },
};
#define NB(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t prog_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	CHECK(!bpf_obj_get_info_by_fd(fd, &info, &len));
	return info.id;
}

static void attach_multi(const char *cg, int prog_fd)
{
	int cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK_MSG(cfd >= 0, "open %s: %s", cg, strerror(errno));
	CHECK_MSG(!bpf_prog_attach(prog_fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI), "attach: %s",
		  strerror(errno));
	close(cfd);
}

/* The programs attached to CG itself. */
static uint32_t attached(const char *cg, uint32_t ids[64])
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	__u32 cnt = 64, flags = 0;

	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	return cnt;
}

static bool has_id(const uint32_t *ids, uint32_t n, uint32_t id)
{
	for (uint32_t i = 0; i < n; i++)
		if (ids[i] == id)
			return true;
	return false;
}

/*
 * Compare the kernel's answers AFTER with BEFORE, probe by probe: how many
 * probes were refused before and allowed after (wider), other than of the
 * char device GRANT (major, minor; -1: none), and how many were allowed
 * before and refused after (narrower). *WHAT says the first of either.
 */
static void compare(const uint8_t before[NRES], const uint8_t after[NRES], int32_t grant_major,
		    int32_t grant_minor, size_t *wider, size_t *narrower, char *what, size_t len)
{
	size_t d, q;

	*wider = *narrower = 0;
	what[0] = '\0';
	for (d = 0; d < NDEV; d++)
		for (q = 0; q < NPROBE; q++) {
			bool was = before[d * NPROBE + q] != EPERM, is = after[d * NPROBE + q] != EPERM;
			bool granted = devs[d].type == DEVCG_CHAR && (int32_t)devs[d].major == grant_major &&
				       (int32_t)devs[d].minor == grant_minor;

			if (was == is || (granted && is))
				continue;
			if (!what[0])
				snprintf(what, len, "%s of %c %u:%u: %s before, %s after", probe_name[q],
					 dev_char(devs[d].type), devs[d].major, devs[d].minor,
					 err_name(before[d * NPROBE + q]), err_name(after[d * NPROBE + q]));
			if (is)
				(*wider)++;
			else
				(*narrower)++;
		}
}

/* The prober's answer for DEV (type, major, minor) and PROBE. */
static uint8_t answer(const uint8_t res[NRES], uint8_t type, uint32_t major, uint32_t minor, int probe)
{
	for (size_t d = 0; d < NDEV; d++)
		if (devs[d].type == type && devs[d].major == major && devs[d].minor == minor)
			return res[d * NPROBE + probe];
	test_fail(__FILE__, __LINE__, "no probed device %c %u:%u", dev_char(type), major, minor);
}

struct two {
	char cg[4096], dir[4096];
	int runtime, vendor;
	uint32_t runtime_id, vendor_id;
	struct prober p;
	uint8_t before[NRES];
};

/* A scratch cgroup with the runtime's and the vendor's programs, a prober
 * in it, and what the kernel allows there. */
static void two_start(struct two *t)
{
	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), t->cg, sizeof(t->cg)));
	make_devdir(t->dir, sizeof(t->dir));
	t->runtime = load_runc_shaped("runtime_dev", runtime_rules, NB(runtime_rules));
	t->vendor = load_runc_shaped("vendor_hook", vendor_rules, NB(vendor_rules));
	t->runtime_id = prog_id(t->runtime);
	t->vendor_id = prog_id(t->vendor);
	attach_multi(t->cg, t->runtime);
	attach_multi(t->cg, t->vendor);
	prober_start(&t->p, t->cg, t->dir);
	prober_probe(&t->p, t->before);
	/* the probes see what each allows alone, and both */
	CHECK(answer(t->before, DEVCG_CHAR, 1, 3, P_OPEN_RW) != EPERM);
	CHECK_INT(answer(t->before, DEVCG_CHAR, 1, 7, P_OPEN_R), EPERM);
	CHECK_INT(answer(t->before, DEVCG_CHAR, 7, 5, P_OPEN_R), EPERM);
	CHECK_INT(answer(t->before, DEVCG_CHAR, 10, 7, P_OPEN_R), EPERM);
}

static void two_end(struct two *t)
{
	CHECK_INT(prober_stop(&t->p), 0);
	close(t->runtime);
	close(t->vendor);
	CHECK_INT(scratch_cgroup_remove(t->cg), 0);
	CHECK_INT(scratch_devdir_remove(t->dir), 0);
}

static const struct devcg_rule allow_10_7 = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR,
					      .access = DEVCG_ACC_READ | DEVCG_ACC_WRITE, .major = 10, .minor = 7 };

TEST(allow_on_two_foreign_programs_keeps_what_both_allow_and_adds_only_its_device)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	uint8_t mid[NRES], after[NRES];
	size_t wider, narrower;
	uint32_t ids[64], n;
	struct devcg_state *s;
	char what[256];
	struct two t;

	two_start(&t);
	/* the first step alone: devcg's filter in the place of one of them,
	 * the other still beside it; the kernel decides every probe as before
	 * (c 10:7 too: the vendor's program still refuses it) */
	o.fail_at = "detach";
	CHECK_INT(devcg_update(t.cg, &allow_10_7, &o, &err), -EIO);
	CHECK_MSG(strstr(err.msg, "could not be detached"), "%s", err.msg);
	n = attached(t.cg, ids);
	CHECK_INT(n, 2);
	CHECK(has_id(ids, n, t.vendor_id) && !has_id(ids, n, t.runtime_id));
	prober_probe(&t.p, mid);
	compare(t.before, mid, -1, -1, &wider, &narrower, what, sizeof(what));
	CHECK_MSG(!wider && !narrower, "between the steps %zu probes wider, %zu narrower: %s", wider, narrower,
		  what);

	/* the whole take-over (from devcg's filter and the vendor's now) */
	o.fail_at = NULL;
	CHECK_MSG(!devcg_update(t.cg, &allow_10_7, &o, &err), "%s", err.msg);
	n = attached(t.cg, ids);
	CHECK_INT(n, 1);
	CHECK_INT(ids[0], o.prog_id);
	CHECK(!devcg_state_read(t.cg, &s, &err));
	CHECK(devcg_state_own(s) && devcg_state_own(s)->id == o.prog_id);
	devcg_state_free(s);
	prober_probe(&t.p, after);
	compare(t.before, after, 10, 7, &wider, &narrower, what, sizeof(what));
	CHECK_MSG(!wider && !narrower, "after the take-over %zu probes wider, %zu narrower: %s", wider, narrower,
		  what);
	/* the device allowed is allowed, what either refused stays refused */
	CHECK(answer(after, DEVCG_CHAR, 10, 7, P_OPEN_RW) != EPERM);
	CHECK_INT(answer(after, DEVCG_CHAR, 1, 7, P_OPEN_R), EPERM);
	CHECK_INT(answer(after, DEVCG_CHAR, 7, 5, P_OPEN_R), EPERM);
	CHECK_INT(answer(after, DEVCG_BLOCK, 7, 3, P_OPEN_R), EPERM);
	two_end(&t);
}

TEST(allow_on_two_foreign_programs_in_one_go_takes_both_over_keeping_what_both_allow)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	uint8_t after[NRES];
	size_t wider, narrower;
	uint32_t ids[64];
	char what[256];
	struct two t;

	two_start(&t);
	CHECK_MSG(!devcg_update(t.cg, &allow_10_7, &o, &err), "%s", err.msg);
	CHECK(o.replaced_id == t.runtime_id || o.replaced_id == t.vendor_id);
	CHECK_INT(attached(t.cg, ids), 1);
	CHECK_INT(ids[0], o.prog_id);
	prober_probe(&t.p, after);
	compare(t.before, after, 10, 7, &wider, &narrower, what, sizeof(what));
	CHECK_MSG(!wider && !narrower, "%zu probes wider, %zu narrower: %s", wider, narrower, what);
	two_end(&t);
}

/* Control of the two above: a take-over that kept the rules of one
 * program only (the runtime's, read back, in the place of both) is wider,
 * and the same comparison says so. */
TEST(a_take_over_keeping_one_programs_rules_only_is_caught_by_the_probe)
{
	DEVCG_OPTS(devcg_replace_opts, o, .force = true);
	DEVCG_OPTS(devcg_reader_opts, ro);
	struct devcg_error err = { 0 };
	struct devcg_reader *r;
	struct devcg_policy *p;
	uint8_t after[NRES];
	size_t wider, narrower;
	uint32_t ids[64];
	char what[256];
	struct two t;

	two_start(&t);
	CHECK_MSG(!devcg_reader_open(t.runtime, 0, &ro, &r, &err), "%s", err.msg);
	CHECK_MSG(!devcg_reader_policy(r, &p, &err), "%s", err.msg);
	devcg_reader_free(r);
	CHECK_MSG(!devcg_policy_apply(p, &allow_10_7, &err), "%s", err.msg);
	CHECK_MSG(!devcg_replace(t.cg, p, &o, &err), "%s", err.msg);
	CHECK_INT(attached(t.cg, ids), 1);
	prober_probe(&t.p, after);
	compare(t.before, after, 10, 7, &wider, &narrower, what, sizeof(what));
	CHECK_MSG(wider > 0, "a take-over with the runtime's rules alone was not found wider");
	CHECK(answer(after, DEVCG_CHAR, 1, 7, P_OPEN_R) != EPERM);
	devcg_policy_free(p);
	two_end(&t);
}

/* A program calling a helper the reader does not know: deny-all, its
 * rules unreadable. */
static int unreadable_prog(void)
{
	const struct bpf_insn insns[] = {
		I(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_get_prandom_u32),
		MOV64_IMM(0, 0),
		EXIT(),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "vendor_hook", "GPL", insns, 3, NULL);

	CHECK_MSG(fd >= 0, "loading: %s", strerror(errno));
	return fd;
}

TEST(allow_beside_a_program_devcg_cannot_read_is_refused_naming_it_and_changes_nothing)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	uint32_t ids[64], n, bad;
	char cg[4096], id[32];
	int runtime, vendor;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	runtime = load_runc_shaped("runtime_dev", runtime_rules, NB(runtime_rules));
	vendor = unreadable_prog();
	bad = prog_id(vendor);
	attach_multi(cg, runtime);
	attach_multi(cg, vendor);
	CHECK_INT(devcg_update(cg, &allow_10_7, &o, &err), -EBUSY);
	snprintf(id, sizeof(id), "program %u ", bad);
	CHECK_MSG(strstr(err.msg, id) && strstr(err.msg, "helper the reader does not know") &&
			  !strchr(err.msg, '\n'),
		  "%s", err.msg);
	n = attached(cg, ids);
	CHECK_INT(n, 2);
	CHECK(has_id(ids, n, prog_id(runtime)) && has_id(ids, n, bad));
	/* control: the same cgroup with the vendor's readable program instead
	 * is taken over */
	close(vendor);
	{
		int cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		vendor = bpf_prog_get_fd_by_id(bad);
		CHECK(cfd >= 0 && vendor >= 0 && !bpf_prog_detach2(vendor, cfd, BPF_CGROUP_DEVICE));
		close(cfd);
		close(vendor);
	}
	vendor = load_runc_shaped("vendor_hook", vendor_rules, NB(vendor_rules));
	attach_multi(cg, vendor);
	CHECK_MSG(!devcg_update(cg, &allow_10_7, &o, &err), "%s", err.msg);
	CHECK_INT(attached(cg, ids), 1);
	close(runtime);
	close(vendor);
	CHECK_INT(scratch_cgroup_remove(cg), 0);
}

/*
 * attach into a runc container beside whose program a vendor hook attached
 * its own (not /dev/1:7 nor 10:229 among the probed; c 1:3 and 1:9 for the
 * reader in the container): the take-over keeps what both allowed, grants
 * the device, and the reader sees no EPERM meanwhile.
 */
static const struct blk hook_rules[] = {
	{ 'a', -1, -1, M }, { 'c', 1, 3, RWM }, { 'c', 1, 5, RWM }, { 'c', 1, 8, RWM },
	{ 'c', 1, 9, RWM }, { 'c', 5, -1, RWM }, { 'c', 136, -1, RWM },
};

TEST(attach_into_a_runc_container_with_a_vendor_hooks_program_keeps_what_both_allow)
{
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	struct devcg_hotplug_result *res = NULL;
	struct devcg_hotplug_device d = { 0 };
	struct devcg_error err = { 0 };
	uint8_t before[NRES], after[NRES];
	char dir[4096], gdir[4096], host[4200], what[256];
	size_t wider, narrower;
	uint32_t ids[64], n, runc_id, hook_id;
	struct creader rd;
	struct prober p;
	struct ctr c;
	int hook;

	need("runc", V2);
	ctr_start(&c, "runc", V2);
	CHECK_INT(attached(c.cg, ids), 1);
	runc_id = ids[0];
	hook = load_runc_shaped("vendor_hook", hook_rules, NB(hook_rules));
	hook_id = prog_id(hook);
	attach_multi(c.cg, hook);
	make_devdir(dir, sizeof(dir));
	CHECK_INT(scratch_devdir_create(gdir, sizeof(gdir), (const struct scratch_node[]){ { "gpu", 'c', 4094, 0 } }, 1),
		  0);
	snprintf(host, sizeof(host), "%s/gpu", gdir);
	d.host_path = host;
	d.path = "/dev/fakegpu0";
	prober_start(&p, c.cg, dir);
	prober_probe(&p, before);
	/* runc allows c 1:7, the hook does not: refused */
	CHECK_INT(answer(before, DEVCG_CHAR, 1, 7, P_OPEN_R), EPERM);
	CHECK(answer(before, DEVCG_CHAR, 1, 3, P_OPEN_RW) != EPERM);

	creader_start(&c, &rd);
	CHECK_MSG(!devcg_attach(c.cg, &d, 1, NULL, &res, &err), "%s", err.msg);
	CHECK(res->swapped);
	CHECK(res->replaced_id == runc_id || res->replaced_id == hook_id);
	CHECK_INT(res->entries[0].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(res);
	creader_stop(&rd, eperm, opens);
	CHECK(opens[0] > 0 && opens[1] > 0);
	CHECK_INT(eperm[0], 0);
	CHECK_INT(eperm[1], 0);

	n = attached(c.cg, ids);
	CHECK_INT(n, 1);
	CHECK(ids[0] != runc_id && ids[0] != hook_id);
	prober_probe(&p, after);
	compare(before, after, -1, -1, &wider, &narrower, what, sizeof(what));
	CHECK_MSG(!wider && !narrower, "%zu probes wider, %zu narrower: %s", wider, narrower, what);
	CHECK_INT(prober_stop(&p), 0);
	close(hook);
	scratch_devdir_remove(dir);
	scratch_devdir_remove(gdir);
	ctr_destroy(&c);
}

/* ---- replace: the caller's whole policy over several programs ----------- */

/* A third program: m of anything, c 1:* rwm, c 5:* rw, b 7:* rwm. */
static const struct blk third_rules[] = {
	{ 'a', -1, -1, M }, { 'c', 1, -1, RWM }, { 'c', 5, -1, RW }, { 'b', 7, -1, RWM },
};

/* The new policy. The runtime's and the vendor's programs allow together
 * m of anything, c 1:3 rwm, c 1:5 rw and c 5:* rw (the third one the
 * same): this one keeps m, c 1:3 and c 1:5, adds c 1:7 rw and b 7:3 r,
 * and drops c 5:*. */
#define NEW_POLICY "deny a\nallow c *:* m\nallow b *:* m\nallow c 1:3 rwm\nallow c 1:5 rwm\nallow c 1:7 rw\nallow b 7:3 r\n"

/* What the kernel answers under POLICY alone: the prober P, at home in
 * HOME, probes in a scratch cgroup of its own holding only POLICY. */
static void probe_alone(struct prober *p, const char *home, const struct devcg_policy *policy,
			uint8_t res[NRES])
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	char cg[4096];

	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK_MSG(!devcg_replace(cg, policy, &o, &err), "%s", err.msg);
	CHECK_INT(prober_join(p, cg), 0);
	prober_probe(p, res);
	CHECK_INT(prober_join(p, home), 0);
	CHECK_INT(scratch_cgroup_remove(cg), 0);
}

/*
 * A step of a replace from OLD to NEW (the kernel's answers before, and
 * under the new policy alone) as the kernel answers at STEP: *LOST counts
 * the probes that both allowed and STEP refuses, *BEYOND those that NEW
 * refuses and STEP allows; *WHAT says the first.
 */
static void check_step(const uint8_t old[NRES], const uint8_t new[NRES], const uint8_t step[NRES],
		       size_t *lost, size_t *beyond, char *what, size_t len)
{
	*lost = *beyond = 0;
	what[0] = '\0';
	for (size_t d = 0; d < NDEV; d++)
		for (size_t q = 0; q < NPROBE; q++) {
			size_t k = d * NPROBE + q;
			bool both = old[k] != EPERM && new[k] != EPERM, is = step[k] != EPERM;

			if (both == is || (!both && new[k] != EPERM))
				continue;
			if (!what[0])
				snprintf(what, len, "%s of %c %u:%u: %s before, %s under the new policy, %s now",
					 probe_name[q], dev_char(devs[d].type), devs[d].major, devs[d].minor,
					 err_name(old[k]), err_name(new[k]), err_name(step[k]));
			if (both)
				(*lost)++;
			else
				(*beyond)++;
		}
}

/* Readers in CG of the nodes NODE0 and NODE1 of DIR ("c-1-3"). */
static struct readers *readers_of(const char *cg, const char *dir, const char *node0, const char *node1)
{
	char a[4200], b[4200];
	const char *p[2] = { a, b };
	struct readers *rd;

	snprintf(a, sizeof(a), "%s/%s", dir, node0);
	snprintf(b, sizeof(b), "%s/%s", dir, node1);
	rd = readers_start(cg, 2, p, 2);
	CHECK(rd != NULL);
	return rd;
}

/* Stop RD: it opened each node, and how many of them were refused. */
static uint64_t readers_end(struct readers *rd)
{
	uint64_t eperm;

	CHECK_INT(readers_stop(rd), 0);
	CHECK(readers_opens(rd, 0) > 0 && readers_opens(rd, 1) > 0);
	eperm = readers_eperm(rd, 0) + readers_eperm(rd, 1);
	readers_free(rd);
	return eperm;
}

/* Exactly devcg's program ID is attached to CG, and its policy is WANT. */
static void only_devcgs(const char *cg, uint32_t id, const struct devcg_policy *want)
{
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	uint32_t ids[64];

	CHECK_INT(attached(cg, ids), 1);
	CHECK_INT(ids[0], id);
	CHECK_MSG(!devcg_state_read(cg, &s, &err), "%s", err.msg);
	CHECK(devcg_state_own(s) && devcg_state_own(s)->id == id);
	CHECK(devcg_policy_equal(devcg_state_own(s)->policy, want));
	devcg_state_free(s);
}

TEST(replace_on_two_foreign_programs_leaves_devcgs_alone_deciding_as_the_new_policy)
{
	struct devcg_policy *want = policy_of(NEW_POLICY);
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	uint8_t alone[NRES], after[NRES];
	size_t lost, beyond;
	struct readers *rd;
	char what[256];
	struct two t;

	two_start(&t);
	probe_alone(&t.p, t.cg, want, alone);
	/* no --force */
	rd = readers_of(t.cg, t.dir, "c-1-3", "c-1-5");
	CHECK_MSG(!devcg_replace(t.cg, want, &o, &err), "%s", err.msg);
	CHECK_INT(readers_end(rd), 0);
	CHECK(o.replaced_id == t.runtime_id || o.replaced_id == t.vendor_id);
	only_devcgs(t.cg, o.prog_id, want);
	prober_probe(&t.p, after);
	CHECK_MSG(!memcmp(after, alone, NRES), "the kernel does not decide as under the new policy alone");
	check_step(t.before, alone, after, &lost, &beyond, what, sizeof(what));
	CHECK_MSG(!lost && !beyond, "%zu probes lost, %zu beyond the new policy: %s", lost, beyond, what);
	/* what the new policy adds is allowed, what it drops is refused */
	CHECK(answer(after, DEVCG_CHAR, 1, 7, P_OPEN_RW) != EPERM);
	CHECK(answer(t.before, DEVCG_CHAR, 5, 6, P_OPEN_R) != EPERM);
	CHECK_INT(answer(after, DEVCG_CHAR, 5, 6, P_OPEN_R), EPERM);
	/* control of the readers: of c 5:6, which the new policy refuses */
	rd = readers_of(t.cg, t.dir, "c-5-6", "c-5-6");
	CHECK(readers_end(rd) > 0);
	two_end(&t);
	devcg_policy_free(want);
}

TEST(replace_on_three_foreign_programs_keeps_what_old_and_new_allow_at_every_step)
{
	struct devcg_policy *want = policy_of(NEW_POLICY);
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	uint8_t alone[NRES], mid[NRES], after[NRES];
	uint32_t ids[64], n, third_id;
	size_t lost, beyond;
	struct readers *rd;
	char what[256];
	struct two t;
	int third;

	two_start(&t);
	third = load_runc_shaped("third_hook", third_rules, NB(third_rules));
	third_id = prog_id(third);
	attach_multi(t.cg, third);
	prober_probe(&t.p, t.before);
	probe_alone(&t.p, t.cg, want, alone);

	/* the first step alone: devcg's filter in the place of one of them,
	 * the two others still beside it */
	rd = readers_of(t.cg, t.dir, "c-1-3", "c-1-5");
	o.fail_at = "detach";
	CHECK_INT(devcg_replace(t.cg, want, &o, &err), -EIO);
	CHECK_INT(readers_end(rd), 0);
	CHECK_MSG(strstr(err.msg, "could not be detached"), "%s", err.msg);
	n = attached(t.cg, ids);
	CHECK_INT(n, 3);
	CHECK_INT(has_id(ids, n, t.runtime_id) + has_id(ids, n, t.vendor_id) + has_id(ids, n, third_id), 2);
	prober_probe(&t.p, mid);
	check_step(t.before, alone, mid, &lost, &beyond, what, sizeof(what));
	CHECK_MSG(!lost && !beyond, "between the steps %zu probes lost, %zu beyond the new policy: %s", lost,
		  beyond, what);

	/* a replace again completes it */
	o.fail_at = NULL;
	rd = readers_of(t.cg, t.dir, "c-1-3", "c-1-5");
	CHECK_MSG(!devcg_replace(t.cg, want, &o, &err), "%s", err.msg);
	CHECK_INT(readers_end(rd), 0);
	only_devcgs(t.cg, o.prog_id, want);
	prober_probe(&t.p, after);
	CHECK_MSG(!memcmp(after, alone, NRES), "the kernel does not decide as under the new policy alone");
	close(third);
	two_end(&t);
	devcg_policy_free(want);
}

/* Control of the step check: the other order, the others detached before
 * devcg's filter takes the place of the last one, allows between the
 * steps what only the detached ones refused, and beyond the new policy. */
TEST(detaching_the_others_first_is_caught_by_the_step_check)
{
	struct devcg_policy *want = policy_of(NEW_POLICY);
	uint8_t alone[NRES], mid[NRES];
	size_t lost, beyond;
	char what[256];
	struct two t;
	int third, cfd;

	two_start(&t);
	third = load_runc_shaped("third_hook", third_rules, NB(third_rules));
	attach_multi(t.cg, third);
	prober_probe(&t.p, t.before);
	probe_alone(&t.p, t.cg, want, alone);
	cfd = open(t.cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cfd >= 0);
	CHECK(!bpf_prog_detach2(t.runtime, cfd, BPF_CGROUP_DEVICE));
	CHECK(!bpf_prog_detach2(t.vendor, cfd, BPF_CGROUP_DEVICE));
	close(cfd);
	prober_probe(&t.p, mid);
	check_step(t.before, alone, mid, &lost, &beyond, what, sizeof(what));
	CHECK_MSG(beyond > 0, "the third program alone was not found beyond the new policy");
	close(third);
	two_end(&t);
	devcg_policy_free(want);
}

TEST(replace_beside_a_program_devcg_cannot_read_is_refused_naming_it_unless_forced)
{
	struct devcg_policy *want = policy_of(NEW_POLICY);
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	uint32_t ids[64], n, bad, runtime_id;
	char cg[4096], id[32];
	int runtime, vendor;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	runtime = load_runc_shaped("runtime_dev", runtime_rules, NB(runtime_rules));
	runtime_id = prog_id(runtime);
	vendor = unreadable_prog();
	bad = prog_id(vendor);
	attach_multi(cg, runtime);
	attach_multi(cg, vendor);
	CHECK_INT(devcg_replace(cg, want, &o, &err), -EBUSY);
	snprintf(id, sizeof(id), "program %u ", bad);
	CHECK_MSG(strstr(err.msg, id) && strstr(err.msg, "helper the reader does not know") &&
			  strstr(err.msg, "--force") && !strchr(err.msg, '\n'),
		  "%s", err.msg);
	n = attached(cg, ids);
	CHECK_INT(n, 2);
	CHECK(has_id(ids, n, runtime_id) && has_id(ids, n, bad));
	/* control: with --force it is replaced with the others */
	o.force = true;
	CHECK_MSG(!devcg_replace(cg, want, &o, &err), "%s", err.msg);
	only_devcgs(cg, o.prog_id, want);
	close(runtime);
	close(vendor);
	CHECK_INT(scratch_cgroup_remove(cg), 0);
	devcg_policy_free(want);
}

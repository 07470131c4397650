// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A program on an ancestor cgroup keeps deciding for its descendants (every
 * program on the path must allow), and devcg leaves it in place. So allow
 * on a child, of a device a program on its parent refuses, would report
 * success while the open still fails: it is refused instead, naming the
 * parent cgroup and whose program it is, and nothing changes; check names
 * that program too. Scratch parent/child pairs; the parent's program is
 * shaped like systemd's (named sd_devices) or devcg's own. Controls: the
 * same allow once the parent allows the device succeeds, and the device
 * then opens; readers in the child show the refusal the message speaks of.
 * (attach: tests/kernel/test_hotplug.c.)
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "reader.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* A program named like systemd's that allows c 1:3 and c 1:5, and c 1:9
 * too when URANDOM, every access; nothing else. */
static int load_parents(bool urandom)
{
	const struct bpf_insn p[] = {
		I(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0),
		I(BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xffff),
		I(BPF_LDX | BPF_MEM | BPF_W, 4, 1, 4, 0),
		I(BPF_LDX | BPF_MEM | BPF_W, 5, 1, 8, 0),
		I(BPF_JMP | BPF_JNE | BPF_K, 2, 0, 6, DEVCG_CHAR),
		I(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 5, 1),
		I(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 6, 3),
		I(BPF_JMP | BPF_JEQ | BPF_K, 5, 0, 5, 5),
		I(BPF_JMP | BPF_JNE | BPF_K, 5, 0, 2, 9),
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, urandom),
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0),
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
		I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1),
		I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "sd_devices", "GPL", p, sizeof(p) / sizeof(p[0]),
			       NULL);

	CHECK_MSG(fd >= 0, "loading: %s", strerror(errno));
	return fd;
}

static uint32_t prog_id(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	CHECK(!bpf_obj_get_info_by_fd(fd, &info, &len));
	return info.id;
}

/* Attach (ATTACH) or detach program FD on CG, in multi mode. */
static void on_cgroup(const char *cg, int fd, bool attach)
{
	int cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK_MSG(cfd >= 0, "open %s: %s", cg, strerror(errno));
	CHECK_MSG(attach ? !bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI)
			 : !bpf_prog_detach2(fd, cfd, BPF_CGROUP_DEVICE),
		  "%s: %s", attach ? "attach" : "detach", strerror(errno));
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

/* How many of the opens of /dev/urandom by readers in CG were refused
 * (they opened it at least once). */
static uint64_t urandom_refused(const char *cg)
{
	const char *paths[] = { "/dev/urandom" };
	struct readers *rd = readers_start(cg, 1, paths, 1);
	uint64_t n;

	CHECK(rd != NULL);
	usleep(10 * 1000);
	CHECK_INT(readers_stop(rd), 0);
	CHECK(readers_opens(rd, 0) > 0);
	n = readers_eperm(rd, 0);
	readers_free(rd);
	return n;
}

/* devcg ARGS: its exit code, its standard output and error in OUT. */
static int devcg_run(char *out, size_t size, const char *const args[])
{
	const char *bin = getenv("DEVCG") ? getenv("DEVCG") : "build/devcg";
	int fds[2], st;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	CHECK(!pipe2(fds, O_CLOEXEC));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		const char *argv[16] = { bin };

		for (size_t i = 0; args[i] && i < 14; i++)
			argv[i + 1] = args[i];
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while (n + 1 < size && (r = read(fds[0], out + n, size - n - 1)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(fds[0]);
	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define DEVCG(out, ...) devcg_run(out, sizeof(out), (const char *const[]){ __VA_ARGS__, NULL })

static const struct devcg_rule allow_urandom = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR,
						 .access = DEVCG_ACC_READ | DEVCG_ACC_WRITE, .major = 1,
						 .minor = 9 };

struct pair {
	char parent[4096], child[4096];
	int prog;        /* the parent's */
	uint32_t prog_id;
	uint32_t own;    /* devcg's program on the child */
};

/* A parent whose program refuses /dev/urandom, and a child with devcg's
 * policy of /dev/null alone. */
static void pair_start(struct pair *p)
{
	struct devcg_policy *base = policy_of("deny a\nallow c 1:3 rwm\n");
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), p->parent, sizeof(p->parent)));
	CHECK(!scratch_cgroup_create(p->parent, p->child, sizeof(p->child)));
	p->prog = load_parents(false);
	p->prog_id = prog_id(p->prog);
	on_cgroup(p->parent, p->prog, true);
	CHECK_MSG(!devcg_replace(p->child, base, &o, &err), "%s", err.msg);
	p->own = o.prog_id;
	devcg_policy_free(base);
}

/* The parent's program allows /dev/urandom from now on. */
static void pair_parent_allows(struct pair *p)
{
	int wider = load_parents(true);

	on_cgroup(p->parent, wider, true);
	on_cgroup(p->parent, p->prog, false);
	close(p->prog);
	p->prog = wider;
	p->prog_id = prog_id(wider);
}

static void pair_end(struct pair *p)
{
	close(p->prog);
	CHECK_INT(scratch_cgroup_remove(p->parent), 0);
}

/* The child's programs are exactly devcg's OWN, whose policy is still
 * /dev/null alone. */
static void child_unchanged(const struct pair *p)
{
	struct devcg_policy *base = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	uint32_t ids[64];

	CHECK_INT(attached(p->child, ids), 1);
	CHECK_INT(ids[0], p->own);
	CHECK_MSG(!devcg_state_read(p->child, &s, &err), "%s", err.msg);
	CHECK(devcg_state_own(s) && devcg_policy_equal(devcg_state_own(s)->policy, base));
	devcg_state_free(s);
	devcg_policy_free(base);
}

/* "systemd's program ID (sd_devices) on its ancestor cgroup .../PARENT" */
static void names_the_parent(const struct pair *p, const char *msg)
{
	char prog[64];

	snprintf(prog, sizeof(prog), "systemd's program %u (sd_devices)", p->prog_id);
	CHECK_MSG(strstr(msg, prog) && strstr(msg, strrchr(p->parent, '/')) &&
			  strstr(msg, "would still be refused") && strstr(msg, "nothing changed"),
		  "%s", msg);
}

TEST(allow_of_a_device_a_parents_program_refuses_fails_naming_it_and_changes_nothing)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	struct pair p;

	pair_start(&p);
	/* what the message says: the parent refuses it in the child */
	CHECK(urandom_refused(p.child) > 0);
	CHECK_INT(devcg_update(p.child, &allow_urandom, &o, &err), -EACCES);
	names_the_parent(&p, err.msg);
	CHECK(!strchr(err.msg, '\n'));
	child_unchanged(&p);

	/* control: once the parent allows it, the same allow succeeds, and
	 * the device opens in the child */
	pair_parent_allows(&p);
	CHECK_MSG(!devcg_update(p.child, &allow_urandom, &o, &err), "%s", err.msg);
	CHECK_INT(urandom_refused(p.child), 0);
	pair_end(&p);
}

TEST(devcg_allow_of_a_device_a_parents_program_refuses_exits_1_with_one_line_and_changes_nothing)
{
	char out[8192];
	struct pair p;

	pair_start(&p);
	CHECK_INT(DEVCG(out, "allow", p.child, "c 1:9 rw"), 1);
	names_the_parent(&p, out);
	CHECK_MSG(!strncmp(out, "devcg allow: ", 13) && strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
	child_unchanged(&p);
	/* -j: the same error as JSON */
	CHECK_INT(DEVCG(out, "-j", "allow", p.child, "c 1:9 rw"), 1);
	CHECK_MSG(strstr(out, "\"error\"") && strstr(out, "would still be refused"), "%s", out);
	child_unchanged(&p);
	/* a rule of a range is not checked (an ancestor allowing part of it
	 * is the usual case), nor a deny */
	CHECK_MSG(DEVCG(out, "allow", p.child, "c 1:* rw") == 0, "%s", out);
	CHECK_MSG(DEVCG(out, "deny", p.child, "c 1:9 rw") == 0, "%s", out);
	/* control */
	pair_parent_allows(&p);
	CHECK_MSG(DEVCG(out, "allow", p.child, "c 1:9 rw") == 0, "%s", out);
	CHECK_INT(urandom_refused(p.child), 0);
	pair_end(&p);
}

TEST(check_names_the_parents_program_and_its_owner_that_refuses)
{
	char out[8192], prog[64];
	struct pair p;

	pair_start(&p);
	/* the child's own policy allows it (a range: not checked against the
	 * parent), its parent's program does not */
	CHECK_INT(DEVCG(out, "allow", p.child, "c 1:* rw"), 0);
	CHECK_INT(DEVCG(out, "check", p.child, "c", "1:9", "r"), 1);
	snprintf(prog, sizeof(prog), "systemd's program %u on ", p.prog_id);
	CHECK_MSG(strstr(out, prog) && strstr(out, strrchr(p.parent, '/')), "%s", out);
	/* control: what both allow is allowed */
	CHECK_MSG(DEVCG(out, "check", p.child, "c", "1:5", "r") == 0, "%s", out);
	pair_end(&p);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Programs attached through a bpf_link held by another process (issue
 * "Hardening", 1 and 2). Such a link lives only as long as its holder, so
 * devcg must not leave its filter in it: adopting moves the policy to a
 * direct attachment of devcg's own (ours attached first in multi mode, the
 * link detached after), and reset says what it removed. The link holder
 * here is a child process, as a runtime or systemd would be.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "reader.h"
#include "run.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* As in test_swap.c: POLICY_A allows /dev/null (1:3) and /dev/urandom
 * (1:9) but not /dev/full (1:7); POLICY_B allows all of c 1:*. */
#define POLICY_A "deny a\nallow c 1:3 rwm\nallow c 1:9 rwm\nallow c 1:5 rwm\nallow c 136:* rw\n"
#define POLICY_B "deny a\nallow c 1:* rwm\nallow c 10:200 rwm\nallow b 7:* r\n"

static const char *const both_allow[2] = { "/dev/urandom", "/dev/null" };
static const char *const a_denies[2] = { "/dev/full", "/dev/null" };

/* The programs attached to CG itself. */
static uint32_t attached(const char *cg, uint32_t *ids)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY);
	__u32 cnt = 64, flags = 0;

	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	return cnt;
}

/* How many device links are attached to CG (a detached link reports
 * cgroup id 0: kernel/bpf/cgroup.c, bpf_cgroup_link_fill_link_info). */
static int links_on(const char *cg)
{
	struct stat st;
	__u32 id = 0;
	int n = 0;

	CHECK(!stat(cg, &st));
	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info = { 0 };
		__u32 len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_CGROUP &&
		    info.cgroup.cgroup_id == st.st_ino && info.cgroup.attach_type == BPF_CGROUP_DEVICE)
			n++;
		close(fd);
	}
	return n;
}

/* A program of the test's own that allows everything, as a runtime's would. */
static int foreign_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "runtime_dev", "GPL", insns, 2, NULL);

	CHECK_MSG(fd >= 0, "loading a foreign program: %s", strerror(errno));
	return fd;
}

/* Another process that attaches PROG_FD to CG with bpf_link_create and
 * holds the link until holder_end(). */
struct holder {
	pid_t pid;
	int stop; /* closing it ends the holder */
};

static void holder_start(struct holder *h, const char *cg, int prog_fd)
{
	int ready[2], stop[2];
	char c;

	CHECK(!pipe(ready) && !pipe(stop));
	h->pid = fork();
	CHECK(h->pid >= 0);
	if (h->pid == 0) {
		int cfd = open(cg, O_RDONLY | O_DIRECTORY), link;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		close(stop[1]);
		link = cfd < 0 ? -1 : bpf_link_create(prog_fd, cfd, BPF_CGROUP_DEVICE, NULL);
		if (link < 0)
			_exit(1);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		while (read(stop[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(ready[1]);
	close(stop[0]);
	h->stop = stop[1];
	CHECK_MSG(read(ready[0], &c, 1) == 1, "the link holder could not attach its link");
	close(ready[0]);
}

/* End the holder: its link goes with it. */
static void holder_end(struct holder *h)
{
	int status;

	close(h->stop);
	CHECK(waitpid(h->pid, &status, 0) == h->pid);
	CHECK_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
}

/* Readers of PATHS in CG for a while: EPERMs and opens per path. */
static void read_for_a_while(const char *cg, const char *const paths[2], unsigned long eperm[2],
			     unsigned long opens[2])
{
	struct readers *rd = readers_start(cg, 2, paths, 2);

	CHECK(rd != NULL);
	usleep(20 * 1000);
	CHECK_INT(readers_stop(rd), 0);
	for (int p = 0; p < 2; p++) {
		eperm[p] = readers_eperm(rd, p);
		opens[p] = readers_opens(rd, p);
	}
	readers_free(rd);
}

/*
 * After an adoption: exactly program ID is attached to CG, directly (no
 * link), and it still is once the old link's holder is gone; the policy
 * (POLICY_A or one wider by a c 10:* rule) still refuses /dev/full there.
 * The last check is also the control that the readers can see a refusal.
 */
static void check_owned_after_holder_exits(const char *cg, uint32_t id, struct holder *h)
{
	unsigned long eperm[2], opens[2];
	uint32_t ids[64];

	CHECK_INT(attached(cg, ids), 1);
	CHECK_INT(ids[0], id);
	CHECK_INT(links_on(cg), 0);
	holder_end(h);
	CHECK_INT(attached(cg, ids), 1);
	CHECK_INT(ids[0], id);
	read_for_a_while(cg, a_denies, eperm, opens);
	CHECK(opens[0] > 0 && eperm[0] == opens[0]); /* /dev/full refused */
	CHECK_INT(eperm[1], 0);                      /* /dev/null allowed */
}

TEST(adopting_a_linked_foreign_program_owns_the_filter_beyond_the_link_holder)
{
	struct devcg_policy *a = policy_of(POLICY_A);

	need_v2();
	/* a few rounds, each on a fresh cgroup with readers throughout */
	for (int round = 0; round < 5; round++) {
		DEVCG_OPTS(devcg_replace_opts, o);
		struct devcg_error err = { 0 };
		unsigned long eperm[2], opens[2];
		struct holder h;
		struct readers *rd;
		uint32_t ids[64], foreign_id;
		char cg[4096];
		int fd;

		CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
		fd = foreign_prog();
		holder_start(&h, cg, fd);
		close(fd);
		CHECK_INT(attached(cg, ids), 1);
		foreign_id = ids[0];
		CHECK_INT(links_on(cg), 1);
		rd = readers_start(cg, 2, both_allow, 2);
		CHECK(rd != NULL);
		CHECK_MSG(!devcg_replace(cg, a, &o, &err), "replace: %s", err.msg);
		CHECK_INT(readers_stop(rd), 0);
		for (int p = 0; p < 2; p++) {
			eperm[p] = readers_eperm(rd, p);
			opens[p] = readers_opens(rd, p);
		}
		readers_free(rd);
		/* both the foreign program and POLICY_A allow these two */
		CHECK(opens[0] > 0 && opens[1] > 0);
		CHECK_INT(eperm[0] + eperm[1], 0);
		CHECK_INT(o.replaced_id, foreign_id);
		check_owned_after_holder_exits(cg, o.prog_id, &h);
	}
	devcg_policy_free(a);
}

/* A devcg filter (of POLICY_A) attached to CG through a link that H holds,
 * as an older devcg's link update left it; returns its program id. */
static uint32_t devcg_filter_on_a_link(const char *cg, struct holder *h)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	char donor[4096];
	uint32_t ids[64];
	int fd;

	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), donor, sizeof(donor)));
	CHECK_MSG(!devcg_replace(donor, a, &o, &err), "%s", err.msg);
	fd = bpf_prog_get_fd_by_id(o.prog_id);
	CHECK(fd >= 0);
	holder_start(h, cg, fd);
	close(fd);
	CHECK_MSG(devcg_reset(donor, &err) == 1, "%s", err.msg);
	CHECK_INT(attached(cg, ids), 1);
	CHECK_INT(ids[0], o.prog_id);
	CHECK_INT(links_on(cg), 1);
	devcg_policy_free(a);
	return o.prog_id;
}

TEST(allow_moves_a_devcg_filter_off_a_foreign_link_keeping_its_policy)
{
	struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				.major = 10, .minor = DEVCG_ANY };
	struct devcg_policy *want = policy_of(POLICY_A "allow c 10:* rwm\n");
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	unsigned long eperm[2], opens[2];
	struct devcg_state *s;
	struct holder h;
	struct readers *rd;
	char cg[4096];
	uint32_t old;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	old = devcg_filter_on_a_link(cg, &h);
	rd = readers_start(cg, 2, both_allow, 2);
	CHECK(rd != NULL);
	CHECK_MSG(!devcg_update(cg, &r, &o, &err), "allow: %s", err.msg);
	CHECK_INT(readers_stop(rd), 0);
	for (int p = 0; p < 2; p++) {
		eperm[p] = readers_eperm(rd, p);
		opens[p] = readers_opens(rd, p);
	}
	readers_free(rd);
	CHECK(opens[0] > 0 && opens[1] > 0);
	CHECK_INT(eperm[0] + eperm[1], 0);
	CHECK_INT(o.replaced_id, old);
	CHECK(o.prog_id != old);
	/* the rule went onto the policy read from the linked filter */
	CHECK_MSG(!devcg_state_read(cg, &s, &err), "%s", err.msg);
	CHECK(devcg_state_own(s) && devcg_policy_equal(devcg_state_own(s)->policy, want));
	devcg_state_free(s);
	check_owned_after_holder_exits(cg, o.prog_id, &h);
	devcg_policy_free(want);
}

TEST(replace_moves_a_devcg_filter_off_a_foreign_link)
{
	struct devcg_policy *b = policy_of(POLICY_B), *a = policy_of(POLICY_A);
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	struct holder h;
	char cg[4096];
	uint32_t old;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	old = devcg_filter_on_a_link(cg, &h);
	CHECK_MSG(!devcg_replace(cg, b, &o, &err), "replace: %s", err.msg);
	CHECK_INT(o.replaced_id, old);
	/* back to POLICY_A, which refuses /dev/full, through a direct replace */
	CHECK_MSG(!devcg_replace(cg, a, &o, &err), "replace: %s", err.msg);
	check_owned_after_holder_exits(cg, o.prog_id, &h);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(reset_of_a_devcg_filter_on_a_foreign_link_removes_it_and_says_so)
{
	unsigned long eperm[2], opens[2];
	struct holder h;
	uint32_t ids[64];
	char cg[4096], out[4096];

	need_v2();
	CHECK(access(test_devcg_bin(), X_OK) == 0);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	devcg_filter_on_a_link(cg, &h);
	/* control: the linked filter enforces before the reset */
	read_for_a_while(cg, a_denies, eperm, opens);
	CHECK(opens[0] > 0 && eperm[0] == opens[0]);
	{
		char *argv[] = { (char *)test_devcg_bin(), "-j", "reset", cg, NULL };

		CHECK_INT(test_run_capture(argv, out, sizeof(out)), 0);
	}
	CHECK_MSG(strstr(out, "\"removed\":1") && strstr(out, "\"links_detached\":1"), "%s", out);
	CHECK_INT(attached(cg, ids), 0);
	CHECK_INT(links_on(cg), 0);
	read_for_a_while(cg, a_denies, eperm, opens);
	CHECK(opens[0] > 0);
	CHECK_INT(eperm[0], 0);
	holder_end(&h);
}

TEST(reset_text_says_a_link_was_detached)
{
	struct holder h;
	uint32_t ids[64];
	char cg[4096], out[4096];

	need_v2();
	CHECK(access(test_devcg_bin(), X_OK) == 0);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	devcg_filter_on_a_link(cg, &h);
	{
		char *argv[] = { (char *)test_devcg_bin(), "reset", cg, NULL };

		CHECK_INT(test_run_capture(argv, out, sizeof(out)), 0);
	}
	CHECK_MSG(strstr(out, "devcg filter removed") && strstr(out, "bpf_link"), "%s", out);
	CHECK_INT(attached(cg, ids), 0);
	/* control: a second reset finds nothing and says so */
	{
		char *argv[] = { (char *)test_devcg_bin(), "reset", cg, NULL };

		CHECK_INT(test_run_capture(argv, out, sizeof(out)), 0);
	}
	CHECK_MSG(strstr(out, "no devcg filter attached") != NULL, "%s", out);
	holder_end(&h);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The swap on a live cgroup v2 (issue "Atomic replace"): no gap under
 * readers, adoption of foreign programs in each attach mode, refusal of
 * several, compare-and-swap under contention, failure injection at every
 * step, read-back, ancestors, persistence. Each fact that the kernel
 * enforces has a control showing the probe can fail.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "internal.h"
#include "reader.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

static const char *const reader_paths[2] = { "/dev/urandom", "/dev/null" };
static struct readers *rd;

/* Two readers of /dev/urandom and /dev/null in CG. */
static void begin_readers(const char *cg)
{
	rd = readers_start(cg, 2, reader_paths, 2);
	CHECK(rd != NULL);
}

/* Stop them; EPERMs and opens per path ([0] urandom, [1] null). */
static void end_readers(unsigned long eperm[2], unsigned long opens[2])
{
	CHECK_INT(readers_stop(rd), 0);
	for (int p = 0; p < 2; p++) {
		eperm[p] = readers_eperm(rd, p);
		opens[p] = readers_opens(rd, p);
	}
	readers_free(rd);
	rd = NULL;
}

#define POLICY_A "deny a\nallow c 1:3 rwm\nallow c 1:9 rwm\nallow c 1:5 rwm\nallow c 136:* rw\n"
#define POLICY_B "deny a\nallow c 1:* rwm\nallow c 10:200 rwm\nallow b 7:* r\n"
#define POLICY_NO_URANDOM "deny a\nallow c 1:3 rwm\n"

static uint32_t replace_ok(const char *cg, const struct devcg_policy *p)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };

	CHECK_MSG(!devcg_replace(cg, p, &o, &err), "replace: %s", err.msg);
	CHECK(o.prog_id != 0);
	return o.prog_id;
}

/* The programs attached to CG itself. */
static uint32_t attached(const char *cg, uint32_t *ids, uint32_t *mode_flags)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY);
	__u32 cnt = 64, flags = 0;

	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	if (mode_flags)
		*mode_flags = flags;
	return cnt;
}

TEST(replace_under_readers_never_denies_and_control_does)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B),
			    *no = policy_of(POLICY_NO_URANDOM);
	unsigned long eperm[2], opens[2];
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	replace_ok(cg, a);
	begin_readers(cg);
	for (int i = 0; i < 1000; i++)
		replace_ok(cg, i % 2 ? a : b);
	end_readers(eperm, opens);
	CHECK(opens[0] > 1000 && opens[1] > 1000);
	CHECK_INT(eperm[0], 0);
	CHECK_INT(eperm[1], 0);

	/* control: the same readers under a policy without /dev/urandom */
	replace_ok(cg, no);
	begin_readers(cg);
	usleep(50 * 1000);
	end_readers(eperm, opens);
	CHECK(eperm[0] > 0 && eperm[0] == opens[0]);
	CHECK_INT(eperm[1], 0);
	devcg_policy_free(a);
	devcg_policy_free(b);
	devcg_policy_free(no);
}

TEST(show_reads_the_policy_back_from_the_program_alone)
{
	struct devcg_policy *a = policy_of(POLICY_A "deny c 1:9 w\nallow b 8:* m\n");
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	const struct devcg_program *own;
	char cg[4096];
	uint32_t id;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	id = replace_ok(cg, a);
	CHECK_MSG(!devcg_state_read(cg, &s, &err), "%s", err.msg);
	own = devcg_state_own(s);
	CHECK(own != NULL);
	CHECK_INT(own->id, id);
	CHECK_INT(own->mode, DEVCG_MODE_MULTI);
	CHECK(devcg_policy_equal(own->policy, a));
	CHECK_INT(devcg_state_count(s), 1);
	devcg_state_free(s);
	devcg_policy_free(a);
}

TEST(first_install_on_an_empty_cgroup_attaches_one_multi_program)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	uint32_t ids[64], flags, id;
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK_INT(attached(cg, ids, NULL), 0);
	id = replace_ok(cg, a);
	CHECK_INT(attached(cg, ids, &flags), 1);
	CHECK_INT(ids[0], id);
	CHECK(flags & BPF_F_ALLOW_MULTI);
	devcg_policy_free(a);
}

/* A control: after a swap to a policy without /dev/urandom, readers in CG
 * are refused it, so what was installed really enforces. */
static void check_refuses_urandom(const char *cg)
{
	struct devcg_policy *no = policy_of(POLICY_NO_URANDOM);
	unsigned long eperm[2], opens[2];

	replace_ok(cg, no);
	begin_readers(cg);
	usleep(20 * 1000);
	end_readers(eperm, opens);
	CHECK(eperm[0] > 0 && eperm[0] == opens[0]);
	CHECK_INT(eperm[1], 0);
	devcg_policy_free(no);
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

static void adopt_in_mode(__u32 flags)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	unsigned long eperm[2], opens[2];
	struct devcg_state *s;
	uint32_t ids[64], now_flags, id;
	char cg[4096];
	int fd, cfd;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	fd = foreign_prog();
	cfd = open(cg, O_RDONLY | O_DIRECTORY);
	CHECK(!bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, flags));
	close(fd);
	begin_readers(cg);
	id = replace_ok(cg, a);
	for (int i = 0; i < 50; i++)
		id = replace_ok(cg, i % 2 ? a : b);
	end_readers(eperm, opens);
	CHECK_INT(eperm[0] + eperm[1], 0);
	CHECK(opens[0] > 0);
	/* exactly ours is attached, in the mode the foreign one had */
	CHECK_INT(attached(cg, ids, &now_flags), 1);
	CHECK_INT(ids[0], id);
	CHECK_INT(now_flags & (BPF_F_ALLOW_MULTI | BPF_F_ALLOW_OVERRIDE), flags);
	CHECK(!devcg_state_read(cg, &s, NULL));
	CHECK_INT(devcg_state_count(s), 1);
	CHECK(devcg_state_own(s) && devcg_state_own(s)->id == id);
	devcg_state_free(s);
	/* control: the adopted filter enforces */
	check_refuses_urandom(cg);
	close(cfd);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(adopts_a_foreign_multi_program_with_no_gap)
{
	adopt_in_mode(BPF_F_ALLOW_MULTI);
}

TEST(adopts_a_foreign_override_program_in_its_own_mode)
{
	adopt_in_mode(BPF_F_ALLOW_OVERRIDE);
}

TEST(adopts_a_foreign_exclusive_program_in_its_own_mode)
{
	adopt_in_mode(0);
}

static int unreadable_prog(void); /* below */

/* (several programs devcg can read are taken over without --force:
 * test_take_over.c) */
TEST(several_foreign_programs_devcg_cannot_read_are_refused_unless_forced)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_error err = { 0 };
	uint32_t ids[64];
	char cg[4096];
	int cfd, f1, f2;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	cfd = open(cg, O_RDONLY | O_DIRECTORY);
	f1 = unreadable_prog();
	f2 = unreadable_prog();
	CHECK(!bpf_prog_attach(f1, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	CHECK(!bpf_prog_attach(f2, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	CHECK_INT(devcg_replace(cg, a, &o, &err), -EBUSY);
	CHECK(strstr(err.msg, "--force") != NULL);
	CHECK_INT(attached(cg, ids, NULL), 2);
	o.force = true;
	CHECK_MSG(!devcg_replace(cg, a, &o, &err), "%s", err.msg);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_INT(ids[0], o.prog_id);
	close(f1);
	close(f2);
	close(cfd);
	devcg_policy_free(a);
}

static const char *devcg_bin(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

static int run_cmd(char *const argv[])
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* N processes at once, each running `devcg VERB CG 'c MAJOR:r rwm'` for
 * r < RULES, MAJOR = BASE + its index; all of them must succeed. */
static void run_writers(const char *cg, const char *verb, int n, int rules, int base)
{
	pid_t kids[16];

	for (int k = 0; k < n; k++) {
		kids[k] = fork();
		CHECK(kids[k] >= 0);
		if (kids[k] == 0) {
			for (int r = 0; r < rules; r++) {
				char rule[64];
				char *argv[] = { (char *)devcg_bin(), (char *)verb, (char *)cg, rule, NULL };

				snprintf(rule, sizeof(rule), "c %d:%d rwm", base + k, r);
				if (run_cmd(argv))
					_exit(1);
			}
			_exit(0);
		}
	}
	for (int k = 0; k < n; k++) {
		int status;

		CHECK(waitpid(kids[k], &status, 0) == kids[k]);
		CHECK_INT(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
	}
}

TEST(concurrent_allow_commands_lose_no_update)
{
	struct devcg_policy *base = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	const struct devcg_program *own;
	char cg[4096];

	need_v2();
	CHECK(access(devcg_bin(), X_OK) == 0);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	replace_ok(cg, base);
	run_writers(cg, "allow", 8, 50, 200);
	CHECK_MSG(!devcg_state_read(cg, &s, &err), "%s", err.msg);
	own = devcg_state_own(s);
	CHECK(own != NULL);
	CHECK_INT(devcg_policy_count(own->policy), 401);
	for (int k = 0; k < 8; k++)
		for (int r = 0; r < 50; r++)
			CHECK_INT(devcg_policy_check(own->policy, DEVCG_CHAR, 200 + k, r, DEVCG_ACC_ALL,
						     NULL, NULL), 1);
	/* control: a device nobody added stays denied */
	CHECK_INT(devcg_policy_check(own->policy, DEVCG_CHAR, 208, 0, DEVCG_ACC_READ, NULL, NULL), 0);
	devcg_state_free(s);
	devcg_policy_free(base);
}

static void fail_at_leaves_previous(const char *step, bool first_install)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	DEVCG_OPTS(devcg_replace_opts, o, .fail_at = step);
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	uint32_t ids[64], id = 0;
	char cg[4096];
	int ret;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	if (!first_install)
		id = replace_ok(cg, a);
	ret = devcg_replace(cg, b, &o, &err);
	CHECK_MSG(ret < 0, "step %s: replace succeeded", step);
	CHECK_MSG(err.msg[0] != '\0', "step %s: no message", step);
	if (first_install) {
		CHECK_INT(attached(cg, ids, NULL), 0);
	} else {
		CHECK_INT(attached(cg, ids, NULL), 1);
		CHECK_INT(ids[0], id);
		CHECK(!devcg_state_read(cg, &s, NULL));
		CHECK(devcg_policy_equal(devcg_state_own(s)->policy, a));
		devcg_state_free(s);
	}
	devcg_policy_free(a);
	devcg_policy_free(b);
}

static const char *const steps[] = { "resolve", "query", "load", "fill", "freeze", "attach", "verify" };

TEST(a_failure_at_any_step_leaves_the_previous_program)
{
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		fail_at_leaves_previous(steps[i], false);
}

TEST(a_failed_first_install_leaves_no_program)
{
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		fail_at_leaves_previous(steps[i], true);
}

TEST(a_path_that_is_not_a_cgroup2_directory_is_refused)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	struct devcg_error err = { 0 };

	need_v2();
	CHECK_INT(devcg_replace("/tmp", a, NULL, &err), -ENOTDIR);
	CHECK(strstr(err.msg, "not a cgroup v2 directory") != NULL);
	CHECK(devcg_replace("/sys/fs/cgroup/unified/devcg-no-such-cgroup", a, NULL, &err) == -ENOENT);
	devcg_policy_free(a);
}

TEST(a_removed_cgroup_is_refused_with_a_message)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	struct devcg_error err = { 0 };
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!rmdir(cg));
	CHECK_INT(devcg_replace(cg, a, NULL, &err), -ENOENT);
	CHECK(err.msg[0] != '\0');
	devcg_policy_free(a);
}

/* devcg_update_edit()'s edit that removes the (empty) cgroup ARG first:
 * a cgroup removed in the middle of an update, as a container that exits
 * during an attach. */
static int remove_then_allow(struct devcg_policy *policy, void *arg, struct devcg_error *err)
{
	struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				.major = 10, .minor = 229 };

	if (arg && rmdir((const char *)arg) && errno != ENOENT)
		return devcg_err(err, -errno, "rmdir: %s", strerror(errno));
	return devcg_policy_apply(policy, &r, err);
}

TEST(an_update_of_a_cgroup_removed_midway_says_it_was_removed)
{
	struct devcg_policy *base = policy_of("deny a\n");
	struct devcg_error err = { 0 };
	char cg[4096];
	int ret;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	/* control: the same update of a cgroup that stays */
	replace_ok(cg, base);
	CHECK_MSG(!devcg_update_edit(cg, remove_then_allow, NULL, NULL, NULL, &err), "%s", err.msg);
	ret = devcg_update_edit(cg, remove_then_allow, cg, NULL, NULL, &err);
	CHECK_MSG(ret == -ENOENT && strstr(err.msg, "removed") && !strstr(err.msg, "conflicting"),
		  "%d: %s", ret, err.msg);
	devcg_policy_free(base);
}

static int as_nobody(void *arg)
{
	struct devcg_error err = { 0 };
	int ret;

	if (setgid(65534) || setuid(65534))
		return 2;
	ret = devcg_replace((const char *)arg, devcg_policy_new(), NULL, &err);
	return ret == -EPERM && strstr(err.msg, "root") ? 0 : 1;
}

TEST(an_unprivileged_caller_gets_permission_denied_and_nothing_changes)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	uint32_t ids[64], id;
	char cg[4096];
	pid_t pid;
	int status;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	id = replace_ok(cg, a);
	pid = fork();
	if (pid == 0)
		_exit(as_nobody(cg));
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_INT(WEXITSTATUS(status), 0);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_INT(ids[0], id);
	devcg_policy_free(a);
}

/* kernel/bpf/cgroup.c, hierarchy_allows_attach(): one program attached
 * without BPF_F_ALLOW_OVERRIDE or BPF_F_ALLOW_MULTI forbids attaching below
 * it, even to root; devcg must name that ancestor, not ask for root. */
TEST(an_exclusive_ancestor_is_named_as_the_reason_attach_is_refused)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	struct devcg_error err = { 0 };
	char parent[4096], child[4096];
	uint32_t ids[64];
	int pfd, fd;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), parent, sizeof(parent)));
	CHECK(!scratch_cgroup_create(parent, child, sizeof(child)));
	pfd = open(parent, O_RDONLY | O_DIRECTORY);
	fd = foreign_prog();
	CHECK(!bpf_prog_attach(fd, pfd, BPF_CGROUP_DEVICE, 0));
	CHECK_INT(devcg_replace(child, a, NULL, &err), -EPERM);
	CHECK_MSG(strstr(err.msg, parent) && strstr(err.msg, "exclusive") && !strstr(err.msg, "root"),
		  "%s", err.msg);
	CHECK_INT(attached(child, ids, NULL), 0);
	/* control: with the parent's program gone, the same replace works */
	CHECK(!bpf_prog_detach2(fd, pfd, BPF_CGROUP_DEVICE));
	replace_ok(child, a);
	close(fd);
	close(pfd);
	devcg_policy_free(a);
}

TEST(rules_persist_after_the_cli_exits_and_reset_removes_them)
{
	char cg[4096];
	unsigned long eperm[2], opens[2];
	uint32_t ids[64];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	{
		char *argv[] = { (char *)devcg_bin(), "replace", cg, "deny a", "allow c 1:3 rwm", NULL };

		CHECK_INT(run_cmd(argv), 0);
	}
	begin_readers(cg);
	usleep(20 * 1000);
	end_readers(eperm, opens);
	CHECK(eperm[0] > 0 && eperm[0] == opens[0]); /* urandom refused */
	CHECK_INT(eperm[1], 0);                      /* null allowed */
	{
		char *argv[] = { (char *)devcg_bin(), "reset", cg, NULL };

		CHECK_INT(run_cmd(argv), 0);
	}
	CHECK_INT(attached(cg, ids, NULL), 0);
	begin_readers(cg);
	usleep(20 * 1000);
	end_readers(eperm, opens);
	CHECK_INT(eperm[0], 0);
}

TEST(check_names_the_ancestor_that_denies)
{
	struct devcg_policy *parent_p = policy_of("deny a\nallow c 1:3 rwm\n"),
			    *child_p = policy_of("deny a\nallow c 1:3 rwm\nallow c 1:9 rwm\n");
	const struct devcg_program *by;
	struct devcg_state *s;
	char parent[4096], child[4096];
	uint32_t pid_parent;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), parent, sizeof(parent)));
	CHECK(!scratch_cgroup_create(parent, child, sizeof(child)));
	pid_parent = replace_ok(parent, parent_p);
	replace_ok(child, child_p);
	CHECK(!devcg_state_read(child, &s, NULL));
	CHECK_INT(devcg_state_count(s), 2);
	CHECK_INT(devcg_state_check(s, DEVCG_CHAR, 1, 9, DEVCG_ACC_READ, &by, NULL, NULL), 0);
	CHECK(by != NULL);
	CHECK_INT(by->id, pid_parent);
	CHECK_INT(devcg_state_check(s, DEVCG_CHAR, 1, 3, DEVCG_ACC_READ, &by, NULL, NULL), 1);
	devcg_state_free(s);
	/* the kernel agrees: urandom is refused in the child */
	{
		unsigned long eperm[2], opens[2];

		begin_readers(child);
		usleep(20 * 1000);
		end_readers(eperm, opens);
		CHECK(eperm[0] > 0);
		CHECK_INT(eperm[1], 0);
	}
	devcg_policy_free(parent_p);
	devcg_policy_free(child_p);
}

#include <pthread.h>

struct thread_job {
	char cg[4096];
	const struct devcg_policy *a, *b;
	int failures;
};

static void *replace_many(void *arg)
{
	struct thread_job *job = arg;

	for (int i = 0; i < 50; i++) {
		struct devcg_error err = { 0 };

		if (devcg_replace(job->cg, i % 2 ? job->a : job->b, NULL, &err))
			job->failures++;
	}
	return NULL;
}

TEST(threads_replace_on_different_cgroups_sharing_one_policy)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	struct thread_job jobs[4];
	pthread_t t[4];

	need_v2();
	for (int i = 0; i < 4; i++) {
		jobs[i] = (struct thread_job){ .a = a, .b = b };
		CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), jobs[i].cg, sizeof(jobs[i].cg)));
	}
	for (int i = 0; i < 4; i++)
		CHECK(!pthread_create(&t[i], NULL, replace_many, &jobs[i]));
	for (int i = 0; i < 4; i++) {
		struct devcg_state *s;

		CHECK(!pthread_join(t[i], NULL));
		CHECK_INT(jobs[i].failures, 0);
		CHECK(!devcg_state_read(jobs[i].cg, &s, NULL));
		CHECK(devcg_state_own(s) != NULL);
		/* the last of the 50 swaps (i = 49) installed a */
		CHECK(devcg_policy_equal(devcg_state_own(s)->policy, a));
		CHECK(!devcg_policy_equal(devcg_state_own(s)->policy, b));
		devcg_state_free(s);
	}
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(a_verifier_rejection_shows_its_log_and_leaves_the_previous_program)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	DEVCG_OPTS(devcg_replace_opts, o, .fail_at = "verifier");
	struct devcg_error err = { 0 };
	uint32_t ids[64], id;
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	id = replace_ok(cg, a);
	CHECK(devcg_replace(cg, b, &o, &err) < 0);
	CHECK_MSG(strstr(err.msg, "verifier log") && strstr(err.msg, "insn"), "%s", err.msg);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_INT(ids[0], id);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

/* A foreign program the reader cannot follow (it calls a helper the reader
 * does not know), that allows everything. */
static int unreadable_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_prandom_u32 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "runtime_dev", "GPL", insns, 3, NULL);

	CHECK_MSG(fd >= 0, "loading a foreign program: %s", strerror(errno));
	return fd;
}

/* A foreign program the reader reads back (here: allow-all) is the policy
 * one rule applies to, and the rule's swap takes it over. */
TEST(allow_on_a_cgroup_with_only_a_readable_foreign_program_keeps_its_rules_and_takes_it_over)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_rule r = { .verb = DEVCG_VERB_DENY, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				.major = 10, .minor = 229 };
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	uint32_t ids[64], foreign_id;
	char cg[4096];
	int cfd, fd;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	cfd = open(cg, O_RDONLY | O_DIRECTORY);
	fd = foreign_prog();
	CHECK(!bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	CHECK_INT(attached(cg, ids, NULL), 1);
	foreign_id = ids[0];
	CHECK_MSG(!devcg_update(cg, &r, &o, &err), "%s", err.msg);
	CHECK_INT(o.replaced_id, foreign_id);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_INT(ids[0], o.prog_id);
	/* allow-all read back, with the one deny */
	CHECK(!devcg_state_read(cg, &s, &err));
	CHECK(devcg_state_own(s) && devcg_policy_default_allow(devcg_state_own(s)->policy));
	CHECK_INT(devcg_policy_count(devcg_state_own(s)->policy), 1);
	devcg_state_free(s);
	close(fd);
	close(cfd);
}

TEST(allow_on_a_cgroup_with_only_an_unreadable_foreign_program_is_refused_unless_forced)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				.major = 10, .minor = 229 };
	struct devcg_error err = { 0 };
	uint32_t ids[64], foreign_id;
	char cg[4096];
	int cfd, fd;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	cfd = open(cg, O_RDONLY | O_DIRECTORY);
	fd = unreadable_prog();
	CHECK(!bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	CHECK_INT(attached(cg, ids, NULL), 1);
	foreign_id = ids[0];
	/* the runtime's rules cannot be read: one rule must not replace them */
	CHECK_INT(devcg_update(cg, &r, &o, &err), -EBUSY);
	CHECK(strstr(err.msg, "devcg replace") != NULL);
	CHECK_MSG(strstr(err.msg, "helper the reader does not know") != NULL, "%s", err.msg);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_INT(ids[0], foreign_id);
	/* control: with --force it starts from allow-all and takes over */
	o.force = true;
	CHECK_MSG(!devcg_update(cg, &r, &o, &err), "%s", err.msg);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_INT(ids[0], o.prog_id);
	close(fd);
	close(cfd);
}

TEST(concurrent_first_updates_on_an_empty_cgroup_lose_no_update)
{
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	uint32_t ids[64];
	char cg[4096];

	need_v2();
	CHECK(access(devcg_bin(), X_OK) == 0);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	/* no program yet: every writer's first read finds none */
	run_writers(cg, "deny", 4, 20, 300);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_MSG(!devcg_state_read(cg, &s, &err), "%s", err.msg);
	CHECK(devcg_state_own(s) != NULL);
	CHECK_INT(devcg_policy_count(devcg_state_own(s)->policy), 80);
	for (int k = 0; k < 4; k++)
		for (int r = 0; r < 20; r++)
			CHECK_INT(devcg_policy_check(devcg_state_own(s)->policy, DEVCG_CHAR, 300 + k, r,
						     DEVCG_ACC_READ, NULL, NULL), 0);
	/* control: a device nobody denied stays allowed */
	CHECK_INT(devcg_policy_check(devcg_state_own(s)->policy, DEVCG_CHAR, 300, 20, DEVCG_ACC_READ,
				     NULL, NULL), 1);
	devcg_state_free(s);
}

TEST(adopts_a_foreign_program_attached_by_a_link_into_a_direct_attachment)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	unsigned long eperm[2], opens[2];
	uint32_t ids[64], id = 0;
	char cg[4096];
	int cfd, fd, link;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	cfd = open(cg, O_RDONLY | O_DIRECTORY);
	fd = foreign_prog();
	link = bpf_link_create(fd, cfd, BPF_CGROUP_DEVICE, NULL);
	CHECK_MSG(link >= 0, "bpf_link_create: %s", strerror(errno));
	begin_readers(cg);
	for (int i = 0; i < 20; i++)
		id = replace_ok(cg, i % 2 ? a : b);
	end_readers(eperm, opens);
	CHECK_INT(eperm[0] + eperm[1], 0);
	CHECK_INT(attached(cg, ids, NULL), 1);
	CHECK_INT(ids[0], id);
	/* control: ours, in the link's place, enforces */
	check_refuses_urandom(cg);
	close(link);
	close(fd);
	close(cfd);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(allow_keeps_the_audit_of_the_live_filter)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	DEVCG_OPTS(devcg_replace_opts, o, .audit = true);
	struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				.major = 10, .minor = 229 };
	struct devcg_state *s;
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!devcg_replace(cg, a, &o, NULL));
	CHECK(!devcg_update(cg, &r, NULL, NULL));
	CHECK(!devcg_state_read(cg, &s, NULL));
	CHECK(devcg_state_own(s) && devcg_state_own(s)->audit);
	devcg_state_free(s);
	/* control: a plain replace without --audit does drop it */
	CHECK(!devcg_replace(cg, a, NULL, NULL));
	CHECK(!devcg_state_read(cg, &s, NULL));
	CHECK(devcg_state_own(s) && !devcg_state_own(s)->audit);
	devcg_state_free(s);
	devcg_policy_free(a);
}

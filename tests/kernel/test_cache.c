// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Shared programs (devcg_replace_opts.cache, user/lib/live/cache.c) on
 * live cgroups: cgroups given the same policy through one cache run one
 * program, and everything a swap promises still holds for each of them
 * alone: compare-and-swap, reset, rollback, adoption, show and check, and
 * a writer killed midway leaves every cgroup with exactly one program.
 * Each fact has a control showing its probe can fail.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "internal.h"
#include "scratch.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define POLICY_A "deny a\nallow c 1:3 rwm\nallow c 1:5 rwm\nallow c 136:* rw\n"
#define POLICY_A_REORDERED "deny a\nallow c 136:* rw\nallow c 1:5 rwm\nallow c 1:3 rwm\n"
#define POLICY_B "deny a\nallow c 1:* rwm\nallow b 7:* r\n"

/* The programs attached to CG itself: how many, the first in *ID. */
static uint32_t attached(const char *cg, uint32_t *id)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY);
	__u32 ids[64], cnt = 64;

	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, NULL, ids, &cnt));
	close(fd);
	if (id)
		*id = cnt ? ids[0] : 0;
	return cnt;
}

/* The one program attached to CG (the test fails unless exactly one). */
static uint32_t the_program(const char *cg)
{
	uint32_t id;

	CHECK_INT(attached(cg, &id), 1);
	return id;
}

/* Install P on CG through C (may be NULL); the program attached. */
static uint32_t install(const char *cg, const struct devcg_policy *p, struct devcg_cache *c, bool *hit)
{
	DEVCG_OPTS(devcg_replace_opts, o, .cache = c);
	struct devcg_error err = { 0 };

	CHECK_MSG(!devcg_replace(cg, p, &o, &err), "replace: %s", err.msg);
	CHECK(o.prog_id != 0);
	if (hit)
		*hit = o.cache_hit;
	return o.prog_id;
}

static void make(char *cg, size_t len)
{
	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, len));
}

/* The policy read back from CG's own devcg program and what check says of
 * c 1:9 r (urandom): 1 allow, 0 deny. */
static int read_back(const char *cg, uint32_t id, const struct devcg_policy *want)
{
	const struct devcg_program *own, *by;
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	int ret;

	CHECK_MSG(!devcg_state_read(cg, &s, &err), "%s", err.msg);
	own = devcg_state_own(s);
	CHECK(own != NULL);
	CHECK_INT(own->id, id);
	CHECK(devcg_policy_equal(own->policy, want));
	ret = devcg_state_check(s, DEVCG_CHAR, 1, 9, DEVCG_ACC_READ, &by, NULL, NULL);
	devcg_state_free(s);
	return ret;
}

TEST(cache_two_cgroups_given_one_policy_run_one_program)
{
	struct devcg_policy *a = policy_of(POLICY_A), *a2 = policy_of(POLICY_A_REORDERED);
	struct devcg_cache *c = devcg_cache_new(16);
	char one[4096], two[4096], three[4096];
	uint32_t p1, p2;
	bool hit;

	make(one, sizeof(one));
	make(two, sizeof(two));
	make(three, sizeof(three));
	CHECK(c != NULL);
	p1 = install(one, a, c, &hit);
	CHECK(!hit);
	/* the same policy from its rules in another order */
	p2 = install(two, a2, c, &hit);
	CHECK(hit);
	CHECK_INT(p2, p1);
	CHECK_INT(the_program(one), p1);
	CHECK_INT(the_program(two), p1);
	/* the same policy again: the program replaces itself, still alone */
	CHECK_INT(install(two, a, c, &hit), p1);
	CHECK(hit);
	CHECK_INT(the_program(two), p1);
	/* control: without the cache, the same policy is another program */
	CHECK(install(three, a, NULL, &hit) != p1);
	CHECK(!hit);
	devcg_cache_free(c);
	/* freeing the cache leaves both attached */
	CHECK_INT(the_program(one), p1);
	CHECK_INT(the_program(two), p1);
	devcg_policy_free(a);
	devcg_policy_free(a2);
}

TEST(cache_another_policy_does_not_hit)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	struct devcg_cache *c = devcg_cache_new(16);
	struct devcg_cache_stats st = { .sz = sizeof(st) };
	char one[4096], two[4096];
	uint32_t p1;
	bool hit;

	make(one, sizeof(one));
	make(two, sizeof(two));
	p1 = install(one, a, c, NULL);
	CHECK(install(two, b, c, &hit) != p1);
	CHECK(!hit);
	CHECK_INT(devcg_cache_stats(c, &st), 0);
	CHECK_INT(st.entries, 2);
	CHECK_INT(st.hits, 0);
	/* control: B again hits */
	install(one, b, c, &hit);
	CHECK(hit);
	devcg_cache_free(c);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(cache_audit_policies_are_not_shared)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	struct devcg_cache *c = devcg_cache_new(16);
	char one[4096], two[4096];
	uint32_t p1, p2;

	make(one, sizeof(one));
	make(two, sizeof(two));
	{
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c, .audit = true);

		CHECK(!devcg_replace(one, a, &o, NULL));
		p1 = o.prog_id;
		CHECK(!o.cache_hit);
		CHECK(!devcg_replace(two, a, &o, NULL));
		p2 = o.prog_id;
		CHECK(!o.cache_hit);
	}
	CHECK(p1 != p2);
	/* control: the same without audit is shared */
	p1 = install(one, a, c, NULL);
	CHECK_INT(install(two, a, c, NULL), p1);
	devcg_cache_free(c);
	devcg_policy_free(a);
}

TEST(cache_compare_and_swap_on_one_sharing_cgroup_never_changes_the_other)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	struct devcg_cache *c = devcg_cache_new(16);
	struct devcg_error err = { 0 };
	char one[4096], two[4096];
	struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR, .access = DEVCG_ACC_READ,
				.major = 1, .minor = 9 };
	uint32_t p, q, now;

	make(one, sizeof(one));
	make(two, sizeof(two));
	p = install(one, a, c, NULL);
	CHECK_INT(install(two, a, c, NULL), p);
	q = install(two, b, c, NULL); /* B cached too */
	install(two, a, c, NULL);
	/* a compare-and-swap naming P on ONE, to a cached program */
	{
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c, .expect_prog_id = p);

		CHECK_MSG(!devcg_replace(one, b, &o, &err), "%s", err.msg);
		CHECK(o.cache_hit);
		CHECK_INT(o.replaced_id, p);
	}
	CHECK_INT(the_program(one), q);
	CHECK_INT(the_program(two), p);
	/* a stale one fails and changes neither */
	{
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c, .expect_prog_id = p);

		CHECK_INT(devcg_replace(one, a, &o, &err), -ENOENT);
	}
	CHECK_INT(the_program(one), q);
	CHECK_INT(the_program(two), p);
	/* an update (read, edit, compare-and-swap) of TWO: ONE keeps Q */
	{
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c);

		CHECK_MSG(!devcg_update(two, &r, &o, &err), "%s", err.msg);
		CHECK_INT(o.replaced_id, p);
		now = o.prog_id;
	}
	CHECK(now != p && now != q);
	CHECK_INT(the_program(two), now);
	CHECK_INT(the_program(one), q);
	/* control: the probe sees a change of TWO */
	install(two, b, c, NULL);
	CHECK_INT(the_program(two), q);
	devcg_cache_free(c);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(cache_reset_of_one_sharing_cgroup_leaves_the_other)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	struct devcg_cache *c = devcg_cache_new(16);
	char one[4096], two[4096];
	uint32_t p;

	make(one, sizeof(one));
	make(two, sizeof(two));
	p = install(one, a, c, NULL);
	CHECK_INT(install(two, a, c, NULL), p);
	CHECK_INT(devcg_reset(one, NULL), 1);
	CHECK_INT(attached(one, NULL), 0);
	CHECK_INT(the_program(two), p);
	/* TWO still enforces: urandom refused there */
	CHECK_INT(read_back(two, p, a), 0);
	/* installing on ONE again takes the same program back */
	CHECK_INT(install(one, a, c, NULL), p);
	/* control: a reset of TWO is seen */
	CHECK_INT(devcg_reset(two, NULL), 1);
	CHECK_INT(attached(two, NULL), 0);
	devcg_cache_free(c);
	devcg_policy_free(a);
}

TEST(cache_rollback_on_one_sharing_cgroup_leaves_the_other)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	struct devcg_cache *c = devcg_cache_new(16);
	char one[4096], two[4096], three[4096];
	uint32_t p, q;

	make(one, sizeof(one));
	make(two, sizeof(two));
	make(three, sizeof(three));
	p = install(one, a, c, NULL);
	CHECK_INT(install(two, a, c, NULL), p);
	q = install(three, b, c, NULL);
	/* ONE to the cached Q, failing after the swap: put back P */
	{
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c, .fail_at = "verify");

		CHECK(devcg_replace(one, b, &o, NULL) < 0);
	}
	CHECK_INT(the_program(one), p);
	CHECK_INT(the_program(two), p);
	CHECK_INT(the_program(three), q);
	CHECK_INT(read_back(one, p, a), 0);
	/* control: the same swap without the failure takes place */
	CHECK_INT(install(one, b, c, NULL), q);
	CHECK_INT(the_program(one), q);
	CHECK_INT(the_program(two), p);
	devcg_cache_free(c);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(cache_show_and_check_read_the_policy_back_on_every_sharing_cgroup)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	struct devcg_cache *c = devcg_cache_new(16);
	char one[4096], two[4096];
	uint32_t p;

	make(one, sizeof(one));
	make(two, sizeof(two));
	p = install(one, a, c, NULL);
	CHECK_INT(install(two, a, c, NULL), p);
	CHECK_INT(read_back(one, p, a), 0);
	CHECK_INT(read_back(two, p, a), 0);
	/* control: B, read back where it is installed, allows urandom */
	p = install(two, b, c, NULL);
	CHECK_INT(read_back(two, p, b), 1);
	CHECK_INT(read_back(one, the_program(one), a), 0);
	devcg_cache_free(c);
	devcg_policy_free(a);
	devcg_policy_free(b);
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

static void attach_foreign(const char *cg)
{
	int fd = foreign_prog(), cfd = open(cg, O_RDONLY | O_DIRECTORY);

	CHECK(cfd >= 0);
	CHECK(!bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	close(cfd);
	close(fd);
}

TEST(cache_a_shared_program_adopts_a_foreign_one)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	struct devcg_cache *c = devcg_cache_new(16);
	char one[4096], two[4096];
	uint32_t p, foreign;
	bool hit;

	make(one, sizeof(one));
	make(two, sizeof(two));
	p = install(one, a, c, NULL);
	attach_foreign(two);
	foreign = the_program(two);
	CHECK(foreign != p); /* control: another program was there */
	CHECK_INT(install(two, a, c, &hit), p);
	CHECK(hit);
	CHECK_INT(the_program(two), p);
	CHECK_INT(the_program(one), p);
	CHECK_INT(read_back(two, p, a), 0);
	devcg_cache_free(c);
	devcg_policy_free(a);
}

/* Each of the N cgroups has exactly one program; the first that has
 * another number, or -1. */
static int first_not_one(char (*cgs)[4096], int n)
{
	for (int i = 0; i < n; i++)
		if (attached(cgs[i], NULL) != 1)
			return i;
	return -1;
}

#define KILL_CGROUPS 40

TEST(cache_a_writer_killed_mid_install_leaves_every_cgroup_with_one_program)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	char (*cgs)[4096] = calloc(KILL_CGROUPS, sizeof(*cgs));
	unsigned int seed = (unsigned int)time(NULL) ^ (unsigned int)getpid();
	int i, round, status, ready[2];
	pid_t pid;

	CHECK(cgs != NULL);
	for (i = 0; i < KILL_CGROUPS; i++) {
		make(cgs[i], sizeof(cgs[i]));
		install(cgs[i], a, NULL, NULL); /* each its own program */
	}
	for (round = 0; round < 5; round++) {
		char c;

		CHECK(!pipe(ready));
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			struct devcg_cache *cache = devcg_cache_new(4);

			close(ready[0]);
			for (int k = 0;; k++) {
				for (i = 0; i < KILL_CGROUPS; i++) {
					DEVCG_OPTS(devcg_replace_opts, o, .cache = cache);

					if (devcg_replace(cgs[i], k % 2 ? a : b, &o, NULL))
						_exit(1);
					if (!k && !i && write(ready[1], "x", 1) != 1)
						_exit(1);
				}
			}
		}
		close(ready[1]);
		CHECK_INT(read(ready[0], &c, 1), 1); /* one install done at least */
		close(ready[0]);
		usleep((useconds_t)(rand_r(&seed) % 20000));
		CHECK(!kill(pid, SIGKILL));
		CHECK_INT(waitpid(pid, &status, 0), pid);
		CHECK_MSG(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
			  "the writer ended before it was killed (status %#x)", status);
		CHECK_MSG(first_not_one(cgs, KILL_CGROUPS) < 0, "round %d: cgroup %d has %u programs", round,
			  first_not_one(cgs, KILL_CGROUPS), attached(cgs[first_not_one(cgs, KILL_CGROUPS)], NULL));
	}
	/* control: a cgroup with a second program is caught */
	attach_foreign(cgs[7]);
	CHECK_INT(first_not_one(cgs, KILL_CGROUPS), 7);
	free(cgs);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

struct cache_job {
	char cg[4096];
	const struct devcg_policy *a, *b;
	struct devcg_cache *cache;
	int failures;
};

static void *replace_many_cached(void *arg)
{
	struct cache_job *job = arg;

	for (int i = 0; i < 50; i++) {
		DEVCG_OPTS(devcg_replace_opts, o, .cache = job->cache);

		if (devcg_replace(job->cg, i % 2 ? job->a : job->b, &o, NULL))
			job->failures++;
	}
	return NULL;
}

TEST(cache_threads_sharing_one_cache_end_on_its_programs)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	struct devcg_cache *c = devcg_cache_new(2);
	struct devcg_cache_stats st = { .sz = sizeof(st) };
	struct cache_job jobs[4];
	pthread_t t[4];
	uint32_t p;

	for (int i = 0; i < 4; i++) {
		jobs[i] = (struct cache_job){ .a = a, .b = b, .cache = c };
		make(jobs[i].cg, sizeof(jobs[i].cg));
	}
	for (int i = 0; i < 4; i++)
		CHECK(!pthread_create(&t[i], NULL, replace_many_cached, &jobs[i]));
	for (int i = 0; i < 4; i++) {
		CHECK(!pthread_join(t[i], NULL));
		CHECK_INT(jobs[i].failures, 0);
	}
	/* two policies, two entries: every later install hit */
	CHECK_INT(devcg_cache_stats(c, &st), 0);
	CHECK_INT(st.entries, 2);
	CHECK_INT(st.evictions, 0);
	CHECK(st.hits >= 200 - 8);
	/* the last swap of each (i = 49) installed A: one cached program */
	p = install(jobs[0].cg, a, c, NULL);
	for (int i = 0; i < 4; i++) {
		CHECK_INT(the_program(jobs[i].cg), p);
		CHECK_INT(read_back(jobs[i].cg, p, a), 0);
	}
	devcg_cache_free(c);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(cache_a_cached_program_attached_beside_the_one_replaced_is_loaded_anew)
{
	struct devcg_policy *a = policy_of(POLICY_A);
	struct devcg_cache *c = devcg_cache_new(16);
	struct devcg_error err = { 0 };
	char cg[4096];
	uint32_t p, foreign = 0, ids[2];
	int fd;
	__u32 cnt = 2;

	make(cg, sizeof(cg));
	p = install(cg, a, c, NULL);
	attach_foreign(cg);
	fd = open(cg, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, NULL, ids, &cnt));
	close(fd);
	CHECK_INT(cnt, 2); /* control: P and the foreign one */
	foreign = ids[0] == p ? ids[1] : ids[0];
	/* replace the foreign one by A, whose cached program P is there */
	{
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c, .force = true, .expect_prog_id = foreign);

		CHECK_MSG(!devcg_replace(cg, a, &o, &err), "%s", err.msg);
		CHECK(!o.cache_hit);
		CHECK(o.prog_id != p);
		CHECK_INT(the_program(cg), o.prog_id);
		CHECK_INT(read_back(cg, o.prog_id, a), 0);
	}
	devcg_cache_free(c);
	devcg_policy_free(a);
}

struct flipper {
	char cg[4096];
	int fds[2]; /* the two cached programs, the test's own fds */
	uint32_t ids[2];
	volatile int stop;
	int flips;
};

/* Swap the cgroup's program between the two, by BPF_F_REPLACE of the one
 * it finds, as another writer would, until told to stop. */
static void *flip(void *arg)
{
	struct flipper *f = arg;
	int cfd = open(f->cg, O_RDONLY | O_DIRECTORY);

	while (cfd >= 0 && !f->stop) {
		__u32 ids[4], cnt = 4;
		int cur;

		if (bpf_prog_query(cfd, BPF_CGROUP_DEVICE, 0, NULL, ids, &cnt) || cnt != 1)
			continue;
		cur = ids[0] == f->ids[0] ? 0 : ids[0] == f->ids[1] ? 1 : -1;
		if (cur < 0)
			continue;
		LIBBPF_OPTS(bpf_prog_attach_opts, o, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE,
			    .replace_prog_fd = f->fds[cur]);
		f->flips += !bpf_prog_attach_opts(f->fds[!cur], cfd, BPF_CGROUP_DEVICE, &o);
	}
	if (cfd >= 0)
		close(cfd);
	return NULL;
}

TEST(cache_a_cached_compare_and_swap_replaces_only_the_program_it_names_while_another_writer_swaps)
{
	struct devcg_policy *a = policy_of(POLICY_A), *b = policy_of(POLICY_B);
	struct devcg_cache *c = devcg_cache_new(4);
	struct flipper f = { 0 };
	struct devcg_error err = { 0 };
	int i, done = 0, refused = 0, ret;
	pthread_t t;

	make(f.cg, sizeof(f.cg));
	f.ids[1] = install(f.cg, b, c, NULL);
	f.ids[0] = install(f.cg, a, c, NULL); /* both cached, A's attached */
	for (i = 0; i < 2; i++) {
		f.fds[i] = bpf_prog_get_fd_by_id(f.ids[i]);
		CHECK(f.fds[i] >= 0);
	}
	CHECK(!pthread_create(&t, NULL, flip, &f));
	for (i = 0; i < 300; i++) {
		uint32_t expect = the_program(f.cg);
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c, .expect_prog_id = expect);

		/* each call either replaces the program it was told (and names
		 * it), or is refused because it is gone: never another */
		ret = devcg_replace(f.cg, i % 2 ? a : b, &o, &err);
		CHECK_MSG(ret == 0 || ret == -ENOENT, "replace: %s", err.msg);
		if (!ret) {
			CHECK(o.cache_hit);
			CHECK_INT(o.replaced_id, expect);
			done++;
		} else {
			refused++;
		}
	}
	f.stop = 1;
	CHECK(!pthread_join(t, NULL));
	CHECK_INT(done + refused, 300);
	CHECK(the_program(f.cg) == f.ids[0] || the_program(f.cg) == f.ids[1]);
	/* control, with no other writer: a stale id is refused, the current
	 * one is replaced */
	{
		uint32_t now = the_program(f.cg), stale = now == f.ids[0] ? f.ids[1] : f.ids[0];
		DEVCG_OPTS(devcg_replace_opts, o, .cache = c, .expect_prog_id = stale);

		CHECK_INT(devcg_replace(f.cg, a, &o, &err), -ENOENT);
		CHECK_INT(the_program(f.cg), now);
		o.expect_prog_id = now;
		CHECK_MSG(!devcg_replace(f.cg, now == f.ids[0] ? b : a, &o, &err), "%s", err.msg);
		CHECK_INT(the_program(f.cg), stale);
	}
	close(f.fds[0]);
	close(f.fds[1]);
	devcg_cache_free(c);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

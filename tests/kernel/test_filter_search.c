// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The filter's lookups: a policy of thousands of exceptions is one hash
 * table in one frozen map value, probed in the kernel. Real device
 * opens, mknods and access() calls (tests/probe.h) from a process in the
 * cgroup must get the answer devcg's model (devcg_policy_check()) gives,
 * for exceptions of every shape hidden among thousands of others, and
 * `show` must read every exception back.
 */
#include "devcg.h"
#include "crafted.h"
#include "harness.h"
#include "probe.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

static void need_root_and_v2(void)
{
	if (geteuid())
		SKIP("needs root (devcg_replace loads and attaches BPF programs)");
	if (!scratch_cgroup2_root())
		SKIP("no cgroup2 mount in /proc/self/mountinfo");
}

static void add(struct devcg_policy *p, uint8_t verb, uint8_t type, uint32_t major, uint32_t minor,
		uint8_t access)
{
	struct devcg_rule r = { .verb = verb, .type = type, .access = access, .major = major, .minor = minor };

	CHECK(!devcg_policy_apply(p, &r, NULL));
}

static bool probe_major(uint32_t major)
{
	for (int i = 0; i < NMAJ; i++)
		if (majors[i] == major)
			return true;
	return false;
}

/*
 * About N exceptions: for the probed devices, exact keys (one in two),
 * minor '*' per major and major '*' per minor (one in six each); the rest
 * fill the same segments around them: the probed majors with other minors,
 * other majors with any minor or '*', '*' with other minors, and a few that
 * no request can match (major above 4095, minor above 2^20 - 1).
 */
static struct devcg_policy *big_policy(size_t n, bool default_allow)
{
	struct devcg_policy *p = devcg_policy_new();
	uint8_t verb = default_allow ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW;
	int i, j;

	add(p, default_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY, DEVCG_ALL, DEVCG_ANY, DEVCG_ANY,
	    DEVCG_ACC_ALL);
	for (i = 0; i < NDEV; i++)
		if (below(2))
			add(p, verb, devs[i].type, devs[i].major, devs[i].minor, (uint8_t)(1 + below(7)));
	for (j = 0; j < 2; j++) {
		uint8_t type = j ? DEVCG_BLOCK : DEVCG_CHAR;

		for (i = 0; i < NMAJ; i++)
			if (!below(6))
				add(p, verb, type, majors[i], DEVCG_ANY, (uint8_t)(1 + below(7)));
		for (i = 0; i < NMIN; i++)
			if (!below(6))
				add(p, verb, type, DEVCG_ANY, minors[i], (uint8_t)(1 + below(7)));
	}
	while (devcg_policy_count(p) < n) {
		uint8_t type = below(3) ? DEVCG_CHAR : DEVCG_BLOCK, access = (uint8_t)(1 + below(7));
		uint32_t kind = below(20), major, minor;

		if (kind < 8) { /* a probed major, another minor */
			major = majors[below(NMAJ)];
			minor = 8 + below(1 << 20);
		} else if (kind < 16) { /* another major */
			major = 11 + below(4085);
			minor = below(10) ? below(1 << 20) : DEVCG_ANY;
		} else if (kind < 18) { /* any major, another minor */
			major = DEVCG_ANY;
			minor = 8 + below(100000);
		} else if (kind < 19) { /* never matches */
			major = 4096 + below(100000);
			minor = below(1024);
		} else {
			major = 11 + below(100);
			minor = (1u << 20) + below(1000);
		}
		if (probe_major(major) && minor == DEVCG_ANY)
			continue;
		add(p, verb, type, major, minor, access);
	}
	return p;
}

/* Probes whose result differs from what POL decides (listed in OUT). */
static int mismatches(const struct devcg_policy *pol, const uint8_t base[NRES], const uint8_t res[NRES],
		      struct text *out)
{
	int i, bad = 0;

	for (i = 0; i < NRES; i++) {
		const struct dev *d = &devs[i / NPROBE];
		int want = devcg_policy_check(pol, d->type, d->major, d->minor, probe_access[i % NPROBE], NULL,
					      NULL);
		uint8_t expect = want == 1 ? base[i] : EPERM;

		CHECK(want == 0 || want == 1);
		if (res[i] == expect)
			continue;
		if (bad++ < 8 && out)
			text_add(out, "    %s %s: %s, devcg's model: %s\n", d->name, probe_name[i % NPROBE],
				 err_name(res[i]), want ? "allow" : "deny");
	}
	return bad;
}

struct bench_cg {
	char dir[PATH_MAX], cg[PATH_MAX];
	struct prober p;
	uint8_t base[NRES];
};

static void setup(struct bench_cg *b)
{
	uint32_t ids[64];
	__u32 cnt = 64, flags = 0;
	int fd, i;

	need_root_and_v2();
	make_devdir(b->dir, sizeof(b->dir));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), b->cg, sizeof(b->cg)));
	fd = open(b->cg, O_RDONLY | O_DIRECTORY);
	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, BPF_F_QUERY_EFFECTIVE, &flags, ids, &cnt));
	close(fd);
	if (cnt)
		SKIP("a device program runs for every new cgroup2 cgroup here: no neutral baseline");
	prober_start(&b->p, b->cg, b->dir);
	prober_probe(&b->p, b->base);
	for (i = 0; i < NRES; i++)
		CHECK_MSG(b->base[i] != EPERM, "%s %s: EPERM with nothing attached", devs[i / NPROBE].name,
			  probe_name[i % NPROBE]);
}

static void teardown(struct bench_cg *b)
{
	CHECK_INT(prober_stop(&b->p), 0);
	CHECK_INT(scratch_cgroup_remove(b->cg), 0);
	CHECK_INT(scratch_devdir_remove(b->dir), 0);
}

TEST(filters_of_thousands_of_exceptions_decide_every_probe_as_the_model_and_read_back_whole)
{
	/* the last: as many as devcg takes (DEVCG_MAX_RULES), once */
	static const size_t sizes[] = { 40, 1000, 20000, DEVCG_MAX_RULES };
	struct bench_cg b;
	int round = 0;

	setup(&b);
	rng_state = 0x5ea2c4;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int seed = 0; seed < (sizes[k] == DEVCG_MAX_RULES ? 1 : 4); seed++, round++) {
			struct devcg_policy *pol = big_policy(sizes[k], seed % 2);
			struct devcg_error err = { 0 };
			struct devcg_state *s;
			struct text out = { 0 };
			uint8_t res[NRES];
			int bad;

			CHECK_MSG(!devcg_replace(b.cg, pol, NULL, &err), "%s", err.msg);
			prober_probe(&b.p, res);
			bad = mismatches(pol, b.base, res, &out);
			CHECK_MSG(!bad, "%zu exceptions, default %s: %d probes differ from the model:\n%s",
				  devcg_policy_count(pol), seed % 2 ? "allow" : "deny", bad, out.s);
			CHECK(!devcg_state_read(b.cg, &s, NULL));
			CHECK_MSG(devcg_policy_equal(devcg_state_own(s)->policy, pol),
				  "%zu exceptions: the policy read back differs", devcg_policy_count(pol));
			devcg_state_free(s);
			devcg_policy_free(pol);
		}
	}
	printf("    %d policies of up to %zu exceptions, %d probes each: all as the model\n", round,
	       sizes[3], NRES);
	teardown(&b);
}

/* Control: the installed filter lacks one exact exception that decides a
 * probe; the comparison must see it. */
TEST(control_a_filter_missing_one_exception_among_thousands_is_caught)
{
	struct bench_cg b;
	struct devcg_policy *pol, *less = NULL;
	uint8_t res[NRES];
	int i;

	setup(&b);
	rng_state = 0xc0471;
	pol = big_policy(20000, false);
	for (i = 0; i < NDEV && !less; i++) {
		const struct dev *d = &devs[i];
		int p;

		rng_state = 0xc0471; /* the same policy again */
		less = big_policy(20000, false);
		add(less, DEVCG_VERB_DENY, d->type, d->major, d->minor, DEVCG_ACC_ALL);
		for (p = 0; p < NPROBE; p++)
			if (devcg_policy_check(pol, d->type, d->major, d->minor, probe_access[p], NULL, NULL) !=
			    devcg_policy_check(less, d->type, d->major, d->minor, probe_access[p], NULL, NULL))
				break;
		if (p == NPROBE) {
			devcg_policy_free(less);
			less = NULL;
		}
	}
	CHECK_MSG(less, "no exact exception of the probed devices decides a probe");
	CHECK(!devcg_replace(b.cg, less, NULL, NULL));
	prober_probe(&b.p, res);
	CHECK(mismatches(pol, b.base, res, NULL) > 0);
	CHECK_INT(mismatches(less, b.base, res, NULL), 0);
	devcg_policy_free(pol);
	devcg_policy_free(less);
	teardown(&b);
}

/*
 * A policy of the probed devices' exceptions (big_policy()) among N keys
 * crafted against the old fixed multiplier, and (AGAINST_ALL) 16 against
 * each multiplier devcg then tries, until it sorts the table.
 */
static struct devcg_policy *crafted_big_policy(size_t n, bool default_allow, bool against_all)
{
	struct devcg_policy *pol = big_policy(40, default_allow);

	CHECK_INT(crafted_add(pol, CRAFTED_OLD_MULT, 1000, n), n);
	if (against_all)
		CHECK(crafted_against_every_multiplier(pol, false) >= 0);
	return pol;
}

TEST(filters_of_keys_crafted_against_the_hash_decide_every_probe_as_the_model_and_read_back_whole)
{
	struct bench_cg b;
	int round = 0;

	setup(&b);
	for (int against_all = 0; against_all < 2; against_all++)
		for (int d = 0; d < 2; d++)
			for (int audit = 0; audit < 2; audit++, round++) {
				struct devcg_replace_opts o = { .sz = sizeof(o), .audit = audit };
				struct devcg_policy *pol;
				struct devcg_policy_value *v;
				struct devcg_error err = { 0 };
				struct devcg_table t;
				struct devcg_state *s;
				struct text out = { 0 };
				uint8_t res[NRES];
				size_t size;
				int bad;

				rng_state = 0xc4af7ed + (uint64_t)round;
				pol = crafted_big_policy(16385, d, against_all);
				/* the layout this test is about: sorted when keys
				 * were chosen against every multiplier */
				CHECK(!devcg_filter_value(pol, audit, &v, &size, &t));
				CHECK_INT(t.sorted, against_all);
				free(v);
				CHECK_MSG(!devcg_replace(b.cg, pol, &o, &err), "%s", err.msg);
				prober_probe(&b.p, res);
				bad = mismatches(pol, b.base, res, &out);
				CHECK_MSG(!bad, "%zu exceptions, default %s, %s table%s: %d probes differ from the "
					  "model:\n%s", devcg_policy_count(pol), d ? "allow" : "deny",
					  against_all ? "a sorted" : "a hash", audit ? ", audit" : "", bad, out.s);
				CHECK(!devcg_state_read(b.cg, &s, NULL));
				CHECK_MSG(devcg_policy_equal(devcg_state_own(s)->policy, pol),
					  "%zu exceptions: the policy read back differs", devcg_policy_count(pol));
				devcg_state_free(s);
				devcg_policy_free(pol);
			}
	printf("    %d policies of keys crafted against the hash, %d probes each: all as the model\n", round,
	       NRES);
	teardown(&b);
}

/* Control: the sorted table's filter lacks one exact exception that
 * decides a probe; the comparison must see it. */
TEST(control_a_sorted_filter_missing_one_exception_is_caught)
{
	struct bench_cg b;
	struct devcg_policy *pol, *less = NULL;
	uint8_t res[NRES];
	int i;

	setup(&b);
	rng_state = 0x50e7ed;
	pol = crafted_big_policy(16385, false, true);
	for (i = 0; i < NDEV && !less; i++) {
		const struct dev *d = &devs[i];
		int p;

		less = devcg_policy_dup(pol);
		CHECK(less);
		add(less, DEVCG_VERB_DENY, d->type, d->major, d->minor, DEVCG_ACC_ALL);
		for (p = 0; p < NPROBE; p++)
			if (devcg_policy_check(pol, d->type, d->major, d->minor, probe_access[p], NULL, NULL) !=
			    devcg_policy_check(less, d->type, d->major, d->minor, probe_access[p], NULL, NULL))
				break;
		if (p == NPROBE) {
			devcg_policy_free(less);
			less = NULL;
		}
	}
	CHECK_MSG(less, "no exact exception of the probed devices decides a probe");
	{
		struct devcg_policy_value *v;
		struct devcg_table t;
		size_t size;

		CHECK(!devcg_filter_value(less, false, &v, &size, &t));
		CHECK(t.sorted);
		free(v);
	}
	CHECK(!devcg_replace(b.cg, less, NULL, NULL));
	prober_probe(&b.p, res);
	CHECK(mismatches(pol, b.base, res, NULL) > 0);
	CHECK_INT(mismatches(less, b.base, res, NULL), 0);
	devcg_policy_free(pol);
	devcg_policy_free(less);
	teardown(&b);
}

/* The hash multiplier of the devcg filter attached to CG: the immediate
 * of its first multiply (the filter hashes each key shape by one). */
static uint32_t attached_multiplier(const char *cg)
{
	struct bpf_insn insns[DEVCG_PROGRAM_MAX_INSNS];
	struct bpf_prog_info info = { 0 };
	__u32 ids[4], cnt = 4, flags = 0, len = sizeof(info), i;
	int fd = open(cg, O_RDONLY | O_DIRECTORY), pfd;

	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	CHECK_INT(cnt, 1);
	pfd = bpf_prog_get_fd_by_id(ids[0]);
	CHECK(pfd >= 0);
	info.xlated_prog_insns = (__u64)(uintptr_t)insns;
	info.xlated_prog_len = sizeof(insns);
	CHECK(!bpf_obj_get_info_by_fd(pfd, &info, &len));
	close(pfd);
	for (i = 0; i < info.xlated_prog_len / sizeof(insns[0]); i++)
		if (insns[i].code == (BPF_ALU | BPF_MUL | BPF_K))
			return (uint32_t)insns[i].imm;
	CHECK_MSG(false, "no multiply in the program of %s", cg);
	return 0;
}

/* `devcg replace CG RULES...` as its own process: 0 when it succeeded. */
static int cli_replace(const char *cg, const char *rule)
{
	const char *bin = getenv("DEVCG") ? getenv("DEVCG") : "build/devcg";
	int st;
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execl(bin, bin, "replace", "--no-systemd", cg, "deny a", rule, (char *)NULL);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Each devcg process hashes under multipliers of its own secret, so that
 * keys chosen against the multipliers devcg's source gives (or against
 * another process's) are not against its own: the same rules installed by
 * two `devcg replace` processes are hashed under different multipliers. */
TEST(two_devcg_processes_hash_the_same_rules_under_different_multipliers)
{
	char cg[PATH_MAX];
	uint32_t first, second;

	need_root_and_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK_INT(cli_replace(cg, "allow c 5:1 rwm"), 0);
	first = attached_multiplier(cg);
	CHECK_INT(cli_replace(cg, "allow c 5:1 rwm"), 0);
	second = attached_multiplier(cg);
	printf("    multipliers 0x%08x and 0x%08x\n", first, second);
	CHECK(first != second);
	CHECK_INT(scratch_cgroup_remove(cg), 0);
}

/* Control: within one process the secret stays, so the same rules get the
 * same multiplier, and the comparison above sees it. */
TEST(control_one_process_hashes_the_same_rules_under_one_multiplier)
{
	struct devcg_policy *pol = devcg_policy_new();
	char cg[PATH_MAX];
	uint32_t first;

	need_root_and_v2();
	CHECK(pol);
	/* as the command's rules: deny a, allow c 5:1 rwm */
	add(pol, DEVCG_VERB_DENY, DEVCG_ALL, DEVCG_ANY, DEVCG_ANY, DEVCG_ACC_ALL);
	add(pol, DEVCG_VERB_ALLOW, DEVCG_CHAR, 5, 1, DEVCG_ACC_ALL);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!devcg_replace(cg, pol, NULL, NULL));
	first = attached_multiplier(cg);
	CHECK(!devcg_replace(cg, pol, NULL, NULL));
	CHECK_INT(attached_multiplier(cg), first);
	devcg_policy_free(pol);
	CHECK_INT(scratch_cgroup_remove(cg), 0);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Differential test against the kernel's cgroup v1 devices controller: the
 * same random rule sequences are written to devices.allow / devices.deny of
 * a scratch cgroup and applied to a devcg policy; then a child inside the
 * cgroup probes device nodes and every outcome is compared with
 * devcg_policy_check(), and devices.list with the policy's exceptions.
 *
 * What each probe asks the device cgroup, and which devices are probed: see
 * probe.h (the prober is shared with test_live_differential.c). The controls
 * below show that the probes see the kernel's decision: deny
 * all gives EPERM everywhere, allow all gives EPERM nowhere.
 */
#include "devcg.h"
#include "harness.h"
#include "probe.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* ---- a scratch v1 cgroup with a prober in it ------------------------------ */

struct kcg {
	char path[PATH_MAX];
	struct prober p;
	int allow_fd, deny_fd;
	bool fresh; /* no rule written yet */
};

static void kcg_open(struct kcg *k, const char *dir)
{
	char file[PATH_MAX + 32];
	int err;

	memset(k, 0, sizeof(*k));
	err = scratch_cgroup_create(scratch_devices_root(), k->path, sizeof(k->path));
	CHECK_MSG(!err, "scratch_cgroup_create: %s", strerror(-err));
	prober_start(&k->p, k->path, dir);
	snprintf(file, sizeof(file), "%s/devices.allow", k->path);
	k->allow_fd = open(file, O_WRONLY | O_CLOEXEC);
	snprintf(file, sizeof(file), "%s/devices.deny", k->path);
	k->deny_fd = open(file, O_WRONLY | O_CLOEXEC);
	CHECK_MSG(k->allow_fd >= 0 && k->deny_fd >= 0, "open devices.allow/deny: %s",
		  strerror(errno));
	k->fresh = true;
}

static void kcg_close(struct kcg *k)
{
	int status, err;

	close(k->allow_fd);
	close(k->deny_fd);
	status = prober_stop(&k->p);
	CHECK_MSG(status == 0, "prober exited with %d", status);
	err = scratch_cgroup_remove(k->path);
	CHECK_MSG(!err, "scratch_cgroup_remove %s: %s", k->path, strerror(-err));
}

/* Write one rule; 0 or -errno. */
static int kcg_write(struct kcg *k, const struct devcg_rule *r)
{
	char text[64];
	size_t len;
	ssize_t w;

	kernel_text(r, text, sizeof(text));
	len = strlen(text);
	w = write(r->verb == DEVCG_VERB_ALLOW ? k->allow_fd : k->deny_fd, text, len);
	k->fresh = false;
	return w < 0 ? -errno : (size_t)w == len ? 0 : -EIO;
}

static void kcg_probe(struct kcg *k, uint8_t res[NRES])
{
	prober_probe(&k->p, res);
}

/* ---- comparing --------------------------------------------------------------- */

static int cmp_ex(const void *pa, const void *pb)
{
	const struct devcg_exception *a = pa, *b = pb;

	/* devcg's canonical order: char before block, then major, minor */
	if (a->type != b->type)
		return a->type == DEVCG_CHAR ? -1 : 1;
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	return 0;
}

static uint32_t parse_num(const char *s)
{
	return !strcmp(s, "*") ? DEVCG_ANY : (uint32_t)strtoul(s, NULL, 10);
}

static uint8_t parse_access(const char *s)
{
	uint8_t a = 0;

	for (; *s; s++)
		a |= *s == 'r' ? DEVCG_ACC_READ : *s == 'w' ? DEVCG_ACC_WRITE :
		     *s == 'm' ? DEVCG_ACC_MKNOD : 0;
	return a;
}

static void format_ex(const struct devcg_exception *e, char *buf, size_t size)
{
	struct devcg_rule r = { DEVCG_VERB_ALLOW, e->type, e->access, e->major, e->minor };

	kernel_text(&r, buf, size);
}

/* Compare devices.list with the policy; adds to OUT and returns the differences. */
static int compare_list(const struct kcg *k, const struct devcg_policy *pol, struct text *out)
{
	static char buf[1 << 16];
	struct devcg_exception kex[512];
	const struct devcg_exception *dex;
	size_t nk = 0, nd = devcg_policy_count(pol), i;
	bool kernel_allow = false;
	char *line, *save = NULL;
	ssize_t len = scratch_cgroup_read(k->path, "devices.list", buf, sizeof(buf));
	int diff = 0;

	if (len < 0) {
		text_add(out, "    cannot read devices.list: %s\n", strerror((int)-len));
		return 1;
	}
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char t, maj[16], min[16], acc[8];

		if (sscanf(line, "%c %15[^:]:%15s %7s", &t, maj, min, acc) != 4 || nk == 512) {
			text_add(out, "    unreadable devices.list line \"%s\"\n", line);
			diff++;
			continue;
		}
		if (t == 'a') {
			if (strcmp(line, "a *:* rwm")) {
				text_add(out, "    devices.list has \"%s\"\n", line);
				diff++;
			}
			kernel_allow = true;
			continue;
		}
		kex[nk++] = (struct devcg_exception){ t == 'b' ? DEVCG_BLOCK : DEVCG_CHAR,
						       parse_access(acc), parse_num(maj),
						       parse_num(min) };
	}
	if (kernel_allow != devcg_policy_default_allow(pol)) {
		text_add(out, "    default: kernel %s, devcg %s\n", kernel_allow ? "allow" : "deny",
			 devcg_policy_default_allow(pol) ? "allow" : "deny");
		return diff + 1;
	}
	/* the kernel lists exceptions only when the default is deny */
	if (kernel_allow) {
		if (nk) {
			text_add(out, "    devices.list lists exceptions next to \"a *:* rwm\"\n");
			diff++;
		}
		return diff;
	}
	qsort(kex, nk, sizeof(kex[0]), cmp_ex);
	dex = devcg_policy_exceptions(pol);
	CHECK(dex);
	for (i = 0; i < nk || i < nd; i++) {
		char a[40], b[40];

		if (i < nk && i < nd && !cmp_ex(&kex[i], &dex[i]) && kex[i].access == dex[i].access)
			continue;
		if (i < nk)
			format_ex(&kex[i], a, sizeof(a));
		if (i < nd)
			format_ex(&dex[i], b, sizeof(b));
		text_add(out, "    devices.list entry %zu: kernel \"%s\", devcg \"%s\"\n", i + 1,
			 i < nk ? a : "(none)", i < nd ? b : "(none)");
		diff++;
	}
	return diff;
}

/* The outcome of each probe when everything is allowed. */
static uint8_t baseline[NRES];

/* Compare the probes with the policy; adds to OUT and returns the differences. */
static int compare_probes(const uint8_t res[NRES], const struct devcg_policy *pol,
			  struct text *out)
{
	int i, p, diff = 0;

	for (i = 0; i < NDEV; i++)
		for (p = 0; p < NPROBE; p++) {
			uint8_t r = res[i * NPROBE + p];
			int want = devcg_policy_check(pol, devs[i].type, devs[i].major,
						      devs[i].minor, probe_access[p], NULL, NULL);

			if (want < 0) {
				text_add(out, "    devcg_policy_check(%s, %s): %s\n", devs[i].name,
					 probe_name[p], strerror(-want));
				diff++;
			} else if (r != EPERM && r != baseline[i * NPROBE + p]) {
				text_add(out, "    %s %s: kernel gave %s, neither EPERM nor %s as when all is allowed\n",
					 probe_name[p], devs[i].name, err_name(r),
					 err_name(baseline[i * NPROBE + p]));
				diff++;
			} else if ((r != EPERM) != (want == 1)) {
				text_add(out, "    %s %s: kernel %s (%s), devcg %s\n", probe_name[p],
					 devs[i].name, r == EPERM ? "denies" : "allows",
					 err_name(r), want ? "allows" : "denies");
				diff++;
			}
		}
	return diff;
}

/*
 * devcg's parser must read the text written to the kernel as the same rule
 * (with the verb in front, as in "deny c 1:3 rw"); 'a' keeps no access.
 */
static int check_parse(const struct devcg_rule *r, struct text *out)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_error err = { 0 };
	const struct devcg_rule *got;
	char text[64], arg[80];
	int diff = 0;

	CHECK(rules);
	kernel_text(r, text, sizeof(text));
	snprintf(arg, sizeof(arg), "%s %s", r->verb == DEVCG_VERB_ALLOW ? "allow" : "deny", text);
	if (devcg_rules_parse_rule(rules, arg, "rule", NULL, &err)) {
		text_add(out, "    devcg cannot parse \"%s\": %s\n", arg, err.msg);
		diff = 1;
	} else if (devcg_rules_count(rules) != 1 || !(got = devcg_rules_get(rules, 0)) ||
		   got->verb != r->verb || got->type != r->type ||
		   (r->type != DEVCG_ALL && (got->access != r->access || got->major != r->major ||
					      got->minor != r->minor))) {
		text_add(out, "    devcg parses \"%s\" as another rule\n", arg);
		diff = 1;
	}
	devcg_rules_free(rules);
	return diff;
}

/* What the sequences exercised, to show the coverage. */
static struct seq_stats stats;

/*
 * Run one sequence from the policy of a fresh cgroup (the kernel's cgroup is
 * fresh, or reset with 'a' written to devices.allow: with the root as parent
 * that copies the root's empty exception list and sets the default to allow,
 * as devcgroup_online() does for a new cgroup). Returns the differences.
 */
static int run_sequence(struct kcg *k, const struct devcg_rule *rules, size_t n,
			struct text *out)
{
	static const struct devcg_rule reset = { DEVCG_VERB_ALLOW, DEVCG_ALL, DEVCG_ACC_ALL,
						  DEVCG_ANY, DEVCG_ANY };
	struct devcg_policy *pol = devcg_policy_new();
	uint8_t res[NRES];
	int diff = 0, err;
	size_t i;

	CHECK(pol);
	if (!k->fresh) {
		err = kcg_write(k, &reset);
		CHECK_MSG(!err, "resetting %s with 'a' in devices.allow: %s", k->path,
			  strerror(-err));
	}
	for (i = 0; i < n; i++) {
		struct devcg_error derr = { 0 };
		char text[64];
		int kret, dret;

		seq_count_effect(&stats, pol, &rules[i]);
		diff += check_parse(&rules[i], out);
		kret = kcg_write(k, &rules[i]);
		dret = devcg_policy_apply(pol, &rules[i], &derr);

		if (kret != dret) {
			kernel_text(&rules[i], text, sizeof(text));
			text_add(out, "    rule %zu \"%s\": kernel write %s, devcg_policy_apply %s%s%s\n",
				 i + 1, text, kret ? strerror(-kret) : "ok",
				 dret ? strerror(-dret) : "ok", dret ? ": " : "", dret ? derr.msg : "");
			diff++;
		}
	}
	diff += compare_list(k, pol, out);
	kcg_probe(k, res);
	diff += compare_probes(res, pol, out);
	stats.deny_end += !devcg_policy_default_allow(pol);
	if (devcg_policy_count(pol) > stats.most_exceptions)
		stats.most_exceptions = devcg_policy_count(pol);
	for (i = 0; i < NRES; i++) {
		stats.probes_denied += res[i] == EPERM;
		stats.probes_allowed += res[i] != EPERM;
	}
	devcg_policy_free(pol);
	return diff;
}

/* Drop rules one at a time while the sequence still shows a difference. */
static size_t shrink(struct kcg *k, struct devcg_rule *rules, size_t n)
{
	bool progress = true;

	while (progress && n > 1) {
		size_t i;

		progress = false;
		for (i = 0; i < n; i++) {
			struct devcg_rule tryit[MAX_SEQ];
			struct text scratch = { 0 };
			int diff;

			memcpy(tryit, rules, i * sizeof(*rules));
			memcpy(tryit + i, rules + i + 1, (n - i - 1) * sizeof(*rules));
			diff = run_sequence(k, tryit, n - 1, &scratch);
			free(scratch.s);
			if (diff) {
				memcpy(rules, tryit, (n - 1) * sizeof(*rules));
				n--;
				progress = true;
				break;
			}
		}
	}
	return n;
}

/* ---- the tests ------------------------------------------------------------------ */

static void need_v1(void)
{
	if (!scratch_devices_root())
		SKIP("no cgroup v1 hierarchy with the devices controller in /proc/self/mountinfo");
	if (geteuid())
		SKIP("writing devices.allow/devices.deny needs root");
}

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : dflt;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Record the outcome of every probe in a fresh cgroup (allow all). */
static void record_baseline(const char *dir)
{
	struct kcg k;

	int i;

	kcg_open(&k, dir);
	kcg_probe(&k, baseline);
	kcg_close(&k);
	for (i = 0; i < NRES; i++)
		CHECK_MSG(baseline[i] != EPERM, "%s %s: EPERM with everything allowed",
			  probe_name[i % NPROBE], devs[i / NPROBE].name);
}

TEST(v1_fresh_cgroup_refuses_no_probe_and_devcg_allows_all)
{
	struct devcg_policy *pol;
	struct text out = { 0 };
	char dir[PATH_MAX];
	uint8_t res[NRES];
	struct kcg k;
	int i;

	need_v1();
	make_devdir(dir, sizeof(dir));
	kcg_open(&k, dir);
	kcg_probe(&k, res);
	memcpy(baseline, res, sizeof(res));
	pol = devcg_policy_new();
	CHECK(pol);
	CHECK_INT(compare_list(&k, pol, &out), 0);
	CHECK_INT(compare_probes(res, pol, &out), 0);
	kcg_close(&k);
	for (i = 0; i < NRES; i++)
		CHECK_MSG(res[i] != EPERM, "%s %s: EPERM with everything allowed",
			  probe_name[i % NPROBE], devs[i / NPROBE].name);
	/* the node like /dev/null really opens, and access() says yes */
	for (i = 0; i < NDEV; i++)
		if (devs[i].type == DEVCG_CHAR && devs[i].major == 1 && devs[i].minor == 3) {
			CHECK_STR(err_name(res[i * NPROBE + P_OPEN_RW]), "success");
			CHECK_STR(err_name(res[i * NPROBE + P_MKNOD]), "success");
			CHECK_STR(err_name(res[i * NPROBE + P_F_OK]), "success");
		}
	devcg_policy_free(pol);
	scratch_devdir_remove(dir);
}

TEST(v1_deny_all_refuses_every_probe_with_eperm_and_devcg_agrees)
{
	static const struct devcg_rule deny_all = { DEVCG_VERB_DENY, DEVCG_ALL, DEVCG_ACC_ALL,
						    DEVCG_ANY, DEVCG_ANY };
	struct text out = { 0 };
	char dir[PATH_MAX], list[64];
	uint8_t res[NRES];
	struct kcg k;
	int i, diff;

	need_v1();
	make_devdir(dir, sizeof(dir));
	record_baseline(dir);
	kcg_open(&k, dir);
	diff = run_sequence(&k, &deny_all, 1, &out);
	CHECK_MSG(!diff, "differences:\n%s", out.s);
	CHECK_INT(scratch_cgroup_read(k.path, "devices.list", list, sizeof(list)), 0);
	kcg_probe(&k, res);
	kcg_close(&k);
	for (i = 0; i < NRES; i++)
		CHECK_MSG(res[i] == EPERM, "%s %s: %s after 'a' in devices.deny",
			  probe_name[i % NPROBE], devs[i / NPROBE].name, err_name(res[i]));
	scratch_devdir_remove(dir);
}

/*
 * After "a" deny, "c 1:3 rw" and "c 1:5 m" allowed: the null node opens for
 * reading and writing and takes a write, but mknod of it is refused; c 1:5
 * can be made but not opened, yet access(F_OK) passes for it, as for c 1:3,
 * because an exception covers it (F_OK asks with no access bits); every
 * other device is refused everything.
 */
static int null_write(void *arg)
{
	const char *dir = arg;
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/c-1-3", dir);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return 1;
	close(fd);
	snprintf(path, sizeof(path), "%s/c-1-5", dir);
	if (open(path, O_RDONLY | O_CLOEXEC) >= 0 || errno != EPERM)
		return 2;
	return 0;
}

TEST(v1_allowed_exception_opens_the_device_and_f_ok_sees_any_exception)
{
	const struct devcg_rule rules[] = {
		{ DEVCG_VERB_DENY, DEVCG_ALL, DEVCG_ACC_ALL, DEVCG_ANY, DEVCG_ANY },
		{ DEVCG_VERB_ALLOW, DEVCG_CHAR, DEVCG_ACC_READ | DEVCG_ACC_WRITE, 1, 3 },
		{ DEVCG_VERB_ALLOW, DEVCG_CHAR, DEVCG_ACC_MKNOD, 1, 5 },
	};
	struct text out = { 0 };
	char dir[PATH_MAX];
	uint8_t res[NRES];
	struct kcg k;
	int i, diff;

	need_v1();
	make_devdir(dir, sizeof(dir));
	record_baseline(dir);
	kcg_open(&k, dir);
	diff = run_sequence(&k, rules, 3, &out);
	CHECK_MSG(!diff, "differences:\n%s", out.s);
	kcg_probe(&k, res);
	CHECK_INT(scratch_run(k.path, null_write, dir), 0);
	kcg_close(&k);
	for (i = 0; i < NDEV; i++) {
		const uint8_t *r = &res[i * NPROBE];
		bool null = devs[i].type == DEVCG_CHAR && devs[i].major == 1 && devs[i].minor == 3;
		bool zero = devs[i].type == DEVCG_CHAR && devs[i].major == 1 && devs[i].minor == 5;

		CHECK_STR(err_name(r[P_OPEN_RW]), err_name(null ? 0 : EPERM));
		CHECK_STR(err_name(r[P_MKNOD]), err_name(zero ? 0 : EPERM));
		CHECK_STR(err_name(r[P_F_OK]), err_name(null || zero ? 0 : EPERM));
		CHECK_STR(err_name(r[P_R_OK]), err_name(null ? 0 : EPERM));
	}
	scratch_devdir_remove(dir);
}

TEST(v1_kernel_decisions_and_devices_list_match_devcg_for_random_rule_sequences)
{
	unsigned long nseq = env_ulong("DEVCG_V1_SEQUENCES", 20000);
	unsigned long batch = env_ulong("DEVCG_V1_BATCH", 4), s, bad = 0, rules_total = 0, fresh_runs = 0;
	struct devcg_rule first_bad[MAX_SEQ];
	size_t first_bad_n = 0;
	struct text report = { 0 };
	char dir[PATH_MAX];
	double t0 = now();
	struct kcg k;

	need_v1();
	rng_state = env_ulong("DEVCG_V1_SEED", 0x5eed1e55);
	make_devdir(dir, sizeof(dir));
	record_baseline(dir);
	/* a fresh cgroup every BATCH sequences; the others start with a reset */
	for (s = 0; s < nseq; s++) {
		struct devcg_rule rules[MAX_SEQ];
		size_t n = random_sequence(rules);
		struct text out = { 0 };
		bool fresh;
		int diff;

		if (s % batch == 0) {
			if (s)
				kcg_close(&k);
			kcg_open(&k, dir);
		}
		fresh = k.fresh;
		fresh_runs += fresh;
		rules_total += n;
		diff = run_sequence(&k, rules, n, &out);
		if (diff) {
			if (!bad) {
				memcpy(first_bad, rules, n * sizeof(*rules));
				first_bad_n = n;
			}
			if (bad < 10) {
				text_add(&report, "  sequence %lu (%s cgroup), %d differences:\n", s,
					 fresh ? "fresh" : "reset", diff);
				text_add_sequence(&report, rules, n);
				text_add(&report, "%s", out.s);
			}
			bad++;
		}
		free(out.s);
	}
	printf("    %lu sequences (%lu from a fresh cgroup, %lu ending with default deny), %lu rules,"
	       " %.1f s\n", nseq, fresh_runs, stats.deny_end, rules_total, now() - t0);
	printf("    rules: %lu 'a' resets, %lu merges, %lu partial and %lu whole exact-key removals;"
	       " up to %lu exceptions\n", stats.resets, stats.merges, stats.partial_removals,
	       stats.removals, stats.most_exceptions);
	printf("    probes: %lu refused, %lu allowed\n", stats.probes_denied, stats.probes_allowed);
	if (bad) {
		struct text out = { 0 };

		first_bad_n = shrink(&k, first_bad, first_bad_n);
		run_sequence(&k, first_bad, first_bad_n, &out);
		text_add(&report, "  smallest sequence found from the first one:\n");
		text_add_sequence(&report, first_bad, first_bad_n);
		text_add(&report, "%s", out.s ? out.s : "");
		free(out.s);
	}
	kcg_close(&k);
	scratch_devdir_remove(dir);
	CHECK_MSG(!bad, "%lu of %lu sequences differ between the kernel and devcg:\n%s", bad, nseq,
		  report.s);
	free(report.s);
}

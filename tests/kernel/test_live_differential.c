// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Live differential test (issue "Atomic replace"): the kernel's cgroup v1
 * devices controller against devcg's filter on cgroup v2.
 *
 * The same random rule sequences (probe.h: fixed seed, 4 majors x 4 minors
 * plus '*', so wildcards, merges, partial denies, exact-key removals and 'a'
 * resets all occur) are
 *  (1) written to devices.allow / devices.deny of a fresh v1 scratch cgroup
 *      (a new one for every sequence), and
 *  (2) applied to a devcg policy with devcg_policy_apply() and installed
 *      with devcg_replace() on one cgroup v2 scratch cgroup, each sequence's
 *      program swapping out the previous one (the first is a first install).
 * Then a prober in each cgroup runs every probe of probe.h (open O_RDONLY,
 * O_WRONLY, O_RDWR, mknod, access F_OK, R_OK, W_OK, R_OK|W_OK) on 32 char
 * and block nodes, and the two kernels' answers must be the same byte for
 * byte (success or the same errno), for every probe.
 *
 * On a hybrid host both controllers judge every task, so each prober is
 * neutral on the other hierarchy: the v1 prober also sits in a cgroup2
 * scratch cgroup on which no device program runs (checked with
 * BPF_F_QUERY_EFFECTIVE), and the v2 prober in a fresh v1 scratch cgroup,
 * a child of the v1 root, whose devices.list is "a *:* rwm". Where each
 * prober is is read back from /proc/PID/cgroup.
 *
 * Environment: DEVCG_LIVE_SECONDS (default 30) bounds the loop,
 * DEVCG_LIVE_SEQUENCES (default 0: no bound) caps it, DEVCG_LIVE_SEED
 * (default 0x11feface) picks the sequences; sequence number K of a seed is
 * always the same.
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
#include <bpf/bpf.h>

/* ---- where things are ------------------------------------------------------ */

static void need_root_and_v2(void)
{
	if (geteuid())
		SKIP("needs root (devcg_replace loads and attaches BPF programs; cgroup writes)");
	if (!scratch_cgroup2_root())
		SKIP("no cgroup2 mount in /proc/self/mountinfo");
}

static void need_both(void)
{
	need_root_and_v2();
	if (!scratch_devices_root())
		SKIP("no cgroup v1 hierarchy with the devices controller in /proc/self/mountinfo "
		     "(pure cgroup v2 host): nothing to compare with");
}

/* The device programs attached to CG itself (EFFECTIVE false) or that run
 * for it (EFFECTIVE true: its own and those inherited from ancestors). */
static uint32_t device_progs(const char *cg, bool effective, uint32_t ids[64])
{
	__u32 cnt = 64, flags = 0;
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK_MSG(fd >= 0, "open %s: %s", cg, strerror(errno));
	CHECK_MSG(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, effective ? BPF_F_QUERY_EFFECTIVE : 0,
				  &flags, ids, &cnt),
		  "querying the device programs of %s: %s", cg, strerror(errno));
	close(fd);
	return cnt;
}

/* CG relative to the mount point ROOT of its hierarchy, as /proc/PID/cgroup shows it. */
static const char *relative(const char *cg, const char *root)
{
	size_t n = strlen(root);

	return n > 1 ? cg + n : cg;
}

/* The cgroup of PID on the v1 devices hierarchy (DEVICES) or on cgroup2. */
static void proc_cgroup(pid_t pid, bool devices, char *out, size_t size)
{
	char path[64], line[PATH_MAX + 64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	CHECK_MSG(f, "open %s: %s", path, strerror(errno));
	out[0] = 0;
	while (fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *cg = ctrl ? strchr(ctrl + 1, ':') : NULL, *tok,
		     *save = NULL;
		bool match = false;

		if (!cg)
			continue;
		*cg++ = 0;
		cg[strcspn(cg, "\n")] = 0;
		*ctrl++ = 0;
		if (!devices) {
			match = !strcmp(line, "0") && !*ctrl;
		} else {
			for (tok = strtok_r(ctrl, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
				match |= !strcmp(tok, "devices");
		}
		if (match)
			snprintf(out, size, "%s", cg);
	}
	fclose(f);
}

static void check_in(const struct prober *p, const char *cg, bool devices)
{
	const char *root = devices ? scratch_devices_root() : scratch_cgroup2_root();
	char got[PATH_MAX];

	proc_cgroup(p->pid, devices, got, sizeof(got));
	CHECK_MSG(!strcmp(got, relative(cg, root)),
		  "the prober %d is in \"%s\" on the %s hierarchy, expected \"%s\"", (int)p->pid,
		  got, devices ? "v1 devices" : "cgroup2", relative(cg, root));
}

/* A v1 devices cgroup that allows everything: a fresh child of the v1 root. */
static void make_neutral_v1(char *cg, size_t size)
{
	char list[256];
	int err = scratch_cgroup_create(scratch_devices_root(), cg, size);

	CHECK_MSG(!err, "scratch_cgroup_create (v1): %s", strerror(-err));
	CHECK(scratch_cgroup_read(cg, "devices.list", list, sizeof(list)) >= 0);
	CHECK_MSG(!strcmp(list, "a *:* rwm\n"), "a new v1 devices cgroup lists \"%s\"", list);
}

/* A cgroup2 cgroup on which no device program runs. */
static void make_neutral_v2(char *cg, size_t size)
{
	uint32_t ids[64], n;
	int err = scratch_cgroup_create(scratch_cgroup2_root(), cg, size);

	CHECK_MSG(!err, "scratch_cgroup_create (cgroup2): %s", strerror(-err));
	n = device_progs(cg, true, ids);
	if (n)
		SKIP("device program %u (of %u) runs for every new cgroup2 cgroup here (attached at "
		     "the cgroup2 root): no neutral cgroup2 cgroup for the comparison", ids[0], n);
}

/* ---- the two sides ------------------------------------------------------- */

struct live {
	char dir[PATH_MAX];
	char neutral_v1[PATH_MAX], neutral_v2[PATH_MAX];
	char v1cg[PATH_MAX]; /* the v1 prober's current cgroup */
	bool v1_used;        /* rules were written to it */
	char v2cg[PATH_MAX];
	struct prober p1, p2;
	uint32_t prog_id; /* attached to v2cg; 0 before the first install */
	uint8_t baseline[NRES];
	/* what happened */
	unsigned long v1_cgroups, installs, swaps, refused_writes;
	double replace_s, probe_s, v1_s;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Compare two probe runs: the differences, listed in OUT. */
static int compare(const uint8_t a[NRES], const char *an, const uint8_t b[NRES], const char *bn,
		   const struct devcg_policy *pol, struct text *out)
{
	int i, diff = 0;

	for (i = 0; i < NRES; i++) {
		const struct dev *d = &devs[i / NPROBE];
		int want;

		if (a[i] == b[i])
			continue;
		diff++;
		if (!out)
			continue;
		text_add(out, "    %s %s: %s %s, %s %s", d->name, probe_name[i % NPROBE], an,
			 err_name(a[i]), bn, err_name(b[i]));
		if (pol) {
			want = devcg_policy_check(pol, d->type, d->major, d->minor,
						  probe_access[i % NPROBE], NULL, NULL);
			text_add(out, "; devcg's model: %s", want == 1 ? "allow" : want ? "error" : "deny");
		}
		text_add(out, "\n");
	}
	return diff;
}

static void live_setup(struct live *L)
{
	uint32_t ids[64];
	int err;

	memset(L, 0, sizeof(*L));
	make_devdir(L->dir, sizeof(L->dir));
	make_neutral_v1(L->neutral_v1, sizeof(L->neutral_v1));
	make_neutral_v2(L->neutral_v2, sizeof(L->neutral_v2));
	err = scratch_cgroup_create(scratch_cgroup2_root(), L->v2cg, sizeof(L->v2cg));
	CHECK_MSG(!err, "scratch_cgroup_create (cgroup2): %s", strerror(-err));
	CHECK_INT(device_progs(L->v2cg, true, ids), 0);
	err = scratch_cgroup_create(scratch_devices_root(), L->v1cg, sizeof(L->v1cg));
	CHECK_MSG(!err, "scratch_cgroup_create (v1): %s", strerror(-err));
	L->v1_cgroups = 1;

	prober_start(&L->p1, L->v1cg, L->dir);
	err = prober_join(&L->p1, L->neutral_v2);
	CHECK_MSG(!err, "moving the v1 prober to %s: %s", L->neutral_v2, strerror(-err));
	prober_start(&L->p2, L->v2cg, L->dir);
	err = prober_join(&L->p2, L->neutral_v1);
	CHECK_MSG(!err, "moving the v2 prober to %s: %s", L->neutral_v1, strerror(-err));
	check_in(&L->p1, L->v1cg, true);
	check_in(&L->p1, L->neutral_v2, false);
	check_in(&L->p2, L->neutral_v1, true);
	check_in(&L->p2, L->v2cg, false);
}

/* Nothing restricted yet: both probers see the same, and no EPERM. */
static void live_baseline(struct live *L)
{
	struct text out = { 0 };
	uint8_t r2[NRES];
	int i;

	prober_probe(&L->p1, L->baseline);
	prober_probe(&L->p2, r2);
	CHECK_MSG(!compare(L->baseline, "v1", r2, "v2", NULL, &out),
		  "with nothing restricted the probers differ:\n%s", out.s);
	for (i = 0; i < NRES; i++)
		CHECK_MSG(L->baseline[i] != EPERM, "%s %s: EPERM with everything allowed",
			  devs[i / NPROBE].name, probe_name[i % NPROBE]);
}

static void live_teardown(struct live *L)
{
	int s1 = prober_stop(&L->p1), s2 = prober_stop(&L->p2);

	CHECK_MSG(!s1 && !s2, "probers exited with %d and %d", s1, s2);
	CHECK_INT(scratch_cgroup_remove(L->v1cg), 0);
	CHECK_INT(scratch_cgroup_remove(L->v2cg), 0);
	CHECK_INT(scratch_cgroup_remove(L->neutral_v1), 0);
	CHECK_INT(scratch_cgroup_remove(L->neutral_v2), 0);
	CHECK_INT(scratch_devdir_remove(L->dir), 0);
}

/* Give the v1 prober a fresh v1 cgroup (the first one is fresh already). */
static void fresh_v1(struct live *L)
{
	char next[PATH_MAX];
	int err;

	if (!L->v1_used) {
		L->v1_used = true;
		return;
	}
	err = scratch_cgroup_create(scratch_devices_root(), next, sizeof(next));
	CHECK_MSG(!err, "scratch_cgroup_create (v1): %s", strerror(-err));
	err = prober_join(&L->p1, next);
	CHECK_MSG(!err, "moving the v1 prober to %s: %s", next, strerror(-err));
	err = scratch_cgroup_remove(L->v1cg);
	CHECK_MSG(!err, "scratch_cgroup_remove %s: %s", L->v1cg, strerror(-err));
	memcpy(L->v1cg, next, sizeof(next));
	L->v1_cgroups++;
}

static int write_rule(int allow_fd, int deny_fd, const struct devcg_rule *r)
{
	char text[64];
	size_t len;
	ssize_t w;

	kernel_text(r, text, sizeof(text));
	len = strlen(text);
	w = write(r->verb == DEVCG_VERB_ALLOW ? allow_fd : deny_fd, text, len);
	return w < 0 ? -errno : (size_t)w == len ? 0 : -EIO;
}

/*
 * Run one sequence on both sides and compare: the number of differences
 * (listed in OUT). ST, when not NULL, counts the coverage.
 */
static int live_run(struct live *L, const struct devcg_rule *rules, size_t n, struct text *out,
		    struct seq_stats *st)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_policy *pol = devcg_policy_new();
	struct devcg_error derr = { 0 };
	uint8_t r1[NRES], r2[NRES];
	char file[PATH_MAX + 32];
	uint32_t ids[64];
	int allow_fd, deny_fd, diff = 0, ret, i;
	double t;

	CHECK(pol);
	/* (1) the v1 controller */
	t = now();
	fresh_v1(L);
	snprintf(file, sizeof(file), "%s/devices.allow", L->v1cg);
	allow_fd = open(file, O_WRONLY | O_CLOEXEC);
	snprintf(file, sizeof(file), "%s/devices.deny", L->v1cg);
	deny_fd = open(file, O_WRONLY | O_CLOEXEC);
	CHECK_MSG(allow_fd >= 0 && deny_fd >= 0, "open devices.allow/deny of %s: %s", L->v1cg,
		  strerror(errno));
	for (size_t k = 0; k < n; k++) {
		int kret, dret;

		if (st)
			seq_count_effect(st, pol, &rules[k]);
		kret = write_rule(allow_fd, deny_fd, &rules[k]);
		dret = devcg_policy_apply(pol, &rules[k], &derr);
		L->refused_writes += kret != 0;
		if (kret != dret) {
			char text[64];

			kernel_text(&rules[k], text, sizeof(text));
			text_add(out, "    rule %zu \"%s\": v1 write %s, devcg_policy_apply %s%s%s\n",
				 k + 1, text, kret ? strerror(-kret) : "ok",
				 dret ? strerror(-dret) : "ok", dret ? ": " : "", dret ? derr.msg : "");
			diff++;
		}
	}
	close(allow_fd);
	close(deny_fd);
	L->v1_s += now() - t;

	/* (2) devcg on cgroup v2 */
	t = now();
	ret = devcg_replace(L->v2cg, pol, &o, &derr);
	L->replace_s += now() - t;
	if (ret) {
		text_add(out, "    devcg_replace: %s\n", derr.msg);
		devcg_policy_free(pol);
		return diff + 1;
	}
	if (o.replaced_id != L->prog_id) {
		text_add(out, "    devcg_replace replaced program %u, expected %u\n", o.replaced_id,
			 L->prog_id);
		diff++;
	}
	L->installs += !L->prog_id;
	L->swaps += L->prog_id != 0;
	L->prog_id = o.prog_id;
	if (device_progs(L->v2cg, true, ids) != 1 || ids[0] != o.prog_id) {
		text_add(out, "    after devcg_replace, program %u is not the one device program "
			      "running for %s\n", o.prog_id, L->v2cg);
		diff++;
	}

	/* (3) probe both and compare */
	t = now();
	prober_probe(&L->p1, r1);
	prober_probe(&L->p2, r2);
	L->probe_s += now() - t;
	diff += compare(r1, "v1", r2, "v2", pol, out);
	/* an allowed probe must have its outcome under allow-all (see probe.h) */
	for (i = 0; i < NRES; i++)
		if (r1[i] != EPERM && r1[i] != L->baseline[i]) {
			text_add(out, "    %s %s: v1 gave %s, neither EPERM nor %s as with allow-all\n",
				 devs[i / NPROBE].name, probe_name[i % NPROBE], err_name(r1[i]),
				 err_name(L->baseline[i]));
			diff++;
		}
	if (st) {
		st->deny_end += !devcg_policy_default_allow(pol);
		if (devcg_policy_count(pol) > st->most_exceptions)
			st->most_exceptions = devcg_policy_count(pol);
		for (i = 0; i < NRES; i++) {
			st->probes_denied += r1[i] == EPERM;
			st->probes_allowed += r1[i] != EPERM;
		}
	}
	devcg_policy_free(pol);
	return diff;
}

/* Drop rules one at a time while the sequence still shows a difference. */
static size_t shrink(struct live *L, struct devcg_rule *rules, size_t n)
{
	bool progress = true;

	while (progress && n > 0) {
		progress = false;
		for (size_t i = 0; i < n; i++) {
			struct devcg_rule tryit[MAX_SEQ];
			struct text scratch = { 0 };
			int diff;

			memcpy(tryit, rules, i * sizeof(*rules));
			memcpy(tryit + i, rules + i + 1, (n - i - 1) * sizeof(*rules));
			diff = live_run(L, tryit, n - 1, &scratch, NULL);
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

static unsigned long env_ulong(const char *name, unsigned long dflt)
{
	const char *s = getenv(name);

	return s && *s ? strtoul(s, NULL, 0) : dflt;
}

/* ---- the tests ------------------------------------------------------------- */

TEST(live_v2_filter_from_devcg_answers_every_probe_as_the_v1_controller_for_random_rule_sequences)
{
	double seconds = (double)env_ulong("DEVCG_LIVE_SECONDS", 30);
	unsigned long max_seq = env_ulong("DEVCG_LIVE_SEQUENCES", 0), seed, s, bad = 0,
		      rules_total = 0;
	struct devcg_rule first_bad[MAX_SEQ];
	size_t first_bad_n = 0;
	struct seq_stats st = { 0 };
	struct text report = { 0 };
	struct live L;
	double t0;

	need_both();
	seed = env_ulong("DEVCG_LIVE_SEED", 0x11feface);
	rng_state = seed;
	live_setup(&L);
	live_baseline(&L);
	t0 = now();
	for (s = 0; (!max_seq || s < max_seq) && (max_seq || now() - t0 < seconds); s++) {
		struct devcg_rule rules[MAX_SEQ];
		size_t n = random_sequence(rules);
		struct text out = { 0 };
		int diff;

		rules_total += n;
		diff = live_run(&L, rules, n, &out, &st);
		if (diff) {
			if (!bad) {
				memcpy(first_bad, rules, n * sizeof(*rules));
				first_bad_n = n;
			}
			if (bad < 5) {
				text_add(&report, "  sequence %lu, %d differences:\n", s, diff);
				text_add_sequence(&report, rules, n);
				text_add(&report, "%s", out.s);
			}
			bad++;
		}
		free(out.s);
	}
	printf("    seed %#lx: %lu sequences, %lu rules (%lu refused by the v1 kernel), %.1f s\n", seed, s,
	       rules_total, L.refused_writes, now() - t0);
	printf("    v1: %lu fresh cgroups, %.2f ms per sequence; v2: %lu first install + %lu swaps "
	       "on one cgroup, devcg_replace %.2f ms each\n", L.v1_cgroups,
	       s ? 1e3 * L.v1_s / (double)s : 0.0, L.installs, L.swaps,
	       s ? 1e3 * L.replace_s / (double)s : 0.0);
	printf("    rules: %lu 'a' resets, %lu with a wildcard, %lu merges, %lu partial and %lu whole "
	       "exact-key removals; %lu sequences end with default deny, up to %lu exceptions\n",
	       st.resets, st.wildcards, st.merges, st.partial_removals, st.removals, st.deny_end,
	       st.most_exceptions);
	printf("    probes: %lu per side (%d per sequence, %.2f ms for both sides), %lu refused "
	       "and %lu allowed by v1; %lu sequences differ\n", s * NRES, NRES,
	       s ? 1e3 * L.probe_s / (double)s : 0.0, st.probes_denied, st.probes_allowed, bad);
	if (bad) {
		struct text out = { 0 };

		first_bad_n = shrink(&L, first_bad, first_bad_n);
		live_run(&L, first_bad, first_bad_n, &out, NULL);
		text_add(&report, "  smallest sequence found from the first one:\n");
		text_add_sequence(&report, first_bad, first_bad_n);
		text_add(&report, "%s", out.s ? out.s : "    (no longer differs when rerun)\n");
		free(out.s);
	}
	live_teardown(&L);
	CHECK_MSG(!bad, "%lu of %lu sequences differ between the v1 controller and devcg's v2 "
		  "filter (seed %#lx):\n%s", bad, s, seed, report.s);
	free(report.s);
	/* the sequences did exercise what they are meant to */
	CHECK_MSG(max_seq || s >= 1000, "only %lu sequences in %.0f s", s, seconds);
	if (s >= 1000) {
		CHECK(st.resets && st.wildcards && st.merges && st.partial_removals && st.removals);
		CHECK(st.deny_end && st.deny_end < s);
		CHECK(st.probes_denied && st.probes_allowed);
	}
	CHECK(L.installs == 1 && L.swaps == s - 1);
}

/* The v2 prober alone, neutral on v1 when v1 devices is mounted. */
static void v2_prober(struct prober *p, char *cg, size_t cg_size, char *neutral,
		      size_t neutral_size, const char *dir)
{
	int err = scratch_cgroup_create(scratch_cgroup2_root(), cg, cg_size);
	uint32_t ids[64];

	CHECK_MSG(!err, "scratch_cgroup_create (cgroup2): %s", strerror(-err));
	if (device_progs(cg, true, ids))
		SKIP("device program %u runs for every new cgroup2 cgroup here", ids[0]);
	prober_start(p, cg, dir);
	check_in(p, cg, false);
	neutral[0] = 0;
	if (scratch_devices_root()) {
		make_neutral_v1(neutral, neutral_size);
		err = prober_join(p, neutral);
		CHECK_MSG(!err, "moving the prober to %s: %s", neutral, strerror(-err));
		check_in(p, neutral, true);
	}
}

/*
 * The negative control: "deny a" then "allow c 1:3 rw" installed with
 * devcg_replace() refuses, through the v2 prober, every probe of every other
 * device (EPERM), and mknod of c 1:3 (no m); it allows opening c 1:3 (the
 * null device) for reading and writing and access() to it. Before the
 * install and after devcg_reset() the same prober is refused nothing, so
 * the refusals are the filter's.
 */
TEST(live_v2_deny_all_plus_one_allow_refuses_every_other_device_and_allows_the_allowed_one)
{
	static const struct devcg_rule rules[] = {
		{ DEVCG_VERB_DENY, DEVCG_ALL, DEVCG_ACC_ALL, DEVCG_ANY, DEVCG_ANY },
		{ DEVCG_VERB_ALLOW, DEVCG_CHAR, DEVCG_ACC_READ | DEVCG_ACC_WRITE, 1, 3 },
	};
	DEVCG_OPTS(devcg_replace_opts, o);
	char dir[PATH_MAX], cg[PATH_MAX], neutral[PATH_MAX];
	struct devcg_policy *pol;
	struct devcg_error err = { 0 };
	uint8_t before[NRES], res[NRES], after[NRES];
	struct prober p;
	uint32_t ids[64];
	int i, denied = 0;

	need_root_and_v2();
	make_devdir(dir, sizeof(dir));
	v2_prober(&p, cg, sizeof(cg), neutral, sizeof(neutral), dir);
	pol = devcg_policy_new();
	CHECK(pol);
	for (i = 0; i < 2; i++)
		CHECK_MSG(!devcg_policy_apply(pol, &rules[i], &err), "%s", err.msg);

	prober_probe(&p, before);
	CHECK_MSG(!devcg_replace(cg, pol, &o, &err), "devcg_replace: %s", err.msg);
	CHECK_INT(device_progs(cg, true, ids), 1);
	CHECK_INT(ids[0], o.prog_id);
	prober_probe(&p, res);
	CHECK_MSG(devcg_reset(cg, &err) == 1, "devcg_reset: %s", err.msg);
	CHECK_INT(device_progs(cg, true, ids), 0);
	prober_probe(&p, after);

	for (i = 0; i < NRES; i++) {
		const struct dev *d = &devs[i / NPROBE];
		int probe = i % NPROBE;
		bool null = d->type == DEVCG_CHAR && d->major == 1 && d->minor == 3;
		bool allowed = null && probe != P_MKNOD;

		CHECK_MSG(before[i] != EPERM && after[i] == before[i],
			  "%s %s without a filter: %s before, %s after devcg_reset", d->name,
			  probe_name[probe], err_name(before[i]), err_name(after[i]));
		CHECK_MSG(res[i] == (allowed ? before[i] : EPERM), "%s %s under the filter: %s, "
			  "expected %s", d->name, probe_name[probe], err_name(res[i]),
			  err_name(allowed ? before[i] : EPERM));
		denied += res[i] == EPERM;
	}
	/* the allowed device really opens, the others really were refused */
	for (i = 0; i < NDEV; i++)
		if (devs[i].type == DEVCG_CHAR && devs[i].major == 1 && devs[i].minor == 3) {
			CHECK_STR(err_name(res[i * NPROBE + P_OPEN_RW]), "success");
			CHECK_STR(err_name(res[i * NPROBE + P_F_OK]), "success");
			CHECK_STR(err_name(res[i * NPROBE + P_MKNOD]), err_name(EPERM));
		}
	CHECK_INT(denied, NRES - (NPROBE - 1));
	CHECK_INT(prober_stop(&p), 0);
	devcg_policy_free(pol);
	CHECK_INT(scratch_cgroup_remove(cg), 0);
	if (neutral[0])
		CHECK_INT(scratch_cgroup_remove(neutral), 0);
	CHECK_INT(scratch_devdir_remove(dir), 0);
}

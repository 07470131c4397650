// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Revocation correlation on synthetic events (no kernel needed): programs
 * and cgroup paths come from tables here instead of the kernel. */
#include "harness.h"
#include "trace.h"

#include <fcntl.h>
#include <string.h>
#include <linux/bpf.h>

#define MS 1000000ull

/* ---- the world the events happen in -------------------------------------- */

struct fake_prog {
	uint32_t id;
	int owner;
	const char *policy; /* rules of a devcg filter */
};

static const struct fake_prog progs[] = {
	{ 1, DEVCG_PROG_DEVCG, "deny a\nallow c 1:3 rw\nallow c 240:0 rw\n" },
	{ 2, DEVCG_PROG_FOREIGN, NULL },
	{ 3, DEVCG_PROG_FOREIGN, NULL },
	{ 4, DEVCG_PROG_FOREIGN, NULL },
	{ 5, DEVCG_PROG_DEVCG, "deny a\nallow c 1:3 rw\n" }, /* narrower, by devcg */
	{ 6, DEVCG_PROG_UNKNOWN, NULL },                      /* freed before it was read */
	{ 7, DEVCG_PROG_DEVCG, "deny a\nallow c 1:3 rw\nallow c 240:0 r\n" },
};

enum { ROOT = 1, C = 100, CHILD = 101, OTHER = 102, P = 99, PC = 103, C_AGAIN = 104 };

static const struct { uint64_t id; const char *path; } paths[] = {
	{ ROOT, "/" }, { C, "/c" }, { CHILD, "/c/child" }, { OTHER, "/cc" },
	{ P, "/p" }, { PC, "/p/c" }, { C_AGAIN, "/c" }, /* C removed and made again */
};

static int fake_prog(void *ctx, uint32_t id, struct devcg_policy **policy)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct devcg_rules *rules;

		if (progs[i].id != id)
			continue;
		if (progs[i].owner != DEVCG_PROG_DEVCG)
			return progs[i].owner;
		rules = devcg_rules_new();
		*policy = devcg_policy_new();
		CHECK(!devcg_rules_parse(rules, progs[i].policy, strlen(progs[i].policy), "t", NULL, NULL));
		CHECK(!devcg_policy_apply_all(*policy, rules, NULL));
		devcg_rules_free(rules);
		return DEVCG_PROG_DEVCG;
	}
	return DEVCG_PROG_UNKNOWN;
}

static const char *fake_path(void *ctx, uint64_t id)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (paths[i].id == id)
			return paths[i].path;
	return NULL;
}

static struct devcg_revoke got[8];
static int ngot;

static void on_revoke(void *ctx, const struct devcg_revoke *rv)
{
	(void)ctx;
	if (ngot < 8)
		got[ngot] = *rv;
	ngot++;
}

static struct devcg_revokes *fresh(void)
{
	const struct devcg_revoke_source src = { .prog = fake_prog, .path = fake_path };

	ngot = 0;
	memset(got, 0, sizeof(got));
	return devcg_revokes_new(NULL, &src, on_revoke, NULL);
}

/* ---- events ----------------------------------------------------------------- */

static void change(struct devcg_revokes *r, uint64_t ts, uint32_t pid, const char *comm,
		   uint32_t cmd, uint64_t cgroup, uint32_t prog, uint32_t replaced, int64_t ret)
{
	struct devcg_trace_event e = { .type = DEVCG_EV_BPF_PROG_CHANGE, .ts_ns = ts, .ts_exit_ns = ts + 20000,
				       .pid = pid, .tid = pid, .ppid = 1, .ret = ret };

	snprintf(e.comm, sizeof(e.comm), "%s", comm);
	e.bpf.target = cgroup;
	e.bpf.cmd = cmd;
	e.bpf.attach_flags = BPF_F_ALLOW_MULTI | (replaced ? BPF_F_REPLACE : 0);
	e.bpf.prog_id = prog;
	e.bpf.replace_id = replaced;
	devcg_revokes_note(r, &e);
	devcg_revokes_feed(r, &e, 0, 0, 0, 0);
}

static void attach(struct devcg_revokes *r, uint64_t ts, uint32_t pid, const char *comm,
		   uint64_t cgroup, uint32_t prog)
{
	change(r, ts, pid, comm, DEVCG_CMD_PROG_ATTACH, cgroup, prog, 0, 0);
}

/* An open of c MAJOR:MINOR with FLAGS, refused with EPERM in CGROUP. */
static void refused(struct devcg_revokes *r, uint64_t ts, uint64_t cgroup, uint32_t pid,
		    uint32_t major, uint32_t minor, uint32_t flags)
{
	struct devcg_trace_event e = { .type = DEVCG_EV_OPEN_DENIED, .ts_ns = ts, .ts_exit_ns = ts,
				       .pid = pid, .tid = pid, .cgroup_id = cgroup, .ret = -1 };

	snprintf(e.comm, sizeof(e.comm), "reader");
	e.open.oflags = flags;
	e.open.dirfd = -100;
	snprintf(e.open.path, sizeof(e.open.path), "/dev/x");
	devcg_revokes_feed(r, &e, DEVCG_CHAR, major, minor, 0);
}

/* cgroup C holds devcg's filter 1 (c 1:3 and c 240:0 rw) when the trace begins */
static struct devcg_revokes *with_devcg_filter(void)
{
	struct devcg_revokes *r = fresh();

	devcg_revokes_seed(r, C, (const uint32_t[]){ 1 }, 1);
	return r;
}

/* ---- tests ------------------------------------------------------------------ */

TEST(revoke_names_a_foreign_attach_after_which_a_granted_device_is_refused)
{
	struct devcg_revokes *r = with_devcg_filter();

	attach(r, 10 * MS, 50, "narrower", C, 2);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY);
	refused(r, 12 * MS, C, 61, 240, 0, O_RDONLY);
	refused(r, 13 * MS, C, 60, 240, 0, O_RDONLY);
	CHECK_INT(ngot, 0); /* reported when the episode ends */
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	CHECK_STR(got[0].cgroup, "/c");
	CHECK_INT(got[0].cgroup_id, C);
	CHECK_INT(got[0].writer_pid, 50);
	CHECK_STR(got[0].writer_comm, "narrower");
	CHECK_INT(got[0].changes, 1);
	CHECK_INT(got[0].start_ns, 10 * MS);
	CHECK_INT(got[0].end_ns, 50 * MS);
	CHECK_INT(got[0].nbefore, 1);
	CHECK_INT(got[0].before[0].id, 1);
	CHECK_INT(got[0].before[0].owner, DEVCG_PROG_DEVCG);
	CHECK_INT(got[0].nafter, 2);
	CHECK_INT(got[0].after[1].id, 2);
	CHECK_INT(got[0].after[1].owner, DEVCG_PROG_FOREIGN);
	CHECK_INT(got[0].denied, 3);
	CHECK_INT(got[0].first_denied_ns, 11 * MS);
	CHECK_INT(got[0].last_denied_ns, 13 * MS);
	CHECK_INT(got[0].ndevices, 1);
	CHECK_INT(got[0].devices[0].type, DEVCG_CHAR);
	CHECK_INT(got[0].devices[0].major, 240);
	CHECK_INT(got[0].devices[0].minor, 0);
	CHECK_INT(got[0].devices[0].access, DEVCG_ACC_READ);
	CHECK_INT(got[0].devices[0].count, 3);
	CHECK_INT(got[0].nvictims, 2);
	CHECK_INT(got[0].victims[0].pid, 60);
	CHECK_STR(got[0].victims[0].comm, "reader");
	CHECK_INT(got[0].victims[1].pid, 61);
	CHECK(!got[0].lost);
	devcg_revokes_free(r);
}

TEST(revoke_is_not_reported_for_a_foreign_attach_that_refused_nothing)
{
	struct devcg_revokes *r = with_devcg_filter();

	attach(r, 10 * MS, 50, "allowall", C, 2);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 0);
	devcg_revokes_free(r);
}

TEST(revoke_leaves_out_refusals_devcg_own_policy_makes)
{
	struct devcg_revokes *r = with_devcg_filter();

	attach(r, 10 * MS, 50, "narrower", C, 2);
	refused(r, 11 * MS, C, 60, 1, 5, O_RDONLY);  /* c 1:5: not in devcg's policy */
	refused(r, 12 * MS, C, 60, 240, 0, O_RDWR);  /* granted rw: the other program's */
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	CHECK_INT(got[0].denied, 1);
	CHECK_INT(got[0].devices[0].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	devcg_revokes_free(r);
}

TEST(revoke_decides_with_the_access_the_open_flags_ask)
{
	struct devcg_revokes *r = fresh();

	/* devcg's filter 7 grants c 240:0 r only: a write open is its own refusal */
	devcg_revokes_seed(r, C, (const uint32_t[]){ 7 }, 1);
	attach(r, 10 * MS, 50, "narrower", C, 2);
	refused(r, 11 * MS, C, 60, 240, 0, O_WRONLY);
	refused(r, 12 * MS, C, 60, 240, 0, O_RDONLY | O_TRUNC);
	refused(r, 13 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	CHECK_INT(got[0].denied, 1);
	devcg_revokes_free(r);
}

TEST(open_access_reads_the_flags_as_the_kernel_does)
{
	CHECK_INT(devcg_open_access(O_RDONLY), DEVCG_ACC_READ);
	CHECK_INT(devcg_open_access(O_WRONLY), DEVCG_ACC_WRITE);
	CHECK_INT(devcg_open_access(O_RDWR), DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	CHECK_INT(devcg_open_access(O_ACCMODE), DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	CHECK_INT(devcg_open_access(O_RDONLY | O_TRUNC), DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	CHECK_INT(devcg_open_access(O_RDONLY | O_NONBLOCK | O_CLOEXEC), DEVCG_ACC_READ);
	CHECK_INT(devcg_open_access(O_PATH), 0);
}

/* C holds devcg's filter 1 and a narrow foreign program 2 from before the
 * trace; 2 refuses c 240:0, which 1 grants. */
static struct devcg_revokes *with_a_foreign_program_already(void)
{
	struct devcg_revokes *r = fresh();

	devcg_revokes_seed(r, C, (const uint32_t[]){ 1, 2 }, 2);
	return r;
}

TEST(revoke_is_not_named_for_a_devcg_filter_installed_by_any_process)
{
	struct devcg_revokes *r = with_a_foreign_program_already();

	/* a library user (not named devcg) swaps devcg's filter 1 for 7,
	 * which grants c 240:0 r too: program 2 keeps refusing it */
	change(r, 10 * MS, 70, "mytool", DEVCG_CMD_PROG_ATTACH, C, 7, 1, 0);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 0);
	devcg_revokes_free(r);
	/* control: the same from a foreign program is named */
	r = with_a_foreign_program_already();
	attach(r, 10 * MS, 70, "mytool", C, 3);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	devcg_revokes_free(r);
}

TEST(revoke_is_not_named_for_a_change_by_the_devcg_command)
{
	struct devcg_revokes *r = with_a_foreign_program_already();

	/* devcg itself, even with a program it cannot read back as its own
	 * (a filter of another devcg version reads as foreign) */
	attach(r, 20 * MS, 71, "devcg", C, 3);
	refused(r, 21 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 0);
	devcg_revokes_free(r);
}

TEST(revoke_counts_one_episode_for_an_attach_then_detach_by_one_writer)
{
	struct devcg_revokes *r = fresh();

	/* systemd's reload: attach the new program, detach the previous one */
	devcg_revokes_seed(r, C, (const uint32_t[]){ 1, 2 }, 2);
	attach(r, 10 * MS, 1, "systemd", C, 3);
	change(r, 10 * MS + 50000, 1, "systemd", DEVCG_CMD_PROG_DETACH, C, 2, 0, 0);
	refused(r, 20 * MS, C, 60, 240, 0, O_RDONLY);
	/* the next reload ends the first episode */
	attach(r, 1000 * MS, 1, "systemd", C, 4);
	change(r, 1000 * MS + 50000, 1, "systemd", DEVCG_CMD_PROG_DETACH, C, 3, 0, 0);
	CHECK_INT(ngot, 1);
	refused(r, 1010 * MS, C, 60, 240, 0, O_RDONLY);
	refused(r, 1020 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 2000 * MS);
	CHECK_INT(ngot, 2);
	CHECK_INT(got[0].changes, 2);
	CHECK_INT(got[0].denied, 1);
	CHECK_INT(got[0].nbefore, 2);
	CHECK_INT(got[0].nafter, 2);
	CHECK(got[0].after[0].id + got[0].after[1].id == 1 + 3);
	CHECK_INT(got[0].end_ns, 1000 * MS);
	CHECK_INT(got[1].changes, 2);
	CHECK_INT(got[1].denied, 2);
	CHECK(got[1].after[0].id + got[1].after[1].id == 1 + 4);
	devcg_revokes_free(r);
}

TEST(revoke_episode_takes_in_a_later_detach_by_its_writer)
{
	struct devcg_revokes *r = fresh();

	devcg_revokes_seed(r, C, (const uint32_t[]){ 1, 2 }, 2);
	attach(r, 10 * MS, 1, "systemd", C, 3);
	refused(r, 20 * MS, C, 60, 240, 0, O_RDONLY);
	/* its previous program goes half a second later (a slow machine) */
	change(r, 500 * MS, 1, "systemd", DEVCG_CMD_PROG_DETACH, C, 2, 0, 0);
	refused(r, 510 * MS, C, 60, 240, 0, O_RDONLY);
	CHECK_INT(ngot, 0);
	devcg_revokes_flush(r, 1000 * MS);
	CHECK_INT(ngot, 1);
	CHECK_INT(got[0].changes, 2);
	CHECK_INT(got[0].denied, 2);
	devcg_revokes_free(r);
}

/* A narrower program attached to C over devcg's filter and one refusal, then
 * at 20 ms devcg attaches its filter 7 (replacing REPLACED) to AGAIN, which
 * is C or C made again: the episode ends there, and a later refusal in AGAIN
 * is not attributed to it. */
static void check_episode_ends_when_devcg_attaches(uint64_t again, uint32_t replaced)
{
	struct devcg_revokes *r = with_devcg_filter();

	attach(r, 10 * MS, 50, "narrower", C, 2);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY);
	change(r, 20 * MS, 71, "devcg", DEVCG_CMD_PROG_ATTACH, again, 7, replaced, 0);
	CHECK_INT(ngot, 1);
	/* refused now by nothing foreign that changed: not attributed */
	refused(r, 21 * MS, again, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	CHECK_INT(got[0].denied, 1);
	CHECK_INT(got[0].end_ns, 20 * MS);
	devcg_revokes_free(r);
}

TEST(revoke_episode_ends_with_a_change_by_someone_else)
{
	/* devcg adopts the narrower program: replaced by its own filter */
	check_episode_ends_when_devcg_attaches(C, 2);
}

TEST(revoke_of_a_cgroup_takes_the_refusals_of_its_descendants_only)
{
	struct devcg_revokes *r = with_devcg_filter();

	attach(r, 10 * MS, 50, "narrower", C, 2);
	refused(r, 11 * MS, CHILD, 60, 240, 0, O_RDONLY);
	refused(r, 12 * MS, OTHER, 61, 240, 0, O_RDONLY); /* "/cc" is not below "/c" */
	refused(r, 13 * MS, ROOT, 62, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	CHECK_INT(got[0].denied, 1);
	CHECK_INT(got[0].victims[0].pid, 60);
	devcg_revokes_free(r);
}

TEST(revoke_needs_every_devcg_filter_on_the_path_to_allow)
{
	struct devcg_revokes *r = fresh();

	/* the parent's devcg filter refuses c 240:0 itself */
	devcg_revokes_seed(r, P, (const uint32_t[]){ 5 }, 1);
	devcg_revokes_seed(r, PC, (const uint32_t[]){ 1 }, 1);
	attach(r, 10 * MS, 50, "narrower", PC, 2);
	refused(r, 11 * MS, PC, 60, 240, 0, O_RDONLY);
	/* control: c 1:3, which both filters grant */
	refused(r, 12 * MS, PC, 60, 1, 3, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	CHECK_INT(got[0].denied, 1);
	CHECK_INT(got[0].devices[0].major, 1);
	devcg_revokes_free(r);
}

TEST(revoke_is_not_named_where_no_devcg_filter_states_the_intent)
{
	struct devcg_revokes *r = fresh();

	devcg_revokes_seed(r, C, (const uint32_t[]){ 3 }, 1);
	attach(r, 10 * MS, 50, "narrower", C, 2);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 0);
	devcg_revokes_free(r);
}

TEST(revoke_is_not_named_when_a_program_on_the_path_could_not_be_read)
{
	struct devcg_revokes *r = fresh();

	/* program 6 was freed before it was read: it may have been a devcg
	 * filter that refuses the device */
	devcg_revokes_seed(r, C, (const uint32_t[]){ 1, 6 }, 2);
	attach(r, 10 * MS, 50, "narrower", C, 2);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 0);
	devcg_revokes_free(r);
}

TEST(revoke_ignores_a_change_the_kernel_refused)
{
	struct devcg_revokes *r = with_devcg_filter();

	change(r, 10 * MS, 50, "narrower", DEVCG_CMD_PROG_ATTACH, C, 2, 0, -1);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 0);
	devcg_revokes_free(r);
}

TEST(revoke_names_a_link_update_to_a_foreign_program)
{
	struct devcg_revokes *r = with_devcg_filter();

	change(r, 5 * MS, 50, "runtime", DEVCG_CMD_LINK_CREATE, C, 3, 0, 0);
	/* a second episode of the same writer, after the first one's window */
	change(r, 5000 * MS, 50, "runtime", DEVCG_CMD_LINK_UPDATE, C, 4, 3, 0);
	refused(r, 5001 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 6000 * MS);
	CHECK_INT(ngot, 1);
	CHECK_INT(got[0].start_ns, 5000 * MS);
	CHECK_INT(got[0].changes, 1);
	CHECK_INT(got[0].nbefore, 2);
	CHECK_INT(got[0].nafter, 2);
	devcg_revokes_free(r);
}

TEST(revoke_episode_of_a_removed_cgroup_ends_when_its_path_is_made_again)
{
	/* "/c" removed (its programs with it) and made again, under devcg's
	 * filter 7, which grants c 240:0 r: nothing foreign is attached there */
	check_episode_ends_when_devcg_attaches(C_AGAIN, 0);
}

TEST(revoke_names_a_foreign_program_put_in_place_of_devcgs_filter_against_the_filters_policy)
{
	struct devcg_revokes *r = with_devcg_filter();

	/* crun's update: its own program replaces devcg's filter 1 on C */
	change(r, 10 * MS, 50, "crun", DEVCG_CMD_PROG_ATTACH, C, 2, 1, 0);
	refused(r, 11 * MS, C, 60, 240, 0, O_RDONLY); /* the filter granted it */
	refused(r, 12 * MS, C, 60, 1, 5, O_RDONLY);   /* the filter refused it: not counted */
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 1);
	CHECK_STR(got[0].writer_comm, "crun");
	CHECK_INT(got[0].nbefore, 1);
	CHECK_INT(got[0].before[0].id, 1);
	CHECK_INT(got[0].before[0].owner, DEVCG_PROG_DEVCG);
	CHECK_INT(got[0].nafter, 1);
	CHECK_INT(got[0].after[0].id, 2);
	CHECK_INT(got[0].denied, 1);
	CHECK_INT(got[0].devices[0].major, 240);
	devcg_revokes_free(r);
}

TEST(revoke_of_a_replaced_devcg_filter_ends_with_its_episode)
{
	struct devcg_revokes *r = with_devcg_filter();

	change(r, 10 * MS, 50, "crun", DEVCG_CMD_PROG_ATTACH, C, 2, 1, 0);
	/* someone else's change ends the episode: the filter's policy with it */
	attach(r, 20 * MS, 70, "other", C, 3);
	refused(r, 21 * MS, C, 60, 240, 0, O_RDONLY);
	devcg_revokes_flush(r, 50 * MS);
	CHECK_INT(ngot, 0);
	devcg_revokes_free(r);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Gap correlation on synthetic events (no kernel needed). */
#include "harness.h"
#include "trace.h"

#include <fcntl.h>
#include <string.h>

static struct devcg_gap last;
static int ngaps;

static void on_gap(void *ctx, const struct devcg_gap *g)
{
	(void)ctx;
	last = *g;
	ngaps++;
}

#define MS 1000000ull
#define CG 4242

static struct devcg_trace_event write_ev(uint64_t ts, int file, const char *data)
{
	struct devcg_trace_event e = { .type = DEVCG_EV_CGROUP_WRITE, .ts_ns = ts, .ts_exit_ns = ts + 5000,
				       .pid = 7, .ret = (int64_t)strlen(data) };

	e.write.target = CG;
	e.write.file = (uint32_t)file;
	e.write.len = (uint32_t)strlen(data);
	memcpy(e.write.data, data, strlen(data));
	memcpy(e.comm, "writer", 7);
	return e;
}

static struct devcg_trace_event denied_ev(uint64_t ts)
{
	struct devcg_trace_event e = { .type = DEVCG_EV_OPEN_DENIED, .ts_ns = ts, .ts_exit_ns = ts,
				       .pid = 9, .devices_cg = CG, .ret = -1 };

	memcpy(e.open.path, "/dev/urandom", 13);
	return e;
}

static struct devcg_gaps *fresh(struct devcg_cgpaths **paths)
{
	*paths = devcg_cgpaths_new();
	ngaps = 0;
	memset(&last, 0, sizeof(last));
	return devcg_gaps_new(*paths, on_gap, NULL);
}

static void feed(struct devcg_gaps *g, struct devcg_trace_event e)
{
	devcg_gaps_feed(g, &e, e.type == DEVCG_EV_OPEN_DENIED ? DEVCG_CHAR : 0, 1, 9, 0);
}

TEST(gap_counts_denials_inside_the_replay_and_not_after_it)
{
	struct devcg_cgpaths *paths;
	struct devcg_gaps *g = fresh(&paths);

	feed(g, write_ev(1 * MS, DEVCG_FILE_DEVICES_DENY, "a"));
	feed(g, denied_ev(1 * MS + 20000));
	feed(g, write_ev(1 * MS + 40000, DEVCG_FILE_DEVICES_ALLOW, "c 1:3 rwm"));
	/* refused long after the replay ended, which did not grant c 1:9: not
	 * a victim of this gap */
	feed(g, denied_ev(50 * MS));
	feed(g, denied_ev(90 * MS));
	devcg_gaps_flush(g, 0);
	CHECK_INT(ngaps, 1);
	CHECK_INT(last.denied, 1);
	CHECK_INT(last.rules, 1);
	CHECK_INT(last.start_ns, 1 * MS);
	CHECK_INT(last.end_ns, 1 * MS + 45000);
	CHECK_INT(last.ndevices, 1);
	devcg_gaps_free(g);
	devcg_cgpaths_free(paths);
}

static struct devcg_trace_event check_ev(uint64_t ts, uint32_t tid)
{
	struct devcg_trace_event e = { .type = DEVCG_EV_DEV_CHECK, .ts_ns = ts, .ts_exit_ns = ts,
				       .pid = 9, .tid = tid, .devices_cg = CG, .ret = -1 };

	e.check.type = DEVCG_CHAR;
	e.check.major = 1;
	e.check.minor = 9;
	return e;
}

/* A refused open of c 1:9 by task TID, returning at MS. */
struct late_open {
	uint32_t tid;
	uint64_t ms;
};

/* One window (an 'a' at 1 ms, one write 40 us later) in which task 10's
 * check of c 1:CHECK_MINOR was denied at 20 us; then the N refused OPENS,
 * all returning long after the window. How many the gap counts. */
static uint64_t late_opens(uint32_t check_minor, const struct late_open *opens, size_t n)
{
	struct devcg_trace_event e = check_ev(1 * MS + 20000, 10);
	struct devcg_cgpaths *paths;
	struct devcg_gaps *g = fresh(&paths);
	size_t i;

	feed(g, write_ev(1 * MS, DEVCG_FILE_DEVICES_DENY, "a"));
	e.check.minor = check_minor;
	feed(g, e);
	feed(g, write_ev(1 * MS + 40000, DEVCG_FILE_DEVICES_ALLOW, "c 1:9 r"));
	for (i = 0; i < n; i++) {
		e = denied_ev(opens[i].ms * MS);
		e.open.oflags = O_WRONLY;
		e.tid = opens[i].tid;
		feed(g, e);
	}
	devcg_gaps_flush(g, 0);
	devcg_gaps_free(g);
	devcg_cgpaths_free(paths);
	CHECK_INT(ngaps, 1);
	return last.denied;
}

/* An open refused inside the window whose return comes well after it
 * (a slow machine): where the kernel's check is hooked, the open is placed
 * at its check and counted; without the check (the controls) it is not. */
TEST(gap_places_a_late_return_at_its_check)
{
	/* task 10's open, placed at its check; task 11's, with no check of
	 * its own, not (the opens are writes, which the replayed "c 1:9 r"
	 * does not grant) */
	CHECK_INT(late_opens(9, (struct late_open[]){ { 10, 20 }, { 11, 21 } }, 2), 1);
	CHECK_INT(last.first_denied_ns, 1 * MS + 20000);
	/* the control: only the open of a task whose check was not seen */
	CHECK_INT(late_opens(9, (struct late_open[]){ { 11, 20 } }, 1), 0);
	/* a check of another device (an mknod, say) places no open of this one */
	CHECK_INT(late_opens(5, (struct late_open[]){ { 10, 20 } }, 1), 0);
	/* a check is used once: a second refused open of the same task later
	 * on is placed at its own return */
	CHECK_INT(late_opens(9, (struct late_open[]){ { 10, 20 }, { 10, 30 } }, 2), 1);
}

/* The window of an 'a' at 1 ms and the replay of "c 1:9 r" and "c 1:3 rwm"
 * (the last write ends at 1.085 ms), then one refused open of c 1:MINOR
 * with OFLAGS stamped AT_US after the start, with no check seen, and an
 * event 200 ms later (the window closes 100 ms after its last write):
 * whether the gap counts it. */
static uint64_t late_refusal(uint32_t minor, uint32_t oflags, uint64_t at_us)
{
	struct devcg_trace_event e = denied_ev(1 * MS + at_us * 1000);
	struct devcg_cgpaths *paths;
	struct devcg_gaps *g = fresh(&paths);

	feed(g, write_ev(1 * MS, DEVCG_FILE_DEVICES_DENY, "a"));
	feed(g, write_ev(1 * MS + 40000, DEVCG_FILE_DEVICES_ALLOW, "c 1:9 r"));
	feed(g, write_ev(1 * MS + 80000, DEVCG_FILE_DEVICES_ALLOW, "c 1:3 rwm"));
	e.open.oflags = oflags;
	devcg_gaps_feed(g, &e, DEVCG_CHAR, 1, minor, 0);
	feed(g, write_ev(201 * MS, DEVCG_FILE_DEVICES_ALLOW, "c 1:5 r"));
	devcg_gaps_flush(g, 0);
	devcg_gaps_free(g);
	devcg_cgpaths_free(paths);
	CHECK_INT(ngaps, 1);
	return last.denied;
}

/* An open stamped late (its CPU taken away between the check and the
 * stamp) whose request the replayed list grants was refused by the window:
 * the kernel could not have refused it after the replay. */
TEST(gap_counts_a_late_refusal_that_the_replayed_list_grants)
{
	CHECK_INT(late_refusal(9, O_RDONLY, 10000), 1);
	CHECK_INT(late_refusal(9, O_RDONLY, 90000), 1);
	/* controls: a device the replay did not grant, an access it did not
	 * grant, a stamp after the window closed: not the window's */
	CHECK_INT(late_refusal(5, O_RDONLY, 10000), 0);
	CHECK_INT(late_refusal(9, O_WRONLY, 10000), 0);
	CHECK_INT(late_refusal(9, O_RDONLY | O_TRUNC, 10000), 0);
	CHECK_INT(late_refusal(9, O_RDONLY, 150000), 0);
}

TEST(gap_takes_in_denials_between_writes_of_a_slow_replay)
{
	struct devcg_cgpaths *paths;
	struct devcg_gaps *g = fresh(&paths);

	feed(g, write_ev(1 * MS, DEVCG_FILE_DEVICES_DENY, "a"));
	feed(g, write_ev(2 * MS, DEVCG_FILE_DEVICES_ALLOW, "c 1:3 rwm"));
	feed(g, denied_ev(30 * MS)); /* after the last write so far ... */
	feed(g, write_ev(60 * MS, DEVCG_FILE_DEVICES_ALLOW, "c 1:9 rwm")); /* ... but not the last */
	devcg_gaps_flush(g, 0);
	CHECK_INT(ngaps, 1);
	CHECK_INT(last.denied, 1);
	CHECK_INT(last.rules, 2);
	devcg_gaps_free(g);
	devcg_cgpaths_free(paths);
}

TEST(gap_closes_before_a_write_that_comes_after_the_burst)
{
	struct devcg_cgpaths *paths;
	struct devcg_gaps *g = fresh(&paths);

	feed(g, write_ev(1 * MS, DEVCG_FILE_DEVICES_DENY, "a"));
	feed(g, write_ev(1 * MS + 30000, DEVCG_FILE_DEVICES_ALLOW, "c 1:9 rwm"));
	/* 200 ms later, handled in the same batch: a separate update */
	feed(g, write_ev(201 * MS, DEVCG_FILE_DEVICES_ALLOW, "c 1:3 rwm"));
	devcg_gaps_flush(g, 0);
	CHECK_INT(ngaps, 1);
	CHECK_INT(last.rules, 1);
	CHECK(last.end_ns < 2 * MS);
	devcg_gaps_free(g);
	devcg_cgpaths_free(paths);
}

TEST(a_deny_that_is_not_a_reset_opens_no_gap)
{
	struct devcg_cgpaths *paths;
	struct devcg_gaps *g = fresh(&paths);

	feed(g, write_ev(1 * MS, DEVCG_FILE_DEVICES_DENY, "c 1:9 w"));
	feed(g, denied_ev(1 * MS + 1000));
	devcg_gaps_flush(g, 0);
	CHECK_INT(ngaps, 0);
	devcg_gaps_free(g);
	devcg_cgpaths_free(paths);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg trace as a service, without a kernel: the Prometheus text format
 * of --metrics (escaping, counters, HELP and TYPE, read back by the strict
 * reader of tests/prom.h), its atomic replacement of the file, and the
 * journal entries of --journal (fields, the unit of a cgroup).
 */
#include "harness.h"
#include "prom.h"
#include "service.h"
#include "testutil.h"

#include <fcntl.h>
#include <sys/stat.h>

/* The metrics of M, formatted and read back strictly (the test fails on
 * any fault of the format). */
static void parse_metrics(struct devcg_metrics *m, struct prom_file *f)
{
	char *text;
	long n = devcg_metrics_format(m, &text);

	CHECK(n > 0);
	CHECK_INT(strlen(text), n);
	CHECK_MSG(!prom_parse(text, f), "%s in:\n%s", f->err, text);
	free(text);
}

static struct devcg_gap a_gap(const char *cgroup, int kind)
{
	struct devcg_gap g = { .kind = kind, .writer_pid = 4242, .writer_ppid = 1, .start_ns = 1000,
			       .end_ns = 51000, .rules = 9, .denied = 3, .ndevices = 2, .freeze = "none" };

	snprintf(g.cgroup, sizeof(g.cgroup), "%s", cgroup);
	memcpy(g.writer_comm, "runc:[2:INIT]", 14);
	memcpy(g.writer_pcomm, "containerd", 11);
	g.devices[0].type = DEVCG_CHAR, g.devices[0].major = 1, g.devices[0].minor = 9;
	g.devices[1].type = DEVCG_BLOCK, g.devices[1].major = 7, g.devices[1].minor = 0;
	return g;
}

static struct devcg_revoke a_revoke(const char *cgroup)
{
	struct devcg_revoke rv = { .writer_pid = 1, .start_ns = 5000, .end_ns = 9000, .changes = 2,
				   .nbefore = 1, .nafter = 1, .denied = 5, .ndevices = 1, .nvictims = 1 };

	snprintf(rv.cgroup, sizeof(rv.cgroup), "%s", cgroup);
	memcpy(rv.writer_comm, "systemd", 8);
	rv.before[0].id = 12, rv.before[0].owner = DEVCG_PROG_DEVCG;
	rv.after[0].id = 13, rv.after[0].owner = DEVCG_PROG_FOREIGN;
	rv.devices[0].type = DEVCG_CHAR, rv.devices[0].major = 195, rv.devices[0].minor = 0;
	rv.devices[0].access = DEVCG_ACC_READ | DEVCG_ACC_WRITE, rv.devices[0].count = 5;
	rv.victims[0].pid = 77;
	memcpy(rv.victims[0].comm, "nvidia-smi", 11);
	return rv;
}

/* ---- the text format ------------------------------------------------------ */

UTEST(metrics_label_value_escapes_backslash_quote_and_newline)
{
	char buf[64];

	CHECK_INT(devcg_prom_label_value(buf, sizeof(buf), "a\"b\\c\nd"), 10);
	CHECK_STR(buf, "a\\\"b\\\\c\\nd");
	/* a plain value stays as it is */
	CHECK_INT(devcg_prom_label_value(buf, sizeof(buf), "/system.slice/x.service"), 23);
	CHECK_STR(buf, "/system.slice/x.service");
}

UTEST(metrics_label_value_of_bytes_not_utf8_is_the_json_output_escaped)
{
	char buf[64], json[64];

	/* the trace's JSON strings say \xff (devcg_escape()); the label value
	 * says the same text, its backslash escaped */
	devcg_escape(json, sizeof(json), "/a\xff", (size_t)-1, DEVCG_ESCAPE_MESSAGE);
	CHECK_STR(json, "/a\\xff");
	devcg_prom_label_value(buf, sizeof(buf), "/a\xff");
	CHECK_STR(buf, "/a\\\\xff");
}

UTEST(metrics_label_value_is_never_cut_inside_an_escape)
{
	char buf[4];

	/* "a\"" needs 3 bytes and the NUL: it fits; one more escape does not */
	CHECK_INT(devcg_prom_label_value(buf, sizeof(buf), "a\"\""), 5);
	CHECK_STR(buf, "a\\\"");
	CHECK_INT(devcg_prom_label_value(buf, 3, "a\""), 3);
	CHECK_STR(buf, "a");
}

UTEST(metrics_count_gaps_revocations_and_refused_opens_per_label_set)
{
	struct devcg_metrics *m = devcg_metrics_new();
	struct devcg_gap g1 = a_gap("/system.slice/a.service", DEVCG_GAP_V1_DENY_ALL);
	struct devcg_gap g2 = a_gap("/system.slice/a.service", DEVCG_GAP_V2_NO_FILTER);
	struct devcg_revoke rv = a_revoke("/kubepods/pod1/c1");
	struct devcg_trace_losses lost = { .ringbuf = 3, .read = 1, .audit = 7, .audit_before_start = 100 };
	struct prom_file f;

	CHECK(m);
	devcg_metrics_gap(m, &g1);
	devcg_metrics_gap(m, &g1);
	devcg_metrics_gap(m, &g2);
	devcg_metrics_revoke(m, &rv);
	devcg_metrics_refused_open(m, "/c1", "/docker/c1", "c 1:9");
	devcg_metrics_refused_open(m, "/c1", "/docker/c1", "c 1:9");
	devcg_metrics_refused_open(m, "/c1", NULL, "c 1:9");
	devcg_metrics_refused_open(m, "/c1", NULL, NULL);
	devcg_metrics_losses(m, &lost);
	parse_metrics(m, &f);
	CHECK_INT(prom_value(&f, "devcg_trace_gaps_total", "cgroup", "/system.slice/a.service", "kind",
			     "v1_deny_all", NULL), 2);
	CHECK_INT(prom_value(&f, "devcg_trace_gaps_total", "cgroup", "/system.slice/a.service", "kind",
			     "v2_no_filter", NULL), 1);
	CHECK_INT(prom_value(&f, "devcg_trace_revocations_total", "cgroup", "/kubepods/pod1/c1", NULL), 1);
	CHECK_INT(prom_value(&f, "devcg_trace_refused_opens_total", "cgroup", "/c1", "devices_cgroup",
			     "/docker/c1", "device", "c 1:9", NULL), 2);
	CHECK_INT(prom_value(&f, "devcg_trace_refused_opens_total", "cgroup", "/c1", "devices_cgroup", "",
			     "device", "c 1:9", NULL), 1);
	CHECK_INT(prom_value(&f, "devcg_trace_refused_opens_total", "cgroup", "/c1", "devices_cgroup", "",
			     "device", "unknown", NULL), 1);
	CHECK_INT(prom_sum(&f, "devcg_trace_refused_opens_total"), 4);
	CHECK_INT(prom_value(&f, "devcg_trace_lost_events_total", "cause", "ringbuf", NULL), 3);
	CHECK_INT(prom_value(&f, "devcg_trace_lost_events_total", "cause", "read", NULL), 1);
	CHECK_INT(prom_value(&f, "devcg_trace_lost_events_total", "cause", "audit", NULL), 7);
	/* audit denials from before the start are skipped, not lost */
	CHECK_INT(prom_sum(&f, "devcg_trace_lost_events_total"), 11);
	prom_free(&f);
	devcg_metrics_free(m);
}

UTEST(metrics_file_declares_every_metric_with_help_and_type_counter_even_with_no_sample)
{
	struct devcg_metrics *m = devcg_metrics_new();
	struct prom_file f;

	parse_metrics(m, &f);
	CHECK(prom_declared(&f, "devcg_trace_gaps_total", "counter"));
	CHECK(prom_declared(&f, "devcg_trace_revocations_total", "counter"));
	CHECK(prom_declared(&f, "devcg_trace_refused_opens_total", "counter"));
	CHECK(prom_declared(&f, "devcg_trace_lost_events_total", "counter"));
	CHECK_INT(prom_sum(&f, "devcg_trace_gaps_total"), 0);
	prom_free(&f);
	devcg_metrics_free(m);
}

UTEST(metrics_read_back_hostile_cgroup_names_exactly_as_json_says_them)
{
	static const char *const names[] = { "/q\"uote", "/back\\slash", "/new\nline", "/} 1\nfake 2",
					     "/\xc3\x28", "/esc\x1b[31m" };
	struct devcg_metrics *m = devcg_metrics_new();
	struct prom_file f;
	char json[256];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct devcg_revoke rv = a_revoke(names[i]);

		devcg_metrics_revoke(m, &rv);
	}
	parse_metrics(m, &f);
	CHECK_INT(f.n, sizeof(names) / sizeof(names[0]) + 3);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		devcg_escape(json, sizeof(json), names[i], (size_t)-1, DEVCG_ESCAPE_MESSAGE);
		CHECK_MSG(prom_value(&f, "devcg_trace_revocations_total", "cgroup", json, NULL) == 1, "%s", json);
	}
	prom_free(&f);
	devcg_metrics_free(m);
}

UTEST(metrics_past_the_series_limit_are_counted_under_other)
{
	struct devcg_metrics *m = devcg_metrics_new();
	struct prom_file f;
	char cg[32];
	int i;

	for (i = 0; i < DEVCG_METRICS_MAX_SERIES + 5; i++) {
		snprintf(cg, sizeof(cg), "/c%d", i);
		devcg_metrics_refused_open(m, cg, NULL, "c 1:3");
	}
	parse_metrics(m, &f);
	CHECK_INT(prom_value(&f, "devcg_trace_refused_opens_total", "cgroup", "/c0", "devices_cgroup", "", "device",
			     "c 1:3", NULL), 1);
	CHECK_INT(prom_value(&f, "devcg_trace_refused_opens_total", "cgroup", "_other", "devices_cgroup", "_other",
			     "device", "_other", NULL), 5);
	CHECK_INT(prom_sum(&f, "devcg_trace_refused_opens_total"), DEVCG_METRICS_MAX_SERIES + 5);
	prom_free(&f);
	devcg_metrics_free(m);
}

/* the control: the strict reader refuses what node_exporter would */
UTEST(strict_reader_refuses_each_fault_of_the_text_format)
{
	static const char *const bad[] = {
		"# TYPE x_total counter\nx_total{a=\"b\"} 1",          /* no final newline */
		"# TYPE x_total counter\nx_total{a=\"b\"c\"} 1\n",      /* an unescaped quote */
		"# TYPE x_total counter\nx_total{a=\"b\\q\"} 1\n",      /* a bad escape */
		"x_total{a=\"b\"} 1\n",                                /* no TYPE */
		"# TYPE x_total counter\nx_total{a=\"b\"} 1\n# TYPE x_total counter\n",
		"# TYPE x counter\nx 1\n",                             /* a counter not _total */
		"# TYPE x_total counter\nx_total{a=\"b\"} 1\nx_total{a=\"b\"} 2\n",
		"# TYPE x_total counter\nx_total{1a=\"b\"} 1\n",
		"# TYPE x_total counter\nx_total{a=\"\xff\"} 1\n",
		"# TYPE x_total counter\nx_total 1.5\n",
		"# TYPE x_total counter\n# TYPE y_total counter\nx_total 1\ny_total 1\nx_total{a=\"b\"} 1\n",
		"# TYPE x_total counter\n\nx_total 1\n",
	};
	static const char *const good = "# HELP x_total a \\\\ help\\n\n# TYPE x_total counter\n"
					"x_total{a=\"q\\\"\\\\\\n\"} 1\nx_total 2 1700000000000\n";
	struct prom_file f;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_MSG(prom_parse(bad[i], &f) == -1, "accepted: %s", bad[i]);
		prom_free(&f);
	}
	CHECK_MSG(!prom_parse(good, &f), "%s", f.err);
	CHECK_INT(prom_value(&f, "x_total", "a", "q\"\\\n", NULL), 1);
	prom_free(&f);
}

/* ---- the file ------------------------------------------------------------- */

static void slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	CHECK(fd >= 0);
	n = read(fd, buf, len - 1);
	CHECK(n >= 0);
	buf[n] = '\0';
	close(fd);
}

/* The names in the scratch directory, one line each, sorted by readdir. */
static int entries(char *names, size_t len)
{
	DIR *d = opendir(scratch());
	struct dirent *e;
	int n = 0;

	names[0] = '\0';
	CHECK(d);
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(names + strlen(names), len - strlen(names), "%s\n", e->d_name);
		n++;
	}
	closedir(d);
	return n;
}

UTEST(write_atomic_replaces_the_old_file_whole_and_leaves_no_temporary_file)
{
	char path[256], buf[256], names[256];
	int dirfd, oldfd;
	struct stat st;

	write_scratch("t.prom", "old whole\n");
	snprintf(path, sizeof(path), "%s/t.prom", scratch());
	oldfd = open(path, O_RDONLY);
	dirfd = open(scratch(), O_RDONLY | O_DIRECTORY);
	CHECK(oldfd >= 0 && dirfd >= 0);
	CHECK_INT(devcg_write_atomic(dirfd, "t.prom", "new whole\n", 10, NULL), 0);
	slurp(path, buf, sizeof(buf));
	CHECK_STR(buf, "new whole\n");
	/* the old file was replaced, not rewritten in place: a reader that
	 * had it open still reads it whole */
	CHECK_INT(pread(oldfd, buf, sizeof(buf) - 1, 0), 10);
	buf[10] = '\0';
	CHECK_STR(buf, "old whole\n");
	CHECK_INT(entries(names, sizeof(names)), 1);
	CHECK_STR(names, "t.prom\n");
	CHECK(!stat(path, &st));
	CHECK_INT(st.st_mode & 07777, 0644);
	close(oldfd);
	close(dirfd);
}

UTEST(write_atomic_that_fails_leaves_the_old_name_as_it_was_and_no_temporary_file)
{
	char path[256], names[256];
	struct devcg_error err = { 0 };
	int dirfd;

	/* a directory where the file should go: the rename fails */
	snprintf(path, sizeof(path), "%s/t.prom", scratch());
	CHECK(!mkdir(path, 0755));
	dirfd = open(scratch(), O_RDONLY | O_DIRECTORY);
	CHECK(dirfd >= 0);
	CHECK(devcg_write_atomic(dirfd, "t.prom", "x 1\n", 4, &err) < 0);
	CHECK_MSG(strstr(err.msg, "cannot write t.prom") && !strchr(err.msg, '\n'), "%s", err.msg);
	CHECK_INT(entries(names, sizeof(names)), 1);
	CHECK_STR(names, "t.prom\n");
	CHECK(!rmdir(path));
	close(dirfd);
}

UTEST(metrics_open_refuses_a_missing_directory_in_one_line_and_writes_nothing)
{
	struct devcg_metrics *m = devcg_metrics_new();
	struct devcg_error err = { 0 };
	char path[256];

	snprintf(path, sizeof(path), "%s/no-such-dir/t.prom", scratch());
	CHECK_INT(devcg_metrics_open(m, path, 0, &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "metrics file") && strstr(err.msg, "No such file or directory") &&
		  !strchr(err.msg, '\n'), "%s", err.msg);
	devcg_metrics_free(m);
}

UTEST(metrics_open_writes_the_file_at_once_and_a_tick_rewrites_it_only_when_counts_changed)
{
	struct devcg_metrics *m = devcg_metrics_new();
	struct devcg_gap g = a_gap("/x", DEVCG_GAP_V1_DENY_ALL);
	const uint64_t s = 1000000000ull;
	char path[256], text[8192];
	struct prom_file f;
	struct stat a, b;

	snprintf(path, sizeof(path), "%s/t.prom", scratch());
	CHECK_INT(devcg_metrics_open(m, path, 2 * s, NULL), 0);
	CHECK(!stat(path, &a));
	/* nothing changed: not rewritten (each rewrite is a new inode) */
	CHECK_INT(devcg_metrics_tick(m, 100 * s, NULL), 0);
	CHECK(!stat(path, &b));
	CHECK_INT(b.st_ino, a.st_ino);
	devcg_metrics_gap(m, &g);
	CHECK_INT(devcg_metrics_tick(m, 100 * s, NULL), 0);
	CHECK(!stat(path, &b));
	CHECK(b.st_ino != a.st_ino);
	slurp(path, text, sizeof(text));
	CHECK_MSG(!prom_parse(text, &f), "%s", f.err);
	CHECK_INT(prom_value(&f, "devcg_trace_gaps_total", "cgroup", "/x", "kind", "v1_deny_all", NULL), 1);
	prom_free(&f);
	/* changed again, but within the interval: not yet */
	a = b;
	devcg_metrics_gap(m, &g);
	CHECK_INT(devcg_metrics_tick(m, 101 * s, NULL), 0);
	CHECK(!stat(path, &b));
	CHECK_INT(b.st_ino, a.st_ino);
	CHECK_INT(devcg_metrics_tick(m, 102 * s, NULL), 0);
	CHECK(!stat(path, &b));
	CHECK(b.st_ino != a.st_ino);
	devcg_metrics_free(m);
}

/* ---- the journal ---------------------------------------------------------- */

static const char *unit_of(const char *cgroup)
{
	static char unit[256];

	return devcg_trace_cgroup_unit(cgroup, unit, sizeof(unit)) ? unit : "(none)";
}

UTEST(cgroup_unit_is_the_first_name_after_the_slices)
{
	CHECK_STR(unit_of("/system.slice/gpu.service"), "gpu.service");
	CHECK_STR(unit_of("/system.slice/gpu.service/payload"), "gpu.service");
	CHECK_STR(unit_of("/machine.slice/libpod-abc.scope/container"), "libpod-abc.scope");
	CHECK_STR(unit_of("/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope"), "user@1000.service");
	CHECK_STR(unit_of("/system.slice"), "system.slice");
	CHECK_STR(unit_of("/system.slice/_cgroup.service"), "cgroup.service");
}

/* the control: paths that are not systemd's name no unit */
UTEST(cgroup_unit_of_a_path_systemd_did_not_make_is_none)
{
	CHECK_STR(unit_of("/"), "(none)");
	CHECK_STR(unit_of("?"), "(none)");
	CHECK_STR(unit_of("/mycontainer"), "(none)");
	CHECK_STR(unit_of("/kubepods/besteffort/pod1/x.service"), "(none)");
	CHECK_STR(unit_of("/system.slice/docker"), "(none)");
}

UTEST(journal_entry_of_a_gap_has_its_fields_and_a_one_line_message)
{
	struct devcg_gap g = a_gap("/system.slice/gpu.service", DEVCG_GAP_V1_DENY_ALL);
	struct devcg_journal_entry e;

	devcg_journal_gap_entry(&e, &g);
	CHECK(!e.nomem);
	CHECK_STR(devcg_journal_entry_get(&e, "SYSLOG_IDENTIFIER"), "devcg-trace");
	CHECK_STR(devcg_journal_entry_get(&e, "PRIORITY"), "4");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_EVENT"), "gap");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_GAP_KIND"), "v1_deny_all");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_CGROUP"), "/system.slice/gpu.service");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_UNIT"), "gpu.service");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_WRITER_PID"), "4242");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_WRITER_COMM"), "runc:[2:INIT]");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_WRITER_PCOMM"), "containerd");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_DEVICES"), "c 1:9,b 7:0");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_WINDOW_NS"), "50000");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_DENIED"), "3");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_RULES"), "9");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_FREEZE"), "none");
	CHECK(strstr(devcg_journal_entry_get(&e, "MESSAGE"), "/system.slice/gpu.service"));
	CHECK(!strchr(devcg_journal_entry_get(&e, "MESSAGE"), '\n'));
	devcg_journal_entry_free(&e);
}

UTEST(journal_entry_of_a_gap_with_no_refused_open_is_a_notice)
{
	struct devcg_gap g = a_gap("/mycontainer", DEVCG_GAP_V2_NO_FILTER);
	struct devcg_journal_entry e;

	g.denied = 0;
	g.ndevices = 0;
	devcg_journal_gap_entry(&e, &g);
	CHECK_STR(devcg_journal_entry_get(&e, "PRIORITY"), "5");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_GAP_KIND"), "v2_no_filter");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_DEVICES"), "");
	/* not a systemd unit's cgroup: no DEVCG_UNIT */
	CHECK(devcg_journal_entry_get(&e, "DEVCG_UNIT") == NULL);
	devcg_journal_entry_free(&e);
}

UTEST(journal_entry_of_a_revocation_names_programs_devices_access_and_victims)
{
	struct devcg_revoke rv = a_revoke("/system.slice/gpu.service");
	struct devcg_journal_entry e;

	devcg_journal_revoke_entry(&e, &rv);
	CHECK(!e.nomem);
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_EVENT"), "revoke");
	CHECK_STR(devcg_journal_entry_get(&e, "PRIORITY"), "4");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_UNIT"), "gpu.service");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_WRITER_COMM"), "systemd");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_PROGS_BEFORE"), "12:devcg");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_PROGS_AFTER"), "13:foreign");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_DEVICES"), "c 195:0");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_ACCESS"), "rw");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_VICTIMS"), "77/nvidia-smi");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_WINDOW_NS"), "4000");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_DENIED"), "5");
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_CHANGES"), "2");
	devcg_journal_entry_free(&e);
}

UTEST(journal_fields_say_hostile_names_as_json_does_and_the_message_stays_one_line)
{
	struct devcg_gap g = a_gap("/evil\n\x1b[2Jname", DEVCG_GAP_V1_DENY_ALL);
	struct devcg_journal_entry e;
	char json[128];

	memcpy(g.writer_comm, "a\nb\xff", 5);
	devcg_journal_gap_entry(&e, &g);
	devcg_escape(json, sizeof(json), g.cgroup, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_CGROUP"), json);
	devcg_escape(json, sizeof(json), g.writer_comm, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
	CHECK_STR(devcg_journal_entry_get(&e, "DEVCG_WRITER_COMM"), json);
	CHECK(!strchr(devcg_journal_entry_get(&e, "MESSAGE"), '\n'));
	CHECK(!strchr(devcg_journal_entry_get(&e, "MESSAGE"), '\x1b'));
	devcg_journal_entry_free(&e);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * `devcg allow` and `devcg deny` with several rules: all applied in one
 * compare-and-swap, or none when one of them is bad. Probed in the kernel
 * by a child of a scratch cgroup; the controls are the opens refused
 * before, and the same rules without the bad one.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct result {
	int status;
	char out[16384], err[16384];
};

static void slurp(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* Run devcg (DEVCG, or build/devcg) with the NULL-terminated arguments. */
static void run(struct result *r, ...)
{
	const char *bin = getenv("DEVCG") ? getenv("DEVCG") : "build/devcg";
	const char *argv[16] = { bin };
	char outp[64], errp[64];
	int out, err, n = 1, st;
	va_list ap;
	pid_t pid;

	va_start(ap, r);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	snprintf(outp, sizeof(outp), "/tmp/devcg-test-%s-out-XXXXXX", scratch_tag());
	snprintf(errp, sizeof(errp), "/tmp/devcg-test-%s-err-XXXXXX", scratch_tag());
	out = mkstemp(outp);
	err = mkstemp(errp);
	CHECK(out >= 0 && err >= 0);
	unlink(outp);
	unlink(errp);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(out, 1);
		dup2(err, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	CHECK_MSG(r->status != 127, "cannot run %s", bin);
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
}

/* Can a child of the cgroup open PATH for reading (1), or not (0)? */
static int opens(void *arg)
{
	int fd = open((const char *)arg, O_RDONLY);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EPERM ? 0 : 2;
}

/* The id of the devcg program on CG, from `devcg show -j`. */
static long long prog_id(const char *cg)
{
	struct result r;
	json_t *o;
	long long id;

	run(&r, "show", "-j", cg, NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	o = json_loads(r.out, 0, NULL);
	CHECK(o && json_is_integer(json_object_get(o, "prog_id")));
	id = json_integer_value(json_object_get(o, "prog_id"));
	json_decref(o);
	return id;
}

/* A scratch cgroup under 'deny a': /dev/null and /dev/urandom refused. */
static void deny_all(char *cg, size_t len)
{
	struct result r;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, len));
	run(&r, "replace", cg, "deny a", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 0);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 0);
}

TEST(allow_applies_several_rules_in_one_swap)
{
	char cg[4096];
	struct result r;
	long long before;
	json_t *o;

	deny_all(cg, sizeof(cg));
	before = prog_id(cg);
	run(&r, "allow", "-j", cg, "c 1:3 r", "c 1:9 r", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	o = json_loads(r.out, 0, NULL);
	CHECK_MSG(o, "not JSON: %s", r.out);
	/* one swap: the program replaced is the one there before */
	CHECK_INT(json_integer_value(json_object_get(o, "replaced_id")), before);
	CHECK_INT(json_integer_value(json_object_get(o, "prog_id")), prog_id(cg));
	CHECK_INT(json_array_size(json_object_get(o, "rules")), 2);
	CHECK_STR(json_string_value(json_array_get(json_object_get(o, "rules"), 1)), "allow c 1:9 r");
	CHECK(!json_object_get(o, "rule"));
	json_decref(o);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 1);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 1);

	/* and deny takes both back in one swap too */
	before = prog_id(cg);
	run(&r, "deny", cg, "c 1:3 r", "c 1:9 r", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_MSG(strstr(r.out, ": deny c 1:3 r, deny c 1:9 r (program "), "%s", r.out);
	CHECK(prog_id(cg) != before);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 0);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 0);
}

TEST(allow_with_a_bad_rule_among_several_applies_none)
{
	char cg[4096];
	struct result r;
	long long before;

	deny_all(cg, sizeof(cg));
	before = prog_id(cg);
	run(&r, "allow", cg, "c 1:3 r", "c 1:x r", "c 1:9 r", NULL);
	CHECK_INT(r.status, 1);
	CHECK_MSG(!strncmp(r.err, "devcg allow: RULE 2:", 20) && strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
		  "not one line about RULE 2: %s", r.err);
	CHECK_STR(r.out, "");
	CHECK_INT(prog_id(cg), before);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 0);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 0);

	/* a rule of the other verb among them: refused the same way */
	run(&r, "allow", cg, "c 1:3 r", "deny c 1:9 r", NULL);
	CHECK_INT(r.status, 1);
	CHECK_INT(prog_id(cg), before);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 0);

	/* the control: without the bad rule, both apply */
	run(&r, "allow", cg, "c 1:3 r", "c 1:9 r", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 1);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 1);
}

/* The library's list form: one swap for the list, nothing for an empty one. */
TEST(update_rules_applies_a_list_in_one_swap_and_refuses_an_empty_one)
{
	DEVCG_OPTS(devcg_replace_opts, ro);
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_error err = { 0 };
	char cg[4096];
	long long before;

	deny_all(cg, sizeof(cg));
	before = prog_id(cg);
	CHECK(rules);
	CHECK_INT(devcg_update_rules(cg, rules, &ro, &err), -EINVAL);
	CHECK_INT(prog_id(cg), before);
	CHECK(!devcg_rules_parse(rules, "allow c 1:3 r\nallow c 1:9 r\n", 28, "test", NULL, &err));
	CHECK_MSG(!devcg_update_rules(cg, rules, &ro, &err), "%s", err.msg);
	CHECK_INT(ro.replaced_id, before);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 1);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 1);
	devcg_rules_free(rules);
}

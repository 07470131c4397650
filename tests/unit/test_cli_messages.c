// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* What the CLI says about its own usage: an option it refuses in one line,
 * and `devcg help VERB` as `devcg VERB --help`. No root needed. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *devcg(void)
{
	const char *p = getenv("DEVCG");

	if (!p)
		p = "build/devcg";
	if (access(p, X_OK))
		SKIP("%s is not built", p);
	return p;
}

/* Run devcg ARGS (a shell fragment); stdout in OUT, stderr in ERR, the exit
 * code back. */
static int run(const char *args, char *out, size_t olen, char *err, size_t elen)
{
	char cmd[1024], op[] = "/tmp/devcg-unit-out-XXXXXX", ep[] = "/tmp/devcg-unit-err-XXXXXX";
	int of = mkstemp(op), ef = mkstemp(ep), st;
	ssize_t n;

	CHECK(of >= 0 && ef >= 0);
	snprintf(cmd, sizeof(cmd), "%s %s </dev/null >%s 2>%s", devcg(), args, op, ep);
	st = system(cmd);
	n = read(of, out, olen - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(ef, err, elen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(of);
	close(ef);
	unlink(op);
	unlink(ep);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(an_unknown_option_is_said_once)
{
	char out[4096], err[4096];

	CHECK_INT(run("replace --bogus x 'deny a'", out, sizeof(out), err, sizeof(err)), 2);
	CHECK_STR(err, "devcg replace: unknown option '--bogus'\nTry 'devcg replace --help'.\n");
	CHECK_INT(run("show -z x", out, sizeof(out), err, sizeof(err)), 2);
	CHECK_STR(err, "devcg show: unknown option '-z'\nTry 'devcg show --help'.\n");
	CHECK_INT(run("check --rules", out, sizeof(out), err, sizeof(err)), 2);
	CHECK_STR(err, "devcg check: option '--rules' needs an argument\nTry 'devcg check --help'.\n");
	CHECK_INT(run("reset --json=1 x", out, sizeof(out), err, sizeof(err)), 2);
	CHECK_STR(err, "devcg reset: option '--json' takes no argument\nTry 'devcg reset --help'.\n");
	CHECK_INT(run("detach --mode 0600 x /dev/null", out, sizeof(out), err, sizeof(err)), 2);
	CHECK_STR(err, "devcg detach: unknown option '--mode' (an attach option)\nTry 'devcg detach --help'.\n");
	/* the control: a known option is taken */
	CHECK_INT(run("compile -j 'deny a'", out, sizeof(out), err, sizeof(err)), 0);
	CHECK_STR(err, "");
}

TEST(help_verb_prints_the_verbs_help_as_verb_help_does)
{
	static const char *const verbs[] = { "replace", "show", "check", "allow", "deny", "reset",
					     "compile", "trace", "oci-hook", "attach", "detach" };
	char a[16384], b[16384], err[4096], args[64];
	size_t i;

	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		snprintf(args, sizeof(args), "help %s", verbs[i]);
		CHECK_INT(run(args, a, sizeof(a), err, sizeof(err)), 0);
		snprintf(args, sizeof(args), "%s --help", verbs[i]);
		CHECK_INT(run(args, b, sizeof(b), err, sizeof(err)), 0);
		CHECK_MSG(!strncmp(a, "Usage: devcg ", 13) && !strcmp(a, b), "help %s differs", verbs[i]);
	}
	/* 'devcg help' alone is 'devcg --help' */
	CHECK_INT(run("help", a, sizeof(a), err, sizeof(err)), 0);
	CHECK_INT(run("--help", b, sizeof(b), err, sizeof(err)), 0);
	CHECK_STR(a, b);
	/* the control: an unknown verb is a usage error */
	CHECK_INT(run("help bogus", a, sizeof(a), err, sizeof(err)), 2);
	CHECK_STR(err, "devcg: unknown verb 'bogus'\nTry 'devcg --help'.\n");
}

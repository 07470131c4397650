// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The CLI's promises that need no root: exit codes, JSON that stays JSON. */
#include "harness.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *devcg(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

/* Run devcg with ARGS (a shell fragment) and INPUT on stdin; its stdout
 * in OUT, its exit code back. */
static int run_in(const char *input, const char *args, char *out, size_t len)
{
	char cmd[1024];
	size_t n = 0, got;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "printf '%s' | %s %s 2>/dev/null", input, devcg(), args);
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (n + 1 < len && (got = fread(out + n, 1, len - n - 1, p)) > 0)
		n += got;
	out[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(const char *args, char *out, size_t len)
{
	return run_in("", args, out, len);
}

/* Run devcg with ARGS (a shell fragment; stdin from /dev/null unless it
 * says otherwise) and its stdout to OUT_PATH; its stderr in ERR, its exit
 * code back. */
static int run_to(const char *args, const char *out_path, char *err, size_t len)
{
	char cmd[2048], errpath[] = "/tmp/devcg-unit-stderr-XXXXXX";
	int fd = mkstemp(errpath), st;
	ssize_t n;

	CHECK(fd >= 0);
	snprintf(cmd, sizeof(cmd), "%s %s </dev/null >%s 2>%s", devcg(), args, out_path, errpath);
	st = system(cmd);
	n = read(fd, err, len - 1);
	err[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(errpath);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The "error" of the one JSON object in OUT (which must be one). */
static const char *json_error(const char *out, json_t **keep)
{
	json_error_t jerr;

	*keep = json_loads(out, 0, &jerr);
	CHECK_MSG(*keep != NULL, "not one JSON object: '%s' (%s)", out, jerr.text);
	CHECK(json_is_string(json_object_get(*keep, "error")));
	return json_string_value(json_object_get(*keep, "error"));
}

TEST(json_errors_stay_json_when_a_path_is_not_utf8)
{
	char out[4096];
	json_t *o;

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	CHECK_INT(run("-j show \"$(printf '/tmp/devcg-\\377')\"", out, sizeof(out)), 1);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o != NULL, "not JSON: '%s'", out);
	/* the byte shown as \xff, not replaced */
	CHECK(strstr(json_string_value(json_object_get(o, "error")), "/tmp/devcg-\\xff") != NULL);
	json_decref(o);
}

TEST(usage_errors_exit_2_and_check_says_deny_with_1)
{
	char out[4096];

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	CHECK_INT(run("no-such-verb", out, sizeof(out)), 2);
	CHECK_INT(run("compile", out, sizeof(out)), 2);
	CHECK_INT(run("check --rules /dev/null c 1:x r", out, sizeof(out)), 2);
	CHECK_INT(run("compile 'allow q'", out, sizeof(out)), 1);
	CHECK_INT(run("check --rules /no/such/file c 1:3 r", out, sizeof(out)), 3);
	/* "-" reads the rules from stdin */
	CHECK_INT(run_in("deny a\\n", "check --rules - c 1:3 r", out, sizeof(out)), 1);
	CHECK_STR(out, "deny (default)\n");
	CHECK_INT(run_in("deny a\\nc 1:3 r\\n", "check --rules - c 1:3 r", out, sizeof(out)), 0);
}

TEST(compile_applies_files_and_rules_in_command_line_order)
{
	char out[4096], path[] = "/tmp/devcg-unit-order-XXXXXX";
	int fd = mkstemp(path);

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	CHECK(fd >= 0);
	CHECK(write(fd, "c 1:3 rwm\n", 10) == 10);
	close(fd);
	/* a devices.list read back after the reset it needs */
	snprintf(out, sizeof(out), "compile 'deny a' -f %s 'allow c 1:9 r'", path);
	CHECK_INT(run(out, out, sizeof(out)), 0);
	CHECK_STR(out, "deny a\nallow c 1:3 rwm\nallow c 1:9 r\n");
	/* the same sources the other way round: the reset comes last */
	snprintf(out, sizeof(out), "compile -f %s 'deny a'", path);
	CHECK_INT(run(out, out, sizeof(out)), 0);
	CHECK_STR(out, "deny a\n");
	unlink(path);
}

TEST(json_error_keeps_the_whole_message_when_a_rule_is_not_utf8)
{
	char out[4096], err[4096];
	json_t *o;

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	/* the example: F5 starts no valid UTF-8 sequence */
	CHECK_INT(run("-j compile \"allow c 1:3 $(printf '\\365\\200\\200\\200')\"", out, sizeof(out)), 1);
	CHECK_STR(json_error(out, &o), "argument 1:1:13: access must be letters of 'rwm', not "
		  "'\\xf5\\x80\\x80\\x80'");
	json_decref(o);
	CHECK_INT(run_to("compile \"allow c 1:3 $(printf '\\365\\200\\200\\200')\"", "/dev/null", err,
			 sizeof(err)), 1);
	CHECK_STR(err, "devcg compile: argument 1:1:13: access must be letters of 'rwm', not "
		  "'\\xf5\\x80\\x80\\x80'\n");
}

TEST(errors_show_escape_sequences_of_rule_text_visibly)
{
	char out[4096], err[4096];
	json_t *o;

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	/* ESC ] 0 ; ... BEL sets a terminal's title; it must arrive as text */
	CHECK_INT(run_to("compile \"allow c 1:3 r$(printf '\\033]0;pwned\\007')\"", "/dev/null", err,
			 sizeof(err)), 1);
	CHECK_STR(err, "devcg compile: argument 1:1:13: access must be letters of 'rwm', not "
		  "'r\\x1b]0;pwned\\x07'\n");
	CHECK_INT(run("-j compile \"allow c 1:3 r$(printf '\\033]0;pwned\\007')\"", out, sizeof(out)), 1);
	CHECK_STR(json_error(out, &o), "argument 1:1:13: access must be letters of 'rwm', not "
		  "'r\\x1b]0;pwned\\x07'");
	json_decref(o);
}

TEST(errors_show_escape_sequences_of_config_json_strings_visibly)
{
	char path[] = "/tmp/devcg-unit-config-XXXXXX", args[256], err[4096];
	const char *json = "{\"linux\": {\"resources\": {\"devices\": [\n"
			   "  {\"allow\": true, \"type\": \"\\u001b[2J\\u001b]0;pwned\\u0007\"}]}}}\n";
	int fd = mkstemp(path);

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	CHECK(fd >= 0 && write(fd, json, strlen(json)) == (ssize_t)strlen(json));
	close(fd);
	snprintf(args, sizeof(args), "compile -f %s", path);
	CHECK_INT(run_to(args, "/dev/null", err, sizeof(err)), 1);
	CHECK(!strchr(err, '\033') && !strchr(err, '\007'));
	CHECK_MSG(strstr(err, ":2:27: \"type\" must be \"a\", \"b\" or \"c\", not "
			 "\"\\x1b[2J\\x1b]0;pwned\\x07\"\n"), "%s", err);
	unlink(path);
}

TEST(output_to_a_full_disk_fails_with_one_line_on_stderr)
{
	char err[4096], big[] = "/tmp/devcg-unit-big-XXXXXX", args[256];
	int fd = mkstemp(big), i;
	FILE *f;

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	CHECK(fd >= 0 && (f = fdopen(fd, "w")));
	for (i = 0; i < 2000; i++) /* far more than one stdio buffer of output */
		fprintf(f, "deny c %d:%d rwm\n", 1 + i / 100, i % 100);
	CHECK(!fclose(f));
	/* controls: the same commands succeed where writing works */
	CHECK_INT(run_to("compile 'deny a'", "/dev/null", err, sizeof(err)), 0);
	CHECK_STR(err, "");
	snprintf(args, sizeof(args), "compile -f %s", big);
	CHECK_INT(run_to(args, "/dev/null", err, sizeof(err)), 0);

	CHECK_INT(run_to("compile 'deny a'", "/dev/full", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg compile: cannot write to standard output: No space left on device\n");
	CHECK_INT(run_to("-j compile 'deny a'", "/dev/full", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg compile: cannot write to standard output: No space left on device\n");
	/* a cut output could parse as a policy without its last rules */
	CHECK_INT(run_to(args, "/dev/full", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg compile: cannot write to standard output: No space left on device\n");
	CHECK_INT(run_to("--help", "/dev/full", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg: cannot write to standard output: No space left on device\n");
	CHECK_INT(run_to("compile --help", "/dev/full", err, sizeof(err)), 1);
	/* check's 1 is "deny": a failure to say so is 3 (control: 1 to /dev/null) */
	snprintf(args, sizeof(args), "check --rules %s c 1:3 r", big);
	CHECK_INT(run_to(args, "/dev/null", err, sizeof(err)), 1);
	CHECK_INT(run_to(args, "/dev/full", err, sizeof(err)), 3);
	CHECK_STR(err, "devcg check: cannot write to standard output: No space left on device\n");
	CHECK_INT(run_to("-j check --rules /dev/stdin c 1:3 r", "/dev/full", err, sizeof(err)), 3);
	unlink(big);
}

TEST(a_rules_file_that_is_a_directory_or_a_device_says_so)
{
	char err[4096];

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	CHECK_INT(run_to("compile -f /tmp", "/dev/null", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg compile: /tmp: is a directory\n");
	CHECK_INT(run_to("compile -f /dev/zero", "/dev/null", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg compile: /dev/zero: is a character device, not a file of rules\n");
	/* standard input stays whatever it is: here /dev/null, also by name */
	CHECK_INT(run_to("compile -f -", "/dev/null", err, sizeof(err)), 0);
	CHECK_INT(run_to("compile -f /dev/stdin", "/dev/null", err, sizeof(err)), 0);
	CHECK_STR(err, "");
}

TEST(allow_and_deny_refuse_a_rule_whose_own_verb_is_the_other)
{
	char err[4096];

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	/* refused when parsed, before the cgroup is looked at */
	CHECK_INT(run_to("allow /no/such/cgroup ' deny c 1:9 rwm'", "/dev/null", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg allow: RULE:1:2: the rule says 'deny' where only 'allow' rules are accepted\n");
	CHECK_INT(run_to("allow /no/such/cgroup \"$(printf '\\tdeny c 1:9 rwm')\"", "/dev/null", err,
			 sizeof(err)), 1);
	CHECK_STR(err, "devcg allow: RULE:1:2: the rule says 'deny' where only 'allow' rules are accepted\n");
	CHECK_INT(run_to("deny /no/such/cgroup '  allow a'", "/dev/null", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg deny: RULE:1:3: the rule says 'allow' where only 'deny' rules are accepted\n");
	/* control: a rule that agrees (or has no verb) gets as far as the cgroup */
	CHECK_INT(run_to("allow /no/such/cgroup ' allow c 1:9 rwm'", "/dev/null", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg allow: /no/such/cgroup: No such file or directory\n");
	CHECK_INT(run_to("deny /no/such/cgroup 'c 1:9 rwm'", "/dev/null", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg deny: /no/such/cgroup: No such file or directory\n");
}

/* `SOURCE | devcg oci-hook --runtime runc`: its standard error in ERR, its
 * exit code back. */
static int hook_stdin(const char *source, char *err, size_t len)
{
	char cmd[1024];
	size_t n = 0, got;
	FILE *p;
	int st;

	snprintf(cmd, sizeof(cmd), "%s | %s oci-hook --runtime runc 2>&1 >/dev/null", source, devcg());
	p = popen(cmd, "r");
	CHECK(p != NULL);
	while (n + 1 < len && (got = fread(err + n, 1, len - n - 1, p)) > 0)
		n += got;
	err[n] = '\0';
	st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(oci_hook_says_a_state_on_stdin_over_the_limit_is_too_large)
{
	char err[4096];

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	CHECK_INT(hook_stdin("head -c 41943040 /dev/zero", err, sizeof(err)), 1);
	CHECK_STR(err, "devcg oci-hook: the container state on standard input is too large (limit 16777216 bytes)\n");
	/* control: at the limit it is read, and is no JSON */
	CHECK_INT(hook_stdin("head -c 16777216 /dev/zero | tr '\\0' ' '", err, sizeof(err)), 1);
	CHECK_MSG(strstr(err, "container state: invalid JSON") && !strstr(err, "too large"), "%s", err);
}

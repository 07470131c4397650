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

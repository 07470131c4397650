// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg_oci_hook() up to the cgroup lookup: the container state, the
 * bundle and the extra rules, and their errors (nothing here can attach:
 * every case fails before, the last ones at the lookup of the test's own
 * cgroup, which is refused). The hook on real cgroups and containers is in
 * tests/kernel/test_runtimes.c. */
#include "testutil.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static void hook_err_at(const char *file, int line, const char *state, struct devcg_oci_hook_opts *o,
			int code, const char *msg)
{
	struct devcg_error err = { 0 };
	int ret = devcg_oci_hook(state, strlen(state), o, &err);

	if (ret != code || err.code != code)
		test_fail(file, line, "returned %d (%s), expected %d", ret, err.msg, code);
	if (msg && !strstr(err.msg, msg))
		test_fail(file, line, "message \"%s\" does not say \"%s\"", err.msg, msg);
	if (strchr(err.msg, '\n'))
		test_fail(file, line, "message of several lines: \"%s\"", err.msg);
}
#define HOOK_ERR(state, o, code, msg) hook_err_at(__FILE__, __LINE__, state, o, code, msg)

/* A bundle in the scratch directory with a config.json of `runc spec`'s list. */
static const char *bundle(void)
{
	write_scratch("config.json", "{\"ociVersion\": \"1.0.2\", \"linux\": {\"resources\": "
				     "{\"devices\": [{\"allow\": false, \"access\": \"rwm\"}]}}}");
	return scratch();
}

static const char *state_of(int pid, const char *bundle_dir, const char *annotations)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "{\"ociVersion\": \"1.0.2\", \"id\": \"ctr\", \"pid\": %d, \"bundle\": \"%s\"%s%s}",
		 pid, bundle_dir, annotations ? ", \"annotations\": " : "", annotations ? annotations : "");
	return buf;
}

UTEST(oci_hook_refuses_a_state_that_is_not_one)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);

	HOOK_ERR("{\"ociVersion\": ", &o, -EINVAL, "container state: invalid JSON");
	HOOK_ERR("[1]", &o, -EINVAL, "container state: not a JSON object");
	HOOK_ERR("\"x\"", &o, -EINVAL, "container state: invalid JSON");
	HOOK_ERR("{\"id\": \"c\", \"pid\": 1, \"bundle\": \"/b\"}", &o, -EINVAL, "no \"ociVersion\"");
	HOOK_ERR("{\"ociVersion\": \"1\", \"pid\": 1, \"bundle\": \"/b\"}", &o, -EINVAL, "no \"id\"");
	HOOK_ERR("{\"ociVersion\": \"1\", \"id\": \"c\", \"bundle\": \"/b\"}", &o, -EINVAL,
		 "container state of c: no \"pid\" of a process");
	HOOK_ERR("{\"ociVersion\": \"1\", \"id\": \"c\", \"pid\": -4, \"bundle\": \"/b\"}", &o, -EINVAL, "no \"pid\"");
	HOOK_ERR("{\"ociVersion\": \"1\", \"id\": \"c\", \"pid\": 1, \"bundle\": \"b\"}", &o, -EINVAL,
		 "no absolute \"bundle\"");
	HOOK_ERR("{\"ociVersion\": \"1\", \"id\": \"c\", \"pid\": 1, \"bundle\": \"/b\", \"annotations\": []}", &o,
		 -EINVAL, "\"annotations\" must be an object");
}

UTEST(oci_hook_says_a_process_that_is_gone_is_gone)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);
	pid_t pid = fork();

	CHECK(pid >= 0);
	if (pid == 0)
		_exit(0);
	CHECK(waitpid(pid, NULL, 0) == pid);
	HOOK_ERR(state_of(pid, bundle(), NULL), &o, -ESRCH, "is gone");
}

UTEST(oci_hook_names_a_missing_bundle)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_CRUN);

	HOOK_ERR(state_of(getpid(), "/nonexistent-bundle", NULL), &o, -ENOENT,
		 "container ctr: /nonexistent-bundle/config.json: No such file or directory");
}

UTEST(oci_hook_reads_the_annotation_rules_split_at_semicolons)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);

	HOOK_ERR(state_of(getpid(), bundle(), "{\"io.devcg.rules\": \"allow c 1:3 r; allow q 1:2 r\"}"), &o,
		 -EINVAL, "annotation io.devcg.rules:2:");
	HOOK_ERR(state_of(getpid(), bundle(), "{\"io.devcg.rules\": 7}"), &o, -EINVAL,
		 "annotation io.devcg.rules: not a string");
	/* another key: that one is read, the usual one is not */
	o.annotation = "org.example.devices";
	HOOK_ERR(state_of(getpid(), bundle(), "{\"org.example.devices\": \"deny q\", \"io.devcg.rules\": \"x\"}"),
		 &o, -EINVAL, "annotation org.example.devices:1:");
	/* none at all: the rules are fine, and the lookup refuses the test's
	 * own cgroup (or the root, where the test runs there) */
	o.annotation = "";
	HOOK_ERR(state_of(getpid(), bundle(), "{\"io.devcg.rules\": \"x\"}"), &o, -EPERM, "cgroup");
}

UTEST(oci_hook_auto_needs_a_runtime_as_its_parent)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_AUTO);

	HOOK_ERR(state_of(getpid(), bundle(), NULL), &o, -EINVAL,
		 "cannot tell the runtime that runs this hook");
}

UTEST(oci_hook_applies_the_runtime_profile_to_the_bundle)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);

	write_scratch("config.json", "{\"ociVersion\": \"1.0.2\", \"linux\": {\"resources\": {\"devices\": "
				     "[{\"allow\": false}]}}}");
	HOOK_ERR(state_of(getpid(), scratch(), NULL), &o, -EINVAL, "\"access\" is required by the runc profile");
}

/* ---- the annotation may only narrow, unless the hook's configuration says ---- */

/* The hook got past the rules: its lookup refuses the test's own cgroup
 * (or the root, where the test runs there). */
static void hook_past_rules_at(const char *file, int line, const char *state, struct devcg_oci_hook_opts *o)
{
	struct devcg_error err = { 0 };
	int ret = devcg_oci_hook(state, strlen(state), o, &err);

	if (ret != -EPERM || !strstr(err.msg, "cgroup") || strstr(err.msg, "widens"))
		test_fail(file, line, "returned %d (%s), expected the lookup's refusal of this cgroup", ret,
			  err.msg);
}
#define HOOK_PAST_RULES(state, o) hook_past_rules_at(__FILE__, __LINE__, state, o)

static const char *annotated(const char *rules)
{
	static char buf[512];

	snprintf(buf, sizeof(buf), "{\"io.devcg.rules\": \"%s\"}", rules);
	return state_of(getpid(), bundle(), buf);
}

UTEST(oci_hook_takes_an_annotation_that_only_narrows_the_policy)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);

	HOOK_PAST_RULES(annotated("deny c 1:3 rwm"), &o);
	HOOK_PAST_RULES(annotated("deny a"), &o);
	/* an allow that runc's defaults allow already, after a deny */
	HOOK_PAST_RULES(annotated("deny a; allow c 1:3 rw; allow c 136:4 rwm"), &o);
	HOOK_PAST_RULES(annotated("allow c 1:9 rwm"), &o);
}

UTEST(oci_hook_refuses_an_annotation_that_widens_the_policy_by_default)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);

	HOOK_ERR(annotated("allow c 10:229 rwm"), &o, -EPERM,
		 "annotation io.devcg.rules widens the policy: it allows 'allow c 10:229 r'");
	HOOK_ERR(annotated("allow a"), &o, -EPERM, "widens the policy");
	HOOK_ERR(annotated("deny c 1:3 rwm; allow b 8:* r"), &o, -EPERM, "it allows 'allow b 8:0 r'");
	/* a default's access widened */
	HOOK_ERR(annotated("allow c *:* r"), &o, -EPERM, "widens the policy");
}

UTEST(oci_hook_control_a_widening_annotation_is_taken_with_annotation_may_widen)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC, .annotation_may_widen = true);

	HOOK_PAST_RULES(annotated("allow c 10:229 rwm"), &o);
	HOOK_PAST_RULES(annotated("allow a"), &o);
}

/* Allow rules that the hook's own rules grant merge with an annotation's
 * into an access no one rule of the policy before allowed: c 42:3 r and
 * c 42:* w allow r and w, never rw in one open (cgroup v1 semantics). */
UTEST(oci_hook_refuses_an_annotation_whose_allow_merges_into_a_wider_access)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);
	struct devcg_rules *extra = devcg_rules_new();

	CHECK(extra);
	CHECK(!devcg_rules_parse_rule(extra, "allow c 42:3 r", NULL, NULL, NULL));
	CHECK(!devcg_rules_parse_rule(extra, "allow c 42:* w", NULL, NULL, NULL));
	o.rules = extra;
	HOOK_PAST_RULES(annotated("allow c 42:7 w"), &o); /* allowed before */
	HOOK_ERR(annotated("allow c 42:3 w"), &o, -EPERM, "it allows 'allow c 42:3 rw'");
	devcg_rules_free(extra);
}

UTEST(oci_hook_takes_a_widening_annotation_that_the_allow_list_lists_and_no_other)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);
	DEVCG_OPTS(devcg_parse_opts, allow, .verb = DEVCG_VERB_ALLOW);
	struct devcg_rules *listed = devcg_rules_new();

	CHECK(listed);
	CHECK(!devcg_rules_parse_rule(listed, "c 10:229 rwm", NULL, &allow, NULL));
	CHECK(!devcg_rules_parse_rule(listed, "c 195:* rw", NULL, &allow, NULL));
	o.annotation_allow = listed;
	HOOK_PAST_RULES(annotated("allow c 10:229 rwm"), &o);
	HOOK_PAST_RULES(annotated("allow c 195:0 rw; allow c 195:255 r"), &o);
	HOOK_ERR(annotated("allow c 10:228 r"), &o, -EPERM, "it allows 'allow c 10:228 r'");
	/* (m alone runc allows everywhere: c *:* m) */
	HOOK_ERR(annotated("allow c 195:0 rwm"), &o, -EPERM, "it allows 'allow c 195:0 rm'");
	HOOK_ERR(annotated("allow c 195:* rw; allow c 10:229 rwm; allow b 8:0 r"), &o, -EPERM,
		 "allow-list does not list");
	devcg_rules_free(listed);
}

/* ---- the bundle's config.json is the container's: checked before it is read ---- */

/* In a child (with an alarm, so that a hang fails instead of hanging the
 * suite): the hook's error on the bundle of the scratch directory must
 * say WANT; 0 when it does. */
static void hook_bundle_refused_at(const char *file, int line, const char *want)
{
	DEVCG_OPTS(devcg_oci_hook_opts, o, .runtime = DEVCG_RUNTIME_RUNC);
	const char *state = state_of(getpid(), scratch(), NULL);
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		test_fail(file, line, "fork: %s", strerror(errno));
	if (pid == 0) {
		struct devcg_error err = { 0 };
		int ret;

		alarm(20);
		ret = devcg_oci_hook(state, strlen(state), &o, &err);
		if (ret >= 0 || !strstr(err.msg, want) || strchr(err.msg, '\n')) {
			fprintf(stderr, "returned %d: %s\n", ret, err.msg);
			_exit(1);
		}
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		test_fail(file, line, "waitpid: %s", strerror(errno));
	if (WIFSIGNALED(status))
		test_fail(file, line, "the hook hung or crashed (signal %d) instead of saying \"%s\"",
			  WTERMSIG(status), want);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		test_fail(file, line, "the hook's error does not say \"%s\"", want);
}
#define HOOK_BUNDLE_REFUSED(want) hook_bundle_refused_at(__FILE__, __LINE__, want)

UTEST(oci_hook_refuses_a_fifo_config_json_without_opening_it_for_reading)
{
	char path[300];

	snprintf(path, sizeof(path), "%s/config.json", scratch());
	CHECK(!mkfifo(path, 0600));
	HOOK_BUNDLE_REFUSED("config.json: is a FIFO, not a regular file");
}

UTEST(oci_hook_refuses_a_config_json_that_is_a_symbolic_link)
{
	char path[300], target[300];

	snprintf(target, sizeof(target), "%s/elsewhere.json", scratch());
	snprintf(path, sizeof(path), "%s/config.json", scratch());
	write_scratch("elsewhere.json", "{\"ociVersion\": \"1.0.2\"}");
	CHECK(!symlink(target, path));
	HOOK_BUNDLE_REFUSED("config.json: is a symbolic link");
}

UTEST(oci_hook_refuses_a_config_json_over_the_limit_by_its_size_before_reading_it)
{
	char path[300];
	int fd;

	snprintf(path, sizeof(path), "%s/config.json", scratch());
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	/* sparse: 600 MB that take no room */
	CHECK(!ftruncate(fd, 600000000));
	close(fd);
	HOOK_BUNDLE_REFUSED("config.json: too large (600000000 bytes, limit 67108864)");
	/* control: at the limit it is read (and is no JSON: zero bytes) */
	CHECK(!truncate(path, DEVCG_OCI_MAX_CONFIG));
	HOOK_BUNDLE_REFUSED("config.json:1:");
}

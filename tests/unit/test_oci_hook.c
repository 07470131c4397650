// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg_oci_hook() up to the cgroup lookup: the container state, the
 * bundle and the extra rules, and their errors (nothing here can attach:
 * every case fails before, the last ones at the lookup of the test's own
 * cgroup, which is refused). The hook on real cgroups and containers is in
 * tests/kernel/test_runtimes.c. */
#include "testutil.h"

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

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Runtime profiles: a config.json parsed with a runtime gives the list that
 * runtime installs (runc 1.1.5, crun 1.8.1), or an error where the runtime
 * refuses the list or no cgroup v1 policy reproduces its program. The real
 * runtimes are compared with these lists in tests/kernel/test_runtimes.c. */
#include "testutil.h"

/* A config.json with linux.resources.devices DEVICES (JSON text, or NULL
 * for none) and linux.devices LINUX_DEVICES (or NULL). */
static const char *config(const char *devices, const char *linux_devices)
{
	static char buf[8192];
	char res[6000] = "", devs[2000] = "";

	if (devices)
		snprintf(res, sizeof(res), "\"resources\": {\"devices\": %s}", devices);
	if (linux_devices)
		snprintf(devs, sizeof(devs), "\"devices\": %s%s", linux_devices, devices ? ", " : "");
	snprintf(buf, sizeof(buf),
		 "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},\n"
		 " \"linux\": {%s%s}}\n", devs, res);
	return buf;
}

#define DENY_ALL "{\"allow\": false, \"access\": \"rwm\"}"

static struct devcg_rules *profile(enum devcg_runtime rt, const char *text)
{
	DEVCG_OPTS(devcg_parse_opts, o, .runtime = rt);

	return PARSE_OK_OPTS(text, &o);
}

static void profile_err_at(const char *file, int line, enum devcg_runtime rt, const char *text,
			   int code, const char *msg)
{
	DEVCG_OPTS(devcg_parse_opts, o, .runtime = rt);

	parse_err_at(file, line, text, strlen(text), &o, code, msg);
}
#define PROFILE_ERR(rt, text, code, msg) profile_err_at(__FILE__, __LINE__, rt, text, code, msg)

/* The decision of the policy of RULES on one request. */
static int decide(const struct devcg_rules *rules, uint8_t type, uint32_t major, uint32_t minor,
		  uint8_t access)
{
	struct devcg_policy *p = devcg_policy_new();
	int ret;

	CHECK(p && !devcg_policy_apply_all(p, rules, NULL));
	ret = devcg_policy_check(p, type, major, minor, access, NULL, NULL);
	devcg_policy_free(p);
	return ret;
}

UTEST(runtime_profile_config_helper_writes_valid_json)
{
	struct devcg_rules *r = PARSE_OK(config("[" DENY_ALL "]", "[]"));

	CHECK_INT(devcg_rules_count(r), 1);
	devcg_rules_free(r);
	r = PARSE_OK(config(NULL, NULL));
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(runc_profile_is_deny_all_then_the_resources_then_runcs_defaults_in_its_order)
{
	struct devcg_rules *r = profile(DEVCG_RUNTIME_RUNC,
					config("[" DENY_ALL ", {\"allow\": true, \"type\": \"c\", \"major\": 10, "
					       "\"minor\": 229, \"access\": \"rwm\"}]", NULL));

	CHECK_INT(devcg_rules_count(r), 14);
	CHECK_RULE(r, 0, DENY, DEVCG_ALL, ANY, ANY, RWM); /* runc's emulator starts there */
	CHECK_RULE(r, 1, DENY, DEVCG_ALL, ANY, ANY, RWM);
	CHECK_RULE(r, 2, ALLOW, DEVCG_CHAR, 10, 229, RWM);
	CHECK_RULE(r, 3, ALLOW, DEVCG_CHAR, ANY, ANY, M);
	CHECK_RULE(r, 4, ALLOW, DEVCG_BLOCK, ANY, ANY, M);
	CHECK_RULE(r, 5, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	CHECK_RULE(r, 6, ALLOW, DEVCG_CHAR, 1, 8, RWM);
	CHECK_RULE(r, 7, ALLOW, DEVCG_CHAR, 1, 7, RWM);
	CHECK_RULE(r, 8, ALLOW, DEVCG_CHAR, 5, 0, RWM);
	CHECK_RULE(r, 9, ALLOW, DEVCG_CHAR, 1, 5, RWM);
	CHECK_RULE(r, 10, ALLOW, DEVCG_CHAR, 1, 9, RWM);
	CHECK_RULE(r, 11, ALLOW, DEVCG_CHAR, 136, ANY, RWM);
	CHECK_RULE(r, 12, ALLOW, DEVCG_CHAR, 5, 2, RWM);
	CHECK_RULE(r, 13, ALLOW, DEVCG_CHAR, 10, 200, RWM);
	devcg_rules_free(r);
}

UTEST(crun_profile_is_deny_all_then_the_resources_then_cruns_defaults)
{
	struct devcg_rules *r = profile(DEVCG_RUNTIME_CRUN, config("[" DENY_ALL "]", NULL));

	CHECK_INT(devcg_rules_count(r), 13);
	CHECK_RULE(r, 0, DENY, DEVCG_ALL, ANY, ANY, RWM);
	CHECK_RULE(r, 1, DENY, DEVCG_ALL, ANY, ANY, RWM);
	CHECK_RULE(r, 2, ALLOW, DEVCG_CHAR, ANY, ANY, M);
	CHECK_RULE(r, 3, ALLOW, DEVCG_BLOCK, ANY, ANY, M);
	CHECK_RULE(r, 4, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	CHECK_RULE(r, 5, ALLOW, DEVCG_CHAR, 1, 8, RWM);
	CHECK_RULE(r, 6, ALLOW, DEVCG_CHAR, 1, 7, RWM);
	CHECK_RULE(r, 7, ALLOW, DEVCG_CHAR, 5, 0, RWM);
	CHECK_RULE(r, 8, ALLOW, DEVCG_CHAR, 1, 5, RWM);
	CHECK_RULE(r, 9, ALLOW, DEVCG_CHAR, 1, 9, RWM);
	CHECK_RULE(r, 10, ALLOW, DEVCG_CHAR, 5, 1, RWM);
	CHECK_RULE(r, 11, ALLOW, DEVCG_CHAR, 136, ANY, RWM);
	CHECK_RULE(r, 12, ALLOW, DEVCG_CHAR, 5, 2, RWM);
	devcg_rules_free(r);
}

UTEST(runtime_profiles_differ_on_tun_and_console)
{
	struct devcg_rules *runc = profile(DEVCG_RUNTIME_RUNC, config("[" DENY_ALL "]", NULL));
	struct devcg_rules *crun = profile(DEVCG_RUNTIME_CRUN, config("[" DENY_ALL "]", NULL));

	CHECK_INT(decide(runc, DEVCG_CHAR, 10, 200, R | W), 1);
	CHECK_INT(decide(crun, DEVCG_CHAR, 10, 200, R | W), 0);
	CHECK_INT(decide(runc, DEVCG_CHAR, 5, 1, R | W), 0);
	CHECK_INT(decide(crun, DEVCG_CHAR, 5, 1, R | W), 1);
	devcg_rules_free(runc);
	devcg_rules_free(crun);
}

UTEST(runc_profile_starts_from_deny_all_when_the_file_has_no_deny_a)
{
	struct devcg_rules *r = profile(DEVCG_RUNTIME_RUNC, config(NULL, NULL));

	CHECK_INT(decide(r, DEVCG_CHAR, 42, 0, R), 0);
	CHECK_INT(decide(r, DEVCG_CHAR, 1, 3, R | W), 1);
	devcg_rules_free(r);
}

UTEST(crun_profile_of_no_resources_rules_allows_every_device)
{
	/* crun writes nothing and loads no program then */
	struct devcg_rules *r = profile(DEVCG_RUNTIME_CRUN, config(NULL, NULL));

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_ALL, ANY, ANY, RWM);
	devcg_rules_free(r);
	r = profile(DEVCG_RUNTIME_CRUN, config("[]", NULL));
	CHECK_INT(decide(r, DEVCG_BLOCK, 8, 0, R | W), 1);
	devcg_rules_free(r);
}

UTEST(runtime_profiles_put_defaults_last_so_a_deny_of_dev_null_is_undone)
{
	const char *text = config("[" DENY_ALL ", {\"allow\": false, \"type\": \"c\", \"major\": 1, "
				  "\"minor\": 3, \"access\": \"rwm\"}]", NULL);

	for (int rt = DEVCG_RUNTIME_RUNC; rt <= DEVCG_RUNTIME_CRUN; rt++) {
		struct devcg_rules *r = profile((enum devcg_runtime)rt, text);

		CHECK_INT(decide(r, DEVCG_CHAR, 1, 3, R | W), 1);
		devcg_rules_free(r);
	}
}

UTEST(runc_profile_drops_a_default_that_linux_devices_names_and_linux_devices_get_no_rule)
{
	const char *text = config("[" DENY_ALL "]",
				  "[{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 10, \"minor\": 229},"
				  " {\"path\": \"/dev/zero\", \"type\": \"c\", \"major\": 1, \"minor\": 5}]");
	struct devcg_rules *runc = profile(DEVCG_RUNTIME_RUNC, text);
	struct devcg_rules *crun = profile(DEVCG_RUNTIME_CRUN, text);

	CHECK_INT(decide(runc, DEVCG_CHAR, 10, 229, R), 0);
	CHECK_INT(decide(crun, DEVCG_CHAR, 10, 229, R), 0);
	CHECK_INT(decide(runc, DEVCG_CHAR, 1, 5, R), 0); /* runc dropped its /dev/zero */
	CHECK_INT(decide(crun, DEVCG_CHAR, 1, 5, R), 1);
	CHECK_INT(devcg_rules_count(runc), 12); /* two deny a, ten defaults */
	devcg_rules_free(runc);
	devcg_rules_free(crun);
}

UTEST(runc_profile_refuses_a_hole_in_a_wildcard_as_runc_does)
{
	PROFILE_ERR(DEVCG_RUNTIME_RUNC,
		    config("[" DENY_ALL ",\n{\"allow\": true, \"type\": \"c\", \"major\": 42, \"access\": \"rwm\"},\n"
			   "{\"allow\": false, \"type\": \"c\", \"major\": 42, \"minor\": 1, \"access\": \"r\"}]", NULL),
		    -EINVAL,
		    "in:4:1: runc refuses this list: 'deny c 42:1 r' (linux.resources.devices[2]) would punch "
		    "a hole in the wildcard exception 'c 42:* rwm' (runc's devices emulator), so the container "
		    "would not start");
}

UTEST(runc_profile_refuses_a_default_that_punches_a_hole)
{
	PROFILE_ERR(DEVCG_RUNTIME_RUNC,
		    config("[{\"allow\": true, \"access\": \"rwm\"}, {\"allow\": false, \"type\": \"c\", "
			   "\"major\": 1, \"access\": \"rwm\"}]", NULL),
		    -EINVAL,
		    "in: runc refuses this list: 'allow c 1:3 rwm' (a default of runc) would punch a hole in "
		    "the wildcard exception 'c 1:* rwm' (runc's devices emulator), so the container would not "
		    "start");
}

UTEST(runc_profile_of_default_allow_with_whole_denies_is_given)
{
	struct devcg_rules *r = profile(DEVCG_RUNTIME_RUNC,
					config("[{\"allow\": true, \"access\": \"rwm\"}, {\"allow\": false, \"type\": "
					       "\"c\", \"major\": 42, \"access\": \"rwm\"}]", NULL));

	CHECK_INT(decide(r, DEVCG_CHAR, 42, 1, M), 0);
	CHECK_INT(decide(r, DEVCG_CHAR, 43, 1, R | W | M), 1);
	devcg_rules_free(r);
}

UTEST(runc_profile_refuses_a_partial_deny_on_default_allow_that_its_program_decides_otherwise)
{
	/* runc's program denies only requests within the deny's access (w),
	 * v1 any request sharing a bit with it (wm) */
	PROFILE_ERR(DEVCG_RUNTIME_RUNC,
		    config("[{\"allow\": true, \"access\": \"rwm\"}, {\"allow\": false, \"type\": \"c\", "
			   "\"major\": 42, \"minor\": 1, \"access\": \"w\"}]", NULL),
		    -EINVAL,
		    "in: runc's device program allows c 42:1 wm (no rule matches it), where the same list in "
		    "cgroup v1 semantics denies it; devcg cannot reproduce runc's program for this list");
}

UTEST(crun_profile_refuses_split_access_that_its_program_does_not_merge)
{
	PROFILE_ERR(DEVCG_RUNTIME_CRUN,
		    config("[" DENY_ALL ", {\"allow\": true, \"type\": \"c\", \"major\": 42, \"minor\": 0, "
			   "\"access\": \"r\"}, {\"allow\": true, \"type\": \"c\", \"major\": 42, \"minor\": 0, "
			   "\"access\": \"w\"}]", NULL),
		    -EINVAL,
		    "in: crun's device program denies c 42:0 rw (its first matching rule is 'deny a' "
		    "(linux.resources.devices[0])), where the same list in cgroup v1 semantics allows it; "
		    "devcg cannot reproduce crun's program for this list");
}

UTEST(crun_profile_refuses_default_allow_with_a_deny_its_defaults_override)
{
	PROFILE_ERR(DEVCG_RUNTIME_CRUN,
		    config("[{\"allow\": true, \"access\": \"rwm\"}, {\"allow\": false, \"type\": \"b\", "
			   "\"major\": 8, \"access\": \"rwm\"}]", NULL),
		    -EINVAL, NULL);
}

UTEST(crun_profile_lets_a_later_resources_rule_win_as_crun_does)
{
	struct devcg_rules *r = profile(DEVCG_RUNTIME_CRUN,
					config("[" DENY_ALL ", {\"allow\": true, \"type\": \"c\", \"major\": 10, "
					       "\"minor\": 229, \"access\": \"rwm\"}, {\"allow\": false, \"type\": \"c\", "
					       "\"major\": 10, \"minor\": 229, \"access\": \"rwm\"}]", NULL));

	CHECK_INT(decide(r, DEVCG_CHAR, 10, 229, R), 0);
	devcg_rules_free(r);
}

UTEST(runtime_profiles_require_access_in_every_rule)
{
	PROFILE_ERR(DEVCG_RUNTIME_RUNC,
		    config("[{\"allow\": false}]", NULL), -EINVAL,
		    "in:2:38: \"access\" is required by the runc profile (runc refuses a rule without it)");
	PROFILE_ERR(DEVCG_RUNTIME_CRUN,
		    config("[{\"allow\": false, \"access\": \"\"}]", NULL), -EINVAL,
		    "in:2:65: \"access\" is required by the crun profile (crun's program would never match it)");
}

UTEST(runtime_profiles_need_a_whole_config_json)
{
	PROFILE_ERR(DEVCG_RUNTIME_RUNC, "{\"devices\": [" DENY_ALL "]}", -EINVAL,
		    "in:1:1: the runc profile needs a whole config.json (with a \"linux\" object)");
	PROFILE_ERR(DEVCG_RUNTIME_CRUN, "[" DENY_ALL "]", -EINVAL,
		    "in:1:1: the crun profile needs a whole config.json (with a \"linux\" object)");
	PROFILE_ERR(DEVCG_RUNTIME_RUNC, config("[]", "{}"), -EINVAL, NULL);
	PROFILE_ERR(DEVCG_RUNTIME_RUNC, config("[]", "[{\"type\": \"c\"}]"), -EINVAL, NULL);
	PROFILE_ERR(DEVCG_RUNTIME_AUTO, config("[]", NULL), -EINVAL,
		    "in: the runtime profile must be runc or crun");
}

UTEST(runtime_profiles_leave_rule_lines_alone)
{
	struct devcg_rules *r = profile(DEVCG_RUNTIME_RUNC, "allow c 10:229 rwm\n");

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 10, 229, RWM);
	devcg_rules_free(r);
}

UTEST(without_a_runtime_a_config_json_gives_only_its_resources)
{
	struct devcg_rules *r = PARSE_OK(config("[" DENY_ALL "]", "[{\"path\": \"/dev/fuse\"}]"));

	CHECK_INT(devcg_rules_count(r), 1);
	devcg_rules_free(r);
}

UTEST(runtime_profiles_take_at_most_1024_resources_rules)
{
	size_t cap = 1100 * 80;
	char *list = malloc(cap), *text;
	size_t len = 0;

	CHECK(list);
	len += (size_t)snprintf(list + len, cap - len, "[" DENY_ALL);
	for (int i = 1; i < 1025; i++)
		len += (size_t)snprintf(list + len, cap - len,
					",{\"allow\": true, \"type\": \"c\", \"major\": %d, \"minor\": %d, \"access\": \"r\"}",
					100 + i % 50, i);
	snprintf(list + len, cap - len, "]");
	text = malloc(cap + 256);
	CHECK(text);
	snprintf(text, cap + 256, "{\"ociVersion\": \"1.0.2\", \"linux\": {\"resources\": {\"devices\": %s}}}", list);
	PROFILE_ERR(DEVCG_RUNTIME_RUNC, text, -E2BIG, "in: 1025 device rules: a runc profile takes at most 1024");
	/* control: 1024 are taken */
	{
		char *last = text, *p;

		while ((p = strstr(last + 1, ",{")))
			last = p;
		strcpy(last, "]}}}");
	}
	devcg_rules_free(profile(DEVCG_RUNTIME_CRUN, text));
	free(list);
	free(text);
}

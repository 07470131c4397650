// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg replace --v1: moving a cgroup v1 devices cgroup between policies by
 * writes that never take away a device both policies allow.
 */
#include "devcg.h"
#include "harness.h"
#include "reader.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *const reader_paths[2] = { "/dev/urandom", "/dev/null" };

static struct devcg_policy *policy_of(const char *text)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();

	CHECK(!devcg_rules_parse(rules, text, strlen(text), "test", NULL, NULL));
	CHECK(!devcg_policy_apply_all(p, rules, NULL));
	devcg_rules_free(rules);
	return p;
}

static void need_v1(char *cg, size_t len)
{
	if (geteuid() != 0)
		SKIP("needs root");
	if (!scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	CHECK(!scratch_cgroup_create(scratch_devices_root(), cg, len));
}

/* A reader of /dev/urandom and /dev/null in CG. */
static struct readers *start(const char *cg)
{
	struct readers *r = readers_start(cg, 1, reader_paths, 2);

	CHECK(r != NULL);
	return r;
}

static uint64_t eperm(const struct readers *r)
{
	return readers_eperm(r, 0) + readers_eperm(r, 1);
}

TEST(v1_transitions_keep_devices_both_policies_allow)
{
	struct devcg_policy *a = policy_of("deny a\nallow c 1:* rwm\nallow c 5:1 rw\nallow b 7:0 r\n"),
			    *b = policy_of("deny a\nallow c 1:3 rwm\nallow c 1:9 r\nallow c 1:5 rwm\n"
					   "allow c 10:200 rwm\n");
	struct devcg_error err = { 0 };
	char cg[4096];
	struct readers *r;

	need_v1(cg, sizeof(cg));
	/* allow-all to deny-all: the one transition that needs a deny-all moment */
	CHECK_INT(devcg_replace_v1(cg, a, &err), DEVCG_V1_DENY_ALL_MOMENT);
	r = start(cg);
	for (int i = 0; i < 200; i++)
		CHECK_MSG(devcg_replace_v1(cg, i % 2 ? a : b, &err) == 0, "%s", err.msg);
	CHECK_INT(readers_stop(r), 0);
	CHECK(readers_opens(r, 0) > 500);
	CHECK_INT(eperm(r), 0);
	readers_free(r);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(v1_deny_all_replay_does_open_a_gap)
{
	/* the control for the test above: today's update on the same reader */
	const char *allows[] = { "c 1:3 rwm", "c 1:5 rwm", "c 1:9 rwm", "c 5:1 rw", "c 136:* rw" };
	char cg[4096];
	struct readers *r;
	int cycles = 0;

	need_v1(cg, sizeof(cg));
	CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
	for (size_t i = 0; i < 5; i++)
		CHECK(!scratch_cgroup_write(cg, "devices.allow", allows[i]));
	r = start(cg);
	while (!eperm(r) && cycles++ < 5000) {
		CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
		for (size_t i = 0; i < 5; i++)
			CHECK(!scratch_cgroup_write(cg, "devices.allow", allows[i]));
	}
	CHECK_INT(readers_stop(r), 0);
	CHECK(eperm(r) > 0);
	readers_free(r);
}

TEST(v1_transition_ends_in_exactly_the_target_list)
{
	struct devcg_policy *a = policy_of("deny a\nallow c 1:* rwm\nallow c 1:9 rw\n"),
			    *b = policy_of("deny a\nallow c 1:9 r\nallow b 8:* m\n");
	struct devcg_error err = { 0 };
	char cg[4096], list[4096];

	need_v1(cg, sizeof(cg));
	CHECK_INT(devcg_replace_v1(cg, a, &err), DEVCG_V1_DENY_ALL_MOMENT);
	CHECK_MSG(devcg_replace_v1(cg, b, &err) == 0, "%s", err.msg);
	CHECK(scratch_cgroup_read(cg, "devices.list", list, sizeof(list)) > 0);
	CHECK(strstr(list, "c 1:9 r\n") != NULL);
	CHECK(strstr(list, "b 8:* m\n") != NULL);
	CHECK(strstr(list, "c 1:*") == NULL);
	/* allow-default targets: 'a' to devices.allow, then the denies */
	{
		struct devcg_policy *c = policy_of("allow a\ndeny c 1:9 w\n");

		/* 'a' to devices.allow: reported as a moment of allow-all */
		CHECK_INT(devcg_replace_v1(cg, c, &err), DEVCG_V1_ALLOW_ALL_MOMENT);
		CHECK(scratch_cgroup_read(cg, "devices.list", list, sizeof(list)) > 0);
		CHECK_STR(list, "a *:* rwm\n");
		devcg_policy_free(c);
	}
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(v1_replace_refuses_a_directory_that_is_not_cgroup_v1)
{
	struct devcg_policy *a = policy_of("deny a\n");
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_replace_v1("/tmp", a, &err), -ENOTDIR);
	CHECK(strstr(err.msg, "not a cgroup v1") != NULL);
	devcg_policy_free(a);
}

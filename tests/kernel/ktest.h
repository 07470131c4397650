/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Helpers that several kernel test files share. */
#ifndef DEVCG_KTEST_H
#define DEVCG_KTEST_H

#include "devcg.h"
#include "harness.h"
#include "scratch.h"

#include <string.h>
#include <unistd.h>

/* Skip unless root with a cgroup2 mount. */
static inline void need_v2(void)
{
	if (geteuid() != 0)
		SKIP("needs root");
	if (!scratch_cgroup2_root())
		SKIP("no cgroup2 mount");
}

/* The policy of rule TEXT, or the test fails. */
static inline struct devcg_policy *policy_of(const char *text)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_error err = { 0 };

	CHECK(rules && p);
	CHECK_MSG(!devcg_rules_parse(rules, text, strlen(text), "test", NULL, &err), "%s", err.msg);
	CHECK_MSG(!devcg_policy_apply_all(p, rules, &err), "%s", err.msg);
	devcg_rules_free(rules);
	return p;
}

#endif

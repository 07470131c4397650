// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The rule list (validation on add) and the canonical text of a rule. */
#include "testutil.h"

UTEST(rules_new_list_is_empty_and_get_out_of_range_is_null)
{
	struct devcg_rules *r = devcg_rules_new();

	CHECK(r);
	CHECK_INT(devcg_rules_count(r), 0);
	CHECK(devcg_rules_get(r, 0) == NULL);
	CHECK_INT(devcg_rules_add(r, &sentinel_rule, NULL), 0);
	CHECK(devcg_rules_get(r, 0) != NULL);
	CHECK(devcg_rules_get(r, 1) == NULL);
	CHECK(devcg_rules_get(r, (size_t)-1) == NULL);
	devcg_rules_free(r);
	devcg_rules_free(NULL); /* like free(NULL) */
}

UTEST(rules_add_keeps_order_and_copies_the_rule)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_rule rule = { .verb = ALLOW, .type = DEVCG_CHAR, .access = R, .major = 1 };
	uint32_t i;

	for (i = 0; i < 1000; i++) {
		rule.minor = i;
		CHECK_INT(devcg_rules_add(r, &rule, NULL), 0);
	}
	rule.minor = 99999; /* the list holds copies */
	CHECK_INT(devcg_rules_count(r), 1000);
	for (i = 0; i < 1000; i++)
		CHECK_RULE(r, i, ALLOW, DEVCG_CHAR, 1, i, R);
	devcg_rules_free(r);
}

UTEST(rules_add_rejects_malformed_rules_and_keeps_the_list)
{
	static const struct devcg_rule bad[] = {
		{ .verb = 0, .type = DEVCG_CHAR, .access = R },
		{ .verb = 3, .type = DEVCG_CHAR, .access = R },
		{ .verb = ALLOW, .type = 0, .access = R },
		{ .verb = ALLOW, .type = 3, .access = R },
		{ .verb = ALLOW, .type = 8, .access = R },
		{ .verb = ALLOW, .type = DEVCG_CHAR, .access = 0 },
		{ .verb = ALLOW, .type = DEVCG_BLOCK, .access = 8 },
		{ .verb = ALLOW, .type = DEVCG_BLOCK, .access = 0xff },
		/* 'a' is only ever "every device, rwm" */
		{ .verb = DENY, .type = DEVCG_ALL, .access = RWM, .major = 1, .minor = ANY },
		{ .verb = DENY, .type = DEVCG_ALL, .access = RWM, .major = ANY, .minor = 0 },
		{ .verb = DENY, .type = DEVCG_ALL, .access = R, .major = ANY, .minor = ANY },
	};
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	size_t i;

	CHECK_INT(devcg_rules_add(r, &sentinel_rule, NULL), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_MSG(devcg_rules_add(r, &bad[i], &err) == -EINVAL, "bad rule %zu accepted", i);
		CHECK_STR(err.msg, "rule 1 is malformed");
		CHECK_INT(err.code, -EINVAL);
	}
	CHECK_INT(devcg_rules_count(r), 1);
	CHECK(rule_eq(devcg_rules_get(r, 0), &sentinel_rule));
	devcg_rules_free(r);
}

UTEST(rules_add_accepts_every_well_formed_rule)
{
	static const struct devcg_rule good[] = {
		{ .verb = ALLOW, .type = DEVCG_ALL, .access = RWM, .major = ANY, .minor = ANY },
		{ .verb = DENY, .type = DEVCG_CHAR, .access = M, .major = ANY, .minor = ANY },
		{ .verb = DENY, .type = DEVCG_BLOCK, .access = RWM, .major = 0, .minor = 0 },
		{ .verb = ALLOW, .type = DEVCG_BLOCK, .access = W, .major = 4294967294u, .minor = 1 },
	};
	struct devcg_rules *r = devcg_rules_new();
	size_t i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK_INT(devcg_rules_add(r, &good[i], NULL), 0);
	CHECK_INT(devcg_rules_count(r), 4);
	devcg_rules_free(r);
}

static void check_format(const char *file, int line, struct devcg_rule rule, const char *want)
{
	char buf[64];
	int n = devcg_rule_format(&rule, buf, sizeof(buf));

	if (strcmp(buf, want))
		test_fail(file, line, "formatted as \"%s\", expected \"%s\"", buf, want);
	if (n != (int)strlen(want))
		test_fail(file, line, "devcg_rule_format returned %d, expected %zu", n, strlen(want));
}
#define CHECK_FORMAT(want, ...) check_format(__FILE__, __LINE__, (struct devcg_rule){ __VA_ARGS__ }, want)

UTEST(rule_format_gives_the_canonical_text)
{
	CHECK_FORMAT("allow c 1:9 rwm", .verb = ALLOW, .type = DEVCG_CHAR, .major = 1, .minor = 9,
		     .access = RWM);
	CHECK_FORMAT("deny b 8:* r", .verb = DENY, .type = DEVCG_BLOCK, .major = 8, .minor = ANY,
		     .access = R);
	CHECK_FORMAT("allow c *:* w", .verb = ALLOW, .type = DEVCG_CHAR, .major = ANY, .minor = ANY,
		     .access = W);
	CHECK_FORMAT("deny c *:0 m", .verb = DENY, .type = DEVCG_CHAR, .major = ANY, .minor = 0,
		     .access = M);
	CHECK_FORMAT("allow b 4294967294:4294967294 wm", .verb = ALLOW, .type = DEVCG_BLOCK,
		     .major = 4294967294u, .minor = 4294967294u, .access = W | M);
}

UTEST(rule_format_writes_access_in_rwm_order)
{
	CHECK_FORMAT("allow c 1:3 rm", .verb = ALLOW, .type = DEVCG_CHAR, .major = 1, .minor = 3,
		     .access = M | R);
	CHECK_FORMAT("allow c 1:3 rw", .verb = ALLOW, .type = DEVCG_CHAR, .major = 1, .minor = 3,
		     .access = W | R);
}

UTEST(rule_format_of_type_a_is_the_bare_verb_and_a)
{
	CHECK_FORMAT("allow a", .verb = ALLOW, .type = DEVCG_ALL, .major = ANY, .minor = ANY,
		     .access = RWM);
	CHECK_FORMAT("deny a", .verb = DENY, .type = DEVCG_ALL, .major = ANY, .minor = ANY,
		     .access = RWM);
}

UTEST(rule_format_truncates_like_snprintf)
{
	struct devcg_rule rule = { .verb = ALLOW, .type = DEVCG_CHAR, .major = 10, .minor = 200,
				   .access = RWM };
	char buf[8];

	memset(buf, 'x', sizeof(buf));
	CHECK_INT(devcg_rule_format(&rule, buf, sizeof(buf)), (int)strlen("allow c 10:200 rwm"));
	CHECK_STR(buf, "allow c");
	CHECK_INT(devcg_rule_format(&rule, NULL, 0), (int)strlen("allow c 10:200 rwm"));
}

UTEST(access_format_writes_rwm_in_the_lists_order)
{
	char buf[4];

	CHECK_STR(devcg_access_format(DEVCG_ACC_ALL, buf), "rwm");
	CHECK_STR(devcg_access_format(DEVCG_ACC_MKNOD | DEVCG_ACC_READ, buf), "rm");
	CHECK_STR(devcg_access_format(DEVCG_ACC_WRITE, buf), "w");
	CHECK_STR(devcg_access_format(0, buf), "");
	/* bits that are no access are not written */
	CHECK_STR(devcg_access_format(8 | DEVCG_ACC_READ, buf), "r");
}

UTEST(rule_format_output_parses_back_to_the_same_rule)
{
	static const uint32_t nums[] = { 0, 1, 7, 254, 4294967294u, ANY };
	struct devcg_rules *out = devcg_rules_new();
	char text[64];
	size_t n = 0;
	unsigned v, t, a, i, j;

	for (v = ALLOW; v <= DENY; v++)
		for (t = DEVCG_BLOCK; t <= DEVCG_CHAR; t++)
			for (a = 1; a <= RWM; a++)
				for (i = 0; i < 6; i++)
					for (j = 0; j < 6; j++) {
						struct devcg_rule rule = {
							.verb = (uint8_t)v, .type = (uint8_t)t,
							.access = (uint8_t)a, .major = nums[i],
							.minor = nums[j],
						};

						devcg_rule_format(&rule, text, sizeof(text));
						CHECK_MSG(!devcg_rules_parse_rule(out, text, NULL,
										  NULL, NULL),
							  "\"%s\" does not parse", text);
						CHECK_MSG(rule_eq(devcg_rules_get(out, n++), &rule),
							  "\"%s\" parses to another rule", text);
					}
	for (v = ALLOW; v <= DENY; v++) {
		struct devcg_rule rule = { .verb = (uint8_t)v, .type = DEVCG_ALL, .access = RWM,
					   .major = ANY, .minor = ANY };

		devcg_rule_format(&rule, text, sizeof(text));
		CHECK_INT(devcg_rules_parse_rule(out, text, NULL, NULL, NULL), 0);
		CHECK(rule_eq(devcg_rules_get(out, n++), &rule));
	}
	devcg_rules_free(out);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Policy semantics, as security/device_cgroup.c: devcgroup_update_access()
 * with dev_exception_add()/dev_exception_rm() for writes, and
 * match_exception() (default deny) / match_exception_partial() (default
 * allow) for decisions. */
#include "testutil.h"

#define C DEVCG_CHAR
#define B DEVCG_BLOCK

/* ---- writes ------------------------------------------------------------------ */

UTEST(fresh_policy_allows_every_device_and_access)
{
	struct devcg_policy *p = devcg_policy_new();
	uint8_t a;

	CHECK(p);
	CHECK(devcg_policy_default_allow(p));
	CHECK_INT(devcg_policy_count(p), 0);
	CHECK_EXCEPTIONS(p, "");
	for (a = 0; a <= RWM; a++) {
		CHECK_ALLOWED(p, C, 1, 3, a);
		CHECK_ALLOWED(p, B, 8, 0, a);
		CHECK_ALLOWED(p, C, 4294967294u, 4294967294u, a);
	}
	devcg_policy_free(p);
	devcg_policy_free(NULL);
}

UTEST(deny_a_sets_default_deny_and_clears_the_list)
{
	struct devcg_policy *p = POLICY_OF("deny c 1:3 r\ndeny b *:* m\ndeny a\n");

	CHECK(!devcg_policy_default_allow(p));
	CHECK_INT(devcg_policy_count(p), 0);
	CHECK_DENIED(p, C, 1, 3, R);
	CHECK_DENIED(p, B, 8, 0, M);
	devcg_policy_free(p);
}

UTEST(allow_a_sets_default_allow_and_clears_the_list)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 r\nallow b 8:* rwm\nallow a\n");

	CHECK(devcg_policy_default_allow(p));
	CHECK_INT(devcg_policy_count(p), 0);
	CHECK_ALLOWED(p, C, 5, 5, RWM);
	devcg_policy_free(p);
}

UTEST(a_resets_even_when_it_repeats_the_current_default)
{
	struct devcg_policy *p = POLICY_OF("deny c 1:3 r\nallow a\n");

	CHECK(devcg_policy_default_allow(p));
	CHECK_INT(devcg_policy_count(p), 0);
	APPLY(p, "deny a\nallow c 1:3 r\ndeny a\n");
	CHECK(!devcg_policy_default_allow(p));
	CHECK_INT(devcg_policy_count(p), 0);
	devcg_policy_free(p);
}

UTEST(allow_on_default_deny_adds_an_exception)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 rw\n");

	CHECK_EXCEPTIONS(p, "c 1:3 rw");
	CHECK_ALLOWED(p, C, 1, 3, R | W);
	CHECK_DENIED(p, C, 1, 3, M);
	CHECK_DENIED(p, C, 1, 4, R);
	devcg_policy_free(p);
}

UTEST(allow_on_default_deny_merges_access_on_an_exact_key_match)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 r\nallow c 1:3 w\nallow c 1:3 r\n");

	CHECK_INT(devcg_policy_count(p), 1);
	CHECK_EXCEPTIONS(p, "c 1:3 rw");
	devcg_policy_free(p);
}

UTEST(allow_on_default_deny_keeps_overlapping_keys_as_separate_exceptions)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:* r\nallow c 1:3 w\nallow c *:3 m\n"
					   "allow b 1:3 r\nallow c *:* r\n");

	CHECK_INT(devcg_policy_count(p), 5);
	CHECK_EXCEPTIONS(p, "c 1:3 w,c 1:* r,c *:3 m,c *:* r,b 1:3 r");
	devcg_policy_free(p);
}

UTEST(deny_on_default_allow_adds_and_merges_on_an_exact_key_match)
{
	struct devcg_policy *p = POLICY_OF("deny c 1:3 r\ndeny c 1:3 m\ndeny c 1:* w\n");

	CHECK(devcg_policy_default_allow(p));
	CHECK_EXCEPTIONS(p, "c 1:3 rm,c 1:* w");
	devcg_policy_free(p);
}

UTEST(deny_on_default_deny_removes_only_exact_match)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:* rw\nallow c 1:3 rw\nallow c *:3 rw\n"
					   "deny c 1:3 r\n");

	/* only c 1:3 loses r; the wildcard exceptions keep theirs */
	CHECK_EXCEPTIONS(p, "c 1:3 w,c 1:* rw,c *:3 rw");
	/* so c 1:3 r is still allowed, through c 1:* */
	CHECK_ALLOWED(p, C, 1, 3, R);
	devcg_policy_free(p);
}

UTEST(deny_on_default_deny_drops_the_exception_when_no_access_is_left)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 rw\nallow c 1:5 r\ndeny c 1:3 w\n"
					   "deny c 1:3 rm\n");

	CHECK_INT(devcg_policy_count(p), 1);
	CHECK_EXCEPTIONS(p, "c 1:5 r");
	CHECK_DENIED(p, C, 1, 3, 0); /* no exception matches it any more */
	devcg_policy_free(p);
}

UTEST(deny_on_default_deny_does_not_narrow_a_wildcard_exception)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:* rwm\ndeny c 1:3 rwm\ndeny c *:* rwm\n"
					   "deny b 1:* rwm\n");

	CHECK_EXCEPTIONS(p, "c 1:* rwm");
	CHECK_ALLOWED(p, C, 1, 3, RWM);
	devcg_policy_free(p);
}

UTEST(allow_on_default_allow_removes_bits_from_the_exact_key_only)
{
	struct devcg_policy *p = POLICY_OF("deny c 1:* rwm\ndeny c 1:3 rw\ndeny c *:* m\n"
					   "allow c 1:3 r\n");

	CHECK_EXCEPTIONS(p, "c 1:3 w,c 1:* rwm,c *:* m");
	APPLY(p, "allow c 1:3 w\n");
	CHECK_EXCEPTIONS(p, "c 1:* rwm,c *:* m");
	/* c 1:3 stays denied through c 1:* */
	CHECK_DENIED(p, C, 1, 3, R);
	/* allowing a key that has no exception changes nothing */
	APPLY(p, "allow c 1:4 rwm\nallow c 2:* rwm\nallow b 1:* rwm\n");
	CHECK_EXCEPTIONS(p, "c 1:* rwm,c *:* m");
	devcg_policy_free(p);
}

UTEST(block_and_char_exceptions_are_distinct)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 8:0 rwm\nallow b *:* r\n");

	CHECK_ALLOWED(p, C, 8, 0, RWM);
	CHECK_DENIED(p, B, 8, 0, W);
	CHECK_ALLOWED(p, B, 8, 0, R);
	CHECK_DENIED(p, C, 8, 1, R);
	APPLY(p, "deny b 8:0 r\n"); /* another key: no change */
	CHECK_ALLOWED(p, B, 8, 0, R);
	CHECK_EXCEPTIONS(p, "c 8:0 rwm,b *:* r");
	devcg_policy_free(p);
}

/* ---- decisions ------------------------------------------------------------------ */

UTEST(default_deny_needs_one_exception_covering_all_requested_bits)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:* r\nallow c 1:9 w\n");

	CHECK_ALLOWED(p, C, 1, 9, R);
	CHECK_ALLOWED(p, C, 1, 9, W);
	/* r and w come from two exceptions: rw is denied */
	CHECK_DENIED(p, C, 1, 9, R | W);
	CHECK_ALLOWED(p, C, 1, 8, R);
	CHECK_DENIED(p, C, 1, 8, W);
	CHECK_DENIED(p, C, 2, 9, R);
	devcg_policy_free(p);
}

UTEST(default_deny_allows_through_any_matching_wildcard_form)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c *:3 r\nallow c 7:* w\nallow b *:* m\n");

	CHECK_ALLOWED(p, C, 1, 3, R);
	CHECK_ALLOWED(p, C, 4294967294u, 3, R);
	CHECK_DENIED(p, C, 1, 4, R);
	CHECK_ALLOWED(p, C, 7, 0, W);
	CHECK_ALLOWED(p, C, 7, 4294967294u, W);
	CHECK_DENIED(p, C, 7, 3, R | W);
	CHECK_ALLOWED(p, B, 0, 0, M);
	CHECK_ALLOWED(p, B, 4294967294u, 4294967294u, M);
	CHECK_DENIED(p, B, 0, 0, R);
	devcg_policy_free(p);
}

UTEST(default_allow_denies_when_any_exception_shares_one_requested_bit)
{
	struct devcg_policy *p = POLICY_OF("deny c 1:* w\ndeny c 1:3 m\n");

	CHECK_ALLOWED(p, C, 1, 3, R);
	CHECK_DENIED(p, C, 1, 3, R | W);
	CHECK_DENIED(p, C, 1, 3, W);
	CHECK_DENIED(p, C, 1, 3, R | M);
	CHECK_ALLOWED(p, C, 1, 4, R | M);
	CHECK_DENIED(p, C, 1, 4, RWM);
	CHECK_ALLOWED(p, C, 2, 3, RWM);
	CHECK_ALLOWED(p, B, 1, 3, RWM);
	devcg_policy_free(p);
}

UTEST(default_allow_wildcard_exception_denies_all_devices_it_covers)
{
	struct devcg_policy *p = POLICY_OF("deny c *:* r\ndeny b *:7 w\n");

	CHECK_DENIED(p, C, 0, 0, R);
	CHECK_DENIED(p, C, 4294967294u, 1, R | W);
	CHECK_ALLOWED(p, C, 5, 5, W | M);
	CHECK_DENIED(p, B, 3, 7, W);
	CHECK_ALLOWED(p, B, 3, 8, W);
	devcg_policy_free(p);
}

UTEST(access_0_on_default_deny_is_allowed_iff_an_exception_matches_the_device)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 m\nallow b *:5 r\n");

	CHECK_ALLOWED(p, C, 1, 3, 0);
	CHECK_DENIED(p, C, 1, 3, R);
	CHECK_ALLOWED(p, B, 9, 5, 0);
	CHECK_DENIED(p, C, 9, 5, 0);
	CHECK_DENIED(p, C, 1, 4, 0);
	devcg_policy_free(p);
}

UTEST(access_0_on_default_allow_is_always_allowed)
{
	struct devcg_policy *p = POLICY_OF("deny c 1:3 rwm\ndeny c *:* rwm\ndeny b *:* rwm\n");

	CHECK_ALLOWED(p, C, 1, 3, 0);
	CHECK_ALLOWED(p, B, 8, 0, 0);
	CHECK_DENIED(p, C, 1, 3, M);
	devcg_policy_free(p);
}

UTEST(check_reports_the_exception_that_decided)
{
	struct devcg_policy *deny = POLICY_OF("deny a\nallow c 1:* r\nallow c 1:9 rw\n");
	struct devcg_policy *allow = POLICY_OF("deny c *:9 w\n");
	struct devcg_exception ex;
	bool decided;

	/* default deny, allowed: the exception that covers the request */
	memset(&ex, 0xaa, sizeof(ex));
	CHECK_INT(devcg_policy_check(deny, C, 1, 9, R | W, &ex, &decided), 1);
	CHECK(decided);
	CHECK(ex.type == C && ex.major == 1 && ex.minor == 9 && ex.access == (R | W));
	CHECK_INT(devcg_policy_check(deny, C, 1, 8, R, &ex, &decided), 1);
	CHECK(decided);
	CHECK(ex.type == C && ex.major == 1 && ex.minor == ANY && ex.access == R);
	/* default deny, denied: the default decided */
	CHECK_INT(devcg_policy_check(deny, C, 1, 8, W, &ex, &decided), 0);
	CHECK(!decided);
	/* default allow, denied: the exception that overlaps */
	CHECK_INT(devcg_policy_check(allow, C, 3, 9, R | W, &ex, &decided), 0);
	CHECK(decided);
	CHECK(ex.type == C && ex.major == ANY && ex.minor == 9 && ex.access == W);
	/* default allow, allowed: the default decided */
	CHECK_INT(devcg_policy_check(allow, C, 3, 9, R, &ex, &decided), 1);
	CHECK(!decided);
	devcg_policy_free(deny);
	devcg_policy_free(allow);
}

UTEST(check_rejects_malformed_requests)
{
	struct devcg_policy *p = devcg_policy_new();
	bool decided = true;

	CHECK_INT(devcg_policy_check(p, 0, 1, 3, R, NULL, NULL), -EINVAL);
	CHECK_INT(devcg_policy_check(p, 3, 1, 3, R, NULL, NULL), -EINVAL);
	CHECK_INT(devcg_policy_check(p, DEVCG_ALL, 1, 3, R, NULL, NULL), -EINVAL);
	CHECK_INT(devcg_policy_check(p, C, ANY, 3, R, NULL, NULL), -EINVAL);
	CHECK_INT(devcg_policy_check(p, C, 1, ANY, R, NULL, NULL), -EINVAL);
	CHECK_INT(devcg_policy_check(p, C, 1, 3, 8, NULL, &decided), -EINVAL);
	devcg_policy_free(p);
}

/* ---- apply / apply_all ------------------------------------------------------------ */

UTEST(apply_rejects_malformed_rules_and_keeps_the_policy)
{
	static const struct devcg_rule bad[] = {
		{ .verb = 0, .type = C, .access = R, .major = 1, .minor = 3 },
		{ .verb = 0, .type = DEVCG_ALL, .access = RWM, .major = ANY, .minor = ANY },
		{ .verb = ALLOW, .type = 0, .access = R, .major = 1, .minor = 3 },
		{ .verb = ALLOW, .type = 3, .access = R, .major = 1, .minor = 3 },
		{ .verb = DENY, .type = C, .access = 0, .major = 1, .minor = 3 },
		{ .verb = DENY, .type = C, .access = 8, .major = 1, .minor = 3 },
	};
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 r\n");
	struct devcg_policy *before = devcg_policy_dup(p);
	struct devcg_error err = { 0 };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_MSG(devcg_policy_apply(p, &bad[i], &err) == -EINVAL, "bad rule %zu applied", i);
		CHECK_STR(err.msg, bad[i].verb ? "rule is malformed" : "rule has no verb");
	}
	CHECK(devcg_policy_equal(p, before));
	devcg_policy_free(before);
	devcg_policy_free(p);
}

UTEST(apply_all_leaves_the_policy_unchanged_on_error)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 r\nallow b 8:* rw\n");
	struct devcg_policy *before = devcg_policy_dup(p);
	struct devcg_rules *rules = PARSE_OK("allow a\ndeny c 1:3 rwm\ndeny c 5:5 r\nallow c 1:3 r\n");
	struct devcg_error err = { 0 };
	struct devcg_rule *third;
	const struct devcg_exception *ex = devcg_policy_exceptions(p);

	CHECK(ex);
	/* spoil the third rule in place, so that apply_all fails half way */
	third = (struct devcg_rule *)devcg_rules_get(rules, 2);
	third->verb = 0;
	CHECK_INT(devcg_policy_apply_all(p, rules, &err), -EINVAL);
	CHECK_STR(err.msg, "rule has no verb");
	CHECK(!devcg_policy_default_allow(p));
	CHECK(devcg_policy_equal(p, before));
	CHECK_EXCEPTIONS(p, "c 1:3 r,b 8:* rw");
	CHECK_ALLOWED(p, C, 1, 3, R);
	CHECK_DENIED(p, C, 5, 5, W);

	third->verb = DENY; /* now it applies as a whole */
	CHECK_INT(devcg_policy_apply_all(p, rules, &err), 0);
	CHECK(devcg_policy_default_allow(p));
	CHECK_EXCEPTIONS(p, "c 1:3 wm,c 5:5 r");
	devcg_rules_free(rules);
	devcg_policy_free(before);
	devcg_policy_free(p);
}

UTEST(apply_all_of_an_empty_list_changes_nothing)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 r\n");
	struct devcg_policy *before = devcg_policy_dup(p);
	struct devcg_rules *none = devcg_rules_new();

	CHECK_INT(devcg_policy_apply_all(p, none, NULL), 0);
	CHECK(devcg_policy_equal(p, before));
	devcg_rules_free(none);
	devcg_policy_free(before);
	devcg_policy_free(p);
}

/* ---- set, dup, equal, exceptions -------------------------------------------------- */

UTEST(policy_set_builds_the_given_policy_and_replaces_the_old_one)
{
	static const struct devcg_exception ex[] = {
		{ .type = B, .access = R, .major = 8, .minor = ANY },
		{ .type = C, .access = RWM, .major = 1, .minor = 3 },
	};
	struct devcg_policy *p = POLICY_OF("deny c 7:7 r\n");
	struct devcg_policy *want = POLICY_OF("deny a\nallow c 1:3 rwm\nallow b 8:* r\n");

	CHECK_INT(devcg_policy_set(p, false, ex, 2, NULL), 0);
	CHECK(!devcg_policy_default_allow(p));
	CHECK(devcg_policy_equal(p, want));
	CHECK_EXCEPTIONS(p, "c 1:3 rwm,b 8:* r");
	CHECK_INT(devcg_policy_set(p, true, NULL, 0, NULL), 0);
	CHECK(devcg_policy_default_allow(p));
	CHECK_INT(devcg_policy_count(p), 0);
	devcg_policy_free(want);
	devcg_policy_free(p);
}

UTEST(policy_set_rejects_duplicates_and_malformed_exceptions_and_keeps_the_policy)
{
	static const struct devcg_exception dup[] = {
		{ .type = C, .access = R, .major = 1, .minor = 3 },
		{ .type = B, .access = R, .major = 1, .minor = 3 },
		{ .type = C, .access = W, .major = 1, .minor = 3 },
	};
	static const struct devcg_exception bad[][1] = {
		{ { .type = 0, .access = R, .major = 1, .minor = 3 } },
		{ { .type = 3, .access = R, .major = 1, .minor = 3 } },
		{ { .type = DEVCG_ALL, .access = RWM, .major = ANY, .minor = ANY } },
		{ { .type = C, .access = 0, .major = 1, .minor = 3 } },
		{ { .type = C, .access = 9, .major = 1, .minor = 3 } },
	};
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 5:5 w\n");
	struct devcg_policy *before = devcg_policy_dup(p);
	struct devcg_error err = { 0 };
	size_t i;

	CHECK_INT(devcg_policy_set(p, true, dup, 3, &err), -EINVAL);
	CHECK_STR(err.msg, "exception 3 is a duplicate");
	CHECK(devcg_policy_equal(p, before));
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_MSG(devcg_policy_set(p, true, bad[i], 1, &err) == -EINVAL,
			  "bad exception %zu accepted", i);
		CHECK_STR(err.msg, "exception 1 is malformed");
	}
	CHECK(devcg_policy_equal(p, before));
	CHECK(!devcg_policy_default_allow(p));
	devcg_policy_free(before);
	devcg_policy_free(p);
}

UTEST(policy_dup_is_an_equal_independent_copy)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 r\nallow b *:* m\n");
	struct devcg_policy *d = devcg_policy_dup(p);

	CHECK(d);
	CHECK(devcg_policy_equal(p, d));
	APPLY(d, "allow c 1:3 w\ndeny b *:* m\n");
	CHECK_EXCEPTIONS(d, "c 1:3 rw");
	CHECK_EXCEPTIONS(p, "c 1:3 r,b *:* m");
	CHECK(!devcg_policy_equal(p, d));
	devcg_policy_free(d);
	d = devcg_policy_dup(p);
	devcg_policy_free(p); /* the copy outlives the original */
	CHECK_EXCEPTIONS(d, "c 1:3 r,b *:* m");
	devcg_policy_free(d);
}

UTEST(policy_equal_compares_default_and_exception_set_not_history)
{
	struct devcg_policy *a = POLICY_OF("deny a\nallow c 1:3 r\nallow c 1:3 w\nallow b 8:* m\n");
	struct devcg_policy *b = POLICY_OF("allow c 9:9 r\ndeny a\nallow b 8:* m\nallow c 1:3 rw\n"
					   "allow c 2:2 r\ndeny c 2:2 r\n");
	struct devcg_policy *c;

	CHECK(devcg_policy_equal(a, b));
	CHECK(devcg_policy_equal(b, a));
	CHECK(devcg_policy_equal(a, a));
	/* differing access on one key */
	c = POLICY_OF("deny a\nallow c 1:3 r\nallow b 8:* m\n");
	CHECK(!devcg_policy_equal(a, c) && !devcg_policy_equal(c, a));
	devcg_policy_free(c);
	/* differing key, same count */
	c = POLICY_OF("deny a\nallow c 1:4 rw\nallow b 8:* m\n");
	CHECK(!devcg_policy_equal(a, c) && !devcg_policy_equal(c, a));
	devcg_policy_free(c);
	/* differing type */
	c = POLICY_OF("deny a\nallow c 1:3 rw\nallow c 8:* m\n");
	CHECK(!devcg_policy_equal(a, c) && !devcg_policy_equal(c, a));
	devcg_policy_free(c);
	/* a subset */
	c = POLICY_OF("deny a\nallow c 1:3 rw\n");
	CHECK(!devcg_policy_equal(a, c) && !devcg_policy_equal(c, a));
	devcg_policy_free(c);
	/* same exceptions, other default */
	c = POLICY_OF("deny c 1:3 rw\ndeny b 8:* m\n");
	CHECK(!devcg_policy_equal(a, c) && !devcg_policy_equal(c, a));
	devcg_policy_free(c);
	/* empty policies */
	a = (devcg_policy_free(a), devcg_policy_new());
	c = POLICY_OF("deny c 1:3 r\nallow c 1:3 r\n");
	CHECK(devcg_policy_equal(a, c));
	devcg_policy_free(c);
	devcg_policy_free(b);
	devcg_policy_free(a);
}

UTEST(exceptions_are_in_canonical_order_char_first_then_major_minor_star_last)
{
	struct devcg_policy *p = POLICY_OF("deny a\n"
					   "allow b 8:* r\nallow c *:* r\nallow c 10:2 r\nallow b *:1 r\n"
					   "allow c 1:* r\nallow c 2:* r\nallow b 8:0 r\nallow c 1:3 r\n"
					   "allow c 0:0 r\nallow c *:0 r\nallow b 0:4294967294 r\n"
					   "allow c 1:10 r\nallow c 1:2 r\n");

	CHECK_EXCEPTIONS(p, "c 0:0 r,c 1:2 r,c 1:3 r,c 1:10 r,c 1:* r,c 2:* r,c 10:2 r,"
			    "c *:0 r,c *:* r,b 0:4294967294 r,b 8:0 r,b 8:* r,b *:1 r");
	devcg_policy_free(p);
}

UTEST(exceptions_array_is_rebuilt_after_a_change)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 r\n");

	CHECK_EXCEPTIONS(p, "c 1:3 r");
	CHECK_EXCEPTIONS(p, "c 1:3 r"); /* asked twice, same answer */
	APPLY(p, "allow c 0:1 w\n");
	CHECK_EXCEPTIONS(p, "c 0:1 w,c 1:3 r");
	APPLY(p, "deny c 1:3 r\n");
	CHECK_EXCEPTIONS(p, "c 0:1 w");
	APPLY(p, "deny a\n");
	CHECK_EXCEPTIONS(p, "");
	devcg_policy_free(p);
}

/* ---- to_rules ---------------------------------------------------------------------- */

static void check_rules_text(const char *file, int line, const struct devcg_rules *rules,
			     const char *want)
{
	char buf[4096], one[64];
	size_t i, used = 0;

	buf[0] = '\0';
	for (i = 0; i < devcg_rules_count(rules); i++) {
		devcg_rule_format(devcg_rules_get(rules, i), one, sizeof(one));
		used += (size_t)snprintf(buf + used, sizeof(buf) - used, "%s\n", one);
	}
	if (strcmp(buf, want))
		test_fail(file, line, "rules are\n%s\nexpected\n%s", buf, want);
}

UTEST(to_rules_of_default_deny_is_deny_a_then_the_allowed_exceptions)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow b 8:* r\nallow c 1:3 rw\nallow c *:* m\n");
	struct devcg_rules *rules = NULL;

	CHECK_INT(devcg_policy_to_rules(p, &rules), 0);
	check_rules_text(__FILE__, __LINE__, rules,
			 "deny a\nallow c 1:3 rw\nallow c *:* m\nallow b 8:* r\n");
	devcg_rules_free(rules);
	devcg_policy_free(p);
}

UTEST(to_rules_of_default_allow_is_allow_a_then_the_denied_exceptions)
{
	struct devcg_policy *p = POLICY_OF("deny b 8:* r\ndeny c 1:3 rw\n");
	struct devcg_policy *fresh = devcg_policy_new();
	struct devcg_rules *rules = NULL;

	CHECK_INT(devcg_policy_to_rules(p, &rules), 0);
	check_rules_text(__FILE__, __LINE__, rules, "allow a\ndeny c 1:3 rw\ndeny b 8:* r\n");
	devcg_rules_free(rules);
	CHECK_INT(devcg_policy_to_rules(fresh, &rules), 0);
	check_rules_text(__FILE__, __LINE__, rules, "allow a\n");
	devcg_rules_free(rules);
	devcg_policy_free(fresh);
	devcg_policy_free(p);
}

UTEST(to_rules_applied_to_any_policy_gives_an_equal_policy)
{
	struct devcg_policy *p = POLICY_OF("deny a\nallow c 1:3 rw\nallow b *:7 m\n");
	struct devcg_policy *other = POLICY_OF("deny c 1:3 r\ndeny c 9:9 w\n");
	struct devcg_rules *rules = NULL;

	CHECK_INT(devcg_policy_to_rules(p, &rules), 0);
	CHECK_INT(devcg_policy_apply_all(other, rules, NULL), 0);
	CHECK(devcg_policy_equal(p, other));
	devcg_rules_free(rules);
	devcg_policy_free(other);
	devcg_policy_free(p);
}

/* ---- many exceptions: growth and churn of the table ---------------------------------- */

UTEST(many_exceptions_are_kept_and_found)
{
	struct devcg_policy *p = POLICY_OF("deny a\n");
	struct devcg_rule r = { .verb = ALLOW, .type = C, .access = R };
	const struct devcg_exception *ex;
	uint32_t i;

	for (i = 0; i < 20000; i++) {
		r.type = i & 1 ? B : C;
		r.major = i / 100;
		r.minor = i % 100;
		CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
	}
	CHECK_INT(devcg_policy_count(p), 20000);
	for (i = 0; i < 20000; i++)
		CHECK(ALLOWED(p, i & 1 ? B : C, i / 100, i % 100, R));
	CHECK_DENIED(p, C, 1, 1, R);
	CHECK_DENIED(p, C, 200, 0, R);
	ex = devcg_policy_exceptions(p);
	for (i = 0; i < 10000; i++) { /* chars first, all majors and minors in order */
		CHECK_INT(ex[i].type, C);
		CHECK_INT(ex[i].major, (2 * i) / 100);
		CHECK_INT(ex[i].minor, (2 * i) % 100);
	}
	devcg_policy_free(p);
}

UTEST(adding_and_removing_exceptions_repeatedly_keeps_the_policy_exact)
{
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_rule r = { .type = C, .access = RWM };
	uint32_t i;

	/* churn: each key is added then removed, on a table that keeps a few live ones */
	for (i = 0; i < 200000; i++) {
		r.major = i;
		r.minor = i % 7;
		r.verb = DENY;
		CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
		if (i % 1000) {
			r.verb = ALLOW;
			r.access = i % 2 ? RWM : R | W; /* an m bit stays behind on even keys */
			CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
			if (i % 2 == 0) {
				r.access = M;
				CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
			}
			r.access = RWM;
		}
	}
	CHECK_INT(devcg_policy_count(p), 200);
	for (i = 0; i < 200000; i += 997)
		CHECK_MSG(ALLOWED(p, C, i, i % 7, RWM) == !!(i % 1000), "key %u", i);
	CHECK_DENIED(p, C, 1000, 1000 % 7, R);
	CHECK_ALLOWED(p, C, 1000, 0, R);
	devcg_policy_free(p);
}

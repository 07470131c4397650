// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The devices.list text form: lines with or without a verb, comments, blank
 * lines, CRLF, tabs, every error with its SOURCE:LINE:COL, and the limits. */
#include "testutil.h"

/* ---- accepted forms ----------------------------------------------------- */

UTEST(parse_line_without_verb_is_an_allow_rule)
{
	struct devcg_rules *r = PARSE_OK("c 1:3 rwm");

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	devcg_rules_free(r);
}

UTEST(parse_allow_and_deny_verbs_set_the_verb)
{
	struct devcg_rules *r = PARSE_OK("allow c 1:3 r\ndeny b 8:0 w\n");

	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	CHECK_RULE(r, 1, DENY, DEVCG_BLOCK, 8, 0, W);
	devcg_rules_free(r);
}

UTEST(parse_rules_keep_their_order_and_are_not_merged)
{
	struct devcg_rules *r = PARSE_OK("c 1:3 r\nc 1:3 r\ndeny c 1:3 r\nb 1:3 m\n");

	CHECK_INT(devcg_rules_count(r), 4);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 3, R);
	CHECK_RULE(r, 2, DENY, DEVCG_CHAR, 1, 3, R);
	CHECK_RULE(r, 3, ALLOW, DEVCG_BLOCK, 1, 3, M);
	devcg_rules_free(r);
}

UTEST(parse_star_major_or_minor_is_the_wildcard)
{
	struct devcg_rules *r = PARSE_OK("c *:* m\nb 8:* r\nc *:5 w\n");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, ANY, ANY, M);
	CHECK_RULE(r, 1, ALLOW, DEVCG_BLOCK, 8, ANY, R);
	CHECK_RULE(r, 2, ALLOW, DEVCG_CHAR, ANY, 5, W);
	devcg_rules_free(r);
}

UTEST(parse_access_letters_in_any_order_or_repeated_make_a_set)
{
	struct devcg_rules *r = PARSE_OK("c 1:3 mwr\nc 1:3 rr\nc 1:3 wm\nc 1:3 m\nc 1:3 rwm\n");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 3, R);
	CHECK_RULE(r, 2, ALLOW, DEVCG_CHAR, 1, 3, W | M);
	CHECK_RULE(r, 3, ALLOW, DEVCG_CHAR, 1, 3, M);
	CHECK_RULE(r, 4, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	devcg_rules_free(r);
}

UTEST(parse_numbers_are_decimal_with_leading_zeros_allowed)
{
	struct devcg_rules *r = PARSE_OK("c 007:0010 r\nc 0:0 r\nc 4294967294:4294967294 r\n");

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 7, 10, R);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 0, 0, R);
	CHECK_RULE(r, 2, ALLOW, DEVCG_CHAR, 4294967294u, 4294967294u, R);
	devcg_rules_free(r);
}

UTEST(parse_comments_and_blank_lines_are_ignored)
{
	struct devcg_rules *r = PARSE_OK("# a policy\n"
					 "\n"
					 "   \n"
					 "\t# indented comment\n"
					 "c 1:3 r # trailing comment\n"
					 "#c 1:5 r\n"
					 "\n");

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	devcg_rules_free(r);
}

UTEST(parse_crlf_line_endings_are_accepted)
{
	struct devcg_rules *r = PARSE_OK("allow c 1:3 r\r\n\r\n# x\r\ndeny c 1:5 w\r\n");

	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	CHECK_RULE(r, 1, DENY, DEVCG_CHAR, 1, 5, W);
	devcg_rules_free(r);
}

UTEST(parse_tabs_and_runs_of_blanks_separate_words)
{
	struct devcg_rules *r = PARSE_OK("\tallow\tc\t1:3\trwm\t\n  deny   b  8:1   m  \n");

	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	CHECK_RULE(r, 1, DENY, DEVCG_BLOCK, 8, 1, M);
	devcg_rules_free(r);
}

UTEST(parse_last_line_needs_no_newline)
{
	struct devcg_rules *r = PARSE_OK("c 1:3 r\nc 1:5 w");

	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 5, W);
	devcg_rules_free(r);
}

UTEST(parse_empty_or_comment_only_text_gives_no_rules)
{
	const char *texts[] = { "", "\n\n", "# nothing\n", "  \t \r\n" };
	size_t i;

	for (i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct devcg_rules *r = PARSE_OK(texts[i]);

		CHECK_INT(devcg_rules_count(r), 0);
		devcg_rules_free(r);
	}
}

UTEST(parse_reads_only_len_bytes_of_an_unterminated_buffer)
{
	/* "c 1:3 r" followed by bytes that are not part of the text */
	const char buf[] = { 'c', ' ', '1', ':', '3', ' ', 'r', 'w', 'x', '!' };
	struct devcg_rules *r = parse_ok_at(__FILE__, __LINE__, buf, 7, NULL);

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	devcg_rules_free(r);
}

UTEST(parse_appends_to_rules_already_in_the_list)
{
	struct devcg_rules *r = devcg_rules_new();

	CHECK(r);
	CHECK_INT(devcg_rules_add(r, &sentinel_rule, NULL), 0);
	CHECK_INT(devcg_rules_parse(r, "c 1:3 r\n", 8, "in", NULL, NULL), 0);
	CHECK_INT(devcg_rules_count(r), 2);
	CHECK(rule_eq(devcg_rules_get(r, 0), &sentinel_rule));
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 3, R);
	devcg_rules_free(r);
}

UTEST(parse_type_a_forms_all_mean_reset)
{
	struct devcg_rules *r = PARSE_OK("a\n"
					 "allow a\n"
					 "deny a\n"
					 "a *:*\n"
					 "a *:* rwm\n"
					 "deny a *:* mrw\n");
	size_t i;

	CHECK_INT(devcg_rules_count(r), 6);
	for (i = 0; i < 6; i++)
		CHECK_RULE(r, i, i == 2 || i == 5 ? DENY : ALLOW, DEVCG_ALL, ANY, ANY, RWM);
	devcg_rules_free(r);
}

/* ---- errors: exact message and location, nothing appended --------------- */

UTEST(parse_error_missing_device_after_verb)
{
	PARSE_ERR("allow", -EINVAL, "in:1:1: missing device after 'allow'");
	PARSE_ERR("  deny  # nothing", -EINVAL, "in:1:3: missing device after 'deny'");
}

UTEST(parse_error_unknown_device_type)
{
	PARSE_ERR("x 1:2 r", -EINVAL,
		  "in:1:1: expected a device type (a, b or c), a /dev path, char-NAME or block-NAME");
	PARSE_ERR("allow cb 1:2 r", -EINVAL,
		  "in:1:7: expected a device type (a, b or c), a /dev path, char-NAME or block-NAME");
	/* the verb is a whole word: "allowed" is not a verb */
	PARSE_ERR("allowed c 1:2 r", -EINVAL,
		  "in:1:1: expected a device type (a, b or c), a /dev path, char-NAME or block-NAME");
	/* verbs and types are lower case, as the kernel's */
	PARSE_ERR("C 1:2 r", -EINVAL,
		  "in:1:1: expected a device type (a, b or c), a /dev path, char-NAME or block-NAME");
}

UTEST(parse_error_missing_major_minor_or_access)
{
	PARSE_ERR("c", -EINVAL, "in:1:1: missing MAJOR:MINOR after the type");
	PARSE_ERR("deny b", -EINVAL, "in:1:6: missing MAJOR:MINOR after the type");
	PARSE_ERR("c 1:2", -EINVAL, "in:1:3: missing access (a non-empty subset of 'rwm')");
	PARSE_ERR("c 1:2 # rwm", -EINVAL, "in:1:3: missing access (a non-empty subset of 'rwm')");
}

UTEST(parse_error_text_after_the_access)
{
	PARSE_ERR("c 1:2 r x", -EINVAL, "in:1:9: unexpected text after the access");
	PARSE_ERR("allow c 1:2 r w", -EINVAL, "in:1:15: unexpected text after the access");
}

UTEST(parse_error_malformed_major_minor)
{
	PARSE_ERR("c 12 r", -EINVAL, "in:1:3: expected MAJOR:MINOR");
	PARSE_ERR("c :1 r", -EINVAL, "in:1:3: missing major number");
	PARSE_ERR("c 1: r", -EINVAL, "in:1:3: missing minor number");
	PARSE_ERR("c x:1 r", -EINVAL, "in:1:3: major must be a number or '*'");
	PARSE_ERR("c 1:-1 r", -EINVAL, "in:1:3: minor must be a number or '*'");
	PARSE_ERR("c 1:2:3 r", -EINVAL, "in:1:3: minor must be a number or '*'");
	PARSE_ERR("c **:1 r", -EINVAL, "in:1:3: major must be a number or '*'");
	PARSE_ERR("c 0x10:1 r", -EINVAL, "in:1:3: major must be a number or '*'");
	PARSE_ERR("c +1:1 r", -EINVAL, "in:1:3: major must be a number or '*'");
}

UTEST(parse_error_numbers_that_reach_the_wildcard_are_too_large)
{
	/* ~0 is the kernel's '*', so 4294967295 cannot name a device */
	PARSE_ERR("c 4294967295:0 r", -ERANGE, "in:1:3: major number is too large");
	PARSE_ERR("c 0:4294967295 r", -ERANGE, "in:1:3: minor number is too large");
	PARSE_ERR("c 4294967296:0 r", -ERANGE, "in:1:3: major number is too large");
	/* no wrap-around, however long */
	PARSE_ERR("c 18446744073709551617:0 r", -ERANGE, "in:1:3: major number is too large");
	PARSE_ERR("c 1:99999999999999999999999999999999 r", -ERANGE,
		  "in:1:3: minor number is too large");
}

UTEST(parse_error_bad_access)
{
	PARSE_ERR("c 1:2 rwx", -EINVAL, "in:1:7: access must be letters of 'rwm', not 'rwx'");
	PARSE_ERR("c 1:2 R", -EINVAL, "in:1:7: access must be letters of 'rwm', not 'R'");
	PARSE_ERR("c 1:2 rwmr", -EINVAL, "in:1:7: access must be a non-empty subset of 'rwm'");
	PARSE_ERR("c 1:2 *", -EINVAL, "in:1:7: access must be letters of 'rwm', not '*'");
}

UTEST(parse_error_type_a_with_a_narrower_range_or_access)
{
	PARSE_ERR("a 1:2", -EINVAL, "in:1:3: type 'a' means every device: only '*:*' may follow it");
	PARSE_ERR("deny a *:1 rwm", -EINVAL,
		  "in:1:8: type 'a' means every device: only '*:*' may follow it");
	PARSE_ERR("a *:* r", -EINVAL,
		  "in:1:7: type 'a' resets the whole list: its access can only be 'rwm'");
	PARSE_ERR("a *:* rwx", -EINVAL,
		  "in:1:7: type 'a' resets the whole list: its access can only be 'rwm'");
	PARSE_ERR("a *:* rwm x", -EINVAL, "in:1:11: unexpected text after the access");
}

UTEST(parse_error_too_many_words_points_at_the_ninth)
{
	PARSE_ERR("c 1:3 r a b c d e f g", -EINVAL, "in:1:19: too many words on this line");
}

UTEST(parse_error_nul_byte_in_text)
{
	static const char text[] = "c 1:3 r\nc 1:\0 r\n";

	parse_err_at(__FILE__, __LINE__, text, sizeof(text) - 1, NULL, -EINVAL,
		     "in:2:5: NUL byte in text");
}

UTEST(parse_error_location_counts_lines_and_columns_with_tabs_and_crlf)
{
	PARSE_ERR("# header\n\nc 1:3 r\n  \tc 1:2 rwx\n", -EINVAL,
		  "in:4:10: access must be letters of 'rwm', not 'rwx'");
	PARSE_ERR("c 1:3 r\r\n\r\nc 1:2 rwx\r\n", -EINVAL,
		  "in:3:7: access must be letters of 'rwm', not 'rwx'");
}

UTEST(parse_error_after_valid_lines_appends_nothing)
{
	PARSE_ERR("c 1:3 r\nc 1:5 r\nallow a\nc 1:7 q\nc 1:8 r\n", -EINVAL,
		  "in:4:7: access must be letters of 'rwm', not 'q'");
}

UTEST(parse_error_source_defaults_to_input)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_rules_parse(r, "c", 1, NULL, NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "<input>:1:1: missing MAJOR:MINOR after the type");
	CHECK_INT(devcg_rules_parse(r, "c", 1, "policy.list", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "policy.list:1:1: missing MAJOR:MINOR after the type");
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(parse_error_without_error_struct_still_fails_cleanly)
{
	struct devcg_rules *r = devcg_rules_new();

	CHECK_INT(devcg_rules_parse(r, "c 1:3 r\nc 1:2 rwx", 17, "in", NULL, NULL), -EINVAL);
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

/* ---- limits ------------------------------------------------------------- */

/* "c 1:3 r" padded with blanks (or a comment) to exactly LEN bytes. */
static char *padded_line(size_t len, bool comment)
{
	char *s = malloc(len + 1);

	CHECK(s);
	memset(s, ' ', len);
	memcpy(s, comment ? "#" : "c 1:3 r", comment ? 1 : 7);
	if (!comment)
		s[len - 1] = '#'; /* a comment that reaches the end */
	s[len] = '\0';
	return s;
}

UTEST(parse_line_of_exactly_4096_bytes_is_accepted)
{
	char *line = padded_line(DEVCG_MAX_LINE, false);
	struct devcg_rules *r = PARSE_OK(line);

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	devcg_rules_free(r);
	free(line);
}

UTEST(parse_line_of_4097_bytes_is_rejected_with_e2big)
{
	char *line = padded_line(DEVCG_MAX_LINE + 1, false);
	char *text = malloc(DEVCG_MAX_LINE + 64);

	PARSE_ERR(line, -E2BIG, "in:1:4097: line is longer than 4096 bytes");
	/* on a later line, and even when it is a comment */
	free(line);
	line = padded_line(DEVCG_MAX_LINE + 1, true);
	CHECK(text);
	snprintf(text, DEVCG_MAX_LINE + 64, "c 1:3 r\n%s\nc 1:5 r\n", line);
	PARSE_ERR(text, -E2BIG, "in:2:4097: line is longer than 4096 bytes");
	free(text);
	free(line);
}

/* N lines of "c 1:3 r". */
static char *many_rules(size_t n)
{
	static const char line[] = "c 1:3 r\n";
	char *s = malloc(n * (sizeof(line) - 1) + 1);
	size_t i;

	CHECK(s);
	for (i = 0; i < n; i++)
		memcpy(s + i * (sizeof(line) - 1), line, sizeof(line) - 1);
	s[n * (sizeof(line) - 1)] = '\0';
	return s;
}

UTEST(parse_accepts_exactly_100000_rules)
{
	char *text = many_rules(DEVCG_MAX_RULES);
	struct devcg_rules *r = PARSE_OK(text);

	CHECK_INT(devcg_rules_count(r), DEVCG_MAX_RULES);
	CHECK_RULE(r, DEVCG_MAX_RULES - 1, ALLOW, DEVCG_CHAR, 1, 3, R);
	devcg_rules_free(r);
	free(text);
}

UTEST(parse_of_100001_rules_fails_with_e2big_and_appends_nothing)
{
	char *text = many_rules(DEVCG_MAX_RULES + 1);
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	CHECK(r);
	CHECK_INT(devcg_rules_parse(r, text, strlen(text), "in", NULL, &err), -E2BIG);
	CHECK_INT(err.code, -E2BIG);
	CHECK_STR(err.msg, "in:100001:1: more than 100000 rules");
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
	free(text);
}

UTEST(parse_rule_limit_counts_the_rules_already_in_the_list)
{
	/* the sentinel already holds one place, so the 100,000th line fails */
	char *text = many_rules(DEVCG_MAX_RULES);

	PARSE_ERR(text, -E2BIG, "in:100000:1: more than 100000 rules");
	free(text);
}

UTEST(parse_comments_and_blank_lines_do_not_count_toward_the_rule_limit)
{
	size_t n = DEVCG_MAX_RULES, i;
	char *text = malloc(n * 12 + 32), *p = text;
	struct devcg_rules *r;

	CHECK(text);
	for (i = 0; i < n; i++)
		p += sprintf(p, "c 1:3 r\n#\n\n");
	strcpy(p, "# end\n");
	r = PARSE_OK(text);
	CHECK_INT(devcg_rules_count(r), DEVCG_MAX_RULES);
	devcg_rules_free(r);
	free(text);
}

/* ---- format detection, one-rule arguments, files ------------------------ */

UTEST(parse_detects_json_only_by_the_first_non_blank_byte)
{
	struct devcg_rules *r = PARSE_OK(" \r\n\t[{\"allow\": true, \"type\": \"c\", \"major\": 1, "
					 "\"minor\": 3, \"access\": \"r\"}]");

	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, R);
	devcg_rules_free(r);
	/* a comment first makes it text, where '[' is not a device type */
	PARSE_ERR("# policy\n[]", -EINVAL,
		  "in:2:1: expected a device type (a, b or c), a /dev path, char-NAME or block-NAME");
}

UTEST(parse_rule_takes_one_rule_and_never_json)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_rules_parse_rule(r, "deny c 1:3 w", NULL, NULL, &err), 0);
	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, DENY, DEVCG_CHAR, 1, 3, W);

	CHECK_INT(devcg_rules_parse_rule(r, "c 1:3 r\nc 1:5 r", NULL, NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "<argument>: one rule per argument (it holds a newline)");
	CHECK_INT(devcg_rules_parse_rule(r, "c 1:3 r\n", "--rule", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "--rule: one rule per argument (it holds a newline)");

	CHECK_INT(devcg_rules_parse_rule(r, "[{\"allow\": true}]", "arg 2", NULL, &err), -EINVAL);
	CHECK_STR(err.msg,
		  "arg 2:1:1: expected a device type (a, b or c), a /dev path, char-NAME or block-NAME");
	CHECK_INT(devcg_rules_parse_rule(r, "c 1:3 rx", NULL, NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "<argument>:1:7: access must be letters of 'rwm', not 'rx'");
	CHECK_INT(devcg_rules_count(r), 1);
	devcg_rules_free(r);
}

UTEST(parse_file_names_the_file_in_messages)
{
	const char *path = write_scratch("policy.list", "c 1:3 r\n\nc 1:5 rwz\n");
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	char want[512];

	CHECK_INT(devcg_rules_parse_file(r, path, NULL, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s:3:7: access must be letters of 'rwm', not 'rwz'", path);
	CHECK_STR(err.msg, want);
	CHECK_INT(devcg_rules_count(r), 0);

	path = write_scratch("ok.list", "deny a\nc 1:3 rw\n");
	CHECK_INT(devcg_rules_parse_file(r, path, NULL, &err), 0);
	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 0, DENY, DEVCG_ALL, ANY, ANY, RWM);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 3, R | W);
	devcg_rules_free(r);
}

UTEST(parse_file_of_a_missing_path_fails_with_enoent)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	char path[256], want[512];

	snprintf(path, sizeof(path), "%s/missing.list", scratch());
	CHECK_INT(devcg_rules_parse_file(r, path, NULL, &err), -ENOENT);
	CHECK_INT(err.code, -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	CHECK_STR(err.msg, want);
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(parse_file_dash_reads_stdin_named_stdin)
{
	const char *path = write_scratch("stdin.list", "c 1:3 r\nc 1:3 x\n");
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	CHECK(freopen(path, "r", stdin));
	CHECK_INT(devcg_rules_parse_file(r, "-", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "<stdin>:2:7: access must be letters of 'rwm', not 'x'");
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The library's errors as a caller meets them: untrusted text escaped in
 * messages, files that are no files of rules, options structs of another
 * size, and the rule verb a caller requires. */
#include "testutil.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static const char *esc(const char *s, size_t n, unsigned int flags)
{
	static char buf[512];

	devcg_escape(buf, sizeof(buf), s, n, flags);
	return buf;
}

UTEST(escape_shows_control_bytes_and_keeps_valid_utf8)
{
	CHECK_STR(esc("a\x1b]0;pwned\x07 b", (size_t)-1, 0), "a\\x1b]0;pwned\\x07 b");
	CHECK_STR(esc("tab\there\nnl\r\x7f", (size_t)-1, 0), "tab\\x09here\\x0anl\\x0d\\x7f");
	CHECK_STR(esc("back\\slash", (size_t)-1, 0), "back\\\\slash");
	/* é (2 bytes), € (3), 😀 (4) stay */
	CHECK_STR(esc("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", (size_t)-1, 0),
		  "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
	/* an embedded NUL when the length is given */
	CHECK_STR(esc("a\0b", 3, 0), "a\\x00b");
}

UTEST(escape_shows_each_byte_that_is_not_valid_utf8)
{
	/* past U+10FFFF (the example), overlong, a surrogate, a lone
	 * continuation byte, a truncated sequence, 0xff */
	CHECK_STR(esc("\xf5\x80\x80\x80", (size_t)-1, 0), "\\xf5\\x80\\x80\\x80");
	CHECK_STR(esc("\xc0\xaf", (size_t)-1, 0), "\\xc0\\xaf");
	CHECK_STR(esc("\xed\xa0\x80", (size_t)-1, 0), "\\xed\\xa0\\x80");
	CHECK_STR(esc("\x80x", (size_t)-1, 0), "\\x80x");
	CHECK_STR(esc("\xe2\x82", (size_t)-1, 0), "\\xe2\\x82");
	CHECK_STR(esc("\xff", (size_t)-1, 0), "\\xff");
}

UTEST(escape_shows_c1_controls_and_bidi_overrides)
{
	CHECK_STR(esc("\xc2\x9b" "31m", (size_t)-1, 0), "\\xc2\\x9b31m"); /* U+009B, CSI */
	CHECK_STR(esc("\xe2\x80\xae" "gpj.exe", (size_t)-1, 0), "\\xe2\\x80\\xaegpj.exe");
	CHECK_STR(esc("\xe2\x81\xa6", (size_t)-1, 0), "\\xe2\\x81\\xa6");
	CHECK_STR(esc("\xc2\xa0", (size_t)-1, 0), "\xc2\xa0"); /* U+00A0 is not a control */
}

UTEST(escape_for_a_message_keeps_newlines_tabs_and_backslashes)
{
	CHECK_STR(esc("log:\n\tline \\x1b\x1b", (size_t)-1, DEVCG_ESCAPE_MESSAGE),
		  "log:\n\tline \\x1b\\x1b");
}

UTEST(escape_cuts_between_pieces_and_returns_the_whole_length)
{
	char buf[6];

	/* "ab\x1b" needs 6 bytes and its NUL: only "ab" fits whole */
	CHECK_INT(devcg_escape(buf, sizeof(buf), "ab\x1b", (size_t)-1, 0), 6);
	CHECK_STR(buf, "ab");
	CHECK_INT(devcg_escape(buf, sizeof(buf), "abc\xc3\xa9", (size_t)-1, 0), 5);
	CHECK_STR(buf, "abc\xc3\xa9");
	CHECK_INT(devcg_escape(buf, 5, "abc\xc3\xa9", (size_t)-1, 0), 5);
	CHECK_STR(buf, "abc");
	CHECK_INT(devcg_escape(NULL, 0, "\x01\x02", (size_t)-1, 0), 8);
}

UTEST(parse_errors_quote_rule_text_with_escapes_visible)
{
	PARSE_ERR("allow c 1:3 r\x1b]0;pwned\x07", -EINVAL,
		  "in:1:13: access must be letters of 'rwm', not 'r\\x1b]0;pwned\\x07'");
	PARSE_ERR("allow c 1:3 \xf5\x80\x80\x80", -EINVAL,
		  "in:1:13: access must be letters of 'rwm', not '\\xf5\\x80\\x80\\x80'");
}

UTEST(parse_errors_quote_the_source_name_with_escapes_visible)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_rules_parse(r, "c 1:3 x", 7, "evil\x1b[2J", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "evil\\x1b[2J:1:7: access must be letters of 'rwm', not 'x'");
	CHECK_INT(devcg_rules_parse_rule(r, "c 1:3 x", "arg\x07", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "arg\\x07:1:7: access must be letters of 'rwm', not 'x'");
	devcg_rules_free(r);
}

UTEST(oci_errors_quote_json_strings_with_escapes_visible)
{
	PARSE_ERR("{\"devices\": [{\"allow\": true, \"type\": \"\\u001b]0;x\\u0007\"}]}", -EINVAL,
		  "in:1:38: \"type\" must be \"a\", \"b\" or \"c\", not \"\\x1b]0;x\\x07\"");
	PARSE_ERR("[{\"allow\": true, \"type\": \"c\", \"access\": \"r\\u009b\\n\"}]", -EINVAL,
		  "in:1:41: \"access\" must be letters of 'rwm', not \"r\\xc2\\x9b\\x0a\"");
}

UTEST(parse_file_quotes_its_path_with_escapes_visible)
{
	char path[256], want[512];
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	FILE *f;

	snprintf(path, sizeof(path), "%s/p\x1b]0;x\x07.list", scratch());
	f = fopen(path, "w");
	CHECK(f && fputs("c 1:3 x\n", f) >= 0 && !fclose(f));
	CHECK_INT(devcg_rules_parse_file(r, path, NULL, &err), -EINVAL);
	snprintf(want, sizeof(want), "%s/p\\x1b]0;x\\x07.list:1:7: access must be letters of 'rwm', not 'x'",
		 scratch());
	CHECK_STR(err.msg, want);
	unlink(path);
	CHECK_INT(devcg_rules_parse_file(r, path, NULL, &err), -ENOENT);
	snprintf(want, sizeof(want), "%s/p\\x1b]0;x\\x07.list: No such file or directory", scratch());
	CHECK_STR(err.msg, want);
	devcg_rules_free(r);
}

UTEST(parse_file_of_a_directory_says_it_is_a_directory)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	char want[512];

	CHECK_INT(devcg_rules_parse_file(r, scratch(), NULL, &err), -EISDIR);
	CHECK_INT(err.code, -EISDIR);
	snprintf(want, sizeof(want), "%s: is a directory", scratch());
	CHECK_STR(err.msg, want);
	/* the same through standard input */
	CHECK(freopen(scratch(), "r", stdin));
	CHECK_INT(devcg_rules_parse_file(r, "-", NULL, &err), -EISDIR);
	CHECK_STR(err.msg, "<stdin>: is a directory");
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(parse_file_of_a_device_node_is_refused_without_reading_it)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	/* standard input is a file here, so no device node is it */
	CHECK(freopen(write_scratch("in.list", "c 1:3 r\n"), "r", stdin));
	CHECK_INT(devcg_rules_parse_file(r, "/dev/null", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "/dev/null: is a character device, not a file of rules");
	/* /dev/zero would be read to the size limit */
	CHECK_INT(devcg_rules_parse_file(r, "/dev/zero", NULL, &err), -EINVAL);
	CHECK_STR(err.msg, "/dev/zero: is a character device, not a file of rules");
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(parse_file_reads_stdin_whatever_it_is_also_as_dev_stdin)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	CHECK(freopen("/dev/null", "r", stdin));
	CHECK_MSG(!devcg_rules_parse_file(r, "-", NULL, &err), "%s", err.msg);
	CHECK_MSG(!devcg_rules_parse_file(r, "/dev/stdin", NULL, &err), "%s", err.msg);
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(parse_file_reads_a_fifo)
{
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	char path[256];
	pid_t pid;
	int st;

	snprintf(path, sizeof(path), "%s/rules.fifo", scratch());
	CHECK(!mkfifo(path, 0600));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int fd = open(path, O_WRONLY);

		_exit(fd >= 0 && write(fd, "deny a\nc 1:3 r\n", 15) == 15 ? 0 : 1);
	}
	CHECK_MSG(!devcg_rules_parse_file(r, path, NULL, &err), "%s", err.msg);
	CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st));
	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 3, R);
	unlink(path);
	devcg_rules_free(r);
}

/* An options struct as a newer caller would pass it: ours, then more. */
struct bigger_parse_opts {
	struct devcg_parse_opts o;
	uint64_t newer[2];
};

UTEST(parse_refuses_opts_with_a_field_it_does_not_know_set)
{
	struct bigger_parse_opts big;
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };
	char want[256];

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.newer[1] = 1;
	snprintf(want, sizeof(want), "struct devcg_parse_opts: set past the %zu bytes this libdevcg "
		 DEVCG_VERSION " knows (size %zu): a newer option it cannot honour",
		 offsetof(struct devcg_parse_opts, runtime) + sizeof(big.o.runtime), sizeof(big));
	CHECK_INT(devcg_rules_parse(r, "c 1:3 r", 7, "in", &big.o, &err), -EINVAL);
	CHECK_STR(err.msg, want);
	CHECK_INT(devcg_rules_parse_rule(r, "c 1:3 r", "in", &big.o, &err), -EINVAL);
	CHECK_STR(err.msg, want);
	CHECK_INT(devcg_rules_parse_file(r, "/no/such/file", &big.o, &err), -EINVAL);
	CHECK_STR(err.msg, want);
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(parse_accepts_larger_opts_whose_unknown_fields_are_zero)
{
	struct bigger_parse_opts big;
	struct devcg_rules *r;

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	r = PARSE_OK_OPTS("c 1:3 r", &big.o);
	CHECK_INT(devcg_rules_count(r), 1);
	devcg_rules_free(r);
}

UTEST(parse_refuses_a_set_byte_right_after_the_last_field_it_knows)
{
	struct bigger_parse_opts big;

	/* the first byte a newer library may use (tail padding counts too,
	 * where a struct has any) */
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	((unsigned char *)&big)[offsetof(struct devcg_parse_opts, runtime) + sizeof(big.o.runtime)] = 1;
	PARSE_ERR_OPTS("c 1:3 r", &big.o, -EINVAL, NULL);
}

UTEST(parse_refuses_opts_smaller_than_their_size_field)
{
	struct devcg_parse_opts o = { .sz = 4 };

	PARSE_ERR_OPTS("c 1:3 r", &o, -EINVAL,
		       "struct devcg_parse_opts: its size (4) is smaller than its sz field; "
		       "declare it with DEVCG_OPTS()");
	o.sz = 0;
	PARSE_ERR_OPTS("c 1:3 r", &o, -EINVAL, NULL);
}

struct bigger_replace_opts {
	struct devcg_replace_opts o;
	bool newer_safety_option;
};

UTEST(replace_and_update_refuse_opts_with_a_field_they_do_not_know_set)
{
	struct bigger_replace_opts big;
	struct devcg_rule rule = { .verb = ALLOW, .type = DEVCG_CHAR, .access = R, .major = 1, .minor = 3 };
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_error err = { 0 };

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.newer_safety_option = true;
	/* refused before anything else: the cgroup is not even looked up */
	CHECK_INT(devcg_replace("/no/such/cgroup", p, &big.o, &err), -EINVAL);
	CHECK(strstr(err.msg, "struct devcg_replace_opts: set past the") == err.msg);
	CHECK_INT(devcg_update("/no/such/cgroup", &rule, &big.o, &err), -EINVAL);
	CHECK(strstr(err.msg, "struct devcg_replace_opts: set past the") == err.msg);
	big.o.sz = 2;
	CHECK_INT(devcg_replace("/no/such/cgroup", p, &big.o, &err), -EINVAL);
	/* control: the same call with the unknown field unset gets as far as the path */
	big.o.sz = sizeof(big);
	big.newer_safety_option = false;
	CHECK_INT(devcg_replace("/no/such/cgroup", p, &big.o, &err), -ENOENT);
	devcg_policy_free(p);
}

UTEST(parse_with_a_required_verb_refuses_a_rule_whose_own_verb_differs)
{
	DEVCG_OPTS(devcg_parse_opts, allow, .verb = ALLOW);
	struct devcg_rules *r = devcg_rules_new();
	struct devcg_error err = { 0 };

	/* blanks before the verb, as the CLI once let through */
	CHECK_INT(devcg_rules_parse_rule(r, " deny c 1:9 rwm", "RULE", &allow, &err), -EINVAL);
	CHECK_STR(err.msg, "RULE:1:2: the rule says 'deny' where only 'allow' rules are accepted");
	CHECK_INT(devcg_rules_parse_rule(r, "\t \tdeny c 1:9 rwm", "RULE", &allow, &err), -EINVAL);
	CHECK_STR(err.msg, "RULE:1:4: the rule says 'deny' where only 'allow' rules are accepted");
	CHECK_INT(devcg_rules_parse_rule(r, "deny a", "RULE", &allow, &err), -EINVAL);
	/* another case is no verb at all, and no device type either */
	CHECK_INT(devcg_rules_parse_rule(r, "DENY c 1:9 rwm", "RULE", &allow, &err), -EINVAL);
	/* in a text, on any line */
	CHECK_INT(devcg_rules_parse(r, "c 1:3 r\n  deny c 1:9 r\n", 22, "in", &allow, &err), -EINVAL);
	CHECK_STR(err.msg, "in:2:3: the rule says 'deny' where only 'allow' rules are accepted");
	CHECK_INT(devcg_rules_count(r), 0);
	devcg_rules_free(r);
}

UTEST(parse_with_a_required_verb_refuses_an_oci_rule_of_the_other_verb)
{
	DEVCG_OPTS(devcg_parse_opts, deny, .verb = DENY);

	PARSE_ERR_OPTS("[{\"allow\": false, \"type\": \"c\"}, {\"type\": \"c\", \"allow\": true}]", &deny,
		       -EINVAL, "in:1:56: the rule says 'allow' where only 'deny' rules are accepted");
}

UTEST(parse_with_a_required_verb_gives_it_to_rules_without_one)
{
	DEVCG_OPTS(devcg_parse_opts, deny, .verb = DENY);
	DEVCG_OPTS(devcg_parse_opts, allow, .verb = ALLOW);
	struct devcg_rules *r = PARSE_OK_OPTS("c 1:9 rwm\n  deny b 8:* r\n", &deny);

	CHECK_INT(devcg_rules_count(r), 2);
	CHECK_RULE(r, 0, DENY, DEVCG_CHAR, 1, 9, RWM);
	CHECK_RULE(r, 1, DENY, DEVCG_BLOCK, 8, ANY, R);
	devcg_rules_free(r);
	r = PARSE_OK_OPTS(" allow c 1:9 rwm", &allow);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 9, RWM);
	devcg_rules_free(r);
}

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Helpers shared by the unit tests (static inline: each test file includes
 * what it needs). Every helper that checks something takes the caller's
 * file and line through a macro, so a failure points at the test. */
#ifndef DEVCG_TESTUTIL_H
#define DEVCG_TESTUTIL_H

#include "harness.h"
#include "devcg.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#endif

/* A scratch directory for the test, removed when the test's child exits
 * (with exit(), which a failing CHECK calls) or a UTEST ends. It is flat:
 * files only. */
static char scratch_dir[64];

static inline void rm_scratch(void)
{
	DIR *d;
	struct dirent *e;

	if (!scratch_dir[0])
		return;
	d = opendir(scratch_dir);
	while (d && (e = readdir(d))) {
		char path[384];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", scratch_dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(scratch_dir);
	scratch_dir[0] = '\0';
}

static inline const char *scratch(void)
{
	if (!scratch_dir[0]) {
		snprintf(scratch_dir, sizeof(scratch_dir), "/tmp/devcg-unit.XXXXXX");
		if (!mkdtemp(scratch_dir))
			test_fail(__FILE__, __LINE__, "mkdtemp: %s", strerror(errno));
		atexit(rm_scratch);
	}
	return scratch_dir;
}

/* Write CONTENT to NAME in the scratch directory; returns its path (static). */
static inline const char *write_scratch(const char *name, const char *content)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", scratch(), name);
	f = fopen(path, "w");
	if (!f || fputs(content, f) < 0 || fclose(f))
		test_fail(__FILE__, __LINE__, "cannot write %s", path);
	return path;
}

/*
 * The harness ends a passing test's child with _exit(), which skips the
 * exit-time check of LeakSanitizer. UTEST is TEST plus an explicit leak
 * check at the end of the test, so that a leak fails the test in the ASan
 * build (a no-op in the plain build).
 */
static inline void check_no_leaks(const char *file, int line)
{
#if defined(__SANITIZE_ADDRESS__)
	if (__lsan_do_recoverable_leak_check())
		test_fail(file, line, "memory leaked (see the LeakSanitizer report above)");
#else
	(void)file;
	(void)line;
#endif
}

#define UTEST(name)                                  \
	static void name##_body(void);               \
	TEST(name)                                   \
	{                                            \
		name##_body();                       \
		rm_scratch();                        \
		check_no_leaks(__FILE__, __LINE__);  \
	}                                            \
	static void name##_body(void)

/* The sentinel rule that error tests put in a list before a failing parse,
 * to see that nothing is appended and nothing already there changes. */
static const struct devcg_rule sentinel_rule = {
	.verb = DEVCG_VERB_DENY, .type = DEVCG_BLOCK, .access = DEVCG_ACC_MKNOD,
	.major = 4242, .minor = 17,
};

static inline bool rule_eq(const struct devcg_rule *a, const struct devcg_rule *b)
{
	return a->verb == b->verb && a->type == b->type && a->access == b->access &&
	       a->major == b->major && a->minor == b->minor;
}

static inline const char *rule_str(const struct devcg_rule *r, char *buf, size_t len)
{
	if (!r)
		return "(none)";
	devcg_rule_format(r, buf, len);
	return buf;
}

/* Parse LEN bytes of TEXT into a new list, which must succeed. */
static inline struct devcg_rules *parse_ok_at(const char *file, int line, const char *text,
					      size_t len, const struct devcg_parse_opts *opts)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_error err = { 0 };
	int ret;

	if (!rules)
		test_fail(file, line, "devcg_rules_new failed");
	ret = devcg_rules_parse(rules, text, len, "in", opts, &err);
	if (ret)
		test_fail(file, line, "parse of \"%.*s\" failed: %d %s", (int)len, text, ret, err.msg);
	return rules;
}
#define PARSE_OK(text) parse_ok_at(__FILE__, __LINE__, (text), strlen(text), NULL)
#define PARSE_OK_OPTS(text, opts) parse_ok_at(__FILE__, __LINE__, (text), strlen(text), (opts))

/* Parse LEN bytes of TEXT (source "in") into a list holding the sentinel,
 * which must fail with CODE and exactly MSG, and append nothing. */
static inline void parse_err_at(const char *file, int line, const char *text, size_t len,
				const struct devcg_parse_opts *opts, int code, const char *msg)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_error err = { 0 };
	int ret;

	if (!rules || devcg_rules_add(rules, &sentinel_rule, NULL))
		test_fail(file, line, "cannot set up the rule list");
	ret = devcg_rules_parse(rules, text, len, "in", opts, &err);
	if (ret != code)
		test_fail(file, line, "parse of \"%.*s\" returned %d (%s), expected %d", (int)len, text,
			  ret, ret ? err.msg : "", code);
	if (err.code != code)
		test_fail(file, line, "err.code is %d, expected %d", err.code, code);
	if (msg && strcmp(err.msg, msg))
		test_fail(file, line, "message is \"%s\", expected \"%s\"", err.msg, msg);
	if (devcg_rules_count(rules) != 1 || !rule_eq(devcg_rules_get(rules, 0), &sentinel_rule))
		test_fail(file, line, "a failed parse changed the list (%zu rules)",
			  devcg_rules_count(rules));
	devcg_rules_free(rules);
}
#define PARSE_ERR(text, code, msg) \
	parse_err_at(__FILE__, __LINE__, (text), strlen(text), NULL, (code), (msg))
#define PARSE_ERR_OPTS(text, opts, code, msg) \
	parse_err_at(__FILE__, __LINE__, (text), strlen(text), (opts), (code), (msg))

/* Rule I of RULES must be exactly the given one. */
static inline void check_rule_at(const char *file, int line, const struct devcg_rules *rules,
				 size_t i, uint8_t verb, uint8_t type, uint32_t major,
				 uint32_t minor, uint8_t access)
{
	const struct devcg_rule want = {
		.verb = verb, .type = type, .access = access, .major = major, .minor = minor,
	};
	const struct devcg_rule *got = devcg_rules_get(rules, i);
	char a[64], b[64];

	if (!got || !rule_eq(got, &want))
		test_fail(file, line, "rule %zu is \"%s\" (type %d), expected \"%s\"", i,
			  rule_str(got, a, sizeof(a)), got ? got->type : -1,
			  rule_str(&want, b, sizeof(b)));
}
#define CHECK_RULE(rules, i, verb, type, major, minor, access) \
	check_rule_at(__FILE__, __LINE__, (rules), (i), (verb), (type), (major), (minor), (access))

/* One rule a table expects, in the order of check_rule_at()'s arguments. */
struct want_rule {
	uint8_t verb, type;
	uint32_t major, minor;
	uint8_t access;
};

/* TEXT (parsed with OPTS, which may be NULL) must give exactly the N rules
 * of WANT, in that order. */
static inline void parse_gives_at(const char *file, int line, const char *text,
				  const struct devcg_parse_opts *opts,
				  const struct want_rule *want, size_t n)
{
	struct devcg_rules *rules = parse_ok_at(file, line, text, strlen(text), opts);
	size_t i;

	if (devcg_rules_count(rules) != n)
		test_fail(file, line, "\"%s\" gives %zu rules, expected %zu", text,
			  devcg_rules_count(rules), n);
	for (i = 0; i < n; i++)
		check_rule_at(file, line, rules, i, want[i].verb, want[i].type, want[i].major,
			      want[i].minor, want[i].access);
	devcg_rules_free(rules);
}
/* PARSE_GIVES(text, opts, { ALLOW, DEVCG_CHAR, 1, 3, RWM }, ...): the table
 * of rules TEXT must give. */
#define PARSE_GIVES(text, opts, ...)                                                     \
	do {                                                                             \
		static const struct want_rule want_[] = { __VA_ARGS__ };                 \
		parse_gives_at(__FILE__, __LINE__, (text), (opts), want_,                \
			       sizeof(want_) / sizeof(want_[0]));                        \
	} while (0)

#define ALLOW DEVCG_VERB_ALLOW
#define DENY DEVCG_VERB_DENY
#define ANY DEVCG_ANY
#define R DEVCG_ACC_READ
#define W DEVCG_ACC_WRITE
#define M DEVCG_ACC_MKNOD
#define RWM DEVCG_ACC_ALL

/* A policy made by applying TEXT (which must parse and apply) to a fresh one. */
static inline struct devcg_policy *policy_of_at(const char *file, int line, const char *text)
{
	struct devcg_rules *rules = parse_ok_at(file, line, text, strlen(text), NULL);
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_error err = { 0 };
	int ret;

	if (!p)
		test_fail(file, line, "devcg_policy_new failed");
	ret = devcg_policy_apply_all(p, rules, &err);
	if (ret)
		test_fail(file, line, "apply of \"%s\" failed: %d %s", text, ret, err.msg);
	devcg_rules_free(rules);
	return p;
}
#define POLICY_OF(text) policy_of_at(__FILE__, __LINE__, (text))

/* Apply TEXT to P, which must succeed. */
static inline void apply_text_at(const char *file, int line, struct devcg_policy *p,
				 const char *text)
{
	struct devcg_rules *rules = parse_ok_at(file, line, text, strlen(text), NULL);
	struct devcg_error err = { 0 };
	int ret = devcg_policy_apply_all(p, rules, &err);

	if (ret)
		test_fail(file, line, "apply of \"%s\" failed: %d %s", text, ret, err.msg);
	devcg_rules_free(rules);
}
#define APPLY(p, text) apply_text_at(__FILE__, __LINE__, (p), (text))

/* The decision for one request, which must be well formed. */
static inline int decide_at(const char *file, int line, const struct devcg_policy *p,
			    uint8_t type, uint32_t major, uint32_t minor, uint8_t access)
{
	int ret = devcg_policy_check(p, type, major, minor, access, NULL, NULL);

	if (ret != 0 && ret != 1)
		test_fail(file, line, "devcg_policy_check(%d, %u, %u, %d) returned %d", type, major,
			  minor, access, ret);
	return ret;
}
#define ALLOWED(p, type, major, minor, access) \
	(decide_at(__FILE__, __LINE__, (p), (type), (major), (minor), (access)) == 1)
#define CHECK_ALLOWED(p, type, major, minor, access) \
	CHECK_MSG(ALLOWED(p, type, major, minor, access), \
		  "%s %u:%u access %d should be allowed", #type, (unsigned)(major), (unsigned)(minor), (int)(access))
#define CHECK_DENIED(p, type, major, minor, access) \
	CHECK_MSG(!ALLOWED(p, type, major, minor, access), \
		  "%s %u:%u access %d should be denied", #type, (unsigned)(major), (unsigned)(minor), (int)(access))

/* The exception list of P, as "c 1:3 rw,b 8:* m" (canonical order). */
static inline const char *exceptions_str(const struct devcg_policy *p, char *buf, size_t len)
{
	const struct devcg_exception *ex = devcg_policy_exceptions(p);
	size_t i, n = devcg_policy_count(p), used = 0;

	buf[0] = '\0';
	for (i = 0; i < n && used < len; i++) {
		struct devcg_rule r = {
			.verb = DEVCG_VERB_ALLOW, .type = ex[i].type, .access = ex[i].access,
			.major = ex[i].major, .minor = ex[i].minor,
		};
		char one[64];

		devcg_rule_format(&r, one, sizeof(one));
		used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? "," : "",
					 one + strlen("allow "));
	}
	return buf;
}
#define CHECK_EXCEPTIONS(p, want)                                    \
	do {                                                         \
		char _buf[4096];                                     \
		CHECK_STR(exceptions_str((p), _buf, sizeof(_buf)), (want)); \
	} while (0)

/* A small deterministic PRNG (xorshift64*), so randomized tests repeat. */
static inline uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

static inline uint32_t rng_below(uint64_t *s, uint32_t n)
{
	return (uint32_t)((rng_next(s) >> 32) % n);
}

#endif

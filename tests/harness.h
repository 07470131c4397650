/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* A small test harness: every TEST runs in its own forked child, so a crash
 * or a failed CHECK ends only that test; the parent then runs the suite's
 * cleanup hook (kernel tests remove their scratch cgroups there). It ends
 * with the line "N passed, N failed, N skipped". */
#ifndef DEVCG_HARNESS_H
#define DEVCG_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct test {
	const char *name;
	void (*fn)(void);
	struct test *next;
};

void test_register(struct test *t);
void test_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));
void test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
/* Called in the parent after each test, pass or fail (may be NULL). */
extern void (*test_cleanup_hook)(void);

#define TEST(name)                                                        \
	static void name(void);                                           \
	static struct test name##_test = { #name, name, NULL };            \
	__attribute__((constructor)) static void name##_register(void)   \
	{                                                                 \
		test_register(&name##_test);                              \
	}                                                                 \
	static void name(void)

#define CHECK(cond)                                                       \
	do {                                                              \
		if (!(cond))                                              \
			test_fail(__FILE__, __LINE__, "%s", #cond);       \
	} while (0)

#define CHECK_MSG(cond, ...)                                              \
	do {                                                              \
		if (!(cond))                                              \
			test_fail(__FILE__, __LINE__, __VA_ARGS__);       \
	} while (0)

#define CHECK_INT(a, b)                                                   \
	do {                                                              \
		long long _a = (long long)(a), _b = (long long)(b);       \
		if (_a != _b)                                             \
			test_fail(__FILE__, __LINE__, "%s == %lld, expected %s == %lld", \
				  #a, _a, #b, _b);                        \
	} while (0)

#define CHECK_STR(a, b)                                                   \
	do {                                                              \
		const char *_a = (a), *_b = (b);                          \
		if (!_a || strcmp(_a, _b))                                \
			test_fail(__FILE__, __LINE__, "%s is \"%s\", expected \"%s\"", \
				  #a, _a ? _a : "(null)", _b);            \
	} while (0)

#define SKIP(...) test_skip(__VA_ARGS__)

#endif

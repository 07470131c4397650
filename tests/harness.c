// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include "harness.h"

#include <fnmatch.h>
#include <stdarg.h>
#include <sys/wait.h>
#include <unistd.h>

enum { EXIT_PASS = 0, EXIT_FAIL = 1, EXIT_SKIP = 77 };

/* Under AddressSanitizer a passing test still has to pass LeakSanitizer:
 * _exit() skips its check at exit, so run it before. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define leak_check() __lsan_do_leak_check()
#else
#define leak_check() ((void)0)
#endif

static struct test *head, **tail = &head;
void (*test_cleanup_hook)(void);

void test_register(struct test *t)
{
	*tail = t;
	tail = &t->next;
}

void test_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(EXIT_FAIL);
}

void test_skip(const char *fmt, ...)
{
	va_list ap;

	fflush(stderr);
	printf("    skipped: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	exit(EXIT_SKIP);
}

/* Usage: SUITE [GLOB...]: run the tests whose names match any GLOB. */
int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;
	struct test *t;

	setvbuf(stdout, NULL, _IOLBF, 0);
	for (t = head; t; t = t->next) {
		int i, status, match = argc < 2;
		pid_t pid;

		for (i = 1; i < argc; i++)
			match |= !fnmatch(argv[i], t->name, 0);
		if (!match)
			continue;
		fflush(stdout);
		fflush(stderr);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			t->fn();
			fflush(stdout);
			leak_check();
			_exit(EXIT_PASS);
		}
		while (waitpid(pid, &status, 0) < 0)
			;
		if (test_cleanup_hook)
			test_cleanup_hook();
		if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_PASS) {
			printf("ok   %s\n", t->name);
			passed++;
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_SKIP) {
			printf("skip %s\n", t->name);
			skipped++;
		} else {
			if (WIFSIGNALED(status))
				printf("    killed by signal %d\n", WTERMSIG(status));
			printf("FAIL %s\n", t->name);
			failed++;
		}
	}
	printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}

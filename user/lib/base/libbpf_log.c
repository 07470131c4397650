// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libbpf prints through one process-wide hook (libbpf_set_print(); libbpf
 * 1.1.2 has no per-object one), by default to standard error. A library
 * must not write there on its own, and a failed load would otherwise put
 * several raw "libbpf:" lines before the caller's one message. So the
 * first devcg call that uses libbpf installs, once, a hook that forwards:
 * while this thread is inside such a call, warnings are kept for the
 * call's devcg_error; any other message goes to the hook installed before.
 */
#include "base/base.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

static pthread_once_t installed = PTHREAD_ONCE_INIT;
static libbpf_print_fn_t before;
static __thread struct devcg_bpf_log *capture;

static int forward(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	struct devcg_bpf_log *log = capture;
	libbpf_print_fn_t next;
	char line[256], *s = line;
	size_t n;

	if (!log) {
		next = __atomic_load_n(&before, __ATOMIC_ACQUIRE);
		return next ? next(level, fmt, ap) : 0;
	}
	if (level != LIBBPF_WARN)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (!strncmp(s, "libbpf: ", 8))
		s += 8;
	n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '.'))
		n--;
	if (n && log->len + n + 2 < sizeof(log->text)) {
		if (log->len) {
			memcpy(log->text + log->len, "; ", 2);
			log->len += 2;
		}
		memcpy(log->text + log->len, s, n);
		log->len += n;
		log->text[log->len] = '\0';
	}
	return 0;
}

static void install(void)
{
	__atomic_store_n(&before, libbpf_set_print(forward), __ATOMIC_RELEASE);
}

void devcg_bpf_log_begin(struct devcg_bpf_log *log)
{
	pthread_once(&installed, install);
	log->text[0] = '\0';
	log->len = 0;
	log->outer = capture;
	capture = log;
}

int devcg_bpf_log_end(struct devcg_bpf_log *log, int ret, struct devcg_error *err)
{
	char msg[sizeof(err->msg)];

	capture = log->outer;
	/* where devcg named the missing capabilities, libbpf's advice
	 * (RLIMIT_MEMLOCK, CONFIG_BPF_SYSCALL) would only mislead */
	if (ret >= 0 || !log->len || !err || !err->msg[0] || strstr(err->msg, DEVCG_NEEDS_ROOT))
		return ret;
	/* libbpf's text goes through the same escaping as devcg's own */
	snprintf(msg, sizeof(msg), "%s (libbpf: %s)", err->msg, log->text);
	return devcg_err(err, ret, "%s", msg);
}

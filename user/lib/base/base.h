/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The bottom room of libdevcg (user/lib/base): messages, escaping,
 * capabilities, options structs, libbpf's messages; what every room uses.
 * Not part of the public API. */
#ifndef DEVCG_BASE_H
#define DEVCG_BASE_H

#include "devcg.h"
#include "devcg_abi.h"

#include <stddef.h>
#include <stdint.h>
#include <linux/capability.h>

/* pidfd_open(2) and pidfd_send_signal(2) where the C library's headers
 * predate them (the unified numbers, as on every architecture but alpha) */
#include <sys/syscall.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* Fill ERR (if any) with CODE and a printf-style message; returns CODE. */
int devcg_err(struct devcg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix ERR's message with context, keeping its code; returns the code. */
int devcg_err_wrap(struct devcg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* devcg_escape() without flags into BUF, for quoting untrusted text (rule
 * text, JSON strings, paths) into a message; returns BUF. */
const char *devcg_quote(char *buf, size_t len, const char *s, size_t n);

/* Capabilities, as bits of the kernel's numbers (linux/capability.h). */
#define DEVCG_CAP(n) (1ull << (n))
/* What loading, querying and attaching device filters needs
 * (kernel/bpf/syscall.c: CAP_BPF to load, CAP_NET_ADMIN to query and
 * attach, CAP_SYS_ADMIN for programs and maps by id); and the trace. */
#define DEVCG_CAPS_FILTER (DEVCG_CAP(CAP_BPF) | DEVCG_CAP(CAP_SYS_ADMIN) | DEVCG_CAP(CAP_NET_ADMIN))
#define DEVCG_CAPS_TRACE (DEVCG_CAP(CAP_BPF) | DEVCG_CAP(CAP_SYS_ADMIN) | DEVCG_CAP(CAP_PERFMON))
/*
 * The reason for CODE in a message: for -EPERM or -EACCES, the
 * capabilities among NEEDS that this thread lacks ("missing CAP_BPF and
 * CAP_SYS_ADMIN (devcg needs root)"); strerror() otherwise, and when none
 * is missing. The text lives until the thread's next call.
 */
const char *devcg_why(int code, uint64_t needs);
/* "missing CAP_X and CAP_Y (devcg needs root)" for the capabilities of
 * NEEDS this thread lacks, or NULL (CAP_SYS_ADMIN stands for them all). */
const char *devcg_caps_missing(uint64_t needs);
#define DEVCG_NEEDS_ROOT "(devcg needs root)"

/*
 * The size check of an options struct: 0 for NULL or a struct whose bytes
 * past KNOWN (the end of the last field this library has) are all zero;
 * -EINVAL with a message naming the struct when one is set, or when its
 * size is smaller than its sz field.
 */
int devcg_opts_check(const void *opts, size_t known, const char *name, struct devcg_error *err);
#define DEVCG_OPTS_END(TYPE, LAST) (offsetof(struct TYPE, LAST) + sizeof(((struct TYPE *)0)->LAST))
#define DEVCG_OPTS_VALID(opts, TYPE, LAST, err) \
	devcg_opts_check((opts), DEVCG_OPTS_END(TYPE, LAST), #TYPE, (err))
/* The last field of each options struct: update these when adding one
 * (the size assertions in error.c catch a field added past them). */
#define DEVCG_PARSE_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_parse_opts, runtime, err)
#define DEVCG_REPLACE_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_replace_opts, cache_hit, err)
#define DEVCG_RESET_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_reset_opts, cgroup, err)

/*
 * libbpf's messages (libbpf_log.c). Between begin and end, libbpf's
 * warnings on this thread are collected in LOG instead of printed; end
 * adds them to ERR's message (one line, after devcg's own text) when RET
 * is a failure, except when the message names missing capabilities
 * (devcg_why()). Returns RET. Captures nest.
 */
struct devcg_bpf_log {
	char text[512];
	size_t len;
	struct devcg_bpf_log *outer;
};
void devcg_bpf_log_begin(struct devcg_bpf_log *log);
int devcg_bpf_log_end(struct devcg_bpf_log *log, int ret, struct devcg_error *err);

/* Is an options struct at least as large as the field F of TYPE? */
#define DEVCG_OPTS_HAS(opts, TYPE, F)                                   \
	((opts) && (opts)->sz >= offsetof(struct TYPE, F) + sizeof((opts)->F))
#define DEVCG_OPT(opts, TYPE, F, dflt) \
	(DEVCG_OPTS_HAS(opts, TYPE, F) ? (opts)->F : (dflt))


/* Testing aid of struct devcg_replace_opts.fail_at. */
static inline bool devcg_fault(const char *fail_at, const char *step)
{
	return fail_at && !__builtin_strcmp(fail_at, step);
}

#endif

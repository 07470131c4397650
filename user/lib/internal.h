/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Helpers shared by the library's sources; not part of the public API. */
#ifndef DEVCG_INTERNAL_H
#define DEVCG_INTERNAL_H

#include "devcg.h"

#include <stddef.h>
#include <stdint.h>
#include <linux/capability.h>

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
#define DEVCG_PARSE_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_parse_opts, verb, err)
#define DEVCG_REPLACE_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_replace_opts, fail_at, err)

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

/* Exceptions of a policy are unique by (type, major, minor): the kernel's
 * dev_exception_add() merges and dev_exception_rm() trims only on an exact
 * match of all three. */
static inline int devcg_exception_cmp(const struct devcg_exception *a,
				      const struct devcg_exception *b)
{
	/* char before block; DEVCG_ANY (all ones) sorts last by itself */
	if (a->type != b->type)
		return a->type == DEVCG_CHAR ? -1 : 1;
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	return 0;
}

/*
 * Copy the exceptions, in no particular order, to OUT (room for
 * devcg_policy_count()); returns how many. Unlike devcg_policy_exceptions()
 * it only reads the policy, so threads may share one policy through it.
 */
size_t devcg_policy_collect(const struct devcg_policy *policy, struct devcg_exception *out);

/* The access of the exception with exactly KEY's type, major and minor (0: none). */
uint8_t devcg_policy_access_of(const struct devcg_policy *policy, const struct devcg_exception *key);

/* Read a whole file (or stdin for "-") into a NUL-terminated buffer. */
int devcg_read_file(const char *path, char **buf, size_t *len, struct devcg_error *err);

/* Parse the OCI JSON forms; appends to RULES only on success. VERB, when
 * not 0, is the one every rule must have (devcg_parse_opts.verb). */
int devcg_parse_oci(struct devcg_rules *rules, const char *text, size_t len,
		    const char *source, uint8_t verb, struct devcg_error *err);

/* Append many rules at once, or none. */
int devcg_rules_append(struct devcg_rules *rules, const struct devcg_rule *add, size_t n,
		       struct devcg_error *err);

/* A resolved cgroup v2 directory. */
struct devcg_cgroup {
	char mount[4096]; /* the cgroup2 mount */
	char path[4096];  /* absolute, without symlinks */
	char rel[4096];   /* relative to the mount, "/" for its root */
	int fd;           /* O_RDONLY directory */
};

int devcg_cgroup2_mount(char *buf, size_t len, struct devcg_error *err);
/* Resolve ARG (absolute, or relative to the cgroup2 mount); must be cgroup2. */
int devcg_cgroup_resolve(const char *arg, struct devcg_cgroup *cg, struct devcg_error *err);
void devcg_cgroup_close(struct devcg_cgroup *cg);

/* swap.c: the devcg_attach_mode of BPF attach flags. */
uint32_t devcg_mode_of(uint32_t attach_flags);

/* filter.c: one filter version, loaded and frozen but not attached. */
struct devcg_filter_version {
	int prog_fd;
	uint32_t prog_id;
	void *skel; /* struct devcg_filter */
};

/* AUDIT_FROM: the audit filter (the version replaced) whose ring and loss
 * count the new version shares, or -1. */
int devcg_filter_load(const struct devcg_policy *policy, bool audit, int audit_from,
		      const char *fail_at, struct devcg_filter_version *out, struct devcg_error *err);
/* The audit ring buffer, and the count of denials it had no room for, of a
 * devcg filter, as new fds, or a negative errno. */
int devcg_filter_audit_ring(int prog_fd);
int devcg_filter_audit_lost(int prog_fd);
void devcg_filter_close(struct devcg_filter_version *v);
/*
 * Is PROG_FD a devcg filter? Returns 1 and, when POLICY is non-NULL, its
 * policy read back from its own maps; 0 for a foreign program.
 */
int devcg_filter_read(int prog_fd, struct devcg_policy **policy, bool *audit,
		      struct devcg_error *err);

/* Testing aid of struct devcg_replace_opts.fail_at. */
static inline bool devcg_fault(const char *fail_at, const char *step)
{
	return fail_at && !__builtin_strcmp(fail_at, step);
}

#endif

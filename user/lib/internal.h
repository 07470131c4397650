/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Helpers shared by the library's sources; not part of the public API. */
#ifndef DEVCG_INTERNAL_H
#define DEVCG_INTERNAL_H

#include "devcg.h"

#include <stddef.h>

/* Fill ERR (if any) with CODE and a printf-style message; returns CODE. */
int devcg_err(struct devcg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix ERR's message with context, keeping its code; returns the code. */
int devcg_err_wrap(struct devcg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

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

/* Parse the OCI JSON forms; appends to RULES only on success. With
 * opts->runtime set, a config.json yields that runtime's whole list. */
int devcg_parse_oci(struct devcg_rules *rules, const char *text, size_t len,
		    const char *source, const struct devcg_parse_opts *opts, struct devcg_error *err);

/* runtime.c: append the list RT installs for linux.resources.devices RES
 * (N) and linux.devices paths PATHS (NPATHS); on error, *WHERE is the index
 * of the resources rule at fault, or -1. */
int devcg_runtime_rules(struct devcg_rules *rules, enum devcg_runtime rt, const struct devcg_rule *res,
			size_t n, const char *const *paths, size_t npaths, long *where,
			struct devcg_error *err);
const char *devcg_runtime_name(enum devcg_runtime rt);

/* cgroup.c: undo mountinfo's \ooo escapes in place. */
void devcg_mountinfo_unescape(char *s);

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

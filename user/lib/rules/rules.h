/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The rule language and policies (user/lib/rules): rules, v1 policy
 * algebra, runtime profiles, the text and OCI forms; no kernel calls.
 * Not part of the public API. */
#ifndef DEVCG_RULES_H
#define DEVCG_RULES_H

#include "base/base.h"

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

/* 1 when P allows a request (a device and an access) that none of the
 * NBASE policies of BASE (at most 7) allows, the first such in *WITNESS
 * (its access the request's); 0 when not; -ENOMEM. */
int devcg_policy_beyond(const struct devcg_policy *p, const struct devcg_policy *const *base, size_t nbase,
			struct devcg_exception *witness);

/* Read a whole file (or stdin for "-") into a NUL-terminated buffer. */
int devcg_read_file(const char *path, char **buf, size_t *len, struct devcg_error *err);

/* Parse the OCI JSON forms; appends to RULES only on success. With
 * opts->runtime set, a config.json yields that runtime's whole list; with
 * opts->verb, every rule must have that verb. */
int devcg_parse_oci(struct devcg_rules *rules, const char *text, size_t len,
		    const char *source, const struct devcg_parse_opts *opts, struct devcg_error *err);

/* runtime.c: append the list RT installs for linux.resources.devices RES
 * (N) and linux.devices paths PATHS (NPATHS); on error, *WHERE is the index
 * of the resources rule at fault, or -1. */
int devcg_runtime_rules(struct devcg_rules *rules, enum devcg_runtime rt, const struct devcg_rule *res,
			size_t n, const char *const *paths, size_t npaths, long *where,
			struct devcg_error *err);
const char *devcg_runtime_name(enum devcg_runtime rt);


/* Append many rules at once, or none. */
int devcg_rules_append(struct devcg_rules *rules, const struct devcg_rule *add, size_t n,
		       struct devcg_error *err);

#endif

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

/* Read a whole file (or stdin for "-") into a NUL-terminated buffer. */
int devcg_read_file(const char *path, char **buf, size_t *len, struct devcg_error *err);

/* Parse the OCI JSON forms; appends to RULES only on success. */
int devcg_parse_oci(struct devcg_rules *rules, const char *text, size_t len,
		    const char *source, struct devcg_error *err);

/* Append many rules at once, or none. */
int devcg_rules_append(struct devcg_rules *rules, const struct devcg_rule *add, size_t n,
		       struct devcg_error *err);

#endif

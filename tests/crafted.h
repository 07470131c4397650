/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Policies whose keys are chosen against the filter's hash table, as the
 * author of a container can choose the rules of its config.json or of its
 * io.devcg.rules annotation: for the unit tests, the kernel tests and the
 * bench (static inline: each includes what it needs).
 *
 * A key's first slot in a table of 2^bits slots is the top bits of its 32
 * bits (major << 20 | minor) times an odd multiplier (devcg_table_home()):
 * the keys P * M^-1 for consecutive P all share their first slot under M.
 */
#ifndef DEVCG_CRAFTED_H
#define DEVCG_CRAFTED_H

#include "devcg.h"
#include "internal.h"
#include "devcg_abi.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* The multiplier of every table of more than 2,048 keys before devcg
 * bounded its lookups: fixed and public (the first of filter.c's
 * sequence, 0x9e3779b1 mixed) */
#define CRAFTED_OLD_MULT 0x640ca17fU
/* the largest table: 2^18 slots */
#define CRAFTED_BITS 18

/* M^-1 modulo 2^32, M odd (Newton's iteration) */
static inline uint32_t crafted_inverse(uint32_t m)
{
	uint32_t x = m;
	int i;

	for (i = 0; i < 5; i++)
		x *= 2 - m * x;
	return x;
}

/*
 * Add to P N exact exceptions (a char and a block one for each number,
 * access from 1 to 7) that disagree with its default and whose first
 * slot under MULT in a table of 2^18 slots is FIRST (and the slots after
 * it when there are more than 2^15), so in every smaller table too. No
 * key of major 1 (the bench opens /dev/null). Returns how many were added.
 */
static inline size_t crafted_add(struct devcg_policy *p, uint32_t mult, uint32_t first, size_t n)
{
	uint32_t inverse = crafted_inverse(mult), product = first << (32 - CRAFTED_BITS);
	bool allow = devcg_policy_default_allow(p);
	size_t added = 0, before = devcg_policy_count(p);
	int t;

	while (added < n) {
		uint32_t key = (product++) * inverse;

		if (key >> DEVCG_MINOR_BITS == 1)
			continue;
		for (t = 0; t < 2 && added < n; t++, added++) {
			struct devcg_rule r = { .verb = allow ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW,
						.type = t ? DEVCG_BLOCK : DEVCG_CHAR,
						.access = (uint8_t)(1 + key % 7),
						.major = key >> DEVCG_MINOR_BITS,
						.minor = key & ((1u << DEVCG_MINOR_BITS) - 1) };

			if (devcg_policy_apply(p, &r, NULL))
				return devcg_policy_count(p) - before;
		}
	}
	return devcg_policy_count(p) - before;
}

/* A policy of N exceptions that all share one first slot under the old
 * fixed multiplier in its largest table, on the default DEFAULT_ALLOW. */
static inline struct devcg_policy *crafted_policy(size_t n, bool default_allow)
{
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_rule r = { .verb = default_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY, .type = DEVCG_ALL,
				.access = DEVCG_ACC_ALL, .major = DEVCG_ANY, .minor = DEVCG_ANY };

	if (!p || devcg_policy_apply(p, &r, NULL)) {
		devcg_policy_free(p);
		return NULL;
	}
	crafted_add(p, CRAFTED_OLD_MULT, 1000, n);
	return p;
}

/*
 * Add to P, against each multiplier devcg's table is filled under (its
 * program holds it, and devcg's source says which it tries), 16 keys that
 * share a first slot under it in every table size, until devcg no longer
 * hashes the policy's keys (AUDIT: for the audit variant) and sorts them
 * instead: the rounds it took, or -1 when it did not within 64.
 */
static inline int crafted_against_every_multiplier(struct devcg_policy *p, bool audit)
{
	int round;

	for (round = 0; round < 64; round++) {
		struct devcg_policy_value *v;
		struct devcg_table t;
		size_t size;

		if (devcg_filter_value(p, audit, &v, &size, &t))
			return -1;
		free(v);
		if (t.sorted)
			return round;
		if (crafted_add(p, (uint32_t)t.mult, 77 + 1000u * (uint32_t)round, 16) != 16)
			return -1;
	}
	return -1;
}

#endif

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The device filter (user/lib/filter): one filter version's map value,
 * its instructions, its load, reading it back. Not part of the public API. */
#ifndef DEVCG_FILTER_H
#define DEVCG_FILTER_H

#include "rules/rules.h"

/* filter.c: one filter version, loaded and frozen but not attached. */
struct devcg_filter_version {
	int prog_fd;
	uint32_t prog_id;
};

/* AUDIT_FROM: the audit filter (the version replaced) whose ring and loss
 * count the new version shares, or -1. */
int devcg_filter_load(const struct devcg_policy *policy, bool audit, int audit_from,
		      const char *fail_at, struct devcg_filter_version *out, struct devcg_error *err);
/* devcg's program (the variant without audit) on a policy map the caller
 * made, filled with VALUE (a struct devcg_policy_value) and froze: a new
 * program fd, or a negative errno. The bench loads it in its floor's
 * place, to show how much of a swap the program is. */
int devcg_filter_load_program(int policy_map_fd, const void *value, struct devcg_error *err);

/* What the filter's program is written from, besides the value's head:
 * how its table was filled. */
struct devcg_table {
	bool sorted;             /* the slots are sorted by key: a binary search */
	__u64 mult;              /* the hash multiplier (devcg_table_home()) */
	unsigned int probes[4];  /* per shape, the longest probe (0: none; 1 when sorted) */
	int any_access[2];       /* block, char: the '*:*' exception's access, or -1 */
};
/* The policy map's value for POLICY (filter.c): the head, the table, the
 * exceptions no request can match; and how the table was filled. Free
 * *OUT. 0 or -ENOMEM. */
int devcg_filter_value(const struct devcg_policy *policy, bool audit, struct devcg_policy_value **out,
		       size_t *size, struct devcg_table *table);
/* How the table of the value V was filled, found again from it alone (the
 * multiplier is chosen from the keys and the process's secret alone: a
 * value this process filled). */
int devcg_table_of(const struct devcg_policy_value *v, struct devcg_table *table);
/* table.c: the table of the value *OUT from the K tags TAGS (the '*:*'
 * ones last), with room for OTHERS exceptions after it, allocated by
 * devcg_filter_take() when KEEP, else malloc(); how it was filled in T.
 * The secret is drawn first, at first use. 0 or -ENOMEM. */
int devcg_table_fill(const __u64 *tags, size_t k, size_t others, struct devcg_policy_value **out, size_t *size,
		     struct devcg_table *t, bool keep);
/* table.c: SIZE bytes from the memory this thread kept, or malloc()'s;
 * give them back (or malloc()'s) with devcg_filter_give(). */
void *devcg_filter_take(size_t size);
void devcg_filter_give(void *p);
/* For tests and the bench: set the secret the hash multipliers are mixed
 * from (drawn from getrandom() at first use; 0 gives the sequence anyone
 * can compute from devcg's source). */
void devcg_filter_hash_secret(__u32 secret);
/* user/lib/filter/program.c: the filter's instructions for the policy value V and
 * its TABLE, naming the maps FDS (policy, audit ring, loss count; the last
 * two only with AUDIT). Free *INSNS. 0 or a negative errno. */
struct devcg_policy_value;
struct bpf_insn;
int devcg_program_build(const struct devcg_policy_value *v, const struct devcg_table *table, bool audit,
			const int fds[3], struct bpf_insn **insns, size_t *cnt);
/* The most slots a lookup reads, whatever the keys: DEVCG_MAX_PROBES in a
 * hash table, bits + 1 in a sorted one (at most 2^17 slots for
 * DEVCG_MAX_RULES keys) */
#define DEVCG_LOOKUP_MAX_SLOTS 18
/* The longest program devcg_program_build() writes (a longer one is
 * -E2BIG), whatever the keys: four lookups of at most
 * DEVCG_LOOKUP_MAX_SLOTS slots, and the audit variant's report */
#define DEVCG_PROGRAM_MAX_INSNS 1024
/* A tag's first slot in a table of 1 << BITS slots: the top BITS bits of
 * the low 32 bits of its key (major and minor) times MULT (32 bits), plus
 * a quarter turn for each shape, so that the shapes start apart (the same
 * numbers exact and with minor '*' do not meet); in 32-bit arithmetic, as
 * the filter computes it. */
static inline __u64 devcg_table_home(__u64 tag, __u64 mult, unsigned int bits)
{
	uint32_t shape = DEVCG_TAG_SEGMENT(tag) & 3;

	return (uint32_t)((uint32_t)tag * (uint32_t)mult + (shape << 30)) >> (32 - bits);
}
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

#endif

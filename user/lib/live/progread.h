/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The reader of any BPF_CGROUP_DEVICE program (progread.c), inside the
 * library: an interpreter of its instructions over maps given as callbacks,
 * so that the unit tests run hand-written programs (and devcg's own, as
 * written by program.c) without a kernel.
 */
#ifndef DEVCG_PROGREAD_H
#define DEVCG_PROGREAD_H

#include "devcg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_insn;

/* One map a program reads. ID is what its BPF_LD_IMM64 instructions carry
 * (a map id in translated instructions, any number in hand-written ones). */
struct devcg_reader_map {
	uint32_t id;
	uint32_t type; /* BPF_MAP_TYPE_* */
	uint32_t key_size, value_size, max_entries;
	/* 0 and VALUE filled, -ENOENT when KEY is absent, another negative
	 * errno on failure */
	int (*lookup)(void *ctx, const void *key, void *value);
	/* the key after KEY (NULL: the first) in NEXT: 0, or -ENOENT at the end;
	 * NULL for maps without keys to list */
	int (*next_key)(void *ctx, const void *key, void *next);
	void *ctx;
};

/* Instructions as a program was written (helpers by BPF_FUNC_* number,
 * map lookups not inlined), or as the kernel translated them (helpers by
 * their address relative to __bpf_call_base, named from /proc/kallsyms;
 * array and hash lookups inlined with the kernel's own struct offsets,
 * read from its BTF). */
enum devcg_reader_form {
	DEVCG_READER_RAW = 0,
	DEVCG_READER_XLATED = 1,
};

int devcg_reader_from_insns(const struct bpf_insn *insns, size_t cnt, enum devcg_reader_form form,
			    const struct devcg_reader_map *maps, size_t nmaps,
			    const struct devcg_reader_opts *opts, struct devcg_reader **out,
			    struct devcg_error *err);

/*
 * The policy that allows a request when each of PS[0..N) allows it (what
 * several device programs of one cgroup decide together), the shortest of
 * either default; -ENOTSUP when no devices list says it.
 */
int devcg_policy_intersect(const struct devcg_policy *const *ps, size_t n, struct devcg_policy **out,
			   struct devcg_error *err);

/* Split points the rules are computed at besides those found in the
 * program (unit tests; devcg's own program adds its decoded policy's). */
int devcg_reader_add_constants(struct devcg_reader *r, const struct devcg_policy *policy);

/*
 * One run with the caller's environment (the unit test of devcg's own
 * program checks what its audit variant writes): HELPER, when set, is
 * asked first for every helper call and returns true when it handled it
 * (its result in *RET); MEM are more bytes the program may read and write
 * (a ring buffer record, a loss count the helper hands out). One run, no
 * second variant. 0 and *VERDICT, or -ENOTSUP (the reason:
 * devcg_reader_why()).
 */
struct devcg_reader_env {
	bool (*helper)(void *ctx, int32_t func, const uint64_t regs[11], uint64_t *ret);
	void *ctx;
	struct {
		void *p;
		size_t len;
	} mem[4];
	size_t nmem;
};
int devcg_reader_run_env(struct devcg_reader *r, uint8_t type, uint32_t major, uint32_t minor, uint8_t access,
			 const struct devcg_reader_env *env, int *verdict);
const char *devcg_reader_why(const struct devcg_reader *r);
/* The value a BPF_LD_IMM64 of map ID puts in its register (0: no such map). */
uint64_t devcg_reader_map_handle(const struct devcg_reader *r, uint32_t id);

#endif

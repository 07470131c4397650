/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The reader's private definitions, shared by its three files only:
 * progread.c (the interpreter), progread_open.c (loading a program) and
 * progread_rules.c (the rules read back). Not for any other file.
 */
#ifndef DEVCG_PROGREAD_IMPL_H
#define DEVCG_PROGREAD_IMPL_H

#include "live/live.h"
#include "live/progread.h"
#include "devcg_abi.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/bpf.h>

#define STACK 512
#define FRAMES 8
#define DEFAULT_STEPS 1000000u
#define MAX_ARRAY_BYTES (256u << 20)
#define MAJOR_END (1u << DEVCG_MAJOR_BITS)
#define MINOR_END (1u << DEVCG_MINOR_BITS)
#define MAX_CELL_RUNS 4000000u

#ifndef BPF_PSEUDO_MAP_IDX
#define BPF_PSEUDO_MAP_IDX 5
#endif
#ifndef BPF_PSEUDO_MAP_IDX_VALUE
#define BPF_PSEUDO_MAP_IDX_VALUE 6
#endif
#ifndef BPF_NOSPEC
#define BPF_NOSPEC 0xc0
#endif
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif
#ifndef BPF_JCOND
#define BPF_JCOND 0xe0
#endif

enum helper {
	H_UNKNOWN = 0,
	H_LOOKUP,      /* returns the value */
	H_HTAB_ELEM,   /* __htab_map_lookup_elem: returns the element */
	H_PID_TGID,
	H_UID_GID,
	H_KTIME,
	H_CGROUP_ID,
	H_COMM,
	H_RB_RESERVE,
	H_RB_SUBMIT,
	H_RB_OUTPUT,
};

struct rmap {
	struct devcg_reader_map m;
	int fd; /* a live map's, closed with the reader; -1 */
	/* arrays: the struct bpf_array the kernel's inlined lookup reads
	 * (values at hdr, elem apart), fetched one element at a time; other
	 * maps: a handle nothing may be read through */
	uint8_t *mem;
	size_t len, hdr, elem;
	uint8_t *fetched;
};

struct alloc {
	uint8_t *p;
	size_t len;
	struct alloc *next;
};

struct devcg_reader {
	struct bpf_insn *insn;
	size_t cnt;
	enum devcg_reader_form form;
	uint8_t *helper; /* per instruction: enum helper of a call */
	char (*helper_name)[32];
	struct rmap *maps;
	size_t nmaps;
	size_t htab_key_at; /* offsetof(struct htab_elem, key) */
	bool variable;      /* it calls a helper whose result is not known */
	uint32_t max_steps;
	uint8_t flip_type;
	uint32_t flip_major, flip_minor;
	char name[16];
	const char *owner;
	struct devcg_policy *devcg_policy; /* devcg's own, decoded */
	/* one run's */
	struct bpf_cgroup_dev_ctx ctx;
	uint8_t stack[FRAMES][STACK], written[FRAMES][STACK];
	struct alloc *allocs;
	int variant;
	char why[256];
	/* the numbers the program compared with */
	uint32_t *seen;
	size_t nseen, capseen;
	bool recording, running;
	bool known; /* the constants are given: none are collected */
	bool gpl;   /* loaded under a GPL-compatible license */
	const struct devcg_reader_env *env; /* devcg_reader_run_env()'s */
};

/* progread.c, for the other two */
void reader_note_value(struct devcg_reader *r, uint64_t v);
void reader_free_allocs(struct devcg_reader *r);
uint64_t reader_load(const uint8_t *p, size_t size);
int reader_run(struct devcg_reader *r, int *verdict);
int reader_decide(struct devcg_reader *r, uint8_t type, uint32_t major, uint32_t minor, uint8_t access);

#endif

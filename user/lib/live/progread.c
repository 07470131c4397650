// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reader of any BPF_CGROUP_DEVICE program: an interpreter of the
 * instructions the kernel translated (or of hand-written ones), deciding a
 * request exactly as the kernel runs the program, and the program's rules
 * read back from its decisions.
 *
 * Memory is the host's: a register holding a pointer holds the address of
 * the reader's own copy of what it points to (the context, the stack, a
 * map's value fetched from the live map, a ring buffer record), and every
 * load and store is checked to fall inside one of them. So the kernel's
 * own inlined lookups work unchanged: an array map's pointer is the start
 * of a buffer laid out as struct bpf_array (its values at the offset the
 * kernel's BTF gives), a hash lookup's element one laid out as struct
 * htab_elem.
 *
 * Helpers are named, in translated instructions, by their address
 * (__bpf_call_base + imm) in /proc/kallsyms. Those whose result cannot be
 * known (time, pid, a ring buffer's room) are run twice, with two sets of
 * plausible results: a decision that differs between them makes the
 * program unreadable, it is never guessed.
 */
#include "live/live.h"
#include "live/progread.h"
#include "devcg_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
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

static const struct {
	const char *name; /* in /proc/kallsyms */
	int func;         /* BPF_FUNC_*, in raw instructions */
	enum helper kind;
} helpers[] = {
	{ "bpf_map_lookup_elem", BPF_FUNC_map_lookup_elem, H_LOOKUP },
	{ "array_map_lookup_elem", -1, H_LOOKUP },
	{ "htab_map_lookup_elem", -1, H_LOOKUP },
	{ "htab_lru_map_lookup_elem", -1, H_LOOKUP },
	{ "__htab_map_lookup_elem", -1, H_HTAB_ELEM },
	{ "bpf_get_current_pid_tgid", BPF_FUNC_get_current_pid_tgid, H_PID_TGID },
	{ "bpf_get_current_uid_gid", BPF_FUNC_get_current_uid_gid, H_UID_GID },
	{ "bpf_ktime_get_ns", BPF_FUNC_ktime_get_ns, H_KTIME },
	{ "bpf_ktime_get_boot_ns", BPF_FUNC_ktime_get_boot_ns, H_KTIME },
	{ "bpf_get_current_cgroup_id", BPF_FUNC_get_current_cgroup_id, H_CGROUP_ID },
	{ "bpf_get_current_comm", BPF_FUNC_get_current_comm, H_COMM },
	{ "bpf_ringbuf_reserve", BPF_FUNC_ringbuf_reserve, H_RB_RESERVE },
	{ "bpf_ringbuf_submit", BPF_FUNC_ringbuf_submit, H_RB_SUBMIT },
	{ "bpf_ringbuf_discard", BPF_FUNC_ringbuf_discard, H_RB_SUBMIT },
	{ "bpf_ringbuf_output", BPF_FUNC_ringbuf_output, H_RB_OUTPUT },
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

static void note_value(struct devcg_reader *r, uint64_t v)
{
	uint32_t x = (uint32_t)v;

	if (!r->recording || x >= MINOR_END)
		return;
	/* the request's own numbers are the cell's, not the program's */
	if (r->running && (x == r->ctx.major || x == r->ctx.minor))
		return;
	if (r->nseen == r->capseen) {
		size_t cap = r->capseen ? r->capseen * 2 : 64;
		uint32_t *s = realloc(r->seen, cap * sizeof(*s));

		if (!s)
			return;
		r->seen = s;
		r->capseen = cap;
	}
	r->seen[r->nseen++] = x;
}

static int unreadable(struct devcg_reader *r, size_t pc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int unreadable(struct devcg_reader *r, size_t pc, const char *fmt, ...)
{
	char what[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(r->why, sizeof(r->why), "instruction %zu: %s", pc, what);
	return -ENOTSUP;
}

static bool inside(uint64_t a, size_t size, const void *base, size_t len)
{
	uint64_t b = (uint64_t)(uintptr_t)base;

	return a >= b && a - b <= len && size <= len - (a - b);
}

/* Fetch element I of array map M into its buffer. */
static int fetch(struct rmap *m, size_t i)
{
	uint32_t key = (uint32_t)i;
	int ret;

	if (m->fetched[i])
		return 0;
	ret = m->m.lookup(m->m.ctx, &key, m->mem + m->hdr + i * m->elem);
	if (ret && ret != -ENOENT)
		return ret;
	m->fetched[i] = 1;
	return 0;
}

/* The host address of SIZE bytes at ADDR the program may read (WRITE:
 * write), or NULL with the reason set. */
static uint8_t *mem(struct devcg_reader *r, size_t pc, uint64_t addr, size_t size, bool write, int frame_hint)
{
	struct alloc *a;
	size_t i, f;

	(void)frame_hint;
	if (!write && inside(addr, size, &r->ctx, sizeof(r->ctx)))
		return (uint8_t *)(uintptr_t)addr;
	for (f = 0; f < FRAMES; f++) {
		if (inside(addr, size, r->stack[f], STACK)) {
			size_t at = (size_t)(addr - (uint64_t)(uintptr_t)r->stack[f]);

			if (write) {
				memset(r->written[f] + at, 1, size);
			} else {
				for (i = 0; i < size; i++)
					if (!r->written[f][at + i]) {
						unreadable(r, pc, "reads the stack where it wrote nothing (fp%+d)",
							   (int)at - STACK);
						return NULL;
					}
			}
			return (uint8_t *)(uintptr_t)addr;
		}
	}
	for (i = 0; i < r->nmaps; i++) {
		struct rmap *m = &r->maps[i];
		size_t at, first, last, k;

		if (!m->mem || !m->fetched || !inside(addr, size, m->mem + m->hdr, m->len - m->hdr))
			continue;
		at = (size_t)(addr - (uint64_t)(uintptr_t)(m->mem + m->hdr));
		first = at / m->elem;
		last = (at + size - 1) / m->elem;
		for (k = first; k <= last; k++) {
			int ret = fetch(m, k);

			if (ret) {
				unreadable(r, pc, "cannot read element %zu of map %u: %s", k, m->m.id,
					   strerror(-ret));
				return NULL;
			}
		}
		return (uint8_t *)(uintptr_t)addr;
	}
	for (a = r->allocs; a; a = a->next)
		if (inside(addr, size, a->p, a->len))
			return (uint8_t *)(uintptr_t)addr;
	for (i = 0; r->env && i < r->env->nmem; i++)
		if (inside(addr, size, r->env->mem[i].p, r->env->mem[i].len))
			return (uint8_t *)(uintptr_t)addr;
	unreadable(r, pc, "%s %zu bytes at an address it may not %s", write ? "writes" : "reads", size,
		   write ? "write" : "read");
	return NULL;
}

static uint8_t *alloc_region(struct devcg_reader *r, size_t len)
{
	struct alloc *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->p = calloc(1, len ? len : 1);
	if (!a->p) {
		free(a);
		return NULL;
	}
	a->len = len;
	a->next = r->allocs;
	r->allocs = a;
	return a->p;
}

static void free_allocs(struct devcg_reader *r)
{
	while (r->allocs) {
		struct alloc *a = r->allocs;

		r->allocs = a->next;
		free(a->p);
		free(a);
	}
}

static struct rmap *map_by_id(struct devcg_reader *r, uint32_t id)
{
	size_t i;

	for (i = 0; i < r->nmaps; i++)
		if (r->maps[i].m.id == id)
			return &r->maps[i];
	return NULL;
}

static struct rmap *map_by_handle(struct devcg_reader *r, uint64_t p)
{
	size_t i;

	for (i = 0; i < r->nmaps; i++)
		if (r->maps[i].mem && (uint64_t)(uintptr_t)r->maps[i].mem == p)
			return &r->maps[i];
	return NULL;
}

static uint64_t load(const uint8_t *p, size_t size)
{
	uint8_t b;
	uint16_t h;
	uint32_t w;
	uint64_t d;

	switch (size) {
	case 1: memcpy(&b, p, 1); return b;
	case 2: memcpy(&h, p, 2); return h;
	case 4: memcpy(&w, p, 4); return w;
	default: memcpy(&d, p, 8); return d;
	}
}

static void store(uint8_t *p, size_t size, uint64_t v)
{
	uint8_t b = (uint8_t)v;
	uint16_t h = (uint16_t)v;
	uint32_t w = (uint32_t)v;

	switch (size) {
	case 1: memcpy(p, &b, 1); break;
	case 2: memcpy(p, &h, 2); break;
	case 4: memcpy(p, &w, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

static size_t size_of(uint8_t code)
{
	switch (BPF_SIZE(code)) {
	case BPF_B: return 1;
	case BPF_H: return 2;
	case BPF_W: return 4;
	default: return 8;
	}
}

static int64_t sext(uint64_t v, int bits)
{
	return bits >= 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
}

/* A helper call at PC; 0, or -ENOTSUP. */
static int call(struct devcg_reader *r, size_t pc, uint64_t *reg)
{
	enum helper h = (enum helper)r->helper[pc];
	struct rmap *m;
	uint8_t *p, *key, *out;
	int ret;

	if (r->env && r->env->helper && r->env->helper(r->env->ctx, r->insn[pc].imm, reg, &reg[0]))
		return 0;

	switch (h) {
	case H_LOOKUP:
	case H_HTAB_ELEM: {
		size_t pre;

		m = map_by_handle(r, reg[1]);
		if (!m)
			return unreadable(r, pc, "looks up an element of something that is not a map");
		key = mem(r, pc, reg[2], m->m.key_size, false, 0);
		if (!key)
			return -ENOTSUP;
		if (h == H_HTAB_ELEM && !r->htab_key_at)
			return unreadable(r, pc, "the kernel's struct htab_elem is not known (no BTF)");
		pre = h == H_HTAB_ELEM ? r->htab_key_at + ((m->m.key_size + 7) & ~7u) : 0;
		if (m->fetched) { /* an array: its element in place */
			uint32_t i;

			memcpy(&i, key, 4);
			if (i >= m->m.max_entries) {
				reg[0] = 0;
				return 0;
			}
			if (!mem(r, pc, (uint64_t)(uintptr_t)(m->mem + m->hdr + (size_t)i * m->elem), 1, false, 0))
				return -ENOTSUP;
			reg[0] = (uint64_t)(uintptr_t)(m->mem + m->hdr + (size_t)i * m->elem) - pre;
			if (pre)
				return unreadable(r, pc, "an element lookup of an array map");
			return 0;
		}
		out = alloc_region(r, pre + m->m.value_size);
		if (!out)
			return unreadable(r, pc, "out of memory");
		ret = m->m.lookup(m->m.ctx, key, out + pre);
		if (ret == -ENOENT) {
			reg[0] = 0;
			return 0;
		}
		if (ret)
			return unreadable(r, pc, "cannot look up map %u: %s", m->m.id, strerror(-ret));
		for (size_t k = 0; k + 4 <= m->m.key_size; k += 4)
			note_value(r, load(key + k, 4));
		reg[0] = (uint64_t)(uintptr_t)out;
		return 0;
	}
	case H_PID_TGID:
		reg[0] = r->variant ? (uint64_t)31337 << 32 | 31338 : (uint64_t)4242 << 32 | 4243;
		return 0;
	case H_UID_GID:
		reg[0] = r->variant ? (uint64_t)1000 << 32 | 1000 : 0;
		return 0;
	case H_KTIME:
		reg[0] = r->variant ? 987654321986ull : 77;
		return 0;
	case H_CGROUP_ID:
		reg[0] = r->variant ? 12345 : 99;
		return 0;
	case H_COMM:
		p = mem(r, pc, reg[1], (size_t)(uint32_t)reg[2], true, 0);
		if (!p)
			return -ENOTSUP;
		memset(p, 0, (size_t)(uint32_t)reg[2]);
		memcpy(p, r->variant ? "sh" : "reader", (uint32_t)reg[2] < 7 ? (uint32_t)reg[2] : 7);
		if ((uint32_t)reg[2])
			p[(uint32_t)reg[2] - 1] = 0;
		reg[0] = 0;
		return 0;
	case H_RB_RESERVE:
		if (!map_by_handle(r, reg[1]) || reg[2] > (1u << 20))
			return unreadable(r, pc, "reserves a ring buffer record it cannot have");
		if (r->variant) {
			reg[0] = 0; /* the ring is full */
			return 0;
		}
		out = alloc_region(r, (size_t)reg[2]);
		if (!out)
			return unreadable(r, pc, "out of memory");
		reg[0] = (uint64_t)(uintptr_t)out;
		return 0;
	case H_RB_SUBMIT:
		reg[0] = 0;
		return 0;
	case H_RB_OUTPUT:
		if (!map_by_handle(r, reg[1]) || !mem(r, pc, reg[2], (size_t)reg[3], false, 0))
			return -ENOTSUP;
		reg[0] = r->variant ? (uint64_t)-ENOSPC : 0;
		return 0;
	default:
		return unreadable(r, pc, "calls a helper the reader does not know (%s)",
				  r->helper_name[pc][0] ? r->helper_name[pc] : "?");
	}
}

static bool cond(uint8_t op, uint64_t a, uint64_t b, bool w32)
{
	int64_t sa, sb;

	if (w32) {
		a = (uint32_t)a;
		b = (uint32_t)b;
		sa = (int32_t)a;
		sb = (int32_t)b;
	} else {
		sa = (int64_t)a;
		sb = (int64_t)b;
	}
	switch (op) {
	case BPF_JEQ: return a == b;
	case BPF_JNE: return a != b;
	case BPF_JGT: return a > b;
	case BPF_JGE: return a >= b;
	case BPF_JLT: return a < b;
	case BPF_JLE: return a <= b;
	case BPF_JSET: return a & b;
	case BPF_JSGT: return sa > sb;
	case BPF_JSGE: return sa >= sb;
	case BPF_JSLT: return sa < sb;
	case BPF_JSLE: return sa <= sb;
	default: return false;
	}
}

/* One ALU operation; false for one the reader does not know. */
static bool alu(const struct bpf_insn *i, uint64_t *d, uint64_t s, bool w64)
{
	uint8_t op = BPF_OP(i->code);
	uint64_t v = *d;
	bool sgn = i->off == 1;

	if (!w64) {
		v = (uint32_t)v;
		s = (uint32_t)s;
	}
	switch (op) {
	case BPF_ADD: v += s; break;
	case BPF_SUB: v -= s; break;
	case BPF_MUL: v *= s; break;
	case BPF_OR: v |= s; break;
	case BPF_AND: v &= s; break;
	case BPF_XOR: v ^= s; break;
	case BPF_LSH: v <<= s & (w64 ? 63 : 31); break;
	case BPF_RSH: v >>= s & (w64 ? 63 : 31); break;
	case BPF_ARSH:
		v = w64 ? (uint64_t)((int64_t)v >> (s & 63)) : (uint32_t)((int32_t)v >> (s & 31));
		break;
	case BPF_NEG: v = -v; break;
	case BPF_MOV:
		if (i->off == 0)
			v = s;
		else if (i->off == 8 || i->off == 16 || (i->off == 32 && w64))
			v = (uint64_t)sext(s, i->off);
		else
			return false;
		break;
	case BPF_DIV:
	case BPF_MOD:
		if (i->off != 0 && i->off != 1)
			return false;
		if (!(w64 ? s : (uint32_t)s)) {
			v = op == BPF_DIV ? 0 : v; /* as the kernel's patched division */
		} else if (sgn) {
			int64_t a = w64 ? (int64_t)v : (int32_t)v, b = w64 ? (int64_t)s : (int32_t)s;

			if (b == -1)
				v = op == BPF_DIV ? (uint64_t)-a : 0;
			else
				v = (uint64_t)(op == BPF_DIV ? a / b : a % b);
		} else {
			v = op == BPF_DIV ? v / s : v % s;
		}
		break;
	case BPF_END: {
		int bits = i->imm;

		if (bits != 16 && bits != 32 && bits != 64)
			return false;
		/* little-endian host: to_le truncates, to_be and bswap swap */
		if (w64 || BPF_SRC(i->code) == BPF_TO_BE)
			v = bits == 16 ? __builtin_bswap16((uint16_t)*d) : bits == 32 ? __builtin_bswap32((uint32_t)*d)
										   : __builtin_bswap64(*d);
		else
			v = bits == 16 ? (uint16_t)*d : bits == 32 ? (uint32_t)*d : *d;
		*d = v;
		return true;
	}
	default:
		return false;
	}
	*d = w64 ? v : (uint32_t)v;
	return true;
}

/* Does V point into memory the reader holds? */
static bool is_pointer(const struct devcg_reader *r, uint64_t v)
{
	const struct alloc *a;
	size_t i;

	if (inside(v, 0, &r->ctx, sizeof(r->ctx)) || inside(v, 0, r->stack, sizeof(r->stack)))
		return true;
	for (i = 0; i < r->nmaps; i++)
		if (r->maps[i].mem && inside(v, 0, r->maps[i].mem, r->maps[i].len))
			return true;
	for (a = r->allocs; a; a = a->next)
		if (inside(v, 0, a->p, a->len))
			return true;
	return false;
}

/* Run the program on the context set; *VERDICT is r0 at the last exit. */
static int run(struct devcg_reader *r, int *verdict)
{
	uint64_t reg[11] = { 0 };
	struct {
		size_t ret;
		uint64_t saved[4];
	} frames[FRAMES];
	int depth = 0;
	size_t pc = 0;
	uint32_t steps = 0;
	int ret = 0;

	memset(r->written, 0, sizeof(r->written));
	reg[1] = (uint64_t)(uintptr_t)&r->ctx;
	reg[10] = (uint64_t)(uintptr_t)(r->stack[0] + STACK);
	for (;;) {
		const struct bpf_insn *i;
		uint64_t src;
		uint8_t *p;

		if (pc >= r->cnt) {
			ret = unreadable(r, pc, "runs past the end of the program");
			break;
		}
		if (++steps > r->max_steps) {
			ret = unreadable(r, pc, "runs more than %u instructions (a loop?)", r->max_steps);
			break;
		}
		i = &r->insn[pc];
		if (i->dst_reg > 10 || i->src_reg > 10) {
			ret = unreadable(r, pc, "names a register that does not exist");
			break;
		}
		src = BPF_SRC(i->code) == BPF_X ? reg[i->src_reg] : (uint64_t)(int64_t)i->imm;
		switch (BPF_CLASS(i->code)) {
		case BPF_ALU:
		case BPF_ALU64:
			if (i->dst_reg == 10 || !alu(i, &reg[i->dst_reg], src, BPF_CLASS(i->code) == BPF_ALU64))
				ret = unreadable(r, pc, "an ALU instruction the reader does not know (code 0x%02x)",
						 i->code);
			pc++;
			break;
		case BPF_LD: {
			uint64_t imm;
			struct rmap *m;

			if (i->code != (BPF_LD | BPF_IMM | BPF_DW) || pc + 1 >= r->cnt) {
				ret = unreadable(r, pc, "a load the reader does not know (code 0x%02x)", i->code);
				break;
			}
			imm = (uint32_t)i->imm | (uint64_t)(uint32_t)r->insn[pc + 1].imm << 32;
			switch (i->src_reg) {
			case 0:
				reg[i->dst_reg] = imm;
				note_value(r, imm);
				break;
			case BPF_PSEUDO_MAP_FD:
			case BPF_PSEUDO_MAP_VALUE:
				m = map_by_id(r, (uint32_t)i->imm);
				if (!m) {
					ret = unreadable(r, pc, "names map %u, which it does not hold", (uint32_t)i->imm);
					break;
				}
				if (i->src_reg == BPF_PSEUDO_MAP_FD) {
					reg[i->dst_reg] = (uint64_t)(uintptr_t)m->mem;
				} else if (!m->fetched) {
					ret = unreadable(r, pc, "points into map %u, which is not an array", m->m.id);
				} else {
					reg[i->dst_reg] = (uint64_t)(uintptr_t)(m->mem + m->hdr) +
							  (uint32_t)r->insn[pc + 1].imm;
				}
				break;
			default:
				ret = unreadable(r, pc, "a 64-bit load of kind %u the reader does not know", i->src_reg);
				break;
			}
			pc += 2;
			break;
		}
		case BPF_LDX: {
			size_t size = size_of(i->code);

			if ((BPF_MODE(i->code) != BPF_MEM && BPF_MODE(i->code) != BPF_MEMSX) || i->dst_reg == 10) {
				ret = unreadable(r, pc, "a load the reader does not know (code 0x%02x)", i->code);
				break;
			}
			p = mem(r, pc, reg[i->src_reg] + (uint64_t)(int64_t)i->off, size, false, depth);
			if (!p) {
				ret = -ENOTSUP;
				break;
			}
			reg[i->dst_reg] = load(p, size);
			if (BPF_MODE(i->code) == BPF_MEMSX)
				reg[i->dst_reg] = (uint64_t)sext(reg[i->dst_reg], (int)size * 8);
			pc++;
			break;
		}
		case BPF_ST:
		case BPF_STX: {
			size_t size = size_of(i->code);
			uint64_t at = reg[i->dst_reg] + (uint64_t)(int64_t)i->off;

			if (i->code == (BPF_ST | BPF_NOSPEC)) { /* a speculation barrier */
				pc++;
				break;
			}
			if (BPF_MODE(i->code) == BPF_MEM) {
				p = mem(r, pc, at, size, true, depth);
				if (!p) {
					ret = -ENOTSUP;
					break;
				}
				store(p, size, BPF_CLASS(i->code) == BPF_STX ? reg[i->src_reg] : (uint64_t)(int64_t)i->imm);
			} else if (BPF_MODE(i->code) == BPF_ATOMIC && BPF_CLASS(i->code) == BPF_STX &&
				   (size == 4 || size == 8)) {
				uint64_t old, val = reg[i->src_reg], nv;
				int op = i->imm & ~BPF_FETCH;

				p = mem(r, pc, at, size, false, depth);
				if (!p || !mem(r, pc, at, size, true, depth)) {
					ret = -ENOTSUP;
					break;
				}
				old = load(p, size);
				switch (i->imm) {
				case BPF_XCHG: nv = val; break;
				case BPF_CMPXCHG: nv = (size == 4 ? (uint32_t)reg[0] == (uint32_t)old : reg[0] == old) ? val : old; break;
				default:
					switch (op) {
					case BPF_ADD: nv = old + val; break;
					case BPF_OR: nv = old | val; break;
					case BPF_AND: nv = old & val; break;
					case BPF_XOR: nv = old ^ val; break;
					default:
						ret = unreadable(r, pc, "an atomic operation the reader does not know (0x%x)",
								 (unsigned int)i->imm);
						nv = old;
						break;
					}
				}
				if (ret)
					break;
				store(p, size, nv);
				if (i->imm == BPF_CMPXCHG)
					reg[0] = size == 4 ? (uint32_t)old : old;
				else if (i->imm & BPF_FETCH)
					reg[i->src_reg] = size == 4 ? (uint32_t)old : old;
			} else {
				ret = unreadable(r, pc, "a store the reader does not know (code 0x%02x)", i->code);
			}
			pc++;
			break;
		}
		case BPF_JMP:
		case BPF_JMP32: {
			bool w32 = BPF_CLASS(i->code) == BPF_JMP32;
			uint8_t op = BPF_OP(i->code);

			if (op == BPF_EXIT && !w32) {
				if (!depth) {
					*verdict = (int)((uint32_t)reg[0] & 1);
					return 0;
				}
				depth--;
				memcpy(&reg[6], frames[depth].saved, sizeof(frames[depth].saved));
				reg[10] = (uint64_t)(uintptr_t)(r->stack[depth] + STACK);
				pc = frames[depth].ret;
				break;
			}
			if (op == BPF_CALL && !w32) {
				if (i->src_reg == BPF_PSEUDO_CALL) {
					int32_t rel = r->form == DEVCG_READER_XLATED && i->off ? i->off : i->imm;

					if (depth + 1 >= FRAMES) {
						ret = unreadable(r, pc, "calls more than %d functions deep", FRAMES);
						break;
					}
					frames[depth].ret = pc + 1;
					memcpy(frames[depth].saved, &reg[6], sizeof(frames[depth].saved));
					depth++;
					memset(r->written[depth], 0, STACK);
					reg[10] = (uint64_t)(uintptr_t)(r->stack[depth] + STACK);
					pc = pc + 1 + (size_t)(int64_t)rel;
					break;
				}
				if (i->src_reg) {
					ret = unreadable(r, pc, "calls a kernel function the reader does not know");
					break;
				}
				ret = call(r, pc, reg);
				pc++;
				break;
			}
			if (op == BPF_JA) {
				pc = pc + 1 + (size_t)(int64_t)(w32 ? i->imm : i->off);
				break;
			}
			if (op == BPF_JCOND || op > BPF_JSLE) {
				ret = unreadable(r, pc, "a jump the reader does not know (code 0x%02x)", i->code);
				break;
			}
			/* (a pointer compared with NULL is no number of the program's) */
			if (!is_pointer(r, src) && !is_pointer(r, reg[i->dst_reg])) {
				note_value(r, src);
				note_value(r, reg[i->dst_reg]);
			}
			if (cond(op, reg[i->dst_reg], src, w32))
				pc = pc + 1 + (size_t)(int64_t)i->off;
			else
				pc++;
			break;
		}
		default:
			ret = unreadable(r, pc, "an instruction the reader does not know (code 0x%02x)", i->code);
			break;
		}
		if (ret)
			break;
	}
	return ret;
}

/* One request, in both variants of what helpers return when the program
 * calls one whose result is not known. */
static int decide(struct devcg_reader *r, uint8_t type, uint32_t major, uint32_t minor, uint8_t access)
{
	int v[2] = { 0, 0 }, k, ret = 0;

	r->ctx.access_type = (uint32_t)access << 16 | type; /* as the kernel's */
	r->ctx.major = major;
	r->ctx.minor = minor;
	for (k = 0; k < (r->variable ? 2 : 1) && !ret; k++) {
		r->variant = k;
		r->running = true;
		ret = run(r, &v[k]);
		r->running = false;
		free_allocs(r);
	}
	if (ret)
		return ret;
	if (r->variable && v[0] != v[1]) {
		snprintf(r->why, sizeof(r->why),
			 "its decision on %c %u:%u depends on what a helper returns (the time, the process, "
			 "a ring buffer's room)", type == DEVCG_BLOCK ? 'b' : 'c', major, minor);
		return -ENOTSUP;
	}
	if (r->flip_type && type == r->flip_type && major == r->flip_major && minor == r->flip_minor)
		v[0] = !v[0];
	return v[0];
}

int devcg_reader_run_env(struct devcg_reader *r, uint8_t type, uint32_t major, uint32_t minor, uint8_t access,
			 const struct devcg_reader_env *env, int *verdict)
{
	int ret;

	r->ctx.access_type = (uint32_t)access << 16 | type;
	r->ctx.major = major;
	r->ctx.minor = minor;
	r->variant = 0;
	r->env = env;
	ret = run(r, verdict);
	r->env = NULL;
	free_allocs(r);
	return ret;
}

const char *devcg_reader_why(const struct devcg_reader *r)
{
	return r->why;
}

uint64_t devcg_reader_map_handle(const struct devcg_reader *r, uint32_t id)
{
	size_t i;

	for (i = 0; i < r->nmaps; i++)
		if (r->maps[i].m.id == id)
			return (uint64_t)(uintptr_t)r->maps[i].mem;
	return 0;
}

int devcg_reader_decide(struct devcg_reader *r, uint8_t type, uint32_t major, uint32_t minor,
			uint8_t access, struct devcg_error *err)
{
	int ret;

	if ((type != DEVCG_BLOCK && type != DEVCG_CHAR) || access & ~DEVCG_ACC_ALL)
		return devcg_err(err, -EINVAL, "not a request: type %u, access %u", type, access);
	ret = decide(r, type, major, minor, access);
	if (ret == -ENOTSUP)
		return devcg_err(err, ret, "program %s cannot be read: %s", r->name[0] ? r->name : "(no name)",
				 r->why);
	return ret;
}

/* ---- set-up ----------------------------------------------------------- */

static int btf_member_at(const struct btf *btf, __u32 id, const char *name, size_t base, size_t *at)
{
	const struct btf_type *t = btf__type_by_id(btf, id);
	const struct btf_member *mb;
	int k, n;

	while (t && (btf_is_typedef(t) || btf_is_mod(t)))
		t = btf__type_by_id(btf, t->type);
	if (!t || !btf_is_composite(t))
		return -ENOENT;
	mb = btf_members(t);
	n = btf_vlen(t);
	for (k = 0; k < n; k++, mb++) {
		const char *mn = btf__name_by_offset(btf, mb->name_off);
		size_t off = base + btf_member_bit_offset(t, (__u32)k) / 8;

		if (mn && !strcmp(mn, name)) {
			*at = off;
			return 0;
		}
		if ((!mn || !mn[0]) && !btf_member_at(btf, mb->type, name, off, at))
			return 0;
	}
	return -ENOENT;
}

static int kernel_offset(const char *type, const char *member, size_t *at)
{
	static struct btf *btf;
	__s32 id;

	if (!btf) {
		btf = btf__load_vmlinux_btf();
		if (!btf || libbpf_get_error(btf)) {
			btf = NULL;
			return -ENOENT;
		}
	}
	id = btf__find_by_name_kind(btf, type, BTF_KIND_STRUCT);
	if (id < 0)
		return -ENOENT;
	return btf_member_at(btf, (__u32)id, member, 0, at);
}

static int add_map(struct devcg_reader *r, const struct devcg_reader_map *m, size_t array_hdr,
		   struct devcg_error *err)
{
	struct rmap *x = &r->maps[r->nmaps];

	memset(x, 0, sizeof(*x));
	x->m = *m;
	x->fd = -1;
	if (m->type == BPF_MAP_TYPE_ARRAY) {
		x->hdr = array_hdr;
		x->elem = (m->value_size + 7) & ~7u;
		if (!x->elem || (uint64_t)m->max_entries * x->elem > MAX_ARRAY_BYTES)
			return devcg_err(err, -ENOTSUP, "array map %u is larger than the reader reads", m->id);
		x->len = x->hdr + (size_t)m->max_entries * x->elem;
		x->fetched = calloc(m->max_entries ? m->max_entries : 1, 1);
	} else {
		x->len = 8;
	}
	x->mem = calloc(1, x->len);
	if (!x->mem || (m->type == BPF_MAP_TYPE_ARRAY && !x->fetched))
		return devcg_err(err, -ENOMEM, "out of memory");
	r->nmaps++;
	return 0;
}

/* Name the helpers of translated instructions from /proc/kallsyms. */
static int name_helpers(struct devcg_reader *r, struct devcg_error *err)
{
	unsigned long long base = 0, addr;
	char line[512], name[256];
	FILE *f;
	size_t pc, k;
	bool any = false;

	for (pc = 0; pc < r->cnt; pc++)
		any |= r->insn[pc].code == (BPF_JMP | BPF_CALL) && !r->insn[pc].src_reg;
	if (!any)
		return 0;
	f = fopen("/proc/kallsyms", "re");
	if (!f)
		return devcg_err(err, -ENOTSUP, "cannot name the program's helpers: /proc/kallsyms: %s",
				 strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %*s %255s", &addr, name) == 2 && !strcmp(name, "__bpf_call_base")) {
			base = addr;
			break;
		}
	if (!base) {
		fclose(f);
		return devcg_err(err, -ENOTSUP, "cannot name the program's helpers: /proc/kallsyms hides "
				 "their addresses");
	}
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %*s %255s", &addr, name) != 2 || strchr(line, '['))
			continue;
		for (pc = 0; pc < r->cnt; pc++) {
			const struct bpf_insn *i = &r->insn[pc];

			if (i->code != (BPF_JMP | BPF_CALL) || i->src_reg ||
			    base + (unsigned long long)(long long)i->imm != addr || r->helper_name[pc][0])
				continue;
			snprintf(r->helper_name[pc], sizeof(r->helper_name[pc]), "%s", name);
			for (k = 0; k < sizeof(helpers) / sizeof(helpers[0]); k++)
				if (!strcmp(helpers[k].name, name))
					r->helper[pc] = (uint8_t)helpers[k].kind;
		}
	}
	fclose(f);
	return 0;
}

static void set_owner(struct devcg_reader *r)
{
	const struct bpf_insn *i = r->insn;

	if (r->devcg_policy)
		r->owner = "devcg";
	else if (strstr(r->name, "sd_devices"))
		r->owner = "systemd";
	else if (strstr(r->name, "crun"))
		r->owner = "crun";
	else if (strstr(r->name, "runc"))
		r->owner = "runc";
	/* runc's prologue (libcontainer/cgroups/devices/devicefilter.go):
	 * type, access, major, minor into r2, r3, r4, r5; crun's program
	 * (src/libcrun/ebpf.c) starts the same, but is loaded as GPL where
	 * runc's is Apache-licensed */
	else if (r->cnt > 6 && i[0].code == (BPF_LDX | BPF_MEM | BPF_W) && i[0].dst_reg == 2 &&
		 i[1].code == (BPF_ALU | BPF_AND | BPF_K) && i[1].imm == 0xffff &&
		 i[2].code == (BPF_LDX | BPF_MEM | BPF_W) && i[2].dst_reg == 3 &&
		 i[3].code == (BPF_ALU | BPF_RSH | BPF_K) && i[3].imm == 16)
		r->owner = r->gpl ? "crun" : "runc";
	else
		r->owner = "unknown";
}

int devcg_reader_from_insns(const struct bpf_insn *insns, size_t cnt, enum devcg_reader_form form,
			    const struct devcg_reader_map *maps, size_t nmaps,
			    const struct devcg_reader_opts *opts, struct devcg_reader **out,
			    struct devcg_error *err)
{
	struct devcg_reader *r;
	size_t array_hdr = 0, k, pc;
	int ret = 0;

	*out = NULL;
	if (opts && opts->sz < sizeof(opts->sz))
		return devcg_err(err, -EINVAL, "bad options");
	if (!cnt)
		return devcg_err(err, -ENOTSUP, "the program has no instruction");
	r = calloc(1, sizeof(*r));
	if (!r)
		return devcg_err(err, -ENOMEM, "out of memory");
	r->form = form;
	r->cnt = cnt;
	r->max_steps = DEFAULT_STEPS;
	if (DEVCG_OPT(opts, devcg_reader_opts, max_steps, 0))
		r->max_steps = opts->max_steps;
	r->flip_type = DEVCG_OPT(opts, devcg_reader_opts, flip_type, 0);
	r->flip_major = DEVCG_OPT(opts, devcg_reader_opts, flip_major, 0);
	r->flip_minor = DEVCG_OPT(opts, devcg_reader_opts, flip_minor, 0);
	r->insn = malloc(cnt * sizeof(*insns));
	r->helper = calloc(cnt, 1);
	r->helper_name = calloc(cnt, sizeof(*r->helper_name));
	r->maps = calloc(nmaps ? nmaps : 1, sizeof(*r->maps));
	if (!r->insn || !r->helper || !r->helper_name || !r->maps) {
		devcg_reader_free(r);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	memcpy(r->insn, insns, cnt * sizeof(*insns));
	if (form == DEVCG_READER_XLATED) {
		for (k = 0; k < nmaps && !ret; k++)
			if (maps[k].type == BPF_MAP_TYPE_ARRAY && kernel_offset("bpf_array", "value", &array_hdr))
				ret = devcg_err(err, -ENOTSUP, "the kernel's struct bpf_array is not known (no BTF)");
		if (kernel_offset("htab_elem", "key", &r->htab_key_at))
			r->htab_key_at = 0;
		if (!ret)
			ret = name_helpers(r, err);
	} else {
		for (pc = 0; pc < cnt; pc++) {
			if (insns[pc].code != (BPF_JMP | BPF_CALL) || insns[pc].src_reg)
				continue;
			for (k = 0; k < sizeof(helpers) / sizeof(helpers[0]); k++)
				if (helpers[k].func == insns[pc].imm)
					r->helper[pc] = (uint8_t)helpers[k].kind;
			snprintf(r->helper_name[pc], sizeof(r->helper_name[pc]), "helper %d", insns[pc].imm);
		}
	}
	for (k = 0; k < nmaps && !ret; k++)
		ret = add_map(r, &maps[k], array_hdr, err);
	for (pc = 0; pc < cnt; pc++)
		r->variable |= r->helper[pc] > H_HTAB_ELEM;
	if (ret) {
		devcg_reader_free(r);
		return ret;
	}
	set_owner(r);
	*out = r;
	return 0;
}

void devcg_reader_free(struct devcg_reader *r)
{
	size_t k;

	if (!r)
		return;
	free_allocs(r);
	for (k = 0; k < r->nmaps; k++) {
		free(r->maps[k].mem);
		free(r->maps[k].fetched);
		if (r->maps[k].fd >= 0)
			close(r->maps[k].fd);
	}
	devcg_policy_free(r->devcg_policy);
	free(r->maps);
	free(r->insn);
	free(r->helper);
	free(r->helper_name);
	free(r->seen);
	free(r);
}

const char *devcg_reader_owner(const struct devcg_reader *r)
{
	return r->owner;
}

static int live_lookup(void *ctx, const void *key, void *value)
{
	return bpf_map_lookup_elem((int)(intptr_t)ctx, key, value) ? -errno : 0;
}

static int live_next_key(void *ctx, const void *key, void *next)
{
	return bpf_map_get_next_key((int)(intptr_t)ctx, key, next) ? -errno : 0;
}

int devcg_reader_open(int prog_fd, uint32_t prog_id, const struct devcg_reader_opts *opts,
		      struct devcg_reader **out, struct devcg_error *err)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), nmaps, k;
	struct devcg_reader_map *maps = NULL;
	struct bpf_insn *insns = NULL;
	__u32 *ids = NULL;
	int fd = prog_fd, ret, *fds = NULL;
	struct devcg_policy *own = NULL;
	bool audit;

	*out = NULL;
	if (fd < 0) {
		fd = bpf_prog_get_fd_by_id(prog_id);
		if (fd < 0)
			return devcg_err(err, -errno, "cannot open program %u: %s", prog_id,
					 devcg_why(-errno, DEVCG_CAPS_FILTER));
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		ret = devcg_err(err, -errno, "cannot read program %u: %s", prog_id, strerror(errno));
		goto out;
	}
	if (info.type != BPF_PROG_TYPE_CGROUP_DEVICE) {
		ret = devcg_err(err, -EINVAL, "program %u is not a device program", info.id);
		goto out;
	}
	if (!info.xlated_prog_len) {
		ret = devcg_err(err, -EPERM, "program %u: the kernel does not show its instructions "
				"(only to root, and not when bpf_jit_harden hides them)", info.id);
		goto out;
	}
	nmaps = info.nr_map_ids;
	insns = calloc(info.xlated_prog_len / sizeof(*insns) + 1, sizeof(*insns));
	ids = calloc(nmaps + 1, sizeof(*ids));
	maps = calloc(nmaps + 1, sizeof(*maps));
	fds = malloc((nmaps + 1) * sizeof(*fds));
	if (!insns || !ids || !maps || !fds) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (k = 0; k < nmaps; k++)
		fds[k] = -1;
	{
		struct bpf_prog_info more = { 0 };
		__u32 xlen = info.xlated_prog_len;

		len = sizeof(more);
		more.xlated_prog_len = xlen;
		more.xlated_prog_insns = (__u64)(uintptr_t)insns;
		more.nr_map_ids = nmaps;
		more.map_ids = (__u64)(uintptr_t)ids;
		if (bpf_obj_get_info_by_fd(fd, &more, &len)) {
			ret = devcg_err(err, -errno, "cannot read program %u: %s", info.id, strerror(errno));
			goto out;
		}
		if (more.xlated_prog_len != xlen || more.nr_map_ids != nmaps) {
			ret = devcg_err(err, -EAGAIN, "program %u changed while read", info.id);
			goto out;
		}
	}
	for (k = 0; k < nmaps; k++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);

		fds[k] = bpf_map_get_fd_by_id(ids[k]);
		if (fds[k] < 0 || bpf_obj_get_info_by_fd(fds[k], &mi, &mlen)) {
			ret = devcg_err(err, -errno, "cannot open map %u of program %u: %s", ids[k], info.id,
					strerror(errno));
			goto out;
		}
		maps[k] = (struct devcg_reader_map){ .id = ids[k], .type = mi.type, .key_size = mi.key_size,
						      .value_size = mi.value_size, .max_entries = mi.max_entries,
						      .lookup = live_lookup, .ctx = (void *)(intptr_t)fds[k] };
		if (mi.type == BPF_MAP_TYPE_HASH || mi.type == BPF_MAP_TYPE_LRU_HASH)
			maps[k].next_key = live_next_key;
	}
	ret = devcg_filter_read(fd, &own, &audit, NULL);
	if (ret != 1) {
		devcg_policy_free(own);
		own = NULL;
	}
	ret = devcg_reader_from_insns(insns, info.xlated_prog_len / sizeof(*insns), DEVCG_READER_XLATED, maps,
				      nmaps, opts, out, err);
	if (!ret) {
		snprintf((*out)->name, sizeof((*out)->name), "%s", info.name);
		(*out)->gpl = info.gpl_compatible;
		(*out)->devcg_policy = own;
		own = NULL;
		for (k = 0; k < nmaps; k++) {
			(*out)->maps[k].fd = fds[k];
			fds[k] = -1;
		}
		set_owner(*out);
	}
out:
	for (k = 0; fds && k < nmaps; k++)
		if (fds[k] >= 0)
			close(fds[k]);
	devcg_policy_free(own);
	free(fds);
	free(maps);
	free(ids);
	free(insns);
	if (fd != prog_fd)
		close(fd);
	return ret;
}

/* ---- rules ------------------------------------------------------------- */

struct splits {
	uint32_t *v;
	size_t n, cap;
};

static int split_add(struct splits *s, uint32_t x)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint32_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = x;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void split_sort(struct splits *s)
{
	size_t i, n = 0;

	if (!s->n)
		return;
	qsort(s->v, s->n, sizeof(*s->v), cmp_u32);
	for (i = 0; i < s->n; i++)
		if (!n || s->v[n - 1] != s->v[i])
			s->v[n++] = s->v[i];
	s->n = n;
}

static bool split_has(const struct splits *s, uint32_t x)
{
	return bsearch(&x, s->v, s->n, sizeof(x), cmp_u32) != NULL;
}

int devcg_reader_add_constants(struct devcg_reader *r, const struct devcg_policy *p)
{
	const struct devcg_exception *ex = devcg_policy_exceptions(p);
	size_t i;

	/* devcg's own program compares with its policy's numbers alone (its
	 * table's keys, whose other bits are the policy's too) */
	r->known = true;
	r->recording = true;
	for (i = 0; i < devcg_policy_count(p); i++) {
		note_value(r, ex[i].major);
		note_value(r, ex[i].minor);
	}
	r->recording = false;
	return 0;
}

/* The cells of one number: [lo[k], lo[k+1]) for the constants C, below END. */
struct cells {
	uint32_t *lo; /* n + 1 entries, the last END */
	bool *exact;  /* the cell is one constant */
	size_t n;
};

static int cells_of(const struct splits *c, uint32_t end, struct cells *out)
{
	struct splits b = { 0 };
	size_t i;
	int ret = split_add(&b, 0);

	for (i = 0; !ret && i < c->n; i++)
		if (c->v[i] < end) {
			ret = split_add(&b, c->v[i]);
			if (!ret && c->v[i] + 1 < end)
				ret = split_add(&b, c->v[i] + 1);
		}
	if (!ret)
		ret = split_add(&b, end);
	if (ret) {
		free(b.v);
		return ret;
	}
	split_sort(&b);
	out->n = b.n - 1;
	out->lo = b.v;
	out->exact = calloc(out->n ? out->n : 1, sizeof(bool));
	if (!out->exact)
		return -ENOMEM;
	for (i = 0; i < out->n; i++)
		out->exact[i] = out->lo[i + 1] == out->lo[i] + 1 && split_has(c, out->lo[i]);
	return 0;
}

static void cells_free(struct cells *c)
{
	free(c->lo);
	free(c->exact);
	memset(c, 0, sizeof(*c));
}

static const uint8_t accesses[] = { DEVCG_ACC_MKNOD, DEVCG_ACC_READ, DEVCG_ACC_WRITE,
				    DEVCG_ACC_READ | DEVCG_ACC_WRITE };
#define NACC 4

/* The program's decisions on every cell: bits by access index, per (type,
 * major cell, minor cell). */
struct table {
	struct cells maj, min;
	uint8_t *d; /* [2][maj.n][min.n]: bit k for accesses[k] */
};

#define T_AT(t, ti, a, b) ((t)->d[((size_t)(ti) * (t)->maj.n + (a)) * (t)->min.n + (b)])

static int one_request(struct devcg_reader *r, uint8_t type, uint32_t major, uint32_t minor, uint8_t acc)
{
	if (!devcg_request_checked(type, major, minor, acc))
		return -1; /* the kernel does not ask */
	return decide(r, type, major, minor, !major && !minor ? DEVCG_ACC_MKNOD : acc);
}

static int fill_table(struct devcg_reader *r, struct table *t, struct devcg_error *err)
{
	size_t a, b, ti, k;

	if ((uint64_t)t->maj.n * t->min.n * 2 * NACC * 2 > MAX_CELL_RUNS)
		return devcg_err(err, -ENOTSUP, "program %s compares with too many numbers to read its rules "
				 "(%zu x %zu cells)", r->name, t->maj.n, t->min.n);
	t->d = calloc(2 * t->maj.n * t->min.n, 1);
	if (!t->d)
		return devcg_err(err, -ENOMEM, "out of memory");
	for (ti = 0; ti < 2; ti++)
		for (a = 0; a < t->maj.n; a++)
			for (b = 0; b < t->min.n; b++)
				for (k = 0; k < NACC; k++) {
					uint8_t type = ti ? DEVCG_CHAR : DEVCG_BLOCK;
					uint32_t lo1 = t->maj.lo[a], hi1 = t->maj.lo[a + 1] - 1;
					uint32_t lo2 = t->min.lo[b], hi2 = t->min.lo[b + 1] - 1;
					int x = one_request(r, type, lo1, lo2, accesses[k]), y;

					if (x == -ENOTSUP || (y = one_request(r, type, hi1, hi2, accesses[k])) == -ENOTSUP)
						return devcg_err(err, -ENOTSUP, "program %s cannot be read: %s", r->name,
								 r->why);
					if (x == -1) /* 0:0 */
						x = y;
					if (y != -1 && x != y)
						return devcg_err(err, -ENOTSUP,
								 "program %s decides %c %u:%u and %c %u:%u differently with "
								 "no constant between them: its rules cannot be read",
								 r->name, ti ? 'c' : 'b', lo1, lo2, ti ? 'c' : 'b', hi1, hi2);
					if (x == 1)
						T_AT(t, ti, a, b) |= (uint8_t)(1u << k);
				}
	return 0;
}

/* Does POLICY decide every cell as the program? */
static bool agrees(const struct devcg_policy *p, const struct table *t)
{
	size_t a, b, ti, k;

	for (ti = 0; ti < 2; ti++)
		for (a = 0; a < t->maj.n; a++)
			for (b = 0; b < t->min.n; b++)
				for (k = 0; k < NACC; k++) {
					uint8_t type = ti ? DEVCG_CHAR : DEVCG_BLOCK;
					uint32_t j = t->maj.lo[a], n = t->min.lo[b];
					int want = (T_AT(t, ti, a, b) >> k) & 1, got;

					if (!devcg_request_checked(type, j, n, accesses[k])) {
						j = t->maj.lo[a + 1] - 1;
						n = t->min.lo[b + 1] - 1;
						if (!devcg_request_checked(type, j, n, accesses[k]))
							continue;
					}
					got = devcg_policy_check(p, type, j, n, !j && !n ? DEVCG_ACC_MKNOD : accesses[k],
								 NULL, NULL);
					if (got != want)
						return false;
				}
	return true;
}

/* The first cell that is a range (decided by a '*'), or N when none. */
static size_t any_cell(const struct cells *c)
{
	size_t i;

	for (i = 0; i < c->n; i++)
		if (!c->exact[i])
			return i;
	return c->n;
}

/* Bits of single accesses (m, r, w) allowed at a cell */
static uint8_t single_bits(uint8_t d)
{
	return (uint8_t)((d & 1 ? DEVCG_ACC_MKNOD : 0) | (d & 2 ? DEVCG_ACC_READ : 0) | (d & 4 ? DEVCG_ACC_WRITE : 0));
}

static struct devcg_policy *policy_of(bool default_allow, const struct devcg_exception *ex, size_t n)
{
	struct devcg_policy *p = devcg_policy_new();

	if (p && devcg_policy_set(p, default_allow, ex, n, NULL)) {
		devcg_policy_free(p);
		p = NULL;
	}
	return p;
}

/* The decision bits (by accesses[]) that exceptions of access E[0..n)
 * matching a request give, as devcgroup_legacy_check_permission() does:
 * on default deny one exception must hold every bit asked, on default
 * allow any exception holding one of them refuses. */
static uint8_t decisions(bool default_allow, const uint8_t *e, size_t n)
{
	uint8_t d = 0;
	size_t k, i;

	for (k = 0; k < NACC; k++) {
		bool hit = false;

		for (i = 0; i < n; i++)
			hit |= default_allow ? (e[i] & accesses[k]) != 0 : (e[i] & accesses[k]) == accesses[k];
		if (default_allow != hit)
			d |= (uint8_t)(1u << k);
	}
	return d;
}

/* The shortest exception list of one default that agrees with T, or NULL. */
static struct devcg_policy *candidate(const struct table *t, bool default_allow, size_t *budget)
{
	struct devcg_exception *ex;
	struct devcg_policy *p;
	size_t a, b, ti, n = 0, i, pass;
	size_t any_a = any_cell(&t->maj), any_b = any_cell(&t->min);
	size_t w = t->min.n + 1;
	uint8_t *chosen;

	/* every range cell must be decided as the first one */
	for (ti = 0; ti < 2; ti++)
		for (a = 0; a < t->maj.n; a++)
			for (b = 0; b < t->min.n; b++) {
				size_t ca = t->maj.exact[a] ? a : any_a, cb = t->min.exact[b] ? b : any_b;

				if (T_AT(t, ti, a, b) != T_AT(t, ti, ca, cb))
					return NULL;
			}
	ex = calloc(2 * (t->maj.n + 1) * w, sizeof(*ex));
	chosen = calloc(2 * (t->maj.n + 1) * w, 1);
	if (!ex || !chosen) {
		free(ex);
		free(chosen);
		return NULL;
	}
	/* from the widest exception to the narrowest: '*:*', 'M:*', '*:m',
	 * 'M:m', each with the largest access that, with the wider ones
	 * matching its cell, decides the cell as the program (index 0 of a
	 * number is its '*', k + 1 its exact cell k) */
	for (ti = 0; ti < 2; ti++)
		for (pass = 0; pass < 4; pass++)
			for (a = 0; a <= t->maj.n; a++)
				for (b = 0; b <= t->min.n; b++) {
					size_t ca = a ? a - 1 : any_a, cb = b ? b - 1 : any_b;
					uint8_t want, single, m[4], best = 0, sub;
					size_t nm = 0;
					int k;

					if ((pass == 0 && (a || b)) || (pass == 1 && (!a || b)) || (pass == 2 && (a || !b)) ||
					    (pass == 3 && (!a || !b)))
						continue;
					if ((a && !t->maj.exact[a - 1]) || (b && !t->min.exact[b - 1]))
						continue;
					if (ca >= t->maj.n || cb >= t->min.n)
						continue; /* no request is matched by this '*' alone */
					want = T_AT(t, ti, ca, cb);
					single = single_bits(want);
					if (default_allow)
						single = (uint8_t)(~single & DEVCG_ACC_ALL);
					/* the wider ones that match this cell */
					if (a || b)
						m[nm++] = chosen[(ti * (t->maj.n + 1) + 0) * w + 0];
					if (a && b) {
						m[nm++] = chosen[(ti * (t->maj.n + 1) + a) * w + 0];
						m[nm++] = chosen[(ti * (t->maj.n + 1) + 0) * w + b];
					}
					for (k = 7; k >= 0; k--) {
						sub = (uint8_t)k;
						if ((sub & single) != sub)
							continue;
						m[nm] = sub;
						if (decisions(default_allow, m, nm + 1) == want) {
							best = sub;
							break;
						}
					}
					if (k < 0)
						best = single;
					chosen[(ti * (t->maj.n + 1) + a) * w + b] = best;
					if (best)
						ex[n++] = (struct devcg_exception){
							.type = ti ? DEVCG_CHAR : DEVCG_BLOCK, .access = best,
							.major = a ? t->maj.lo[a - 1] : DEVCG_ANY,
							.minor = b ? t->min.lo[b - 1] : DEVCG_ANY };
				}
	free(chosen);
	p = policy_of(default_allow, ex, n);
	if (!p || !agrees(p, t)) {
		devcg_policy_free(p);
		free(ex);
		return NULL;
	}
	/* drop what the rest says already: the narrowest first */
	for (i = n; i-- > 0 && *budget;) {
		struct devcg_exception keep = ex[i];
		struct devcg_policy *q;

		(*budget)--;
		memmove(&ex[i], &ex[i + 1], (n - i - 1) * sizeof(*ex));
		q = policy_of(default_allow, ex, n - 1);
		if (q && agrees(q, t)) {
			devcg_policy_free(p);
			p = q;
			n--;
			continue;
		}
		devcg_policy_free(q);
		memmove(&ex[i + 1], &ex[i], (n - i - 1) * sizeof(*ex));
		ex[i] = keep;
	}
	free(ex);
	return p;
}

int devcg_reader_policy(struct devcg_reader *r, struct devcg_policy **out, struct devcg_error *err)
{
	struct splits c = { 0 };
	struct table t = { 0 };
	struct devcg_policy *allow = NULL, *deny = NULL;
	size_t pc, k, round, budget;
	int ret = 0;

	*out = NULL;
	if (r->devcg_policy)
		devcg_reader_add_constants(r, r->devcg_policy);
	r->recording = !r->known;
	for (pc = 0; pc < r->cnt; pc++) {
		const struct bpf_insn *i = &r->insn[pc];

		if ((BPF_CLASS(i->code) == BPF_JMP || BPF_CLASS(i->code) == BPF_JMP32) && BPF_SRC(i->code) == BPF_K &&
		    BPF_OP(i->code) != BPF_CALL && BPF_OP(i->code) != BPF_EXIT && BPF_OP(i->code) != BPF_JA)
			note_value(r, (uint32_t)i->imm);
	}
	/* the keys of the hash maps it reads, word by word */
	for (k = 0; k < r->nmaps && r->recording; k++) {
		const struct devcg_reader_map *m = &r->maps[k].m;
		uint8_t key[512], next[512];
		size_t w, count = 0;
		int got;

		if (!m->next_key || m->key_size > sizeof(key))
			continue;
		for (got = m->next_key(m->ctx, NULL, next); !got && count++ < 100000;
		     got = m->next_key(m->ctx, key, next)) {
			for (w = 0; w + 4 <= m->key_size; w += 4)
				note_value(r, load(next + w, 4));
			memcpy(key, next, m->key_size);
		}
	}
	/* the values it compares at run time, until no cell shows a new one */
	for (round = 0; round < 6 && !ret; round++) {
		for (k = 0; k < r->nseen && !ret; k++)
			ret = split_add(&c, r->seen[k]);
		if (ret)
			break;
		r->nseen = 0;
		split_sort(&c);
		cells_free(&t.maj);
		cells_free(&t.min);
		free(t.d);
		t.d = NULL;
		if (cells_of(&c, MAJOR_END, &t.maj) || cells_of(&c, MINOR_END, &t.min)) {
			ret = devcg_err(err, -ENOMEM, "out of memory");
			break;
		}
		ret = fill_table(r, &t, err);
		if (ret)
			break;
		{
			bool fresh = false;

			for (k = 0; k < r->nseen; k++)
				fresh |= !split_has(&c, r->seen[k]);
			if (!fresh)
				break;
		}
	}
	r->recording = false;
	r->nseen = 0;
	if (!ret && round == 6)
		ret = devcg_err(err, -ENOTSUP, "program %s keeps comparing with new numbers: its rules cannot "
				"be read", r->name);
	if (!ret) {
		budget = (uint64_t)t.maj.n * t.min.n * 2 * NACC < 20000 ? 4096 : 64;
		deny = candidate(&t, false, &budget);
		budget = (uint64_t)t.maj.n * t.min.n * 2 * NACC < 20000 ? 4096 : 64;
		allow = candidate(&t, true, &budget);
		if (!deny && !allow)
			ret = devcg_err(err, -ENOTSUP, "program %s decides what no devices list can say (a range of "
					"numbers, or r and w apart from rw)", r->name);
		else if (deny && (!allow || devcg_policy_count(deny) <= devcg_policy_count(allow)))
			*out = deny, deny = NULL;
		else
			*out = allow, allow = NULL;
	}
	devcg_policy_free(deny);
	devcg_policy_free(allow);
	cells_free(&t.maj);
	cells_free(&t.min);
	free(t.d);
	free(c.v);
	return ret;
}

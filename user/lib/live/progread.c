// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reader of any BPF_CGROUP_DEVICE program, its interpreter: of the
 * instructions the kernel translated (or of hand-written ones), deciding a
 * request exactly as the kernel runs the program. Loading a program into a
 * reader is progread_open.c's; the program's rules read back from its
 * decisions, progread_rules.c's; what the three share, progread_impl.h.
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
#include "live/progread_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

void reader_note_value(struct devcg_reader *r, uint64_t v)
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

void reader_free_allocs(struct devcg_reader *r)
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

uint64_t reader_load(const uint8_t *p, size_t size)
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
			reader_note_value(r, reader_load(key + k, 4));
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
int reader_run(struct devcg_reader *r, int *verdict)
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
				reader_note_value(r, imm);
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
			reg[i->dst_reg] = reader_load(p, size);
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
				old = reader_load(p, size);
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
				reader_note_value(r, src);
				reader_note_value(r, reg[i->dst_reg]);
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
int reader_decide(struct devcg_reader *r, uint8_t type, uint32_t major, uint32_t minor, uint8_t access)
{
	int v[2] = { 0, 0 }, k, ret = 0;

	r->ctx.access_type = (uint32_t)access << 16 | type; /* as the kernel's */
	r->ctx.major = major;
	r->ctx.minor = minor;
	for (k = 0; k < (r->variable ? 2 : 1) && !ret; k++) {
		r->variant = k;
		r->running = true;
		ret = reader_run(r, &v[k]);
		r->running = false;
		reader_free_allocs(r);
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
	ret = reader_run(r, verdict);
	r->env = NULL;
	reader_free_allocs(r);
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
	ret = reader_decide(r, type, major, minor, access);
	if (ret == -ENOTSUP)
		return devcg_err(err, ret, "program %s cannot be read: %s", r->name[0] ? r->name : "(no name)",
				 r->why);
	return ret;
}

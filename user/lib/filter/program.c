// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The device filter's instructions, written for one policy value: a
 * BPF_CGROUP_DEVICE program deciding each request as
 * devcgroup_legacy_check_permission() in security/device_cgroup.c does,
 * by looking the request up in the hash table of the value (devcg_abi.h),
 * or by a binary search of its sorted table (keys chosen against the hash:
 * filter.c).
 *
 * What is the same for every request of a version (the default, the key
 * shapes present, the table's size, its hash multiplier, how far each
 * shape's keys lie from their first slot) is known here, so the program
 * holds it as constants: it has no loop, and the variant without audit no
 * branch either. What a load costs beyond the floor's is per instruction,
 * and mostly in steps: the verifier's data for each instruction (88 bytes
 * in Linux 6.18) is one vzalloc(), and each page more of it cost about
 * 10 us here (46 instructions a page), against about 0.15 us for an
 * instruction more within a page. So the program is written short: a
 * lookup only for the shapes present, as many slots as each shape's
 * longest probe, and on default deny 10 instructions a slot; a policy of
 * exact and minor-'*' exceptions for both types takes 44 (one page).
 *
 * A request's type is char or block and its numbers fit in 12 and 20 bits:
 * the kernel asks about nothing else (devcgroup_check_permission() is
 * called with the type of a device inode or of mknod(2)'s mode, and with
 * MAJOR() and MINOR() of a dev_t, include/linux/kdev_t.h), so the program
 * spends no instruction on other requests.
 *
 * Registers, after the prologue:
 *   r0 bit 63: an exception     r6 the requested access bits at bit 40;
 *      decided                     on default deny with the key's 40 bits set
 *   r4 the key looked up, with  r7 major
 *      0xff at bit 40           r8 minor
 *   r5 its first slot's offset  r9 the policy value
 *      (sorted: a pointer to the slot the search is at; r2 the 40 bits
 *      of a key, r3 the key + 1)
 *   r1, r3 scratch
 * The audit variant keeps the context, the slot read and the key at
 * fp-8, fp-16 and fp-24 for the report of a denial, and goes to an exit
 * at the slot that decides.
 */
#include "filter/filter.h"
#include "devcg_abi.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>

enum { R0, R1, R2, R3, R4, R5, R6, R7, R8, R9, R10 };

/* where the slots begin in the value */
#define SLOTS_AT ((short)offsetof(struct devcg_policy_value, slot))
#define CTX_AT (-8)
#define TAG_AT (-16)
#define KEY_AT (-24)
#define ZERO_AT (-28)

struct prog {
	struct bpf_insn *insn;
	size_t n, cap;
	bool nomem;
	/* forward jumps to the exits, patched at the end */
	size_t *jump;
	int *to;
	size_t njump, jcap;
};

enum exit_kind { TO_ALLOW, TO_AUDIT, EXITS };

static void put(struct prog *p, struct bpf_insn i)
{
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 128;
		struct bpf_insn *more = realloc(p->insn, cap * sizeof(*more));

		if (!more) {
			p->nomem = true;
			return;
		}
		p->insn = more;
		p->cap = cap;
	}
	p->insn[p->n++] = i;
}

static void alu_imm(struct prog *p, __u8 op, __u8 dst, __s32 imm)
{
	put(p, (struct bpf_insn){ .code = BPF_ALU64 | op | BPF_K, .dst_reg = dst, .imm = imm });
}

static void alu32_imm(struct prog *p, __u8 op, __u8 dst, __s32 imm)
{
	put(p, (struct bpf_insn){ .code = BPF_ALU | op | BPF_K, .dst_reg = dst, .imm = imm });
}

static void alu_reg(struct prog *p, __u8 op, __u8 dst, __u8 src)
{
	put(p, (struct bpf_insn){ .code = BPF_ALU64 | op | BPF_X, .dst_reg = dst, .src_reg = src });
}

static void load(struct prog *p, __u8 size, __u8 dst, __u8 src, short off)
{
	put(p, (struct bpf_insn){ .code = BPF_LDX | BPF_MEM | size, .dst_reg = dst, .src_reg = src, .off = off });
}

static void store(struct prog *p, __u8 size, __u8 dst, short off, __u8 src)
{
	put(p, (struct bpf_insn){ .code = BPF_STX | BPF_MEM | size, .dst_reg = dst, .src_reg = src, .off = off });
}

/* ld_imm64: a constant, or (PSEUDO) a map's fd or the address of its value */
static void ld64(struct prog *p, __u8 dst, __u8 pseudo, __u64 v)
{
	put(p, (struct bpf_insn){ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = dst, .src_reg = pseudo,
				   .imm = (__s32)(__u32)v });
	put(p, (struct bpf_insn){ .imm = (__s32)(__u32)(v >> 32) });
}

static void call(struct prog *p, __s32 helper)
{
	put(p, (struct bpf_insn){ .code = BPF_JMP | BPF_CALL, .imm = helper });
}

static void ret(struct prog *p, __s32 verdict)
{
	alu_imm(p, BPF_MOV, R0, verdict);
	put(p, (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT });
}

/* if DST OP IMM, go to the exit TO (placed at the end) */
static void jump(struct prog *p, __u8 op, __u8 dst, __s32 imm, enum exit_kind to)
{
	if (p->njump == p->jcap) {
		size_t cap = p->jcap ? p->jcap * 2 : 32;
		size_t *j = realloc(p->jump, cap * sizeof(*j));
		int *t = j ? realloc(p->to, cap * sizeof(*t)) : NULL;

		if (j)
			p->jump = j;
		if (!t) {
			p->nomem = true;
			return;
		}
		p->to = t;
		p->jcap = cap;
	}
	p->jump[p->njump] = p->n;
	p->to[p->njump++] = to;
	put(p, (struct bpf_insn){ .code = BPF_JMP | op | BPF_K, .dst_reg = dst, .imm = imm });
}

/*
 * Decide by the slot read into R (FIRST: R is r0). On default deny, a slot
 * with the key r4 holding every requested bit allows; on default allow, a
 * slot with the key sharing a bit with the request denies. At most one
 * slot holds the key. Without audit, a slot that decides sets bit 63 of r0
 * (r0 itself when FIRST).
 */
static void decide(struct prog *p, __u8 r, bool default_allow, bool audit)
{
	if (audit && default_allow)
		store(p, BPF_DW, R10, TAG_AT, r);
	/* r: 0 when this slot decides, and below 2^56 */
	if (default_allow) {
		/* the key's 40 bits against r4, and 1 unless the slot
		 * shares an access bit with the request */
		alu_reg(p, BPF_MOV, R3, r);
		alu_reg(p, BPF_AND, R3, R6);
		alu_imm(p, BPF_ADD, R3, -1);
		alu_imm(p, BPF_RSH, R3, 63);
		alu_reg(p, BPF_XOR, r, R4);
		alu_imm(p, BPF_LSH, r, 24);
		alu_imm(p, BPF_RSH, r, 24);
		alu_reg(p, BPF_OR, r, R3);
	} else {
		/* r4 has 0xff where the slot has its access bits: what
		 * differs there and is requested is what the slot
		 * lacks; r6 keeps that and the key's 40 bits */
		alu_reg(p, BPF_XOR, r, R4);
		alu_reg(p, BPF_AND, r, R6);
	}
	if (audit) {
		jump(p, BPF_JEQ, r, 0, default_allow ? TO_AUDIT : TO_ALLOW);
		return;
	}
	/* 0 - 1 is the one value with bit 63 set */
	alu_imm(p, BPF_ADD, r, -1);
	if (r != R0)
		alu_reg(p, BPF_OR, R0, r);
}

/*
 * Look the key r4 up in PROBES slots from its first one (decide()).
 */
static void lookup(struct prog *p, unsigned int shape, unsigned int probes, unsigned int bits, __u64 mult,
		   bool default_allow, bool audit, bool first)
{
	/* the first slot of the program's first lookup goes to r0 itself */
	__u8 at = probes > 1 ? R5 : first ? R0 : R1;
	__s32 slots = (__s32)(((1U << bits) - 1) << 3);
	unsigned int i;

	/* the first slot, as its offset: devcg_table_home() times 8 */
	alu_reg(p, BPF_MOV, at, R4);
	alu32_imm(p, BPF_MUL, at, (__s32)(__u32)mult);
	if (shape)
		alu32_imm(p, BPF_ADD, at, (__s32)((__u32)shape << 30));
	alu32_imm(p, BPF_RSH, at, (__s32)(32 - 3 - bits));
	alu32_imm(p, BPF_AND, at, -8);
	for (i = 0; i < probes; i++) {
		__u8 r = first && !i ? R0 : R1;

		if (probes > 1)
			alu_reg(p, BPF_MOV, r, R5);
		if (i) {
			alu_imm(p, BPF_ADD, r, (__s32)(8 * i));
			alu_imm(p, BPF_AND, r, slots);
		}
		alu_reg(p, BPF_ADD, r, R9);
		load(p, BPF_DW, r, r, SLOTS_AT);
		decide(p, r, default_allow, audit);
	}
}

/*
 * Look the key r4 up in a sorted table of 1 << BITS slots (the empty ones,
 * 0, first): a binary search of BITS steps for the last slot whose key is
 * at most r4's, then decide() by that slot. No branch: each step adds its
 * half to r5 (a pointer into the value) when the slot there is not past
 * the key, so every lookup reads BITS + 1 slots. r2 holds the 40 bits of
 * a key (DEVCG_TAG_KEY), r3 the key + 1.
 */
static void search(struct prog *p, unsigned int bits, bool default_allow, bool audit, bool first)
{
	__u8 r = first ? R0 : R1;
	unsigned int step;

	alu_reg(p, BPF_MOV, R3, R4);
	alu_reg(p, BPF_AND, R3, R2);
	alu_imm(p, BPF_ADD, R3, 1);
	alu_reg(p, BPF_MOV, R5, R9);
	for (step = bits; step-- > 0;) {
		long off = SLOTS_AT + (8L << step);

		/* r1: the slot half a range on, 1 when its key is below r3 */
		if (off <= 32767) {
			load(p, BPF_DW, R1, R5, (short)off);
		} else {
			alu_reg(p, BPF_MOV, R1, R5);
			alu_imm(p, BPF_ADD, R1, 8 << step);
			load(p, BPF_DW, R1, R1, SLOTS_AT);
		}
		alu_reg(p, BPF_AND, R1, R2);
		alu_reg(p, BPF_SUB, R1, R3);
		alu_imm(p, BPF_RSH, R1, 63);
		alu_imm(p, BPF_LSH, R1, (__s32)step + 3);
		alu_reg(p, BPF_ADD, R5, R1);
	}
	load(p, BPF_DW, r, R5, SLOTS_AT);
	decide(p, r, default_allow, audit);
}

/*
 * r4: the key of SHAPE (exact, minor '*', major '*', both; see
 * devcg_abi.h) for the request, with 0xff at bit 40: from the context's
 * access_type in r6 when PREV is -1, else from r4, the key of shape PREV.
 */
static void key(struct prog *p, int shape, int prev)
{
	if (prev == 0 && shape == 1) {
		/* the exact key without its minor, one segment on */
		alu_imm(p, BPF_RSH, R4, DEVCG_MINOR_BITS);
		alu_imm(p, BPF_ADD, R4, 1 << DEVCG_MAJOR_BITS);
		alu_imm(p, BPF_LSH, R4, DEVCG_MINOR_BITS);
		return;
	}
	if (prev < 0) {
		/* 0xff00 | the type's first segment + 1 + SHAPE: block (1)
		 * 1 + SHAPE, char (2) 5 + SHAPE */
		alu_reg(p, BPF_MOV, R4, R6);
		alu_imm(p, BPF_AND, R4, BPF_DEVCG_DEV_CHAR);
		alu_imm(p, BPF_LSH, R4, 1);
		alu_imm(p, BPF_ADD, R4, 0xff01 + shape);
	} else {
		alu_imm(p, BPF_RSH, R4, 32);
		alu_imm(p, BPF_ADD, R4, shape - prev);
	}
	alu_imm(p, BPF_LSH, R4, DEVCG_MAJOR_BITS);
	if (!(shape & 2))
		alu_reg(p, BPF_OR, R4, R7);
	alu_imm(p, BPF_LSH, R4, DEVCG_MINOR_BITS);
	if (!(shape & 1))
		alu_reg(p, BPF_OR, R4, R8);
}

/*
 * Without audit, the '*:*' exceptions need no lookup: there is at most one
 * a type, and its access is a constant here. r0 starts with bit 63 set
 * when the type's decides the request: on default deny, when it holds
 * every requested bit; on default allow, when it shares one. X: what a
 * type's request bits are ANDed with for that; a type without the
 * exception gets bit 8, which only the request ORed with 0x100 has
 * (default deny: never decided).
 */
static void any_any_x(const int access[2], bool default_allow, __s32 x[2])
{
	int t;

	for (t = 0; t < 2; t++)
		x[t] = default_allow ? (access[t] < 0 ? 0 : access[t])
				     : (access[t] < 0 ? 0x100 : ~access[t] & 0xff);
}

/* r3: X of the request's type, from the context's access_type in r6 */
static void any_any_select(struct prog *p, const __s32 x[2])
{
	alu_reg(p, BPF_MOV, R3, R6);
	alu_imm(p, BPF_RSH, R3, 1);
	alu_imm(p, BPF_AND, R3, 1);
	alu_imm(p, BPF_NEG, R3, 0);
	alu_imm(p, BPF_AND, R3, x[0] ^ x[1]);
	alu_imm(p, BPF_XOR, R3, x[0]);
}

/* r0, from the request's bits in r6 (and r3, any_any_select()) */
static void any_any(struct prog *p, const __s32 x[2], bool default_allow)
{
	alu_reg(p, BPF_MOV, R0, R6);
	if (!default_allow && (x[0] | x[1]) & 0x100)
		alu_imm(p, BPF_OR, R0, 0x100);
	if (x[0] != x[1])
		alu_reg(p, BPF_AND, R0, R3);
	else
		alu_imm(p, BPF_AND, R0, x[0]);
	/* default deny: 0 - 1 has bit 63; default allow: -x has it unless 0 */
	if (default_allow)
		alu_imm(p, BPF_NEG, R0, 0);
	else
		alu_imm(p, BPF_ADD, R0, -1);
}

/* The jump at AT goes to the next instruction to be put. */
static void patch(struct prog *p, size_t at)
{
	if (!p->nomem)
		p->insn[at].off = (short)(p->n - at - 1);
}

/* Into the audit event at OFF: the number at bit SHIFT (MASK) of the key
 * in r4, or 0xffffffff where bit STAR of the segment in r3 says '*'. */
static void decider_number(struct prog *p, int shift, __s32 mask, int star, short off)
{
	alu_reg(p, BPF_MOV, R2, R4);
	if (shift)
		alu_imm(p, BPF_RSH, R2, shift);
	alu_imm(p, BPF_AND, R2, mask);
	alu_reg(p, BPF_MOV, R0, R3);
	if (star)
		alu_imm(p, BPF_RSH, R0, star);
	alu_imm(p, BPF_AND, R0, 1);
	alu_imm(p, BPF_NEG, R0, 0);
	alu_reg(p, BPF_OR, R2, R0);
	store(p, BPF_W, R6, off, R2);
}

/* The report of a denial: r4 is the key of the exception that decided
 * (its slot at fp-16), or 0 for the default. As the filter's audit ring
 * (fd RING) and loss count (fd LOST) have always reported it. */
static void audit_block(struct prog *p, int ring, int lost)
{
	size_t nodec, fill, skip;

	store(p, BPF_DW, R10, KEY_AT, R4);
	ld64(p, R1, BPF_PSEUDO_MAP_FD, (__u64)ring);
	alu_imm(p, BPF_MOV, R2, (__s32)sizeof(struct devcg_audit_event));
	alu_imm(p, BPF_MOV, R3, 0);
	call(p, BPF_FUNC_ringbuf_reserve);
	fill = p->n;
	put(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = R0 });
	/* no room: count it */
	put(p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = R10, .off = ZERO_AT });
	alu_reg(p, BPF_MOV, R2, R10);
	alu_imm(p, BPF_ADD, R2, ZERO_AT);
	ld64(p, R1, BPF_PSEUDO_MAP_FD, (__u64)lost);
	call(p, BPF_FUNC_map_lookup_elem);
	put(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = R0, .off = 2 });
	alu_imm(p, BPF_MOV, R1, 1);
	put(p, (struct bpf_insn){ .code = BPF_STX | BPF_ATOMIC | BPF_DW, .dst_reg = R0, .src_reg = R1,
				   .imm = BPF_ADD });
	ret(p, 0);
	patch(p, fill);

	alu_reg(p, BPF_MOV, R6, R0);
	call(p, BPF_FUNC_get_current_pid_tgid);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, tid), R0);
	alu_imm(p, BPF_RSH, R0, 32);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, pid), R0);
	call(p, BPF_FUNC_ktime_get_ns);
	store(p, BPF_DW, R6, offsetof(struct devcg_audit_event, ts_ns), R0);
	call(p, BPF_FUNC_get_current_cgroup_id);
	store(p, BPF_DW, R6, offsetof(struct devcg_audit_event, cgroup_id), R0);
	load(p, BPF_DW, R1, R10, CTX_AT);
	load(p, BPF_W, R2, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type));
	alu_reg(p, BPF_MOV, R3, R2);
	alu_imm(p, BPF_AND, R3, 0xffff);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, type), R3);
	alu_imm(p, BPF_RSH, R2, 16);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, access), R2);
	load(p, BPF_W, R2, R1, offsetof(struct bpf_cgroup_dev_ctx, major));
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, major), R2);
	load(p, BPF_W, R2, R1, offsetof(struct bpf_cgroup_dev_ctx, minor));
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, minor), R2);

	/* the exception that decided, from its key: segment + 1 at bit 32,
	 * major at 20, minor at 0; a '*' (shape bit 1: major, bit 0: minor)
	 * reads back as 0xffffffff */
	load(p, BPF_DW, R4, R10, KEY_AT);
	alu_imm(p, BPF_MOV, R2, 0);
	nodec = p->n;
	put(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = R4 });
	alu_imm(p, BPF_MOV, R2, 1);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decided), R2);
	alu_reg(p, BPF_MOV, R3, R4);
	alu_imm(p, BPF_RSH, R3, 32);
	alu_imm(p, BPF_AND, R3, 0xff);
	alu_imm(p, BPF_ADD, R3, -1); /* the segment */
	alu_reg(p, BPF_MOV, R2, R3);
	alu_imm(p, BPF_RSH, R2, 2);
	alu_imm(p, BPF_ADD, R2, 1); /* block 1, char 2 */
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decider.type), R2);
	decider_number(p, DEVCG_MINOR_BITS, 0xfff, 1, offsetof(struct devcg_audit_event, decider.major));
	decider_number(p, 0, 0xfffff, 0, offsetof(struct devcg_audit_event, decider.minor));
	load(p, BPF_DW, R2, R10, TAG_AT);
	alu_imm(p, BPF_RSH, R2, 40);
	alu_imm(p, BPF_AND, R2, 0xff);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decider_access), R2);
	skip = p->n;
	put(p, (struct bpf_insn){ .code = BPF_JMP | BPF_JA });
	patch(p, nodec);
	/* the default decided: r2 is 0 */
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decided), R2);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decider.type), R2);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decider.major), R2);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decider.minor), R2);
	store(p, BPF_W, R6, offsetof(struct devcg_audit_event, decider_access), R2);
	patch(p, skip);

	alu_reg(p, BPF_MOV, R1, R6);
	alu_imm(p, BPF_ADD, R1, offsetof(struct devcg_audit_event, comm));
	alu_imm(p, BPF_MOV, R2, sizeof(((struct devcg_audit_event *)0)->comm));
	call(p, BPF_FUNC_get_current_comm);
	alu_reg(p, BPF_MOV, R1, R6);
	alu_imm(p, BPF_MOV, R2, 0);
	call(p, BPF_FUNC_ringbuf_submit);
	ret(p, 0);
}

int devcg_program_build(const struct devcg_policy_value *v, const struct devcg_table *table, bool audit,
			const int fds[3], struct bpf_insn **insns, size_t *cnt)
{
	struct prog p = { 0 };
	unsigned int probes[4];
	int any_access[2], shape, prev = -1;
	bool allow = v->head.default_allow, any = false, major = false, minor = false, decided = false, anyany;
	bool too_far = false;
	__s32 x[2];
	size_t at[EXITS], i;

	if (v->head.bits < 1 || v->head.bits > 30)
		return -EINVAL;
	memcpy(probes, table->probes, sizeof(probes));
	memcpy(any_access, table->any_access, sizeof(any_access));
	/* the '*:*' keys by constants (any_any()), but for the audit
	 * variant, which reports the slot that decided */
	if (!audit)
		probes[3] = 0;
	for (shape = 0; shape < 4; shape++) {
		any |= probes[shape] > 0;
		major |= probes[shape] && !(shape & 2);
		minor |= probes[shape] && !(shape & 1);
	}
	if (audit) {
		store(&p, BPF_DW, R10, CTX_AT, R1);
		put(&p, (struct bpf_insn){ .code = BPF_ST | BPF_MEM | BPF_DW, .dst_reg = R10, .off = TAG_AT });
		/* named whatever the policy, so that the next version finds them */
		ld64(&p, R0, BPF_PSEUDO_MAP_FD, (__u64)fds[1]);
		ld64(&p, R0, BPF_PSEUDO_MAP_FD, (__u64)fds[2]);
	}
	/* the map's value, named even by a program that reads nothing of it:
	 * the policy is read back from there */
	ld64(&p, R9, BPF_PSEUDO_MAP_VALUE, (__u64)(__u32)fds[0]);
	anyany = !audit && (any_access[0] >= 0 || any_access[1] >= 0);
	any_any_x(any_access, allow, x);
	if (any || anyany) {
		load(&p, BPF_W, R6, R1, offsetof(struct bpf_cgroup_dev_ctx, access_type));
		if (major)
			load(&p, BPF_W, R7, R1, offsetof(struct bpf_cgroup_dev_ctx, major));
		if (minor)
			load(&p, BPF_W, R8, R1, offsetof(struct bpf_cgroup_dev_ctx, minor));
		for (shape = 0; shape < 4 && prev < 0; shape++)
			if (probes[shape]) {
				key(&p, shape, -1);
				prev = shape;
			}
		if (anyany && x[0] != x[1])
			any_any_select(&p, x);
		alu_imm(&p, BPF_RSH, R6, 16);
		if (anyany) {
			any_any(&p, x, allow);
			decided = true;
		}
		/* r6: the requested bits at bit 40; on default deny with the
		 * key's 40 bits set: ~(~bits << 40) */
		if (any) {
			if (!allow)
				alu_imm(&p, BPF_XOR, R6, -1);
			alu_imm(&p, BPF_LSH, R6, 40);
			if (!allow)
				alu_imm(&p, BPF_XOR, R6, -1);
		}
	}
	if (table->sorted && any)
		ld64(&p, R2, 0, DEVCG_TAG_KEY);
	/* one shape after another: exact, minor '*', major '*', both */
	for (shape = 0; shape < 4; shape++) {
		if (!probes[shape])
			continue;
		if (shape != prev)
			key(&p, shape, prev);
		if (!table->sorted)
			lookup(&p, (unsigned int)shape, probes[shape], v->head.bits, table->mult, allow, audit,
			       !decided);
		else
			search(&p, v->head.bits, allow, audit, !decided);
		decided = true;
		prev = shape;
	}
	/* without audit: allowed when a slot allowed, on default deny;
	 * allowed unless one denied, on default allow */
	if (decided && !audit) {
		alu_imm(&p, BPF_RSH, R0, 63);
		if (allow)
			alu_imm(&p, BPF_XOR, R0, 1);
		put(&p, (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT });
		goto done;
	}
	/* the default, then the exits; each only where something goes to it
	 * (the verifier refuses an instruction it cannot reach) */
	for (i = 0; i < EXITS; i++)
		at[i] = (size_t)-1;
	if (audit && !allow) {
		alu_imm(&p, BPF_MOV, R4, 0);
		jump(&p, BPF_JA, 0, 0, TO_AUDIT);
	} else {
		ret(&p, allow);
	}
	for (i = 0; i < p.njump; i++)
		if (p.to[i] == TO_ALLOW && at[TO_ALLOW] == (size_t)-1) {
			at[TO_ALLOW] = p.n;
			ret(&p, 1);
		}
	for (i = 0; i < p.njump; i++)
		if (p.to[i] == TO_AUDIT && at[TO_AUDIT] == (size_t)-1) {
			at[TO_AUDIT] = p.n;
			audit_block(&p, fds[1], fds[2]);
		}
done:
	for (i = 0; i < p.njump && !p.nomem && !too_far; i++) {
		long off = (long)at[p.to[i]] - (long)p.jump[i] - 1;

		/* a jump reaches 32,767 instructions: only a table whose keys
		 * crowd into long probes writes a program that long */
		too_far = off > 32767;
		if (!too_far)
			p.insn[p.jump[i]].off = (short)off;
	}
	free(p.jump);
	free(p.to);
	too_far |= p.n > DEVCG_PROGRAM_MAX_INSNS;
	if (p.nomem || too_far) {
		free(p.insn);
		return p.nomem ? -ENOMEM : -E2BIG;
	}
	*insns = p.insn;
	*cnt = p.n;
	return 0;
}

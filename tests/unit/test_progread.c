// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The reader of any device program (user/lib/live/progread.c), on hand-written
 * programs without a kernel: each class of instruction, map lookups,
 * subprogram calls, the rules read back, and what makes a program
 * unreadable (an unknown helper, a loop past the bound, a decision that
 * depends on a helper's result, a read of the stack never written). And
 * devcg's own program as program.c writes it, decided by the reader as
 * the policy decides, with the policy read back.
 */
#include "testutil.h"
#include "internal.h"
#include "live/progread.h"
#include "devcg_abi.h"

#include <linux/bpf.h>

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })
#define MOV64_IMM(d, i) I(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV64_REG(d, s) I(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define ALU32_IMM(op, d, i) I(BPF_ALU | (op) | BPF_K, d, 0, 0, i)
#define ALU64_IMM(op, d, i) I(BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define ALU64_REG(op, d, s) I(BPF_ALU64 | (op) | BPF_X, d, s, 0, 0)
#define LDX(sz, d, s, o) I(BPF_LDX | BPF_MEM | (sz), d, s, o, 0)
#define STX(sz, d, s, o) I(BPF_STX | BPF_MEM | (sz), d, s, o, 0)
#define ST(sz, d, o, i) I(BPF_ST | BPF_MEM | (sz), d, 0, o, i)
#define JMP_IMM(op, d, i, o) I(BPF_JMP | (op) | BPF_K, d, 0, o, i)
#define JMP32_IMM(op, d, i, o) I(BPF_JMP32 | (op) | BPF_K, d, 0, o, i)
#define JMP_REG(op, d, s, o) I(BPF_JMP | (op) | BPF_X, d, s, o, 0)
#define JA(o) I(BPF_JMP | BPF_JA, 0, 0, o, 0)
#define CALL(f) I(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define CALL_SUB(rel) I(BPF_JMP | BPF_CALL, 0, BPF_PSEUDO_CALL, 0, rel)
#define EXIT() I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)
#define LD_MAP(d, id) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_FD, 0, id), I(0, 0, 0, 0, 0)
#define LD_MAP_VALUE(d, id, off) I(BPF_LD | BPF_IMM | BPF_DW, d, BPF_PSEUDO_MAP_VALUE, 0, id), I(0, 0, 0, 0, off)
#define RET(v) MOV64_IMM(0, v), EXIT()

#define N(a) (sizeof(a) / sizeof((a)[0]))
#ifndef BPF_MEMSX
#define BPF_MEMSX 0x80
#endif

static struct devcg_reader *reader_of(const struct bpf_insn *insns, size_t n, const struct devcg_reader_map *maps,
				      size_t nmaps)
{
	struct devcg_reader *r;
	struct devcg_error err = { 0 };

	CHECK_MSG(!devcg_reader_from_insns(insns, n, DEVCG_READER_RAW, maps, nmaps, NULL, &r, &err), "%s", err.msg);
	return r;
}

static int decide(struct devcg_reader *r, char type, uint32_t major, uint32_t minor, uint8_t access)
{
	struct devcg_error err = { 0 };
	int ret = devcg_reader_decide(r, type == 'c' ? DEVCG_CHAR : DEVCG_BLOCK, major, minor, access, &err);

	CHECK_MSG(ret >= 0, "%s", err.msg);
	return ret;
}

/* The reader's rules, as text ("deny a; allow c 1:3 rwm"). */
static void rules_text(struct devcg_reader *r, char *buf, size_t len)
{
	struct devcg_policy *p;
	struct devcg_rules *rules;
	struct devcg_error err = { 0 };
	size_t i, at = 0;

	CHECK_MSG(!devcg_reader_policy(r, &p, &err), "%s", err.msg);
	CHECK(!devcg_policy_to_rules(p, &rules));
	buf[0] = '\0';
	for (i = 0; i < devcg_rules_count(rules); i++) {
		char one[64];

		devcg_rule_format(devcg_rules_get(rules, i), one, sizeof(one));
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? "; " : "", one);
	}
	devcg_rules_free(rules);
	devcg_policy_free(p);
}

/* runc's shape: type, access, major, minor in r2..r5, one block per rule */
static const struct bpf_insn runc_like[] = {
	LDX(BPF_W, 2, 1, 0), ALU32_IMM(BPF_AND, 2, 0xffff), LDX(BPF_W, 3, 1, 0), ALU32_IMM(BPF_RSH, 3, 16),
	LDX(BPF_W, 4, 1, 4), LDX(BPF_W, 5, 1, 8),
	/* c 1:3 rwm */
	JMP_IMM(BPF_JNE, 2, DEVCG_CHAR, 4), JMP_IMM(BPF_JNE, 4, 1, 3), JMP_IMM(BPF_JNE, 5, 3, 2), RET(1),
	/* c 136:* rw */
	JMP_IMM(BPF_JNE, 2, DEVCG_CHAR, 6), MOV64_REG(1, 3), ALU32_IMM(BPF_AND, 1, ~(DEVCG_ACC_READ | DEVCG_ACC_WRITE)),
	JMP_IMM(BPF_JNE, 1, 0, 3), JMP_IMM(BPF_JNE, 4, 136, 2), RET(1),
	RET(0),
};

TEST(reader_decides_a_runc_shaped_program_as_its_rules_say)
{
	struct devcg_reader *r = reader_of(runc_like, N(runc_like), NULL, 0);

	CHECK_INT(decide(r, 'c', 1, 3, DEVCG_ACC_READ | DEVCG_ACC_WRITE), 1);
	CHECK_INT(decide(r, 'c', 1, 3, DEVCG_ACC_MKNOD), 1);
	CHECK_INT(decide(r, 'b', 1, 3, DEVCG_ACC_READ), 0);
	CHECK_INT(decide(r, 'c', 1, 4, DEVCG_ACC_READ), 0);
	CHECK_INT(decide(r, 'c', 136, 77, DEVCG_ACC_WRITE), 1);
	CHECK_INT(decide(r, 'c', 136, 77, DEVCG_ACC_MKNOD), 0);
	CHECK_STR(devcg_reader_owner(r), "runc");
	devcg_reader_free(r);
}

TEST(reader_reads_back_the_rules_of_a_runc_shaped_program)
{
	struct devcg_reader *r = reader_of(runc_like, N(runc_like), NULL, 0);
	char text[512];

	rules_text(r, text, sizeof(text));
	CHECK_STR(text, "deny a; allow c 1:3 rwm; allow c 136:* rw");
	devcg_reader_free(r);
}

/* ALU32 and ALU64 arithmetic, JMP32, the stack, signed loads and atomics:
 * allow exactly when every computed value is as expected */
TEST(reader_follows_every_class_of_alu_jump_stack_and_atomic_instructions)
{
	const struct bpf_insn prog[] = {
		LDX(BPF_W, 6, 1, 4),                    /* r6 = major */
		MOV64_REG(2, 6), ALU64_IMM(BPF_MUL, 2, 3), ALU64_IMM(BPF_ADD, 2, 5), ALU64_IMM(BPF_SUB, 2, 2),
		ALU64_IMM(BPF_DIV, 2, 3), /* (3m + 3) / 3 = m + 1 */
		ALU64_IMM(BPF_XOR, 2, 0xff), ALU64_IMM(BPF_XOR, 2, 0xff), ALU64_IMM(BPF_LSH, 2, 4),
		ALU64_IMM(BPF_RSH, 2, 4), ALU64_IMM(BPF_OR, 2, 0), ALU64_IMM(BPF_MOD, 2, 1000),
		ALU64_REG(BPF_SUB, 2, 6), JMP_IMM(BPF_JNE, 2, 1, 23),  /* m + 1 - m == 1 */
		MOV64_IMM(3, -1), ALU32_IMM(BPF_ADD, 3, 0),              /* zero-extended: 0xffffffff */
		JMP_IMM(BPF_JEQ, 3, -1, 20),                            /* as 64 bits: not -1 ... */
		JMP32_IMM(BPF_JNE, 3, -1, 19),                          /* ... as 32 bits: -1 */
		MOV64_IMM(4, -8), ALU64_IMM(BPF_ARSH, 4, 1), JMP_IMM(BPF_JSGT, 4, -4, 16),
		JMP_IMM(BPF_JSLT, 4, -4, 15),
		ALU64_IMM(BPF_NEG, 4, 0), JMP_IMM(BPF_JNE, 4, 4, 13),
		STX(BPF_DW, 10, 6, -8), ST(BPF_W, 10, -16, 5),
		MOV64_IMM(5, 2), I(BPF_STX | BPF_ATOMIC | BPF_DW, 10, 5, -8, BPF_ADD), /* major + 2 on the stack */
		LDX(BPF_DW, 7, 10, -8), ALU64_IMM(BPF_SUB, 7, 2), JMP_REG(BPF_JNE, 7, 6, 6),
		I(BPF_LDX | BPF_MEMSX | BPF_B, 8, 10, -16, 0), JMP_IMM(BPF_JNE, 8, 5, 4),
		JMP_IMM(BPF_JGT, 6, 9, 3), JMP_IMM(BPF_JSET, 6, 8, 2), /* majors 0..9 without bit 3: 0-7 */
		RET(1),
		RET(0),
	};
	struct devcg_reader *r = reader_of(prog, N(prog), NULL, 0);
	uint32_t m;

	for (m = 0; m < 12; m++)
		CHECK_MSG(decide(r, 'c', m, 0, DEVCG_ACC_READ) == (m < 8), "major %u", m);
	devcg_reader_free(r);
}

/* A subprogram (BPF_PSEUDO_CALL) keeps the caller's r6-r9 and its stack */
TEST(reader_follows_a_subprogram_call)
{
	const struct bpf_insn prog[] = {
		LDX(BPF_W, 6, 1, 8), ST(BPF_W, 10, -4, 7), MOV64_REG(1, 6), CALL_SUB(5),
		LDX(BPF_W, 2, 10, -4), JMP_IMM(BPF_JNE, 2, 7, 1), EXIT(),
		RET(0),
		/* the subprogram: allow minor 5 (its own stack, r6 overwritten) */
		MOV64_IMM(6, 99), ST(BPF_W, 10, -4, 1), MOV64_IMM(0, 0), JMP_IMM(BPF_JNE, 1, 5, 1), MOV64_IMM(0, 1),
		EXIT(),
	};
	struct devcg_reader *r = reader_of(prog, N(prog), NULL, 0);

	CHECK_INT(decide(r, 'c', 1, 5, DEVCG_ACC_READ), 1);
	CHECK_INT(decide(r, 'c', 1, 6, DEVCG_ACC_READ), 0);
	devcg_reader_free(r);
}

/* maps: an array read by lookup and in place, a hash read by lookup */
struct fake {
	uint32_t key[8];
	uint32_t val[8];
	size_t n;
	uint32_t key_size;
};

static int fake_lookup(void *ctx, const void *key, void *value)
{
	struct fake *f = ctx;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!memcmp(&f->key[i], key, 4)) {
			memcpy(value, &f->val[i], 4);
			return 0;
		}
	return -ENOENT;
}

static int fake_next(void *ctx, const void *key, void *next)
{
	struct fake *f = ctx;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!key || (!memcmp(&f->key[i], key, 4) && i + 1 < f->n)) {
			memcpy(next, &f->key[key ? i + 1 : 0], 4);
			return 0;
		}
	return -ENOENT;
}

TEST(reader_reads_array_and_hash_maps_and_their_keys_become_rules)
{
	/* hash: key major -> allowed access bits; array [0]: the default */
	struct fake hash = { .key = { 10, 4000 }, .val = { DEVCG_ACC_READ, DEVCG_ACC_ALL }, .n = 2 };
	struct fake array = { .key = { 0 }, .val = { 0 }, .n = 1 };
	const struct devcg_reader_map maps[] = {
		{ .id = 7, .type = BPF_MAP_TYPE_HASH, .key_size = 4, .value_size = 4, .max_entries = 8,
		  .lookup = fake_lookup, .next_key = fake_next, .ctx = &hash },
		{ .id = 8, .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 4, .max_entries = 1,
		  .lookup = fake_lookup, .ctx = &array },
	};
	const struct bpf_insn prog[] = {
		LDX(BPF_W, 6, 1, 0), ALU32_IMM(BPF_RSH, 6, 16), /* access */
		LDX(BPF_W, 2, 1, 4), STX(BPF_W, 10, 2, -4),      /* key: major */
		LD_MAP(1, 7), MOV64_REG(2, 10), ALU64_IMM(BPF_ADD, 2, -4), CALL(BPF_FUNC_map_lookup_elem),
		JMP_IMM(BPF_JEQ, 0, 0, 2), LDX(BPF_W, 7, 0, 0), JA(3),
		LD_MAP_VALUE(7, 8, 0), LDX(BPF_W, 7, 7, 0),      /* absent: the array's bits */
		ALU64_IMM(BPF_XOR, 7, -1), ALU64_REG(BPF_AND, 6, 7), JMP_IMM(BPF_JNE, 6, 0, 2),
		RET(1),
		RET(0),
	};
	struct devcg_reader *r;
	char text[512];

	r = reader_of(prog, N(prog), maps, N(maps));
	CHECK_INT(decide(r, 'b', 10, 1, DEVCG_ACC_READ), 1);
	CHECK_INT(decide(r, 'b', 10, 1, DEVCG_ACC_WRITE), 0);
	CHECK_INT(decide(r, 'c', 4000, 9, DEVCG_ACC_READ | DEVCG_ACC_WRITE), 1);
	CHECK_INT(decide(r, 'c', 11, 9, DEVCG_ACC_READ), 0);
	rules_text(r, text, sizeof(text));
	CHECK_STR(text, "deny a; allow c 10:* r; allow c 4000:* rwm; allow b 10:* r; allow b 4000:* rwm");
	devcg_reader_free(r);
}

static void check_unreadable(const struct bpf_insn *prog, size_t n, const char *why)
{
	struct devcg_reader *r = reader_of(prog, n, NULL, 0);
	struct devcg_error err = { 0 };
	struct devcg_policy *p = NULL;

	CHECK_INT(devcg_reader_decide(r, DEVCG_CHAR, 1, 3, DEVCG_ACC_READ, &err), -ENOTSUP);
	CHECK_MSG(strstr(err.msg, why), "\"%s\" does not say \"%s\"", err.msg, why);
	CHECK_INT(devcg_reader_policy(r, &p, &err), -ENOTSUP);
	CHECK(!p);
	devcg_reader_free(r);
}

TEST(reader_calls_a_program_with_an_unknown_helper_unreadable)
{
	const struct bpf_insn prog[] = { CALL(BPF_FUNC_get_prandom_u32), RET(1) };

	check_unreadable(prog, N(prog), "calls a helper the reader does not know");
}

TEST(reader_calls_a_program_that_loops_past_the_bound_unreadable)
{
	const struct bpf_insn prog[] = { MOV64_IMM(0, 1), JA(-1), EXIT() };

	check_unreadable(prog, N(prog), "runs more than 1000000 instructions");
}

TEST(reader_calls_a_program_whose_decision_depends_on_a_helper_unreadable)
{
	const struct bpf_insn prog[] = { CALL(BPF_FUNC_ktime_get_ns), ALU64_IMM(BPF_AND, 0, 1), EXIT() };

	check_unreadable(prog, N(prog), "depends on what a helper returns");
}

TEST(reader_calls_a_program_that_reads_the_stack_it_never_wrote_unreadable)
{
	const struct bpf_insn prog[] = { LDX(BPF_DW, 0, 10, -8), EXIT() };

	check_unreadable(prog, N(prog), "reads the stack where it wrote nothing");
}

TEST(reader_calls_an_unknown_opcode_unreadable)
{
	const struct bpf_insn prog[] = { I(BPF_LD | BPF_ABS | BPF_W, 0, 0, 0, 0), RET(1) };

	check_unreadable(prog, N(prog), "a load the reader does not know");
}

/* A helper whose result cannot change the decision (the time, written to
 * the stack and never read) is run as a no-op */
TEST(reader_runs_a_helper_that_cannot_change_the_decision)
{
	const struct bpf_insn prog[] = {
		CALL(BPF_FUNC_ktime_get_ns), STX(BPF_DW, 10, 0, -8), CALL(BPF_FUNC_get_current_pid_tgid), RET(1),
	};
	struct devcg_reader *r = reader_of(prog, N(prog), NULL, 0);

	CHECK_INT(decide(r, 'c', 1, 3, DEVCG_ACC_READ), 1);
	devcg_reader_free(r);
}

TEST(reader_refuses_rules_for_a_range_no_devices_list_can_say)
{
	const struct bpf_insn prog[] = { LDX(BPF_W, 2, 1, 4), JMP_IMM(BPF_JGT, 2, 10, 2), RET(1), RET(0) };
	struct devcg_reader *r = reader_of(prog, N(prog), NULL, 0);
	struct devcg_error err = { 0 };
	struct devcg_policy *p = NULL;

	CHECK_INT(decide(r, 'c', 10, 3, DEVCG_ACC_READ), 1);
	CHECK_INT(decide(r, 'c', 11, 3, DEVCG_ACC_READ), 0);
	CHECK_INT(devcg_reader_policy(r, &p, &err), -ENOTSUP);
	CHECK(strstr(err.msg, "no devices list can say"));
	devcg_reader_free(r);
}

/* ---- devcg's own program, as program.c writes it ---------------------- */

struct value_map {
	const struct devcg_policy_value *v;
	size_t size;
};

static int value_lookup(void *ctx, const void *key, void *value)
{
	const struct value_map *m = ctx;
	uint32_t k;

	memcpy(&k, key, 4);
	if (k)
		return -ENOENT;
	memcpy(value, m->v, m->size);
	return 0;
}

static int zero_lookup(void *ctx, const void *key, void *value)
{
	(void)ctx;
	(void)key;
	memset(value, 0, 8);
	return 0;
}

static uint64_t seed = 0x9e3779b97f4a7c15ull;

static uint32_t rnd32(void)
{
	seed ^= seed << 13;
	seed ^= seed >> 7;
	seed ^= seed << 17;
	return (uint32_t)seed;
}

static void devcg_program_differential(bool audit)
{
	const int fds[3] = { 3, 4, 5 };
	unsigned int round;

	for (round = 0; round < 40; round++) {
		struct devcg_policy *p = devcg_policy_new(), *back = NULL;
		struct devcg_policy_value *v;
		struct devcg_table table;
		struct bpf_insn *insn;
		size_t size, cnt, k, n = 1 + rnd32() % 8;
		struct devcg_reader *r;
		struct devcg_error err = { 0 };
		struct value_map vm;
		struct devcg_reader_map maps[3];
		uint32_t majors[8], minors[8];

		CHECK(p);
		if (rnd32() % 2) {
			struct devcg_rule deny_all = { .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL, .access = 7,
						       .major = DEVCG_ANY, .minor = DEVCG_ANY };

			CHECK(!devcg_policy_apply(p, &deny_all, NULL));
		}
		for (k = 0; k < n; k++) {
			struct devcg_rule rule = { .verb = (uint8_t)(1 + rnd32() % 2), .type = (uint8_t)(1 + rnd32() % 2),
						   .access = (uint8_t)(1 + rnd32() % 7),
						   .major = rnd32() % 4 ? rnd32() % 300 : DEVCG_ANY,
						   .minor = rnd32() % 4 ? rnd32() % 300 : DEVCG_ANY };

			majors[k] = rule.major == DEVCG_ANY ? 1 : rule.major;
			minors[k] = rule.minor == DEVCG_ANY ? 2 : rule.minor;
			CHECK(!devcg_policy_apply(p, &rule, NULL));
		}
		CHECK(!devcg_filter_value(p, audit, &v, &size, &table));
		CHECK(!devcg_program_build(v, &table, audit, fds, &insn, &cnt));
		vm = (struct value_map){ v, size };
		maps[0] = (struct devcg_reader_map){ .id = 3, .type = BPF_MAP_TYPE_ARRAY, .key_size = 4,
						     .value_size = (uint32_t)size, .max_entries = 1,
						     .lookup = value_lookup, .ctx = &vm };
		maps[1] = (struct devcg_reader_map){ .id = 4, .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096 };
		maps[2] = (struct devcg_reader_map){ .id = 5, .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8,
						     .max_entries = 1, .lookup = zero_lookup };
		CHECK_MSG(!devcg_reader_from_insns(insn, cnt, DEVCG_READER_RAW, maps, audit ? 3 : 1, NULL, &r, &err),
			  "%s", err.msg);
		for (k = 0; k < 200; k++) {
			uint8_t type = (uint8_t)(1 + rnd32() % 2), access = (uint8_t)(1 + rnd32() % 7);
			uint32_t major = k < n ? majors[k] : rnd32() % 300, minor = k < n ? minors[k] : rnd32() % 300;
			int want = devcg_policy_check(p, type, major, minor, access, NULL, NULL);
			int got = devcg_reader_decide(r, type, major, minor, access, &err);

			CHECK_MSG(got == want, "%c %u:%u access %u: reader %d, policy %d (%s)", type == 1 ? 'b' : 'c',
				  major, minor, access, got, want, got < 0 ? err.msg : "");
		}
		devcg_reader_add_constants(r, p);
		CHECK_MSG(!devcg_reader_policy(r, &back, &err), "%s", err.msg);
		for (k = 0; k < 400; k++) {
			uint8_t type = (uint8_t)(1 + rnd32() % 2), access = (uint8_t)(1 + rnd32() % 7);
			uint32_t major = k % 2 ? majors[k % n] : rnd32() % 300, minor = k % 3 ? minors[k % n] : rnd32() % 300;

			if (access == 3 || access == 5 || access == 7)
				access = DEVCG_ACC_READ | DEVCG_ACC_WRITE;
			CHECK_MSG(devcg_policy_check(back, type, major, minor, access, NULL, NULL) ==
					  devcg_policy_check(p, type, major, minor, access, NULL, NULL),
				  "rules read back differ at %c %u:%u access %u", type == 1 ? 'b' : 'c', major, minor,
				  access);
		}
		devcg_policy_free(back);
		devcg_reader_free(r);
		free(insn);
		free(v);
		devcg_policy_free(p);
	}
}

TEST(reader_decides_devcgs_own_program_as_its_policy_and_reads_it_back)
{
	devcg_program_differential(false);
}

TEST(reader_decides_devcgs_own_audit_program_as_its_policy_and_reads_it_back)
{
	devcg_program_differential(true);
}

/* What two policies allow together: each request the kernel asks is
 * allowed by the result exactly when both allow it (checked over every
 * number either names and numbers neither does), and the result is no
 * longer than the list expected. */
static void intersect_is(const char *a_text, const char *b_text, const char *want_text)
{
	struct devcg_policy *a = POLICY_OF(a_text), *b = POLICY_OF(b_text), *want = POLICY_OF(want_text), *got;
	const struct devcg_policy *both[2] = { a, b };
	static const uint32_t nums[] = { 0, 1, 3, 5, 7, 9, 10, 136, 4095 };
	struct devcg_error err = { 0 };
	size_t i, j, t, k;

	CHECK_MSG(!devcg_policy_intersect(both, 2, &got, &err), "%s", err.msg);
	for (t = 1; t <= 2; t++)
		for (i = 0; i < 9; i++)
			for (j = 0; j < 9; j++)
				for (k = 1; k <= 7; k++) {
					/* the kernel asks m alone (mknod), or r, w, rw (open) */
					if (k != DEVCG_ACC_MKNOD && k != DEVCG_ACC_READ && k != DEVCG_ACC_WRITE &&
					    k != (DEVCG_ACC_READ | DEVCG_ACC_WRITE))
						continue;
					int ab = devcg_policy_check(a, (uint8_t)t, nums[i], nums[j], (uint8_t)k, NULL, NULL) &&
						 devcg_policy_check(b, (uint8_t)t, nums[i], nums[j], (uint8_t)k, NULL, NULL);

					CHECK_MSG(devcg_policy_check(got, (uint8_t)t, nums[i], nums[j], (uint8_t)k, NULL, NULL) == ab,
						  "%c %u:%u access %zu", t == 1 ? 'b' : 'c', nums[i], nums[j], k);
				}
	CHECK_MSG(devcg_policy_count(got) <= devcg_policy_count(want), "%zu exceptions, not at most %zu",
		  devcg_policy_count(got), devcg_policy_count(want));
	devcg_policy_free(got);
	devcg_policy_free(want);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

TEST(intersection_of_two_allow_lists_keeps_what_both_allow)
{
	intersect_is("deny a\nallow c *:* m\nallow b *:* m\nallow c 1:3 rwm\nallow c 1:5 rwm\nallow c 1:7 rwm\nallow c 5:* rw\nallow c 10:3 rw\n",
		     "deny a\nallow c *:* m\nallow b *:* m\nallow c 1:3 rwm\nallow c 1:5 rw\nallow c 5:* rwm\nallow c 7:5 rw\nallow c 10:5 r\nallow b 7:3 r\n",
		     "deny a\nallow c *:* m\nallow b *:* m\nallow c 1:3 rwm\nallow c 1:5 rwm\nallow c 5:* rw\n");
}

TEST(intersection_of_two_deny_lists_refuses_what_either_refuses)
{
	intersect_is("allow a\ndeny c 10:229 rwm\ndeny b *:* w\n", "allow a\ndeny c 1:9 w\n",
		     "allow a\ndeny c 10:229 rwm\ndeny b *:* w\ndeny c 1:9 w\n");
}

/* Control: a hole cut in a range no list says (c 5:* but 5:1) is refused
 * as such, not widened nor narrowed. */
TEST(intersection_no_devices_list_says_is_refused)
{
	struct devcg_policy *a = POLICY_OF("deny a\nallow c 5:* rwm\n"), *b = POLICY_OF("allow a\ndeny c 5:1 rwm\n"), *got = NULL;
	const struct devcg_policy *both[2] = { a, b };
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_policy_intersect(both, 2, &got, &err), -ENOTSUP);
	CHECK(got == NULL);
	CHECK_MSG(strstr(err.msg, "no devices list can"), "%s", err.msg);
	devcg_policy_free(a);
	devcg_policy_free(b);
}

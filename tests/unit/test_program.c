// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The filter's instructions (user/lib/filter/program.c), run here by the
 * library's reader of any device program (user/lib/live/progread.c), on every
 * kind of request,
 * against devcg_policy_check(): the kernel tests prove the same on real
 * devices, this proves it for requests no device on the test machine
 * makes (every type, shape, access and table size), without a kernel.
 * Also the facts the program is written for: no branch without audit, and
 * a usual container policy within one page of verifier data.
 */
#include "testutil.h"
#include "internal.h"
#include "crafted.h"
#include "live/progread.h"

#include <sys/random.h>
#include <linux/bpf.h>

#define POLICY_FD 3
#define RING_FD 4
#define LOST_FD 5

/* xorshift: the same numbers on every run */
static uint64_t rng = 0x2545f4914f6cdd1dULL;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

/* What a run sees besides the program: the audit variant's ring record and
 * loss count, handed out by the helpers below (the rest -- the context,
 * the stack, the policy map's value, every load and store checked -- is
 * the library's reader, user/lib/live/progread.c, which runs any device
 * program the same way). */
struct machine {
	struct devcg_reader *reader;
	struct devcg_audit_event ev;
	bool ring_full, reserved, submitted;
	uint64_t lost;
	int bad; /* a helper called as the program must not */
};

/* The helpers the audit variant calls, as the kernel's behave */
static bool helper(void *ctx, int32_t id, const uint64_t r[11], uint64_t *ret)
{
	struct machine *m = ctx;

	*ret = 0;
	switch (id) {
	case BPF_FUNC_ringbuf_reserve:
		if (r[1] != devcg_reader_map_handle(m->reader, RING_FD) || r[2] != sizeof(m->ev) || m->ring_full ||
		    m->reserved)
			return true;
		m->reserved = true;
		memset(&m->ev, 0xa5, sizeof(m->ev)); /* what the ring held before */
		*ret = (uint64_t)(uintptr_t)&m->ev;
		return true;
	case BPF_FUNC_map_lookup_elem: {
		uint32_t key;

		if (r[1] != devcg_reader_map_handle(m->reader, LOST_FD))
			break;
		memcpy(&key, (const void *)(uintptr_t)r[2], sizeof(key));
		*ret = key == 0 ? (uint64_t)(uintptr_t)&m->lost : 0;
		return true;
	}
	case BPF_FUNC_get_current_pid_tgid:
		*ret = (uint64_t)4242 << 32 | 4243;
		return true;
	case BPF_FUNC_ktime_get_ns:
		*ret = 77;
		return true;
	case BPF_FUNC_get_current_cgroup_id:
		*ret = 99;
		return true;
	case BPF_FUNC_get_current_comm:
		if (r[1] != (uint64_t)(uintptr_t)m->ev.comm || r[2] != sizeof(m->ev.comm))
			m->bad = 1;
		else
			snprintf(m->ev.comm, sizeof(m->ev.comm), "reader");
		return true;
	case BPF_FUNC_ringbuf_submit:
		m->bad |= r[1] != (uint64_t)(uintptr_t)&m->ev || !m->reserved || m->submitted;
		m->submitted = true;
		return true;
	default:
		break;
	}
	m->bad = 1;
	return true;
}

/* The program's verdict, or -1 for what the reader refused (an
 * instruction it does not know, a load or store outside what the program
 * may touch) or a record reserved and never submitted. */
static int run(struct machine *m, uint8_t type, uint32_t major, uint32_t minor, uint8_t access)
{
	struct devcg_reader_env env = { .helper = helper, .ctx = m, .nmem = 2 };
	int verdict, ret;

	env.mem[0].p = &m->ev;
	env.mem[0].len = m->reserved || !m->ring_full ? sizeof(m->ev) : 0;
	env.mem[1].p = &m->lost;
	env.mem[1].len = sizeof(m->lost);
	ret = devcg_reader_run_env(m->reader, type, major, minor, access, &env, &verdict);
	if (ret)
		return -1;
	return m->reserved && !m->submitted ? -1 : verdict;
}

/* The policy map's one value, for the reader */
static int value_lookup(void *ctx, const void *key, void *value);

struct built {
	bool audit, ring_full;
	struct devcg_policy_value *v;
	size_t size, cnt;
	struct devcg_table table;
	struct bpf_insn *insn;
	struct devcg_reader *reader;
};

static int value_lookup(void *ctx, const void *key, void *value)
{
	const struct built *b = ctx;
	uint32_t k;

	memcpy(&k, key, sizeof(k));
	if (k)
		return -ENOENT;
	memcpy(value, b->v, b->size);
	return 0;
}

static void build(const struct devcg_policy *p, bool audit, struct built *b)
{
	const int fds[3] = { POLICY_FD, RING_FD, LOST_FD };

	struct devcg_table again;

	b->audit = audit;
	b->ring_full = false;
	CHECK(!devcg_filter_value(p, audit, &b->v, &b->size, &b->table));
	/* what the table alone says of itself is what was noted filling it */
	CHECK(!devcg_table_of(b->v, &again));
	CHECK(!memcmp(&again, &b->table, sizeof(again)));
	CHECK(!devcg_program_build(b->v, &b->table, audit, fds, &b->insn, &b->cnt));
	b->reader = NULL;
}

/* A reader of B's instructions as they are now (a control changes them
 * after build()). */
static void read_built(struct built *b)
{
	devcg_reader_free(b->reader);
	{
		const struct devcg_reader_map maps[3] = {
			{ .id = POLICY_FD, .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = (uint32_t)b->size,
			  .max_entries = 1, .lookup = value_lookup, .ctx = b },
			{ .id = RING_FD, .type = BPF_MAP_TYPE_RINGBUF, .max_entries = 4096 },
			{ .id = LOST_FD, .type = BPF_MAP_TYPE_ARRAY, .key_size = 4, .value_size = 8, .max_entries = 1 },
		};
		struct devcg_error err = { 0 };

		CHECK_MSG(!devcg_reader_from_insns(b->insn, b->cnt, DEVCG_READER_RAW, maps, b->audit ? 3 : 1, NULL,
						   &b->reader, &err),
			  "%s", err.msg);
	}
}

static void unbuild(struct built *b)
{
	devcg_reader_free(b->reader);
	free(b->v);
	free(b->insn);
}

static size_t jumps(const struct built *b)
{
	size_t i, n = 0;

	for (i = 0; i < b->cnt; i++)
		n += BPF_CLASS(b->insn[i].code) == BPF_JMP && b->insn[i].code != (BPF_JMP | BPF_EXIT);
	return n;
}

/* A request's verdict by the program and by the model; 0 when they agree.
 * The audit variant must report each denial as the model decides it (the
 * exception that decided, or the default), or count it as lost when its
 * ring is full (RING_FULL), and report nothing else. */
static int differs(struct built *b, const struct devcg_policy *p, uint8_t type, uint32_t major, uint32_t minor,
		   uint8_t access)
{
	struct machine m = { .reader = b->reader, .ring_full = b->ring_full };
	struct devcg_exception decider;
	bool decided = false;
	int want, got, wrong;

	got = run(&m, type, major, minor, access);
	want = devcg_policy_check(p, type, major, minor, access, &decider, &decided);
	CHECK_MSG(!m.bad && got >= 0, "the program read or wrote outside what it may, or used an "
		  "instruction the interpreter does not know, for %c %u:%u access %u", type == 2 ? 'c' : 'b',
		  major, minor, access);
	wrong = got != want;
	if (!b->audit)
		return wrong;
	/* a denial is reported, or counted lost; an allowed request is not */
	wrong |= (want == 0) != (m.submitted || m.lost == 1) || m.lost > 1 || (m.lost && !b->ring_full);
	if (m.submitted)
		wrong |= m.ev.pid != 4242 || m.ev.tid != 4243 || m.ev.ts_ns != 77 || m.ev.cgroup_id != 99 ||
			 m.ev.type != type || m.ev.major != major || m.ev.minor != minor || m.ev.access != access ||
			 strcmp(m.ev.comm, "reader") || m.ev.decided != decided ||
			 (decided ? m.ev.decider.type != decider.type || m.ev.decider.major != decider.major ||
					    m.ev.decider.minor != decider.minor ||
					    m.ev.decider_access != decider.access
				  : m.ev.decider.type || m.ev.decider.major || m.ev.decider.minor ||
					    m.ev.decider_access);
	return wrong;
}

/* Requests at every STRIDEth exception (and its numbers one off), and at
 * random. */
static size_t disagreements_every(struct built *b, const struct devcg_policy *p, size_t n, size_t stride,
				  size_t *asked)
{
	struct devcg_exception *ex = calloc(n ? n : 1, sizeof(*ex));
	size_t i, bad = 0;
	uint8_t a, t;

	CHECK(ex);
	read_built(b);
	devcg_policy_collect(p, ex);
	for (i = 0; i < n + 64; i = i >= n ? i + 1 : i + stride < n ? i + stride : n) {
		uint32_t major = i < n && ex[i].major != DEVCG_ANY ? ex[i].major : rnd() % 4096;
		uint32_t minor = i < n && ex[i].minor != DEVCG_ANY ? ex[i].minor : rnd() % (1u << 20);

		for (t = 1; t <= 2; t++)
			for (a = 0; a <= 7; a++) {
				bad += differs(b, p, t, major, minor, a);
				bad += differs(b, p, t, major & 0xfff, (minor + 1) & 0xfffff, a);
				bad += differs(b, p, t, (major + 1) & 0xfff, minor, a);
				*asked += 3;
			}
	}
	free(ex);
	return bad;
}

/* Requests at every exception (and its numbers one off), and at random. */
static size_t disagreements(struct built *b, const struct devcg_policy *p, size_t n, size_t *asked)
{
	return disagreements_every(b, p, n, 1, asked);
}

/* N random exceptions of the shapes SHAPES (bit 0 exact, 1 minor '*',
 * 2 major '*', 3 both) on a default of DEFAULT_ALLOW. */
static struct devcg_policy *random_policy(size_t n, bool default_allow, unsigned int shapes)
{
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_rule r = { .verb = default_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY, .type = DEVCG_ALL,
				.access = DEVCG_ACC_ALL, .major = DEVCG_ANY, .minor = DEVCG_ANY };
	size_t tries = 0;

	CHECK(p && !devcg_policy_apply(p, &r, NULL));
	while (devcg_policy_count(p) < n && tries++ < 20 * n) {
		unsigned int shape = rnd() % 4;

		if (!(shapes & (1u << shape)))
			continue;
		r = (struct devcg_rule){ .verb = default_allow ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW,
					 .type = rnd() % 2 ? DEVCG_CHAR : DEVCG_BLOCK, .access = (uint8_t)(rnd() % 7 + 1),
					 .major = shape & 2 ? DEVCG_ANY : rnd() % 300,
					 .minor = shape & 1 ? DEVCG_ANY : rnd() % 300 };
		CHECK(!devcg_policy_apply(p, &r, NULL));
	}
	return p;
}

UTEST(the_filter_program_decides_every_request_as_the_model_for_every_shape_default_and_table_size)
{
	const size_t sizes[] = { 0, 1, 3, 10, 40, 100, 300, 3000 };
	size_t s, asked = 0, programs = 0, slots_read_over_one = 0;
	unsigned int shapes;
	int d;

	for (s = 0; s < sizeof(sizes) / sizeof(*sizes); s++)
		for (d = 0; d < 2; d++)
			for (shapes = 1; shapes < 16; shapes += sizes[s] > 100 ? 7 : 1) {
				struct devcg_policy *p = random_policy(sizes[s], d, shapes);
				struct built b, a;

				build(p, false, &b);
				CHECK_INT(jumps(&b), 0);
				slots_read_over_one += b.v->head.probes > 1;
				CHECK_INT(disagreements(&b, p, devcg_policy_count(p), &asked), 0);
				/* the audit variant: the same verdicts, each denial
				 * reported, or counted lost when its ring is full */
				build(p, true, &a);
				CHECK_INT(disagreements(&a, p, devcg_policy_count(p), &asked), 0);
				a.ring_full = true;
				if (sizes[s] <= 100)
					CHECK_INT(disagreements(&a, p, devcg_policy_count(p), &asked), 0);
				unbuild(&a);
				unbuild(&b);
				devcg_policy_free(p);
				programs += 2;
			}
	printf("    %zu programs, %zu requests, all as the model; %zu tables with keys away from their first slot\n",
	       programs, asked, slots_read_over_one);
	/* the largest tables cannot give every key its own first slot: the
	 * lookups that read further were run too */
	CHECK(slots_read_over_one > 0);
}

UTEST(control_a_program_with_another_hash_multiplier_is_caught)
{
	struct devcg_policy *p = random_policy(100, false, 3);
	size_t asked = 0, i, changed = 0;
	struct built b;

	build(p, false, &b);
	for (i = 0; i < b.cnt; i++)
		if (b.insn[i].code == (BPF_ALU | BPF_MUL | BPF_K)) {
			b.insn[i].imm += 2;
			changed++;
		}
	CHECK(changed > 0);
	CHECK(disagreements(&b, p, devcg_policy_count(p), &asked) > 0);
	unbuild(&b);
	devcg_policy_free(p);
}

/* The audit variant of a policy whose only exception is '*:*' once built
 * the key as (0xff01 + shape) | 4 for a char request: 0xff04 | 4 is
 * 0xff04, a block key. That program must be caught. */
UTEST(control_an_audit_program_that_looks_up_a_char_request_as_block_is_caught)
{
	struct devcg_policy *p = POLICY_OF("allow a\ndeny c *:* w\n");
	size_t asked = 0, i, changed = 0;
	struct built b;

	build(p, true, &b);
	CHECK_INT(disagreements(&b, p, devcg_policy_count(p), &asked), 0);
	for (i = 0; i < b.cnt; i++)
		if (b.insn[i].code == (BPF_ALU64 | BPF_ADD | BPF_K) && b.insn[i].dst_reg == BPF_REG_4 &&
		    b.insn[i].imm == 0xff04) {
			b.insn[i].code = BPF_ALU64 | BPF_OR | BPF_K;
			changed++;
		}
	CHECK_INT(changed, 1);
	CHECK(disagreements(&b, p, devcg_policy_count(p), &asked) > 0);
	unbuild(&b);
	devcg_policy_free(p);
}

UTEST(control_a_program_that_skips_the_access_check_is_caught)
{
	struct devcg_policy *p = random_policy(40, false, 1);
	size_t asked = 0, i;
	struct built b;

	build(p, false, &b);
	/* r6 (the requested bits, with the key's) made the key's alone */
	for (i = 0; i < b.cnt; i++)
		if (b.insn[i].code == (BPF_ALU64 | BPF_LSH | BPF_K) && b.insn[i].dst_reg == BPF_REG_6)
			b.insn[i].imm = 63;
	CHECK(disagreements(&b, p, devcg_policy_count(p), &asked) > 0);
	unbuild(&b);
	devcg_policy_free(p);
}

/* A secret of its own again for this process, as devcg draws one. */
static void draw_secret_again(void)
{
	__u32 secret;

	CHECK(getrandom(&secret, sizeof(secret), 0) == (ssize_t)sizeof(secret));
	devcg_filter_hash_secret(secret);
}

/*
 * runc's default list (and one GPU) on default deny: exact keys and minor
 * '*' keys of both types. Its program fits one page of the verifier's data
 * for each instruction (46 of 88 bytes in Linux 6.18): the next page costs
 * a load about as much as 60 instructions within a page (Performance in
 * README.md), whatever secret the process drew (its '*:*' keys take slots
 * the multiplier search must leave to them: one in 19 secrets moved a key
 * before). The audit variant branches to its report.
 */
UTEST(a_container_policy_fits_one_page_of_verifier_data_and_only_audit_branches)
{
	struct devcg_policy *p = POLICY_OF("deny a\n"
					   "allow c *:* m\nallow b *:* m\n"
					   "allow c 1:3 rwm\nallow c 1:5 rwm\nallow c 1:7 rwm\nallow c 1:8 rwm\n"
					   "allow c 1:9 rwm\nallow c 5:0 rwm\nallow c 5:1 rwm\nallow c 5:2 rwm\n"
					   "allow c 10:200 rwm\nallow c 136:* rwm\nallow c 195:* rwm\n"
					   "allow c 226:0 rw\nallow b 8:* r\n");
	struct built b, a;
	size_t asked = 0;
	__u32 s;

	for (s = 0; s < 1000; s++) {
		devcg_filter_hash_secret(s * 2654435761u);
		build(p, false, &b);
		CHECK_MSG(b.cnt <= 4096 / 88, "secret 0x%08x: %zu instructions", s * 2654435761u, b.cnt);
		unbuild(&b);
	}
	draw_secret_again();
	build(p, false, &b);
	printf("    %zu instructions, %zu exceptions (and under 1,000 other secrets)\n", b.cnt, devcg_policy_count(p));
	CHECK(b.cnt <= 4096 / 88);
	CHECK_INT(jumps(&b), 0);
	CHECK_INT(disagreements(&b, p, devcg_policy_count(p), &asked), 0);
	build(p, true, &a);
	CHECK(jumps(&a) > 0);
	unbuild(&a);
	unbuild(&b);
	devcg_policy_free(p);
}

/* Besides the keys crafted against the hash: one exception of each other
 * shape, so that the program looks up every shape (the '*:*' one only
 * with audit). */
static void other_shapes(struct devcg_policy *p)
{
	bool allow = devcg_policy_default_allow(p);
	struct devcg_rule r = { .verb = allow ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW, .type = DEVCG_CHAR,
				.access = DEVCG_ACC_READ, .major = 7, .minor = DEVCG_ANY };

	CHECK(!devcg_policy_apply(p, &r, NULL));
	r.type = DEVCG_BLOCK;
	r.major = DEVCG_ANY;
	r.minor = 7;
	CHECK(!devcg_policy_apply(p, &r, NULL));
	r.minor = DEVCG_ANY;
	r.access = DEVCG_ACC_MKNOD;
	CHECK(!devcg_policy_apply(p, &r, NULL));
}

/* The slots the lookup of the worst placed of P's exact keys read in the
 * table devcg wrote before: linear probing under the old fixed multiplier
 * in its largest table (which no larger table or multiplier replaced). */
static size_t old_longest_probe(const struct devcg_policy *p)
{
	size_t n = devcg_policy_count(p), i, longest = 0, mask = ((size_t)1 << CRAFTED_BITS) - 1, d;
	struct devcg_exception *ex = calloc(n ? n : 1, sizeof(*ex));
	uint8_t *taken = calloc(mask + 1, 1);

	CHECK(ex && taken);
	devcg_policy_collect(p, ex);
	for (i = 0; i < n; i++) {
		__u64 tag = DEVCG_TAG(ex[i].access, DEVCG_SEGMENT(ex[i].type, false, false), ex[i].major,
				      ex[i].minor);
		size_t at = (size_t)devcg_table_home(tag, CRAFTED_OLD_MULT, CRAFTED_BITS);

		CHECK(ex[i].major != DEVCG_ANY && ex[i].minor != DEVCG_ANY);
		for (d = 0; taken[(at + d) & mask]; d++)
			;
		taken[(at + d) & mask] = 1;
		longest = d + 1 > longest ? d + 1 : longest;
	}
	free(ex);
	free(taken);
	return longest;
}

/* Control: the crafted keys are what the issue found, under the table
 * devcg wrote before: every one in one run of slots, so that the lookup of
 * the last read all of them (a slot is 10 instructions and more). */
UTEST(control_keys_crafted_against_the_old_fixed_multiplier_made_one_lookup_read_every_slot)
{
	struct devcg_policy *p = crafted_policy(16385, false);
	size_t longest;

	CHECK(p);
	CHECK_INT(devcg_policy_count(p), 16385);
	longest = old_longest_probe(p);
	printf("    %zu exceptions: the old table's longest lookup read %zu slots\n", devcg_policy_count(p), longest);
	CHECK_INT(longest, 16385);
	devcg_policy_free(p);
}

/* The bounds, whatever the keys: a lookup reads at most
 * DEVCG_LOOKUP_MAX_SLOTS slots (a hash table's keys within
 * DEVCG_MAX_PROBES of their first slot), and the program is at most
 * DEVCG_PROGRAM_MAX_INSNS long. */
static void check_bounded(const struct built *b)
{
	CHECK_MSG(b->v->head.probes <= (b->table.sorted ? DEVCG_LOOKUP_MAX_SLOTS : DEVCG_MAX_PROBES),
		  "a lookup reads %u slots", b->v->head.probes);
	CHECK_MSG(!b->table.sorted || b->v->head.probes == b->v->head.bits + 1, "a search of %u slots reads %u",
		  1u << b->v->head.bits, b->v->head.probes);
	CHECK_MSG(b->cnt <= DEVCG_PROGRAM_MAX_INSNS, "%zu instructions", b->cnt);
}

UTEST(keys_crafted_against_the_old_fixed_multiplier_get_bounded_lookups_a_short_program_and_the_models_decisions)
{
	const size_t sizes[] = { 16385, 99999 };
	size_t s, asked = 0;
	int d;

	for (s = 0; s < 2; s++)
		for (d = 0; d < 2; d++) {
			struct devcg_policy *p = crafted_policy(sizes[s], d);
			size_t n, stride;
			struct built b, a;

			CHECK(p);
			other_shapes(p);
			n = devcg_policy_count(p);
			stride = n / 1500;
			build(p, false, &b);
			check_bounded(&b);
			CHECK_INT(disagreements_every(&b, p, n, stride, &asked), 0);
			build(p, true, &a);
			check_bounded(&a);
			CHECK_INT(disagreements_every(&a, p, n, stride, &asked), 0);
			printf("    %zu exceptions, default %s: %s table of %u slots, lookups of up to %u slots, "
			       "%zu instructions (%zu with audit)\n", n, d ? "allow" : "deny",
			       b.table.sorted ? "a sorted" : "a hash", 1u << b.v->head.bits, b.v->head.probes, b.cnt,
			       a.cnt);
			unbuild(&a);
			unbuild(&b);
			devcg_policy_free(p);
		}
	printf("    %zu requests, all as the model\n", asked);
}

/* Keys chosen against each multiplier devcg tries in turn (read from its
 * programs: by one who knows the process's secret) defeat them all: the table is then sorted, and a lookup is a
 * binary search of a bounded number of slots. */
UTEST(keys_crafted_against_every_multiplier_get_a_sorted_table_whose_search_decides_as_the_model)
{
	size_t asked = 0;
	int d;

	for (d = 0; d < 2; d++) {
		struct devcg_policy *p = crafted_policy(3000, d);
		struct built b, a;
		int rounds;

		CHECK(p);
		other_shapes(p);
		rounds = crafted_against_every_multiplier(p, false);
		CHECK_MSG(rounds >= 0, "devcg still hashes after 64 rounds of keys against its multipliers");
		build(p, false, &b);
		CHECK(b.table.sorted);
		check_bounded(&b);
		CHECK_INT(jumps(&b), 0);
		CHECK_INT(disagreements(&b, p, devcg_policy_count(p), &asked), 0);
		build(p, true, &a);
		CHECK(a.table.sorted);
		check_bounded(&a);
		CHECK_INT(disagreements(&a, p, devcg_policy_count(p), &asked), 0);
		a.ring_full = true;
		CHECK_INT(disagreements_every(&a, p, devcg_policy_count(p), 7, &asked), 0);
		printf("    %zu exceptions, default %s, after %d rounds against its multipliers: %u sorted slots, "
		       "lookups of %u slots, %zu instructions (%zu with audit)\n", devcg_policy_count(p),
		       d ? "allow" : "deny", rounds, 1u << b.v->head.bits, b.v->head.probes, b.cnt, a.cnt);
		unbuild(&a);
		unbuild(&b);
		devcg_policy_free(p);
	}
	printf("    %zu requests, all as the model\n", asked);
}

/* Keys chosen as anyone can choose them from devcg's source (against
 * every multiplier it tries with the secret 0) are hashed under the
 * multipliers of another secret, as each devcg process draws its own:
 * lookups of at most DEVCG_MAX_PROBES slots, decided as the model. */
UTEST(keys_crafted_against_the_multipliers_of_a_known_secret_are_hashed_under_another)
{
	static const __u32 secrets[] = { 1, 0x2545f491, 0x9e3779b9, 0xdeadbeef, 0x7fffffff, 0xffffffff };
	size_t s, asked = 0;
	int d;

	for (d = 0; d < 2; d++) {
		struct devcg_policy *p = crafted_policy(3000, d);

		CHECK(p);
		other_shapes(p);
		devcg_filter_hash_secret(0);
		CHECK(crafted_against_every_multiplier(p, false) >= 0);
		for (s = 0; s < sizeof(secrets) / sizeof(*secrets); s++) {
			struct built b;

			devcg_filter_hash_secret(secrets[s]);
			build(p, false, &b);
			CHECK_MSG(!b.table.sorted, "secret 0x%08x: sorted", secrets[s]);
			CHECK_MSG(b.v->head.probes <= DEVCG_MAX_PROBES, "secret 0x%08x: lookups of %u slots",
				  secrets[s], b.v->head.probes);
			CHECK_INT(disagreements(&b, p, devcg_policy_count(p), &asked), 0);
			unbuild(&b);
		}
		devcg_policy_free(p);
	}
	draw_secret_again();
	printf("    %zu requests, all as the model\n", asked);
}

/* Control: under the secret they were chosen against, the same keys
 * defeat every multiplier tried, and the table is sorted. */
UTEST(control_keys_crafted_against_the_multipliers_of_a_known_secret_defeat_them)
{
	struct devcg_policy *p = crafted_policy(3000, false);
	struct built b;

	CHECK(p);
	other_shapes(p);
	devcg_filter_hash_secret(0);
	CHECK(crafted_against_every_multiplier(p, false) >= 0);
	build(p, false, &b);
	CHECK(b.table.sorted);
	unbuild(&b);
	devcg_policy_free(p);
	draw_secret_again();
}

/* Control: a search that halves its range one step too soon (its first
 * step a quarter of the table, not half) is caught. */
UTEST(control_a_sorted_tables_search_that_skips_a_step_is_caught)
{
	struct devcg_policy *p = crafted_policy(3000, false);
	size_t asked = 0, i, changed = 0;
	struct built b;

	CHECK(p);
	CHECK(crafted_against_every_multiplier(p, false) >= 0);
	build(p, false, &b);
	CHECK(b.table.sorted);
	CHECK_INT(disagreements(&b, p, devcg_policy_count(p), &asked), 0);
	/* the first step: r1 <<= bits + 2 */
	for (i = 0; i < b.cnt && !changed; i++)
		if (b.insn[i].code == (BPF_ALU64 | BPF_LSH | BPF_K) && b.insn[i].dst_reg == BPF_REG_1 &&
		    b.insn[i].imm == (int)b.v->head.bits + 2) {
			b.insn[i].imm--;
			changed++;
		}
	CHECK_INT(changed, 1);
	CHECK(disagreements(&b, p, devcg_policy_count(p), &asked) > 0);
	unbuild(&b);
	devcg_policy_free(p);
}

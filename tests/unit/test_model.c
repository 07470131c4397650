// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Randomized cross-checks with fixed seeds.
 *
 * The reference model below is deliberately naive: an ordered list and
 * linear scans, transcribed from security/device_cgroup.c
 * (devcgroup_update_access, dev_exception_add, dev_exception_rm,
 * dev_exception_clean, match_exception, match_exception_partial,
 * devcgroup_legacy_check_permission) for a child of the root cgroup, where
 * the parent checks always pass. The library's hash table must decide, and
 * hold, exactly what the model does. */
#include "testutil.h"
#include "internal.h" /* devcg_policy_collect, devcg_policy_access_of */

/* ---- the model ------------------------------------------------------------- */

#define MODEL_MAX 512

struct model_ex {
	uint32_t major, minor;
	short type;
	short access;
};

struct model {
	bool default_allow; /* behavior == DEVCG_DEFAULT_ALLOW */
	struct model_ex list[MODEL_MAX];
	size_t n;
};

static void model_init(struct model *m)
{
	m->default_allow = true; /* devcgroup_online(): a child of root copies its allow */
	m->n = 0;
}

/* dev_exception_add(): OR into every exact match, else append at the tail. */
static void model_add(struct model *m, const struct model_ex *ex)
{
	bool merged = false;
	size_t i;

	for (i = 0; i < m->n; i++) {
		struct model_ex *walk = &m->list[i];

		if (walk->type != ex->type)
			continue;
		if (walk->major != ex->major)
			continue;
		if (walk->minor != ex->minor)
			continue;
		walk->access |= ex->access;
		merged = true;
	}
	if (!merged) {
		CHECK(m->n < MODEL_MAX);
		m->list[m->n++] = *ex;
	}
}

/* dev_exception_rm(): clear bits of every exact match, unlink when none are left. */
static void model_rm(struct model *m, const struct model_ex *ex)
{
	size_t i = 0;

	while (i < m->n) {
		struct model_ex *walk = &m->list[i];

		if (walk->type != ex->type || walk->major != ex->major || walk->minor != ex->minor) {
			i++;
			continue;
		}
		walk->access &= ~ex->access;
		if (!walk->access) {
			memmove(walk, walk + 1, (m->n - i - 1) * sizeof(*walk));
			m->n--;
			continue;
		}
		i++;
	}
}

/* devcgroup_update_access() for a rule already parsed. */
static void model_apply(struct model *m, const struct devcg_rule *r)
{
	struct model_ex ex = { .major = r->major, .minor = r->minor, .type = r->type,
			       .access = r->access };

	if (r->type == DEVCG_ALL) {
		m->n = 0; /* dev_exception_clean() */
		m->default_allow = r->verb == DEVCG_VERB_ALLOW;
		return;
	}
	if (r->verb == DEVCG_VERB_ALLOW) {
		if (m->default_allow)
			model_rm(m, &ex);
		else
			model_add(m, &ex);
	} else {
		if (!m->default_allow)
			model_rm(m, &ex);
		else
			model_add(m, &ex);
	}
}

static bool model_match(const struct model *m, short type, uint32_t major, uint32_t minor,
			short access)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		const struct model_ex *ex = &m->list[i];

		if ((type & DEVCG_BLOCK) && !(ex->type & DEVCG_BLOCK))
			continue;
		if ((type & DEVCG_CHAR) && !(ex->type & DEVCG_CHAR))
			continue;
		if (ex->major != ~0u && ex->major != major)
			continue;
		if (ex->minor != ~0u && ex->minor != minor)
			continue;
		if (access & ~ex->access)
			continue;
		return true;
	}
	return false;
}

static bool model_match_partial(const struct model *m, short type, uint32_t major,
				uint32_t minor, short access)
{
	size_t i;

	for (i = 0; i < m->n; i++) {
		const struct model_ex *ex = &m->list[i];

		if ((type & DEVCG_BLOCK) && !(ex->type & DEVCG_BLOCK))
			continue;
		if ((type & DEVCG_CHAR) && !(ex->type & DEVCG_CHAR))
			continue;
		if (ex->major != ~0u && major != ~0u && ex->major != major)
			continue;
		if (ex->minor != ~0u && minor != ~0u && ex->minor != minor)
			continue;
		if (!(access & ex->access))
			continue;
		return true;
	}
	return false;
}

/* devcgroup_legacy_check_permission(): 1 allowed, 0 denied. */
static int model_check(const struct model *m, short type, uint32_t major, uint32_t minor,
		       short access)
{
	if (m->default_allow)
		return !model_match_partial(m, type, major, minor, access);
	return model_match(m, type, major, minor, access);
}

/* ---- comparing the library with the model -------------------------------------- */

/* Sort key of the canonical order, written independently of the library's. */
static uint64_t canon_key(short type, uint32_t major, uint32_t minor, int part)
{
	/* char (0) before block (1); then major; then minor; ~0 is largest */
	return part == 0 ? (type == DEVCG_CHAR ? 0 : 1) : part == 1 ? major : minor;
}

static int canon_cmp(const void *pa, const void *pb)
{
	const struct model_ex *a = pa, *b = pb;
	int part;

	for (part = 0; part < 3; part++) {
		uint64_t x = canon_key(a->type, a->major, a->minor, part);
		uint64_t y = canon_key(b->type, b->major, b->minor, part);

		if (x != y)
			return x < y ? -1 : 1;
	}
	return 0;
}

static void dump(const struct devcg_policy *p, const struct model *m, const char *history)
{
	char buf[8192];
	size_t i;

	fprintf(stderr, "    rules applied:\n%s", history);
	fprintf(stderr, "    library: default %s, %s\n",
		devcg_policy_default_allow(p) ? "allow" : "deny",
		exceptions_str(p, buf, sizeof(buf)));
	fprintf(stderr, "    model:   default %s,", m->default_allow ? "allow" : "deny");
	for (i = 0; i < m->n; i++)
		fprintf(stderr, " %c %u:%u %d", m->list[i].type == DEVCG_CHAR ? 'c' : 'b',
			m->list[i].major, m->list[i].minor, m->list[i].access);
	fputc('\n', stderr);
}

/* The library's exception list is the model's, sorted canonically. */
static void compare_state(const struct devcg_policy *p, const struct model *m,
			  const char *history)
{
	struct model_ex sorted[MODEL_MAX];
	const struct devcg_exception *ex = devcg_policy_exceptions(p);
	size_t i;

	if (devcg_policy_default_allow(p) != m->default_allow || devcg_policy_count(p) != m->n) {
		dump(p, m, history);
		test_fail(__FILE__, __LINE__, "default or exception count differs from the model");
	}
	memcpy(sorted, m->list, m->n * sizeof(*sorted));
	qsort(sorted, m->n, sizeof(*sorted), canon_cmp);
	for (i = 0; i < m->n; i++)
		if (ex[i].type != sorted[i].type || ex[i].major != sorted[i].major ||
		    ex[i].minor != sorted[i].minor || ex[i].access != sorted[i].access) {
			dump(p, m, history);
			test_fail(__FILE__, __LINE__, "exception %zu differs from the model", i);
		}

	/* the internal, read-only views: collect (any order) and access_of */
	{
		struct devcg_exception got[MODEL_MAX];
		struct model_ex conv[MODEL_MAX];

		if (devcg_policy_collect(p, got) != m->n) {
			dump(p, m, history);
			test_fail(__FILE__, __LINE__, "devcg_policy_collect count differs");
		}
		for (i = 0; i < m->n; i++)
			conv[i] = (struct model_ex){ .major = got[i].major, .minor = got[i].minor,
						     .type = got[i].type, .access = got[i].access };
		qsort(conv, m->n, sizeof(*conv), canon_cmp);
		if (m->n && memcmp(conv, sorted, m->n * sizeof(*conv))) {
			dump(p, m, history);
			test_fail(__FILE__, __LINE__, "devcg_policy_collect differs from the model");
		}
		for (i = 0; i < m->n; i++) {
			struct devcg_exception key = { .type = (uint8_t)m->list[i].type,
						       .major = m->list[i].major,
						       .minor = m->list[i].minor };

			if (devcg_policy_access_of(p, &key) != m->list[i].access) {
				dump(p, m, history);
				test_fail(__FILE__, __LINE__, "devcg_policy_access_of differs for %zu", i);
			}
		}
	}
}

/* One request: the decision, and what the library says decided it. */
static void compare_probe(const struct devcg_policy *p, const struct model *m, uint8_t type,
			  uint32_t major, uint32_t minor, uint8_t access, const char *history)
{
	struct devcg_exception d;
	bool decided;
	int got = devcg_policy_check(p, type, major, minor, access, &d, &decided);
	int want = model_check(m, type, major, minor, access);

	if (got != want) {
		dump(p, m, history);
		test_fail(__FILE__, __LINE__, "%c %u:%u access %d: library says %d, model %d",
			  type == DEVCG_CHAR ? 'c' : 'b', major, minor, access, got, want);
	}
	/*
	 * An exception decides exactly when the model's matcher finds one; the
	 * one reported must match the device and, on default deny, hold every
	 * requested bit, on default allow share one.
	 */
	{
		/* the exact key of the probe: access_of is 0 unless the model lists it */
		struct devcg_exception key = { .type = type, .major = major, .minor = minor };
		uint8_t listed = 0;
		size_t i;

		for (i = 0; i < m->n; i++)
			if (m->list[i].type == type && m->list[i].major == major &&
			    m->list[i].minor == minor)
				listed = (uint8_t)m->list[i].access;
		if (devcg_policy_access_of(p, &key) != listed) {
			dump(p, m, history);
			test_fail(__FILE__, __LINE__, "devcg_policy_access_of(%c %u:%u) is %d, not %d",
				  type == DEVCG_CHAR ? 'c' : 'b', major, minor,
				  devcg_policy_access_of(p, &key), listed);
		}
	}
	if (decided != (m->default_allow ? !want : want)) {
		dump(p, m, history);
		test_fail(__FILE__, __LINE__, "decided is %d for %c %u:%u access %d", decided,
			  type == DEVCG_CHAR ? 'c' : 'b', major, minor, access);
	}
	if (decided) {
		bool ok = d.type == type && (d.major == ANY || d.major == major) &&
			  (d.minor == ANY || d.minor == minor) &&
			  (m->default_allow ? (d.access & access) != 0 : !(access & ~d.access));
		bool listed = false;
		size_t i;

		/* and it is one of the policy's exceptions, access included */
		for (i = 0; i < m->n; i++)
			listed |= m->list[i].type == d.type && m->list[i].major == d.major &&
				  m->list[i].minor == d.minor && m->list[i].access == d.access;
		if (!ok || !listed) {
			dump(p, m, history);
			test_fail(__FILE__, __LINE__, "decider %c %u:%u %d does not fit %c %u:%u %d",
				  d.type == DEVCG_CHAR ? 'c' : 'b', d.major, d.minor, d.access,
				  type == DEVCG_CHAR ? 'c' : 'b', major, minor, access);
		}
	}
}

/* Small ranges, so that keys and wildcards collide often. */
static uint32_t random_num(uint64_t *s, uint32_t range)
{
	return rng_below(s, 4) == 0 ? ANY : rng_below(s, range);
}

static struct devcg_rule random_rule(uint64_t *s, uint32_t range)
{
	struct devcg_rule r = {
		.verb = rng_below(s, 2) ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY,
		.type = rng_below(s, 2) ? DEVCG_CHAR : DEVCG_BLOCK,
		.access = (uint8_t)(1 + rng_below(s, 7)),
	};

	if (rng_below(s, 25) == 0) {
		r.type = DEVCG_ALL;
		r.access = DEVCG_ACC_ALL;
		r.major = r.minor = ANY;
		return r;
	}
	r.major = random_num(s, range);
	r.minor = random_num(s, range);
	return r;
}

static void append_history(char *history, size_t len, const struct devcg_rule *r)
{
	size_t used = strlen(history);
	char one[64];

	devcg_rule_format(r, one, sizeof(one));
	if (used + strlen(one) + 8 < len)
		snprintf(history + used, len - used, "      %s\n", one);
}

/* Run SEQS random sequences of up to MAXLEN rules over majors/minors below
 * RANGE, comparing after every rule (PROBES random requests) and fully at
 * the end of each sequence (every request in the range, plus one beyond). */
static void cross_check(uint64_t seed, int seqs, int maxlen, uint32_t range, int probes)
{
	static struct model m;
	static char history[65536];
	int s, i, k;

	for (s = 0; s < seqs; s++) {
		struct devcg_policy *p = devcg_policy_new();
		int len = 1 + (int)rng_below(&seed, (uint32_t)maxlen);
		uint32_t maj, min;

		model_init(&m);
		history[0] = '\0';
		/* half the sequences start from default deny, as most real policies do */
		if (rng_below(&seed, 2)) {
			struct devcg_rule r = { .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL,
						.access = DEVCG_ACC_ALL, .major = ANY, .minor = ANY };

			CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
			model_apply(&m, &r);
			append_history(history, sizeof(history), &r);
		}
		for (i = 0; i < len; i++) {
			struct devcg_rule r = random_rule(&seed, range);

			append_history(history, sizeof(history), &r);
			CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
			model_apply(&m, &r);
			compare_state(p, &m, history);
			for (k = 0; k < probes; k++)
				compare_probe(p, &m, rng_below(&seed, 2) ? DEVCG_CHAR : DEVCG_BLOCK,
					      rng_below(&seed, range + 1), rng_below(&seed, range + 1),
					      (uint8_t)rng_below(&seed, 8), history);
		}
		for (maj = 0; maj <= range; maj++)
			for (min = 0; min <= range; min++)
				for (k = 0; k < 16; k++)
					compare_probe(p, &m, k & 8 ? DEVCG_CHAR : DEVCG_BLOCK, maj,
						      min, (uint8_t)(k & 7), history);
		devcg_policy_free(p);
	}
}

UTEST(model_cross_check_small_ranges_collide_often)
{
	cross_check(0x5eed0001ULL, 4000, 30, 3, 8);
}

UTEST(model_cross_check_long_sequences)
{
	cross_check(0x5eed0002ULL, 300, 300, 5, 4);
}

UTEST(model_cross_check_wider_ranges_grow_the_table)
{
	cross_check(0x5eed0003ULL, 40, 400, 40, 4);
}

UTEST(model_itself_follows_the_kernel_on_known_cases)
{
	/* guard the model against drifting: the facts of test_policy.c */
	struct model m;
	struct devcg_rule r;

	model_init(&m);
	r = (struct devcg_rule){ .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL, .access = RWM,
				 .major = ANY, .minor = ANY };
	model_apply(&m, &r);
	r = (struct devcg_rule){ .verb = ALLOW, .type = DEVCG_CHAR, .access = R, .major = 1,
				 .minor = ANY };
	model_apply(&m, &r);
	r = (struct devcg_rule){ .verb = ALLOW, .type = DEVCG_CHAR, .access = W, .major = 1,
				 .minor = 9 };
	model_apply(&m, &r);
	CHECK_INT(model_check(&m, DEVCG_CHAR, 1, 9, R), 1);
	CHECK_INT(model_check(&m, DEVCG_CHAR, 1, 9, W), 1);
	CHECK_INT(model_check(&m, DEVCG_CHAR, 1, 9, R | W), 0);
	CHECK_INT(model_check(&m, DEVCG_CHAR, 1, 9, 0), 1);
	CHECK_INT(model_check(&m, DEVCG_CHAR, 2, 9, 0), 0);
	CHECK_INT(model_check(&m, DEVCG_BLOCK, 1, 9, R), 0);
	r = (struct devcg_rule){ .verb = DENY, .type = DEVCG_CHAR, .access = R, .major = 1,
				 .minor = 9 };
	model_apply(&m, &r); /* no exact match: nothing changes */
	CHECK_INT(m.n, 2);
	r.access = W;
	model_apply(&m, &r);
	CHECK_INT(m.n, 1);
}

/* ---- round trips ------------------------------------------------------------------- */

/* Build a random policy; returns it (the model tracks it for equality). */
static struct devcg_policy *random_policy(uint64_t *seed, struct model *m, uint32_t range,
					  int maxlen)
{
	struct devcg_policy *p = devcg_policy_new();
	int len = (int)rng_below(seed, (uint32_t)maxlen + 1), i;

	model_init(m);
	for (i = 0; i < len; i++) {
		struct devcg_rule r = random_rule(seed, range);

		CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
		model_apply(m, &r);
	}
	return p;
}

static bool model_equal(const struct model *a, const struct model *b)
{
	struct model_ex x[MODEL_MAX], y[MODEL_MAX];

	if (a->default_allow != b->default_allow || a->n != b->n)
		return false;
	memcpy(x, a->list, a->n * sizeof(*x));
	memcpy(y, b->list, b->n * sizeof(*y));
	qsort(x, a->n, sizeof(*x), canon_cmp);
	qsort(y, b->n, sizeof(*y), canon_cmp);
	return !memcmp(x, y, a->n * sizeof(*x));
}

UTEST(to_rules_round_trip_reproduces_an_equal_policy_randomized)
{
	uint64_t seed = 0x5eed0004ULL;
	int s;

	for (s = 0; s < 3000; s++) {
		static struct model m;
		struct devcg_policy *p = random_policy(&seed, &m, 4, 40);
		struct devcg_policy *q = devcg_policy_new();
		struct devcg_policy *from_other = random_policy(&seed, &m, 4, 10);
		struct devcg_rules *rules = NULL;
		size_t i;

		CHECK_INT(devcg_policy_to_rules(p, &rules), 0);
		/* shortest form: the reset, then one rule per exception, opposite verb */
		CHECK_INT(devcg_rules_count(rules), 1 + devcg_policy_count(p));
		CHECK_RULE(rules, 0, devcg_policy_default_allow(p) ? ALLOW : DENY, DEVCG_ALL, ANY,
			   ANY, RWM);
		for (i = 1; i < devcg_rules_count(rules); i++)
			CHECK_INT(devcg_rules_get(rules, i)->verb,
				  devcg_policy_default_allow(p) ? DENY : ALLOW);
		CHECK_INT(devcg_policy_apply_all(q, rules, NULL), 0);
		CHECK(devcg_policy_equal(p, q));
		CHECK(devcg_policy_equal(q, p));
		/* the leading reset makes the result independent of the start */
		CHECK_INT(devcg_policy_apply_all(from_other, rules, NULL), 0);
		CHECK(devcg_policy_equal(p, from_other));
		devcg_rules_free(rules);
		devcg_policy_free(from_other);
		devcg_policy_free(q);
		devcg_policy_free(p);
	}
}

UTEST(text_round_trip_of_to_rules_reproduces_an_equal_policy_randomized)
{
	uint64_t seed = 0x5eed0005ULL;
	char *text = malloc(1 << 16);
	int s;

	CHECK(text);
	for (s = 0; s < 2000; s++) {
		static struct model m;
		struct devcg_policy *p = random_policy(&seed, &m, 4, 40);
		struct devcg_rules *rules = NULL, *parsed = devcg_rules_new();
		struct devcg_policy *q = devcg_policy_new();
		size_t i, used = 0;

		CHECK_INT(devcg_policy_to_rules(p, &rules), 0);
		for (i = 0; i < devcg_rules_count(rules); i++) {
			used += (size_t)devcg_rule_format(devcg_rules_get(rules, i), text + used,
							  (1 << 16) - used);
			text[used++] = '\n';
		}
		CHECK_INT(devcg_rules_parse(parsed, text, used, "rt", NULL, NULL), 0);
		CHECK_INT(devcg_rules_count(parsed), devcg_rules_count(rules));
		for (i = 0; i < devcg_rules_count(rules); i++)
			CHECK(rule_eq(devcg_rules_get(parsed, i), devcg_rules_get(rules, i)));
		CHECK_INT(devcg_policy_apply_all(q, parsed, NULL), 0);
		CHECK(devcg_policy_equal(p, q));
		devcg_policy_free(q);
		devcg_rules_free(parsed);
		devcg_rules_free(rules);
		devcg_policy_free(p);
	}
	free(text);
}

UTEST(policy_equal_agrees_with_the_model_randomized)
{
	uint64_t seed = 0x5eed0006ULL;
	int s, same = 0;

	for (s = 0; s < 4000; s++) {
		static struct model ma, mb;
		/* tiny ranges and short sequences, so that equal pairs happen */
		struct devcg_policy *a = random_policy(&seed, &ma, 2, 6);
		struct devcg_policy *b = random_policy(&seed, &mb, 2, 6);
		bool want = model_equal(&ma, &mb);

		CHECK_INT(devcg_policy_equal(a, b), want);
		CHECK_INT(devcg_policy_equal(b, a), want);
		same += want;
		devcg_policy_free(a);
		devcg_policy_free(b);
	}
	CHECK_MSG(same > 100, "only %d equal pairs: the test does not test equality", same);
}

UTEST(policy_set_from_exceptions_reproduces_the_policy_randomized)
{
	uint64_t seed = 0x5eed0007ULL;
	int s;

	for (s = 0; s < 2000; s++) {
		static struct model m;
		struct devcg_policy *p = random_policy(&seed, &m, 4, 40);
		struct devcg_policy *q = POLICY_OF("deny c 1:1 r\n");
		size_t n = devcg_policy_count(p);
		struct devcg_exception *copy = malloc((n ? n : 1) * sizeof(*copy));
		size_t i;

		CHECK(copy);
		memcpy(copy, devcg_policy_exceptions(p), n * sizeof(*copy));
		/* any order will do: reverse it */
		for (i = 0; i < n / 2; i++) {
			struct devcg_exception t = copy[i];

			copy[i] = copy[n - 1 - i];
			copy[n - 1 - i] = t;
		}
		CHECK_INT(devcg_policy_set(q, devcg_policy_default_allow(p), copy, n, NULL), 0);
		CHECK(devcg_policy_equal(p, q));
		free(copy);
		devcg_policy_free(q);
		devcg_policy_free(p);
	}
}

/* ---- widening: devcg_policy_beyond() against every request ---------------- */

static bool allows(const struct devcg_policy *p, uint8_t type, uint32_t major, uint32_t minor, uint8_t acc)
{
	return devcg_policy_check(p, type, major, minor, acc, NULL, NULL) == 1;
}

/* Every request of numbers up to RANGE + 1 (a number no rule names decides
 * as any other such) is tried: the library must find a request that P
 * allows and no base does exactly when there is one, and name a true one. */
TEST(policy_beyond_finds_a_widening_exactly_when_a_request_shows_one)
{
	const uint32_t range = 4;
	uint64_t seed = 0x5eed0b1d;
	int found = 0, none = 0;

	for (int round = 0; round < 3000; round++) {
		struct model m;
		struct devcg_policy *b1 = random_policy(&seed, &m, range, 6);
		struct devcg_policy *b2 = random_policy(&seed, &m, range, 3);
		struct devcg_policy *p = devcg_policy_dup(b1);
		const struct devcg_policy *base[2] = { b1, b2 };
		size_t nbase = 1 + rng_below(&seed, 2);
		struct devcg_exception w;
		bool brute = false;
		int ret;

		CHECK(p);
		for (int i = 1 + (int)rng_below(&seed, 5); i > 0; i--) {
			struct devcg_rule r = random_rule(&seed, range);

			CHECK_INT(devcg_policy_apply(p, &r, NULL), 0);
		}
		for (uint8_t t = 1; t <= 2 && !brute; t++)
			for (uint32_t ma = 0; ma <= range + 1 && !brute; ma++)
				for (uint32_t mi = 0; mi <= range + 1 && !brute; mi++)
					for (uint8_t a = 1; a <= 7 && !brute; a++)
						brute = allows(p, t, ma, mi, a) && !allows(b1, t, ma, mi, a) &&
							(nbase < 2 || !allows(b2, t, ma, mi, a));
		ret = devcg_policy_beyond(p, base, nbase, &w);
		CHECK_MSG(ret == (int)brute, "round %d: beyond says %d, the requests say %d", round, ret, brute);
		if (ret) {
			CHECK(allows(p, w.type, w.major, w.minor, w.access));
			CHECK(!allows(b1, w.type, w.major, w.minor, w.access));
			CHECK(nbase < 2 || !allows(b2, w.type, w.major, w.minor, w.access));
			found++;
		} else {
			none++;
		}
		devcg_policy_free(p);
		devcg_policy_free(b1);
		devcg_policy_free(b2);
	}
	/* both answers were tried many times */
	CHECK_MSG(found > 100 && none > 100, "found %d, none %d", found, none);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A program's rules read back from its decisions (progread.c runs it): the
 * numbers it compares with split majors and minors into cells, it is run
 * on every cell and access, and the shortest exception list of either
 * default that decides every cell as it does is what
 * devcg_reader_policy() returns.
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
		reader_note_value(r, ex[i].major);
		reader_note_value(r, ex[i].minor);
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
	return reader_decide(r, type, major, minor, !major && !minor ? DEVCG_ACC_MKNOD : acc);
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

/* The shortest policy of either default that decides every cell of T as
 * it says, or NULL when none does. */
static struct devcg_policy *shortest(const struct table *t)
{
	size_t budget = (uint64_t)t->maj.n * t->min.n * 2 * NACC < 20000 ? 4096 : 64;
	struct devcg_policy *deny = candidate(t, false, &budget), *allow;

	budget = (uint64_t)t->maj.n * t->min.n * 2 * NACC < 20000 ? 4096 : 64;
	allow = candidate(t, true, &budget);
	if (deny && (!allow || devcg_policy_count(deny) <= devcg_policy_count(allow))) {
		devcg_policy_free(allow);
		return deny;
	}
	devcg_policy_free(deny);
	return allow;
}

int devcg_reader_policy(struct devcg_reader *r, struct devcg_policy **out, struct devcg_error *err)
{
	struct splits c = { 0 };
	struct table t = { 0 };
	size_t pc, k, round;
	int ret = 0;

	*out = NULL;
	if (r->devcg_policy)
		devcg_reader_add_constants(r, r->devcg_policy);
	r->recording = !r->known;
	for (pc = 0; pc < r->cnt; pc++) {
		const struct bpf_insn *i = &r->insn[pc];

		if ((BPF_CLASS(i->code) == BPF_JMP || BPF_CLASS(i->code) == BPF_JMP32) && BPF_SRC(i->code) == BPF_K &&
		    BPF_OP(i->code) != BPF_CALL && BPF_OP(i->code) != BPF_EXIT && BPF_OP(i->code) != BPF_JA)
			reader_note_value(r, (uint32_t)i->imm);
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
				reader_note_value(r, reader_load(next + w, 4));
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
	if (!ret && !(*out = shortest(&t)))
		ret = devcg_err(err, -ENOTSUP, "program %s decides what no devices list can say (a range of "
				"numbers, or r and w apart from rw)", r->name);
	cells_free(&t.maj);
	cells_free(&t.min);
	free(t.d);
	free(c.v);
	return ret;
}

/* Is REQUEST allowed by every policy of PS[0..N)? -1 when the kernel does
 * not ask it (as one_request()). */
static int all_allow(const struct devcg_policy *const *ps, size_t n, uint8_t type, uint32_t major,
		     uint32_t minor, uint8_t acc)
{
	size_t i;

	if (!devcg_request_checked(type, major, minor, acc))
		return -1;
	for (i = 0; i < n; i++)
		if (devcg_policy_check(ps[i], type, major, minor, !major && !minor ? DEVCG_ACC_MKNOD : acc, NULL,
				       NULL) != 1)
			return 0;
	return 1;
}

int devcg_policy_intersect(const struct devcg_policy *const *ps, size_t n, struct devcg_policy **out,
			   struct devcg_error *err)
{
	struct splits c = { 0 };
	struct table t = { 0 };
	size_t i, k, a, b, ti;
	int ret = 0;

	*out = NULL;
	/* each policy decides alike between the numbers of its exceptions:
	 * every cell of them all is decided alike by them together; 0 is a
	 * cell of its own (0:0 is asked m only) */
	ret = split_add(&c, 0);
	for (i = 0; i < n && !ret; i++) {
		const struct devcg_exception *ex = devcg_policy_exceptions(ps[i]);

		for (k = 0; k < devcg_policy_count(ps[i]) && !ret; k++)
			if (!(ret = split_add(&c, ex[k].major)))
				ret = split_add(&c, ex[k].minor);
	}
	split_sort(&c);
	if (ret || cells_of(&c, MAJOR_END, &t.maj) || cells_of(&c, MINOR_END, &t.min) ||
	    !(t.d = calloc(2 * t.maj.n * t.min.n, 1))) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (ti = 0; ti < 2; ti++)
		for (a = 0; a < t.maj.n; a++)
			for (b = 0; b < t.min.n; b++)
				for (k = 0; k < NACC; k++) {
					uint8_t type = ti ? DEVCG_CHAR : DEVCG_BLOCK;
					int x = all_allow(ps, n, type, t.maj.lo[a], t.min.lo[b], accesses[k]);

					if (x == -1)
						x = all_allow(ps, n, type, t.maj.lo[a + 1] - 1, t.min.lo[b + 1] - 1,
							      accesses[k]);
					if (x == 1)
						T_AT(&t, ti, a, b) |= (uint8_t)(1u << k);
				}
	if (!(*out = shortest(&t)))
		ret = devcg_err(err, -ENOTSUP, "what the %zu programs allow together is what no devices list can "
				"say (one allows a number range the other cuts a hole in)", n);
out:
	cells_free(&t.maj);
	cells_free(&t.min);
	free(t.d);
	free(c.v);
	return ret;
}

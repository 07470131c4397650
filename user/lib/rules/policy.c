// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The normalized policy and the rules that change it, following
 * security/device_cgroup.c: devcgroup_update_access() for writes,
 * devcgroup_legacy_check_permission() for decisions.
 */
#include "rules/rules.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { SLOT_EMPTY, SLOT_USED, SLOT_DEAD };

struct slot {
	struct devcg_exception ex;
	uint8_t state;
};

struct devcg_policy {
	bool default_allow;
	struct slot *tab;
	size_t cap;  /* power of two, or 0 */
	size_t fill; /* used + dead slots */
	size_t live; /* used slots */
	/* canonical order, rebuilt on demand after a change */
	struct devcg_exception *sorted;
	bool sorted_valid;
};

static size_t key_hash(const struct devcg_exception *ex)
{
	uint64_t h = ((uint64_t)ex->major << 32 | ex->minor) ^ ((uint64_t)ex->type << 61);

	/* splitmix64 finalizer: spreads nearby majors/minors over the table */
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (size_t)h;
}

static bool same_key(const struct devcg_exception *a, const struct devcg_exception *b)
{
	return a->type == b->type && a->major == b->major && a->minor == b->minor;
}

static struct slot *find(const struct devcg_policy *p, const struct devcg_exception *key)
{
	size_t i;

	if (!p->cap)
		return NULL;
	for (i = key_hash(key) & (p->cap - 1);; i = (i + 1) & (p->cap - 1)) {
		struct slot *s = &p->tab[i];

		if (s->state == SLOT_EMPTY)
			return NULL;
		if (s->state == SLOT_USED && same_key(&s->ex, key))
			return s;
	}
}

static int grow(struct devcg_policy *p)
{
	size_t cap = p->cap ? p->cap : 16, i;
	struct slot *old = p->tab, *tab;

	/* keep the load (live and dead slots) at or below one half */
	while (cap / 2 < p->live + 1)
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (i = 0; i < p->cap; i++) {
		size_t j;

		if (old[i].state != SLOT_USED)
			continue;
		for (j = key_hash(&old[i].ex) & (cap - 1); tab[j].state; j = (j + 1) & (cap - 1))
			;
		tab[j] = old[i];
	}
	free(old);
	p->tab = tab;
	p->cap = cap;
	p->fill = p->live;
	return 0;
}

static void changed(struct devcg_policy *p)
{
	p->sorted_valid = false;
}

/* dev_exception_add(): merge access into an exact match, else append. */
static int exception_add(struct devcg_policy *p, const struct devcg_exception *ex)
{
	struct slot *s = find(p, ex);
	size_t i;

	changed(p);
	if (s) {
		s->ex.access |= ex->access;
		return 0;
	}
	if ((p->fill + 1) * 2 > p->cap && grow(p))
		return -ENOMEM;
	for (i = key_hash(ex) & (p->cap - 1); p->tab[i].state == SLOT_USED; i = (i + 1) & (p->cap - 1))
		;
	if (p->tab[i].state == SLOT_EMPTY)
		p->fill++;
	p->tab[i].ex = *ex;
	p->tab[i].state = SLOT_USED;
	p->live++;
	return 0;
}

/* dev_exception_rm(): trim access of an exact match, drop it when none is left. */
static void exception_rm(struct devcg_policy *p, const struct devcg_exception *ex)
{
	struct slot *s = find(p, ex);

	if (!s)
		return;
	changed(p);
	s->ex.access &= ~ex->access;
	if (!s->ex.access) {
		s->state = SLOT_DEAD;
		p->live--;
	}
}

static void exception_clean(struct devcg_policy *p)
{
	changed(p);
	if (p->cap)
		memset(p->tab, 0, p->cap * sizeof(*p->tab));
	p->fill = p->live = 0;
}

struct devcg_policy *devcg_policy_new(void)
{
	struct devcg_policy *p = calloc(1, sizeof(*p));

	if (p)
		p->default_allow = true; /* a new child of the root cgroup */
	return p;
}

struct devcg_policy *devcg_policy_dup(const struct devcg_policy *src)
{
	struct devcg_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->default_allow = src->default_allow;
	if (src->cap) {
		p->tab = malloc(src->cap * sizeof(*p->tab));
		if (!p->tab) {
			free(p);
			return NULL;
		}
		memcpy(p->tab, src->tab, src->cap * sizeof(*p->tab));
	}
	p->cap = src->cap;
	p->fill = src->fill;
	p->live = src->live;
	return p;
}

void devcg_policy_free(struct devcg_policy *p)
{
	if (!p)
		return;
	free(p->tab);
	free(p->sorted);
	free(p);
}

int devcg_policy_apply(struct devcg_policy *p, const struct devcg_rule *r, struct devcg_error *err)
{
	struct devcg_exception ex = {
		.type = r->type, .access = r->access, .major = r->major, .minor = r->minor,
	};
	bool allow = r->verb == DEVCG_VERB_ALLOW;

	if (r->verb != DEVCG_VERB_ALLOW && r->verb != DEVCG_VERB_DENY)
		return devcg_err(err, -EINVAL, "rule has no verb");
	if (r->type == DEVCG_ALL) {
		/* 'a': clean the list and set the default, whatever follows */
		exception_clean(p);
		p->default_allow = allow;
		return 0;
	}
	if ((r->type != DEVCG_BLOCK && r->type != DEVCG_CHAR) || !r->access ||
	    (r->access & ~DEVCG_ACC_ALL))
		return devcg_err(err, -EINVAL, "rule is malformed");
	/*
	 * A write that agrees with the default removes a matching exception
	 * (silently, for compatibility, says device_cgroup.c); one that
	 * disagrees adds or merges one.
	 */
	if (allow == p->default_allow) {
		exception_rm(p, &ex);
		return 0;
	}
	if (exception_add(p, &ex))
		return devcg_err(err, -ENOMEM, "out of memory");
	return 0;
}

int devcg_policy_apply_all(struct devcg_policy *p, const struct devcg_rules *rules,
			   struct devcg_error *err)
{
	struct devcg_policy *work = devcg_policy_dup(p);
	size_t i, n = devcg_rules_count(rules);
	int ret = 0;

	/* apply to a copy, so that a failure leaves P as it was */
	if (!work)
		return devcg_err(err, -ENOMEM, "out of memory");
	for (i = 0; i < n && !ret; i++)
		ret = devcg_policy_apply(work, devcg_rules_get(rules, i), err);
	if (!ret) {
		struct devcg_policy tmp = *p;

		*p = *work;
		*work = tmp;
		p->sorted_valid = false;
	}
	devcg_policy_free(work);
	return ret;
}

int devcg_policy_set(struct devcg_policy *p, bool default_allow,
		     const struct devcg_exception *exceptions, size_t count, struct devcg_error *err)
{
	struct devcg_policy *work = devcg_policy_new();
	size_t i;
	int ret = 0;

	if (!work)
		return devcg_err(err, -ENOMEM, "out of memory");
	work->default_allow = default_allow;
	for (i = 0; i < count && !ret; i++) {
		const struct devcg_exception *ex = &exceptions[i];

		if ((ex->type != DEVCG_BLOCK && ex->type != DEVCG_CHAR) || !ex->access ||
		    (ex->access & ~DEVCG_ACC_ALL))
			ret = devcg_err(err, -EINVAL, "exception %zu is malformed", i + 1);
		else if (find(work, ex))
			ret = devcg_err(err, -EINVAL, "exception %zu is a duplicate", i + 1);
		else if (exception_add(work, ex))
			ret = devcg_err(err, -ENOMEM, "out of memory");
	}
	if (!ret) {
		struct devcg_policy tmp = *p;

		*p = *work;
		*work = tmp;
		p->sorted_valid = false;
	}
	devcg_policy_free(work);
	return ret;
}

bool devcg_policy_default_allow(const struct devcg_policy *p)
{
	return p->default_allow;
}

size_t devcg_policy_count(const struct devcg_policy *p)
{
	return p->live;
}

uint8_t devcg_policy_access_of(const struct devcg_policy *p, const struct devcg_exception *key)
{
	const struct slot *s = find(p, key);

	return s ? s->ex.access : 0;
}

size_t devcg_policy_collect(const struct devcg_policy *p, struct devcg_exception *out)
{
	size_t i, n = 0;

	/* without a branch on the slot (half used, at random: mispredicted):
	 * each is copied to OUT[n] and kept when used, until all are */
	for (i = 0; i < p->cap && n < p->live; i++) {
		out[n] = p->tab[i].ex;
		n += p->tab[i].state == SLOT_USED;
	}
	return n;
}

static int cmp_exception(const void *a, const void *b)
{
	return devcg_exception_cmp(a, b);
}

const struct devcg_exception *devcg_policy_exceptions(const struct devcg_policy *cp)
{
	struct devcg_policy *p = (struct devcg_policy *)cp; /* the cache only */
	struct devcg_exception *v;
	size_t n;

	if (p->sorted_valid)
		return p->sorted;
	v = realloc(p->sorted, (p->live ? p->live : 1) * sizeof(*v));
	if (!v)
		return NULL;
	n = devcg_policy_collect(p, v);
	qsort(v, n, sizeof(*v), cmp_exception);
	p->sorted = v;
	p->sorted_valid = true;
	return v;
}

bool devcg_policy_equal(const struct devcg_policy *a, const struct devcg_policy *b)
{
	size_t i;

	if (a->default_allow != b->default_allow || a->live != b->live)
		return false;
	for (i = 0; i < a->cap; i++) {
		const struct slot *s = &a->tab[i], *t;

		if (s->state != SLOT_USED)
			continue;
		t = find(b, &s->ex);
		if (!t || t->ex.access != s->ex.access)
			return false;
	}
	return true;
}

int devcg_request_checked(uint8_t type, uint32_t major, uint32_t minor, uint8_t access)
{
	return major || minor || (type == DEVCG_BLOCK && (access & DEVCG_ACC_MKNOD));
}

int devcg_policy_check(const struct devcg_policy *p, uint8_t type, uint32_t major, uint32_t minor,
		       uint8_t access, struct devcg_exception *decider, bool *decided)
{
	/*
	 * An exception applies to a device when its major and minor are equal
	 * or '*'; exceptions are unique per key, so these four are all the
	 * candidates, most specific first.
	 */
	const struct devcg_exception keys[4] = {
		{ .type = type, .major = major, .minor = minor },
		{ .type = type, .major = major, .minor = DEVCG_ANY },
		{ .type = type, .major = DEVCG_ANY, .minor = minor },
		{ .type = type, .major = DEVCG_ANY, .minor = DEVCG_ANY },
	};
	size_t i;

	if ((type != DEVCG_BLOCK && type != DEVCG_CHAR) || major == DEVCG_ANY ||
	    minor == DEVCG_ANY || (access & ~DEVCG_ACC_ALL))
		return -EINVAL;
	if (decided)
		*decided = false;
	for (i = 0; i < 4; i++) {
		const struct slot *s = find(p, &keys[i]);
		bool hit;

		if (!s)
			continue;
		/*
		 * Default allow: match_exception_partial(), any shared access bit
		 * denies. Default deny: match_exception(), one exception must
		 * hold every requested bit (so access 0 matches any).
		 */
		hit = p->default_allow ? (s->ex.access & access) != 0
				       : (access & ~s->ex.access) == 0;
		if (hit) {
			if (decider)
				*decider = s->ex;
			if (decided)
				*decided = true;
			return !p->default_allow;
		}
	}
	return p->default_allow;
}

int devcg_policy_to_rules(const struct devcg_policy *p, struct devcg_rules **out)
{
	const struct devcg_exception *ex = devcg_policy_exceptions(p);
	struct devcg_rules *rules = devcg_rules_new();
	uint8_t verb = p->default_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
	struct devcg_rule r = {
		.verb = verb, .type = DEVCG_ALL, .access = DEVCG_ACC_ALL,
		.major = DEVCG_ANY, .minor = DEVCG_ANY,
	};
	size_t i;
	int ret;

	if (!rules || !ex) {
		devcg_rules_free(rules);
		return -ENOMEM;
	}
	ret = devcg_rules_add(rules, &r, NULL);
	for (i = 0; i < p->live && !ret; i++) {
		r = (struct devcg_rule){
			.verb = verb == DEVCG_VERB_ALLOW ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW,
			.type = ex[i].type, .access = ex[i].access,
			.major = ex[i].major, .minor = ex[i].minor,
		};
		ret = devcg_rules_add(rules, &r, NULL);
	}
	if (ret) {
		devcg_rules_free(rules);
		return ret;
	}
	*out = rules;
	return 0;
}

/*
 * Does P allow a request that none of BASE allows? A request's decision
 * by a policy depends only on the access of the four keys it looks up
 * (devcg_policy_check()): (type, major, minor), (type, major, '*'),
 * (type, '*', minor) and (type, '*', '*'). So, per type, every exact key of
 * every policy is tried as a device, and the other devices fall into
 * classes: majors alike when their (major, '*') keys have the same access
 * in every policy (a major no such key names is like any other), minors
 * alike by their ('*', minor) keys; one device that is no exact key of any
 * policy stands for each pair of classes. The work is bounded by the keys
 * and the pairs of classes, whatever numbers the keys hold.
 */
struct beyond {
	const struct devcg_policy *const *pol; /* [0] is P, then the bases */
	size_t n;
	struct devcg_exception *witness;
};

struct numsig {
	uint64_t sig;
	uint32_t num;
};

static int cmp_numsig(const void *a, const void *b)
{
	const struct numsig *x = a, *y = b;

	if (x->sig != y->sig)
		return x->sig < y->sig ? -1 : 1;
	return x->num < y->num ? -1 : x->num > y->num;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool device_beyond(const struct beyond *b, uint8_t type, uint32_t major, uint32_t minor)
{
	/* r, w, m first: the witness names the simplest access */
	static const uint8_t acc[] = { 2, 4, 1, 6, 3, 5, 7 };

	for (size_t a = 0; a < sizeof(acc); a++) {
		bool base = false;

		if (devcg_policy_check(b->pol[0], type, major, minor, acc[a], NULL, NULL) != 1)
			continue;
		for (size_t i = 1; i < b->n && !base; i++)
			base = devcg_policy_check(b->pol[i], type, major, minor, acc[a], NULL, NULL) == 1;
		if (!base) {
			*b->witness = (struct devcg_exception){ .type = type, .access = acc[a],
								.major = major, .minor = minor };
			return true;
		}
	}
	return false;
}

static bool exact_key(const struct beyond *b, uint8_t type, uint32_t major, uint32_t minor)
{
	const struct devcg_exception key = { .type = type, .major = major, .minor = minor };

	for (size_t i = 0; i < b->n; i++)
		if (devcg_policy_access_of(b->pol[i], &key))
			return true;
	return false;
}

static uint64_t key_sig(const struct beyond *b, uint8_t type, uint32_t major, uint32_t minor)
{
	const struct devcg_exception key = { .type = type, .major = major, .minor = minor };
	uint64_t sig = 0;

	for (size_t i = 0; i < b->n; i++)
		sig = sig << 3 | devcg_policy_access_of(b->pol[i], &key);
	return sig;
}

/* The smallest number from V up that is none of USED (sorted, N). */
static uint32_t fresh_number(const uint32_t *used, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (used[i] == v)
			v++;
	return v;
}

/* The classes of NUMS (N, each with its sig): sorted, and a fresh number
 * from FROM up (sig 0) added at the end; returns the new count. */
static size_t classes(struct numsig *nums, size_t n, uint32_t *used, size_t nused, uint32_t from)
{
	size_t k = 0;

	qsort(nums, n, sizeof(*nums), cmp_numsig);
	qsort(used, nused, sizeof(*used), cmp_u32);
	for (size_t i = 0; i < n; i++)
		if (!k || nums[i].num != nums[k - 1].num || nums[i].sig != nums[k - 1].sig)
			nums[k++] = nums[i];
	nums[k++] = (struct numsig){ .sig = 0, .num = fresh_number(used, nused, from) };
	return k;
}

static bool type_beyond(const struct beyond *b, uint8_t type, const struct devcg_exception *keys, size_t nkeys,
			struct numsig *majors, struct numsig *minors, uint32_t *used)
{
	size_t nmaj = 0, nmin = 0, nused = 0, i0, j0;

	for (size_t k = 0; k < nkeys; k++) {
		const struct devcg_exception *e = &keys[k];

		if (e->type != type)
			continue;
		if (e->major != DEVCG_ANY && e->minor != DEVCG_ANY && device_beyond(b, type, e->major, e->minor))
			return true;
		if (e->major != DEVCG_ANY && e->minor == DEVCG_ANY)
			majors[nmaj++] = (struct numsig){ key_sig(b, type, e->major, DEVCG_ANY), e->major };
		if (e->major == DEVCG_ANY && e->minor != DEVCG_ANY)
			minors[nmin++] = (struct numsig){ key_sig(b, type, DEVCG_ANY, e->minor), e->minor };
	}
	for (size_t k = 0; k < nkeys; k++)
		if (keys[k].type == type && keys[k].major != DEVCG_ANY)
			used[nused++] = keys[k].major;
	nmaj = classes(majors, nmaj, used, nused, 1); /* major 0: no device */
	nused = 0;
	for (size_t k = 0; k < nkeys; k++)
		if (keys[k].type == type && keys[k].minor != DEVCG_ANY)
			used[nused++] = keys[k].minor;
	nmin = classes(minors, nmin, used, nused, 0);

	for (i0 = 0; i0 < nmaj; ) {
		size_t i1 = i0;

		while (i1 < nmaj && majors[i1].sig == majors[i0].sig)
			i1++;
		for (j0 = 0; j0 < nmin; ) {
			size_t j1 = j0;
			bool found = false;

			while (j1 < nmin && minors[j1].sig == minors[j0].sig)
				j1++;
			for (size_t i = i0; i < i1 && !found; i++)
				for (size_t j = j0; j < j1 && !found; j++) {
					if (exact_key(b, type, majors[i].num, minors[j].num))
						continue; /* tried above */
					found = true;
					if (device_beyond(b, type, majors[i].num, minors[j].num))
						return true;
				}
			j0 = j1;
		}
		i0 = i1;
	}
	return false;
}

int devcg_policy_beyond(const struct devcg_policy *p, const struct devcg_policy *const *base, size_t nbase,
			struct devcg_exception *witness)
{
	const struct devcg_policy *pol[8];
	struct beyond b = { .pol = pol, .n = nbase + 1, .witness = witness };
	struct devcg_exception *keys;
	struct numsig *majors, *minors;
	uint32_t *used;
	size_t nkeys = 0, total = 0;
	int ret = 0;

	if (nbase + 1 > sizeof(pol) / sizeof(pol[0]))
		return -EINVAL;
	pol[0] = p;
	for (size_t i = 0; i < nbase; i++)
		pol[i + 1] = base[i];
	for (size_t i = 0; i < b.n; i++)
		total += pol[i]->live;
	keys = malloc((total + 1) * sizeof(*keys));
	majors = malloc((total + 1) * sizeof(*majors));
	minors = malloc((total + 1) * sizeof(*minors));
	used = malloc((total + 1) * sizeof(*used));
	if (!keys || !majors || !minors || !used) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < b.n; i++)
		nkeys += devcg_policy_collect(pol[i], keys + nkeys);
	ret = type_beyond(&b, DEVCG_CHAR, keys, nkeys, majors, minors, used) ||
	      type_beyond(&b, DEVCG_BLOCK, keys, nkeys, majors, minors, used);
out:
	free(keys);
	free(majors);
	free(minors);
	free(used);
	return ret;
}

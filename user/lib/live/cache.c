// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Shared programs: a bounded cache of loaded filter versions, so that a
 * long-lived caller that installs a policy already loaded attaches the
 * same program (BPF_F_REPLACE of the program that runs now, as any swap)
 * instead of loading another: no verifier run, no new map.
 *
 * The key is the policy in its canonical form and the variant: the
 * default, every exception (type, access, major, minor) sorted, and the
 * audit bit; the filter's compiled bytes (its policy map value and its
 * instructions) are a function of these, so rules in another order that
 * make the same policy share one program. Keys are compared in full
 * (memcmp); the hash only skips unequal keys faster. On a hit nothing is
 * computed from the policy beyond its key.
 *
 * Sharing keeps every fact of a swap for each cgroup: the kernel keeps one
 * list of programs per cgroup, and BPF_F_REPLACE, detach and the
 * compare-and-swap name an entry of that cgroup's list only, so a swap,
 * a reset or a rollback on one cgroup never touches another that runs the
 * same program. The policy map is frozen before the load (filter.c) and
 * nothing writes it afterwards: a shared map is read back, never changed.
 * Audit versions are not cached: their ring follows one cgroup across its
 * swaps (devcg_filter_load()'s AUDIT_FROM), which a program shared by
 * several cgroups cannot do.
 *
 * The cache holds one fd of each program; evicting an entry (the least
 * recently used, past the bound) or freeing the cache closes that fd
 * alone: a program stays loaded while a cgroup runs it. A swap uses the
 * cached fd itself, pinned (devcg_cache_pin()), instead of a copy of its
 * own: an entry evicted meanwhile keeps its fd open until the last pin of
 * it goes (devcg_cache_unpin()), so the fd a swap names is always the
 * program it took.
 */
#include "live/live.h"
#include "devcg_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct devcg_cache_entry {
	uint64_t hash;
	void *key;
	size_t len;
	int prog_fd;
	uint32_t prog_id;
	uint64_t used; /* the tick of its last use: the least is evicted */
	unsigned int refs; /* the cache's (while listed) and each pin's */
};

/* The key (devcg_cache_key()): the ABI version, the default, the audit
 * bit and the count, then each exception in canonical order as type,
 * access, major and minor (10 bytes, no padding). */
#define KEY_HEAD 16
#define KEY_EXCEPTION 10

struct devcg_cache {
	pthread_mutex_t lock;
	unsigned int max;
	unsigned int n;
	uint64_t tick, hits, misses, evictions;
	struct devcg_cache_entry **entries;
};

/* Only to skip keys that differ (equal keys are then memcmp'd): eight
 * bytes at a time, each mixed in by a multiply (as FNV, on words). */
static uint64_t key_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull ^ len, w;

	for (; len >= 8; len -= 8, p += 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; len; len--)
		h = (h ^ *p++) * 0x100000001b3ull;
	return h;
}

struct devcg_cache *devcg_cache_new(unsigned int max_entries)
{
	struct devcg_cache *c;

	if (!max_entries || max_entries > DEVCG_CACHE_MAX) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->entries = calloc(max_entries, sizeof(*c->entries));
	if (!c->entries) {
		free(c);
		return NULL;
	}
	c->max = max_entries;
	pthread_mutex_init(&c->lock, NULL);
	return c;
}

/* Drop one reference of E: the last closes its fd. */
static void entry_unref(struct devcg_cache_entry *e)
{
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL))
		return;
	free(e->key);
	close(e->prog_fd);
	free(e);
}

void devcg_cache_unpin(struct devcg_cache_entry *e)
{
	if (e)
		entry_unref(e);
}

void devcg_cache_free(struct devcg_cache *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		entry_unref(c->entries[i]);
	pthread_mutex_destroy(&c->lock);
	free(c->entries);
	free(c);
}

int devcg_cache_stats(struct devcg_cache *c, struct devcg_cache_stats *s)
{
	struct devcg_cache_stats out = { .sz = sizeof(out) };

	if (!c || !s || s->sz < offsetof(struct devcg_cache_stats, entries))
		return -EINVAL;
	pthread_mutex_lock(&c->lock);
	out.entries = c->n;
	out.max_entries = c->max;
	out.hits = c->hits;
	out.misses = c->misses;
	out.evictions = c->evictions;
	pthread_mutex_unlock(&c->lock);
	out.sz = s->sz < sizeof(out) ? s->sz : sizeof(out);
	memcpy(s, &out, out.sz);
	return 0;
}

/* The entry of KEY, or NULL; under the lock. */
static struct devcg_cache_entry *lookup(struct devcg_cache *c, const void *key, size_t len, uint64_t h)
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		struct devcg_cache_entry *e = c->entries[i];

		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return e;
	}
	return NULL;
}

struct devcg_cache_entry *devcg_cache_find(struct devcg_cache *c, const void *key, size_t len, int *prog_fd,
					   uint32_t *prog_id)
{
	uint64_t h = key_hash(key, len);
	struct devcg_cache_entry *e;

	pthread_mutex_lock(&c->lock);
	e = lookup(c, key, len, h);
	if (e) {
		/* pinned: an eviction by another thread meanwhile leaves its
		 * fd open for this swap */
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
		*prog_fd = e->prog_fd;
		*prog_id = e->prog_id;
		e->used = ++c->tick;
		c->hits++;
	} else {
		c->misses++;
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

struct devcg_cache_entry *devcg_cache_pin(struct devcg_cache *c, uint32_t prog_id, int *prog_fd)
{
	struct devcg_cache_entry *e = NULL;
	unsigned int i;

	pthread_mutex_lock(&c->lock);
	for (i = 0; i < c->n && !e; i++)
		if (c->entries[i]->prog_id == prog_id)
			e = c->entries[i];
	if (e) {
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
		*prog_fd = e->prog_fd;
	}
	pthread_mutex_unlock(&c->lock);
	return e;
}

int devcg_cache_put(struct devcg_cache *c, const void *key, size_t len, int prog_fd, uint32_t prog_id)
{
	uint64_t h = key_hash(key, len);
	struct devcg_cache_entry *e = calloc(1, sizeof(*e)), *old = NULL;
	unsigned int i, at;
	void *copy = e ? malloc(len ? len : 1) : NULL;
	int fd = copy ? fcntl(prog_fd, F_DUPFD_CLOEXEC, 3) : -1;

	if (fd < 0) {
		int ret = copy ? -errno : -ENOMEM;

		free(copy);
		free(e);
		return ret;
	}
	memcpy(copy, key, len);
	*e = (struct devcg_cache_entry){ .hash = h, .key = copy, .len = len, .prog_fd = fd, .prog_id = prog_id,
					 .refs = 1 };
	pthread_mutex_lock(&c->lock);
	if (lookup(c, key, len, h)) {
		/* another thread loaded the same meanwhile: keep the first */
		pthread_mutex_unlock(&c->lock);
		entry_unref(e);
		return 0;
	}
	if (c->n < c->max) {
		at = c->n++;
	} else {
		for (at = 0, i = 1; i < c->n; i++)
			if (c->entries[i]->used < c->entries[at]->used)
				at = i;
		old = c->entries[at];
		c->evictions++;
	}
	e->used = ++c->tick;
	c->entries[at] = e;
	pthread_mutex_unlock(&c->lock);
	if (old)
		entry_unref(old);
	return 0;
}

/* An exception as the key sorts it: char before block (as
 * devcg_exception_cmp()), then major and minor as one number. */
struct sort_item {
	uint64_t at; /* major << 32 | minor */
	uint8_t block, type, access;
};

static inline bool item_less(const struct sort_item *a, const struct sort_item *b)
{
	return a->block != b->block ? a->block < b->block : a->at < b->at;
}

/* Sort the N items of V (TMP: room for N more): a merge sort, bottom up,
 * with the comparison inline (qsort()'s call per comparison and copy per
 * move were most of a cache hit's own time). Never more than n log n. */
static struct sort_item *sort_items(struct sort_item *v, struct sort_item *tmp, size_t n)
{
	size_t width, i, a, b, end, mid, k;

	for (width = 1; width < n; width *= 2) {
		for (i = 0; i < n; i += 2 * width) {
			mid = i + width < n ? i + width : n;
			end = i + 2 * width < n ? i + 2 * width : n;
			for (a = i, b = mid, k = i; k < end; k++)
				tmp[k] = a < mid && (b >= end || !item_less(&v[b], &v[a])) ? v[a++] : v[b++];
		}
		struct sort_item *t = v;

		v = tmp;
		tmp = t;
	}
	return v;
}

/* Sorted, to make the key of one policy whatever order its exceptions
 * were added in (devcg_policy_collect() gives its table's order). */
void *devcg_cache_key(const struct devcg_policy *policy, bool audit, size_t *len)
{
	size_t n = devcg_policy_count(policy), i;
	struct devcg_exception *ex = malloc((n ? n : 1) * sizeof(*ex));
	struct sort_item *items = malloc((n ? n : 1) * 2 * sizeof(*items)), *sorted;
	unsigned char *key = malloc(KEY_HEAD + n * KEY_EXCEPTION), *at;
	__u32 head[4] = { DEVCG_ABI_VERSION, devcg_policy_default_allow(policy), audit, (__u32)n };

	if (!ex || !items || !key) {
		free(ex);
		free(items);
		free(key);
		return NULL;
	}
	n = devcg_policy_collect(policy, ex);
	for (i = 0; i < n; i++)
		items[i] = (struct sort_item){ .at = (uint64_t)ex[i].major << 32 | ex[i].minor,
					       .block = ex[i].type != DEVCG_CHAR, .type = ex[i].type,
					       .access = ex[i].access };
	sorted = sort_items(items, items + n, n);
	memcpy(key, head, sizeof(head));
	for (i = 0, at = key + KEY_HEAD; i < n; i++, at += KEY_EXCEPTION) {
		uint32_t major = (uint32_t)(sorted[i].at >> 32), minor = (uint32_t)sorted[i].at;

		at[0] = sorted[i].type;
		at[1] = sorted[i].access;
		memcpy(at + 2, &major, 4);
		memcpy(at + 6, &minor, 4);
	}
	free(ex);
	free(items);
	*len = KEY_HEAD + n * KEY_EXCEPTION;
	return key;
}

int devcg_cache_load(struct devcg_cache *c, const struct devcg_policy *policy, const char *fail_at,
		     struct devcg_filter_version *out, struct devcg_cache_entry **pin, struct devcg_error *err)
{
	size_t len;
	void *key;
	int ret;

	*pin = NULL;
	memset(out, 0, sizeof(*out));
	out->prog_fd = -1;
	if (devcg_policy_count(policy) > DEVCG_MAX_RULES)
		return devcg_err(err, -E2BIG, "the policy has %zu exceptions; at most %d fit",
				 devcg_policy_count(policy), DEVCG_MAX_RULES);
	key = devcg_cache_key(policy, false, &len);
	if (!key)
		return devcg_err(err, -ENOMEM, "out of memory");
	*pin = devcg_cache_find(c, key, len, &out->prog_fd, &out->prog_id);
	if (*pin) {
		ret = 0;
	} else {
		ret = devcg_filter_load(policy, false, -1, fail_at, out, err);
		/* a cache that cannot keep it (no memory, no fd) still leaves
		 * the version loaded for this swap */
		if (!ret)
			devcg_cache_put(c, key, len, out->prog_fd, out->prog_id);
	}
	free(key);
	return ret;
}

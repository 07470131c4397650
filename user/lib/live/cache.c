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
 * alone: a program stays loaded while a cgroup runs it.
 */
#include "live/live.h"
#include "devcg_abi.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct cache_entry {
	uint64_t hash;
	void *key;
	size_t len;
	int prog_fd;
	uint32_t prog_id;
	uint64_t used; /* the tick of its last use: the least is evicted */
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
	struct cache_entry *entries;
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

static void entry_drop(struct cache_entry *e)
{
	free(e->key);
	close(e->prog_fd);
	memset(e, 0, sizeof(*e));
	e->prog_fd = -1;
}

void devcg_cache_free(struct devcg_cache *c)
{
	unsigned int i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++)
		entry_drop(&c->entries[i]);
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
static struct cache_entry *lookup(struct devcg_cache *c, const void *key, size_t len, uint64_t h)
{
	unsigned int i;

	for (i = 0; i < c->n; i++) {
		struct cache_entry *e = &c->entries[i];

		if (e->hash == h && e->len == len && !memcmp(e->key, key, len))
			return e;
	}
	return NULL;
}

int devcg_cache_find(struct devcg_cache *c, const void *key, size_t len, int *prog_fd, uint32_t *prog_id)
{
	uint64_t h = key_hash(key, len);
	struct cache_entry *e;
	int ret = 0;

	pthread_mutex_lock(&c->lock);
	e = lookup(c, key, len, h);
	if (e) {
		/* a new fd of its own: an eviction by another thread meanwhile
		 * closes only the cache's */
		*prog_fd = fcntl(e->prog_fd, F_DUPFD_CLOEXEC, 3);
		ret = *prog_fd < 0 ? -errno : 1;
		if (ret == 1) {
			*prog_id = e->prog_id;
			e->used = ++c->tick;
			c->hits++;
		}
	} else {
		c->misses++;
	}
	pthread_mutex_unlock(&c->lock);
	return ret;
}

int devcg_cache_put(struct devcg_cache *c, const void *key, size_t len, int prog_fd, uint32_t prog_id)
{
	uint64_t h = key_hash(key, len);
	struct cache_entry *e;
	unsigned int i;
	void *copy = malloc(len ? len : 1);
	int fd = copy ? fcntl(prog_fd, F_DUPFD_CLOEXEC, 3) : -1;

	if (fd < 0) {
		int ret = copy ? -errno : -ENOMEM;

		free(copy);
		return ret;
	}
	memcpy(copy, key, len);
	pthread_mutex_lock(&c->lock);
	e = lookup(c, key, len, h);
	if (e) {
		/* another thread loaded the same meanwhile: keep the first */
		pthread_mutex_unlock(&c->lock);
		free(copy);
		close(fd);
		return 0;
	}
	if (c->n < c->max) {
		e = &c->entries[c->n++];
	} else {
		for (e = &c->entries[0], i = 1; i < c->n; i++)
			if (c->entries[i].used < e->used)
				e = &c->entries[i];
		entry_drop(e);
		c->evictions++;
	}
	*e = (struct cache_entry){ .hash = h, .key = copy, .len = len, .prog_fd = fd, .prog_id = prog_id,
				   .used = ++c->tick };
	pthread_mutex_unlock(&c->lock);
	return 0;
}

/* Sorted, to make the key of one policy whatever order its exceptions
 * were added in (devcg_policy_collect() gives its table's order). */
static int cmp_exception(const void *a, const void *b)
{
	return devcg_exception_cmp(a, b);
}

void *devcg_cache_key(const struct devcg_policy *policy, bool audit, size_t *len)
{
	size_t n = devcg_policy_count(policy), i;
	struct devcg_exception *ex = malloc((n ? n : 1) * sizeof(*ex));
	unsigned char *key = malloc(KEY_HEAD + n * KEY_EXCEPTION), *at;
	__u32 head[4] = { DEVCG_ABI_VERSION, devcg_policy_default_allow(policy), audit, (__u32)n };

	if (!ex || !key) {
		free(ex);
		free(key);
		return NULL;
	}
	n = devcg_policy_collect(policy, ex);
	qsort(ex, n, sizeof(*ex), cmp_exception);
	memcpy(key, head, sizeof(head));
	for (i = 0, at = key + KEY_HEAD; i < n; i++, at += KEY_EXCEPTION) {
		at[0] = ex[i].type;
		at[1] = ex[i].access;
		memcpy(at + 2, &ex[i].major, 4);
		memcpy(at + 6, &ex[i].minor, 4);
	}
	free(ex);
	*len = KEY_HEAD + n * KEY_EXCEPTION;
	return key;
}

int devcg_cache_load(struct devcg_cache *c, const struct devcg_policy *policy, const char *fail_at,
		     struct devcg_filter_version *out, bool *hit, struct devcg_error *err)
{
	size_t len;
	void *key;
	int ret;

	*hit = false;
	memset(out, 0, sizeof(*out));
	out->prog_fd = -1;
	if (devcg_policy_count(policy) > DEVCG_MAX_RULES)
		return devcg_err(err, -E2BIG, "the policy has %zu exceptions; at most %d fit",
				 devcg_policy_count(policy), DEVCG_MAX_RULES);
	key = devcg_cache_key(policy, false, &len);
	if (!key)
		return devcg_err(err, -ENOMEM, "out of memory");
	ret = devcg_cache_find(c, key, len, &out->prog_fd, &out->prog_id);
	if (ret == 1) {
		*hit = true;
		ret = 0;
	} else if (ret < 0) {
		ret = devcg_err(err, ret, "cannot take the cached filter: %s", strerror(-ret));
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

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Shared programs: a bounded cache of loaded filter versions, so that a
 * long-lived caller that installs a policy already loaded attaches the
 * same program (BPF_F_REPLACE of the program that runs now, as any swap)
 * instead of loading another: no verifier run, no new map.
 *
 * The key is everything the program is written from (filter.h's plan):
 * the policy map's value, byte for byte (default, exceptions, the table
 * as filled, the audit bit), and how its table was filled. Keys are
 * compared in full (memcmp); the hash only skips unequal keys faster.
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

struct devcg_cache {
	pthread_mutex_t lock;
	unsigned int max;
	unsigned int n;
	uint64_t tick, hits, misses, evictions;
	struct cache_entry *entries;
};

/* FNV-1a: only to skip keys that differ (equal keys are then memcmp'd) */
static uint64_t key_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;

	while (len--)
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

/* The key of a plan: how the table was filled (written field by field:
 * no padding), then the value. */
struct key_head {
	__u64 mult;
	__u32 sorted, audit;
	__u32 probes[4];
	__s32 any_access[2];
};

void *devcg_cache_key(const struct devcg_filter_plan *plan, size_t *len)
{
	struct key_head h;
	char *key = malloc(sizeof(h) + plan->size);

	if (!key)
		return NULL;
	memset(&h, 0, sizeof(h));
	h.mult = plan->table.mult;
	h.sorted = plan->table.sorted;
	h.audit = plan->audit;
	memcpy(h.probes, plan->table.probes, sizeof(h.probes));
	h.any_access[0] = plan->table.any_access[0];
	h.any_access[1] = plan->table.any_access[1];
	memcpy(key, &h, sizeof(h));
	memcpy(key + sizeof(h), plan->value, plan->size);
	*len = sizeof(h) + plan->size;
	return key;
}

int devcg_cache_load(struct devcg_cache *c, const struct devcg_policy *policy, const char *fail_at,
		     struct devcg_filter_version *out, bool *hit, struct devcg_error *err)
{
	struct devcg_filter_plan plan;
	size_t len;
	void *key;
	int ret;

	*hit = false;
	memset(out, 0, sizeof(*out));
	out->prog_fd = -1;
	ret = devcg_filter_plan(policy, false, &plan, err);
	if (ret)
		return ret;
	key = devcg_cache_key(&plan, &len);
	if (!key) {
		devcg_filter_plan_free(&plan);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	ret = devcg_cache_find(c, key, len, &out->prog_fd, &out->prog_id);
	if (ret == 1) {
		*hit = true;
		ret = 0;
	} else if (ret < 0) {
		ret = devcg_err(err, ret, "cannot take the cached filter: %s", strerror(-ret));
	} else {
		ret = devcg_filter_load_plan(&plan, -1, fail_at, out, err);
		/* a cache that cannot keep it (no memory, no fd) still leaves
		 * the version loaded for this swap */
		if (!ret)
			devcg_cache_put(c, key, len, out->prog_fd, out->prog_id);
	}
	free(key);
	devcg_filter_plan_free(&plan);
	return ret;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The table of a filter version's value: the hash multiplier searched for
 * (mixed from the process's secret), the keys placed by Robin Hood
 * probing, or sorted where no multiplier fits; devcg_table_of() finds how
 * a table was filled from the value alone. And the memory a version's
 * value and scratch are taken from, kept by each thread (filter.c fills
 * the rest of the value, loads and reads it back).
 */
#include "filter/filter.h"
#include "devcg_abi.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <malloc.h>
#include <sys/random.h>

#define TABLE_BITS_MAX 18 /* 2 MiB of slots */

/*
 * Where the K tags TAGS go in a table of 1 << BITS slots under MULT,
 * filled by linear probing, Robin Hood (in each run of slots the keys lie
 * in the order of their first slots, which makes the longest lookup as
 * short as any placement can), in a byte a slot of AT: its low four bits
 * count the keys whose first slot it is, its high four bits the keys of
 * the slots before it that lie at it or after it (so the keys of first
 * slot s lie that carry to carry + count - 1 slots past s). Returns the
 * longest lookup, or more than DEVCG_MAX_PROBES when one is longer (then
 * AT is of no use): counted, not placed, so that a try that fails touches
 * no table. Two sweeps: the first starts with no carry (its carries are at
 * most the true ones) and ends with the true carry into slot 0, with which
 * the second starts, until a slot carries none (from there both sweeps
 * agree). Counts and carries of a table that fits are at most
 * DEVCG_MAX_PROBES: four bits each.
 */
static unsigned int spread(const __u64 *tags, size_t k, unsigned int bits, __u64 mult, uint8_t *at)
{
	size_t n = (size_t)1 << bits, i, c = 0, most = 0;
	int pass;

	memset(at, 0, n);
	for (i = 0; i < k; i++)
		if (++at[devcg_table_home(tags[i], mult, bits)] > DEVCG_MAX_PROBES)
			return DEVCG_MAX_PROBES + 1;
	/* without a branch on the counts (random: mispredicted) */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n && (!pass || c); i++) {
			size_t count = at[i] & 0xf, m;

			at[i] = (uint8_t)(count | (c < 15 ? c : 15) << 4);
			c += count;
			m = count ? c : 0;
			most = m > most ? m : most;
			c -= c != 0;
		}
	return most > DEVCG_MAX_PROBES ? DEVCG_MAX_PROBES + 1 : (unsigned int)most;
}

/*
 * The memory of one version's value and scratch, kept by each thread for
 * its next version: fresh pages cost a fault each (a microsecond or more,
 * about 20 in this project's VM), and a value of 10,000 rules is 64 of
 * them, as many for its scratch. Up to KEEP_SLOTS blocks of 4 KiB to
 * KEEP_MAX bytes each (1 MiB: policies of up to about 30,000 rules),
 * freed when the thread ends.
 */
#define KEEP_SLOTS 4
#define KEEP_MAX (1024 * 1024)

struct kept {
	void *block[KEEP_SLOTS];
};

static pthread_key_t kept_key;
static pthread_once_t kept_once = PTHREAD_ONCE_INIT;
static bool kept_ok;

static void kept_free(void *arg)
{
	struct kept *k = arg;
	int i;

	for (i = 0; i < KEEP_SLOTS; i++)
		free(k->block[i]);
	free(k);
}

static void kept_init(void)
{
	kept_ok = !pthread_key_create(&kept_key, kept_free);
}

static struct kept *kept_mine(bool make)
{
	struct kept *k;

	pthread_once(&kept_once, kept_init);
	if (!kept_ok)
		return NULL;
	k = pthread_getspecific(kept_key);
	if (!k && make && (k = calloc(1, sizeof(*k))) && pthread_setspecific(kept_key, k)) {
		free(k);
		k = NULL;
	}
	return k;
}

/* SIZE bytes: a kept block that holds them (the smallest), or malloc()'s */
void *devcg_filter_take(size_t size)
{
	struct kept *k = kept_mine(false);
	size_t best = (size_t)-1;
	int i, at = -1;

	if (size < 4096)
		return malloc(size ? size : 1);
	for (i = 0; k && i < KEEP_SLOTS; i++) {
		size_t u = k->block[i] ? malloc_usable_size(k->block[i]) : 0;

		if (u >= size && u < best) {
			best = u;
			at = i;
		}
	}
	if (at >= 0) {
		void *p = k->block[at];

		k->block[at] = NULL;
		return p;
	}
	return malloc(size ? size : 1);
}

/* Give P (from devcg_filter_take() or malloc()) back: kept when there is
 * room, the smallest kept block freed for a larger one */
void devcg_filter_give(void *p)
{
	struct kept *k;
	size_t size = p ? malloc_usable_size(p) : 0, least = (size_t)-1;
	int i, at = -1;

	if (!p || size < 4096 || size > KEEP_MAX || !(k = kept_mine(true))) {
		free(p);
		return;
	}
	for (i = 0; i < KEEP_SLOTS; i++) {
		size_t u = k->block[i] ? malloc_usable_size(k->block[i]) : 0;

		if (u < least) {
			least = u;
			at = i;
		}
	}
	if (least >= size) {
		free(p);
		return;
	}
	free(k->block[at]);
	k->block[at] = p;
}

/* Sort the K tags TAGS by key (their low 40 bits), a byte at a time; 0
 * or -ENOMEM. */
static int sort_by_key(__u64 *tags, size_t k)
{
	__u64 *tmp = malloc((k ? k : 1) * sizeof(*tmp)), *from = tags, *to = tmp, *t;
	size_t count[256], i, sum;
	int shift;

	if (!tmp)
		return -ENOMEM;
	for (shift = 0; shift < 40; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < k; i++)
			count[(from[i] >> shift) & 0xff]++;
		for (i = 0, sum = 0; i < 256; i++) {
			size_t c = count[i];

			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < k; i++)
			to[count[(from[i] >> shift) & 0xff]++] = from[i];
		t = from;
		from = to;
		to = t;
	}
	if (from != tags)
		memcpy(tags, from, k * sizeof(*tags));
	free(tmp);
	return 0;
}

/*
 * The process's secret: the hash multipliers are mixed from it, so that
 * keys cannot be chosen against them (the author of a container chooses
 * its rules) by anyone who reads this source, and a sorted table is bad
 * luck, not an attack. Drawn at first use; devcg_filter_hash_secret()
 * sets it (tests, the bench).
 */
static pthread_once_t secret_once = PTHREAD_ONCE_INIT;
static __u32 secret;

static void draw_secret(void)
{
	struct timespec ts;
	__u32 s;

	if (getrandom(&s, sizeof(s), GRND_NONBLOCK) == (ssize_t)sizeof(s)) {
		secret = s;
		return;
	}
	/* no entropy yet (early boot) or no getrandom(): what differs
	 * between processes, mixed */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	secret = (__u32)ts.tv_nsec * 0x85ebca6bU ^ (__u32)getpid() * 0xc2b2ae35U ^
		 (__u32)(uintptr_t)&ts ^ (__u32)(uintptr_t)&secret_once;
}

void devcg_filter_hash_secret(__u32 s)
{
	pthread_once(&secret_once, draw_secret);
	secret = s;
}

/* The Tth hash multiplier to try: odd, 32 bits (the filter multiplies by
 * an immediate), each mixed from T and the secret on its own (multiples of
 * one number would all be defeated by the same keys) */
static __u64 multiplier(size_t t)
{
	__u32 x = (__u32)(t + 1) * DEVCG_HASH_MULT ^ secret;

	x ^= x >> 16;
	x *= 0x85ebca6bU;
	x ^= x >> 13;
	return x | 1;
}

/* A '*:*' key: its access is a constant of the program but for --audit,
 * so it is placed last, and the multiplier search counts only the slots
 * it takes */
static bool any_any(__u64 tag)
{
	return (DEVCG_TAG_SEGMENT(tag) & 3) == 3;
}

/*
 * The hash multiplier for the K tags TAGS in 1 << BITS slots: the first of
 * the process's sequence under which no two of them share a first slot
 * (nor one with the slots the '*:*' keys take, which need no lookup), so
 * that each lookup reads one slot, or the one under which fewest do. It depends on the set of keys and the secret alone
 * (devcg_table_of() finds it again from a table the process filled). Each try is K hashes; the tries stop at about
 * 4,096 hashes.
 */
static __u64 choose_mult(const __u64 *tags, size_t k, unsigned int bits)
{
	size_t tries = k ? 4096 / k : 1, t, i, least = (size_t)-1;
	__u64 best = multiplier(0);
	/* the try that took a slot, + 1: no clearing between tries; more
	 * than one try only for tables of up to 4,096 slots (fewer than 2,048
	 * keys: see devcg_filter_value()) */
	uint8_t taken[4096];

	tries = tries < 1 ? 1 : tries > 32 ? 32 : tries;
	if (tries == 1 || bits > 12)
		return best;
	memset(taken, 0, (size_t)1 << bits);
	for (t = 0; t < tries && least; t++) {
		__u64 mult = multiplier(t);
		size_t shared = 0, j = 0;

		/* the '*:*' keys lie at their first slot and the next: a key
		 * there would be moved (wherever they are in TAGS: a table's
		 * own order in devcg_table_of()) */
		for (i = 0; i < k; i++)
			if (any_any(tags[i]))
				taken[(devcg_table_home(tags[i], mult, bits) + j++) & (((size_t)1 << bits) - 1)] =
					(uint8_t)(t + 1);
		for (i = 0; i < k && shared < least; i++) {
			__u64 at = devcg_table_home(tags[i], mult, bits);

			if (any_any(tags[i]))
				continue;
			shared += taken[at] == t + 1;
			taken[at] = (uint8_t)(t + 1);
		}
		if (shared < least) {
			least = shared;
			best = mult;
		}
	}
	return best;
}

/* The hash multipliers tried at each table size, in order: the one
 * choose_mult() finds, then others of the sequence it does not try. */
#define HASH_TRIES 4

static __u64 candidate(const __u64 *tags, size_t k, unsigned int bits, unsigned int j)
{
	return j ? multiplier(31 + j) : choose_mult(tags, k, bits);
}

/* Is the table of V sorted, the empty slots first? */
static bool sorted_table(const struct devcg_policy_value *v)
{
	size_t n = (size_t)1 << v->head.bits, i;

	for (i = 1; i < n; i++)
		if ((v->slot[i - 1] & DEVCG_TAG_KEY) >= (v->slot[i] & DEVCG_TAG_KEY) && v->slot[i - 1])
			return false;
	return true;
}

/* Note in TABLE where TAG went: D slots past its first. */
static void note(struct devcg_table *table, __u64 tag, unsigned int d)
{
	unsigned int seg = DEVCG_TAG_SEGMENT(tag);

	if (seg >= 8)
		return;
	if (d + 1 > table->probes[seg & 3])
		table->probes[seg & 3] = d + 1;
	if ((seg & 3) == 3)
		table->any_access[seg >> 2] = (int)((tag >> 40) & 0xff);
}

/* Do all the tags of V's table lie fewer than DEVCG_MAX_PROBES slots past
 * their first under MULT? */
static bool fits(const struct devcg_policy_value *v, __u64 mult)
{
	size_t n = (size_t)1 << v->head.bits, i;

	for (i = 0; i < n; i++)
		if (v->slot[i] && ((i - devcg_table_home(v->slot[i], mult, v->head.bits)) & (n - 1)) >=
					  DEVCG_MAX_PROBES)
			return false;
	return true;
}

int devcg_table_of(const struct devcg_policy_value *v, struct devcg_table *table)
{
	size_t n = (size_t)1 << v->head.bits, i, k = 0;
	__u64 *tags = malloc(n * sizeof(*tags));
	unsigned int j;

	if (!tags)
		return -ENOMEM;
	pthread_once(&secret_once, draw_secret);
	memset(table, 0, sizeof(*table));
	table->any_access[0] = table->any_access[1] = -1;
	for (i = 0; i < n; i++)
		if (v->slot[i])
			tags[k++] = v->slot[i];
	/* a hash table's keys lie within DEVCG_MAX_PROBES of their first
	 * slot: longer lookups are a sorted table's binary search */
	table->sorted = v->head.probes > DEVCG_MAX_PROBES && sorted_table(v);
	/* the first multiplier tried under which every key lies where a
	 * lookup finds it (a table of an older devcg: the first) */
	for (j = 0; j < HASH_TRIES && !table->sorted; j++) {
		table->mult = candidate(tags, k, v->head.bits, j);
		if (fits(v, table->mult))
			break;
	}
	if (j == HASH_TRIES)
		table->mult = candidate(tags, k, v->head.bits, 0);
	free(tags);
	for (i = 0; i < n; i++)
		if (v->slot[i])
			note(table, v->slot[i], table->sorted ? 0 :
			     (unsigned int)((i - devcg_table_home(v->slot[i], table->mult, v->head.bits)) & (n - 1)));
	return 0;
}

/*
 * The table of V (the K tags TAGS, the '*:*' ones last) in T: a hash table
 * under the first multiplier tried that puts every key fewer than
 * DEVCG_MAX_PROBES slots past its first, at the smallest size (or the
 * next one), or, where none does (bad luck: the multipliers are secret),
 * the tags sorted by key, the empty slots first, for a binary search. A
 * lookup reads at most DEVCG_MAX_PROBES slots of a hash table, or bits + 1
 * of a sorted one (head.probes: more than DEVCG_MAX_PROBES). Eight tries
 * of K hashes and a byte a slot, one placement (each key written once,
 * where spread() says) or a sort, whatever the keys. *V is allocated here
 * with room for OTHERS exceptions after the table (by devcg_filter_take()
 * when KEEP, else malloc()); 0 or -ENOMEM.
 */
static int fill_table(const __u64 *tags, size_t k, size_t others, struct devcg_policy_value **out, size_t *size,
		      struct devcg_table *t, bool keep)
{
	struct devcg_policy_value *v;
	unsigned int bits = 1, last, j, probes = 0;
	bool placed = false;
	uint8_t *at;
	size_t i, n;

	/* at most half full, and a sixteenth for small policies (up to 4,096
	 * slots, 32 KiB), where a multiplier that gives every key a slot of
	 * its own is quick to find: one slot read per lookup, fewer
	 * instructions to verify and to run; twice as large when no
	 * multiplier puts every key near its slot, up to 2 MiB (an array's
	 * value may not exceed KMALLOC_MAX_SIZE, kernel/bpf/arraymap.c) */
	while ((1ULL << bits) < 2 * k || ((1ULL << bits) < 16 * k && bits < 12))
		bits++;
	last = bits < TABLE_BITS_MAX ? bits + 1 : bits;
	/* the count and the carry of each slot (spread()): the only memory
	 * besides the value, and small (the heap's, not fresh pages) */
	at = devcg_filter_take((size_t)1 << last);
	if (!at)
		return -ENOMEM;
	for (; bits <= last && !placed; bits++)
		for (j = 0; j < HASH_TRIES && !placed; j++) {
			t->mult = candidate(tags, k, bits, j);
			probes = spread(tags, k, bits, t->mult, at);
			placed = probes <= DEVCG_MAX_PROBES;
		}
	if (placed) {
		n = (size_t)1 << --bits;
	} else {
		/* sorted: more than DEVCG_MAX_PROBES slots a lookup, so that
		 * the head tells the layouts apart */
		for (bits = DEVCG_MAX_PROBES; ((size_t)1 << bits) < k; bits++)
			;
		n = (size_t)1 << bits;
		t->sorted = true;
		t->mult = 0;
	}
	*size = sizeof(v->head) + n * sizeof(v->slot[0]) + others * sizeof(struct devcg_entry);
	v = keep ? devcg_filter_take(*size) : malloc(*size);
	if (!v) {
		devcg_filter_give(at);
		return -ENOMEM;
	}
	if (placed)
		memset(v, 0, *size);
	if (placed) {
		/* the keys of first slot s at s + carry, s + carry + 1, ...,
		 * counted down from the last key: a '*:*' key (last in TAGS)
		 * lies after the others of its first slot */
		for (i = k; i-- > 0;) {
			size_t home = (size_t)devcg_table_home(tags[i], t->mult, bits);
			unsigned int d = (unsigned int)(at[home] >> 4) + (at[home] & 0xf) - 1;

			at[home]--; /* its count: at least 1 */
			v->slot[(home + d) & (n - 1)] = tags[i];
			note(t, tags[i], d);
		}
	} else {
		memset(v, 0, sizeof(v->head) + (n - k) * sizeof(v->slot[0]));
		memcpy(&v->slot[n - k], tags, k * sizeof(*tags));
		if (sort_by_key(&v->slot[n - k], k)) {
			devcg_filter_give(at);
			keep ? devcg_filter_give(v) : free(v);
			return -ENOMEM;
		}
		for (i = 0; i < k; i++)
			note(t, tags[i], 0);
		probes = bits + 1;
	}
	devcg_filter_give(at);
	v->head.bits = bits;
	v->head.probes = probes;
	*out = v;
	return 0;
}

/* fill_table(), the secret drawn first (at first use) */
int devcg_table_fill(const __u64 *tags, size_t k, size_t others, struct devcg_policy_value **out, size_t *size,
		     struct devcg_table *t, bool keep)
{
	pthread_once(&secret_once, draw_secret);
	return fill_table(tags, k, others, out, size, t, keep);
}

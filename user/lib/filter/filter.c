// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * One filter version: the device program with its own policy map, filled
 * and frozen before the program is loaded; and the way back, reading a
 * policy from an attached program alone.
 *
 * A version is one map, one update, a freeze and one BPF_PROG_LOAD of
 * instructions written for its value (program.c). The value is the
 * policy: a head, a hash table of the exceptions (or, where keys were
 * chosen against its hash, the same slots sorted), and the exceptions no
 * request can match; how the table was filled (its hash multiplier, how
 * far each shape's keys lie from their first slot) is for the program
 * alone, a reader scans every slot.
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
#include <bpf/bpf.h>

#define VERIFIER_LOG_BYTES (64 * 1024)
#define AUDIT_RING_BYTES (256 * 1024)
#define TABLE_BITS_MAX 18 /* 2 MiB of slots */

/* the maps a version may use */
enum { MAP_POLICY, MAP_AUDIT_EVENTS, MAP_AUDIT_LOST, MAP_KINDS };

/* Can a request match EX? Its segment then (see devcg_abi.h). */
static bool matchable(const struct devcg_exception *ex, unsigned int *seg)
{
	bool major_any = ex->major == DEVCG_ANY, minor_any = ex->minor == DEVCG_ANY;

	if ((!major_any && ex->major >> DEVCG_MAJOR_BITS) || (!minor_any && ex->minor >> DEVCG_MINOR_BITS))
		return false;
	*seg = DEVCG_SEGMENT(ex->type, major_any, minor_any);
	return true;
}

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
static void *take(size_t size)
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

/* Give P (from take() or malloc()) back: kept when there is room, the
 * smallest kept block freed for a larger one */
static void give(void *p)
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
 * with room for OTHERS exceptions after the table (by take() when KEEP,
 * else malloc()); 0 or -ENOMEM.
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
	at = take((size_t)1 << last);
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
	v = keep ? take(*size) : malloc(*size);
	if (!v) {
		give(at);
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
			give(at);
			keep ? give(v) : free(v);
			return -ENOMEM;
		}
		for (i = 0; i < k; i++)
			note(t, tags[i], 0);
		probes = bits + 1;
	}
	give(at);
	v->head.bits = bits;
	v->head.probes = probes;
	*out = v;
	return 0;
}

/* devcg_filter_value(), the value from take() when KEEP (then give() it
 * back) */
static int filter_value(const struct devcg_policy *policy, bool audit, struct devcg_policy_value **out,
			size_t *size, struct devcg_table *t, bool keep)
{
	size_t n = devcg_policy_count(policy), i, k = 0, others;
	struct devcg_exception *ex = take(n * sizeof(*ex));
	__u64 *tags = take(n * sizeof(*tags));
	struct devcg_policy_value *v = NULL;
	struct devcg_entry *far, *rest;
	unsigned int seg, present = 0, pass;
	int ret;

	if (!ex || !tags) {
		give(ex);
		give(tags);
		return -ENOMEM;
	}
	devcg_policy_collect(policy, ex);
	/* the '*:*' keys last (any_any()): no other key is moved for them */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < n; i++)
			if (matchable(&ex[i], &seg) && ((seg & 3) == 3) == pass) {
				present |= 1u << seg;
				tags[k++] = DEVCG_TAG(ex[i].access, seg, ex[i].major == DEVCG_ANY ? 0 : ex[i].major,
						      ex[i].minor == DEVCG_ANY ? 0 : ex[i].minor);
			}
	others = n - k;
	/* the exceptions no request can match, set aside so that EX's
	 * memory is given back before the table is filled (its block may
	 * hold the table's scratch) */
	rest = take(others * sizeof(*rest));
	if (!rest) {
		give(ex);
		give(tags);
		return -ENOMEM;
	}
	for (i = 0, others = 0; i < n; i++)
		if (!matchable(&ex[i], &seg))
			rest[others++] = (struct devcg_entry){ .type = ex[i].type, .major = ex[i].major,
							       .minor = ex[i].minor, .access = ex[i].access };
	give(ex);
	memset(t, 0, sizeof(*t));
	t->any_access[0] = t->any_access[1] = -1;
	pthread_once(&secret_once, draw_secret);
	ret = fill_table(tags, k, others, &v, size, t, keep);
	give(tags);
	if (ret) {
		give(rest);
		return ret;
	}
	far = (struct devcg_entry *)&v->slot[(size_t)1 << v->head.bits];
	if (others)
		memcpy(far, rest, others * sizeof(*rest));
	v->head.others = (__u32)others;
	give(rest);
	v->head.magic = DEVCG_MAGIC;
	v->head.abi = DEVCG_ABI_VERSION;
	v->head.default_allow = devcg_policy_default_allow(policy);
	v->head.count = (__u32)n;
	v->head.audit = audit;
	v->head.present = present;
	*out = v;
	return 0;
}

int devcg_filter_value(const struct devcg_policy *policy, bool audit, struct devcg_policy_value **out,
		       size_t *size, struct devcg_table *t)
{
	return filter_value(policy, audit, out, size, t, false);
}

/* The policy map of one version, filled with V (SIZE bytes) and frozen:
 * from here on the policy of this version cannot change. */
static int policy_map(const struct devcg_policy_value *v, size_t size, const char *fail_at,
		      struct devcg_error *err)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_RDONLY_PROG);
	int fd, ret;

	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, DEVCG_POLICY_MAP, sizeof(__u32), (__u32)size, 1, &o);
	if (fd < 0)
		return devcg_err(err, -errno, "cannot create the policy map: %s",
				 devcg_why(-errno, DEVCG_CAPS_FILTER));
	if (devcg_fault(fail_at, "fill"))
		ret = devcg_err(err, -EIO, "injected failure at fill");
	else if (bpf_map_update_elem(fd, &(__u32){ 0 }, v, BPF_ANY))
		ret = devcg_err(err, -errno, "cannot fill the policy map: %s",
				devcg_why(-errno, DEVCG_CAPS_FILTER));
	else if (devcg_fault(fail_at, "freeze"))
		ret = devcg_err(err, -EIO, "cannot freeze the policy map: injected failure");
	else if (bpf_map_freeze(fd))
		ret = devcg_err(err, -errno, "cannot freeze the policy map: %s", strerror(errno));
	else
		ret = fd;
	if (ret < 0)
		close(fd);
	return ret;
}

/* The audit ring and loss count: those of AUDIT_FROM, so that a reader
 * (devcg trace) follows the cgroup across swaps, or new ones. */
static int audit_maps(int audit_from, int fds[MAP_KINDS], struct devcg_error *err)
{
	if (audit_from >= 0) {
		fds[MAP_AUDIT_EVENTS] = devcg_filter_audit_ring(audit_from);
		fds[MAP_AUDIT_LOST] = devcg_filter_audit_lost(audit_from);
	}
	if (fds[MAP_AUDIT_EVENTS] < 0)
		fds[MAP_AUDIT_EVENTS] = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "audit_events", 0, 0,
						       AUDIT_RING_BYTES, NULL);
	if (fds[MAP_AUDIT_LOST] < 0 && fds[MAP_AUDIT_EVENTS] >= 0)
		fds[MAP_AUDIT_LOST] = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "audit_lost", sizeof(__u32),
						     sizeof(__u64), 1, NULL);
	if (fds[MAP_AUDIT_EVENTS] < 0 || fds[MAP_AUDIT_LOST] < 0)
		return devcg_err(err, -errno, "cannot create the audit maps: %s",
				 devcg_why(-errno, DEVCG_CAPS_FILTER));
	return 0;
}

/* The program for the value V on the maps FDS (user/lib/program.c),
 * loaded: a new fd, or a negative errno. */
static int load_program(const struct devcg_policy_value *v, const struct devcg_table *table, bool audit,
			const int fds[MAP_KINDS],
			const char *fail_at, struct devcg_error *err)
{
	const char *name = audit ? DEVCG_PROG_NAME_AUDIT : DEVCG_PROG_NAME;
	LIBBPF_OPTS(bpf_prog_load_opts, o);
	struct bpf_insn *insns;
	char *log = NULL;
	size_t cnt;
	int fd, ret;

	ret = devcg_program_build(v, table, audit, fds, &insns, &cnt);
	if (ret == -E2BIG)
		return devcg_err(err, ret, "the policy's exceptions crowd its hash table: a lookup would read "
				 "more slots than one program can hold");
	if (ret)
		return devcg_err(err, ret, "cannot write the device filter's program: %s", strerror(-ret));
	/* a program the verifier must reject: the first instruction exits
	 * before R0 is set */
	if (devcg_fault(fail_at, "verifier"))
		insns[0] = (struct bpf_insn){ .code = BPF_JMP | BPF_EXIT };
	if (devcg_fault(fail_at, "load")) {
		errno = EIO;
		fd = -1;
	} else {
		fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "Dual BSD/GPL", insns, cnt, &o);
	}
	if (fd >= 0) {
		free(insns);
		return fd;
	}
	ret = -errno;
	/* the verifier's log only for a load that failed: loaded again with
	 * a buffer (a load without one is the fast path) */
	if (ret != -EPERM && ret != -EIO && (log = calloc(1, VERIFIER_LOG_BYTES))) {
		LIBBPF_OPTS(bpf_prog_load_opts, lo, .log_buf = log, .log_size = VERIFIER_LOG_BYTES,
			    .log_level = 1);

		fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "Dual BSD/GPL", insns, cnt, &lo);
		if (fd >= 0)
			close(fd); /* refused once, loaded now: still the first answer */
	}
	{
		size_t len = log ? strlen(log) : 0;
		const char *tail = len > 700 ? log + len - 700 : log ? log : "";

		devcg_err(err, ret, "cannot load the device filter: %s%s%s",
			  devcg_why(ret, DEVCG_CAPS_FILTER), *tail ? "; verifier log:\n" : "", tail);
	}
	free(log);
	free(insns);
	return ret;
}

int devcg_filter_load(const struct devcg_policy *policy, bool audit, int audit_from,
		      const char *fail_at, struct devcg_filter_version *out, struct devcg_error *err)
{
	int fds[MAP_KINDS] = { -1, -1, -1 }, ret, i;
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct devcg_policy_value *v = NULL;
	struct devcg_bpf_log bl;
	size_t size;
	struct devcg_table table;

	memset(out, 0, sizeof(*out));
	out->prog_fd = -1;
	if (devcg_policy_count(policy) > DEVCG_MAX_RULES)
		return devcg_err(err, -E2BIG, "the policy has %zu exceptions; at most %d fit",
				 devcg_policy_count(policy), DEVCG_MAX_RULES);
	if (filter_value(policy, audit, &v, &size, &table, true))
		return devcg_err(err, -ENOMEM, "out of memory");
	devcg_bpf_log_begin(&bl);
	ret = fds[MAP_POLICY] = policy_map(v, size, fail_at, err);
	if (ret >= 0 && audit)
		ret = audit_maps(audit_from, fds, err);
	if (ret >= 0)
		ret = out->prog_fd = load_program(v, &table, audit, fds, fail_at, err);
	give(v);
	/* the program holds its maps from here on */
	for (i = 0; i < MAP_KINDS; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (ret >= 0 && bpf_obj_get_info_by_fd(out->prog_fd, &info, &info_len))
		ret = devcg_err(err, -errno, "cannot read the filter's id: %s", strerror(errno));
	if (ret < 0) {
		if (out->prog_fd >= 0)
			close(out->prog_fd);
		out->prog_fd = -1;
		return devcg_bpf_log_end(&bl, ret, err);
	}
	out->prog_id = info.id;
	return devcg_bpf_log_end(&bl, 0, err);
}

int devcg_filter_load_program(int policy_map_fd, const void *value, struct devcg_error *err)
{
	int fds[MAP_KINDS] = { policy_map_fd, -1, -1 };

	struct devcg_table table;

	if (devcg_table_of(value, &table))
		return devcg_err(err, -ENOMEM, "out of memory");
	return load_program(value, &table, false, fds, NULL, err);
}

void devcg_filter_close(struct devcg_filter_version *v)
{
	if (v->prog_fd >= 0)
		close(v->prog_fd);
	v->prog_fd = -1;
}

/* A map named NAME of type TYPE of the program PROG_FD, as a new fd (with
 * its info in MI when given), or a negative errno. */
static int prog_map(int prog_fd, const char *name, __u32 type, struct bpf_map_info *mi_out)
{
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info), map_ids[8], i;

	info.nr_map_ids = 8;
	info.map_ids = (__u64)(unsigned long)map_ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return -errno;
	for (i = 0; i < info.nr_map_ids && i < 8; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mi_len = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(map_ids[i]);

		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &mi, &mi_len) && mi.type == type && !strcmp(mi.name, name)) {
			if (mi_out)
				*mi_out = mi;
			return fd;
		}
		close(fd);
	}
	return -ENOENT;
}

int devcg_filter_audit_ring(int prog_fd)
{
	return prog_map(prog_fd, "audit_events", BPF_MAP_TYPE_RINGBUF, NULL);
}

int devcg_filter_audit_lost(int prog_fd)
{
	return prog_map(prog_fd, "audit_lost", BPF_MAP_TYPE_PERCPU_ARRAY, NULL);
}

/* The policy of a frozen policy map's value V of SIZE bytes. */
static int read_value(const struct devcg_policy_value *v, size_t size, struct devcg_policy **out,
		      struct devcg_error *err)
{
	size_t n = v->head.count, i, k = 0, table = v->head.bits < 30 ? (size_t)1 << v->head.bits : 0;
	const struct devcg_entry *far = (const struct devcg_entry *)&v->slot[table];
	struct devcg_exception *ex;
	struct devcg_policy *policy;
	int ret;

	if (!table || size != sizeof(v->head) + table * sizeof(v->slot[0]) + v->head.others * sizeof(*far) ||
	    v->head.others > n)
		return devcg_err(err, -EBADMSG, "the filter holds %zu bytes for %zu exceptions", size, n);
	ex = calloc(n ? n : 1, sizeof(*ex));
	policy = devcg_policy_new();
	if (!ex || !policy) {
		free(ex);
		devcg_policy_free(policy);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	for (i = 0; i < table && k <= n; i++) {
		__u64 tag = v->slot[i];
		unsigned int seg = DEVCG_TAG_SEGMENT(tag);

		if (!tag)
			continue;
		if (k == n || seg > 7) {
			k = n + 1;
			break;
		}
		ex[k++] = (struct devcg_exception){
			.type = seg >= 4 ? DEVCG_CHAR : DEVCG_BLOCK, .access = (uint8_t)(tag >> 40),
			.major = seg & 2 ? DEVCG_ANY : (uint32_t)(tag >> DEVCG_MINOR_BITS) & 0xfff,
			.minor = seg & 1 ? DEVCG_ANY : (uint32_t)tag & 0xfffff,
		};
	}
	for (i = 0; i < v->head.others && k < n; i++)
		ex[k++] = (struct devcg_exception){ .type = (uint8_t)far[i].type, .access = (uint8_t)far[i].access,
						    .major = far[i].major, .minor = far[i].minor };
	if (k != n || i != v->head.others) {
		free(ex);
		devcg_policy_free(policy);
		return devcg_err(err, -EBADMSG, "the filter holds another number of exceptions than it says (%zu)",
				 n);
	}
	ret = devcg_policy_set(policy, v->head.default_allow, ex, n, err);
	free(ex);
	if (ret)
		devcg_policy_free(policy);
	else
		*out = policy;
	return ret;
}

int devcg_filter_read(int prog_fd, struct devcg_policy **policy, bool *audit, struct devcg_error *err)
{
	struct bpf_prog_info info = { 0 };
	__u32 info_len = sizeof(info);
	struct devcg_policy_value *v;
	struct bpf_map_info mi;
	int fd, ret = 0;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return devcg_err(err, -errno, "cannot read program info: %s", strerror(errno));
	if (info.type != BPF_PROG_TYPE_CGROUP_DEVICE ||
	    (strcmp(info.name, DEVCG_PROG_NAME) && strcmp(info.name, DEVCG_PROG_NAME_AUDIT)))
		return 0;
	fd = prog_map(prog_fd, DEVCG_POLICY_MAP, BPF_MAP_TYPE_ARRAY, &mi);
	/* a filter of another devcg ABI cannot be read back: it counts as
	 * foreign, so that it can still be shown, replaced or adopted */
	if (fd < 0 || mi.key_size != sizeof(__u32) || mi.max_entries != 1 ||
	    mi.value_size < sizeof(struct devcg_policy_head)) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	v = malloc(mi.value_size);
	if (!v) {
		close(fd);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	if (bpf_map_lookup_elem(fd, &(__u32){ 0 }, v))
		ret = devcg_err(err, -errno, "cannot read the policy map: %s", strerror(errno));
	else if (v->head.magic == DEVCG_MAGIC && v->head.abi == DEVCG_ABI_VERSION) {
		ret = 1;
		if (audit)
			*audit = v->head.audit;
		if (policy && (ret = read_value(v, mi.value_size, policy, err)) == 0)
			ret = 1;
	}
	free(v);
	close(fd);
	return ret;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The cache of shared programs (user/lib/live/cache.c), without a kernel:
 * what its key is made of (the policy in canonical form and its variant), that
 * a key is found only by an equal key, and its bound. The fds it keeps
 * here are the test's own (of /dev/null), standing for programs; the
 * kernel tests attach real ones (tests/kernel/test_cache.c).
 */
#include "testutil.h"
#include "internal.h"

#include <fcntl.h>

/* The cache key of the policy of TEXT with AUDIT (malloc'd). */
static void *key_of(const char *text, bool audit, size_t *len)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	void *key;

	CHECK(rules && p);
	CHECK(!devcg_rules_parse(rules, text, strlen(text), "test", NULL, NULL));
	CHECK(!devcg_policy_apply_all(p, rules, NULL));
	key = devcg_cache_key(p, audit, len);
	CHECK(key != NULL);
	devcg_policy_free(p);
	devcg_rules_free(rules);
	return key;
}

static int fake_prog(void)
{
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	CHECK(fd >= 0);
	return fd;
}

/* Is KEY of TEXT (AUDIT) in C, and by which id (0: a miss)? */
static uint32_t found(struct devcg_cache *c, const char *text, bool audit)
{
	size_t len;
	void *key = key_of(text, audit, &len);
	uint32_t id = 0;
	int fd = -1;
	struct devcg_cache_entry *pin = devcg_cache_find(c, key, len, &fd, &id);

	if (pin)
		CHECK(fcntl(fd, F_GETFD) >= 0);
	devcg_cache_unpin(pin);
	free(key);
	return pin ? id : 0;
}

static void put(struct devcg_cache *c, const char *text, bool audit, uint32_t id)
{
	size_t len;
	void *key = key_of(text, audit, &len);
	int fd = fake_prog();

	CHECK_INT(devcg_cache_put(c, key, len, fd, id), 0);
	close(fd); /* the cache keeps its own */
	free(key);
}

#define RULES_AB "deny a\nallow c 1:3 rwm\nallow c 1:5 rw\nallow b 8:* r\n"
#define RULES_BA "deny a\nallow b 8:* r\nallow c 1:5 rw\nallow c 1:3 rwm\n"

UTEST(cache_the_same_rules_in_another_order_find_the_same_program)
{
	struct devcg_cache *c = devcg_cache_new(8);

	CHECK(c != NULL);
	put(c, RULES_AB, false, 41);
	CHECK_INT(found(c, RULES_BA, false), 41);
	/* control: another access of one rule is another policy */
	CHECK_INT(found(c, "deny a\nallow c 1:3 rwm\nallow c 1:5 rwm\nallow b 8:* r\n", false), 0);
	devcg_cache_free(c);
}

/* The key as its layout says (cache.c): the head, then each exception in
 * devcg_policy_exceptions()' canonical order as type, access, major and
 * minor. */
static void *reference_key(const struct devcg_policy *p, size_t *len)
{
	size_t n = devcg_policy_count(p), i;
	const struct devcg_exception *ex = devcg_policy_exceptions(p);
	unsigned char *key = malloc(16 + n * 10), *at;
	uint32_t head[4] = { DEVCG_ABI_VERSION, devcg_policy_default_allow(p), 0, (uint32_t)n };

	CHECK(key && ex);
	memcpy(key, head, sizeof(head));
	for (i = 0, at = key + 16; i < n; i++, at += 10) {
		at[0] = ex[i].type;
		at[1] = ex[i].access;
		memcpy(at + 2, &ex[i].major, 4);
		memcpy(at + 6, &ex[i].minor, 4);
	}
	*len = 16 + n * 10;
	return key;
}

UTEST(cache_key_of_many_exceptions_is_their_canonical_order_whatever_the_order_added)
{
	struct devcg_policy *fwd = devcg_policy_new(), *rev = devcg_policy_new();
	struct devcg_rule r[3000], deny_all = { .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL,
						 .access = DEVCG_ACC_ALL, .major = DEVCG_ANY,
						 .minor = DEVCG_ANY };
	uint64_t x = 12345;
	size_t la, lb, lr, i;
	void *a, *b, *ref;

	CHECK(fwd && rev);
	CHECK(!devcg_policy_apply(fwd, &deny_all, NULL));
	CHECK(!devcg_policy_apply(rev, &deny_all, NULL));
	for (i = 0; i < 3000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		r[i] = (struct devcg_rule){ .verb = DEVCG_VERB_ALLOW, .type = x >> 63 ? DEVCG_CHAR : DEVCG_BLOCK,
					    .access = (uint8_t)(x >> 40) % 7 + 1, .major = (uint32_t)(x >> 20) % 300,
					    .minor = x % 9 ? (uint32_t)(x >> 8) % 4096 : DEVCG_ANY };
	}
	for (i = 0; i < 3000; i++) {
		CHECK(!devcg_policy_apply(fwd, &r[i], NULL));
		CHECK(!devcg_policy_apply(rev, &r[2999 - i], NULL));
	}
	a = devcg_cache_key(fwd, false, &la);
	b = devcg_cache_key(rev, false, &lb);
	ref = reference_key(fwd, &lr);
	CHECK(a && b);
	CHECK(devcg_policy_count(fwd) > 2000); /* (few keys repeat) */
	CHECK_INT(la, lr);
	CHECK(!memcmp(a, ref, lr));
	CHECK_INT(lb, lr);
	CHECK(!memcmp(b, ref, lr));
	free(b);
	/* control: one exception less is another key */
	r[0].verb = DEVCG_VERB_DENY;
	r[0].access = DEVCG_ACC_ALL;
	CHECK(!devcg_policy_apply(rev, &r[0], NULL));
	b = devcg_cache_key(rev, false, &lb);
	CHECK(b != NULL);
	CHECK(lb != la);
	free(a);
	free(b);
	free(ref);
	devcg_policy_free(fwd);
	devcg_policy_free(rev);
}

UTEST(cache_another_default_or_audit_is_another_key)
{
	struct devcg_cache *c = devcg_cache_new(8);

	CHECK(c != NULL);
	put(c, "deny a\nallow c 1:3 rwm\n", false, 7);
	/* the same exception list on default allow */
	CHECK_INT(found(c, "allow a\ndeny c 1:3 rwm\n", false), 0);
	/* the audit variant of the same policy */
	CHECK_INT(found(c, "deny a\nallow c 1:3 rwm\n", true), 0);
	/* control: the same policy and variant is found */
	CHECK_INT(found(c, "deny a\nallow c 1:3 rwm\n", false), 7);
	devcg_cache_free(c);
}

UTEST(cache_keys_that_differ_in_their_last_byte_are_told_apart)
{
	struct devcg_cache *c = devcg_cache_new(4);
	unsigned char a[64], b[64];
	uint32_t id = 0;
	int fd = fake_prog(), got = -1;

	CHECK(c != NULL);
	memset(a, 0x5a, sizeof(a));
	memcpy(b, a, sizeof(b));
	b[63] ^= 1;
	struct devcg_cache_entry *pin;

	CHECK_INT(devcg_cache_put(c, a, sizeof(a), fd, 3), 0);
	CHECK(devcg_cache_find(c, b, sizeof(b), &got, &id) == NULL);
	/* a key that is a prefix of another is not equal to it */
	CHECK(devcg_cache_find(c, a, sizeof(a) - 1, &got, &id) == NULL);
	/* control: the key itself */
	pin = devcg_cache_find(c, a, sizeof(a), &got, &id);
	CHECK(pin != NULL);
	CHECK_INT(id, 3);
	CHECK(got >= 0 && got != fd); /* the cache's own copy */
	devcg_cache_unpin(pin);
	close(fd);
	devcg_cache_free(c);
}

UTEST(cache_keeps_at_most_its_bound_and_drops_the_least_recently_used)
{
	struct devcg_cache *c = devcg_cache_new(2), *big = devcg_cache_new(3);
	struct devcg_cache_stats st = { .sz = sizeof(st) };

	CHECK(c && big);
	put(c, "deny a\nallow c 1:3 r\n", false, 1);
	put(c, "deny a\nallow c 1:5 r\n", false, 2);
	CHECK_INT(found(c, "deny a\nallow c 1:3 r\n", false), 1); /* 1 used last */
	put(c, "deny a\nallow c 1:7 r\n", false, 3);
	CHECK_INT(found(c, "deny a\nallow c 1:5 r\n", false), 0);
	CHECK_INT(found(c, "deny a\nallow c 1:3 r\n", false), 1);
	CHECK_INT(found(c, "deny a\nallow c 1:7 r\n", false), 3);
	CHECK_INT(devcg_cache_stats(c, &st), 0);
	CHECK_INT(st.entries, 2);
	CHECK_INT(st.max_entries, 2);
	CHECK_INT(st.evictions, 1);
	CHECK_INT(st.hits, 3);
	CHECK_INT(st.misses, 1);
	/* control: with room for three, nothing is dropped */
	put(big, "deny a\nallow c 1:3 r\n", false, 1);
	put(big, "deny a\nallow c 1:5 r\n", false, 2);
	put(big, "deny a\nallow c 1:7 r\n", false, 3);
	CHECK_INT(found(big, "deny a\nallow c 1:5 r\n", false), 2);
	devcg_cache_free(c);
	devcg_cache_free(big);
}

/* How many fds this process has open. */
static int open_fds(void)
{
	int n = 0, fd;

	for (fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

UTEST(cache_eviction_and_free_close_only_the_cache_s_own_fds)
{
	struct devcg_cache *c = devcg_cache_new(1);
	int before = open_fds(), got = -1;
	struct devcg_cache_entry *pin;
	uint32_t id;
	size_t len;
	void *key = key_of("deny a\nallow c 1:3 r\n", false, &len);

	CHECK(c != NULL);
	put(c, "deny a\nallow c 1:3 r\n", false, 1);
	CHECK_INT(open_fds(), before + 1);
	pin = devcg_cache_find(c, key, len, &got, &id);
	CHECK(pin != NULL);
	put(c, "deny a\nallow c 1:5 r\n", false, 2); /* evicts the first */
	CHECK_INT(open_fds(), before + 2);         /* the new entry's and the pinned one */
	CHECK(fcntl(got, F_GETFD) >= 0);           /* the pinned fd stays open */
	devcg_cache_unpin(pin);
	CHECK_INT(open_fds(), before + 1);         /* closed with its last pin */
	devcg_cache_free(c);
	CHECK_INT(open_fds(), before);
	free(key);
}

UTEST(cache_pin_by_id_finds_only_a_program_it_holds)
{
	struct devcg_cache *c = devcg_cache_new(2);
	struct devcg_cache_entry *pin;
	int fd = -1;

	CHECK(c != NULL);
	put(c, "deny a\nallow c 1:3 r\n", false, 11);
	CHECK(devcg_cache_pin(c, 12, &fd) == NULL);
	CHECK_INT(fd, -1);
	/* control: the id it holds */
	pin = devcg_cache_pin(c, 11, &fd);
	CHECK(pin != NULL);
	CHECK(fcntl(fd, F_GETFD) >= 0);
	devcg_cache_unpin(pin);
	devcg_cache_free(c);
}

UTEST(cache_new_refuses_a_bound_of_zero_or_past_the_maximum)
{
	errno = 0;
	CHECK(devcg_cache_new(0) == NULL);
	CHECK_INT(errno, EINVAL);
	errno = 0;
	CHECK(devcg_cache_new(DEVCG_CACHE_MAX + 1) == NULL);
	CHECK_INT(errno, EINVAL);
	devcg_cache_free(NULL);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The ordered rule list, and the canonical text of one rule. */
#include "rules/rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct devcg_rules {
	struct devcg_rule *v;
	size_t n, cap;
};

struct devcg_rules *devcg_rules_new(void)
{
	return calloc(1, sizeof(struct devcg_rules));
}

void devcg_rules_free(struct devcg_rules *rules)
{
	if (!rules)
		return;
	free(rules->v);
	free(rules);
}

size_t devcg_rules_count(const struct devcg_rules *rules)
{
	return rules->n;
}

const struct devcg_rule *devcg_rules_get(const struct devcg_rules *rules, size_t i)
{
	return i < rules->n ? &rules->v[i] : NULL;
}

static int rule_valid(const struct devcg_rule *r)
{
	if (r->verb != DEVCG_VERB_ALLOW && r->verb != DEVCG_VERB_DENY)
		return 0;
	if (r->type == DEVCG_ALL)
		return r->major == DEVCG_ANY && r->minor == DEVCG_ANY && r->access == DEVCG_ACC_ALL;
	if (r->type != DEVCG_BLOCK && r->type != DEVCG_CHAR)
		return 0;
	return r->access && !(r->access & ~DEVCG_ACC_ALL);
}

int devcg_rules_append(struct devcg_rules *rules, const struct devcg_rule *add, size_t n,
		       struct devcg_error *err)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!rule_valid(&add[i]))
			return devcg_err(err, -EINVAL, "rule %zu is malformed", i + 1);
	if (!n)
		return 0; /* ADD may be NULL, and memcpy() must not see it */
	if (rules->n + n > rules->cap) {
		size_t cap = rules->cap ? rules->cap : 16;
		struct devcg_rule *v;

		while (cap < rules->n + n)
			cap *= 2;
		v = realloc(rules->v, cap * sizeof(*v));
		if (!v)
			return devcg_err(err, -ENOMEM, "out of memory");
		rules->v = v;
		rules->cap = cap;
	}
	memcpy(rules->v + rules->n, add, n * sizeof(*add));
	rules->n += n;
	return 0;
}

int devcg_rules_add(struct devcg_rules *rules, const struct devcg_rule *rule,
		    struct devcg_error *err)
{
	return devcg_rules_append(rules, rule, 1, err);
}

static void format_num(char *buf, size_t len, uint32_t v)
{
	if (v == DEVCG_ANY)
		snprintf(buf, len, "*");
	else
		snprintf(buf, len, "%u", v);
}

const char *devcg_access_format(uint32_t access, char buf[4])
{
	int n = 0;

	if (access & DEVCG_ACC_READ)
		buf[n++] = 'r';
	if (access & DEVCG_ACC_WRITE)
		buf[n++] = 'w';
	if (access & DEVCG_ACC_MKNOD)
		buf[n++] = 'm';
	buf[n] = '\0';
	return buf;
}

int devcg_rule_format(const struct devcg_rule *rule, char *buf, size_t len)
{
	const char *verb = rule->verb == DEVCG_VERB_ALLOW ? "allow" : "deny";
	char maj[12], min[12], acc[4];

	if (rule->type == DEVCG_ALL)
		return snprintf(buf, len, "%s a", verb);
	format_num(maj, sizeof(maj), rule->major);
	format_num(min, sizeof(min), rule->minor);
	return snprintf(buf, len, "%s %c %s:%s %s", verb, rule->type == DEVCG_BLOCK ? 'b' : 'c',
			maj, min, devcg_access_format(rule->access, acc));
}

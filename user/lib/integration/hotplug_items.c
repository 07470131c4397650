// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The hot-plug's list of nodes (hotplug.h), and the quoting of the paths
 * and names in its messages; shared by hotplug.c, nodes.c and cdi.c.
 */
#include "hotplug.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

const char *hp_q(const char *s)
{
	static __thread char buf[8][1024];
	static __thread unsigned int next;
	char *b = buf[next++ % 8];

	return devcg_quote(b, sizeof(buf[0]), s ? s : "", (size_t)-1);
}

/* ---- the item list -------------------------------------------------------- */

void hp_item_free(struct hp_item *it)
{
	free(it->host_path);
	free(it->path);
	free(it->cdi);
	free(it->kind);
	free(it->note);
}

void hp_list_truncate(struct hp_list *l, size_t n)
{
	while (l->n > n)
		hp_item_free(&l->v[--l->n]);
}

void hp_list_free(struct hp_list *l)
{
	hp_list_truncate(l, 0);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

char *hp_dup_or_null(const char *s, bool *fail)
{
	char *d = s ? strdup(s) : NULL;

	if (s && !d)
		*fail = true;
	return d;
}

int hp_list_add(struct hp_list *l, const struct hp_item *it)
{
	struct hp_item *c;
	bool fail = false;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct hp_item *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	c = &l->v[l->n];
	*c = *it;
	c->host_path = hp_dup_or_null(it->host_path, &fail);
	c->path = hp_dup_or_null(it->path, &fail);
	c->cdi = hp_dup_or_null(it->cdi, &fail);
	c->kind = hp_dup_or_null(it->kind, &fail);
	c->note = hp_dup_or_null(it->note, &fail);
	if (fail) {
		hp_item_free(c);
		return -ENOMEM;
	}
	l->n++;
	return 0;
}


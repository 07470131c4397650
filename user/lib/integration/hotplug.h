/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Hot-plug types, shared by hotplug.c (the two calls: permission and
 * order), nodes.c (the nodes, from a child in the container's mount
 * namespace) and cdi.c (CDI specs): one node of a hot-plug as the parent
 * works on it, and the list of them (hotplug_items.c). Not part of the
 * public API.
 */
#ifndef DEVCG_HOTPLUG_H
#define DEVCG_HOTPLUG_H

#include "live/live.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ---- one node of a hot-plug, as the parent works on it ------------------- */

struct hp_item {
	char *host_path;  /* NULL: no host node (CDI numbers only) */
	char *path;       /* in the container */
	char *cdi;        /* the CDI device it belongs to, or NULL */
	char *kind;       /* its CDI kind (vendor/class), or NULL */
	bool common;      /* CDI: a node of the spec's containerEdits, every device's */
	bool probe;       /* detach: a node of another CDI device, only looked at */
	bool known;       /* type, major and minor are known */
	uint8_t type;     /* DEVCG_CHAR or DEVCG_BLOCK */
	uint32_t major, minor;
	bool no_access;   /* CDI "permissions": "none": no cgroup rule */
	uint8_t access;   /* 0: the default */
	uint8_t set;      /* DEVCG_HOTPLUG_SET_* */
	uint32_t mode, uid, gid;
	char *note;       /* CDI: spec files skipped on the way (which, why), or NULL */
};

struct hp_list {
	struct hp_item *v;
	size_t n, cap;
};

/* S escaped for a message (devcg_quote(): paths and names come from
 * containers, CDI specs and the command line); one of eight buffers of
 * this thread, reused in turn. */
const char *hp_q(const char *s);

/* Free IT's strings. */
void hp_item_free(struct hp_item *it);
/* strdup(S), NULL for NULL; sets *FAIL when out of memory. */
char *hp_dup_or_null(const char *s, bool *fail);
void hp_list_free(struct hp_list *l);
/* Drop the items from the N-th on. */
void hp_list_truncate(struct hp_list *l, size_t n);
/* Append a copy of IT (its strings duplicated); 0 or -ENOMEM. */
int hp_list_add(struct hp_list *l, const struct hp_item *it);

/* The most nodes of one call. */
#define HP_MAX_NODES 256

#endif

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* devnodes.c: a container's /dev walked by fd (devcg_dev_nodes() and
 * devcg doctor). Not part of the public API. */
#ifndef DEVCG_DEVNODES_H
#define DEVCG_DEVNODES_H

#include "live/live.h"

#include <fcntl.h>
#include <sys/stat.h>

/* The longest path under /dev a walk reports (the public structs' paths) */
#define DEVCG_DEV_PATH_MAX 256

/* Called for each char or block node: its path ("/dev/...") and what
 * statx() said of it; a negative errno stops the walk. */
typedef int (*devcg_dev_node_fn)(void *ctx, const char *path, const struct statx *stx);
/*
 * Walk the container's /dev, the directory DFD (closed here), calling NODE
 * for every device node, STATX_TYPE | STATX_INO | MASK asked of statx().
 * Nothing the container made is followed: openat() with O_NOFOLLOW,
 * statx() with AT_SYMLINK_NOFOLLOW and AT_STATX_DONT_SYNC, directories
 * entered only on /dev's own file system and checked to be the ones
 * stat'ed; at most 8 levels deep and 100,000 entries (-E2BIG).
 */
int devcg_dev_walk(int dfd, unsigned int mask, devcg_dev_node_fn node, void *ctx, struct devcg_error *err);

#endif

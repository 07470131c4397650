/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Readers for kernel tests and the bench: child processes in a cgroup that
 * open device nodes in a tight loop, the way a service that opens
 * /dev/urandom per request meets a permission gap. Counts live in shared
 * memory, so the caller can watch them while readers run.
 */
#ifndef DEVCG_READER_H
#define DEVCG_READER_H

#include <stdint.h>

#define READER_MAX_PATHS 4
#define READER_MAX_PROCS 4

struct readers;

/* Start NPROCS readers in CGROUP, each opening every path of PATHS in turn
 * (O_RDONLY); returns once each has opened all of them at least once. */
struct readers *readers_start(const char *cgroup, int nprocs, const char *const *paths, int npaths);
/* Opens and EPERMs so far on path I, all readers together. */
uint64_t readers_opens(const struct readers *r, int i);
uint64_t readers_eperm(const struct readers *r, int i);
/* Stop and reap the readers; the counts stay readable until readers_free(). */
int readers_stop(struct readers *r);
void readers_free(struct readers *r);

#endif

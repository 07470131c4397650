/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* What bench.c lends the bench's other rows (hotplug.c). */
#ifndef DEVCG_BENCH_BENCH_H
#define DEVCG_BENCH_BENCH_H

#include <stdbool.h>
#include <stddef.h>

/* The least a swap of a policy held in a map can cost (bench.c): a frozen
 * one-value array map holding VALUE and a minimal program bound to it,
 * attached to CG_FD with BPF_F_REPLACE of *PREV (or first); *PREV becomes
 * the new program, the old one closed. DEVCG_PROG: devcg's program in place
 * of the minimal one. Ends the bench on failure. */
int floor_swap(int cg_fd, const void *value, size_t size, int *prev, bool devcg_prog);
/* The value of the policy map of devcg's program on CG, malloc'd, and its
 * size. Ends the bench on failure. */
void *devcg_value(const char *cg, size_t *size);

#endif

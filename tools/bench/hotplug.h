/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* make bench: the hot-plug rows (tools/bench/hotplug.c). */
#ifndef DEVCG_BENCH_HOTPLUG_H
#define DEVCG_BENCH_HOTPLUG_H

#include <stdbool.h>
#include <jansson.h>

/* Run the hot-plug rows; their numbers go to RESULTS["hotplug"]. */
void bench_hotplug(json_t *results, const char *devcg_bin, bool quick);

#endif

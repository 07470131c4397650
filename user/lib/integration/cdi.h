/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* CDI specs for the hot-plug (cdi.c). Not part of the public API. */
#ifndef DEVCG_CDI_H
#define DEVCG_CDI_H

#include "hotplug.h"

/* cdi.c: append the nodes of the CDI devices NAMES (NULL-terminated), read
 * from the specs in DIRS (NULL: /etc/cdi, /var/run/cdi). With PROBES, also
 * the device nodes of the other devices of the same specs, marked probe.
 * Nothing is appended on failure. */
int hp_cdi_resolve(const char *const *names, const char *const *dirs, bool probes,
		   struct hp_list *out, struct devcg_error *err);
/* Parse one spec (JSON or YAML text; SOURCE names it) into a jansson value
 * the caller frees; for tests. */
struct json_t;
int hp_cdi_load(const char *text, size_t len, bool yaml, const char *source, struct json_t **out,
		struct devcg_error *err);

#endif

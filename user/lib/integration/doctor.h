/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* doctor.c's seam for the unit tests: a result filled by hand with facts,
 * and the findings computed from a result's facts alone. Not part of the
 * public API. */
#ifndef DEVCG_DOCTOR_H
#define DEVCG_DOCTOR_H

#include "live/live.h"

/* r, w and m, in the order of a node's decisions */
static const uint8_t acc_bit[3] = { DEVCG_ACC_READ, DEVCG_ACC_WRITE, DEVCG_ACC_MKNOD };

/* A result with room for what it holds (doctor.c fills it, doctor_find.c
 * adds findings). */
struct doctor {
	struct devcg_doctor_result pub; /* first: the caller's pointer */
	struct devcg_doctor_layer layers[DEVCG_DOCTOR_MAX_LAYERS];
	struct devcg_doctor_node *nodes;
	size_t ncap;
	struct devcg_doctor_finding *findings;
	size_t fcap;
	/* every node of the /dev walked, when only some are the result's
	 * (the devices named): where companions are looked for */
	const struct devcg_doctor_result *walked;
};

/* A result to fill by hand (the unit tests' facts), and the findings from
 * a result's facts alone (UNIT_POLICY: what the result's unit allows, NULL
 * when none). */
struct devcg_doctor_result *devcg_doctor_new(void);
int devcg_doctor_add_layer(struct devcg_doctor_result *r, const struct devcg_doctor_layer *layer,
			   struct devcg_error *err);
int devcg_doctor_add_node(struct devcg_doctor_result *r, const struct devcg_doctor_node *node,
			  struct devcg_error *err);
int devcg_doctor_find(struct devcg_doctor_result *r, const struct devcg_policy *unit_policy,
		      struct devcg_error *err);

#endif

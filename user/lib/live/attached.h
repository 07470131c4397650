/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The device programs attached to a cgroup (attached.c), for the swap
 * (swap.c). Not part of the public API. */
#ifndef DEVCG_ATTACHED_H
#define DEVCG_ATTACHED_H

#include "live/live.h"

#define MAX_PROGS 64 /* BPF_CGROUP_MAX_PROGS */

struct attached {
	uint32_t mode; /* enum devcg_attach_mode */
	uint32_t n;
	uint32_t ids[MAX_PROGS];
	int fds[MAX_PROGS];
	bool devcg[MAX_PROGS];
	bool audit[MAX_PROGS];
	bool systemd[MAX_PROGS]; /* systemd's own device program */
};

void devcg_attached_close(struct attached *a);
/* Which of the programs of A are devcg filters (and audit ones), and
 * systemd's. */
int devcg_classify_attached(struct attached *a, struct devcg_error *err);
/* The ids of the device programs attached to the cgroup itself (no fds). */
int devcg_query_ids(int cg_fd, struct attached *a, struct devcg_error *err);
/* devcg_query_ids(), and when one program is attached in multi mode an fd
 * of it: the cache's own when CACHE holds it (*PIN: let go of with
 * devcg_cache_unpin(), not closed), else opened by id. 1 when the cgroup
 * has another number of programs or another mode, 0, or a negative errno. */
int devcg_query_one(struct devcg_cache *cache, int cg_fd, struct attached *a, struct devcg_cache_entry **pin,
		    struct devcg_error *err);
/* The device programs attached to the cgroup itself, with an fd for each;
 * with CLASSIFY, which of them are devcg filters (and audit ones). */
int devcg_query_attached(int cg_fd, bool classify, struct attached *a, struct devcg_error *err);
/*
 * On a unit's cgroup that devcg keeps in step with systemd, systemd's own
 * program stays: devcg has widened the unit's DeviceAllow= so that it
 * allows at least what devcg's filter allows, and systemd would attach it
 * again on its next reload anyway. What remains is what devcg swaps.
 */
void devcg_leave_systemds(const struct devcg_cgroup *cg, struct attached *a);
/*
 * How many programs of A besides TARGET (devcg's, or -1) a swap without
 * --force may not detach. Under no_systemd (devcg does not keep the unit
 * in step, and looks up no unit) systemd's own program is still told
 * apart by its name: devcg's filter takes its place, as it does when it is
 * the only program, and systemd attaches it again on its next reload.
 */
uint32_t devcg_blocking(const struct attached *a, int target, bool no_systemd);
void devcg_list_ids(const struct attached *a, char *buf, size_t len);

/* The first program of A, devcg's and systemd's that NO_SYSTEMD lets
 * devcg's filter replace left aside, whose rules the reader cannot read
 * back (progread.c): its id, WHY_NOT saying why; 0 when it reads them all. */
uint32_t devcg_first_unreadable(const struct attached *a, bool no_systemd, struct devcg_error *why_not);

/* The programs a take-over read (devcg_read_all()): the swap goes on only
 * while exactly these are attached. */
struct taking {
	uint32_t n;
	uint32_t ids[MAX_PROGS];
};
/* Are exactly the programs of T attached, as A found them? */
bool devcg_taking_same(const struct taking *t, const struct attached *a);
/*
 * Several programs on CG (A), one of them at least another's (not devcg's,
 * nor systemd's that NO_SYSTEMD lets devcg's filter replace): the policy to
 * start from is what they allow together, each read back; *ID the program
 * a swap replaces (devcg's, else the first), *OTHERS how many of others'
 * it takes over, TAKE the ids read. -EBUSY naming a program that cannot be
 * read.
 */
int devcg_read_all(struct devcg_cgroup *cg, const struct attached *a, bool no_systemd,
		   struct devcg_policy **policy, uint32_t *id, bool *audit, uint32_t *others,
		   struct taking *take, struct devcg_error *err);

/* The bpf_link through which PROG_ID is attached to the cgroup with inode
 * INO, as a new fd, or -ENOENT (BPF_PROG_ATTACH neither replaces nor
 * detaches a program attached by a link). */
int devcg_link_of(uint64_t ino, uint32_t prog_id);
enum { DETACHED_NONE, DETACHED_DIRECT, DETACHED_LINK };
/* Detach program I of A, whether attached directly or by a link: which of
 * DETACHED_* it was (NONE: gone already), or a negative errno. */
int devcg_detach_one(int cg_fd, uint64_t ino, const struct attached *a, uint32_t i);

#endif

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * What the differential kernel tests share: a directory of device nodes, the
 * prober (a child process that sits in the cgroups under test and, on each
 * request, tries every probe on every node), the random rule sequences fed
 * to both sides and the text the kernel reads for each rule.
 *
 * What each probe asks the device cgroup (Linux 6.x), identically of the v1
 * controller and of a BPF_CGROUP_DEVICE program (devcgroup_check_permission()
 * runs the cgroup v2 programs, then the v1 check, with the same request):
 *  - open(2): may_open() calls inode_permission(MAY_OPEN | MAY_READ and/or
 *    MAY_WRITE), which calls devcgroup_inode_permission() before vfs_open()
 *    reaches the driver; block devices are checked again, identically, by
 *    bdev_permission(). A refusal is EPERM. Any other outcome (success,
 *    ENXIO or ENODEV from a missing driver, ...) comes from after the check,
 *    so it means "allowed"; it must then be the very outcome the same probe
 *    has when everything is allowed (recorded first), else the test fails.
 *  - mknod(2): vfs_mknod() calls devcgroup_inode_mknod() (access m); EPERM.
 *  - access(2): do_faccessat() calls inode_permission(mode | MAY_ACCESS);
 *    devcgroup_inode_permission() maps only MAY_READ and MAY_WRITE, so F_OK
 *    asks with access 0: always allowed when the default is allow, and
 *    allowed when the default is deny iff some exception of the device's
 *    type covers its major and minor, whatever its access. R_OK and W_OK
 *    ask r and w like open(2), without reaching any driver. (We are root,
 *    so the DAC checks before it always pass.) All four are probed.
 *
 * Device numbers: majors {1, 5, 7, 10} and minors {3, 5, 6, 7}, char and
 * block. Block minors stay below 8 on purpose: opening b 7:8 would make the
 * loop driver create /dev/loop8 (CONFIG_BLOCK_LEGACY_AUTOLOAD), a lasting
 * side effect; loop0-7 exist already.
 */
#ifndef DEVCG_TEST_PROBE_H
#define DEVCG_TEST_PROBE_H

#include "devcg.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* ---- the device nodes ------------------------------------------------------ */

#define NMAJ 4
#define NMIN 4
#define NDEV (2 * NMAJ * NMIN)

extern const uint32_t majors[NMAJ];
extern const uint32_t minors[NMIN];

struct dev {
	uint8_t type; /* DEVCG_CHAR or DEVCG_BLOCK */
	uint32_t major, minor;
	char name[24]; /* "c-1-3": its node in the directory */
};

/* Char devices first, then block; filled by make_devdir(). */
extern struct dev devs[NDEV];

/* 'c', 'b', or 'a' for DEVCG_ALL. */
char dev_char(uint8_t type);

/* A scratch directory holding one node per entry of devs[] (CHECKs). */
void make_devdir(char *dir, size_t size);

/* ---- the probes ------------------------------------------------------------ */

enum { P_OPEN_R, P_OPEN_W, P_OPEN_RW, P_MKNOD, P_F_OK, P_R_OK, P_W_OK, P_RW_OK, NPROBE };
/* Results: one byte per (device, probe), res[dev * NPROBE + probe]: 0 for
 * success, else the errno. */
#define NRES (NDEV * NPROBE)

/* The access each probe asks the device cgroup for. */
extern const uint8_t probe_access[NPROBE];
extern const char *const probe_name[NPROBE];

/* "success", or "EPERM (Operation not permitted)". */
const char *err_name(uint8_t e);

/*
 * A child that runs every probe on request. It first joins its cgroup
 * (scratch_spawn()); the test may then put it into other cgroups as well,
 * with prober_join(), between requests.
 */
struct prober {
	const char *dir;    /* the node directory */
	char where[4096];   /* the cgroup it was started in, for messages */
	int cmd[2], res[2]; /* pipes: parent -> child, child -> parent */
	pid_t pid;
};

/* Start a prober in CGROUP (a scratch cgroup) for the nodes in DIR; when it
 * returns, the child is in CGROUP. CHECKs. */
void prober_start(struct prober *p, const char *cgroup, const char *dir);
/* Move the prober into CGROUP (a scratch cgroup, on either hierarchy): 0 or -errno. */
int prober_join(struct prober *p, const char *cgroup);
/* Run every probe once in the child. CHECKs. */
void prober_probe(struct prober *p, uint8_t res[NRES]);
/* Stop the prober: its exit status (0 when all went well). */
int prober_stop(struct prober *p);

/* ---- rules ----------------------------------------------------------------- */

/* The text the kernel parses, as written to devices.allow or devices.deny. */
void kernel_text(const struct devcg_rule *r, char *buf, size_t size);

/* A growing text buffer for mismatch reports (free .s). */
struct text {
	char *s;
	size_t len, cap;
};

void text_add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* "      echo 'c 1:3 rw' > devices.allow" for each rule. */
void text_add_sequence(struct text *t, const struct devcg_rule *rules, size_t n);

/* ---- random rule sequences ------------------------------------------------- */

#define MAX_SEQ 32

/* The generator (splitmix64); seed it by setting rng_state. */
extern uint64_t rng_state;
uint64_t rnd(void);
uint32_t below(uint32_t n);

/*
 * 1..12 rules, or 13..32 for one sequence in five. Keys come from 4 majors x
 * 4 minors plus '*', and a third of the rules reuse the key of an earlier
 * rule, so merges into an exception, partial removals and exact-key removals
 * are frequent; 'a' appears with both verbs, and 40% of the sequences start
 * with 'a' deny (as containers). Returns the number of rules.
 */
size_t random_sequence(struct devcg_rule rules[MAX_SEQ]);

/* What the sequences exercised, to show the coverage. */
struct seq_stats {
	unsigned long merges, partial_removals, removals, resets, wildcards, deny_end,
		probes_denied, probes_allowed, most_exceptions;
};

/* Count what applying R to POL does, before it is applied. */
void seq_count_effect(struct seq_stats *st, const struct devcg_policy *pol,
		      const struct devcg_rule *r);

#endif

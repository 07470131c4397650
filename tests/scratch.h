/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Scratch cgroups, device nodes and child processes for kernel tests.
 *
 * Everything made here is named "devcg-test-<tag>-...", where <tag> names
 * one run of a test binary (the pid of the harness parent, also exported as
 * DEVCG_TEST_TAG). The harness runs scratch_cleanup() in the parent after
 * every test: it removes every scratch cgroup of this run on both
 * hierarchies (killing their processes and, on cgroup v2, detaching their
 * BPF_CGROUP_DEVICE programs first) and every scratch device directory.
 *
 * Safety: the test process itself never joins a scratch cgroup; only
 * children made by scratch_spawn() do. scratch_cgroup_write() refuses any
 * cgroup that is not a scratch cgroup of this run.
 *
 * Functions that can fail return 0 (or a count, or a pid) on success and a
 * negative errno on failure.
 */
#ifndef DEVCG_SCRATCH_H
#define DEVCG_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Mount points from /proc/self/mountinfo, or NULL when not mounted. */
const char *scratch_cgroup2_root(void);
const char *scratch_devices_root(void); /* cgroup v1 with the devices controller */
const char *scratch_freezer_root(void); /* cgroup v1 with the freezer controller */

/* The tag of this run ("12345"). */
const char *scratch_tag(void);

/* Does PATH name a scratch cgroup of this run (or one nested in it)? */
int scratch_is_ours(const char *path);

/*
 * Create an empty cgroup PARENT/devcg-test-<tag>-<n>; PARENT is a hierarchy
 * root or a scratch cgroup. Its path is stored in PATH (SIZE bytes).
 */
int scratch_cgroup_create(const char *parent, char *path, size_t size);
/* Write TEXT (one write(2)) to CGROUP/FILE; CGROUP must be one of ours. */
int scratch_cgroup_write(const char *cgroup, const char *file, const char *text);
/* Read CGROUP/FILE into BUF (NUL-terminated); returns its length. */
ssize_t scratch_cgroup_read(const char *cgroup, const char *file, char *buf, size_t size);
/* Kill everything in CGROUP and below, detach device programs, rmdir all. */
int scratch_cgroup_remove(const char *cgroup);

/*
 * Fork a child that joins CGROUP (writes its pid to cgroup.procs), then exits
 * with FN(ARG) & 0xff. It gets SIGKILL when its parent dies. If it cannot
 * join, it says why on stderr and exits with SCRATCH_EXIT_JOIN.
 */
#define SCRATCH_EXIT_JOIN 125
pid_t scratch_spawn(const char *cgroup, int (*fn)(void *arg), void *arg);
/* Reap PID: its exit code, 128 + the signal that killed it, or -errno. */
int scratch_wait(pid_t pid);
/* scratch_spawn() and scratch_wait() in one. */
int scratch_run(const char *cgroup, int (*fn)(void *arg), void *arg);
/* open()+close() of /dev/null per second by a child in CGROUP over MS
 * milliseconds, or -errno; the best of K such windows, the one least
 * disturbed by the rest of a shared machine (under TCG, the host
 * descheduling a vCPU thread). */
double scratch_opens_per_second(const char *cgroup, int ms);
double scratch_best_opens_per_second(const char *cgroup, int k, int ms);

/* A device node to make: NAME in the directory, TYPE 'c' or 'b'. */
struct scratch_node {
	const char *name;
	char type;
	unsigned int major, minor;
};

/*
 * c 1:3 (null), c 1:5 (zero), c 1:7 (full), c 1:9 (urandom), c 5:7, c 10:5,
 * c 4095:4095 (no driver) and b 7:0 (loop0), b 10:3 (no driver).
 */
extern const struct scratch_node scratch_default_nodes[];
extern const size_t scratch_default_nodes_count;

/*
 * Make a new directory devcg-test-<tag>-dev-XXXXXX on a file system that
 * allows device nodes ($TMPDIR, /tmp or /var/tmp) and mknod NODES in it
 * (mode 0666); its path is stored in DIR (SIZE bytes). With NODES NULL,
 * the default nodes are made.
 */
int scratch_devdir_create(char *dir, size_t size, const struct scratch_node *nodes, size_t count);
/* Remove a directory made by scratch_devdir_create() and all it holds. */
int scratch_devdir_remove(const char *dir);

/* Remove every scratch cgroup and device directory of this run. */
void scratch_cleanup(void);

/* Is MAJOR a char major with a driver (listed in /proc/devices)? The
 * tests want one without: an allowed open fails with ENXIO, a refused one
 * with EPERM. */
bool scratch_char_major_listed(unsigned int major);
/* A char major without a driver: 240 if free, else the first free one of
 * 254 down to 234 (kept for the run); the test is skipped when none is. */
unsigned int scratch_free_char_major(void);

#endif

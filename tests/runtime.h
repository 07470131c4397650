/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Real container runtimes for kernel tests: Debian's runc and crun run a
 * busybox container in a scratch cgroup. The helpers live in
 * tests/kernel/test_runtimes.c (which says how they run on a hybrid host
 * and under crun's memlock shim); this header exposes the ones the
 * hot-plug tests (tests/kernel/test_hotplug.c) use too.
 */
#ifndef DEVCG_TEST_RUNTIME_H
#define DEVCG_TEST_RUNTIME_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum mode { V2, V1 };

/* The host ids a user-namespaced container's 0..65535 map to. */
#define USERNS_HOST_ID "100000"

struct ctr {
	const char *rt;          /* "runc" or "crun" */
	enum mode mode;
	bool shim;               /* crun's memlock raise made a no-op */
	char dir[256];           /* bundle, runtime state, logs */
	char id[64];
	char scratch[PATH_MAX];  /* v2: bound on /sys/fs/cgroup; v1: in the devices hierarchy */
	char cg[PATH_MAX];       /* the container's cgroup (host path) */
	char rel[PATH_MAX];      /* the same, relative to its hierarchy's mount (devcg trace) */
	int nlog;
};

/*
 * What a bundle may change from the tests' usual one (NULL fields keep it):
 * linux.resources.devices (RESOURCES; NO_RESOURCES leaves the list out),
 * linux.devices, hooks, annotations and the process's args, as JSON text;
 * USERNS adds a user namespace (ids mapped to USERNS_HOST_ID).
 */
struct bundle {
	const char *resources;
	bool no_resources;
	const char *linux_devices;
	const char *hooks;
	const char *annotations;
	const char *args;
	bool userns;
};

/* SKIP unless RT, busybox-static and MODE's hierarchy are there. */
void need(const char *rt, enum mode mode);
/* Make the bundle of B (NULL: the usual one), then `RT run -d`, which must
 * succeed: the container sleeps in its cgroup. */
void ctr_start_with(struct ctr *c, const char *rt, enum mode mode, const struct bundle *b);
void ctr_start(struct ctr *c, const char *rt, enum mode mode);
/* `RT delete -f` and remove its directory (also done at exit). */
void ctr_destroy(struct ctr *c);
/* Run `RT --root DIR/state ARGS...` in the container's view; its exit
 * code, its output in BUF. */
int rt_run(struct ctr *c, char *buf, size_t size, const char *const args[]);
#define RT(c, buf, ...) rt_run(c, buf, sizeof(buf), (const char *const[]){ __VA_ARGS__, NULL })

/* devcg-reader in the container (`RT exec -d`), opening /dev/urandom and
 * /dev/null in a loop until SIGTERM. */
struct creader {
	pid_t pid;
	char out[PATH_MAX];
};
void creader_start(struct ctr *c, struct creader *r);
/* Stop it; its EPERMs and opens, [0] /dev/urandom, [1] /dev/null. */
void creader_stop(struct creader *r, unsigned long long eperm[2], unsigned long long opens[2]);
/* The control of a reader test: under a policy of /dev/null alone, the
 * same reader is refused /dev/urandom on every open and never /dev/null. */
void creader_refused_control(struct ctr *c);
/* The control of a trace test: detach program ID from CGROUP and attach it
 * again 2 ms later, a gap with no program that the trace must report. */
void reattach_gap(const char *cgroup, uint32_t id);

/* `devcg -j trace --cgroup REL` of the container, its lines in a file. */
struct tracer {
	pid_t pid;
	char out[PATH_MAX];
};
void tracer_start(struct tracer *t, struct ctr *c);
json_t *tracer_stop(struct tracer *t);
size_t count_gaps(json_t *all);

/* DEVCG, else build/devcg. */
const char *devcg_bin(void);
long long jnum(json_t *o, const char *k);
const char *jstr(json_t *o, const char *k);

#endif

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Containers of a node agent (container.c, container_state.c,
 * container_hotplug.c): what the agent remembers of one container, its
 * state file, and the directory of those files. Not part of the public
 * API.
 */
#ifndef DEVCG_CONTAINER_H
#define DEVCG_CONTAINER_H

#include "live/live.h"

#include <stdbool.h>
#include <stdint.h>

/* The longest container ID (the runtimes' are 64 hex digits). */
#define CTR_ID_MAX 128
/* The most a state file may hold. */
#define CTR_STATE_MAX (1 << 20)

/* What the agent remembers of a container. */
struct ctr_state {
	char id[CTR_ID_MAX + 1];
	char *name, *pod_name, *pod_namespace, *pod_uid; /* NULL: not given */
	int32_t pid;
	char cgroup[4096];        /* relative to the cgroup2 mount */
	enum devcg_runtime runtime;
	struct devcg_policy *baseline; /* the container's own policy */
	struct devcg_exception *hot;   /* hot-plugged: allowed on top of it */
	size_t nhot;
	uint32_t prog_id;         /* devcg's program last installed */
};

/* -EINVAL with a message unless ID is 1-128 of [0-9A-Za-z_.-] (and not "." or ".."). */
int ctr_id_check(const char *id, struct devcg_error *err);
void ctr_state_clear(struct ctr_state *s);
/* The state as the text of its file (JSON); *TEXT is the caller's to free. */
int ctr_state_format(const struct ctr_state *s, char **text, struct devcg_error *err);
/* Parse a state file's TEXT (LEN bytes); SOURCE names it in messages. On
 * error *S is cleared. */
int ctr_state_parse(const char *text, size_t len, const char *source, struct ctr_state *s,
		    struct devcg_error *err);
/* Add EX (type, major, minor, access) to S's hot-plugged devices, merging
 * the access of the same key; 0 or -ENOMEM. */
int ctr_state_hot_add(struct ctr_state *s, const struct devcg_exception *ex);
/* Drop the hot-plugged device of that key, if any. */
void ctr_state_hot_remove(struct ctr_state *s, uint8_t type, uint32_t major, uint32_t minor);
/* The baseline with the hot-plugged devices allowed on top: a new policy. */
int ctr_state_policy(const struct ctr_state *s, struct devcg_policy **out, struct devcg_error *err);

/* The state directory, opened (made 0700 when CREATE), and a lock on one
 * container in it. */
struct ctr_dir {
	int fd;
	char path[4096];
	int lock_fd;
};
int ctr_dir_open(const char *dir, bool create, struct ctr_dir *d, struct devcg_error *err);
/* Take the lock of container ID (an flock on ID.lock, waited for). */
int ctr_dir_lock(struct ctr_dir *d, const char *id, struct devcg_error *err);
void ctr_dir_close(struct ctr_dir *d);
/* Read the state file of ID: -ENOENT (no message) when there is none. */
int ctr_state_load(const struct ctr_dir *d, const char *id, struct ctr_state *s,
		   struct devcg_error *err);
/* Write S's file atomically (a temporary file, fsync, rename, fsync of the dir). */
int ctr_state_save(const struct ctr_dir *d, const struct ctr_state *s, struct devcg_error *err);
/* Remove ID's state file and lock file (0 also when there was none). */
int ctr_state_remove(const struct ctr_dir *d, const char *id, struct devcg_error *err);

/* The cgroup of process PID, relative to the cgroup2 mount (never the
 * root or the caller's own: devcg_pid_cgroup()). */
int ctr_cgroup_of_pid(int32_t pid, char *rel, size_t len, struct devcg_error *err);

#endif

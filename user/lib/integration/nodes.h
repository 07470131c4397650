/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The container side of a hot-plug (nodes.c): a child in the container's
 * mount namespace makes, looks at and removes the nodes. Not part of the
 * public API. */
#ifndef DEVCG_NODES_H
#define DEVCG_NODES_H

#include "hotplug.h"

#include <signal.h>

enum hp_state {
	HP_ABSENT = 1, /* nothing at the path */
	HP_SAME,       /* the device node wanted (numbers, and mode and owner where set) */
	HP_DIFFERS,    /* the same device, another mode or owner */
	HP_OTHER_DEV,  /* a node of another device */
	HP_NOT_DEV,    /* something else: a file, a directory, a symlink */
	HP_BAD_PATH,   /* a symbolic link or a non-directory on the way there */
};

enum hp_done {
	HP_DID_MADE = 1, HP_DID_BOUND, HP_DID_REPLACED, HP_DID_RACED, /* attach */
	HP_DID_REMOVED, HP_DID_UNMOUNTED,                            /* detach */
};

/* One node as the child sees it, in memory shared with the parent. */
struct hp_node {
	/* from the parent */
	char path[PATH_MAX];      /* in the container */
	char host_path[PATH_MAX]; /* "" if none */
	uint32_t fmt;             /* S_IFCHR or S_IFBLK; 0: any device (detach) */
	uint32_t major, minor;
	uint32_t mode, uid, gid;  /* the node to make */
	uint8_t set;              /* which of mode, uid, gid must match */
	bool work;                /* make it (attach) or remove it (detach) */
	bool bind;                /* attach: bind-mount the host node */
	/* from the child's look */
	int state;                /* enum hp_state */
	bool nodev;               /* its directory cannot hold a usable node */
	bool mounted;             /* the path is a mount point (a bound node) */
	uint32_t seen_fmt, seen_major, seen_minor, seen_mode, seen_uid, seen_gid;
	uint64_t dir_dev;         /* st_dev of its directory (or nearest ancestor) */
	int seen_errno;           /* HP_BAD_PATH: why */
	/* what the child did */
	int done;                 /* enum hp_done, 0: nothing */
	int dirs_at;              /* offset in path of the first directory made; 0: none */
	char aside[64];           /* temporary name of a node set aside (same directory) */
	char tmp[64];             /* the temporary name of the node being made */
	int tree_err;             /* why tree_fd is -1 (negative errno) */
	char tree_why[160];       /* why tree_fd is -1, in words */
	/* the child's own bookkeeping */
	int tree_fd;
	bool tmp_made, file_made, mount_made, exchanged;
	struct stat made_st;      /* the node (or mount point) made: its inode */
	uint64_t mnt_id;          /* the mount made (0: unknown) */
};

struct hp_shared {
	int n;
	int err;           /* negative errno of the failed step */
	int failed;        /* the node it failed at, or -1 */
	char step[16];     /* "mkdir", "mknod", ... */
	char msg[512];
	char fail_at[16];  /* testing: fail at this step */
	/* clone the host nodes' mounts (for bind mounts): only when needed,
	 * since dropping an unused clone waits for an RCU grace period
	 * (fs/namespace.c, namespace_unlock()) */
	bool trees;
	/* the child's start (hp_child_start()): what it reads first */
	int sock, mntns_fd, root_fd;
	int keep_fds[2];        /* fds of the caller's the child keeps (-1: none) */
	void (*scan_fn)(void *arg); /* command 'S' */
	void *scan_arg;
	struct hp_node nodes[];
};

struct hp_child {
	pid_t pid;
	int sock;
	struct hp_shared *sh;
	size_t size;     /* of the mapping: the table, a guard page, the child's stack */
	/* what command 'S' calls in the child (NULL: nothing): set after
	 * hp_child_alloc() */
	void (*scan_fn)(void *arg);
	void *scan_arg;
	int keep_fds[2];   /* fds the child keeps besides its own (-1: none) */
	/* the session, from hp_child_start() to hp_child_stop() */
	bool started;
	bool killed;       /* it did not answer in time: SIGKILL sent */
	bool ended;        /* it has ended and is reaped */
	sigset_t mask;     /* the calling thread's signal mask before */
	int cancel;        /* its cancel state before */
};

/*
 * Start the child: it opens what it needs in our mount namespace, enters
 * the mount namespace MNTNS_FD and the root ROOT_FD of the container, and
 * looks at each node (state, nodev, mounted, seen_*). hp_child_alloc()
 * sets up the shared table of N nodes, for the caller to fill before.
 *
 * The child shares the caller's memory (nodes.c says why): between
 * hp_child_start() and hp_child_stop() the caller and the child take turns,
 * the caller working only while the child waits for a command (every
 * function here returns after the child's answer, or after the child is
 * killed and no longer runs), and the calling thread is the one to make
 * every call; meanwhile its signals are blocked and its cancellation is
 * disabled (the child runs on its thread-local storage). Every
 * hp_child_alloc() ends with one hp_child_stop().
 */
int hp_child_alloc(struct hp_child *c, int n, struct devcg_error *err);
int hp_child_start(struct hp_child *c, int mntns_fd, int root_fd, struct devcg_error *err);
/* Commands: 'M' make the work nodes (attach; on failure the child undoes
 * its own; on success it drops the nodes it replaced), 'R' remove the work
 * nodes (detach; undone on failure), then 'C' commit (drop what was set
 * aside) or 'U' undo; after 'C' of a detach, 'S' calls scan_fn. The child
 * ends after 'M', 'U', 'S' or a failure, and after 'C' but of a detach
 * with a scan_fn. The answer is waited for REPLY_TIMEOUT_MS; then the
 * child is killed. */
int hp_child_cmd(struct hp_child *c, char cmd, struct devcg_error *err);
/* The same, waited for TIMEOUT_MS. */
int hp_child_cmd_within(struct hp_child *c, char cmd, int timeout_ms, struct devcg_error *err);
/* End the child and free everything. A child that does not end (killed,
 * it still waits in the kernel, as in a FUSE request that the server has
 * read) is not waited for: its memory is left to it (the kernel may still
 * write to its stack), and it is not reaped. */
void hp_child_stop(struct hp_child *c);

#endif

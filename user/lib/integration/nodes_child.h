/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The child of a hot-plug's container side, shared by nodes.c (making,
 * removing, the commands) and nodes_look.c (looking, walking, failing).
 * Only these two include it.
 */
#ifndef DEVCG_NODES_CHILD_H
#define DEVCG_NODES_CHILD_H

#include "nodes.h"

#include <stdarg.h>
#include <sys/stat.h>

#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef MOVE_MOUNT_F_EMPTY_PATH
#define MOVE_MOUNT_F_EMPTY_PATH 0x00000004
#endif
#ifndef MOVE_MOUNT_T_EMPTY_PATH
#define MOVE_MOUNT_T_EMPTY_PATH 0x00000040
#endif
#ifndef STATX_MNT_ID
#define STATX_MNT_ID 0x00001000U
#endif
#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE 2
#endif

#define TMP_PREFIX ".devcg-hotplug-"

/* The host's /proc/self/fd of the child, opened before it enters the
 * container: a path to an fd that no container mount can change. */
extern __thread int hp_proc_fd;

/* The child's life: it enters the container and answers commands
 * (nodes.c); nodes_parent.c starts it. */
void hp_child_main(struct hp_shared *sh);
/* The text of errno E for the child: untranslated (strerror() may load
 * a message catalogue of the caller's locale, in the container's root,
 * into memory the child shares with the caller). */
const char *hp_strerror(int e);
/* Record why node I failed at STEP; returns CODE. */
int hp_fail(struct hp_shared *sh, int i, const char *step, int code, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Testing aid: is STEP the one to fail, at node I, the last one worked on? */
bool hp_fault(const struct hp_shared *sh, int i, int last, const char *step);
/* Testing aid: with fail_at "stop-STEP", the child stops itself (SIGSTOP)
 * at STEP of node I, the last one worked on, for a test to play the
 * container that changes its directory meanwhile; SIGCONT goes on. */
void hp_stop_at(const struct hp_shared *sh, int i, int last, const char *step);
/* Is ST a device node of FMT MAJOR:MINOR (FMT 0: of any)? */
bool hp_is_dev(const struct stat *st, uint32_t fmt, uint32_t maj, uint32_t min);
/* The device node N is about: its numbers, or those hp_look() saw there. */
bool hp_is_ndev(const struct stat *st, const struct hp_node *n);
/* Is DFD/NAME (not followed) the inode ST? */
bool hp_same_inode(int dfd, const char *name, const struct stat *st);
/* Unlink DFD/NAME if it is still the inode ST (what devcg made there). */
void hp_unlink_if(int dfd, const char *name, const struct stat *st);
/* The mount id of what FD is (0: unknown, before Linux 5.8). */
uint64_t hp_mount_id(int fd);
/*
 * Unmount the bound node at DFD/NAME: reached through the directory
 * checked (DFD), opened without following, and only if it is a mount
 * root of the device of N (and, with MNT_ID, that very mount). Returns 0
 * or -errno; -ESTALE: something else is there now.
 */
int hp_unmount_node(int dfd, const char *name, const struct hp_node *n, uint64_t mnt_id);
/*
 * The directory of PATH, opened component by component from the
 * container's root, never through a symbolic link (O_NOFOLLOW on each): a
 * container could otherwise point the path anywhere it likes, such as a
 * host volume it has mounted. With MADE, missing directories are made (as
 * their parent's owner), the first of them recorded in MADE->dirs_at. With
 * NEAREST, a missing directory is no error: its nearest existing ancestor
 * is returned and *MISSING set. Returns an fd, or -errno (ELOOP: a symbolic
 * link on the way, ENOTDIR: something else); *NAME is the last component.
 */
int hp_walk(const char *path, struct hp_node *made, bool nearest, bool *missing, const char **name);
void hp_look(struct hp_node *n);

#endif

/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The steps of a hot-plug call, each in its own file, that hotplug.c
 * puts in order: the container (hotplug_target.c), the devices of the
 * call (hotplug_devices.c), the permission (hotplug_perm.c), the holders
 * of a device (hotplug_holders.c). Not part of the public API.
 */
#ifndef DEVCG_HOTPLUG_STEPS_H
#define DEVCG_HOTPLUG_STEPS_H

#include "hotplug.h"

/* ---- hotplug_target.c ---- */

struct target {
	int32_t pid;
	int mntns_fd, root_fd;
	bool other_userns;    /* its mount namespace is another user namespace's */
	char cgroup[4096];    /* absolute */
	char rel[4096];       /* relative to the cgroup2 mount */
	char v1[4096];        /* hybrid host: its v1 devices cgroup ("" when none) */
};

int hp_target_open(const char *cgroup, int32_t pid, struct target *t, struct devcg_error *err);
void hp_target_close(struct target *t);

/* ---- hotplug_hostfs.c ---- */

struct hp_node;

/* The file systems of the container's directories that hp_host_fs_guard()
 * found neither the host's /dev nor mounted on the host, in one call: the
 * nodes of a call are mostly in one directory. */
struct fs_seen {
	uint64_t dev[HP_MAX_NODES];
	size_t n;
};

/* What hp_host_fs_guard() compares with, read by the parent before the
 * child starts (the two never run at once, nodes.h): the file system of the
 * host's /dev, those the host has mounted (both tables, /proc/1's and
 * ours), and those of the directories of the host nodes. Without memory
 * for the mounts, host_mounted() reads the tables. */
struct host_fs {
	bool dev_ok;
	dev_t dev;
	dev_t *mounted;
	size_t nmounted;
	bool mounted_ok;
	bool dir_ok[HP_MAX_NODES];
	dev_t dir[HP_MAX_NODES];
};

void hp_host_fs_read(const struct hp_list *items, struct host_fs *h);
/* Refuse the container's directory of node N (item IT, the I-th) when it
 * is on one of the host's file systems H; SEEN keeps those found not to
 * be, for the other nodes of the call. */
int hp_host_fs_guard(const struct hp_item *it, size_t i, const struct hp_node *n, const struct host_fs *h,
		     struct fs_seen *seen, struct devcg_error *err);

/* ---- hotplug_devices.c ---- */

char hp_type_char(uint8_t type);
/* The items of a call: DEVICES, then the CDI devices' nodes (with the other
 * devices of their specs as probes, for detach); one item per path. */
int hp_collect(const struct devcg_hotplug_device *devices, size_t count,
		   const struct devcg_hotplug_opts *opts, bool attach, struct hp_list *items,
		   struct devcg_error *err);

/* ---- hotplug_perm.c ---- */

struct perm {
	uint8_t type;
	uint32_t major, minor;
	uint8_t access;    /* attach: asked */
	uint8_t action;    /* enum devcg_hotplug_permission */
	uint8_t before;    /* the own exception's access before the swap */
	bool default_allow;
	char note[160];
};

struct perms {
	struct perm *v;
	size_t n;
	bool changed; /* the last edit changed the policy (a swap followed) */
};

struct swap_out {
	bool swapped;
	bool others; /* programs not devcg's were detached (--force) */
	uint32_t prog_id, replaced_id;
	char systemd_unit[256];
	uint32_t systemd_entries;
};

struct perm *hp_perm_of(struct perms *ps, uint8_t type, uint32_t major, uint32_t minor);
int hp_edit_attach(struct devcg_policy *p, void *ctx, struct devcg_error *err);
/* Take back what hp_edit_attach() added, by key: the access it merged into an
 * allow exception, or gave back from a deny one. */
int hp_edit_undo(struct devcg_policy *p, void *ctx, struct devcg_error *err);
/* Put back what hp_edit_detach() removed, by key: the access of the own
 * exception before it (a detach removes only on default deny). */
int hp_edit_redo(struct devcg_policy *p, void *ctx, struct devcg_error *err);
int hp_edit_detach(struct devcg_policy *p, void *ctx, struct devcg_error *err);
/* The permission swap of a call: the edit over the keys, by compare-and-
 * swap, with the systemd step of devcg_update() (swap.c). IO says whether
 * the swap was made when the systemd step after it failed; an undo (IO's
 * no_widen) has no systemd step: the unit holds what it puts back. */
int hp_swap_perms(const struct target *t, const struct devcg_hotplug_opts *opts,
		      devcg_policy_edit_fn edit, struct perms *ps, bool inject, struct swap_out *out,
		      struct devcg_edit_io *io, struct devcg_error *err);
/*
 * A hybrid host: the v1 devices cgroup of the container decides every open
 * too, so the permission step changes it first, by the same EDIT on the
 * policy its devices.list shows, moved there by devcg_replace_v1() (which
 * never takes away what both allow). A default-allow cgroup hides its
 * denies: there attach writes each key to devices.allow (which lifts a
 * deny of exactly that key) and detach writes nothing (it adds no deny).
 * *BEFORE (may be NULL) keeps what to put back, when it can be known.
 */
int hp_v1_perms(const struct target *t, devcg_policy_edit_fn edit, const struct perms *ps,
		    struct devcg_policy **before, struct devcg_error *err);
/* A device of PS that a program on an ancestor of the container's cgroup
 * would still refuse (devcg_ancestors_refuse()): -EACCES naming it, asked
 * before anything changes. */
int hp_ancestors_refuse(const struct target *t, const struct perms *ps, bool systemd_step, struct devcg_error *err);
/* Put the v1 devices cgroup back to BEFORE (NULL: nothing to do); 0 or a
 * message in ERR. Frees BEFORE. */
int hp_v1_put_back(const struct target *t, struct devcg_policy *before, struct devcg_error *err);

/* ---- hotplug_holders.c ---- */

/* How long a scan of the open files may take (hotplug_holders.c). */
#define HOLDERS_TIMEOUT_MS 5000

struct open_dev {
	int32_t pid, fd;
	uint8_t type;
	uint32_t major, minor;
	char comm[16];
};

struct holders {
	struct devcg_hotplug_holder *v;
	size_t n;
};

struct open_devs {
	struct open_dev *v;
	size_t n;
	bool incomplete; /* the scan did not end in time (or failed) */
	bool none;       /* ... or could not be made at all */
};

/* The scanner of a cgroup's open files (hotplug_holders.c). */
struct holders_scan {
	int proc_fd, cg_fd;   /* /proc and the cgroup, opened in our mount namespace */
	bool stop;
	struct open_dev *v;   /* MAX_OPEN_DEVS, filled by the scan */
	size_t n;
	bool done;            /* the scan ended */
};

/*
 * The device nodes the processes of the cgroup CG (absolute) and below
 * hold open: prepared here, before the process in the container's mount
 * namespace starts; scanned by that process at its command 'S'
 * (hp_open_devs_scan() as its hp_child's scan_fn), which the caller waits
 * for HOLDERS_TIMEOUT_MS at most; taken by the caller after it. With STOP
 * (a testing aid), the scan stops itself first, as one stuck would. Every
 * prepare that succeeded ends with one take or one cancel.
 */
int hp_open_devs_prepare(const char *cg, bool stop, struct holders_scan *hs);
void hp_open_devs_scan(void *arg);
void hp_open_devs_take(struct holders_scan *hs, struct open_devs *od);
void hp_open_devs_cancel(struct holders_scan *hs);
/* The holders of the device TYPE MAJOR:MINOR among OD. */
void hp_holders_of(const struct open_devs *od, uint8_t type, uint32_t maj, uint32_t min,
		       struct holders *h);

/* ---- hotplug.c ---- */

/* devcg_attach() and devcg_detach() of a cgroup or a pid (the public calls,
 * in container_hotplug.c, also take a container by its id). */
int hp_attach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
	      const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
	      struct devcg_error *err);
int hp_detach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
	      const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
	      struct devcg_error *err);

#endif

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug: give a running container a device -- its node in the
 * container's mount namespace and its permission in the container's devcg
 * policy -- in one step, and take it back.
 *
 * Order. Attach: first the permission, for all the devices of the call in
 * one compare-and-swap (swap.c, devcg_update_edit()), then the nodes (made
 * by a child in the container's mount namespace, nodes.c); a node that
 * appears is usable at once. Detach: first the nodes, then the permission;
 * files the container holds open stay usable, since the device cgroup is
 * asked only at open (fs/namei.c, may_open() -> devcgroup_inode_permission()),
 * and the processes that hold them are listed. A failure at any step puts
 * back what the call did, nodes and permission, and nothing else.
 *
 * What the permission step changes, in the kernel's v1 terms
 * (security/device_cgroup.c): attach allows the device's own key (type,
 * major, minor) with the access asked, unless the policy allows that
 * already (then nothing changes, and the result says so). On a
 * default-allow policy the device's own exception is a deny, which attach
 * refuses to drop: detach could not put it back (see below). Detach removes
 * the device's own exception, whatever added it, and nothing else: a
 * device allowed only by a wider exception ('c 136:* rwm') or by a
 * default-allow policy stays allowed, and detach says by what, since
 * removing it would take a deny the policy never had. devcg keeps no state
 * beside the policy, so a device the container had before an attach of it
 * (its own exception came from the runtime) is taken back by a detach of
 * it too: detach means "the container shall not have this device".
 *
 * The systemd step of the swap (swap.c) comes after it: when it fails, the
 * swap stays made, and attach takes the permission back (detach puts it
 * back) by another compare-and-swap, without that step, before the nodes'
 * undo: the unit already holds what is put back.
 */
#include "hotplug_steps.h"
#include "nodes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <time.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/nsfs.h>


/* The last field of struct devcg_hotplug_opts (see DEVCG_OPTS_VALID). */
#define DEVCG_HOTPLUG_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_hotplug_opts, state_dir, err)
_Static_assert(sizeof(struct devcg_hotplug_opts) == ((DEVCG_OPTS_END(devcg_hotplug_opts, state_dir) + 7) & ~7ul),
	       "a field added to struct devcg_hotplug_opts must be the one DEVCG_HOTPLUG_OPTS_VALID names");

/* ---- the result ------------------------------------------------------------- */

void devcg_hotplug_result_free(struct devcg_hotplug_result *r)
{
	size_t i, k;

	if (!r)
		return;
	for (i = 0; i < r->count; i++) {
		struct devcg_hotplug_entry *e = (struct devcg_hotplug_entry *)&r->entries[i];

		free((char *)e->host_path);
		free((char *)e->path);
		free((char *)e->cdi);
		free((char *)e->note);
		for (k = 0; k < e->ndirs; k++)
			free((char *)e->dirs[k]);
		free((void *)e->dirs);
		free((void *)e->holders);
	}
	free((void *)r->entries);
	free(r);
}

/* The directories the child made for node N: from dirs_at to its parent. */
static int entry_dirs(struct devcg_hotplug_entry *e, const struct hp_node *n)
{
	const char *p;
	const char **v = NULL;
	size_t cnt = 0;

	if (!n->dirs_at)
		return 0;
	for (p = n->path + n->dirs_at; p; p = strchr(p + 1, '/')) {
		const char **more = realloc(v, (cnt + 1) * sizeof(*v));

		if (!more || !(more[cnt] = strndup(n->path, (size_t)(p - n->path)))) {
			v = more ? more : v;
			while (cnt--)
				free((char *)v[cnt]);
			free(v);
			return -ENOMEM;
		}
		v = more;
		cnt++;
	}
	e->dirs = v;
	e->ndirs = cnt;
	return 0;
}

/* ---- attach and detach -------------------------------------------------------- */

struct call {
	struct target t;
	struct hp_list items;
	struct hp_child child;
	struct perms perms;
	char **notes;         /* per item */
	bool *kept;           /* detach: per item, left with its permission */
	struct swap_out swap; /* what the permission swap did */
	struct devcg_hotplug_result *r;
};

static void call_free(struct call *c)
{
	hp_child_stop(&c->child);
	hp_target_close(&c->t);
	for (size_t i = 0; c->notes && i < c->items.n; i++)
		free(c->notes[i]);
	free(c->notes);
	free(c->kept);
	hp_list_free(&c->items);
	free(c->perms.v);
	devcg_hotplug_result_free(c->r);
}

static void note(struct call *c, size_t i, const char *text)
{
	if (!c->notes[i] && text && text[0])
		c->notes[i] = strdup(text);
}

/* Resolve the container and the items, and start the child, which looks
 * at each node. */
static int call_start(struct call *c, const char *cgroup, const struct devcg_hotplug_device *devices,
		      size_t count, const struct devcg_hotplug_opts *opts, bool attach,
		      struct holders_scan *scan, struct devcg_error *err)
{
	const char *fail_at = DEVCG_OPT(opts, devcg_hotplug_opts, fail_at, NULL);
	struct fs_seen seen = { .n = 0 };
	struct host_fs host;
	int ret;

	memset(c, 0, sizeof(*c));
	c->t.mntns_fd = c->t.root_fd = -1;
	c->child.sock = c->child.pid = -1;
	if ((ret = DEVCG_HOTPLUG_OPTS_VALID(opts, err)))
		return ret;
	ret = hp_collect(devices, count, opts, attach, &c->items, err);
	if (!ret)
		ret = hp_target_open(cgroup, DEVCG_OPT(opts, devcg_hotplug_opts, pid, 0), &c->t, err);
	if (!ret && (!(c->notes = calloc(c->items.n, sizeof(*c->notes))) ||
		     !(c->kept = calloc(c->items.n, sizeof(*c->kept)))))
		ret = devcg_err(err, -ENOMEM, "out of memory");
	if (!ret)
		ret = hp_child_alloc(&c->child, (int)c->items.n, err);
	if (ret)
		return ret;
	for (size_t i = 0; i < c->items.n; i++) {
		const struct hp_item *it = &c->items.v[i];
		struct hp_node *n = &c->child.sh->nodes[i];

		snprintf(n->path, sizeof(n->path), "%s", it->path);
		snprintf(n->host_path, sizeof(n->host_path), "%s", it->host_path ? it->host_path : "");
		if (it->known) {
			n->fmt = it->type == DEVCG_BLOCK ? S_IFBLK : S_IFCHR;
			n->major = it->major;
			n->minor = it->minor;
		}
		n->mode = it->mode;
		n->uid = it->uid;
		n->gid = it->gid;
		/* detach takes the device back whatever its node's mode */
		n->set = attach ? it->set : 0;
		n->work = !it->probe;
	}
	if (fail_at)
		snprintf(c->child.sh->fail_at, sizeof(c->child.sh->fail_at), "%s", fail_at);
	/* bind mounts are for user-namespaced containers, or when asked */
	c->child.sh->trees = c->t.other_userns ||
			     (attach && DEVCG_OPT(opts, devcg_hotplug_opts, method, 0) == DEVCG_HOTPLUG_BIND);
	/* detach: the scan of open files, made by the child at 'S' (without
	 * what it reads, none: the list is then incomplete) */
	if (scan && !hp_open_devs_prepare(c->t.cgroup, fail_at && !strcmp(fail_at, "stop-holders"), scan)) {
		c->child.scan_fn = hp_open_devs_scan;
		c->child.scan_arg = scan;
		c->child.keep_fds[0] = scan->proc_fd;
		c->child.keep_fds[1] = scan->cg_fd;
	}
	/* (read before the child starts: it shares our memory, and the two
	 * never run at once, nodes.h) */
	hp_host_fs_read(&c->items, &host);
	ret = hp_child_start(&c->child, c->t.mntns_fd, c->t.root_fd, err);
	/* (a path that is no device node, or not reached, is left alone:
	 * attach_plan() and detach_plan() say so) */
	for (size_t i = 0; !ret && i < c->items.n; i++)
		if (c->child.sh->nodes[i].state != HP_NOT_DEV && c->child.sh->nodes[i].state != HP_BAD_PATH)
			ret = hp_host_fs_guard(&c->items.v[i], i, &c->child.sh->nodes[i], &host, &seen, err);
	free(host.mounted);
	return ret;
}

/* The child looked without the host nodes' mounts, and a node needs one
 * (a nodev directory; a bound node detach may have to put back): start
 * it again with them. */
static int call_restart_with_trees(struct call *c, struct devcg_error *err)
{
	struct hp_child old = c->child;
	size_t i;
	int ret;

	ret = hp_child_alloc(&c->child, (int)c->items.n, err);
	if (ret) {
		c->child = old;
		return ret;
	}
	memcpy(c->child.sh, old.sh, sizeof(*old.sh) + c->items.n * sizeof(old.sh->nodes[0]));
	c->child.scan_fn = old.scan_fn;
	c->child.scan_arg = old.scan_arg;
	memcpy(c->child.keep_fds, old.keep_fds, sizeof(old.keep_fds));
	c->child.sh->trees = true;
	for (i = 0; i < c->items.n; i++)
		c->child.sh->nodes[i].dirs_at = 0;
	hp_child_stop(&old);
	return hp_child_start(&c->child, c->t.mntns_fd, c->t.root_fd, err);
}

static int add_perm(struct call *c, const struct hp_item *it)
{
	struct perm *k = hp_perm_of(&c->perms, it->type, it->major, it->minor), *more;

	if (k) {
		k->access |= it->access;
		return 0;
	}
	more = realloc(c->perms.v, (c->perms.n + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	c->perms.v = more;
	k = &more[c->perms.n++];
	memset(k, 0, sizeof(*k));
	k->type = it->type;
	k->major = it->major;
	k->minor = it->minor;
	k->access = it->access;
	return 0;
}

/* The result: one entry per item that is not a probe, in their order. */
static int make_result(struct call *c, bool attach, struct devcg_error *err)
{
	struct devcg_hotplug_entry *entries;
	size_t i;

	c->r = calloc(1, sizeof(*c->r));
	entries = calloc(c->items.n, sizeof(*entries));
	if (!c->r || !entries) {
		free(entries);
		return devcg_err(err, -ENOMEM, "out of memory");
	}
	c->r->entries = entries;
	snprintf(c->r->cgroup, sizeof(c->r->cgroup), "%s", c->t.rel);
	c->r->pid = c->t.pid;
	c->r->swapped = c->swap.swapped;
	c->r->prog_id = c->swap.prog_id;
	c->r->replaced_id = c->swap.replaced_id;
	memcpy(c->r->systemd_unit, c->swap.systemd_unit, sizeof(c->r->systemd_unit));
	c->r->systemd_entries = c->swap.systemd_entries;
	snprintf(c->r->v1_cgroup, sizeof(c->r->v1_cgroup), "%s", c->t.v1);
	for (i = 0; i < c->items.n; i++) {
		const struct hp_item *it = &c->items.v[i];
		const struct hp_node *nd = &c->child.sh->nodes[i];
		struct devcg_hotplug_entry *e = &entries[c->r->count];
		bool fail = false;

		if (it->probe)
			continue;
		c->r->count++;
		e->host_path = hp_dup_or_null(it->host_path, &fail);
		e->path = hp_dup_or_null(it->path, &fail);
		e->cdi = hp_dup_or_null(it->cdi, &fail);
		e->note = hp_dup_or_null(c->notes[i], &fail);
		e->type = it->known ? it->type : nd->seen_fmt == S_IFBLK ? DEVCG_BLOCK : DEVCG_CHAR;
		e->major = it->known ? it->major : nd->seen_major;
		e->minor = it->known ? it->minor : nd->seen_minor;
		e->access = it->no_access ? 0 : it->access;
		/* a bound node is the host's */
		e->mode = attach && nd->bind ? nd->seen_mode : it->mode;
		e->uid = attach && nd->bind ? nd->seen_uid : it->uid;
		e->gid = attach && nd->bind ? nd->seen_gid : it->gid;
		if (fail || (attach && entry_dirs(e, nd)))
			return devcg_err(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* cdi.c's note of the spec files it skipped, added to its entry's note
 * (after the changes: without memory, the note is left as it is). */
static void cdi_notes(struct call *c)
{
	for (size_t i = 0, e = 0; i < c->items.n; i++) {
		const struct hp_item *it = &c->items.v[i];
		struct devcg_hotplug_entry *en;
		char *text;

		if (it->probe)
			continue;
		en = (struct devcg_hotplug_entry *)&c->r->entries[e++];
		if (!it->note ||
		    asprintf(&text, "%s%s%s", en->note ? en->note : "", en->note ? "; " : "", it->note) < 0)
			continue;
		free((char *)en->note);
		en->note = text;
	}
}

/* Decide, node by node, how attach puts it there, and which keys to allow. */
static int attach_plan(struct call *c, uint8_t method, bool force, struct devcg_error *err)
{
	for (size_t i = 0; i < c->items.n; i++) {
		const struct hp_item *it = &c->items.v[i];
		struct hp_node *n = &c->child.sh->nodes[i];
		struct stat st;

		if (n->state == HP_NOT_DEV)
			return devcg_err(err, -EEXIST, "%s is in the container and is not a device node: "
					 "left alone", hp_q(n->path));
		/* a node of another device (a CDI spec's node on the container's
		 * /dev/null) is the container's: replaced only when asked */
		if (n->state == HP_OTHER_DEV && !force)
			return devcg_err(err, -EEXIST, "%s is in the container a node of another device, "
					 "%c %u:%u, not %c %u:%u: left alone (force replaces it)", hp_q(n->path),
					 n->seen_fmt == S_IFBLK ? 'b' : 'c', n->seen_major, n->seen_minor,
					 hp_type_char(it->type), it->major, it->minor);
		if (n->state == HP_BAD_PATH)
			return devcg_err(err, -n->seen_errno, "%s: %s in the container (devcg follows no "
					 "symbolic link there)", hp_q(n->path), n->seen_errno == ELOOP ?
					 "a symbolic link on the way" : strerror(n->seen_errno));
		n->bind = method == DEVCG_HOTPLUG_BIND ||
			  (method == DEVCG_HOTPLUG_AUTO && (c->t.other_userns || n->nodev));
		if (n->bind && n->state != HP_SAME && !n->host_path[0])
			return devcg_err(err, -ENOENT, "%s: no host node to bind-mount (this container "
					 "cannot hold a node made with mknod)", hp_q(n->path));
		/* a bound node is the host's node: its mode and owner are the host's */
		if (n->bind && n->state != HP_SAME && !stat(n->host_path, &st)) {
			n->seen_mode = st.st_mode & 07777;
			n->seen_uid = st.st_uid;
			n->seen_gid = st.st_gid;
			if (((it->set & DEVCG_HOTPLUG_SET_MODE) && n->seen_mode != it->mode) ||
			    ((it->set & DEVCG_HOTPLUG_SET_UID) && n->seen_uid != it->uid) ||
			    ((it->set & DEVCG_HOTPLUG_SET_GID) && n->seen_gid != it->gid))
				return devcg_err(err, -EINVAL, "%s: it is bind-mounted, so it is the host's "
						 "node, with the host's mode and owner (%04o %u:%u)", hp_q(n->path),
						 n->seen_mode, n->seen_uid, n->seen_gid);
		}
		if (it->no_access)
			continue;
		if (add_perm(c, it))
			return devcg_err(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* Attach: a node to bind-mount; detach: a bound node to remove (its undo
 * mounts the host node again). */
static bool needs_trees(const struct call *c, bool attach)
{
	for (size_t i = 0; i < c->items.n; i++) {
		const struct hp_node *n = &c->child.sh->nodes[i];

		if (attach ? n->bind && n->state != HP_SAME : n->work && n->mounted)
			return true;
	}
	return false;
}

int hp_attach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
	      const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
	      struct devcg_error *err)
{
	uint8_t method = DEVCG_OPT(opts, devcg_hotplug_opts, method, DEVCG_HOTPLUG_AUTO);
	struct devcg_edit_io io = { .replace_others = true };
	struct devcg_policy *v1_before = NULL;
	bool widen_failed;
	struct call c;
	size_t i, e;
	int ret;

	if (result)
		*result = NULL;
	ret = call_start(&c, cgroup, devices, count, opts, true, NULL, err);
	if (!ret)
		ret = attach_plan(&c, method, DEVCG_OPT(opts, devcg_hotplug_opts, force, false), err);
	if (!ret && !c.child.sh->trees && needs_trees(&c, true)) {
		ret = call_restart_with_trees(&c, err);
		for (i = 0; !ret && i < c.items.n; i++)
			c.child.sh->nodes[i].bind = c.child.sh->nodes[i].nodev || method == DEVCG_HOTPLUG_BIND;
	}
	/* a host node that cannot be bound is refused before anything changes */
	for (i = 0; !ret && i < c.items.n; i++) {
		const struct hp_node *n = &c.child.sh->nodes[i];

		if (n->bind && n->state != HP_SAME && n->tree_fd < 0)
			ret = devcg_err(err, n->tree_err ? n->tree_err : -ENOENT, "%s: cannot bind-mount the host "
					"node %s: %s", hp_q(n->path), hp_q(n->host_path),
					n->tree_why[0] ? n->tree_why : strerror(-n->tree_err));
	}
	/* a device a program on an ancestor refuses would stay refused */
	if (!ret)
		ret = hp_ancestors_refuse(&c.t, &c.perms, !DEVCG_OPT(opts, devcg_hotplug_opts, no_systemd, false), err);
	if (ret)
		goto out;
	/* first the v1 devices cgroup (hybrid hosts), put back if a later step fails */
	ret = hp_v1_perms(&c.t, hp_edit_attach, &c.perms, &v1_before, err);
	if (ret)
		goto out;
	ret = hp_swap_perms(&c.t, opts, hp_edit_attach, &c.perms, true, &c.swap, &io, err);
	if (ret && !io.swapped) {
		struct devcg_error e2 = { 0 };

		if (hp_v1_put_back(&c.t, v1_before, &e2))
			devcg_err_wrap(err, ret, "the permission swap on %s failed, and putting the cgroup "
				       "v1 devices cgroup back failed (%s)", hp_q(c.t.rel), e2.msg);
		else
			devcg_err_wrap(err, ret, "the permission swap on %s failed; the nodes and the "
				       "permission are as before", hp_q(c.t.rel));
		v1_before = NULL;
		goto out;
	}
	/* else the swap was made and the systemd step after it failed: no
	 * node is made, and the permission is taken back as after a node's
	 * failure */
	widen_failed = ret != 0;
	if (!ret)
		ret = hp_child_cmd(&c.child, 'M', err);
	if (ret) {
		struct devcg_edit_io uio = { .no_widen = true };
		struct devcg_error e1 = { 0 }, e2 = { 0 };
		const char *step = widen_failed ? "the systemd step after the permission swap" : "attach at the nodes";
		/* --force detached programs that were not devcg's: gone for good */
		const char *others = io.others_replaced ? " (but the device programs not devcg's that "
				     "--force replaced stay replaced)" : "";
		/* both layers are put back, whatever the other one does */
		int r1 = hp_v1_put_back(&c.t, v1_before, &e1);

		v1_before = NULL;
		if (hp_swap_perms(&c.t, opts, hp_edit_undo, &c.perms, false, NULL, &uio, &e2))
			devcg_err_wrap(err, ret, "%s failed, and taking the permission back failed too (%s): "
				       "the policy allows the devices, and no node was made", step, e2.msg);
		else if (r1)
			devcg_err_wrap(err, ret, "%s failed, and putting the cgroup v1 devices cgroup back "
				       "failed too (%s)", step, e1.msg);
		else
			devcg_err_wrap(err, ret, "%s failed; the permission was taken back: the nodes and the "
				       "permission are as before%s", step, others);
		goto out;
	}
	devcg_policy_free(v1_before);
	ret = make_result(&c, true, err);
	for (i = 0, e = 0; !ret && i < c.items.n; i++, e++) {
		const struct hp_item *it = &c.items.v[i];
		const struct hp_node *n = &c.child.sh->nodes[i];
		struct devcg_hotplug_entry *en = (struct devcg_hotplug_entry *)&c.r->entries[e];
		const struct perm *k = it->no_access ? NULL : hp_perm_of(&c.perms, it->type, it->major, it->minor);
		char text[256] = "";

		en->node = n->done == HP_DID_MADE ? DEVCG_NODE_MADE : n->done == HP_DID_BOUND ? DEVCG_NODE_BOUND
			   : n->done == HP_DID_REPLACED ? DEVCG_NODE_REPLACED : DEVCG_NODE_PRESENT;
		/* no key: CDI "permissions": "none", which asks for nothing */
		en->permission = k ? k->action : DEVCG_PERM_NONE;
		if (n->done == HP_DID_REPLACED && n->state == HP_OTHER_DEV)
			snprintf(text, sizeof(text), "replaced a node of %c %u:%u",
				 n->seen_fmt == S_IFBLK ? 'b' : 'c', n->seen_major, n->seen_minor);
		else if (n->done == HP_DID_REPLACED)
			snprintf(text, sizeof(text), "replaced a node of mode %04o, owner %u:%u",
				 n->seen_mode, n->seen_uid, n->seen_gid);
		else if (!k)
			snprintf(text, sizeof(text), "not allowed by this command: its CDI \"permissions\" are "
				 "\"none\" (the policy decides, as before)");
		else if (k->note[0])
			snprintf(text, sizeof(text), "%s", k->note);
		/* what allowed it was devcg's policy (with --force: allow-all),
		 * not the programs the swap replaced */
		if (c.swap.others)
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%sthe device programs "
				 "beside devcg's were detached", text[0] ? "; " : "");
		if (n->bind && (n->done == HP_DID_BOUND || n->done == HP_DID_REPLACED))
			snprintf(text + strlen(text), sizeof(text) - strlen(text), "%sbind-mounted: %s",
				 text[0] ? "; " : "", method == DEVCG_HOTPLUG_BIND ? "asked for (--method bind)" :
				 c.t.other_userns ? "the container has its own user namespace" :
				 "its directory is on a nodev mount");
		free((char *)en->note);
		en->note = text[0] ? strdup(text) : NULL;
	}
	if (!ret)
		cdi_notes(&c);
	if (!ret && result) {
		*result = c.r;
		c.r = NULL;
	}
out:
	call_free(&c);
	return ret;
}

/* Detach of CDI devices: a common node of a spec stays while another device
 * of that spec still has a node in the container (one not being taken). */
static const char *still_used_by(const struct call *c, const struct hp_item *it)
{
	for (size_t k = 0; k < c->items.n; k++) {
		const struct hp_item *p = &c->items.v[k];
		bool ours = false;

		if (!p->probe || !p->kind || strcmp(p->kind, it->kind) ||
		    c->child.sh->nodes[k].state != HP_SAME)
			continue;
		for (size_t j = 0; j < c->items.n && !ours; j++)
			ours = !c->items.v[j].probe && !strcmp(c->items.v[j].path, p->path);
		if (!ours)
			return p->cdi;
	}
	return NULL;
}

/* Decide, node by node, what detach removes, and which keys. */
static int detach_plan(struct call *c, struct devcg_error *err)
{
	size_t i;

	for (i = 0; i < c->items.n; i++) {
		struct hp_item *it = &c->items.v[i];
		struct hp_node *n = &c->child.sh->nodes[i];
		const char *user = it->common ? still_used_by(c, it) : NULL;
		char text[256] = "";

		if (it->probe)
			continue;
		n->work = false;
		if (user) {
			c->kept[i] = true;
			snprintf(text, sizeof(text), "kept: %s still has a node in the container", hp_q(user));
			note(c, i, text);
			continue;
		}
		if (n->state == HP_SAME) {
			n->work = true;
			if (!it->known) { /* no host node: the container's node says what it is */
				it->known = true;
				it->type = n->seen_fmt == S_IFBLK ? DEVCG_BLOCK : DEVCG_CHAR;
				it->major = n->seen_major;
				it->minor = n->seen_minor;
			}
		} else if (n->state == HP_OTHER_DEV) {
			snprintf(text, sizeof(text), "the node there is %c %u:%u, not this device: left alone",
				 n->seen_fmt == S_IFBLK ? 'b' : 'c', n->seen_major, n->seen_minor);
		} else if (n->state == HP_NOT_DEV) {
			snprintf(text, sizeof(text), "what is there is not a device node: left alone");
		} else if (n->state == HP_BAD_PATH) {
			snprintf(text, sizeof(text), "%s on the way there: left alone",
				 n->seen_errno == ELOOP ? "a symbolic link" : strerror(n->seen_errno));
		}
		note(c, i, text);
		if (!it->known)
			note(c, i, "no node here and no host node: its numbers are unknown, its permission "
			     "untouched");
		else if (!it->no_access && add_perm(c, it))
			return devcg_err(err, -ENOMEM, "out of memory");
	}
	/* a key that a kept node still needs is not taken */
	for (i = 0; i < c->items.n; i++) {
		const struct hp_item *it = &c->items.v[i];
		struct perm *k = c->kept[i] && it->known ? hp_perm_of(&c->perms, it->type, it->major, it->minor)
							   : NULL;

		if (k)
			*k = c->perms.v[--c->perms.n];
	}
	return 0;
}

int hp_detach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
	      const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
	      struct devcg_error *err)
{
	struct devcg_edit_io io = { 0 };
	struct devcg_policy *v1_before = NULL;
	struct devcg_error v1_err = { 0 };
	struct holders_scan scan = { .proc_fd = -1, .cg_fd = -1 };
	struct open_devs open = { 0 };
	struct call c;
	size_t i, e;
	int ret;

	if (result)
		*result = NULL;
	ret = call_start(&c, cgroup, devices, count, opts, false, &scan, err);
	if (!ret)
		ret = detach_plan(&c, err);
	if (!ret && !c.child.sh->trees && needs_trees(&c, false)) {
		bool work[HP_MAX_NODES];

		for (i = 0; i < c.items.n; i++)
			work[i] = c.child.sh->nodes[i].work;
		ret = call_restart_with_trees(&c, err);
		for (i = 0; !ret && i < c.items.n; i++)
			c.child.sh->nodes[i].work = work[i];
	}
	if (ret)
		goto out;
	ret = hp_child_cmd(&c.child, 'R', err);
	if (ret) {
		devcg_err_wrap(err, ret, "detach failed at the nodes; the nodes are as before and the "
			       "permission was not changed");
		goto out;
	}
	/* first the v1 devices cgroup (hybrid hosts), put back if the swap fails */
	ret = hp_v1_perms(&c.t, hp_edit_detach, &c.perms, &v1_before, err);
	if (!ret)
		ret = hp_swap_perms(&c.t, opts, hp_edit_detach, &c.perms, true, &c.swap, &io, err);
	if (ret && io.swapped) {
		/* the systemd step after the swap failed: the permission is put
		 * back (both layers), then the nodes */
		struct devcg_edit_io uio = { .no_widen = true };
		struct devcg_error e2 = { 0 };

		if (hp_swap_perms(&c.t, opts, hp_edit_redo, &c.perms, false, NULL, &uio, &e2)) {
			/* nodes and permission are both taken: as a detach leaves them */
			devcg_policy_free(v1_before);
			hp_child_cmd(&c.child, 'C', NULL);
			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed, and "
				       "putting the permission back failed too (%s): the nodes are removed and "
				       "the permission taken back", hp_q(c.t.rel), e2.msg);
			goto out;
		}
		if (hp_v1_put_back(&c.t, v1_before, &v1_err)) {
			/* the nodes go back all the same */
			bool nodes_back = !hp_child_cmd(&c.child, 'U', &e2);

			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed; the "
				       "permission is back on cgroup v2, but putting the cgroup v1 devices cgroup "
				       "%s back failed (%s); %s", hp_q(c.t.rel), hp_q(c.t.v1), v1_err.msg,
				       nodes_back ? "the nodes are back" : "putting the nodes back failed too");
		} else if (hp_child_cmd(&c.child, 'U', &e2))
			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed; the "
				       "permission is back, but putting the nodes back failed (%s)",
				       hp_q(c.t.rel), e2.msg);
		else
			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed; the "
				       "nodes and the permission are as before", hp_q(c.t.rel));
		goto out;
	}
	if (ret && hp_v1_put_back(&c.t, v1_before, &v1_err))
		devcg_err_wrap(err, ret, "the cgroup v1 devices cgroup %s could not be put back (%s)",
			       hp_q(c.t.v1), v1_err.msg);
	else if (!ret)
		devcg_policy_free(v1_before);
	if (ret) {
		struct devcg_error e2 = { 0 };

		if (hp_child_cmd(&c.child, 'U', &e2))
			devcg_err_wrap(err, ret, "the permission swap on %s failed, and putting the nodes "
				       "back failed too (%s)", hp_q(c.t.rel), e2.msg);
		else
			devcg_err_wrap(err, ret, "the permission swap on %s failed; the nodes are back and "
				       "the permission is as before", hp_q(c.t.rel));
		goto out;
	}
	/* the nodes set aside go (what the child set aside is its own to drop,
	 * and a failure there changes nothing the caller asked for); then the
	 * holders are scanned, now that no process can open the devices any
	 * more (a scan not done in time is cut short: the list says so) */
	{
		struct devcg_error ignored = { 0 };

		hp_child_cmd(&c.child, 'C', &ignored);
		if (c.child.scan_fn)
			hp_child_cmd_within(&c.child, 'S', HOLDERS_TIMEOUT_MS, &ignored);
	}
	ret = make_result(&c, false, err);
	if (c.child.scan_fn)
		hp_open_devs_take(&scan, &open);
	else
		open.incomplete = open.none = true;
	for (i = 0, e = 0; !ret && i < c.items.n; i++) {
		const struct hp_item *it = &c.items.v[i];
		const struct hp_node *n = &c.child.sh->nodes[i];
		struct devcg_hotplug_entry *en;
		const struct perm *k;
		struct holders h;

		if (it->probe)
			continue;
		en = (struct devcg_hotplug_entry *)&c.r->entries[e++];
		k = it->no_access || !it->known || c.kept[i] ? NULL : hp_perm_of(&c.perms, it->type, it->major,
									       it->minor);
		en->node = c.kept[i] ? DEVCG_NODE_KEPT : n->done == HP_DID_REMOVED || n->done == HP_DID_UNMOUNTED
			   ? DEVCG_NODE_REMOVED : n->state == HP_ABSENT ? DEVCG_NODE_ABSENT : DEVCG_NODE_KEPT;
		en->permission = c.kept[i] ? DEVCG_PERM_KEPT : k ? k->action : DEVCG_PERM_NONE;
		en->access = k && k->action == DEVCG_PERM_REMOVED ? k->before : 0;
		if (k && k->note[0] && !en->note)
			en->note = strdup(k->note);
		if (c.kept[i] || !it->known)
			continue;
		memset(&h, 0, sizeof(h));
		hp_holders_of(&open, it->type, it->major, it->minor, &h);
		en->holders = h.v;
		en->nholders = h.n;
		if (open.incomplete) {
			char text[512];

			char why[64];

			snprintf(why, sizeof(why), open.none ? "" : " within %d s", HOLDERS_TIMEOUT_MS / 1000);
			snprintf(text, sizeof(text), "%s%sthe processes holding it open may be more than listed: "
				 "their open files could not all be looked at%s", en->note ? en->note : "",
				 en->note ? "; " : "", why);
			free((char *)en->note);
			en->note = strdup(text);
		}
	}
	if (!ret)
		cdi_notes(&c);
	free(open.v);
	if (!ret && result) {
		*result = c.r;
		c.r = NULL;
	}
out:
	hp_open_devs_cancel(&scan);
	call_free(&c);
	return ret;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug, the permission: the edits of the policy a call swaps in by
 * compare-and-swap (swap.c), and a hybrid host's v1 devices cgroup.
 * hotplug.c puts the steps in order (hotplug_steps.h).
 */
#include "hotplug_steps.h"

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

/* ---- the permission --------------------------------------------------------- */

struct perm *hp_perm_of(struct perms *ps, uint8_t type, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < ps->n; i++)
		if (ps->v[i].type == type && ps->v[i].major == major && ps->v[i].minor == minor)
			return &ps->v[i];
	return NULL;
}

static void exception_text(const struct devcg_exception *ex, char *buf, size_t len)
{
	char acc[4] = "";
	int n = 0;

	if (ex->access & DEVCG_ACC_READ)
		acc[n++] = 'r';
	if (ex->access & DEVCG_ACC_WRITE)
		acc[n++] = 'w';
	if (ex->access & DEVCG_ACC_MKNOD)
		acc[n++] = 'm';
	acc[n] = '\0';
	if (ex->major == DEVCG_ANY && ex->minor == DEVCG_ANY)
		snprintf(buf, len, "%c *:* %s", hp_type_char(ex->type), acc);
	else if (ex->major == DEVCG_ANY)
		snprintf(buf, len, "%c *:%u %s", hp_type_char(ex->type), ex->minor, acc);
	else if (ex->minor == DEVCG_ANY)
		snprintf(buf, len, "%c %u:* %s", hp_type_char(ex->type), ex->major, acc);
	else
		snprintf(buf, len, "%c %u:%u %s", hp_type_char(ex->type), ex->major, ex->minor, acc);
}

static int apply(struct devcg_policy *p, uint8_t verb, const struct perm *k, uint8_t access,
		 struct devcg_error *err)
{
	struct devcg_rule r = { .verb = verb, .type = k->type, .access = access, .major = k->major,
				.minor = k->minor };

	return devcg_policy_apply(p, &r, err);
}

int hp_edit_attach(struct devcg_policy *p, void *ctx, struct devcg_error *err)
{
	struct perms *ps = ctx;
	bool changed = false;
	int ret;

	for (size_t i = 0; i < ps->n; i++) {
		struct perm *k = &ps->v[i];
		struct devcg_exception key = { .type = k->type, .major = k->major, .minor = k->minor }, by;
		bool decided = false;
		char text[64];

		k->before = devcg_policy_access_of(p, &key);
		k->default_allow = devcg_policy_default_allow(p);
		k->note[0] = '\0';
		if (devcg_policy_check(p, k->type, k->major, k->minor, k->access, &by, &decided) == 1) {
			k->action = DEVCG_PERM_ALREADY;
			if (decided)
				exception_text(&by, text, sizeof(text));
			snprintf(k->note, sizeof(k->note), "allowed already by %s", decided ? text :
				 "the policy's default (allow)");
			continue;
		}
		/* on default allow the device's own exception is a deny: an
		 * allow would drop it, and detach, which never adds a deny
		 * (it cannot tell a deny attach dropped from none), would
		 * leave the device allowed */
		if (k->default_allow && k->before) {
			struct devcg_exception own = key;

			own.access = k->before;
			exception_text(&own, text, sizeof(text));
			return devcg_err(err, -EPERM, "%c %u:%u is denied by the policy's own exception "
					 "'%s' (the policy allows by default): attach does not drop a deny, "
					 "which detach could not put back; drop it with 'devcg allow' first",
					 hp_type_char(k->type), k->major, k->minor, text);
		}
		ret = apply(p, DEVCG_VERB_ALLOW, k, k->access, err);
		if (ret)
			return ret;
		if (devcg_policy_check(p, k->type, k->major, k->minor, k->access, &by, &decided) != 1) {
			exception_text(&by, text, sizeof(text));
			/* v1 trims only the exception with exactly this key */
			return devcg_err(err, -EPERM, "%c %u:%u cannot be allowed alone: the policy allows "
					 "by default and denies %s, which an allow of one device does not "
					 "lift", hp_type_char(k->type), k->major, k->minor, decided ? text : "it");
		}
		k->action = DEVCG_PERM_ADDED;
		changed = true;
	}
	ps->changed = changed;
	return changed ? 0 : 1;
}

/* Take back what hp_edit_attach() added, by key: the access it merged into an
 * allow exception, or gave back from a deny one. */
int hp_edit_undo(struct devcg_policy *p, void *ctx, struct devcg_error *err)
{
	struct perms *ps = ctx;
	bool changed = false;
	int ret;

	for (size_t i = 0; i < ps->n; i++) {
		struct perm *k = &ps->v[i];
		uint8_t bits;

		if (k->action != DEVCG_PERM_ADDED || devcg_policy_default_allow(p) != k->default_allow)
			continue;
		bits = k->default_allow ? (uint8_t)(k->before & k->access) : (uint8_t)(k->access & ~k->before);
		if (!bits)
			continue;
		ret = apply(p, DEVCG_VERB_DENY, k, bits, err);
		if (ret)
			return ret;
		changed = true;
	}
	ps->changed = changed;
	return changed ? 0 : 1;
}

/* Put back what hp_edit_detach() removed, by key: the access of the own
 * exception before it (a detach removes only on default deny). */
int hp_edit_redo(struct devcg_policy *p, void *ctx, struct devcg_error *err)
{
	struct perms *ps = ctx;
	bool changed = false;
	int ret;

	for (size_t i = 0; i < ps->n; i++) {
		struct perm *k = &ps->v[i];

		if (k->action != DEVCG_PERM_REMOVED || devcg_policy_default_allow(p) != k->default_allow)
			continue;
		ret = apply(p, DEVCG_VERB_ALLOW, k, k->before, err);
		if (ret)
			return ret;
		changed = true;
	}
	ps->changed = changed;
	return changed ? 0 : 1;
}

int hp_edit_detach(struct devcg_policy *p, void *ctx, struct devcg_error *err)
{
	static const uint8_t one[3] = { DEVCG_ACC_READ, DEVCG_ACC_WRITE, DEVCG_ACC_MKNOD };
	struct perms *ps = ctx;
	bool changed = false;
	int ret;

	for (size_t i = 0; i < ps->n; i++) {
		struct perm *k = &ps->v[i];
		struct devcg_exception key = { .type = k->type, .major = k->major, .minor = k->minor }, by;
		uint8_t left = 0;
		bool decided = false, by_default = false;
		char text[64] = "", acc[4];

		k->before = devcg_policy_access_of(p, &key);
		k->default_allow = devcg_policy_default_allow(p);
		k->note[0] = '\0';
		k->action = DEVCG_PERM_NONE;
		/* on default deny an exception allows; on default allow it denies,
		 * and a detach never adds a deny */
		if (!k->default_allow && k->before) {
			ret = apply(p, DEVCG_VERB_DENY, k, DEVCG_ACC_ALL, err);
			if (ret)
				return ret;
			k->action = DEVCG_PERM_REMOVED;
			changed = true;
		}
		for (int b = 0; b < 3; b++) {
			bool d = false;

			if (devcg_policy_check(p, k->type, k->major, k->minor, one[b], &by, &d) != 1)
				continue;
			left |= one[b];
			if (d && !decided)
				exception_text(&by, text, sizeof(text));
			decided |= d;
			by_default |= !d;
		}
		if (!left)
			continue;
		if (k->action != DEVCG_PERM_REMOVED)
			k->action = DEVCG_PERM_STILL_ALLOWED;
		snprintf(k->note, sizeof(k->note), "still allowed (%s) by %s%s", devcg_access_format(left, acc),
			 decided ? text : "", by_default ? (decided ? " and the default" :
							    "the policy's default (allow); detach adds no deny") : "");
	}
	ps->changed = changed;
	return changed ? 0 : 1;
}

/* The permission swap of a call: the edit over the keys, by compare-and-
 * swap, with the systemd step of devcg_update() (swap.c). IO says whether
 * the swap was made when the systemd step after it failed; an undo (IO's
 * no_widen) has no systemd step: the unit holds what it puts back. */
int hp_swap_perms(const struct target *t, const struct devcg_hotplug_opts *opts,
		      devcg_policy_edit_fn edit, struct perms *ps, bool inject, struct swap_out *out,
		      struct devcg_edit_io *io, struct devcg_error *err)
{
	DEVCG_OPTS(devcg_replace_opts, ro);
	const char *fail_at = DEVCG_OPT(opts, devcg_hotplug_opts, fail_at, NULL);
	int ret;

	ro.force = DEVCG_OPT(opts, devcg_hotplug_opts, force, false);
	ro.no_systemd = DEVCG_OPT(opts, devcg_hotplug_opts, no_systemd, false);
	/* the swap's own fault point: after the new filter is loaded */
	if (inject && fail_at && !strcmp(fail_at, "swap"))
		ro.fail_at = "attach";
	/* the systemd step's: after the swap */
	if (inject && fail_at && !strcmp(fail_at, "systemd"))
		ro.fail_at = "systemd";
	ret = devcg_update_edit(t->cgroup, edit, ps, &ro, io, err);
	if (!ret && out) {
		out->swapped = io->swapped;
		out->others = io->others_replaced;
		out->prog_id = ro.prog_id;
		out->replaced_id = ro.replaced_id;
		memcpy(out->systemd_unit, ro.systemd_unit, sizeof(out->systemd_unit));
		out->systemd_entries = ro.systemd_entries;
	}
	return ret;
}

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
		    struct devcg_policy **before, struct devcg_error *err)
{
	struct devcg_policy *cur = NULL, *next = NULL;
	struct perms copy = { .n = ps->n };
	bool complete = false;
	int ret;

	if (before)
		*before = NULL;
	if (!t->v1[0] || !ps->n)
		return 0;
	ret = devcg_v1_read(t->v1, &cur, &complete, err);
	if (ret)
		return ret;
	if (!complete) {
		for (size_t i = 0; !ret && edit == hp_edit_attach && i < ps->n; i++) {
			struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = ps->v[i].type,
						.access = ps->v[i].access, .major = ps->v[i].major,
						.minor = ps->v[i].minor };

			ret = devcg_update_v1(t->v1, &r, err);
		}
		goto out;
	}
	copy.v = malloc(ps->n * sizeof(*copy.v));
	next = devcg_policy_dup(cur);
	if (!copy.v || !next) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	memcpy(copy.v, ps->v, ps->n * sizeof(*copy.v));
	ret = edit(next, &copy, err);
	if (ret == 0)
		ret = devcg_replace_v1(t->v1, next, err);
	if (ret > 0)
		ret = 0; /* no change, or a moment devcg_replace_v1() reports */
	if (!ret && before) {
		*before = cur;
		cur = NULL;
	}
out:
	if (ret)
		devcg_err_wrap(err, ret, "the cgroup v1 devices cgroup %s", hp_q(t->v1));
	free(copy.v);
	devcg_policy_free(next);
	devcg_policy_free(cur);
	return ret;
}

/* Put the v1 devices cgroup back to BEFORE (NULL: nothing to do); 0 or a
 * message in ERR. Frees BEFORE. */
int hp_v1_put_back(const struct target *t, struct devcg_policy *before, struct devcg_error *err)
{
	int ret = before ? devcg_replace_v1(t->v1, before, err) : 0;

	devcg_policy_free(before);
	return ret < 0 ? ret : 0;
}

int hp_ancestors_refuse(const struct target *t, const struct perms *ps, bool systemd_step, struct devcg_error *err)
{
	struct devcg_grant *g = calloc(ps->n ? ps->n : 1, sizeof(*g));
	int ret;

	if (!g)
		return devcg_err(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < ps->n; i++)
		g[i] = (struct devcg_grant){ ps->v[i].type, ps->v[i].major, ps->v[i].minor, ps->v[i].access };
	/* (REL is relative to the cgroup2 mount, written with a leading '/') */
	ret = devcg_ancestors_refuse(t->rel + (t->rel[0] == '/'), g, ps->n, systemd_step, err);
	free(g);
	return ret;
}

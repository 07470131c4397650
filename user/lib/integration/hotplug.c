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
#include "cdi.h"
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

#define MAX_HOLDERS 64

/* The last field of struct devcg_hotplug_opts (see DEVCG_OPTS_VALID). */
#define DEVCG_HOTPLUG_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_hotplug_opts, no_systemd, err)
_Static_assert(sizeof(struct devcg_hotplug_opts) == ((DEVCG_OPTS_END(devcg_hotplug_opts, no_systemd) + 7) & ~7ul),
	       "a field added to struct devcg_hotplug_opts must be the one DEVCG_HOTPLUG_OPTS_VALID names");

/* ---- the container ------------------------------------------------------- */

struct target {
	int32_t pid;
	int mntns_fd, root_fd;
	bool other_userns;    /* its mount namespace is another user namespace's */
	char cgroup[4096];    /* absolute */
	char rel[4096];       /* relative to the cgroup2 mount */
	char v1[4096];        /* hybrid host: its v1 devices cgroup ("" when none) */
};

static void target_close(struct target *t)
{
	if (t->mntns_fd >= 0)
		close(t->mntns_fd);
	if (t->root_fd >= 0)
		close(t->root_fd);
	t->mntns_fd = t->root_fd = -1;
}

/* A process of the cgroup at PATH or below (depth first): its pid, or 0. */
static int32_t pid_in(const char *path, int depth)
{
	char file[4200], buf[64];
	int32_t pid = 0;
	FILE *f;
	DIR *d;
	struct dirent *e;

	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	f = fopen(file, "re");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			pid = (int32_t)strtol(buf, NULL, 10);
		fclose(f);
	}
	if (pid > 0 || depth > 16 || !(d = opendir(path)))
		return pid;
	while (!pid && (e = readdir(d))) {
		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		pid = pid_in(file, depth + 1);
	}
	closedir(d);
	return pid;
}

/* Is REL (of a process) the cgroup CG or one below it? */
static bool under(const char *rel, const char *cg)
{
	size_t n = strlen(cg);

	return !strcmp(cg, "/") || (!strncmp(rel, cg, n) && (rel[n] == '\0' || rel[n] == '/'));
}

static int same_userns(int mntns_fd, bool *other)
{
	struct stat a, b;
	int fd = ioctl(mntns_fd, NS_GET_USERNS);

	*other = false;
	if (fd < 0)
		return -errno;
	if (!fstat(fd, &a) && !stat("/proc/self/ns/user", &b))
		*other = a.st_ino != b.st_ino || a.st_dev != b.st_dev;
	close(fd);
	return 0;
}

static bool same_mntns(int32_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	return !stat(path, &a) && !stat("/proc/self/ns/mnt", &b) && a.st_ino == b.st_ino &&
	       a.st_dev == b.st_dev;
}

static int target_open(const char *cgroup, int32_t pid, struct target *t, struct devcg_error *err)
{
	struct devcg_cgroup cg = { .fd = -1 };
	char rel[4096] = "", v1[4096], path[64];
	int ret;

	memset(t, 0, sizeof(*t));
	t->mntns_fd = t->root_fd = -1;
	if (!cgroup && pid <= 0)
		return devcg_err(err, -EINVAL, "no container: give a cgroup or a process");
	if (pid > 0) {
		ret = devcg_proc_cgroup(pid, rel, sizeof(rel), v1, sizeof(v1), err);
		if (ret)
			return ret;
		if (!cgroup && !strcmp(rel, "/"))
			return devcg_err(err, -EPERM, "process %d is in the root cgroup: devcg never "
					 "attaches a program there", (int)pid);
	}
	ret = devcg_cgroup_resolve(cgroup ? cgroup : rel[0] == '/' ? rel + 1 : rel, DEVCG_RESOLVE_WRITE,
				   &cg, err);
	if (!ret) {
		snprintf(t->cgroup, sizeof(t->cgroup), "%s", devcg_cgroup_path(&cg));
		snprintf(t->rel, sizeof(t->rel), "%s", devcg_cgroup_rel(&cg));
	}
	devcg_cgroup_close(&cg);
	if (ret)
		return ret;
	if (!strcmp(t->rel, "/"))
		return devcg_err(err, -EINVAL, "%s is the root cgroup, not a container's",
				 pid > 0 ? "the process's cgroup" : hp_q(cgroup));
	if (pid > 0 && cgroup && !under(rel, t->rel))
		return devcg_err(err, -EINVAL, "process %d is in %s, not in %s", (int)pid, hp_q(rel), hp_q(t->rel));
	if (pid <= 0) {
		pid = pid_in(t->cgroup, 0);
		if (pid <= 0)
			return devcg_err(err, -ESRCH, "%s has no process to take the mount namespace "
					 "from: give one with -p PID", hp_q(t->rel));
		ret = devcg_proc_cgroup(pid, rel, sizeof(rel), v1, sizeof(v1), err);
		if (ret)
			return ret;
	}
	if (!ret && same_mntns(pid))
		return devcg_err(err, -EINVAL, "process %d shares devcg's own mount namespace: it is "
				 "not in a container, and its nodes are the host's", (int)pid);
	/* a hybrid host: its v1 devices cgroup decides too, and gets the
	 * permission with v2's (v1_perms()) */
	if (v1[0] && (ret = devcg_v1_of_pid(pid, true, t->v1, sizeof(t->v1), err)) < 0)
		return ret;
	t->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
	t->mntns_fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	t->root_fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (t->mntns_fd < 0 || t->root_fd < 0) {
		ret = devcg_err(err, -errno, "process %d: cannot open its mount namespace and root: %s",
				(int)pid, strerror(errno));
		target_close(t);
		return ret;
	}
	/* it is still the process of that cgroup (not a new one with its pid) */
	ret = devcg_proc_cgroup(pid, rel, sizeof(rel), v1, sizeof(v1), err);
	if (!ret && !under(rel, t->rel))
		ret = devcg_err(err, -ESRCH, "process %d left %s", (int)pid, hp_q(t->rel));
	if (!ret && same_userns(t->mntns_fd, &t->other_userns))
		t->other_userns = false; /* no NS_GET_USERNS (before 4.9): assume the same */
	if (ret)
		target_close(t);
	return ret;
}

/* ---- the devices of a call -------------------------------------------------- */

/* PATH made canonical in OUT: absolute, no "." or ".." or empty component. */
static int clean_path(const char *path, char *out, size_t len, struct devcg_error *err)
{
	size_t o = 0;
	const char *p = path;

	if (!path || path[0] != '/')
		return devcg_err(err, -EINVAL, "'%s': a container path must be absolute", hp_q(path));
	while (*p) {
		const char *start, *end;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		start = p;
		end = strchr(p, '/');
		if (!end)
			end = p + strlen(p);
		if ((end - start == 1 && start[0] == '.') || (end - start == 2 && !strncmp(start, "..", 2)))
			return devcg_err(err, -EINVAL, "'%s': no '.' or '..' in a container path", hp_q(path));
		if (o + 1 + (size_t)(end - start) + 64 >= len)
			return devcg_err(err, -ENAMETOOLONG, "'%s': too long", hp_q(path));
		out[o++] = '/';
		memcpy(out + o, start, (size_t)(end - start));
		o += (size_t)(end - start);
		p = end;
	}
	if (!o)
		return devcg_err(err, -EINVAL, "'%s' is not a path for a device node", hp_q(path));
	out[o] = '\0';
	return 0;
}

static char type_char(uint8_t type)
{
	return type == DEVCG_BLOCK ? 'b' : 'c';
}

/* Fill in what the host node says: numbers (unless known), mode and owner
 * (unless set). Attach needs a host node or known numbers. */
static int host_info(struct hp_item *it, bool attach, struct devcg_error *err)
{
	struct stat st;

	if (!it->host_path || stat(it->host_path, &st)) {
		int code = it->host_path ? -errno : -ENOENT;

		if (attach && !it->known && !it->probe)
			return devcg_err(err, code, "%s: %s", hp_q(it->host_path ? it->host_path : it->path),
					 strerror(-code));
		/* a node made from a spec's numbers alone: as runtimes default it */
		if (!(it->set & DEVCG_HOTPLUG_SET_MODE))
			it->mode = 0666;
		if (attach && !it->probe) {
			free(it->host_path);
			it->host_path = NULL;
		}
		return 0;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		if (it->probe)
			return 0;
		return devcg_err(err, -EINVAL, "%s is not a device node", hp_q(it->host_path));
	}
	if (!it->known) {
		it->known = true;
		it->type = S_ISBLK(st.st_mode) ? DEVCG_BLOCK : DEVCG_CHAR;
		it->major = major(st.st_rdev);
		it->minor = minor(st.st_rdev);
	}
	if (!(it->set & DEVCG_HOTPLUG_SET_MODE))
		it->mode = st.st_mode & 07777;
	if (!(it->set & DEVCG_HOTPLUG_SET_UID))
		it->uid = st.st_uid;
	if (!(it->set & DEVCG_HOTPLUG_SET_GID))
		it->gid = st.st_gid;
	return 0;
}

/* The items of a call: DEVICES, then the CDI devices' nodes (with the other
 * devices of their specs as probes, for detach); one item per path. */
static int collect(const struct devcg_hotplug_device *devices, size_t count,
		   const struct devcg_hotplug_opts *opts, bool attach, struct hp_list *items,
		   struct devcg_error *err)
{
	const char *const *cdi = DEVCG_OPT(opts, devcg_hotplug_opts, cdi, NULL);
	const char *const *dirs = DEVCG_OPT(opts, devcg_hotplug_opts, cdi_spec_dirs, NULL);
	uint8_t access = DEVCG_OPT(opts, devcg_hotplug_opts, access, 0);
	size_t i, k;
	int ret = 0;

	if (access & ~DEVCG_ACC_ALL)
		return devcg_err(err, -EINVAL, "bad access 0x%x", access);
	for (i = 0; i < count; i++) {
		struct hp_item it = { 0 };

		if (!devices[i].host_path)
			return devcg_err(err, -EINVAL, "device %zu has no host path", i);
		if (devices[i].access & ~DEVCG_ACC_ALL)
			return devcg_err(err, -EINVAL, "%s: bad access 0x%x", hp_q(devices[i].host_path),
					 devices[i].access);
		it.host_path = (char *)devices[i].host_path;
		it.path = (char *)(devices[i].path ? devices[i].path : devices[i].host_path);
		it.access = devices[i].access ? devices[i].access : access ? access : DEVCG_ACC_ALL;
		it.set = devices[i].set & 7;
		it.mode = devices[i].mode & 07777;
		it.uid = devices[i].uid;
		it.gid = devices[i].gid;
		if (hp_list_add(items, &it))
			return devcg_err(err, -ENOMEM, "out of memory");
	}
	ret = hp_cdi_resolve(cdi, dirs, !attach, items, err);
	for (i = 0; !ret && i < items->n; i++) {
		struct hp_item *it = &items->v[i];
		char clean[PATH_MAX];

		ret = clean_path(it->path, clean, sizeof(clean), err);
		if (!ret) {
			free(it->path);
			it->path = strdup(clean);
			ret = it->path ? 0 : devcg_err(err, -ENOMEM, "out of memory");
		}
		if (!ret)
			ret = host_info(it, attach, err);
	}
	/* one item per path: the same device twice merges, two devices conflict */
	for (i = 0; !ret && i < items->n; i++) {
		for (k = i + 1; k < items->n;) {
			struct hp_item *a = &items->v[i], *b = &items->v[k];

			if (strcmp(a->path, b->path) || a->probe != b->probe) {
				k++;
				continue;
			}
			if (a->known && b->known &&
			    (a->type != b->type || a->major != b->major || a->minor != b->minor))
				return devcg_err(err, -EINVAL, "%s is named twice, for %c %u:%u and %c %u:%u",
						 hp_q(a->path), type_char(a->type), a->major, a->minor,
						 type_char(b->type), b->major, b->minor);
			a->access |= b->access;
			a->no_access &= b->no_access;
			a->common &= b->common;
			if (!a->note) {
				a->note = b->note;
				b->note = NULL;
			}
			hp_item_free(b);
			memmove(b, b + 1, (items->n - k - 1) * sizeof(*b));
			items->n--;
		}
	}
	if (!ret && items->n > HP_MAX_NODES)
		ret = devcg_err(err, -E2BIG, "%zu device nodes in one command (at most %d)", items->n,
				HP_MAX_NODES);
	if (!ret && !items->n)
		ret = devcg_err(err, -EINVAL, "no device given");
	/* What attach takes, detach must be able to take back: detach also
	 * looks at the other devices of the CDI specs, and those count. */
	if (!ret && attach && cdi && cdi[0]) {
		struct hp_list back = { 0 };

		ret = collect(devices, count, opts, false, &back, err);
		hp_list_free(&back);
		if (ret == -E2BIG)
			devcg_err_wrap(err, ret, "refused: detach could not take these devices back, since it "
				       "also looks at the other devices of their CDI specs");
	}
	return ret;
}

/* ---- the permission --------------------------------------------------------- */

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

static struct perm *perm_of(struct perms *ps, uint8_t type, uint32_t major, uint32_t minor)
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
		snprintf(buf, len, "%c *:* %s", type_char(ex->type), acc);
	else if (ex->major == DEVCG_ANY)
		snprintf(buf, len, "%c *:%u %s", type_char(ex->type), ex->minor, acc);
	else if (ex->minor == DEVCG_ANY)
		snprintf(buf, len, "%c %u:* %s", type_char(ex->type), ex->major, acc);
	else
		snprintf(buf, len, "%c %u:%u %s", type_char(ex->type), ex->major, ex->minor, acc);
}

static int apply(struct devcg_policy *p, uint8_t verb, const struct perm *k, uint8_t access,
		 struct devcg_error *err)
{
	struct devcg_rule r = { .verb = verb, .type = k->type, .access = access, .major = k->major,
				.minor = k->minor };

	return devcg_policy_apply(p, &r, err);
}

static int edit_attach(struct devcg_policy *p, void *ctx, struct devcg_error *err)
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
					 type_char(k->type), k->major, k->minor, text);
		}
		ret = apply(p, DEVCG_VERB_ALLOW, k, k->access, err);
		if (ret)
			return ret;
		if (devcg_policy_check(p, k->type, k->major, k->minor, k->access, &by, &decided) != 1) {
			exception_text(&by, text, sizeof(text));
			/* v1 trims only the exception with exactly this key */
			return devcg_err(err, -EPERM, "%c %u:%u cannot be allowed alone: the policy allows "
					 "by default and denies %s, which an allow of one device does not "
					 "lift", type_char(k->type), k->major, k->minor, decided ? text : "it");
		}
		k->action = DEVCG_PERM_ADDED;
		changed = true;
	}
	ps->changed = changed;
	return changed ? 0 : 1;
}

/* Take back what edit_attach() added, by key: the access it merged into an
 * allow exception, or gave back from a deny one. */
static int edit_undo(struct devcg_policy *p, void *ctx, struct devcg_error *err)
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

/* Put back what edit_detach() removed, by key: the access of the own
 * exception before it (a detach removes only on default deny). */
static int edit_redo(struct devcg_policy *p, void *ctx, struct devcg_error *err)
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

static const char *acc_text(uint8_t access, char buf[4])
{
	int n = 0;

	if (access & DEVCG_ACC_READ)
		buf[n++] = 'r';
	if (access & DEVCG_ACC_WRITE)
		buf[n++] = 'w';
	if (access & DEVCG_ACC_MKNOD)
		buf[n++] = 'm';
	buf[n] = '\0';
	return buf;
}

static int edit_detach(struct devcg_policy *p, void *ctx, struct devcg_error *err)
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
		snprintf(k->note, sizeof(k->note), "still allowed (%s) by %s%s", acc_text(left, acc),
			 decided ? text : "", by_default ? (decided ? " and the default" :
							    "the policy's default (allow); detach adds no deny") : "");
	}
	ps->changed = changed;
	return changed ? 0 : 1;
}

struct swap_out {
	bool swapped;
	bool others; /* programs not devcg's were detached (--force) */
	uint32_t prog_id, replaced_id;
	char systemd_unit[256];
	uint32_t systemd_entries;
};

/* The permission swap of a call: the edit over the keys, by compare-and-
 * swap, with the systemd step of devcg_update() (swap.c). IO says whether
 * the swap was made when the systemd step after it failed; an undo (IO's
 * no_widen) has no systemd step: the unit holds what it puts back. */
static int swap_perms(const struct target *t, const struct devcg_hotplug_opts *opts,
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
static int v1_perms(const struct target *t, devcg_policy_edit_fn edit, const struct perms *ps,
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
		for (size_t i = 0; !ret && edit == edit_attach && i < ps->n; i++) {
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
static int v1_put_back(const struct target *t, struct devcg_policy *before, struct devcg_error *err)
{
	int ret = before ? devcg_replace_v1(t->v1, before, err) : 0;

	devcg_policy_free(before);
	return ret < 0 ? ret : 0;
}

/* ---- holders ---------------------------------------------------------------- */

/*
 * The open files of the container's processes that are device nodes,
 * found without touching their file systems: a file on a FUSE mount whose
 * server stopped answering blocks a stat() for ever (fuse_getattr() asks
 * the server), after detach made its changes. So each fd is looked at
 * with statx(AT_STATX_DONT_SYNC) -- the attributes the kernel has, no
 * request to the file system (fs/fuse/dir.c, fuse_update_get_attr()) --
 * and in a child that the caller waits for HOLDERS_TIMEOUT_MS at most,
 * then kills: a file system that blocks anyway costs a few seconds and a
 * note, not the command.
 */
#define HOLDERS_TIMEOUT_MS 5000
#define MAX_OPEN_DEVS 4096

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
};

/* In the child: the entries of the directory DFD, by getdents64 (no
 * malloc after a fork of a threaded caller); FN(DFD, name, d_type, arg) for
 * each but "." and "..". */
static void each_entry(int dfd, void (*fn)(int, const char *, unsigned char, void *), void *arg)
{
	char buf[8192];
	long n;

	while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
		for (long off = 0; off < n;) {
			struct {
				uint64_t ino;
				int64_t off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(buf + off);

			off += d->reclen;
			if (strcmp(d->name, ".") && strcmp(d->name, ".."))
				fn(dfd, d->name, d->type, arg);
		}
	}
}

struct scan {
	int out;        /* the pipe to the parent */
	int32_t pid;
	char comm[16];
	size_t sent;
	int level;      /* of the cgroup scanned, below the container's */
};

static void scan_fd(int dfd, const char *name, unsigned char type, void *arg)
{
	struct scan *sc = arg;
	struct open_dev d = { .pid = sc->pid };
	struct statx stx;

	(void)type;
	if (sc->sent >= MAX_OPEN_DEVS ||
	    statx(dfd, name, AT_STATX_DONT_SYNC, STATX_TYPE, &stx) || !(stx.stx_mask & STATX_TYPE) ||
	    !(S_ISCHR(stx.stx_mode) || S_ISBLK(stx.stx_mode)))
		return;
	d.fd = (int32_t)strtol(name, NULL, 10);
	d.type = S_ISBLK(stx.stx_mode) ? DEVCG_BLOCK : DEVCG_CHAR;
	d.major = stx.stx_rdev_major;
	d.minor = stx.stx_rdev_minor;
	memcpy(d.comm, sc->comm, sizeof(d.comm));
	if (write(sc->out, &d, sizeof(d)) == (ssize_t)sizeof(d))
		sc->sent++;
}

static void scan_pid(struct scan *sc, int32_t pid)
{
	char path[64];
	ssize_t n;
	int fd;

	sc->pid = pid;
	memset(sc->comm, 0, sizeof(sc->comm));
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, sc->comm, sizeof(sc->comm) - 1);
		sc->comm[n > 0 ? n : 0] = '\0';
		sc->comm[strcspn(sc->comm, "\n")] = '\0';
		close(fd);
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return;
	each_entry(fd, scan_fd, sc);
	close(fd);
}

static void scan_cgroup(int cgfd, struct scan *sc);

static void scan_sub(int dfd, const char *name, unsigned char type, void *arg)
{
	struct scan *sc = arg;
	int fd;

	if (type != DT_DIR || sc->sent >= MAX_OPEN_DEVS)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	scan_cgroup(fd, sc);
	close(fd);
}

/* The processes of the cgroup CGFD and below (16 levels at most). */
static void scan_cgroup(int cgfd, struct scan *sc)
{
	char buf[4096], *p, *nl;
	size_t have = 0;
	ssize_t n;
	int fd = openat(cgfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
			have += (size_t)n;
			buf[have] = '\0';
			for (p = buf; (nl = strchr(p, '\n')); p = nl + 1) {
				*nl = '\0';
				scan_pid(sc, (int32_t)strtol(p, NULL, 10));
			}
			have = strlen(p);
			memmove(buf, p, have);
		}
		close(fd);
	}
	if (sc->level > 16)
		return;
	sc->level++;
	each_entry(cgfd, scan_sub, sc);
	sc->level--;
}

/*
 * The device nodes the processes of the cgroup CG (absolute) and below
 * hold open, read from a scanning process within HOLDERS_TIMEOUT_MS. The
 * scanner is a grandchild, not waited for: a process in a FUSE request the
 * server has read waits it out even after SIGKILL (fs/fuse/dev.c,
 * request_wait_answer()), so a wait for it could be for ever. It sends its
 * pid first, to be killed if it is late; a scan stuck for good ends when
 * its file system does, or at its next write (SIGPIPE). With STOP (a
 * testing aid), it stops itself first, as a scan stuck would.
 */
static void open_devs_read(const char *cg, bool stop, struct open_devs *od)
{
	struct timespec t0, t;
	struct open_dev d;
	int p[2], status;
	size_t got = 0;
	pid_t pid, scanner = 0;

	memset(od, 0, sizeof(*od));
	od->incomplete = true;
	if (pipe2(p, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		struct scan sc = { .out = p[1] };
		pid_t self;
		int fd;

		close(p[0]);
		/* the scanner is the grandchild: the caller waits only for us */
		pid = fork();
		if (pid != 0)
			_exit(pid < 0);
		self = getpid();
		if (write(p[1], &self, sizeof(self)) != (ssize_t)sizeof(self))
			_exit(1);
		if (stop)
			raise(SIGSTOP);
		fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd >= 0)
			scan_cgroup(fd, &sc);
		/* the end: a record of pid 0 */
		memset(&d, 0, sizeof(d));
		if (fd < 0 || write(p[1], &d, sizeof(d)) != (ssize_t)sizeof(d))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		struct pollfd pf = { .fd = p[0], .events = POLLIN };
		size_t want = scanner ? sizeof(d) : sizeof(scanner);
		char *into = scanner ? (char *)&d : (char *)&scanner;
		long left;
		ssize_t n;

		clock_gettime(CLOCK_MONOTONIC, &t);
		left = HOLDERS_TIMEOUT_MS - ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0 || (poll(&pf, 1, (int)left) < 0 && errno != EINTR))
			break;
		if (!pf.revents)
			continue;
		n = read(p[0], into + got, want - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got < want)
			continue;
		got = 0;
		if (into == (char *)&scanner)
			continue;
		if (!d.pid) {
			od->incomplete = false;
			break;
		}
		if (od->n < MAX_OPEN_DEVS) {
			struct open_dev *more = realloc(od->v, (od->n + 1) * sizeof(*more));

			if (more) {
				od->v = more;
				od->v[od->n++] = d;
			}
		}
	}
	close(p[0]);
	/* late: stuck in a file system, or stopped */
	if (od->incomplete && scanner > 0)
		kill(scanner, SIGKILL);
}

/* The holders of the device TYPE MAJOR:MINOR among OD. */
static void holders_of(const struct open_devs *od, uint8_t type, uint32_t maj, uint32_t min,
		       struct holders *h)
{
	for (size_t i = 0; i < od->n && h->n < MAX_HOLDERS; i++) {
		const struct open_dev *d = &od->v[i];
		struct devcg_hotplug_holder *more;

		if (d->type != type || d->major != maj || d->minor != min)
			continue;
		more = realloc(h->v, (h->n + 1) * sizeof(*h->v));
		if (!more)
			break;
		h->v = more;
		memset(&h->v[h->n], 0, sizeof(h->v[h->n]));
		h->v[h->n].pid = d->pid;
		h->v[h->n].fd = d->fd;
		memcpy(h->v[h->n].comm, d->comm, sizeof(h->v[h->n].comm));
		h->v[h->n].comm[sizeof(h->v[h->n].comm) - 1] = '\0';
		h->n++;
	}
}

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
	target_close(&c->t);
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

/*
 * A container whose directory is on the very file system of the host's
 * /dev (devtmpfs bind-mounted in, or a mount namespace without its own
 * /dev) or of the host node: making or removing a node there would change
 * the host's. Refused.
 */
/*
 * The mount point in the host's mount namespace -- init's (/proc/1) or
 * devcg's own -- of a file system of device DEV, in WHERE; false if the
 * host has none mounted. A node made on one (a container sharing the
 * host's /dev/shm, as --ipc=host does) would be the host's too.
 */
static bool host_mounted(dev_t dev, char *where, size_t size)
{
	static const char *const tables[] = { "/proc/1/mountinfo", "/proc/self/mountinfo" };
	char line[8192];
	bool found = false;

	for (size_t t = 0; t < 2 && !found; t++) {
		FILE *f = fopen(tables[t], "re");

		if (!f)
			continue;
		while (!found && fgets(line, sizeof(line), f)) {
			unsigned int maj, min;
			char mnt[4096];

			/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... */
			if (sscanf(line, "%*s %*s %u:%u %*s %4095s", &maj, &min, mnt) == 3 &&
			    makedev(maj, min) == dev) {
				snprintf(where, size, "%s", mnt);
				found = true;
			}
		}
		fclose(f);
	}
	return found;
}

static int host_fs_guard(const struct hp_item *it, const struct hp_node *n, struct devcg_error *err)
{
	char dir[PATH_MAX], *slash;
	struct stat st;

	if (it->probe || !n->dir_dev)
		return 0;
	if (!stat("/dev", &st) && st.st_dev == n->dir_dev)
		return devcg_err(err, -EXDEV, "%s: the container's directory is on the host's /dev file "
				 "system: devcg does not change the host's nodes", hp_q(n->path));
	if (host_mounted((dev_t)n->dir_dev, dir, sizeof(dir)))
		return devcg_err(err, -EXDEV, "%s: the container's directory is on a file system the host "
				 "has mounted too (on %s): devcg does not change the host's nodes", hp_q(n->path),
				 hp_q(dir));
	if (!it->host_path)
		return 0;
	snprintf(dir, sizeof(dir), "%s", it->host_path);
	slash = strrchr(dir, '/');
	if (slash)
		*(slash == dir ? slash + 1 : slash) = '\0';
	if (slash && !stat(dir, &st) && st.st_dev == n->dir_dev)
		return devcg_err(err, -EXDEV, "%s: the container's directory is on the file system of "
				 "the host node %s: devcg does not change the host's nodes", hp_q(n->path),
				 hp_q(it->host_path));
	return 0;
}

/* Resolve the container and the items, and start the child, which looks
 * at each node. */
static int call_start(struct call *c, const char *cgroup, const struct devcg_hotplug_device *devices,
		      size_t count, const struct devcg_hotplug_opts *opts, bool attach,
		      struct devcg_error *err)
{
	const char *fail_at = DEVCG_OPT(opts, devcg_hotplug_opts, fail_at, NULL);
	int ret;

	memset(c, 0, sizeof(*c));
	c->t.mntns_fd = c->t.root_fd = -1;
	c->child.sock = c->child.pid = -1;
	if ((ret = DEVCG_HOTPLUG_OPTS_VALID(opts, err)))
		return ret;
	ret = collect(devices, count, opts, attach, &c->items, err);
	if (!ret)
		ret = target_open(cgroup, DEVCG_OPT(opts, devcg_hotplug_opts, pid, 0), &c->t, err);
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
	ret = hp_child_start(&c->child, c->t.mntns_fd, c->t.root_fd, err);
	/* (a path that is no device node, or not reached, is left alone:
	 * attach_plan() and detach_plan() say so) */
	for (size_t i = 0; !ret && i < c->items.n; i++)
		if (c->child.sh->nodes[i].state != HP_NOT_DEV && c->child.sh->nodes[i].state != HP_BAD_PATH)
			ret = host_fs_guard(&c->items.v[i], &c->child.sh->nodes[i], err);
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
	memcpy(c->child.sh, old.sh, old.size);
	c->child.sh->trees = true;
	for (i = 0; i < c->items.n; i++)
		c->child.sh->nodes[i].dirs_at = 0;
	hp_child_stop(&old);
	return hp_child_start(&c->child, c->t.mntns_fd, c->t.root_fd, err);
}

static int add_perm(struct call *c, const struct hp_item *it)
{
	struct perm *k = perm_of(&c->perms, it->type, it->major, it->minor), *more;

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
					 type_char(it->type), it->major, it->minor);
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

int devcg_attach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
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
	ret = call_start(&c, cgroup, devices, count, opts, true, err);
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
	if (ret)
		goto out;
	/* first the v1 devices cgroup (hybrid hosts), put back if a later step fails */
	ret = v1_perms(&c.t, edit_attach, &c.perms, &v1_before, err);
	if (ret)
		goto out;
	ret = swap_perms(&c.t, opts, edit_attach, &c.perms, true, &c.swap, &io, err);
	if (ret && !io.swapped) {
		struct devcg_error e2 = { 0 };

		if (v1_put_back(&c.t, v1_before, &e2))
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
		int r1 = v1_put_back(&c.t, v1_before, &e1);

		v1_before = NULL;
		if (swap_perms(&c.t, opts, edit_undo, &c.perms, false, NULL, &uio, &e2))
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
		const struct perm *k = it->no_access ? NULL : perm_of(&c.perms, it->type, it->major, it->minor);
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
		struct perm *k = c->kept[i] && it->known ? perm_of(&c->perms, it->type, it->major, it->minor)
							   : NULL;

		if (k)
			*k = c->perms.v[--c->perms.n];
	}
	return 0;
}

int devcg_detach(const char *cgroup, const struct devcg_hotplug_device *devices, size_t count,
		 const struct devcg_hotplug_opts *opts, struct devcg_hotplug_result **result,
		 struct devcg_error *err)
{
	struct devcg_edit_io io = { 0 };
	struct devcg_policy *v1_before = NULL;
	struct devcg_error v1_err = { 0 };
	const char *fail_at = DEVCG_OPT(opts, devcg_hotplug_opts, fail_at, NULL);
	struct open_devs open = { 0 };
	struct call c;
	size_t i, e;
	int ret;

	if (result)
		*result = NULL;
	ret = call_start(&c, cgroup, devices, count, opts, false, err);
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
	ret = v1_perms(&c.t, edit_detach, &c.perms, &v1_before, err);
	if (!ret)
		ret = swap_perms(&c.t, opts, edit_detach, &c.perms, true, &c.swap, &io, err);
	if (ret && io.swapped) {
		/* the systemd step after the swap failed: the permission is put
		 * back (both layers), then the nodes */
		struct devcg_edit_io uio = { .no_widen = true };
		struct devcg_error e2 = { 0 };

		if (swap_perms(&c.t, opts, edit_redo, &c.perms, false, NULL, &uio, &e2)) {
			/* nodes and permission are both taken: as a detach leaves them */
			devcg_policy_free(v1_before);
			hp_child_cmd(&c.child, 'C', NULL);
			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed, and "
				       "putting the permission back failed too (%s): the nodes are removed and "
				       "the permission taken back", hp_q(c.t.rel), e2.msg);
			goto out;
		}
		if (v1_put_back(&c.t, v1_before, &v1_err))
			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed; the "
				       "permission is back on cgroup v2, but putting the cgroup v1 devices cgroup "
				       "%s back failed (%s)", hp_q(c.t.rel), hp_q(c.t.v1), v1_err.msg);
		else if (hp_child_cmd(&c.child, 'U', &e2))
			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed; the "
				       "permission is back, but putting the nodes back failed (%s)",
				       hp_q(c.t.rel), e2.msg);
		else
			devcg_err_wrap(err, ret, "the systemd step after the permission swap on %s failed; the "
				       "nodes and the permission are as before", hp_q(c.t.rel));
		goto out;
	}
	if (ret && v1_put_back(&c.t, v1_before, &v1_err))
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
	hp_child_cmd(&c.child, 'C', NULL);
	ret = make_result(&c, false, err);
	if (!ret)
		open_devs_read(c.t.cgroup, fail_at && !strcmp(fail_at, "stop-holders"), &open);
	for (i = 0, e = 0; !ret && i < c.items.n; i++) {
		const struct hp_item *it = &c.items.v[i];
		const struct hp_node *n = &c.child.sh->nodes[i];
		struct devcg_hotplug_entry *en;
		const struct perm *k;
		struct holders h;

		if (it->probe)
			continue;
		en = (struct devcg_hotplug_entry *)&c.r->entries[e++];
		k = it->no_access || !it->known || c.kept[i] ? NULL : perm_of(&c.perms, it->type, it->major,
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
		holders_of(&open, it->type, it->major, it->minor, &h);
		en->holders = h.v;
		en->nholders = h.n;
		if (open.incomplete) {
			char text[512];

			snprintf(text, sizeof(text), "%s%sthe processes holding it open may be more than listed: "
				 "their open files could not all be looked at within %d s", en->note ? en->note : "",
				 en->note ? "; " : "", HOLDERS_TIMEOUT_MS / 1000);
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
	call_free(&c);
	return ret;
}

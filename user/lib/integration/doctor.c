// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg doctor: why a container cannot open a device, and what will take
 * its access away later.
 *
 * Facts first: the nodes of the container's /dev (walked by fd from
 * /proc/PID/root, openat() with O_NOFOLLOW, statx() with
 * AT_SYMLINK_NOFOLLOW: the container's symbolic links are never followed;
 * directories entered only on /dev's own file system, checked to be the one
 * stat'ed; bounded in depth and entries), and the decision of r, w and m
 * by each layer: the v1 devices cgroup on a hybrid host, and each device
 * program that runs for the cgroup (devcg's and systemd's by their
 * policies, any other by devcg's reader of its instructions). Then the
 * findings, from those facts alone (doctor_find(), which the unit tests
 * call on facts they make).
 */
#include "integration/doctor.h"
#include "integration/devnodes.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* ---- facts ------------------------------------------------------------------ */

struct walk {
	struct devcg_doctor_result *r;
	dev_t dev;          /* /dev's own file system */
	uint64_t mnt_id;    /* /dev's mount */
	struct devcg_error *err;
};

static int add_node(void *ctx, const char *path, const struct statx *stx)
{
	struct walk *w = ctx;
	struct devcg_doctor_node n = { .present = true };

	if (strlen(path) >= sizeof(n.path))
		return 0;
	snprintf(n.path, sizeof(n.path), "%s", path);
	n.type = S_ISCHR(stx->stx_mode) ? DEVCG_CHAR : DEVCG_BLOCK;
	n.major = stx->stx_rdev_major;
	n.minor = stx->stx_rdev_minor;
	n.mode = stx->stx_mode & 07777;
	n.uid = stx->stx_uid;
	n.gid = stx->stx_gid;
	n.bind_mounted = makedev(stx->stx_dev_major, stx->stx_dev_minor) != w->dev ||
			 ((stx->stx_mask & STATX_MNT_ID) && stx->stx_mnt_id != w->mnt_id);
	return devcg_doctor_add_node(w->r, &n, w->err);
}

/* Walk PID's /dev into R (the nodes); its user namespace into R->userns. */
static int walk_dev(struct devcg_doctor_result *r, int pid, struct devcg_error *err)
{
	char root[64], ns[64];
	struct walk w = { .r = r, .err = err };
	struct statx stx;
	struct stat a, b;
	int pidfd, rfd, dfd, ret;

	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return devcg_err(err, -errno, "process %d: %s", pid, strerror(errno));
	snprintf(ns, sizeof(ns), "/proc/%d/ns/user", pid);
	r->userns = !stat(ns, &a) && !stat("/proc/self/ns/user", &b) && a.st_ino != b.st_ino;
	snprintf(root, sizeof(root), "/proc/%d/root", pid);
	/* the magic link is followed on purpose: it is the process's root */
	rfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	dfd = rfd < 0 ? -1 : openat(rfd, "dev", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	ret = dfd < 0 ? -errno : 0;
	if (rfd >= 0)
		close(rfd);
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0)) {
		ret = devcg_err(err, -ESRCH, "process %d: %s", pid, strerror(ESRCH));
		goto out;
	}
	if (dfd < 0) {
		ret = ret == -ENOENT || ret == -ENOTDIR || ret == -ELOOP ? 0 /* no /dev: no nodes */
			: devcg_err(err, ret, "/dev of process %d: %s", pid, strerror(-ret));
		goto out;
	}
	if (statx(dfd, "", AT_EMPTY_PATH | AT_STATX_DONT_SYNC, STATX_INO | STATX_MNT_ID, &stx)) {
		ret = devcg_err(err, -errno, "/dev of process %d: %s", pid, strerror(errno));
		goto out;
	}
	w.dev = makedev(stx.stx_dev_major, stx.stx_dev_minor);
	w.mnt_id = stx.stx_mnt_id;
	ret = devcg_dev_walk(dfd, STATX_MODE | STATX_UID | STATX_GID | STATX_MNT_ID, add_node, &w, err);
	dfd = -1;
	if (ret)
		devcg_err_wrap(err, ret, "/dev of process %d", pid);
out:
	if (dfd >= 0)
		close(dfd);
	close(pidfd);
	return ret;
}

/* The init process of runc's or crun's container ID, in the state
 * directory ROOT (the runtime's --root) or, NULL, in the usual ones: runc's
 * and crun's own, containerd's runc shim's namespaces, Docker's. */
static int container_pid(const char *id, const char *root, int *pid, struct devcg_error *err)
{
	static const char *const usual[] = { "/run/runc",
					     "/run/crun",
					     "/run/containerd/runc/k8s.io",
					     "/run/containerd/runc/moby",
					     "/run/containerd/runc/default",
					     "/run/docker/runtime-runc/moby" };
	static const struct { const char *file, *key; } states[] = {
		{ "state.json", "init_process_pid" }, /* runc's */
		{ "status", "pid" },                   /* crun's */
	};
	const char *const *roots = root ? &root : usual;
	size_t nroots = root ? 1 : sizeof(usual) / sizeof(usual[0]);
	char path[4096 + 300];

	if (!id[0] || strchr(id, '/') || !strcmp(id, ".") || !strcmp(id, "..") || strlen(id) > 256)
		return devcg_err(err, -EINVAL, "container id '%s' is not a name", id);
	if (root && (!root[0] || strlen(root) > 4096))
		return devcg_err(err, -EINVAL, "runtime root '%s' is not a directory name", root);
	for (size_t r = 0; r < nroots; r++)
		for (size_t i = 0; i < sizeof(states) / sizeof(states[0]); i++) {
			json_error_t je;
			json_t *state, *v;

			snprintf(path, sizeof(path), "%s/%s/%s", roots[r], id, states[i].file);
			state = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
			if (!state)
				continue;
			v = json_object_get(state, states[i].key);
			*pid = json_is_integer(v) && json_integer_value(v) > 0 && json_integer_value(v) < (1 << 22)
				       ? (int)json_integer_value(v) : 0;
			json_decref(state);
			if (*pid)
				return 0;
		}
	if (root)
		return devcg_err(err, -ENOENT, "container '%s': no runc or crun state with its process in %s "
				 "(%s/%s/state.json, %s/%s/status)", id, root, root, id, root, id);
	return devcg_err(err, -ENOENT, "container '%s': no runc or crun state with its process "
			 "(/run/runc/%s/state.json, /run/crun/%s/status, containerd's and Docker's; "
			 "another runtime root: --runtime-root)", id, id, id);
}

/* The first process of CGROUP. */
static int first_pid(const char *cgroup, int *pid, struct devcg_error *err)
{
	struct devcg_cgroup cg;
	char line[32];
	FILE *f = NULL;
	int fd, ret;

	*pid = 0;
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_READ, &cg, err);
	if (ret)
		return ret;
	fd = openat(cg.fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || !(f = fdopen(fd, "re"))) {
		ret = devcg_err(err, -errno, "%s/cgroup.procs: %s", devcg_cgroup_path(&cg), strerror(errno));
		if (fd >= 0)
			close(fd);
	} else if (fgets(line, sizeof(line), f)) {
		*pid = atoi(line);
	}
	if (f)
		fclose(f);
	devcg_cgroup_close(&cg);
	return ret;
}

/* "/dev/x" or "c 195:0" into N (not yet decided); -EINVAL when neither. */
static int parse_device(const char *s, struct devcg_doctor_node *n, struct devcg_error *err)
{
	char t, end;
	unsigned int maj, min;

	memset(n, 0, sizeof(*n));
	if (!strncmp(s, "/dev/", 5) && strlen(s) < sizeof(n->path) && !strstr(s, "/../") &&
	    strcmp(s + strlen(s) - 3, "/..")) {
		snprintf(n->path, sizeof(n->path), "%s", s);
		return 0;
	}
	if (sscanf(s, "%c %u:%u%c", &t, &maj, &min, &end) == 3 && (t == 'c' || t == 'b') &&
	    maj < 4096 && min < (1u << 20)) {
		n->type = t == 'c' ? DEVCG_CHAR : DEVCG_BLOCK;
		n->major = maj;
		n->minor = min;
		return 1;
	}
	return devcg_err(err, -EINVAL, "device '%s': neither a path in /dev nor 'TYPE MAJOR:MINOR'", s);
}

/* Decide N by every layer. READERS: a reader per layer for programs
 * without a policy (NULL: none could be opened). */
static void decide(struct devcg_doctor_result *r, const struct devcg_state *state, const struct devcg_policy *v1,
		   struct devcg_reader **readers, struct devcg_doctor_node *n)
{
	for (int a = 0; a < 3; a++)
		n->allowed[a] = 1;
	for (size_t l = 0; l < r->nlayers; l++) {
		const struct devcg_program *p = NULL;

		if (!strcmp(r->layers[l].kind, "v2")) {
			for (size_t i = 0; i < devcg_state_count(state); i++)
				if (devcg_state_program(state, i)->id == r->layers[l].prog_id)
					p = devcg_state_program(state, i);
		}
		for (int a = 0; a < 3; a++) {
			struct devcg_exception ex;
			bool decided;
			int v;

			if (!devcg_request_checked(n->type, n->major, n->minor, acc_bit[a]))
				v = 1;
			else if (!strcmp(r->layers[l].kind, "v1"))
				v = devcg_policy_check(v1, n->type, n->major, n->minor, acc_bit[a], &ex, &decided);
			else if (!p)
				v = -1;
			else if (p->policy)
				v = devcg_policy_check(p->policy, n->type, n->major, n->minor, acc_bit[a], &ex, &decided);
			else if (readers[l])
				v = devcg_reader_decide(readers[l], n->type, n->major, n->minor, acc_bit[a], NULL);
			else
				v = -1;
			n->decision[l][a] = (int8_t)(v < 0 ? -1 : v);
			if (n->decision[l][a] == 0)
				n->allowed[a] = 0;
			else if (n->decision[l][a] < 0 && n->allowed[a] == 1)
				n->allowed[a] = -1;
		}
	}
}

static bool known(const struct devcg_doctor_result *r, uint8_t type, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i].type == type && r->nodes[i].major == major && r->nodes[i].minor == minor)
			return true;
	return false;
}

/* The devices a policy allows by an exception of its own (exact numbers),
 * that the walk found no node of: as nodes not present. */
static int add_allowed(struct devcg_doctor_result *r, const struct devcg_policy *p, struct devcg_error *err)
{
	const struct devcg_exception *ex;
	size_t n;
	int ret = 0;

	if (!p || devcg_policy_default_allow(p))
		return 0;
	ex = devcg_policy_exceptions(p);
	n = devcg_policy_count(p);
	for (size_t i = 0; !ret && i < n; i++) {
		struct devcg_doctor_node node = { 0 };

		if (ex[i].major == DEVCG_ANY || ex[i].minor == DEVCG_ANY || !(ex[i].access & 6) ||
		    known(r, ex[i].type, ex[i].major, ex[i].minor))
			continue;
		node.type = ex[i].type;
		node.major = ex[i].major;
		node.minor = ex[i].minor;
		ret = devcg_doctor_add_node(r, &node, err);
	}
	return ret;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct devcg_doctor_node *)a)->path, ((const struct devcg_doctor_node *)b)->path);
}

int devcg_doctor(const char *cgroup, const struct devcg_doctor_opts *opts, struct devcg_doctor_result **result,
		 struct devcg_error *err)
{
	struct devcg_doctor_result *r = NULL, *walked = NULL;
	struct devcg_reader *readers[DEVCG_DOCTOR_MAX_LAYERS] = { 0 };
	struct devcg_state *state = NULL;
	struct devcg_policy *v1 = NULL, *unit_policy = NULL;
	const char *const *devices;
	char cgbuf[4096];
	int pid, ret;

	*result = NULL;
	ret = devcg_opts_check(opts, DEVCG_OPTS_END(devcg_doctor_opts, runtime_root), "devcg_doctor_opts", err);
	if (ret)
		return ret;
	pid = DEVCG_OPT(opts, devcg_doctor_opts, pid, 0);
	devices = DEVCG_OPT(opts, devcg_doctor_opts, devices, NULL);
	if (DEVCG_OPT(opts, devcg_doctor_opts, runtime_root, NULL) && !opts->container)
		return devcg_err(err, -EINVAL, "a runtime root is where a container id is looked up: give one");
	if (DEVCG_OPT(opts, devcg_doctor_opts, container, NULL)) {
		if (pid || cgroup)
			return devcg_err(err, -EINVAL, "a container id, a process and a cgroup: give one");
		ret = container_pid(opts->container, DEVCG_OPT(opts, devcg_doctor_opts, runtime_root, NULL), &pid,
				    err);
		if (ret)
			return ret;
	}
	if (pid && cgroup)
		return devcg_err(err, -EINVAL, "a process and a cgroup: give one");
	if (!pid && !cgroup)
		return devcg_err(err, -EINVAL, "no container: give a cgroup, a process or a container id");
	if (pid) {
		ret = devcg_pid_cgroup(pid, cgbuf, sizeof(cgbuf), err);
		if (ret)
			return ret;
		cgroup = cgbuf;
	} else {
		ret = first_pid(cgroup, &pid, err);
		if (ret)
			return ret;
	}
	r = devcg_doctor_new();
	walked = devcg_doctor_new();
	if (!r || !walked) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = devcg_state_read(cgroup, &state, err);
	if (ret)
		goto out;
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", devcg_state_cgroup(state));
	{
		char mnt[4096];

		if (!devcg_cgroup2_mount(mnt, sizeof(mnt), NULL))
			snprintf(r->cgroup_path, sizeof(r->cgroup_path), "%s%s", mnt,
				 strcmp(r->cgroup, "/") ? r->cgroup : "");
	}
	r->pid = pid;
	/* the v1 devices cgroup (hybrid host) */
	ret = pid ? devcg_pid_v1_cgroup(pid, r->v1_cgroup, sizeof(r->v1_cgroup), err)
		  : devcg_cgroup_v1_cgroup(cgroup, r->v1_cgroup, sizeof(r->v1_cgroup), err);
	if (ret > 0)
		ret = devcg_v1_read(r->v1_cgroup, &v1, NULL, err);
	if (ret < 0)
		goto out;
	if (v1) {
		struct devcg_doctor_layer l = { .kind = "v1", .owner = "v1" };

		snprintf(l.where, sizeof(l.where), "%s", r->v1_cgroup);
		ret = devcg_doctor_add_layer(r, &l, err);
		if (ret)
			goto out;
	}
	/* every device program that runs for the cgroup */
	for (size_t i = 0; i < devcg_state_count(state); i++) {
		const struct devcg_program *p = devcg_state_program(state, i);
		struct devcg_doctor_layer l = { .kind = "v2" };

		if (!p->effective)
			continue;
		snprintf(l.owner, sizeof(l.owner), "%s", p->devcg ? "devcg" : p->owner[0] ? p->owner : "unknown");
		l.prog_id = p->id;
		snprintf(l.where, sizeof(l.where), "%s", p->visible ? p->cgroup : "?");
		snprintf(l.unit, sizeof(l.unit), "%s", p->systemd_unit);
		if (!p->policy) {
			struct devcg_error rerr = { 0 };

			if (devcg_reader_open(-1, p->id, NULL, &readers[r->nlayers], &rerr))
				snprintf(l.why_unknown, sizeof(l.why_unknown), "%s", rerr.msg);
			else if (p->why_unreadable[0])
				snprintf(l.why_unknown, sizeof(l.why_unknown), "%s", p->why_unreadable);
		}
		ret = devcg_doctor_add_layer(r, &l, err);
		if (ret)
			goto out;
	}
	/* the unit systemd rebuilds its program from (systemd as PID 1) */
	{
		struct devcg_cgroup cg;

		if (!devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_READ, &cg, NULL)) {
			if (devcg_systemd_read(r->cgroup, cg.fd, r->unit, sizeof(r->unit), &unit_policy) != 1)
				r->unit[0] = '\0';
			devcg_cgroup_close(&cg);
		}
	}
	/* the nodes: walked, then chosen */
	if (pid) {
		ret = walk_dev(walked, pid, err);
		if (ret)
			goto out;
		r->userns = walked->userns;
		if (walked->nnodes)
			qsort(((struct doctor *)walked)->nodes, walked->nnodes, sizeof(struct devcg_doctor_node), by_path);
		((struct doctor *)r)->walked = walked;
	}
	if (devices) {
		for (size_t i = 0; devices[i]; i++) {
			struct devcg_doctor_node want;
			bool found = false;

			ret = parse_device(devices[i], &want, err);
			if (ret < 0)
				goto out;
			for (size_t k = 0; k < walked->nnodes; k++) {
				const struct devcg_doctor_node *n = &walked->nodes[k];

				if (ret == 0 ? !strcmp(n->path, want.path)
					     : n->type == want.type && n->major == want.major && n->minor == want.minor) {
					found = true;
					if ((ret = devcg_doctor_add_node(r, n, err)))
						goto out;
				}
			}
			if (!found && want.path[0]) {
				/* a path with no node: nothing to decide */
				want.type = DEVCG_CHAR;
				ret = devcg_doctor_add_node(r, &want, err);
			} else if (!found) {
				ret = devcg_doctor_add_node(r, &want, err);
			} else {
				ret = 0;
			}
			if (ret)
				goto out;
		}
	} else {
		for (size_t k = 0; k < walked->nnodes; k++)
			if ((ret = devcg_doctor_add_node(r, &walked->nodes[k], err)))
				goto out;
		ret = add_allowed(r, v1, err);
		for (size_t i = 0; !ret && i < devcg_state_count(state); i++)
			if (devcg_state_program(state, i)->effective)
				ret = add_allowed(r, devcg_state_program(state, i)->policy, err);
		if (ret)
			goto out;
	}
	for (size_t i = 0; i < r->nnodes; i++) {
		struct devcg_doctor_node *n = &((struct doctor *)r)->nodes[i];

		if (!n->present && n->path[0]) {
			/* a named path with no node: no numbers to decide */
			memset(n->decision, 0xff, sizeof(n->decision));
			memset(n->allowed, 0xff, sizeof(n->allowed));
			continue;
		}
		decide(r, state, v1, readers, n);
	}
	ret = devcg_doctor_find(r, unit_policy, err);
	((struct doctor *)r)->walked = NULL;
out:
	for (size_t i = 0; i < DEVCG_DOCTOR_MAX_LAYERS; i++)
		devcg_reader_free(readers[i]);
	devcg_policy_free(unit_policy);
	devcg_policy_free(v1);
	devcg_state_free(state);
	devcg_doctor_result_free(walked);
	if (ret) {
		devcg_doctor_result_free(r);
		return ret;
	}
	*result = r;
	return 0;
}

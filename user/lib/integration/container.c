// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Containers of a node agent (an NRI plugin): the calls of the agent's
 * events. StartContainer and Synchronize install a container's policy with
 * one devcg_replace() (which adopts the runtime's program and keeps a
 * systemd unit in step) and remember it in the container's state file
 * (container_state.c); PostUpdateContainer puts it back when the runtime
 * re-installed a program of its own; RemoveContainer forgets it.
 *
 * The policy is computed the way `devcg oci-hook` computes it from a
 * config.json: the container's linux.devices and linux.resources.devices
 * are given to the OCI parser as a minimal config.json, with the
 * runtime's profile (devcg_rules_parse(), opts.runtime), so that the
 * runtime's own defaults and order are those of the profiles, and nothing
 * here says them a second time.
 */
#include "integration/container.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The last field of each struct (see DEVCG_OPTS_VALID). */
#define CTR_VALID(c, err) DEVCG_OPTS_VALID(c, devcg_container, rules, err)
#define CTR_OPTS_VALID(o, err) DEVCG_OPTS_VALID(o, devcg_container_opts, systemd_entries, err)
/* The out fields are written only to a struct that has them all. */
#define CTR_OUTS(o) DEVCG_OPTS_HAS(o, devcg_container_opts, systemd_entries)

int ctr_cgroup_of_pid(int32_t pid, char *rel, size_t len, struct devcg_error *err)
{
	struct devcg_cgroup cg;
	char path[4096];
	int ret;

	ret = devcg_pid_cgroup(pid, path, sizeof(path), err);
	if (!ret)
		ret = devcg_cgroup_resolve(path, DEVCG_RESOLVE_WRITE, &cg, err);
	if (ret)
		return ret;
	if (strlen(devcg_cgroup_rel(&cg)) >= len)
		ret = devcg_err(err, -ENAMETOOLONG, "%s: path too long", devcg_cgroup_rel(&cg));
	else
		snprintf(rel, len, "%s", devcg_cgroup_rel(&cg));
	devcg_cgroup_close(&cg);
	return ret;
}

/* REL (relative to the cgroup2 mount, "/" first) as a path here. */
static int ctr_cgroup_path(const char *rel, char *buf, size_t len, struct devcg_error *err)
{
	char mnt[4096];
	int ret = devcg_cgroup2_mount(mnt, sizeof(mnt), err);

	if (!ret && (size_t)snprintf(buf, len, "%s%s", strcmp(mnt, "/") ? mnt : "", rel) >= len)
		ret = devcg_err(err, -ENAMETOOLONG, "%s%s: path too long", mnt, rel);
	return ret;
}

/* ---- the container's own policy ------------------------------------------- */

/* The minimal config.json of C: linux.devices and linux.resources.devices. */
static char *config_of(const struct devcg_container *c)
{
	json_t *root = json_object(), *lin = json_object(), *res = json_object(),
	       *devs = json_array(), *rules = json_array();
	char *text = NULL;
	int bad = !root || !lin || !res || !devs || !rules;

	for (size_t i = 0; !bad && i < c->ndevices; i++) {
		const struct devcg_container_device *d = &c->devices[i];
		char type[2] = { d->type, 0 };
		json_t *o = json_object();

		bad = !o || json_array_append_new(devs, o) ||
		      json_object_set_new(o, "path", json_string(d->path ? d->path : "")) ||
		      json_object_set_new(o, "type", json_string(type)) ||
		      json_object_set_new(o, "major", json_integer(d->major)) ||
		      json_object_set_new(o, "minor", json_integer(d->minor));
	}
	for (size_t i = 0; !bad && i < c->nrules; i++) {
		const struct devcg_container_rule *r = &c->rules[i];
		char type[2] = { r->type ? r->type : 'a', 0 };
		json_t *o = json_object();

		bad = !o || json_array_append_new(rules, o) ||
		      json_object_set_new(o, "allow", json_boolean(r->allow)) ||
		      json_object_set_new(o, "type", json_string(type)) ||
		      json_object_set_new(o, "access", json_string(r->access && r->access[0] ? r->access : "rwm"));
		if (!bad && r->major != -1)
			bad = json_object_set_new(o, "major", json_integer(r->major));
		if (!bad && r->minor != -1)
			bad = json_object_set_new(o, "minor", json_integer(r->minor));
	}
	if (!bad)
		bad = json_object_set_new(root, "ociVersion", json_string("1.0.2")) ||
		      json_object_set(root, "linux", lin) || json_object_set(lin, "devices", devs) ||
		      json_object_set(lin, "resources", res) || json_object_set(res, "devices", rules);
	if (!bad)
		text = json_dumps(root, JSON_COMPACT);
	json_decref(rules);
	json_decref(devs);
	json_decref(res);
	json_decref(lin);
	json_decref(root);
	return text;
}

static int runtime_policy(const struct devcg_container *c, enum devcg_runtime rt,
			  struct devcg_policy **out, struct devcg_error *err)
{
	DEVCG_OPTS(devcg_parse_opts, po, .runtime = rt);
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	char source[300], *text = config_of(c);
	int ret;

	snprintf(source, sizeof(source), "container %s's devices", c->id);
	if (!rules || !p || !text)
		ret = devcg_err(err, -ENOMEM, "out of memory");
	else if (!(ret = devcg_rules_parse(rules, text, strlen(text), source, &po, err)))
		ret = devcg_policy_apply_all(p, rules, err);
	free(text);
	devcg_rules_free(rules);
	if (ret) {
		devcg_policy_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

/* Is program P attached to the cgroup STATE is of (not an ancestor's)? */
static bool on_cgroup(const struct devcg_state *st, const struct devcg_program *p)
{
	return p->visible && !strcmp(p->cgroup, devcg_state_cgroup(st));
}

static bool systemds(const struct devcg_program *p)
{
	return p->systemd_unit[0] || !strcmp(p->name, DEVCG_SYSTEMD_PROG_NAME);
}

/* The runtime: by its handler's name; else by the owner of its program on
 * the cgroup; else runc's. */
static enum devcg_runtime runtime_of(const struct devcg_container *c, const struct devcg_state *st)
{
	const char *h = c->runtime_handler;

	if (!h || !h[0] || !strcmp(h, "runc"))
		return DEVCG_RUNTIME_RUNC;
	if (strstr(h, "crun"))
		return DEVCG_RUNTIME_CRUN;
	for (size_t i = 0; st && i < devcg_state_count(st); i++) {
		const struct devcg_program *p = devcg_state_program(st, i);

		if (on_cgroup(st, p) && !strcmp(p->owner, "crun"))
			return DEVCG_RUNTIME_CRUN;
		if (on_cgroup(st, p) && !strcmp(p->owner, "runc"))
			return DEVCG_RUNTIME_RUNC;
	}
	return DEVCG_RUNTIME_RUNC;
}

/* Is POLICY in place: devcg's program alone on the cgroup (beside
 * systemd's own), with that policy? Its id in *ID. */
static bool in_place(const struct devcg_state *st, const struct devcg_policy *policy, uint32_t *id)
{
	const struct devcg_program *own = devcg_state_own(st);
	size_t others = 0;

	for (size_t i = 0; i < devcg_state_count(st); i++) {
		const struct devcg_program *p = devcg_state_program(st, i);

		others += on_cgroup(st, p) && p != own && !systemds(p);
	}
	*id = own ? own->id : 0;
	return own && !others && own->policy && devcg_policy_equal(own->policy, policy);
}

/* ---- the calls ----------------------------------------------------------------- */

static int dup_str(char **out, const char *s)
{
	return s && !(*out = strdup(s)) ? -ENOMEM : 0;
}

/* Install the state's policy on its cgroup unless it is in place (with
 * only devcg's program KEEP_ID there, when given); fill OPTS. */
static int install(struct ctr_state *s, const struct devcg_state *st, uint32_t keep_id,
		   struct devcg_container_opts *opts, bool *swapped, struct devcg_error *err)
{
	char path[4096];
	DEVCG_OPTS(devcg_replace_opts, ro, .no_systemd = DEVCG_OPT(opts, devcg_container_opts, no_systemd, false),
		   .audit = DEVCG_OPT(opts, devcg_container_opts, audit, false),
		   .cache = DEVCG_OPT(opts, devcg_container_opts, cache, NULL));
	struct devcg_policy *policy = NULL;
	uint32_t id = 0;
	bool keep;
	int ret;

	ret = ctr_state_policy(s, &policy, err);
	if (ret)
		return ret;
	keep = in_place(st, policy, &id) && (!keep_id || id == keep_id);
	if (!keep) {
		if (ro.audit)
			ro.cache = NULL;
		ret = ctr_cgroup_path(s->cgroup, path, sizeof(path), err);
		if (!ret)
			ret = devcg_replace(path, policy, &ro, err);
		id = ro.prog_id;
	} else if (!ro.no_systemd) {
		/* in place, but maybe put there with no systemd step (a hook
		 * run with --no-systemd): the unit gets what it allows */
		ret = ctr_cgroup_path(s->cgroup, path, sizeof(path), err);
		if (!ret)
			ret = devcg_systemd_step(path, policy, ro.systemd_unit, sizeof(ro.systemd_unit),
						 &ro.systemd_entries, err);
	}
	devcg_policy_free(policy);
	if (ret)
		return ret;
	s->prog_id = id;
	*swapped = !keep;
	if (CTR_OUTS(opts)) {
		snprintf(opts->cgroup, sizeof(opts->cgroup), "%s", s->cgroup);
		opts->prog_id = id;
		opts->replaced_id = keep ? 0 : ro.replaced_id;
		opts->swapped = !keep;
		opts->runtime_used = s->runtime;
		memcpy(opts->systemd_unit, ro.systemd_unit, sizeof(opts->systemd_unit));
		opts->systemd_entries = ro.systemd_entries;
	}
	return 0;
}

static void opts_clear(struct devcg_container_opts *opts)
{
	if (!CTR_OUTS(opts))
		return;
	opts->cgroup[0] = '\0';
	opts->prog_id = opts->replaced_id = 0;
	opts->swapped = false;
	opts->runtime_used = DEVCG_RUNTIME_NONE;
	opts->systemd_unit[0] = '\0';
	opts->systemd_entries = 0;
}

int devcg_container_start(const struct devcg_container *c, struct devcg_container_opts *opts,
			  struct devcg_error *err)
{
	const char *dir = DEVCG_OPT(opts, devcg_container_opts, state_dir, NULL);
	struct ctr_state s = { 0 }, old;
	struct devcg_state *st = NULL;
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	char cgroup[4096], path[4096];
	bool swapped;
	int ret, pidfd = -1;

	if (!c)
		return devcg_err(err, -EINVAL, "no container");
	if ((ret = CTR_VALID(c, err)) || (ret = CTR_OPTS_VALID(opts, err)) || (ret = ctr_id_check(c->id, err)))
		return ret;
	opts_clear(opts);
	if ((c->ndevices && !c->devices) || (c->nrules && !c->rules))
		return devcg_err(err, -EINVAL, "container %s: a count of devices or rules without them", c->id);
	/* pin the process: the cgroup read is its own */
	pidfd = c->pid > 0 ? (int)syscall(SYS_pidfd_open, c->pid, 0) : -1;
	if (c->pid > 0 && pidfd < 0 && errno != ENOSYS)
		return devcg_err(err, -errno, "container %s: process %d %s", c->id, c->pid,
				 errno == ESRCH ? "is gone" : strerror(errno));
	ret = ctr_cgroup_of_pid(c->pid, cgroup, sizeof(cgroup), err);
	if (!ret && pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0))
		ret = devcg_err(err, -errno, "process %d %s", c->pid, errno == ESRCH ? "is gone" : strerror(errno));
	if (pidfd >= 0)
		close(pidfd);
	if (!ret)
		ret = ctr_dir_open(dir, true, &d, err);
	if (!ret)
		ret = ctr_dir_lock(&d, c->id, err);
	if (!ret)
		ret = ctr_cgroup_path(cgroup, path, sizeof(path), err);
	if (!ret)
		ret = devcg_state_read(path, &st, err);
	if (ret)
		goto out;
	ret = ctr_state_load(&d, c->id, &old, err);
	if (ret && ret != -ENOENT)
		goto out;
	if (!ret && !strcmp(old.cgroup, cgroup)) {
		/* the agent restarted: what it remembers, hot-plugged devices too */
		s.baseline = old.baseline;
		s.hot = old.hot;
		s.nhot = old.nhot;
		s.runtime = old.runtime;
		old.baseline = NULL;
		old.hot = NULL;
		old.nhot = 0;
	}
	if (!ret)
		ctr_state_clear(&old);
	ret = 0;
	if (!s.baseline) {
		const struct devcg_program *own = devcg_state_own(st);

		s.runtime = runtime_of(c, st);
		if (own && own->policy) /* devcg's OCI hook was there first */
			ret = (s.baseline = devcg_policy_dup(own->policy)) ? 0 : devcg_err(err, -ENOMEM, "out of memory");
		else
			ret = runtime_policy(c, s.runtime, &s.baseline, err);
	}
	if (ret)
		goto out;
	snprintf(s.id, sizeof(s.id), "%s", c->id);
	snprintf(s.cgroup, sizeof(s.cgroup), "%s", cgroup);
	s.pid = c->pid;
	if (dup_str(&s.name, c->name) || dup_str(&s.pod_name, c->pod_name) ||
	    dup_str(&s.pod_namespace, c->pod_namespace) || dup_str(&s.pod_uid, c->pod_uid)) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = install(&s, st, 0, opts, &swapped, err);
	if (!ret)
		ret = ctr_state_save(&d, &s, err);
out:
	if (ret)
		devcg_err_wrap(err, ret, "container %s", c->id);
	if (ret)
		opts_clear(opts);
	devcg_state_free(st);
	ctr_state_clear(&s);
	ctr_dir_close(&d);
	return ret;
}

int devcg_container_updated(const struct devcg_container *c, struct devcg_container_opts *opts,
			    struct devcg_error *err)
{
	const char *dir = DEVCG_OPT(opts, devcg_container_opts, state_dir, NULL);
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	struct devcg_state *st = NULL;
	struct ctr_state s = { 0 };
	bool swapped = false;
	char path[4096];
	int ret;

	if (!c)
		return devcg_err(err, -EINVAL, "no container");
	if ((ret = CTR_VALID(c, err)) || (ret = CTR_OPTS_VALID(opts, err)) || (ret = ctr_id_check(c->id, err)))
		return ret;
	opts_clear(opts);
	ret = ctr_dir_open(dir, false, &d, err);
	if (ret == -ENOENT)
		return devcg_err(err, -ENOENT, "container %s: devcg has no state of it", c->id);
	if (!ret)
		ret = ctr_dir_lock(&d, c->id, err);
	if (!ret) {
		ret = ctr_state_load(&d, c->id, &s, err);
		if (ret == -ENOENT)
			devcg_err(err, ret, "no state of it in %s", d.path);
	}
	if (!ret)
		ret = ctr_cgroup_path(s.cgroup, path, sizeof(path), err);
	if (!ret)
		ret = devcg_state_read(path, &st, err);
	/* nothing to do unless a program other than devcg's remembered one
	 * (and systemd's own) is on the cgroup: in_place() with its id */
	if (!ret)
		ret = install(&s, st, s.prog_id, opts, &swapped, err);
	if (!ret && swapped)
		ret = ctr_state_save(&d, &s, err);
	if (ret) {
		devcg_err_wrap(err, ret, "container %s", c->id);
		opts_clear(opts);
	}
	devcg_state_free(st);
	ctr_state_clear(&s);
	ctr_dir_close(&d);
	return ret;
}

int devcg_container_forget(const char *id, const struct devcg_container_opts *opts, struct devcg_error *err)
{
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	int ret;

	if ((ret = CTR_OPTS_VALID(opts, err)) || (ret = ctr_id_check(id, err)))
		return ret;
	ret = ctr_dir_open(DEVCG_OPT(opts, devcg_container_opts, state_dir, NULL), false, &d, err);
	if (ret == -ENOENT)
		return 0;
	if (!ret)
		ret = ctr_dir_lock(&d, id, err);
	if (!ret)
		ret = ctr_state_remove(&d, id, err);
	ctr_dir_close(&d);
	if (ret)
		devcg_err_wrap(err, ret, "container %s", id);
	return ret;
}

/* Is NAME "ID.json" with ID among IDS, or not a state file at all? */
static bool kept_or_other(const char *name, const char *const *ids, size_t n, char *id)
{
	size_t len = strlen(name);

	if (len <= 5 || len - 5 > CTR_ID_MAX || strcmp(name + len - 5, ".json"))
		return true;
	snprintf(id, CTR_ID_MAX + 1, "%.*s", (int)(len - 5), name);
	if (ctr_id_check(id, NULL))
		return true;
	for (size_t i = 0; i < n; i++)
		if (ids[i] && !strcmp(ids[i], id))
			return true;
	return false;
}

int devcg_container_prune(const char *const *ids, size_t n, const struct devcg_container_opts *opts,
			  size_t *pruned, struct devcg_error *err)
{
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	char id[CTR_ID_MAX + 1];
	struct dirent *e;
	size_t count = 0;
	int ret, fd;
	DIR *dir;

	if (pruned)
		*pruned = 0;
	if ((ret = CTR_OPTS_VALID(opts, err)))
		return ret;
	if (n && !ids)
		return devcg_err(err, -EINVAL, "%zu container IDs but no list", n);
	ret = ctr_dir_open(DEVCG_OPT(opts, devcg_container_opts, state_dir, NULL), false, &d, err);
	if (ret == -ENOENT)
		return 0;
	if (ret)
		return ret;
	fd = dup(d.fd);
	dir = fd < 0 ? NULL : fdopendir(fd);
	if (!dir) {
		ret = devcg_err(err, -errno, "state directory %s: %s", d.path, strerror(errno));
		if (fd >= 0)
			close(fd);
		ctr_dir_close(&d);
		return ret;
	}
	/* each under its own lock, as forget takes it: a start of the same
	 * container meanwhile waits, and then writes its state anew */
	while (!ret && (e = readdir(dir))) {
		if (kept_or_other(e->d_name, ids, n, id))
			continue;
		ret = devcg_container_forget(id, opts, err);
		count += !ret;
	}
	closedir(dir);
	ctr_dir_close(&d);
	if (pruned)
		*pruned = count;
	return ret;
}

int devcg_container_find(const char *id, const char *state_dir, int32_t *pid, char *cgroup, size_t len,
			 struct devcg_error *err)
{
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	struct devcg_error e2 = { 0 };
	struct ctr_state s = { 0 };
	char now[4096];
	int ret;

	if ((ret = ctr_id_check(id, err)))
		return ret;
	ret = ctr_dir_open(state_dir, false, &d, err);
	if (!ret) {
		ret = ctr_state_load(&d, id, &s, err);
		if (ret == -ENOENT)
			devcg_err(err, ret, "container %s: devcg has no state of it in %s (is the agent running?)",
				  id, d.path);
	} else if (ret == -ENOENT) {
		devcg_err_wrap(err, ret, "container %s: no state directory", id);
	}
	ctr_dir_close(&d);
	if (ret)
		return ret;
	/* checked live: the process is still there and in that cgroup */
	if (kill(s.pid, 0) && errno == ESRCH)
		ret = devcg_err(err, -ENOENT, "container %s: its process %d is gone", id, s.pid);
	else if (ctr_cgroup_of_pid(s.pid, now, sizeof(now), &e2) || strcmp(now, s.cgroup))
		ret = devcg_err(err, -ENOENT, "container %s: its process %d is no longer in its cgroup %s%s%s", id,
				s.pid, s.cgroup, e2.msg[0] ? ": " : "", e2.msg);
	else if (cgroup)
		ret = ctr_cgroup_path(s.cgroup, cgroup, len, err);
	if (!ret && pid)
		*pid = s.pid;
	ctr_state_clear(&s);
	return ret;
}

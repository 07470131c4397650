// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgroup v1 hosts: move a devices cgroup to a new policy by writes that
 * never take away a device both the old and the new policy allow. The
 * current state comes from devices.list, which shows the exceptions of a
 * default-deny cgroup but only "a *:* rwm" for a default-allow one
 * (devcgroup_seq_show() in security/device_cgroup.c).
 */
#include "live/live.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

/* DIR names the directory DFD in messages; files are opened relative to DFD,
 * so no joined path can be shortened onto another file. */
static int write_rule(int dfd, const char *dir, const struct devcg_rule *r, struct devcg_error *err)
{
	const char *file = r->verb == DEVCG_VERB_ALLOW ? "devices.allow" : "devices.deny";
	const char *text;
	char line[64];
	ssize_t n;
	int fd;

	devcg_rule_format(r, line, sizeof(line));
	text = strchr(line, ' ') + 1; /* the kernel takes the rule without its verb */
	fd = openat(dfd, file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return devcg_err(err, -errno, "%s/%s: %s", dir, file, strerror(errno));
	n = write(fd, text, strlen(text));
	close(fd);
	if (n < 0)
		return devcg_err(err, -errno, "%s/%s: writing '%s': %s", dir, file, text, strerror(errno));
	return 0;
}

/* DIR/devices.list, whole. */
static int read_devices_list(int dfd, const char *dir, char **out, size_t *out_len,
			     struct devcg_error *err)
{
	/* a short line per exception: bounds what is worth reading */
	const size_t max = (size_t)DEVCG_MAX_RULES * 64;
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap), *nbuf;
	ssize_t got = 1;
	int fd = openat(dfd, "devices.list", O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0) {
		ret = devcg_err(err, -errno, "%s/devices.list: %s", dir, strerror(errno));
		free(buf);
		return ret;
	}
	if (!buf)
		ret = devcg_err(err, -ENOMEM, "out of memory");
	while (!ret && got > 0) {
		if (len + 1 >= cap) {
			nbuf = len < max ? realloc(buf, cap * 2) : NULL;
			if (!nbuf) {
				ret = devcg_err(err, len < max ? -ENOMEM : -E2BIG,
						"%s/devices.list: %s", dir,
						len < max ? "out of memory" : "too large");
				break;
			}
			buf = nbuf;
			cap *= 2;
		}
		got = read(fd, buf + len, cap - len - 1);
		if (got < 0)
			ret = devcg_err(err, -errno, "%s/devices.list: %s", dir, strerror(errno));
		else
			len += (size_t)got;
	}
	close(fd);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

/* The current policy when the default is deny; *visible false when allow. */
static int read_list(int dfd, const char *dir, struct devcg_policy **out, bool *visible,
		     struct devcg_error *err)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *policy = devcg_policy_new();
	struct devcg_rule deny_all = { .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL,
				       .access = DEVCG_ACC_ALL, .major = DEVCG_ANY, .minor = DEVCG_ANY };
	char source[PATH_MAX + 16], *text = NULL;
	size_t len = 0;
	int ret;

	snprintf(source, sizeof(source), "%s/devices.list", dir); /* names it in messages */
	ret = rules && policy ? 0 : devcg_err(err, -ENOMEM, "out of memory");
	if (!ret)
		ret = devcg_rules_add(rules, &deny_all, err);
	if (!ret)
		ret = read_devices_list(dfd, dir, &text, &len, err);
	if (!ret)
		ret = devcg_rules_parse(rules, text, len, source, NULL, err);
	free(text);
	/* "a *:* rwm" after our "deny a" turns the default back to allow */
	if (!ret)
		ret = devcg_policy_apply_all(policy, rules, err);
	devcg_rules_free(rules);
	if (ret) {
		devcg_policy_free(policy);
		return ret;
	}
	*visible = !devcg_policy_default_allow(policy);
	*out = policy;
	return 0;
}

/* Write R and keep CUR in step with what the kernel now holds. */
static int write_and_apply(int dfd, const char *dir, struct devcg_policy *cur,
			   const struct devcg_rule *r, struct devcg_error *err)
{
	return write_rule(dfd, dir, r, err) ?: devcg_policy_apply(cur, r, err);
}

/* DIR as an open cgroup v1 directory that devcg may write: not empty, not
 * longer than a path, not a hierarchy's root (nor its mount's). */
static int open_v1_dir(const char *dir, struct devcg_error *err)
{
	char path[PATH_MAX];
	struct statfs sfs;
	int dfd, ret;

	if (!dir[0])
		return devcg_err(err, -EINVAL, "empty cgroup v1 directory argument (an unset "
				 "variable?); devcg never writes the root cgroup's device policy");
	if (strlen(dir) >= PATH_MAX)
		return devcg_err(err, -ENAMETOOLONG, "directory argument of %zu bytes is longer "
				 "than a path can be (%d): refused, never shortened",
				 strlen(dir), PATH_MAX - 1);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return devcg_err(err, -errno, "%s: %s", dir, strerror(errno));
	if (fstatfs(dfd, &sfs)) {
		ret = devcg_err(err, -errno, "%s: %s", dir, strerror(errno));
	} else if (sfs.f_type != CGROUP_SUPER_MAGIC) {
		ret = devcg_err(err, -ENOTDIR, "%s is not a cgroup v1 directory", dir);
	} else {
		ret = devcg_cgroup_refuse_root(dfd, dir, realpath(dir, path) ? path : dir,
					       "cgroup v1", err);
	}
	if (ret) {
		close(dfd);
		return ret;
	}
	return dfd;
}

int devcg_replace_v1(const char *dir, const struct devcg_policy *target, struct devcg_error *err)
{
	bool target_allow = devcg_policy_default_allow(target), visible;
	/* on default deny the exceptions are allows, on default allow denies */
	uint8_t add = target_allow ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW;
	uint8_t trim = target_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
	size_t i, nwant = devcg_policy_count(target), nhave;
	struct devcg_exception *want = NULL, *have = NULL;
	struct devcg_policy *cur, *check;
	int ret, moments = 0, dfd;

	dfd = open_v1_dir(dir, err);
	if (dfd < 0)
		return dfd;
	ret = read_list(dfd, dir, &cur, &visible, err);
	if (ret) {
		close(dfd);
		return devcg_err_wrap(err, ret, "%s is not a cgroup v1 devices directory", dir);
	}

	if (!visible || target_allow != devcg_policy_default_allow(cur)) {
		/*
		 * The default must change, or a default-allow cgroup hides its
		 * exceptions: only 'a' gets to a known state. Towards allow this
		 * widens for a moment; towards deny it is the one window cgroup v1
		 * cannot avoid, reported to the caller.
		 */
		struct devcg_rule r = { .verb = target_allow ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY,
					.type = DEVCG_ALL, .access = DEVCG_ACC_ALL,
					.major = DEVCG_ANY, .minor = DEVCG_ANY };

		moments = target_allow ? DEVCG_V1_ALLOW_ALL_MOMENT : DEVCG_V1_DENY_ALL_MOMENT;
		ret = write_and_apply(dfd, dir, cur, &r, err);
		if (ret)
			goto out;
	}
	want = calloc(nwant ? nwant : 1, sizeof(*want));
	if (!want) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	devcg_policy_collect(target, want);
	/* first every exception of the target: on default deny these are
	 * allows, so nothing allowed before is taken away */
	for (i = 0; !ret && i < nwant; i++) {
		struct devcg_rule r = { .verb = add, .type = want[i].type, .access = want[i].access,
					.major = want[i].major, .minor = want[i].minor };

		ret = write_and_apply(dfd, dir, cur, &r, err);
	}
	/* then trim what the target does not have, exact key by exact key */
	nhave = devcg_policy_count(cur);
	have = ret ? NULL : calloc(nhave ? nhave : 1, sizeof(*have));
	if (!ret && !have)
		ret = devcg_err(err, -ENOMEM, "out of memory");
	if (!ret)
		devcg_policy_collect(cur, have);
	for (i = 0; !ret && i < nhave; i++) {
		uint8_t extra = have[i].access & ~devcg_policy_access_of(target, &have[i]);
		struct devcg_rule r = { .verb = trim, .type = have[i].type, .access = extra,
					.major = have[i].major, .minor = have[i].minor };

		if (extra)
			ret = write_and_apply(dfd, dir, cur, &r, err);
	}
	/* what the kernel now lists must be the target, where it shows it */
	if (!ret && !target_allow && !(ret = read_list(dfd, dir, &check, &visible, err))) {
		if (!devcg_policy_equal(check, target))
			ret = devcg_err(err, -EPROTO, "%s: devices.list does not match the policy "
					"after the transition", dir);
		devcg_policy_free(check);
	}
out:
	close(dfd);
	free(want);
	free(have);
	devcg_policy_free(cur);
	return ret ? ret : moments;
}

/* ---- hybrid hosts: the v1 devices cgroup beside a cgroup v2 one ---------- */

/*
 * On a hybrid host (cgroup v1 controllers beside a cgroup2 mount) both
 * layers decide every open: the device programs on the unified hierarchy
 * (devcgroup_check_permission() runs the BPF_CGROUP_DEVICE programs first)
 * and the v1 devices controller of the process's cgroup there. A runtime
 * that sees no cgroup2 on /sys/fs/cgroup (runc, crun on such a host) puts a
 * container's device list in its v1 devices cgroup.
 */

/* Does DIR/cgroup.procs list PID? DFD is DIR. */
static bool v1_holds(int dfd, int pid)
{
	int fd = openat(dfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	char line[32];
	bool found = false;
	FILE *f = fd >= 0 ? fdopen(fd, "re") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	while (!found && fgets(line, sizeof(line), f))
		found = atoi(line) == pid;
	fclose(f);
	return found;
}

/* Is "devices" among the comma-separated options OPTS? */
static bool has_devices(const char *opts)
{
	size_t n = strlen("devices");

	for (const char *p = opts; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, "devices", n) && (p[n] == ',' || p[n] == '\0' || p[n] == ' ' || p[n] == '\n'))
			return true;
	return false;
}

/*
 * REL (the devices: path of /proc/PID/cgroup) through a v1 devices mount of
 * this mount namespace whose root contains it, and which lists PID there:
 * 1 and its path in BUF, 0 when no v1 devices hierarchy is mounted, or an
 * error. *MOUNTED says whether one is.
 */
static int v1_through_mount(const char *rel, int pid, char *buf, size_t len, bool *mounted,
			    struct devcg_error *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int ret = 0;

	*mounted = false;
	if (!f)
		return devcg_err(err, -errno, "cannot read /proc/self/mountinfo: %s", strerror(errno));
	while (ret == 0 && getline(&line, &cap, f) > 0) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE SOURCE SUPER */
		char *sep = strstr(line, " - "), *super, root[PATH_MAX], mnt[PATH_MAX], full[PATH_MAX];
		size_t rlen;
		struct statfs sfs;
		int dfd, n;

		if (!sep || strncmp(sep + 3, "cgroup ", 7))
			continue;
		super = strrchr(sep + 3, ' ');
		if (!super || !has_devices(super + 1))
			continue;
		*mounted = true;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		devcg_mountinfo_unescape(root);
		devcg_mountinfo_unescape(mnt);
		rlen = strcmp(root, "/") ? strlen(root) : 0;
		if (!rel || strncmp(rel, root, rlen) || (rel[rlen] != '/' && rel[rlen] != '\0'))
			continue;
		n = snprintf(full, sizeof(full), "%s%s", strcmp(mnt, "/") ? mnt : "", rel + rlen);
		if (n < 0 || (size_t)n >= sizeof(full) || (size_t)n >= len)
			continue;
		dfd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (!fstatfs(dfd, &sfs) && sfs.f_type == CGROUP_SUPER_MAGIC && v1_holds(dfd, pid)) {
			snprintf(buf, len, "%s", full);
			ret = 1;
		}
		close(dfd);
	}
	free(line);
	fclose(f);
	return ret;
}

int devcg_v1_of_pid(int pid, bool writer, char *buf, size_t len, struct devcg_error *err)
{
	char rel[4096], v1[4096], own[4096];
	bool mounted;
	int ret;

	if (len)
		buf[0] = '\0';
	if (pid <= 0)
		return devcg_err(err, -EINVAL, "pid %d: not a process", pid);
	ret = devcg_proc_cgroup(pid, rel, sizeof(rel), v1, sizeof(v1), err);
	if (ret)
		return ret;
	/* the root of the v1 devices hierarchy (v1 "") restricts nothing */
	if (!v1[0])
		return 0;
	if (strstr(v1, " (deleted)"))
		return devcg_err(err, -ENOENT, "process %d: its cgroup v1 devices cgroup %s was removed",
				 pid, v1);
	if (writer) {
		ret = devcg_proc_cgroup(0, rel, sizeof(rel), own, sizeof(own), err);
		if (ret)
			return ret;
		if (!strcmp(own, v1))
			return devcg_err(err, -EPERM, "process %d is in this process's own cgroup v1 devices "
					 "cgroup %s: devcg does not change its devices there", pid, v1);
	}
	ret = v1_through_mount(v1, pid, buf, len, &mounted, err);
	if (ret < 0)
		return ret;
	if (!ret && mounted)
		return devcg_err(err, -ENOENT, "process %d is in the cgroup v1 devices cgroup %s, which no "
				 "devices mount of this mount namespace shows with the process in it", pid, v1);
	return ret;
}

int devcg_pid_v1_cgroup(int pid, char *buf, size_t len, struct devcg_error *err)
{
	return devcg_v1_of_pid(pid, false, buf, len, err);
}

int devcg_v1_of_cgroup(const char *cgroup, bool writer, char *buf, size_t len, struct devcg_error *err)
{
	struct devcg_cgroup cg;
	char one[PATH_MAX], q[1024], seen[4096] = "";
	int fd, ret, found = 0;
	char line[32];
	FILE *f;

	if (len)
		buf[0] = '\0';
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_READ, &cg, err);
	if (ret)
		return ret;
	/* a root holds no container (every process of the machine may be
	 * there, in v1 cgroups of their own); the writers refuse it anyway */
	if (!strcmp(devcg_cgroup_rel(&cg), "/")) {
		devcg_cgroup_close(&cg);
		return 0;
	}
	fd = openat(cg.fd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "re") : NULL;
	if (!f) {
		ret = devcg_err(err, -errno, "%s/cgroup.procs: %s",
				devcg_quote(q, sizeof(q), cgroup, (size_t)-1), strerror(errno));
		if (fd >= 0)
			close(fd);
		devcg_cgroup_close(&cg);
		return ret;
	}
	/* every process of the cgroup: they must all be in the same one (the
	 * mounts are searched once per cgroup that /proc/PID/cgroup names) */
	while (ret >= 0 && fgets(line, sizeof(line), f)) {
		struct devcg_error e2 = { 0 };
		char v2rel[4096], v1rel[4096];
		int pid = atoi(line), r;

		r = devcg_proc_cgroup(pid, v2rel, sizeof(v2rel), v1rel, sizeof(v1rel), &e2);
		if (r || !v1rel[0] || (found && !strcmp(v1rel, seen)))
			continue; /* gone meanwhile, the v1 root, or the cgroup found already */
		snprintf(seen, sizeof(seen), "%s", v1rel);
		r = devcg_v1_of_pid(pid, writer, one, sizeof(one), &e2);
		if (r == -ESRCH)
			continue; /* gone meanwhile */
		if (r < 0) {
			ret = devcg_err(err, r, "%s", e2.msg);
		} else if (r > 0 && !found) {
			snprintf(buf, len, "%s", one);
			found = 1;
		} else if (r > 0 && strcmp(buf, one)) {
			ret = devcg_err(err, -EXDEV, "the processes of %s are in several cgroup v1 devices "
					"cgroups (%s, %s): set each with 'devcg replace --v1 DIR'",
					devcg_quote(q, sizeof(q), cgroup, (size_t)-1), buf, one);
		}
	}
	fclose(f);
	devcg_cgroup_close(&cg);
	if (ret < 0 && len)
		buf[0] = '\0';
	return ret < 0 ? ret : found;
}

int devcg_cgroup_v1_cgroup(const char *cgroup, char *buf, size_t len, struct devcg_error *err)
{
	return devcg_v1_of_cgroup(cgroup, false, buf, len, err);
}

int devcg_v1_read(const char *dir, struct devcg_policy **policy, bool *complete,
		  struct devcg_error *err)
{
	bool visible;
	int dfd, ret;

	dfd = open_v1_dir(dir, err);
	if (dfd < 0)
		return dfd;
	ret = read_list(dfd, dir, policy, &visible, err);
	close(dfd);
	if (ret)
		return devcg_err_wrap(err, ret, "%s is not a cgroup v1 devices directory", dir);
	if (complete)
		*complete = visible;
	return 0;
}

int devcg_update_v1(const char *dir, const struct devcg_rule *rule, struct devcg_error *err)
{
	int dfd = open_v1_dir(dir, err), ret;

	if (dfd < 0)
		return dfd;
	ret = write_rule(dfd, dir, rule, err);
	close(dfd);
	return ret;
}

/* RULES written one by one to DIR's devices.allow or devices.deny, in
 * order (each write is exactly the rule's v1 meaning). */
static int update_v1_rules(const char *dir, const struct devcg_rules *rules, struct devcg_error *err)
{
	int ret = 0;

	for (size_t i = 0; !ret && i < devcg_rules_count(rules); i++)
		ret = devcg_update_v1(dir, devcg_rules_get(rules, i), err);
	return ret;
}

/*
 * Both layers: V1 (may be NULL or "") first, then the cgroup v2 filter by
 * V2OP. When the v2 step fails, V1 is put back to what it listed before
 * when devices.list showed it whole (a default-deny cgroup); otherwise the
 * message says that V1 was changed.
 */
static int hybrid(const char *v1, const struct devcg_policy *v1_target, const struct devcg_rules *v1_rules,
		  int (*v2op)(void *ctx, struct devcg_error *err), void *ctx, int *moments,
		  struct devcg_error *err)
{
	struct devcg_policy *before = NULL;
	struct devcg_error e2 = { 0 };
	bool complete = false;
	int ret;

	if (moments)
		*moments = 0;
	if (!v1 || !v1[0])
		return v2op(ctx, err);
	/* never the devices of the cgroup devcg itself runs in */
	ret = open_v1_dir(v1, err);
	if (ret < 0)
		return ret;
	if (v1_holds(ret, (int)getpid())) {
		close(ret);
		return devcg_err(err, -EPERM, "%s is this process's own cgroup v1 devices cgroup: devcg "
				 "does not change its devices there", v1);
	}
	close(ret);
	ret = devcg_v1_read(v1, &before, &complete, err);
	if (ret)
		return ret;
	ret = v1_target ? devcg_replace_v1(v1, v1_target, err) : update_v1_rules(v1, v1_rules, err);
	if (ret < 0) {
		/* a transition stopped half-way is put back too */
		if (v1_target && complete && devcg_replace_v1(v1, before, &e2) >= 0)
			devcg_err_wrap(err, ret, "cgroup v1 devices cgroup %s (put back as it was; nothing "
				       "changed on cgroup v2)", v1);
		else
			devcg_err_wrap(err, ret, "cgroup v1 devices cgroup %s (nothing changed on cgroup v2)", v1);
		goto out;
	}
	if (moments)
		*moments = ret;
	ret = v2op(ctx, err);
	if (ret) {
		if (complete && devcg_replace_v1(v1, before, &e2) >= 0)
			devcg_err_wrap(err, ret, "cgroup v1 devices cgroup %s put back as it was", v1);
		else
			devcg_err_wrap(err, ret, "cgroup v1 devices cgroup %s changed already (%s)", v1,
				       complete ? e2.msg : "its default is allow, which devices.list "
				       "does not show whole: not put back");
	}
out:
	devcg_policy_free(before);
	return ret;
}

struct v2_replace {
	const char *cgroup;
	const struct devcg_policy *policy;
	const struct devcg_rules *rules;
	struct devcg_replace_opts *opts;
	bool take_over;
};

static int v2_replace(void *ctx, struct devcg_error *err)
{
	struct v2_replace *c = ctx;

	return devcg_replace_taking(c->cgroup, c->policy, c->opts, c->take_over, err);
}

static int v2_update(void *ctx, struct devcg_error *err)
{
	struct v2_replace *c = ctx;

	return devcg_update_rules_as_checked(c->cgroup, c->rules, c->opts, err);
}

int devcg_replace_both(const char *cgroup, const char *v1, const struct devcg_policy *policy,
		       struct devcg_replace_opts *opts, struct devcg_error *err)
{
	return devcg_replace_both_taking(cgroup, v1, policy, opts, true, err);
}

int devcg_replace_both_taking(const char *cgroup, const char *v1, const struct devcg_policy *policy,
			      struct devcg_replace_opts *opts, bool take_over, struct devcg_error *err)
{
	struct v2_replace c = { cgroup, policy, NULL, opts, take_over };

	return hybrid(v1, policy, NULL, v2_replace, &c, NULL, err);
}

int devcg_update_both(const char *cgroup, const char *v1, const struct devcg_rules *rules,
		      struct devcg_replace_opts *opts, struct devcg_error *err)
{
	struct v2_replace c = { cgroup, NULL, rules, opts, false };

	int ret;

	if (!rules || !devcg_rules_count(rules))
		return devcg_err(err, -EINVAL, "no rule to apply");
	/* before either layer changes */
	ret = devcg_rules_ancestors_refuse(cgroup, NULL, rules, !DEVCG_OPT(opts, devcg_replace_opts, no_systemd, false),
					   err);
	return ret ? ret : hybrid(v1, NULL, rules, v2_update, &c, NULL, err);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The work of an OCI hook: from the container state a runtime writes on the
 * hook's standard input (runtime-spec config.md, "State"), install the
 * runtime's device policy, plus extras, as devcg's program on the
 * container's cgroup.
 *
 * The cgroup comes from /proc/PID/cgroup, whose "0::" path is relative to
 * the reader's cgroup namespace root (kernel/cgroup/cgroup.c,
 * proc_cgroup_show), and is found through a cgroup2 mount of this mount
 * namespace whose root (mountinfo's fourth field, relative to the same
 * namespace root) contains it: a hook may run in another mount namespace
 * than the one the container's cgroupsPath was written for. The process is
 * pinned with a pidfd before /proc is read, and is checked to be still
 * alive afterwards, so the cgroup read is that process's (a pid number is
 * only reused after its process is gone).
 */
#include "live/live.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

/* Does the cgroup directory DIR hold process PID? */
static bool holds_pid(const char *dir, int pid)
{
	char file[8300], line[32];
	bool found = false;
	FILE *f;

	snprintf(file, sizeof(file), "%s/cgroup.procs", dir);
	f = fopen(file, "re");
	while (f && !found && fgets(line, sizeof(line), f))
		found = atoi(line) == pid;
	if (f)
		fclose(f);
	return found;
}

/*
 * PATH through a cgroup2 mount of this mount namespace that shows it, and
 * shows PID in it: mountinfo also lists mounts that others hide, whose
 * paths would lead elsewhere.
 */
static int through_mount(const char *path, int pid, char *buf, size_t len, struct devcg_error *err)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[8192];
	int ret = -ENOENT;

	if (!f)
		return devcg_err(err, -errno, "cannot read /proc/self/mountinfo: %s", strerror(errno));
	while (ret && fgets(line, sizeof(line), f)) {
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [OPTIONAL...] - FSTYPE ... */
		char *sep = strstr(line, " - "), root[4096], mnt[4096], full[8192];
		size_t rlen;
		struct stat st;

		if (!sep || strncmp(sep + 3, "cgroup2 ", 8))
			continue;
		if (sscanf(line, "%*s %*s %*s %4095s %4095s", root, mnt) != 2)
			continue;
		devcg_mountinfo_unescape(root);
		devcg_mountinfo_unescape(mnt);
		rlen = strcmp(root, "/") ? strlen(root) : 0;
		if (strncmp(path, root, rlen) || (path[rlen] != '/' && path[rlen] != '\0'))
			continue;
		snprintf(full, sizeof(full), "%s%s", strcmp(mnt, "/") ? mnt : "", path + rlen);
		if (stat(full, &st) || !S_ISDIR(st.st_mode) || !holds_pid(full, pid))
			continue;
		if (strlen(full) >= len) {
			ret = devcg_err(err, -ENAMETOOLONG, "%s: path too long", full);
			break;
		}
		snprintf(buf, len, "%s", full);
		ret = 0;
	}
	fclose(f);
	if (ret == -ENOENT)
		return devcg_err(err, ret, "no cgroup2 mount of this mount namespace shows the cgroup %s "
				 "with process %d in it", path, pid);
	return ret;
}

int devcg_pid_cgroup(int pid, char *buf, size_t len, struct devcg_error *err)
{
	char path[4096], own[4096];
	int ret;

	if (pid <= 0)
		return devcg_err(err, -EINVAL, "pid %d: not a process", pid);
	ret = devcg_proc_cgroup(pid, path, sizeof(path), NULL, 0, err);
	if (ret)
		return ret;
	/* never the root (every process of the machine) */
	if (!strcmp(path, "/"))
		return devcg_err(err, -EPERM,
				 "process %d is in the root cgroup: devcg never attaches a program there", pid);
	if (strstr(path, " (deleted)"))
		return devcg_err(err, -ENOENT, "process %d: its cgroup %s was removed", pid, path);
	ret = devcg_proc_cgroup(0, own, sizeof(own), NULL, 0, err);
	if (ret)
		return ret;
	if (!strcmp(path, own))
		return devcg_err(err, -EPERM,
				 "process %d is in this process's own cgroup %s: devcg does not attach a "
				 "program there", pid, path);
	return through_mount(path, pid, buf, len, err);
}

int devcg_host_cgroupns(int pid, struct devcg_error *err)
{
	char file[64];
	struct stat own, host;
	int fd, ret = 0;

	if (pid < 0)
		return devcg_err(err, -EINVAL, "pid %d: not a process", pid);
	/* 0: pid 1 of this pid namespace, the host's init with hostPID */
	snprintf(file, sizeof(file), "/proc/%d/ns/cgroup", pid ? pid : 1);
	if (stat("/proc/self/ns/cgroup", &own) || stat(file, &host))
		return devcg_err(err, -errno, "cannot read the cgroup namespaces of this process and of "
				 "process %d: %s", pid ? pid : 1, strerror(errno));
	if (own.st_dev == host.st_dev && own.st_ino == host.st_ino)
		return 0;
	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return devcg_err(err, -errno, "cannot open %s: %s", file, strerror(errno));
	if (setns(fd, CLONE_NEWCGROUP))
		ret = devcg_err(err, -errno, "cannot enter the cgroup namespace of process %d: %s%s",
				pid ? pid : 1, strerror(errno), errno == EPERM ? " (CAP_SYS_ADMIN is needed)" : "");
	close(fd);
	return ret ? ret : 1;
}

/* The runtime that runs this hook: the parent process, by its name. */
static enum devcg_runtime parent_runtime(char *comm, size_t len)
{
	char file[64];
	FILE *f;

	snprintf(file, sizeof(file), "/proc/%d/comm", (int)getppid());
	snprintf(comm, len, "?");
	f = fopen(file, "re");
	if (!f)
		return DEVCG_RUNTIME_NONE;
	if (fgets(comm, (int)len, f))
		comm[strcspn(comm, "\n")] = '\0';
	fclose(f);
	/* runc: "runc" ("runc:[1:CHILD]" for its init); crun re-executes itself
	 * from a sealed memfd ("memfd:crun_clon") or a bind mount ("crun") */
	if (!strcmp(comm, "runc") || !strncmp(comm, "runc:", 5))
		return DEVCG_RUNTIME_RUNC;
	if (!strcmp(comm, "crun") || !strncmp(comm, "memfd:crun", 10))
		return DEVCG_RUNTIME_CRUN;
	return DEVCG_RUNTIME_NONE;
}

struct oci_state {
	const char *id;
	const char *bundle;
	int pid;
	json_t *annotations;
};

static int parse_state(json_t *root, struct oci_state *st, struct devcg_error *err)
{
	json_t *v = json_object_get(root, "pid");

	if (!json_is_object(root))
		return devcg_err(err, -EINVAL, "container state: not a JSON object");
	if (!json_is_string(json_object_get(root, "ociVersion")))
		return devcg_err(err, -EINVAL, "container state: no \"ociVersion\" string");
	st->id = json_string_value(json_object_get(root, "id"));
	if (!st->id || !st->id[0])
		return devcg_err(err, -EINVAL, "container state: no \"id\" string");
	if (!json_is_integer(v) || json_integer_value(v) <= 0 || json_integer_value(v) > 0x3fffffff)
		return devcg_err(err, -EINVAL, "container state of %s: no \"pid\" of a process (the hook "
				 "must run at createRuntime or prestart, when the container has one)", st->id);
	st->pid = (int)json_integer_value(v);
	st->bundle = json_string_value(json_object_get(root, "bundle"));
	if (!st->bundle || st->bundle[0] != '/')
		return devcg_err(err, -EINVAL, "container state of %s: no absolute \"bundle\" path", st->id);
	st->annotations = json_object_get(root, "annotations");
	if (st->annotations && !json_is_null(st->annotations) && !json_is_object(st->annotations))
		return devcg_err(err, -EINVAL, "container state of %s: \"annotations\" must be an object",
				 st->id);
	return 0;
}

/*
 * The bundle's config.json: the bundle is the container's, so the file may
 * be anything. Opened O_PATH|O_NOFOLLOW (never a symlink, and a device or
 * FIFO is never opened for reading), checked to be a regular file of at
 * most DEVCG_OCI_MAX_CONFIG bytes, and only then opened for reading
 * through that fd, O_NONBLOCK; a file that grows meanwhile is cut off at
 * the limit and refused.
 */
static int read_config(const char *path, char **out, size_t *out_len, struct devcg_error *err)
{
	const size_t max = DEVCG_OCI_MAX_CONFIG;
	char q[512], fdpath[64], *buf = NULL;
	int pfd, fd = -1, ret = 0;
	size_t len = 0;
	struct stat st;

	devcg_quote(q, sizeof(q), path, (size_t)-1);
	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return devcg_err(err, -errno, "%s: %s", q, errno == ELOOP ? "is a symbolic link" : strerror(errno));
	if (fstat(pfd, &st))
		ret = devcg_err(err, -errno, "%s: %s", q, strerror(errno));
	else if (S_ISLNK(st.st_mode))
		ret = devcg_err(err, -ELOOP, "%s: is a symbolic link", q);
	else if (!S_ISREG(st.st_mode))
		ret = devcg_err(err, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL, "%s: is %s, not a regular file", q,
				S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
				S_ISCHR(st.st_mode) ? "a character device" : S_ISBLK(st.st_mode) ? "a block device" :
				S_ISSOCK(st.st_mode) ? "a socket" : "a special file");
	else if ((uint64_t)st.st_size > max)
		ret = devcg_err(err, -EFBIG, "%s: too large (%lld bytes, limit %zu)", q, (long long)st.st_size, max);
	if (!ret) {
		snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", pfd);
		fd = open(fdpath, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			ret = devcg_err(err, -errno, "%s: %s", q, strerror(errno));
	}
	close(pfd);
	/* max + 1 bytes: reading one more than the limit tells a file that grew */
	if (!ret && !(buf = malloc((size_t)st.st_size + 2)))
		ret = devcg_err(err, -ENOMEM, "%s: out of memory", q);
	while (!ret) {
		size_t room = (size_t)st.st_size + 1 - len;
		ssize_t r;

		if (!room) {
			ret = devcg_err(err, -EFBIG, "%s: changed size while read", q);
			break;
		}
		r = read(fd, buf + len, room);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = devcg_err(err, -errno, "%s: %s", q, strerror(errno));
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	if (fd >= 0)
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

/* The annotation's rules: lines, or rules separated by ';'. */
static int annotation_rules(struct devcg_rules *rules, json_t *annotations, const char *key,
			    struct devcg_error *err)
{
	json_t *v = json_is_object(annotations) ? json_object_get(annotations, key) : NULL;
	char source[300], *text;
	int ret;

	if (!v)
		return 0;
	if (!json_is_string(v))
		return devcg_err(err, -EINVAL, "annotation %s: not a string", key);
	text = strdup(json_string_value(v));
	if (!text)
		return devcg_err(err, -ENOMEM, "out of memory");
	for (char *p = text; *p; p++)
		if (*p == ';')
			*p = '\n';
	snprintf(source, sizeof(source), "annotation %s", key);
	ret = devcg_rules_parse(rules, text, strlen(text), source, NULL, err);
	free(text);
	return ret;
}

/*
 * Apply the annotation's rules to *POLICY; unless MAY_WIDEN, only when the
 * result allows no request that *POLICY before them or ALLOW (allow rules
 * over deny-all) does not. On error *POLICY is as it was.
 */
static int annotation_apply(struct devcg_policy **policy, json_t *annotations, const char *key,
			    const struct devcg_rules *allow, bool may_widen, struct devcg_error *err)
{
	struct devcg_policy *after = devcg_policy_dup(*policy), *listed = NULL;
	const struct devcg_policy *base[2] = { *policy };
	const struct devcg_rule deny_all = { .verb = DEVCG_VERB_DENY, .type = DEVCG_ALL,
					     .access = DEVCG_ACC_ALL, .major = DEVCG_ANY,
					     .minor = DEVCG_ANY };
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_exception w;
	char rule[64];
	int ret;

	if (!after || !rules) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = annotation_rules(rules, annotations, key, err);
	if (!ret)
		ret = devcg_policy_apply_all(after, rules, err);
	if (!ret && !may_widen && allow) {
		listed = devcg_policy_new();
		if (!listed)
			ret = devcg_err(err, -ENOMEM, "out of memory");
		else if (!(ret = devcg_policy_apply(listed, &deny_all, err)))
			ret = devcg_policy_apply_all(listed, allow, err);
		base[1] = listed;
	}
	if (!ret && !may_widen) {
		ret = devcg_policy_beyond(after, base, listed ? 2 : 1, &w);
		if (ret < 0) {
			ret = devcg_err(err, ret, "annotation %s: %s", key, strerror(-ret));
		} else if (ret) {
			struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = w.type, .access = w.access,
						.major = w.major, .minor = w.minor };

			devcg_rule_format(&r, rule, sizeof(rule));
			ret = devcg_err(err, -EPERM,
					"annotation %s widens the policy: it allows '%s', which the policy "
					"before it does not%s (an annotation may only narrow it unless the "
					"hook is given --annotation-allow or --annotation-may-widen)",
					key, rule, listed ? " and the annotation allow-list does not list" : "");
		}
	}
	if (!ret) {
		struct devcg_policy *before = *policy;

		*policy = after;
		after = before;
	}
out:
	devcg_policy_free(listed);
	devcg_policy_free(after);
	devcg_rules_free(rules);
	return ret;
}

int devcg_oci_hook(const char *state, size_t len, struct devcg_oci_hook_opts *opts,
		   struct devcg_error *err)
{
	enum devcg_runtime rt = DEVCG_OPT(opts, devcg_oci_hook_opts, runtime, DEVCG_RUNTIME_NONE);
	const struct devcg_rules *extra = DEVCG_OPT(opts, devcg_oci_hook_opts, rules, NULL);
	const char *key = DEVCG_OPT(opts, devcg_oci_hook_opts, annotation, NULL);
	DEVCG_OPTS(devcg_replace_opts, ro);
	DEVCG_OPTS(devcg_parse_opts, po);
	struct devcg_rules *rules = NULL;
	struct devcg_policy *policy = NULL;
	struct oci_state st = { 0 };
	char config[4200], cgroup[4096], v1[4096] = "", *text = NULL;
	size_t text_len = 0;
	json_error_t jerr;
	json_t *root;
	int pidfd = -1, ret, v1ret;

	if ((ret = DEVCG_OPTS_VALID(opts, devcg_oci_hook_opts, v1_cgroup, err)))
		return ret;
	if (len > DEVCG_OCI_MAX_STATE)
		return devcg_err(err, -EFBIG, "container state: too large (%zu bytes, limit %d)", len,
				 DEVCG_OCI_MAX_STATE);
	root = json_loadb(state, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root)
		return devcg_err(err, -EINVAL, "container state: invalid JSON at %d:%d: %s", jerr.line,
				 jerr.column, jerr.text);
	ret = parse_state(root, &st, err);
	if (ret)
		goto out;
	if (rt == DEVCG_RUNTIME_AUTO) {
		char comm[32];

		rt = parent_runtime(comm, sizeof(comm));
		if (rt == DEVCG_RUNTIME_NONE) {
			ret = devcg_err(err, -EINVAL,
					"cannot tell the runtime that runs this hook (its parent is '%s'): "
					"give --runtime runc or crun", comm);
			goto out;
		}
	}
	/* pin the process first: the cgroup read below must be its own */
	pidfd = (int)syscall(SYS_pidfd_open, st.pid, 0);
	if (pidfd < 0 && errno != ENOSYS) {
		ret = devcg_err(err, -errno, "container %s: process %d %s", st.id, st.pid,
				errno == ESRCH ? "is gone" : strerror(errno));
		goto out;
	}

	rules = devcg_rules_new();
	policy = devcg_policy_new();
	if (!rules || !policy) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	po.runtime = rt;
	snprintf(config, sizeof(config), "%s/config.json", st.bundle);
	ret = read_config(config, &text, &text_len, err);
	if (!ret)
		ret = devcg_rules_parse(rules, text, text_len, config, &po, err);
	free(text);
	text = NULL;
	for (size_t i = 0; !ret && extra && i < devcg_rules_count(extra); i++)
		ret = devcg_rules_add(rules, devcg_rules_get(extra, i), err);
	if (!ret)
		ret = devcg_policy_apply_all(policy, rules, err);
	if (!ret && (!key || key[0]))
		ret = annotation_apply(&policy, st.annotations, key ? key : DEVCG_OCI_ANNOTATION,
				       DEVCG_OPT(opts, devcg_oci_hook_opts, annotation_allow, NULL),
				       DEVCG_OPT(opts, devcg_oci_hook_opts, annotation_may_widen, false), err);
	if (ret) {
		devcg_err_wrap(err, ret, "container %s", st.id);
		goto out;
	}

	ret = devcg_pid_cgroup(st.pid, cgroup, sizeof(cgroup), err);
	/* on a hybrid host its v1 devices cgroup decides too ("" when none) */
	if (!ret && (v1ret = devcg_v1_of_pid(st.pid, true, v1, sizeof(v1), err)) < 0)
		ret = v1ret;
	if (!ret && pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0))
		ret = devcg_err(err, -errno, "process %d %s", st.pid,
				errno == ESRCH ? "is gone" : strerror(errno));
	if (!ret && pidfd < 0 && kill(st.pid, 0)) /* no pidfd (before Linux 5.3) */
		ret = devcg_err(err, -errno, "process %d is gone", st.pid);
	if (ret) {
		devcg_err_wrap(err, ret, "container %s", st.id);
		goto out;
	}

	ro.audit = DEVCG_OPT(opts, devcg_oci_hook_opts, audit, false);
	ro.force = DEVCG_OPT(opts, devcg_oci_hook_opts, force, false);
	ro.no_systemd = DEVCG_OPT(opts, devcg_oci_hook_opts, no_systemd, false);
	/* the swap confirms that exactly devcg's program is attached after it
	 * (two programs ANDed together is the failure a hook must not leave);
	 * several others' are refused as before, not taken over: unattended,
	 * the hook does not drop a program another party attached, which may
	 * narrow what the runtime's allows */
	ret = devcg_replace_both_taking(cgroup, v1, policy, &ro, false, err);
	if (ret) {
		devcg_err_wrap(err, ret, "container %s", st.id);
		goto out;
	}
	if (DEVCG_OPTS_HAS(opts, devcg_oci_hook_opts, runtime_used)) {
		snprintf(opts->cgroup, sizeof(opts->cgroup), "%s", cgroup);
		opts->prog_id = ro.prog_id;
		opts->replaced_id = ro.replaced_id;
		opts->runtime_used = rt;
	}
	if (DEVCG_OPTS_HAS(opts, devcg_oci_hook_opts, systemd_entries)) {
		memcpy(opts->systemd_unit, ro.systemd_unit, sizeof(ro.systemd_unit));
		opts->systemd_entries = ro.systemd_entries;
	}
	if (DEVCG_OPTS_HAS(opts, devcg_oci_hook_opts, v1_cgroup))
		snprintf(opts->v1_cgroup, sizeof(opts->v1_cgroup), "%s", v1);
out:
	if (pidfd >= 0)
		close(pidfd);
	devcg_policy_free(policy);
	devcg_rules_free(rules);
	json_decref(root);
	return ret;
}

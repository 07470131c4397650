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
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

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
	char config[4200], cgroup[4096], v1[4096] = "";
	json_error_t jerr;
	json_t *root;
	int pidfd = -1, ret, v1ret;

	if ((ret = DEVCG_OPTS_VALID(opts, devcg_oci_hook_opts, v1_cgroup, err)))
		return ret;
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
	ret = devcg_rules_parse_file(rules, config, &po, err);
	for (size_t i = 0; !ret && extra && i < devcg_rules_count(extra); i++)
		ret = devcg_rules_add(rules, devcg_rules_get(extra, i), err);
	if (!ret && (!key || key[0]))
		ret = annotation_rules(rules, st.annotations, key ? key : DEVCG_OCI_ANNOTATION, err);
	if (!ret)
		ret = devcg_policy_apply_all(policy, rules, err);
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
	 * (two programs ANDed together is the failure a hook must not leave) */
	ret = devcg_replace_both(cgroup, v1, policy, &ro, err);
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

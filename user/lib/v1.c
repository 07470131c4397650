// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * cgroup v1 hosts: move a devices cgroup to a new policy by writes that
 * never take away a device both the old and the new policy allow. The
 * current state comes from devices.list, which shows the exceptions of a
 * default-deny cgroup but only "a *:* rwm" for a default-allow one
 * (devcgroup_seq_show() in security/device_cgroup.c).
 */
#include "internal.h"

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

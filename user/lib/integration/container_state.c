// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What a node agent remembers of a container: one JSON file per container,
 * DIR/ID.json, in a directory only root may write (the agent's). Still, no
 * path in it is followed as a symbolic link (everything is opened through
 * the directory's fd with O_NOFOLLOW), a file is read only when it is a
 * regular file of at most CTR_STATE_MAX bytes, and a file that does not
 * parse is an error that names it, never a guess. A file is written whole
 * or not at all: a temporary file, fsync, rename over the old one, fsync
 * of the directory; writers of one container take DIR/ID.lock first.
 *
 * The policies are kept as devices.list rules ("deny a", "allow c 1:3
 * rwm"), in the rule language's own text (devcg_rule_format(), read back
 * by devcg_rules_parse_rule()).
 */
#include "integration/container.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define CTR_STATE_VERSION 1

int ctr_id_check(const char *id, struct devcg_error *err)
{
	char q[300];
	size_t n = id ? strnlen(id, CTR_ID_MAX + 1) : 0;

	if (!id || !n)
		return devcg_err(err, -EINVAL, "container id: empty");
	if (n > CTR_ID_MAX)
		return devcg_err(err, -EINVAL, "container id %s...: longer than %d characters",
				 devcg_quote(q, 64, id, 40), CTR_ID_MAX);
	for (size_t i = 0; i < n; i++)
		if (!(id[i] >= '0' && id[i] <= '9') && !(id[i] >= 'a' && id[i] <= 'z') &&
		    !(id[i] >= 'A' && id[i] <= 'Z') && id[i] != '_' && id[i] != '.' && id[i] != '-')
			return devcg_err(err, -EINVAL, "container id %s: only letters, digits, '_', '.' and "
					 "'-' may be in it", devcg_quote(q, sizeof(q), id, n));
	if (!strcmp(id, ".") || !strcmp(id, ".."))
		return devcg_err(err, -EINVAL, "container id %s: not a name", id);
	return 0;
}

void ctr_state_clear(struct ctr_state *s)
{
	free(s->name);
	free(s->pod_name);
	free(s->pod_namespace);
	free(s->pod_uid);
	devcg_policy_free(s->baseline);
	free(s->hot);
	memset(s, 0, sizeof(*s));
}

int ctr_state_hot_add(struct ctr_state *s, const struct devcg_exception *ex)
{
	struct devcg_exception *more;

	for (size_t i = 0; i < s->nhot; i++)
		if (s->hot[i].type == ex->type && s->hot[i].major == ex->major && s->hot[i].minor == ex->minor) {
			s->hot[i].access |= ex->access;
			return 0;
		}
	more = realloc(s->hot, (s->nhot + 1) * sizeof(*more));
	if (!more)
		return -ENOMEM;
	s->hot = more;
	s->hot[s->nhot++] = *ex;
	return 0;
}

void ctr_state_hot_remove(struct ctr_state *s, uint8_t type, uint32_t major, uint32_t minor)
{
	for (size_t i = 0; i < s->nhot; i++)
		if (s->hot[i].type == type && s->hot[i].major == major && s->hot[i].minor == minor) {
			memmove(&s->hot[i], &s->hot[i + 1], (s->nhot - i - 1) * sizeof(*s->hot));
			s->nhot--;
			return;
		}
}

int ctr_state_policy(const struct ctr_state *s, struct devcg_policy **out, struct devcg_error *err)
{
	struct devcg_policy *p = s->baseline ? devcg_policy_dup(s->baseline) : NULL;
	int ret = 0;

	if (!p)
		return devcg_err(err, -ENOMEM, "out of memory");
	for (size_t i = 0; !ret && i < s->nhot; i++) {
		const struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = s->hot[i].type,
					      .access = s->hot[i].access, .major = s->hot[i].major,
					      .minor = s->hot[i].minor };

		ret = devcg_policy_apply(p, &r, err);
	}
	if (ret) {
		devcg_policy_free(p);
		return ret;
	}
	*out = p;
	return 0;
}

/* ---- the text of a state file ----------------------------------------------- */

static const char *runtime_word(enum devcg_runtime rt)
{
	return rt == DEVCG_RUNTIME_RUNC ? "runc" : rt == DEVCG_RUNTIME_CRUN ? "crun" : "none";
}

static int set_str(json_t *o, const char *key, const char *v)
{
	return v ? json_object_set_new(o, key, json_string(v)) : 0;
}

static int add_rule(json_t *a, const struct devcg_rule *r)
{
	char line[64];

	devcg_rule_format(r, line, sizeof(line));
	return json_array_append_new(a, json_string(line));
}

int ctr_state_format(const struct ctr_state *s, char **text, struct devcg_error *err)
{
	json_t *o = json_object(), *pol = json_array(), *hot = json_array();
	struct devcg_rules *rules = NULL;
	int bad = !o || !pol || !hot;

	if (!bad && s->baseline && devcg_policy_to_rules(s->baseline, &rules))
		bad = 1;
	for (size_t i = 0; !bad && rules && i < devcg_rules_count(rules); i++)
		bad = add_rule(pol, devcg_rules_get(rules, i));
	for (size_t i = 0; !bad && i < s->nhot; i++) {
		const struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = s->hot[i].type,
					      .access = s->hot[i].access, .major = s->hot[i].major,
					      .minor = s->hot[i].minor };

		bad = add_rule(hot, &r);
	}
	if (!bad)
		bad = json_object_set_new(o, "version", json_integer(CTR_STATE_VERSION)) ||
		      json_object_set_new(o, "id", json_string(s->id)) || set_str(o, "name", s->name) ||
		      set_str(o, "pod_name", s->pod_name) || set_str(o, "pod_namespace", s->pod_namespace) ||
		      set_str(o, "pod_uid", s->pod_uid) || json_object_set_new(o, "pid", json_integer(s->pid)) ||
		      json_object_set_new(o, "cgroup", json_string(s->cgroup)) ||
		      json_object_set_new(o, "runtime", json_string(runtime_word(s->runtime))) ||
		      json_object_set(o, "policy", pol) || json_object_set(o, "hotplugged", hot) ||
		      json_object_set_new(o, "prog_id", json_integer(s->prog_id));
	/* (a string that is not UTF-8 makes json_string() NULL: refused above) */
	*text = bad ? NULL : json_dumps(o, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	devcg_rules_free(rules);
	json_decref(pol);
	json_decref(hot);
	json_decref(o);
	if (!*text)
		return devcg_err(err, bad && o && pol && hot ? -EINVAL : -ENOMEM,
				 "container %s: cannot write its state (%s)", s->id,
				 bad && o && pol && hot ? "a name that is not UTF-8" : "out of memory");
	return 0;
}

/* KEY of O: a string (or absent, when OPTIONAL) copied into *OUT. */
static int get_str(json_t *o, const char *key, bool optional, char **out, const char *source,
		   struct devcg_error *err)
{
	json_t *v = json_object_get(o, key);

	if (!v && optional)
		return 0;
	if (!json_is_string(v))
		return devcg_err(err, -EINVAL, "%s: \"%s\" must be a string", source, key);
	*out = strdup(json_string_value(v));
	return *out ? 0 : devcg_err(err, -ENOMEM, "out of memory");
}

static int get_uint(json_t *o, const char *key, int64_t max, int64_t *out, const char *source,
		    struct devcg_error *err)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
		return devcg_err(err, -EINVAL, "%s: \"%s\" must be an integer from 0 to %lld", source, key,
				 (long long)max);
	*out = json_integer_value(v);
	return 0;
}

/* The rules of the array KEY: devices.list lines. */
static int get_rules(json_t *o, const char *key, struct devcg_rules *rules, const char *source,
		     struct devcg_error *err)
{
	json_t *a = json_object_get(o, key), *v;
	char where[4200];
	size_t i;

	if (!json_is_array(a))
		return devcg_err(err, -EINVAL, "%s: \"%s\" must be an array of rules", source, key);
	json_array_foreach(a, i, v) {
		int ret;

		snprintf(where, sizeof(where), "%s: %s[%zu]", source, key, i);
		if (!json_is_string(v))
			return devcg_err(err, -EINVAL, "%s: not a string", where);
		ret = devcg_rules_parse_rule(rules, json_string_value(v), where, NULL, err);
		if (ret)
			return ret;
	}
	return 0;
}

static int parse_obj(json_t *o, const char *source, struct ctr_state *s, struct devcg_error *err)
{
	struct devcg_rules *pol = devcg_rules_new(), *hot = devcg_rules_new();
	char *id = NULL, *cgroup = NULL, *rt = NULL;
	int64_t v = 0;
	int ret = 0;

	if (!pol || !hot)
		ret = devcg_err(err, -ENOMEM, "out of memory");
	if (!ret && !json_is_object(o))
		ret = devcg_err(err, -EINVAL, "%s: not a JSON object", source);
	if (!ret && (ret = get_uint(o, "version", INT32_MAX, &v, source, err)) == 0 && v != CTR_STATE_VERSION)
		ret = devcg_err(err, -EINVAL, "%s: version %lld, this devcg reads version %d", source,
				(long long)v, CTR_STATE_VERSION);
	if (!ret)
		ret = get_str(o, "id", false, &id, source, err);
	if (!ret && strlen(id) > CTR_ID_MAX)
		ret = devcg_err(err, -EINVAL, "%s: \"id\" is too long", source);
	if (!ret) {
		snprintf(s->id, sizeof(s->id), "%s", id);
		ret = get_str(o, "name", true, &s->name, source, err);
	}
	if (!ret)
		ret = get_str(o, "pod_name", true, &s->pod_name, source, err);
	if (!ret)
		ret = get_str(o, "pod_namespace", true, &s->pod_namespace, source, err);
	if (!ret)
		ret = get_str(o, "pod_uid", true, &s->pod_uid, source, err);
	if (!ret && !(ret = get_uint(o, "pid", INT32_MAX, &v, source, err)))
		s->pid = (int32_t)v;
	if (!ret)
		ret = get_str(o, "cgroup", false, &cgroup, source, err);
	if (!ret && (cgroup[0] != '/' || strlen(cgroup) >= sizeof(s->cgroup)))
		ret = devcg_err(err, -EINVAL, "%s: \"cgroup\" must be an absolute path below 4096 bytes", source);
	if (!ret) {
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", cgroup);
		ret = get_str(o, "runtime", false, &rt, source, err);
	}
	if (!ret) {
		s->runtime = !strcmp(rt, "runc") ? DEVCG_RUNTIME_RUNC : !strcmp(rt, "crun") ? DEVCG_RUNTIME_CRUN
			     : DEVCG_RUNTIME_NONE;
		if (s->runtime == DEVCG_RUNTIME_NONE && strcmp(rt, "none"))
			ret = devcg_err(err, -EINVAL, "%s: \"runtime\" must be \"runc\", \"crun\" or \"none\"",
					source);
	}
	if (!ret && !(ret = get_uint(o, "prog_id", UINT32_MAX, &v, source, err)))
		s->prog_id = (uint32_t)v;
	if (!ret)
		ret = get_rules(o, "policy", pol, source, err);
	if (!ret)
		ret = get_rules(o, "hotplugged", hot, source, err);
	if (!ret && !(s->baseline = devcg_policy_new()))
		ret = devcg_err(err, -ENOMEM, "out of memory");
	if (!ret && (ret = devcg_policy_apply_all(s->baseline, pol, err)))
		devcg_err_wrap(err, ret, "%s: \"policy\"", source);
	for (size_t i = 0; !ret && i < devcg_rules_count(hot); i++) {
		const struct devcg_rule *r = devcg_rules_get(hot, i);
		const struct devcg_exception ex = { .type = r->type, .access = r->access,
						    .major = r->major, .minor = r->minor };

		if (r->verb != DEVCG_VERB_ALLOW || r->type == DEVCG_ALL)
			ret = devcg_err(err, -EINVAL, "%s: hotplugged[%zu]: an allow rule of one device type "
					"is expected", source, i);
		else if (ctr_state_hot_add(s, &ex))
			ret = devcg_err(err, -ENOMEM, "out of memory");
	}
	free(id);
	free(cgroup);
	free(rt);
	devcg_rules_free(pol);
	devcg_rules_free(hot);
	return ret;
}

int ctr_state_parse(const char *text, size_t len, const char *source, struct ctr_state *s,
		    struct devcg_error *err)
{
	json_error_t jerr;
	json_t *o;
	int ret;

	memset(s, 0, sizeof(*s));
	o = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!o)
		return devcg_err(err, -EINVAL, "%s:%d:%d: not a state file (invalid JSON: %s)", source,
				 jerr.line, jerr.column, jerr.text);
	ret = parse_obj(o, source, s, err);
	json_decref(o);
	if (ret)
		ctr_state_clear(s);
	return ret;
}

/* ---- the directory and its files ----------------------------------------------- */

int ctr_dir_open(const char *dir, bool create, struct ctr_dir *d, struct devcg_error *err)
{
	char q[600], part[4096];
	struct stat st;
	int e;

	d->fd = d->lock_fd = -1;
	if (!dir)
		dir = DEVCG_CONTAINER_STATE_DIR;
	devcg_quote(q, sizeof(q), dir, (size_t)-1);
	if (!dir[0] || strlen(dir) >= sizeof(d->path))
		return devcg_err(err, -EINVAL, "state directory %s: not a usable path", q);
	snprintf(d->path, sizeof(d->path), "%s", dir);
	/* each missing directory on the way is made 0700 (root's alone) */
	for (size_t i = 1; create && i <= strlen(dir); i++) {
		if (dir[i] != '/' && dir[i] != '\0')
			continue;
		snprintf(part, sizeof(part), "%.*s", (int)i, dir);
		if (mkdir(part, 0700) && errno != EEXIST)
			return devcg_err(err, -errno, "cannot make the state directory %s: %s", q, strerror(errno));
	}
	d->fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (d->fd < 0)
		return devcg_err(err, -errno, "state directory %s: %s", q,
				 errno == ELOOP ? "is a symbolic link" : strerror(errno));
	e = fstat(d->fd, &st) ? errno : 0;
	if (e || st.st_uid != geteuid() || (st.st_mode & 022)) {
		close(d->fd);
		d->fd = -1;
		return devcg_err(err, e ? -e : -EPERM, "state directory %s: %s", q,
				 e ? strerror(e) : "not this user's own, or others may write it");
	}
	return 0;
}

int ctr_dir_lock(struct ctr_dir *d, const char *id, struct devcg_error *err)
{
	char name[CTR_ID_MAX + 8];
	struct stat st;

	snprintf(name, sizeof(name), "%s.lock", id);
	/* DEVCG_LOCK_WAIT_MS, in steps of 10 ms; a lock file that forget
	 * removed meanwhile is made again */
	for (int waited = 0; waited <= DEVCG_LOCK_WAIT_MS;) {
		int fd = openat(d->fd, name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0)
			return devcg_err(err, -errno, "%s/%s: %s", d->path, name,
					 errno == ELOOP ? "is a symbolic link" : strerror(errno));
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int e = errno;

			close(fd);
			if (e != EWOULDBLOCK)
				return devcg_err(err, -e, "%s/%s: cannot lock: %s", d->path, name, strerror(e));
			nanosleep(&(struct timespec){ .tv_nsec = 10000000 }, NULL);
			waited += 10;
			continue;
		}
		if (!fstat(fd, &st) && st.st_nlink) {
			d->lock_fd = fd;
			return 0;
		}
		close(fd);
	}
	return devcg_err(err, -ETIMEDOUT, "container %s: its lock %s/%s is held by another process for "
			 "more than %d ms", id, d->path, name, DEVCG_LOCK_WAIT_MS);
}

void ctr_dir_close(struct ctr_dir *d)
{
	if (d->lock_fd >= 0)
		close(d->lock_fd);
	if (d->fd >= 0)
		close(d->fd);
	d->fd = d->lock_fd = -1;
}

int ctr_state_load(const struct ctr_dir *d, const char *id, struct ctr_state *s, struct devcg_error *err)
{
	char name[CTR_ID_MAX + 8], source[4400], *buf;
	size_t len = 0;
	struct stat st;
	int fd, ret = 0;

	memset(s, 0, sizeof(*s));
	snprintf(name, sizeof(name), "%s.json", id);
	snprintf(source, sizeof(source), "%s/%s", d->path, name);
	fd = openat(d->fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return -ENOENT;
	if (fd < 0)
		return devcg_err(err, -errno, "%s: %s", source, errno == ELOOP ? "is a symbolic link" : strerror(errno));
	if (fstat(fd, &st))
		ret = devcg_err(err, -errno, "%s: %s", source, strerror(errno));
	else if (!S_ISREG(st.st_mode))
		ret = devcg_err(err, -EINVAL, "%s: not a regular file", source);
	else if (st.st_size > CTR_STATE_MAX)
		ret = devcg_err(err, -EFBIG, "%s: too large (%lld bytes, limit %d)", source,
				(long long)st.st_size, CTR_STATE_MAX);
	buf = ret ? NULL : malloc(CTR_STATE_MAX + 1);
	if (!ret && !buf)
		ret = devcg_err(err, -ENOMEM, "out of memory");
	while (!ret) {
		ssize_t r = read(fd, buf + len, CTR_STATE_MAX + 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			ret = devcg_err(err, -errno, "%s: %s", source, strerror(errno));
		if (r <= 0)
			break;
		len += (size_t)r;
		if (len > CTR_STATE_MAX)
			ret = devcg_err(err, -EFBIG, "%s: grew past %d bytes while read", source, CTR_STATE_MAX);
	}
	close(fd);
	if (!ret)
		ret = ctr_state_parse(buf, len, source, s, err);
	if (!ret && strcmp(s->id, id)) {
		ctr_state_clear(s);
		ret = devcg_err(err, -EINVAL, "%s: holds the state of another container", source);
	}
	free(buf);
	return ret;
}

int ctr_state_save(const struct ctr_dir *d, const struct ctr_state *s, struct devcg_error *err)
{
	char name[CTR_ID_MAX + 8], tmp[CTR_ID_MAX + 16], *text = NULL;
	size_t len, off = 0;
	int fd, ret;

	ret = ctr_state_format(s, &text, err);
	if (ret)
		return ret;
	snprintf(name, sizeof(name), "%s.json", s->id);
	snprintf(tmp, sizeof(tmp), ".%s.json.tmp", s->id);
	/* a temporary file a crash left behind goes (the lock is held) */
	unlinkat(d->fd, tmp, 0);
	fd = openat(d->fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		ret = devcg_err(err, -errno, "%s/%s: %s", d->path, tmp, strerror(errno));
		free(text);
		return ret;
	}
	len = strlen(text);
	while (!ret && off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			ret = devcg_err(err, -errno, "%s/%s: %s", d->path, tmp, strerror(errno));
		else
			off += (size_t)w;
	}
	free(text);
	if (!ret && fsync(fd))
		ret = devcg_err(err, -errno, "%s/%s: fsync: %s", d->path, tmp, strerror(errno));
	close(fd);
	if (!ret && renameat(d->fd, tmp, d->fd, name))
		ret = devcg_err(err, -errno, "%s/%s: cannot rename it to %s: %s", d->path, tmp, name,
				strerror(errno));
	if (ret) {
		unlinkat(d->fd, tmp, 0);
		return ret;
	}
	fsync(d->fd);
	return 0;
}

int ctr_state_remove(const struct ctr_dir *d, const char *id, struct devcg_error *err)
{
	char name[CTR_ID_MAX + 8];

	snprintf(name, sizeof(name), "%s.json", id);
	if (unlinkat(d->fd, name, 0) && errno != ENOENT)
		return devcg_err(err, -errno, "%s/%s: cannot remove it: %s", d->path, name, strerror(errno));
	snprintf(name, sizeof(name), "%s.lock", id);
	if (unlinkat(d->fd, name, 0) && errno != ENOENT)
		return devcg_err(err, -errno, "%s/%s: cannot remove it: %s", d->path, name, strerror(errno));
	fsync(d->fd);
	return 0;
}

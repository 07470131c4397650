// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * CDI (Container Device Interface) specs, for hot-plug: "vendor/class=name"
 * names a device of the spec of that kind, and brings its device nodes and
 * those of the spec's own containerEdits (the nodes every device of the
 * kind needs: a GPU's /dev/nvidiactl, /dev/nvidia-uvm, ...).
 *
 * As the reference implementation reads them (container-device-interface,
 * pkg/cdi: spec-dirs.go, container-edits.go, container-edits_unix.go):
 * every *.json and *.yaml file directly in each spec directory is a spec; a
 * device defined in several directories is taken from the later one, and
 * twice in one directory is an error; a node's hostPath defaults to its
 * path; its type and numbers come from the host node unless the spec gives
 * a type and a nonzero major; "permissions" defaults to rwm and "none"
 * means no cgroup rule; fileMode, uid and gid default to the host node's.
 * Only device nodes are used: env, mounts and hooks are a runtime's
 * business at create time, and a hot-plug does not change them.
 *
 * YAML and JSON specs are read into one jansson tree by hp_cdi_load()
 * (cdi_load.c).
 */
#include "cdi.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_SPEC_BYTES (16u << 20)
/* nodes listed from specs, before one item per path (at most HP_MAX_NODES) */
#define MAX_LISTED_NODES (16 * HP_MAX_NODES)

static const char *const default_dirs[] = { "/etc/cdi", "/var/run/cdi", NULL };

/* ---- reading the spec directories --------------------------------------- */

struct spec {
	char *path;
	int priority; /* the index of its directory */
	json_t *root;
	const char *kind;
};

struct specs {
	struct spec *v;
	size_t n;
	int bad;            /* spec files skipped: unreadable or not a spec */
	char first_bad[512];
};

static void specs_free(struct specs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].path);
		json_decref(s->v[i].root);
	}
	free(s->v);
}

/*
 * Read NAME of the directory DFD. It is opened without blocking (a FIFO
 * would wait for a writer for ever) and without following a symbolic link,
 * and read only when it is a regular file of at most MAX_SPEC_BYTES.
 */
static int read_spec(int dfd, const char *name, const char *path, char **text, size_t *len,
		     struct devcg_error *err)
{
	int fd = openat(dfd, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY), ret = 0;
	struct stat st;
	size_t got = 0;

	*text = NULL;
	if (fd < 0 && errno == ELOOP)
		return devcg_err(err, -ELOOP, "%s: a symbolic link (not followed)", hp_q(path));
	if (fd < 0)
		return devcg_err(err, -errno, "%s: %s", hp_q(path), strerror(errno));
	if (fstat(fd, &st)) {
		ret = devcg_err(err, -errno, "%s: %s", hp_q(path), strerror(errno));
	} else if (!S_ISREG(st.st_mode)) {
		ret = devcg_err(err, -EINVAL, "%s: not a regular file", hp_q(path));
	} else if ((uint64_t)st.st_size > MAX_SPEC_BYTES) {
		ret = devcg_err(err, -EFBIG, "%s: %lld bytes (a spec has at most %u)", hp_q(path),
				(long long)st.st_size, MAX_SPEC_BYTES);
	} else if (!(*text = malloc((size_t)st.st_size + 1))) {
		ret = devcg_err(err, -ENOMEM, "%s: out of memory", hp_q(path));
	}
	/* what it held when it was looked at: a file that grows is not read on */
	while (!ret && got < (size_t)st.st_size) {
		ssize_t r = read(fd, *text + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			ret = devcg_err(err, r < 0 ? -errno : -EIO, "%s: %s", hp_q(path),
					r < 0 ? strerror(errno) : "shorter than its size");
			break;
		}
		got += (size_t)r;
	}
	close(fd);
	if (ret) {
		free(*text);
		*text = NULL;
		return ret;
	}
	(*text)[got] = '\0';
	*len = got;
	return 0;
}

static bool has_suffix(const char *name, const char *suffix)
{
	size_t n = strlen(name), m = strlen(suffix);

	return n > m && !strcmp(name + n - m, suffix);
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What every spec must be for its devices to be looked up: an object with a
 * "kind" and an array of "devices" that each have a "name". */
static int check_spec(json_t *root, const char *path, struct devcg_error *err)
{
	json_t *kind = json_object_get(root, "kind"), *devices = json_object_get(root, "devices"), *dev;
	size_t i;

	if (!json_is_object(root))
		return devcg_err(err, -EINVAL, "%s: not a CDI spec (not a mapping)", hp_q(path));
	if (!json_is_string(kind) || !json_string_value(kind)[0])
		return devcg_err(err, -EINVAL, "%s: no \"kind\"", hp_q(path));
	if (!json_is_array(devices))
		return devcg_err(err, -EINVAL, "%s: \"devices\" is not an array", hp_q(path));
	json_array_foreach(devices, i, dev) {
		json_t *name = json_object_get(dev, "name");

		if (!json_is_object(dev) || !name || json_is_null(name) ||
		    (json_is_string(name) && !json_string_value(name)[0]))
			return devcg_err(err, -EINVAL, "%s: device %zu has no \"name\"", hp_q(path), i + 1);
		if (!json_is_string(name))
			return devcg_err(err, -EINVAL, "%s: the \"name\" of device %zu is not a string", hp_q(path),
					 i + 1);
	}
	return 0;
}

/* Every spec of DIRS (a missing directory has none). A file that is not a
 * usable spec is skipped and counted (the first one's message kept): it
 * may be of another kind, and must not keep the others from being used. */
static int load_specs(const char *const *dirs, struct specs *s, struct devcg_error *err)
{
	memset(s, 0, sizeof(*s));
	for (int d = 0; dirs[d]; d++) {
		int dfd = open(dirs[d], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		DIR *dir = dfd < 0 ? NULL : fdopendir(dfd);
		struct dirent *e;
		char **names = NULL;
		size_t nn = 0;

		if (!dir) {
			int code = errno;

			if (dfd >= 0)
				close(dfd);
			if (code == ENOENT)
				continue;
			return devcg_err(err, -code, "%s: %s", hp_q(dirs[d]), strerror(code));
		}
		while ((e = readdir(dir))) {
			char **more;

			if (!has_suffix(e->d_name, ".json") && !has_suffix(e->d_name, ".yaml"))
				continue;
			more = realloc(names, (nn + 1) * sizeof(*names));
			if (!more || !(more[nn] = strdup(e->d_name))) {
				names = more ? more : names;
				while (nn--)
					free(names[nn]);
				free(names);
				closedir(dir);
				return devcg_err(err, -ENOMEM, "out of memory");
			}
			names = more;
			nn++;
		}
		/* in name order, so that messages are stable */
		if (nn)
			qsort(names, nn, sizeof(*names), cmp_names);
		for (size_t i = 0; i < nn; i++) {
			struct devcg_error e2 = { 0 };
			char path[PATH_MAX], *text = NULL;
			size_t len = 0;
			json_t *root = NULL;
			struct spec *more = NULL;
			int ret;

			snprintf(path, sizeof(path), "%s/%s", dirs[d], names[i]);
			ret = read_spec(dirfd(dir), names[i], path, &text, &len, &e2);
			free(names[i]);
			if (!ret)
				ret = hp_cdi_load(text, len, has_suffix(path, ".yaml"), path, &root, &e2);
			free(text);
			if (!ret)
				ret = check_spec(root, path, &e2);
			if (!ret && !(more = realloc(s->v, (s->n + 1) * sizeof(*s->v))))
				ret = devcg_err(&e2, -ENOMEM, "%s: out of memory", hp_q(path));
			if (ret) {
				json_decref(root);
				if (!s->bad++)
					snprintf(s->first_bad, sizeof(s->first_bad), "%s", e2.msg);
				continue;
			}
			s->v = more;
			s->v[s->n].path = strdup(path);
			s->v[s->n].priority = d;
			s->v[s->n].root = root;
			s->v[s->n].kind = json_string_value(json_object_get(root, "kind"));
			s->n++;
		}
		free(names);
		closedir(dir);
	}
	return 0;
}

/* "skipped N spec files ...: the first's message", for a note or an error. */
static void bad_text(const struct specs *s, char *buf, size_t len)
{
	if (s->bad == 1)
		snprintf(buf, len, "skipped a spec file that is not usable: %s", s->first_bad);
	else
		snprintf(buf, len, "skipped %d spec files that are not usable, the first: %s", s->bad,
			 s->first_bad);
}

/* ---- from a spec's device nodes to hot-plug items ------------------------- */

static int get_uint(json_t *o, const char *key, uint64_t max, bool *has, uint64_t *v)
{
	json_t *j = json_object_get(o, key);

	*has = false;
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_integer(j) || json_integer_value(j) < 0 || (uint64_t)json_integer_value(j) > max)
		return -1;
	*has = true;
	*v = (uint64_t)json_integer_value(j);
	return 0;
}

static int node_item(json_t *node, const char *spec, const char *cdi, const char *kind, bool common,
		     bool probe, struct hp_item *it, struct devcg_error *err)
{
	json_t *jpath = json_object_get(node, "path"), *jhost = json_object_get(node, "hostPath"),
	       *jtype = json_object_get(node, "type"), *jperm = json_object_get(node, "permissions");
	const char *type = json_is_string(jtype) ? json_string_value(jtype) : "";
	uint64_t major = 0, minor = 0, mode = 0, uid = 0, gid = 0;
	bool has_major, has_minor, has_mode, has_uid, has_gid;

	memset(it, 0, sizeof(*it));
	if (!json_is_object(node) || !json_is_string(jpath) || json_string_value(jpath)[0] != '/')
		return devcg_err(err, -EINVAL, "%s: %s: a device node without an absolute \"path\"", hp_q(spec), hp_q(cdi));
	it->path = (char *)json_string_value(jpath);
	if (jhost && !json_is_string(jhost))
		return devcg_err(err, -EINVAL, "%s: %s: \"hostPath\" of %s is not a string", hp_q(spec), hp_q(cdi), hp_q(it->path));
	it->host_path = (char *)(jhost && json_string_value(jhost)[0] ? json_string_value(jhost) : it->path);
	if ((jtype && !json_is_string(jtype)) || (strcmp(type, "") && strcmp(type, "c") && strcmp(type, "u") &&
						 strcmp(type, "b") && strcmp(type, "p")))
		return devcg_err(err, -EINVAL, "%s: %s: %s: bad \"type\"", hp_q(spec), hp_q(cdi), hp_q(it->path));
	if (!strcmp(type, "p"))
		return devcg_err(err, -EINVAL, "%s: %s: %s is a FIFO, not a device devcg can allow", hp_q(spec), hp_q(cdi),
				 hp_q(it->path));
	if (get_uint(node, "major", DEVCG_ANY - 1, &has_major, &major) ||
	    get_uint(node, "minor", DEVCG_ANY - 1, &has_minor, &minor) ||
	    get_uint(node, "fileMode", UINT32_MAX, &has_mode, &mode) ||
	    get_uint(node, "uid", UINT32_MAX, &has_uid, &uid) || get_uint(node, "gid", UINT32_MAX, &has_gid, &gid))
		return devcg_err(err, -EINVAL, "%s: %s: %s: a number field is not a number in range", hp_q(spec),
				 hp_q(cdi), hp_q(it->path));
	/* the spec's numbers count with a type and a nonzero major */
	if (type[0] && major) {
		it->known = true;
		it->type = !strcmp(type, "b") ? DEVCG_BLOCK : DEVCG_CHAR;
		it->major = (uint32_t)major;
		it->minor = (uint32_t)minor;
	}
	/* letters of rwm; left out (or null): rwm; "none": asks for no access
	 * (the reference gives it an allow rule of no access, which allows
	 * nothing: devcg adds no rule and says so). Anything else, "" too, is
	 * an error rather than a guess. */
	if (jperm && !json_is_null(jperm) && !json_is_string(jperm))
		return devcg_err(err, -EINVAL, "%s: %s: %s: \"permissions\" is not a string", hp_q(spec), hp_q(cdi), hp_q(it->path));
	if (json_is_string(jperm) && !strcmp(json_string_value(jperm), "none")) {
		it->no_access = true;
	} else if (json_is_string(jperm)) {
		const char *p = json_string_value(jperm);

		for (; *p; p++) {
			if (*p == 'r')
				it->access |= DEVCG_ACC_READ;
			else if (*p == 'w')
				it->access |= DEVCG_ACC_WRITE;
			else if (*p == 'm')
				it->access |= DEVCG_ACC_MKNOD;
			else
				break;
		}
		if (*p || !it->access)
			return devcg_err(err, -EINVAL, "%s: %s: %s: bad \"permissions\" \"%s\" (letters of rwm, or "
					 "\"none\")", hp_q(spec), hp_q(cdi), hp_q(it->path),
					 hp_q(json_string_value(jperm)));
	} else {
		it->access = DEVCG_ACC_ALL;
	}
	/* Go's os.FileMode keeps the permission bits in its low nine */
	if (has_mode) {
		it->set |= DEVCG_HOTPLUG_SET_MODE;
		it->mode = (uint32_t)mode & 0777;
	}
	if (has_uid) {
		it->set |= DEVCG_HOTPLUG_SET_UID;
		it->uid = (uint32_t)uid;
	}
	if (has_gid) {
		it->set |= DEVCG_HOTPLUG_SET_GID;
		it->gid = (uint32_t)gid;
	}
	it->cdi = (char *)cdi;
	it->kind = (char *)kind;
	it->common = common;
	it->probe = probe;
	return 0;
}

/* The deviceNodes of an object's containerEdits (none: an empty array). */
static int edits_nodes(json_t *obj, const char *spec, const char *what, json_t **nodes,
		       struct devcg_error *err)
{
	json_t *edits = json_object_get(obj, "containerEdits"), *dn;

	*nodes = NULL;
	if (!edits || json_is_null(edits))
		return 0;
	if (!json_is_object(edits))
		return devcg_err(err, -EINVAL, "%s: %s: \"containerEdits\" is not an object", hp_q(spec), hp_q(what));
	dn = json_object_get(edits, "deviceNodes");
	if (dn && !json_is_null(dn) && !json_is_array(dn))
		return devcg_err(err, -EINVAL, "%s: %s: \"deviceNodes\" is not an array", hp_q(spec), hp_q(what));
	*nodes = json_is_array(dn) ? dn : NULL;
	return 0;
}

/* Append the nodes in NODES (may be NULL), skipping paths OUT has already. */
static int add_nodes(struct hp_list *out, json_t *nodes, const char *spec, const char *cdi,
		     const char *kind, bool common, bool probe, struct devcg_error *err)
{
	size_t i, k;
	json_t *node;
	int ret;

	json_array_foreach(nodes, i, node) {
		struct hp_item it;
		bool dup = false;

		ret = node_item(node, spec, cdi, kind, common, probe, &it, err);
		if (ret)
			return ret;
		/* bounded before the quadratic look for the same path below */
		if (out->n >= MAX_LISTED_NODES)
			return devcg_err(err, -E2BIG, "%s: more than %d device nodes in one command", hp_q(spec),
					 MAX_LISTED_NODES);
		for (k = 0; k < out->n && !dup; k++)
			dup = !strcmp(out->v[k].path, it.path) && out->v[k].probe == probe;
		if (!dup && hp_list_add(out, &it))
			return devcg_err(err, -ENOMEM, "out of memory");
	}
	return 0;
}

/* Split "vendor/class=name"; KIND and NAME point into BUF. */
static int split_name(const char *full, char *buf, size_t len, char **kind, char **name,
		      struct devcg_error *err)
{
	char *eq, *slash;

	snprintf(buf, len, "%s", full);
	eq = strchr(buf, '=');
	slash = strchr(buf, '/');
	if (!eq || !slash || slash > eq || slash == buf || slash + 1 == eq || !eq[1] ||
	    (strchr(slash + 1, '/') && strchr(slash + 1, '/') < eq))
		return devcg_err(err, -EINVAL, "'%s' is not a CDI device name (vendor/class=name)", hp_q(full));
	*eq = '\0';
	*kind = buf;
	*name = eq + 1;
	return 0;
}

struct found {
	struct spec *spec;
	json_t *device;
};

/* The device NAME of KIND: from the spec of the highest priority that has
 * it; twice at that priority is a conflict, as in the CDI cache. */
static int find_device(struct specs *s, const char *kind, const char *name, const char *full,
		       const char *const *dirs, struct found *f, struct devcg_error *err)
{
	char have[512] = "";
	size_t off = 0, i, k;
	bool any_kind = false;
	json_t *dev;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < s->n; i++) {
		/* load_specs() checked: an array of devices, each with a name */
		json_t *devices = json_object_get(s->v[i].root, "devices");

		if (strcmp(s->v[i].kind, kind))
			continue;
		any_kind = true;
		json_array_foreach(devices, k, dev) {
			const char *dn = json_string_value(json_object_get(dev, "name"));

			if (strcmp(dn, name)) {
				if (off < sizeof(have) - 64)
					off += (size_t)snprintf(have + off, sizeof(have) - off, "%s%s",
								off ? ", " : "", hp_q(dn));
				continue;
			}
			if (f->spec && f->spec->priority == s->v[i].priority)
				return devcg_err(err, -EINVAL, "CDI device %s is defined in both %s and %s",
						 hp_q(full), hp_q(f->spec->path), hp_q(s->v[i].path));
			if (!f->spec || s->v[i].priority > f->spec->priority) {
				f->spec = &s->v[i];
				f->device = dev;
			}
		}
	}
	if (f->spec)
		return 0;
	{
		char where[512] = "", bad[600] = "";
		size_t w = 0;

		for (i = 0; dirs[i] && w < sizeof(where) - 1; i++)
			w += (size_t)snprintf(where + w, sizeof(where) - w, "%s%s", i ? ", " : "", hp_q(dirs[i]));
		if (s->bad) {
			bad[0] = ';';
			bad[1] = ' ';
			bad_text(s, bad + 2, sizeof(bad) - 2);
		}
		if (any_kind)
			return devcg_err(err, -ENOENT, "CDI device %s not found: the specs of kind %s in %s "
					 "have %s%s", hp_q(full), hp_q(kind), where, have[0] ? have : "no devices", bad);
		return devcg_err(err, -ENOENT, "CDI device %s not found: no spec of kind %s in %s%s", hp_q(full),
				 hp_q(kind), where, bad);
	}
}

/* Does the spec have nodes of its own (that every device of it brings)? */
static bool has_common_nodes(json_t *root)
{
	json_t *edits = json_object_get(root, "containerEdits");

	return json_array_size(json_object_get(json_is_object(edits) ? edits : NULL, "deviceNodes")) > 0;
}

int hp_cdi_resolve(const char *const *names, const char *const *dirs, bool probes,
		   struct hp_list *out, struct devcg_error *err)
{
	size_t i, k, n0 = out->n;
	struct specs s;
	int ret;

	if (!names || !names[0])
		return 0;
	if (!dirs)
		dirs = default_dirs;
	ret = load_specs(dirs, &s, err);
	for (i = 0; !ret && names[i]; i++) {
		char buf[1024], *kind, *name;
		struct found f;
		json_t *nodes, *dev;

		ret = split_name(names[i], buf, sizeof(buf), &kind, &name, err);
		if (!ret)
			ret = find_device(&s, kind, name, names[i], dirs, &f, err);
		if (!ret)
			ret = edits_nodes(f.device, f.spec->path, names[i], &nodes, err);
		if (!ret)
			ret = add_nodes(out, nodes, f.spec->path, names[i], kind, false, false, err);
		if (!ret)
			ret = edits_nodes(f.spec->root, f.spec->path, "the spec", &nodes, err);
		if (!ret)
			ret = add_nodes(out, nodes, f.spec->path, names[i], kind, true, false, err);
		/* the other devices of the spec: does the container still have one?
		 * (only asked when the spec has common nodes, which detach keeps
		 * while another of its devices is in) */
		if (ret || !probes || !has_common_nodes(f.spec->root))
			continue;
		json_array_foreach(json_object_get(f.spec->root, "devices"), k, dev) {
			const char *other = json_string_value(json_object_get(dev, "name"));
			char full[1024];
			bool asked = false;

			for (size_t j = 0; names[j] && !asked; j++) {
				char b2[1024], *k2, *n2;

				asked = !split_name(names[j], b2, sizeof(b2), &k2, &n2, NULL) &&
					!strcmp(k2, kind) && !strcmp(n2, other);
			}
			if (asked)
				continue;
			snprintf(full, sizeof(full), "%s=%s", kind, other);
			ret = edits_nodes(dev, f.spec->path, full, &nodes, err);
			if (!ret)
				ret = add_nodes(out, nodes, f.spec->path, full, kind, false, true, err);
			if (ret)
				break;
		}
	}
	/* the files skipped on the way are said with the first node */
	if (!ret && s.bad && out->n > n0) {
		char text[700];

		bad_text(&s, text, sizeof(text));
		if (!(out->v[n0].note = strdup(text)))
			ret = devcg_err(err, -ENOMEM, "out of memory");
	}
	if (ret) /* nothing appended on failure */
		hp_list_truncate(out, n0);
	specs_free(&s);
	return ret;
}

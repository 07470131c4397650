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
 * YAML is read with libyaml (YAML 1.1, as Go's yaml reads CDI specs: a
 * plain 0666 is octal) and turned into the same jansson tree as JSON, so
 * that one reader interprets both.
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
#include <yaml.h>

#define MAX_SPEC_BYTES (16u << 20)
#define MAX_YAML_DEPTH 64
#define MAX_YAML_NODES 200000 /* aliases counted as the nodes they stand for */
#define MAX_YAML_ANCHORS 256
/* nodes listed from specs, before one item per path (at most HP_MAX_NODES) */
#define MAX_LISTED_NODES (16 * HP_MAX_NODES)

static const char *const default_dirs[] = { "/etc/cdi", "/var/run/cdi", NULL };

/* ---- YAML to jansson ---------------------------------------------------- */

/* A plain scalar resolved as YAML 1.1 resolves the types CDI uses. */
static json_t *plain_scalar(const char *s, size_t len)
{
	char buf[64], *end;
	long long v;
	int base = 10;
	size_t off = 0;

	if (!len || (len == 1 && s[0] == '~') || (len == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) ||
							    !memcmp(s, "NULL", 4))))
		return json_null();
	if ((len == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "True", 4) || !memcmp(s, "TRUE", 4))))
		return json_true();
	if ((len == 5 && (!memcmp(s, "false", 5) || !memcmp(s, "False", 5) || !memcmp(s, "FALSE", 5))))
		return json_false();
	if (len < sizeof(buf)) {
		memcpy(buf, s, len);
		buf[len] = '\0';
		if (buf[0] == '-' || buf[0] == '+')
			off = 1;
		if (buf[off] == '0' && (buf[off + 1] == 'x' || buf[off + 1] == 'X'))
			base = 16, off += 2;
		else if (buf[off] == '0' && buf[off + 1] == 'o')
			base = 8, off += 2;
		else if (buf[off] == '0' && buf[off + 1])
			base = 8, off += 1;
		if (buf[off] && buf[off] != '-' && buf[off] != '+') {
			errno = 0;
			v = strtoll(buf + off, &end, base);
			if (!errno && !*end)
				return json_integer(buf[0] == '-' ? -v : v);
		}
	}
	return json_stringn(s, len);
}

/*
 * The YAML is read as a stream of events (yaml_parser_parse()), not loaded
 * as a document: libyaml's loader is quadratic in the nesting depth, and a
 * spec is refused at the first node deeper than MAX_YAML_DEPTH, before the
 * rest of it is read. An alias shares its anchor's value (jansson counts
 * references) and counts its anchor's nodes against MAX_YAML_NODES and its
 * anchor's height against MAX_YAML_DEPTH, so aliases neither copy subtrees
 * nor nest deeper than the cap. An anchor is known once its node is
 * complete: a node cannot contain itself.
 */
struct anchor {
	char *name;
	size_t len;
	json_t *value;
	size_t nodes;  /* in its subtree */
	int height;    /* levels below it */
};

struct frame {
	json_t *value;  /* the sequence or mapping being filled */
	char *anchor;   /* registered when it is complete */
	size_t start;   /* nodes counted before it */
	int height;     /* levels below it so far */
	bool has_key;   /* mapping: KEY waits for its value */
	bool text;      /* ... and names a field that CDI reads as a string */
	char key[256];
};

struct ybuild {
	struct frame stack[MAX_YAML_DEPTH + 1];
	int depth;      /* open collections */
	size_t nodes;
	struct anchor anchors[MAX_YAML_ANCHORS];
	size_t nanchors;
	json_t *root;
	char why[256];
};

/* The fields of a CDI spec that are strings: Go's reader (sigs.k8s.io/yaml)
 * takes a plain scalar there as its text, so "name: 0" names device "0"
 * (and "name: 0x10" device "0x10", not "16"). */
static bool text_field(const char *key)
{
	static const char *const fields[] = { "cdiVersion", "kind", "name", "path", "hostPath", "type",
					      "permissions", NULL };

	for (int i = 0; fields[i]; i++)
		if (!strcmp(key, fields[i]))
			return true;
	return false;
}

static int yfail(struct ybuild *b, const yaml_event_t *ev, const char *what)
{
	snprintf(b->why, sizeof(b->why), "%zu:%zu: %s", ev->start_mark.line + 1, ev->start_mark.column + 1,
		 what);
	return -1;
}

/* Count a node of HEIGHT levels (and NODES nodes) at the current depth. */
static int ycount(struct ybuild *b, const yaml_event_t *ev, size_t nodes, int height)
{
	char what[96];

	if (b->depth + height > MAX_YAML_DEPTH) {
		snprintf(what, sizeof(what), "nested more than %d levels deep", MAX_YAML_DEPTH);
		return yfail(b, ev, what);
	}
	if (nodes > MAX_YAML_NODES - b->nodes) {
		snprintf(what, sizeof(what), "too many nodes (more than %d, aliases counted)", MAX_YAML_NODES);
		return yfail(b, ev, what);
	}
	b->nodes += nodes;
	for (int i = b->depth - 1, h = height + 1; i >= 0 && b->stack[i].height < h; i--, h++)
		b->stack[i].height = h;
	return 0;
}

/* Put V (its reference taken) where the open collection wants it. */
static int yput(struct ybuild *b, const yaml_event_t *ev, json_t *v)
{
	struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
	int ret;

	if (!v)
		return yfail(b, ev, "a string that is not UTF-8 (or out of memory)");
	if (!f) {
		b->root = v;
		return 0;
	}
	if (json_is_array(f->value)) {
		ret = json_array_append_new(f->value, v);
	} else {
		f->has_key = false;
		ret = json_object_set_new(f->value, f->key, v);
	}
	return ret ? yfail(b, ev, "out of memory") : 0;
}

static int yanchor(struct ybuild *b, const yaml_event_t *ev, const char *name, json_t *v, size_t nodes,
		   int height)
{
	struct anchor *a;

	if (!name)
		return 0;
	if (b->nanchors == MAX_YAML_ANCHORS) {
		char what[64];

		snprintf(what, sizeof(what), "more than %d anchors", MAX_YAML_ANCHORS);
		return yfail(b, ev, what);
	}
	a = &b->anchors[b->nanchors];
	a->len = strlen(name);
	a->name = strdup(name);
	if (!a->name)
		return yfail(b, ev, "out of memory");
	a->value = json_incref(v);
	a->nodes = nodes;
	a->height = height;
	b->nanchors++;
	return 0;
}

/* The key of the open mapping that waits for one: a short scalar. */
static int ykey(struct ybuild *b, const yaml_event_t *ev)
{
	struct frame *f = &b->stack[b->depth - 1];
	size_t len = ev->data.scalar.length;

	if (ev->type != YAML_SCALAR_EVENT || len >= sizeof(f->key) ||
	    memchr(ev->data.scalar.value, '\0', len))
		return yfail(b, ev, "a mapping key that is not a short string");
	memcpy(f->key, ev->data.scalar.value, len);
	f->key[len] = '\0';
	if (json_object_get(f->value, f->key)) {
		char what[300];

		snprintf(what, sizeof(what), "duplicate key \"%s\"", hp_q(f->key));
		return yfail(b, ev, what);
	}
	f->has_key = true;
	f->text = text_field(f->key);
	return 0;
}

static json_t *yscalar(const struct frame *f, const yaml_event_t *ev)
{
	const char *s = (const char *)ev->data.scalar.value, *tag = (const char *)ev->data.scalar.tag;
	size_t len = ev->data.scalar.length;
	json_t *v;

	if (ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE || (tag && !strcmp(tag, YAML_STR_TAG)))
		return json_stringn(s, len);
	v = plain_scalar(s, len);
	/* a string field keeps a plain number's or boolean's text */
	if (v && f && f->has_key && f->text && !json_is_null(v) && !json_is_string(v)) {
		json_decref(v);
		v = json_stringn(s, len);
	}
	return v;
}

/* One event; 1: the document is complete. */
static int yevent(struct ybuild *b, const yaml_event_t *ev)
{
	struct frame *f = b->depth ? &b->stack[b->depth - 1] : NULL;
	const char *anchor = NULL;
	json_t *v;

	switch (ev->type) {
	case YAML_STREAM_START_EVENT:
	case YAML_DOCUMENT_START_EVENT:
		return 0;
	case YAML_DOCUMENT_END_EVENT:
	case YAML_STREAM_END_EVENT:
		return 1; /* the first document is the spec, as in Go's reader */
	default:
		break;
	}
	if (f && json_is_object(f->value) && !f->has_key && ev->type != YAML_MAPPING_END_EVENT)
		return ykey(b, ev);
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		if (ycount(b, ev, 1, 0))
			return -1;
		v = yscalar(f, ev);
		if (v && yanchor(b, ev, (const char *)ev->data.scalar.anchor, v, 1, 0)) {
			json_decref(v);
			return -1;
		}
		return yput(b, ev, v);
	case YAML_ALIAS_EVENT:
		for (size_t i = b->nanchors; i-- > 0;) {
			const struct anchor *a = &b->anchors[i];

			if (a->len == strlen((const char *)ev->data.alias.anchor) &&
			    !memcmp(a->name, ev->data.alias.anchor, a->len)) {
				if (ycount(b, ev, a->nodes, a->height))
					return -1;
				return yput(b, ev, json_incref(a->value));
			}
		}
		return yfail(b, ev, "an alias of an unknown anchor (or of the node it is in)");
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (ycount(b, ev, 1, 0))
			return -1;
		anchor = (const char *)(ev->type == YAML_SEQUENCE_START_EVENT ? ev->data.sequence_start.anchor
									  : ev->data.mapping_start.anchor);
		f = &b->stack[b->depth];
		memset(f, 0, offsetof(struct frame, key));
		f->value = ev->type == YAML_SEQUENCE_START_EVENT ? json_array() : json_object();
		f->start = b->nodes - 1;
		if (!f->value || (anchor && !(f->anchor = strdup(anchor)))) {
			json_decref(f->value);
			return yfail(b, ev, "out of memory");
		}
		b->depth++;
		return 0;
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT: {
		struct frame done = *f;
		int ret;

		b->depth--;
		ret = yanchor(b, ev, done.anchor, done.value, b->nodes - done.start, done.height);
		free(done.anchor);
		if (ret) {
			json_decref(done.value);
			return -1;
		}
		return yput(b, ev, done.value);
	}
	default:
		return yfail(b, ev, "an unexpected YAML event");
	}
}

static void ybuild_free(struct ybuild *b)
{
	while (b->depth > 0) {
		b->depth--;
		json_decref(b->stack[b->depth].value);
		free(b->stack[b->depth].anchor);
	}
	for (size_t i = 0; i < b->nanchors; i++) {
		free(b->anchors[i].name);
		json_decref(b->anchors[i].value);
	}
}

int hp_cdi_load(const char *text, size_t len, bool yaml, const char *source, json_t **out,
		struct devcg_error *err)
{
	yaml_parser_t parser;
	struct ybuild *b;
	int ret = 0;

	*out = NULL;
	if (!yaml) {
		json_error_t je;

		*out = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
		if (!*out)
			return devcg_err(err, -EINVAL, "%s:%d:%d: %s", hp_q(source), je.line, je.column, hp_q(je.text));
		return 0;
	}
	b = calloc(1, sizeof(*b));
	if (!b || !yaml_parser_initialize(&parser)) {
		free(b);
		return devcg_err(err, -ENOMEM, "%s: out of memory", hp_q(source));
	}
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	while (!ret) {
		yaml_event_t ev;

		if (!yaml_parser_parse(&parser, &ev)) {
			ret = devcg_err(err, -EINVAL, "%s:%zu:%zu: %s", hp_q(source), parser.problem_mark.line + 1,
					parser.problem_mark.column + 1, parser.problem ? parser.problem : "not YAML");
			break;
		}
		ret = yevent(b, &ev);
		yaml_event_delete(&ev);
		if (ret < 0)
			ret = devcg_err(err, -EINVAL, "%s:%s", hp_q(source), b->why);
	}
	if (ret > 0 && !b->root)
		ret = devcg_err(err, -EINVAL, "%s: an empty document", hp_q(source));
	if (ret > 0) {
		*out = b->root;
		b->root = NULL;
		ret = 0;
	}
	json_decref(b->root);
	ybuild_free(b);
	free(b);
	yaml_parser_delete(&parser);
	return ret;
}

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

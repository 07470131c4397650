// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * CDI specs as text into a jansson tree (hp_cdi_load(), for cdi.c).
 *
 * YAML is read with libyaml (YAML 1.1, as Go's yaml reads CDI specs: a
 * plain 0666 is octal) and turned into the same jansson tree as JSON, so
 * that one reader interprets both.
 */
#include "cdi.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#define MAX_YAML_DEPTH 64
#define MAX_YAML_NODES 200000 /* aliases counted as the nodes they stand for */
#define MAX_YAML_ANCHORS 256

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
	/* (not zeroed whole: 27 KiB, and each frame and anchor is set as it
	 * is taken; fresh pages cost a fault each) */
	b = malloc(sizeof(*b));
	if (!b || !yaml_parser_initialize(&parser)) {
		free(b);
		return devcg_err(err, -ENOMEM, "%s: out of memory", hp_q(source));
	}
	b->depth = 0;
	b->nodes = b->nanchors = 0;
	b->root = NULL;
	b->why[0] = '\0';
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

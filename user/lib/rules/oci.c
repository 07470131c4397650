// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * OCI JSON: a runtime config.json (linux.resources.devices), a
 * LinuxResources object as `runc update -r` takes it (devices), or a bare
 * array of LinuxDeviceCgroup objects. jansson parses; this file maps the
 * objects to rules and points errors at the offending line and column.
 */
#include "rules/rules.h"

#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A step of a path to a value: an object key, or an array index. */
struct step {
	const char *key;
	size_t index;
};

struct oci_ctx {
	const char *text;
	size_t len;
	const char *source;
	struct devcg_error *err;
	/* a runtime profile: a rule without access is the runtime's error (runc)
	 * or a no-op (crun), not "rwm" */
	enum devcg_runtime runtime;
};

static size_t skip_ws(const char *s, size_t len, size_t i)
{
	while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	return i;
}

/* Skip one value of already-validated JSON; returns the offset after it. */
static size_t skip_value(const char *s, size_t len, size_t i)
{
	int depth = 0;

	do {
		i = skip_ws(s, len, i);
		if (i >= len)
			return len;
		if (s[i] == '"') {
			for (i++; i < len && s[i] != '"'; i++)
				if (s[i] == '\\')
					i++;
			i++;
		} else if (s[i] == '{' || s[i] == '[') {
			depth++;
			i++;
		} else if (s[i] == '}' || s[i] == ']') {
			depth--;
			i++;
		} else if (s[i] == ',' || s[i] == ':') {
			i++;
		} else {
			/* a literal; strchr() would match a NUL byte, so step over it */
			do
				i++;
			while (i < len && s[i] && !strchr(",]}: \t\r\n", s[i]));
		}
	} while (depth > 0);
	return i;
}

/* Offset of the value at PATH (depth N), or of the deepest one found. */
static size_t locate(const struct oci_ctx *c, const struct step *path, size_t n)
{
	const char *s = c->text;
	size_t i = skip_ws(s, c->len, 0), d;

	for (d = 0; d < n; d++) {
		size_t here = i, k;

		if (i >= c->len || (s[i] != '{' && s[i] != '['))
			return here;
		i = skip_ws(s, c->len, i + 1);
		for (k = 0; i < c->len && s[i] != '}' && s[i] != ']'; k++) {
			bool hit;

			if (path[d].key) {
				size_t klen = strlen(path[d].key);

				hit = s[i] == '"' && i + klen + 1 < c->len &&
				      !memcmp(s + i + 1, path[d].key, klen) && s[i + klen + 1] == '"';
				i = skip_ws(s, c->len, skip_value(s, c->len, i)); /* key */
				i = skip_ws(s, c->len, i + 1);                   /* ':' */
			} else {
				hit = k == path[d].index;
			}
			if (hit)
				break;
			i = skip_ws(s, c->len, skip_value(s, c->len, i));
			if (i < c->len && s[i] == ',')
				i = skip_ws(s, c->len, i + 1);
		}
		if (i >= c->len || s[i] == '}' || s[i] == ']')
			return here;
	}
	return i;
}

__attribute__((format(printf, 5, 6)))
static int fail_at(const struct oci_ctx *c, const struct step *path, size_t n, int code,
		   const char *fmt, ...)
{
	size_t off = locate(c, path, n), line = 1, col = 1, i;
	char what[768], source[256];
	va_list ap;

	for (i = 0; i < off && i < c->len; i++) {
		if (c->text[i] == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return devcg_err(c->err, code, "%s:%zu:%zu: %s",
			 devcg_quote(source, sizeof(source), c->source, (size_t)-1), line, col, what);
}

/* A major or minor: missing, null or -1 (runc's wildcard) mean '*'. */
static int oci_number(const struct oci_ctx *c, json_t *obj, struct step *path, size_t d,
		      const char *key, uint32_t *out)
{
	json_t *v = json_object_get(obj, key);
	json_int_t n;

	path[d + 1].key = key;
	*out = DEVCG_ANY;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v))
		return fail_at(c, path, d + 2, -EINVAL, "\"%s\" must be an integer", key);
	n = json_integer_value(v);
	if (n == -1)
		return 0;
	if (n < 0 || n >= (json_int_t)DEVCG_ANY)
		return fail_at(c, path, d + 2, -ERANGE, "\"%s\" is out of range", key);
	*out = (uint32_t)n;
	return 0;
}

/* PATH[D] is the rule object; PATH[D + 1] names its field in messages. */
static int oci_rule(const struct oci_ctx *c, json_t *obj, struct step *path, size_t d,
		    struct devcg_rule *r)
{
	json_t *allow = json_object_get(obj, "allow");
	json_t *type = json_object_get(obj, "type");
	json_t *access = json_object_get(obj, "access");
	const char *t = "a", *a = "rwm";
	char q[256];
	size_t i;
	int ret;

	if (!json_is_object(obj))
		return fail_at(c, path, d + 1, -EINVAL, "a device rule must be an object");
	if (!json_is_boolean(allow)) {
		path[d + 1].key = "allow";
		return fail_at(c, path, allow ? d + 2 : d + 1, -EINVAL,
			       "\"allow\" must be present and be true or false");
	}
	r->verb = json_is_true(allow) ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
	if (type && !json_is_null(type)) {
		path[d + 1].key = "type";
		if (!json_is_string(type))
			return fail_at(c, path, d + 2, -EINVAL, "\"type\" must be \"a\", \"b\" or \"c\"");
		t = json_string_value(type);
		if (strcmp(t, "a") && strcmp(t, "b") && strcmp(t, "c"))
			return fail_at(c, path, d + 2, -EINVAL,
				       "\"type\" must be \"a\", \"b\" or \"c\", not \"%s\"",
				       devcg_quote(q, sizeof(q), t, json_string_length(type)));
	}
	r->type = t[0] == 'a' ? DEVCG_ALL : t[0] == 'b' ? DEVCG_BLOCK : DEVCG_CHAR;
	ret = oci_number(c, obj, path, d, "major", &r->major);
	if (!ret)
		ret = oci_number(c, obj, path, d, "minor", &r->minor);
	if (ret)
		return ret;
	if (c->runtime && (!json_is_string(access) || !json_string_length(access))) {
		path[d + 1].key = "access";
		return fail_at(c, path, access ? d + 2 : d + 1, -EINVAL,
			       "\"access\" is required by the %s profile (%s)", devcg_runtime_name(c->runtime),
			       c->runtime == DEVCG_RUNTIME_RUNC ? "runc refuses a rule without it"
							       : "crun's program would never match it");
	}
	if (access && !json_is_null(access)) {
		path[d + 1].key = "access";
		if (!json_is_string(access))
			return fail_at(c, path, d + 2, -EINVAL, "\"access\" must be a string of 'rwm'");
		a = json_string_value(access);
	}
	path[d + 1].key = "access";
	r->access = 0;
	for (i = 0; a[i]; i++) {
		if (a[i] == 'r')
			r->access |= DEVCG_ACC_READ;
		else if (a[i] == 'w')
			r->access |= DEVCG_ACC_WRITE;
		else if (a[i] == 'm')
			r->access |= DEVCG_ACC_MKNOD;
		else
			return fail_at(c, path, d + 2, -EINVAL, "\"access\" must be letters of 'rwm', not \"%s\"",
				       devcg_quote(q, sizeof(q), a, (size_t)-1));
	}
	if (!r->access || i > 3)
		return fail_at(c, path, access ? d + 2 : d + 1, -EINVAL,
			       "\"access\" must be a non-empty subset of 'rwm'");
	if (r->type == DEVCG_ALL) {
		/* see parse.c: 'a' resets, so narrower fields would be dropped */
		path[d + 1].key = r->major != DEVCG_ANY ? "major" : r->minor != DEVCG_ANY ? "minor" : NULL;
		if (path[d + 1].key)
			return fail_at(c, path, d + 2, -EINVAL,
				       "type \"a\" means every device: \"%s\" must be absent", path[d + 1].key);
		path[d + 1].key = "access";
		if (r->access != DEVCG_ACC_ALL)
			return fail_at(c, path, d + 2, -EINVAL,
				       "type \"a\" resets the whole list: its access can only be \"rwm\"");
	}
	return 0;
}

/*
 * The paths of linux.devices (runc drops a default device that one of them
 * names); *PATHS points into ROOT.
 */
static int oci_device_paths(const struct oci_ctx *c, json_t *linux_, const char ***paths, size_t *n)
{
	struct step path[4] = { { .key = "linux" }, { .key = "devices" } };
	json_t *devs = json_object_get(linux_, "devices"), *d;
	size_t i;

	*paths = NULL;
	*n = 0;
	if (!devs || json_is_null(devs))
		return 0;
	if (!json_is_array(devs))
		return fail_at(c, path, 2, -EINVAL, "linux.devices must be an array");
	*paths = calloc(json_array_size(devs) + 1, sizeof(**paths));
	if (!*paths)
		return devcg_err(c->err, -ENOMEM, "out of memory");
	json_array_foreach(devs, i, d) {
		json_t *p = json_object_get(d, "path");

		path[2] = (struct step){ .index = i };
		path[3].key = "path";
		if (!json_is_object(d))
			return fail_at(c, path, 3, -EINVAL, "a linux.devices entry must be an object");
		if (!json_is_string(p))
			return fail_at(c, path, p ? 4 : 3, -EINVAL, "\"path\" must be a string");
		(*paths)[(*n)++] = json_string_value(p);
	}
	return 0;
}

/* Append the runtime's whole list for a config.json with resources rules
 * OUT (N). */
static int oci_runtime(const struct oci_ctx *c, struct devcg_rules *rules, json_t *linux_,
		       const struct devcg_rule *out, size_t n)
{
	struct step path[4] = { { .key = "linux" }, { .key = "resources" }, { .key = "devices" } };
	struct devcg_error inner = { 0 };
	const char **paths = NULL;
	size_t npaths = 0;
	long where = -1;
	int ret;

	ret = oci_device_paths(c, linux_, &paths, &npaths);
	if (ret) {
		free(paths);
		return ret;
	}
	ret = devcg_runtime_rules(rules, c->runtime, out, n, paths, npaths, &where, &inner);
	free(paths);
	if (!ret)
		return 0;
	if (where >= 0) {
		path[3] = (struct step){ .index = (size_t)where };
		return fail_at(c, path, 4, ret, "%s", inner.msg);
	}
	return devcg_err(c->err, ret, "%s: %s", c->source, inner.msg);
}

int devcg_parse_oci(struct devcg_rules *rules, const char *text, size_t len, const char *source,
		    const struct devcg_parse_opts *opts, struct devcg_error *err)
{
	char qs[256], qt[256];
	struct oci_ctx c = { .text = text, .len = len, .source = source, .err = err };
	struct step path[5] = { 0 };
	struct devcg_rule *out = NULL;
	json_t *root, *devices, *linux_ = NULL;
	json_error_t jerr;
	size_t depth = 0, i, n;
	int ret = 0;

	uint8_t verb = DEVCG_OPT(opts, devcg_parse_opts, verb, 0);

	c.runtime = DEVCG_OPT(opts, devcg_parse_opts, runtime, DEVCG_RUNTIME_NONE);
	if (c.runtime != DEVCG_RUNTIME_NONE && c.runtime != DEVCG_RUNTIME_RUNC &&
	    c.runtime != DEVCG_RUNTIME_CRUN)
		return devcg_err(err, -EINVAL, "%s: the runtime profile must be runc or crun", source);
	root = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
	if (!root)
		return devcg_err(err, -EINVAL, "%s:%d:%d: invalid JSON: %s",
				 devcg_quote(qs, sizeof(qs), source, (size_t)-1), jerr.line, jerr.column,
				 devcg_quote(qt, sizeof(qt), jerr.text, (size_t)-1));
	devices = root;
	if (c.runtime && (!json_is_object(root) || !json_is_object(json_object_get(root, "linux")))) {
		ret = fail_at(&c, path, 0, -EINVAL,
			      "the %s profile needs a whole config.json (with a \"linux\" object)",
			      devcg_runtime_name(c.runtime));
		goto done;
	}
	if (json_is_object(root)) {
		linux_ = json_object_get(root, "linux");

		if (linux_) {
			json_t *res = json_object_get(linux_, "resources");

			path[0].key = "linux";
			path[1].key = "resources";
			path[2].key = "devices";
			/* a malformed config must not pass for one without device rules */
			if (!json_is_object(linux_) || (res && !json_is_object(res))) {
				ret = fail_at(&c, path, json_is_object(linux_) ? 2 : 1, -EINVAL,
					      "\"%s\" must be an object", json_is_object(linux_) ? "resources" : "linux");
				goto done;
			}
			depth = 3;
			devices = res ? json_object_get(res, "devices") : NULL;
			if ((!devices || json_is_null(devices)) && c.runtime) {
				ret = oci_runtime(&c, rules, linux_, NULL, 0);
				goto done;
			}
			if (!devices || json_is_null(devices))
				goto done; /* a config with no device rules */
		} else if ((devices = json_object_get(root, "devices"))) {
			path[0].key = "devices";
			depth = 1;
			if (json_is_null(devices))
				goto done;
		} else {
			ret = fail_at(&c, path, 0, -EINVAL,
				      "expected linux.resources.devices (config.json) or devices (LinuxResources)");
			goto done;
		}
	}
	if (!json_is_array(devices)) {
		ret = fail_at(&c, path, depth, -EINVAL, "the device rules must be an array");
		goto done;
	}
	n = json_array_size(devices);
	if (n + devcg_rules_count(rules) > DEVCG_MAX_RULES) {
		ret = fail_at(&c, path, depth, -E2BIG, "more than %d rules", DEVCG_MAX_RULES);
		goto done;
	}
	out = calloc(n ? n : 1, sizeof(*out));
	if (!out) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < n && !ret; i++) {
		path[depth] = (struct step){ .index = i };
		ret = oci_rule(&c, json_array_get(devices, i), path, depth, &out[i]);
		if (!ret && verb && out[i].verb != verb) {
			path[depth + 1].key = "allow";
			ret = fail_at(&c, path, depth + 2, -EINVAL,
				      "the rule says '%s' where only '%s' rules are accepted",
				      out[i].verb == DEVCG_VERB_ALLOW ? "allow" : "deny",
				      verb == DEVCG_VERB_ALLOW ? "allow" : "deny");
		}
	}
	if (!ret && c.runtime)
		ret = oci_runtime(&c, rules, linux_, out, n);
	else if (!ret)
		ret = devcg_rules_append(rules, out, n, err);
done:
	free(out);
	json_decref(root);
	return ret;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The text forms of the rule language: devices.list lines (with or without
 * a verb) and systemd's DeviceAllow= forms (/dev paths, char-NAME and
 * block-NAME looked up in /proc/devices). OCI JSON lives in oci.c.
 */
#include "internal.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define MAX_TOKENS 8

struct token {
	const char *s;
	size_t len;
	size_t col; /* 1-based */
};

struct line_ctx {
	const char *source;
	size_t lineno;
	const struct devcg_parse_opts *opts;
	struct devcg_error *err;
	/* rules this line expands to (char-* globs give several) */
	struct devcg_rule *out;
	size_t n, cap;
};

__attribute__((format(printf, 4, 5)))
static int fail(struct line_ctx *c, const struct token *t, int code, const char *fmt, ...)
{
	char what[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return devcg_err(c->err, code, "%s:%zu:%zu: %s", c->source, c->lineno, t ? t->col : 1, what);
}

static bool tok_is(const struct token *t, const char *word)
{
	return t->len == strlen(word) && !memcmp(t->s, word, t->len);
}

static char *tok_dup(const struct token *t)
{
	return strndup(t->s, t->len);
}

static int emit(struct line_ctx *c, uint8_t verb, uint8_t type, uint32_t major, uint32_t minor,
		uint8_t access)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4;
		struct devcg_rule *v = realloc(c->out, cap * sizeof(*v));

		if (!v)
			return devcg_err(c->err, -ENOMEM, "out of memory");
		c->out = v;
		c->cap = cap;
	}
	c->out[c->n++] = (struct devcg_rule){
		.verb = verb, .type = type, .access = access, .major = major, .minor = minor,
	};
	return 0;
}

/* A major or minor: decimal, or '*'. ~0 is the kernel's wildcard, so a
 * number may not reach it. */
static int parse_num(struct line_ctx *c, const struct token *t, const char *s, size_t len,
		     const char *what, uint32_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (len == 1 && s[0] == '*') {
		*out = DEVCG_ANY;
		return 0;
	}
	if (!len)
		return fail(c, t, -EINVAL, "missing %s number", what);
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return fail(c, t, -EINVAL, "%s must be a number or '*'", what);
		v = v * 10 + (uint64_t)(s[i] - '0');
		if (v >= DEVCG_ANY)
			return fail(c, t, -ERANGE, "%s number is too large", what);
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_access(struct line_ctx *c, const struct token *t, uint8_t *out)
{
	uint8_t acc = 0;
	size_t i;

	for (i = 0; i < t->len; i++) {
		switch (t->s[i]) {
		case 'r': acc |= DEVCG_ACC_READ; break;
		case 'w': acc |= DEVCG_ACC_WRITE; break;
		case 'm': acc |= DEVCG_ACC_MKNOD; break;
		default:
			return fail(c, t, -EINVAL, "access must be letters of 'rwm', not '%.*s'",
				    (int)t->len, t->s);
		}
	}
	if (!acc || t->len > 3)
		return fail(c, t, -EINVAL, "access must be a non-empty subset of 'rwm'");
	*out = acc;
	return 0;
}

/* The optional access after a systemd form: rwm when it is missing. */
static int optional_access(struct line_ctx *c, const struct token *tok, size_t ntok, size_t at,
			   uint8_t *acc)
{
	*acc = DEVCG_ACC_ALL;
	if (ntok > at + 1)
		return fail(c, &tok[at + 1], -EINVAL, "unexpected text after the access");
	return ntok == at ? 0 : parse_access(c, &tok[at], acc);
}

static int parse_path(struct line_ctx *c, uint8_t verb, const struct token *t, uint8_t acc)
{
	char *path = tok_dup(t);
	struct stat st;
	int ret;

	if (!path)
		return devcg_err(c->err, -ENOMEM, "out of memory");
	if (stat(path, &st)) {
		ret = -errno;
		fail(c, t, ret, "cannot stat %s: %s", path, strerror(-ret));
		free(path);
		return ret;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		ret = fail(c, t, -ENOTBLK, "%s is not a device node", path);
		free(path);
		return ret;
	}
	free(path);
	return emit(c, verb, S_ISCHR(st.st_mode) ? DEVCG_CHAR : DEVCG_BLOCK, major(st.st_rdev),
		    minor(st.st_rdev), acc);
}

/* char-NAME / block-NAME: every major whose driver name matches the glob
 * in the matching section of /proc/devices, as systemd does. */
static int parse_driver(struct line_ctx *c, uint8_t verb, const struct token *t, uint8_t acc)
{
	const char *file = DEVCG_OPT(c->opts, devcg_parse_opts, proc_devices, NULL);
	bool chr = t->s[0] == 'c';
	size_t skip = chr ? 5 : 6;
	char *pattern = strndup(t->s + skip, t->len - skip);
	char line[512];
	bool in_section = false;
	size_t before = c->n;
	FILE *f;
	int ret = 0;

	if (!pattern)
		return devcg_err(c->err, -ENOMEM, "out of memory");
	if (!*pattern) {
		free(pattern);
		return fail(c, t, -EINVAL, "missing driver name after '%s'", chr ? "char-" : "block-");
	}
	f = fopen(file ? file : "/proc/devices", "re");
	if (!f) {
		ret = -errno;
		free(pattern);
		return fail(c, t, ret, "cannot read /proc/devices to resolve this name");
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		unsigned maj;
		char name[256];

		if (!strncmp(line, "Character devices:", 18)) {
			in_section = chr;
			continue;
		}
		if (!strncmp(line, "Block devices:", 14)) {
			in_section = !chr;
			continue;
		}
		if (!in_section || sscanf(line, "%u %255s", &maj, name) != 2)
			continue;
		if (!fnmatch(pattern, name, 0))
			ret = emit(c, verb, chr ? DEVCG_CHAR : DEVCG_BLOCK, maj, DEVCG_ANY, acc);
	}
	fclose(f);
	if (!ret && c->n == before)
		ret = fail(c, t, -ENOENT, "no %s device driver matches this name in /proc/devices",
			   chr ? "character" : "block");
	free(pattern);
	return ret;
}

static int parse_tokens(struct line_ctx *c, struct token *tok, size_t ntok)
{
	uint8_t verb = DEVCG_VERB_ALLOW, acc;
	uint32_t major, minor;
	const struct token *t;
	const char *colon;
	size_t i = 0;
	int ret;

	if (tok_is(&tok[0], "allow") || tok_is(&tok[0], "deny")) {
		verb = tok[0].s[0] == 'a' ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
		i = 1;
		if (ntok == 1)
			return fail(c, &tok[0], -EINVAL, "missing device after '%s'",
				    verb == DEVCG_VERB_ALLOW ? "allow" : "deny");
	}
	t = &tok[i];
	if (t->s[0] == '/')
		return optional_access(c, tok, ntok, i + 1, &acc) ?: parse_path(c, verb, t, acc);
	if ((t->len > 5 && !strncmp(t->s, "char-", 5)) || (t->len > 6 && !strncmp(t->s, "block-", 6)) ||
	    tok_is(t, "char-") || tok_is(t, "block-"))
		return optional_access(c, tok, ntok, i + 1, &acc) ?: parse_driver(c, verb, t, acc);
	if (tok_is(t, "a")) {
		/* device_cgroup.c resets on 'a' whatever follows; we accept only
		 * what means "everything", so that a narrower intent is not
		 * silently widened into a reset */
		if (ntok > i + 1 && !tok_is(&tok[i + 1], "*:*"))
			return fail(c, &tok[i + 1], -EINVAL,
				    "type 'a' means every device: only '*:*' may follow it");
		if (ntok > i + 2 && (parse_access(c, &tok[i + 2], &acc) || acc != DEVCG_ACC_ALL))
			return fail(c, &tok[i + 2], -EINVAL,
				    "type 'a' resets the whole list: its access can only be 'rwm'");
		if (ntok > i + 3)
			return fail(c, &tok[i + 3], -EINVAL, "unexpected text after the access");
		return emit(c, verb, DEVCG_ALL, DEVCG_ANY, DEVCG_ANY, DEVCG_ACC_ALL);
	}
	if (!tok_is(t, "b") && !tok_is(t, "c"))
		return fail(c, t, -EINVAL,
			    "expected a device type (a, b or c), a /dev path, char-NAME or block-NAME");
	if (ntok < i + 2)
		return fail(c, t, -EINVAL, "missing MAJOR:MINOR after the type");
	if (ntok < i + 3)
		return fail(c, &tok[i + 1], -EINVAL, "missing access (a non-empty subset of 'rwm')");
	if (ntok > i + 3)
		return fail(c, &tok[i + 3], -EINVAL, "unexpected text after the access");
	colon = memchr(tok[i + 1].s, ':', tok[i + 1].len);
	if (!colon)
		return fail(c, &tok[i + 1], -EINVAL, "expected MAJOR:MINOR");
	ret = parse_num(c, &tok[i + 1], tok[i + 1].s, (size_t)(colon - tok[i + 1].s), "major", &major);
	if (!ret)
		ret = parse_num(c, &tok[i + 1], colon + 1,
				tok[i + 1].len - (size_t)(colon + 1 - tok[i + 1].s), "minor", &minor);
	if (!ret)
		ret = parse_access(c, &tok[i + 2], &acc);
	if (ret)
		return ret;
	return emit(c, verb, t->s[0] == 'b' ? DEVCG_BLOCK : DEVCG_CHAR, major, minor, acc);
}

/* Split one line into tokens, dropping a '#' comment; 0 tokens is blank. */
static int tokenize(struct line_ctx *c, const char *s, size_t len, struct token *tok, size_t *ntok)
{
	size_t i = 0, n = 0;

	while (i < len) {
		size_t start;

		while (i < len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
			i++;
		if (i == len || s[i] == '#')
			break;
		if (s[i] == '\0') {
			struct token t = { .col = i + 1 };

			return fail(c, &t, -EINVAL, "NUL byte in text");
		}
		if (n == MAX_TOKENS) {
			struct token t = { .col = i + 1 };

			return fail(c, &t, -EINVAL, "too many words on this line");
		}
		start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\0')
			i++;
		tok[n++] = (struct token){ .s = s + start, .len = i - start, .col = start + 1 };
	}
	*ntok = n;
	return 0;
}

static int parse_lines(struct devcg_rules *rules, const char *text, size_t len, const char *source,
		       const struct devcg_parse_opts *opts, struct devcg_error *err)
{
	struct line_ctx c = { .source = source, .opts = opts, .err = err };
	size_t pos = 0;
	int ret = 0;

	while (pos < len && !ret) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - text) : len, ntok = 0;
		struct token tok[MAX_TOKENS];

		c.lineno++;
		if (end - pos > DEVCG_MAX_LINE) {
			struct token t = { .col = DEVCG_MAX_LINE + 1 };

			ret = fail(&c, &t, -E2BIG, "line is longer than %d bytes", DEVCG_MAX_LINE);
			break;
		}
		ret = tokenize(&c, text + pos, end - pos, tok, &ntok);
		if (!ret && ntok)
			ret = parse_tokens(&c, tok, ntok);
		if (!ret && devcg_rules_count(rules) + c.n > DEVCG_MAX_RULES) {
			ret = fail(&c, NULL, -E2BIG, "more than %d rules", DEVCG_MAX_RULES);
		}
		pos = end + 1;
	}
	if (!ret)
		ret = devcg_rules_append(rules, c.out, c.n, err);
	free(c.out);
	return ret;
}

int devcg_rules_parse(struct devcg_rules *rules, const char *text, size_t len, const char *source,
		      const struct devcg_parse_opts *opts, struct devcg_error *err)
{
	size_t i = 0;

	if (!source)
		source = "<input>";
	while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
		i++;
	if (i < len && (text[i] == '{' || text[i] == '['))
		return devcg_parse_oci(rules, text, len, source, opts, err);
	return parse_lines(rules, text, len, source, opts, err);
}

int devcg_rules_parse_rule(struct devcg_rules *rules, const char *arg, const char *source,
			   const struct devcg_parse_opts *opts, struct devcg_error *err)
{
	size_t len = strlen(arg);

	if (memchr(arg, '\n', len))
		return devcg_err(err, -EINVAL, "%s: one rule per argument (it holds a newline)",
				 source ? source : "<argument>");
	return parse_lines(rules, arg, len, source ? source : "<argument>", opts, err);
}

int devcg_rules_parse_file(struct devcg_rules *rules, const char *path,
			   const struct devcg_parse_opts *opts, struct devcg_error *err)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	size_t len;
	char *buf;
	int ret;

	ret = devcg_read_file(path, &buf, &len, err);
	if (ret)
		return ret;
	ret = devcg_rules_parse(rules, buf, len, name, opts, err);
	free(buf);
	return ret;
}

int devcg_read_file(const char *path, char **out, size_t *out_len, struct devcg_error *err)
{
	/* 100,000 rules of 4 KiB each bounds what is worth reading */
	const size_t max = (size_t)DEVCG_MAX_RULES * (DEVCG_MAX_LINE + 1);
	FILE *f = strcmp(path, "-") ? fopen(path, "re") : stdin;
	size_t len = 0, cap = 65536;
	char *buf;
	int ret = 0;

	if (!f)
		return devcg_err(err, -errno, "%s: %s", path, strerror(errno));
	buf = malloc(cap);
	while (buf) {
		size_t got;

		if (len + 1 >= cap) {
			char *nbuf = len < max ? realloc(buf, cap * 2) : NULL;

			if (!nbuf) {
				ret = len < max ? devcg_err(err, -ENOMEM, "%s: out of memory", path)
						: devcg_err(err, -E2BIG, "%s: larger than %zu bytes", path, max);
				break;
			}
			buf = nbuf;
			cap *= 2;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0) {
			if (ferror(f))
				ret = devcg_err(err, -EIO, "%s: read error", path);
			break;
		}
	}
	if (!buf)
		ret = devcg_err(err, -ENOMEM, "%s: out of memory", path);
	if (f != stdin)
		fclose(f);
	if (ret) {
		free(buf);
		return ret;
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The text forms of the rule language: devices.list lines (with or without
 * a verb) and systemd's DeviceAllow= forms, read as systemd 252 reads them
 * (src/core/load-fragment.c, cgroup.c, bpf-devices.c): device paths,
 * char-NAME and block-NAME. OCI JSON lives in oci.c.
 */
#include "rules/rules.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
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
	/* rules this line expands to (char-NAME globs give several) */
	struct devcg_rule *out;
	size_t n, cap;
};

__attribute__((format(printf, 4, 5)))
static int fail(struct line_ctx *c, const struct token *t, int code, const char *fmt, ...)
{
	char what[768], source[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return devcg_err(c->err, code, "%s:%zu:%zu: %s",
			 devcg_quote(source, sizeof(source), c->source, (size_t)-1), c->lineno,
			 t ? t->col : 1, what);
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

/* Letters of 'rwm', at most MAX_LEN of them. */
static int parse_access(struct line_ctx *c, const struct token *t, size_t max_len, uint8_t *out)
{
	uint8_t acc = 0;
	char q[256];
	size_t i;

	for (i = 0; i < t->len; i++) {
		switch (t->s[i]) {
		case 'r': acc |= DEVCG_ACC_READ; break;
		case 'w': acc |= DEVCG_ACC_WRITE; break;
		case 'm': acc |= DEVCG_ACC_MKNOD; break;
		default:
			return fail(c, t, -EINVAL, "access must be letters of 'rwm', not '%s'",
				    devcg_quote(q, sizeof(q), t->s, t->len));
		}
	}
	if (!acc || t->len > max_len)
		return fail(c, t, -EINVAL, "access must be a non-empty subset of 'rwm'");
	*out = acc;
	return 0;
}

/* The optional access after a systemd form: rwm when it is missing, else
 * any string of r, w and m, letters repeated or not (load-fragment.c checks
 * in_charset(rights, "rwm"); cgroup.c's cgroup_add_device_allow() makes an
 * empty one rwm). */
static int optional_access(struct line_ctx *c, const struct token *tok, size_t ntok, size_t at,
			   uint8_t *acc)
{
	*acc = DEVCG_ACC_ALL;
	if (ntok > at + 1)
		return fail(c, &tok[at + 1], -EINVAL, "unexpected text after the access");
	return ntok == at ? 0 : parse_access(c, &tok[at], SIZE_MAX, acc);
}

/*
 * A number as systemd's safe_atou() reads it (src/basic/parse-util.c):
 * strtoul() in base 0, so 0x is hex and a leading 0 octal, plus 0b and 0o
 * prefixes; a sign is taken but only "-0" passes; the whole string must be
 * used and fit an unsigned int. 0, -EINVAL or -ERANGE.
 */
static int systemd_atou(const char *s, unsigned *out)
{
	unsigned long v;
	char *end;
	int base = 0;

	s += strspn(s, " \t\n\r");
	if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) {
		base = 2;
		s += 2;
	} else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) {
		base = 8;
		s += 2;
	}
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno)
		return -errno;
	if (end == s || *end)
		return -EINVAL;
	if (v && s[0] == '-')
		return -ERANGE;
	if (v > UINT_MAX)
		return -ERANGE;
	*out = (unsigned)v;
	return 0;
}

/* The kernel's dev_t has 12 bits of major and 20 of minor (MINORBITS in
 * include/linux/kdev_t.h); systemd's DEVICE_MAJOR_VALID and
 * DEVICE_MINOR_VALID (src/basic/devnum-util.h) test these limits. */
#define SYSTEMD_MAJOR_LIMIT (1u << 12)
#define SYSTEMD_MINOR_LIMIT (1u << 20)

/* The next component of *P and its length (0 at the end), skipping slashes
 * and "." components as systemd's path_find_first_component() does. */
static size_t next_component(const char **p, const char **start)
{
	const char *s = *p;

	for (;;) {
		while (*s == '/')
			s++;
		if (s[0] != '.' || (s[1] != '/' && s[1] != '\0'))
			break;
		s++;
	}
	*start = s;
	*p = s + strcspn(s, "/");
	return (size_t)(*p - s);
}

/* If absolute PATH starts with the components of PREFIX: the rest of PATH
 * from its next component ("" for none), else NULL. As systemd's
 * path_startswith() (src/basic/path-util.c), a ".." or over-long component
 * where the next one is read means no match. */
static const char *path_after(const char *path, const char *prefix)
{
	if (path[0] != '/')
		return NULL;
	for (;;) {
		const char *p, *q;
		size_t lp = next_component(&path, &p), lq = next_component(&prefix, &q);

		if (lp > NAME_MAX || (lp == 2 && p[0] == '.' && p[1] == '.'))
			return NULL;
		if (!lq)
			return p;
		if (lp != lq || memcmp(p, q, lp))
			return NULL;
	}
}

/*
 * The paths systemd reads without looking at the disk, so that they may
 * name nodes the host lacks (device_path_parse_major_minor() in
 * src/basic/devnum-util.c, used by bpf-devices.c before any stat()):
 * /run/systemd/inaccessible/chr and /blk, which systemd makes with
 * mknod(..., makedev(0, 0)), and /dev/char/M:N and /dev/block/M:N, where M
 * is decimal digits and both are read by safe_atou() (parse_devnum()). A
 * bad M:N fails the entry there, it is not looked up on disk.
 * 1 when PATH is one of them, 0 when it must be stat()ed, or an error.
 */
static int path_devnum(struct line_ctx *c, const struct token *t, const char *path,
		       uint8_t *type, uint32_t *major, uint32_t *minor)
{
	const char *rest;
	char digits[22];
	unsigned maj, min;
	size_t n;
	int ret;

	*major = *minor = 0;
	if ((rest = path_after(path, "/run/systemd/inaccessible/chr")) && !*rest) {
		*type = DEVCG_CHAR;
		return 1;
	}
	if ((rest = path_after(path, "/run/systemd/inaccessible/blk")) && !*rest) {
		*type = DEVCG_BLOCK;
		return 1;
	}
	if ((rest = path_after(path, "/dev/block/")))
		*type = DEVCG_BLOCK;
	else if ((rest = path_after(path, "/dev/char/")))
		*type = DEVCG_CHAR;
	else
		return 0;
	/* parse_devnum(): at most DECIMAL_STR_MAX(dev_t) = 21 digits */
	n = strspn(rest, "0123456789");
	ret = -EINVAL;
	if (n && n < sizeof(digits) && rest[n] == ':') {
		memcpy(digits, rest, n);
		digits[n] = '\0';
		ret = systemd_atou(digits, &maj) ?: systemd_atou(rest + n + 1, &min);
	}
	if (!ret && (maj >= SYSTEMD_MAJOR_LIMIT || min >= SYSTEMD_MINOR_LIMIT))
		ret = -ERANGE;
	if (ret == -ERANGE)
		return fail(c, t, ret, "%s: the major must be below %u and the minor below %u", path,
			    SYSTEMD_MAJOR_LIMIT, SYSTEMD_MINOR_LIMIT);
	if (ret)
		return fail(c, t, ret, "%s: expected MAJOR:MINOR after /dev/char/ or /dev/block/",
			    path);
	*major = maj;
	*minor = min;
	return 1;
}

/* A device path: read from the path when systemd does, else stat() it
 * (bpf_devices_allow_list_device()). systemd takes only paths under /dev/
 * from a unit; devcg takes a device node anywhere. */
static int parse_path(struct line_ctx *c, uint8_t verb, const struct token *t, uint8_t acc)
{
	char *path = tok_dup(t), q[512];
	uint32_t major, minor;
	uint8_t type;
	struct stat st;
	int ret;

	if (!path)
		return devcg_err(c->err, -ENOMEM, "out of memory");
	ret = path_devnum(c, t, path, &type, &major, &minor);
	if (ret) {
		free(path);
		return ret < 0 ? ret : emit(c, verb, type, major, minor, acc);
	}
	if (stat(path, &st)) {
		ret = -errno;
		fail(c, t, ret, "cannot stat %s: %s", devcg_quote(q, sizeof(q), path, (size_t)-1),
		     strerror(-ret));
		free(path);
		return ret;
	}
	if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
		ret = fail(c, t, -ENOTBLK, "%s is not a device node",
			   devcg_quote(q, sizeof(q), path, (size_t)-1));
		free(path);
		return ret;
	}
	free(path);
	return emit(c, verb, S_ISCHR(st.st_mode) ? DEVCG_CHAR : DEVCG_BLOCK, major(st.st_rdev),
		    minor(st.st_rdev), acc);
}

/* One line of /proc/devices in the wanted section: its major and name, as
 * bpf_devices_allow_list_major() splits it (the first word is the major,
 * the rest, trimmed, the name). false for lines it skips. */
static bool proc_devices_entry(char *line, unsigned *major, const char **name)
{
	char *end = line + strlen(line);

	line += strspn(line, " \t\n\r");
	while (end > line && strchr(" \t\n\r", end[-1]))
		*--end = '\0';
	end = line + strcspn(line, " \t\n\r");
	if (!*end)
		return false;
	*end++ = '\0';
	/* major 0 is never a driver's: systemd skips it */
	if (systemd_atou(line, major) || !*major)
		return false;
	*name = end + strspn(end, " \t\n\r");
	return true;
}

/* Every major whose driver name in the section of TYPE in /proc/devices
 * matches PATTERN, in file order; 0 when none does. A section runs from its
 * header line to the next empty line, as systemd reads it. */
static int lookup_drivers(struct line_ctx *c, const struct token *t, uint8_t verb, uint8_t type,
			  const char *pattern, uint8_t acc)
{
	const char *file = DEVCG_OPT(c->opts, devcg_parse_opts, proc_devices, NULL);
	const char *header = type == DEVCG_CHAR ? "Character devices:" : "Block devices:";
	bool in_section = false;
	char *line = NULL;
	size_t cap = 0;
	FILE *f;
	int ret = 0;

	f = fopen(file ? file : "/proc/devices", "re");
	if (!f)
		return fail(c, t, -errno, "cannot read /proc/devices to resolve this name");
	while (!ret) {
		const char *name;
		unsigned maj;

		errno = 0;
		if (getline(&line, &cap, f) < 0) {
			if (errno || ferror(f))
				ret = fail(c, t, errno ? -errno : -EIO,
					   "cannot read /proc/devices to resolve this name");
			break;
		}
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, header))
			in_section = true;
		else if (!*line)
			in_section = false;
		else if (in_section && proc_devices_entry(line, &maj, &name) &&
			 !fnmatch(pattern, name, 0))
			ret = emit(c, verb, type, maj, DEVCG_ANY, acc);
	}
	free(line);
	fclose(f);
	return ret;
}

/*
 * char-NAME / block-NAME, as bpf_devices_allow_list_major() reads them:
 * "*" alone is the class rule (c *:* or b *:*), whatever /proc/devices
 * lists; a NAME that safe_atou() reads as a valid major is that major;
 * any other NAME is a glob giving one rule per matching driver, minor '*'.
 * systemd skips a NAME that matches nothing (a debug message); devcg
 * refuses it, as it refuses any rule it cannot apply, so that the policy
 * installed is the one written (a skipped "deny char-NAME" would widen it).
 */
static int parse_driver(struct line_ctx *c, uint8_t verb, const struct token *t, uint8_t acc)
{
	bool chr = t->s[0] == 'c';
	uint8_t type = chr ? DEVCG_CHAR : DEVCG_BLOCK;
	size_t skip = chr ? 5 : 6, before = c->n;
	char *pattern = strndup(t->s + skip, t->len - skip);
	bool class;
	unsigned maj = 0;
	int ret;

	if (!pattern)
		return devcg_err(c->err, -ENOMEM, "out of memory");
	class = !strcmp(pattern, "*");
	if (!*pattern)
		ret = fail(c, t, -EINVAL, "missing driver name after '%s'", chr ? "char-" : "block-");
	else if (class || (!systemd_atou(pattern, &maj) && maj < SYSTEMD_MAJOR_LIMIT))
		ret = emit(c, verb, type, class ? DEVCG_ANY : maj, DEVCG_ANY, acc);
	else
		ret = lookup_drivers(c, t, verb, type, pattern, acc);
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
	uint8_t want = DEVCG_OPT(c->opts, devcg_parse_opts, verb, 0);
	size_t i = 0;
	int ret;

	if (tok_is(&tok[0], "allow") || tok_is(&tok[0], "deny")) {
		verb = tok[0].s[0] == 'a' ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
		i = 1;
		/* the rule's own verb is never overridden by the caller's */
		if (want && verb != want)
			return fail(c, &tok[0], -EINVAL, "the rule says '%s' where only '%s' rules are accepted",
				    verb == DEVCG_VERB_ALLOW ? "allow" : "deny",
				    want == DEVCG_VERB_ALLOW ? "allow" : "deny");
		if (ntok == 1)
			return fail(c, &tok[0], -EINVAL, "missing device after '%s'",
				    verb == DEVCG_VERB_ALLOW ? "allow" : "deny");
	} else if (want) {
		verb = want;
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
		if (ntok > i + 2 && (parse_access(c, &tok[i + 2], 3, &acc) || acc != DEVCG_ACC_ALL))
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
		ret = parse_access(c, &tok[i + 2], 3, &acc);
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
	int ret;

	if ((ret = DEVCG_PARSE_OPTS_VALID(opts, err)))
		return ret;
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
	char q[256];
	int ret;

	if ((ret = DEVCG_PARSE_OPTS_VALID(opts, err)))
		return ret;
	if (memchr(arg, '\n', len))
		return devcg_err(err, -EINVAL, "%s: one rule per argument (it holds a newline)",
				 devcg_quote(q, sizeof(q), source ? source : "<argument>", (size_t)-1));
	return parse_lines(rules, arg, len, source ? source : "<argument>", opts, err);
}

int devcg_rules_parse_file(struct devcg_rules *rules, const char *path,
			   const struct devcg_parse_opts *opts, struct devcg_error *err)
{
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	size_t len;
	char *buf;
	int ret;

	if ((ret = DEVCG_PARSE_OPTS_VALID(opts, err)))
		return ret;
	ret = devcg_read_file(path, &buf, &len, err);
	if (ret)
		return ret;
	ret = devcg_rules_parse(rules, buf, len, name, opts, err);
	free(buf);
	return ret;
}

/* Rules are read from regular files, pipes and FIFOs; stdin is whatever
 * the caller made it (a terminal too). A directory reads as EISDIR, and a
 * device node is no file of rules: opening one can act on the device
 * (a tape rewinds, a watchdog starts) and /dev/zero never ends. */
static int check_type(const char *path, const struct stat *st, struct devcg_error *err)
{
	struct stat in;
	char q[512];

	if (S_ISREG(st->st_mode) || S_ISFIFO(st->st_mode))
		return 0;
	devcg_quote(q, sizeof(q), strcmp(path, "-") ? path : "<stdin>", (size_t)-1);
	if (S_ISDIR(st->st_mode))
		return devcg_err(err, -EISDIR, "%s: is a directory", q);
	/* "-", /dev/stdin, /dev/fd/0: the standard input itself */
	if (!strcmp(path, "-") ||
	    (!fstat(0, &in) && in.st_dev == st->st_dev && in.st_ino == st->st_ino))
		return 0;
	return devcg_err(err, -EINVAL, "%s: is a %s, not a file of rules", q,
			 S_ISCHR(st->st_mode) ? "character device" :
			 S_ISBLK(st->st_mode) ? "block device" :
			 S_ISSOCK(st->st_mode) ? "socket" : "special file");
}

int devcg_read_file(const char *path, char **out, size_t *out_len, struct devcg_error *err)
{
	/* 100,000 rules of 4 KiB each bounds what is worth reading */
	const size_t max = (size_t)DEVCG_MAX_RULES * (DEVCG_MAX_LINE + 1);
	bool in = !strcmp(path, "-");
	size_t len = 0, cap = 65536;
	struct stat st;
	char *buf, q[512];
	FILE *f;
	int ret = 0;

	devcg_quote(q, sizeof(q), in ? "<stdin>" : path, (size_t)-1);
	/* before opening, so that a device node is never opened */
	if (!in && stat(path, &st))
		return devcg_err(err, -errno, "%s: %s", q, strerror(errno));
	if (!in && (ret = check_type(path, &st, err)))
		return ret;
	f = in ? stdin : fopen(path, "re");
	if (!f)
		return devcg_err(err, -errno, "%s: %s", q, strerror(errno));
	/* and again what was opened, which a rename may have changed */
	if (fstat(fileno(f), &st))
		ret = devcg_err(err, -errno, "%s: %s", q, strerror(errno));
	else
		ret = check_type(path, &st, err);
	buf = ret ? NULL : malloc(cap);
	if (!ret && !buf)
		ret = devcg_err(err, -ENOMEM, "%s: out of memory", q);
	while (buf) {
		size_t got;

		if (len + 1 >= cap) {
			char *nbuf = len < max ? realloc(buf, cap * 2) : NULL;

			if (!nbuf) {
				ret = len < max ? devcg_err(err, -ENOMEM, "%s: out of memory", q)
						: devcg_err(err, -E2BIG, "%s: larger than %zu bytes", q, max);
				break;
			}
			buf = nbuf;
			cap *= 2;
		}
		errno = 0;
		got = fread(buf + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0) {
			if (ferror(f))
				ret = devcg_err(err, errno ? -errno : -EIO, "%s: %s", q,
						errno ? strerror(errno) : "read error");
			break;
		}
	}
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

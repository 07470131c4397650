/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * A strict reader of the Prometheus text exposition format (version 0.0.4,
 * as node_exporter's textfile collector reads it), for the tests of
 * `devcg trace --metrics`. Every line ends with a newline and is one of:
 *   # HELP NAME TEXT       (TEXT escapes only \\ and \n)
 *   # TYPE NAME counter|gauge|histogram|summary|untyped
 *   # any other comment
 *   NAME{LABEL="VALUE",...} NUMBER [TIMESTAMP]   (VALUE escapes \\, \" and \n)
 * Checked too: names and label names are well formed, label values are
 * valid UTF-8, HELP and TYPE come at most once per metric and before its
 * samples, a metric's samples are together, no label set repeats, and
 * (this project's rule) a counter's name ends in _total and its values
 * are non-negative integers.
 */
#ifndef DEVCG_TEST_PROM_H
#define DEVCG_TEST_PROM_H

#include <ctype.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROM_MAX_LABELS 8

struct prom_sample {
	char name[128];
	int nlabels;
	char key[PROM_MAX_LABELS][64];
	char val[PROM_MAX_LABELS][2048];
	double value;
};

struct prom_family {
	char name[128];
	char type[16];
	bool help, samples_done;
};

struct prom_file {
	struct prom_sample *s;
	size_t n;
	struct prom_family fam[64];
	size_t nfam;
	char err[512];
};

static inline int prom_fail(struct prom_file *f, int line, const char *fmt, ...)
{
	va_list ap;
	int k = snprintf(f->err, sizeof(f->err), "line %d: ", line);

	va_start(ap, fmt);
	vsnprintf(f->err + k, sizeof(f->err) - (size_t)k, fmt, ap);
	va_end(ap);
	return -1;
}

/* A metric name at *P into NAME; advances *P. */
static inline bool prom_name(const char **p, char *name, size_t len, bool label)
{
	const char *s = *p;
	size_t n = 0;

	if (!(isalpha((unsigned char)*s) || *s == '_' || (!label && *s == ':')))
		return false;
	while (isalnum((unsigned char)s[n]) || s[n] == '_' || (!label && s[n] == ':'))
		n++;
	if (n >= len)
		return false;
	memcpy(name, s, n);
	name[n] = '\0';
	*p = s + n;
	return true;
}

static inline bool prom_utf8(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		int k = *u < 0x80 ? 0 : (*u & 0xe0) == 0xc0 ? 1 : (*u & 0xf0) == 0xe0 ? 2 : (*u & 0xf8) == 0xf0 ? 3 : -1;

		if (k < 0 || (k == 1 && *u < 0xc2))
			return false;
		u++;
		while (k--)
			if ((*u++ & 0xc0) != 0x80)
				return false;
	}
	return true;
}

static inline struct prom_family *prom_family(struct prom_file *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nfam; i++)
		if (!strcmp(f->fam[i].name, name))
			return &f->fam[i];
	if (f->nfam == sizeof(f->fam) / sizeof(f->fam[0]))
		return NULL;
	memset(&f->fam[f->nfam], 0, sizeof(f->fam[0]));
	snprintf(f->fam[f->nfam].name, sizeof(f->fam[0].name), "%s", name);
	return &f->fam[f->nfam++];
}

/* Same name and labels, in any order. */
static inline bool prom_same_labels(const struct prom_sample *a, const struct prom_sample *b)
{
	int i, j;

	if (strcmp(a->name, b->name) || a->nlabels != b->nlabels)
		return false;
	for (i = 0; i < a->nlabels; i++) {
		for (j = 0; j < b->nlabels; j++)
			if (!strcmp(a->key[i], b->key[j]))
				break;
		if (j == b->nlabels || strcmp(a->val[i], b->val[j]))
			return false;
	}
	return true;
}

static inline int prom_comment(struct prom_file *f, int ln, const char *p)
{
	char name[128];
	struct prom_family *fam;
	bool help = !strncmp(p, "# HELP ", 7), type = !strncmp(p, "# TYPE ", 7);

	if (!help && !type)
		return 0; /* another comment */
	p += 7;
	if (!prom_name(&p, name, sizeof(name), false) || *p != ' ')
		return prom_fail(f, ln, "bad metric name in HELP or TYPE");
	p++;
	if (!(fam = prom_family(f, name)))
		return prom_fail(f, ln, "too many metrics");
	if (fam->samples_done || (f->n && !strcmp(f->s[f->n - 1].name, name)))
		return prom_fail(f, ln, "HELP or TYPE of %s after its samples", name);
	if (help) {
		if (fam->help)
			return prom_fail(f, ln, "second HELP of %s", name);
		fam->help = true;
		for (; *p != '\n'; p++)
			if (*p == '\\' && p[1] != '\\' && p[1] != 'n')
				return prom_fail(f, ln, "bad escape in HELP");
			else if (*p == '\\')
				p++;
		return 0;
	}
	if (fam->type[0])
		return prom_fail(f, ln, "second TYPE of %s", name);
	if (strncmp(p, "counter\n", 8) && strncmp(p, "gauge\n", 6) && strncmp(p, "histogram\n", 10) &&
	    strncmp(p, "summary\n", 8) && strncmp(p, "untyped\n", 8))
		return prom_fail(f, ln, "bad TYPE of %s", name);
	sscanf(p, "%15s", fam->type);
	if (!strcmp(fam->type, "counter") && (strlen(name) < 6 || strcmp(name + strlen(name) - 6, "_total")))
		return prom_fail(f, ln, "counter %s does not end in _total", name);
	return 0;
}

static inline int prom_sample_line(struct prom_file *f, int ln, const char *p)
{
	struct prom_sample s = { 0 }, *ns;
	struct prom_family *fam;
	char *end;
	size_t i;

	if (!prom_name(&p, s.name, sizeof(s.name), false))
		return prom_fail(f, ln, "bad metric name");
	if (*p == '{') {
		p++;
		while (*p != '}') {
			size_t n = 0;

			if (s.nlabels == PROM_MAX_LABELS)
				return prom_fail(f, ln, "too many labels");
			if (!prom_name(&p, s.key[s.nlabels], sizeof(s.key[0]), true) || *p++ != '=' || *p++ != '"')
				return prom_fail(f, ln, "bad label");
			for (; *p != '"'; p++) {
				char c = *p;

				if (c == '\n' || !c)
					return prom_fail(f, ln, "label value not closed");
				if (c == '\\') {
					p++;
					c = *p == 'n' ? '\n' : *p == '\\' ? '\\' : *p == '"' ? '"' : 0;
					if (!c)
						return prom_fail(f, ln, "bad escape \\%c in a label value", *p);
				}
				if (n + 1 >= sizeof(s.val[0]))
					return prom_fail(f, ln, "label value too long");
				s.val[s.nlabels][n++] = c;
			}
			s.val[s.nlabels][n] = '\0';
			if (!prom_utf8(s.val[s.nlabels]))
				return prom_fail(f, ln, "label value not UTF-8");
			for (int k = 0; k < s.nlabels; k++)
				if (!strcmp(s.key[k], s.key[s.nlabels]))
					return prom_fail(f, ln, "label %s twice", s.key[k]);
			s.nlabels++;
			p++;
			if (*p == ',')
				p++;
			else if (*p != '}')
				return prom_fail(f, ln, "expected , or } after a label");
		}
		p++;
	}
	if (*p++ != ' ')
		return prom_fail(f, ln, "no space before the value");
	s.value = strtod(p, &end);
	if (end == p || (*end != '\n' && *end != ' '))
		return prom_fail(f, ln, "bad value");
	if (*end == ' ') {
		p = end + 1;
		strtoll(p, &end, 10);
		if (end == p || *end != '\n')
			return prom_fail(f, ln, "bad timestamp");
	}
	if (!(fam = prom_family(f, s.name)))
		return prom_fail(f, ln, "too many metrics");
	if (fam->samples_done)
		return prom_fail(f, ln, "samples of %s are not together", s.name);
	if (!fam->type[0])
		return prom_fail(f, ln, "sample of %s before its TYPE", s.name);
	if (!strcmp(fam->type, "counter") && (s.value < 0 || s.value != (double)(long long)s.value))
		return prom_fail(f, ln, "counter %s is not a non-negative integer", s.name);
	for (i = 0; i < f->n; i++)
		if (prom_same_labels(&f->s[i], &s))
			return prom_fail(f, ln, "label set of %s repeated", s.name);
	/* the metric before this one is done */
	if (f->n && strcmp(f->s[f->n - 1].name, s.name))
		prom_family(f, f->s[f->n - 1].name)->samples_done = true;
	ns = realloc(f->s, (f->n + 1) * sizeof(*ns));
	if (!ns)
		return prom_fail(f, ln, "out of memory");
	f->s = ns;
	f->s[f->n++] = s;
	return 0;
}

/* Parse TEXT into F (zeroed first; free with prom_free()): 0, or -1 with
 * the first fault in F->err. */
static inline int prom_parse(const char *text, struct prom_file *f)
{
	int ln = 0;

	memset(f, 0, sizeof(*f));
	if (!*text)
		return prom_fail(f, 0, "empty file");
	while (*text) {
		const char *nl = strchr(text, '\n');
		int ret;

		ln++;
		if (!nl)
			return prom_fail(f, ln, "no newline at the end");
		if (nl == text)
			return prom_fail(f, ln, "empty line");
		ret = *text == '#' ? prom_comment(f, ln, text) : prom_sample_line(f, ln, text);
		if (ret)
			return ret;
		text = nl + 1;
	}
	return 0;
}

static inline void prom_free(struct prom_file *f)
{
	free(f->s);
	f->s = NULL;
	f->n = 0;
}

/* The value of the sample NAME with exactly the labels given as KEY,
 * VALUE pairs (NULL-ended), or -1 when there is none. */
static inline double prom_value(const struct prom_file *f, const char *name, ...)
{
	struct prom_sample want = { 0 };
	const char *k;
	va_list ap;
	size_t i;

	snprintf(want.name, sizeof(want.name), "%s", name);
	va_start(ap, name);
	while ((k = va_arg(ap, const char *)) && want.nlabels < PROM_MAX_LABELS) {
		snprintf(want.key[want.nlabels], sizeof(want.key[0]), "%s", k);
		snprintf(want.val[want.nlabels], sizeof(want.val[0]), "%s", va_arg(ap, const char *));
		want.nlabels++;
	}
	va_end(ap);
	for (i = 0; i < f->n; i++)
		if (prom_same_labels(&f->s[i], &want))
			return f->s[i].value;
	return -1;
}

/* The sum of the samples of NAME. */
static inline double prom_sum(const struct prom_file *f, const char *name)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < f->n; i++)
		if (!strcmp(f->s[i].name, name))
			sum += f->s[i].value;
	return sum;
}

/* Does metric NAME have HELP and TYPE TYPE? */
static inline bool prom_declared(const struct prom_file *f, const char *name, const char *type)
{
	size_t i;

	for (i = 0; i < f->nfam; i++)
		if (!strcmp(f->fam[i].name, name))
			return f->fam[i].help && !strcmp(f->fam[i].type, type);
	return false;
}

#endif

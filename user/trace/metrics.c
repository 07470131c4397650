// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg trace --metrics: counters in the Prometheus text format, kept in a
 * file for node_exporter's textfile collector (service.h). Each metric is
 * a family of label sets; the file is replaced whole (devcg_write_atomic()).
 */
#include "internal.h"
#include "service.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct series {
	char *labels; /* name="value",... as written in the file */
	uint64_t value;
};

struct family {
	const char *name, *help;
	struct series *v;
	size_t n, cap, last; /* last: the series counted last, looked at first */
};

enum { F_GAPS, F_REVOKES, F_OPENS, F_MAX };

static const char *const lost_causes[] = { "ringbuf", "read", "audit" };

struct devcg_metrics {
	struct family f[F_MAX];
	uint64_t lost[3];
	bool changed;
	/* the file */
	int dirfd;
	char *name, *path;
	uint64_t interval_ns, last_write_ns;
	bool failing;
};

const char *devcg_trace_dev_string(uint32_t type, uint32_t major, uint32_t minor, char *buf, size_t len)
{
	snprintf(buf, len, "%c %u:%u", type == DEVCG_BLOCK ? 'b' : 'c', major, minor);
	return buf;
}

const char *devcg_gap_kind_name(const struct devcg_gap *g)
{
	return g->kind == DEVCG_GAP_V1_DENY_ALL ? "v1_deny_all" : "v2_no_filter";
}

const char *devcg_prog_owner_name(int owner)
{
	return owner == DEVCG_PROG_DEVCG ? "devcg" : owner == DEVCG_PROG_FOREIGN ? "foreign" : "unknown";
}

struct devcg_metrics *devcg_metrics_new(void)
{
	struct devcg_metrics *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->dirfd = -1;
	m->f[F_GAPS] = (struct family){
		"devcg_trace_gaps_total",
		"Permission gaps devcg trace saw (a cgroup v1 deny-all replay, a cgroup v2 window with no "
		"device program), by cgroup and kind." };
	m->f[F_REVOKES] = (struct family){
		"devcg_trace_revocations_total",
		"Foreign device-program changes after which opens that devcg's filters allow were refused, "
		"by cgroup." };
	m->f[F_OPENS] = (struct family){
		"devcg_trace_refused_opens_total",
		"Opens of device nodes refused with EPERM, by cgroup (cgroup2 path), cgroup v1 devices path "
		"and device (unknown when the node was gone)." };
	return m;
}

void devcg_metrics_free(struct devcg_metrics *m)
{
	size_t i, j;

	if (!m)
		return;
	for (i = 0; i < F_MAX; i++) {
		for (j = 0; j < m->f[i].n; j++)
			free(m->f[i].v[j].labels);
		free(m->f[i].v);
	}
	if (m->dirfd >= 0)
		close(m->dirfd);
	free(m->name);
	free(m->path);
	free(m);
}

size_t devcg_prom_label_value(char *buf, size_t len, const char *text)
{
	size_t n = devcg_escape(NULL, 0, text, (size_t)-1, DEVCG_ESCAPE_MESSAGE), i, out = 0, kept = 0;
	char *esc = malloc(n + 1);
	bool full = !len;

	if (!esc) {
		if (len)
			buf[0] = '\0';
		return 0;
	}
	devcg_escape(esc, n + 1, text, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
	for (i = 0; i < n; i++) {
		const char *rep = esc[i] == '\\' ? "\\\\" : esc[i] == '"' ? "\\\"" : esc[i] == '\n' ? "\\n" : NULL;
		size_t rl = rep ? 2 : 1;

		/* never a cut escape: all of it fits, or nothing more is written */
		if (!full && out + rl < len) {
			memcpy(buf + out, rep ? rep : &esc[i], rl);
			kept = out + rl;
		} else {
			full = true;
		}
		out += rl;
	}
	if (len)
		buf[kept] = '\0';
	free(esc);
	return out;
}

/* NAME="VALUE" appended to *S (malloc'd), or false. */
static bool add_label(char **s, const char *name, const char *value)
{
	size_t n = devcg_prom_label_value(NULL, 0, value);
	size_t old = *s ? strlen(*s) : 0, need = old + (old ? 1 : 0) + strlen(name) + 3 + n + 1;
	char *p = realloc(*s, need);

	if (!p)
		return false;
	*s = p;
	p += old;
	if (old)
		*p++ = ',';
	p += sprintf(p, "%s=\"", name);
	devcg_prom_label_value(p, n + 1, value);
	strcat(p, "\"");
	return true;
}

/* The labels NAME1, VALUE1, ... (NULL-ended) as written in the file, or NULL. */
static char *labels(const char *name, ...)
{
	char *s = NULL;
	va_list ap;

	va_start(ap, name);
	for (; name; name = va_arg(ap, const char *)) {
		if (!add_label(&s, name, va_arg(ap, const char *))) {
			free(s);
			s = NULL;
			break;
		}
	}
	va_end(ap);
	return s;
}

/* Add one to the series LABELS of F (taken); OTHER (taken) is the series
 * of everything past DEVCG_METRICS_MAX_SERIES. */
static void count(struct devcg_metrics *m, struct family *f, char *lbl, char *other)
{
	size_t i;

	if (!lbl || !other)
		goto out;
	if (f->last < f->n && !strcmp(f->v[f->last].labels, lbl))
		goto found;
	for (f->last = 0; f->last < f->n; f->last++)
		if (!strcmp(f->v[f->last].labels, lbl))
			goto found;
	if (f->n >= DEVCG_METRICS_MAX_SERIES) {
		for (i = 0; i < f->n; i++)
			if (!strcmp(f->v[i].labels, other))
				break;
		f->last = i;
		if (i < f->n)
			goto found;
		free(lbl);
		lbl = other;
		other = NULL;
	}
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 16;
		struct series *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			goto out;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = (struct series){ .labels = lbl };
	f->last = f->n - 1;
	lbl = NULL;
found:
	f->v[f->last].value++;
	m->changed = true;
out:
	free(lbl);
	free(other);
}

void devcg_metrics_gap(struct devcg_metrics *m, const struct devcg_gap *g)
{
	const char *kind = devcg_gap_kind_name(g);

	count(m, &m->f[F_GAPS], labels("cgroup", g->cgroup, "kind", kind, NULL),
	      labels("cgroup", "_other", "kind", kind, NULL));
}

void devcg_metrics_revoke(struct devcg_metrics *m, const struct devcg_revoke *rv)
{
	count(m, &m->f[F_REVOKES], labels("cgroup", rv->cgroup, NULL), labels("cgroup", "_other", NULL));
}

void devcg_metrics_refused_open(struct devcg_metrics *m, const char *cgroup, const char *devices_cgroup,
				const char *device)
{
	count(m, &m->f[F_OPENS],
	      labels("cgroup", cgroup ? cgroup : "?", "devices_cgroup", devices_cgroup ? devices_cgroup : "",
		     "device", device ? device : "unknown", NULL),
	      labels("cgroup", "_other", "devices_cgroup", "_other", "device", "_other", NULL));
}

void devcg_metrics_losses(struct devcg_metrics *m, const struct devcg_trace_losses *l)
{
	uint64_t v[3] = { l->ringbuf, l->read, l->audit };

	if (memcmp(v, m->lost, sizeof(v))) {
		memcpy(m->lost, v, sizeof(v));
		m->changed = true;
	}
}

struct text {
	char *s;
	size_t n, cap;
	bool nomem;
};

static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (t->nomem)
		return;
	for (;;) {
		va_start(ap, fmt);
		k = vsnprintf(t->s + t->n, t->cap - t->n, fmt, ap);
		va_end(ap);
		if (k < 0) {
			t->nomem = true;
			return;
		}
		if ((size_t)k < t->cap - t->n) {
			t->n += (size_t)k;
			return;
		}
		char *p = realloc(t->s, t->cap * 2 + (size_t)k + 1);

		if (!p) {
			t->nomem = true;
			return;
		}
		t->s = p;
		t->cap = t->cap * 2 + (size_t)k + 1;
	}
}

long devcg_metrics_format(const struct devcg_metrics *m, char **out)
{
	struct text t = { .s = malloc(4096), .cap = 4096 };
	size_t i, j;

	*out = NULL;
	if (!t.s)
		return -ENOMEM;
	t.s[0] = '\0';
	for (i = 0; i < F_MAX; i++) {
		const struct family *f = &m->f[i];

		put(&t, "# HELP %s %s\n# TYPE %s counter\n", f->name, f->help, f->name);
		for (j = 0; j < f->n; j++)
			put(&t, "%s{%s} %llu\n", f->name, f->v[j].labels, (unsigned long long)f->v[j].value);
	}
	put(&t, "# HELP devcg_trace_lost_events_total Events devcg trace could not report, by cause: its ring "
		"buffers full (ringbuf), memory it could not read (read), a followed devcg audit ring full "
		"(audit).\n# TYPE devcg_trace_lost_events_total counter\n");
	for (i = 0; i < 3; i++)
		put(&t, "devcg_trace_lost_events_total{cause=\"%s\"} %llu\n", lost_causes[i],
		    (unsigned long long)m->lost[i]);
	if (t.nomem) {
		free(t.s);
		return -ENOMEM;
	}
	*out = t.s;
	return (long)t.n;
}

int devcg_write_atomic(int dirfd, const char *name, const void *buf, size_t len, struct devcg_error *err)
{
	char tmp[4096];
	const char *p = buf;
	int fd, ret = 0, tries;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp.%d", name, (int)getpid()) >= sizeof(tmp))
		return devcg_err(err, -ENAMETOOLONG, "%s: name too long", name);
	for (tries = 0;; tries++) {
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST || tries)
			break;
		/* left by an earlier run of the same pid that died mid-write */
		unlinkat(dirfd, tmp, 0);
	}
	if (fd < 0)
		return devcg_err(err, -errno, "cannot create %s: %s", tmp, strerror(errno));
	/* readable by node_exporter's user, whatever the umask */
	if (fchmod(fd, 0644))
		ret = -errno;
	while (!ret && len) {
		ssize_t k = write(fd, p, len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			ret = k < 0 ? -errno : -EIO;
			break;
		}
		p += k;
		len -= (size_t)k;
	}
	if (!ret && fsync(fd))
		ret = -errno;
	if (close(fd) && !ret)
		ret = -errno;
	if (!ret && renameat(dirfd, tmp, dirfd, name))
		ret = -errno;
	if (ret) {
		unlinkat(dirfd, tmp, 0);
		return devcg_err(err, ret, "cannot write %s: %s", name, strerror(-ret));
	}
	/* the rename itself, on disk */
	if (fsync(dirfd))
		return devcg_err(err, -errno, "cannot sync the directory of %s: %s", name, strerror(errno));
	return 0;
}

int devcg_metrics_write(struct devcg_metrics *m, struct devcg_error *err)
{
	char *text = NULL;
	long n;
	int ret;

	if (m->dirfd < 0)
		return 0;
	n = devcg_metrics_format(m, &text);
	if (n < 0)
		return devcg_err(err, (int)n, "metrics file %s: out of memory", m->path);
	ret = devcg_write_atomic(m->dirfd, m->name, text, (size_t)n, err);
	free(text);
	if (ret)
		return devcg_err_wrap(err, ret, "metrics file %s", m->path);
	m->changed = false;
	return 0;
}

int devcg_metrics_open(struct devcg_metrics *m, const char *path, uint64_t interval_ns,
		       struct devcg_error *err)
{
	const char *slash = strrchr(path, '/');
	char dir[4096], q[4096];
	struct stat st;
	int ret;

	devcg_quote(q, sizeof(q), path, (size_t)-1);
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if ((size_t)snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= sizeof(dir))
		return devcg_err(err, -ENAMETOOLONG, "metrics file %s: path too long", q);
	if (!dir[0])
		snprintf(dir, sizeof(dir), "/");
	m->name = strdup(slash ? slash + 1 : path);
	m->path = strdup(q);
	if (!m->name || !m->path)
		return devcg_err(err, -ENOMEM, "out of memory");
	if (!m->name[0] || !strcmp(m->name, ".") || !strcmp(m->name, ".."))
		return devcg_err(err, -EINVAL, "metrics file %s: not a file name", q);
	m->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (m->dirfd < 0)
		return devcg_err(err, -errno, "metrics file %s: cannot open its directory: %s", q,
				 strerror(errno));
	if (!fstatat(m->dirfd, m->name, &st, AT_SYMLINK_NOFOLLOW) && !S_ISREG(st.st_mode)) {
		close(m->dirfd);
		m->dirfd = -1;
		return devcg_err(err, -EEXIST, "metrics file %s: exists and is not a regular file", q);
	}
	m->interval_ns = interval_ns ? interval_ns : DEVCG_METRICS_INTERVAL_NS;
	ret = devcg_metrics_write(m, err);
	if (ret) {
		close(m->dirfd);
		m->dirfd = -1;
	}
	return ret;
}

int devcg_metrics_tick(struct devcg_metrics *m, uint64_t now_ns, struct devcg_error *err)
{
	int ret;

	if (m->dirfd < 0 || !m->changed || now_ns - m->last_write_ns < m->interval_ns)
		return 0;
	m->last_write_ns = now_ns;
	ret = devcg_metrics_write(m, err);
	if (!ret || m->failing) {
		m->failing = ret != 0;
		return 0;
	}
	m->failing = true;
	return ret;
}

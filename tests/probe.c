// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The prober and rule sequences of the differential kernel tests (probe.h). */
#include "probe.h"
#include "harness.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

const uint32_t majors[NMAJ] = { 1, 5, 7, 10 };
const uint32_t minors[NMIN] = { 3, 5, 6, 7 };

const uint8_t probe_access[NPROBE] = {
	DEVCG_ACC_READ, DEVCG_ACC_WRITE, DEVCG_ACC_READ | DEVCG_ACC_WRITE, DEVCG_ACC_MKNOD,
	0, DEVCG_ACC_READ, DEVCG_ACC_WRITE, DEVCG_ACC_READ | DEVCG_ACC_WRITE,
};
const char *const probe_name[NPROBE] = {
	"open(O_RDONLY)", "open(O_WRONLY)", "open(O_RDWR)", "mknod",
	"access(F_OK)", "access(R_OK)", "access(W_OK)", "access(R_OK|W_OK)",
};

struct dev devs[NDEV];

static void init_devs(void)
{
	int i = 0, t, a, b;

	for (t = 0; t < 2; t++)
		for (a = 0; a < NMAJ; a++)
			for (b = 0; b < NMIN; b++, i++) {
				devs[i].type = t ? DEVCG_BLOCK : DEVCG_CHAR;
				devs[i].major = majors[a];
				devs[i].minor = minors[b];
				snprintf(devs[i].name, sizeof(devs[i].name), "%c-%u-%u",
					 t ? 'b' : 'c', majors[a], minors[b]);
			}
}

char dev_char(uint8_t type)
{
	return type == DEVCG_BLOCK ? 'b' : type == DEVCG_CHAR ? 'c' : 'a';
}

void make_devdir(char *dir, size_t size)
{
	struct scratch_node nodes[NDEV];
	int i, err;

	init_devs();
	for (i = 0; i < NDEV; i++)
		nodes[i] = (struct scratch_node){ devs[i].name, dev_char(devs[i].type),
						  devs[i].major, devs[i].minor };
	err = scratch_devdir_create(dir, size, nodes, NDEV);
	CHECK_MSG(!err, "scratch_devdir_create: %s", strerror(-err));
}

const char *err_name(uint8_t e)
{
	static char buf[8][48];
	static int i;

	if (!e)
		return "success";
	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s (%s)", strerrorname_np(e) ? strerrorname_np(e) : "?",
		 strerror(e));
	return buf[i];
}

/* ---- the prober: a child inside the cgroups ------------------------------ */

static uint8_t outcome(int ok)
{
	return ok ? 0 : (uint8_t)(errno > 0 && errno < 256 ? errno : 255);
}

static uint8_t try_open(const char *path, int flags)
{
	int fd = open(path, flags | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return outcome(fd >= 0);
}

static void probe_all(const char *dir, uint8_t res[NRES])
{
	char path[PATH_MAX], fresh[PATH_MAX];
	int i;

	snprintf(fresh, sizeof(fresh), "%s/new", dir);
	for (i = 0; i < NDEV; i++) {
		uint8_t *r = &res[i * NPROBE];
		mode_t type = devs[i].type == DEVCG_BLOCK ? S_IFBLK : S_IFCHR;
		int ok;

		snprintf(path, sizeof(path), "%s/%s", dir, devs[i].name);
		r[P_OPEN_R] = try_open(path, O_RDONLY);
		r[P_OPEN_W] = try_open(path, O_WRONLY);
		r[P_OPEN_RW] = try_open(path, O_RDWR);
		ok = !mknod(fresh, type | 0600, makedev(devs[i].major, devs[i].minor));
		r[P_MKNOD] = outcome(ok);
		if (ok)
			unlink(fresh);
		r[P_F_OK] = outcome(!access(path, F_OK));
		r[P_R_OK] = outcome(!access(path, R_OK));
		r[P_W_OK] = outcome(!access(path, W_OK));
		r[P_RW_OK] = outcome(!access(path, R_OK | W_OK));
	}
}

static bool read_full(int fd, void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t r = read(fd, (char *)buf + done, len - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		done += (size_t)r;
	}
	return true;
}

static bool write_full(int fd, const void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		ssize_t w = write(fd, (const char *)buf + done, len - done);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		done += (size_t)w;
	}
	return true;
}

/* In the child, once in its cgroup: say so, then probe on each 'p' and stop
 * at 'q' or end of file. */
static int prober_main(void *arg)
{
	struct prober *p = arg;
	uint8_t res[NRES];
	char c;

	close(p->cmd[1]);
	close(p->res[0]);
	if (!write_full(p->res[1], "r", 1))
		return 1;
	while (read_full(p->cmd[0], &c, 1) && c == 'p') {
		probe_all(p->dir, res);
		if (!write_full(p->res[1], res, sizeof(res)))
			return 1;
	}
	return 0;
}

void prober_start(struct prober *p, const char *cgroup, const char *dir)
{
	char ready = 0;

	memset(p, 0, sizeof(*p));
	p->dir = dir;
	snprintf(p->where, sizeof(p->where), "%s", cgroup);
	CHECK(!pipe2(p->cmd, O_CLOEXEC) && !pipe2(p->res, O_CLOEXEC));
	p->pid = scratch_spawn(cgroup, prober_main, p);
	CHECK_MSG(p->pid > 0, "scratch_spawn: %s", strerror((int)-p->pid));
	close(p->cmd[0]);
	close(p->res[1]);
	CHECK_MSG(read_full(p->res[0], &ready, 1) && ready == 'r',
		  "the prober could not join %s (exit %d)", cgroup, scratch_wait(p->pid));
}

int prober_join(struct prober *p, const char *cgroup)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)p->pid);
	return scratch_cgroup_write(cgroup, "cgroup.procs", pid);
}

void prober_probe(struct prober *p, uint8_t res[NRES])
{
	CHECK_MSG(write_full(p->cmd[1], "p", 1) && read_full(p->res[0], res, NRES),
		  "the prober started in %s is gone", p->where);
}

int prober_stop(struct prober *p)
{
	int status;

	write_full(p->cmd[1], "q", 1);
	close(p->cmd[1]);
	close(p->res[0]);
	status = scratch_wait(p->pid);
	p->pid = 0;
	return status;
}

/* ---- rules --------------------------------------------------------------- */

void kernel_text(const struct devcg_rule *r, char *buf, size_t size)
{
	char maj[12], min[12], acc[4];
	int n = 0;

	if (r->type == DEVCG_ALL) {
		/*
		 * The kernel reads only the 'a'; both common spellings are used,
		 * picked by the access bits, which 'a' ignores.
		 */
		snprintf(buf, size, "%s", r->access == DEVCG_ACC_ALL ? "a *:* rwm" : "a");
		return;
	}
	if (r->access & DEVCG_ACC_READ)
		acc[n++] = 'r';
	if (r->access & DEVCG_ACC_WRITE)
		acc[n++] = 'w';
	if (r->access & DEVCG_ACC_MKNOD)
		acc[n++] = 'm';
	acc[n] = 0;
	if (r->major == DEVCG_ANY)
		snprintf(maj, sizeof(maj), "*");
	else
		snprintf(maj, sizeof(maj), "%u", r->major);
	if (r->minor == DEVCG_ANY)
		snprintf(min, sizeof(min), "*");
	else
		snprintf(min, sizeof(min), "%u", r->minor);
	snprintf(buf, size, "%c %s:%s %s", dev_char(r->type), maj, min, acc);
}

void text_add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = t->cap - t->len;

		va_start(ap, fmt);
		n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if (t->s && (size_t)n < room) {
			t->len += (size_t)n;
			return;
		}
		t->cap = (t->cap + (size_t)n + 1) * 2;
		t->s = realloc(t->s, t->cap);
		CHECK(t->s);
	}
}

void text_add_sequence(struct text *t, const struct devcg_rule *rules, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char text[64];

		kernel_text(&rules[i], text, sizeof(text));
		text_add(t, "      echo '%s' > devices.%s\n", text,
			 rules[i].verb == DEVCG_VERB_ALLOW ? "allow" : "deny");
	}
	if (!n)
		text_add(t, "      (no rules)\n");
}

/* ---- random rule sequences ---------------------------------------------- */

uint64_t rng_state;

uint64_t rnd(void)
{
	/* splitmix64 */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

size_t random_sequence(struct devcg_rule rules[MAX_SEQ])
{
	size_t n = below(5) ? 1 + below(12) : 13 + below(MAX_SEQ - 12), i;

	for (i = 0; i < n; i++) {
		struct devcg_rule *r = &rules[i];

		r->verb = below(2) ? DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
		r->access = (uint8_t)(1 + below(7));
		if ((i == 0 && below(100) < 40) || below(100) < 7) {
			if (i == 0)
				r->verb = DEVCG_VERB_DENY;
			r->type = DEVCG_ALL;
			r->access = below(2) ? DEVCG_ACC_ALL : DEVCG_ACC_MKNOD; /* spelling */
			r->major = DEVCG_ANY;
			r->minor = DEVCG_ANY;
			continue;
		}
		if (i > 0 && below(3) == 0) {
			const struct devcg_rule *old = &rules[below((uint32_t)i)];

			if (old->type != DEVCG_ALL) {
				r->type = old->type;
				r->major = old->major;
				r->minor = old->minor;
				continue;
			}
		}
		r->type = below(2) ? DEVCG_CHAR : DEVCG_BLOCK;
		r->major = below(5) ? majors[below(NMAJ)] : DEVCG_ANY;
		r->minor = below(5) ? minors[below(NMIN)] : DEVCG_ANY;
	}
	return n;
}

static const struct devcg_exception *find_key(const struct devcg_policy *pol,
					      const struct devcg_rule *r)
{
	const struct devcg_exception *ex = devcg_policy_exceptions(pol);
	size_t i, n = devcg_policy_count(pol);

	for (i = 0; ex && i < n; i++)
		if (ex[i].type == r->type && ex[i].major == r->major && ex[i].minor == r->minor)
			return &ex[i];
	return NULL;
}

void seq_count_effect(struct seq_stats *st, const struct devcg_policy *pol,
		      const struct devcg_rule *r)
{
	const struct devcg_exception *old;
	bool allow = r->verb == DEVCG_VERB_ALLOW;

	if (r->type == DEVCG_ALL) {
		st->resets++;
		return;
	}
	st->wildcards += r->major == DEVCG_ANY || r->minor == DEVCG_ANY;
	old = find_key(pol, r);
	if (!old)
		return;
	if (allow != devcg_policy_default_allow(pol))
		st->merges++;
	else if (old->access & ~r->access)
		st->partial_removals += (old->access & r->access) != 0;
	else
		st->removals++;
}

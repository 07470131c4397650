// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include "scratch.h"
#include "harness.h"

#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TAG_ENV "DEVCG_TEST_TAG"
#define PREFIX "devcg-test-"

static char tag[32];
static char cg2_root[PATH_MAX], dev_root[PATH_MAX], frz_root[PATH_MAX];
static bool roots_found;
static unsigned int counter;

/* ---- the tag and the roots ----------------------------------------------- */

static void find_roots(void);

/* Runs in the harness parent before main(): one tag for the whole run. */
__attribute__((constructor)) static void scratch_init(void)
{
	snprintf(tag, sizeof(tag), "%d", (int)getpid());
	setenv(TAG_ENV, tag, 1);
	test_cleanup_hook = scratch_cleanup;
	find_roots(); /* once, before any fork or thread */
}

const char *scratch_tag(void)
{
	const char *env = getenv(TAG_ENV);

	if (!tag[0] && env)
		snprintf(tag, sizeof(tag), "%s", env);
	return tag;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

static bool has_option(const char *list, const char *opt)
{
	size_t n = strlen(opt);
	const char *p = list;

	while (p && *p) {
		if (!strncmp(p, opt, n) && (p[n] == ',' || p[n] == 0))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/*
 * A mountinfo line: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE
 * SOURCE SUPEROPTS. A mount of the hierarchy's own root ("/") is preferred.
 */
static void find_roots(void)
{
	bool cg2_whole = false, dev_whole = false, frz_whole = false;
	char line[4096];
	FILE *f;

	if (roots_found)
		return;
	roots_found = true;
	f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *field[6], *fstype, *super, *sep, *save = NULL, *p = line;
		bool whole;
		int i;

		sep = strstr(line, " - ");
		if (!sep)
			continue;
		*sep = 0;
		fstype = strtok_r(sep + 3, " \n", &save);
		strtok_r(NULL, " \n", &save); /* source */
		super = strtok_r(NULL, " \n", &save);
		if (!fstype || !super)
			continue;
		save = NULL;
		for (i = 0; i < 6; i++, p = NULL)
			if (!(field[i] = strtok_r(p, " ", &save)))
				break;
		if (i < 6)
			continue;
		unescape(field[3]);
		unescape(field[4]);
		whole = !strcmp(field[3], "/");
		if (!strcmp(fstype, "cgroup2") && (!cg2_root[0] || (whole && !cg2_whole))) {
			snprintf(cg2_root, sizeof(cg2_root), "%s", field[4]);
			cg2_whole = whole;
		} else if (!strcmp(fstype, "cgroup") && has_option(super, "devices") &&
			   (!dev_root[0] || (whole && !dev_whole))) {
			snprintf(dev_root, sizeof(dev_root), "%s", field[4]);
			dev_whole = whole;
		} else if (!strcmp(fstype, "cgroup") && has_option(super, "freezer") &&
			   (!frz_root[0] || (whole && !frz_whole))) {
			snprintf(frz_root, sizeof(frz_root), "%s", field[4]);
			frz_whole = whole;
		}
	}
	fclose(f);
}

const char *scratch_cgroup2_root(void)
{
	find_roots();
	return cg2_root[0] ? cg2_root : NULL;
}

const char *scratch_devices_root(void)
{
	find_roots();
	return dev_root[0] ? dev_root : NULL;
}

const char *scratch_freezer_root(void)
{
	find_roots();
	return frz_root[0] ? frz_root : NULL;
}

static bool is_scratch_name(const char *name)
{
	const char *t = scratch_tag();
	size_t n = strlen(PREFIX), m = strlen(t);

	return !strncmp(name, PREFIX, n) && !strncmp(name + n, t, m) && name[n + m] == '-';
}

int scratch_is_ours(const char *path)
{
	const char *roots[3] = { scratch_cgroup2_root(), scratch_devices_root(), scratch_freezer_root() };
	int i;

	size_t len = strlen(path);

	if (strstr(path, "/../") || strstr(path, "/./") ||
	    (len >= 3 && !strcmp(path + len - 3, "/..")))
		return 0;
	for (i = 0; i < 3; i++) {
		size_t n = roots[i] ? strlen(roots[i]) : 0;

		if (!n)
			continue;
		/* a root of "/" has no trailing part to skip */
		if (!strncmp(path, roots[i], n) && (path[n] == '/' || n == 1) &&
		    is_scratch_name(path + (n == 1 ? 1 : n + 1)))
			return 1;
	}
	return 0;
}

/* ---- small file helpers --------------------------------------------------- */

static int write_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	ssize_t w;
	int fd = open(path, O_WRONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	w = write(fd, text, len);
	err = w < 0 ? -errno : (size_t)w == len ? 0 : -EIO;
	close(fd);
	return err;
}

static ssize_t read_file(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (!size) {
		close(fd);
		return -EINVAL;
	}
	while (len + 1 < size) {
		ssize_t r = read(fd, buf + len, size - 1 - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (!r)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	close(fd);
	return (ssize_t)len;
}

/* ---- cgroups --------------------------------------------------------------- */

int scratch_cgroup_create(const char *parent, char *path, size_t size)
{
	const char *r2 = scratch_cgroup2_root(), *r1 = scratch_devices_root(),
		   *rf = scratch_freezer_root();

	if (!parent)
		return -EINVAL;
	if (!scratch_is_ours(parent) && !(r2 && !strcmp(parent, r2)) &&
	    !(r1 && !strcmp(parent, r1)) && !(rf && !strcmp(parent, rf)))
		return -EPERM;
	for (;;) {
		unsigned int seq = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
		int n = snprintf(path, size, "%s/" PREFIX "%s-%u", parent, scratch_tag(), seq);

		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		if (!mkdir(path, 0755))
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
}

int scratch_cgroup_write(const char *cgroup, const char *file, const char *text)
{
	char path[PATH_MAX];

	if (!scratch_is_ours(cgroup))
		return -EPERM;
	if (snprintf(path, sizeof(path), "%s/%s", cgroup, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return write_file(path, text);
}

ssize_t scratch_cgroup_read(const char *cgroup, const char *file, char *buf, size_t size)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", cgroup, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	return read_file(path, buf, size);
}

static bool on_cgroup2(const char *path)
{
	const char *r2 = scratch_cgroup2_root();
	size_t n = r2 ? strlen(r2) : 0;

	return n && !strncmp(path, r2, n) && (path[n] == '/' || n == 1);
}

/* SIGKILL every pid listed in cgroup.procs; returns how many were listed. */
static int kill_listed(const char *cg)
{
	size_t size = 1 << 16;
	char *buf = malloc(size), *p, *end;
	int n = 0;

	if (!buf || scratch_cgroup_read(cg, "cgroup.procs", buf, size) < 0) {
		free(buf);
		return 0;
	}
	for (p = buf; *p; p = end) {
		long pid = strtol(p, &end, 10);

		if (end == p)
			break;
		/* only our own children are ever put in a scratch cgroup */
		if (pid > 1 && pid != getpid())
			kill((pid_t)pid, SIGKILL);
		n++;
	}
	free(buf);
	return n;
}

/* Kill the processes of CG (not below) and wait until none is left. */
static int empty_cgroup(const char *cg)
{
	struct timespec pause = { 0, 1000000 };
	int i;

	if (on_cgroup2(cg))
		scratch_cgroup_write(cg, "cgroup.kill", "1"); /* since Linux 5.14 */
	else /* a frozen v1 task cannot die until thawed */
		scratch_cgroup_write(cg, "freezer.state", "THAWED");
	for (i = 0; i < 10000; i++) {
		if (!kill_listed(cg))
			return 0;
		nanosleep(&pause, NULL);
	}
	fprintf(stderr, "scratch: %s still has processes\n", cg);
	return -EBUSY;
}

/* Detach the BPF_CGROUP_DEVICE links whose cgroup has inode number INO. */
static void detach_device_links(uint64_t ino)
{
	uint32_t id = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) && info.type == BPF_LINK_TYPE_CGROUP &&
		    info.cgroup.cgroup_id == ino && info.cgroup.attach_type == BPF_CGROUP_DEVICE)
			bpf_link_detach(fd);
		close(fd);
	}
}

/* Detach every BPF_CGROUP_DEVICE program attached to CG itself. */
static void detach_device_progs(const char *cg)
{
	uint32_t ids[256], cnt = 256, flags = 0, i;
	int cg_fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (cg_fd < 0)
		return;
	if (!bpf_prog_query(cg_fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt) && cnt) {
		for (i = 0; i < cnt; i++) {
			int fd = bpf_prog_get_fd_by_id(ids[i]);

			if (fd < 0)
				continue;
			bpf_prog_detach2(fd, cg_fd, BPF_CGROUP_DEVICE);
			close(fd);
		}
		/* what is left was attached through a bpf_link */
		cnt = 256;
		if (!bpf_prog_query(cg_fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt) && cnt &&
		    !fstat(cg_fd, &st))
			detach_device_links(st.st_ino);
	}
	close(cg_fd);
}

/* Depth first: the children of CG, then its processes, programs and itself. */
static int remove_tree(const char *cg)
{
	struct timespec pause = { 0, 1000000 };
	int err = 0, i;
	DIR *d = opendir(cg);
	struct dirent *e;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];
		int r;

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (snprintf(sub, sizeof(sub), "%s/%s", cg, e->d_name) >= (int)sizeof(sub))
			continue;
		r = remove_tree(sub);
		if (r && !err)
			err = r;
	}
	closedir(d);
	if (empty_cgroup(cg) && !err)
		err = -EBUSY;
	if (on_cgroup2(cg))
		detach_device_progs(cg);
	/* the last exiting task may keep the cgroup busy for a moment */
	for (i = 0; i < 5000; i++) {
		if (!rmdir(cg) || errno == ENOENT)
			return err;
		if (errno != EBUSY)
			break;
		nanosleep(&pause, NULL);
	}
	fprintf(stderr, "scratch: rmdir %s: %s\n", cg, strerror(errno));
	return err ? err : -errno;
}

int scratch_cgroup_remove(const char *cgroup)
{
	if (!scratch_is_ours(cgroup))
		return -EPERM;
	return remove_tree(cgroup);
}

/* ---- children ---------------------------------------------------------------- */

pid_t scratch_spawn(const char *cgroup, int (*fn)(void *arg), void *arg)
{
	pid_t parent = getpid(), pid;

	if (!scratch_is_ours(cgroup))
		return -EPERM;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		char me[32];
		int err, ret;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(SCRATCH_EXIT_JOIN);
		snprintf(me, sizeof(me), "%d", (int)getpid());
		err = scratch_cgroup_write(cgroup, "cgroup.procs", me);
		if (err) {
			fprintf(stderr, "scratch: cannot join %s: %s\n", cgroup, strerror(-err));
			_exit(SCRATCH_EXIT_JOIN);
		}
		ret = fn(arg);
		fflush(NULL);
		_exit(ret & 0xff);
	}
	return pid;
}

int scratch_wait(pid_t pid)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

int scratch_run(const char *cgroup, int (*fn)(void *arg), void *arg)
{
	pid_t pid = scratch_spawn(cgroup, fn, arg);

	return pid < 0 ? pid : scratch_wait(pid);
}

/* ---- device directories --------------------------------------------------- */

const struct scratch_node scratch_default_nodes[] = {
	{ "null", 'c', 1, 3 },   { "zero", 'c', 1, 5 },        { "full", 'c', 1, 7 },
	{ "urandom", 'c', 1, 9 }, { "c-5-7", 'c', 5, 7 },       { "c-10-5", 'c', 10, 5 },
	{ "c-4095-4095", 'c', 4095, 4095 }, { "loop0", 'b', 7, 0 }, { "b-10-3", 'b', 10, 3 },
};
const size_t scratch_default_nodes_count =
	sizeof(scratch_default_nodes) / sizeof(scratch_default_nodes[0]);

/* The places a device directory may be made in, in order of preference. */
static size_t devdir_bases(const char *bases[3])
{
	const char *tmp = getenv("TMPDIR");
	size_t n = 0;

	if (tmp && *tmp == '/')
		bases[n++] = tmp;
	bases[n++] = "/tmp";
	bases[n++] = "/var/tmp";
	return n;
}

/* Remove DIR and what it holds, never following symbolic links. */
static int remove_dir_at(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC), err = 0;
	DIR *d;
	struct dirent *e;

	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d))) {
		int r = 0;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (e->d_type != DT_DIR && !unlinkat(fd, e->d_name, 0))
			continue;
		if (e->d_type == DT_DIR || errno == EISDIR)
			r = remove_dir_at(fd, e->d_name);
		else if (errno != ENOENT)
			r = -errno;
		if (r && !err)
			err = r;
	}
	closedir(d);
	if (unlinkat(parent, name, AT_REMOVEDIR) && errno != ENOENT && !err)
		err = -errno;
	return err;
}

int scratch_devdir_create(char *dir, size_t size, const struct scratch_node *nodes, size_t count)
{
	const char *bases[3];
	size_t nb = devdir_bases(bases), b, i;
	int err = -ENOENT;

	if (!nodes) {
		nodes = scratch_default_nodes;
		count = scratch_default_nodes_count;
	}
	for (b = 0; b < nb; b++) {
		struct statvfs vfs;

		/* a nodev mount refuses to open any device: useless here */
		if (statvfs(bases[b], &vfs) || (vfs.f_flag & ST_NODEV))
			continue;
		if (snprintf(dir, size, "%s/" PREFIX "%s-dev-XXXXXX", bases[b], scratch_tag()) >=
		    (int)size)
			return -ENAMETOOLONG;
		if (!mkdtemp(dir)) {
			err = -errno;
			continue;
		}
		for (i = 0; i < count; i++) {
			char path[PATH_MAX];
			mode_t type = nodes[i].type == 'b' ? S_IFBLK : S_IFCHR;

			snprintf(path, sizeof(path), "%s/%s", dir, nodes[i].name);
			if (mknod(path, type | 0666, makedev(nodes[i].major, nodes[i].minor))) {
				err = -errno;
				scratch_devdir_remove(dir);
				return err;
			}
			/* mknod applies the umask */
			chmod(path, 0666);
		}
		return 0;
	}
	return err;
}

int scratch_devdir_remove(const char *dir)
{
	return remove_dir_at(AT_FDCWD, dir);
}

/* ---- cleanup --------------------------------------------------------------- */

static void remove_scratch_below(const char *base, bool cgroups)
{
	DIR *d;
	struct dirent *e;

	if (!base || !(d = opendir(base)))
		return;
	while ((e = readdir(d))) {
		char path[PATH_MAX];

		if (e->d_type != DT_DIR || !is_scratch_name(e->d_name))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", strcmp(base, "/") ? base : "",
			     e->d_name) >= (int)sizeof(path))
			continue;
		if (cgroups)
			remove_tree(path);
		else if (strstr(e->d_name, "-dev-"))
			scratch_devdir_remove(path);
	}
	closedir(d);
}

void scratch_cleanup(void)
{
	const char *bases[3];
	size_t nb = devdir_bases(bases), i;

	remove_scratch_below(scratch_cgroup2_root(), true);
	remove_scratch_below(scratch_devices_root(), true);
	remove_scratch_below(scratch_freezer_root(), true);
	for (i = 0; i < nb; i++)
		remove_scratch_below(bases[i], false);
}

struct open_loop {
	uint64_t ns;
	int pipe;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int open_loop(void *arg)
{
	struct open_loop *l = arg;
	uint64_t end = mono_ns() + l->ns, n = 0;

	/* the clock read once per 64 opens */
	while ((n & 63) || mono_ns() < end) {
		int fd = open("/dev/null", O_RDONLY);

		if (fd >= 0)
			close(fd);
		n++;
	}
	return write(l->pipe, &n, sizeof(n)) == sizeof(n) ? 0 : 1;
}

double scratch_opens_per_second(const char *cgroup, int ms)
{
	struct open_loop l = { .ns = (uint64_t)ms * 1000000ull };
	uint64_t n = 0;
	pid_t pid;
	int p[2], ret = 0;

	if (pipe(p))
		return -errno;
	l.pipe = p[1];
	pid = scratch_spawn(cgroup, open_loop, &l);
	if (pid < 0)
		ret = (int)pid;
	else if (read(p[0], &n, sizeof(n)) != sizeof(n))
		ret = -EIO;
	if (pid > 0 && scratch_wait(pid) && !ret)
		ret = -ECHILD;
	close(p[0]);
	close(p[1]);
	return ret ? ret : (double)n * 1000.0 / ms;
}

double scratch_best_opens_per_second(const char *cgroup, int k, int ms)
{
	double best = 0;

	for (int i = 0; i < k; i++) {
		double v = scratch_opens_per_second(cgroup, ms);

		if (v < 0)
			return v;
		best = v > best ? v : best;
	}
	return best;
}

bool scratch_char_major_listed(unsigned int major)
{
	char line[256];
	bool chars = false, found = false;
	FILE *f = fopen("/proc/devices", "re");

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		unsigned int m;

		if (!strncmp(line, "Character", 9))
			chars = true;
		else if (!strncmp(line, "Block", 5))
			chars = false;
		else if (chars && sscanf(line, "%u", &m) == 1 && m == major)
			found = true;
	}
	fclose(f);
	return found;
}

unsigned int scratch_free_char_major(void)
{
	static unsigned int m;

	if (m)
		return m;
	if (!scratch_char_major_listed(240))
		return m = 240;
	for (unsigned int c = 254; c >= 234; c--)
		if (!scratch_char_major_listed(c))
			return m = c;
	SKIP("every char major of 234-254 has a driver here");
}

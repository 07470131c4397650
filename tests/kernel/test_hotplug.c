// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hot-plug (issue "Hot-plug"): devcg_attach() and devcg_detach() give a
 * running container a device -- node and permission -- and take it back.
 *
 * The device: a node of a char major no driver has (240 when free, else
 * another of the range 234-254 that /proc/devices does not list). Opening
 * it tells the three states apart: no node, ENOENT; a node the device
 * cgroup refuses, EPERM (devcgroup_inode_permission() runs in may_open(),
 * before the driver); a node it allows, ENXIO (chrdev_open() finds no
 * driver). So every "allowed" below is an ENXIO that an EPERM control
 * shows could have been otherwise.
 *
 * The containers: first pseudo-containers made here -- a child in a
 * scratch cgroup that unshares a mount namespace (optionally inside a new
 * user namespace, whose ids 0-65535 are the host's 100000-165535) and
 * mounts a tmpfs on a scratch "dev" directory; it opens paths on request
 * -- for the library's semantics, failure injection, idempotence,
 * concurrency and open holders; then real runc and crun containers
 * (tests/runtime.h).
 */
#include "devcg.h"
#include "harness.h"
#include "runtime.h"
#include "scratch.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/fsuid.h>
#include <sys/inotify.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <sys/uio.h>
#include <linux/capability.h>
#include <linux/fuse.h>
#include <bpf/bpf.h>

#define VIDEO_GID 44
#define NFAKE 8 /* fakegpu0..7: minors 0..7 */

/* ---- the device ------------------------------------------------------------ */

/* ---- pseudo-containers ------------------------------------------------------- */

struct pc {
	char cg[PATH_MAX];   /* its scratch cgroup */
	char host[PATH_MAX]; /* host nodes: fakegpu0..7, fakectl, fake-uvm, fake-uvm-tools, zero */
	char dev[PATH_MAX];  /* HOST/ctr: a tmpfs in the container's mount namespace */
	bool userns;
	pid_t pid;
	int cmd[2], res[2];
};

enum { OP_OPEN = 'o', OP_HOLD = 'h', OP_READ_HELD = 'r', OP_RACE = 'R', OP_BIND = 'b', OP_QUIT = 'q' };

struct req {
	char op;
	char path[PATH_MAX];
};

/*
 * The container's racer (OP_RACE): a process in its mount namespace that
 * watches its dev directory (inotify) and replaces every temporary node
 * devcg makes there with a symbolic link to TARGET, at once.
 */
static void racer(const char *dev, const char *target)
{
	char buf[4096] __attribute__((aligned(8)));
	int in = inotify_init1(IN_CLOEXEC), dfd = open(dev, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (in < 0 || dfd < 0 || inotify_add_watch(in, dev, IN_CREATE) < 0)
		_exit(1);
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		for (ssize_t off = 0; n > 0 && off < n;) {
			struct inotify_event *ev = (void *)(buf + off);

			off += (ssize_t)(sizeof(*ev) + ev->len);
			if (ev->len && !strncmp(ev->name, ".devcg-hotplug-", 15) &&
			    !symlinkat(target, dfd, ".racer"))
				renameat(dfd, ".racer", dfd, ev->name);
		}
	}
}

static int pc_main(void *arg)
{
	struct pc *p = arg;
	struct req rq;
	int held = -1;

	close(p->cmd[1]);
	close(p->res[0]);
	if (p->userns) {
		char ok;

		if (unshare(CLONE_NEWUSER))
			return 10;
		/* the parent writes the id maps */
		if (write(p->res[1], "u", 1) != 1 || read(p->cmd[0], &ok, 1) != 1)
			return 11;
		/* its root, as a runtime's init becomes it: host id 100000 */
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			return 16;
	}
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 12;
	if (mount("tmpfs", p->dev, "tmpfs", MS_NOSUID, "mode=755,size=1m"))
		return 13;
	if (write(p->res[1], "r", 1) != 1)
		return 14;
	while (read(p->cmd[0], &rq, sizeof(rq)) == (ssize_t)sizeof(rq) && rq.op != OP_QUIT) {
		int ret = 0, fd;
		char c;

		switch (rq.op) {
		case OP_OPEN:
			fd = open(rq.path, O_RDONLY | O_CLOEXEC);
			ret = fd < 0 ? errno : 0;
			if (fd >= 0)
				close(fd);
			break;
		case OP_HOLD:
			held = open(rq.path, O_RDONLY | O_CLOEXEC);
			ret = held < 0 ? -errno : held;
			break;
		case OP_READ_HELD:
			ret = read(held, &c, 1) == 1 ? 0 : errno ? errno : EIO;
			break;
		case OP_RACE: /* a racer, until the container ends */
			ret = fork();
			if (ret == 0)
				racer(p->dev, rq.path);
			ret = ret < 0 ? errno : 0;
			break;
		case OP_BIND: { /* bind the host's directory PATH on dev/shm */
			char shm[PATH_MAX];

			snprintf(shm, sizeof(shm), "%s/shm", p->dev);
			ret = mkdir(shm, 01777) || mount(rq.path, shm, NULL, MS_BIND, NULL) ? errno : 0;
			break;
		}
		}
		if (write(p->res[1], &ret, sizeof(ret)) != (ssize_t)sizeof(ret))
			return 15;
	}
	return 0;
}

static void write_map(pid_t pid, const char *file)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	CHECK_MSG(fd >= 0, "%s: %s", path, strerror(errno));
	CHECK(write(fd, "0 " USERNS_HOST_ID " 65536\n", strlen("0 " USERNS_HOST_ID " 65536\n")) > 0);
	close(fd);
}

static void host_node(struct pc *p, const char *name, unsigned int maj, unsigned int min, mode_t mode,
		      gid_t gid)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", p->host, name);
	CHECK_MSG(!mknod(path, S_IFCHR | mode, makedev(maj, min)), "mknod %s: %s", path, strerror(errno));
	CHECK(!chmod(path, mode));
	CHECK(!chown(path, 0, gid));
}

/* A pseudo-container with the host nodes and the base POLICY (rules, one
 * per line; NULL: none installed). */
static const char *pc_parent; /* a scratch cgroup to start the next one in, or NULL */

static void pc_start(struct pc *p, bool userns, const char *policy)
{
	const char *root = pc_parent ? pc_parent : scratch_cgroup2_root();
	char path[PATH_MAX], c;

	if (geteuid() != 0)
		SKIP("needs root");
	if (!root)
		SKIP("no cgroup2 mount");
	memset(p, 0, sizeof(*p));
	p->userns = userns;
	CHECK(!scratch_cgroup_create(root, p->cg, sizeof(p->cg)));
	CHECK(!scratch_devdir_create(p->host, sizeof(p->host), (const struct scratch_node[]){ { "zero", 'c', 1, 5 } }, 1));
	/* the root of a user-namespaced container is not in group video */
	for (int i = 0; i < NFAKE; i++) {
		snprintf(path, sizeof(path), "fakegpu%d", i);
		host_node(p, path, scratch_free_char_major(), (unsigned int)i, userns ? 0666 : 0660, VIDEO_GID);
	}
	host_node(p, "fakectl", scratch_free_char_major(), 255, 0666, 0);
	host_node(p, "fake-uvm", scratch_free_char_major(), 254, 0666, 0);
	host_node(p, "fake-uvm-tools", scratch_free_char_major(), 253, 0666, 0);
	/* the container's root (host uid 100000) walks down to its /dev */
	CHECK(!chmod(p->host, 0755));
	snprintf(p->dev, sizeof(p->dev), "%s/ctr", p->host);
	CHECK(!mkdir(p->dev, 0755));
	CHECK(!pipe2(p->cmd, O_CLOEXEC) && !pipe2(p->res, O_CLOEXEC));
	p->pid = scratch_spawn(p->cg, pc_main, p);
	CHECK(p->pid > 0);
	close(p->cmd[0]);
	close(p->res[1]);
	if (userns) {
		CHECK(read(p->res[0], &c, 1) == 1 && c == 'u');
		write_map(p->pid, "uid_map");
		write_map(p->pid, "gid_map");
		CHECK(write(p->cmd[1], "m", 1) == 1);
	}
	CHECK_MSG(read(p->res[0], &c, 1) == 1 && c == 'r', "the pseudo-container did not start: exit %d",
		  scratch_wait(p->pid));
	if (policy) {
		struct devcg_rules *rules = devcg_rules_new();
		struct devcg_policy *pol = devcg_policy_new();
		struct devcg_error err = { 0 };

		CHECK_MSG(!devcg_rules_parse(rules, policy, strlen(policy), "policy", NULL, &err) &&
				  !devcg_policy_apply_all(pol, rules, &err) && !devcg_replace(p->cg, pol, NULL, &err),
			  "%s", err.msg);
		devcg_rules_free(rules);
		devcg_policy_free(pol);
	}
}

static int pc_request(struct pc *p, char op, const char *path)
{
	struct req rq = { .op = op };
	int ret;

	snprintf(rq.path, sizeof(rq.path), "%s", path ? path : "");
	CHECK(write(p->cmd[1], &rq, sizeof(rq)) == (ssize_t)sizeof(rq));
	CHECK(read(p->res[0], &ret, sizeof(ret)) == (ssize_t)sizeof(ret));
	return ret;
}

/* open(2) of the container's NAME (under its dev) from inside: 0 or errno. */
static int pc_open(struct pc *p, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", p->dev, name);
	return pc_request(p, OP_OPEN, path);
}

/* The container's NAME, as the host sees it through /proc/PID/root. */
static void pc_path(struct pc *p, const char *name, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/%d/root%s/%s", (int)p->pid, p->dev, name);
}

static int pc_lstat(struct pc *p, const char *name, struct stat *st)
{
	char path[PATH_MAX];

	pc_path(p, name, path, sizeof(path));
	return lstat(path, st) ? -errno : 0;
}

/* mknod in the container's mount namespace, without any permission (what a
 * node without its cgroup rule looks like). In a user-namespaced container
 * its /dev takes only the ids mapped there: the node is made by a child
 * with the container root's fsuid (which keeps CAP_MKNOD, as root). */
static void pc_mknod(struct pc *p, const char *name, unsigned int maj, unsigned int min)
{
	char path[PATH_MAX];
	pid_t pid;

	pc_path(p, name, path, sizeof(path));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (p->userns) {
			struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
			struct __user_cap_data_struct data[2];

			setfsgid((gid_t)atoi(USERNS_HOST_ID));
			setfsuid((uid_t)atoi(USERNS_HOST_ID));
			/* the fsuid change dropped CAP_MKNOD from the effective set */
			if (!syscall(SYS_capget, &hdr, data)) {
				data[0].effective = data[0].permitted;
				data[1].effective = data[1].permitted;
				syscall(SYS_capset, &hdr, data);
			}
		}
		if (mknod(path, S_IFCHR | 0666, makedev(maj, min)) || chmod(path, 0666)) {
			fprintf(stderr, "    mknod %s: %s\n", path, strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	CHECK_INT(scratch_wait(pid), 0);
}

/* ---- what the container has: its dev tree and its policy --------------------- */

struct snap {
	char text[16384];
	struct devcg_policy *policy;
};

static void snap_dir(struct snap *s, const char *base, const char *rel)
{
	char path[PATH_MAX];
	struct dirent **names;
	int n;

	snprintf(path, sizeof(path), "%s%s", base, rel);
	n = scandir(path, &names, NULL, alphasort);
	CHECK_MSG(n >= 0, "scandir %s: %s", path, strerror(errno));
	for (int i = 0; i < n; i++) {
		char sub[PATH_MAX], full[PATH_MAX];
		struct stat st;
		size_t len = strlen(s->text);

		if (!strcmp(names[i]->d_name, ".") || !strcmp(names[i]->d_name, "..")) {
			free(names[i]);
			continue;
		}
		snprintf(sub, sizeof(sub), "%s/%s", rel, names[i]->d_name);
		snprintf(full, sizeof(full), "%s%s", base, sub);
		free(names[i]);
		CHECK(!lstat(full, &st));
		snprintf(s->text + len, sizeof(s->text) - len, "%s %o %u:%u %u:%u ino %lu\n", sub,
			 st.st_mode, major(st.st_rdev), minor(st.st_rdev), st.st_uid, st.st_gid,
			 (unsigned long)st.st_ino);
		if (S_ISDIR(st.st_mode))
			snap_dir(s, base, sub);
	}
	free(names);
}

/* The container's dev tree (names, types, numbers, modes, owners, inodes),
 * the mounts below it, and its devcg policy. */
static void snap_take(struct pc *p, struct snap *s)
{
	char base[PATH_MAX], path[64], line[4096];
	const struct devcg_program *own;
	struct devcg_state *st;
	struct devcg_error err = { 0 };
	FILE *f;

	memset(s, 0, sizeof(*s));
	snprintf(base, sizeof(base), "/proc/%d/root%s", (int)p->pid, p->dev);
	snap_dir(s, base, "");
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)p->pid);
	f = fopen(path, "re");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX];
		size_t len = strlen(s->text);

		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && !strncmp(mnt, p->dev, strlen(p->dev)) &&
		    mnt[strlen(p->dev)] == '/')
			snprintf(s->text + len, sizeof(s->text) - len, "mount %s\n", mnt);
	}
	fclose(f);
	CHECK_MSG(!devcg_state_read(p->cg, &st, &err), "%s", err.msg);
	own = devcg_state_own(st);
	s->policy = own && own->policy ? devcg_policy_dup(own->policy) : devcg_policy_new();
	devcg_state_free(st);
}

static bool snap_equal(const struct snap *a, const struct snap *b)
{
	return !strcmp(a->text, b->text) && devcg_policy_equal(a->policy, b->policy);
}

static void snap_free(struct snap *s)
{
	devcg_policy_free(s->policy);
	s->policy = NULL;
}

static void check_same(const struct snap *a, const struct snap *b)
{
	CHECK_MSG(!strcmp(a->text, b->text), "the container's dev changed:\nbefore:\n%safter:\n%s", a->text,
		  b->text);
	CHECK_MSG(devcg_policy_equal(a->policy, b->policy), "the container's policy changed");
}

/* The container's /dev and policy are as BEFORE (freed). */
static void check_unchanged(struct pc *p, struct snap *before)
{
	struct snap after;

	snap_take(p, &after);
	check_same(before, &after);
	snap_free(before);
	snap_free(&after);
}

/* Does the live policy allow the device, by an exception of exactly its key? */
static uint8_t own_access(struct pc *p, unsigned int maj, unsigned int min)
{
	struct snap s;
	const struct devcg_exception *ex;
	uint8_t acc = 0;

	snap_take(p, &s);
	ex = devcg_policy_exceptions(s.policy);
	for (size_t i = 0; i < devcg_policy_count(s.policy); i++)
		if (ex[i].type == DEVCG_CHAR && ex[i].major == maj && ex[i].minor == min)
			acc = ex[i].access;
	snap_free(&s);
	return acc;
}

/* ---- calls ----------------------------------------------------------------------- */

struct dev {
	const char *host, *name; /* host node under p->host; path under p->dev */
};

static void fill(struct pc *p, const struct dev *d, size_t n, struct devcg_hotplug_device *out,
		 char (*paths)[2][PATH_MAX])
{
	for (size_t i = 0; i < n; i++) {
		snprintf(paths[i][0], PATH_MAX, "%s/%s", p->host, d[i].host);
		snprintf(paths[i][1], PATH_MAX, "%s/%s", p->dev, d[i].name);
		memset(&out[i], 0, sizeof(out[i]));
		out[i].host_path = paths[i][0];
		out[i].path = paths[i][1];
	}
}

#define MAXD 8

static int call(bool attach, struct pc *p, const struct dev *d, size_t n, struct devcg_hotplug_opts *o,
		struct devcg_hotplug_result **r, struct devcg_error *err)
{
	struct devcg_hotplug_device devs[MAXD];
	char paths[MAXD][2][PATH_MAX];
	DEVCG_OPTS(devcg_hotplug_opts, dflt);

	CHECK(n <= MAXD);
	fill(p, d, n, devs, paths);
	if (!o)
		o = &dflt;
	o->pid = p->pid;
	memset(err, 0, sizeof(*err));
	return attach ? devcg_attach(p->cg, devs, n, o, r, err) : devcg_detach(p->cg, devs, n, o, r, err);
}

/* Attach or detach, CHECKing success; the result (free it). */
static struct devcg_hotplug_result *ok(bool attach, struct pc *p, const struct dev *d, size_t n,
				       struct devcg_hotplug_opts *o)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	int ret = call(attach, p, d, n, o, &r, &err);

	CHECK_MSG(ret == 0 && r, "devcg_%s: %d: %s", attach ? "attach" : "detach", ret, err.msg);
	CHECK_INT(r->count, n);
	return r;
}

#define BASE "deny a\nallow c 1:3 rwm\n"

static const struct dev gpu0 = { "fakegpu0", "fakegpu0" };

/* ---- 1. the three states, node and permission ----------------------------------- */

TEST(hotplug_attach_allows_then_makes_the_node_and_detach_takes_both_back)
{
	struct devcg_hotplug_result *r;
	struct snap before;
	struct stat st, host;
	char hpath[PATH_MAX];
	struct pc p;

	pc_start(&p, false, BASE);
	snap_take(&p, &before);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);

	r = ok(true, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_MADE);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ADDED);
	CHECK_INT(r->entries[0].major, scratch_free_char_major());
	CHECK_INT(r->entries[0].access, DEVCG_ACC_ALL);
	CHECK_INT(r->pid, p.pid);
	CHECK(r->swapped && r->replaced_id != 0 && r->prog_id != r->replaced_id);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	/* the node is the host's: type, numbers, mode and owner */
	snprintf(hpath, sizeof(hpath), "%s/fakegpu0", p.host);
	CHECK(!stat(hpath, &host));
	CHECK(!pc_lstat(&p, "fakegpu0", &st));
	CHECK_INT(st.st_mode, host.st_mode);
	CHECK_INT(st.st_rdev, host.st_rdev);
	CHECK_INT(st.st_uid, 0);
	CHECK_INT(st.st_gid, VIDEO_GID);
	CHECK_INT(own_access(&p, scratch_free_char_major(), 0), DEVCG_ACC_ALL);

	r = ok(false, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_REMOVED);
	CHECK_INT(r->entries[0].nholders, 0);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
	check_unchanged(&p, &before);
}

TEST(hotplug_control_a_node_without_its_permission_is_refused_with_eperm)
{
	struct devcg_hotplug_result *r;
	struct pc p;

	pc_start(&p, false, BASE);
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
	/* attach: the node there is the device: only the permission changes */
	r = ok(true, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_PRESENT);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
}

TEST(hotplug_attach_twice_and_detach_twice_succeed_and_say_so_without_a_swap)
{
	struct devcg_hotplug_result *r;
	uint32_t id;
	struct pc p;

	pc_start(&p, false, BASE);
	devcg_hotplug_result_free(ok(true, &p, &gpu0, 1, NULL));
	r = ok(true, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_PRESENT);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ALREADY);
	CHECK(!r->swapped);
	CHECK_INT(r->replaced_id, 0);
	id = r->prog_id;
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);

	devcg_hotplug_result_free(ok(false, &p, &gpu0, 1, NULL));
	r = ok(false, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_ABSENT);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_NONE);
	CHECK(!r->swapped);
	CHECK_INT(r->replaced_id, 0);
	CHECK(r->prog_id != id);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
}

TEST(hotplug_attach_makes_missing_parent_directories_and_reports_them)
{
	static const struct dev deep = { "fakegpu0", "dri/by-path/card0" };
	struct devcg_hotplug_result *r;
	struct stat st;
	struct pc p;

	pc_start(&p, false, BASE);
	r = ok(true, &p, &deep, 1, NULL);
	CHECK_INT(r->entries[0].ndirs, 2);
	CHECK(strstr(r->entries[0].dirs[0], "/ctr/dri") && !strstr(r->entries[0].dirs[0], "by-path"));
	CHECK(strstr(r->entries[0].dirs[1], "/ctr/dri/by-path"));
	devcg_hotplug_result_free(r);
	CHECK(!pc_lstat(&p, "dri/by-path", &st) && S_ISDIR(st.st_mode));
	CHECK_INT(pc_open(&p, "dri/by-path/card0"), ENXIO);
	/* made once: the second attach makes none */
	r = ok(true, &p, &deep, 1, NULL);
	CHECK_INT(r->entries[0].ndirs, 0);
	devcg_hotplug_result_free(r);
}

TEST(hotplug_given_mode_and_owner_are_the_nodes_and_a_different_one_is_replaced)
{
	struct devcg_hotplug_device d = { 0 };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err = { 0 };
	char host[PATH_MAX], path[PATH_MAX];
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct stat st;
	ino_t ino;
	struct pc p;

	pc_start(&p, false, BASE);
	o.pid = p.pid;
	snprintf(host, sizeof(host), "%s/fakegpu0", p.host);
	snprintf(path, sizeof(path), "%s/fakegpu0", p.dev);
	d.host_path = host;
	d.path = path;
	d.set = DEVCG_HOTPLUG_SET_MODE | DEVCG_HOTPLUG_SET_UID | DEVCG_HOTPLUG_SET_GID;
	d.mode = 0600;
	d.uid = 1000;
	d.gid = 1001;
	CHECK_MSG(!devcg_attach(NULL, &d, 1, &o, &r, &err), "%s", err.msg);
	CHECK_INT(r->entries[0].mode, 0600);
	devcg_hotplug_result_free(r);
	CHECK(!pc_lstat(&p, "fakegpu0", &st));
	CHECK_INT(st.st_mode & 07777, 0600);
	CHECK_INT(st.st_uid, 1000);
	CHECK_INT(st.st_gid, 1001);
	ino = st.st_ino;
	/* another mode: the node is replaced in one rename */
	d.mode = 0644;
	CHECK_MSG(!devcg_attach(NULL, &d, 1, &o, &r, &err), "%s", err.msg);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REPLACED);
	CHECK(r->entries[0].note && strstr(r->entries[0].note, "mode 0600"));
	devcg_hotplug_result_free(r);
	CHECK(!pc_lstat(&p, "fakegpu0", &st));
	CHECK_INT(st.st_mode & 07777, 0644);
	CHECK(st.st_ino != ino);
}

/* A device program of the test's own named NAME that refuses every
 * device (a runtime's, as far as devcg can tell: its rules cannot be
 * read), attached to P's cgroup beside what is there; its id. */
static uint32_t pc_attach_prog(struct pc *p, const char *name)
{
	/* deny-all, calling a helper the reader does not know: a program whose
	 * rules devcg cannot read back */
	const struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_prandom_u32 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "GPL", insns, 3, NULL);
	int cfd = open(p->cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK_MSG(fd >= 0 && cfd >= 0, "loading %s: %s", name, strerror(errno));
	CHECK(!bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	CHECK(!bpf_obj_get_info_by_fd(fd, &info, &len));
	close(fd);
	close(cfd);
	return info.id;
}

/* The ids of the device programs attached to P's cgroup. */
static uint32_t pc_progs(struct pc *p, uint32_t *ids)
{
	__u32 cnt = 64, flags = 0;
	int cfd = open(p->cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(cfd >= 0);
	CHECK(!bpf_prog_query(cfd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(cfd);
	return cnt;
}

TEST(hotplug_attach_force_replaces_a_runtimes_program_and_the_device_opens)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	uint32_t ids[64], runtime;
	struct pc p;

	pc_start(&p, false, NULL);
	runtime = pc_attach_prog(&p, "runtime_dev");
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	/* control: the runtime's program refuses it */
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
	/* without --force its rules, which devcg cannot read, are not replaced */
	CHECK_INT(call(true, &p, &gpu0, 1, NULL, &r, &err), -EBUSY);
	CHECK_INT(pc_progs(&p, ids), 1);
	CHECK_INT(ids[0], runtime);
	/* with it: allow-all with the device takes the runtime program's place,
	 * though allow-all needs no change to allow the device */
	o.force = true;
	r = ok(true, &p, &gpu0, 1, &o);
	CHECK(r->swapped);
	CHECK_INT(r->replaced_id, runtime);
	CHECK_MSG(r->entries[0].note && strstr(r->entries[0].note, "detached"), "%s",
		  r->entries[0].note ? r->entries[0].note : "(no note)");
	CHECK_INT(pc_progs(&p, ids), 1);
	CHECK_INT(ids[0], r->prog_id);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
}

/* A program named like systemd's on CG that allows c 1:3, and the fake
 * GPU's minor 0 too when GPU; its fd. */
static int parent_prog(const char *cg, bool gpu)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 4, .src_reg = 1, .off = 4 },
		{ .code = BPF_LDX | BPF_MEM | BPF_W, .dst_reg = 5, .src_reg = 1, .off = 8 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 4, .off = 2, .imm = 1 },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 5, .off = 5, .imm = 3 },
		{ .code = BPF_JMP | BPF_JA, .off = 2 },
		{ .code = BPF_JMP | BPF_JNE | BPF_K, .dst_reg = 4, .off = 1, .imm = (int)scratch_free_char_major() },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 5, .off = 2, .imm = gpu ? 0 : -1 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "sd_devices", "GPL", insns, 11, NULL);
	int cfd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK_MSG(fd >= 0 && cfd >= 0, "loading: %s", strerror(errno));
	CHECK(!bpf_prog_attach(fd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	close(cfd);
	return fd;
}

/*
 * A container below a cgroup whose program refuses the device (systemd's
 * on the .scope above crun's "container"): attach is refused naming that
 * cgroup and whose program, before anything changes (the node would be
 * made, and refused). Control: the parent's program allowing the device,
 * attach succeeds and it opens.
 */
TEST(hotplug_attach_refused_by_a_program_on_an_ancestor_fails_naming_it_and_changes_nothing)
{
	struct devcg_hotplug_result *r = NULL;
	char parent[PATH_MAX], prog[64];
	struct devcg_error err;
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);
	struct snap before;
	int fd, cfd;
	struct pc p;

	if (geteuid() != 0 || !scratch_cgroup2_root())
		SKIP("needs root and a cgroup2 mount");
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), parent, sizeof(parent)));
	fd = parent_prog(parent, false);
	CHECK(!bpf_obj_get_info_by_fd(fd, &info, &len));
	pc_parent = parent;
	pc_start(&p, false, BASE);
	pc_parent = NULL;
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &gpu0, 1, NULL, &r, &err), -EACCES);
	snprintf(prog, sizeof(prog), "systemd's program %u (sd_devices)", info.id);
	CHECK_MSG(strstr(err.msg, prog) && strstr(err.msg, strrchr(parent, '/')) &&
			  strstr(err.msg, "would still be refused") && !strchr(err.msg, '\n'),
		  "%s", err.msg);
	check_unchanged(&p, &before);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);

	/* control: the parent's program allows it now */
	close(parent_prog(parent, true));
	cfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(cfd >= 0 && !bpf_prog_detach2(fd, cfd, BPF_CGROUP_DEVICE));
	close(cfd);
	close(fd);
	devcg_hotplug_result_free(ok(true, &p, &gpu0, 1, NULL));
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
}

/* detach --force on the same container: allow-all (what it starts from)
 * needs no change to leave the device out, and must not take the place of
 * the runtime's program, which would give the container every device. */
TEST(hotplug_detach_force_leaves_a_runtimes_program_in_place)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r;
	uint32_t ids[64], runtime;
	struct pc p;

	pc_start(&p, false, NULL);
	runtime = pc_attach_prog(&p, "runtime_dev");
	pc_mknod(&p, "fakegpu1", scratch_free_char_major(), 1);
	CHECK_INT(pc_open(&p, "fakegpu1"), EPERM);
	o.force = true;
	r = ok(false, &p, &gpu0, 1, &o);
	CHECK(!r->swapped);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_progs(&p, ids), 1);
	CHECK_INT(ids[0], runtime);
	/* a node of a device the runtime refuses stays refused */
	CHECK_INT(pc_open(&p, "fakegpu1"), EPERM);
}

/*
 * A runc scope under systemd: devcg's filter (the hook's) beside systemd's
 * own program, sd_devices, which refuses what the unit's DeviceAllow= does
 * not list. --no-systemd turns off keeping DeviceAllow= in step (and the
 * unit lookup over D-Bus), not the recognition of systemd's program by
 * its name: devcg's filter takes its place, as it does where systemd's is
 * the only program, with no --force. Here, with no systemd, the cgroup is
 * no unit's: without --no-systemd the program counts as another's (the
 * control), as it would on a unit whose DeviceAllow= devcg keeps in step
 * only after a D-Bus lookup (tools/vmtest/guest/hotplug-systemd.sh).
 */
TEST(hotplug_attach_no_systemd_recognises_systemds_program_beside_devcgs)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	uint32_t ids[64], sd;
	struct pc p;

	pc_start(&p, false, BASE);
	sd = pc_attach_prog(&p, "sd_devices");
	CHECK_INT(pc_progs(&p, ids), 2);
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
	/* control: on no unit's cgroup, without --no-systemd it is another's */
	CHECK_INT(call(true, &p, &gpu0, 1, NULL, &r, &err), -EBUSY);
	CHECK_MSG(strstr(err.msg, "systemd's") && strstr(err.msg, "--force"), "%s", err.msg);
	CHECK_INT(pc_progs(&p, ids), 2);
	o.no_systemd = true;
	r = ok(true, &p, &gpu0, 1, &o);
	CHECK(r->swapped);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ADDED);
	CHECK_INT(pc_progs(&p, ids), 1);
	CHECK(ids[0] == r->prog_id && ids[0] != sd);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
}

/*
 * On a default-allow policy the device's own exception is a deny. Attach
 * would drop it, and detach, which never adds a deny, could not put it
 * back: the container would keep a device it was denied. Refused, with
 * nothing changed; the control is a device that policy does not deny.
 */
TEST(hotplug_attach_refuses_to_drop_a_default_allow_policys_own_deny_and_changes_nothing)
{
	static const struct dev gpu1 = { "fakegpu1", "fakegpu1" };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	struct snap before, after;
	char policy[256];
	struct pc p;

	snprintf(policy, sizeof(policy), "deny c %u:0 rw\n", scratch_free_char_major());
	pc_start(&p, false, policy);
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &gpu0, 1, NULL, &r, &err), -EPERM);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "own exception") && strstr(err.msg, "devcg allow"), "%s", err.msg);
	snap_take(&p, &after);
	check_same(&before, &after);
	snap_free(&after);
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
	/* control: a device it does not deny attaches, and detach leaves the
	 * policy as it was before the attach */
	r = ok(true, &p, &gpu1, 1, NULL);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ALREADY);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu1"), ENXIO);
	devcg_hotplug_result_free(ok(false, &p, &gpu1, 1, NULL));
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
	check_unchanged(&p, &before);
}

/* ---- 2. what detach takes back ------------------------------------------------- */

TEST(hotplug_detach_leaves_a_device_that_a_wider_rule_allows)
{
	struct devcg_hotplug_result *r;
	struct snap before, after;
	char policy[256];
	struct pc p;

	snprintf(policy, sizeof(policy), BASE "allow c %u:* rw\n", scratch_free_char_major());
	pc_start(&p, false, policy);
	snap_take(&p, &before);
	r = ok(true, &p, &gpu0, 1, &(struct devcg_hotplug_opts){ .sz = sizeof(struct devcg_hotplug_opts),
								  .access = DEVCG_ACC_READ | DEVCG_ACC_WRITE });
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ALREADY);
	CHECK(r->entries[0].note && strstr(r->entries[0].note, ":* rw"));
	CHECK_INT(r->replaced_id, 0);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	r = ok(false, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_STILL_ALLOWED);
	CHECK(r->entries[0].note && strstr(r->entries[0].note, "still allowed (rw)"));
	devcg_hotplug_result_free(r);
	snap_take(&p, &after);
	check_same(&before, &after);
	/* it is still allowed: a node made again opens */
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	snap_free(&before);
	snap_free(&after);
}

TEST(hotplug_detach_takes_back_the_devices_own_exception_even_from_the_base_policy)
{
	struct devcg_hotplug_result *r;
	char policy[256];
	struct pc p;

	snprintf(policy, sizeof(policy), BASE "allow c %u:0 rw\n", scratch_free_char_major());
	pc_start(&p, false, policy);
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	r = ok(false, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_REMOVED);
	CHECK_INT(r->entries[0].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	devcg_hotplug_result_free(r);
	CHECK_INT(own_access(&p, scratch_free_char_major(), 0), 0);
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
}

TEST(hotplug_detach_on_a_default_allow_policy_adds_no_deny)
{
	struct devcg_hotplug_result *r;
	struct snap before;
	struct pc p;

	pc_start(&p, false, "deny c 1:9 rwm\n");
	snap_take(&p, &before);
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	r = ok(false, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_STILL_ALLOWED);
	CHECK(strstr(r->entries[0].note, "default"));
	devcg_hotplug_result_free(r);
	check_unchanged(&p, &before);
}

TEST(hotplug_attach_under_a_wider_deny_of_a_default_allow_policy_is_refused_and_changes_nothing)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	struct snap before;
	char policy[256];
	struct pc p;

	snprintf(policy, sizeof(policy), "deny c %u:* rwm\n", scratch_free_char_major());
	pc_start(&p, false, policy);
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &gpu0, 1, NULL, &r, &err), -EPERM);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "cannot be allowed alone"), "%s", err.msg);
	check_unchanged(&p, &before);
}

/* ---- 3. failure at each step leaves the container exactly as before -------------- */

/*
 * Three devices: fakegpu0 where a node of another device (zero, c 1:5)
 * is (so it is exchanged), fakegpu1 in a directory to make, fakegpu2 in
 * another directory to make; node steps fail at the last one, so the
 * first two are undone. STEP is the fail_at step; METHOD how nodes are made.
 */
static void attach_fails_at(const char *step, bool userns, uint8_t method)
{
	static const struct dev d[3] = {
		{ "fakegpu0", "fakegpu0" }, { "fakegpu1", "a/fakegpu1" }, { "fakegpu2", "b/c/fakegpu2" },
	};
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	struct snap before, after;
	struct pc p;
	int ret;

	pc_start(&p, userns, BASE);
	pc_mknod(&p, "fakegpu0", 1, 5);
	snap_take(&p, &before);
	o.fail_at = step;
	o.method = method;
	o.force = true; /* fakegpu0 replaces a node of another device */
	ret = call(true, &p, d, 3, &o, &r, &err);
	CHECK_MSG(ret == -EIO, "attach failing at %s: %d: %s", step, ret, err.msg);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "injected") && strstr(err.msg, "as before"), "%s", err.msg);
	if (strcmp(step, "swap") && strcmp(step, "systemd"))
		CHECK_MSG(strstr(err.msg, step) && strstr(err.msg, "fakegpu2"), "%s", err.msg);
	snap_take(&p, &after);
	check_same(&before, &after);
	snap_free(&after);
	/* control: the same call without the failure changes both */
	o.fail_at = NULL;
	devcg_hotplug_result_free(ok(true, &p, d, 3, &o));
	snap_take(&p, &after);
	CHECK(!snap_equal(&before, &after));
	CHECK_INT(pc_open(&p, "b/c/fakegpu2"), ENXIO);
	snap_free(&before);
	snap_free(&after);
}

TEST(hotplug_attach_failing_at_the_permission_swap_leaves_the_container_as_before)
{
	attach_fails_at("swap", false, DEVCG_HOTPLUG_AUTO);
}

TEST(hotplug_attach_failing_at_mkdir_leaves_the_container_as_before)
{
	attach_fails_at("mkdir", false, DEVCG_HOTPLUG_AUTO);
}

TEST(hotplug_attach_failing_at_mknod_leaves_the_container_as_before)
{
	attach_fails_at("mknod", false, DEVCG_HOTPLUG_AUTO);
}

TEST(hotplug_attach_failing_at_rename_leaves_the_container_as_before)
{
	attach_fails_at("rename", false, DEVCG_HOTPLUG_AUTO);
}

TEST(hotplug_attach_failing_at_the_bind_mount_leaves_a_userns_container_as_before)
{
	attach_fails_at("bind", true, DEVCG_HOTPLUG_AUTO);
}

static void detach_fails_at(const char *step)
{
	static const struct dev d[2] = { { "fakegpu0", "fakegpu0" }, { "fakegpu1", "a/fakegpu1" } };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	struct snap before, after;
	struct pc p;
	int ret;

	pc_start(&p, false, BASE);
	devcg_hotplug_result_free(ok(true, &p, d, 2, NULL));
	snap_take(&p, &before);
	o.fail_at = step;
	ret = call(false, &p, d, 2, &o, &r, &err);
	CHECK_MSG(ret == -EIO, "detach failing at %s: %d: %s", step, ret, err.msg);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "injected") && strstr(err.msg, "as before"), "%s", err.msg);
	snap_take(&p, &after);
	/* the very nodes (same inodes) and the same policy */
	check_same(&before, &after);
	CHECK_INT(pc_open(&p, "a/fakegpu1"), ENXIO);
	snap_free(&before);
	snap_free(&after);
}

/* The systemd step comes after the swap (swap.c): it fails with the new
 * policy in place, which attach takes back (and detach puts back) before
 * saying "as before". It fails here on a cgroup of no unit by fail_at. */
TEST(hotplug_attach_failing_at_the_systemd_step_takes_the_permission_back)
{
	attach_fails_at("systemd", false, DEVCG_HOTPLUG_AUTO);
}

TEST(hotplug_detach_failing_at_the_systemd_step_puts_the_permission_and_the_nodes_back)
{
	detach_fails_at("systemd");
}

TEST(hotplug_detach_failing_at_unlink_leaves_the_container_as_before)
{
	detach_fails_at("unlink");
}

TEST(hotplug_detach_failing_at_the_permission_swap_puts_the_same_nodes_back)
{
	detach_fails_at("swap");
}

/* Our children but SKIP, from /proc/self/task/<tid>/children: up to MAX
 * in V; their number. */
static int children_but(pid_t skip, pid_t *v, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d))) {
		char path[64];
		FILE *f;
		int pid;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		while (fscanf(f, "%d", &pid) == 1)
			if (pid != skip && n < max)
				v[n++] = pid;
		fclose(f);
	}
	closedir(d);
	return n;
}

/* Detach leaves no process behind, failed or not: the scan of open files
 * is made by devcg's process in the container's mount namespace, which is
 * reaped before the call returns (no scanner forked for it). As the
 * subreaper, the test would get any grandchild left; the control: the
 * container is seen as a child. */
TEST(hotplug_detach_leaves_no_process_behind)
{
	static const struct dev d = { "fakegpu0", "fakegpu0" };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	pid_t left[8];
	struct pc p;

	pc_start(&p, false, BASE);
	devcg_hotplug_result_free(ok(true, &p, &d, 1, NULL));
	CHECK(!prctl(PR_SET_CHILD_SUBREAPER, 1));
	CHECK_INT(children_but(-1, left, 8), 1);
	CHECK_INT(left[0], p.pid);
	o.fail_at = "swap";
	CHECK_INT(call(false, &p, &d, 1, &o, &r, &err), -EIO);
	CHECK_INT(children_but(p.pid, left, 8), 0);
	/* nothing changed: the device is there and allowed */
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	r = ok(false, &p, &d, 1, NULL);
	CHECK_MSG(!r->entries[0].note || !strstr(r->entries[0].note, "more than listed"), "%s",
		  r->entries[0].note);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
	CHECK_INT(children_but(p.pid, left, 8), 0);
	CHECK(!prctl(PR_SET_CHILD_SUBREAPER, 0));
}

/* ---- 4. user namespaces: a bind mount of the host node --------------------------- */

static bool is_mounted(struct pc *p, const char *name)
{
	char path[64], line[4096], want[PATH_MAX];
	bool found = false;
	FILE *f;

	snprintf(want, sizeof(want), "%s/%s", p->dev, name);
	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)p->pid);
	f = fopen(path, "re");
	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX];

		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) == 1 && !strcmp(mnt, want))
			found = true;
	}
	fclose(f);
	return found;
}

TEST(hotplug_a_userns_container_gets_the_host_node_bind_mounted_and_it_opens)
{
	static const struct dev other = { "fakegpu1", "fakegpu1" };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r;
	struct pc p;

	pc_start(&p, true, BASE);
	r = ok(true, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_BOUND);
	CHECK(strstr(r->entries[0].note, "user namespace"));
	CHECK_INT(r->entries[0].gid, VIDEO_GID);
	devcg_hotplug_result_free(r);
	CHECK(is_mounted(&p, "fakegpu0"));
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	/* control, and the reason: a node made there with mknod cannot be
	 * opened (its file system belongs to the container's user namespace) */
	pc_mknod(&p, "fakegpu1", scratch_free_char_major(), 1);
	CHECK_INT(pc_open(&p, "fakegpu1"), EACCES);
	o.method = DEVCG_HOTPLUG_MKNOD;
	r = ok(true, &p, &other, 1, &o);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_PRESENT);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu1"), EACCES);
	/* detach unmounts and removes it */
	r = ok(false, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	devcg_hotplug_result_free(r);
	CHECK(!is_mounted(&p, "fakegpu0"));
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
}

TEST(hotplug_a_bind_mounted_node_cannot_take_another_mode)
{
	struct devcg_hotplug_device d = { 0 };
	struct devcg_error err = { 0 };
	char host[PATH_MAX], path[PATH_MAX];
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct snap before;
	struct pc p;

	pc_start(&p, true, BASE);
	snap_take(&p, &before);
	snprintf(host, sizeof(host), "%s/fakegpu0", p.host);
	snprintf(path, sizeof(path), "%s/fakegpu0", p.dev);
	d.host_path = host;
	d.path = path;
	d.set = DEVCG_HOTPLUG_SET_MODE;
	d.mode = 0600;
	o.pid = p.pid;
	CHECK_INT(devcg_attach(NULL, &d, 1, &o, NULL, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "host's node"), "%s", err.msg);
	check_unchanged(&p, &before);
}

TEST(hotplug_a_symbolic_link_on_the_way_is_refused_and_nothing_is_made_where_it_points)
{
	static const struct dev via = { "fakegpu0", "escape/fakegpu0" };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char link[PATH_MAX], outside[PATH_MAX];
	struct snap before, after;
	struct pc p;

	pc_start(&p, false, BASE);
	/* the container points dev/escape at a directory of the host's */
	snprintf(outside, sizeof(outside), "%s/outside", p.host);
	CHECK(!mkdir(outside, 0755));
	pc_path(&p, "escape", link, sizeof(link));
	CHECK(!symlink(outside, link));
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &via, 1, NULL, &r, &err), -ELOOP);
	CHECK_MSG(strstr(err.msg, "symbolic link"), "%s", err.msg);
	snprintf(outside + strlen(outside), sizeof(outside) - strlen(outside), "/fakegpu0");
	CHECK(access(outside, F_OK) && errno == ENOENT);
	snap_take(&p, &after);
	check_same(&before, &after);
	/* detach leaves it alone too */
	r = ok(false, &p, &via, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_KEPT);
	CHECK(strstr(r->entries[0].note, "symbolic link"));
	devcg_hotplug_result_free(r);
	snap_free(&before);
	snap_free(&after);
}

/* ---- 5. open holders --------------------------------------------------------------- */

TEST(hotplug_detach_lists_the_processes_that_hold_the_device_open)
{
	static const struct dev zero = { "zero", "zero" };
	struct devcg_hotplug_result *r;
	char path[PATH_MAX];
	int fd;
	struct pc p;

	pc_start(&p, false, BASE);
	devcg_hotplug_result_free(ok(true, &p, &zero, 1, NULL));
	snprintf(path, sizeof(path), "%s/zero", p.dev);
	fd = pc_request(&p, OP_HOLD, path);
	CHECK_MSG(fd >= 0, "open %s in the container: %s", path, strerror(-fd));
	r = ok(false, &p, &zero, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_REMOVED);
	CHECK_INT(r->entries[0].nholders, 1);
	CHECK_INT(r->entries[0].holders[0].pid, p.pid);
	CHECK_INT(r->entries[0].holders[0].fd, fd);
	devcg_hotplug_result_free(r);
	/* the kernel checks at open only: the open file still reads */
	CHECK_INT(pc_request(&p, OP_READ_HELD, NULL), 0);
	CHECK_INT(pc_open(&p, "zero"), ENOENT);
}

/* ---- 6. concurrency -------------------------------------------------------------- */

#define WORKERS 4
#define WORKER_CYCLES 25

struct worker {
	struct pc *p;
	int i;
};

/* Attach and detach fakegpuI, ending attached. */
static int worker(struct worker *w)
{
	char host[64], name[64];
	struct dev d = { host, name };
	struct devcg_hotplug_result *r;
	struct devcg_error err;

	snprintf(host, sizeof(host), "fakegpu%d", w->i);
	snprintf(name, sizeof(name), "w%d/fakegpu%d", w->i, w->i);
	for (int c = 0; c < WORKER_CYCLES; c++) {
		if (call(true, w->p, &d, 1, NULL, &r, &err) || call(false, w->p, &d, 1, NULL, &r, &err)) {
			fprintf(stderr, "    worker %d: %s\n", w->i, err.msg);
			return 1;
		}
		devcg_hotplug_result_free(r);
	}
	if (call(true, w->p, &d, 1, NULL, &r, &err)) {
		fprintf(stderr, "    worker %d: %s\n", w->i, err.msg);
		return 1;
	}
	devcg_hotplug_result_free(r);
	return 0;
}

TEST(hotplug_concurrent_attach_and_detach_of_different_devices_lose_nothing)
{
	pid_t pids[WORKERS];
	struct pc p;

	pc_start(&p, false, BASE);
	fflush(NULL);
	for (int i = 0; i < WORKERS; i++) {
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (!pids[i]) {
			struct worker w = { &p, i };

			_exit(worker(&w));
		}
	}
	for (int i = 0; i < WORKERS; i++)
		CHECK_INT(scratch_wait(pids[i]), 0);
	for (int i = 0; i < WORKERS; i++) {
		char name[64];

		snprintf(name, sizeof(name), "w%d/fakegpu%d", i, i);
		CHECK_MSG(own_access(&p, scratch_free_char_major(), (unsigned int)i) == DEVCG_ACC_ALL, "fakegpu%d lost", i);
		CHECK_INT(pc_open(&p, name), ENXIO);
	}
	/* the base policy too */
	CHECK_INT(own_access(&p, 1, 3), DEVCG_ACC_ALL);
}

static void *worker_thread(void *arg)
{
	return (void *)(intptr_t)worker(arg);
}

/* The same from threads of one process: each call's child shares the
 * process's memory and its thread's thread-local storage, and the spare
 * mapping goes from one call to the next across threads. */
TEST(hotplug_attach_and_detach_from_threads_at_once_lose_nothing)
{
	pthread_t t[WORKERS];
	struct worker w[WORKERS];
	struct pc p;

	pc_start(&p, false, BASE);
	for (int i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ &p, i };
		CHECK(!pthread_create(&t[i], NULL, worker_thread, &w[i]));
	}
	for (int i = 0; i < WORKERS; i++) {
		void *rc;

		CHECK(!pthread_join(t[i], &rc));
		CHECK_MSG(rc == NULL, "worker %d failed", i);
	}
	for (int i = 0; i < WORKERS; i++) {
		char name[64];

		snprintf(name, sizeof(name), "w%d/fakegpu%d", i, i);
		CHECK_MSG(own_access(&p, scratch_free_char_major(), (unsigned int)i) == DEVCG_ACC_ALL, "fakegpu%d lost", i);
		CHECK_INT(pc_open(&p, name), ENXIO);
	}
	CHECK_INT(own_access(&p, 1, 3), DEVCG_ACC_ALL);
}

/* Is SIG blocked on the calling thread? */
static bool blocked(int sig)
{
	sigset_t now;

	CHECK(!pthread_sigmask(SIG_SETMASK, NULL, &now));
	return sigismember(&now, sig) == 1;
}

/* A call blocks the calling thread's signals and disables its
 * cancellation while its child lives (nodes.h); after it, success or
 * failure, both are as they were. The control: the check sees a signal
 * blocked. */
TEST(hotplug_calls_leave_the_callers_signal_mask_and_cancel_state_as_they_were)
{
	static const struct dev d = { "fakegpu0", "fakegpu0" };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	sigset_t one, before;
	int state;
	struct pc p;

	pc_start(&p, false, BASE);
	sigemptyset(&one);
	sigaddset(&one, SIGUSR2);
	CHECK(!pthread_sigmask(SIG_SETMASK, &one, &before));
	CHECK(!pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL));
	CHECK(blocked(SIGUSR2) && !blocked(SIGUSR1) && !blocked(SIGTERM));
	devcg_hotplug_result_free(ok(true, &p, &d, 1, NULL));
	CHECK(blocked(SIGUSR2) && !blocked(SIGUSR1) && !blocked(SIGTERM) && !blocked(SIGCHLD));
	o.fail_at = "swap";
	CHECK_INT(call(false, &p, &d, 1, &o, &r, &err), -EIO);
	CHECK(blocked(SIGUSR2) && !blocked(SIGUSR1) && !blocked(SIGTERM) && !blocked(SIGCHLD));
	devcg_hotplug_result_free(ok(false, &p, &d, 1, NULL));
	CHECK(blocked(SIGUSR2) && !blocked(SIGUSR1) && !blocked(SIGTERM) && !blocked(SIGCHLD));
	CHECK(!pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &state));
	CHECK_INT(state, PTHREAD_CANCEL_ENABLE);
	CHECK(!pthread_sigmask(SIG_SETMASK, &before, NULL));
}

/* ---- 7. refusals ----------------------------------------------------------------- */

/* Wait until child PID has joined its scratch cgroup (scratch_spawn()
 * returns before) and, with NEWNS, has a mount namespace of its own: the
 * harness itself may be in the root cgroup. A hang guard only. */
static void wait_started(pid_t pid, bool newns)
{
	char path[64], line[4096], ns[64], own[64];
	bool ready = false;

	for (int i = 0; i < 10000 && !ready; i++) {
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
		f = fopen(path, "re");
		CHECK(f != NULL);
		while (fgets(line, sizeof(line), f) && strncmp(line, "0::", 3))
			;
		fclose(f);
		ready = strncmp(line, "0::", 3) || strcmp(line, "0::/\n");
		if (ready && newns) {
			ssize_t a, b;

			snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
			a = readlink(path, ns, sizeof(ns) - 1);
			b = readlink("/proc/self/ns/mnt", own, sizeof(own) - 1);
			ready = a > 0 && b > 0 && (a != b || memcmp(ns, own, (size_t)a));
		}
		if (!ready)
			usleep(1000);
	}
	CHECK_MSG(ready, "child %d did not start", (int)pid);
}

static int plain_child(void *arg)
{
	(void)arg;
	pause();
	return 0;
}

TEST(hotplug_refuses_a_process_in_devcgs_own_mount_namespace)
{
	char host[PATH_MAX], cg[PATH_MAX];
	struct devcg_hotplug_device d = { 0 };
	struct devcg_error err = { 0 };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	pid_t pid;

	if (geteuid() != 0 || !scratch_cgroup2_root())
		SKIP("needs root and cgroup2");
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!scratch_devdir_create(host, sizeof(host), (const struct scratch_node[]){ { "fakegpu0", 'c', 240, 0 } }, 1));
	pid = scratch_spawn(cg, plain_child, NULL);
	CHECK(pid > 0);
	wait_started(pid, false);
	snprintf(host + strlen(host), sizeof(host) - strlen(host), "/fakegpu0");
	d.host_path = host;
	d.path = "/dev/devcg-test-never";
	o.pid = pid;
	CHECK_INT(devcg_attach(NULL, &d, 1, &o, NULL, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "own mount namespace"), "%s", err.msg);
	CHECK(access("/dev/devcg-test-never", F_OK) && errno == ENOENT);
}

/* A container whose /dev is the host's (its mount namespace shares the
 * host's devtmpfs): nothing is made there. */
static int shared_dev_child(void *arg)
{
	(void)arg;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 1;
	pause();
	return 0;
}

TEST(hotplug_refuses_a_container_whose_dev_is_the_hosts)
{
	char host[PATH_MAX], cg[PATH_MAX], target[128];
	struct devcg_hotplug_device d = { 0 };
	struct devcg_error err = { 0 };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct stat st;
	pid_t pid;
	int ret;

	if (geteuid() != 0 || !scratch_cgroup2_root())
		SKIP("needs root and cgroup2");
	if (stat("/dev", &st))
		SKIP("no /dev here");
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!scratch_devdir_create(host, sizeof(host), (const struct scratch_node[]){ { "fakegpu0", 'c', 240, 0 } }, 1));
	pid = scratch_spawn(cg, shared_dev_child, NULL);
	CHECK(pid > 0);
	wait_started(pid, true);
	snprintf(host + strlen(host), sizeof(host) - strlen(host), "/fakegpu0");
	snprintf(target, sizeof(target), "/dev/devcg-test-%s-never", scratch_tag());
	d.host_path = host;
	d.path = target;
	o.pid = pid;
	ret = devcg_attach(NULL, &d, 1, &o, NULL, &err);
	/* should the guard ever fail, the node made in the host's /dev goes */
	if (!access(target, F_OK))
		unlink(target);
	CHECK_INT(ret, -EXDEV);
	CHECK_MSG(strstr(err.msg, "host's /dev"), "%s", err.msg);
}

TEST(hotplug_attach_by_pid_of_a_process_in_the_root_cgroup_says_so)
{
	char line[256] = "", host[PATH_MAX];
	struct devcg_hotplug_device d = { 0 };
	struct devcg_error err = { 0 };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	FILE *f;

	if (geteuid() != 0 || !scratch_cgroup2_root())
		SKIP("needs root and cgroup2");
	/* kthreadd: a process of the root cgroup, and no container */
	f = fopen("/proc/2/cgroup", "re");
	while (f && fgets(line, sizeof(line), f) && strncmp(line, "0::", 3))
		;
	if (f)
		fclose(f);
	if (strcmp(line, "0::/\n"))
		SKIP("process 2 is not in the root cgroup here");
	CHECK(!scratch_devdir_create(host, sizeof(host), (const struct scratch_node[]){ { "fakegpu0", 'c', 240, 0 } }, 1));
	snprintf(host + strlen(host), sizeof(host) - strlen(host), "/fakegpu0");
	d.host_path = host;
	d.path = "/dev/devcg-test-never";
	o.pid = 2;
	CHECK_INT(devcg_attach(NULL, &d, 1, &o, NULL, &err), -EPERM);
	CHECK_MSG(strstr(err.msg, "process 2 is in the root cgroup"), "%s", err.msg);
	CHECK_INT(devcg_detach(NULL, &d, 1, &o, NULL, &err), -EPERM);
	CHECK_MSG(strstr(err.msg, "process 2 is in the root cgroup"), "%s", err.msg);
}

TEST(hotplug_a_forced_bind_mount_says_it_was_asked_for)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r;
	struct pc p;

	pc_start(&p, false, BASE);
	o.method = DEVCG_HOTPLUG_BIND;
	r = ok(true, &p, &gpu0, 1, &o);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_BOUND);
	CHECK_MSG(r->entries[0].note && strstr(r->entries[0].note, "--method bind") &&
			  !strstr(r->entries[0].note, "nodev"),
		  "%s", r->entries[0].note ? r->entries[0].note : "(no note)");
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
}

/* Mount a read-only tmpfs at NAME (under its dev) in P's mount namespace. */
static void pc_mount_ro(struct pc *p, const char *name)
{
	char path[PATH_MAX], ns[64];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", p->dev, name);
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)p->pid);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		int fd = open(ns, O_RDONLY | O_CLOEXEC);

		if (fd < 0 || setns(fd, CLONE_NEWNS) || mkdir(path, 0755) ||
		    mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID, "mode=755,size=64k")) {
			fprintf(stderr, "    read-only mount at %s: %s\n", path, strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	CHECK_INT(scratch_wait(pid), 0);
}

TEST(hotplug_attach_where_a_directory_cannot_be_made_on_a_read_only_mount_says_so)
{
	static const struct dev deep = { "fakegpu0", "ro/dri/card0" };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	struct snap before;
	struct pc p;

	pc_start(&p, false, BASE);
	pc_mount_ro(&p, "ro");
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &deep, 1, NULL, &r, &err), -EROFS);
	CHECK_MSG(strstr(err.msg, strerror(EROFS)) && !strstr(err.msg, strerror(ENOENT)), "%s", err.msg);
	check_unchanged(&p, &before);
}

TEST(hotplug_attach_to_a_directory_of_the_container_says_it_is_no_device_node)
{
	static const struct dev whole = { "fakegpu0", "" };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	struct snap before;
	struct pc p;

	/* the container's dev itself (its directory is on the host node's
	 * file system here, as /dev's may be in a container) */
	pc_start(&p, false, BASE);
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &whole, 1, NULL, &r, &err), -EEXIST);
	CHECK_MSG(strstr(err.msg, "not a device node") && !strstr(err.msg, "host"), "%s", err.msg);
	check_unchanged(&p, &before);
}

/* ---- 7b. a hostile container: it changes its directories while devcg works ---- */

/* An attach or detach run in a forked process, so that the test can play
 * the container while devcg's child is stopped (fail_at "stop-STEP"). */
struct bg {
	pid_t pid;
	int out;
};

static void bg_start(struct bg *b, bool attach, struct pc *p, const struct dev *d, size_t n,
		     struct devcg_hotplug_opts *o)
{
	int fds[2];

	CHECK(!pipe2(fds, O_CLOEXEC));
	fflush(NULL);
	b->pid = fork();
	CHECK(b->pid >= 0);
	if (!b->pid) {
		struct devcg_hotplug_result *r = NULL;
		struct devcg_error err;
		int ret = call(attach, p, d, n, o, &r, &err);
		char msg[sizeof(err.msg) + 64];

		/* the result's first note after the error message */
		snprintf(msg, sizeof(msg), "%s", ret ? err.msg : r && r->count && r->entries[0].note ?
			 r->entries[0].note : "");
		if (write(fds[1], &ret, sizeof(ret)) != (ssize_t)sizeof(ret) ||
		    write(fds[1], msg, strlen(msg) + 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	b->out = fds[0];
}

/* The call's return value, and its error message (or first note) in MSG. */
static int bg_end(struct bg *b, char *msg, size_t size)
{
	size_t len = 0;
	ssize_t got;
	int ret;

	CHECK(read(b->out, &ret, sizeof(ret)) == (ssize_t)sizeof(ret));
	while (len + 1 < size && (got = read(b->out, msg + len, size - 1 - len)) > 0)
		len += (size_t)got;
	msg[len] = '\0';
	close(b->out);
	CHECK_INT(scratch_wait(b->pid), 0);
	return ret;
}

/* The child of PARENT that has stopped itself (state T in /proc/PID/stat). */
static pid_t stopped_child_of(pid_t parent)
{
	for (int tries = 0; tries < 60000; tries++) {
		DIR *d = opendir("/proc");
		struct dirent *e;
		pid_t found = 0;

		CHECK(d != NULL);
		while (!found && (e = readdir(d))) {
			char path[300], buf[512], *rp, state;
			int ppid;
			FILE *f;

			if (e->d_name[0] < '1' || e->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
			if (!(f = fopen(path, "re")))
				continue;
			if (fgets(buf, sizeof(buf), f) && (rp = strrchr(buf, ')')) &&
			    sscanf(rp + 1, " %c %d", &state, &ppid) == 2 && ppid == parent && state == 'T')
				found = (pid_t)atoi(e->d_name);
			fclose(f);
		}
		closedir(d);
		if (found)
			return found;
		usleep(1000);
	}
	test_fail(__FILE__, __LINE__, "no child of %d stopped itself", (int)parent);
}

/* A regular file on the host, mode 0600: what a container would like
 * devcg to chmod. */
static void victim_make(struct pc *p, char *path, size_t size)
{
	int fd;

	snprintf(path, size, "%s/victim", p->host);
	fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	CHECK(!chmod(path, 0600));
}

static mode_t mode_of(const char *path)
{
	struct stat st;

	CHECK(!lstat(path, &st));
	return st.st_mode & 07777;
}

TEST(hotplug_a_temporary_node_swapped_for_a_symlink_never_gets_its_mode_applied_to_the_target)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	char victim[PATH_MAX], tmp[64], tpath[PATH_MAX], lpath[PATH_MAX], msg[1024];
	struct snap before;
	struct bg b;
	pid_t child;
	struct pc p;

	pc_start(&p, false, BASE);
	victim_make(&p, victim, sizeof(victim));
	snap_take(&p, &before);
	/* devcg's child stops once the temporary node is made; meanwhile the
	 * container puts a symbolic link to the victim in its place */
	o.fail_at = "stop-mknod";
	bg_start(&b, true, &p, &gpu0, 1, &o);
	child = stopped_child_of(b.pid);
	snprintf(tmp, sizeof(tmp), ".devcg-hotplug-%d-0", (int)child);
	pc_path(&p, tmp, tpath, sizeof(tpath));
	pc_path(&p, ".evil", lpath, sizeof(lpath));
	CHECK(!symlink(victim, lpath) && !rename(lpath, tpath));
	CHECK(!kill(child, SIGCONT));
	CHECK_INT(bg_end(&b, msg, sizeof(msg)), -ESTALE);
	CHECK_MSG(strstr(msg, "replaced meanwhile") && strstr(msg, "as before"), "%s", msg);
	CHECK_INT(mode_of(victim), 0600);
	/* control: the link is there, and a chmod that follows it (as
	 * fchmodat(dfd, tmp, mode, 0) did) changes the victim */
	CHECK(!chmod(tpath, 0660));
	CHECK_INT(mode_of(victim), 0660);
	/* the container's own link aside, everything is as before */
	CHECK(!unlink(tpath));
	check_unchanged(&p, &before);
}

TEST(hotplug_an_inotify_racer_in_the_container_never_changes_the_mode_of_a_file_it_points_to)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char victim[PATH_MAX];
	int won = 0;
	struct pc p;

	pc_start(&p, false, BASE);
	victim_make(&p, victim, sizeof(victim));
	CHECK_INT(pc_request(&p, OP_RACE, victim), 0);
	for (int k = 0; k < 100; k++) {
		int ret = call(true, &p, &gpu0, 1, NULL, &r, &err);

		CHECK_MSG(ret == 0 || (ret == -ESTALE && strstr(err.msg, "replaced meanwhile")), "attach %d: %d: %s",
			  k, ret, err.msg);
		CHECK_INT(mode_of(victim), 0600);
		if (ret) {
			won++;
			continue;
		}
		devcg_hotplug_result_free(r);
		devcg_hotplug_result_free(ok(false, &p, &gpu0, 1, NULL));
	}
	printf("    the racer got its link in first %d times of 100; the victim stayed 0600\n", won);
}

TEST(hotplug_detach_unmounts_the_bound_node_of_the_directory_it_checked_not_where_a_symlink_points)
{
	static const struct dev ours = { "fakegpu0", "a/fakegpu0" }, other = { "fakegpu1", "b/fakegpu0" };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	char a[PATH_MAX], areal[PATH_MAX], msg[1024], ns[64];
	struct bg b;
	pid_t child, pid;
	struct pc p;

	pc_start(&p, true, BASE);
	devcg_hotplug_result_free(ok(true, &p, &ours, 1, NULL));
	devcg_hotplug_result_free(ok(true, &p, &other, 1, NULL));
	CHECK(is_mounted(&p, "a/fakegpu0") && is_mounted(&p, "b/fakegpu0"));
	/* devcg's child has opened dev/a and stops; the container swaps dev/a
	 * for a symbolic link to dev/b, whose fakegpu0 is another mount */
	o.fail_at = "stop-unlink";
	bg_start(&b, false, &p, &ours, 1, &o);
	child = stopped_child_of(b.pid);
	pc_path(&p, "a", a, sizeof(a));
	pc_path(&p, "a-real", areal, sizeof(areal));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		/* as the container's root: its /dev takes only its own ids */
		setfsgid((gid_t)atoi(USERNS_HOST_ID));
		setfsuid((uid_t)atoi(USERNS_HOST_ID));
		if (rename(a, areal) || symlink("b", a)) {
			fprintf(stderr, "    swap %s: %s\n", a, strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	CHECK_INT(scratch_wait(pid), 0);
	CHECK(!kill(child, SIGCONT));
	CHECK_MSG(bg_end(&b, msg, sizeof(msg)) == 0, "%s", msg);
	CHECK(!is_mounted(&p, "a-real/fakegpu0"));
	CHECK(is_mounted(&p, "b/fakegpu0"));
	CHECK_INT(pc_open(&p, "b/fakegpu0"), ENXIO);
	/* control: an unmount by the path string, in the container's mount
	 * namespace (as umount2(path, UMOUNT_NOFOLLOW) did), takes b's */
	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)p.pid);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		char path[PATH_MAX];
		int fd = open(ns, O_RDONLY | O_CLOEXEC);

		snprintf(path, sizeof(path), "%s/a/fakegpu0", p.dev);
		_exit(fd < 0 || setns(fd, CLONE_NEWNS) || umount2(path, MNT_DETACH | UMOUNT_NOFOLLOW) ? 1 : 0);
	}
	CHECK_INT(scratch_wait(pid), 0);
	CHECK(!is_mounted(&p, "b/fakegpu0"));
}

TEST(hotplug_bind_refuses_a_host_path_that_is_a_symbolic_link_and_changes_nothing)
{
	static const struct dev via = { "gpu-link", "fakegpu0" };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char link[PATH_MAX];
	struct snap before;
	struct pc p;

	pc_start(&p, true, BASE);
	snprintf(link, sizeof(link), "%s/gpu-link", p.host);
	CHECK(!symlink("fakegpu0", link));
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &via, 1, NULL, &r, &err), -ELOOP);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "symbolic link") && strstr(err.msg, "gpu-link"), "%s", err.msg);
	check_unchanged(&p, &before);
	/* control: the node itself is bound */
	r = ok(true, &p, &gpu0, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_BOUND);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
}

TEST(hotplug_bind_refuses_a_host_node_that_became_a_regular_file_and_changes_nothing)
{
	static const struct dev swapped = { "swap", "fakegpu0" };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	char host[PATH_MAX], file[PATH_MAX], msg[1024];
	struct snap before;
	struct bg b;
	pid_t child;
	int fd;
	struct pc p;

	pc_start(&p, true, BASE);
	snprintf(host, sizeof(host), "%s/swap", p.host);
	CHECK(!mknod(host, S_IFCHR | 0666, makedev(scratch_free_char_major(), 0)));
	snprintf(file, sizeof(file), "%s/secret", p.host);
	fd = open(file, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0 && write(fd, "secret\n", 7) == 7);
	close(fd);
	snap_take(&p, &before);
	/* checked as the device, then a root-only file in its place before
	 * devcg's child opens it */
	o.fail_at = "stop-tree";
	bg_start(&b, true, &p, &swapped, 1, &o);
	child = stopped_child_of(b.pid);
	CHECK(!rename(file, host));
	CHECK(!kill(child, SIGCONT));
	CHECK_INT(bg_end(&b, msg, sizeof(msg)), -ENODEV);
	CHECK_MSG(strstr(msg, "not the device node"), "%s", msg);
	check_unchanged(&p, &before);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
}

TEST(hotplug_attach_replaces_a_node_of_another_device_only_with_force)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct snap before;
	struct stat st;
	struct pc p;

	pc_start(&p, false, BASE);
	/* the container's null where a device is to go */
	pc_mknod(&p, "fakegpu0", 1, 3);
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &gpu0, 1, NULL, &r, &err), -EEXIST);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "another device, c 1:3") && strstr(err.msg, "force"), "%s", err.msg);
	check_unchanged(&p, &before);
	CHECK_INT(pc_open(&p, "fakegpu0"), 0);
	/* control: with force it is replaced, and says so */
	o.force = true;
	r = ok(true, &p, &gpu0, 1, &o);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REPLACED);
	CHECK(r->entries[0].note && strstr(r->entries[0].note, "replaced a node of c 1:3"));
	devcg_hotplug_result_free(r);
	CHECK(!pc_lstat(&p, "fakegpu0", &st) && major(st.st_rdev) == scratch_free_char_major());
}

TEST(hotplug_detach_removes_no_node_of_another_device_put_there_meanwhile)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	char msg[1024], other[PATH_MAX], path[PATH_MAX];
	struct stat st, was;
	struct bg b;
	pid_t child;
	struct pc p;

	pc_start(&p, false, BASE);
	devcg_hotplug_result_free(ok(true, &p, &gpu0, 1, NULL));
	/* looked at as the device; then the container puts its null there */
	o.fail_at = "stop-unlink";
	bg_start(&b, false, &p, &gpu0, 1, &o);
	child = stopped_child_of(b.pid);
	pc_mknod(&p, "null-to-be", 1, 3);
	pc_path(&p, "null-to-be", other, sizeof(other));
	pc_path(&p, "fakegpu0", path, sizeof(path));
	CHECK(!lstat(other, &was) && !rename(other, path));
	CHECK(!kill(child, SIGCONT));
	CHECK_INT(bg_end(&b, msg, sizeof(msg)), -ESTALE);
	CHECK_MSG(strstr(msg, "changed meanwhile") && strstr(msg, "as before"), "%s", msg);
	/* the very node it put there is back, and the permission untouched */
	CHECK(!lstat(path, &st));
	CHECK_INT(st.st_ino, was.st_ino);
	CHECK_INT(st.st_rdev, makedev(1, 3));
	CHECK_INT(own_access(&p, scratch_free_char_major(), 0), DEVCG_ACC_ALL);
	/* control: without the change, detach removes the device's node */
	CHECK(!unlink(path));
	pc_mknod(&p, "fakegpu0", scratch_free_char_major(), 0);
	devcg_hotplug_result_free(ok(false, &p, &gpu0, 1, NULL));
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
}

static size_t entries_in(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	CHECK(d != NULL);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return n;
}

/* This test's own mount namespace, so that what it mounts is gone with
 * it: devcg reads "the host's mounts" from init's and from its own. */
static void own_mount_namespace(void)
{
	CHECK(!unshare(CLONE_NEWNS));
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
}

TEST(hotplug_refuses_a_directory_on_a_file_system_the_host_has_mounted)
{
	static const struct dev shm = { "fakegpu0", "shm/fakegpu0" };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char host_shm[PATH_MAX];
	struct snap before;
	struct pc p;

	if (geteuid() != 0)
		SKIP("needs root");
	own_mount_namespace();
	/* a scratch tmpfs mounted on the host's side, as its /dev/shm */
	CHECK(!scratch_devdir_create(host_shm, sizeof(host_shm), (const struct scratch_node[]){ { 0 } }, 0));
	CHECK(!mount("tmpfs", host_shm, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m"));
	pc_start(&p, false, BASE);
	/* the container shares it (--ipc=host): bound on its dev/shm */
	CHECK_INT(pc_request(&p, OP_BIND, host_shm), 0);
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, &shm, 1, NULL, &r, &err), -EXDEV);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "host has mounted too") && strstr(err.msg, host_shm), "%s", err.msg);
	CHECK_INT(entries_in(host_shm), 0);
	check_unchanged(&p, &before);
	/* control: its own tmpfs takes the node */
	devcg_hotplug_result_free(ok(true, &p, &gpu0, 1, NULL));
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
}

/* The look at the host's mounts is made once per file system of a call:
 * a node in the container's own /dev first does not let a second node on
 * a file system the host has mounted through. */
TEST(hotplug_refuses_a_host_mounted_directory_after_a_node_in_the_containers_own_dev)
{
	static const struct dev two[2] = { { "fakegpu1", "fakegpu1" }, { "fakegpu0", "shm/fakegpu0" } };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char host_shm[PATH_MAX];
	struct snap before;
	struct pc p;

	if (geteuid() != 0)
		SKIP("needs root");
	own_mount_namespace();
	CHECK(!scratch_devdir_create(host_shm, sizeof(host_shm), (const struct scratch_node[]){ { 0 } }, 0));
	CHECK(!mount("tmpfs", host_shm, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m"));
	pc_start(&p, false, BASE);
	CHECK_INT(pc_request(&p, OP_BIND, host_shm), 0);
	snap_take(&p, &before);
	CHECK_INT(call(true, &p, two, 2, NULL, &r, &err), -EXDEV);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "host has mounted too") && strstr(err.msg, "shm/fakegpu0"), "%s", err.msg);
	CHECK_INT(entries_in(host_shm), 0);
	check_unchanged(&p, &before);
	/* control: the first node alone is attached */
	devcg_hotplug_result_free(ok(true, &p, two, 1, NULL));
	CHECK_INT(pc_open(&p, "fakegpu1"), ENXIO);
}

/*
 * A FUSE file system that answers until it is told to hang, then answers
 * nothing and reports each GETATTR it gets ('G' on REP): a stat() of one
 * of its files would block for ever.
 */
struct fuse_srv {
	pid_t pid;
	int ctl[2], rep[2];
	char dir[PATH_MAX];
};

static void fuse_reply(int fd, uint64_t unique, int error, const void *arg, size_t len)
{
	struct fuse_out_header h = { .len = (uint32_t)(sizeof(h) + len), .error = error, .unique = unique };
	struct iovec v[2] = { { &h, sizeof(h) }, { (void *)arg, len } };

	if (writev(fd, v, len ? 2 : 1) < 0) {
		/* the request was interrupted meanwhile */
	}
}

static void fuse_serve(int fd, int ctl, int rep)
{
	static char buf[1 << 17];
	bool hang = false;

	for (;;) {
		struct pollfd pf[2] = { { .fd = fd, .events = POLLIN }, { .fd = ctl, .events = POLLIN } };
		struct fuse_in_header *in = (void *)buf;
		ssize_t n;

		if (poll(pf, 2, -1) < 0)
			continue;
		if (pf[1].revents) {
			char c;

			if (read(ctl, &c, 1) == 1) {
				hang = true;
				if (write(rep, "S", 1) != 1)
					_exit(1);
			}
		}
		if (!pf[0].revents)
			continue;
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == ENODEV) /* unmounted */
			_exit(0);
		if (n < (ssize_t)sizeof(*in))
			continue;
		switch (in->opcode) {
		case FUSE_INIT: {
			struct fuse_init_in *ii = (void *)(in + 1);
			struct fuse_init_out io = { .major = FUSE_KERNEL_VERSION, .max_write = 4096 };

			io.minor = ii->minor < FUSE_KERNEL_MINOR_VERSION ? ii->minor : FUSE_KERNEL_MINOR_VERSION;
			io.max_readahead = ii->max_readahead;
			fuse_reply(fd, in->unique, 0, &io, sizeof(io));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out ao = { 0 };

			if (hang) {
				if (write(rep, "G", 1) != 1)
					_exit(1);
				break;
			}
			ao.attr.ino = 1;
			ao.attr.mode = S_IFDIR | 0755;
			ao.attr.nlink = 2;
			fuse_reply(fd, in->unique, 0, &ao, sizeof(ao));
			break;
		}
		case FUSE_OPENDIR: {
			struct fuse_open_out oo = { .fh = 1 };

			if (!hang)
				fuse_reply(fd, in->unique, 0, &oo, sizeof(oo));
			break;
		}
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
		case FUSE_INTERRUPT:
			break;
		default:
			if (!hang)
				fuse_reply(fd, in->unique, -ENOSYS, NULL, 0);
		}
	}
}

/* Mount it on a new scratch directory (in the test's own mount namespace). */
static void fuse_start(struct fuse_srv *s)
{
	char opts[128];
	int fd;

	CHECK(!scratch_devdir_create(s->dir, sizeof(s->dir), (const struct scratch_node[]){ { 0 } }, 0));
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		SKIP("no /dev/fuse: %s", strerror(errno));
	CHECK(!pipe2(s->ctl, O_CLOEXEC) && !pipe2(s->rep, O_CLOEXEC));
	fflush(NULL);
	s->pid = fork();
	CHECK(s->pid >= 0);
	if (!s->pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fuse_serve(fd, s->ctl[0], s->rep[1]);
		_exit(0);
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	CHECK_MSG(!mount("devcg-test", s->dir, "fuse", MS_NOSUID | MS_NODEV, opts), "mount fuse: %s",
		  strerror(errno));
	close(fd);
}

/* From now on, it answers nothing. */
static void fuse_hang(struct fuse_srv *s)
{
	char c;

	CHECK(write(s->ctl[1], "h", 1) == 1);
	CHECK(read(s->rep[0], &c, 1) == 1 && c == 'S');
}

/* Has it been sent a GETATTR since it hangs? */
static bool fuse_asked(struct fuse_srv *s)
{
	struct pollfd pf = { .fd = s->rep[0], .events = POLLIN };
	char c;

	return poll(&pf, 1, 0) == 1 && read(s->rep[0], &c, 1) == 1 && c == 'G';
}

TEST(hotplug_detach_finds_the_holders_without_asking_a_fuse_server_that_hangs)
{
	static const struct dev zero = { "zero", "zero" };
	struct devcg_hotplug_result *r;
	struct fuse_srv fs;
	char path[PATH_MAX], fdpath[64];
	struct stat st;
	int fd, held;
	pid_t pid;
	struct pc p;

	if (geteuid() != 0)
		SKIP("needs root");
	own_mount_namespace();
	fuse_start(&fs);
	pc_start(&p, false, BASE);
	devcg_hotplug_result_free(ok(true, &p, &zero, 1, NULL));
	snprintf(path, sizeof(path), "%s/zero", p.dev);
	fd = pc_request(&p, OP_HOLD, path);
	CHECK_MSG(fd >= 0, "open %s in the container: %s", path, strerror(-fd));
	/* the container also holds a directory of the FUSE mount, whose
	 * server then stops answering */
	held = pc_request(&p, OP_HOLD, fs.dir);
	CHECK_MSG(held >= 0, "open %s in the container: %s", fs.dir, strerror(-held));
	fuse_hang(&fs);
	r = ok(false, &p, &zero, 1, NULL);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].nholders, 1);
	CHECK_INT(r->entries[0].holders[0].fd, fd);
	CHECK_MSG(!r->entries[0].note || !strstr(r->entries[0].note, "more than listed"), "%s", r->entries[0].note);
	devcg_hotplug_result_free(r);
	CHECK_MSG(!fuse_asked(&fs), "detach asked the FUSE server about the container's open file");
	/* control: a stat() of that open file asks the server (and would wait
	 * for ever): the server gets the GETATTR; its death ends the wait */
	snprintf(fdpath, sizeof(fdpath), "/proc/%d/fd/%d", (int)p.pid, held);
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid)
		_exit(stat(fdpath, &st) ? 0 : 1);
	{
		struct pollfd pf = { .fd = fs.rep[0], .events = POLLIN };
		char c;

		CHECK(poll(&pf, 1, 60000) == 1 && read(fs.rep[0], &c, 1) == 1 && c == 'G');
	}
	CHECK(!kill(fs.pid, SIGKILL));
	CHECK_INT(scratch_wait(fs.pid), 128 + SIGKILL);
	CHECK_INT(scratch_wait(pid), 0);
}

TEST(hotplug_detach_whose_scan_of_open_files_is_stuck_ends_and_says_the_list_may_be_short)
{
	static const struct dev zero = { "zero", "zero" };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_hotplug_result *r;
	char path[PATH_MAX];
	int fd;
	struct pc p;

	pc_start(&p, false, BASE);
	devcg_hotplug_result_free(ok(true, &p, &zero, 1, NULL));
	snprintf(path, sizeof(path), "%s/zero", p.dev);
	fd = pc_request(&p, OP_HOLD, path);
	CHECK_MSG(fd >= 0, "open %s in the container: %s", path, strerror(-fd));
	/* the scan stops itself, as one stuck in a file system would */
	o.fail_at = "stop-holders";
	r = ok(false, &p, &zero, 1, &o);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_REMOVED);
	CHECK_INT(r->entries[0].nholders, 0);
	CHECK_MSG(r->entries[0].note && strstr(r->entries[0].note, "may be more than listed"), "%s",
		  r->entries[0].note ? r->entries[0].note : "(no note)");
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "zero"), ENOENT);
}

/* ---- 8. CDI: a device and its companions in one step ------------------------------ */

/* A spec of kind devcg.test/gpu in P->host/cdi: devices "0" and "1"
 * (fakegpu0, fakegpu1), and the common fakectl, fake-uvm (rw) and
 * fake-uvm-tools (mode 0640) that every device of the kind needs. */
static void cdi_spec(struct pc *p, char *dir, size_t size)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(dir, size, "%s/cdi", p->host);
	CHECK(!mkdir(dir, 0755));
	snprintf(path, sizeof(path), "%s/devcg-test.yaml", dir);
	f = fopen(path, "we");
	CHECK(f != NULL);
	fprintf(f,
		"cdiVersion: \"0.6.0\"\n"
		"kind: devcg.test/gpu\n"
		"devices:\n"
		"  - name: \"0\"\n"
		"    containerEdits:\n"
		"      deviceNodes:\n"
		"        - path: %s/fakegpu0\n"
		"          hostPath: %s/fakegpu0\n"
		"  - name: \"1\"\n"
		"    containerEdits:\n"
		"      deviceNodes:\n"
		"        - {path: %s/fakegpu1, hostPath: %s/fakegpu1}\n"
		"containerEdits:\n"
		"  env: [\"DEVCG_TEST=1\"]\n"
		"  deviceNodes:\n"
		"    - {path: %s/fakectl, hostPath: %s/fakectl}\n"
		"    - {path: %s/fake-uvm, hostPath: %s/fake-uvm, permissions: rw}\n"
		"    - path: %s/fake-uvm-tools\n"
		"      hostPath: %s/fake-uvm-tools\n"
		"      fileMode: 0640\n",
		p->dev, p->host, p->dev, p->host, p->dev, p->host, p->dev, p->host, p->dev, p->host);
	CHECK(!fclose(f));
}

static const char *const companions[3] = { "fakectl", "fake-uvm", "fake-uvm-tools" };

static int cdi_call(bool attach, struct pc *p, const char *dir, const char *const *names,
		    struct devcg_hotplug_result **r, struct devcg_error *err)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	const char *dirs[2] = { dir, NULL };

	o.pid = p->pid;
	o.cdi = names;
	o.cdi_spec_dirs = dirs;
	memset(err, 0, sizeof(*err));
	return attach ? devcg_attach(NULL, NULL, 0, &o, r, err) : devcg_detach(NULL, NULL, 0, &o, r, err);
}

TEST(hotplug_cdi_device_brings_its_four_nodes_allowed_in_one_swap)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char dir[PATH_MAX];
	struct snap s;
	struct stat st;
	uint32_t before;
	struct pc p;

	pc_start(&p, false, BASE);
	cdi_spec(&p, dir, sizeof(dir));
	snap_take(&p, &s);
	snap_free(&s);
	{
		struct devcg_state *state;

		CHECK(!devcg_state_read(p.cg, &state, NULL));
		before = devcg_state_own(state)->id;
		devcg_state_free(state);
	}
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
	CHECK_MSG(!cdi_call(true, &p, dir, (const char *[]){ "devcg.test/gpu=0", NULL }, &r, &err), "%s",
		  err.msg);
	CHECK_INT(r->count, 4);
	/* one swap, from the program that was there */
	CHECK_INT(r->replaced_id, before);
	for (size_t i = 0; i < 4; i++) {
		CHECK_INT(r->entries[i].node, DEVCG_NODE_MADE);
		CHECK_INT(r->entries[i].permission, DEVCG_PERM_ADDED);
		CHECK_STR(r->entries[i].cdi, "devcg.test/gpu=0");
	}
	CHECK_INT(r->entries[2].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	for (int i = 0; i < 3; i++)
		CHECK_INT(pc_open(&p, companions[i]), ENXIO);
	CHECK(!pc_lstat(&p, "fake-uvm-tools", &st));
	CHECK_INT(st.st_mode & 07777, 0640);
	CHECK_INT(own_access(&p, scratch_free_char_major(), 254), DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	/* control: the other device of the spec is not there */
	CHECK_INT(pc_open(&p, "fakegpu1"), ENOENT);
}

TEST(hotplug_cdi_unknown_device_is_a_clear_error_and_changes_nothing)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	struct snap before;
	char dir[PATH_MAX];
	struct pc p;

	pc_start(&p, false, BASE);
	cdi_spec(&p, dir, sizeof(dir));
	snap_take(&p, &before);
	CHECK_INT(cdi_call(true, &p, dir, (const char *[]){ "devcg.test/gpu=0", "devcg.test/gpu=7", NULL }, &r,
			   &err), -ENOENT);
	CHECK(r == NULL);
	CHECK_MSG(strstr(err.msg, "devcg.test/gpu=7 not found") && strstr(err.msg, "have 0, 1"), "%s", err.msg);
	CHECK_INT(cdi_call(true, &p, dir, (const char *[]){ "nope.test/x=0", NULL }, &r, &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "no spec of kind nope.test/x"), "%s", err.msg);
	check_unchanged(&p, &before);
}

TEST(hotplug_cdi_detach_keeps_the_common_nodes_while_another_device_of_the_spec_is_in)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char dir[PATH_MAX];
	struct pc p;

	pc_start(&p, false, BASE);
	cdi_spec(&p, dir, sizeof(dir));
	CHECK_MSG(!cdi_call(true, &p, dir, (const char *[]){ "devcg.test/gpu=0", "devcg.test/gpu=1", NULL }, &r,
			    &err), "%s", err.msg);
	CHECK_INT(r->count, 5);
	devcg_hotplug_result_free(r);
	CHECK_MSG(!cdi_call(false, &p, dir, (const char *[]){ "devcg.test/gpu=0", NULL }, &r, &err), "%s",
		  err.msg);
	CHECK_INT(r->count, 4);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_REMOVED);
	for (size_t i = 1; i < 4; i++) {
		CHECK_INT(r->entries[i].node, DEVCG_NODE_KEPT);
		CHECK_INT(r->entries[i].permission, DEVCG_PERM_KEPT);
		CHECK(strstr(r->entries[i].note, "devcg.test/gpu=1"));
	}
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
	CHECK_INT(pc_open(&p, "fakegpu1"), ENXIO);
	for (int i = 0; i < 3; i++)
		CHECK_INT(pc_open(&p, companions[i]), ENXIO);
	/* the last device goes: the common nodes with it */
	CHECK_MSG(!cdi_call(false, &p, dir, (const char *[]){ "devcg.test/gpu=1", NULL }, &r, &err), "%s",
		  err.msg);
	for (size_t i = 0; i < r->count; i++)
		CHECK_INT(r->entries[i].node, DEVCG_NODE_REMOVED);
	devcg_hotplug_result_free(r);
	for (int i = 0; i < 3; i++)
		CHECK_INT(pc_open(&p, companions[i]), ENOENT);
	CHECK_INT(own_access(&p, scratch_free_char_major(), 255), 0);
}

/* A spec file that cannot be used (here a FIFO, which blocked every
 * lookup) is skipped, and attach and detach name it in their result. */
TEST(hotplug_cdi_a_skipped_spec_file_is_named_in_the_result)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char dir[PATH_MAX], fifo[PATH_MAX + 16];
	struct pc p;

	pc_start(&p, false, BASE);
	cdi_spec(&p, dir, sizeof(dir));
	snprintf(fifo, sizeof(fifo), "%s/a.json", dir);
	CHECK(!mkfifo(fifo, 0644));
	alarm(60); /* a hang ends the test with SIGALRM */
	CHECK_MSG(!cdi_call(true, &p, dir, (const char *[]){ "devcg.test/gpu=0", NULL }, &r, &err), "%s",
		  err.msg);
	CHECK_MSG(r->entries[0].note && strstr(r->entries[0].note, "a.json: not a regular file"), "%s",
		  r->entries[0].note ? r->entries[0].note : "(no note)");
	CHECK(!r->entries[1].note || !strstr(r->entries[1].note, "a.json"));
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENXIO);
	CHECK_MSG(!cdi_call(false, &p, dir, (const char *[]){ "devcg.test/gpu=0", NULL }, &r, &err), "%s",
		  err.msg);
	alarm(0);
	CHECK_MSG(r->entries[0].note && strstr(r->entries[0].note, "a.json: not a regular file"), "%s",
		  r->entries[0].note ? r->entries[0].note : "(no note)");
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), ENOENT);
}

/* A spec of kind devcg.test/many in P->host/cdi-many: NDEV devices, each one
 * node P->dev/many-I, c MAJOR:I, given by numbers (no host node). */
static void cdi_many_spec(struct pc *p, char *dir, size_t size, int ndev)
{
	char path[PATH_MAX];
	FILE *f;

	snprintf(dir, size, "%s/cdi-many", p->host);
	CHECK(!mkdir(dir, 0755));
	snprintf(path, sizeof(path), "%s/many.yaml", dir);
	f = fopen(path, "we");
	CHECK(f != NULL);
	fprintf(f, "cdiVersion: \"0.6.0\"\nkind: devcg.test/many\ndevices:\n");
	for (int i = 0; i < ndev; i++)
		fprintf(f, "  - {name: \"%d\", containerEdits: {deviceNodes: [{path: %s/many-%d, type: c, "
			"major: %u, minor: %d}]}}\n", i, p->dev, i, scratch_free_char_major(), i);
	CHECK(!fclose(f));
}

/* 300 devices of one spec (no common nodes): detach of one looked at the
 * 299 others too, more than the 256 nodes of one command, and was refused
 * for ever after the attach succeeded. Detach takes back what attach gave. */
TEST(hotplug_cdi_a_device_of_a_spec_of_300_devices_is_attached_and_detached)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char dir[PATH_MAX];
	struct pc p;

	pc_start(&p, false, BASE);
	cdi_many_spec(&p, dir, sizeof(dir), 300);
	CHECK_MSG(!cdi_call(true, &p, dir, (const char *[]){ "devcg.test/many=7", NULL }, &r, &err), "%s",
		  err.msg);
	CHECK_INT(r->count, 1);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_MADE);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "many-7"), ENXIO);
	CHECK_MSG(!cdi_call(false, &p, dir, (const char *[]){ "devcg.test/many=7", NULL }, &r, &err), "%s",
		  err.msg);
	CHECK_INT(r->count, 1);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_REMOVED);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "many-7"), ENOENT);
	CHECK_INT(own_access(&p, scratch_free_char_major(), 7), 0);
}

/* CDI "permissions": "none" asks for no access: no rule is added and the
 * entry says "none" (it said "already" while the open got EPERM). The
 * device's other node, with the default rwm, is the control: allowed. */
TEST(hotplug_cdi_permissions_none_is_reported_as_none_and_its_open_is_refused)
{
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err;
	char dir[PATH_MAX], path[PATH_MAX];
	FILE *f;
	struct pc p;

	pc_start(&p, false, BASE);
	snprintf(dir, sizeof(dir), "%s/cdi-none", p.host);
	CHECK(!mkdir(dir, 0755));
	snprintf(path, sizeof(path), "%s/none.json", dir);
	f = fopen(path, "we");
	CHECK(f != NULL);
	fprintf(f, "{\"cdiVersion\": \"0.6.0\", \"kind\": \"devcg.test/none\", \"devices\": [{\"name\": \"0\", "
		"\"containerEdits\": {\"deviceNodes\": [{\"path\": \"%s/fakegpu0\", \"hostPath\": \"%s/fakegpu0\", "
		"\"permissions\": \"none\"}, {\"path\": \"%s/fakegpu1\", \"hostPath\": \"%s/fakegpu1\"}]}}]}\n",
		p.dev, p.host, p.dev, p.host);
	CHECK(!fclose(f));
	CHECK_MSG(!cdi_call(true, &p, dir, (const char *[]){ "devcg.test/none=0", NULL }, &r, &err), "%s",
		  err.msg);
	CHECK_INT(r->count, 2);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_MADE);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_NONE);
	CHECK_INT(r->entries[0].access, 0);
	CHECK_MSG(r->entries[0].note && strstr(r->entries[0].note, "\"none\""), "%s",
		  r->entries[0].note ? r->entries[0].note : "(no note)");
	CHECK_INT(r->entries[1].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(r);
	CHECK_INT(pc_open(&p, "fakegpu0"), EPERM);
	CHECK_INT(own_access(&p, scratch_free_char_major(), 0), 0);
	CHECK_INT(pc_open(&p, "fakegpu1"), ENXIO);
}

/* ---- 9. the CLI: -j output ---------------------------------------------------------- */

/* `devcg -j ARGS...`: its exit code; its standard output in OUT. */
static int devcg_cli(char *out, size_t size, const char *const args[])
{
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	CHECK(!pipe2(fds, O_CLOEXEC));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		const char *argv[32] = { devcg_bin(), "-j" };
		size_t k = 2;

		for (size_t i = 0; args[i] && k < 31; i++)
			argv[k++] = args[i];
		dup2(fds[1], 1);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while (len + 1 < size && (n = read(fds[0], out + len, size - 1 - len)) > 0)
		len += (size_t)n;
	out[len] = '\0';
	close(fds[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#define CLI(out, ...) devcg_cli(out, sizeof(out), (const char *const[]){ __VA_ARGS__, NULL })

TEST(hotplug_cli_attach_and_detach_print_each_device_with_what_was_done)
{
	char out[16384], pid[16], dir[PATH_MAX];
	json_t *o, *devs;
	struct pc p;

	if (access(devcg_bin(), X_OK))
		SKIP("%s is not built", devcg_bin());
	pc_start(&p, false, BASE);
	cdi_spec(&p, dir, sizeof(dir));
	snprintf(pid, sizeof(pid), "%d", (int)p.pid);
	CHECK_INT(CLI(out, "attach", "-p", pid, "--cdi", "devcg.test/gpu=1", "--cdi-spec-dir", dir), 0);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o != NULL, "not JSON: %s", out);
	CHECK_INT(jnum(o, "pid"), p.pid);
	/* a scratch cgroup is no systemd unit's: nothing to keep in step */
	CHECK(json_is_null(json_object_get(o, "systemd")));
	devs = json_object_get(o, "devices");
	CHECK_INT(json_array_size(devs), 4);
	CHECK_STR(jstr(json_array_get(devs, 0), "node"), "made");
	CHECK_STR(jstr(json_array_get(devs, 0), "permission"), "added");
	CHECK_STR(jstr(json_array_get(devs, 0), "mode"), "0660");
	CHECK_STR(jstr(json_array_get(devs, 0), "cdi"), "devcg.test/gpu=1");
	CHECK_INT(jnum(json_array_get(devs, 0), "gid"), VIDEO_GID);
	json_decref(o);
	CHECK_INT(pc_open(&p, "fakegpu1"), ENXIO);
	CHECK_INT(CLI(out, "detach", p.cg, "--no-systemd", "--cdi", "devcg.test/gpu=1", "--cdi-spec-dir", dir), 0);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o != NULL, "not JSON: %s", out);
	devs = json_object_get(o, "devices");
	CHECK_STR(jstr(json_array_get(devs, 3), "node"), "removed");
	CHECK_STR(jstr(json_array_get(devs, 3), "permission"), "removed");
	json_decref(o);
	CHECK_INT(pc_open(&p, "fakegpu1"), ENOENT);
	/* a failure is {"error", "errno"} and exit 1 */
	CHECK_INT(CLI(out, "attach", "-p", pid, "--cdi", "devcg.test/gpu=9", "--cdi-spec-dir", dir), 1);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o && strstr(jstr(o, "error"), "not found") && jnum(o, "errno") == ENOENT, "%s", out);
	json_decref(o);
}

/* `devcg ARGS...` (no -j): its exit code (128 + a signal that killed it);
 * its standard error in ERR. */
static int devcg_cli_err(char *err, size_t size, const char *const args[])
{
	int fds[2], status;
	size_t len = 0;
	ssize_t n;
	pid_t pid;

	CHECK(!pipe2(fds, O_CLOEXEC));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		const char *argv[32] = { devcg_bin() };
		size_t k = 1;
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		for (size_t i = 0; args[i] && k < 31; i++)
			argv[k++] = args[i];
		dup2(null, 1);
		dup2(fds[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while (len + 1 < size && (n = read(fds[0], err + len, size - 1 - len)) > 0)
		len += (size_t)n;
	err[len] = '\0';
	close(fds[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

#define CLI_ERR(err, ...) devcg_cli_err(err, sizeof(err), (const char *const[]){ __VA_ARGS__, NULL })

/* One line that says WHAT, exit 1: no crash. */
static void check_one_line(int status, const char *err, const char *what)
{
	CHECK_MSG(status == 1, "exit %d (128 + a signal: a crash): %s", status, err);
	CHECK_MSG(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
	CHECK_MSG(strstr(err, what), "no '%s' in: %s", what, err);
}

/* A container's file where attach needs a directory: ENOTDIR, for which
 * the CLI looks whether a CGROUP argument is a v1 directory; with -p PID
 * there is none. */
TEST(hotplug_cli_attach_by_pid_through_a_file_where_a_directory_belongs_fails_in_one_line)
{
	char err[4096], pid[16], host[PATH_MAX], file[PATH_MAX], arg[2 * PATH_MAX + 2];
	struct pc p;
	int fd;

	if (access(devcg_bin(), X_OK))
		SKIP("%s is not built", devcg_bin());
	pc_start(&p, false, BASE);
	snprintf(pid, sizeof(pid), "%d", (int)p.pid);
	/* `touch /dev/dri` in the container */
	pc_path(&p, "dri", file, sizeof(file));
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK_MSG(fd >= 0, "%s: %s", file, strerror(errno));
	close(fd);
	snprintf(host, sizeof(host), "%s/fakegpu0", p.host);
	snprintf(arg, sizeof(arg), "%s=%s/dri/card0", host, p.dev);
	check_one_line(CLI_ERR(err, "attach", "-p", pid, arg), err, "Not a directory");
	/* control: the same attach through a directory works */
	snprintf(arg, sizeof(arg), "%s=%s/card0", host, p.dev);
	CHECK_INT(CLI_ERR(err, "attach", "-p", pid, arg), 0);
}

TEST(hotplug_cli_attach_by_pid_with_a_file_as_cdi_spec_dir_fails_in_one_line)
{
	char err[4096], pid[16], file[PATH_MAX], dir[PATH_MAX];
	struct pc p;
	int fd;

	if (access(devcg_bin(), X_OK))
		SKIP("%s is not built", devcg_bin());
	pc_start(&p, false, BASE);
	snprintf(pid, sizeof(pid), "%d", (int)p.pid);
	snprintf(file, sizeof(file), "%s/not-a-dir", p.host);
	fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	close(fd);
	check_one_line(CLI_ERR(err, "attach", "-p", pid, "--cdi", "devcg.test/gpu=1", "--cdi-spec-dir", file),
		       err, "not-a-dir");
	check_one_line(CLI_ERR(err, "detach", "-p", pid, "--cdi", "devcg.test/gpu=1", "--cdi-spec-dir", file),
		       err, "not-a-dir");
	/* control: the spec's directory works */
	cdi_spec(&p, dir, sizeof(dir));
	CHECK_INT(CLI_ERR(err, "attach", "-p", pid, "--cdi", "devcg.test/gpu=1", "--cdi-spec-dir", dir), 0);
}

/* ---- 10. real runc and crun containers ----------------------------------------------- */

/* The host node /tmp/devcg-test-TAG-dev-XXX/fakegpu0 (mode MODE, group
 * video) for a real container, made at /dev/fakegpu0 there. */
struct rt_dev {
	char dir[PATH_MAX], host[PATH_MAX];
	struct devcg_hotplug_device d;
};

static void rt_dev_make(struct rt_dev *x, mode_t mode)
{
	memset(x, 0, sizeof(*x));
	CHECK(!scratch_devdir_create(x->dir, sizeof(x->dir),
				     (const struct scratch_node[]){ { "fakegpu0", 'c', scratch_free_char_major(), 0 } }, 1));
	snprintf(x->host, sizeof(x->host), "%s/fakegpu0", x->dir);
	CHECK(!chmod(x->host, mode) && !chown(x->host, 0, VIDEO_GID));
	x->d.host_path = x->host;
	x->d.path = "/dev/fakegpu0";
}

/* What opening PATH in the container gives: 0 or the errno. */
static int rt_open_path(struct ctr *c, const char *path)
{
	char out[4096], cmd[PATH_MAX];
	int rc;

	snprintf(cmd, sizeof(cmd), "head -c0 %s", path);
	rc = RT(c, out, "exec", c->id, "/bin/sh", "-c", cmd);

	if (rc == 0)
		return 0;
	if (strstr(out, "No such file or directory"))
		return ENOENT;
	if (strstr(out, "No such device or address"))
		return ENXIO;
	if (strstr(out, "Operation not permitted"))
		return EPERM;
	if (strstr(out, "Permission denied"))
		return EACCES;
	test_fail(__FILE__, __LINE__, "opening %s in the container: exit %d: %s", path, rc, out);
}

static int rt_open(struct ctr *c)
{
	return rt_open_path(c, "/dev/fakegpu0");
}

static pid_t rt_pid(struct ctr *c)
{
	char file[PATH_MAX + 32], buf[64];
	FILE *f;
	pid_t pid = 0;

	snprintf(file, sizeof(file), "%s/cgroup.procs", c->cg);
	f = fopen(file, "re");
	CHECK(f != NULL);
	if (fgets(buf, sizeof(buf), f))
		pid = (pid_t)atoi(buf);
	fclose(f);
	CHECK(pid > 0);
	return pid;
}

/* Install the container's own list (config.json) as a devcg policy (attach
 * without it reads the runtime's program: tests/kernel/test_progread.c). */
static void rt_adopt(struct ctr *c, struct rt_dev *x)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *pol = devcg_policy_new();
	struct devcg_error err = { 0 };
	char config[PATH_MAX + 16];

	(void)x;
	CHECK_INT(rt_open(c), ENOENT);
	snprintf(config, sizeof(config), "%s/config.json", c->dir);
	CHECK_MSG(!devcg_rules_parse_file(rules, config, NULL, &err) && !devcg_policy_apply_all(pol, rules, &err) &&
			  !devcg_replace(c->cg, pol, NULL, &err),
		  "%s", err.msg);
	devcg_rules_free(rules);
	devcg_policy_free(pol);
}

static unsigned int cycles(void)
{
	const char *env = getenv("DEVCG_HOTPLUG_CYCLES");

	return env && atoi(env) > 0 ? (unsigned int)atoi(env) : 1000;
}

static void runtime_hotplug(const char *rt)
{
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	struct devcg_hotplug_result *r;
	struct devcg_error err = { 0 };
	size_t i, changes = 0, gaps = 0;
	char path[PATH_MAX], out[4096];
	struct stat st, host;
	struct creader rd;
	struct tracer t;
	struct rt_dev x;
	struct ctr c;
	json_t *all, *o;
	uint32_t now;
	int rc;

	need(rt, V2);
	rt_dev_make(&x, 0660);
	ctr_start(&c, rt, V2);
	rt_adopt(&c, &x);

	/* control: a node the container makes itself (its list allows mknod
	 * of any char device) is refused at open */
	snprintf(path, sizeof(path), "%u", scratch_free_char_major());
	rc = RT(&c, out, "exec", c.id, "/bin/mknod", "/dev/fakegpu0", "c", path, "0");
	CHECK_MSG(rc == 0, "mknod in the container: %s", out);
	CHECK_INT(rt_open(&c), EPERM);
	rc = RT(&c, out, "exec", c.id, "/bin/sh", "-c", "rm /dev/fakegpu0");
	CHECK_MSG(rc == 0, "rm in the container: %s", out);
	CHECK_INT(rt_open(&c), ENOENT);
	/* with a real device its runtime does not allow: /dev/fuse (c 10:229),
	 * whose open succeeds; both in one swap */
	if (!stat("/dev/fuse", &host) && S_ISCHR(host.st_mode)) {
		struct devcg_hotplug_device both[2] = { x.d, { .host_path = "/dev/fuse" } };

		CHECK_INT(rt_open_path(&c, "/dev/fuse"), ENOENT);
		CHECK_MSG(!devcg_attach(c.cg, both, 2, NULL, &r, &err), "%s", err.msg);
		CHECK_INT(r->count, 2);
		CHECK_INT(r->entries[1].node, DEVCG_NODE_MADE);
		CHECK_INT(r->entries[1].permission, DEVCG_PERM_ADDED);
		devcg_hotplug_result_free(r);
		CHECK_INT(rt_open_path(&c, "/dev/fuse"), 0);
		CHECK_INT(rt_open(&c), ENXIO);
		snprintf(path, sizeof(path), "/proc/%d/root/dev/fuse", (int)rt_pid(&c));
		CHECK(!lstat(path, &st));
		CHECK_INT(st.st_mode, host.st_mode);
		CHECK_INT(st.st_rdev, host.st_rdev);
		CHECK_MSG(!devcg_detach(c.cg, both, 2, NULL, NULL, &err), "%s", err.msg);
		CHECK_INT(rt_open_path(&c, "/dev/fuse"), ENOENT);
		CHECK_INT(rt_open(&c), ENOENT);
	} else {
		printf("    note: no /dev/fuse here: the fake device only\n");
	}
	CHECK_MSG(!devcg_attach(c.cg, &x.d, 1, NULL, &r, &err), "%s", err.msg);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_MADE);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(r);
	CHECK_INT(rt_open(&c), ENXIO);
	snprintf(path, sizeof(path), "/proc/%d/root/dev/fakegpu0", (int)rt_pid(&c));
	CHECK(!lstat(path, &st) && !stat(x.host, &host));
	CHECK_INT(st.st_mode, host.st_mode);
	CHECK_INT(st.st_rdev, host.st_rdev);
	CHECK_INT(st.st_uid, host.st_uid);
	CHECK_INT(st.st_gid, VIDEO_GID);
	CHECK_MSG(!devcg_detach(c.cg, &x.d, 1, NULL, NULL, &err), "%s", err.msg);
	CHECK_INT(rt_open(&c), ENOENT);

	/* attach and detach under a reader of the container's other devices,
	 * with devcg trace watching */
	tracer_start(&t, &c);
	creader_start(&c, &rd);
	for (unsigned int k = 0; k < cycles(); k++) {
		CHECK_MSG(!devcg_attach(c.cg, &x.d, 1, NULL, NULL, &err), "cycle %u: %s", k, err.msg);
		CHECK_MSG(!devcg_detach(c.cg, &x.d, 1, NULL, NULL, &err), "cycle %u: %s", k, err.msg);
	}
	creader_stop(&rd, eperm, opens);
	CHECK(opens[0] > 100 && opens[1] > 100);
	CHECK_INT(eperm[0], 0);
	CHECK_INT(eperm[1], 0);

	/* control: a detach-then-attach of the program is a gap to the trace */
	{
		struct devcg_state *s;

		CHECK(!devcg_state_read(c.cg, &s, NULL));
		now = devcg_state_own(s)->id;
		devcg_state_free(s);
	}
	reattach_gap(c.cg, now);
	all = tracer_stop(&t);
	json_array_foreach(all, i, o) {
		const char *type = jstr(o, "type");

		if (!strcmp(type, "bpf_prog_change") && (pid_t)jnum(o, "pid") == getpid() &&
		    !strcmp(jstr(o, "op"), "prog_attach") && json_array_size(json_object_get(o, "prog_ids")) == 2)
			changes++;
		else if (!strcmp(type, "gap"))
			gaps++;
		else if (!strcmp(type, "open_denied"))
			test_fail(__FILE__, __LINE__, "a denied open: %s", jstr(o, "path"));
	}
	/* each attach and each detach is one BPF_F_REPLACE swap, and the only
	 * gap is the control's */
	CHECK_INT(changes, 2 * cycles());
	CHECK_INT(gaps, 1);
	json_decref(all);
	printf("    %u attach/detach cycles: the reader opened %llu + %llu times, 0 EPERM; no gap\n",
	       cycles(), opens[0], opens[1]);
	/* control: the same reader counts the EPERMs of a policy without urandom */
	creader_refused_control(&c);
	ctr_destroy(&c);
}

TEST(hotplug_runc_container_gets_the_device_and_a_reader_sees_no_eperm_over_the_cycles)
{
	runtime_hotplug("runc");
}

TEST(hotplug_crun_container_gets_the_device_and_a_reader_sees_no_eperm_over_the_cycles)
{
	runtime_hotplug("crun");
}

static void runtime_userns(const char *rt)
{
	struct devcg_hotplug_result *r;
	struct devcg_error err = { 0 };
	struct rt_dev x;
	struct ctr c;
	char out[4096];
	int rc;

	need(rt, V2);
	/* the container's root is host uid 100000: "other" may open it */
	rt_dev_make(&x, 0666);
	ctr_start_with(&c, rt, V2, &(struct bundle){ .userns = true });
	rt_adopt(&c, &x);
	CHECK_MSG(!devcg_attach(c.cg, &x.d, 1, NULL, &r, &err), "%s", err.msg);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_BOUND);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(r);
	CHECK_INT(rt_open(&c), ENXIO);
	rc = RT(&c, out, "exec", c.id, "/bin/sh", "-c", "cat /proc/self/mountinfo");
	CHECK_MSG(rc == 0 && strstr(out, " /dev/fakegpu0 "), "no mount on /dev/fakegpu0: %s", out);
	CHECK_MSG(!devcg_detach(c.cg, &x.d, 1, NULL, &r, &err), "%s", err.msg);
	CHECK_INT(r->entries[0].node, DEVCG_NODE_REMOVED);
	devcg_hotplug_result_free(r);
	CHECK_INT(rt_open(&c), ENOENT);
	/* control: a node made with mknod there cannot be opened */
	{
		DEVCG_OPTS(devcg_hotplug_opts, o);

		o.method = DEVCG_HOTPLUG_MKNOD;
		x.d.set = DEVCG_HOTPLUG_SET_UID | DEVCG_HOTPLUG_SET_GID;
		x.d.uid = x.d.gid = (uint32_t)atoi(USERNS_HOST_ID);
		CHECK_MSG(!devcg_attach(c.cg, &x.d, 1, &o, NULL, &err), "%s", err.msg);
		CHECK_INT(rt_open(&c), EACCES);
	}
	ctr_destroy(&c);
}

TEST(hotplug_runc_userns_container_gets_the_host_node_bind_mounted)
{
	runtime_userns("runc");
}

TEST(hotplug_crun_userns_container_gets_the_host_node_bind_mounted)
{
	runtime_userns("crun");
}

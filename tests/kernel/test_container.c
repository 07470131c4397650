// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Containers of a node agent (devcg_container_start(), _updated(),
 * _forget(), _find()) and hot-plug by container ID.
 *
 * The container: a child in a scratch cgroup with its own mount namespace
 * and a tmpfs on a scratch "ctr" directory (its /dev), which opens paths on
 * request. The devices: nodes of a char major no driver has (240 when
 * free), minors 1 to 4, made on the host; an open the device cgroup allows
 * fails with ENXIO (no driver), one it refuses with EPERM, so every
 * "allowed" below is an ENXIO that an EPERM shows could have been
 * otherwise. The runtime's program: a program in runc's or crun's shape
 * (readable by devcg, as theirs are), attached beside or in place of
 * devcg's as the runtimes do.
 */
#include "devcg.h"
#include "harness.h"
#include "run.h"
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

/* ---- the container ---------------------------------------------------------- */

struct ct {
	char cg[PATH_MAX];    /* its scratch cgroup */
	char host[PATH_MAX];  /* host nodes d1..d4: c FAKE:1..4 */
	char dev[PATH_MAX];   /* HOST/ctr: a tmpfs in its mount namespace */
	char state[PATH_MAX]; /* the agent's state directory */
	pid_t pid;
	int cmd[2], res[2];
};

static int ct_main(void *arg)
{
	struct ct *c = arg;
	char path[PATH_MAX];

	close(c->cmd[1]);
	close(c->res[0]);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", c->dev, "tmpfs", MS_NOSUID, "mode=755,size=1m"))
		return 12;
	if (write(c->res[1], "r", 1) != 1)
		return 14;
	while (read(c->cmd[0], path, sizeof(path)) == (ssize_t)sizeof(path) && path[0]) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), ret = fd < 0 ? errno : 0;

		if (fd >= 0)
			close(fd);
		if (write(c->res[1], &ret, sizeof(ret)) != (ssize_t)sizeof(ret))
			return 15;
	}
	return 0;
}

static void ct_start(struct ct *c)
{
	const struct scratch_node nodes[] = {
		{ "d1", 'c', scratch_free_char_major(), 1 }, { "d2", 'c', scratch_free_char_major(), 2 }, { "d3", 'c', scratch_free_char_major(), 3 }, { "d4", 'c', scratch_free_char_major(), 4 },
	};
	char r;

	if (geteuid() != 0)
		SKIP("needs root");
	if (!scratch_cgroup2_root())
		SKIP("no cgroup2 mount");
	memset(c, 0, sizeof(*c));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), c->cg, sizeof(c->cg)));
	CHECK(!scratch_devdir_create(c->host, sizeof(c->host), nodes, 4));
	snprintf(c->dev, sizeof(c->dev), "%s/ctr", c->host);
	CHECK(!mkdir(c->dev, 0755));
	snprintf(c->state, sizeof(c->state), "%s/state", c->host);
	CHECK(!pipe2(c->cmd, O_CLOEXEC) && !pipe2(c->res, O_CLOEXEC));
	c->pid = scratch_spawn(c->cg, ct_main, c);
	CHECK(c->pid > 0);
	close(c->cmd[0]);
	close(c->res[1]);
	CHECK_MSG(read(c->res[0], &r, 1) == 1 && r == 'r', "the container did not start: exit %d",
		  scratch_wait(c->pid));
}

/* open(2) of PATH from inside: 0 or errno. */
static int ct_open_path(struct ct *c, const char *path)
{
	char buf[PATH_MAX] = { 0 };
	int ret;

	snprintf(buf, sizeof(buf), "%s", path);
	CHECK(write(c->cmd[1], buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(read(c->res[0], &ret, sizeof(ret)) == (ssize_t)sizeof(ret));
	return ret;
}

/* open(2) of the host node dN from inside the container. */
static int ct_open(struct ct *c, int n)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/d%d", c->host, n);
	return ct_open_path(c, path);
}

/* The programs attached to the container's cgroup itself. */
static uint32_t ct_progs(struct ct *c, uint32_t ids[64])
{
	int fd = open(c->cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	__u32 cnt = 64, flags = 0;

	CHECK(fd >= 0);
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	return cnt;
}

/* ---- the runtime's program ---------------------------------------------------- */

#define I(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), .off = (o), .imm = (i) })

/* A program in runc's shape (the prologue, one block per device that
 * returns 1, 0 at the end) named NAME (its owner for devcg's reader: "runc"
 * or "crun" in it) that allows rwm of c MAJOR:MINOR for each of the N
 * pairs; its fd. */
static int runtime_prog(const char *name, const uint32_t (*devs)[2], size_t n)
{
	struct bpf_insn p[128];
	size_t k = 0;
	int fd;

	p[k++] = I(BPF_LDX | BPF_MEM | BPF_W, 2, 1, 0, 0);
	p[k++] = I(BPF_ALU | BPF_AND | BPF_K, 2, 0, 0, 0xffff);
	p[k++] = I(BPF_LDX | BPF_MEM | BPF_W, 3, 1, 0, 0);
	p[k++] = I(BPF_ALU | BPF_RSH | BPF_K, 3, 0, 0, 16);
	p[k++] = I(BPF_LDX | BPF_MEM | BPF_W, 4, 1, 4, 0);
	p[k++] = I(BPF_LDX | BPF_MEM | BPF_W, 5, 1, 8, 0);
	for (size_t i = 0; i < n; i++) {
		p[k++] = I(BPF_JMP | BPF_JNE | BPF_K, 2, 0, 4, DEVCG_CHAR);
		p[k++] = I(BPF_JMP | BPF_JNE | BPF_K, 4, 0, 3, (int32_t)devs[i][0]);
		p[k++] = I(BPF_JMP32 | BPF_JNE | BPF_K, 5, 0, 2, (int32_t)devs[i][1]);
		p[k++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 1);
		p[k++] = I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	}
	p[k++] = I(BPF_ALU64 | BPF_MOV | BPF_K, 0, 0, 0, 0);
	p[k++] = I(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
	fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, name, "GPL", p, k, NULL);
	CHECK_MSG(fd >= 0, "loading %s: %s", name, strerror(errno));
	return fd;
}

static uint32_t id_of(int fd)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	CHECK(!bpf_obj_get_info_by_fd(fd, &info, &len));
	return info.id;
}

/* The runtime's program attached beside what is there (runc at create);
 * with REPLACE, in place of the program of that id (crun 1.21's update). */
static uint32_t runtime_attach(struct ct *c, const char *name, uint32_t replace)
{
	const uint32_t devs[][2] = { { 1, 3 }, { scratch_free_char_major(), 1 } };
	int fd = runtime_prog(name, devs, 2), cfd = open(c->cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int old = replace ? bpf_prog_get_fd_by_id(replace) : -1;
	LIBBPF_OPTS(bpf_prog_attach_opts, o, .flags = BPF_F_ALLOW_MULTI | (replace ? BPF_F_REPLACE : 0),
		    .replace_prog_fd = old);
	uint32_t id;

	CHECK(cfd >= 0 && (!replace || old >= 0));
	CHECK_MSG(!bpf_prog_attach_opts(fd, cfd, BPF_CGROUP_DEVICE, &o), "attach: %s", strerror(errno));
	id = id_of(fd);
	close(fd);
	close(cfd);
	if (old >= 0)
		close(old);
	return id;
}

/* ---- the container as the runtime describes it --------------------------------- */

/* Its linux.devices: d1 at /dev/d1; its rules: deny all, allow c FAKE:1. */
static struct devcg_container_device ct_devices[1];
static struct devcg_container_rule ct_rules[2];

static void describe(struct ct *c, struct devcg_container *d, const char *id, int minor)
{
	ct_devices[0] = (struct devcg_container_device){ .path = "/dev/d", .type = 'c', .major = scratch_free_char_major(),
							 .minor = minor };
	ct_rules[0] = (struct devcg_container_rule){ .allow = false, .type = 'a', .major = -1, .minor = -1,
						     .access = "rwm" };
	ct_rules[1] = (struct devcg_container_rule){ .allow = true, .type = 'c', .major = scratch_free_char_major(),
						     .minor = minor, .access = "rwm" };
	memset(d, 0, sizeof(*d));
	d->sz = sizeof(*d);
	d->id = id;
	d->name = "ctr";
	d->pod_name = "pod";
	d->pod_namespace = "default";
	d->pid = c->pid;
	d->runtime_handler = "runc";
	d->ndevices = 1;
	d->devices = ct_devices;
	d->nrules = 2;
	d->rules = ct_rules;
}

static void opts_of(struct ct *c, struct devcg_container_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->state_dir = c->state;
}

static void start_ok(struct ct *c, const char *id, int minor, struct devcg_container_opts *o)
{
	struct devcg_container d;
	struct devcg_error err = { 0 };

	describe(c, &d, id, minor);
	opts_of(c, o);
	CHECK_MSG(!devcg_container_start(&d, o, &err), "%s", err.msg);
}

static void updated_ok(struct ct *c, const char *id, struct devcg_container_opts *o)
{
	struct devcg_container d;
	struct devcg_error err = { 0 };

	describe(c, &d, id, 1);
	opts_of(c, o);
	CHECK_MSG(!devcg_container_updated(&d, o, &err), "%s", err.msg);
}

/* The state files (ID.json) in the state directory; with ALL, every file. */
static int state_files(struct ct *c, bool all)
{
	DIR *d = opendir(c->state);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);

		n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		     (all || (l > 5 && !strcmp(e->d_name + l - 5, ".json")));
	}
	if (d)
		closedir(d);
	return n;
}

/* ---- start ---------------------------------------------------------------------- */

TEST(container_start_allows_the_containers_devices_and_refuses_others)
{
	struct devcg_container_opts o;
	struct ct c;

	ct_start(&c);
	/* control: without a policy both open (allowed, no driver) */
	CHECK_INT(ct_open(&c, 1), ENXIO);
	CHECK_INT(ct_open(&c, 2), ENXIO);
	start_ok(&c, "ctr1", 1, &o);
	CHECK(o.swapped);
	CHECK_INT(o.runtime_used, DEVCG_RUNTIME_RUNC);
	CHECK_INT(ct_open(&c, 1), ENXIO);
	CHECK_INT(ct_open(&c, 2), EPERM);
	/* runc's defaults are in the list: /dev/null opens */
	CHECK_INT(ct_open_path(&c, "/dev/null"), 0);
}

TEST(container_start_adopts_the_runtimes_program_leaving_one)
{
	struct devcg_container_opts o;
	uint32_t ids[64], runtime;
	struct ct c;

	ct_start(&c);
	runtime = runtime_attach(&c, "runc_dev", 0);
	/* control: the runtime's program is there, and refuses d2 */
	CHECK_INT(ct_progs(&c, ids), 1);
	CHECK_INT(ct_open(&c, 2), EPERM);
	start_ok(&c, "ctr1", 1, &o);
	CHECK(o.swapped);
	CHECK_INT(ct_progs(&c, ids), 1);
	CHECK_INT(ids[0], o.prog_id);
	CHECK(ids[0] != runtime);
	CHECK_INT(ct_open(&c, 1), ENXIO);
}

TEST(container_start_takes_the_runtime_from_its_program_when_the_handler_does_not_say)
{
	struct devcg_container_opts o;
	struct devcg_container d;
	struct devcg_error err = { 0 };
	struct ct c, c2;

	ct_start(&c);
	runtime_attach(&c, "crun_dev", 0);
	describe(&c, &d, "ctr1", 1);
	d.runtime_handler = "kata";
	opts_of(&c, &o);
	CHECK_MSG(!devcg_container_start(&d, &o, &err), "%s", err.msg);
	CHECK_INT(o.runtime_used, DEVCG_RUNTIME_CRUN);
	/* control: without a program of the runtime, runc's */
	ct_start(&c2);
	describe(&c2, &d, "ctr2", 1);
	d.runtime_handler = "kata";
	opts_of(&c2, &o);
	CHECK_MSG(!devcg_container_start(&d, &o, &err), "%s", err.msg);
	CHECK_INT(o.runtime_used, DEVCG_RUNTIME_RUNC);
}

TEST(container_start_twice_swaps_nothing_the_second_time)
{
	struct devcg_container_opts o1, o2;
	uint32_t ids[64];
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o1);
	CHECK(o1.swapped);
	start_ok(&c, "ctr1", 1, &o2);
	CHECK(!o2.swapped);
	CHECK_INT(o2.prog_id, o1.prog_id);
	CHECK_INT(ct_progs(&c, ids), 1);
	CHECK_INT(ids[0], o1.prog_id);
}

TEST(container_start_keeps_the_policy_of_devcgs_hook_filter)
{
	struct devcg_policy *hook = devcg_policy_new();
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	char text[128];
	struct ct c, c2;

	/* the hook's filter allows d3, which the runtime's list does not */
	snprintf(text, sizeof(text), "deny a\nallow c %u:1 rwm\nallow c %u:3 rwm\n", scratch_free_char_major(), scratch_free_char_major());
	CHECK(!devcg_rules_parse(rules, text, strlen(text), "hook", NULL, &err));
	CHECK(!devcg_policy_apply_all(hook, rules, &err));
	ct_start(&c);
	CHECK_MSG(!devcg_replace(c.cg, hook, NULL, &err), "%s", err.msg);
	start_ok(&c, "ctr1", 1, &o);
	CHECK(!o.swapped);
	CHECK_INT(ct_open(&c, 3), ENXIO);
	/* control: without the hook's filter, d3 is refused */
	ct_start(&c2);
	start_ok(&c2, "ctr2", 1, &o);
	CHECK_INT(ct_open(&c2, 3), EPERM);
	devcg_rules_free(rules);
	devcg_policy_free(hook);
}

TEST(container_start_with_its_state_present_reuses_the_remembered_policy)
{
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o);
	/* the runtime's program in place of devcg's: no filter of devcg's left */
	runtime_attach(&c, "runc_dev", o.prog_id);
	/* the agent restarts; the runtime now describes d3 */
	start_ok(&c, "ctr1", 3, &o);
	CHECK(o.swapped);
	CHECK_INT(ct_open(&c, 1), ENXIO);
	CHECK_INT(ct_open(&c, 3), EPERM);
	/* control: forgotten, the same start installs what it describes */
	CHECK_MSG(!devcg_container_forget("ctr1", &o, &err), "%s", err.msg);
	runtime_attach(&c, "runc_dev", o.prog_id);
	start_ok(&c, "ctr1", 3, &o);
	CHECK_INT(ct_open(&c, 1), EPERM);
	CHECK_INT(ct_open(&c, 3), ENXIO);
}

/* ---- updated -------------------------------------------------------------------- */

TEST(container_updated_puts_the_policy_back_after_the_runtime_replaced_it)
{
	struct devcg_container_opts o;
	uint32_t ids[64], runtime;
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o);
	/* nothing changed: nothing swapped */
	updated_ok(&c, "ctr1", &o);
	CHECK(!o.swapped);
	runtime = runtime_attach(&c, "crun_dev", o.prog_id);
	/* control: the runtime's program refuses /dev/zero, which runc's list allows */
	CHECK_INT(ct_open_path(&c, "/dev/zero"), EPERM);
	updated_ok(&c, "ctr1", &o);
	CHECK(o.swapped);
	CHECK_INT(o.replaced_id, runtime);
	CHECK_INT(ct_progs(&c, ids), 1);
	CHECK_INT(ids[0], o.prog_id);
	CHECK_INT(ct_open_path(&c, "/dev/zero"), 0);
	CHECK_INT(ct_open(&c, 2), EPERM);
	updated_ok(&c, "ctr1", &o);
	CHECK(!o.swapped);
}

TEST(container_updated_without_state_is_enoent)
{
	struct devcg_container_opts o;
	struct devcg_container d;
	struct devcg_error err = { 0 };
	struct ct c;

	ct_start(&c);
	describe(&c, &d, "never", 1);
	opts_of(&c, &o);
	CHECK_INT(devcg_container_updated(&d, &o, &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "never"), "%s", err.msg);
	/* control: with its state it succeeds */
	start_ok(&c, "never", 1, &o);
	CHECK_MSG(!devcg_container_updated(&d, &o, &err), "%s", err.msg);
}

/* ---- forget and find ---------------------------------------------------------------- */

TEST(container_forget_removes_its_state)
{
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	char cg[4096];
	int32_t pid = 0;
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o);
	/* control: it is found while remembered */
	CHECK_MSG(!devcg_container_find("ctr1", c.state, &pid, cg, sizeof(cg), &err), "%s", err.msg);
	CHECK_INT(pid, c.pid);
	CHECK(state_files(&c, false) == 1);
	CHECK_MSG(!devcg_container_forget("ctr1", &o, &err), "%s", err.msg);
	CHECK_INT(state_files(&c, true), 0);
	CHECK_INT(devcg_container_find("ctr1", c.state, &pid, cg, sizeof(cg), &err), -ENOENT);
	/* again: there is none, which is no error */
	CHECK_MSG(!devcg_container_forget("ctr1", &o, &err), "%s", err.msg);
}

TEST(container_find_refuses_a_pid_that_left_the_cgroup)
{
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	char cg[4096], other[PATH_MAX], pid_text[32];
	int32_t pid = 0;
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o);
	CHECK_MSG(!devcg_container_find("ctr1", c.state, &pid, cg, sizeof(cg), &err), "%s", err.msg);
	CHECK_INT(pid, c.pid);
	CHECK_MSG(strstr(cg, o.cgroup) && !strcmp(cg + strlen(cg) - strlen(o.cgroup), o.cgroup), "%s %s", cg, o.cgroup);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), other, sizeof(other)));
	snprintf(pid_text, sizeof(pid_text), "%d", (int)c.pid);
	CHECK(!scratch_cgroup_write(other, "cgroup.procs", pid_text));
	CHECK_INT(devcg_container_find("ctr1", c.state, &pid, cg, sizeof(cg), &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "no longer in its cgroup"), "%s", err.msg);
}

/* ---- bad input ------------------------------------------------------------------------ */

TEST(container_a_bad_id_is_einval_and_nothing_is_written)
{
	char long_id[200];
	struct devcg_container_opts o;
	struct devcg_container d;
	struct devcg_error err = { 0 };
	uint32_t ids[64];
	struct ct c;

	memset(long_id, 'a', sizeof(long_id) - 1);
	long_id[sizeof(long_id) - 1] = '\0';
	ct_start(&c);
	CHECK(!mkdir(c.state, 0700));
	opts_of(&c, &o);
	describe(&c, &d, "../x", 1);
	CHECK_INT(devcg_container_start(&d, &o, &err), -EINVAL);
	describe(&c, &d, long_id, 1);
	CHECK_INT(devcg_container_start(&d, &o, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "longer than"), "%s", err.msg);
	CHECK_INT(state_files(&c, true), 0);
	CHECK_INT(ct_progs(&c, ids), 0);
	/* control: a good one writes its state and installs */
	long_id[128] = '\0';
	describe(&c, &d, long_id, 1);
	CHECK_MSG(!devcg_container_start(&d, &o, &err), "%s", err.msg);
	CHECK_INT(state_files(&c, false), 1);
	CHECK_INT(ct_progs(&c, ids), 1);
}

TEST(container_a_corrupt_state_file_is_an_error_naming_it_and_changes_nothing)
{
	struct devcg_container_opts o;
	struct devcg_container d;
	struct devcg_error err = { 0 };
	char file[PATH_MAX];
	uint32_t ids[64];
	FILE *f;
	struct ct c;

	ct_start(&c);
	CHECK(!mkdir(c.state, 0700));
	snprintf(file, sizeof(file), "%s/ctr1.json", c.state);
	f = fopen(file, "w");
	CHECK(f && fputs("{\"version\": 1, \"id\": \"ctr1\", \"policy\": [\"allow q\"", f) >= 0);
	fclose(f);
	describe(&c, &d, "ctr1", 1);
	opts_of(&c, &o);
	CHECK_INT(devcg_container_start(&d, &o, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, file), "%s", err.msg);
	CHECK_INT(ct_progs(&c, ids), 0);
	CHECK_INT(ct_open(&c, 2), ENXIO);
	/* a symbolic link in its place is refused too, not followed */
	CHECK(!unlink(file));
	CHECK(!symlink("/etc/hostname", file));
	CHECK(devcg_container_start(&d, &o, &err) < 0);
	CHECK_MSG(strstr(err.msg, "symbolic link"), "%s", err.msg);
	CHECK_INT(ct_progs(&c, ids), 0);
	/* control: without it, the start succeeds */
	CHECK(!unlink(file));
	CHECK_MSG(!devcg_container_start(&d, &o, &err), "%s", err.msg);
	CHECK_INT(ct_progs(&c, ids), 1);
}

/* ---- hot-plug by container ID ------------------------------------------------------------ */

static int hotplug(bool attach, struct ct *c, const char *id, struct devcg_error *err)
{
	char host[PATH_MAX], path[PATH_MAX];
	struct devcg_hotplug_device dev = { .host_path = host, .path = path };
	DEVCG_OPTS(devcg_hotplug_opts, o, .container = id, .state_dir = c->state);
	struct devcg_hotplug_result *r = NULL;
	int ret;

	snprintf(host, sizeof(host), "%s/d2", c->host);
	snprintf(path, sizeof(path), "%s/d2", c->dev);
	ret = attach ? devcg_attach(NULL, &dev, 1, &o, &r, err) : devcg_detach(NULL, &dev, 1, &o, &r, err);
	if (!ret) {
		CHECK_INT(r->pid, c->pid);
		devcg_hotplug_result_free(r);
	}
	return ret;
}

TEST(container_attach_by_id_is_recorded_and_updated_puts_it_back_and_detach_forgets_it)
{
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	char node[PATH_MAX];
	uint32_t ids[64];
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o);
	snprintf(node, sizeof(node), "%s/d2", c.dev);
	/* control: d2 is refused, and has no node in the container */
	CHECK_INT(ct_open(&c, 2), EPERM);
	CHECK_MSG(!hotplug(true, &c, "ctr1", &err), "%s", err.msg);
	CHECK_INT(ct_open_path(&c, node), ENXIO);
	/* the runtime's update revokes it */
	runtime_attach(&c, "crun_dev", 0 /* beside */);
	CHECK_INT(ct_open_path(&c, node), EPERM);
	updated_ok(&c, "ctr1", &o);
	CHECK(o.swapped);
	CHECK_INT(ct_open_path(&c, node), ENXIO);
	/* detached by id, an update does not bring it back */
	CHECK_MSG(!hotplug(false, &c, "ctr1", &err), "%s", err.msg);
	CHECK_INT(ct_open(&c, 2), EPERM);
	CHECK_INT(ct_progs(&c, ids), 1);
	runtime_attach(&c, "crun_dev", ids[0]);
	updated_ok(&c, "ctr1", &o);
	CHECK(o.swapped);
	CHECK_INT(ct_open(&c, 2), EPERM);
	CHECK_INT(ct_open(&c, 1), ENXIO);
}

TEST(container_attach_by_an_unknown_id_is_enoent_and_changes_nothing)
{
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o);
	CHECK_INT(hotplug(true, &c, "ctr2", &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "ctr2"), "%s", err.msg);
	CHECK_INT(ct_open(&c, 2), EPERM);
	/* control: by its own id it works */
	CHECK_MSG(!hotplug(true, &c, "ctr1", &err), "%s", err.msg);
	CHECK_INT(ct_open(&c, 2), ENXIO);
}

/* ---- the CLI ------------------------------------------------------------------------------ */

/* Run the devcg binary with ARGV (NULL-terminated, after "devcg"); its
 * standard output in OUT; its exit status. */
static int run_devcg(const char *const *args, char *out, size_t size)
{
	const char *bin = test_devcg_bin();
	char *argv[16];
	int n = 0, ret;

	argv[n++] = (char *)bin;
	while (*args && n < 15)
		argv[n++] = (char *)*args++;
	argv[n] = NULL;
	if (access(bin, X_OK))
		SKIP("%s is not built", bin);
	ret = test_run_capture(argv, out, size);
	CHECK(ret >= 0);
	return ret;
}

TEST(container_cli_attach_by_id_prints_the_container_and_updated_puts_it_back)
{
	struct devcg_container_opts o;
	char dev[2 * PATH_MAX + 2], node[PATH_MAX], out[8192], pid[32];
	struct ct c;

	ct_start(&c);
	start_ok(&c, "ctr1", 1, &o);
	snprintf(node, sizeof(node), "%s/d2", c.dev);
	snprintf(dev, sizeof(dev), "%s/d2=%s", c.host, node);
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	/* control: --container with -p is a usage error, and changes nothing */
	CHECK_INT(run_devcg((const char *[]){ "attach", "--container", "ctr1", "-p", pid, "--state-dir", c.state,
					      dev, NULL }, out, sizeof(out)), 2);
	CHECK_INT(ct_open(&c, 2), EPERM);
	CHECK_INT(run_devcg((const char *[]){ "attach", "-j", "--container", "ctr1", "--state-dir", c.state, dev,
					      NULL }, out, sizeof(out)), 0);
	CHECK_MSG(strstr(out, "\"container\":\"ctr1\"") && strstr(out, "\"permission\":\"added\""), "%s", out);
	CHECK_INT(ct_open_path(&c, node), ENXIO);
	runtime_attach(&c, "crun_dev", 0);
	CHECK_INT(ct_open_path(&c, node), EPERM);
	updated_ok(&c, "ctr1", &o);
	CHECK_INT(ct_open_path(&c, node), ENXIO);
	CHECK_INT(run_devcg((const char *[]){ "detach", "--container", "ctr1", "--state-dir", c.state, dev, NULL },
			    out, sizeof(out)), 0);
	CHECK_MSG(strstr(out, "container ctr1: "), "%s", out);
	CHECK_INT(ct_open(&c, 2), EPERM);
}

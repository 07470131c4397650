// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg doctor on pseudo-containers: a process in a scratch cgroup with its
 * own mount namespace, its own tmpfs on /dev and on /dev/shm (nodes made
 * there by the test through /proc/PID/root), and a devcg policy. Each
 * fault is prepared alone and doctor must name it and nothing else (each is
 * the control that doctor can speak); the healthy container is the control
 * that it can be silent. Where doctor says a node cannot be opened, the
 * container's own open(2) says so too.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "runtime.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a pseudo-container ----------------------------------------------------- */

struct dc {
	char cg[PATH_MAX]; /* its scratch cgroup v2 cgroup */
	char v1[PATH_MAX]; /* its scratch v1 devices cgroup ("" none) */
	bool userns;
	pid_t pid;
	int cmd[2], res[2];
};

static int dc_main(void *arg)
{
	struct dc *c = arg;
	char path[PATH_MAX], pid[32];

	close(c->cmd[1]);
	close(c->res[0]);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (c->v1[0] && scratch_cgroup_write(c->v1, "cgroup.procs", pid))
		return 10;
	if (c->userns) {
		char ok;

		if (unshare(CLONE_NEWUSER))
			return 11;
		if (write(c->res[1], "u", 1) != 1 || read(c->cmd[0], &ok, 1) != 1)
			return 12;
		if (setresgid(0, 0, 0) || setresuid(0, 0, 0))
			return 13;
	}
	/* its own mount namespace, its own /dev and /dev/shm */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 14;
	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID, "mode=755,size=1m") || mkdir("/dev/shm", 01777) ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1m"))
		return 15;
	if (write(c->res[1], "r", 1) != 1)
		return 16;
	/* open(2) of each path asked, until the pipe closes */
	while (read(c->cmd[0], path, sizeof(path)) == (ssize_t)sizeof(path)) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), ret = fd < 0 ? errno : 0;

		if (fd >= 0)
			close(fd);
		if (write(c->res[1], &ret, sizeof(ret)) != (ssize_t)sizeof(ret))
			return 17;
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

/* A pseudo-container with POLICY (rules text) installed by devcg; V1: its
 * v1 devices cgroup gets V1 (devices.deny 'a', then allows), NULL none. */
static void dc_start(struct dc *c, bool userns, const char *policy, const char *v1_allow)
{
	struct devcg_error err = { 0 };
	struct devcg_policy *pol;
	char ch;

	need_v2();
	memset(c, 0, sizeof(*c));
	c->userns = userns;
	if (v1_allow) {
		if (!scratch_devices_root())
			SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
		CHECK(!scratch_cgroup_create(scratch_devices_root(), c->v1, sizeof(c->v1)));
		CHECK(!scratch_cgroup_write(c->v1, "devices.deny", "a"));
		CHECK(!scratch_cgroup_write(c->v1, "devices.allow", v1_allow));
	}
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), c->cg, sizeof(c->cg)));
	CHECK(!pipe2(c->cmd, O_CLOEXEC) && !pipe2(c->res, O_CLOEXEC));
	c->pid = scratch_spawn(c->cg, dc_main, c);
	CHECK(c->pid > 0);
	close(c->cmd[0]);
	close(c->res[1]);
	if (userns) {
		CHECK(read(c->res[0], &ch, 1) == 1 && ch == 'u');
		write_map(c->pid, "uid_map");
		write_map(c->pid, "gid_map");
		CHECK(write(c->cmd[1], "m", 1) == 1);
	}
	CHECK_MSG(read(c->res[0], &ch, 1) == 1 && ch == 'r', "the pseudo-container did not start: exit %d",
		  scratch_wait(c->pid));
	pol = policy_of(policy);
	CHECK_MSG(!devcg_replace(c->cg, pol, NULL, &err), "%s", err.msg);
	devcg_policy_free(pol);
}

static void dc_stop(struct dc *c)
{
	close(c->cmd[1]);
	CHECK_INT(scratch_wait(c->pid), 0);
	close(c->res[0]);
}

/* The container's open(2) of PATH: 0 or errno. */
static int dc_open(struct dc *c, const char *path)
{
	char buf[PATH_MAX] = "";
	int ret;

	snprintf(buf, sizeof(buf), "%s", path);
	CHECK(write(c->cmd[1], buf, sizeof(buf)) == (ssize_t)sizeof(buf));
	CHECK(read(c->res[0], &ret, sizeof(ret)) == (ssize_t)sizeof(ret));
	return ret;
}

/* The host's path of the container's PATH (absolute, in its /dev). */
static void dc_path(struct dc *c, const char *path, char *buf, size_t size)
{
	snprintf(buf, size, "/proc/%d/root%s", (int)c->pid, path);
}

/* mknod PATH in the container's /dev (as its root, in a user-namespaced
 * one: its tmpfs takes only the ids mapped there). */
static void dc_mknod(struct dc *c, const char *path, unsigned int maj, unsigned int min)
{
	char host[PATH_MAX];
	pid_t pid;

	dc_path(c, path, host, sizeof(host));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (!pid) {
		if (c->userns) {
			struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
			struct __user_cap_data_struct data[2];

			setfsgid((gid_t)atoi(USERNS_HOST_ID));
			setfsuid((uid_t)atoi(USERNS_HOST_ID));
			if (!syscall(SYS_capget, &hdr, data)) {
				data[0].effective = data[0].permitted;
				data[1].effective = data[1].permitted;
				syscall(SYS_capset, &hdr, data);
			}
		}
		if (mknod(host, S_IFCHR | 0666, makedev(maj, min)) || chmod(host, 0666)) {
			fprintf(stderr, "    mknod %s: %s\n", host, strerror(errno));
			_exit(1);
		}
		_exit(0);
	}
	CHECK_INT(scratch_wait(pid), 0);
}

static struct devcg_doctor_result *doctor(struct dc *c)
{
	DEVCG_OPTS(devcg_doctor_opts, o, .pid = c->pid);
	struct devcg_doctor_result *r = NULL;
	struct devcg_error err = { 0 };

	CHECK_MSG(!devcg_doctor(NULL, &o, &r, &err), "%s", err.msg);
	return r;
}

/* The findings' ids, space-separated ("" for none). */
static const char *ids(const struct devcg_doctor_result *r)
{
	static char buf[4096];
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->nfindings && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%s", i ? " " : "", r->findings[i].id);
	return buf;
}

/* Every finding, for a failure message. */
static const char *all(const struct devcg_doctor_result *r)
{
	static char buf[16384];
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < r->nfindings && off < sizeof(buf); i++)
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, "\n  %s: %s (fix: %s)", r->findings[i].id,
					r->findings[i].message, r->findings[i].fix);
	return buf;
}

static const struct devcg_doctor_node *node(const struct devcg_doctor_result *r, const char *path)
{
	for (size_t i = 0; i < r->nnodes; i++)
		if (!strcmp(r->nodes[i].path, path))
			return &r->nodes[i];
	return NULL;
}

/* ---- devcg, as a command -------------------------------------------------- */

static int devcg_run(char *out, size_t size, const char *const args[])
{
	const char *bin = getenv("DEVCG") ? getenv("DEVCG") : "build/devcg";
	int fds[2], st;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	CHECK(!pipe2(fds, O_CLOEXEC));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		const char *argv[32] = { bin };
		size_t k = 1;

		for (size_t i = 0; args[i] && k < 31; i++)
			argv[k++] = args[i];
		dup2(fds[1], 1);
		dup2(fds[1], 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fds[1]);
	while (n + 1 < size && (r = read(fds[0], out + n, size - n - 1)) > 0)
		n += (size_t)r;
	out[n] = '\0';
	close(fds[0]);
	CHECK(waitpid(pid, &st, 0) == pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

#define DEVCG(out, ...) devcg_run(out, sizeof(out), (const char *const[]){ __VA_ARGS__, NULL })

/* ---- the tests ---------------------------------------------------------------- */

#define BASE "deny a\nallow c 1:3 rwm\nallow c 1:5 rwm\n"

TEST(doctor_a_healthy_container_has_no_finding_and_exits_0)
{
	struct devcg_doctor_result *r;
	const struct devcg_doctor_node *n;
	char out[65536], pid[32];
	struct dc c;

	dc_start(&c, false, BASE, NULL);
	dc_mknod(&c, "/dev/null", 1, 3);
	dc_mknod(&c, "/dev/zero", 1, 5);
	r = doctor(&c);
	CHECK_MSG(r->nfindings == 0, "findings:%s", all(r));
	/* it looked: both nodes, made by mknod, allowed rwm by devcg's program */
	CHECK_INT(r->nlayers, 1);
	CHECK_STR(r->layers[0].kind, "v2");
	CHECK_STR(r->layers[0].owner, "devcg");
	n = node(r, "/dev/null");
	CHECK(n && n->present && n->type == DEVCG_CHAR && n->major == 1 && n->minor == 3);
	CHECK(!n->bind_mounted && n->mode == 0666);
	CHECK(n->allowed[0] == 1 && n->allowed[1] == 1 && n->allowed[2] == 1);
	CHECK(node(r, "/dev/zero") != NULL);
	CHECK(!r->userns);
	devcg_doctor_result_free(r);
	/* the command: exit 0, says so; -j parses with no finding */
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	CHECK_INT(DEVCG(out, "doctor", "-p", pid), 0);
	CHECK_MSG(strstr(out, "no findings") && strstr(out, "/dev/null"), "%s", out);
	CHECK_INT(DEVCG(out, "doctor", "-j", "-p", pid), 0);
	{
		json_error_t je;
		json_t *o = json_loads(out, 0, &je);

		CHECK_MSG(o && json_array_size(json_object_get(o, "findings")) == 0 &&
				  json_array_size(json_object_get(o, "nodes")) == 2, "%s", out);
		json_decref(o);
	}
	dc_stop(&c);
}

TEST(doctor_a_node_present_but_refused_is_found_and_the_container_cannot_open_it)
{
	struct devcg_doctor_result *r;
	char out[65536], pid[32], fix[64];
	struct dc c;

	dc_start(&c, false, BASE, NULL);
	dc_mknod(&c, "/dev/null", 1, 3);
	dc_mknod(&c, "/dev/x", scratch_free_char_major(), 0);
	r = doctor(&c);
	CHECK_MSG(!strcmp(ids(r), "node-refused"), "findings:%s", all(r));
	CHECK_STR(r->findings[0].path, "/dev/x");
	snprintf(fix, sizeof(fix), "'c %u:0 rw'", scratch_free_char_major());
	CHECK_MSG(strstr(r->findings[0].fix, "devcg allow '") && strstr(r->findings[0].fix, c.cg) &&
			  strstr(r->findings[0].fix, fix), "%s (cgroup %s)", r->findings[0].fix, c.cg);
	devcg_doctor_result_free(r);
	/* the kernel agrees: the container's open is refused */
	CHECK_INT(dc_open(&c, "/dev/x"), EPERM);
	snprintf(pid, sizeof(pid), "%d", (int)c.pid);
	CHECK_INT(DEVCG(out, "doctor", "-p", pid), 1);
	CHECK_MSG(strstr(out, "node-refused: /dev/x") && strstr(out, "fix: devcg allow"), "%s", out);
	/* the fix it names works: doctor is silent after it, the open passes the cgroup */
	{
		char rule[64];

		snprintf(rule, sizeof(rule), "c %u:0 rw", scratch_free_char_major());
		CHECK_INT(DEVCG(out, "allow", c.cg, rule), 0);
	}
	r = doctor(&c);
	CHECK_MSG(r->nfindings == 0, "findings:%s", all(r));
	devcg_doctor_result_free(r);
	CHECK_INT(dc_open(&c, "/dev/x"), ENXIO);
	dc_stop(&c);
}

TEST(doctor_a_device_allowed_but_absent_is_found)
{
	struct devcg_doctor_result *r;
	char policy[256];
	struct dc c;

	snprintf(policy, sizeof(policy), BASE "allow c %u:7 rw\n", scratch_free_char_major());
	dc_start(&c, false, policy, NULL);
	dc_mknod(&c, "/dev/null", 1, 3);
	dc_mknod(&c, "/dev/zero", 1, 5);
	r = doctor(&c);
	CHECK_MSG(!strcmp(ids(r), "allowed-absent"), "findings:%s", all(r));
	CHECK(r->findings[0].type == DEVCG_CHAR && r->findings[0].major == scratch_free_char_major() &&
	      r->findings[0].minor == 7 && r->findings[0].path[0] == '\0');
	CHECK_INT(r->findings[0].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	devcg_doctor_result_free(r);
	/* control: its node made, doctor is silent */
	dc_mknod(&c, "/dev/x7", scratch_free_char_major(), 7);
	r = doctor(&c);
	CHECK_MSG(r->nfindings == 0, "findings:%s", all(r));
	devcg_doctor_result_free(r);
	dc_stop(&c);
}

TEST(doctor_a_gpu_without_its_companion_is_found)
{
	struct devcg_doctor_result *r;
	struct dc c;

	/* fake numbers: NVIDIA's 195:0 (GPU) and 195:255 (nvidiactl) */
	dc_start(&c, false, BASE "allow c 195:0 rw\nallow c 195:255 rw\n", NULL);
	dc_mknod(&c, "/dev/null", 1, 3);
	dc_mknod(&c, "/dev/zero", 1, 5);
	dc_mknod(&c, "/dev/nvidia0", 195, 0);
	dc_mknod(&c, "/dev/nvidiactl", 195, 255);
	r = doctor(&c);
	CHECK_MSG(!strcmp(ids(r), "companion-missing"), "findings:%s", all(r));
	CHECK_STR(r->findings[0].path, "/dev/nvidia0");
	CHECK_MSG(strstr(r->findings[0].message, "/dev/nvidia-uvm") &&
			  strstr(r->findings[0].fix, "devcg attach") && strstr(r->findings[0].fix, "/dev/nvidia-uvm"),
		  "%s / %s", r->findings[0].message, r->findings[0].fix);
	devcg_doctor_result_free(r);
	/* the GPU named alone: its companions are still looked for in the whole /dev */
	{
		const char *named[] = { "/dev/nvidia0", NULL };
		DEVCG_OPTS(devcg_doctor_opts, o, .pid = c.pid, .devices = named);
		struct devcg_error err = { 0 };

		CHECK_MSG(!devcg_doctor(NULL, &o, &r, &err), "%s", err.msg);
		CHECK_INT(r->nnodes, 1);
		CHECK_MSG(!strcmp(ids(r), "companion-missing") && strstr(r->findings[0].message, "/dev/nvidia-uvm"),
			  "findings:%s", all(r));
		devcg_doctor_result_free(r);
	}
	dc_stop(&c);
}

TEST(doctor_v1_refusing_what_the_device_programs_allow_is_found_on_a_hybrid_host)
{
	struct devcg_doctor_result *r;
	char policy[256], acc[8];
	struct dc c;

	snprintf(policy, sizeof(policy), BASE "allow c %u:0 rw\n", scratch_free_char_major());
	dc_start(&c, false, policy, "c 1:3 rwm");
	CHECK(!scratch_cgroup_write(c.v1, "devices.allow", "c 1:5 rwm"));
	dc_mknod(&c, "/dev/null", 1, 3);
	dc_mknod(&c, "/dev/zero", 1, 5);
	dc_mknod(&c, "/dev/x", scratch_free_char_major(), 0);
	r = doctor(&c);
	CHECK_MSG(r->v1_cgroup[0] && strstr(c.v1, r->v1_cgroup), "v1 cgroup '%s' (made %s)", r->v1_cgroup, c.v1);
	CHECK_INT(r->nlayers, 2);
	CHECK_STR(r->layers[0].kind, "v1");
	CHECK_MSG(!strcmp(ids(r), "v1-v2-differ"), "findings:%s", all(r));
	CHECK_STR(r->findings[0].path, "/dev/x");
	CHECK_INT(r->findings[0].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	snprintf(acc, sizeof(acc), "%u:0 rw", scratch_free_char_major());
	CHECK_MSG(strstr(r->findings[0].fix, acc), "%s", r->findings[0].fix);
	devcg_doctor_result_free(r);
	/* the kernel agrees: v1 refuses the open that the program allows */
	CHECK_INT(dc_open(&c, "/dev/x"), EPERM);
	/* the fix it names (a rule for both layers) works: doctor is silent, the open passes */
	{
		char rule[64], out[8192];

		snprintf(rule, sizeof(rule), "c %u:0 rw", scratch_free_char_major());
		CHECK_INT(DEVCG(out, "allow", c.cg, rule), 0);
	}
	r = doctor(&c);
	CHECK_MSG(r->nfindings == 0, "findings:%s", all(r));
	devcg_doctor_result_free(r);
	CHECK_INT(dc_open(&c, "/dev/x"), ENXIO);
	dc_stop(&c);
}

TEST(doctor_a_mknod_node_in_a_user_namespaced_container_is_noted_and_cannot_be_opened)
{
	struct devcg_doctor_result *r;
	char policy[256];
	struct dc c;
	int e;

	snprintf(policy, sizeof(policy), BASE "allow c %u:0 rw\n", scratch_free_char_major());
	dc_start(&c, true, policy, NULL);
	dc_mknod(&c, "/dev/x", scratch_free_char_major(), 0);
	r = doctor(&c);
	CHECK(r->userns);
	CHECK_MSG(!strcmp(ids(r), "userns-mknod"), "findings:%s", all(r));
	CHECK_STR(r->findings[0].path, "/dev/x");
	devcg_doctor_result_free(r);
	/* the note is true: allowed by the cgroup, the node still does not open */
	e = dc_open(&c, "/dev/x");
	CHECK_MSG(e == EACCES || e == EPERM, "open: %s", strerror(e));
	dc_stop(&c);
}

TEST(doctor_does_not_follow_a_symbolic_link_in_the_containers_dev)
{
	struct scratch_node host[] = { { "hostx", 'c', 0, 9 } };
	struct devcg_doctor_result *r;
	const char *named[] = { "/dev/evil/hostx", "/dev/evilnode", NULL };
	char dir[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
	struct devcg_error err = { 0 };
	struct stat st;
	struct dc c;

	host[0].major = scratch_free_char_major();
	dc_start(&c, false, BASE, NULL);
	dc_mknod(&c, "/dev/null", 1, 3);
	dc_mknod(&c, "/dev/zero", 1, 5);
	/* a host directory holding a node, and links to it in the container's /dev */
	CHECK(!scratch_devdir_create(dir, sizeof(dir), host, 1));
	dc_path(&c, "/dev/evil", link, sizeof(link));
	CHECK(!symlink(dir, link));
	snprintf(target, sizeof(target), "%s/hostx", dir);
	dc_path(&c, "/dev/evilnode", link, sizeof(link));
	CHECK(!symlink(target, link));
	/* control: through the links, the host's node is there */
	dc_path(&c, "/dev/evil/hostx", link, sizeof(link));
	CHECK(!stat(link, &st) && S_ISCHR(st.st_mode) && major(st.st_rdev) == scratch_free_char_major());
	r = doctor(&c);
	CHECK_MSG(r->nfindings == 0, "findings:%s", all(r));
	for (size_t i = 0; i < r->nnodes; i++)
		CHECK_MSG(r->nodes[i].major != scratch_free_char_major() && strncmp(r->nodes[i].path, "/dev/evil", 9),
			  "doctor followed a link to %s", r->nodes[i].path);
	devcg_doctor_result_free(r);
	/* named through the links: no node there for doctor */
	{
		DEVCG_OPTS(devcg_doctor_opts, o, .pid = c.pid, .devices = named);

		CHECK_MSG(!devcg_doctor(NULL, &o, &r, &err), "%s", err.msg);
	}
	CHECK_INT(r->nnodes, 2);
	CHECK(!r->nodes[0].present && !r->nodes[1].present);
	devcg_doctor_result_free(r);
	scratch_devdir_remove(dir);
	dc_stop(&c);
}

TEST(doctor_exits_2_on_an_error_with_one_line)
{
	char out[4096];

	need_v2();
	CHECK_INT(DEVCG(out, "doctor", "/nonexistent-devcg-doctor-cgroup"), 2);
	CHECK_MSG(strchr(out, '\n') == out + strlen(out) - 1 && strstr(out, "devcg doctor: "), "%s", out);
	CHECK_INT(DEVCG(out, "doctor", "--container", "no-such-devcg-container"), 2);
	CHECK_MSG(strstr(out, "no-such-devcg-container") && strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
}

/*
 * --container ID on a real runc or crun container (tests/runtime.h), found
 * by its id in the runtime's state directory (--runtime-root: the tests'
 * runtimes keep theirs apart from /run/runc and /run/crun). Healthy as the
 * runtime made it: no finding (the control that doctor can be silent);
 * then a node made in it of a device the runtime's program refuses:
 * node-refused alone, as the container's own open says, also with -j.
 */
static void doctor_container(const char *rt)
{
	char out[65536], root[PATH_MAX], rule[64], want[64];
	DEVCG_OPTS(devcg_doctor_opts, o);
	struct devcg_doctor_result *r = NULL;
	struct devcg_error err = { 0 };
	unsigned int fake;
	json_error_t je;
	json_t *j, *f;
	struct ctr c;

	need(rt, V2);
	fake = scratch_free_char_major();
	ctr_start(&c, rt, V2);
	snprintf(root, sizeof(root), "%s/state", c.dir);
	/* healthy: nothing to say */
	CHECK_INT(DEVCG(out, "doctor", "--container", c.id, "--runtime-root", root), 0);
	CHECK_MSG(strstr(out, "no findings") && strstr(out, "/dev/null") && strstr(out, rt), "%s", out);
	/* control: elsewhere than its runtime's state directory it is not found */
	CHECK_INT(DEVCG(out, "doctor", "--container", c.id), 2);
	CHECK_MSG(strstr(out, c.id) && strstr(out, "--runtime-root"), "%s", out);

	/* a node the runtime's program refuses: the container cannot open it */
	snprintf(rule, sizeof(rule), "mknod /dev/x c %u 0 && head -c0 /dev/x", fake);
	CHECK_INT(RT(&c, out, "exec", c.id, "/bin/sh", "-c", rule), 1);
	CHECK_MSG(strstr(out, "/dev/x: Operation not permitted"), "%s", out);
	o.container = c.id;
	o.runtime_root = root;
	CHECK_MSG(!devcg_doctor(NULL, &o, &r, &err), "%s", err.msg);
	CHECK_MSG(!strcmp(ids(r), "node-refused"), "findings:%s", all(r));
	CHECK_STR(r->findings[0].path, "/dev/x");
	CHECK_STR(r->cgroup, c.rel);
	CHECK_INT(r->nlayers, 1);
	CHECK_STR(r->layers[0].owner, rt);
	devcg_doctor_result_free(r);
	CHECK_INT(DEVCG(out, "doctor", "--container", c.id, "--runtime-root", root), 1);
	snprintf(want, sizeof(want), "'c %u:0 rw'", fake);
	CHECK_MSG(strstr(out, "node-refused: /dev/x") && strstr(out, want), "%s", out);
	CHECK_INT(DEVCG(out, "doctor", "-j", "--container", c.id, "--runtime-root", root, "/dev/x"), 1);
	j = json_loads(out, 0, &je);
	CHECK_MSG(j, "not JSON: %s", out);
	CHECK_STR(json_string_value(json_object_get(j, "cgroup")), c.rel);
	CHECK_INT(json_array_size(json_object_get(j, "findings")), 1);
	f = json_array_get(json_object_get(j, "findings"), 0);
	CHECK_STR(json_string_value(json_object_get(f, "finding")), "node-refused");
	CHECK_STR(json_string_value(json_object_get(f, "path")), "/dev/x");
	CHECK_INT(json_integer_value(json_object_get(f, "major")), fake);
	json_decref(j);
	ctr_destroy(&c);
}

TEST(doctor_by_runc_container_id_finds_a_refused_node_and_nothing_on_a_healthy_one)
{
	doctor_container("runc");
}

TEST(doctor_by_crun_container_id_finds_a_refused_node_and_nothing_on_a_healthy_one)
{
	doctor_container("crun");
}

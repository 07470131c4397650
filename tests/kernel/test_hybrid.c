// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Hybrid hosts (cgroup v1 controllers beside a cgroup2 mount): both layers
 * decide every open, the device programs on the unified hierarchy and the
 * v1 devices controller (security/device_cgroup.c runs the BPF programs,
 * then the v1 check; either refusal is EPERM). A process in a scratch v2
 * cgroup and in a scratch v1 devices cgroup that denies c MAJ:0 stands for
 * a container that runc or crun made on such a host; MAJ is a char major
 * without a driver, so an allowed open of its node fails with ENXIO and a
 * refused one with EPERM. Each test has a control where only v2 is
 * changed and v1 still refuses.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

/* the v1 list a runtime writes for a container: deny all, allow /dev/null */
#define V1_BASE "deny a\nallow c 1:3 rwm\n"

static void need_hybrid(void)
{
	if (geteuid() != 0)
		SKIP("needs root");
	if (!scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	if (!scratch_cgroup2_root())
		SKIP("no cgroup2 mount beside the v1 devices controller");
}

/* ---- a pseudo-container in both layers ------------------------------------ */

struct hy {
	char v1[PATH_MAX];  /* its scratch v1 devices cgroup */
	char v2[PATH_MAX];  /* its scratch cgroup v2 cgroup */
	char dir[PATH_MAX]; /* host nodes: x (c MAJ:0), null; ctr/: its own tmpfs */
	char ctr[PATH_MAX];
	pid_t pid;
	int cmd[2], res[2];
};

static int hy_main(void *arg)
{
	struct hy *h = arg;
	char path[PATH_MAX], pid[32];

	close(h->cmd[1]);
	close(h->res[0]);
	/* into the v1 devices cgroup as well, as a runtime's container */
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (scratch_cgroup_write(h->v1, "cgroup.procs", pid))
		return 10;
	/* its own mount namespace and its own tmpfs where attach puts nodes */
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 11;
	if (mount("tmpfs", h->ctr, "tmpfs", MS_NOSUID, "mode=755,size=1m"))
		return 12;
	if (write(h->res[1], "r", 1) != 1)
		return 13;
	while (read(h->cmd[0], path, sizeof(path)) == (ssize_t)sizeof(path) && path[0]) {
		int fd = open(path, O_RDONLY | O_CLOEXEC), ret = fd < 0 ? errno : 0;

		if (fd >= 0)
			close(fd);
		if (write(h->res[1], &ret, sizeof(ret)) != (ssize_t)sizeof(ret))
			return 14;
	}
	return 0;
}

static void hy_start(struct hy *h)
{
	const struct scratch_node nodes[] = { { "x", 'c', scratch_free_char_major(), 0 }, { "null", 'c', 1, 3 } };
	const char *rules[] = { "a", "c 1:3 rwm" };
	char c;

	need_hybrid();
	memset(h, 0, sizeof(*h));
	CHECK(!scratch_cgroup_create(scratch_devices_root(), h->v1, sizeof(h->v1)));
	CHECK(!scratch_cgroup_write(h->v1, "devices.deny", rules[0]));
	CHECK(!scratch_cgroup_write(h->v1, "devices.allow", rules[1]));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), h->v2, sizeof(h->v2)));
	CHECK(!scratch_devdir_create(h->dir, sizeof(h->dir), nodes, 2));
	snprintf(h->ctr, sizeof(h->ctr), "%s/ctr", h->dir);
	CHECK(!mkdir(h->ctr, 0755));
	CHECK(!pipe2(h->cmd, O_CLOEXEC) && !pipe2(h->res, O_CLOEXEC));
	h->pid = scratch_spawn(h->v2, hy_main, h);
	CHECK(h->pid > 0);
	close(h->cmd[0]);
	close(h->res[1]);
	CHECK_MSG(read(h->res[0], &c, 1) == 1 && c == 'r', "the pseudo-container did not start: exit %d",
		  scratch_wait(h->pid));
}

/* open(2) of DIR/NAME from inside: 0 or errno. */
static int hy_open(struct hy *h, const char *name)
{
	char path[PATH_MAX] = "";
	int ret;

	snprintf(path, sizeof(path), "%s/%s", h->dir, name);
	CHECK(write(h->cmd[1], path, sizeof(path)) == (ssize_t)sizeof(path));
	CHECK(read(h->res[0], &ret, sizeof(ret)) == (ssize_t)sizeof(ret));
	return ret;
}

/* Its v1 devices.list, whole. */
static const char *v1_list(struct hy *h)
{
	static char buf[4096];

	CHECK(scratch_cgroup_read(h->v1, "devices.list", buf, sizeof(buf)) >= 0);
	return buf;
}

/* "c MAJ:0 ACC\n", as devices.list shows it. */
static const char *x_line(const char *acc)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "c %u:0 %s\n", scratch_free_char_major(), acc);
	return buf;
}

/* The container's policy: V1_BASE and c MAJ:0 with ACC. */
static struct devcg_policy *with_x(const char *acc)
{
	char text[256];

	snprintf(text, sizeof(text), V1_BASE "allow %s", x_line(acc));
	return policy_of(text);
}

/* ---- devcg, as a command -------------------------------------------------- */

static const char *devcg_bin(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

/* Run devcg ARGS; its exit code, its standard output in OUT. */
static int devcg_run(char *out, size_t size, const char *const args[])
{
	int fds[2], st;
	size_t n = 0;
	ssize_t r;
	pid_t pid;

	CHECK(!pipe2(fds, O_CLOEXEC));
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		const char *argv[32] = { devcg_bin() };
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

/* ---- the library's lookup -------------------------------------------------- */

TEST(hybrid_the_v1_devices_cgroup_of_a_process_and_of_its_v2_cgroup_is_found)
{
	char buf[PATH_MAX], empty[PATH_MAX];
	struct devcg_error err = { 0 };
	struct hy h;

	hy_start(&h);
	CHECK_MSG(devcg_pid_v1_cgroup(h.pid, buf, sizeof(buf), &err) == 1, "%s", err.msg);
	CHECK_STR(buf, h.v1);
	CHECK_MSG(devcg_cgroup_v1_cgroup(h.v2, buf, sizeof(buf), &err) == 1, "%s", err.msg);
	CHECK_STR(buf, h.v1);
	/* control: a v2 cgroup without processes has none */
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), empty, sizeof(empty)));
	CHECK_INT(devcg_cgroup_v1_cgroup(empty, buf, sizeof(buf), &err), 0);
	CHECK_STR(buf, "");
}

/* ---- oci-hook --------------------------------------------------------------- */

/* devcg_oci_hook() for the pseudo-container, its config.json giving the
 * policy of with_x(ACC) (runtime "none": only what the file says). */
static int hook(struct hy *h, const char *acc, struct devcg_oci_hook_opts *ho, struct devcg_error *err)
{
	char path[PATH_MAX], text[1024], state[PATH_MAX + 256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/config.json", h->dir);
	snprintf(text, sizeof(text),
		 "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"}, \"linux\": {\"resources\": "
		 "{\"devices\": [{\"allow\": false, \"access\": \"rwm\"}, {\"allow\": true, \"type\": \"c\", "
		 "\"major\": 1, \"minor\": 3, \"access\": \"rwm\"}, {\"allow\": true, \"type\": \"c\", "
		 "\"major\": %u, \"minor\": 0, \"access\": \"%s\"}]}}}\n", scratch_free_char_major(), acc);
	f = fopen(path, "we");
	CHECK(f && fputs(text, f) >= 0 && !fclose(f));
	snprintf(state, sizeof(state), "{\"ociVersion\": \"1.0.2\", \"id\": \"devcg-test\", \"status\": "
		 "\"created\", \"pid\": %d, \"bundle\": \"%s\"}", (int)h->pid, h->dir);
	return devcg_oci_hook(state, strlen(state), ho, err);
}

TEST(hybrid_oci_hook_gives_the_v1_devices_cgroup_the_policy_too_and_the_open_is_allowed)
{
	DEVCG_OPTS(devcg_oci_hook_opts, ho);
	struct devcg_error err = { 0 };
	struct devcg_state *st;
	struct devcg_policy *want = with_x("rwm");
	struct hy h;

	hy_start(&h);
	CHECK_INT(hy_open(&h, "x"), EPERM);
	CHECK_MSG(hook(&h, "rwm", &ho, &err) == 0, "%s", err.msg);
	CHECK_STR(ho.v1_cgroup, h.v1);
	CHECK_STR(ho.cgroup, h.v2);
	/* both layers allow exactly the policy */
	CHECK(strstr(v1_list(&h), x_line("rwm")) != NULL);
	CHECK_MSG(!devcg_state_read(h.v2, &st, &err), "%s", err.msg);
	CHECK(devcg_state_own(st) && devcg_policy_equal(devcg_state_own(st)->policy, want));
	devcg_state_free(st);
	{
		struct devcg_policy *v1;
		bool complete = false;

		CHECK_MSG(!devcg_v1_read(h.v1, &v1, &complete, &err), "%s", err.msg);
		CHECK(complete && devcg_policy_equal(v1, want));
		devcg_policy_free(v1);
	}
	CHECK_INT(hy_open(&h, "x"), ENXIO);
	CHECK_INT(hy_open(&h, "null"), 0);
	devcg_policy_free(want);
}

TEST(hybrid_control_the_policy_on_v2_alone_leaves_the_open_refused_by_v1)
{
	struct devcg_policy *pol = with_x("rwm");
	struct devcg_error err = { 0 };
	struct hy h;

	hy_start(&h);
	CHECK_MSG(!devcg_replace(h.v2, pol, NULL, &err), "%s", err.msg);
	CHECK_INT(hy_open(&h, "x"), EPERM);
	/* and v1 alone does it: the refusal was v1's */
	CHECK(!scratch_cgroup_write(h.v1, "devices.allow", x_line("rwm")));
	CHECK_INT(hy_open(&h, "x"), ENXIO);
	devcg_policy_free(pol);
}

TEST(hybrid_replace_both_puts_v1_back_when_the_v2_swap_fails)
{
	DEVCG_OPTS(devcg_replace_opts, ro, .fail_at = "attach");
	struct devcg_policy *pol = with_x("rwm");
	struct devcg_error err = { 0 };
	char before[4096];
	struct hy h;

	hy_start(&h);
	snprintf(before, sizeof(before), "%s", v1_list(&h));
	CHECK_INT(devcg_replace_both(h.v2, h.v1, pol, &ro, &err), -EIO);
	CHECK_MSG(strstr(err.msg, "put back as it was"), "%s", err.msg);
	CHECK_STR(v1_list(&h), before);
	CHECK_INT(hy_open(&h, "x"), EPERM);
	/* control: without the fault both change */
	ro.fail_at = NULL;
	CHECK_MSG(!devcg_replace_both(h.v2, h.v1, pol, &ro, &err), "%s", err.msg);
	CHECK_INT(hy_open(&h, "x"), ENXIO);
	devcg_policy_free(pol);
}

/* ---- check and show ---------------------------------------------------------- */

TEST(hybrid_check_names_v1_when_the_v1_devices_cgroup_refuses_and_the_kernel_agrees)
{
	struct devcg_policy *pol = with_x("rwm");
	struct devcg_error err = { 0 };
	char out[8192], dev[32], pid[32];
	json_t *o;
	struct hy h;

	hy_start(&h);
	snprintf(dev, sizeof(dev), "%u:0", scratch_free_char_major());
	CHECK_MSG(!devcg_replace(h.v2, pol, NULL, &err), "%s", err.msg);
	CHECK_INT(DEVCG(out, "check", h.v2, "c", dev, "r"), 1);
	CHECK_MSG(strstr(out, "deny (default of the cgroup v1 devices cgroup ") && strstr(out, h.v1), "%s", out);
	CHECK_INT(DEVCG(out, "check", "-j", h.v2, "c", dev, "r"), 1);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o, "%s", out);
	CHECK_STR(json_string_value(json_object_get(o, "layer")), "v1");
	CHECK_STR(json_string_value(json_object_get(o, "decision")), "deny");
	json_decref(o);
	/* the same for the process, by -p */
	snprintf(pid, sizeof(pid), "%d", (int)h.pid);
	CHECK_INT(DEVCG(out, "check", "-j", "-p", pid, "c", dev, "r"), 1);
	CHECK_MSG(strstr(out, "\"layer\":\"v1\""), "%s", out);
	CHECK_INT(hy_open(&h, "x"), EPERM);
	/* control: once v1 allows it too, check says allow, and so does the kernel */
	CHECK(!scratch_cgroup_write(h.v1, "devices.allow", x_line("rwm")));
	CHECK_INT(DEVCG(out, "check", "-j", h.v2, "c", dev, "r"), 0);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o, "%s", out);
	CHECK_STR(json_string_value(json_object_get(o, "layer")), "v2");
	CHECK_STR(json_string_value(json_object_get(o, "decision")), "allow");
	json_decref(o);
	CHECK_INT(hy_open(&h, "x"), ENXIO);
	devcg_policy_free(pol);
}

TEST(hybrid_show_prints_the_v1_list_beside_the_v2_policy)
{
	struct devcg_policy *pol = with_x("rwm");
	struct devcg_error err = { 0 };
	char out[8192], empty[PATH_MAX], pid[32];
	json_t *o, *v1;
	struct hy h;

	hy_start(&h);
	CHECK_MSG(!devcg_replace(h.v2, pol, NULL, &err), "%s", err.msg);
	CHECK_INT(DEVCG(out, "show", h.v2), 0);
	CHECK_MSG(strstr(out, "# also decides: the cgroup v1 devices cgroup ") && strstr(out, h.v1), "%s", out);
	CHECK_MSG(strstr(out, "#   v1: deny a\n#   v1: allow c 1:3 rwm\n"), "%s", out);
	/* the same for the process, by -p */
	snprintf(pid, sizeof(pid), "%d", (int)h.pid);
	CHECK_INT(DEVCG(out, "show", "-p", pid), 0);
	CHECK_MSG(strstr(out, "#   v1: deny a\n#   v1: allow c 1:3 rwm\n") && strstr(out, strrchr(h.v2, '/')), "%s", out);
	/* the v2 policy is still what can be fed back in */
	CHECK_MSG(strstr(out, "\ndeny a\nallow c 1:3 rwm\nallow c "), "%s", out);
	CHECK_INT(DEVCG(out, "show", "-j", h.v2), 0);
	o = json_loads(out, 0, NULL);
	CHECK_MSG(o, "%s", out);
	v1 = json_object_get(o, "v1");
	CHECK_STR(json_string_value(json_object_get(v1, "cgroup")), h.v1);
	CHECK(json_is_true(json_object_get(v1, "complete")));
	CHECK_STR(json_string_value(json_object_get(json_object_get(v1, "policy"), "default")), "deny");
	json_decref(o);
	/* control: a cgroup none of whose processes is in a v1 devices cgroup */
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), empty, sizeof(empty)));
	CHECK_INT(DEVCG(out, "show", empty), 0);
	CHECK_MSG(!strstr(out, "v1"), "%s", out);
	devcg_policy_free(pol);
}

/* ---- allow, deny, replace ------------------------------------------------------ */

TEST(hybrid_allow_deny_and_replace_on_the_v2_cgroup_change_both_layers)
{
	struct devcg_policy *base = policy_of(V1_BASE);
	struct devcg_error err = { 0 };
	char out[8192], rule[64];
	struct hy h;

	hy_start(&h);
	CHECK_MSG(!devcg_replace(h.v2, base, NULL, &err), "%s", err.msg);
	snprintf(rule, sizeof(rule), "c %u:0 rwm", scratch_free_char_major());
	/* control: v2 alone, by the library's one-layer update */
	{
		struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
					.major = scratch_free_char_major(), .minor = 0 };

		CHECK_MSG(!devcg_update(h.v2, &r, NULL, &err), "%s", err.msg);
		CHECK_INT(hy_open(&h, "x"), EPERM);
	}
	CHECK_MSG(DEVCG(out, "allow", h.v2, rule) == 0, "%s", out);
	CHECK_MSG(strstr(out, h.v1), "%s", out);
	CHECK(strstr(v1_list(&h), x_line("rwm")) != NULL);
	CHECK_INT(hy_open(&h, "x"), ENXIO);
	CHECK_MSG(DEVCG(out, "deny", h.v2, rule) == 0, "%s", out);
	CHECK(strstr(v1_list(&h), x_line("rwm")) == NULL);
	CHECK_INT(hy_open(&h, "x"), EPERM);
	snprintf(rule, sizeof(rule), "allow c %u:0 r", scratch_free_char_major());
	CHECK_MSG(DEVCG(out, "replace", h.v2, "deny a", "allow c 1:3 rwm", rule) == 0, "%s", out);
	snprintf(rule, sizeof(rule), "c 1:3 rwm\n%s", x_line("r"));
	CHECK_STR(v1_list(&h), rule);
	CHECK_INT(hy_open(&h, "x"), ENXIO);
	CHECK_INT(hy_open(&h, "null"), 0);
	devcg_policy_free(base);
}

/* ---- attach ---------------------------------------------------------------------- */

TEST(hybrid_attach_writes_both_layers_and_detach_takes_both_back)
{
	struct devcg_policy *base = policy_of(V1_BASE);
	struct devcg_hotplug_device d = { 0 };
	struct devcg_hotplug_result *r = NULL;
	DEVCG_OPTS(devcg_hotplug_opts, o);
	struct devcg_error err = { 0 };
	char host[PATH_MAX], path[PATH_MAX], before[4096];
	struct hy h;

	hy_start(&h);
	CHECK_MSG(!devcg_replace(h.v2, base, NULL, &err), "%s", err.msg);
	snprintf(before, sizeof(before), "%s", v1_list(&h));
	snprintf(host, sizeof(host), "%s/x", h.dir);
	snprintf(path, sizeof(path), "%s/x", h.ctr);
	d.host_path = host;
	d.path = path;
	o.pid = h.pid;
	CHECK_MSG(!devcg_attach(h.v2, &d, 1, &o, &r, &err), "%s", err.msg);
	CHECK_STR(r->v1_cgroup, h.v1);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_ADDED);
	devcg_hotplug_result_free(r);
	CHECK(strstr(v1_list(&h), x_line("rwm")) != NULL);
	CHECK_INT(hy_open(&h, "ctr/x"), ENXIO);

	CHECK_MSG(!devcg_detach(h.v2, &d, 1, &o, &r, &err), "%s", err.msg);
	CHECK_INT(r->entries[0].permission, DEVCG_PERM_REMOVED);
	devcg_hotplug_result_free(r);
	CHECK_STR(v1_list(&h), before);
	CHECK_INT(hy_open(&h, "ctr/x"), ENOENT);
	/* the host's node of the device: both layers refuse it again */
	CHECK_INT(hy_open(&h, "x"), EPERM);
	devcg_policy_free(base);
}

TEST(hybrid_attach_failing_at_the_nodes_puts_both_layers_back)
{
	struct devcg_policy *base = policy_of(V1_BASE);
	struct devcg_hotplug_device d = { 0 };
	DEVCG_OPTS(devcg_hotplug_opts, o, .fail_at = "mknod");
	struct devcg_error err = { 0 };
	char host[PATH_MAX], path[PATH_MAX], before[4096];
	struct devcg_state *st;
	struct hy h;

	hy_start(&h);
	CHECK_MSG(!devcg_replace(h.v2, base, NULL, &err), "%s", err.msg);
	snprintf(before, sizeof(before), "%s", v1_list(&h));
	snprintf(host, sizeof(host), "%s/x", h.dir);
	snprintf(path, sizeof(path), "%s/x", h.ctr);
	d.host_path = host;
	d.path = path;
	o.pid = h.pid;
	CHECK_INT(devcg_attach(h.v2, &d, 1, &o, NULL, &err), -EIO);
	CHECK_MSG(strstr(err.msg, "as before"), "%s", err.msg);
	CHECK_STR(v1_list(&h), before);
	CHECK_MSG(!devcg_state_read(h.v2, &st, &err), "%s", err.msg);
	CHECK(devcg_state_own(st) && devcg_policy_equal(devcg_state_own(st)->policy, base));
	devcg_state_free(st);
	CHECK_INT(hy_open(&h, "x"), EPERM);
	devcg_policy_free(base);
}

/* ---- processes in two v1 devices cgroups ----------------------------------------- */

static int join_and_wait(void *arg)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	if (scratch_cgroup_write(arg, "cgroup.procs", pid))
		return 10;
	for (;;)
		pause();
}

TEST(hybrid_a_v2_cgroup_whose_processes_are_in_two_v1_devices_cgroups_is_refused_whole)
{
	struct devcg_policy *base = policy_of(V1_BASE);
	struct devcg_error err = { 0 };
	char other[PATH_MAX], buf[PATH_MAX], out[8192], rule[64], before[4096];
	struct devcg_state *st;
	uint32_t id;
	pid_t pid;
	struct hy h;

	hy_start(&h);
	CHECK_MSG(!devcg_replace(h.v2, base, NULL, &err), "%s", err.msg);
	CHECK_MSG(!devcg_state_read(h.v2, &st, &err), "%s", err.msg);
	id = devcg_state_own(st)->id;
	devcg_state_free(st);
	snprintf(before, sizeof(before), "%s", v1_list(&h));
	CHECK(!scratch_cgroup_create(scratch_devices_root(), other, sizeof(other)));
	pid = scratch_spawn(h.v2, join_and_wait, other);
	CHECK(pid > 0);
	for (int i = 0; i < 5000 && !(scratch_cgroup_read(other, "cgroup.procs", buf, sizeof(buf)) > 0); i++)
		usleep(1000);
	CHECK_INT(devcg_cgroup_v1_cgroup(h.v2, buf, sizeof(buf), &err), -EXDEV);
	CHECK_MSG(strstr(err.msg, h.v1) && strstr(err.msg, other), "%s", err.msg);
	/* allow says so in one line, naming both and what to use, and changes nothing */
	snprintf(rule, sizeof(rule), "c %u:0 rwm", scratch_free_char_major());
	CHECK_INT(DEVCG(out, "allow", h.v2, rule), 1);
	CHECK_MSG(strstr(out, "several cgroup v1 devices cgroups") && strstr(out, "replace --v1") &&
		  strchr(out, '\n') == out + strlen(out) - 1, "%s", out);
	CHECK_STR(v1_list(&h), before);
	CHECK_MSG(!devcg_state_read(h.v2, &st, &err), "%s", err.msg);
	CHECK_INT(devcg_state_own(st)->id, id);
	devcg_state_free(st);
	/* control: by the process, -p names one of them */
	snprintf(buf, sizeof(buf), "%d", (int)h.pid);
	snprintf(rule, sizeof(rule), "%u:0", scratch_free_char_major());
	CHECK_INT(DEVCG(out, "check", "-p", buf, "c", rule, "r"), 1);
	CHECK_MSG(strstr(out, h.v1), "%s", out);
	devcg_policy_free(base);
}

TEST(hybrid_replace_both_puts_v1_back_when_its_own_transition_stops_half_way)
{
	struct devcg_policy *pol;
	struct devcg_error err = { 0 };
	char parent[PATH_MAX], child[PATH_MAX], v2[PATH_MAX], list[4096], text[256];
	struct devcg_state *st;

	need_hybrid();
	/* the parent lets its child have c 1:3 and c 1:5, not c MAJ:0 */
	CHECK(!scratch_cgroup_create(scratch_devices_root(), parent, sizeof(parent)));
	CHECK(!scratch_cgroup_write(parent, "devices.deny", "a"));
	CHECK(!scratch_cgroup_write(parent, "devices.allow", "c 1:3 rwm"));
	CHECK(!scratch_cgroup_write(parent, "devices.allow", "c 1:5 rwm"));
	CHECK(!scratch_cgroup_create(parent, child, sizeof(child)));
	CHECK(!scratch_cgroup_write(child, "devices.deny", "c 1:5 rwm"));
	CHECK(scratch_cgroup_read(child, "devices.list", list, sizeof(list)) > 0);
	CHECK_STR(list, "c 1:3 rwm\n");
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), v2, sizeof(v2)));
	/* c 1:5 is written, then c MAJ:0 is refused by the kernel */
	snprintf(text, sizeof(text), "deny a\nallow c 1:3 rwm\nallow c 1:5 rwm\nallow c %u:0 rwm\n",
		 scratch_free_char_major());
	pol = policy_of(text);
	CHECK(devcg_replace_both(v2, child, pol, NULL, &err) == -EPERM);
	CHECK_MSG(strstr(err.msg, "put back as it was; nothing changed on cgroup v2"), "%s", err.msg);
	CHECK(scratch_cgroup_read(child, "devices.list", list, sizeof(list)) > 0);
	CHECK_STR(list, "c 1:3 rwm\n");
	CHECK_MSG(!devcg_state_read(v2, &st, &err), "%s", err.msg);
	CHECK_INT(devcg_state_count(st), 0);
	devcg_state_free(st);
	devcg_policy_free(pol);
}

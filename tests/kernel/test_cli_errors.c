// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The CLI's failures on a live system: a rule whose own verb is not the
 * command's grants nothing; missing privileges give one line naming the
 * capabilities (no libbpf output, with -j one JSON object); an output
 * that cannot be written fails the command. Each has a control that
 * succeeds where it should.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/capability.h>
#include <bpf/libbpf.h>

#define MISSING "missing CAP_BPF and CAP_SYS_ADMIN (devcg needs root)"

static const char *devcg_bin(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

static bool tracefs_ready(void)
{
	return !access("/sys/kernel/tracing/events/syscalls", F_OK) ||
	       !access("/sys/kernel/debug/tracing/events/syscalls", F_OK);
}

enum { DROP = 1, TRACEFS = 2 };

struct result {
	int status;
	char out[16384], err[16384];
};

static void slurp(int fd, char *buf, size_t len)
{
	ssize_t n = pread(fd, buf, len - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/*
 * Run devcg with the NULL-terminated arguments in a child; its stdout to
 * STDOUT_PATH (NULL: kept in r->out), its stderr in r->err. With TRACEFS,
 * the child first mounts tracefs in a mount namespace of its own; with
 * DROP, it then drops CAP_BPF and CAP_SYS_ADMIN from its bounding set, so
 * that devcg (run as root) starts without them, as under
 * `capsh --drop=cap_bpf,cap_sys_admin`.
 */
static void run(int flags, const char *stdout_path, struct result *r, ...)
{
	char outp[64], errp[64];
	const char *argv[16] = { devcg_bin() };
	int out, err, n = 1, st;
	va_list ap;
	pid_t pid;

	va_start(ap, r);
	while (n < 15 && (argv[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	snprintf(outp, sizeof(outp), "/tmp/devcg-test-%s-out-XXXXXX", scratch_tag());
	snprintf(errp, sizeof(errp), "/tmp/devcg-test-%s-err-XXXXXX", scratch_tag());
	out = mkstemp(outp);
	err = mkstemp(errp);
	CHECK(out >= 0 && err >= 0);
	unlink(outp);
	unlink(errp);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int o = stdout_path ? open(stdout_path, O_WRONLY) : out;

		if ((flags & TRACEFS) && !tracefs_ready() &&
		    (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		     mount("tracefs", "/sys/kernel/tracing", "tracefs", 0, NULL)))
			_exit(120);
		if ((flags & DROP) && (prctl(PR_CAPBSET_DROP, CAP_BPF, 0, 0, 0) ||
				       prctl(PR_CAPBSET_DROP, CAP_SYS_ADMIN, 0, 0, 0)))
			_exit(121);
		dup2(o, 1);
		dup2(err, 2);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	CHECK_MSG(r->status != 120 && r->status != 121 && r->status != 127,
		  "the child could not set up (%d)", r->status);
	slurp(out, r->out, sizeof(r->out));
	slurp(err, r->err, sizeof(r->err));
}

/* Can a child of CG open PATH for reading (1), or is it refused (0)? */
static int opens(void *arg)
{
	int fd = open((const char *)arg, O_RDONLY);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	return errno == EPERM ? 0 : 2;
}

TEST(allow_refuses_a_deny_rule_behind_blanks_and_grants_nothing)
{
	struct result r;
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	run(0, NULL, &r, "replace", cg, "deny a", "allow c 1:3 rwm", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 0);

	/* the rule's own verb is deny: `devcg allow` once granted c 1:9 here */
	run(0, NULL, &r, "allow", cg, " deny c 1:9 rwm", NULL);
	CHECK_INT(r.status, 1);
	CHECK_STR(r.err, "devcg allow: RULE:1:2: the rule says 'deny' where only 'allow' rules are accepted\n");
	run(0, NULL, &r, "allow", cg, "\t deny c 1:9 rwm", NULL);
	CHECK_INT(r.status, 1);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 0);

	/* controls: an allow rule grants it, and a deny rule behind blanks
	 * given to `devcg deny` takes it back */
	run(0, NULL, &r, "allow", cg, "c 1:9 r", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 1);
	run(0, NULL, &r, "deny", cg, "  deny c 1:9 rwm", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/urandom"), 0);
}

/* Without the capabilities: one line on stderr naming them and nothing on
 * stdout (EXIT), or with -j one JSON object on stdout and nothing on
 * stderr. With them (the control): success. */
static void check_one_line_without_caps(int flags, int exit_code, const char *verb, const char *a1,
					const char *a2, const char *a3, const char *a4)
{
	struct result r;
	json_t *o;
	char line[256];

	run(flags | DROP, NULL, &r, verb, a1, a2, a3, a4, NULL);
	CHECK_MSG(r.status == exit_code, "devcg %s: exit %d, stderr: %s", verb, r.status, r.err);
	CHECK_STR(r.out, "");
	CHECK_MSG(strstr(r.err, MISSING "\n") && strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
		  "devcg %s: not one line naming the capabilities: '%s'", verb, r.err);
	snprintf(line, sizeof(line), "devcg %s: ", verb);
	CHECK(strstr(r.err, line) == r.err);
	CHECK_MSG(!strstr(r.err, "libbpf"), "%s", r.err);

	run(flags | DROP, NULL, &r, "-j", verb, a1, a2, a3, a4, NULL);
	CHECK_INT(r.status, exit_code);
	CHECK_MSG(r.err[0] == '\0', "devcg -j %s wrote to stderr: '%s'", verb, r.err);
	CHECK(strchr(r.out, '\n') == r.out + strlen(r.out) - 1);
	o = json_loads(r.out, 0, NULL);
	CHECK_MSG(o != NULL, "not JSON: '%s'", r.out);
	CHECK(strstr(json_string_value(json_object_get(o, "error")), MISSING));
	CHECK(!strstr(json_string_value(json_object_get(o, "error")), "libbpf"));
	CHECK_INT(json_integer_value(json_object_get(o, "errno")), EPERM);
	json_decref(o);

	run(flags, "/dev/null", &r, verb, a1, a2, a3, a4, NULL);
	CHECK_MSG(r.status == 0, "control: devcg %s: exit %d: %s", verb, r.status, r.err);
}

TEST(replace_without_cap_bpf_and_cap_sys_admin_says_so_in_one_line)
{
	char cg[4096];

	need_v2();
	/* an empty cgroup: refused at the load (libbpf's probe) */
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	check_one_line_without_caps(0, 1, "replace", cg, "deny a", NULL, NULL);
	/* now with a program attached: refused when opening it by id */
	check_one_line_without_caps(0, 1, "replace", cg, "deny a", NULL, NULL);
}

TEST(show_check_and_allow_without_the_capabilities_say_so_in_one_line)
{
	struct result r;
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	run(0, NULL, &r, "replace", cg, "deny a", "allow c 1:3 rwm", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	check_one_line_without_caps(0, 1, "show", cg, NULL, NULL, NULL);
	/* check's own failures are 3 (1 is "deny") */
	check_one_line_without_caps(0, 3, "check", cg, "c", "1:3", "r");
	check_one_line_without_caps(0, 1, "allow", cg, "c 1:5 r", NULL, NULL);
}

TEST(trace_without_the_capabilities_says_so_in_one_line)
{
	need_v2();
	/* as the host has tracefs: where it is not mounted, mounting it fails */
	check_one_line_without_caps(0, 1, "trace", "--duration", "1", NULL, NULL);
	/* with tracefs mounted, loading the trace programs fails */
	check_one_line_without_caps(TRACEFS, 1, "trace", "--duration", "1", NULL, NULL);
}

/* Raise or drop CAP_BPF and CAP_SYS_ADMIN in this thread's effective set
 * (they stay permitted, so they can be raised again). */
static int set_caps(bool on)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	const int caps[] = { CAP_BPF, CAP_SYS_ADMIN };

	if (syscall(SYS_capget, &h, d))
		return -1;
	for (size_t i = 0; i < 2; i++) {
		if (on)
			d[caps[i] / 32].effective |= 1u << (caps[i] % 32);
		else
			d[caps[i] / 32].effective &= ~(1u << (caps[i] % 32));
	}
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

static int app_hook_calls;

static int app_hook(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	app_hook_calls++;
	return 0;
}

/* In the child: exit codes name the check that failed. */
static int library_keeps_libbpf_quiet(const char *cg)
{
	static const char not_elf[64] = "not an ELF object";
	struct devcg_policy *p = devcg_policy_new();
	DEVCG_OPTS(devcg_replace_opts, o, .fail_at = "verifier");
	struct devcg_error err = { 0 };
	struct bpf_object *obj;

	/* the application's own hook, installed before any devcg call */
	libbpf_set_print(app_hook);
	if (set_caps(false))
		return 10;
	if (devcg_replace(cg, p, NULL, &err) != -EPERM || !strstr(err.msg, MISSING) ||
	    strstr(err.msg, "libbpf"))
		return 11;
	if (app_hook_calls)
		return 12; /* libbpf's warnings escaped the devcg call */
	/* with the capabilities, a load the verifier refuses: devcg's line
	 * first, the verifier's log after it (the filter is loaded with
	 * bpf(2) itself, so libbpf has nothing to say there) */
	if (set_caps(true))
		return 13;
	if (devcg_replace(cg, p, &o, &err) >= 0 ||
	    strncmp(err.msg, "cannot load the device filter: ", 31) ||
	    !strstr(err.msg, "; verifier log:\n") || strstr(err.msg, "libbpf:"))
		return fprintf(stderr, "%s\n", err.msg), 14;
	if (app_hook_calls)
		return 15;
	/* outside devcg's calls, libbpf's messages reach the application's hook */
	obj = bpf_object__open_mem(not_elf, sizeof(not_elf), NULL);
	if (obj)
		return 16;
	if (!app_hook_calls)
		return 17;
	devcg_policy_free(p);
	return 0;
}

TEST(the_library_keeps_libbpf_quiet_in_its_calls_and_leaves_others_to_the_hook_before)
{
	char cg[4096], errp[64], err[4096];
	int fd, st;
	pid_t pid;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	snprintf(errp, sizeof(errp), "/tmp/devcg-test-%s-err-XXXXXX", scratch_tag());
	fd = mkstemp(errp);
	CHECK(fd >= 0);
	unlink(errp);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(fd, 2);
		_exit(library_keeps_libbpf_quiet(cg));
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	slurp(fd, err, sizeof(err));
	CHECK_MSG(WIFEXITED(st) && WEXITSTATUS(st) == 0, "check %d failed; stderr: %s",
		  WIFEXITED(st) ? WEXITSTATUS(st) : -1, err);
	CHECK_STR(err, ""); /* nothing printed by libbpf on its own */
}

TEST(show_and_check_to_a_full_disk_fail_with_one_line)
{
	struct result r;
	char cg[4096];

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	run(0, NULL, &r, "replace", cg, "deny a", "allow c 1:3 rwm", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	/* controls: where writing works */
	run(0, "/dev/null", &r, "show", cg, NULL);
	CHECK_INT(r.status, 0);
	run(0, "/dev/null", &r, "check", cg, "c", "1:3", "r", NULL);
	CHECK_INT(r.status, 0);

	run(0, "/dev/full", &r, "show", cg, NULL);
	CHECK_INT(r.status, 1);
	CHECK_STR(r.err, "devcg show: cannot write to standard output: No space left on device\n");
	run(0, "/dev/full", &r, "-j", "show", cg, NULL);
	CHECK_INT(r.status, 1);
	CHECK_STR(r.err, "devcg show: cannot write to standard output: No space left on device\n");
	run(0, "/dev/full", &r, "check", cg, "c", "1:3", "r", NULL);
	CHECK_INT(r.status, 3);
	CHECK_STR(r.err, "devcg check: cannot write to standard output: No space left on device\n");
	run(0, "/dev/full", &r, "allow", cg, "c 1:5 r", NULL);
	CHECK_INT(r.status, 1);
}

TEST(trace_to_a_full_disk_stops_and_fails)
{
	struct result r;

	need_v2();
	/* control: where writing works */
	run(TRACEFS, "/dev/null", &r, "-j", "trace", "--duration", "1", NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	run(TRACEFS, "/dev/full", &r, "-j", "trace", "--duration", "1", NULL);
	CHECK_INT(r.status, 1);
	CHECK_STR(r.err, "devcg trace: cannot write to standard output: No space left on device\n");
}

static int sleep_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* A process of CG, which has joined it (scratch_spawn() joins in the child). */
static pid_t member_of(const char *cg)
{
	pid_t pid = scratch_spawn(cg, sleep_forever, NULL);
	char buf[256];

	CHECK(pid > 0);
	for (int i = 0; i < 5000; i++) {
		if (scratch_cgroup_read(cg, "cgroup.procs", buf, sizeof(buf)) > 0 && atoi(buf) == pid)
			return pid;
		usleep(1000);
	}
	test_fail(__FILE__, __LINE__, "process %d did not join %s", (int)pid, cg);
	return -1;
}

/*
 * A runtime's container lives on its runtime's default devices, which its
 * config.json does not list (`runc spec` says only "deny all"): `replace
 * --runtime runc` keeps them. Without it the policy refuses /dev/null,
 * which the container has a node for and devcg's program allows now: that
 * replace is refused, and changes nothing; with --force it is installed
 * (the control that the refusal guarded something: EPERM).
 */
TEST(replace_runtime_runc_keeps_dev_null_and_taking_it_away_needs_force)
{
	char cg[4096], cfg[128];
	struct result r;
	pid_t member;
	int fd;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	/* a process of the cgroup, whose /dev (the host's) has /dev/null */
	member = member_of(cg);
	snprintf(cfg, sizeof(cfg), "/tmp/devcg-test-%s-cfg-XXXXXX", scratch_tag());
	fd = mkstemp(cfg);
	CHECK(fd >= 0);
	dprintf(fd, "{\"ociVersion\": \"1.0.2\", \"linux\": {\"resources\": {\"devices\": "
		    "[{\"allow\": false, \"access\": \"rwm\"}]}}}\n");
	close(fd);

	run(0, NULL, &r, "replace", "--runtime", "runc", cg, "-f", cfg, NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 1);

	/* without --runtime: "deny a" alone */
	run(0, NULL, &r, "replace", cg, "-f", cfg, NULL);
	CHECK_MSG(r.status == 1, "exit %d: %s", r.status, r.err);
	CHECK_MSG(strstr(r.err, "devcg replace: ") == r.err && strchr(r.err, '\n') == r.err + strlen(r.err) - 1 &&
		  strstr(r.err, "the new policy refuses 'c ") && strstr(r.err, "(/dev/") &&
		  strstr(r.err, "pass --force"), "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 1);
	/* -j: one JSON error */
	run(0, NULL, &r, "-j", "replace", cg, "-f", cfg, NULL);
	CHECK_INT(r.status, 1);
	CHECK_MSG(strstr(r.out, "\"error\"") && strstr(r.out, "pass --force"), "%s", r.out);

	/* with --force it is taken away */
	run(0, NULL, &r, "replace", "--force", cg, "-f", cfg, NULL);
	CHECK_MSG(r.status == 0, "%s", r.err);
	CHECK_INT(scratch_run(cg, opens, "/dev/null"), 0);

	kill(member, SIGKILL);
	scratch_wait(member);
	unlink(cfg);
}

/* The library's walk: the nodes of the /dev of a process of the cgroup, by
 * their numbers; none for a cgroup without a process. */
TEST(dev_nodes_lists_the_device_nodes_of_a_process_of_the_cgroup)
{
	struct devcg_error err = { 0 };
	struct devcg_node *nodes;
	char cg[4096];
	size_t n;
	bool null = false;
	pid_t member;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK_MSG(devcg_dev_nodes(cg, &nodes, &n, &err) == 0, "%s", err.msg);
	CHECK_INT((int)n, 0);
	free(nodes);
	member = member_of(cg);
	CHECK_MSG(devcg_dev_nodes(cg, &nodes, &n, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(nodes[i].path, "/dev/null"))
			null = nodes[i].type == DEVCG_CHAR && nodes[i].major == 1 && nodes[i].minor == 3;
	free(nodes);
	CHECK_MSG(null, "/dev/null (c 1:3) is not among the %zu nodes", n);
	kill(member, SIGKILL);
	scratch_wait(member);
}

/* In its own mount namespace, on its own tmpfs /dev: /dev/null, a node in
 * a subdirectory, and symbolic links to a directory and a node elsewhere
 * (ARG: that directory); then /dev/ready, and sleep. */
static int hostile_dev(void *arg)
{
	const char *elsewhere = arg;
	char target[256];

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", "/dev", "tmpfs", 0, "mode=0755") || mkdir("/dev/shm", 01777) ||
	    mount("tmpfs", "/dev/shm", "tmpfs", 0, NULL) ||
	    mknod("/dev/null", S_IFCHR | 0666, makedev(1, 3)) || mkdir("/dev/sub", 0755) ||
	    mknod("/dev/sub/zero", S_IFCHR | 0666, makedev(1, 5)) || symlink(elsewhere, "/dev/escape"))
		return 1;
	snprintf(target, sizeof(target), "%s/full", elsewhere);
	if (symlink(target, "/dev/full") || mknod("/dev/ready", S_IFREG | 0600, 0))
		return 1;
	for (;;)
		pause();
	return 0;
}

TEST(dev_nodes_follows_no_symbolic_link_of_the_container)
{
	char cg[4096], elsewhere[128], path[256];
	struct devcg_error err = { 0 };
	struct devcg_node *nodes;
	struct stat st;
	bool null = false, zero = false;
	size_t n;
	pid_t member;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	snprintf(elsewhere, sizeof(elsewhere), "/tmp/devcg-test-%s-devs-XXXXXX", scratch_tag());
	CHECK(mkdtemp(elsewhere) != NULL);
	snprintf(path, sizeof(path), "%s/full", elsewhere);
	/* control: what the links lead to is a device node (c 1:7) */
	CHECK(!mknod(path, S_IFCHR | 0600, makedev(1, 7)));
	member = scratch_spawn(cg, hostile_dev, elsewhere);
	CHECK(member > 0);
	snprintf(path, sizeof(path), "/proc/%d/root/dev/ready", (int)member);
	for (int i = 0; i < 5000 && stat(path, &st); i++)
		usleep(1000);
	CHECK_MSG(!stat(path, &st), "the child did not set up its /dev");
	CHECK_MSG(devcg_dev_nodes(cg, &nodes, &n, &err) == 0, "%s", err.msg);
	for (size_t i = 0; i < n; i++) {
		CHECK_MSG(nodes[i].minor != 7, "%s (c 1:7) was reached through a symbolic link", nodes[i].path);
		null |= !strcmp(nodes[i].path, "/dev/null") && nodes[i].minor == 3;
		zero |= !strcmp(nodes[i].path, "/dev/sub/zero") && nodes[i].minor == 5;
	}
	free(nodes);
	CHECK_MSG(null && zero && n == 2, "%zu nodes: /dev/null %d, /dev/sub/zero %d", n, null, zero);
	kill(member, SIGKILL);
	scratch_wait(member);
	snprintf(path, sizeof(path), "%s/full", elsewhere);
	unlink(path);
	rmdir(elsewhere);
}

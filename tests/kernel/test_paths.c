// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What a cgroup argument may name (issue "Hardening", items 4, 5, 7, 14):
 * writers refuse every spelling of a root cgroup, a path too long is an
 * error and never a shorter path, the programs that run for a cgroup are
 * found by its identity (through a bind mount, from inside a cgroup
 * namespace), a process's cgroup is found from a pod's cgroup namespace
 * once in the host's, and a cgroup v1 directory gets advice that works.
 *
 * Safety: the calls that must refuse a root run in a child whose seccomp
 * filter makes bpf(2) and every open for writing fail, so even a build
 * that does not refuse cannot attach, detach or write anything there; the
 * tests only read the root's program list. Their negative controls run
 * the same calls on scratch cgroups, where they must succeed.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stddef.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

static const char *devcg_bin(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

/* The ids of the device programs attached to DIR itself, as a string. */
static void programs_of(const char *dir, char *buf, size_t len)
{
	__u32 ids[64], cnt = 64, flags = 0, i;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t n = 0;

	CHECK_MSG(fd >= 0, "%s: %s", dir, strerror(errno));
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	buf[0] = '\0';
	for (i = 0; i < cnt && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%u ", ids[i]);
}

static __u32 count_programs(const char *dir)
{
	__u32 ids[64], cnt = 64, flags = 0;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK_MSG(fd >= 0, "%s: %s", dir, strerror(errno));
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &flags, ids, &cnt));
	close(fd);
	return cnt;
}

/* ---- a child that can only read ---------------------------------------- */

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef SANDBOX_ARCH
#define DENY BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM)
#define ALLOW BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define FLAGS_ARG(k) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[k]))
#define WRITE_FLAGS (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND)

/*
 * From here on, this process and what it executes cannot call bpf(2) nor
 * open a file other than read-only (seccomp, with no_new_privs): nothing
 * it does can attach, detach or write a cgroup file. 0 or -errno.
 */
static int sandbox_read_only(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_bpf, 0, 1),
		DENY,
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat2, 0, 1),
		DENY, /* its flags are in a struct: refuse it whole */
#ifdef __NR_creat
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_creat, 0, 1),
		DENY,
#endif
#ifdef __NR_open
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open, 0, 3),
		FLAGS_ARG(1),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 0, 1),
		DENY,
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#endif
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_openat, 1, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_open_by_handle_at, 0, 3),
		FLAGS_ARG(2),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, WRITE_FLAGS, 0, 1),
		DENY,
		ALLOW,
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
		return -errno;
	return 0;
}
#else
static int sandbox_read_only(void)
{
	return -EOPNOTSUPP;
}
#endif

static void need_sandbox(void)
{
	pid_t pid = fork();
	int status;

	CHECK(pid >= 0);
	if (pid == 0) {
		/* the control of the sandbox itself: bpf(2) and a write open fail */
		union bpf_attr attr = { 0 };

		if (sandbox_read_only())
			_exit(2);
		if (syscall(__NR_bpf, BPF_PROG_QUERY, &attr, sizeof(attr)) != -1 || errno != EPERM)
			_exit(3);
		if (open("/dev/null", O_WRONLY) != -1 || errno != EPERM)
			_exit(4);
		if (open("/dev/null", O_RDONLY) < 0)
			_exit(5);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
		SKIP("cannot install a seccomp filter here, so the root is not tried");
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 0, "sandbox control: status %d", status);
}

/* One library call's outcome, from a sandboxed child. */
struct outcome {
	int ret;
	char msg[1024];
};

enum call { CALL_REPLACE, CALL_UPDATE, CALL_RESET, CALL_STATE, CALL_REPLACE_V1 };

static void call_lib(enum call c, const char *arg, struct outcome *o)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_rule rule = { .verb = DEVCG_VERB_DENY, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				   .major = 1, .minor = 9 };
	struct devcg_error err = { 0 };
	struct devcg_state *s;

	switch (c) {
	case CALL_REPLACE:
		o->ret = devcg_replace(arg, p, NULL, &err);
		break;
	case CALL_UPDATE:
		o->ret = devcg_update(arg, &rule, NULL, &err);
		break;
	case CALL_RESET:
		o->ret = devcg_reset(arg, &err);
		break;
	case CALL_STATE:
		o->ret = devcg_state_read(arg, &s, &err);
		if (!o->ret)
			devcg_state_free(s);
		break;
	case CALL_REPLACE_V1:
		o->ret = devcg_replace_v1(arg, p, &err);
		break;
	}
	snprintf(o->msg, sizeof(o->msg), "%s", err.msg);
	devcg_policy_free(p);
}

/* The call, made in a child that can only read. */
static struct outcome sandboxed(enum call c, const char *arg)
{
	struct outcome *shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
				      MAP_SHARED | MAP_ANONYMOUS, -1, 0), o;
	pid_t pid;
	int status;

	CHECK(shared != MAP_FAILED);
	shared->ret = 1;
	snprintf(shared->msg, sizeof(shared->msg), "the child died");
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		if (sandbox_read_only())
			_exit(1);
		call_lib(c, arg, shared);
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	o = *shared;
	munmap(shared, sizeof(*shared));
	return o;
}

/* Run ARGV (devcg); its stdout and stderr together in OUT; its exit code. */
static int run_devcg(bool sandbox, char *const argv[], char *out, size_t len)
{
	int pfd[2], status;
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	CHECK(!pipe(pfd));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		close(pfd[0]);
		if (sandbox && sandbox_read_only())
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(pfd[1]);
	while (n + 1 < len && (got = read(pfd[0], out + n, len - n - 1)) > 0)
		n += (size_t)got;
	out[n] = '\0';
	close(pfd[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* ---- 4: the root is never written ---------------------------------------- */

#define REFUSAL "devcg never writes"

/* Every spelling of the cgroup2 root: SCRATCH_NAME is a cgroup below it. */
static int root_spellings(const char *scratch_name, char out[][4200])
{
	const char *root = scratch_cgroup2_root();
	int n = 0;

	snprintf(out[n++], 4200, "%s", "");
	snprintf(out[n++], 4200, "%s", ".");
	snprintf(out[n++], 4200, "%s/..", scratch_name);
	snprintf(out[n++], 4200, "%s", root);
	snprintf(out[n++], 4200, "%s/", root);
	snprintf(out[n++], 4200, "%s/%s/..", root, scratch_name);
	snprintf(out[n++], 4200, "%s/./", root);
	return n;
}

TEST(library_writers_refuse_every_spelling_of_the_cgroup2_root)
{
	const char *root;
	char cg[4096], spell[8][4200], before[1024], after[1024];
	const enum call calls[] = { CALL_REPLACE, CALL_UPDATE, CALL_RESET };
	const char *names[] = { "devcg_replace", "devcg_update", "devcg_reset" };
	int n;

	need_v2();
	need_sandbox();
	root = scratch_cgroup2_root();
	CHECK(!scratch_cgroup_create(root, cg, sizeof(cg)));
	programs_of(root, before, sizeof(before));
	n = root_spellings(cg + strlen(root) + 1, spell);
	for (int i = 0; i < n; i++) {
		for (size_t c = 0; c < 3; c++) {
			struct outcome o = sandboxed(calls[c], spell[i]);

			CHECK_MSG(o.ret == -EINVAL && strstr(o.msg, REFUSAL),
				  "%s('%s'): %d %s", names[c], spell[i], o.ret, o.msg);
			/* it says what the argument resolved to */
			CHECK_MSG(strstr(o.msg, root), "%s('%s'): %s", names[c], spell[i], o.msg);
		}
	}
	/* an empty argument is named as such */
	CHECK(strstr(sandboxed(CALL_REPLACE, "").msg, "empty") != NULL);
	programs_of(root, after, sizeof(after));
	CHECK_STR(after, before);
	/* reading the root stays possible */
	CHECK_INT(sandboxed(CALL_STATE, "").ret, -EPERM); /* the sandbox forbids bpf(2) */
	{
		struct devcg_state *s;

		CHECK(!devcg_state_read("", &s, NULL));
		CHECK_STR(devcg_state_cgroup(s), "/");
		devcg_state_free(s);
	}
}

TEST(library_writers_accept_the_same_spellings_below_the_root)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_rule rule = { .verb = DEVCG_VERB_DENY, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				   .major = 1, .minor = 9 };
	struct devcg_error err = { 0 };
	const char *root;
	char cg[4096], sub[4096], arg[4200];
	struct outcome o;

	need_v2();
	need_sandbox();
	root = scratch_cgroup2_root();
	CHECK(!scratch_cgroup_create(root, cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(cg, sub, sizeof(sub)));
	/* the sandbox alone gives another failure, not the refusal */
	o = sandboxed(CALL_REPLACE, cg);
	CHECK_MSG(o.ret < 0 && !strstr(o.msg, REFUSAL), "%d %s", o.ret, o.msg);
	CHECK_INT(count_programs(cg), 0);
	/* "NAME/SUB/..", "ROOT/NAME/", "NAME/./" name the scratch cgroup */
	snprintf(arg, sizeof(arg), "%s/..", sub + strlen(root) + 1);
	CHECK_MSG(!devcg_replace(arg, p, NULL, &err), "%s: %s", arg, err.msg);
	CHECK_INT(count_programs(cg), 1);
	snprintf(arg, sizeof(arg), "%s/", cg);
	CHECK_MSG(!devcg_update(arg, &rule, NULL, &err), "%s: %s", arg, err.msg);
	snprintf(arg, sizeof(arg), "%s/./", cg + strlen(root) + 1);
	CHECK_MSG(devcg_reset(arg, &err) == 1, "%s: %s", arg, err.msg);
	CHECK_INT(count_programs(cg), 0);
	CHECK_INT(count_programs(sub), 0);
	devcg_policy_free(p);
}

TEST(cli_writers_refuse_the_cgroup2_root_and_readers_read_it)
{
	const char *root;
	char cg[4096], spell[8][4200], before[1024], after[1024], out[8192];
	int n;

	need_v2();
	need_sandbox();
	CHECK_MSG(access(devcg_bin(), X_OK) == 0, "%s is not built", devcg_bin());
	root = scratch_cgroup2_root();
	CHECK(!scratch_cgroup_create(root, cg, sizeof(cg)));
	programs_of(root, before, sizeof(before));
	n = root_spellings(cg + strlen(root) + 1, spell);
	for (int i = 0; i < n; i++) {
		char *const verbs[][5] = {
			{ (char *)devcg_bin(), "replace", spell[i], "deny a", NULL },
			{ (char *)devcg_bin(), "allow", spell[i], "c 1:3 rwm", NULL },
			{ (char *)devcg_bin(), "deny", spell[i], "c 1:3 rwm", NULL },
			{ (char *)devcg_bin(), "reset", spell[i], NULL },
			{ (char *)devcg_bin(), "-j", "reset", spell[i], NULL },
		};

		for (size_t v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
			CHECK_INT(run_devcg(true, verbs[v], out, sizeof(out)), 1);
			CHECK_MSG(strstr(out, REFUSAL), "devcg %s '%s': %s", verbs[v][1], spell[i], out);
		}
	}
	programs_of(root, after, sizeof(after));
	CHECK_STR(after, before);
	/* show and check read the root (outside the sandbox: they need bpf) */
	{
		char *const show[] = { (char *)devcg_bin(), "show", "", NULL };
		char *const check[] = { (char *)devcg_bin(), "check", (char *)root, "c", "1:3", "r", NULL };

		CHECK_INT(run_devcg(false, show, out, sizeof(out)), 0);
		CHECK_MSG(!strncmp(out, "# /:", 4), "%s", out);
		CHECK_INT(run_devcg(false, check, out, sizeof(out)), 0);
	}
}

/* Bind-mount FROM on a new directory; returns it (in a scratch dir). */
static void bind_mount(const char *from, char *dir, size_t len)
{
	char base[4096];
	const struct scratch_node none = { 0 };

	CHECK(!scratch_devdir_create(base, sizeof(base), &none, 0));
	snprintf(dir, len, "%s/mnt", base);
	CHECK(!mkdir(dir, 0755));
	CHECK_MSG(!mount(from, dir, NULL, MS_BIND, NULL), "bind %s: %s", from, strerror(errno));
}

/* This test process only (each test runs in its own child): mounts made
 * from here on go away with it. */
static void private_mounts(void)
{
	CHECK_MSG(!unshare(CLONE_NEWNS), "unshare: %s", strerror(errno));
	CHECK(!mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL));
}

TEST(writers_refuse_the_root_of_a_bind_mounted_cgroup)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_error err = { 0 };
	char cg[4096], child[4096], dir[4200], arg[4300];

	need_v2();
	private_mounts();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(cg, child, sizeof(child)));
	bind_mount(child, dir, sizeof(dir));
	CHECK_INT(devcg_replace(dir, p, NULL, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "root of the cgroup2 mount") && strstr(err.msg, REFUSAL), "%s",
		  err.msg);
	snprintf(arg, sizeof(arg), "%s/", dir);
	CHECK_INT(devcg_reset(arg, &err), -EINVAL);
	CHECK_INT(count_programs(child), 0);
	/* control: the same cgroup by its own path */
	CHECK_MSG(!devcg_replace(child, p, NULL, &err), "%s", err.msg);
	CHECK_INT(count_programs(child), 1);
	devcg_policy_free(p);
}

/* The last component of PATH. */
static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

TEST(replace_names_a_nested_cgroup_relative_to_the_mount_it_is_reached_through)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_error err = { 0 };
	char cg[4096], child[4096], grand[4096], dir[4200], arg[8600], want[8600];

	need_v2();
	private_mounts();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(cg, child, sizeof(child)));
	CHECK(!scratch_cgroup_create(child, grand, sizeof(grand)));
	/* three levels below the cgroup2 mount: named from its top */
	{
		DEVCG_OPTS(devcg_replace_opts, o);

		CHECK_MSG(!devcg_replace(grand, p, &o, &err), "%s", err.msg);
		CHECK_STR(o.cgroup, grand + strlen(scratch_cgroup2_root()));
	}
	/* the same cgroup through a bind mount of CG: two levels below that
	 * mount's top, named from there (control: another name of one
	 * cgroup, told by where the walk up leaves the mount) */
	bind_mount(cg, dir, sizeof(dir));
	snprintf(arg, sizeof(arg), "%s/%s/%s", dir, base_name(child), base_name(grand));
	snprintf(want, sizeof(want), "/%s/%s", base_name(child), base_name(grand));
	{
		DEVCG_OPTS(devcg_replace_opts, o);

		CHECK_MSG(!devcg_replace(arg, p, &o, &err), "%s", err.msg);
		CHECK_STR(o.cgroup, want);
	}
	devcg_policy_free(p);
}

/* ---- 5: too long is an error, never a shorter path ------------------------ */

/* PARENT/././.../CHILD_NAME of at least LEN bytes: cut anywhere before its
 * end, it names PARENT. */
static char *padded(const char *parent, const char *child_name, size_t len)
{
	size_t n = strlen(parent), tail = strlen(child_name) + 1;
	char *s = malloc(len + tail + 4);

	CHECK(s != NULL);
	memcpy(s, parent, n);
	while (n < len) {
		memcpy(s + n, "/.", 2);
		n += 2;
	}
	snprintf(s + n, tail + 1, "/%s", child_name);
	return s;
}

TEST(an_overlong_cgroup_argument_is_refused_never_shortened)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_rule rule = { .verb = DEVCG_VERB_DENY, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				   .major = 1, .minor = 9 };
	const size_t lens[] = { 4096, 8192, 8300 };
	const char *root;
	char cg[4096], child[4096];

	need_v2();
	root = scratch_cgroup2_root();
	CHECK(!scratch_cgroup_create(root, cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(cg, child, sizeof(child)));
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		const char *name = strrchr(child, '/') + 1;
		char *abs = padded(cg, name, lens[i]), *rel = padded(cg + strlen(root) + 1, name, lens[i]);
		const char *args[] = { abs, rel };

		for (int a = 0; a < 2; a++) {
			struct devcg_error err = { 0 };
			struct devcg_state *s;

			CHECK_MSG(devcg_replace(args[a], p, NULL, &err) == -ENAMETOOLONG,
				  "%zu bytes: %s", strlen(args[a]), err.msg);
			CHECK(strstr(err.msg, "never shortened") != NULL);
			CHECK_INT(devcg_update(args[a], &rule, NULL, &err), -ENAMETOOLONG);
			CHECK_INT(devcg_reset(args[a], &err), -ENAMETOOLONG);
			CHECK_INT(devcg_state_read(args[a], &s, &err), -ENAMETOOLONG);
		}
		free(abs);
		free(rel);
	}
	/* nothing landed on the parent, the child or the root */
	CHECK_INT(count_programs(cg), 0);
	CHECK_INT(count_programs(child), 0);
	/* control: the same form within PATH_MAX names exactly the child */
	{
		char *ok = padded(cg, strrchr(child, '/') + 1, 4000);
		struct devcg_error err = { 0 };

		CHECK_MSG(!devcg_replace(ok, p, NULL, &err), "%s", err.msg);
		CHECK_INT(count_programs(child), 1);
		CHECK_INT(count_programs(cg), 0);
		free(ok);
	}
	devcg_policy_free(p);
}

TEST(v1_an_overlong_directory_argument_is_refused_never_shortened)
{
	struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
	struct devcg_error err = { 0 };
	char cg[4096], child[4096], list[4096];
	char *arg;

	if (geteuid() != 0)
		SKIP("needs root");
	if (!scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	CHECK(!scratch_cgroup_create(scratch_devices_root(), cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(cg, child, sizeof(child)));
	arg = padded(cg, strrchr(child, '/') + 1, 8300);
	CHECK_INT(devcg_replace_v1(arg, p, &err), -ENAMETOOLONG);
	CHECK(strstr(err.msg, "never shortened") != NULL);
	free(arg);
	CHECK(scratch_cgroup_read(child, "devices.list", list, sizeof(list)) > 0);
	CHECK_STR(list, "a *:* rwm\n");
	/* control */
	arg = padded(cg, strrchr(child, '/') + 1, 3000);
	CHECK_MSG(devcg_replace_v1(arg, p, &err) >= 0, "%s", err.msg);
	CHECK(scratch_cgroup_read(child, "devices.list", list, sizeof(list)) > 0);
	CHECK_STR(list, "c 1:3 rwm\n");
	free(arg);
	devcg_policy_free(p);
}

/* ---- 4, v1: the devices hierarchy's root ----------------------------------- */

TEST(v1_replace_refuses_every_spelling_of_the_devices_root)
{
	const char *root;
	char cg[4096], spell[4][4200], before[8192], after[8192];
	struct outcome o;

	if (geteuid() != 0)
		SKIP("needs root");
	if (!(root = scratch_devices_root()))
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	need_sandbox();
	CHECK(!scratch_cgroup_create(root, cg, sizeof(cg)));
	CHECK(scratch_cgroup_read(root, "devices.list", before, sizeof(before)) > 0);
	snprintf(spell[0], sizeof(spell[0]), "%s", root);
	snprintf(spell[1], sizeof(spell[1]), "%s/", root);
	snprintf(spell[2], sizeof(spell[2]), "%s/..", cg);
	snprintf(spell[3], sizeof(spell[3]), "%s", "");
	for (int i = 0; i < 4; i++) {
		o = sandboxed(CALL_REPLACE_V1, spell[i]);
		CHECK_MSG(o.ret == -EINVAL && strstr(o.msg, REFUSAL), "'%s': %d %s", spell[i], o.ret,
			  o.msg);
	}
	CHECK(scratch_cgroup_read(root, "devices.list", after, sizeof(after)) > 0);
	CHECK_STR(after, before);
	/* controls: the sandbox alone fails otherwise; outside it the scratch
	 * cgroup is written */
	o = sandboxed(CALL_REPLACE_V1, cg);
	CHECK_MSG(o.ret < 0 && !strstr(o.msg, REFUSAL), "%d %s", o.ret, o.msg);
	{
		struct devcg_policy *p = policy_of("deny a\nallow c 1:3 rwm\n");
		char list[4096];

		CHECK(devcg_replace_v1(cg, p, NULL) >= 0);
		CHECK(scratch_cgroup_read(cg, "devices.list", list, sizeof(list)) > 0);
		CHECK_STR(list, "c 1:3 rwm\n");
		devcg_policy_free(p);
	}
}

/* ---- 7: what runs for a cgroup, by its identity ---------------------------- */

#define DENYING "deny a\nallow c 1:3 rwm\n"

/* devcg_state_check of c 1:9 r on ARG: 1 allow, 0 deny, or -errno; the
 * deciding program in *BY (copied). */
static int check_urandom(const char *arg, struct devcg_program *by)
{
	const struct devcg_program *p = NULL;
	struct devcg_error err = { 0 };
	struct devcg_state *s;
	int ret;

	ret = devcg_state_read(arg, &s, &err);
	CHECK_MSG(!ret, "%s: %s", arg, err.msg);
	ret = devcg_state_check(s, DEVCG_CHAR, 1, 9, DEVCG_ACC_READ, &p, NULL, NULL);
	memset(by, 0, sizeof(*by));
	if (p) {
		*by = *p;
		by->policy = NULL;
	}
	devcg_state_free(s);
	return ret;
}

TEST(check_through_a_bind_mount_finds_the_ancestor_that_denies)
{
	struct devcg_policy *deny = policy_of(DENYING), *allow = policy_of("allow a\n");
	DEVCG_OPTS(devcg_replace_opts, o);
	struct devcg_program by;
	char cg[4096], child[4096], dir[4200], out[8192];
	const char *root;
	pid_t pid;
	int status;

	need_v2();
	CHECK_MSG(access(devcg_bin(), X_OK) == 0, "%s is not built", devcg_bin());
	root = scratch_cgroup2_root();
	private_mounts();
	CHECK(!scratch_cgroup_create(root, cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(cg, child, sizeof(child)));
	CHECK(!devcg_replace(cg, deny, &o, NULL));
	bind_mount(child, dir, sizeof(dir));
	/* the real path: the parent denies */
	CHECK_INT(check_urandom(child, &by), 0);
	CHECK_INT(by.id, o.prog_id);
	/* through the bind mount: the same, found through the cgroup2 mount */
	CHECK_INT(check_urandom(dir, &by), 0);
	CHECK_INT(by.id, o.prog_id);
	CHECK(by.visible);
	CHECK_STR(by.cgroup, cg + strlen(root));
	{
		char *const argv[] = { (char *)devcg_bin(), "check", dir, "c", "1:9", "r", NULL };

		CHECK_INT(run_devcg(false, argv, out, sizeof(out)), 1);
		CHECK_MSG(strstr(out, cg + strlen(root)) != NULL, "%s", out);
	}
	/* with the cgroup2 mount gone from view, the parent cannot be seen:
	 * its program is still read and decides, located as not visible */
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		char *const check[] = { (char *)devcg_bin(), "check", dir, "c", "1:9", "r", NULL };
		char *const show[] = { (char *)devcg_bin(), "-j", "show", dir, NULL };

		/* a mount namespace of its own, so the test keeps its view */
		if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    umount2(root, MNT_DETACH))
			_exit(10);
		if (check_urandom(dir, &by) != 0 || by.id != o.prog_id || by.visible ||
		    strcmp(by.cgroup, "?"))
			_exit(11);
		if (run_devcg(false, check, out, sizeof(out)) != 1 ||
		    !strstr(out, "on an ancestor not visible from here")) {
			fprintf(stderr, "%s", out);
			_exit(12);
		}
		if (run_devcg(false, show, out, sizeof(out)) != 0 ||
		    !strstr(out, "\"cgroup\":\"?\"") || !strstr(out, "\"visible\":false")) {
			fprintf(stderr, "%s", out);
			_exit(13);
		}
		_exit(0);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_INT(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
	/* control: a parent policy that allows gives allow, either way */
	{
		struct devcg_error err = { 0 };

		CHECK_MSG(!devcg_replace(cg, allow, NULL, &err), "%s", err.msg);
	}
	CHECK_INT(check_urandom(dir, &by), 1);
	CHECK_INT(check_urandom(child, &by), 1);
	devcg_policy_free(deny);
	devcg_policy_free(allow);
}

struct ns_job {
	char dir[4200];
	uint32_t deny_id;
	bool hide_host; /* unmount the host's cgroup2 mount first */
};

/* In the child cgroup: a new cgroup namespace and a cgroup2 mount of it. */
static int in_cgroup_ns(void *arg)
{
	struct ns_job *job = arg;
	struct devcg_policy *p;
	struct devcg_program by;
	struct devcg_error err = { 0 };

	if (unshare(CLONE_NEWCGROUP | CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("cgroup2", job->dir, "cgroup2", 0, NULL)) {
		fprintf(stderr, "cgroup namespace: %s\n", strerror(errno));
		return 10;
	}
	if (job->hide_host && umount2(scratch_cgroup2_root(), MNT_DETACH))
		return 11;
	if (check_urandom(job->dir, &by) != 0 || by.id != job->deny_id)
		return 12;
	if (by.visible == job->hide_host)
		return 13;
	/* the namespace's root is a root: not written */
	p = policy_of("allow a\n");
	if (devcg_replace(job->dir, p, NULL, &err) != -EINVAL || !strstr(err.msg, REFUSAL))
		return 14;
	devcg_policy_free(p);
	return 0;
}

TEST(check_from_inside_a_cgroup_namespace_finds_the_ancestor_that_denies)
{
	struct devcg_policy *deny = policy_of(DENYING);
	DEVCG_OPTS(devcg_replace_opts, o);
	const struct scratch_node none = { 0 };
	struct ns_job *job = mmap(NULL, sizeof(*job), PROT_READ | PROT_WRITE,
				  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct devcg_program by;
	char cg[4096], child[4096], base[4096];

	need_v2();
	CHECK(job != MAP_FAILED);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!scratch_cgroup_create(cg, child, sizeof(child)));
	CHECK(!devcg_replace(cg, deny, &o, NULL));
	CHECK(!scratch_devdir_create(base, sizeof(base), &none, 0));
	snprintf(job->dir, sizeof(job->dir), "%s/mnt", base);
	CHECK(!mkdir(job->dir, 0755));
	job->deny_id = o.prog_id;
	for (int hide = 0; hide < 2; hide++) {
		job->hide_host = hide;
		CHECK_INT(scratch_run(child, in_cgroup_ns, job), 0);
	}
	CHECK_INT(count_programs(child), 0);
	/* control: the kernel's own decision agrees, by the real path */
	CHECK_INT(check_urandom(child, &by), 0);
	munmap(job, sizeof(*job));
	devcg_policy_free(deny);
}

/*
 * A node agent in a pod: its cgroup namespace is rooted at its own cgroup,
 * two levels below where the containers' cgroups branch off, so their
 * /proc/PID/cgroup paths start "/../" and the host's cgroup2 mount shows
 * as "/../..": no mount's root contains them until the agent enters the
 * cgroup namespace of process 1 (devcg_host_cgroupns).
 */
struct host_ns_job {
	pid_t target, host; /* host: a process in the test's own namespace */
	char path[4096];
};

static int lookup_from_a_pods_namespace(void *arg)
{
	struct host_ns_job *job = arg;
	struct devcg_error err = { 0 };
	char buf[4096];

	if (unshare(CLONE_NEWCGROUP))
		return 10;
	/* the control: from here the container cannot be found */
	if (devcg_pid_cgroup(job->target, buf, sizeof(buf), &err) != -ENOENT) {
		fprintf(stderr, "in the pod's namespace: %s %s\n", err.msg, buf);
		return 11;
	}
	if (devcg_host_cgroupns(job->host, &err) != 1) {
		fprintf(stderr, "devcg_host_cgroupns: %s\n", err.msg);
		return 12;
	}
	memset(&err, 0, sizeof(err));
	if (devcg_pid_cgroup(job->target, buf, sizeof(buf), &err) || strcmp(buf, job->path)) {
		fprintf(stderr, "in the host's namespace: %s %s\n", err.msg, buf);
		return 13;
	}
	/* already there: nothing to do */
	return devcg_host_cgroupns(job->host, &err) == 0 ? 0 : 14;
}

static int pause_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

TEST(pid_cgroup_from_a_pods_cgroup_namespace_needs_the_hosts_and_finds_it)
{
	struct host_ns_job *job = mmap(NULL, sizeof(*job), PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char node[4096], pod[4096];

	need_v2();
	CHECK(job != MAP_FAILED);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), node, sizeof(node)));
	CHECK(!scratch_cgroup_create(node, pod, sizeof(pod)));
	CHECK(!scratch_cgroup_create(node, job->path, sizeof(job->path)));
	job->target = scratch_spawn(job->path, pause_forever, NULL);
	CHECK(job->target > 0);
	for (int i = 0; i < 5000; i++) {
		char procs[64];

		if (scratch_cgroup_read(job->path, "cgroup.procs", procs, sizeof(procs)) > 0 &&
		    atoi(procs) == job->target)
			break;
		usleep(1000);
	}
	/* the test itself stands for the host's init (process 1 may be out of
	 * reach where the suite runs) */
	job->host = getpid();
	CHECK_INT(scratch_run(pod, lookup_from_a_pods_namespace, job), 0);
	kill(job->target, SIGKILL);
	scratch_wait(job->target);
	munmap(job, sizeof(*job));
}

/* ---- 14: a cgroup v1 directory gets advice that works ---------------------- */

TEST(verbs_on_a_v1_directory_give_advice_that_works)
{
	char cg[4096], out[8192], cmd[8192];
	struct devcg_error err = { 0 };
	struct devcg_state *s;

	if (geteuid() != 0)
		SKIP("needs root");
	if (!scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	CHECK_MSG(access(devcg_bin(), X_OK) == 0, "%s is not built", devcg_bin());
	CHECK(!scratch_cgroup_create(scratch_devices_root(), cg, sizeof(cg)));
	CHECK(!scratch_cgroup_write(cg, "devices.deny", "a"));
	CHECK(!scratch_cgroup_write(cg, "devices.allow", "c 1:3 rwm"));
	/* the library names no CLI option */
	CHECK_INT(devcg_state_read(cg, &s, &err), -ENOTDIR);
	CHECK_MSG(strstr(err.msg, "cgroup v1") && !strstr(err.msg, "--"), "%s", err.msg);
	{
		struct {
			const char *verb, *rule, *advice;
		} cases[] = {
			{ "replace", "deny a", "use 'devcg replace --v1 %s'" },
			{ "show", NULL, "the policy is %s/devices.list" },
			{ "check", NULL, "cat %s/devices.list) | devcg check --rules - " },
			{ "allow", "c 1:9 r", "write the rule to %s/devices.allow" },
			{ "deny", "c 1:9 r", "write the rule to %s/devices.deny" },
			{ "reset", NULL, "devcg replace --v1 %s 'allow a'" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char want[4400], *v1;
			char *argv[8] = { (char *)devcg_bin(), (char *)cases[i].verb, cg };
			int n = 3;

			if (cases[i].rule)
				argv[n++] = (char *)cases[i].rule;
			if (!strcmp(cases[i].verb, "check")) {
				argv[n++] = "c";
				argv[n++] = "1:3";
				argv[n++] = "r";
			}
			argv[n] = NULL;
			CHECK_MSG(run_devcg(false, argv, out, sizeof(out)) ==
					  (strcmp(cases[i].verb, "check") ? 1 : 3), "%s: %s", cases[i].verb, out);
			snprintf(want, sizeof(want), cases[i].advice, cg);
			CHECK_MSG(strstr(out, want), "devcg %s: %s", cases[i].verb, out);
			/* --v1 only ever as an option of replace */
			for (v1 = strstr(out, "--v1"); v1; v1 = strstr(v1 + 1, "--v1"))
				CHECK_MSG(v1 - out >= 14 && !strncmp(v1 - 14, "devcg replace ", 14),
					  "devcg %s: %s", cases[i].verb, out);
		}
	}
	/* the advice of check works: it decides as the cgroup's list does */
	snprintf(cmd, sizeof(cmd), "(echo 'deny a'; cat %s/devices.list) | %s check --rules - c 1:3 r >/dev/null",
		 cg, devcg_bin());
	CHECK_INT(WEXITSTATUS(system(cmd)), 0);
	snprintf(cmd, sizeof(cmd), "(echo 'deny a'; cat %s/devices.list) | %s check --rules - c 1:9 r >/dev/null",
		 cg, devcg_bin());
	CHECK_INT(WEXITSTATUS(system(cmd)), 1);
	/* ... and so does that of reset */
	{
		char *const argv[] = { (char *)devcg_bin(), "replace", "--v1", cg, "allow a", NULL };
		char list[4096];

		CHECK_INT(run_devcg(false, argv, out, sizeof(out)), 0);
		CHECK(scratch_cgroup_read(cg, "devices.list", list, sizeof(list)) > 0);
		CHECK_STR(list, "a *:* rwm\n");
	}
}

TEST(check_that_cannot_read_what_runs_says_so_instead_of_allow)
{
	char cg[4096], out[8192];
	char *const argv[] = { (char *)devcg_bin(), "check", cg, "c", "1:9", "r", NULL };
	struct devcg_policy *deny = policy_of(DENYING);
	int pfd[2], status;
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!devcg_replace(cg, deny, NULL, NULL));
	CHECK(!pipe(pfd));
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		/* without CAP_NET_ADMIN the kernel refuses BPF_PROG_QUERY */
		dup2(pfd[1], 1);
		dup2(pfd[1], 2);
		if (setgid(65534) || setuid(65534))
			_exit(125);
		execv(argv[0], argv);
		_exit(126);
	}
	close(pfd[1]);
	while (n + 1 < sizeof(out) && (got = read(pfd[0], out + n, sizeof(out) - n - 1)) > 0)
		n += (size_t)got;
	out[n] = '\0';
	close(pfd[0]);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 126)
		SKIP("user nobody cannot run %s", devcg_bin());
	CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %d: %s", status, out);
	CHECK_MSG(strstr(out, "cannot query") && !strstr(out, "allow ("), "%s", out);
	/* control: as root the same check answers, deny */
	CHECK_INT(run_devcg(false, argv, out, sizeof(out)), 1);
	devcg_policy_free(deny);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Real container runtimes (issue "A second kernel and real runtimes"):
 * Debian's runc and crun run a busybox container, devcg adopts the
 * runtime's own device program with no EPERM in the container and grants a
 * device the runtime had not, and devcg trace reports what a runtime's
 * update really does to the device rules.
 *
 * How the runtimes run on a hybrid host (found with runc 1.1.5 and crun
 * 1.8.1 on Linux 6.18, cgroup v1 controllers under /sys/fs/cgroup/<ctrl>,
 * cgroup2 at /sys/fs/cgroup/unified):
 *  - cgroup v2: each runtime command runs in a private mount namespace (/
 *    made rprivate) where a scratch cgroup of the cgroup2 mount is bind-
 *    mounted on /sys/fs/cgroup. Both runtimes then see a cgroup2 mount there
 *    (statfs) and work in unified mode; linux.cgroupsPath "/ctr" is
 *    SCRATCH/ctr on the host. Neither needs cgroup.controllers hidden.
 *  - cgroup v1: the runtimes run on the host's own /sys/fs/cgroup. crun
 *    refuses a hybrid host whose cgroup2 root offers controllers ("cgroups
 *    in hybrid mode not supported, drop all controllers from cgroupv2";
 *    here it offers hugetlb), so the commands run in a private mount
 *    namespace with an empty file bind-mounted over the cgroup2 root's
 *    cgroup.controllers. Both runtimes then make the container's cgroup in
 *    every v1 hierarchy (and in the cgroup2 one): linux.cgroupsPath is
 *    "/<scratch cgroup name>/ctr", so all of them carry this run's scratch
 *    name and the cleanup below finds them.
 *  - crun 1.8.1 sets RLIMIT_MEMLOCK to infinity before loading its device
 *    program and gives up when it cannot. A root without CAP_SYS_RESOURCE
 *    (this project's VM) cannot, so there crun's calls run under a seccomp
 *    filter that turns that one raise into a no-op; since Linux 5.11 BPF
 *    memory is charged to the memory cgroup and the limit plays no part.
 *    The test says so when it does it.
 *
 * What the runtimes do, as these tests establish:
 *  - runc and crun attach their own program, in BPF_F_ALLOW_MULTI mode;
 *  - crun update with a devices list writes 'a' to devices.deny and replays
 *    the list on v1 (a gap, with victims); on v2 it attaches its new program
 *    with BPF_F_ALLOW_MULTI | BPF_F_REPLACE naming the old one (no gap);
 *  - runc update ignores a devices list: it writes no device rule on v1 and
 *    leaves the device program alone on v2.
 *
 * The container: a bundle in /tmp/devcg-test-<tag>-rt-XXXXXX with busybox
 * (static) and build/devcg-reader (with the shared libraries ldd names) in
 * its rootfs, config.json written here, and the runtime's state (--root) in
 * the same directory. Every test deletes its containers (`RUNTIME delete
 * -f`) and their directories, also when a CHECK fails (atexit); the suite's
 * cleanup hook does it again after every test (for a test that crashed),
 * then removes the scratch cgroups and this run's cgroups in the other v1
 * hierarchies.
 */
#include "devcg.h"
#include "harness.h"
#include "runtime.h"
#include "scratch.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define BUSYBOX "/bin/busybox"
#define CMD_TIMEOUT_S 60

/* The container's device list (OCI), also the policy devcg installs. */
#define DEVICES_JSON                                                               \
	"[{\"allow\": false, \"access\": \"rwm\"},\n"                               \
	" {\"allow\": true, \"type\": \"c\", \"access\": \"m\"},\n"                 \
	" {\"allow\": true, \"type\": \"b\", \"access\": \"m\"},\n"                 \
	" {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 5, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 7, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 8, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 1, \"minor\": 9, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 5, \"minor\": 0, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 5, \"minor\": 2, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 136, \"access\": \"rwm\"}"
/* The device neither runtime allows by default: /dev/fuse (c 10:229). Its
 * open allocates a connection that closing frees; c 10:200 (tun) is no use
 * here, since runc allows it by default. */
#define FUSE_JSON ",\n {\"allow\": true, \"type\": \"c\", \"major\": 10, \"minor\": 229, \"access\": \"rwm\"}"
#define FUSE_RULE "c 10:229 rwm"

/* ---- small helpers --------------------------------------------------------- */

/* crun re-executes itself at start (CVE-2019-5736): from a read-only bind
 * mount of its binary (comm "crun") or from a sealed memfd ("memfd:crun_clon"). */
static bool crun_comm(const char *comm)
{
	return !strcmp(comm, "crun") || !strncmp(comm, "memfd:crun", 10);
}

const char *devcg_bin(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

/* DEVCG_READER, else devcg-reader beside devcg. */
static void reader_bin(char *buf, size_t size)
{
	const char *env = getenv("DEVCG_READER"), *bin = devcg_bin(), *slash;

	if (env) {
		snprintf(buf, size, "%s", env);
		return;
	}
	slash = strrchr(bin, '/');
	snprintf(buf, size, "%.*sdevcg-reader", slash ? (int)(slash - bin + 1) : 0, bin);
}

static bool in_path(const char *name)
{
	const char *path = getenv("PATH");
	char copy[4096], *dir, *save = NULL;

	snprintf(copy, sizeof(copy), "%s",
		 path && *path ? path : "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin");
	for (dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		char full[PATH_MAX];

		snprintf(full, sizeof(full), "%s/%s", dir, name);
		if (!access(full, X_OK))
			return true;
	}
	return false;
}

/* 1: a static ELF (no PT_INTERP), 0: dynamic, -1: not a 64-bit ELF. */
static int elf_is_static(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;

	if (fd < 0)
		return -1;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && !memcmp(eh.e_ident, ELFMAG, SELFMAG) &&
	    eh.e_ident[EI_CLASS] == ELFCLASS64) {
		ret = 1;
		for (int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + (uint64_t)i * eh.e_phentsize)) ==
				    (ssize_t)sizeof(ph) &&
			    ph.p_type == PT_INTERP)
				ret = 0;
		}
	}
	close(fd);
	return ret;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Reap PID within SECS seconds, else SIGKILL it (it is our child). */
static int wait_child(pid_t pid, int secs)
{
	uint64_t deadline = now_ms() + (uint64_t)secs * 1000;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		if (r < 0 && errno != EINTR)
			return -errno;
		if (now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			fprintf(stderr, "    pid %d: killed after %d s\n", (int)pid, secs);
			return 128 + SIGKILL;
		}
		usleep(500);
	}
}

static ssize_t read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0)
		return -errno;
	while (len + 1 < size) {
		ssize_t r = read(fd, buf + len, size - 1 - len);

		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	close(fd);
	return (ssize_t)len;
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "we");

	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) ? -errno : 0;
}

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC), out, err = 0;
	char buf[65536];
	ssize_t r;

	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while ((r = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)r) != r) {
			err = -EIO;
			break;
		}
	if (r < 0)
		err = -errno;
	close(in);
	if (close(out) && !err)
		err = -errno;
	chmod(dst, mode);
	return err;
}

static void mkdir_p(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	mkdir(buf, 0755);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static void rm_rf(const char *dir)
{
	nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * Run ARGV with its standard output (and standard error when ERR_TOO) in
 * BUF; the exit code, or 128 + signal. For commands that leave nothing
 * running behind them (devcg, ldd).
 */
static int run_capture(char *const argv[], char *buf, size_t size, bool err_too)
{
	int fds[2], rc;
	size_t len = 0;
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);

		dup2(null, 0);
		dup2(fds[1], 1);
		if (err_too)
			dup2(fds[1], 2);
		execvp(argv[0], argv);
		dprintf(fds[1], "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	for (;;) {
		char sink[4096];
		ssize_t r = read(fds[0], len + 1 < size ? buf + len : sink,
				 len + 1 < size ? size - 1 - len : sizeof(sink));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		if (len + 1 < size)
			len += (size_t)r;
	}
	close(fds[0]);
	if (size)
		buf[len] = 0;
	rc = wait_child(pid, CMD_TIMEOUT_S);
	return rc;
}

/* `devcg -j ARGS...`: its exit code; its JSON output in *OUT (or NULL). */
static int devcg_json(json_t **out, const char *const args[])
{
	char *argv[32], buf[1 << 16];
	size_t n = 0;
	int rc;

	argv[n++] = (char *)devcg_bin();
	argv[n++] = "-j";
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	rc = run_capture(argv, buf, sizeof(buf), false);
	if (out)
		*out = json_loads(buf, JSON_DISABLE_EOF_CHECK, NULL);
	return rc;
}

#define DEVCG(out, ...) devcg_json(out, (const char *const[]){ __VA_ARGS__, NULL })

long long jnum(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

const char *jstr(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	return json_is_string(v) ? json_string_value(v) : "";
}

/* The programs attached to CG itself, with their attach flags. */
static uint32_t attached(const char *cg, uint32_t *ids, uint32_t *flags)
{
	int fd = open(cg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	__u32 cnt = 64, f = 0;

	CHECK_MSG(fd >= 0, "open %s: %s", cg, strerror(errno));
	CHECK(!bpf_prog_query(fd, BPF_CGROUP_DEVICE, 0, &f, ids, &cnt));
	close(fd);
	if (flags)
		*flags = f;
	return cnt;
}

/* What a test found, with DEVCG_TEST_VERBOSE set. */
__attribute__((format(printf, 1, 2))) static void info(const char *fmt, ...)
{
	va_list ap;

	if (!getenv("DEVCG_TEST_VERBOSE"))
		return;
	printf("    info: ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/* ---- crun and RLIMIT_MEMLOCK ----------------------------------------------- */

/* Can this process raise RLIMIT_MEMLOCK to infinity, as crun 1.8.1 insists? */
static bool memlock_raisable(void)
{
	static int known; /* 0 unknown, 1 yes, 2 no */
	pid_t pid;

	if (known)
		return known == 1;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		struct rlimit inf = { RLIM_INFINITY, RLIM_INFINITY };

		_exit(setrlimit(RLIMIT_MEMLOCK, &inf) ? 1 : 0);
	}
	known = pid > 0 && wait_child(pid, 10) == 0 ? 1 : 2;
	return known == 1;
}

#if defined(__x86_64__)
#define SHIM_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SHIM_ARCH AUDIT_ARCH_AARCH64
#endif

/*
 * In the runtime's process, before exec: setrlimit(RLIMIT_MEMLOCK, ...) and
 * prlimit64(pid, RLIMIT_MEMLOCK, new, ...) with a new limit return 0 without
 * doing anything. Every other call, and reading the limit, is untouched.
 */
static int memlock_shim(void)
{
#ifdef SHIM_ARCH
#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define ARG_LO(n) offsetof(struct seccomp_data, args[n])
#define ARG_HI(n) (offsetof(struct seccomp_data, args[n]) + 4)
	struct sock_filter f[] = {
		LD(arch),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SHIM_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		LD(nr),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prlimit64, 0, 7),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(1)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RLIMIT_MEMLOCK, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 2), /* a new limit: no-op */
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(2)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
#ifdef __NR_setrlimit
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_setrlimit, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(0)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, RLIMIT_MEMLOCK, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
#endif
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };

	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -errno : 0;
#undef LD
#undef ARG_LO
#undef ARG_HI
#else
	return -ENOSYS;
#endif
}

static bool memlock_shim_available(void)
{
#ifdef SHIM_ARCH
	return true;
#else
	return false;
#endif
}

/* ---- containers ------------------------------------------------------------ */

/* In the child, before exec: the view of /sys/fs/cgroup the runtime gets. */
static void enter_view(const struct ctr *c)
{
	const char *cg2 = scratch_cgroup2_root();
	char path[PATH_MAX], empty[PATH_MAX], buf[256] = "";

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		fprintf(stderr, "private mount namespace: %s\n", strerror(errno));
		_exit(126);
	}
	if (c->mode == V2) {
		if (mount(c->scratch, "/sys/fs/cgroup", NULL, MS_BIND, NULL)) {
			fprintf(stderr, "bind %s on /sys/fs/cgroup: %s\n", c->scratch, strerror(errno));
			_exit(126);
		}
		return;
	}
	/* v1 on a hybrid host: a cgroup2 root with no controllers to offer */
	if (!cg2)
		return;
	snprintf(path, sizeof(path), "%s/cgroup.controllers", cg2);
	if (read_text(path, buf, sizeof(buf)) <= 0 || buf[0] == '\n')
		return;
	snprintf(empty, sizeof(empty), "%s/empty", c->dir);
	if (write_text(empty, "") || mount(empty, path, NULL, MS_BIND, NULL)) {
		fprintf(stderr, "bind an empty file on %s: %s\n", path, strerror(errno));
		_exit(126);
	}
}

static pid_t last_rt_pid;

/*
 * Run `RT --root DIR/state ARGS...` in the container's view, its standard
 * output and error appended to OUT; its exit code. The runtime process is
 * the forked child itself (last_rt_pid).
 */
static int rt_run_to(const struct ctr *c, const char *out, const char *const args[])
{
	char state[PATH_MAX], *argv[32];
	size_t n = 0;
	pid_t pid;

	snprintf(state, sizeof(state), "%s/state", c->dir);
	argv[n++] = (char *)c->rt;
	argv[n++] = "--root";
	argv[n++] = state;
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644),
		    null = open("/dev/null", O_RDONLY | O_CLOEXEC);

		if (fd < 0 || null < 0)
			_exit(126);
		dup2(null, 0);
		dup2(fd, 1);
		dup2(fd, 2);
		enter_view(c);
		if (c->shim && memlock_shim()) {
			fprintf(stderr, "memlock shim: %s\n", strerror(errno));
			_exit(126);
		}
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	last_rt_pid = pid;
	return wait_child(pid, CMD_TIMEOUT_S);
}

/* The same with the output in a new log file, read back into BUF. */
int rt_run(struct ctr *c, char *buf, size_t size, const char *const args[])
{
	char log[PATH_MAX];
	int rc;

	snprintf(log, sizeof(log), "%s/cmd-%d.log", c->dir, c->nlog++);
	rc = rt_run_to(c, log, args);
	if (read_text(log, buf, size) < 0 && size)
		buf[0] = 0;
	return rc;
}


/* Copy the file at PATH (following links) to the same path under ROOT. */
static void copy_into(const char *root, const char *path, mode_t mode)
{
	char dst[PATH_MAX], parent[PATH_MAX], *slash;
	int err;

	snprintf(dst, sizeof(dst), "%s%s", root, path);
	snprintf(parent, sizeof(parent), "%s", dst);
	slash = strrchr(parent, '/');
	*slash = 0;
	mkdir_p(parent);
	err = copy_file(path, dst, mode);
	CHECK_MSG(!err, "copy %s into the rootfs: %s", path, strerror(-err));
}

/* busybox and its applets, devcg-reader and the libraries ldd names. */
static void build_rootfs(const struct ctr *c)
{
	static const char *const applets[] = { "sh", "sleep", "head", "mknod", "cat", "ls", "echo", "true",
					       "grep", "rm", "mkdir" };
	static const char *const dirs[] = { "bin", "dev", "proc", "sys", "tmp" };
	char root[PATH_MAX], path[PATH_MAX], reader[PATH_MAX], out[8192];
	char *argv[] = { "ldd", reader, NULL }, *line, *save = NULL;
	int err;

	snprintf(root, sizeof(root), "%s/rootfs", c->dir);
	CHECK(!mkdir(root, 0755));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		CHECK(!mkdir(path, 0755));
	}
	snprintf(path, sizeof(path), "%s/bin/busybox", root);
	err = copy_file(BUSYBOX, path, 0755);
	CHECK_MSG(!err, "copy %s: %s", BUSYBOX, strerror(-err));
	for (size_t i = 0; i < sizeof(applets) / sizeof(applets[0]); i++) {
		snprintf(path, sizeof(path), "%s/bin/%s", root, applets[i]);
		CHECK(!symlink("busybox", path));
	}
	reader_bin(reader, sizeof(reader));
	snprintf(path, sizeof(path), "%s/devcg-reader", root);
	err = copy_file(reader, path, 0755);
	CHECK_MSG(!err, "copy %s: %s", reader, strerror(-err));
	if (elf_is_static(reader) == 1)
		return;
	/* "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)", "/lib64/ld-linux-x86-64.so.2 (0x...)" */
	CHECK_MSG(run_capture(argv, out, sizeof(out), true) == 0, "ldd %s: %s", reader, out);
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *tok, *s2 = NULL;

		for (tok = strtok_r(line, " \t", &s2); tok; tok = strtok_r(NULL, " \t", &s2))
			if (tok[0] == '/')
				copy_into(root, tok, 0755);
	}
}

static void write_config(const struct ctr *c, const char *cgroups_path, const struct bundle *b)
{
	static const struct bundle usual = { 0 };
	char path[PATH_MAX], resources[8192];
	FILE *f;

	if (!b)
		b = &usual;
	if (b->no_resources)
		snprintf(resources, sizeof(resources), "{}");
	else
		snprintf(resources, sizeof(resources), "{\"devices\": %s}",
			 b->resources ? b->resources : DEVICES_JSON "]");

	snprintf(path, sizeof(path), "%s/config.json", c->dir);
	f = fopen(path, "we");
	CHECK(f != NULL);
	fprintf(f,
		"{\n"
		"\"ociVersion\": \"1.0.2\",\n"
		"\"process\": {\n"
		"  \"terminal\": false,\n"
		"  \"user\": {\"uid\": 0, \"gid\": 0},\n"
		"  \"args\": %s,\n"
		"  \"env\": [\"PATH=/bin\"],\n"
		"  \"cwd\": \"/\",\n"
		"  \"capabilities\": {\"bounding\": [\"CAP_MKNOD\"], \"effective\": [\"CAP_MKNOD\"],\n"
		"                   \"permitted\": [\"CAP_MKNOD\"]},\n"
		"  \"noNewPrivileges\": true\n"
		"},\n"
		"\"root\": {\"path\": \"%s/rootfs\", \"readonly\": false},\n"
		"\"hostname\": \"devcg-test\",\n"
		"%s%s%s%s%s%s"
		"\"mounts\": [\n"
		"  {\"destination\": \"/proc\", \"type\": \"proc\", \"source\": \"proc\"},\n"
		"  {\"destination\": \"/dev\", \"type\": \"tmpfs\", \"source\": \"tmpfs\",\n"
		"   \"options\": [\"nosuid\", \"mode=755\", \"size=1m\"]}\n"
		"],\n"
		"\"linux\": {\n"
		"  \"cgroupsPath\": \"%s\",\n"
		"  \"resources\": %s,\n"
		"%s%s%s"
		"  \"namespaces\": [{\"type\": \"pid\"}, {\"type\": \"ipc\"}, {\"type\": \"uts\"},\n"
		"                 {\"type\": \"mount\"}, {\"type\": \"network\"}%s]%s\n"
		"}\n"
		"}\n",
		b->args ? b->args : "[\"/bin/sleep\", \"1000000\"]", c->dir,
		b->hooks ? "\"hooks\": " : "", b->hooks ? b->hooks : "", b->hooks ? ",\n" : "",
		b->annotations ? "\"annotations\": " : "", b->annotations ? b->annotations : "",
		b->annotations ? ",\n" : "", cgroups_path, resources,
		b->linux_devices ? "  \"devices\": " : "", b->linux_devices ? b->linux_devices : "",
		b->linux_devices ? ",\n" : "", b->userns ? ", {\"type\": \"user\"}" : "",
		b->userns ? ",\n  \"uidMappings\": [{\"containerID\": 0, \"hostID\": " USERNS_HOST_ID
			    ", \"size\": 65536}],\n  \"gidMappings\": [{\"containerID\": 0, \"hostID\": "
			    USERNS_HOST_ID ", \"size\": 65536}]" : "");
	CHECK(!fclose(f));
}

/* The containers of this test, for the atexit cleanup. */
static struct ctr *live[8];
static size_t nlive;
static pid_t live_owner;

static void other_hierarchies_cleanup(void);

void ctr_destroy(struct ctr *c)
{
	char out[4096];

	if (!c->dir[0])
		return;
	RT(c, out, "delete", "-f", c->id);
	rm_rf(c->dir);
	c->dir[0] = 0;
	if (c->mode == V1)
		other_hierarchies_cleanup();
}

static void destroy_live(void)
{
	if (getpid() != live_owner)
		return;
	for (size_t i = 0; i < nlive; i++)
		ctr_destroy(live[i]);
	nlive = 0;
}

/* Tell once per test that crun's memlock raise is made a no-op. */
static void say_shim(void)
{
	static bool said;

	if (said)
		return;
	said = true;
	printf("    note: no CAP_SYS_RESOURCE here: crun's raise of RLIMIT_MEMLOCK is made a no-op\n");
}

/* Make the bundle of B (NULL: the usual one), then `RT run -d`; its exit
 * code, its output in OUT. */
static int ctr_create(struct ctr *c, const char *rt, enum mode mode, const struct bundle *b, char *out,
		      size_t outlen)
{
	static unsigned int seq;
	char cgpath[PATH_MAX], record[PATH_MAX], text[PATH_MAX + 128];
	const char *root = mode == V2 ? scratch_cgroup2_root() : scratch_devices_root(), *base;

	memset(c, 0, sizeof(*c));
	c->rt = rt;
	c->mode = mode;
	/* crun loads a BPF program only on cgroup v2 */
	c->shim = !strcmp(rt, "crun") && mode == V2 && !memlock_raisable();
	if (c->shim)
		say_shim();
	snprintf(c->dir, sizeof(c->dir), "/tmp/devcg-test-%s-rt-XXXXXX", scratch_tag());
	CHECK_MSG(mkdtemp(c->dir) != NULL, "mkdtemp: %s", strerror(errno));
	if (!live_owner) {
		live_owner = getpid();
		atexit(destroy_live);
	}
	CHECK(nlive < sizeof(live) / sizeof(live[0]));
	live[nlive++] = c;
	snprintf(c->id, sizeof(c->id), "devcg-test-%s-%u", scratch_tag(), seq++);
	CHECK(!scratch_cgroup_create(root, c->scratch, sizeof(c->scratch)));
	if (mode == V2) {
		snprintf(cgpath, sizeof(cgpath), "/ctr");
	} else {
		base = strrchr(c->scratch, '/') + 1;
		snprintf(cgpath, sizeof(cgpath), "/%s/ctr", base);
	}
	snprintf(c->cg, sizeof(c->cg), "%s/ctr", c->scratch);
	snprintf(c->rel, sizeof(c->rel), "%s", c->cg + (strcmp(root, "/") ? strlen(root) : 0));
	/* what the suite's cleanup hook needs to delete it after a crash */
	snprintf(record, sizeof(record), "%s/record", c->dir);
	snprintf(text, sizeof(text), "%s %d %s %s\n", rt, (int)mode, c->id, c->scratch);
	CHECK(!write_text(record, text));
	build_rootfs(c);
	/* the container's root (host uid USERNS_HOST_ID) walks to its rootfs */
	if (b && b->userns)
		CHECK(!chmod(c->dir, 0711));
	write_config(c, cgpath, b);
	return rt_run(c, out, outlen, (const char *const[]){ "run", "-d", "--bundle", c->dir, c->id, NULL });
}

/* The same, which must succeed: the container sleeps in its cgroup. */
void ctr_start_with(struct ctr *c, const char *rt, enum mode mode, const struct bundle *b)
{
	char out[8192];
	int rc = ctr_create(c, rt, mode, b, out, sizeof(out));

	CHECK_MSG(rc == 0, "%s run: exit %d: %s", rt, rc, out);
	CHECK_MSG(access(c->cg, F_OK) == 0, "%s made no cgroup %s", rt, c->cg);
}

void ctr_start(struct ctr *c, const char *rt, enum mode mode)
{
	ctr_start_with(c, rt, mode, NULL);
}

/*
 * Open /dev/fuse (c 10:229) in the container, made with mknod there first:
 * 0 when the open succeeded, EPERM when the device cgroup refused it.
 */
static int fuse_open_in(struct ctr *c)
{
	char out[4096];
	int rc = RT(c, out, "exec", c->id, "/bin/sh", "-c",
		    "[ -c /dev/fuse ] || mknod /dev/fuse c 10 229 || exit 3; head -c0 /dev/fuse");

	if (rc == 0)
		return 0;
	if (rc == 1 && strstr(out, "/dev/fuse: Operation not permitted"))
		return EPERM;
	test_fail(__FILE__, __LINE__, "opening c 10:229 in the container: exit %d: %s", rc, out);
}

void creader_refused_control(struct ctr *c)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *pol = devcg_policy_new();
	const char *text = "deny a\nallow c 1:3 rwm\n";
	unsigned long long eperm[2], opens[2];
	struct creader r;

	CHECK(!devcg_rules_parse(rules, text, strlen(text), "control", NULL, NULL) &&
	      !devcg_policy_apply_all(pol, rules, NULL) && !devcg_replace(c->cg, pol, NULL, NULL));
	devcg_rules_free(rules);
	devcg_policy_free(pol);
	creader_start(c, &r);
	usleep(100 * 1000);
	creader_stop(&r, eperm, opens);
	CHECK(eperm[0] > 0 && eperm[0] == opens[0]);
	CHECK_INT(eperm[1], 0);
}

void reattach_gap(const char *cgroup, uint32_t id)
{
	int cfd = open(cgroup, O_RDONLY | O_DIRECTORY | O_CLOEXEC), pfd = bpf_prog_get_fd_by_id(id);

	CHECK(cfd >= 0 && pfd >= 0);
	CHECK(!bpf_prog_detach2(pfd, cfd, BPF_CGROUP_DEVICE));
	usleep(2000);
	CHECK(!bpf_prog_attach(pfd, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	close(pfd);
	close(cfd);
}

void creader_start(struct ctr *c, struct creader *r)
{
	char pidf[PATH_MAX], buf[8192];
	int rc, n = c->nlog++;

	snprintf(r->out, sizeof(r->out), "%s/reader-%d.out", c->dir, n);
	snprintf(pidf, sizeof(pidf), "%s/reader-%d.pid", c->dir, n);
	rc = rt_run_to(c, r->out, (const char *const[]){ "exec", "-d", "--pid-file", pidf, c->id,
							 "/devcg-reader", "/dev/urandom", "/dev/null", NULL });
	read_text(r->out, buf, sizeof(buf));
	CHECK_MSG(rc == 0, "%s exec devcg-reader: exit %d: %s", c->rt, rc, buf);
	CHECK(read_text(pidf, buf, sizeof(buf)) > 0);
	r->pid = (pid_t)strtol(buf, NULL, 10);
	CHECK(r->pid > 1);
	for (int i = 0; i < 1000; i++) {
		read_text(r->out, buf, sizeof(buf));
		if (strstr(buf, "ready\n")) {
			usleep(20 * 1000);
			return;
		}
		usleep(10 * 1000);
	}
	test_fail(__FILE__, __LINE__, "devcg-reader in the container did not start: %s", buf);
}

/* Stop it; its EPERMs and opens, [0] /dev/urandom, [1] /dev/null. */
void creader_stop(struct creader *r, unsigned long long eperm[2], unsigned long long opens[2])
{
	char buf[8192];
	int found = 0;

	CHECK(!kill(r->pid, SIGTERM));
	for (int i = 0; i < 1000 && found < 2; i++) {
		char *line, *save = NULL;

		usleep(10 * 1000);
		read_text(r->out, buf, sizeof(buf));
		found = 0;
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			unsigned long long o, e, other;
			char path[64];

			if (sscanf(line, "%63s opens=%llu eperm=%llu other=%llu", path, &o, &e, &other) != 4)
				continue;
			int k = !strcmp(path, "/dev/urandom") ? 0 : !strcmp(path, "/dev/null") ? 1 : -1;

			if (k < 0)
				continue;
			opens[k] = o;
			eperm[k] = e;
			CHECK_MSG(other == 0, "%s: %llu opens failed otherwise than EPERM", path, other);
			found++;
		}
	}
	CHECK_MSG(found == 2, "devcg-reader in the container did not report: %s", buf);
}

/* ---- the trace ------------------------------------------------------------- */


/* `devcg -j trace --cgroup REL`, its lines in a file; returns once tracing. */
void tracer_start(struct tracer *t, struct ctr *c)
{
	char buf[256];

	snprintf(t->out, sizeof(t->out), "%s/trace.json", c->dir);
	fflush(NULL);
	t->pid = fork();
	CHECK(t->pid >= 0);
	if (t->pid == 0) {
		int fd = open(t->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0)
			_exit(126);
		prctl(PR_SET_PDEATHSIG, SIGKILL); /* it ends with the test */
		dup2(fd, 1);
		execl(devcg_bin(), devcg_bin(), "-j", "trace", "--duration", "300", "--cgroup", c->rel,
		      (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 2000; i++) {
		if (read_text(t->out, buf, sizeof(buf)) > 0 && strstr(buf, "\"hooks\"")) {
			usleep(20 * 1000);
			return;
		}
		CHECK_MSG(waitpid(t->pid, NULL, WNOHANG) == 0, "devcg trace exited early");
		usleep(10 * 1000);
	}
	test_fail(__FILE__, __LINE__, "devcg trace did not start");
}

/* Every JSON line so far that PRED accepts (all with PRED NULL). */
static json_t *trace_lines(const char *path, bool (*pred)(json_t *))
{
	json_t *all = json_array();
	char line[16384];
	FILE *f = fopen(path, "re");

	CHECK(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);

		if (!o)
			continue; /* the last line may be half written */
		if (!pred || pred(o))
			json_array_append(all, o);
		json_decref(o);
	}
	fclose(f);
	return all;
}

/* Stop it (SIGINT, as Ctrl-C) and return its lines. */
json_t *tracer_stop(struct tracer *t)
{
	int rc;

	usleep(200 * 1000); /* the reorder delay */
	CHECK(!kill(t->pid, SIGINT));
	rc = wait_child(t->pid, 30);
	CHECK_MSG(rc == 0, "devcg trace failed: %d", rc);
	return trace_lines(t->out, NULL);
}

static bool is_gap_with_victims(json_t *o)
{
	return !strcmp(jstr(o, "type"), "gap") && jnum(o, "denied") > 0;
}

size_t count_gaps(json_t *all)
{
	size_t i, n = 0;
	json_t *o;

	json_array_foreach(all, i, o)
		n += !strcmp(jstr(o, "type"), "gap");
	return n;
}

static bool has_flag(json_t *o, const char *flag)
{
	json_t *flags = json_object_get(o, "flags"), *f;
	size_t i;

	json_array_foreach(flags, i, f)
		if (json_is_string(f) && !strcmp(json_string_value(f), flag))
			return true;
	return false;
}

/* ---- requirements and cleanup ---------------------------------------------- */

static void runtimes_cleanup(void);

void need(const char *rt, enum mode mode)
{
	char reader[PATH_MAX];
	int st;

	if (geteuid() != 0)
		SKIP("needs root");
	if (!in_path(rt))
		SKIP("%s is not installed (Debian package %s)", rt, rt);
	st = elf_is_static(BUSYBOX);
	if (st < 0)
		SKIP("busybox-static is not installed (no %s for the container's rootfs)", BUSYBOX);
	if (st == 0)
		SKIP("%s is dynamically linked: the container's rootfs needs busybox-static", BUSYBOX);
	if (mode == V2 && !scratch_cgroup2_root())
		SKIP("no cgroup2 mount");
	if (mode == V1 && !scratch_devices_root())
		SKIP("the cgroup v1 devices controller is not mounted (pure cgroup v2 host)");
	if (!strcmp(rt, "crun") && mode == V2 && !memlock_raisable() && !memlock_shim_available())
		SKIP("crun cannot raise RLIMIT_MEMLOCK here and no seccomp shim for this architecture");
	reader_bin(reader, sizeof(reader));
	CHECK_MSG(access(devcg_bin(), X_OK) == 0, "%s is not built", devcg_bin());
	CHECK_MSG(access(reader, X_OK) == 0, "%s is not built", reader);
	CHECK_MSG(test_cleanup_hook == runtimes_cleanup,
		  "the runtimes' cleanup hook is not installed (constructor order changed?)");
}

/* Remove CG and the cgroups below it (their processes are this run's). */
static void remove_cgroup_tree(const char *cg)
{
	char buf[8192], *p, *end;
	DIR *d = opendir(cg);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char sub[PATH_MAX];

		if (e->d_type != DT_DIR || !strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", cg, e->d_name);
		remove_cgroup_tree(sub);
	}
	closedir(d);
	for (int i = 0; i < 2000; i++) {
		if (!rmdir(cg) || errno == ENOENT)
			return;
		if (errno != EBUSY)
			break;
		/* only this run's containers ever ran in a cgroup of this name */
		snprintf(buf, sizeof(buf), "%s/cgroup.procs", cg);
		if (read_text(buf, buf, sizeof(buf)) > 0)
			for (p = buf; *p; p = end) {
				long pid = strtol(p, &end, 10);

				if (end == p)
					break;
				if (pid > 1 && pid != getpid())
					kill((pid_t)pid, SIGKILL);
			}
		usleep(1000);
	}
	fprintf(stderr, "    runtimes: rmdir %s: %s\n", cg, strerror(errno));
}

/*
 * On cgroup v1 the runtimes make the container's cgroup in every hierarchy:
 * remove this run's in those the scratch cleanup does not cover (cpu,
 * memory, pids, name=systemd, ...).
 */
static void other_hierarchies_cleanup(void)
{
	const char *skip[3] = { scratch_cgroup2_root(), scratch_devices_root(), scratch_freezer_root() };
	char line[4096], prefix[64];
	FILE *f = fopen("/proc/self/mountinfo", "re");

	if (!f)
		return;
	snprintf(prefix, sizeof(prefix), "devcg-test-%s-", scratch_tag());
	while (fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], fstype[64], *sep = strstr(line, " - ");
		bool skipped = false;
		DIR *d;
		struct dirent *e;

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 ||
		    (strcmp(fstype, "cgroup") && strcmp(fstype, "cgroup2")))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1 || strchr(mnt, '\\'))
			continue;
		for (int i = 0; i < 3; i++)
			skipped |= skip[i] && !strcmp(skip[i], mnt);
		if (skipped || !(d = opendir(mnt)))
			continue;
		while ((e = readdir(d))) {
			char path[PATH_MAX];

			if (e->d_type != DT_DIR || strncmp(e->d_name, prefix, strlen(prefix)))
				continue;
			snprintf(path, sizeof(path), "%s/%s", mnt, e->d_name);
			remove_cgroup_tree(path);
		}
		closedir(d);
	}
	fclose(f);
}

/*
 * The suite's cleanup hook (in the harness parent, after every test): the
 * containers a test left (it crashed) are deleted with their runtime and
 * their directories removed, then the scratch cgroups, then this run's
 * cgroups in the other v1 hierarchies.
 */
static void runtimes_cleanup(void)
{
	char prefix[64];
	DIR *d = opendir("/tmp");
	struct dirent *e;

	snprintf(prefix, sizeof(prefix), "devcg-test-%s-rt-", scratch_tag());
	while (d && (e = readdir(d))) {
		struct ctr c = { 0 };
		char record[PATH_MAX], text[PATH_MAX + 128], rt[16], out[1024];
		int mode;

		if (strncmp(e->d_name, prefix, strlen(prefix)))
			continue;
		snprintf(c.dir, sizeof(c.dir), "/tmp/%s", e->d_name);
		snprintf(record, sizeof(record), "%s/record", c.dir);
		if (read_text(record, text, sizeof(text)) > 0 &&
		    sscanf(text, "%15s %d %63s %4095s", rt, &mode, c.id, c.scratch) == 4 &&
		    (!strcmp(rt, "runc") || !strcmp(rt, "crun"))) {
			c.rt = !strcmp(rt, "runc") ? "runc" : "crun";
			c.mode = mode == V1 ? V1 : V2;
			c.shim = !strcmp(rt, "crun") && c.mode == V2 && !memlock_raisable();
			RT(&c, out, "delete", "-f", c.id);
		}
		rm_rf(c.dir);
	}
	if (d)
		closedir(d);
	scratch_cleanup();
	other_hierarchies_cleanup();
}

/* After scratch.c's constructor (link order), which installs scratch_cleanup;
 * need() checks that this one is in place. */
__attribute__((constructor)) static void runtimes_init(void)
{
	test_cleanup_hook = runtimes_cleanup;
}

/* ---- 1. devcg adopts the runtime's program --------------------------------- */

static char *config_of(struct ctr *c, char *buf, size_t size)
{
	snprintf(buf, size, "%s/config.json", c->dir);
	return buf;
}

/* The programs devcg show lists for CG; CHECKs that there is exactly one. */
static json_t *show_one(const char *cg)
{
	json_t *o = NULL, *progs, *p;
	int rc = DEVCG(&o, "show", cg);

	CHECK_MSG(rc == 0 && o, "devcg show %s: exit %d", cg, rc);
	progs = json_object_get(o, "programs");
	CHECK_MSG(json_array_size(progs) == 1, "devcg show: %zu programs", json_array_size(progs));
	p = json_incref(json_array_get(progs, 0));
	json_decref(o);
	return p;
}

static void adopt_with_no_eperm(const char *rt)
{
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	uint32_t ids[64], flags, runtime_id, id;
	char config[PATH_MAX], rule_fuse[] = "allow " FUSE_RULE;
	struct creader r;
	struct ctr c;
	json_t *o, *p;
	int rc;

	need(rt, V2);
	ctr_start(&c, rt, V2);

	/* the container carries the runtime's own program, and only that */
	CHECK_INT(attached(c.cg, ids, &flags), 1);
	CHECK(flags & BPF_F_ALLOW_MULTI);
	runtime_id = ids[0];
	p = show_one(c.cg);
	CHECK(json_is_false(json_object_get(p, "devcg")));
	CHECK_INT(jnum(p, "id"), runtime_id);
	CHECK_STR(jstr(p, "mode"), "multi");
	json_decref(p);

	/* adopt it, then swap 100 times, under a reader in the container */
	creader_start(&c, &r);
	rc = DEVCG(&o, "replace", c.cg, "-f", config_of(&c, config, sizeof(config)));
	CHECK_MSG(rc == 0 && o, "devcg replace: exit %d", rc);
	CHECK_INT(jnum(o, "replaced_id"), runtime_id);
	id = (uint32_t)jnum(o, "prog_id");
	json_decref(o);
	for (int i = 0; i < 100; i++) {
		/* the last one (i = 99) installs the container's own list */
		rc = i % 2 ? DEVCG(&o, "replace", c.cg, "-f", config)
			   : DEVCG(&o, "replace", c.cg, "-f", config, rule_fuse);
		CHECK_MSG(rc == 0 && o, "devcg replace: exit %d", rc);
		CHECK_INT(jnum(o, "replaced_id"), id);
		id = (uint32_t)jnum(o, "prog_id");
		json_decref(o);
	}
	creader_stop(&r, eperm, opens);
	CHECK_MSG(opens[0] > 1000 && opens[1] > 1000, "the reader opened only %llu/%llu times", opens[0],
		  opens[1]);
	CHECK_INT(eperm[0], 0);
	CHECK_INT(eperm[1], 0);
	info("%s program %u adopted, then 100 swaps: the reader opened %llu + %llu times, 0 EPERM", rt,
	     runtime_id, opens[0], opens[1]);

	/* devcg's program alone, as devcg show reports */
	p = show_one(c.cg);
	CHECK(json_is_true(json_object_get(p, "devcg")));
	CHECK_INT(jnum(p, "id"), id);
	CHECK_STR(jstr(p, "mode"), "multi");
	json_decref(p);
	CHECK_INT(attached(c.cg, ids, NULL), 1);
	CHECK_INT(ids[0], id);

	/* control: the same reader is refused under a policy without urandom */
	creader_refused_control(&c);
	ctr_destroy(&c);
}

TEST(runc_v2_devcg_replace_adopts_runcs_own_program_with_no_eperm_in_the_container)
{
	adopt_with_no_eperm("runc");
}

TEST(crun_v2_devcg_replace_adopts_cruns_own_program_with_no_eperm_in_the_container)
{
	adopt_with_no_eperm("crun");
}

static void allow_grants(const char *rt)
{
	char config[PATH_MAX];
	struct ctr c;
	json_t *o, *p;
	uint32_t id;
	int rc;

	need(rt, V2);
	ctr_start(&c, rt, V2);
	/* negative controls: the runtime's program refuses c 10:229, and so does
	 * devcg's filter of the container's own list */
	CHECK_INT(fuse_open_in(&c), EPERM);
	rc = DEVCG(NULL, "replace", c.cg, "-f", config_of(&c, config, sizeof(config)));
	CHECK_INT(rc, 0);
	CHECK_INT(fuse_open_in(&c), EPERM);

	rc = DEVCG(&o, "allow", c.cg, FUSE_RULE);
	CHECK_MSG(rc == 0 && o, "devcg allow: exit %d", rc);
	id = (uint32_t)jnum(o, "prog_id");
	json_decref(o);
	CHECK_INT(fuse_open_in(&c), 0);
	p = show_one(c.cg);
	CHECK(json_is_true(json_object_get(p, "devcg")));
	CHECK_INT(jnum(p, "id"), id);
	json_decref(p);
	/* what the runtime allowed is still allowed */
	{
		char out[1024];

		rc = RT(&c, out, "exec", c.id, "/bin/sh", "-c", "head -c1 /dev/urandom >/dev/null");
		CHECK_MSG(rc == 0, "reading /dev/urandom in the container: exit %d: %s", rc, out);
	}
	ctr_destroy(&c);
}

TEST(runc_v2_devcg_allow_grants_a_device_runc_had_denied)
{
	allow_grants("runc");
}

TEST(crun_v2_devcg_allow_grants_a_device_crun_had_denied)
{
	allow_grants("crun");
}

/* ---- 2. what a runtime's update does, as devcg trace sees it --------------- */

/* A LinuxResources file for `RT update -r`: the container's list, and
 * c 10:229 too when WITH_FUSE. */
static void write_update(struct ctr *c, char *path, size_t size, bool with_fuse)
{
	char text[4096];

	snprintf(path, size, "%s/update%s.json", c->dir, with_fuse ? "-fuse" : "");
	snprintf(text, sizeof(text), "{\"devices\": %s%s]}\n", DEVICES_JSON, with_fuse ? FUSE_JSON : "");
	CHECK(!write_text(path, text));
}

static bool pid_in(pid_t pid, const pid_t *pids, int n)
{
	for (int i = 0; i < n; i++)
		if (pids[i] == pid)
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* devices.list of CG, its lines sorted (the kernel keeps insertion order). */
static void devices_list_sorted(const char *cg, char *out, size_t size)
{
	char buf[8192], *lines[256], *line, *save = NULL;
	size_t n = 0;

	CHECK(scratch_cgroup_read(cg, "devices.list", buf, sizeof(buf)) > 0);
	for (line = strtok_r(buf, "\n", &save); line && n < 256; line = strtok_r(NULL, "\n", &save))
		lines[n++] = line;
	qsort(lines, n, sizeof(lines[0]), cmp_str);
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		strncat(out, lines[i], size - strlen(out) - 2);
		strcat(out, "\n");
	}
}

TEST(crun_update_on_v1_is_a_deny_all_gap_that_trace_reports_with_writer_and_victims)
{
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	char update[PATH_MAX], before[8192], after[8192], out[4096];
	size_t i, deny_a = 0, gaps = 0, with_victims = 0, denied = 0, victims_seen = 0;
	bool lost = false;
	pid_t pids[200];
	int n = 0, rc;
	struct tracer t;
	struct creader r;
	struct ctr c;
	json_t *all, *o;

	need("crun", V1);
	ctr_start(&c, "crun", V1);
	devices_list_sorted(c.cg, before, sizeof(before));
	CHECK(strstr(before, "c 1:9 rwm\n") && !strstr(before, "a *:* rwm"));
	/* the same list again: an update that changes nothing */
	write_update(&c, update, sizeof(update), false);
	tracer_start(&t, &c);
	creader_start(&c, &r);
	/* until the trace has reported victims (at least 10 updates) */
	while (n < 200) {
		rc = RT(&c, out, "update", "-r", update, c.id);
		CHECK_MSG(rc == 0, "crun update: exit %d: %s", rc, out);
		pids[n++] = last_rt_pid;
		if (n >= 10) {
			json_t *v = trace_lines(t.out, is_gap_with_victims);

			victims_seen = json_array_size(v);
			json_decref(v);
			if (victims_seen)
				break;
		}
	}
	creader_stop(&r, eperm, opens);
	all = tracer_stop(&t);
	CHECK_MSG(eperm[0] + eperm[1] > 0, "%d updates, and the reader was never refused", n);
	json_array_foreach(all, i, o) {
		const char *type = jstr(o, "type");

		if (!strcmp(type, "cgroup_write") && !strcmp(jstr(o, "file"), "devices.deny") &&
		    !strcmp(jstr(o, "data"), "a")) {
			CHECK_STR(jstr(o, "cgroup"), c.rel);
			CHECK_MSG(crun_comm(jstr(o, "comm")), "comm is \"%s\"", jstr(o, "comm"));
			CHECK(pid_in((pid_t)jnum(o, "pid"), pids, n));
			deny_a++;
		} else if (!strcmp(type, "gap")) {
			CHECK_STR(jstr(o, "kind"), "v1_deny_all");
			CHECK_STR(jstr(o, "cgroup"), c.rel);
			CHECK_MSG(crun_comm(jstr(o, "writer_comm")), "writer_comm is \"%s\"", jstr(o, "writer_comm"));
			CHECK(pid_in((pid_t)jnum(o, "writer_pid"), pids, n));
			CHECK(jnum(o, "window_ns") > 0 && jnum(o, "window_ns") < 1000000000LL);
			CHECK(jnum(o, "rules") >= 11); /* the list replayed */
			CHECK_STR(jstr(o, "freeze"), "none"); /* crun does not freeze */
			gaps++;
			lost |= json_is_true(json_object_get(o, "lost"));
			if (jnum(o, "denied") > 0) {
				with_victims++;
				denied += (size_t)jnum(o, "denied");
				CHECK(json_array_size(json_object_get(o, "devices")) >= 1);
			}
		} else if (!strcmp(type, "open_denied")) {
			CHECK_STR(jstr(o, "comm"), "devcg-reader");
			CHECK_STR(jstr(o, "devices_cgroup"), c.rel);
		}
	}
	info("%d crun updates: %zu gaps, %zu with victims (%zu denied opens); the reader saw %llu EPERM",
	     n, gaps, with_victims, denied, eperm[0] + eperm[1]);
	CHECK_INT(deny_a, n);  /* every update wrote 'a' first */
	CHECK_INT(gaps, n);    /* and each was reported as one gap */
	CHECK(with_victims > 0 && denied > 0);
	/* every EPERM the reader met is one of the gaps' victims */
	if (!lost)
		CHECK_INT(denied, eperm[0] + eperm[1]);
	/* the rules afterwards are the rules before: the gap was for nothing */
	devices_list_sorted(c.cg, after, sizeof(after));
	CHECK_STR(after, before);
	json_decref(all);
	ctr_destroy(&c);
}

TEST(crun_update_on_v2_replaces_its_program_atomically_and_trace_reports_no_gap)
{
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	char update[PATH_MAX], update_fuse[PATH_MAX], out[4096];
	uint32_t ids[64], prev, now;
	size_t i, changes = 0, control = 0, control_gaps = 0;
	pid_t pids[20];
	struct tracer t;
	struct creader r;
	struct ctr c;
	json_t *all, *o;
	int rc;

	need("crun", V2);
	ctr_start(&c, "crun", V2);
	CHECK_INT(attached(c.cg, ids, NULL), 1);
	prev = ids[0];
	CHECK_INT(fuse_open_in(&c), EPERM);
	write_update(&c, update, sizeof(update), false);
	write_update(&c, update_fuse, sizeof(update_fuse), true);
	tracer_start(&t, &c);
	creader_start(&c, &r);
	for (int k = 0; k < 20; k++) {
		/* the last one (k = 19) adds c 10:229 */
		rc = RT(&c, out, "update", "-r", k % 2 ? update_fuse : update, c.id);
		CHECK_MSG(rc == 0, "crun update: exit %d: %s", rc, out);
		pids[k] = last_rt_pid;
	}
	creader_stop(&r, eperm, opens);
	CHECK(opens[0] > 100);
	CHECK_INT(eperm[0], 0);
	CHECK_INT(eperm[1], 0);
	/* the update took effect, and crun's new program is the only one */
	CHECK_INT(fuse_open_in(&c), 0);
	CHECK_INT(attached(c.cg, ids, NULL), 1);
	now = ids[0];
	CHECK(now != prev);

	/* control: a detach-then-attach of the same program is a gap to the trace */
	reattach_gap(c.cg, now);

	all = tracer_stop(&t);
	json_array_foreach(all, i, o) {
		const char *type = jstr(o, "type");

		if (!strcmp(type, "bpf_prog_change") && (pid_t)jnum(o, "pid") == getpid()) {
			control++;
		} else if (!strcmp(type, "bpf_prog_change")) {
			json_t *progs = json_object_get(o, "prog_ids");

			CHECK_MSG(crun_comm(jstr(o, "comm")), "comm is \"%s\"", jstr(o, "comm"));
			CHECK(pid_in((pid_t)jnum(o, "pid"), pids, 20));
			CHECK_STR(jstr(o, "cgroup"), c.rel);
			CHECK_STR(jstr(o, "op"), "prog_attach");
			CHECK(has_flag(o, "multi") && has_flag(o, "replace"));
			CHECK_INT(json_array_size(progs), 2);
			/* [new, replaced]: each update replaces the previous program */
			CHECK_INT(json_integer_value(json_array_get(progs, 1)), prev);
			CHECK_INT(jnum(o, "ret"), 0);
			prev = (uint32_t)json_integer_value(json_array_get(progs, 0));
			changes++;
		} else if (!strcmp(type, "gap")) {
			CHECK_MSG((pid_t)jnum(o, "writer_pid") == getpid(), "a gap by %s (pid %lld)",
				  jstr(o, "writer_comm"), jnum(o, "writer_pid"));
			CHECK_STR(jstr(o, "kind"), "v2_no_filter");
			control_gaps++;
		} else {
			CHECK_MSG(strcmp(type, "open_denied"), "a denied open: %s", jstr(o, "path"));
		}
	}
	CHECK_INT(changes, 20); /* one BPF_F_REPLACE attach per update */
	CHECK_INT(prev, now);
	CHECK_INT(control, 2);
	CHECK_INT(control_gaps, 1);
	json_decref(all);
	ctr_destroy(&c);
}

TEST(runc_update_on_v1_writes_no_device_rules)
{
	char update[PATH_MAX], before[8192], after[8192], out[4096];
	size_t i, writes = 0, control = 0;
	struct tracer t;
	struct ctr c;
	json_t *all, *o;
	int rc;

	need("runc", V1);
	ctr_start(&c, "runc", V1);
	devices_list_sorted(c.cg, before, sizeof(before));
	CHECK(strstr(before, "c 1:9 rwm\n") && !strstr(before, "c 10:229"));
	write_update(&c, update, sizeof(update), true);
	tracer_start(&t, &c);
	for (int k = 0; k < 5; k++) {
		rc = RT(&c, out, "update", "-r", update, c.id);
		CHECK_MSG(rc == 0, "runc update: exit %d: %s", rc, out);
	}
	/* control: a write the trace must see (a rule already there) */
	CHECK(!scratch_cgroup_write(c.cg, "devices.allow", "c 1:3 rwm"));
	all = tracer_stop(&t);
	json_array_foreach(all, i, o) {
		if (strcmp(jstr(o, "type"), "cgroup_write") || strncmp(jstr(o, "file"), "devices.", 8))
			continue;
		if ((pid_t)jnum(o, "pid") == getpid())
			control++;
		else
			writes++;
	}
	CHECK_INT(writes, 0);
	CHECK_INT(control, 1);
	CHECK_INT(count_gaps(all), 0);
	/* the list in the update (with c 10:229) was not applied */
	devices_list_sorted(c.cg, after, sizeof(after));
	CHECK_STR(after, before);
	json_decref(all);
	ctr_destroy(&c);
}

TEST(runc_update_on_v2_leaves_the_device_program_alone)
{
	char update[PATH_MAX], config[PATH_MAX], out[4096];
	uint32_t ids[64], runtime_id;
	size_t i, runc_changes = 0, control = 0;
	struct tracer t;
	struct ctr c;
	json_t *all, *o;
	int rc;

	need("runc", V2);
	ctr_start(&c, "runc", V2);
	CHECK_INT(attached(c.cg, ids, NULL), 1);
	runtime_id = ids[0];
	write_update(&c, update, sizeof(update), true);
	tracer_start(&t, &c);
	for (int k = 0; k < 5; k++) {
		rc = RT(&c, out, "update", "-r", update, c.id);
		CHECK_MSG(rc == 0, "runc update: exit %d: %s", rc, out);
	}
	CHECK_INT(attached(c.cg, ids, NULL), 1);
	CHECK_INT(ids[0], runtime_id);
	/* the list in the update (with c 10:229) was not applied */
	CHECK_INT(fuse_open_in(&c), EPERM);
	/* control: a change the trace must see */
	CHECK_INT(DEVCG(NULL, "replace", c.cg, "-f", config_of(&c, config, sizeof(config))), 0);
	all = tracer_stop(&t);
	json_array_foreach(all, i, o) {
		if (strcmp(jstr(o, "type"), "bpf_prog_change"))
			continue;
		if (!strcmp(jstr(o, "comm"), "devcg"))
			control++;
		else
			runc_changes++;
	}
	CHECK_INT(runc_changes, 0);
	CHECK_INT(control, 1);
	CHECK_INT(count_gaps(all), 0);
	json_decref(all);
	ctr_destroy(&c);
}

/* ---- 3. the policy a runtime installs, probe by probe ---------------------- */

/*
 * The device nodes probed in a container: every default of either runtime,
 * tun and fuse, an unlisted misc minor, an unlisted char and block major
 * (42, no driver: the open fails with ENXIO once the cgroup allows it) with
 * several minors, pts minors under a wildcard, and a loop device. None is a
 * device whose driver itself refuses with EPERM without capabilities.
 */
static const struct {
	char type;
	unsigned int major, minor;
} probed[] = {
	{ 'c', 1, 3 },   { 'c', 1, 5 },    { 'c', 1, 7 },   { 'c', 1, 8 },   { 'c', 1, 9 },
	{ 'c', 5, 0 },   { 'c', 5, 1 },    { 'c', 5, 2 },   { 'c', 136, 0 }, { 'c', 136, 7 },
	{ 'c', 10, 200 }, { 'c', 10, 229 }, { 'c', 10, 250 }, { 'c', 42, 0 },  { 'c', 42, 9 },
	{ 'b', 7, 0 },   { 'b', 42, 0 },   { 'b', 42, 3 },
};
#define NPROBED (sizeof(probed) / sizeof(probed[0]))

/* The container's first process (its init). */
static pid_t ctr_pid(const struct ctr *c)
{
	char buf[256];

	CHECK(scratch_cgroup_read(c->cg, "cgroup.procs", buf, sizeof(buf)) > 0);
	return (pid_t)strtol(buf, NULL, 10);
}

/* Make the probed nodes in the container's /dev/p, from the host (outside
 * the container's cgroup, so a policy without mknod cannot stop it). */
static void make_probe_nodes(const struct ctr *c)
{
	char dir[PATH_MAX], node[PATH_MAX + 32];

	snprintf(dir, sizeof(dir), "/proc/%d/root/dev/p", (int)ctr_pid(c));
	CHECK_MSG(!mkdir(dir, 0755) || errno == EEXIST, "mkdir %s: %s", dir, strerror(errno));
	for (size_t i = 0; i < NPROBED; i++) {
		snprintf(node, sizeof(node), "%s/%c-%u-%u", dir, probed[i].type, probed[i].major, probed[i].minor);
		CHECK_MSG(!mknod(node, (probed[i].type == 'b' ? S_IFBLK : S_IFCHR) | 0600,
				 makedev(probed[i].major, probed[i].minor)) || errno == EEXIST,
			  "mknod %s: %s", node, strerror(errno));
	}
}

/*
 * Probe every node inside the container: open read-only, write-only,
 * read-write, and mknod of a new node of the same device. One line per
 * device, "c 1:3 ....": a '.' when the device cgroup let the request
 * through (whatever the driver answered then), 'P' when it was refused
 * with EPERM.
 */
static void probe_matrix(struct ctr *c, char *out, size_t size)
{
	static unsigned int run;
	char script[16384], *p = script, log[16384];
	int rc;

	p += sprintf(p, "t() { if (\"$@\") 2>/tmp/e; then printf .; elif grep -q 'not permitted' /tmp/e; "
			"then printf P; elif grep -q 'No such file' /tmp/e; then printf X; else printf .; fi; }; ");
	run++;
	for (size_t i = 0; i < NPROBED; i++) {
		char node[64], fresh[64];

		snprintf(node, sizeof(node), "/dev/p/%c-%u-%u", probed[i].type, probed[i].major, probed[i].minor);
		snprintf(fresh, sizeof(fresh), "/dev/p/m%u-%zu", run, i);
		p += sprintf(p, "printf '%c %u:%u '; t sh -c ': <%s'; t sh -c ': >%s'; t sh -c ': <>%s'; "
				"t mknod %s %c %u %u; rm -f %s; echo; ",
			     probed[i].type, probed[i].major, probed[i].minor, node, node, node, fresh,
			     probed[i].type, probed[i].major, probed[i].minor, fresh);
	}
	rc = RT(c, log, "exec", c->id, "/bin/sh", "-c", script);
	CHECK_MSG(rc == 0, "probing in the container: exit %d: %s", rc, log);
	CHECK_MSG(!strchr(log, 'X'), "a probed node is missing: %s", log);
	snprintf(out, size, "%s", log);
}

/* The lines of A and B that differ, for messages. */
static void matrix_diff(const char *a, const char *b, char *out, size_t size)
{
	char ca[8192], cb[8192], *la, *lb, *sa = NULL, *sb = NULL;
	size_t len = 0;

	snprintf(ca, sizeof(ca), "%s", a);
	snprintf(cb, sizeof(cb), "%s", b);
	out[0] = 0;
	for (la = strtok_r(ca, "\n", &sa), lb = strtok_r(cb, "\n", &sb); la || lb;
	     la = strtok_r(NULL, "\n", &sa), lb = strtok_r(NULL, "\n", &sb))
		if (!la || !lb || strcmp(la, lb))
			len += (size_t)snprintf(out + len, len < size ? size - len : 0, "[%s | %s] ",
						la ? la : "-", lb ? lb : "-");
}

/* The line of one device in a matrix ("c 1:3 ....", without the newline). */
static const char *matrix_line(const char *m, const char *dev, char *buf, size_t size)
{
	const char *l = strstr(m, dev);

	CHECK_MSG(l != NULL, "%s is not in the matrix: %s", dev, m);
	snprintf(buf, size, "%.*s", (int)strcspn(l, "\n"), l);
	return buf;
}

/* `devcg compile --runtime RT -f config.json` into DIR/NAME; its exit code,
 * its output (and errors) in OUT. */
static int compile_profile(struct ctr *c, const char *name, char *out, size_t size)
{
	char config[PATH_MAX], path[PATH_MAX];
	char *argv[] = { (char *)devcg_bin(), "compile", "--runtime", (char *)c->rt, "-f", config, NULL };
	int rc;

	config_of(c, config, sizeof(config));
	rc = run_capture(argv, out, size, true);
	if (rc == 0) {
		snprintf(path, sizeof(path), "%s/%s", c->dir, name);
		CHECK(!write_text(path, out));
	}
	return rc;
}

/* Install DIR/NAME with devcg replace (--force when it takes a device of
 * the container's /dev away: TAKES_AWAY). */
static void replace_with(struct ctr *c, const char *name, bool takes_away)
{
	char path[PATH_MAX];
	json_t *o = NULL;
	int rc;

	snprintf(path, sizeof(path), "%s/%s", c->dir, name);
	rc = takes_away ? DEVCG(&o, "replace", "--force", c->cg, "-f", path) : DEVCG(&o, "replace", c->cg, "-f", path);
	CHECK_MSG(rc == 0 && o, "devcg replace -f %s: exit %d", path, rc);
	json_decref(o);
	CHECK_INT(attached(c->cg, (uint32_t[64]){ 0 }, NULL), 1);
}

/*
 * Start RT's container of bundle B and probe the matrix under RT's own
 * program; then install devcg's profile of the same config.json and probe
 * again: every probe must agree. THEIRS gets the runtime's matrix.
 */
static void differential(struct ctr *c, const char *rt, const struct bundle *b, char *theirs, size_t size)
{
	char profile[8192], ours[8192], diff[8192];

	need(rt, V2);
	ctr_start_with(c, rt, V2, b);
	make_probe_nodes(c);
	probe_matrix(c, theirs, size);
	CHECK_MSG(compile_profile(c, "profile.txt", profile, sizeof(profile)) == 0,
		  "devcg compile --runtime %s: %s", rt, profile);
	replace_with(c, "profile.txt", false);
	probe_matrix(c, ours, sizeof(ours));
	matrix_diff(theirs, ours, diff, sizeof(diff));
	CHECK_MSG(!strcmp(theirs, ours), "%s and devcg's %s profile disagree [%s | devcg]: %s", rt, rt, rt,
		  diff);
	info("%s, %zu devices x r w rw m agree:\n%s", rt, NPROBED, theirs);
}

/* Control: the profile without one default (c 1:8 rwm, /dev/random) is
 * seen by the same probes, on that device and no other. */
static void control_without_random(struct ctr *c, const char *theirs)
{
	char profile[8192], path[PATH_MAX], cut[8192], ours[8192], a[64], b[64], *line;

	snprintf(path, sizeof(path), "%s/profile.txt", c->dir);
	CHECK(read_text(path, profile, sizeof(profile)) > 0);
	line = strstr(profile, "allow c 1:8 rwm\n");
	CHECK_MSG(line != NULL, "the profile has no c 1:8: %s", profile);
	snprintf(cut, sizeof(cut), "%.*s%s", (int)(line - profile), profile, line + strlen("allow c 1:8 rwm\n"));
	snprintf(path, sizeof(path), "%s/control.txt", c->dir);
	CHECK(!write_text(path, cut));
	/* /dev/random has a node in the container: refused without --force */
	CHECK_INT(DEVCG(NULL, "replace", c->cg, "-f", path), 1);
	replace_with(c, "control.txt", true);
	probe_matrix(c, ours, sizeof(ours));
	CHECK_STR(matrix_line(theirs, "c 1:8 ", a, sizeof(a)), "c 1:8 ....");
	/* mknod stays allowed by the default 'c *:* m' */
	CHECK_STR(matrix_line(ours, "c 1:8 ", b, sizeof(b)), "c 1:8 PPP.");
	for (size_t i = 0; i < NPROBED; i++) {
		char dev[32];

		snprintf(dev, sizeof(dev), "%c %u:%u ", probed[i].type, probed[i].major, probed[i].minor);
		if (strcmp(dev, "c 1:8 "))
			CHECK_STR(matrix_line(ours, dev, b, sizeof(b)), matrix_line(theirs, dev, a, sizeof(a)));
	}
}

#define RUNC_SPEC_DEVICES "[{\"allow\": false, \"access\": \"rwm\"}]"

static void spec_bundle(const char *rt)
{
	const struct bundle b = { .resources = RUNC_SPEC_DEVICES };
	char m[8192], l[64];
	struct ctr c;

	differential(&c, rt, &b, m, sizeof(m));
	/* what each runtime's defaults are, as seen in the container */
	CHECK_STR(matrix_line(m, "c 1:3 ", l, sizeof(l)), "c 1:3 ....");
	CHECK_STR(matrix_line(m, "c 136:7 ", l, sizeof(l)), "c 136:7 ....");
	CHECK_STR(matrix_line(m, "c 42:0 ", l, sizeof(l)), "c 42:0 PPP.");
	CHECK_STR(matrix_line(m, "b 42:3 ", l, sizeof(l)), "b 42:3 PPP.");
	CHECK_STR(matrix_line(m, "c 10:200 ", l, sizeof(l)), strcmp(rt, "runc") ? "c 10:200 PPP." : "c 10:200 ....");
	CHECK_STR(matrix_line(m, "c 5:1 ", l, sizeof(l)), strcmp(rt, "runc") ? "c 5:1 ...." : "c 5:1 PPP.");
	control_without_random(&c, m);
	ctr_destroy(&c);
}

TEST(runc_v2_runc_spec_bundle_devcg_runc_profile_agrees_probe_by_probe_and_a_missing_default_shows)
{
	spec_bundle("runc");
}

TEST(crun_v2_runc_spec_bundle_devcg_crun_profile_agrees_probe_by_probe_and_a_missing_default_shows)
{
	spec_bundle("crun");
}

/* linux.devices: /dev/fuse, /dev/net/tun and /dev/zero, with no resources
 * rule for them */
#define LINUX_DEVICES                                                                     \
	"[{\"path\": \"/dev/fuse\", \"type\": \"c\", \"major\": 10, \"minor\": 229, \"fileMode\": 438},\n" \
	" {\"path\": \"/dev/net/tun\", \"type\": \"c\", \"major\": 10, \"minor\": 200, \"fileMode\": 438},\n" \
	" {\"path\": \"/dev/zero\", \"type\": \"c\", \"major\": 1, \"minor\": 5, \"fileMode\": 438}]"

static void linux_devices_bundle(const char *rt)
{
	const struct bundle b = { .resources = RUNC_SPEC_DEVICES, .linux_devices = LINUX_DEVICES };
	char m[8192], l[64], out[1024];
	struct ctr c;
	int rc;

	differential(&c, rt, &b, m, sizeof(m));
	/* the runtime made the nodes, and gave them no rule */
	rc = RT(&c, out, "exec", c.id, "/bin/sh", "-c", "[ -c /dev/fuse ] && [ -c /dev/net/tun ]");
	CHECK_MSG(rc == 0, "%s made no /dev/fuse or /dev/net/tun: %s", rt, out);
	CHECK_STR(matrix_line(m, "c 10:229 ", l, sizeof(l)), "c 10:229 PPP.");
	/* runc drops its own /dev/zero rule for the linux.devices entry */
	CHECK_STR(matrix_line(m, "c 1:5 ", l, sizeof(l)), strcmp(rt, "runc") ? "c 1:5 ...." : "c 1:5 PPP.");
	ctr_destroy(&c);
}

TEST(runc_v2_linux_devices_get_no_rule_and_drop_runcs_default_and_devcg_agrees)
{
	linux_devices_bundle("runc");
}

TEST(crun_v2_linux_devices_get_no_rule_and_devcg_agrees)
{
	linux_devices_bundle("crun");
}

/* Allows, denies and wildcards after 'deny a': a deny of a default device
 * (before the defaults) changes nothing in either runtime. */
#define EXTRA_DEVICES                                                                       \
	"[{\"allow\": false, \"access\": \"rwm\"},\n"                                            \
	" {\"allow\": true, \"type\": \"c\", \"major\": 10, \"minor\": 229, \"access\": \"rwm\"},\n" \
	" {\"allow\": true, \"type\": \"c\", \"major\": 42, \"access\": \"r\"},\n"                \
	" {\"allow\": true, \"type\": \"b\", \"major\": 42, \"access\": \"rw\"},\n"               \
	" {\"allow\": true, \"type\": \"b\", \"minor\": 0, \"access\": \"r\"},\n"                 \
	" {\"allow\": false, \"type\": \"c\", \"major\": 1, \"minor\": 3, \"access\": \"rwm\"},\n" \
	" {\"allow\": false, \"type\": \"c\", \"major\": 5, \"minor\": 0, \"access\": \"w\"}]"

static void extra_bundle(const char *rt)
{
	const struct bundle b = { .resources = EXTRA_DEVICES };
	char m[8192], l[64];
	struct ctr c;

	differential(&c, rt, &b, m, sizeof(m));
	CHECK_STR(matrix_line(m, "c 10:229 ", l, sizeof(l)), "c 10:229 ....");
	CHECK_STR(matrix_line(m, "c 42:9 ", l, sizeof(l)), "c 42:9 .PP.");
	CHECK_STR(matrix_line(m, "b 42:3 ", l, sizeof(l)), "b 42:3 ....");
	CHECK_STR(matrix_line(m, "b 7:0 ", l, sizeof(l)), "b 7:0 .PP.");
	CHECK_STR(matrix_line(m, "c 1:3 ", l, sizeof(l)), "c 1:3 ....");
	CHECK_STR(matrix_line(m, "c 5:0 ", l, sizeof(l)), "c 5:0 ....");
	ctr_destroy(&c);
}

TEST(runc_v2_extra_allows_denies_and_wildcards_devcg_agrees)
{
	extra_bundle("runc");
}

TEST(crun_v2_extra_allows_denies_and_wildcards_devcg_agrees)
{
	extra_bundle("crun");
}

static void no_resources_bundle(const char *rt)
{
	const struct bundle b = { .no_resources = true };
	char m[8192], l[64];
	struct ctr c;

	differential(&c, rt, &b, m, sizeof(m));
	if (!strcmp(rt, "crun")) {
		/* crun installs nothing: every device is allowed */
		CHECK(!strchr(m, 'P'));
	} else {
		CHECK_STR(matrix_line(m, "c 42:0 ", l, sizeof(l)), "c 42:0 PPP.");
	}
	ctr_destroy(&c);
}

TEST(runc_v2_without_resources_devices_runc_denies_all_but_its_defaults_and_devcg_agrees)
{
	no_resources_bundle("runc");
}

TEST(crun_v2_without_resources_devices_crun_allows_every_device_and_devcg_agrees)
{
	no_resources_bundle("crun");
}

/* Default allow, with denies of whole access */
#define ALLOW_DEVICES                                                                 \
	"[{\"allow\": true, \"access\": \"rwm\"},\n"                                       \
	" {\"allow\": false, \"type\": \"c\", \"major\": 42, \"access\": \"rwm\"},\n"      \
	" {\"allow\": false, \"type\": \"b\", \"major\": 42, \"minor\": 3, \"access\": \"rwm\"}]"

TEST(runc_v2_default_allow_with_denies_devcg_agrees)
{
	const struct bundle b = { .resources = ALLOW_DEVICES };
	char m[8192], l[64];
	struct ctr c;

	differential(&c, "runc", &b, m, sizeof(m));
	CHECK_STR(matrix_line(m, "c 42:9 ", l, sizeof(l)), "c 42:9 PPPP");
	CHECK_STR(matrix_line(m, "b 42:3 ", l, sizeof(l)), "b 42:3 PPPP");
	CHECK_STR(matrix_line(m, "b 42:0 ", l, sizeof(l)), "b 42:0 ....");
	ctr_destroy(&c);
}

TEST(crun_v2_default_allow_with_denies_is_refused_by_devcg_for_what_crun_really_does)
{
	const struct bundle b = { .resources = ALLOW_DEVICES };
	char m[8192], l[64], out[8192];
	struct ctr c;

	need("crun", V2);
	ctr_start_with(&c, "crun", V2, &b);
	make_probe_nodes(&c);
	probe_matrix(&c, m, sizeof(m));
	/* crun's default 'c *:* m' comes first: mknod of a denied major passes,
	 * which no v1 policy that denies its opens can do */
	CHECK_STR(matrix_line(m, "c 42:9 ", l, sizeof(l)), "c 42:9 PPP.");
	CHECK_INT(compile_profile(&c, "profile.txt", out, sizeof(out)), 1);
	CHECK_MSG(strstr(out, "crun's device program allows c 42:") && strstr(out, " m (its first matching rule is "
										   "'allow c *:* m' (a default of crun))"),
		  "devcg compile: %s", out);
	ctr_destroy(&c);
}

/* ---- 4. devcg oci-hook ----------------------------------------------------- */

/* devcg's absolute path, as a hook's "path" must be. */
static const char *devcg_abs(void)
{
	static char path[PATH_MAX];

	CHECK_MSG(realpath(devcg_bin(), path) != NULL, "%s: %s", devcg_bin(), strerror(errno));
	return path;
}

/*
 * `devcg oci-hook ARGS...` with STATE on its standard input: its exit code,
 * its standard output in OUT and standard error in ERR.
 */
static int hook_run(const char *state, const char *const args[], char *out, size_t outlen, char *err,
		    size_t errlen)
{
	char dir[128], in[160], o[160], e[160], *argv[32];
	size_t n = 0;
	pid_t pid;
	int rc;

	/* named so that the suite's cleanup removes it after a crash */
	snprintf(dir, sizeof(dir), "/tmp/devcg-test-%s-rt-XXXXXX", scratch_tag());
	CHECK(mkdtemp(dir) != NULL);
	snprintf(in, sizeof(in), "%s/in", dir);
	snprintf(o, sizeof(o), "%s/out", dir);
	snprintf(e, sizeof(e), "%s/err", dir);
	CHECK(!write_text(in, state));
	argv[n++] = (char *)devcg_bin();
	argv[n++] = "oci-hook";
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	fflush(NULL);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		int fi = open(in, O_RDONLY), fo = open(o, O_WRONLY | O_CREAT, 0600),
		    fe = open(e, O_WRONLY | O_CREAT, 0600);

		if (fi < 0 || fo < 0 || fe < 0)
			_exit(126);
		dup2(fi, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	rc = wait_child(pid, CMD_TIMEOUT_S);
	if (read_text(o, out, outlen) < 0)
		out[0] = 0;
	if (read_text(e, err, errlen) < 0)
		err[0] = 0;
	rm_rf(dir);
	return rc;
}

#define HOOK(state, out, err, ...) \
	hook_run(state, (const char *const[]){ __VA_ARGS__, NULL }, out, sizeof(out), err, sizeof(err))

static int sleep_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return 0;
}

/* A bundle directory with the config.json of `runc spec`'s device list. */
static void hook_bundle(char *dir, size_t size, const char *devices)
{
	char path[PATH_MAX], text[4096];

	snprintf(dir, size, "/tmp/devcg-test-%s-rt-XXXXXX", scratch_tag());
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, size, "%s/config.json", dir);
	snprintf(text, sizeof(text), "{\"ociVersion\": \"1.0.2\", \"root\": {\"path\": \"rootfs\"},\n"
				     " \"linux\": {\"resources\": {\"devices\": %s}}}\n", devices);
	CHECK(!write_text(path, text));
}

static void hook_state(char *buf, size_t size, pid_t pid, const char *bundle, const char *annotations)
{
	snprintf(buf, size, "{\"ociVersion\": \"1.0.2\", \"id\": \"devcg-test\", \"status\": \"created\", "
			    "\"pid\": %d, \"bundle\": \"%s\"%s%s}", (int)pid, bundle,
		 annotations ? ", \"annotations\": " : "", annotations ? annotations : "");
}

/* The policy lines of `devcg show CG` (no comments). */
static void show_policy(const char *cg, char *out, size_t size)
{
	char buf[8192], *line, *save = NULL;
	char *argv[] = { (char *)devcg_bin(), "show", (char *)cg, NULL };

	CHECK_INT(run_capture(argv, buf, sizeof(buf), false), 0);
	out[0] = 0;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (line[0] != '#')
			snprintf(out + strlen(out), size - strlen(out), "%s\n", line);
}

/* `devcg compile ARGS...`, which must succeed. */
static void compiled(char *out, size_t size, const char *const args[])
{
	char *argv[32];
	size_t n = 0;

	argv[n++] = (char *)devcg_bin();
	argv[n++] = "compile";
	for (size_t i = 0; args[i] && n < 31; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	CHECK_MSG(run_capture(argv, out, size, true) == 0, "devcg compile: %s", out);
}

#define COMPILED(out, ...) compiled(out, sizeof(out), (const char *const[]){ __VA_ARGS__, NULL })

/* Until PID (a scratch_spawn() child) is in CG. */
static void wait_joined(const char *cg, pid_t pid)
{
	char buf[256];

	for (int i = 0; i < 5000; i++) {
		if (scratch_cgroup_read(cg, "cgroup.procs", buf, sizeof(buf)) > 0 && atoi(buf) == pid)
			return;
		usleep(1000);
	}
	test_fail(__FILE__, __LINE__, "process %d did not join %s", (int)pid, cg);
}

TEST(oci_hook_installs_the_runtime_policy_and_extras_on_the_cgroup_of_the_state_pid)
{
	char cg[PATH_MAX], bundle[PATH_MAX], config[PATH_MAX], state[8192], out[4096], err[4096];
	char live[8192], want[8192], without[8192];
	uint32_t ids[64];
	pid_t child;

	if (geteuid() != 0)
		SKIP("needs root");
	CHECK(scratch_cgroup2_root() != NULL);
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	child = scratch_spawn(cg, sleep_forever, NULL);
	CHECK(child > 0);
	hook_bundle(bundle, sizeof(bundle), RUNC_SPEC_DEVICES);
	snprintf(config, sizeof(config), "%s/config.json", bundle);
	hook_state(state, sizeof(state), child, bundle,
		   "{\"io.devcg.rules\": \"allow c 10:229 rwm; allow c 42:* r\", \"other\": \"x\"}");
	wait_joined(cg, child);
	CHECK_INT(HOOK(state, out, err, "--runtime", "runc", "allow b 42:0 r", "--annotation-allow", "c 10:229 rwm",
		       "--annotation-allow", "c 42:* r"), 0);
	CHECK_MSG(!err[0], "stderr: %s", err);
	CHECK_INT(attached(cg, ids, NULL), 1);
	show_policy(cg, live, sizeof(live));
	COMPILED(want, "--runtime", "runc", "-f", config, "allow b 42:0 r", "allow c 10:229 rwm", "allow c 42:* r");
	CHECK_STR(live, want);
	/* control: the extras are really there */
	COMPILED(without, "--runtime", "runc", "-f", config);
	CHECK(strcmp(live, without));
	/* again, now over devcg's own program: replaced, still one */
	CHECK_INT(HOOK(state, out, err, "-j", "--runtime", "runc", "--annotation-may-widen"), 0);
	CHECK_MSG(strstr(out, "\"replaced_id\":") && !strstr(out, "\"replaced_id\":0"), "%s", out);
	CHECK_INT(attached(cg, ids, NULL), 1);
	rm_rf(bundle);
}

static int exit_now(void *arg)
{
	(void)arg;
	return 0;
}

/* A device program of the test's own that allows everything, as a runtime's would. */
static int foreign_allow_all(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "runtime_dev", "GPL", insns, 2, NULL);

	CHECK_MSG(fd >= 0, "loading a foreign program: %s", strerror(errno));
	return fd;
}

/* One line on standard error, naming the failure, and nothing attached. */
static void hook_fails(const char *cg, const char *state, const char *want, const char *const args[])
{
	char out[4096], err[4096];
	uint32_t ids[64];
	int rc = hook_run(state, args, out, sizeof(out), err, sizeof(err));

	CHECK_MSG(rc == 1, "exit %d, stdout %s, stderr %s", rc, out, err);
	CHECK_MSG(!strncmp(err, "devcg oci-hook: ", 16) && strchr(err, '\n') == err + strlen(err) - 1,
		  "stderr is not one line: \"%s\"", err);
	CHECK_MSG(strstr(err, want), "stderr \"%s\" does not say \"%s\"", err, want);
	CHECK_INT(attached(cg, ids, NULL), 0);
}

TEST(oci_hook_failures_are_one_line_on_stderr_and_attach_nothing)
{
	char cg[PATH_MAX], bundle[PATH_MAX], bad[PATH_MAX], state[8192], path[PATH_MAX];
	const char *const runc[] = { "--runtime", "runc", NULL };
	pid_t child, gone;

	if (geteuid() != 0)
		SKIP("needs root");
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	child = scratch_spawn(cg, sleep_forever, NULL);
	CHECK(child > 0);
	hook_bundle(bundle, sizeof(bundle), RUNC_SPEC_DEVICES);
	wait_joined(cg, child);

	hook_fails(cg, "{\"ociVersion\": ", "container state: invalid JSON", runc);
	hook_fails(cg, "[]", "container state: not a JSON object", runc);
	snprintf(state, sizeof(state), "{\"ociVersion\": \"1.0.2\", \"id\": \"x\", \"bundle\": \"%s\"}", bundle);
	hook_fails(cg, state, "no \"pid\" of a process", runc);
	/* a bundle that is not there */
	snprintf(path, sizeof(path), "%s/missing", bundle);
	hook_state(state, sizeof(state), child, path, NULL);
	hook_fails(cg, state, "config.json: No such file or directory", runc);
	/* a list runc refuses */
	hook_bundle(bad, sizeof(bad),
		    "[{\"allow\": false, \"access\": \"rwm\"}, {\"allow\": true, \"type\": \"c\", \"major\": 42, "
		    "\"access\": \"rwm\"}, {\"allow\": false, \"type\": \"c\", \"major\": 42, \"minor\": 1, "
		    "\"access\": \"r\"}]");
	hook_state(state, sizeof(state), child, bad, NULL);
	hook_fails(cg, state, "runc refuses this list", runc);
	/* a bad rule in the annotation */
	hook_state(state, sizeof(state), child, bundle, "{\"io.devcg.rules\": \"allow q 1:2 r\"}");
	hook_fails(cg, state, "annotation io.devcg.rules", runc);
	/* an annotation that widens, without an allow-list that lists it */
	hook_state(state, sizeof(state), child, bundle, "{\"io.devcg.rules\": \"allow c 10:229 rwm\"}");
	hook_fails(cg, state, "annotation io.devcg.rules widens the policy: it allows 'allow c 10:229 r'", runc);
	hook_fails(cg, state, "widens the policy",
		   (const char *const[]){ "--runtime", "runc", "--annotation-allow", "c 10:200 rwm", NULL });
	/* auto, and the parent is not a runtime */
	hook_state(state, sizeof(state), child, bundle, NULL);
	hook_fails(cg, state, "cannot tell the runtime that runs this hook",
		   (const char *const[]){ "--runtime", "auto", NULL });
	/* a process that is gone */
	gone = scratch_spawn(cg, exit_now, NULL);
	CHECK(gone > 0);
	scratch_wait(gone);
	hook_state(state, sizeof(state), gone, bundle, NULL);
	hook_fails(cg, state, "is gone", runc);
	/* two programs of others on the cgroup: devcg's would be ANDed with
	 * the one it does not replace, so the hook refuses and adds none */
	{
		char two[PATH_MAX], out[4096], err[4096];
		uint32_t ids[64];
		pid_t other;
		int cfd, p1 = foreign_allow_all(), p2 = foreign_allow_all();

		CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), two, sizeof(two)));
		other = scratch_spawn(two, sleep_forever, NULL);
		CHECK(other > 0);
		wait_joined(two, other);
		cfd = open(two, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		CHECK(cfd >= 0);
		CHECK(!bpf_prog_attach(p1, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
		CHECK(!bpf_prog_attach(p2, cfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
		hook_state(state, sizeof(state), other, bundle, NULL);
		CHECK_INT(HOOK(state, out, err, "--runtime", "runc"), 1);
		CHECK_MSG(strchr(err, '\n') == err + strlen(err) - 1, "stderr: %s", err);
		CHECK_INT(attached(two, ids, NULL), 2);
		close(cfd);
		close(p1);
		close(p2);
	}
	/* control: the same state with a live pid works */
	{
		char out[4096], err[4096];
		uint32_t ids[64];

		hook_state(state, sizeof(state), child, bundle, NULL);
		CHECK_MSG(HOOK(state, out, err, "--runtime", "runc") == 0, "%s", err);
		CHECK_INT(attached(cg, ids, NULL), 1);
	}
	rm_rf(bundle);
	rm_rf(bad);
}

/* 0 when looking up its own cgroup is refused for that reason. */
static int own_lookup(void *arg)
{
	struct devcg_error err = { 0 };
	char buf[PATH_MAX];

	(void)arg;
	if (devcg_pid_cgroup(getpid(), buf, sizeof(buf), &err) != -EPERM || !strstr(err.msg, "own cgroup")) {
		fprintf(stderr, "own cgroup: %s\n", err.msg);
		return 1;
	}
	return 0;
}

TEST(oci_hook_cgroup_lookup_refuses_the_root_cgroup_and_its_own)
{
	char root_procs[PATH_MAX], buf[PATH_MAX], cg[PATH_MAX];
	struct devcg_error err = { 0 };
	pid_t child;

	if (geteuid() != 0)
		SKIP("needs root");
	/* a child of ours, moved to the root cgroup (only looked up, never
	 * attached to) */
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	child = scratch_spawn(cg, sleep_forever, NULL);
	CHECK(child > 0);
	wait_joined(cg, child);
	CHECK_INT(devcg_pid_cgroup(child, buf, sizeof(buf), &err), 0); /* control */
	CHECK_STR(buf, cg);
	snprintf(root_procs, sizeof(root_procs), "%s/cgroup.procs", scratch_cgroup2_root());
	snprintf(buf, sizeof(buf), "%d", (int)child);
	CHECK(!write_text(root_procs, buf));
	CHECK_INT(devcg_pid_cgroup(child, buf, sizeof(buf), &err), -EPERM);
	CHECK_MSG(strstr(err.msg, "is in the root cgroup"), "%s", err.msg);
	kill(child, SIGKILL);
	scratch_wait(child);
	/* a process of the scratch cgroup looks itself up */
	CHECK_INT(scratch_run(cg, own_lookup, NULL), 0);
}

/* A config.json "hooks" object: devcg oci-hook at STAGE, with --runtime
 * RUNTIME and the further arguments MORE (JSON text after a comma, or ""). */
static void hooks_json(char *buf, size_t size, const char *stage, const char *runtime, const char *more)
{
	snprintf(buf, size, "{\"%s\": [{\"path\": \"%s\", \"args\": [\"devcg\", \"oci-hook\", \"--runtime\", \"%s\"%s]}]}",
		 stage, devcg_abs(), runtime, more);
}

#define READER_ARGS "[\"/devcg-reader\", \"/dev/urandom\", \"/dev/null\"]"

/*
 * RT starts a container whose config.json runs devcg oci-hook at STAGE
 * (--runtime auto, a rule argument, and the annotation): its process, a
 * reader of /dev/urandom and /dev/null, sees no EPERM from its start to its
 * end; devcg's program is the only one, with the runtime's policy and the
 * extras; devcg allow then works on it.
 */
static void hook_starts_container(const char *rt, const char *stage)
{
	char hooks[PATH_MAX + 256], config[PATH_MAX], live[8192], want[8192], buf[8192];
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	const struct bundle b = {
		.resources = RUNC_SPEC_DEVICES, .hooks = hooks, .args = READER_ARGS,
		.annotations = "{\"io.devcg.rules\": \"allow c 42:* r\"}",
	};
	struct creader r;
	uint32_t ids[64];
	struct ctr c;
	json_t *p;
	int rc;

	need(rt, V2);
	hooks_json(hooks, sizeof(hooks), stage, "auto", ", \"allow b 42:0 r\", \"--annotation-allow\", \"c 42:* r\"");
	ctr_start_with(&c, rt, V2, &b);
	/* the container's process is the reader; its lines are in run's log */
	r.pid = ctr_pid(&c);
	snprintf(r.out, sizeof(r.out), "%s/cmd-0.log", c.dir);
	for (int i = 0; i < 1000 && !(read_text(r.out, buf, sizeof(buf)) > 0 && strstr(buf, "ready\n")); i++)
		usleep(10 * 1000);
	CHECK_MSG(strstr(buf, "ready\n"), "the reader did not start: %s", buf);

	CHECK_INT(attached(c.cg, ids, NULL), 1);
	p = show_one(c.cg);
	CHECK(json_is_true(json_object_get(p, "devcg")));
	json_decref(p);
	show_policy(c.cg, live, sizeof(live));
	COMPILED(want, "--runtime", rt, "-f", config_of(&c, config, sizeof(config)), "allow b 42:0 r",
		 "allow c 42:* r");
	CHECK_STR(live, want);

	/* it is devcg's program: devcg allow works on it */
	CHECK_INT(fuse_open_in(&c), EPERM);
	rc = DEVCG(NULL, "allow", c.cg, FUSE_RULE);
	CHECK_INT(rc, 0);
	CHECK_INT(fuse_open_in(&c), 0);
	CHECK_INT(attached(c.cg, ids, NULL), 1);

	creader_stop(&r, eperm, opens);
	CHECK_MSG(opens[0] > 100 && opens[1] > 100, "the reader opened only %llu/%llu times", opens[0], opens[1]);
	CHECK_INT(eperm[0], 0);
	CHECK_INT(eperm[1], 0);
	info("%s, hook at %s: the reader opened %llu + %llu times, 0 EPERM", rt, stage, opens[0], opens[1]);
	ctr_destroy(&c);
}

TEST(runc_v2_oci_hook_at_create_runtime_installs_devcgs_program_alone_with_no_eperm)
{
	hook_starts_container("runc", "createRuntime");
}

TEST(runc_v2_oci_hook_at_prestart_installs_devcgs_program_alone_with_no_eperm)
{
	hook_starts_container("runc", "prestart");
}

TEST(crun_v2_oci_hook_at_create_runtime_installs_devcgs_program_alone_with_no_eperm)
{
	hook_starts_container("crun", "createRuntime");
}

TEST(crun_v2_oci_hook_at_prestart_installs_devcgs_program_alone_with_no_eperm)
{
	hook_starts_container("crun", "prestart");
}

/* The pids in the container's cgroup ("" when none). */
static const char *ctr_procs(const struct ctr *c)
{
	static char buf[256];

	if (scratch_cgroup_read(c->cg, "cgroup.procs", buf, sizeof(buf)) < 0)
		buf[0] = 0;
	return buf;
}

/* Controls: a hook whose policy lacks /dev/null, and a hook that fails. */
static void hook_controls(const char *rt)
{
	char hooks[PATH_MAX + 256], out[8192];
	const struct bundle b = { .resources = RUNC_SPEC_DEVICES, .hooks = hooks,
				  .args = "[\"/bin/sh\", \"-c\", \": </dev/null && sleep 1000000\"]" };
	struct ctr c;
	int rc;

	need(rt, V2);
	hooks_json(hooks, sizeof(hooks), "createRuntime", rt, ", \"deny c 1:3 rwm\"");
	rc = ctr_create(&c, rt, V2, &b, out, sizeof(out));
	info("%s with a hook policy without /dev/null: exit %d: %s", rt, rc, out);
	CHECK_MSG(rc != 0, "%s ran the container without /dev/null: %s", rt, out);
	/* refused by the device cgroup: the runtime's own open of /dev/null
	 * in the container (runc: "open /dev/null: operation not permitted",
	 * crun: "failed open()ing /dev/null: Operation not permitted") */
	CHECK_MSG(strstr(out, "/dev/null: ") && strstr(out, "peration not permitted"), "%s", out);
	ctr_destroy(&c);

	hooks_json(hooks, sizeof(hooks), "createRuntime", rt, ", \"-f\", \"/nonexistent/rules\"");
	rc = ctr_create(&c, rt, V2, &b, out, sizeof(out));
	CHECK_MSG(rc != 0, "%s ran the container after the hook failed: %s", rt, out);
	/* runc passes the hook's line on; crun only its exit code */
	CHECK_MSG(strstr(out, strcmp(rt, "runc") ? "error executing hook" :
			 "devcg oci-hook: /nonexistent/rules: No such file or directory"), "%s", out);
	CHECK_MSG(access(c.cg, F_OK) || !strcmp(ctr_procs(&c), ""), "a process runs in %s", c.cg);
	ctr_destroy(&c);
}

TEST(runc_v2_oci_hook_control_a_policy_without_dev_null_or_a_failing_hook_stops_the_container)
{
	hook_controls("runc");
}

TEST(crun_v2_oci_hook_control_a_policy_without_dev_null_or_a_failing_hook_stops_the_container)
{
	hook_controls("crun");
}

/*
 * A plain `RT run` on a hybrid host puts the container under the v1 devices
 * controller (its devices: line names its cgroup), beside its cgroup on the
 * unified hierarchy: both decide every open. The hook gives both the
 * policy, so /dev/fuse, which the hook adds, opens in the container; the
 * v1 devices.list shows it. Control: a device added on v2 alone (the
 * library's one-layer update) stays refused by v1, until devcg allow, which
 * changes both.
 */
static void hook_on_a_hybrid_host(const char *rt)
{
	char hooks[PATH_MAX + 256], list[8192], v2[PATH_MAX], v1[PATH_MAX];
	const struct bundle b = { .resources = RUNC_SPEC_DEVICES, .hooks = hooks };
	struct devcg_rule fuse = { .verb = DEVCG_VERB_ALLOW, .type = DEVCG_CHAR, .access = DEVCG_ACC_ALL,
				   .major = 10, .minor = 229 };
	struct devcg_error err = { 0 };
	json_t *o = NULL;
	struct ctr c;

	need(rt, V1);
	if (!scratch_cgroup2_root())
		SKIP("no cgroup2 mount beside the v1 devices controller (not a hybrid host)");
	hooks_json(hooks, sizeof(hooks), "createRuntime", rt, ", \"allow " FUSE_RULE "\"");
	ctr_start_with(&c, rt, V1, &b);
	CHECK_MSG(devcg_pid_v1_cgroup(ctr_pid(&c), v1, sizeof(v1), &err) == 1, "%s", err.msg);
	CHECK_STR(v1, c.cg);
	CHECK(read_text(strcat(strcpy(list, c.cg), "/devices.list"), list, sizeof(list)) > 0);
	CHECK_MSG(strstr(list, FUSE_RULE "\n"), "%s", list);
	CHECK_INT(fuse_open_in(&c), 0);
	ctr_destroy(&c);

	/* control: the same container without the hook's rule */
	hooks_json(hooks, sizeof(hooks), "createRuntime", rt, "");
	ctr_start_with(&c, rt, V1, &b);
	CHECK_MSG(!devcg_pid_cgroup(ctr_pid(&c), v2, sizeof(v2), &err), "%s", err.msg);
	CHECK_MSG(!devcg_update(v2, &fuse, NULL, &err), "%s", err.msg);
	CHECK_INT(fuse_open_in(&c), EPERM);
	CHECK_INT(DEVCG(&o, "allow", v2, FUSE_RULE), 0);
	CHECK_STR(jstr(o, "v1"), c.cg);
	json_decref(o);
	CHECK_INT(fuse_open_in(&c), 0);
	info("%s on v1 devices: the hook's and devcg allow's /dev/fuse open; on v2 alone EPERM", rt);
	ctr_destroy(&c);
}

TEST(runc_v1_oci_hook_on_a_hybrid_host_gives_the_v1_devices_cgroup_the_policy_too)
{
	hook_on_a_hybrid_host("runc");
}

TEST(crun_v1_oci_hook_on_a_hybrid_host_gives_the_v1_devices_cgroup_the_policy_too)
{
	hook_on_a_hybrid_host("crun");
}

/* ---- 5. for make bench: the runtimes' updates beside devcg's --------------- */

/* Why RT cannot run in MODE here, or NULL (need(), without skipping). */
static const char *peer_unavailable(const char *rt, enum mode mode)
{
	if (!in_path(rt))
		return "not installed";
	if (elf_is_static(BUSYBOX) != 1)
		return "no busybox-static for the rootfs";
	if (mode == V2 && !scratch_cgroup2_root())
		return "no cgroup2 mount";
	if (mode == V1 && !scratch_devices_root())
		return "no cgroup v1 devices controller";
	if (!strcmp(rt, "crun") && mode == V2 && !memlock_raisable() && !memlock_shim_available())
		return "crun cannot raise RLIMIT_MEMLOCK here";
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * K updates of the container's own device list, by the runtime (`RT update
 * -r`) or by devcg (`devcg replace`, with --v1 on v1, from the same
 * config.json), while devcg-reader in the container opens /dev/urandom and
 * /dev/null in a loop (the readers of make bench's gap rows): the EPERMs
 * it saw, its opens, and the time per update (the whole command).
 */
static json_t *peer_run(struct ctr *c, bool devcg, int k)
{
	unsigned long long eperm[2] = { 0 }, opens[2] = { 0 };
	char update[PATH_MAX], config[PATH_MAX], out[4096];
	double *ms = calloc((size_t)k, sizeof(double)), median;
	struct creader r;
	int i, rc;

	CHECK(ms);
	write_update(c, update, sizeof(update), false);
	config_of(c, config, sizeof(config));
	creader_start(c, &r);
	for (i = 0; i < k; i++) {
		struct timespec a, b;

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (devcg)
			rc = c->mode == V1 ? DEVCG(NULL, "replace", "--v1", c->cg, "-f", config)
					   : DEVCG(NULL, "replace", c->cg, "-f", config);
		else
			rc = RT(c, out, "update", "-r", update, c->id);
		clock_gettime(CLOCK_MONOTONIC, &b);
		CHECK_MSG(rc == 0, "%s update %d: exit %d: %s", devcg ? "devcg" : c->rt, i, rc, devcg ? "" : out);
		ms[i] = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	}
	creader_stop(&r, eperm, opens);
	qsort(ms, (size_t)k, sizeof(*ms), cmp_double);
	median = ms[k / 2];
	free(ms);
	return json_pack("{s:s, s:s, s:s, s:i, s:I, s:I, s:f}", "who", devcg ? "devcg" : c->rt, "runtime", c->rt,
			 "cgroup", c->mode == V1 ? "v1" : "v2", "updates", k, "eperm",
			 (json_int_t)(eperm[0] + eperm[1]), "opens", (json_int_t)(opens[0] + opens[1]),
			 "ms_per_update", median);
}

/*
 * Not a test of its own: make bench runs it (DEVCG_BENCH_PEERS names the
 * JSON file it writes; DEVCG_BENCH_QUICK for fewer updates). Each runtime
 * of Debian that runs here, on v1 and on v2: its update, then devcg's in
 * the same container. The CHECKs are those of section 2: devcg's updates
 * leave the reader alone.
 */
TEST(make_bench_runtime_updates_beside_devcg_in_one_container)
{
	static const struct {
		const char *rt;
		enum mode mode;
	} peers[] = { { "crun", V1 }, { "crun", V2 }, { "runc", V1 }, { "runc", V2 } };
	const char *path = getenv("DEVCG_BENCH_PEERS");
	int k = getenv("DEVCG_BENCH_QUICK") ? 10 : 40;
	json_t *rows = json_array();

	if (!path)
		SKIP("for make bench (DEVCG_BENCH_PEERS names its output)");
	if (geteuid() != 0)
		SKIP("needs root");
	for (size_t i = 0; i < sizeof(peers) / sizeof(peers[0]); i++) {
		const char *why = peer_unavailable(peers[i].rt, peers[i].mode);
		struct ctr c;
		json_t *devcg;

		if (why) {
			json_array_append_new(rows, json_pack("{s:s, s:s, s:s}", "runtime", peers[i].rt, "cgroup",
							      peers[i].mode == V1 ? "v1" : "v2", "skipped", why));
			continue;
		}
		ctr_start(&c, peers[i].rt, peers[i].mode);
		json_array_append_new(rows, peer_run(&c, false, k));
		devcg = peer_run(&c, true, k);
		CHECK_INT(json_integer_value(json_object_get(devcg, "eperm")), 0);
		json_array_append_new(rows, devcg);
		ctr_destroy(&c);
	}
	CHECK(!json_dump_file(rows, path, JSON_INDENT(2)));
	json_decref(rows);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// make bench, the hot-plug rows (--rows hotplug): giving a running container
// a GPU-shaped device set and taking it back, beside the floor of the same
// work in raw calls and beside the procedure GPU platforms run today, in
// alternated rounds of one run. Numbers, not tests.
//
// The device set: one CDI name, nvidia.com/gpu=0, from a spec the bench
// writes in a scratch directory: /dev/nvidia0 (c 195:0) and the spec's
// common /dev/nvidiactl (c 195:255), /dev/nvidia-uvm and
// /dev/nvidia-uvm-tools (c M:0 and c M:1, M a char major no driver has
// here); 195 too only when no driver has it. Nothing real is touched: the
// host nodes are in the scratch directory, the container's are on its own
// tmpfs.
//
// The container: a child in a scratch cgroup with its own mount namespace
// and its own tmpfs on /dev and on /dev/shm (never the host's), holding a
// runtime's default device list as its devcg policy.
//
// Rows (each round runs them all, one after the other):
//   lib      devcg_attach() then devcg_detach() of nvidia.com/gpu=0;
//   floor    attach: one forked child that enters the container's mount
//            namespace (setns) and makes the four nodes (mknodat under a
//            temporary name, fchmodat, renameat), and one swap of the
//            policy with the four exceptions, as the replace rows' floor:
//            a frozen single-value array map holding devcg's policy bytes
//            and a minimal program, loaded with raw bpf() and attached with
//            BPF_F_REPLACE (on a cgroup of its own); detach: the child
//            unlinks the four nodes, and the swap back;
//   peer     `nsenter -t PID -m sh -c 'mknod ...; chmod ...'` for the four
//            nodes and a shell writing the four lines to a scratch v1
//            cgroup's devices.allow (detach: rm -f, devices.deny), timed as
//            whole commands;
//   command  `devcg attach -p PID --cdi nvidia.com/gpu=0 --cdi-spec-dir DIR`
//            and `devcg detach ...`, beside `devcg --version`.
// Also the floor in the library's two phases (its child answers once in the
// namespace, stays across the swap, then makes the nodes), and CPU time of
// the library and of the floor (this process and the children it waited
// for: the library reaps its own child before it returns).
#include "bench.h"
#include "hotplug.h"

#include "devcg.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

/* a failed CHECK of tests/scratch.c ends the bench: test_fail() in bench.c */

#define NNODES 4

struct hp_node {
	const char *name; /* in the host's scratch directory and in the container's /dev */
	unsigned int major, minor;
	mode_t mode;
};

static struct hp_node nodes[NNODES] = {
	{ "nvidia0", 195, 0, 0666 },
	{ "nvidiactl", 195, 255, 0666 },
	{ "nvidia-uvm", 0, 0, 0666 },
	{ "nvidia-uvm-tools", 0, 1, 0666 },
};

/* the base policy: runc's default device list */
static const char base_rules[] = "deny a\n"
				 "allow c *:* m\n"
				 "allow b *:* m\n"
				 "allow c 1:3 rwm\n"
				 "allow c 1:5 rwm\n"
				 "allow c 1:7 rwm\n"
				 "allow c 1:8 rwm\n"
				 "allow c 1:9 rwm\n"
				 "allow c 5:0 rwm\n"
				 "allow c 5:1 rwm\n"
				 "allow c 5:2 rwm\n"
				 "allow c 136:* rwm\n"
				 "allow c 10:200 rwm\n";

static void hp_die(const char *what)
{
	fprintf(stderr, "bench: hotplug: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t hp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static double hp_ms_since(uint64_t t0)
{
	return (double)(hp_now() - t0) / 1e6;
}

static int hp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* median, p10, p90 of V (sorted in place) */
static json_t *hp_stats(double *v, int n, const char *unit)
{
	qsort(v, (size_t)n, sizeof(*v), hp_cmp);
	return json_pack("{s:f, s:f, s:f, s:f, s:i, s:s}", "median", v[n / 2], "p10", v[n / 10], "p90",
			 v[(n * 9) / 10 < n ? (n * 9) / 10 : n - 1], "p99",
			 v[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1], "n", n, "unit", unit);
}

static double hp_median(json_t *cell)
{
	return json_real_value(json_object_get(cell, "median"));
}

/* CPU time (user and system) of this process and of the children it
 * waited for, ms: what a step costs whatever else the machine runs. */
static double cpu_ms(void)
{
	struct rusage s, c;

	getrusage(RUSAGE_SELF, &s);
	getrusage(RUSAGE_CHILDREN, &c);
	return (double)(s.ru_utime.tv_sec + s.ru_stime.tv_sec + c.ru_utime.tv_sec + c.ru_stime.tv_sec) * 1e3 +
	       (double)(s.ru_utime.tv_usec + s.ru_stime.tv_usec + c.ru_utime.tv_usec + c.ru_stime.tv_usec) / 1e3;
}

/* ---- the pseudo-container --------------------------------------------------- */

static int ctr_pipe[2], ctr_ready[2];

/* Its own mount namespace, a tmpfs on /dev and one on /dev/shm; then asleep
 * until the bench closes the pipe. */
static int ctr_main(void *arg)
{
	char c;

	(void)arg;
	close(ctr_pipe[1]);
	close(ctr_ready[0]);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 10;
	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID, "mode=755,size=1m"))
		return 11;
	if (mkdir("/dev/shm", 01777) || mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=1m"))
		return 12;
	if (write(ctr_ready[1], "r", 1) != 1)
		return 13;
	close(ctr_ready[1]);
	while (read(ctr_pipe[0], &c, 1) > 0)
		;
	return 0;
}

static pid_t ctr_start(const char *cg)
{
	pid_t pid;
	char c;

	if (pipe2(ctr_pipe, O_CLOEXEC) || pipe2(ctr_ready, O_CLOEXEC))
		hp_die("pipe");
	pid = scratch_spawn(cg, ctr_main, NULL);
	if (pid < 0) {
		errno = -pid;
		hp_die("the pseudo-container");
	}
	close(ctr_pipe[0]);
	close(ctr_ready[1]);
	if (read(ctr_ready[0], &c, 1) != 1) {
		errno = 0;
		fprintf(stderr, "bench: hotplug: the pseudo-container did not start (exit %d)\n", scratch_wait(pid));
		exit(1);
	}
	close(ctr_ready[0]);
	return pid;
}

static void ctr_stop(pid_t pid)
{
	close(ctr_pipe[1]);
	scratch_wait(pid);
}

/* ---- the floor: raw calls ------------------------------------------------------ */

/* floor_swap() and devcg_value(): bench.c's (bench.h) */

struct floor_job {
	pid_t pid;
	bool make;
};

/* The floor's child: it enters the mount namespace of JOB->pid and makes
 * the four nodes (JOB->make) or unlinks them; its exit status says. */
static int floor_child(void *arg)
{
	const struct floor_job *job = arg;
	char ns[64];
	int fd, dfd, i;

	snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)job->pid);
	fd = open(ns, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNS))
		return 1;
	dfd = open("/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return 2;
	for (i = 0; i < NNODES; i++) {
		if (!job->make) {
			if (unlinkat(dfd, nodes[i].name, 0))
				return 3;
			continue;
		}
		if (mknodat(dfd, ".floor-tmp", S_IFCHR | 0600, makedev(nodes[i].major, nodes[i].minor)) ||
		    fchmodat(dfd, ".floor-tmp", nodes[i].mode, 0) ||
		    renameat(dfd, ".floor-tmp", dfd, nodes[i].name))
			return 4;
	}
	return 0;
}

/* The floor's nodes: a forked child (the floor), or with SHARED a
 * child that shares our memory (clone(CLONE_VM), as the library's) on a
 * stack of its own, makes the four nodes (MAKE) or unlinks them. */
static void floor_nodes(pid_t pid, bool make, bool shared)
{
	static char *stack;
	struct floor_job job = { pid, make };
	pid_t child;
	int st;

	if (shared && !stack && (stack = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE,
					      MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0)) == MAP_FAILED)
		hp_die("mmap");
	child = shared ? clone(floor_child, stack + (1 << 20), CLONE_VM | SIGCHLD, &job) : fork();
	if (child < 0)
		hp_die(shared ? "clone" : "fork");
	if (child == 0)
		_exit(floor_child(&job));
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
		errno = EIO;
		hp_die(make ? "floor: the nodes" : "floor: unlink the nodes");
	}
}

/*
 * The floor shaped as the library's steps: the child enters the mount
 * namespace and answers first (where the library looks at the nodes),
 * stays while the parent swaps, then makes the nodes when told and
 * answers again before it ends: what the library's protocol costs beyond
 * the floor before any of its own work.
 */
static void floor_two_phase(pid_t pid, int cg_fd, const void *value, size_t size, int *prev)
{
	int up[2], down[2], st;
	pid_t child;
	char c;

	if (pipe2(up, O_CLOEXEC) || pipe2(down, O_CLOEXEC))
		hp_die("pipe");
	child = fork();
	if (child < 0)
		hp_die("fork");
	if (child == 0) {
		char ns[64];
		int fd, dfd, i;

		close(up[0]);
		close(down[1]);
		snprintf(ns, sizeof(ns), "/proc/%d/ns/mnt", (int)pid);
		fd = open(ns, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || setns(fd, CLONE_NEWNS))
			_exit(1);
		dfd = open("/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 || write(up[1], "l", 1) != 1 || read(down[0], &c, 1) != 1)
			_exit(2);
		for (i = 0; i < NNODES; i++)
			if (mknodat(dfd, ".floor-tmp", S_IFCHR | 0600, makedev(nodes[i].major, nodes[i].minor)) ||
			    fchmodat(dfd, ".floor-tmp", nodes[i].mode, 0) ||
			    renameat(dfd, ".floor-tmp", dfd, nodes[i].name))
				_exit(4);
		_exit(write(up[1], "m", 1) == 1 ? 0 : 5);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &c, 1) != 1)
		hp_die("floor, two phases: the look");
	floor_swap(cg_fd, value, size, prev, false);
	if (write(down[1], "M", 1) != 1 || read(up[0], &c, 1) != 1)
		hp_die("floor, two phases: the nodes");
	close(up[0]);
	close(down[1]);
	if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st)) {
		errno = EIO;
		hp_die("floor, two phases");
	}
}

/* ---- commands ------------------------------------------------------------------- */

static int hp_run(char *const argv[])
{
	posix_spawn_file_actions_t fa;
	extern char **environ;
	pid_t pid;
	int st;

	if (posix_spawn_file_actions_init(&fa) ||
	    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0) ||
	    posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ))
		hp_die("posix_spawnp");
	posix_spawn_file_actions_destroy(&fa);
	if (waitpid(pid, &st, 0) != pid)
		hp_die("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static void run_ok(char *const argv[], const char *what)
{
	int rc = hp_run(argv);

	if (rc) {
		fprintf(stderr, "bench: hotplug: %s exited %d\n", what, rc);
		exit(1);
	}
}

/* ---- the rows -------------------------------------------------------------------- */

/* A char major no driver has, other than AVOID; 0: none. */
static unsigned int free_major(unsigned int avoid)
{
	for (unsigned int m = 240; m >= 234; m--)
		if (m != avoid && !scratch_char_major_listed(m))
			return m;
	return 0;
}

static void write_spec(const char *dir, const char *host)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/nvidia.yaml", dir);
	f = fopen(path, "we");
	if (!f)
		hp_die(path);
	fprintf(f,
		"cdiVersion: \"0.6.0\"\n"
		"kind: nvidia.com/gpu\n"
		"devices:\n"
		"  - name: \"0\"\n"
		"    containerEdits:\n"
		"      deviceNodes:\n"
		"        - {path: /dev/nvidia0, hostPath: %s/nvidia0}\n"
		"containerEdits:\n"
		"  deviceNodes:\n"
		"    - {path: /dev/nvidiactl, hostPath: %s/nvidiactl}\n"
		"    - {path: /dev/nvidia-uvm, hostPath: %s/nvidia-uvm}\n"
		"    - {path: /dev/nvidia-uvm-tools, hostPath: %s/nvidia-uvm-tools}\n",
		host, host, host, host);
	if (fclose(f))
		hp_die(path);
}

/* The container holds the four nodes (ATTACHED) or none of them: checked
 * through /proc/PID/root after each step, outside the timing. */
static void check_nodes(pid_t pid, bool attached, const char *after)
{
	for (int i = 0; i < NNODES; i++) {
		char path[256];
		struct stat st;
		int r;

		snprintf(path, sizeof(path), "/proc/%d/root/dev/%s", (int)pid, nodes[i].name);
		r = lstat(path, &st);
		if (attached ? r || !S_ISCHR(st.st_mode) || st.st_rdev != makedev(nodes[i].major, nodes[i].minor)
			     : !r || errno != ENOENT) {
			fprintf(stderr, "bench: hotplug: after %s, /dev/%s is %s in the container\n", after,
				nodes[i].name, attached ? "not the node" : "still there");
			exit(1);
		}
	}
}

static struct devcg_policy *base_policy(void)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_error err = { 0 };

	if (!rules || !p || devcg_rules_parse(rules, base_rules, strlen(base_rules), "bench", NULL, &err) ||
	    devcg_policy_apply_all(p, rules, &err)) {
		fprintf(stderr, "bench: hotplug: base policy: %s\n", err.msg);
		exit(1);
	}
	devcg_rules_free(rules);
	return p;
}

static void lib_call(bool attach, pid_t pid, const char *const *dirs)
{
	static const char *const cdi[] = { "nvidia.com/gpu=0", NULL };
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err = { 0 };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	int ret;

	o.pid = pid;
	o.cdi = cdi;
	o.cdi_spec_dirs = dirs;
	ret = attach ? devcg_attach(NULL, NULL, 0, &o, &r, &err) : devcg_detach(NULL, NULL, 0, &o, &r, &err);
	if (ret || r->count != NNODES) {
		fprintf(stderr, "bench: hotplug: devcg_%s: %s\n", attach ? "attach" : "detach",
			ret ? err.msg : "not four devices");
		exit(1);
	}
	devcg_hotplug_result_free(r);
}

void bench_hotplug(json_t *results, const char *devcg_bin, bool quick)
{
	int rounds = quick ? 8 : 40, i, fcg_fd, prev = -1;
	char cg[4096], fcg[4096], v1[4096] = "", host[4096], spec[4200], pidstr[16], mk[2048], rm[1024],
		allow[8192], deny[8192];
	const char *dirs[2] = { spec, NULL };
	struct devcg_policy *base;
	double *v[32];
	size_t vsize[2];
	void *val[2];
	json_t *out = json_object();
	pid_t pid;
	enum { L_ATT, L_DET, F_ATT, F_DET, P_ATT, P_DET, C_ATT, C_DET, VER, LC_ATT, LC_DET, FC_ATT, FC_DET,
	       F2_ATT, LW_ATT, LW_DET, FS_ATT, FS_DET, R_LIB, R_LIB_DET, R_LIB_BOTH, R_CLI, R_CLI_DET, R_PEER,
	       R_LIB_CPU, R_LIB_DET_CPU, R_F2, R_LW, R_LW_DET, R_FS, R_FS_DET, NV };
	static const char *const keys[NV] = {
		"lib_attach_ms", "lib_detach_ms", "floor_attach_ms", "floor_detach_ms", "peer_attach_ms",
		"peer_detach_ms", "cli_attach_ms", "cli_detach_ms", "version_ms", "lib_attach_cpu_ms",
		"lib_detach_cpu_ms", "floor_attach_cpu_ms", "floor_detach_cpu_ms", "floor_two_phase_attach_ms",
		"lib_again_attach_ms", "lib_again_detach_ms", "floor_shared_attach_ms", "floor_shared_detach_ms",
		"lib_attach_vs_floor",
		"lib_detach_vs_floor", "lib_both_vs_floor", "cli_attach_vs_version_floor",
		"cli_detach_vs_version_floor", "peer_attach_vs_floor", "lib_attach_vs_floor_cpu",
		"lib_detach_vs_floor_cpu", "floor_two_phase_vs_floor", "lib_again_attach_vs_floor",
		"lib_again_detach_vs_floor", "lib_again_attach_vs_floor_shared", "lib_again_detach_vs_floor_shared",
	};

	fprintf(stderr, "bench: hot-plug of a GPU-shaped device set\n");
	/* the numbers: 195 (nvidia) when no driver has it, and a free major for uvm */
	if (scratch_char_major_listed(195)) {
		nodes[0].major = nodes[1].major = free_major(0);
		if (!nodes[0].major) {
			fprintf(stderr, "  hotplug: skipped (every char major of 234-240 has a driver here)\n");
			json_decref(out);
			return;
		}
	}
	nodes[2].major = nodes[3].major = free_major(nodes[0].major);
	if (!nodes[2].major) {
		fprintf(stderr, "  hotplug: skipped (every char major of 234-240 has a driver here)\n");
		json_decref(out);
		return;
	}
	{
		struct scratch_node sn[NNODES];

		for (i = 0; i < NNODES; i++)
			sn[i] = (struct scratch_node){ nodes[i].name, 'c', nodes[i].major, nodes[i].minor };
		if (scratch_devdir_create(host, sizeof(host), sn, NNODES))
			hp_die("the host's scratch nodes");
	}
	snprintf(spec, sizeof(spec), "%s/cdi", host);
	if (mkdir(spec, 0755))
		hp_die(spec);
	write_spec(spec, host);
	if (scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)) ||
	    scratch_cgroup_create(scratch_cgroup2_root(), fcg, sizeof(fcg)))
		hp_die("scratch cgroups");
	base = base_policy();
	if (devcg_replace(cg, base, NULL, NULL))
		hp_die("devcg_replace of the base policy");
	pid = ctr_start(cg);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)pid);

	/* the policy values the floor holds: after attach, and after detach */
	lib_call(true, pid, dirs);
	val[0] = devcg_value(cg, &vsize[0]);
	lib_call(false, pid, dirs);
	val[1] = devcg_value(cg, &vsize[1]);
	fcg_fd = open(fcg, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fcg_fd < 0)
		hp_die(fcg);
	floor_swap(fcg_fd, val[1], vsize[1], &prev, false);

	/* the peer: a shell in the container's mount namespace, and a v1
	 * devices cgroup of its own holding the base list */
	{
		size_t k = 0, a = 0, d = 0;

		for (i = 0; i < NNODES; i++) {
			k += (size_t)snprintf(mk + k, sizeof(mk) - k, "%smknod /dev/%s c %u %u && chmod %o /dev/%s",
					      i ? " && " : "", nodes[i].name, nodes[i].major, nodes[i].minor,
					      nodes[i].mode, nodes[i].name);
		}
		snprintf(rm, sizeof(rm), "rm -f /dev/%s /dev/%s /dev/%s /dev/%s", nodes[0].name, nodes[1].name,
			 nodes[2].name, nodes[3].name);
		if (scratch_devices_root()) {
			if (scratch_cgroup_create(scratch_devices_root(), v1, sizeof(v1)) ||
			    scratch_cgroup_write(v1, "devices.deny", "a"))
				hp_die("the v1 scratch cgroup");
			for (i = 0; i < NNODES; i++) {
				a += (size_t)snprintf(allow + a, sizeof(allow) - a, "%secho 'c %u:%u rwm' > %s/devices.allow",
						      i ? " && " : "", nodes[i].major, nodes[i].minor, v1);
				d += (size_t)snprintf(deny + d, sizeof(deny) - d, "%secho 'c %u:%u rwm' > %s/devices.deny",
						      i ? " && " : "", nodes[i].major, nodes[i].minor, v1);
			}
		}
	}

	for (i = 0; i < NV; i++)
		if (!(v[i] = calloc((size_t)rounds, sizeof(double))))
			hp_die("calloc");
	for (i = 0; i < rounds; i++) {
		char *nsenter_mk[] = { "nsenter", "-t", pidstr, "-m", "--", "sh", "-c", mk, NULL };
		char *nsenter_rm[] = { "nsenter", "-t", pidstr, "-m", "--", "sh", "-c", rm, NULL };
		char *sh_allow[] = { "sh", "-c", allow, NULL }, *sh_deny[] = { "sh", "-c", deny, NULL };
		char *cli_att[] = { (char *)devcg_bin, "attach", "-p", pidstr, "--cdi", "nvidia.com/gpu=0",
				    "--cdi-spec-dir", spec, NULL };
		char *cli_det[] = { (char *)devcg_bin, "detach", "-p", pidstr, "--cdi", "nvidia.com/gpu=0",
				    "--cdi-spec-dir", spec, NULL };
		char *ver[] = { (char *)devcg_bin, "--version", NULL };
		uint64_t t0;
		double c0;

		t0 = hp_now();
		c0 = cpu_ms();
		lib_call(true, pid, dirs);
		v[L_ATT][i] = hp_ms_since(t0);
		v[LC_ATT][i] = cpu_ms() - c0;
		check_nodes(pid, true, "devcg_attach()");
		t0 = hp_now();
		c0 = cpu_ms();
		lib_call(false, pid, dirs);
		v[L_DET][i] = hp_ms_since(t0);
		v[LC_DET][i] = cpu_ms() - c0;
		check_nodes(pid, false, "devcg_detach()");
		/* again at once, as a node agent calls it: nothing between (the
		 * first pair came after the previous round's forks, whose
		 * write-protection of our memory its first writes paid for) */
		t0 = hp_now();
		lib_call(true, pid, dirs);
		v[LW_ATT][i] = hp_ms_since(t0);
		check_nodes(pid, true, "devcg_attach() again");
		t0 = hp_now();
		lib_call(false, pid, dirs);
		v[LW_DET][i] = hp_ms_since(t0);
		check_nodes(pid, false, "devcg_detach() again");

		t0 = hp_now();
		c0 = cpu_ms();
		floor_nodes(pid, true, false);
		floor_swap(fcg_fd, val[0], vsize[0], &prev, false);
		v[F_ATT][i] = hp_ms_since(t0);
		v[FC_ATT][i] = cpu_ms() - c0;
		check_nodes(pid, true, "the floor's attach");
		t0 = hp_now();
		c0 = cpu_ms();
		floor_nodes(pid, false, false);
		floor_swap(fcg_fd, val[1], vsize[1], &prev, false);
		v[F_DET][i] = hp_ms_since(t0);
		v[FC_DET][i] = cpu_ms() - c0;
		check_nodes(pid, false, "the floor's detach");
		t0 = hp_now();
		floor_two_phase(pid, fcg_fd, val[0], vsize[0], &prev);
		v[F2_ATT][i] = hp_ms_since(t0);
		check_nodes(pid, true, "the two-phase floor");
		floor_nodes(pid, false, false);
		floor_swap(fcg_fd, val[1], vsize[1], &prev, false);
		/* the floor with a child that shares our memory */
		t0 = hp_now();
		floor_nodes(pid, true, true);
		floor_swap(fcg_fd, val[0], vsize[0], &prev, false);
		v[FS_ATT][i] = hp_ms_since(t0);
		check_nodes(pid, true, "the floor sharing memory");
		t0 = hp_now();
		floor_nodes(pid, false, true);
		floor_swap(fcg_fd, val[1], vsize[1], &prev, false);
		v[FS_DET][i] = hp_ms_since(t0);
		check_nodes(pid, false, "the floor sharing memory, detach");

		t0 = hp_now();
		run_ok(nsenter_mk, "nsenter ... mknod");
		if (v1[0])
			run_ok(sh_allow, "the devices.allow writes");
		v[P_ATT][i] = hp_ms_since(t0);
		check_nodes(pid, true, "nsenter ... mknod");
		t0 = hp_now();
		run_ok(nsenter_rm, "nsenter ... rm");
		if (v1[0])
			run_ok(sh_deny, "the devices.deny writes");
		v[P_DET][i] = hp_ms_since(t0);
		check_nodes(pid, false, "nsenter ... rm");

		t0 = hp_now();
		run_ok(cli_att, "devcg attach");
		v[C_ATT][i] = hp_ms_since(t0);
		check_nodes(pid, true, "devcg attach");
		t0 = hp_now();
		run_ok(cli_det, "devcg detach");
		v[C_DET][i] = hp_ms_since(t0);
		check_nodes(pid, false, "devcg detach");
		t0 = hp_now();
		run_ok(ver, "devcg --version");
		v[VER][i] = hp_ms_since(t0);

		v[R_LIB][i] = v[L_ATT][i] / v[F_ATT][i];
		v[R_LIB_DET][i] = v[L_DET][i] / v[F_DET][i];
		v[R_LIB_BOTH][i] = (v[L_ATT][i] + v[L_DET][i]) / (v[F_ATT][i] + v[F_DET][i]);
		v[R_CLI][i] = v[C_ATT][i] / (v[VER][i] + v[F_ATT][i]);
		v[R_CLI_DET][i] = v[C_DET][i] / (v[VER][i] + v[F_DET][i]);
		v[R_PEER][i] = v[P_ATT][i] / v[F_ATT][i];
		v[R_LIB_CPU][i] = v[LC_ATT][i] / v[FC_ATT][i];
		v[R_LIB_DET_CPU][i] = v[LC_DET][i] / v[FC_DET][i];
		v[R_F2][i] = v[F2_ATT][i] / v[F_ATT][i];
		v[R_LW][i] = v[LW_ATT][i] / v[F_ATT][i];
		v[R_LW_DET][i] = v[LW_DET][i] / v[F_DET][i];
		v[R_FS][i] = v[LW_ATT][i] / v[FS_ATT][i];
		v[R_FS_DET][i] = v[LW_DET][i] / v[FS_DET][i];
	}
	for (i = 0; i < NV; i++) {
		json_object_set_new(out, keys[i], hp_stats(v[i], rounds, i >= R_LIB ? "x" : "ms"));
		free(v[i]);
	}
	json_object_set_new(out, "rounds", json_integer(rounds));
	json_object_set_new(out, "policy_value_bytes", json_integer((json_int_t)vsize[0]));
	json_object_set_new(out, "peer_v1", json_boolean(v1[0] != 0));
	json_object_set_new(out, "nodes", json_pack("[s, s, s, s]", "/dev/nvidia0", "/dev/nvidiactl",
						    "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"));
	{
		char num[NNODES][32];
		json_t *a = json_array();

		for (i = 0; i < NNODES; i++) {
			snprintf(num[i], sizeof(num[i]), "c %u:%u", nodes[i].major, nodes[i].minor);
			json_array_append_new(a, json_string(num[i]));
		}
		json_object_set_new(out, "numbers", a);
	}
	{
		double loads[3] = { 0 };

		if (getloadavg(loads, 3) == 3)
			json_object_set_new(out, "loadavg", json_pack("[f, f, f]", loads[0], loads[1], loads[2]));
		fprintf(stderr, "  hotplug (%d rounds, load average %.2f %.2f %.2f):\n", rounds, loads[0], loads[1],
			loads[2]);
	}
	fprintf(stderr, "    devcg_attach() %.3f ms, devcg_detach() %.3f ms; floor %.3f ms, %.3f ms; "
		"ratio %.2fx, %.2fx (both %.2fx); CPU time %.2fx, %.2fx\n",
		hp_median(json_object_get(out, "lib_attach_ms")), hp_median(json_object_get(out, "lib_detach_ms")),
		hp_median(json_object_get(out, "floor_attach_ms")), hp_median(json_object_get(out, "floor_detach_ms")),
		hp_median(json_object_get(out, "lib_attach_vs_floor")),
		hp_median(json_object_get(out, "lib_detach_vs_floor")),
		hp_median(json_object_get(out, "lib_both_vs_floor")),
		hp_median(json_object_get(out, "lib_attach_vs_floor_cpu")),
		hp_median(json_object_get(out, "lib_detach_vs_floor_cpu")));
	fprintf(stderr, "    the floor in the library's two phases (attach) %.3f ms, %.2fx of the floor\n",
		hp_median(json_object_get(out, "floor_two_phase_attach_ms")),
		hp_median(json_object_get(out, "floor_two_phase_vs_floor")));
	fprintf(stderr, "    again at once: devcg_attach() %.3f ms, devcg_detach() %.3f ms (%.2fx, %.2fx of the floor); "
		"the floor with a child sharing memory %.3f ms, %.3f ms (%.2fx, %.2fx of it)\n",
		hp_median(json_object_get(out, "lib_again_attach_ms")),
		hp_median(json_object_get(out, "lib_again_detach_ms")),
		hp_median(json_object_get(out, "lib_again_attach_vs_floor")),
		hp_median(json_object_get(out, "lib_again_detach_vs_floor")),
		hp_median(json_object_get(out, "floor_shared_attach_ms")),
		hp_median(json_object_get(out, "floor_shared_detach_ms")),
		hp_median(json_object_get(out, "lib_again_attach_vs_floor_shared")),
		hp_median(json_object_get(out, "lib_again_detach_vs_floor_shared")));
	fprintf(stderr, "    devcg attach %.3f ms, devcg detach %.3f ms, devcg --version %.3f ms; "
		"attach / (--version + floor) %.2fx, detach %.2fx\n",
		hp_median(json_object_get(out, "cli_attach_ms")), hp_median(json_object_get(out, "cli_detach_ms")),
		hp_median(json_object_get(out, "version_ms")),
		hp_median(json_object_get(out, "cli_attach_vs_version_floor")),
		hp_median(json_object_get(out, "cli_detach_vs_version_floor")));
	fprintf(stderr, "    nsenter + shell%s: attach %.3f ms, detach %.3f ms\n", v1[0] ? " + v1 devices.allow" : "",
		hp_median(json_object_get(out, "peer_attach_ms")), hp_median(json_object_get(out, "peer_detach_ms")));
	json_object_set_new(results, "hotplug", out);

	close(prev);
	close(fcg_fd);
	free(val[0]);
	free(val[1]);
	devcg_policy_free(base);
	ctr_stop(pid);
	scratch_cleanup();
}

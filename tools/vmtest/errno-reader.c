// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg-errno-reader: the systemd guests' reader. It opens device nodes in a
// loop and counts how each open ends, by errno, so that a node with no
// driver behind it (an unregistered major) tells access from refusal: the
// device cgroup check runs before the driver is looked up (may_open() ->
// devcgroup_inode_permission() in fs/namei.c, then chrdev_open() in
// fs/char_dev.c), so an allowed open fails with ENXIO, a refused one with
// EPERM, and a missing node with ENOENT.
//
// Usage: devcg-errno-reader -1 PATH...        one open each: "PATH ERRNO"
//        devcg-errno-reader [-p USEC] STATE PATH...
//            loop until SIGTERM; about every 20 ms replace the file STATE
//            with "gen N" and one line per path:
//            "PATH last=ERRNO ok=N EPERM=N ENXIO=N ENOENT=N other=N";
//            with -p, sleep USEC microseconds after each round of opens
//            (several readers beside systemd under TCG: a busy loop each
//            would slow everything else down)
// ERRNO is OK, EPERM, ENXIO, ENOENT or the number. Linked statically: the
// same binary runs in the guest and in a busybox container's root.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OK, PERM, NXIO, NOENT, OTHER, NKINDS };
static const char *const kind_names[NKINDS] = { "ok", "EPERM", "ENXIO", "ENOENT", "other" };

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

// open and close PATH; 0 or the errno of the open
static int try_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static int kind_of(int err)
{
	switch (err) {
	case 0: return OK;
	case EPERM: return PERM;
	case ENXIO: return NXIO;
	case ENOENT: return NOENT;
	default: return OTHER;
	}
}

static void errno_name(int err, char *buf, size_t len)
{
	if (err == 0)
		snprintf(buf, len, "OK");
	else if (kind_of(err) != OTHER)
		snprintf(buf, len, "%s", kind_names[kind_of(err)]);
	else
		snprintf(buf, len, "%d", err);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

struct path_state {
	const char *path;
	int last;
	unsigned long long count[NKINDS];
};

static int write_state(const char *file, unsigned long long gen, const struct path_state *ps, int n)
{
	char tmp[4096], name[32];
	FILE *f;
	int i, k;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "gen %llu\n", gen);
	for (i = 0; i < n; i++) {
		errno_name(ps[i].last, name, sizeof(name));
		fprintf(f, "%s last=%s", ps[i].path, name);
		for (k = 0; k < NKINDS; k++)
			fprintf(f, " %s=%llu", kind_names[k], ps[i].count[k]);
		fputc('\n', f);
	}
	if (fclose(f))
		return -1;
	return rename(tmp, file);
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct path_state ps[16] = { 0 };
	unsigned long long gen = 0;
	long pause_us = 0;
	long long next;
	char name[32];
	int n, i;

	if (argc > 2 && !strcmp(argv[1], "-p")) {
		pause_us = atol(argv[2]);
		argv += 2;
		argc -= 2;
	}
	n = argc - 2;
	if (argc < 3 || n > 16 || pause_us < 0 || pause_us >= 1000000) {
		fprintf(stderr, "usage: devcg-errno-reader -1|[-p USEC] STATE PATH... (1 to 16 paths)\n");
		return 2;
	}
	if (!strcmp(argv[1], "-1")) {
		for (i = 2; i < argc; i++) {
			errno_name(try_open(argv[i]), name, sizeof(name));
			printf("%s %s\n", argv[i], name);
		}
		return 0;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	for (i = 0; i < n; i++)
		ps[i].path = argv[2 + i];
	next = now_ms();
	while (!stop) {
		for (i = 0; i < n; i++) {
			ps[i].last = try_open(ps[i].path);
			ps[i].count[kind_of(ps[i].last)]++;
		}
		if (now_ms() >= next) {
			if (write_state(argv[1], ++gen, ps, n)) {
				fprintf(stderr, "devcg-errno-reader: cannot write %s: %s\n", argv[1], strerror(errno));
				return 1;
			}
			next = now_ms() + 20;
		}
		if (pause_us)
			nanosleep(&(struct timespec){ .tv_nsec = pause_us * 1000 }, NULL);
	}
	return write_state(argv[1], ++gen, ps, n) ? 1 : 0;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg-reader: open device nodes in a tight loop and count the EPERMs, the
// way a service that opens /dev/urandom per request would meet a gap.
// Usage: devcg-reader [-j] [-c CGROUP_PROCS_FILE] PATH...
// Runs until SIGTERM or SIGINT, then prints one line per path.
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	unsigned long long opens[16] = { 0 }, eperm[16] = { 0 }, other[16] = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };
	const char *join = NULL;
	int json = 0, c, i, n;

	while ((c = getopt(argc, argv, "jc:")) != -1) {
		if (c == 'j')
			json = 1;
		else if (c == 'c')
			join = optarg;
		else
			return 2;
	}
	n = argc - optind;
	if (n < 1 || n > 16) {
		fprintf(stderr, "usage: devcg-reader [-j] [-c CGROUP.PROCS] PATH... (1 to 16)\n");
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (join) {
		/* join the cgroup before the first open */
		FILE *f = fopen(join, "w");

		if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f)) {
			fprintf(stderr, "devcg-reader: cannot join %s: %s\n", join, strerror(errno));
			return 1;
		}
	}
	/* tell the parent we are in place */
	printf("ready\n");
	fflush(stdout);
	while (!stop) {
		for (i = 0; i < n; i++) {
			int fd = open(argv[optind + i], O_RDONLY | O_CLOEXEC);

			opens[i]++;
			if (fd >= 0)
				close(fd);
			else if (errno == EPERM)
				eperm[i]++;
			else
				other[i]++;
		}
	}
	for (i = 0; i < n; i++) {
		if (json)
			printf("{\"path\":\"%s\",\"opens\":%llu,\"eperm\":%llu,\"other\":%llu}\n",
			       argv[optind + i], opens[i], eperm[i], other[i]);
		else
			printf("%s opens=%llu eperm=%llu other=%llu\n", argv[optind + i], opens[i],
			       eperm[i], other[i]);
	}
	return 0;
}

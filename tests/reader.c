// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
#include "reader.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct shared {
	volatile int stop;
	volatile uint64_t opens[READER_MAX_PROCS][READER_MAX_PATHS];
	volatile uint64_t eperm[READER_MAX_PROCS][READER_MAX_PATHS];
};

struct readers {
	struct shared *sh;
	const char *const *paths;
	int nprocs, npaths, index;
	pid_t pids[READER_MAX_PROCS];
};

static int loop(void *arg)
{
	struct readers *r = arg;
	int me = r->index, i;

	while (!r->sh->stop) {
		for (i = 0; i < r->npaths; i++) {
			int fd = open(r->paths[i], O_RDONLY | O_CLOEXEC);

			r->sh->opens[me][i]++;
			if (fd >= 0)
				close(fd);
			else if (errno == EPERM)
				r->sh->eperm[me][i]++;
		}
	}
	return 0;
}

struct readers *readers_start(const char *cgroup, int nprocs, const char *const *paths, int npaths)
{
	struct readers *r = calloc(1, sizeof(*r));
	int i, p;

	if (!r || nprocs > READER_MAX_PROCS || npaths > READER_MAX_PATHS)
		return NULL;
	r->sh = mmap(NULL, sizeof(*r->sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (r->sh == MAP_FAILED) {
		free(r);
		return NULL;
	}
	r->paths = paths;
	r->nprocs = nprocs;
	r->npaths = npaths;
	for (r->index = 0; r->index < nprocs; r->index++) {
		r->pids[r->index] = scratch_spawn(cgroup, loop, r);
		if (r->pids[r->index] < 0) {
			r->nprocs = r->index;
			readers_stop(r);
			readers_free(r);
			return NULL;
		}
	}
	for (i = 0; i < nprocs; i++)
		for (p = 0; p < npaths; p++)
			while (!r->sh->opens[i][p])
				usleep(500);
	return r;
}

uint64_t readers_opens(const struct readers *r, int i)
{
	uint64_t n = 0;

	for (int k = 0; k < r->nprocs; k++)
		n += r->sh->opens[k][i];
	return n;
}

uint64_t readers_eperm(const struct readers *r, int i)
{
	uint64_t n = 0;

	for (int k = 0; k < r->nprocs; k++)
		n += r->sh->eperm[k][i];
	return n;
}

int readers_stop(struct readers *r)
{
	int ret = 0;

	r->sh->stop = 1;
	for (int k = 0; k < r->nprocs; k++)
		ret |= scratch_wait(r->pids[k]);
	return ret;
}

void readers_free(struct readers *r)
{
	if (!r)
		return;
	munmap(r->sh, sizeof(*r->sh));
	free(r);
}

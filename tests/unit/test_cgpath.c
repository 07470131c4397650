// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The trace's cgroup id -> path lookup, on a directory tree standing in
 * for a hierarchy (a directory's inode number is its id, as a cgroup's is
 * its kernfs id): what a lookup costs is counted, not timed.
 */
#include "harness.h"
#include "trace.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NDIRS 5000

static char tree[64];

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(void)
{
	if (tree[0])
		nftw(tree, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	tree[0] = '\0';
}

/* A tree of NDIRS directories: "/d<i>", and every tenth with "/d<i>/e". */
static void make_tree(void)
{
	char p[256];

	snprintf(tree, sizeof(tree), "/tmp/devcg-unit-cgpath-XXXXXX");
	CHECK(mkdtemp(tree) != NULL);
	atexit(rm_tree); /* a failed CHECK exits: the tree goes too */
	for (int i = 0; i < NDIRS; i++) {
		snprintf(p, sizeof(p), "%s/d%d", tree, i);
		CHECK(!mkdir(p, 0700));
		if (i % 10 == 0) {
			snprintf(p, sizeof(p), "%s/d%d/e", tree, i);
			CHECK(!mkdir(p, 0700));
		}
	}
}

static uint64_t ino_of(const char *rel)
{
	char p[256];
	struct stat st;

	snprintf(p, sizeof(p), "%s%s", tree, rel);
	CHECK(!stat(p, &st));
	return st.st_ino;
}

static struct devcg_cgpaths *paths_of_tree(void)
{
	const char *mounts[DEVCG_H_MAX] = { [DEVCG_H_V2] = tree };
	struct devcg_cgpaths *c = devcg_cgpaths_new_at(mounts);

	CHECK(c != NULL);
	return c;
}

/* Past the bound on walks for unknown ids (one per 20 ms). */
static void after_the_walk_interval(void)
{
	struct timespec ts = { 0, 25 * 1000000L };

	nanosleep(&ts, NULL);
}

TEST(cgroup_path_lookup_finds_every_one_of_thousands_of_ids_in_a_probe_or_two)
{
	struct devcg_cgpaths_stats st;
	struct devcg_cgpaths *c;
	char rel[64];
	int n = 0;

	make_tree();
	c = paths_of_tree();
	for (int i = 0; i < NDIRS; i++) {
		snprintf(rel, sizeof(rel), i % 10 ? "/d%d" : "/d%d/e", i);
		CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, ino_of(rel)), rel);
		n++;
	}
	CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, ino_of("")), "/");
	n++;
	devcg_cgpaths_stats(c, DEVCG_H_V2, &st);
	CHECK_INT(st.lookups, n);
	CHECK_INT(st.entries, 1 + NDIRS + NDIRS / 10);
	/* one walk filled the table; no lookup walked again */
	CHECK_INT(st.walks, 1);
	/* a hash table: on average under two slots looked at per lookup,
	 * where a search of a list looks at half of its 5,501 entries */
	CHECK_MSG(st.probes <= 2 * st.lookups, "%llu probes for %llu lookups",
		  (unsigned long long)st.probes, (unsigned long long)st.lookups);
	devcg_cgpaths_free(c);
	rm_tree();
}

TEST(cgroup_path_lookup_of_an_unknown_id_walks_once_and_then_knows_it_is_unknown)
{
	struct devcg_cgpaths_stats st;
	struct devcg_cgpaths *c;
	uint64_t unknown;
	char p[256];
	int fd;

	make_tree();
	c = paths_of_tree();
	CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, ino_of("/d1")), "/d1");
	/* the inode of a file: no directory of the tree has that id */
	snprintf(p, sizeof(p), "%s/file", tree);
	fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
	CHECK(fd >= 0);
	close(fd);
	unknown = ino_of("/file");
	after_the_walk_interval();
	CHECK(devcg_cgpaths_lookup(c, DEVCG_H_V2, unknown) == NULL);
	devcg_cgpaths_stats(c, DEVCG_H_V2, &st);
	CHECK_INT(st.walks, 2); /* the first, and one for the unknown id */
	CHECK_INT(st.unknown, 1);
	/* asked again, and again: no more walks */
	after_the_walk_interval();
	for (int i = 0; i < 100; i++)
		CHECK(devcg_cgpaths_lookup(c, DEVCG_H_V2, unknown) == NULL);
	devcg_cgpaths_stats(c, DEVCG_H_V2, &st);
	CHECK_INT(st.walks, 2);
	/* the known ones are still found, without a walk */
	CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, ino_of("/d4999")), "/d4999");
	devcg_cgpaths_stats(c, DEVCG_H_V2, &st);
	CHECK_INT(st.walks, 2);
	devcg_cgpaths_free(c);
	rm_tree();
}

TEST(cgroup_path_lookup_finds_a_directory_made_after_the_first_walk)
{
	struct devcg_cgpaths_stats st;
	struct devcg_cgpaths *c;
	char p[256];

	make_tree();
	c = paths_of_tree();
	CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, ino_of("/d2")), "/d2");
	snprintf(p, sizeof(p), "%s/d2/new", tree);
	CHECK(!mkdir(p, 0700));
	after_the_walk_interval();
	CHECK_STR(devcg_cgpaths_lookup(c, DEVCG_H_V2, ino_of("/d2/new")), "/d2/new");
	devcg_cgpaths_stats(c, DEVCG_H_V2, &st);
	CHECK_INT(st.walks, 2);
	CHECK_INT(st.unknown, 0);
	devcg_cgpaths_free(c);
	rm_tree();
}

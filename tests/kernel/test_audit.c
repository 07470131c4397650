// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * --audit: the filter reports each denial to its ring buffer, with the
 * device, the access and the exception that decided.
 */
#include "devcg.h"
#include "devcg_abi.h"
#include "harness.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static struct devcg_audit_event seen[64];
static int nseen;

static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size >= sizeof(seen[0]) && nseen < 64)
		memcpy(&seen[nseen++], data, sizeof(seen[0]));
	return 0;
}

/* The audit ring buffer of program ID, as an fd, or -1 when it has none. */
static int audit_ring(uint32_t id)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info), maps[8];
	int fd = bpf_prog_get_fd_by_id(id), ring = -1;

	CHECK(fd >= 0);
	info.nr_map_ids = 8;
	info.map_ids = (__u64)(unsigned long)maps;
	CHECK(!bpf_obj_get_info_by_fd(fd, &info, &len));
	for (__u32 i = 0; i < info.nr_map_ids && ring < 0; i++) {
		struct bpf_map_info mi = { 0 };
		__u32 mlen = sizeof(mi);
		int m = bpf_map_get_fd_by_id(maps[i]);

		CHECK(m >= 0 && !bpf_obj_get_info_by_fd(m, &mi, &mlen));
		if (mi.type == BPF_MAP_TYPE_RINGBUF)
			ring = m;
		else
			close(m);
	}
	close(fd);
	return ring;
}

static int open_urandom(void *arg)
{
	int fd = open("/dev/urandom", (int)(long)arg);

	return fd < 0 && errno == EPERM ? 0 : 1;
}

static void audited(const char *rules, bool audit, int flags)
{
	struct devcg_rules *list = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	DEVCG_OPTS(devcg_replace_opts, o, .audit = audit);
	struct devcg_error err = { 0 };
	struct ring_buffer *rb;
	char cg[4096];

	int ring;

	if (geteuid() != 0 || !scratch_cgroup2_root())
		SKIP("needs root and cgroup2");
	CHECK(!devcg_rules_parse(list, rules, strlen(rules), "test", NULL, NULL));
	CHECK(!devcg_policy_apply_all(p, list, NULL));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK_MSG(!devcg_replace(cg, p, &o, &err), "%s", err.msg);
	ring = audit_ring(o.prog_id);
	nseen = 0;
	if (!audit) {
		/* a filter without --audit carries no ring buffer at all */
		CHECK_INT(ring, -1);
		CHECK_INT(scratch_run(cg, open_urandom, (void *)(long)flags), 0);
		goto out;
	}
	CHECK(ring >= 0);
	rb = ring_buffer__new(ring, on_event, NULL, NULL);
	CHECK(rb != NULL);
	/* the open must be refused (EPERM) for the run to count */
	CHECK_INT(scratch_run(cg, open_urandom, (void *)(long)flags), 0);
	ring_buffer__consume(rb);
	ring_buffer__free(rb);
	close(ring);
out:
	devcg_rules_free(list);
	devcg_policy_free(p);
}

TEST(audit_reports_a_default_deny_with_device_and_access)
{
	audited("deny a\nallow c 1:3 rwm\n", true, O_RDONLY);
	CHECK_INT(nseen, 1);
	CHECK_INT(seen[0].type, DEVCG_CHAR);
	CHECK_INT(seen[0].major, 1);
	CHECK_INT(seen[0].minor, 9);
	CHECK_INT(seen[0].access, DEVCG_ACC_READ);
	CHECK_INT(seen[0].decided, 0);
	CHECK(seen[0].pid != 0 && seen[0].cgroup_id != 0);
}

TEST(audit_names_the_exception_that_denied)
{
	audited("allow a\ndeny c 1:* w\n", true, O_RDWR);
	CHECK_INT(nseen, 1);
	CHECK_INT(seen[0].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	CHECK_INT(seen[0].decided, 1);
	CHECK_INT(seen[0].decider.major, 1);
	CHECK_INT(seen[0].decider.minor, 0xffffffff);
	CHECK_INT(seen[0].decider_access, DEVCG_ACC_WRITE);
}

TEST(without_audit_the_filter_has_no_ring_buffer_and_still_denies)
{
	audited("deny a\nallow c 1:3 rwm\n", false, O_RDONLY);
	CHECK_INT(nseen, 0);
}

TEST(audit_ring_is_kept_across_swaps_so_a_reader_follows_the_cgroup)
{
	struct devcg_rules *list = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	DEVCG_OPTS(devcg_replace_opts, o, .audit = true);
	struct bpf_map_info a = { 0 }, b = { 0 };
	__u32 len = sizeof(a);
	char cg[4096];
	int r1, r2;

	if (geteuid() != 0 || !scratch_cgroup2_root())
		SKIP("needs root and cgroup2");
	CHECK(!devcg_rules_parse(list, "deny a\n", 6, "test", NULL, NULL));
	CHECK(!devcg_policy_apply_all(p, list, NULL));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!devcg_replace(cg, p, &o, NULL));
	r1 = audit_ring(o.prog_id);
	CHECK(!devcg_replace(cg, p, &o, NULL));
	r2 = audit_ring(o.prog_id);
	CHECK(r1 >= 0 && r2 >= 0);
	CHECK(!bpf_obj_get_info_by_fd(r1, &a, &len));
	len = sizeof(b);
	CHECK(!bpf_obj_get_info_by_fd(r2, &b, &len));
	CHECK_INT(a.id, b.id);
	close(r1);
	close(r2);
	devcg_rules_free(list);
	devcg_policy_free(p);
}

#include "internal.h"
#include "reader.h"

TEST(audit_counts_the_denials_its_ring_had_no_room_for)
{
	static const char *const urandom[1] = { "/dev/urandom" };
	struct devcg_rules *list = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	DEVCG_OPTS(devcg_replace_opts, o, .audit = true);
	int ncpu = libbpf_num_possible_cpus(), prog, lost;
	uint64_t sum = 0, v[256] = { 0 };
	struct readers *r;
	char cg[4096];

	if (geteuid() != 0 || !scratch_cgroup2_root())
		SKIP("needs root and cgroup2");
	CHECK(ncpu > 0 && ncpu <= 256);
	CHECK(!devcg_rules_parse(list, "deny a\n", 7, "test", NULL, NULL));
	CHECK(!devcg_policy_apply_all(p, list, NULL));
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	CHECK(!devcg_replace(cg, p, &o, NULL));
	prog = bpf_prog_get_fd_by_id(o.prog_id);
	lost = devcg_filter_audit_lost(prog);
	CHECK(lost >= 0);
	/* nobody reads the ring: a flood of refused opens must overflow it */
	r = readers_start(cg, 1, urandom, 1);
	CHECK(r != NULL);
	while (readers_eperm(r, 0) < 20000)
		usleep(1000);
	CHECK_INT(readers_stop(r), 0);
	CHECK(!bpf_map_lookup_elem(lost, &(__u32){ 0 }, v));
	for (int c = 0; c < ncpu; c++)
		sum += v[c];
	/* the ring holds a few thousand events; the rest are counted */
	CHECK(sum > 0 && sum < readers_eperm(r, 0));
	readers_free(r);
	close(lost);
	close(prog);
	devcg_rules_free(list);
	devcg_policy_free(p);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Device 0:0 is decided as the kernel decides it: never asked about on
 * open or access (devcgroup_inode_permission() returns early for an inode
 * without i_rdev), nor on a char mknod (a whiteout, devcgroup_inode_mknod());
 * only a block 0:0 mknod is asked, for its 'm'. The kernel's side is in
 * tests/kernel/test_check_zero.c. */
#include "testutil.h"

#include <sys/wait.h>

#define C DEVCG_CHAR
#define B DEVCG_BLOCK
#define R DEVCG_ACC_READ
#define W DEVCG_ACC_WRITE
#define M DEVCG_ACC_MKNOD

UTEST(the_kernel_asks_about_device_0_0_only_for_a_block_mknod)
{
	CHECK_INT(devcg_request_checked(C, 0, 0, R | W | M), 0);
	CHECK_INT(devcg_request_checked(C, 0, 0, 0), 0);
	CHECK_INT(devcg_request_checked(B, 0, 0, R | W), 0);
	CHECK_INT(devcg_request_checked(B, 0, 0, M), 1);
	CHECK_INT(devcg_request_checked(B, 0, 0, R | M), 1);
	/* the controls: any other number is asked */
	CHECK_INT(devcg_request_checked(C, 0, 1, R), 1);
	CHECK_INT(devcg_request_checked(C, 1, 0, 0), 1);
	CHECK_INT(devcg_request_checked(B, 240, 0, R), 1);
}

/* `devcg check --rules FILE` with FILE holding RULES: its exit code. */
static int check_rules(const char *rules, const char *request)
{
	const char *bin = getenv("DEVCG") ? getenv("DEVCG") : "build/devcg";
	char cmd[512];
	int st;

	if (access(bin, X_OK))
		SKIP("%s is not built", bin);
	snprintf(cmd, sizeof(cmd), "%s check --rules %s %s >/dev/null 2>&1", bin,
		 write_scratch("rules", rules), request);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

UTEST(check_allows_device_0_0_under_deny_a_as_the_kernel_does)
{
	CHECK_INT(check_rules("deny a\n", "c 0:0 rwm"), 0);
	CHECK_INT(check_rules("deny a\n", "c 0:0 -"), 0);
	CHECK_INT(check_rules("deny a\n", "b 0:0 rw"), 0);
	/* the controls: its neighbours are denied */
	CHECK_INT(check_rules("deny a\n", "c 0:1 r"), 1);
	CHECK_INT(check_rules("deny a\n", "c 1:0 r"), 1);
}

UTEST(check_decides_a_block_0_0_mknod_by_its_m_alone)
{
	CHECK_INT(check_rules("deny a\n", "b 0:0 m"), 1);
	CHECK_INT(check_rules("deny a\n", "b 0:0 rwm"), 1);
	CHECK_INT(check_rules("deny a\nallow b 0:0 m\n", "b 0:0 rwm"), 0);
	CHECK_INT(check_rules("deny b 0:0 m\n", "b 0:0 m"), 1);
	CHECK_INT(check_rules("deny b 0:0 m\n", "b 0:0 rw"), 0);
}

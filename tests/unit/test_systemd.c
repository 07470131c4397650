// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* systemd DeviceAllow= forms: /dev paths resolved with stat(), and
 * char-NAME / block-NAME globs resolved in (a fake) /proc/devices. */
#include "testutil.h"

#include <stddef.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

static const char fake_proc_devices[] =
	"Character devices:\n"
	"  1 mem\n"
	"  4 tty\n"
	"  5 /dev/tty\n"
	" 10 misc\n"
	"136 pts\n"
	"180 usb\n"
	"189 usb_device\n"
	"\n"
	"Block devices:\n"
	"  7 loop\n"
	"  8 sd\n"
	"259 blkext\n";

/* Parse options that read the fake /proc/devices. */
#define FAKE_OPTS(name)                                                           \
	DEVCG_OPTS(devcg_parse_opts, name,                                        \
		   .proc_devices = write_scratch("devices", fake_proc_devices))

/* Skip unless PATH is a device node of the given kind; fills *st. */
static void need_node(const char *path, bool chr, struct stat *st)
{
	if (stat(path, st) || !(chr ? S_ISCHR(st->st_mode) : S_ISBLK(st->st_mode)))
		SKIP("%s is not a %s device here", path, chr ? "character" : "block");
}

/* ---- /dev paths ----------------------------------------------------------- */

UTEST(path_dev_null_resolves_to_its_char_device_with_rwm)
{
	struct stat st;
	struct devcg_rules *r;

	need_node("/dev/null", true, &st);
	r = PARSE_OK("/dev/null");
	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, major(st.st_rdev), minor(st.st_rdev), RWM);
	/* on Linux /dev/null is always 1:3 */
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, 3, RWM);
	devcg_rules_free(r);
}

UTEST(path_with_verb_and_access_keeps_them)
{
	struct stat st;
	struct devcg_rules *r;

	need_node("/dev/zero", true, &st);
	r = PARSE_OK("deny /dev/zero r\nallow /dev/zero wm\n/dev/zero\tmr\n");
	CHECK_INT(devcg_rules_count(r), 3);
	CHECK_RULE(r, 0, DENY, DEVCG_CHAR, 1, 5, R);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 5, W | M);
	CHECK_RULE(r, 2, ALLOW, DEVCG_CHAR, 1, 5, R | M);
	devcg_rules_free(r);
}

UTEST(path_of_a_block_device_gives_a_block_rule)
{
	static const char *candidates[] = { "/dev/loop0", "/dev/vda", "/dev/sda", "/dev/nvme0n1" };
	struct devcg_rules *r;
	struct stat st;
	char text[64];
	size_t i;

	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (!stat(candidates[i], &st) && S_ISBLK(st.st_mode))
			break;
	if (i == sizeof(candidates) / sizeof(candidates[0]))
		SKIP("no block device node found");
	snprintf(text, sizeof(text), "%s r", candidates[i]);
	r = PARSE_OK(text);
	CHECK_RULE(r, 0, ALLOW, DEVCG_BLOCK, major(st.st_rdev), minor(st.st_rdev), R);
	devcg_rules_free(r);
}

UTEST(path_that_does_not_exist_is_an_error_with_enoent)
{
	PARSE_ERR("c 1:3 r\nallow /nonexistent/devcg-test rw\n", -ENOENT,
		  "in:2:7: cannot stat /nonexistent/devcg-test: No such file or directory");
}

UTEST(path_of_a_regular_file_or_directory_is_an_error)
{
	const char *file = write_scratch("plain", "not a device\n");
	char text[512], want[512];

	snprintf(text, sizeof(text), "%s rw", file);
	snprintf(want, sizeof(want), "in:1:1: %s is not a device node", file);
	PARSE_ERR(text, -ENOTBLK, want);
	PARSE_ERR("deny / r", -ENOTBLK, "in:1:6: / is not a device node");
}

UTEST(path_with_bad_or_extra_access_is_an_error)
{
	PARSE_ERR("/dev/null rwx", -EINVAL, "in:1:11: access must be letters of 'rwm', not 'rwx'");
	PARSE_ERR("/dev/null r w", -EINVAL, "in:1:13: unexpected text after the access");
}

/* ---- char-NAME and block-NAME ------------------------------------------------ */

UTEST(char_name_gives_every_minor_of_the_matching_major)
{
	FAKE_OPTS(opts);

	PARSE_GIVES("char-mem\ndeny char-pts w\n", &opts,
		    { ALLOW, DEVCG_CHAR, 1, ANY, RWM },
		    { DENY, DEVCG_CHAR, 136, ANY, W });
}

UTEST(char_name_glob_gives_one_rule_per_matching_driver_in_file_order)
{
	FAKE_OPTS(opts);

	PARSE_GIVES("char-usb* r\nchar-[mp]*\n", &opts,
		    { ALLOW, DEVCG_CHAR, 180, ANY, R },
		    { ALLOW, DEVCG_CHAR, 189, ANY, R },
		    { ALLOW, DEVCG_CHAR, 1, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 10, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 136, ANY, RWM });
}

UTEST(block_name_looks_only_in_the_block_section)
{
	FAKE_OPTS(opts);

	PARSE_GIVES("block-loop\nblock-sd r\nblock-[lb]* m\n", &opts,
		    { ALLOW, DEVCG_BLOCK, 7, ANY, RWM },
		    { ALLOW, DEVCG_BLOCK, 8, ANY, R },
		    { ALLOW, DEVCG_BLOCK, 7, ANY, M },
		    { ALLOW, DEVCG_BLOCK, 259, ANY, M });
}

UTEST(name_glob_may_match_a_slash_as_in_systemd_char_cpu_example)
{
	/* systemd.resource-control(5) gives char-cpu/ and a '*' as matching
	 * all CPU related device groups: fnmatch() without FNM_PATHNAME */
	DEVCG_OPTS(devcg_parse_opts, opts,
		   .proc_devices = write_scratch("devices", "Character devices:\n"
							    "  1 mem\n202 cpu/msr\n203 cpu/cpuid\n"));

	PARSE_GIVES("char-cpu/* r", &opts,
		    { ALLOW, DEVCG_CHAR, 202, ANY, R },
		    { ALLOW, DEVCG_CHAR, 203, ANY, R });
}

UTEST(name_with_no_matching_driver_is_an_error_with_enoent)
{
	/* systemd skips such an entry with a debug message; devcg refuses the
	 * list rather than install something else than what was written */
	FAKE_OPTS(opts);

	/* loop is a block driver, mem a character one */
	PARSE_ERR_OPTS("char-loop", &opts, -ENOENT,
		       "in:1:1: no character device driver matches this name in /proc/devices");
	PARSE_ERR_OPTS("c 1:3 r\ndeny block-mem r", &opts, -ENOENT,
		       "in:2:6: no block device driver matches this name in /proc/devices");
	/* the glob must match the whole name */
	PARSE_ERR_OPTS("char-us", &opts, -ENOENT,
		       "in:1:1: no character device driver matches this name in /proc/devices");
}

UTEST(name_without_driver_is_an_error)
{
	FAKE_OPTS(opts);

	PARSE_ERR_OPTS("char-", &opts, -EINVAL, "in:1:1: missing driver name after 'char-'");
	PARSE_ERR_OPTS("allow block- r", &opts, -EINVAL,
		       "in:1:7: missing driver name after 'block-'");
}

UTEST(name_with_bad_or_extra_access_is_an_error)
{
	FAKE_OPTS(opts);

	PARSE_ERR_OPTS("char-mem rq", &opts, -EINVAL,
		       "in:1:10: access must be letters of 'rwm', not 'rq'");
	PARSE_ERR_OPTS("char-mem r w", &opts, -EINVAL, "in:1:12: unexpected text after the access");
}

UTEST(name_error_after_expanded_lines_appends_nothing)
{
	FAKE_OPTS(opts);

	PARSE_ERR_OPTS("char-*\nblock-*\nchar-nosuchdriver\n", &opts, -ENOENT,
		       "in:3:1: no character device driver matches this name in /proc/devices");
}

UTEST(name_when_proc_devices_cannot_be_read_is_an_error)
{
	char path[256];
	DEVCG_OPTS(devcg_parse_opts, opts, .proc_devices = path);

	snprintf(path, sizeof(path), "%s/no-such-devices", scratch());
	PARSE_ERR_OPTS("char-mem", &opts, -ENOENT,
		       "in:1:1: cannot read /proc/devices to resolve this name");
}

UTEST(name_ignores_proc_devices_option_beyond_the_struct_size)
{
	/* an options struct too small to hold proc_devices: the real file is used */
	const char *fake = write_scratch("devices", "Character devices:\n 99 mem\n");
	struct devcg_parse_opts opts = {
		.sz = offsetof(struct devcg_parse_opts, proc_devices),
		.proc_devices = fake,
	};
	struct devcg_rules *r;
	FILE *f = fopen("/proc/devices", "r");

	if (!f)
		SKIP("/proc/devices is not readable");
	fclose(f);
	r = PARSE_OK_OPTS("char-mem", &opts);
	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, ANY, RWM); /* mem is major 1 on Linux */
	devcg_rules_free(r);
}

UTEST(name_resolves_against_the_real_proc_devices_by_default)
{
	FILE *f = fopen("/proc/devices", "r");
	struct devcg_rules *r;

	if (!f)
		SKIP("/proc/devices is not readable");
	fclose(f);
	r = PARSE_OK("char-mem r");
	CHECK_INT(devcg_rules_count(r), 1);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, ANY, R);
	devcg_rules_free(r);
}

/* ---- paths systemd reads without looking at the disk ------------------------
 * device_path_parse_major_minor() in systemd's src/basic/devnum-util.c (v252):
 * /dev/char/M:N, /dev/block/M:N and /run/systemd/inaccessible/{chr,blk}. The
 * numbers below exist on no host, so a stat() could not give them. */

UTEST(path_dev_char_and_block_numbers_are_read_from_the_path)
{
	PARSE_GIVES("/dev/char/4095:1048575 r\n"
		    "deny /dev/block/4000:7 w\n"
		    "/dev/char/0:0\n", NULL,
		    { ALLOW, DEVCG_CHAR, 4095, 1048575, R },
		    { DENY, DEVCG_BLOCK, 4000, 7, W },
		    { ALLOW, DEVCG_CHAR, 0, 0, RWM });
}

UTEST(path_dev_char_is_matched_by_components_as_systemd_does)
{
	/* path_startswith() skips repeated slashes and "." components */
	PARSE_GIVES("//dev//char/./4001:2 r\n/dev/./block//4002:3 w\n", NULL,
		    { ALLOW, DEVCG_CHAR, 4001, 2, R },
		    { ALLOW, DEVCG_BLOCK, 4002, 3, W });
}

UTEST(path_dev_char_numbers_take_c_prefixes_as_systemd_safe_atou_does)
{
	/* parse_devnum(): the major is decimal digits, read with safe_atou()
	 * (strtoul base 0), so a leading 0 is octal; the minor is anything
	 * safe_atou() takes (0x, 0o, 0b prefixes) */
	PARSE_GIVES("/dev/char/010:0x10\n/dev/block/7:0b101\n/dev/char/1:0o17\n", NULL,
		    { ALLOW, DEVCG_CHAR, 8, 16, RWM },
		    { ALLOW, DEVCG_BLOCK, 7, 5, RWM },
		    { ALLOW, DEVCG_CHAR, 1, 15, RWM });
}

UTEST(path_dev_char_with_bad_numbers_is_an_error_without_a_stat)
{
	/* systemd fails such an entry (EINVAL or ERANGE) rather than stat() it */
	PARSE_ERR("/dev/char/1:x", -EINVAL,
		  "in:1:1: /dev/char/1:x: expected MAJOR:MINOR after /dev/char/ or /dev/block/");
	PARSE_ERR("/dev/char/", -EINVAL,
		  "in:1:1: /dev/char/: expected MAJOR:MINOR after /dev/char/ or /dev/block/");
	PARSE_ERR("c 1:3 r\ndeny /dev/block/0x7:0 r", -EINVAL,
		  "in:2:6: /dev/block/0x7:0: expected MAJOR:MINOR after /dev/char/ or /dev/block/");
	PARSE_ERR("/dev/char/1:3/x", -EINVAL,
		  "in:1:1: /dev/char/1:3/x: expected MAJOR:MINOR after /dev/char/ or /dev/block/");
	PARSE_ERR("/dev/char/09:1", -EINVAL,
		  "in:1:1: /dev/char/09:1: expected MAJOR:MINOR after /dev/char/ or /dev/block/");
	PARSE_ERR("/dev/char/4096:0", -ERANGE,
		  "in:1:1: /dev/char/4096:0: the major must be below 4096 and the minor below 1048576");
	PARSE_ERR("/dev/block/1:1048576", -ERANGE,
		  "in:1:1: /dev/block/1:1048576: the major must be below 4096 and the minor below 1048576");
}

UTEST(path_dev_char_followed_by_dot_dot_is_looked_up_on_disk)
{
	/* path_startswith() refuses a ".." component, so systemd stat()s it
	 * (read from the path, this would be a bad MAJOR:MINOR instead) */
	PARSE_ERR("/dev/char/../nonexistent-devcg:1", -ENOENT,
		  "in:1:1: cannot stat /dev/char/../nonexistent-devcg:1: No such file or directory");
}

UTEST(path_run_systemd_inaccessible_nodes_are_0_0)
{
	/* systemd makes them with mknod(..., makedev(0, 0)) and reads them
	 * from the path */
	PARSE_GIVES("/run/systemd/inaccessible/chr\n"
		    "/run/systemd/inaccessible/blk r\n"
		    "//run/systemd/./inaccessible//chr w\n", NULL,
		    { ALLOW, DEVCG_CHAR, 0, 0, RWM },
		    { ALLOW, DEVCG_BLOCK, 0, 0, R },
		    { ALLOW, DEVCG_CHAR, 0, 0, W });
}

UTEST(path_systemd_default_device_list_parses_without_its_run_nodes)
{
	/* bpf_devices_allow_list_static() in systemd's src/core/bpf-devices.c */
	static const char list[] = "deny a\n"
				   "/dev/null rwm\n/dev/zero rwm\n/dev/full rwm\n/dev/random rwm\n"
				   "/dev/urandom rwm\n/dev/tty rwm\n/dev/ptmx rwm\n"
				   "/run/systemd/inaccessible/chr rwm\n"
				   "/run/systemd/inaccessible/blk rwm\n"
				   "char-pts rw\n";
	FAKE_OPTS(opts);
	struct stat st;
	struct devcg_rules *r;

	need_node("/dev/ptmx", true, &st);
	need_node("/dev/tty", true, &st);
	r = PARSE_OK_OPTS(list, &opts);
	CHECK_INT(devcg_rules_count(r), 11);
	CHECK_RULE(r, 8, ALLOW, DEVCG_CHAR, 0, 0, RWM);
	CHECK_RULE(r, 9, ALLOW, DEVCG_BLOCK, 0, 0, RWM);
	CHECK_RULE(r, 10, ALLOW, DEVCG_CHAR, 136, ANY, R | W);
	devcg_rules_free(r);
}

UTEST(path_near_the_inaccessible_nodes_is_looked_up_on_disk)
{
	PARSE_ERR("/run/systemd/inaccessible/chrx", -ENOENT,
		  "in:1:1: cannot stat /run/systemd/inaccessible/chrx: No such file or directory");
}

/* ---- char-NUMBER and block-NUMBER ------------------------------------------
 * bpf_devices_allow_list_major() in systemd's src/core/bpf-devices.c (v252):
 * a name that safe_atou() reads as a valid major (below 4096) is that major. */

UTEST(char_number_is_that_major_with_every_minor)
{
	FAKE_OPTS(opts); /* no driver in it is named by a number */

	PARSE_GIVES("allow char-1 rw\ndeny block-8 r\nchar-0\nchar-4095\n", &opts,
		    { ALLOW, DEVCG_CHAR, 1, ANY, R | W },
		    { DENY, DEVCG_BLOCK, 8, ANY, R },
		    { ALLOW, DEVCG_CHAR, 0, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 4095, ANY, RWM });
}

UTEST(char_number_takes_c_prefixes_and_a_sign_as_systemd_safe_atou_does)
{
	FAKE_OPTS(opts);

	PARSE_GIVES("char-010\nchar-0x10\nchar-0b11\nchar-0O17\n"
		    "char-+5\nchar--0\n", &opts,
		    { ALLOW, DEVCG_CHAR, 8, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 16, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 3, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 15, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 5, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 0, ANY, RWM });
}

UTEST(char_number_that_is_no_valid_major_is_a_driver_name)
{
	/* 4096 and above, negative numbers and trailing text are looked up
	 * in /proc/devices like any name */
	DEVCG_OPTS(devcg_parse_opts, opts,
		   .proc_devices = write_scratch("devices", "Character devices:\n"
							    " 77 4096\n 78 -1\n 79 1x\n"));

	PARSE_GIVES("char-4096\nchar--1\nchar-1x\n", &opts,
		    { ALLOW, DEVCG_CHAR, 77, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 78, ANY, RWM },
		    { ALLOW, DEVCG_CHAR, 79, ANY, RWM });
	PARSE_ERR_OPTS("block-4096", &opts, -ENOENT,
		       "in:1:1: no block device driver matches this name in /proc/devices");
}

/* ---- char-* and block-* ------------------------------------------------------
 * bpf_devices_allow_list_major(): the name "*" is the class rule "c *:*"
 * (or "b *:*"), whatever /proc/devices lists; other globs are looked up. */

UTEST(char_star_is_one_rule_for_the_whole_class)
{
	FAKE_OPTS(opts);

	PARSE_GIVES("char-* rw\ndeny block-* m\n", &opts,
		    { ALLOW, DEVCG_CHAR, ANY, ANY, R | W },
		    { DENY, DEVCG_BLOCK, ANY, ANY, M });
}

UTEST(char_star_allows_a_major_that_no_driver_lists)
{
	FAKE_OPTS(opts);
	struct devcg_rules *r = PARSE_OK_OPTS("deny a\nchar-* rw\n", &opts);
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_error err = { 0 };

	CHECK(p);
	CHECK_INT(devcg_policy_apply_all(p, r, &err), 0);
	CHECK_ALLOWED(p, DEVCG_CHAR, 511, 3, R | W); /* 511 is not in the fake file */
	CHECK_ALLOWED(p, DEVCG_CHAR, 1, 3, R);
	CHECK_DENIED(p, DEVCG_CHAR, 511, 3, M);
	CHECK_DENIED(p, DEVCG_BLOCK, 7, 0, R);
	devcg_policy_free(p);
	devcg_rules_free(r);
}

UTEST(char_star_needs_no_driver_and_no_readable_proc_devices)
{
	char path[256];
	DEVCG_OPTS(devcg_parse_opts, missing, .proc_devices = path);
	DEVCG_OPTS(devcg_parse_opts, empty,
		   .proc_devices = write_scratch("devices", "Character devices:\n\nBlock devices:\n"));
	struct devcg_rules *r;

	PARSE_GIVES("char-*\nblock-* r\n", &empty,
		    { ALLOW, DEVCG_CHAR, ANY, ANY, RWM },
		    { ALLOW, DEVCG_BLOCK, ANY, ANY, R });
	snprintf(path, sizeof(path), "%s/no-such-devices", scratch());
	r = PARSE_OK_OPTS("char-*", &missing);
	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, ANY, ANY, RWM);
	devcg_rules_free(r);
}

UTEST(other_globs_that_match_every_driver_are_looked_up)
{
	/* only the exact name "*" is the class rule */
	FAKE_OPTS(opts);
	struct devcg_rules *r = PARSE_OK_OPTS("block-?* r\nblock-** w\n", &opts);

	CHECK_INT(devcg_rules_count(r), 6);
	CHECK_RULE(r, 0, ALLOW, DEVCG_BLOCK, 7, ANY, R);
	CHECK_RULE(r, 1, ALLOW, DEVCG_BLOCK, 8, ANY, R);
	CHECK_RULE(r, 2, ALLOW, DEVCG_BLOCK, 259, ANY, R);
	CHECK_RULE(r, 3, ALLOW, DEVCG_BLOCK, 7, ANY, W);
	CHECK_RULE(r, 5, ALLOW, DEVCG_BLOCK, 259, ANY, W);
	devcg_rules_free(r);
}

/* ---- /proc/devices and the access, as systemd reads them -------------------- */

UTEST(name_lookup_skips_major_0_and_ends_a_section_at_a_blank_line)
{
	/* bpf_devices_allow_list_major(): "maj <= 0" lines are skipped and an
	 * empty line ends the section */
	DEVCG_OPTS(devcg_parse_opts, opts,
		   .proc_devices = write_scratch("devices", "Character devices:\n"
							    "  0 zero\n  1 mem\n\n 99 stray\n"));
	struct devcg_rules *r = PARSE_OK_OPTS("char-mem\n", &opts);

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, ANY, RWM);
	devcg_rules_free(r);
	PARSE_ERR_OPTS("char-zero", &opts, -ENOENT,
		       "in:1:1: no character device driver matches this name in /proc/devices");
	PARSE_ERR_OPTS("char-stray", &opts, -ENOENT,
		       "in:1:1: no character device driver matches this name in /proc/devices");
}

UTEST(access_of_a_systemd_form_may_repeat_letters)
{
	/* load-fragment.c takes any string of r, w and m (in_charset) */
	FAKE_OPTS(opts);
	struct devcg_rules *r = PARSE_OK_OPTS("char-mem rrw\n/dev/char/1:3 mwmw\n", &opts);

	CHECK_RULE(r, 0, ALLOW, DEVCG_CHAR, 1, ANY, R | W);
	CHECK_RULE(r, 1, ALLOW, DEVCG_CHAR, 1, 3, W | M);
	devcg_rules_free(r);
	PARSE_ERR_OPTS("char-mem rwx", &opts, -EINVAL,
		       "in:1:10: access must be letters of 'rwm', not 'rwx'");
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Keeping a systemd unit in step: what a devcg policy allows, said in the
 * DeviceAllow= forms systemd 252 reads (bpf-devices.c, devnum-util.c), and
 * read back by devcg's own parser into a policy that allows at least as
 * much. (The D-Bus side runs in the systemd guest of make vmtest.) */
#include "testutil.h"
#include "internal.h"

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct devcg_sd_entry *)a)->path, ((const struct devcg_sd_entry *)b)->path);
}

/* The entries for TEXT's policy, as "PATH ACCESS" lines sorted by path. */
static void entries_of(const char *text, char *out, size_t len)
{
	struct devcg_policy *p = POLICY_OF(text);
	struct devcg_sd_entry *e = NULL;
	size_t n = 0, i, off = 0;

	CHECK_INT(devcg_systemd_entries(p, &e, &n), 0);
	if (n)
		qsort(e, n, sizeof(*e), cmp_entry);
	out[0] = '\0';
	for (i = 0; i < n; i++) {
		char acc[4];
		int k = 0;

		if (e[i].access & DEVCG_ACC_READ)
			acc[k++] = 'r';
		if (e[i].access & DEVCG_ACC_WRITE)
			acc[k++] = 'w';
		if (e[i].access & DEVCG_ACC_MKNOD)
			acc[k++] = 'm';
		acc[k] = '\0';
		off += (size_t)snprintf(out + off, len - off, "%s %s\n", e[i].path, acc);
	}
	free(e);
	devcg_policy_free(p);
}

UTEST(one_device_is_its_dev_char_path_which_systemd_parses_without_a_node)
{
	char got[512];

	entries_of("deny a\nallow c 1:3 rw\nallow b 7:0 r\n", got, sizeof(got));
	CHECK_STR(got, "/dev/block/7:0 r\n/dev/char/1:3 rw\n");
}

UTEST(a_whole_major_is_char_number_as_systemd_reads_a_numeric_name)
{
	char got[512];

	entries_of("deny a\nallow c 136:* rw\n", got, sizeof(got));
	CHECK_STR(got, "char-136 rw\n");
}

UTEST(what_systemd_cannot_name_widens_to_the_class_never_narrows)
{
	char got[512];

	/* a '*' major, a minor over 20 bits, a major over 12 bits */
	entries_of("deny a\nallow c *:5 m\nallow c 1:2000000 r\nallow b 5000:1 w\n", got, sizeof(got));
	CHECK_STR(got, "block-* w\nchar-* rm\n");
}

UTEST(a_default_allow_policy_is_every_char_and_block_device)
{
	char got[512];

	entries_of("allow a\ndeny c 1:3 rwm\n", got, sizeof(got));
	CHECK_STR(got, "block-* rwm\nchar-* rwm\n");
}

UTEST(a_deny_all_policy_needs_no_entry)
{
	char got[512];

	entries_of("deny a\n", got, sizeof(got));
	CHECK_STR(got, "");
}

/* The property devcg relies on: systemd's program built from the entries
 * allows every request devcg's policy allows. Read back with devcg's own
 * parser of systemd's forms (as 'strict' with only these entries). */
UTEST(the_entries_allow_everything_the_policy_allows)
{
	const char *text = "deny a\nallow c 1:3 rw\nallow c 136:* rw\nallow c *:7 m\n"
			   "allow b 8:* r\nallow c 4095:1048575 w\nallow c 5000:1 r\n";
	struct devcg_policy *p = POLICY_OF(text), *sd = devcg_policy_new();
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_sd_entry *e = NULL;
	struct devcg_error err = { 0 };
	static const uint32_t majors[] = { 1, 5, 8, 136, 4095, 5000 };
	static const uint32_t minors[] = { 1, 3, 7, 1048575 };
	size_t n = 0, i, a, b;
	uint8_t acc;

	CHECK(sd && rules);
	CHECK_INT(devcg_systemd_entries(p, &e, &n), 0);
	CHECK_INT(devcg_rules_parse_rule(rules, "deny a", "sd", NULL, &err), 0);
	for (i = 0; i < n; i++) {
		char line[128], rwm[4];
		int k = 0;

		if (e[i].access & DEVCG_ACC_READ)
			rwm[k++] = 'r';
		if (e[i].access & DEVCG_ACC_WRITE)
			rwm[k++] = 'w';
		if (e[i].access & DEVCG_ACC_MKNOD)
			rwm[k++] = 'm';
		rwm[k] = '\0';
		snprintf(line, sizeof(line), "allow %s %s", e[i].path, rwm);
		CHECK_MSG(!devcg_rules_parse_rule(rules, line, "sd", NULL, &err), "%s: %s", line, err.msg);
	}
	CHECK_INT(devcg_policy_apply_all(sd, rules, &err), 0);
	for (int t = 0; t < 2; t++)
		for (a = 0; a < sizeof(majors) / sizeof(majors[0]); a++)
			for (b = 0; b < sizeof(minors) / sizeof(minors[0]); b++)
				for (acc = 0; acc <= DEVCG_ACC_ALL; acc++) {
					uint8_t type = t ? DEVCG_BLOCK : DEVCG_CHAR;

					if (devcg_policy_check(p, type, majors[a], minors[b], acc, NULL, NULL) == 1)
						CHECK_MSG(devcg_policy_check(sd, type, majors[a], minors[b], acc,
									     NULL, NULL) == 1,
							  "%c %u:%u access %u: devcg allows, systemd's list refuses",
							  t ? 'b' : 'c', majors[a], minors[b], acc);
				}
	/* control: the check can fail (a list without the entries refuses) */
	CHECK_INT(devcg_policy_check(sd, DEVCG_BLOCK, 7, 1, DEVCG_ACC_READ, NULL, NULL), 0);
	free(e);
	devcg_rules_free(rules);
	devcg_policy_free(sd);
	devcg_policy_free(p);
}

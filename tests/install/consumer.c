/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* A program that uses libdevcg as an outside project would: only the
 * installed header, found through pkg-config. Built as C99 -pedantic, as
 * C++17 and statically by tests/install/test.sh. Prints one line per fact
 * and exits non-zero on the first that does not hold. */
#include <devcg.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *policy = devcg_policy_new();
	struct devcg_error err;
	const char *text = "deny a\nallow c 1:3 rwm\n";
	int allow_null, allow_zero;

	DEVCG_OPTS(devcg_parse_opts, opts);
	memset(&err, 0, sizeof(err));
	if (!rules || !policy)
		return 1;
	if (strcmp(devcg_version(), DEVCG_VERSION)) {
		printf("version: library %s, header %s\n", devcg_version(), DEVCG_VERSION);
		return 1;
	}
	if (devcg_rules_parse(rules, text, strlen(text), "consumer", &opts, &err) ||
	    devcg_policy_apply_all(policy, rules, &err)) {
		printf("parse: %s\n", err.msg);
		return 1;
	}
	allow_null = devcg_policy_check(policy, DEVCG_CHAR, 1, 3, DEVCG_ACC_READ, NULL, NULL);
	allow_zero = devcg_policy_check(policy, DEVCG_CHAR, 1, 5, DEVCG_ACC_READ, NULL, NULL);
	printf("version %s, c 1:3 r %s, c 1:5 r %s\n", devcg_version(), allow_null ? "allow" : "deny",
	       allow_zero ? "allow" : "deny");
	devcg_policy_free(policy);
	devcg_rules_free(rules);
	return allow_null == 1 && allow_zero == 0 ? 0 : 1;
}

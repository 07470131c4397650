// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The man page, `devcg --help` and each verb's --help name the same verbs
 * and options. */
#include "harness.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const verbs[] = { "replace", "show", "check", "allow", "deny", "reset", "compile",
				     "trace", "oci-hook", "attach", "detach", "doctor" };

static char *slurp_cmd(const char *cmd)
{
	FILE *p = popen(cmd, "r");
	size_t len = 0, got;
	char *buf = calloc(1, 65536);

	CHECK(p && buf);
	while ((got = fread(buf + len, 1, 65535 - len, p)) > 0)
		len += got;
	CHECK_INT(pclose(p), 0);
	return buf;
}

static const char *devcg(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

static char *man_page(void)
{
	char *man = slurp_cmd("cat user/cli/devcg.8");

	CHECK(strlen(man) > 1000);
	return man;
}

TEST(every_verb_is_in_the_main_help_and_the_man_page)
{
	char cmd[512], *help, *man;

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	snprintf(cmd, sizeof(cmd), "%s --help", devcg());
	help = slurp_cmd(cmd);
	man = man_page();
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		char ss[64];

		snprintf(ss, sizeof(ss), "\n.SS %s ", verbs[i]);
		CHECK_MSG(strstr(help, verbs[i]) != NULL, "'%s' missing from devcg --help", verbs[i]);
		CHECK_MSG(strstr(man, ss) != NULL, "'%s' has no .SS section in devcg.8", verbs[i]);
	}
	free(help);
	free(man);
}

TEST(bash_completion_offers_every_verb_and_every_long_option)
{
	char *comp = slurp_cmd("cat user/cli/devcg.bash");
	int found = 0;

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		char cmd[512], *help, *p;

		CHECK_MSG(strstr(comp, verbs[i]) != NULL, "'%s' missing from devcg.bash", verbs[i]);
		snprintf(cmd, sizeof(cmd), "%s %s --help", devcg(), verbs[i]);
		help = slurp_cmd(cmd);
		for (p = help; (p = strstr(p, "--")); p += 2) {
			char opt[64], word[80];
			size_t n = 0;

			while (n < sizeof(opt) - 1 && ((p[2 + n] >= 'a' && p[2 + n] <= 'z') || p[2 + n] == '1' ||
						      p[2 + n] == '-'))
				opt[n] = p[2 + n], n++;
			opt[n] = '\0';
			if (!n)
				continue;
			snprintf(word, sizeof(word), "--%s", opt);
			CHECK_MSG(strstr(comp, word) != NULL, "'%s' of '%s --help' is not in devcg.bash", word,
				  verbs[i]);
			found++;
		}
		free(help);
	}
	CHECK(found > 10);
	free(comp);
}

TEST(every_long_option_of_a_verb_help_is_in_the_man_page)
{
	char *man;
	int found = 0;

	if (access(devcg(), X_OK))
		SKIP("%s is not built", devcg());
	man = man_page();
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++) {
		char cmd[512], *help, *p;

		snprintf(cmd, sizeof(cmd), "%s %s --help", devcg(), verbs[i]);
		help = slurp_cmd(cmd);
		CHECK_MSG(strncmp(help, "Usage: devcg ", 13) == 0, "%s --help: no usage line", verbs[i]);
		for (p = help; (p = strstr(p, "--")); p += 2) {
			char opt[64], roff[80];
			size_t n = 0;

			while (n < sizeof(opt) - 1 && ((p[2 + n] >= 'a' && p[2 + n] <= 'z') ||
						      (p[2 + n] >= '0' && p[2 + n] <= '9') || p[2 + n] == '-'))
				opt[n] = p[2 + n], n++;
			opt[n] = '\0';
			if (!n)
				continue;
			snprintf(roff, sizeof(roff), "\\-\\-%s", opt);
			CHECK_MSG(strstr(man, roff) != NULL, "'--%s' of '%s --help' is not in devcg.8",
				  opt, verbs[i]);
			found++;
		}
		free(help);
	}
	CHECK(found > 10);
	free(man);
}

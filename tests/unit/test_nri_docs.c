// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg-nri's --help (nri_usage), its man page user/nri/devcg-nri.8 and its
 * bash completion user/nri/devcg-nri.bash name the same options. */
#include "harness.h"
#include "nri.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = calloc(1, 65536);
	size_t len;

	CHECK_MSG(f && buf, "cannot read %s", path);
	len = fread(buf, 1, 65535, f);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* Calls FN for each long option ("--name") of TEXT; the count. */
static int each_long_option(const char *text, void (*fn)(const char *opt, const char *other), const char *other)
{
	int found = 0;

	for (const char *p = text; (p = strstr(p, "--")); p += 2) {
		char opt[64];
		size_t n = 0;

		while (n < sizeof(opt) - 1 && ((p[2 + n] >= 'a' && p[2 + n] <= 'z') || p[2 + n] == '-'))
			opt[n] = p[2 + n], n++;
		opt[n] = '\0';
		if (!n)
			continue;
		fn(opt, other);
		found++;
	}
	return found;
}

static void in_man(const char *opt, const char *man)
{
	char roff[80], *esc = roff;

	/* roff spells every '-' of an option \- */
	esc += sprintf(esc, "\\-\\-");
	for (const char *c = opt; *c; c++)
		esc += *c == '-' ? sprintf(esc, "\\-") : sprintf(esc, "%c", *c);
	CHECK_MSG(strstr(man, roff) != NULL, "'--%s' of devcg-nri --help is not in devcg-nri.8", opt);
}

static void in_completion(const char *opt, const char *comp)
{
	char word[80];
	const char *p = comp;
	size_t n = (size_t)snprintf(word, sizeof(word), "--%s", opt);

	/* the whole word: "--name", not the start of "--name-x" */
	while ((p = strstr(p, word)) && ((p[n] >= 'a' && p[n] <= 'z') || p[n] == '-'))
		p += n;
	CHECK_MSG(p != NULL, "'--%s' of devcg-nri --help is not in devcg-nri.bash", opt);
}

static void in_help(const char *opt, const char *help)
{
	char word[80];

	snprintf(word, sizeof(word), "--%s", opt);
	CHECK_MSG(strstr(help, word) != NULL, "'--%s' of devcg-nri.bash is not in devcg-nri --help", opt);
}

TEST(nri_every_long_option_of_the_help_is_in_the_man_page)
{
	char *man = slurp("user/nri/devcg-nri.8");

	CHECK(each_long_option(nri_usage, in_man, man) >= 9);
	free(man);
}

TEST(nri_every_long_option_of_the_help_is_in_the_bash_completion)
{
	char *comp = slurp("user/nri/devcg-nri.bash");

	CHECK(each_long_option(nri_usage, in_completion, comp) >= 9);
	free(comp);
}

TEST(nri_the_bash_completion_offers_no_option_the_help_does_not_name)
{
	char *comp = slurp("user/nri/devcg-nri.bash");

	CHECK(each_long_option(strstr(comp, "compgen -W"), in_help, nri_usage) >= 9);
	free(comp);
}

TEST(nri_devcg_nri_help_prints_the_usage_the_man_page_is_checked_against)
{
	const char *bin = getenv("DEVCG_NRI") ? getenv("DEVCG_NRI") : "build/devcg-nri";
	char cmd[512], *out = calloc(1, 65536);
	size_t len = 0, got;
	FILE *p;

	if (access(bin, X_OK))
		SKIP("%s is not built (it is once include/devcg.h has the container calls)", bin);
	snprintf(cmd, sizeof(cmd), "%s --help", bin);
	p = popen(cmd, "r");
	CHECK(p && out);
	while ((got = fread(out + len, 1, 65535 - len, p)) > 0)
		len += got;
	CHECK_INT(pclose(p), 0);
	CHECK_STR(out, nri_usage);
	free(out);
}

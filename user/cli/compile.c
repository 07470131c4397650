// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg compile: print the normalized policy of a rule list.
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "runtime", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	static struct policy_args pa;
	DEVCG_OPTS(devcg_parse_opts, parse);
	struct devcg_policy *policy;
	int c, ret;

	optind = 1;
	/* '-': rules come back in order among the -f files (as option 1) */
	while ((c = getopt_long(argc, argv, "-f:jh", opts, NULL)) != -1) {
		switch (c) {
		case 1:
		case 'f':
			if ((ret = cli_add_source(cli, &pa, c == 'f', optarg)))
				return ret;
			break;
		case 'R':
			if ((ret = cli_runtime(cli, optarg, false, &parse.runtime)))
				return ret;
			pa.parse = &parse;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			return cli_help(&verb_compile);
		default:
			return cli_bad_option(cli, argv, "-f:jh");
		}
	}
	if (!pa.n)
		return cli_usage(cli, "no rules: give -f FILE or RULE arguments");
	ret = cli_policy_from(cli, &pa, &policy);
	if (ret)
		return ret;
	cli_print_policy(cli, policy);
	devcg_policy_free(policy);
	return EXIT_OK;
}

const struct verb verb_compile = {
	.name = "compile",
	.run = run,
	.summary = "print the normalized policy of a rule list",
	.usage =
	"Usage: devcg compile [-j] [--runtime runc|crun] [-f FILE]... [RULE]...\n\n"
	"Apply the rules, in order, as writes to devices.allow/devices.deny of a new\n"
	"child of the root cgroup (which starts allowing everything), and print the\n"
	"resulting policy as the shortest rule list that reproduces it: 'deny a' and\n"
	"the allowed exceptions, or 'allow a' and the denied ones. Files and rules\n"
	"are applied in the order they are given.\n\n"
	"With --runtime, an OCI config.json gives the list that runtime installs:\n"
	"its own default devices and linux.resources.devices, in its order (runc\n"
	"1.1, crun 1.8); a list it refuses, or whose program no cgroup v1 policy\n"
	"reproduces, is an error. Without it, only what the file says.\n\n"
	"Options:\n"
	"  -f, --file FILE  read rules from FILE ('-' for stdin); repeatable\n"
	"      --runtime RT the runtime whose policy a config.json yields: runc, crun\n"
	"  -j, --json       print {\"default\", \"exceptions\", \"devices\": [...]} (OCI form)\n"
	"  -h, --help       this help\n\n"
	"Rules: 'allow c 1:9 rwm', 'deny a', 'c 136:* rw' (no verb: allow),\n"
	"'allow /dev/null rw', 'allow char-pts rw', or OCI JSON in a file.\n\n"
	"Examples:\n"
	"  devcg compile 'deny a' 'allow c 1:9 rwm' 'allow c 1:3 rw'\n"
	"  devcg compile -f config.json\n"
	"  devcg compile --runtime runc -f config.json 'allow c 10:229 rwm'\n"
	"  devcg compile 'deny a' -f /sys/fs/cgroup/devices/X/devices.list\n"
	"    (a default-deny cgroup's devices.list shows only its exceptions)\n",
};

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg reset: remove devcg's filter from a cgroup.
#include "cli.h"

#include <stdio.h>

static int run(struct cli *cli, int argc, char **argv)
{
	DEVCG_OPTS(devcg_reset_opts, o);
	struct devcg_error err = { 0 };
	char safe[4096];
	int ret;
	const char *cg;

	ret = cli_one_cgroup(cli, argc, argv, &verb_reset, &cg);
	if (ret >= 0)
		return ret;
	ret = devcg_reset_opts(cg, &o, &err);
	if (ret < 0)
		return cli_fail_cgroup(cli, ret, &err, cg);
	if (cli->json)
		/* resolved, as show -j names it */
		cli_print_json(json_pack("{s:o, s:i, s:i}", "cgroup", cli_text(o.cgroup, (size_t)-1), "removed",
					 (int)o.removed, "links_detached", (int)o.links_detached));
	else if (!o.removed)
		printf("%s: no devcg filter attached\n", cli_safe(cg, safe, sizeof(safe)));
	else
		printf("%s: devcg filter removed%s\n", cli_safe(cg, safe, sizeof(safe)),
		       o.links_detached ? " (it was attached through a bpf_link of another process; "
					  "devcg detached that link)" : "");
	return EXIT_OK;
}

const struct verb verb_reset = {
	.name = "reset",
	.run = run,
	.summary = "remove devcg's filter from a cgroup",
	.usage =
	"Usage: devcg reset [-j] CGROUP\n\n"
	"Detach devcg's device program from CGROUP; programs of others stay. Without\n"
	"a device program the cgroup allows every device (as far as cgroup v2 goes).\n"
	"A root cgroup is refused, as by 'devcg replace'.\n"
	"A devcg program attached through a bpf_link of another process is removed by\n"
	"detaching that link, and the output says so.\n\n"
	"Options:\n"
	"  -j, --json  print {\"cgroup\" (relative to the cgroup2 mount, as 'show -j'\n"
	"              names it), \"removed\", \"links_detached\"}\n"
	"  -h, --help  this help\n\n"
	"Example:\n"
	"  devcg reset /sys/fs/cgroup/mycontainer\n",
};

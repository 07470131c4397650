// devcg reset: remove devcg's filter from a cgroup.
#include "cli.h"

#include <stdio.h>

static int run(struct cli *cli, int argc, char **argv)
{
	struct devcg_error err = { 0 };
	char safe[4096];
	int ret;
	const char *cg;

	ret = cli_one_cgroup(cli, argc, argv, &verb_reset, &cg);
	if (ret >= 0)
		return ret;
	ret = devcg_reset(cg, &err);
	if (ret < 0)
		return cli_fail(cli, ret, &err);
	if (cli->json)
		cli_print_json(json_pack("{s:o, s:i}", "cgroup", cli_text(cg, (size_t)-1), "removed", ret));
	else
		printf("%s: %s\n", cli_safe(cg, safe, sizeof(safe)),
		       ret ? "devcg filter removed" : "no devcg filter attached");
	return EXIT_OK;
}

const struct verb verb_reset = {
	.name = "reset",
	.run = run,
	.summary = "remove devcg's filter from a cgroup",
	.usage =
	"Usage: devcg reset [-j] CGROUP\n\n"
	"Detach devcg's device program from CGROUP; programs of others stay. Without\n"
	"a device program the cgroup allows every device (as far as cgroup v2 goes).\n\n"
	"Options:\n"
	"  -j, --json  print {\"cgroup\", \"removed\"}\n"
	"  -h, --help  this help\n\n"
	"Example:\n"
	"  devcg reset /sys/fs/cgroup/mycontainer\n",
};

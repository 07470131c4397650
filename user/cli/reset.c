// devcg reset: remove devcg's filter from a cgroup.
#include "cli.h"

#include <getopt.h>
#include <stdio.h>

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct devcg_error err = { 0 };
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': cli->json = true; break;
		case 'h': return cli_help(&verb_reset);
		default: return cli_usage(cli, "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage(cli, "expected one CGROUP");
	ret = devcg_reset(argv[optind], &err);
	if (ret < 0)
		return cli_fail(cli, ret, &err);
	if (cli->json)
		cli_print_json(json_pack("{s:s, s:i}", "cgroup", argv[optind], "removed", ret));
	else
		printf("%s: %s\n", argv[optind], ret ? "devcg filter removed" : "no devcg filter attached");
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

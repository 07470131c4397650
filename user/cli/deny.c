// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg deny: add deny rules to a cgroup's live policy (one compare-and-swap).
#include "cli.h"

static int run(struct cli *cli, int argc, char **argv)
{
	return cli_update(cli, argc, argv, DEVCG_VERB_DENY, &verb_deny);
}

const struct verb verb_deny = {
	.name = "deny",
	.run = run,
	.summary = "apply deny rules to a cgroup's live policy",
	.usage =
	"Usage: devcg deny [-j] [--audit] [--force] [--no-systemd] CGROUP RULE...\n\n"
	"Read the live policy of CGROUP, apply each RULE in order as a write to\n"
	"devices.deny, and swap the result in once by compare-and-swap (see 'devcg\n"
	"allow --help'): every RULE or none. A rule that says 'allow' is refused. On a\n"
	"hybrid host, when the processes of CGROUP are also in a v1 devices cgroup\n"
	"(not its root), each RULE is written to its devices.deny first (JSON \"v1\").\n\n"
	"Options:\n"
	"      --audit  the new filter reports denials to its ring buffer\n"
	"      --force  on a cgroup with only others' device programs, start from\n"
	"               allow-all and replace them (without it: read, or refused)\n"
	"      --no-systemd  do not keep a systemd unit's DeviceAllow= in step\n"
	"  -j, --json   print {\"cgroup\", \"prog_id\", \"replaced_id\", \"rules\": [...],\n"
	"               \"systemd\"}, and \"rule\" when one RULE is given\n"
	"  -h, --help   this help\n\n"
	"Example:\n"
	"  devcg deny /sys/fs/cgroup/mycontainer 'c 136:* w'\n",
};

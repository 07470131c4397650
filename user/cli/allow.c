// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg allow: add rules to a cgroup's live policy (one compare-and-swap).
#include "cli.h"

static int run(struct cli *cli, int argc, char **argv)
{
	return cli_update(cli, argc, argv, DEVCG_VERB_ALLOW, &verb_allow);
}

const struct verb verb_allow = {
	.name = "allow",
	.run = run,
	.summary = "apply allow rules to a cgroup's live policy",
	.usage =
	"Usage: devcg allow [-j] [--audit] [--force] [--no-systemd] CGROUP RULE...\n\n"
	"Read the live policy of CGROUP, apply each RULE in order as a write to\n"
	"devices.allow, and swap the result in once, naming the exact program read\n"
	"(compare-and-swap): every RULE is applied or none (a bad one changes\n"
	"nothing). When\n"
	"another writer replaced it meanwhile, re-read and retry, so no update is\n"
	"lost. A cgroup without device programs starts from allow-all; one whose only\n"
	"program is another's (a runtime's) starts from that program's rules, read\n"
	"back from its instructions, and the swap takes its place; several, others'\n"
	"among them (a runtime's and a vendor hook's), start from what they allow\n"
	"together, each read back: the swap takes the place of one, then the others\n"
	"are detached one by one, none widening what the cgroup allows; one devcg\n"
	"cannot read is refused, named: 'devcg replace' the whole policy first, except\n"
	"on a systemd unit's cgroup\n"
	"whose only program is systemd's: that starts from the unit's DevicePolicy=\n"
	"and DeviceAllow=, whose DeviceAllow= devcg keeps in step (see 'devcg replace\n"
	"--help'). A root cgroup is refused, as by\n"
	"'devcg replace'. RULE is\n"
	"'c 1:9 rwm', 'a', '/dev/null rw', 'char-pts', ... (the verb is implied; a\n"
	"rule that says 'deny' is refused), one device rule per argument. On a hybrid\n"
	"host, when the processes of CGROUP are also in a v1 devices cgroup (not its\n"
	"root), each RULE is written to its devices.allow first (JSON \"v1\").\n"
	"A RULE of one device that a program on an ancestor cgroup refuses (systemd's\n"
	"on the .scope above a container's cgroup) would not open however CGROUP's\n"
	"policy allows it: it is refused, naming that cgroup and whose program it is,\n"
	"and nothing changes (a range such as 'c 10:*' is not checked).\n\n"
	"Options:\n"
	"      --audit  the new filter reports denials to its ring buffer\n"
	"      --force  on a cgroup with only others' device programs, start from\n"
	"               allow-all and replace them (without it: read, or refused)\n"
	"      --no-systemd  do not keep a systemd unit's DeviceAllow= in step\n"
	"  -j, --json   print {\"cgroup\", \"prog_id\", \"replaced_id\", \"rules\": [...],\n"
	"               \"systemd\"}, and \"rule\" when one RULE is given\n"
	"  -h, --help   this help\n\n"
	"Example:\n"
	"  devcg allow /sys/fs/cgroup/mycontainer 'c 10:200 rwm'\n"
	"  devcg allow mycontainer 'c 226:0 rw' 'c 226:128 rw'\n",
};

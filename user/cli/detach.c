// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg detach: take a device back from a running container, node then permission.
#include "cli.h"

static int run(struct cli *cli, int argc, char **argv)
{
	return cli_hotplug(cli, argc, argv, false, &verb_detach);
}

const struct verb verb_detach = {
	.name = "detach",
	.run = run,
	.summary = "take a device back from a running container: its node, then its permission",
	.usage =
	"Usage: devcg detach [-j] [-p PID | --container ID [--state-dir DIR] | CGROUP]\n"
	"                    [--cdi NAME]... [--cdi-spec-dir DIR]... [--force] [--no-systemd]\n"
	"                    [DEVICE]...\n\n"
	"Take DEVICEs back from a running container: first remove each node from the\n"
	"container's mount namespace (unlink, or unmount a bind-mounted one), then\n"
	"remove each device's own exception from the container's devcg policy (the\n"
	"key attach adds) in one compare-and-swap. A device allowed only by a wider\n"
	"rule ('c 136:* rwm') or by a default-allow policy stays allowed, and detach\n"
	"says so: it never adds a deny. Files the container holds open stay usable\n"
	"(the kernel checks only at open): the processes holding them are listed.\n"
	"For CDI devices, the spec's common nodes stay while another device of the\n"
	"spec is still in the container. Detaching what is not there succeeds and\n"
	"says so; on failure everything is put back. DEVICE and the container are\n"
	"given as for 'devcg attach'. On a hybrid host the exception is removed from\n"
	"the container's v1 devices cgroup too (when it is not the root and its list\n"
	"is default-deny), before the swap, and put back if the swap fails.\n"
	"With --container, the container devcg's node agent keeps by that ID: what\n"
	"detach took back is recorded in the agent's state, so the agent never puts\n"
	"it back (not even a device the runtime's own list gave the container).\n\n"
	"Options:\n"
	"  -p, --pid PID        the container of this process\n"
	"      --container ID   the container of this ID, as devcg's node agent keeps it\n"
	"      --state-dir DIR  the agent's state (default /run/devcg/containers)\n"
	"      --cdi NAME       a CDI device, vendor/class=name (repeatable)\n"
	"      --cdi-spec-dir DIR\n"
	"                       read CDI specs from DIR instead of /etc/cdi and\n"
	"                       /var/run/cdi (repeatable; later wins)\n"
	"      --force          replace the cgroup's device programs that are not\n"
	"                       devcg's (a runtime's), starting from allow-all where\n"
	"                       devcg has none (without it: refused)\n"
	"      --no-systemd     on a systemd unit's cgroup, leave its DeviceAllow= alone\n"
	"                       (devcg's filter then replaces systemd's own program)\n"
	"  -j, --json           print {\"cgroup\", \"pid\", \"swapped\", \"prog_id\", \"replaced_id\", \"systemd\",\n"
	"                       \"devices\": [{\"path\", \"node\", \"permission\", \"holders\", ...}]}\n"
	"  -h, --help           this help\n\n"
	"Examples:\n"
	"  devcg detach -p 4242 /dev/nvidia3\n"
	"  devcg detach -p 4242 --cdi nvidia.com/gpu=3\n"
	"  devcg detach --container 5f0c3e9a1b2d /dev/nvidia3\n",
};

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg attach: give a running container a device, node and permission, in one step.
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMES 64

static const char *const node_words[] = {
	[DEVCG_NODE_MADE] = "made", [DEVCG_NODE_BOUND] = "bind-mounted",
	[DEVCG_NODE_REPLACED] = "replaced", [DEVCG_NODE_PRESENT] = "present",
	[DEVCG_NODE_REMOVED] = "removed", [DEVCG_NODE_ABSENT] = "absent", [DEVCG_NODE_KEPT] = "kept",
};
static const char *const perm_words[] = {
	[DEVCG_PERM_ADDED] = "added", [DEVCG_PERM_ALREADY] = "already",
	[DEVCG_PERM_REMOVED] = "removed", [DEVCG_PERM_NONE] = "none",
	[DEVCG_PERM_STILL_ALLOWED] = "still-allowed", [DEVCG_PERM_KEPT] = "kept",
};

static const char *word(const char *const *words, size_t n, uint8_t v)
{
	return v < n && words[v] ? words[v] : "?";
}

static int parse_uint(const char *s, int base, uint32_t max, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *end || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int parse_access(const char *s, uint8_t *out)
{
	*out = 0;
	for (; *s; s++) {
		if (*s == 'r')
			*out |= DEVCG_ACC_READ;
		else if (*s == 'w')
			*out |= DEVCG_ACC_WRITE;
		else if (*s == 'm')
			*out |= DEVCG_ACC_MKNOD;
		else
			return -1;
	}
	return *out ? 0 : -1;
}

static json_t *entry_json(const struct devcg_hotplug_entry *e)
{
	char acc[4], mode[8];
	json_t *o, *dirs = json_array(), *holders = json_array();
	size_t i;

	snprintf(mode, sizeof(mode), "%04o", e->mode);
	o = json_pack("{s:o, s:s, s:I, s:I, s:s, s:s, s:s}", "path", cli_text(e->path, (size_t)-1), "type",
		      e->type == DEVCG_BLOCK ? "b" : "c", "major", (json_int_t)e->major, "minor",
		      (json_int_t)e->minor, "access", devcg_access_format(e->access, acc), "node",
		      word(node_words, sizeof(node_words) / sizeof(node_words[0]), e->node), "permission",
		      word(perm_words, sizeof(perm_words) / sizeof(perm_words[0]), e->permission));
	if (!o)
		return NULL;
	json_object_set_new(o, "host_path", e->host_path ? cli_text(e->host_path, (size_t)-1) : json_null());
	json_object_set_new(o, "cdi", e->cdi ? cli_text(e->cdi, (size_t)-1) : json_null());
	if (e->node == DEVCG_NODE_MADE || e->node == DEVCG_NODE_BOUND || e->node == DEVCG_NODE_REPLACED ||
	    e->node == DEVCG_NODE_PRESENT) {
		json_object_set_new(o, "mode", json_string(mode));
		json_object_set_new(o, "uid", json_integer(e->uid));
		json_object_set_new(o, "gid", json_integer(e->gid));
	}
	for (i = 0; i < e->ndirs; i++)
		json_array_append_new(dirs, cli_text(e->dirs[i], (size_t)-1));
	json_object_set_new(o, "dirs", dirs);
	for (i = 0; i < e->nholders; i++)
		json_array_append_new(holders, json_pack("{s:i, s:o, s:i}", "pid", e->holders[i].pid, "comm",
							 cli_text(e->holders[i].comm, (size_t)-1), "fd",
							 e->holders[i].fd));
	json_object_set_new(o, "holders", holders);
	json_object_set_new(o, "note", e->note ? cli_text(e->note, (size_t)-1) : json_null());
	return o;
}

static void print_result(struct cli *cli, const struct devcg_hotplug_result *r, const char *container)
{
	char safe[4096], safe2[1024];
	size_t i, k;

	if (cli->json) {
		json_t *devices = json_array();

		for (i = 0; i < r->count; i++)
			json_array_append_new(devices, entry_json(&r->entries[i]));
		json_t *o = json_pack("{s:o, s:i, s:b, s:I, s:I, s:o, s:o, s:o}", "cgroup",
				      cli_text(r->cgroup, (size_t)-1), "pid", r->pid, "swapped", r->swapped,
				      "prog_id", (json_int_t)r->prog_id, "replaced_id", (json_int_t)r->replaced_id,
				      "systemd", cli_systemd_json(r->systemd_unit, r->systemd_entries), "devices",
				      devices, "v1", r->v1_cgroup[0] ? cli_text(r->v1_cgroup, (size_t)-1) : json_null());

		/* by container ID: which one */
		if (o && container)
			json_object_set_new(o, "container", cli_text(container, (size_t)-1));
		cli_print_json(o);
		return;
	}
	if (container)
		printf("container %s: ", cli_safe(container, safe2, sizeof(safe2)));
	cli_safe(r->cgroup, safe, sizeof(safe));
	if (r->swapped && r->replaced_id)
		printf("%s (pid %d): program %u replaced %u\n", safe, r->pid, r->prog_id, r->replaced_id);
	else if (r->swapped)
		printf("%s (pid %d): program %u attached (the cgroup's first devcg program)\n", safe, r->pid,
		       r->prog_id);
	else if (r->prog_id)
		printf("%s (pid %d): program %u unchanged\n", safe, r->pid, r->prog_id);
	else
		printf("%s (pid %d): no devcg program (the policy allows every device)\n", safe, r->pid);
	cli_print_systemd(r->systemd_unit, r->systemd_entries);
	if (r->v1_cgroup[0])
		printf("%s: the cgroup v1 devices cgroup of pid %d, changed the same way\n",
		       cli_safe(r->v1_cgroup, safe2, sizeof(safe2)), r->pid);
	/* paths, notes and commands come from the container and CDI specs */
	for (i = 0; i < r->count; i++) {
		const struct devcg_hotplug_entry *e = &r->entries[i];
		char acc[4];

		printf("%s: %c %u:%u", cli_safe(e->path, safe, sizeof(safe)), e->type == DEVCG_BLOCK ? 'b' : 'c',
		       e->major, e->minor);
		if (e->access)
			printf(" %s", devcg_access_format(e->access, acc));
		printf(": permission %s, node %s",
		       word(perm_words, sizeof(perm_words) / sizeof(perm_words[0]), e->permission),
		       word(node_words, sizeof(node_words) / sizeof(node_words[0]), e->node));
		if (e->node == DEVCG_NODE_MADE || e->node == DEVCG_NODE_BOUND || e->node == DEVCG_NODE_REPLACED)
			printf(" (mode %04o, owner %u:%u)", e->mode, e->uid, e->gid);
		if (e->cdi)
			printf(" [%s]", cli_safe(e->cdi, safe2, sizeof(safe2)));
		putchar('\n');
		if (e->note)
			printf("  %s\n", cli_safe(e->note, safe, sizeof(safe)));
		for (k = 0; k < e->ndirs; k++)
			printf("  made directory %s\n", cli_safe(e->dirs[k], safe, sizeof(safe)));
		for (k = 0; k < e->nholders; k++)
			printf("  still open in pid %d (%s), fd %d\n", e->holders[k].pid,
			       cli_safe(e->holders[k].comm, safe, sizeof(safe)), e->holders[k].fd);
	}
}

int cli_hotplug(struct cli *cli, int argc, char **argv, bool attach, const struct verb *v)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "container", required_argument, NULL, 'I' },
		{ "state-dir", required_argument, NULL, 'D' },
		{ "access", required_argument, NULL, 'a' },
		{ "mode", required_argument, NULL, 'M' },
		{ "uid", required_argument, NULL, 'U' },
		{ "gid", required_argument, NULL, 'G' },
		{ "cdi", required_argument, NULL, 'c' },
		{ "cdi-spec-dir", required_argument, NULL, 'd' },
		{ "method", required_argument, NULL, 'm' },
		{ "force", no_argument, NULL, 'F' },
		{ "no-systemd", no_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *cdi[MAX_NAMES + 1] = { 0 }, *dirs[MAX_NAMES + 1] = { 0 }, *cgroup = NULL;
	struct devcg_hotplug_device *devs = NULL;
	struct devcg_hotplug_result *r = NULL;
	struct devcg_error err = { 0 };
	DEVCG_OPTS(devcg_hotplug_opts, o);
	uint32_t mode = 0, uid = 0, gid = 0, pid = 0;
	uint8_t set = 0, access = 0;
	int c, ncdi = 0, ndirs = 0, ndevs, i, ret, li = -1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:jh", opts, &li)) != -1) {
		/* what only attach takes (long options only) */
		if (!attach && strchr("aMUGm", c) && c && li >= 0)
			return cli_usage(cli, "unknown option '--%s' (an attach option)", opts[li].name);
		switch (c) {
		case 'p':
			if (parse_uint(optarg, 10, 0x7fffffff, &pid) || !pid)
				return cli_usage(cli, "-p takes a process id, not '%s'", optarg);
			break;
		case 'a':
			if (parse_access(optarg, &access))
				return cli_usage(cli, "--access takes letters of rwm, not '%s'", optarg);
			break;
		case 'M':
			if (parse_uint(optarg, 8, 07777, &mode))
				return cli_usage(cli, "--mode takes an octal mode (0666), not '%s'", optarg);
			set |= DEVCG_HOTPLUG_SET_MODE;
			break;
		case 'U':
			if (parse_uint(optarg, 10, 0xfffffffe, &uid))
				return cli_usage(cli, "--uid takes a number, not '%s'", optarg);
			set |= DEVCG_HOTPLUG_SET_UID;
			break;
		case 'G':
			if (parse_uint(optarg, 10, 0xfffffffe, &gid))
				return cli_usage(cli, "--gid takes a number, not '%s'", optarg);
			set |= DEVCG_HOTPLUG_SET_GID;
			break;
		case 'I': o.container = optarg; break;
		case 'D': o.state_dir = optarg; break;
		case 'c':
			if (ncdi == MAX_NAMES)
				return cli_usage(cli, "more than %d --cdi", MAX_NAMES);
			cdi[ncdi++] = optarg;
			break;
		case 'd':
			if (ndirs == MAX_NAMES)
				return cli_usage(cli, "more than %d --cdi-spec-dir", MAX_NAMES);
			dirs[ndirs++] = optarg;
			break;
		case 'm':
			if (!strcmp(optarg, "auto"))
				o.method = DEVCG_HOTPLUG_AUTO;
			else if (!strcmp(optarg, "mknod"))
				o.method = DEVCG_HOTPLUG_MKNOD;
			else if (!strcmp(optarg, "bind"))
				o.method = DEVCG_HOTPLUG_BIND;
			else
				return cli_usage(cli, "--method is auto, mknod or bind, not '%s'", optarg);
			break;
		case 'F': o.force = true; break;
		case 'S': o.no_systemd = true; break;
		case 'j': cli->json = true; break;
		case 'h': return cli_help(v);
		default: return cli_bad_option(cli, argv, "p:jh");
		}
	}
	if (o.container && pid)
		return cli_usage(cli, "--container and -p: give one of them");
	if (o.state_dir && !o.container)
		return cli_usage(cli, "--state-dir is for --container");
	if (!pid && !o.container) {
		if (optind == argc)
			return cli_usage(cli, "expected -p PID, --container ID or CGROUP");
		cgroup = argv[optind++];
	}
	ndevs = argc - optind;
	if (!ndevs && !ncdi)
		return cli_usage(cli, "expected a DEVICE or --cdi NAME");
	if (ndevs && !(devs = calloc((size_t)ndevs, sizeof(*devs))))
		return cli_failf(cli, -ENOMEM, "out of memory");
	for (i = 0; i < ndevs; i++) {
		char *arg = argv[optind + i], *eq = strchr(arg, '=');

		/* HOSTPATH=CONTAINERPATH (split in place: argv is ours) */
		if (eq) {
			*eq = '\0';
			devs[i].path = eq + 1;
		}
		if (!arg[0] || (eq && !eq[1])) {
			free(devs);
			return cli_usage(cli, "DEVICE is HOSTPATH or HOSTPATH=CONTAINERPATH");
		}
		devs[i].host_path = arg;
		devs[i].set = set;
		devs[i].mode = mode;
		devs[i].uid = uid;
		devs[i].gid = gid;
	}
	o.pid = (int32_t)pid;
	o.access = access;
	o.cdi = ncdi ? cdi : NULL;
	o.cdi_spec_dirs = ndirs ? dirs : NULL;
	ret = attach ? devcg_attach(cgroup, devs, (size_t)ndevs, &o, &r, &err)
		     : devcg_detach(cgroup, devs, (size_t)ndevs, &o, &r, &err);
	free(devs);
	if (ret)
		return cli_fail_cgroup(cli, ret, &err, cgroup);
	print_result(cli, r, o.container);
	devcg_hotplug_result_free(r);
	return EXIT_OK;
}

static int run(struct cli *cli, int argc, char **argv)
{
	return cli_hotplug(cli, argc, argv, true, &verb_attach);
}

const struct verb verb_attach = {
	.name = "attach",
	.run = run,
	.summary = "give a running container a device: its permission, then its node",
	.usage =
	"Usage: devcg attach [-j] [-p PID | --container ID [--state-dir DIR] | CGROUP]\n"
	"                    [--access ACCESS] [--mode MODE] [--uid UID] [--gid GID]\n"
	"                    [--cdi NAME]... [--cdi-spec-dir DIR]...\n"
	"                    [--method auto|mknod|bind] [--force] [--no-systemd] [DEVICE]...\n\n"
	"Hot-plug DEVICEs into a running container: first allow them all in the\n"
	"container's devcg policy in one compare-and-swap, then make each node in the\n"
	"container's mount namespace (under a temporary name, with the host node's\n"
	"type, numbers, mode and owner, renamed into place). A container that cannot\n"
	"hold a device node (its own user namespace, or a nodev /dev) gets the host\n"
	"node bind-mounted instead. Missing parent directories are made. What is\n"
	"there already is kept and reported (a node of another device is replaced\n"
	"only with --force); on failure everything is put back.\n"
	"On a default-allow policy, a device that its own exception denies is\n"
	"refused: detach adds no deny, so it could not put that one back ('devcg\n"
	"allow' it first).\n"
	"In a container a runtime made without devcg (runc, crun), the runtime's\n"
	"program is read back from its instructions and taken over in the same swap:\n"
	"every device it allowed stays allowed, with no --force and no config.json.\n"
	"DEVICE is a host device node, made at the same path in the container, or\n"
	"HOSTPATH=CONTAINERPATH. The container is the one process PID lives in, or\n"
	"CGROUP (a process of it gives the mount namespace). On a hybrid host, a\n"
	"container also in a v1 devices cgroup (not its root) gets the permission\n"
	"there too, first, and put back on failure (JSON \"v1\").\n"
	"With --container, the container is one that devcg's node agent (devcg-nri)\n"
	"keeps, by the runtime's ID: its process and cgroup come from the agent's\n"
	"state (checked live), and what attach allowed is recorded there, so that the\n"
	"agent puts it back after the runtime's updates and its own restarts.\n"
	"A device that a program on an ancestor cgroup of the container refuses\n"
	"(systemd's on the .scope above crun's \"container\" cgroup) would not open\n"
	"whatever devcg allows: it is refused before anything changes, naming that\n"
	"cgroup and whose program it is.\n\n"
	"Options:\n"
	"  -p, --pid PID        the container of this process\n"
	"      --container ID   the container of this ID, as devcg's node agent keeps it\n"
	"      --state-dir DIR  the agent's state (default /run/devcg/containers)\n"
	"      --access ACCESS  letters of rwm to allow (default rwm)\n"
	"      --mode MODE      the nodes' mode, octal (default: the host node's)\n"
	"      --uid UID        their owner (default: the host node's)\n"
	"      --gid GID        their group (default: the host node's)\n"
	"      --cdi NAME       a CDI device, vendor/class=name: its nodes and its spec's\n"
	"                       common ones, from /etc/cdi and /var/run/cdi (repeatable;\n"
	"                       a spec file that cannot be used is skipped, and named)\n"
	"      --cdi-spec-dir DIR\n"
	"                       read CDI specs from DIR instead (repeatable; later wins)\n"
	"      --method METHOD  auto (default), mknod or bind: how nodes are made\n"
	"      --force          replace a node of another device at a container path,\n"
	"                       and the cgroup's device programs that are not\n"
	"                       devcg's (a runtime's), starting from allow-all where\n"
	"                       devcg has none (without it: a node refused, programs\n"
	"                       read back, several to what they allow together, or\n"
	"                       refused when devcg cannot read one)\n"
	"      --no-systemd     on a systemd unit's cgroup, do not widen its DeviceAllow=\n"
	"                       (devcg's filter then replaces systemd's own program)\n"
	"  -j, --json           print {\"cgroup\", \"pid\", \"swapped\", \"prog_id\", \"replaced_id\",\n"
	"                       \"systemd\", \"devices\": [{\"path\", \"node\", \"permission\", ...}]},\n"
	"                       and \"container\" with --container\n"
	"  -h, --help           this help\n\n"
	"Examples:\n"
	"  devcg attach -p 4242 /dev/nvidia3\n"
	"  devcg attach -p 4242 --cdi nvidia.com/gpu=3\n"
	"  devcg attach --container 5f0c3e9a1b2d /dev/nvidia3\n"
	"  devcg attach /sys/fs/cgroup/mycontainer /dev/fuse /dev/loop7=/dev/disk0\n",
};

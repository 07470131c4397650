// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg doctor: why a container cannot open a device, and what will take it away.
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 256

static const char *const acc_letters = "rwm";

/* "rw-": the letters allowed, '-' refused, '?' unknown. */
static const char *decisions(const int8_t d[3], char buf[4])
{
	for (int a = 0; a < 3; a++)
		buf[a] = d[a] == 1 ? acc_letters[a] : d[a] == 0 ? '-' : '?';
	buf[3] = '\0';
	return buf;
}

static char type_char(uint8_t type)
{
	return type == DEVCG_BLOCK ? 'b' : 'c';
}

static json_t *to_json(const struct devcg_doctor_result *r)
{
	json_t *layers = json_array(), *nodes = json_array(), *findings = json_array();
	char buf[4], accs[4];

	for (size_t l = 0; l < r->nlayers; l++) {
		const struct devcg_doctor_layer *y = &r->layers[l];
		json_t *o = json_pack("{s:s, s:s, s:o}", "kind", y->kind, "owner", y->owner, "where",
				      cli_text(y->where, (size_t)-1));

		if (!strcmp(y->kind, "v2"))
			json_object_set_new(o, "prog_id", json_integer(y->prog_id));
		if (y->unit[0])
			json_object_set_new(o, "unit", cli_text(y->unit, (size_t)-1));
		if (y->why_unknown[0])
			json_object_set_new(o, "why_unknown", cli_text(y->why_unknown, (size_t)-1));
		json_array_append_new(layers, o);
	}
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct devcg_doctor_node *n = &r->nodes[i];
		json_t *d = json_array();
		json_t *o = json_pack("{s:o, s:b}", "path", n->path[0] ? cli_text(n->path, (size_t)-1) : json_null(),
				      "present", n->present);

		if (n->present || !n->path[0]) {
			char t[2] = { type_char(n->type), 0 };

			json_object_set_new(o, "type", json_string(t));
			json_object_set_new(o, "major", json_integer(n->major));
			json_object_set_new(o, "minor", json_integer(n->minor));
		}
		if (n->present) {
			json_object_set_new(o, "mode", json_integer(n->mode));
			json_object_set_new(o, "uid", json_integer(n->uid));
			json_object_set_new(o, "gid", json_integer(n->gid));
			json_object_set_new(o, "node", json_string(n->bind_mounted ? "bind-mounted" : "mknod"));
		}
		for (size_t l = 0; l < r->nlayers; l++)
			json_array_append_new(d, json_string(decisions(n->decision[l], buf)));
		json_object_set_new(o, "decisions", d);
		json_object_set_new(o, "allowed", json_string(decisions(n->allowed, buf)));
		json_array_append_new(nodes, o);
	}
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct devcg_doctor_finding *f = &r->findings[i];
		json_t *o = json_pack("{s:s, s:o, s:o}", "finding", f->id, "message", cli_text(f->message, (size_t)-1),
				      "fix", cli_text(f->fix, (size_t)-1));

		if (f->path[0])
			json_object_set_new(o, "path", cli_text(f->path, (size_t)-1));
		if (f->kind != DEVCG_DOCTOR_RUNTIME_REINSTALL) {
			char t[2] = { type_char(f->type), 0 };

			json_object_set_new(o, "type", json_string(t));
			json_object_set_new(o, "major", json_integer(f->major));
			json_object_set_new(o, "minor", json_integer(f->minor));
		}
		if (f->access)
			json_object_set_new(o, "access", json_string(devcg_access_format(f->access, accs)));
		json_array_append_new(findings, o);
	}
	return json_pack("{s:o, s:i, s:b, s:o, s:o, s:o, s:o, s:o}", "cgroup", cli_text(r->cgroup, (size_t)-1),
			 "pid", r->pid, "userns", r->userns, "v1_cgroup",
			 r->v1_cgroup[0] ? cli_text(r->v1_cgroup, (size_t)-1) : json_null(), "unit",
			 r->unit[0] ? cli_text(r->unit, (size_t)-1) : json_null(), "layers", layers, "nodes", nodes,
			 "findings", findings);
}

static void print_text(const struct devcg_doctor_result *r)
{
	char safe[4 * 4096 + 1], buf[4];

	printf("container: cgroup %s, process %d%s\n", cli_safe(r->cgroup, safe, sizeof(safe)), r->pid,
	       r->userns ? " (in its own user namespace)" : "");
	if (r->unit[0])
		printf("systemd unit: %s\n", cli_safe(r->unit, safe, sizeof(safe)));
	printf("layers:\n");
	if (!r->nlayers)
		printf("  (none: every device is allowed)\n");
	for (size_t l = 0; l < r->nlayers; l++) {
		const struct devcg_doctor_layer *y = &r->layers[l];

		if (!strcmp(y->kind, "v1"))
			printf("  L%zu v1 devices cgroup %s\n", l + 1, cli_safe(y->where, safe, sizeof(safe)));
		else
			printf("  L%zu v2 %s program %u on %s%s%s\n", l + 1, y->owner, y->prog_id,
			       cli_safe(y->where, safe, sizeof(safe)), y->why_unknown[0] ? ": unreadable, " : "",
			       y->why_unknown);
	}
	printf("devices:%s\n", r->nnodes ? "" : " none");
	for (size_t i = 0; i < r->nnodes; i++) {
		const struct devcg_doctor_node *n = &r->nodes[i];

		if (n->present)
			printf("  %-20s %c %3u:%-4u %04o %u:%u %-12s", cli_safe(n->path, safe, sizeof(safe)),
			       type_char(n->type), n->major, n->minor, n->mode, n->uid, n->gid,
			       n->bind_mounted ? "bind-mounted" : "mknod");
		else if (n->path[0])
			printf("  %-20s no node%30s", cli_safe(n->path, safe, sizeof(safe)), "");
		else
			printf("  %-20s %c %3u:%-4u %-22s", "(no node)", type_char(n->type), n->major, n->minor, "");
		for (size_t l = 0; l < r->nlayers; l++)
			printf(" L%zu %s", l + 1, decisions(n->decision[l], buf));
		printf("  now %s\n", decisions(n->allowed, buf));
	}
	if (!r->nfindings) {
		printf("no findings\n");
		return;
	}
	printf("findings:\n");
	for (size_t i = 0; i < r->nfindings; i++)
		printf("  %s: %s\n    fix: %s\n", r->findings[i].id, r->findings[i].message, r->findings[i].fix);
}

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "container", required_argument, NULL, 'c' },
		{ "runtime-root", required_argument, NULL, 'R' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *devices[MAX_DEVICES + 1] = { 0 }, *cgroup = NULL, *container = NULL,
		   *runtime_root = NULL;
	struct devcg_doctor_result *r = NULL;
	struct devcg_error err = { 0 };
	int c, ret, pid = 0, n = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			pid = cli_pid(optarg);
			if (pid <= 0)
				return cli_usage(cli, "-p needs a process id, not '%s'", optarg);
			break;
		case 'c':
			container = optarg;
			break;
		case 'R':
			runtime_root = optarg;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			return cli_help(&verb_doctor);
		default:
			return cli_bad_option(cli, argv, "+p:jh");
		}
	}
	if (pid && container)
		return cli_usage(cli, "-p and --container do not go together");
	if (runtime_root && !container)
		return cli_usage(cli, "--runtime-root goes with --container");
	if (!pid && !container) {
		if (optind == argc)
			return cli_usage(cli, "expected -p PID, --container ID or CGROUP");
		cgroup = argv[optind++];
	}
	for (; optind < argc; optind++) {
		if (n == MAX_DEVICES)
			return cli_usage(cli, "more than %d devices", MAX_DEVICES);
		devices[n++] = argv[optind];
	}
	{
		DEVCG_OPTS(devcg_doctor_opts, o, .pid = pid, .container = container,
			   .devices = n ? devices : NULL, .runtime_root = runtime_root);

		ret = devcg_doctor(cgroup, &o, &r, &err);
	}
	if (ret) {
		if (cgroup)
			cli_fail_cgroup(cli, ret, &err, cgroup);
		else
			cli_fail(cli, ret, &err);
		return 2;
	}
	if (cli->json)
		cli_print_json(to_json(r));
	else
		print_text(r);
	ret = r->nfindings ? 1 : 0;
	devcg_doctor_result_free(r);
	return ret;
}

const struct verb verb_doctor = {
	.name = "doctor",
	.run = run,
	.summary = "say why a container cannot open a device, and what will take one away",
	.usage =
	"Usage: devcg doctor [-j] [-p PID | --container ID [--runtime-root DIR] | CGROUP]\n"
	"                    [DEVICE]...\n\n"
	"Look at a container's devices: every node of its /dev (walked from its\n"
	"process's root, /proc/PID/root, never following a symbolic link, on /dev's\n"
	"own file system, at most 8 deep and 100000 entries) and every device a\n"
	"policy allows by its own exception, or only the DEVICEs given (a path in its\n"
	"/dev, as /dev/nvidia0, or 'TYPE MAJOR:MINOR', as 'c 195:0'). For each: the\n"
	"node (type, numbers, mode, owner, made by mknod or a host node bind-mounted),\n"
	"and the decision now for r, w and m by each layer that has a say: on a\n"
	"hybrid host the cgroup v1 devices cgroup, then each device program on the\n"
	"path, with its owner (devcg, systemd, runc, crun, unknown; a foreign program\n"
	"decided by running its instructions). Then the findings, each with the\n"
	"command that fixes it:\n"
	"  node-refused       a node present whose r and w the device programs refuse\n"
	"  v1-v2-differ       the v1 devices cgroup refuses what the programs allow\n"
	"                     (v2 alone would say allow; the open fails with EPERM)\n"
	"  allowed-absent     a device allowed by an exception of its own, no node\n"
	"                     (the defaults of runc and crun are not reported)\n"
	"  companion-missing  a GPU (/dev/nvidiaN) without /dev/nvidiactl or\n"
	"                     /dev/nvidia-uvm\n"
	"  systemd-reload     allowed now, but not by the DeviceAllow= of the systemd\n"
	"                     unit whose cgroup it is: the next daemon-reload revokes it\n"
	"  runtime-reinstall  crun's program beside devcg's: crun update attaches a\n"
	"                     new one from config.json, dropping devcg's grants\n"
	"  userns-mknod       a node made by mknod in a user-namespaced container\n"
	"                     (its own /dev is nodev: the node cannot be opened)\n\n"
	"Options:\n"
	"  -p, --pid PID         the container of process PID\n"
	"      --container ID    the container of runc or crun with that id (its process\n"
	"                        from ROOT/ID/state.json, runc's, or ROOT/ID/status,\n"
	"                        crun's, ROOT each of /run/runc, /run/crun,\n"
	"                        /run/containerd/runc/{k8s.io,moby,default},\n"
	"                        /run/docker/runtime-runc/moby)\n"
	"      --runtime-root DIR  look for it in DIR only (the runtime's state\n"
	"                          directory, as given to it)\n"
	"  -j, --json            print {\"cgroup\", \"pid\", \"userns\", \"v1_cgroup\",\n"
	"                        \"unit\", \"layers\", \"nodes\", \"findings\"}\n"
	"  -h, --help            this help\n\n"
	"Exit status: 0 nothing wrong, 1 findings, 2 error (or usage error).\n\n"
	"Examples:\n"
	"  devcg doctor -p 4242\n"
	"  devcg doctor -j /sys/fs/cgroup/unified/mycontainer /dev/nvidia0\n"
	"  devcg doctor --container web 'c 195:0'\n",
};

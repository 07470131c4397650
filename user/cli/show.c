// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg show: the live policy of a cgroup, read back from its filter.
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const char *const mode_names[] = { "exclusive", "override", "multi" };

/* "devcg", "runc's", "crun's", "systemd's" or "foreign" */
static const char *whose(const struct devcg_program *p, char *buf, size_t len)
{
	if (p->devcg)
		return "devcg";
	if (p->systemd_unit[0] || !strcmp(p->owner, "systemd"))
		return "systemd's";
	if (!p->owner[0] || !strcmp(p->owner, "unknown"))
		return "foreign";
	snprintf(buf, len, "%s's", p->owner);
	return buf;
}

static json_t *program_json(const struct devcg_program *p)
{
	/* a program on an ancestor that cannot be seen: cgroup "?", mode null */
	json_t *o = json_pack("{s:I, s:o, s:o, s:o, s:b, s:b, s:b}", "id", (json_int_t)p->id, "name",
			      cli_text(p->name, (size_t)-1), "cgroup", cli_text(p->cgroup, (size_t)-1),
			      "mode", p->visible ? json_string(mode_names[p->mode % 3]) : json_null(),
			      "devcg", p->devcg, "effective", p->effective, "visible", p->visible);

	json_object_set_new(o, "owner", json_string(p->owner[0] ? p->owner : "unknown"));
	if (!p->devcg) {
		json_object_set_new(o, "read", json_boolean(p->read));
		if (p->why_unreadable[0])
			json_object_set_new(o, "why_unreadable", cli_text(p->why_unreadable, (size_t)-1));
	}
	if (p->devcg)
		json_object_set_new(o, "audit", json_boolean(p->audit));
	if (p->systemd_unit[0])
		json_object_set_new(o, "systemd_unit", cli_text(p->systemd_unit, (size_t)-1));
	if (p->policy)
		json_object_set_new(o, "policy", cli_policy_json(p->policy));
	return o;
}

/* -j, -h, and CGROUP or -p PID: -1 to go on, or the exit code. */
static int parse(struct cli *cli, int argc, char **argv, const char **cgroup, int *pid)
{
	static const struct option opts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			*pid = cli_pid(optarg);
			if (*pid <= 0)
				return cli_usage(cli, "-p needs a process id, not '%s'", optarg);
			break;
		case 'j': cli->json = true; break;
		case 'h': cli_help(&verb_show); return EXIT_OK;
		default: return cli_bad_option(cli, argv, "p:jh");
		}
	}
	if (*pid && argc - optind == 0)
		return -1;
	if (*pid || argc - optind != 1)
		return cli_usage(cli, "expected one CGROUP, or -p PID");
	*cgroup = argv[optind];
	return -1;
}

static int run(struct cli *cli, int argc, char **argv)
{
	struct devcg_error err = { 0 };
	const struct devcg_program *own;
	struct devcg_state *state;
	char safe[4 * 4096 + 1], name[80], v1[4096] = "", pid_cg[4096], owner[32];
	int pid = 0;
	struct devcg_policy *v1_policy = NULL;
	bool v1_complete = true;
	size_t i;
	int ret;
	const char *cg = NULL;

	ret = parse(cli, argc, argv, &cg, &pid);
	if (ret >= 0)
		return ret;
	/* -p PID: its cgroup v2 cgroup, and its own v1 devices cgroup below */
	if (pid && (ret = devcg_pid_cgroup(pid, pid_cg, sizeof(pid_cg), &err)))
		return cli_fail(cli, ret, &err);
	if (pid)
		cg = pid_cg;
	ret = devcg_state_read(cg, &state, &err);
	if (ret)
		return cli_fail_cgroup(cli, ret, &err, cg);
	/* a hybrid host: the v1 devices cgroup of its processes decides too */
	ret = pid ? devcg_pid_v1_cgroup(pid, v1, sizeof(v1), &err)
		  : devcg_cgroup_v1_cgroup(cg, v1, sizeof(v1), &err);
	if (ret > 0)
		ret = devcg_v1_read(v1, &v1_policy, &v1_complete, &err);
	if (ret < 0) {
		devcg_state_free(state);
		return cli_fail(cli, ret, &err);
	}
	own = devcg_state_own(state);
	if (cli->json) {
		json_t *progs = json_array();

		for (i = 0; i < devcg_state_count(state); i++)
			json_array_append_new(progs, program_json(devcg_state_program(state, i)));
		cli_print_json(json_pack("{s:o, s:o, s:o, s:o, s:o}", "cgroup",
					 cli_text(devcg_state_cgroup(state), (size_t)-1),
					 "prog_id", own ? json_integer(own->id) : json_null(),
					 "policy", own ? cli_policy_json(own->policy) : json_null(),
					 "programs", progs, "v1",
					 v1_policy ? json_pack("{s:o, s:b, s:o}", "cgroup", cli_text(v1, (size_t)-1),
							       "complete", v1_complete, "policy",
							       cli_policy_json(v1_policy)) : json_null()));
		devcg_policy_free(v1_policy);
		devcg_state_free(state);
		return EXIT_OK;
	}
	/* the policy as 'devcg compile' prints it; the rest as comments, so
	 * that the output can be fed back in */
	/* cgroup names are anyone's who may create cgroups: escaped */
	cli_safe(devcg_state_cgroup(state), safe, sizeof(safe));
	if (own)
		printf("# %s: devcg program %u, attached %s%s\n", safe, own->id,
		       mode_names[own->mode % 3], own->audit ? ", audit on" : "");
	else
		printf("# %s: no devcg filter\n", safe);
	for (i = 0; i < devcg_state_count(state); i++) {
		const struct devcg_program *p = devcg_state_program(state, i);

		if (p == own)
			continue;
		if (!p->visible) {
			printf("# also applies: %s program %u (%s) on an ancestor not visible from here "
			       "(above this mount or cgroup namespace)%s\n", whose(p, owner, sizeof(owner)),
			       p->id, cli_prog_name(p->name, name, sizeof(name)),
			       p->devcg || p->read ? "" : "; devcg cannot read its rules");
		} else {
			printf("# %s %s program %u (%s) on %s, attached %s%s\n",
			       p->effective ? "also applies:" : "attached, not effective:",
			       whose(p, owner, sizeof(owner)), p->id, cli_prog_name(p->name, name, sizeof(name)),
			       cli_safe(p->cgroup, safe, sizeof(safe)), mode_names[p->mode % 3],
			       p->devcg || p->read || p->systemd_unit[0] ? "" : "; devcg cannot read its rules");
		}
		if (p->systemd_unit[0]) {
			printf("#   %s's DevicePolicy= and DeviceAllow=, read over D-Bus:\n",
			       cli_safe(p->systemd_unit, safe, sizeof(safe)));
			cli_print_rules(p->policy, "#     ");
		} else if (p->read) {
			printf("#   its rules, read back from its instructions:\n");
			cli_print_rules(p->policy, "#     ");
		} else if (!p->devcg && p->why_unreadable[0]) {
			printf("#   %s\n", cli_safe(p->why_unreadable, safe, sizeof(safe)));
		}
	}
	if (v1_policy) {
		printf("# also decides: the cgroup v1 devices cgroup %s of its processes (devices.list)%s:\n",
		       cli_safe(v1, safe, sizeof(safe)),
		       v1_complete ? "" : ", default allow: its denies are not shown");
		cli_print_rules(v1_policy, "#   v1: ");
	}
	if (own)
		cli_print_policy(cli, own->policy);
	devcg_policy_free(v1_policy);
	devcg_state_free(state);
	return EXIT_OK;
}

const struct verb verb_show = {
	.name = "show",
	.run = run,
	.summary = "print the live policy of a cgroup and what else applies",
	.usage =
	"Usage: devcg show [-j] CGROUP\n"
	"       devcg show [-j] -p PID\n\n"
	"Read the policy back from the devcg program attached to CGROUP (no state\n"
	"files) and print it as 'devcg compile' does, after comment lines that name\n"
	"the program, its attach mode, foreign device programs on the cgroup, and the\n"
	"programs on its ancestors that also apply. Ancestors are found by the\n"
	"cgroup's identity, also through a bind mount or a cgroup namespace; a program\n"
	"that applies from an ancestor that cannot be seen from here is listed as on\n"
	"an ancestor not visible from here (in JSON: \"cgroup\": \"?\", \"visible\": false).\n"
	"systemd's own program on a unit's cgroup (sd_devices) is shown with the unit's\n"
	"DevicePolicy= and DeviceAllow= as rules, read over D-Bus (in JSON:\n"
	"\"systemd_unit\" and \"policy\"). Any other foreign program is named with its\n"
	"owner (runc's, crun's, from its name and shape; else foreign) and its rules,\n"
	"read back from its instructions, follow as '#     ' lines (in JSON: \"owner\",\n"
	"\"read\" and \"policy\"), or the reason devcg cannot read them\n"
	"(\"why_unreadable\"). On a hybrid host, when the processes of\n"
	"CGROUP are also in a v1 devices cgroup (not its root), which decides too, its\n"
	"devices.list follows as '#   v1:' lines (JSON \"v1\": {\"cgroup\", \"complete\",\n"
	"\"policy\"}; complete is false for a default-allow list, which hides denies).\n\n"
	"Options:\n"
	"  -p, --pid PID  show the cgroup v2 cgroup of process PID, and its own v1\n"
	"              devices cgroup\n"
	"  -j, --json  print {\"cgroup\", \"prog_id\", \"policy\", \"programs\": [...], \"v1\"}\n"
	"  -h, --help  this help\n\n"
	"Example:\n"
	"  devcg show /sys/fs/cgroup/mycontainer\n",
};

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg check: decide one request against a rule file (or, later, a live cgroup).
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static int report_layer(struct cli *cli, const char *where, const char *layer, int allow, bool decided,
			const struct devcg_exception *ex, bool default_allow);

static int report(struct cli *cli, const char *where, int allow, bool decided,
		  const struct devcg_exception *ex, bool default_allow)
{
	return report_layer(cli, where, NULL, allow, decided, ex, default_allow);
}

/* LAYER: "v1" or "v2" for a live cgroup on a hybrid host (NULL: not said). */
static int report_layer(struct cli *cli, const char *where, const char *layer, int allow, bool decided,
			const struct devcg_exception *ex, bool default_allow)
{
	char line[64] = "", safe[4 * 4200 + 1] = "";

	if (decided)
		cli_format_exception(ex, line, sizeof(line));
	if (where) /* it names a cgroup, whose name is its creator's choice */
		cli_safe(where, safe, sizeof(safe));
	if (cli->json) {
		json_t *o = json_pack("{s:s, s:s}", "decision", allow ? "allow" : "deny", "decided_by",
				      decided ? "exception" : "default");

		if (decided)
			json_object_set_new(o, "exception",
					    cli_exception_json(ex, !default_allow));
		if (where)
			json_object_set_new(o, "by", cli_text(where, (size_t)-1));
		if (layer)
			json_object_set_new(o, "layer", json_string(layer));
		cli_print_json(o);
	} else if (decided) {
		printf("%s (exception '%s %s'%s%s)\n", allow ? "allow" : "deny",
		       default_allow ? "deny" : "allow", line, where ? " of " : "", safe);
	} else {
		printf("%s (default%s%s)\n", allow ? "allow" : "deny", where ? " of " : "", safe);
	}
	return allow ? EXIT_OK : EXIT_ERROR;
}

/* A request the kernel allows without asking (device 0:0): the reason. */
static int report_unchecked(struct cli *cli)
{
	static const char why[] = "the kernel does not check device 0:0 (only a block mknod): "
				  "an inode without a device number, or an overlayfs whiteout";

	if (cli->json)
		cli_print_json(json_pack("{s:s, s:s, s:s}", "decision", "allow", "decided_by", "kernel",
					 "reason", why));
	else
		printf("allow (%s)\n", why);
	return EXIT_OK;
}

/* Whose a foreign program is, for messages ("" for devcg's own). */
static const char *owner_of(const struct devcg_program *p)
{
	if (p->devcg)
		return "";
	if (!strcmp(p->owner, "runc"))
		return "runc's";
	if (!strcmp(p->owner, "crun"))
		return "crun's";
	if (!strcmp(p->owner, "systemd"))
		return "systemd's";
	return "foreign";
}

/* Where program P is attached, for messages. */
static void where_of(const struct devcg_program *p, char *buf, size_t len)
{
	if (p->systemd_unit[0])
		snprintf(buf, len, "systemd's program %u on %s (%s's DevicePolicy= and DeviceAllow=)",
			 p->id, p->cgroup, p->systemd_unit);
	else if (p->visible)
		snprintf(buf, len, "%s%sprogram %u on %s%s", owner_of(p), owner_of(p)[0] ? " " : "", p->id,
			 p->cgroup, p->devcg ? "" : p->read ? " (its rules read back from its instructions)"
					     : " (decided by running its instructions)");
	else
		snprintf(buf, len, "%s%sprogram %u on an ancestor not visible from here", owner_of(p),
			 owner_of(p)[0] ? " " : "", p->id);
}

/* The program to name for an allowed request: the cgroup's own devcg
 * filter, else the first one that runs for it whose policy devcg read. */
static const struct devcg_program *decider_of(const struct devcg_state *state)
{
	size_t i;

	if (devcg_state_own(state))
		return devcg_state_own(state);
	for (i = 0; i < devcg_state_count(state); i++)
		if (devcg_state_program(state, i)->effective && devcg_state_program(state, i)->policy)
			return devcg_state_program(state, i);
	return NULL;
}

/* Against every program that runs for a live cgroup. */
static int check_live(struct cli *cli, int argc, char **argv, int pid)
{
	char pid_cg[4096];
	const char *cg;
	const struct devcg_program *by;
	struct devcg_error err = { 0 };
	struct devcg_state *state;
	struct devcg_policy *v1_policy = NULL;
	struct devcg_exception ex;
	uint8_t type, access;
	uint32_t major, minor;
	bool decided, v1_complete = true;
	char v1[4096] = "";
	int ret;

	if (pid && argc != 3)
		return cli_usage(cli, "expected TYPE MAJOR:MINOR ACCESS after -p PID");
	if (!pid && argc != 4)
		return cli_usage(cli, "expected CGROUP TYPE MAJOR:MINOR ACCESS (or --rules FILE)");
	ret = cli_parse_request(cli, argv + (pid ? 0 : 1), &type, &major, &minor, &access);
	if (ret)
		return ret;
	/* -p PID: its cgroup v2 cgroup, and its own v1 devices cgroup below */
	if (pid) {
		ret = devcg_pid_cgroup(pid, pid_cg, sizeof(pid_cg), &err);
		if (ret) {
			cli_fail(cli, ret, &err);
			return EXIT_FAILED;
		}
	}
	cg = pid ? pid_cg : argv[0];
	ret = devcg_state_read(cg, &state, &err);
	if (ret) {
		cli_fail_cgroup(cli, ret, &err, cg);
		return EXIT_FAILED;
	}
	/* a hybrid host: the v1 devices cgroup of the cgroup's processes
	 * decides too, and refuses whatever the programs say */
	ret = pid ? devcg_pid_v1_cgroup(pid, v1, sizeof(v1), &err)
		  : devcg_cgroup_v1_cgroup(cg, v1, sizeof(v1), &err);
	if (ret > 0)
		ret = devcg_v1_read(v1, &v1_policy, &v1_complete, &err);
	if (ret < 0) {
		devcg_state_free(state);
		cli_fail(cli, ret, &err);
		return EXIT_FAILED;
	}
	/* (the kernel checks device 0:0 on neither layer) */
	if (v1_policy && devcg_request_checked(type, major, minor, access) &&
	    devcg_policy_check(v1_policy, type, major, minor, access, &ex, &decided) == 0) {
		char where[4200];

		snprintf(where, sizeof(where), "the cgroup v1 devices cgroup %s (its devices.list)", v1);
		ret = report_layer(cli, where, "v1", 0, decided, &ex, devcg_policy_default_allow(v1_policy));
		devcg_policy_free(v1_policy);
		devcg_state_free(state);
		return ret;
	}
	ret = devcg_state_check(state, type, major, minor, access, &by, &ex, &decided);
	if (!devcg_request_checked(type, major, minor, access)) {
		ret = report_unchecked(cli);
	} else if (ret == -EOPNOTSUPP) {
		char where[4200], name[80];

		where_of(by, where, sizeof(where));
		cli_failf(cli, ret, "cannot decide: %s (%s) applies and devcg cannot read "
			  "its rules%s%s", where, cli_prog_name(by->name, name, sizeof(name)),
			  by->why_unreadable[0] ? ": " : "", by->why_unreadable);
		ret = EXIT_FAILED;
	} else if (ret < 0) {
		cli_failf(cli, ret, "malformed request");
		ret = EXIT_FAILED;
	} else if (ret == 0) {
		char where[4200];

		where_of(by, where, sizeof(where));
		/* (a foreign program no list can say has no exception to name) */
		ret = report_layer(cli, where, v1[0] ? "v2" : NULL, 0, by->policy && decided, &ex,
				   by->policy && devcg_policy_default_allow(by->policy));
	} else if ((by = decider_of(state))) {
		/* allowed by all: name what allowed it in the cgroup's own
		 * filter, else in the first program devcg could read */
		char where[4200];

		devcg_policy_check(by->policy, type, major, minor, access, &ex, &decided);
		where_of(by, where, sizeof(where));
		if (v1[0])
			snprintf(where + strlen(where), sizeof(where) - strlen(where),
				 "; the cgroup v1 devices cgroup %s allows it too%s", v1,
				 v1_complete ? "" : " (by its default: its devices.list does not show denies)");
		ret = report_layer(cli, where, v1[0] ? "v2" : NULL, 1, decided, &ex,
				   devcg_policy_default_allow(by->policy));
	} else if (v1[0]) {
		/* no program: the v1 list decided alone */
		char where[4200];

		devcg_policy_check(v1_policy, type, major, minor, access, &ex, &decided);
		snprintf(where, sizeof(where), "the cgroup v1 devices cgroup %s (its devices.list)%s", v1,
			 v1_complete ? "" : ", which does not show denies under its default allow");
		ret = report_layer(cli, where, "v1", 1, decided, &ex, devcg_policy_default_allow(v1_policy));
	} else {
		ret = report(cli, NULL, 1, false, NULL, true);
	}
	devcg_policy_free(v1_policy);
	devcg_state_free(state);
	return ret;
}

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *rules_file = NULL;
	struct devcg_policy *policy;
	struct devcg_exception ex;
	uint8_t type, access;
	uint32_t major, minor;
	bool decided;
	int c, ret, pid = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+r:p:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			rules_file = optarg;
			break;
		case 'p':
			pid = cli_pid(optarg);
			if (pid <= 0)
				return cli_usage(cli, "-p needs a process id, not '%s'", optarg);
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			return cli_help(&verb_check);
		default:
			return cli_bad_option(cli, argv, "+r:p:jh");
		}
	}
	if (!rules_file)
		return check_live(cli, argc - optind, argv + optind, pid);
	if (pid)
		return cli_usage(cli, "-p and --rules do not go together");
	if (argc - optind != 3)
		return cli_usage(cli, "expected TYPE MAJOR:MINOR ACCESS");
	ret = cli_parse_request(cli, argv + optind, &type, &major, &minor, &access);
	if (ret)
		return ret;
	{
		struct policy_args pa = { .n = 1, .src = { { .file = true, .text = rules_file } } };

		ret = cli_policy_from(cli, &pa, &policy);
	}
	if (ret)
		return EXIT_FAILED;
	if (!devcg_request_checked(type, major, minor, access)) {
		devcg_policy_free(policy);
		return report_unchecked(cli);
	}
	/* a block 0:0 request is asked about its mknod alone */
	if (!major && !minor)
		access = DEVCG_ACC_MKNOD;
	ret = devcg_policy_check(policy, type, major, minor, access, &ex, &decided);
	ret = report(cli, NULL, ret, decided, &ex, devcg_policy_default_allow(policy));
	devcg_policy_free(policy);
	return ret;
}

const struct verb verb_check = {
	.name = "check",
	.run = run,
	.summary = "decide one device request against a policy",
	.usage =
	"Usage: devcg check [-j] --rules FILE TYPE MAJOR:MINOR ACCESS\n"
	"       devcg check [-j] CGROUP TYPE MAJOR:MINOR ACCESS\n"
	"       devcg check [-j] -p PID TYPE MAJOR:MINOR ACCESS\n\n"
	"Decide a request as the kernel's devices controller would: TYPE is c or b,\n"
	"MAJOR:MINOR are numbers, ACCESS is letters of rwm, or '-' for none (what\n"
	"access(2) with F_OK asks). Prints allow or deny and what decided it. Device\n"
	"0:0 is allowed, as the kernel never checks it (an inode without a device\n"
	"number; a char 0:0 mknod is an overlayfs whiteout), except a block 0:0\n"
	"mknod, which is decided for its 'm' alone. With\n"
	"CGROUP, decide against the live policies of every device program that runs\n"
	"for it (its own and its ancestors') and name the one that denies. The\n"
	"programs are those the kernel runs for the cgroup (however CGROUP reaches it:\n"
	"through a bind mount or a cgroup namespace too); one attached to an ancestor\n"
	"that cannot be seen from here is still decided, and named as on an ancestor\n"
	"not visible from here. systemd's own program on a unit's cgroup (sd_devices,\n"
	"systemd as PID 1 on the unified hierarchy) is decided by the unit's\n"
	"DevicePolicy= and DeviceAllow=, read over D-Bus: what systemd built it from.\n"
	"Any other program (runc's, crun's, a vendor hook's) is decided by running its\n"
	"instructions as the kernel does (devcg_reader_decide()), and named with its\n"
	"owner when it refuses; one devcg cannot follow (an unknown helper, a loop)\n"
	"makes the answer unknown (exit 3), with the reason. On a hybrid host,\n"
	"when the processes of CGROUP are also in a v1 devices cgroup (not its root),\n"
	"its devices.list decides too: a refusal there is named as the v1 devices\n"
	"cgroup's (JSON \"layer\": \"v1\", else \"v2\").\n\n"
	"Options:\n"
	"  -r, --rules FILE  the policy, as rules ('-' for stdin)\n"
	"  -p, --pid PID     decide for process PID: its cgroup v2 cgroup and its own\n"
	"                    v1 devices cgroup\n"
	"  -j, --json        print {\"decision\", \"decided_by\" (exception, default or\n"
	"                    kernel), \"exception\", \"by\", \"layer\", \"reason\"}\n"
	"  -h, --help        this help\n\n"
	"Exit status: 0 allow, 1 deny, 2 usage error, 3 other failure.\n\n"
	"Examples:\n"
	"  devcg check --rules policy.txt c 1:9 rw\n"
	"  devcg check -j --rules config.json b 8:0 -\n"
	"  devcg check /sys/fs/cgroup/mycontainer c 1:9 r\n",
};

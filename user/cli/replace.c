// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg replace: install a policy on a cgroup, atomically.
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "runtime", required_argument, NULL, 'R' },
		{ "audit", no_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'F' },
		{ "no-systemd", no_argument, NULL, 'S' },
		{ "v1", no_argument, NULL, '1' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	DEVCG_OPTS(devcg_replace_opts, ro);
	DEVCG_OPTS(devcg_parse_opts, parse);
	static struct policy_args pa;
	const char *cgroup = NULL;
	struct devcg_error err = { 0 };
	struct devcg_policy *policy;
	bool v1 = false;
	char safe[4096], v1dir[4096] = "";
	int c, ret;

	optind = 1;
	/* '-': CGROUP, then the rules in order among the -f files */
	while ((c = getopt_long(argc, argv, "-f:jh", opts, NULL)) != -1) {
		switch (c) {
		case 1:
			if (!cgroup) {
				cgroup = optarg;
				break;
			}
			/* fall through */
		case 'f':
			if ((ret = cli_add_source(cli, &pa, c == 'f', optarg)))
				return ret;
			break;
		case 'R':
			if ((ret = cli_runtime(cli, optarg, false, &parse.runtime)))
				return ret;
			pa.parse = &parse;
			break;
		case 'a': ro.audit = true; break;
		case 'F': ro.force = true; break;
		case 'S': ro.no_systemd = true; break;
		case '1': v1 = true; break;
		case 'j': cli->json = true; break;
		case 'h': return cli_help(&verb_replace);
		default: return cli_bad_option(cli, argv, "-f:jh");
		}
	}
	if (!cgroup)
		return cli_usage(cli, "missing CGROUP");
	if (!pa.n)
		return cli_usage(cli, "no rules: give -f FILE or RULE arguments");
	if (v1 && (ro.audit || ro.force || ro.no_systemd))
		return cli_usage(cli, "--audit, --force and --no-systemd are for cgroup v2 filters");
	ret = cli_policy_from(cli, &pa, &policy);
	if (ret)
		return ret;
	if (v1) {
		ret = devcg_replace_v1(cgroup, policy, &err);
		if (ret >= 0 && cli->json)
			cli_print_json(json_pack("{s:o, s:b, s:b, s:b}", "cgroup", cli_text(cgroup, (size_t)-1),
						 "v1", 1, "deny_all_moment", !!(ret & DEVCG_V1_DENY_ALL_MOMENT),
						 "allow_all_moment", !!(ret & DEVCG_V1_ALLOW_ALL_MOMENT)));
		else if (ret >= 0)
			printf("%s: devices.list updated%s%s\n", cli_safe(cgroup, safe, sizeof(safe)),
			       ret & DEVCG_V1_DENY_ALL_MOMENT
				       ? " (the default changed from allow to deny: cgroup v1 cannot do "
					 "that without a moment of deny-all)" : "",
			       ret & DEVCG_V1_ALLOW_ALL_MOMENT
				       ? " ('a' was written to devices.allow: every device was allowed "
					 "for a moment, since cgroup v1 hides a default-allow cgroup's "
					 "exceptions)" : "");
	} else {
		struct devcg_node node;
		uint8_t access = 0;

		/* a device the container can open now, and has a node for, is
		 * not taken away unless asked (the runtime's defaults are
		 * easily forgotten: --runtime) */
		ret = ro.force ? 0 : devcg_replace_refuses_node(cgroup, policy, &node, &access,
								 &ro.expect_prog_id, &err);
		if (ret == 1) {
			struct devcg_rule r = { .verb = DEVCG_VERB_ALLOW, .type = node.type, .access = access,
						.major = node.major, .minor = node.minor };
			char text[64], where[300];

			devcg_rule_format(&r, text, sizeof(text));
			devcg_policy_free(policy);
			return cli_failf(cli, -EPERM,
					 "%s: the new policy refuses '%s' (%s), which the current program "
					 "allows and the container has a node for: pass --force to take it "
					 "away (a runtime's container: --runtime runc|crun keeps its defaults)",
					 cli_safe(cgroup, safe, sizeof(safe)), text + strlen("allow "),
					 cli_safe(node.path, where, sizeof(where)));
		}
		/* a hybrid host: the v1 devices cgroup of its processes gets it too */
		if (!ret)
			ret = devcg_cgroup_v1_cgroup(cgroup, v1dir, sizeof(v1dir), &err);
		if (ret >= 0)
			ret = devcg_replace_both(cgroup, v1dir, policy, &ro, &err);
		if (!ret && cli->json)
			cli_print_json(json_pack("{s:o, s:I, s:I, s:I, s:b, s:o, s:o}", "cgroup",
						 cli_text(ro.cgroup, (size_t)-1), "prog_id",
						 (json_int_t)ro.prog_id, "replaced_id",
						 (json_int_t)ro.replaced_id, "exceptions",
						 (json_int_t)devcg_policy_count(policy), "audit", ro.audit,
						 "systemd", cli_systemd_json(ro.systemd_unit, ro.systemd_entries),
						 "v1", v1dir[0] ? cli_text(v1dir, (size_t)-1) : json_null()));
		else if (!ret && ro.replaced_id)
			printf("%s: program %u replaced by %u (%zu exceptions, default %s)\n",
			       cli_safe(cgroup, safe, sizeof(safe)),
			       ro.replaced_id, ro.prog_id, devcg_policy_count(policy),
			       devcg_policy_default_allow(policy) ? "allow" : "deny");
		else if (!ret)
			printf("%s: program %u attached (%zu exceptions, default %s)\n",
			       cli_safe(cgroup, safe, sizeof(safe)), ro.prog_id,
			       devcg_policy_count(policy),
			       devcg_policy_default_allow(policy) ? "allow" : "deny");
		if (!ret && !cli->json)
			cli_print_systemd(ro.systemd_unit, ro.systemd_entries);
		if (!ret && !cli->json && v1dir[0])
			printf("%s: devices.list set to the same policy (cgroup v1 devices cgroup of its "
			       "processes)\n", cli_safe(v1dir, safe, sizeof(safe)));
	}
	devcg_policy_free(policy);
	if (ret < 0)
		return v1 ? cli_fail(cli, ret, &err) : cli_fail_cgroup(cli, ret, &err, cgroup);
	return EXIT_OK;
}

const struct verb verb_replace = {
	.name = "replace",
	.run = run,
	.summary = "install a policy on a cgroup, swapping the filter atomically",
	.usage =
	"Usage: devcg replace [-j] [--runtime runc|crun] [--audit] [--force] [--no-systemd]\n"
	"                     CGROUP [-f FILE]... [RULE]...\n"
	"       devcg replace --v1 [--runtime runc|crun] DIR [-f FILE]... [RULE]...\n\n"
	"Compile the rules (as 'devcg compile' does) into a new filter version, load\n"
	"it, and swap it in for the cgroup's device program with BPF_F_REPLACE: there\n"
	"is never a moment with no filter or a deny-all one. CGROUP is a cgroup v2\n"
	"directory, absolute or relative to the cgroup2 mount; a root cgroup is\n"
	"refused however it is spelled ('', '.', the mount point, the root of a\n"
	"cgroup namespace or of a mounted subtree), and so is DIR for --v1 when it is\n"
	"the devices hierarchy's root. A program attached by someone else (runc,\n"
	"crun, systemd) is adopted: replaced in its own mode; one attached through a\n"
	"bpf_link is not updated in the link (which lives only as long as its\n"
	"holder): ours is attached beside it, then the link detached. Several\n"
	"programs (a runtime's and a vendor hook's, say) are taken over when devcg\n"
	"can read each one's rules back: ours takes the place of one, then the others\n"
	"are detached one by one, so that a device the old and the new policy both\n"
	"allow stays allowed throughout, and none the new policy refuses is allowed\n"
	"from the first step on; one whose rules cannot be read is refused, naming\n"
	"it, unless --force. When CGROUP\n"
	"is a systemd unit's own cgroup (a service, or a container's scope), or all\n"
	"that a restricting unit above it holds (crun's child of a scope), devcg\n"
	"then widens the unit's runtime DeviceAllow= to hold the new policy, so that\n"
	"the program systemd attaches again on daemon-reload or set-property never\n"
	"refuses what devcg allows; systemd's own program stays beside devcg's.\n\n"
	"A container's config.json gives only its own list: its runtime's default\n"
	"devices (/dev/null, /dev/urandom, ...) come with --runtime. When CGROUP\n"
	"already has devcg's program, a policy that would refuse a device that\n"
	"program allows and that has a node in the /dev of the cgroup's processes\n"
	"is refused, naming it, unless --force; it is installed only over the\n"
	"program read (compare-and-swap).\n"
	"On a hybrid host (cgroup v1 controllers beside cgroup2), when the processes\n"
	"of CGROUP are also in a v1 devices cgroup (not its root), that one gets the\n"
	"policy first, as by --v1, and is put back if the swap fails (JSON \"v1\").\n\n"
	"Options:\n"
	"  -f, --file FILE  read rules from FILE ('-' for stdin); repeatable; files and\n"
	"                   rules are applied in the order given\n"
	"      --runtime RT a config.json gives the list runtime RT installs (runc,\n"
	"                   crun): its default devices too, as 'devcg compile' does\n"
	"      --audit      the filter reports each denial to its ring buffer (devcg trace)\n"
	"      --force      replace several device programs, also those devcg cannot\n"
	"                   read; and take away devices the container has nodes for\n"
	"      --no-systemd do not keep a systemd unit's DeviceAllow= in step\n"
	"      --v1         DIR is a cgroup v1 devices directory: write the change to\n"
	"                   devices.allow/deny as a safe transition (allows first, 'a'\n"
	"                   only when the default changes)\n"
	"  -j, --json       print {\"cgroup\", \"prog_id\", \"replaced_id\", ...}\n"
	"  -h, --help       this help\n\n"
	"Examples:\n"
	"  devcg replace /sys/fs/cgroup/mycontainer 'deny a' 'allow c 1:9 rwm'\n"
	"  devcg replace --runtime runc mycontainer -f config.json\n"
	"  devcg replace --v1 /sys/fs/cgroup/devices/mycontainer -f rules.txt\n",
};

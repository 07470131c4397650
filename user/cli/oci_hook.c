// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg oci-hook: install the runtime's device policy as an OCI hook.
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The state JSON on standard input: at most DEVCG_OCI_MAX_STATE bytes
 * (one more is read to tell a longer one). */
static int read_stdin(struct cli *cli, char **buf, size_t *len)
{
	const size_t max = DEVCG_OCI_MAX_STATE;
	size_t cap = 8192;
	ssize_t r;

	*len = 0;
	*buf = malloc(cap);
	while (*buf) {
		if (*len == cap) {
			char *nb = cap <= max ? realloc(*buf, cap * 2) : NULL;

			if (!nb)
				break;
			*buf = nb;
			cap *= 2;
		}
		r = read(0, *buf + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;

			free(*buf);
			return cli_failf(cli, -e, "cannot read the container state on standard input: %s",
					 strerror(e));
		}
		if (r == 0)
			return 0;
		*len += (size_t)r;
		if (*len > max) {
			free(*buf);
			return cli_failf(cli, -EFBIG, "the container state on standard input is too large "
					 "(limit %zu bytes)", max);
		}
	}
	free(*buf);
	return cli_failf(cli, -ENOMEM, "cannot read the container state on standard input: %s",
			 strerror(ENOMEM));
}

static int run(struct cli *cli, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "file", required_argument, NULL, 'f' },
		{ "runtime", required_argument, NULL, 'R' },
		{ "no-systemd", no_argument, NULL, 'S' },
		{ "annotation-allow", required_argument, NULL, 'A' },
		{ "annotation-allow-file", required_argument, NULL, 'L' },
		{ "annotation-may-widen", no_argument, NULL, 'W' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	DEVCG_OPTS(devcg_oci_hook_opts, ho);
	DEVCG_OPTS(devcg_parse_opts, allow_only, .verb = DEVCG_VERB_ALLOW);
	struct devcg_error err = { 0 };
	struct devcg_rules *rules, *listed;
	int c, ret = 0, nrule = 0, nlisted = 0;
	size_t len;
	char *state;

	rules = devcg_rules_new();
	listed = devcg_rules_new();
	if (!rules || !listed) {
		devcg_rules_free(rules);
		devcg_rules_free(listed);
		return cli_failf(cli, -ENOMEM, "out of memory");
	}
	optind = 1;
	/* '-': rules come back in order among the -f files (as option 1) */
	while (!ret && (c = getopt_long(argc, argv, "-f:jh", opts, NULL)) != -1) {
		char source[32];

		switch (c) {
		case 1:
			snprintf(source, sizeof(source), "argument %d", ++nrule);
			if (devcg_rules_parse_rule(rules, optarg, source, NULL, &err))
				ret = cli_fail(cli, err.code, &err);
			break;
		case 'f':
			if (devcg_rules_parse_file(rules, optarg, NULL, &err))
				ret = cli_fail(cli, err.code, &err);
			break;
		case 'R':
			ret = cli_runtime(cli, optarg, true, &ho.runtime);
			break;
		case 'S':
			ho.no_systemd = true;
			break;
		case 'A':
			snprintf(source, sizeof(source), "--annotation-allow %d", ++nlisted);
			if (devcg_rules_parse_rule(listed, optarg, source, &allow_only, &err))
				ret = cli_fail(cli, err.code, &err);
			ho.annotation_allow = listed;
			break;
		case 'L':
			if (devcg_rules_parse_file(listed, optarg, &allow_only, &err))
				ret = cli_fail(cli, err.code, &err);
			ho.annotation_allow = listed;
			break;
		case 'W':
			ho.annotation_may_widen = true;
			break;
		case 'j':
			cli->json = true;
			break;
		case 'h':
			devcg_rules_free(rules);
			devcg_rules_free(listed);
			return cli_help(&verb_oci_hook);
		default:
			ret = cli_bad_option(cli, argv, "-f:jh");
		}
	}
	if (!ret && ho.annotation_may_widen && ho.annotation_allow)
		ret = cli_usage(cli, "--annotation-may-widen allows every widening: give no --annotation-allow");
	if (!ret)
		ret = read_stdin(cli, &state, &len);
	if (ret) {
		devcg_rules_free(rules);
		devcg_rules_free(listed);
		return ret;
	}
	ho.rules = rules;
	ret = devcg_oci_hook(state, len, &ho, &err);
	free(state);
	devcg_rules_free(rules);
	devcg_rules_free(listed);
	if (ret)
		return cli_fail(cli, ret, &err);
	if (cli->json)
		cli_print_json(json_pack("{s:o, s:s, s:I, s:I, s:o, s:o}", "cgroup", cli_text(ho.cgroup, (size_t)-1),
					 "runtime", ho.runtime_used == DEVCG_RUNTIME_RUNC ? "runc"
						    : ho.runtime_used == DEVCG_RUNTIME_CRUN ? "crun" : "none",
					 "prog_id", (json_int_t)ho.prog_id, "replaced_id",
					 (json_int_t)ho.replaced_id, "systemd",
					 cli_systemd_json(ho.systemd_unit, ho.systemd_entries), "v1",
					 ho.v1_cgroup[0] ? cli_text(ho.v1_cgroup, (size_t)-1) : json_null()));
	else
		printf("devcg oci-hook: %s: program %u (replaced %u)\n", ho.cgroup, ho.prog_id,
		       ho.replaced_id);
	if (!cli->json && ho.v1_cgroup[0])
		printf("devcg oci-hook: %s: cgroup v1 devices cgroup given the same policy\n", ho.v1_cgroup);
	if (!cli->json)
		cli_print_systemd(ho.systemd_unit, ho.systemd_entries);
	return EXIT_OK;
}

const struct verb verb_oci_hook = {
	.name = "oci-hook",
	.run = run,
	.summary = "install the runtime's device policy, as an OCI hook",
	.usage =
	"Usage: devcg oci-hook [-j] [--runtime runc|crun|auto] [--no-systemd]\n"
	"                      [--annotation-allow RULE]... [--annotation-allow-file FILE]\n"
	"                      [--annotation-may-widen] [-f FILE]... [RULE]...\n\n"
	"Run as an OCI hook at createRuntime (or prestart): read the container state\n"
	"JSON on standard input, the bundle's config.json, and install on the\n"
	"container's cgroup v2 cgroup (found from /proc/PID/cgroup) the policy the\n"
	"runtime installs, then the rules of -f files and arguments in order, then\n"
	"those of the annotation " DEVCG_OCI_ANNOTATION " (rules separated by newlines\n"
	"or ';'). The swap is atomic; afterwards devcg's program must be the only one\n"
	"on the cgroup (beside systemd's own, when the cgroup is a systemd scope: its\n"
	"DeviceAllow= is kept in step as by 'devcg replace'). On any failure it prints\n"
	"one line on standard error and exits 1, and the runtime stops the container.\n"
	"On a hybrid host, when the process is also in a v1 devices cgroup (not its\n"
	"root: a runtime that found no cgroup2 on /sys/fs/cgroup), that one gets the\n"
	"same policy first, as by 'replace --v1': both layers then allow exactly the\n"
	"policy.\n\n"
	"Whoever sets annotations is not trusted to widen the policy: the annotation\n"
	"may only narrow it (deny rules, or allow rules the policy before it already\n"
	"allows), or add what --annotation-allow lists; a widening annotation fails\n"
	"the hook, naming a device and access it would allow.\n"
	"The container state is read up to 16 MiB; config.json must be a regular file\n"
	"(not a symbolic link) of at most 64 MiB.\n\n"
	"Options:\n"
	"  -f, --file FILE  more rules from FILE; repeatable\n"
	"      --runtime RT whose policy the config.json gives: runc, crun, or auto (the\n"
	"                   runtime that runs the hook); without it, only what the file says\n"
	"      --no-systemd do not keep a systemd scope's DeviceAllow= in step\n"
	"      --annotation-allow RULE\n"
	"                   an allow rule the annotation may add; repeatable\n"
	"      --annotation-allow-file FILE\n"
	"                   the allow rules the annotation may add, from FILE\n"
	"      --annotation-may-widen\n"
	"                   the annotation may widen the policy without limit\n"
	"  -j, --json       print {\"cgroup\", \"runtime\", \"prog_id\", \"replaced_id\", \"systemd\", \"v1\"}\n"
	"  -h, --help       this help\n\n"
	"In config.json (runc, crun):\n"
	"  \"hooks\": {\"createRuntime\": [{\"path\": \"/usr/bin/devcg\",\n"
	"             \"args\": [\"devcg\", \"oci-hook\", \"--runtime\", \"runc\"]}]}\n\n"
	"Examples:\n"
	"  devcg oci-hook --runtime crun 'allow c 10:229 rwm' < state.json\n"
	"  devcg oci-hook --runtime auto --annotation-allow 'c 10:200 rwm' < state.json\n",
};

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// devcg: manage device access for cgroups with atomically swapped BPF filters.
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static const struct verb *const verbs[] = {
	&verb_replace, &verb_show, &verb_check, &verb_allow, &verb_deny, &verb_reset,
	&verb_compile, &verb_trace, &verb_oci_hook, &verb_attach, &verb_detach, &verb_doctor,
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: devcg [-j] VERB [OPTIONS] [ARGS]\n"
		   "       devcg help [VERB] | -h | --help | -V | --version\n\n"
		   "Device access for cgroups: the cgroup v1 devices semantics, enforced on\n"
		   "cgroup v2 by a BPF filter that is replaced atomically.\n\nVerbs:\n");
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		fprintf(f, "  %-9s %s\n", verbs[i]->name, verbs[i]->summary);
	fprintf(f, "\nOptions:\n"
		   "  -j, --json     output JSON (errors too, as {\"error\": ...})\n"
		   "  -h, --help     this help; 'devcg help VERB' or 'devcg VERB --help'\n"
		   "                 for a verb's\n"
		   "  -V, --version  print the version\n\n"
		   "Exit status: 0 success, 1 failure, 2 usage error ('check': 0 allow,\n"
		   "1 deny, 3 failure; 'doctor': 0 nothing wrong, 1 findings, 2 error).\n"
		   "Standard output that cannot be written (a full\n"
		   "disk) is a failure, said on standard error.\n"
		   "See devcg(8).\n");
}

static int run(struct cli *cli, int argc, char **argv)
{
	int i = 1;
	size_t v;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			cli->json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return EXIT_OK;
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("devcg %s\n", DEVCG_VERSION);
			return EXIT_OK;
		} else {
			return cli_usage(cli, "unknown option '%s'", argv[i]);
		}
	}
	if (i == argc)
		return cli_usage(cli, "missing VERB");
	/* devcg help [VERB], as git and bpftool take it */
	if (!strcmp(argv[i], "help")) {
		if (i + 1 == argc) {
			usage(stdout);
			return EXIT_OK;
		}
		if (i + 2 < argc)
			return cli_usage(cli, "help takes one VERB");
		for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
			if (!strcmp(argv[i + 1], verbs[v]->name))
				return cli_help(verbs[v]);
		return cli_usage(cli, "unknown verb '%s'", argv[i + 1]);
	}
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++) {
		if (!strcmp(argv[i], verbs[v]->name)) {
			cli->verb = verbs[v]->name;
			return verbs[v]->run(cli, argc - i, argv + i);
		}
	}
	return cli_usage(cli, "unknown verb '%s'", argv[i]);
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };

	/* the verbs say what getopt_long() refuses, once (cli_bad_option()) */
	opterr = 0;
	/* run in a pod with hostPID (kubectl exec into the node agent's):
	 * the host's cgroup namespace, where the containers' cgroups are
	 * found; nothing changes elsewhere, and a refusal leaves this one */
	devcg_host_cgroupns(0, NULL);

	/* one place that sees every verb's output through */
	return cli_finish_stdout(&cli, run(&cli, argc, argv));
}

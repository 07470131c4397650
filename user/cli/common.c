// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
// Shared by the verbs: errors, usage, policies from files and arguments, output.
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/magic.h>

int cli_usage(struct cli *cli, const char *fmt, ...)
{
	char msg[1024], safe[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	devcg_escape(safe, sizeof(safe), msg, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
	fprintf(stderr, "devcg%s%s: %s", cli->verb ? " " : "", cli->verb ? cli->verb : "", safe);
	fprintf(stderr, "\nTry 'devcg %s%s--help'.\n", cli->verb ? cli->verb : "", cli->verb ? " " : "");
	return EXIT_USAGE;
}

int cli_bad_option(struct cli *cli, char **argv, const char *optstring)
{
	const char *arg = optind > 0 ? argv[optind - 1] : "";
	bool is_long = !strncmp(arg, "--", 2);

	/* getopt_long() with opterr 0 (main.c) said nothing: say it once */
	if (!optopt)
		return cli_usage(cli, "unknown option '%.*s'", (int)strcspn(arg, "="), arg);
	if (is_long && strchr(arg, '='))
		return cli_usage(cli, "option '%.*s' takes no argument", (int)strcspn(arg, "="), arg);
	if (is_long)
		return cli_usage(cli, "option '%s' needs an argument", arg);
	if (optopt != ':' && optopt != '+' && optopt != '-' && strchr(optstring, optopt))
		return cli_usage(cli, "option '-%c' needs an argument", optopt);
	return cli_usage(cli, "unknown option '-%c'", optopt);
}

int cli_fail(struct cli *cli, int code, const struct devcg_error *err)
{
	const char *msg = err && err->msg[0] ? err->msg : strerror(code < 0 ? -code : code);

	if (cli->json) {
		json_t *o = json_pack("{s:o, s:i}", "error", cli_text(msg, (size_t)-1), "errno",
				      code < 0 ? -code : code);

		cli_print_json(o);
	} else {
		/* the library escapes what it quotes; this covers the CLI's own */
		size_t n = devcg_escape(NULL, 0, msg, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
		char *safe = malloc(n + 1);

		if (safe)
			devcg_escape(safe, n + 1, msg, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
		fprintf(stderr, "devcg %s: %s\n", cli->verb ? cli->verb : "", safe ? safe : "out of memory");
		free(safe);
	}
	return EXIT_ERROR;
}

int cli_failf(struct cli *cli, int code, const char *fmt, ...)
{
	struct devcg_error err = { .code = code };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err.msg, sizeof(err.msg), fmt, ap);
	va_end(ap);
	return cli_fail(cli, code, &err);
}

/* What works instead of this verb on a cgroup v1 directory DIR. */
static void v1_advice(const char *verb, const char *dir, char *buf, size_t len)
{
	if (!strcmp(verb, "replace"))
		snprintf(buf, len, "for cgroup v1 use 'devcg replace --v1 %s'", dir);
	else if (!strcmp(verb, "show"))
		snprintf(buf, len, "on cgroup v1 the policy is %s/devices.list (a default-allow "
			 "cgroup lists only 'a *:* rwm')", dir);
	else if (!strcmp(verb, "check"))
		snprintf(buf, len, "on cgroup v1 decide against its list: (echo 'deny a'; cat "
			 "%s/devices.list) | devcg check --rules - TYPE MAJOR:MINOR ACCESS", dir);
	else if (!strcmp(verb, "allow") || !strcmp(verb, "deny"))
		snprintf(buf, len, "on cgroup v1 write the rule to %s/devices.%s, or install the "
			 "whole policy with 'devcg replace --v1 %s'", dir, verb, dir);
	else if (!strcmp(verb, "reset"))
		snprintf(buf, len, "on cgroup v1 there is no devcg filter to remove; to allow every "
			 "device: devcg replace --v1 %s 'allow a'", dir);
	else
		snprintf(buf, len, "devcg's live filters are cgroup v2 only");
}

/* Is DIR the root of its mount (its parent on another file system, or
 * itself)? Only for advice: the library refuses a v1 root by itself. */
static bool v1_root(const char *dir)
{
	char parent[4200];
	struct stat a, b;

	snprintf(parent, sizeof(parent), "%s/..", dir);
	return !stat(dir, &a) && !stat(parent, &b) && (a.st_dev != b.st_dev || a.st_ino == b.st_ino);
}

int cli_fail_cgroup(struct cli *cli, int code, const struct devcg_error *err, const char *cgroup)
{
	struct devcg_error more = { .code = code };
	struct statfs sfs;
	char advice[512];

	/* only an absolute CGROUP can be on v1: a relative one is joined to
	 * the cgroup2 mount; without one (attach -p PID) an ENOTDIR is the
	 * container's or a file's, not a cgroup's */
	if (code != -ENOTDIR || !cgroup || cgroup[0] != '/' || statfs(cgroup, &sfs) ||
	    sfs.f_type != CGROUP_SUPER_MAGIC)
		return cli_fail(cli, code, err);
	if (v1_root(cgroup))
		snprintf(advice, sizeof(advice), "it is the root of the cgroup v1 devices hierarchy, "
			 "whose devices no devcg verb changes: name a child cgroup");
	else
		v1_advice(cli->verb ? cli->verb : "", cgroup, advice, sizeof(advice));
	snprintf(more.msg, sizeof(more.msg), "%s; %s", err ? err->msg : "not cgroup v2", advice);
	return cli_fail(cli, code, &more);
}

int cli_help(const struct verb *v)
{
	printf("%s", v->usage);
	return EXIT_OK;
}

int cli_add_source(struct cli *cli, struct policy_args *pa, bool file, const char *text)
{
	if (pa->n == CLI_MAX_SOURCES)
		return cli_usage(cli, "more than %d -f files and rules on the command line "
				 "(put the rules in a file)", CLI_MAX_SOURCES);
	pa->src[pa->n].file = file;
	pa->src[pa->n++].text = text;
	return EXIT_OK;
}

int cli_policy_from(struct cli *cli, const struct policy_args *pa, struct devcg_policy **out)
{
	struct devcg_rules *list = devcg_rules_new();
	struct devcg_policy *policy = devcg_policy_new();
	struct devcg_error err = { 0 };
	int ret = 0, i, nrule = 0;

	if (!list || !policy) {
		ret = -ENOMEM;
		goto out;
	}
	for (i = 0; !ret && i < pa->n; i++) {
		char source[32];

		if (pa->src[i].file) {
			ret = devcg_rules_parse_file(list, pa->src[i].text, pa->parse, &err);
			continue;
		}
		snprintf(source, sizeof(source), "argument %d", ++nrule);
		ret = devcg_rules_parse_rule(list, pa->src[i].text, source, NULL, &err);
	}
	if (!ret)
		ret = devcg_policy_apply_all(policy, list, &err);
out:
	devcg_rules_free(list);
	if (ret) {
		devcg_policy_free(policy);
		return cli_fail(cli, ret, &err);
	}
	*out = policy;
	return EXIT_OK;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v >= DEVCG_ANY)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int cli_parse_request(struct cli *cli, char **w, uint8_t *type, uint32_t *major, uint32_t *minor,
		      uint8_t *access)
{
	char *colon = strchr(w[1], ':'), *a;

	if (!strcmp(w[0], "c"))
		*type = DEVCG_CHAR;
	else if (!strcmp(w[0], "b"))
		*type = DEVCG_BLOCK;
	else
		return cli_usage(cli, "TYPE must be 'c' or 'b', not '%s'", w[0]);
	if (!colon)
		return cli_usage(cli, "expected MAJOR:MINOR, not '%s'", w[1]);
	*colon = '\0';
	if (parse_u32(w[1], major) || parse_u32(colon + 1, minor)) {
		*colon = ':';
		return cli_usage(cli, "MAJOR and MINOR must be numbers (a request names one device): '%s'", w[1]);
	}
	*colon = ':';
	*access = 0;
	for (a = w[2]; strcmp(w[2], "-") && *a; a++) {
		if (*a == 'r')
			*access |= DEVCG_ACC_READ;
		else if (*a == 'w')
			*access |= DEVCG_ACC_WRITE;
		else if (*a == 'm')
			*access |= DEVCG_ACC_MKNOD;
		else
			return cli_usage(cli, "ACCESS must be letters of 'rwm' ('-' for none), not '%s'", w[2]);
	}
	return EXIT_OK;
}

void cli_format_exception(const struct devcg_exception *ex, char *buf, size_t len)
{
	struct devcg_rule r = {
		.verb = DEVCG_VERB_ALLOW, .type = ex->type, .access = ex->access,
		.major = ex->major, .minor = ex->minor,
	};
	char line[64];

	devcg_rule_format(&r, line, sizeof(line));
	snprintf(buf, len, "%s", line + strlen("allow "));
}

json_t *cli_exception_json(const struct devcg_exception *ex, bool allow)
{
	char acc[4];
	json_t *o = json_pack("{s:b, s:s, s:s}", "allow", allow, "type",
			      ex->type == DEVCG_BLOCK ? "b" : "c", "access", devcg_access_format(ex->access, acc));

	/* '*' is null, as an absent major or minor is in OCI */
	json_object_set_new(o, "major", ex->major == DEVCG_ANY ? json_null() : json_integer(ex->major));
	json_object_set_new(o, "minor", ex->minor == DEVCG_ANY ? json_null() : json_integer(ex->minor));
	return o;
}

/* In the LinuxResources shape, so that it can be fed back in as it is. */
json_t *cli_policy_json(const struct devcg_policy *policy)
{
	const struct devcg_exception *ex = devcg_policy_exceptions(policy);
	bool allow = devcg_policy_default_allow(policy);
	size_t i, n = devcg_policy_count(policy);
	json_t *devices = json_array();

	json_array_append_new(devices, json_pack("{s:b, s:s, s:s}", "allow", allow, "type", "a",
						 "access", "rwm"));
	for (i = 0; i < n; i++)
		json_array_append_new(devices, cli_exception_json(&ex[i], !allow));
	return json_pack("{s:s, s:I, s:o}", "default", allow ? "allow" : "deny", "exceptions",
			 (json_int_t)n, "devices", devices);
}

void cli_print_rules(const struct devcg_policy *policy, const char *prefix)
{
	struct devcg_rules *rules;
	size_t i;

	if (devcg_policy_to_rules(policy, &rules)) {
		fprintf(stderr, "devcg: out of memory\n");
		return;
	}
	for (i = 0; i < devcg_rules_count(rules); i++) {
		char line[64];

		devcg_rule_format(devcg_rules_get(rules, i), line, sizeof(line));
		printf("%s%s\n", prefix, line);
	}
	devcg_rules_free(rules);
}

void cli_print_policy(struct cli *cli, const struct devcg_policy *policy)
{
	if (cli->json)
		cli_print_json(cli_policy_json(policy));
	else
		cli_print_rules(policy, "");
}

json_t *cli_text(const char *s, size_t n)
{
	size_t len = devcg_escape(NULL, 0, s, n, DEVCG_ESCAPE_MESSAGE);
	char *buf = malloc(len + 1);
	json_t *v;

	if (!buf)
		return NULL; /* cli_print_json() says it could not encode */
	/* always valid UTF-8, so jansson takes the whole text */
	devcg_escape(buf, len + 1, s, n, DEVCG_ESCAPE_MESSAGE);
	v = json_stringn(buf, len);
	free(buf);
	return v;
}

const char *cli_prog_name(const char *name, char *buf, size_t len)
{
	/* the kernel keeps "" for a program loaded without one (runc's) */
	if (!name[0])
		return "no name";
	return cli_safe(name, buf, len);
}

const char *cli_safe(const char *s, char *buf, size_t len)
{
	devcg_escape(buf, len, s, (size_t)-1, 0);
	return buf;
}

void cli_print_json(json_t *value)
{
	if (!value) /* never an empty line where a JSON object belongs */
		value = json_pack("{s:s}", "error", "output could not be encoded as JSON");
	json_dumpf(value, stdout, JSON_COMPACT | JSON_ENSURE_ASCII);
	putchar('\n');
	json_decref(value);
}

int cli_update(struct cli *cli, int argc, char **argv, uint8_t verb, const struct verb *v)
{
	static const struct option opts[] = {
		{ "audit", no_argument, NULL, 'a' },
		{ "force", no_argument, NULL, 'F' },
		{ "no-systemd", no_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	DEVCG_OPTS(devcg_replace_opts, ro);
	DEVCG_OPTS(devcg_parse_opts, po, .verb = verb);
	struct devcg_error err = { 0 };
	struct devcg_rules *rules;
	char text[64], safe[4096], v1[4096] = "";
	json_t *list;
	size_t n, i;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'a': ro.audit = true; break;
		case 'F': ro.force = true; break;
		case 'S': ro.no_systemd = true; break;
		case 'j': cli->json = true; break;
		case 'h': return cli_help(v);
		default: return cli_bad_option(cli, argv, "jh");
		}
	}
	if (argc - optind < 2)
		return cli_usage(cli, "expected CGROUP RULE...");
	rules = devcg_rules_new();
	if (!rules)
		return cli_failf(cli, -ENOMEM, "out of memory");
	/* every RULE, parsed before anything is applied; the parser refuses a
	 * rule whose own verb is not the command's */
	for (i = optind + 1; i < (size_t)argc; i++) {
		char source[32];

		n = devcg_rules_count(rules);
		if (argc - optind == 2)
			snprintf(source, sizeof(source), "RULE");
		else
			snprintf(source, sizeof(source), "RULE %zu", i - optind);
		ret = devcg_rules_parse_rule(rules, argv[i], source, &po, &err);
		if (ret) {
			devcg_rules_free(rules);
			return cli_fail(cli, ret, &err);
		}
		if (devcg_rules_count(rules) != n + 1) {
			devcg_rules_free(rules);
			return cli_usage(cli, "%s must name one device rule (it names %zu)", source,
					 devcg_rules_count(rules) - n);
		}
	}
	/* all of them in one compare-and-swap, or none; on a hybrid host the
	 * v1 devices cgroup of its processes gets them first */
	ret = devcg_cgroup_v1_cgroup(argv[optind], v1, sizeof(v1), &err);
	if (ret >= 0)
		ret = devcg_update_both(argv[optind], v1, rules, &ro, &err);
	if (ret) {
		devcg_rules_free(rules);
		return cli_fail_cgroup(cli, ret, &err, argv[optind]);
	}
	n = devcg_rules_count(rules);
	list = json_array();
	if (!cli->json)
		printf("%s: ", cli_safe(argv[optind], safe, sizeof(safe)));
	for (i = 0; i < n; i++) {
		devcg_rule_format(devcg_rules_get(rules, i), text, sizeof(text));
		json_array_append_new(list, json_string(text));
		if (!cli->json)
			printf("%s%s", i ? ", " : "", text);
	}
	devcg_rules_free(rules);
	if (cli->json) {
		/* resolved, as show -j names it */
		json_t *o = json_pack("{s:o, s:o, s:I, s:I, s:o}", "cgroup", cli_text(ro.cgroup, (size_t)-1),
				      "rules", list, "prog_id", (json_int_t)ro.prog_id, "replaced_id",
				      (json_int_t)ro.replaced_id, "systemd",
				      cli_systemd_json(ro.systemd_unit, ro.systemd_entries));

		/* "rule": the one RULE, as before several were taken */
		if (o && n == 1)
			json_object_set(o, "rule", json_array_get(list, 0));
		if (o)
			json_object_set_new(o, "v1", v1[0] ? cli_text(v1, (size_t)-1) : json_null());
		cli_print_json(o);
	} else {
		json_decref(list);
		printf(" (program %u)\n", ro.prog_id);
		if (v1[0])
			printf("%s: the same rules (cgroup v1 devices cgroup of its processes)\n",
			       cli_safe(v1, safe, sizeof(safe)));
		cli_print_systemd(ro.systemd_unit, ro.systemd_entries);
	}
	return EXIT_OK;
}

int cli_one_cgroup(struct cli *cli, int argc, char **argv, const struct verb *v, const char **cgroup)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': cli->json = true; break;
		case 'h': cli_help(v); return EXIT_OK;
		default: return cli_bad_option(cli, argv, "jh");
		}
	}
	if (argc - optind != 1)
		return cli_usage(cli, "expected one CGROUP");
	*cgroup = argv[optind];
	return -1;
}

int cli_finish_stdout(struct cli *cli, int ret)
{
	bool check = cli->verb && !strcmp(cli->verb, "check");
	int error = 0;

	/* a full disk or a closed pipe must not pass for a complete output: a
	 * policy cut between lines still parses, without its later rules */
	errno = 0;
	if (fflush(stdout))
		error = errno ? errno : EIO;
	else if (ferror(stdout))
		error = cli->out_errno ? cli->out_errno : EIO; /* an earlier write failed */
	if (fclose(stdout) && !error)
		error = errno ? errno : EIO;
	if (!error)
		return ret;
	/* on stderr also with -j: standard output is what failed */
	fprintf(stderr, "devcg%s%s: cannot write to standard output: %s\n", cli->verb ? " " : "",
		cli->verb ? cli->verb : "", strerror(error));
	/* check's 1 means "deny": its failures are 3 */
	if (check)
		return ret == EXIT_OK || ret == EXIT_ERROR ? EXIT_FAILED : ret;
	return ret == EXIT_OK ? EXIT_ERROR : ret;
}

int cli_runtime(struct cli *cli, const char *name, bool auto_ok, enum devcg_runtime *out)
{
	if (!strcmp(name, "runc"))
		*out = DEVCG_RUNTIME_RUNC;
	else if (!strcmp(name, "crun"))
		*out = DEVCG_RUNTIME_CRUN;
	else if (auto_ok && !strcmp(name, "auto"))
		*out = DEVCG_RUNTIME_AUTO;
	else
		return cli_usage(cli, "--runtime must be runc or crun%s, not '%s'", auto_ok ? " or auto" : "", name);
	return EXIT_OK;
}

json_t *cli_systemd_json(const char *unit, uint32_t entries)
{
	if (!unit[0])
		return json_null();
	return json_pack("{s:o, s:I}", "unit", cli_text(unit, (size_t)-1), "entries_added",
			 (json_int_t)entries);
}

void cli_print_systemd(const char *unit, uint32_t entries)
{
	char safe[512];

	if (!unit[0])
		return;
	cli_safe(unit, safe, sizeof(safe));
	if (entries)
		printf("systemd: %s: %u DeviceAllow= entr%s added or widened (runtime), so that "
		       "systemd's own program allows what devcg's does\n", safe, entries,
		       entries == 1 ? "y" : "ies");
	else
		printf("systemd: %s: its DeviceAllow= already allows what devcg's program does\n", safe);
}

int cli_pid(const char *s)
{
	uint32_t v;

	if (parse_u32(s, &v) || !v || v > 0x7fffffff)
		return -1;
	return (int)v;
}

// Shared by the verbs: errors, usage, policies from files and arguments, output.
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_usage(struct cli *cli, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "devcg%s%s: ", cli->verb ? " " : "", cli->verb ? cli->verb : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'devcg %s%s--help'.\n", cli->verb ? cli->verb : "", cli->verb ? " " : "");
	return EXIT_USAGE;
}

int cli_fail(struct cli *cli, int code, const struct devcg_error *err)
{
	const char *msg = err && err->msg[0] ? err->msg : strerror(code < 0 ? -code : code);

	if (cli->json) {
		json_t *o = json_pack("{s:o, s:i}", "error", cli_text(msg, (size_t)-1), "errno",
				      code < 0 ? -code : code);

		cli_print_json(o);
	} else {
		fprintf(stderr, "devcg %s: %s\n", cli->verb ? cli->verb : "", msg);
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

const char *cli_access_string(uint32_t access, char buf[4])
{
	int n = 0;

	if (access & DEVCG_ACC_READ)
		buf[n++] = 'r';
	if (access & DEVCG_ACC_WRITE)
		buf[n++] = 'w';
	if (access & DEVCG_ACC_MKNOD)
		buf[n++] = 'm';
	buf[n] = '\0';
	return buf;
}

json_t *cli_exception_json(const struct devcg_exception *ex, bool allow)
{
	char acc[4];
	json_t *o = json_pack("{s:b, s:s, s:s}", "allow", allow, "type",
			      ex->type == DEVCG_BLOCK ? "b" : "c", "access", cli_access_string(ex->access, acc));

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

void cli_print_policy(struct cli *cli, const struct devcg_policy *policy)
{
	struct devcg_rules *rules;
	size_t i;

	if (cli->json) {
		cli_print_json(cli_policy_json(policy));
		return;
	}
	if (devcg_policy_to_rules(policy, &rules)) {
		fprintf(stderr, "devcg: out of memory\n");
		return;
	}
	for (i = 0; i < devcg_rules_count(rules); i++) {
		char line[64];

		devcg_rule_format(devcg_rules_get(rules, i), line, sizeof(line));
		puts(line);
	}
	devcg_rules_free(rules);
}

json_t *cli_text(const char *s, size_t n)
{
	char *buf;
	size_t i = 0, o = 0;
	json_t *v;

	if (n == (size_t)-1)
		n = strlen(s);
	buf = malloc(n + 1);
	if (!buf)
		return json_null();
	/* keep valid UTF-8, put '?' for any other byte (jansson refuses those) */
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
		size_t k;

		for (k = 1; len && k < len; k++)
			if (i + k >= n || ((unsigned char)s[i + k] & 0xc0) != 0x80)
				len = 0;
		if (!len || (len == 2 && c < 0xc2) || c == 0) {
			buf[o++] = c ? '?' : ' ';
			i++;
			continue;
		}
		memcpy(buf + o, s + i, len);
		o += len;
		i += len;
	}
	v = json_stringn(buf, o);
	free(buf);
	return v ? v : json_string("?");
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
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	DEVCG_OPTS(devcg_replace_opts, ro);
	struct devcg_error err = { 0 };
	struct devcg_rules *rules;
	struct devcg_rule rule = { 0 };
	uint8_t text_verb;
	char text[64];
	size_t n;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'a': ro.audit = true; break;
		case 'F': ro.force = true; break;
		case 'j': cli->json = true; break;
		case 'h': return cli_help(v);
		default: return cli_usage(cli, "unknown option");
		}
	}
	if (argc - optind != 2)
		return cli_usage(cli, "expected CGROUP RULE");
	text_verb = strncmp(argv[optind + 1], "deny", 4) ? strncmp(argv[optind + 1], "allow", 5) ? 0
		    : DEVCG_VERB_ALLOW : DEVCG_VERB_DENY;
	if (text_verb && text_verb != verb)
		return cli_usage(cli, "RULE says '%s' but this is 'devcg %s'",
				 text_verb == DEVCG_VERB_DENY ? "deny" : "allow", v->name);
	rules = devcg_rules_new();
	if (!rules)
		return cli_failf(cli, -ENOMEM, "out of memory");
	ret = devcg_rules_parse_rule(rules, argv[optind + 1], "RULE", NULL, &err);
	if (ret) {
		devcg_rules_free(rules);
		return cli_fail(cli, ret, &err);
	}
	n = devcg_rules_count(rules);
	if (n == 1)
		rule = *devcg_rules_get(rules, 0);
	devcg_rules_free(rules);
	if (n != 1)
		return cli_usage(cli, "RULE must name one device rule (it names %zu)", n);
	rule.verb = verb;
	ret = devcg_update(argv[optind], &rule, &ro, &err);
	if (ret)
		return cli_fail(cli, ret, &err);
	devcg_rule_format(&rule, text, sizeof(text));
	if (cli->json)
		cli_print_json(json_pack("{s:o, s:s, s:I, s:I}", "cgroup", cli_text(argv[optind], (size_t)-1), "rule", text,
					 "prog_id", (json_int_t)ro.prog_id, "replaced_id",
					 (json_int_t)ro.replaced_id));
	else
		printf("%s: %s (program %u)\n", argv[optind], text, ro.prog_id);
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
		default: return cli_usage(cli, "unknown option");
		}
	}
	if (argc - optind != 1)
		return cli_usage(cli, "expected one CGROUP");
	*cgroup = argv[optind];
	return -1;
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

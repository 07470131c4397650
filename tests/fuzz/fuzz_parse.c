// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * libFuzzer target for the rule parsers.
 *
 * Each input goes through both detection paths of devcg_rules_parse(): as
 * given (JSON when its first non-blank byte is '{' or '[', text otherwise),
 * as text whatever it starts with (behind a comment line), as OCI JSON
 * whatever it starts with (devcg_parse_oci()), and with the runc and crun
 * profiles (a config.json gives the runtime's list). A parse that fails
 * must leave the list as it was and say why, naming the source. The rules
 * of a parse that succeeds are applied to a policy, which must survive the
 * round trips devcg_policy_to_rules() -> apply, and -> text -> parse ->
 * apply, as an equal policy deciding every probe alike. Any mismatch aborts.
 */
#include "devcg.h"
#include "internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SOURCE "fuzz"

static const struct devcg_rule sentinel = {
	.verb = DEVCG_VERB_DENY, .type = DEVCG_CHAR, .access = DEVCG_ACC_READ,
	.major = 4242, .minor = 17,
};

__attribute__((noreturn)) static void die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_parse: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
	abort();
}

static bool same_rule(const struct devcg_rule *a, const struct devcg_rule *b)
{
	return a->verb == b->verb && a->type == b->type && a->access == b->access &&
	       a->major == b->major && a->minor == b->minor;
}

static bool same_decisions(const struct devcg_policy *p, const struct devcg_policy *q, uint8_t type,
			   uint32_t major, uint32_t minor)
{
	uint8_t acc;

	if (major == DEVCG_ANY)
		major = 0;
	if (minor == DEVCG_ANY)
		minor = 0;
	for (acc = 0; acc <= DEVCG_ACC_ALL; acc++) {
		int a = devcg_policy_check(p, type, major, minor, acc, NULL, NULL);
		int b = devcg_policy_check(q, type, major, minor, acc, NULL, NULL);

		if (a < 0 || a != b)
			return false;
	}
	return true;
}

/* Format RULES one per line, parse the text back: the same rules. */
static void text_round_trip(const struct devcg_rules *rules)
{
	size_t i, n = devcg_rules_count(rules), used = 0, cap = 64 * n + 1;
	struct devcg_rules *back = devcg_rules_new();
	struct devcg_error err = { 0 };
	char *text = malloc(cap);

	if (!back || !text)
		die("out of memory", NULL);
	for (i = 0; i < n; i++) {
		int len = devcg_rule_format(devcg_rules_get(rules, i), text + used, cap - used);

		if (len <= 0 || (size_t)len >= cap - used)
			die("devcg_rule_format failed", NULL);
		used += (size_t)len;
		text[used++] = '\n';
	}
	if (devcg_rules_parse(back, text, used, SOURCE, NULL, &err))
		die("canonical text does not parse", err.msg);
	if (devcg_rules_count(back) != n)
		die("canonical text parses to another number of rules", NULL);
	for (i = 0; i < n; i++)
		if (!same_rule(devcg_rules_get(back, i), devcg_rules_get(rules, i)))
			die("canonical text parses to another rule", NULL);
	devcg_rules_free(back);
	free(text);
}

/* Apply RULES (all but the sentinel at index 0) and check the round trips. */
static void check_rules(const struct devcg_rules *parsed)
{
	struct devcg_policy *p = devcg_policy_new(), *q = devcg_policy_new();
	struct devcg_rules *rules = devcg_rules_new(), *back = NULL;
	const struct devcg_exception *ex;
	struct devcg_error err = { 0 };
	size_t i, n;

	if (!p || !q || !rules)
		die("out of memory", NULL);
	for (i = 1; i < devcg_rules_count(parsed); i++)
		if (devcg_rules_add(rules, devcg_rules_get(parsed, i), &err))
			die("a parsed rule is malformed", err.msg);
	if (devcg_policy_apply_all(p, rules, &err))
		die("parsed rules do not apply", err.msg);

	/* the exceptions are unique and in canonical order */
	ex = devcg_policy_exceptions(p);
	n = devcg_policy_count(p);
	if (!ex)
		die("devcg_policy_exceptions failed", NULL);
	for (i = 0; i < n; i++) {
		if ((ex[i].type != DEVCG_CHAR && ex[i].type != DEVCG_BLOCK) || !ex[i].access ||
		    (ex[i].access & ~DEVCG_ACC_ALL))
			die("malformed exception in a policy", NULL);
		if (i && devcg_exception_cmp(&ex[i - 1], &ex[i]) >= 0)
			die("exceptions out of canonical order or duplicated", NULL);
	}

	/* policy -> rules -> policy */
	if (devcg_policy_to_rules(p, &back))
		die("devcg_policy_to_rules failed", NULL);
	if (devcg_rules_count(back) != n + 1)
		die("devcg_policy_to_rules is not the shortest form", NULL);
	if (devcg_policy_apply_all(q, back, &err))
		die("the rules of a policy do not apply", err.msg);
	if (!devcg_policy_equal(p, q) || !devcg_policy_equal(q, p))
		die("round trip through devcg_policy_to_rules changed the policy", NULL);

	/* the same decisions, at every exception's device and at each parsed rule's */
	ex = devcg_policy_exceptions(p);
	for (i = 0; i < n; i++)
		if (!same_decisions(p, q, ex[i].type, ex[i].major, ex[i].minor))
			die("round trip changed a decision", NULL);
	for (i = 0; i < devcg_rules_count(rules); i++) {
		const struct devcg_rule *r = devcg_rules_get(rules, i);

		if (r->type != DEVCG_ALL && !same_decisions(p, q, r->type, r->major, r->minor))
			die("round trip changed a decision", NULL);
	}

	/* rules -> text -> rules, for the parsed rules and the canonical ones */
	text_round_trip(rules);
	text_round_trip(back);

	devcg_rules_free(back);
	devcg_rules_free(rules);
	devcg_policy_free(q);
	devcg_policy_free(p);
}

/* After a parse into a list that held only the sentinel. */
static void check_parse(struct devcg_rules *rules, int ret, const struct devcg_error *err)
{
	if (devcg_rules_count(rules) < 1 || !same_rule(devcg_rules_get(rules, 0), &sentinel))
		die("a parse changed rules already in the list", NULL);
	if (!ret) {
		check_rules(rules);
		return;
	}
	if (ret > 0)
		die("a parse returned a positive value", NULL);
	if (devcg_rules_count(rules) != 1)
		die("a failed parse appended rules", NULL);
	if (err->code != ret)
		die("err.code differs from the return value", err->msg);
	if (ret != -ENOMEM && strncmp(err->msg, SOURCE ":", strlen(SOURCE ":")))
		die("an error message does not name its source", err->msg);
	/* whatever the input held, the message is safe for a terminal */
	{
		char clean[sizeof(err->msg)];

		devcg_escape(clean, sizeof(clean), err->msg, (size_t)-1, DEVCG_ESCAPE_MESSAGE);
		if (strcmp(clean, err->msg))
			die("an error message holds control bytes or invalid UTF-8", err->msg);
	}
}

typedef int (*parse_fn)(struct devcg_rules *rules, const char *text, size_t len);

static int parse_auto(struct devcg_rules *rules, const char *text, size_t len)
{
	struct devcg_error err = { 0 };
	int ret = devcg_rules_parse(rules, text, len, SOURCE, NULL, &err);

	check_parse(rules, ret, &err);
	return ret;
}

static int parse_json(struct devcg_rules *rules, const char *text, size_t len)
{
	struct devcg_error err = { 0 };
	int ret = devcg_parse_oci(rules, text, len, SOURCE, NULL, &err);

	check_parse(rules, ret, &err);
	return ret;
}

/* A config.json as runc or crun would install it (runtime.c). */
static int parse_runtime(struct devcg_rules *rules, const char *text, size_t len, enum devcg_runtime rt)
{
	DEVCG_OPTS(devcg_parse_opts, opts, .runtime = rt);
	struct devcg_error err = { 0 };
	int ret = devcg_rules_parse(rules, text, len, SOURCE, &opts, &err);

	check_parse(rules, ret, &err);
	return ret;
}

static int parse_runc(struct devcg_rules *rules, const char *text, size_t len)
{
	return parse_runtime(rules, text, len, DEVCG_RUNTIME_RUNC);
}

static int parse_crun(struct devcg_rules *rules, const char *text, size_t len)
{
	return parse_runtime(rules, text, len, DEVCG_RUNTIME_CRUN);
}

static int parse_text(struct devcg_rules *rules, const char *text, size_t len)
{
	struct devcg_error err = { 0 };
	char *buf = malloc(len + 2);
	int ret;

	if (!buf)
		die("out of memory", NULL);
	/* a comment line first: the text path, whatever the input starts with */
	buf[0] = '#';
	buf[1] = '\n';
	memcpy(buf + 2, text, len);
	ret = devcg_rules_parse(rules, buf, len + 2, SOURCE, NULL, &err);
	check_parse(rules, ret, &err);
	free(buf);
	return ret;
}

/*
 * The target is built with recoverable UBSan checks: make undefined behaviour
 * a crash that libFuzzer reports and minimizes, not a line lost in the log.
 * (UBSAN_OPTIONS in the environment still overrides this.)
 */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

/*
 * Unless the command line sets one, give libFuzzer a short -timeout: its
 * default (1200 s) would let one hanging input run far past
 * -max_total_time, which is only checked between inputs. libFuzzer parses
 * its flags after this hook, which may rewrite argv.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static char timeout[] = "-timeout=10";
	static char *args[256];
	int i;

	for (i = 1; i < *argc; i++)
		if (!strncmp((*argv)[i], "-timeout=", 9))
			return 0;
	if (*argc + 2 > (int)(sizeof(args) / sizeof(args[0])))
		return 0;
	args[0] = (*argv)[0];
	args[1] = timeout;
	for (i = 1; i < *argc; i++)
		args[i + 1] = (*argv)[i];
	args[*argc + 1] = NULL;
	*argc += 1;
	*argv = args;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const parse_fn paths[] = { parse_auto, parse_text, parse_json, parse_runc, parse_crun };
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		struct devcg_rules *rules = devcg_rules_new();

		if (!rules || devcg_rules_add(rules, &sentinel, NULL))
			die("out of memory", NULL);
		paths[i](rules, (const char *)data, size);
		devcg_rules_free(rules);
	}
	return 0;
}

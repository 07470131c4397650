/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The devcg CLI: one file per verb, all thin over libdevcg. */
#ifndef DEVCG_CLI_H
#define DEVCG_CLI_H

#include "devcg.h"

#include <jansson.h>
#include <stdbool.h>

/* Exit codes: check uses 1 for "deny", so its own failures use EXIT_FAILED. */
enum { EXIT_OK = 0, EXIT_ERROR = 1, EXIT_USAGE = 2, EXIT_FAILED = 3 };

struct cli {
	bool json;
	const char *verb;
	int out_errno; /* why a write to stdout failed, when a verb saw it */
};

struct verb {
	const char *name;
	int (*run)(struct cli *cli, int argc, char **argv);
	const char *summary;
	const char *usage; /* full --help text */
};

extern const struct verb verb_compile, verb_check, verb_replace, verb_show, verb_allow,
	verb_deny, verb_reset, verb_trace, verb_oci_hook;
extern const struct verb verb_attach, verb_detach, verb_doctor;

/* Print a usage error and a one-line hint; returns EXIT_USAGE. */
int cli_usage(struct cli *cli, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The usage error for the option getopt_long() just refused (returned
 * '?'), OPTSTRING being the short options given to it: one line. */
int cli_bad_option(struct cli *cli, char **argv, const char *optstring);
/* Print a failure (text on stderr, or {"error": ...} on stdout with -j). */
int cli_fail(struct cli *cli, int code, const struct devcg_error *err);
int cli_failf(struct cli *cli, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* cli_fail() for a verb on CGROUP: on a cgroup v1 directory, with advice
 * that works for this verb. */
int cli_fail_cgroup(struct cli *cli, int code, const struct devcg_error *err, const char *cgroup);
/* Print verb's --help. */
int cli_help(const struct verb *v);

/*
 * The sources of a policy in command-line order: -f FILE ('-' for stdin)
 * and RULE arguments. Applied in that order as writes to a new child of
 * the root cgroup (which starts allowing everything).
 */
#define CLI_MAX_SOURCES 256
struct policy_args {
	struct {
		bool file;
		const char *text;
	} src[CLI_MAX_SOURCES];
	int n;
	/* how files are parsed (a runtime profile); NULL: the defaults */
	const struct devcg_parse_opts *parse;
};
/* Add a source; a usage error (EXIT_USAGE) when there are too many. */
int cli_add_source(struct cli *cli, struct policy_args *pa, bool file, const char *text);
int cli_policy_from(struct cli *cli, const struct policy_args *pa, struct devcg_policy **out);

/* --runtime NAME: runc, crun, or (when AUTO_OK) auto; a usage error otherwise. */
int cli_runtime(struct cli *cli, const char *name, bool auto_ok, enum devcg_runtime *out);

/* Parse "TYPE MAJOR:MINOR ACCESS" request words (ACCESS may be "" or "-"). */
int cli_parse_request(struct cli *cli, char **words, uint8_t *type, uint32_t *major,
		      uint32_t *minor, uint8_t *access);

/* The policy as the shortest rule list: text lines or a JSON object. */
json_t *cli_policy_json(const struct devcg_policy *policy);
void cli_print_policy(struct cli *cli, const struct devcg_policy *policy);
/* POLICY's rules as text, each line after PREFIX. */
void cli_print_rules(const struct devcg_policy *policy, const char *prefix);
json_t *cli_exception_json(const struct devcg_exception *ex, bool allow);
void cli_format_exception(const struct devcg_exception *ex, char *buf, size_t len);
/* The options of a verb that takes only -j, -h and one CGROUP: returns -1
 * with *CGROUP set to go on, or the exit code (after --help, or a usage error). */
int cli_one_cgroup(struct cli *cli, int argc, char **argv, const struct verb *v, const char **cgroup);

/* devcg allow / devcg deny: one rule applied by compare-and-swap. */
int cli_update(struct cli *cli, int argc, char **argv, uint8_t verb, const struct verb *v);

/* devcg attach / devcg detach (attach.c). */
int cli_hotplug(struct cli *cli, int argc, char **argv, bool attach, const struct verb *v);

/* -p PID: the process id, or -1 when S is not one. */
int cli_pid(const char *s);

/* "rw", "m", ...: the letters of an access mask. */

/* A JSON string of N bytes of S (N = (size_t)-1: up to its NUL), with
 * control bytes and bytes that are not valid UTF-8 shown as \xNN. */
json_t *cli_text(const char *s, size_t n);
/* S for a terminal: escaped with devcg_escape() into BUF; returns BUF. */
const char *cli_safe(const char *s, char *buf, size_t len);

/* A program's kernel name for a message, escaped ("no name" for ""). */
const char *cli_prog_name(const char *name, char *buf, size_t len);

/* After the verb: flush and close standard output; on a write error say
 * so on stderr and return the failure code (RET when it already failed). */
int cli_finish_stdout(struct cli *cli, int ret);

/* What devcg did to keep a systemd unit in step (UNIT "" : nothing): the
 * "systemd" member of a verb's JSON (null when nothing), or a text line. */
json_t *cli_systemd_json(const char *unit, uint32_t entries);
void cli_print_systemd(const char *unit, uint32_t entries);

/* Print and free a JSON value on stdout, one line. */
void cli_print_json(json_t *value);

#endif

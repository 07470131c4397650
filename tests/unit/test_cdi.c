// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* CDI specs for hot-plug: YAML read as YAML 1.1 (as Go reads CDI specs),
 * the spec directories' order, the fields of a device node, and errors
 * that say what is wrong. */
#include "testutil.h"
#include "integration/cdi.h"

#include <jansson.h>
#include <sys/stat.h>

static json_t *load_yaml(const char *text)
{
	struct devcg_error err = { 0 };
	json_t *v = NULL;

	if (hp_cdi_load(text, strlen(text), true, "in.yaml", &v, &err))
		test_fail(__FILE__, __LINE__, "%s", err.msg);
	return v;
}

UTEST(cdi_yaml_plain_scalars_resolve_as_yaml_1_1)
{
	json_t *v = load_yaml("a: 0666\nb: 0o17\nc: 0x10\nd: 12\ne: -3\nf: true\ng: ~\nh: \"0666\"\ni: 'x'\n"
			      "j: 1.5\nk: rw\nl: [1, two]\n");

	CHECK_INT(json_integer_value(json_object_get(v, "a")), 0666);
	CHECK_INT(json_integer_value(json_object_get(v, "b")), 017);
	CHECK_INT(json_integer_value(json_object_get(v, "c")), 16);
	CHECK_INT(json_integer_value(json_object_get(v, "d")), 12);
	CHECK_INT(json_integer_value(json_object_get(v, "e")), -3);
	CHECK(json_is_true(json_object_get(v, "f")));
	CHECK(json_is_null(json_object_get(v, "g")));
	CHECK_STR(json_string_value(json_object_get(v, "h")), "0666");
	CHECK_STR(json_string_value(json_object_get(v, "i")), "x");
	CHECK_STR(json_string_value(json_object_get(v, "j")), "1.5");
	CHECK_STR(json_string_value(json_object_get(v, "k")), "rw");
	CHECK_INT(json_integer_value(json_array_get(json_object_get(v, "l"), 0)), 1);
	CHECK_STR(json_string_value(json_array_get(json_object_get(v, "l"), 1)), "two");
	json_decref(v);
}

static void load_fails(const char *text, bool yaml, const char *msg)
{
	struct devcg_error err = { 0 };
	json_t *v = (json_t *)1;

	CHECK_INT(hp_cdi_load(text, strlen(text), yaml, "in", &v, &err), -EINVAL);
	CHECK(v == NULL);
	CHECK_MSG(strstr(err.msg, msg) != NULL, "\"%s\" lacks \"%s\"", err.msg, msg);
}

UTEST(cdi_yaml_and_json_errors_say_where_and_what)
{
	load_fails("a: 1\na: 2\n", true, "duplicate key \"a\"");
	load_fails("a: [1, 2\n", true, "in:");
	load_fails("", true, "an empty document");
	load_fails("{\"a\": 1, \"a\": 2}", false, "duplicate");
	load_fails("{\"a\": ", false, "in:1:");
}

UTEST(cdi_yaml_aliases_cannot_blow_up)
{
	/* each level doubles: 2^30 nodes if expanded */
	char text[4096] = "a: &a [x, x]\n";
	char prev = 'a';

	for (char c = 'b'; c <= 'z'; c++) {
		size_t n = strlen(text);

		snprintf(text + n, sizeof(text) - n, "%c: &%c [*%c, *%c]\n", c, c, prev, prev);
		prev = c;
	}
	load_fails(text, true, "too many nodes");
}

/* ---- spec directories ------------------------------------------------------ */

struct dirs {
	char base[64], d1[128], d2[128];
	const char *list[3];
};

static void dirs_make(struct dirs *d)
{
	snprintf(d->base, sizeof(d->base), "/tmp/devcg-unit-cdi.XXXXXX");
	CHECK(mkdtemp(d->base) != NULL);
	snprintf(d->d1, sizeof(d->d1), "%s/etc", d->base);
	snprintf(d->d2, sizeof(d->d2), "%s/run", d->base);
	CHECK(!mkdir(d->d1, 0755) && !mkdir(d->d2, 0755));
	d->list[0] = d->d1;
	d->list[1] = d->d2;
	d->list[2] = NULL;
}

static void put(const char *dir, const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	CHECK(f && fputs(text, f) >= 0 && !fclose(f));
}

static void dirs_remove(struct dirs *d)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", d->base);
	CHECK_INT(system(cmd), 0);
}

#define SPEC_YAML                                                                    \
	"cdiVersion: \"0.6.0\"\n"                                                    \
	"kind: vendor.test/gpu\n"                                                    \
	"devices:\n"                                                                 \
	"  - name: \"0\"\n"                                                          \
	"    containerEdits:\n"                                                      \
	"      deviceNodes:\n"                                                       \
	"        - path: /dev/g0\n"                                                  \
	"          type: c\n"                                                        \
	"          major: 240\n"                                                     \
	"          minor: 0\n"                                                       \
	"          fileMode: 0660\n"                                                 \
	"          gid: 44\n"                                                        \
	"  - name: \"1\"\n"                                                          \
	"    containerEdits:\n"                                                      \
	"      deviceNodes:\n"                                                       \
	"        - {path: /dev/g1, hostPath: /host/g1, permissions: rw}\n"           \
	"containerEdits:\n"                                                          \
	"  env: [\"A=1\"]\n"                                                         \
	"  deviceNodes:\n"                                                           \
	"    - path: /dev/gctl\n"                                                    \
	"    - {path: /dev/guvm, permissions: none}\n"

static int resolve(struct dirs *d, const char *const *names, bool probes, struct hp_list *out,
		   struct devcg_error *err)
{
	memset(err, 0, sizeof(*err));
	return hp_cdi_resolve(names, d->list, probes, out, err);
}

UTEST(cdi_device_brings_its_nodes_and_the_specs_common_ones)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "gpu.yaml", SPEC_YAML);
	CHECK_MSG(!resolve(&d, (const char *[]){ "vendor.test/gpu=0", NULL }, false, &l, &err), "%s", err.msg);
	CHECK_INT(l.n, 3);
	CHECK_STR(l.v[0].path, "/dev/g0");
	CHECK_STR(l.v[0].host_path, "/dev/g0");
	CHECK(l.v[0].known && l.v[0].type == DEVCG_CHAR && l.v[0].major == 240 && l.v[0].minor == 0);
	CHECK_INT(l.v[0].set, DEVCG_HOTPLUG_SET_MODE | DEVCG_HOTPLUG_SET_GID);
	CHECK_INT(l.v[0].mode, 0660);
	CHECK_INT(l.v[0].gid, 44);
	CHECK_INT(l.v[0].access, DEVCG_ACC_ALL);
	CHECK(!l.v[0].common);
	CHECK_STR(l.v[0].cdi, "vendor.test/gpu=0");
	CHECK_STR(l.v[1].path, "/dev/gctl");
	CHECK(l.v[1].common && !l.v[1].known);
	CHECK_STR(l.v[2].path, "/dev/guvm");
	CHECK(l.v[2].no_access);
	hp_list_free(&l);
	/* with probes, the other device's nodes come too, marked */
	CHECK_MSG(!resolve(&d, (const char *[]){ "vendor.test/gpu=0", NULL }, true, &l, &err), "%s", err.msg);
	CHECK_INT(l.n, 4);
	CHECK(l.v[3].probe);
	CHECK_STR(l.v[3].path, "/dev/g1");
	CHECK_STR(l.v[3].host_path, "/host/g1");
	CHECK_STR(l.v[3].cdi, "vendor.test/gpu=1");
	CHECK_INT(l.v[3].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	hp_list_free(&l);
	dirs_remove(&d);
}

UTEST(cdi_a_later_directory_wins_and_one_directory_twice_is_a_conflict)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "gpu.yaml", SPEC_YAML);
	put(d.d2, "gpu.json", "{\"cdiVersion\": \"0.6.0\", \"kind\": \"vendor.test/gpu\", \"devices\": ["
			      "{\"name\": \"0\", \"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/other\"}]}}]}");
	CHECK_MSG(!resolve(&d, (const char *[]){ "vendor.test/gpu=0", NULL }, false, &l, &err), "%s", err.msg);
	CHECK_INT(l.n, 1);
	CHECK_STR(l.v[0].path, "/dev/other");
	hp_list_free(&l);
	/* twice in one directory: the CDI cache's conflict */
	put(d.d2, "gpu2.yaml", "cdiVersion: 0.6.0\nkind: vendor.test/gpu\ndevices:\n"
			       "  - {name: \"0\", containerEdits: {deviceNodes: [{path: /dev/x}]}}\n");
	CHECK_INT(resolve(&d, (const char *[]){ "vendor.test/gpu=0", NULL }, false, &l, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "defined in both"), "%s", err.msg);
	CHECK_INT(l.n, 0);
	dirs_remove(&d);
}

UTEST(cdi_unknown_names_are_clear_errors_and_append_nothing)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	struct hp_item keep = { .path = "/dev/kept" };
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "gpu.yaml", SPEC_YAML);
	put(d.d1, "broken.yaml", "kind: [\n");
	CHECK(!hp_list_add(&l, &keep));
	CHECK_INT(resolve(&d, (const char *[]){ "vendor.test/gpu=0", "vendor.test/gpu=9", NULL }, false, &l, &err),
		  -ENOENT);
	CHECK_MSG(strstr(err.msg, "vendor.test/gpu=9 not found") && strstr(err.msg, "have 0, 1"), "%s", err.msg);
	CHECK_INT(l.n, 1);
	CHECK_INT(resolve(&d, (const char *[]){ "other.test/x=0", NULL }, false, &l, &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "no spec of kind other.test/x") && strstr(err.msg, "broken.yaml"), "%s",
		  err.msg);
	CHECK_INT(resolve(&d, (const char *[]){ "gpu0", NULL }, false, &l, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "not a CDI device name"), "%s", err.msg);
	CHECK_INT(resolve(&d, (const char *[]){ "a/b/c=0", NULL }, false, &l, &err), -EINVAL);
	CHECK_INT(l.n, 1);
	hp_list_free(&l);
	dirs_remove(&d);
}

UTEST(cdi_bad_node_fields_are_refused)
{
	static const char *const bad[][2] = {
		{ "{path: dev/relative}", "absolute" },
		{ "{path: /dev/f, type: p}", "FIFO" },
		{ "{path: /dev/f, type: x}", "bad \"type\"" },
		{ "{path: /dev/f, permissions: rwx}", "bad \"permissions\"" },
		{ "{path: /dev/f, major: -1, type: c}", "in range" },
		{ "{path: /dev/f, uid: abc}", "in range" },
	};
	struct dirs d;

	dirs_make(&d);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512];
		struct devcg_error err;
		struct hp_list l = { 0 };

		snprintf(text, sizeof(text), "cdiVersion: 0.6.0\nkind: v.test/d\ndevices:\n"
			 "  - {name: a, containerEdits: {deviceNodes: [%s]}}\n", bad[i][0]);
		put(d.d1, "d.yaml", text);
		CHECK_INT(resolve(&d, (const char *[]){ "v.test/d=a", NULL }, false, &l, &err), -EINVAL);
		CHECK_MSG(strstr(err.msg, bad[i][1]), "%s: \"%s\" lacks \"%s\"", bad[i][0], err.msg, bad[i][1]);
		CHECK_INT(l.n, 0);
		hp_list_free(&l);
	}
	dirs_remove(&d);
}

UTEST(cdi_names_from_the_command_line_and_specs_are_escaped_in_messages)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "gpu.yaml", "cdiVersion: 0.6.0\nkind: v.test/d\ndevices:\n"
			      "  - {name: \"a\\e[31m\", containerEdits: {deviceNodes: [{path: /dev/x}]}}\n");
	/* a message is one line: a newline in a name must not start another */
	CHECK_INT(resolve(&d, (const char *[]){ "x\ndevcg: all good", NULL }, false, &l, &err), -EINVAL);
	CHECK_MSG(!strchr(err.msg, '\n'), "%s", err.msg);
	CHECK_INT(resolve(&d, (const char *[]){ "\x1b[2J", NULL }, false, &l, &err), -EINVAL);
	CHECK_MSG(!strchr(err.msg, '\x1b') && strstr(err.msg, "\\x1b[2J"), "%s", err.msg);
	CHECK_INT(resolve(&d, (const char *[]){ "v.test/d=b", NULL }, false, &l, &err), -ENOENT);
	CHECK_MSG(!strchr(err.msg, '\x1b') && strstr(err.msg, "have a\\x1b[31m"), "%s", err.msg);
	CHECK_INT(l.n, 0);
	dirs_remove(&d);
}

/* ---- hostile specs (issue 18, item 14) --------------------------------------- */

/* 100,000 levels, and no end: the loader read (and built) all of them, in
 * time quadratic in the depth, and then said where the brackets failed to
 * close; read as events, the 65th level is refused where it opens. */
UTEST(cdi_yaml_nesting_deeper_than_the_cap_is_refused_where_it_starts)
{
	size_t n = 100000;
	char *text = malloc(2 * n + 1);

	CHECK(text != NULL);
	memset(text, '[', n);
	memset(text + n, ']', n - 1); /* one short: not even YAML */
	text[2 * n - 1] = '\0';
	load_fails(text, true, "in:1:66: nested more than 64 levels deep");
	free(text);
}

/* An alias counts its anchor's height: a chain of aliases, each one level
 * deeper, stops at the cap too (jansson frees a value recursively). */
UTEST(cdi_yaml_aliases_cannot_nest_deeper_than_the_cap)
{
	char text[8192] = "a0: &a0 [x]\n";

	for (int i = 1; i < 100; i++) {
		size_t n = strlen(text);

		snprintf(text + n, sizeof(text) - n, "a%d: &a%d [*a%d]\n", i, i, i - 1);
	}
	load_fails(text, true, "nested more than 64 levels deep");
}

UTEST(cdi_yaml_an_alias_of_the_node_it_is_in_is_refused)
{
	load_fails("a: &x [1, *x]\n", true, "an alias of an unknown anchor");
}

/* A *.json FIFO in a spec directory: open(O_RDONLY) waited for a writer
 * for ever, before its type was looked at. Now it is skipped, said why,
 * and the other spec is used. */
UTEST(cdi_a_fifo_among_the_specs_does_not_block_and_the_other_specs_are_used)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	char fifo[256];
	struct dirs d;
	int ret;

	dirs_make(&d);
	put(d.d1, "gpu.yaml", SPEC_YAML);
	snprintf(fifo, sizeof(fifo), "%s/a.json", d.d1);
	CHECK(!mkfifo(fifo, 0644));
	alarm(20); /* a hang ends the test with SIGALRM */
	ret = resolve(&d, (const char *[]){ "vendor.test/gpu=0", NULL }, false, &l, &err);
	alarm(0);
	CHECK_MSG(!ret, "%s", err.msg);
	CHECK_INT(l.n, 3);
	CHECK_STR(l.v[0].path, "/dev/g0");
	CHECK_MSG(l.v[0].note && strstr(l.v[0].note, "a.json: not a regular file"), "%s",
		  l.v[0].note ? l.v[0].note : "(no note)");
	hp_list_free(&l);
	dirs_remove(&d);
}

/* Specs that cannot be used -- one of the very kind asked for, with
 * "devices" not an array, which stopped every lookup of the kind; one
 * nested too deeply; a symbolic link -- are skipped, counted and the first
 * named, and the device comes from the good spec. */
UTEST(cdi_unusable_specs_are_skipped_and_reported_and_do_not_block_the_others)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	char link[256];
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "gpu.yaml", SPEC_YAML);
	put(d.d2, "a-broken.yaml", "cdiVersion: 0.6.0\nkind: vendor.test/gpu\ndevices: 3\n");
	{
		char deep[160];

		memset(deep, '[', 70);
		memset(deep + 70, ']', 70);
		deep[140] = '\0';
		put(d.d2, "b-deep.yaml", deep);
	}
	snprintf(link, sizeof(link), "%s/c-link.yaml", d.d2);
	CHECK(!symlink("/etc/passwd", link));
	CHECK_MSG(!resolve(&d, (const char *[]){ "vendor.test/gpu=0", NULL }, false, &l, &err), "%s", err.msg);
	CHECK_INT(l.n, 3);
	CHECK_STR(l.v[0].path, "/dev/g0");
	CHECK_MSG(l.v[0].note && strstr(l.v[0].note, "skipped 3 spec files") &&
			  strstr(l.v[0].note, "a-broken.yaml: \"devices\" is not an array"),
		  "%s", l.v[0].note ? l.v[0].note : "(no note)");
	CHECK(!l.v[1].note && !l.v[2].note);
	hp_list_free(&l);
	/* a device only an unusable spec could have: not found, and why */
	CHECK_INT(resolve(&d, (const char *[]){ "vendor.test/gpu=7", NULL }, false, &l, &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "have 0, 1") && strstr(err.msg, "a-broken.yaml"), "%s", err.msg);
	CHECK_INT(l.n, 0);
	dirs_remove(&d);
}

UTEST(cdi_a_symbolic_link_spec_is_not_followed)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	char link[256], target[256];
	struct dirs d;

	dirs_make(&d);
	snprintf(target, sizeof(target), "%s/gpu.yaml", d.base);
	put(d.base, "gpu.yaml", SPEC_YAML);
	snprintf(link, sizeof(link), "%s/gpu.yaml", d.d1);
	CHECK(!symlink(target, link));
	CHECK_INT(resolve(&d, (const char *[]){ "vendor.test/gpu=0", NULL }, false, &l, &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "gpu.yaml: a symbolic link (not followed)"), "%s", err.msg);
	CHECK_INT(l.n, 0);
	dirs_remove(&d);
}

/* ---- names and permissions (issue 18, items 26 and 22) ----------------------------- */

/* A plain scalar in a field CDI reads as a string is its text, as Go's
 * reader takes it: "name: 0" names device "0" and "name: 0x10" device
 * "0x10" (not 16). JSON has no plain scalars: a number there is no name. */
UTEST(cdi_a_yaml_device_name_that_is_a_plain_number_is_that_text)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "d.yaml", "cdiVersion: 0.6.0\nkind: v.test/d\ndevices:\n"
			    "  - name: 0\n    containerEdits: {deviceNodes: [{path: /dev/d0}]}\n"
			    "  - {name: 0x10, containerEdits: {deviceNodes: [{path: /dev/d16}]}}\n"
			    "  - {name: true, containerEdits: {deviceNodes: [{path: /dev/dt}]}}\n");
	CHECK_MSG(!resolve(&d, (const char *[]){ "v.test/d=0", "v.test/d=0x10", "v.test/d=true", NULL }, false,
			   &l, &err), "%s", err.msg);
	CHECK_INT(l.n, 3);
	CHECK_STR(l.v[0].path, "/dev/d0");
	CHECK_STR(l.v[1].path, "/dev/d16");
	CHECK_STR(l.v[2].path, "/dev/dt");
	CHECK(!l.v[0].note);
	hp_list_free(&l);
	put(d.d2, "j.json", "{\"cdiVersion\": \"0.6.0\", \"kind\": \"v.test/j\", \"devices\": [{\"name\": 0, "
			    "\"containerEdits\": {\"deviceNodes\": [{\"path\": \"/dev/j\"}]}}]}");
	CHECK_INT(resolve(&d, (const char *[]){ "v.test/j=0", NULL }, false, &l, &err), -ENOENT);
	CHECK_MSG(strstr(err.msg, "j.json: the \"name\" of device 1 is not a string"), "%s", err.msg);
	dirs_remove(&d);
}

/* "permissions": letters of rwm; left out or null, rwm; "none" asks for no
 * access (no_access, no access bits); "" is refused, not taken as rwm. */
UTEST(cdi_permissions_none_asks_for_nothing_and_an_empty_one_is_refused)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "d.yaml", "cdiVersion: 0.6.0\nkind: v.test/d\ndevices:\n"
			    "  - name: a\n    containerEdits:\n      deviceNodes:\n"
			    "        - {path: /dev/none, permissions: none}\n"
			    "        - {path: /dev/left-out}\n"
			    "        - {path: /dev/null-one, permissions: ~}\n"
			    "        - {path: /dev/rw, permissions: rw}\n"
			    "  - {name: b, containerEdits: {deviceNodes: [{path: /dev/e, permissions: \"\"}]}}\n");
	CHECK_MSG(!resolve(&d, (const char *[]){ "v.test/d=a", NULL }, false, &l, &err), "%s", err.msg);
	CHECK_INT(l.n, 4);
	CHECK(l.v[0].no_access);
	CHECK_INT(l.v[0].access, 0);
	CHECK(!l.v[1].no_access && !l.v[2].no_access && !l.v[3].no_access);
	CHECK_INT(l.v[1].access, DEVCG_ACC_ALL);
	CHECK_INT(l.v[2].access, DEVCG_ACC_ALL);
	CHECK_INT(l.v[3].access, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
	hp_list_free(&l);
	CHECK_INT(resolve(&d, (const char *[]){ "v.test/d=b", NULL }, false, &l, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "/dev/e: bad \"permissions\" \"\""), "%s", err.msg);
	CHECK_INT(l.n, 0);
	dirs_remove(&d);
}

/* ---- attach and detach agree on what fits (issue 18, item 14) ---------------------- */

/* Detach looks at the other devices of a spec only when it has common
 * nodes (to keep them while another device is in): without, there is
 * nothing to look at. */
UTEST(cdi_detach_looks_at_the_other_devices_only_of_a_spec_with_common_nodes)
{
	struct devcg_error err;
	struct hp_list l = { 0 };
	struct dirs d;

	dirs_make(&d);
	put(d.d1, "d.yaml", "cdiVersion: 0.6.0\nkind: v.test/d\ndevices:\n"
			    "  - {name: a, containerEdits: {deviceNodes: [{path: /dev/a}]}}\n"
			    "  - {name: b, containerEdits: {deviceNodes: [{path: /dev/b}]}}\n");
	CHECK_MSG(!resolve(&d, (const char *[]){ "v.test/d=a", NULL }, true, &l, &err), "%s", err.msg);
	CHECK_INT(l.n, 1);
	CHECK(!l.v[0].probe);
	hp_list_free(&l);
	dirs_remove(&d);
}

/* A spec of NDEV devices (one node each, c 240:i), with a common node or not. */
static void big_spec(struct dirs *d, int ndev, bool common)
{
	size_t size = 128 + (size_t)ndev * 128, n;
	char *text = malloc(size);

	CHECK(text != NULL);
	n = (size_t)snprintf(text, size, "cdiVersion: 0.6.0\nkind: v.test/many\ndevices:\n");
	for (int i = 0; i < ndev; i++)
		n += (size_t)snprintf(text + n, size - n, "  - {name: \"%d\", containerEdits: {deviceNodes: "
					  "[{path: /dev/many/%d, type: c, major: 240, minor: %d}]}}\n", i, i, i);
	if (common)
		snprintf(text + n, size - n, "containerEdits: {deviceNodes: [{path: /dev/many/ctl, type: c, "
					     "major: 240, minor: 1000}]}\n");
	put(d->d1, "many.yaml", text);
	free(text);
}

static int hotplug_call(bool attach, struct dirs *d, const char *name, struct devcg_error *err)
{
	DEVCG_OPTS(devcg_hotplug_opts, o);
	const char *names[2] = { name, NULL };

	o.cdi = names;
	o.cdi_spec_dirs = d->list;
	memset(err, 0, sizeof(*err));
	/* no such cgroup: the devices are listed before the cgroup is opened */
	return attach ? devcg_attach("devcg-unit-no-such-cgroup", NULL, 0, &o, NULL, err)
		      : devcg_detach("devcg-unit-no-such-cgroup", NULL, 0, &o, NULL, err);
}

/* 300 devices and a common node: detach of one would look at 301 nodes,
 * more than the 256 of one command, so attach (of 2) took what detach
 * could never take back. Now attach refuses it, saying why. */
UTEST(cdi_attach_refuses_a_device_that_detach_could_not_take_back)
{
	struct devcg_error err;
	struct dirs d;

	dirs_make(&d);
	big_spec(&d, 300, true);
	CHECK_INT(hotplug_call(true, &d, "v.test/many=7", &err), -E2BIG);
	CHECK_MSG(strstr(err.msg, "detach could not take these devices back") && strstr(err.msg, "at most 256"),
		  "%s", err.msg);
	CHECK_INT(hotplug_call(false, &d, "v.test/many=7", &err), -E2BIG);
	dirs_remove(&d);
}

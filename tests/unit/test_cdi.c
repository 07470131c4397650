// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* CDI specs for hot-plug: YAML read as YAML 1.1 (as Go reads CDI specs),
 * the spec directories' order, the fields of a device node, and errors
 * that say what is wrong. */
#include "testutil.h"
#include "hotplug.h"

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

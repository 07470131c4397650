// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* A node agent's state file of one container (container_state.c): written
 * and read back the same, written atomically in its directory, and a file
 * that is not one is an error naming it. */
#include "testutil.h"
#include "integration/container.h"

#include <fcntl.h>
#include <sys/stat.h>

static struct devcg_policy *pol(const char *text)
{
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *p = devcg_policy_new();
	struct devcg_error err = { 0 };

	if (devcg_rules_parse(rules, text, strlen(text), "test", NULL, &err) ||
	    devcg_policy_apply_all(p, rules, &err))
		test_fail(__FILE__, __LINE__, "%s", err.msg);
	devcg_rules_free(rules);
	return p;
}

static void sample(struct ctr_state *s)
{
	const struct devcg_exception hot[2] = {
		{ .type = DEVCG_CHAR, .access = DEVCG_ACC_READ | DEVCG_ACC_WRITE, .major = 195, .minor = 0 },
		{ .type = DEVCG_BLOCK, .access = DEVCG_ACC_ALL, .major = 7, .minor = DEVCG_ANY },
	};

	memset(s, 0, sizeof(*s));
	snprintf(s->id, sizeof(s->id), "0123abcd-x_y.z");
	s->name = strdup("name \"quoted\"\nnewline");
	s->pod_name = strdup("pod");
	s->pod_uid = strdup("5e2f");
	s->pid = 4242;
	snprintf(s->cgroup, sizeof(s->cgroup), "/kubepods.slice/cri-containerd-0123.scope");
	s->runtime = DEVCG_RUNTIME_CRUN;
	s->baseline = pol("deny a\nallow c 1:3 rwm\nallow c 136:* rw\nallow b 8:0 r\n");
	CHECK(!ctr_state_hot_add(s, &hot[0]) && !ctr_state_hot_add(s, &hot[1]));
	s->prog_id = 77;
}

UTEST(container_state_file_round_trips_every_field)
{
	struct devcg_error err = { 0 };
	struct ctr_state a, b;
	char *text = NULL;

	sample(&a);
	CHECK_MSG(!ctr_state_format(&a, &text, &err), "%s", err.msg);
	CHECK_MSG(!ctr_state_parse(text, strlen(text), "f", &b, &err), "%s", err.msg);
	CHECK_STR(b.id, a.id);
	CHECK_STR(b.name, a.name);
	CHECK_STR(b.pod_name, "pod");
	CHECK(!b.pod_namespace);
	CHECK_STR(b.pod_uid, "5e2f");
	CHECK_INT(b.pid, 4242);
	CHECK_STR(b.cgroup, a.cgroup);
	CHECK_INT(b.runtime, DEVCG_RUNTIME_CRUN);
	CHECK(devcg_policy_equal(b.baseline, a.baseline));
	CHECK_INT(b.nhot, 2);
	for (size_t i = 0; i < 2; i++) {
		CHECK_INT(b.hot[i].type, a.hot[i].type);
		CHECK_INT(b.hot[i].access, a.hot[i].access);
		CHECK_INT(b.hot[i].major, a.hot[i].major);
		CHECK_INT(b.hot[i].minor, a.hot[i].minor);
	}
	CHECK_INT(b.prog_id, 77);
	/* control: another policy is told apart */
	devcg_policy_free(b.baseline);
	b.baseline = pol("deny a\nallow c 1:3 rwm\n");
	CHECK(!devcg_policy_equal(b.baseline, a.baseline));
	free(text);
	ctr_state_clear(&a);
	ctr_state_clear(&b);
}

UTEST(container_state_policy_is_the_baseline_with_the_hot_plugged_devices_allowed)
{
	struct devcg_policy *p = NULL, *want = pol("deny a\nallow c 1:3 rwm\nallow c 136:* rw\nallow b 8:0 r\n"
						    "allow c 195:0 rw\nallow b 7:* rwm\n");
	struct devcg_error err = { 0 };
	struct ctr_state s;

	sample(&s);
	CHECK_MSG(!ctr_state_policy(&s, &p, &err), "%s", err.msg);
	CHECK(devcg_policy_equal(p, want));
	/* a device removed from the list is no longer allowed */
	ctr_state_hot_remove(&s, DEVCG_CHAR, 195, 0);
	devcg_policy_free(p);
	CHECK_MSG(!ctr_state_policy(&s, &p, &err), "%s", err.msg);
	CHECK(!devcg_policy_equal(p, want));
	CHECK_INT(devcg_policy_check(p, DEVCG_CHAR, 195, 0, DEVCG_ACC_READ, NULL, NULL), 0);
	devcg_policy_free(p);
	devcg_policy_free(want);
	ctr_state_clear(&s);
}

static void parse_fails(const char *text, const char *want)
{
	struct devcg_error err = { 0 };
	struct ctr_state s;

	CHECK_INT(ctr_state_parse(text, strlen(text), "/run/x/c.json", &s, &err), -EINVAL);
	CHECK_MSG(strstr(err.msg, "/run/x/c.json") && strstr(err.msg, want), "%s", err.msg);
	CHECK(!s.baseline && !s.name && !s.hot);
}

UTEST(container_state_that_is_not_one_is_an_error_naming_the_file)
{
	parse_fails("{\"version\": 1, \"id\": \"c\"", "invalid JSON");
	parse_fails("[]", "not a JSON object");
	parse_fails("{\"version\": 2}", "version 2");
	parse_fails("{\"version\": 1, \"id\": \"c\", \"pid\": 1, \"cgroup\": \"rel\"}", "cgroup");
	parse_fails("{\"version\": 1, \"id\": \"c\", \"pid\": 1, \"cgroup\": \"/a\", \"runtime\": \"kata\"}",
		    "runtime");
	parse_fails("{\"version\": 1, \"id\": \"c\", \"pid\": 1, \"cgroup\": \"/a\", \"runtime\": \"runc\", "
		    "\"prog_id\": 1, \"policy\": [\"allow q\"], \"hotplugged\": []}", "policy[0]");
	parse_fails("{\"version\": 1, \"id\": \"c\", \"pid\": 1, \"cgroup\": \"/a\", \"runtime\": \"runc\", "
		    "\"prog_id\": 1, \"policy\": [], \"hotplugged\": [\"deny c 1:3 rwm\"]}", "hotplugged[0]");
}

UTEST(container_ids_are_checked_before_any_path_is_made_of_them)
{
	char id[200];

	CHECK_INT(ctr_id_check("0123456789abcdef_X.y-z", NULL), 0);
	CHECK_INT(ctr_id_check("../x", NULL), -EINVAL);
	CHECK_INT(ctr_id_check("a/b", NULL), -EINVAL);
	CHECK_INT(ctr_id_check("..", NULL), -EINVAL);
	CHECK_INT(ctr_id_check("", NULL), -EINVAL);
	CHECK_INT(ctr_id_check(NULL, NULL), -EINVAL);
	CHECK_INT(ctr_id_check("a\nb", NULL), -EINVAL);
	memset(id, 'a', sizeof(id));
	id[128] = '\0';
	CHECK_INT(ctr_id_check(id, NULL), 0);
	id[128] = 'a';
	id[129] = '\0';
	CHECK_INT(ctr_id_check(id, NULL), -EINVAL);
}

UTEST(container_state_saved_in_its_directory_loads_back_and_leaves_no_temporary_file)
{
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	struct devcg_error err = { 0 };
	struct ctr_state a, b;
	char path[256];
	struct stat st;
	DIR *dir;
	struct dirent *e;
	int n = 0;

	sample(&a);
	CHECK_MSG(!ctr_dir_open(scratch(), false, &d, &err), "%s", err.msg);
	CHECK_MSG(!ctr_dir_lock(&d, a.id, &err), "%s", err.msg);
	CHECK_INT(ctr_state_load(&d, a.id, &b, &err), -ENOENT);
	CHECK_MSG(!ctr_state_save(&d, &a, &err), "%s", err.msg);
	CHECK_MSG(!ctr_state_load(&d, a.id, &b, &err), "%s", err.msg);
	CHECK_INT(b.pid, a.pid);
	CHECK(devcg_policy_equal(a.baseline, b.baseline));
	ctr_state_clear(&b);
	snprintf(path, sizeof(path), "%s/%s.json", scratch(), a.id);
	CHECK(!stat(path, &st) && (st.st_mode & 0777) == 0600);
	dir = opendir(scratch());
	while (dir && (e = readdir(dir)))
		n += e->d_name[0] == '.' && strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(dir);
	CHECK_INT(n, 0);
	/* a symbolic link in a state file's place is not followed */
	CHECK_MSG(!ctr_state_remove(&d, a.id, &err), "%s", err.msg);
	CHECK(!symlink("/etc/hostname", path));
	CHECK(ctr_state_load(&d, a.id, &b, &err) < 0);
	CHECK_MSG(strstr(err.msg, "symbolic link"), "%s", err.msg);
	unlink(path);
	ctr_dir_close(&d);
	ctr_state_clear(&a);
	ctr_state_clear(&b);
}

UTEST(container_state_directory_is_made_0700_and_one_others_may_write_is_refused)
{
	struct ctr_dir d = { .fd = -1, .lock_fd = -1 };
	struct devcg_error err = { 0 };
	char dir[128], lax[128];
	struct stat st;

	snprintf(dir, sizeof(dir), "%s/containers", scratch());
	CHECK_MSG(!ctr_dir_open(dir, true, &d, &err), "%s", err.msg);
	ctr_dir_close(&d);
	CHECK(!stat(dir, &st) && (st.st_mode & 0777) == 0700);
	/* without CREATE a missing one is ENOENT, and nothing is made */
	snprintf(lax, sizeof(lax), "%s/lax", scratch());
	CHECK_INT(ctr_dir_open(lax, false, &d, &err), -ENOENT);
	CHECK(stat(lax, &st) && errno == ENOENT);
	CHECK(!mkdir(lax, 0700) && !chmod(lax, 0777));
	CHECK_INT(ctr_dir_open(lax, false, &d, &err), -EPERM);
	CHECK_MSG(strstr(err.msg, "others may write it"), "%s", err.msg);
	CHECK(!rmdir(dir) && !rmdir(lax));
}

UTEST(container_prune_forgets_the_states_not_named_and_keeps_the_rest)
{
	struct devcg_container_opts o = { .sz = sizeof(o) };
	const char *files[] = { "a1.json", "b2.json", "c3.json", "notes.txt", ".b2.json.tmp", "a1.lock", "b2.lock" };
	const char *keep[] = { "a1", "zz" };
	char dir[] = "/tmp/devcg-prune-XXXXXX", path[256];
	struct devcg_error err = { 0 };
	size_t pruned = 99;

	CHECK(mkdtemp(dir));
	o.state_dir = dir;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);

		CHECK(fd >= 0);
		close(fd);
	}
	/* control: every state named, nothing goes */
	const char *all[] = { "a1", "b2", "c3" };

	CHECK_MSG(!devcg_container_prune(all, 3, &o, &pruned, &err), "%s", err.msg);
	CHECK_INT(pruned, 0);
	snprintf(path, sizeof(path), "%s/c3.json", dir);
	CHECK(!access(path, F_OK));
	CHECK_MSG(!devcg_container_prune(keep, 2, &o, &pruned, &err), "%s", err.msg);
	CHECK_INT(pruned, 2);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		bool gone = !strcmp(files[i], "b2.json") || !strcmp(files[i], "c3.json") ||
			    !strcmp(files[i], "b2.lock");

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		CHECK_MSG(access(path, F_OK) == (gone ? -1 : 0), "%s %s", files[i], gone ? "stayed" : "went");
	}
	/* no directory: nothing to forget */
	o.state_dir = "/tmp/devcg-prune-no-such-dir";
	CHECK_INT(devcg_container_prune(keep, 2, &o, &pruned, &err), 0);
	CHECK_INT(pruned, 0);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/c3.lock", dir);
	unlink(path);
	CHECK(!rmdir(dir));
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * What the CLI says on a live system: reset -j and show -j name a cgroup
 * the same way (resolved) however it was typed; a foreign program without
 * a name is shown as such, not as "()"; refusing the v1 devices root does
 * not advise a command that refuses it too.
 */
#include "devcg.h"
#include "harness.h"
#include "ktest.h"
#include "scratch.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <bpf/bpf.h>

static const char *devcg_bin(void)
{
	const char *p = getenv("DEVCG");

	return p ? p : "build/devcg";
}

/* Run devcg ARGS (a shell fragment): stdout in OUT, stderr in ERR. */
static int run(const char *args, char *out, size_t olen, char *err, size_t elen)
{
	char cmd[9000], op[64], ep[64];
	int of, ef, st;
	ssize_t n;

	snprintf(op, sizeof(op), "/tmp/devcg-test-%s-out-XXXXXX", scratch_tag());
	snprintf(ep, sizeof(ep), "/tmp/devcg-test-%s-err-XXXXXX", scratch_tag());
	of = mkstemp(op);
	ef = mkstemp(ep);
	CHECK(of >= 0 && ef >= 0);
	snprintf(cmd, sizeof(cmd), "%s %s </dev/null >%s 2>%s", devcg_bin(), args, op, ep);
	st = system(cmd);
	n = read(of, out, olen - 1);
	out[n > 0 ? n : 0] = '\0';
	n = read(ef, err, elen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(of);
	close(ef);
	unlink(op);
	unlink(ep);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The "cgroup" of the one JSON object in OUT, into BUF. */
static const char *json_cgroup(const char *out, char *buf, size_t len)
{
	json_t *o = json_loads(out, 0, NULL);

	CHECK_MSG(o && json_is_string(json_object_get(o, "cgroup")), "not JSON with a cgroup: %s", out);
	snprintf(buf, len, "%s", json_string_value(json_object_get(o, "cgroup")));
	json_decref(o);
	return buf;
}

TEST(every_verb_names_a_cgroup_as_show_does_however_it_is_typed)
{
	char cg[4096], typed[4200], args[8400], out[16384], err[4096], shown[4096], reset[4096];
	const char *name;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	name = strrchr(cg, '/') + 1;
	/* absolute with a trailing slash and a '.': not the resolved form */
	snprintf(typed, sizeof(typed), "%s/./", cg);
	snprintf(args, sizeof(args), "show -j '%s'", typed);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 0);
	json_cgroup(out, shown, sizeof(shown));
	snprintf(args, sizeof(args), "replace -j '%s' 'allow a'", typed);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_STR(json_cgroup(out, reset, sizeof(reset)), shown);
	snprintf(args, sizeof(args), "deny -j '%s' 'c 1:9 w'", typed);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_STR(json_cgroup(out, reset, sizeof(reset)), shown);
	snprintf(args, sizeof(args), "reset -j '%s'", typed);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 0);
	json_cgroup(out, reset, sizeof(reset));
	CHECK_STR(reset, shown);
	CHECK(strcmp(reset, typed));
	/* relative to the mount, typed relative too */
	snprintf(args, sizeof(args), "reset -j '%s'", name);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_STR(json_cgroup(out, reset, sizeof(reset)), shown);
}

/* A program of the test's own, loaded without a name (as runc's are), that
 * calls a helper devcg's reader does not know: check cannot decide it. */
static int unnamed_prog(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_prandom_u32 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, NULL, "GPL", insns, 3, NULL);

	CHECK_MSG(fd >= 0, "loading a foreign program: %s", strerror(errno));
	return fd;
}

TEST(a_foreign_program_without_a_name_is_said_to_have_none)
{
	char cg[4096], args[4200], out[16384], err[4096];
	int cg_fd, prog;

	need_v2();
	CHECK(!scratch_cgroup_create(scratch_cgroup2_root(), cg, sizeof(cg)));
	cg_fd = open(cg, O_RDONLY | O_DIRECTORY);
	CHECK(cg_fd >= 0);
	prog = unnamed_prog();
	CHECK(!bpf_prog_attach(prog, cg_fd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI));
	snprintf(args, sizeof(args), "show '%s'", cg);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 0);
	CHECK_MSG(strstr(out, " (no name) ") && !strstr(out, "()"), "%s", out);
	snprintf(args, sizeof(args), "check '%s' c 1:3 r", cg);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 3);
	CHECK_MSG(strstr(err, "(no name) applies") && !strstr(err, "()"), "%s", err);
	close(prog);
	close(cg_fd);
}

TEST(refusing_the_v1_devices_root_advises_no_command_that_refuses_it)
{
	const char *root = scratch_devices_root();
	char args[4200], out[4096], err[4096], cg[4096];

	if (geteuid() != 0)
		SKIP("needs root");
	if (!root)
		SKIP("no cgroup v1 devices hierarchy");
	snprintf(args, sizeof(args), "replace '%s' 'deny a'", root);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 1);
	CHECK_MSG(!strstr(err, "--v1") && strstr(err, "name a child cgroup"), "%s", err);
	/* the advised replace --v1 on the root is refused indeed */
	snprintf(args, sizeof(args), "replace --v1 '%s' 'deny a'", root);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 1);
	/* the control: a child cgroup gets the --v1 advice, which works there */
	CHECK(!scratch_cgroup_create(root, cg, sizeof(cg)));
	snprintf(args, sizeof(args), "replace '%s' 'deny a'", cg);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 1);
	CHECK_MSG(strstr(err, "devcg replace --v1 "), "%s", err);
	snprintf(args, sizeof(args), "replace --v1 '%s' 'allow a'", cg);
	CHECK_INT(run(args, out, sizeof(out), err, sizeof(err)), 0);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* doctor's findings from facts made by hand (devcg_doctor_find()): the risks
 * that need a systemd unit or a crun container to happen for real (the
 * systemd one also runs in the systemd guest of make vmtest). */
#include "testutil.h"
#include "internal.h"
#include "integration/doctor.h"

/* A container with devcg's program (and crun's when CRUN) and one node,
 * /dev/x c 240:0, that every layer allows with rwm. */
static struct devcg_doctor_result *facts(bool crun, const char *unit)
{
	struct devcg_doctor_result *r = devcg_doctor_new();
	struct devcg_doctor_layer l = { .kind = "v2", .owner = "devcg", .prog_id = 10, .where = "/ctr" };
	struct devcg_doctor_node n = { .path = "/dev/x", .present = true, .type = DEVCG_CHAR, .major = 240,
				       .minor = 0, .mode = 0666 };
	struct devcg_error err = { 0 };

	CHECK(r != NULL);
	r->pid = 42;
	snprintf(r->cgroup, sizeof(r->cgroup), "/ctr");
	snprintf(r->unit, sizeof(r->unit), "%s", unit ? unit : "");
	CHECK_INT(devcg_doctor_add_layer(r, &l, &err), 0);
	if (crun) {
		snprintf(l.owner, sizeof(l.owner), "crun");
		l.prog_id = 11;
		CHECK_INT(devcg_doctor_add_layer(r, &l, &err), 0);
	}
	for (size_t k = 0; k < r->nlayers; k++)
		for (int a = 0; a < 3; a++)
			n.decision[k][a] = 1;
	for (int a = 0; a < 3; a++)
		n.allowed[a] = 1;
	CHECK_INT(devcg_doctor_add_node(r, &n, &err), 0);
	return r;
}

TEST(doctor_a_node_allowed_now_that_the_units_device_allow_lacks_is_revoked_on_reload)
{
	struct devcg_doctor_result *r = facts(false, "ctr.scope");
	struct devcg_policy *unit = POLICY_OF("deny a\nallow c 1:3 rwm\n");
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_doctor_find(r, unit, &err), 0);
	CHECK_INT(r->nfindings, 1);
	CHECK_STR(r->findings[0].id, "systemd-reload");
	CHECK_INT(r->findings[0].access, DEVCG_ACC_ALL);
	CHECK_STR(r->findings[0].fix, "systemctl set-property --runtime ctr.scope DeviceAllow='/dev/x rwm'");
	CHECK(strstr(r->findings[0].message, "daemon-reload") != NULL);
	devcg_doctor_result_free(r);
	devcg_policy_free(unit);
}

TEST(doctor_control_a_unit_whose_device_allow_holds_the_node_is_no_finding)
{
	struct devcg_doctor_result *r = facts(false, "ctr.scope");
	struct devcg_policy *unit = POLICY_OF("deny a\nallow c 1:3 rwm\nallow c 240:0 rwm\n");
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_doctor_find(r, unit, &err), 0);
	CHECK_INT(r->nfindings, 0);
	devcg_doctor_result_free(r);
	devcg_policy_free(unit);
}

TEST(doctor_a_unit_that_holds_only_r_of_an_rwm_node_loses_w_and_m_on_reload)
{
	struct devcg_doctor_result *r = facts(false, "ctr.scope");
	struct devcg_policy *unit = POLICY_OF("deny a\nallow c 240:0 r\n");
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_doctor_find(r, unit, &err), 0);
	CHECK_INT(r->nfindings, 1);
	CHECK_INT(r->findings[0].access, DEVCG_ACC_WRITE | DEVCG_ACC_MKNOD);
	devcg_doctor_result_free(r);
	devcg_policy_free(unit);
}

TEST(doctor_cruns_program_beside_devcgs_is_a_runtime_reinstall_finding)
{
	struct devcg_doctor_result *r = facts(true, NULL);
	struct devcg_error err = { 0 };

	CHECK_INT(devcg_doctor_find(r, NULL, &err), 0);
	CHECK_INT(r->nfindings, 1);
	CHECK_STR(r->findings[0].id, "runtime-reinstall");
	CHECK(strstr(r->findings[0].message, "crun's program 11") != NULL);
	devcg_doctor_result_free(r);
}

TEST(doctor_control_cruns_program_alone_is_no_runtime_reinstall_finding)
{
	struct devcg_doctor_result *r = facts(false, NULL);
	struct devcg_error err = { 0 };

	snprintf(((struct devcg_doctor_layer *)r->layers)[0].owner, 16, "crun");
	CHECK_INT(devcg_doctor_find(r, NULL, &err), 0);
	CHECK_INT(r->nfindings, 0);
	devcg_doctor_result_free(r);
}

TEST(doctor_a_gpu_named_nvidia_ctl_or_uvm_is_no_gpu_and_nvidia10_is_one)
{
	struct devcg_doctor_result *r = devcg_doctor_new();
	struct devcg_doctor_node n = { .present = true, .type = DEVCG_CHAR, .major = 195, .allowed = { 1, 1, 1 } };
	struct devcg_error err = { 0 };

	CHECK(r != NULL);
	snprintf(n.path, sizeof(n.path), "/dev/nvidia-uvm-tools");
	CHECK_INT(devcg_doctor_add_node(r, &n, &err), 0);
	snprintf(n.path, sizeof(n.path), "/dev/nvidia0x");
	CHECK_INT(devcg_doctor_add_node(r, &n, &err), 0);
	CHECK_INT(devcg_doctor_find(r, NULL, &err), 0);
	CHECK_INT(r->nfindings, 0);
	snprintf(n.path, sizeof(n.path), "/dev/nvidia10");
	CHECK_INT(devcg_doctor_add_node(r, &n, &err), 0);
	CHECK_INT(devcg_doctor_find(r, NULL, &err), 0);
	CHECK_INT(r->nfindings, 2); /* nvidiactl and nvidia-uvm */
	CHECK_STR(r->findings[0].id, "companion-missing");
	devcg_doctor_result_free(r);
}

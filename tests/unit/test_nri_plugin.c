// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg-nri's plugin against a fake runtime over a socketpair
 * (nri_fake.c): registration, Configure's subscription, Synchronize and the
 * events, the calls it answers without acting, Shutdown, --strict. */
#include "harness.h"
#include "nri_fake.h"

#include <errno.h>
#include <poll.h>

#define EV(x) NRI__PKG__API__V1ALPHA1__EVENT__##x

typedef Nri__Pkg__Api__V1alpha1__Container Container;
typedef Nri__Pkg__Api__V1alpha1__PodSandbox PodSandbox;
typedef Nri__Pkg__Api__V1alpha1__LinuxContainer LinuxContainer;
typedef Nri__Pkg__Api__V1alpha1__LinuxDevice LinuxDevice;
typedef Nri__Pkg__Api__V1alpha1__LinuxResources LinuxResources;
typedef Nri__Pkg__Api__V1alpha1__LinuxDeviceCgroup LinuxDeviceCgroup;
typedef Nri__Pkg__Api__V1alpha1__OptionalInt64 OptionalInt64;

static void shutdown_plugin(struct fake *f)
{
	Nri__Pkg__Api__V1alpha1__Empty e = NRI__PKG__API__V1ALPHA1__EMPTY__INIT;

	CHECK_INT(fake_call_code(f, "Shutdown", &e.base), 0);
	CHECK_INT(fake_join(f), 0);
}

/* A StateChange of EVENT for a container with a GPU and the rules
 * "allow c 195:* rw" (no minor) and "deny a" (no major, no minor). */
static int state_change(struct fake *f, int event, const char *id)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent e = NRI__PKG__API__V1ALPHA1__STATE_CHANGE_EVENT__INIT;
	PodSandbox pod;
	Container c;
	LinuxContainer lx = NRI__PKG__API__V1ALPHA1__LINUX_CONTAINER__INIT;
	LinuxDevice dev = NRI__PKG__API__V1ALPHA1__LINUX_DEVICE__INIT, *devs[] = { &dev };
	LinuxResources res = NRI__PKG__API__V1ALPHA1__LINUX_RESOURCES__INIT;
	LinuxDeviceCgroup r1 = NRI__PKG__API__V1ALPHA1__LINUX_DEVICE_CGROUP__INIT;
	LinuxDeviceCgroup r2 = NRI__PKG__API__V1ALPHA1__LINUX_DEVICE_CGROUP__INIT, *rules[] = { &r1, &r2 };
	OptionalInt64 major = NRI__PKG__API__V1ALPHA1__OPTIONAL_INT64__INIT;

	fake_pod(&pod, "pod-1", "web");
	fake_container(&c, id, "pod-1", 4242);
	dev.path = "/dev/nvidia0";
	dev.type = "c";
	dev.major = 195;
	dev.minor = 0;
	major.value = 195;
	r1.allow = true;
	r1.type = "c";
	r1.major = &major;
	r1.access = "rw";
	r2.allow = false;
	r2.type = "a";
	res.n_devices = 2;
	res.devices = rules;
	lx.n_devices = 1;
	lx.devices = devs;
	lx.resources = &res;
	c.linux_container = &lx;
	e.event = event;
	e.pod = &pod;
	e.container = &c;
	return fake_call_code(f, "StateChange", &e.base);
}

TEST(nri_plugin_registers_first_as_devcg_index_10_on_the_runtime_connection)
{
	struct fake f;

	/* fake_start checks the call: connection 2, Runtime.RegisterPlugin, devcg, 10 */
	fake_start(&f, false, true);
	shutdown_plugin(&f);
	CHECK(strstr(fake_log, "registered as 10-devcg\n"));
}

TEST(nri_configure_subscribes_to_start_post_update_and_remove_container)
{
	Nri__Pkg__Api__V1alpha1__ConfigureRequest req = NRI__PKG__API__V1ALPHA1__CONFIGURE_REQUEST__INIT;
	Nri__Pkg__Api__V1alpha1__ConfigureResponse *resp;
	struct fake f;
	Ttrpc__Response *r;

	fake_start(&f, false, true);
	req.runtime_name = "containerd";
	req.runtime_version = "1.7.24";
	r = fake_answer(&f, fake_call(&f, "nri.pkg.api.v1alpha1.Plugin", "Configure", &req.base));
	CHECK(!r->status || !r->status->code);
	resp = nri__pkg__api__v1alpha1__configure_response__unpack(NULL, r->payload.len, r->payload.data);
	CHECK(resp);
	/* NRI's mask: bit EVENT - 1 (START_CONTAINER 6, POST_UPDATE_CONTAINER 9, REMOVE_CONTAINER 11) */
	CHECK_INT(resp->events, 1 << 5 | 1 << 8 | 1 << 10);
	CHECK_INT(resp->events, 0x520);
	nri__pkg__api__v1alpha1__configure_response__free_unpacked(resp, NULL);
	ttrpc__response__free_unpacked(r, NULL);
	shutdown_plugin(&f);
	CHECK(strstr(fake_log, "configured by containerd 1.7.24"));
}

TEST(nri_synchronize_starts_every_running_container_with_its_own_pod)
{
	Nri__Pkg__Api__V1alpha1__SynchronizeRequest req = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_REQUEST__INIT;
	PodSandbox p1, p2, *pods[] = { &p1, &p2 };
	Container c1, c2, c3, *cs[] = { &c1, &c2, &c3 };
	struct fake f;

	fake_pod(&p1, "pod-1", "web");
	fake_pod(&p2, "pod-2", "db");
	p2.namespace_ = "prod";
	p2.runtime_handler = "";
	fake_container(&c1, "c1", "pod-1", 100);
	fake_container(&c2, "c2", "pod-2", 200);
	c2.name = "postgres";
	/* a stopped container: no process, nothing to keep */
	fake_container(&c3, "c3", "pod-2", 0);
	c3.state = NRI__PKG__API__V1ALPHA1__CONTAINER_STATE__CONTAINER_STOPPED;
	req.n_pods = 2;
	req.pods = pods;
	req.n_containers = 3;
	req.containers = cs;
	fake_start(&f, false, true);
	CHECK_INT(fake_call_code(&f, "Synchronize", &req.base), 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 3);
	CHECK_STR(f.calls[0].action, "start");
	CHECK_STR(f.calls[0].id, "c1");
	CHECK_STR(f.calls[0].name, "app");
	CHECK_STR(f.calls[0].pod_name, "web");
	CHECK_STR(f.calls[0].pod_namespace, "default");
	CHECK_STR(f.calls[0].pod_uid, "uid-of-pod");
	CHECK_STR(f.calls[0].handler, "crun");
	CHECK_INT(f.calls[0].pid, 100);
	/* then what is remembered of any other container goes: all three
	 * named, the stopped one too (it still exists) */
	CHECK_STR(f.calls[2].action, "synced");
	CHECK_STR(f.calls[2].id, "c1,c2,c3");
	CHECK(strstr(fake_log, "synchronize: forgot 1 container\nsynchronize: done\n"));
	CHECK_STR(f.calls[1].action, "start");
	CHECK_STR(f.calls[1].id, "c2");
	CHECK_STR(f.calls[1].name, "postgres");
	CHECK_STR(f.calls[1].pod_name, "db");
	CHECK_STR(f.calls[1].pod_namespace, "prod");
	CHECK_STR(f.calls[1].handler, "(null)"); /* empty: unknown */
	CHECK_INT(f.calls[1].pid, 200);
	CHECK(strstr(fake_log, "sync c1 (default/web app): recorded, cgroup kubepods/pod1/c1\n"));
}

TEST(nri_start_container_calls_start_with_devices_and_rules_absent_numbers_minus_one)
{
	struct fake f;
	struct fake_call *c = &f.calls[0];

	fake_start(&f, false, true);
	CHECK_INT(state_change(&f, EV(START_CONTAINER), "c1"), 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 1);
	CHECK_STR(c->action, "start");
	CHECK_STR(c->id, "c1");
	CHECK_STR(c->pod_name, "web");
	CHECK_INT(c->pid, 4242);
	CHECK_INT(c->ndevices, 1);
	CHECK_STR(c->devices[0].path, "/dev/nvidia0");
	CHECK_INT(c->devices[0].type, 'c');
	CHECK_INT(c->devices[0].major, 195);
	CHECK_INT(c->devices[0].minor, 0);
	CHECK_INT(c->nrules, 2);
	CHECK(c->rules[0].allow);
	CHECK_INT(c->rules[0].type, 'c');
	CHECK_INT(c->rules[0].major, 195);
	CHECK_INT(c->rules[0].minor, -1);
	CHECK_STR(c->rules[0].access, "rw");
	CHECK(!c->rules[1].allow);
	CHECK_INT(c->rules[1].type, 'a');
	CHECK_INT(c->rules[1].major, -1);
	CHECK_INT(c->rules[1].minor, -1);
	CHECK_STR(c->rules[1].access, "");
}

TEST(nri_post_update_container_calls_updated)
{
	struct fake f;

	fake_start(&f, false, true);
	CHECK_INT(state_change(&f, EV(POST_UPDATE_CONTAINER), "c1"), 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 1);
	CHECK_STR(f.calls[0].action, "updated");
	CHECK_STR(f.calls[0].id, "c1");
}

TEST(nri_remove_container_calls_removed)
{
	struct fake f;

	fake_start(&f, false, true);
	CHECK_INT(state_change(&f, EV(REMOVE_CONTAINER), "c1"), 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 1);
	CHECK_STR(f.calls[0].action, "removed");
	CHECK_STR(f.calls[0].id, "c1");
}

TEST(nri_an_event_not_subscribed_is_answered_and_calls_no_handler)
{
	struct fake f;

	fake_start(&f, false, true);
	CHECK_INT(state_change(&f, EV(STOP_CONTAINER), "c1"), 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 0);
}

TEST(nri_create_update_and_stop_container_get_empty_answers_and_call_no_handler)
{
	static const char *const methods[] = { "CreateContainer", "UpdateContainer", "StopContainer" };
	struct fake f;

	fake_start(&f, false, true);
	for (size_t i = 0; i < 3; i++) {
		Ttrpc__Response *r = fake_answer(&f, fake_call_raw(&f, methods[i], "", 0));

		CHECK_MSG(!r->status || !r->status->code, "%s answered an error", methods[i]);
		CHECK_INT(r->payload.len, 0);
		ttrpc__response__free_unpacked(r, NULL);
	}
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 0);
}

TEST(nri_a_request_before_the_registration_is_answered_is_served)
{
	uint32_t conn, stream;
	uint8_t type;
	size_t len;
	struct fake f;

	/* containerd calls the plugin as soon as it took the registration,
	 * before its answer: the registration is read and left unanswered */
	fake_start(&f, false, false);
	free(fake_read(&f, &conn, &stream, &type, &len));
	CHECK_INT(conn, NRI_CONN_RUNTIME);
	CHECK_INT(state_change(&f, EV(START_CONTAINER), "c1"), 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 1);
}

TEST(nri_a_message_split_over_mux_frames_and_two_in_one_frame_are_read_whole)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent e = NRI__PKG__API__V1ALPHA1__STATE_CHANGE_EVENT__INIT;
	Ttrpc__Request req = TTRPC__REQUEST__INIT;
	Container c;
	uint8_t payload[256], msg[600], *p = msg;
	size_t plen, rlen;
	struct fake f;

	fake_container(&c, "c1", "pod-1", 7);
	e.event = EV(START_CONTAINER);
	e.container = &c;
	plen = protobuf_c_message_pack(&e.base, payload);
	req.service = "nri.pkg.api.v1alpha1.Plugin";
	req.method = "StateChange";
	req.payload.data = payload;
	req.payload.len = plen;
	rlen = protobuf_c_message_get_packed_size(&req.base);
	/* two ttrpc messages (streams 1 and 3) back to back */
	for (uint32_t stream = 1; stream <= 3; stream += 2) {
		p[0] = 0, p[1] = 0, p[2] = rlen >> 8, p[3] = rlen;
		p[4] = 0, p[5] = 0, p[6] = 0, p[7] = stream, p[8] = NRI_TTRPC_REQUEST, p[9] = 0;
		protobuf_c_message_pack(&req.base, p + 10);
		p += 10 + rlen;
	}
	fake_start(&f, false, true);
	/* the first message in 3 frames (its header cut too), the second's start in the third */
	fake_send_frame(&f, NRI_CONN_PLUGIN, msg, 4);
	fake_send_frame(&f, NRI_CONN_PLUGIN, msg + 4, 9);
	fake_send_frame(&f, NRI_CONN_PLUGIN, msg + 13, (size_t)(p - msg) - 13);
	ttrpc__response__free_unpacked(fake_answer(&f, 1), NULL);
	ttrpc__response__free_unpacked(fake_answer(&f, 3), NULL);
	f.next_stream = 5;
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 2);
	CHECK_STR(f.calls[1].id, "c1");
	CHECK_INT(f.calls[1].pid, 7);
}

TEST(nri_a_handler_error_is_logged_with_id_and_name_and_answered_success_by_default)
{
	struct fake f;

	fake_start(&f, false, true);
	f.fail = -EIO;
	CHECK_INT(state_change(&f, EV(START_CONTAINER), "c1"), 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 1);
	CHECK(strstr(fake_log, "start c1 (default/web app): failed: the test's handler fails\n"));
}

TEST(nri_the_runtime_is_answered_before_a_slow_handler_ends_without_strict)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent e = NRI__PKG__API__V1ALPHA1__STATE_CHANGE_EVENT__INIT;
	struct pollfd pfd;
	Container c;
	uint32_t stream;
	int block[2];
	struct fake f;

	/* containerd gives a plugin 2 s a request and closes one that takes
	 * longer: the handler here waits until the test has the answer (the
	 * poll's 60 s only keeps a plugin that answers after its handler from
	 * hanging the test) */
	CHECK_INT(pipe(block), 0);
	fake_container(&c, "c1", "pod-1", 7);
	e.event = EV(POST_UPDATE_CONTAINER);
	e.container = &c;
	fake_start(&f, false, true);
	f.block_fd = block[0];
	stream = fake_call(&f, "nri.pkg.api.v1alpha1.Plugin", "StateChange", &e.base);
	pfd = (struct pollfd){ .fd = f.rt, .events = POLLIN };
	CHECK_MSG(poll(&pfd, 1, 60000) == 1, "no answer while the handler runs");
	ttrpc__response__free_unpacked(fake_answer(&f, stream), NULL);
	CHECK_INT(f.ncalls, 0);
	CHECK_INT(write(block[1], "x", 1), 1);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 1);
	close(block[0]);
	close(block[1]);
}

TEST(nri_a_handler_error_is_the_runtimes_error_with_strict)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent e = NRI__PKG__API__V1ALPHA1__STATE_CHANGE_EVENT__INIT;
	Container c;
	Ttrpc__Response *r;
	struct fake f;

	fake_container(&c, "c1", "pod-1", 7);
	e.event = EV(START_CONTAINER);
	e.container = &c;
	fake_start(&f, true, true);
	f.fail = -EIO;
	r = fake_answer(&f, fake_call(&f, "nri.pkg.api.v1alpha1.Plugin", "StateChange", &e.base));
	CHECK(r->status && r->status->code != 0);
	CHECK_STR(r->status->message, "start c1: the test's handler fails");
	ttrpc__response__free_unpacked(r, NULL);
	shutdown_plugin(&f);
}

TEST(nri_a_device_of_an_unknown_type_fails_the_container_without_a_handler_call)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent e = NRI__PKG__API__V1ALPHA1__STATE_CHANGE_EVENT__INIT;
	Container c;
	LinuxContainer lx = NRI__PKG__API__V1ALPHA1__LINUX_CONTAINER__INIT;
	LinuxDevice dev = NRI__PKG__API__V1ALPHA1__LINUX_DEVICE__INIT, *devs[] = { &dev };
	struct fake f;

	fake_container(&c, "c1", "pod-1", 7);
	dev.path = "/dev/x";
	dev.type = "cb";
	lx.n_devices = 1;
	lx.devices = devs;
	c.linux_container = &lx;
	e.event = EV(START_CONTAINER);
	e.container = &c;
	fake_start(&f, true, true);
	CHECK(fake_call_code(&f, "StateChange", &e.base) != 0);
	shutdown_plugin(&f);
	CHECK_INT(f.ncalls, 0);
	CHECK(strstr(fake_log, "start c1 (app): failed: device /dev/x: type 'cb' is none of c, b, u, p\n"));
}

TEST(nri_a_container_name_with_a_line_break_is_escaped_in_its_log_line)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent e = NRI__PKG__API__V1ALPHA1__STATE_CHANGE_EVENT__INIT;
	Container c;
	struct fake f;

	fake_container(&c, "c1", "pod-1", 7);
	c.name = "app\nstart c2 (forged): recorded";
	e.event = EV(START_CONTAINER);
	e.container = &c;
	fake_start(&f, false, true);
	CHECK_INT(fake_call_code(&f, "StateChange", &e.base), 0);
	shutdown_plugin(&f);
	CHECK(strstr(fake_log, "start c1 (app\\x0astart c2 (forged): recorded): recorded, cgroup kubepods/pod1/c1\n"));
	CHECK(!strstr(fake_log, "\nstart c2"));
}

TEST(nri_a_refused_registration_ends_the_connection_with_eacces)
{
	Ttrpc__Response resp = TTRPC__RESPONSE__INIT;
	Ttrpc__Status st = TTRPC__STATUS__INIT;
	uint8_t *req, buf[256];
	uint32_t conn, stream;
	uint8_t type;
	size_t len;
	struct fake f;

	fake_start(&f, false, false);
	req = fake_read(&f, &conn, &stream, &type, &len);
	free(req);
	st.code = 3;
	st.message = "invalid plugin index";
	resp.status = &st;
	len = protobuf_c_message_pack(&resp.base, buf);
	fake_send_ttrpc(&f, NRI_CONN_RUNTIME, stream, NRI_TTRPC_RESPONSE, buf, len);
	CHECK_INT(fake_join(&f), -EACCES);
	CHECK(strstr(fake_log, "the runtime refused to register 10-devcg: invalid plugin index\n"));
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Bytes that break NRI's protocol (mux frames, ttrpc messages, protobuf):
 * a clear log line and the connection closed (nri_plugin_serve returns
 * -EPROTO, the runtime's end reads EOF), no handler called; an unknown
 * method is answered with ttrpc's UNIMPLEMENTED and the connection stays. */
#include "harness.h"
#include "nri_fake.h"

#include <errno.h>
#include <sys/socket.h>
#include <unistd.h>

/* The plugin ended with -EPROTO, closed its end, called no handler, and
 * logged LINE. */
static void closed_with(struct fake *f, const char *line)
{
	char c;

	CHECK_INT(read(f->rt, &c, 1), 0);
	CHECK_INT(fake_join(f), -EPROTO);
	CHECK_INT(f->ncalls, 0);
	CHECK_MSG(strstr(fake_log, line), "no line '%s' in the log:\n%s", line, fake_log);
}

static void be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

TEST(nri_a_mux_frame_longer_than_16_mib_closes_the_connection)
{
	uint8_t hdr[8];
	struct fake f;

	fake_start(&f, false, true);
	be32(hdr, NRI_CONN_PLUGIN);
	be32(hdr + 4, NRI_MUX_MAX_PAYLOAD + 1);
	CHECK_INT(write(f.rt, hdr, sizeof(hdr)), 8);
	closed_with(&f, "protocol error: frame of 16777217 bytes on connection 1, more than the 16777216 "
			"allowed: closing the connection\n");
}

TEST(nri_a_mux_frame_of_16_mib_is_within_the_bound)
{
	uint8_t hdr[8];
	struct fake f;

	/* the bound is NRI's: a frame of exactly 1 << 24 is read (its ttrpc
	 * header then says 4 MiB + 1: that message is what is refused) */
	fake_start(&f, false, true);
	be32(hdr, NRI_CONN_PLUGIN);
	be32(hdr + 4, NRI_MUX_MAX_PAYLOAD);
	CHECK_INT(write(f.rt, hdr, sizeof(hdr)), 8);
	be32(hdr, NRI_TTRPC_MAX + 1);
	CHECK_INT(write(f.rt, hdr, 4), 4);
	CHECK_INT(write(f.rt, "\0\0\0\1\1\0", 6), 6);
	closed_with(&f, "protocol error: ttrpc message of 4194305 bytes");
	CHECK(!strstr(fake_log, "frame of"));
}

TEST(nri_a_truncated_frame_then_eof_closes_with_a_log_line)
{
	/* a frame of 100 bytes, 20 sent: a ttrpc header (90 bytes to come) and 10 */
	uint8_t hdr[8], part[20] = { 0, 0, 0, 90, 0, 0, 0, 1, NRI_TTRPC_REQUEST, 0 };
	struct fake f;

	fake_start(&f, false, true);
	be32(hdr, NRI_CONN_PLUGIN);
	be32(hdr + 4, 100);
	CHECK_INT(write(f.rt, hdr, sizeof(hdr)), 8);
	CHECK_INT(write(f.rt, part, sizeof(part)), 20);
	CHECK_INT(shutdown(f.rt, SHUT_WR), 0);
	closed_with(&f, "protocol error: the connection ended inside a frame (its payload): closing it\n");
}

TEST(nri_a_truncated_frame_header_then_eof_closes_with_a_log_line)
{
	struct fake f;

	fake_start(&f, false, true);
	CHECK_INT(write(f.rt, "\0\0\0\1\0", 5), 5);
	CHECK_INT(shutdown(f.rt, SHUT_WR), 0);
	closed_with(&f, "protocol error: the connection ended inside a frame (its header): closing it\n");
}

TEST(nri_a_ttrpc_message_cut_at_a_frame_boundary_then_eof_closes)
{
	uint8_t msg[12] = { 0, 0, 0, 50, 0, 0, 0, 1, NRI_TTRPC_REQUEST, 0, 0x0a, 0x03 };
	struct fake f;

	/* whole frames, but the ttrpc message they carry is 50 bytes, 2 sent */
	fake_start(&f, false, true);
	fake_send_frame(&f, NRI_CONN_PLUGIN, msg, sizeof(msg));
	CHECK_INT(shutdown(f.rt, SHUT_WR), 0);
	closed_with(&f, "protocol error: the connection ended inside a ttrpc message on connection 1: closing it\n");
}

TEST(nri_a_ttrpc_message_longer_than_4_mib_closes_the_connection)
{
	uint8_t msg[10] = { 0, 0, 0, 0, 0, 0, 0, 1, NRI_TTRPC_REQUEST, 0 };
	struct fake f;

	be32(msg, NRI_TTRPC_MAX + 1);
	fake_start(&f, false, true);
	fake_send_frame(&f, NRI_CONN_PLUGIN, msg, sizeof(msg));
	closed_with(&f, "protocol error: ttrpc message of 4194305 bytes on connection 1 (stream 1), more than "
			"the 4194304 allowed: closing the connection\n");
}

TEST(nri_a_garbage_ttrpc_request_closes_the_connection)
{
	/* field 1, length 127: past the message's end */
	static const uint8_t garbage[] = { 0x0a, 0x7f, 'x', 'y' };
	struct fake f;

	fake_start(&f, false, true);
	fake_send_ttrpc(&f, NRI_CONN_PLUGIN, 1, NRI_TTRPC_REQUEST, garbage, sizeof(garbage));
	closed_with(&f, "protocol error: malformed ttrpc request (4 bytes) on stream 1: closing the connection\n");
}

TEST(nri_a_garbage_synchronize_payload_closes_before_any_handler)
{
	static const uint8_t garbage[] = { 0x12, 0x7f, 0x0a };
	struct fake f;

	fake_start(&f, false, true);
	fake_call_raw(&f, "Synchronize", garbage, sizeof(garbage));
	closed_with(&f, "protocol error: malformed Synchronize request (3 bytes) on stream 1: closing the "
			"connection\n");
}

TEST(nri_a_garbage_state_change_payload_closes_before_any_handler)
{
	static const uint8_t garbage[] = { 0x1a, 0x05, 0x0a, 0x10, 'c' };
	struct fake f;

	fake_start(&f, false, true);
	fake_call_raw(&f, "StateChange", garbage, sizeof(garbage));
	closed_with(&f, "protocol error: malformed StateChange request (5 bytes) on stream 1: closing the "
			"connection\n");
}

TEST(nri_a_frame_for_an_unknown_connection_id_closes_the_connection)
{
	struct fake f;

	fake_start(&f, false, true);
	fake_send_frame(&f, 3, "\0\0\0\0\0\0\0\1\1\0", 10);
	closed_with(&f, "protocol error: frame for connection 3, which NRI does not open (1 plugin, 2 runtime): "
			"closing the connection\n");
}

TEST(nri_a_response_on_the_plugins_connection_closes_the_connection)
{
	struct fake f;

	fake_start(&f, false, true);
	fake_send_ttrpc(&f, NRI_CONN_PLUGIN, 1, NRI_TTRPC_RESPONSE, "", 0);
	closed_with(&f, "protocol error: ttrpc message of type 2 on the plugin's connection (stream 1), not a "
			"request: closing the connection\n");
}

TEST(nri_a_second_registration_answer_closes_the_connection)
{
	struct fake f;

	fake_start(&f, false, true);
	fake_send_ttrpc(&f, NRI_CONN_RUNTIME, 1, NRI_TTRPC_RESPONSE, "", 0);
	closed_with(&f, "protocol error: unexpected ttrpc message of type 2 on the runtime's connection "
			"(stream 1): closing the connection\n");
}

TEST(nri_an_unknown_method_is_answered_unimplemented_and_the_connection_stays)
{
	Nri__Pkg__Api__V1alpha1__Empty e = NRI__PKG__API__V1ALPHA1__EMPTY__INIT;
	Ttrpc__Response *r;
	struct fake f;

	fake_start(&f, false, true);
	r = fake_answer(&f, fake_call_raw(&f, "UpdatePodSandbox", "", 0));
	CHECK(r->status);
	CHECK_INT(r->status->code, 12); /* google.rpc.Code UNIMPLEMENTED */
	CHECK_STR(r->status->message, "nri.pkg.api.v1alpha1.Plugin.UpdatePodSandbox is not implemented by devcg-nri");
	ttrpc__response__free_unpacked(r, NULL);
	/* still served */
	CHECK_INT(fake_call_code(&f, "Shutdown", &e.base), 0);
	CHECK_INT(fake_join(&f), 0);
	CHECK_INT(f.ncalls, 0);
	CHECK(strstr(fake_log, "the runtime called nri.pkg.api.v1alpha1.Plugin.UpdatePodSandbox, which devcg-nri "
			       "does not serve: answered unimplemented\n"));
}

TEST(nri_an_unknown_service_is_answered_unimplemented)
{
	Nri__Pkg__Api__V1alpha1__Empty e = NRI__PKG__API__V1ALPHA1__EMPTY__INIT;
	Ttrpc__Response *r;
	struct fake f;

	fake_start(&f, false, true);
	r = fake_answer(&f, fake_call(&f, "nri.pkg.api.v1alpha1.Runtime", "Synchronize", &e.base));
	CHECK(r->status);
	CHECK_INT(r->status->code, 12);
	ttrpc__response__free_unpacked(r, NULL);
	CHECK_INT(fake_call_code(&f, "Shutdown", &e.base), 0);
	CHECK_INT(fake_join(&f), 0);
	CHECK_INT(f.ncalls, 0);
}

TEST(nri_the_runtime_closing_between_messages_is_a_clean_end)
{
	struct fake f;

	fake_start(&f, false, true);
	CHECK_INT(shutdown(f.rt, SHUT_WR), 0);
	CHECK_INT(fake_join(&f), 0);
	CHECK(strstr(fake_log, "the runtime closed the connection\n"));
}

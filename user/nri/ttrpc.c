// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* ttrpc messages on one logical connection: a 10-byte header (length,
 * stream id, type, flags), then LENGTH bytes of protobuf. The length is
 * bounded before anything is allocated for it. */
#include "nri.h"
#include "ttrpc.pb-c.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

void nri_ttrpc_reset(struct nri_ttrpc_stream *s)
{
	free(s->msg);
	memset(s, 0, sizeof(*s));
}

bool nri_ttrpc_partial(const struct nri_ttrpc_stream *s)
{
	return s->hdr_got > 0;
}

int nri_ttrpc_feed(struct nri_ttrpc_stream *s, uint32_t conn, const uint8_t *buf, size_t len,
		   nri_ttrpc_fn fn, void *ctx)
{
	while (len) {
		size_t n;

		if (s->hdr_got < NRI_TTRPC_HEADER) {
			n = NRI_TTRPC_HEADER - s->hdr_got;
			n = n < len ? n : len;
			memcpy(s->hdr + s->hdr_got, buf, n);
			s->hdr_got += n, buf += n, len -= n;
			if (s->hdr_got < NRI_TTRPC_HEADER)
				break;
			s->len = be32(s->hdr);
			s->stream_id = be32(s->hdr + 4);
			s->type = s->hdr[8];
			s->flags = s->hdr[9];
			if (s->len > NRI_TTRPC_MAX) {
				nri_log(NRI_LOG_ERR,
					"protocol error: ttrpc message of %u bytes on connection %u (stream %u), "
					"more than the %u allowed: closing the connection",
					s->len, conn, s->stream_id, NRI_TTRPC_MAX);
				return -EPROTO;
			}
			s->msg = malloc(s->len ? s->len : 1);
			if (!s->msg) {
				nri_log(NRI_LOG_ERR, "cannot read a ttrpc message of %u bytes: %s", s->len,
					strerror(ENOMEM));
				return -ENOMEM;
			}
			s->msg_got = 0;
		}
		n = s->len - s->msg_got;
		n = n < len ? n : len;
		memcpy(s->msg + s->msg_got, buf, n);
		s->msg_got += n, buf += n, len -= n;
		if (s->msg_got == s->len) {
			uint8_t *msg = s->msg;
			uint32_t mlen = s->len, id = s->stream_id;
			uint8_t type = s->type, flags = s->flags;
			int ret;

			s->msg = NULL;
			nri_ttrpc_reset(s);
			ret = fn(ctx, conn, id, type, flags, msg, mlen);
			free(msg);
			if (ret < 0)
				return ret;
		}
	}
	return 0;
}

static int frame(uint32_t stream_id, uint8_t type, const ProtobufCMessage *m, uint8_t **out, size_t *outlen)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf;

	if (n > NRI_TTRPC_MAX)
		return -EMSGSIZE;
	buf = malloc(NRI_TTRPC_HEADER + n);
	if (!buf)
		return -ENOMEM;
	put_be32(buf, (uint32_t)n);
	put_be32(buf + 4, stream_id);
	buf[8] = type;
	buf[9] = 0;
	protobuf_c_message_pack(m, buf + NRI_TTRPC_HEADER);
	*out = buf;
	*outlen = NRI_TTRPC_HEADER + n;
	return 0;
}

int nri_ttrpc_pack_request(uint32_t stream_id, const char *service, const char *method, const uint8_t *payload,
			   size_t plen, uint8_t **out, size_t *outlen)
{
	Ttrpc__Request req = TTRPC__REQUEST__INIT;

	req.service = (char *)service;
	req.method = (char *)method;
	req.payload.data = (uint8_t *)payload;
	req.payload.len = plen;
	return frame(stream_id, NRI_TTRPC_REQUEST, &req.base, out, outlen);
}

int nri_ttrpc_pack_response(uint32_t stream_id, int32_t code, const char *message, const uint8_t *payload,
			    size_t plen, uint8_t **out, size_t *outlen)
{
	Ttrpc__Response resp = TTRPC__RESPONSE__INIT;
	Ttrpc__Status status = TTRPC__STATUS__INIT;

	if (code || message) {
		status.code = code;
		status.message = (char *)(message ? message : "");
		resp.status = &status;
	}
	resp.payload.data = (uint8_t *)payload;
	resp.payload.len = plen;
	return frame(stream_id, NRI_TTRPC_RESPONSE, &resp.base, out, outlen);
}

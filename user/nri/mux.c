// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* NRI's multiplexed trunk: frames of a 4-byte big-endian connection id and
 * a 4-byte big-endian payload length. Each logical connection is a byte
 * stream (a ttrpc message may span frames, a frame may hold several), so a
 * frame's payload goes to its connection's ttrpc stream as it arrives and
 * no frame is ever held whole. */
#include "nri.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void nri_mux_init(struct nri_mux *m)
{
	memset(m, 0, sizeof(*m));
}

void nri_mux_free(struct nri_mux *m)
{
	nri_ttrpc_reset(&m->streams[0]);
	nri_ttrpc_reset(&m->streams[1]);
	nri_mux_init(m);
}

int nri_mux_feed(struct nri_mux *m, const uint8_t *buf, size_t len, nri_ttrpc_fn fn, void *ctx)
{
	while (len) {
		size_t n;
		int ret;

		if (m->hdr_got < NRI_MUX_HEADER) {
			n = NRI_MUX_HEADER - m->hdr_got;
			n = n < len ? n : len;
			memcpy(m->hdr + m->hdr_got, buf, n);
			m->hdr_got += n, buf += n, len -= n;
			if (m->hdr_got < NRI_MUX_HEADER)
				break;
			m->conn = be32(m->hdr);
			m->left = be32(m->hdr + 4);
			if (m->conn != NRI_CONN_PLUGIN && m->conn != NRI_CONN_RUNTIME) {
				nri_log(NRI_LOG_ERR,
					"protocol error: frame for connection %u, which NRI does not open "
					"(1 plugin, 2 runtime): closing the connection", m->conn);
				return -EPROTO;
			}
			if (m->left > NRI_MUX_MAX_PAYLOAD) {
				nri_log(NRI_LOG_ERR,
					"protocol error: frame of %u bytes on connection %u, more than the %u "
					"allowed: closing the connection", m->left, m->conn, NRI_MUX_MAX_PAYLOAD);
				return -EPROTO;
			}
		}
		n = m->left < len ? m->left : len;
		if (n) {
			ret = nri_ttrpc_feed(&m->streams[m->conn - 1], m->conn, buf, n, fn, ctx);
			if (ret < 0)
				return ret;
			m->left -= n, buf += n, len -= n;
		}
		if (!m->left)
			m->hdr_got = 0;
	}
	return 0;
}

int nri_mux_eof(const struct nri_mux *m)
{
	if (m->hdr_got) {
		nri_log(NRI_LOG_ERR, "protocol error: the connection ended inside a frame (%s): closing it",
			m->hdr_got < NRI_MUX_HEADER ? "its header" : "its payload");
		return -EPROTO;
	}
	for (int i = 0; i < 2; i++) {
		if (nri_ttrpc_partial(&m->streams[i])) {
			nri_log(NRI_LOG_ERR,
				"protocol error: the connection ended inside a ttrpc message on connection %d: "
				"closing it", i + 1);
			return -EPROTO;
		}
	}
	return 0;
}

static int write_all(int fd, const uint8_t *buf, size_t len)
{
	while (len) {
		/* no SIGPIPE when the runtime went away: EPIPE */
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf += n, len -= (size_t)n;
	}
	return 0;
}

int nri_mux_write(int fd, uint32_t conn, const uint8_t *buf, size_t len)
{
	do {
		size_t n = len < NRI_MUX_MAX_PAYLOAD ? len : NRI_MUX_MAX_PAYLOAD;
		uint8_t hdr[NRI_MUX_HEADER] = { conn >> 24, conn >> 16, conn >> 8, conn,
						n >> 24, n >> 16, n >> 8, n };
		int ret = write_all(fd, hdr, sizeof(hdr));

		if (!ret)
			ret = write_all(fd, buf, n);
		if (ret < 0)
			return ret;
		buf += n, len -= n;
	} while (len);
	return 0;
}

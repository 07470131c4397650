// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The fake NRI runtime of the plugin's unit tests (nri_fake.h). */
#include "harness.h"
#include "nri_fake.h"

#include <errno.h>
#include <stdarg.h>
#include <sys/socket.h>
#include <unistd.h>

char fake_log[65536];

static void log_sink(void *ctx, int level, const char *line)
{
	size_t off = strlen(fake_log);

	(void)ctx;
	(void)level;
	snprintf(fake_log + off, sizeof(fake_log) - off, "%s\n", line);
}

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "(null)");
}

static int record(void *ctx, const char *action, const struct nri_container *c, struct nri_outcome *out)
{
	struct fake *f = ctx;
	struct fake_call *r;

	if (f->ncalls == FAKE_MAX_CALLS)
		return -E2BIG;
	if (f->block_fd > 0) {
		char b;

		if (read(f->block_fd, &b, 1) != 1)
			return -EIO;
	}
	r = &f->calls[f->ncalls++];
	copy(r->action, sizeof(r->action), action);
	copy(r->id, sizeof(r->id), c->id);
	copy(r->name, sizeof(r->name), c->name);
	copy(r->pod_name, sizeof(r->pod_name), c->pod_name);
	copy(r->pod_namespace, sizeof(r->pod_namespace), c->pod_namespace);
	copy(r->pod_uid, sizeof(r->pod_uid), c->pod_uid);
	copy(r->handler, sizeof(r->handler), c->runtime_handler);
	r->pid = c->pid;
	r->ndevices = c->ndevices;
	r->nrules = c->nrules;
	for (size_t i = 0; i < c->ndevices && i < FAKE_MAX_ITEMS; i++) {
		copy(r->devices[i].path, sizeof(r->devices[i].path), c->devices[i].path);
		r->devices[i].type = c->devices[i].type;
		r->devices[i].major = c->devices[i].major;
		r->devices[i].minor = c->devices[i].minor;
	}
	for (size_t i = 0; i < c->nrules && i < FAKE_MAX_ITEMS; i++) {
		r->rules[i].allow = c->rules[i].allow;
		r->rules[i].type = c->rules[i].type;
		r->rules[i].major = c->rules[i].major;
		r->rules[i].minor = c->rules[i].minor;
		copy(r->rules[i].access, sizeof(r->rules[i].access), c->rules[i].access);
	}
	if (f->fail) {
		snprintf(out->error, sizeof(out->error), "the test's handler fails");
		return f->fail;
	}
	snprintf(out->cgroup, sizeof(out->cgroup), "kubepods/pod1/%s", c->id);
	snprintf(out->what, sizeof(out->what), "recorded");
	return 0;
}

static int on_start(void *ctx, const struct nri_container *c, struct nri_outcome *out)
{
	return record(ctx, "start", c, out);
}

static int on_updated(void *ctx, const struct nri_container *c, struct nri_outcome *out)
{
	return record(ctx, "updated", c, out);
}

static int on_removed(void *ctx, const struct nri_container *c, struct nri_outcome *out)
{
	return record(ctx, "removed", c, out);
}

/* after Synchronize: one call "synced", its id the IDs joined by ',' */
static int on_synced(void *ctx, const char *const *ids, size_t n, char *msg, size_t len)
{
	struct fake *f = ctx;
	struct fake_call *r;
	size_t off = 0;

	if (f->ncalls == FAKE_MAX_CALLS)
		return -E2BIG;
	r = &f->calls[f->ncalls++];
	memset(r, 0, sizeof(*r));
	copy(r->action, sizeof(r->action), "synced");
	for (size_t i = 0; i < n && off < sizeof(r->id); i++)
		off += (size_t)snprintf(r->id + off, sizeof(r->id) - off, "%s%s", i ? "," : "", ids[i]);
	if (f->fail) {
		snprintf(msg, len, "the test's prune fails");
		return f->fail;
	}
	snprintf(msg, len, "forgot 1 container");
	return 1;
}

static void *serve(void *arg)
{
	struct fake *f = arg;

	f->serve_ret = nri_plugin_serve(f->plugin_fd, &f->opts);
	/* as main.c does: the connection is closed when serve ends */
	close(f->plugin_fd);
	return NULL;
}

static void read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		CHECK_MSG(n > 0, "the plugin's end closed or failed (%zd, %s)", n, strerror(errno));
		p += n, len -= (size_t)n;
	}
}

static void write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		CHECK_MSG(n > 0, "cannot write to the plugin: %s", strerror(errno));
		p += n, len -= (size_t)n;
	}
}

static void put_be32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24, p[1] = v >> 16, p[2] = v >> 8, p[3] = v;
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void fake_send_frame(struct fake *f, uint32_t conn, const void *buf, size_t len)
{
	/* one write: the plugin may close on the header alone */
	uint8_t *frame = malloc(8 + len);

	CHECK(frame);
	put_be32(frame, conn);
	put_be32(frame + 4, (uint32_t)len);
	memcpy(frame + 8, buf, len);
	write_full(f->rt, frame, 8 + len);
	free(frame);
}

void fake_send_ttrpc(struct fake *f, uint32_t conn, uint32_t stream, uint8_t type, const void *buf, size_t len)
{
	uint8_t *msg = malloc(10 + len);

	CHECK(msg);
	put_be32(msg, (uint32_t)len);
	put_be32(msg + 4, stream);
	msg[8] = type;
	msg[9] = 0;
	memcpy(msg + 10, buf, len);
	fake_send_frame(f, conn, msg, 10 + len);
	free(msg);
}

static uint8_t *pack(const ProtobufCMessage *m, size_t *len)
{
	uint8_t *buf;

	*len = m ? protobuf_c_message_get_packed_size(m) : 0;
	buf = malloc(*len + 1);
	CHECK(buf);
	if (m)
		protobuf_c_message_pack(m, buf);
	return buf;
}

static uint32_t call_service(struct fake *f, const char *service, const char *method, const void *payload,
			     size_t plen)
{
	Ttrpc__Request req = TTRPC__REQUEST__INIT;
	uint32_t stream = f->next_stream;
	uint8_t *buf;
	size_t len;

	f->next_stream += 2;
	req.service = (char *)service;
	req.method = (char *)method;
	req.payload.data = (uint8_t *)payload;
	req.payload.len = plen;
	req.timeout_nano = 2000000000;
	buf = pack(&req.base, &len);
	fake_send_ttrpc(f, NRI_CONN_PLUGIN, stream, NRI_TTRPC_REQUEST, buf, len);
	free(buf);
	return stream;
}

uint32_t fake_call(struct fake *f, const char *service, const char *method, const ProtobufCMessage *m)
{
	size_t plen;
	uint8_t *payload = pack(m, &plen);
	uint32_t stream = call_service(f, service, method, payload, plen);

	free(payload);
	return stream;
}

uint32_t fake_call_raw(struct fake *f, const char *method, const void *payload, size_t len)
{
	return call_service(f, "nri.pkg.api.v1alpha1.Plugin", method, payload, len);
}

uint8_t *fake_read(struct fake *f, uint32_t *conn, uint32_t *stream, uint8_t *type, size_t *len)
{
	uint8_t mux[8], hdr[10], *buf;
	uint32_t flen;

	read_full(f->rt, mux, sizeof(mux));
	*conn = be32(mux);
	flen = be32(mux + 4);
	/* the plugin writes a ttrpc message in one frame */
	CHECK(flen >= 10 && flen <= NRI_TTRPC_MAX + 10);
	read_full(f->rt, hdr, sizeof(hdr));
	*len = be32(hdr);
	CHECK_INT(*len + 10, flen);
	*stream = be32(hdr + 4);
	*type = hdr[8];
	buf = malloc(*len + 1);
	CHECK(buf);
	read_full(f->rt, buf, *len);
	return buf;
}

Ttrpc__Response *fake_answer(struct fake *f, uint32_t stream)
{
	uint32_t conn, got;
	uint8_t type, *buf;
	size_t len;
	Ttrpc__Response *resp;

	buf = fake_read(f, &conn, &got, &type, &len);
	CHECK_INT(conn, NRI_CONN_PLUGIN);
	CHECK_INT(type, NRI_TTRPC_RESPONSE);
	CHECK_INT(got, stream);
	resp = ttrpc__response__unpack(NULL, len, buf);
	CHECK(resp);
	free(buf);
	return resp;
}

int fake_call_code(struct fake *f, const char *method, const ProtobufCMessage *m)
{
	uint32_t stream = fake_call(f, "nri.pkg.api.v1alpha1.Plugin", method, m);
	Ttrpc__Response *resp = fake_answer(f, stream);
	int code = resp->status ? resp->status->code : 0;

	ttrpc__response__free_unpacked(resp, NULL);
	return code;
}

static void take_register(struct fake *f)
{
	uint32_t conn, stream;
	uint8_t type, *buf;
	size_t len;
	Ttrpc__Request *req;
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest *reg;
	Ttrpc__Response resp = TTRPC__RESPONSE__INIT;

	buf = fake_read(f, &conn, &stream, &type, &len);
	CHECK_INT(conn, NRI_CONN_RUNTIME);
	CHECK_INT(type, NRI_TTRPC_REQUEST);
	req = ttrpc__request__unpack(NULL, len, buf);
	CHECK(req);
	CHECK_STR(req->service, "nri.pkg.api.v1alpha1.Runtime");
	CHECK_STR(req->method, "RegisterPlugin");
	reg = nri__pkg__api__v1alpha1__register_plugin_request__unpack(NULL, req->payload.len, req->payload.data);
	CHECK(reg);
	CHECK_STR(reg->plugin_name, "devcg");
	CHECK_STR(reg->plugin_idx, "10");
	nri__pkg__api__v1alpha1__register_plugin_request__free_unpacked(reg, NULL);
	ttrpc__request__free_unpacked(req, NULL);
	free(buf);
	/* the answer: an Empty (no bytes) */
	buf = pack(&resp.base, &len);
	fake_send_ttrpc(f, NRI_CONN_RUNTIME, stream, NRI_TTRPC_RESPONSE, buf, len);
	free(buf);
}

void fake_start(struct fake *f, bool strict, bool do_register)
{
	int sv[2];

	memset(f, 0, sizeof(*f));
	fake_log[0] = '\0';
	nri_log_set_sink(log_sink, NULL);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
	f->rt = sv[0];
	f->plugin_fd = sv[1];
	f->next_stream = 1;
	f->handlers = (struct nri_handlers){ .ctx = f, .start = on_start, .updated = on_updated,
					     .removed = on_removed, .synced = on_synced };
	f->opts = (struct nri_plugin_opts){ .name = "devcg", .idx = "10", .strict = strict,
					    .handlers = &f->handlers };
	CHECK(pthread_create(&f->thread, NULL, serve, f) == 0);
	if (do_register)
		take_register(f);
}

int fake_join(struct fake *f)
{
	CHECK(pthread_join(f->thread, NULL) == 0);
	close(f->rt);
	return f->serve_ret;
}

void fake_pod(Nri__Pkg__Api__V1alpha1__PodSandbox *p, const char *id, const char *name)
{
	nri__pkg__api__v1alpha1__pod_sandbox__init(p);
	p->id = (char *)id;
	p->name = (char *)name;
	p->namespace_ = "default";
	p->uid = "uid-of-pod";
	p->runtime_handler = "crun";
}

void fake_container(Nri__Pkg__Api__V1alpha1__Container *c, const char *id, const char *pod_id, uint32_t pid)
{
	nri__pkg__api__v1alpha1__container__init(c);
	c->id = (char *)id;
	c->pod_sandbox_id = (char *)pod_id;
	c->name = "app";
	c->state = NRI__PKG__API__V1ALPHA1__CONTAINER_STATE__CONTAINER_RUNNING;
	c->pid = pid;
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The plugin's life on one connection: RegisterPlugin on the runtime's
 * service (connection 2), then the runtime's calls on ours (connection 1):
 * Configure (subscribe), Synchronize (every container running), StateChange
 * (StartContainer, PostUpdateContainer, RemoveContainer), Shutdown; every
 * other call gets an empty (neutral) answer, an unknown one ttrpc's
 * UNIMPLEMENTED. One thread: the runtime may call us before it answers the
 * registration. Bytes that break the protocol close the connection after a
 * log line, before any handler runs for them. */
#include "nri.h"
#include "nri.pb-c.h"
#include "ttrpc.pb-c.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUNTIME_SERVICE "nri.pkg.api.v1alpha1.Runtime"
#define PLUGIN_SERVICE "nri.pkg.api.v1alpha1.Plugin"
#define REGISTER_STREAM 1
/* google.rpc.Code */
#define CODE_UNKNOWN 2
#define CODE_UNIMPLEMENTED 12
/* nri_mux_feed's callback stops the connection cleanly (Shutdown) */
#define STOP_CLEANLY (-ECANCELED)

typedef Nri__Pkg__Api__V1alpha1__Container Container;
typedef Nri__Pkg__Api__V1alpha1__PodSandbox PodSandbox;

struct plugin {
	int fd;
	const struct nri_plugin_opts *o;
	bool registered;
};

uint32_t nri_event_mask(void)
{
	return 1u << (NRI__PKG__API__V1ALPHA1__EVENT__START_CONTAINER - 1) |
	       1u << (NRI__PKG__API__V1ALPHA1__EVENT__POST_UPDATE_CONTAINER - 1) |
	       1u << (NRI__PKG__API__V1ALPHA1__EVENT__REMOVE_CONTAINER - 1);
}

static int reply(struct plugin *p, uint32_t stream, int32_t code, const char *msg, const ProtobufCMessage *m)
{
	uint8_t *payload = NULL, *out;
	size_t plen = 0, outlen;
	int ret;

	if (m) {
		plen = protobuf_c_message_get_packed_size(m);
		payload = malloc(plen ? plen : 1);
		if (!payload)
			return -ENOMEM;
		protobuf_c_message_pack(m, payload);
	}
	ret = nri_ttrpc_pack_response(stream, code, msg, payload, plen, &out, &outlen);
	free(payload);
	if (ret < 0) {
		nri_log(NRI_LOG_ERR, "cannot answer the runtime (stream %u): %s", stream, strerror(-ret));
		return ret;
	}
	ret = nri_mux_write(p->fd, NRI_CONN_PLUGIN, out, outlen);
	free(out);
	if (ret < 0)
		nri_log(NRI_LOG_ERR, "cannot answer the runtime (stream %u): %s", stream, strerror(-ret));
	return ret;
}

static int malformed(const char *what, size_t len, uint32_t stream)
{
	nri_log(NRI_LOG_ERR, "protocol error: malformed %s (%zu bytes) on stream %u: closing the connection", what,
		len, stream);
	return -EPROTO;
}

/* One action on one container: convert, call the handler, log. */
static int act(struct plugin *p, const char *action,
	       int (*fn)(void *, const struct nri_container *, struct nri_outcome *), const Container *ct,
	       const PodSandbox *pod, char *err, size_t errlen)
{
	struct nri_container c;
	struct nri_outcome out;
	int ret;

	memset(&out, 0, sizeof(out));
	ret = nri_container_from(ct, pod, &c, out.error, sizeof(out.error));
	if (ret < 0) {
		struct nri_container bare = { .id = ct && ct->id && *ct->id ? ct->id : "(no id)",
					      .name = ct && ct->name && *ct->name ? ct->name : NULL };

		nri_log_action(action, &bare, &out, ret);
		snprintf(err, errlen, "%s %s: %s", action, bare.id, out.error);
		return ret;
	}
	ret = fn ? fn(p->o->handlers->ctx, &c, &out) : 0;
	nri_log_action(action, &c, &out, ret);
	if (ret < 0)
		snprintf(err, errlen, "%s %s: %s", action, c.id, out.error[0] ? out.error : strerror(-ret));
	nri_container_free(&c);
	return ret;
}

/* The answer to a call that ran handlers: success, or with --strict the
 * first handler's error. */
static int answer(struct plugin *p, uint32_t stream, int err, const char *msg, const ProtobufCMessage *m)
{
	if (err < 0 && p->o->strict)
		return reply(p, stream, CODE_UNKNOWN, msg, NULL);
	return reply(p, stream, 0, NULL, m);
}

/* Without --strict the runtime waits for no handler: it is answered
 * before the handlers run (containerd gives a plugin 2 s a request and
 * closes one that takes longer, which a swap with the systemd step can on
 * a busy node); with --strict it waits, as a handler's error is its answer. */
static bool answer_first(struct plugin *p, uint32_t stream, const ProtobufCMessage *m, int *ret)
{
	if (p->o->strict)
		return false;
	*ret = reply(p, stream, 0, NULL, m);
	return true;
}

static const PodSandbox *pod_of(const Nri__Pkg__Api__V1alpha1__SynchronizeRequest *r, const Container *c)
{
	for (size_t i = 0; i < r->n_pods; i++)
		if (r->pods[i]->id && c->pod_sandbox_id && !strcmp(r->pods[i]->id, c->pod_sandbox_id))
			return r->pods[i];
	return NULL;
}

static int synchronize(struct plugin *p, uint32_t stream, const ProtobufCBinaryData *in)
{
	Nri__Pkg__Api__V1alpha1__SynchronizeRequest *r;
	Nri__Pkg__Api__V1alpha1__SynchronizeResponse resp = NRI__PKG__API__V1ALPHA1__SYNCHRONIZE_RESPONSE__INIT;
	char msg[1024] = "", one[1024];
	int first = 0, ret, sent = 0;
	bool early;

	r = nri__pkg__api__v1alpha1__synchronize_request__unpack(NULL, in->len, in->data);
	if (!r)
		return malformed("Synchronize request", in->len, stream);
	nri_log(NRI_LOG_INFO, "synchronize: %zu pods, %zu containers", r->n_pods, r->n_containers);
	early = answer_first(p, stream, &resp.base, &sent);
	for (size_t i = 0; i < r->n_containers; i++) {
		const Container *c = r->containers[i];

		/* a stopped container has no process and no program to keep */
		if (c->state == NRI__PKG__API__V1ALPHA1__CONTAINER_STATE__CONTAINER_STOPPED || !c->pid) {
			nri_log(NRI_LOG_DEBUG, "sync %s: not running, left alone", c->id);
			continue;
		}
		ret = act(p, "sync", p->o->handlers->start, c, pod_of(r, c), one, sizeof(one));
		if (ret < 0 && !first) {
			first = ret;
			snprintf(msg, sizeof(msg), "%s", one);
		}
	}
	/* what is remembered of containers removed while the agent was away */
	if (p->o->handlers->synced) {
		const char **ids = calloc(r->n_containers ? r->n_containers : 1, sizeof(*ids));

		for (size_t i = 0; ids && i < r->n_containers; i++)
			ids[i] = r->containers[i]->id;
		ret = ids ? p->o->handlers->synced(p->o->handlers->ctx, ids, r->n_containers, one, sizeof(one))
			  : -ENOMEM;
		if (ret < 0) {
			nri_log(NRI_LOG_ERR, "synchronize: %s", ids ? one : strerror(ENOMEM));
			if (!first) {
				first = ret;
				snprintf(msg, sizeof(msg), "%s", ids ? one : strerror(ENOMEM));
			}
		} else if (ret > 0) {
			nri_log(NRI_LOG_INFO, "synchronize: %s", one);
		}
		free(ids);
	}
	/* the runtime's requests wait until here: one that came meanwhile may
	 * have been given up (containerd waits 2 s) */
	nri_log(NRI_LOG_INFO, "synchronize: done%s", first ? ", with errors (above)" : "");
	nri__pkg__api__v1alpha1__synchronize_request__free_unpacked(r, NULL);
	return early ? sent : answer(p, stream, first, msg, &resp.base);
}

static int state_change(struct plugin *p, uint32_t stream, const ProtobufCBinaryData *in)
{
	Nri__Pkg__Api__V1alpha1__StateChangeEvent *e;
	Nri__Pkg__Api__V1alpha1__Empty empty = NRI__PKG__API__V1ALPHA1__EMPTY__INIT;
	const struct nri_handlers *h = p->o->handlers;
	char msg[1024] = "";
	int ret = 0, sent = 0;
	bool early;

	e = nri__pkg__api__v1alpha1__state_change_event__unpack(NULL, in->len, in->data);
	if (!e)
		return malformed("StateChange request", in->len, stream);
	early = answer_first(p, stream, &empty.base, &sent);
	switch (e->event) {
	case NRI__PKG__API__V1ALPHA1__EVENT__START_CONTAINER:
		ret = act(p, "start", h->start, e->container, e->pod, msg, sizeof(msg));
		break;
	case NRI__PKG__API__V1ALPHA1__EVENT__POST_UPDATE_CONTAINER:
		ret = act(p, "update", h->updated, e->container, e->pod, msg, sizeof(msg));
		break;
	case NRI__PKG__API__V1ALPHA1__EVENT__REMOVE_CONTAINER:
		ret = act(p, "remove", h->removed, e->container, e->pod, msg, sizeof(msg));
		break;
	default:
		nri_log(NRI_LOG_DEBUG, "event %d: not subscribed, nothing to do", (int)e->event);
		break;
	}
	nri__pkg__api__v1alpha1__state_change_event__free_unpacked(e, NULL);
	return early ? sent : answer(p, stream, ret, msg, &empty.base);
}

static int configure(struct plugin *p, uint32_t stream, const ProtobufCBinaryData *in)
{
	Nri__Pkg__Api__V1alpha1__ConfigureRequest *r;
	Nri__Pkg__Api__V1alpha1__ConfigureResponse resp = NRI__PKG__API__V1ALPHA1__CONFIGURE_RESPONSE__INIT;

	r = nri__pkg__api__v1alpha1__configure_request__unpack(NULL, in->len, in->data);
	if (!r)
		return malformed("Configure request", in->len, stream);
	nri_log(NRI_LOG_INFO, "configured by %s %s: subscribing to StartContainer, PostUpdateContainer, "
			      "RemoveContainer", *r->runtime_name ? r->runtime_name : "the runtime", r->runtime_version);
	nri__pkg__api__v1alpha1__configure_request__free_unpacked(r, NULL);
	resp.events = (int32_t)nri_event_mask();
	return reply(p, stream, 0, NULL, &resp.base);
}

static int on_request(struct plugin *p, uint32_t stream, uint8_t type, const uint8_t *msg, size_t len)
{
	Ttrpc__Request *req;
	int ret;

	if (type != NRI_TTRPC_REQUEST) {
		nri_log(NRI_LOG_ERR, "protocol error: ttrpc message of type %u on the plugin's connection "
				     "(stream %u), not a request: closing the connection", type, stream);
		return -EPROTO;
	}
	req = ttrpc__request__unpack(NULL, len, msg);
	if (!req)
		return malformed("ttrpc request", len, stream);
	nri_log(NRI_LOG_DEBUG, "call %s.%s (stream %u)", req->service, req->method, stream);
	if (strcmp(req->service, PLUGIN_SERVICE)) {
		goto unimplemented;
	} else if (!strcmp(req->method, "Configure")) {
		ret = configure(p, stream, &req->payload);
	} else if (!strcmp(req->method, "Synchronize")) {
		ret = synchronize(p, stream, &req->payload);
	} else if (!strcmp(req->method, "StateChange")) {
		ret = state_change(p, stream, &req->payload);
	} else if (!strcmp(req->method, "Shutdown")) {
		nri_log(NRI_LOG_INFO, "the runtime shuts the plugin down");
		ret = reply(p, stream, 0, NULL, NULL);
		if (!ret)
			ret = STOP_CLEANLY;
	} else if (!strcmp(req->method, "CreateContainer") || !strcmp(req->method, "UpdateContainer") ||
		   !strcmp(req->method, "StopContainer")) {
		/* not subscribed: the answer that changes nothing (every field empty) */
		ret = reply(p, stream, 0, NULL, NULL);
	} else {
		goto unimplemented;
	}
	ttrpc__request__free_unpacked(req, NULL);
	return ret;
unimplemented:;
	char why[512];

	snprintf(why, sizeof(why), "%s.%s is not implemented by devcg-nri", req->service, req->method);
	nri_log(NRI_LOG_WARNING, "the runtime called %s.%s, which devcg-nri does not serve: answered "
				 "unimplemented", req->service, req->method);
	ret = reply(p, stream, CODE_UNIMPLEMENTED, why, NULL);
	ttrpc__request__free_unpacked(req, NULL);
	return ret;
}

static int on_response(struct plugin *p, uint32_t stream, uint8_t type, const uint8_t *msg, size_t len)
{
	Ttrpc__Response *resp;
	int ret = 0;

	if (type != NRI_TTRPC_RESPONSE || stream != REGISTER_STREAM || p->registered) {
		nri_log(NRI_LOG_ERR, "protocol error: unexpected ttrpc message of type %u on the runtime's "
				     "connection (stream %u): closing the connection", type, stream);
		return -EPROTO;
	}
	resp = ttrpc__response__unpack(NULL, len, msg);
	if (!resp)
		return malformed("ttrpc response", len, stream);
	if (resp->status && resp->status->code) {
		nri_log(NRI_LOG_ERR, "the runtime refused to register %s-%s: %s", p->o->idx, p->o->name,
			resp->status->message);
		ret = -EACCES;
	} else {
		p->registered = true;
		nri_log(NRI_LOG_INFO, "registered as %s-%s", p->o->idx, p->o->name);
	}
	ttrpc__response__free_unpacked(resp, NULL);
	return ret;
}

static int on_message(void *ctx, uint32_t conn, uint32_t stream, uint8_t type, uint8_t flags, const uint8_t *msg,
		      size_t len)
{
	(void)flags;
	if (conn == NRI_CONN_RUNTIME)
		return on_response(ctx, stream, type, msg, len);
	return on_request(ctx, stream, type, msg, len);
}

static int register_plugin(struct plugin *p)
{
	Nri__Pkg__Api__V1alpha1__RegisterPluginRequest r = NRI__PKG__API__V1ALPHA1__REGISTER_PLUGIN_REQUEST__INIT;
	uint8_t payload[512], *out;
	size_t plen, outlen;
	int ret;

	r.plugin_name = (char *)p->o->name;
	r.plugin_idx = (char *)p->o->idx;
	plen = protobuf_c_message_get_packed_size(&r.base);
	if (plen > sizeof(payload))
		return -ENAMETOOLONG;
	protobuf_c_message_pack(&r.base, payload);
	ret = nri_ttrpc_pack_request(REGISTER_STREAM, RUNTIME_SERVICE, "RegisterPlugin", payload, plen, &out,
				     &outlen);
	if (ret < 0)
		return ret;
	ret = nri_mux_write(p->fd, NRI_CONN_RUNTIME, out, outlen);
	free(out);
	return ret;
}

int nri_plugin_serve(int fd, const struct nri_plugin_opts *o)
{
	struct plugin p = { .fd = fd, .o = o };
	struct nri_mux m;
	uint8_t buf[65536];
	int ret;

	ret = register_plugin(&p);
	if (ret < 0) {
		nri_log(NRI_LOG_ERR, "cannot register with the runtime: %s", strerror(-ret));
		return ret;
	}
	nri_mux_init(&m);
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (o->stop && *o->stop) {
			ret = 0;
			break;
		}
		ret = o->waitmask ? ppoll(&pfd, 1, NULL, o->waitmask) : poll(&pfd, 1, -1);
		if (ret < 0 && errno == EINTR)
			continue;
		if (ret < 0) {
			ret = -errno;
			nri_log(NRI_LOG_ERR, "cannot wait for the runtime: %s", strerror(-ret));
			break;
		}
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0) {
			ret = -errno;
			nri_log(NRI_LOG_ERR, "cannot read from the runtime: %s", strerror(-ret));
			break;
		}
		if (!n) {
			ret = nri_mux_eof(&m);
			if (!ret)
				nri_log(NRI_LOG_INFO, "the runtime closed the connection");
			break;
		}
		ret = nri_mux_feed(&m, buf, (size_t)n, on_message, &p);
		if (ret == STOP_CLEANLY) {
			ret = 0;
			break;
		}
		if (ret < 0)
			break;
	}
	nri_mux_free(&m);
	return ret;
}

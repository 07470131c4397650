/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* A fake NRI runtime for the plugin's unit tests: the plugin
 * (nri_plugin_serve) runs in a thread on one end of a socketpair with
 * recording handlers; the test speaks NRI's mux and ttrpc on the other end. */
#ifndef DEVCG_NRI_FAKE_H
#define DEVCG_NRI_FAKE_H

#include "nri.h"
#include "nri.pb-c.h"
#include "ttrpc.pb-c.h"

#include <pthread.h>

#define FAKE_MAX_CALLS 8
#define FAKE_MAX_ITEMS 4

/* One handler call, its container copied. */
struct fake_call {
	char action[16];
	char id[64], name[64], pod_name[64], pod_namespace[64], pod_uid[64], handler[64];
	int32_t pid;
	size_t ndevices, nrules;
	struct {
		char path[64];
		char type;
		int64_t major, minor;
	} devices[FAKE_MAX_ITEMS];
	struct {
		bool allow;
		char type;
		int64_t major, minor;
		char access[8];
	} rules[FAKE_MAX_ITEMS];
};

struct fake {
	int rt;                 /* the runtime's end */
	int plugin_fd;
	pthread_t thread;
	struct nri_handlers handlers;
	struct nri_plugin_opts opts;
	int serve_ret;
	int fail;               /* the handlers return this (0: success) */
	int block_fd;           /* > 0: the handlers first read a byte from it */
	size_t ncalls;
	struct fake_call calls[FAKE_MAX_CALLS];
	uint32_t next_stream;
};

/* The log lines the plugin wrote since fake_start(). */
extern char fake_log[65536];

/* Start the plugin; with REGISTER, also take its RegisterPlugin call
 * (checked) and answer it. */
void fake_start(struct fake *f, bool strict, bool do_register);
/* Wait for the plugin to end; its nri_plugin_serve() return. */
int fake_join(struct fake *f);

/* Raw frames and messages. */
void fake_send_frame(struct fake *f, uint32_t conn, const void *buf, size_t len);
void fake_send_ttrpc(struct fake *f, uint32_t conn, uint32_t stream, uint8_t type, const void *buf, size_t len);
/* A call of the plugin's service with METHOD and a payload: its stream id. */
uint32_t fake_call(struct fake *f, const char *service, const char *method, const ProtobufCMessage *m);
uint32_t fake_call_raw(struct fake *f, const char *method, const void *payload, size_t len);
/* The next message from the plugin: conn, stream, type and the ttrpc payload
 * (malloc'ed, *LEN bytes). */
uint8_t *fake_read(struct fake *f, uint32_t *conn, uint32_t *stream, uint8_t *type, size_t *len);
/* The plugin's answer to STREAM (checked: conn 1, a response). */
Ttrpc__Response *fake_answer(struct fake *f, uint32_t stream);
/* Call and take the answer's status code (0: success). */
int fake_call_code(struct fake *f, const char *method, const ProtobufCMessage *m);

/* Messages. */
void fake_pod(Nri__Pkg__Api__V1alpha1__PodSandbox *p, const char *id, const char *name);
void fake_container(Nri__Pkg__Api__V1alpha1__Container *c, const char *id, const char *pod_id, uint32_t pid);

#endif

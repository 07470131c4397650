/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* devcg-nri: an NRI plugin (containerd's Node Resource Interface) that keeps
 * every container's device access devcg's. The layers, bottom to top:
 *  - mux.c: NRI's multiplexed connection (frames of a 4-byte big-endian
 *    connection id and a 4-byte big-endian length; each logical connection
 *    is a byte stream);
 *  - ttrpc.c: ttrpc messages on such a stream (10-byte header, then a
 *    protobuf Request or Response);
 *  - convert.c: NRI's Container and PodSandbox as struct nri_container;
 *  - plugin.c: the plugin's life on one connection (register, Configure,
 *    Synchronize, events, Shutdown), calling struct nri_handlers;
 *  - log.c: one line per action (stderr, or the journal under systemd);
 *  - agent.c: the handlers on libdevcg (include/devcg.h);
 *  - main.c: options, both connection modes, signals, reconnecting.
 * Nothing here but agent.c calls the library. */
#ifndef DEVCG_NRI_H
#define DEVCG_NRI_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- the multiplexed connection */
#define NRI_MUX_HEADER 8
#define NRI_MUX_MAX_PAYLOAD (1u << 24) /* NRI's own bound */
#define NRI_CONN_PLUGIN 1              /* the runtime calls us: our ttrpc server */
#define NRI_CONN_RUNTIME 2             /* we call the runtime: our ttrpc client */

/* ---- ttrpc */
#define NRI_TTRPC_HEADER 10
#define NRI_TTRPC_MAX (4u << 20) /* ttrpc's messageLengthMax */
#define NRI_TTRPC_REQUEST 1
#define NRI_TTRPC_RESPONSE 2

/* One logical connection's byte stream cut into ttrpc messages. */
struct nri_ttrpc_stream {
	uint8_t hdr[NRI_TTRPC_HEADER];
	size_t hdr_got;
	uint32_t len, stream_id;
	uint8_t type, flags;
	uint8_t *msg; /* LEN bytes once the header is complete (len <= NRI_TTRPC_MAX) */
	size_t msg_got;
};

/* A complete message: return 0 to go on, negative errno to stop (MSG is
 * freed by the caller after the call). */
typedef int (*nri_ttrpc_fn)(void *ctx, uint32_t conn, uint32_t stream_id, uint8_t type, uint8_t flags,
			    const uint8_t *msg, size_t len);

/* Feed LEN bytes of connection CONN's stream; calls FN per complete message.
 * -EPROTO (after a log line) for a message longer than NRI_TTRPC_MAX. */
int nri_ttrpc_feed(struct nri_ttrpc_stream *s, uint32_t conn, const uint8_t *buf, size_t len,
		   nri_ttrpc_fn fn, void *ctx);
/* Mid-message (for EOF: a truncated message). */
bool nri_ttrpc_partial(const struct nri_ttrpc_stream *s);
void nri_ttrpc_reset(struct nri_ttrpc_stream *s);
/* Pack a ttrpc Request / Response (Response: CODE 0 and MESSAGE NULL for
 * success) into a new buffer with its ttrpc header: 0 and *OUT, *OUTLEN, or
 * negative errno. */
int nri_ttrpc_pack_request(uint32_t stream_id, const char *service, const char *method, const uint8_t *payload,
			   size_t plen, uint8_t **out, size_t *outlen);
int nri_ttrpc_pack_response(uint32_t stream_id, int32_t code, const char *message, const uint8_t *payload,
			    size_t plen, uint8_t **out, size_t *outlen);

/* The multiplexed trunk, read side: frames cut and their payload handed to
 * each connection's ttrpc stream. */
struct nri_mux {
	uint8_t hdr[NRI_MUX_HEADER];
	size_t hdr_got;
	uint32_t conn, left; /* the current frame's connection and payload bytes to come */
	struct nri_ttrpc_stream streams[2]; /* NRI_CONN_PLUGIN, NRI_CONN_RUNTIME */
};

void nri_mux_init(struct nri_mux *m);
void nri_mux_free(struct nri_mux *m);
/* Feed bytes read from the trunk. -EPROTO (after a log line) for a frame
 * longer than NRI_MUX_MAX_PAYLOAD or for a connection id other than 1 and 2;
 * FN's own error otherwise. */
int nri_mux_feed(struct nri_mux *m, const uint8_t *buf, size_t len, nri_ttrpc_fn fn, void *ctx);
/* -EPROTO (after a log line) when the trunk ended mid-frame or mid-message. */
int nri_mux_eof(const struct nri_mux *m);
/* Write BUF as frames of CONN (all or an error: negative errno). */
int nri_mux_write(int fd, uint32_t conn, const uint8_t *buf, size_t len);

/* ---- a container as the runtime describes it (see struct devcg_container) */
struct nri_device {
	const char *path;
	char type; /* 'c', 'b', 'u', 'p' */
	int64_t major, minor;
};
struct nri_rule {
	bool allow;
	char type;            /* 0 (all), 'a', 'c', 'b' */
	int64_t major, minor; /* -1: any (absent) */
	const char *access;   /* "" : rwm */
};
struct nri_container {
	const char *id;
	const char *name;
	const char *pod_name, *pod_namespace, *pod_uid; /* NULL when the pod is unknown */
	int32_t pid;
	const char *runtime_handler; /* NULL when unknown or empty */
	size_t ndevices;
	struct nri_device *devices;
	size_t nrules;
	struct nri_rule *rules;
};

/* What an action did, for its log line. */
struct nri_outcome {
	char cgroup[4096]; /* the container's cgroup, when known */
	char what[256];    /* what was done ("swapped", "nothing to change", ...) */
	char error[512];   /* the handler's error, when it fails */
};

/* The plugin's actions on containers: 0, or negative errno with OUT->error
 * saying what failed. C and its strings live for the call only. */
struct nri_handlers {
	void *ctx;
	int (*start)(void *ctx, const struct nri_container *c, struct nri_outcome *out);   /* Synchronize, StartContainer */
	int (*updated)(void *ctx, const struct nri_container *c, struct nri_outcome *out); /* PostUpdateContainer */
	int (*removed)(void *ctx, const struct nri_container *c, struct nri_outcome *out); /* RemoveContainer */
	/* after Synchronize: the IDs of all the runtime's containers (running
	 * or not); what is remembered of any other is stale. May be NULL. */
	int (*synced)(void *ctx, const char *const *ids, size_t n, char *msg, size_t len);
};

/* ---- the plugin on one connection */
/* The events the plugin subscribes to, as NRI's mask (bit EVENT - 1). */
uint32_t nri_event_mask(void);

struct nri_plugin_opts {
	const char *name; /* registered name ("devcg") */
	const char *idx;  /* two digits ("10") */
	bool strict;      /* a handler's error is the runtime's error too */
	int verbose;
	const struct nri_handlers *handlers;
	/* when set: the signal mask to wait with (ppoll), and the flag a signal
	 * sets to stop */
	const sigset_t *waitmask;
	volatile sig_atomic_t *stop;
};

/* Register on the connected socket FD and serve the runtime until it closes
 * the connection or sends Shutdown (0), a signal sets *STOP (0), the
 * runtime refuses the registration (-EACCES), the connection breaks
 * (negative errno) or its bytes break the protocol (-EPROTO). Every error
 * has had its log line. FD stays open. */
int nri_plugin_serve(int fd, const struct nri_plugin_opts *o);

/* Convert a Container (and its pod, may be NULL) of the generated NRI
 * messages: 0 and *C (free with nri_container_free), or -EINVAL with ERR.
 * void pointers keep the generated headers out of nri.h. */
int nri_container_from(const void *container, const void *pod, struct nri_container *c, char *err,
		       size_t errlen);
void nri_container_free(struct nri_container *c);

/* ---- logging */
enum nri_log_level { NRI_LOG_ERR = 3, NRI_LOG_WARNING = 4, NRI_LOG_INFO = 6, NRI_LOG_DEBUG = 7 };
/* A line (no newline) about the plugin itself. */
void nri_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The line of an action on a container (ERR < 0: it failed). */
void nri_log_action(const char *action, const struct nri_container *c, const struct nri_outcome *o, int err);
/* Where lines go: stderr, or the journal when JOURNAL_STREAM is set; tests
 * set a sink of their own (NULL: back to the default). */
typedef void (*nri_log_sink)(void *ctx, int level, const char *line);
void nri_log_set_sink(nri_log_sink sink, void *ctx);
void nri_log_set_verbose(int verbose);

/* ---- the program */
extern const char nri_usage[];
/* The handlers on libdevcg (agent.c). */
struct nri_agent_opts {
	const char *state_dir; /* NULL: the library's default */
	bool no_systemd;
};
int nri_agent_handlers(struct nri_handlers *h, const struct nri_agent_opts *o);

#endif

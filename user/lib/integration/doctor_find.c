// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * devcg doctor's result and its findings, from the facts alone (no kernel
 * call, no file read): what doctor.c gathered, or what the unit tests make
 * by hand through devcg_doctor_new() and the add functions.
 */
#include "integration/doctor.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct devcg_doctor_result *devcg_doctor_new(void)
{
	struct doctor *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	d->pub.layers = d->layers;
	return &d->pub;
}

void devcg_doctor_result_free(struct devcg_doctor_result *result)
{
	struct doctor *d = (struct doctor *)result;

	if (!d)
		return;
	free(d->nodes);
	free(d->findings);
	free(d);
}

int devcg_doctor_add_layer(struct devcg_doctor_result *r, const struct devcg_doctor_layer *layer,
			   struct devcg_error *err)
{
	struct doctor *d = (struct doctor *)r;

	if (r->nlayers == DEVCG_DOCTOR_MAX_LAYERS)
		return devcg_err(err, -E2BIG, "more than %d layers decide for the container",
				 DEVCG_DOCTOR_MAX_LAYERS);
	d->layers[r->nlayers++] = *layer;
	return 0;
}

int devcg_doctor_add_node(struct devcg_doctor_result *r, const struct devcg_doctor_node *node,
			  struct devcg_error *err)
{
	struct doctor *d = (struct doctor *)r;

	if (r->nnodes == d->ncap) {
		size_t cap = d->ncap ? d->ncap * 2 : 64;
		struct devcg_doctor_node *v = realloc(d->nodes, cap * sizeof(*v));

		if (!v)
			return devcg_err(err, -ENOMEM, "out of memory");
		d->nodes = v;
		d->ncap = cap;
		r->nodes = v;
	}
	d->nodes[r->nnodes++] = *node;
	return 0;
}

static struct devcg_doctor_finding *add_finding(struct devcg_doctor_result *r, uint8_t kind, const char *id,
						const struct devcg_doctor_node *n, uint8_t access)
{
	struct doctor *d = (struct doctor *)r;
	struct devcg_doctor_finding *f;

	if (r->nfindings == d->fcap) {
		size_t cap = d->fcap ? d->fcap * 2 : 16;
		struct devcg_doctor_finding *v = realloc(d->findings, cap * sizeof(*v));

		if (!v)
			return NULL;
		d->findings = v;
		d->fcap = cap;
		r->findings = v;
	}
	f = &d->findings[r->nfindings++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	snprintf(f->id, sizeof(f->id), "%s", id);
	f->access = access;
	if (n) {
		snprintf(f->path, sizeof(f->path), "%s", n->path);
		f->type = n->type;
		f->major = n->major;
		f->minor = n->minor;
	}
	return f;
}

/* ---- findings, from the facts alone ---------------------------------------- */


/* "/dev/x (c 1:3)" or "c 1:3", escaped. */
static void name_of(const struct devcg_doctor_node *n, char *buf, size_t len)
{
	char safe[4 * 256 + 1];

	devcg_escape(safe, sizeof(safe), n->path, (size_t)-1, 0);
	if (n->path[0])
		snprintf(buf, len, "%s (%c %u:%u)", safe, n->type == DEVCG_BLOCK ? 'b' : 'c', n->major, n->minor);
	else
		snprintf(buf, len, "%c %u:%u", n->type == DEVCG_BLOCK ? 'b' : 'c', n->major, n->minor);
}

/* S quoted for a shell, escaped for a terminal. */
static void sh_quote(const char *s, char *buf, size_t len)
{
	char safe[4 * 4096 + 1];
	size_t off = 0;

	devcg_escape(safe, sizeof(safe), s, (size_t)-1, 0);
	off += (size_t)snprintf(buf + off, len - off, "'");
	for (const char *p = safe; *p && off + 5 < len; p++)
		off += (size_t)(*p == '\'' ? snprintf(buf + off, len - off, "'\\''")
					   : snprintf(buf + off, len - off, "%c", *p));
	snprintf(buf + off, len - off, "'");
}

/* How allow and deny name the container: its cgroup's path. */
static void cgroup_of(const struct devcg_doctor_result *r, char *buf, size_t len)
{
	sh_quote(r->cgroup_path[0] ? r->cgroup_path : r->cgroup, buf, len);
}

/* How attach names it: -p PID, else the cgroup. */
static void target_of(const struct devcg_doctor_result *r, char *buf, size_t len)
{
	if (r->pid > 0)
		snprintf(buf, len, "-p %d", r->pid);
	else
		cgroup_of(r, buf, len);
}

/* What the device programs (the v2 layers) say about access I: 1 all
 * allow, 0 one refuses, -1 one cannot be read and none refuses. */
static int v2_says(const struct devcg_doctor_result *r, const struct devcg_doctor_node *n, int i)
{
	int v = 1;

	for (size_t l = 0; l < r->nlayers; l++) {
		if (strcmp(r->layers[l].kind, "v2"))
			continue;
		if (n->decision[l][i] == 0)
			return 0;
		if (n->decision[l][i] < 0)
			v = -1;
	}
	return v;
}

static int v1_says(const struct devcg_doctor_result *r, const struct devcg_doctor_node *n, int i)
{
	for (size_t l = 0; l < r->nlayers; l++)
		if (!strcmp(r->layers[l].kind, "v1"))
			return n->decision[l][i];
	return 1;
}

static const struct devcg_doctor_node *node_at(const struct devcg_doctor_result *r, const char *path)
{
	if (((const struct doctor *)r)->walked)
		r = ((const struct doctor *)r)->walked;
	for (size_t i = 0; i < r->nnodes; i++)
		if (r->nodes[i].present && !strcmp(r->nodes[i].path, path))
			return &r->nodes[i];
	return NULL;
}

/* Devices every runtime gives a container by default (runc's and crun's
 * lists): allowed without a node is their normal state, not a finding. */
static bool runtime_default(const struct devcg_doctor_node *n)
{
	static const struct { uint32_t major, minor; } chr[] = {
		{ 1, 3 }, { 1, 5 }, { 1, 7 }, { 1, 8 }, { 1, 9 }, { 5, 0 }, { 5, 1 }, { 5, 2 },
		{ 10, 200 }, { 10, 229 }, { 136, DEVCG_ANY },
	};

	if (n->type != DEVCG_CHAR)
		return false;
	for (size_t i = 0; i < sizeof(chr) / sizeof(chr[0]); i++)
		if (n->major == chr[i].major && (chr[i].minor == DEVCG_ANY || n->minor == chr[i].minor))
			return true;
	return false;
}

#define FIND(KIND, ID, N, ACC)                                    \
	do {                                                      \
		f = add_finding(r, KIND, ID, N, ACC);             \
		if (!f)                                           \
			return devcg_err(err, -ENOMEM, "out of memory"); \
	} while (0)

int devcg_doctor_find(struct devcg_doctor_result *r, const struct devcg_policy *unit_policy,
		      struct devcg_error *err)
{
	struct devcg_doctor_finding *f;
	char target[4200], cg[4 * 4096 + 64], name[1200], acc[4];
	bool has_devcg = false;
	size_t i;

	target_of(r, target, sizeof(target));
	cgroup_of(r, cg, sizeof(cg));
	for (i = 0; i < r->nnodes; i++) {
		const struct devcg_doctor_node *n = &r->nodes[i];
		uint8_t v1_refuses = 0, refused = 0, allowed = 0;

		name_of(n, name, sizeof(name));
		for (int a = 0; a < 3; a++) {
			if (v2_says(r, n, a) == 1 && v1_says(r, n, a) == 0)
				v1_refuses |= acc_bit[a];
			if (v2_says(r, n, a) == 0)
				refused |= acc_bit[a];
			if (n->allowed[a] == 1)
				allowed |= acc_bit[a];
		}
		/* the device programs refuse it whole: it cannot be opened */
		if (n->present && (refused & (DEVCG_ACC_READ | DEVCG_ACC_WRITE)) ==
					  (DEVCG_ACC_READ | DEVCG_ACC_WRITE)) {
			FIND(DEVCG_DOCTOR_NODE_REFUSED, "node-refused", n, DEVCG_ACC_READ | DEVCG_ACC_WRITE);
			snprintf(f->message, sizeof(f->message),
				 "%s is in the container's /dev but its device programs refuse r and w", name);
			snprintf(f->fix, sizeof(f->fix), "devcg allow %s '%c %u:%u rw'", cg,
				 n->type == DEVCG_BLOCK ? 'b' : 'c', n->major, n->minor);
		}
		/* hybrid host: the programs allow what the v1 list refuses
		 * (what `check` on the v2 side alone would call allowed) */
		if (v1_refuses) {
			devcg_access_format(v1_refuses, acc);
			FIND(DEVCG_DOCTOR_V1_REFUSES, "v1-v2-differ", n, v1_refuses);
			snprintf(f->message, sizeof(f->message),
				 "the device programs allow %s %s, the cgroup v1 devices cgroup %s refuses it",
				 name, acc, r->v1_cgroup);
			snprintf(f->fix, sizeof(f->fix), "devcg allow %s '%c %u:%u %s'", cg,
				 n->type == DEVCG_BLOCK ? 'b' : 'c', n->major, n->minor, acc);
		}
		/* allowed, by its own exception, and no node to open */
		if (!n->present && (allowed & (DEVCG_ACC_READ | DEVCG_ACC_WRITE)) && !runtime_default(n)) {
			devcg_access_format(allowed, acc);
			FIND(DEVCG_DOCTOR_ALLOWED_ABSENT, "allowed-absent", n, allowed);
			snprintf(f->message, sizeof(f->message),
				 "%s is allowed (%s) but has no node in the container's /dev", name, acc);
			snprintf(f->fix, sizeof(f->fix),
				 "devcg attach %s HOST_NODE (its node), or devcg deny %s '%c %u:%u rwm'", target,
				 cg, n->type == DEVCG_BLOCK ? 'b' : 'c', n->major, n->minor);
		}
		/* a node mknod'd in a user namespace's own file system */
		if (n->present && r->userns && !n->bind_mounted) {
			FIND(DEVCG_DOCTOR_USERNS_MKNOD, "userns-mknod", n, 0);
			snprintf(f->message, sizeof(f->message),
				 "%s was made by mknod in a user-namespaced container, whose own /dev is nodev: "
				 "it cannot be opened there", name);
			snprintf(f->fix, sizeof(f->fix), "devcg attach %s --method bind --force HOST_NODE", target);
		}
		/* allowed now, but not by the unit systemd rebuilds its program from */
		if (r->unit[0] && unit_policy && n->present) {
			uint8_t lost = 0;

			for (int a = 0; a < 3; a++) {
				struct devcg_exception ex;
				bool decided;

				if (n->allowed[a] == 1 && devcg_request_checked(n->type, n->major, n->minor, acc_bit[a]) &&
				    devcg_policy_check(unit_policy, n->type, n->major, n->minor, acc_bit[a], &ex,
						       &decided) == 0)
					lost |= acc_bit[a];
			}
			if (lost) {
				char unit[4 * 256 + 1];

				devcg_access_format(lost, acc);
				devcg_escape(unit, sizeof(unit), r->unit, (size_t)-1, 0);
				FIND(DEVCG_DOCTOR_SYSTEMD_RELOAD, "systemd-reload", n, lost);
				snprintf(f->message, sizeof(f->message),
					 "%s is allowed (%s) but %s's DeviceAllow= does not hold it: the next "
					 "systemctl daemon-reload revokes it", name, acc, unit);
				snprintf(f->fix, sizeof(f->fix), "systemctl set-property --runtime %s "
					 "DeviceAllow='%c %u:%u %s'", unit,
					 n->type == DEVCG_BLOCK ? 'b' : 'c', n->major, n->minor, acc);
				/* (systemd takes "char-MAJOR"/paths; a "c M:N" form is
				 * read by devcg, so name the node when there is one) */
				if (n->path[0])
					snprintf(f->fix, sizeof(f->fix),
						 "systemctl set-property --runtime %s DeviceAllow='%s %s'", unit,
						 n->path, acc);
			}
		}
	}
	/* a GPU without its companions (what NVIDIA's CDI spec gives with every GPU) */
	for (i = 0; i < r->nnodes; i++) {
		const struct devcg_doctor_node *n = &r->nodes[i];
		static const char *const companions[] = { "/dev/nvidiactl", "/dev/nvidia-uvm" };

		if (!n->present || fnmatch("/dev/nvidia[0-9]*", n->path, 0) ||
		    strspn(n->path + 11, "0123456789") != strlen(n->path + 11))
			continue;
		for (size_t c = 0; c < 2; c++) {
			if (node_at(r, companions[c]))
				continue;
			name_of(n, name, sizeof(name));
			FIND(DEVCG_DOCTOR_COMPANION_MISSING, "companion-missing", n, 0);
			snprintf(f->message, sizeof(f->message),
				 "%s is a GPU, but %s is missing: CUDA and NVML fail without it", name, companions[c]);
			snprintf(f->fix, sizeof(f->fix), "devcg attach %s %s", target, companions[c]);
		}
	}
	/* crun's program beside devcg's: crun update re-installs its own */
	for (i = 0; i < r->nlayers; i++)
		if (!strcmp(r->layers[i].kind, "v2") && !strcmp(r->layers[i].owner, "devcg"))
			has_devcg = true;
	for (i = 0; has_devcg && i < r->nlayers; i++) {
		char where[4 * 4096 + 1];

		if (strcmp(r->layers[i].kind, "v2") || strcmp(r->layers[i].owner, "crun"))
			continue;
		devcg_escape(where, sizeof(where), r->layers[i].where, (size_t)-1, 0);
		FIND(DEVCG_DOCTOR_RUNTIME_REINSTALL, "runtime-reinstall", NULL, 0);
		snprintf(f->message, sizeof(f->message),
			 "crun's program %u on %s runs beside devcg's: crun update detaches it and attaches a "
			 "new one built from the container's config.json, which drops what devcg allowed beyond it",
			 r->layers[i].prog_id, where);
		snprintf(f->fix, sizeof(f->fix), "crun update --resources FILE %s (FILE's devices: every device "
			 "devcg allows there), so that the program crun re-installs allows them too",
			 "CONTAINER");
	}
	return 0;
}

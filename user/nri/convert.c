// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* NRI's Container and PodSandbox (the generated messages) as the agent's
 * struct nri_container: its OCI linux.devices and linux.resources.devices,
 * the pod's names and runtime handler. Strings point into the message. */
#include "nri.h"
#include "nri.pb-c.h"

#include <devcg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef Nri__Pkg__Api__V1alpha1__Container Container;
typedef Nri__Pkg__Api__V1alpha1__PodSandbox PodSandbox;

static const char *str_or_null(const char *s)
{
	return s && *s ? s : NULL;
}

/* One type letter of a device node ("c", "b", "u", "p"). */
static int device_type(const char *t, char *out)
{
	if (t && strlen(t) == 1 && strchr("cbup", t[0])) {
		*out = t[0];
		return 0;
	}
	return -EINVAL;
}

/* A rule's type: "" (all), "a", "c", "b". */
static int rule_type(const char *t, char *out)
{
	if (!t || !*t) {
		*out = 0;
		return 0;
	}
	if (strlen(t) == 1 && strchr("acb", t[0])) {
		*out = t[0];
		return 0;
	}
	return -EINVAL;
}

int nri_container_from(const void *container, const void *pod, struct nri_container *c, char *err,
		       size_t errlen)
{
	const Container *ct = container;
	const PodSandbox *p = pod;
	const Nri__Pkg__Api__V1alpha1__LinuxContainer *lx;
	size_t i;

	memset(c, 0, sizeof(*c));
	if (!ct || !ct->id || !*ct->id) {
		snprintf(err, errlen, "the runtime sent a container without an ID");
		return -EINVAL;
	}
	if (ct->pid > INT32_MAX) {
		snprintf(err, errlen, "container pid %u out of range", ct->pid);
		return -EINVAL;
	}
	c->id = ct->id;
	c->name = str_or_null(ct->name);
	c->pid = (int32_t)ct->pid;
	if (p) {
		c->pod_name = str_or_null(p->name);
		c->pod_namespace = str_or_null(p->namespace_);
		c->pod_uid = str_or_null(p->uid);
		c->runtime_handler = str_or_null(p->runtime_handler);
	}
	lx = ct->linux_container;
	if (!lx)
		return 0;
	if (lx->n_devices) {
		c->devices = calloc(lx->n_devices, sizeof(*c->devices));
		if (!c->devices)
			goto nomem;
	}
	for (i = 0; i < lx->n_devices; i++) {
		const Nri__Pkg__Api__V1alpha1__LinuxDevice *d = lx->devices[i];
		struct nri_device *o = &c->devices[c->ndevices];

		o->path = d->path;
		o->major = d->major;
		o->minor = d->minor;
		if (device_type(d->type, &o->type) < 0) {
			char path[512], type[64];

			devcg_escape(path, sizeof(path), d->path, (size_t)-1, 0);
			devcg_escape(type, sizeof(type), d->type, (size_t)-1, 0);
			snprintf(err, errlen, "device %s: type '%s' is none of c, b, u, p", path, type);
			goto inval;
		}
		c->ndevices++;
	}
	if (lx->resources && lx->resources->n_devices) {
		const Nri__Pkg__Api__V1alpha1__LinuxResources *r = lx->resources;

		c->rules = calloc(r->n_devices, sizeof(*c->rules));
		if (!c->rules)
			goto nomem;
		for (i = 0; i < r->n_devices; i++) {
			const Nri__Pkg__Api__V1alpha1__LinuxDeviceCgroup *d = r->devices[i];
			struct nri_rule *o = &c->rules[c->nrules];

			o->allow = d->allow;
			o->major = d->major ? d->major->value : -1;
			o->minor = d->minor ? d->minor->value : -1;
			o->access = d->access;
			if (rule_type(d->type, &o->type) < 0) {
				char type[64];

				devcg_escape(type, sizeof(type), d->type, (size_t)-1, 0);
				snprintf(err, errlen, "device rule %zu: type '%s' is none of a, c, b", i + 1, type);
				goto inval;
			}
			c->nrules++;
		}
	}
	return 0;
nomem:
	snprintf(err, errlen, "%s", strerror(ENOMEM));
	nri_container_free(c);
	return -ENOMEM;
inval:
	nri_container_free(c);
	return -EINVAL;
}

void nri_container_free(struct nri_container *c)
{
	free(c->devices);
	free(c->rules);
	memset(c, 0, sizeof(*c));
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* The plugin's handlers on libdevcg: the one file of devcg-nri that calls
 * the library (include/devcg.h only). A container as the plugin decoded it
 * becomes a struct devcg_container; StartContainer and Synchronize install
 * its policy (devcg_container_start), PostUpdateContainer puts it back when
 * the runtime re-installed its own program (devcg_container_updated),
 * RemoveContainer forgets it (devcg_container_forget), and after
 * Synchronize what is remembered of containers removed meanwhile goes
 * (devcg_container_prune). */
#include "nri.h"

#include <devcg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct nri_agent_opts agent;

static const char *runtime_name(enum devcg_runtime r)
{
	return r == DEVCG_RUNTIME_CRUN ? "crun" : r == DEVCG_RUNTIME_RUNC ? "runc" : "its own";
}

/* The library's view of C: DEVS and RULES have C's counts. */
static void to_devcg(const struct nri_container *c, struct devcg_container *dc,
		     struct devcg_container_device *devs, struct devcg_container_rule *rules)
{
	for (size_t i = 0; i < c->ndevices; i++)
		devs[i] = (struct devcg_container_device){ .path = c->devices[i].path, .type = c->devices[i].type,
							   .major = c->devices[i].major,
							   .minor = c->devices[i].minor };
	for (size_t i = 0; i < c->nrules; i++)
		rules[i] = (struct devcg_container_rule){ .allow = c->rules[i].allow, .type = c->rules[i].type,
							  .major = c->rules[i].major, .minor = c->rules[i].minor,
							  .access = c->rules[i].access };
	*dc = (struct devcg_container){
		.sz = sizeof(*dc),
		.id = c->id,
		.name = c->name,
		.pod_name = c->pod_name,
		.pod_namespace = c->pod_namespace,
		.pod_uid = c->pod_uid,
		.pid = c->pid,
		.runtime_handler = c->runtime_handler,
		.ndevices = c->ndevices,
		.devices = devs,
		.nrules = c->nrules,
		.rules = rules,
	};
}

static void opts_init(struct devcg_container_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sz = sizeof(*o);
	o->state_dir = agent.state_dir;
	o->no_systemd = agent.no_systemd;
}

static void outcome(const struct devcg_container_opts *o, struct nri_outcome *out)
{
	snprintf(out->cgroup, sizeof(out->cgroup), "%s", o->cgroup);
	if (!o->swapped)
		snprintf(out->what, sizeof(out->what), "devcg's policy in place (program %u), nothing to change",
			 o->prog_id);
	else if (o->systemd_unit[0])
		snprintf(out->what, sizeof(out->what),
			 "devcg's policy (program %u) in place of program %u, %s profile, %s: %u DeviceAllow= entries",
			 o->prog_id, o->replaced_id, runtime_name(o->runtime_used), o->systemd_unit,
			 o->systemd_entries);
	else
		snprintf(out->what, sizeof(out->what), "devcg's policy (program %u) in place of program %u, %s profile",
			 o->prog_id, o->replaced_id, runtime_name(o->runtime_used));
}

/* start or updated: the library call on C */
static int call(int (*fn)(const struct devcg_container *, struct devcg_container_opts *, struct devcg_error *),
		const struct nri_container *c, struct nri_outcome *out)
{
	struct devcg_container_device *devs = calloc(c->ndevices ? c->ndevices : 1, sizeof(*devs));
	struct devcg_container_rule *rules = calloc(c->nrules ? c->nrules : 1, sizeof(*rules));
	struct devcg_container dc;
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	int ret;

	if (!devs || !rules) {
		free(devs);
		free(rules);
		snprintf(out->error, sizeof(out->error), "%s", strerror(ENOMEM));
		return -ENOMEM;
	}
	to_devcg(c, &dc, devs, rules);
	opts_init(&o);
	ret = fn(&dc, &o, &err);
	if (ret < 0)
		snprintf(out->error, sizeof(out->error), "%s", err.msg[0] ? err.msg : strerror(-ret));
	else
		outcome(&o, out);
	free(devs);
	free(rules);
	return ret;
}

static int on_start(void *ctx, const struct nri_container *c, struct nri_outcome *out)
{
	(void)ctx;
	return call(devcg_container_start, c, out);
}

static int on_updated(void *ctx, const struct nri_container *c, struct nri_outcome *out)
{
	int ret;

	(void)ctx;
	ret = call(devcg_container_updated, c, out);
	if (ret == -ENOENT) {
		/* started before devcg knew it and not synchronized: not devcg's */
		snprintf(out->what, sizeof(out->what), "not a container devcg keeps, left alone");
		out->error[0] = '\0';
		return 0;
	}
	return ret;
}

static int on_removed(void *ctx, const struct nri_container *c, struct nri_outcome *out)
{
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	int ret;

	(void)ctx;
	opts_init(&o);
	ret = devcg_container_forget(c->id, &o, &err);
	if (ret < 0)
		snprintf(out->error, sizeof(out->error), "%s", err.msg[0] ? err.msg : strerror(-ret));
	else
		snprintf(out->what, sizeof(out->what), "forgotten");
	return ret;
}

/* after Synchronize: forget the containers removed while the agent was
 * away; > 0 (MSG says how many) when there were any */
static int on_synced(void *ctx, const char *const *ids, size_t n, char *msg, size_t len)
{
	struct devcg_container_opts o;
	struct devcg_error err = { 0 };
	size_t pruned = 0;
	int ret;

	(void)ctx;
	opts_init(&o);
	ret = devcg_container_prune(ids, n, &o, &pruned, &err);
	if (ret < 0) {
		snprintf(msg, len, "%s", err.msg[0] ? err.msg : strerror(-ret));
		return ret;
	}
	snprintf(msg, len, "forgot %zu container%s removed while the agent was away", pruned,
		 pruned == 1 ? "" : "s");
	return pruned > 0;
}

int nri_agent_handlers(struct nri_handlers *h, const struct nri_agent_opts *o)
{
	struct devcg_error err = { 0 };
	int ret;

	agent = *o;
	/* a pod (the DaemonSet) has a cgroup namespace of its own, from which
	 * the containers' cgroups cannot be found: the host's, with hostPID */
	ret = devcg_host_cgroupns(0, &err);
	if (ret > 0)
		nri_log(NRI_LOG_INFO, "entered the cgroup namespace of process 1 (this one hid the "
			"containers' cgroups)");
	else if (ret < 0)
		nri_log(NRI_LOG_WARNING, "%s: only containers below this process's cgroup namespace can be "
			"handled", err.msg);
	*h = (struct nri_handlers){ .start = on_start, .updated = on_updated, .removed = on_removed,
				    .synced = on_synced };
	return 0;
}

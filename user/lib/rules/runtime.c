// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Runtime profiles: the device list a container runtime really installs for
 * a config.json, not only its linux.resources.devices. Facts read from the
 * runtimes' sources (runc v1.1.5, crun 1.8.1, as in Debian 12) and checked
 * against the real programs by tests/kernel/test_runtimes.c:
 *
 * runc (libcontainer/specconv/spec_linux.go, CreateCgroupConfig and
 * createDevices; libcontainer/cgroups/devices/devices_emulator.go;
 * libcontainer/cgroups/ebpf/devicefilter/devicefilter.go):
 *  - the rules are linux.resources.devices in order, then AllowedDevices
 *    appended after them, so a deny of a default device is undone;
 *  - a default that has a path (/dev/null ...) is dropped when linux.devices
 *    has an entry with the same path; linux.devices entries get no rule;
 *  - the list is applied by an emulator of the v1 controller that starts
 *    from deny-all (a zero Emulator), on v1 and v2 alike; it refuses a rule
 *    that would trim access from an exact key while a wildcard key sharing
 *    it holds some of that access ("cannot punch hole"), and runc then
 *    fails to start the container; a rule without access is refused too;
 *  - on v2 the result becomes a chain where a rule matches when the request's
 *    access is a subset of the rule's, so denies on a default-allow policy
 *    decide differently from v1 when their access is partial.
 *
 * crun (src/libcrun/cgroup-resources.c, write_devices_resources_v1/_v2;
 * src/libcrun/ebpf.c, bpf_program_append_dev):
 *  - nothing at all when linux.resources.devices is empty: no program on v2,
 *    no write on v1, so every device is allowed;
 *  - otherwise on v2 one chain: its defaults, last first, then the
 *    resources rules, last first; the first rule that matches decides (type,
 *    major, minor, and the request's access a subset of the rule's), a rule
 *    of type 'a' with access rwm and no numbers matches all and ends the
 *    chain, and a request no rule matches is refused. So the defaults win
 *    over any resources rule, and a later resources rule over an earlier;
 *  - linux.devices entries get no rule.
 *
 * devcg enforces the v1 model (default + exception list), so a profile is
 * the list in v1 terms - runc: 'deny a', resources, defaults; crun: 'deny a',
 * resources, defaults (or 'allow a' for an empty list) - and is only given
 * when its v1 policy decides every request with some access exactly as the
 * runtime's v2 program does; otherwise it is an error naming a request that
 * differs. A request with no access bits (access(2) on a node) follows the
 * v1 semantics, where the runtimes' chains may differ.
 */
#include "rules/rules.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A resources list longer than this is refused: the check below is
 * quadratic in it. */
#define MAX_RUNTIME_RULES 1024

#define R(v, t, ma, mi, a) \
	{ .verb = DEVCG_VERB_##v, .type = DEVCG_##t, .major = ma, .minor = mi, .access = a }
#define RWM DEVCG_ACC_ALL
#define M DEVCG_ACC_MKNOD
#define ANY DEVCG_ANY

struct default_dev {
	const char *path; /* NULL: runc never drops it */
	struct devcg_rule rule;
};

/* runc 1.1.5, specconv.AllowedDevices, in its order */
static const struct default_dev runc_defaults[] = {
	{ NULL, R(ALLOW, CHAR, ANY, ANY, M) },
	{ NULL, R(ALLOW, BLOCK, ANY, ANY, M) },
	{ "/dev/null", R(ALLOW, CHAR, 1, 3, RWM) },
	{ "/dev/random", R(ALLOW, CHAR, 1, 8, RWM) },
	{ "/dev/full", R(ALLOW, CHAR, 1, 7, RWM) },
	{ "/dev/tty", R(ALLOW, CHAR, 5, 0, RWM) },
	{ "/dev/zero", R(ALLOW, CHAR, 1, 5, RWM) },
	{ "/dev/urandom", R(ALLOW, CHAR, 1, 9, RWM) },
	{ NULL, R(ALLOW, CHAR, 136, ANY, RWM) }, /* /dev/pts/N */
	{ NULL, R(ALLOW, CHAR, 5, 2, RWM) },     /* /dev/ptmx */
	{ NULL, R(ALLOW, CHAR, 10, 200, RWM) },  /* /dev/net/tun */
};

/* crun 1.8.1, default_devices of write_devices_resources_v2_internal */
static const struct devcg_rule crun_defaults[] = {
	R(ALLOW, CHAR, ANY, ANY, M), R(ALLOW, BLOCK, ANY, ANY, M), R(ALLOW, CHAR, 1, 3, RWM),
	R(ALLOW, CHAR, 1, 8, RWM),   R(ALLOW, CHAR, 1, 7, RWM),    R(ALLOW, CHAR, 5, 0, RWM),
	R(ALLOW, CHAR, 1, 5, RWM),   R(ALLOW, CHAR, 1, 9, RWM),    R(ALLOW, CHAR, 5, 1, RWM),
	R(ALLOW, CHAR, 136, ANY, RWM), R(ALLOW, CHAR, 5, 2, RWM),
};

static const struct devcg_rule deny_all = R(DENY, ALL, ANY, ANY, RWM);
static const struct devcg_rule allow_all = R(ALLOW, ALL, ANY, ANY, RWM);

#undef R
#undef RWM
#undef M
#undef ANY

/* A rule of a runtime's list and where it came from: >= 0 the index in
 * linux.resources.devices, -1 a default of the runtime, -2 devcg's own
 * 'deny a' for the runtime's starting point, -3 an exception of runc's
 * emulator (it stands for every rule that built it). */
struct sourced {
	struct devcg_rule rule;
	long origin;
};

/* The runtime's v2 program as a first-match chain. */
struct chain {
	struct sourced *r;
	size_t n;
	bool final_allow; /* when no rule matches */
};

const char *devcg_runtime_name(enum devcg_runtime rt)
{
	return rt == DEVCG_RUNTIME_RUNC ? "runc" : rt == DEVCG_RUNTIME_CRUN ? "crun" : "none";
}

static void rule_text(const struct devcg_rule *r, char *buf, size_t len)
{
	devcg_rule_format(r, buf, len);
}

static void origin_text(const struct sourced *s, enum devcg_runtime rt, char *buf, size_t len)
{
	char text[64];

	rule_text(&s->rule, text, sizeof(text));
	if (s->origin >= 0)
		snprintf(buf, len, "'%s' (linux.resources.devices[%ld])", text, s->origin);
	else if (s->origin == -3)
		snprintf(buf, len, "'%s' (an exception of %s's program)", text, devcg_runtime_name(rt));
	else
		snprintf(buf, len, "'%s' (a default of %s)", text, devcg_runtime_name(rt));
}

static bool chain_matches(const struct devcg_rule *r, uint8_t type, uint32_t major, uint32_t minor,
			  uint8_t access)
{
	/* ebpf.c / devicefilter.go: type, then (request & rule) == request,
	 * then major and minor unless wildcards */
	return (r->type == DEVCG_ALL || r->type == type) && (access & r->access) == access &&
	       (r->major == DEVCG_ANY || r->major == major) && (r->minor == DEVCG_ANY || r->minor == minor);
}

static bool chain_decide(const struct chain *c, uint8_t type, uint32_t major, uint32_t minor,
			 uint8_t access, const struct sourced **by)
{
	for (size_t i = 0; i < c->n; i++) {
		if (chain_matches(&c->r[i].rule, type, major, minor, access)) {
			*by = &c->r[i];
			return c->r[i].rule.verb == DEVCG_VERB_ALLOW;
		}
	}
	*by = NULL;
	return c->final_allow;
}

struct values {
	uint32_t *v;
	size_t n;
};

static int values_add(struct values *vs, uint32_t v)
{
	uint32_t *nv;

	if (v == DEVCG_ANY)
		return 0;
	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i] == v)
			return 0;
	nv = realloc(vs->v, (vs->n + 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	nv[vs->n++] = v;
	vs->v = nv;
	return 0;
}

/* A number no rule names, standing for all of them. */
static uint32_t unnamed(const struct values *vs)
{
	uint32_t v = 4000;

	for (size_t i = 0; i < vs->n; i++)
		if (vs->v[i] == v) {
			v++;
			i = (size_t)-1;
		}
	return v;
}

/* One request class: a type, major and minor standing for all like it. */
struct point {
	uint32_t major, minor;
};

static int point_add(struct point **v, size_t *n, uint32_t major, uint32_t minor)
{
	struct point *nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	nv[(*n)++] = (struct point){ major, minor };
	*v = nv;
	return 0;
}

/*
 * The numbers of type T that stand for every request: a request's decision
 * depends only on which rule keys match it. With the exact key, that is
 * the key itself; without it, the keys (MAJOR, *) and (*, MINOR): a major
 * without a (MAJOR, *) key behaves as one no rule names, and so does a
 * minor, so the named majors with an unnamed minor, the reverse, the
 * majors with (MAJOR, *) keys crossed with the minors with (*, MINOR) keys,
 * and two unnamed numbers cover every class.
 */
static int points_of(const struct chain *c, uint8_t t, struct point **pts, size_t *npts)
{
	struct values majors = { 0 }, minors = { 0 }, wmajors = { 0 }, wminors = { 0 };
	uint32_t umajor, uminor;
	size_t i, j;
	int ret = 0;

	*pts = NULL;
	*npts = 0;
	for (i = 0; i < c->n && !ret; i++) {
		const struct devcg_rule *r = &c->r[i].rule;

		if (r->type != t)
			continue;
		ret = values_add(&majors, r->major) ?: values_add(&minors, r->minor);
		if (!ret && r->major != DEVCG_ANY && r->minor != DEVCG_ANY)
			ret = point_add(pts, npts, r->major, r->minor);
		if (!ret && r->minor == DEVCG_ANY)
			ret = values_add(&wmajors, r->major);
		if (!ret && r->major == DEVCG_ANY)
			ret = values_add(&wminors, r->minor);
	}
	umajor = unnamed(&majors);
	uminor = unnamed(&minors);
	for (i = 0; i < majors.n && !ret; i++)
		ret = point_add(pts, npts, majors.v[i], uminor);
	for (i = 0; i < minors.n && !ret; i++)
		ret = point_add(pts, npts, umajor, minors.v[i]);
	for (i = 0; i < wmajors.n && !ret; i++)
		for (j = 0; j < wminors.n && !ret; j++)
			ret = point_add(pts, npts, wmajors.v[i], wminors.v[j]);
	if (!ret)
		ret = point_add(pts, npts, umajor, uminor);
	free(majors.v);
	free(minors.v);
	free(wmajors.v);
	free(wminors.v);
	return ret;
}

/* Compare the chain with the v1 policy on every class of request with
 * some access. */
static int check_equal(const struct chain *c, const struct devcg_policy *policy,
		       enum devcg_runtime rt, struct devcg_error *err)
{
	static const uint8_t types[2] = { DEVCG_CHAR, DEVCG_BLOCK };
	int ret = 0;

	for (int t = 0; t < 2 && !ret; t++) {
		struct point *pts;
		size_t npts, i;

		if (points_of(c, types[t], &pts, &npts)) {
			free(pts);
			return devcg_err(err, -ENOMEM, "out of memory");
		}
		for (i = 0; i < npts && !ret; i++) {
			for (uint8_t acc = 1; acc <= DEVCG_ACC_ALL && !ret; acc++) {
				const struct sourced *by;
				bool theirs = chain_decide(c, types[t], pts[i].major, pts[i].minor, acc, &by);
				int ours = devcg_policy_check(policy, types[t], pts[i].major, pts[i].minor, acc,
							      NULL, NULL);
				struct devcg_rule req = {
					.verb = DEVCG_VERB_ALLOW, .type = types[t], .access = acc,
					.major = pts[i].major, .minor = pts[i].minor,
				};
				char reqt[64], why[160] = "no rule matches it";

				if (ours < 0 || (ours == 1) == theirs)
					continue;
				rule_text(&req, reqt, sizeof(reqt));
				if (by) {
					char o[128];

					origin_text(by, rt, o, sizeof(o));
					snprintf(why, sizeof(why), "its first matching rule is %s", o);
				}
				ret = devcg_err(err, -EINVAL,
						"%s's device program %s %s (%s), where the same list in "
						"cgroup v1 semantics %s it; devcg cannot reproduce %s's "
						"program for this list",
						devcg_runtime_name(rt), theirs ? "allows" : "denies",
						reqt + strlen("allow "), why, ours ? "allows" : "denies",
						devcg_runtime_name(rt));
			}
		}
		free(pts);
	}
	return ret;
}

/*
 * runc's emulator refuses to trim access from an exact key while a wildcard
 * key that covers it holds some of that access (devices_emulator.go,
 * rmRule); the kernel would silently leave the device allowed.
 */
static int runc_hole(const struct devcg_policy *p, const struct sourced *s, long *where,
		     struct devcg_error *err)
{
	const struct devcg_rule *r = &s->rule;
	bool trims = (r->verb == DEVCG_VERB_ALLOW) == devcg_policy_default_allow(p);
	struct devcg_exception keys[3] = {
		{ .type = r->type, .major = DEVCG_ANY, .minor = r->minor },
		{ .type = r->type, .major = r->major, .minor = DEVCG_ANY },
		{ .type = r->type, .major = DEVCG_ANY, .minor = DEVCG_ANY },
	};

	if (r->type == DEVCG_ALL || !trims)
		return 0;
	for (int k = 0; k < 3; k++) {
		uint8_t held;
		char o[128], w[64];
		struct devcg_rule wr = { .verb = DEVCG_VERB_ALLOW, .type = r->type,
					 .major = keys[k].major, .minor = keys[k].minor };

		if (keys[k].major == r->major && keys[k].minor == r->minor)
			continue;
		held = devcg_policy_access_of(p, &keys[k]);
		if (!(held & r->access))
			continue;
		wr.access = held;
		rule_text(&wr, w, sizeof(w));
		origin_text(s, DEVCG_RUNTIME_RUNC, o, sizeof(o));
		*where = s->origin;
		return devcg_err(err, -EINVAL,
				 "runc refuses this list: %s would punch a hole in the wildcard "
				 "exception '%s' (runc's devices emulator), so the container would not start",
				 o, w + strlen("allow "));
	}
	return 0;
}

static int push(struct sourced **v, size_t *n, const struct devcg_rule *r, long origin)
{
	struct sourced *nv = realloc(*v, (*n + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	nv[*n] = (struct sourced){ .rule = *r, .origin = origin };
	*v = nv;
	(*n)++;
	return 0;
}

static bool path_listed(const char *path, const char *const *paths, size_t npaths)
{
	for (size_t i = 0; path && i < npaths; i++)
		if (paths[i] && !strcmp(paths[i], path))
			return true;
	return false;
}

int devcg_runtime_rules(struct devcg_rules *rules, enum devcg_runtime rt, const struct devcg_rule *res,
			size_t n, const char *const *paths, size_t npaths, long *where,
			struct devcg_error *err)
{
	struct sourced *list = NULL, *chain_rules = NULL;
	struct devcg_rule *flat = NULL;
	struct devcg_policy *policy = NULL;
	struct chain chain = { 0 };
	size_t len = 0, nchain = 0, i;
	int ret = 0;

	*where = -1;
	if (rt != DEVCG_RUNTIME_RUNC && rt != DEVCG_RUNTIME_CRUN)
		return devcg_err(err, -EINVAL, "unknown runtime %d (runc or crun)", (int)rt);
	if (n > MAX_RUNTIME_RULES)
		return devcg_err(err, -E2BIG, "%zu device rules: a %s profile takes at most %d",
				 n, devcg_runtime_name(rt), MAX_RUNTIME_RULES);
	if (rt == DEVCG_RUNTIME_CRUN && n == 0) /* crun installs nothing */
		return devcg_rules_append(rules, &allow_all, 1, err);

	/* the list in v1 terms: the starting deny-all, resources, defaults */
	ret = push(&list, &len, &deny_all, -2);
	for (i = 0; i < n && !ret; i++)
		ret = push(&list, &len, &res[i], (long)i);
	if (rt == DEVCG_RUNTIME_RUNC) {
		for (i = 0; i < sizeof(runc_defaults) / sizeof(runc_defaults[0]) && !ret; i++)
			if (!path_listed(runc_defaults[i].path, paths, npaths))
				ret = push(&list, &len, &runc_defaults[i].rule, -1);
	} else {
		for (i = 0; i < sizeof(crun_defaults) / sizeof(crun_defaults[0]) && !ret; i++)
			ret = push(&list, &len, &crun_defaults[i], -1);
	}
	policy = devcg_policy_new();
	if (ret || !policy) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < len && !ret; i++) {
		if (rt == DEVCG_RUNTIME_RUNC)
			ret = runc_hole(policy, &list[i], where, err);
		if (!ret)
			ret = devcg_policy_apply(policy, &list[i].rule, err);
	}
	if (ret)
		goto out;

	if (rt == DEVCG_RUNTIME_RUNC) {
		/* devicefilter.go: the emulator's exceptions, default as it ends */
		size_t count = devcg_policy_count(policy);
		struct devcg_exception *ex = calloc(count ? count : 1, sizeof(*ex));
		uint8_t verb = devcg_policy_default_allow(policy) ? DEVCG_VERB_DENY : DEVCG_VERB_ALLOW;

		if (!ex) {
			ret = devcg_err(err, -ENOMEM, "out of memory");
			goto out;
		}
		count = devcg_policy_collect(policy, ex);
		for (i = 0; i < count && !ret; i++) {
			struct devcg_rule r = { .verb = verb, .type = ex[i].type, .access = ex[i].access,
						.major = ex[i].major, .minor = ex[i].minor };

			ret = push(&chain_rules, &nchain, &r, -3);
		}
		free(ex);
		chain.final_allow = devcg_policy_default_allow(policy);
	} else {
		/* ebpf.c: defaults last first, then resources last first; a
		 * rule that matches everything ends the chain */
		bool wildcard = false;

		for (i = len; i-- > 1 && !ret && !wildcard;) {
			const struct devcg_rule *r = &list[i].rule;

			ret = push(&chain_rules, &nchain, r, list[i].origin);
			wildcard = r->type == DEVCG_ALL;
		}
		chain.final_allow = false;
	}
	if (ret) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	chain.r = chain_rules;
	chain.n = nchain;
	ret = check_equal(&chain, policy, rt, err);
	if (ret)
		goto out;

	flat = calloc(len, sizeof(*flat));
	if (!flat) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < len; i++)
		flat[i] = list[i].rule;
	ret = devcg_rules_append(rules, flat, len, err);
out:
	free(flat);
	free(list);
	free(chain_rules);
	devcg_policy_free(policy);
	return ret;
}

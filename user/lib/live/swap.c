// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The swap: put a new filter version in place of whatever device program
 * a cgroup has, with no moment of no filter or a deny-all one. The kernel
 * side is kernel/bpf/cgroup.c: with BPF_F_ALLOW_MULTI, BPF_F_REPLACE swaps
 * the named program in place (or fails with ENOENT when it is gone: our
 * compare-and-swap); in override and exclusive modes, attaching replaces
 * the one program in place.
 */
#include "live/attached.h"
#include "live/progread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#define CAS_RETRIES 1000

static const char *why(int code)
{
	return devcg_why(code, DEVCG_CAPS_FILTER);
}

/* Put back the program at TARGET of BEFORE after a failed check (NEW_FD in
 * its place); a negative errno if that failed too. One that hung on a link
 * comes back attached directly: the link is gone. */
static int roll_back(int cg_fd, const struct attached *before, int target, int new_fd)
{
	int ret;

	if (target < 0) {
		ret = bpf_prog_detach2(new_fd, cg_fd, BPF_CGROUP_DEVICE);
	} else if (before->mode == DEVCG_MODE_MULTI) {
		LIBBPF_OPTS(bpf_prog_attach_opts, o, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE,
			    .replace_prog_fd = new_fd);
		ret = bpf_prog_attach_opts(before->fds[target], cg_fd, BPF_CGROUP_DEVICE, &o);
	} else {
		ret = bpf_prog_attach(before->fds[target], cg_fd, BPF_CGROUP_DEVICE,
				      before->mode == DEVCG_MODE_OVERRIDE ? BPF_F_ALLOW_OVERRIDE : 0);
	}
	return ret ? -errno : 0;
}

static int attach_failed(struct devcg_cgroup *cg, uint32_t flags, int code, struct devcg_error *err)
{
	char cause[1024];

	if (code != -EPERM)
		return devcg_err(err, code, "cannot attach the filter to %s: %s", devcg_cgroup_rel(cg), why(code));
	devcg_attach_refusal(cg, flags, cause, sizeof(cause));
	return devcg_err(err, code, "cannot attach the filter to %s: %s", devcg_cgroup_rel(cg), cause);
}

/*
 * Take the place of program PROG_ID of CG, attached through LINK: a
 * bpf_link that another process holds, and that the kernel detaches when
 * the last fd of it closes. Updating the link would leave our filter alive
 * only as long as that process; so ours is attached directly beside it
 * (multi mode), then the link is detached. In between both programs run,
 * and a device is allowed only when each allows it (bpf_prog_run_array_cg
 * in kernel/bpf/cgroup.c), so a device both allow stays allowed.
 */
static int adopt_linked(struct devcg_cgroup *cg, int link, uint32_t prog_id, int new_fd,
			struct devcg_error *err)
{
	struct bpf_link_info info = { 0 };
	__u32 len = sizeof(info);
	int ret;

	if (bpf_prog_attach(new_fd, cg->fd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI))
		return attach_failed(cg, BPF_F_ALLOW_MULTI, -errno, err);
	/* its holder may have put another program in the link meanwhile */
	if (bpf_obj_get_info_by_fd(link, &info, &len))
		ret = devcg_err(err, -errno, "cannot read the bpf_link of program %u: %s", prog_id,
				why(-errno));
	else if (info.prog_id != prog_id || info.cgroup.cgroup_id != cg->ino)
		ret = devcg_err(err, -ENOENT, "program %u was replaced by another writer", prog_id);
	else if (bpf_link_detach(link))
		ret = devcg_err(err, -errno, "cannot detach the bpf_link %u of program %u from %s: %s",
				info.id, prog_id, devcg_cgroup_rel(cg), why(-errno));
	else
		return 0;
	bpf_prog_detach2(new_fd, cg->fd, BPF_CGROUP_DEVICE);
	return ret;
}

/*
 * The version to swap in for POLICY: from opts->cache when the caller gave
 * one (not for audit: an audit filter keeps the ring of the one it
 * replaces), else loaded. A cached program that is already attached to
 * this cgroup beside the one replaced is loaded anew instead: the kernel
 * does not attach one program twice to one cgroup. *PIN: the cache's entry
 * on a hit (V's fd is then the cache's own, let go of by
 * devcg_cache_unpin(), not closed).
 */
static int load_version(const struct devcg_policy *policy, const struct devcg_replace_opts *opts,
			const struct attached *before, int target, struct devcg_filter_version *v,
			struct devcg_cache_entry **pin, struct devcg_error *err)
{
	const char *fail_at = DEVCG_OPT(opts, devcg_replace_opts, fail_at, NULL);
	struct devcg_cache *cache = DEVCG_OPT(opts, devcg_replace_opts, cache, NULL);
	bool audit = DEVCG_OPT(opts, devcg_replace_opts, audit, false);
	uint32_t i;
	int ret;

	*pin = NULL;
	if (cache && !audit) {
		ret = devcg_cache_load(cache, policy, fail_at, v, pin, err);
		for (i = 0; !ret && i < before->n; i++)
			if (before->ids[i] == v->prog_id && (int)i != target) {
				if (*pin)
					v->prog_fd = -1;
				devcg_cache_unpin(*pin);
				*pin = NULL;
				devcg_filter_close(v);
				break;
			}
		if (ret || v->prog_fd >= 0)
			return ret;
	}
	return devcg_filter_load(policy, audit,
				 audit && target >= 0 && before->audit[target] ? before->fds[target] : -1,
				 fail_at, v, err);
}

/* replace_once() found a case where the kernel cannot compare and swap for
 * it: the caller takes the cgroup's lock and calls it again */
#define NEEDS_LOCK 1

/*
 * A swap of a cached program by BPF_F_REPLACE failed with EINVAL: another
 * writer attached that very program to the cgroup since the query (the
 * kernel refuses one program twice on a cgroup with EINVAL, before it
 * looks for the one to replace). Read the cgroup's programs again: with
 * EXPECT (compare-and-swap), REPLACED gone is the caller's -ENOENT; else
 * -EAGAIN, which replace_resolved() retries.
 */
static int cached_attached_meanwhile(struct devcg_cgroup *cg, uint32_t replaced, uint32_t expect,
				     struct devcg_error *err)
{
	struct attached now;
	bool there = false;

	if (!devcg_query_ids(cg->fd, &now, NULL))
		for (uint32_t i = 0; i < now.n; i++)
			there |= now.ids[i] == replaced;
	if (expect && !there)
		return devcg_err(err, -ENOENT, "program %u was replaced by another writer", replaced);
	return devcg_err(err, -EAGAIN, "the device programs of %s changed while devcg swapped",
			 devcg_cgroup_rel(cg));
}

/*
 * TAKE (NULL but for a take-over): the programs whose rules POLICY was
 * built from, each read; expect_prog_id is replaced and the others are
 * then detached one by one, where otherwise several programs are refused
 * without --force.
 *
 * WHOLE: POLICY is the caller's whole new policy (devcg_replace()), not
 * one edited from the programs read. Several programs, others' among
 * them, are then taken over without --force when devcg reads each one
 * back (one it cannot read may do more than decide, and is not dropped
 * unasked), and in this order, which keeps the old policy O (what they
 * all allow together) and the new one N apart only where they differ:
 * devcg's filter first takes the place of one of them (BPF_F_REPLACE:
 * never a moment without it), then the others are detached one by one.
 * While some run beside it, a request is allowed only when each allows
 * it, so what is allowed at every step holds O and N together, and is
 * within N: a request both allow stays allowed throughout, and none that
 * N refuses is allowed from the first step on. (Detaching first would
 * allow, between the steps, what only the detached programs refused.) A
 * failure between the steps leaves such a step, which a replace again
 * completes.
 */
static int replace_once(struct devcg_cgroup *cg, const struct devcg_policy *policy,
			struct devcg_replace_opts *opts, bool locked, const struct taking *take,
			bool whole, struct devcg_error *err)
{
	const char *fail_at = DEVCG_OPT(opts, devcg_replace_opts, fail_at, NULL);
	uint32_t expect = DEVCG_OPT(opts, devcg_replace_opts, expect_prog_id, 0);
	bool force = DEVCG_OPT(opts, devcg_replace_opts, force, false);
	bool no_systemd = DEVCG_OPT(opts, devcg_replace_opts, no_systemd, false);
	struct devcg_cache *cache = DEVCG_OPT(opts, devcg_replace_opts, cache, NULL);
	struct devcg_filter_version v = { .prog_fd = -1 };
	struct devcg_cache_entry *pin = NULL, *before_pin = NULL;
	struct attached before, after;
	int target = -1, ret, i, link = -1;
	bool audit, ours = true, linked = false, proven = false;
	uint32_t flags = BPF_F_ALLOW_MULTI;
	char ids[512];

	if (devcg_fault(fail_at, "query"))
		return devcg_err(err, -EIO, "injected failure at query");
	audit = DEVCG_OPT(opts, devcg_replace_opts, audit, false);
	/*
	 * Through a cache, on a cgroup of no unit (no systemd program to
	 * leave) and without a testing aid: the one program in multi mode is
	 * named by the cache's own fd when the cache holds it, and a swap of
	 * it by BPF_F_REPLACE proves what it did (below); anything else is
	 * queried in full.
	 */
	ret = 1;
	if (cache && !audit && !cg->unit[0] && !fail_at && !take) {
		ret = devcg_query_one(cache, cg->fd, &before, &before_pin, err);
		proven = !ret;
	}
	if (ret == 1)
		ret = devcg_query_attached(cg->fd, false, &before, err);
	/* whose the programs are matters only to choose among several, to
	 * keep an audit ring and on a unit's cgroup: one program alone is
	 * replaced whatever it is (the fast path skips reading it) */
	if (!ret && (before.n > 1 || audit || cg->unit[0]))
		ret = devcg_classify_attached(&before, err);
	if (ret)
		return ret;
	devcg_leave_systemds(cg, &before);
	devcg_list_ids(&before, ids, sizeof(ids));
	for (i = 0; i < (int)before.n; i++)
		if (expect ? before.ids[i] == expect : before.devcg[i] && target < 0)
			target = i;
	if (expect && target < 0) {
		ret = devcg_err(err, -ENOENT, "program %u is no longer attached to %s", expect, devcg_cgroup_rel(cg));
		goto out;
	}
	/* only BPF_F_REPLACE of one program in multi mode fails when another
	 * writer got there first; a first install (nothing to name), several
	 * programs (or an adoption half done) and the in-place modes are
	 * decided by one devcg writer at a time, under the lock */
	if (!locked && (before.n != 1 || before.mode != DEVCG_MODE_MULTI)) {
		ret = NEEDS_LOCK;
		goto out;
	}
	/* a program came or went since they were read: read them again */
	if (take && !devcg_taking_same(take, &before)) {
		ret = devcg_err(err, -EAGAIN, "the device programs of %s changed while devcg read them (now %s)",
				devcg_cgroup_rel(cg), ids);
		goto out;
	}
	if (before.n > 1 && !force && !take && whole && devcg_blocking(&before, target, no_systemd)) {
		struct devcg_error why_not = { 0 };
		uint32_t bad = devcg_first_unreadable(&before, no_systemd, &why_not);

		if (bad) {
			ret = devcg_err(err, -EBUSY,
					"%s has %u device programs attached (%s), and devcg cannot read the rules "
					"of program %u (%s): devcg takes over only programs it can read; pass "
					"--force to replace them all", devcg_cgroup_rel(cg), before.n, ids, bad,
					why_not.msg);
			goto out;
		}
	} else if (before.n > 1 && !force && !take && devcg_blocking(&before, target, no_systemd)) {
		ret = devcg_err(err, -EBUSY,
				"%s has %u device programs attached (%s); devcg replaces one "
				"program: pass --force to replace them all",
				devcg_cgroup_rel(cg), before.n, ids);
		goto out;
	}
	if (target < 0 && before.n)
		target = 0; /* adopt the foreign program */

	ret = load_version(policy, opts, &before, target, &v, &pin, err);
	if (ret)
		goto out;
	if (devcg_fault(fail_at, "attach")) {
		ret = devcg_err(err, -EIO, "injected failure at attach");
	} else if (target < 0) {
		/* first install */
		if (bpf_prog_attach(v.prog_fd, cg->fd, BPF_CGROUP_DEVICE, flags))
			ret = -errno;
	} else if (before.mode == DEVCG_MODE_MULTI) {
		LIBBPF_OPTS(bpf_prog_attach_opts, o, .flags = BPF_F_ALLOW_MULTI | BPF_F_REPLACE,
			    .replace_prog_fd = before.fds[target]);
		if (bpf_prog_attach_opts(v.prog_fd, cg->fd, BPF_CGROUP_DEVICE, &o))
			ret = -errno;
		/* not found as a direct attachment: it may hang on a bpf_link */
		if (ret == -ENOENT && (link = devcg_link_of(cg->ino, before.ids[target])) >= 0) {
			linked = true;
			ret = locked ? adopt_linked(cg, link, before.ids[target], v.prog_fd, err)
				     : NEEDS_LOCK;
		}
	} else {
		/* one program in override or exclusive mode: replaced in place */
		flags = before.mode == DEVCG_MODE_OVERRIDE ? BPF_F_ALLOW_OVERRIDE : 0;
		if (bpf_prog_attach(v.prog_fd, cg->fd, BPF_CGROUP_DEVICE, flags))
			ret = -errno;
	}
	/* (adopt_linked() says itself what failed) */
	if (ret == -EINVAL && pin && target >= 0 && before.mode == DEVCG_MODE_MULTI && !linked)
		ret = cached_attached_meanwhile(cg, before.ids[target], expect, err);
	else if (ret == -ENOENT && target >= 0 && !linked)
		ret = devcg_err(err, -ENOENT, "program %u was replaced by another writer",
				before.ids[target]);
	else if (ret < 0 && !linked && !devcg_fault(fail_at, "attach"))
		ret = attach_failed(cg, flags, ret, err);
	if (ret)
		goto out;

	/* --force, or a take-over: the new filter is in place; only now drop
	 * the others, one by one (while any runs beside it, a request is
	 * allowed only when it allows it too: the order WHOLE above says) */
	for (i = 0; i < (int)before.n; i++) {
		if (i == target)
			continue;
		ret = devcg_fault(fail_at, "detach") ? -EIO : devcg_detach_one(cg->fd, cg->ino, &before, (uint32_t)i);
		if (ret < 0) {
			ret = devcg_err(err, ret, "the filter is attached, but program %u could not "
					"be detached: %s", before.ids[i], why(ret));
			goto out;
		}
	}

	/*
	 * Confirm that exactly the new program is attached. Not needed after
	 * a swap by BPF_F_REPLACE of the one program read, in multi mode
	 * (PROVEN): the kernel replaced that very program in place (or failed
	 * with ENOENT, above), so the new one is the cgroup's only program
	 * but for one another writer attached since the query, which a query
	 * now could not tell from one attached just after it.
	 */
	proven = proven && target == 0 && !linked;
	ret = proven			       ? 0
	      : devcg_fault(fail_at, "verify") ? -EIO
	      : cg->unit[0]		       ? devcg_query_attached(cg->fd, true, &after, err)
					       : devcg_query_ids(cg->fd, &after, err);
	if (!ret && !proven) {
		devcg_leave_systemds(cg, &after);
		if (after.n != 1 || after.ids[0] != v.prog_id) {
			devcg_list_ids(&after, ids, sizeof(ids));
			ret = devcg_err(err, -EAGAIN, "after the swap %s has programs %s, expected %u only",
					devcg_cgroup_rel(cg), ids, v.prog_id);
			for (ours = false, i = 0; i < (int)after.n; i++)
				ours |= after.ids[i] == v.prog_id;
		}
		devcg_attached_close(&after);
	} else if (ret == -EIO) {
		devcg_err(err, ret, "injected failure at verify");
	}
	/*
	 * Put the previous program back. In multi mode the kernel checks that
	 * ours is still the one replaced; in the other modes only our own look
	 * does, so another writer's program is never overwritten.
	 */
	if (ret && before.n <= 1 && (ours || before.mode == DEVCG_MODE_MULTI)) {
		int rb = roll_back(cg->fd, &before, target, v.prog_fd);

		if (rb && rb != -ENOENT && err)
			snprintf(err->msg + strlen(err->msg), sizeof(err->msg) - strlen(err->msg),
				 "; putting back program %u failed too: %s",
				 target >= 0 ? before.ids[target] : 0, why(rb));
	}
	if (ret)
		goto out;
	if (opts && DEVCG_OPTS_HAS(opts, devcg_replace_opts, replaced_id)) {
		opts->prog_id = v.prog_id;
		opts->replaced_id = target >= 0 ? before.ids[target] : 0;
	}
	if (DEVCG_OPTS_HAS(opts, devcg_replace_opts, cache_hit))
		opts->cache_hit = pin != NULL;
out:
	if (link >= 0)
		close(link);
	/* the cache's own fds are let go of, not closed */
	if (pin)
		v.prog_fd = -1;
	if (before_pin)
		before.fds[0] = -1;
	devcg_cache_unpin(pin);
	devcg_cache_unpin(before_pin);
	devcg_filter_close(&v);
	devcg_attached_close(&before);
	return ret;
}

/*
 * A systemd unit's own cgroup: looked up before the swap, since systemd's
 * program stays in place beside devcg's (devcg_leave_systemds()) and allow/deny
 * may start from the unit's policy (read_own()).
 */
static int systemd_unit(struct devcg_cgroup *cg, const struct devcg_replace_opts *opts,
			struct devcg_error *err)
{
	int ret;

	if (DEVCG_OPT(opts, devcg_replace_opts, no_systemd, false))
		return 0;
	ret = devcg_systemd_unit_of(cg, cg->unit, sizeof(cg->unit), NULL, 0, err);
	return ret < 0 ? ret : 0;
}

/*
 * After the swap, the unit's DeviceAllow= is widened to hold the policy now
 * in place (systemd.c), so that the program systemd attaches on its next
 * reload never refuses what devcg allows. After, not before: widened first,
 * systemd's program alone (a first install) would allow the wider entries
 * for a moment, and a failed swap would leave them; widened after, a device
 * the new policy adds is refused until systemd has the entry, and nothing
 * that was allowed before and after is ever refused.
 */
static int systemd_widen(struct devcg_cgroup *cg, const struct devcg_policy *policy,
			 struct devcg_replace_opts *opts, bool say_in_place, struct devcg_error *err)
{
	bool has = opts && DEVCG_OPTS_HAS(opts, devcg_replace_opts, systemd_entries);
	size_t sent = 0;
	int ret;

	if (has) {
		opts->systemd_unit[0] = '\0';
		opts->systemd_entries = 0;
	}
	/* (on any cgroup: what follows a failed systemd step can be tested
	 * without systemd) */
	if (devcg_fault(DEVCG_OPT(opts, devcg_replace_opts, fail_at, NULL), "systemd"))
		ret = devcg_err(err, -EIO, "injected failure at systemd");
	else if (!cg->unit[0])
		return 0;
	else
		ret = devcg_systemd_widen(cg->unit, policy, &sent, err);
	if (ret && !say_in_place) /* the caller says what it does about it */
		return devcg_err_wrap(err, ret, "keeping systemd's %s in step failed", cg->unit[0] ? cg->unit :
				      "unit");
	if (ret)
		return devcg_err_wrap(err, ret, "devcg's filter is in place on %s, but a reload of %s "
				      "will refuse the devices it does not list", devcg_cgroup_rel(cg), cg->unit);
	if (has) {
		snprintf(opts->systemd_unit, sizeof(opts->systemd_unit), "%s", cg->unit);
		opts->systemd_entries = (uint32_t)sent;
	}
	return 0;
}

/* Where the kernel cannot compare and swap (a first install, a linked
 * program, the in-place modes), devcg writers take the cgroup's lock
 * (lock.c); a swap in multi mode needs none. */
static int replace_resolved(struct devcg_cgroup *cg, const struct devcg_policy *policy,
			    struct devcg_replace_opts *opts, bool take_over, struct devcg_error *err)
{
	struct devcg_lock lock = { .fd = -1 };
	int ret, tries;
	/* a plain replace (not compare-and-swap) goes on when another writer
	 * swapped the program between our query and our attach */
	bool cas = DEVCG_OPT(opts, devcg_replace_opts, expect_prog_id, 0) != 0;

	for (tries = 0; tries < 10; tries++) {
		ret = replace_once(cg, policy, opts, lock.fd >= 0, NULL, take_over, err);
		if (ret == NEEDS_LOCK) {
			ret = devcg_lock_cgroup(cg, &lock, err);
			if (ret)
				break;
			tries--; /* the same try again, under the lock */
			continue;
		}
		if (ret != -EAGAIN && (ret != -ENOENT || cas))
			break;
	}
	devcg_lock_release(&lock);
	return ret;
}

int devcg_replace(const char *cgroup, const struct devcg_policy *policy,
		  struct devcg_replace_opts *opts, struct devcg_error *err)
{
	return devcg_replace_taking(cgroup, policy, opts, true, err);
}

int devcg_replace_taking(const char *cgroup, const struct devcg_policy *policy,
			 struct devcg_replace_opts *opts, bool take_over, struct devcg_error *err)
{
	struct devcg_cgroup cg;
	int ret;

	if ((ret = DEVCG_REPLACE_OPTS_VALID(opts, err)))
		return ret;
	if (devcg_fault(DEVCG_OPT(opts, devcg_replace_opts, fail_at, NULL), "resolve"))
		return devcg_err(err, -EIO, "injected failure at resolve");
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_WRITE, &cg, err);
	if (!ret)
		ret = systemd_unit(&cg, opts, err);
	if (!ret)
		ret = replace_resolved(&cg, policy, opts, take_over, err);
	if (!ret)
		ret = systemd_widen(&cg, policy, opts, true, err);
	if (!ret && DEVCG_OPTS_HAS(opts, devcg_replace_opts, cgroup))
		snprintf(opts->cgroup, sizeof(opts->cgroup), "%s", devcg_cgroup_rel(&cg));
	devcg_cgroup_close(&cg);
	return ret;
}

/* The live devcg policy of CG (allow-all when there is none) and its id;
 * *OTHERS: how many other programs a swap would detach (with FORCE, or
 * systemd's under NO_SYSTEMD), which a swap must be made for even when
 * the policy read needs no change. */
static int read_own(struct devcg_cgroup *cg, bool force, bool no_systemd, struct devcg_policy **policy,
		    uint32_t *id, bool *audit, uint32_t *others, struct taking *take, struct devcg_error *err)
{
	struct devcg_error why_not = { 0 };
	struct attached a;
	uint32_t i;
	char ids[512];
	int ret;

	*policy = NULL;
	*id = 0;
	*audit = false;
	*others = 0;
	take->n = 0;
	ret = devcg_query_attached(cg->fd, true, &a, err);
	if (!ret && cg->unit[0]) {
		bool systemds = false;

		for (i = 0; i < a.n; i++)
			systemds |= a.systemd[i];
		devcg_leave_systemds(cg, &a);
		/* only systemd's program: start from what it enforces */
		if (systemds && !a.n && !force) {
			devcg_attached_close(&a);
			return devcg_systemd_policy(cg->unit, NULL, policy, err);
		}
	}
	/* several programs, another's among them: what they allow together */
	if (!ret && a.n > 1 && !force) {
		for (i = 0; i < a.n && (a.devcg[i] || (no_systemd && a.systemd[i])); i++)
			;
		if (i < a.n) {
			ret = devcg_read_all(cg, &a, no_systemd, policy, id, audit, others, take, err);
			devcg_attached_close(&a);
			return ret;
		}
	}
	/* without our filter, one foreign program (a runtime's) whose rules
	 * the reader reads back (progread.c) is the policy to start from,
	 * and the program a swap takes over, by compare-and-swap of its id */
	if (!ret && a.n == 1 && !a.devcg[0] && !force) {
		struct devcg_reader *r = NULL;
		int rr = devcg_reader_open(a.fds[0], a.ids[0], NULL, &r, &why_not);

		if (!rr)
			rr = devcg_reader_policy(r, policy, &why_not);
		devcg_reader_free(r);
		if (!rr) {
			*id = a.ids[0];
			*others = 1;
			devcg_attached_close(&a);
			return 0;
		}
	}
	/* otherwise a foreign program's rules cannot be read: one rule
	 * applied to allow-all would silently drop them */
	for (i = 0; !ret && i < a.n && !a.devcg[i]; i++)
		;
	if (!ret && a.n && i == a.n && !force) {
		devcg_list_ids(&a, ids, sizeof(ids));
		ret = devcg_err(err, -EBUSY,
				"%s has device programs of others (%s) and no devcg filter; devcg cannot "
				"read their rules%s%s%s, so one rule would replace them all: install the whole "
				"policy with 'devcg replace' first, or pass --force to start from allow-all",
				devcg_cgroup_rel(cg), ids, why_not.msg[0] ? " (" : "", why_not.msg,
				why_not.msg[0] ? ")" : "");
	}
	for (i = 0; !ret && i < a.n; i++)
		*others += !a.devcg[i] && (force || (no_systemd && a.systemd[i]));
	for (i = 0; !ret && i < a.n; i++) {
		if (!a.devcg[i])
			continue;
		ret = devcg_filter_read(a.fds[i], policy, audit, err);
		ret = ret == 1 ? 0 : ret < 0 ? ret : -EAGAIN;
		*id = a.ids[i];
		break;
	}
	devcg_attached_close(&a);
	if (!ret && !*policy && !(*policy = devcg_policy_new()))
		ret = devcg_err(err, -ENOMEM, "out of memory");
	return ret;
}

/* devcg_update()'s edit: one rule, applied as a write to devices.allow/deny. */
static int apply_rule(struct devcg_policy *policy, void *rule, struct devcg_error *err)
{
	return devcg_policy_apply(policy, rule, err);
}

int devcg_update(const char *cgroup, const struct devcg_rule *rule,
		 struct devcg_replace_opts *opts, struct devcg_error *err)
{
	int ret = rule ? devcg_rules_ancestors_refuse(cgroup, rule, NULL,
						      !DEVCG_OPT(opts, devcg_replace_opts, no_systemd, false), err) : 0;

	return ret ? ret : devcg_update_edit(cgroup, apply_rule, (void *)rule, opts, NULL, err);
}

/* Was CG removed since it was opened? A removed cgroup's directory has no
 * files left. */
static bool cgroup_gone(const struct devcg_cgroup *cg)
{
	return faccessat(cg->fd, "cgroup.procs", F_OK, 0) && (errno == ENOENT || errno == ENODEV);
}

/* devcg_update_rules()'s edit: every rule, in order, or an error (the
 * policy read is then dropped, not swapped). */
static int apply_rules(struct devcg_policy *policy, void *rules, struct devcg_error *err)
{
	return devcg_policy_apply_all(policy, rules, err);
}

int devcg_update_rules(const char *cgroup, const struct devcg_rules *rules,
		       struct devcg_replace_opts *opts, struct devcg_error *err)
{
	int ret;

	if (!rules || !devcg_rules_count(rules))
		return devcg_err(err, -EINVAL, "no rule to apply");
	ret = devcg_rules_ancestors_refuse(cgroup, NULL, rules, !DEVCG_OPT(opts, devcg_replace_opts, no_systemd, false),
					   err);
	return ret ? ret : devcg_update_rules_as_checked(cgroup, rules, opts, err);
}

int devcg_update_rules_as_checked(const char *cgroup, const struct devcg_rules *rules,
				  struct devcg_replace_opts *opts, struct devcg_error *err)
{
	return devcg_update_edit(cgroup, apply_rules, (void *)rules, opts, NULL, err);
}

/*
 * The compare-and-swap loop of devcg_update(), for any change of the live
 * policy (one rule; several at once for hot-plug): EDIT
 * changes the live policy read (again on each retry), and the result is
 * swapped in the same way, systemd step included. EDIT returns 0 to swap,
 * 1 when the policy needs no change (nothing is swapped; opts->prog_id is
 * the program read), or a negative errno.
 */
int devcg_update_edit(const char *cgroup, devcg_policy_edit_fn edit, void *ctx,
		      struct devcg_replace_opts *opts, struct devcg_edit_io *io, struct devcg_error *err)
{
	DEVCG_OPTS(devcg_replace_opts, o);
	unsigned int seed = (unsigned int)getpid() ^ (unsigned int)time(NULL);
	struct devcg_policy *swapped = NULL; /* the policy put in place */
	struct devcg_cgroup cg;
	bool need_lock = false;
	int ret, tries;

	if (io)
		io->swapped = io->others_replaced = false;
	if ((ret = DEVCG_REPLACE_OPTS_VALID(opts, err)))
		return ret;
	if (opts)
		memcpy(&o, opts, opts->sz < sizeof(o) ? opts->sz : sizeof(o));
	o.sz = sizeof(o);
	o.prog_id = o.replaced_id = 0;
	o.cache_hit = false;
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_WRITE, &cg, err);
	if (!ret)
		ret = systemd_unit(&cg, &o, err);
	for (tries = 0; !ret && tries < CAS_RETRIES; tries++) {
		struct devcg_policy *policy = NULL;
		struct devcg_lock lock = { .fd = -1 };
		struct taking take;
		bool audit;
		uint32_t id, others;

		ret = read_own(&cg, o.force, o.no_systemd, &policy, &id, &audit, &others, &take, err);
		if (!ret && (!id || need_lock)) {
			/* no devcg filter yet (the first install cannot name a
			 * program), or a case the kernel cannot compare and swap
			 * (replace_once() said NEEDS_LOCK): devcg writers decide
			 * under the cgroup's lock, after reading again */
			devcg_policy_free(policy);
			policy = NULL;
			ret = devcg_lock_cgroup(&cg, &lock, err);
			if (ret)
				break;
			ret = read_own(&cg, o.force, o.no_systemd, &policy, &id, &audit, &others, &take, err);
		}
		if (!ret)
			ret = edit(policy, ctx, err);
		/* the policy needs no change, but the programs it was read beside
		 * (with --force: others', read as allow-all) are to be replaced:
		 * for a caller that asks (attach, which gives a device; not
		 * detach, whose allow-all would give every device) */
		if (ret == 1 && others && io && io->replace_others)
			ret = 0;
		if (ret == 1) {
			o.prog_id = id;
			ret = 0;
		} else if (!ret) {
			o.expect_prog_id = id;
			/* a filter with --audit keeps it: its readers follow the ring */
			o.audit = DEVCG_OPT(opts, devcg_replace_opts, audit, false) || audit;
			ret = replace_once(&cg, policy, &o, lock.fd >= 0, take.n ? &take : NULL, false, err);
			if (!ret) {
				swapped = policy;
				policy = NULL;
				if (io) {
					io->swapped = true;
					io->others_replaced = others != 0;
				}
			}
		}
		devcg_lock_release(&lock);
		devcg_policy_free(policy);
		if (!ret)
			break;
		if (ret == NEEDS_LOCK) {
			need_lock = true;
			ret = 0;
			continue;
		}
		if (ret != -ENOENT && ret != -EAGAIN)
			break;
		/* not another writer: the cgroup itself is gone (the kernel
		 * released its programs, and every swap of it fails) */
		if (cgroup_gone(&cg)) {
			ret = devcg_err(err, -ENOENT, "%s was removed meanwhile",
					devcg_cgroup_rel(&cg));
			break;
		}
		/* another writer won: back off a little, re-read and retry */
		nanosleep(&(struct timespec){ .tv_nsec = (rand_r(&seed) % 200 + 1) * 1000L }, NULL);
		ret = 0;
	}
	if (!ret && tries == CAS_RETRIES)
		ret = devcg_err(err, -EBUSY, "%s: gave up after %d conflicting updates", devcg_cgroup_rel(&cg), CAS_RETRIES);
	if (!ret && swapped && !(io && io->no_widen))
		ret = systemd_widen(&cg, swapped, &o, !io, err);
	devcg_policy_free(swapped);
	if (!ret && opts && DEVCG_OPTS_HAS(opts, devcg_replace_opts, replaced_id)) {
		opts->prog_id = o.prog_id;
		opts->replaced_id = o.replaced_id;
	}
	if (!ret && DEVCG_OPTS_HAS(opts, devcg_replace_opts, cache_hit))
		opts->cache_hit = o.cache_hit;
	if (!ret && opts && DEVCG_OPTS_HAS(opts, devcg_replace_opts, systemd_entries)) {
		memcpy(opts->systemd_unit, o.systemd_unit, sizeof(o.systemd_unit));
		opts->systemd_entries = o.systemd_entries;
	}
	if (!ret && DEVCG_OPTS_HAS(opts, devcg_replace_opts, cgroup))
		snprintf(opts->cgroup, sizeof(opts->cgroup), "%s", devcg_cgroup_rel(&cg));
	devcg_cgroup_close(&cg);
	return ret;
}

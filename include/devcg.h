/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libdevcg: device access policies for cgroups, with the exact semantics of
 * the cgroup v1 devices controller, enforced on cgroup v2 by a
 * BPF_CGROUP_DEVICE program that is swapped atomically.
 *
 * Conventions (as in libbpf): functions that can fail return 0 (or a
 * non-negative count) on success and a negative errno on failure, and leave
 * their inputs as they were. Each of them takes an optional
 * struct devcg_error, filled with a readable message when they fail.
 * Options structs carry their own size; declare them with DEVCG_OPTS()
 * (which also zeroes their padding). A struct larger than the library's
 * own is refused (-EINVAL) when any byte past the fields the library
 * knows is set: an older library never silently drops a newer caller's
 * option. So is one whose sz is smaller than the sz field itself.
 *
 * libbpf's messages: libbpf prints through one process-wide hook. The
 * first call that loads BPF objects installs (once) a forwarding hook:
 * inside devcg's calls libbpf's warnings go into the call's devcg_error
 * message instead of standard error; outside them every message goes to
 * the hook that was installed before, so an application's own hook keeps
 * working. An application that installs its hook after that gets the
 * messages from inside devcg's calls too.
 */
#ifndef DEVCG_H
#define DEVCG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEVCG_API __attribute__((visibility("default")))

#define DEVCG_VERSION "0.1.0"

/* The version of the library actually loaded ("0.1.0"), which may differ
 * from the DEVCG_VERSION a program was compiled against. */
DEVCG_API const char *devcg_version(void);

/* A major or minor of DEVCG_ANY is the kernel's '*' (~0 in device_cgroup.c). */
#define DEVCG_ANY 0xffffffffu

/* Values are the kernel's DEVCG_DEV_* and DEVCG_ACC_* (also its BPF ABI). */
enum devcg_type {
	DEVCG_BLOCK = 1,
	DEVCG_CHAR = 2,
	DEVCG_ALL = 4, /* 'a': only in rules, where it resets the policy */
};

enum devcg_access {
	DEVCG_ACC_MKNOD = 1,
	DEVCG_ACC_READ = 2,
	DEVCG_ACC_WRITE = 4,
	DEVCG_ACC_ALL = 7,
};

enum devcg_verb {
	DEVCG_VERB_ALLOW = 1, /* a write to devices.allow */
	DEVCG_VERB_DENY = 2,  /* a write to devices.deny */
};

/* One line of a policy: what is written to devices.allow or devices.deny. */
struct devcg_rule {
	uint8_t verb;   /* enum devcg_verb */
	uint8_t type;   /* enum devcg_type */
	uint8_t access; /* enum devcg_access bits, never 0 */
	uint32_t major; /* or DEVCG_ANY */
	uint32_t minor; /* or DEVCG_ANY */
};

/* One entry of the normalized exception list (type is block or char). */
struct devcg_exception {
	uint8_t type;
	uint8_t access;
	uint32_t major;
	uint32_t minor;
};

struct devcg_error {
	int code;       /* negative errno, as returned */
	char msg[1024]; /* one line (a verifier log follows on lines of its own);
			 * untrusted text in it is escaped with devcg_escape() */
};

/*
 * Copy N bytes of TEXT (N = (size_t)-1: up to its NUL) into BUF (LEN
 * bytes, NUL-terminated, cut between characters) for a person to read:
 * control bytes, C1 controls, bidi overrides and bytes that are not valid
 * UTF-8 become \xNN, a backslash \\; valid UTF-8 stays. With
 * DEVCG_ESCAPE_MESSAGE, newlines, tabs and backslashes stay (for a whole
 * message whose untrusted parts are escaped already). Returns the length
 * of the whole escaped text, as snprintf() does.
 */
#define DEVCG_ESCAPE_MESSAGE 1u
DEVCG_API size_t devcg_escape(char *buf, size_t len, const char *text, size_t n,
			      unsigned int flags);

/* Declare an options struct with its size set and the rest zeroed; in C,
 * fields may follow: DEVCG_OPTS(devcg_replace_opts, o, .force = true). */
#ifndef __cplusplus
#define DEVCG_OPTS(TYPE, ...) DEVCG_OPTS_(TYPE, __VA_ARGS__, )
/* (the empty argument keeps ISO C99 happy when no field is given) */
#define DEVCG_OPTS_(TYPE, NAME, ...)                                 \
	struct TYPE NAME = __extension__({                           \
		__builtin_memset(&NAME, 0, sizeof(struct TYPE));     \
		(struct TYPE){ .sz = sizeof(struct TYPE), __VA_ARGS__ }; \
	})
#else
/* C++ has no designated initializers before C++20: set fields afterwards.
 * (memset: the library checks the bytes past the fields it knows.) */
#define DEVCG_OPTS(TYPE, NAME)                                       \
	TYPE NAME;                                                   \
	__builtin_memset(&NAME, 0, sizeof(TYPE));                    \
	NAME.sz = sizeof(TYPE)
#endif

/* Limits of the rule language. */
#define DEVCG_MAX_RULES 100000
#define DEVCG_MAX_LINE 4096

/* ---- rules: an ordered list, as parsed ---------------------------------- */

struct devcg_rules;

/*
 * The container runtimes whose device policy devcg reproduces: what each
 * installs for a config.json is its own default devices plus
 * linux.resources.devices, in its own order (see README, "Using devcg from
 * a runtime"). DEVCG_RUNTIME_AUTO is only for devcg_oci_hook(): the runtime
 * that runs the hook.
 */
enum devcg_runtime {
	DEVCG_RUNTIME_NONE = 0, /* only what the file says */
	DEVCG_RUNTIME_RUNC = 1, /* runc 1.1.x */
	DEVCG_RUNTIME_CRUN = 2, /* crun 1.8.x */
	DEVCG_RUNTIME_AUTO = 3,
};

struct devcg_parse_opts {
	size_t sz;
	/* where char-NAME and block-NAME are looked up; NULL: /proc/devices */
	const char *proc_devices;
	/*
	 * The verb of every rule (enum devcg_verb), as for `devcg allow`: a
	 * rule without a verb takes it, and one whose own verb (or OCI
	 * "allow") is the other is refused with -EINVAL. 0: each rule's own
	 * verb, allow when it has none.
	 */
	uint8_t verb;
	/* An OCI config.json yields the list this runtime installs, not only
	 * linux.resources.devices (other inputs are not affected); a list the
	 * runtime refuses, or whose runtime program no cgroup v1 policy
	 * reproduces, is an error. */
	enum devcg_runtime runtime;
};

DEVCG_API struct devcg_rules *devcg_rules_new(void);
DEVCG_API void devcg_rules_free(struct devcg_rules *rules);
DEVCG_API size_t devcg_rules_count(const struct devcg_rules *rules);
DEVCG_API const struct devcg_rule *devcg_rules_get(const struct devcg_rules *rules, size_t i);
DEVCG_API int devcg_rules_add(struct devcg_rules *rules, const struct devcg_rule *rule,
			      struct devcg_error *err);

/*
 * Parse TEXT (LEN bytes, need not be NUL-terminated) and append its rules.
 * TEXT is OCI JSON when its first non-blank byte is '{' or '[', otherwise
 * devices.list lines and systemd DeviceAllow= forms. SOURCE names it in
 * messages ("FILE:LINE:COL: ..."). On error nothing is appended.
 */
DEVCG_API int devcg_rules_parse(struct devcg_rules *rules, const char *text, size_t len,
				const char *source, const struct devcg_parse_opts *opts,
				struct devcg_error *err);
/* The same for a file; "-" is standard input. */
DEVCG_API int devcg_rules_parse_file(struct devcg_rules *rules, const char *path,
				     const struct devcg_parse_opts *opts, struct devcg_error *err);
/* One rule given as one argument (never JSON). */
DEVCG_API int devcg_rules_parse_rule(struct devcg_rules *rules, const char *arg,
				     const char *source, const struct devcg_parse_opts *opts,
				     struct devcg_error *err);

/* "allow c 1:9 rwm", "deny a": the canonical text of a rule. */
DEVCG_API int devcg_rule_format(const struct devcg_rule *rule, char *buf, size_t len);
/* ACCESS (enum devcg_access bits) as a devices list writes it: "rwm", "r",
 * "" for none; BUF holds 4 bytes. Returns BUF. */
DEVCG_API const char *devcg_access_format(uint32_t access, char buf[4]);

/* ---- policy: default behaviour + exception list ------------------------- */

struct devcg_policy;

/* A fresh policy is that of a new child of the root cgroup: allow all. */
DEVCG_API struct devcg_policy *devcg_policy_new(void);
DEVCG_API struct devcg_policy *devcg_policy_dup(const struct devcg_policy *policy);
DEVCG_API void devcg_policy_free(struct devcg_policy *policy);

/* Apply rules exactly as writes to devices.allow/devices.deny would be. */
DEVCG_API int devcg_policy_apply(struct devcg_policy *policy, const struct devcg_rule *rule,
				 struct devcg_error *err);
DEVCG_API int devcg_policy_apply_all(struct devcg_policy *policy,
				     const struct devcg_rules *rules, struct devcg_error *err);

/* Build a policy from its normalized form (as read back from a filter). */
DEVCG_API int devcg_policy_set(struct devcg_policy *policy, bool default_allow,
			       const struct devcg_exception *exceptions, size_t count,
			       struct devcg_error *err);

DEVCG_API bool devcg_policy_default_allow(const struct devcg_policy *policy);
DEVCG_API size_t devcg_policy_count(const struct devcg_policy *policy);
/*
 * The exceptions in canonical order (char before block, then major, then
 * minor, '*' last). The array stays valid until the policy next changes.
 */
DEVCG_API const struct devcg_exception *devcg_policy_exceptions(const struct devcg_policy *policy);
DEVCG_API bool devcg_policy_equal(const struct devcg_policy *a, const struct devcg_policy *b);

/*
 * Decide a request as the kernel decides it when it asks (type is
 * DEVCG_BLOCK or DEVCG_CHAR; access may be 0, as for access(2) with F_OK):
 * the policy's own answer, as a v1 devices list gives it. Returns 1 for
 * allow, 0 for deny, or a negative errno for a malformed request. When an
 * exception decided, *decider is set and *decided is true; otherwise the
 * default did. Whether the kernel asks at all: devcg_request_checked()
 * (devcg_state_check() applies it).
 */
DEVCG_API int devcg_policy_check(const struct devcg_policy *policy, uint8_t type, uint32_t major,
				 uint32_t minor, uint8_t access, struct devcg_exception *decider,
				 bool *decided);

/*
 * Does the kernel ask the devices controller (cgroup v1) and the device
 * programs (cgroup v2) about this request at all? Not about device 0:0:
 * an inode without a device number is never checked on open or access
 * (devcgroup_inode_permission()), and a char 0:0 mknod makes an overlayfs
 * whiteout (devcgroup_inode_mknod()); only a block 0:0 mknod is asked, and
 * only its 'm'. 1 when it asks (for a block 0:0 request: about 'm' alone),
 * 0 when the request is allowed unasked.
 */
DEVCG_API int devcg_request_checked(uint8_t type, uint32_t major, uint32_t minor, uint8_t access);

/*
 * The shortest rule list that reproduces the policy: "deny a" and the
 * allowed exceptions, or "allow a" and the denied ones. Fills *rules with a
 * new list the caller frees.
 */
DEVCG_API int devcg_policy_to_rules(const struct devcg_policy *policy, struct devcg_rules **rules);


/* ---- live filters on cgroup v2 ------------------------------------------ */

/* How a device program is attached to its cgroup (BPF_F_* attach flags). */
enum devcg_attach_mode {
	DEVCG_MODE_EXCLUSIVE = 0, /* flags 0: no program below may attach */
	DEVCG_MODE_OVERRIDE = 1,  /* BPF_F_ALLOW_OVERRIDE */
	DEVCG_MODE_MULTI = 2,     /* BPF_F_ALLOW_MULTI: devcg's own mode */
};

/*
 * Shared programs. A cache of loaded device filters for a long-lived
 * caller (a node agent, a runtime daemon) that installs the same policy
 * on many cgroups: passed in devcg_replace_opts.cache (devcg_replace(),
 * devcg_update() and the others that take those options), a policy it
 * loaded already is installed by attaching that program
 * (BPF_F_REPLACE, as any swap), with no verifier run and no new map.
 * Keyed by the filter's compiled bytes and variant (default, exceptions,
 * its table as filled), compared in full, never by a hash alone: rules in
 * another order that make the same policy share a program. Bounded: past
 * MAX_ENTRIES the least recently used is dropped, which closes devcg's
 * reference only (a program stays loaded while a cgroup runs it).
 * Each cgroup keeps its own attachment: a swap, compare-and-swap, reset
 * or rollback on one never changes another that runs the same program,
 * and a filter's policy map is frozen before its load, so show and check
 * read the same policy back from every one. Audit filters are never
 * shared (their ring follows one cgroup across its swaps). A process
 * that forks keeps the cache in both, each with its own references (fork
 * while another thread is inside a call on it is not supported, as with
 * any mutex). Thread-safe: one cache may serve several threads at once.
 * devcg_cache_new() returns NULL with errno set (EINVAL: MAX_ENTRIES 0 or
 * over DEVCG_CACHE_MAX; ENOMEM).
 */
#define DEVCG_CACHE_MAX 65536u
struct devcg_cache;
DEVCG_API struct devcg_cache *devcg_cache_new(unsigned int max_entries);
/* Closes the cache's references; attached programs stay attached. */
DEVCG_API void devcg_cache_free(struct devcg_cache *cache);

struct devcg_cache_stats {
	size_t sz; /* set by the caller: the library fills what fits */
	uint32_t entries, max_entries;
	uint64_t hits, misses, evictions;
};
DEVCG_API int devcg_cache_stats(struct devcg_cache *cache, struct devcg_cache_stats *stats);

struct devcg_replace_opts {
	size_t sz;
	/* report each denial to the filter's audit ring buffer */
	bool audit;
	/* replace even when several foreign device programs are attached and
	 * devcg cannot read the rules of one of them (devcg_replace() takes
	 * over those it can read without it) */
	bool force;
	/*
	 * Compare-and-swap: replace only this program id (the kernel refuses
	 * with -ENOENT when another writer replaced it meanwhile); 0 replaces
	 * whatever is attached.
	 */
	uint32_t expect_prog_id;
	/* Out: the id of the program now attached. */
	uint32_t prog_id;
	/* Out: the id of the program it replaced (0: first install). */
	uint32_t replaced_id;
	/* Testing aid: fail with -EIO at this step ("resolve", "query", "load",
	 * "fill", "freeze", "attach", "detach": after the replace, before the
	 * other programs are detached, "verify", "systemd": the systemd step
	 * after the swap, on any cgroup), or load a program the verifier
	 * rejects ("verifier"); NULL in normal use. */
	const char *fail_at;
	/*
	 * When CGROUP is a systemd unit's own cgroup (systemd as PID 1, on the
	 * unified hierarchy), devcg widens the unit's runtime DeviceAllow=,
	 * right after the swap, so that the device program systemd attaches on every
	 * daemon-reload or set-property allows at least what devcg's does
	 * (never narrowing it), and leaves systemd's own program in place.
	 * NO_SYSTEMD turns that off.
	 */
	bool no_systemd;
	/* Out: the unit kept in step ("" when none), and how many DeviceAllow=
	 * entries had to be added or widened (0: it already allowed enough). */
	char systemd_unit[256];
	uint32_t systemd_entries;
	/* Out: the cgroup as resolved, relative to the cgroup2 mount (as
	 * devcg_state_cgroup() names it). */
	char cgroup[4096];
	/*
	 * Shared programs (devcg_cache_new()): a policy this cache loaded
	 * already is installed by attaching the same program, with no new
	 * load; a new one is loaded and kept. Not for audit: an audit filter
	 * is always loaded for its own cgroup. NULL: every swap loads its own.
	 */
	struct devcg_cache *cache;
	/* Out: the program attached came from the cache. */
	bool cache_hit;
};

/*
 * Install POLICY on the cgroup v2 directory CGROUP (absolute, or relative
 * to the cgroup2 mount) without any moment of no filter or a deny-all one:
 * the new program is loaded, filled and frozen first, then swapped in with
 * BPF_F_REPLACE (or in the existing program's own mode). On failure the
 * previous program stays attached. Several programs (others' among them)
 * are taken over when devcg reads each one's rules back (else -EBUSY
 * naming it, unless opts->force): the new filter takes the place of one,
 * then the others are detached one by one, so that a request the old and
 * the new policy both allow stays allowed throughout and none the new one
 * refuses is allowed from the first step on; a failure after the first
 * step leaves the new filter beside the rest (still so), which a replace
 * again completes. Refused with -EINVAL: a root cgroup
 * (an empty CGROUP, the hierarchy's root however spelled, the root of the
 * mount CGROUP goes through, as a cgroup namespace's root); with
 * -ENAMETOOLONG: a path longer than PATH_MAX. devcg_update() and
 * devcg_reset() refuse the same.
 */
DEVCG_API int devcg_replace(const char *cgroup, const struct devcg_policy *policy,
			    struct devcg_replace_opts *opts, struct devcg_error *err);

/* Apply one rule to the live policy by compare-and-swap, retrying when
 * another writer got there first. A cgroup without any device program
 * starts from allow-all; one with only foreign programs is refused with
 * -EBUSY (their rules cannot be read) unless opts->force, except a systemd
 * unit's cgroup whose only program is systemd's own: that one starts from
 * the unit's DevicePolicy= and DeviceAllow= (what systemd's program
 * enforces). A filter loaded with audit stays so. An allow rule of one
 * device (not a range) that a program on an ancestor cgroup refuses, which
 * devcg does not change, would not open however the cgroup allows it: it
 * is refused with -EACCES, naming that cgroup and whose program it is, and
 * nothing changes (devcg_update_rules() and devcg_attach() too). */
DEVCG_API int devcg_update(const char *cgroup, const struct devcg_rule *rule,
			   struct devcg_replace_opts *opts, struct devcg_error *err);

/* devcg_update() with every rule of RULES, applied in their order to the
 * live policy and swapped in by one compare-and-swap: all of them or none
 * (a rule that cannot be applied, or an empty list (-EINVAL), leaves the
 * cgroup as it was). */
DEVCG_API int devcg_update_rules(const char *cgroup, const struct devcg_rules *rules,
				 struct devcg_replace_opts *opts, struct devcg_error *err);

/* Remove devcg's program from CGROUP (foreign programs are left alone);
 * returns how many devcg programs were removed (0: there was none). */
DEVCG_API int devcg_reset(const char *cgroup, struct devcg_error *err);

struct devcg_reset_opts {
	size_t sz;
	/* Out: devcg programs removed (also the return value). */
	uint32_t removed;
	/* Out: how many of them were attached through a bpf_link of another
	 * process: removing them detached that link (its holder keeps a
	 * link attached to nothing). */
	uint32_t links_detached;
	/* Out: the cgroup as resolved, relative to the cgroup2 mount (as
	 * devcg_state_cgroup() names it: what `devcg show -j` prints). */
	char cgroup[4096];
};

/* devcg_reset(), saying how the programs were removed. */
DEVCG_API int devcg_reset_opts(const char *cgroup, struct devcg_reset_opts *opts,
			       struct devcg_error *err);

/* One device program that applies to a cgroup. */
struct devcg_program {
	uint32_t id;
	uint8_t mode;         /* enum devcg_attach_mode of the cgroup it is on */
	bool devcg;           /* ours: its policy can be read back */
	bool effective;       /* runs for the queried cgroup */
	char name[16];        /* the kernel's program name */
	char cgroup[4096];    /* where it is attached, relative to the mount */
	struct devcg_policy *policy; /* when devcg, or systemd's (below); owned by the state */
	bool audit;
	/* false: it runs for the cgroup (effective) but is attached to an
	 * ancestor that cannot be seen from here (above a cgroup namespace's
	 * root or a mounted subtree); cgroup is then "?" and mode unknown */
	bool visible;
	/* systemd's own program ("sd_devices") on a unit's own cgroup: the
	 * unit, and in policy what the unit's DevicePolicy= and DeviceAllow=
	 * say now, read over D-Bus (each call bounded to 5 s) with paths
	 * resolved now: what systemd builds that program from, not the
	 * program itself (devcg stays false: it cannot be read back). "" and
	 * NULL when systemd is not PID 1 on the unified hierarchy, cannot be
	 * asked in time, or names another cgroup by that path. */
	char systemd_unit[256];
	/* Whose the program is (devcg_reader_owner()): "devcg", "systemd",
	 * "runc", "crun", "unknown". A foreign program's policy is its rules
	 * read back by devcg_reader_policy() (read true) when systemd's unit
	 * does not give it; when they cannot be read, why_unreadable says why. */
	char owner[16];
	bool read;
	char why_unreadable[256];
};

/* What is attached to a cgroup and its ancestors. */
struct devcg_state;

DEVCG_API int devcg_state_read(const char *cgroup, struct devcg_state **state,
			       struct devcg_error *err);
DEVCG_API void devcg_state_free(struct devcg_state *state);
/* The cgroup, relative to the cgroup2 mount ("/" for the root). */
DEVCG_API const char *devcg_state_cgroup(const struct devcg_state *state);
/* Programs attached to the cgroup itself, then those on its ancestors,
 * nearest first, then the effective ones whose cgroup cannot be seen
 * (visible false). Ancestors are found by identity, not by path, so a
 * cgroup reached through a bind mount or a cgroup namespace is read whole. */
DEVCG_API size_t devcg_state_count(const struct devcg_state *state);
DEVCG_API const struct devcg_program *devcg_state_program(const struct devcg_state *state,
							    size_t i);
/* The devcg program attached to the cgroup itself, or NULL. */
DEVCG_API const struct devcg_program *devcg_state_own(const struct devcg_state *state);

/*
 * Decide a request against every program that runs for the cgroup: devcg's
 * by their policies, systemd's by its unit's (systemd_unit). Returns 1
 * allow, 0 deny, -EOPNOTSUPP when another foreign program applies and devcg
 * cannot tell (its id in *by). When denied, *by is the denying program.
 * A request the kernel does not ask about (devcg_request_checked(): device
 * 0:0) is allowed whatever the programs say, as the kernel allows it.
 */
DEVCG_API int devcg_state_check(const struct devcg_state *state, uint8_t type, uint32_t major,
				uint32_t minor, uint8_t access, const struct devcg_program **by,
				struct devcg_exception *decider, bool *decided);

/* A device node. */
struct devcg_node {
	char path[256];  /* where it is, e.g. "/dev/null" */
	uint8_t type;    /* DEVCG_CHAR or DEVCG_BLOCK */
	uint32_t major;
	uint32_t minor;
};

/*
 * The char and block device nodes in the /dev of CGROUP's processes: that
 * of the first process in its cgroup.procs, walked through /proc/PID/root
 * without following symbolic links, and only on /dev's own file system
 * (mounts below it, as /dev/pts, are not entered). *NODES is a new array
 * the caller frees, *COUNT long; none when the cgroup has no process of
 * its own or that process has no /dev.
 */
DEVCG_API int devcg_dev_nodes(const char *cgroup, struct devcg_node **nodes, size_t *count,
			      struct devcg_error *err);

/*
 * Would installing POLICY on CGROUP refuse a device that the cgroup's
 * current devcg program allows and that has a node in the /dev of its
 * processes (devcg_dev_nodes())? Returns 1 with that node in *NODE and an
 * access lost in *ACCESS, 0 when not, or a negative errno. Only devcg's
 * own program can be read back: with none (or only foreign ones) it is 0.
 * *PROG_ID is the program read (0: none), for a compare-and-swap
 * (devcg_replace_opts.expect_prog_id) that installs only over it.
 */
DEVCG_API int devcg_replace_refuses_node(const char *cgroup, const struct devcg_policy *policy,
					 struct devcg_node *node, uint8_t *access, uint32_t *prog_id,
					 struct devcg_error *err);

/*
 * cgroup v1: move DIR (under the v1 devices hierarchy) to POLICY by writes
 * to devices.allow/deny that never revoke a device both policies allow:
 * the target's exceptions first, then the trims, and 'a' only when the
 * default must change or a default-allow cgroup hides the exceptions to
 * trim (devices.list does not show them). Returns 0, or the moments the
 * kernel's interface forced (DEVCG_V1_*), or a negative errno. The writes
 * are not a transaction: after an error, devices.list shows where it
 * stopped. The hierarchy's root (and an empty DIR) is refused with -EINVAL.
 */
#define DEVCG_V1_DENY_ALL_MOMENT 1  /* 'a' to devices.deny: everything refused */
#define DEVCG_V1_ALLOW_ALL_MOMENT 2 /* 'a' to devices.allow: everything allowed */
DEVCG_API int devcg_replace_v1(const char *dir, const struct devcg_policy *policy,
			       struct devcg_error *err);

/*
 * Hybrid hosts (cgroup v1 controllers beside a cgroup2 mount, as
 * /sys/fs/cgroup/devices and /sys/fs/cgroup/unified): both layers decide
 * every open, the device programs on the unified hierarchy and the v1
 * devices controller. The v1 devices cgroup of process PID (its devices:
 * line of /proc/PID/cgroup, joined under a v1 devices mount of this mount
 * namespace that shows the process there) in BUF: 1, or 0 (BUF "") when no
 * v1 devices hierarchy is mounted or PID is in its root, which restricts
 * nothing; or a negative errno.
 */
DEVCG_API int devcg_pid_v1_cgroup(int pid, char *buf, size_t len, struct devcg_error *err);
/* The same for the processes of the cgroup v2 CGROUP (its own, not its
 * descendants'): 0 when it has none or none is in a v1 devices cgroup,
 * and for a root cgroup (no container's); -EXDEV when they are in
 * different ones. */
DEVCG_API int devcg_cgroup_v1_cgroup(const char *cgroup, char *buf, size_t len,
				     struct devcg_error *err);
/* The policy of the v1 devices directory DIR from its devices.list; a
 * default-allow cgroup lists only 'a *:* rwm', so its denies cannot be
 * read: *COMPLETE (may be NULL) is false then. */
DEVCG_API int devcg_v1_read(const char *dir, struct devcg_policy **policy, bool *complete,
			    struct devcg_error *err);
/* One RULE written to DIR's devices.allow or devices.deny (v1 semantics). */
DEVCG_API int devcg_update_v1(const char *dir, const struct devcg_rule *rule,
			      struct devcg_error *err);
/*
 * devcg_replace() and devcg_update_rules() on both layers: first the v1
 * devices directory V1 (devcg_replace_v1(), or each of RULES written in
 * order as by devcg_update_v1()), then the cgroup v2 CGROUP. V1 NULL or "": only v2.
 * When the v2 step fails, V1 is put back (when its devices.list showed it
 * whole) and the message says what became of it.
 */
DEVCG_API int devcg_replace_both(const char *cgroup, const char *v1, const struct devcg_policy *policy,
				 struct devcg_replace_opts *opts, struct devcg_error *err);
DEVCG_API int devcg_update_both(const char *cgroup, const char *v1, const struct devcg_rules *rules,
				struct devcg_replace_opts *opts, struct devcg_error *err);

/* ---- reading any device program ---------------------------------------- */

/*
 * A reader of one BPF_CGROUP_DEVICE program, devcg's or anyone's (runc,
 * crun, systemd, a vendor hook): it runs the instructions the kernel
 * translated (BPF_OBJ_GET_INFO_BY_FD, as root) in an interpreter, over the
 * live maps the program reads, and decides every request as the kernel
 * would. A program it cannot follow (an unknown helper or instruction, a
 * read outside what it may read, a loop past a bound, a decision that
 * depends on what a helper returns) is unreadable: -ENOTSUP with the reason
 * in the message, never a guess.
 */
struct devcg_reader;

struct devcg_reader_opts {
	size_t sz;
	/* the most instructions one request may run; 0: 1,000,000 */
	uint32_t max_steps;
	/* Testing aid: a deliberately wrong reader, whose decision of every
	 * request of device FLIP_TYPE FLIP_MAJOR:FLIP_MINOR is inverted
	 * (FLIP_TYPE 0: none). */
	uint8_t flip_type;
	uint32_t flip_major, flip_minor;
};

/* A reader of the device program PROG_FD (>= 0), else of the program
 * PROG_ID. Free it with devcg_reader_free(). */
DEVCG_API int devcg_reader_open(int prog_fd, uint32_t prog_id, const struct devcg_reader_opts *opts,
				struct devcg_reader **reader, struct devcg_error *err);
DEVCG_API void devcg_reader_free(struct devcg_reader *reader);
/* Whose the program is, from its name and shape: "devcg", "systemd",
 * "runc", "crun" or "unknown". */
DEVCG_API const char *devcg_reader_owner(const struct devcg_reader *reader);
/* The program's verdict on one request: 1 allow, 0 deny, -ENOTSUP when it
 * cannot be followed (the reason in ERR), -EINVAL for a bad request. */
DEVCG_API int devcg_reader_decide(struct devcg_reader *reader, uint8_t type, uint32_t major,
				  uint32_t minor, uint8_t access, struct devcg_error *err);
/*
 * The program's rules: the constants it compares type, major, minor and
 * access with (immediates, the keys of its hash maps, the values it
 * compares at run time, a devcg program's own policy) split each number's
 * range into cells; each cell is decided at both of its ends, and the
 * cells are merged into the shortest exception list of either default
 * that decides every cell (and every request the kernel makes: char or
 * block, major below 4096, minor below 2^20, m, r, w or rw) the same way,
 * which is checked before it is returned. -ENOTSUP when the program is
 * unreadable, or decides something no devices list can say (a range of
 * majors, a cell whose ends disagree).
 */
DEVCG_API int devcg_reader_policy(struct devcg_reader *reader, struct devcg_policy **policy,
				  struct devcg_error *err);

/* ---- OCI runtime hooks --------------------------------------------------- */

/* The annotation whose value holds a container's extra rules (lines, or
 * rules separated by ';'), applied after the runtime's policy. */
#define DEVCG_OCI_ANNOTATION "io.devcg.rules"

/* The most the hook reads: the container state (bytes on standard input)
 * and the bundle's config.json (a regular file; anything else is refused
 * before it is read). */
#define DEVCG_OCI_MAX_STATE (16 << 20)
#define DEVCG_OCI_MAX_CONFIG (64 << 20)

/*
 * The cgroup v2 directory of process PID, as a path in this process's mount
 * namespace (through whichever cgroup2 mount shows it), in BUF. Refuses
 * (-EPERM) the root cgroup and the caller's own cgroup.
 */
DEVCG_API int devcg_pid_cgroup(int pid, char *buf, size_t len, struct devcg_error *err);
/*
 * Enter the cgroup namespace of process PID (0: process 1 of this pid
 * namespace, the host's init in a pod with hostPID) when this process is in
 * another: from a pod's own cgroup namespace the other containers' cgroups
 * are "/../.." paths above it, which no cgroup2 mount's root contains.
 * Affects the calling thread (call it before starting threads). 1: entered;
 * 0: already there; negative errno (CAP_SYS_ADMIN and ptrace access to PID
 * are needed).
 */
DEVCG_API int devcg_host_cgroupns(int pid, struct devcg_error *err);

struct devcg_oci_hook_opts {
	size_t sz;
	/* whose policy the container gets (DEVCG_RUNTIME_AUTO: the parent
	 * process's, which runs the hook) */
	enum devcg_runtime runtime;
	/* rules applied after the runtime's policy, before the annotation's */
	const struct devcg_rules *rules;
	/* the annotation with extra rules; NULL: DEVCG_OCI_ANNOTATION, "": none */
	const char *annotation;
	bool audit;
	bool force;
	/* Out: the container's cgroup, the program now attached, the one it
	 * replaced (0: none), the runtime whose policy was used. */
	char cgroup[4096];
	uint32_t prog_id;
	uint32_t replaced_id;
	enum devcg_runtime runtime_used;
	/* As in struct devcg_replace_opts: no_systemd turns off keeping a
	 * systemd unit's DeviceAllow= in step (the container's cgroup is a
	 * scope with runc's and crun's systemd cgroup driver); out, the unit
	 * and the entries added. */
	bool no_systemd;
	char systemd_unit[256];
	uint32_t systemd_entries;
	/*
	 * Whoever sets a container's annotations (podman --annotation, a pod's
	 * author under CRI-O) is not trusted to widen its policy: by default
	 * the annotation may only narrow it, that is, the policy after it
	 * allows no request (device and access) that the policy before it
	 * (the runtime's, with RULES) does not allow, or that
	 * ANNOTATION_ALLOW (allow rules, over deny-all) does not list. A
	 * widening annotation is refused with -EPERM, naming a request it
	 * would allow. ANNOTATION_MAY_WIDEN lets it widen without limit.
	 */
	const struct devcg_rules *annotation_allow;
	bool annotation_may_widen;
	/* Out: on a hybrid host, the v1 devices cgroup of the container's
	 * process, given the same policy first ("" when none). */
	char v1_cgroup[4096];
};

/*
 * The work of an OCI hook (createRuntime, or prestart): STATE is the
 * container's state JSON (LEN bytes) as the runtime gives it on standard
 * input. Reads BUNDLE/config.json, computes the runtime's policy plus the
 * extra rules, finds the container's cgroup from /proc/PID/cgroup and
 * replaces its device program atomically, and so checks that devcg's
 * program is the only one attached there (beside systemd's own, on a unit
 * devcg keeps in step). On a hybrid host, when the process is in a
 * non-root cgroup v1 devices cgroup (a runtime that found no cgroup2 on
 * /sys/fs/cgroup), that one gets the same policy first, by
 * devcg_replace_both(): both layers then allow exactly the policy.
 * Refuses the root cgroup and a process that is gone. On an error before the swap nothing is attached; the swap itself
 * restores the previous program when it fails.
 */
DEVCG_API int devcg_oci_hook(const char *state, size_t len, struct devcg_oci_hook_opts *opts,
			     struct devcg_error *err);
/* ---- hot-plug: a device node and its permission in a running container - */

/*
 * One device for devcg_attach()/devcg_detach(): a host device node, made
 * (or bind-mounted) at PATH in the container's mount namespace.
 */
struct devcg_hotplug_device {
	const char *host_path; /* the host's node (followed if a symlink) */
	const char *path;      /* in the container, absolute; NULL: host_path */
	uint8_t access;        /* attach: the access to allow; 0: opts->access */
	uint8_t set;           /* DEVCG_HOTPLUG_SET_* bits: which fields below are given */
	uint32_t mode;         /* permission bits of the node; else the host node's */
	uint32_t uid, gid;     /* its owner; else the host node's */
};
#define DEVCG_HOTPLUG_SET_MODE 1
#define DEVCG_HOTPLUG_SET_UID 2
#define DEVCG_HOTPLUG_SET_GID 4

/* How attach puts a node in the container. */
enum devcg_hotplug_method {
	/* mknod, or a bind mount of the host node where the container cannot
	 * hold a device node (its mount namespace belongs to another user
	 * namespace, or the directory is on a nodev mount) */
	DEVCG_HOTPLUG_AUTO = 0,
	DEVCG_HOTPLUG_MKNOD = 1,
	DEVCG_HOTPLUG_BIND = 2,
};

struct devcg_hotplug_opts {
	size_t sz;
	/* a process of the container: its mount namespace, and its cgroup when
	 * no CGROUP is given; 0: a process of CGROUP */
	int32_t pid;
	/* CDI devices ("vendor/class=name"), NULL-terminated; each brings the
	 * device nodes of its spec (its own and the spec's common ones) */
	const char *const *cdi;
	/* where CDI specs are read, NULL-terminated, later ones first when a
	 * device is defined twice; NULL: /etc/cdi, /var/run/cdi */
	const char *const *cdi_spec_dirs;
	uint8_t access; /* attach: for devices without their own; 0: rwm */
	uint8_t method; /* enum devcg_hotplug_method */
	/* the permission swap replaces the device programs that are not
	 * devcg's, starting from allow-all where devcg has none (as
	 * devcg_update with force), even when the policy needs no change;
	 * attach replaces a node of another device at a container path
	 * (without: refused) */
	bool force;
	/* Testing aid: fail with -EIO at this step ("swap", "systemd": the
	 * systemd step after the swap, "mkdir", "mknod", "rename", "bind",
	 * "unlink"); node steps fail at the last node that needs one.
	 * "stop-mknod" (the temporary node made), "stop-unlink" (before the
	 * node is removed), "stop-tree" (before the host nodes are opened for
	 * bind mounts) and "stop-holders" (the scan of open files) stop that
	 * process with SIGSTOP instead, for a test to change things
	 * meanwhile. NULL in normal use. */
	const char *fail_at;
	/* As in struct devcg_replace_opts: the permission swap keeps a systemd
	 * unit's DeviceAllow= in step; NO_SYSTEMD turns that off (and devcg's
	 * filter then replaces systemd's own program, with no FORCE). */
	bool no_systemd;
	/* A container of a node agent by its ID (devcg_container_start()):
	 * its pid and cgroup come from devcg_container_find() (PID and CGROUP
	 * must then be 0 and NULL), and what the call changed is recorded in
	 * its state, so that devcg_container_updated() and a restarted agent
	 * put back what was attached and never what was detached. NULL: none. */
	const char *container;
	/* where that state is; NULL: DEVCG_CONTAINER_STATE_DIR */
	const char *state_dir;
};

/* What was done to a device's node and to its permission. */
enum devcg_hotplug_node {
	DEVCG_NODE_MADE = 1, /* mknod under a temporary name, renamed into place */
	DEVCG_NODE_BOUND,    /* the host node bind-mounted (open_tree, move_mount) */
	DEVCG_NODE_REPLACED, /* a node of other numbers, mode or owner was there */
	DEVCG_NODE_PRESENT,  /* attach: already there */
	DEVCG_NODE_REMOVED,  /* detach: unlinked (or unmounted and unlinked) */
	DEVCG_NODE_ABSENT,   /* detach: not there */
	DEVCG_NODE_KEPT,     /* detach: left alone (see the note) */
};

enum devcg_hotplug_permission {
	DEVCG_PERM_ADDED = 1,      /* attach: allowed by this command */
	DEVCG_PERM_ALREADY,        /* attach: the policy allowed it already */
	DEVCG_PERM_REMOVED,        /* detach: its own exception removed */
	DEVCG_PERM_NONE,           /* detach: it had none; not allowed. attach: not
				    * asked (CDI "permissions": "none"): no rule
				    * added, the policy decides as before */
	DEVCG_PERM_STILL_ALLOWED,  /* detach: it had none of its own; a wider
				    * exception or the default allows it */
	DEVCG_PERM_KEPT,           /* detach: kept with its node (see the note) */
};

/* A process of the container that holds a detached device open. */
struct devcg_hotplug_holder {
	int32_t pid;
	int32_t fd;
	char comm[16];
};

struct devcg_hotplug_entry {
	const char *host_path; /* NULL when not known (detach of a removed host node) */
	const char *path;      /* in the container */
	const char *cdi;       /* the CDI device it came from, or NULL */
	uint8_t type;          /* DEVCG_CHAR or DEVCG_BLOCK */
	uint32_t major, minor;
	uint8_t access;        /* attach: allowed; detach: removed */
	uint32_t mode, uid, gid; /* attach: the node's */
	uint8_t node;          /* enum devcg_hotplug_node */
	uint8_t permission;    /* enum devcg_hotplug_permission */
	const char *note;      /* why, in words, or NULL */
	size_t ndirs;          /* attach: parent directories it made */
	const char *const *dirs;
	size_t nholders;       /* detach: processes that still hold it open */
	const struct devcg_hotplug_holder *holders;
};

/* Filled by the library; read-only to the caller. */
struct devcg_hotplug_result {
	char cgroup[4096];    /* relative to the cgroup2 mount */
	int32_t pid;          /* the process whose mount namespace was used */
	uint32_t prog_id;     /* the devcg program attached now (0: none) */
	uint32_t replaced_id; /* the program the swap replaced (0: none) */
	size_t count;
	const struct devcg_hotplug_entry *entries;
	/* the systemd unit kept in step ("": none) and the DeviceAllow=
	 * entries added or widened for it, as in struct devcg_replace_opts */
	char systemd_unit[256];
	uint32_t systemd_entries;
	/* the permission changed: a new devcg program is attached (the
	 * cgroup's first when replaced_id is 0); false: nothing was swapped */
	bool swapped;
	/* a hybrid host: the container's cgroup v1 devices cgroup, which the
	 * permission step changed first, by the same edit ("" when none) */
	char v1_cgroup[4096];
};

/*
 * Give the container of CGROUP (or of opts->pid; one may be NULL/0) the
 * DEVICES and opts->cdi devices in one step: first the permission, for all
 * of them in one compare-and-swap of its devcg policy, then each node, made
 * under a temporary name with the host node's type and numbers and (unless
 * given) mode and owner, and renamed into place. Parent directories are
 * made as needed. What is there already is kept and reported, so attaching
 * twice succeeds; a node of another device is replaced only with
 * opts->force (else -EEXIST). On a default-allow policy, a device that its
 * own exception denies is refused (-EPERM): detach, which adds no deny,
 * could not put it back. On failure everything this call did is undone
 * (after a failed systemd step too) and the message says at which step.
 * A device that a program on an ancestor cgroup refuses is refused with
 * -EACCES before anything changes, naming that cgroup and whose program it
 * is (it would not open whatever devcg allows).
 * *RESULT (may be NULL) is set on success; free it with
 * devcg_hotplug_result_free().
 *
 * Attach and detach each start one child process in the container's mount
 * namespace, which shares the caller's memory (clone(CLONE_VM)) and ends
 * before the call returns (it is reaped: a caller that reaps every child
 * may meet it); one that does not answer in time is killed, and one the
 * kernel still holds is left unreaped.
 */
DEVCG_API int devcg_attach(const char *cgroup, const struct devcg_hotplug_device *devices,
			   size_t count, const struct devcg_hotplug_opts *opts,
			   struct devcg_hotplug_result **result, struct devcg_error *err);
/*
 * Take them back: first the nodes (unlinked, or unmounted), then each
 * device's own exception (the key attach adds: exactly its type, major and
 * minor). A device allowed only by a wider exception ('c 195:* rw') or by
 * a default-allow policy stays allowed: detach never adds a deny. For CDI
 * devices, the spec's common nodes stay while another device of that spec
 * is still in the container. Open files stay usable (the kernel checks at
 * open); the processes that hold them are listed.
 */
DEVCG_API int devcg_detach(const char *cgroup, const struct devcg_hotplug_device *devices,
			   size_t count, const struct devcg_hotplug_opts *opts,
			   struct devcg_hotplug_result **result, struct devcg_error *err);
DEVCG_API void devcg_hotplug_result_free(struct devcg_hotplug_result *result);


/* ---- doctor: why a container cannot open a device, and what will take it away */

/* The most layers (the v1 devices cgroup, each device program) a device is
 * decided by in a doctor's result. */
#define DEVCG_DOCTOR_MAX_LAYERS 16

/* One layer that has a say on every open of the container. */
struct devcg_doctor_layer {
	char kind[4];      /* "v1": the cgroup v1 devices cgroup; "v2": a device program */
	char owner[16];    /* v2: devcg_program.owner ("devcg", "systemd", "runc", "crun", "unknown") */
	uint32_t prog_id;  /* v2 */
	char where[4096];  /* v1: its directory; v2: the cgroup the program is on ("?": not visible) */
	char unit[256];    /* v2: systemd's program: its unit */
	char why_unknown[256]; /* a program devcg cannot read: why its decisions are unknown */
};

/* One device: a node in the container's /dev, a device named, or one a
 * policy allows by its own exception. */
struct devcg_doctor_node {
	char path[256];    /* in the container ("" when there is no node) */
	bool present;      /* a node is there */
	uint8_t type;      /* DEVCG_CHAR or DEVCG_BLOCK */
	uint32_t major, minor;
	uint32_t mode, uid, gid; /* the node's, as the host sees them */
	bool bind_mounted; /* the node is a mount point (a host node bound), not made by mknod */
	/* per layer (result's layers), for r, w and m: 1 allow, 0 deny, -1 unknown */
	int8_t decision[DEVCG_DOCTOR_MAX_LAYERS][3];
	/* all layers together (the kernel's answer now), r, w, m */
	int8_t allowed[3];
};

enum devcg_doctor_kind {
	DEVCG_DOCTOR_NODE_REFUSED = 1,   /* a node present, r and w refused by the device programs */
	DEVCG_DOCTOR_ALLOWED_ABSENT,     /* a device a policy allows by its own exception, no node */
	DEVCG_DOCTOR_COMPANION_MISSING,  /* a GPU node (/dev/nvidiaN) without /dev/nvidiactl or /dev/nvidia-uvm */
	DEVCG_DOCTOR_V1_REFUSES,         /* hybrid host: the v1 devices cgroup refuses what the programs allow */
	DEVCG_DOCTOR_SYSTEMD_RELOAD,     /* allowed now, but not by the unit's DeviceAllow=: a daemon-reload revokes it */
	DEVCG_DOCTOR_RUNTIME_REINSTALL,  /* crun's program beside devcg's: crun update re-installs its own */
	DEVCG_DOCTOR_USERNS_MKNOD,       /* a mknod'd node in a user-namespaced container (nodev there) */
};

struct devcg_doctor_finding {
	uint8_t kind;      /* enum devcg_doctor_kind */
	char id[32];       /* the kind in words: "node-refused", "allowed-absent", ... */
	char path[256];    /* the device's node ("" when none) */
	uint8_t type;
	uint32_t major, minor;
	uint8_t access;    /* the access concerned (enum devcg_access bits) */
	char message[1024]; /* what is wrong, one line (container-made text escaped) */
	char fix[1024];    /* the command that fixes it */
};

struct devcg_doctor_opts {
	size_t sz;
	/* a process of the container (0: the first process of CGROUP) */
	int32_t pid;
	/* a runc or crun container id: its init process (ROOT/ID/state.json,
	 * runc's, or ROOT/ID/status, crun's, for each ROOT of runtime_root, else
	 * of /run/runc, /run/crun, containerd's /run/containerd/runc/{k8s.io,
	 * moby,default} and Docker's /run/docker/runtime-runc/moby); NULL: none */
	const char *container;
	/* the devices to look at, NULL-terminated: a path in the container's
	 * /dev ("/dev/nvidia0") or "TYPE MAJOR:MINOR" ("c 195:0"); NULL: every
	 * node of its /dev and every device a policy allows by its own exception */
	const char *const *devices;
	/* the runtime's state directory (its --root) to find container in;
	 * NULL: the usual ones above */
	const char *runtime_root;
};

/* Filled by the library; read-only to the caller. */
struct devcg_doctor_result {
	char cgroup[4096];    /* relative to the cgroup2 mount */
	char cgroup_path[4096]; /* the same as a path here (what the fixes name) */
	char v1_cgroup[4096]; /* hybrid host: its v1 devices cgroup ("" none) */
	int32_t pid;          /* the process whose /dev was walked */
	bool userns;          /* that process is in another user namespace than the caller */
	char unit[256];       /* the systemd unit whose own cgroup it is ("" none, or no systemd) */
	size_t nlayers;
	const struct devcg_doctor_layer *layers;
	size_t nnodes;
	const struct devcg_doctor_node *nodes;
	size_t nfindings;
	const struct devcg_doctor_finding *findings;
};

/*
 * Why a container cannot open a device and what will take access away:
 * walks the /dev of the container's process (through /proc/PID/root, by fd,
 * never following a symbolic link, on /dev's own file system, at most 8
 * deep and 100000 entries), decides r, w and m of every node (or of
 * opts->devices) by each layer (the v1 devices cgroup on a hybrid host,
 * each device program on the path, devcg's or read by devcg_reader_*()),
 * and lists findings, each with the command that fixes it. *RESULT: free
 * it with devcg_doctor_result_free(). Returns 0 (findings or not) or a
 * negative errno.
 */
DEVCG_API int devcg_doctor(const char *cgroup, const struct devcg_doctor_opts *opts,
			   struct devcg_doctor_result **result, struct devcg_error *err);
DEVCG_API void devcg_doctor_result_free(struct devcg_doctor_result *result);

/* ---- containers of a node agent ---------------------------------------- */

/*
 * The device logic of a node agent (an NRI plugin): a container's policy
 * installed at its start, kept in a state file per container, put back
 * after the runtime re-installs its own program, hot-plug by container ID.
 */
#define DEVCG_CONTAINER_STATE_DIR "/run/devcg/containers"

/* One entry of the container's OCI linux.devices (a node the runtime makes). */
struct devcg_container_device {
	const char *path;
	char type;                 /* 'c', 'b', 'u' (char), 'p' (fifo: no rule) */
	int64_t major, minor;
};
/* One entry of the container's OCI linux.resources.devices. */
struct devcg_container_rule {
	bool allow;
	char type;                 /* 'a', 'c', 'b'; 0 or 'a': all */
	int64_t major, minor;      /* -1: any (the OCI field absent) */
	const char *access;        /* "rwm" or a subset; NULL or "": rwm */
};
/* A container as the runtime describes it to a node agent (NRI). */
struct devcg_container {
	size_t sz;
	const char *id;            /* the runtime's ID: 1-128 of [0-9A-Za-z_.-], else -EINVAL */
	const char *name;          /* container name, pod name/namespace/uid: logs and */
	const char *pod_name;      /* state only; may be NULL */
	const char *pod_namespace;
	const char *pod_uid;
	int32_t pid;               /* a process of the container, host pid namespace */
	const char *runtime_handler; /* the CRI runtime handler ("runc", "crun", ...) or NULL */
	size_t ndevices;
	const struct devcg_container_device *devices;
	size_t nrules;
	const struct devcg_container_rule *rules;
};
struct devcg_container_opts {
	size_t sz;
	const char *state_dir;     /* NULL: DEVCG_CONTAINER_STATE_DIR (made 0700 as needed) */
	struct devcg_cache *cache; /* NULL: none */
	/* runtime handler name -> profile; NULL entries: "runc"/"" -> RUNC, a name
	 * containing "crun" -> CRUN; otherwise the owner of the runtime's program on the
	 * cgroup as the reader names it; else RUNC */
	bool no_systemd;
	bool audit;
	/* Out */
	char cgroup[4096];         /* relative to the cgroup2 mount */
	uint32_t prog_id, replaced_id;
	bool swapped;              /* false: nothing needed changing */
	enum devcg_runtime runtime_used;
	char systemd_unit[256];
	uint32_t systemd_entries;
};
/* StartContainer / Synchronize: install the container's policy and remember it. The
 * policy: when the state remembers this container on this cgroup (the agent restarted),
 * the remembered policy; else when devcg's own filter is on the cgroup already (a devcg OCI hook installed
 * it), its policy; else the runtime's list from DEVICES and RULES (as devcg oci-hook
 * computes it from config.json for that runtime). Plus the hot-plugged devices the state
 * holds. One swap (devcg_replace: adopts the runtime's program, systemd step), state file
 * written atomically (temp + rename, under a per-container lock). Idempotent: a second
 * call with the policy in place swaps nothing. */
DEVCG_API int devcg_container_start(const struct devcg_container *c,
				    struct devcg_container_opts *opts, struct devcg_error *err);
/* PostUpdateContainer: when a program other than devcg's remembered one is now on the
 * container's cgroup (the runtime re-installed its own), put the remembered policy back
 * in one swap; else nothing (opts->swapped false). -ENOENT: no state for C->id. */
DEVCG_API int devcg_container_updated(const struct devcg_container *c,
				      struct devcg_container_opts *opts, struct devcg_error *err);
/* RemoveContainer: forget the container (its state file; no cgroup is touched: the
 * runtime removes the cgroup). 0 also when there was none. */
DEVCG_API int devcg_container_forget(const char *id, const struct devcg_container_opts *opts,
				     struct devcg_error *err);
/* Synchronize: forget every container the state remembers whose ID is not among the N
 * IDS (the runtime's containers now: those removed while the agent was away). Each under
 * its lock, as devcg_container_forget(); files that are not state files stay. *PRUNED
 * (may be NULL): how many were forgotten. 0 also when there is no state directory. */
DEVCG_API int devcg_container_prune(const char *const *ids, size_t n,
				    const struct devcg_container_opts *opts, size_t *pruned,
				    struct devcg_error *err);
/* For hot-plug by ID: the container's pid and cgroup as the state remembers them, checked
 * live (the pid is still in that cgroup); -ENOENT: no such container / gone. CGROUP
 * (LEN bytes) is its path through the cgroup2 mount, as every devcg call takes it. */
DEVCG_API int devcg_container_find(const char *id, const char *state_dir, int32_t *pid,
				   char *cgroup, size_t len, struct devcg_error *err);

#ifdef __cplusplus
}
#endif
#endif /* DEVCG_H */

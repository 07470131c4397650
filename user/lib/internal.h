/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Helpers shared by the library's sources; not part of the public API. */
#ifndef DEVCG_INTERNAL_H
#define DEVCG_INTERNAL_H

#include "devcg.h"
#include "devcg_abi.h"

#include <stddef.h>
#include <stdint.h>
#include <linux/capability.h>

/* pidfd_open(2) and pidfd_send_signal(2) where the C library's headers
 * predate them (the unified numbers, as on every architecture but alpha) */
#include <sys/syscall.h>
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* Fill ERR (if any) with CODE and a printf-style message; returns CODE. */
int devcg_err(struct devcg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Prefix ERR's message with context, keeping its code; returns the code. */
int devcg_err_wrap(struct devcg_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* devcg_escape() without flags into BUF, for quoting untrusted text (rule
 * text, JSON strings, paths) into a message; returns BUF. */
const char *devcg_quote(char *buf, size_t len, const char *s, size_t n);

/* Capabilities, as bits of the kernel's numbers (linux/capability.h). */
#define DEVCG_CAP(n) (1ull << (n))
/* What loading, querying and attaching device filters needs
 * (kernel/bpf/syscall.c: CAP_BPF to load, CAP_NET_ADMIN to query and
 * attach, CAP_SYS_ADMIN for programs and maps by id); and the trace. */
#define DEVCG_CAPS_FILTER (DEVCG_CAP(CAP_BPF) | DEVCG_CAP(CAP_SYS_ADMIN) | DEVCG_CAP(CAP_NET_ADMIN))
#define DEVCG_CAPS_TRACE (DEVCG_CAP(CAP_BPF) | DEVCG_CAP(CAP_SYS_ADMIN) | DEVCG_CAP(CAP_PERFMON))
/*
 * The reason for CODE in a message: for -EPERM or -EACCES, the
 * capabilities among NEEDS that this thread lacks ("missing CAP_BPF and
 * CAP_SYS_ADMIN (devcg needs root)"); strerror() otherwise, and when none
 * is missing. The text lives until the thread's next call.
 */
const char *devcg_why(int code, uint64_t needs);
/* "missing CAP_X and CAP_Y (devcg needs root)" for the capabilities of
 * NEEDS this thread lacks, or NULL (CAP_SYS_ADMIN stands for them all). */
const char *devcg_caps_missing(uint64_t needs);
#define DEVCG_NEEDS_ROOT "(devcg needs root)"

/*
 * The size check of an options struct: 0 for NULL or a struct whose bytes
 * past KNOWN (the end of the last field this library has) are all zero;
 * -EINVAL with a message naming the struct when one is set, or when its
 * size is smaller than its sz field.
 */
int devcg_opts_check(const void *opts, size_t known, const char *name, struct devcg_error *err);
#define DEVCG_OPTS_END(TYPE, LAST) (offsetof(struct TYPE, LAST) + sizeof(((struct TYPE *)0)->LAST))
#define DEVCG_OPTS_VALID(opts, TYPE, LAST, err) \
	devcg_opts_check((opts), DEVCG_OPTS_END(TYPE, LAST), #TYPE, (err))
/* The last field of each options struct: update these when adding one
 * (the size assertions in error.c catch a field added past them). */
#define DEVCG_PARSE_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_parse_opts, runtime, err)
#define DEVCG_REPLACE_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_replace_opts, cgroup, err)
#define DEVCG_RESET_OPTS_VALID(opts, err) DEVCG_OPTS_VALID(opts, devcg_reset_opts, cgroup, err)

/*
 * libbpf's messages (libbpf_log.c). Between begin and end, libbpf's
 * warnings on this thread are collected in LOG instead of printed; end
 * adds them to ERR's message (one line, after devcg's own text) when RET
 * is a failure, except when the message names missing capabilities
 * (devcg_why()). Returns RET. Captures nest.
 */
struct devcg_bpf_log {
	char text[512];
	size_t len;
	struct devcg_bpf_log *outer;
};
void devcg_bpf_log_begin(struct devcg_bpf_log *log);
int devcg_bpf_log_end(struct devcg_bpf_log *log, int ret, struct devcg_error *err);

/* Is an options struct at least as large as the field F of TYPE? */
#define DEVCG_OPTS_HAS(opts, TYPE, F)                                   \
	((opts) && (opts)->sz >= offsetof(struct TYPE, F) + sizeof((opts)->F))
#define DEVCG_OPT(opts, TYPE, F, dflt) \
	(DEVCG_OPTS_HAS(opts, TYPE, F) ? (opts)->F : (dflt))

/* Exceptions of a policy are unique by (type, major, minor): the kernel's
 * dev_exception_add() merges and dev_exception_rm() trims only on an exact
 * match of all three. */
static inline int devcg_exception_cmp(const struct devcg_exception *a,
				      const struct devcg_exception *b)
{
	/* char before block; DEVCG_ANY (all ones) sorts last by itself */
	if (a->type != b->type)
		return a->type == DEVCG_CHAR ? -1 : 1;
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	return 0;
}

/*
 * Copy the exceptions, in no particular order, to OUT (room for
 * devcg_policy_count()); returns how many. Unlike devcg_policy_exceptions()
 * it only reads the policy, so threads may share one policy through it.
 */
size_t devcg_policy_collect(const struct devcg_policy *policy, struct devcg_exception *out);

/* The access of the exception with exactly KEY's type, major and minor (0: none). */
uint8_t devcg_policy_access_of(const struct devcg_policy *policy, const struct devcg_exception *key);

/* 1 when P allows a request (a device and an access) that none of the
 * NBASE policies of BASE (at most 7) allows, the first such in *WITNESS
 * (its access the request's); 0 when not; -ENOMEM. */
int devcg_policy_beyond(const struct devcg_policy *p, const struct devcg_policy *const *base, size_t nbase,
			struct devcg_exception *witness);

/* Read a whole file (or stdin for "-") into a NUL-terminated buffer. */
int devcg_read_file(const char *path, char **buf, size_t *len, struct devcg_error *err);

/* Parse the OCI JSON forms; appends to RULES only on success. With
 * opts->runtime set, a config.json yields that runtime's whole list; with
 * opts->verb, every rule must have that verb. */
int devcg_parse_oci(struct devcg_rules *rules, const char *text, size_t len,
		    const char *source, const struct devcg_parse_opts *opts, struct devcg_error *err);

/* runtime.c: append the list RT installs for linux.resources.devices RES
 * (N) and linux.devices paths PATHS (NPATHS); on error, *WHERE is the index
 * of the resources rule at fault, or -1. */
int devcg_runtime_rules(struct devcg_rules *rules, enum devcg_runtime rt, const struct devcg_rule *res,
			size_t n, const char *const *paths, size_t npaths, long *where,
			struct devcg_error *err);
const char *devcg_runtime_name(enum devcg_runtime rt);

/*
 * The cgroup v2 path of PID (0: this process), its "0::PATH" line in
 * /proc/PID/cgroup, as that file shows it; with V1 (may be NULL), the
 * path of a cgroup v1 devices hierarchy below its root that also
 * restricts PID ("" when none).
 */
int devcg_proc_cgroup(int pid, char *rel, size_t len, char *v1, size_t v1len,
		      struct devcg_error *err);

/* v1.c: devcg_pid_v1_cgroup() and devcg_cgroup_v1_cgroup(); with WRITER,
 * the caller's own v1 devices cgroup is refused (-EPERM). */
int devcg_v1_of_pid(int pid, bool writer, char *buf, size_t len, struct devcg_error *err);
int devcg_v1_of_cgroup(const char *cgroup, bool writer, char *buf, size_t len, struct devcg_error *err);

/* cgroup.c: undo mountinfo's \ooo escapes in place. */
void devcg_mountinfo_unescape(char *s);

/* Append many rules at once, or none. */
int devcg_rules_append(struct devcg_rules *rules, const struct devcg_rule *add, size_t n,
		       struct devcg_error *err);

/* A resolved cgroup v2 directory. */
struct devcg_cgroup {
	int fd;       /* O_RDONLY directory: what devcg acts on */
	uint64_t ino; /* its inode number: its cgroup id */
	/* the systemd unit whose own cgroup this is, when devcg keeps it in
	 * step (systemd.c): its program ("sd_devices") is left in place */
	char unit[256];
	/* its names, found on first use (devcg_cgroup_rel() and the others):
	 * a writer that meets no error needs none, and finding them is a
	 * readlink() and a walk up to the top of the mount */
	bool named;
	char joined[4096]; /* the path it was opened at */
	struct {
		char mount[4096]; /* the root of the mount it was reached through */
		char path[4096];  /* absolute, without symlinks */
		char rel[4096];   /* relative to the mount, "/" for its root */
	} name;
};
/* CG's names (see above); where they cannot be found, the path it was
 * opened at. */
const char *devcg_cgroup_mount(const struct devcg_cgroup *cg);
const char *devcg_cgroup_path(const struct devcg_cgroup *cg);
const char *devcg_cgroup_rel(const struct devcg_cgroup *cg);

int devcg_cgroup2_mount(char *buf, size_t len, struct devcg_error *err);
/* What a cgroup is resolved for: a writer never gets a root cgroup. */
enum devcg_resolve_for {
	DEVCG_RESOLVE_READ,
	DEVCG_RESOLVE_WRITE,
};
/*
 * Resolve ARG (absolute, or relative to the cgroup2 mount); must be cgroup2.
 * For DEVCG_RESOLVE_WRITE, an empty ARG, the hierarchy's root and the root
 * of the mount ARG is reached through (a cgroup namespace's root, a mounted
 * subtree) are refused with -EINVAL. A path longer than PATH_MAX is
 * -ENAMETOOLONG, never shortened.
 */
int devcg_cgroup_resolve(const char *arg, enum devcg_resolve_for use, struct devcg_cgroup *cg,
			 struct devcg_error *err);
/* -EINVAL with a message when the cgroup directory FD (of a hierarchy
 * KIND, "cgroup2" or "cgroup v1 devices") is a root; 0 otherwise. */
int devcg_cgroup_refuse_root(int fd, const char *arg, const char *path, const char *kind,
			     struct devcg_error *err);
void devcg_cgroup_close(struct devcg_cgroup *cg);

/*
 * A cgroup and its ancestors, nearest first ([0] is the cgroup itself), as
 * far up as a cgroup2 mount shows them: found by identity (each level is
 * the directory its child's ".." leads to, and lists the child), through
 * the mount CG was named by or another that shows more of the hierarchy.
 * RELS are relative to that mount's root.
 */
struct devcg_lineage {
	size_t n;
	int *fds;
	char **rels;
};
int devcg_cgroup_lineage(const struct devcg_cgroup *cg, struct devcg_lineage *out);
void devcg_lineage_free(struct devcg_lineage *l);

/* swap.c: the devcg_attach_mode of BPF attach flags. */
uint32_t devcg_mode_of(uint32_t attach_flags);

/* lock.c: serializes devcg writers on one cgroup where the kernel cannot
 * compare and swap for them; an flock on DIR/cgroup-ID.lock, a directory
 * only root may write, waited for at most DEVCG_LOCK_WAIT_MS. */
#define DEVCG_LOCK_DIR "/run/devcg"
#define DEVCG_LOCK_WAIT_MS 5000
struct devcg_lock {
	int fd, dir_fd;
	char name[64];
};
/* WHAT names the cgroup in messages; -ETIMEDOUT when the wait ends. */
int devcg_lock_take(const char *dir, uint64_t cgroup_id, const char *what, struct devcg_lock *lock,
		    struct devcg_error *err);
int devcg_lock_cgroup(const struct devcg_cgroup *cg, struct devcg_lock *lock, struct devcg_error *err);
void devcg_lock_release(struct devcg_lock *lock);

/* eperm.c: "permission denied (devcg needs root...)" when this process
 * lacks what bpf(2) asks of devcg, else NULL. */
const char *devcg_privilege_missing(void); /* keeps errno */
/* Why attaching to CG with ATTACH_FLAGS was refused with EPERM: missing
 * privileges, or the attach mode of the cgroup or of an ancestor. */
void devcg_attach_refusal(const struct devcg_cgroup *cg, uint32_t attach_flags, char *buf, size_t len);

/* swap.c: devcg_update() with EDIT in place of one rule (hot-plug): EDIT
 * returns 0 to swap the edited policy in, 1 for no change, or a negative
 * errno; it is called again on each compare-and-swap retry. */
typedef int (*devcg_policy_edit_fn)(struct devcg_policy *policy, void *ctx,
				    struct devcg_error *err);
/* What devcg_update_edit() did beside its return (IO may be NULL): a
 * failure of the systemd step comes after the swap, which stays. */
struct devcg_edit_io {
	bool no_widen;        /* in: no systemd step (an undo: the unit holds it already) */
	bool replace_others;  /* in: swap when the edit needs no change but a swap
			       * would detach others' programs (force, no_systemd) */
	bool swapped;         /* out: the edited policy is in place */
	bool others_replaced; /* out: programs not devcg's were detached (force, no_systemd) */
};
int devcg_update_edit(const char *cgroup, devcg_policy_edit_fn edit, void *ctx,
		      struct devcg_replace_opts *opts, struct devcg_edit_io *io, struct devcg_error *err);

/* filter.c: one filter version, loaded and frozen but not attached. */
struct devcg_filter_version {
	int prog_fd;
	uint32_t prog_id;
};

/* AUDIT_FROM: the audit filter (the version replaced) whose ring and loss
 * count the new version shares, or -1. */
int devcg_filter_load(const struct devcg_policy *policy, bool audit, int audit_from,
		      const char *fail_at, struct devcg_filter_version *out, struct devcg_error *err);
/* devcg's program (the variant without audit) on a policy map the caller
 * made, filled with VALUE (a struct devcg_policy_value) and froze: a new
 * program fd, or a negative errno. The bench loads it in its floor's
 * place, to show how much of a swap the program is. */
int devcg_filter_load_program(int policy_map_fd, const void *value, struct devcg_error *err);

/* What the filter's program is written from, besides the value's head:
 * how its table was filled. */
struct devcg_table {
	bool sorted;             /* the slots are sorted by key: a binary search */
	__u64 mult;              /* the hash multiplier (devcg_table_home()) */
	unsigned int probes[4];  /* per shape, the longest probe (0: none; 1 when sorted) */
	int any_access[2];       /* block, char: the '*:*' exception's access, or -1 */
};
/* The policy map's value for POLICY (filter.c): the head, the table, the
 * exceptions no request can match; and how the table was filled. Free
 * *OUT. 0 or -ENOMEM. */
int devcg_filter_value(const struct devcg_policy *policy, bool audit, struct devcg_policy_value **out,
		       size_t *size, struct devcg_table *table);
/* How the table of the value V was filled, found again from it alone (the
 * multiplier is chosen from the keys alone). */
int devcg_table_of(const struct devcg_policy_value *v, struct devcg_table *table);
/* user/lib/program.c: the filter's instructions for the policy value V and
 * its TABLE, naming the maps FDS (policy, audit ring, loss count; the last
 * two only with AUDIT). Free *INSNS. 0 or a negative errno. */
struct devcg_policy_value;
struct bpf_insn;
int devcg_program_build(const struct devcg_policy_value *v, const struct devcg_table *table, bool audit,
			const int fds[3], struct bpf_insn **insns, size_t *cnt);
/* The most slots a lookup reads, whatever the keys: DEVCG_MAX_PROBES in a
 * hash table, bits + 1 in a sorted one (at most 2^17 slots for
 * DEVCG_MAX_RULES keys) */
#define DEVCG_LOOKUP_MAX_SLOTS 18
/* The longest program devcg_program_build() writes (a longer one is
 * -E2BIG), whatever the keys: four lookups of at most
 * DEVCG_LOOKUP_MAX_SLOTS slots, and the audit variant's report */
#define DEVCG_PROGRAM_MAX_INSNS 1024
/* A tag's first slot in a table of 1 << BITS slots: the top BITS bits of
 * the low 32 bits of its key (major and minor) times MULT (32 bits), plus
 * a quarter turn for each shape, so that the shapes start apart (the same
 * numbers exact and with minor '*' do not meet); in 32-bit arithmetic, as
 * the filter computes it. */
static inline __u64 devcg_table_home(__u64 tag, __u64 mult, unsigned int bits)
{
	uint32_t shape = DEVCG_TAG_SEGMENT(tag) & 3;

	return (uint32_t)((uint32_t)tag * (uint32_t)mult + (shape << 30)) >> (32 - bits);
}
/* The audit ring buffer, and the count of denials it had no room for, of a
 * devcg filter, as new fds, or a negative errno. */
int devcg_filter_audit_ring(int prog_fd);
int devcg_filter_audit_lost(int prog_fd);
void devcg_filter_close(struct devcg_filter_version *v);
/*
 * Is PROG_FD a devcg filter? Returns 1 and, when POLICY is non-NULL, its
 * policy read back from its own maps; 0 for a foreign program.
 */
int devcg_filter_read(int prog_fd, struct devcg_policy **policy, bool *audit,
		      struct devcg_error *err);

/*
 * systemd.c: keeping a unit's own device program from narrowing devcg's.
 * The unit whose own cgroup is CG: 1 and its name, 0 when there is none
 * (or systemd is not PID 1), or an error.
 */
int devcg_systemd_unit_of(const struct devcg_cgroup *cg, char *unit, size_t len, struct devcg_error *err);
/* Every connection to systemd, readers' and writers', and each call on it
 * (authentication included) gives up after this long: a reload under load
 * takes seconds, a stalled re-exec minutes. */
#define DEVCG_SYSTEMD_TIMEOUT_US 5000000ull
/* The sockets tried, in order: the manager's private one, then the system
 * bus (NULL: sd_bus_open_system()'s). Tests point them at their own. */
extern const char *devcg_systemd_private_socket;
extern const char *devcg_systemd_bus_socket;
/* One DeviceAllow= entry: a path or pattern systemd takes, and its access. */
struct devcg_sd_entry {
	char path[4096];
	uint8_t access;
};
/* What POLICY allows, said in systemd's DeviceAllow= forms (a superset
 * where systemd cannot say it exactly), merged by path; the caller frees
 * *OUT. */
int devcg_systemd_entries(const struct devcg_policy *policy, struct devcg_sd_entry **out, size_t *n);
/* systemd's own device program (bpf-devices.c names it so). */
#define DEVCG_SYSTEMD_PROG_NAME "sd_devices"
/* Widen UNIT's DeviceAllow= (runtime) to hold everything POLICY allows;
 * *SENT: how many entries had to be sent. */
int devcg_systemd_widen(const char *unit, const struct devcg_policy *policy, size_t *sent,
			struct devcg_error *err);
/* devcg_state_read() without asking systemd for its programs' units (a
 * reader of many cgroups that needs only devcg's programs: the trace). */
int devcg_state_read_programs(const char *cgroup, struct devcg_state **out,
			      struct devcg_error *err);
/* The policy systemd's own program enforces for UNIT, from its
 * DevicePolicy= and DeviceAllow= as they are now (paths resolved now). */
int devcg_systemd_policy(const char *unit, const struct devcg_parse_opts *popts,
			 struct devcg_policy **out, struct devcg_error *err);
/* For a reader: the unit whose own cgroup is REL (the directory
 * CGROUP_FD) and its policy as devcg_systemd_policy() says it, over one
 * connection; 1, 0 when it is no unit's, or an error (*OUT untouched). */
int devcg_systemd_read(const char *rel, int cgroup_fd, char *unit, size_t len,
		       struct devcg_policy **out);

/* doctor.c: a result to fill by hand (the unit tests' facts), and the
 * findings from a result's facts alone (UNIT_POLICY: what the result's unit
 * allows, NULL when none). */
struct devcg_doctor_result *devcg_doctor_new(void);
int devcg_doctor_add_layer(struct devcg_doctor_result *r, const struct devcg_doctor_layer *layer,
			   struct devcg_error *err);
int devcg_doctor_add_node(struct devcg_doctor_result *r, const struct devcg_doctor_node *node,
			  struct devcg_error *err);
int devcg_doctor_find(struct devcg_doctor_result *r, const struct devcg_policy *unit_policy,
		      struct devcg_error *err);

/* Testing aid of struct devcg_replace_opts.fail_at. */
static inline bool devcg_fault(const char *fail_at, const char *step)
{
	return fail_at && !__builtin_strcmp(fail_at, step);
}

#endif

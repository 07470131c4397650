/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* The live kernel side (user/lib/live): cgroups resolved, the swap, its
 * lock, what runs for a cgroup, cgroup v1, systemd's own program on the
 * same cgroup, why the kernel said EPERM. Not part of the public API. */
#ifndef DEVCG_LIVE_H
#define DEVCG_LIVE_H

#include "filter/filter.h"

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

/* A resolved cgroup v2 directory. */
struct devcg_cgroup {
	int fd;       /* O_RDONLY directory: what devcg acts on */
	uint64_t ino; /* its inode number: its cgroup id */
	/* what the resolve's statx() said of it: a walk up to name it
	 * starts from there instead of asking again */
	struct {
		bool known, mount_root;
		uint64_t dev, mnt;
	} seen;
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

/* cgroup.c: the devcg_attach_mode of BPF attach flags. */
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

/*
 * systemd.c: keeping a unit's own device program from narrowing devcg's.
 * The unit whose own cgroup is CG, or the service or scope whose own cgroup
 * is above CG (crun's child "container" of a container's scope: systemd's
 * program there decides CG's opens too): 1 and its name, 0 when there is
 * none (or systemd is not PID 1), or an error. UNIT_CG (may be NULL): the
 * unit's own cgroup, as systemd names it.
 */
int devcg_systemd_unit_of(const struct devcg_cgroup *cg, char *unit, size_t len, char *unit_cg, size_t cglen,
			  struct devcg_error *err);
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
/* The systemd step alone, on CGROUP whose device filter is in place
 * already (devcg's, with POLICY): the unit devcg keeps in step there
 * (devcg_systemd_unit_of(), the enclosing scope too) gets what POLICY
 * allows; *ENTRIES how many entries had to be sent, UNIT its name ("" when
 * there is none). What a filter installed with no systemd step (a hook's
 * --no-systemd) leaves systemd's program refusing is so allowed. */
int devcg_systemd_step(const char *cgroup, const struct devcg_policy *policy, char *unit, size_t len,
		       uint32_t *entries, struct devcg_error *err);
/* devcg_state_read() without asking systemd for its programs' units (a
 * reader of many cgroups that needs only devcg's programs: the trace). */
int devcg_state_read_programs(const char *cgroup, struct devcg_state **out,
			      struct devcg_error *err);
/* A device a command grants on a cgroup: its type, numbers and access. */
struct devcg_grant {
	uint8_t type; /* DEVCG_CHAR or DEVCG_BLOCK */
	uint32_t major, minor;
	uint8_t access;
};
/* -EACCES, naming the ancestor cgroup and whose program it is, when a
 * program on an ancestor of CGROUP would still refuse an open of a device
 * of G[0..N) (state.c); 0 when none would. */
int devcg_ancestors_refuse(const char *cgroup, const struct devcg_grant *g, size_t n, bool systemd_step,
			   struct devcg_error *err);
/* devcg_replace() and devcg_replace_both() where several programs, others'
 * among them, are taken over only with TAKE_OVER (else refused unless
 * opts->force, as for the OCI hook: unattended, it does not drop another
 * party's program that may narrow what the runtime's allows). */
int devcg_replace_taking(const char *cgroup, const struct devcg_policy *policy,
			 struct devcg_replace_opts *opts, bool take_over, struct devcg_error *err);
int devcg_replace_both_taking(const char *cgroup, const char *v1, const struct devcg_policy *policy,
			      struct devcg_replace_opts *opts, bool take_over, struct devcg_error *err);
/* devcg_ancestors_refuse() for the allow rules among RULE (or RULES) that
 * name one device (swap.c); devcg_update() and devcg_update_rules() start
 * with it. */
int devcg_rules_ancestors_refuse(const char *cgroup, const struct devcg_rule *rule,
				 const struct devcg_rules *rules, bool systemd_step, struct devcg_error *err);
/* devcg_update_rules() once the caller made that check itself. */
int devcg_update_rules_as_checked(const char *cgroup, const struct devcg_rules *rules,
				  struct devcg_replace_opts *opts, struct devcg_error *err);
/* The policy systemd's own program enforces for UNIT, from its
 * DevicePolicy= and DeviceAllow= as they are now (paths resolved now). */
int devcg_systemd_policy(const char *unit, const struct devcg_parse_opts *popts,
			 struct devcg_policy **out, struct devcg_error *err);
/* For a reader: the unit whose own cgroup is REL (the directory
 * CGROUP_FD) and its policy as devcg_systemd_policy() says it, over one
 * connection; 1, 0 when it is no unit's, or an error (*OUT untouched). */
int devcg_systemd_read(const char *rel, int cgroup_fd, char *unit, size_t len,
		       struct devcg_policy **out);

/* cache.c: shared programs (struct devcg_cache of devcg.h). The entry
 * cached for KEY (LEN bytes, compared in full), pinned, with its program's
 * fd (the cache's own: not to be closed) in *PROG_FD and its id; NULL on a
 * miss. */
struct devcg_cache_entry;
struct devcg_cache_entry *devcg_cache_find(struct devcg_cache *cache, const void *key, size_t len,
					   int *prog_fd, uint32_t *prog_id);
/* The entry holding program PROG_ID, pinned, with its fd in *PROG_FD (the
 * cache's own), or NULL. */
struct devcg_cache_entry *devcg_cache_pin(struct devcg_cache *cache, uint32_t prog_id, int *prog_fd);
/* Let go of a pin (NULL: nothing): the fd it gave may close. */
void devcg_cache_unpin(struct devcg_cache_entry *entry);
/* Keep (a new fd of) PROG_FD for KEY, evicting the least recently used
 * entry past the bound; 0 or a negative errno. */
int devcg_cache_put(struct devcg_cache *cache, const void *key, size_t len, int prog_fd,
		    uint32_t prog_id);
/* The key of POLICY in its AUDIT variant (malloc'd, *LEN bytes): its
 * default and its exceptions in canonical order, without padding. NULL
 * when out of memory. */
void *devcg_cache_key(const struct devcg_policy *policy, bool audit, size_t *len);
/* devcg_filter_load() of POLICY without audit through CACHE: the cached
 * program (*PIN set: OUT's fd is the cache's, to be let go of with
 * devcg_cache_unpin(), not closed; nothing loaded) or a new one, then
 * cached (*PIN NULL: OUT's fd is the caller's). */
int devcg_cache_load(struct devcg_cache *cache, const struct devcg_policy *policy, const char *fail_at,
		     struct devcg_filter_version *out, struct devcg_cache_entry **pin, struct devcg_error *err);

#endif

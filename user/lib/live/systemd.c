// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Keeping systemd in step with devcg on a unit's cgroup.
 *
 * systemd (src/core/cgroup.c, cgroup_apply_devices; 252 here) builds its own
 * device program from a unit's DevicePolicy= and DeviceAllow= and attaches
 * it with BPF_F_ALLOW_MULTI whenever it re-applies the unit's cgroup
 * settings: on daemon-reload and daemon-reexec, and on any set-property of
 * a resource, DeviceAllow= or not (MemoryMax=, CPUWeight=, ...: what runc's
 * systemd driver sends on every update; seen in the systemd-v2 guest,
 * tools/vmtest). In multi mode every program must allow, so a device devcg
 * granted outside systemd's list is refused from then on: a revocation.
 *
 * devcg's answer: right after devcg's own program is swapped in, the
 * unit's DeviceAllow= list is widened so that systemd's program allows
 * what it allows too (swap.c says why after, not before). The list is
 * kept a superset of what devcg allows, never narrowed: systemd's program
 * says yes at least wherever devcg's does, and devcg's decides exactly.
 * The properties are runtime ones (nothing is written to /etc). SetUnitProperties merges DeviceAllow= entries by path
 * and replaces the access of an existing path (dbus-cgroup.c), so devcg
 * sends the union of the unit's access and its own for each path.
 *
 * How a devcg exception is said in systemd's forms (bpf-devices.c,
 * devnum-util.c): "c 1:3" is /dev/char/1:3 (parsed, never stat()ed),
 * "c 136:*" is char-136 (a numeric major), anything with a '*' major is
 * char-* (the class rule); majors and minors systemd cannot name
 * (DEVICE_MAJOR_VALID/DEVICE_MINOR_VALID: 12 and 20 bits) widen to the
 * class rule. A default-allow policy widens to char-* and block-*.
 */
#include "live/live.h"

#include <fcntl.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <systemd/sd-bus.h>

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"
#define SD_MAJOR_BITS 12
#define SD_MINOR_BITS 20
#define MAX_ENTRIES 4096


/*
 * systemd as PID 1 creates /run/systemd/system (sd_booted()). Only on the
 * unified hierarchy does it enforce devices with BPF programs; in hybrid
 * or legacy mode it rewrites the v1 devices.list instead (cgroup.c), and
 * widening DeviceAllow= there would make it replay the list: a gap.
 */
static bool booted;
static pthread_once_t booted_once = PTHREAD_ONCE_INIT;

static void look_for_systemd(void)
{
	struct statfs sfs;

	booted = access("/run/systemd/system/", F_OK) == 0 && !statfs("/sys/fs/cgroup", &sfs) &&
		 sfs.f_type == CGROUP2_SUPER_MAGIC;
}

/* Looked at once per process: PID 1 does not change, nor the hierarchy it
 * mounted. */
static bool systemd_booted(void)
{
	pthread_once(&booted_once, look_for_systemd);
	return booted;
}

const char *devcg_systemd_private_socket = "/run/systemd/private";
const char *devcg_systemd_bus_socket;

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Wait for B's authentication (and Hello on a bus) to finish, at most
 * DEVCG_SYSTEMD_TIMEOUT_US: sd-bus would wait 90 s for a manager that
 * accepted the connection and never answers (its auth timeout is not the
 * method calls' one). */
static int bus_ready(sd_bus *b)
{
	uint64_t deadline = now_us() + DEVCG_SYSTEMD_TIMEOUT_US, now;
	int ret;

	while (!(ret = sd_bus_is_ready(b))) {
		ret = sd_bus_process(b, NULL);
		if (ret < 0)
			return ret;
		if (ret > 0)
			continue;
		now = now_us();
		if (now >= deadline)
			return -ETIMEDOUT;
		ret = sd_bus_wait(b, deadline - now);
		if (ret < 0)
			return ret;
	}
	return ret < 0 ? ret : 0;
}

/* A connection to the unix socket PATH (as a bus client when BUS), with
 * every call bounded by DEVCG_SYSTEMD_TIMEOUT_US. */
static int bus_connect(const char *path, bool bus, sd_bus **out)
{
	char addr[4200], *a = addr;
	sd_bus *b = NULL;
	int ret;

	/* a D-Bus address escapes every byte but [-0-9A-Za-z_/.\\*] as %XX */
	a += sprintf(a, "unix:path=");
	for (; *path && a < addr + sizeof(addr) - 4; path++) {
		unsigned char c = (unsigned char)*path;

		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    strchr("-_/.\\*", c))
			*a++ = (char)c;
		else
			a += sprintf(a, "%%%02x", c);
	}
	if (*path)
		return -ENAMETOOLONG;
	*a = '\0';
	ret = sd_bus_new(&b);
	/* sd_bus_set_address() says 1 when it stored the address */
	if (ret >= 0)
		ret = sd_bus_set_address(b, addr);
	if (ret >= 0)
		ret = sd_bus_set_bus_client(b, bus);
	if (ret >= 0)
		ret = sd_bus_set_method_call_timeout(b, DEVCG_SYSTEMD_TIMEOUT_US);
	if (ret >= 0)
		ret = sd_bus_start(b);
	if (ret >= 0)
		ret = bus_ready(b);
	if (ret < 0) {
		sd_bus_unref(b);
		return ret;
	}
	*out = b;
	return 0;
}

/* The manager's private socket as root (what systemctl uses), else the
 * system bus; the system bus only when the private socket cannot be
 * connected to (not there, or not root's), since a manager that does not
 * answer on one does not on the other. */
static int bus_open(sd_bus **bus, struct devcg_error *err)
{
	const char *priv = devcg_systemd_private_socket;
	int ret;

	*bus = NULL;
	ret = bus_connect(priv, false, bus);
	if (!ret)
		return 0;
	if (ret != -ENOENT && ret != -ECONNREFUSED && ret != -EACCES && ret != -EPERM && ret != -ENOTDIR)
		return devcg_err(err, ret, "cannot reach systemd over D-Bus (%s): %s", priv,
				 ret == -ETIMEDOUT ? "no answer within 5 s" : strerror(-ret));
	if (devcg_systemd_bus_socket) {
		ret = bus_connect(devcg_systemd_bus_socket, true, bus);
	} else {
		ret = sd_bus_open_system(bus);
		if (ret >= 0)
			ret = sd_bus_set_method_call_timeout(*bus, DEVCG_SYSTEMD_TIMEOUT_US);
		if (ret >= 0)
			ret = bus_ready(*bus);
		if (ret < 0)
			*bus = sd_bus_unref(*bus);
	}
	if (ret < 0)
		return devcg_err(err, ret, "cannot reach systemd over D-Bus: %s",
				 ret == -ETIMEDOUT ? "no answer within 5 s" : strerror(-ret));
	return 0;
}

/* Is systemd's ControlGroup CG (a path in its cgroup2 hierarchy, which is
 * /sys/fs/cgroup here: systemd_booted()) the directory CGROUP_FD? A cgroup
 * reached through another mount or a cgroup namespace has a path of its
 * own that may name another unit's cgroup in systemd's view. */
static bool same_cgroup(const char *cg, int cgroup_fd)
{
	char path[4200];
	struct stat a, b;

	if ((size_t)snprintf(path, sizeof(path), "/sys/fs/cgroup%s", cg) >= sizeof(path))
		return false;
	return !stat(path, &a) && !fstat(cgroup_fd, &b) && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* The unit-type interface that carries ControlGroup, from the unit's suffix. */
static const char *cgroup_interface(const char *unit)
{
	static const char *const map[][2] = {
		{ ".service", "org.freedesktop.systemd1.Service" },
		{ ".scope", "org.freedesktop.systemd1.Scope" },
		{ ".slice", "org.freedesktop.systemd1.Slice" },
		{ ".socket", "org.freedesktop.systemd1.Socket" },
		{ ".mount", "org.freedesktop.systemd1.Mount" },
		{ ".swap", "org.freedesktop.systemd1.Swap" },
	};
	const char *dot = strrchr(unit, '.');
	size_t i;

	for (i = 0; dot && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcmp(dot, map[i][0]))
			return map[i][1];
	return NULL;
}

/* Does the cgroup directory FD hold no process and exactly one child
 * cgroup (the one on the way down to the cgroup written)? */
static bool holds_one_child_only(int fd)
{
	char buf[1];
	struct dirent *d;
	int procs, dfd, dirs = 0;
	ssize_t got;
	DIR *dir;

	procs = openat(fd, "cgroup.procs", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (procs < 0)
		return false;
	got = read(procs, buf, sizeof(buf));
	close(procs);
	if (got != 0)
		return false;
	dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return false;
	}
	while ((d = readdir(dir)))
		dirs += d->d_type == DT_DIR && strcmp(d->d_name, ".") && strcmp(d->d_name, "..");
	closedir(dir);
	return dirs == 1;
}

/*
 * Is CGROUP_FD DEPTH levels below systemd's ControlGroup CG, and is all
 * that the unit holds in CGROUP_FD's subtree (no process and no other
 * child on the way up)? Walked up by "..", each step a directory fd: no
 * path of the subtree is trusted. Widening such a unit's DeviceAllow=
 * changes what no other process may open.
 */
static bool sole_subtree_of(const char *cg, int cgroup_fd, unsigned int depth)
{
	int fd = cgroup_fd, up;
	bool ok = true;

	for (; depth && ok; depth--) {
		up = openat(fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd != cgroup_fd)
			close(fd);
		if (up < 0)
			return false;
		fd = up;
		ok = holds_one_child_only(fd);
	}
	ok = ok && same_cgroup(cg, fd);
	if (fd != cgroup_fd)
		close(fd);
	return ok;
}

/* How many levels REL is below CG ("/a.scope" and "/a.scope/x/y": 2), 0
 * when it is not. */
static unsigned int levels_below(const char *cg, const char *rel)
{
	size_t n = strlen(cg);
	unsigned int depth = 0;

	if (strncmp(cg, rel, n) || rel[n] != '/' || !rel[n + 1])
		return 0;
	for (rel += n; *rel; rel++)
		depth += *rel == '/' && rel[1] && rel[1] != '/';
	return depth;
}

static int read_unit(sd_bus *bus, const char *unit, char policy[16], struct devcg_sd_entry **out,
		     size_t *n, struct devcg_error *err);

/* Does systemd restrict UNIT's devices (a program of its own on the
 * unit's cgroup)? Not with DevicePolicy=auto and no DeviceAllow=. */
static int unit_restricts(sd_bus *bus, const char *unit, struct devcg_error *err)
{
	struct devcg_sd_entry *have = NULL;
	char policy[16];
	size_t n = 0;
	int ret = read_unit(bus, unit, policy, &have, &n, err);

	free(have);
	return ret < 0 ? ret : strcmp(policy, "auto") || n;
}

/*
 * The unit whose cgroup CGROUP_FD (REL in systemd's view) is: 1 and its
 * name in UNIT. ENCLOSING: also a service or scope whose own cgroup is
 * above REL (crun runs a container in its scope's child "container";
 * systemd's program on the scope decides that child's opens too), when
 * REL's subtree is all the unit holds (sole_subtree_of()) and systemd
 * restricts that unit's devices: a unit with DevicePolicy=auto and no
 * DeviceAllow= has no program, and a first entry would turn one on.
 */
static int unit_of(sd_bus *bus, const char *rel, int cgroup_fd, bool enclosing, char *unit, size_t len,
		   char *unit_cg, size_t cglen, struct devcg_error *err)
{
	unsigned int depth;

	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	char *id = NULL, *cg = NULL;
	const char *obj, *iface;
	int ret;

	unit[0] = '\0';
	/* the closest unit whose cgroup contains REL (manager_get_unit_by_cgroup) */
	ret = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "GetUnitByControlGroup", &e,
				 &reply, "s", rel);
	if (ret < 0) {
		/* no unit at all: not systemd's cgroup */
		ret = sd_bus_error_has_name(&e, "org.freedesktop.systemd1.NoSuchUnit") ||
		      sd_bus_error_has_name(&e, "org.freedesktop.systemd1.NoUnitForInvocationID") ? 0 :
		      devcg_err(err, ret, "systemd: cannot look up the unit of %s: %s", rel,
				e.message ? e.message : strerror(-ret));
		goto out;
	}
	ret = sd_bus_message_read(reply, "o", &obj);
	if (ret >= 0)
		ret = sd_bus_get_property_string(bus, SD_DEST, obj, "org.freedesktop.systemd1.Unit", "Id",
						 &e, &id);
	iface = ret >= 0 ? cgroup_interface(id) : NULL;
	if (ret >= 0 && iface)
		ret = sd_bus_get_property_string(bus, SD_DEST, obj, iface, "ControlGroup", &e, &cg);
	if (ret < 0) {
		ret = devcg_err(err, ret, "systemd: cannot read the unit of %s: %s", rel,
				e.message ? e.message : strerror(-ret));
		goto out;
	}
	/* only the unit's own cgroup: systemd attaches nothing to cgroups
	 * below a unit (a delegated subtree) */
	ret = 0;
	if (iface && cg && !strcmp(cg, rel) && same_cgroup(cg, cgroup_fd)) {
		snprintf(unit, len, "%s", id);
		ret = 1;
	} else if (enclosing && iface && cg && (!strcmp(iface, "org.freedesktop.systemd1.Scope") ||
						 !strcmp(iface, "org.freedesktop.systemd1.Service")) &&
		   (depth = levels_below(cg, rel)) && sole_subtree_of(cg, cgroup_fd, depth)) {
		ret = unit_restricts(bus, id, err);
		if (ret == 1)
			snprintf(unit, len, "%s", id);
	}
out:
	if (ret == 1 && unit_cg)
		snprintf(unit_cg, cglen, "%s", cg);
	free(id);
	free(cg);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return ret;
}

int devcg_systemd_unit_of(const struct devcg_cgroup *cg, char *unit, size_t len, char *unit_cg, size_t cglen,
			  struct devcg_error *err)
{
	sd_bus *bus = NULL;
	const char *rel;
	int ret;

	unit[0] = '\0';
	/* the cgroup's name only where systemd could have a unit there */
	if (!systemd_booted() || !strcmp(rel = devcg_cgroup_rel(cg), "/"))
		return 0;
	ret = bus_open(&bus, err);
	if (!ret)
		ret = unit_of(bus, rel, cg->fd, true, unit, len, unit_cg, cglen, err);
	sd_bus_unref(bus);
	return ret;
}

static uint8_t access_of(const char *rwm)
{
	uint8_t a = 0;

	if (!*rwm)
		return DEVCG_ACC_ALL; /* an empty access is rwm (dbus-cgroup.c) */
	a |= strchr(rwm, 'r') ? DEVCG_ACC_READ : 0;
	a |= strchr(rwm, 'w') ? DEVCG_ACC_WRITE : 0;
	a |= strchr(rwm, 'm') ? DEVCG_ACC_MKNOD : 0;
	return a;
}

/* The unit's DevicePolicy= and DeviceAllow= entries. */
static int read_unit(sd_bus *bus, const char *unit, char policy[16], struct devcg_sd_entry **out,
		     size_t *n, struct devcg_error *err)
{
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *reply = NULL;
	const char *iface = cgroup_interface(unit);
	char obj[512], *pol = NULL;
	struct devcg_sd_entry *v = NULL;
	const char *path, *rwm;
	int ret;

	*out = NULL;
	*n = 0;
	if (!iface)
		return devcg_err(err, -EINVAL, "systemd: %s is not a unit with a cgroup", unit);
	ret = sd_bus_call_method(bus, SD_DEST, SD_PATH, SD_MANAGER, "GetUnit", &e, &reply, "s", unit);
	if (ret >= 0) {
		const char *o;

		ret = sd_bus_message_read(reply, "o", &o);
		if (ret >= 0)
			snprintf(obj, sizeof(obj), "%s", o);
		sd_bus_message_unref(reply);
		reply = NULL;
	}
	if (ret >= 0)
		ret = sd_bus_get_property_string(bus, SD_DEST, obj, iface, "DevicePolicy", &e, &pol);
	if (ret >= 0)
		ret = sd_bus_get_property(bus, SD_DEST, obj, iface, "DeviceAllow", &e, &reply, "a(ss)");
	if (ret >= 0)
		ret = sd_bus_message_enter_container(reply, 'a', "(ss)");
	while (ret >= 0 && (ret = sd_bus_message_read(reply, "(ss)", &path, &rwm)) > 0) {
		struct devcg_sd_entry *grown;

		if (*n == MAX_ENTRIES) {
			ret = -E2BIG;
			break;
		}
		grown = realloc(v, (*n + 1) * sizeof(*v));
		if (!grown) {
			ret = -ENOMEM;
			break;
		}
		v = grown;
		if ((size_t)snprintf(v[*n].path, sizeof(v[*n].path), "%s", path) >= sizeof(v[*n].path)) {
			ret = -ENAMETOOLONG;
			break;
		}
		v[(*n)++].access = access_of(rwm);
	}
	if (ret < 0) {
		devcg_err(err, ret, "systemd: cannot read the device settings of %s: %s", unit,
			  e.message ? e.message : strerror(-ret));
		free(v);
		v = NULL;
		*n = 0;
	} else {
		snprintf(policy, 16, "%s", pol ? pol : "auto");
		ret = 0;
	}
	*out = v;
	free(pol);
	sd_bus_message_unref(reply);
	sd_bus_error_free(&e);
	return ret;
}

/* systemd's form of one devcg exception, or of the class that holds it. */
static void entry_of(const struct devcg_exception *ex, char *buf, size_t len)
{
	const char *kind = ex->type == DEVCG_BLOCK ? "block" : "char";
	bool major_ok = ex->major != DEVCG_ANY && ex->major < (1u << SD_MAJOR_BITS);
	bool minor_ok = ex->minor != DEVCG_ANY && ex->minor < (1u << SD_MINOR_BITS);

	if (major_ok && minor_ok)
		snprintf(buf, len, "/dev/%s/%u:%u", kind, ex->major, ex->minor);
	else if (major_ok && ex->minor == DEVCG_ANY)
		snprintf(buf, len, "%s-%u", kind, ex->major);
	else
		snprintf(buf, len, "%s-*", kind);
}

/* Add PATH with ACCESS to the entries to send, merged by path. */
static int want(struct devcg_sd_entry **v, size_t *n, const char *path, uint8_t access)
{
	struct devcg_sd_entry *grown;
	size_t i;

	for (i = 0; i < *n; i++) {
		if (!strcmp((*v)[i].path, path)) {
			(*v)[i].access |= access;
			return 0;
		}
	}
	if (*n == MAX_ENTRIES)
		return -E2BIG;
	grown = realloc(*v, (*n + 1) * sizeof(**v));
	if (!grown)
		return -ENOMEM;
	*v = grown;
	snprintf((*v)[*n].path, sizeof((*v)[*n].path), "%s", path);
	(*v)[(*n)++].access = access;
	return 0;
}

int devcg_systemd_entries(const struct devcg_policy *policy, struct devcg_sd_entry **out, size_t *n_out)
{
	size_t i, n = devcg_policy_count(policy);
	struct devcg_exception *ex = NULL;
	int ret = 0;

	*out = NULL;
	*n_out = 0;
	if (devcg_policy_default_allow(policy))
		return want(out, n_out, "char-*", DEVCG_ACC_ALL) ?: want(out, n_out, "block-*", DEVCG_ACC_ALL);
	ex = calloc(n ? n : 1, sizeof(*ex));
	if (!ex)
		return -ENOMEM;
	n = devcg_policy_collect(policy, ex);
	for (i = 0; !ret && i < n; i++) {
		char path[64];

		entry_of(&ex[i], path, sizeof(path));
		ret = want(out, n_out, path, ex[i].access);
	}
	free(ex);
	return ret;
}

int devcg_systemd_widen(const char *unit, const struct devcg_policy *policy, size_t *sent,
			struct devcg_error *err)
{
	size_t i, n_have = 0, n_send = 0;
	struct devcg_sd_entry *have = NULL, *send = NULL;
	sd_bus_error e = SD_BUS_ERROR_NULL;
	sd_bus_message *m = NULL;
	sd_bus *bus = NULL;
	char unit_policy[16];
	int ret;

	*sent = 0;
	ret = bus_open(&bus, err);
	if (!ret)
		ret = read_unit(bus, unit, unit_policy, &have, &n_have, err);
	if (ret)
		goto out;
	ret = devcg_systemd_entries(policy, &send, &n_send);
	if (ret) {
		devcg_err(err, ret, "systemd: cannot prepare the device list of %s: %s", unit, strerror(-ret));
		goto out;
	}
	/* send only what widens the unit's list: the union of access per path */
	for (i = 0; i < n_send; i++) {
		size_t k;

		for (k = 0; k < n_have; k++) {
			if (!strcmp(have[k].path, send[i].path)) {
				if ((have[k].access | send[i].access) == have[k].access)
					send[i].access = 0; /* already allowed as widely */
				else
					send[i].access |= have[k].access;
				break;
			}
		}
	}
	ret = sd_bus_message_new_method_call(bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
	if (ret >= 0)
		ret = sd_bus_message_append(m, "sb", unit, 1 /* runtime: nothing in /etc */);
	if (ret >= 0)
		ret = sd_bus_message_open_container(m, 'a', "(sv)");
	if (ret >= 0)
		ret = sd_bus_message_open_container(m, 'r', "sv");
	if (ret >= 0)
		ret = sd_bus_message_append(m, "s", "DeviceAllow");
	if (ret >= 0)
		ret = sd_bus_message_open_container(m, 'v', "a(ss)");
	if (ret >= 0)
		ret = sd_bus_message_open_container(m, 'a', "(ss)");
	for (i = 0; ret >= 0 && i < n_send; i++) {
		char rwm[4];

		if (!send[i].access)
			continue;
		devcg_access_format(send[i].access, rwm);
		ret = sd_bus_message_append(m, "(ss)", send[i].path, rwm);
		if (ret >= 0)
			(*sent)++;
	}
	if (ret >= 0)
		ret = sd_bus_message_close_container(m);
	if (ret >= 0)
		ret = sd_bus_message_close_container(m);
	if (ret >= 0)
		ret = sd_bus_message_close_container(m);
	if (ret >= 0)
		ret = sd_bus_message_close_container(m);
	/* an empty DeviceAllow= array would reset the unit's list: send
	 * nothing when nothing widens */
	if (ret >= 0 && *sent)
		ret = sd_bus_call(bus, m, 0, &e, NULL);
	if (ret < 0)
		ret = devcg_err(err, ret, "systemd: cannot widen DeviceAllow= of %s: %s", unit,
				e.message ? e.message : strerror(-ret));
	else
		ret = 0;
out:
	free(have);
	free(send);
	sd_bus_message_unref(m);
	sd_bus_error_free(&e);
	sd_bus_unref(bus);
	return ret;
}

/*
 * The policy systemd's own program enforces for the unit (cgroup.c,
 * cgroup_apply_devices): "closed", and "auto" with a list, allow the static
 * list (bpf_devices_allow_list_static) and the entries; "strict" only the
 * entries; "auto" with no entry installs no program (allow all).
 */
static int policy_of(sd_bus *bus, const char *unit, const struct devcg_parse_opts *popts,
		     struct devcg_policy **out, struct devcg_error *err)
{
	static const char static_list[] =
		"allow /dev/null rwm\nallow /dev/zero rwm\nallow /dev/full rwm\n"
		"allow /dev/random rwm\nallow /dev/urandom rwm\nallow /dev/tty rwm\n"
		"allow /dev/ptmx rwm\nallow /run/systemd/inaccessible/chr rwm\n"
		"allow /run/systemd/inaccessible/blk rwm\nallow char-pts rw\n";
	struct devcg_rules *rules = devcg_rules_new();
	struct devcg_policy *policy = devcg_policy_new();
	struct devcg_sd_entry *have = NULL;
	char unit_policy[16], source[300];
	size_t n = 0, i;
	int ret;

	if (!rules || !policy) {
		ret = devcg_err(err, -ENOMEM, "out of memory");
		goto out;
	}
	ret = read_unit(bus, unit, unit_policy, &have, &n, err);
	if (ret)
		goto out;
	snprintf(source, sizeof(source), "%s DeviceAllow=", unit);
	if (strcmp(unit_policy, "auto") || n) {
		ret = devcg_rules_parse_rule(rules, "deny a", source, popts, err);
		if (!ret && strcmp(unit_policy, "strict"))
			ret = devcg_rules_parse(rules, static_list, strlen(static_list), source, popts, err);
	}
	for (i = 0; !ret && i < n; i++) {
		char line[sizeof(have->path) + 16], rwm[4];

		devcg_access_format(have[i].access, rwm);
		snprintf(line, sizeof(line), "allow %s %s", have[i].path, rwm);
		ret = devcg_rules_parse_rule(rules, line, source, popts, err);
		/* systemd logs and skips an entry it cannot resolve */
		if (ret == -ENOENT || ret == -ENODEV)
			ret = 0;
	}
	if (!ret)
		ret = devcg_policy_apply_all(policy, rules, err);
	if (!ret) {
		*out = policy;
		policy = NULL;
	}
out:
	devcg_policy_free(policy);
	devcg_rules_free(rules);
	free(have);
	return ret;
}

int devcg_systemd_policy(const char *unit, const struct devcg_parse_opts *popts,
			 struct devcg_policy **out, struct devcg_error *err)
{
	sd_bus *bus = NULL;
	int ret = bus_open(&bus, err);

	if (!ret)
		ret = policy_of(bus, unit, popts, out, err);
	sd_bus_unref(bus);
	return ret;
}

int devcg_systemd_read(const char *rel, int cgroup_fd, char *unit, size_t len,
		       struct devcg_policy **out)
{
	sd_bus *bus = NULL;
	int ret;

	unit[0] = '\0';
	if (!systemd_booted() || !strcmp(rel, "/"))
		return 0;
	/* bounded as every caller's is (bus_open()) */
	ret = bus_open(&bus, NULL);
	if (!ret)
		ret = unit_of(bus, rel, cgroup_fd, false, unit, len, NULL, 0, NULL);
	if (ret == 1 && policy_of(bus, unit, NULL, out, NULL))
		ret = -EIO;
	if (ret != 1)
		unit[0] = '\0';
	sd_bus_unref(bus);
	return ret;
}

int devcg_systemd_step(const char *cgroup, const struct devcg_policy *policy, char *unit, size_t len,
		       uint32_t *entries, struct devcg_error *err)
{
	struct devcg_cgroup cg;
	size_t sent = 0;
	int ret;

	unit[0] = '\0';
	*entries = 0;
	ret = devcg_cgroup_resolve(cgroup, DEVCG_RESOLVE_WRITE, &cg, err);
	if (ret)
		return ret;
	ret = devcg_systemd_unit_of(&cg, cg.unit, sizeof(cg.unit), NULL, 0, err);
	if (ret == 1)
		ret = devcg_systemd_widen(cg.unit, policy, &sent, err);
	if (!ret && cg.unit[0]) {
		snprintf(unit, len, "%s", cg.unit);
		*entries = (uint32_t)sent;
	}
	devcg_cgroup_close(&cg);
	return ret < 0 ? ret : 0;
}

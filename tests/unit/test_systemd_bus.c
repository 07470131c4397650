// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* How devcg reaches systemd: the manager's private socket, else the system
 * bus, and never longer than DEVCG_SYSTEMD_TIMEOUT_US per step. The two
 * sockets are pointed at a scratch directory, where the test plays the
 * manager (or nobody). */
#include "testutil.h"
#include "internal.h"

#include <pthread.h>
#include <sys/socket.h>
#include <sys/un.h>

static char private_path[128], bus_path[128];

/* Point devcg at scratch sockets, neither of which exists yet. */
static void scratch_sockets(void)
{
	snprintf(private_path, sizeof(private_path), "%s/private", scratch());
	snprintf(bus_path, sizeof(bus_path), "%s/bus", scratch());
	devcg_systemd_private_socket = private_path;
	devcg_systemd_bus_socket = bus_path;
}

static int listen_on(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	CHECK(fd >= 0);
	CHECK(!bind(fd, (struct sockaddr *)&a, sizeof(a)));
	CHECK(!listen(fd, 4));
	return fd;
}

/* A writer's D-Bus step: widening a unit's DeviceAllow=. */
static int widen(struct devcg_error *err)
{
	struct devcg_policy *p = devcg_policy_new();
	size_t sent = 0;
	int ret;

	CHECK(p);
	ret = devcg_systemd_widen("x.service", p, &sent, err);
	devcg_policy_free(p);
	return ret;
}

struct manager {
	int listen_fd;
	bool authenticate; /* else: close the connection at once */
	int accepted;      /* connections taken */
};

/* The manager's side: take one connection; close it, or answer the
 * authentication and then nothing. */
static void *manager(void *arg)
{
	struct manager *m = arg;
	char buf[512], *line;
	ssize_t n;
	int fd = accept(m->listen_fd, NULL, NULL);

	if (fd < 0)
		return NULL;
	__atomic_add_fetch(&m->accepted, 1, __ATOMIC_SEQ_CST);
	if (!m->authenticate) {
		close(fd);
		return NULL;
	}
	/* sd-bus sends "\0AUTH EXTERNAL", "DATA", "NEGOTIATE_UNIX_FD" and
	 * "BEGIN" at once, each line ended by CR LF; the manager's answers */
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
		buf[n] = '\0';
		for (line = buf + !buf[0]; *line; line = strstr(line, "\r\n") + 2) {
			if (!strncmp(line, "AUTH EXTERNAL\r\n", 15))
				dprintf(fd, "DATA\r\n");
			else if (!strncmp(line, "DATA", 4) || !strncmp(line, "AUTH EXTERNAL ", 14))
				dprintf(fd, "OK 0123456789abcdef0123456789abcdef\r\n");
			else if (!strncmp(line, "NEGOTIATE_UNIX_FD", 17))
				dprintf(fd, "AGREE_UNIX_FD\r\n");
			if (!strstr(line, "\r\n"))
				break;
		}
	}
	close(fd);
	return NULL;
}

UTEST(systemd_bus_tries_the_private_socket_without_a_system_bus)
{
	struct devcg_error err = { 0 };
	struct manager m = { 0 };
	pthread_t t;
	char want[200];

	scratch_sockets();
	m.listen_fd = listen_on(private_path);
	CHECK(!pthread_create(&t, NULL, manager, &m));
	CHECK(widen(&err) < 0);
	shutdown(m.listen_fd, SHUT_RDWR); /* ends an accept() still waiting */
	pthread_join(t, NULL);
	CHECK_INT(m.accepted, 1);
	/* the error is the private socket's, not the absent bus's */
	snprintf(want, sizeof(want), "cannot reach systemd over D-Bus (%s): ", private_path);
	CHECK_MSG(!strncmp(err.msg, want, strlen(want)), "error: %s", err.msg);
	close(m.listen_fd);
}

/* The control: with neither socket, the one error of no systemd. */
UTEST(systemd_bus_without_either_socket_cannot_reach_systemd)
{
	struct devcg_error err = { 0 };

	scratch_sockets();
	CHECK_INT(widen(&err), -ENOENT);
	CHECK_STR(err.msg, "cannot reach systemd over D-Bus: No such file or directory");
}

UTEST(systemd_writer_gives_up_on_a_manager_that_never_authenticates)
{
	struct devcg_error err = { 0 };
	int fd;

	scratch_sockets();
	/* the kernel queues the connection; nobody ever reads it */
	fd = listen_on(private_path);
	CHECK_INT(widen(&err), -ETIMEDOUT);
	CHECK_MSG(strstr(err.msg, "no answer within 5 s"), "error: %s", err.msg);
	close(fd);
}

UTEST(systemd_writer_gives_up_on_a_manager_that_never_answers_a_call)
{
	struct devcg_error err = { 0 };
	struct manager m = { .authenticate = true };
	pthread_t t;

	scratch_sockets();
	m.listen_fd = listen_on(private_path);
	CHECK(!pthread_create(&t, NULL, manager, &m));
	CHECK_INT(widen(&err), -ETIMEDOUT);
	CHECK_INT(m.accepted, 1);
	CHECK_MSG(strstr(err.msg, "x.service"), "error: %s", err.msg);
	pthread_join(t, NULL); /* the connection closed: the manager reads EOF */
	close(m.listen_fd);
}

// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* devcg-nri: options, the two ways of being connected (started by the
 * runtime with NRI_PLUGIN_SOCKET, or connecting to its socket and again
 * after it went away), signals. The plugin itself is plugin.c, the device
 * work agent.c. */
#include "nri.h"

#include <devcg.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SOCKET "/var/run/nri/nri.sock"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "devcg-nri: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\nTry 'devcg-nri --help'.\n");
	return 2;
}

static bool valid_idx(const char *s)
{
	return s && strlen(s) == 2 && s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9';
}

static bool valid_name(const char *s)
{
	return s && *s && strlen(s) < 128 && !strchr(s, '/');
}

/* The fd the runtime handed over: a number naming an open socket. */
static int inherited_fd(const char *s)
{
	char *end;
	long fd;

	errno = 0;
	fd = strtol(s, &end, 10);
	if (errno || end == s || *end || fd < 0 || fd > 65535 || fcntl((int)fd, F_GETFD) < 0)
		return -EBADF;
	fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	return (int)fd;
}

static int connect_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, ret;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		ret = -errno;
		close(fd);
		return ret;
	}
	return fd;
}

/* One second, or less when a signal comes. */
static void backoff(const sigset_t *waitmask)
{
	struct timespec ts = { .tv_sec = 1 };

	ppoll(NULL, 0, &ts, waitmask);
}

/* Connect, serve, and again after the runtime went away (its restart). */
static int socket_mode(const char *path, const struct nri_plugin_opts *po)
{
	int last_err = 0;

	while (!stop) {
		int fd = connect_socket(path), ret;

		if (fd < 0) {
			if (fd != last_err)
				nri_log(NRI_LOG_WARNING, "cannot connect to %s: %s; trying again every second", path,
					strerror(-fd));
			last_err = fd;
			backoff(po->waitmask);
			continue;
		}
		last_err = 0;
		nri_log(NRI_LOG_INFO, "connected to %s", path);
		ret = nri_plugin_serve(fd, po);
		close(fd);
		if (stop)
			break;
		if (ret == -EACCES)
			return 1;
		nri_log(NRI_LOG_INFO, "connecting to %s again in a second", path);
		backoff(po->waitmask);
	}
	nri_log(NRI_LOG_INFO, "stopped by a signal");
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' }, { "name", required_argument, NULL, 'n' },
		{ "idx", required_argument, NULL, 'i' },    { "state-dir", required_argument, NULL, 'd' },
		{ "strict", no_argument, NULL, 'S' },       { "no-systemd", no_argument, NULL, 'N' },
		{ "verbose", no_argument, NULL, 'v' },      { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { 0 }
	};
	const char *socket_path = NULL, *env_fd = getenv("NRI_PLUGIN_SOCKET");
	struct nri_plugin_opts po = { .name = getenv("NRI_PLUGIN_NAME"), .idx = getenv("NRI_PLUGIN_IDX") };
	struct nri_agent_opts ao = { 0 };
	struct nri_handlers h;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, waitmask;
	int c, ret;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vhV", opts, NULL)) != -1) {
		switch (c) {
		case 's': socket_path = optarg; break;
		case 'n': po.name = optarg; break;
		case 'i': po.idx = optarg; break;
		case 'd': ao.state_dir = optarg; break;
		case 'S': po.strict = true; break;
		case 'N': ao.no_systemd = true; break;
		case 'v': po.verbose++; break;
		case 'h': fputs(nri_usage, stdout); return 0;
		case 'V': printf("devcg-nri %s\n", DEVCG_VERSION); return 0;
		case ':': return usage_error("option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return usage_error("unexpected argument '%s'", argv[optind]);
	if (!po.name || !*po.name)
		po.name = "devcg";
	if (!po.idx || !*po.idx)
		po.idx = "10";
	if (!valid_name(po.name))
		return usage_error("invalid plugin name '%s' (1-127 characters, no '/')", po.name);
	if (!valid_idx(po.idx))
		return usage_error("invalid plugin index '%s' (two digits)", po.idx);
	nri_log_set_verbose(po.verbose);
	ret = nri_agent_handlers(&h, &ao);
	if (ret < 0) {
		nri_log(NRI_LOG_ERR, "cannot start: %s", strerror(-ret));
		return 1;
	}
	po.handlers = &h;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &waitmask);
	sigdelset(&waitmask, SIGTERM);
	sigdelset(&waitmask, SIGINT);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	po.waitmask = &waitmask;
	po.stop = &stop;

	if (env_fd && *env_fd && !socket_path) {
		int fd = inherited_fd(env_fd);

		if (fd < 0) {
			nri_log(NRI_LOG_ERR, "NRI_PLUGIN_SOCKET '%s' is no open file descriptor", env_fd);
			return 1;
		}
		nri_log(NRI_LOG_INFO, "started by the runtime as %s-%s", po.idx, po.name);
		ret = nri_plugin_serve(fd, &po);
		close(fd);
		return ret < 0 ? 1 : 0;
	}
	return socket_mode(socket_path ? socket_path : DEFAULT_SOCKET, &po);
}

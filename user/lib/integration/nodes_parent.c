// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The container side of a hot-plug, in the parent: the child's start, its
 * commands and its end (nodes.h), and the memory it runs on. The child
 * shares the caller's memory (nodes.c says why); the two take turns.
 */
#include "nodes_child.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define REPLY_TIMEOUT_MS 30000
/* a child killed that has not ended by then is left (hp_child_stop()) */
#define KILLED_WAIT_MS 2000

/* The child's stack: its deepest step takes about 30 KiB; the scan of
 * open files (hotplug_holders.c) 13 KiB per level of cgroups below the
 * container's, 17 at most. Only the pages used are ever allocated. */
#define CHILD_STACK (1024 * 1024)

/*
 * The table is the start of one private mapping, followed by a guard page
 * and the child's stack. One mapping for up to SPARE_NODES
 * nodes is kept for the next call, by any thread, once its child has
 * ended: a fresh one costs a page fault at each page the table and the
 * stack first touch, and its unmapping a TLB flush of every CPU the child
 * ran on.
 */
#define SPARE_NODES 16
static void *spare;

static size_t mapping_size(int n, size_t *table)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	*table = (sizeof(struct hp_shared) + (size_t)n * sizeof(struct hp_node) + page - 1) / page * page;
	return *table + page + CHILD_STACK;
}

int hp_child_alloc(struct hp_child *c, int n, struct devcg_error *err)
{
	size_t table;
	void *m = NULL;

	memset(c, 0, sizeof(*c));
	c->pid = -1;
	c->sock = -1;
	c->keep_fds[0] = c->keep_fds[1] = -1;
	if (n > HP_MAX_NODES)
		return devcg_err(err, -E2BIG, "%d device nodes in one command (at most %d)", n,
				 HP_MAX_NODES);
	c->size = mapping_size(n <= SPARE_NODES ? SPARE_NODES : n, &table);
	if (n <= SPARE_NODES)
		m = __atomic_exchange_n(&spare, NULL, __ATOMIC_ACQ_REL);
	if (m) {
		memset(m, 0, sizeof(struct hp_shared) + (size_t)n * sizeof(struct hp_node));
	} else {
		m = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
		if (m == MAP_FAILED)
			return devcg_err(err, -errno, "mmap: %s", strerror(errno));
		if (mprotect((char *)m + table, (size_t)sysconf(_SC_PAGESIZE), PROT_NONE)) {
			int e = errno;

			munmap(m, c->size);
			return devcg_err(err, -e, "mprotect: %s", strerror(e));
		}
		/* a fork of the caller gets it zeroed, not a copy: so the
		 * fork does not write-protect it here (each page the next
		 * call wrote would fault), and the forked process's spare is
		 * its own (before Linux 4.14: a copy, as any memory) */
		madvise(m, c->size, MADV_WIPEONFORK);
	}
	c->sh = m;
	c->sh->n = n;
	c->sh->failed = -1;
	return 0;
}

/* Has PID ended within TIMEOUT_MS? Then it is reaped. */
static bool ended_within(pid_t pid, int timeout_ms)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0), status, n, waited = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (fd >= 0) {
		do
			n = poll(&p, 1, timeout_ms);
		while (n < 0 && errno == EINTR);
		close(fd);
		if (n == 0)
			return false;
	}
	/* (without a pidfd -- before Linux 5.3, no fd left, a filter's
	 * refusal -- it is looked for each millisecond) */
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			return true;
		if (w == 0 && waited >= timeout_ms)
			return false;
		if (w == 0) {
			nanosleep(&(struct timespec){ .tv_nsec = 1000 * 1000 }, NULL);
			waited++;
		}
	}
}

/* The child that did not answer: killed, and waited for KILLED_WAIT_MS;
 * after that it runs no more code of ours, dead or held in the kernel. */
static void kill_child(struct hp_child *c)
{
	kill(c->pid, SIGKILL);
	c->killed = true;
	c->ended = ended_within(c->pid, KILLED_WAIT_MS);
}

/* The child's one-byte answer, within TIMEOUT_MS (else it is killed).
 * Anything but an answer or the end of the socket (the child has ended)
 * kills it: the caller goes on only once the child runs no more. */
static int reply(struct hp_child *c, int timeout_ms, struct devcg_error *err)
{
	struct pollfd p = { .fd = c->sock, .events = POLLIN };
	char r;
	int n;
	ssize_t got;

	do
		n = poll(&p, 1, timeout_ms);
	while (n < 0 && errno == EINTR);
	got = n > 0 ? recv(c->sock, &r, 1, 0) : -1;
	if (got == 0) {
		c->ended = ended_within(c->pid, KILLED_WAIT_MS);
		return devcg_err(err, -EPIPE, "the process in the container's mount namespace died");
	}
	if (got != 1) {
		kill_child(c);
		if (n == 0)
			return devcg_err(err, -ETIMEDOUT, "the process in the container's mount namespace "
					 "did not answer within %d ms", timeout_ms);
		return devcg_err(err, -EPIPE, "the process in the container's mount namespace could not be "
				 "heard (it is killed)");
	}
	if (!r)
		return 0;
	if (c->sh->failed >= 0)
		return devcg_err(err, c->sh->err ? c->sh->err : -EIO, "%s %s: %s", c->sh->step,
				 hp_q(c->sh->nodes[c->sh->failed].path), c->sh->msg);
	return devcg_err(err, c->sh->err ? c->sh->err : -EIO, "%s", c->sh->msg);
}

/*
 * Children left in the kernel (hp_child_stop()), each with its mapping:
 * reaped, and the mapping let go, by a later call once they have ended.
 * A few are remembered; more are left to the process's end.
 */
#define ABANDONED 16
static struct {
	pid_t pid;
	void *map;
	size_t size;
} abandoned[ABANDONED];
static pthread_mutex_t abandoned_lock = PTHREAD_MUTEX_INITIALIZER;

static void abandon(pid_t pid, void *map, size_t size)
{
	pthread_mutex_lock(&abandoned_lock);
	for (int i = 0; i < ABANDONED; i++)
		if (!abandoned[i].pid) {
			abandoned[i].pid = pid;
			abandoned[i].map = map;
			abandoned[i].size = size;
			break;
		}
	pthread_mutex_unlock(&abandoned_lock);
}

static void reap_abandoned(void)
{
	pthread_mutex_lock(&abandoned_lock);
	for (int i = 0; i < ABANDONED; i++) {
		int status;
		pid_t w;

		if (!abandoned[i].pid)
			continue;
		w = waitpid(abandoned[i].pid, &status, WNOHANG);
		if (w == abandoned[i].pid || (w < 0 && errno == ECHILD)) {
			munmap(abandoned[i].map, abandoned[i].size);
			abandoned[i].pid = 0;
		}
	}
	pthread_mutex_unlock(&abandoned_lock);
}

/* The child's start, on its own stack; its return ends it (clone()). */
static int child_entry(void *arg)
{
	hp_child_main(arg);
	return 0;
}

int hp_child_start(struct hp_child *c, int mntns_fd, int root_fd, struct devcg_error *err)
{
	sigset_t all;
	int sv[2], e;

	reap_abandoned();
	/* the session: the calling thread takes no signal and no cancellation
	 * until hp_child_stop() (a handler, or the unwinding of a
	 * cancellation, would run beside the child, on the thread-local
	 * storage it shares: errno above all); the child starts with them */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &c->mask);
	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &c->cancel);
	c->started = true;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return devcg_err(err, -errno, "socketpair: %s", strerror(errno));
	c->sh->sock = sv[1];
	c->sh->mntns_fd = mntns_fd;
	c->sh->root_fd = root_fd;
	c->sh->keep_fds[0] = c->keep_fds[0];
	c->sh->keep_fds[1] = c->keep_fds[1];
	c->sh->scan_fn = c->scan_fn;
	c->sh->scan_arg = c->scan_arg;
	c->pid = clone(child_entry, (char *)c->sh + c->size, CLONE_VM | SIGCHLD, c->sh);
	e = errno;
	close(sv[1]);
	if (c->pid < 0) {
		close(sv[0]);
		return devcg_err(err, -e, "clone: %s", strerror(e));
	}
	c->sock = sv[0];
	return reply(c, REPLY_TIMEOUT_MS, err);
}

int hp_child_cmd_within(struct hp_child *c, char cmd, int timeout_ms, struct devcg_error *err)
{
	if (c->killed || c->ended || send(c->sock, &cmd, 1, MSG_NOSIGNAL) != 1)
		return devcg_err(err, -EPIPE, "the process in the container's mount namespace died");
	return reply(c, timeout_ms, err);
}

int hp_child_cmd(struct hp_child *c, char cmd, struct devcg_error *err)
{
	return hp_child_cmd_within(c, cmd, REPLY_TIMEOUT_MS, err);
}

void hp_child_stop(struct hp_child *c)
{
	if (c->sock >= 0) {
		send(c->sock, "Q", 1, MSG_NOSIGNAL);
		close(c->sock);
	}
	/* what it set aside goes at 'Q' (within REPLY_TIMEOUT_MS, as a
	 * command's answer) */
	if (c->pid > 0 && !c->killed && !c->ended && !(c->ended = ended_within(c->pid, REPLY_TIMEOUT_MS)))
		kill_child(c);
	/* the child has ended: its mapping is kept as the spare, if none is;
	 * one held in the kernel keeps its mapping, whose stack the kernel may
	 * still write to when it wakes, until a later call reaps it */
	if (c->sh && c->pid > 0 && !c->ended)
		abandon(c->pid, c->sh, c->size);
	else if (c->sh &&
		 (c->sh->n > SPARE_NODES || !__atomic_compare_exchange_n(&spare, &(void *){ NULL }, c->sh, false,
									 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)))
		munmap(c->sh, c->size);
	if (c->started) {
		pthread_setcancelstate(c->cancel, NULL);
		pthread_sigmask(SIG_SETMASK, &c->mask, NULL);
	}
	c->started = false;
	c->sock = -1;
	c->pid = -1;
	c->sh = NULL;
}

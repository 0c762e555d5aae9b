// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * supervisor.c - the thread that answers the calls of a process's
 * filtered programs.
 *
 * One per process, started with the first listener: seccomp lets a task
 * report to one listener only, and a listener belongs to whoever holds
 * it, so the process that starts programs (classfs-run, a test calling
 * classfs_run_spawn(), a Python test process) serves them all.  Each
 * listener is tied to the nodes of one environment: a child's to the
 * environment it was started in, and this process's own threads' (a
 * Python testbed moves its thread into an environment) to the one they
 * entered last.  A listener whose programs have all exited reports
 * EPOLLHUP and goes.
 *
 * Locking: @lock guards the listener list and @current.  The thread
 * takes a reference to a listener's nodes under it, and answers the call
 * without it (a handler may take long: a Python function's GIL).
 * cfs_supervise_forget() clears every pointer to a table under @lock,
 * so no call starts on it afterwards; calls in flight hold their
 * reference until they are answered.
 *
 * The thread never runs a filtered call itself: it is started before the
 * filter is installed on any thread of this process, and a filter only
 * reaches threads started after it by the thread that installed it.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "devio-internal.h"

struct listener {
	struct listener *next;
	int fd;
	bool own;			/* a thread of this process: follows @current */
	struct cfs_nodes *nodes;	/* a child's environment; NULL: gone */
};

static struct {
	pthread_mutex_t lock;
	bool started;
	int epfd;
	struct listener *list;
	struct cfs_nodes *current;	/* what this process's own threads see */
} sup = { .lock = PTHREAD_MUTEX_INITIALIZER, .epfd = -1 };

/* the calling thread installed the filter (it reports to an own listener) */
static __thread bool own_filtered;

/* the nodes a call on @l goes to, with a reference (NULL: none) */
static struct cfs_nodes *nodes_of(struct listener *l)
{
	struct cfs_nodes *n;

	pthread_mutex_lock(&sup.lock);
	n = l->own ? sup.current : l->nodes;
	if (n)
		cfs_nodes_get(n);
	pthread_mutex_unlock(&sup.lock);
	return n;
}

static void drop(struct listener *l)
{
	struct listener **p;

	pthread_mutex_lock(&sup.lock);
	for (p = &sup.list; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	pthread_mutex_unlock(&sup.lock);
	epoll_ctl(sup.epfd, EPOLL_CTL_DEL, l->fd, NULL);
	close(l->fd);
	if (l->nodes)
		cfs_nodes_put(l->nodes);
	free(l);
}

static void *supervisor_main(void *arg)
{
	struct epoll_event ev[16];
	sigset_t all;

	/* signals are the process's other threads' business */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	for (;;) {
		int k = epoll_wait(sup.epfd, ev, 16, -1);

		if (k < 0)
			continue;
		for (int i = 0; i < k; i++) {
			struct listener *l = ev[i].data.ptr;
			struct seccomp_notif req;
			struct cfs_nodes *n;

			if (ev[i].events & EPOLLIN) {
				if (cfs_seccomp_receive(l->fd, &req) < 0)
					continue;
				n = nodes_of(l);
				cfs_answer(n, l->fd, &req);
				if (n)
					cfs_nodes_put(n);
			} else if (ev[i].events & (EPOLLHUP | EPOLLERR)) {
				/* its programs are all gone */
				drop(l);
			}
		}
	}
	return NULL;
}

/*
 * In a child fork() made: the thread did not come along.  The listeners
 * stay the parent's to serve (the child reports to them too, as what it
 * runs does); the child starts a supervisor of its own when it needs one.
 */
static void forked_child(void)
{
	pthread_mutex_init(&sup.lock, NULL);
	if (sup.epfd >= 0)
		close(sup.epfd);
	sup.epfd = -1;
	sup.started = false;
	sup.list = NULL;
	sup.current = NULL;
}

/* under sup.lock: the thread runs; 0 or -errno */
static int start_locked(void)
{
	static bool atfork;
	int r;

	if (sup.started)
		return 0;
	if (!atfork && pthread_atfork(NULL, NULL, forked_child) == 0)
		atfork = true;
	sup.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (sup.epfd < 0)
		return -errno;
	/* a root and working directory of its own: its caller may setns() (thread.c) */
	r = cfs_thread_create(NULL, true, supervisor_main, NULL);
	if (r < 0) {
		close(sup.epfd);
		sup.epfd = -1;
		return r;
	}
	sup.started = true;
	return 0;
}

/* @fd served from now on; takes @fd (closed on error) */
static int add_locked(int fd, bool own, struct cfs_nodes *nodes)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct listener *l;
	int r;

	r = start_locked();
	if (r < 0)
		goto fail;
	l = calloc(1, sizeof(*l));
	r = -ENOMEM;
	if (!l)
		goto fail;
	*l = (struct listener){ .fd = fd, .own = own, .nodes = nodes };
	ev.data.ptr = l;
	if (epoll_ctl(sup.epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		r = -errno;
		free(l);
		goto fail;
	}
	if (nodes)
		cfs_nodes_get(nodes);
	l->next = sup.list;
	sup.list = l;
	return 0;
fail:
	close(fd);
	return r;
}

/**
 * cfs_supervise() - answer the calls of @listener's programs with @nodes
 * @listener: what a child's cfs_seccomp_install() returned (taken: closed
 *            when its programs are gone, or on error).
 * @nodes: their environment's nodes (a reference is taken).
 * Return: 0 or -errno.
 */
int cfs_supervise(int listener, struct cfs_nodes *nodes)
{
	int r;

	if (listener < 0)
		return -EINVAL;
	if (!nodes) {
		close(listener);
		return -EINVAL;
	}
	pthread_mutex_lock(&sup.lock);
	r = add_locked(listener, false, nodes);
	pthread_mutex_unlock(&sup.lock);
	return r;
}

/**
 * cfs_supervise_self() - this process's filtered threads see @nodes
 * @nodes: an environment's nodes, or NULL (none: their calls run as
 *         without the filter).
 *
 * Installs the filter on the calling thread when it has none of ours
 * (the supervisor thread is started first, so it is never filtered).
 * Return: 0; -EBUSY when the thread already reports to a supervisor of
 * another process (it runs in an environment already: its nodes are
 * that one's), or another -errno.
 */
int cfs_supervise_self(struct cfs_nodes *nodes)
{
	int r = 0, fd;

	pthread_mutex_lock(&sup.lock);
	sup.current = nodes;
	if (!nodes || own_filtered)
		goto out;
	r = start_locked();
	if (r < 0)
		goto out;
	/* not open(): a leak check of this process's, all threads stopped, opens with it */
	fd = cfs_seccomp_install_mode(CFS_FILTER_NO_OPEN);
	if (fd < 0) {
		r = fd;
		goto out;
	}
	r = add_locked(fd, true, NULL);
	if (r == 0)
		own_filtered = true;
out:
	pthread_mutex_unlock(&sup.lock);
	return r;
}

/**
 * cfs_supervise_forget() - no call goes to @nodes from now on
 *
 * Listeners tied to @nodes continue every later call to the kernel.
 */
void cfs_supervise_forget(struct cfs_nodes *nodes)
{
	struct listener *l;

	pthread_mutex_lock(&sup.lock);
	if (sup.current == nodes)
		sup.current = NULL;
	for (l = sup.list; l; l = l->next)
		if (l->nodes == nodes) {
			l->nodes = NULL;
			cfs_nodes_put(nodes);
		}
	pthread_mutex_unlock(&sup.lock);
}

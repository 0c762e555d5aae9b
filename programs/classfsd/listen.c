// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * listen.c - the listening socket as a source of the event loop: it
 * accepts every connection waiting and hands each to conn.c.
 *
 * Out of descriptors (EMFILE, ENFILE), the socket would stay readable
 * and spin the loop: it waits for no event until a connection's teardown
 * frees a descriptor (cfsd_listen_fd_freed() kicks it); meanwhile
 * clients wait in the backlog.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"

static struct {
	struct cfsd_source src;
	bool paused;		/* out of descriptors: until a connection ends (the loop's) */
	bool started;		/* set by the loop's thread, read by any (atomic) */
} A;

static void accept_all(void)
{
	for (;;) {
		int fd = accept4(A.src.fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), r;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if ((errno == EMFILE || errno == ENFILE) && !A.paused) {
				log_warn("accept: %m: no new connection until one ends");
				A.paused = cfsd_source_set_events(&A.src, 0) == 0;
			} else if (errno != EAGAIN && errno != EMFILE && errno != ENFILE) {
				log_warn("accept: %m");
			}
			return;
		}
		r = cfsd_conn_start(fd);
		if (r < 0) {
			if (r != -EMFILE)	/* over its uid's limit: logged, client told */
				log_warn("cannot serve a connection: %s", strerror(-r));
			close(fd);
		}
	}
}

/* connections wait (EPOLLIN), or a descriptor was freed (a kick: revents 0) */
static void listen_dispatch(struct cfsd_source *s, uint32_t revents)
{
	(void)s;
	if (!revents) {
		if (!A.paused || cfsd_source_set_events(&A.src, EPOLLIN) < 0)
			return;
		A.paused = false;
	}
	accept_all();
}

/** cfsd_listen_start() - the loop accepts connections on the listening socket @fd; 0 or -errno */
int cfsd_listen_start(int fd)
{
	int r;

	A.src = (struct cfsd_source){ .fd = fd, .events = EPOLLIN, .dispatch = listen_dispatch };
	r = cfsd_source_add(&A.src);
	__atomic_store_n(&A.started, r == 0, __ATOMIC_SEQ_CST);
	return r;
}

/**
 * cfsd_listen_stop() - the loop: accept no more (the socket stays the
 * caller's to close).  A worker's teardown may still kick the source
 * (cfsd_listen_fd_freed()) as it stops: the kick finds a loop that no
 * longer runs, and the source lives as long as the process.
 */
void cfsd_listen_stop(void)
{
	if (__atomic_exchange_n(&A.started, false, __ATOMIC_SEQ_CST))
		cfsd_source_del(&A.src);
}

/** cfsd_listen_fd_freed() - any thread: a descriptor was closed; accepting may resume */
void cfsd_listen_fd_freed(void)
{
	if (__atomic_load_n(&A.started, __ATOMIC_SEQ_CST))
		cfsd_loop_kick(&A.src);
}

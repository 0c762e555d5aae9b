// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * loop.c - the event loop: one thread that accepts connections, reads
 * every connection's messages, writes what their sockets did not take,
 * sends subscribers their events, and stops the daemon on a signal.
 *
 * It never waits for anything but epoll: requests run on the pool
 * (pool.c), output that does not fit waits in its connection's queue
 * (conn.c), events in the ring (events.c).  Other threads ask for its
 * attention through the wake eventfd: a connection on the kick list (its
 * reading may resume, its subscription starts), or new events.
 *
 * Sockets are edge-triggered: a connection remembers that it is readable
 * until a read says EAGAIN, and its output is retried on every EPOLLOUT.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"

/* epoll's data for the loop's own descriptors; a connection's is its pointer */
enum { TAG_LISTEN = 1, TAG_WAKE, TAG_SIGNAL, TAG_TIMER, TAG_LAST = 16 };

static struct {
	pthread_mutex_t kick_lock;
	struct cfsd_conn *kick_head, *kick_tail;
	bool woken;		/* a wake is pending: no need to write the eventfd again */
	struct cfs_list conns;		/* connections served (loop only; cfsd_conn.loop_link) */
	bool accept_paused;		/* out of descriptors: until a connection ends */
	uint8_t *rbuf;			/* one message read (max_msg bytes) */
} L = { .kick_lock = PTHREAD_MUTEX_INITIALIZER, .conns = CFS_LIST_INIT(L.conns) };

/** cfsd_loop_init() - the epoll instance and the wake eventfd; 0 or -errno */
int cfsd_loop_init(void)
{
	cfsd.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (cfsd.epoll_fd < 0)
		return -errno;
	cfsd.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (cfsd.wake_fd < 0)
		return -errno;
	L.rbuf = malloc(cfsd.cfg.max_msg);
	return L.rbuf ? 0 : -ENOMEM;
}

/** cfsd_loop_wake() - any thread: make the loop look at its kick list and the ring */
void cfsd_loop_wake(void)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&L.woken, true, __ATOMIC_SEQ_CST))
		return;
	if (write(cfsd.wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("cannot wake the event loop: %m");
}

/**
 * cfsd_loop_kick() - any thread: the loop is to serve @c again (read,
 * flush, send events) at its next turn
 */
void cfsd_loop_kick(struct cfsd_conn *c)
{
	pthread_mutex_lock(&L.kick_lock);
	if (!c->kicked) {
		c->kicked = true;
		c->kick_next = NULL;
		if (L.kick_tail)
			L.kick_tail->kick_next = cfsd_conn_get(c);
		else
			L.kick_head = cfsd_conn_get(c);
		L.kick_tail = c;
	}
	pthread_mutex_unlock(&L.kick_lock);
	cfsd_loop_wake();
}

static int add_fd(int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = { .events = events, .data.ptr = ptr };

	return epoll_ctl(cfsd.epoll_fd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

/** cfsd_loop_add() - the loop: serve @c (its reference is the connection's own) */
int cfsd_loop_add(struct cfsd_conn *c)
{
	int r = add_fd(c->fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, c);

	if (r < 0)
		return r;
	cfs_list_add(&c->loop_link, &L.conns);
	/* what it sent before we listened is not an edge: read it now */
	c->readable = true;
	cfsd_conn_read(c, L.rbuf);
	return 0;
}

/** cfsd_loop_del() - the loop: @c ended; no more events of its socket */
void cfsd_loop_del(struct cfsd_conn *c)
{
	epoll_ctl(cfsd.epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
	cfs_list_del(&c->loop_link);
}

/*
 * output first, then more of a streaming reply, then events (they wait
 * for replies queued before them), then requests
 */
static void serve(struct cfsd_conn *c)
{
	if (c->ended)
		return;
	if (!c->sub) {
		uint64_t from;

		pthread_mutex_lock(&c->olock);
		from = c->sub_from;
		c->sub_from = 0;
		pthread_mutex_unlock(&c->olock);
		if (from)
			cfsd_events_start(c, from);
	}
	cfsd_conn_flush(c);
	cfsd_conn_stream_fill(c);
	if (c->sub)
		cfsd_events_send(c);
	cfsd_conn_read(c, L.rbuf);
}

static void serve_kicked(void)
{
	struct cfsd_conn *c;

	for (;;) {
		pthread_mutex_lock(&L.kick_lock);
		c = L.kick_head;
		if (c) {
			L.kick_head = c->kick_next;
			if (!L.kick_head)
				L.kick_tail = NULL;
			c->kicked = false;
		}
		pthread_mutex_unlock(&L.kick_lock);
		if (!c)
			return;
		serve(c);
		cfsd_conn_put(c);
	}
}

/*
 * Out of descriptors: the listening socket would stay readable and spin
 * the loop.  It is left out until a connection's teardown wakes the loop
 * (cfsd_conn_teardown()); meanwhile clients wait in the backlog.
 */
static void pause_accept(void)
{
	struct epoll_event ev = { .events = 0, .data.ptr = (void *)(uintptr_t)TAG_LISTEN };

	if (L.accept_paused)
		return;
	log_warn("accept: %m: no new connection until one ends");
	if (epoll_ctl(cfsd.epoll_fd, EPOLL_CTL_MOD, cfsd.listen_fd, &ev) == 0)
		L.accept_paused = true;
}

static void resume_accept(void)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = (void *)(uintptr_t)TAG_LISTEN };

	if (L.accept_paused && epoll_ctl(cfsd.epoll_fd, EPOLL_CTL_MOD, cfsd.listen_fd, &ev) == 0)
		L.accept_paused = false;
}

static void accept_all(void)
{
	for (;;) {
		int fd = accept4(cfsd.listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK), r;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE)
				pause_accept();
			else if (errno != EAGAIN)
				log_warn("accept: %m");
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

/**
 * cfsd_loop_run() - serve until a signal comes through @signal_fd.
 * Return: 0 (a signal), or -errno when epoll fails.
 */
int cfsd_loop_run(int signal_fd)
{
	struct epoll_event evs[64];
	int r;

	r = add_fd(cfsd.listen_fd, EPOLLIN, (void *)(uintptr_t)TAG_LISTEN);
	if (r == 0)
		r = add_fd(cfsd.wake_fd, EPOLLIN, (void *)(uintptr_t)TAG_WAKE);
	if (r == 0)
		r = add_fd(signal_fd, EPOLLIN, (void *)(uintptr_t)TAG_SIGNAL);
	if (r == 0)
		r = add_fd(cfsd_events_timer_fd(), EPOLLIN, (void *)(uintptr_t)TAG_TIMER);
	if (r < 0)
		return r;
	for (;;) {
		int n = epoll_wait(cfsd.epoll_fd, evs, 64, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			uintptr_t tag = (uintptr_t)evs[i].data.ptr;
			struct cfsd_conn *c;
			uint64_t v;

			switch (tag) {
			case TAG_LISTEN:
				accept_all();
				continue;
			case TAG_SIGNAL: {
				struct signalfd_siginfo si;

				if (read(signal_fd, &si, sizeof(si)) == sizeof(si))
					log_info("signal %u: shutting down", si.ssi_signo);
				return 0;
			}
			case TAG_WAKE:
				/*
				 * Read, then clear: a wake that finds the flag set
				 * is covered by what follows; one after it writes.
				 */
				if (read(cfsd.wake_fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
					log_err("event loop wake: %m");
				__atomic_store_n(&L.woken, false, __ATOMIC_SEQ_CST);
				resume_accept();	/* a descriptor may be free again */
				cfsd_events_notified();
				serve_kicked();
				continue;
			case TAG_TIMER:
				if (read(cfsd_events_timer_fd(), &v, sizeof(v)) < 0 && errno != EAGAIN)
					log_err("event timer: %m");
				cfsd_events_fanout();
				continue;
			}
			c = evs[i].data.ptr;
			if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
				c->readable = true;	/* a hangup shows as a read of 0 or an error */
			if (evs[i].events & EPOLLOUT)
				cfsd_events_writable(c);
			serve(c);
		}
	}
}

/**
 * cfsd_loop_shutdown() - after cfsd_loop_run(): end every connection,
 * wait for their teardown, stop the pool, drop what waits for the loop.
 * The wake eventfd stays until cfsd_loop_free(): events still come.
 */
void cfsd_loop_shutdown(void)
{
	struct cfsd_conn *c;

	while (!cfs_list_empty(&L.conns))
		cfsd_conn_end(cfs_list_entry(L.conns.next, struct cfsd_conn, loop_link));
	cfsd_conn_wait_all();
	cfsd_pool_stop();
	pthread_mutex_lock(&L.kick_lock);
	c = L.kick_head;
	L.kick_head = L.kick_tail = NULL;
	pthread_mutex_unlock(&L.kick_lock);
	while (c) {
		struct cfsd_conn *next = c->kick_next;

		c->kicked = false;
		cfsd_conn_put(c);
		c = next;
	}
}

/** cfsd_loop_free() - at exit, nothing left to wake the loop: its descriptors */
void cfsd_loop_free(void)
{
	free(L.rbuf);
	L.rbuf = NULL;
	if (cfsd.wake_fd >= 0)
		close(cfsd.wake_fd);
	if (cfsd.epoll_fd >= 0)
		close(cfsd.epoll_fd);
	cfsd.wake_fd = cfsd.epoll_fd = -1;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * loop.c - the event loop: one thread that waits in epoll and dispatches
 * event sources (struct cfsd_source), each with its own callback and
 * userdata.  It knows nothing of what they are: the listening socket
 * (listen.c), the connections (conn.c), the event ring's wakeup and
 * linger timer (events.c), the signalfd (main.c) are sources alike.
 *
 * It never waits for anything but epoll.  Other threads ask for a
 * source's attention by kicking it (cfsd_loop_kick()): the source goes on
 * the kick list, the wake eventfd is written, and the loop dispatches it
 * with no events (revents 0) at its next turn.  A kicked source's userdata
 * is held (its hold callback) until that dispatch, so a connection kicked
 * by a worker outlives its hangup until the loop has seen the kick.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "daemon.h"

static struct {
	int epoll_fd;
	struct cfsd_source wake;	/* the eventfd other threads write to kick */
	bool woken;			/* a wake is pending: no need to write the eventfd again */
	pthread_mutex_t kick_lock;
	struct cfsd_source *kick_head, *kick_tail;
	bool exit;			/* cfsd_loop_exit(): return after this turn */
} L = { .epoll_fd = -1, .wake = { .fd = -1 }, .kick_lock = PTHREAD_MUTEX_INITIALIZER };

/* the kicked sources, each dispatched once with no events, its hold released after */
static void dispatch_kicked(struct cfsd_source *wake, uint32_t revents)
{
	uint64_t v;

	(void)revents;
	/* read, then clear: a wake that finds the flag set is covered by what follows */
	if (read(wake->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_err("event loop wake: %m");
	__atomic_store_n(&L.woken, false, __ATOMIC_SEQ_CST);
	for (;;) {
		struct cfsd_source *s;

		pthread_mutex_lock(&L.kick_lock);
		s = L.kick_head;
		if (s) {
			L.kick_head = s->kick_next;
			if (!L.kick_head)
				L.kick_tail = NULL;
			s->kicked = false;
		}
		pthread_mutex_unlock(&L.kick_lock);
		if (!s)
			return;
		s->dispatch(s, 0);
		if (s->release)
			s->release(s->userdata);
	}
}

/** cfsd_loop_init() - the epoll instance and the wake eventfd; 0 or -errno */
int cfsd_loop_init(void)
{
	L.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (L.epoll_fd < 0)
		return -errno;
	L.wake = (struct cfsd_source){
		.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
		.events = EPOLLIN,
		.dispatch = dispatch_kicked,
	};
	if (L.wake.fd < 0)
		return -errno;
	return cfsd_source_add(&L.wake);
}

/**
 * cfsd_source_add() - the loop: dispatch @s when its descriptor has one
 * of @s->events.  @s stays the caller's and must outlive its removal.
 * Return: 0 or -errno.
 */
int cfsd_source_add(struct cfsd_source *s)
{
	struct epoll_event ev = { .events = s->events, .data.ptr = s };

	return epoll_ctl(L.epoll_fd, EPOLL_CTL_ADD, s->fd, &ev) < 0 ? -errno : 0;
}

/** cfsd_source_set_events() - the loop: wait for @events of @s from now on; 0 or -errno */
int cfsd_source_set_events(struct cfsd_source *s, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = s };

	if (epoll_ctl(L.epoll_fd, EPOLL_CTL_MOD, s->fd, &ev) < 0)
		return -errno;
	s->events = events;
	return 0;
}

/**
 * cfsd_source_del() - the loop: no more events of @s's descriptor (a kick
 * pending still dispatches it: its userdata is held until then)
 */
void cfsd_source_del(struct cfsd_source *s)
{
	epoll_ctl(L.epoll_fd, EPOLL_CTL_DEL, s->fd, NULL);
}

/* any thread: the loop is to look at its kick list */
static void loop_wake(void)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&L.woken, true, __ATOMIC_SEQ_CST))
		return;
	if (write(L.wake.fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("cannot wake the event loop: %m");
}

/**
 * cfsd_loop_kick() - any thread: dispatch @s with no events (revents 0)
 * at the loop's next turn, once however often it is kicked meanwhile;
 * its userdata is held until then
 */
void cfsd_loop_kick(struct cfsd_source *s)
{
	pthread_mutex_lock(&L.kick_lock);
	if (!s->kicked) {
		s->kicked = true;
		s->kick_next = NULL;
		if (s->hold)
			s->hold(s->userdata);
		if (L.kick_tail)
			L.kick_tail->kick_next = s;
		else
			L.kick_head = s;
		L.kick_tail = s;
	}
	pthread_mutex_unlock(&L.kick_lock);
	loop_wake();
}

/** cfsd_loop_exit() - the loop: cfsd_loop_run() returns after the sources of this turn */
void cfsd_loop_exit(void)
{
	L.exit = true;
}

/**
 * cfsd_loop_run() - dispatch sources until one calls cfsd_loop_exit().
 * Return: 0, or -errno when epoll fails.
 */
int cfsd_loop_run(void)
{
	struct epoll_event evs[64];

	while (!L.exit) {
		int n = epoll_wait(L.epoll_fd, evs, 64, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n; i++) {
			struct cfsd_source *s = evs[i].data.ptr;

			s->dispatch(s, evs[i].events);
		}
	}
	return 0;
}

/**
 * cfsd_loop_shutdown() - after cfsd_loop_run(), every source ended: the
 * kicks still pending are dropped, their holds released.  The wake
 * eventfd stays until cfsd_loop_free(): kicks may still come.
 */
void cfsd_loop_shutdown(void)
{
	struct cfsd_source *s;

	pthread_mutex_lock(&L.kick_lock);
	s = L.kick_head;
	L.kick_head = L.kick_tail = NULL;
	pthread_mutex_unlock(&L.kick_lock);
	while (s) {
		struct cfsd_source *next = s->kick_next;

		s->kicked = false;
		if (s->release)
			s->release(s->userdata);
		s = next;
	}
}

/** cfsd_loop_free() - at exit, nothing left to kick the loop: its descriptors */
void cfsd_loop_free(void)
{
	if (L.wake.fd >= 0)
		close(L.wake.fd);
	if (L.epoll_fd >= 0)
		close(L.epoll_fd);
	L.wake.fd = L.epoll_fd = -1;
}

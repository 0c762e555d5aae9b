// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * player.c - what every player does the same way: a thread that signals
 * cannot reach, waits that a stop ends at once, writes that never block
 * for good, and the outcome cfs_player_wait() hands over.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "classfs-internal/devio.h"
#include "player.h"

/**
 * player_init() - set up the parts every player has
 * @p: the player (zeroed by the caller)
 * @release: frees the kind's state and @p once the thread is joined
 *
 * Return: 0, or -errno of eventfd().
 */
int player_init(struct cfs_player *p, void (*release)(struct cfs_player *p))
{
	p->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (p->stopfd < 0)
		return -errno;
	p->release = release;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	return 0;
}

/**
 * player_destroy() - undo player_init() (the thread is gone or never was)
 * @p: the player
 */
void player_destroy(struct cfs_player *p)
{
	close(p->stopfd);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
}

/**
 * player_spawn() - start a thread with every signal blocked
 * @thread: filled with the new thread
 * @fn: its function
 * @arg: its argument
 *
 * Blocked signals leave the process's signals to the threads that expect
 * them, and make a write to a pipe or socket whose reader is gone fail
 * with EPIPE instead of killing the process (SIGPIPE is sent to the
 * writing thread, where it stays pending).  The mask is the calling
 * thread's for a moment only: a new thread inherits it.
 *
 * Return: 0 or -errno of pthread_create() (cfs_thread_create()).
 */
int player_spawn(pthread_t *thread, void *(*fn)(void *), void *arg)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = cfs_thread_create(thread, false, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

/**
 * player_finish() - record the outcome and wake cfs_player_wait()
 * @p: the player
 * @result: 0 or -errno
 * @msg: the reason of a failure (NULL or "" for none)
 */
void player_finish(struct cfs_player *p, int result, const char *msg)
{
	pthread_mutex_lock(&p->lock);
	p->result = result;
	snprintf(p->msg, sizeof(p->msg), "%s", msg ? msg : "");
	p->done = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

/**
 * player_now_ns() - CLOCK_MONOTONIC in nanoseconds
 *
 * Return: the time; a player's delays are counted on it, which a change
 * of the wall clock does not move.
 */
uint64_t player_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * One poll of @fd (if >= 0) and the stop eventfd, for @timeout_ms.
 * Return: 1 when @fd is ready, 0 on timeout, -ECANCELED when stopped.
 */
static int poll_once(int stopfd, int fd, short events, int timeout_ms)
{
	struct pollfd pfd[2] = {
		{ .fd = stopfd, .events = POLLIN },
		{ .fd = fd, .events = events },
	};
	int n;

	n = poll(pfd, fd >= 0 ? 2 : 1, timeout_ms);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	/* a stop wins over a ready descriptor: stop means at once */
	if (pfd[0].revents)
		return -ECANCELED;
	return n > 0;
}

/**
 * player_sleep_until() - wait for a time on CLOCK_MONOTONIC, or a stop
 * @stopfd: the player's stop eventfd
 * @deadline_ns: the time (player_now_ns())
 *
 * Return: 0 at @deadline_ns, -ECANCELED when stopped first.
 */
int player_sleep_until(int stopfd, uint64_t deadline_ns)
{
	for (;;) {
		uint64_t now = player_now_ns(), left;
		int r, ms;

		if (now >= deadline_ns)
			return poll_once(stopfd, -1, 0, 0) < 0 ? -ECANCELED : 0;
		left = deadline_ns - now;
		/*
		 * poll() counts whole milliseconds: round up, so a delay is
		 * never cut short (the loop checks the clock anyway)
		 */
		ms = left / 1000000u >= 60000 ? 60000 : (int)((left + 999999u) / 1000000u);
		r = poll_once(stopfd, -1, 0, ms);
		if (r < 0)
			return r;
	}
}

/**
 * player_poll() - wait until @fd has @events (or a hangup, an error), or a stop
 * @stopfd: the player's stop eventfd
 * @fd: the descriptor
 * @events: POLLIN or POLLOUT
 *
 * Return: 0 when @fd is ready (a read or write of it then says what
 * happened), -ECANCELED when stopped, -errno of poll().
 */
int player_poll(int stopfd, int fd, short events)
{
	for (;;) {
		int r = poll_once(stopfd, fd, events, -1);

		if (r)
			return r > 0 ? 0 : r;
	}
}

/**
 * player_write_all() - write all of @buf to a non-blocking @fd
 * @stopfd: the player's stop eventfd
 * @fd: the descriptor (O_NONBLOCK: a peer that reads nothing fills its
 *      buffer, and the player waits in poll(), where a stop reaches it)
 * @buf: the bytes
 * @len: their number
 *
 * Return: 0; -EPIPE when the other side is gone; -ECANCELED when stopped;
 * another -errno of write().
 */
int player_write_all(int stopfd, int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n >= 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (errno == EAGAIN) {
			int r = player_poll(stopfd, fd, POLLOUT);

			if (r)
				return r;
			continue;
		}
		if (errno == EINTR)
			continue;
		/* the reader of a pipe, socket or pty is gone */
		if (errno == EPIPE || errno == ECONNRESET || errno == EIO)
			return -EPIPE;
		return -errno;
	}
	return 0;
}

/**
 * player_nonblock() - make @fd non-blocking for a play
 * @fd: the caller's descriptor
 * @oldflags: filled with its file status flags, for player_restore_flags()
 *
 * A blocking write of a pty's master waits until all of it fits, where
 * no stop can reach it; non-blocking, the wait is a poll().  The flag
 * belongs to the open file description, which the caller lends the
 * player for the play: it gets its flags back at the end.
 *
 * Return: 0 or -errno of fcntl().
 */
int player_nonblock(int fd, int *oldflags)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return -errno;
	*oldflags = fl;
	if (!(fl & O_NONBLOCK) && fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return -errno;
	return 0;
}

/**
 * player_restore_flags() - give @fd the flags player_nonblock() found
 * @fd: the descriptor
 * @oldflags: what player_nonblock() filled in
 */
void player_restore_flags(int fd, int oldflags)
{
	if (!(oldflags & O_NONBLOCK))
		fcntl(fd, F_SETFL, oldflags);
}

/**
 * cfs_player_wait() - wait for a player's end
 * @p: the player
 * @msg: filled with the reason of a failure ("" for none)
 * @msgsize: the size of @msg
 *
 * A script or evemu player ends with its recording; a socket player when
 * a client's play ended and no other is under way (the first failure of
 * any client is kept).  May be called again; not at the same time as
 * cfs_player_stop() of @p, which frees it.
 *
 * Return: 0 when everything was played, -EPROTO when the program wrote
 * something else than the script says, -EPIPE when the other side went
 * away before the end, another -errno of the player's descriptor.
 */
int cfs_player_wait(struct cfs_player *p, char *msg, size_t msgsize)
{
	int r;

	pthread_mutex_lock(&p->lock);
	while (!p->done)
		pthread_cond_wait(&p->cond, &p->lock);
	r = p->result;
	if (msg && msgsize)
		snprintf(msg, msgsize, "%s", p->msg);
	pthread_mutex_unlock(&p->lock);
	return r;
}

/**
 * cfs_player_stop() - stop a player at once and free it
 * @p: the player (NULL: nothing)
 *
 * Whatever the player waits for (a delay, the program's write, room to
 * write) ends; its thread is joined.  The descriptor given to
 * cfs_script_start() or cfs_evemu_start() stays open, with its flags; a
 * socket player's clients are disconnected and its socket removed.
 */
void cfs_player_stop(struct cfs_player *p)
{
	if (!p)
		return;
	eventfd_write(p->stopfd, 1);
	pthread_join(p->thread, NULL);
	p->release(p);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * thread.c - the threads the node emulation starts in a caller's process
 * (the supervisor, players, a recorder's workers, the node server): each
 * has a root and working directory of its own.
 *
 * The kernel lets a thread join a mount namespace (setns()) only when it
 * shares its root and working directory (its fs_struct) with no other
 * thread, and a caller of <classfs/run.h> goes in and out of
 * environments that way (classfs_run_enter(), then setns() back): a
 * thread of ours started with pthread_create()'s default would share the
 * caller's and make that fail with EINVAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include "classfs-internal/devio.h"

struct start {
	void *(*fn)(void *arg);
	void *arg;
	int started;		/* write end: one byte once the thread is on its own */
};

static void *trampoline(void *p)
{
	struct start s = *(struct start *)p;

	/* the caller's @p is gone once it read our byte */
	unshare(CLONE_FS);
	(void)!write(s.started, "", 1);
	return s.fn(s.arg);
}

/**
 * cfs_thread_create() - pthread_create() of a thread with a root and
 * working directory of its own, returning once it has them
 * @thread: receives it (NULL: not wanted, for a detached one).
 * @detached: start it detached.
 * @fn: its function.
 * @arg: passed to @fn.
 * Return: 0 or -errno.
 */
int cfs_thread_create(pthread_t *thread, bool detached, void *(*fn)(void *arg), void *arg)
{
	struct start s = { .fn = fn, .arg = arg };
	pthread_attr_t attr;
	int pfd[2], r;
	pthread_t t;
	char c;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	s.started = pfd[1];
	pthread_attr_init(&attr);
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = -pthread_create(&t, &attr, trampoline, &s);
	pthread_attr_destroy(&attr);
	if (r == 0) {
		while (read(pfd[0], &c, 1) < 0 && errno == EINTR)
			;
		if (thread)
			*thread = t;
	}
	close(pfd[0]);
	close(pfd[1]);
	return r;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * loop.c - the session loop: one thread reads and serves every request,
 * and a watchdog hands reading to another thread when a request blocks.
 *
 * Why not libfuse's loops: the single-threaded one stalls the whole mount
 * behind one slow show()/store() (a remote attribute may take seconds), and
 * can deadlock: a store() that changes the tree waits for the notifier,
 * whose invalidation may wait in the kernel for a request only this loop
 * could answer.  The multithreaded one keeps a spare thread waiting on
 * /dev/fuse, so the kernel wakes a different thread for nearly every
 * request: one more context switch per open+read+close than a single
 * reader (bench-fs: 5 instead of 4 for a dynamic attribute, 3 instead of
 * 2 for `dev`, all on one CPU).
 *
 * Here exactly one thread, the reader, waits on /dev/fuse and handles
 * what it reads inline.  A watchdog thread looks at it every TICK_MS while
 * requests come in; when the reader has been inside the same request for
 * a whole tick, the watchdog makes another thread the reader (an idle one,
 * or a new one up to MAX_THREADS) and the slow one, once its request is
 * done, becomes idle.  A blocking show()/store() therefore holds up other
 * requests for at most a tick or two, and never deadlocks the mount; the
 * fast path takes no lock (two atomic stores and a load per request).
 * The watchdog sleeps when no request came in for a whole tick.
 *
 * Stopping (cfs_fuse_loop_stop(), before the session's device is closed):
 * a thread blocked in read() on /dev/fuse is cancelled there, the only
 * place where cancellation is enabled; one inside a request finishes it
 * first.  Reading a closed, maybe reused, descriptor cannot happen.
 */
#include "fuse-internal.h"

#include <time.h>

#define MAX_THREADS 8		/* readers and requests in progress */
#define TICK_MS 5		/* a request this long hands reading over */

struct worker {
	struct cfs_fuse_loop *loop;
	pthread_t thread;
	uint64_t started;		/* requests taken while reader (atomic) */
	int busy;			/* inside a request (atomic) */
	int reading;			/* in (or about to enter) read() (atomic) */
	struct fuse_buf buf;
};

struct cfs_fuse_loop {
	struct fuse_session *se;
	pthread_mutex_t lock;
	pthread_cond_t follow;		/* idle threads: become the reader */
	pthread_cond_t tick;		/* the watchdog */
	struct worker *reader;		/* NULL: handed over, nobody reads yet (atomic) */
	struct worker workers[MAX_THREADS];
	int nworkers, idle;
	int watchdog_idle;		/* asleep until a request comes (atomic) */
	int stopping;			/* (atomic; set under lock) */
	int error;			/* why the session ended, -errno */
	pthread_t watchdog;
	bool watchdog_started;
	uint64_t requests[CFS_FUSE_OPCODES];	/* served, by opcode (atomic): tests count them */
};

static void wake_watchdog(struct cfs_fuse_loop *l)
{
	pthread_mutex_lock(&l->lock);
	pthread_cond_signal(&l->tick);
	pthread_mutex_unlock(&l->lock);
}

/* under lock: every thread out, the watchdog too */
static void stop_locked(struct cfs_fuse_loop *l, int error)
{
	if (!l->stopping && error < 0)
		l->error = error;
	__atomic_store_n(&l->stopping, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&l->follow);
	pthread_cond_broadcast(&l->tick);
}

static bool stopping(struct cfs_fuse_loop *l)
{
	return __atomic_load_n(&l->stopping, __ATOMIC_SEQ_CST);
}

/*
 * One request from /dev/fuse, the only cancellation point of a thread:
 * reading is set before stopping is checked, and cfs_fuse_loop_stop()
 * sets stopping before it looks at reading (both seq_cst), so either we
 * do not read or it cancels us.
 */
static int receive(struct worker *w)
{
	int r = -ECANCELED;

	__atomic_store_n(&w->reading, 1, __ATOMIC_SEQ_CST);
	if (!stopping(w->loop)) {
		pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		r = fuse_session_receive_buf(w->loop->se, &w->buf);
		pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	}
	__atomic_store_n(&w->reading, 0, __ATOMIC_RELEASE);
	return r;
}

/* one more request of @buf's opcode served (the header starts the buffer: no splice) */
static void count(struct cfs_fuse_loop *l, const struct fuse_buf *buf)
{
	uint32_t op;

	if (buf->flags & FUSE_BUF_IS_FD || buf->size < 2 * sizeof(uint32_t))
		return;
	memcpy(&op, (const char *)buf->mem + sizeof(uint32_t), sizeof(op));	/* after len */
	__atomic_add_fetch(&l->requests[op < CFS_FUSE_OPCODES ? op : 0], 1, __ATOMIC_RELAXED);
}

/**
 * cfs_fuse_loop_requests() - requests of opcode @op (< CFS_FUSE_OPCODES; 0:
 * any other) served so far, or of every opcode (@op -1)
 */
uint64_t cfs_fuse_loop_requests(struct cfs_fuse_loop *l, int op)
{
	uint64_t n = 0;

	for (int i = 0; i < CFS_FUSE_OPCODES; i++)
		if (op < 0 || op == i)
			n += __atomic_load_n(&l->requests[i], __ATOMIC_RELAXED);
	return n;
}

/* read and serve until the session ends or another thread took over */
static void serve(struct worker *w)
{
	struct cfs_fuse_loop *l = w->loop;
	struct fuse_session *se = l->se;

	while (!fuse_session_exited(se)) {
		int r = receive(w);

		if (r == -EINTR || r == -EAGAIN)
			continue;	/* an interrupted request, or a signal */
		if (r <= 0) {
			/* -ENODEV at unmount (libfuse then ends the session) */
			bool ended = r == 0 || r == -ENODEV || r == -ECANCELED ||
				     fuse_session_exited(se);

			pthread_mutex_lock(&l->lock);
			stop_locked(l, ended ? 0 : r);
			pthread_mutex_unlock(&l->lock);
			return;
		}
		/*
		 * busy before reading watchdog_idle, and the watchdog the other
		 * way round (both seq_cst): one of us sees the other.
		 */
		__atomic_store_n(&w->busy, 1, __ATOMIC_SEQ_CST);
		__atomic_add_fetch(&w->started, 1, __ATOMIC_RELAXED);
		if (__atomic_load_n(&l->watchdog_idle, __ATOMIC_SEQ_CST))
			wake_watchdog(l);
		count(l, &w->buf);
		fuse_session_process_buf(se, &w->buf);
		__atomic_store_n(&w->busy, 0, __ATOMIC_RELEASE);
		if (__atomic_load_n(&l->reader, __ATOMIC_ACQUIRE) != w)
			return;		/* handed over while we were busy */
	}
	pthread_mutex_lock(&l->lock);
	stop_locked(l, 0);
	pthread_mutex_unlock(&l->lock);
}

/* may @w read?  Nobody reads (handed over), or it is @w itself */
static bool may_read_locked(struct cfs_fuse_loop *l, struct worker *w)
{
	struct worker *r = __atomic_load_n(&l->reader, __ATOMIC_RELAXED);

	return !r || r == w;
}

static void free_buf(void *arg)
{
	struct worker *w = arg;

	free(w->buf.mem);
	w->buf.mem = NULL;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct cfs_fuse_loop *l = w->loop;
	int old;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	pthread_cleanup_push(free_buf, w);
	pthread_mutex_lock(&l->lock);
	for (;;) {
		while (!l->stopping && !may_read_locked(l, w)) {
			l->idle++;
			pthread_cond_wait(&l->follow, &l->lock);
			l->idle--;
		}
		if (l->stopping)
			break;
		__atomic_store_n(&l->reader, w, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&l->lock);
		serve(w);
		pthread_mutex_lock(&l->lock);
	}
	pthread_mutex_unlock(&l->lock);
	pthread_cleanup_pop(1);
	pthread_setcancelstate(old, NULL);
	return NULL;
}

/*
 * under lock: the reader is stuck in a request; let another thread read.
 * Whichever thread sees no reader first takes over: an idle one woken
 * here, a new one, or the stuck one once its request is done.
 */
static void hand_over_locked(struct cfs_fuse_loop *l)
{
	struct worker *w;

	if (!l->idle && l->nworkers == MAX_THREADS)
		return;		/* every thread busy: the next one done reads on */
	__atomic_store_n(&l->reader, NULL, __ATOMIC_RELEASE);
	if (l->idle) {
		pthread_cond_signal(&l->follow);
		return;
	}
	w = &l->workers[l->nworkers];
	*w = (struct worker){ .loop = l };
	if (pthread_create(&w->thread, NULL, worker_main, w) == 0)
		l->nworkers++;
	/* else the stuck reader reads on when it is done */
}

static void deadline_in(struct timespec *ts, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_nsec += ms * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static void *watchdog_main(void *arg)
{
	struct cfs_fuse_loop *l = arg;
	uint64_t seen = 0;
	struct worker *last = NULL;

	pthread_mutex_lock(&l->lock);
	while (!l->stopping) {
		struct worker *w = __atomic_load_n(&l->reader, __ATOMIC_ACQUIRE);
		struct timespec until;
		uint64_t started;

		if (!w) {
			/* handed over, the new reader not yet started */
			deadline_in(&until, TICK_MS);
			pthread_cond_timedwait(&l->tick, &l->lock, &until);
			continue;
		}
		started = __atomic_load_n(&w->started, __ATOMIC_RELAXED);
		if (w == last && started == seen && !__atomic_load_n(&w->busy, __ATOMIC_SEQ_CST)) {
			/* nothing came in for a tick: sleep until something does */
			__atomic_store_n(&l->watchdog_idle, 1, __ATOMIC_SEQ_CST);
			if (!__atomic_load_n(&w->busy, __ATOMIC_SEQ_CST) &&
			    __atomic_load_n(&w->started, __ATOMIC_RELAXED) == seen)
				pthread_cond_wait(&l->tick, &l->lock);
			__atomic_store_n(&l->watchdog_idle, 0, __ATOMIC_SEQ_CST);
			last = NULL;
			continue;
		}
		last = w;
		seen = started;
		deadline_in(&until, TICK_MS);
		while (!l->stopping &&
		       pthread_cond_timedwait(&l->tick, &l->lock, &until) != ETIMEDOUT)
			;
		if (l->stopping)
			break;
		/* the same request for a whole tick (or more): hand reading over */
		if (__atomic_load_n(&l->reader, __ATOMIC_ACQUIRE) == w &&
		    __atomic_load_n(&w->busy, __ATOMIC_SEQ_CST) &&
		    __atomic_load_n(&w->started, __ATOMIC_RELAXED) == seen) {
			hand_over_locked(l);
			last = NULL;
		}
	}
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/**
 * cfs_fuse_loop_new() - a loop for @se, not yet running
 * Return: the loop, or NULL (out of memory).
 */
struct cfs_fuse_loop *cfs_fuse_loop_new(struct fuse_session *se)
{
	struct cfs_fuse_loop *l = calloc(1, sizeof(*l));
	pthread_condattr_t ca;

	if (!l)
		return NULL;
	l->se = se;
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->follow, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&l->tick, &ca);
	pthread_condattr_destroy(&ca);
	return l;
}

/**
 * cfs_fuse_loop_start() - serve @l's session from background threads: a
 * reader, a watchdog, more readers when requests block.
 * Return: 0 or -errno (no thread could be started).
 */
int cfs_fuse_loop_start(struct cfs_fuse_loop *l)
{
	int r;

	pthread_mutex_lock(&l->lock);
	l->workers[0] = (struct worker){ .loop = l };
	r = -pthread_create(&l->workers[0].thread, NULL, worker_main, &l->workers[0]);
	if (r == 0) {
		l->nworkers = 1;
		l->watchdog_started = pthread_create(&l->watchdog, NULL, watchdog_main, l) == 0;
		if (!l->watchdog_started) {
			/* still serves, one request at a time */
			fprintf(stderr, "classfs: no watchdog thread: "
					"slow requests hold up the others\n");
		}
	}
	pthread_mutex_unlock(&l->lock);
	return r;
}

/**
 * cfs_fuse_loop_stop() - stop serving and join every thread: those
 * blocked reading the device are cancelled, the others end after their
 * request.  Call before the session's device is closed.
 * Return: 0, or -errno when reading the device had failed.
 */
int cfs_fuse_loop_stop(struct cfs_fuse_loop *l)
{
	int n;

	pthread_mutex_lock(&l->lock);
	stop_locked(l, 0);
	for (int i = 0; i < l->nworkers; i++)
		if (__atomic_load_n(&l->workers[i].reading, __ATOMIC_SEQ_CST))
			pthread_cancel(l->workers[i].thread);
	pthread_mutex_unlock(&l->lock);
	if (l->watchdog_started)
		pthread_join(l->watchdog, NULL);
	l->watchdog_started = false;
	/* the watchdog is gone: nworkers no longer moves */
	pthread_mutex_lock(&l->lock);
	n = l->nworkers;
	pthread_mutex_unlock(&l->lock);
	for (int i = 0; i < n; i++)
		pthread_join(l->workers[i].thread, NULL);
	l->nworkers = 0;
	return l->error;
}

/** cfs_fuse_loop_free() - free a loop that is not running (NULL: nothing) */
void cfs_fuse_loop_free(struct cfs_fuse_loop *l)
{
	if (!l)
		return;
	pthread_cond_destroy(&l->tick);
	pthread_cond_destroy(&l->follow);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

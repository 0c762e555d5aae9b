// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pool.c - the threads that run requests.
 *
 * A request may wait: for a remote show() or store() (up to the call
 * timeout), for the registry's lock, for the attributes in use of a
 * device it removes.  The loop never runs one: it queues each on its
 * connection, and the connection on the pool's run list; a worker takes
 * one request of the connection at the head, runs it, and puts the
 * connection back at the tail while it has more, so a connection's
 * requests run one at a time in the order they came and every connection
 * gets its turn.  A connection that ended is torn down by the worker
 * that finds it idle.
 *
 * Threads are made when a connection waits and none is idle, up to
 * CFSD_WORKERS_MAX; one idle for IDLE_SECONDS ends.  With every worker
 * busy (at most CFSD_WORKERS_MAX requests waiting for a publisher's
 * answer, say), the next requests wait their turn: the answers they wait
 * for come through the loop, never through a worker, so they come.
 *
 * A connection whose output is blocked (over its bound, or a REPLAY
 * still streaming: conn.c) runs no request: a worker that finds it at
 * the head parks it off the run list, and the loop puts it back when the
 * client has read enough (cfsd_pool_unblock()).  So a client that sends
 * requests and never reads their answers costs its bound of output and
 * its CFSD_QUEUE_MAX requests read ahead, whatever they would answer.
 *
 * One uid other than root runs at most --max-requests-per-uid requests
 * (cfsd.cfg.max_reqs, CFSD_MAX_REQS_DEFAULT) at a time: a worker passes
 * over the connections of a uid that has its share running.  Requests
 * waiting on a publisher that never answers (the uid's own, say) hold
 * that share for the call timeout, and the other uids' requests still
 * find workers.
 *
 * Every request gets its one final REPLY, in its turn: one that cannot be
 * copied for lack of memory is queued as its serial alone and answered
 * ENOMEM when its turn comes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"

#define IDLE_SECONDS 10

struct cfsd_req {
	struct cfsd_req *next;
	size_t len;
	int err;		/* -ENOMEM: not copied, answered with it */
	uint32_t serial;	/* when not copied */
	uint8_t data[];
};

/* a uid's requests running now (not root's: it has no share) */
struct uid_running {
	struct uid_running *next;
	uid_t uid;
	unsigned int n;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t work;	/* a connection on the run list, or stopping */
	pthread_cond_t gone;	/* a worker ended */
	struct cfsd_conn *head, *tail;	/* the run list */
	/*
	 * Workers waiting for work: nidle not yet woken, nwoken signalled
	 * for a connection but not yet running (each waker takes one from
	 * either).  A wake-up is spent on one connection: counting the
	 * signalled worker as idle would let a second connection, queued
	 * before it runs, go without a thread of its own and wait behind
	 * whatever the first one waits for.
	 */
	unsigned int nthreads, nidle, nwoken;
	struct uid_running *running;	/* uids with requests running; few, so a list */
	bool stopping;
} P = { .lock = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	.gone = PTHREAD_COND_INITIALIZER };

static void *worker_main(void *arg);

/* under P.lock: @c (a reference taken) at the tail of the run list, and a worker for it */
static void run_locked(struct cfsd_conn *c)
{
	pthread_attr_t attr;
	pthread_t t;

	c->run_next = NULL;
	if (P.tail)
		P.tail->run_next = c;
	else
		P.head = c;
	P.tail = c;
	if (P.nidle) {
		P.nidle--;
		P.nwoken++;
		pthread_cond_signal(&P.work);
		return;
	}
	if (P.nthreads >= CFSD_WORKERS_MAX)
		return;	/* a busy worker takes it next */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, worker_main, NULL) == 0)
		P.nthreads++;
	else if (!P.nthreads)
		log_err("cannot start a thread to run requests: %m");
	pthread_attr_destroy(&attr);
}

/* under P.lock: @uid's count of running requests; NULL when none (or out of memory) */
static struct uid_running *running_of(uid_t uid, bool create)
{
	struct uid_running *u;

	for (u = P.running; u; u = u->next)
		if (u->uid == uid)
			return u;
	if (!create || !(u = calloc(1, sizeof(*u))))
		return NULL;
	*u = (struct uid_running){ .next = P.running, .uid = uid };
	P.running = u;
	return u;
}

/* under P.lock: whether a request of @c may run now (its uid under its share) */
static bool may_run(const struct cfsd_conn *c)
{
	const struct uid_running *u;

	if (c->uid == 0 || !c->qhead)
		return true;	/* root, or a teardown */
	u = running_of(c->uid, false);
	return !u || u->n < cfsd.cfg.max_reqs;
}

/* under P.lock: a request of @uid starts (@delta 1) or ends (-1) */
static void count_running(uid_t uid, int delta)
{
	struct uid_running *u, **pp;

	if (uid == 0)
		return;
	if (delta > 0) {
		u = running_of(uid, true);
		if (u)
			u->n++;
		return;
	}
	for (pp = &P.running; (u = *pp); pp = &u->next) {
		if (u->uid != uid)
			continue;
		if (u->n == cfsd.cfg.max_reqs)
			pthread_cond_broadcast(&P.work);	/* its connections may run again */
		if (!--u->n) {
			*pp = u->next;
			free(u);
		}
		return;
	}
}

/* under P.lock: the first connection of the run list that may run, taken off it */
static struct cfsd_conn *take_runnable(void)
{
	struct cfsd_conn *prev = NULL;

	struct cfsd_conn *c = P.head, *next;

	for (; c; c = next) {
		/* its teardown (no request left) is never held back */
		bool park = c->qhead && __atomic_load_n(&c->out_blocked, __ATOMIC_SEQ_CST);

		next = c->run_next;
		if (!park && !may_run(c)) {
			prev = c;
			continue;
		}
		if (prev)
			prev->run_next = next;
		else
			P.head = next;
		if (P.tail == c)
			P.tail = prev;
		if (!park)
			return c;
		/* still scheduled, with the run list's reference: cfsd_pool_unblock() */
		c->parked = true;
	}
	return NULL;
}

/* under P.lock: @c queued unless it already is (or runs: its worker requeues it) */
static void schedule_locked(struct cfsd_conn *c)
{
	if (c->scheduled)
		return;
	c->scheduled = true;
	run_locked(cfsd_conn_get(c));
}

/*
 * A test's fault: with CLASSFSD_TEST_FAIL_QUEUE=N in its environment the
 * daemon fails the copy of every Nth request it queues, as if out of
 * memory (tests/remote/test-protocol checks their ENOMEM answers).
 */
static unsigned long fail_every, queued;
static pthread_once_t fail_once = PTHREAD_ONCE_INIT;

static void fail_init(void)
{
	const char *e = getenv("CLASSFSD_TEST_FAIL_QUEUE");

	fail_every = e ? strtoul(e, NULL, 10) : 0;
}

/* the copy of a request of @len bytes (the loop's only) */
static struct cfsd_req *req_alloc(size_t len)
{
	pthread_once(&fail_once, fail_init);
	if (fail_every && ++queued % fail_every == 0)
		return NULL;
	return malloc(sizeof(struct cfsd_req) + len);
}

/**
 * cfsd_pool_queue() - the loop: @c's request of @len bytes at @msg, to be
 * run after those before it.  One that cannot be copied is answered
 * -ENOMEM in its turn; when not even that can be queued, @c ends (its
 * client sees the connection close rather than wait for a reply that
 * would never come).
 * Return: true when @c has CFSD_QUEUE_MAX requests waiting, or ended: the
 * loop reads no more of them until the pool kicks it.
 */
bool cfsd_pool_queue(struct cfsd_conn *c, const uint8_t *msg, size_t len)
{
	struct cfsd_req *q = req_alloc(len);
	bool full;

	if (q) {
		*q = (struct cfsd_req){ .len = len };
		memcpy(q->data, msg, len);
	} else {
		q = malloc(sizeof(*q));
		if (!q) {
			log_err("out of memory queueing a request of pid %d: ending its connection",
				(int)c->pid);
			cfsd_conn_end(c);
			return true;
		}
		*q = (struct cfsd_req){ .err = -ENOMEM };
		if (len >= CFS_HDR_SIZE)
			memcpy(&q->serial, msg + 8, sizeof(q->serial));
		log_warn("out of memory queueing a request of pid %d: answering ENOMEM",
			 (int)c->pid);
	}
	pthread_mutex_lock(&P.lock);
	if (c->qtail)
		c->qtail->next = q;
	else
		c->qhead = q;
	c->qtail = q;
	c->qlen++;
	full = c->qlen >= CFSD_QUEUE_MAX;
	if (full)
		__atomic_store_n(&c->read_paused, true, __ATOMIC_SEQ_CST);
	schedule_locked(c);
	pthread_mutex_unlock(&P.lock);
	return full;
}

/**
 * cfsd_pool_close() - the loop: @c ended; the requests it has waiting are
 * dropped, and it is torn down (cfsd_conn_teardown()) once idle.
 */
void cfsd_pool_close(struct cfsd_conn *c)
{
	struct cfsd_req *q;

	pthread_mutex_lock(&P.lock);
	c->closing = true;
	q = c->qhead;
	c->qhead = c->qtail = NULL;
	c->qlen = 0;
	if (c->parked) {
		c->parked = false;
		run_locked(c);	/* its teardown */
	} else {
		schedule_locked(c);
	}
	pthread_mutex_unlock(&P.lock);
	while (q) {
		struct cfsd_req *next = q->next;

		free(q);
		q = next;
	}
}

/**
 * cfsd_pool_unblock() - the loop: @c's output is no longer blocked; its
 * requests may run again if a worker parked it
 */
void cfsd_pool_unblock(struct cfsd_conn *c)
{
	pthread_mutex_lock(&P.lock);
	if (c->parked) {
		c->parked = false;
		run_locked(c);
	}
	pthread_mutex_unlock(&P.lock);
}

/* one turn of @c: its next request, or its teardown; under P.lock, dropped meanwhile */
static void run_one(struct cfsd_conn *c)
{
	struct cfsd_req *q = c->qhead;
	bool resume = false, teardown = false;

	if (q) {
		c->qhead = q->next;
		if (!c->qhead)
			c->qtail = NULL;
		if (c->qlen-- == CFSD_QUEUE_MAX && !c->closing) {
			__atomic_store_n(&c->read_paused, false, __ATOMIC_SEQ_CST);
			resume = true;
		}
	} else {
		teardown = c->closing;
	}
	if (q)
		count_running(c->uid, 1);
	pthread_mutex_unlock(&P.lock);
	if (resume)
		cfsd_conn_kick(c);
	if (q && !__atomic_load_n(&c->dead, __ATOMIC_SEQ_CST)) {
		if (q->err)
			cfsd_reply_error(c, q->serial, q->err, "out of memory queueing the request");
		else
			cfsd_handle(c, q->data, q->len);
	}
	free(q);
	if (teardown)
		cfsd_conn_teardown(c);
	pthread_mutex_lock(&P.lock);
	if (q)
		count_running(c->uid, -1);
	/* torn down: @c is only the run list's reference now, and nothing requeues it */
	if (!teardown && (c->qhead || c->closing)) {
		run_locked(c);
		return;
	}
	c->scheduled = false;
	pthread_mutex_unlock(&P.lock);
	cfsd_conn_put(c);
	pthread_mutex_lock(&P.lock);
}

static void *worker_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&P.lock);
	for (;;) {
		struct cfsd_conn *c = take_runnable();

		if (!c) {
			struct timespec ts;
			int r;

			if (P.stopping)
				break;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += IDLE_SECONDS;
			P.nidle++;
			r = pthread_cond_timedwait(&P.work, &P.lock, &ts);
			if (P.nwoken)
				P.nwoken--;
			else
				P.nidle--;
			if (r == ETIMEDOUT && !P.head)
				break;
			continue;
		}
		run_one(c);
	}
	P.nthreads--;
	pthread_cond_broadcast(&P.gone);
	pthread_mutex_unlock(&P.lock);
	return NULL;
}

/** cfsd_pool_threads() - how many workers there are now */
unsigned int cfsd_pool_threads(void)
{
	unsigned int n;

	pthread_mutex_lock(&P.lock);
	n = P.nthreads;
	pthread_mutex_unlock(&P.lock);
	return n;
}

/**
 * cfsd_pool_stop() - at exit, every connection torn down: the workers end
 * (each signals its end as the last thing it does under the lock).
 */
void cfsd_pool_stop(void)
{
	pthread_mutex_lock(&P.lock);
	P.stopping = true;
	pthread_cond_broadcast(&P.work);
	while (P.nthreads)
		pthread_cond_wait(&P.gone, &P.lock);
	pthread_mutex_unlock(&P.lock);
}

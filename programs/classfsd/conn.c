// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * conn.c - one client connection: a reader thread that takes every
 * message off the socket, a worker thread that executes the requests in
 * order, and sending to the client.
 *
 * Replies to remote calls (call.c) are taken by the reader, never queued
 * behind requests, so a request whose execution reads one of the same
 * driver's remote attributes still gets its answer.
 *
 * A CALL is posted, never sent under a wait: when another thread holds
 * the send lock (maybe blocked on a client that does not read), the
 * message waits in the outbox and whoever holds the lock sends it on its
 * way out (send_unlock()), or before its own next message, so the thread
 * that made the call is free at once and the CALL keeps its place.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "daemon.h"

#define QUEUE_MAX 64	/* requests read ahead of the worker */

struct qmsg {
	struct qmsg *next;
	size_t len;
	uint8_t data[];
};

/* a message posted while another thread was sending (see cfsd_conn_post()) */
struct outmsg {
	struct outmsg *next;
	uint64_t call_id;
	size_t len;
	uint8_t data[];
};

static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conns_cond = PTHREAD_COND_INITIALIZER;
static struct cfsd_conn *conns;
static unsigned int nconns;

struct cfsd_conn *cfsd_conn_get(struct cfsd_conn *c)
{
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

void cfsd_conn_put(struct cfsd_conn *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&c->send_lock);
	pthread_mutex_destroy(&c->qlock);
	pthread_cond_destroy(&c->qcond);
	pthread_mutex_destroy(&c->olock);
	while (c->out_head) {
		struct outmsg *o = c->out_head;

		c->out_head = o->next;
		free(o);
	}
	free(c->load);
	free(c->rbuf);
	free(c);
}

/* under send_lock: send what was posted, in order; a CALL not sent ends at once */
static void flush_locked(struct cfsd_conn *c)
{
	for (;;) {
		struct outmsg *o;

		pthread_mutex_lock(&c->olock);
		o = c->out_head;
		if (o) {
			c->out_head = o->next;
			if (!o->next)
				c->out_tail = NULL;
			atomic_fetch_sub(&c->nout, 1);
		}
		pthread_mutex_unlock(&c->olock);
		if (!o)
			return;
		/* a full socket: the client is not reading, its call would only time out */
		if (atomic_load(&c->dead) ||
		    send(c->fd, o->data, o->len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			cfsd_call_failed(c, o->call_id);
		free(o);
	}
}

/*
 * drop send_lock; what was posted while it was held goes out first.  A
 * poster that found the lock taken counted its message before trying it,
 * so the holder sees the count after unlocking, or the next holder does.
 */
static void send_unlock(struct cfsd_conn *c)
{
	for (;;) {
		pthread_mutex_unlock(&c->send_lock);
		if (!atomic_load(&c->nout) || pthread_mutex_trylock(&c->send_lock) != 0)
			return;
		flush_locked(c);
	}
}

/**
 * cfsd_conn_post() - send the CALL @b (sealed) for call @call_id to @c
 * without waiting for the send lock: sent now, or by the thread holding
 * the lock when it lets go.  One that cannot be sent ends the call
 * (cfsd_call_failed()).  Return: 0 or -ENOMEM.
 */
int cfsd_conn_post(struct cfsd_conn *c, const struct cfs_buf *b, uint64_t call_id)
{
	struct outmsg *o = malloc(sizeof(*o) + b->len);

	if (!o)
		return -ENOMEM;
	o->next = NULL;
	o->call_id = call_id;
	o->len = b->len;
	memcpy(o->data, b->p, b->len);
	pthread_mutex_lock(&c->olock);
	if (c->out_tail)
		c->out_tail->next = o;
	else
		c->out_head = o;
	c->out_tail = o;
	atomic_fetch_add(&c->nout, 1);
	pthread_mutex_unlock(&c->olock);
	if (pthread_mutex_trylock(&c->send_lock) == 0) {
		flush_locked(c);
		send_unlock(c);
	}
	return 0;
}

int cfsd_conn_send(struct cfsd_conn *c, struct cfs_buf *b, bool nonblock)
{
	ssize_t n;
	int r = 0;

	if (b->err)
		return b->err;
	cfs_buf_seal(b);
	if (b->len > cfsd.cfg.max_msg)
		return -EMSGSIZE;
	pthread_mutex_lock(&c->send_lock);
	/*
	 * CALLs posted before this message go before it: a CALL made while a
	 * device existed reaches its publisher before the reply to the
	 * request that removed it, so it still finds the device its caller
	 * read (the show() that posted it held the attribute, which the
	 * removal waited for).
	 */
	flush_locked(c);
	if (atomic_load(&c->dead)) {
		r = -EPIPE;
	} else {
		do
			n = send(c->fd, b->p, b->len, MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : 0));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			r = -errno;
	}
	send_unlock(c);
	return r;
}

static void *worker_main(void *arg)
{
	struct cfsd_conn *c = arg;

	for (;;) {
		struct qmsg *q;

		pthread_mutex_lock(&c->qlock);
		while (!c->qhead && !c->qclosed)
			pthread_cond_wait(&c->qcond, &c->qlock);
		q = c->qhead;
		if (q) {
			c->qhead = q->next;
			if (!c->qhead)
				c->qtail = NULL;
			c->qlen--;
			pthread_cond_broadcast(&c->qcond);
		}
		pthread_mutex_unlock(&c->qlock);
		if (!q)
			break;
		if (!atomic_load(&c->dead))
			cfsd_handle(c, q->data, q->len);
		free(q);
	}
	return NULL;
}

static void enqueue(struct cfsd_conn *c, const uint8_t *buf, size_t len)
{
	struct qmsg *q = malloc(sizeof(*q) + len);

	if (!q) {
		log_err("out of memory queueing a request of pid %d", (int)c->pid);
		return;
	}
	q->next = NULL;
	q->len = len;
	memcpy(q->data, buf, len);
	pthread_mutex_lock(&c->qlock);
	while (c->qlen >= QUEUE_MAX && !c->qclosed)
		pthread_cond_wait(&c->qcond, &c->qlock);
	if (c->qtail)
		c->qtail->next = q;
	else
		c->qhead = q;
	c->qtail = q;
	c->qlen++;
	pthread_cond_broadcast(&c->qcond);
	pthread_mutex_unlock(&c->qlock);
}

/* an oversized message: answer it without reading its content */
static void reply_too_big(struct cfsd_conn *c, const uint8_t *buf, size_t n)
{
	uint32_t serial = 0, magic;
	struct cfs_buf b;
	char msg[128];

	memcpy(&magic, buf, 4);
	if (magic == CFS_PROTO_MAGIC)
		memcpy(&serial, buf + 8, 4);
	snprintf(msg, sizeof(msg), "message of %zu bytes exceeds the limit of %zu bytes", n,
		 cfsd.cfg.max_msg);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLY, serial, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, -EMSGSIZE);
	cfs_buf_str(&b, CFS_T_MESSAGE, msg);
	cfsd_conn_send(c, &b, false);
	cfs_buf_free(&b);
}

static void *reader_main(void *arg)
{
	struct cfsd_conn *c = arg;
	uint16_t op;

	for (;;) {
		ssize_t n = recv(c->fd, c->rbuf, cfsd.cfg.max_msg, MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((size_t)n > cfsd.cfg.max_msg) {
			reply_too_big(c, c->rbuf, (size_t)n);
			continue;
		}
		if (n >= CFS_HDR_SIZE) {
			memcpy(&op, c->rbuf + 6, 2);
			if (op == CFS_OP_CALL_REPLY) {
				cfsd_call_reply(c, c->rbuf, (size_t)n);
				continue;
			}
		}
		enqueue(c, c->rbuf, (size_t)n);
	}

	/* gone: no more calls to it, no more requests from it */
	pthread_mutex_lock(&c->send_lock);
	atomic_store(&c->dead, true);
	send_unlock(c);
	cfsd_calls_fail(c);
	pthread_mutex_lock(&c->qlock);
	c->qclosed = true;
	pthread_cond_broadcast(&c->qcond);
	pthread_mutex_unlock(&c->qlock);
	pthread_join(c->worker, NULL);
	cfsd_unsubscribe(c);
	cfsd_quota_conn_end(c);
	if (c->bound_last)
		log_debug("pid %d gone: removing what it bound", (int)c->pid);
	cfsd_unbind_all(c);

	pthread_mutex_lock(&conns_lock);
	for (struct cfsd_conn **pp = &conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	close(c->fd);
	nconns--;
	pthread_cond_broadcast(&conns_cond);
	pthread_mutex_unlock(&conns_lock);
	cfsd_conn_put(c);
	return NULL;
}

int cfsd_conn_start(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	pthread_attr_t attr;
	struct cfsd_conn *c;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	r = cfsd_quota_conn_admit(fd, cred.uid);
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (c)
		c->rbuf = malloc(cfsd.cfg.max_msg);
	if (!c || !c->rbuf) {
		free(c);
		cfsd_quota_uncharge(cred.uid, CFSD_Q_CONN, 1);
		return -ENOMEM;
	}
	c->fd = fd;
	/*
	 * A daemon run by another uid than root (classfs-run's, for a caller
	 * who is not root, in a user namespace) is its uid's: that uid is
	 * its root, as root is a system daemon's.
	 */
	c->uid = cred.uid == geteuid() ? 0 : cred.uid;
	c->pid = cred.pid;
	atomic_init(&c->refs, 1);
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->qlock, NULL);
	pthread_cond_init(&c->qcond, NULL);
	pthread_mutex_init(&c->olock, NULL);

	r = -pthread_create(&c->worker, NULL, worker_main, c);
	if (r < 0) {
		cfsd_quota_conn_end(c);
		cfsd_conn_put(c);
		return r;
	}
	pthread_mutex_lock(&conns_lock);
	c->next = conns;
	conns = c;
	nconns++;
	pthread_mutex_unlock(&conns_lock);
	/* logged before the reader runs: it may end and free @c at once */
	log_debug("connection from pid %d uid %u", (int)c->pid, (unsigned int)c->uid);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = -pthread_create(&c->reader, &attr, reader_main, c);
	pthread_attr_destroy(&attr);
	if (r < 0) {
		/* no reader: make the worker stop, then undo as the reader would */
		shutdown(fd, SHUT_RDWR);
		pthread_mutex_lock(&c->qlock);
		c->qclosed = true;
		pthread_cond_broadcast(&c->qcond);
		pthread_mutex_unlock(&c->qlock);
		pthread_join(c->worker, NULL);
		pthread_mutex_lock(&conns_lock);
		for (struct cfsd_conn **pp = &conns; *pp; pp = &(*pp)->next)
			if (*pp == c) {
				*pp = c->next;
				break;
			}
		nconns--;
		pthread_mutex_unlock(&conns_lock);
		cfsd_quota_conn_end(c);
		cfsd_conn_put(c);
		return r;
	}
	return 0;
}

/* end every connection (daemon shutdown) and wait until each has cleaned up */
void cfsd_conn_stop_all(void)
{
	pthread_mutex_lock(&conns_lock);
	for (struct cfsd_conn *c = conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (nconns)
		pthread_cond_wait(&conns_cond, &conns_lock);
	pthread_mutex_unlock(&conns_lock);
}

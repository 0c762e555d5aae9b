// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * conn.c - one client connection: a reader thread that takes every
 * message off the socket, a worker thread that executes the requests in
 * order, and the remote show()/store() calls sent to a driver.
 *
 * Replies to remote calls are taken by the reader, never queued behind
 * requests, so a request whose execution reads one of the same driver's
 * remote attributes still gets its answer.
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

struct pending {
	struct pending *next;
	uint64_t id;
	unsigned int kind;
	bool done;
	ssize_t result;
	char *buf;		/* show(): where the value goes */
};

static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conns_cond = PTHREAD_COND_INITIALIZER;
static struct conn *conns;
static unsigned int nconns;

struct conn *cfsd_conn_get(struct conn *c)
{
	if (c)
		atomic_fetch_add(&c->refs, 1);
	return c;
}

void cfsd_conn_put(struct conn *c)
{
	if (!c || atomic_fetch_sub(&c->refs, 1) != 1)
		return;
	pthread_mutex_destroy(&c->send_lock);
	pthread_mutex_destroy(&c->qlock);
	pthread_cond_destroy(&c->qcond);
	pthread_mutex_destroy(&c->plock);
	pthread_cond_destroy(&c->pcond);
	free(c->load);
	free(c->rbuf);
	free(c);
}

static void deadline_in(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

int cfsd_conn_send(struct conn *c, struct cfs_buf *b, bool nonblock)
{
	ssize_t n;
	int r = 0;

	if (b->err)
		return b->err;
	cfs_buf_seal(b);
	if (b->len > D.cfg.max_msg)
		return -EMSGSIZE;
	pthread_mutex_lock(&c->send_lock);
	if (atomic_load(&c->dead)) {
		r = -EPIPE;
	} else {
		do
			n = send(c->fd, b->p, b->len, MSG_NOSIGNAL | (nonblock ? MSG_DONTWAIT : 0));
		while (n < 0 && errno == EINTR);
		if (n < 0)
			r = -errno;
	}
	pthread_mutex_unlock(&c->send_lock);
	return r;
}

/* a reply to a remote call, taken by the reader */
static void call_reply(struct conn *c, const uint8_t *buf, size_t len)
{
	struct cfs_msg m;

	int r = cfs_msg_decode(buf, len, &m);

	if (r < 0) {
		/* a malformed answer: its call times out; the sender is told */
		struct cfs_buf b;

		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_REPLY, m.serial, 0);
		cfs_buf_i32(&b, CFS_T_ERROR, r);
		cfs_buf_str(&b, CFS_T_MESSAGE, cfs_msg_error_text(r));
		cfsd_conn_send(c, &b, true);
		cfs_buf_free(&b);
		return;
	}
	pthread_mutex_lock(&c->plock);
	for (struct pending *p = c->pending; p; p = p->next) {
		if (p->id != m.call_id || p->done)
			continue;
		if (m.error < 0) {
			p->result = m.error;
		} else if (p->kind == CFS_CALL_SHOW) {
			memcpy(p->buf, m.value, m.value_len);
			p->result = (ssize_t)m.value_len;
		} else {
			uint32_t consumed = 0;

			if (m.value_len == 4)
				memcpy(&consumed, m.value, 4);
			p->result = consumed;
		}
		p->done = true;
		pthread_cond_broadcast(&c->pcond);
		break;
	}
	pthread_mutex_unlock(&c->plock);
}

ssize_t cfsd_remote_call(struct conn *c, struct rattr *ra, unsigned int kind, char *buf,
			 const char *in, size_t count)
{
	struct pending p = { .kind = kind, .buf = buf, .result = -EIO };
	struct timespec deadline;
	struct cfs_buf b;
	int r;

	if (atomic_load(&c->dead))
		return -EIO;
	deadline_in(&deadline, D.cfg.call_timeout_ms);
	pthread_mutex_lock(&c->plock);
	p.id = ++c->next_call;
	p.next = c->pending;
	c->pending = &p;
	pthread_mutex_unlock(&c->plock);

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_CALL, 0, 0);
	cfs_buf_u64(&b, CFS_T_CALL_ID, p.id);
	cfs_buf_u32(&b, CFS_T_CALL_KIND, kind);
	cfs_buf_str(&b, CFS_T_CLASS, ra->d->cls_name);
	/* the name as of now (a rename replaces it under the value lock) */
	pthread_mutex_lock(&D.vlock);
	cfs_buf_str(&b, CFS_T_NAME, ra->d->name);
	pthread_mutex_unlock(&D.vlock);
	cfs_buf_str(&b, CFS_T_ATTR_NAME, ra->path);
	if (kind == CFS_CALL_STORE)
		cfs_buf_bytes(&b, CFS_T_VALUE, in, count);
	cfs_buf_seal(&b);
	/* a driver that does not read its socket must not hold us past the deadline */
	r = pthread_mutex_timedlock(&c->send_lock, &(struct timespec){ 0 }) == 0 ? 0 : -EAGAIN;
	if (r == -EAGAIN) {
		struct timespec rt;

		clock_gettime(CLOCK_REALTIME, &rt);
		rt.tv_sec += D.cfg.call_timeout_ms / 1000 + 1;
		r = pthread_mutex_timedlock(&c->send_lock, &rt) == 0 ? 0 : -EIO;
	}
	if (r == 0) {
		if (atomic_load(&c->dead) || b.err ||
		    send(c->fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			r = -EIO;
		pthread_mutex_unlock(&c->send_lock);
	}
	cfs_buf_free(&b);

	pthread_mutex_lock(&c->plock);
	while (r == 0 && !p.done && !atomic_load(&c->dead))
		if (pthread_cond_timedwait(&c->pcond, &c->plock, &deadline) == ETIMEDOUT)
			break;
	for (struct pending **pp = &c->pending; *pp; pp = &(*pp)->next)
		if (*pp == &p) {
			*pp = p.next;
			break;
		}
	pthread_mutex_unlock(&c->plock);
	if (!p.done) {
		log_warn("remote %s of %s/%s by pid %d: no answer within %d ms",
			 kind == CFS_CALL_SHOW ? "show" : "store", ra->d->key, ra->path, (int)c->pid,
			 D.cfg.call_timeout_ms);
		return -EIO;
	}
	return p.result;
}

static void *worker_main(void *arg)
{
	struct conn *c = arg;

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

static void enqueue(struct conn *c, const uint8_t *buf, size_t len)
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
static void reply_too_big(struct conn *c, const uint8_t *buf, size_t n)
{
	uint32_t serial = 0, magic;
	struct cfs_buf b;
	char msg[128];

	memcpy(&magic, buf, 4);
	if (magic == CFS_PROTO_MAGIC)
		memcpy(&serial, buf + 8, 4);
	snprintf(msg, sizeof(msg), "message of %zu bytes exceeds the limit of %zu bytes", n,
		 D.cfg.max_msg);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLY, serial, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, -EMSGSIZE);
	cfs_buf_str(&b, CFS_T_MESSAGE, msg);
	cfsd_conn_send(c, &b, false);
	cfs_buf_free(&b);
}

static void *reader_main(void *arg)
{
	struct conn *c = arg;
	uint16_t op;

	for (;;) {
		ssize_t n = recv(c->fd, c->rbuf, D.cfg.max_msg, MSG_TRUNC);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		if ((size_t)n > D.cfg.max_msg) {
			reply_too_big(c, c->rbuf, (size_t)n);
			continue;
		}
		if (n >= CFS_HDR_SIZE) {
			memcpy(&op, c->rbuf + 6, 2);
			if (op == CFS_OP_CALL_REPLY) {
				call_reply(c, c->rbuf, (size_t)n);
				continue;
			}
		}
		enqueue(c, c->rbuf, (size_t)n);
	}

	/* gone: no more calls to it, no more requests from it */
	pthread_mutex_lock(&c->send_lock);
	atomic_store(&c->dead, true);
	pthread_mutex_unlock(&c->send_lock);
	pthread_mutex_lock(&c->plock);
	pthread_cond_broadcast(&c->pcond);
	pthread_mutex_unlock(&c->plock);
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
	for (struct conn **pp = &conns; *pp; pp = &(*pp)->next)
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
	pthread_condattr_t ca;
	pthread_attr_t attr;
	struct conn *c;
	int r;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	r = cfsd_quota_conn_admit(fd, cred.uid);
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (c)
		c->rbuf = malloc(D.cfg.max_msg);
	if (!c || !c->rbuf) {
		free(c);
		cfsd_quota_uncharge(cred.uid, CFSD_Q_CONN, 1);
		return -ENOMEM;
	}
	c->fd = fd;
	c->uid = cred.uid;
	c->pid = cred.pid;
	atomic_init(&c->refs, 1);
	pthread_mutex_init(&c->send_lock, NULL);
	pthread_mutex_init(&c->qlock, NULL);
	pthread_cond_init(&c->qcond, NULL);
	pthread_mutex_init(&c->plock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&c->pcond, &ca);
	pthread_condattr_destroy(&ca);

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
		for (struct conn **pp = &conns; *pp; pp = &(*pp)->next)
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
	for (struct conn *c = conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (nconns)
		pthread_cond_wait(&conns_cond, &conns_lock);
	pthread_mutex_unlock(&conns_lock);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * conn.c - one client connection: its messages read by the event loop,
 * its output, and its end.
 *
 * Nothing here waits for a client.  Every message is sent without
 * blocking; what the socket does not take waits in the connection's
 * output queue, in order, and the loop sends it when the socket has room
 * again (EPOLLOUT).  While the queue holds more than OUT_MAX bytes the
 * loop reads no further request of the connection and the pool runs none
 * of those it read (out_blocked): a client that does not read its
 * replies stops being served, nobody else does.  A request's output is
 * queued whole (a TREE, a SAVE) or, when it may be as large as the
 * replay ring, made as the socket drains (a stream: REPLAY), so a
 * connection holds at most OUT_MAX plus one request's output, and a
 * stream's share of that is one message.
 *
 * Replies to remote calls (call.c) are taken by the loop as they are
 * read, never queued behind requests, so a request whose execution reads
 * one of the same driver's remote attributes still gets its answer.  A
 * CALL takes its place in the output queue like any message, so one made
 * while a device existed reaches its publisher before the reply to the
 * request that removed it; a CALL to a publisher whose queue is over its
 * bound fails at once (the publisher is not reading: it would only time
 * out).
 *
 * The end: the loop sees the hangup, marks the connection dead (no more
 * output, every call to it fails) and hands the rest to the pool, which
 * runs it once the connection's request in progress, if any, is done:
 * what the connection bound goes, its quota is returned, the socket is
 * closed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "daemon.h"

/* a connection's output queue above this: its requests are not read */
#define OUT_MAX(cfg) (4 * (cfg).max_msg)

/* a message the socket did not take yet */
struct cfsd_out {
	struct cfsd_out *next;
	uint64_t call_id;	/* a CALL: the call that ends if it cannot be sent */
	size_t len;
	uint8_t data[];
};

/* every connection until its teardown (for the shutdown's wait) */
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conns_cond = PTHREAD_COND_INITIALIZER;
static unsigned int nconns;

/* the loop's: the connections it serves (cfsd_conn.loop_link), one message read */
static struct cfs_list served = CFS_LIST_INIT(served);
static uint8_t *rbuf;

struct cfsd_conn *cfsd_conn_get(struct cfsd_conn *c)
{
	if (c)
		__atomic_fetch_add(&c->refs, 1, __ATOMIC_SEQ_CST);
	return c;
}

void cfsd_conn_put(struct cfsd_conn *c)
{
	if (!c || __atomic_fetch_sub(&c->refs, 1, __ATOMIC_SEQ_CST) != 1)
		return;
	pthread_mutex_destroy(&c->olock);
	if (c->stream)
		c->stream->free(c->stream_data);
	while (c->out_head) {
		struct cfsd_out *o = c->out_head;

		c->out_head = o->next;
		free(o);
	}
	free(c->load);
	free(c);
}

/*
 * under olock: whether the pool is to hold @c's requests back; true when
 * that just ended (the caller tells the pool, outside the lock)
 */
static bool out_update(struct cfsd_conn *c)
{
	bool was = c->out_blocked;
	bool now = c->stream || c->out_bytes > OUT_MAX(cfsd.cfg);

	__atomic_store_n(&c->out_blocked, now, __ATOMIC_SEQ_CST);
	return was && !now;
}

/* under olock: @len bytes at @data behind what waits; 0 or -ENOMEM */
static int out_append(struct cfsd_conn *c, const void *data, size_t len, uint64_t call_id)
{
	struct cfsd_out *o = malloc(sizeof(*o) + len);

	if (!o)
		return -ENOMEM;
	o->next = NULL;
	o->call_id = call_id;
	o->len = len;
	memcpy(o->data, data, len);
	if (c->out_tail)
		c->out_tail->next = o;
	else
		c->out_head = o;
	c->out_tail = o;
	c->out_bytes += len;
	out_update(c);
	return 0;
}

/*
 * under olock: send @len bytes at @data now if nothing waits before them
 * and the socket takes them, else queue them.  Return: 0, -EPIPE (the
 * connection ended), -ENOMEM, or the socket's error.
 */
static int out_send(struct cfsd_conn *c, const void *data, size_t len, uint64_t call_id)
{
	ssize_t n;

	if (__atomic_load_n(&c->dead, __ATOMIC_SEQ_CST))
		return -EPIPE;
	if (!c->out_head) {
		do
			n = send(c->fd, data, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n >= 0)
			return 0;
		if (errno != EAGAIN)
			return -errno;
	}
	/* the loop sends it when the socket has room (EPOLLOUT) */
	return out_append(c, data, len, call_id);
}

/**
 * cfsd_conn_send() - send @b (sealed here) to @c without waiting: now, or
 * from the output queue when the socket has room.  Any thread.
 * Return: 0, -EMSGSIZE, -EPIPE (the connection ended), -ENOMEM, or the
 * socket's error.
 */
int cfsd_conn_send(struct cfsd_conn *c, struct cfs_buf *b)
{
	int r;

	if (b->err)
		return b->err;
	cfs_buf_seal(b);
	if (b->len > cfsd.cfg.max_msg)
		return -EMSGSIZE;
	pthread_mutex_lock(&c->olock);
	r = out_send(c, b->p, b->len, 0);
	pthread_mutex_unlock(&c->olock);
	return r;
}

/**
 * cfsd_conn_post() - send the CALL @b (sealed) for call @call_id to @c.
 * Any thread.  One that cannot be sent, now or later, ends the call
 * (cfsd_call_failed()), as does a publisher whose output queue is over
 * its bound.  Return: 0 or -ENOMEM.
 */
int cfsd_conn_post(struct cfsd_conn *c, const struct cfs_buf *b, uint64_t call_id)
{
	int r;

	pthread_mutex_lock(&c->olock);
	if (c->out_bytes > OUT_MAX(cfsd.cfg))
		r = -EAGAIN;
	else
		r = out_send(c, b->p, b->len, call_id);
	pthread_mutex_unlock(&c->olock);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		cfsd_call_failed(c, call_id);
	return 0;
}

/*
 * conn_flush() - the loop: send what waits in @c's output queue, in
 * order, until the socket is full.  A CALL that cannot be sent ends its
 * call.  Return: true when the queue is empty.
 */
static bool conn_flush(struct cfsd_conn *c)
{
	struct cfsd_out *failed = NULL, *o;
	bool empty, unblocked;

	pthread_mutex_lock(&c->olock);
	while ((o = c->out_head)) {
		ssize_t n = -1;

		/* dead: its descriptor may be closed already; what waits is dropped */
		if (!__atomic_load_n(&c->dead, __ATOMIC_SEQ_CST)) {
			do
				n = send(c->fd, o->data, o->len, MSG_NOSIGNAL | MSG_DONTWAIT);
			while (n < 0 && errno == EINTR);
			if (n < 0 && errno == EAGAIN)
				break;
		}
		c->out_head = o->next;
		if (!o->next)
			c->out_tail = NULL;
		c->out_bytes -= o->len;
		if (n < 0 && o->call_id) {
			o->next = failed;
			failed = o;
		} else {
			free(o);
		}
	}
	empty = !c->out_head;
	unblocked = out_update(c);
	pthread_mutex_unlock(&c->olock);
	/* ended outside the lock: a call's end answers its reader */
	while ((o = failed)) {
		failed = o->next;
		cfsd_call_failed(c, o->call_id);
		free(o);
	}
	if (unblocked)
		cfsd_pool_unblock(c);
	return empty;
}

/* under olock: @c's stream is done (or failed): the pool may run its requests again */
static void stream_end(struct cfsd_conn *c)
{
	c->stream->free(c->stream_data);
	c->stream = NULL;
	c->stream_data = NULL;
}

/**
 * cfsd_conn_stream() - the rest of the output of request @serial, its
 * final REPLY included, is made by @ops from @data as @c's socket takes
 * it (a final error REPLY with @serial replaces what cannot be made).
 * @c runs no further request until it is done.  The worker that ran the
 * request, which sent nothing else of its output.
 *
 * @ops->free(@data) is called when the stream ends, also when @c ends
 * first.
 */
void cfsd_conn_stream(struct cfsd_conn *c, uint32_t serial, const struct cfsd_stream_ops *ops,
		      void *data)
{
	pthread_mutex_lock(&c->olock);
	if (__atomic_load_n(&c->dead, __ATOMIC_SEQ_CST)) {
		pthread_mutex_unlock(&c->olock);
		ops->free(data);
		return;
	}
	c->stream = ops;
	c->stream_data = data;
	c->stream_serial = serial;
	out_update(c);
	pthread_mutex_unlock(&c->olock);
	cfsd_conn_kick(c);	/* the loop makes the output */
}

/*
 * conn_stream_fill() - the loop: more of @c's stream while its output is
 * under its bound (sent at once while the socket takes it), at most
 * STREAM_TURN messages a turn: a client that reads as fast as they come
 * gets the rest at the loop's next turn (a kick), after the others.  A
 * message that cannot be made ends the stream with an error REPLY in its
 * place; one that cannot be sent (the connection ended) ends it.
 */
#define STREAM_TURN 16

static void conn_stream_fill(struct cfsd_conn *c)
{
	bool unblocked, again;
	unsigned int turn = 0;
	struct cfs_buf b;

	cfs_buf_init(&b);
	pthread_mutex_lock(&c->olock);
	while (c->stream && c->out_bytes <= OUT_MAX(cfsd.cfg) && turn++ < STREAM_TURN) {
		bool more;
		int r;

		cfs_buf_truncate(&b, 0);
		more = c->stream->next(c, &b, c->stream_data);
		if (!b.err)
			cfs_buf_seal(&b);
		r = b.err ? b.err : b.len > cfsd.cfg.max_msg ? -EMSGSIZE : 0;
		if (r == 0)
			r = out_send(c, b.p, b.len, 0);
		if (r == 0 && more)
			continue;
		if (r < 0 && r != -EPIPE) {
			/* the request still gets its one final REPLY */
			struct cfs_buf e;

			log_warn("pid %d: cannot send a reply: %s", (int)c->pid, strerror(-r));
			cfs_buf_init(&e);
			cfs_buf_hdr(&e, CFS_OP_REPLY, c->stream_serial, 0);
			cfs_buf_i32(&e, CFS_T_ERROR, r);
			cfs_buf_str(&e, CFS_T_MESSAGE, strerror(-r));
			cfs_buf_seal(&e);
			if (!e.err)
				out_send(c, e.p, e.len, 0);
			cfs_buf_free(&e);
		}
		stream_end(c);
	}
	/* its turn is over with room left: no EPOLLOUT edge will call again */
	again = c->stream && c->out_bytes <= OUT_MAX(cfsd.cfg);
	unblocked = out_update(c);
	pthread_mutex_unlock(&c->olock);
	cfs_buf_free(&b);
	if (unblocked)
		cfsd_pool_unblock(c);
	if (again)
		cfsd_conn_kick(c);
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
	cfsd_conn_send(c, &b);
	cfs_buf_free(&b);
}

/* the loop stops reading @c while its client does not take its output */
static bool out_over_bound(struct cfsd_conn *c)
{
	bool over;

	pthread_mutex_lock(&c->olock);
	over = c->out_bytes > OUT_MAX(cfsd.cfg);
	pthread_mutex_unlock(&c->olock);
	return over;
}

/*
 * the loop: read @c's messages (into rbuf, max_msg bytes) until the
 * socket is empty, its requests waiting reach their bound, or its output
 * queue is over its bound; a hangup ends @c
 */
static void conn_read(struct cfsd_conn *c)
{
	uint8_t *buf = rbuf;
	uint16_t op;

	while (c->readable && !c->ended) {
		ssize_t n;

		if (__atomic_load_n(&c->read_paused, __ATOMIC_SEQ_CST) || out_over_bound(c))
			return;	/* the pool or the next flush kicks the loop */
		n = recv(c->fd, buf, cfsd.cfg.max_msg, MSG_TRUNC | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			c->readable = false;
			return;
		}
		if (n <= 0) {
			cfsd_conn_end(c);
			return;
		}
		if ((size_t)n > cfsd.cfg.max_msg) {
			reply_too_big(c, buf, (size_t)n);
			continue;
		}
		if (n >= CFS_HDR_SIZE) {
			memcpy(&op, buf + 6, 2);
			if (op == CFS_OP_CALL_REPLY) {
				cfsd_call_reply(c, buf, (size_t)n);
				continue;
			}
		}
		/* read_paused is the pool's to set and clear: it is read under its lock */
		if (cfsd_pool_queue(c, buf, (size_t)n))
			return;
	}
}

/*
 * the loop: @c's output first, then more of a streaming reply, then
 * events (they wait for replies queued before them), then requests
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
	conn_flush(c);
	conn_stream_fill(c);
	if (c->sub)
		cfsd_events_send(c);
	conn_read(c);
}

/* the loop: @c's socket is readable, writable or hung up, or @c was kicked (revents 0) */
static void conn_dispatch(struct cfsd_source *s, uint32_t revents)
{
	struct cfsd_conn *c = s->userdata;

	if (revents & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
		c->readable = true;	/* a hangup shows as a read of 0 or an error */
	if (revents & EPOLLOUT)
		cfsd_events_writable(c);
	serve(c);
}

static void conn_hold(void *userdata)
{
	cfsd_conn_get(userdata);
}

static void conn_release(void *userdata)
{
	cfsd_conn_put(userdata);
}

/**
 * cfsd_conn_kick() - any thread: the loop is to serve @c again (read,
 * flush, send events) at its next turn
 */
void cfsd_conn_kick(struct cfsd_conn *c)
{
	cfsd_loop_kick(&c->src);
}

/**
 * cfsd_conn_end() - the loop: @c hung up (or the daemon stops): no more
 * output to it, no more calls to it, no more requests from it; the pool
 * tears it down once its request in progress is done.
 */
void cfsd_conn_end(struct cfsd_conn *c)
{
	if (c->ended)
		return;
	c->ended = true;
	cfsd_source_del(&c->src);
	cfs_list_del(&c->loop_link);
	pthread_mutex_lock(&c->olock);
	__atomic_store_n(&c->dead, true, __ATOMIC_SEQ_CST);
	pthread_mutex_unlock(&c->olock);
	cfsd_calls_fail(c);
	cfsd_events_stop(c);
	cfsd_pool_close(c);
}

/**
 * cfsd_conn_teardown() - the pool, once @c ended and runs no request:
 * what it bound goes, its quota is returned, its socket closed.
 */
void cfsd_conn_teardown(struct cfsd_conn *c)
{
	cfsd_quota_conn_end(c);
	if (!cfs_list_empty(&c->bound))
		log_debug("pid %d gone: removing what it bound", (int)c->pid);
	cfsd_unbind_all(c);
	/* dead and out of the loop: no thread uses the descriptor any more */
	close(c->fd);
	pthread_mutex_lock(&conns_lock);
	nconns--;
	pthread_cond_broadcast(&conns_cond);
	pthread_mutex_unlock(&conns_lock);
	cfsd_listen_fd_freed();	/* accepting may resume */
	cfsd_conn_put(c);	/* the connection's own reference */
}

/**
 * cfsd_conn_start() - serve the accepted socket @fd (non-blocking) from
 * the loop.  Return: 0, -EMFILE (over its uid's limit: the client was
 * told), -ENOMEM or -errno; on error @fd is the caller's to close.
 */
int cfsd_conn_start(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct cfsd_conn *c;
	uid_t uid;
	int r;

	if (!rbuf && !(rbuf = malloc(cfsd.cfg.max_msg)))
		return -ENOMEM;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	/*
	 * A daemon run by another uid than root (classfs-run's, for a caller
	 * who is not root, in a user namespace) is its uid's: that uid is
	 * its root, as root is a system daemon's, and is counted as root
	 * (cfsd_quota_conn_end() gives back what was charged to c->uid).
	 */
	uid = cred.uid == geteuid() ? 0 : cred.uid;
	r = cfsd_quota_conn_admit(fd, uid);
	if (r < 0)
		return r;
	c = calloc(1, sizeof(*c));
	if (!c) {
		cfsd_quota_uncharge(uid, CFSD_Q_CONN, 1);
		return -ENOMEM;
	}
	c->fd = fd;
	c->src = (struct cfsd_source){
		.fd = fd,
		.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
		.dispatch = conn_dispatch,
		.userdata = c,
		.hold = conn_hold,
		.release = conn_release,
	};
	cfs_list_init(&c->bound);
	cfs_list_init(&c->loop_link);
	c->uid = uid;
	c->pid = cred.pid;
	c->refs = 1;
	pthread_mutex_init(&c->olock, NULL);
	pthread_mutex_lock(&conns_lock);
	nconns++;
	pthread_mutex_unlock(&conns_lock);
	log_debug("connection from pid %d uid %u", (int)c->pid, (unsigned int)c->uid);
	r = cfsd_source_add(&c->src);
	if (r < 0) {
		pthread_mutex_lock(&conns_lock);
		nconns--;
		pthread_mutex_unlock(&conns_lock);
		cfsd_quota_conn_end(c);
		cfsd_conn_put(c);
		return r;
	}
	cfs_list_add(&c->loop_link, &served);
	/* last: what it sent before we listened is not an edge; a hangup there may free @c */
	c->readable = true;
	conn_read(c);
	return 0;
}

/**
 * cfsd_conn_end_all() - the loop's thread, at shutdown: end every
 * connection and wait until each was torn down
 */
void cfsd_conn_end_all(void)
{
	while (!cfs_list_empty(&served))
		cfsd_conn_end(cfs_list_entry(served.next, struct cfsd_conn, loop_link));
	pthread_mutex_lock(&conns_lock);
	while (nconns)
		pthread_cond_wait(&conns_cond, &conns_lock);
	pthread_mutex_unlock(&conns_lock);
	free(rbuf);
	rbuf = NULL;
}

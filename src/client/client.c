// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client.c - the client library of classfsd's control protocol
 * (<classfs/client.h>): connecting, requests and their replies, remote
 * attribute calls served from the caller's thread, dispatching, and
 * reconnecting with republishing of what the client bound.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "client-internal.h"

#define RECONNECT_MS 5000
#define DISPATCH_MAX 64	/* messages per socket per classfs_client_dispatch() */

int cfs_client_error(struct classfs_client *c, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->errmsg, sizeof(c->errmsg), fmt, ap);
	va_end(ap);
	return err;
}

char *cfs_client_key(const char *a, const char *b, const char *d)
{
	char *k = NULL;

	if (asprintf(&k, "%s/%s%s%s", a ? a : "", b, d ? "/" : "", d ? d : "") < 0)
		return NULL;
	return k;
}

int cfs_client_sock_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

int cfs_client_send(int fd, struct cfs_buf *b)
{
	ssize_t n;

	if (b->err)
		return b->err;
	cfs_buf_seal(b);
	do
		n = send(fd, b->p, b->len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return 0;
}

/* one message into c->rbuf; length, -EAGAIN (@nonblock), -ECONNRESET at EOF */
ssize_t cfs_client_recv(struct classfs_client *c, int fd, bool nonblock)
{
	ssize_t n;

	do
		n = recv(fd, c->rbuf, c->rcap, MSG_TRUNC | (nonblock ? MSG_DONTWAIT : 0));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (n == 0)
		return -ECONNRESET;
	if ((size_t)n > c->rcap)
		return -EMSGSIZE;
	return n;
}

/*
 * A daemon that refuses a connection (its uid holds too many) sends a
 * REPLY with serial 0 and the error, then closes: a request sent after
 * that fails with EPIPE, and a reply awaited may fail with ECONNRESET,
 * while the notice still waits in the socket.
 * Returns the notice's error (and message), else @r.
 */
int cfs_client_refusal(struct classfs_client *c, int fd, int r)
{
	struct cfs_msg m;
	ssize_t n = cfs_client_recv(c, fd, true);

	/* the daemon closed with our request unread: that error comes first, once */
	if (n == -ECONNRESET)
		n = cfs_client_recv(c, fd, true);
	if (n > 0 && cfs_msg_decode(c->rbuf, (size_t)n, &m) == 0 && m.op == CFS_OP_REPLY &&
	    m.serial == 0 && m.error < 0)
		return cfs_client_error(c, m.error, "%s", m.message ? m.message : strerror(-m.error));
	return r;
}

struct rattr *cfs_client_rattr_find(struct classfs_client *c, const char *key)
{
	for (size_t i = 0; i < c->nrattrs; i++)
		if (!strcmp(c->rattrs[i].key, key))
			return &c->rattrs[i];
	return NULL;
}

/* a CALL from the daemon: run the show()/store() and answer */
static void serve_call(struct classfs_client *c, const struct cfs_msg *m)
{
	char *key = cfs_client_key(m->cls, m->name, m->attr_name);
	struct rattr *ra = key ? cfs_client_rattr_find(c, key) : NULL;
	char *buf = NULL;
	ssize_t r = -ENOENT;
	struct cfs_buf out;

	free(key);
	cfs_buf_init(&out);
	if (ra && m->call_kind == CFS_CALL_SHOW && ra->show) {
		buf = calloc(1, CFS_VALUE_MAX + 1);
		r = buf ? ra->show(ra->data, buf, CFS_VALUE_MAX) : -ENOMEM;
		if (r > (ssize_t)CFS_VALUE_MAX)
			r = -EIO;
	} else if (ra && m->call_kind == CFS_CALL_STORE && ra->store) {
		buf = calloc(1, m->value_len + 1);	/* NUL-terminated for convenience */
		if (buf) {
			memcpy(buf, m->value, m->value_len);
			r = ra->store(ra->data, buf, m->value_len);
		} else {
			r = -ENOMEM;
		}
	} else if (ra) {
		r = -EACCES;
	}
	cfs_buf_hdr(&out, CFS_OP_CALL_REPLY, 0, 0);
	cfs_buf_u64(&out, CFS_T_CALL_ID, m->call_id);
	cfs_buf_i32(&out, CFS_T_ERROR, r < 0 ? (int32_t)r : 0);
	if (r >= 0 && m->call_kind == CFS_CALL_SHOW)
		cfs_buf_bytes(&out, CFS_T_VALUE, buf, (size_t)r);
	else if (r >= 0)
		cfs_buf_bytes(&out, CFS_T_VALUE, &(uint32_t){ (uint32_t)r }, 4);
	cfs_client_send(c->fd, &out);
	cfs_buf_free(&out);
	free(buf);
}

/* a message that is not the reply awaited: a CALL (main socket) */
static void handle_async(struct classfs_client *c, const struct cfs_msg *m)
{
	if (m->op == CFS_OP_CALL)
		serve_call(c, m);
}

static int do_connect(struct classfs_client *c);

/* send @b (its serial patched) and wait for the reply, serving CALLs meanwhile */
static int transact_once(struct classfs_client *c, struct cfs_buf *b, struct call_ctx *ctx)
{
	uint32_t serial = ++c->serial;
	int r;

	if (c->fd < 0)
		return -ECONNRESET;
	if (b->err)
		return cfs_client_error(c, b->err, "cannot build the request");
	if (b->len > c->max_msg)
		return cfs_client_error(c, -EMSGSIZE, "request of %zu bytes exceeds the daemon's limit of %zu",
				 b->len, c->max_msg);
	memcpy(b->p + 8, &serial, 4);
	r = cfs_client_send(c->fd, b);
	if (r < 0)
		return cfs_client_refusal(c, c->fd, r == -EPIPE ? -ECONNRESET : r);
	for (;;) {
		ssize_t n = cfs_client_recv(c, c->fd, false);
		struct cfs_msg m;

		if (n == -ECONNRESET)
			return cfs_client_refusal(c, c->fd, (int)n);
		if (n < 0)
			return n;
		if (cfs_msg_decode(c->rbuf, (size_t)n, &m) < 0)
			continue;	/* not ours to judge: skip it */
		if (m.op == CFS_OP_REPLY && m.serial == 0 && m.error < 0)	/* connection refused */
			return cfs_client_error(c, m.error, "%s",
						m.message ? m.message : strerror(-m.error));
		if (m.op != CFS_OP_REPLY || m.serial != serial) {
			handle_async(c, &m);
			continue;
		}
		if (m.flags & CFS_F_MORE) {
			if (ctx && ctx->part && (r = ctx->part(c, &m, ctx->data)) < 0) {
				/* keep reading to the end of the reply: the stream stays in step */
				ctx->part = NULL;
				cfs_client_error(c, r, "%s", "local error while receiving the reply");
			}
			continue;
		}
		if (ctx)
			ctx->reply = m;
		if (m.error < 0)
			return cfs_client_error(c, m.error, "%s", m.message ? m.message : strerror(-m.error));
		return 0;
	}
}

static bool conn_lost(int r)
{
	return r == -ECONNRESET || r == -EPIPE || r == -ENOTCONN || r == -ECONNREFUSED;
}

int cfs_client_transact(struct classfs_client *c, struct cfs_buf *b, struct call_ctx *ctx)
{
	int r;

	c->errmsg[0] = '\0';
	r = transact_once(c, b, ctx);
	if (conn_lost(r) && (c->flags & CLASSFS_CLIENT_RECONNECT)) {
		r = do_connect(c);
		if (r == 0)
			r = transact_once(c, b, ctx);
	}
	if (r < 0 && !c->errmsg[0])
		cfs_client_error(c, r, "%s", conn_lost(r) ? "connection to classfsd lost" : strerror(-r));
	return r;
}

static int status_query(struct classfs_client *c, struct classfs_client_status *st)
{
	struct cfs_buf b;
	struct call_ctx ctx = { 0 };
	int r;

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 0, 0);
	r = transact_once(c, &b, &ctx);
	cfs_buf_free(&b);
	if (r < 0)
		return r;
	if (ctx.reply.proto_version != CFS_PROTO_VERSION)
		return cfs_client_error(c, -EPROTONOSUPPORT, "daemon speaks protocol version %u",
				 ctx.reply.proto_version);
	if (ctx.reply.count >= 4096 && ctx.reply.count <= CFS_MSG_MAX_LIMIT)
		c->max_msg = ctx.reply.count;
	if (st) {
		st->version = ctx.reply.proto_version;
		st->layout = (enum classfs_layout)ctx.reply.layout;
		st->seqnum = ctx.reply.seqnum;
		snprintf(st->mountpoint, sizeof(st->mountpoint), "%s",
			 ctx.reply.mount ? ctx.reply.mount : "");
	}
	return 0;
}

static void close_fds(struct classfs_client *c)
{
	if (c->fd >= 0) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		close(c->fd);
		c->fd = -1;
	}
	if (c->sub_fd >= 0) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->sub_fd, NULL);
		close(c->sub_fd);
		c->sub_fd = -1;
	}
}

/* (re)connect; after a restart publish the bound objects again and resubscribe */
static int do_connect(struct classfs_client *c)
{
	struct timespec start, now;
	bool again = c->fd >= 0 || c->serial > 0;
	int fd, r;

	close_fds(c);
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		fd = cfs_client_sock_connect(c->path);
		if (fd >= 0 || !again || !(c->flags & CLASSFS_CLIENT_RECONNECT))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		if ((now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000 >
		    RECONNECT_MS)
			break;
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
	if (fd < 0)
		return cfs_client_error(c, fd == -ENOENT && again ? -ECONNRESET : fd,
				 "cannot connect to %s: %s", c->path, strerror(-fd));
	c->fd = fd;
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN,
		      .data.fd = fd }) < 0) {
		r = -errno;
		close_fds(c);
		return r;
	}
	r = status_query(c, NULL);
	if (r < 0) {
		close_fds(c);
		return r;
	}
	/*
	 * A new daemon numbers its events afresh: follow it from its next
	 * event, subscribed before republishing so those ADD events are seen.
	 */
	if (c->subscribed && cfs_client_open_sub(c, 0) < 0)
		c->subscribed = false;
	/* republish, in the original order; a failure of one does not stop the rest */
	for (size_t i = 0; i < c->nbound; i++) {
		struct cfs_buf b = { .p = c->bound[i].msg, .len = c->bound[i].len,
				     .cap = c->bound[i].len };

		r = transact_once(c, &b, NULL);
		if (conn_lost(r)) {
			close_fds(c);
			return r;
		}
	}
	c->errmsg[0] = '\0';
	return 0;
}

struct classfs_client *classfs_client_connect(const char *path, unsigned int flags)
{
	struct classfs_client *c;
	int r;

	if (flags & ~CLASSFS_CLIENT_RECONNECT) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto enomem;
	c->fd = c->sub_fd = -1;
	c->flags = flags;
	c->max_msg = CFS_MSG_MAX_DEFAULT;
	c->rcap = CFS_MSG_MAX_LIMIT;
	c->path = strdup(path ? path : CLASSFS_CLIENT_DEFAULT_SOCKET);
	c->rbuf = malloc(c->rcap);
	c->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (!c->path || !c->rbuf || c->epfd < 0) {
		classfs_client_disconnect(c);
		goto enomem;
	}
	r = do_connect(c);
	if (r < 0) {
		classfs_client_disconnect(c);
		errno = -r;
		return NULL;
	}
	return c;
enomem:
	errno = ENOMEM;
	return NULL;
}

void classfs_client_disconnect(struct classfs_client *c)
{
	if (!c)
		return;
	close_fds(c);
	if (c->epfd >= 0)
		close(c->epfd);
	for (size_t i = 0; i < c->nrattrs; i++)
		free(c->rattrs[i].key);
	for (size_t i = 0; i < c->nbound; i++) {
		free(c->bound[i].key);
		free(c->bound[i].msg);
	}
	free(c->rattrs);
	free(c->bound);
	free(c->rbuf);
	free(c->path);
	free(c);
}

const char *classfs_client_error_message(const struct classfs_client *c)
{
	return c ? c->errmsg : "no client";
}

int classfs_client_fd(const struct classfs_client *c)
{
	return c ? c->epfd : -EINVAL;
}

static int dispatch_fd(struct classfs_client *c, int fd)
{
	int handled = 0;

	/* a bounded number: a busy subscription never starves remote calls */
	for (int k = 0; k < DISPATCH_MAX; k++) {
		ssize_t n = cfs_client_recv(c, fd, true);
		struct cfs_msg m;

		if (n == -EAGAIN)
			return handled;
		if (n < 0)
			return (int)n;
		handled++;
		if (fd == c->sub_fd && c->ev_fn && cfs_client_fast_events(c, c->rbuf, (size_t)n) == 0)
			continue;
		if (cfs_msg_decode(c->rbuf, (size_t)n, &m) < 0)
			continue;
		if (fd == c->sub_fd && m.op == CFS_OP_EVENTS && c->ev_fn)
			cfs_client_deliver_events(c, &m, c->ev_fn, c->ev_data, true);
		else if (fd == c->sub_fd && m.op == CFS_OP_GAP) {
			int r = cfs_client_fill_gap(c, m.seqnum, m.seqnum_last);

			if (r < 0)
				return r;
		} else if (fd == c->fd)
			handle_async(c, &m);
		if (fd != c->fd && fd != c->sub_fd)
			return handled;	/* unsubscribed (or disconnected) from a callback */
	}
	return handled;
}

int classfs_client_dispatch(struct classfs_client *c, int timeout_ms)
{
	struct epoll_event evs[2];
	int n, total = 0;

	if (!c)
		return -EINVAL;
	if (c->fd < 0 && (c->flags & CLASSFS_CLIENT_RECONNECT)) {
		int r = do_connect(c);

		if (r < 0)
			return r;
	}
	do
		n = epoll_wait(c->epfd, evs, 2, timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (int i = 0; i < n; i++) {
		int fd = evs[i].data.fd, r;

		if (fd != c->fd && fd != c->sub_fd)
			continue;
		r = dispatch_fd(c, fd);
		if (r < 0) {
			if (!conn_lost(r))
				return r;
			if (!(c->flags & CLASSFS_CLIENT_RECONNECT)) {
				if (fd == c->sub_fd) {
					epoll_ctl(c->epfd, EPOLL_CTL_DEL, fd, NULL);
					close(fd);
					c->sub_fd = -1;
					c->subscribed = false;
				}
				return cfs_client_error(c, -ECONNRESET, "connection to classfsd lost");
			}
			r = do_connect(c);
			if (r < 0)
				return r;
			break;	/* the descriptors changed */
		}
		total += r;
	}
	return total;
}

int classfs_client_status(struct classfs_client *c, struct classfs_client_status *st)
{
	int r;

	if (!c || !st)
		return -EINVAL;
	c->errmsg[0] = '\0';
	r = status_query(c, st);
	if (conn_lost(r) && (c->flags & CLASSFS_CLIENT_RECONNECT)) {
		r = do_connect(c);
		if (r == 0)
			r = status_query(c, st);
	}
	return r;
}

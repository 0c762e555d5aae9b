// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-events.c - following a daemon's events: the subscription
 * (a connection of its own), the one-pass decoding of EVENTS messages,
 * gap notices and replay.
 *
 * A gap notice is not a loss yet: the daemon sends one when a subscriber
 * lags more than its queue allows and goes on from the head, but its
 * replay ring usually still holds the range.  The library fetches the
 * range with REPLAY before it reads on, so the caller sees every event in
 * SEQNUM order, and its gap callback hears only of what the ring no
 * longer has.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "client-internal.h"

static void deliver_event(struct classfs_client *c, const struct cfs_event *ev,
			  classfs_client_event_fn fn, void *data)
{
	const char *envp[CFS_EVENT_VARS_MAX];
	struct classfs_uevent u = {
		.seqnum = ev->seqnum,
		.action = (enum classfs_action)ev->action,
		.envc = (int)ev->envc,
		.envp = envp,
		.devpath = "",
		.subsystem = "",
	};
	const char *p = ev->env;

	for (uint32_t i = 0; i < ev->envc; i++) {
		envp[i] = p;
		if (!strncmp(p, "DEVPATH=", 8))
			u.devpath = p + 8;
		else if (!strncmp(p, "SUBSYSTEM=", 10))
			u.subsystem = p + 10;
		p += strlen(p) + 1;
	}
	fn(&u, data);
}

int cfs_client_deliver_events(struct classfs_client *c, const struct cfs_msg *m,
			  classfs_client_event_fn fn, void *data, bool live)
{
	const uint8_t *v;
	size_t off = 0, len;
	int n = 0;

	while (cfs_msg_next(m, &off, CFS_T_EVENT, &v, &len)) {
		struct cfs_event ev;

		if (cfs_event_decode(v, len, &ev) < 0)
			continue;
		if (live)
			c->last_seqnum = ev.seqnum;
		deliver_event(c, &ev, fn, data);
		n++;
	}
	return n;
}

int cfs_client_open_sub(struct classfs_client *c, uint64_t from)
{
	struct cfs_buf b;
	struct cfs_msg m;
	ssize_t n;
	int fd, r;

	fd = cfs_client_sock_connect(c->path);
	if (fd < 0)
		return fd;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_SUBSCRIBE, 1, 0);
	if (from)
		cfs_buf_u64(&b, CFS_T_SEQNUM, from);
	r = cfs_client_send(fd, &b);
	cfs_buf_free(&b);
	if (r < 0)
		r = cfs_client_refusal(c, fd, r);
	for (; r == 0;) {
		n = cfs_client_recv(c, fd, false);
		if (n < 0) {
			r = n == -ECONNRESET ? cfs_client_refusal(c, fd, (int)n) : (int)n;
			break;
		}
		if (cfs_msg_decode(c->rbuf, (size_t)n, &m) < 0 || m.op != CFS_OP_REPLY)
			continue;
		r = m.error < 0 ? cfs_client_error(c, m.error, "%s", m.message ? m.message : "") : 0;
		break;
	}
	if (r < 0) {
		close(fd);
		return r;
	}
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &(struct epoll_event){ .events = EPOLLIN,
		      .data.fd = fd }) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	c->sub_fd = fd;
	return 0;
}

/*
 * The hot path of a subscriber: one pass over an EVENTS message, each
 * event checked for bounds only (the full decoder also checks every
 * variable's syntax, which the daemon's own encoder guarantees).
 * Returns 0, or -EBADMSG to fall back to the full decoder.
 */
int cfs_client_fast_events(struct classfs_client *c, const uint8_t *p, size_t len)
{
	const char *envp[CFS_EVENT_VARS_MAX];
	uint32_t magic, total, action, envc;
	uint16_t version, op, tag;
	size_t off = CFS_HDR_SIZE;

	if (len < CFS_HDR_SIZE)
		return -EBADMSG;
	memcpy(&magic, p, 4);
	memcpy(&version, p + 4, 2);
	memcpy(&op, p + 6, 2);
	memcpy(&total, p + 16, 4);
	if (magic != CFS_PROTO_MAGIC || version != CFS_PROTO_VERSION || op != CFS_OP_EVENTS ||
	    total != len)
		return -EBADMSG;
	while (off < len) {
		struct classfs_uevent u = { .envp = envp, .devpath = "", .subsystem = "" };
		const char *s, *end;
		uint32_t flen;

		if (len - off < CFS_FIELD_HDR_SIZE + 16)
			return -EBADMSG;
		memcpy(&tag, p + off, 2);
		memcpy(&flen, p + off + 4, 4);
		if (tag != CFS_T_EVENT || flen < 16 || flen > len - off - CFS_FIELD_HDR_SIZE)
			return -EBADMSG;
		off += CFS_FIELD_HDR_SIZE;
		memcpy(&u.seqnum, p + off, 8);
		memcpy(&action, p + off + 8, 4);
		memcpy(&envc, p + off + 12, 4);
		if (envc == 0 || envc > CFS_EVENT_VARS_MAX)
			return -EBADMSG;
		s = (const char *)p + off + 16;
		end = (const char *)p + off + flen;
		for (uint32_t i = 0; i < envc; i++) {
			const char *nul = memchr(s, '\0', (size_t)(end - s));

			if (!nul)
				return -EBADMSG;
			envp[i] = s;
			if (s[0] == 'D' && !strncmp(s, "DEVPATH=", 8))
				u.devpath = s + 8;
			else if (s[0] == 'S' && !strncmp(s, "SUBSYSTEM=", 10))
				u.subsystem = s + 10;
			s = nul + 1;
		}
		u.action = (enum classfs_action)action;
		u.envc = (int)envc;
		c->last_seqnum = u.seqnum;
		c->ev_fn(&u, c->ev_data);
		off += flen;
		if (c->sub_fd < 0)
			break;	/* unsubscribed from the callback */
	}
	return 0;
}

int classfs_client_subscribe(struct classfs_client *c, uint64_t from, classfs_client_event_fn fn,
			     classfs_client_gap_fn gap, void *data)
{
	int r;

	if (!c || !fn)
		return -EINVAL;
	if (c->subscribed)
		return cfs_client_error(c, -EBUSY, "already subscribed");
	c->errmsg[0] = '\0';
	r = cfs_client_open_sub(c, from);
	if (r < 0) {
		if (!c->errmsg[0])
			cfs_client_error(c, r, "cannot subscribe: %s", strerror(-r));
		return r;
	}
	c->subscribed = true;
	c->ev_fn = fn;
	c->gap_fn = gap;
	c->ev_data = data;
	c->last_seqnum = from ? from - 1 : 0;
	return 0;
}

int classfs_client_unsubscribe(struct classfs_client *c)
{
	if (!c)
		return -EINVAL;
	if (!c->subscribed)
		return -ENOENT;
	if (c->sub_fd >= 0) {
		epoll_ctl(c->epfd, EPOLL_CTL_DEL, c->sub_fd, NULL);
		close(c->sub_fd);
		c->sub_fd = -1;
	}
	c->subscribed = false;
	return 0;
}

/* a gap being filled from the ring: the next SEQNUM owed to the caller */
struct fill_ctx {
	struct classfs_client *c;
	uint64_t next;
};

static bool still_subscribed(const struct classfs_client *c)
{
	return c->subscribed && c->sub_fd >= 0;
}

static void fill_event(const struct classfs_uevent *ev, void *data)
{
	struct fill_ctx *f = data;
	struct classfs_client *c = f->c;

	/* unsubscribed from a callback: the rest of the reply is read, not delivered */
	if (!still_subscribed(c) || ev->seqnum < f->next)
		return;
	if (ev->seqnum > f->next && c->gap_fn)
		c->gap_fn(f->next, ev->seqnum - 1, c->ev_data);
	f->next = ev->seqnum + 1;
	c->ev_fn(ev, c->ev_data);
}

/**
 * cfs_client_fill_gap() - a gap notice for @first..@last came on the
 * subscription: deliver what the replay ring still holds of the range, in
 * order, and tell the gap callback of each part it no longer has.
 *
 * Runs before the next message of the subscription is read, so the order
 * of SEQNUMs is kept (the daemon goes on after @last).
 * Return: 0, or -errno when the replay failed other than for a range the
 * ring does not hold (the undelivered rest is reported as a gap first).
 */
int cfs_client_fill_gap(struct classfs_client *c, uint64_t first, uint64_t last)
{
	struct fill_ctx f = { c, first };
	unsigned int flags = c->flags;
	int r = 0;

	if (first == 0 || first > last)
		return 0;
	/*
	 * No reconnect inside: a new daemon numbers its events afresh, so its
	 * ring's @first..@last are other events.  A lost connection is the
	 * dispatcher's to handle (it reconnects and subscribes again).
	 */
	c->flags &= ~CLASSFS_CLIENT_RECONNECT;
	if (c->ev_fn)
		r = classfs_client_replay(c, first, last, fill_event, &f);
	c->flags = flags;
	if (last > c->last_seqnum)
		c->last_seqnum = last;
	if (f.next <= last && c->gap_fn && still_subscribed(c))
		c->gap_fn(f.next, last, c->ev_data);
	return r < 0 && r != -ENOENT ? r : 0;
}

struct replay_ctx {
	classfs_client_event_fn fn;
	void *data;
	int n;
};

static int replay_part(struct classfs_client *c, const struct cfs_msg *m, void *data)
{
	struct replay_ctx *rc = data;

	rc->n += cfs_client_deliver_events(c, m, rc->fn, rc->data, false);
	return 0;
}

int classfs_client_replay(struct classfs_client *c, uint64_t first, uint64_t last,
			  classfs_client_event_fn fn, void *data)
{
	struct replay_ctx rc = { fn, data, 0 };
	struct call_ctx ctx = { replay_part, &rc, { 0 } };
	struct cfs_buf b;
	int r;

	if (!c || !fn)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLAY, 0, 0);
	cfs_buf_u64(&b, CFS_T_SEQNUM, first);
	cfs_buf_u64(&b, CFS_T_SEQNUM_LAST, last);
	r = cfs_client_transact(c, &b, &ctx);
	cfs_buf_free(&b);
	return r < 0 ? r : rc.n;
}

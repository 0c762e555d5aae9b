// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * events.c - event fan-out: one shared ring of encoded events (the replay
 * ring), each subscriber a cursor into it that the event loop advances,
 * and the opt-in udev netlink broadcast.
 *
 * The tree's listener only copies the event into the ring and, when
 * there are subscribers and no fan-out is due already, wakes the loop:
 * it never waits for a subscriber.  The loop lets events gather
 * for LINGER_NS (a bulk add makes them one at a time) unless
 * LINGER_EVENTS came, then sends each subscriber as many as fit in one
 * message from its cursor, and more while its socket takes them.  A
 * subscriber whose socket is full keeps its cursor and is served again
 * when the socket has room (EPOLLOUT): events are never copied per
 * subscriber, the ring is its queue.  One that has fallen more than its
 * queue allows behind the head (or whose next events were overwritten)
 * is sent a GAP notice naming the range it missed and continues from the
 * head; the client may fetch the range with REPLAY while the ring still
 * holds it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <classfs/wire.h>

#include "daemon.h"

/* fewer new events than this wait LINGER_NS for more before they are sent */
#define LINGER_EVENTS 64
#define LINGER_NS (500 * 1000L)

struct slot {
	uint64_t seq;		/* 0: empty */
	uint32_t len;
	uint32_t cap;
	uint8_t *data;		/* the encoded CFS_T_EVENT field, header included */
};

/* a subscriber (the loop's only) */
struct cfsd_sub {
	struct cfsd_conn *c;
	uint64_t cursor;	/* next SEQNUM to send */
	bool blocked;		/* its socket was full: left out of fan-outs until EPOLLOUT */
	struct cfs_list link;	/* in S.subs */
};

static struct {
	pthread_mutex_t lock;
	struct slot *slots;
	size_t size;		/* a power of two */
	uint64_t head;		/* last SEQNUM stored, 0 when none */
	uint64_t first;		/* oldest SEQNUM still stored */
	size_t bytes;		/* allocated for the events stored (slot caps): --ring-bytes */
	int listener;
	/*
	 * Whether an event needs to wake the loop: not without subscribers,
	 * nor while the linger timer runs (its fan-out takes every event
	 * stored until then).  Written by the loop.
	 */
	unsigned int nsubs;
	bool armed;
	/*
	 * Requests running that may make events (cfsd_events_busy()): the
	 * loop lingers for more events only while one runs, so the last
	 * event of a request goes out at once to whoever waits for it.
	 */
	unsigned int busy;
} R = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* the loop's side */
static struct {
	struct cfs_list subs;	/* struct cfsd_sub.link */
	uint64_t sent_head;	/* R.head at the last fan-out */
	bool armed;		/* the linger timer runs */
	struct cfsd_source wake;	/* eventfd: events came, or the last busy request ended */
	bool woken;		/* a wake is pending: no need to write the eventfd again (any thread) */
	struct cfsd_source timer;	/* the linger timer (timerfd) */
	struct cfs_buf b;	/* the message being sent */
} S = { .subs = CFS_LIST_INIT(S.subs), .wake = { .fd = -1 }, .timer = { .fd = -1 } };

/* any thread: the loop is to look at the ring (events_notified()) */
static void events_wake(void)
{
	uint64_t one = 1;

	if (__atomic_exchange_n(&S.woken, true, __ATOMIC_SEQ_CST))
		return;
	if (write(S.wake.fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		log_err("cannot wake the event loop: %m");
}

/* encode @ev as a CFS_T_EVENT field straight into @s (under R.lock) */
static int slot_fill(struct slot *s, const struct classfs_uevent *ev)
{
	uint32_t payload = 16, envc = (uint32_t)ev->envc, action = (uint32_t)ev->action;
	uint16_t tag = CFS_T_EVENT, zero = 0;
	uint8_t *p;

	for (int i = 0; i < ev->envc; i++)
		payload += (uint32_t)strlen(ev->envp[i]) + 1;
	if (payload + CFS_FIELD_HDR_SIZE > s->cap) {
		uint32_t cap = (payload + CFS_FIELD_HDR_SIZE + 63) & ~63u;
		uint8_t *d = realloc(s->data, cap);

		if (!d)
			return -ENOMEM;
		s->data = d;
		s->cap = cap;
	}
	p = s->data;
	memcpy(p, &tag, 2);
	memcpy(p + 2, &zero, 2);
	memcpy(p + 4, &payload, 4);
	memcpy(p + 8, &ev->seqnum, 8);
	memcpy(p + 16, &action, 4);
	memcpy(p + 20, &envc, 4);
	p += 24;
	for (int i = 0; i < ev->envc; i++) {
		size_t l = strlen(ev->envp[i]) + 1;

		memcpy(p, ev->envp[i], l);
		p += l;
	}
	s->len = payload + CFS_FIELD_HDR_SIZE;
	s->seq = ev->seqnum;
	return 0;
}

static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct slot *s;

	if (cfsd.netlink_fd >= 0) {
		int r = classfs_netlink_udev_send(cfsd.netlink_fd, ev);

		if (r < 0)
			log_debug("netlink send of SEQNUM %llu: %s", (unsigned long long)ev->seqnum,
				  strerror(-r));
	}
	if (ev->envc <= 0 || (size_t)ev->envc > CFS_EVENT_VARS_MAX)
		return;
	pthread_mutex_lock(&R.lock);
	s = &R.slots[ev->seqnum & (R.size - 1)];
	R.bytes -= s->cap;	/* the event it held, if any, was the oldest by count */
	if (slot_fill(s, ev) < 0) {
		s->seq = 0;	/* a hole: subscribers skip it */
		log_err("out of memory storing event %llu", (unsigned long long)ev->seqnum);
	}
	R.bytes += s->cap;
	R.head = ev->seqnum;
	if (!R.first)
		R.first = ev->seqnum;
	if (ev->seqnum >= R.size && R.first < ev->seqnum - R.size + 1)
		R.first = ev->seqnum - R.size + 1;
	/* over its bytes: the oldest events go, their memory with them */
	while (R.bytes > cfsd.cfg.ring_bytes && R.first < R.head) {
		struct slot *old = &R.slots[R.first & (R.size - 1)];

		R.bytes -= old->cap;
		free(old->data);
		*old = (struct slot){ 0 };
		R.first++;
	}
	pthread_mutex_unlock(&R.lock);
	if (__atomic_load_n(&R.nsubs, __ATOMIC_SEQ_CST) && !__atomic_load_n(&R.armed, __ATOMIC_SEQ_CST))
		events_wake();
}

/*
 * Append events from *@cursor to @upto that fit in @b (at most max_msg
 * bytes); skips holes. Under R.lock. Returns the number appended.
 */
static unsigned int take_events(struct cfs_buf *b, uint64_t *cursor, uint64_t upto)
{
	unsigned int n = 0;

	for (; *cursor <= upto; (*cursor)++) {
		const struct slot *s = &R.slots[*cursor & (R.size - 1)];

		if (s->seq != *cursor)
			continue;
		if (b->len + s->len > cfsd.cfg.max_msg) {
			if (b->len > CFS_HDR_SIZE)
				break;
			/* alone too big for a message (a small --max-message): skipped */
			log_warn("event %llu (%u bytes) exceeds the message size limit: not sent",
				 (unsigned long long)*cursor, s->len);
			continue;
		}
		cfs_buf_raw(b, s->data, s->len);
		n++;
	}
	return n;
}

/*
 * The next message for @sub into S.b: a GAP notice, or events from its
 * cursor (advanced past them).  Under R.lock.  Return: false when there
 * is nothing to send.
 */
static bool next_message(struct cfsd_sub *sub)
{
	uint64_t gap_first = 0, gap_last = 0;

	if (sub->cursor < R.first) {
		gap_first = sub->cursor;
		gap_last = R.first - 1;
		sub->cursor = R.first;
	} else if (R.head - sub->cursor + 1 > cfsd.cfg.sub_queue) {
		gap_first = sub->cursor;
		gap_last = R.head;
		sub->cursor = R.head + 1;
	}
	cfs_buf_truncate(&S.b, 0);
	if (gap_first) {
		cfs_buf_hdr(&S.b, CFS_OP_GAP, 0, 0);
		cfs_buf_u64(&S.b, CFS_T_SEQNUM, gap_first);
		cfs_buf_u64(&S.b, CFS_T_SEQNUM_LAST, gap_last);
		return true;
	}
	cfs_buf_hdr(&S.b, CFS_OP_EVENTS, 0, 0);
	return take_events(&S.b, &sub->cursor, R.head) > 0;
}

/**
 * cfsd_events_send() - the loop: send @c's subscription what it has not
 * had yet, while its socket takes it.  Replies waiting in its output
 * queue go first: then nothing is sent here, the queue's flush calls
 * again.
 */
void cfsd_events_send(struct cfsd_conn *c)
{
	struct cfsd_sub *sub = c->sub;

	pthread_mutex_lock(&c->olock);
	while (!__atomic_load_n(&c->dead, __ATOMIC_SEQ_CST) && !c->out_head) {
		uint64_t cursor = sub->cursor;
		bool any;
		ssize_t n;

		pthread_mutex_lock(&R.lock);
		if (sub->cursor > R.head) {
			pthread_mutex_unlock(&R.lock);
			break;
		}
		any = next_message(sub);
		pthread_mutex_unlock(&R.lock);
		if (!any)
			continue;	/* holes only: the cursor moved past them */
		cfs_buf_seal(&S.b);
		if (S.b.err) {
			log_err("cannot encode events for pid %d: %s", (int)c->pid,
				strerror(-S.b.err));
			break;
		}
		do
			n = send(c->fd, S.b.p, S.b.len, MSG_NOSIGNAL | MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			/* full: the same range (or a gap) when it has room; else it is gone */
			sub->cursor = cursor;
			sub->blocked = errno == EAGAIN;
			break;
		}
	}
	pthread_mutex_unlock(&c->olock);
}

/** cfsd_events_start() - the loop: @c's subscription starts at SEQNUM @from */
void cfsd_events_start(struct cfsd_conn *c, uint64_t from)
{
	struct cfsd_sub *sub = calloc(1, sizeof(*sub));

	if (!sub) {
		/* its SUBSCRIBE was answered: the client learns of the loss by a gap */
		log_err("out of memory starting the subscription of pid %d", (int)c->pid);
		return;
	}
	sub->c = c;
	sub->cursor = from;
	cfs_list_add(&sub->link, &S.subs);
	c->sub = sub;
	__atomic_fetch_add(&R.nsubs, 1, __ATOMIC_SEQ_CST);
}

/** cfsd_events_stop() - the loop: @c ended; its subscription with it */
void cfsd_events_stop(struct cfsd_conn *c)
{
	struct cfsd_sub *sub = c->sub;

	if (!sub)
		return;
	cfs_list_del(&sub->link);
	free(sub);
	c->sub = NULL;
	__atomic_fetch_sub(&R.nsubs, 1, __ATOMIC_SEQ_CST);
}

/* the loop: every subscriber gets what came */
static void events_fanout(void)
{
	/* cleared first: an event stored after the head is read wakes the loop */
	S.armed = false;
	__atomic_store_n(&R.armed, false, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&R.lock);
	S.sent_head = R.head;
	pthread_mutex_unlock(&R.lock);
	struct cfs_list *pos, *next;

	cfs_list_for_each_safe(pos, next, &S.subs) {
		struct cfsd_sub *sub = cfs_list_entry(pos, struct cfsd_sub, link);

		if (!sub->blocked)
			cfsd_events_send(sub->c);
	}
}

/** cfsd_events_writable() - the loop: @c's socket has room again (EPOLLOUT) */
void cfsd_events_writable(struct cfsd_conn *c)
{
	if (c->sub)
		c->sub->blocked = false;
}

/*
 * the loop was woken: events came maybe.  Few wait LINGER_NS for more,
 * so that one message and one wakeup of each subscriber carry many.
 */
static void events_notified(void)
{
	struct itimerspec its = { .it_value = { .tv_nsec = LINGER_NS } };
	uint64_t head;

	pthread_mutex_lock(&R.lock);
	head = R.head;
	pthread_mutex_unlock(&R.lock);
	if (head == S.sent_head || cfs_list_empty(&S.subs)) {
		S.sent_head = head;
		return;
	}
	if (head - S.sent_head >= LINGER_EVENTS || !__atomic_load_n(&R.busy, __ATOMIC_SEQ_CST)) {
		events_fanout();
		return;
	}
	if (S.armed)
		return;
	if (timerfd_settime(S.timer.fd, 0, &its, NULL) == 0) {
		S.armed = true;
		__atomic_store_n(&R.armed, true, __ATOMIC_SEQ_CST);
	} else {
		events_fanout();
	}
}

/**
 * cfsd_events_busy() - any thread: a request that may make events starts
 * (@busy true) or ends (false).  When the last one ends, the loop is woken
 * to send what a lingering fan-out holds back: no more is coming.
 */
void cfsd_events_busy(bool busy)
{
	if (busy)
		__atomic_fetch_add(&R.busy, 1, __ATOMIC_SEQ_CST);
	else if (__atomic_fetch_sub(&R.busy, 1, __ATOMIC_SEQ_CST) == 1 && __atomic_load_n(&R.nsubs, __ATOMIC_SEQ_CST))
		events_wake();
}

/* the loop: the wake eventfd (events came) */
static void wake_dispatch(struct cfsd_source *s, uint32_t revents)
{
	uint64_t v;

	(void)revents;
	/* read, then clear: a wake that finds the flag set is covered by what follows */
	if (read(s->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_err("event ring wake: %m");
	__atomic_store_n(&S.woken, false, __ATOMIC_SEQ_CST);
	events_notified();
}

/* the loop: the linger is over */
static void timer_dispatch(struct cfsd_source *s, uint32_t revents)
{
	uint64_t v;

	(void)revents;
	if (read(s->fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
		log_err("event timer: %m");
	events_fanout();
}

int cfsd_subscribe(struct cfsd_conn *c, uint32_t serial, uint64_t from)
{
	struct cfs_buf b;
	uint64_t head, cursor;
	int sz, r;

	if (c->subscribed)
		return -EBUSY;
	/*
	 * The socket's own buffer is part of the subscriber's queue: fix it
	 * (4 messages) rather than inherit the system's default, so the lag
	 * allowed before a gap notice is what --subscriber-queue says.
	 */
	sz = (int)(4 * cfsd.cfg.max_msg);
	if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) < 0)
		log_debug("SO_SNDBUF: %m");
	pthread_mutex_lock(&R.lock);
	head = R.head;
	cursor = from ? from : R.head + 1;
	if (!cursor)
		cursor = 1;
	pthread_mutex_unlock(&R.lock);

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLY, serial, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, 0);
	cfs_buf_str(&b, CFS_T_MESSAGE, "ok");
	cfs_buf_u64(&b, CFS_T_SEQNUM, head);
	r = cfsd_conn_send(c, &b);
	cfs_buf_free(&b);
	if (r < 0)
		return r;
	/* the loop starts it, after the reply: events go behind what was queued */
	pthread_mutex_lock(&c->olock);
	c->sub_from = cursor;
	pthread_mutex_unlock(&c->olock);
	c->subscribed = true;
	cfsd_conn_kick(c);
	return 1;	/* replied */
}

/* a REPLAY streaming its range (the connection's stream; its olock) */
struct replay {
	uint32_t serial;
	uint64_t cursor;	/* next SEQNUM to send */
	uint64_t last;		/* last SEQNUM to send: the range's end, or the head when it started */
	uint64_t count;		/* events sent */
	uint64_t first;		/* the range asked for, for the message of an empty replay */
	uint64_t asked_last;
};

/*
 * The next message of a replay: the part of the range that left the ring
 * (REPLY+MORE with SEQNUM and SEQNUM_LAST, as a subscriber's GAP), as
 * many events as fit (REPLY+MORE with EVENT fields), or the final REPLY
 * with COUNT (-ENOENT when no event of the range was sent).
 */
static bool replay_next(struct cfsd_conn *c, struct cfs_buf *b, void *data)
{
	struct replay *rp = data;
	uint64_t ring_first, ring_head;
	char msg[160];

	(void)c;
	pthread_mutex_lock(&R.lock);
	if (rp->cursor <= rp->last && rp->cursor < R.first) {
		uint64_t gap_last = R.first - 1 < rp->last ? R.first - 1 : rp->last;

		cfs_buf_hdr(b, CFS_OP_REPLY, rp->serial, CFS_F_MORE);
		cfs_buf_u64(b, CFS_T_SEQNUM, rp->cursor);
		cfs_buf_u64(b, CFS_T_SEQNUM_LAST, gap_last);
		rp->cursor = gap_last + 1;
		pthread_mutex_unlock(&R.lock);
		return true;
	}
	if (rp->cursor <= rp->last) {
		unsigned int n;

		cfs_buf_hdr(b, CFS_OP_REPLY, rp->serial, CFS_F_MORE);
		n = take_events(b, &rp->cursor, rp->last);
		rp->count += n;
		if (n) {
			pthread_mutex_unlock(&R.lock);
			return true;
		}
		/* holes only, to the end of the range: the final reply follows */
		cfs_buf_truncate(b, 0);
	}
	ring_first = R.first;
	ring_head = R.head;
	pthread_mutex_unlock(&R.lock);
	cfs_buf_hdr(b, CFS_OP_REPLY, rp->serial, 0);
	if (!rp->count) {
		snprintf(msg, sizeof(msg),
			 "none of SEQNUM %llu-%llu is in the replay ring (it holds %llu-%llu)",
			 (unsigned long long)rp->first, (unsigned long long)rp->asked_last,
			 (unsigned long long)ring_first, (unsigned long long)ring_head);
		cfs_buf_i32(b, CFS_T_ERROR, -ENOENT);
		cfs_buf_str(b, CFS_T_MESSAGE, msg);
		return false;
	}
	cfs_buf_i32(b, CFS_T_ERROR, 0);
	cfs_buf_str(b, CFS_T_MESSAGE, "ok");
	cfs_buf_u64(b, CFS_T_COUNT, rp->count);
	return false;
}

static const struct cfsd_stream_ops replay_ops = {
	.next = replay_next,
	.free = free,
};

/**
 * cfsd_replay() - REPLAY @first..@last on @c: a stream of the ring's
 * events of the range that existed when it started, made as the client
 * reads it (the loop refills it while @c's output is under its bound),
 * so unread replays cost the daemon no more than its bound.
 * Return: 1 (the stream replies), or -errno with @msg set.
 */
int cfsd_replay(struct cfsd_conn *c, uint32_t serial, uint64_t first, uint64_t last, char *msg,
		size_t msgsz)
{
	uint64_t ring_first, ring_head;
	struct replay *rp;

	if (first > last || first == 0) {
		snprintf(msg, msgsz, "bad SEQNUM range %llu-%llu", (unsigned long long)first,
			 (unsigned long long)last);
		return -EINVAL;
	}
	pthread_mutex_lock(&R.lock);
	ring_first = R.first;
	ring_head = R.head;
	pthread_mutex_unlock(&R.lock);
	if (!ring_head || last < ring_first || first > ring_head) {
		snprintf(msg, msgsz, "none of SEQNUM %llu-%llu is in the replay ring (it holds %llu-%llu)",
			 (unsigned long long)first, (unsigned long long)last,
			 (unsigned long long)ring_first, (unsigned long long)ring_head);
		return -ENOENT;
	}
	rp = malloc(sizeof(*rp));
	if (!rp)
		return -ENOMEM;
	*rp = (struct replay){
		.serial = serial,
		.cursor = first,
		.last = last < ring_head ? last : ring_head,
		.first = first,
		.asked_last = last,
	};
	cfsd_conn_stream(c, serial, &replay_ops, rp);
	return 1;	/* replied: the stream's final REPLY */
}

int cfsd_events_init(void)
{
	size_t size = 1;
	int id, r;

	while (size < cfsd.cfg.ring_size)
		size <<= 1;
	R.size = size;
	R.slots = calloc(size, sizeof(*R.slots));
	if (!R.slots)
		return -ENOMEM;
	cfs_buf_init(&S.b);
	S.timer = (struct cfsd_source){
		.fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC),
		.events = EPOLLIN,
		.dispatch = timer_dispatch,
	};
	S.wake = (struct cfsd_source){
		.fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK),
		.events = EPOLLIN,
		.dispatch = wake_dispatch,
	};
	if (S.timer.fd < 0 || S.wake.fd < 0)
		return -errno;
	r = cfsd_source_add(&S.timer);
	if (r == 0)
		r = cfsd_source_add(&S.wake);
	if (r < 0)
		return r;
	cfsd.netlink_fd = -1;
	if (cfsd.cfg.netlink) {
		cfsd.netlink_fd = classfs_netlink_udev_open();
		if (cfsd.netlink_fd < 0) {
			log_err("cannot open the udev netlink socket: %s", strerror(-cfsd.netlink_fd));
			return cfsd.netlink_fd;
		}
		log_info("broadcasting events in udev format on NETLINK_KOBJECT_UEVENT group 2");
	}
	id = classfs_listener_add(cfsd.tree, on_event, NULL);
	if (id < 0)
		return id;
	R.listener = id;
	return 0;
}

void cfsd_events_shutdown(void)
{
	if (R.listener > 0)
		classfs_listener_remove(cfsd.tree, R.listener);
	R.listener = 0;
	for (size_t i = 0; i < R.size; i++)
		free(R.slots[i].data);
	free(R.slots);
	R.slots = NULL;
	cfs_buf_free(&S.b);
	/* the listener is gone: nothing writes the eventfd any more */
	if (S.timer.fd >= 0)
		close(S.timer.fd);
	if (S.wake.fd >= 0)
		close(S.wake.fd);
	S.timer.fd = S.wake.fd = -1;
	if (cfsd.netlink_fd >= 0)
		close(cfsd.netlink_fd);
	cfsd.netlink_fd = -1;
}

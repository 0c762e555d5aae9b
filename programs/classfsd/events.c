// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * events.c - event fan-out: one shared ring of encoded events (the replay
 * ring), each subscriber a cursor into it with a sender thread of its own,
 * and the opt-in udev netlink broadcast.
 *
 * The tree's listener only copies the event into the ring: it never waits
 * for a subscriber.  A sender takes as many events as fit in one message
 * from its cursor; one that has fallen more than its queue allows behind
 * the head (or whose next events were overwritten) is sent a GAP notice
 * naming the range it missed and continues from the head; the client may
 * fetch the range with REPLAY while the ring still holds it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#if __has_include(<classfs/wire.h>)
#include <classfs/wire.h>
#define HAVE_WIRE 1
#endif

#include "daemon.h"

/* a sender with fewer events than this waits LINGER_NS for more */
#define LINGER_EVENTS 64
#define LINGER_NS (500 * 1000L)

struct slot {
	uint64_t seq;		/* 0: empty */
	uint32_t len;
	uint32_t cap;
	uint8_t *data;		/* the encoded CFS_T_EVENT field, header included */
};

struct cfsd_sub {
	struct cfsd_conn *c;
	uint64_t cursor;	/* next SEQNUM to send */
	bool closing;
	pthread_t thread;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct slot *slots;
	size_t size;		/* a power of two */
	uint64_t head;		/* last SEQNUM stored, 0 when none */
	uint64_t first;		/* oldest SEQNUM still stored */
	unsigned int waiters;
	int listener;
} R = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* encode @ev as a CFS_T_EVENT field straight into @s (under R.lock) */
static int slot_fill(struct slot *s, const struct classfs_uevent *ev)
{
	uint32_t payload = 16, envc = (uint32_t)ev->envc, action = (uint32_t)ev->action;
	uint16_t tag = CFS_T_EVENT, zero = 0;
	uint8_t *p;

	for (int i = 0; i < ev->envc; i++)
		payload += (uint32_t)strlen(ev->envp[i]) + 1;
	if (payload + CFS_FIELD_HDR_SIZE > s->cap) {
		uint32_t cap = (payload + CFS_FIELD_HDR_SIZE + 255) & ~255u;
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

#ifdef HAVE_WIRE
	if (cfsd.netlink_fd >= 0) {
		int r = classfs_netlink_udev_send(cfsd.netlink_fd, ev);

		if (r < 0)
			log_debug("netlink send of SEQNUM %llu: %s", (unsigned long long)ev->seqnum,
				  strerror(-r));
	}
#endif
	if (ev->envc <= 0 || (size_t)ev->envc > CFS_EVENT_VARS_MAX)
		return;
	pthread_mutex_lock(&R.lock);
	s = &R.slots[ev->seqnum & (R.size - 1)];
	if (slot_fill(s, ev) < 0) {
		s->seq = 0;	/* a hole: subscribers skip it */
		log_err("out of memory storing event %llu", (unsigned long long)ev->seqnum);
	}
	R.head = ev->seqnum;
	if (!R.first)
		R.first = ev->seqnum;
	if (ev->seqnum >= R.size && R.first < ev->seqnum - R.size + 1)
		R.first = ev->seqnum - R.size + 1;
	if (R.waiters)
		pthread_cond_broadcast(&R.cond);
	pthread_mutex_unlock(&R.lock);
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

static void *sender_main(void *arg)
{
	struct cfsd_sub *sub = arg;
	struct cfs_buf b;

	cfs_buf_init(&b);
	pthread_mutex_lock(&R.lock);
	for (;;) {
		uint64_t gap_first = 0, gap_last = 0;
		unsigned int n = 0;

		while (!sub->closing && sub->cursor > R.head) {
			R.waiters++;
			pthread_cond_wait(&R.cond, &R.lock);
			R.waiters--;
		}
		if (sub->closing)
			break;
		if (R.head - sub->cursor + 1 < LINGER_EVENTS) {
			/*
			 * Few events: let more come (a bulk add produces them one at
			 * a time) so that one message and one wakeup carry many.
			 */
			pthread_mutex_unlock(&R.lock);
			nanosleep(&(struct timespec){ .tv_nsec = LINGER_NS }, NULL);
			pthread_mutex_lock(&R.lock);
			if (sub->closing)
				break;
		}
		if (sub->cursor < R.first) {
			gap_first = sub->cursor;
			gap_last = R.first - 1;
			sub->cursor = R.first;
		} else if (R.head - sub->cursor + 1 > cfsd.cfg.sub_queue) {
			gap_first = sub->cursor;
			gap_last = R.head;
			sub->cursor = R.head + 1;
		}
		cfs_buf_truncate(&b, 0);
		if (gap_first) {
			cfs_buf_hdr(&b, CFS_OP_GAP, 0, 0);
			cfs_buf_u64(&b, CFS_T_SEQNUM, gap_first);
			cfs_buf_u64(&b, CFS_T_SEQNUM_LAST, gap_last);
		} else {
			cfs_buf_hdr(&b, CFS_OP_EVENTS, 0, 0);
			n = take_events(&b, &sub->cursor, R.head);
		}
		pthread_mutex_unlock(&R.lock);
		if ((gap_first || n) && cfsd_conn_send(sub->c, &b, false) < 0) {
			pthread_mutex_lock(&R.lock);
			break;	/* gone: the reader cleans up */
		}
		pthread_mutex_lock(&R.lock);
	}
	pthread_mutex_unlock(&R.lock);
	cfs_buf_free(&b);
	return NULL;
}

int cfsd_subscribe(struct cfsd_conn *c, uint32_t serial, uint64_t from)
{
	struct cfsd_sub *sub;
	struct cfs_buf b;
	uint64_t head;
	int r;

	if (c->sub)
		return -EBUSY;
	sub = calloc(1, sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	sub->c = c;
	/*
	 * The socket's own buffer is part of the subscriber's queue: fix it
	 * (4 messages) rather than inherit the system's default, so the lag
	 * allowed before a gap notice is what --subscriber-queue says.
	 */
	{
		int sz = (int)(4 * cfsd.cfg.max_msg);

		if (setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz)) < 0)
			log_debug("SO_SNDBUF: %m");
	}
	pthread_mutex_lock(&R.lock);
	head = R.head;
	sub->cursor = from ? from : R.head + 1;
	if (!sub->cursor)
		sub->cursor = 1;
	pthread_mutex_unlock(&R.lock);

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLY, serial, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, 0);
	cfs_buf_str(&b, CFS_T_MESSAGE, "ok");
	cfs_buf_u64(&b, CFS_T_SEQNUM, head);
	r = cfsd_conn_send(c, &b, false);
	cfs_buf_free(&b);
	if (r == 0)
		r = -pthread_create(&sub->thread, NULL, sender_main, sub);
	if (r < 0) {
		free(sub);
		return r;
	}
	c->sub = sub;
	return 1;	/* replied */
}

void cfsd_unsubscribe(struct cfsd_conn *c)
{
	struct cfsd_sub *sub = c->sub;

	if (!sub)
		return;
	pthread_mutex_lock(&R.lock);
	sub->closing = true;
	pthread_cond_broadcast(&R.cond);
	pthread_mutex_unlock(&R.lock);
	/* a sender blocked on a full socket: the peer is gone or going */
	shutdown(c->fd, SHUT_WR);
	pthread_join(sub->thread, NULL);
	free(sub);
	c->sub = NULL;
}

int cfsd_replay(struct cfsd_conn *c, uint32_t serial, uint64_t first, uint64_t last, char *msg,
		size_t msgsz)
{
	struct cfs_buf b;
	uint64_t cursor, count = 0, ring_first, ring_head;
	int r = 0;

	if (first > last || first == 0) {
		snprintf(msg, msgsz, "bad SEQNUM range %llu-%llu", (unsigned long long)first,
			 (unsigned long long)last);
		return -EINVAL;
	}
	cfs_buf_init(&b);
	pthread_mutex_lock(&R.lock);
	ring_first = R.first;
	ring_head = R.head;
	cursor = first < R.first ? R.first : first;
	while (R.head && cursor <= last && cursor <= R.head && r == 0) {
		unsigned int n;

		if (cursor < R.first)
			cursor = R.first;	/* overwritten while we sent */
		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_REPLY, serial, CFS_F_MORE);
		n = take_events(&b, &cursor, last < R.head ? last : R.head);
		pthread_mutex_unlock(&R.lock);
		if (n)
			r = cfsd_conn_send(c, &b, false);
		count += n;
		pthread_mutex_lock(&R.lock);
	}
	pthread_mutex_unlock(&R.lock);
	if (r < 0) {
		cfs_buf_free(&b);
		return r;
	}
	if (!count) {
		cfs_buf_free(&b);
		snprintf(msg, msgsz, "none of SEQNUM %llu-%llu is in the replay ring (it holds %llu-%llu)",
			 (unsigned long long)first, (unsigned long long)last,
			 (unsigned long long)ring_first, (unsigned long long)ring_head);
		return -ENOENT;
	}
	cfs_buf_truncate(&b, 0);
	cfs_buf_hdr(&b, CFS_OP_REPLY, serial, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, 0);
	cfs_buf_str(&b, CFS_T_MESSAGE, "ok");
	cfs_buf_u64(&b, CFS_T_COUNT, count);
	r = cfsd_conn_send(c, &b, false);
	cfs_buf_free(&b);
	return r < 0 ? r : 1;
}

int cfsd_events_init(void)
{
	size_t size = 1;
	int id;

	while (size < cfsd.cfg.ring_size)
		size <<= 1;
	R.size = size;
	R.slots = calloc(size, sizeof(*R.slots));
	if (!R.slots)
		return -ENOMEM;
	cfsd.netlink_fd = -1;
	if (cfsd.cfg.netlink) {
#ifdef HAVE_WIRE
		cfsd.netlink_fd = classfs_netlink_udev_open();
		if (cfsd.netlink_fd < 0) {
			log_err("cannot open the udev netlink socket: %s", strerror(-cfsd.netlink_fd));
			return cfsd.netlink_fd;
		}
		log_info("broadcasting events in udev format on NETLINK_KOBJECT_UEVENT group 2");
#else
		log_err("--netlink: built without the wire formats");
		return -ENOSYS;
#endif
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
	if (cfsd.netlink_fd >= 0)
		close(cfsd.netlink_fd);
	cfsd.netlink_fd = -1;
}

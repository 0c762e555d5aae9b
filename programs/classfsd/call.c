// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * call.c - remote show()/store() calls: a CALL sent to the publisher that
 * serves the attribute, and its CALL_REPLY, a timeout or the publisher's
 * end, whichever comes first.
 *
 * Every call in progress is on one list in deadline order (the timeout is
 * the same for all, so that is the order they were made in).  Whoever
 * unlinks a call finishes it, exactly once: the event loop when
 * the answer comes, the timer thread at the deadline, the loop again
 * when the publisher goes, or the caller itself when the timer is missing.
 *
 * A call made from a read or write that can be answered later (the FUSE
 * view's, see classfs_defer()) does not wait: the answer goes to the
 * request's reply from whichever thread finishes the call, and the FUSE
 * thread is free at once.  A publisher that never answers therefore holds
 * no thread of the mount, however many readers wait on it.  Other callers
 * (classctl get through the socket, the path API) wait for the answer.
 *
 * An answer's error goes through classfs_io_error(): a publisher decides
 * what its attribute's readers are told, within the errnos a read or a
 * write may end with, and anything else is EIO.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"

struct call {
	struct cfs_list link;		/* in calls: those in progress, by deadline (calls_lock) */
	bool listed;
	struct cfsd_conn *c;			/* a reference */
	uint64_t id;
	unsigned int kind;
	struct timespec deadline;	/* CLOCK_MONOTONIC */
	struct classfs_reply *reply;	/* answered later: where the answer goes */
	/* a waiting caller's answer (calls_lock) */
	char *buf;
	ssize_t result;
	bool done;
	char what[192];			/* "show of block/sda/size by pid 42", for the log */
};

static pthread_once_t calls_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t timer_cond;	/* the first deadline moved */
static pthread_cond_t answer_cond;	/* a waiting caller's call finished */
static struct cfs_list calls = CFS_LIST_INIT(calls);
static uint64_t next_id;
static bool timer_running;

static bool deadline_passed(const struct timespec *ts)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > ts->tv_sec || (now.tv_sec == ts->tv_sec && now.tv_nsec >= ts->tv_nsec);
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

static void link_locked(struct call *k)
{
	cfs_list_add_tail(&k->link, &calls);
	k->listed = true;
	if (calls.next == &k->link)
		pthread_cond_signal(&timer_cond);
}

static void unlink_locked(struct call *k)
{
	cfs_list_del(&k->link);
	k->listed = false;
}

/* under calls_lock: unlink @c's call @id; NULL when it is no longer in progress */
static struct call *find_unlink_locked(const struct cfsd_conn *c, uint64_t id)
{
	struct cfs_list *pos, *next;

	cfs_list_for_each_safe(pos, next, &calls) {
		struct call *k = cfs_list_entry(pos, struct call, link);

		if (k->c == c && k->id == id) {
			unlink_locked(k);
			return k;
		}
	}
	return NULL;
}

/*
 * the end of an unlinked call: @r bytes of value at @value (a show()),
 * a count (a store()) or -errno.  Called with no lock held.
 */
static void finish(struct call *k, ssize_t r, const void *value)
{
	if (k->reply) {
		k->reply->done(k->reply, r, r >= 0 && k->kind == CFS_CALL_SHOW ? value : NULL);
		cfsd_conn_put(k->c);
		free(k);
		return;
	}
	pthread_mutex_lock(&calls_lock);
	if (r > 0 && k->kind == CFS_CALL_SHOW)
		memcpy(k->buf, value, (size_t)r);
	k->result = r;
	k->done = true;
	pthread_cond_broadcast(&answer_cond);
	pthread_mutex_unlock(&calls_lock);
}

static void timed_out(struct call *k)
{
	log_warn("remote %s: no answer within %d ms", k->what, cfsd.cfg.call_timeout_ms);
	finish(k, -EIO, NULL);
}

/* ends the calls whose deadline passed, for as long as the daemon runs */
static void *timer_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&calls_lock);
	for (;;) {
		struct call *k = cfs_list_empty(&calls) ? NULL :
				 cfs_list_entry(calls.next, struct call, link);

		if (!k) {
			pthread_cond_wait(&timer_cond, &calls_lock);
		} else if (!deadline_passed(&k->deadline)) {
			pthread_cond_timedwait(&timer_cond, &calls_lock, &k->deadline);
		} else {
			unlink_locked(k);
			pthread_mutex_unlock(&calls_lock);
			timed_out(k);
			pthread_mutex_lock(&calls_lock);
		}
	}
	return NULL;
}

static void calls_init(void)
{
	pthread_condattr_t ca;
	pthread_attr_t attr;
	pthread_t t;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&timer_cond, &ca);
	pthread_cond_init(&answer_cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	timer_running = pthread_create(&t, &attr, timer_main, NULL) == 0;
	pthread_attr_destroy(&attr);
	if (!timer_running)
		log_err("no timer thread for remote calls: their readers wait for them");
}

/* the CALL message of @k */
static int encode(struct cfs_buf *b, const struct call *k, const struct cfsd_rattr *ra, const char *in,
		  size_t count)
{
	cfs_buf_init(b);
	cfs_buf_hdr(b, CFS_OP_CALL, 0, 0);
	cfs_buf_u64(b, CFS_T_CALL_ID, k->id);
	cfs_buf_u32(b, CFS_T_CALL_KIND, k->kind);
	cfs_buf_str(b, CFS_T_CLASS, ra->d->cls_name);
	/* the name as of now (a rename replaces it under the value lock) */
	pthread_mutex_lock(&cfsd.vlock);
	cfs_buf_str(b, CFS_T_NAME, ra->d->name);
	pthread_mutex_unlock(&cfsd.vlock);
	cfs_buf_str(b, CFS_T_ATTR_NAME, ra->path);
	if (k->kind == CFS_CALL_STORE)
		cfs_buf_bytes(b, CFS_T_VALUE, in, count);
	cfs_buf_seal(b);
	return b->err;
}

/* the caller's own wait: the answer, or its deadline when no timer ends it */
static ssize_t wait_answer(struct call *k)
{
	ssize_t r;

	pthread_mutex_lock(&calls_lock);
	while (!k->done) {
		if (pthread_cond_timedwait(&answer_cond, &calls_lock, &k->deadline) == ETIMEDOUT &&
		    k->listed) {
			unlink_locked(k);
			pthread_mutex_unlock(&calls_lock);
			timed_out(k);
			pthread_mutex_lock(&calls_lock);
		}
	}
	r = k->result;
	pthread_mutex_unlock(&calls_lock);
	return r;
}

/**
 * cfsd_remote_call() - run @ra's show() (@kind CFS_CALL_SHOW, the value
 * into @buf) or store() (CFS_CALL_STORE, @count bytes at @in) in the
 * publisher at the other end of @c.  Called from the attribute's
 * show()/store(): when its caller can be answered later (classfs_defer()),
 * the call is sent and -CLASSFS_DEFERRED returned at once.
 * Return: the value's length, the bytes consumed, -CLASSFS_DEFERRED, or
 * -errno (-EIO: no answer within the call timeout, or the publisher gone).
 */
ssize_t cfsd_remote_call(struct cfsd_conn *c, struct cfsd_rattr *ra, unsigned int kind, char *buf,
			 const char *in, size_t count)
{
	struct call *k = NULL, stack_call;
	struct cfs_buf b;
	bool later;
	ssize_t r;
	int e;

	cfsd_assert_not_held();		/* it may wait up to the call timeout */
	pthread_once(&calls_once, calls_init);
	if (timer_running && (k = malloc(sizeof(*k)))) {
		*k = (struct call){ .reply = classfs_defer() };
		if (!k->reply) {
			free(k);
			k = NULL;
		}
	}
	if (!k) {
		k = &stack_call;
		*k = (struct call){ .buf = buf };
	}
	later = k->reply != NULL;
	k->kind = kind;
	k->c = cfsd_conn_get(c);
	/* the name, not the registry key: a rename replaces the key without cfsd.vlock */
	pthread_mutex_lock(&cfsd.vlock);
	snprintf(k->what, sizeof(k->what), "%s of %s%s%s/%s by pid %d",
		 kind == CFS_CALL_SHOW ? "show" : "store", ra->d->cls_name ? ra->d->cls_name : "",
		 ra->d->cls_name ? "/" : "", ra->d->name, ra->path, (int)c->pid);
	pthread_mutex_unlock(&cfsd.vlock);

	pthread_mutex_lock(&calls_lock);
	e = __atomic_load_n(&c->dead, __ATOMIC_SEQ_CST) ? -EIO : 0;
	if (!e) {
		k->id = ++next_id;
		deadline_in(&k->deadline, cfsd.cfg.call_timeout_ms);
		link_locked(k);
	}
	pthread_mutex_unlock(&calls_lock);

	if (!e) {
		e = encode(&b, k, ra, in, count);
		if (!e)
			e = cfsd_conn_post(c, &b, k->id);
		cfs_buf_free(&b);
		if (e) {
			/* not sent: end it here unless something else already did */
			pthread_mutex_lock(&calls_lock);
			if (!k->listed)
				e = 0;
			else
				unlink_locked(k);
			pthread_mutex_unlock(&calls_lock);
		}
	}
	if (later) {
		/* once listed, @k is its finisher's to free: touched here only if unlinked */
		if (e)
			finish(k, -EIO, NULL);
		return -CLASSFS_DEFERRED;
	}
	r = e ? -EIO : wait_answer(k);
	cfsd_conn_put(k->c);
	return r;
}

/**
 * cfsd_call_reply() - a CALL_REPLY read from @c (@len bytes at @msg), by
 * the event loop: the call it answers ends with it.  One that answers no call
 * in progress (late, or never made) is dropped; a malformed one is
 * answered with the decoding error.
 */
void cfsd_call_reply(struct cfsd_conn *c, const uint8_t *msg, size_t len)
{
	struct cfs_msg m;
	struct call *k;
	ssize_t r;

	r = cfs_msg_decode(msg, len, &m);
	if (r < 0) {
		/* a malformed answer: its call times out; the sender is told */
		struct cfs_buf b;

		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_REPLY, m.serial, 0);
		cfs_buf_i32(&b, CFS_T_ERROR, (int32_t)r);
		cfs_buf_str(&b, CFS_T_MESSAGE, cfs_msg_error_text((int)r));
		cfsd_conn_send(c, &b);
		cfs_buf_free(&b);
		return;
	}
	pthread_mutex_lock(&calls_lock);
	k = find_unlink_locked(c, m.call_id);
	pthread_mutex_unlock(&calls_lock);
	if (!k)
		return;
	if (m.error) {
		r = classfs_io_error(m.error);
	} else if (k->kind == CFS_CALL_SHOW) {
		r = (ssize_t)m.value_len;	/* at most CFS_VALUE_MAX, the page's size */
	} else {
		uint32_t consumed = 0;

		if (m.value_len == 4)
			memcpy(&consumed, m.value, 4);
		r = consumed;
	}
	finish(k, r, m.value);
}

/** cfsd_call_failed() - @c's call @id could not be sent: it ends with -EIO */
void cfsd_call_failed(struct cfsd_conn *c, uint64_t id)
{
	struct call *k;

	pthread_mutex_lock(&calls_lock);
	k = find_unlink_locked(c, id);
	pthread_mutex_unlock(&calls_lock);
	if (k)
		finish(k, -EIO, NULL);
}

/**
 * cfsd_calls_fail() - @c is gone (dead already set): every call to it
 * ends with -EIO, and none is made to it any more.
 */
void cfsd_calls_fail(struct cfsd_conn *c)
{
	struct cfs_list gone = CFS_LIST_INIT(gone), *pos, *next;

	/* (no call made yet: the list is empty, nothing to set up for it) */
	pthread_mutex_lock(&calls_lock);
	cfs_list_for_each_safe(pos, next, &calls) {
		struct call *k = cfs_list_entry(pos, struct call, link);

		if (k->c != c)
			continue;
		unlink_locked(k);
		cfs_list_add_tail(&k->link, &gone);	/* unlisted: ours to finish */
	}
	pthread_mutex_unlock(&calls_lock);
	cfs_list_for_each_safe(pos, next, &gone)
		finish(cfs_list_entry(pos, struct call, link), -EIO, NULL);
}

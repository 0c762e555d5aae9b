// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * reply.c - answers to reads and writes: the errors the kernel takes,
 * and answers given after the request's handler returned (a read's, a
 * write's, or a getattr's taking a computed value's snapshot: snap.c).
 *
 * The kernel's FUSE refuses an error reply of -512 or below and leaves
 * the request unanswered: its reader sleeps in state D, deaf even to
 * SIGKILL, until the mount goes.  Every read and write error therefore
 * goes through classfs_io_error() first.
 *
 * A show()/store() that waits for someone else (a remote publisher) takes
 * the read's or write's offer (classfs_defer()) instead of holding one of
 * the loop's few threads.  The request is then listed here until exactly
 * one of these answers it, whichever comes first: the reply (done()), an
 * interrupt from the kernel (the reader got a signal: EINTR), or the
 * unmount (EIO).  Whoever claims the request (an atomic flag) answers it
 * and unlinks it, under dlock; a request stays listed until its claimer
 * unlinked it, so the unmount, which claims what is left and waits for the
 * list to empty, never frees the session under an answer being sent.
 * The reply object lives until both its producer (done()) and the list
 * have let go of it.
 */
#include "fuse-internal.h"

#include <stddef.h>

#define deferred_of(r) ((struct cfs_fuse_deferred *)((char *)(r) - offsetof(struct cfs_fuse_deferred, reply)))
#define offer_of(o) ((struct cfs_fuse_offer *)((char *)(o) - offsetof(struct cfs_fuse_offer, offer)))

struct cfs_fuse_deferred {
	struct classfs_reply reply;		/* what the show()/store() completes */
	struct cfs_fuse_deferred *prev, *next;	/* the mount's (dlock) */
	struct classfs_mount *m;
	fuse_req_t req;
	size_t size;
	off_t off;
	bool write;
	bool snap;				/* a getattr taking a snapshot: cs is its entry */
	struct classfs_stat cs;
	uint64_t ticket;			/* ... and ticket its place in line */
	bool claimed;				/* answered, or being answered (__atomic) */
	int refs;				/* the list's and the producer's (__atomic) */
};

/**
 * cfs_fuse_reply_io_err() - end a read or write with -errno @err: an
 * entry gone while open is ENODEV (as sysfs says), and anything the
 * kernel would refuse or a reader would misread is EIO.
 */
void cfs_fuse_reply_io_err(fuse_req_t req, long err)
{
	if (err == -ENOENT)
		err = -ENODEV;
	fuse_reply_err(req, -classfs_io_error(err));
}

/* the answer of @d's show()/store(): @r bytes of value at @page, a count, or -errno */
static void answer(struct cfs_fuse_deferred *d, ssize_t r, const char *page)
{
	if (d->snap) {
		cfs_fuse_snap_answer(d->m, d->req, &d->cs, d->ticket, r, page);
	} else if (r < 0) {
		cfs_fuse_reply_io_err(d->req, r);
	} else if (d->write) {
		fuse_reply_write(d->req, (size_t)r > d->size ? d->size : (size_t)r);
	} else {
		size_t len = (size_t)r > CLASSFS_ATTR_MAX ? CLASSFS_ATTR_MAX : (size_t)r;

		if (!page || d->off < 0 || (size_t)d->off >= len)
			len = 0;
		else
			len -= (size_t)d->off;
		fuse_reply_buf(d->req, len ? page + d->off : NULL, len > d->size ? d->size : len);
	}
}

static void put(struct cfs_fuse_deferred *d)
{
	if (__atomic_fetch_sub(&d->refs, 1, __ATOMIC_ACQ_REL) == 1)
		free(d);
}

static bool claim(struct cfs_fuse_deferred *d)
{
	return !__atomic_exchange_n(&d->claimed, true, __ATOMIC_ACQ_REL);
}

/* under dlock: off the list (its reference is the caller's to drop) */
static void unlink_locked(struct classfs_mount *m, struct cfs_fuse_deferred *d)
{
	if (d->prev)
		d->prev->next = d->next;
	else
		m->deferred = d->next;
	if (d->next)
		d->next->prev = d->prev;
	if (!m->deferred)
		pthread_cond_broadcast(&m->dempty);
}

static void done(struct classfs_reply *reply, ssize_t r, const char *page)
{
	struct cfs_fuse_deferred *d = deferred_of(reply);

	if (claim(d)) {
		/* still listed: the mount waits for it */
		struct classfs_mount *m = d->m;

		pthread_mutex_lock(&m->dlock);
		answer(d, r, page);
		unlink_locked(m, d);
		pthread_mutex_unlock(&m->dlock);
		put(d);
	}
	put(d);
}

/* the kernel's interrupt of a request (its reader got a signal), from the loop */
static void interrupted(fuse_req_t req, void *data)
{
	struct classfs_mount *m = data;
	struct cfs_fuse_deferred *d;

	pthread_mutex_lock(&m->dlock);
	for (d = m->deferred; d; d = d->next)
		if (d->req == req)
			break;
	if (d && claim(d)) {
		fuse_reply_err(req, EINTR);
		unlink_locked(m, d);
	} else {
		d = NULL;
	}
	pthread_mutex_unlock(&m->dlock);
	if (d)
		put(d);
}

static struct classfs_reply *take(struct classfs_reply_offer *offer)
{
	struct cfs_fuse_offer *o = offer_of(offer);
	struct classfs_mount *m = o->m;
	struct cfs_fuse_deferred *d = malloc(sizeof(*d));

	if (!d)
		return NULL;
	*d = (struct cfs_fuse_deferred){
		.reply.done = done, .m = m, .req = o->req, .size = o->size, .off = o->off,
		.write = o->write, .refs = 2,
	};
	if (o->snap) {
		d->snap = true;
		d->cs = *o->snap;
		d->ticket = o->ticket;
	}
	pthread_mutex_lock(&m->dlock);
	if (m->dstopping) {
		pthread_mutex_unlock(&m->dlock);
		free(d);
		return NULL;
	}
	d->next = m->deferred;
	if (d->next)
		d->next->prev = d;
	m->deferred = d;
	pthread_mutex_unlock(&m->dlock);
	/* runs interrupted() at once when the kernel interrupted it already */
	fuse_req_interrupt_func(o->req, interrupted, m);
	return &d->reply;
}

/**
 * cfs_fuse_offer_init() - an offer for the read (@write false) or write
 * @req of @size bytes at @off, to pass to classfs_read_offer() or
 * classfs_write_offer(); they return -CLASSFS_DEFERRED when it was taken,
 * and the request is then answered from here.
 */
void cfs_fuse_offer_init(struct cfs_fuse_offer *o, struct classfs_mount *m, fuse_req_t req,
			 size_t size, off_t off, bool write)
{
	*o = (struct cfs_fuse_offer){ .offer.take = take, .m = m, .req = req, .size = size,
				      .off = off, .write = write };
}

/**
 * cfs_fuse_deferred_abort() - answer every request still waiting with EIO
 * and take no more; returns once none is being answered.  Call after the
 * loop stopped and before the session goes.
 */
void cfs_fuse_deferred_abort(struct classfs_mount *m)
{
	pthread_mutex_lock(&m->dlock);
	m->dstopping = true;
	for (struct cfs_fuse_deferred *d = m->deferred, *next; d; d = next) {
		next = d->next;
		if (!claim(d))
			continue;	/* being answered: unlinked by its claimer */
		fuse_reply_err(d->req, EIO);
		unlink_locked(m, d);
		put(d);
	}
	while (m->deferred)
		pthread_cond_wait(&m->dempty, &m->dlock);
	pthread_mutex_unlock(&m->dlock);
}

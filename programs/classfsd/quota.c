// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * quota.c - what each uid holds in the daemon: connections, published
 * objects (classes and devices) and event subscriptions, each under a
 * per-uid limit (--max-connections-per-uid and the like).  Root is never
 * limited, so it is not counted either.
 *
 * The counts live under their own lock: connections are counted where
 * they are accepted, objects under cfsd.lock, subscriptions by the
 * request that subscribes; none of those paths calls back in here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "daemon.h"

struct uid_use {
	struct uid_use *next;
	uid_t uid;
	size_t n[CFSD_Q_COUNT];
};

static pthread_mutex_t quota_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uid_use *uses;	/* uids holding anything; few, so a list */

static const char *const what[CFSD_Q_COUNT] = {
	[CFSD_Q_CONN] = "connections",
	[CFSD_Q_OBJ] = "objects (classes and devices)",
	[CFSD_Q_SUB] = "event subscriptions",
};

static const char *const option[CFSD_Q_COUNT] = {
	[CFSD_Q_CONN] = "--max-connections-per-uid",
	[CFSD_Q_OBJ] = "--max-objects-per-uid",
	[CFSD_Q_SUB] = "--max-subscribers-per-uid",
};

static size_t limit_of(enum cfsd_quota q)
{
	switch (q) {
	case CFSD_Q_CONN: return cfsd.cfg.max_conns;
	case CFSD_Q_OBJ: return cfsd.cfg.max_objs;
	default: return cfsd.cfg.max_subs;
	}
}

/* the uid's entry, made when @create; under quota_lock */
static struct uid_use *use_of(uid_t uid, bool create)
{
	struct uid_use *u;

	for (u = uses; u; u = u->next)
		if (u->uid == uid)
			return u;
	if (!create || !(u = calloc(1, sizeof(*u))))
		return NULL;
	u->uid = uid;
	u->next = uses;
	uses = u;
	return u;
}

/* an entry that holds nothing goes; under quota_lock */
static void use_drop_empty(struct uid_use *u)
{
	for (int q = 0; q < CFSD_Q_COUNT; q++)
		if (u->n[q])
			return;
	for (struct uid_use **pp = &uses; *pp; pp = &(*pp)->next)
		if (*pp == u) {
			*pp = u->next;
			free(u);
			return;
		}
}

/**
 * cfsd_quota_charge() - count @n more of @q for @uid, within its limit
 * @uid: the uid that will hold them (root: never limited, not counted).
 * @q: what: connections, objects or subscriptions.
 * @n: how many.
 * @msg: receives why a refusal was made (may be NULL).
 * @msgsz: its size.
 *
 * Return: 0 (counted: undo with cfsd_quota_uncharge()), -EDQUOT (objects
 * over the limit), -EMFILE (connections or subscriptions over the
 * limit), -ENOMEM.  A refusal counts nothing.
 */
int cfsd_quota_charge(uid_t uid, enum cfsd_quota q, size_t n, char *msg, size_t msgsz)
{
	size_t limit = limit_of(q);
	struct uid_use *u;
	int r = 0;

	if (uid == 0 || n == 0)
		return 0;
	pthread_mutex_lock(&quota_lock);
	u = use_of(uid, true);
	if (!u) {
		r = -ENOMEM;
	} else if (u->n[q] + n > limit) {
		r = q == CFSD_Q_OBJ ? -EDQUOT : -EMFILE;
		if (msg)
			snprintf(msg, msgsz, "uid %u holds %zu %s: the limit is %zu (classfsd %s)",
				 (unsigned int)uid, u->n[q], what[q], limit, option[q]);
		use_drop_empty(u);
	} else {
		u->n[q] += n;
	}
	pthread_mutex_unlock(&quota_lock);
	return r;
}

/**
 * cfsd_quota_uncharge() - @n of @q that @uid held are gone
 * @uid: as charged.
 * @q: as charged.
 * @n: at most what was charged.
 */
void cfsd_quota_uncharge(uid_t uid, enum cfsd_quota q, size_t n)
{
	struct uid_use *u;

	if (uid == 0 || n == 0)
		return;
	pthread_mutex_lock(&quota_lock);
	u = use_of(uid, false);
	if (u) {
		u->n[q] = u->n[q] > n ? u->n[q] - n : 0;
		use_drop_empty(u);
	}
	pthread_mutex_unlock(&quota_lock);
}

/* at exit: every connection and object is gone; free what a miscount left */
void cfsd_quota_shutdown(void)
{
	pthread_mutex_lock(&quota_lock);
	while (uses) {
		struct uid_use *u = uses;

		uses = u->next;
		free(u);
	}
	pthread_mutex_unlock(&quota_lock);
}

/**
 * cfsd_quota_conn_admit() - count a new connection of @uid, or refuse it
 * @fd: the accepted socket; told why when refused.
 * @uid: its peer's uid.
 *
 * A refused client has sent nothing yet: it is told by a REPLY with
 * serial 0 carrying the error and the message, the first and last
 * message on the socket, which its library takes as the answer to its
 * first request (docs/protocol.md).
 * Return: 0 (undo with cfsd_quota_conn_end()), -EMFILE, -ENOMEM.
 */
int cfsd_quota_conn_admit(int fd, uid_t uid)
{
	char msg[256];
	struct cfs_buf b;
	int r;

	r = cfsd_quota_charge(uid, CFSD_Q_CONN, 1, msg, sizeof(msg));
	if (r != -EMFILE)
		return r;
	log_debug("refused a connection: %s", msg);	/* not one line per attempt by default */
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLY, 0, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, r);
	cfs_buf_str(&b, CFS_T_MESSAGE, msg);
	cfs_buf_seal(&b);
	if (!b.err && send(fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		log_debug("cannot tell the refused client: %m");
	cfs_buf_free(&b);
	return r;
}

/**
 * cfsd_quota_conn_end() - @c is gone: its connection and its
 * subscription no longer count
 */
void cfsd_quota_conn_end(struct cfsd_conn *c)
{
	if (c->sub_charged)
		cfsd_quota_uncharge(c->uid, CFSD_Q_SUB, 1);
	c->sub_charged = false;
	cfsd_quota_uncharge(c->uid, CFSD_Q_CONN, 1);
}

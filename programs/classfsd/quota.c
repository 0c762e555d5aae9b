// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * quota.c - what each uid holds in the daemon: connections, published
 * objects (classes and devices), event subscriptions, and the entries
 * (attributes) and value bytes stored in its devices, each under a
 * per-uid limit (--max-connections-per-uid and the like).  Root is never
 * limited, so it is not counted either.
 *
 * The counts live under their own lock: connections are counted where
 * they are accepted, objects under cfsd.lock, subscriptions by the
 * request that subscribes, entries and bytes where a device's values are
 * made or replaced; none of those paths calls back in here.  Entries and
 * bytes are the device owner's (whoever made them: only the owner and
 * root may), and each device keeps what it was charged (its
 * struct cfsd_charge), so that whatever removes the device gives back
 * exactly that.
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

__thread uid_t cfsd_quota_caller;

static pthread_mutex_t quota_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uid_use *uses;	/* uids holding anything; few, so a list */

static const char *const what[CFSD_Q_COUNT] = {
	[CFSD_Q_CONN] = "connections",
	[CFSD_Q_OBJ] = "objects (classes and devices)",
	[CFSD_Q_SUB] = "event subscriptions",
	[CFSD_Q_ENTRY] = "attributes in its devices",
	[CFSD_Q_BYTES] = "bytes of stored values",
};

static const char *const option[CFSD_Q_COUNT] = {
	[CFSD_Q_CONN] = "--max-connections-per-uid",
	[CFSD_Q_OBJ] = "--max-objects-per-uid",
	[CFSD_Q_SUB] = "--max-subscribers-per-uid",
	[CFSD_Q_ENTRY] = "--max-entries-per-uid",
	[CFSD_Q_BYTES] = "--max-bytes-per-uid",
};

static size_t limit_of(enum cfsd_quota q)
{
	switch (q) {
	case CFSD_Q_CONN: return cfsd.cfg.max_conns;
	case CFSD_Q_OBJ: return cfsd.cfg.max_objs;
	case CFSD_Q_ENTRY: return cfsd.cfg.max_entries;
	case CFSD_Q_BYTES: return cfsd.cfg.max_bytes;
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

/* -EDQUOT for what is stored, -EMFILE for what is open */
static int over_error(enum cfsd_quota q)
{
	return q == CFSD_Q_CONN || q == CFSD_Q_SUB ? -EMFILE : -EDQUOT;
}

/* may @u hold @n more of @q?  The message names the limit; under quota_lock */
static int room_locked(const struct uid_use *u, enum cfsd_quota q, size_t n, char *msg,
		       size_t msgsz)
{
	size_t limit = limit_of(q);

	if (u->n[q] + n <= limit && u->n[q] + n >= n)
		return 0;
	if (msg)
		snprintf(msg, msgsz, "uid %u holds %zu %s: the limit is %zu (classfsd %s)",
			 (unsigned int)u->uid, u->n[q], what[q], limit, option[q]);
	return over_error(q);
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
	struct uid_use *u;
	int r = 0;

	if (uid == 0 || n == 0)
		return 0;
	pthread_mutex_lock(&quota_lock);
	u = use_of(uid, true);
	if (!u) {
		r = -ENOMEM;
	} else if ((r = room_locked(u, q, n, msg, msgsz)) < 0) {
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

/**
 * cfsd_quota_dev_charge() - @rd's owner holds @entries more attributes
 * and @bytes more value bytes in it (fewer when negative)
 * @rd: the device, referenced by the caller.
 * @entries: attributes made (> 0) or gone (< 0).
 * @bytes: value bytes stored (> 0) or freed (< 0).
 * @msg: receives why a refusal was made (may be NULL).
 * @msgsz: its size.
 *
 * A growth is checked before anything is counted: on -EDQUOT neither
 * the entries nor the bytes are.  A change made for root
 * (cfsd_quota_caller 0: a root request, the mount) is counted but never
 * refused: root has no limit, and what it put in another uid's device
 * goes with that device.  A decrease never takes more than the
 * device was charged.
 * Return: 0, -EDQUOT (over the owner's limit), -ENODEV (@rd left the
 * registry: its charges are given back, nothing more may be added),
 * -ENOMEM.
 */
int cfsd_quota_dev_charge(struct cfsd_rdev *rd, long entries, long bytes, char *msg, size_t msgsz)
{
	bool force = cfsd_quota_caller == 0;
	size_t grow_e = entries > 0 ? (size_t)entries : 0, grow_b = bytes > 0 ? (size_t)bytes : 0;
	size_t drop_e = entries < 0 ? (size_t)-entries : 0, drop_b = bytes < 0 ? (size_t)-bytes : 0;
	struct uid_use *u = NULL;
	int r = 0;

	pthread_mutex_lock(&quota_lock);
	if (rd->q.gone) {
		r = (grow_e || grow_b) ? -ENODEV : 0;
		if (r && msg)
			snprintf(msg, msgsz, "the device is being removed");
		goto out;
	}
	if (rd->o.owner != 0 && !(u = use_of(rd->o.owner, true))) {
		r = -ENOMEM;
		goto out;
	}
	if (u && !force && ((r = room_locked(u, CFSD_Q_ENTRY, grow_e, msg, msgsz)) < 0 ||
			    (r = room_locked(u, CFSD_Q_BYTES, grow_b, msg, msgsz)) < 0)) {
		use_drop_empty(u);
		goto out;
	}
	drop_e = drop_e < rd->q.entries ? drop_e : rd->q.entries;
	drop_b = drop_b < rd->q.bytes ? drop_b : rd->q.bytes;
	rd->q.entries = rd->q.entries + grow_e - drop_e;
	rd->q.bytes = rd->q.bytes + grow_b - drop_b;
	if (u) {
		u->n[CFSD_Q_ENTRY] = u->n[CFSD_Q_ENTRY] + grow_e - drop_e;
		u->n[CFSD_Q_BYTES] = u->n[CFSD_Q_BYTES] + grow_b - drop_b;
		use_drop_empty(u);
	}
out:
	pthread_mutex_unlock(&quota_lock);
	return r;
}

/**
 * cfsd_quota_dev_gone() - @rd left the registry (removed, with its
 * connection, by RESET, or found dead): what it was charged is given
 * back, and nothing is charged to it any more
 *
 * Called once it is unregistered, and again (a no-op) when it is freed,
 * so that a device that never made it into the registry gives back what
 * its attributes were charged too.
 */
void cfsd_quota_dev_gone(struct cfsd_rdev *rd)
{
	struct uid_use *u;

	pthread_mutex_lock(&quota_lock);
	if (!rd->q.gone && rd->o.owner != 0 && (u = use_of(rd->o.owner, false))) {
		u->n[CFSD_Q_ENTRY] -= rd->q.entries < u->n[CFSD_Q_ENTRY] ? rd->q.entries
									 : u->n[CFSD_Q_ENTRY];
		u->n[CFSD_Q_BYTES] -= rd->q.bytes < u->n[CFSD_Q_BYTES] ? rd->q.bytes
								       : u->n[CFSD_Q_BYTES];
		use_drop_empty(u);
	}
	rd->q = (struct cfsd_charge){ .gone = true };
	pthread_mutex_unlock(&quota_lock);
}

/**
 * cfsd_quota_usage() - what each uid holds, for STATUS
 * @b: receives one CFS_T_DATA field: a header line, then one line per
 *     uid holding anything (root is not counted), by uid.
 *
 * Return: 0 or -ENOMEM.
 */
int cfsd_quota_usage(struct cfs_buf *b)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	uid_t last = 0;
	bool first = true;
	int r = 0;

	if (!f)
		return -ENOMEM;
	fprintf(f, "%-10s %11s %10s %13s %10s %12s\n", "UID", "CONNECTIONS", "OBJECTS",
		"SUBSCRIPTIONS", "ENTRIES", "BYTES");
	fprintf(f, "%-10s %11zu %10zu %13zu %10zu %12zu\n", "limit", cfsd.cfg.max_conns,
		cfsd.cfg.max_objs, cfsd.cfg.max_subs, cfsd.cfg.max_entries, cfsd.cfg.max_bytes);
	pthread_mutex_lock(&quota_lock);
	/* by uid, smallest first: few uids, so a walk per line */
	for (;;) {
		const struct uid_use *next = NULL;

		for (const struct uid_use *u = uses; u; u = u->next)
			if ((first || u->uid > last) && (!next || u->uid < next->uid))
				next = u;
		if (!next)
			break;
		fprintf(f, "%-10u %11zu %10zu %13zu %10zu %12zu\n", (unsigned int)next->uid,
			next->n[CFSD_Q_CONN], next->n[CFSD_Q_OBJ], next->n[CFSD_Q_SUB],
			next->n[CFSD_Q_ENTRY], next->n[CFSD_Q_BYTES]);
		last = next->uid;
		first = false;
	}
	pthread_mutex_unlock(&quota_lock);
	if (fclose(f) != 0 || !text)
		r = -ENOMEM;
	else
		cfs_buf_bytes(b, CFS_T_DATA, text, len);
	free(text);
	return r;
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

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * snap.c - computed values (a show(), a remote publisher's, `uevent`) as
 * the kernel's page cache can hold them.
 *
 * Opens are zero-message (ops.c), so every file of the mount is read
 * through the kernel's page cache, one copy per inode for all its
 * readers, as long as the inode's size says.  A computed value has no
 * size until show() ran, and reporting 4096 (as sysfs does) is not safe
 * here: a READ shorter than the size is taken as the new size only when
 * no other attribute reply for the inode came meanwhile, so two readers
 * of one attribute could get its value followed by NULs up to 4096.
 *
 * So a read takes the value first: the kernel asks the attributes before
 * every read of such a file (they are valid for no time), with the open
 * file's handle (FUSE_GETATTR_FH); that getattr runs show() and keeps
 * the bytes here, its snapshot, and answers their length, and a version
 * as the nanoseconds of the mtime.  The version moves only when the
 * bytes differ: the kernel then drops the pages it cached
 * (auto_inval_data) and its next READ is answered from the snapshot, so
 * the bytes it caches are exactly as long as the size it was told.  A
 * value that does not change is read from the page cache after one
 * getattr.  A plain stat runs no show(): it reports the snapshot's size
 * and version (4096 and 0 before any read).
 *
 * Getattrs of one file run at once (the loop's threads, readers of
 * both mounts of a tree): the snapshot kept is the one whose show()
 * began last, whatever order they end in.  Each getattr takes a ticket
 * before its show() runs; a snapshot taken by an earlier ticket than the
 * one kept is not kept, and its getattr answers the kept one's length
 * and version instead, which are what the READs get.  Otherwise a show()
 * that read a value before it changed, and kept its bytes after a later
 * getattr kept the new ones, would have the READs that follow that later
 * getattr answered with the old bytes: a reader that saw the change's
 * uevent would read the value as it was before.
 *
 * When the tree reports a value changed (a store(), a notification:
 * notify.c's watch_value), its snapshot is marked stale before the
 * change's call returns, with the invalidation of the kernel's copy: a
 * snapshot taken before the change would otherwise answer the plain
 * stats (the permission check of every open) and the READs that come
 * after it, and put the bytes from before the change back into the
 * kernel's cache.  A stale snapshot answers nothing: a READ runs show(),
 * and a plain stat takes a new snapshot as a read's getattr does (so the
 * length it answers is the one the READs get), which only a getattr that
 * began after the change may keep.  Versions come from one counter per
 * mount, so a new snapshot never repeats a version the kernel saw.
 *
 * A value that changes with neither a store() nor a notification is not
 * marked, and nothing drops the kernel's copy: the kernel keeps the
 * first of two getattr answers that overlap (its attr_version), so a
 * reader whose getattr was sent after such a change can be left with the
 * length, version and cached pages that another reader's getattr, begun
 * before the change and answered meanwhile, brought.  A driver announces
 * its changes with classfs_device_notify(), as sysfs_notify().
 *
 * A show() that fails leaves a snapshot of its error: the getattr does
 * not fail (a getattr also comes before lseek(SEEK_END) of an appending
 * writer) and the READ that follows gets the error without running
 * show() again (a stopped remote driver would cost two call timeouts).
 *
 * Snapshots are kept for SNAP_MAX inodes at most, the oldest dropped
 * first; a READ that finds none runs show() as it would without.
 *
 * Locking: slock guards the table; taken with no other lock held, or
 * under the tree's lock (watch_value), never the other way round.
 */
#include "fuse-internal.h"

#define SNAP_BUCKETS 1024	/* a power of two */
#define SNAP_MAX 4096		/* inodes with a snapshot */

struct cfs_snap {
	struct cfs_snap *next;		/* in its bucket */
	struct cfs_snap *older, *newer;	/* by the time it was made */
	uint64_t ino;
	uint64_t ticket;		/* the getattr's that took it (stale: the last before) */
	bool stale;			/* the value changed since: serves nothing */
	int err;			/* show()'s -errno, kept for the READ (len 0) */
	uint64_t version;
	size_t len;
	char bytes[];
};

static size_t bucket_of(uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 40) & (SNAP_BUCKETS - 1);
}

/* under slock: @ino's snapshot and the link that points at it */
static struct cfs_snap **find_locked(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_snap **pp = &m->snaps[bucket_of(ino)];

	while (*pp && (*pp)->ino != ino)
		pp = &(*pp)->next;
	return pp;
}

/* under slock: take @s (found at @pp) out of the table and the age list */
static void unlink_locked(struct classfs_mount *m, struct cfs_snap **pp, struct cfs_snap *s)
{
	*pp = s->next;
	if (s->older)
		s->older->newer = s->newer;
	else
		m->snap_oldest = s->newer;
	if (s->newer)
		s->newer->older = s->older;
	else
		m->snap_newest = s->older;
	m->nsnaps--;
}

/**
 * cfs_fuse_snap_ticket() - a getattr's place in line, taken before its
 * show() runs: later tickets read the value later
 */
uint64_t cfs_fuse_snap_ticket(struct classfs_mount *m)
{
	return __atomic_add_fetch(&m->snap_ticket, 1, __ATOMIC_SEQ_CST);
}

/**
 * cfs_fuse_snap_set() - keep *@len bytes at @bytes, or show()'s error @err
 * (-errno; @len 0), as @ino's value, taken by the getattr of @ticket,
 * unless a later ticket's are kept already
 * @len: in, the bytes' length; out, the kept snapshot's
 * @version: receives the kept snapshot's version (the mtime's ns)
 *
 * Return: 0, or -ENOMEM (no snapshot kept: the caller answers as if none).
 */
int cfs_fuse_snap_set(struct classfs_mount *m, uint64_t ino, uint64_t ticket, const char *bytes,
		      size_t *len, int err, uint64_t *version)
{
	struct cfs_snap **pp, *s, *old;

	pthread_mutex_lock(&m->slock);
	if (!m->snaps && !(m->snaps = calloc(SNAP_BUCKETS, sizeof(*m->snaps)))) {
		pthread_mutex_unlock(&m->slock);
		return -ENOMEM;
	}
	pp = find_locked(m, ino);
	old = *pp;
	if (old && (old->ticket > ticket ||
		    (old->err == err && old->len == *len && (!*len || !memcmp(old->bytes, bytes, *len))))) {
		/* newer bytes kept, or the same: the READs get those */
		if (old->ticket < ticket) {
			old->ticket = ticket;
			old->stale = false;
		}
		*len = old->len;
		*version = old->version;
		pthread_mutex_unlock(&m->slock);
		return 0;
	}
	s = malloc(sizeof(*s) + *len);
	if (!s) {
		if (old) {
			unlink_locked(m, pp, old);
			free(old);
		}
		pthread_mutex_unlock(&m->slock);
		return -ENOMEM;
	}
	*s = (struct cfs_snap){ .ino = ino, .ticket = ticket, .err = err, .len = *len };
	if (*len)
		memcpy(s->bytes, bytes, *len);
	s->version = cfs_fuse_new_mtime_ns(m);
	if (old) {
		unlink_locked(m, pp, old);
		free(old);
		pp = find_locked(m, ino);
	}
	while (m->nsnaps >= SNAP_MAX) {
		struct cfs_snap *o = m->snap_oldest;

		unlink_locked(m, find_locked(m, o->ino), o);
		free(o);
		pp = find_locked(m, ino);
	}
	*pp = s;
	s->older = m->snap_newest;
	if (s->older)
		s->older->newer = s;
	else
		m->snap_oldest = s;
	m->snap_newest = s;
	m->nsnaps++;
	*version = s->version;
	pthread_mutex_unlock(&m->slock);
	return 0;
}

/**
 * cfs_fuse_snap_changed() - @ino's value changed: its snapshot, if any,
 * answers nothing from now on, and only a getattr that begins later
 * takes another
 */
void cfs_fuse_snap_changed(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_snap *s;

	pthread_mutex_lock(&m->slock);
	if (m->snaps && (s = *find_locked(m, ino))) {
		s->stale = true;
		s->ticket = __atomic_load_n(&m->snap_ticket, __ATOMIC_SEQ_CST);
	}
	pthread_mutex_unlock(&m->slock);
}

/**
 * cfs_fuse_snap_stale() - does @ino have a snapshot of its value from
 * before a change?  A plain stat then takes another (ops.c), so that
 * the length it answers is that of the bytes the READs get.
 */
bool cfs_fuse_snap_stale(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_snap *s;
	bool r;

	pthread_mutex_lock(&m->slock);
	s = m->snaps ? *find_locked(m, ino) : NULL;
	r = s && s->stale;
	pthread_mutex_unlock(&m->slock);
	return r;
}

/**
 * cfs_fuse_snap_stat() - @ino's snapshot: its length and version
 * Return: true when there is one.
 */
bool cfs_fuse_snap_stat(struct classfs_mount *m, uint64_t ino, size_t *len, uint64_t *version)
{
	struct cfs_snap *s;

	pthread_mutex_lock(&m->slock);
	s = m->snaps ? *find_locked(m, ino) : NULL;
	if (s && (s->stale || s->err))
		s = NULL;	/* from before a change, or an error: no size to tell */
	if (s) {
		*len = s->len;
		*version = s->version;
	}
	pthread_mutex_unlock(&m->slock);
	return s != NULL;
}

/**
 * cfs_fuse_snap_read() - up to @size bytes of @ino's snapshot from @off
 * @found: set false when there is none (or it is stale)
 * Return: the bytes copied, or show()'s -errno the snapshot kept.
 */
ssize_t cfs_fuse_snap_read(struct classfs_mount *m, uint64_t ino, char *buf, size_t size,
			   off_t off, bool *found)
{
	struct cfs_snap *s;
	ssize_t n = 0;

	pthread_mutex_lock(&m->slock);
	s = m->snaps ? *find_locked(m, ino) : NULL;
	*found = s && !s->stale;
	if (*found && s->err) {
		n = s->err;
	} else if (*found) {
		if ((uint64_t)off < s->len) {
			n = (ssize_t)(s->len - (size_t)off < size ? s->len - (size_t)off : size);
			memcpy(buf, s->bytes + off, (size_t)n);
		}
	}
	pthread_mutex_unlock(&m->slock);
	return n;
}

/**
 * cfs_fuse_snap_answer() - answer the getattr @req of computed file @cs
 * with value @r bytes at @page (or -errno @r: what the read then gets)
 */
void cfs_fuse_snap_answer(struct classfs_mount *m, fuse_req_t req,
			  const struct classfs_stat *cs, uint64_t ticket, ssize_t r,
			  const char *page)
{
	struct stat st;
	uint64_t version;
	size_t len = r < 0 ? 0 : (size_t)r > CLASSFS_ATTR_MAX ? CLASSFS_ATTR_MAX : (size_t)r;

	/*
	 * An error is kept for the READ, which then gets it without asking
	 * again, and the getattr does not fail (a getattr comes before
	 * lseek(SEEK_END) on a file opened to append, a write-only
	 * attribute's too); its new version makes the kernel drop what it
	 * cached, so that READ comes.
	 */
	if (cfs_fuse_snap_set(m, cs->ino, ticket, r < 0 ? NULL : page, &len, r < 0 ? (int)r : 0,
			      &version) < 0) {
		fuse_reply_err(req, ENOMEM);	/* the read fails: no size to trust */
		return;
	}
	cfs_fuse_fill_stat(m, cs, &st);
	st.st_size = r < 0 ? cs->size : (off_t)len;
	st.st_mtim.tv_nsec = st.st_ctim.tv_nsec = (long)version;
	fuse_reply_attr(req, &st, 0.0);
}

/** cfs_fuse_snap_free() - at unmount: every snapshot */
void cfs_fuse_snap_free(struct classfs_mount *m)
{
	while (m->snap_oldest) {
		struct cfs_snap *s = m->snap_oldest;

		m->snap_oldest = s->newer;
		free(s);
	}
	free(m->snaps);
	m->snaps = NULL;
	m->snap_newest = NULL;
	m->nsnaps = 0;
}

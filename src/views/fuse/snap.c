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
 * Snapshots are kept for SNAP_MAX inodes at most, the oldest dropped
 * first; a READ that finds none runs show() as it would without.
 *
 * Locking: slock guards the table; taken with no other lock held.
 */
#include "fuse-internal.h"

#define SNAP_BUCKETS 1024	/* a power of two */
#define SNAP_MAX 4096		/* inodes with a snapshot */

struct cfs_snap {
	struct cfs_snap *next;		/* in its bucket */
	struct cfs_snap *older, *newer;	/* by the time it was made */
	uint64_t ino;
	uint64_t version;
	int err;			/* show()'s -errno, for the READ (len 0) */
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

/*
 * keep @len bytes at @bytes, or show()'s error @err, as @ino's value;
 * *@version: the version the kernel is told (the mtime's ns).  0 or -ENOMEM
 */
static int snap_set(struct classfs_mount *m, uint64_t ino, const char *bytes, size_t len,
		    int err, uint64_t *version)
{
	struct cfs_snap **pp, *s, *old;

	pthread_mutex_lock(&m->slock);
	if (!m->snaps && !(m->snaps = calloc(SNAP_BUCKETS, sizeof(*m->snaps)))) {
		pthread_mutex_unlock(&m->slock);
		return -ENOMEM;
	}
	pp = find_locked(m, ino);
	old = *pp;
	if (old && !err && !old->err && old->len == len && !memcmp(old->bytes, bytes, len)) {
		*version = old->version;
		pthread_mutex_unlock(&m->slock);
		return 0;
	}
	s = malloc(sizeof(*s) + len);
	if (!s) {
		if (old) {
			unlink_locked(m, pp, old);
			free(old);
		}
		pthread_mutex_unlock(&m->slock);
		return -ENOMEM;
	}
	*s = (struct cfs_snap){ .ino = ino, .err = err, .len = len };
	if (len)
		memcpy(s->bytes, bytes, len);
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
 * cfs_fuse_snap_set() - keep @len bytes at @bytes as @ino's value
 * @version: receives the version the kernel is told (the mtime's ns)
 *
 * Return: 0, or -ENOMEM (no snapshot kept: the caller answers as if none).
 */
int cfs_fuse_snap_set(struct classfs_mount *m, uint64_t ino, const char *bytes, size_t len,
		      uint64_t *version)
{
	return snap_set(m, ino, bytes, len, 0, version);
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
	if (s && s->err)
		s = NULL;	/* an error: no value to tell the size of */
	if (s) {
		*len = s->len;
		*version = s->version;
	}
	pthread_mutex_unlock(&m->slock);
	return s != NULL;
}

/**
 * cfs_fuse_snap_read() - up to @size bytes of @ino's snapshot from @off
 * @found: set false when there is none
 * Return: the bytes copied, or show()'s -errno the snapshot kept.
 */
ssize_t cfs_fuse_snap_read(struct classfs_mount *m, uint64_t ino, char *buf, size_t size,
			   off_t off, bool *found)
{
	struct cfs_snap *s;
	ssize_t n = 0;

	pthread_mutex_lock(&m->slock);
	s = m->snaps ? *find_locked(m, ino) : NULL;
	*found = s != NULL;
	if (s && s->err) {
		n = s->err;
	} else if (s) {
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
			  const struct classfs_stat *cs, ssize_t r, const char *page)
{
	struct stat st;
	uint64_t version;

	if (r < 0) {
		/*
		 * No value: the error is kept for the READ, which then gets it
		 * without asking again, and the getattr does not fail (a
		 * getattr comes before lseek(SEEK_END) on a file opened to
		 * append, a write-only attribute's too).  A new mtime: the
		 * kernel drops what it cached, so that READ comes.
		 */
		if (snap_set(m, cs->ino, NULL, 0, (int)r, &version) < 0) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
		cfs_fuse_fill_stat(m, cs, &st);
		st.st_size = cs->size;
		st.st_mtim.tv_nsec = st.st_ctim.tv_nsec = (long)version;
		fuse_reply_attr(req, &st, 0.0);
		return;
	}
	if ((size_t)r > CLASSFS_ATTR_MAX)
		r = CLASSFS_ATTR_MAX;
	if (cfs_fuse_snap_set(m, cs->ino, page, (size_t)r, &version) < 0) {
		fuse_reply_err(req, ENOMEM);	/* the read fails: no size to trust */
		return;
	}
	cfs_fuse_fill_stat(m, cs, &st);
	st.st_size = r;
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

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * notify.c - what the FUSE view pushes to the kernel: invalidations of
 * entries and directories, and poll wake-ups.
 *
 * The tree reports every entry that appears or goes (watch ops, under its
 * lock); a notifier thread sends them with
 * fuse_lowlevel_notify_inval_entry(), never a request handler (the kernel
 * may need a request answered first), and the API call that made the
 * change waits until they are out (sync), so its caller's next stat sees
 * the change.  Directory listings are cached by the kernel too
 * (FOPEN_CACHE_DIR): the notifier also invalidates each changed
 * directory's inode (its cached listing and attributes), and a
 * directory's mtime moves with every change, which the kernel checks when
 * a listing starts.
 *
 * Only changes in directories the kernel holds are queued (known.c): the
 * kernel has nothing cached below any other, so a subtree loaded where
 * nobody has looked costs no invalidation and its API calls no wait; in
 * a held directory, an entry whose name no lookup was answered for is not
 * cached: only the directory itself is invalidated (once per batch).
 *
 * Values: a value the kernel caches (its name was looked up) is
 * invalidated, attributes and pages, when the tree replaces it, with the
 * entries, before the changing call returns.  A write request waits for
 * that push WRITE_SYNC_MS at most: another file's invalidation may wait
 * for the page lock that a writer of that file holds while its own WRITE
 * waits for the same push (a change through the API and a write through
 * the mount of one file at once).
 *
 * Poll (sysfs_notify): a notification counts on the attribute's poller and
 * wakes a waiting poll; the attribute reports POLLERR|POLLPRI until it is
 * read from offset 0 again.
 */
#include "fuse-internal.h"

#include <poll.h>
#include <time.h>

#define SYNC_TIMEOUT_S 5
#define WRITE_SYNC_MS 1000	/* a write request's wait for the push, at most */
#define LINGER_NS (1000 * 1000L)	/* changes of a call in progress wait this long for more */
#define PUSH_BATCH 4096			/* ... or until this many are queued */

/* ---- the tree's watch: record under its lock, push from our thread ---- */

/* the last change queued (not yet taken) is directory @dir alone */
static bool dir_queued(struct classfs_mount *m, uint64_t dir)
{
	const struct cfs_inval *last;
	bool r;

	pthread_mutex_lock(&m->qlock);
	/* qtail points at the last one's next, its first member */
	last = m->qhead ? (const struct cfs_inval *)(void *)m->qtail : NULL;
	r = last && last->dir_only && last->dir == dir;
	pthread_mutex_unlock(&m->qlock);
	return r;
}

/* @iv at the queue's end; the first wakes the notifier, which then lingers for the call's sync */
static void enqueue(struct classfs_mount *m, struct cfs_inval *iv)
{
	pthread_mutex_lock(&m->qlock);
	*m->qtail = iv;
	m->qtail = &iv->next;
	m->queued++;
	if (m->queued - m->pushed >= PUSH_BATCH)
		m->push_now = true;
	if (m->qhead == iv || m->push_now)
		pthread_cond_signal(&m->qwork);
	pthread_mutex_unlock(&m->qlock);
}

static void watch_changed(void *data, uint64_t dir, const char *name)
{
	struct classfs_mount *m = data;
	size_t len = strlen(name) + 1;
	enum cfs_known_state known = cfs_fuse_known(m, dir, name);
	struct cfs_inval *iv;

	__atomic_add_fetch(&m->changes, 1, __ATOMIC_RELAXED);
	if (known == CFS_KNOWN_NOTHING)
		return;	/* nothing of @dir is in the kernel's caches */
	if (known == CFS_KNOWN_DIR && dir_queued(m, dir))
		return;	/* the directory is invalidated anyway, the name is not needed */
	iv = malloc(sizeof(*iv) + len);
	if (!iv)
		return;	/* the entry stays cached until its timeout */
	*iv = (struct cfs_inval){ .dir = dir, .dir_only = known == CFS_KNOWN_DIR };
	memcpy(iv->name, name, len);
	enqueue(m, iv);
}

/* queue the invalidation of inode @ino (0: every link held): attributes, pages, text */
static void queue_inode(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_inval *iv = malloc(sizeof(*iv) + 1);

	if (!iv)
		return;	/* cached until its timeout: a day */
	*iv = (struct cfs_inval){ .dir = ino };
	iv->name[0] = '\0';
	enqueue(m, iv);
}

/*
 * A value was replaced, or notified, or went: the kernel may hold its
 * pages and size only if it looked the name up.  A write request's own
 * file is left alone: the kernel holds its pages locked until the answer
 * (the invalidation would wait for them), and takes what it wrote,
 * fetching the attributes next and dropping the pages if the size is not
 * what it wrote.
 */
static void watch_value(void *data, uint64_t dir, const char *name, uint64_t ino)
{
	struct classfs_mount *m = data;

	/* a computed value's snapshot is of the value before: never answered again (snap.c) */
	cfs_fuse_snap_changed(m, ino);
	if (cfs_fuse_writing_mount == m && cfs_fuse_writing_ino == ino)
		return;
	if (cfs_fuse_known(m, dir, name) != CFS_KNOWN_ENTRY)
		return;
	queue_inode(m, ino);
}

/* an entry moved: every link the kernel holds may read otherwise (0: all links) */
static void watch_moved(void *data)
{
	queue_inode(data, 0);
}

static void watch_sync(void *data)
{
	struct classfs_mount *m = data;
	struct timespec until;
	uint64_t target;

	/*
	 * A request of this mount changed the tree (ns-ops.c): the kernel
	 * holds the directory's lock until it is answered, so the push
	 * waits for the answer, not the answer for the push.
	 */
	if (cfs_fuse_serving == m)
		return;

	clock_gettime(CLOCK_REALTIME, &until);
	if (cfs_fuse_writing_mount == m) {
		/* a write request: briefly (see the top of this file) */
		until.tv_nsec += WRITE_SYNC_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
	} else {
		until.tv_sec += SYNC_TIMEOUT_S;
	}
	pthread_mutex_lock(&m->qlock);
	target = m->queued;
	if (m->pushed < target) {
		m->push_now = true;
		pthread_cond_signal(&m->qwork);
	}
	while (m->pushed < target && !m->stopping)
		if (pthread_cond_timedwait(&m->qdone, &m->qlock, &until) == ETIMEDOUT) {
			if (cfs_fuse_writing_mount != m)
				fprintf(stderr, "classfs: invalidations for %s late by %d s\n",
					m->mountpoint, SYNC_TIMEOUT_S);
			break;
		}
	pthread_mutex_unlock(&m->qlock);
}

/**
 * cfs_fuse_poller_get() - the poll state of attribute @ino (under plock)
 * @create: make it when missing
 * Return: the poller, or NULL (missing, or out of memory).
 */
struct cfs_poller *cfs_fuse_poller_get(struct classfs_mount *m, uint64_t ino, bool create)
{
	struct cfs_poller *p;

	for (p = m->pollers; p; p = p->next)
		if (p->ino == ino)
			return p;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->ino = ino;
	p->next = m->pollers;
	m->pollers = p;
	return p;
}

static void watch_notify(void *data, uint64_t ino)
{
	struct classfs_mount *m = data;
	struct fuse_pollhandle *ph = NULL;
	struct cfs_poller *p;

	pthread_mutex_lock(&m->plock);
	p = cfs_fuse_poller_get(m, ino, true);
	if (p) {
		p->events++;
		ph = p->ph;
		p->ph = NULL;
	}
	pthread_mutex_unlock(&m->plock);
	if (ph) {
		fuse_lowlevel_notify_poll(ph);
		fuse_pollhandle_destroy(ph);
	}
}

const struct classfs_watch_ops cfs_fuse_watch_ops = {
	.changed = watch_changed,
	.sync = watch_sync,
	.notify = watch_notify,
	.value = watch_value,
	.moved = watch_moved,
};

/* (the notifier) every link the kernel holds: its cached text */
static void inval_links(struct classfs_mount *m)
{
	uint64_t *links;
	ssize_t n = cfs_fuse_known_links(m, &links);

	if (n < 0) {
		fprintf(stderr, "classfs: %s: links not invalidated: out of memory\n",
			m->mountpoint);
		return;
	}
	for (ssize_t i = 0; i < n; i++)
		fuse_lowlevel_notify_inval_inode(m->se, links[i], 0, 0);
	free(links);
}

/**
 * cfs_fuse_notifier_main() - the notifier thread of mount @arg
 *
 * Pushes in batches: every change recorded so far, each entry, then each
 * directory once (its cached listing and attributes: FOPEN_CACHE_DIR, and
 * the kernel compares the mtime, which moved, when a listing starts).  A
 * batch goes when a call's sync asks for it, when PUSH_BATCH changes are
 * queued, or LINGER_NS after the first change of a batch.
 * Ends once the mount is stopping and the queue is empty.
 */
void *cfs_fuse_notifier_main(void *arg)
{
	struct classfs_mount *m = arg;

	pthread_mutex_lock(&m->qlock);
	for (;;) {
		struct cfs_inval *batch = m->qhead, *iv;
		uint64_t dirs[16], n = 0;
		int ndirs = 0;

		if (!batch) {
			if (m->stopping)
				break;
			pthread_cond_wait(&m->qwork, &m->qlock);
			continue;
		}
		if (!m->push_now && !m->stopping) {
			/*
			 * A call still making changes (a record load makes thousands
			 * before its one sync): wait for its sync, or a little, so
			 * they go in one batch and the caller is not preempted for each.
			 */
			struct timespec until;

			clock_gettime(CLOCK_REALTIME, &until);
			until.tv_nsec += LINGER_NS;
			if (until.tv_nsec >= 1000000000L) {
				until.tv_sec++;
				until.tv_nsec -= 1000000000L;
			}
			if (pthread_cond_timedwait(&m->qwork, &m->qlock, &until) != ETIMEDOUT)
				continue;
			batch = m->qhead;
		}
		m->push_now = false;
		m->qhead = NULL;
		m->qtail = &m->qhead;
		pthread_mutex_unlock(&m->qlock);
		while ((iv = batch)) {
			int i = 0;

			batch = iv->next;
			if (!iv->name[0]) {
				/* a value: its attributes and pages (-ENOENT: not cached) */
				if (iv->dir)
					fuse_lowlevel_notify_inval_inode(m->se, iv->dir, 0, 0);
				else
					inval_links(m);
				free(iv);
				n++;
				continue;
			}
			/* the kernel may not know the entry: -ENOENT is fine */
			if (!iv->dir_only)
				fuse_lowlevel_notify_inval_entry(m->se, iv->dir, iv->name,
								 strlen(iv->name));
			while (i < ndirs && dirs[i] != iv->dir)
				i++;
			if (i == ndirs && ndirs < 16)
				dirs[ndirs++] = iv->dir;
			else if (i == ndirs)
				fuse_lowlevel_notify_inval_inode(m->se, iv->dir, 0, 0);
			free(iv);
			n++;
		}
		for (int i = 0; i < ndirs; i++)
			fuse_lowlevel_notify_inval_inode(m->se, dirs[i], 0, 0);
		pthread_mutex_lock(&m->qlock);
		m->pushed += n;
		pthread_cond_broadcast(&m->qdone);
	}
	m->pushed = m->queued;
	pthread_cond_broadcast(&m->qdone);
	pthread_mutex_unlock(&m->qlock);
	return NULL;
}

/**
 * cfs_fuse_poll_ack() - attribute @ino is read anew (a stored value from
 * offset 0, a computed one's show() runs): its notifications are seen
 */
void cfs_fuse_poll_ack(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_poller *p;

	pthread_mutex_lock(&m->plock);
	p = cfs_fuse_poller_get(m, ino, false);
	if (p)
		p->seen = p->events;
	pthread_mutex_unlock(&m->plock);
}

/**
 * cfs_fuse_poll() - the POLL request: readable and writable always, plus
 * POLLERR|POLLPRI once the attribute was notified since it was last read
 * from offset 0; @ph (when given) is kept to wake the poller.
 *
 * Opens are zero-message (ops.c), so "since it was read" is the inode's,
 * not each open file's as in sysfs.  A read reaches this process when it
 * must: a computed value's getattr runs show() before each read, and a
 * notification moves a stored value's mtime (watch_value(), before the
 * wake-up), so the poller's next read from offset 0 is a READ.
 */
void cfs_fuse_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		   struct fuse_pollhandle *ph)
{
	struct classfs_mount *m = fuse_req_userdata(req);
	unsigned int revents = POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM;
	struct cfs_poller *p;

	(void)fi;
	pthread_mutex_lock(&m->plock);
	p = cfs_fuse_poller_get(m, ino, ph != NULL);
	if (p && p->seen != p->events)
		revents |= POLLERR | POLLPRI;
	if (p && ph) {
		if (p->ph)
			fuse_pollhandle_destroy(p->ph);
		p->ph = ph;
		ph = NULL;
	}
	pthread_mutex_unlock(&m->plock);
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, revents);
}

/**
 * cfs_fuse_notify_free() - at unmount, once no thread runs: the queue
 * left, the pollers.
 */
void cfs_fuse_notify_free(struct classfs_mount *m)
{
	struct cfs_inval *iv;

	while ((iv = m->qhead)) {
		m->qhead = iv->next;
		free(iv);
	}
	while (m->pollers) {
		struct cfs_poller *p = m->pollers;

		m->pollers = p->next;
		if (p->ph)
			fuse_pollhandle_destroy(p->ph);
		free(p);
	}
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * versions.c - the mtimes of stored values, so that an invalidation of
 * their attributes alone drops their cached pages.
 *
 * A stored value stays in the kernel's page cache until the tree replaces
 * it (ops.c).  Invalidating its pages from here would take the pages'
 * locks, which a writer of the same file holds while its WRITE waits for
 * this process: a WRITE whose store() waits for the invalidations
 * (notify.c's sync) would then wait for itself.  So the notifier
 * invalidates a changed value's attributes only, which takes no page
 * lock, and the value's mtime moves: the kernel, fetching the attributes
 * before its next read, sees another mtime and drops the pages
 * (auto_inval_data).  A value that never changed shows the mount's time
 * (nanoseconds 0); one that did, the nanoseconds of its last change,
 * kept here.
 *
 * One entry per value changed while the kernel could cache it (its name
 * was looked up).  The entries of values gone are dropped by the
 * notifier (cfs_fuse_versions_prune()) each time the table doubled.
 *
 * Open addressing, linear probing, keyed by inode number (never 0).
 * Locking: vlock; taken under the tree's lock (watch_value), and never
 * the other way round.
 */
#include "fuse-internal.h"

#define VERSIONS_MIN 64		/* slots at first; a power of two */

static size_t slot_of(const struct cfs_versions *v, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 32) & (v->size - 1);
}

static struct cfs_version *find(const struct cfs_versions *v, uint64_t ino)
{
	size_t i = slot_of(v, ino);

	while (v->ents[i].ino && v->ents[i].ino != ino)
		i = (i + 1) & (v->size - 1);
	return &v->ents[i];
}

/* rebuild into @size slots, keeping what @keep says (NULL: all); -ENOMEM leaves it */
static int rehash(struct cfs_versions *v, size_t size, bool (*keep)(void *ctx, uint64_t ino),
		  void *ctx)
{
	struct cfs_versions old = *v;

	v->ents = calloc(size, sizeof(*v->ents));
	if (!v->ents) {
		*v = old;
		return -ENOMEM;
	}
	v->size = size;
	v->count = 0;
	for (size_t i = 0; i < old.size; i++)
		if (old.ents[i].ino && (!keep || keep(ctx, old.ents[i].ino))) {
			*find(v, old.ents[i].ino) = old.ents[i];
			v->count++;
		}
	free(old.ents);
	return 0;
}

/**
 * cfs_fuse_versions_bump() - stored value @ino changed: a new mtime
 * Return: 0, or -ENOMEM (the caller then invalidates the pages too).
 */
int cfs_fuse_versions_bump(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_versions *v = &m->versions;
	struct cfs_version *e;

	pthread_mutex_lock(&v->lock);
	if ((v->count + 1) * 4 > v->size * 3 &&
	    rehash(v, v->size ? v->size * 2 : VERSIONS_MIN, NULL, NULL) < 0 &&
	    v->count + 1 >= v->size) {
		pthread_mutex_unlock(&v->lock);
		return -ENOMEM;
	}
	e = find(v, ino);
	if (!e->ino) {
		e->ino = ino;
		v->count++;
	}
	e->ns = cfs_fuse_new_mtime_ns(m);
	pthread_mutex_unlock(&v->lock);
	return 0;
}

/** cfs_fuse_versions_get() - the mtime's nanoseconds of stored value @ino (0: never changed) */
uint64_t cfs_fuse_versions_get(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_versions *v = &m->versions;
	uint64_t ns = 0;

	pthread_mutex_lock(&v->lock);
	if (v->size)
		ns = find(v, ino)->ns;
	pthread_mutex_unlock(&v->lock);
	return ns;
}

struct dead {
	const uint64_t *inos;	/* sorted */
	size_t n;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool not_dead(void *ctx, uint64_t ino)
{
	const struct dead *d = ctx;

	return !bsearch(&ino, d->inos, d->n, sizeof(ino), cmp_u64);
}

/**
 * cfs_fuse_versions_prune() - drop the entries of values gone, once the
 * table holds twice what it held after the last pruning.  The notifier
 * calls it, holding no lock: the tree is read without vlock (the tree's
 * lock is taken first where both are).
 */
void cfs_fuse_versions_prune(struct classfs_mount *m)
{
	struct cfs_versions *v = &m->versions;
	struct classfs_stat cs;
	uint64_t *inos;
	size_t n = 0, ndead = 0;

	pthread_mutex_lock(&v->lock);
	if (v->count < 2 * v->pruned_at + VERSIONS_MIN || !(inos = malloc(v->count * sizeof(*inos)))) {
		pthread_mutex_unlock(&v->lock);
		return;
	}
	for (size_t i = 0; i < v->size; i++)
		if (v->ents[i].ino)
			inos[n++] = v->ents[i].ino;
	pthread_mutex_unlock(&v->lock);
	for (size_t i = 0; i < n; i++)
		if (classfs_getattr(m->tree, inos[i], &cs) == -ENOENT)
			inos[ndead++] = inos[i];
	qsort(inos, ndead, sizeof(*inos), cmp_u64);
	pthread_mutex_lock(&v->lock);
	if (!ndead || rehash(v, v->size, not_dead, &(struct dead){ inos, ndead }) == 0)
		v->pruned_at = v->count;
	pthread_mutex_unlock(&v->lock);
	free(inos);
}

/** cfs_fuse_versions_free() - at unmount */
void cfs_fuse_versions_free(struct classfs_mount *m)
{
	free(m->versions.ents);
	m->versions.ents = NULL;
	m->versions.size = m->versions.count = m->versions.pruned_at = 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * known.c - the directories the kernel holds: each directory inode that
 * a lookup reply handed to the kernel, with the kernel's own count of
 * those replies (nlookup), until forget() gives them back.
 *
 * Only a directory the kernel holds can have cached entries below it
 * (every dentry pins its parent's), positive or negative, or a cached
 * listing.  So a change in a directory the kernel does not hold needs no
 * invalidation: notify.c drops it before it is queued, and a bulk load
 * into a subtree nobody has looked at costs the kernel nothing.  And
 * entries below a held directory exist only once a lookup in it was
 * answered: until then a change there needs the directory invalidated
 * (its listing, its attributes), not each entry.  That mark is set
 * before the lookup reads the tree, so a change the lookup did not see
 * is pushed entry by entry.
 *
 * The count is taken before the lookup's reply is sent, so a change
 * recorded after that is pushed; one recorded before it cannot concern
 * the kernel, which knew nothing below the directory until the reply.
 * A reply the kernel never took (interrupted) leaves the directory
 * counted: that costs invalidations, never a stale entry.
 *
 * An open-addressing table with linear probing, keyed by inode number;
 * removal shifts the following entries back (no tombstones).  Its lock
 * is taken under the tree's lock (watch_changed) and never the other way
 * round.
 */
#include "fuse-internal.h"

#define KNOWN_MIN 64		/* slots at first; a power of two */

static size_t slot_of(const struct cfs_known *k, uint64_t ino)
{
	/* Fibonacci hashing: inode numbers are dense, with a generation in the high bits */
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 32) & (k->size - 1);
}

/* the slot holding @ino, or the empty slot where it would go */
static struct cfs_known_ent *find(const struct cfs_known *k, uint64_t ino)
{
	size_t i = slot_of(k, ino);

	while (k->ents[i].ino && k->ents[i].ino != ino)
		i = (i + 1) & (k->size - 1);
	return &k->ents[i];
}

/* double the table (under lock); -ENOMEM leaves it as it was */
static int grow(struct cfs_known *k)
{
	size_t size = k->size ? k->size * 2 : KNOWN_MIN;
	struct cfs_known old = *k;

	k->ents = calloc(size, sizeof(*k->ents));
	if (!k->ents) {
		k->ents = old.ents;
		return -ENOMEM;
	}
	k->size = size;
	for (size_t i = 0; i < old.size; i++)
		if (old.ents[i].ino)
			*find(k, old.ents[i].ino) = old.ents[i];
	free(old.ents);
	return 0;
}

/* remove the entry at slot @i, moving back those its removal would cut off */
static void remove_at(struct cfs_known *k, size_t i)
{
	size_t j = i;

	k->ents[i].ino = 0;
	for (;;) {
		size_t home;

		j = (j + 1) & (k->size - 1);
		if (!k->ents[j].ino)
			break;
		home = slot_of(k, k->ents[j].ino);
		/* @j stays when its home lies cyclically in (i, j] */
		if (i <= j ? (i < home && home <= j) : (i < home || home <= j))
			continue;
		k->ents[i] = k->ents[j];
		k->ents[j].ino = 0;
		i = j;
	}
	k->count--;
}

/**
 * cfs_fuse_known_get() - directory @ino is about to be handed to the kernel
 * @m: the mount.
 * @ino: the directory's inode number.
 *
 * Call before the lookup reply is sent.  Out of memory, the directory is
 * counted as known from then on (m->all_known): invalidations are sent as
 * if nothing were tracked, never skipped wrongly.
 */
void cfs_fuse_known_get(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_known *k = &m->known;
	struct cfs_known_ent *e;

	pthread_mutex_lock(&k->lock);
	if ((k->count + 1) * 4 > k->size * 3 && grow(k) < 0 && k->count + 1 >= k->size) {
		__atomic_store_n(&k->all, true, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&k->lock);
		return;
	}
	e = find(k, ino);
	if (!e->ino) {
		e->ino = ino;
		e->nlookup = 0;
		e->looked_in = false;
		k->count++;
	}
	e->nlookup++;
	pthread_mutex_unlock(&k->lock);
}

/**
 * cfs_fuse_known_put() - the kernel forgot @nlookup lookups of @ino
 * @m: the mount.
 * @ino: any inode (those not tracked are not directories: ignored).
 * @nlookup: as forget() tells it.
 */
void cfs_fuse_known_put(struct classfs_mount *m, uint64_t ino, uint64_t nlookup)
{
	struct cfs_known *k = &m->known;
	struct cfs_known_ent *e;

	pthread_mutex_lock(&k->lock);
	if (k->size) {
		e = find(k, ino);
		if (e->ino && e->nlookup <= nlookup)
			remove_at(k, (size_t)(e - k->ents));
		else if (e->ino)
			e->nlookup -= nlookup;
	}
	pthread_mutex_unlock(&k->lock);
}

/**
 * cfs_fuse_known_look_in() - a lookup in directory @dir is about to be
 * answered; call before it reads the tree
 * @m: the mount.
 * @dir: the lookup's parent (held by the kernel, or it could not ask).
 */
void cfs_fuse_known_look_in(struct classfs_mount *m, uint64_t dir)
{
	struct cfs_known *k = &m->known;
	struct cfs_known_ent *e;

	if (dir == FUSE_ROOT_ID)
		return;
	pthread_mutex_lock(&k->lock);
	if (k->size) {
		e = find(k, dir);
		if (e->ino)
			e->looked_in = true;
	}
	pthread_mutex_unlock(&k->lock);
}

/**
 * cfs_fuse_known() - what the kernel may have cached of directory @ino
 * @m: the mount.
 * @ino: a directory's inode number.
 *
 * Return: %CFS_KNOWN_NOTHING, %CFS_KNOWN_DIR (the directory: its listing
 * and attributes) or %CFS_KNOWN_ENTRIES (entries below it too).  The
 * root, and every directory once the table could not grow, count as
 * %CFS_KNOWN_ENTRIES.
 */
enum cfs_known_state cfs_fuse_known(struct classfs_mount *m, uint64_t ino)
{
	struct cfs_known *k = &m->known;
	enum cfs_known_state r = CFS_KNOWN_NOTHING;
	struct cfs_known_ent *e;

	if (ino == FUSE_ROOT_ID || __atomic_load_n(&k->all, __ATOMIC_RELAXED))
		return CFS_KNOWN_ENTRIES;
	pthread_mutex_lock(&k->lock);
	if (k->size && (e = find(k, ino))->ino == ino)
		r = e->looked_in ? CFS_KNOWN_ENTRIES : CFS_KNOWN_DIR;
	pthread_mutex_unlock(&k->lock);
	return r;
}

/** cfs_fuse_known_free() - at unmount */
void cfs_fuse_known_free(struct classfs_mount *m)
{
	free(m->known.ents);
	m->known.ents = NULL;
	m->known.size = m->known.count = 0;
}

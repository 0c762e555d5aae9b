// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * known.c - the directories the kernel holds: each directory inode that
 * a lookup reply handed to the kernel, with the kernel's own count of
 * those replies (nlookup), until forget() gives them back.  The links it
 * holds too (flagged): it caches their text, which a rename may change.
 *
 * Only a directory the kernel holds can have cached entries below it
 * (every dentry pins its parent's), positive or negative, or a cached
 * listing.  So a change in a directory the kernel does not hold needs no
 * invalidation: notify.c drops it before it is queued, and a bulk load
 * into a subtree nobody has looked at costs the kernel nothing.  And an
 * entry below a held directory is cached only once a lookup of its name
 * was answered (readdir makes no entries): the names answered are kept
 * too, as hashes of (directory, name), so a change of any other name
 * needs the directory invalidated (its listing, its attributes), not the
 * entry.  A name is added before the lookup reads the tree, so a change
 * the lookup did not see is pushed by name.  Names stay (the kernel may
 * look a name up again at any time): hashes that collide, and names the
 * kernel dropped since, only cost an invalidation; past NAMES_MAX names,
 * every name counts as cached.
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
#define NAMES_MAX (256 * 1024)	/* names kept; more: every name counts */
#define KNOWN_LINK (1ull << 63)	/* in nlookup: the inode is a link, not a directory */

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

/* ---- the names answered: a set of hashes, linear probing ---- */

static uint64_t name_key(uint64_t dir, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 0x100000001b3ull;
	h ^= dir * 0x9e3779b97f4a7c15ull;
	return h ? h : 1;	/* 0 marks an empty slot */
}

static size_t name_slot(const struct cfs_known *k, uint64_t key)
{
	size_t i = (size_t)(key >> 17) & (k->nsize - 1);

	while (k->names[i] && k->names[i] != key)
		i = (i + 1) & (k->nsize - 1);
	return i;
}

static int names_grow(struct cfs_known *k)
{
	size_t size = k->nsize ? k->nsize * 2 : KNOWN_MIN, osize = k->nsize;
	uint64_t *old = k->names;

	k->names = calloc(size, sizeof(*k->names));
	if (!k->names) {
		k->names = old;
		return -ENOMEM;
	}
	k->nsize = size;
	for (size_t i = 0; i < osize; i++)
		if (old[i])
			k->names[name_slot(k, old[i])] = old[i];
	free(old);
	return 0;
}

/* every name counts as cached from now on (under lock) */
static void names_give_up(struct cfs_known *k)
{
	__atomic_store_n(&k->all_names, true, __ATOMIC_RELAXED);
	free(k->names);
	k->names = NULL;
	k->nsize = k->ncount = 0;
}

/**
 * cfs_fuse_known_get() - directory @ino is about to be handed to the kernel
 * @m: the mount.
 * @ino: the directory's inode number.
 *
 * Call before the lookup reply is sent.  Out of memory, every directory
 * counts as held from then on (k->all): invalidations are sent as if
 * nothing were tracked, never skipped wrongly.
 */
void cfs_fuse_known_get(struct classfs_mount *m, uint64_t ino, bool link)
{
	struct cfs_known *k = &m->known;
	struct cfs_known_ent *e;

	pthread_mutex_lock(&k->lock);
	if ((k->count + 1) * 4 > k->size * 3 && grow(k) < 0 && k->count + 1 >= k->size) {
		__atomic_store_n(&k->all, true, __ATOMIC_RELAXED);
		k->links_lost |= link;
		pthread_mutex_unlock(&k->lock);
		return;
	}
	e = find(k, ino);
	if (!e->ino) {
		e->ino = ino;
		e->nlookup = link ? KNOWN_LINK : 0;
		k->count++;
	}
	e->nlookup++;
	pthread_mutex_unlock(&k->lock);
}

/**
 * cfs_fuse_known_links() - the links the kernel holds (their text may be
 * cached: FUSE_CAP_CACHE_SYMLINKS)
 * @m: the mount.
 * @out: receives an array of their inode numbers (to free), or NULL.
 *
 * Return: how many, or -ENOMEM.
 */
ssize_t cfs_fuse_known_links(struct classfs_mount *m, uint64_t **out)
{
	struct cfs_known *k = &m->known;
	ssize_t n = 0;

	pthread_mutex_lock(&k->lock);
	*out = k->count ? malloc(k->count * sizeof(**out)) : NULL;
	if (k->count && !*out) {
		pthread_mutex_unlock(&k->lock);
		return -ENOMEM;
	}
	for (size_t i = 0; i < k->size; i++)
		if (k->ents[i].ino && (k->ents[i].nlookup & KNOWN_LINK))
			(*out)[n++] = k->ents[i].ino;
	pthread_mutex_unlock(&k->lock);
	return n;
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
		if (e->ino && (e->nlookup & ~KNOWN_LINK) <= nlookup)
			remove_at(k, (size_t)(e - k->ents));
		else if (e->ino)
			e->nlookup -= nlookup;
	}
	pthread_mutex_unlock(&k->lock);
}

/**
 * cfs_fuse_known_look_in() - a lookup of @name in directory @dir is about
 * to be answered; call before it reads the tree
 * @m: the mount.
 * @dir: the lookup's parent.
 * @name: the name looked up.
 */
void cfs_fuse_known_look_in(struct classfs_mount *m, uint64_t dir, const char *name)
{
	struct cfs_known *k = &m->known;
	uint64_t key = name_key(dir, name);
	size_t i;

	if (__atomic_load_n(&k->all_names, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&k->lock);
	if (k->all_names)
		goto out;
	if (k->ncount + 1 > NAMES_MAX ||
	    ((k->ncount + 1) * 4 > k->nsize * 3 && names_grow(k) < 0 && k->ncount + 1 >= k->nsize)) {
		names_give_up(k);
		goto out;
	}
	i = name_slot(k, key);
	if (!k->names[i]) {
		k->names[i] = key;
		k->ncount++;
	}
out:
	pthread_mutex_unlock(&k->lock);
}

/**
 * cfs_fuse_known() - what the kernel may have cached of entry @name of
 * directory @ino, which is about to be invalidated
 * @m: the mount.
 * @ino: a directory's inode number.
 * @name: the entry that appeared or went.
 *
 * Return: %CFS_KNOWN_NOTHING (the kernel does not hold the directory),
 * %CFS_KNOWN_DIR (only the directory: its listing and attributes) or
 * %CFS_KNOWN_ENTRY (the entry too).  The root, and every directory once
 * the table could not grow, are held.
 */
enum cfs_known_state cfs_fuse_known(struct classfs_mount *m, uint64_t ino, const char *name)
{
	struct cfs_known *k = &m->known;
	enum cfs_known_state r = CFS_KNOWN_NOTHING;

	pthread_mutex_lock(&k->lock);
	if (ino == FUSE_ROOT_ID || k->all || (k->size && find(k, ino)->ino == ino))
		r = CFS_KNOWN_DIR;
	if (r == CFS_KNOWN_DIR && k->all_names) {
		r = CFS_KNOWN_ENTRY;
	} else if (r == CFS_KNOWN_DIR && k->nsize && k->names[name_slot(k, name_key(ino, name))]) {
		r = CFS_KNOWN_ENTRY;
	}
	pthread_mutex_unlock(&k->lock);
	return r;
}

/** cfs_fuse_known_free() - at unmount */
void cfs_fuse_known_free(struct classfs_mount *m)
{
	free(m->known.ents);
	free(m->known.names);
	m->known.ents = NULL;
	m->known.names = NULL;
	m->known.size = m->known.count = 0;
	m->known.nsize = m->known.ncount = 0;
}

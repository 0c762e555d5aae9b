// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * htab.c - intrusive hash tables ordered by hash.
 *
 * bucket = top @bits of the hash and chains are sorted by key (the hash,
 * then key2 among equal hashes), so the table read bucket by bucket is
 * sorted by key.  Directories use the key as the readdir offset: a
 * listing resumes at "first entry with key >= k" in O(1), whatever was
 * added or removed meanwhile; key2 keeps entries whose hashes collide
 * apart, so a reader stopping between two of them misses neither.  The
 * load factor stays between 1/8 and 1/2 (at 1M devices a load of 1 made
 * create and destroy 10-15% slower: longer chains touch other devices'
 * cache lines); growing can fail quietly (chains get longer), only
 * the first allocation can fail, which cfs_htab_reserve() does up front.
 */
#include "internal.h"

#define HTAB_MIN_BITS 2
#define HTAB_MAX_BITS 30

static inline uint32_t bucket_of(uint32_t hash, uint32_t bits)
{
	return (uint32_t)(hash >> (32 - bits));
}

static inline void **link_ptr(const struct cfs_htab_ops *ops, void *elem)
{
	return (void **)((char *)elem + ops->next_off);
}

/* insert into a chain sorted by key */
static void chain_insert(void **head, const struct cfs_htab_ops *ops, void *elem)
{
	uint64_t k = cfs_htab_key(ops, elem);
	void **pp = head;

	while (*pp && cfs_htab_key(ops, *pp) <= k)
		pp = link_ptr(ops, *pp);
	*link_ptr(ops, elem) = *pp;
	*pp = elem;
}

/*
 * Doubling splits old bucket i into 2i and 2i+1 by the next hash bit; a
 * sorted chain has its 0s first, so it is cut at its first 1 and only the
 * elements before the cut are read.  Halving joins 2j and 2j+1: every hash
 * of 2j is below those of 2j+1, so the chains are concatenated.  Neither
 * moves an element, and both keep chains sorted.
 */
static void rehash(struct classfs_htab *t, const struct cfs_htab_ops *ops, uint32_t bits)
{
	void **nb = cfs_zalloc(sizeof(void *) << bits);
	uint32_t old = t->bits ? 1u << t->bits : 0;

	if (!nb)
		return;		/* keep the old table: longer chains, still correct */
	if (old && bits == t->bits + 1) {
		for (uint32_t i = 0; i < old; i++) {
			void *e = t->buckets[i], *prev = NULL;

			while (e && !((ops->hash(e) >> (32 - bits)) & 1)) {
				prev = e;
				e = *link_ptr(ops, e);
			}
			nb[2 * i + 1] = e;
			if (prev) {
				*link_ptr(ops, prev) = NULL;
				nb[2 * i] = t->buckets[i];
			}
		}
	} else if (old && bits + 1 == t->bits) {
		for (uint32_t j = 0; j < old / 2; j++) {
			void *a = t->buckets[2 * j];

			nb[j] = a ? a : t->buckets[2 * j + 1];
			if (!a)
				continue;
			while (*link_ptr(ops, a))
				a = *link_ptr(ops, a);
			*link_ptr(ops, a) = t->buckets[2 * j + 1];
		}
	} else {
		/* walking old buckets in order and appending keeps chains sorted */
		for (uint32_t i = 0; i < old; i++) {
			void *e = t->buckets[i];

			while (e) {
				void *next = *link_ptr(ops, e);
				uint32_t h = ops->hash(e);

				chain_insert(&nb[bucket_of(h, bits)], ops, e);
				e = next;
			}
		}
	}
	cfs_free(t->buckets);
	t->buckets = nb;
	t->bits = bits;
}

int cfs_htab_reserve(struct classfs_htab *t)
{
	if (t->buckets)
		return 0;
	t->buckets = cfs_zalloc(sizeof(void *) << HTAB_MIN_BITS);
	if (!t->buckets)
		return -ENOMEM;
	t->bits = HTAB_MIN_BITS;
	return 0;
}

void cfs_htab_insert(struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem)
{
	uint32_t h = ops->hash(elem);

	if (2 * (t->count + 1) > (1u << t->bits) && t->bits < HTAB_MAX_BITS)
		rehash(t, ops, t->bits + 1);
	chain_insert(&t->buckets[bucket_of(h, t->bits)], ops, elem);
	t->count++;
}

static void htab_remove(struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem,
			bool keep)
{
	void **pp = &t->buckets[bucket_of(ops->hash(elem), t->bits)];

	while (*pp && *pp != elem)
		pp = link_ptr(ops, *pp);
	if (!*pp)
		return;
	*pp = *link_ptr(ops, elem);
	*link_ptr(ops, elem) = NULL;
	t->count--;
	if (t->count == 0 && !keep) {
		cfs_free(t->buckets);
		t->buckets = NULL;
		t->bits = 0;
	} else if (t->bits > HTAB_MIN_BITS && t->count < (1u << t->bits) / 8) {
		rehash(t, ops, t->bits - 1);
	}
}

void cfs_htab_remove(struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem)
{
	htab_remove(t, ops, elem, false);
}

/* as cfs_htab_remove(), but an emptied table keeps its buckets: re-inserting cannot fail */
void cfs_htab_remove_keep(struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem)
{
	htab_remove(t, ops, elem, true);
}

/* start loading the bucket of @hash: a hint, so that cache misses overlap */
void cfs_htab_prefetch(const struct classfs_htab *t, uint32_t hash)
{
	if (t->buckets)
		__builtin_prefetch(&t->buckets[bucket_of(hash, t->bits)]);
}

void *cfs_htab_chain(const struct classfs_htab *t, uint32_t hash)
{
	if (!t->buckets)
		return NULL;
	return t->buckets[bucket_of(hash, t->bits)];
}

/* the first element whose key is >= @key (a 61-bit value: 2^60 = end) */
void *cfs_htab_first_from(const struct classfs_htab *t, const struct cfs_htab_ops *ops,
			  uint64_t key)
{
	uint64_t hash = key >> CFS_HTAB_KEY2_BITS;

	if (!t->buckets || hash > UINT32_MAX)
		return NULL;
	uint32_t n = 1u << t->bits;

	for (uint32_t i = bucket_of((uint32_t)hash, t->bits); i < n; i++) {
		for (void *e = t->buckets[i]; e; e = *link_ptr(ops, e))
			if (cfs_htab_key(ops, e) >= key)
				return e;
	}
	return NULL;
}

void *cfs_htab_next(const struct classfs_htab *t, const struct cfs_htab_ops *ops, void *elem)
{
	void *n = *link_ptr(ops, elem);

	if (n)
		return n;
	uint32_t nb = 1u << t->bits;

	for (uint32_t i = bucket_of(ops->hash(elem), t->bits) + 1; i < nb; i++)
		if (t->buckets[i])
			return t->buckets[i];
	return NULL;
}

void cfs_htab_destroy(struct classfs_htab *t)
{
	cfs_free(t->buckets);
	t->buckets = NULL;
	t->bits = 0;
	t->count = 0;
}

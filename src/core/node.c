// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * node.c - the node tree (the kernfs of classfs): node ids with
 * generations, directories, links, active references and their drain,
 * and the per-thread record of running callbacks.
 */
#include "internal.h"

static uint32_t node_hash(const void *e)
{
	return ((const struct classfs_node *)e)->hash;
}

/* ids are given before a node is linked and kept while it is */
static uint32_t node_id(const void *e)
{
	return ((const struct classfs_node *)e)->id;
}

const struct cfs_htab_ops cfs_node_htab_ops = {
	.next_off = offsetof(struct classfs_node, next),
	.hash = node_hash,
	.key2 = node_id,
};

void cfs_node_init(struct classfs_node *n, const char *name, int type, mode_t mode, int flags)
{
	*n = (struct classfs_node){
		.name = name,
		.hash = name ? cfs_hash_name(name) : 0,
		.type = (uint8_t)type,
		.mode = (uint16_t)(mode & 07777),
		.flags = (uint16_t)flags,
	};
}

/* a node with its name stored behind it, not yet in the tree */
struct classfs_node *cfs_node_new(const char *name, int type, mode_t mode)
{
	size_t len = strlen(name) + 1;
	struct classfs_node *n = cfs_malloc(sizeof(*n) + len);

	if (!n)
		return NULL;
	memcpy((char *)(n + 1), name, len);
	cfs_node_init(n, (char *)(n + 1), type, mode, CFS_NF_ALLOC);
	return n;
}

void cfs_node_free(struct classfs_node *n)
{
	if (n->flags & CFS_NF_OWN_ATTR)
		cfs_free((void *)n->u.attr);
	if (n->flags & CFS_NF_VALUE)
		cfs_value_free(n->u.attr);
	if (n->flags & CFS_NF_USER_LINK)
		cfs_user_link_free(n);
	if (n->type == CFS_NT_DIR && n->u.dir) {
		cfs_htab_destroy(n->u.dir);
		cfs_free(n->u.dir);
		n->u.dir = NULL;
	}
	if (n->flags & CFS_NF_OWN_NAME) {
		cfs_free((void *)n->name);
		n->name = NULL;
		n->flags &= (uint16_t)~CFS_NF_OWN_NAME;
	}
	if (n->flags & CFS_NF_ALLOC)
		cfs_free(n);
}

/*
 * Ids: slot i of tree->ids holds the live node (an even pointer) or, when
 * free, (next_free << 32 | generation << 1 | 1).  Free slots are reused
 * oldest first and each reuse bumps the generation, so an inode number
 * (generation, id, slot) of a removed node stays stale for a long time.
 */
#define FREE_SLOT(next, gen) (((uintptr_t)(next) << 32) | ((uintptr_t)((gen) & 0x7fffffff) << 1) | 1)
#define NO_FREE UINT32_MAX

int cfs_node_id_alloc(struct classfs_tree *t, struct classfs_node *n)
{
	uint32_t id;
	uint32_t gen = 0;

	if (t->nfree > 1024 || (t->nfree && t->nids >= CFS_MAX_ID)) {
		id = t->free_head;
		uintptr_t v = t->ids[id];

		t->free_head = (uint32_t)(v >> 32);
		if (--t->nfree == 0)
			t->free_head = t->free_tail = NO_FREE;
		gen = (uint32_t)((v >> 1) & 0x7fffffff) + 1;
	} else {
		if (t->nids > CFS_MAX_ID)
			return -ENOSPC;
		if (t->nids == t->ids_cap) {
			uint32_t cap = t->ids_cap ? t->ids_cap * 2 : 1024;
			uintptr_t *ids = cfs_realloc(t->ids, cap * sizeof(*ids));

			if (!ids)
				return -ENOMEM;
			t->ids = ids;
			t->ids_cap = cap;
		}
		id = t->nids++;
	}
	t->ids[id] = (uintptr_t)n;
	n->id = id;
	n->gen = gen;
	t->live_nodes++;
	return 0;
}

void cfs_node_id_release(struct classfs_tree *t, struct classfs_node *n)
{
	uint32_t id = n->id;

	if (id == 0 || id >= t->nids || t->ids[id] != (uintptr_t)n)
		return;
	t->ids[id] = FREE_SLOT(NO_FREE, n->gen);
	if (t->nfree == 0)
		t->free_head = id;
	else
		t->ids[t->free_tail] = FREE_SLOT(id, (t->ids[t->free_tail] >> 1) & 0x7fffffff);
	t->free_tail = id;
	t->nfree++;
	t->live_nodes--;
}

struct classfs_node *cfs_node_by_id(struct classfs_tree *t, uint32_t id)
{
	if (id >= t->nids || (t->ids[id] & 1))
		return NULL;
	return (struct classfs_node *)t->ids[id];
}

struct classfs_tree *cfs_node_tree(const struct classfs_node *n)
{
	while (n->parent)
		n = n->parent;
	return cfs_container_of(n, struct classfs_tree, root);
}

struct classfs_node *cfs_dir_lookup(const struct classfs_node *dir, const char *name)
{
	uint32_t h;

	if (dir->type != CFS_NT_DIR || !dir->u.dir)
		return NULL;
	h = cfs_hash_name(name);
	for (struct classfs_node *n = cfs_htab_chain(dir->u.dir, h); n; n = n->next) {
		if (n->hash > h)
			break;
		if (n->hash == h && !strcmp(n->name, name))
			return n;
	}
	return NULL;
}

int cfs_dir_reserve(struct classfs_node *dir)
{
	if (!dir->u.dir) {
		dir->u.dir = cfs_zalloc(sizeof(*dir->u.dir));
		if (!dir->u.dir)
			return -ENOMEM;
	}
	if (cfs_htab_reserve(dir->u.dir) < 0) {
		if (!dir->u.dir->count) {
			cfs_free(dir->u.dir);
			dir->u.dir = NULL;
		}
		return -ENOMEM;
	}
	return 0;
}

/* after cfs_dir_reserve(): cannot fail */
void cfs_dir_link(struct classfs_node *dir, struct classfs_node *n)
{
	/*
	 * A rename links a node again into the same directory: its parent
	 * pointer, which cfs_node_tree() follows without L, is left alone.
	 */
	if (n->parent != dir)
		n->parent = dir;
	cfs_htab_insert(dir->u.dir, &cfs_node_htab_ops, n);
	cfs_watch_node_locked(n);
}

static void dir_unlink(struct classfs_node *n, bool keep)
{
	struct classfs_node *dir = n->parent;

	if (!dir || !dir->u.dir)
		return;
	cfs_watch_node_locked(n);
	cfs_watch_gone_locked(n);
	if (keep) {
		cfs_htab_remove_keep(dir->u.dir, &cfs_node_htab_ops, n);
		return;
	}
	cfs_htab_remove(dir->u.dir, &cfs_node_htab_ops, n);
	if (!dir->u.dir->count) {
		cfs_free(dir->u.dir);
		dir->u.dir = NULL;
	}
}

void cfs_dir_unlink(struct classfs_node *n)
{
	dir_unlink(n, false);
}

/* as cfs_dir_unlink(), but the directory keeps its table: re-linking cannot fail */
void cfs_dir_unlink_keep(struct classfs_node *n)
{
	dir_unlink(n, true);
}

/* give @n an id and put it in @dir; under L; -EEXIST, -ENOMEM, -ENOSPC */
int cfs_node_add(struct classfs_tree *t, struct classfs_node *dir, struct classfs_node *n)
{
	int r;

	if (cfs_dir_lookup(dir, n->name))
		return -EEXIST;
	r = cfs_dir_reserve(dir);
	if (r < 0)
		return r;
	r = cfs_node_id_alloc(t, n);
	if (r < 0) {
		if (!dir->u.dir->count) {
			cfs_htab_destroy(dir->u.dir);
			cfs_free(dir->u.dir);
			dir->u.dir = NULL;
		}
		return r;
	}
	cfs_dir_link(dir, n);
	return 0;
}

struct classfs_node *cfs_mkdir(struct classfs_tree *t, struct classfs_node *dir, const char *name)
{
	struct classfs_node *n = cfs_node_new(name, CFS_NT_DIR, 0755);

	if (!n)
		return NULL;
	if (cfs_node_add(t, dir, n) < 0) {
		cfs_node_free(n);
		return NULL;
	}
	return n;
}

#define CFS_MAX_DEPTH 128

/* the name events know @n by: the old one while its rename's MOVE is pending */
static const char *event_name(const struct classfs_tree *t, const struct classfs_node *n)
{
	if (t && (n->flags & CFS_NF_DEVICE))
		for (const struct cfs_move *m = t->moves; m; m = m->next)
			if (&m->dev->p.node == n)
				return m->old_name;
	return n->name;
}

static int node_path(const struct classfs_tree *t, const struct classfs_node *n, char *buf,
		     size_t size)
{
	const struct classfs_node *stack[CFS_MAX_DEPTH];
	int depth = 0;
	size_t len = 0;

	for (; n->parent; n = n->parent) {
		if (depth == CFS_MAX_DEPTH)
			return -ELOOP;
		stack[depth++] = n;
	}
	if (size)
		buf[0] = '\0';
	while (depth--) {
		const char *name = event_name(t, stack[depth]);
		size_t l = strlen(name);

		if (len + 1 + l + 1 > size)
			return -ERANGE;
		buf[len++] = '/';
		memcpy(buf + len, name, l);
		len += l;
		buf[len] = '\0';
	}
	return (int)len;
}

/* "/a/b/c" below the root ("" for the root itself); length or -ERANGE */
int cfs_node_path(const struct classfs_node *n, char *buf, size_t size)
{
	return node_path(NULL, n, buf, size);
}

/*
 * Under L: the DEVPATH events give @n.  A renamed device keeps its old
 * name there until its MOVE is numbered, so that events numbered in
 * between (a child's ADD, a REMOVE) speak of the tree as listeners know it.
 */
int cfs_event_path_locked(struct classfs_tree *t, const struct classfs_node *n, char *buf,
			  size_t size)
{
	cfs_assert_held(t);
	return node_path(t->moves ? t : NULL, n, buf, size);
}

/* the relative path from directory @from_dir to @to ("../../class/x") */
int cfs_rel_path(const struct classfs_node *from_dir, const struct classfs_node *to, char *buf,
		 size_t size)
{
	const struct classfs_node *a[CFS_MAX_DEPTH], *b[CFS_MAX_DEPTH];
	int na = 0, nb = 0, common = 0;
	size_t len = 0;

	for (const struct classfs_node *n = from_dir; n; n = n->parent) {
		if (na == CFS_MAX_DEPTH)
			return -ELOOP;
		a[na++] = n;
	}
	for (const struct classfs_node *n = to; n; n = n->parent) {
		if (nb == CFS_MAX_DEPTH)
			return -ELOOP;
		b[nb++] = n;
	}
	/* a[na-1] and b[nb-1] are the root */
	while (common < na && common < nb && a[na - 1 - common] == b[nb - 1 - common])
		common++;
	/* a link to an ancestor still ends in its name ("../../block", not
	 * "../.."): tools take the basename of `subsystem` and `device` */
	if (common == nb && nb > 1)
		common--;
	if (size)
		buf[0] = '\0';
	for (int i = 0; i < na - common; i++) {
		if (len + 3 + 1 > size)
			return -ERANGE;
		memcpy(buf + len, "../", 3);
		len += 3;
	}
	for (int i = nb - 1 - common; i >= 0; i--) {
		size_t l = strlen(b[i]->name);

		if (len + l + 2 > size)
			return -ERANGE;
		memcpy(buf + len, b[i]->name, l);
		len += l;
		buf[len++] = '/';
	}
	if (len && buf[len - 1] == '/')
		len--;
	if (len == 0) {
		if (size < 2)
			return -ERANGE;
		buf[len++] = '.';
	}
	buf[len] = '\0';
	return (int)len;
}

/* ---- active references ---- */

bool cfs_active_get(struct classfs_node *n)
{
	int v = __atomic_load_n(&n->active, __ATOMIC_RELAXED);

	do {
		if (v < 0)
			return false;
	} while (!__atomic_compare_exchange_n(&n->active, &v, v + 1, true, __ATOMIC_ACQUIRE,
					      __ATOMIC_RELAXED));
	return true;
}

void cfs_active_put(struct classfs_tree *t, struct classfs_node *n)
{
	if (__atomic_sub_fetch(&n->active, 1, __ATOMIC_RELEASE) == CFS_ACTIVE_BIAS) {
		/* last one out of a deactivated node wakes the drainer */
		cfs_lock(t);
		pthread_cond_broadcast(&t->drained);
		cfs_unlock(t);
	}
}

void cfs_deactivate(struct classfs_node *n)
{
	if (__atomic_load_n(&n->active, __ATOMIC_ACQUIRE) >= 0)
		__atomic_add_fetch(&n->active, CFS_ACTIVE_BIAS, __ATOMIC_ACQ_REL);
}

/* is @n, seen live as (@id, @gen) before L was dropped, still there? (under L) */
static bool node_still_there(struct classfs_tree *t, struct classfs_node *n, uint32_t id,
			     uint32_t gen)
{
	return cfs_node_by_id(t, id) == n && n->gen == gen;
}

/*
 * Under L: wait (L released meanwhile) until no active reference is left.
 * Return: false when someone else removed @n meanwhile (a file taken away
 * with its device): @n may be freed, the caller must not touch it.
 */
bool cfs_drain_locked(struct classfs_tree *t, struct classfs_node *n)
{
	uint32_t id = n->id, gen = n->gen;

	cfs_assert_held(t);
	while (__atomic_load_n(&n->active, __ATOMIC_ACQUIRE) != CFS_ACTIVE_BIAS) {
		cfs_wait_locked(t, &t->drained);
		if (!node_still_there(t, n, id, gen))
			return false;
	}
	return true;
}

/* ---- removal of subtrees (under L) ---- */

static void subtree_walk(struct classfs_node *n, void (*fn)(struct classfs_node *, void *),
			 void *data)
{
	fn(n, data);
	if (n->type == CFS_NT_DIR && n->u.dir && n->u.dir->buckets) {
		uint32_t nb = 1u << n->u.dir->bits;

		for (uint32_t i = 0; i < nb; i++)
			for (struct classfs_node *c = n->u.dir->buckets[i]; c; c = c->next)
				subtree_walk(c, fn, data);
	}
}

static void deactivate_one(struct classfs_node *n, void *data)
{
	(void)data;
	cfs_deactivate(n);
}

void cfs_subtree_deactivate(struct classfs_node *n)
{
	subtree_walk(n, deactivate_one, NULL);
}

/* under L: a node at or below @n that still has active references */
static struct classfs_node *subtree_find_active(struct classfs_node *n)
{
	if (__atomic_load_n(&n->active, __ATOMIC_ACQUIRE) != CFS_ACTIVE_BIAS)
		return n;
	if (n->type == CFS_NT_DIR && n->u.dir && n->u.dir->buckets) {
		uint32_t nb = 1u << n->u.dir->bits;

		for (uint32_t i = 0; i < nb; i++)
			for (struct classfs_node *c = n->u.dir->buckets[i]; c; c = c->next) {
				struct classfs_node *busy = subtree_find_active(c);

				if (busy)
					return busy;
			}
	}
	return NULL;
}

/*
 * Under L: remove @n (a file, a link, a directory of its own) once no
 * show()/store() of it or below it runs; its nodes go on @freelist.
 * Return: 0 (also when someone else removed it meanwhile), -EDEADLK (a
 * callback of this thread runs on it).
 */
int cfs_node_remove_locked(struct classfs_tree *t, struct classfs_node *n,
			   struct classfs_node **freelist)
{
	cfs_assert_held(t);
	if (cfs_active_held_below(n))
		return -EDEADLK;
	cfs_deactivate(n);
	/* false: removed with its device (or by a twin call) meanwhile */
	if (cfs_drain_locked(t, n))
		cfs_subtree_unlink(t, n, freelist);
	return 0;
}

/*
 * Called with L held, after the caller's checks (@r: 0, or why @n may
 * not go in): put file @n in @dir, its definition freed with it when
 * @owned, and release L; then free @n on error or let the views know.
 * Return: @r, or cfs_node_add()'s error.
 */
int cfs_file_add_unlock(struct classfs_tree *t, struct classfs_node *dir, struct classfs_node *n,
			int r, bool owned)
{
	cfs_assert_held(t);
	if (!r)
		r = cfs_node_add(t, dir, n);
	if (!r && owned)
		n->flags |= CFS_NF_OWN_ATTR;
	cfs_unlock(t);
	if (r < 0)
		cfs_node_free(n);
	else
		cfs_watch_sync(t);
	return r;
}

/* as cfs_drain_locked(), for @n and everything below it */
bool cfs_subtree_drain_locked(struct classfs_tree *t, struct classfs_node *n)
{
	uint32_t id = n->id, gen = n->gen;

	cfs_assert_held(t);
	/*
	 * Waiting drops L, and meanwhile other threads may remove files or
	 * devices below @n (freeing their nodes): walk again from @n, never
	 * from where the walk stopped.
	 */
	while (subtree_find_active(n)) {
		cfs_wait_locked(t, &t->drained);
		if (!node_still_there(t, n, id, gen))
			return false;
	}
	return true;
}

/*
 * Unlink @n and everything below it, release their ids and mark them dead;
 * allocated nodes are chained on @freelist (through ->next) to be freed
 * after L is dropped; embedded ones belong to their objects.
 */
void cfs_subtree_unlink(struct classfs_tree *t, struct classfs_node *n,
			struct classfs_node **freelist)
{
	if (n->type == CFS_NT_DIR && n->u.dir) {
		struct classfs_node *c;
		uint64_t from = 0;

		/*
		 * From the key of the child just unlinked, not from 0: the
		 * smallest key goes each time, and a scan from the first
		 * bucket past the emptied ones made removing a directory of
		 * 100,000 entries quadratic (tens of seconds)
		 */
		while (n->u.dir && (c = cfs_htab_first_from(n->u.dir, &cfs_node_htab_ops, from))) {
			from = cfs_htab_key(&cfs_node_htab_ops, c);
			cfs_subtree_unlink(t, c, freelist);
		}
	}
	cfs_dir_unlink(n);
	cfs_node_id_release(t, n);
	n->flags |= CFS_NF_DEAD;
	if (n->flags & CFS_NF_ALLOC) {
		n->next = *freelist;
		*freelist = n;
	}
}

void cfs_free_list(struct classfs_node *freelist)
{
	while (freelist) {
		struct classfs_node *next = freelist->next;

		cfs_node_free(freelist);
		freelist = next;
	}
}

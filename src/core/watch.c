// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * watch.c - how views learn of changes: every directory entry that
 * appears or goes (real or computed), every stored value replaced,
 * attribute notifications, and a sync point at the end of each API call
 * that changed the tree.
 *
 * changed() runs under L and must only record (the FUSE layer queues an
 * invalidation for its notifier thread); sync() and notify() run without
 * locks at the end of the call.  So when an API call returns, every view
 * has pushed what the call changed.
 */
#include "internal.h"

static int cfs_watchers_active;	/* any tree has watchers: skip the work otherwise */

int classfs_tree_watch_add(struct classfs_tree *tree, const struct classfs_watch_ops *ops,
			   void *data)
{
	int id;

	if (!tree || !ops)
		return -EINVAL;
	cfs_lock(tree);
	if (tree->nwatches == CFS_MAX_WATCHES) {
		cfs_unlock(tree);
		return -ENOSPC;
	}
	id = ++tree->watch_ids;
	tree->watches[tree->nwatches++] = (struct cfs_watch){ ops, data, id };
	__atomic_add_fetch(&cfs_watchers_active, 1, __ATOMIC_RELEASE);
	cfs_unlock(tree);
	return id;
}

int classfs_tree_watch_remove(struct classfs_tree *tree, int id)
{
	int i;

	if (!tree)
		return -EINVAL;
	cfs_lock(tree);
	for (i = 0; i < tree->nwatches; i++)
		if (tree->watches[i].id == id)
			break;
	if (i == tree->nwatches) {
		cfs_unlock(tree);
		return -ENOENT;
	}
	memmove(&tree->watches[i], &tree->watches[i + 1],
		sizeof(tree->watches[0]) * (size_t)(tree->nwatches - i - 1));
	tree->nwatches--;
	__atomic_sub_fetch(&cfs_watchers_active, 1, __ATOMIC_RELEASE);
	cfs_unlock(tree);
	return 0;
}

static inline bool watched(void)
{
	return __atomic_load_n(&cfs_watchers_active, __ATOMIC_ACQUIRE) != 0;
}

/* under L: entry @name of directory @dir (computed slot @slot) appeared or went */
void cfs_watch_entry_locked(struct classfs_tree *t, const struct classfs_node *dir,
			    unsigned int slot, const char *name)
{
	cfs_assert_held(t);
	if (!watched() || !t->nwatches || !dir || (dir->flags & CFS_NF_DEAD))
		return;
	uint64_t ino = cfs_ino(dir, slot);

	for (int i = 0; i < t->nwatches; i++)
		if (t->watches[i].ops->changed)
			t->watches[i].ops->changed(t->watches[i].data, ino, name);
}

/* under L: a real node was linked into or unlinked from its directory */
void cfs_watch_node_locked(const struct classfs_node *n)
{
	if (!watched() || !n->parent)
		return;
	cfs_watch_entry_locked(cfs_node_tree(n), n->parent, 0, n->name);
}

/* under L: tell each watch that file @ino, entry @name of @dir, has another value */
static void value_locked(struct classfs_tree *t, uint64_t dir, const char *name, uint64_t ino)
{
	for (int i = 0; i < t->nwatches; i++)
		if (t->watches[i].ops->value)
			t->watches[i].ops->value(t->watches[i].data, dir, name, ino);
}

/*
 * under L: node @n leaves its directory.  A view that caches stored values
 * drops those of @n (a stored value itself, or a device's `dev` and
 * recorded attributes), so a file still open on them reads ENODEV, as in
 * sysfs, rather than the value cached before.
 */
void cfs_watch_gone_locked(const struct classfs_node *n)
{
	if (!watched() || !n->parent)
		return;
	struct classfs_tree *t = cfs_node_tree(n);

	if (!t->nwatches)
		return;
	if (n->flags & CFS_NF_VALUE) {
		value_locked(t, cfs_ino(n->parent, 0), n->name, cfs_ino(n, 0));
		return;
	}
	if (!(n->flags & CFS_NF_DEVICE))
		return;
	struct classfs_device *dev = cfs_node_device(n);
	const struct classfs_attribute_group *grp;

	if (major(dev->devt))
		value_locked(t, cfs_ino(n, 0), "dev", cfs_ino(n, CFS_SLOT_DEV));
	for (unsigned int g = 1; g <= CFS_MAX_VGROUPS && (grp = cfs_vgroup(dev, g)); g++) {
		uint64_t dir = grp->name ? cfs_ino(n, cfs_group_slot(g, CFS_SLOT_GROUP_DIR))
					 : cfs_ino(n, 0);

		for (unsigned int a = 0; grp->attrs && grp->attrs[a] && a < CFS_GROUP_MAX_ATTRS; a++)
			if (grp->attrs[a]->show == cfs_stored_show)
				value_locked(t, dir, grp->attrs[a]->attr.name,
					     cfs_ino(n, cfs_group_slot(g, a)));
	}
}

/* under L: an entry moved (renamed): links, relative paths, may read otherwise now */
void cfs_watch_moved_locked(struct classfs_tree *t)
{
	cfs_assert_held(t);
	if (!watched())
		return;
	for (int i = 0; i < t->nwatches; i++)
		if (t->watches[i].ops->moved)
			t->watches[i].ops->moved(t->watches[i].data);
}

/* under L: the entries a device shows outside its own directory */
void cfs_watch_device_locked(struct classfs_tree *t, const struct classfs_device *dev)
{
	char buf[32];

	cfs_assert_held(t);
	if (!watched() || !t->nwatches)
		return;
	if (dev->cls) {
		cfs_watch_entry_locked(t, &dev->cls->p.node, 0, dev->p.node.name);
		if (dev->cls->p.block)
			cfs_watch_entry_locked(t, t->block_dir, 0, dev->p.node.name);
	}
	if (major(dev->devt)) {
		snprintf(buf, sizeof(buf), "%u:%u", major(dev->devt), minor(dev->devt));
		cfs_watch_entry_locked(t, dev->cls && dev->cls->p.block ? t->dev_block : t->dev_char,
				       0, buf);
	}
}

/* a copy of @t's watches, to call without its lock */
static int watch_snapshot(struct classfs_tree *t, struct cfs_watch *w)
{
	int n;

	cfs_lock(t);
	n = t->nwatches;
	memcpy(w, t->watches, sizeof(w[0]) * (size_t)n);
	cfs_unlock(t);
	return n;
}

/* without locks, at the end of a call that changed @t (held while deferred) */
void cfs_watch_sync(struct classfs_tree *t)
{
	struct cfs_watch w[CFS_MAX_WATCHES];
	int n;

	if (!watched() || cfs_self()->watch_deferred)
		return;
	n = watch_snapshot(t, w);
	for (int i = 0; i < n; i++)
		if (w[i].ops->sync)
			w[i].ops->sync(w[i].data);
}

/*
 * classfs_sync_defer(), classfs_sync_resume(): documented in classfs.h.
 *
 * For one API call made of many (a record load builds thousands of
 * devices, each an API call of its own, before it announces any): the
 * views keep pushing what they record as it comes, and the call waits for
 * them once, at classfs_sync_resume(), instead of after every device.  The
 * contract stays that of the outer call: when it returns, every view has
 * pushed what it changed.  Nests.
 */
void classfs_sync_defer(void)
{
	cfs_self()->watch_deferred++;
}

void classfs_sync_resume(struct classfs_tree *t)
{
	struct cfs_thread *me = cfs_self();

	if (me->watch_deferred && !--me->watch_deferred && t)
		cfs_watch_sync(t);
}

/*
 * without locks, at the end of a call: the value of file @ino changed
 * (stored bytes replaced, or a notification), so a view that caches it
 * drops it before the call returns (and before any uevent the caller
 * sends next)
 */
void cfs_watch_value(struct classfs_tree *t, uint64_t ino)
{
	struct cfs_entry e;
	const char *name;
	char buf[32];
	bool any = false;

	if (!watched())
		return;
	cfs_lock(t);
	if (t->nwatches && cfs_resolve_locked(t, ino, &e) == 0) {
		uint64_t dir = cfs_entry_dir(&e, &name, buf, sizeof(buf));

		value_locked(t, dir, name, ino);
		any = true;
	}
	cfs_unlock(t);
	if (any)
		cfs_watch_sync(t);
}

/* without locks: attribute @ino was notified (sysfs_notify) */
void cfs_watch_notify(struct classfs_tree *t, uint64_t ino)
{
	struct cfs_watch w[CFS_MAX_WATCHES];
	int n = watch_snapshot(t, w);

	for (int i = 0; i < n; i++)
		if (w[i].ops->notify)
			w[i].ops->notify(w[i].data, ino);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * device-del.c - removing a device: its interfaces' remove() first, then
 * every device that depends on it (nested class devices, devices whose
 * physical device it is, physical devices below it), deepest first, then
 * its REMOVE event and its nodes, in the reverse of device_add()'s order.
 *
 * Once classfs_device_del() returns, no show()/store() of the device runs
 * or can start (its subtree is deactivated and drained under L).  A
 * callback removing its own device goes through
 * classfs_device_unregister_self(), which defers the freeing of the
 * nodes the callback may still use.
 */
#include "internal.h"

/*
 * The devices that depend on @dev (under L): class devices nested in it,
 * devices whose physical device it is, physical devices below it.  In both
 * layouts each is found from @dev's directory: a child directory, a child
 * of a glue directory or of a plain directory, or the target of a
 * "CLASS:NAME" link.
 */
struct dev_vec {
	struct classfs_device **v;
	size_t n, cap;
	bool busy;	/* one is being removed by another thread */
	struct classfs_device *inl[8];	/* so that a round never comes back empty for lack of memory */
};

static bool removing_here(const struct classfs_device *dev)
{
	for (const struct cfs_removal *r = cfs_self()->removals; r; r = r->prev)
		if (r->dev == dev)
			return true;
	return false;
}

static void vec_add(struct dev_vec *vec, struct classfs_device *d)
{
	if (!cfs_dev_alive(d)) {
		if (cfs_dev_state(d, CFS_DS_ADDED) && !removing_here(d))
			vec->busy = true;
		return;
	}
	for (size_t i = 0; i < vec->n; i++)
		if (vec->v[i] == d)
			return;
	if (vec->n == vec->cap) {
		size_t cap = vec->cap * 2;
		struct classfs_device **v = cfs_malloc(cap * sizeof(*v));

		if (!v)
			return;	/* found again by the next round */
		memcpy(v, vec->v, vec->n * sizeof(*v));
		if (vec->v != vec->inl)
			cfs_free(vec->v);
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = classfs_device_get(d);
}

static void collect_dir(struct classfs_tree *t, struct classfs_device *dev,
			struct classfs_node *dir, struct dev_vec *vec)
{
	if (!dir->u.dir || !dir->u.dir->buckets)
		return;
	for (struct classfs_node *c = cfs_htab_first_from(dir->u.dir, &cfs_node_htab_ops, 0); c;
	     c = cfs_htab_next(dir->u.dir, &cfs_node_htab_ops, c)) {
		if (c->flags & CFS_NF_DEVICE)
			vec_add(vec, cfs_node_device(c));
		else if (c->type == CFS_NT_LNK && !(c->flags & CFS_NF_USER_LINK) && c->u.target &&
			 (c->u.target->flags & CFS_NF_DEVICE) &&
			 cfs_node_device(c->u.target)->phys == dev)
			vec_add(vec, cfs_node_device(c->u.target));
		else if (cfs_is_glue_dir(t, c) ||
			 (c->type == CFS_NT_DIR && (c->flags & CFS_NF_PLAIN_DIR)))
			collect_dir(t, dev, c, vec);
	}
}

static void remove_dependents(struct classfs_tree *t, struct classfs_device *dev)
{
	for (;;) {
		struct dev_vec vec = { 0 };

		vec.v = vec.inl;
		vec.cap = CFS_ARRAY_SIZE(vec.inl);
		cfs_lock(t);
		collect_dir(t, dev, &dev->p.node, &vec);
		/*
		 * Those another thread is removing go before @dev does: their
		 * REMOVE comes first and their nodes are theirs to unlink.
		 */
		while (!vec.n && vec.busy) {
			cfs_wait_locked(t, &t->removed);
			vec.busy = false;
			collect_dir(t, dev, &dev->p.node, &vec);
		}
		cfs_unlock(t);
		if (!vec.n)
			return;
		for (size_t i = 0; i < vec.n; i++) {
			/* gone automatically: its registration reference goes too */
			if (classfs_device_del(vec.v[i]) == 0)
				classfs_device_put(vec.v[i]);
			classfs_device_put(vec.v[i]);
		}
		if (vec.v != vec.inl)
			cfs_free(vec.v);
	}
}

/* under L: the nearest device or class directory above @dev */
static struct classfs_node *holder_of(struct classfs_device *dev)
{
	for (struct classfs_node *n = dev->p.node.parent; n; n = n->parent)
		if (n->flags & (CFS_NF_DEVICE | CFS_NF_CLASS))
			return n;
	return NULL;
}

/*
 * A plain directory, with an id, to take @dev's place (classfs_device_del_keep());
 * under L.  NULL: no memory.
 */
static struct classfs_node *keep_dir_new(struct classfs_tree *t, struct classfs_device *dev)
{
	struct classfs_node *x = cfs_node_new(dev->p.node.name, CFS_NT_DIR, 0755);

	if (x && cfs_node_id_alloc(t, x) < 0) {
		cfs_node_free(x);
		x = NULL;
	}
	return x;
}

/*
 * @caller: the frame of the callback removing its own device, else NULL.
 * @keep: what the device's directory holds stays (classfs_device_del_keep()).
 */
static int device_del(struct classfs_device *dev, struct cfs_frame *caller, bool keep)
{
	struct classfs_node *freelist = NULL, *dir, *x = NULL;
	struct classfs_tree *t;
	struct cfs_event *ev = NULL;
	struct cfs_frame *self;
	struct cfs_thread *me = cfs_self();
	struct cfs_removal removal;
	unsigned int puts = 0;

	if (!dev || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	cfs_lock(t);
	if (!cfs_dev_alive(dev)) {
		cfs_unlock(t);
		return -EINVAL;
	}
	/*
	 * Only the thread that becomes the remover gives up its callback's
	 * reference: a removal another thread started still waits for the
	 * callback, and so does the removal of what is above the device.
	 */
	if (caller)
		cfs_frame_release_locked(t, caller, holder_of(dev));
	if (cfs_active_held_below(&dev->p.node)) {
		cfs_unlock(t);
		return -EDEADLK;
	}
	if (keep && !(x = keep_dir_new(t, dev))) {
		cfs_unlock(t);
		return -ENOMEM;
	}
	cfs_dev_state_set(dev, CFS_DS_REMOVING);
	cfs_unlock(t);
	removal = (struct cfs_removal){ dev, me->removals };
	me->removals = &removal;

	/* its interfaces first: a driver tears down what it hung below */
	if (dev->cls)
		cfs_interfaces_remove_device(dev);
	if (!keep)
		remove_dependents(t, dev);

	if (cfs_event_needed(dev)) {
		ev = cfs_event_alloc();
		if (ev && cfs_event_fill(dev, ev, NULL)) {
			cfs_event_discard(ev);	/* vetoed */
			ev = NULL;
		}
	}

	cfs_lock(t);
	/* once this returns no show()/store() of the device runs or starts */
	if (keep) {
		/* its own entries only: what it holds stays */
		cfs_deactivate(&dev->p.node);
		cfs_drain_locked(t, &dev->p.node);
	} else {
		cfs_subtree_deactivate(&dev->p.node);
		cfs_subtree_drain_locked(t, &dev->p.node);
	}
	cfs_event_emit_locked(t, ev, CLASSFS_ACTION_REMOVE, dev, NULL);
	cfs_dev_state_clear(dev, CFS_DS_ADD_SENT);
	cfs_watch_device_locked(t, dev);
	if (cfs_wants_backlink(t, dev)) {
		struct classfs_node *bl = cfs_backlink_find(dev);

		if (bl)
			cfs_subtree_unlink(t, bl, &freelist);
	}
	if (dev->bus) {
		struct classfs_node *bl = cfs_dir_lookup(dev->bus->p.devices, dev->p.node.name);

		if (bl)
			cfs_subtree_unlink(t, bl, &freelist);
		dev->bus->p.ndevices--;
	}
	if (dev->cls)
		cfs_htab_remove(&dev->cls->p.names, &cfs_name_htab_ops, dev);
	if (dev->cls && dev->parent)
		dev->cls->p.nested--;
	if (major(dev->devt))
		cfs_htab_remove(&t->devts, &cfs_devt_htab_ops, dev);
	dir = dev->p.node.parent;
	if (keep) {
		puts = cfs_unfill_locked(t, dev, x);
		cfs_node_id_release(t, &dev->p.node);
		dev->p.node.flags |= CFS_NF_DEAD;
		dir = x;	/* it holding nothing, it goes */
	} else {
		cfs_subtree_unlink(t, &dev->p.node, &freelist);
		cfs_glue_put_locked(t, dir, &freelist);
	}
	/* a device that finds its tree by its directory's parents keeps them readable */
	cfs_made_put_locked(t, dir, !dev->cls && !dev->bus && !dev->parent, &freelist);
	/* what was unlinked through the filesystem shows again if it is added again */
	cfs_dev_state_clear(dev, CFS_DS_ADDED | CFS_DS_REMOVING | CFS_DS_LISTED | CFS_DS_HIDE_ALL |
				 CFS_DS_UNINDEXED);
	t->ndevices--;
	/* a parent's removal may be waiting for this one (remove_dependents()) */
	pthread_cond_broadcast(&t->removed);
	cfs_unlock(t);
	me->removals = removal.prev;

	cfs_watch_sync(t);
	cfs_events_deliver(t);
	/* from unregister_self(): the running callback may still use its file */
	self = cfs_frame_find_released(dev);
	if (self) {
		while (freelist) {
			struct classfs_node *n = freelist;

			freelist = n->next;
			n->next = self->deferred;
			self->deferred = n;
		}
	}
	cfs_free_list(freelist);
	/* the devices it held that are attached to its parent again */
	while (puts--)
		classfs_device_put(dev);
	classfs_device_put(dev->phys);
	classfs_device_put(dev->parent);
	return 0;
}

int classfs_device_del(struct classfs_device *dev)
{
	return device_del(dev, NULL, false);
}

int classfs_device_del_keep(struct classfs_device *dev)
{
	return device_del(dev, NULL, true);
}

int classfs_device_unregister(struct classfs_device *dev)
{
	int r = classfs_device_del(dev);

	if (r == 0)
		classfs_device_put(dev);
	return r;
}

int classfs_device_unregister_self(struct classfs_device *dev)
{
	struct cfs_frame *f;
	int r;

	if (!dev || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	f = cfs_frame_find_device(dev);
	if (!f)
		return -EINVAL;
	/* hold the device until the callback is done with it */
	classfs_device_get(dev);
	r = device_del(dev, f, false);
	if (r == 0)
		classfs_device_put(dev);	/* the registration reference */
	if (f->released && !f->put)
		f->put = dev;
	else
		classfs_device_put(dev);
	return r;
}


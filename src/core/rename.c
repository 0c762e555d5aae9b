// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rename.c - renaming a device and its MOVE event.
 */
#include "internal.h"

/* under L: the pending rename of @dev, if any */
static struct cfs_move *move_of(struct classfs_tree *t, const struct classfs_device *dev)
{
	cfs_assert_held(t);
	for (struct cfs_move *m = t->moves; m; m = m->next)
		if (m->dev == dev)
			return m;
	return NULL;
}

/*
 * The hooks of the MOVE event see the new name, so they run between the
 * rename and the numbering of its MOVE; meanwhile the device is listed in
 * t->moves and other events still use its old name in their DEVPATH.
 */
int classfs_device_rename(struct classfs_device *dev, const char *new_name)
{
	struct classfs_node *backlink = NULL, *oldlink = NULL, *dir, *freelist = NULL;
	struct classfs_node *buslink = NULL, *oldbus = NULL;
	char old_path[PATH_MAX];
	struct classfs_tree *t;
	struct cfs_event *ev;
	const char *old_name;
	struct cfs_move move, *m;
	char *copy;
	int r;

	if (!dev || classfs_name_valid(new_name) < 0 || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	copy = cfs_strdup(new_name);
	ev = cfs_event_alloc();
	if (!copy || !ev ||
	    (cfs_wants_backlink(t, dev) && !(backlink = cfs_backlink_new(dev, new_name))) ||
	    (dev->bus && !(buslink = cfs_node_new(new_name, CFS_NT_LNK, 0777)))) {
		r = -ENOMEM;
		goto out_free;
	}

	cfs_lock(t);
	/* one rename of a device at a time: the MOVE of the last one goes first */
	while ((m = move_of(t, dev))) {
		r = -EDEADLK;
		if (m->owner == cfs_self())
			goto out_unlock;
		cfs_wait_locked(t, &t->renamed);
	}
	r = -EINVAL;
	if (!cfs_dev_alive(dev))
		goto out_unlock;
	r = 0;
	if (!strcmp(dev->p.node.name, new_name))
		goto out_unlock;
	dir = dev->p.node.parent;
	r = -EEXIST;
	if ((dev->cls && (cfs_class_lookup_locked(dev->cls, new_name) ||
			  cfs_dir_lookup(&dev->cls->p.node, new_name))) ||
	    cfs_dir_lookup(dir, new_name) ||
	    (dir->flags & CFS_NF_DEVICE && cfs_name_is_virtual(cfs_node_device(dir), new_name)) ||
	    cfs_layout_clash_locked(t, dev, new_name))
		goto out_unlock;
	if (backlink) {
		oldlink = cfs_backlink_find(dev);
		if ((r = cfs_reserve_link(t, &dev->phys->p.node, backlink)) < 0)
			goto out_unlock;
	}
	/* a bus device's name is also its link in bus/BUS/devices: unique there */
	if (buslink) {
		oldbus = cfs_dir_lookup(dev->bus->p.devices, dev->p.node.name);
		if ((r = cfs_reserve_link(t, dev->bus->p.devices, buslink)) < 0)
			goto out_unlock;
	}
	r = cfs_node_path(&dev->p.node, old_path, sizeof(old_path));
	if (r < 0)
		goto out_unlock;

	cfs_watch_device_locked(t, dev);
	/* the tables stay allocated, so the re-links below cannot fail */
	cfs_dir_unlink_keep(&dev->p.node);
	if (dev->cls)
		cfs_htab_remove_keep(&dev->cls->p.names, &cfs_name_htab_ops, dev);
	/* events keep the old name until the MOVE (freed at the end) */
	move = (struct cfs_move){ dev, dev->p.node.name, cfs_self(), t->moves };
	t->moves = &move;
	old_name = (dev->p.node.flags & CFS_NF_OWN_NAME) ? dev->p.node.name : NULL;
	dev->p.node.name = copy;
	dev->p.node.flags |= CFS_NF_OWN_NAME;
	dev->p.node.hash = cfs_hash_name(copy);
	copy = (char *)old_name;
	cfs_dir_link(dir, &dev->p.node);
	if (dev->cls)
		cfs_htab_insert(&dev->cls->p.names, &cfs_name_htab_ops, dev);
	if (backlink) {
		/* linked before the old one goes, which could free the reserved table */
		backlink->u.target = &dev->p.node;
		cfs_dir_link(&dev->phys->p.node, backlink);
		backlink = NULL;
		if (oldlink)
			cfs_subtree_unlink(t, oldlink, &freelist);
	}
	if (buslink) {
		buslink->u.target = &dev->p.node;
		cfs_dir_link(dev->bus->p.devices, buslink);
		buslink = NULL;
		if (oldbus)
			cfs_subtree_unlink(t, oldbus, &freelist);
	}
	cfs_watch_device_locked(t, dev);
	cfs_unlock(t);
	cfs_watch_sync(t);

	/* the MOVE event carries the new name's variables: hooks run unlocked */
	if (cfs_event_fill(dev, ev, NULL)) {
		cfs_event_discard(ev);
		ev = NULL;
	}
	cfs_lock(t);
	/*
	 * DEVPATH_OLD as events knew it: the ancestors' pending renames too.
	 * Removed meanwhile, the device is unlinked and the directories above
	 * it may be freed: no path, and no MOVE after its REMOVE.
	 */
	r = cfs_dev_state(dev, CFS_DS_ADDED) ?
		    cfs_event_path_locked(t, &dev->p.node, old_path, sizeof(old_path)) : -ENODEV;
	for (struct cfs_move **pp = &t->moves; *pp; pp = &(*pp)->next)
		if (*pp == &move) {
			*pp = move.next;
			break;
		}
	pthread_cond_broadcast(&t->renamed);
	/* until its REMOVE is numbered, even a device being removed needs it */
	if (r >= 0 && cfs_dev_state(dev, CFS_DS_ADDED))
		cfs_event_emit_locked(t, ev, CLASSFS_ACTION_MOVE, dev, old_path);
	else
		cfs_event_discard(ev);
	ev = NULL;
	r = 0;
out_unlock:
	cfs_unlock(t);
	cfs_events_deliver(t);
	cfs_free_list(freelist);
out_free:
	cfs_free(copy);
	if (backlink)
		cfs_node_free(backlink);
	if (buslink)
		cfs_node_free(buslink);
	cfs_event_discard(ev);
	return r;
}

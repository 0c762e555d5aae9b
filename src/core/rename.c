// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * rename.c - renaming a device and its MOVE event.
 *
 * Everything that can fail is allocated first (the new name, the event,
 * the links that follow the name) and checked under L before anything
 * changes; then the device is renamed in one critical section.  The hooks
 * of the MOVE event see the new name, so they run between the rename and
 * the numbering of its MOVE; meanwhile the device is listed in t->moves
 * and other events still use its old name in their DEVPATH.
 */
#include "internal.h"

struct rename {
	struct classfs_device *dev;
	struct classfs_tree *t;
	char *name;			/* the new name, then the old one to free */
	struct cfs_event *ev;		/* the MOVE */
	struct classfs_node *backlink, *oldlink;	/* CLASS:NAME in the physical device */
	struct classfs_node *buslink, *oldbus;		/* bus/BUS/devices/NAME */
	struct classfs_node *freelist;
	struct cfs_move move;
	char old_path[PATH_MAX];
};

/* under L: the pending rename of @dev, if any */
static struct cfs_move *move_of(struct classfs_tree *t, const struct classfs_device *dev)
{
	cfs_assert_held(t);
	for (struct cfs_move *m = t->moves; m; m = m->next)
		if (m->dev == dev)
			return m;
	return NULL;
}

/* what the rename needs that could fail to allocate */
static int rename_alloc(struct rename *rn, const char *new_name)
{
	struct classfs_device *dev = rn->dev;

	rn->name = cfs_strdup(new_name);
	rn->ev = cfs_event_alloc();
	if (!rn->name || !rn->ev)
		return -ENOMEM;
	if (cfs_wants_backlink(rn->t, dev) && !(rn->backlink = cfs_backlink_new(dev, new_name)))
		return -ENOMEM;
	if (dev->bus && !(rn->buslink = cfs_node_new(new_name, CFS_NT_LNK, 0777)))
		return -ENOMEM;
	return 0;
}

/* under L: one rename of a device at a time, the MOVE of the last one first */
static int rename_wait_locked(struct rename *rn)
{
	struct cfs_move *m;

	while ((m = move_of(rn->t, rn->dev))) {
		if (m->owner == cfs_self())
			return -EDEADLK;	/* from a hook of its own MOVE */
		cfs_wait_locked(rn->t, &rn->t->renamed);
	}
	return 0;
}

/*
 * Under L: is the new name free wherever the device's name is used, and
 * can its links be re-made?  Reserves the links' places.  Return: 0, 1
 * (the name is the device's already: nothing to do), -errno.
 */
static int rename_check_locked(struct rename *rn)
{
	struct classfs_device *dev = rn->dev;
	struct classfs_node *dir = dev->p.node.parent;
	struct classfs_tree *t = rn->t;
	const char *name = rn->name;
	int r;

	if (!cfs_dev_alive(dev))
		return -EINVAL;
	if (!strcmp(dev->p.node.name, name))
		return 1;
	/* out of the name index (its class link unlinked), it claims no name there */
	if ((dev->cls && ((!cfs_dev_state(dev, CFS_DS_UNINDEXED) &&
			   cfs_class_lookup_locked(dev->cls, name)) ||
			  cfs_dir_lookup(&dev->cls->p.node, name))) ||
	    cfs_dir_lookup(dir, name) ||
	    (dir->flags & CFS_NF_DEVICE && cfs_name_is_virtual(cfs_node_device(dir), name)) ||
	    cfs_layout_clash_locked(t, dev, name))
		return -EEXIST;
	if (rn->backlink) {
		rn->oldlink = cfs_backlink_find(dev);
		r = cfs_reserve_link(t, &dev->phys->p.node, rn->backlink);
		if (r < 0)
			return r;
	}
	/* a bus device's name is also its link in bus/BUS/devices: unique there */
	if (rn->buslink) {
		rn->oldbus = cfs_dir_lookup(dev->bus->p.devices, dev->p.node.name);
		r = cfs_reserve_link(t, dev->bus->p.devices, rn->buslink);
		if (r < 0)
			return r;
	}
	r = cfs_node_path(&dev->p.node, rn->old_path, sizeof(rn->old_path));
	return r < 0 ? r : 0;
}

/* under L, after rename_check_locked(): @link replaces @old in @dir; cannot fail */
static void rename_link_locked(struct rename *rn, struct classfs_node *dir,
			       struct classfs_node **link, struct classfs_node *old)
{
	/* linked before the old one goes, which could free the reserved table */
	(*link)->u.target = &rn->dev->p.node;
	cfs_dir_link(dir, *link);
	*link = NULL;
	if (old)
		cfs_subtree_unlink(rn->t, old, &rn->freelist);
}

/* under L, after rename_check_locked(): the device takes its new name; cannot fail */
static void rename_switch_locked(struct rename *rn)
{
	struct classfs_device *dev = rn->dev;
	struct classfs_node *dir = dev->p.node.parent;
	const char *old_name;

	cfs_watch_device_locked(rn->t, dev);
	cfs_watch_moved_locked(rn->t);
	/* the tables stay allocated, so the re-links below cannot fail */
	cfs_dir_unlink_keep(&dev->p.node);
	if (dev->cls)
		cfs_htab_remove_keep(&dev->cls->p.names, &cfs_name_htab_ops, dev);
	/* events keep the old name until the MOVE */
	rn->move = (struct cfs_move){ dev, dev->p.node.name, cfs_self(), rn->t->moves };
	rn->t->moves = &rn->move;
	old_name = (dev->p.node.flags & CFS_NF_OWN_NAME) ? dev->p.node.name : NULL;
	dev->p.node.name = rn->name;
	dev->p.node.flags |= CFS_NF_OWN_NAME;
	dev->p.node.hash = cfs_hash_name(rn->name);
	rn->name = (char *)old_name;	/* freed at the end */
	cfs_dir_link(dir, &dev->p.node);
	if (dev->cls)
		cfs_htab_insert(&dev->cls->p.names, &cfs_name_htab_ops, dev);
	if (rn->backlink)
		rename_link_locked(rn, &dev->phys->p.node, &rn->backlink, rn->oldlink);
	if (rn->buslink)
		rename_link_locked(rn, dev->bus->p.devices, &rn->buslink, rn->oldbus);
	cfs_watch_device_locked(rn->t, dev);
}

/* after the rename, L not held: number and queue its MOVE */
static void rename_send_move(struct rename *rn)
{
	struct classfs_device *dev = rn->dev;
	struct classfs_tree *t = rn->t;
	int r;

	/* the MOVE event carries the new name's variables: hooks run unlocked */
	if (cfs_event_fill(dev, rn->ev, NULL)) {
		cfs_event_discard(rn->ev);
		rn->ev = NULL;
	}
	cfs_lock(t);
	/*
	 * DEVPATH_OLD as events knew it: the ancestors' pending renames too.
	 * Removed meanwhile, the device is unlinked and the directories above
	 * it may be freed: no path, and no MOVE after its REMOVE.
	 */
	r = cfs_dev_state(dev, CFS_DS_ADDED) ?
		    cfs_event_path_locked(t, &dev->p.node, rn->old_path, sizeof(rn->old_path)) :
		    -ENODEV;
	for (struct cfs_move **pp = &t->moves; *pp; pp = &(*pp)->next)
		if (*pp == &rn->move) {
			*pp = rn->move.next;
			break;
		}
	pthread_cond_broadcast(&t->renamed);
	/* until its REMOVE is numbered, even a device being removed needs it */
	if (r >= 0 && cfs_dev_state(dev, CFS_DS_ADDED))
		cfs_event_emit_locked(t, rn->ev, CLASSFS_ACTION_MOVE, dev, rn->old_path);
	else
		cfs_event_discard(rn->ev);
	rn->ev = NULL;
	cfs_unlock(t);
}

static void rename_free(struct rename *rn)
{
	cfs_free_list(rn->freelist);
	cfs_free(rn->name);
	if (rn->backlink)
		cfs_node_free(rn->backlink);
	if (rn->buslink)
		cfs_node_free(rn->buslink);
	cfs_event_discard(rn->ev);
}

int classfs_device_rename(struct classfs_device *dev, const char *new_name)
{
	struct rename rn = { .dev = dev };
	int r;

	if (!dev || classfs_name_valid(new_name) < 0 || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	rn.t = cfs_device_tree_of(dev);
	r = rename_alloc(&rn, new_name);
	if (r < 0)
		goto out_free;

	cfs_lock(rn.t);
	r = rename_wait_locked(&rn);
	if (!r)
		r = rename_check_locked(&rn);
	if (r) {
		cfs_unlock(rn.t);
		r = r > 0 ? 0 : r;
		goto out_deliver;
	}
	rename_switch_locked(&rn);
	cfs_unlock(rn.t);
	cfs_watch_sync(rn.t);
	rename_send_move(&rn);
out_deliver:
	cfs_events_deliver(rn.t);
out_free:
	rename_free(&rn);
	return r;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attr.c - files a driver adds to a device after it is published:
 * attributes, binary attributes and groups (all or nothing), and
 * sysfs_notify()-style wake-ups for pollers.
 */
#include "internal.h"


/* is @name free in @dev's directory (under L)? */
static bool name_free_locked(struct classfs_device *dev, const char *name)
{
	return !cfs_dir_lookup(&dev->p.node, name) && !cfs_name_is_virtual(dev, name);
}

static bool alive(const struct classfs_device *dev)
{
	return cfs_dev_state(dev, CFS_DS_ADDED) && !cfs_dev_state(dev, CFS_DS_REMOVING);
}

static int file_add(struct classfs_device *dev, const struct classfs_attribute *a, int type,
		    const void *def, bool owned)
{
	struct classfs_tree *t;
	struct classfs_node *n;
	int r;

	if (!dev || !a || classfs_name_valid(a->name) < 0 || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	n = cfs_node_new(a->name, type, a->mode);
	if (!n)
		return -ENOMEM;
	n->u.attr = def;
	cfs_lock(t);
	if (!alive(dev))
		r = -ENODEV;
	else if (!name_free_locked(dev, a->name))
		r = -EEXIST;
	else
		r = 0;
	return cfs_file_add_unlock(t, &dev->p.node, n, r, owned);
}

int classfs_device_create_file(struct classfs_device *dev,
			       const struct classfs_device_attribute *attr)
{
	return file_add(dev, attr ? &attr->attr : NULL, CFS_NT_REG, attr, false);
}

int classfs_device_create_file_owned(struct classfs_device *dev,
				     struct classfs_device_attribute *attr)
{
	int r = file_add(dev, attr ? &attr->attr : NULL, CFS_NT_REG, attr, true);

	if (r < 0)
		cfs_free(attr);
	return r;
}

void classfs_device_remove_file(struct classfs_device *dev,
				const struct classfs_device_attribute *attr)
{
	if (!dev || !attr || !cfs_dev_state(dev, CFS_DS_ADDED))
		return;
	cfs_remove_file(cfs_device_tree_of(dev), &dev->p.node, attr->attr.name, attr);
}

int classfs_device_create_bin_file(struct classfs_device *dev,
				   const struct classfs_bin_attribute *attr)
{
	return file_add(dev, attr ? &attr->attr : NULL, CFS_NT_BIN, attr, false);
}

int classfs_device_create_bin_file_owned(struct classfs_device *dev,
					 struct classfs_bin_attribute *attr)
{
	int r = file_add(dev, attr ? &attr->attr : NULL, CFS_NT_BIN, attr, true);

	if (r < 0)
		cfs_free(attr);
	return r;
}

void classfs_device_remove_bin_file(struct classfs_device *dev,
				    const struct classfs_bin_attribute *attr)
{
	if (!dev || !attr || !cfs_dev_state(dev, CFS_DS_ADDED))
		return;
	cfs_remove_file(cfs_device_tree_of(dev), &dev->p.node, attr->attr.name, attr);
}

/* the nodes of a group's files, chained through ->next */
static int group_nodes(const struct classfs_attribute_group *grp, struct classfs_node **list)
{
	*list = NULL;
	for (const struct classfs_device_attribute *const *a = grp->attrs; a && *a; a++) {
		struct classfs_node *n;

		if (classfs_name_valid((*a)->attr.name) < 0)
			return -EINVAL;
		n = cfs_node_new((*a)->attr.name, CFS_NT_REG, (*a)->attr.mode);
		if (!n)
			return -ENOMEM;
		n->u.attr = *a;
		n->next = *list;
		*list = n;
	}
	for (const struct classfs_bin_attribute *const *a = grp->bin_attrs; a && *a; a++) {
		struct classfs_node *n;

		if (classfs_name_valid((*a)->attr.name) < 0)
			return -EINVAL;
		n = cfs_node_new((*a)->attr.name, CFS_NT_BIN, (*a)->attr.mode);
		if (!n)
			return -ENOMEM;
		n->u.attr = *a;
		n->next = *list;
		*list = n;
	}
	return 0;
}

int classfs_device_create_group(struct classfs_device *dev,
				const struct classfs_attribute_group *grp)
{
	struct classfs_node *list = NULL, *dir = NULL, *target, *n;
	struct classfs_tree *t;
	int r;

	if (!dev || !grp || !cfs_dev_state(dev, CFS_DS_ADDED) ||
	    (grp->name && classfs_name_valid(grp->name) < 0))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	r = group_nodes(grp, &list);
	if (r < 0)
		goto out_free;
	if (grp->name && !(dir = cfs_node_new(grp->name, CFS_NT_DIR, 0755))) {
		r = -ENOMEM;
		goto out_free;
	}
	target = dir ? dir : &dev->p.node;

	cfs_lock(t);
	r = -ENODEV;
	if (!alive(dev))
		goto out_unlock;
	r = -EEXIST;
	if (dir && !name_free_locked(dev, dir->name))
		goto out_unlock;
	for (n = list; n; n = n->next) {
		if (!dir && !name_free_locked(dev, n->name))
			goto out_unlock;
		for (struct classfs_node *m = n->next; m; m = m->next)
			if (!strcmp(m->name, n->name))
				goto out_unlock;
	}
	/* ids and table slots first; linking cannot fail after that */
	r = -ENOMEM;
	if (cfs_dir_reserve(&dev->p.node) < 0)
		goto out_unlock;
	if (dir && list && cfs_dir_reserve(dir) < 0)
		goto out_unlock;
	if (dir && (r = cfs_node_id_alloc(t, dir)) < 0)
		goto out_unlock;
	for (n = list; n; n = n->next) {
		r = cfs_node_id_alloc(t, n);
		if (r < 0) {
			for (struct classfs_node *m = list; m != n; m = m->next)
				cfs_node_id_release(t, m);
			if (dir)
				cfs_node_id_release(t, dir);
			goto out_unlock;
		}
	}
	while (list) {
		n = list;
		list = n->next;
		cfs_dir_link(target, n);
	}
	if (dir) {
		cfs_dir_link(&dev->p.node, dir);
		dir = NULL;
	}
	r = 0;
out_unlock:
	if (r < 0 && dev->p.node.u.dir && !dev->p.node.u.dir->count) {
		cfs_htab_destroy(dev->p.node.u.dir);
		cfs_free(dev->p.node.u.dir);
		dev->p.node.u.dir = NULL;
	}
	cfs_unlock(t);
	if (!r)
		cfs_watch_sync(t);
out_free:
	cfs_free_list(list);
	if (dir)
		cfs_node_free(dir);
	return r;
}

void classfs_device_remove_group(struct classfs_device *dev,
				 const struct classfs_attribute_group *grp)
{
	struct classfs_node *freelist = NULL, *d;
	struct classfs_tree *t;

	if (!dev || !grp || !cfs_dev_state(dev, CFS_DS_ADDED))
		return;
	t = cfs_device_tree_of(dev);
	if (!grp->name) {
		for (const struct classfs_device_attribute *const *a = grp->attrs; a && *a; a++)
			cfs_remove_file(t, &dev->p.node, (*a)->attr.name, *a);
		for (const struct classfs_bin_attribute *const *a = grp->bin_attrs; a && *a; a++)
			cfs_remove_file(t, &dev->p.node, (*a)->attr.name, *a);
		return;
	}
	cfs_lock(t);
	d = cfs_dir_lookup(&dev->p.node, grp->name);
	if (d && d->type == CFS_NT_DIR && !cfs_active_held_below(d)) {
		cfs_subtree_deactivate(d);
		if (cfs_subtree_drain_locked(t, d))
			cfs_subtree_unlink(t, d, &freelist);
	}
	cfs_unlock(t);
	cfs_watch_sync(t);
	cfs_free_list(freelist);
}

int classfs_device_notify(struct classfs_device *dev, const char *attr_name)
{
	struct classfs_stat st;
	struct classfs_tree *t;
	char path[2 * NAME_MAX + 2];
	const char *slash;
	uint64_t ino;
	int r;

	if (!dev || !attr_name || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	cfs_lock(t);
	ino = cfs_ino(&dev->p.node, 0);
	cfs_unlock(t);
	slash = strchr(attr_name, '/');
	if (slash) {
		snprintf(path, sizeof(path), "%.*s", (int)(slash - attr_name), attr_name);
		r = classfs_lookup(t, ino, path, &st);
		if (r < 0)
			return r;
		ino = st.ino;
		attr_name = slash + 1;
	}
	r = classfs_lookup(t, ino, attr_name, &st);
	if (r < 0)
		return r;
	if (st.type != CLASSFS_FT_REG)
		return -ENOENT;
	/* a view's cached copy goes first: the woken poller reads the new value */
	cfs_watch_value(t, st.ino);
	cfs_watch_notify(t, st.ino);
	return 0;
}


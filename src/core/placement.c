// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * placement.c - where a device's entries go in the tree's layout: its
 * directory (nested, under its class, under its physical device or in a
 * glue directory), the "CLASS:NAME" link in its physical device, and the
 * reservations that make publishing them infallible.  All under L.
 */
#include "internal.h"

/*
 * Where the device's directory goes (under L).  In the `devices` layout a
 * class device without a parent of its class goes under its physical
 * device: directly below a class device, in a "CLASS" glue directory
 * below a physical device, or in devices/virtual/CLASS without one.
 * *glue is set when a glue directory was made for it.
 */
struct classfs_node *cfs_placement_locked(struct classfs_tree *t, struct classfs_device *dev,
					  struct classfs_node **glue)
{
	struct classfs_node *base;

	*glue = NULL;
	if (!dev->cls)
		return dev->parent ? &dev->parent->p.node : t->devices_dir;
	if (dev->parent)
		return &dev->parent->p.node;
	if (t->layout == CLASSFS_LAYOUT_CLASS)
		return &dev->cls->p.node;
	if (dev->phys && dev->phys->cls)
		return &dev->phys->p.node;
	base = dev->phys ? &dev->phys->p.node : t->virtual_dir;
	struct classfs_node *g = cfs_dir_lookup(base, dev->cls->name);

	if (g)
		return g->type == CFS_NT_DIR && !(g->flags & CFS_NF_DEVICE) ? g : NULL;
	g = cfs_mkdir(t, base, dev->cls->name);
	*glue = g;
	return g;
}

bool cfs_is_glue_dir(struct classfs_tree *t, const struct classfs_node *n)
{
	return t->layout == CLASSFS_LAYOUT_DEVICES && n->type == CFS_NT_DIR &&
	       !(n->flags & (CFS_NF_DEVICE | CFS_NF_CLASS | CFS_NF_BUS)) && n->parent &&
	       (n->parent == t->virtual_dir || (n->parent->flags & CFS_NF_DEVICE));
}

/* remove an empty glue directory (under L) */
void cfs_glue_put_locked(struct classfs_tree *t, struct classfs_node *g,
			 struct classfs_node **freelist)
{
	if (g && cfs_is_glue_dir(t, g) && (!g->u.dir || !g->u.dir->count))
		cfs_subtree_unlink(t, g, freelist);
}

/* the link "CLASS:NAME" a class device leaves in its physical device (class layout) */
bool cfs_wants_backlink(struct classfs_tree *t, const struct classfs_device *dev)
{
	return dev->cls && dev->phys && t->layout == CLASSFS_LAYOUT_CLASS;
}

struct classfs_node *cfs_backlink_new(struct classfs_tree *t, struct classfs_device *dev,
				      const char *name)
{
	char buf[2 * NAME_MAX + 2];

	snprintf(buf, sizeof(buf), "%s:%s", dev->cls->name, name);
	return cfs_node_new(t, buf, CFS_NT_LNK, 0777);
}

struct classfs_node *cfs_backlink_find(struct classfs_device *dev)
{
	char buf[2 * NAME_MAX + 2];

	snprintf(buf, sizeof(buf), "%s:%s", dev->cls->name, dev->p.node.name);
	return cfs_dir_lookup(&dev->phys->p.node, buf);
}

/* reserve an id and a slot in @dir for @n; undone by unreserve_link() */
int cfs_reserve_link(struct classfs_tree *t, struct classfs_node *dir, struct classfs_node *n)
{
	int r;

	if (cfs_dir_lookup(dir, n->name))
		return -EEXIST;
	r = cfs_dir_reserve(dir);
	if (r < 0)
		return r;
	return cfs_node_id_alloc(t, n);
}

void cfs_unreserve_dir(struct classfs_node *dir)
{
	if (dir->u.dir && !dir->u.dir->count) {
		cfs_htab_destroy(dir->u.dir);
		cfs_free(dir->u.dir);
		dir->u.dir = NULL;
	}
}

void cfs_unreserve_htab(struct classfs_htab *h)
{
	if (h->buckets && !h->count)
		cfs_htab_destroy(h);
}

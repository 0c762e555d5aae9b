// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * exact.c - a device at exactly the directory its caller names, as
 * umockdev's add_device() places one (classfs_device_add_at(), the
 * `devices` layout): no glue directory and no devices/virtual/CLASS is
 * added; the directories on the way that no device was added for are
 * made as plain directories (no `uevent`, no `subsystem`: libudev's
 * parent walk passes over them); and a device added where such a
 * plain directory is takes its place, keeping what it holds (a parent
 * added after its child).  All under L.
 *
 * The model stays the one of the rest of the core: a device's parent
 * (physical device, nesting parent or a class device's physical device)
 * is the nearest device above its directory.  Plain directories made for
 * a device's path go again with the last device below them, as Linux's
 * glue directories do, unless something else was put in them.
 */
#include "internal.h"

/*
 * cfs_exact_split() - split @dir ("/devices/a/b") into components in @ex.
 * Return: 0, -EINVAL (not absolute, an empty, "." or ".." component, too
 * long or too deep).
 */
int cfs_exact_split(struct cfs_exact *ex, const char *dir)
{
	size_t len;
	char *s;

	ex->n = 0;
	if (!dir || dir[0] != '/')
		return -EINVAL;
	len = strlen(dir + 1);
	if (len >= sizeof(ex->buf))
		return -EINVAL;
	memcpy(ex->buf, dir + 1, len + 1);
	for (s = ex->buf;;) {
		char *slash = strchr(s, '/');

		if (slash)
			*slash = '\0';
		if (ex->n == CFS_EXACT_DEPTH || classfs_name_valid(s) < 0)
			return -EINVAL;
		ex->comp[ex->n++] = s;
		if (!slash)
			return 0;
		s = slash + 1;
	}
}

/* the device a device's place is taken from: its nesting or physical parent */
struct classfs_device *cfs_dev_base(const struct classfs_device *dev)
{
	return dev->cls && !dev->parent ? dev->phys : dev->parent;
}

/* may a device's directory be below @c, a directory on its way (under L)? */
static bool passable(struct classfs_tree *t, const struct classfs_node *c)
{
	if (c->type != CFS_NT_DIR)
		return false;
	return (c->flags & (CFS_NF_DEVICE | CFS_NF_PLAIN_DIR)) || c == t->virtual_dir ||
	       cfs_is_glue_dir(t, c);
}

/*
 * cfs_place_exact_locked() - the directory @ex names for @dev (*@dirp),
 * its missing components made as plain directories (*@made: the first
 * made, NULL when none).  The nearest device on the way must be @dev's
 * parent (cfs_dev_base()), or none be there when it has none.
 * Return: 0; -EINVAL (another layout than `devices`, not below
 * /devices, another nearest device); -ENOTDIR (a file or link on the
 * way); -EEXIST (a name a device on the way computes); -ENOMEM, -ENOSPC.
 * On error nothing is left made.
 */
int cfs_place_exact_locked(struct classfs_tree *t, struct classfs_device *dev,
			   const struct cfs_exact *ex, struct classfs_node **dirp,
			   struct classfs_node **made, struct classfs_node **freelist)
{
	struct classfs_device *holder = NULL;
	struct classfs_node *cur;
	int r = 0;

	cfs_assert_held(t);
	*made = NULL;
	if (t->layout != CLASSFS_LAYOUT_DEVICES || ex->n < 1 || strcmp(ex->comp[0], "devices"))
		return -EINVAL;
	cur = t->devices_dir;
	for (int i = 1; i < ex->n; i++) {
		struct classfs_node *c = cfs_dir_lookup(cur, ex->comp[i]);

		if (c && !passable(t, c)) {
			r = -ENOTDIR;
			goto fail;
		}
		if (!c) {
			/* a device's computed entries (`power` of its groups) are no room */
			if ((cur->flags & CFS_NF_DEVICE) &&
			    cfs_name_is_virtual(cfs_node_device(cur), ex->comp[i])) {
				r = -EEXIST;
				goto fail;
			}
			c = cfs_node_new(ex->comp[i], CFS_NT_DIR, 0755);
			if (!c) {
				r = -ENOMEM;
				goto fail;
			}
			c->flags |= CFS_NF_PLAIN_DIR | CFS_NF_MADE_DIR;
			r = cfs_node_add(t, cur, c);
			if (r < 0) {
				cfs_node_free(c);
				goto fail;
			}
			if (!*made)
				*made = c;
		}
		if (c->flags & CFS_NF_DEVICE)
			holder = cfs_node_device(c);
		cur = c;
	}
	if (holder != cfs_dev_base(dev)) {
		r = -EINVAL;
		goto fail;
	}
	*dirp = cur;
	return 0;
fail:
	if (*made)
		cfs_subtree_unlink(t, *made, freelist);
	*made = NULL;
	return r;
}

/*
 * cfs_adopt_check() - may @dev take the place of the plain directory @x?
 * What @x holds stays, so none of it may be named like an entry @dev
 * computes.  Return: 0, -EEXIST (@x is no plain directory, or a name
 * clashes).
 */
int cfs_adopt_check(const struct classfs_device *dev, const struct classfs_node *x)
{
	if (x->type != CFS_NT_DIR || !(x->flags & CFS_NF_PLAIN_DIR) ||
	    (x->flags & CFS_NF_DEVICE))
		return -EEXIST;
	if (!x->u.dir || !x->u.dir->buckets)
		return 0;
	for (struct classfs_node *c = cfs_htab_first_from(x->u.dir, &cfs_node_htab_ops, 0); c;
	     c = cfs_htab_next(x->u.dir, &cfs_node_htab_ops, c))
		if (cfs_name_is_virtual(dev, c->name))
			return -EEXIST;
	return 0;
}

/*
 * A device @d in a directory that @from held and @to now holds, with no
 * device between: if it was attached to @from (its parent, or a class
 * device's physical device; NULL: attached to none), it is attached to @to
 * as a device at that place is: a physical device has it as parent, a
 * class device is nested in it when of its class, else has it as physical
 * device.  Return: 1 when @d gave up a reference on @from, else 0.
 */
static unsigned int reattach(struct classfs_tree *t, struct classfs_device *d,
			     struct classfs_device *from, struct classfs_device *to)
{
	struct classfs_device *parent = NULL, *phys = NULL;
	bool was_nested = d->cls && d->parent;

	if (!cfs_dev_state(d, CFS_DS_ADDED) ||
	    (d->cls && !d->parent ? d->phys : d->parent) != from)
		return 0;
	if (!d->cls || (to && to->cls == d->cls))
		parent = to;
	else
		phys = to;
	cfs_watch_device_locked(t, d);
	classfs_device_get(to);
	/* cfs_device_tree_of() reads these without L */
	__atomic_store_n(&d->parent, parent, __ATOMIC_RELEASE);
	if (d->cls)
		__atomic_store_n(&d->phys, phys, __ATOMIC_RELEASE);
	if (was_nested && !parent)
		d->cls->p.nested--;
	else if (d->cls && !was_nested && parent)
		d->cls->p.nested++;
	/* `device` may appear or go */
	if (d->cls)
		cfs_watch_entry_locked(t, &d->p.node, 0, "device");
	cfs_watch_device_locked(t, d);
	return from ? 1 : 0;
}

/* the devices in @dir and in the plain directories below it */
static unsigned int reattach_dir(struct classfs_tree *t, struct classfs_node *dir,
				 struct classfs_device *from, struct classfs_device *to, int depth)
{
	unsigned int n = 0;

	if (!dir->u.dir || !dir->u.dir->buckets || depth > CFS_EXACT_DEPTH)
		return 0;
	for (struct classfs_node *c = cfs_htab_first_from(dir->u.dir, &cfs_node_htab_ops, 0); c;
	     c = cfs_htab_next(dir->u.dir, &cfs_node_htab_ops, c)) {
		if (c->flags & CFS_NF_DEVICE)
			n += reattach(t, cfs_node_device(c), from, to);
		else if (c->type == CFS_NT_DIR && (c->flags & CFS_NF_PLAIN_DIR))
			n += reattach_dir(t, c, from, to, depth + 1);
	}
	return n;
}

/* what directory @from holds moves to directory @to, which takes its place */
static void swap_dirs(struct classfs_node *from, struct classfs_node *to)
{
	struct classfs_node *dir = from->parent;

	cfs_watch_moved_locked(cfs_node_tree(from));
	cfs_dir_unlink_keep(from);
	to->u.dir = from->u.dir;
	from->u.dir = NULL;
	if (to->u.dir && to->u.dir->buckets)
		for (struct classfs_node *c = cfs_htab_first_from(to->u.dir, &cfs_node_htab_ops, 0);
		     c; c = cfs_htab_next(to->u.dir, &cfs_node_htab_ops, c))
			__atomic_store_n(&c->parent, to, __ATOMIC_RELEASE);
	cfs_dir_link(dir, to);
}

/*
 * cfs_adopt_locked() - publish @dev's directory in place of the plain
 * directory @x (checked by cfs_adopt_check(); @x's directory reserved):
 * what @x holds moves below @dev, the devices there take @dev as their
 * parent.  Cannot fail.  @x leaves the tree; its memory stays until the
 * tree is freed, as a walk of parents without L may still be on it.
 * Return: how many references on cfs_dev_base(@dev) the devices below
 * gave up, to drop once L is released.
 */
unsigned int cfs_adopt_locked(struct classfs_tree *t, struct classfs_device *dev,
			      struct classfs_node *x)
{
	cfs_assert_held(t);
	swap_dirs(x, &dev->p.node);
	cfs_node_id_release(t, x);
	x->flags |= CFS_NF_DEAD;
	x->next = t->graveyard;
	t->graveyard = x;
	return reattach_dir(t, &dev->p.node, cfs_dev_base(dev), dev, 0);
}

/*
 * cfs_unfill_locked() - the reverse of cfs_adopt_locked(), for a device
 * being removed with classfs_device_del_keep(): the plain directory @x
 * (with an id, not linked) takes the place of @dev's directory and what
 * it holds; the devices there are attached to @dev's own parent again.
 * Cannot fail.  Return: how many references on @dev they gave up.
 */
unsigned int cfs_unfill_locked(struct classfs_tree *t, struct classfs_device *dev,
			       struct classfs_node *x)
{
	cfs_assert_held(t);
	x->flags |= CFS_NF_PLAIN_DIR | CFS_NF_MADE_DIR;
	swap_dirs(&dev->p.node, x);
	return reattach_dir(t, x, dev, cfs_dev_base(dev), 0);
}

/*
 * cfs_made_put_locked() - after a device left @dir: @dir and the plain
 * directories above it that were made for devices' paths go while they
 * are empty.  @keep: to the graveyard rather than @freelist (the device
 * that left finds its tree through them without L).
 */
void cfs_made_put_locked(struct classfs_tree *t, struct classfs_node *dir, bool keep,
			 struct classfs_node **freelist)
{
	cfs_assert_held(t);
	while (dir && (dir->flags & CFS_NF_MADE_DIR) && !(dir->flags & CFS_NF_DEAD) &&
	       (!dir->u.dir || !dir->u.dir->count)) {
		struct classfs_node *up = dir->parent;

		cfs_subtree_unlink(t, dir, keep ? &t->graveyard : freelist);
		dir = up;
	}
}

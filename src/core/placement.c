// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * placement.c - where a device's entries go in the tree's layout: its
 * directory (nested, under its class, under its physical device or in a
 * glue directory), the "CLASS:NAME" link in its physical device, and the
 * reservations that make publishing them infallible.  All under L.
 */
#include "internal.h"

/*
 * devices/virtual for the root of a virtual bus: the class layout has it
 * while it holds devices, made now (*@glue: undone if the add fails).
 */
static int virtual_dir_get(struct classfs_tree *t, struct classfs_node **dirp,
			   struct classfs_node **glue)
{
	if (!t->virtual_dir) {
		struct classfs_node *v = cfs_dir_lookup(t->devices_dir, "virtual");

		/* made through the filesystem (plain.c): taken over */
		if (v && v->type == CFS_NT_DIR && (v->flags & CFS_NF_PLAIN_DIR)) {
			t->virtual_dir = v;
			*dirp = v;
			return 0;
		}
		t->virtual_dir = cfs_mkdir(t, t->devices_dir, "virtual");
		if (!t->virtual_dir)
			return -ENOMEM;
		*glue = t->virtual_dir;
	}
	*dirp = t->virtual_dir;
	return 0;
}

/*
 * Where the device's directory goes (under L): *@dirp.  In the `devices`
 * layout a class device without a parent of its class goes under its
 * physical device: directly below a class device, in a "CLASS" glue
 * directory below a physical device, or in devices/virtual/CLASS without
 * one.  *glue is set when a glue directory was made for it.
 * Return: 0; -EEXIST when the glue directory's name is taken by an entry
 * that is no glue directory (a device of that name); -ENOMEM.
 */
int cfs_placement_locked(struct classfs_tree *t, struct classfs_device *dev,
			 struct classfs_node **dirp, struct classfs_node **glue)
{
	struct classfs_node *base, *g;

	cfs_assert_held(t);
	*glue = NULL;
	if (!dev->cls && dev->parent)
		*dirp = &dev->parent->p.node;
	else if (!dev->cls && (dev->p.state & CFS_DS_VIRTUAL))
		return virtual_dir_get(t, dirp, glue);
	else if (!dev->cls)
		*dirp = t->devices_dir;
	else if (dev->parent)
		*dirp = &dev->parent->p.node;
	else if (t->layout == CLASSFS_LAYOUT_CLASS)
		*dirp = &dev->cls->p.node;
	else if (dev->phys && dev->phys->cls)
		*dirp = &dev->phys->p.node;
	else {
		base = dev->phys ? &dev->phys->p.node : t->virtual_dir;
		g = cfs_dir_lookup(base, dev->cls->name);
		/* an attribute of the physical device of that name: no room */
		if (!g && dev->phys && cfs_name_is_virtual(dev->phys, dev->cls->name))
			return -EEXIST;
		if (g) {
			if (g->type != CFS_NT_DIR || (g->flags & CFS_NF_DEVICE))
				return -EEXIST;
		} else {
			g = cfs_mkdir(t, base, dev->cls->name);
			if (!g)
				return -ENOMEM;
			*glue = g;
		}
		*dirp = g;
	}
	return 0;
}

bool cfs_is_glue_dir(struct classfs_tree *t, const struct classfs_node *n)
{
	return t->layout == CLASSFS_LAYOUT_DEVICES && n->type == CFS_NT_DIR &&
	       !(n->flags & (CFS_NF_DEVICE | CFS_NF_CLASS | CFS_NF_BUS | CFS_NF_PLAIN_DIR)) &&
	       n->parent &&
	       (n->parent == t->virtual_dir || (n->parent->flags & CFS_NF_DEVICE));
}

/* remove an empty glue directory, or the class layout's devices/virtual (under L) */
void cfs_glue_put_locked(struct classfs_tree *t, struct classfs_node *g,
			 struct classfs_node **freelist)
{
	cfs_assert_held(t);
	if (!g || (g->u.dir && g->u.dir->count))
		return;
	if (g == t->virtual_dir && t->layout == CLASSFS_LAYOUT_CLASS) {
		cfs_subtree_unlink(t, g, freelist);
		t->virtual_dir = NULL;
	} else if (cfs_is_glue_dir(t, g)) {
		cfs_subtree_unlink(t, g, freelist);
	}
}

/* the link "CLASS:NAME" a class device leaves in its physical device (class layout) */
bool cfs_wants_backlink(struct classfs_tree *t, const struct classfs_device *dev)
{
	return dev->cls && dev->phys && t->layout == CLASSFS_LAYOUT_CLASS;
}

struct classfs_node *cfs_backlink_new(struct classfs_device *dev, const char *name)
{
	char buf[2 * NAME_MAX + 2];
	size_t c = strnlen(dev->cls->name, NAME_MAX), n = strnlen(name, NAME_MAX);

	/* "%s:%s" without snprintf: one per class device with a physical device */
	memcpy(buf, dev->cls->name, c);
	buf[c] = ':';
	memcpy(buf + c + 1, name, n);
	buf[c + 1 + n] = '\0';
	return cfs_node_new(buf, CFS_NT_LNK, 0777);
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

	/* a device's directory also holds its computed entries */
	if (cfs_dir_lookup(dir, n->name) ||
	    ((dir->flags & CFS_NF_DEVICE) && cfs_name_is_virtual(cfs_node_device(dir), n->name)))
		return -EEXIST;
	r = cfs_dir_reserve(dir);
	if (r < 0)
		return r;
	return cfs_node_id_alloc(t, n);
}

/* under L: give back what cfs_dir_reserve() took, if @dir holds nothing */
void cfs_unreserve_dir(struct classfs_tree *t, struct classfs_node *dir)
{
	cfs_assert_held(t);
	if (dir->u.dir && !dir->u.dir->count) {
		cfs_htab_destroy(dir->u.dir);
		cfs_free(dir->u.dir);
		dir->u.dir = NULL;
	}
}

/* under L: give back what cfs_htab_reserve() took, if @h holds nothing */
void cfs_unreserve_htab(struct classfs_tree *t, struct classfs_htab *h)
{
	cfs_assert_held(t);
	if (h->buckets && !h->count)
		cfs_htab_destroy(h);
}

/* append "/name" of @dev's devices-layout path to @buf (under L) */
static int syspath_locked(struct classfs_device *dev, char *buf, size_t size, size_t *len,
			  int depth)
{
	const char *glue = NULL;
	int r;

	if (depth > 64)
		return -ELOOP;
	if (dev->parent) {
		r = syspath_locked(dev->parent, buf, size, len, depth + 1);
	} else if (dev->cls && dev->phys) {
		r = syspath_locked(dev->phys, buf, size, len, depth + 1);
		if (!dev->phys->cls)
			glue = dev->cls->name;
	} else {
		r = snprintf(buf, size, "/devices%s",
			     dev->cls || (dev->p.state & CFS_DS_VIRTUAL) ? "/virtual" : "");
		*len = (size_t)r;
		glue = dev->cls ? dev->cls->name : NULL;
		r = *len < size ? 0 : -ERANGE;
	}
	if (r < 0)
		return r;
	r = snprintf(buf + *len, size - *len, "%s%s/%s", glue ? "/" : "", glue ? glue : "",
		     dev->p.node.name);
	if (r < 0 || (size_t)r >= size - *len)
		return -ERANGE;
	*len += (size_t)r;
	return 0;
}

int classfs_device_syspath(struct classfs_device *dev, char *buf, size_t size)
{
	struct classfs_tree *t;
	size_t len = 0;
	int r;

	if (!dev || !buf || !size || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	cfs_lock(t);
	if (!cfs_dev_alive(dev))
		r = -EINVAL;
	else if (t->layout == CLASSFS_LAYOUT_DEVICES)
		/* the tree's directories are Linux's: a device may be anywhere (exact.c) */
		r = cfs_node_path(&dev->p.node, buf, size);
	else
		r = syspath_locked(dev, buf, size, &len, 0);
	cfs_unlock(t);
	if (r > 0)
		len = (size_t)r;
	return r < 0 ? r : (int)len;
}

#define FIND_MAX_DEPTH 128	/* components of a syspath, as node.c's paths */

/* @d if it is an alive device placed at (@parent, @phys) as syspath_locked() reads */
static struct classfs_device *placed(struct classfs_device *d, struct classfs_device *parent,
				     struct classfs_device *phys)
{
	if (!d || !cfs_dev_alive(d) || d->parent != parent)
		return NULL;
	if (d->cls && !parent && d->phys != phys)
		return NULL;
	if (!d->cls && phys)
		return NULL;
	return d;
}

/* a class device of class @cls named @name at (no parent, @phys), or NULL (under L) */
static struct classfs_device *class_child(struct classfs_class *cls, const char *name,
					  struct classfs_device *phys)
{
	return cls ? placed(cfs_class_lookup_locked(cls, name), NULL, phys) : NULL;
}

/*
 * The device at components @c[@i..@n) below @cur (NULL: /devices), under
 * L.  Each step is a lookup by name, the inverse of syspath_locked(): a
 * child in @cur's directory (a nested class device or a physical device),
 * a class device whose physical device is the class device @cur, or
 * "CLASS/NAME" (a glue directory: @cur physical, or /devices/virtual).
 * Names can read two ways (a physical child named like a class), so a
 * step that leads nowhere is taken back.
 */
static struct classfs_device *find_locked(struct classfs_tree *t, struct classfs_device *cur,
					  char **c, int i, int n)
{
	struct classfs_device *d, *found;
	struct classfs_node *dir, *x;

	cfs_assert_held(t);
	if (i == n)
		return cur;
	/* a child in @cur's directory, or a top-level physical device */
	dir = cur ? &cur->p.node : t->devices_dir;
	x = dir ? cfs_dir_lookup(dir, c[i]) : NULL;
	if (x && (x->flags & CFS_NF_DEVICE) && (d = placed(cfs_node_device(x), cur, NULL)) &&
	    (found = find_locked(t, d, c, i + 1, n)))
		return found;
	/* a physical device in devices/virtual: the root of a virtual bus */
	if (!cur && i + 1 < n && t->virtual_dir && !strcmp(c[i], "virtual") &&
	    (x = cfs_dir_lookup(t->virtual_dir, c[i + 1])) && (x->flags & CFS_NF_DEVICE) &&
	    (d = placed(cfs_node_device(x), NULL, NULL)) && !d->cls &&
	    (found = find_locked(t, d, c, i + 2, n)))
		return found;
	if (cur && cur->cls) {
		/* a class device of another class whose physical device is @cur */
		for (struct classfs_class *k = t->classes; k; k = k->p.next)
			if ((d = class_child(k, c[i], cur)) && (found = find_locked(t, d, c, i + 1, n)))
				return found;
	}
	if (i + 1 < n && (cur ? !cur->cls : !strcmp(c[i], "virtual"))) {
		int g = cur ? i : i + 1;	/* the glue directory: the class's name */

		if (g + 1 < n)
			for (struct classfs_class *k = t->classes; k; k = k->p.next)
				if (!strcmp(k->name, c[g]) &&
				    (d = class_child(k, c[g + 1], cur)) &&
				    (found = find_locked(t, d, c, g + 2, n)))
					return found;
	}
	return NULL;
}

/* the device at components @c[0..@n) below devices/ in the `devices` layout (under L) */
static struct classfs_device *find_node_locked(struct classfs_tree *t, char **c, int n)
{
	struct classfs_node *x = t->devices_dir;

	cfs_assert_held(t);
	for (int i = 0; i < n && x; i++)
		x = cfs_dir_lookup(x, c[i]);
	return x && (x->flags & CFS_NF_DEVICE) && cfs_dev_alive(cfs_node_device(x))
		       ? cfs_node_device(x) : NULL;
}

/* has the class named @name a device without parent whose physical device is @phys? */
static bool class_has_child(struct classfs_tree *t, const char *name, struct classfs_device *phys)
{
	for (struct classfs_class *k = t->classes; k; k = k->p.next) {
		if (strcmp(k->name, name))
			continue;
		for (struct classfs_device *d = cfs_htab_first_from(&k->p.names, &cfs_name_htab_ops, 0);
		     d; d = cfs_htab_next(&k->p.names, &cfs_name_htab_ops, d))
			if (!d->parent && d->phys == phys)
				return true;
	}
	return false;
}

static bool is_device(const struct classfs_node *x)
{
	return x && (x->flags & CFS_NF_DEVICE);
}

/*
 * Would @dev, about to be added or renamed, named @name, take a place in
 * Linux's devices layout (its syspath, or a glue directory on its way)
 * that another device has (under L)?  The devices layout has real
 * directories there and refuses such a device by its names; the class
 * layout keeps class devices under their class, and a record saved from
 * it would read two devices at one path.  Refused in both layouts alike:
 * - devices/virtual itself, for a physical device without parent;
 * - devices/virtual/A: the glue directory of class A (its devices without
 *   physical device) or the root of a virtual bus named A;
 * - P/K below a physical device P: the glue directory of class K, or a
 *   device named K;
 * - Q/NAME in a class device Q: its children, and the class devices whose
 *   physical device it is.
 */
bool cfs_layout_clash_locked(struct classfs_tree *t, struct classfs_device *dev,
			     const char *name)
{
	struct classfs_device *at = dev->cls && !dev->parent ? dev->phys : dev->parent;

	cfs_assert_held(t);
	/* devices/virtual is no device's (a save would read it as one) */
	if (!dev->cls && !dev->parent && !strcmp(name, "virtual"))
		return true;
	if (t->layout != CLASSFS_LAYOUT_CLASS)
		return false;
	if (dev->cls && !dev->parent && !dev->phys)
		return t->virtual_dir && is_device(cfs_dir_lookup(t->virtual_dir, dev->cls->name));
	if (dev->p.state & CFS_DS_VIRTUAL)
		return class_has_child(t, name, NULL);
	if (!at)
		return false;
	if (!at->cls)
		return dev->cls && !dev->parent ? is_device(cfs_dir_lookup(&at->p.node, dev->cls->name))
						 : !dev->cls && class_has_child(t, name, at);
	if (dev->cls && !dev->parent && is_device(cfs_dir_lookup(&at->p.node, name)))
		return true;
	for (struct classfs_class *k = t->classes; k; k = k->p.next) {
		struct classfs_device *d = cfs_class_lookup_locked(k, name);

		if (d && d != dev && !d->parent && d->phys == at && cfs_dev_alive(d))
			return true;
	}
	return false;
}

struct classfs_device *classfs_tree_find_device(struct classfs_tree *tree, const char *syspath)
{
	char copy[PATH_MAX], *c[FIND_MAX_DEPTH];
	struct classfs_device *d = NULL;
	size_t len;
	int n = 0;

	if (!tree || !syspath || strncmp(syspath, "/devices/", 9))
		return NULL;
	len = strlen(syspath + 9);
	if (len >= sizeof(copy))
		return NULL;
	memcpy(copy, syspath + 9, len + 1);
	/* components; an empty one ("//", a trailing '/') names nothing */
	for (char *s = copy, *e; ; s = e + 1) {
		e = strchr(s, '/');
		if (e)
			*e = '\0';
		if (!*s || n == FIND_MAX_DEPTH)
			return NULL;
		c[n++] = s;
		if (!e)
			break;
	}
	cfs_lock(tree);
	d = classfs_device_get(tree->layout == CLASSFS_LAYOUT_DEVICES ? find_node_locked(tree, c, n)
								       : find_locked(tree, NULL, c, 0, n));
	cfs_unlock(tree);
	return d;
}

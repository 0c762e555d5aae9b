// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * class.c - classes (class/NAME) and bus types (bus/NAME).
 */
#include "internal.h"

/* allocate the nodes of @attrs (NULL-terminated) before taking L */
static int attr_nodes_new(const struct classfs_class_attribute *const *attrs,
			  struct classfs_node **list)
{
	int r = -EINVAL;

	*list = NULL;
	for (; attrs && *attrs; attrs++) {
		const struct classfs_class_attribute *a = *attrs;
		struct classfs_node *n;

		if (classfs_name_valid(a->attr.name) < 0)
			goto fail;
		/* a name twice in the list would be two entries of one name */
		for (n = *list; n; n = n->next)
			if (!strcmp(n->name, a->attr.name)) {
				r = -EEXIST;
				goto fail;
			}
		n = cfs_node_new(a->attr.name, CFS_NT_REG, a->attr.mode);
		if (!n) {
			r = -ENOMEM;
			goto fail;
		}
		n->u.attr = a;
		n->next = *list;
		*list = n;
	}
	return 0;
fail:
	cfs_free_list(*list);
	*list = NULL;
	return r;
}

static struct classfs_class *class_find_locked(struct classfs_tree *t, const char *name)
{
	cfs_assert_held(t);
	for (struct classfs_class *c = t->classes; c; c = c->p.next)
		if (!strcmp(c->name, name))
			return c;
	return NULL;
}

int classfs_class_register(struct classfs_tree *tree, struct classfs_class *cls)
{
	struct classfs_node *attrs, *n;
	int r;

	if (!tree || !cls || classfs_name_valid(cls->name) < 0)
		return -EINVAL;
	if (cls->p.registered)
		return -EBUSY;
	r = attr_nodes_new(cls->class_attrs, &attrs);
	if (r < 0)
		return r;
	bool allocated = cls->p.allocated;

	memset(&cls->p, 0, sizeof(cls->p));
	cls->p.allocated = allocated;
	cls->p.tree = tree;
	cls->p.refcount = 1;
	cls->p.block = !strcmp(cls->name, "block");
	cfs_node_init(&cls->p.node, cls->name, CFS_NT_DIR, 0755, CFS_NF_CLASS);

	cfs_lock(tree);
	r = -EEXIST;
	if (class_find_locked(tree, cls->name) || cfs_dir_lookup(tree->class_dir, cls->name))
		goto fail;
	r = cfs_node_add(tree, tree->class_dir, &cls->p.node);
	if (r < 0)
		goto fail;
	for (n = attrs; n; n = n->next)
		if ((r = cfs_dir_lookup(&cls->p.node, n->name) ? -EEXIST : 0) < 0 ||
		    (r = cfs_dir_reserve(&cls->p.node)) < 0)
			goto fail_node;
	while (attrs) {
		n = attrs;
		attrs = n->next;
		r = cfs_node_id_alloc(tree, n);
		if (r < 0) {
			n->next = attrs;
			attrs = n;
			goto fail_node;
		}
		cfs_dir_link(&cls->p.node, n);
	}
	cls->p.next = tree->classes;
	tree->classes = cls;
	cls->p.registered = true;
	if (cls->p.block)
		tree->block_class = cls;
	cfs_unlock(tree);
	cfs_watch_sync(tree);
	return 0;

fail_node: {
		struct classfs_node *freelist = NULL;

		cfs_subtree_unlink(tree, &cls->p.node, &freelist);
		cfs_unlock(tree);
		cfs_free_list(freelist);
		cfs_free_list(attrs);
		return r;
	}
fail:
	cfs_unlock(tree);
	cfs_free_list(attrs);
	return r;
}

/*
 * Unregister every device of @cls still there: a pass over the top-level
 * ones in table order (each takes its children along), then a pass for
 * whatever is left.  Each pass resumes at the key of the last pick, so
 * the whole costs O(devices), not a scan per device.
 */
void cfs_class_devices_unregister(struct classfs_class *cls)
{
	struct classfs_tree *t = cls->p.tree;
	bool top = true;
	uint64_t pos = 0;

	for (;;) {
		struct classfs_device *pick = NULL;

		cfs_lock(t);
		for (struct classfs_device *d = cfs_htab_first_from(&cls->p.names, &cfs_name_htab_ops, pos);
		     d; d = cfs_htab_next(&cls->p.names, &cfs_name_htab_ops, d)) {
			if (cfs_dev_state(d, CFS_DS_REMOVING) || (top && d->parent))
				continue;
			pick = d;
			pos = cfs_htab_key(&cfs_name_htab_ops, d);
			break;
		}
		classfs_device_get(pick);
		cfs_unlock(t);
		if (!pick) {
			if (!top)
				return;
			top = false;
			pos = 0;
			continue;
		}
		if (classfs_device_unregister(pick) < 0)
			pos++;		/* still there: go on after it */
		classfs_device_put(pick);
	}
}

void classfs_class_unregister(struct classfs_class *cls)
{
	struct classfs_node *freelist = NULL;
	struct classfs_tree *t;

	if (!cls || !cls->p.registered)
		return;
	t = cls->p.tree;
	cfs_class_devices_unregister(cls);
	cfs_lock(t);
	cfs_subtree_deactivate(&cls->p.node);
	cfs_subtree_drain_locked(t, &cls->p.node);
	cfs_subtree_unlink(t, &cls->p.node, &freelist);
	for (struct classfs_class **pp = &t->classes; *pp; pp = &(*pp)->p.next)
		if (*pp == cls) {
			*pp = cls->p.next;
			break;
		}
	if (t->block_class == cls)
		t->block_class = NULL;
	cls->p.registered = false;
	/* interfaces still registered go with the class (nothing left to call) */
	for (struct classfs_interface *i = cls->p.interfaces; i; i = i->p.next)
		i->p.registered = false;
	cls->p.interfaces = NULL;
	cfs_htab_destroy(&cls->p.names);
	cfs_unlock(t);
	cfs_watch_sync(t);
	cfs_free_list(freelist);
	classfs_class_put(cls);
}

static void class_create_release(struct classfs_class *cls)
{
	cfs_free((void *)cls->name);
	cfs_free(cls);
}

struct classfs_class *classfs_class_create(struct classfs_tree *tree, const char *name)
{
	struct classfs_class *cls;
	int r;

	if (!tree || classfs_name_valid(name) < 0) {
		errno = EINVAL;
		return NULL;
	}
	cls = cfs_zalloc(sizeof(*cls));
	if (!cls)
		return NULL;
	cls->name = cfs_strdup(name);
	if (!cls->name) {
		cfs_free(cls);
		return NULL;
	}
	cls->class_release = class_create_release;
	cls->p.allocated = true;
	r = classfs_class_register(tree, cls);
	if (r < 0) {
		class_create_release(cls);
		errno = -r;
		return NULL;
	}
	return cls;
}

void classfs_class_destroy(struct classfs_class *cls)
{
	classfs_class_unregister(cls);
}

struct classfs_class *classfs_class_get(struct classfs_class *cls)
{
	if (cls)
		__atomic_add_fetch(&cls->p.refcount, 1, __ATOMIC_RELAXED);
	return cls;
}

void classfs_class_put(struct classfs_class *cls)
{
	if (cls && __atomic_sub_fetch(&cls->p.refcount, 1, __ATOMIC_ACQ_REL) == 0 &&
	    cls->class_release)
		cls->class_release(cls);
}

struct classfs_class *classfs_class_find(struct classfs_tree *tree, const char *name)
{
	struct classfs_class *cls;

	if (!tree || !name)
		return NULL;
	cfs_lock(tree);
	cls = classfs_class_get(class_find_locked(tree, name));
	cfs_unlock(tree);
	return cls;
}

static int class_file_add(struct classfs_class *cls, const struct classfs_class_attribute *attr,
			  bool owned)
{
	const struct classfs_class_attribute *list[2] = { attr, NULL };
	struct classfs_tree *t;
	struct classfs_node *n;
	int r;

	if (!cls || !attr || !cls->p.registered)
		return -EINVAL;
	t = cls->p.tree;
	r = attr_nodes_new(list, &n);
	if (r < 0)
		return r;
	cfs_lock(t);
	if (!cls->p.registered)
		r = -EINVAL;
	else if (cfs_class_lookup_locked(cls, n->name))
		r = -EEXIST;	/* the class directory also lists its devices */
	return cfs_file_add_unlock(t, &cls->p.node, n, r, owned);
}

int classfs_class_create_file(struct classfs_class *cls, const struct classfs_class_attribute *attr)
{
	return class_file_add(cls, attr, false);
}

int classfs_class_create_file_owned(struct classfs_class *cls, struct classfs_class_attribute *attr)
{
	int r = class_file_add(cls, attr, true);

	if (r < 0)
		cfs_free(attr);
	return r;
}

/* remove a real file node of a device or class directory (shared with attr.c) */
int cfs_remove_file(struct classfs_tree *t, struct classfs_node *dir, const char *name,
		    const void *attr)
{
	struct classfs_node *n, *freelist = NULL;
	int r;

	cfs_lock(t);
	n = cfs_dir_lookup(dir, name);
	if (!n || n->type == CFS_NT_DIR || n->type == CFS_NT_LNK ||
	    (n->u.attr != attr && !(n->flags & CFS_NF_OWN_ATTR))) {
		cfs_unlock(t);
		return -ENOENT;
	}
	r = cfs_node_remove_locked(t, n, &freelist);
	cfs_unlock(t);
	if (!r)
		cfs_watch_sync(t);
	cfs_free_list(freelist);
	return r;
}

void classfs_class_remove_file(struct classfs_class *cls, const struct classfs_class_attribute *attr)
{
	if (!cls || !attr || !cls->p.registered)
		return;
	cfs_remove_file(cls->p.tree, &cls->p.node, attr->attr.name, attr);
}

int classfs_class_for_each_device(struct classfs_class *cls,
				  int (*fn)(struct classfs_device *dev, void *data), void *data)
{
	struct classfs_device **v;
	size_t n = 0, cap;
	int r = 0;

	if (!cls || !fn || !cls->p.registered)
		return -EINVAL;
	cfs_lock(cls->p.tree);
	cap = cls->p.names.count;
	v = cfs_malloc((cap ? cap : 1) * sizeof(*v));
	if (!v) {
		cfs_unlock(cls->p.tree);
		return -ENOMEM;
	}
	for (struct classfs_device *d = cfs_htab_first_from(&cls->p.names, &cfs_name_htab_ops, 0); d;
	     d = cfs_htab_next(&cls->p.names, &cfs_name_htab_ops, d))
		if (cfs_dev_state(d, CFS_DS_LISTED))
			v[n++] = classfs_device_get(d);
	cfs_unlock(cls->p.tree);
	for (size_t i = 0; i < n; i++) {
		if (!r)
			r = fn(v[i], data);
		classfs_device_put(v[i]);
	}
	cfs_free(v);
	return r;
}

struct classfs_device *classfs_class_find_device_by_devt(struct classfs_class *cls, dev_t devt)
{
	struct classfs_device *found = NULL;
	struct classfs_tree *t;
	uint32_t h = cfs_hash_devt(devt);

	if (!cls || !cls->p.registered || !major(devt))
		return NULL;
	t = cls->p.tree;
	cfs_lock(t);
	for (struct classfs_device *d = cfs_htab_chain(&t->devts, h); d; d = d->p.devt_next) {
		if (d->p.devt_hash > h)
			break;
		if (d->p.devt_hash == h && d->devt == devt && d->cls == cls &&
		    !cfs_dev_state(d, CFS_DS_REMOVING)) {
			found = classfs_device_get(d);
			break;
		}
	}
	cfs_unlock(t);
	return found;
}

struct classfs_device *classfs_class_find_device(struct classfs_class *cls, const char *name)
{
	struct classfs_device *d;

	if (!cls || !name || !cls->p.registered)
		return NULL;
	cfs_lock(cls->p.tree);
	d = classfs_device_get(cfs_class_lookup_locked(cls, name));
	cfs_unlock(cls->p.tree);
	return d;
}

/* ---- buses ---- */

int classfs_bus_register(struct classfs_tree *tree, struct classfs_bus *bus)
{
	struct classfs_node *devices;
	int r;

	if (!tree || !bus || classfs_name_valid(bus->name) < 0)
		return -EINVAL;
	if (bus->p.registered)
		return -EBUSY;
	devices = cfs_node_new("devices", CFS_NT_DIR, 0755);
	if (!devices)
		return -ENOMEM;
	memset(&bus->p, 0, sizeof(bus->p));
	bus->p.tree = tree;
	cfs_node_init(&bus->p.node, bus->name, CFS_NT_DIR, 0755, CFS_NF_BUS);
	cfs_lock(tree);
	r = cfs_node_add(tree, tree->bus_dir, &bus->p.node);
	if (!r) {
		r = cfs_node_add(tree, &bus->p.node, devices);
		if (r < 0) {
			struct classfs_node *fl = NULL;

			cfs_subtree_unlink(tree, &bus->p.node, &fl);
		}
	}
	if (!r) {
		bus->p.devices = devices;
		bus->p.next = tree->buses;
		tree->buses = bus;
		bus->p.registered = true;
	}
	cfs_unlock(tree);
	if (r < 0)
		cfs_node_free(devices);
	else
		cfs_watch_sync(tree);
	return r;
}

int classfs_bus_unregister(struct classfs_bus *bus)
{
	struct classfs_node *freelist = NULL;
	struct classfs_tree *t;

	if (!bus || !bus->p.registered)
		return -EINVAL;
	t = bus->p.tree;
	cfs_lock(t);
	if (bus->p.ndevices) {
		cfs_unlock(t);
		return -EBUSY;
	}
	cfs_subtree_unlink(t, &bus->p.node, &freelist);
	for (struct classfs_bus **pp = &t->buses; *pp; pp = &(*pp)->p.next)
		if (*pp == bus) {
			*pp = bus->p.next;
			break;
		}
	bus->p.registered = false;
	cfs_unlock(t);
	cfs_watch_sync(t);
	cfs_free_list(freelist);
	return 0;
}

struct classfs_bus *classfs_bus_find(struct classfs_tree *tree, const char *name)
{
	struct classfs_bus *found = NULL;

	if (!tree || !name)
		return NULL;
	cfs_lock(tree);
	for (struct classfs_bus *b = tree->buses; b; b = b->p.next)
		if (!strcmp(b->name, name))
			found = b;
	cfs_unlock(tree);
	return found;
}

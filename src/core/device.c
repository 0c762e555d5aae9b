// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * device.c - class devices and physical devices: names, add, references
 * and release (removal is in device-del.c).
 *
 * A device is published in one critical section (L): its directory node
 * with every computed entry (`uevent`, `dev`, `subsystem`, `device`, the
 * class's and type's attributes, see view.c), its index entries and its
 * links appear at once, and the ADD event is numbered in that same
 * section.  Everything that can fail (allocations, ids, name checks) is
 * done before the first visible change, so an error changes nothing.
 */
#include "internal.h"

static uint32_t name_hash(const void *e)
{
	return ((const struct classfs_device *)e)->p.node.hash;
}

/* the device node's id: given before the device joins the indexes */
static uint32_t dev_node_id(const void *e)
{
	return ((const struct classfs_device *)e)->p.node.id;
}

const struct cfs_htab_ops cfs_name_htab_ops = {
	.next_off = offsetof(struct classfs_device, p.name_next),
	.hash = name_hash,
	.key2 = dev_node_id,
};

static uint32_t devt_hash(const void *e)
{
	return ((const struct classfs_device *)e)->p.devt_hash;
}

const struct cfs_htab_ops cfs_devt_htab_ops = {
	.next_off = offsetof(struct classfs_device, p.devt_next),
	.hash = devt_hash,
	.key2 = dev_node_id,
};

void classfs_device_initialize(struct classfs_device *dev)
{
	if (!dev)
		return;
	memset(&dev->p, 0, sizeof(dev->p));
	cfs_node_init(&dev->p.node, NULL, CFS_NT_DIR, 0755, CFS_NF_DEVICE);
	dev->p.refcount = 1;
	dev->p.state = CFS_DS_INIT;
}

static int set_name(struct classfs_device *dev, const char *name, bool owned)
{
	if (!dev || !cfs_dev_state(dev, CFS_DS_INIT))
		return -EINVAL;
	if (cfs_dev_state(dev, CFS_DS_ADDED))
		return -EBUSY;
	if (dev->p.node.flags & CFS_NF_OWN_NAME)
		cfs_free((void *)dev->p.node.name);
	dev->p.node.name = name;
	dev->p.node.hash = cfs_hash_name(name);
	if (owned)
		dev->p.node.flags |= CFS_NF_OWN_NAME;
	else
		dev->p.node.flags &= (uint16_t)~CFS_NF_OWN_NAME;
	cfs_dev_state_set(dev, CFS_DS_NAMED);
	return 0;
}

static int set_name_v(struct classfs_device *dev, const char *fmt, va_list ap)
{
	char buf[NAME_MAX + 2];
	char *copy;
	int len, r;

	if (!dev || !fmt)
		return -EINVAL;
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (len < 0 || len > NAME_MAX)
		return -EINVAL;
	r = classfs_name_valid(buf);
	if (r < 0)
		return r;
	copy = cfs_strdup(buf);
	if (!copy)
		return -ENOMEM;
	r = set_name(dev, copy, true);
	if (r < 0)
		cfs_free(copy);
	return r;
}

int classfs_device_set_name(struct classfs_device *dev, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = set_name_v(dev, fmt, ap);
	va_end(ap);
	return r;
}

int classfs_device_set_name_static(struct classfs_device *dev, const char *name)
{
	int r = classfs_name_valid(name);

	if (r < 0)
		return r;
	return set_name(dev, name, false);
}

const char *classfs_device_name(const struct classfs_device *dev)
{
	return dev ? dev->p.node.name : NULL;
}

bool classfs_device_is_added(const struct classfs_device *dev)
{
	return dev && cfs_dev_state(dev, CFS_DS_ADDED);
}

/*
 * The tree of @dev without a lock: through its class, bus or parents
 * first, which outlive it; walking its directory's parents is safe only
 * while it is linked, and another thread may be removing it (and freeing
 * a glue directory above it) right now.  A device that fills in a plain
 * directory (exact.c) sets the parent of the devices below it meanwhile.
 */
struct classfs_tree *cfs_device_tree_of(const struct classfs_device *dev)
{
	struct classfs_device *parent = __atomic_load_n(&dev->parent, __ATOMIC_ACQUIRE);
	struct classfs_device *phys = __atomic_load_n(&dev->phys, __ATOMIC_ACQUIRE);

	if (dev->cls && dev->cls->p.tree)
		return dev->cls->p.tree;
	if (dev->bus && dev->bus->p.tree)
		return dev->bus->p.tree;
	if (parent)
		return cfs_device_tree_of(parent);
	if (phys)
		return cfs_device_tree_of(phys);
	/*
	 * Below devices/: its directories are never freed while it may walk
	 * them (the plain ones it leaves go to the tree's graveyard, exact.c)
	 */
	if (cfs_dev_state(dev, CFS_DS_ADDED) || dev->p.node.parent)
		return cfs_node_tree(&dev->p.node);
	return classfs_default_tree();
}

/* safe while another thread removes @dev: never through the directories it frees */
struct classfs_tree *classfs_device_tree(const struct classfs_device *dev)
{
	if (!dev || !cfs_dev_state(dev, CFS_DS_ADDED))
		return NULL;
	return cfs_device_tree_of(dev);
}

struct classfs_device *classfs_device_get(struct classfs_device *dev)
{
	if (dev)
		__atomic_add_fetch(&dev->p.refcount, 1, __ATOMIC_RELAXED);
	return dev;
}

/*
 * The last reference: the device's own release, else its type's, else its
 * class's.  The class reference taken by add is held until here so that
 * the class's release callback is still there to be called.
 */
static void device_release(struct classfs_device *dev)
{
	struct classfs_class *cls = (dev->p.state & CFS_DS_CLASSREF) ? dev->cls : NULL;
	void (*release)(struct classfs_device *) = dev->release;

	if (!release && dev->type)
		release = dev->type->release;
	if (!release && dev->cls)
		release = dev->cls->dev_release;
	dev->p.node.flags &= (uint16_t)~CFS_NF_ALLOC;
	cfs_node_free(&dev->p.node);
	dev->p.state = 0;
	if (release)
		release(dev);
	classfs_class_put(cls);
}

void classfs_device_put(struct classfs_device *dev)
{
	if (dev && __atomic_sub_fetch(&dev->p.refcount, 1, __ATOMIC_ACQ_REL) == 0)
		device_release(dev);
}

/**
 * cfs_class_lookup_locked() - the device of class @cls named @name (under L)
 * @cls: the class
 * @name: the name
 *
 * A device whose class link was unlinked through the filesystem
 * (CFS_DS_UNINDEXED) is in the table still but has left the name index:
 * it is skipped, and another device of that name may be found instead.
 * Return: the device (no reference taken) or NULL.
 */
struct classfs_device *cfs_class_lookup_locked(struct classfs_class *cls, const char *name)
{
	uint32_t h = cfs_hash_name(name);

	cfs_assert_held(cls->p.tree);
	for (struct classfs_device *d = cfs_htab_chain(&cls->p.names, h); d; d = d->p.name_next) {
		if (d->p.node.hash > h)
			break;
		if (d->p.node.hash == h && !strcmp(d->p.node.name, name) &&
		    !cfs_dev_state(d, CFS_DS_UNINDEXED))
			return d;
	}
	return NULL;
}

/*
 * @ex: the exact directory (classfs_device_add_at()), else NULL: the
 * layout's place (placement.c)
 */
static int device_add(struct classfs_tree *t, struct classfs_device *dev,
		      const struct cfs_exact *ex)
{
	struct classfs_node *backlink = NULL, *buslink = NULL, *dir, *glue = NULL;
	struct classfs_node *freelist = NULL, *made = NULL, *adopt = NULL;
	struct cfs_event *ev = NULL;
	unsigned int base_puts = 0;
	const char *name;
	int r;

	if (!dev || !cfs_dev_state(dev, CFS_DS_INIT))
		return -EINVAL;
	if (cfs_dev_state(dev, CFS_DS_ADDED))
		return -EBUSY;
	name = dev->p.node.name;
	if (!name || classfs_name_valid(name) < 0)
		return -EINVAL;
	if (dev->cls && dev->bus)
		return -EINVAL;
	if (dev->cls && dev->parent && dev->parent->cls != dev->cls)
		return -EINVAL;
	if (!dev->cls && dev->phys)
		return -EINVAL;		/* a physical device's parent is @parent */
	if (dev->parent == dev || dev->phys == dev)
		return -EINVAL;
	if (dev->cls)
		t = dev->cls->p.tree;
	else if (dev->bus)
		t = dev->bus->p.tree;
	else if (dev->parent)
		t = classfs_device_tree(dev->parent);
	if (!t || (ex && t != ex->tree))
		return -EINVAL;
	if ((dev->parent && classfs_device_tree(dev->parent) != t) ||
	    (dev->phys && classfs_device_tree(dev->phys) != t))
		return -EINVAL;
	/* its computed entries: distinct, none named like one the tree makes */
	r = cfs_device_names_check(dev);
	if (r < 0)
		return r;

	/* the event is made first: with it, publishing cannot fail */
	if (cfs_event_needed(dev)) {
		ev = cfs_event_alloc();
		if (!ev)
			return -ENOMEM;
		if (cfs_event_fill(dev, ev, NULL)) {
			/* vetoed by a hook: added without an event, as Linux does */
			cfs_event_discard(ev);
			ev = NULL;
		}
	}
	if (cfs_wants_backlink(t, dev) && !(backlink = cfs_backlink_new(dev, name))) {
		r = -ENOMEM;
		goto out_free;
	}
	if (dev->bus && !(buslink = cfs_node_new(name, CFS_NT_LNK, 0777))) {
		r = -ENOMEM;
		goto out_free;
	}

	cfs_lock(t);
	/* the index buckets read below: their cache misses overlap */
	if (dev->cls) {
		cfs_htab_prefetch(&dev->cls->p.names, dev->p.node.hash);
		if (dev->cls->p.node.u.dir)
			cfs_htab_prefetch(dev->cls->p.node.u.dir, dev->p.node.hash);
	}
	dev->p.devt_hash = cfs_hash_devt(dev->devt);
	if (major(dev->devt))
		cfs_htab_prefetch(&t->devts, dev->p.devt_hash);
	r = -EINVAL;
	if ((dev->cls && !dev->cls->p.registered) || (dev->bus && !dev->bus->p.registered))
		goto out_unlock;
	if ((dev->parent && !cfs_dev_state(dev->parent, CFS_DS_ADDED)) ||
	    (dev->phys && !cfs_dev_state(dev->phys, CFS_DS_ADDED)))
		goto out_unlock;
	r = -ENODEV;
	if ((dev->parent && !cfs_dev_alive(dev->parent)) ||
	    (dev->phys && !cfs_dev_alive(dev->phys)))
		goto out_unlock;
	r = -EEXIST;
	/* the class directory lists every device of the class beside its files */
	if (dev->cls && (cfs_class_lookup_locked(dev->cls, name) ||
			 ((adopt = cfs_dir_lookup(&dev->cls->p.node, name)) &&
			  !cfs_plain_adoptable(adopt, dev))))
		goto out_unlock;
	/* an exact place is what its caller names (exact.c checks devices/virtual) */
	if (!ex && cfs_layout_clash_locked(t, dev, name))
		goto out_unlock;
	r = ex ? cfs_place_exact_locked(t, dev, ex, &dir, &made, &freelist)
	       : cfs_placement_locked(t, dev, &dir, &glue);
	if (r < 0)
		goto out_unlock;
	r = -EEXIST;
	/*
	 * A plain directory there is filled in (exact.c): at an exact place
	 * any, elsewhere one made through the filesystem that holds data only
	 * (plain.c); a name the class directory holds is taken.
	 */
	adopt = cfs_dir_lookup(dir, name);
	if ((adopt && (ex ? cfs_adopt_check(dev, adopt) < 0 : !cfs_plain_adoptable(adopt, dev))) ||
	    (dev->cls && cfs_dir_lookup(&dev->cls->p.node, name) &&
	     cfs_dir_lookup(&dev->cls->p.node, name) != adopt) ||
	    (dir->flags & CFS_NF_DEVICE && cfs_name_is_virtual(cfs_node_device(dir), name)))
		goto out_glue;

	/* reserve everything that could fail */
	r = -ENOMEM;
	if (cfs_dir_reserve(dir) < 0)
		goto out_glue;
	if (dev->cls && cfs_htab_reserve(&dev->cls->p.names) < 0)
		goto out_dir;
	if (major(dev->devt) && cfs_htab_reserve(&t->devts) < 0)
		goto out_names;
	r = cfs_node_id_alloc(t, &dev->p.node);
	if (r < 0)
		goto out_devts;
	if (backlink && (r = cfs_reserve_link(t, &dev->phys->p.node, backlink)) < 0)
		goto out_id;
	if (buslink && (r = cfs_reserve_link(t, dev->bus->p.devices, buslink)) < 0)
		goto out_buslink;

	/* publish: nothing below can fail */
	dev->p.node.active = 0;
	dev->p.node.flags &= (uint16_t)~CFS_NF_DEAD;
	dev->p.node.type = CFS_NT_DIR;
	if (adopt)
		base_puts = cfs_adopt_locked(t, dev, adopt);
	else
		cfs_dir_link(dir, &dev->p.node);
	if (dev->cls)
		cfs_htab_insert(&dev->cls->p.names, &cfs_name_htab_ops, dev);
	if (dev->cls && dev->parent)
		dev->cls->p.nested++;
	if (major(dev->devt))
		cfs_htab_insert(&t->devts, &cfs_devt_htab_ops, dev);
	if (backlink) {
		backlink->u.target = &dev->p.node;
		cfs_dir_link(&dev->phys->p.node, backlink);
	}
	if (buslink) {
		buslink->u.target = &dev->p.node;
		cfs_dir_link(dev->bus->p.devices, buslink);
		dev->bus->p.ndevices++;
	}
	classfs_device_get(dev->parent);
	classfs_device_get(dev->phys);
	if (dev->cls && !(dev->p.state & CFS_DS_CLASSREF)) {
		classfs_class_get(dev->cls);
		cfs_dev_state_set(dev, CFS_DS_CLASSREF);
	}
	cfs_dev_state_set(dev, CFS_DS_ADDED);
	t->ndevices++;
	cfs_watch_device_locked(t, dev);
	/* over the limits: added without an event, as Linux does */
	(void)cfs_event_emit_locked(t, ev, CLASSFS_ACTION_ADD, dev, NULL);
	cfs_unlock(t);
	cfs_free_list(freelist);

	/* the devices below an adopted directory held its parent before */
	while (base_puts--)
		classfs_device_put(cfs_dev_base(dev));
	cfs_watch_sync(t);
	cfs_events_deliver(t);
	/* joins the class's list and meets its interfaces */
	if (dev->cls)
		cfs_interfaces_add_device(dev);
	return 0;

	/* every table is given back under L: another thread may be reserving in it */
out_buslink:
	cfs_unreserve_dir(t, dev->bus->p.devices);
	if (backlink) {
		cfs_node_id_release(t, backlink);
		cfs_unreserve_dir(t, &dev->phys->p.node);
	}
out_id:
	cfs_node_id_release(t, &dev->p.node);
out_devts:
	cfs_unreserve_htab(t, &t->devts);
out_names:
	if (dev->cls)
		cfs_unreserve_htab(t, &dev->cls->p.names);
out_dir:
	cfs_unreserve_dir(t, dir);
out_glue:
	cfs_glue_put_locked(t, glue, &freelist);
	if (made)
		cfs_subtree_unlink(t, made, &freelist);
out_unlock:
	cfs_unlock(t);
	cfs_free_list(freelist);
out_free:
	if (backlink)
		cfs_node_free(backlink);
	if (buslink)
		cfs_node_free(buslink);
	cfs_event_discard(ev);
	return r;
}

int classfs_device_add(struct classfs_device *dev)
{
	return device_add(NULL, dev, NULL);
}

int classfs_device_add_to(struct classfs_tree *tree, struct classfs_device *dev)
{
	if (!tree)
		return -EINVAL;
	return device_add(tree, dev, NULL);
}

int classfs_device_add_at(struct classfs_tree *tree, struct classfs_device *dev,
			  const char *dir)
{
	struct cfs_exact ex;
	int r;

	if (!tree || !dev)
		return -EINVAL;
	ex.tree = tree;
	r = cfs_exact_split(&ex, dir);
	return r < 0 ? r : device_add(tree, dev, &ex);
}

int classfs_device_add_virtual(struct classfs_tree *tree, struct classfs_device *dev)
{
	int r;

	if (!tree || !dev || dev->cls || dev->bus || dev->parent || dev->phys ||
	    !cfs_dev_state(dev, CFS_DS_INIT) || cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	cfs_dev_state_set(dev, CFS_DS_VIRTUAL);
	r = device_add(tree, dev, NULL);
	if (r < 0)
		cfs_dev_state_clear(dev, CFS_DS_VIRTUAL);
	return r;
}

int classfs_device_register(struct classfs_device *dev)
{
	if (!dev)
		return -EINVAL;
	if (!cfs_dev_state(dev, CFS_DS_NAMED))
		return -EINVAL;
	if (!cfs_dev_state(dev, CFS_DS_INIT))
		classfs_device_initialize(dev);
	return classfs_device_add(dev);
}

static void device_create_release(struct classfs_device *dev)
{
	cfs_free(dev);
}

struct classfs_device *classfs_device_create(struct classfs_class *cls,
					     struct classfs_device *parent, dev_t devt,
					     struct classfs_device *phys, void *drvdata,
					     const char *fmt, ...)
{
	struct classfs_device *dev;
	va_list ap;
	int r;

	if (!cls) {
		errno = EINVAL;
		return NULL;
	}
	dev = cfs_zalloc(sizeof(*dev));
	if (!dev)
		return NULL;
	classfs_device_initialize(dev);
	dev->cls = cls;
	dev->parent = parent;
	dev->devt = devt;
	dev->phys = phys;
	dev->drvdata = drvdata;
	dev->release = device_create_release;
	va_start(ap, fmt);
	r = set_name_v(dev, fmt, ap);
	va_end(ap);
	if (!r)
		r = classfs_device_add(dev);
	if (r < 0) {
		classfs_device_put(dev);
		errno = -r;
		return NULL;
	}
	return dev;
}

/*
 * Collect @dev's variables for @action (the hooks run, without locks),
 * then under L either send the event (@send) or only check it against the
 * limits.  Return: 0, -EINVAL, -ENODEV, -ENOMEM (no memory, or limits
 * when sending), -E2BIG (limits when checking), or a hook's veto.
 */
static int device_uevent(struct classfs_device *dev, enum classfs_action action,
			 const char *const *extra, bool send)
{
	struct classfs_tree *t;
	struct cfs_event *ev;
	int r;

	if (!dev || (unsigned int)action >= CLASSFS_ACTION_COUNT ||
	    !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	ev = cfs_event_alloc();
	if (!ev)
		return -ENOMEM;
	r = cfs_event_fill(dev, ev, extra);
	if (!r) {
		cfs_lock(t);
		if (!cfs_dev_state(dev, CFS_DS_ADDED)) {
			r = -ENODEV;
		} else if (send) {
			r = cfs_event_emit_locked(t, ev, action, dev, NULL);
			ev = NULL;	/* consumed */
		} else {
			r = cfs_event_check_locked(t, ev, action, dev);
		}
		cfs_unlock(t);
	}
	cfs_event_discard(ev);
	if (send)
		cfs_events_deliver(t);
	return !send && r == -ENOMEM ? -E2BIG : r;	/* the event was allocated */
}

int classfs_device_uevent(struct classfs_device *dev, enum classfs_action action,
			  const char *const *extra)
{
	return device_uevent(dev, action, extra, true);
}

int classfs_device_uevent_check(struct classfs_device *dev, enum classfs_action action,
				const char *const *extra)
{
	return device_uevent(dev, action, extra, false);
}

int classfs_device_devpath(struct classfs_device *dev, char *buf, size_t size)
{
	struct classfs_tree *t;
	int r;

	if (!dev || !buf || !cfs_dev_state(dev, CFS_DS_ADDED))
		return -EINVAL;
	t = cfs_device_tree_of(dev);
	cfs_lock(t);
	/* removed meanwhile, its node is unlinked from directories that may be freed */
	r = cfs_dev_state(dev, CFS_DS_ADDED) ? cfs_node_path(&dev->p.node, buf, size) : -EINVAL;
	cfs_unlock(t);
	return r;
}

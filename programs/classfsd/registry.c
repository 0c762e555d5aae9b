// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * registry.c - what clients published: classes and devices by name, their
 * owner uid and the connection they are bound to.
 *
 * The registry holds a reference on each device it lists.  The core may
 * remove a device on its own (the devices below a removed parent, those
 * of a removed class): such an entry is found dead (no longer added) and
 * dropped the next time anything looks at it.  All of it runs under
 * cfsd.lock (R, see daemon.h), which is never held while the tree drains
 * a removed device's running show()/store() calls: a removal (removal.c)
 * takes its objects out of the registry under R and removes them from the
 * tree after R is released.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* "CLASS/NAME" ("/NAME" for a physical device) into @buf (NAME_MAX * 2 + 2 bytes) */
static char *key_into(char *buf, const char *cls, const char *name)
{
	size_t cl = cls ? strlen(cls) : 0, nl = strlen(name);

	if (cl > NAME_MAX || nl > NAME_MAX)
		return NULL;
	if (cl)
		memcpy(buf, cls, cl);
	buf[cl] = '/';
	memcpy(buf + cl + 1, name, nl + 1);
	return buf;
}

#define KEY_MAX (2 * NAME_MAX + 2)

static char *dev_key(const char *cls, const char *name)
{
	char buf[KEY_MAX];

	return key_into(buf, cls, name) ? strdup(buf) : NULL;
}

/* ---- object lists ---- */

/* ---- R's assertions ---- */

#ifdef CFSD_LOCK_CHECKS
void cfsd_assert_held_fn(const char *fn)
{
	if (__atomic_load_n(&cfsd.lock_owner, __ATOMIC_RELAXED) == (uintptr_t)pthread_self())
		return;
	log_err("%s() called without cfsd.lock", fn);
	abort();
}

void cfsd_assert_not_held_fn(const char *fn)
{
	if (__atomic_load_n(&cfsd.lock_owner, __ATOMIC_RELAXED) != (uintptr_t)pthread_self())
		return;
	log_err("%s() called with cfsd.lock held: it may wait for a publisher", fn);
	abort();
}
#endif

static void all_link(struct cfsd_obj *o)
{
	cfsd_assert_held();
	cfs_list_add_tail(&o->all_link, &cfsd.all);
}

static void all_unlink(struct cfsd_obj *o)
{
	cfsd_assert_held();
	cfs_list_del(&o->all_link);
}

static void bound_link(struct cfsd_obj *o, struct cfsd_conn *c)
{
	cfsd_assert_held();
	o->bound = c;
	cfs_list_add_tail(&o->bound_link, &c->bound);
}

static void bound_unlink(struct cfsd_obj *o)
{
	cfsd_assert_held();
	if (!o->bound)
		return;
	cfs_list_del(&o->bound_link);
	o->bound = NULL;
}

bool cfsd_may_change(const struct cfsd_obj *o, uid_t uid)
{
	return uid == 0 || uid == o->owner;
}

/* ---- hash tables ---- */

/* double @buckets when @count reaches their number; entries keep their hash */
static int grow(void ***buckets, size_t *nb, size_t count, size_t next_off, size_t hash_off)
{
	size_t n = *nb ? *nb * 2 : 1024;
	void **nbk;

	if (count < *nb)
		return 0;
	nbk = calloc(n, sizeof(*nbk));
	if (!nbk)
		return -ENOMEM;
	for (size_t i = 0; i < *nb; i++) {
		void *e = (*buckets)[i];

		while (e) {
			void **nextp = (void **)((char *)e + next_off);
			void *next = *nextp;
			size_t b = *(const uint32_t *)((char *)e + hash_off) & (n - 1);

			*nextp = nbk[b];
			nbk[b] = e;
			e = next;
		}
	}
	free(*buckets);
	*buckets = nbk;
	*nb = n;
	return 0;
}

static int dev_hash_insert(struct cfsd_rdev *rd)
{
	size_t b;

	cfsd_assert_held();
	if (grow((void ***)&cfsd.devs, &cfsd.ndev_buckets, cfsd.ndevs, offsetof(struct cfsd_rdev, hnext),
		 offsetof(struct cfsd_rdev, hash)) < 0)
		return -ENOMEM;
	rd->hash = hash_str(rd->key);
	b = rd->hash & (cfsd.ndev_buckets - 1);
	rd->hnext = cfsd.devs[b];
	cfsd.devs[b] = rd;
	cfsd.ndevs++;
	return 0;
}

static void dev_hash_remove(struct cfsd_rdev *rd)
{
	struct cfsd_rdev **pp = &cfsd.devs[rd->hash & (cfsd.ndev_buckets - 1)];

	cfsd_assert_held();
	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == rd) {
			*pp = rd->hnext;
			cfsd.ndevs--;
			return;
		}
}

static int class_hash_insert(struct cfsd_rclass *rc)
{
	size_t b;

	cfsd_assert_held();
	if (grow((void ***)&cfsd.classes, &cfsd.nclass_buckets, cfsd.nclasses,
		 offsetof(struct cfsd_rclass, hnext), offsetof(struct cfsd_rclass, hash)) < 0)
		return -ENOMEM;
	rc->hash = hash_str(rc->name);
	b = rc->hash & (cfsd.nclass_buckets - 1);
	rc->hnext = cfsd.classes[b];
	cfsd.classes[b] = rc;
	cfsd.nclasses++;
	return 0;
}

static void class_hash_remove(struct cfsd_rclass *rc)
{
	struct cfsd_rclass **pp = &cfsd.classes[rc->hash & (cfsd.nclass_buckets - 1)];

	cfsd_assert_held();
	for (; *pp; pp = &(*pp)->hnext)
		if (*pp == rc) {
			*pp = rc->hnext;
			cfsd.nclasses--;
			return;
		}
}

/* ---- devices ---- */

static void rdev_free(struct cfsd_rdev *rd)
{
	cfsd_quota_dev_gone(rd);	/* one that never made it into the registry */
	for (unsigned int i = 0; i < rd->nattrs; i++) {
		free(rd->attrs[i].path);
		free(rd->attrs[i].value);
	}
	for (unsigned int i = 0; i < rd->ngroups; i++)
		free((char *)rd->groups[i].name);
	free(rd->attrs);
	free(rd->groups);
	free(rd->group_ptrs);
	free(rd->attr_ptrs);
	free(rd->key);
	free(rd->name);
	free(rd->cls_name);
	free(rd->devtype);
	if (rd->remote)
		cfsd_conn_put(rd->remote);
	free(rd);
}

static void rdev_release(struct classfs_device *dev)
{
	rdev_free(container_of(dev, struct cfsd_rdev, dev));
}

/**
 * cfsd_dev_is_entry() - whether @dev is a registry entry's device (one a
 * client published), listed or being removed; else the record loader's
 */
bool cfsd_dev_is_entry(const struct classfs_device *dev)
{
	return dev && dev->release == rdev_release;
}

/** cfsd_dev_entry() - the registry entry of @dev, or NULL (the record loader's device) */
struct cfsd_rdev *cfsd_dev_entry(const struct classfs_device *dev)
{
	return cfsd_dev_is_entry(dev) ? container_of(dev, struct cfsd_rdev, dev) : NULL;
}

/** cfsd_dev_removing() - whether a removal took @dev's entry out of the registry; under R */
bool cfsd_dev_removing(const struct classfs_device *dev)
{
	cfsd_assert_held();
	return cfsd_dev_is_entry(dev) && container_of(dev, struct cfsd_rdev, dev)->o.removing;
}

/** cfsd_dev_unpublish() - @rd out of the name table and the lists, marked removing; the registry's reference stays; under R */
void cfsd_dev_unpublish(struct cfsd_rdev *rd)
{
	dev_hash_remove(rd);
	all_unlink(&rd->o);
	bound_unlink(&rd->o);
	rd->o.removing = true;
}

/* drop an entry whose device the core already removed from the registry */
static void dev_forget(struct cfsd_rdev *rd)
{
	cfsd_dev_unpublish(rd);
	cfsd_quota_uncharge(rd->o.owner, CFSD_Q_OBJ, 1);
	cfsd_quota_dev_gone(rd);
	classfs_device_put(&rd->dev);
}

/* removals so far, and as of the last cfsd_forget_dead() walk (under cfsd.lock) */
static unsigned long removals, removals_swept;
/* a removal dropped the classes it removed (signalled under R) */
static pthread_cond_t removed_cond = PTHREAD_COND_INITIALIZER;

/**
 * cfsd_forget_dead() - drop the entries whose device the core removed
 * on its own; under R
 *
 * Entries whose device the core removed on its own (with a parent, a
 * physical device or a class, when a connection's bound objects go) are
 * dropped only when looked up: before a uid is refused for holding too
 * many objects, drop them all now.  Only a removal can have left such
 * entries: without one since the last walk there is none to find, and a
 * uid at its limit does not make the daemon walk every object on each
 * refused request.
 */
void cfsd_forget_dead(void)
{
	struct cfs_list *pos, *next;

	cfsd_assert_held();
	if (removals == removals_swept)
		return;
	removals_swept = removals;
	cfs_list_for_each_safe(pos, next, &cfsd.all) {
		struct cfsd_obj *o = cfs_list_entry(pos, struct cfsd_obj, all_link);

		if (!o->is_class) {
			struct cfsd_rdev *rd = container_of(o, struct cfsd_rdev, o);

			if (!classfs_device_is_added(&rd->dev))
				dev_forget(rd);
		}
	}
}

/*
 * Count @n more objects for @uid, within its limit (-EDQUOT).  Under
 * cfsd.lock, where every object is added and removed.
 */
static int obj_charge(uid_t uid, size_t n, char *msg, size_t msgsz)
{
	int r = cfsd_quota_charge(uid, CFSD_Q_OBJ, n, msg, msgsz);

	if (r == -EDQUOT) {
		cfsd_forget_dead();
		r = cfsd_quota_charge(uid, CFSD_Q_OBJ, n, msg, msgsz);
	}
	return r;
}

struct cfsd_rdev *cfsd_dev_lookup(const char *cls, const char *name)
{
	char buf[KEY_MAX];
	char *key = key_into(buf, cls, name);
	struct cfsd_rdev *rd = NULL;

	uint32_t h;

	cfsd_assert_held();
	if (!key || !cfsd.ndev_buckets)
		return NULL;
	h = hash_str(key);
	for (rd = cfsd.devs[h & (cfsd.ndev_buckets - 1)]; rd; rd = rd->hnext)
		if (rd->hash == h && !strcmp(rd->key, key))
			break;
	if (rd && !classfs_device_is_added(&rd->dev)) {
		dev_forget(rd);	/* the core removed it with its parent or class */
		rd = NULL;
	}
	return rd;
}

static struct classfs_bus *bus_get(const char *name)
{
	struct classfs_bus *bus = classfs_bus_find(cfsd.tree, name), **v;
	char *n;

	if (bus)
		return bus;
	v = realloc(cfsd.buses, (cfsd.nbuses + 1) * sizeof(*v));
	if (!v)
		return NULL;
	cfsd.buses = v;
	bus = calloc(1, sizeof(*bus));
	n = strdup(name);
	if (bus)
		bus->name = n;
	if (!bus || !n || classfs_bus_register(cfsd.tree, bus) < 0) {
		free(bus);
		free(n);
		return NULL;
	}
	return cfsd.buses[cfsd.nbuses++] = bus;
}

static int dev_add_charged(const struct cfs_msg *m, uid_t owner, struct cfsd_conn *c,
			   struct cfsd_rclass *rc, char *msg, size_t msgsz);
static void class_wait_removed(const char *name);

/* what @m asks for is a device: fields that fit together, attribute names of its own */
static int dev_add_check(const struct cfs_msg *m, char *msg, size_t msgsz)
{
	int r;

	if (!m->cls && (m->phys || m->phys_class || m->devtype)) {
		snprintf(msg, msgsz, "a physical device takes no PHYS, PHYS_CLASS or DEVTYPE");
		return -EINVAL;
	}
	if (m->cls && m->bus) {
		snprintf(msg, msgsz, "a class device has no bus");
		return -EINVAL;
	}
	r = cfsd_attrs_check(m, msg, msgsz);
	if (r < 0)
		return r;
	if (m->phys_class && !m->phys) {
		snprintf(msg, msgsz, "PHYS_CLASS without PHYS");
		return -EINVAL;
	}
	return 0;
}


int cfsd_dev_add(const struct cfs_msg *m, uid_t owner, struct cfsd_conn *c, char *msg, size_t msgsz)
{
	struct cfsd_rclass *rc = NULL;
	bool made_class;
	int r;

	r = dev_add_check(m, msg, msgsz);
	if (r < 0)
		return r;
	if (m->cls) {
		class_wait_removed(m->cls);
		rc = cfsd_class_lookup(m->cls);
	}
	/*
	 * Room for the device and the class made for it, checked before
	 * either is made (nothing half-made on -EDQUOT); each is then
	 * counted as it is made.
	 */
	r = obj_charge(owner, 1 + (m->cls && !rc), msg, msgsz);
	if (r < 0)
		return r;
	cfsd_quota_uncharge(owner, CFSD_Q_OBJ, 1 + (m->cls && !rc));
	made_class = m->cls && !rc;
	if (made_class && (r = cfsd_class_create(m->cls, owner, NULL, &rc, msg, msgsz)) < 0)
		return r;
	r = cfsd_quota_charge(owner, CFSD_Q_OBJ, 1, msg, msgsz);	/* the room is there */
	if (r < 0)
		goto out_class;
	r = dev_add_charged(m, owner, c, rc, msg, msgsz);
	if (r < 0) {
		cfsd_quota_uncharge(owner, CFSD_Q_OBJ, 1);
		goto out_class;
	}
	return 0;
out_class:
	/* a refused add leaves nothing behind, not even the class made for it */
	if (made_class)
		cfsd_class_drop(rc, true);
	return r;
}

/*
 * The devices @m names as its parent and physical device, and its bus
 * (registered when new); under cfsd.lock.
 */
static int dev_find_relatives(const struct cfs_msg *m, struct cfsd_rdev **parent,
			      struct cfsd_rdev **phys, struct classfs_bus **bus, char *msg,
			      size_t msgsz)
{
	if (cfsd_dev_lookup(m->cls, m->name)) {
		snprintf(msg, msgsz, "%s %s%s%s exists", m->cls ? "class device" : "physical device",
			 m->cls ? m->cls : "", m->cls ? "/" : "", m->name);
		return -EEXIST;
	}
	if (m->parent && !(*parent = cfsd_dev_lookup(m->cls, m->parent))) {
		snprintf(msg, msgsz, "parent %s%s%s not found", m->cls ? m->cls : "",
			 m->cls ? "/" : "", m->parent);
		return -ENOENT;
	}
	if (m->phys && !(*phys = cfsd_dev_lookup(m->phys_class, m->phys))) {
		snprintf(msg, msgsz, "physical device %s%s%s not found",
			 m->phys_class ? m->phys_class : "", m->phys_class ? "/" : "", m->phys);
		return -ENOENT;
	}
	if (m->bus && !(*bus = bus_get(m->bus))) {
		snprintf(msg, msgsz, "cannot register bus %s", m->bus);
		return -ENOMEM;
	}
	return 0;
}

/* a new registry device for @m, not yet in the tree: names, attributes, type */
static struct cfsd_rdev *rdev_new(const struct cfs_msg *m, uid_t owner, struct cfsd_conn *c,
				  int *err, char *msg, size_t msgsz)
{
	struct cfsd_rdev *rd = calloc(1, sizeof(*rd));
	bool remote = false;
	int r;

	*err = -ENOMEM;
	if (!rd)
		return NULL;
	rd->key = dev_key(m->cls, m->name);
	rd->cls_name = m->cls ? strdup(m->cls) : NULL;
	rd->devtype = m->devtype ? strdup(m->devtype) : NULL;
	if (!rd->key || (m->cls && !rd->cls_name) || (m->devtype && !rd->devtype)) {
		rdev_free(rd);
		return NULL;
	}
	r = cfsd_attrs_build(rd, m, msg, msgsz);
	if (r < 0) {
		rdev_free(rd);
		*err = r;
		return NULL;
	}
	for (unsigned int i = 0; i < rd->nattrs; i++)
		remote |= rd->attrs[i].remote;
	rd->type = (struct classfs_device_type){ .name = rd->devtype,
						 .groups = rd->ngroups ? rd->group_ptrs : NULL };
	rd->o = (struct cfsd_obj){ .owner = owner, .open = m->flags & CFS_F_OPEN };
	r = cfsd_attrs_charge(rd, msg, msgsz);
	if (r < 0) {
		rdev_free(rd);
		*err = r;
		return NULL;
	}
	if (remote)
		rd->remote = cfsd_conn_get(c);
	*err = 0;
	return rd;
}

/* @rd into the tree and the registry's index; on failure the device is put */
static int rdev_register(struct cfsd_rdev *rd, const struct cfs_msg *m, struct cfsd_rclass *rc,
			 struct cfsd_rdev *parent, struct cfsd_rdev *phys, struct classfs_bus *bus,
			 char *msg, size_t msgsz)
{
	int r;

	classfs_device_initialize(&rd->dev);
	rd->dev.cls = rc ? rc->cls : NULL;
	rd->dev.parent = parent ? &parent->dev : NULL;
	rd->dev.devt = (dev_t)m->devt;
	rd->dev.phys = phys ? &phys->dev : NULL;
	rd->dev.bus = bus;
	rd->dev.type = (rd->devtype || rd->ngroups) ? &rd->type : NULL;
	rd->dev.release = rdev_release;
	/* storage that lives as long as the device: no formatting per add */
	rd->name = strdup(m->name);
	r = rd->name ? classfs_device_set_name_static(&rd->dev, rd->name) : -ENOMEM;
	if (r == 0) {
		if (!rc && !parent && !bus)
			r = classfs_device_add_to(cfsd.tree, &rd->dev);
		else
			r = classfs_device_add(&rd->dev);
	}
	if (r == 0 && dev_hash_insert(rd) < 0) {
		classfs_device_del(&rd->dev);
		r = -ENOMEM;
	}
	if (r < 0) {
		if (!msg[0])
			snprintf(msg, msgsz, "cannot add %s: %s", m->name, strerror(-r));
		classfs_device_put(&rd->dev);
	}
	return r;
}

/* cfsd_dev_add() once its class is there and the device is counted */
static int dev_add_charged(const struct cfs_msg *m, uid_t owner, struct cfsd_conn *c,
			   struct cfsd_rclass *rc, char *msg, size_t msgsz)
{
	struct cfsd_rdev *parent = NULL, *phys = NULL, *rd;
	struct classfs_bus *bus = NULL;
	int r;

	r = dev_find_relatives(m, &parent, &phys, &bus, msg, msgsz);
	if (r < 0)
		return r;
	r = cfsd_dev_place_check(m, owner, parent, phys, msg, msgsz);	/* access.c */
	if (r < 0)
		return r;
	rd = rdev_new(m, owner, c, &r, msg, msgsz);
	if (!rd)
		return r;
	r = rdev_register(rd, m, rc, parent, phys, bus, msg, msgsz);
	if (r < 0)
		return r;
	classfs_device_get(&rd->dev);	/* the registry's reference */
	all_link(&rd->o);
	if (c && (m->flags & CFS_F_BIND))
		bound_link(&rd->o, c);
	return 0;
}

int cfsd_dev_rename(struct cfsd_rdev *rd, const char *new_name, const struct cfsd_conn *by)
{
	char *key = dev_key(rd->cls_name, new_name);
	int r;

	cfsd_assert_held();
	if (!key)
		return -ENOMEM;
	if (cfsd_dev_lookup(rd->cls_name, new_name)) {
		free(key);
		return -EEXIST;
	}
	r = classfs_device_rename(&rd->dev, new_name);
	if (r < 0) {
		free(key);
		return r;
	}
	/*
	 * The core keeps its own copy now.  Remote calls name the device as
	 * its publisher knows it: a rename by the publisher (whose library
	 * follows it) changes that, one by root does not.
	 */
	if (!rd->remote || rd->remote == by) {
		char *n = strdup(new_name), *old = NULL;

		if (n) {
			pthread_mutex_lock(&cfsd.vlock);
			old = rd->name;
			rd->name = n;
			pthread_mutex_unlock(&cfsd.vlock);
		}
		free(old);
	}
	dev_hash_remove(rd);
	free(rd->key);
	rd->key = key;
	if (dev_hash_insert(rd) < 0)
		log_err("out of memory re-indexing %s", key);	/* the table keeps its size */
	return 0;
}

/* ---- classes ---- */

/*
 * Under R: the listed class @name, else NULL; *@removing tells whether one
 * of that name is being removed.  A class being removed stays listed until
 * the tree let it go; a new one of its name, made once the tree let the
 * old one go, is listed beside it meanwhile.
 */
static struct cfsd_rclass *class_listed(const char *name, bool *removing)
{
	uint32_t h = hash_str(name);

	cfsd_assert_held();
	*removing = false;
	if (cfsd.nclass_buckets)
		for (struct cfsd_rclass *rc = cfsd.classes[h & (cfsd.nclass_buckets - 1)]; rc;
		     rc = rc->hnext)
			if (rc->hash == h && !strcmp(rc->name, name)) {
				if (!rc->o.removing)
					return rc;
				*removing = true;
			}
	return NULL;
}

/*
 * Under R: wait until no class named @name is being removed (R released
 * meanwhile), so that what is made in its name finds the name free, as it
 * did when its removal ran under R.  The removal may wait up to the call
 * timeout for the calls running on its devices: only requests in that
 * class's name wait with it.
 */
static void class_wait_removed(const char *name)
{
	bool removing;

	while (!class_listed(name, &removing) && removing) {
		cfsd_owner_set((uintptr_t)0);
		pthread_cond_wait(&removed_cond, &cfsd.lock);
		cfsd_owner_set((uintptr_t)pthread_self());
	}
}

struct cfsd_rclass *cfsd_class_lookup(const char *name)
{
	struct cfsd_rclass *rc;
	struct classfs_class *cls;
	bool removing;

	/* not found while being removed, and not taken for the record loader's either */
	rc = class_listed(name, &removing);
	if (rc || removing)
		return rc;
	/* a class the record loader made: take it in, owned by root */
	cls = classfs_class_find(cfsd.tree, name);
	if (!cls)
		return NULL;
	rc = calloc(1, sizeof(*rc));
	if (!rc || !(rc->name = strdup(name)) || class_hash_insert(rc) < 0) {
		if (rc)
			free(rc->name);
		free(rc);
		classfs_class_put(cls);
		return NULL;
	}
	rc->cls = cls;
	rc->foreign = true;
	rc->o = (struct cfsd_obj){ .owner = 0, .is_class = true };
	all_link(&rc->o);
	return rc;
}

int cfsd_class_create(const char *name, uid_t owner, struct cfsd_conn *bind, struct cfsd_rclass **out,
		      char *msg, size_t msgsz)
{
	struct cfsd_rclass *rc;
	int r;

	class_wait_removed(name);
	if (cfsd_class_lookup(name)) {
		snprintf(msg, msgsz, "class %s exists", name);
		return -EEXIST;
	}
	r = obj_charge(owner, 1, msg, msgsz);
	if (r < 0)
		return r;
	rc = calloc(1, sizeof(*rc));
	if (!rc || !(rc->name = strdup(name)))
		goto enomem;
	rc->cls = classfs_class_create(cfsd.tree, name);
	if (!rc->cls) {
		r = -errno;
		snprintf(msg, msgsz, "cannot create class %s: %s", name, strerror(-r));
		free(rc->name);
		free(rc);
		cfsd_quota_uncharge(owner, CFSD_Q_OBJ, 1);
		return r;
	}
	classfs_class_get(rc->cls);	/* the registry's reference */
	if (class_hash_insert(rc) < 0) {
		classfs_class_destroy(rc->cls);
		classfs_class_put(rc->cls);
		goto enomem;
	}
	rc->o = (struct cfsd_obj){ .owner = owner, .is_class = true };
	all_link(&rc->o);
	if (bind)
		bound_link(&rc->o, bind);
	if (out)
		*out = rc;
	return 0;
enomem:
	if (rc)
		free(rc->name);
	free(rc);
	cfsd_quota_uncharge(owner, CFSD_Q_OBJ, 1);
	snprintf(msg, msgsz, "out of memory");
	return -ENOMEM;
}

/**
 * cfsd_class_drop() - forget @rc, whose class the tree let go (a removal's,
 * cfsd_class_unpublish()ed), or which this request made and which holds
 * nothing (@fresh: unregistered here, there is nothing to wait for); under R
 */
void cfsd_class_drop(struct cfsd_rclass *rc, bool fresh)
{
	cfsd_assert_held();
	if (fresh) {
		classfs_class_unregister(rc->cls);
		all_unlink(&rc->o);
		bound_unlink(&rc->o);
	}
	class_hash_remove(rc);
	cfsd_quota_uncharge(rc->o.owner, CFSD_Q_OBJ, 1);
	classfs_class_put(rc->cls);
	free(rc->name);
	free(rc);
}

/** cfsd_class_unpublish() - @rc off the object lists, marked removing (it stays in the name table until cfsd_class_drop()); under R */
void cfsd_class_unpublish(struct cfsd_rclass *rc)
{
	all_unlink(&rc->o);
	bound_unlink(&rc->o);
	rc->o.removing = true;
}

/**
 * cfsd_removals_done() - a removal is over: entries whose devices went
 * with it are found dead now (cfsd_forget_dead()), and what waits for a class
 * name to be free looks again (class_wait_removed()); under R
 */
void cfsd_removals_done(void)
{
	cfsd_assert_held();
	removals++;
	pthread_cond_broadcast(&removed_cond);
}

int cfsd_registry_init(void)
{
	cfs_list_init(&cfsd.all);
	pthread_mutex_init(&cfsd.lock, NULL);
	pthread_mutex_init(&cfsd.vlock, NULL);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * side.c - the side data of loaded devices and what the loader made: the
 * blob every loaded device carries (struct rec_dev), its `uevent` hook
 * and DEVNAME, one device type per DEVTYPE, the classes and buses made
 * per tree, listing a tree's devices, and unloading.
 */
#include "record-internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* what the loader made per tree: classes, buses (unload frees them)   */
/* ------------------------------------------------------------------ */

struct rec_owned {
	struct classfs_tree *tree;
	struct rec_class *cls;
	struct rec_bus *bus;
	struct rec_owned *next;
};

struct rec_type {
	struct classfs_device_type type;
	struct rec_type *next;
	char name[];
};

static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec_owned *owned;
static struct rec_type *types;

/** cfs_rec_release() - the release of every loaded device */
void cfs_rec_release(struct classfs_device *dev)
{
	struct rec_dev *rd = cfs_rec_of(dev);

	if (rd->nvals) {
		cfs_rec_vals_free(rd);
		cfs_rec_shape_put(dev->type);
	}
	classfs_free(rd);
}

/**
 * cfs_rec_next() - the blob entry at *@off; false at the end
 */
bool cfs_rec_next(const struct rec_dev *rd, size_t *off, struct rec_entry *e)
{
	const char *s;

	if (*off >= rd->bloblen)
		return false;
	s = rd->blob + *off;
	e->tag = *s++;
	if (*s == CFS_REC_CODED) {
		e->a = cfs_rec_name_of((unsigned char)s[1]);
		s += 2;
	} else {
		e->a = s;
		s += strlen(s) + 1;
	}
	e->b = NULL;
	if (e->tag && strchr("EULND", e->tag)) {
		e->b = s;
		s += strlen(s) + 1;
	}
	*off = (size_t)(s - rd->blob);
	return true;
}

/** cfs_rec_prop() - a recorded E: property, or NULL */
const char *cfs_rec_prop(const struct rec_dev *rd, const char *key)
{
	struct rec_entry e;
	size_t off = 0;

	while (cfs_rec_next(rd, &off, &e))
		if ((e.tag == 'E' || e.tag == 'U') && !strcmp(e.a, key))
			return e.b;
	return NULL;
}

/** cfs_rec_subsystem() - a device's SUBSYSTEM (class or bus name), or NULL */
const char *cfs_rec_subsystem(const struct classfs_device *dev)
{
	if (dev->cls)
		return dev->cls->name;
	if (dev->bus)
		return dev->bus->name;
	return NULL;
}

/*
 * The `uevent` of a loaded device: the recorded keys Linux emits itself
 * (marked 'U' at load: no key matching here, it runs for every event).
 */
/** cfs_rec_uevent() - the `uevent` hook of every loaded device's type */
int cfs_rec_uevent(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	struct rec_dev *rd = cfs_rec_of(dev);
	struct rec_entry e;
	size_t off = 0;
	int r;

	if (!rd)
		return 0;
	while (cfs_rec_next(rd, &off, &e)) {
		const char *val = e.b;

		if (e.tag != 'U')
			continue;
		if (!strncmp(val, "/dev/", 5) && !strcmp(e.a, "DEVNAME"))
			val += 5;
		r = classfs_uevent_add_var(env, "%s=%s", e.a, val);
		if (r < 0)
			return r;
	}
	return 0;
}

/* are the uevent hooks of @dev the loader's own (cfs_rec_uevent, cfs_rec_devnode)? */
bool cfs_rec_own_hooks(const struct classfs_device *dev)
{
	if (!dev->type || dev->type->uevent != cfs_rec_uevent ||
	    (dev->type->devnode && dev->type->devnode != cfs_rec_devnode))
		return false;
	return !dev->cls || (!dev->cls->dev_uevent &&
			     (!dev->cls->devnode || dev->cls->devnode == cfs_rec_devnode));
}

/* DEVNAME of a loaded class device: the recorded node name */
const char *cfs_rec_devnode(struct classfs_device *dev, char *buf, size_t size)
{
	struct rec_dev *rd = cfs_rec_of(dev);
	const char *name;
	struct rec_entry e;
	size_t off = 0;

	if (!rd)
		return NULL;
	while (cfs_rec_next(rd, &off, &e))
		if (e.tag == 'N')
			return e.a;
	name = cfs_rec_prop(rd, "DEVNAME");
	if (name && !strncmp(name, "/dev/", 5))
		return name + 5;
	return name;
}

void cfs_rec_class_release(struct classfs_class *cls)
{
	free((char *)cls - offsetof(struct rec_class, cls));
}

/* one device type per DEVTYPE, shared by all trees, kept for the process */
const struct classfs_device_type *cfs_rec_intern_type(const char *name, size_t len)
{
	static const struct classfs_device_type untyped = {
		.uevent = cfs_rec_uevent,
		.devnode = cfs_rec_devnode,
	};
	struct rec_type *t;

	if (!name)
		return &untyped;
	pthread_mutex_lock(&rec_lock);
	for (t = types; t; t = t->next)
		if (strlen(t->name) == len && !memcmp(t->name, name, len))
			break;
	if (!t && (t = calloc(1, sizeof(*t) + len + 1))) {
		memcpy(t->name, name, len);
		t->type.name = t->name;
		t->type.uevent = cfs_rec_uevent;
		t->type.devnode = cfs_rec_devnode;
		t->next = types;
		types = t;
	}
	pthread_mutex_unlock(&rec_lock);
	return t ? &t->type : NULL;
}

int cfs_rec_remember(struct classfs_tree *tree, struct rec_class *cls, struct rec_bus *bus)
{
	struct rec_owned *o = malloc(sizeof(*o));

	if (!o)
		return -ENOMEM;
	pthread_mutex_lock(&rec_lock);
	*o = (struct rec_owned){ tree, cls, bus, owned };
	owned = o;
	pthread_mutex_unlock(&rec_lock);
	return 0;
}

void cfs_rec_forget(struct rec_class *cls, struct rec_bus *bus)
{
	pthread_mutex_lock(&rec_lock);
	for (struct rec_owned **o = &owned; *o; o = &(*o)->next)
		if ((cls && (*o)->cls == cls) || (bus && (*o)->bus == bus)) {
			struct rec_owned *dead = *o;

			*o = dead->next;
			free(dead);
			break;
		}
	pthread_mutex_unlock(&rec_lock);
}


/* ------------------------------------------------------------------ */
/* the devices of a tree, and unloading                                */
/* ------------------------------------------------------------------ */

static int collect_one(struct classfs_device *dev, void *data)
{
	struct rec_devlist *l = data;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct classfs_device **v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->err = -ENOMEM;
			return 1;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = classfs_device_get(dev);
	return 0;
}

/** cfs_rec_collect() - every device of @tree, parents first, referenced */
int cfs_rec_collect(struct classfs_tree *tree, struct rec_devlist *l)
{
	*l = (struct rec_devlist){ 0 };
	classfs_tree_for_each_device(tree, collect_one, l);
	if (l->err) {
		cfs_rec_devlist_free(l);
		return -ENOMEM;
	}
	return 0;
}

/** cfs_rec_devlist_free() - drop the references and the list */
void cfs_rec_devlist_free(struct rec_devlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		classfs_device_put(l->v[i]);
	free(l->v);
	*l = (struct rec_devlist){ 0 };
}

static int count_dev(struct classfs_device *dev, void *data)
{
	(*(size_t *)data)++;
	return 0;
}

/**
 * classfs_record_unload() - remove every loaded device of @tree, deepest
 * first, then the classes and buses the loader made that are now empty.
 * Return: the number of devices removed, or -ENOMEM.
 */
int classfs_record_unload(struct classfs_tree *tree)
{
	struct rec_devlist l;
	struct rec_owned *mine = NULL;
	int n = 0;

	if (!tree)
		return -EINVAL;
	if (cfs_rec_collect(tree, &l) < 0)
		return -ENOMEM;
	for (size_t i = l.n; i-- > 0;)
		if (cfs_rec_of(l.v[i]) && classfs_device_is_added(l.v[i]) &&
		    classfs_device_unregister(l.v[i]) == 0)
			n++;
	cfs_rec_devlist_free(&l);

	pthread_mutex_lock(&rec_lock);
	for (struct rec_owned **o = &owned; *o;) {
		if ((*o)->tree == tree) {
			struct rec_owned *x = *o;

			*o = x->next;
			x->next = mine;
			mine = x;
		} else {
			o = &(*o)->next;
		}
	}
	pthread_mutex_unlock(&rec_lock);
	while (mine) {
		struct rec_owned *x = mine;
		size_t count = 0;
		bool keep = false;

		mine = x->next;
		if (x->cls) {
			classfs_class_for_each_device(&x->cls->cls, count_dev, &count);
			if (count)
				keep = true;
			else
				classfs_class_unregister(&x->cls->cls);
		} else if (classfs_bus_unregister(&x->bus->bus) == 0) {
			free(x->bus);
		} else {
			keep = true;
		}
		if (keep) {
			pthread_mutex_lock(&rec_lock);
			x->next = owned;
			owned = x;
			pthread_mutex_unlock(&rec_lock);
		} else {
			free(x);
		}
	}
	return n;
}


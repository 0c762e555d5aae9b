// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * remove.c - removing a class or a device together with every device
 * that depends on it.
 *
 * The core removes with a device the devices below it and those whose
 * physical device it is (the `device` link would dangle), and with a
 * class every device in it; in turn their own dependents go.  Anyone may
 * publish into any class, below any device and onto any physical
 * device, so such a dependent may be another uid's: only root may
 * remove those.  The daemon finds the whole set first, refuses before
 * anything changes when another uid's device is in it, and else removes
 * it itself, deepest first, so each REMOVE comes before its parent's and
 * its physical device's and each registry entry goes with its device.
 * The set is found, checked and taken out of the registry under cfsd.lock
 * (struct cfsd_removal); the caller removes it from the tree once it has
 * released the lock (cfsd_removal_finish()): the tree waits there for the
 * show()/store() calls running on those devices.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

/* a set of devices: open addressing on the pointer, at most half full */
struct devset {
	struct classfs_device **slot;
	size_t cap, n;
};

static size_t slot_of(const struct devset *s, const struct classfs_device *d)
{
	size_t i = (size_t)(((uintptr_t)d >> 4) * 0x9e3779b97f4a7c15ull) & (s->cap - 1);

	while (s->slot[i] && s->slot[i] != d)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static bool devset_has(const struct devset *s, const struct classfs_device *d)
{
	return d && s->cap && s->slot[slot_of(s, d)] == d;
}

static int devset_add(struct devset *s, struct classfs_device *d)
{
	if (2 * (s->n + 1) > s->cap) {
		struct devset g = { .cap = s->cap ? 2 * s->cap : 64 };

		g.slot = calloc(g.cap, sizeof(*g.slot));
		if (!g.slot)
			return -ENOMEM;
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				g.slot[slot_of(&g, s->slot[i])] = s->slot[i];
		g.n = s->n;
		free(s->slot);
		*s = g;
	}
	s->slot[slot_of(s, d)] = d;
	s->n++;
	return 0;
}

struct dependents {
	struct classfs_class *cls;	/* removing a class: its devices ... */
	struct classfs_device *top;	/* ... or this device ... */
	bool all;			/* ... or every device (a reset) */
	struct devset set;
	struct classfs_device **v;	/* the set in walk order, each referenced */
	size_t n, cap;
};

/* for each device after its parent and its physical device: is it in the set? */
static int collect(struct classfs_device *dev, void *data)
{
	struct dependents *x = data;

	/* another request's removal took it: it goes with that one */
	if (cfsd_dev_removing(dev))
		return 0;
	if (!x->all && !(x->top ? dev == x->top : dev->cls == x->cls) &&
	    !devset_has(&x->set, dev->parent) &&
	    !devset_has(&x->set, dev->phys))
		return 0;
	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 64;
		struct classfs_device **v = realloc(x->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		x->v = v;
		x->cap = cap;
	}
	if (devset_add(&x->set, dev) < 0)
		return -ENOMEM;
	x->v[x->n++] = classfs_device_get(dev);
	return 0;
}

static void dependents_free(struct dependents *x)
{
	for (size_t i = 0; i < x->n; i++)
		classfs_device_put(x->v[i]);
	free(x->v);
	free(x->set.slot);
}

/* "CLASS/NAME", or "NAME" for a physical device */
static void dev_label(const struct classfs_device *dev, char *buf, size_t size)
{
	const char *n = classfs_device_name(dev);

	snprintf(buf, size, "%s%s%.255s", dev->cls ? dev->cls->name : "", dev->cls ? "/" : "",
		 n ? n : "?");
}

/* the first device of the set that another uid than @uid owns: -EBUSY, why in @msg */
static int others_in(const struct dependents *x, uid_t uid, const char *what, char *msg,
		     size_t msgsz)
{
	for (size_t i = 0; i < x->n; i++) {
		struct classfs_device *d = x->v[i];
		uid_t owner = cfsd_dev_owner(d);
		char name[2 * 256 + 2], via[2 * 256 + 2];
		const char *how = "in it";

		if (owner == uid)
			continue;
		dev_label(d, name, sizeof(name));
		if (d->parent && devset_has(&x->set, d->parent)) {
			dev_label(d->parent, via, sizeof(via));
			how = "below ";
		} else if (d->phys && devset_has(&x->set, d->phys)) {
			dev_label(d->phys, via, sizeof(via));
			how = "on its physical device ";
		} else {
			via[0] = '\0';
		}
		snprintf(msg, msgsz,
			 "uid %u may not remove %s: device %s of uid %u depends on it (%s%s); "
			 "only its owner or root may remove that",
			 (unsigned int)uid, what, name, (unsigned int)owner, how, via);
		return -EBUSY;
	}
	return 0;
}

/* under cfsd.lock: the set, deepest first, into @rm (nothing when it has no room) */
static int take_set(const struct dependents *x, struct cfsd_removal *rm)
{
	int r = cfsd_removal_reserve(rm, x->n + 1);

	if (r < 0)
		return r;
	/* reversed, each comes before its parent and its physical device */
	for (size_t i = x->n; i-- > 0;)
		if (classfs_device_is_added(x->v[i]))
			cfsd_removal_add_dev(rm, x->v[i]);
	return 0;
}

/**
 * cfsd_remove_with_dependents() - remove a class or a device and every
 * device that depends on it, deepest first
 * @uid: who asks: root may remove any; for another uid a dependent of
 *       someone else refuses the whole removal.
 * @rc: the class to remove, or NULL.
 * @top: the device to remove when @rc is NULL (a registry entry's device
 *       or one the record loader made).
 * @what: "class NAME" or "device CLASS/NAME", for the message.
 * @rm: receives what is to go (cfsd_removal_init()ed).
 * @msg: receives why it was refused.
 * @msgsz: its size.
 *
 * Called with cfsd.lock held.  The caller has checked that @uid may change
 * @rc or @top itself.  It calls cfsd_removal_finish(@rm) once it released
 * the lock: the devices and the class leave the tree there.
 * Return: 0 (out of the registry), -EBUSY (another uid's device depends
 * on it: nothing removed), -ENOMEM (nothing removed).
 */
int cfsd_remove_with_dependents(uid_t uid, struct cfsd_rclass *rc, struct classfs_device *top,
				const char *what, struct cfsd_removal *rm, char *msg, size_t msgsz)
{
	struct dependents x = { .cls = rc ? rc->cls : NULL, .top = rc ? NULL : top };
	int r;

	cfsd_assert_held();
	r = classfs_tree_for_each_device(cfsd.tree, collect, &x);
	if (r < 0) {
		snprintf(msg, msgsz, "cannot remove %s: %s", what, strerror(-r));
		goto out;
	}
	if (uid != 0) {
		r = others_in(&x, uid, what, msg, msgsz);
		if (r < 0)
			goto out;
	}
	r = take_set(&x, rm);
	if (r < 0)
		snprintf(msg, msgsz, "cannot remove %s: %s", what, strerror(-r));
	else if (rc)
		cfsd_removal_add_class(rm, rc);		/* room reserved with the set */
out:
	dependents_free(&x);
	return r;
}

/**
 * cfsd_remove_all_devices() - take every device of the tree out of the
 * registry into @rm, deepest first (each after those below it and on it),
 * the record loader's devices too
 * @rm: receives them (cfsd_removal_init()ed); cfsd_removal_finish() it
 *      without the lock.
 * @msg: receives why it failed.
 * @msgsz: its size.
 *
 * Called with cfsd.lock held, for a reset (the caller checked who asks).
 * Return: 0, -ENOMEM (nothing removed).
 */
int cfsd_remove_all_devices(struct cfsd_removal *rm, char *msg, size_t msgsz)
{
	struct dependents x = { .all = true };
	int r;

	cfsd_assert_held();
	r = classfs_tree_for_each_device(cfsd.tree, collect, &x);
	if (r == 0)
		r = take_set(&x, rm);
	if (r < 0)
		snprintf(msg, msgsz, "cannot reset the tree: %s", strerror(-r));
	dependents_free(&x);
	return r;
}

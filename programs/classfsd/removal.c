// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * removal.c - removing published objects in Linux's device_del() order:
 * under cfsd.lock (R) they leave the registry (struct cfsd_removal), so
 * no lookup finds them and no request starts on them; with R released
 * the tree removes them, waiting there for the show()/store() calls
 * running on them, each of which may wait for its publisher up to the
 * call timeout; then R is taken again to drop their classes' entries.
 * A removal therefore holds up no other request, whoever's.
 *
 * What a request removes is found by remove.c; a connection's bound
 * objects and, at a reset or at exit, every object go through
 * remove_list() here.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

/** cfsd_removal_init() - @rm empty, with its own room for a few objects */
void cfsd_removal_init(struct cfsd_removal *rm)
{
	*rm = (struct cfsd_removal){ .cap = sizeof(rm->inl) / sizeof(rm->inl[0]) };
	rm->v = rm->inl;
}

/**
 * cfsd_removal_reserve() - room in @rm for @n more objects, so that
 * adding them cannot fail half way
 * Return: 0, -ENOMEM (@rm unchanged).
 */
int cfsd_removal_reserve(struct cfsd_removal *rm, size_t n)
{
	struct cfsd_gone *v;
	size_t cap = rm->cap;

	if (rm->n + n <= cap)
		return 0;
	while (cap < rm->n + n)
		cap *= 2;
	v = malloc(cap * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, rm->v, rm->n * sizeof(*v));
	if (rm->v != rm->inl)
		free(rm->v);
	rm->v = v;
	rm->cap = cap;
	return 0;
}

/**
 * cfsd_removal_add_dev() - @dev goes with @rm (reserved room): a registry
 * entry leaves the registry now, the registry's reference moving to @rm;
 * the record loader's device is referenced.  An entry another removal took
 * already is left to it (the tree's removal of what it depends on waits
 * for that one).  Under R.
 */
void cfsd_removal_add_dev(struct cfsd_removal *rm, struct classfs_device *dev)
{
	struct cfsd_rdev *rd = cfsd_dev_entry(dev);

	cfsd_assert_held();
	if (rd) {
		if (rd->o.removing)
			return;
		cfsd_dev_unpublish(rd);
	} else {
		classfs_device_get(dev);
	}
	rm->v[rm->n++] = (struct cfsd_gone){ .dev = dev };
}

/**
 * cfsd_removal_add_class() - @rc goes with @rm (reserved room), after the
 * devices added before it: off the object lists now, marked removing (it
 * stays in the name table, so no lookup finds it and it is not taken for
 * the record loader's until the tree let it go).  Under R.
 */
void cfsd_removal_add_class(struct cfsd_removal *rm, struct cfsd_rclass *rc)
{
	cfsd_assert_held();
	cfsd_class_unpublish(rc);
	rm->v[rm->n++] = (struct cfsd_gone){ .rc = rc };
}

/**
 * cfsd_removal_finish() - remove from the tree what @rm took out of the
 * registry, in its order, each device with its REMOVE event; the tree
 * waits there for the show()/store() calls running on them.  Then their
 * entries and references go and their owners' quotas are returned.
 * Called without R (it takes R at the end to drop the classes' entries).
 */
void cfsd_removal_finish(struct cfsd_removal *rm)
{
	cfsd_assert_not_held();
	if (!rm->n)
		goto out;	/* refused: nothing left the registry */
	for (size_t i = 0; i < rm->n; i++) {
		struct cfsd_gone *g = &rm->v[i];

		if (g->dev) {
			/* -EINVAL: the tree removed it already, with what it depends on */
			(void)classfs_device_unregister(g->dev);
		} else if (!g->rc->foreign) {
			/* removes its devices left, deepest first, with their REMOVE events */
			classfs_class_unregister(g->rc->cls);
		}
	}
	cfsd_lock();
	for (size_t i = 0; i < rm->n; i++)
		if (rm->v[i].rc)
			cfsd_class_drop(rm->v[i].rc, false);
	cfsd_removals_done();
	cfsd_unlock();
	for (size_t i = 0; i < rm->n; i++) {
		struct classfs_device *dev = rm->v[i].dev;
		struct cfsd_rdev *rd = cfsd_dev_entry(dev);

		if (rd) {
			cfsd_quota_uncharge(rd->o.owner, CFSD_Q_OBJ, 1);
			cfsd_quota_dev_gone(rd);
		}
		classfs_device_put(dev);	/* the registry's, or the removal's own */
	}
out:
	if (rm->v != rm->inl)
		free(rm->v);
	cfsd_removal_init(rm);
}

/*
 * Under R: as many of the objects of @list (a connection's bound objects
 * when @bound, else cfsd.all), newest first, as @rm has room for (at
 * least its own inline room); true when that was all of them.  Every
 * object on those lists is published: a removal takes its own off them.
 */
static bool take_newest(struct cfsd_removal *rm, struct cfs_list *list, bool bound)
{
	while (!cfs_list_empty(list)) {
		struct cfsd_obj *o = bound ? cfs_list_entry(list->prev, struct cfsd_obj, bound_link)
					   : cfs_list_entry(list->prev, struct cfsd_obj, all_link);

		if (cfsd_removal_reserve(rm, 1) < 0)
			return false;	/* the rest in the next round */
		if (o->is_class)
			cfsd_removal_add_class(rm, container_of(o, struct cfsd_rclass, o));
		else
			cfsd_removal_add_dev(rm, &container_of(o, struct cfsd_rdev, o)->dev);
	}
	return true;
}

/* remove every object of @list (the connection's bound ones, or cfsd.all), newest first */
static void remove_list(struct cfs_list *list, bool bound)
{
	struct cfsd_removal rm;
	bool all;

	cfsd_removal_init(&rm);
	do {
		cfsd_lock();
		all = take_newest(&rm, list, bound);
		cfsd_unlock();
		cfsd_removal_finish(&rm);
	} while (!all);
}

/* the connection went: remove what it bound, newest first (children before parents) */
void cfsd_unbind_all(struct cfsd_conn *c)
{
	remove_list(&c->bound, true);
	/* the unbound devices the core removed with them: their counts go now (quota.c) */
	cfsd_lock();
	cfsd_forget_dead();
	cfsd_unlock();
}

/*
 * Remove every registered object, newest first, so every device sends
 * its REMOVE, then the buses made for devices (those still in use stay
 * listed).  Called without R.
 */
void cfsd_registry_clear(void)
{
	size_t kept = 0;

	remove_list(&cfsd.all, false);
	cfsd_lock();
	for (size_t i = 0; i < cfsd.nbuses; i++) {
		if (classfs_bus_unregister(cfsd.buses[i]) == 0) {
			free((char *)cfsd.buses[i]->name);
			free(cfsd.buses[i]);
		} else {
			cfsd.buses[kept++] = cfsd.buses[i];
		}
	}
	cfsd.nbuses = kept;
	cfsd_unlock();
}

/* remove everything (cfsd_registry_clear()) and free the registry's tables */
void cfsd_registry_shutdown(void)
{
	cfsd_registry_clear();
	free(cfsd.buses);
	free(cfsd.devs);
	free(cfsd.classes);
	cfsd.buses = NULL;
	cfsd.devs = NULL;
	cfsd.classes = NULL;
	cfsd.nbuses = 0;
}

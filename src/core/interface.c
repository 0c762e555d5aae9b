// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * interface.c - class interfaces: add() for every device of the class,
 * present or future, remove() when a device leaves or the interface goes.
 *
 * No tree lock is held while add()/remove() run, so they may create and
 * remove devices of the same class (Linux 2.6.15 deadlocked there).  Each
 * call is counted in intf->p.users; unregistering waits for calls made by
 * other threads, never for those of its own thread.
 *
 * The calls of one class are made under the class's interface lock (I,
 * Linux's class mutex), one thread at a time, so that for each device
 * remove() comes after add() returned and an interface going away meets
 * each device once, before the device's children go.  I is recursive (a
 * callback may add and remove devices of the class) and is taken and
 * released under L.
 */
#include "internal.h"

#define CFS_MAX_INTERFACES 64

static __thread struct classfs_interface *running[16];
static __thread int nrunning;

static bool matches(const struct classfs_interface *intf, const struct classfs_device *dev)
{
	return !intf->type || intf->type == dev->type;
}

static void call_add(struct classfs_interface *intf, struct classfs_device *dev)
{
	if (!intf->add)
		return;
	if (nrunning < 16)
		running[nrunning] = intf;
	nrunning++;
	intf->add(dev, intf);
	nrunning--;
}

static void call_remove(struct classfs_interface *intf, struct classfs_device *dev)
{
	if (!intf->remove)
		return;
	if (nrunning < 16)
		running[nrunning] = intf;
	nrunning++;
	intf->remove(dev, intf);
	nrunning--;
}

static int own_calls(const struct classfs_interface *intf)
{
	int n = 0;

	for (int i = 0; i < nrunning && i < 16; i++)
		n += running[i] == intf;
	return n;
}

/* its address tells the threads apart */
static __thread char self_tag;

/* under L: take @cls's interface lock (L released while waiting) */
static void intf_lock_locked(struct classfs_tree *t, struct classfs_class *cls)
{
	while (cls->p.intf_depth && cls->p.intf_owner != &self_tag)
		pthread_cond_wait(&t->drain, &t->lock);
	cls->p.intf_owner = &self_tag;
	cls->p.intf_depth++;
}

static void intf_unlock_locked(struct classfs_tree *t, struct classfs_class *cls)
{
	if (--cls->p.intf_depth == 0) {
		cls->p.intf_owner = NULL;
		pthread_cond_broadcast(&t->drain);
	}
}

/* after the calls: drop the users and the interface lock */
static void users_put(struct classfs_tree *t, struct classfs_class *cls,
		      struct classfs_interface **v, int n)
{
	cfs_lock(t);
	for (int i = 0; i < n; i++)
		v[i]->p.users--;
	intf_unlock_locked(t, cls);
	pthread_cond_broadcast(&t->drain);
	cfs_unlock(t);
}

/* under L: the interfaces @dev should meet, each counted as a user */
static int snapshot_locked(struct classfs_device *dev, struct classfs_interface **v)
{
	int n = 0;

	for (struct classfs_interface *i = dev->cls->p.interfaces; i && n < CFS_MAX_INTERFACES;
	     i = i->p.next)
		if (matches(i, dev)) {
			i->p.users++;
			v[n++] = i;
		}
	return n;
}

void cfs_interfaces_add_device(struct classfs_device *dev)
{
	struct classfs_interface *v[CFS_MAX_INTERFACES];
	struct classfs_tree *t = cfs_device_tree_of(dev);
	int n;

	cfs_lock(t);
	intf_lock_locked(t, dev->cls);
	if (!cfs_dev_state(dev, CFS_DS_ADDED) || cfs_dev_state(dev, CFS_DS_REMOVING)) {
		intf_unlock_locked(t, dev->cls);
		cfs_unlock(t);
		return;
	}
	__atomic_or_fetch(&dev->p.state, CFS_DS_LISTED, __ATOMIC_RELEASE);
	n = snapshot_locked(dev, v);
	cfs_unlock(t);
	for (int i = 0; i < n; i++)
		call_add(v[i], dev);
	users_put(t, dev->cls, v, n);
}

void cfs_interfaces_remove_device(struct classfs_device *dev)
{
	struct classfs_interface *v[CFS_MAX_INTERFACES];
	struct classfs_tree *t = cfs_device_tree_of(dev);
	int n;

	cfs_lock(t);
	intf_lock_locked(t, dev->cls);
	if (!cfs_dev_state(dev, CFS_DS_LISTED)) {
		intf_unlock_locked(t, dev->cls);
		cfs_unlock(t);
		return;
	}
	__atomic_and_fetch(&dev->p.state, ~(unsigned int)CFS_DS_LISTED, __ATOMIC_RELEASE);
	n = snapshot_locked(dev, v);
	cfs_unlock(t);
	for (int i = 0; i < n; i++)
		call_remove(v[i], dev);
	users_put(t, dev->cls, v, n);
}

/* under L: listed devices of @intf's class it should see, referenced */
static struct classfs_device **devices_locked(struct classfs_interface *intf, size_t *np)
{
	struct classfs_class *cls = intf->cls;
	struct classfs_device **v = cfs_malloc((cls->p.names.count + 1) * sizeof(*v));
	size_t n = 0;

	*np = 0;
	if (!v)
		return NULL;
	for (struct classfs_device *d = cfs_htab_first_from(&cls->p.names, &cfs_name_htab_ops, 0); d;
	     d = cfs_htab_next(&cls->p.names, &cfs_name_htab_ops, d))
		if (cfs_dev_state(d, CFS_DS_LISTED) && matches(intf, d))
			v[n++] = classfs_device_get(d);
	*np = n;
	return v;
}

/**
 * classfs_interface_register() - add @intf to its class; add() runs for
 * every device already there.
 * Return: 0, -ENODEV (no class), -EINVAL (class not registered), -EEXIST
 * (registered already), -ENOSPC (too many interfaces), -ENOMEM.
 */
int classfs_interface_register(struct classfs_interface *intf)
{
	struct classfs_device **v;
	struct classfs_tree *t;
	size_t n;
	int count = 0, r;

	if (!intf || !intf->cls)
		return -ENODEV;
	if (!intf->cls->p.registered)
		return -EINVAL;
	t = intf->cls->p.tree;
	cfs_lock(t);
	intf_lock_locked(t, intf->cls);
	r = -EEXIST;
	if (intf->p.registered)
		goto out_unlock;
	for (struct classfs_interface *i = intf->cls->p.interfaces; i; i = i->p.next)
		count++;
	r = -ENOSPC;
	if (count >= CFS_MAX_INTERFACES)
		goto out_unlock;
	r = -ENOMEM;
	v = devices_locked(intf, &n);
	if (!v)
		goto out_unlock;
	/* devices listed from now on meet it themselves; those before, here */
	struct classfs_interface **pp = &intf->cls->p.interfaces;

	while (*pp)
		pp = &(*pp)->p.next;
	intf->p.next = NULL;
	*pp = intf;
	intf->p.registered = true;
	intf->p.users = 1;
	cfs_unlock(t);
	for (size_t i = 0; i < n; i++) {
		if (cfs_dev_state(v[i], CFS_DS_LISTED))
			call_add(intf, v[i]);
		classfs_device_put(v[i]);
	}
	cfs_free(v);
	users_put(t, intf->cls, &intf, 1);
	return 0;

out_unlock:
	intf_unlock_locked(t, intf->cls);
	cfs_unlock(t);
	return r;
}

/**
 * classfs_interface_unregister() - remove @intf; remove() runs for every
 * device of the class it was offered.
 */
void classfs_interface_unregister(struct classfs_interface *intf)
{
	struct classfs_device **v;
	struct classfs_tree *t;
	size_t n;

	if (!intf || !intf->cls || !intf->p.registered)
		return;
	t = intf->cls->p.tree;
	cfs_lock(t);
	intf_lock_locked(t, intf->cls);
	if (!intf->p.registered) {
		intf_unlock_locked(t, intf->cls);
		cfs_unlock(t);
		return;
	}
	for (struct classfs_interface **pp = &intf->cls->p.interfaces; *pp; pp = &(*pp)->p.next)
		if (*pp == intf) {
			*pp = intf->p.next;
			break;
		}
	intf->p.registered = false;
	/* calls from other threads finish first, so remove() comes after add() */
	while (intf->p.users > own_calls(intf))
		pthread_cond_wait(&t->drain, &t->lock);
	v = devices_locked(intf, &n);
	cfs_unlock(t);
	for (size_t i = 0; i < n; i++) {
		/* not those a callback of this thread removed meanwhile */
		if (cfs_dev_state(v[i], CFS_DS_LISTED))
			call_remove(intf, v[i]);
		classfs_device_put(v[i]);
	}
	cfs_free(v);
	cfs_lock(t);
	intf_unlock_locked(t, intf->cls);
	cfs_unlock(t);
}

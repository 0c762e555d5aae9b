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
 * each device once, before the device's children go.  The thread holding
 * I may take it again (a callback may add and remove devices of the
 * class); its owner and depth are kept under L (see internal.h).
 */
#include "internal.h"

#define CFS_MAX_INTERFACES 64

static bool matches(const struct classfs_interface *intf, const struct classfs_device *dev)
{
	return !intf->type || intf->type == dev->type;
}

/* one add() or remove(), recorded on this thread while it runs (own_calls()) */
static void call_one(struct classfs_interface *intf, struct classfs_device *dev, bool add)
{
	struct cfs_thread *me = cfs_self();
	struct cfs_intf_call call = { intf, me->intf_calls };

	if (add ? !intf->add : !intf->remove)
		return;
	me->intf_calls = &call;
	if (add)
		intf->add(dev, intf);
	else
		intf->remove(dev, intf);
	me->intf_calls = call.prev;
}

/* the calls of @intf this thread is inside of */
static int own_calls(const struct classfs_interface *intf)
{
	int n = 0;

	for (const struct cfs_intf_call *c = cfs_self()->intf_calls; c; c = c->prev)
		n += c->intf == intf;
	return n;
}

/*
 * The class's interface lock I: a lock its owner thread may take again,
 * its owner and depth kept under L.  Under L: take it (L released while
 * another thread holds it).
 */
static void intf_lock_locked(struct classfs_tree *t, struct classfs_class *cls)
{
	const void *me = cfs_self();

	cfs_assert_held(t);
	while (cls->p.intf_depth && cls->p.intf_owner != me)
		cfs_wait_locked(t, &t->intf_free);
	cls->p.intf_owner = me;
	cls->p.intf_depth++;
}

static void intf_unlock_locked(struct classfs_tree *t, struct classfs_class *cls)
{
	cfs_assert_held(t);
	if (--cls->p.intf_depth == 0) {
		cls->p.intf_owner = NULL;
		pthread_cond_broadcast(&t->intf_free);
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
	pthread_cond_broadcast(&t->intf_idle);
	cfs_unlock(t);
}

/* under L: the interfaces @dev should meet, each counted as a user */
static int snapshot_locked(struct classfs_device *dev, struct classfs_interface **v)
{
	int n = 0;

	cfs_assert_held(dev->cls->p.tree);
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
		call_one(v[i], dev, true);
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
		call_one(v[i], dev, false);
	users_put(t, dev->cls, v, n);
}

/* under L: listed devices of @intf's class it should see, referenced */
static struct classfs_device **devices_locked(struct classfs_interface *intf, size_t *np)
{
	struct classfs_class *cls = intf->cls;
	struct classfs_device **v = cfs_malloc((cls->p.names.count + 1) * sizeof(*v));
	size_t n = 0;

	cfs_assert_held(intf->cls->p.tree);
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
			call_one(intf, v[i], true);
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
		cfs_wait_locked(t, &t->intf_idle);
	v = devices_locked(intf, &n);
	cfs_unlock(t);
	for (size_t i = 0; i < n; i++) {
		/* not those a callback of this thread removed meanwhile */
		if (cfs_dev_state(v[i], CFS_DS_LISTED))
			call_one(intf, v[i], false);
		classfs_device_put(v[i]);
	}
	cfs_free(v);
	cfs_lock(t);
	intf_unlock_locked(t, intf->cls);
	cfs_unlock(t);
}

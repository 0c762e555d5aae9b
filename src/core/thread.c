// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * thread.c - what the calling thread is doing inside the library: the
 * attribute callbacks it runs (frames), the interface calls it makes, the
 * removals it performs and its deferred view syncs.  All of it lives in
 * one thread-local struct cfs_thread, whose address also identifies the
 * thread as the owner of a class's interface lock or a pending rename.
 * (The tree lock's owner, which cfs_assert_held() checks, is recorded as
 * pthread_self(): cheaper to read on every lock than this struct.)
 *
 * Callbacks nest (a show() reading another attribute, a remove() removing
 * a device whose release runs another callback); at most
 * CFS_MAX_NESTED_CALLS attribute callbacks nest on one thread: a read or
 * write past that fails with -EBUSY instead of growing the stack without
 * bound.  Interface calls and removals are chained through the callers'
 * stacks and have no limit of their own.
 */
#include "internal.h"

static __thread struct cfs_thread self;

struct cfs_thread *cfs_self(void)
{
	return &self;
}

#ifdef CFS_LOCK_CHECKS
void cfs_assert_held_fn(struct classfs_tree *t, const char *fn)
{
	if (__atomic_load_n(&t->lock_owner, __ATOMIC_RELAXED) == (uintptr_t)pthread_self())
		return;
	fprintf(stderr, "classfs: %s() called without the tree lock\n", fn);
	abort();
}
#endif

/* ---- the attribute callbacks running on this thread ---- */

struct cfs_frame *cfs_frame_push(struct classfs_node *n)
{
	struct cfs_frame *f;

	if (self.nframes == CFS_MAX_NESTED_CALLS)
		return NULL;
	f = &self.frames[self.nframes++];
	*f = (struct cfs_frame){ .node = n };
	return f;
}

/* the innermost callback running on this thread, or NULL */
struct cfs_frame *cfs_frame_top(void)
{
	return self.nframes ? &self.frames[self.nframes - 1] : NULL;
}

void cfs_frame_pop(struct classfs_tree *t, struct cfs_frame *f)
{
	struct classfs_device *put = f->put;
	struct classfs_node *deferred = f->deferred;

	if (!f->released)
		cfs_active_put(t, f->node);
	if (f->held)
		cfs_active_put(t, f->held);
	self.nframes--;
	cfs_free_list(deferred);
	classfs_device_put(put);
}

static bool node_below(const struct classfs_node *n, const struct classfs_node *top)
{
	for (; n; n = n->parent)
		if (n == top)
			return true;
	return false;
}

/* does this thread hold an active reference on @top or below it? */
bool cfs_active_held_below(const struct classfs_node *top)
{
	for (int i = 0; i < self.nframes; i++)
		if ((!self.frames[i].released && node_below(self.frames[i].node, top)) ||
		    (self.frames[i].held && node_below(self.frames[i].held, top)))
			return true;
	return false;
}

/*
 * Under L, for remove-self: give up @f's active reference so that the
 * removal of its own device does not wait for it, and take one on @hold
 * (the directory above the device) instead, so that the removal of what
 * is above still waits for the callback to return.
 */
void cfs_frame_release_locked(struct classfs_tree *t, struct cfs_frame *f,
			      struct classfs_node *hold)
{
	cfs_assert_held(t);
	if (hold && !f->held && cfs_active_get(hold))
		f->held = hold;
	f->released = true;
	if (__atomic_sub_fetch(&f->node->active, 1, __ATOMIC_RELEASE) == CFS_ACTIVE_BIAS)
		pthread_cond_broadcast(&t->drained);
}

/* the innermost frame of this thread working on @dev (or a file of it) */
struct cfs_frame *cfs_frame_find_device(const struct classfs_device *dev)
{
	for (int i = self.nframes - 1; i >= 0; i--)
		if (!self.frames[i].released && node_below(self.frames[i].node, &dev->p.node))
			return &self.frames[i];
	return NULL;
}

/* the frame whose reference classfs_device_unregister_self() set aside */
struct cfs_frame *cfs_frame_find_released(const struct classfs_device *dev)
{
	for (int i = self.nframes - 1; i >= 0; i--)
		if (self.frames[i].released && node_below(self.frames[i].node, &dev->p.node))
			return &self.frames[i];
	return NULL;
}

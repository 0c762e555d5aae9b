/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * watch.h - how a view (the FUSE view's mounts) follows a tree's
 * changes: a watch whose changed() runs under the tree's lock, and the
 * syncs at the end of each changing call that a batch may hold back.
 *
 * In-library interface (see fs.h beside it): not installed, not exported.
 */
#ifndef CLASSFS_INTERNAL_WATCH_H
#define CLASSFS_INTERNAL_WATCH_H

#include "classfs/classfs.h"

/**
 * struct classfs_watch_ops - how a view follows a tree
 * @changed: directory @dir_ino gained or lost entry @name.  Runs with the
 *           tree's lock held, inside the change (the one exception to
 *           "no library lock is held while a callback runs"): it must only
 *           record what it is told, call no classfs_* function (that
 *           deadlocks) and take no lock that is held elsewhere while the
 *           library is called.
 * @sync: end of an API call that changed the tree, no lock held: push
 *        what was recorded before returning.
 * @notify: classfs_device_notify() on attribute @ino, no lock held.
 * @value: the value of file @ino, entry @name of directory @dir_ino,
 *         changed: bytes the tree keeps (a stored value, which stat
 *         reports as not dynamic) were replaced, or the attribute was
 *         notified.  Under the tree's lock, as @changed; a @sync follows.
 * @moved: an entry moved (a rename): the text of any link may have
 *         changed (links are relative paths).  Under the tree's lock, as
 *         @changed; a @sync follows.
 */
struct classfs_watch_ops {
	void (*changed)(void *data, uint64_t dir_ino, const char *name);
	void (*sync)(void *data);
	void (*notify)(void *data, uint64_t ino);
	void (*value)(void *data, uint64_t dir_ino, const char *name, uint64_t ino);
	void (*moved)(void *data);
};

/**
 * classfs_tree_watch_add() - follow @tree's changes
 * Return: a watch id (> 0), -EINVAL (NULL), -ENOSPC (8 watches already).
 */
int classfs_tree_watch_add(struct classfs_tree *tree, const struct classfs_watch_ops *ops,
			   void *data);
/** classfs_tree_watch_remove() - stop; 0, -EINVAL (NULL @tree) or -ENOENT */
int classfs_tree_watch_remove(struct classfs_tree *tree, int id);
/**
 * classfs_sync_defer() - hold the syncs of this thread's calls until
 * classfs_sync_resume(): for many calls that make one change (a record's
 * thousands of devices), the views (mounts) still record each change as
 * it comes, but the calls return without waiting for them to push it.
 * Nests; per thread.
 */
void classfs_sync_defer(void);
/**
 * classfs_sync_resume() - end a classfs_sync_defer(); the outermost one
 * waits for @tree's views to push what the deferred calls changed (a
 * view's @sync), as the last of those calls would have.
 */
void classfs_sync_resume(struct classfs_tree *tree);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-watch.c - a view's sync runs at the end of each call that changed
 * the tree, and once for a run of calls between classfs_sync_defer() and
 * the outermost classfs_sync_resume() (nested, per thread), which is how
 * the record loader makes thousands of devices with one wait for the
 * mounts; the changes themselves reach the view as they come.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>

#include "../harness.h"
#include "classfs/classfs.h"
#include "classfs-internal/watch.h"

static int syncs, changes;

static void on_changed(void *data, uint64_t dir_ino, const char *name)
{
	changes++;
}

static void on_sync(void *data)
{
	syncs++;
}

static const struct classfs_watch_ops ops = { .changed = on_changed, .sync = on_sync };

/* a device added and removed by another thread: two calls, two syncs */
static void *add_remove(void *cls)
{
	struct classfs_device *d = classfs_device_create(cls, NULL, 0, NULL, NULL, "other");

	return (void *)(intptr_t)(d ? classfs_device_unregister(d) : -ENOMEM);
}

TEST(defer_holds_syncs_until_the_outermost_resume)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls;
	struct classfs_device *d[4];
	int id, before;

	CHECK(t != NULL);
	cls = classfs_class_create(t, "w");
	CHECK(cls != NULL);
	id = classfs_tree_watch_add(t, &ops, NULL);
	CHECK(id > 0);

	syncs = changes = 0;
	d[0] = classfs_device_create(cls, NULL, 0, NULL, NULL, "d0");
	CHECK(d[0] != NULL);
	CHECK_INT(syncs, 1);		/* each call syncs */
	CHECK(changes > 0);

	classfs_sync_defer();
	classfs_sync_defer();		/* nests */
	before = changes;
	d[1] = classfs_device_create(cls, NULL, 0, NULL, NULL, "d1");
	d[2] = classfs_device_create(cls, NULL, 0, NULL, NULL, "d2");
	CHECK(d[1] && d[2]);
	CHECK_INT(classfs_device_add_value(d[1], "v", 0644, "x", 1, 0), 0);
	CHECK_INT(syncs, 1);		/* held */
	CHECK(changes > before);	/* the view still hears of each change */
	classfs_sync_resume(t);
	CHECK_INT(syncs, 1);		/* the inner resume: still held */

	/* another thread's calls are not deferred by this one's */
	{
		pthread_t th;
		void *other;

		CHECK_INT(pthread_create(&th, NULL, add_remove, cls), 0);
		CHECK_INT(pthread_join(th, &other), 0);
		CHECK_INT((int)(intptr_t)other, 0);
		CHECK_INT(syncs, 3);
	}

	classfs_sync_resume(t);
	CHECK_INT(syncs, 4);		/* the outermost: one sync for the run */
	classfs_sync_resume(t);		/* unbalanced: nothing */
	CHECK_INT(syncs, 4);
	d[3] = classfs_device_create(cls, NULL, 0, NULL, NULL, "d3");
	CHECK(d[3] != NULL);
	CHECK_INT(syncs, 5);		/* calls sync again */

	classfs_sync_defer();
	classfs_sync_resume(NULL);	/* no tree: ends the deferral, syncs nothing */
	CHECK_INT(syncs, 5);
	CHECK_INT(classfs_device_unregister(d[3]), 0);
	CHECK_INT(syncs, 6);

	CHECK_INT(classfs_tree_watch_remove(t, id), 0);
	for (int i = 0; i < 3; i++)
		classfs_device_unregister(d[i]);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

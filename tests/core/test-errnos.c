// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-errnos.c - the errnos classfs.h lists for each function are
 * returned where it says (those a test can reach: not -ENOMEM, which
 * test-alloc-fail covers, nor the tree's 2^28 node ids).
 */
#include <limits.h>

#include "../harness.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/watch.h"
#include "../native-util.h"

/* a constant: usable where a function call is not */
_Static_assert(CLASSFS_ROOT_INO == 1, "CLASSFS_ROOT_INO is the constant 1");
static const uint64_t root_ino = CLASSFS_ROOT_INO;

TEST(root_ino)
{
	CHECK_INT(classfs_root_ino(), root_ino);
}

static struct classfs_tree *tree(void)
{
	return classfs_tree_new(CLASSFS_LAYOUT_CLASS);
}

TEST(tree_free)
{
	struct classfs_tree *t = tree();
	struct classfs_class *c = classfs_class_create(t, "c");

	CHECK_INT(classfs_tree_free(NULL), -EINVAL);
	CHECK_INT(classfs_tree_free(classfs_default_tree()), -EINVAL);
	CHECK_INT(classfs_tree_free(t), -EBUSY);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(register_twice_is_ebusy)
{
	struct classfs_tree *t = tree();
	struct classfs_class c = { .name = "c" };
	struct classfs_bus b = { .name = "b" };
	struct classfs_device phys = { 0 };

	CHECK_INT(classfs_class_register(t, &c), 0);
	CHECK_INT(classfs_class_register(t, &c), -EBUSY);
	CHECK_INT(classfs_bus_register(t, &b), 0);
	CHECK_INT(classfs_bus_register(t, &b), -EBUSY);

	classfs_device_initialize(&phys);
	phys.bus = &b;
	CHECK_INT(classfs_device_set_name(&phys, "p0"), 0);
	CHECK_INT(classfs_device_add(&phys), 0);
	/* classfs_device_add() of an added device */
	CHECK_INT(classfs_device_add(&phys), -EBUSY);
	CHECK_INT(classfs_device_set_name(&phys, "p1"), -EBUSY);
	CHECK_INT(classfs_bus_unregister(&b), -EBUSY);
	CHECK_INT(classfs_device_del(&phys), 0);
	CHECK_INT(classfs_bus_unregister(&b), 0);
	CHECK_INT(classfs_bus_unregister(&b), -EINVAL);
	classfs_device_put(&phys);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(register_unnamed_is_einval)
{
	struct classfs_device d = { 0 };

	classfs_device_initialize(&d);
	CHECK_INT(classfs_device_register(&d), -EINVAL);
	CHECK_INT(classfs_device_add_to(NULL, &d), -EINVAL);
	classfs_device_put(&d);
}

TEST(set_name_too_long)
{
	struct classfs_device d = { 0 };
	char name[NAME_MAX + 2];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	classfs_device_initialize(&d);
	CHECK_INT(classfs_device_set_name(&d, "%s", name), -EINVAL);
	CHECK_INT(classfs_device_set_name(&d, "a/b"), -EINVAL);
	classfs_device_put(&d);
}

static void noop(const struct classfs_uevent *ev, void *data)
{
	(void)ev;
	(void)data;
}

static void watch_changed(void *data, uint64_t dir, const char *name)
{
	(void)data;
	(void)dir;
	(void)name;
}

static const struct classfs_watch_ops wops = { .changed = watch_changed };

TEST(tables_full_are_enospc)
{
	struct classfs_tree *t = tree();
	int ids[65], wids[9], n;

	for (n = 0; n < 65; n++) {
		ids[n] = classfs_listener_add(t, noop, NULL);
		if (ids[n] < 0)
			break;
	}
	CHECK_INT(n, 64);
	CHECK_INT(ids[64], -ENOSPC);
	CHECK_INT(classfs_listener_add(NULL, noop, NULL), -EINVAL);
	for (int i = 0; i < 64; i++)
		CHECK_INT(classfs_listener_remove(t, ids[i]), 0);
	CHECK_INT(classfs_listener_remove(t, ids[0]), -ENOENT);
	CHECK_INT(classfs_listener_remove(NULL, 1), -EINVAL);

	for (n = 0; n < 9; n++) {
		wids[n] = classfs_tree_watch_add(t, &wops, NULL);
		if (wids[n] < 0)
			break;
	}
	CHECK_INT(n, 8);
	CHECK_INT(wids[8], -ENOSPC);
	CHECK_INT(classfs_tree_watch_add(NULL, &wops, NULL), -EINVAL);
	for (int i = 0; i < 8; i++)
		CHECK_INT(classfs_tree_watch_remove(t, wids[i]), 0);
	CHECK_INT(classfs_tree_watch_remove(t, wids[0]), -ENOENT);
	CHECK_INT(classfs_tree_watch_remove(NULL, 1), -EINVAL);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(interfaces_full_is_enospc)
{
	struct classfs_tree *t = tree();
	struct classfs_class *c = classfs_class_create(t, "c");
	static struct classfs_interface intf[65];
	int i, r = 0;

	REQUIRE(c);
	for (i = 0; i < 65; i++) {
		intf[i] = (struct classfs_interface){ .cls = c };
		r = classfs_interface_register(&intf[i]);
		if (r < 0)
			break;
	}
	CHECK_INT(i, 64);
	CHECK_INT(r, -ENOSPC);
	CHECK_INT(classfs_interface_register(&intf[0]), -EEXIST);
	for (i = 0; i < 64; i++)
		classfs_interface_unregister(&intf[i]);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- uevent hooks that remove or rename their own device ---- */

static int hook_mode;	/* 1: remove the device, 2: rename it */
static int hook_result;

static int hook(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	int mode = hook_mode;

	(void)env;
	hook_mode = 0;		/* the removal's own REMOVE runs the hook again */
	if (mode == 1)
		hook_result = classfs_device_del(dev);
	else if (mode == 2)
		hook_result = classfs_device_rename(dev, "again");
	return 0;
}

TEST(uevent_of_a_device_removed_meanwhile_is_enodev)
{
	struct classfs_tree *t = tree();
	struct classfs_class c = { .name = "c", .dev_uevent = hook };
	struct classfs_device *d;

	REQUIRE(classfs_class_register(t, &c) == 0);
	d = classfs_device_create(&c, NULL, 0, NULL, NULL, "d");
	REQUIRE(d);
	classfs_device_get(d);
	hook_mode = 1;
	CHECK_INT(classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, NULL), -ENODEV);
	CHECK_INT(hook_result, 0);
	classfs_device_put(d);	/* the registration reference */
	classfs_device_put(d);

	d = classfs_device_create(&c, NULL, 0, NULL, NULL, "e");
	REQUIRE(d);
	classfs_device_get(d);
	hook_mode = 1;
	CHECK_INT(classfs_device_synth_uevent(d, CLASSFS_ACTION_CHANGE, NULL, NULL), -ENODEV);
	classfs_device_put(d);
	classfs_device_put(d);

	d = classfs_device_create(&c, NULL, 0, NULL, NULL, "f");
	REQUIRE(d);
	classfs_device_get(d);
	hook_mode = 1;
	CHECK_INT(classfs_device_uevent_check(d, CLASSFS_ACTION_CHANGE, NULL), -ENODEV);
	CHECK_INT(classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, NULL), -EINVAL);
	classfs_device_put(d);
	classfs_device_put(d);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(rename_from_its_own_move_hook_is_edeadlk)
{
	struct classfs_tree *t = tree();
	struct classfs_class c = { .name = "c", .dev_uevent = hook };
	struct classfs_device *d;

	REQUIRE(classfs_class_register(t, &c) == 0);
	d = classfs_device_create(&c, NULL, 0, NULL, NULL, "d");
	REQUIRE(d);
	hook_mode = 2;
	CHECK_INT(classfs_device_rename(d, "d2"), 0);
	CHECK_INT(hook_result, -EDEADLK);
	CHECK_STR(classfs_device_name(d), "d2");
	classfs_device_unregister(d);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- files ---- */

static const struct classfs_device_attribute no_show = { .attr = { "noshow", 0644 } };

static ssize_t big_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			char *buf)
{
	(void)dev;
	(void)a;
	return snprintf(buf, CLASSFS_ATTR_MAX, "x\n");
}

static ssize_t any_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 const char *buf, size_t count)
{
	(void)dev;
	(void)a;
	(void)buf;
	return (ssize_t)count;
}

static const struct classfs_device_attribute rw = {
	.attr = { "rw", 0644 }, .show = big_show, .store = any_store
};

TEST(file_errnos)
{
	struct classfs_tree *t = tree();
	struct classfs_class *c = classfs_class_create(t, "c");
	struct classfs_device *d, loose = { 0 };
	static char big[CLASSFS_ATTR_MAX + 1];
	struct classfs_stat st;
	char buf[8];

	REQUIRE(c);
	d = classfs_device_create(c, NULL, 0, NULL, NULL, "d");
	REQUIRE(d);
	classfs_device_initialize(&loose);
	CHECK_INT(classfs_device_create_file(&loose, &rw), -EINVAL);
	classfs_device_put(&loose);
	CHECK_INT(classfs_device_create_file(d, &no_show), 0);
	CHECK_INT(classfs_device_create_file(d, &rw), 0);
	CHECK_INT(classfs_device_create_file(d, &rw), -EEXIST);

	CHECK_INT(classfs_path_read(t, "class/c/d/noshow", buf, sizeof(buf)), -EIO);
	CHECK_INT(classfs_path_write(t, "class/c/d/noshow", "1", 1), -EIO);
	CHECK_INT(classfs_path_write(t, "class/c/d/rw", big, sizeof(big)), -E2BIG);
	CHECK_INT(classfs_path_read(t, "class/c/d", buf, sizeof(buf)), -EISDIR);
	CHECK_INT(classfs_path_read(t, "class/c/d/none", buf, sizeof(buf)), -ENOENT);
	CHECK_INT(classfs_path_read(t, "class/c/d/rw/x", buf, sizeof(buf)), -ENOTDIR);
	CHECK_INT(classfs_read(t, root_ino, buf, sizeof(buf), -1), -EINVAL);
	CHECK_INT(classfs_device_notify(d, "rw/x"), -ENOTDIR);
	CHECK_INT(classfs_device_notify(d, "none"), -ENOENT);

	/* links: a loop, a target longer than the buffer */
	CHECK_INT(classfs_device_add_link(d, "loop", "loop"), 0);
	CHECK_INT(classfs_device_add_link(d, "far", "../../../devices/virtual"), 0);
	CHECK_INT(classfs_path_stat(t, "class/c/d/loop/x", &st), -ELOOP);
	CHECK_INT(classfs_path_readlink(t, "class/c/d/far", buf, 4), -ERANGE);
	CHECK_INT(classfs_path_stat(t, "class/c/d/far", &st), 0);
	CHECK_INT(classfs_read(t, st.ino, buf, sizeof(buf), 0), -EINVAL);
	CHECK_INT(classfs_path_readlink(t, "class/c/d/rw", buf, sizeof(buf)), -EINVAL);
	CHECK_INT(classfs_device_add_link(d, "far", "x"), -EEXIST);

	static char path[PATH_MAX + 1];

	memset(path, 'a', PATH_MAX);
	CHECK_INT(classfs_path_stat(t, path, &st), -ENAMETOOLONG);
	CHECK_INT(classfs_getattr(NULL, root_ino, &st), -EINVAL);
	CHECK_INT(classfs_lookup(t, root_ino, "none", &st), -ENOENT);

	classfs_device_unregister(d);
	CHECK_INT(classfs_class_for_each_device(NULL, NULL, NULL), -EINVAL);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* an interface's remove(): the device is being removed */
static int late_file_result;

static void late_file(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	late_file_result = classfs_device_create_file(dev, &rw);
}

TEST(create_file_while_removed_is_enodev)
{
	struct classfs_tree *t = tree();
	struct classfs_class *c = classfs_class_create(t, "c");
	struct classfs_interface intf = { .cls = c, .remove = late_file };
	struct classfs_device *d;

	REQUIRE(c);
	REQUIRE(classfs_interface_register(&intf) == 0);
	d = classfs_device_create(c, NULL, 0, NULL, NULL, "d");
	REQUIRE(d);
	CHECK_INT(classfs_device_unregister(d), 0);
	CHECK_INT(late_file_result, -ENODEV);
	classfs_interface_unregister(&intf);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(add_var_null_is_einval)
{
	struct classfs_uevent_env env = { 0 };

	CHECK_INT(classfs_uevent_add_var(&env, NULL), -EINVAL);
	for (int i = 0; i < CLASSFS_UEVENT_NUM_ENVP; i++)
		CHECK_INT(classfs_uevent_add_var(&env, "K%d=v", i), 0);
	CHECK_INT(classfs_uevent_add_var(&env, "ONE=more"), -ENOMEM);
}

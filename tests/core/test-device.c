// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-device.c - class devices: add/del/unregister, nesting, the `dev`,
 * `uevent`, `subsystem` and `device` entries, the reverse link, errors
 * that change nothing, release callbacks, removal of a parent with live
 * children, rename, class devices as physical parents, buses, and the
 * paths of both layouts (every link relative and resolving in the tree).
 */
#include "../harness.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "../native-util.h"

static struct classfs_tree *tree_with_links_checked(struct classfs_tree *t)
{
	int nlinks = 0;

	CHECK_INT(check_links(t, &nlinks), 0);
	return t;
}

/* ---- add, del, unregister ---- */

static int released;
static struct classfs_device *released_dev;

static void count_release(struct classfs_device *dev)
{
	released++;
	released_dev = dev;
}

TEST(add_del_unregister)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls = classfs_class_create(t, "cl");
	struct classfs_device d = { 0 };
	size_t base = classfs_tree_node_count(t);
	char path[64];

	released = 0;
	classfs_device_initialize(&d);
	CHECK(!classfs_device_is_added(&d));
	CHECK(classfs_device_tree(&d) == NULL);
	CHECK_INT(classfs_device_devpath(&d, path, sizeof(path)), -EINVAL);
	CHECK_INT(classfs_device_set_name(&d, "d%d", 0), 0);
	CHECK_STR(classfs_device_name(&d), "d0");
	CHECK_INT(classfs_device_set_name(&d, "dev%d", 0), 0);	/* renaming before add is fine */
	d.cls = cls;
	d.release = count_release;
	CHECK_INT(classfs_device_add(&d), 0);
	CHECK(classfs_device_is_added(&d));
	CHECK(classfs_device_tree(&d) == t);
	CHECK_INT(classfs_device_add(&d), -EBUSY);
	CHECK_INT(classfs_device_set_name(&d, "other"), -EBUSY);
	CHECK_INT(classfs_device_devpath(&d, path, sizeof(path)), (int)strlen("/class/cl/dev0"));
	CHECK_STR(path, "/class/cl/dev0");
	CHECK_INT(classfs_device_devpath(&d, path, 5), -ERANGE);

	CHECK_INT(ftype(t, "class/cl/dev0"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "class/cl/dev0/uevent"), CLASSFS_FT_REG);
	CHECK_INT(ftype(t, "class/cl/dev0/subsystem"), CLASSFS_FT_LNK);
	CHECK_STR(res(t, "class/cl/dev0/subsystem"), "class/cl");
	CHECK_INT(ftype(t, "class/cl/dev0/dev"), -ENOENT);	/* no major */
	CHECK_INT(ftype(t, "class/cl/dev0/device"), -ENOENT);	/* no physical device */
	CHECK_INT(nentries(t, "class/cl/dev0"), 2);		/* uevent, subsystem */
	CHECK_INT(listed(t, "class/cl", "dev0"), 1);
	CHECK(classfs_tree_node_count(t) > base);

	CHECK_INT(classfs_device_del(&d), 0);
	CHECK(!classfs_device_is_added(&d));
	CHECK_INT(ftype(t, "class/cl/dev0"), -ENOENT);
	CHECK_INT(listed(t, "class/cl", "dev0"), 0);
	CHECK_INT(classfs_tree_node_count(t), base);
	CHECK_INT(classfs_device_del(&d), -EINVAL);
	CHECK_INT(classfs_device_unregister(&d), -EINVAL);
	CHECK_INT(released, 0);		/* the initialize reference is still held */
	classfs_device_put(&d);
	CHECK_INT(released, 1);
	CHECK(released_dev == &d);

	/* classfs_device_create + classfs_device_unregister */
	struct classfs_device *c = classfs_device_create(cls, NULL, 0, NULL, (void *)0x1234, "c%d", 7);

	CHECK(c != NULL);
	CHECK(c->drvdata == (void *)0x1234);
	CHECK(c->cls == cls);
	CHECK_INT(ftype(t, "class/cl/c7"), CLASSFS_FT_DIR);
	CHECK_INT(classfs_device_unregister(c), 0);
	CHECK_INT(ftype(t, "class/cl/c7"), -ENOENT);
	CHECK_INT(classfs_tree_node_count(t), base);

	classfs_class_destroy(cls);
	classfs_class_destroy(NULL);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- the dev and uevent files ---- */

static int cls_uevent(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	return classfs_uevent_add_var(env, "CLS_VAR=%s", classfs_device_name(dev));
}

static int type_uevent(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	(void)dev;
	return classfs_uevent_add_var(env, "TYPE_VAR=2");
}

static const struct classfs_device_type partition_type = {
	.name = "partition",
	.uevent = type_uevent,
};

static const char *input_devnode(struct classfs_device *dev, char *buf, size_t size)
{
	snprintf(buf, size, "input/%s", classfs_device_name(dev));
	return buf;
}

TEST(dev_and_uevent_files)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class blk = { .name = "block", .dev_uevent = cls_uevent };
	struct classfs_class input = { .name = "input", .devnode = input_devnode };
	struct classfs_class tty = { .name = "tty" };
	struct classfs_device *sda, *sda1, *ev, *ttyS0, *nomaj, *nominor;
	struct classfs_stat st;

	CHECK_INT(classfs_class_register(t, &blk), 0);
	CHECK_INT(classfs_class_register(t, &input), 0);
	CHECK_INT(classfs_class_register(t, &tty), 0);
	sda = classfs_device_create(&blk, NULL, makedev(8, 0), NULL, NULL, "sda");
	sda1 = calloc(1, sizeof(*sda1));
	classfs_device_initialize(sda1);
	sda1->cls = &blk;
	sda1->parent = sda;
	sda1->devt = makedev(8, 1);
	sda1->type = &partition_type;
	sda1->release = (void (*)(struct classfs_device *))free;
	CHECK_INT(classfs_device_set_name(sda1, "sda1"), 0);
	CHECK_INT(classfs_device_add(sda1), 0);
	ev = classfs_device_create(&input, NULL, makedev(13, 64), NULL, NULL, "event0");
	ttyS0 = classfs_device_create(&tty, NULL, makedev(4, 64), NULL, NULL, "ttyS0");
	nomaj = classfs_device_create(&tty, NULL, makedev(0, 5), NULL, NULL, "nomaj");
	nominor = classfs_device_create(&tty, NULL, makedev(5, 0), NULL, NULL, "console");

	CHECK_STR(rd(t, "class/block/sda/dev"), "8:0\n");
	CHECK_STR(rd(t, "class/block/sda/sda1/dev"), "8:1\n");
	CHECK_STR(rd(t, "class/block/sda1/dev"), "8:1\n");	/* through the flat alias */
	CHECK_STR(rd(t, "class/tty/ttyS0/dev"), "4:64\n");
	CHECK_STR(rd(t, "class/tty/console/dev"), "5:0\n");
	CHECK_INT(ftype(t, "class/tty/nomaj/dev"), -ENOENT);
	CHECK_INT(classfs_path_stat(t, "class/block/sda/dev", &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_REG);
	CHECK_INT(st.mode & 0777, 0444);
	CHECK_INT(st.size, 4);	/* a stored value: its length ("8:0\n") */
	CHECK(!st.dynamic);
	CHECK_INT(wr(t, "class/block/sda/dev", "9:9\n"), -EACCES);
	CHECK_STR(rd(t, "class/block/sda/dev"), "8:0\n");

	/* uevent: MAJOR, MINOR, DEVNAME, DEVTYPE, class hook, type hook */
	CHECK_STR(rd(t, "class/block/sda/uevent"), "MAJOR=8\nMINOR=0\nDEVNAME=sda\nCLS_VAR=sda\n");
	CHECK_STR(rd(t, "class/block/sda/sda1/uevent"),
		  "MAJOR=8\nMINOR=1\nDEVNAME=sda1\nDEVTYPE=partition\nCLS_VAR=sda1\nTYPE_VAR=2\n");
	CHECK_STR(rd(t, "class/input/event0/uevent"), "MAJOR=13\nMINOR=64\nDEVNAME=input/event0\n");
	CHECK_STR(rd(t, "class/tty/nomaj/uevent"), "");
	CHECK_INT(classfs_path_stat(t, "class/tty/ttyS0/uevent", &st), 0);
	CHECK_INT(st.mode & 0777, 0644);

	/* dev/block and dev/char: links whose last component is the device */
	CHECK_STR(res(t, "dev/block/8:0"), "class/block/sda");
	CHECK_STR(res(t, "dev/block/8:1"), "class/block/sda/sda1");
	CHECK_STR(res(t, "dev/char/4:64"), "class/tty/ttyS0");
	CHECK_STR(res(t, "dev/char/13:64"), "class/input/event0");
	CHECK_INT(ftype(t, "dev/block/4:64"), -ENOENT);
	CHECK_INT(ftype(t, "dev/char/8:0"), -ENOENT);
	CHECK_INT(ftype(t, "dev/char/0:5"), -ENOENT);
	CHECK_INT(nentries(t, "dev/block"), 2);
	CHECK_INT(nentries(t, "dev/char"), 3);
	CHECK_STR(rd(t, "dev/block/8:1/dev"), "8:1\n");
	tree_with_links_checked(t);

	classfs_device_unregister(sda);		/* sda1 goes with it */
	CHECK_INT(nentries(t, "dev/block"), 0);
	CHECK_INT(ftype(t, "class/block/sda1"), -ENOENT);
	classfs_device_unregister(ev);
	classfs_device_unregister(ttyS0);
	classfs_device_unregister(nomaj);
	classfs_device_unregister(nominor);
	CHECK_INT(nentries(t, "dev/char"), 0);
	classfs_class_unregister(&blk);
	classfs_class_unregister(&input);
	classfs_class_unregister(&tty);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- the physical device: `device` link and reverse link ---- */

TEST(device_link_and_reverse_link)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls = classfs_class_create(t, "net");
	struct classfs_device pdev = { 0 };
	struct classfs_device *eth;

	classfs_device_initialize(&pdev);
	CHECK_INT(classfs_device_set_name(&pdev, "0000:00:19.0"), 0);
	CHECK_INT(classfs_device_add_to(NULL, &pdev), -EINVAL);
	CHECK_INT(classfs_device_add_to(t, &pdev), 0);
	CHECK_INT(ftype(t, "devices/0000:00:19.0"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "devices/0000:00:19.0/uevent"), CLASSFS_FT_REG);
	CHECK_INT(ftype(t, "devices/0000:00:19.0/subsystem"), -ENOENT);	/* no bus */

	eth = classfs_device_create(cls, NULL, 0, &pdev, NULL, "eth0");
	CHECK(eth != NULL);
	CHECK(eth->phys == &pdev);
	CHECK_STR(res(t, "class/net/eth0/device"), "devices/0000:00:19.0");
	CHECK_STR(res(t, "devices/0000:00:19.0/net:eth0"), "class/net/eth0");
	CHECK_STR(rd(t, "class/net/eth0/device/net:eth0/device/uevent"), "");
	tree_with_links_checked(t);

	/* the reverse link follows a rename and goes with the device */
	CHECK_INT(classfs_device_rename(eth, "lan0"), 0);
	CHECK_INT(ftype(t, "devices/0000:00:19.0/net:eth0"), -ENOENT);
	CHECK_STR(res(t, "devices/0000:00:19.0/net:lan0"), "class/net/lan0");
	tree_with_links_checked(t);
	classfs_device_unregister(eth);
	CHECK_INT(ftype(t, "devices/0000:00:19.0/net:lan0"), -ENOENT);
	CHECK_INT(nentries(t, "devices/0000:00:19.0"), 1);	/* uevent */

	/* a physical device removed under a class device takes it along */
	eth = classfs_device_create(cls, NULL, 0, &pdev, NULL, "eth1");
	CHECK(eth != NULL);
	classfs_device_get(eth);
	CHECK_INT(classfs_device_del(&pdev), 0);
	CHECK(!classfs_device_is_added(eth));
	CHECK_INT(ftype(t, "class/net/eth1"), -ENOENT);
	classfs_device_put(eth);
	classfs_device_put(&pdev);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- errors change nothing ---- */

static struct classfs_device *late_child;
static int late_child_err;

static void create_under_removed(struct classfs_device *dev, struct classfs_interface *intf)
{
	/* the parent is being removed: a new child under it is refused */
	errno = 0;
	late_child = classfs_device_create(intf->cls, dev, 0, NULL, NULL, "late");
	late_child_err = errno;
}

static ssize_t version_show(struct classfs_class *cls, const struct classfs_class_attribute *a,
			    char *buf)
{
	(void)cls;
	(void)a;
	return sprintf(buf, "1\n");
}

static const struct classfs_class_attribute version_attr = {
	{ "version", 0444 }, version_show, NULL
};

static const struct classfs_class_attribute *const class_attrs[] = { &version_attr, NULL };

static void errors(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class cls = { .name = "err", .class_attrs = class_attrs };
	struct classfs_class *other;
	struct classfs_class unreg = { .name = "unreg" };
	struct classfs_device *a, *b, *x, *o;
	struct classfs_device d = { 0 };
	struct classfs_interface intf = { .cls = &cls, .remove = create_under_removed };
	size_t base;

	CHECK_INT(classfs_class_register(t, &cls), 0);
	other = classfs_class_create(t, "other");
	a = classfs_device_create(&cls, NULL, makedev(10, 1), NULL, NULL, "a");
	b = classfs_device_create(&cls, a, makedev(10, 2), NULL, NULL, "b");
	o = classfs_device_create(other, NULL, 0, NULL, NULL, "o");
	CHECK(a && b && o);
	base = classfs_tree_node_count(t);

	/* NULL class, no name, bad names */
	errno = 0;
	CHECK(classfs_device_create(NULL, NULL, 0, NULL, NULL, "x") == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(classfs_device_add(NULL), -EINVAL);
	CHECK_INT(classfs_device_del(NULL), -EINVAL);
	CHECK_INT(classfs_device_unregister(NULL), -EINVAL);
	CHECK_INT(classfs_device_rename(NULL, "x"), -EINVAL);
	classfs_device_initialize(&d);
	d.cls = &cls;
	CHECK_INT(classfs_device_add(&d), -EINVAL);		/* no name */
	CHECK_INT(classfs_device_set_name(&d, "%s", ""), -EINVAL);
	CHECK_INT(classfs_device_add(&d), -EINVAL);
	errno = 0;
	CHECK(classfs_device_create(&cls, NULL, 0, NULL, NULL, "%s", "") == NULL);
	CHECK_INT(errno, EINVAL);
	errno = 0;
	CHECK(classfs_device_create(&cls, NULL, 0, NULL, NULL, "a/b") == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(classfs_tree_node_count(t), base);

	/* names are unique in the class, nested or not */
	errno = 0;
	CHECK(classfs_device_create(&cls, NULL, 0, NULL, NULL, "a") == NULL);
	CHECK_INT(errno, EEXIST);
	errno = 0;
	CHECK(classfs_device_create(&cls, NULL, 0, NULL, NULL, "b") == NULL);
	CHECK_INT(errno, EEXIST);
	errno = 0;
	CHECK(classfs_device_create(&cls, b, 0, NULL, NULL, "a") == NULL);
	CHECK_INT(errno, EEXIST);
	errno = 0;
	CHECK(classfs_device_create(&cls, a, 0, NULL, NULL, "b") == NULL);
	CHECK_INT(errno, EEXIST);
	/* the same name in another class is fine */
	x = classfs_device_create(other, NULL, 0, NULL, NULL, "a");
	CHECK(x != NULL);
	classfs_device_unregister(x);
	CHECK_INT(classfs_tree_node_count(t), base);

	/* nor may a device take the name of a class file or of an entry of its directory */
	errno = 0;
	CHECK(classfs_device_create(&cls, NULL, 0, NULL, NULL, "version") == NULL);
	CHECK_INT(errno, EEXIST);
	errno = 0;
	CHECK(classfs_device_create(&cls, a, 0, NULL, NULL, "version") == NULL);
	CHECK_INT(errno, EEXIST);
	CHECK_STR(rd(t, "class/err/version"), "1\n");
	static const char *const taken[] = { "uevent", "dev", "subsystem" };

	for (int i = 0; i < 3; i++) {
		errno = 0;
		CHECK(classfs_device_create(&cls, a, 0, NULL, NULL, "%s", taken[i]) == NULL);
		CHECK_INT(errno, EEXIST);
	}
	CHECK_INT(classfs_tree_node_count(t), base);

	/* parents: of another class, not added, itself */
	errno = 0;
	CHECK(classfs_device_create(&cls, o, 0, NULL, NULL, "x") == NULL);
	CHECK_INT(errno, EINVAL);
	classfs_device_initialize(&d);
	CHECK_INT(classfs_device_set_name(&d, "d"), 0);
	d.cls = &cls;
	d.parent = &d;
	CHECK_INT(classfs_device_add(&d), -EINVAL);
	{
		struct classfs_device np = { 0 };

		classfs_device_initialize(&np);
		CHECK_INT(classfs_device_set_name(&np, "np"), 0);
		np.cls = &cls;
		d.parent = &np;		/* initialized, never added */
		CHECK_INT(classfs_device_add(&d), -EINVAL);
		classfs_device_put(&np);
	}
	/* a class device with a bus, an unregistered class */
	d.parent = NULL;
	d.cls = &unreg;
	CHECK_INT(classfs_device_add(&d), -EINVAL);
	classfs_device_put(&d);
	CHECK_INT(classfs_tree_node_count(t), base);

	/* a parent being removed: its interface's remove() tries to add below it */
	CHECK_INT(classfs_interface_register(&intf), 0);
	late_child = NULL;
	late_child_err = 0;
	classfs_device_get(b);
	CHECK_INT(classfs_device_unregister(b), 0);
	CHECK(late_child == NULL);
	CHECK_INT(late_child_err, ENODEV);
	classfs_device_put(b);
	classfs_interface_unregister(&intf);
	intf.remove = NULL;

	tree_with_links_checked(t);
	classfs_device_unregister(a);
	classfs_device_unregister(o);
	classfs_class_unregister(&cls);
	classfs_class_destroy(other);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(errors_layout_class)
{
	errors(CLASSFS_LAYOUT_CLASS);
}

TEST(errors_layout_devices)
{
	errors(CLASSFS_LAYOUT_DEVICES);
}

TEST(class_errors)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class a = { .name = "a" };
	struct classfs_class a2 = { .name = "a" };
	struct classfs_class bad = { .name = "x/y" };
	struct classfs_class *f;
	size_t base = classfs_tree_node_count(t);

	CHECK_INT(classfs_class_register(t, NULL), -EINVAL);
	CHECK_INT(classfs_class_register(NULL, &a), -EINVAL);
	CHECK_INT(classfs_class_register(t, &bad), -EINVAL);
	CHECK_INT(classfs_class_register(t, &a), 0);
	CHECK_INT(classfs_class_register(t, &a), -EBUSY);
	CHECK_INT(classfs_class_register(t, &a2), -EEXIST);
	errno = 0;
	CHECK(classfs_class_create(t, "a") == NULL);
	CHECK_INT(errno, EEXIST);
	errno = 0;
	CHECK(classfs_class_create(NULL, "z") == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(classfs_tree_node_count(t), base + 1);
	f = classfs_class_find(t, "a");
	CHECK(f == &a);
	classfs_class_put(f);
	CHECK(classfs_class_find(t, "nope") == NULL);
	CHECK(classfs_class_get(NULL) == NULL);
	classfs_class_put(NULL);
	CHECK_INT(classfs_tree_free(t), -EBUSY);
	classfs_class_unregister(&a);
	classfs_class_unregister(&a);	/* twice: nothing */
	CHECK_INT(ftype(t, "class/a"), -ENOENT);
	CHECK_INT(classfs_tree_node_count(t), base);
	CHECK_INT(classfs_tree_free(NULL), -EINVAL);
	CHECK_INT(classfs_tree_free(t), 0);
	errno = 0;
	CHECK(classfs_tree_new((enum classfs_layout)7) == NULL);
	CHECK_INT(errno, EINVAL);
}

/* ---- release callbacks ---- */

static int rel_own, rel_type, rel_class, rel_class_itself;

static void release_own(struct classfs_device *dev)
{
	(void)dev;
	rel_own++;
}

static void release_type(struct classfs_device *dev)
{
	(void)dev;
	rel_type++;
}

static void release_class(struct classfs_device *dev)
{
	(void)dev;
	rel_class++;
}

static void release_class_itself(struct classfs_class *cls)
{
	(void)cls;
	rel_class_itself++;
}

static const struct classfs_device_type typed = { .name = "typed", .release = release_type };

TEST(release_precedence)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class cls = { .name = "rel", .dev_release = release_class,
				     .class_release = release_class_itself };
	struct classfs_class bare = { .name = "bare" };
	struct classfs_device own = { 0 }, bytype = { 0 }, byclass = { 0 }, none = { 0 };

	rel_own = rel_type = rel_class = rel_class_itself = 0;
	CHECK_INT(classfs_class_register(t, &cls), 0);
	CHECK_INT(classfs_class_register(t, &bare), 0);
	struct classfs_device *devs[] = { &own, &bytype, &byclass, &none };
	const char *names[] = { "own", "bytype", "byclass", "none" };

	for (int i = 0; i < 4; i++) {
		classfs_device_initialize(devs[i]);
		devs[i]->cls = i == 3 ? &bare : &cls;
		CHECK_INT(classfs_device_set_name(devs[i], "%s", names[i]), 0);
	}
	own.release = release_own;
	own.type = &typed;		/* the device's own release wins over its type's */
	bytype.type = &typed;		/* ... and the type's over the class's */
	for (int i = 0; i < 4; i++)
		CHECK_INT(classfs_device_add(devs[i]), 0);

	/* get/put tolerate NULL */
	CHECK(classfs_device_get(NULL) == NULL);
	classfs_device_put(NULL);

	/* the last put releases, once */
	CHECK(classfs_device_get(&own) == &own);
	CHECK_INT(classfs_device_unregister(&own), 0);
	CHECK_INT(rel_own, 0);
	classfs_device_put(&own);
	CHECK_INT(rel_own, 1);
	CHECK_INT(rel_type, 0);
	CHECK_INT(rel_class, 0);

	CHECK_INT(classfs_device_unregister(&bytype), 0);
	CHECK_INT(rel_type, 1);
	CHECK_INT(rel_class, 0);
	CHECK_INT(classfs_device_unregister(&byclass), 0);
	CHECK_INT(rel_class, 1);
	CHECK_INT(classfs_device_unregister(&none), 0);	/* nothing to call: fine */
	CHECK_INT(rel_own + rel_type + rel_class, 3);

	/* a device outliving its class's registration: the class's release still runs */
	classfs_device_initialize(&byclass);
	byclass.cls = &cls;
	CHECK_INT(classfs_device_set_name(&byclass, "late"), 0);
	CHECK_INT(classfs_device_add(&byclass), 0);
	classfs_device_get(&byclass);
	classfs_class_unregister(&cls);		/* removes the device, drops its reference */
	CHECK(!classfs_device_is_added(&byclass));
	CHECK_INT(rel_class, 1);
	CHECK_INT(rel_class_itself, 0);		/* the device still holds the class */
	classfs_device_put(&byclass);
	CHECK_INT(rel_class, 2);
	CHECK_INT(rel_class_itself, 1);
	CHECK_INT(rel_own, 1);
	CHECK_INT(rel_type, 1);

	classfs_class_unregister(&bare);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- removal of a parent with live children ---- */

static char order_log[64][48];
static int order_n;
static struct classfs_device *drv_child;	/* what the driver of P hung below it */

static void log_add(const char *fmt, const char *s)
{
	if (order_n < 64)
		snprintf(order_log[order_n++], sizeof(order_log[0]), fmt, s);
}

static int log_index(const char *s)
{
	for (int i = 0; i < order_n; i++)
		if (!strcmp(order_log[i], s))
			return i;
	return -1;
}

static void order_remove(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	log_add("rm:%s", classfs_device_name(dev));
	if (!strcmp(classfs_device_name(dev), "P") && drv_child) {
		/* the driver tears down what it made: no automatic removal for it */
		CHECK_INT(classfs_device_unregister(drv_child), 0);
		drv_child = NULL;
	}
}

static void order_listener(const struct classfs_uevent *ev, void *data)
{
	const char *name = strrchr(ev->devpath, '/') + 1;

	(void)data;
	if (ev->action == CLASSFS_ACTION_REMOVE)
		log_add("ev:%s", name);
}

static int order_released;

static void order_release(struct classfs_device *dev)
{
	order_released++;
	free(dev);
}

static struct classfs_device *mk(struct classfs_class *cls, struct classfs_device *parent,
				 const char *name)
{
	struct classfs_device *d = calloc(1, sizeof(*d));

	classfs_device_initialize(d);
	d->cls = cls;
	d->parent = parent;
	d->release = order_release;
	CHECK_INT(classfs_device_set_name(d, "%s", name), 0);
	CHECK_INT(classfs_device_add(d), 0);
	return d;
}

static void parent_removal(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class cls = { .name = "ord" };
	struct classfs_interface intf = { .cls = &cls, .remove = order_remove };
	struct classfs_device *P, *C1, *C2, *G, *G2;
	size_t base;
	int id;

	CHECK_INT(classfs_class_register(t, &cls), 0);
	base = classfs_tree_node_count(t);
	P = mk(&cls, NULL, "P");
	C1 = mk(&cls, P, "C1");
	C2 = mk(&cls, P, "C2");
	G = mk(&cls, C1, "G");
	G2 = mk(&cls, G, "G2");
	drv_child = mk(&cls, P, "D");
	(void)C2;
	(void)G2;
	CHECK_INT(classfs_interface_register(&intf), 0);
	id = classfs_listener_add(t, order_listener, NULL);
	CHECK(id > 0);
	order_n = 0;
	order_released = 0;

	CHECK_INT(classfs_device_unregister(P), 0);

	/* P's interfaces first, then the rest deepest first, P's REMOVE last */
	CHECK(order_n > 0 && !strcmp(order_log[0], "rm:P"));
	CHECK(order_n > 0 && !strcmp(order_log[order_n - 1], "ev:P"));
	static const char *const names[] = { "P", "C1", "C2", "G", "G2", "D" };
	static const char *const parents[] = { NULL, "P", "P", "C1", "G", "P" };

	for (int i = 0; i < 6; i++) {
		char rm[16], ev[16];
		int n_rm = 0, n_ev = 0;

		snprintf(rm, sizeof(rm), "rm:%s", names[i]);
		snprintf(ev, sizeof(ev), "ev:%s", names[i]);
		for (int k = 0; k < order_n; k++) {
			n_rm += !strcmp(order_log[k], rm);
			n_ev += !strcmp(order_log[k], ev);
		}
		CHECK_INT(n_rm, 1);		/* each device meets remove() once */
		CHECK_INT(n_ev, 1);		/* and sends one REMOVE */
		CHECK(log_index(rm) < log_index(ev));
		if (parents[i]) {
			char pev[16], prm[16];

			snprintf(pev, sizeof(pev), "ev:%s", parents[i]);
			snprintf(prm, sizeof(prm), "rm:%s", parents[i]);
			/* a child's REMOVE before its parent's, its remove() after the parent's */
			CHECK(log_index(ev) < log_index(pev));
			CHECK(log_index(prm) < log_index(rm));
		}
	}
	/* the driver's own child went in P's remove(), before anything automatic */
	CHECK_INT(log_index("ev:D"), 2);
	if (test_failed_now)
		for (int k = 0; k < order_n; k++)
			fprintf(stderr, "    %s\n", order_log[k]);
	CHECK_INT(order_released, 6);	/* the automatic removals dropped their references */
	CHECK_INT(classfs_tree_node_count(t), base);
	CHECK_INT(ftype(t, "class/ord/C1"), -ENOENT);
	CHECK_INT(nentries(t, "class/ord"), 0);

	classfs_listener_remove(t, id);
	classfs_interface_unregister(&intf);
	classfs_class_unregister(&cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(parent_removal_layout_class)
{
	parent_removal(CLASSFS_LAYOUT_CLASS);
}

TEST(parent_removal_layout_devices)
{
	parent_removal(CLASSFS_LAYOUT_DEVICES);
}

/* class_unregister with devices left: REMOVE deepest first too */
TEST(class_unregister_removes_devices)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class cls = { .name = "ord" };
	struct recorder r;

	CHECK_INT(classfs_class_register(t, &cls), 0);
	order_released = 0;
	struct classfs_device *P = mk(&cls, NULL, "P");
	struct classfs_device *C = mk(&cls, P, "C");

	mk(&cls, C, "G");
	mk(&cls, NULL, "Q");
	CHECK(rec_start(&r, t) > 0);
	classfs_class_unregister(&cls);
	CHECK_INT(order_released, 4);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_REMOVE), 4);
	int g = rec_find(&r, CLASSFS_ACTION_REMOVE, "/class/ord/P/C/G");
	int c = rec_find(&r, CLASSFS_ACTION_REMOVE, "/class/ord/P/C");
	int p = rec_find(&r, CLASSFS_ACTION_REMOVE, "/class/ord/P");

	CHECK(g >= 0 && c > g && p > c);
	CHECK(rec_find(&r, CLASSFS_ACTION_REMOVE, "/class/ord/Q") >= 0);
	CHECK_INT(ftype(t, "class/ord"), -ENOENT);
	rec_stop(&r);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- rename ---- */

static void rename_test(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_device *sda, *sda1, *sdb;
	struct recorder r;
	const char *top = layout == CLASSFS_LAYOUT_CLASS ? "/class/block" : "/devices/virtual/block";
	char want[128];
	size_t base;
	int i;

	sda = classfs_device_create(blk, NULL, makedev(8, 0), NULL, NULL, "sda");
	sda1 = classfs_device_create(blk, sda, makedev(8, 1), NULL, NULL, "sda1");
	sdb = classfs_device_create(blk, NULL, makedev(8, 16), NULL, NULL, "sdb");
	CHECK(sda && sda1 && sdb);
	base = classfs_tree_node_count(t);
	CHECK(rec_start(&r, t) > 0);

	CHECK_INT(classfs_device_rename(sda, "sdz"), 0);
	CHECK_INT(r.n, 1);
	i = rec_find(&r, CLASSFS_ACTION_MOVE, NULL);
	CHECK_INT(i, 0);
	snprintf(want, sizeof(want), "%s/sdz", top);
	CHECK_STR(r.ev[0].devpath, want);
	CHECK_STR(rec_get(&r, 0, "DEVPATH"), want);
	snprintf(want, sizeof(want), "%s/sda", top);
	CHECK_STR(rec_get(&r, 0, "DEVPATH_OLD"), want);
	CHECK_STR(rec_get(&r, 0, "DEVNAME"), "sdz");
	CHECK_STR(rec_get(&r, 0, "SUBSYSTEM"), "block");
	CHECK_STR(rec_get(&r, 0, "ACTION"), "move");
	CHECK_INT(ftype(t, "class/block/sda"), -ENOENT);
	CHECK_INT(ftype(t, "block/sda"), -ENOENT);
	CHECK_INT(ftype(t, "class/block/sdz/"), CLASSFS_FT_DIR);
	CHECK_STR(rd(t, "class/block/sdz/uevent"), "MAJOR=8\nMINOR=0\nDEVNAME=sdz\n");
	CHECK_STR(rd(t, "class/block/sdz/sda1/dev"), "8:1\n");	/* children move along */
	CHECK_STR(rd(t, "class/block/sda1/dev"), "8:1\n");
	CHECK_STR(rd(t, "block/sdz/dev"), "8:0\n");
	CHECK_STR(rd(t, "dev/block/8:1/uevent"), "MAJOR=8\nMINOR=1\nDEVNAME=sda1\n");
	CHECK_INT(classfs_tree_node_count(t), base);
	{
		struct classfs_device *f = classfs_class_find_device(blk, "sdz");

		CHECK(f == sda);
		classfs_device_put(f);
		CHECK(classfs_class_find_device(blk, "sda") == NULL);
	}

	/* a nested device */
	rec_clear(&r);
	CHECK_INT(classfs_device_rename(sda1, "sdz1"), 0);
	snprintf(want, sizeof(want), "%s/sdz/sda1", top);
	CHECK_STR(rec_get(&r, 0, "DEVPATH_OLD"), want);
	snprintf(want, sizeof(want), "%s/sdz/sdz1", top);
	CHECK_STR(rec_get(&r, 0, "DEVPATH"), want);
	CHECK_INT(ftype(t, "class/block/sda1"), -ENOENT);
	CHECK_STR(rd(t, "class/block/sdz1/dev"), "8:1\n");
	CHECK_STR(rd(t, "class/block/sdz/sdz1/dev"), "8:1\n");

	/* collisions: -EEXIST, nothing changes, no event */
	rec_clear(&r);
	CHECK_INT(classfs_device_rename(sdb, "sdz"), -EEXIST);
	CHECK_INT(classfs_device_rename(sdb, "sdz1"), -EEXIST);	/* nested elsewhere */
	CHECK_INT(classfs_device_rename(sda1, "sdb"), -EEXIST);
	CHECK_INT(classfs_device_rename(sda1, "uevent"), -EEXIST);	/* entries of its directory */
	CHECK_INT(classfs_device_rename(sda1, "dev"), -EEXIST);
	CHECK_INT(classfs_device_rename(sda1, "subsystem"), -EEXIST);
	CHECK_INT(classfs_device_rename(sdb, "bad/name"), -EINVAL);
	CHECK_INT(r.n, 0);
	CHECK_INT(classfs_device_rename(sdb, "sdb"), 0);	/* same name: nothing to do */
	CHECK_STR(rd(t, "class/block/sdb/dev"), "8:16\n");
	CHECK_STR(rd(t, "class/block/sdz/dev"), "8:0\n");
	CHECK_STR(rd(t, "class/block/sdz/uevent"), "MAJOR=8\nMINOR=0\nDEVNAME=sdz\n");
	CHECK_INT(classfs_tree_node_count(t), base);

	/* the old name is free again */
	struct classfs_device *n = classfs_device_create(blk, NULL, makedev(8, 32), NULL, NULL, "sda");

	CHECK(n != NULL);
	tree_with_links_checked(t);
	classfs_device_unregister(n);
	classfs_device_get(sda);
	classfs_device_unregister(sda);
	CHECK_INT(classfs_device_rename(sda, "again"), -EINVAL);	/* not added */
	classfs_device_put(sda);
	classfs_device_unregister(sdb);
	rec_stop(&r);
	classfs_class_destroy(blk);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(rename_layout_class)
{
	rename_test(CLASSFS_LAYOUT_CLASS);
}

TEST(rename_layout_devices)
{
	rename_test(CLASSFS_LAYOUT_DEVICES);
}

/* ---- class devices as physical parents; buses ---- */

static void class_device_as_phys(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *nvme = classfs_class_create(t, "nvme");
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_class *spim = classfs_class_create(t, "spi_master");
	struct classfs_bus spi = { .name = "spi" };
	struct classfs_bus spi2 = { .name = "spi" };
	struct classfs_device *ctrl, *ns, *part, *spi0;
	struct classfs_device elan = { 0 };
	struct recorder r;
	bool cl = layout == CLASSFS_LAYOUT_CLASS;
	size_t base = classfs_tree_node_count(t);

	ctrl = classfs_device_create(nvme, NULL, makedev(241, 0), NULL, NULL, "nvme0");
	ns = classfs_device_create(blk, NULL, makedev(259, 0), ctrl, NULL, "nvme0n1");
	part = classfs_device_create(blk, ns, makedev(259, 1), NULL, NULL, "nvme0n1p1");
	CHECK(ctrl && ns && part);
	if (cl) {
		CHECK_INT(ftype(t, "class/block/nvme0n1"), CLASSFS_FT_DIR);
		CHECK_STR(res(t, "class/block/nvme0n1/device"), "class/nvme/nvme0");
		CHECK_STR(res(t, "class/nvme/nvme0/block:nvme0n1"), "class/block/nvme0n1");
		CHECK_STR(res(t, "class/block/nvme0n1p1"), "class/block/nvme0n1/nvme0n1p1");
	} else {
		CHECK_INT(ftype(t, "devices/virtual/nvme/nvme0/nvme0n1"), CLASSFS_FT_DIR);
		CHECK_INT(ftype(t, "devices/virtual/nvme/nvme0/nvme0n1/nvme0n1p1"), CLASSFS_FT_DIR);
		CHECK_STR(res(t, "class/block/nvme0n1"), "devices/virtual/nvme/nvme0/nvme0n1");
		CHECK_STR(res(t, "class/block/nvme0n1p1"),
			  "devices/virtual/nvme/nvme0/nvme0n1/nvme0n1p1");
		CHECK_STR(res(t, "class/nvme/nvme0"), "devices/virtual/nvme/nvme0");
		CHECK_STR(res(t, "devices/virtual/nvme/nvme0/nvme0n1/device"),
			  "devices/virtual/nvme/nvme0");
		CHECK_STR(res(t, "devices/virtual/nvme/nvme0/nvme0n1/subsystem"), "class/block");
	}
	CHECK_STR(rd(t, "block/nvme0n1/dev"), "259:0\n");
	CHECK_STR(rd(t, "class/block/nvme0n1/device/dev"), "241:0\n");
	CHECK_STR(rd(t, "dev/block/259:1/dev"), "259:1\n");
	CHECK_STR(rd(t, "dev/char/241:0/dev"), "241:0\n");

	/* a bus device below a class device */
	CHECK_INT(classfs_bus_register(t, &spi), 0);
	CHECK_INT(classfs_bus_register(t, &spi), -EBUSY);
	CHECK_INT(classfs_bus_register(t, &spi2), -EEXIST);
	CHECK(classfs_bus_find(t, "spi") == &spi);
	CHECK(classfs_bus_find(t, "usb") == NULL);
	spi0 = classfs_device_create(spim, NULL, 0, NULL, NULL, "spi0");
	classfs_device_initialize(&elan);
	CHECK_INT(classfs_device_set_name(&elan, "spi-ELAN7001:00"), 0);
	elan.bus = &spi;
	elan.parent = spi0;
	CHECK_INT(classfs_device_add(&elan), 0);
	if (cl)
		CHECK_STR(res(t, "bus/spi/devices/spi-ELAN7001:00"),
			  "class/spi_master/spi0/spi-ELAN7001:00");
	else
		CHECK_STR(res(t, "bus/spi/devices/spi-ELAN7001:00"),
			  "devices/virtual/spi_master/spi0/spi-ELAN7001:00");
	CHECK_STR(res(t, "bus/spi/devices/spi-ELAN7001:00/subsystem"), "bus/spi");
	CHECK_INT(ftype(t, "class/spi_master/spi0/spi-ELAN7001:00/"), CLASSFS_FT_DIR);
	CHECK_INT(classfs_bus_unregister(&spi), -EBUSY);
	tree_with_links_checked(t);

	/* the parents go: their dependents before them, deepest first */
	CHECK(rec_start(&r, t) > 0);
	classfs_device_get(&elan);
	CHECK_INT(classfs_device_unregister(spi0), 0);
	CHECK(!classfs_device_is_added(&elan));
	CHECK_INT(r.n, 2);
	CHECK(r.n == 2 && !strcmp(r.ev[0].subsystem, "spi") && !strcmp(r.ev[1].subsystem, "spi_master"));
	CHECK_INT(nentries(t, "bus/spi/devices"), 0);
	CHECK_INT(classfs_bus_unregister(&spi), 0);
	CHECK_INT(ftype(t, "bus/spi"), -ENOENT);
	classfs_device_put(&elan);

	rec_clear(&r);
	CHECK_INT(classfs_device_unregister(ctrl), 0);
	CHECK_INT(r.n, 3);
	CHECK(r.n == 3 && !strcmp(rec_get(&r, 0, "DEVNAME"), "nvme0n1p1"));
	CHECK(r.n == 3 && !strcmp(rec_get(&r, 1, "DEVNAME"), "nvme0n1"));
	CHECK(r.n == 3 && !strcmp(rec_get(&r, 2, "DEVNAME"), "nvme0"));
	CHECK_INT(nentries(t, "class/block"), 0);
	CHECK_INT(nentries(t, "dev/block"), 0);
	rec_stop(&r);
	classfs_class_destroy(nvme);
	classfs_class_destroy(blk);
	classfs_class_destroy(spim);
	CHECK_INT(classfs_tree_node_count(t), base - 3);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(class_device_as_phys_layout_class)
{
	class_device_as_phys(CLASSFS_LAYOUT_CLASS);
}

TEST(class_device_as_phys_layout_devices)
{
	class_device_as_phys(CLASSFS_LAYOUT_DEVICES);
}

/* ---- the paths of both layouts ---- */

TEST(layout_class_paths)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_class *input = classfs_class_create(t, "input");
	struct classfs_bus pci = { .name = "pci" };
	struct classfs_device pdev = { 0 };
	struct classfs_device *sda, *sda1, *in, *ev;
	size_t base = classfs_tree_node_count(t);

	CHECK_INT(classfs_tree_layout(t), CLASSFS_LAYOUT_CLASS);
	CHECK_INT(ftype(t, "devices/virtual"), -ENOENT);
	sda = classfs_device_create(blk, NULL, makedev(8, 0), NULL, NULL, "sda");
	sda1 = classfs_device_create(blk, sda, makedev(8, 1), NULL, NULL, "sda1");
	CHECK_INT(ftype(t, "class/block/sda"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "class/block/sda/sda1"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "class/block/sda1"), CLASSFS_FT_LNK);
	CHECK_STR(lnk(t, "class/block/sda1"), "sda/sda1");
	CHECK_INT(ftype(t, "block/sda"), CLASSFS_FT_LNK);
	CHECK_STR(res(t, "block/sda"), "class/block/sda");
	CHECK_INT(ftype(t, "block/sda1"), -ENOENT);	/* partitions are not in block/ */
	CHECK_INT(nentries(t, "block"), 1);
	CHECK_STR(res(t, "dev/block/8:1"), "class/block/sda/sda1");
	CHECK(strstr(lnk(t, "dev/block/8:1"), "/sda1") != NULL);
	CHECK_STR(res(t, "class/block/sda/sda1/subsystem"), "class/block");
	CHECK_INT(listed(t, "class/block", "sda"), 1);
	CHECK_INT(listed(t, "class/block", "sda1"), 1);
	CHECK_INT(listed(t, "class/block/sda", "sda1"), 1);
	CHECK_INT(nentries(t, "class/block"), 2);

	/* a class device whose physical parent is a bus device */
	CHECK_INT(classfs_bus_register(t, &pci), 0);
	classfs_device_initialize(&pdev);
	CHECK_INT(classfs_device_set_name(&pdev, "0000:00:14.0"), 0);
	pdev.bus = &pci;
	CHECK_INT(classfs_device_add(&pdev), 0);
	in = classfs_device_create(input, NULL, 0, &pdev, NULL, "input0");
	ev = classfs_device_create(input, in, makedev(13, 64), NULL, NULL, "event0");
	CHECK(in && ev);
	CHECK_INT(ftype(t, "class/input/input0"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "class/input/input0/event0"), CLASSFS_FT_DIR);
	CHECK_STR(res(t, "class/input/event0"), "class/input/input0/event0");
	CHECK_STR(res(t, "class/input/input0/device"), "devices/0000:00:14.0");
	CHECK_STR(res(t, "devices/0000:00:14.0/input:input0"), "class/input/input0");
	CHECK_STR(res(t, "bus/pci/devices/0000:00:14.0"), "devices/0000:00:14.0");
	CHECK_STR(res(t, "devices/0000:00:14.0/subsystem"), "bus/pci");
	CHECK_STR(res(t, "dev/char/13:64"), "class/input/input0/event0");
	tree_with_links_checked(t);

	classfs_device_unregister(sda);
	classfs_device_unregister(in);
	CHECK_INT(nentries(t, "devices/0000:00:14.0"), 2);	/* uevent, subsystem */
	CHECK_INT(classfs_device_unregister(&pdev), 0);
	CHECK_INT(classfs_bus_unregister(&pci), 0);
	(void)sda1;
	(void)ev;
	classfs_class_destroy(blk);
	classfs_class_destroy(input);
	CHECK_INT(classfs_tree_node_count(t), base - 2);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(layout_devices_paths)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_class *input = classfs_class_create(t, "input");
	struct classfs_device pdev = { 0 };
	struct classfs_device *sda, *sda1, *in, *ev, *in2;
	struct recorder r;
	size_t base = classfs_tree_node_count(t);

	CHECK_INT(classfs_tree_layout(t), CLASSFS_LAYOUT_DEVICES);
	CHECK(rec_start(&r, t) > 0);
	sda = classfs_device_create(blk, NULL, makedev(8, 0), NULL, NULL, "sda");
	sda1 = classfs_device_create(blk, sda, makedev(8, 1), NULL, NULL, "sda1");
	CHECK(sda && sda1);
	CHECK_INT(ftype(t, "devices/virtual/block/sda"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "devices/virtual/block/sda/sda1"), CLASSFS_FT_DIR);
	CHECK_STR(lnk(t, "class/block/sda1"), "../../devices/virtual/block/sda/sda1");
	CHECK_STR(lnk(t, "class/block/sda"), "../../devices/virtual/block/sda");
	CHECK_STR(res(t, "block/sda"), "devices/virtual/block/sda");
	CHECK_INT(ftype(t, "block/sda1"), -ENOENT);
	CHECK_STR(res(t, "dev/block/8:1"), "devices/virtual/block/sda/sda1");
	CHECK_STR(res(t, "devices/virtual/block/sda/sda1/subsystem"), "class/block");
	CHECK_STR(r.ev[0].devpath, "/devices/virtual/block/sda");
	CHECK_STR(r.ev[1].devpath, "/devices/virtual/block/sda/sda1");
	CHECK_INT(nentries(t, "class/block"), 2);
	CHECK_INT(nentries(t, "devices/virtual/block"), 1);

	/* below a physical device: a glue directory named after the class */
	classfs_device_initialize(&pdev);
	CHECK_INT(classfs_device_set_name(&pdev, "platform0"), 0);
	CHECK_INT(classfs_device_add_to(t, &pdev), 0);
	in = classfs_device_create(input, NULL, 0, &pdev, NULL, "input0");
	ev = classfs_device_create(input, in, makedev(13, 64), NULL, NULL, "event0");
	in2 = classfs_device_create(input, NULL, 0, &pdev, NULL, "input1");
	CHECK(in && ev && in2);
	CHECK_INT(ftype(t, "devices/platform0/input/input0"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "devices/platform0/input/input0/event0"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "devices/platform0/input/input1"), CLASSFS_FT_DIR);
	CHECK_STR(lnk(t, "class/input/input0"), "../../devices/platform0/input/input0");
	CHECK_STR(res(t, "class/input/event0"), "devices/platform0/input/input0/event0");
	CHECK_STR(res(t, "devices/platform0/input/input0/device"), "devices/platform0");
	CHECK_INT(ftype(t, "devices/platform0/input:input0"), -ENOENT);	/* class layout only */
	CHECK_STR(res(t, "dev/char/13:64"), "devices/platform0/input/input0/event0");
	CHECK_INT(rec_find(&r, CLASSFS_ACTION_ADD, "/devices/platform0/input/input0/event0") >= 0, 1);
	tree_with_links_checked(t);

	/* a glue directory's name taken by a device: refused, nothing made */
	{
		struct classfs_device blkdev = { 0 };
		size_t nodes;

		classfs_device_initialize(&blkdev);
		CHECK_INT(classfs_device_set_name(&blkdev, "block"), 0);
		blkdev.parent = &pdev;
		CHECK_INT(classfs_device_add(&blkdev), 0);
		nodes = classfs_tree_node_count(t);
		errno = 0;
		CHECK(!classfs_device_create(blk, NULL, makedev(8, 16), &pdev, NULL, "sdb"));
		CHECK_INT(errno, EEXIST);
		CHECK_INT(classfs_tree_node_count(t), nodes);
		CHECK_INT(classfs_device_unregister(&blkdev), 0);
	}

	/* an event checked without being sent: no SEQNUM used */
	{
		static char big[CLASSFS_UEVENT_BUFFER];
		const char *extra[] = { big, NULL };
		uint64_t seq = classfs_tree_seqnum(t);

		memset(big, 'x', sizeof(big) - 1);
		big[0] = 'K', big[1] = '=';
		CHECK_INT(classfs_device_uevent_check(in, CLASSFS_ACTION_CHANGE, NULL), 0);
		CHECK_INT(classfs_device_uevent_check(in, CLASSFS_ACTION_CHANGE, extra), -E2BIG);
		CHECK_INT(classfs_device_uevent_check(NULL, CLASSFS_ACTION_CHANGE, NULL), -EINVAL);
		CHECK_INT(classfs_tree_seqnum(t), seq);
	}

	/* the glue directory goes with its last device */
	classfs_device_unregister(in);
	CHECK_INT(ftype(t, "devices/platform0/input"), CLASSFS_FT_DIR);
	classfs_device_unregister(in2);
	CHECK_INT(ftype(t, "devices/platform0/input"), -ENOENT);
	CHECK_INT(ftype(t, "class/input/event0"), -ENOENT);
	classfs_device_unregister(sda);
	CHECK_INT(ftype(t, "devices/virtual/block"), -ENOENT);
	CHECK_INT(classfs_device_unregister(&pdev), 0);
	(void)ev;
	rec_stop(&r);
	classfs_class_destroy(blk);
	classfs_class_destroy(input);
	CHECK_INT(classfs_tree_node_count(t), base - 2);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* physical devices nest by parent; class devices of the same name may coexist */
TEST(physical_devices)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_device a = { 0 }, b = { 0 }, dup = { 0 };
	size_t base = classfs_tree_node_count(t);

	classfs_device_initialize(&a);
	classfs_device_initialize(&b);
	classfs_device_initialize(&dup);
	CHECK_INT(classfs_device_set_name(&a, "pci0000:00"), 0);
	CHECK_INT(classfs_device_set_name(&b, "0000:00:02.0"), 0);
	CHECK_INT(classfs_device_set_name(&dup, "pci0000:00"), 0);
	b.parent = &a;
	CHECK_INT(classfs_device_add(&b), -EINVAL);	/* parent not added */
	CHECK_INT(classfs_device_add_to(t, &a), 0);
	CHECK_INT(classfs_device_add_to(t, &dup), -EEXIST);
	CHECK_INT(classfs_device_add(&b), 0);
	CHECK_INT(ftype(t, "devices/pci0000:00/0000:00:02.0"), CLASSFS_FT_DIR);
	CHECK_STR(rd(t, "devices/pci0000:00/0000:00:02.0/uevent"), "");
	/* a physical device may not have a `device` of its own */
	dup.phys = &a;
	CHECK_INT(classfs_device_set_name(&dup, "other"), 0);
	CHECK_INT(classfs_device_add_to(t, &dup), -EINVAL);
	classfs_device_get(&b);
	CHECK_INT(classfs_device_unregister(&a), 0);	/* b goes with it */
	CHECK(!classfs_device_is_added(&b));
	CHECK_INT(classfs_tree_node_count(t), base);
	classfs_device_put(&b);
	classfs_device_put(&b);
	classfs_device_put(&dup);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- inode numbers of removed entries ---- */

TEST(stale_inode_numbers)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls = classfs_class_create(t, "st");
	struct classfs_device *d = classfs_device_create(cls, NULL, makedev(9, 9), NULL, NULL, "d");
	struct classfs_stat dir, dev, again;
	char buf[64];

	CHECK_INT(classfs_path_stat(t, "class/st/d", &dir), 0);
	CHECK_INT(classfs_path_stat(t, "class/st/d/dev", &dev), 0);
	CHECK(dir.ino != dev.ino);
	CHECK(dir.ino != classfs_root_ino());
	CHECK_INT(classfs_read(t, dev.ino, buf, sizeof(buf), 0), 4);
	CHECK_INT(classfs_read(t, dev.ino, buf, sizeof(buf), 2), 2);
	CHECK_INT(classfs_read(t, dev.ino, buf, sizeof(buf), 10), 0);
	CHECK_INT(classfs_read(t, dir.ino, buf, sizeof(buf), 0), -EISDIR);
	CHECK_INT(classfs_readlink(t, dev.ino, buf, sizeof(buf)), -EINVAL);
	classfs_device_unregister(d);
	CHECK_INT(classfs_getattr(t, dir.ino, &again), -ENOENT);
	CHECK_INT(classfs_getattr(t, dev.ino, &again), -ENOENT);
	CHECK(classfs_read(t, dev.ino, buf, sizeof(buf), 0) < 0);

	/* the same name again: new numbers, the old ones stay stale */
	for (int i = 0; i < 3000; i++) {
		d = classfs_device_create(cls, NULL, makedev(9, 9), NULL, NULL, "d");
		CHECK_INT(classfs_path_stat(t, "class/st/d", &again), 0);
		if (again.ino == dir.ino) {
			CHECK(again.ino != dir.ino);
			break;
		}
		CHECK_INT(classfs_getattr(t, dir.ino, &again), -ENOENT);
		classfs_device_unregister(d);
	}
	CHECK_INT(classfs_getattr(t, classfs_root_ino(), &again), 0);
	CHECK_INT(again.type, CLASSFS_FT_DIR);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- iterating and finding ---- */

static int count_fn(struct classfs_device *dev, void *data)
{
	(void)dev;
	return ++*(int *)data == 3 ? 42 : 0;
}

static int all_fn(struct classfs_device *dev, void *data)
{
	(void)dev;
	++*(int *)data;
	return 0;
}

TEST(for_each_and_find)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls = classfs_class_create(t, "it");
	struct classfs_device *p = classfs_device_create(cls, NULL, makedev(7, 0), NULL, NULL, "p");
	struct classfs_device *c = classfs_device_create(cls, p, makedev(7, 1), NULL, NULL, "c");
	struct classfs_device *f;
	int n = 0;

	for (int i = 0; i < 5; i++)
		classfs_device_create(cls, NULL, 0, NULL, NULL, "x%d", i);
	CHECK_INT(classfs_class_for_each_device(cls, all_fn, &n), 0);
	CHECK_INT(n, 7);
	n = 0;
	CHECK_INT(classfs_class_for_each_device(cls, count_fn, &n), 42);
	CHECK_INT(n, 3);
	CHECK_INT(classfs_class_for_each_device(NULL, all_fn, &n), -EINVAL);
	f = classfs_class_find_device(cls, "c");
	CHECK(f == c);
	classfs_device_put(f);
	f = classfs_class_find_device_by_devt(cls, makedev(7, 1));
	CHECK(f == c);
	classfs_device_put(f);
	CHECK(classfs_class_find_device_by_devt(cls, makedev(7, 2)) == NULL);
	CHECK(classfs_class_find_device_by_devt(cls, makedev(0, 0)) == NULL);
	CHECK(classfs_class_find_device(cls, "nope") == NULL);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-entry-names.c - the names in a device's directory are unique: an
 * attribute of the type's or class's groups named like an entry the tree
 * makes (`uevent`, `dev`, `subsystem`, `device`), like another attribute
 * or like a named group, and a glue directory or "CLASS:NAME" link taking
 * an attribute's name, are refused at add and change nothing.  And the
 * roots of virtual buses: physical devices in devices/virtual, in both
 * layouts, where no physical device named "virtual" may go.
 */
#include "../harness.h"
#include "classfs-internal/testing.h"
#include "../native-util.h"

static ssize_t show_x(struct classfs_device *dev, const struct classfs_device_attribute *a,
		      char *buf)
{
	(void)dev;
	return (ssize_t)snprintf(buf, 64, "%s\n", a->attr.name);
}

#define ATTR(var, nm) \
	static const struct classfs_device_attribute var = { .attr = { .name = nm, .mode = 0444 }, \
							     .show = show_x }

ATTR(a_dev, "dev");
ATTR(a_uevent, "uevent");
ATTR(a_subsystem, "subsystem");
ATTR(a_device, "device");
ATTR(a_x, "x");
ATTR(a_y, "y");
ATTR(a_block, "block");
ATTR(a_backlink, "block:sdz");
ATTR(a_bad, "a/b");

static void free_typed(struct classfs_device *dev)
{
	free((void *)dev->type);
	free(dev);
}

/* a class device of a type with @groups, freed with its type when released */
static int add_typed(struct classfs_class *cls, struct classfs_device *phys, dev_t devt,
		     const struct classfs_attribute_group *const *groups, const char *name)
{
	struct classfs_device_type *type = calloc(1, sizeof(*type));
	struct classfs_device *d = calloc(1, sizeof(*d));
	int r;

	type->groups = groups;
	classfs_device_initialize(d);
	d->cls = cls;
	d->phys = phys;
	d->devt = devt;
	d->type = type;
	d->release = free_typed;
	classfs_device_set_name(d, "%s", name);
	r = classfs_device_add(d);
	if (r < 0)
		classfs_device_put(d);
	return r;
}

static void refused(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *cls = classfs_class_create(t, "v");
	struct classfs_bus bus = { .name = "pci" };
	struct classfs_device pdev = { 0 };
	size_t base;

	/* the issue's: `classctl add v Y --dev 8:1 --attr dev=evil --attr uevent=EVIL` */
	static const struct classfs_device_attribute *const dev_uevent[] = { &a_dev, &a_uevent,
									  NULL };
	static const struct classfs_attribute_group g_dev_uevent = { .attrs = dev_uevent };
	static const struct classfs_attribute_group *const gs_dev_uevent[] = { &g_dev_uevent,
									  NULL };
	static const struct classfs_device_attribute *const uev[] = { &a_uevent, NULL };
	static const struct classfs_attribute_group g_uev = { .attrs = uev };
	static const struct classfs_attribute_group *const gs_uev[] = { &g_uev, NULL };
	static const struct classfs_device_attribute *const dev_only[] = { &a_dev, NULL };
	static const struct classfs_attribute_group g_dev = { .attrs = dev_only };
	static const struct classfs_attribute_group *const gs_dev[] = { &g_dev, NULL };
	static const struct classfs_device_attribute *const subsys[] = { &a_subsystem, NULL };
	static const struct classfs_attribute_group g_subsys = { .attrs = subsys };
	static const struct classfs_attribute_group *const gs_subsys[] = { &g_subsys, NULL };
	static const struct classfs_device_attribute *const devlink[] = { &a_device, NULL };
	static const struct classfs_attribute_group g_devlink = { .attrs = devlink };
	static const struct classfs_attribute_group *const gs_devlink[] = { &g_devlink, NULL };
	/* an attribute given twice; in two groups; both x and x/y */
	static const struct classfs_device_attribute *const xx[] = { &a_x, &a_x, NULL };
	static const struct classfs_attribute_group g_xx = { .attrs = xx };
	static const struct classfs_attribute_group *const gs_xx[] = { &g_xx, NULL };
	static const struct classfs_device_attribute *const x1[] = { &a_x, NULL };
	static const struct classfs_attribute_group g_x = { .attrs = x1 };
	static const struct classfs_attribute_group *const gs_x_x[] = { &g_x, &g_x, NULL };
	static const struct classfs_device_attribute *const y1[] = { &a_y, &a_y, NULL };
	static const struct classfs_attribute_group g_named_x = { .name = "x", .attrs = y1 + 1 };
	static const struct classfs_attribute_group *const gs_x_xy[] = { &g_x, &g_named_x, NULL };
	static const struct classfs_attribute_group g_named_yy = { .name = "x", .attrs = y1 };
	static const struct classfs_attribute_group *const gs_yy[] = { &g_named_yy, NULL };
	static const struct classfs_device_attribute *const bad[] = { &a_bad, NULL };
	static const struct classfs_attribute_group g_bad = { .attrs = bad };
	static const struct classfs_attribute_group *const gs_bad[] = { &g_bad, NULL };

	base = classfs_tree_node_count(t);
	CHECK_INT(add_typed(cls, NULL, makedev(8, 1), gs_dev_uevent, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, 0, gs_uev, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, makedev(8, 1), gs_dev, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, 0, gs_subsys, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, 0, gs_xx, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, 0, gs_x_x, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, 0, gs_x_xy, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, 0, gs_yy, "Y"), -EEXIST);
	CHECK_INT(add_typed(cls, NULL, 0, gs_bad, "Y"), -EINVAL);
	CHECK_INT((int)classfs_tree_node_count(t), (int)base);	/* nothing changed */
	CHECK_INT(exists(t, "class/v/Y"), false);

	/* where the tree makes no such entry, the name is the device's own */
	CHECK_INT(add_typed(cls, NULL, 0, gs_dev, "nodev"), 0);
	CHECK_STR(rd(t, "class/v/nodev/dev"), "dev\n");
	CHECK_INT(add_typed(cls, NULL, 0, gs_devlink, "nophys"), 0);
	CHECK_STR(rd(t, "class/v/nophys/device"), "device\n");

	/* a PCI device's `device` attribute is its own; its class devices' links go beside */
	CHECK_INT(classfs_bus_register(t, &bus), 0);
	classfs_device_initialize(&pdev);
	pdev.bus = &bus;
	{
		static const struct classfs_device_attribute *const pa[] = { &a_device, &a_block,
									  &a_backlink, NULL };
		static const struct classfs_attribute_group pg = { .attrs = pa };
		static const struct classfs_attribute_group *const pgs[] = { &pg, NULL };
		static const struct classfs_device_type ptype = { .groups = pgs };

		pdev.type = &ptype;
		CHECK_INT(classfs_device_set_name(&pdev, "0000:00:1f.2"), 0);
		CHECK_INT(classfs_device_add(&pdev), 0);
		CHECK_STR(rd(t, "devices/0000:00:1f.2/device"), "device\n");
		/* a class device below it takes `device` (a link) as usual */
		CHECK_INT(add_typed(cls, &pdev, 0, NULL, "sdy"), 0);
		CHECK_INT(ftype(t, "class/v/sdy/device"), CLASSFS_FT_LNK);
		/* its glue directory (devices) or link (class) would take an attribute's name */
		{
			struct classfs_class *blk = classfs_class_create(t, "block");

			base = classfs_tree_node_count(t);
			CHECK_INT(add_typed(blk, &pdev, 0, NULL, "sdz"), -EEXIST);
			CHECK_INT((int)classfs_tree_node_count(t), (int)base);
			classfs_class_destroy(blk);
		}
		CHECK_INT(add_typed(cls, &pdev, 0, gs_devlink, "sdx"), -EEXIST);
	}
	classfs_device_unregister(&pdev);
	classfs_class_destroy(cls);
	classfs_bus_unregister(&bus);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(duplicate_and_reserved_names_refused_layout_class)
{
	refused(CLASSFS_LAYOUT_CLASS);
}

TEST(duplicate_and_reserved_names_refused_layout_devices)
{
	refused(CLASSFS_LAYOUT_DEVICES);
}

/* ---- devices/virtual: the roots of virtual buses ---- */

static void virtual_roots(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_bus wq = { .name = "workqueue" };
	struct classfs_device root = { 0 }, wb = { 0 }, named = { 0 }, cd = { 0 };
	struct classfs_class *cls, *vcls;
	struct classfs_device *found, *vdev;
	size_t base = classfs_tree_node_count(t);
	char path[128];

	/* no physical device may be named after devices/virtual */
	classfs_device_initialize(&named);
	CHECK_INT(classfs_device_set_name(&named, "virtual"), 0);
	CHECK_INT(classfs_device_add_to(t, &named), -EEXIST);
	CHECK_INT((int)classfs_tree_node_count(t), (int)base);
	classfs_device_put(&named);

	classfs_device_initialize(&root);
	CHECK_INT(classfs_device_set_name(&root, "workqueue"), 0);
	root.bus = &wq;
	CHECK_INT(classfs_device_add_virtual(t, &root), -EINVAL);	/* no bus: Linux's has none */
	root.bus = NULL;
	CHECK_INT(classfs_device_add_virtual(t, &root), 0);
	CHECK_INT(classfs_bus_register(t, &wq), 0);
	classfs_device_initialize(&wb);
	CHECK_INT(classfs_device_set_name(&wb, "writeback"), 0);
	wb.bus = &wq;
	wb.parent = &root;
	CHECK_INT(classfs_device_add(&wb), 0);

	CHECK_INT(classfs_device_syspath(&root, path, sizeof(path)),
		  (int)strlen("/devices/virtual/workqueue"));
	CHECK_STR(path, "/devices/virtual/workqueue");
	CHECK_INT(classfs_device_syspath(&wb, path, sizeof(path)),
		  (int)strlen("/devices/virtual/workqueue/writeback"));
	CHECK_STR(path, "/devices/virtual/workqueue/writeback");
	CHECK_INT(ftype(t, "devices/virtual/workqueue/writeback/uevent"), CLASSFS_FT_REG);
	CHECK_STR(res(t, "bus/workqueue/devices/writeback"), "devices/virtual/workqueue/writeback");
	found = classfs_tree_find_device(t, "/devices/virtual/workqueue/writeback");
	CHECK(found == &wb);
	classfs_device_put(found);
	found = classfs_tree_find_device(t, "/devices/virtual/workqueue");
	CHECK(found == &root);
	classfs_device_put(found);

	/* a class device in devices/virtual/workqueue, the root's directory: refused */
	cls = classfs_class_create(t, "workqueue");
	base = classfs_tree_node_count(t);
	errno = 0;
	vdev = classfs_device_create(cls, NULL, 0, NULL, NULL, "writeback");
	CHECK(!vdev && errno == EEXIST);
	vdev = classfs_device_create(cls, NULL, 0, NULL, NULL, "other");
	CHECK(!vdev && errno == EEXIST);
	CHECK_INT((int)classfs_tree_node_count(t), (int)base);
	/* with a physical device it goes elsewhere */
	vdev = classfs_device_create(cls, NULL, 0, &wb, NULL, "other");
	CHECK(vdev != NULL);
	classfs_device_unregister(vdev);
	/* the other way round: a root named like a class with such a device */
	vcls = classfs_class_create(t, "wq2");
	vdev = classfs_device_create(vcls, NULL, 0, NULL, NULL, "w");
	CHECK(vdev != NULL);
	classfs_device_initialize(&cd);
	CHECK_INT(classfs_device_set_name(&cd, "wq2"), 0);
	base = classfs_tree_node_count(t);
	CHECK_INT(classfs_device_add_virtual(t, &cd), -EEXIST);
	CHECK_INT((int)classfs_tree_node_count(t), (int)base);
	classfs_device_unregister(vdev);
	CHECK_INT(classfs_device_add_virtual(t, &cd), 0);
	classfs_device_unregister(&cd);
	classfs_class_destroy(vcls);
	classfs_class_destroy(cls);

	classfs_device_unregister(&wb);
	classfs_device_unregister(&root);
	/* the class layout has devices/virtual only while it holds devices */
	CHECK_INT(ftype(t, "devices/virtual"),
		  layout == CLASSFS_LAYOUT_CLASS ? -ENOENT : CLASSFS_FT_DIR);
	classfs_bus_unregister(&wq);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(virtual_bus_roots_layout_class)
{
	virtual_roots(CLASSFS_LAYOUT_CLASS);
}

TEST(virtual_bus_roots_layout_devices)
{
	virtual_roots(CLASSFS_LAYOUT_DEVICES);
}

/* a rename may not make a device take its siblings' glue directory either */
static void rename_into_glue(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_device ctrl = { 0 }, x = { 0 }, *sda;

	classfs_device_initialize(&ctrl);
	CHECK_INT(classfs_device_set_name(&ctrl, "ctrl"), 0);
	CHECK_INT(classfs_device_add_to(t, &ctrl), 0);
	classfs_device_initialize(&x);
	CHECK_INT(classfs_device_set_name(&x, "x"), 0);
	x.parent = &ctrl;
	CHECK_INT(classfs_device_add(&x), 0);
	sda = classfs_device_create(blk, NULL, makedev(8, 0), &ctrl, NULL, "sda");
	CHECK(sda != NULL);
	CHECK_INT(classfs_device_rename(&x, "block"), -EEXIST);
	CHECK_STR(classfs_device_name(&x), "x");
	CHECK_INT(classfs_device_rename(&x, "y"), 0);
	classfs_device_unregister(sda);
	classfs_device_unregister(&x);
	classfs_device_unregister(&ctrl);
	classfs_class_destroy(blk);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(rename_into_glue_refused_layout_class)
{
	rename_into_glue(CLASSFS_LAYOUT_CLASS);
}

TEST(rename_into_glue_refused_layout_devices)
{
	rename_into_glue(CLASSFS_LAYOUT_DEVICES);
}

/* a bus device's name is its link in bus/BUS/devices: a rename keeps it unique and current */
TEST(bus_device_rename)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_bus pci = { .name = "pci" };
	struct classfs_device a = { 0 }, b = { 0 }, top = { 0 };

	CHECK_INT(classfs_bus_register(t, &pci), 0);
	classfs_device_initialize(&top);
	CHECK_INT(classfs_device_set_name(&top, "pci0000:00"), 0);
	CHECK_INT(classfs_device_add_to(t, &top), 0);
	classfs_device_initialize(&a);
	CHECK_INT(classfs_device_set_name(&a, "a"), 0);
	a.bus = &pci;
	a.parent = &top;
	CHECK_INT(classfs_device_add(&a), 0);
	classfs_device_initialize(&b);
	CHECK_INT(classfs_device_set_name(&b, "b"), 0);
	b.bus = &pci;
	CHECK_INT(classfs_device_add_to(t, &b), 0);
	CHECK_INT(classfs_device_rename(&a, "b"), -EEXIST);	/* b is on the bus elsewhere */
	CHECK_INT(classfs_device_rename(&a, "c"), 0);
	CHECK_STR(res(t, "bus/pci/devices/c"), "devices/pci0000:00/c");
	CHECK_INT(exists(t, "bus/pci/devices/a"), false);
	/* a physical device without parent takes no devices/virtual's name */
	CHECK_INT(classfs_device_rename(&top, "virtual"), -EEXIST);
	classfs_device_unregister(&a);
	classfs_device_unregister(&b);
	classfs_device_unregister(&top);
	CHECK_INT(classfs_bus_unregister(&pci), 0);
	CHECK_INT(classfs_tree_free(t), 0);
}

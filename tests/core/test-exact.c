// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-exact.c - classfs_device_add_at(): a device at exactly the
 * directory named, as umockdev's add_device() places one.  The
 * directories on the way are plain (no `uevent`, no `subsystem`) and go
 * with the last device below them; a class device goes where it is put
 * (no glue directory, /devices/NAME, /devices/virtual/NAME); a device
 * added at a plain directory fills it in: what it holds stays, the
 * devices there take it as parent, only its own ADD is sent, and its
 * removal takes them first; classfs_device_del_keep() gives the plain
 * directory back.  Refusals change nothing.
 */
#include <limits.h>
#include <stdbool.h>
#include <sys/sysmacros.h>

#include "../harness.h"
#include "../native-util.h"
#include "classfs/classfs.h"
#include "classfs-internal/testing.h"

static void dev_free(struct classfs_device *dev)
{
	free(dev);
}

/* a new device (one reference), not added */
static struct classfs_device *mk(const char *name, struct classfs_class *cls,
				 struct classfs_bus *bus, struct classfs_device *parent,
				 struct classfs_device *phys)
{
	struct classfs_device *d = calloc(1, sizeof(*d));

	classfs_device_initialize(d);
	d->release = dev_free;
	d->cls = cls;
	d->bus = bus;
	d->parent = parent;
	d->phys = phys;
	CHECK_INT(classfs_device_set_name(d, "%s", name), 0);
	return d;
}

/* add @d at @dir; on failure drop it and return NULL */
static struct classfs_device *at(struct classfs_tree *t, struct classfs_device *d,
				 const char *dir, int want)
{
	int r = classfs_device_add_at(t, d, dir);

	CHECK_INT(r, want);
	if (r < 0) {
		classfs_device_put(d);
		return NULL;
	}
	return d;
}

static void check_syspath(struct classfs_device *d, const char *want)
{
	char buf[PATH_MAX];

	CHECK(d && classfs_device_syspath(d, buf, sizeof(buf)) > 0);
	if (d)
		CHECK_STR(buf, want);
}

TEST(devices_go_exactly_where_they_are_put)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_bus pci = { .name = "pci" };
	struct classfs_class *drm = classfs_class_create(t, "drm");
	struct classfs_class *psu = classfs_class_create(t, "power_supply");
	struct classfs_class *dmi = classfs_class_create(t, "dmi");
	struct classfs_device *gpu, *card0, *bat0, *id, *found;

	REQUIRE(t && drm && psu && dmi);
	CHECK_INT(classfs_bus_register(t, &pci), 0);
	/* a PCI device below a directory no device was added for */
	gpu = at(t, mk("0000:00:02.0", NULL, &pci, NULL, NULL), "/devices/pci0000:00", 0);
	REQUIRE(gpu);
	check_syspath(gpu, "/devices/pci0000:00/0000:00:02.0");
	CHECK(exists(t, "devices/pci0000:00/0000:00:02.0/uevent"));
	CHECK(exists(t, "devices/pci0000:00"));
	CHECK(!exists(t, "devices/pci0000:00/uevent"));
	CHECK(!exists(t, "devices/pci0000:00/subsystem"));
	/* dri/card0 (class drm) below it: no glue directory drm */
	card0 = at(t, mk("card0", drm, NULL, NULL, gpu), "/devices/pci0000:00/0000:00:02.0/dri", 0);
	check_syspath(card0, "/devices/pci0000:00/0000:00:02.0/dri/card0");
	CHECK(!exists(t, "devices/pci0000:00/0000:00:02.0/drm"));
	CHECK(!exists(t, "devices/pci0000:00/0000:00:02.0/dri/uevent"));
	CHECK_STR(lnk(t, "devices/pci0000:00/0000:00:02.0/dri/card0/device"),
		  "../../../0000:00:02.0");
	CHECK_STR(lnk(t, "class/drm/card0"), "../../devices/pci0000:00/0000:00:02.0/dri/card0");
	found = classfs_tree_find_device(t, "/devices/pci0000:00/0000:00:02.0/dri/card0");
	CHECK(found == card0);
	classfs_device_put(found);
	/* a class device right below /devices, and one at /devices/virtual/NAME */
	bat0 = at(t, mk("BAT0", psu, NULL, NULL, NULL), "/devices", 0);
	check_syspath(bat0, "/devices/BAT0");
	CHECK(exists(t, "devices/BAT0/uevent") && exists(t, "devices/BAT0/subsystem"));
	id = at(t, mk("dmi", dmi, NULL, NULL, NULL), "/devices/virtual", 0);
	check_syspath(id, "/devices/virtual/dmi");
	CHECK(exists(t, "class/dmi/dmi/uevent"));

	classfs_device_unregister(card0);
	/* its plain directory went with it */
	CHECK(!exists(t, "devices/pci0000:00/0000:00:02.0/dri"));
	classfs_device_unregister(bat0);
	classfs_device_unregister(id);
	classfs_device_unregister(gpu);
	CHECK(!exists(t, "devices/pci0000:00"));
	CHECK(exists(t, "devices/virtual"));
	classfs_class_destroy(drm);
	classfs_class_destroy(psu);
	classfs_class_destroy(dmi);
	classfs_bus_unregister(&pci);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(refusals_change_nothing)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_tree *c = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *drm = classfs_class_create(t, "drm");
	struct classfs_device *gpu, *card;
	size_t base;

	REQUIRE(t && c && drm);
	gpu = at(t, mk("gpu", NULL, NULL, NULL, NULL), "/devices/a", 0);
	REQUIRE(gpu);
	CHECK_INT(classfs_device_add_value(gpu, "vendor", 0644, "0x8086\n", 7, 0), 0);
	base = classfs_tree_node_count(t);
	/* the nearest device on the way is not its parent (here: its physical device) */
	at(t, mk("card0", drm, NULL, NULL, NULL), "/devices/a/gpu/dri", -EINVAL);
	at(t, mk("x", NULL, NULL, gpu, NULL), "/devices/b/c", -EINVAL);
	at(t, mk("x", NULL, NULL, NULL, NULL), "/devices/a/gpu/more", -EINVAL);
	/* not below /devices, not a path, a file on the way, a computed name on the way */
	at(t, mk("x", NULL, NULL, NULL, NULL), "/class", -EINVAL);
	at(t, mk("x", NULL, NULL, NULL, NULL), "devices/a", -EINVAL);
	at(t, mk("x", NULL, NULL, NULL, NULL), "/devices/a/../b", -EINVAL);
	at(t, mk("x", NULL, NULL, gpu, NULL), "/devices/a/gpu/vendor", -ENOTDIR);
	at(t, mk("x", NULL, NULL, gpu, NULL), "/devices/a/gpu/uevent", -EEXIST);
	/* a device already there, a name the parent computes, devices/virtual itself */
	at(t, mk("gpu", NULL, NULL, NULL, NULL), "/devices/a", -EEXIST);
	at(t, mk("uevent", NULL, NULL, gpu, NULL), "/devices/a/gpu", -EEXIST);
	at(t, mk("vendor", NULL, NULL, gpu, NULL), "/devices/a/gpu", -EEXIST);
	at(t, mk("virtual", NULL, NULL, NULL, NULL), "/devices", -EEXIST);
	CHECK_INT(classfs_tree_node_count(t), base);
	/* the class layout places devices by its own rules */
	base = classfs_tree_node_count(c);
	at(c, mk("x", NULL, NULL, NULL, NULL), "/devices/a", -EINVAL);
	CHECK_INT(classfs_tree_node_count(c), base);
	/* a device of another tree's class */
	card = mk("card0", drm, NULL, NULL, NULL);
	CHECK_INT(classfs_device_add_at(c, card, "/devices"), -EINVAL);
	classfs_device_put(card);

	classfs_device_unregister(gpu);
	classfs_class_destroy(drm);
	CHECK_INT(classfs_tree_free(t), 0);
	CHECK_INT(classfs_tree_free(c), 0);
}

TEST(a_parent_added_after_its_child_fills_the_plain_directory)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_bus pci = { .name = "pci" }, usb = { .name = "usb" };
	struct classfs_class *bt = classfs_class_create(t, "bluetooth");
	struct recorder log;
	struct classfs_device *hc, *hci, *ctrl, *root;
	size_t base, nodes;

	REQUIRE(t && bt);
	CHECK_INT(classfs_bus_register(t, &pci), 0);
	CHECK_INT(classfs_bus_register(t, &usb), 0);
	base = classfs_tree_node_count(t);
	/* the child first: usb1 and hci0 (class bluetooth) below plain directories */
	hc = at(t, mk("usb1", NULL, &usb, NULL, NULL), "/devices/pci0000:20/0000:20:08.1", 0);
	hci = at(t, mk("hci0", bt, NULL, NULL, NULL), "/devices/pci0000:20/0000:20:08.1/bt", 0);
	REQUIRE(hc && hci);
	CHECK_INT(classfs_device_add_value(hc, "speed", 0444, "480\n", 4, 0), 0);
	CHECK(!hc->parent && !hci->phys);
	rec_start(&log, t);
	nodes = classfs_tree_node_count(t);

	/* the parent: made at the plain directory, which it replaces */
	ctrl = at(t, mk("0000:20:08.1", NULL, &pci, NULL, NULL), "/devices/pci0000:20", 0);
	REQUIRE(ctrl);
	CHECK_INT(log.n, 1);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_ADD, "/devices/pci0000:20/0000:20:08.1"), 0);
	CHECK(exists(t, "devices/pci0000:20/0000:20:08.1/uevent"));
	CHECK(exists(t, "devices/pci0000:20/0000:20:08.1/subsystem"));
	CHECK(!exists(t, "devices/pci0000:20/uevent"));
	/* the children stay where they were, readable, and have it as parent */
	CHECK(hc->parent == ctrl);
	CHECK(hci->phys == ctrl && !hci->parent);
	check_syspath(hc, "/devices/pci0000:20/0000:20:08.1/usb1");
	check_syspath(hci, "/devices/pci0000:20/0000:20:08.1/bt/hci0");
	CHECK_STR(rd(t, "devices/pci0000:20/0000:20:08.1/usb1/speed"), "480\n");
	CHECK_STR(lnk(t, "devices/pci0000:20/0000:20:08.1/bt/hci0/device"), "../../../0000:20:08.1");
	CHECK(!exists(t, "devices/pci0000:20/0000:20:08.1/bt/uevent"));
	/* the device and its bus/pci/devices link in, the plain directory out */
	CHECK_INT(classfs_tree_node_count(t), nodes + 1);
	/* a path that is a device already */
	at(t, mk("0000:20:08.1", NULL, NULL, NULL, NULL), "/devices/pci0000:20", -EEXIST);

	/* and its own parent after it: the grandparent of usb1 */
	root = at(t, mk("pci0000:20", NULL, NULL, NULL, NULL), "/devices", 0);
	CHECK(root && ctrl->parent == root && hc->parent == ctrl);
	CHECK_INT(log.n, 2);

	/* a child removed on its own: its plain directory goes with it */
	CHECK_INT(classfs_device_unregister(hci), 0);
	CHECK(!exists(t, "devices/pci0000:20/0000:20:08.1/bt"));
	/* removing the parent removes the devices below it first */
	rec_clear(&log);
	CHECK_INT(classfs_device_unregister(ctrl), 0);
	CHECK_INT(log.n, 2);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_REMOVE, "/devices/pci0000:20/0000:20:08.1/usb1"), 0);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_REMOVE, "/devices/pci0000:20/0000:20:08.1"), 1);
	CHECK(!exists(t, "devices/pci0000:20/0000:20:08.1"));
	CHECK(exists(t, "devices/pci0000:20/uevent"));
	CHECK_INT(classfs_device_unregister(root), 0);
	CHECK_INT(classfs_tree_node_count(t), base);
	rec_stop(&log);
	classfs_class_destroy(bt);
	classfs_bus_unregister(&pci);
	classfs_bus_unregister(&usb);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(filling_in_nests_class_devices_and_keeps_plain_files)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_class *misc = classfs_class_create(t, "misc");
	struct classfs_device *sda1, *sda, *host, *side, *extra;

	REQUIRE(t && blk && misc);
	/* a partition before its disk: nested in it once the disk comes */
	sda1 = at(t, mk("sda1", blk, NULL, NULL, NULL), "/devices/virtual/block/sda", 0);
	REQUIRE(sda1);
	CHECK(exists(t, "block/sda1"));
	sda = at(t, mk("sda", blk, NULL, NULL, NULL), "/devices/virtual/block", 0);
	REQUIRE(sda);
	CHECK(sda1->parent == sda && !sda1->phys);
	CHECK(!exists(t, "block/sda1") && exists(t, "block/sda"));
	check_syspath(sda1, "/devices/virtual/block/sda/sda1");

	/* a value's directory, holding a file, filled in by a device */
	host = at(t, mk("host", NULL, NULL, NULL, NULL), "/devices", 0);
	REQUIRE(host);
	CHECK_INT(classfs_device_add_value(host, "extra/info", 0444, "x\n", 2, 0), 0);
	CHECK_INT(classfs_device_add_value(host, "bad/uevent", 0444, "y\n", 2, 0), 0);
	extra = at(t, mk("extra", misc, NULL, NULL, host), "/devices/host", 0);
	CHECK(extra != NULL);
	CHECK_STR(rd(t, "devices/host/extra/info"), "x\n");
	CHECK(exists(t, "devices/host/extra/uevent"));
	/* one holding an entry named like the device's own `uevent`: refused */
	side = at(t, mk("bad", misc, NULL, NULL, host), "/devices/host", -EEXIST);
	CHECK(!side);
	CHECK(exists(t, "devices/host/bad/uevent"));
	CHECK_STR(rd(t, "devices/host/bad/uevent"), "y\n");

	classfs_device_unregister(host);
	CHECK(!exists(t, "devices/host"));
	classfs_device_unregister(sda);
	CHECK(!exists(t, "devices/virtual/block"));
	classfs_class_destroy(blk);
	classfs_class_destroy(misc);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(plain_directories_go_with_their_last_device)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_device *a, *b, *v;
	size_t base = classfs_tree_node_count(t);

	REQUIRE(t);
	a = at(t, mk("a", NULL, NULL, NULL, NULL), "/devices/x/y", 0);
	b = at(t, mk("b", NULL, NULL, NULL, NULL), "/devices/x", 0);
	REQUIRE(a && b);
	/* only devices/virtual itself is no device's: a "virtual" elsewhere is one */
	v = at(t, mk("virtual", NULL, NULL, NULL, NULL), "/devices/x", 0);
	CHECK(v && classfs_device_unregister(v) == 0);
	CHECK_INT(classfs_device_unregister(a), 0);
	CHECK(!exists(t, "devices/x/y") && exists(t, "devices/x"));
	CHECK_INT(classfs_device_unregister(b), 0);
	CHECK(!exists(t, "devices/x"));
	CHECK_INT(classfs_tree_node_count(t), base);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(del_keep_gives_the_plain_directory_back)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_device *root, *sda1, *usb, *disk;
	struct recorder log;
	size_t base, nodes;

	REQUIRE(t && blk);
	base = classfs_tree_node_count(t);
	root = at(t, mk("pci", NULL, NULL, NULL, NULL), "/devices", 0);
	sda1 = at(t, mk("sda1", blk, NULL, NULL, root), "/devices/pci/host/sda", 0);
	usb = at(t, mk("usb1", NULL, NULL, root, NULL), "/devices/pci/host/sda/x", 0);
	REQUIRE(root && sda1 && usb);
	CHECK_INT(classfs_device_add_value(usb, "speed", 0444, "12\n", 3, 0), 0);
	nodes = classfs_tree_node_count(t);
	disk = at(t, mk("sda", blk, NULL, NULL, root), "/devices/pci/host", 0);
	REQUIRE(disk);
	CHECK(sda1->parent == disk && !sda1->phys && usb->parent == disk);
	CHECK(!exists(t, "block/sda1"));

	rec_start(&log, t);
	CHECK_INT(classfs_device_del_keep(disk), 0);
	classfs_device_put(disk);
	/* only its REMOVE; the plain directory is back, the devices below attached as before */
	CHECK_INT(log.n, 1);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_REMOVE, "/devices/pci/host/sda"), 0);
	CHECK_INT(ftype(t, "devices/pci/host/sda"), CLASSFS_FT_DIR);
	CHECK(!exists(t, "devices/pci/host/sda/uevent"));
	CHECK(!exists(t, "class/block/sda"));
	CHECK(sda1->phys == root && !sda1->parent && usb->parent == root);
	CHECK(exists(t, "block/sda1"));
	CHECK_STR(lnk(t, "devices/pci/host/sda/sda1/device"), "../../../../pci");
	CHECK_STR(rd(t, "devices/pci/host/sda/x/usb1/speed"), "12\n");
	CHECK_INT(classfs_tree_node_count(t), nodes);
	/* and it goes with the last device below it */
	CHECK_INT(classfs_device_unregister(sda1), 0);
	CHECK_INT(classfs_device_unregister(usb), 0);
	CHECK(!exists(t, "devices/pci/host"));
	CHECK_INT(classfs_device_unregister(root), 0);
	rec_stop(&log);
	CHECK_INT(classfs_tree_node_count(t), base);
	classfs_class_destroy(blk);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- random adds, fill-ins and removals: the model stays the tree's ---- */

#define RMAX 96

struct rnd_dev {
	char path[64];
	struct classfs_device *dev;	/* a reference of ours */
};

static unsigned int rseed = 7;

static unsigned int rnd(unsigned int n)
{
	rseed = rseed * 1103515245u + 12345u;
	return (rseed >> 16) % n;
}

/* the nearest device strictly above @path, by the tree's lookups */
static struct classfs_device *nearest(struct classfs_tree *t, const char *path)
{
	char buf[64];
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	while ((slash = strrchr(buf, '/')) && slash > buf + strlen("/devices")) {
		struct classfs_device *d;

		*slash = '\0';
		d = classfs_tree_find_device(t, buf);
		if (d) {
			classfs_device_put(d);
			return d;
		}
	}
	return NULL;
}

/* every device is at its path, attached to the nearest device above it */
static void check_model(struct classfs_tree *t, struct rnd_dev *v, int n)
{
	for (int i = 0; i < n; i++) {
		struct classfs_device *d = v[i].dev, *up;

		if (!classfs_device_is_added(d))
			continue;
		check_syspath(d, v[i].path);
		up = nearest(t, v[i].path);
		if (!d->cls)
			CHECK(d->parent == up);
		else if (up && up->cls == d->cls)
			CHECK(d->parent == up && !d->phys);
		else
			CHECK(!d->parent && d->phys == up);
	}
}

TEST(random_places_keep_the_model)
{
	static const char *const comps[] = { "a", "b", "c" };

	for (int round = 0; round < 40; round++) {
		struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
		struct classfs_class *k[2] = { classfs_class_create(t, "k1"),
					       classfs_class_create(t, "k2") };
		struct rnd_dev v[RMAX];
		size_t base = classfs_tree_node_count(t);
		int n = 0;

		REQUIRE(t && k[0] && k[1]);
		for (int op = 0; op < 120; op++) {
			unsigned int what = rnd(6);

			if (what < 4 && n < RMAX) {
				/* add at a random path: attached to the nearest device above */
				char path[64], dir[64];
				unsigned int depth = 1 + rnd(4), kind = rnd(3);
				struct classfs_device *up, *d;
				size_t len = 0;

				len += (size_t)snprintf(path, sizeof(path), "/devices");
				for (unsigned int i = 0; i < depth; i++)
					len += (size_t)snprintf(path + len, sizeof(path) - len, "/%s",
								comps[rnd(3)]);
				snprintf(dir, sizeof(dir), "%s", path);
				*strrchr(dir, '/') = '\0';
				up = nearest(t, path);
				if (kind == 0)
					d = mk(strrchr(path, '/') + 1, NULL, NULL, up, NULL);
				else if (up && up->cls == k[kind - 1])
					d = mk(strrchr(path, '/') + 1, k[kind - 1], NULL, up, NULL);
				else
					d = mk(strrchr(path, '/') + 1, k[kind - 1], NULL, NULL, up);
				/* taken (a device there, a name in its class): refused, unchanged */
				if (classfs_device_add_at(t, d, dir) < 0) {
					classfs_device_put(d);
					continue;
				}
				snprintf(v[n].path, sizeof(v[n].path), "%s", path);
				v[n++].dev = classfs_device_get(d);
			} else if (n) {
				struct classfs_device *d = v[rnd((unsigned int)n)].dev;

				if (!classfs_device_is_added(d))
					continue;
				if (what == 4)
					CHECK_INT(classfs_device_unregister(d), 0);
				else if (classfs_device_del_keep(d) == 0)
					classfs_device_put(d);
			}
			check_model(t, v, n);
		}
		for (int i = n; i-- > 0;) {
			if (classfs_device_is_added(v[i].dev))
				classfs_device_unregister(v[i].dev);
			classfs_device_put(v[i].dev);
		}
		CHECK_INT(classfs_tree_node_count(t), base);
		CHECK(!exists(t, "devices/a") && !exists(t, "devices/b") && !exists(t, "devices/c"));
		classfs_class_destroy(k[0]);
		classfs_class_destroy(k[1]);
		CHECK_INT(classfs_tree_free(t), 0);
	}
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-record-place.c - where the loader puts a device in a `devices`
 * layout tree: at exactly its recorded path, as umockdev's add_device()
 * does.  The directories between that no device was recorded for are
 * plain (no `uevent`, no `subsystem`); nothing is glued in (dri/card0
 * stays dri/card0); class devices go at /devices/NAME and
 * /devices/virtual/NAME when recorded there; a parent recorded after its
 * child (in a later load or later in the same record) fills the plain
 * directory in, the child intact below it; a path that is a device
 * already is refused; such trees save and load back to the same record.
 * The class layout keeps placing devices by its own rules.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "../harness.h"
#include "../native-util.h"
#include "classfs/classfs.h"
#include "classfs/record.h"
#include "classfs-internal/testing.h"
#include "record-util.h"

static int warnings;

static void on_warning(const char *file, unsigned long line, const char *msg, void *data)
{
	fprintf(stderr, "  warning: %s:%lu: %s\n", file, line, msg);
	warnings++;
}

static int load(struct classfs_tree *t, const char *text, struct classfs_record_error *err)
{
	struct classfs_record_options opt = { .filename = "<place>", .warning = on_warning };

	return cfs_test_load(t, text, &opt, err);
}

static char *save(struct classfs_tree *t)
{
	char *s = cfs_test_save(t);

	CHECK(s != NULL);
	return s;
}

/* the device at @syspath, its path checked; NULL when none (reference dropped) */
static struct classfs_device *dev_at(struct classfs_tree *t, const char *syspath)
{
	struct classfs_device *d = classfs_tree_find_device(t, syspath);
	char buf[PATH_MAX];

	if (!d) {
		fprintf(stderr, "  no device at %s\n", syspath);
		CHECK(!"device found");
		return NULL;
	}
	CHECK(classfs_device_syspath(d, buf, sizeof(buf)) > 0);
	CHECK_STR(buf, syspath);
	classfs_device_put(d);	/* the tree holds it */
	return d;
}

/* a record saved from @t loads in a new tree of its layout to the same record */
static void check_round_trip(struct classfs_tree *t)
{
	struct classfs_tree *t2 = classfs_tree_new(classfs_tree_layout(t));
	struct classfs_record_error err;
	char *s1 = save(t), *s2;

	CHECK_INT(load(t2, s1, &err), 0);
	s2 = save(t2);
	CHECK_STR(s2, s1);
	free(s1);
	free(s2);
	classfs_record_unload(t2);
	CHECK_INT(classfs_tree_free(t2), 0);
}

static const char gpu[] =
	"P: /devices/pci0000:00/0000:00:02.0\n"
	"E: SUBSYSTEM=pci\n"
	"A: vendor=0x8086\\n\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:02.0/dri/card0\n"
	"E: SUBSYSTEM=drm\n"
	"E: DEVNAME=/dev/dri/card0\n"
	"A: dev=226:0\\n\n"
	"N: dri/card0\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:02.0/b/c\n"
	"E: SUBSYSTEM=drm\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0\n"
	"E: SUBSYSTEM=pci\n"
	"\n"
	"P: /devices/pci0000:00/0000:00:14.0/usb1/bluetooth/hci0/hci0:01\n"
	"E: SUBSYSTEM=bluetooth\n"
	"\n"
	"P: /devices/BAT0\n"
	"E: SUBSYSTEM=power_supply\n"
	"A: capacity=42\\n\n";

/* the class layout refuses it: its class devices without parent go in virtual/CLASS */
static const char dmi[] = "P: /devices/virtual/dmi\nE: SUBSYSTEM=dmi\n";

TEST(devices_load_at_their_recorded_paths)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_record_error err;
	struct classfs_device *pci, *card0, *c, *hci, *bat;

	REQUIRE(t);
	warnings = 0;
	REQUIRE(load(t, gpu, &err) == 0);
	REQUIRE(load(t, dmi, &err) == 0);
	CHECK_INT(warnings, 0);
	pci = dev_at(t, "/devices/pci0000:00/0000:00:02.0");
	/* dri/card0 below the PCI device: no glue directory drm */
	card0 = dev_at(t, "/devices/pci0000:00/0000:00:02.0/dri/card0");
	CHECK(card0 && card0->phys == pci && !card0->parent);
	CHECK(!exists(t, "devices/pci0000:00/0000:00:02.0/drm"));
	CHECK_STR(lnk(t, "devices/pci0000:00/0000:00:02.0/dri/card0/device"),
		  "../../../0000:00:02.0");
	CHECK_STR(lnk(t, "class/drm/card0"), "../../devices/pci0000:00/0000:00:02.0/dri/card0");
	/* a/b/c of class drm whose nearest device is the PCI device */
	c = dev_at(t, "/devices/pci0000:00/0000:00:02.0/b/c");
	CHECK(c && c->phys == pci);
	/* a name with slashes below a parent: usb1/bluetooth/hci0/hci0:01 */
	hci = dev_at(t, "/devices/pci0000:00/0000:00:14.0/usb1/bluetooth/hci0/hci0:01");
	CHECK(hci && hci->phys && !strcmp(classfs_device_name(hci->phys), "0000:00:14.0"));
	/* class devices where umockdev puts them without a parent */
	bat = dev_at(t, "/devices/BAT0");
	CHECK(bat && !bat->phys && !bat->parent);
	CHECK(exists(t, "devices/BAT0/uevent") && exists(t, "devices/BAT0/capacity"));
	CHECK_STR(lnk(t, "class/power_supply/BAT0"), "../../devices/BAT0");
	dev_at(t, "/devices/virtual/dmi");
	CHECK_STR(lnk(t, "class/dmi/dmi"), "../../devices/virtual/dmi");

	/* the directories no device was recorded for: plain, without uevent */
	static const char *const plain[] = {
		"devices/pci0000:00", "devices/pci0000:00/0000:00:02.0/dri",
		"devices/pci0000:00/0000:00:02.0/b", "devices/pci0000:00/0000:00:14.0/usb1",
		"devices/pci0000:00/0000:00:14.0/usb1/bluetooth",
		"devices/pci0000:00/0000:00:14.0/usb1/bluetooth/hci0",
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		char path[PATH_MAX];

		CHECK_INT(ftype(t, "%s", plain[i]), CLASSFS_FT_DIR);
		CHECK(!exists(t, "%s/uevent", plain[i]));
		CHECK(!exists(t, "%s/subsystem", plain[i]));
		snprintf(path, sizeof(path), "/%s", plain[i]);
		CHECK(!classfs_tree_find_device(t, path));
	}
	/* saved as recorded: the devices only, at their paths */
	check_round_trip(t);
	classfs_record_unload(t);
	/* the plain directories went with the last device below them */
	CHECK(!exists(t, "devices/pci0000:00"));
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(the_class_layout_places_them_by_class)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_record_error err;

	REQUIRE(t);
	warnings = 0;
	REQUIRE(load(t, gpu, &err) == 0);
	/*
	 * Translated as before, with warnings: unrecorded ancestors are plain
	 * devices (dri), class devices go in glue directories below them
	 * (dri/drm/card0) or in devices/virtual/CLASS.
	 */
	dev_at(t, "/devices/pci0000:00/0000:00:02.0/dri/drm/card0");
	CHECK(exists(t, "devices/pci0000:00/0000:00:02.0/dri/uevent"));
	dev_at(t, "/devices/virtual/power_supply/BAT0");
	CHECK(exists(t, "class/drm/card0/uevent"));
	CHECK(exists(t, "devices/pci0000:00/uevent"));	/* an unrecorded ancestor: a device */
	CHECK(warnings >= 3);
	CHECK_INT(classfs_record_load(t, dmi, strlen(dmi), NULL, &err), -EINVAL);
	CHECK(strstr(err.reason, "is not in /devices/virtual/CLASS/") != NULL);
	classfs_record_unload(t);
	CHECK_INT(classfs_tree_free(t), 0);
}

static const char child[] =
	"P: /devices/pci0000:20/0000:20:08.1/usb1\n"
	"E: SUBSYSTEM=usb\n"
	"E: DEVTYPE=usb_device\n"
	"A: busnum=1\\n\n"
	"\n"
	"P: /devices/pci0000:20/0000:20:08.1/usb1/1-0:1.0/bluetooth/hci0\n"
	"E: SUBSYSTEM=bluetooth\n";

static const char parent[] =
	"P: /devices/pci0000:20/0000:20:08.1\n"
	"E: SUBSYSTEM=pci\n"
	"E: PCI_SLOT_NAME=0000:20:08.1\n"
	"A: vendor=0x1022\\n\n";

/* the tree after the child and then its parent: the same whichever way it came */
static void check_filled(struct classfs_tree *t)
{
	struct classfs_device *pci, *usb1, *hci;

	pci = dev_at(t, "/devices/pci0000:20/0000:20:08.1");
	usb1 = dev_at(t, "/devices/pci0000:20/0000:20:08.1/usb1");
	hci = dev_at(t, "/devices/pci0000:20/0000:20:08.1/usb1/1-0:1.0/bluetooth/hci0");
	CHECK(pci && usb1 && usb1->parent == pci);
	CHECK(hci && hci->phys == usb1);
	CHECK(exists(t, "devices/pci0000:20/0000:20:08.1/uevent"));
	CHECK(exists(t, "bus/pci/devices/0000:20:08.1"));
	CHECK(!exists(t, "devices/pci0000:20/uevent"));
	CHECK(!exists(t, "devices/pci0000:20/0000:20:08.1/usb1/1-0:1.0/uevent"));
	CHECK_STR(rd(t, "devices/pci0000:20/0000:20:08.1/usb1/busnum"), "1\n");
	CHECK_STR(rd(t, "devices/pci0000:20/0000:20:08.1/vendor"), "0x1022\n");
	CHECK_STR(lnk(t, "devices/pci0000:20/0000:20:08.1/usb1/1-0:1.0/bluetooth/hci0/device"),
		   "../../../../usb1");
}

TEST(a_parent_loaded_after_its_child_fills_the_plain_directory)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_record_error err;
	struct recorder log;
	size_t base, nodes;

	REQUIRE(t);
	base = classfs_tree_node_count(t);
	REQUIRE(load(t, child, &err) == 0);
	CHECK(exists(t, "devices/pci0000:20/0000:20:08.1"));
	CHECK(!exists(t, "devices/pci0000:20/0000:20:08.1/uevent"));
	CHECK(!classfs_tree_find_device(t, "/devices/pci0000:20/0000:20:08.1"));
	rec_start(&log, t);

	/* a later load: the device is made there, its ADD the only event */
	REQUIRE(load(t, parent, &err) == 0);
	CHECK_INT(log.n, 1);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_ADD, "/devices/pci0000:20/0000:20:08.1"), 0);
	check_filled(t);

	/* a path that is a device already: refused, nothing changes */
	nodes = classfs_tree_node_count(t);
	CHECK_INT(classfs_record_load(t, parent, strlen(parent), NULL, &err), -EEXIST);
	CHECK(strstr(err.reason, "device /devices/pci0000:20/0000:20:08.1 is already in the tree"));
	CHECK_INT(classfs_tree_node_count(t), nodes);
	CHECK_INT(log.n, 1);

	check_round_trip(t);

	/* its removal takes the devices below it first, deepest first */
	rec_clear(&log);
	{
		struct classfs_device *pci = dev_at(t, "/devices/pci0000:20/0000:20:08.1");

		CHECK(pci && classfs_device_unregister(pci) == 0);
	}
	CHECK_INT(log.n, 3);
	CHECK_INT(rec_count(&log, CLASSFS_ACTION_REMOVE), 3);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_REMOVE, "/devices/pci0000:20/0000:20:08.1/usb1/"
			   "1-0:1.0/bluetooth/hci0"), 0);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_REMOVE, "/devices/pci0000:20/0000:20:08.1/usb1"), 1);
	CHECK_INT(rec_find(&log, CLASSFS_ACTION_REMOVE, "/devices/pci0000:20/0000:20:08.1"), 2);
	CHECK(!exists(t, "devices/pci0000:20"));
	rec_stop(&log);
	/* and the buses and classes the loads made */
	classfs_record_unload(t);
	CHECK_INT(classfs_tree_node_count(t), base);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(a_parent_later_in_the_same_record_is_its_parent)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_record_error err;
	char *both = malloc(sizeof(child) + sizeof(parent) + 2);

	REQUIRE(t && both);
	snprintf(both, sizeof(child) + sizeof(parent) + 2, "%s\n%s", child, parent);
	REQUIRE(load(t, both, &err) == 0);
	check_filled(t);
	check_round_trip(t);
	free(both);
	classfs_record_unload(t);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(a_fill_in_that_would_take_a_held_name_is_refused)
{
	static const char clash[] = "P: /devices/pci0000:20/0000:20:08.1\n"
				    "E: SUBSYSTEM=pci\n"
				    "L: usb1=../somewhere\n";
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_record_error err;
	size_t nodes;

	REQUIRE(t);
	REQUIRE(load(t, child, &err) == 0);
	nodes = classfs_tree_node_count(t);
	CHECK_INT(classfs_record_load(t, clash, strlen(clash), NULL, &err), -EEXIST);
	CHECK_INT(err.line, 3);
	CHECK(strstr(err.reason, "'usb1' of /devices/pci0000:20/0000:20:08.1") != NULL);
	CHECK_INT(classfs_tree_node_count(t), nodes);
	CHECK(dev_at(t, "/devices/pci0000:20/0000:20:08.1/usb1") != NULL);
	classfs_record_unload(t);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* fail the Nth allocation of the library during a load */
static long alloc_budget = -1;

static bool alloc_hook(size_t size, void *data)
{
	if (alloc_budget < 0)
		return true;
	return alloc_budget-- > 0;
}

/* the tree of child[] as it was: usb1 and hci0 below plain directories */
static void check_child_only(struct classfs_tree *t)
{
	struct classfs_device *usb1 = dev_at(t, "/devices/pci0000:20/0000:20:08.1/usb1");
	struct classfs_device *hci = dev_at(t, "/devices/pci0000:20/0000:20:08.1/usb1/1-0:1.0/"
					    "bluetooth/hci0");

	CHECK(usb1 && !usb1->parent);
	CHECK(hci && hci->phys == usb1);
	CHECK_INT(ftype(t, "devices/pci0000:20/0000:20:08.1"), CLASSFS_FT_DIR);
	CHECK(!exists(t, "devices/pci0000:20/0000:20:08.1/uevent"));
	CHECK(!exists(t, "devices/pci0000:20/0000:20:08.1/power"));
	CHECK_STR(rd(t, "devices/pci0000:20/0000:20:08.1/usb1/busnum"), "1\n");
}

/*
 * A load that fills in a plain directory and then fails (no memory at any
 * point, or a later device's event over the limits) leaves the tree as it
 * was: the devices that were below the directory stay, attached as before.
 */
TEST(a_failed_fill_in_gives_the_directory_back)
{
	static const char fill[] = "P: /devices/pci0000:20/0000:20:08.1\n"
				   "E: SUBSYSTEM=pci\n"
				   "A: power/control=auto\\n\n"
				   "A: vendor=0x1022\\n\n"
				   "A: a/b/deep=1\\n\n"
				   "H: config=86800000\n"
				   "L: port=usb1\n"
				   "\n"
				   "P: /devices/pci0000:20/0000:20:08.1/0000:21:00.0\n"
				   "E: SUBSYSTEM=pci\n";
	int ok = 0, failed = 0;

	for (long n = 0; n < 5000 && !ok; n++) {
		struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
		struct classfs_record_error err;
		struct recorder log;
		size_t base;
		uint64_t seq;
		int r;

		REQUIRE(t);
		REQUIRE(load(t, child, &err) == 0);
		base = classfs_tree_node_count(t);
		seq = classfs_tree_seqnum(t);
		rec_start(&log, t);
		classfs_set_alloc_hook(alloc_hook, NULL);
		alloc_budget = n;
		r = classfs_record_load(t, fill, sizeof(fill) - 1, NULL, &err);
		alloc_budget = -1;
		classfs_set_alloc_hook(NULL, NULL);
		if (r == 0) {
			ok = 1;
			check_filled(t);
			CHECK_STR(rd(t, "devices/pci0000:20/0000:20:08.1/a/b/deep"), "1\n");
		} else {
			failed++;
			CHECK_INT(r, -ENOMEM);
			CHECK_INT(classfs_tree_node_count(t), base);
			check_child_only(t);
			/* nothing heard, or every ADD taken back by its REMOVE */
			CHECK(log.n % 2 == 0);
			CHECK_INT(rec_count(&log, CLASSFS_ACTION_ADD), log.n / 2);
			if (!log.n)
				CHECK_INT(classfs_tree_seqnum(t), seq);
		}
		rec_stop(&log);
		classfs_record_unload(t);
		CHECK_INT(classfs_tree_free(t), 0);
	}
	CHECK(ok);
	CHECK(failed >= 10);

	/* a later device's ADD over the uevent limits: refused, the directory given back */
	{
		struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
		struct classfs_record_error err;
		size_t size = 8192, len, base;
		char *text = malloc(size);

		REQUIRE(t && text);
		REQUIRE(load(t, child, &err) == 0);
		base = classfs_tree_node_count(t);
		len = (size_t)snprintf(text, size, "%s\nP: /devices/pci0000:20/0000:20:08.1/x\n"
				       "E: SUBSYSTEM=pci\nE: DRIVER=", fill);
		for (int k = 0; k < 250; k++)
			len += (size_t)snprintf(text + len, size - len, "xxxxxxxx");
		len += (size_t)snprintf(text + len, size - len, "\n");
		CHECK_INT(classfs_record_load(t, text, len, NULL, &err), -EINVAL);
		CHECK(strstr(err.reason, "uevent limits") != NULL);
		CHECK_INT(classfs_tree_node_count(t), base);
		check_child_only(t);
		free(text);
		classfs_record_unload(t);
		CHECK_INT(classfs_tree_free(t), 0);
	}
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-value.c - data-driven publishing: stored values (text and binary,
 * in plain subdirectories), publishers' links (literal and computed),
 * quiet adds with uevent suppression, devices-layout paths whatever the
 * layout, and walking every class and device of a tree.
 */
#include <sys/sysmacros.h>

#include "../harness.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "../native-util.h"

static struct classfs_device *mkdev(struct classfs_tree *t, struct classfs_class *cls,
				    struct classfs_device *parent, struct classfs_device *phys,
				    const char *name, dev_t devt)
{
	struct classfs_device *d = nu_newdev(cls, parent, phys, name, devt);

	CHECK(d != NULL);
	CHECK_INT(classfs_device_add_to(t, d), 0);
	return d;
}

TEST(text_values)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "block");
	struct classfs_device *sda = mkdev(t, c, NULL, NULL, "sda", makedev(8, 0));

	CHECK_INT(classfs_device_add_value(sda, "size", 0444, "500118192\n", 10, 0), 0);
	CHECK_STR(rd(t, "class/block/sda/size"), "500118192\n");
	/* kept as given: no newline added */
	CHECK_INT(classfs_device_add_value(sda, "removable", 0644, "0", 1, 0), 0);
	CHECK_STR(rd(t, "class/block/sda/removable"), "0");
	/* subdirectories are made once and shared */
	CHECK_INT(classfs_device_add_value(sda, "queue/rotational", 0444, "1\n", 2, 0), 0);
	CHECK_INT(classfs_device_add_value(sda, "queue/logical_block_size", 0444, "512\n", 4, 0), 0);
	CHECK_INT(classfs_device_add_value(sda, "power/a/b/c", 0444, "x", 1, 0), 0);
	CHECK_STR(rd(t, "class/block/sda/queue/rotational"), "1\n");
	CHECK_INT(ftype(t, "class/block/sda/queue"), CLASSFS_FT_DIR);
	CHECK_INT(nentries(t, "class/block/sda/queue"), 2);
	CHECK_STR(rd(t, "class/block/sda/power/a/b/c"), "x");

	/* taken names, computed ones included; bad paths */
	CHECK_INT(classfs_device_add_value(sda, "size", 0444, "1", 1, 0), -EEXIST);
	CHECK_INT(classfs_device_add_value(sda, "dev", 0444, "1", 1, 0), -EEXIST);
	CHECK_INT(classfs_device_add_value(sda, "uevent", 0444, "1", 1, 0), -EEXIST);
	CHECK_INT(classfs_device_add_value(sda, "size/x", 0444, "1", 1, 0), -EEXIST);
	CHECK_INT(classfs_device_add_value(sda, "subsystem/x", 0444, "1", 1, 0), -EEXIST);
	CHECK_INT(classfs_device_add_value(sda, "../x", 0444, "1", 1, 0), -EINVAL);
	CHECK_INT(classfs_device_add_value(sda, "a//b", 0444, "1", 1, 0), -EINVAL);
	CHECK_INT(classfs_device_add_value(sda, "", 0444, "1", 1, 0), -EINVAL);
	CHECK_INT(classfs_device_add_value(sda, "nl\nx", 0444, "1", 1, 0), -EINVAL);
	CHECK_INT(classfs_device_add_value(sda, "a/b/c/d/e/f/g/h/i", 0444, "1", 1, 0), -EINVAL);
	CHECK_INT(classfs_device_add_value(sda, "x", 0444, "1", 1, 0x80), -EINVAL);
	static char big[CLASSFS_ATTR_MAX + 1];
	CHECK_INT(classfs_device_add_value(sda, "big", 0444, big, sizeof(big), 0), -E2BIG);
	/* a failure made no directory */
	CHECK_INT(classfs_device_add_value(sda, "newdir/size/../x", 0444, "1", 1, 0), -EINVAL);
	CHECK(!exists(t, "class/block/sda/newdir"));
	CHECK_INT(nentries(t, "class/block/sda/queue"), 2);

	/* modes hold for writers; a writable value is replaced by a write */
	CHECK_INT(wr(t, "class/block/sda/size", "1\n"), -EACCES);
	CHECK_INT(wr(t, "class/block/sda/removable", "1\n"), 2);
	CHECK_STR(rd(t, "class/block/sda/removable"), "1\n");
	CHECK_INT(wr(t, "class/block/sda/removable", "0"), 1);
	CHECK_STR(rd(t, "class/block/sda/removable"), "0");
	/* the owner replaces any value, growing it */
	static char grown[3000];
	memset(grown, 'g', sizeof(grown) - 1);
	CHECK_INT(classfs_device_set_value(sda, "size", grown, strlen(grown)), 0);
	CHECK_STR(rd(t, "class/block/sda/size"), grown);
	CHECK_INT(classfs_device_set_value(sda, "queue/rotational", "0\n", 2), 0);
	CHECK_STR(rd(t, "class/block/sda/queue/rotational"), "0\n");
	CHECK_INT(classfs_device_set_value(sda, "nope", "0", 1), -ENOENT);
	CHECK_INT(classfs_device_set_value(sda, "dev", "0", 1), -ENOENT);

	/* removal: values, then empty plain directories only */
	CHECK_INT(classfs_device_remove_entry(sda, "queue"), -ENOTEMPTY);
	CHECK_INT(classfs_device_remove_entry(sda, "queue/rotational"), 0);
	CHECK_INT(classfs_device_remove_entry(sda, "queue/logical_block_size"), 0);
	CHECK_INT(classfs_device_remove_entry(sda, "queue"), 0);
	CHECK(!exists(t, "class/block/sda/queue"));
	CHECK_INT(classfs_device_remove_entry(sda, "dev"), -ENOENT);
	CHECK_INT(classfs_device_remove_entry(sda, "uevent"), -ENOENT);
	CHECK_INT(classfs_device_remove_entry(sda, "queue"), -ENOENT);

	/* gone with the device: the tree is empty again */
	classfs_device_unregister(sda);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(binary_values)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_device *usb = mkdev(t, NULL, NULL, NULL, "usb1", 0);
	const char desc[] = { 0x12, 0x01, 0x00, 0x02, 0x09, 0x00 };
	struct classfs_stat st;
	char buf[64];

	CHECK_INT(classfs_device_add_value(usb, "descriptors", 0644, desc, sizeof(desc),
					   CLASSFS_VALUE_BINARY), 0);
	CHECK_INT(classfs_path_stat(t, "devices/usb1/descriptors", &st), 0);
	CHECK_INT(st.size, sizeof(desc));
	CHECK_INT(classfs_read(t, st.ino, buf, sizeof(buf), 0), sizeof(desc));
	CHECK(!memcmp(buf, desc, sizeof(desc)));
	CHECK_INT(classfs_read(t, st.ino, buf, sizeof(buf), 4), 2);
	CHECK_INT(buf[0], 0x09);
	/* a write at an offset changes those bytes; past the end is -EFBIG as in sysfs */
	CHECK_INT(classfs_write(t, st.ino, "\xAA\xBB", 2, 4), 2);
	CHECK_INT(classfs_write(t, st.ino, "\xAA\xBB", 2, 8), -EFBIG);
	CHECK_INT(classfs_read(t, st.ino, buf, sizeof(buf), 0), 6);
	CHECK_INT((unsigned char)buf[4], 0xAA);
	CHECK_INT((unsigned char)buf[5], 0xBB);
	CHECK_INT(buf[3], 0x02);
	/* the owner may change its size */
	static char more[100000];
	more[99999] = 7;
	CHECK_INT(classfs_device_set_value(usb, "descriptors", more, sizeof(more)), 0);
	CHECK_INT(classfs_path_stat(t, "devices/usb1/descriptors", &st), 0);
	CHECK_INT(st.size, sizeof(more));
	CHECK_INT(classfs_read(t, st.ino, buf, sizeof(buf), 99999), 1);
	CHECK_INT(buf[0], 7);
	CHECK_INT(classfs_device_set_value(usb, "descriptors", "z", 1), 0);
	CHECK_INT(classfs_path_stat(t, "devices/usb1/descriptors", &st), 0);
	CHECK_INT(st.size, 1);
	classfs_device_unregister(usb);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(links)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "input");
	struct classfs_device *pci = mkdev(t, NULL, NULL, NULL, "pci0000:00", 0);
	struct classfs_device *hc = mkdev(t, NULL, pci, NULL, "0000:00:14.0", 0);
	struct classfs_device *in = mkdev(t, c, NULL, hc, "input5", 0);

	CHECK_INT(classfs_device_add_link(hc, "driver", "../../../bus/pci/drivers/xhci_hcd"), 0);
	CHECK_STR(lnk(t, "devices/pci0000:00/0000:00:14.0/driver"),
		  "../../../bus/pci/drivers/xhci_hcd");
	CHECK_INT(ftype(t, "devices/pci0000:00/0000:00:14.0/driver"), CLASSFS_FT_LNK);
	CHECK_INT(classfs_device_add_link(hc, "driver", "x"), -EEXIST);
	CHECK_INT(classfs_device_add_link(hc, "empty", ""), -EINVAL);
	CHECK_INT(classfs_device_add_link(hc, "sub/link", "y"), 0);
	CHECK_STR(lnk(t, "devices/pci0000:00/0000:00:14.0/sub/link"), "y");

	/* computed: follows the layout and renames */
	CHECK_INT(classfs_device_add_link_to(pci, "firstinput", in), 0);
	CHECK_STR(lnk(t, "devices/pci0000:00/firstinput"), "../../class/input/input5");
	CHECK_INT(classfs_device_rename(in, "input6"), 0);
	CHECK_STR(lnk(t, "devices/pci0000:00/firstinput"), "../../class/input/input6");
	/* a publisher's link to a physical child is not a dependent of it */
	CHECK_INT(classfs_device_add_link_to(hc, "self", in), 0);
	CHECK_INT(classfs_device_remove_entry(hc, "self"), 0);
	/* target gone: the link stays, reading it fails, the target's memory is held */
	classfs_device_unregister(in);
	CHECK_STR(lnk(t, "devices/pci0000:00/firstinput"), "ERR:-2");
	CHECK_INT(classfs_device_remove_entry(pci, "firstinput"), 0);
	CHECK_INT(classfs_device_remove_entry(hc, "sub/link"), 0);
	CHECK_INT(classfs_device_remove_entry(hc, "sub"), 0);
	classfs_device_unregister(hc);
	classfs_device_unregister(pci);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(suppressed_add)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "block");
	struct classfs_device *d = calloc(1, sizeof(*d));
	struct recorder rec;

	rec_start(&rec, t);
	classfs_device_initialize(d);
	d->cls = c;
	d->devt = makedev(8, 16);
	d->release = (void (*)(struct classfs_device *))free;
	classfs_device_set_name(d, "sdb");
	classfs_device_set_uevent_suppress(d, true);
	CHECK_INT(classfs_device_add_to(t, d), 0);
	CHECK_INT(classfs_device_add_value(d, "size", 0444, "8\n", 2, 0), 0);
	CHECK_INT(classfs_device_uevent(d, CLASSFS_ACTION_CHANGE, NULL), 0);
	CHECK_INT(rec.n, 0);
	CHECK_INT(classfs_tree_seqnum(t), 0);
	classfs_device_set_uevent_suppress(d, false);
	CHECK_INT(classfs_device_uevent(d, CLASSFS_ACTION_ADD, NULL), 0);
	CHECK_INT(rec.n, 1);
	if (rec.n == 1) {
		CHECK_INT(rec.ev[0].action, CLASSFS_ACTION_ADD);
		CHECK_STR(rec.ev[0].devpath, "/class/block/sdb");
		CHECK_INT(rec.ev[0].seqnum, 1);
	}
	classfs_device_unregister(d);
	CHECK_INT(rec.n, 2);
	if (rec.n == 2)
		CHECK_INT(rec.ev[1].action, CLASSFS_ACTION_REMOVE);

	/* never announced: no REMOVE either */
	rec_clear(&rec);
	d = calloc(1, sizeof(*d));
	classfs_device_initialize(d);
	d->cls = c;
	d->release = (void (*)(struct classfs_device *))free;
	classfs_device_set_name(d, "quiet");
	classfs_device_set_uevent_suppress(d, true);
	CHECK_INT(classfs_device_add_to(t, d), 0);
	classfs_device_set_uevent_suppress(d, false);
	classfs_device_unregister(d);
	CHECK_INT(rec.n, 0);
	rec_stop(&rec);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

static const char *syspath(struct classfs_device *d)
{
	static char buf[8][512];
	static int i;
	char *b = buf[i++ % 8];

	if (classfs_device_syspath(d, b, 512) < 0)
		strcpy(b, "ERR");
	return b;
}

struct walk {
	struct classfs_device *seen[16];
	int n;
};

static int walk_fn(struct classfs_device *d, void *data)
{
	struct walk *wk = data;

	if (wk->n < 16)
		wk->seen[wk->n] = d;
	wk->n++;
	return 0;
}

static int count_class(struct classfs_class *cls, void *data)
{
	(void)cls;
	(*(int *)data)++;
	return 0;
}

static int stop_walk(struct classfs_device *d, void *data)
{
	(void)d;
	(void)data;
	return 7;
}

static void check_syspaths(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *block = classfs_class_create(t, "block");
	struct classfs_class *nvme = classfs_class_create(t, "nvme");
	struct classfs_class *input = classfs_class_create(t, "input");
	struct classfs_device *pci = mkdev(t, NULL, NULL, NULL, "pci0000:00", 0);
	struct classfs_device *ctl = mkdev(t, NULL, pci, NULL, "0000:01:00.0", 0);
	struct classfs_device *n0 = mkdev(t, nvme, NULL, ctl, "nvme0", makedev(240, 0));
	struct classfs_device *ns = mkdev(t, block, NULL, n0, "nvme0n1", makedev(259, 0));
	struct classfs_device *p1 = mkdev(t, block, ns, NULL, "nvme0n1p1", makedev(259, 1));
	struct classfs_device *mice = mkdev(t, input, NULL, NULL, "mice", makedev(13, 63));
	struct classfs_device *in = mkdev(t, input, NULL, ctl, "input0", 0);
	struct classfs_device *ev = mkdev(t, input, in, NULL, "event0", makedev(13, 64));

	CHECK_STR(syspath(pci), "/devices/pci0000:00");
	CHECK_STR(syspath(ctl), "/devices/pci0000:00/0000:01:00.0");
	CHECK_STR(syspath(n0), "/devices/pci0000:00/0000:01:00.0/nvme/nvme0");
	CHECK_STR(syspath(ns), "/devices/pci0000:00/0000:01:00.0/nvme/nvme0/nvme0n1");
	CHECK_STR(syspath(p1), "/devices/pci0000:00/0000:01:00.0/nvme/nvme0/nvme0n1/nvme0n1p1");
	CHECK_STR(syspath(mice), "/devices/virtual/input/mice");
	CHECK_STR(syspath(ev), "/devices/pci0000:00/0000:01:00.0/input/input0/event0");
	if (layout == CLASSFS_LAYOUT_DEVICES) {
		char path[512];

		/* in the devices layout the syspath is where the directory is */
		snprintf(path, sizeof(path), "%s/dev", syspath(p1) + 1);
		CHECK_STR(rd(t, "%s", path), "259:1\n");
	}
	char small[8];
	CHECK_INT(classfs_device_syspath(p1, small, sizeof(small)), -ERANGE);

	/* the walk: every device once, each after its parent and physical device */
	struct walk w = { .n = 0 };

	CHECK_INT(classfs_tree_for_each_device(t, walk_fn, &w), 0);
	CHECK_INT(w.n, 8);
	for (int i = 0; i < w.n && i < 16; i++)
		for (int j = i + 1; j < w.n && j < 16; j++) {
			CHECK(w.seen[i] != w.seen[j]);
			CHECK(w.seen[i]->parent != w.seen[j] && w.seen[i]->phys != w.seen[j]);
		}
	int nclasses = 0;

	CHECK_INT(classfs_tree_for_each_class(t, count_class, &nclasses), 0);
	CHECK_INT(nclasses, 3);
	CHECK_INT(classfs_tree_for_each_device(t, stop_walk, NULL), 7);

	struct classfs_device *all[] = { ev, in, mice, p1, ns, n0, ctl, pci };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		classfs_device_unregister(all[i]);
	classfs_class_destroy(block);
	classfs_class_destroy(nvme);
	classfs_class_destroy(input);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(syspath_and_walk_class_layout)
{
	check_syspaths(CLASSFS_LAYOUT_CLASS);
}

TEST(syspath_and_walk_devices_layout)
{
	check_syspaths(CLASSFS_LAYOUT_DEVICES);
}

/* every allocation failure leaves the device as it was */
static int fail_at, allocs;

static bool fail_nth(size_t size, void *data)
{
	(void)size;
	(void)data;
	return ++allocs != fail_at;
}

TEST(allocation_failures)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "block");
	struct classfs_device *d = mkdev(t, c, NULL, NULL, "sda", makedev(8, 0));
	size_t nodes = classfs_tree_node_count(t);
	int done = 0;

	for (fail_at = 1; fail_at < 50 && !done; fail_at++) {
		allocs = 0;
		classfs_set_alloc_hook(fail_nth, NULL);
		int r = classfs_device_add_value(d, "a/b/c", 0444, "v", 1, 0);
		classfs_set_alloc_hook(NULL, NULL);
		if (r == 0) {
			done = 1;
			CHECK_STR(rd(t, "class/block/sda/a/b/c"), "v");
			break;
		}
		CHECK_INT(r, -ENOMEM);
		CHECK_INT(classfs_tree_node_count(t), nodes);
		CHECK(!exists(t, "class/block/sda/a"));
	}
	CHECK(done);
	classfs_device_unregister(d);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}


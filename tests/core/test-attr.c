// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-attr.c - attributes: files added after publication, binary files,
 * groups (named and unnamed, all or nothing), class attributes, default
 * attributes of classes and types, the sysfs read/write rules, removal
 * safety (drain, stale numbers) and devices removing themselves from a
 * store().
 */
#include <pthread.h>
#include <unistd.h>

#include "../harness.h"
#include "classfs-internal/attr-owned.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "classfs-internal/watch.h"
#include "../native-util.h"

/* ---- a text attribute that records its calls ---- */

static int store_calls;
static size_t store_len;
static char store_buf[CLASSFS_ATTR_MAX + 1];
static bool store_nul;
static char value[CLASSFS_ATTR_MAX + 1] = "hello\n";

static ssize_t val_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			char *buf)
{
	(void)dev;
	(void)a;
	size_t l = strlen(value);

	memcpy(buf, value, l);
	return (ssize_t)l;
}

static ssize_t val_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 const char *buf, size_t count)
{
	(void)dev;
	(void)a;
	store_calls++;
	store_len = count;
	memcpy(store_buf, buf, count);
	store_nul = buf[count] == '\0';
	if (count >= 4 && !memcmp(buf, "fail", 4))
		return -EIO;
	if (count >= 4 && !memcmp(buf, "half", 4))
		return 2;	/* partial consumption is passed on */
	return (ssize_t)count;
}

static const struct classfs_device_attribute val_attr = { { "val", 0644 }, val_show, val_store };
static const struct classfs_device_attribute ro_attr = { { "ro", 0444 }, val_show, val_store };
static const struct classfs_device_attribute wo_attr = { { "wo", 0200 }, val_show, val_store };

static ssize_t err_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			char *buf)
{
	(void)dev;
	(void)a;
	(void)buf;
	return -ENXIO;
}

static const struct classfs_device_attribute err_attr = { { "err", 0444 }, err_show, NULL };

static ssize_t name_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	return sprintf(buf, "%s:%s\n", classfs_device_name(dev), a->attr.name);
}

static struct classfs_tree *tree;
static struct classfs_class *cls;

static struct classfs_device *setup(enum classfs_layout layout)
{
	tree = classfs_tree_new(layout);
	cls = classfs_class_create(tree, "at");
	return classfs_device_create(cls, NULL, makedev(10, 1), NULL, NULL, "d");
}

static void teardown(void)
{
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(tree), 0);
}

TEST(create_and_remove_file)
{
	struct classfs_device *d = setup(CLASSFS_LAYOUT_CLASS);
	struct classfs_device *c = classfs_device_create(cls, d, 0, NULL, NULL, "child");
	struct classfs_device undead = { 0 };
	struct classfs_stat st;
	size_t base = classfs_tree_node_count(tree);

	CHECK_INT(classfs_device_create_file(d, &val_attr), 0);
	CHECK_INT(ftype(tree, "class/at/d/val"), CLASSFS_FT_REG);
	CHECK_INT(classfs_path_stat(tree, "class/at/d/val", &st), 0);
	CHECK_INT(st.size, 4096);
	CHECK_INT(st.mode & 07777, 0644);
	CHECK(st.dynamic);
	CHECK_INT(listed(tree, "class/at/d", "val"), 1);
	strcpy(value, "hello\n");
	CHECK_STR(rd(tree, "class/at/d/val"), "hello\n");
	CHECK_INT(classfs_tree_node_count(tree), base + 1);

	/* names taken: -EEXIST, nothing added */
	CHECK_INT(classfs_device_create_file(d, &val_attr), -EEXIST);
	static const struct classfs_device_attribute clash[] = {
		{ { "uevent", 0444 }, name_show, NULL },
		{ { "dev", 0444 }, name_show, NULL },
		{ { "subsystem", 0444 }, name_show, NULL },
		{ { "child", 0444 }, name_show, NULL },
	};

	for (int i = 0; i < 4; i++)
		CHECK_INT(classfs_device_create_file(d, &clash[i]), -EEXIST);
	static const struct classfs_device_attribute badname = { { "a/b", 0444 }, name_show, NULL };

	CHECK_INT(classfs_device_create_file(d, &badname), -EINVAL);
	CHECK_INT(classfs_device_create_file(d, NULL), -EINVAL);
	CHECK_INT(classfs_device_create_file(NULL, &val_attr), -EINVAL);
	classfs_device_initialize(&undead);
	CHECK_INT(classfs_device_create_file(&undead, &val_attr), -EINVAL);	/* not added */
	classfs_device_put(&undead);
	CHECK_INT(classfs_tree_node_count(tree), base + 1);
	CHECK_STR(rd(tree, "class/at/d/dev"), "10:1\n");
	CHECK_INT(ftype(tree, "class/at/d/child"), CLASSFS_FT_DIR);

	/* a child may not take a file's name either */
	errno = 0;
	CHECK(classfs_device_create(cls, d, 0, NULL, NULL, "val") == NULL);
	CHECK_INT(errno, EEXIST);

	/* removal; a second removal and a removal of an unknown file do nothing */
	classfs_device_remove_file(d, &val_attr);
	CHECK_INT(ftype(tree, "class/at/d/val"), -ENOENT);
	CHECK_INT(classfs_read(tree, st.ino, store_buf, 100, 0) < 0, 1);
	CHECK_INT(classfs_write(tree, st.ino, "x", 1, 0) < 0, 1);
	CHECK_INT(classfs_getattr(tree, st.ino, &st), -ENOENT);
	classfs_device_remove_file(d, &val_attr);
	classfs_device_remove_file(d, &ro_attr);
	CHECK_INT(classfs_tree_node_count(tree), base);

	/* files go with their device */
	CHECK_INT(classfs_device_create_file(c, &val_attr), 0);
	CHECK_INT(classfs_path_stat(tree, "class/at/child/val", &st), 0);
	classfs_device_unregister(c);
	CHECK(classfs_read(tree, st.ino, store_buf, 100, 0) < 0);
	classfs_device_unregister(d);
	teardown();
}

TEST(read_and_write_rules)
{
	struct classfs_device *d = setup(CLASSFS_LAYOUT_CLASS);
	struct classfs_stat st;
	char big[CLASSFS_ATTR_MAX + 2];
	char buf[CLASSFS_ATTR_MAX + 16];

	CHECK_INT(classfs_device_create_file(d, &val_attr), 0);
	CHECK_INT(classfs_device_create_file(d, &ro_attr), 0);
	CHECK_INT(classfs_device_create_file(d, &wo_attr), 0);
	CHECK_INT(classfs_device_create_file(d, &err_attr), 0);

	/* a read returns the whole value at once, from any offset */
	memset(value, 'v', 3000);
	value[2999] = '\n';
	value[3000] = '\0';
	CHECK_INT(classfs_path_stat(tree, "class/at/d/val", &st), 0);
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), 0), 3000);
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), 1000), 2000);
	CHECK_INT(classfs_read(tree, st.ino, buf, 10, 0), 10);
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), 3000), 0);
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), 5000), 0);
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), -1), -EINVAL);
	strcpy(value, "hello\n");

	/* a write is one store() with the whole, NUL-terminated buffer */
	memset(big, 'w', sizeof(big));
	store_calls = 0;
	CHECK_INT(classfs_write(tree, st.ino, big, 4000, 0), 4000);
	CHECK_INT(store_calls, 1);
	CHECK_INT(store_len, 4000);
	CHECK(store_nul);
	store_calls = 0;
	CHECK_INT(classfs_write(tree, st.ino, big, CLASSFS_ATTR_MAX, 0), CLASSFS_ATTR_MAX);
	CHECK_INT(store_calls, 1);
	store_calls = 0;
	CHECK_INT(classfs_write(tree, st.ino, big, CLASSFS_ATTR_MAX + 1, 0), -E2BIG);
	CHECK_INT(store_calls, 0);
	CHECK_INT(wr(tree, "class/at/d/val", "1\n"), 2);
	CHECK_INT(store_calls, 1);
	CHECK_INT(store_len, 2);
	CHECK(!memcmp(store_buf, "1\n", 2));

	/* store()'s return: errors and partial counts reach the writer */
	CHECK_INT(wr(tree, "class/at/d/val", "fail\n"), -EIO);
	CHECK_INT(wr(tree, "class/at/d/val", "half\n"), 2);
	CHECK_INT(rd(tree, "class/at/d/err")[0] == 'E', 1);
	CHECK_INT(classfs_path_read(tree, "class/at/d/err", buf, sizeof(buf)), -ENXIO);

	/* mode bits are enforced */
	store_calls = 0;
	CHECK_INT(wr(tree, "class/at/d/ro", "1\n"), -EACCES);
	CHECK_INT(store_calls, 0);
	CHECK_STR(rd(tree, "class/at/d/ro"), "hello\n");
	CHECK_INT(classfs_path_read(tree, "class/at/d/wo", buf, sizeof(buf)), -EACCES);
	CHECK_INT(wr(tree, "class/at/d/wo", "1\n"), 2);
	CHECK_INT(store_calls, 1);
	CHECK_INT(wr(tree, "class/at/d/uevent/x", "1"), -ENOTDIR);
	CHECK_INT(wr(tree, "class/at/d", "1"), -EISDIR);
	CHECK_INT(wr(tree, "class/at/d/subsystem", "1") < 0, 1);

	classfs_device_unregister(d);
	teardown();
}

/* ---- binary attributes ---- */

static char blob[16] = "0123456789abcdef";

static ssize_t blob_read(struct classfs_device *dev, const struct classfs_bin_attribute *a,
			 char *buf, off_t off, size_t count)
{
	(void)dev;
	(void)a;
	if ((size_t)off >= sizeof(blob))
		return 0;
	if (count > sizeof(blob) - (size_t)off)
		count = sizeof(blob) - (size_t)off;
	memcpy(buf, blob + off, count);
	return (ssize_t)count;
}

static ssize_t blob_write(struct classfs_device *dev, const struct classfs_bin_attribute *a,
			  const char *buf, off_t off, size_t count)
{
	(void)dev;
	(void)a;
	memcpy(blob + off, buf, count);
	return (ssize_t)count;
}

static const struct classfs_bin_attribute blob_attr = {
	{ "blob", 0644 }, sizeof(blob), blob_read, blob_write, NULL
};

TEST(binary_attributes)
{
	struct classfs_device *d = setup(CLASSFS_LAYOUT_CLASS);
	struct classfs_stat st;
	char buf[64];

	CHECK_INT(classfs_device_create_bin_file(d, &blob_attr), 0);
	CHECK_INT(classfs_device_create_bin_file(d, &blob_attr), -EEXIST);
	CHECK_INT(classfs_path_stat(tree, "class/at/d/blob", &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_REG);
	CHECK_INT(st.size, 16);
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), 0), 16);
	CHECK(!memcmp(buf, "0123456789abcdef", 16));
	CHECK_INT(classfs_read(tree, st.ino, buf, 8, 4), 8);
	CHECK(!memcmp(buf, "456789ab", 8));
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), 12), 4);	/* cut at size */
	CHECK(!memcmp(buf, "cdef", 4));
	CHECK_INT(classfs_read(tree, st.ino, buf, sizeof(buf), 16), 0);
	CHECK_INT(classfs_write(tree, st.ino, "XY", 2, 3), 2);
	CHECK(!memcmp(blob, "012XY56789abcdef", 16));
	CHECK_INT(classfs_write(tree, st.ino, "QRSTUVWX", 8, 12), 4);	/* cut at size */
	CHECK(!memcmp(blob, "012XY56789abQRST", 16));
	CHECK(classfs_write(tree, st.ino, "Z", 1, 16) < 0);
	classfs_device_remove_bin_file(d, &blob_attr);
	CHECK_INT(ftype(tree, "class/at/d/blob"), -ENOENT);
	CHECK(classfs_read(tree, st.ino, buf, sizeof(buf), 0) < 0);
	classfs_device_unregister(d);
	teardown();
}

/* ---- groups ---- */

static const struct classfs_device_attribute ga = { { "a", 0444 }, name_show, NULL };
static const struct classfs_device_attribute gb = { { "b", 0644 }, name_show, val_store };
static const struct classfs_device_attribute gval = { { "val", 0444 }, name_show, NULL };
static const struct classfs_device_attribute gbad = { { "..", 0444 }, name_show, NULL };
static const struct classfs_device_attribute *const g_ab[] = { &ga, &gb, NULL };
static const struct classfs_device_attribute *const g_a_val[] = { &ga, &gval, NULL };
static const struct classfs_device_attribute *const g_a_a[] = { &ga, &ga, NULL };
static const struct classfs_device_attribute *const g_a_bad[] = { &ga, &gbad, NULL };
static const struct classfs_bin_attribute *const g_bin[] = { &blob_attr, NULL };

TEST(attribute_groups)
{
	struct classfs_device *d = setup(CLASSFS_LAYOUT_CLASS);
	const struct classfs_attribute_group named = { "grp", g_ab, g_bin };
	const struct classfs_attribute_group unnamed = { NULL, g_ab, NULL };
	const struct classfs_attribute_group collide = { NULL, g_a_val, NULL };
	const struct classfs_attribute_group twice = { NULL, g_a_a, NULL };
	const struct classfs_attribute_group bad = { NULL, g_a_bad, NULL };
	const struct classfs_attribute_group badname = { "x/y", g_ab, NULL };
	const struct classfs_attribute_group named_dev = { "dev", g_ab, NULL };
	const struct classfs_attribute_group empty = { "empty", NULL, NULL };
	size_t base;

	CHECK_INT(classfs_device_create_file(d, &val_attr), 0);
	base = classfs_tree_node_count(tree);

	/* named: a subdirectory */
	CHECK_INT(classfs_device_create_group(d, &named), 0);
	CHECK_INT(ftype(tree, "class/at/d/grp"), CLASSFS_FT_DIR);
	CHECK_STR(rd(tree, "class/at/d/grp/a"), "d:a\n");
	CHECK_STR(rd(tree, "class/at/d/grp/b"), "d:b\n");
	CHECK_INT(ftype(tree, "class/at/d/grp/blob"), CLASSFS_FT_REG);
	CHECK_INT(nentries(tree, "class/at/d/grp"), 3);
	CHECK_INT(ftype(tree, "class/at/d/a"), -ENOENT);
	CHECK_INT(classfs_device_create_group(d, &named), -EEXIST);
	classfs_device_remove_group(d, &named);
	CHECK_INT(ftype(tree, "class/at/d/grp"), -ENOENT);
	CHECK_INT(classfs_tree_node_count(tree), base);
	CHECK_INT(classfs_device_create_group(d, &empty), 0);
	CHECK_INT(ftype(tree, "class/at/d/empty"), CLASSFS_FT_DIR);
	CHECK_INT(nentries(tree, "class/at/d/empty"), 0);
	classfs_device_remove_group(d, &empty);

	/* unnamed: in the device's directory */
	CHECK_INT(classfs_device_create_group(d, &unnamed), 0);
	CHECK_STR(rd(tree, "class/at/d/a"), "d:a\n");
	CHECK_STR(rd(tree, "class/at/d/b"), "d:b\n");
	CHECK_INT(classfs_device_create_group(d, &unnamed), -EEXIST);
	classfs_device_remove_group(d, &unnamed);
	CHECK_INT(ftype(tree, "class/at/d/a"), -ENOENT);
	CHECK_STR(rd(tree, "class/at/d/val"), "hello\n");	/* not in the group: stays */
	CHECK_INT(classfs_tree_node_count(tree), base);

	/* all or nothing */
	CHECK_INT(classfs_device_create_group(d, &collide), -EEXIST);
	CHECK_INT(ftype(tree, "class/at/d/a"), -ENOENT);
	CHECK_INT(classfs_device_create_group(d, &twice), -EEXIST);
	CHECK_INT(ftype(tree, "class/at/d/a"), -ENOENT);
	CHECK_INT(classfs_device_create_group(d, &bad), -EINVAL);
	CHECK_INT(ftype(tree, "class/at/d/a"), -ENOENT);
	CHECK_INT(classfs_device_create_group(d, &badname), -EINVAL);
	CHECK_INT(classfs_device_create_group(d, &named_dev), -EEXIST);
	CHECK_INT(classfs_device_create_group(d, NULL), -EINVAL);
	CHECK_INT(classfs_tree_node_count(tree), base);
	CHECK_INT(nentries(tree, "class/at/d"), 4);	/* uevent, dev, subsystem, val */

	/* a group's files go with the device */
	CHECK_INT(classfs_device_create_group(d, &named), 0);
	classfs_device_unregister(d);
	teardown();
}

/* ---- class attributes ---- */

static char class_value[64] = "1.0\n";

static ssize_t cval_show(struct classfs_class *c, const struct classfs_class_attribute *a,
			 char *buf)
{
	(void)a;
	return sprintf(buf, "%s %s", c->name, class_value);
}

static ssize_t cval_store(struct classfs_class *c, const struct classfs_class_attribute *a,
			  const char *buf, size_t count)
{
	(void)c;
	(void)a;
	if (count >= sizeof(class_value))
		return -EINVAL;
	memcpy(class_value, buf, count);
	class_value[count] = '\0';
	return (ssize_t)count;
}

static const struct classfs_class_attribute version = { { "version", 0644 }, cval_show, cval_store };
static const struct classfs_class_attribute extra = { { "extra", 0444 }, cval_show, NULL };
static const struct classfs_class_attribute sda_attr = { { "sda", 0444 }, cval_show, NULL };
static const struct classfs_class_attribute sda1_attr = { { "sda1", 0444 }, cval_show, NULL };
static const struct classfs_class_attribute *const cattrs[] = { &version, NULL };
static const struct classfs_class_attribute *const dup_cattrs[] = { &version, &version, NULL };

static void class_attributes(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class c = { .name = "ca", .class_attrs = cattrs };
	struct classfs_class dup = { .name = "dup", .class_attrs = dup_cattrs };
	struct classfs_device *sda, *sda1;
	struct classfs_stat st;
	size_t base;

	CHECK_INT(classfs_class_register(t, &dup), -EEXIST);
	CHECK_INT(ftype(t, "class/dup"), -ENOENT);
	base = classfs_tree_node_count(t);
	CHECK_INT(classfs_class_register(t, &c), 0);
	CHECK_INT(classfs_tree_node_count(t), base + 2);
	strcpy(class_value, "1.0\n");
	CHECK_STR(rd(t, "class/ca/version"), "ca 1.0\n");
	CHECK_INT(wr(t, "class/ca/version", "2.0\n"), 4);
	CHECK_STR(rd(t, "class/ca/version"), "ca 2.0\n");
	CHECK_INT(classfs_class_create_file(&c, &extra), 0);
	CHECK_STR(rd(t, "class/ca/extra"), "ca 2.0\n");
	CHECK_INT(wr(t, "class/ca/extra", "x"), -EACCES);
	CHECK_INT(classfs_class_create_file(&c, &extra), -EEXIST);
	CHECK_INT(classfs_class_create_file(&c, NULL), -EINVAL);

	/* class files and devices share the class directory's names */
	sda = classfs_device_create(&c, NULL, 0, NULL, NULL, "sda");
	sda1 = classfs_device_create(&c, sda, 0, NULL, NULL, "sda1");
	CHECK(sda && sda1);
	CHECK_INT(classfs_class_create_file(&c, &sda_attr), -EEXIST);
	CHECK_INT(classfs_class_create_file(&c, &sda1_attr), -EEXIST);
	errno = 0;
	CHECK(classfs_device_create(&c, NULL, 0, NULL, NULL, "extra") == NULL);
	CHECK_INT(errno, EEXIST);
	CHECK_INT(classfs_device_rename(sda1, "version"), -EEXIST);
	CHECK_INT(ftype(t, "class/ca/sda1/"), CLASSFS_FT_DIR);
	CHECK_INT(nentries(t, "class/ca"), 4);

	CHECK_INT(classfs_path_stat(t, "class/ca/extra", &st), 0);
	classfs_class_remove_file(&c, &extra);
	CHECK_INT(ftype(t, "class/ca/extra"), -ENOENT);
	CHECK(classfs_read(t, st.ino, (char[8]){ 0 }, 8, 0) < 0);
	classfs_class_remove_file(&c, &extra);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_node_count(t), base);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(class_attributes_layout_class)
{
	class_attributes(CLASSFS_LAYOUT_CLASS);
}

TEST(class_attributes_layout_devices)
{
	class_attributes(CLASSFS_LAYOUT_DEVICES);
}

/* ---- default attributes: the class's groups and the type's ---- */

static const struct classfs_device_attribute cls_a = { { "cls_a", 0444 }, name_show, NULL };
static const struct classfs_device_attribute type_a = { { "type_a", 0644 }, name_show, val_store };
static const struct classfs_device_attribute ng_a = { { "ng_a", 0444 }, name_show, NULL };
static const struct classfs_device_attribute *const cls_attrs[] = { &cls_a, NULL };
static const struct classfs_device_attribute *const type_attrs[] = { &type_a, NULL };
static const struct classfs_device_attribute *const ng_attrs[] = { &ng_a, NULL };
static const struct classfs_attribute_group cls_grp = { NULL, cls_attrs, g_bin };
static const struct classfs_attribute_group cls_named = { "power", ng_attrs, NULL };
static const struct classfs_attribute_group type_grp = { NULL, type_attrs, NULL };
static const struct classfs_attribute_group *const cls_groups[] = { &cls_grp, &cls_named, NULL };
static const struct classfs_attribute_group *const type_groups[] = { &type_grp, NULL };
static const struct classfs_device_type evdev = { .name = "evdev", .groups = type_groups };

struct seen_at_add {
	struct classfs_tree *t;
	int adds;
	int complete;
};

static void check_complete(const struct classfs_uevent *ev, void *data)
{
	struct seen_at_add *s = data;
	char path[256];

	if (ev->action != CLASSFS_ACTION_ADD)
		return;
	s->adds++;
	/* when ADD is out, every default file is there */
	snprintf(path, sizeof(path), "%s/cls_a", ev->devpath + 1);
	if (!exists(s->t, "%s", path))
		return;
	if (!exists(s->t, "%s/power/ng_a", ev->devpath + 1) ||
	    !exists(s->t, "%s/blob", ev->devpath + 1) || !exists(s->t, "%s/uevent", ev->devpath + 1))
		return;
	if (strstr(ev->devpath, "event") && !exists(s->t, "%s/type_a", ev->devpath + 1))
		return;
	s->complete++;
}

static void default_attributes(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class c = { .name = "input", .dev_groups = cls_groups };
	struct classfs_device *in, *ev;
	struct seen_at_add s = { t, 0, 0 };
	size_t base;
	int id;

	CHECK_INT(classfs_class_register(t, &c), 0);
	base = classfs_tree_node_count(t);
	id = classfs_listener_add(t, check_complete, &s);
	in = classfs_device_create(&c, NULL, 0, NULL, NULL, "input0");
	ev = calloc(1, sizeof(*ev));
	classfs_device_initialize(ev);
	ev->cls = &c;
	ev->parent = in;
	ev->devt = makedev(13, 64);
	ev->type = &evdev;
	ev->release = (void (*)(struct classfs_device *))free;
	CHECK_INT(classfs_device_set_name(ev, "event0"), 0);
	CHECK_INT(classfs_device_add(ev), 0);
	CHECK_INT(s.adds, 2);
	CHECK_INT(s.complete, 2);

	CHECK_STR(rd(t, "class/input/input0/cls_a"), "input0:cls_a\n");
	CHECK_STR(rd(t, "class/input/input0/power/ng_a"), "input0:ng_a\n");
	CHECK_INT(ftype(t, "class/input/input0/power"), CLASSFS_FT_DIR);
	CHECK_INT(ftype(t, "class/input/input0/type_a"), -ENOENT);
	CHECK_STR(rd(t, "class/input/event0/cls_a"), "event0:cls_a\n");
	CHECK_STR(rd(t, "class/input/event0/type_a"), "event0:type_a\n");
	CHECK_INT(wr(t, "class/input/event0/type_a", "z\n"), 2);
	CHECK_INT(wr(t, "class/input/event0/cls_a", "z\n"), -EACCES);
	CHECK_INT(classfs_path_read(t, "class/input/event0/blob", store_buf, 64), 16);
	CHECK_INT(nentries(t, "class/input/event0"), 7);	/* uevent dev subsystem cls_a blob power type_a */
	CHECK_INT(nentries(t, "class/input/input0/power"), 1);

	/* default names are taken */
	CHECK_INT(classfs_device_create_file(in, &cls_a), -EEXIST);
	errno = 0;
	CHECK(classfs_device_create(&c, in, 0, NULL, NULL, "power") == NULL);
	CHECK_INT(errno, EEXIST);
	CHECK(classfs_device_create(&c, in, 0, NULL, NULL, "cls_a") == NULL);
	CHECK_INT(classfs_device_rename(ev, "blob"), -EEXIST);
	CHECK_INT(check_links(t, NULL), 0);

	/* a removed default attribute's number is stale */
	struct classfs_stat st;

	CHECK_INT(classfs_path_stat(t, "class/input/event0/type_a", &st), 0);
	classfs_device_unregister(in);
	CHECK(classfs_read(t, st.ino, store_buf, 64, 0) < 0);
	CHECK_INT(classfs_tree_node_count(t), base);
	classfs_listener_remove(t, id);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(default_attributes_layout_class)
{
	default_attributes(CLASSFS_LAYOUT_CLASS);
}

TEST(default_attributes_layout_devices)
{
	default_attributes(CLASSFS_LAYOUT_DEVICES);
}

/* ---- a store() that removes its own device ---- */

static int self_released;
static int self_ret;
static bool self_still_there;

static struct classfs_device *self_dev;
static bool self_dev_released;

static void self_release(struct classfs_device *dev)
{
	self_released++;
	if (dev == self_dev)
		self_dev_released = true;
	free(dev);
}

static ssize_t delete_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			    const char *buf, size_t count)
{
	(void)a;
	(void)buf;
	self_ret = classfs_device_unregister_self(dev);
	/* the device is released no earlier than this callback's return */
	self_still_there = !self_dev_released && !strcmp(classfs_device_name(dev), "victim");
	return (ssize_t)count;
}

static ssize_t deadlock_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			      const char *buf, size_t count)
{
	(void)a;
	(void)buf;
	self_ret = classfs_device_unregister(dev);
	return (ssize_t)count;
}

static ssize_t parent_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			    const char *buf, size_t count)
{
	(void)a;
	(void)buf;
	self_ret = classfs_device_unregister(dev->parent);
	return (ssize_t)count;
}

static const struct classfs_device_attribute del_attr = { { "delete", 0200 }, NULL, delete_store };
static const struct classfs_device_attribute dl_attr = { { "deadlock", 0200 }, NULL, deadlock_store };
static const struct classfs_device_attribute pa_attr = { { "kill_parent", 0200 }, NULL, parent_store };
static const struct classfs_device_attribute *const del_attrs[] = { &del_attr, &dl_attr, &pa_attr, NULL };
static const struct classfs_attribute_group del_grp = { NULL, del_attrs, NULL };
static const struct classfs_attribute_group *const del_groups[] = { &del_grp, NULL };

static ssize_t remove_file_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
				 const char *buf, size_t count)
{
	(void)buf;
	classfs_device_remove_file(dev, a);	/* would wait for itself: refused */
	return (ssize_t)count;
}

static const struct classfs_device_attribute rmf_attr = { { "rmf", 0200 }, NULL, remove_file_store };

static struct classfs_device *mkdel(struct classfs_class *c, struct classfs_device *parent,
				    const char *name)
{
	struct classfs_device *d = calloc(1, sizeof(*d));

	classfs_device_initialize(d);
	d->cls = c;
	d->parent = parent;
	d->release = self_release;
	CHECK_INT(classfs_device_set_name(d, "%s", name), 0);
	CHECK_INT(classfs_device_add(d), 0);
	return d;
}

static void remove_self(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class c = { .name = "sd", .dev_groups = del_groups };
	struct classfs_device *v, *kid, *p;
	struct recorder r;
	size_t base;

	CHECK_INT(classfs_class_register(t, &c), 0);
	base = classfs_tree_node_count(t);
	self_released = 0;
	v = mkdel(&c, NULL, "victim");
	self_dev = v;
	self_dev_released = false;
	kid = mkdel(&c, v, "kid");
	CHECK(rec_start(&r, t) > 0);

	/* unregister from its own store(): -EDEADLK, nothing changes */
	self_ret = 0;
	CHECK_INT(wr(t, "class/sd/victim/deadlock", "1"), 1);
	CHECK_INT(self_ret, -EDEADLK);
	CHECK(classfs_device_is_added(v));
	CHECK_INT(r.n, 0);
	/* the parent's removal would wait for this store(): -EDEADLK as well */
	self_ret = 0;
	CHECK_INT(wr(t, "class/sd/kid/kill_parent", "1"), 1);
	CHECK_INT(self_ret, -EDEADLK);
	CHECK(classfs_device_is_added(v));
	CHECK(classfs_device_is_added(kid));
	CHECK_INT(classfs_device_unregister_self(v), -EINVAL);	/* not from a callback */
	/* removing its own file from its store(): refused, no hang */
	CHECK_INT(classfs_device_create_file(v, &rmf_attr), 0);
	CHECK_INT(wr(t, "class/sd/victim/rmf", "1"), 1);
	CHECK_INT(ftype(t, "class/sd/victim/rmf"), CLASSFS_FT_REG);
	CHECK_INT(r.n, 0);
	CHECK_INT(self_released, 0);

	/* the `delete` pattern: the store() returns fine, the device (and its child) is gone */
	self_ret = 1;
	CHECK_INT(wr(t, "class/sd/victim/delete", "1\n"), 2);
	CHECK_INT(self_ret, 0);
	CHECK(self_still_there);
	CHECK(self_dev_released);
	CHECK_INT(self_released, 2);
	CHECK_INT(ftype(t, "class/sd/victim"), -ENOENT);
	CHECK_INT(ftype(t, "class/sd/kid"), -ENOENT);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_REMOVE), 2);
	CHECK(rec_find(&r, CLASSFS_ACTION_REMOVE, NULL) ==
	      rec_find(&r, CLASSFS_ACTION_REMOVE,
		       layout == CLASSFS_LAYOUT_CLASS ? "/class/sd/victim/kid"
						      : "/devices/virtual/sd/victim/kid"));
	CHECK_INT(classfs_tree_node_count(t), base);

	/* a child deleting itself leaves its parent */
	p = mkdel(&c, NULL, "p");
	self_dev = mkdel(&c, p, "victim");
	self_dev_released = false;
	self_still_there = false;
	CHECK_INT(wr(t, "class/sd/p/victim/delete", "1\n"), 2);
	CHECK_INT(self_released, 3);
	CHECK(self_still_there);
	CHECK(self_dev_released);
	CHECK(classfs_device_is_added(p));
	CHECK_INT(ftype(t, "class/sd/victim"), -ENOENT);
	classfs_device_unregister(p);
	CHECK_INT(self_released, 4);

	rec_stop(&r);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(remove_self_layout_class)
{
	remove_self(CLASSFS_LAYOUT_CLASS);
}

TEST(remove_self_layout_devices)
{
	remove_self(CLASSFS_LAYOUT_DEVICES);
}

/* ---- removal waits for a running show() ---- */

static pthread_mutex_t slow_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t slow_cond = PTHREAD_COND_INITIALIZER;
static int slow_in, slow_go, slow_done_after_return;

static ssize_t slow_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	(void)dev;
	(void)a;
	pthread_mutex_lock(&slow_lock);
	slow_in = 1;
	pthread_cond_broadcast(&slow_cond);
	while (!slow_go)
		pthread_cond_wait(&slow_cond, &slow_lock);
	slow_in = 0;
	pthread_mutex_unlock(&slow_lock);
	return sprintf(buf, "slow\n");
}

static const struct classfs_device_attribute slow_attr = { { "slow", 0444 }, slow_show, NULL };

struct slow_ctx {
	struct classfs_tree *t;
	struct classfs_device *dev;
	bool whole_device;
	int returned;
	ssize_t read_ret;
	char buf[64];
};

static void *slow_reader(void *arg)
{
	struct slow_ctx *c = arg;

	c->read_ret = classfs_path_read(c->t, "class/at/d/slow", c->buf, sizeof(c->buf));
	return NULL;
}

static void *slow_remover(void *arg)
{
	struct slow_ctx *c = arg;

	if (c->whole_device)
		classfs_device_unregister(c->dev);
	else
		classfs_device_remove_file(c->dev, &slow_attr);
	pthread_mutex_lock(&slow_lock);
	c->returned = 1;
	/* once removal returned, no show() of it runs */
	if (slow_in)
		slow_done_after_return = 1;
	pthread_mutex_unlock(&slow_lock);
	return NULL;
}

static void drain(bool whole_device)
{
	struct classfs_device *d = setup(CLASSFS_LAYOUT_CLASS);
	struct slow_ctx c = { tree, d, whole_device, 0, 0, "" };
	pthread_t rt, mt;

	slow_in = slow_go = slow_done_after_return = 0;
	CHECK_INT(classfs_device_create_file(d, &slow_attr), 0);
	pthread_create(&rt, NULL, slow_reader, &c);
	pthread_mutex_lock(&slow_lock);
	while (!slow_in)
		pthread_cond_wait(&slow_cond, &slow_lock);
	pthread_mutex_unlock(&slow_lock);
	pthread_create(&mt, NULL, slow_remover, &c);
	usleep(100000);
	pthread_mutex_lock(&slow_lock);
	CHECK_INT(c.returned, 0);	/* still waiting for the show() */
	slow_go = 1;
	pthread_cond_broadcast(&slow_cond);
	pthread_mutex_unlock(&slow_lock);
	pthread_join(rt, NULL);
	pthread_join(mt, NULL);
	CHECK_INT(c.returned, 1);
	CHECK_INT(slow_done_after_return, 0);
	CHECK_INT(c.read_ret, 5);
	CHECK(!memcmp(c.buf, "slow\n", 5));
	/* and nothing new starts */
	CHECK_INT(ftype(tree, "class/at/d/slow"), -ENOENT);
	if (!whole_device)
		classfs_device_unregister(d);
	teardown();
}

TEST(remove_file_waits_for_show)
{
	drain(false);
}

TEST(unregister_waits_for_show)
{
	drain(true);
}

/* ---- owned attributes and notifications ---- */

static uint64_t notified_ino;
static int notified;

static void on_notify(void *data, uint64_t ino)
{
	(void)data;
	notified++;
	notified_ino = ino;
}

static const struct classfs_watch_ops notify_ops = { .notify = on_notify };

TEST(owned_files_and_notify)
{
	struct classfs_device *d = setup(CLASSFS_LAYOUT_CLASS);
	struct classfs_device_attribute *own = classfs_malloc(sizeof(*own));
	const struct classfs_attribute_group named = { "grp", g_ab, NULL };
	struct classfs_stat st;
	int id;

	*own = (struct classfs_device_attribute){ { "owned", 0444 }, name_show, NULL };
	CHECK_INT(classfs_device_create_file_owned(d, own), 0);
	CHECK_STR(rd(tree, "class/at/d/owned"), "d:owned\n");
	own = classfs_malloc(sizeof(*own));
	*own = (struct classfs_device_attribute){ { "owned", 0444 }, name_show, NULL };
	CHECK_INT(classfs_device_create_file_owned(d, own), -EEXIST);	/* freed on error */
	CHECK_INT(classfs_device_create_group(d, &named), 0);

	id = classfs_tree_watch_add(tree, &notify_ops, NULL);
	CHECK(id > 0);
	notified = 0;
	CHECK_INT(classfs_device_notify(d, "owned"), 0);
	CHECK_INT(notified, 1);
	CHECK_INT(classfs_path_stat(tree, "class/at/d/owned", &st), 0);
	CHECK(notified_ino == st.ino);
	CHECK_INT(classfs_device_notify(d, "grp/b"), 0);
	CHECK_INT(classfs_path_stat(tree, "class/at/d/grp/b", &st), 0);
	CHECK(notified_ino == st.ino);
	CHECK_INT(classfs_device_notify(d, "dev"), 0);
	CHECK_INT(notified, 3);
	CHECK_INT(classfs_device_notify(d, "nope"), -ENOENT);
	CHECK_INT(classfs_device_notify(d, "grp"), -ENOENT);	/* a directory */
	CHECK_INT(classfs_device_notify(d, NULL), -EINVAL);
	CHECK_INT(notified, 3);
	CHECK_INT(classfs_tree_watch_remove(tree, id), 0);
	CHECK_INT(classfs_tree_watch_remove(tree, id), -ENOENT);
	CHECK_INT(classfs_device_notify(d, "owned"), 0);
	CHECK_INT(notified, 3);

	/* an owned file is freed with the device (LeakSanitizer checks) */
	classfs_device_unregister(d);
	teardown();
}

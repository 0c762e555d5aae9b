// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-record-roundtrip.c - whatever a tree holds saves as a record that
 * loads to the same tree:
 * - a recording of a real machine (Debian 12, Linux 6.x, trimmed; in
 *   tests/record/data) with the devices of virtual buses
 *   (/devices/virtual/workqueue/writeback: a bus device below a root that
 *   is not recorded) loads in both layouts, saves at the recorded paths,
 *   and loads from its save to the same save;
 * - records that say /devices/virtual is a device are refused; so are, in
 *   the class layout, records where one path is both a virtual bus's root
 *   and a class's glue directory (the devices layout takes the paths as
 *   recorded);
 * - random devices made as classfsd makes them (attributes as type
 *   groups, names the tree makes among them, a physical device named
 *   "virtual", roots of virtual buses), then renamed: what the core
 *   accepts saves, loads and saves again to the same text;
 * - files and links made through the filesystem in a device's directory
 *   save as its A: and L: lines and load back as stored values; entries
 *   outside devices are left out (umockdev's format has no line for them).
 * $RECORD_LOCAL_DATA is tests/record/data.
 */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../harness.h"
#include "classfs/classfs.h"
#include "classfs/record.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "record-util.h"

static char *slurp(const char *name, size_t *len)
{
	const char *dir = getenv("RECORD_LOCAL_DATA");
	char path[PATH_MAX];
	FILE *f;
	char *buf = NULL;
	long n;

	snprintf(path, sizeof(path), "%s/%s", dir ? dir : "tests/record/data", name);
	f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "  cannot open %s\n", path);
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0) {
		rewind(f);
		buf = malloc((size_t)n + 1);
		if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		}
		if (buf) {
			buf[n] = '\0';
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

static int load_text(struct classfs_tree *t, const char *text, struct classfs_record_error *err)
{
	struct classfs_record_options opt = { .filename = "<test>" };

	return cfs_test_load(t, text, &opt, err);
}

/* the P: lines of @text, sorted, one per line */
static char *paths(const char *text)
{
	char **v = NULL, *out, *o;
	size_t n = 0, total = 1;

	for (const char *s = text; s && *s;) {
		const char *e = strchr(s, '\n');
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if (len > 3 && !strncmp(s, "P: ", 3)) {
			v = realloc(v, (n + 1) * sizeof(*v));
			v[n++] = strndup(s + 3, len - 3);
			total += len - 2;
		}
		s = e ? e + 1 : NULL;
	}
	for (size_t i = 1; i < n; i++)
		for (size_t k = i; k > 0 && strcmp(v[k - 1], v[k]) > 0; k--) {
			char *x = v[k];

			v[k] = v[k - 1];
			v[k - 1] = x;
		}
	out = o = malloc(total);
	for (size_t i = 0; i < n; i++) {
		o += sprintf(o, "%s\n", v[i]);
		free(v[i]);
	}
	*o = '\0';
	free(v);
	return out;
}

static void teardown(struct classfs_tree *t)
{
	classfs_record_unload(t);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- files made through the filesystem ---- */

static uint64_t ino_at(struct classfs_tree *t, const char *path)
{
	struct classfs_stat st;

	if (classfs_path_stat(t, path, &st) < 0)
		return 0;
	return st.ino;
}

TEST(files_made_through_the_filesystem)
{
	static const char rec[] =
		"P: /devices/LNXSYSTM:00/PNP0C0A:00/power_supply/BAT0\n"
		"E: SUBSYSTEM=power_supply\n"
		"A: status=Discharging\\n\n"
		"A: technology=Li-ion\\n\n";
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES), *t2;
	const char *bat = "devices/LNXSYSTM:00/PNP0C0A:00/power_supply/BAT0";
	struct classfs_record_error err;
	struct classfs_stat st;
	char path[256], buf[64];
	uint64_t dir;
	char *s1, *s2;

	CHECK_INT(load_text(t, rec, &err), 0);
	dir = ino_at(t, bat);
	CHECK(dir != 0);
	/* a new attribute, a link, a rewritten and a removed recorded attribute */
	CHECK_INT(classfs_create(t, dir, "charge_type", 0644, &st), 0);
	CHECK_INT(classfs_write(t, st.ino, "Fast\n", 5, 0), 5);
	CHECK_INT(classfs_create(t, dir, "raw", 0644, &st), 0);
	CHECK_INT(classfs_write(t, st.ino, "a\0b", 3, 0), 3);
	CHECK_INT(classfs_symlink(t, dir, "driver", "../../../foo", NULL), 0);
	snprintf(path, sizeof(path), "%s/status", bat);
	CHECK_INT(classfs_path_write(t, path, "Charging\n", 9), 9);
	CHECK_INT(classfs_unlink(t, dir, "technology"), 0);
	/* outside any device: not in the record */
	CHECK_INT(classfs_mkdir(t, classfs_root_ino(), "firmware", 0755, &st), 0);
	CHECK_INT(classfs_create(t, st.ino, "platform_profile", 0644, NULL), 0);
	s1 = cfs_test_save(t);
	CHECK(s1 != NULL);
	if (!s1)
		goto out;
	CHECK(strstr(s1, "A: charge_type=Fast\\n\n") != NULL);
	CHECK(strstr(s1, "L: driver=../../../foo\n") != NULL);
	CHECK(strstr(s1, "A: status=Charging\\n\n") != NULL);
	CHECK(strstr(s1, "technology") == NULL);
	CHECK(strstr(s1, "firmware") == NULL && strstr(s1, "platform_profile") == NULL);
	t2 = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	CHECK_INT(load_text(t2, s1, &err), 0);
	s2 = cfs_test_save(t2);
	CHECK(s2 && !strcmp(s1, s2));
	if (s2 && strcmp(s1, s2))
		fprintf(stderr, "  saved\n%s  then\n%s", s1, s2);
	snprintf(path, sizeof(path), "%s/charge_type", bat);
	CHECK_INT(classfs_path_read(t2, path, buf, sizeof(buf)), 5);
	snprintf(path, sizeof(path), "%s/raw", bat);
	CHECK_INT(classfs_path_read(t2, path, buf, sizeof(buf)), 3);
	CHECK(!memcmp(buf, "a\0b", 3));
	free(s2);
	teardown(t2);
out:
	free(s1);
	classfs_tree_remove_plain(t);
	teardown(t);
}

/* ---- a real machine's recording ---- */

TEST(machine_recording_round_trips)
{
	size_t len;
	char *data = slurp("debian12-vm.umockdev", &len);

	CHECK(data != NULL);
	if (!data)
		return;
	for (int layout = 0; layout < 2; layout++) {
		struct classfs_tree *t = classfs_tree_new(layout), *t2;
		struct classfs_record_error err;
		struct classfs_device *wb, *root;
		char path[128], *s1, *s2, *p0, *p1;

		CHECK_INT(load_text(t, data, &err), 0);
		/*
		 * A bus device of its bus, below a root that was not recorded:
		 * a plain device in the class layout, a plain directory in the
		 * devices layout (which makes nothing that is not recorded).
		 */
		wb = classfs_tree_find_device(t, "/devices/virtual/workqueue/writeback");
		CHECK(wb != NULL);
		if (wb) {
			CHECK(wb->bus && !strcmp(wb->bus->name, "workqueue") && !wb->cls);
			root = wb->parent;
			if (layout == CLASSFS_LAYOUT_CLASS) {
				CHECK(root && !root->bus && !root->cls);
				CHECK(root && classfs_device_syspath(root, path, sizeof(path)) > 0 &&
				      !strcmp(path, "/devices/virtual/workqueue"));
			} else {
				struct classfs_stat st;

				CHECK(!root);
				CHECK_INT(classfs_path_stat(t, "devices/virtual/workqueue/uevent", &st),
					  -ENOENT);
				CHECK(classfs_device_syspath(wb, path, sizeof(path)) > 0 &&
				      !strcmp(path, "/devices/virtual/workqueue/writeback"));
			}
			classfs_device_put(wb);
		}
		CHECK(classfs_path_readlink(t, "bus/workqueue/devices/writeback", path,
					    sizeof(path)) > 0);
		CHECK(classfs_path_readlink(t, "bus/memory_tiering/devices/memory_tier4", path,
					    sizeof(path)) > 0);

		/* saved at the recorded paths, and loaded from the save to the same save */
		s1 = cfs_test_save(t);
		CHECK(s1 != NULL);
		p0 = paths(data);
		p1 = paths(s1);
		CHECK_STR(p1, p0);
		t2 = classfs_tree_new(layout);
		CHECK_INT(load_text(t2, s1 ? s1 : "", &err), 0);
		s2 = cfs_test_save(t2);
		CHECK(s1 && s2 && !strcmp(s1, s2));
		free(p0);
		free(p1);
		free(s1);
		free(s2);
		teardown(t2);
		teardown(t);
	}
	free(data);
}

TEST(records_share_a_virtual_bus_root)
{
	static const char a[] = "P: /devices/virtual/workqueue/a\nE: SUBSYSTEM=workqueue\n";
	static const char b[] = "P: /devices/virtual/workqueue/b\nE: SUBSYSTEM=workqueue\n"
				"A: max_active=1\\n\n";

	for (int layout = 0; layout < 2; layout++) {
		struct classfs_tree *t = classfs_tree_new(layout);
		struct classfs_record_error err;
		struct classfs_device *da, *db;
		char *s;

		CHECK_INT(load_text(t, a, &err), 0);
		CHECK_INT(load_text(t, b, &err), 0);
		da = classfs_tree_find_device(t, "/devices/virtual/workqueue/a");
		db = classfs_tree_find_device(t, "/devices/virtual/workqueue/b");
		/* one root device (class layout), one plain directory (devices layout) */
		CHECK(da && db && (layout == CLASSFS_LAYOUT_CLASS ? da->parent != NULL : !da->parent) &&
		      da->parent == db->parent);
		classfs_device_put(da);
		classfs_device_put(db);
		s = cfs_test_save(t);
		CHECK(s && !strcmp(s, "P: /devices/virtual/workqueue/a\nE: SUBSYSTEM=workqueue\n\n"
				  "P: /devices/virtual/workqueue/b\nA: max_active=1\\n\n"
				  "E: SUBSYSTEM=workqueue\n\n"));
		if (s && strcmp(s, "P: /devices/virtual/workqueue/a\nE: SUBSYSTEM=workqueue\n\n"
				   "P: /devices/virtual/workqueue/b\nA: max_active=1\\n\n"
				   "E: SUBSYSTEM=workqueue\n\n"))
			fprintf(stderr, "  saved:\n%s", s);
		free(s);
		teardown(t);
	}
}

TEST(virtual_paths_that_are_no_device_are_refused)
{
	static const struct {
		const char *text;
		unsigned long line;
		const char *why;
		bool class_only;	/* the devices layout takes the paths as recorded */
	} bad[] = {
		{ "P: /devices/virtual\nA: x=1\\n\n", 1, "/devices/virtual is not a device", false },
		{ "P: /devices/virtual/workqueue\nE: SUBSYSTEM=workqueue\n", 1,
		  "right below /devices/virtual", true },
		/* the class's glue directory and the bus's root at one path */
		{ "P: /devices/virtual/wq/x\nE: SUBSYSTEM=wq\n\n"
		  "P: /devices/virtual/wq/y\nE: SUBSYSTEM=workqueue\n", 1,
		  "is both a device and the 'wq' glue directory", true },
	};

	for (int layout = 0; layout < 2; layout++)
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct classfs_tree *t = classfs_tree_new(layout);
			struct classfs_record_options opt = { .filename = "<bad>" };
			struct classfs_record_error err;
			size_t base = classfs_tree_node_count(t);

			if (bad[i].class_only && layout == CLASSFS_LAYOUT_DEVICES) {
				CHECK_INT(classfs_record_load(t, bad[i].text, strlen(bad[i].text), &opt,
							      &err), 0);
				teardown(t);
				continue;
			}

			CHECK_INT(classfs_record_load(t, bad[i].text, strlen(bad[i].text), &opt, &err),
				  -EINVAL);
			CHECK_INT((int)err.line, (int)bad[i].line);
			CHECK(strstr(err.reason, bad[i].why) != NULL);
			if (!strstr(err.reason, bad[i].why))
				fprintf(stderr, "  reason: %s\n", err.reason);
			CHECK_INT((int)classfs_tree_node_count(t), (int)base);
			teardown(t);
		}
}

/* one name both a file and a directory ("x" and "x/y"): Linux has no such device */
TEST(entry_and_directory_of_one_name_refused)
{
	static const char *const bad[] = {
		"P: /devices/a\nA: power=1\\n\nA: power/control=auto\\n\n",
		"P: /devices/a\nA: x-1=1\\n\nA: x/y=2\\n\nA: x=1\\n\n",
		"P: /devices/a\nH: x=00\nA: x/y=1\\n\n",
		"P: /devices/a\nL: x=../b\nA: x/y/z=1\\n\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
		struct classfs_record_options opt = { .filename = "<bad>" };
		struct classfs_record_error err;
		size_t base = classfs_tree_node_count(t);

		CHECK_INT(classfs_record_load(t, bad[i], strlen(bad[i]), &opt, &err), -EINVAL);
		CHECK(strstr(err.reason, "is both an entry and the directory of") != NULL);
		CHECK_INT((int)classfs_tree_node_count(t), (int)base);
		teardown(t);
	}
}

/* ---- random devices made as classfsd makes them ---- */

#define MAXDEV 64
#define MAXATTR 4

struct rdev {
	struct classfs_device dev;
	struct classfs_device_type type;
	struct classfs_attribute_group groups[MAXATTR];
	const struct classfs_attribute_group *gptr[MAXATTR + 1];
	struct classfs_device_attribute attrs[MAXATTR];
	const struct classfs_device_attribute *aptr[2 * MAXATTR];
	char names[MAXATTR][16], dirs[MAXATTR][16], values[MAXATTR][16];
	char name[16];
};

static ssize_t rattr_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	struct rdev *rd = (struct rdev *)dev;
	size_t i = (size_t)(a - rd->attrs);

	return (ssize_t)snprintf(buf, 64, "%s\n", rd->values[i]);
}

static void rdev_release(struct classfs_device *dev)
{
	free(dev);
}

static unsigned int seed = 12;

static unsigned int rnd(unsigned int n)
{
	seed = seed * 1103515245u + 12345u;
	return (seed >> 16) % n;
}

static const char *pick(const char *const *v, size_t n)
{
	return v[rnd((unsigned int)n)];
}

/*
 * Attributes "name" or "dir/name", grouped by directory as classfsd
 * groups them.  No `dev`: a record reads one as the device number, and
 * classfsd refuses it (the tree makes `dev` from the number itself).
 */
static void random_attrs(struct rdev *rd)
{
	static const char *const pool[] = { "x", "x/y", "y", "power/dev", "uevent", "subsystem",
					    "device", "power/control", "power/x", "block", "v",
					    "size" };
	static const char *const vals[] = { "1", "a b", "", "8:1", "0x8086" };
	unsigned int n = rnd(MAXATTR + 1), ng = 0, k = 0;

	for (unsigned int i = 0; i < n; i++) {
		const char *p = pick(pool, sizeof(pool) / sizeof(pool[0]));
		const char *slash = strchr(p, '/');

		snprintf(rd->dirs[i], sizeof(rd->dirs[i]), "%.*s", slash ? (int)(slash - p) : 0, p);
		snprintf(rd->names[i], sizeof(rd->names[i]), "%s", slash ? slash + 1 : p);
		snprintf(rd->values[i], sizeof(rd->values[i]), "%s",
			 pick(vals, sizeof(vals) / sizeof(vals[0])));
		rd->attrs[i] = (struct classfs_device_attribute){
			.attr = { .name = rd->names[i], .mode = 0444 }, .show = rattr_show };
	}
	/* one group per directory, the device's own ("") first if any */
	for (unsigned int i = 0; i < n; i++) {
		bool seen = false;

		for (unsigned int j = 0; j < i; j++)
			seen |= !strcmp(rd->dirs[j], rd->dirs[i]);
		if (seen)
			continue;
		rd->groups[ng] = (struct classfs_attribute_group){
			.name = rd->dirs[i][0] ? rd->dirs[i] : NULL, .attrs = &rd->aptr[k] };
		for (unsigned int j = i; j < n; j++)
			if (!strcmp(rd->dirs[j], rd->dirs[i]))
				rd->aptr[k++] = &rd->attrs[j];
		rd->aptr[k++] = NULL;
		rd->gptr[ng] = &rd->groups[ng];
		ng++;
	}
	rd->gptr[ng] = NULL;
	rd->type.groups = ng ? rd->gptr : NULL;
}

static struct classfs_device *random_of(struct classfs_device **devs, int n, bool want_cls,
					struct classfs_class *cls)
{
	for (int tries = 0; n && tries < 8; tries++) {
		struct classfs_device *d = devs[rnd((unsigned int)n)];

		if (want_cls ? d->cls == cls : !d->cls)
			return d;
	}
	return NULL;
}

static int random_tree(struct classfs_tree *t, struct classfs_class **classes,
		       struct classfs_bus *buses, struct classfs_device **devs)
{
	static const char *const names[] = { "virtual", "sda", "sda1", "block", "v", "dev",
					     "writeback", "workqueue", "x", "pci" };
	static const char *const devtypes[] = { NULL, "disk", "usb_device" };
	int n = 0;

	for (int i = 0; i < 4 * MAXDEV && n < MAXDEV; i++) {
		struct rdev *rd = calloc(1, sizeof(*rd));
		unsigned int kind = rnd(4);
		int r;

		classfs_device_initialize(&rd->dev);
		rd->dev.release = rdev_release;
		random_attrs(rd);
		rd->type.name = pick(devtypes, 3);
		rd->dev.type = rd->type.groups || rd->type.name ? &rd->type : NULL;
		rd->dev.devt = rnd(2) ? makedev(8 + rnd(2) * 181, (unsigned int)i) : 0;
		if (rnd(3) == 0)
			snprintf(rd->name, sizeof(rd->name), "%s", pick(names, 10));
		else
			snprintf(rd->name, sizeof(rd->name), "n%d", i);
		classfs_device_set_name_static(&rd->dev, rd->name);
		if (kind == 0) {		/* a class device */
			rd->dev.cls = classes[rnd(3)];
			if (rnd(3) == 0)
				rd->dev.parent = random_of(devs, n, true, rd->dev.cls);
			else if (rnd(2))
				rd->dev.phys = random_of(devs, n, false, NULL);
			r = classfs_device_add(&rd->dev);
		} else if (kind == 1) {		/* a bus device */
			rd->dev.bus = &buses[rnd(2)];
			rd->dev.parent = random_of(devs, n, false, NULL);
			r = classfs_device_add(&rd->dev);
		} else if (kind == 2) {		/* a plain device */
			rd->dev.parent = rnd(2) ? random_of(devs, n, false, NULL) : NULL;
			r = rd->dev.parent ? classfs_device_add(&rd->dev)
					   : classfs_device_add_to(t, &rd->dev);
		} else {			/* the root of a virtual bus */
			r = classfs_device_add_virtual(t, &rd->dev);
		}
		if (r < 0) {
			classfs_device_put(&rd->dev);
			continue;
		}
		devs[n++] = &rd->dev;
	}
	/* renames, as classfsd's rename does them; those refused change nothing */
	for (int i = 0; i < MAXDEV / 4 && n; i++)
		classfs_device_rename(devs[rnd((unsigned int)n)], pick(names, 10));
	return n;
}

TEST(what_the_tree_accepts_saves_and_loads_back)
{
	size_t len;
	char *machine = slurp("debian12-vm.umockdev", &len);

	for (int round = 0; round < 200; round++) {
		int layout = round & 1;
		struct classfs_tree *t = classfs_tree_new(layout), *t2;
		struct classfs_class *classes[3] = {
			classfs_class_create(t, "v"), classfs_class_create(t, "block"),
			classfs_class_create(t, "workqueue") };
		struct classfs_bus buses[2] = { { .name = "pci" }, { .name = "workqueue" } };
		struct classfs_device *devs[MAXDEV];
		struct classfs_record_error err;
		char *s1, *s2;
		int n;

		CHECK_INT(classfs_bus_register(t, &buses[0]), 0);
		CHECK_INT(classfs_bus_register(t, &buses[1]), 0);
		/* every fourth tree holds a real machine's devices too */
		if (machine && round % 4 == 2)
			CHECK_INT(load_text(t, machine, &err), 0);
		n = random_tree(t, classes, buses, devs);
		s1 = cfs_test_save(t);
		CHECK(s1 != NULL);
		t2 = classfs_tree_new(layout);
		CHECK_INT(load_text(t2, s1 ? s1 : "", &err), 0);
		s2 = cfs_test_save(t2);
		CHECK(s1 && s2 && !strcmp(s1, s2));
		if (s1 && s2 && strcmp(s1, s2))
			fprintf(stderr, "  round %d (seed %u): saved\n%s  then\n%s", round, seed, s1, s2);
		free(s1);
		free(s2);
		teardown(t2);
		for (int i = n; i-- > 0;)
			if (classfs_device_is_added(devs[i]))
				classfs_device_unregister(devs[i]);
		classfs_record_unload(t);
		for (int i = 0; i < 3; i++)
			classfs_class_destroy(classes[i]);
		classfs_bus_unregister(&buses[0]);
		classfs_bus_unregister(&buses[1]);
		CHECK_INT(classfs_tree_free(t), 0);
	}
	free(machine);
}

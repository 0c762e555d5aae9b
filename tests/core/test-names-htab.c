// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-names-htab.c - entry names and the hashed directories: which names
 * are valid, lookups in a class of 200,000 devices, and readdir offsets
 * that stay valid while the directory changes between batches.
 */
#include <limits.h>

#include "../harness.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "../native-util.h"

TEST(name_valid)
{
	char name[NAME_MAX + 2];

	CHECK_INT(classfs_name_valid(NULL), -EINVAL);
	CHECK_INT(classfs_name_valid(""), -EINVAL);
	CHECK_INT(classfs_name_valid("."), -EINVAL);
	CHECK_INT(classfs_name_valid(".."), -EINVAL);
	CHECK_INT(classfs_name_valid("/"), -EINVAL);
	CHECK_INT(classfs_name_valid("a/b"), -EINVAL);
	CHECK_INT(classfs_name_valid("sda/"), -EINVAL);
	CHECK_INT(classfs_name_valid("/sda"), -EINVAL);
	CHECK_INT(classfs_name_valid("a\nb"), -EINVAL);
	CHECK_INT(classfs_name_valid("\x01"), -EINVAL);
	CHECK_INT(classfs_name_valid("tab\there"), -EINVAL);
	CHECK_INT(classfs_name_valid("x\x1f"), -EINVAL);
	CHECK_INT(classfs_name_valid("del\x7f"), -EINVAL);

	CHECK_INT(classfs_name_valid("sda"), 0);
	CHECK_INT(classfs_name_valid("..."), 0);
	CHECK_INT(classfs_name_valid(".hidden"), 0);
	CHECK_INT(classfs_name_valid("a.."), 0);
	CHECK_INT(classfs_name_valid("with space"), 0);
	CHECK_INT(classfs_name_valid("block:sda"), 0);
	CHECK_INT(classfs_name_valid("spi-ELAN7001:00"), 0);
	CHECK_INT(classfs_name_valid("caf\xc3\xa9"), 0);
	/* names are UTF-8: every form RFC 3629 allows, none it does not */
	CHECK_INT(classfs_name_valid("\xf0\x9f\x98\x80"), 0);	/* U+1F600 */
	CHECK_INT(classfs_name_valid("\xef\xbf\xbd"), 0);		/* U+FFFD */
	CHECK_INT(classfs_name_valid("\xf4\x8f\xbf\xbf"), 0);	/* U+10FFFF */
	CHECK_INT(classfs_name_valid("hx\xff"), -EINVAL);		/* the issue's */
	CHECK_INT(classfs_name_valid("caf\xe9"), -EINVAL);		/* Latin-1 */
	CHECK_INT(classfs_name_valid("\xc0\xaf"), -EINVAL);		/* overlong '/' */
	CHECK_INT(classfs_name_valid("\xe0\x80\xaf"), -EINVAL);	/* overlong */
	CHECK_INT(classfs_name_valid("\xed\xa0\x80"), -EINVAL);	/* surrogate */
	CHECK_INT(classfs_name_valid("\xf4\x90\x80\x80"), -EINVAL);	/* past U+10FFFF */
	CHECK_INT(classfs_name_valid("x\xe2\x82"), -EINVAL);		/* cut short */
	CHECK_INT(classfs_name_valid("\x80x"), -EINVAL);		/* a lone continuation */

	memset(name, 'a', sizeof(name));
	name[NAME_MAX] = '\0';			/* 255 bytes */
	CHECK_INT(classfs_name_valid(name), 0);
	name[NAME_MAX] = 'a';
	name[NAME_MAX + 1] = '\0';		/* 256 bytes */
	CHECK_INT(classfs_name_valid(name), -EINVAL);
}

/* the constructors check names the same way and change nothing on error */
TEST(names_through_the_api)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls;
	struct classfs_device *d;
	struct classfs_device dev = { 0 };
	char name[NAME_MAX + 2], path[600];
	size_t base = classfs_tree_node_count(t);
	static const char *const bad[] = { "", ".", "..", "a/b", "x\n", "\x7f" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(classfs_class_create(t, bad[i]) == NULL);
		CHECK_INT(errno, EINVAL);
	}
	CHECK_INT(classfs_tree_node_count(t), base);

	cls = classfs_class_create(t, "names");
	CHECK(cls != NULL);
	base = classfs_tree_node_count(t);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		CHECK(classfs_device_create(cls, NULL, 0, NULL, NULL, "%s", bad[i]) == NULL);
		CHECK_INT(errno, EINVAL);
		classfs_device_initialize(&dev);
		CHECK_INT(classfs_device_set_name(&dev, "%s", bad[i]), -EINVAL);
		CHECK_INT(classfs_device_set_name_static(&dev, bad[i]), -EINVAL);
		CHECK(classfs_device_name(&dev) == NULL);
		dev.cls = cls;
		CHECK_INT(classfs_device_add(&dev), -EINVAL);	/* never named */
		classfs_device_put(&dev);
	}
	CHECK_INT(classfs_tree_node_count(t), base);

	/* NAME_MAX bytes is fine, one more is not (no silent truncation) */
	memset(name, 'n', sizeof(name));
	name[NAME_MAX] = '\0';
	d = classfs_device_create(cls, NULL, 0, NULL, NULL, "%s", name);
	CHECK(d != NULL);
	CHECK_STR(classfs_device_name(d), name);
	snprintf(path, sizeof(path), "class/names/%s", name);
	CHECK_INT(ftype(t, "%s", path), CLASSFS_FT_DIR);
	CHECK_STR(rd(t, "%s/uevent", path), "");
	name[NAME_MAX] = 'n';
	name[NAME_MAX + 1] = '\0';
	errno = 0;
	CHECK(classfs_device_create(cls, NULL, 0, NULL, NULL, "%s", name) == NULL);
	CHECK_INT(errno, EINVAL);
	CHECK_INT(classfs_device_rename(d, name), -EINVAL);
	CHECK_INT(classfs_device_rename(d, "a/b"), -EINVAL);
	CHECK_INT(classfs_device_rename(d, ""), -EINVAL);
	CHECK_INT(classfs_device_rename(d, ".."), -EINVAL);
	CHECK_INT(ftype(t, "%s", path), CLASSFS_FT_DIR);
	CHECK_INT(classfs_path_stat(t, "class/names/nope", &(struct classfs_stat){ 0 }), -ENOENT);
	classfs_device_unregister(d);

	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- a class of 200,000 devices ---- */

#define BIG_N 200000
#define BIG_NESTED 1000
#define BATCH 100

struct listing {
	int *seen;		/* per initial device */
	int *seen_nested;	/* per nested child */
	int *seen_new;		/* per device added during the listing */
	int nnew;
	int count;		/* entries taken in this batch */
	bool stopped;
	uint64_t next;
	int unknown;
};

static int batch_fill(void *ctx, const char *name, const struct classfs_stat *st, uint64_t next)
{
	struct listing *l = ctx;
	int i;

	(void)st;
	if (l->count == BATCH) {
		l->stopped = true;
		return 1;	/* not consumed: resume from the previous entry's offset */
	}
	if (sscanf(name, "d%d", &i) == 1 && i >= 0 && i < BIG_N)
		l->seen[i]++;
	else if (sscanf(name, "c%d", &i) == 1 && i >= 0 && i < BIG_NESTED)
		l->seen_nested[i]++;
	else if (sscanf(name, "x%d", &i) == 1 && i >= 0 && i < l->nnew)
		l->seen_new[i]++;
	else
		l->unknown++;
	l->count++;
	l->next = next;
	return 0;
}

static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1664525u + 1013904223u;
	return *s >> 8;
}

static void big_class(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *cls = classfs_class_create(t, "big");
	struct classfs_device **dev = calloc(BIG_N, sizeof(*dev));
	struct classfs_device **nested = calloc(BIG_NESTED, sizeof(*nested));
	struct classfs_device **added = calloc(BIG_N, sizeof(*added));
	struct listing l = { 0 };
	struct classfs_stat st;
	size_t base = classfs_tree_node_count(t);
	int bad = 0, batches = 0, nremoved = 0;
	int *vol = calloc(BIG_N, sizeof(int)), nvol = 0;
	bool *removed = calloc(BIG_N, sizeof(bool));
	uint32_t seed = 12345;

	CHECK(cls != NULL);
	for (int i = 0; i < BIG_N; i++) {
		dev[i] = classfs_device_create(cls, NULL, makedev(240, i), NULL, NULL, "d%06d", i);
		if (!dev[i]) {
			CHECK(dev[i] != NULL);
			return;
		}
		if (i % 10 == 7)
			vol[nvol++] = i;	/* may go away during the listing */
	}
	for (int i = 0; i < BIG_NESTED; i++) {
		nested[i] = classfs_device_create(cls, dev[i * 10], 0, NULL, NULL, "c%d", i);
		CHECK(nested[i] != NULL);
	}

	/* every device is found by path and by name */
	for (int i = 0; i < BIG_N; i++) {
		char path[64];

		snprintf(path, sizeof(path), "class/big/d%06d", i);
		if (classfs_path_stat(t, path, &st) < 0 ||
		    st.type != (layout == CLASSFS_LAYOUT_CLASS ? CLASSFS_FT_DIR : CLASSFS_FT_LNK))
			bad++;
		if (ftype(t, "%s/", path) != CLASSFS_FT_DIR)
			bad++;
		if (i % 997 == 0) {
			struct classfs_device *f = classfs_class_find_device(cls, path + 10);
			char want[32];

			CHECK(f == dev[i]);
			classfs_device_put(f);
			snprintf(want, sizeof(want), "240:%d\n", i);
			CHECK_STR(rd(t, "%s/dev", path), want);
			f = classfs_class_find_device_by_devt(cls, makedev(240, i));
			CHECK(f == dev[i]);
			classfs_device_put(f);
		}
	}
	CHECK_INT(bad, 0);
	for (int i = 0; i < BIG_NESTED; i += 7) {
		CHECK_INT(ftype(t, "class/big/d%06d/c%d", i * 10, i), CLASSFS_FT_DIR);
		CHECK_INT(ftype(t, "class/big/c%d", i), CLASSFS_FT_LNK);
		CHECK_INT(ftype(t, "class/big/c%d/", i), CLASSFS_FT_DIR);
	}
	CHECK(!exists(t, "class/big/d%06d", BIG_N));
	CHECK_INT(nentries(t, "class/big"), BIG_N + BIG_NESTED);

	/* a listing in batches of 100, the class changing between batches */
	l.seen = calloc(BIG_N, sizeof(int));
	l.seen_nested = calloc(BIG_NESTED, sizeof(int));
	l.seen_new = calloc(BIG_N, sizeof(int));
	CHECK_INT(classfs_path_stat(t, "class/big", &st), 0);
	l.next = 0;
	for (;;) {
		int r;

		l.count = 0;
		l.stopped = false;
		r = classfs_readdir(t, st.ino, l.next, batch_fill, &l);
		if (r < 0) {
			CHECK_INT(r, 0);
			break;
		}
		batches++;
		if (!l.stopped)
			break;
		/* churn: three volatile devices go, three new ones come */
		for (int k = 0; k < 3 && nremoved < nvol; k++) {
			int j = (int)(lcg(&seed) % (uint32_t)nvol), i;

			while (removed[vol[j]])
				j = (j + 1) % nvol;
			i = vol[j];
			removed[i] = true;
			nremoved++;
			CHECK_INT(classfs_device_unregister(dev[i]), 0);
			dev[i] = NULL;
		}
		for (int k = 0; k < 3 && l.nnew < BIG_N; k++) {
			added[l.nnew] = classfs_device_create(cls, NULL, 0, NULL, NULL, "x%d", l.nnew);
			CHECK(added[l.nnew] != NULL);
			l.nnew++;
		}
	}
	CHECK(batches > BIG_N / BATCH);
	CHECK_INT(l.unknown, 0);
	{
		int missed = 0, twice = 0, vol_twice = 0, new_twice = 0, nested_bad = 0;

		for (int i = 0; i < BIG_N; i++) {
			if (!removed[i] && l.seen[i] != 1) {
				if (missed + twice < 5)
					fprintf(stderr, "  d%06d seen %d times\n", i, l.seen[i]);
				l.seen[i] ? twice++ : missed++;
			}
			if (removed[i] && l.seen[i] > 1)
				vol_twice++;
		}
		for (int i = 0; i < BIG_NESTED; i++)
			nested_bad += l.seen_nested[i] != 1;
		for (int i = 0; i < l.nnew; i++)
			new_twice += l.seen_new[i] > 1;
		CHECK_INT(missed, 0);
		CHECK_INT(twice, 0);
		CHECK_INT(vol_twice, 0);
		CHECK_INT(new_twice, 0);
		CHECK_INT(nested_bad, 0);
	}
	CHECK(nremoved > 1000);
	CHECK_INT(nentries(t, "class/big"), BIG_N - nremoved + l.nnew + BIG_NESTED);
	for (int i = 0; i < BIG_N; i += 101) {
		CHECK(exists(t, "class/big/d%06d", i) == !removed[i]);
		CHECK(exists(t, "dev/char/240:%d", i) == !removed[i]);
	}

	/* the class goes with everything in it */
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_node_count(t), base - 1);
	CHECK(!exists(t, "class/big"));
	CHECK_INT(nentries(t, "dev/char"), 0);
	CHECK_INT(classfs_tree_free(t), 0);
	free(dev);
	free(nested);
	free(added);
	free(vol);
	free(removed);
	free(l.seen);
	free(l.seen_nested);
	free(l.seen_new);
}

TEST(big_class_layout_class)
{
	big_class(CLASSFS_LAYOUT_CLASS);
}

TEST(big_class_layout_devices)
{
	big_class(CLASSFS_LAYOUT_DEVICES);
}

/* ---- names whose hashes are equal (under the library's current name hash) ---- */

struct one_by_one {
	char names[64][32];
	int n;
	uint64_t next;
	bool stopped;
	int taken;
};

static int one_fill(void *ctx, const char *name, const struct classfs_stat *st, uint64_t next)
{
	struct one_by_one *o = ctx;

	(void)st;
	if (o->taken == 1) {
		o->stopped = true;
		return 1;
	}
	if (o->n < 64)
		snprintf(o->names[o->n++], sizeof(o->names[0]), "%s", name);
	o->taken++;
	o->next = next;
	return 0;
}

/* list a directory one entry per call; each name must come exactly once */
static void list_one_by_one(struct classfs_tree *t, const char *dir, const char *const *want,
			    int nwant)
{
	struct one_by_one o = { 0 };
	struct classfs_stat st;
	int calls = 0;

	CHECK_INT(classfs_path_stat(t, dir, &st), 0);
	do {
		o.taken = 0;
		o.stopped = false;
		CHECK_INT(classfs_readdir(t, st.ino, o.next, one_fill, &o), 0);
	} while (o.stopped && ++calls < 1000);
	CHECK_INT(o.n, nwant);
	for (int i = 0; i < nwant; i++) {
		int seen = 0;

		for (int k = 0; k < o.n; k++)
			seen += !strcmp(o.names[k], want[i]);
		if (seen != 1)
			fprintf(stderr, "  %s/%s listed %d times\n", dir, want[i], seen);
		CHECK_INT(seen, 1);
	}
}

static void collisions(enum classfs_layout layout)
{
	/* pairs with one 32-bit name hash each (FNV-1a + murmur3 finalizer) */
	static const char *const top[] = { "n562389", "n1287856", "n1681953", "n2318418",
					   "c1036138", "c2718891" };
	static const char *const kids[] = { "n1376796", "n2837829" };
	static const char *const all[] = { "n562389", "n1287856", "n1681953", "n2318418",
					   "c1036138", "c2718891", "n1376796", "n2837829" };
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *cls = classfs_class_create(t, "coll");
	struct classfs_device *d[8];

	for (int i = 0; i < 6; i++)
		d[i] = classfs_device_create(cls, NULL, 0, NULL, NULL, "%s", top[i]);
	d[6] = classfs_device_create(cls, d[0], 0, NULL, NULL, "%s", kids[0]);
	d[7] = classfs_device_create(cls, d[1], 0, NULL, NULL, "%s", kids[1]);
	for (int i = 0; i < 8; i++)
		CHECK(d[i] != NULL);
	for (int i = 0; i < 6; i++) {
		struct classfs_device *f = classfs_class_find_device(cls, top[i]);

		CHECK(f == d[i]);
		classfs_device_put(f);
		CHECK_INT(ftype(t, "class/coll/%s/", top[i]), CLASSFS_FT_DIR);
	}
	CHECK_INT(ftype(t, "class/coll/%s/%s", top[0], kids[0]), CLASSFS_FT_DIR);
	CHECK(!exists(t, "class/coll/%s/%s", top[1], kids[0]));

	list_one_by_one(t, "class/coll", all, 8);
	if (layout == CLASSFS_LAYOUT_DEVICES)
		list_one_by_one(t, "devices/virtual/coll", top, 6);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(readdir_equal_hashes_layout_class)
{
	collisions(CLASSFS_LAYOUT_CLASS);
}

TEST(readdir_equal_hashes_layout_devices)
{
	collisions(CLASSFS_LAYOUT_DEVICES);
}

/* readdir of a non-directory and of a stale directory */
TEST(readdir_errors)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *cls = classfs_class_create(t, "e");
	struct classfs_device *d = classfs_device_create(cls, NULL, 0, NULL, NULL, "d");
	struct classfs_stat dir, file;
	struct one_by_one o = { 0 };

	CHECK_INT(classfs_path_stat(t, "class/e/d", &dir), 0);
	CHECK_INT(classfs_path_stat(t, "class/e/d/uevent", &file), 0);
	CHECK_INT(classfs_readdir(t, file.ino, 0, one_fill, &o), -ENOTDIR);
	CHECK_INT(classfs_readdir(t, dir.ino, 0, NULL, &o), -EINVAL);
	classfs_device_unregister(d);
	CHECK_INT(classfs_readdir(t, dir.ino, 0, one_fill, &o), -ENOENT);
	CHECK_INT(classfs_getattr(t, dir.ino, &dir), -ENOENT);
	CHECK_INT(classfs_path_list(t, "class/e/d", NULL, NULL), -ENOENT);
	CHECK_INT(classfs_path_list(t, "class/e", NULL, NULL), 0);
	classfs_class_destroy(cls);
	CHECK_INT(classfs_tree_free(t), 0);
}

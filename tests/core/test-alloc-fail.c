// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-alloc-fail.c - every allocation of a scenario fails in turn (the
 * Nth, for N = 1, 2, ... until the scenario runs through): the call that
 * met the failure returns -ENOMEM (constructors NULL with errno ENOMEM)
 * and the tree is exactly as before it (node count, every path and link,
 * SEQNUM, no event); removals cannot fail and still send every REMOVE.
 * Entries made through the filesystem too (plain.c): mkdir, create, a
 * write, symlink, rename, and hiding a device's attribute.
 * Leaks are LeakSanitizer's to find (./check.sh runs this under ASan).
 */
#include "../harness.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "../native-util.h"

/* ---- the hook ---- */

static long alloc_count, fail_at;
static bool fired;

static bool fail_nth(size_t size, void *data)
{
	(void)size;
	(void)data;
	if (++alloc_count == fail_at) {
		fired = true;
		return false;
	}
	return true;
}

static void arm(void)
{
	classfs_set_alloc_hook(fail_nth, NULL);
}

static void disarm(void)
{
	classfs_set_alloc_hook(NULL, NULL);
}

/* ---- a snapshot of a tree: every path, its type, link targets and values ---- */

struct snap {
	char *s;
	size_t len, cap;
};

static void snap_add(struct snap *sn, const char *line)
{
	size_t l = strlen(line);

	if (sn->len + l + 2 > sn->cap) {
		sn->cap = (sn->len + l + 2) * 2;
		sn->s = realloc(sn->s, sn->cap);
	}
	memcpy(sn->s + sn->len, line, l);
	sn->len += l;
	sn->s[sn->len++] = '\n';
	sn->s[sn->len] = '\0';
}

struct names {
	char *v[256];
	int type[256];
	int n;
};

static int collect(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct names *ns = ctx;

	if (ns->n < 256) {
		ns->v[ns->n] = strdup(name);
		ns->type[ns->n++] = (int)st->type;
	}
	return 0;
}

static void snap_dir(struct classfs_tree *t, const char *dir, struct snap *sn, int depth)
{
	struct names ns = { .n = 0 };
	int order[256];

	if (classfs_path_list(t, dir, collect, &ns) < 0) {
		snap_add(sn, "(unlistable)");
		return;
	}
	/* by name: the listing's order is the hash's */
	for (int i = 0; i < ns.n; i++) {
		int k = i;

		while (k > 0 && strcmp(ns.v[order[k - 1]], ns.v[i]) > 0) {
			order[k] = order[k - 1];
			k--;
		}
		order[k] = i;
	}
	for (int j = 0; j < ns.n; j++) {
		int i = order[j];
		char path[1024], line[4200], val[64];

		snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", ns.v[i]);
		if (ns.type[i] == CLASSFS_FT_LNK) {
			snprintf(line, sizeof(line), "%s -> %s", path, lnk(t, "%s", path));
		} else if (ns.type[i] == CLASSFS_FT_REG) {
			snprintf(val, sizeof(val), "%s", rd(t, "%s", path));
			for (char *p = val; *p; p++)
				if (*p == '\n')
					*p = '|';
			snprintf(line, sizeof(line), "%s = %s", path, val);
		} else {
			snprintf(line, sizeof(line), "%s/", path);
		}
		snap_add(sn, line);
		if (ns.type[i] == CLASSFS_FT_DIR && depth < 32)
			snap_dir(t, path, sn, depth + 1);
	}
	for (int i = 0; i < ns.n; i++)
		free(ns.v[i]);
}

static char *snapshot(struct classfs_tree *t)
{
	struct snap sn = { 0 };
	char head[64];

	snprintf(head, sizeof(head), "nodes %zu seqnum %llu", classfs_tree_node_count(t),
		 (unsigned long long)classfs_tree_seqnum(t));
	snap_add(&sn, head);
	snap_dir(t, "", &sn, 0);
	return sn.s;
}

/* ---- the scenario ---- */

static ssize_t ver_show(struct classfs_class *c, const struct classfs_class_attribute *a, char *buf)
{
	(void)c;
	(void)a;
	return sprintf(buf, "7\n");
}

static ssize_t show(struct classfs_device *dev, const struct classfs_device_attribute *a, char *buf)
{
	(void)dev;
	return sprintf(buf, "%s\n", a->attr.name);
}

static int hook(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	(void)dev;
	return classfs_uevent_add_var(env, "HOOK=1");
}

static const struct classfs_class_attribute ver = { { "version", 0444 }, ver_show, NULL };
static const struct classfs_class_attribute *const cattrs[] = { &ver, NULL };
static const struct classfs_device_attribute da = { { "da", 0444 }, show, NULL };
static const struct classfs_device_attribute db = { { "db", 0444 }, show, NULL };
static const struct classfs_device_attribute later = { { "later", 0444 }, show, NULL };
static const struct classfs_device_attribute *const dattrs[] = { &da, NULL };
static const struct classfs_device_attribute *const gattrs[] = { &db, NULL };
static const struct classfs_attribute_group dgrp = { NULL, dattrs, NULL };
static const struct classfs_attribute_group ngrp = { "ngrp", gattrs, NULL };
static const struct classfs_attribute_group *const dgroups[] = { &dgrp, &ngrp, NULL };
static const struct classfs_attribute_group extra_grp = { "extra", dattrs, NULL };
static const struct classfs_attribute_group extra_flat = { NULL, gattrs, NULL };

static int intf_adds;

static int intf_add(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)dev;
	(void)intf;
	intf_adds++;
	return 0;
}

struct world {
	struct classfs_tree *t;
	struct classfs_class cls;
	struct classfs_class *cls2;
	struct classfs_device pdev;
	struct classfs_device *parent, *child;
	struct classfs_interface intf;
	struct recorder rec;
	bool registered;
};

enum { ST_CLASS, ST_CLASS2, ST_PARENT, ST_CHILD, ST_FILE, ST_RENAME_CHILD, ST_RENAME_PARENT,
       ST_GROUP, ST_FLAT_GROUP, ST_UEVENT, ST_INTF, ST_UEVENT_FILE, ST_READ, ST_MKDIR, ST_CREATE,
       ST_WRITE, ST_SYMLINK, ST_RENAME_FILE, ST_HIDE, ST_COUNT };

static const char *const step_names[] = {
	"class_register", "class_create", "create parent", "create child", "create_file",
	"rename child", "rename parent", "create_group", "create_group (flat)",
	"device_uevent", "interface_register", "write uevent file", "path_read",
	"mkdir", "create", "write a made file", "symlink", "rename a made file", "hide an attribute",
};

/* the inode numbers of @a and @b (NULL: not wanted); 0 or classfs_path_stat()'s error */
static int inos(struct classfs_tree *t, const char *a, uint64_t *ia, const char *b, uint64_t *ib)
{
	struct classfs_stat st;
	int r = classfs_path_stat(t, a, &st);

	*ia = st.ino;
	if (r == 0 && b) {
		r = classfs_path_stat(t, b, &st);
		*ib = st.ino;
	}
	return r;
}

/* run step @s; 0 or -errno */
static int step(struct world *w, int s)
{
	uint64_t d, d2;

	switch (s) {
	case ST_CLASS:
		return classfs_class_register(w->t, &w->cls);
	case ST_CLASS2:
		errno = 0;
		w->cls2 = classfs_class_create(w->t, "af2");
		return w->cls2 ? 0 : -errno;
	case ST_PARENT:
		errno = 0;
		w->parent = classfs_device_create(&w->cls, NULL, makedev(8, 0), &w->pdev, NULL,
						  "parent");
		return w->parent ? 0 : -errno;
	case ST_CHILD:
		errno = 0;
		w->child = classfs_device_create(&w->cls, w->parent, makedev(8, 1), NULL, NULL,
						 "child");
		return w->child ? 0 : -errno;
	case ST_FILE:
		return classfs_device_create_file(w->child, &later);
	case ST_RENAME_CHILD:
		return classfs_device_rename(w->child, "renamed");
	case ST_RENAME_PARENT:
		return classfs_device_rename(w->parent, "newparent");
	case ST_GROUP:
		return classfs_device_create_group(w->parent, &extra_grp);
	case ST_FLAT_GROUP:
		return classfs_device_create_group(w->child, &extra_flat);
	case ST_UEVENT:
		return classfs_device_uevent(w->parent, CLASSFS_ACTION_CHANGE, NULL);
	case ST_INTF:
		return classfs_interface_register(&w->intf);
	case ST_UEVENT_FILE: {
		ssize_t r = wr(w->t, "class/af/newparent/uevent", "add 12345678-1234-1234-1234-123456789abc A=1");

		return r < 0 ? (int)r : 0;
	}
	case ST_READ: {
		char buf[64];
		ssize_t r = classfs_path_read(w->t, "class/af/renamed/dev", buf, sizeof(buf));

		return r < 0 ? (int)r : 0;
	}
	case ST_MKDIR:
		return classfs_mkdir(w->t, classfs_root_ino(), "firmware", 0755, NULL);
	case ST_CREATE:
		return inos(w->t, "firmware", &d, NULL, NULL) ?:
		       classfs_create(w->t, d, "profile", 0644, NULL);
	case ST_WRITE: {
		static char big[8192];
		ssize_t r = inos(w->t, "firmware/profile", &d, NULL, NULL);

		if (r == 0)
			r = classfs_write(w->t, d, big, sizeof(big), 0);
		return r < 0 ? (int)r : 0;
	}
	case ST_SYMLINK:
		return inos(w->t, "firmware", &d, NULL, NULL) ?:
		       classfs_symlink(w->t, d, "l", "../class", NULL);
	case ST_RENAME_FILE:
		return inos(w->t, "firmware", &d, "", &d2) ?:
		       classfs_rename(w->t, d, "profile", d2, "platform_profile", 0);
	case ST_HIDE:
		return inos(w->t, "class/af/newparent/", &d, NULL, NULL) ?:
		       classfs_unlink(w->t, d, "da");
	}
	return -EINVAL;
}

static void world_init(struct world *w, enum classfs_layout layout)
{
	memset(w, 0, sizeof(*w));
	w->t = classfs_tree_new(layout);
	w->cls = (struct classfs_class){ .name = "af", .class_attrs = cattrs, .dev_groups = dgroups,
					 .dev_uevent = hook };
	w->intf = (struct classfs_interface){ .cls = &w->cls, .add = intf_add };
	classfs_device_initialize(&w->pdev);
	classfs_device_set_name(&w->pdev, "pdev");
	CHECK_INT(classfs_device_add_to(w->t, &w->pdev), 0);
	CHECK(rec_start(&w->rec, w->t) > 0);
}

static void world_free(struct world *w)
{
	CHECK_INT(classfs_tree_remove_plain(w->t), 0);
	classfs_interface_unregister(&w->intf);
	classfs_device_unregister(w->parent);	/* the child goes with it */
	classfs_class_unregister(&w->cls);
	classfs_class_destroy(w->cls2);
	classfs_device_unregister(&w->pdev);
	rec_stop(&w->rec);
	CHECK_INT(classfs_tree_free(w->t), 0);
}

static void scenario(enum classfs_layout layout)
{
	long n;
	int failures = 0;

	for (n = 1; n < 100000; n++) {
		struct world w;
		int failed_step = -1;

		world_init(&w, layout);
		intf_adds = 0;
		alloc_count = 0;
		fail_at = n;
		fired = false;
		for (int s = 0; s < ST_COUNT; s++) {
			char *before = snapshot(w.t);
			int nev = w.rec.n, r;
			bool fired_before = fired;

			arm();
			r = step(&w, s);
			disarm();
			if (r == 0) {
				free(before);
				continue;
			}
			/* the one failing allocation is the only reason to fail */
			if (r != -ENOMEM || fired_before || !fired)
				fprintf(stderr, "  N=%ld: %s returned %d\n", n, step_names[s], r);
			CHECK_INT(r, -ENOMEM);
			CHECK(fired && !fired_before);
			char *after = snapshot(w.t);

			if (strcmp(before, after)) {
				fprintf(stderr, "  N=%ld: %s failed but changed the tree\n--- before\n%s--- after\n%s",
					n, step_names[s], before, after);
				CHECK(!strcmp(before, after));
			}
			CHECK_INT(w.rec.n, nev);
			free(before);
			free(after);
			failed_step = s;
			failures++;
			break;
		}
		if (failed_step < 0) {
			/* everything done: the whole result is there */
			CHECK_INT(ftype(w.t, "class/af/newparent/"), CLASSFS_FT_DIR);
			CHECK_STR(rd(w.t, "class/af/renamed/later"), "later\n");
			CHECK_STR(rd(w.t, "class/af/renamed/db"), "db\n");
			CHECK_STR(rd(w.t, "class/af/renamed/ngrp/db"), "db\n");
			CHECK_STR(rd(w.t, "class/af/renamed/da"), "da\n");
			CHECK_INT(ftype(w.t, "class/af/newparent/da"), -ENOENT);
			CHECK_INT(ftype(w.t, "platform_profile"), CLASSFS_FT_REG);
			CHECK_STR(lnk(w.t, "firmware/l"), "../class");
			CHECK_STR(rd(w.t, "class/af/newparent/extra/da"), "da\n");
			CHECK_STR(rd(w.t, "class/af/version"), "7\n");
			CHECK_STR(rd(w.t, "dev/char/8:1/dev"), "8:1\n");
			CHECK_INT(intf_adds, 2);
			CHECK(rec_find(&w.rec, CLASSFS_ACTION_MOVE, NULL) >= 0);
			CHECK_INT(rec_count(&w.rec, CLASSFS_ACTION_ADD), 3);	/* + the synthetic one */
			if (layout == CLASSFS_LAYOUT_CLASS)
				CHECK_STR(res(w.t, "devices/pdev/af:newparent"), "class/af/newparent");
			CHECK_INT(check_links(w.t, NULL), 0);

			/* removals with the same failure armed: they cannot fail */
			size_t nodes = classfs_tree_node_count(w.t);
			int nev = w.rec.n;

			arm();
			CHECK_INT(classfs_device_unregister(w.parent), 0);
			disarm();
			w.parent = NULL;
			CHECK_INT(w.rec.n, nev + 2);
			CHECK_INT(rec_count(&w.rec, CLASSFS_ACTION_REMOVE), 2);
			CHECK_INT(ftype(w.t, "class/af/renamed"), -ENOENT);
			CHECK_INT(ftype(w.t, "dev/char/8:1"), -ENOENT);
			CHECK_INT(ftype(w.t, "devices/pdev/af:newparent"), -ENOENT);
			CHECK(classfs_tree_node_count(w.t) < nodes);
			CHECK_INT(check_links(w.t, NULL), 0);
		}
		world_free(&w);
		if (test_failed_now) {
			fprintf(stderr, "  (first failure at N=%ld)\n", n);
			break;
		}
		if (!fired)
			break;		/* the whole scenario ran without reaching N */
	}
	CHECK(failures > 20);
	CHECK(n < 100000);
}

TEST(scenario_layout_class)
{
	scenario(CLASSFS_LAYOUT_CLASS);
}

TEST(scenario_layout_devices)
{
	scenario(CLASSFS_LAYOUT_DEVICES);
}

/* trees themselves: NULL with ENOMEM, nothing leaked */
TEST(tree_new)
{
	for (long n = 1; n < 1000; n++) {
		struct classfs_tree *t;

		alloc_count = 0;
		fail_at = n;
		fired = false;
		errno = 0;
		arm();
		t = classfs_tree_new(n % 2 ? CLASSFS_LAYOUT_CLASS : CLASSFS_LAYOUT_DEVICES);
		disarm();
		if (!t) {
			CHECK_INT(errno, ENOMEM);
			CHECK(fired);
			continue;
		}
		CHECK_INT(ftype(t, "kernel/uevent_seqnum"), CLASSFS_FT_REG);
		CHECK_INT(classfs_tree_free(t), 0);
		if (!fired)
			break;
	}
}

/* the uevent file's read side allocates too: errors, not garbage */
TEST(reads_and_listings)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "rd");
	struct classfs_device *d = classfs_device_create(c, NULL, makedev(1, 1), NULL, NULL, "d");

	for (long n = 1; n < 100; n++) {
		char buf[128];
		ssize_t r;
		int k;

		alloc_count = 0;
		fail_at = n;
		fired = false;
		arm();
		r = classfs_path_read(t, "class/rd/d/uevent", buf, sizeof(buf));
		k = nentries(t, "class/rd/d");
		disarm();
		if (r < 0)
			CHECK_INT(r, -ENOMEM);
		else
			CHECK(r == 26 && !memcmp(buf, "MAJOR=1\nMINOR=1\nDEVNAME=d\n", 26));
		if (k < 0)
			CHECK_INT(k, -ENOMEM);
		else
			CHECK_INT(k, 3);
		if (!fired)
			break;
	}
	classfs_device_unregister(d);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

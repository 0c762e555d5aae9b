// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-plain.c - entries made through the filesystem (plain.c,
 * plain-rename.c): files that hold what was written, directories,
 * symlinks, unlink and rmdir, computed entries hidden on their device,
 * rename over an existing file, chmod and truncate, what may not be
 * changed, a class link unlinked freeing its name, immutable files, and
 * classfs_tree_remove_plain().
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/sysmacros.h>

#include "classfs/record.h"
#include "../harness.h"
#include "classfs-internal/fs.h"
#include "../native-util.h"

/* a device named @name, not added yet */
static struct classfs_device *newdev(struct classfs_class *cls, struct classfs_device *parent,
				     struct classfs_device *phys, const char *name, dev_t devt)
{
	struct classfs_device *d = nu_newdev(cls, parent, phys, name, devt);

	CHECK(d != NULL);
	return d;
}

static struct classfs_device *mkdev(struct classfs_tree *t, struct classfs_class *cls,
				    struct classfs_device *parent, const char *name, dev_t devt)
{
	struct classfs_device *d = newdev(cls, parent, NULL, name, devt);

	CHECK_INT(classfs_device_add_to(t, d), 0);
	return d;
}

static uint64_t ino_of(struct classfs_tree *t, const char *path)
{
	struct classfs_stat st;

	if (!*path)
		return classfs_root_ino();
	CHECK_INT(classfs_path_stat(t, path, &st), 0);
	return st.ino;
}

static int stat_rc(struct classfs_tree *t, const char *path)
{
	struct classfs_stat st;

	return classfs_path_stat(t, path, &st);
}

TEST(files_dirs_links)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_stat st, st2;
	uint64_t root = classfs_root_ino(), fw, acpi;
	char buf[64];

	/* os.makedirs('/sys/firmware/acpi') */
	CHECK_INT(classfs_mkdir(t, root, "firmware", 0755, &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_DIR);
	fw = st.ino;
	CHECK_INT(classfs_mkdir(t, fw, "acpi", 0755, &st), 0);
	acpi = st.ino;
	CHECK_INT(classfs_mkdir(t, fw, "acpi", 0755, NULL), -EEXIST);
	/* open('.../platform_profile', 'w').write('balanced\n') */
	CHECK_INT(classfs_create(t, acpi, "platform_profile", 0644, &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_REG);
	CHECK_INT(st.size, 0);
	CHECK_INT(classfs_write(t, st.ino, "balanced\n", 9, 0), 9);
	CHECK_STR(rd(t, "firmware/acpi/platform_profile"), "balanced\n");
	CHECK_INT(classfs_getattr(t, st.ino, &st2), 0);
	CHECK_INT(st2.size, 9);
	/* rewrite: O_TRUNC, then a write at 0 */
	CHECK_INT(classfs_truncate(t, st.ino, 0, &st2), 0);
	CHECK_INT(st2.size, 0);
	CHECK_INT(classfs_write(t, st.ino, "quiet\n", 6, 0), 6);
	CHECK_STR(rd(t, "firmware/acpi/platform_profile"), "quiet\n");
	/* append, and a write past the end leaves zeros */
	CHECK_INT(classfs_write(t, st.ino, "x\n", 2, 6), 2);
	CHECK_STR(rd(t, "firmware/acpi/platform_profile"), "quiet\nx\n");
	CHECK_INT(classfs_write(t, st.ino, "y", 1, 10), 1);
	CHECK_INT(classfs_read(t, st.ino, buf, sizeof(buf), 0), 11);
	CHECK_INT(buf[8], 0);
	CHECK_INT(classfs_truncate(t, st.ino, 3, NULL), 0);
	CHECK_STR(rd(t, "firmware/acpi/platform_profile"), "qui");
	/* larger than a page: a regular file */
	static char big[10000];
	memset(big, 'b', sizeof(big));
	CHECK_INT(classfs_write(t, st.ino, big, sizeof(big), 0), (int)sizeof(big));
	CHECK_INT(classfs_getattr(t, st.ino, &st2), 0);
	CHECK_INT(st2.size, sizeof(big));
	/* chmod; a 0444 file refuses writes, as every read-only file does */
	CHECK_INT(classfs_chmod(t, st.ino, 0444, &st2), 0);
	CHECK_INT(st2.mode, 0444);
	CHECK_INT(classfs_write(t, st.ino, "z", 1, 0), -EACCES);
	CHECK_INT(classfs_chmod(t, st.ino, 0600, NULL), 0);
	CHECK_INT(classfs_write(t, st.ino, "z", 1, 0), 1);
	/* symlinks keep their text */
	CHECK_INT(classfs_symlink(t, acpi, "lnk", "../../devices", &st), 0);
	CHECK_INT(st.type, CLASSFS_FT_LNK);
	CHECK_STR(lnk(t, "firmware/acpi/lnk"), "../../devices");
	CHECK_INT(classfs_symlink(t, acpi, "empty", "", NULL), -EINVAL);
	/* names as elsewhere */
	CHECK_INT(classfs_create(t, acpi, "a/b", 0644, NULL), -EINVAL);
	CHECK_INT(classfs_create(t, acpi, "..", 0644, NULL), -EINVAL);
	CHECK_INT(classfs_create(t, acpi, "a\nb", 0644, NULL), -EINVAL);
	CHECK_INT(classfs_mkdir(t, acpi, "", 0755, NULL), -EINVAL);
	CHECK_INT(classfs_create(t, st.ino, "x", 0644, NULL), -ENOTDIR);
	/* rmdir: not while something is in it */
	CHECK_INT(classfs_rmdir(t, fw, "acpi"), -ENOTEMPTY);
	CHECK_INT(classfs_unlink(t, fw, "acpi"), -EISDIR);
	CHECK_INT(classfs_rmdir(t, acpi, "lnk"), -ENOTDIR);
	CHECK_INT(classfs_unlink(t, acpi, "lnk"), 0);
	CHECK_INT(classfs_unlink(t, acpi, "platform_profile"), 0);
	CHECK_INT(classfs_unlink(t, acpi, "platform_profile"), -ENOENT);
	CHECK_INT(classfs_rmdir(t, fw, "acpi"), 0);
	CHECK_INT(stat_rc(t, "firmware/acpi"), -ENOENT);
	/* the tree's own directories stay */
	CHECK_INT(classfs_rmdir(t, root, "class"), -EPERM);
	CHECK_INT(classfs_rmdir(t, root, "firmware"), 0);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(rename)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	uint64_t root = classfs_root_ino(), d;
	struct classfs_stat st, tmp, st2;

	CHECK_INT(classfs_mkdir(t, root, "etc", 0755, &st), 0);
	d = st.ino;
	CHECK_INT(classfs_create(t, d, "conf", 0644, &st), 0);
	CHECK_INT(classfs_write(t, st.ino, "old\n", 4, 0), 4);
	/* write a temporary file, rename it over the old one */
	CHECK_INT(classfs_create(t, d, "conf.tmp", 0644, &tmp), 0);
	CHECK_INT(classfs_write(t, tmp.ino, "new\n", 4, 0), 4);
	CHECK_INT(classfs_rename(t, d, "conf.tmp", d, "conf", 1), -EEXIST);
	CHECK_INT(classfs_rename(t, d, "conf.tmp", d, "conf", 0), 0);
	CHECK_STR(rd(t, "etc/conf"), "new\n");
	CHECK_INT(stat_rc(t, "etc/conf.tmp"), -ENOENT);
	/* the node moved: same inode number */
	CHECK_INT(classfs_path_stat(t, "etc/conf", &st2), 0);
	CHECK(st2.ino == tmp.ino);
	CHECK_INT(classfs_getattr(t, st.ino, &st2), -ENOENT);
	/* to another directory, and a directory with what it holds */
	CHECK_INT(classfs_mkdir(t, d, "sub", 0755, &st), 0);
	CHECK_INT(classfs_rename(t, d, "conf", st.ino, "c2", 0), 0);
	CHECK_STR(rd(t, "etc/sub/c2"), "new\n");
	CHECK_INT(classfs_rename(t, d, "sub", root, "moved", 0), 0);
	CHECK_STR(rd(t, "moved/c2"), "new\n");
	/* a directory into itself; kinds that do not match */
	CHECK_INT(classfs_rename(t, root, "moved", ino_of(t, "moved"), "x", 0), -EINVAL);
	CHECK_INT(classfs_mkdir(t, d, "dir", 0755, NULL), 0);
	CHECK_INT(classfs_rename(t, ino_of(t, "moved"), "c2", d, "dir", 0), -EISDIR);
	CHECK_INT(classfs_rename(t, root, "moved", d, "dir", 0), 0);	/* over an empty dir */
	CHECK_STR(rd(t, "etc/dir/c2"), "new\n");
	CHECK_INT(classfs_rename(t, root, "etc", root, "etc", 0), 0);
	/* links keep their text when renamed */
	CHECK_INT(classfs_symlink(t, d, "l", "dir/c2", NULL), 0);
	CHECK_INT(classfs_rename(t, d, "l", d, "l2-longer-name", 0), 0);
	CHECK_STR(lnk(t, "etc/l2-longer-name"), "dir/c2");
	CHECK_STR(rd(t, "etc/l2-longer-name"), "new\n");
	/* the tree's own entries do not move */
	CHECK_INT(classfs_rename(t, root, "class", d, "x", 0), -EPERM);
	CHECK_INT(classfs_rename(t, d, "dir", root, "class", 0), -EPERM);
	CHECK_INT(classfs_rename(t, d, "dir", root, "bad/name", 0), -EINVAL);
	CHECK_INT(classfs_rename(t, d, "dir", root, "x", 2), -EINVAL);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(device_entries)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_class *c = classfs_class_create(t, "block");
	struct classfs_device *sda = mkdev(t, c, NULL, "sda", makedev(8, 0));
	uint64_t dir = ino_of(t, "devices/virtual/block/sda");
	struct classfs_stat st;

	CHECK_INT(classfs_device_add_value(sda, "size", 0644, "100\n", 4, 0), 0);
	/* a new attribute and a link inside the device's directory */
	CHECK_INT(classfs_create(t, dir, "queue_depth", 0644, &st), 0);
	CHECK_INT(classfs_write(t, st.ino, "32\n", 3, 0), 3);
	CHECK_STR(rd(t, "class/block/sda/queue_depth"), "32\n");
	CHECK_INT(classfs_symlink(t, dir, "driver", "../../foo", NULL), 0);
	CHECK_STR(lnk(t, "devices/virtual/block/sda/driver"), "../../foo");
	/* a name the device shows already */
	CHECK_INT(classfs_create(t, dir, "uevent", 0644, NULL), -EEXIST);
	CHECK_INT(classfs_create(t, dir, "size", 0644, NULL), -EEXIST);
	/* the stored value is written as before: replaced whole */
	CHECK_INT(classfs_path_write(t, "class/block/sda/size", "7\n", 2), 2);
	CHECK_STR(rd(t, "class/block/sda/size"), "7\n");
	/* a device's directory is not removed this way; uevent is not hidden */
	CHECK_INT(classfs_rmdir(t, ino_of(t, "devices/virtual/block"), "sda"), -EBUSY);
	CHECK_INT(classfs_unlink(t, dir, "uevent"), -EPERM);
	CHECK_INT(classfs_rename(t, ino_of(t, "devices/virtual/block"), "sda", dir, "x", 0), -EBUSY);
	/* computed entries hide: subsystem, class link, block/NAME, dev/block/M:m */
	CHECK_INT(classfs_unlink(t, dir, "subsystem"), 0);
	CHECK_INT(stat_rc(t, "devices/virtual/block/sda/subsystem"), -ENOENT);
	CHECK_INT(classfs_unlink(t, dir, "subsystem"), -ENOENT);
	CHECK_INT(classfs_unlink(t, ino_of(t, "block"), "sda"), 0);
	CHECK_INT(stat_rc(t, "block/sda"), -ENOENT);
	CHECK_INT(stat_rc(t, "class/block/sda"), 0);
	/* the class link: the device leaves the name index */
	CHECK_INT(classfs_unlink(t, ino_of(t, "class/block"), "sda"), 0);
	CHECK_INT(stat_rc(t, "class/block/sda"), -ENOENT);
	CHECK(classfs_class_find_device(c, "sda") == NULL);
	CHECK_INT(classfs_unlink(t, ino_of(t, "dev/block"), "8:0"), 0);
	CHECK_INT(stat_rc(t, "dev/block/8:0"), -ENOENT);
	/* the device and its uevent still work */
	CHECK(strstr(rd(t, "devices/virtual/block/sda/uevent"), "DEVNAME=sda\n") != NULL);
	CHECK_INT(classfs_device_uevent(sda, CLASSFS_ACTION_CHANGE, NULL), 0);
	/* a new subsystem link in its place */
	CHECK_INT(classfs_symlink(t, dir, "subsystem", "../../../../class/nvme", NULL), 0);
	CHECK_STR(lnk(t, "devices/virtual/block/sda/subsystem"), "../../../../class/nvme");
	/* the tree's own again, and what the filesystem made goes */
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	CHECK_INT(stat_rc(t, "class/block/sda"), 0);
	CHECK_INT(stat_rc(t, "dev/block/8:0"), 0);
	CHECK_STR(lnk(t, "devices/virtual/block/sda/subsystem"), "../../../../class/block");
	CHECK_INT(stat_rc(t, "devices/virtual/block/sda/queue_depth"), -ENOENT);
	CHECK_INT(stat_rc(t, "devices/virtual/block/sda/driver"), -ENOENT);
	CHECK_STR(rd(t, "class/block/sda/size"), "7\n");
	/* removing the device removes what was made in it */
	CHECK_INT(classfs_create(t, dir, "extra", 0644, NULL), 0);
	classfs_device_unregister(sda);
	CHECK_INT(stat_rc(t, "devices/virtual/block/sda/extra"), -ENOENT);
	CHECK_INT(classfs_create(t, dir, "extra", 0644, NULL), -ENOENT);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* a device of class @cls (or a physical one, NULL) on physical device @phys */
static struct classfs_device *mkphys(struct classfs_tree *t, struct classfs_class *cls,
				     struct classfs_device *phys, const char *name)
{
	struct classfs_device *d = newdev(cls, NULL, phys, name, 0);

	CHECK_INT(classfs_device_add_to(t, d), 0);
	return d;
}

static int count_dev(struct classfs_device *dev, void *data)
{
	(void)dev;
	++*(int *)data;
	return 0;
}

static int count_name(void *ctx, const char *name, const struct classfs_stat *cs, uint64_t next)
{
	(void)cs;
	(void)next;
	if (!strcmp(name, "hid-bat"))
		++*(int *)ctx;
	return 0;
}

/*
 * upower's test: a class link unlinked (a kernel bug emulated), then a
 * device of the same class and name elsewhere; the name is the new one's.
 */
TEST(class_link_frees_name)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_class *c = classfs_class_create(t, "power_supply");
	struct classfs_device *p1 = mkphys(t, NULL, NULL, "p1");
	struct classfs_device *p2 = mkphys(t, NULL, NULL, "p2");
	struct classfs_device *b1 = mkphys(t, c, p1, "hid-bat"), *b2, *f;
	uint64_t cdir = ino_of(t, "class/power_supply");
	int n = 0;

	CHECK_STR(lnk(t, "class/power_supply/hid-bat"), "../../devices/p1/power_supply/hid-bat");
	/* a second device of that name is refused while the first has it */
	f = newdev(c, NULL, p2, "hid-bat", 0);
	CHECK_INT(classfs_device_add_to(t, f), -EEXIST);
	classfs_device_put(f);

	CHECK_INT(classfs_unlink(t, cdir, "hid-bat"), 0);
	CHECK_INT(stat_rc(t, "class/power_supply/hid-bat"), -ENOENT);
	CHECK_INT(classfs_unlink(t, cdir, "hid-bat"), -ENOENT);
	CHECK(classfs_class_find_device(c, "hid-bat") == NULL);
	/* still there, at its path, with its uevents */
	CHECK_INT(stat_rc(t, "devices/p1/power_supply/hid-bat/uevent"), 0);
	CHECK_INT(classfs_path_write(t, "devices/p1/power_supply/hid-bat/uevent", "change", 6), 6);
	CHECK_INT(classfs_device_uevent(b1, CLASSFS_ACTION_CHANGE, NULL), 0);
	CHECK_STR(lnk(t, "devices/p1/power_supply/hid-bat/subsystem"),
		  "../../../../class/power_supply");

	/* the name is free: the new device owns class/power_supply/hid-bat */
	b2 = mkphys(t, c, p2, "hid-bat");
	CHECK_STR(lnk(t, "class/power_supply/hid-bat"), "../../devices/p2/power_supply/hid-bat");
	f = classfs_class_find_device(c, "hid-bat");
	CHECK(f == b2);
	classfs_device_put(f);
	CHECK_INT(classfs_readdir(t, cdir, 0, count_name, &n), 0);
	CHECK_INT(n, 1);
	/* both in the class's device list */
	n = 0;
	CHECK_INT(classfs_class_for_each_device(c, count_dev, &n), 0);
	CHECK_INT(n, 2);
	/* the hidden one is renamed, to the name another has too: it claims none */
	CHECK_INT(classfs_device_rename(b1, "hid-old"), 0);
	CHECK_INT(stat_rc(t, "class/power_supply/hid-old"), -ENOENT);
	CHECK_INT(stat_rc(t, "devices/p1/power_supply/hid-old/uevent"), 0);
	CHECK(classfs_class_find_device(c, "hid-old") == NULL);
	CHECK_INT(classfs_device_rename(b1, "hid-bat"), 0);
	/* a reset keeps it out while the name is another's */
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	CHECK_STR(lnk(t, "class/power_supply/hid-bat"), "../../devices/p2/power_supply/hid-bat");
	/* removing its parent removes it */
	classfs_device_unregister(p1);
	CHECK_INT(stat_rc(t, "devices/p1"), -ENOENT);
	n = 0;
	CHECK_INT(classfs_class_for_each_device(c, count_dev, &n), 0);
	CHECK_INT(n, 1);
	f = classfs_class_find_device(c, "hid-bat");
	CHECK(f == b2);
	classfs_device_put(f);
	/* unlinked again, then reset with the name free: back in the index */
	CHECK_INT(classfs_unlink(t, cdir, "hid-bat"), 0);
	CHECK(classfs_class_find_device(c, "hid-bat") == NULL);
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	f = classfs_class_find_device(c, "hid-bat");
	CHECK(f == b2);
	classfs_device_put(f);
	CHECK_STR(lnk(t, "class/power_supply/hid-bat"), "../../devices/p2/power_supply/hid-bat");
	/* removed and added again, a device is back in the index, its link shown */
	f = mkphys(t, c, NULL, "re");
	CHECK_INT(classfs_unlink(t, cdir, "re"), 0);
	CHECK_INT(classfs_device_del(f), 0);
	CHECK_INT(classfs_device_add_to(t, f), 0);
	CHECK(classfs_class_find_device(c, "re") == f);
	classfs_device_put(f);
	CHECK_STR(lnk(t, "class/power_supply/re"), "../../devices/virtual/power_supply/re");
	classfs_device_unregister(f);
	classfs_device_unregister(p2);
	CHECK_INT(stat_rc(t, "devices/p2"), -ENOENT);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* power-profiles-daemon's test: chattr +i on a file it made */
TEST(immutable)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_class *c = classfs_class_create(t, "block");
	struct classfs_device *sda = mkdev(t, c, NULL, "sda", makedev(8, 0));
	uint64_t root = classfs_root_ino(), dir, ino;
	struct classfs_stat st;
	unsigned int fl = 99;

	CHECK_INT(classfs_mkdir(t, root, "cpu", 0755, &st), 0);
	dir = st.ino;
	CHECK_INT(classfs_create(t, dir, "epp", 0644, &st), 0);
	ino = st.ino;
	CHECK_INT(classfs_write(t, ino, "balance\n", 8, 0), 8);
	CHECK_INT(classfs_get_flags(t, ino, &fl), 0);
	CHECK_INT(fl, 0);
	/* only the immutable and append-only flags, only on stored values */
	CHECK_INT(classfs_set_flags(t, ino, 0x80), -EOPNOTSUPP);	/* FS_NOATIME_FL */
	CHECK_INT(classfs_set_flags(t, dir, CLASSFS_FL_IMMUTABLE), -EOPNOTSUPP);
	CHECK_INT(classfs_set_flags(t, dir, CLASSFS_FL_APPEND), -EOPNOTSUPP);
	CHECK_INT(classfs_set_flags(t, ino_of(t, "class/block/sda/uevent"), CLASSFS_FL_IMMUTABLE),
		  -EOPNOTSUPP);
	CHECK_INT(classfs_set_flags(t, dir, 0), 0);
	CHECK_INT(classfs_set_flags(NULL, ino, 0), -EINVAL);
	CHECK_INT(classfs_get_flags(t, ino, NULL), -EINVAL);
	CHECK_INT(classfs_set_flags(t, ino, CLASSFS_FL_IMMUTABLE), 0);
	CHECK_INT(classfs_get_flags(t, ino, &fl), 0);
	CHECK_INT(fl, CLASSFS_FL_IMMUTABLE);
	/* refused whoever asks: write, truncate, chmod, unlink, rename either side */
	CHECK_INT(classfs_write(t, ino, "power\n", 6, 0), -EPERM);
	CHECK_INT(classfs_truncate(t, ino, 0, NULL), -EPERM);
	CHECK_INT(classfs_chmod(t, ino, 0600, NULL), -EPERM);
	CHECK_INT(classfs_unlink(t, dir, "epp"), -EPERM);
	CHECK_INT(classfs_rename(t, dir, "epp", dir, "epp2", 0), -EPERM);
	CHECK_INT(classfs_create(t, dir, "tmp", 0644, NULL), 0);
	CHECK_INT(classfs_rename(t, dir, "tmp", dir, "epp", 0), -EPERM);
	CHECK_INT(classfs_rmdir(t, root, "cpu"), -ENOTEMPTY);
	/* read as before */
	CHECK_STR(rd(t, "cpu/epp"), "balance\n");
	CHECK_INT(classfs_getattr(t, ino, &st), 0);
	CHECK_INT(st.mode, 0644);
	/* a stored attribute of a device too */
	CHECK_INT(classfs_device_add_value(sda, "size", 0644, "100\n", 4, 0), 0);
	CHECK_INT(classfs_set_flags(t, ino_of(t, "class/block/sda/size"), CLASSFS_FL_IMMUTABLE), 0);
	CHECK_INT(classfs_path_write(t, "class/block/sda/size", "7\n", 2), -EPERM);
	CHECK_STR(rd(t, "class/block/sda/size"), "100\n");
	/* append-only: a file's, not an attribute's (replaced whole) */
	CHECK_INT(classfs_set_flags(t, ino_of(t, "class/block/sda/size"), CLASSFS_FL_APPEND),
		  -EOPNOTSUPP);
	CHECK_INT(classfs_set_flags(t, ino_of(t, "class/block/sda/size"), 0), 0);
	/* cleared: everything works again */
	CHECK_INT(classfs_set_flags(t, ino, 0), 0);
	CHECK_INT(classfs_truncate(t, ino, 0, NULL), 0);
	CHECK_INT(classfs_write(t, ino, "power\n", 6, 0), 6);
	CHECK_STR(rd(t, "cpu/epp"), "power\n");
	CHECK_INT(classfs_chmod(t, ino, 0600, NULL), 0);
	CHECK_INT(classfs_rename(t, dir, "tmp", dir, "epp", 0), 0);
	/* append-only: written at its end, whatever the offset; else as immutable */
	ino = ino_of(t, "cpu/epp");
	CHECK_INT(classfs_write(t, ino, "mine\n", 5, 0), 5);
	CHECK_INT(classfs_set_flags(t, ino, CLASSFS_FL_APPEND), 0);
	CHECK_INT(classfs_get_flags(t, ino, &fl), 0);
	CHECK_INT(fl, CLASSFS_FL_APPEND);
	CHECK_INT(classfs_write(t, ino, "more\n", 5, 0), 5);
	CHECK_STR(rd(t, "cpu/epp"), "mine\nmore\n");
	CHECK_INT(classfs_truncate(t, ino, 0, NULL), -EPERM);
	CHECK_INT(classfs_chmod(t, ino, 0644, NULL), -EPERM);
	CHECK_INT(classfs_unlink(t, dir, "epp"), -EPERM);
	CHECK_INT(classfs_rename(t, dir, "epp", dir, "epp2", 0), -EPERM);
	CHECK_INT(classfs_set_flags(t, ino, CLASSFS_FL_APPEND | CLASSFS_FL_IMMUTABLE), 0);
	CHECK_INT(classfs_get_flags(t, ino, &fl), 0);
	CHECK_INT(fl, CLASSFS_FL_APPEND | CLASSFS_FL_IMMUTABLE);
	CHECK_INT(classfs_write(t, ino, "x", 1, 0), -EPERM);
	CHECK_INT(classfs_set_flags(t, ino, 0), 0);
	CHECK_INT(classfs_unlink(t, dir, "epp"), 0);
	/* a reset removes an immutable file as any other; its device's removal too */
	CHECK_INT(classfs_create(t, dir, "epp", 0644, NULL), 0);
	CHECK_INT(classfs_set_flags(t, ino_of(t, "cpu/epp"), CLASSFS_FL_IMMUTABLE), 0);
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	CHECK_INT(stat_rc(t, "cpu"), -ENOENT);
	classfs_device_unregister(sda);
	CHECK_INT(stat_rc(t, "class/block/sda"), -ENOENT);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* devices/virtual made through the filesystem is taken over for virtual devices */
TEST(virtual_taken_over)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_device *d = calloc(1, sizeof(*d));
	struct classfs_stat st;

	CHECK_INT(classfs_mkdir(t, ino_of(t, "devices"), "virtual", 0755, &st), 0);
	CHECK_INT(classfs_create(t, st.ino, "note", 0644, NULL), 0);
	classfs_device_initialize(d);
	d->release = (void (*)(struct classfs_device *))free;
	CHECK_INT(classfs_device_set_name(d, "workqueue"), 0);
	CHECK_INT(classfs_device_add_virtual(t, d), 0);
	CHECK_INT(stat_rc(t, "devices/virtual/workqueue"), 0);
	CHECK_INT(stat_rc(t, "devices/virtual/note"), 0);
	CHECK_INT(classfs_rmdir(t, ino_of(t, "devices"), "virtual"), -ENOTEMPTY);
	CHECK_INT(classfs_rename(t, ino_of(t, "devices"), "virtual", classfs_root_ino(), "v", 0),
		  -EBUSY);
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	CHECK_INT(stat_rc(t, "devices/virtual/note"), -ENOENT);
	CHECK_INT(stat_rc(t, "devices/virtual/workqueue"), 0);
	classfs_device_unregister(d);
	CHECK_INT(stat_rc(t, "devices/virtual"), -ENOENT);
	CHECK_INT(classfs_tree_free(t), 0);
}

static ssize_t code_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	return snprintf(buf, 16, "code\n");
}

static const struct classfs_device_attribute code_attr = {
	.attr = { .name = "code", .mode = 0444 }, .show = code_show,
};
static const struct classfs_device_attribute *const code_attrs[] = { &code_attr, NULL };
static const struct classfs_attribute_group code_group = { .attrs = code_attrs };
static const struct classfs_attribute_group named_group = { .name = "power", .attrs = code_attrs };
static const struct classfs_attribute_group *const code_groups[] = { &code_group, &named_group,
								     NULL };
static const struct classfs_device_type code_type = { .name = "t", .groups = code_groups };

/* a type's attributes hide for one device; a file may take the name */
TEST(code_attributes_hide)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "tc");
	struct classfs_device *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));
	struct classfs_device *v[] = { a, b };
	struct classfs_stat st;

	for (int i = 0; i < 2; i++) {
		classfs_device_initialize(v[i]);
		v[i]->cls = c;
		v[i]->type = &code_type;
		v[i]->release = (void (*)(struct classfs_device *))free;
		CHECK_INT(classfs_device_set_name(v[i], "d%d", i), 0);
		CHECK_INT(classfs_device_add_to(t, v[i]), 0);
	}
	CHECK_STR(rd(t, "class/tc/d0/code"), "code\n");
	CHECK_INT(classfs_rename(t, ino_of(t, "class/tc/d0"), "code", ino_of(t, ""), "x", 0), -EPERM);
	CHECK_INT(classfs_unlink(t, ino_of(t, "class/tc/d0"), "code"), 0);
	CHECK_INT(stat_rc(t, "class/tc/d0/code"), -ENOENT);
	CHECK_STR(rd(t, "class/tc/d1/code"), "code\n");
	/* in a named group's directory too; nothing is made there */
	CHECK_INT(classfs_unlink(t, ino_of(t, "class/tc/d0/power"), "code"), 0);
	CHECK_INT(stat_rc(t, "class/tc/d0/power/code"), -ENOENT);
	CHECK_INT(classfs_create(t, ino_of(t, "class/tc/d0/power"), "code", 0644, NULL), -EPERM);
	CHECK_INT(classfs_rmdir(t, ino_of(t, "class/tc/d0"), "power"), -EPERM);
	CHECK_INT(classfs_unlink(t, ino_of(t, "class/tc/d0"), "power"), -EISDIR);
	/* a file in its place */
	CHECK_INT(classfs_create(t, ino_of(t, "class/tc/d0"), "code", 0644, &st), 0);
	CHECK_INT(classfs_write(t, st.ino, "mine\n", 5, 0), 5);
	CHECK_STR(rd(t, "class/tc/d0/code"), "mine\n");
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	CHECK_STR(rd(t, "class/tc/d0/code"), "code\n");
	CHECK_STR(rd(t, "class/tc/d0/power/code"), "code\n");
	/* hidden until the device goes */
	CHECK_INT(classfs_unlink(t, ino_of(t, "class/tc/d1"), "code"), 0);
	classfs_device_unregister(a);
	classfs_device_unregister(b);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* a device placed where a directory was made takes it over, with what it holds */
TEST(device_takes_a_directory_over)
{
	static const char rec[] = "P: /devices/system/cpu/cpu0\nE: SUBSYSTEM=cpu\nA: online=1\\n\n";
	struct classfs_record_options opt = { .filename = "cpu" };
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	struct classfs_record_error err;
	struct classfs_stat st, f;
	uint64_t before;

	/* os.makedirs('/sys/devices/system/cpu/cpufreq/policy0') and a file in it */
	CHECK_INT(classfs_mkdir(t, ino_of(t, "devices"), "system", 0755, &st), 0);
	CHECK_INT(classfs_mkdir(t, st.ino, "cpu", 0755, &st), 0);
	before = st.ino;
	CHECK_INT(classfs_mkdir(t, st.ino, "cpufreq", 0755, &st), 0);
	CHECK_INT(classfs_create(t, st.ino, "scaling_governor", 0644, &f), 0);
	CHECK_INT(classfs_write(t, f.ino, "powersave\n", 10, 0), 10);
	/* then a record below them: its unrecorded ancestors stay plain directories */
	CHECK_INT(classfs_record_load(t, rec, sizeof(rec) - 1, &opt, &err), 0);
	CHECK_STR(rd(t, "devices/system/cpu/cpu0/online"), "1\n");
	CHECK_STR(rd(t, "devices/system/cpu/cpufreq/scaling_governor"), "powersave\n");
	CHECK_INT(classfs_path_stat(t, "devices/system/cpu", &st), 0);
	CHECK(st.ino == before);
	CHECK_INT(classfs_rmdir(t, ino_of(t, "devices/system"), "cpu"), -ENOTEMPTY);
	/* a record of the directory itself fills it in, keeping what it holds */
	{
		static const char cpu[] = "P: /devices/system/cpu\nE: SUBSYSTEM=cpu\n";

		CHECK_INT(classfs_record_load(t, cpu, sizeof(cpu) - 1, &opt, &err), 0);
		CHECK_INT(classfs_path_stat(t, "devices/system/cpu", &st), 0);
		CHECK(st.ino != before);	/* a device's directory now */
		CHECK_INT(classfs_rmdir(t, ino_of(t, "devices/system"), "cpu"), -EBUSY);
		CHECK_STR(rd(t, "devices/system/cpu/cpu0/online"), "1\n");
	}
	/* a file made earlier keeps its inode */
	CHECK_INT(classfs_path_stat(t, "devices/system/cpu/cpufreq/scaling_governor", &st), 0);
	CHECK(st.ino == f.ino);
	/* a made directory holding a name the device computes is no place for it */
	CHECK_INT(classfs_mkdir(t, ino_of(t, "devices"), "other", 0755, &st), 0);
	CHECK_INT(classfs_create(t, st.ino, "uevent", 0644, NULL), 0);
	{
		static const char rec2[] = "P: /devices/other\nE: SUBSYSTEM=platform\n";

		CHECK(classfs_record_load(t, rec2, sizeof(rec2) - 1, &opt, &err) < 0);
		CHECK_INT(stat_rc(t, "devices/other/uevent"), 0);
	}
	classfs_record_unload(t);
	/*
	 * a device goes with what its directory holds (the files made in
	 * cpu before it was filled in too); what was made through the
	 * filesystem above the devices stays ...
	 */
	CHECK_INT(stat_rc(t, "devices/system/cpu"), -ENOENT);
	CHECK_INT(stat_rc(t, "devices/system"), 0);
	/* ... until the plain entries go */
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	CHECK_INT(stat_rc(t, "devices/system"), -ENOENT);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- files made and moved while their device comes and goes ---- */

struct race {
	struct classfs_tree *t;
	atomic_bool stop;
	atomic_long made;
};

static void *race_files(void *arg)
{
	struct race *x = arg;
	uint64_t root = classfs_root_ino();
	struct classfs_stat st, f;

	while (!atomic_load(&x->stop)) {
		if (classfs_path_stat(x->t, "class/rc/d", &st) < 0)
			continue;
		if (classfs_create(x->t, st.ino, "f", 0644, &f) == 0) {
			atomic_fetch_add(&x->made, 1);
			(void)classfs_write(x->t, f.ino, "x\n", 2, 0);
		}
		(void)classfs_mkdir(x->t, st.ino, "sub", 0755, NULL);
		(void)classfs_rename(x->t, st.ino, "f", root, "out", 0);
		(void)classfs_rename(x->t, root, "out", st.ino, "back", 0);
		(void)classfs_unlink(x->t, st.ino, "subsystem");
		(void)classfs_unlink(x->t, st.ino, "back");
		(void)classfs_rmdir(x->t, st.ino, "sub");
		(void)classfs_unlink(x->t, root, "out");
	}
	return NULL;
}

TEST(device_comes_and_goes)
{
	struct race x = { .t = classfs_tree_new(CLASSFS_LAYOUT_CLASS) };
	struct classfs_class *c = classfs_class_create(x.t, "rc");
	pthread_t th;

	CHECK_INT(pthread_create(&th, NULL, race_files, &x), 0);
	for (int i = 0; i < 3000 || atomic_load(&x.made) < 10; i++) {
		struct classfs_device *d = mkdev(x.t, c, NULL, "d", 0);

		classfs_device_unregister(d);
		if (i > 200000)
			break;
	}
	atomic_store(&x.stop, true);
	pthread_join(th, NULL);
	CHECK(atomic_load(&x.made) > 0);
	CHECK_INT(classfs_tree_remove_plain(x.t), 0);
	CHECK_INT(stat_rc(x.t, "out"), -ENOENT);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(x.t), 0);
}

TEST(remove_plain)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	uint64_t root = classfs_root_ino();
	struct classfs_stat st;

	CHECK_INT(classfs_mkdir(t, root, "firmware", 0755, &st), 0);
	CHECK_INT(classfs_mkdir(t, st.ino, "acpi", 0755, &st), 0);
	CHECK_INT(classfs_create(t, st.ino, "platform_profile", 0644, NULL), 0);
	CHECK_INT(classfs_mkdir(t, ino_of(t, "devices"), "system", 0755, &st), 0);
	CHECK_INT(classfs_symlink(t, st.ino, "l", "x", NULL), 0);
	CHECK_INT(classfs_tree_remove_plain(t), 0);
	CHECK_INT(stat_rc(t, "firmware"), -ENOENT);
	CHECK_INT(stat_rc(t, "devices/system"), -ENOENT);
	CHECK_INT(stat_rc(t, "devices"), 0);
	CHECK_INT(classfs_tree_remove_plain(NULL), -EINVAL);
	CHECK_INT(classfs_tree_free(t), 0);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-devview.c - classfs_mount_devtmpfs(): a tree's devices as a
 * devtmpfs.  Recorded nodes (N:, DEVMODE, S:, contents), devices made
 * through the API (the class's devnode hook, block and char), the entries
 * every /dev holds and the names no device takes, nodes that cannot be
 * opened (nodev), and a node there as soon as its device is (and gone as
 * soon as it is).  Needs root to mount (a private mount namespace).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <classfs/classfs.h>
#include <classfs/record.h>

#include "../harness.h"

static const char record[] =
	"P: /devices/virtual/mem/rec0\n"
	"N: recnode\n"
	"S: by-x/link0\n"
	"E: SUBSYSTEM=mem\n"
	"E: DEVMODE=0640\n"
	"A: dev=1:42\\n\n"
	"\n"
	"P: /devices/virtual/mem/nullish\n"
	"N: null\n"
	"E: SUBSYSTEM=mem\n"
	"A: dev=1:99\\n\n"
	"\n"
	"P: /devices/virtual/mem/hexdev\n"
	"N: bus/usb/001/002=12010002\n"
	"E: SUBSYSTEM=mem\n"
	"A: dev=189:1\\n\n";

static const char *input_devnode(struct classfs_device *dev, char *buf, size_t size)
{
	snprintf(buf, size, "input/%s", classfs_device_name(dev));
	return buf;
}

static bool is_link(const char *path, const char *target)
{
	char buf[256];
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);

	if (n < 0)
		return false;
	buf[n] = '\0';
	return !strcmp(buf, target);
}

static bool node_is(const char *path, mode_t type, unsigned int ma, unsigned int mi, mode_t perm)
{
	struct stat st;

	return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == type &&
	       st.st_rdev == makedev(ma, mi) && (st.st_mode & 07777) == perm;
}

static bool listed(const char *dir, const char *name)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool found = false;

	while (d && (de = readdir(d)))
		found |= !strcmp(de->d_name, name);
	if (d)
		closedir(d);
	return found;
}

TEST(devices_as_a_devtmpfs)
{
	char dir[] = "/tmp/test-devview.XXXXXX", p[256];
	struct classfs_tree *tree;
	struct classfs_class *input, *block;
	struct classfs_device *ev7, *ev8, *vdz;
	struct classfs_mount *m;
	unsigned char buf[16];
	struct stat st;
	int fd;

	if (geteuid() != 0)
		SKIP_TEST("mounting needs root");
	REQUIRE(unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0);
	REQUIRE(mkdtemp(dir) != NULL);
	tree = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	REQUIRE(tree != NULL);
	CHECK_INT(classfs_record_load(tree, record, sizeof(record) - 1, NULL, NULL), 0);
	input = classfs_class_create(tree, "input");
	block = classfs_class_create(tree, "block");
	REQUIRE(input && block);
	input->devnode = input_devnode;
	ev7 = classfs_device_create(input, NULL, makedev(13, 71), NULL, NULL, "event7");
	vdz = classfs_device_create(block, NULL, makedev(252, 0), NULL, NULL, "vdz");
	REQUIRE(ev7 && vdz);

	m = classfs_mount_devtmpfs(tree, dir, NULL);
	REQUIRE(m != NULL);
	CHECK_STR(classfs_mount_point(m), dir);

	/* a recorded node: its number, DEVMODE, S: link and number link */
	snprintf(p, sizeof(p), "%s/recnode", dir);
	CHECK(node_is(p, S_IFCHR, 1, 42, 0640));
	snprintf(p, sizeof(p), "%s/by-x/link0", dir);
	CHECK(is_link(p, "../recnode"));
	snprintf(p, sizeof(p), "%s/char/1:42", dir);
	CHECK(is_link(p, "../recnode"));
	/* recorded contents: a regular file of those bytes */
	snprintf(p, sizeof(p), "%s/bus/usb/001/002", dir);
	CHECK(lstat(p, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 4);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(read(fd, buf, sizeof(buf)) == 4 && !memcmp(buf, "\x12\x01\x00\x02", 4));
		close(fd);
	}
	snprintf(p, sizeof(p), "%s/char/189:1", dir);
	CHECK(is_link(p, "../bus/usb/001/002"));
	/* API devices: the class's devnode hook, udev's 0600, block and char */
	snprintf(p, sizeof(p), "%s/input/event7", dir);
	CHECK(node_is(p, S_IFCHR, 13, 71, 0600));
	snprintf(p, sizeof(p), "%s/vdz", dir);
	CHECK(node_is(p, S_IFBLK, 252, 0, 0600));
	snprintf(p, sizeof(p), "%s/block/252:0", dir);
	CHECK(is_link(p, "../vdz"));
	snprintf(p, sizeof(p), "%s/input", dir);
	CHECK(listed(p, "event7"));
	CHECK(listed(dir, "recnode") && listed(dir, "null") && listed(dir, "pts"));
	/* nodev: a node is seen, never opened */
	snprintf(p, sizeof(p), "%s/input/event7", dir);
	CHECK(open(p, O_RDONLY | O_CLOEXEC) < 0 && errno == EACCES);
	/* what every /dev holds; a device named null does not take it, nor its number link */
	snprintf(p, sizeof(p), "%s/null", dir);
	CHECK(node_is(p, S_IFCHR, 1, 3, 0666));
	snprintf(p, sizeof(p), "%s/char/1:99", dir);
	CHECK(lstat(p, &st) < 0 && errno == ENOENT);
	snprintf(p, sizeof(p), "%s/fd", dir);
	CHECK(is_link(p, "/proc/self/fd"));
	snprintf(p, sizeof(p), "%s/ptmx", dir);
	CHECK(is_link(p, "pts/ptmx"));
	snprintf(p, sizeof(p), "%s/shm", dir);
	CHECK(lstat(p, &st) == 0 && S_ISDIR(st.st_mode));
	/* nothing is made through it */
	snprintf(p, sizeof(p), "%s/new", dir);
	CHECK(mkdir(p, 0755) < 0 && errno == EPERM);
	CHECK(open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0644) < 0 && errno == EACCES);
	snprintf(p, sizeof(p), "%s/recnode", dir);
	CHECK(unlink(p) < 0 && errno == EPERM);

	/* a device that comes has its node at once; one that goes, none (no cache) */
	snprintf(p, sizeof(p), "%s/input/event8", dir);
	CHECK(lstat(p, &st) < 0 && errno == ENOENT);
	ev8 = classfs_device_create(input, NULL, makedev(13, 72), NULL, NULL, "event8");
	CHECK(ev8 != NULL);
	CHECK(node_is(p, S_IFCHR, 13, 72, 0600));
	CHECK_INT(classfs_device_unregister(ev7), 0);
	snprintf(p, sizeof(p), "%s/input/event7", dir);
	CHECK(lstat(p, &st) < 0 && errno == ENOENT);
	snprintf(p, sizeof(p), "%s/char/13:71", dir);
	CHECK(lstat(p, &st) < 0 && errno == ENOENT);

	CHECK_INT(classfs_mount_close(m), 0);
	CHECK(rmdir(dir) == 0);
	classfs_device_unregister(ev8);
	classfs_device_unregister(vdz);
	classfs_class_destroy(input);
	classfs_class_destroy(block);
	classfs_record_unload(tree);
	CHECK_INT(classfs_tree_free(tree), 0);
}

TEST(bad_arguments)
{
	errno = 0;
	CHECK(classfs_mount_devtmpfs(NULL, "/tmp", NULL) == NULL && errno == EINVAL);
	CHECK(classfs_mount_devtmpfs((struct classfs_tree *)1, NULL, NULL) == NULL &&
	      errno == EINVAL);
	CHECK(classfs_mount_devtmpfs(classfs_default_tree(), "/tmp", "bogus") == NULL &&
	      errno == EINVAL);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-reset.c - RESET (classfs_client_reset()): a mounted daemon holding
 * published devices (a parent with a child, bound ones of a client), a
 * loaded record, a value made with ATTR_SET create, and files,
 * directories and links made through the mount is returned to a new
 * daemon's tree: every device gone with its REMOVE event (children
 * first), the mount's root as at start, the same names free to publish
 * again; another uid is refused (EACCES); the connection and its
 * subscription stay.  Also: an entry made through the API in a
 * directory whose missing name the kernel had cached is visible at once.
 */
#include <dirent.h>
#include <grp.h>
#include <sys/stat.h>

#include "../harness.h"
#include "../as-uid.h"
#include "remote-util.h"

/* the names in @mnt/@rel, sorted, joined with ' ' */
static void listing(const char *mnt, const char *rel, char *out, size_t size)
{
	char path[512];
	struct dirent **v;
	int n;

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	out[0] = '\0';
	n = scandir(path, &v, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (strcmp(v[i]->d_name, ".") && strcmp(v[i]->d_name, ".."))
			snprintf(out + strlen(out), size - strlen(out), "%s%s", *out ? " " : "",
				 v[i]->d_name);
		free(v[i]);
	}
	if (n >= 0)
		free(v);
}

static int lstat_rc(const char *mnt, const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	return lstat(path, &st) == 0 ? 0 : -errno;
}

static int put(const char *mnt, const char *rel, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -errno;
}

/* reset as another uid: -EACCES (as-uid.h's child) */
static int reset_refused(void *sock)
{
	struct classfs_client *c = classfs_client_connect(sock, 0);

	if (!c)
		return 101;
	return classfs_client_reset(c) == -EACCES ? 0 : 102;
}

static int reset_as(const char *sock, uid_t uid)
{
	return cfs_test_as_uid(uid, uid, reset_refused, (void *)sock);
}

TEST(reset)
{
	char before[1024], after[1024], path[512], rec[256];
	struct classfs_client *c, *b, *s;
	struct classfs_client_status cst;
	struct evlog l = { 0 };
	struct daemon d;
	FILE *f;
	size_t len;
	char *data;

	/* nogroup reaches the socket: uid 65534 is refused by the daemon, not the kernel */
	CHECK_INT(start_daemon(&d, true, (const char *const[]){ "--group", "nogroup", NULL }), 0);
	c = classfs_client_connect(d.sock, 0);
	b = classfs_client_connect(d.sock, 0);
	s = classfs_client_connect(d.sock, 0);
	CHECK(c && b && s);
	if (!c || !b || !s)
		goto out;
	listing(d.mnt, "", before, sizeof(before));
	CHECK_INT(classfs_client_subscribe(s, 0, evlog_add, evlog_gap, &l), 0);

	/* devices: a disk with a partition, a bound one, a record's */
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "block", .name = "sdb", .devt = makedev(8, 16), .devtype = "disk" }), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "block", .name = "sdb1", .parent = "sdb", .devt = makedev(8, 17),
		.devtype = "partition" }), 0);
	CHECK_INT(classfs_client_class_create(b, "net", CLASSFS_CLIENT_BIND), 0);
	CHECK_INT(classfs_client_device_add(b, &(struct classfs_client_device){
		.cls = "net", .name = "eth0", .flags = CLASSFS_CLIENT_BIND }), 0);
	snprintf(rec, sizeof(rec), "%s/usb-mouse.umockdev", TESTDATA);
	f = fopen(rec, "re");
	CHECK(f != NULL);
	if (f) {
		data = malloc(1 << 20);
		len = fread(data, 1, 1 << 20, f);
		fclose(f);
		CHECK_INT(classfs_client_load(c, data, len, rec), 0);
		free(data);
	}
	/* a value made through ATTR_SET, visible at once where the kernel cached its absence */
	CHECK_INT(lstat_rc(d.mnt, "class/block/sdb/late"), -ENOENT);
	CHECK_INT(classfs_client_attr_add(c, "block", "sdb", "late", "1\n", 2, 0), 0);
	CHECK_INT(lstat_rc(d.mnt, "class/block/sdb/late"), 0);
	/* entries made through the mount, in and out of devices */
	snprintf(path, sizeof(path), "%s/firmware/acpi", d.mnt);
	CHECK_INT(lstat_rc(d.mnt, "firmware"), -ENOENT);
	CHECK_INT(mkdir(path, 0755) == 0 ? 0 : -errno, -ENOENT);
	snprintf(path, sizeof(path), "%s/firmware", d.mnt);
	CHECK_INT(mkdir(path, 0755) == 0 ? 0 : -errno, 0);
	CHECK_INT(lstat_rc(d.mnt, "firmware"), 0);
	snprintf(path, sizeof(path), "%s/firmware/acpi", d.mnt);
	CHECK_INT(mkdir(path, 0755) == 0 ? 0 : -errno, 0);
	CHECK_INT(put(d.mnt, "firmware/acpi/platform_profile", "balanced\n"), 0);
	CHECK_INT(put(d.mnt, "class/block/sdb/queue_depth", "32\n"), 0);
	snprintf(path, sizeof(path), "%s/class/block/sdb/subsystem", d.mnt);
	CHECK_INT(unlink(path) == 0 ? 0 : -errno, 0);
	snprintf(path, sizeof(path), "%s/devices/x", d.mnt);
	CHECK_INT(symlink("../class", path) == 0 ? 0 : -errno, 0);

	/* another uid may not; root (the daemon's uid here) may */
	CHECK_INT(reset_as(d.sock, 65534), 0);
	CHECK_INT(lstat_rc(d.mnt, "class/block/sdb"), 0);
	CHECK_INT(classfs_client_reset(c), 0);
	listing(d.mnt, "", after, sizeof(after));
	CHECK_STR(after, before);
	listing(d.mnt, "class", after, sizeof(after));
	CHECK_STR(after, "");
	listing(d.mnt, "devices", after, sizeof(after));
	CHECK_STR(after, "");
	listing(d.mnt, "dev/block", after, sizeof(after));
	CHECK_STR(after, "");
	CHECK_INT(lstat_rc(d.mnt, "firmware"), -ENOENT);
	CHECK_INT(lstat_rc(d.mnt, "block/sdb"), -ENOENT);

	/* every device's REMOVE, each child before its parent */
	CHECK_INT(classfs_client_status(s, &cst), 0);
	dispatch_until(s, &l, cst.seqnum, 5);
	{
		long sdb = evlog_find(&l, CLASSFS_ACTION_REMOVE, "/class/block/sdb");
		long sdb1 = evlog_find(&l, CLASSFS_ACTION_REMOVE, "/class/block/sdb/sdb1");

		CHECK(sdb1 >= 0 && sdb > sdb1);
		CHECK(evlog_find(&l, CLASSFS_ACTION_REMOVE, "/class/net/eth0") >= 0);
		CHECK_INT(evlog_count(&l, CLASSFS_ACTION_REMOVE), evlog_count(&l, CLASSFS_ACTION_ADD));
		CHECK_INT(l.gaps, 0);
	}
	/* the same names again; the bound client forgot what it bound */
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "block", .name = "sdb", .devt = makedev(8, 16) }), 0);
	CHECK_INT(lstat_rc(d.mnt, "class/block/sdb/subsystem"), 0);
	CHECK_INT(classfs_client_class_create(b, "net", 0), 0);
	CHECK_INT(classfs_client_reset(b), 0);
	CHECK_INT(lstat_rc(d.mnt, "class/block"), -ENOENT);
	CHECK_INT(classfs_client_reset(NULL), -EINVAL);
out:
	classfs_client_disconnect(s);
	classfs_client_disconnect(b);
	classfs_client_disconnect(c);
	evlog_free(&l);
	CHECK_INT(stop_daemon(&d), 0);
}

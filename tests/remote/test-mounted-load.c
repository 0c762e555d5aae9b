// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-mounted-load.c - a record loaded into a mounted daemon: what the
 * kernel looked at before (names looked up and not found, listings it
 * caches) shows the new devices at once, and a subtree the kernel never
 * looked at costs no invalidation, so the load is about as fast as
 * without a mount.
 *
 * The speed check compares medians of three loads of 30,000 devices into
 * a mounted and an unmounted daemon, taken alternately, and allows 3x: a
 * load that invalidated every new entry and waited for the kernel after
 * each device took 7 to 8 times as long.
 */
#include <dirent.h>
#include <sys/stat.h>

#include "../harness.h"
#include "remote-util.h"

enum { NDEV = 30000, RUNS = 3 };

/* NDEV virtual block devices vd0.. with devt 252:N, DEVNAME and a size */
static char *record(size_t *len)
{
	size_t cap = (size_t)NDEV * 160, off = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	for (int i = 0; i < NDEV; i++)
		off += (size_t)snprintf(s + off, cap - off,
					"P: /devices/virtual/block/vd%d\nE: SUBSYSTEM=block\n"
					"E: DEVNAME=vd%d\nE: MAJOR=252\nE: MINOR=%d\n"
					"A: dev=252:%d\\n\nA: size=%d\\n\n\n", i, i, i, i, i);
	*len = off;
	return s;
}

/* entries of directory @rel of the mount, . and .. aside; -1 when it cannot be read */
static long entries(const char *mnt, const char *rel)
{
	char path[512];
	struct dirent *de;
	long n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	return n;
}

static bool exists(const char *mnt, const char *rel)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	return stat(path, &st) == 0;
}

/* seconds one load of @data took into a fresh daemon, mounted or not; < 0 on failure */
static double one_load(bool mount, const char *data, size_t len, bool check)
{
	struct classfs_client *c;
	struct daemon d;
	double t0, t = -1;
	int r;

	if (start_daemon(&d, mount, NULL) < 0)
		return -1;
	c = classfs_client_connect(d.sock, 0);
	if (!c)
		goto out;
	if (check) {
		/* the kernel looks first: the root, class/, and absent names (negative entries) */
		CHECK(!exists(d.mnt, "class/block"));
		CHECK(!exists(d.mnt, "dev/block/252:0"));
		CHECK(exists(d.mnt, "dev/block"));
		/* listings the kernel caches: one name of dev/block looked up, the rest not */
		CHECK_INT(entries(d.mnt, "class"), 0);
		CHECK_INT(entries(d.mnt, "dev/block"), 0);
	}
	t0 = now_s();
	r = classfs_client_load(c, data, len, "generated");
	t = now_s() - t0;
	CHECK_INT(r, 0);
	if (r < 0)
		t = -1;
	if (check) {
		/* what it looked at shows the change; what it did not is read afresh */
		CHECK(exists(d.mnt, "class/block"));
		CHECK(exists(d.mnt, "class/block/vd0/size"));
		CHECK(exists(d.mnt, "dev/block/252:0"));
		CHECK(exists(d.mnt, "dev/block/252:29999/size"));
		CHECK(!exists(d.mnt, "class/block/vd30000"));
		CHECK_INT(entries(d.mnt, "dev/block"), NDEV);
		CHECK_INT(entries(d.mnt, "class/block"), NDEV);
		CHECK_INT(entries(d.mnt, "class"), 1);
	}
	classfs_client_disconnect(c);
out:
	CHECK_INT(stop_daemon(&d), 0);
	return t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

TEST(load_into_mounted_tree)
{
	double plain[RUNS], mounted[RUNS];
	size_t len;
	char *data = record(&len);

	CHECK(data != NULL);
	if (!data)
		return;
	for (int k = 0; k < RUNS; k++) {
		plain[k] = one_load(false, data, len, false);
		mounted[k] = one_load(true, data, len, k == 0);
		CHECK(plain[k] > 0 && mounted[k] > 0);
	}
	qsort(plain, RUNS, sizeof(double), cmp_double);
	qsort(mounted, RUNS, sizeof(double), cmp_double);
	printf("# %d devices: %.3f s unmounted, %.3f s mounted (medians of %d): %.2fx\n", NDEV,
	       plain[RUNS / 2], mounted[RUNS / 2], RUNS, mounted[RUNS / 2] / plain[RUNS / 2]);
	CHECK(mounted[RUNS / 2] < 3 * plain[RUNS / 2]);
	free(data);
}

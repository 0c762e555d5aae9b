// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-sample.c - the sample machine (data/sample.umockdev) loads into a
 * tree of either layout as the whole machine it describes:
 *  - classfs_record_load() succeeds without a warning (every recorded link
 *    but the drivers' points at a device of the record);
 *  - exactly the recorded devices exist, each at its recorded Linux path
 *    (classfs_device_syspath()), and each sent one ADD, after the ADD of
 *    its nearest recorded ancestor, in SEQNUM order;
 *  - nested class devices sit where the layout puts them, with their
 *    values byte for byte, `dev` from the record's device number, flat
 *    aliases, `device` links to class and bus parents, links resolving;
 *  - a second load of the same machine is refused (-EEXIST) and changes
 *    nothing; unload removes every device with REMOVE events, deepest
 *    first, and leaves the tree empty.
 * The file's path comes from the build (CLASSFS_SAMPLE_PATH).
 */
#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "classfs/classfs.h"
#include "classfs/record.h"
#include "harness.h"
#include "classfs-internal/testing.h"
#include "native-util.h"

#ifndef CLASSFS_SAMPLE_PATH
#error "CLASSFS_SAMPLE_PATH must name data/sample.umockdev"
#endif

/* ---- the record as a file: its bytes and its P: paths ---- */

static char *sample;
static size_t sample_len;
static char **paths;	/* "/devices/..." of every paragraph, in file order */
static int npaths;

static bool load_file(void)
{
	FILE *f = fopen(CLASSFS_SAMPLE_PATH, "rb");
	struct stat st;

	if (!f || fstat(fileno(f), &st) < 0) {
		fprintf(stderr, "  cannot open %s\n", CLASSFS_SAMPLE_PATH);
		if (f)
			fclose(f);
		return false;
	}
	sample_len = (size_t)st.st_size;
	sample = malloc(sample_len + 1);
	if (!sample || fread(sample, 1, sample_len, f) != sample_len) {
		fclose(f);
		return false;
	}
	fclose(f);
	sample[sample_len] = '\0';
	for (char *line = sample; line && *line; ) {
		char *nl = strchr(line, '\n');
		size_t n = nl ? (size_t)(nl - line) : strlen(line);

		if (n > 3 && !strncmp(line, "P: ", 3)) {
			paths = realloc(paths, sizeof(*paths) * (size_t)(npaths + 1));
			paths[npaths++] = strndup(line + 3, n - 3);
		}
		line = nl ? nl + 1 : NULL;
	}
	return npaths > 0;
}

static int path_index(const char *p)
{
	for (int i = 0; i < npaths; i++)
		if (!strcmp(paths[i], p))
			return i;
	return -1;
}

/* the nearest recorded ancestor of recorded path @i, or -1 */
static int recorded_ancestor(int i)
{
	char buf[PATH_MAX];
	char *slash;

	snprintf(buf, sizeof(buf), "%s", paths[i]);
	while ((slash = strrchr(buf, '/')) && slash != buf) {
		*slash = '\0';
		int j = path_index(buf);

		if (j >= 0)
			return j;
	}
	return -1;
}

/* ---- what the tree holds ---- */

struct seen {
	int n;
	int made;		/* devices the loader made for recorded paths' directories */
	int *index;		/* per recorded path: how often a device has it */
	char **devpath;		/* per recorded path: its DEVPATH in this tree */
	int unknown;
};

static int see_device(struct classfs_device *dev, void *data)
{
	struct seen *s = data;
	char sys[PATH_MAX], dp[PATH_MAX];
	int i;

	s->n++;
	if (classfs_device_syspath(dev, sys, sizeof(sys)) < 0 ||
	    classfs_device_devpath(dev, dp, sizeof(dp)) < 0) {
		s->unknown++;
		return 0;
	}
	i = path_index(sys);
	if (i < 0) {
		/* Linux has devices without a subsystem on the way (pci0000:00,
		 * ata1, platform): the loader makes them; nothing else may appear */
		size_t n = strlen(sys);
		bool above = false;

		for (int k = 0; k < npaths && !above; k++)
			above = !strncmp(paths[k], sys, n) && paths[k][n] == '/';
		if (above) {
			s->made++;
			return 0;
		}
		fprintf(stderr, "  device %s is not in the record\n", sys);
		s->unknown++;
		return 0;
	}
	s->index[i]++;
	free(s->devpath[i]);
	s->devpath[i] = strdup(dp);
	return 0;
}

static void seen_free(struct seen *s)
{
	for (int i = 0; i < npaths; i++)
		free(s->devpath[i]);
	free(s->devpath);
	free(s->index);
}

static unsigned int nwarnings;

static void on_warning(const char *file, unsigned long line, const char *msg, void *data)
{
	fprintf(stderr, "  warning: %s:%lu: %s\n", file, line, msg);
	nwarnings++;
}

static struct classfs_tree *load(enum classfs_layout layout, struct recorder *rec)
{
	struct classfs_record_options opt = { .filename = "sample.umockdev", .warning = on_warning };
	struct classfs_record_error err = {};
	struct classfs_tree *t = classfs_tree_new(layout);
	int r;

	if (!t)
		return NULL;
	CHECK(rec_start(rec, t) > 0);
	nwarnings = 0;
	r = classfs_record_load(t, sample, sample_len, &opt, &err);
	if (r < 0)
		fprintf(stderr, "  load: %s:%lu: %s\n", err.file, err.line, err.reason);
	CHECK_INT(r, 0);
	CHECK_INT(nwarnings, 0);
	return t;
}

static void unload(struct classfs_tree *t, struct recorder *rec, int made)
{
	rec_clear(rec);
	CHECK_INT(classfs_record_unload(t), npaths + made);
	CHECK_INT(rec_count(rec, CLASSFS_ACTION_REMOVE), npaths);
	CHECK_INT(rec->n, npaths);
	rec_stop(rec);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* every recorded device once, at its path; one ADD each, ancestors first;
 * returns the number of devices the loader made on the way */
static int check_devices(struct classfs_tree *t, struct recorder *rec)
{
	struct seen s = { .index = calloc((size_t)npaths, sizeof(int)),
			  .devpath = calloc((size_t)npaths, sizeof(char *)) };

	CHECK_INT(classfs_tree_for_each_device(t, see_device, &s), 0);
	CHECK_INT(s.n, npaths + s.made);
	CHECK_INT(s.unknown, 0);
	CHECK_INT(rec->n, npaths);
	CHECK_INT(rec_count(rec, CLASSFS_ACTION_ADD), npaths);
	CHECK_INT(rec_check_seq(rec, 0), 0);
	for (int i = 0; i < npaths; i++) {
		if (s.index[i] != 1) {
			fprintf(stderr, "  %s: %d devices\n", paths[i], s.index[i]);
			CHECK(0);
			continue;
		}
		int at = rec_find(rec, CLASSFS_ACTION_ADD, s.devpath[i]);
		int up = recorded_ancestor(i);

		if (at < 0) {
			fprintf(stderr, "  no ADD for %s (%s)\n", paths[i], s.devpath[i]);
			CHECK(0);
		} else if (up >= 0 && s.devpath[up] &&
			   rec_find(rec, CLASSFS_ACTION_ADD, s.devpath[up]) > at) {
			fprintf(stderr, "  ADD of %s before its parent %s\n", paths[i], paths[up]);
			CHECK(0);
		}
	}
	seen_free(&s);
	return s.made;
}

/*
 * Every link relative and resolving inside the tree, but `driver`: the
 * record names drivers (bus/BUS/drivers/NAME) the tree does not hold, and
 * such links are kept as recorded; tools only take their last component.
 * Returns the number of bad links (each printed).
 */
static int check_sample_links(struct classfs_tree *t, const char *dir, int *nlinks)
{
	struct nu_names v = { 0 };
	int bad = 0;

	if (classfs_path_list(t, dir, nu_names_fn, &v) < 0) {
		fprintf(stderr, "  cannot list '%s'\n", dir);
		return 1;
	}
	for (int i = 0; i < v.n; i++) {
		char path[PATH_MAX], target[PATH_MAX], real[PATH_MAX], joined[2 * PATH_MAX];
		struct classfs_stat st;

		snprintf(path, sizeof(path), "%s%s%s", dir, *dir ? "/" : "", v.name[i]);
		if (v.st[i].type == CLASSFS_FT_DIR) {
			bad += check_sample_links(t, path, nlinks);
		} else if (v.st[i].type == CLASSFS_FT_LNK) {
			ssize_t n = classfs_path_readlink(t, path, target, sizeof(target));

			(*nlinks)++;
			if (n <= 0 || target[0] == '/') {
				fprintf(stderr, "  '%s': not a relative link\n", path);
				bad++;
			} else if (!strcmp(v.name[i], "driver")) {
				if (!strstr(target, "/drivers/")) {
					fprintf(stderr, "  '%s' -> '%s': not a driver\n", path, target);
					bad++;
				}
			} else if (!nu_real(t, dir, real, sizeof(real), 0) ||
				   !nu_join(real, target, joined, sizeof(joined)) ||
				   classfs_path_stat(t, joined, &st) < 0) {
				fprintf(stderr, "  '%s' -> '%s': does not resolve\n", path, target);
				bad++;
			}
		}
		free(v.name[i]);
	}
	free(v.name);
	free(v.st);
	return bad;
}

/* the same machine again: refused, nothing changed, no event */
static void check_reload_refused(struct classfs_tree *t, struct recorder *rec)
{
	struct classfs_record_error err = {};
	size_t nodes = classfs_tree_node_count(t);
	uint64_t seq = classfs_tree_seqnum(t);
	int n = rec->n;

	CHECK_INT(classfs_record_load(t, sample, sample_len, NULL, &err), -EEXIST);
	CHECK_INT(classfs_tree_node_count(t), nodes);
	CHECK_INT(classfs_tree_seqnum(t), seq);
	CHECK_INT(rec->n, n);
}

TEST(file)
{
	CHECK(load_file());
	CHECK(npaths >= 50);
}

TEST(class_layout)
{
	struct recorder rec;
	struct classfs_tree *t = load(CLASSFS_LAYOUT_CLASS, &rec);
	int nlinks = 0, made;

	if (!t)
		return;
	made = check_devices(t, &rec);

	/* disks hold their partitions; the partition's values as recorded */
	CHECK_STR(rd(t, "class/block/sda/dev"), "8:0\n");
	CHECK_STR(rd(t, "class/block/sda/size"), "1953525168\n");
	CHECK_STR(rd(t, "class/block/sda/queue/rotational"), "1\n");
	CHECK_STR(rd(t, "class/block/sda/queue/physical_block_size"), "4096\n");
	CHECK_STR(rd(t, "class/block/sda/sda1/dev"), "8:1\n");
	CHECK_STR(rd(t, "class/block/sda/sda1/start"), "2048\n");
	CHECK_STR(rd(t, "class/block/sda/sda3/size"), "871391232\n");
	CHECK_STR(rd(t, "class/block/sda/sda3/partition"), "3\n");
	CHECK_STR(rd(t, "block/sda/sda2/start"), "1048578048\n");
	CHECK_STR(rd(t, "class/block/nvme0n1/nvme0n1p2/dev"), "259:2\n");
	CHECK_STR(rd(t, "class/block/loop0/ro"), "1\n");
	CHECK_STR(rd(t, "class/block/loop0/loop/backing_file"),
		  "/home/user/Downloads/debian-12.2.0-amd64-netinst.iso\n");
	/* flat aliases of nested devices, as udevadm enumerates them */
	CHECK_INT(ftype(t, "class/block/sda1"), CLASSFS_FT_LNK);
	CHECK_STR(rd(t, "class/block/sda1/size"), "1048576000\n");
	CHECK_STR(rd(t, "class/input/event0/dev"), "13:64\n");
	/* /dev/block links by number */
	CHECK_STR(rd(t, "dev/block/8:3/start"), "1082132480\n");
	CHECK_STR(rd(t, "dev/block/259:1/start"), "2048\n");
	CHECK_STR(rd(t, "dev/char/13:63/dev"), "13:63\n");

	/* parents: a bus device (the SCSI LUN), a class device of another
	 * class (nvme0 of class nvme holds the namespace of class block) */
	CHECK_STR(rd(t, "class/block/sda/device/model"), "ST1000LM035-1RK1\n");
	CHECK_STR(rd(t, "class/block/sda/device/vendor"), "ATA     \n");
	CHECK_STR(rd(t, "class/block/nvme0n1/device/serial"), "S4ENNX0N912345      \n");
	CHECK_STR(rd(t, "class/block/nvme0n1/device/dev"), "243:0\n");

	/* input: interfaces nested in their input device; mice has no parent */
	CHECK_STR(rd(t, "class/input/input0/name"), "AT Translated Set 2 keyboard\n");
	CHECK_STR(rd(t, "class/input/input0/capabilities/ev"), "120013\n");
	CHECK_STR(rd(t, "class/input/input0/event0/dev"), "13:64\n");
	CHECK_STR(rd(t, "class/input/input1/event1/dev"), "13:65\n");
	CHECK_STR(rd(t, "class/input/input1/mouse0/dev"), "13:32\n");
	CHECK_STR(rd(t, "class/input/mice/dev"), "13:63\n");
	CHECK(!exists(t, "class/input/mice/device"));
	CHECK(strstr(rd(t, "class/input/input0/event0/uevent"), "MAJOR=13\nMINOR=64\n") != NULL);
	CHECK(strstr(rd(t, "class/input/input0/event0/uevent"), "DEVNAME=input/event0\n") != NULL);

	/* net, sound, graphics, drm, tty */
	CHECK_STR(rd(t, "class/net/enp0s31f6/ifindex"), "2\n");
	CHECK_STR(rd(t, "class/net/enp0s31f6/address"), "8c:16:45:5e:2a:91\n");
	CHECK_STR(rd(t, "class/net/lo/type"), "772\n");
	CHECK_STR(rd(t, "class/sound/card0/pcmC0D0p/dev"), "116:16\n");
	CHECK_STR(rd(t, "class/sound/card0/pcmC0D0p/pcm_class"), "generic\n");
	CHECK_STR(rd(t, "class/sound/card0/id"), "PCH\n");
	CHECK_STR(rd(t, "class/graphics/fb0/dev"), "29:0\n");
	CHECK_STR(rd(t, "class/drm/card0/card0-eDP-1/status"), "connected\n");
	CHECK_STR(rd(t, "class/drm/card0/card0-HDMI-A-1/modes"), "");
	CHECK_STR(rd(t, "class/drm/renderD128/dev"), "226:128\n");
	CHECK_STR(rd(t, "class/tty/ttyS0/dev"), "4:64\n");
	CHECK_STR(rd(t, "class/tty/console/dev"), "5:1\n");
	CHECK_STR(rd(t, "class/tty/ptmx/dev"), "5:2\n");

	/* every link of the tree relative and resolving inside it */
	CHECK_INT(check_sample_links(t, "", &nlinks), 0);
	CHECK(nlinks > npaths);

	check_reload_refused(t, &rec);
	unload(t, &rec, made);
}

TEST(devices_layout)
{
	static const char sda[] =
		"devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda";
	static const char nvme[] = "devices/pci0000:00/0000:00:1d.0/0000:04:00.0/nvme/nvme0";
	struct recorder rec;
	struct classfs_tree *t = load(CLASSFS_LAYOUT_DEVICES, &rec);
	int nlinks = 0, made;

	if (!t)
		return;
	made = check_devices(t, &rec);

	CHECK_STR(rd(t, "%s/dev", sda), "8:0\n");
	CHECK_STR(rd(t, "%s/sda1/start", sda), "2048\n");
	CHECK_STR(rd(t, "%s/sda3/dev", sda), "8:3\n");
	CHECK_STR(rd(t, "%s/nvme0n1/nvme0n1p1/size", nvme), "1048576\n");
	CHECK_STR(rd(t, "%s/serial", nvme), "S4ENNX0N912345      \n");
	CHECK_STR(rd(t, "devices/virtual/input/mice/dev"), "13:63\n");
	CHECK_STR(rd(t, "devices/virtual/block/loop0/size"), "1290240\n");
	CHECK_STR(rd(t, "devices/platform/i8042/serio0/input/input0/event0/dev"), "13:64\n");
	CHECK_STR(rd(t, "devices/pci0000:00/0000:00:1f.6/net/enp0s31f6/mtu"), "1500\n");
	CHECK_STR(rd(t, "devices/pci0000:00/0000:00:14.0/usb1/1-2/idProduct"), "c077\n");
	CHECK_STR(rd(t, "devices/pci0000:00/0000:00:14.0/usb1/1-2/product"), "USB Optical Mouse\n");
	/* class/CLASS/NAME links for every class device, nested ones too */
	CHECK_STR(rd(t, "class/block/sda2/size"), "33554432\n");
	CHECK_STR(rd(t, "class/block/nvme0n1p2/start"), "1050624\n");
	CHECK_STR(rd(t, "class/input/mouse0/dev"), "13:32\n");
	CHECK_STR(rd(t, "class/drm/card0-eDP-1/enabled"), "enabled\n");
	CHECK_STR(rd(t, "class/nvme/nvme0/firmware_rev"), "5L2QEXA7\n");
	CHECK_STR(rd(t, "class/scsi_host/host0/proc_name"), "ahci\n");
	CHECK_STR(rd(t, "block/sda/sda1/partition"), "1\n");

	CHECK_INT(check_sample_links(t, "", &nlinks), 0);
	CHECK(nlinks > npaths);

	check_reload_refused(t, &rec);
	unload(t, &rec, made);
}

TEST(cleanup)
{
	for (int i = 0; i < npaths; i++)
		free(paths[i]);
	free(paths);
	free(sample);
}

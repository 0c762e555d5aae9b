// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-seed-disk.c - runs the project's seed-era scsi_disk.c module
 * (compiled unchanged against <classfs/kernel.h>) and checks the tree and
 * its events: a physical device and its links, disks with partitions
 * nested in them, attributes and a binary attribute, a device-level
 * hotplug hook, a rename, and a disk removed with a live partition.
 */
#include "seed-common.h"
#include "classfs-internal/fs.h"

TEST(init_builds_disks_and_partitions)
{
	struct classfs_tree *t = classfs_default_tree();

	CHECK_INT(seed_module_start(t), 0);

	CHECK_STR(read_attr("class/block/sd_version"), "sd 1.0\n");
	CHECK_STR(read_attr("class/block/sda/dev"), "8:0\n");
	CHECK_STR(read_attr("class/block/sda/size"), "2097152\n");
	CHECK_STR(read_attr("class/block/sda/sda1/dev"), "8:1\n");
	CHECK_STR(read_attr("class/block/sda/sda1/start"), "2048\n");
	CHECK_STR(read_attr("class/block/sda/sda1/partition"), "1\n");
	/* sda2 was renamed sda5 and kept its number and files */
	CHECK_INT(stat_type("class/block/sda/sda2"), 0);
	CHECK_STR(read_attr("class/block/sda/sda5/dev"), "8:2\n");
	CHECK_STR(read_attr("class/block/sda/sda5/size"), "1071104\n");
	CHECK_STR(read_attr("class/block/sda/sda5/partition"), "2\n");
	CHECK_STR(read_attr("class/block/sdb/sdb1/dev"), "8:17\n");
	CHECK_STR(read_link("class/block/sda5"), "sda/sda5");
	CHECK_STR(read_link("dev/block/8:2"), "../../class/block/sda/sda5");
	CHECK_STR(read_link("block/sdb"), "../class/block/sdb");
	CHECK_INT(stat_type("block/sdb1"), 0);
	/* the device-level hook runs for the disks it was set on */
	CHECK_STR(read_attr("class/block/sdb/uevent"),
		  "MAJOR=8\nMINOR=16\nDEVNAME=sdb\nDEVTYPE=disk\nSCSI_INDEX=1\n");
	CHECK_STR(read_attr("class/block/sda/sda1/uevent"), "MAJOR=8\nMINOR=1\nDEVNAME=sda1\n");
	/* the physical device and the links both ways */
	CHECK_INT(stat_type("devices/host0"), CLASSFS_FT_DIR);
	CHECK_INT(stat_type("class/block/sda/device"), CLASSFS_FT_LNK);
	CHECK_INT(stat_type("devices/host0/block:sda"), CLASSFS_FT_LNK);
	CHECK_INT(stat_type("devices/host0/block:sdb"), CLASSFS_FT_LNK);
}

TEST(attributes_read_and_write)
{
	struct classfs_tree *t = classfs_default_tree();
	unsigned char ident[80];
	struct classfs_stat st;

	CHECK_STR(read_attr("class/block/sda/ro"), "0\n");
	CHECK_INT(classfs_path_write(t, "class/block/sda/ro", "1\n", 2), 2);
	CHECK_STR(read_attr("class/block/sda/ro"), "1\n");
	CHECK_INT(classfs_path_write(t, "class/block/sda/ro", "2\n", 2), -EINVAL);
	CHECK_INT(classfs_path_write(t, "class/block/sda/ro", "1x", 2), -EINVAL);
	CHECK_STR(read_attr("class/block/sda/ro"), "1\n");
	CHECK_INT(classfs_path_write(t, "class/block/sda/size", "1\n", 2), -EACCES);
	CHECK_INT(classfs_path_stat(t, "class/block/sdb/ident", &st), 0);
	CHECK_INT(st.size, 64);
	CHECK_INT(st.mode & 07777, 0400);
	CHECK_INT(classfs_read(t, st.ino, (char *)ident, sizeof(ident), 0), 64);
	CHECK(ident[0] == 1 && ident[1] == 8 && ident[63] == (unsigned char)(63 * 7 + 1));
	CHECK_INT(classfs_read(t, st.ino, (char *)ident, 8, 60), 4);
	CHECK(ident[0] == (unsigned char)(60 * 7 + 1));
}

TEST(init_events)
{
	int host = find_event(0, CLASSFS_ACTION_ADD, "/devices/host0");
	int sda = find_event(0, CLASSFS_ACTION_ADD, "/class/block/sda");
	int sda1 = find_event(0, CLASSFS_ACTION_ADD, "/class/block/sda/sda1");
	int sda2 = find_event(0, CLASSFS_ACTION_ADD, "/class/block/sda/sda2");
	int sdb = find_event(0, CLASSFS_ACTION_ADD, "/class/block/sdb");
	int sdb1 = find_event(0, CLASSFS_ACTION_ADD, "/class/block/sdb/sdb1");
	int move = find_event(0, CLASSFS_ACTION_MOVE, "/class/block/sda/sda5");

	/* the physical device has its own ADD, before the disks that point at it */
	CHECK_INT(nevents, 7);
	CHECK(host >= 0 && sda > host && sda1 > sda && sda2 > sda1 && sdb > sda2 && sdb1 > sdb && move > sdb1);
	CHECK(event_has(sda, "DEVTYPE=disk"));
	CHECK(event_has(sda, "SCSI_INDEX=0"));
	CHECK(event_has(sda1, "SUBSYSTEM=block"));
	CHECK(!event_has(sda1, "DEVTYPE=disk"));
	CHECK(event_has(move, "DEVPATH_OLD=/class/block/sda/sda2"));
	CHECK(event_has(move, "MINOR=2"));
	check_seqnums();
}

TEST(exit_removes_everything)
{
	struct classfs_tree *t = classfs_default_tree();
	int before = nevents;
	const char *out = capture_stdout(classfs_module_exit);

	CHECK_STR(out, "sd: sdb released\nsd: sda released\nsd: host0 released\n");
	CHECK_INT(stat_type("class/block"), 0);
	CHECK_INT(stat_type("devices/host0"), 0);
	CHECK_INT(classfs_tree_node_count(t), base_nodes);
	/* sdb1 went with its disk, before it; sda's partitions went first */
	int rsdb1 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/sdb/sdb1");
	int rsdb = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/sdb");
	int rsda1 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/sda/sda1");
	int rsda5 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/sda/sda5");
	int rsda = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/sda");
	int rhost = find_event(before, CLASSFS_ACTION_REMOVE, "/devices/host0");

	CHECK_INT(nevents - before, 6);
	CHECK(rsdb1 >= 0 && rsdb > rsdb1 && rsda1 > rsdb && rsda5 > rsda1 && rsda > rsda5 &&
	      rhost > rsda);
	check_seqnums();
}

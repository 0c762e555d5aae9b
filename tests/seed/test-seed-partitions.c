// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-seed-partitions.c - runs the seed-era partitions.c module (compiled
 * unchanged against <classfs/kernel.h>) and checks the tree and events.
 */
#include "seed-common.h"
#include "classfs-internal/fs.h"

TEST(init_builds_disks_and_partitions)
{
	struct classfs_tree *t = classfs_default_tree();

	CHECK_INT(seed_module_start(t), 0);

	CHECK_STR(read_attr("class/block/hda/dev"), "3:0\n");
	CHECK_STR(read_attr("class/block/hda/size"), "8388608\n");
	CHECK_STR(read_attr("class/block/hda/hda1/dev"), "3:1\n");
	CHECK_STR(read_attr("class/block/hda/hda1/start"), "63\n");
	CHECK_STR(read_attr("class/block/hda/hda2/size"), "4194304\n");
	CHECK_STR(read_attr("class/block/hda/hda2/partition"), "2\n");
	/* hda3 was renamed hda4, keeping its number */
	CHECK_INT(stat_type("class/block/hda/hda3"), 0);
	CHECK_STR(read_attr("class/block/hda/hda4/dev"), "3:3\n");
	CHECK_STR(read_attr("class/block/hda/hda4/start"), "6291456\n");
	CHECK_STR(read_attr("class/block/hdb/dev"), "3:64\n");
	CHECK_STR(read_attr("class/block/hdb/hdb1/dev"), "3:65\n");
	CHECK_STR(read_attr("class/block/hda/hda1/uevent"),
		  "MAJOR=3\nMINOR=1\nDEVNAME=hda1\nDEVTYPE=partition\n");
	CHECK_STR(read_attr("class/block/hda/uevent"),
		  "MAJOR=3\nMINOR=0\nDEVNAME=hda\nDEVTYPE=disk\n");
	/* the class directory is also a flat index; block/ lists disks only */
	CHECK_STR(read_link("class/block/hda4"), "hda/hda4");
	CHECK_STR(read_link("block/hda"), "../class/block/hda");
	CHECK_INT(stat_type("block/hda1"), 0);
	CHECK_STR(read_link("dev/block/3:65"), "../../class/block/hdb/hdb1");
	CHECK_STR(read_attr("block/hdb/hdb1/size"), "1046528\n");
}

TEST(attributes_read_and_write)
{
	struct classfs_tree *t = classfs_default_tree();
	unsigned char mbr[600];
	struct classfs_stat st;

	CHECK_STR(read_attr("class/block/hda/hda1/ro"), "0\n");
	CHECK_INT(classfs_path_write(t, "class/block/hda/hda1/ro", "1\n", 2), 2);
	CHECK_STR(read_attr("class/block/hda/hda1/ro"), "1\n");
	CHECK_INT(classfs_path_write(t, "class/block/hda/hda1/ro", "7\n", 2), -EINVAL);
	CHECK_STR(read_attr("class/block/hda/hda1/ro"), "1\n");
	CHECK_INT(classfs_path_write(t, "class/block/hda/hda1/start", "1\n", 2), -EACCES);
	CHECK_INT(classfs_path_stat(t, "class/block/hda/mbr", &st), 0);
	CHECK_INT(st.size, 512);
	CHECK_INT(classfs_read(t, st.ino, (char *)mbr, sizeof(mbr), 0), 512);
	CHECK(mbr[510] == 0x55 && mbr[511] == 0xaa && mbr[0] == 0);
	CHECK_INT(classfs_read(t, st.ino, (char *)mbr, 4, 508), 4);
	CHECK(mbr[2] == 0x55 && mbr[3] == 0xaa);
}

TEST(init_events)
{
	int hda = find_event(0, CLASSFS_ACTION_ADD, "/class/block/hda");
	int hda1 = find_event(0, CLASSFS_ACTION_ADD, "/class/block/hda/hda1");
	int hda3 = find_event(0, CLASSFS_ACTION_ADD, "/class/block/hda/hda3");
	int move = find_event(0, CLASSFS_ACTION_MOVE, "/class/block/hda/hda4");
	int hdb1 = find_event(0, CLASSFS_ACTION_ADD, "/class/block/hdb/hdb1");

	CHECK_INT(nevents, 7);	/* 2 disks, 4 partitions, 1 move */
	CHECK(hda >= 0 && hda1 > hda && hda3 > hda1 && hdb1 > hda3 && move > hdb1);
	CHECK(event_has(hda, "DEVTYPE=disk"));
	CHECK(event_has(hda1, "DEVTYPE=partition"));
	CHECK(event_has(hda1, "SUBSYSTEM=block"));
	CHECK(event_has(hda1, "MAJOR=3"));
	CHECK(event_has(hda1, "MINOR=1"));
	CHECK(event_has(move, "DEVPATH_OLD=/class/block/hda/hda3"));
	CHECK(event_has(move, "DEVNAME=hda4"));
	check_seqnums();
}

TEST(exit_removes_everything)
{
	struct classfs_tree *t = classfs_default_tree();
	int before = nevents;

	capture_stdout(classfs_module_exit);
	CHECK_INT(stat_type("class/block"), 0);
	CHECK_INT(stat_type("block/hda"), 0);
	CHECK_INT(stat_type("dev/block/3:0"), 0);
	CHECK_INT(classfs_tree_node_count(t), base_nodes);
	CHECK_INT(nevents - before, 6);
	/* hdb went with its partition registered: the partition first */
	int rhdb1 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/hdb/hdb1");
	int rhdb = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/hdb");
	int rhda4 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/hda/hda4");
	int rhda = find_event(before, CLASSFS_ACTION_REMOVE, "/class/block/hda");

	CHECK(rhdb1 >= 0 && rhdb > rhdb1 && rhda4 > rhdb && rhda > rhda4);
	check_seqnums();
}

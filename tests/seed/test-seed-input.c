// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-seed-input.c - runs the seed-era input_core.c module (compiled
 * unchanged against <classfs/kernel.h>) and checks the tree and events.
 */
#include "seed-common.h"

TEST(init_builds_the_tree)
{
	struct classfs_tree *t = classfs_default_tree();

	CHECK_INT(seed_module_start(t), 0);

	CHECK_INT(stat_type("class/input/input0"), CLASSFS_FT_DIR);
	CHECK_INT(stat_type("class/input/input1"), CLASSFS_FT_DIR);
	CHECK_INT(stat_type("class/input/input0/event0"), CLASSFS_FT_DIR);
	CHECK_INT(stat_type("class/input/input1/event1"), CLASSFS_FT_DIR);
	CHECK_STR(read_attr("class/input/input0/event0/dev"), "13:64\n");
	CHECK_STR(read_attr("class/input/input1/event1/dev"), "13:65\n");
	CHECK_STR(read_attr("class/input/mice/dev"), "13:63\n");
	CHECK_STR(read_attr("class/input/input0/name"), "AT Translated Set 2 keyboard\n");
	CHECK_STR(read_attr("class/input/input1/phys"), "isa0060/serio1/input0\n");
	/* the input devices themselves have no device number */
	CHECK_INT(stat_type("class/input/input0/dev"), 0);
	/* nested devices are reachable flat, as udev enumerates them */
	CHECK_STR(read_link("class/input/event0"), "input0/event0");
	CHECK_STR(read_link("class/input/input0/event0/subsystem"), "../../../input");
	CHECK_STR(read_link("dev/char/13:64"), "../../class/input/input0/event0");
	CHECK_STR(read_attr("class/input/event1/dev"), "13:65\n");
	/* the hook's variables are in the uevent file; the guard keeps mice clean */
	CHECK_STR(read_attr("class/input/input0/uevent"),
		  "PRODUCT=1\nNAME=\"AT Translated Set 2 keyboard\"\n");
	CHECK_STR(read_attr("class/input/mice/uevent"), "MAJOR=13\nMINOR=63\nDEVNAME=mice\n");
	CHECK_STR(read_attr("class/input/input0/event0/uevent"),
		  "MAJOR=13\nMINOR=64\nDEVNAME=event0\n");
}

TEST(init_events)
{
	int mice = find_event(0, CLASSFS_ACTION_ADD, "/class/input/mice");
	int in0 = find_event(0, CLASSFS_ACTION_ADD, "/class/input/input0");
	int ev0 = find_event(0, CLASSFS_ACTION_ADD, "/class/input/input0/event0");
	int in1 = find_event(0, CLASSFS_ACTION_ADD, "/class/input/input1");
	int ev1 = find_event(0, CLASSFS_ACTION_ADD, "/class/input/input1/event1");

	CHECK_INT(nevents, 5);
	CHECK(mice >= 0 && in0 > mice && ev0 > in0 && in1 > ev0 && ev1 > in1);
	CHECK(event_has(in0, "SUBSYSTEM=input"));
	CHECK(event_has(in0, "PRODUCT=1"));
	CHECK(event_has(in0, "NAME=\"AT Translated Set 2 keyboard\""));
	CHECK(event_has(in1, "PRODUCT=6"));
	CHECK(event_has(ev0, "SUBSYSTEM=input"));
	CHECK(event_has(ev0, "MAJOR=13"));
	CHECK(event_has(ev0, "MINOR=64"));
	CHECK(event_has(ev0, "DEVNAME=event0"));
	CHECK(!event_has(ev0, "PRODUCT=1"));
	CHECK(event_has(ev1, "MINOR=65"));
	CHECK(event_has(mice, "MINOR=63"));
	check_seqnums();
}

TEST(exit_removes_everything)
{
	struct classfs_tree *t = classfs_default_tree();
	int before = nevents;
	const char *out = capture_stdout(classfs_module_exit);

	/* each embedded input device released exactly once */
	CHECK_STR(out, "input: released ImExPS/2 Generic Explorer Mouse\n"
		       "input: released AT Translated Set 2 keyboard\n");
	CHECK_INT(stat_type("class/input"), 0);
	CHECK_INT(classfs_tree_node_count(t), base_nodes);
	/* REMOVE for every ADD, children before their parents */
	int rev1 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/input/input1/event1");
	int rin1 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/input/input1");
	int rev0 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/input/input0/event0");
	int rin0 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/input/input0");
	int rmice = find_event(before, CLASSFS_ACTION_REMOVE, "/class/input/mice");

	CHECK_INT(nevents - before, 5);
	CHECK(rev1 >= 0 && rin1 > rev1);
	CHECK(rev0 >= 0 && rin0 > rev0);
	CHECK(rmice > rin0);
	check_seqnums();
}

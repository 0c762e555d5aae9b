// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-seed-sound.c - runs the project's seed-era sound_core.c module
 * (compiled unchanged against <classfs/kernel.h>) and checks the tree and
 * its events: embedded devices, a late class interface hanging devices
 * below each card, a static class with a class attribute, a hotplug hook
 * that adds variables and vetoes, and attributes added after ADD.
 */
#include "seed-common.h"

TEST(init_builds_the_tree)
{
	struct classfs_tree *t = classfs_default_tree();

	CHECK_INT(seed_module_start(t), 0);

	CHECK_STR(read_attr("class/sound/version"), "1.0.10\n");
	CHECK_INT(stat_type("class/sound/card0"), CLASSFS_FT_DIR);
	CHECK_INT(stat_type("class/sound/card1"), CLASSFS_FT_DIR);
	/* the interface's devices, nested below their card */
	CHECK_STR(read_attr("class/sound/card0/controlC0/dev"), "116:0\n");
	CHECK_STR(read_attr("class/sound/card0/pcmC0D0p/dev"), "116:16\n");
	CHECK_STR(read_attr("class/sound/card1/controlC1/dev"), "116:32\n");
	CHECK_STR(read_attr("class/sound/card1/pcmC1D0p/dev"), "116:48\n");
	CHECK_STR(read_attr("class/sound/seq/dev"), "116:1\n");
	CHECK_STR(read_attr("class/sound/timer/dev"), "116:33\n");
	/* cards have no number, and their files came from the driver */
	CHECK_INT(stat_type("class/sound/card0/dev"), 0);
	CHECK_STR(read_attr("class/sound/card1/id"), "HDMI\n");
	CHECK_STR(read_attr("class/sound/card0/number"), "0\n");
	CHECK_STR(read_attr("class/sound/card0/longname"), "HDA Intel PCH at 0xf7f10000 irq 33\n");
	/* flat entries for the nested devices, links relative */
	CHECK_STR(read_link("class/sound/pcmC1D0p"), "card1/pcmC1D0p");
	CHECK_STR(read_link("class/sound/card0/controlC0/subsystem"), "../../../sound");
	CHECK_STR(read_link("dev/char/116:48"), "../../class/sound/card1/pcmC1D0p");
	/* the hook's variables are in the card's uevent file, not the children's */
	CHECK_STR(read_attr("class/sound/card0/uevent"), "SOUND_CARD=0\nSOUND_ID=PCH\n");
	CHECK_STR(read_attr("class/sound/card0/pcmC0D0p/uevent"),
		  "MAJOR=116\nMINOR=16\nDEVNAME=pcmC0D0p\n");
}

TEST(init_events)
{
	int seq = find_event(0, CLASSFS_ACTION_ADD, "/class/sound/seq");
	int c0 = find_event(0, CLASSFS_ACTION_ADD, "/class/sound/card0");
	int ctl0 = find_event(0, CLASSFS_ACTION_ADD, "/class/sound/card0/controlC0");
	int pcm0 = find_event(0, CLASSFS_ACTION_ADD, "/class/sound/card0/pcmC0D0p");
	int c1 = find_event(0, CLASSFS_ACTION_ADD, "/class/sound/card1");
	int ctl1 = find_event(0, CLASSFS_ACTION_ADD, "/class/sound/card1/controlC1");
	int pcm1 = find_event(0, CLASSFS_ACTION_ADD, "/class/sound/card1/pcmC1D0p");

	/* the vetoed timer has none; every other device one, parents first */
	CHECK_INT(nevents, 7);
	CHECK_INT(find_event(0, CLASSFS_ACTION_ADD, "/class/sound/timer"), -1);
	CHECK(seq >= 0 && c0 > seq && ctl0 > c0 && pcm0 > ctl0 && c1 > pcm0 && ctl1 > c1 &&
	      pcm1 > ctl1);
	CHECK(event_has(c0, "SUBSYSTEM=sound"));
	CHECK(event_has(c0, "SOUND_CARD=0"));
	CHECK(event_has(c1, "SOUND_ID=HDMI"));
	CHECK(event_has(pcm1, "SUBSYSTEM=sound"));
	CHECK(event_has(pcm1, "MINOR=48"));
	CHECK(event_has(pcm1, "DEVNAME=pcmC1D0p"));
	CHECK(!event_has(pcm1, "SOUND_CARD=1"));
	check_seqnums();
}

TEST(attribute_store_validates)
{
	struct classfs_tree *t = classfs_default_tree();

	CHECK_INT(classfs_path_write(t, "class/sound/card0/id", "Speaker\n", 8), 8);
	CHECK_STR(read_attr("class/sound/card0/id"), "Speaker\n");
	CHECK_INT(classfs_path_write(t, "class/sound/card0/id", "no spaces\n", 10), -EINVAL);
	CHECK_INT(classfs_path_write(t, "class/sound/card0/id", "\n", 1), -EINVAL);
	CHECK_STR(read_attr("class/sound/card0/id"), "Speaker\n");
	CHECK_INT(classfs_path_write(t, "class/sound/card0/number", "3\n", 2), -EACCES);
	CHECK_INT(classfs_path_write(t, "class/sound/version", "2\n", 2), -EACCES);
}

TEST(exit_removes_everything)
{
	struct classfs_tree *t = classfs_default_tree();
	int before = nevents;
	const char *out = capture_stdout(classfs_module_exit);

	/* each embedded card released exactly once, in the order unregistered */
	CHECK_STR(out, "sound: card1 released\nsound: card0 released\n");
	CHECK_INT(stat_type("class/sound"), 0);
	CHECK_INT(classfs_tree_node_count(t), base_nodes);
	/* REMOVE for every ADD: the interface's devices before their cards */
	int rpcm1 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/sound/card1/pcmC1D0p");
	int rc1 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/sound/card1");
	int rpcm0 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/sound/card0/pcmC0D0p");
	int rc0 = find_event(before, CLASSFS_ACTION_REMOVE, "/class/sound/card0");
	int rseq = find_event(before, CLASSFS_ACTION_REMOVE, "/class/sound/seq");

	CHECK_INT(nevents - before, 7);
	CHECK_INT(find_event(before, CLASSFS_ACTION_REMOVE, "/class/sound/timer"), -1);
	CHECK(rpcm0 >= 0 && rpcm1 >= 0 && rc1 > rpcm1 && rc1 > rpcm0 && rc0 > rc1 && rseq > rc0);
	check_seqnums();
}

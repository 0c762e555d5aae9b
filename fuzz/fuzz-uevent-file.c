// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-uevent-file.c - what a writer may put into a device's `uevent`
 * file: "ACTION [UUID [KEY=VALUE ...]]" synthesises that event, anything
 * else is -EINVAL and sends nothing.  Checked here: no crash, an accepted
 * write consumed every byte and sent exactly one event with a known
 * action, whose variables hold no control byte and are the tree's own
 * and SYNTH_ ones only, a refused one sent none, and the tree is
 * unchanged either way.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

#include "classfs/classfs.h"
#include "classfs-internal/testing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct classfs_tree *tree;
static size_t base_nodes;
static int events;
static uint64_t last_seqnum;

/* the variables the tree itself gives the fuzzed device's events */
static bool tree_variable(const char *kv)
{
	static const char *const own[] = { "ACTION=", "DEVPATH=", "SUBSYSTEM=", "MAJOR=",
					   "MINOR=", "DEVNAME=", "SEQNUM=", "SYNTH_UUID=",
					   "SYNTH_ARG_" };

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (!strncmp(kv, own[i], strlen(own[i])))
			return true;
	return false;
}

static void listener(const struct classfs_uevent *ev, void *arg)
{
	(void)arg;
	if ((unsigned int)ev->action >= CLASSFS_ACTION_COUNT || ev->seqnum <= last_seqnum ||
	    strcmp(ev->devpath, "/class/fuzz/parent/child") || !classfs_uevent_get(ev, "SEQNUM"))
		abort();
	for (int i = 0; i < ev->envc; i++) {
		if (!tree_variable(ev->envp[i]))
			abort();
		for (const char *c = ev->envp[i]; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				abort();
	}
	last_seqnum = ev->seqnum;
	events++;
}

static void setup(void)
{
	struct classfs_class *cls;
	static struct classfs_device parent, child;

	tree = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	cls = classfs_class_create(tree, "fuzz");
	if (!tree || !cls)
		abort();
	classfs_device_initialize(&parent);
	parent.cls = cls;
	classfs_device_set_name(&parent, "parent");
	classfs_device_initialize(&child);
	child.cls = cls;
	child.parent = &parent;
	child.devt = makedev(240, 1);
	classfs_device_set_name(&child, "child");
	if (classfs_device_add_to(tree, &parent) || classfs_device_add_to(tree, &child) ||
	    classfs_listener_add(tree, listener, NULL) < 0)
		abort();
	base_nodes = classfs_tree_node_count(tree);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int before;
	ssize_t r;

	if (!tree)
		setup();
	before = events;
	r = classfs_path_write(tree, "class/fuzz/parent/child/uevent", (const char *)data, size);
	if (r >= 0 && ((size_t)r != size || events != before + 1))
		abort();
	if (r < 0 && (events != before || (r != -EINVAL && r != -E2BIG && r != -ENOMEM)))
		abort();
	if (classfs_tree_node_count(tree) != base_nodes)
		abort();
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-locking.c - the per-thread bookkeeping of nested callbacks: an
 * interface call nested deeper than the depth of attribute callbacks
 * still knows its own calls (unregistering from the innermost one does
 * not wait for itself), attribute callbacks nested past their limit get
 * -EBUSY, and callbacks that call back into the library do not deadlock.
 */
#include <signal.h>
#include <unistd.h>

#include "../harness.h"
#include "classfs-internal/testing.h"
#include "classfs-internal/watch.h"
#include "../native-util.h"

static void on_alarm(int sig)
{
	static const char msg[] = "  deadlocked: test timed out\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(1);
}

static void watchdog(unsigned int seconds)
{
	signal(SIGALRM, on_alarm);
	alarm(seconds);
}

/* ---- interface calls nested 24 deep ---- */

#define INTF_DEPTH 24	/* above the 16 nested attribute callbacks of a thread */

static struct classfs_device *chain[INTF_DEPTH + 1];
static int depth, unregistered = -1, removes;

static void chain_release(struct classfs_device *dev)
{
	free(dev);
}

/* each add() makes a nested device of the same class: add() nests */
static int chain_add(struct classfs_device *dev, struct classfs_interface *intf)
{
	struct classfs_device *d;
	int here = depth++;

	if (here == INTF_DEPTH) {
		/* the innermost call: the interface goes, its own calls are not waited for */
		classfs_interface_unregister(intf);
		unregistered = here;
		return 0;
	}
	d = calloc(1, sizeof(*d));
	classfs_device_initialize(d);
	d->cls = intf->cls;
	d->parent = dev;
	d->release = chain_release;
	if (classfs_device_set_name(d, "n%d", here + 1) < 0 || classfs_device_add(d) < 0) {
		classfs_device_put(d);
		return 0;
	}
	chain[here + 1] = d;
	return 0;
}

static void chain_remove(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)dev;
	(void)intf;
	removes++;
}

TEST(interface_unregister_from_deeply_nested_add)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "deep");
	struct classfs_interface intf = { .cls = c, .add = chain_add, .remove = chain_remove };

	REQUIRE(c);
	REQUIRE(classfs_interface_register(&intf) == 0);
	watchdog(20);
	chain[0] = classfs_device_create(c, NULL, 0, NULL, NULL, "n0");
	alarm(0);
	REQUIRE(chain[0]);
	CHECK_INT(unregistered, INTF_DEPTH);
	CHECK_INT(depth, INTF_DEPTH + 1);
	/* unregistered: the devices present met remove() once each, nothing after */
	for (int i = 1; i <= INTF_DEPTH; i++)
		CHECK(chain[i] && classfs_device_is_added(chain[i]));
	CHECK_INT(removes, INTF_DEPTH + 1);
	classfs_device_unregister(chain[0]);
	CHECK_INT(removes, INTF_DEPTH + 1);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- attribute callbacks nested past the limit ---- */

#define NESTED_MAX 16	/* internal.h's CFS_MAX_NESTED_CALLS */

static struct classfs_tree *nest_tree;
static int nest_depth, nest_deepest, nest_err;

/* show() reads itself again: one callback nested in the other */
static ssize_t self_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	char inner[64];
	ssize_t r;

	(void)dev;
	(void)a;
	if (++nest_depth > nest_deepest)
		nest_deepest = nest_depth;
	r = classfs_path_read(nest_tree, "class/nest/d/self", inner, sizeof(inner));
	if (r < 0 && !nest_err)
		nest_err = (int)r;
	nest_depth--;
	return snprintf(buf, CLASSFS_ATTR_MAX, "%d\n", nest_depth);
}

static const struct classfs_device_attribute self_attr = {
	.attr = { "self", 0444 }, .show = self_show
};

TEST(nested_attribute_callbacks_stop_with_ebusy)
{
	struct classfs_class *c;
	struct classfs_device *d;
	char buf[64];
	size_t base;

	nest_tree = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	REQUIRE(nest_tree);
	base = classfs_tree_node_count(nest_tree);
	c = classfs_class_create(nest_tree, "nest");
	REQUIRE(c);
	d = classfs_device_create(c, NULL, 0, NULL, NULL, "d");
	REQUIRE(d);
	REQUIRE(classfs_device_create_file(d, &self_attr) == 0);
	CHECK_INT(classfs_path_read(nest_tree, "class/nest/d/self", buf, sizeof(buf)), 2);
	CHECK_INT(nest_deepest, NESTED_MAX);
	CHECK_INT(nest_err, -EBUSY);
	/* and the thread's bookkeeping is back to nothing: it works again */
	nest_deepest = nest_err = 0;
	CHECK_INT(classfs_path_read(nest_tree, "class/nest/d/self", buf, sizeof(buf)), 2);
	CHECK_INT(nest_deepest, NESTED_MAX);
	classfs_device_unregister(d);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_node_count(nest_tree), base);
	CHECK_INT(classfs_tree_free(nest_tree), 0);
}

static void changed_noop(void *data, uint64_t dir_ino, const char *name)
{
}

/*
 * Making and freeing a tree runs the node code, whose rule is the tree
 * lock held; with another tree watched (a mount), its change hooks check
 * that rule (debug and sanitizer builds abort when it is broken).
 */
TEST(trees_made_and_freed_while_another_is_watched)
{
	static const struct classfs_watch_ops ops = { .changed = changed_noop };
	struct classfs_tree *watched, *other;
	int id;

	watched = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	REQUIRE(watched);
	id = classfs_tree_watch_add(watched, &ops, NULL);
	REQUIRE(id > 0);
	for (int i = 0; i < 2; i++) {
		other = classfs_tree_new(i ? CLASSFS_LAYOUT_DEVICES : CLASSFS_LAYOUT_CLASS);
		REQUIRE(other);
		CHECK_INT(classfs_tree_free(other), 0);
	}
	CHECK_INT(classfs_tree_watch_remove(watched, id), 0);
	CHECK_INT(classfs_tree_free(watched), 0);
}


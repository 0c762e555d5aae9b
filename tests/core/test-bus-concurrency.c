// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-bus-concurrency.c - a device_add() refused after its bus link was
 * made gives back what it reserved under the tree lock: one thread adds
 * bus devices that are refused (their parent holds a device of that name)
 * while another adds and removes a device of the same bus, whose devices
 * directory's table the refused adds must not free beneath it.  The daemon's
 * ThreadSanitizer build runs it (its name says "concurrency"); under
 * AddressSanitizer a table freed without the lock is a use after free.
 */
#include <pthread.h>

#include "../harness.h"
#include "classfs-internal/testing.h"

#define ROUNDS 100000

static struct classfs_bus bus = { .name = "race" };
static struct classfs_tree *tree;

struct counts {
	unsigned int ok, eexist, other;
};

/* the parent of the refused adds, and the device of theirs name it holds */
static struct classfs_device holder, taken;

static void plain_release(struct classfs_device *dev)
{
	free(dev);
}

static struct classfs_device *bus_dev(const char *name, struct classfs_device *parent)
{
	struct classfs_device *d = calloc(1, sizeof(*d));

	if (!d)
		return NULL;
	classfs_device_initialize(d);
	d->release = plain_release;
	d->bus = &bus;
	d->parent = parent;
	if (classfs_device_set_name(d, "%s", name) < 0) {
		classfs_device_put(d);
		return NULL;
	}
	return d;
}

/* adds refused with their bus link made: the parent's directory has their name (-EEXIST) */
static void *refused_adds(void *arg)
{
	struct counts *n = arg;

	for (int i = 0; i < ROUNDS; i++) {
		struct classfs_device *d = bus_dev("taken", &holder);
		int r = d ? classfs_device_add(d) : -ENOMEM;

		if (r == -EEXIST)
			n->eexist++;
		else
			n->other++;
		classfs_device_put(d);
	}
	return NULL;
}

/* a device of the bus added and removed: its link reserved and made in the bus's directory */
static void *adds_and_removes(void *arg)
{
	struct counts *n = arg;

	for (int i = 0; i < ROUNDS; i++) {
		struct classfs_device *d = bus_dev("comes-and-goes", NULL);

		if (d && classfs_device_add(d) == 0 && classfs_device_unregister(d) == 0) {
			n->ok++;
			continue;
		}
		n->other++;
		classfs_device_put(d);
	}
	return NULL;
}

TEST(refused_add_beside_another)
{
	struct counts a = { 0 }, b = { 0 };
	pthread_t ta, tb;
	size_t base;

	tree = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	REQUIRE(tree != NULL);
	REQUIRE(classfs_bus_register(tree, &bus) == 0);
	classfs_device_initialize(&holder);
	classfs_device_initialize(&taken);
	taken.parent = &holder;
	REQUIRE(classfs_device_set_name(&holder, "holder") == 0);
	REQUIRE(classfs_device_set_name(&taken, "taken") == 0);
	REQUIRE(classfs_device_add_to(tree, &holder) == 0);
	REQUIRE(classfs_device_add(&taken) == 0);
	base = classfs_tree_node_count(tree);
	pthread_create(&ta, NULL, refused_adds, &a);
	pthread_create(&tb, NULL, adds_and_removes, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_INT(a.eexist, ROUNDS);
	CHECK_INT(a.other, 0);
	CHECK_INT(b.ok, ROUNDS);
	CHECK_INT(b.other, 0);
	CHECK_INT(classfs_tree_node_count(tree), base);
	CHECK_INT(classfs_device_unregister(&holder), 0);
	CHECK_INT(classfs_bus_unregister(&bus), 0);
	CHECK_INT(classfs_tree_free(tree), 0);
}

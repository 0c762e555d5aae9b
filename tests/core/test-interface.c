// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-interface.c - class interfaces: add() replayed on late register,
 * remove() on unregister, callbacks that create and remove devices of
 * the same class (the evdev pattern) without deadlock, interfaces limited
 * to a device type, and add()/remove() pairing under concurrency.
 */
#include <pthread.h>

#include "../harness.h"
#include "classfs-internal/testing.h"
#include "../native-util.h"

/* ---- a log of calls ---- */

static char calls[128][64];
static int ncalls;

static void logc(const char *what, struct classfs_device *dev, const char *intf)
{
	if (ncalls < 128)
		snprintf(calls[ncalls++], sizeof(calls[0]), "%s %s %s", intf, what,
			 classfs_device_name(dev));
}

static int count_calls(const char *s)
{
	int n = 0;

	for (int i = 0; i < ncalls; i++)
		n += !strcmp(calls[i], s);
	return n;
}

static int find_call(const char *s)
{
	for (int i = 0; i < ncalls; i++)
		if (!strcmp(calls[i], s))
			return i;
	return -1;
}

static int any_add(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	logc("add", dev, "any");
	return 0;
}

static void any_remove(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	logc("remove", dev, "any");
}

TEST(late_register_and_unregister)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "ifc");
	struct classfs_class unreg = { .name = "unreg" };
	struct classfs_interface intf = { .cls = c, .add = any_add, .remove = any_remove };
	struct classfs_interface noclass = { .add = any_add };
	struct classfs_interface other = { .cls = &unreg, .add = any_add };
	struct classfs_device *a, *b, *n, *x;

	a = classfs_device_create(c, NULL, 0, NULL, NULL, "a");
	b = classfs_device_create(c, a, 0, NULL, NULL, "b");
	ncalls = 0;

	CHECK_INT(classfs_interface_register(NULL), -ENODEV);
	CHECK_INT(classfs_interface_register(&noclass), -ENODEV);
	CHECK_INT(classfs_interface_register(&other), -EINVAL);
	CHECK_INT(ncalls, 0);

	/* late: add() for each device already there */
	CHECK_INT(classfs_interface_register(&intf), 0);
	CHECK_INT(classfs_interface_register(&intf), -EEXIST);
	CHECK_INT(ncalls, 2);
	CHECK_INT(count_calls("any add a"), 1);
	CHECK_INT(count_calls("any add b"), 1);

	/* then for each new one, after its ADD */
	n = classfs_device_create(c, NULL, 0, NULL, NULL, "n");
	CHECK_INT(count_calls("any add n"), 1);
	x = classfs_device_create(c, b, 0, NULL, NULL, "x");
	CHECK_INT(count_calls("any add x"), 1);
	CHECK_INT(ncalls, 4);

	/* remove() when a device goes */
	classfs_device_unregister(x);
	CHECK_INT(count_calls("any remove x"), 1);
	CHECK_INT(ncalls, 5);

	/* unregister: remove() for every device left, once */
	classfs_interface_unregister(&intf);
	CHECK_INT(count_calls("any remove a"), 1);
	CHECK_INT(count_calls("any remove b"), 1);
	CHECK_INT(count_calls("any remove n"), 1);
	CHECK_INT(ncalls, 8);
	classfs_interface_unregister(&intf);	/* twice: nothing */
	classfs_interface_unregister(NULL);
	CHECK_INT(ncalls, 8);

	/* gone: no more calls */
	classfs_device_unregister(n);
	CHECK_INT(ncalls, 8);

	/* and it can come back */
	CHECK_INT(classfs_interface_register(&intf), 0);
	CHECK_INT(ncalls, 10);
	classfs_device_unregister(a);	/* its remove() first, then b's */
	CHECK_INT(ncalls, 12);
	CHECK(find_call("any remove a") >= 0 && find_call("any remove a") < find_call("any remove b"));
	classfs_interface_unregister(&intf);
	CHECK_INT(ncalls, 12);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- the evdev pattern: an interface that makes a nested device of the same class ---- */

static const struct classfs_device_type input_type = { .name = "input" };
static const struct classfs_device_type evdev_type = { .name = "evdev" };
static int evdev_minor;
static int released;

static void rel(struct classfs_device *dev)
{
	released++;
	free(dev);
}

static struct classfs_device *mkdev(struct classfs_class *c, struct classfs_device *parent,
				    const struct classfs_device_type *type, dev_t devt,
				    const char *fmt, int n)
{
	struct classfs_device *d = calloc(1, sizeof(*d));

	classfs_device_initialize(d);
	d->cls = c;
	d->parent = parent;
	d->type = type;
	d->devt = devt;
	d->release = rel;
	CHECK_INT(classfs_device_set_name(d, fmt, n), 0);
	if (classfs_device_add(d) < 0) {
		classfs_device_put(d);
		return NULL;
	}
	return d;
}

static int evdev_connect(struct classfs_device *dev, struct classfs_interface *intf)
{
	struct classfs_device *ev;
	int m = evdev_minor++;

	logc("add", dev, "evdev-handler");
	ev = mkdev(intf->cls, dev, &evdev_type, makedev(13, (unsigned)(64 + m)), "event%d", m);
	CHECK(ev != NULL);
	dev->drvdata = ev;
	return 0;
}

static void evdev_disconnect(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	logc("remove", dev, "evdev-handler");
	if (dev->drvdata) {
		CHECK_INT(classfs_device_unregister(dev->drvdata), 0);
		dev->drvdata = NULL;
	}
}

static int evnode_add(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	logc("add", dev, "evnode");
	return 0;
}

static void evnode_remove(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	logc("remove", dev, "evnode");
}

static void evdev_pattern(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class c = { .name = "input" };
	struct classfs_interface handler = { .cls = &c, .type = &input_type,
					     .add = evdev_connect, .remove = evdev_disconnect };
	struct classfs_interface nodes = { .cls = &c, .type = &evdev_type,
					   .add = evnode_add, .remove = evnode_remove };
	struct classfs_device *in0, *in1;
	struct recorder r;
	size_t base;

	CHECK_INT(classfs_class_register(t, &c), 0);
	base = classfs_tree_node_count(t);
	ncalls = 0;
	evdev_minor = 0;
	released = 0;
	CHECK(rec_start(&r, t) > 0);
	in0 = mkdev(&c, NULL, &input_type, 0, "input%d", 0);
	CHECK_INT(classfs_interface_register(&handler), 0);	/* late: event0 for input0 */
	CHECK_INT(ftype(t, "class/input/input0/event0/"), CLASSFS_FT_DIR);
	CHECK_STR(rd(t, "class/input/event0/dev"), "13:64\n");
	CHECK_INT(classfs_interface_register(&nodes), 0);	/* late: sees event0 only */
	CHECK_INT(count_calls("evnode add event0"), 1);
	CHECK_INT(count_calls("evnode add input0"), 0);
	in1 = mkdev(&c, NULL, &input_type, 0, "input%d", 1);
	CHECK(in1 != NULL);
	CHECK_INT(count_calls("evdev-handler add input1"), 1);
	CHECK_INT(count_calls("evnode add event1"), 1);
	CHECK_INT(count_calls("evdev-handler add event1"), 0);	/* typed: not offered */
	CHECK_INT(ftype(t, "class/input/input1/event1/dev"), CLASSFS_FT_REG);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_ADD), 4);
	/* ADD of the input device before that of its event device */
	CHECK(rec_find(&r, CLASSFS_ACTION_ADD, NULL) >= 0);
	CHECK_INT(check_links(t, NULL), 0);

	/* the handler goes: it tears down its event devices */
	rec_clear(&r);
	classfs_interface_unregister(&handler);
	CHECK_INT(count_calls("evdev-handler remove input0"), 1);
	CHECK_INT(count_calls("evdev-handler remove input1"), 1);
	CHECK_INT(count_calls("evnode remove event0"), 1);
	CHECK_INT(count_calls("evnode remove event1"), 1);
	CHECK_INT(ftype(t, "class/input/event0"), -ENOENT);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_REMOVE), 2);
	CHECK_INT(released, 2);

	/* back again, then the input device goes: its handler's remove() first */
	CHECK_INT(classfs_interface_register(&handler), 0);
	CHECK_INT(ftype(t, "class/input/event2"), CLASSFS_FT_LNK);
	CHECK_INT(ftype(t, "class/input/event3"), CLASSFS_FT_LNK);
	char evname[32], want[64];

	snprintf(evname, sizeof(evname), "%s", classfs_device_name(in0->drvdata));
	rec_clear(&r);
	ncalls = 0;
	classfs_device_unregister(in0);
	CHECK_INT(find_call("evdev-handler remove input0"), 0);
	snprintf(want, sizeof(want), "evnode remove %s", evname);
	CHECK(find_call(want) > 0);
	CHECK_INT(rec_count(&r, CLASSFS_ACTION_REMOVE), 2);
	CHECK_INT(r.n, 2);
	CHECK(r.n == 2 && strstr(r.ev[0].devpath, evname) && strstr(r.ev[1].devpath, "input0"));

	classfs_interface_unregister(&handler);
	classfs_interface_unregister(&nodes);
	classfs_device_unregister(in1);
	CHECK_INT(released, 6);
	CHECK_INT(classfs_tree_node_count(t), base);
	rec_stop(&r);
	classfs_class_unregister(&c);
	CHECK_INT(classfs_tree_free(t), 0);
}

TEST(evdev_pattern_layout_class)
{
	evdev_pattern(CLASSFS_LAYOUT_CLASS);
}

TEST(evdev_pattern_layout_devices)
{
	evdev_pattern(CLASSFS_LAYOUT_DEVICES);
}

/* ---- callbacks that unregister their own interface or remove the device ---- */

static struct classfs_interface *self_intf;

static int unregister_self_add(struct classfs_device *dev, struct classfs_interface *intf)
{
	logc("add", dev, "selfish");
	classfs_interface_unregister(intf);	/* no hang */
	return 0;
}

static void unregister_self_remove(struct classfs_device *dev, struct classfs_interface *intf)
{
	(void)intf;
	logc("remove", dev, "selfish");
}

TEST(callbacks_calling_back)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "cb");
	struct classfs_interface selfish = { .cls = c, .add = unregister_self_add,
					     .remove = unregister_self_remove };
	struct classfs_device *a, *b;

	self_intf = &selfish;
	ncalls = 0;
	CHECK_INT(classfs_interface_register(&selfish), 0);
	a = classfs_device_create(c, NULL, 0, NULL, NULL, "a");
	CHECK(a != NULL);
	CHECK_INT(count_calls("selfish add a"), 1);
	CHECK(!selfish.p.registered);
	b = classfs_device_create(c, NULL, 0, NULL, NULL, "b");
	CHECK_INT(count_calls("selfish add b"), 0);
	classfs_device_unregister(a);
	classfs_device_unregister(b);
	CHECK(count_calls("selfish remove b") == 0);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

/* ---- concurrency: add() and remove() pair up for each device ---- */

struct devstate {
	int cur;	/* 1 between add() and remove() */
	int bad;
	int adds;
};

#define NDEV 64

static struct devstate states[NDEV];

static int pair_add(struct classfs_device *dev, struct classfs_interface *intf)
{
	struct devstate *s = dev->drvdata;

	(void)intf;
	if (__atomic_exchange_n(&s->cur, 1, __ATOMIC_SEQ_CST) != 0)
		__atomic_add_fetch(&s->bad, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&s->adds, 1, __ATOMIC_SEQ_CST);
	return 0;
}

static void pair_remove(struct classfs_device *dev, struct classfs_interface *intf)
{
	struct devstate *s = dev->drvdata;

	(void)intf;
	if (__atomic_exchange_n(&s->cur, 0, __ATOMIC_SEQ_CST) != 1)
		__atomic_add_fetch(&s->bad, 1, __ATOMIC_SEQ_CST);
}

struct churn {
	struct classfs_class *cls;
	struct classfs_interface *intf;
	int first, stop;
};

static void *device_churn(void *arg)
{
	struct churn *ch = arg;

	for (int round = 0; round < 300; round++)
		for (int i = ch->first; i < ch->first + NDEV / 2; i++) {
			struct classfs_device *d = classfs_device_create(ch->cls, NULL, 0, NULL,
									 &states[i], "d%d", i);

			if (d)
				classfs_device_unregister(d);
		}
	return NULL;
}

static void *intf_churn(void *arg)
{
	struct churn *ch = arg;

	/* registered when started: the devices churn under it from the first */
	while (!__atomic_load_n(&ch->stop, __ATOMIC_ACQUIRE)) {
		classfs_interface_unregister(ch->intf);
		CHECK_INT(classfs_interface_register(ch->intf), 0);
	}
	classfs_interface_unregister(ch->intf);
	return NULL;
}

TEST(add_remove_pairing_under_concurrency)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *c = classfs_class_create(t, "pair");
	struct classfs_interface intf = { .cls = c, .add = pair_add, .remove = pair_remove };
	struct churn a = { c, &intf, 0, 0 }, b = { c, &intf, NDEV / 2, 0 }, i = { c, &intf, 0, 0 };
	pthread_t ta, tb, ti;
	int bad = 0, cur = 0, adds = 0;

	memset(states, 0, sizeof(states));
	CHECK_INT(classfs_interface_register(&intf), 0);
	/* one device made before any churn: its add() is certain */
	struct classfs_device *first = classfs_device_create(c, NULL, 0, NULL, &states[0], "d0");

	if (first)
		classfs_device_unregister(first);
	pthread_create(&ti, NULL, intf_churn, &i);
	pthread_create(&ta, NULL, device_churn, &a);
	pthread_create(&tb, NULL, device_churn, &b);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	__atomic_store_n(&i.stop, 1, __ATOMIC_RELEASE);
	pthread_join(ti, NULL);
	for (int k = 0; k < NDEV; k++) {
		bad += states[k].bad;
		cur += states[k].cur;
		adds += states[k].adds;
	}
	CHECK_INT(bad, 0);
	CHECK_INT(cur, 0);
	CHECK(adds > 0);
	classfs_class_destroy(c);
	CHECK_INT(classfs_tree_free(t), 0);
}

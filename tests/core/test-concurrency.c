// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-concurrency.c - removal safety under load.
 *
 * Writer threads build families of nested class devices (embedded ones
 * and classfs_device_create() ones, some of a type with a `delete` file,
 * some of an "input" type that an evdev-like interface hangs an evN child
 * below), add files, rename, and tear the families down in every order
 * (children first, the parent with its children still there, a middle
 * device first).  Reader threads meanwhile list directories and read and
 * write attributes through the in-process path API and through inode
 * numbers (classfs_lookup + classfs_read, also stale ones), and now and
 * then write `delete`, whose store() removes its own device.  A toggler
 * registers and unregisters the interface all along, and a listener
 * follows every uevent.
 *
 * What must hold:
 *  - no show()/store() of a device runs once the removal of the device,
 *    or of a device above it, has returned (each tracker's `removed` is
 *    set right after a successful unregister/del returns), and none runs
 *    after the device was released;
 *  - SEQNUM goes up by exactly one per event; every REMOVE is for a
 *    DEVPATH added earlier (renames followed through MOVE/DEVPATH_OLD),
 *    comes after the REMOVE of everything below it, a nested ADD comes
 *    after its parent's ADD, and nothing is left over at the end;
 *  - per device, the interface's add() and remove() alternate: remove()
 *    only after add() returned, never twice;
 *  - every embedded device is released exactly once, the node count is
 *    back where it started and classfs_tree_free() succeeds.
 *
 * It runs CLASSFS_STRESS_SECONDS seconds (default 5), half in each layout.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "../harness.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"

#define NWRITERS 3
#define NREADERS 3
#define FAMILY_MAX 12
#define TRACK_MAGIC 0x7ac4c0deu
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

static struct classfs_tree *tree;

/* ---- violations: counted from any thread, checked by the main thread ---- */

enum {
	V_LATE_SHOW,		/* show() after its device's removal returned */
	V_LATE_STORE,		/* store() after it */
	V_RELEASED,		/* callback on a released device, or double release */
	V_MAGIC,		/* callback with a device that is not ours */
	V_INTF,			/* add()/remove() out of order */
	V_SEQNUM,		/* SEQNUM not +1 */
	V_EVENT,		/* REMOVE/MOVE/ADD that does not fit the DEVPATHs seen */
	V_API,			/* an API call answered what it must not */
	V_COUNT,
};

static const char *const v_names[V_COUNT] = {
	"show after removal", "store after removal", "released device",  "bad device",
	"interface order",    "seqnum",              "event sequence",   "api result",
};

static atomic_long violations[V_COUNT];

static __attribute__((format(printf, 2, 3))) void violation(int kind, const char *fmt, ...)
{
	va_list ap;

	/* the first few of each kind are told */
	if (atomic_fetch_add(&violations[kind], 1) >= 8)
		return;
	char msg[512];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "  violation (%s): %s\n", v_names[kind], msg);
}

static atomic_long n_shows, n_stores, n_deletes, n_events, n_families, n_renames,
	n_intf_add, n_intf_remove, n_toggles, n_stale;

/* ---- per-thread random numbers ---- */

static __thread uint64_t rnd_state;

static uint32_t rnd(void)
{
	uint64_t x = rnd_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rnd_state = x;
	return (uint32_t)(x >> 16);
}

static void rnd_seed(uint64_t seed)
{
	rnd_state = seed * 0x9e3779b97f4a7c15ull + 1;
}

/* ---- the devices: trackers are ours and live until the end ---- */

struct track {
	uint32_t magic;
	unsigned int id;
	struct track *parent;		/* the tracker of the parent device */
	atomic_int removed;		/* its removal returned */
	atomic_int released;		/* release callback calls */
	atomic_int intf_state;		/* 0 none, 1 in add(), 2 added, 3 in remove() */
	struct classfs_device *ev_child;	/* made by add(), removed by remove() */
	struct track *ev_track;
	bool embedded;
};

struct tdev {
	struct classfs_device dev;	/* used for embedded devices only */
	struct track tr;
};

static pthread_mutex_t all_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tdev **all;
static size_t nall, capall;
static atomic_uint next_id;

static struct tdev *tdev_new(struct track *parent, bool embedded)
{
	struct tdev *td = calloc(1, sizeof(*td));

	if (!td)
		abort();
	td->tr.magic = TRACK_MAGIC;
	td->tr.id = atomic_fetch_add(&next_id, 1);
	td->tr.parent = parent;
	td->tr.embedded = embedded;
	td->dev.drvdata = &td->tr;
	pthread_mutex_lock(&all_lock);
	if (nall == capall) {
		capall = capall ? capall * 2 : 1024;
		all = realloc(all, capall * sizeof(*all));
		if (!all)
			abort();
	}
	all[nall++] = td;
	pthread_mutex_unlock(&all_lock);
	return td;
}

static void all_free(void)
{
	for (size_t i = 0; i < nall; i++)
		free(all[i]);
	free(all);
	all = NULL;
	nall = capall = 0;
}

/* the device, or the one above it, whose removal returned; NULL if none */
static const struct track *track_removed(const struct track *tr)
{
	for (; tr; tr = tr->parent)
		if (atomic_load(&tr->removed))
			return tr;
	return NULL;
}

static struct track *track_of(struct classfs_device *dev)
{
	struct track *tr = dev ? dev->drvdata : NULL;

	if (!tr || tr->magic != TRACK_MAGIC) {
		violation(V_MAGIC, "callback for a device without our tracker (%p)", (void *)dev);
		return NULL;
	}
	return tr;
}

static void mark_removed(struct track *tr)
{
	atomic_store(&tr->removed, 1);
}

/* ---- attributes ---- */

static void callback_check(struct track *tr, int kind, const char *what)
{
	const struct track *gone = track_removed(tr);

	if (gone == tr)
		violation(kind, "%s of device %u after its removal returned", what, tr->id);
	else if (gone)
		violation(kind, "%s of device %u after the removal of device %u above it returned",
			  what, tr->id, gone->id);
	if (tr->embedded && atomic_load(&tr->released))
		violation(V_RELEASED, "%s of device %u after its release", what, tr->id);
}

static ssize_t checked_show(struct classfs_device *dev, const char *what, char *buf, bool slow)
{
	struct track *tr = track_of(dev);

	if (!tr)
		return -EIO;
	atomic_fetch_add(&n_shows, 1);
	callback_check(tr, V_LATE_SHOW, what);
	/* stay a while, so that removals meet running shows */
	if (slow)
		usleep(100 + rnd() % 200);
	else if (!(rnd() & 7))
		sched_yield();
	/* a removal that returned while this ran did not wait for it */
	callback_check(tr, V_LATE_SHOW, what);
	return snprintf(buf, CLASSFS_ATTR_MAX, "%u\n", tr->id);
}

static ssize_t value_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	return checked_show(dev, "show(value)", buf, false);
}

static ssize_t slow_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	return checked_show(dev, "show(slow)", buf, true);
}

static ssize_t caps_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	return checked_show(dev, "show(caps)", buf, false);
}

static ssize_t extra_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	return checked_show(dev, "show(extra)", buf, false);
}

static ssize_t extra_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			   const char *buf, size_t count)
{
	struct track *tr = track_of(dev);

	if (!tr)
		return -EIO;
	atomic_fetch_add(&n_stores, 1);
	callback_check(tr, V_LATE_STORE, "store(extra)");
	if (!(rnd() & 3))
		sched_yield();
	callback_check(tr, V_LATE_STORE, "store(extra)");
	return (ssize_t)count;
}

/* the device whose removal this thread's `delete` store performed */
static __thread struct track *self_removed;

static ssize_t delete_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			    const char *buf, size_t count)
{
	struct track *tr = track_of(dev);
	int r;

	if (!tr)
		return -EIO;
	atomic_fetch_add(&n_stores, 1);
	callback_check(tr, V_LATE_STORE, "store(delete)");
	r = classfs_device_unregister_self(dev);
	if (r == 0) {
		/* the removal completes when this store returns */
		self_removed = tr;
		atomic_fetch_add(&n_deletes, 1);
	} else if (r != -EINVAL) {
		/* -EINVAL: someone else is removing it (or it is gone) */
		violation(V_API, "unregister_self(%u) = %d", tr->id, r);
	}
	/* still ours until we return, whoever removes the device */
	callback_check(tr, V_LATE_STORE, "store(delete)");
	return r < 0 ? r : (ssize_t)count;
}

static const struct classfs_device_attribute value_attr = {
	{ "value", 0444 }, value_show, NULL
};
static const struct classfs_device_attribute slow_attr = {
	{ "slow", 0444 }, slow_show, NULL
};
static const struct classfs_device_attribute caps_attr = {
	{ "caps", 0444 }, caps_show, NULL
};
static const struct classfs_device_attribute extra_attr = {
	{ "extra", 0644 }, extra_show, extra_store
};
static const struct classfs_device_attribute delete_attr = {
	{ "delete", 0200 }, NULL, delete_store
};

static const struct classfs_device_attribute *const class_attrs[] = { &value_attr, &slow_attr,
								       NULL };
static const struct classfs_attribute_group class_group = { .attrs = class_attrs };
static const struct classfs_attribute_group *const class_groups[] = { &class_group, NULL };

static const struct classfs_device_attribute *const del_attrs[] = { &delete_attr, NULL };
static const struct classfs_attribute_group del_group = { .attrs = del_attrs };
static const struct classfs_attribute_group *const del_groups[] = { &del_group, NULL };

static const struct classfs_device_attribute *const input_attrs[] = { &caps_attr, NULL };
static const struct classfs_attribute_group input_group = { .name = "capabilities",
							    .attrs = input_attrs };
static const struct classfs_attribute_group *const input_groups[] = { &input_group, NULL };

static const struct classfs_device_type type_del = { .name = "deletable", .groups = del_groups };
static const struct classfs_device_type type_input = { .name = "input", .groups = input_groups };

static int conc_uevent(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	struct track *tr = track_of(dev);

	return tr ? classfs_uevent_add_var(env, "CONC_ID=%u", tr->id) : -EIO;
}

/* embedded devices have no release of their own: this one counts */
static void conc_release(struct classfs_device *dev)
{
	struct track *tr = track_of(dev);

	if (tr && atomic_fetch_add(&tr->released, 1))
		violation(V_RELEASED, "device %u released twice", tr->id);
}

static struct classfs_class cls = {
	.name = "conc",
	.dev_groups = class_groups,
	.dev_uevent = conc_uevent,
	.dev_release = conc_release,
};

/* ---- the evdev pattern: add() hangs a child below, remove() takes it away ---- */

static atomic_uint ev_minor;

static int evdev_add(struct classfs_device *dev, struct classfs_interface *intf)
{
	struct track *tr = track_of(dev), *ctr;
	struct classfs_device *child;
	int expect = 0;

	if (!tr)
		return -EIO;
	if (!atomic_compare_exchange_strong(&tr->intf_state, &expect, 1)) {
		violation(V_INTF, "add(%u) while in state %d", tr->id, expect);
		return -EBUSY;
	}
	atomic_fetch_add(&n_intf_add, 1);
	if (track_removed(tr))
		violation(V_INTF, "add(%u) after its removal returned", tr->id);
	ctr = &tdev_new(tr, false)->tr;
	child = classfs_device_create(&cls, dev, makedev(13, atomic_fetch_add(&ev_minor, 1) & 0xfffff),
				      NULL, ctr, "ev%u", ctr->id);
	if (!child && errno != ENODEV)
		violation(V_API, "evdev child of %u: errno %d", tr->id, errno);
	tr->ev_child = child;
	tr->ev_track = child ? ctr : NULL;
	if (!(rnd() & 3))
		sched_yield();
	atomic_store(&tr->intf_state, 2);
	return 0;
}

static void evdev_remove(struct classfs_device *dev, struct classfs_interface *intf)
{
	struct track *tr = track_of(dev);
	int expect = 2;

	if (!tr)
		return;
	if (!atomic_compare_exchange_strong(&tr->intf_state, &expect, 3)) {
		violation(V_INTF, "remove(%u) while in state %d", tr->id, expect);
		return;
	}
	atomic_fetch_add(&n_intf_remove, 1);
	if (track_removed(tr))
		violation(V_INTF, "remove(%u) after its removal returned", tr->id);
	if (tr->ev_child) {
		int r = classfs_device_unregister(tr->ev_child);

		if (r == 0)
			mark_removed(tr->ev_track);
		else
			violation(V_INTF, "remove(%u): unregister of its evdev child = %d", tr->id, r);
		tr->ev_child = NULL;
		tr->ev_track = NULL;
	}
	atomic_store(&tr->intf_state, 0);
}

static struct classfs_interface evdev_intf = {
	.cls = &cls,
	.type = &type_input,
	.add = evdev_add,
	.remove = evdev_remove,
};

/* ---- the listener: SEQNUM and the DEVPATHs of live devices ---- */

struct pathset {
	char **v;
	size_t n, cap;
};

static struct pathset live;
static uint64_t last_seqnum;
static const char *devpath_base;	/* DEVPATH of the class's top-level devices */

static ssize_t ps_find(const struct pathset *s, const char *p)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->v[i], p))
			return (ssize_t)i;
	return -1;
}

static void ps_add(struct pathset *s, const char *p)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 256;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			abort();
	}
	s->v[s->n++] = strdup(p);
}

static void ps_del(struct pathset *s, size_t i)
{
	free(s->v[i]);
	s->v[i] = s->v[--s->n];
}

static void ps_clear(struct pathset *s)
{
	while (s->n)
		ps_del(s, 0);
	free(s->v);
	*s = (struct pathset){ 0 };
}

static bool is_below(const char *p, const char *top)
{
	size_t l = strlen(top);

	return !strncmp(p, top, l) && p[l] == '/';
}

static void listener(const struct classfs_uevent *ev, void *data)
{
	const char *old = classfs_uevent_get(ev, "DEVPATH_OLD");
	const char *seq = classfs_uevent_get(ev, "SEQNUM");
	ssize_t i;

	atomic_fetch_add(&n_events, 1);
	if (ev->seqnum != last_seqnum + 1)
		violation(V_SEQNUM, "SEQNUM %llu after %llu", (unsigned long long)ev->seqnum,
			  (unsigned long long)last_seqnum);
	if (!seq || strtoull(seq, NULL, 10) != ev->seqnum)
		violation(V_SEQNUM, "SEQNUM variable %s for %llu", seq ? seq : "(none)",
			  (unsigned long long)ev->seqnum);
	last_seqnum = ev->seqnum;
	if (!ev->subsystem || strcmp(ev->subsystem, "conc"))
		violation(V_EVENT, "SUBSYSTEM %s", ev->subsystem ? ev->subsystem : "(none)");
	if (!is_below(ev->devpath, devpath_base))
		violation(V_EVENT, "DEVPATH %s not below %s", ev->devpath, devpath_base);

	switch (ev->action) {
	case CLASSFS_ACTION_ADD: {
		const char *slash = strrchr(ev->devpath, '/');
		size_t plen = (size_t)(slash - ev->devpath);

		if (ps_find(&live, ev->devpath) >= 0)
			violation(V_EVENT, "ADD %s twice", ev->devpath);
		/* a nested device: its parent was added before and is still there */
		if (plen > strlen(devpath_base)) {
			char parent[PATH_MAX];

			snprintf(parent, sizeof(parent), "%.*s", (int)plen, ev->devpath);
			if (ps_find(&live, parent) < 0)
				violation(V_EVENT, "ADD %s (seq %llu) without its parent", ev->devpath,
					  (unsigned long long)ev->seqnum);
		}
		ps_add(&live, ev->devpath);
		break;
	}
	case CLASSFS_ACTION_REMOVE:
		i = ps_find(&live, ev->devpath);
		if (i < 0) {
			violation(V_EVENT, "REMOVE %s (seq %llu) never added", ev->devpath,
				  (unsigned long long)ev->seqnum);
			break;
		}
		ps_del(&live, (size_t)i);
		/* deepest first: nothing below it may be left */
		for (size_t k = 0; k < live.n; k++)
			if (is_below(live.v[k], ev->devpath))
				violation(V_EVENT, "REMOVE %s (seq %llu) before %s", ev->devpath,
					  (unsigned long long)ev->seqnum, live.v[k]);
		break;
	case CLASSFS_ACTION_MOVE:
		if (!old) {
			violation(V_EVENT, "MOVE %s without DEVPATH_OLD", ev->devpath);
			break;
		}
		i = ps_find(&live, old);
		if (i < 0) {
			violation(V_EVENT, "MOVE %s -> %s (seq %llu): old path unknown", old,
				  ev->devpath, (unsigned long long)ev->seqnum);
			break;
		}
		if (ps_find(&live, ev->devpath) >= 0)
			violation(V_EVENT, "MOVE %s -> %s: new path taken", old, ev->devpath);
		/* the device and everything below it changed their DEVPATH */
		for (size_t k = 0; k < live.n; k++) {
			if (k != (size_t)i && !is_below(live.v[k], old))
				continue;
			char moved[PATH_MAX];

			snprintf(moved, sizeof(moved), "%s%s", ev->devpath, live.v[k] + strlen(old));
			free(live.v[k]);
			live.v[k] = strdup(moved);
		}
		break;
	default:
		break;
	}
}

/* ---- writers ---- */

static atomic_bool stop;

struct member {
	struct classfs_device *dev;
	struct track *tr;
	int parent;		/* index in the family, -1 for the top */
	bool embedded;
	bool deletable;		/* it or a device above it has a `delete` file */
	bool gone;		/* removal tried by this thread (or of a device above it) */
	bool ours;		/* and that removal was done by this thread */
};

struct family {
	struct member m[FAMILY_MAX];
	int n;
};

static void member_gone(struct family *f, int i, bool ours)
{
	f->m[i].gone = true;
	f->m[i].ours = ours;
	for (int k = i + 1; k < f->n; k++) {
		int p = f->m[k].parent;

		if (p >= 0 && f->m[p].gone && !f->m[k].gone) {
			f->m[k].gone = true;
			f->m[k].ours = f->m[p].ours;
		}
	}
}

/* a new member below @parent (-1: top level); false when it could not be added */
static bool family_add(struct family *f, int wid, int parent)
{
	struct member *pm = parent >= 0 ? &f->m[parent] : NULL;
	struct member *m = &f->m[f->n];
	struct track *ptr = pm ? pm->tr : NULL;
	bool deletable_above = pm && pm->deletable;
	dev_t devt = (rnd() & 1) ? makedev(250, (rnd() & 0xffff)) : 0;
	/* a library-made device may vanish with a deletable parent: only below others */
	bool embedded = deletable_above || (rnd() & 1);
	struct tdev *td = tdev_new(ptr, embedded);
	int r;

	*m = (struct member){ .tr = &td->tr, .parent = parent, .embedded = embedded };
	if (!embedded) {
		m->dev = classfs_device_create(&cls, pm ? pm->dev : NULL, devt, NULL, &td->tr,
					       "w%d-%u", wid, td->tr.id);
		if (!m->dev) {
			violation(V_API, "device_create(%u): errno %d", td->tr.id, errno);
			return false;
		}
		f->n++;
		return true;
	}
	m->dev = &td->dev;
	classfs_device_initialize(m->dev);
	m->dev->cls = &cls;
	m->dev->parent = pm ? pm->dev : NULL;
	m->dev->devt = devt;
	m->dev->drvdata = &td->tr;
	switch (rnd() % 3) {
	case 0:
		m->dev->type = &type_del;
		m->deletable = true;
		break;
	case 1:
		m->dev->type = &type_input;
		break;
	}
	m->deletable |= deletable_above;
	r = classfs_device_set_name(m->dev, "w%d-%u", wid, td->tr.id);
	if (r < 0)
		violation(V_API, "set_name = %d", r);
	/* our own reference: the memory and the pointer stay ours */
	classfs_device_get(m->dev);
	r = classfs_device_add(m->dev);
	if (r < 0) {
		/* the parent is going (-ENODEV) or gone (-EINVAL): a reader deleted it */
		if ((r != -ENODEV && r != -EINVAL) || !pm || !pm->deletable)
			violation(V_API, "device_add(%u) = %d (parent %u%s)", td->tr.id, r,
				  pm ? pm->tr->id : 0, pm && pm->deletable ? ", deletable" : "");
		classfs_device_put(m->dev);
		classfs_device_put(m->dev);
		return false;
	}
	f->n++;
	return true;
}

static int family_pick(struct family *f)
{
	int i = (int)(rnd() % (unsigned int)f->n);

	return f->m[i].gone ? -1 : i;
}

static void family_remove(struct family *f, int i, bool use_del)
{
	struct member *m = &f->m[i];
	int r;

	if (m->gone)
		return;
	if (use_del && m->embedded) {
		r = classfs_device_del(m->dev);
		if (r == 0)
			classfs_device_put(m->dev);
	} else {
		r = classfs_device_unregister(m->dev);
	}
	if (r == 0) {
		mark_removed(m->tr);
		if (m->embedded && classfs_device_is_added(m->dev))
			violation(V_API, "device %u still added after its removal", m->tr->id);
	} else if (r != -EINVAL || !m->deletable) {
		/* only a reader's `delete` may have been first */
		violation(V_API, "unregister(%u) = %d", m->tr->id, r);
	}
	member_gone(f, i, r == 0);
}

static void family_ops(struct family *f, int wid)
{
	for (int k = 0; k < 4; k++) {
		int i = family_pick(f);
		char name[64];
		int r;

		if (i < 0)
			continue;
		switch (rnd() % 4) {
		case 0:
			r = classfs_device_create_file(f->m[i].dev, &extra_attr);
			if (r < 0 && r != -EEXIST && !(f->m[i].deletable && (r == -ENODEV || r == -EINVAL)))
				violation(V_API, "create_file(%u) = %d", f->m[i].tr->id, r);
			break;
		case 1:
			classfs_device_remove_file(f->m[i].dev, &extra_attr);
			break;
		case 2:
			snprintf(name, sizeof(name), "w%d-%u-r%u", wid, f->m[i].tr->id, rnd() & 0xff);
			r = classfs_device_rename(f->m[i].dev, name);
			if (r == 0)
				atomic_fetch_add(&n_renames, 1);
			else if (r != -EEXIST && !(f->m[i].deletable && r == -EINVAL))
				violation(V_API, "rename(%u) = %d", f->m[i].tr->id, r);
			break;
		case 3:
			if (!(rnd() & 3))
				usleep(rnd() % 300);
			else
				sched_yield();
			break;
		}
	}
}

static void family_run(int wid)
{
	struct family f = { .n = 0 };
	int nmembers = 1 + (int)(rnd() % (FAMILY_MAX - 1));

	if (!family_add(&f, wid, -1))
		return;
	for (int k = 1; k < nmembers; k++) {
		int parent = family_pick(&f);

		if (parent >= 0)
			family_add(&f, wid, parent);
		if (!(rnd() & 3))
			family_ops(&f, wid);
	}
	family_ops(&f, wid);

	bool use_del = rnd() & 1;

	switch (rnd() % 4) {
	case 0:	/* children first, as careful drivers do */
		for (int i = f.n - 1; i >= 0; i--)
			family_remove(&f, i, use_del);
		break;
	case 1:	/* the top with everything still below it */
		family_remove(&f, 0, use_del);
		break;
	case 2:	/* one in the middle, then the top */
		family_remove(&f, (int)(rnd() % (unsigned int)f.n), use_del);
		family_ops(&f, wid);
		family_remove(&f, 0, use_del);
		break;
	case 3:	/* in creation order: each parent before its children */
		for (int i = 0; i < f.n; i++)
			family_remove(&f, i, use_del);
		break;
	}
	for (int i = 0; i < f.n; i++) {
		if (f.m[i].embedded) {
			/* a reader's `delete` may still be on its way */
			if (f.m[i].ours && classfs_device_is_added(f.m[i].dev))
				violation(V_API, "device %u still added after its family went",
					  f.m[i].tr->id);
			classfs_device_put(f.m[i].dev);
		}
	}
	atomic_fetch_add(&n_families, 1);
}

static void *writer(void *arg)
{
	int wid = (int)(intptr_t)arg;

	rnd_seed(1000 + (uint64_t)wid + (uint64_t)time(NULL));
	while (!atomic_load(&stop))
		family_run(wid);
	return NULL;
}

/* ---- readers ---- */

struct names {
	char v[64][NAME_MAX + 1];
	int n, seen;
};

static int collect_name(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct names *nm = ctx;

	/* reservoir sampling over the class directory */
	int slot = nm->seen < 64 ? nm->seen : (int)(rnd() % (unsigned int)(nm->seen + 1));

	nm->seen++;
	if (slot < 64) {
		snprintf(nm->v[slot], sizeof(nm->v[slot]), "%s", name);
		if (nm->n < 64 && slot == nm->n)
			nm->n++;
	}
	return 0;
}

static int count_fill(void *ctx, const char *name, const struct classfs_stat *st, uint64_t off)
{
	(*(int *)ctx)++;
	return 0;
}

static bool read_error_ok(ssize_t r)
{
	/* gone before (ENOENT) or while (ENODEV) we got to it */
	return r == -ENOENT || r == -ENODEV;
}

static const char *const read_files[] = { "value", "slow", "uevent", "dev", "extra",
					  "capabilities/caps" };

static void reader_op(struct names *nm, uint64_t *stale, int *nstale)
{
	char path[2 * NAME_MAX + 64], buf[CLASSFS_ATTR_MAX];
	struct classfs_stat st;
	const char *name;
	ssize_t r;

	if (!nm->n || !(rnd() % 32)) {
		nm->n = nm->seen = 0;
		r = classfs_path_list(tree, "class/conc", collect_name, nm);
		if (r < 0)
			violation(V_API, "list class/conc = %zd", r);
		return;
	}
	name = nm->v[rnd() % (unsigned int)nm->n];
	switch (rnd() % 8) {
	case 0:
	case 1: {	/* a whole attribute by path */
		const char *file = read_files[rnd() % ARRAY_SIZE(read_files)];

		snprintf(path, sizeof(path), "class/conc/%s/%s", name, file);
		r = classfs_path_read(tree, path, buf, sizeof(buf));
		if (r < 0 && !read_error_ok(r))
			violation(V_API, "read %s = %zd", path, r);
		break;
	}
	case 2:
	case 3: {	/* lookup + read by inode number, keeping some for later */
		const char *file = read_files[rnd() % 3];

		snprintf(path, sizeof(path), "class/conc/%s/.", name);
		r = classfs_path_stat(tree, path, &st);
		if (r < 0) {
			if (!read_error_ok(r))
				violation(V_API, "stat %s = %zd", path, r);
			break;
		}
		r = classfs_lookup(tree, st.ino, file, &st);
		if (r < 0) {
			if (!read_error_ok(r))
				violation(V_API, "lookup %s in %s = %zd", file, name, r);
			break;
		}
		r = classfs_read(tree, st.ino, buf, sizeof(buf), 0);
		if (r < 0 && !read_error_ok(r))
			violation(V_API, "read %s/%s = %zd", name, file, r);
		if (*nstale < 16)
			stale[(*nstale)++] = st.ino;
		else
			stale[rnd() % 16] = st.ino;
		break;
	}
	case 4: {	/* an inode number seen earlier: valid, or gone for good */
		if (!*nstale)
			break;
		r = classfs_read(tree, stale[rnd() % (unsigned int)*nstale], buf,
				 sizeof(buf), 0);
		if (r < 0 && !read_error_ok(r))
			violation(V_API, "read of an old inode = %zd", r);
		if (r < 0)
			atomic_fetch_add(&n_stale, 1);
		break;
	}
	case 5: {	/* list a device directory, by path and by readdir */
		int count = 0;

		snprintf(path, sizeof(path), "class/conc/%s", name);
		if (rnd() & 1) {
			r = classfs_path_list(tree, path, NULL, NULL);
		} else {
			snprintf(path, sizeof(path), "class/conc/%s/.", name);
			r = classfs_path_stat(tree, path, &st);
			if (!r)
				r = classfs_readdir(tree, st.ino, 0, count_fill, &count);
		}
		if (r < 0 && !read_error_ok(r))
			violation(V_API, "list %s = %zd", path, r);
		break;
	}
	case 6: {	/* a store */
		snprintf(path, sizeof(path), "class/conc/%s/extra", name);
		r = classfs_path_write(tree, path, "1\n", 2);
		if (r < 0 && !read_error_ok(r))
			violation(V_API, "write %s = %zd", path, r);
		break;
	}
	case 7: {	/* now and then a device removes itself */
		if (rnd() % 4)
			break;
		snprintf(path, sizeof(path), "class/conc/%s/delete", name);
		self_removed = NULL;
		r = classfs_path_write(tree, path, "1\n", 2);
		if (self_removed) {
			if (r != 2)
				violation(V_API, "delete of %s = %zd", name, r);
			mark_removed(self_removed);
			self_removed = NULL;
		} else if (r < 0 && !read_error_ok(r) && r != -EINVAL) {
			violation(V_API, "write %s = %zd", path, r);
		}
		break;
	}
	}
}

static void *reader(void *arg)
{
	struct names *nm = calloc(1, sizeof(*nm));
	uint64_t stale[16];
	int nstale = 0;

	if (!nm)
		abort();
	rnd_seed(2000 + (uint64_t)(intptr_t)arg + (uint64_t)time(NULL));
	while (!atomic_load(&stop))
		reader_op(nm, stale, &nstale);
	free(nm);
	return NULL;
}

/* ---- the interface comes and goes all along ---- */

static void *toggler(void *arg)
{
	rnd_seed(3000 + (uint64_t)time(NULL));
	while (!atomic_load(&stop)) {
		int r;

		usleep(500 + rnd() % 3000);
		classfs_interface_unregister(&evdev_intf);
		usleep(rnd() % 1000);
		r = classfs_interface_register(&evdev_intf);
		if (r < 0)
			violation(V_API, "interface_register = %d", r);
		atomic_fetch_add(&n_toggles, 1);
	}
	return NULL;
}

/* ---- the scenario ---- */

static double stress_seconds(void)
{
	const char *s = getenv("CLASSFS_STRESS_SECONDS");
	double v = s ? strtod(s, NULL) : 5.0;

	return v > 0 ? v : 5.0;
}

static void run(enum classfs_layout layout, double seconds)
{
	pthread_t w[NWRITERS], r[NREADERS], tog;
	struct timespec t0, now;
	size_t base_nodes;
	long released_bad = 0, intf_left = 0;
	int lid;

	for (int i = 0; i < V_COUNT; i++)
		atomic_store(&violations[i], 0);
	atomic_store(&stop, false);
	rnd_seed(42);

	tree = classfs_tree_new(layout);
	CHECK(tree != NULL);
	if (!tree)
		return;
	devpath_base = layout == CLASSFS_LAYOUT_CLASS ? "/class/conc" : "/devices/virtual/conc";
	base_nodes = classfs_tree_node_count(tree);
	last_seqnum = classfs_tree_seqnum(tree);
	lid = classfs_listener_add(tree, listener, NULL);
	CHECK(lid > 0);
	CHECK_INT(classfs_class_register(tree, &cls), 0);
	CHECK_INT(classfs_interface_register(&evdev_intf), 0);

	for (int i = 0; i < NWRITERS; i++)
		CHECK_INT(pthread_create(&w[i], NULL, writer, (void *)(intptr_t)i), 0);
	for (int i = 0; i < NREADERS; i++)
		CHECK_INT(pthread_create(&r[i], NULL, reader, (void *)(intptr_t)i), 0);
	CHECK_INT(pthread_create(&tog, NULL, toggler, NULL), 0);

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		usleep(20000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9 <
		 seconds);
	atomic_store(&stop, true);
	for (int i = 0; i < NWRITERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < NREADERS; i++)
		pthread_join(r[i], NULL);
	pthread_join(tog, NULL);

	/* every family is gone: nothing of the class is left but the class */
	classfs_interface_unregister(&evdev_intf);
	classfs_class_unregister(&cls);
	CHECK_INT(classfs_listener_remove(tree, lid), 0);

	CHECK_INT(live.n, 0);
	for (size_t i = 0; i < live.n && i < 10; i++)
		fprintf(stderr, "  still added: %s\n", live.v[i]);
	ps_clear(&live);
	CHECK_INT(last_seqnum, classfs_tree_seqnum(tree));
	CHECK_INT(classfs_tree_node_count(tree), base_nodes);
	CHECK_INT(classfs_tree_free(tree), 0);
	tree = NULL;

	for (size_t i = 0; i < nall; i++) {
		struct track *tr = &all[i]->tr;

		if (tr->embedded && atomic_load(&tr->released) != 1) {
			if (released_bad++ < 10)
				fprintf(stderr, "  device %u released %d times\n", tr->id,
					atomic_load(&tr->released));
		}
		if (atomic_load(&tr->intf_state) != 0 && intf_left++ < 10)
			fprintf(stderr, "  device %u: add() without remove() (state %d)\n", tr->id,
				atomic_load(&tr->intf_state));
	}
	CHECK_INT(released_bad, 0);
	CHECK_INT(intf_left, 0);
	for (int i = 0; i < V_COUNT; i++) {
		if (atomic_load(&violations[i]))
			fprintf(stderr, "  %ld violations: %s\n", atomic_load(&violations[i]),
				v_names[i]);
		CHECK_INT(atomic_load(&violations[i]), 0);
	}
	printf("  %s layout, %.1f s: %ld families, %zu devices, %ld shows, %ld stores, "
	       "%ld self-deletes, %ld renames, %ld add()/%ld remove(), %ld toggles, "
	       "%ld events, %ld stale reads\n",
	       layout == CLASSFS_LAYOUT_CLASS ? "class" : "devices", seconds,
	       atomic_load(&n_families), nall, atomic_load(&n_shows), atomic_load(&n_stores),
	       atomic_load(&n_deletes), atomic_load(&n_renames), atomic_load(&n_intf_add),
	       atomic_load(&n_intf_remove), atomic_load(&n_toggles), atomic_load(&n_events),
	       atomic_load(&n_stale));
	fflush(stdout);
	all_free();
	atomic_store(&n_families, 0);
	atomic_store(&n_shows, 0);
	atomic_store(&n_stores, 0);
	atomic_store(&n_deletes, 0);
	atomic_store(&n_renames, 0);
	atomic_store(&n_intf_add, 0);
	atomic_store(&n_intf_remove, 0);
	atomic_store(&n_toggles, 0);
	atomic_store(&n_events, 0);
	atomic_store(&n_stale, 0);
}

TEST(concurrency_class_layout)
{
	run(CLASSFS_LAYOUT_CLASS, stress_seconds() / 2);
}

TEST(concurrency_devices_layout)
{
	run(CLASSFS_LAYOUT_DEVICES, stress_seconds() / 2);
}

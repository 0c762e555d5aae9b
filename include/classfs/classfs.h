/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * classfs.h - the native classfs API.
 *
 * A tree holds classes, class devices (which may nest under a parent class
 * device of the same class) and physical ("bus") devices.  Every object is
 * visible through the tree's path API and its FUSE mount
 * (classfs_mount_tree()) in one of two layouts, and every change produces
 * a uevent.
 *
 * Conventions (as in the Linux driver core):
 *  - functions return 0 or a negative errno; object constructors return a
 *    pointer or NULL with errno set;
 *  - objects may be embedded in a caller's structure (initialize, set the
 *    public fields, add) or allocated by the library (create);
 *  - fields marked "private" belong to the library;
 *  - no library lock is held while a caller's callback runs, so callbacks
 *    may call back into this API.  A callback that would have to wait for
 *    itself gets -EDEADLK instead of hanging.
 */
#ifndef CLASSFS_CLASSFS_H
#define CLASSFS_CLASSFS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/sysmacros.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CLASSFS_PUBLIC __attribute__((visibility("default")))
#define CLASSFS_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* sysfs limits honoured by every attribute */
#define CLASSFS_ATTR_MAX	4096	/* one show()/store() buffer */
#define CLASSFS_UEVENT_NUM_ENVP	64	/* variables per uevent */
#define CLASSFS_UEVENT_BUFFER	2048	/* bytes per uevent */

struct classfs_tree;
struct classfs_class;
struct classfs_device;
struct classfs_bus;
struct classfs_interface;

/* ------------------------------------------------------------------ */
/* private: the node every directory, file and link of a tree is      */
/* ------------------------------------------------------------------ */

struct classfs_htab {			/* private: hashed, hash-ordered index */
	void **buckets;
	uint32_t bits;
	uint32_t count;
};

struct classfs_node {			/* private */
	struct classfs_node *parent;
	struct classfs_node *next;	/* chain in the parent's directory */
	const char *name;
	union {
		struct classfs_htab *dir;	/* directory: children (NULL: none) */
		const void *attr;		/* attribute: its definition */
		struct classfs_node *target;	/* link */
	} u;
	uint32_t hash;
	uint32_t id;
	uint32_t gen;
	int active;			/* active references (kernfs's s_active) */
	uint16_t mode;
	uint8_t type;
	uint16_t flags;
};

/* ------------------------------------------------------------------ */
/* allocation                                                          */
/* ------------------------------------------------------------------ */

/** classfs_malloc() - allocate through the library's allocator; NULL on ENOMEM */
CLASSFS_PUBLIC void *classfs_malloc(size_t size);
/** classfs_zalloc() - as classfs_malloc(), zero-filled. */
CLASSFS_PUBLIC void *classfs_zalloc(size_t size);
/** classfs_free() - release memory from classfs_malloc()/classfs_zalloc(). */
CLASSFS_PUBLIC void classfs_free(void *p);

/* ------------------------------------------------------------------ */
/* trees and layouts                                                   */
/* ------------------------------------------------------------------ */

enum classfs_layout {
	CLASSFS_LAYOUT_CLASS = 0,	/* the seed's: class/CLASS/DEV[/CHILD] */
	CLASSFS_LAYOUT_DEVICES = 1,	/* today's Linux: devices/..., class/ links */
};

/**
 * classfs_tree_new() - create an empty tree
 * @layout: how the tree is presented (DEVPATH, path API, mount).
 *
 * Return: the tree, or NULL with errno set (EINVAL, ENOMEM).
 */
CLASSFS_PUBLIC struct classfs_tree *classfs_tree_new(enum classfs_layout layout);
/**
 * classfs_tree_free() - free a tree whose classes and devices are all gone
 * Return: 0, -EINVAL (NULL, or the default tree), -EBUSY while it still
 * holds classes, buses or devices.
 */
CLASSFS_PUBLIC int classfs_tree_free(struct classfs_tree *tree);
/** classfs_tree_layout() - the layout a tree was created with */
CLASSFS_PUBLIC enum classfs_layout classfs_tree_layout(const struct classfs_tree *tree);
/**
 * classfs_default_tree() - the tree of the kernel-compatible API
 *
 * Created on first use with the layout set by classfs_set_default_layout()
 * (default %CLASSFS_LAYOUT_CLASS).  Return: the tree, or NULL on ENOMEM.
 */
CLASSFS_PUBLIC struct classfs_tree *classfs_default_tree(void);
/**
 * classfs_set_default_layout() - choose the default tree's layout
 * Return: 0, -EINVAL for an unknown layout, -EBUSY once the default tree
 * holds a device.
 */
CLASSFS_PUBLIC int classfs_set_default_layout(enum classfs_layout layout);
/** classfs_tree_seqnum() - the last uevent sequence number handed out */
CLASSFS_PUBLIC uint64_t classfs_tree_seqnum(struct classfs_tree *tree);

/* ------------------------------------------------------------------ */
/* attributes                                                          */
/* ------------------------------------------------------------------ */

/** struct classfs_attribute - a name and permission bits (sysfs's struct attribute) */
struct classfs_attribute {
	const char *name;
	mode_t mode;
};

/**
 * struct classfs_device_attribute - a text attribute of a device
 * @show: fill @buf (CLASSFS_ATTR_MAX bytes) with the value, return its
 *        length or -errno.
 * @store: take @count bytes (NUL-terminated for convenience), return
 *         bytes consumed or -errno.
 */
struct classfs_device_attribute {
	struct classfs_attribute attr;
	ssize_t (*show)(struct classfs_device *dev, const struct classfs_device_attribute *attr,
			char *buf);
	ssize_t (*store)(struct classfs_device *dev, const struct classfs_device_attribute *attr,
			 const char *buf, size_t count);
};

/** struct classfs_bin_attribute - a binary attribute with random access */
struct classfs_bin_attribute {
	struct classfs_attribute attr;
	size_t size;		/* reported by stat, 0 = unknown */
	ssize_t (*read)(struct classfs_device *dev, const struct classfs_bin_attribute *attr,
			char *buf, off_t off, size_t count);
	ssize_t (*write)(struct classfs_device *dev, const struct classfs_bin_attribute *attr,
			 const char *buf, off_t off, size_t count);
	void *private;
};

/** struct classfs_class_attribute - a text attribute of a class */
struct classfs_class_attribute {
	struct classfs_attribute attr;
	ssize_t (*show)(struct classfs_class *cls, const struct classfs_class_attribute *attr,
			char *buf);
	ssize_t (*store)(struct classfs_class *cls, const struct classfs_class_attribute *attr,
			 const char *buf, size_t count);
};

/**
 * struct classfs_attribute_group - attributes added and removed together
 * @name: NULL for attributes in the device's own directory, else the
 *        name of a subdirectory holding them.
 * @attrs: NULL-terminated, may be NULL.
 * @bin_attrs: NULL-terminated, may be NULL.
 */
struct classfs_attribute_group {
	const char *name;
	const struct classfs_device_attribute *const *attrs;
	const struct classfs_bin_attribute *const *bin_attrs;
};

/* ------------------------------------------------------------------ */
/* uevents                                                             */
/* ------------------------------------------------------------------ */

enum classfs_action {
	CLASSFS_ACTION_ADD,
	CLASSFS_ACTION_REMOVE,
	CLASSFS_ACTION_CHANGE,
	CLASSFS_ACTION_MOVE,
	CLASSFS_ACTION_ONLINE,
	CLASSFS_ACTION_OFFLINE,
	CLASSFS_ACTION_BIND,
	CLASSFS_ACTION_UNBIND,
	CLASSFS_ACTION_COUNT,
};

/**
 * struct classfs_uevent_env - variables being collected for one uevent
 *
 * Hooks add variables with classfs_uevent_add_var(); the limits are
 * %CLASSFS_UEVENT_NUM_ENVP variables and %CLASSFS_UEVENT_BUFFER bytes.
 */
struct classfs_uevent_env {
	char *envp[CLASSFS_UEVENT_NUM_ENVP];
	int envp_idx;
	char buf[CLASSFS_UEVENT_BUFFER];
	int buflen;
};

/**
 * classfs_uevent_add_var() - append one KEY=VALUE variable
 * Return: 0, -EINVAL (NULL @env or @fmt), or -ENOMEM when a limit
 * would be exceeded (nothing added).
 */
CLASSFS_PUBLIC int classfs_uevent_add_var(struct classfs_uevent_env *env, const char *fmt, ...)
	CLASSFS_PRINTF(2, 3);

/**
 * struct classfs_uevent - one delivered event
 * @envp: @envc "KEY=VALUE" strings: ACTION, DEVPATH, SUBSYSTEM, the
 *        device's variables, then SEQNUM.
 */
struct classfs_uevent {
	uint64_t seqnum;
	enum classfs_action action;
	const char *devpath;
	const char *subsystem;
	int envc;
	const char *const *envp;
};

/** classfs_action_name() - "add", "remove", ...; NULL when out of range */
CLASSFS_PUBLIC const char *classfs_action_name(enum classfs_action action);
/** classfs_action_parse() - the action named @s (@len bytes), or -EINVAL */
CLASSFS_PUBLIC int classfs_action_parse(const char *s, size_t len);
/** classfs_uevent_get() - value of @key in @ev, or NULL */
CLASSFS_PUBLIC const char *classfs_uevent_get(const struct classfs_uevent *ev, const char *key);
/**
 * classfs_uevent_format_kernel() - the kernel netlink form:
 * "ACTION@DEVPATH\0KEY=VALUE\0..."
 * Return: bytes needed (may exceed @size; nothing is written past @size).
 */
CLASSFS_PUBLIC size_t classfs_uevent_format_kernel(const struct classfs_uevent *ev, char *buf,
						    size_t size);

typedef void (*classfs_listener_fn)(const struct classfs_uevent *ev, void *data);

/**
 * classfs_listener_add() - deliver every later uevent of @tree to @fn
 *
 * Events reach each listener one at a time, in SEQNUM order, from the
 * thread that produced them or from another producing thread, never with
 * a library lock held; a listener may call back into the API (its own
 * events are delivered after it returns).
 * Return: a listener id (> 0), -EINVAL (NULL @tree or @fn), -ENOSPC (64
 * listeners already).
 */
CLASSFS_PUBLIC int classfs_listener_add(struct classfs_tree *tree, classfs_listener_fn fn,
					void *data);
/**
 * classfs_listener_remove() - stop delivery to a listener
 * Once it returns, the listener is not running and will not run again
 * (unless called from that listener itself).  Return: 0, -EINVAL (NULL
 * @tree), -ENOENT (no such listener).
 */
CLASSFS_PUBLIC int classfs_listener_remove(struct classfs_tree *tree, int id);

/**
 * struct classfs_helper_stats - what became of the events that were to
 * run the uevent helper (/kernel/uevent_helper)
 * @started: helpers started.
 * @failed: helpers that could not be started (posix_spawn() failed).
 * @dropped: events whose helper never started: the queue was full, or
 *           the helper was stopped first.
 * @killed: helpers still running when it was stopped, and killed.
 * @queued: events waiting for their helper now.
 * @queued_bytes: the memory they take.
 */
struct classfs_helper_stats {
	uint64_t started;
	uint64_t failed;
	uint64_t dropped;
	uint64_t killed;
	size_t queued;
	size_t queued_bytes;
};

/* the default of classfs_helper_set_queue()'s @max_bytes: 16 MiB */
#define CLASSFS_HELPER_QUEUE_DEFAULT ((size_t)16 << 20)

typedef void (*classfs_helper_overflow_fn)(const struct classfs_helper_stats *st, void *data);

/**
 * classfs_helper_set_queue() - bound the events waiting for the uevent helper
 * @tree: the tree.
 * @max_bytes: memory the waiting events may take (0: the default,
 *             CLASSFS_HELPER_QUEUE_DEFAULT).
 * @overflow: NULL, or told when events are dropped because the queue is
 *            full: at the first drop, then at most once a second while
 *            drops go on (from the thread delivering the event, no
 *            library lock held).
 * @data: passed to @overflow.
 *
 * At most 8 helpers run at once (as Linux's UMH_NO_WAIT helpers, none is
 * waited for by the tree); the events that wait for one are queued, and
 * an event that would take the queue past @max_bytes is dropped and
 * counted (classfs_helper_stats.dropped).
 * Return: 0, -EINVAL (NULL @tree).
 */
CLASSFS_PUBLIC int classfs_helper_set_queue(struct classfs_tree *tree, size_t max_bytes,
					    classfs_helper_overflow_fn overflow, void *data);

/**
 * classfs_helper_stop() - run no more uevent helpers
 * @tree: the tree.
 * @st: NULL, or set to the helper's final counts.
 *
 * The events still queued are dropped (counted), helpers still running
 * after 300 ms are killed with their process group (SIGKILL; counted),
 * and no event of @tree runs the helper any more.  Returns within about
 * 300 ms, whatever was queued.  classfs_tree_free() does the same.
 * Return: 0, -EINVAL (NULL @tree).
 */
CLASSFS_PUBLIC int classfs_helper_stop(struct classfs_tree *tree, struct classfs_helper_stats *st);

/* ------------------------------------------------------------------ */
/* classes                                                             */
/* ------------------------------------------------------------------ */

/**
 * struct classfs_class - a device class (/class/NAME)
 * @name: unique within the tree.
 * @class_attrs: NULL-terminated attributes of the class directory.
 * @dev_groups: NULL-terminated default attribute groups of every device.
 * @dev_uevent: adds variables to every uevent (and the `uevent` file) of
 *              the class's devices; a non-zero return vetoes the event.
 * @dev_release: releases a device of the class without a release of its own.
 * @class_release: called when the last reference to the class goes.
 * @devnode: optional DEVNAME for a device (returns a static or the
 *           device's name when NULL).
 */
struct classfs_class {
	const char *name;
	const struct classfs_class_attribute *const *class_attrs;
	const struct classfs_attribute_group *const *dev_groups;
	int (*dev_uevent)(struct classfs_device *dev, struct classfs_uevent_env *env);
	void (*dev_release)(struct classfs_device *dev);
	void (*class_release)(struct classfs_class *cls);
	const char *(*devnode)(struct classfs_device *dev, char *buf, size_t size);
	void *private_data;	/* for the class's owner */

	/* private */
	struct {
		struct classfs_tree *tree;
		struct classfs_node node;	/* the class directory */
		struct classfs_htab names;	/* every added device, by name */
		struct classfs_interface *interfaces;
		struct classfs_class *next;	/* the tree's list of classes */
		const void *intf_owner;		/* thread in interface calls */
		int intf_depth;
		int refcount;
		bool registered;
		bool allocated;
		bool block;			/* devices are block devices */
		unsigned int nested;		/* added devices with a parent */
	} p;
};

/**
 * classfs_class_register() - add a class to a tree
 * Return: 0, -EINVAL (NULL, bad name, an attribute with an invalid name),
 * -EBUSY (@cls is registered already), -EEXIST (name taken, or two
 * attributes of one name), -ENOMEM, -ENOSPC (the tree's node ids are used up).
 */
CLASSFS_PUBLIC int classfs_class_register(struct classfs_tree *tree, struct classfs_class *cls);
/**
 * classfs_class_unregister() - remove a class; devices still in it are
 * removed first (deepest first, with REMOVE events); the class's
 * reference is dropped.
 */
CLASSFS_PUBLIC void classfs_class_unregister(struct classfs_class *cls);
/**
 * classfs_class_create() - allocate and register a class
 * Return: the class, or NULL with errno as classfs_class_register()'s.
 */
CLASSFS_PUBLIC struct classfs_class *classfs_class_create(struct classfs_tree *tree, const char *name);
/** classfs_class_destroy() - unregister a class made by classfs_class_create(); NULL ignored */
CLASSFS_PUBLIC void classfs_class_destroy(struct classfs_class *cls);
/** classfs_class_get() - take a reference; NULL tolerated */
CLASSFS_PUBLIC struct classfs_class *classfs_class_get(struct classfs_class *cls);
/** classfs_class_put() - drop a reference; the last runs class_release; NULL tolerated */
CLASSFS_PUBLIC void classfs_class_put(struct classfs_class *cls);
/** classfs_class_find() - a registered class by name, with a reference, or NULL */
CLASSFS_PUBLIC struct classfs_class *classfs_class_find(struct classfs_tree *tree, const char *name);
/**
 * classfs_class_create_file() - add an attribute to the class directory
 * Return: 0, -EINVAL (NULL, not registered, invalid name), -EEXIST (the
 * name of a file or a device of the class), -ENOMEM, -ENOSPC (node ids).
 */
CLASSFS_PUBLIC int classfs_class_create_file(struct classfs_class *cls,
					     const struct classfs_class_attribute *attr);
/** classfs_class_remove_file() - remove it; waits for running show()/store() */
CLASSFS_PUBLIC void classfs_class_remove_file(struct classfs_class *cls,
					      const struct classfs_class_attribute *attr);
/**
 * classfs_class_for_each_device() - call @fn for each device of @cls
 * with a reference held and no lock held; stops at a non-zero return,
 * which it returns.  Return: 0, @fn's non-zero return, -EINVAL (NULL
 * @cls or @fn, or @cls not registered), -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_class_for_each_device(struct classfs_class *cls,
						 int (*fn)(struct classfs_device *dev, void *data),
						 void *data);
/** classfs_class_find_device_by_devt() - a device of @cls with @devt, referenced, or NULL */
CLASSFS_PUBLIC struct classfs_device *classfs_class_find_device_by_devt(struct classfs_class *cls,
									dev_t devt);
/** classfs_class_find_device() - a device of @cls by name, referenced, or NULL */
CLASSFS_PUBLIC struct classfs_device *classfs_class_find_device(struct classfs_class *cls,
								const char *name);

/* ------------------------------------------------------------------ */
/* buses (physical devices' subsystems)                                */
/* ------------------------------------------------------------------ */

/** struct classfs_bus - a bus type (bus/NAME, devices listed in bus/NAME/devices) */
struct classfs_bus {
	const char *name;
	/* private */
	struct {
		struct classfs_tree *tree;
		struct classfs_node node;	/* bus/NAME */
		struct classfs_node *devices;	/* bus/NAME/devices */
		struct classfs_bus *next;
		int ndevices;
		bool registered;
	} p;
};

/**
 * classfs_bus_register() - add a bus type
 * Return: 0, -EINVAL (NULL or bad name), -EBUSY (registered already),
 * -EEXIST (name taken), -ENOMEM, -ENOSPC (node ids).
 */
CLASSFS_PUBLIC int classfs_bus_register(struct classfs_tree *tree, struct classfs_bus *bus);
/**
 * classfs_bus_unregister() - remove a bus type whose devices are gone
 * Return: 0, -EINVAL (NULL or not registered), -EBUSY (devices are on it:
 * nothing happens).
 */
CLASSFS_PUBLIC int classfs_bus_unregister(struct classfs_bus *bus);
/** classfs_bus_find() - a bus by name, or NULL */
CLASSFS_PUBLIC struct classfs_bus *classfs_bus_find(struct classfs_tree *tree, const char *name);

/* ------------------------------------------------------------------ */
/* device types: the per-type hooks                                    */
/* ------------------------------------------------------------------ */

/**
 * struct classfs_device_type - what kind of device within its class
 * @name: the DEVTYPE of its uevents (NULL: none).
 * @groups: NULL-terminated attribute groups for devices of this type.
 * @uevent: adds variables (after the class's); non-zero vetoes.
 * @release: releases a device of this type without a release of its own.
 * @devnode: optional DEVNAME of a device with a number, asked when its
 *           class has no @devnode or gives NULL: how a physical device
 *           with a number (a USB device's bus/usb/001/002) names its
 *           node, as Linux's device_type.devnode does.  Returns @buf, a
 *           static, or NULL for the device's name.
 */
struct classfs_device_type {
	const char *name;
	const struct classfs_attribute_group *const *groups;
	int (*uevent)(struct classfs_device *dev, struct classfs_uevent_env *env);
	void (*release)(struct classfs_device *dev);
	const char *(*devnode)(struct classfs_device *dev, char *buf, size_t size);
};

/* ------------------------------------------------------------------ */
/* devices                                                             */
/* ------------------------------------------------------------------ */

/**
 * struct classfs_device - a class device or a physical (bus) device
 * @cls: the class of a class device; NULL for a physical device.
 * @parent: a class device's parent class device (same class: nesting),
 *          or a physical device's physical parent.
 * @devt: device number; a `dev` file exists when major(devt) != 0.
 * @drvdata: the owner's data (class_data).
 * @phys: a class device's physical device (the `device` link): a
 *        physical device or a class device of another class.
 * @type: optional device type (DEVTYPE, groups, uevent, release hooks).
 * @bus: a physical device's bus type (optional).
 * @release: called when the last reference goes (else type's, class's).
 *
 * The first four fields are aliased by <classfs/kernel.h>: keep them.
 */
struct classfs_device {
	struct classfs_class *cls;
	struct classfs_device *parent;
	dev_t devt;
	void *drvdata;
	struct classfs_device *phys;
	const struct classfs_device_type *type;
	struct classfs_bus *bus;
	void (*release)(struct classfs_device *dev);

	/* private: the device's directory, index chains, reference count */
	struct {
		struct classfs_node node;
		struct classfs_device *name_next;	/* class name index */
		struct classfs_device *devt_next;	/* tree devt index */
		uint32_t devt_hash;	/* devt's hash there: a chain walk reads one line */
		int refcount;
		unsigned int state;
	} p;
};

/**
 * classfs_device_initialize() - prepare an embedded device (one reference)
 * Fill @cls, @parent, @devt, ... and the name, then classfs_device_add().
 */
CLASSFS_PUBLIC void classfs_device_initialize(struct classfs_device *dev);
/**
 * classfs_device_set_name() - name a device before it is added
 * Return: 0, -EINVAL (not initialized, an invalid name or one longer
 * than NAME_MAX), -EBUSY once added, -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_device_set_name(struct classfs_device *dev, const char *fmt, ...)
	CLASSFS_PRINTF(2, 3);
/**
 * classfs_device_set_name_static() - name a device with caller-owned
 * storage that outlives the device (no allocation); same checks.
 * Return: 0, -EINVAL, -EBUSY (as classfs_device_set_name()).
 */
CLASSFS_PUBLIC int classfs_device_set_name_static(struct classfs_device *dev, const char *name);
/** classfs_device_name() - the device's name (NULL before it is named) */
CLASSFS_PUBLIC const char *classfs_device_name(const struct classfs_device *dev);
/**
 * classfs_device_add() - publish a device
 *
 * Takes references on the class, the parent and the physical device,
 * creates the directory with `uevent`, `dev`, `subsystem`, `device` and
 * every default attribute, the reverse link in the physical device's
 * directory, all visible at once; sends ADD; joins the class; calls every
 * matching interface's add().
 * The names of the entries the device computes must be distinct: an
 * attribute of the class's or type's groups named like an entry the tree
 * makes in the directory (`uevent`; `dev` with a device number;
 * `subsystem` with a class or bus; `device` with a physical device), like
 * another attribute or like a named group, is refused with -EEXIST, as is
 * a device whose glue directory or "CLASS:NAME" link in its physical
 * device would take the name of one of that device's attributes.
 * Return: 0, -EINVAL (not initialized, no name, no class and no tree,
 * class or bus not registered, parent of another class or not added,
 * bad name, an attribute or group with an invalid name), -EBUSY (added
 * already), -EEXIST (name taken in the class or in the directory; a place
 * in Linux's devices layout that another device has, in either layout: a
 * physical device without parent named "virtual", a physical device named
 * like the glue directory of its siblings (P/block beside P/block/sda),
 * the root of a virtual bus named like a class with devices in
 * devices/virtual, two devices at one path in a class device; a
 * duplicate or reserved entry name, see above), -ENODEV (parent being
 * removed), -ENOMEM, -ENOSPC (the tree's node ids are used up).  On error
 * nothing is changed.
 */
CLASSFS_PUBLIC int classfs_device_add(struct classfs_device *dev);
/**
 * classfs_device_add_to() - classfs_device_add() for a physical device
 * with neither bus nor parent, placed in @tree (classfs_device_add() uses
 * the default tree for those).  Return: as classfs_device_add(); -EINVAL
 * also for NULL @tree.
 */
CLASSFS_PUBLIC int classfs_device_add_to(struct classfs_tree *tree, struct classfs_device *dev);
/**
 * classfs_device_add_virtual() - classfs_device_add_to() for the root
 * device of a virtual bus (Linux's subsys_virtual_register()): placed in
 * devices/virtual (syspath "/devices/virtual/NAME"), in either layout.
 * The bus's devices have it as parent.  Return: as classfs_device_add();
 * -EINVAL for a device with a class, bus, parent or physical device.
 */
CLASSFS_PUBLIC int classfs_device_add_virtual(struct classfs_tree *tree,
					      struct classfs_device *dev);
/**
 * classfs_device_add_at() - classfs_device_add() at exactly the directory
 * @dir of a `devices` layout tree, as umockdev's add_device() places a
 * device: @dir/NAME is its syspath and DEVPATH, with no glue directory
 * or devices/virtual/CLASS added.
 * @tree: the tree (the class's, bus's and parent's)
 * @dev: as for classfs_device_add()
 * @dir: a path below the tree's root, "/devices" or below it
 *	("/devices/pci0000:00/0000:00:02.0/dri")
 *
 * The components of @dir that are missing are made as plain directories:
 * no `uevent`, no `subsystem`, so that libudev's walk to a device's
 * parent passes over them.  They go again with the last device below
 * them, unless something else was put in them.  The device's parent is
 * the nearest device on @dir: a physical device's or a nested class
 * device's @parent, a class device's @phys; NULL for each when there is
 * none.  When @dir/NAME is a plain directory (made for a device below it,
 * or for a value's path), the device takes its place and what it holds
 * stays below the device: the devices there with no device between take
 * the new device as their parent (a class device of its class is nested
 * in it, another class device has it as physical device); their paths
 * do not change and they send no event.
 * Return: as classfs_device_add(); -EINVAL also for a tree in the `class`
 * layout, a @dir that is not below /devices or has an empty, "." or ".."
 * component, or whose nearest device is not the device's parent;
 * -ENOTDIR (a file or link on @dir); -EEXIST also for a device, file or
 * link at @dir/NAME, or a plain directory there holding an entry named
 * like one the device computes (`uevent`, ...).
 */
CLASSFS_PUBLIC int classfs_device_add_at(struct classfs_tree *tree, struct classfs_device *dev,
					 const char *dir);
/**
 * classfs_device_del() - unpublish a device
 *
 * Leaves the class and calls interfaces' remove(), removes the devices
 * still below it (deepest first, each with its remove() calls and its
 * REMOVE event; their registration references are dropped), sends REMOVE,
 * removes the directory once no show()/store() of it runs, drops the
 * references add took.
 * Return: 0, -EINVAL (not added, or being removed), -EDEADLK (called from a show()/store()
 * of this device or one below it: use classfs_device_unregister_self()).
 */
CLASSFS_PUBLIC int classfs_device_del(struct classfs_device *dev);
/**
 * classfs_device_del_keep() - unpublish a device but keep what its
 * directory holds: the reverse of filling in a plain directory with
 * classfs_device_add_at()
 *
 * As classfs_device_del() for the device itself (interfaces' remove(),
 * REMOVE, its computed entries go), but the devices, files, links and
 * directories in its directory stay, in a plain directory that takes its
 * place (it goes with the last device below it, at once when it holds
 * nothing); the devices there that
 * had it as parent are attached to its own parent instead, keep their
 * paths and send no event.  What the caller added to the device and does
 * not want kept it removes first (classfs_device_remove_entry()).
 * Return: as classfs_device_del(); -ENOMEM (nothing changed).
 */
CLASSFS_PUBLIC int classfs_device_del_keep(struct classfs_device *dev);
/**
 * classfs_device_register() - classfs_device_add() of a device named
 * with classfs_device_set_name() (so initialized: names need that).
 * Return: as classfs_device_add(); -EINVAL also for a device not named.
 */
CLASSFS_PUBLIC int classfs_device_register(struct classfs_device *dev);
/**
 * classfs_device_unregister() - classfs_device_del() + classfs_device_put()
 * Return: as classfs_device_del() (the reference is dropped only on success).
 */
CLASSFS_PUBLIC int classfs_device_unregister(struct classfs_device *dev);
/**
 * classfs_device_unregister_self() - unregister from one of its own
 * attribute callbacks (sysfs's `delete` files): the caller's own active
 * reference is set aside so the removal does not wait for it; the device
 * is released no earlier than the callback's return.
 * Return: as classfs_device_del(); -EINVAL when not called from a
 * callback of this device.
 */
CLASSFS_PUBLIC int classfs_device_unregister_self(struct classfs_device *dev);
/**
 * classfs_device_create() - allocate, name and add a class device
 * @phys: physical device (may be NULL).
 * Return: the device, or NULL with errno set: as classfs_device_add(),
 * or classfs_device_set_name()'s EINVAL and ENOMEM.
 */
CLASSFS_PUBLIC struct classfs_device *classfs_device_create(struct classfs_class *cls,
							   struct classfs_device *parent,
							   dev_t devt,
							   struct classfs_device *phys,
							   void *drvdata,
							   const char *fmt, ...)
	CLASSFS_PRINTF(6, 7);
/** classfs_device_get() - take a reference; NULL tolerated */
CLASSFS_PUBLIC struct classfs_device *classfs_device_get(struct classfs_device *dev);
/** classfs_device_put() - drop a reference (the last releases); NULL tolerated */
CLASSFS_PUBLIC void classfs_device_put(struct classfs_device *dev);
/** classfs_device_is_added() - true between a successful add and del */
CLASSFS_PUBLIC bool classfs_device_is_added(const struct classfs_device *dev);
/**
 * classfs_device_rename() - rename; sends MOVE with DEVPATH_OLD
 * A bus device's link in bus/BUS/devices follows the name.
 * Return: 0, -EINVAL (bad name, not added), -EEXIST (the new name is
 * taken where an add of it would be refused: in the class, the directory,
 * on the bus, or a place in Linux's devices layout, see
 * classfs_device_add()), -EDEADLK (from a uevent hook of this device's own
 * rename), -ERANGE (the device's path is longer than PATH_MAX), -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_device_rename(struct classfs_device *dev, const char *new_name);
/**
 * classfs_device_create_file() - add an attribute file after add
 * Return: 0, -EINVAL (NULL, invalid name, not added), -ENODEV (being
 * removed), -EEXIST (name taken, computed entries included), -ENOMEM,
 * -ENOSPC (node ids).
 */
CLASSFS_PUBLIC int classfs_device_create_file(struct classfs_device *dev,
					      const struct classfs_device_attribute *attr);
/** classfs_device_remove_file() - remove it; waits for running show()/store() */
CLASSFS_PUBLIC void classfs_device_remove_file(struct classfs_device *dev,
					       const struct classfs_device_attribute *attr);
/** classfs_device_create_bin_file() - add a binary attribute; as classfs_device_create_file() */
CLASSFS_PUBLIC int classfs_device_create_bin_file(struct classfs_device *dev,
						  const struct classfs_bin_attribute *attr);
/** classfs_device_remove_bin_file() - remove it */
CLASSFS_PUBLIC void classfs_device_remove_bin_file(struct classfs_device *dev,
						   const struct classfs_bin_attribute *attr);
/**
 * classfs_device_create_group() - add a group's files (and its directory);
 * all or nothing.  Return: as classfs_device_create_file().
 */
CLASSFS_PUBLIC int classfs_device_create_group(struct classfs_device *dev,
					       const struct classfs_attribute_group *grp);
/** classfs_device_remove_group() - remove them */
CLASSFS_PUBLIC void classfs_device_remove_group(struct classfs_device *dev,
						const struct classfs_attribute_group *grp);
/**
 * classfs_device_uevent() - send an event for a device
 * @extra: NULL or a NULL-terminated list of "KEY=VALUE" added last: the
 *         driver's own variables, sent as they are; KEY of [A-Za-z0-9_],
 *         VALUE without control bytes.  Variables from anyone else go
 *         through classfs_device_synth_uevent().
 * Return: 0, -EINVAL (not added, bad action or variable), -ENODEV (removed
 * while its hooks ran), -ENOMEM (no memory, or the event would exceed
 * the limits), or the hooks' veto.
 */
CLASSFS_PUBLIC int classfs_device_uevent(struct classfs_device *dev, enum classfs_action action,
					 const char *const *extra);
/**
 * classfs_device_uevent_check() - what classfs_device_uevent() would
 * return, without sending: the hooks run and the limits are checked; no
 * SEQNUM is used.  Return: 0, -EINVAL, -ENODEV, -ENOMEM, -E2BIG (the
 * event would exceed the limits), or the hooks' veto.
 */
CLASSFS_PUBLIC int classfs_device_uevent_check(struct classfs_device *dev,
					       enum classfs_action action,
					       const char *const *extra);
/**
 * classfs_device_synth_uevent() - send a synthetic event, as a write of
 * "ACTION [UUID [KEY=VALUE ...]]" to the device's `uevent` file does
 * (Linux's kobject_synth_uevent())
 * @uuid: NULL (no SYNTH_UUID), "0" or an 8-4-4-4-12 hexadecimal UUID,
 *        sent as SYNTH_UUID.
 * @args: NULL or a NULL-terminated list of "KEY=VALUE" (see
 *        classfs_synth_arg_valid()), each sent as SYNTH_ARG_KEY=VALUE:
 *        the writer never sets one of the event's own variables.
 * Return: 0, -EINVAL (bad device, action, UUID or variable: nothing
 * sent), -ENODEV (removed while its hooks ran), -ENOMEM (no memory, or
 * the event would exceed the limits), or the hooks' veto.
 */
CLASSFS_PUBLIC int classfs_device_synth_uevent(struct classfs_device *dev,
					       enum classfs_action action, const char *uuid,
					       const char *const *args);
/**
 * classfs_synth_arg_valid() - may a writer add @kv to a synthetic event?
 * "KEY=VALUE" with KEY one or more of [A-Za-z0-9_] and VALUE one or more
 * bytes, none a control byte (below 0x20, or 0x7f).  Return: 0 or -EINVAL.
 */
CLASSFS_PUBLIC int classfs_synth_arg_valid(const char *kv);
/**
 * classfs_device_notify() - wake poll()ers of an attribute (sysfs_notify)
 * @attr_name: an attribute of @dev ("group/name" for a named group).
 * Return: 0, -EINVAL (NULL, or @dev not added), -ENOENT (no such
 * attribute), -ENOTDIR (a group part names a file).
 */
CLASSFS_PUBLIC int classfs_device_notify(struct classfs_device *dev, const char *attr_name);
/* ------------------------------------------------------------------ */
/* data-driven publishing: stored values, links, quiet adds            */
/* ------------------------------------------------------------------ */

/* classfs_device_add_value() flag: a binary attribute (random access, st_size = length) */
#define CLASSFS_VALUE_BINARY 0x1u

/**
 * classfs_device_add_value() - add an attribute holding @len bytes of @value
 * at @path ("name" or "dir/sub/name", up to 8 components: missing plain
 * directories are made and go with the device).  Text values read back exactly as given (no
 * '\n' added), at most %CLASSFS_ATTR_MAX bytes; binary ones at most 2 GiB - 1
 * (a write past that fails with -EFBIG).  Mode bits hold for
 * filesystem and path-API writes; a write to a writable value replaces it.
 * Return: 0, -EINVAL (bad path or flags), -ENODEV (not added, or being
 * removed), -EEXIST (name taken, computed entries included), -E2BIG,
 * -ENOMEM, -ENOSPC (node ids).
 */
CLASSFS_PUBLIC int classfs_device_add_value(struct classfs_device *dev, const char *path,
					    mode_t mode, const void *value, size_t len,
					    unsigned int flags);
/**
 * classfs_device_set_value() - replace a value's bytes whatever its mode,
 * and wake its poll()ers.  Return: 0, -EINVAL, -ENOENT (no such value, or
 * @dev not added), -E2BIG, -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_device_set_value(struct classfs_device *dev, const char *path,
					    const void *value, size_t len);
/**
 * classfs_device_add_link() - add a symlink at @path whose text is @target
 * exactly as given (it may dangle).  Return: 0, -EINVAL (bad path, empty
 * target or one of PATH_MAX bytes or more), -ENODEV (not added), -EEXIST,
 * -ENOMEM, -ENOSPC (node ids).
 */
CLASSFS_PUBLIC int classfs_device_add_link(struct classfs_device *dev, const char *path,
					   const char *target);
/**
 * classfs_device_add_link_to() - add a symlink at @path to @target's
 * directory, its text computed when read (the tree's layout, current
 * names); the link holds a reference to @target, and reading it gives
 * -ENOENT once @target is removed.
 * Return: 0, -EINVAL (bad path, @target in another tree), -ENODEV (@dev
 * or @target not added), -EEXIST, -ENOMEM, -ENOSPC (node ids).
 */
CLASSFS_PUBLIC int classfs_device_add_link_to(struct classfs_device *dev, const char *path,
					      struct classfs_device *target);
/**
 * classfs_device_remove_entry() - remove a value, a link, or an empty plain
 * directory made by the calls above; waits for a running show()/store()
 * of a value.  Return: 0, -EINVAL, -ENOENT (none such), -ENOTEMPTY,
 * -EDEADLK (called from that value's own show()/store()).
 */
CLASSFS_PUBLIC int classfs_device_remove_entry(struct classfs_device *dev, const char *path);
/**
 * classfs_device_set_uevent_suppress() - Linux's dev_set_uevent_suppress():
 * while set the device sends no uevent (ADD included); a device that never
 * sent ADD sends no REMOVE.  Publish quietly, add entries, clear, then
 * classfs_device_uevent(dev, CLASSFS_ACTION_ADD, NULL).
 */
CLASSFS_PUBLIC void classfs_device_set_uevent_suppress(struct classfs_device *dev,
						       bool suppress);
/**
 * classfs_device_syspath() - the device's path in Linux's devices layout
 * ("/devices/.../block/sda/sda1", "/devices/virtual/CLASS/NAME"), whatever
 * the tree's layout (in the `devices` layout: where its directory is, also
 * for a device added with classfs_device_add_at()).
 * Return: length, -EINVAL (not added) or -ERANGE.
 */
CLASSFS_PUBLIC int classfs_device_syspath(struct classfs_device *dev, char *buf, size_t size);
/**
 * classfs_tree_for_each_class() - call @fn for every registered class,
 * with a reference and no lock held; stops at (and returns) a non-zero return.
 * Return: 0, @fn's non-zero return, -EINVAL (NULL), -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_tree_for_each_class(struct classfs_tree *tree,
					       int (*fn)(struct classfs_class *cls, void *data),
					       void *data);
/**
 * classfs_tree_for_each_device() - call @fn for every added device, class
 * and physical, each after its parent and its physical device, with a
 * reference and no lock held; stops at (and returns) a non-zero return.
 * Devices added during the walk may or may not be visited; one removed
 * during the walk is still visited (it is then no longer added).
 * Return: 0, @fn's non-zero return, -EINVAL (NULL), -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_tree_for_each_device(struct classfs_tree *tree,
						int (*fn)(struct classfs_device *dev, void *data),
						void *data);

/**
 * classfs_tree_find_device() - the added device whose classfs_device_syspath()
 * is @syspath ("/devices/..."), by name lookups along the path
 * Return: the device with a reference (drop it with classfs_device_put()), or NULL.
 */
CLASSFS_PUBLIC struct classfs_device *classfs_tree_find_device(struct classfs_tree *tree,
							       const char *syspath);

/**
 * classfs_device_devpath() - DEVPATH of an added device ("/class/block/sda")
 * Return: length, -EINVAL (NULL, or not added), -ERANGE (@size is too small).
 */
CLASSFS_PUBLIC int classfs_device_devpath(struct classfs_device *dev, char *buf, size_t size);
/** classfs_device_tree() - the tree of an added device, or NULL */
CLASSFS_PUBLIC struct classfs_tree *classfs_device_tree(const struct classfs_device *dev);

/* ------------------------------------------------------------------ */
/* class interfaces                                                    */
/* ------------------------------------------------------------------ */

/**
 * struct classfs_interface - a driver of a class's devices
 * @type: when set, only devices of this type are offered.
 * @add: called for each device of the class (present or future); may
 *       create or remove devices.  Errors are ignored, as in Linux.
 * @remove: called when a device leaves or the interface unregisters.
 */
struct classfs_interface {
	struct classfs_class *cls;
	const struct classfs_device_type *type;
	int (*add)(struct classfs_device *dev, struct classfs_interface *intf);
	void (*remove)(struct classfs_device *dev, struct classfs_interface *intf);
	/* private */
	struct {
		struct classfs_interface *next;
		int users;
		bool registered;
	} p;
};

/**
 * classfs_interface_register() - add an interface; add() runs for every
 * existing device.  Return: 0, -ENODEV (no class), -EINVAL (class not
 * registered), -EEXIST (registered already), -ENOSPC (64 interfaces in
 * the class), -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_interface_register(struct classfs_interface *intf);
/** classfs_interface_unregister() - remove() runs for every device */
CLASSFS_PUBLIC void classfs_interface_unregister(struct classfs_interface *intf);

/* ------------------------------------------------------------------ */
/* the tree as files: the path API                                    */
/* ------------------------------------------------------------------ */


enum classfs_ftype {
	CLASSFS_FT_DIR = 1,
	CLASSFS_FT_REG,
	CLASSFS_FT_LNK,
};

/**
 * struct classfs_stat - an entry of the tree, as the mount's stat() shows it
 * @ino: its inode number (the mount's st_ino): node id, generation and a
 *       slot for the entries computed from a node; a removed entry's
 *       number stays stale (-ENOENT) for a long time, as ids are reused
 *       oldest first with the next generation.
 * @generation: that generation.
 */
struct classfs_stat {
	uint64_t ino;
	uint32_t generation;
	enum classfs_ftype type;
	mode_t mode;		/* permission bits only */
	off_t size;		/* a stored value's length; a computed one's CLASSFS_ATTR_MAX
				 * (a binary attribute's: its declared size) */
	bool dynamic;		/* computed by show() on every read; false: bytes the tree
				 * keeps, changed only through its calls */
};

/*
 * Answers given later.  A device text attribute's show()/store() that
 * must wait for someone else (classfsd's remote attributes wait for
 * their publisher's connection) may take the answer over with
 * classfs_defer(), return -CLASSFS_DEFERRED and complete the reply once,
 * from any thread, when the answer comes.  Only a reader that can wait
 * without holding a thread offers that (a read or write through the
 * mount); for every other one (the path API, a show() reading another
 * attribute) classfs_defer() returns NULL and the callback answers at once.
 */

/* what show()/store() return once they took the reply (the kernel's EIOCBQUEUED) */
#define CLASSFS_DEFERRED	529

/**
 * struct classfs_reply - the answer to a read or write, given after its
 * show()/store() returned
 * @done: called exactly once: @result is show()'s length (the value at
 *        @page, CLASSFS_ATTR_MAX bytes at most) or store()'s count, or
 *        -errno; @page is NULL for a store().  The reply is not used after.
 */
struct classfs_reply {
	void (*done)(struct classfs_reply *reply, ssize_t result, const char *page);
};

/**
 * classfs_defer() - in a device text attribute's show()/store(): take the
 * answer over.  At most once per call; nested reads (a show() reading
 * another attribute) are never offered.
 * Return: the reply to complete (the callback then returns
 * -CLASSFS_DEFERRED), or NULL: the caller waits, answer now.
 */
CLASSFS_PUBLIC struct classfs_reply *classfs_defer(void);
/**
 * classfs_io_error() - @err as an error a read or write may end with
 *
 * @err as it is when it is -errno with errno in 1..511 and the errno can
 * describe an attribute's read or write; -EIO for anything else: values
 * outside 1..511 (the kernel's FUSE refuses -512 and below, and its own
 * 512..529 mean restart or queued), 0 or positive values, and the errnos
 * that describe the caller's own call rather than the attribute: its
 * descriptor, buffer or offset, or the path lookup and open it already
 * got through (EBADF, EFAULT, ESPIPE, EISDIR, ENOTDIR, ENAMETOOLONG, ELOOP,
 * EMFILE, ENFILE), a retry or an interruption it did not ask for (EAGAIN,
 * EINTR), or a filesystem that is missing or gone (ENOSYS, ENOTCONN,
 * EPIPE).
 */
CLASSFS_PUBLIC int classfs_io_error(long err);
/**
 * classfs_path_stat() - resolve a path below the root ("class/block/sda")
 * without following the last component's link (links inside the path
 * are followed). Return: 0, -EINVAL (NULL), -ENAMETOOLONG (@path of
 * PATH_MAX bytes or more, or a link's target making it longer), -ENOENT,
 * -ENOTDIR, -ELOOP (too many links).
 */
CLASSFS_PUBLIC int classfs_path_stat(struct classfs_tree *tree, const char *path,
				     struct classfs_stat *st);
/**
 * classfs_path_read() - read a whole attribute by path (a link at the
 * end of @path followed)
 * Return: length, classfs_path_stat()'s errors, or -ENODEV (removed
 * meanwhile), -EACCES (not readable), -EISDIR, -EBUSY (attribute
 * callbacks nested more than 16 deep on this thread), -ENOMEM, -EIO (the
 * attribute has no show() or read()), the show()'s error.
 */
CLASSFS_PUBLIC ssize_t classfs_path_read(struct classfs_tree *tree, const char *path, char *buf,
					 size_t size);
/**
 * classfs_path_write() - one store() of the whole of @buf by path (a
 * binary attribute: written at offset 0)
 * Return: bytes consumed, or classfs_path_read()'s errors with -EACCES
 * when not writable, -EPERM (a file made immutable through the mount,
 * chattr +i), -E2BIG (a text attribute's store() over CLASSFS_ATTR_MAX),
 * -EFBIG (past 2 GiB - 1), -EIO (the attribute has no store() or
 * write()), the store()'s error.
 */
CLASSFS_PUBLIC ssize_t classfs_path_write(struct classfs_tree *tree, const char *path,
					  const char *buf, size_t size);
/**
 * classfs_path_readlink() - a link's relative target by path
 * Return: length, classfs_path_stat()'s errors, -EINVAL (not a link),
 * -ENOENT (a link to a removed device), -ERANGE (@size too small).
 */
CLASSFS_PUBLIC ssize_t classfs_path_readlink(struct classfs_tree *tree, const char *path,
					     char *buf, size_t size);
/**
 * classfs_path_list() - list a directory by path, each entry once
 * @fn: called per entry, no library lock held.  An entry present for the
 *      whole listing is seen exactly once while the directory changes;
 *      "." and ".." are not listed.
 * Return: number of entries, @fn's non-zero return (which stops it), or
 * classfs_path_stat()'s errors, -ENOTDIR (not a directory), -ENOENT
 * (removed meanwhile), -ENOMEM.
 */
CLASSFS_PUBLIC int classfs_path_list(struct classfs_tree *tree, const char *path,
				     int (*fn)(void *ctx, const char *name,
					       const struct classfs_stat *st),
				     void *ctx);
/**
 * classfs_tree_remove_plain() - remove everything made through the
 * mounted filesystem (files, directories and links made by
 * open(O_CREAT), mkdir, symlink; renames of them; chmod) and show again the computed entries it hid; devices and
 * what their publishers added stay.  0, -EINVAL, -ENOMEM (nothing changed)
 */
CLASSFS_PUBLIC int classfs_tree_remove_plain(struct classfs_tree *tree);

/* ------------------------------------------------------------------ */
/* the live filesystem (FUSE)                                          */
/* ------------------------------------------------------------------ */

struct classfs_mount;

/**
 * classfs_mount() - serve the default tree (the one <classfs/kernel.h>
 * builds) at @mountpoint from background threads
 * @options: NULL or comma-separated: allow_other, allow_root, ro, rw,
 *           nosuid, nodev, noexec, noatime.
 * Return: 0, -EBUSY when already mounted, -EINVAL for bad options, or
 * the mount's error.
 */
CLASSFS_PUBLIC int classfs_mount(const char *mountpoint, const char *options);
/** classfs_unmount() - stop serving the default tree; 0 or -EINVAL when not mounted */
CLASSFS_PUBLIC int classfs_unmount(void);
/**
 * classfs_mount_tree() - serve any tree at @mountpoint (a tree may be
 * served at several mount points).  Return: the mount or NULL with errno.
 */
CLASSFS_PUBLIC struct classfs_mount *classfs_mount_tree(struct classfs_tree *tree,
							const char *mountpoint,
							const char *options);
/**
 * classfs_mount_devtmpfs() - serve the devices of @tree as a devtmpfs at
 * @mountpoint: each device with a number at its node name (DEVNAME, the
 * type's devnode hook, a record's `N:`) as a character or block special
 * file of that number, mode (DEVMODE; else 0600, a record's node 0666)
 * and owner (DEVUID, DEVGID), a record's `S:` links, the links
 * char/M:m and block/M:m, and what every /dev holds (null, zero, full,
 * random, urandom, tty, fd, stdin, stdout, stderr, ptmx -> pts/ptmx, the
 * directories pts and shm); current with the tree at every request.
 * The mount is always nodev: a node stat()s as the device and cannot be
 * opened (EACCES).  @options as classfs_mount_tree()'s, or "/dev/fd/N"
 * as @mountpoint for a /dev/fuse descriptor already mounted.
 * Return: the mount (classfs_mount_close() ends it) or NULL with errno.
 */
CLASSFS_PUBLIC struct classfs_mount *classfs_mount_devtmpfs(struct classfs_tree *tree,
							    const char *mountpoint,
							    const char *options);
/** classfs_mount_close() - unmount and free; 0 or -EINVAL */
CLASSFS_PUBLIC int classfs_mount_close(struct classfs_mount *m);
/** classfs_mount_point() - the directory @m serves */
CLASSFS_PUBLIC const char *classfs_mount_point(const struct classfs_mount *m);

/**
 * classfs_name_valid() - 0 for a valid entry name, else -EINVAL
 *
 * 1 to 255 bytes of well-formed UTF-8 (names are text to JSON, udev and
 * Python), without '/' or a control character, and neither "." nor "..".
 */
CLASSFS_PUBLIC int classfs_name_valid(const char *name);

#ifdef __cplusplus
}
#endif
#endif

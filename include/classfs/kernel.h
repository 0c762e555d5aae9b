/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * kernel.h - the Linux 2.6.15 class API over the native classfs API, so
 * driver code of that era compiles unchanged and builds the default tree
 * (classfs_default_tree()).
 *
 * The 2.6.15 structures embed their native counterparts.  struct
 * class_device is a union view of struct classfs_device: its `class`,
 * `parent`, `devt`, `class_data` and `dev` fields *are* the native
 * fields (same bytes), so a driver and the core never disagree about
 * them and a device costs no more than a native one.  struct class and
 * struct device start with their native objects for the same reason.
 * All devices of a class registered here must be struct class_device.
 *
 * Only static inline functions and macros live here: the library itself
 * exports prefixed symbols only (classfs_k_*).
 */
#ifndef CLASSFS_KERNEL_H
#define CLASSFS_KERNEL_H

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <classfs/classfs.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- what driver code of the time uses around the class API ---- */

#define BUS_ID_SIZE	20
#define KOBJ_NAME_LEN	20
#define PAGE_SIZE	4096
#define GFP_KERNEL	0
#define GFP_ATOMIC	0

struct module;
#define THIS_MODULE	((struct module *)0)
#define __init
#define __exit
#define __devinit
#define __devexit

/* a test runs the module with classfs_module_init() / classfs_module_exit() */
#define module_init(fn) \
	int classfs_module_init(void) { return fn(); } extern int classfs_module_init_
#define module_exit(fn) \
	void classfs_module_exit(void) { fn(); } extern int classfs_module_exit_
#define MODULE_LICENSE(l)	extern int classfs_module_license_
#define MODULE_AUTHOR(a)	extern int classfs_module_author_
#define MODULE_DESCRIPTION(d)	extern int classfs_module_description_
#define EXPORT_SYMBOL(s)	extern int classfs_export_symbol_
#define EXPORT_SYMBOL_GPL(s)	extern int classfs_export_symbol_

#ifndef S_IRUGO
#define S_IRUGO		(S_IRUSR | S_IRGRP | S_IROTH)
#define S_IWUGO		(S_IWUSR | S_IWGRP | S_IWOTH)
#define S_IXUGO		(S_IXUSR | S_IXGRP | S_IXOTH)
#define S_IRWXUGO	(S_IRWXU | S_IRWXG | S_IRWXO)
#endif

#define MKDEV(ma, mi)	makedev((ma), (mi))
#define MAJOR(dev)	major(dev)
#define MINOR(dev)	minor(dev)

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)(void *)((char *)(ptr) - offsetof(type, member)))
#endif

#define MAX_ERRNO	4095
static inline void *ERR_PTR(long error)
{
	return (void *)error;
}
static inline long PTR_ERR(const void *ptr)
{
	return (long)ptr;
}
static inline int IS_ERR(const void *ptr)
{
	return (unsigned long)ptr >= (unsigned long)-MAX_ERRNO;
}

static inline void *kmalloc(size_t size, int flags)
{
	(void)flags;
	return classfs_malloc(size);
}
static inline void *kzalloc(size_t size, int flags)
{
	(void)flags;
	return classfs_zalloc(size);
}
static inline void kfree(const void *p)
{
	classfs_free((void *)p);
}

/* glibc before 2.38 lacks strlcpy(); avoid clashing with one that has it */
static inline size_t classfs_k_strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);

	if (size) {
		size_t n = len >= size ? size - 1 : len;

		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}
#define strlcpy classfs_k_strlcpy

/* glibc names loff_t only with its extensions (-std=gnu17, _GNU_SOURCE) */
#if defined(__GLIBC__) && !defined(__USE_MISC)
typedef __loff_t loff_t;
#endif

#define __stringify_1(x)	#x
#define __stringify(x)		__stringify_1(x)

/* ---- kobjects and attributes ---- */

/* only an anchor here: binary attributes get the device's kobject */
struct kobject {
	const char *k_name;
};

struct attribute {
	const char *name;
	struct module *owner;
	mode_t mode;
};

struct class;
struct class_device;
struct device;

#define __ATTR(_name, _mode, _show, _store) { \
	.attr = { .name = __stringify(_name), .owner = THIS_MODULE, .mode = (_mode) }, \
	.show = (_show), .store = (_store) }
#define __ATTR_RO(_name) __ATTR(_name, 0444, _name##_show, NULL)
#define __ATTR_NULL { .attr = { .name = NULL } }

struct class_attribute {
	struct attribute attr;
	ssize_t (*show)(struct class *cls, char *buf);
	ssize_t (*store)(struct class *cls, const char *buf, size_t count);
};
#define CLASS_ATTR(_name, _mode, _show, _store) \
	struct class_attribute class_attr_##_name = __ATTR(_name, _mode, _show, _store)

struct class_device_attribute {
	struct attribute attr;
	ssize_t (*show)(struct class_device *cdev, char *buf);
	ssize_t (*store)(struct class_device *cdev, const char *buf, size_t count);
};
#define CLASS_DEVICE_ATTR(_name, _mode, _show, _store) \
	struct class_device_attribute class_device_attr_##_name = \
		__ATTR(_name, _mode, _show, _store)

struct bin_attribute {
	struct attribute attr;
	size_t size;
	void *private;
	ssize_t (*read)(struct kobject *kobj, char *buf, loff_t off, size_t count);
	ssize_t (*write)(struct kobject *kobj, char *buf, loff_t off, size_t count);
};

/* ---- physical devices ---- */

struct device {
	union {
		struct classfs_device cfs;
		struct {
			void *__cls;			/* always NULL */
			struct device *parent;		/* = cfs.parent */
			dev_t devt;			/* = cfs.devt */
			void *driver_data;		/* = cfs.drvdata */
		};
	};
	struct kobject kobj;
	char bus_id[BUS_ID_SIZE];
	void (*release)(struct device *dev);
};

_Static_assert(offsetof(struct device, parent) == offsetof(struct classfs_device, parent),
	       "struct device aliases the native parent");
_Static_assert(offsetof(struct device, devt) == offsetof(struct classfs_device, devt),
	       "struct device aliases the native devt");
_Static_assert(offsetof(struct device, driver_data) == offsetof(struct classfs_device, drvdata),
	       "struct device aliases the native drvdata");

CLASSFS_PUBLIC void classfs_k_device_initialize(struct device *dev);
CLASSFS_PUBLIC int classfs_k_device_add(struct device *dev);

static inline void device_initialize(struct device *dev)
{
	classfs_k_device_initialize(dev);
}
static inline int device_add(struct device *dev)
{
	return classfs_k_device_add(dev);
}
static inline int device_register(struct device *dev)
{
	device_initialize(dev);
	return device_add(dev);
}
static inline void device_del(struct device *dev)
{
	if (dev)
		classfs_device_del(&dev->cfs);
}
static inline void device_unregister(struct device *dev)
{
	if (dev)
		classfs_device_unregister(&dev->cfs);
}
static inline struct device *get_device(struct device *dev)
{
	if (dev)
		classfs_device_get(&dev->cfs);
	return dev;
}
static inline void put_device(struct device *dev)
{
	if (dev)
		classfs_device_put(&dev->cfs);
}
static inline void *dev_get_drvdata(struct device *dev)
{
	return dev->driver_data;
}
static inline void dev_set_drvdata(struct device *dev, void *data)
{
	dev->driver_data = data;
}

/* ---- classes ---- */

struct class {
	struct classfs_class cfs;	/* first: class devices point here */
	const char *name;
	struct module *owner;
	struct class_attribute *class_attrs;
	struct class_device_attribute *class_dev_attrs;
	int (*hotplug)(struct class_device *dev, char **envp, int num_envp, char *buffer,
		       int buffer_size);
	void (*release)(struct class_device *dev);
	void (*class_release)(struct class *cls);
};

CLASSFS_PUBLIC int classfs_k_class_register(struct class *cls);
CLASSFS_PUBLIC struct class *classfs_k_class_create(struct module *owner, const char *name);
CLASSFS_PUBLIC int classfs_k_class_create_file(struct class *cls,
					       const struct class_attribute *attr);

static inline int class_register(struct class *cls)
{
	return classfs_k_class_register(cls);
}
static inline void class_unregister(struct class *cls)
{
	if (cls)
		classfs_class_unregister(&cls->cfs);
}
static inline struct class *class_create(struct module *owner, const char *name)
{
	return classfs_k_class_create(owner, name);
}
static inline void class_destroy(struct class *cls)
{
	if (cls == NULL || IS_ERR(cls))
		return;
	class_unregister(cls);
}
static inline struct class *class_get(struct class *cls)
{
	if (cls)
		classfs_class_get(&cls->cfs);
	return cls;
}
static inline void class_put(struct class *cls)
{
	if (cls)
		classfs_class_put(&cls->cfs);
}
static inline int class_create_file(struct class *cls, const struct class_attribute *attr)
{
	return classfs_k_class_create_file(cls, attr);
}
static inline void class_remove_file(struct class *cls, const struct class_attribute *attr)
{
	struct classfs_class_attribute a = { .attr = { .name = attr ? attr->attr.name : NULL } };

	if (cls && attr)
		classfs_class_remove_file(&cls->cfs, &a);
}

/* ---- class devices ---- */

struct class_device {
	union {
		struct classfs_device cfs;
		struct {
			struct class *class;		/* = cfs.cls */
			struct class_device *parent;	/* = cfs.parent */
			dev_t devt;			/* = cfs.devt */
			void *class_data;		/* = cfs.drvdata */
			struct device *dev;		/* = cfs.phys */
		};
	};
	struct kobject kobj;
	void (*release)(struct class_device *dev);
	int (*hotplug)(struct class_device *dev, char **envp, int num_envp, char *buffer,
		       int buffer_size);
	char class_id[BUS_ID_SIZE];
};

_Static_assert(offsetof(struct class_device, class) == offsetof(struct classfs_device, cls),
	       "struct class_device aliases the native class");
_Static_assert(offsetof(struct class_device, parent) == offsetof(struct classfs_device, parent),
	       "struct class_device aliases the native parent");
_Static_assert(offsetof(struct class_device, devt) == offsetof(struct classfs_device, devt),
	       "struct class_device aliases the native devt");
_Static_assert(offsetof(struct class_device, class_data) ==
		       offsetof(struct classfs_device, drvdata),
	       "struct class_device aliases the native drvdata");
_Static_assert(offsetof(struct class_device, dev) == offsetof(struct classfs_device, phys),
	       "struct class_device aliases the native physical device");
_Static_assert(offsetof(struct class, cfs) == 0, "a class starts with its native class");
_Static_assert(offsetof(struct device, cfs) == 0, "a device starts with its native device");

#define to_class_dev(obj) container_of(obj, struct class_device, kobj)

CLASSFS_PUBLIC int classfs_k_class_device_add(struct class_device *cdev);
CLASSFS_PUBLIC struct class_device *classfs_k_class_device_create(struct class *cls,
								  struct class_device *parent,
								  dev_t devt, struct device *device,
								  const char *fmt, ...)
	CLASSFS_PRINTF(5, 6);
CLASSFS_PUBLIC void classfs_k_class_device_destroy(struct class *cls, dev_t devt);
CLASSFS_PUBLIC int classfs_k_class_device_rename(struct class_device *cdev, const char *name);
CLASSFS_PUBLIC int classfs_k_class_device_create_file(struct class_device *cdev,
						      const struct class_device_attribute *attr);
CLASSFS_PUBLIC int classfs_k_class_device_create_bin_file(struct class_device *cdev,
							  struct bin_attribute *attr);

static inline void class_device_initialize(struct class_device *cdev)
{
	if (cdev)
		classfs_device_initialize(&cdev->cfs);
}
static inline int class_device_add(struct class_device *cdev)
{
	return classfs_k_class_device_add(cdev);
}
static inline int class_device_register(struct class_device *cdev)
{
	class_device_initialize(cdev);
	return class_device_add(cdev);
}
static inline void class_device_del(struct class_device *cdev)
{
	if (cdev)
		classfs_device_del(&cdev->cfs);
}
static inline void class_device_unregister(struct class_device *cdev)
{
	if (cdev)
		classfs_device_unregister(&cdev->cfs);
}
static inline struct class_device *class_device_get(struct class_device *cdev)
{
	if (cdev)
		classfs_device_get(&cdev->cfs);
	return cdev;
}
static inline void class_device_put(struct class_device *cdev)
{
	if (cdev)
		classfs_device_put(&cdev->cfs);
}
#define class_device_create classfs_k_class_device_create
static inline void class_device_destroy(struct class *cls, dev_t devt)
{
	classfs_k_class_device_destroy(cls, devt);
}
static inline int class_device_rename(struct class_device *cdev, char *new_name)
{
	return classfs_k_class_device_rename(cdev, new_name);
}
static inline int class_device_create_file(struct class_device *cdev,
					   const struct class_device_attribute *attr)
{
	return classfs_k_class_device_create_file(cdev, attr);
}
static inline void class_device_remove_file(struct class_device *cdev,
					    const struct class_device_attribute *attr)
{
	struct classfs_device_attribute a = { .attr = { .name = attr ? attr->attr.name : NULL } };

	if (cdev && attr)
		classfs_device_remove_file(&cdev->cfs, &a);
}
static inline int class_device_create_bin_file(struct class_device *cdev,
					       struct bin_attribute *attr)
{
	return classfs_k_class_device_create_bin_file(cdev, attr);
}
static inline void class_device_remove_bin_file(struct class_device *cdev,
						struct bin_attribute *attr)
{
	struct classfs_bin_attribute a = { .attr = { .name = attr ? attr->attr.name : NULL } };

	if (cdev && attr)
		classfs_device_remove_bin_file(&cdev->cfs, &a);
}
static inline void *class_get_devdata(struct class_device *cdev)
{
	return cdev->class_data;
}
static inline void class_set_devdata(struct class_device *cdev, void *data)
{
	cdev->class_data = data;
}

/**
 * add_hotplug_env_var() - add "KEY=VALUE" in a hotplug() callback
 * (2.6.15's helper: one envp slot is kept for the terminating NULL).
 * Return: 0, or -ENOMEM when out of slots or buffer.
 */
static inline int add_hotplug_env_var(char **envp, int num_envp, int *cur_index, char *buffer,
				      int buffer_size, int *cur_len, const char *format, ...)
	CLASSFS_PRINTF(7, 8);
static inline int add_hotplug_env_var(char **envp, int num_envp, int *cur_index, char *buffer,
				      int buffer_size, int *cur_len, const char *format, ...)
{
	va_list args;
	int len;

	if (*cur_index >= num_envp - 1 || *cur_len >= buffer_size)
		return -ENOMEM;
	envp[*cur_index] = &buffer[*cur_len];
	va_start(args, format);
	len = vsnprintf(&buffer[*cur_len], (size_t)(buffer_size - *cur_len), format, args);
	va_end(args);
	if (len < 0 || *cur_len + len + 1 > buffer_size) {
		envp[*cur_index] = NULL;
		return -ENOMEM;
	}
	*cur_len += len + 1;
	(*cur_index)++;
	return 0;
}

/* ---- class interfaces ---- */

struct class_interface {
	struct classfs_interface cfs;
	struct class *class;
	int (*add)(struct class_device *cdev, struct class_interface *intf);
	void (*remove)(struct class_device *cdev, struct class_interface *intf);
};

CLASSFS_PUBLIC int classfs_k_class_interface_register(struct class_interface *intf);

static inline int class_interface_register(struct class_interface *intf)
{
	return classfs_k_class_interface_register(intf);
}
static inline void class_interface_unregister(struct class_interface *intf)
{
	if (intf)
		classfs_interface_unregister(&intf->cfs);
}

#ifdef __cplusplus
}
#endif
#endif

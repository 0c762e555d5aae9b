// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernel.c - the 2.6.15 class API (<classfs/kernel.h>) over the native API.
 *
 * The 2.6.15 structures embed the native ones, so most calls are direct.
 * What remains here: callbacks with the 2.6.15 signatures, reached from
 * native callbacks by container_of() (attribute show/store, the hotplug
 * hook, interface add/remove, release), and the allocation and naming
 * rules of class_create() and class_device_create().
 */
#include <limits.h>
#include <stdlib.h>

#include "classfs/kernel.h"
#include "classfs-internal/attr-owned.h"

#define to_kdev(d) container_of(d, struct class_device, cfs)
#define to_kclass(c) container_of(c, struct class, cfs)

/* ---- attributes: a native attribute wrapping each 2.6.15 one ---- */

struct kdev_attr {
	struct classfs_device_attribute native;
	const struct class_device_attribute *k;
};

static ssize_t kdev_attr_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			      char *buf)
{
	const struct class_device_attribute *k = container_of(a, struct kdev_attr, native)->k;

	return k->show ? k->show(to_kdev(dev), buf) : -EIO;
}

static ssize_t kdev_attr_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			       const char *buf, size_t count)
{
	const struct class_device_attribute *k = container_of(a, struct kdev_attr, native)->k;

	return k->store ? k->store(to_kdev(dev), buf, count) : -EIO;
}

static void kdev_attr_init(struct kdev_attr *w, const struct class_device_attribute *k)
{
	*w = (struct kdev_attr){
		.native = {
			.attr = { .name = k->attr.name, .mode = k->attr.mode },
			.show = kdev_attr_show,
			.store = kdev_attr_store,
		},
		.k = k,
	};
}

struct kbin_attr {
	struct classfs_bin_attribute native;
	struct bin_attribute *k;
};

static ssize_t kbin_read(struct classfs_device *dev, const struct classfs_bin_attribute *a,
			 char *buf, off_t off, size_t count)
{
	struct bin_attribute *k = container_of(a, struct kbin_attr, native)->k;

	return k->read ? k->read(&to_kdev(dev)->kobj, buf, off, count) : -EIO;
}

static ssize_t kbin_write(struct classfs_device *dev, const struct classfs_bin_attribute *a,
			  const char *buf, off_t off, size_t count)
{
	struct bin_attribute *k = container_of(a, struct kbin_attr, native)->k;
	char *copy;
	ssize_t r;

	if (!k->write)
		return -EIO;
	/* 2.6.15's write() takes a writable buffer */
	copy = classfs_malloc(count ? count : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, buf, count);
	r = k->write(&to_kdev(dev)->kobj, copy, off, count);
	classfs_free(copy);
	return r;
}

struct kclass_attr {
	struct classfs_class_attribute native;
	const struct class_attribute *k;
};

static ssize_t kclass_show(struct classfs_class *cls, const struct classfs_class_attribute *a,
			   char *buf)
{
	const struct class_attribute *k = container_of(a, struct kclass_attr, native)->k;

	return k->show ? k->show(to_kclass(cls), buf) : -EIO;
}

static ssize_t kclass_store(struct classfs_class *cls, const struct classfs_class_attribute *a,
			    const char *buf, size_t count)
{
	const struct class_attribute *k = container_of(a, struct kclass_attr, native)->k;

	return k->store ? k->store(to_kclass(cls), buf, count) : -EIO;
}

/* ---- classes ---- */

/*
 * The class's default attributes (class_dev_attrs) become one native
 * attribute group shared by its devices; it lives as long as the class.
 */
struct kclass_private {
	struct classfs_attribute_group group;
	const struct classfs_attribute_group *groups[2];
	const struct classfs_device_attribute **attrs;
	struct kdev_attr *wrappers;
	void (*class_release)(struct class *cls);
};

/* the hotplug hooks, class's then device's, filling the native env in place */
static int call_hotplug(int (*fn)(struct class_device *, char **, int, char *, int),
			struct class_device *cdev, struct classfs_uevent_env *env)
{
	int room = CLASSFS_UEVENT_NUM_ENVP - env->envp_idx;
	char **envp = &env->envp[env->envp_idx];
	int i = 0, r;

	if (room <= 0)
		return -ENOMEM;
	memset(envp, 0, sizeof(*envp) * (size_t)room);
	r = fn(cdev, envp, room, &env->buf[env->buflen], CLASSFS_UEVENT_BUFFER - env->buflen);
	while (i < room && envp[i])
		i++;
	if (i) {
		env->envp_idx += i;
		env->buflen = (int)(envp[i - 1] + strlen(envp[i - 1]) + 1 - env->buf);
	}
	return r;
}

static int kclass_dev_uevent(struct classfs_device *dev, struct classfs_uevent_env *env)
{
	struct class_device *cdev = to_kdev(dev);
	int r = 0;

	if (cdev->class->hotplug)
		r = call_hotplug(cdev->class->hotplug, cdev, env);
	if (!r && cdev->hotplug)
		r = call_hotplug(cdev->hotplug, cdev, env);
	return r;
}

static void kclass_dev_release(struct classfs_device *dev)
{
	struct class_device *cdev = to_kdev(dev);
	struct class *cls = cdev->class;

	if (cdev->release)
		cdev->release(cdev);
	else if (cls && cls->release)
		cls->release(cdev);
}

static void kclass_release(struct classfs_class *native)
{
	struct class *cls = to_kclass(native);
	struct kclass_private *p = native->private_data;
	void (*release)(struct class *) = cls->class_release;

	native->private_data = NULL;
	if (p) {
		classfs_free(p->attrs);
		classfs_free(p->wrappers);
		classfs_free(p);
	}
	if (release)
		release(cls);
}

static int kclass_default_attrs(struct class *cls, struct kclass_private *p)
{
	size_t n = 0;

	for (struct class_device_attribute *a = cls->class_dev_attrs; a && a->attr.name; a++)
		n++;
	if (!n)
		return 0;
	p->wrappers = classfs_zalloc(n * sizeof(*p->wrappers));
	p->attrs = classfs_zalloc((n + 1) * sizeof(*p->attrs));
	if (!p->wrappers || !p->attrs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		kdev_attr_init(&p->wrappers[i], &cls->class_dev_attrs[i]);
		p->attrs[i] = &p->wrappers[i].native;
	}
	p->group.attrs = p->attrs;
	p->groups[0] = &p->group;
	cls->cfs.dev_groups = p->groups;
	return 0;
}

/**
 * classfs_k_class_register() - class_register(): add @cls to the default tree
 * Return: 0 or -errno (-EINVAL for NULL or a bad name, -EEXIST, -ENOMEM).
 */
int classfs_k_class_register(struct class *cls)
{
	struct classfs_tree *tree = classfs_default_tree();
	struct kclass_private *p;
	int r;

	if (!cls)
		return -EINVAL;
	if (cls->cfs.p.registered)
		return -EBUSY;
	if (!tree)
		return -ENOMEM;
	p = classfs_zalloc(sizeof(*p));
	if (!p)
		return -ENOMEM;
	cls->cfs = (struct classfs_class){
		.name = cls->name,
		.dev_release = kclass_dev_release,
		.class_release = kclass_release,
		.private_data = p,
		/* set only when a hotplug hook exists, see classfs_k_class_device_add() */
		.dev_uevent = cls->hotplug ? kclass_dev_uevent : NULL,
	};
	r = kclass_default_attrs(cls, p);
	if (!r)
		r = classfs_class_register(tree, &cls->cfs);
	if (r < 0)
		goto fail;
	for (struct class_attribute *a = cls->class_attrs; a && a->attr.name; a++) {
		r = classfs_k_class_create_file(cls, a);
		if (r < 0) {
			/* unregistering drops the reference: it frees p */
			classfs_class_unregister(&cls->cfs);
			return r;
		}
	}
	return 0;
fail:
	cls->cfs.private_data = NULL;
	classfs_free(p->attrs);
	classfs_free(p->wrappers);
	classfs_free(p);
	return r;
}

static void class_create_release(struct class *cls)
{
	kfree(cls);
}

static void class_device_create_release(struct class_device *cdev)
{
	kfree(cdev);
}

/*
 * The class hook runs for class_device_create() devices too (2.6.15
 * skipped it).  Hooks of that era take container_of() of the class device
 * as if it were embedded in the driver's own structure; for a device made
 * here that would read memory before the allocation.  In classes with a
 * hook, such devices get a zeroed guard area in front, so the hook reads
 * zeros (NULL names, zero ids) instead of another object.
 */
#define HOOK_GUARD 64

static void class_device_create_release_guarded(struct class_device *cdev)
{
	kfree((char *)cdev - HOOK_GUARD);
}

/**
 * classfs_k_class_create() - class_create(): allocate and register a class
 * Return: the class or ERR_PTR(-errno).
 */
struct class *classfs_k_class_create(struct module *owner, const char *name)
{
	struct class *cls = kzalloc(sizeof(*cls), GFP_KERNEL);
	int r;

	if (!cls)
		return ERR_PTR(-ENOMEM);
	cls->name = name;
	cls->owner = owner;
	cls->class_release = class_create_release;
	cls->release = class_device_create_release;
	r = classfs_k_class_register(cls);
	if (r < 0) {
		kfree(cls);
		return ERR_PTR(r);
	}
	return cls;
}

/** classfs_k_class_create_file() - class_create_file(); 0 or -errno */
int classfs_k_class_create_file(struct class *cls, const struct class_attribute *attr)
{
	struct kclass_attr *w;

	if (!cls || !attr)
		return -EINVAL;
	w = classfs_zalloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct kclass_attr){
		.native = {
			.attr = { .name = attr->attr.name, .mode = attr->attr.mode },
			.show = kclass_show,
			.store = kclass_store,
		},
		.k = attr,
	};
	return classfs_class_create_file_owned(&cls->cfs, &w->native);
}

/* ---- class devices ---- */

/**
 * classfs_k_class_device_add() - class_device_add(): publish @cdev under
 * the name in its class_id.
 * Return: 0 or -errno (-EINVAL without class or name, as 2.6.15).
 */
int classfs_k_class_device_add(struct class_device *cdev)
{
	int r;

	if (!cdev || !cdev->class || !cdev->class_id[0])
		return -EINVAL;
	if (!classfs_device_name(&cdev->cfs)) {
		r = classfs_device_set_name_static(&cdev->cfs, cdev->class_id);
		if (r < 0)
			return r;
	}
	/* the hook pointer only ever goes from NULL to set: safe for others */
	if ((cdev->class->hotplug || cdev->hotplug) && !cdev->class->cfs.dev_uevent)
		cdev->class->cfs.dev_uevent = kclass_dev_uevent;
	return classfs_device_add(&cdev->cfs);
}

/**
 * classfs_k_class_device_create() - class_device_create(): allocate and
 * register a class device named by @fmt, nested in @parent when set.
 * Names are not cut at BUS_ID_SIZE as 2.6.15 did; class_id holds the
 * first 19 bytes of a longer one.
 * Return: the class device or ERR_PTR(-errno) (-ENODEV without class).
 */
struct class_device *classfs_k_class_device_create(struct class *cls, struct class_device *parent,
						   dev_t devt, struct device *device,
						   const char *fmt, ...)
{
	char name[NAME_MAX + 2];
	struct class_device *cdev;
	va_list ap;
	int len, r;

	if (cls == NULL || IS_ERR(cls))
		return ERR_PTR(-ENODEV);
	va_start(ap, fmt);
	len = vsnprintf(name, sizeof(name), fmt, ap);
	va_end(ap);
	if (len < 0 || len > NAME_MAX)
		return ERR_PTR(-EINVAL);
	if (cls->hotplug) {
		char *mem = kzalloc(HOOK_GUARD + sizeof(*cdev), GFP_KERNEL);

		cdev = mem ? (struct class_device *)(void *)(mem + HOOK_GUARD) : NULL;
	} else {
		cdev = kzalloc(sizeof(*cdev), GFP_KERNEL);
	}
	if (!cdev)
		return ERR_PTR(-ENOMEM);
	classfs_device_initialize(&cdev->cfs);
	cdev->devt = devt;
	cdev->dev = device;
	cdev->class = cls;
	cdev->parent = parent;
	cdev->release = cls->hotplug ? class_device_create_release_guarded
				     : class_device_create_release;
	strlcpy(cdev->class_id, name, BUS_ID_SIZE);
	if ((size_t)len < BUS_ID_SIZE)
		r = classfs_device_set_name_static(&cdev->cfs, cdev->class_id);
	else
		r = classfs_device_set_name(&cdev->cfs, "%s", name);
	if (!r)
		r = classfs_k_class_device_add(cdev);
	if (r < 0) {
		class_device_put(cdev);
		return ERR_PTR(r);
	}
	return cdev;
}

/** classfs_k_class_device_destroy() - class_device_destroy(): unregister by devt */
void classfs_k_class_device_destroy(struct class *cls, dev_t devt)
{
	struct classfs_device *dev;

	if (!cls || IS_ERR(cls))
		return;
	dev = classfs_class_find_device_by_devt(&cls->cfs, devt);
	if (!dev)
		return;
	classfs_device_unregister(dev);
	classfs_device_put(dev);
}

/** classfs_k_class_device_rename() - class_device_rename(); class_id follows */
int classfs_k_class_device_rename(struct class_device *cdev, const char *name)
{
	int r;

	if (!cdev || !name)
		return -EINVAL;
	r = classfs_device_rename(&cdev->cfs, name);
	if (!r)
		strlcpy(cdev->class_id, name, BUS_ID_SIZE);
	return r;
}

/** classfs_k_class_device_create_file() - class_device_create_file(); 0 or -errno */
int classfs_k_class_device_create_file(struct class_device *cdev,
				       const struct class_device_attribute *attr)
{
	struct kdev_attr *w;

	if (!cdev || !attr)
		return -EINVAL;
	w = classfs_malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	kdev_attr_init(w, attr);
	return classfs_device_create_file_owned(&cdev->cfs, &w->native);
}

/** classfs_k_class_device_create_bin_file() - class_device_create_bin_file() */
int classfs_k_class_device_create_bin_file(struct class_device *cdev, struct bin_attribute *attr)
{
	struct kbin_attr *w;

	if (!cdev || !attr)
		return -EINVAL;
	w = classfs_malloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	*w = (struct kbin_attr){
		.native = {
			.attr = { .name = attr->attr.name, .mode = attr->attr.mode },
			.size = attr->size,
			.read = kbin_read,
			.write = kbin_write,
			.private = attr->private,
		},
		.k = attr,
	};
	return classfs_device_create_bin_file_owned(&cdev->cfs, &w->native);
}

/* ---- class interfaces ---- */

static int kintf_add(struct classfs_device *dev, struct classfs_interface *native)
{
	struct class_interface *intf = container_of(native, struct class_interface, cfs);

	return intf->add ? intf->add(to_kdev(dev), intf) : 0;
}

static void kintf_remove(struct classfs_device *dev, struct classfs_interface *native)
{
	struct class_interface *intf = container_of(native, struct class_interface, cfs);

	if (intf->remove)
		intf->remove(to_kdev(dev), intf);
}

/**
 * classfs_k_class_interface_register() - class_interface_register()
 * Return: 0, -ENODEV without a class (as 2.6.15), or -errno.
 */
int classfs_k_class_interface_register(struct class_interface *intf)
{
	if (!intf || !intf->class)
		return -ENODEV;
	intf->cfs = (struct classfs_interface){
		.cls = &intf->class->cfs,
		.add = kintf_add,
		.remove = kintf_remove,
	};
	return classfs_interface_register(&intf->cfs);
}

/* ---- physical devices ---- */

static void kdevice_release(struct classfs_device *native)
{
	struct device *dev = container_of(native, struct device, cfs);

	if (dev->release)
		dev->release(dev);
}

/** classfs_k_device_initialize() - device_initialize() */
void classfs_k_device_initialize(struct device *dev)
{
	if (!dev)
		return;
	classfs_device_initialize(&dev->cfs);
	dev->cfs.release = kdevice_release;
}

/**
 * classfs_k_device_add() - device_add(): publish a physical device named
 * by its bus_id under devices/ (or its parent) in the default tree.
 * Return: 0 or -errno.
 */
int classfs_k_device_add(struct device *dev)
{
	int r;

	if (!dev || !dev->bus_id[0])
		return -EINVAL;
	if (!classfs_device_name(&dev->cfs)) {
		r = classfs_device_set_name_static(&dev->cfs, dev->bus_id);
		if (r < 0)
			return r;
	}
	if (dev->parent)
		return classfs_device_add(&dev->cfs);
	return classfs_device_add_to(classfs_default_tree(), &dev->cfs);
}

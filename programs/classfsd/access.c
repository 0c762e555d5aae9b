// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * access.c - whose a device, and whose a file, is: the owner and mode
 * checks are those of the device that holds the file, whatever path a
 * client names it by.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"

/**
 * cfsd_dev_owner() - the uid that owns @dev: its publisher's, or root's
 * for a device no client published (the record loader's)
 *
 * Called with cfsd.lock held.
 */
uid_t cfsd_dev_owner(const struct classfs_device *dev)
{
	const char *n = classfs_device_name(dev);
	struct cfsd_rdev *rd = n ? cfsd_dev_lookup(dev->cls ? dev->cls->name : NULL, n) : NULL;

	return rd && &rd->dev == dev ? rd->o.owner : 0;
}

/**
 * cfsd_rdev_of() - the registry's entry of @dev, or NULL for a device no
 * client published (a record's)
 * @dev: referenced by the caller: the entry, which holds the device,
 *       stays allocated as long as that reference (it may leave the
 *       registry meanwhile: its charge then says so, quota.c).
 *
 * Called without cfsd.lock.
 */
struct cfsd_rdev *cfsd_rdev_of(const struct classfs_device *dev)
{
	struct cfsd_rdev *rd;
	const char *n;

	cfsd_lock();
	n = classfs_device_name(dev);
	rd = n ? cfsd_dev_lookup(dev->cls ? dev->cls->name : NULL, n) : NULL;
	if (rd && &rd->dev != dev)
		rd = NULL;
	cfsd_unlock();
	return rd;
}

/* may @owner put an entry into @rd's directory (a child, a class device's back link)? */
static int may_place(uid_t owner, const struct cfsd_rdev *rd, const char *as, char *msg,
		     size_t msgsz)
{
	if (!rd || owner == 0 || rd->o.owner == owner || rd->o.open)
		return 0;
	snprintf(msg, msgsz, "uid %u may not publish %s %s of uid %u: its owner did not add it "
		 "open to others (--open)", (unsigned int)owner, as, rd->key,
		 (unsigned int)rd->o.owner);
	return -EPERM;
}

/**
 * cfsd_dev_place_check() - may @owner publish the device @m names where
 * it goes?
 * @m: the DEVICE_ADD request.
 * @owner: who publishes it.
 * @parent: the device it goes below (its directory holds the new one's),
 *          or NULL.
 * @phys: its physical device (whose directory holds a link to it, or, in
 *        the devices layout, it), or NULL.
 * @msg: receives why not.
 * @msgsz: its size.
 *
 * A device's directory is its owner's, as a directory is its owner's:
 * another uid may put nothing in it, unless the owner added the device
 * open (CFS_F_OPEN, a world-writable sticky directory: each owns what it
 * puts there).  Root may always.  A device number is root's to give: it
 * makes a node in /dev, which only root may make (mknod(2) needs
 * CAP_MKNOD), so no other uid takes a /dev name, or a number, from
 * root's devices.  And inside another device's directory a name the tree
 * makes there (cfsd_name_reserved()) is never a device's: as a child of
 * @parent, or as the glue directory named after its class in @phys's
 * (the devices layout).  Called under cfsd.lock.
 * Return: 0, -EPERM, -EEXIST.
 */
int cfsd_dev_place_check(const struct cfs_msg *m, uid_t owner, const struct cfsd_rdev *parent,
			 const struct cfsd_rdev *phys, char *msg, size_t msgsz)
{
	int r;

	if (owner != 0 && m->devt) {
		snprintf(msg, msgsz, "uid %u may not give a device a number: its /dev node is "
			 "root's to make (as mknod(2) needs CAP_MKNOD)", (unsigned int)owner);
		return -EPERM;
	}
	if ((r = may_place(owner, parent, "below device", msg, msgsz)) < 0 ||
	    (r = may_place(owner, phys, "on physical device", msg, msgsz)) < 0)
		return r;
	if (parent && cfsd_name_reserved(m->name, strlen(m->name))) {
		snprintf(msg, msgsz, "a device below %s may not be named %s: the tree makes that "
			 "name in a device's directory", parent->key, m->name);
		return -EEXIST;
	}
	if (phys && m->cls && cfsd.cfg.layout == CLASSFS_LAYOUT_DEVICES &&
	    cfsd_name_reserved(m->cls, strlen(m->cls))) {
		snprintf(msg, msgsz, "a device of class %s may not sit in %s: its directory would "
			 "be named %s, a name the tree makes in a device's directory", m->cls,
			 phys->key, m->cls);
		return -EEXIST;
	}
	return 0;
}

struct dir_dev_ctx {
	const char *dir;	/* "class/x/y": the directory, below the root */
	const char *name;	/* its last component */
	struct classfs_device *found;
};

/* is @dev's directory @dir (below the root)? */
static bool dev_at(const struct classfs_device *dev, const char *dir)
{
	char dp[CFS_PATH_MAX * 2];

	return classfs_device_devpath((struct classfs_device *)dev, dp, sizeof(dp)) > 0 &&
	       !strcmp(dp + 1, dir);
}

/* under cfsd.lock: the name read is not freed meanwhile */
static int match_dir(struct classfs_device *dev, void *data)
{
	struct dir_dev_ctx *x = data;
	const char *n = classfs_device_name(dev);

	if (!n || strcmp(n, x->name) || !dev_at(dev, x->dir))
		return 0;
	x->found = classfs_device_get(dev);
	return 1;
}

/* the device @name of class @cls (or, NULL, a published physical one) if its directory is @dir */
static struct classfs_device *candidate(struct classfs_class *cls, const char *name,
					const char *dir)
{
	struct classfs_device *d = NULL;

	if (cls) {
		d = classfs_class_find_device(cls, name);
	} else {
		struct cfsd_rdev *rd;

		cfsd_lock();
		rd = cfsd_dev_lookup(NULL, name);
		d = rd ? classfs_device_get(&rd->dev) : NULL;
		cfsd_unlock();
	}
	if (d && dev_at(d, dir))
		return d;
	classfs_device_put(d);
	return NULL;
}

/*
 * The device whose directory is @dir (below the root), inside that of
 * @up, referenced, or NULL when it is none's.  A device's directory holds
 * its computed `uevent`; it is found by name where such a directory can
 * be: a nested child (@up's class), a class device in a glue directory
 * named after its class (the devices layout), a physical child.  Only
 * what none of those is (a record's physical device, a class device of
 * another class below a class device) costs a walk of every device.
 */
static struct classfs_device *dir_device(struct classfs_device *up, const char *dir)
{
	struct dir_dev_ctx x = { .dir = dir };
	const char *slash = strrchr(dir, '/');
	char uevent[CFS_PATH_MAX * 2 + sizeof("/uevent")], glue[256] = "";
	struct classfs_class *cls;
	struct classfs_stat st;
	struct classfs_device *d;

	snprintf(uevent, sizeof(uevent), "%s/uevent", dir);
	if (classfs_path_stat(cfsd.tree, uevent, &st) < 0 || st.type != CLASSFS_FT_REG)
		return NULL;
	x.name = slash ? slash + 1 : dir;
	if (up->cls && (d = candidate(up->cls, x.name, dir)))
		return d;
	if (slash) {
		const char *g = slash;

		while (g > dir && g[-1] != '/')
			g--;
		snprintf(glue, sizeof(glue), "%.*s", (int)(slash - g), g);
	}
	cls = glue[0] ? classfs_class_find(cfsd.tree, glue) : NULL;
	d = cls ? candidate(cls, x.name, dir) : NULL;
	classfs_class_put(cls);
	if (d || (d = candidate(NULL, x.name, dir)))
		return d;
	/* match_dir() reads every device's name: no RENAME meanwhile */
	cfsd_lock();
	classfs_tree_for_each_device(cfsd.tree, match_dir, &x);
	cfsd_unlock();
	return x.found;
}

/**
 * cfsd_file_owner() - whose file does an attribute path name?
 * @dev: the device the client named.
 * @path: the file's path below the root; it ends with @attr.
 * @attr: the attribute path the client gave, below @dev's directory.
 * @owner: in: @dev's owner; out: the owner of the device holding the file.
 * @who: receives that device's "CLASS/NAME" when it is another.
 * @whosz: its size.
 *
 * An attribute path may lead into another device's directory: a nested
 * child's (`C/pub`) or, through a link (`subsystem/`, `device/`),
 * anywhere.  The checks must be those of the device that holds the file,
 * the deepest device directory on the way.  Called without cfsd.lock.
 * Return: 0; 1 when the path passes through a link (the file is then
 * not the device's, nor any known one's); -errno when a component cannot
 * be resolved.
 */
int cfsd_file_owner(struct classfs_device *dev, char *path, const char *attr, uid_t *owner,
		    char *who, size_t whosz)
{
	size_t base = strlen(path) - strlen(attr);
	struct classfs_device *up = classfs_device_get(dev);
	struct classfs_stat st;
	int r = 0;

	for (char *p = path + base; r == 0 && (p = strchr(p, '/')); p++) {
		struct classfs_device *d;

		*p = '\0';
		r = classfs_path_stat(cfsd.tree, path, &st);
		if (r == 0 && st.type == CLASSFS_FT_LNK)
			r = 1;
		else if (r == 0 && (d = dir_device(up, path))) {
			const char *n;

			/* a RENAME (under cfsd.lock) frees the name: copied out under it */
			cfsd_lock();
			*owner = cfsd_dev_owner(d);
			n = classfs_device_name(d);
			snprintf(who, whosz, "%s%s%.255s", d->cls ? d->cls->name : "",
				 d->cls ? "/" : "", n ? n : "?");
			cfsd_unlock();
			classfs_device_put(up);
			up = d;
		}
		*p = '/';
	}
	classfs_device_put(up);
	return r;
}

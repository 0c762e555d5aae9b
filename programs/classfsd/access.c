// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * access.c - whose a device, and whose a file, is: the owner and mode
 * checks are those of the device that holds the file, whatever path a
 * client names it by.
 */
#include <stdio.h>
#include <string.h>

#include "daemon.h"

/**
 * cfsd_dev_owner() - the uid that owns @dev: its publisher's, or root's
 * for a device no client published (the record loader's)
 *
 * Called with D.lock held.
 */
uid_t cfsd_dev_owner(const struct classfs_device *dev)
{
	const char *n = classfs_device_name(dev);
	struct rdev *rd = n ? cfsd_dev_lookup(dev->cls ? dev->cls->name : NULL, n) : NULL;

	return rd && &rd->dev == dev ? rd->o.owner : 0;
}

struct dir_dev_ctx {
	const char *dir;	/* "class/x/y": the directory, below the root */
	const char *name;	/* its last component */
	struct classfs_device *found;
};

static int match_dir(struct classfs_device *dev, void *data)
{
	struct dir_dev_ctx *x = data;
	const char *n = classfs_device_name(dev);
	char dp[CFS_PATH_MAX * 2];

	if (!n || strcmp(n, x->name) || classfs_device_devpath(dev, dp, sizeof(dp)) < 0 ||
	    strcmp(dp + 1, x->dir))
		return 0;
	x->found = classfs_device_get(dev);
	return 1;
}

/*
 * The device whose directory is @dir (below the root), referenced, or
 * NULL when it is none's.  A device's directory holds its computed
 * `uevent`: only such directories (and group directories that happen to
 * hold an attribute of that name) cost the walk.
 */
static struct classfs_device *dir_device(const char *dir)
{
	struct dir_dev_ctx x = { .dir = dir };
	const char *slash = strrchr(dir, '/');
	char uevent[CFS_PATH_MAX * 2 + sizeof("/uevent")];
	struct classfs_stat st;

	snprintf(uevent, sizeof(uevent), "%s/uevent", dir);
	if (classfs_path_stat(D.tree, uevent, &st) < 0 || st.type != CLASSFS_FT_REG)
		return NULL;
	x.name = slash ? slash + 1 : dir;
	classfs_tree_for_each_device(D.tree, match_dir, &x);
	return x.found;
}

/**
 * cfsd_file_owner() - whose file is @path, the attribute path @attr of a
 * device owned by *@owner?
 * @path: the file's path below the root; its end is @attr.
 * @attr: the attribute path the client gave.
 * @owner: in: the owner of the device the client named; out: that of the
 *         device holding the file.
 * @who: receives that device's "CLASS/NAME" when it is another.
 * @whosz: its size.
 *
 *  A client names an attribute below the device's directory,
 * and that may lead into another device's: a nested child's (`C/pub`)
 * or, through a link (`subsystem/`, `device/`), anywhere.  The checks
 * must be those of the device that holds the file: the deepest
 * device directory on the way.  Return: 0, 1 when the path passes through a link (the
 * file is then not the device's, nor any known one's), -errno when a
 * component cannot be resolved.  Called without D.lock.
 */
int cfsd_file_owner(char *path, const char *attr, uid_t *owner, char *who, size_t whosz)
{
	size_t base = strlen(path) - strlen(attr);
	struct classfs_stat st;
	int r = 0;

	for (char *p = path + base; r == 0 && (p = strchr(p, '/')); p++) {
		struct classfs_device *d;

		*p = '\0';
		r = classfs_path_stat(D.tree, path, &st);
		if (r == 0 && st.type == CLASSFS_FT_LNK)
			r = 1;
		else if (r == 0 && (d = dir_device(path))) {
			const char *n = classfs_device_name(d);

			pthread_mutex_lock(&D.lock);
			*owner = cfsd_dev_owner(d);
			pthread_mutex_unlock(&D.lock);
			snprintf(who, whosz, "%s%s%.255s", d->cls ? d->cls->name : "",
				 d->cls ? "/" : "", n ? n : "?");
			classfs_device_put(d);
		}
		*p = '/';
	}
	return r;
}

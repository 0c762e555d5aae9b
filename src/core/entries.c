// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * entries.c - the names of a device's computed entries (view.c) are
 * unique.  `uevent`, `dev`, `subsystem`, `device` where the device has
 * them, the attributes of its class's and type's unnamed groups and the
 * directories of their named groups share one directory; the attributes
 * of a named group share its directory.  sysfs refuses a second entry of
 * one name (sysfs_warn_dup(), -EEXIST); so does device add, before
 * anything is published.  A directory listing two entries of one name
 * would be saved as a record no load accepts.
 */
#include "internal.h"

#define NAMES_SHOWN 512	/* entries a directory computes at most (view.c) */
#define NAMES_MAX 1024	/* slots: twice that */

struct names {
	const char *v[NAMES_MAX];
	uint32_t h[NAMES_MAX];
	unsigned int mask, n;
};

/* room for @n names, at most half full */
static void names_init(struct names *s, unsigned int n)
{
	unsigned int size = 16;

	while (size < 2 * n && size < NAMES_MAX)
		size *= 2;
	s->mask = size - 1;
	s->n = 0;
	memset(s->v, 0, size * sizeof(s->v[0]));
}

/*
 * Add @name: -EEXIST when it is there already, -EINVAL when it is no
 * name.  Past the entries a directory shows, names are not entries.
 */
static int names_add(struct names *s, const char *name)
{
	uint32_t h;
	unsigned int i;

	if (s->n == NAMES_SHOWN)
		return 0;
	if (!name || classfs_name_valid(name) < 0)
		return -EINVAL;
	h = cfs_hash_name(name);
	for (i = h & s->mask; s->v[i]; i = (i + 1) & s->mask)
		if (s->h[i] == h && !strcmp(s->v[i], name))
			return -EEXIST;
	s->v[i] = name;
	s->h[i] = h;
	s->n++;
	return 0;
}

static unsigned int count(const void *const *v)
{
	unsigned int n = 0;

	while (v && v[n])
		n++;
	return n;
}

static unsigned int group_count(const struct classfs_attribute_group *grp)
{
	return count((const void *const *)grp->attrs) + count((const void *const *)grp->bin_attrs);
}

/* the attributes of @grp into @s, as many as a group shows (0xFF) */
static int names_add_group(struct names *s, const struct classfs_attribute_group *grp)
{
	unsigned int k = 0;
	int r;

	for (const struct classfs_device_attribute *const *a = grp->attrs; a && *a && k < 0xFF;
	     a++, k++)
		if ((r = names_add(s, (*a)->attr.name)) < 0)
			return r;
	for (const struct classfs_bin_attribute *const *b = grp->bin_attrs; b && *b && k < 0xFF;
	     b++, k++)
		if ((r = names_add(s, (*b)->attr.name)) < 0)
			return r;
	return 0;
}

/**
 * cfs_device_names_check() - are the computed entries of @dev, about to
 * be added, distinct, with valid names?  Its groups are read without a
 * lock: a type's and a class's groups do not change while devices use them.
 * Return: 0; -EEXIST when two have one name (an attribute named like an
 * entry the tree makes, two attributes or an attribute and a group of one
 * name); -EINVAL when an attribute or group has an invalid name; -ENOMEM.
 */
int cfs_device_names_check(const struct classfs_device *dev)
{
	const struct classfs_attribute_group *grp;
	struct names *s;
	unsigned int n = 4, g;
	int r = 0;

	if (!cfs_vgroup(dev, 1))
		return 0;	/* the fixed entries alone are distinct */
	for (g = 1; (grp = cfs_vgroup(dev, g)); g++)
		n += grp->name ? 1 : group_count(grp);
	s = cfs_malloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	names_init(s, n);
	names_add(s, "uevent");
	if (major(dev->devt))
		names_add(s, "dev");
	if (dev->cls || dev->bus)
		names_add(s, "subsystem");
	if (dev->cls && dev->phys)
		names_add(s, "device");
	for (g = 1; !r && (grp = cfs_vgroup(dev, g)) && g < 15; g++)
		r = grp->name ? names_add(s, grp->name) : names_add_group(s, grp);
	/* each named group's own directory */
	for (g = 1; !r && (grp = cfs_vgroup(dev, g)) && g < 15; g++) {
		if (!grp->name)
			continue;
		names_init(s, group_count(grp));
		r = names_add_group(s, grp);
	}
	cfs_free(s);
	return r;
}

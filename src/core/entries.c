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

#define NAMES_SMALL 64	/* slots on the stack: devices with up to 32 entries */

/* open addressing on the names' hashes, at most half full */
struct names {
	const char **v;
	uint32_t *h;
	unsigned int mask, n, cap;
	const char *v_small[NAMES_SMALL];
	uint32_t h_small[NAMES_SMALL];
};

/* room for directories of up to @n names: 0 or -ENOMEM */
static int names_alloc(struct names *s, unsigned int n)
{
	unsigned int size = 16;

	if (n > CFS_MAX_COMPUTED)
		n = CFS_MAX_COMPUTED;
	while (size < 2 * n)
		size *= 2;
	s->cap = size;
	if (size <= NAMES_SMALL) {
		s->v = s->v_small;
		s->h = s->h_small;
		return 0;
	}
	s->v = cfs_malloc(size * (sizeof(*s->v) + sizeof(*s->h)));
	if (!s->v)
		return -ENOMEM;
	s->h = (uint32_t *)(s->v + size);
	return 0;
}

static void names_free(struct names *s)
{
	if (s->v != s->v_small)
		cfs_free(s->v);
}

/* empty, for a directory of @n names */
static void names_init(struct names *s, unsigned int n)
{
	unsigned int size = 16;

	while (size < 2 * n && size < s->cap)
		size *= 2;
	s->mask = size - 1;
	s->n = 0;
	memset(s->v, 0, size * sizeof(s->v[0]));
}

/* add @name of hash @h: -EEXIST when it is there already */
static int names_add_hashed(struct names *s, const char *name, uint32_t h)
{
	unsigned int i;

	for (i = h & s->mask; s->v[i]; i = (i + 1) & s->mask)
		if (s->h[i] == h && !strcmp(s->v[i], name))
			return -EEXIST;
	s->v[i] = name;
	s->h[i] = h;
	s->n++;
	return 0;
}

/*
 * Add @name: -EEXIST when it is there already, -EINVAL when it is no
 * name.  Past the entries a directory shows, names are not entries.
 */
static int names_add(struct names *s, const char *name)
{
	uint32_t h;

	if (s->n == CFS_MAX_COMPUTED)
		return 0;
	if (cfs_name_hash_valid(name, &h) < 0)
		return -EINVAL;
	return names_add_hashed(s, name, h);
}

/* the entries the tree makes, their hashes computed once */
static const char *const fixed_names[] = { "uevent", "dev", "subsystem", "device" };
static uint32_t fixed_hash[4];

static void names_add_fixed(struct names *s, unsigned int k)
{
	uint32_t h = __atomic_load_n(&fixed_hash[k], __ATOMIC_RELAXED);

	if (!h) {
		h = cfs_hash_name(fixed_names[k]);
		__atomic_store_n(&fixed_hash[k], h, __ATOMIC_RELAXED);
	}
	names_add_hashed(s, fixed_names[k], h);
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

/* the attributes of @grp into @s, as many as a group shows */
static int names_add_group(struct names *s, const struct classfs_attribute_group *grp)
{
	unsigned int k = 0;
	int r;

	for (const struct classfs_device_attribute *const *a = grp->attrs; a && *a && k < CFS_GROUP_MAX_ATTRS;
	     a++, k++)
		if ((r = names_add(s, (*a)->attr.name)) < 0)
			return r;
	for (const struct classfs_bin_attribute *const *b = grp->bin_attrs; b && *b && k < CFS_GROUP_MAX_ATTRS;
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
	const struct classfs_attribute_group *grp[CFS_MAX_VGROUPS];
	unsigned int count[CFS_MAX_VGROUPS], ng = 0, n = 4, most = 0, g;
	struct names names, *s = &names;
	int r = 0;

	while (ng < CFS_MAX_VGROUPS && (grp[ng] = cfs_vgroup(dev, ng + 1))) {
		count[ng] = group_count(grp[ng]);
		n += grp[ng]->name ? 1 : count[ng];
		if (grp[ng]->name && count[ng] > most)
			most = count[ng];
		ng++;
	}
	if (!ng)
		return 0;	/* the fixed entries alone are distinct */
	if (names_alloc(s, n > most ? n : most) < 0)
		return -ENOMEM;
	names_init(s, n);
	names_add_fixed(s, 0);
	if (major(dev->devt))
		names_add_fixed(s, 1);
	if (dev->cls || dev->bus)
		names_add_fixed(s, 2);
	if (dev->cls && dev->phys)
		names_add_fixed(s, 3);
	for (g = 0; !r && g < ng; g++)
		r = grp[g]->name ? names_add(s, grp[g]->name) : names_add_group(s, grp[g]);
	/* each named group's own directory */
	for (g = 0; !r && g < ng; g++) {
		if (!grp[g]->name)
			continue;
		names_init(s, count[g]);
		r = names_add_group(s, grp[g]);
	}
	names_free(s);
	return r;
}

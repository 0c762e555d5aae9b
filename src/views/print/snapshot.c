// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * snapshot.c - what every printer prints from: the tree's classes and
 * devices, taken with the core's walkers (a reference on each, no lock
 * held while we look at them), linked into sorted sibling lists.
 *
 * Names come from each device's DEVPATH, copied under the tree's lock by
 * classfs_device_devpath(): a concurrent rename can then never leave us
 * a freed name.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "print-internal.h"

static int push_class(struct classfs_class *cls, void *data)
{
	struct cfs_psnap *s = data;

	if (s->ncls == s->clscap) {
		size_t cap = s->clscap ? 2 * s->clscap : 16;
		struct cfs_pclass *c = realloc(s->cls, cap * sizeof(*c));
		struct classfs_class **r;

		if (!c)
			return -ENOMEM;
		s->cls = c;
		r = realloc(s->clsref, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		s->clsref = r;
		s->clscap = cap;
	}
	s->clsref[s->ncls] = classfs_class_get(cls);
	s->cls[s->ncls++] = (struct cfs_pclass){ .name = cls->name, .first = CFS_NONE };
	return 0;
}

static int push_device(struct classfs_device *dev, void *data)
{
	struct cfs_psnap *s = data;
	char path[4096];
	struct cfs_pdev *d;
	int r;

	r = classfs_device_devpath(dev, path, sizeof(path));
	if (r == -EINVAL)
		return 0;	/* removed since the walk began: not printed */
	if (r < 0)
		return r;
	if (s->ndev == s->devcap) {
		size_t cap = s->devcap ? 2 * s->devcap : 64;
		struct cfs_pdev *v = realloc(s->dev, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->dev = v;
		s->devcap = cap;
	}
	d = &s->dev[s->ndev];
	*d = (struct cfs_pdev){
		.devpath = strdup(path),
		.cls = dev->cls ? dev->cls->name : NULL,
		.bus = dev->bus ? dev->bus->name : NULL,
		.parent = CFS_NONE, .phys = CFS_NONE, .child = CFS_NONE, .next = CFS_NONE,
		.has_devt = major(dev->devt) != 0,
		.major = major(dev->devt),
		.minor = minor(dev->devt),
	};
	if (dev->type && dev->type->name)
		d->devtype = strdup(dev->type->name);
	if (classfs_device_syspath(dev, path, sizeof(path)) >= 0)
		d->syspath = strdup(path);
	if (!d->devpath || (dev->type && dev->type->name && !d->devtype) || !d->syspath) {
		free(d->devpath);
		free((char *)d->devtype);
		free(d->syspath);
		return -ENOMEM;
	}
	d->name = strrchr(d->devpath, '/') + 1;
	d->dev = classfs_device_get(dev);
	s->ndev++;
	return 0;
}

/* device pointer -> snapshot index, by binary search over sorted pointers */
struct ptr_idx {
	const struct classfs_device *dev;
	size_t i;
};

static int cmp_ptr(const void *a, const void *b)
{
	const struct ptr_idx *x = a, *y = b;

	return x->dev < y->dev ? -1 : x->dev > y->dev;
}

static size_t find_dev(const struct ptr_idx *map, size_t n, const struct classfs_device *dev)
{
	struct ptr_idx key = { .dev = dev };
	const struct ptr_idx *hit;

	if (!dev)
		return CFS_NONE;
	hit = bsearch(&key, map, n, sizeof(*map), cmp_ptr);
	return hit ? hit->i : CFS_NONE;
}

static int cmp_class(const void *a, const void *b)
{
	const struct cfs_pclass *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static __thread const struct cfs_psnap *tl_snap;

static int cmp_name(const void *a, const void *b)
{
	const struct cfs_pdev *x = &tl_snap->dev[*(const size_t *)a];
	const struct cfs_pdev *y = &tl_snap->dev[*(const size_t *)b];
	int r = strcmp(x->name, y->name);

	return r ? r : strcmp(x->devpath, y->devpath);
}

bool cfs_psnap_is_root(const struct cfs_psnap *s, size_t i)
{
	const struct cfs_pdev *d = &s->dev[i];

	if (d->parent == CFS_NONE)
		return true;
	/* a physical device below a class device heads a list of its own */
	return !d->cls && s->dev[d->parent].cls;
}

/* link every device into its parent's, its class's or the physical list */
static int link_lists(struct cfs_psnap *s)
{
	size_t *order = malloc((s->ndev ? s->ndev : 1) * sizeof(*order));

	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < s->ndev; i++)
		order[i] = i;
	tl_snap = s;
	if (s->ndev)
		qsort(order, s->ndev, sizeof(*order), cmp_name);
	tl_snap = NULL;
	/* prepending in reverse order leaves every list sorted */
	for (size_t k = s->ndev; k-- > 0;) {
		size_t i = order[k];
		struct cfs_pdev *d = &s->dev[i];
		size_t *head;

		if (!cfs_psnap_is_root(s, i)) {
			head = &s->dev[d->parent].child;
		} else if (!d->cls) {
			head = &s->phys_first;
		} else {
			struct cfs_pclass key = { .name = d->cls }, *c;

			c = s->ncls ? bsearch(&key, s->cls, s->ncls, sizeof(key), cmp_class) : NULL;
			if (!c)
				continue;	/* its class went away meanwhile */
			head = &c->first;
		}
		d->next = *head;
		*head = i;
	}
	free(order);
	return 0;
}

static int resolve(struct cfs_psnap *s)
{
	struct ptr_idx *map = malloc((s->ndev ? s->ndev : 1) * sizeof(*map));
	int r;

	if (!map)
		return -ENOMEM;
	for (size_t i = 0; i < s->ndev; i++)
		map[i] = (struct ptr_idx){ s->dev[i].dev, i };
	if (s->ndev)
		qsort(map, s->ndev, sizeof(*map), cmp_ptr);
	for (size_t i = 0; i < s->ndev; i++) {
		s->dev[i].parent = find_dev(map, s->ndev, s->dev[i].dev->parent);
		s->dev[i].phys = find_dev(map, s->ndev, s->dev[i].dev->phys);
	}
	free(map);
	if (s->ncls)	/* qsort() and bsearch() want a non-NULL array */
		qsort(s->cls, s->ncls, sizeof(*s->cls), cmp_class);
	r = link_lists(s);
	return r;
}

int cfs_psnap_take(struct classfs_tree *tree, struct cfs_psnap *s)
{
	int r;

	*s = (struct cfs_psnap){ .tree = tree, .phys_first = CFS_NONE };
	r = classfs_tree_for_each_class(tree, push_class, s);
	if (r == 0)
		r = classfs_tree_for_each_device(tree, push_device, s);
	if (r == 0)
		r = resolve(s);
	if (r) {
		cfs_psnap_free(s);
		return r < 0 ? r : -EIO;
	}
	return 0;
}

void cfs_psnap_free(struct cfs_psnap *s)
{
	for (size_t i = 0; i < s->ndev; i++) {
		free(s->dev[i].devpath);
		free(s->dev[i].syspath);
		free((char *)s->dev[i].devtype);
		classfs_device_put(s->dev[i].dev);
	}
	for (size_t i = 0; i < s->ncls; i++)
		classfs_class_put(s->clsref[i]);
	free(s->dev);
	free(s->cls);
	free(s->clsref);
	*s = (struct cfs_psnap){ .phys_first = CFS_NONE };
}

void cfs_pdev_devt(const struct cfs_pdev *d, char *buf, size_t size)
{
	if (d->has_devt)
		snprintf(buf, size, "%u:%u", d->major, d->minor);
	else if (size)
		buf[0] = '\0';
}

int cfs_print_finish(FILE *out)
{
	if (fflush(out) || ferror(out))
		return -EIO;
	return 0;
}

/**
 * classfs_tree_print() - print every class and device of @tree
 * @tree: the tree.
 * @fmt: text, JSON or DOT.
 * @out: where to print.
 *
 * Return: 0, -EINVAL, -ENOMEM, -EIO.
 */
int classfs_tree_print(struct classfs_tree *tree, enum classfs_print_format fmt, FILE *out)
{
	struct cfs_psnap s;
	int r;

	if (!tree || !out || (unsigned int)fmt > CLASSFS_PRINT_DOT)
		return -EINVAL;
	r = cfs_psnap_take(tree, &s);
	if (r)
		return r;
	switch (fmt) {
	case CLASSFS_PRINT_TEXT:
		r = cfs_print_text(&s, out);
		break;
	case CLASSFS_PRINT_JSON:
		r = cfs_print_json(&s, out);
		break;
	case CLASSFS_PRINT_DOT:
		r = cfs_print_dot(&s, out);
		break;
	}
	cfs_psnap_free(&s);
	return r;
}

/**
 * classfs_device_print_info() - print what is known about one device
 * @dev: the device.
 * @fmt: text, JSON or DOT.
 * @out: where to print.
 *
 * Return: 0, -EINVAL, -ENOMEM, -EIO.
 */
int classfs_device_print_info(struct classfs_device *dev, enum classfs_print_format fmt,
			      FILE *out)
{
	if (!dev || !out || !classfs_device_is_added(dev) || (unsigned int)fmt > CLASSFS_PRINT_DOT)
		return -EINVAL;
	if (fmt == CLASSFS_PRINT_DOT)
		return cfs_print_info_dot(dev, out);
	return cfs_print_info(dev, fmt, out);
}

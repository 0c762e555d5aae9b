// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * link.c - where each recorded device goes.  In a `devices` layout tree:
 * at its path, attached to the nearest device above it (link_exact()).
 * In the class layout: its nesting parent (a class device of the same
 * class at the parent path), its physical parent (the device at the
 * parent path, past a glue directory named after the class), unrecorded
 * ancestors made as plain physical devices.  Both: devices already in the
 * tree; and the build order, parents first.
 */
#include "record-internal.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void cfs_rec_warn(struct rec_load *l, unsigned long line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!l->opt || !l->opt->warning)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	l->opt->warning(l->p.file, line, msg, l->opt->warning_data);
}

size_t cfs_rec_parent_len(const char *path, size_t len)
{
	while (len && path[len - 1] != '/')
		len--;
	return len ? len - 1 : 0;
}

static bool is_path(const char *path, size_t len, const char *what)
{
	return strlen(what) == len && !memcmp(path, what, len);
}

/*
 * A parent is most often recorded right before its children (parents
 * first) or right after (umockdev: the device, then its parents): those
 * neighbours of the device being linked are compared before the hash
 * index is probed, a cache miss per lookup in a large record.
 */
static uint32_t lookup_near(const struct rec_load *l, const char *path, size_t len)
{
	static const int near[] = { -1, 1, -2, 2 };

	for (size_t k = 0; k < sizeof(near) / sizeof(near[0]); k++) {
		size_t i = l->linking + (size_t)(ptrdiff_t)near[k];
		const struct rec_pdev *d;

		if (i >= l->p.ndevs)
			continue;
		d = &l->p.devs[i];
		if (d->pathlen == len && !memcmp(d->path, path, len))
			return (uint32_t)i;
	}
	return cfs_rec_lookup(&l->p, path, len);
}

/*
 * cfs_rec_lookup_tree() - the record's device at @path, or the tree's device there (when the
 * record may share paths with the tree: see may_overlap()), which joins
 * the index as an existing device.  REC_NONE: neither; REC_NONE - 1: no
 * memory (l->p.devs may have moved either way).
 */
uint32_t cfs_rec_lookup_tree(struct rec_load *l, const char *path, size_t len)
{
	uint32_t idx = lookup_near(l, path, len);
	struct classfs_device *dev, **v;
	struct rec_pdev *d;
	struct rec_dev *rd;
	char *copy;

	if (idx != REC_NONE || !l->overlap)
		return idx;
	copy = strndup(path, len);
	if (!copy)
		return REC_NONE - 1;
	dev = classfs_tree_find_device(l->tree, copy);
	if (!dev) {
		free(copy);
		return REC_NONE;
	}
	if (l->existing.n == l->existing.cap) {
		size_t cap = l->existing.cap ? 2 * l->existing.cap : 16;

		v = realloc(l->existing.v, cap * sizeof(*v));
		if (!v)
			goto nomem;
		l->existing.v = v;
		l->existing.cap = cap;
	}
	idx = cfs_rec_add_placeholder(&l->p, copy, len);
	if (idx == REC_NONE)
		goto nomem;
	l->existing.v[l->existing.n++] = dev;	/* the reference: put at the end */
	rd = cfs_rec_of(dev);
	d = &l->p.devs[idx];
	d->path = copy;		/* freed as existing */
	d->existing = true;
	d->dev = dev;
	d->kind = dev->cls ? REC_CLASS : dev->bus ? REC_BUS : REC_PLAIN;
	d->subsys = cfs_rec_subsystem(dev);
	d->subsyslen = d->subsys ? (uint32_t)strlen(d->subsys) : 0;
	d->placeholder = rd && (rd->flags & REC_F_PLACEHOLDER);
	d->vroot = !dev->cls && !dev->bus && !dev->parent && len > 17 &&
		   !memcmp(path, "/devices/virtual/", 17);
	return idx;
nomem:
	classfs_device_put(dev);
	free(copy);
	return REC_NONE - 1;
}

/*
 * The device at @path, made as an unrecorded plain device when missing.
 * Right below /devices/virtual that is the root of a bus Linux registers
 * with subsys_virtual_register() (/devices/virtual/workqueue, which
 * umockdev-record does not record: it has no subsystem), its devices
 * below it.  /devices/virtual itself is no device.
 */
static uint32_t ensure(struct rec_load *l, const char *path, size_t len, uint32_t lineno)
{
	uint32_t idx = cfs_rec_lookup_tree(l, path, len), up = REC_NONE;
	size_t plen;

	if (idx == REC_NONE - 1)
		return REC_NONE;	/* no memory */
	if (idx != REC_NONE)
		return idx;
	if (is_path(path, len, "/devices/virtual")) {
		cfs_rec_error(&l->p, lineno, "/devices/virtual is not a device");
		return REC_NONE - 1;
	}
	plen = cfs_rec_parent_len(path, len);
	if (is_path(path, plen, "/devices/virtual")) {
		idx = cfs_rec_add_placeholder(&l->p, path, len);
		if (idx == REC_NONE)
			return REC_NONE;
		l->p.devs[idx].vroot = true;
		l->p.devs[idx].lineno = lineno;
		l->p.devs[idx].depth = 3;
		return idx;
	}
	if (!is_path(path, plen, "/devices")) {
		up = ensure(l, path, plen, lineno);
		if (up >= REC_NONE - 1)
			return up;
	}
	idx = cfs_rec_add_placeholder(&l->p, path, len);
	if (idx == REC_NONE)
		return REC_NONE;
	l->p.devs[idx].up = up;
	l->p.devs[idx].parent = up;
	l->p.devs[idx].lineno = lineno;
	for (size_t i = 0; i < len; i++)
		l->p.devs[idx].depth += path[i] == '/';
	return idx;
}

/* is @path's first @len bytes a directory below /devices/virtual/CLASS/, @d's class? */
static bool own_virtual_dir(const struct rec_pdev *d, const char *path, size_t len)
{
	return len > 17 + d->subsyslen && !memcmp(path, "/devices/virtual/", 17) &&
	       !memcmp(path + 17, d->subsys, d->subsyslen) && path[17 + d->subsyslen] == '/';
}

/* class device @d's parent, the first @plen bytes of its path, can be no device */
static int parent_unrecorded(struct rec_load *l, uint32_t lineno, const struct rec_pdev *d,
			     size_t plen)
{
	return cfs_rec_error(&l->p, lineno, "parent %.*s of %.*s is neither recorded nor in the "
			     "tree, and a physical device cannot be under /devices/virtual/%.*s",
			     (int)plen, d->path, (int)d->pathlen, d->path, (int)d->subsyslen,
			     d->subsys);
}

/* decide parent and physical parent of recorded device @i */
static int link_dev(struct rec_load *l, uint32_t i)
{
	struct rec_pdev *d = &l->p.devs[i];
	const char *path = d->path;
	size_t plen = cfs_rec_parent_len(path, d->pathlen);
	uint32_t lineno = d->lineno, cand;

	l->linking = i;

	if (is_path(path, plen, "/devices")) {
		/* a class device has no place right below /devices */
		d->misplaced = d->kind == REC_CLASS;
		return 0;
	}
	if (d->kind != REC_CLASS && is_path(path, plen, "/devices/virtual")) {
		/* the root of a virtual bus, recorded: a plain device, as in Linux */
		if (d->kind == REC_PLAIN) {
			d->vroot = true;
			return 0;
		}
		return cfs_rec_error(&l->p, lineno, "bus device %.*s right below /devices/virtual: "
				     "a virtual bus's devices are below its root "
				     "(/devices/virtual/BUS/NAME)", (int)d->pathlen, path);
	}
	if (d->kind != REC_CLASS) {
		cand = ensure(l, path, plen, lineno);
		if (cand >= REC_NONE - 1)
			return cand == REC_NONE ? -ENOMEM : -EINVAL;
		d = &l->p.devs[i];
		d->up = d->parent = cand;
		return 0;
	}
	cand = cfs_rec_lookup_tree(l, path, plen);
	if (cand == REC_NONE - 1)
		return -ENOMEM;
	d = &l->p.devs[i];
	if (cand != REC_NONE && l->p.devs[cand].placeholder && own_virtual_dir(d, path, plen))
		return parent_unrecorded(l, lineno, d, plen);
	if (cand != REC_NONE) {
		struct rec_pdev *c = &l->p.devs[cand];

		if (c->vroot && c->subsyslen == 0 && plen - 17 == d->subsyslen &&
		    !memcmp(path + 17, d->subsys, d->subsyslen))
			return cfs_rec_error(&l->p, lineno, "%.*s is both a device and the '%.*s' "
					     "glue directory of %.*s", (int)plen, path,
					     (int)d->subsyslen, d->subsys, (int)d->pathlen, path);
		if (c->kind == REC_CLASS && c->subsyslen == d->subsyslen &&
		    !memcmp(c->subsys, d->subsys, d->subsyslen))
			d->parent = cand;
		else
			d->phys = cand;
		d->up = cand;
		/* a class device right below a physical device has a glue directory */
		d->misplaced = c->kind != REC_CLASS;
		return 0;
	}
	/* the parent path is a directory: a glue directory named after the class */
	{
		size_t glen = cfs_rec_parent_len(path, plen);
		const char *glue = path + glen + 1;
		bool glued = plen - glen - 1 == d->subsyslen &&
			     !memcmp(glue, d->subsys, d->subsyslen);

		if (is_path(path, glen, "/devices/virtual")) {
			d->misplaced = !glued;
			return 0;
		}
		if (!glued) {
			glen = plen;	/* no glue: the parent path is the physical device */
			d->misplaced = true;
		}
		if (is_path(path, glen, "/devices")) {
			d->misplaced = true;
			return 0;
		}
		/*
		 * In its own class's glue directory in /devices/virtual
		 * (virtual/block/loop9/loop9p1) the parent can only be a class
		 * device, and none is recorded or in the tree: not the root
		 * of a virtual bus named like the class, nor an unrecorded
		 * ancestor that another device of the record (or of an
		 * earlier one) made there, which a save does not keep: the
		 * record would load or not depending on its devices' order.
		 */
		if (own_virtual_dir(d, path, glen)) {
			cand = cfs_rec_lookup_tree(l, path, glen);
			if (cand == REC_NONE - 1)
				return -ENOMEM;
			d = &l->p.devs[i];
			if (cand == REC_NONE || l->p.devs[cand].placeholder)
				return parent_unrecorded(l, lineno, d, glen);
		}
		cand = ensure(l, path, glen, lineno);
		if (cand >= REC_NONE - 1)
			return cand == REC_NONE ? -ENOMEM : -EINVAL;
		d = &l->p.devs[i];
		if (l->p.devs[cand].kind == REC_CLASS && glued)
			d->misplaced = true;	/* below a class device: no glue */
		d->glued = glued && !d->misplaced;
		d->phys = d->up = cand;
	}
	return 0;
}

/*
 * A `devices` layout tree takes each device at its recorded path
 * (classfs_device_add_at()): its parent is the nearest device above that
 * path, recorded or in the tree; the directories between are plain ones.
 * A class device is nested in a class device of its class, has any other
 * device as its physical device.  Nothing is made for unrecorded paths.
 */
static int link_exact(struct rec_load *l, uint32_t i)
{
	const char *path = l->p.devs[i].path;
	size_t len = l->p.devs[i].pathlen;
	uint32_t cand = REC_NONE;
	struct rec_pdev *d, *c;

	l->linking = i;
	while (cand == REC_NONE && (len = cfs_rec_parent_len(path, len)) > 8) {
		cand = cfs_rec_lookup_tree(l, path, len);
		if (cand == REC_NONE - 1)
			return -ENOMEM;
	}
	d = &l->p.devs[i];
	d->up = cand;
	if (cand == REC_NONE)
		return 0;
	c = &l->p.devs[cand];
	if (d->kind != REC_CLASS || (c->kind == REC_CLASS && c->subsyslen == d->subsyslen &&
				     !memcmp(c->subsys, d->subsys, d->subsyslen)))
		d->parent = cand;
	else
		d->phys = cand;
	return 0;
}

/*
 * A recorded device at a plain directory of the tree fills it in, and
 * what the directory holds stays below it (classfs_device_add_at()): its
 * recorded attributes and links may not take names the directory holds.
 * Checked before anything is built; a failed load gives the directory
 * back (load.c, unfill()).
 */
static int check_fill(struct rec_load *l, uint32_t i)
{
	struct rec_pdev *d = &l->p.devs[i];
	struct classfs_stat st;
	char *path = l->scratch;

	if (d->pathlen + 2 > sizeof(l->scratch))
		return 0;
	memcpy(path, d->path + 1, d->pathlen - 1);
	path[d->pathlen - 1] = '\0';
	if (classfs_path_stat(l->tree, path, &st) < 0 || st.type != CLASSFS_FT_DIR)
		return 0;
	d->fills = true;
	for (uint32_t k = 0; k < d->nlines; k++) {
		const struct rec_line *ln = &l->p.lines[d->first + k];

		if ((ln->tag != 'A' && ln->tag != 'H' && ln->tag != 'L') ||
		    d->pathlen + 1 + ln->keylen + 1 > sizeof(l->scratch))
			continue;
		path[d->pathlen - 1] = '/';
		memcpy(path + d->pathlen, cfs_rec_key(&l->p, ln), ln->keylen);
		path[d->pathlen + ln->keylen] = '\0';
		if (classfs_path_stat(l->tree, path, &st) == 0) {
			cfs_rec_error(&l->p, cfs_rec_lineno(&l->p, d, ln), "'%.*s' of %.*s: the plain "
				      "directory there holds one: File exists", (int)ln->keylen,
				      cfs_rec_key(&l->p, ln), (int)d->pathlen, d->path);
			return -EEXIST;
		}
		path[d->pathlen - 1] = '\0';
	}
	return 0;
}

/*
 * A glue directory is no device.  A record where one path is both is
 * refused, as sysfs refuses a second directory of one name: the class
 * device .../0:0:0:0/block/sda1 says .../0:0:0:0/block is its glue
 * directory, and .../0:0:0:0/block/x/block/sda2 makes it a device (the
 * unrecorded ancestor of its physical parent .../block/x); or a class
 * device recorded right below .../0:0:0:0 goes in a glue directory
 * .../0:0:0:0/block that is a recorded device.  Checked once every device
 * is linked, since such ancestors are made as they are met.
 */
static int check_glue(struct rec_load *l, uint32_t i)
{
	const struct rec_pdev *d = &l->p.devs[i];
	size_t plen = cfs_rec_parent_len(d->path, d->pathlen), glen = plen;
	uint32_t other;

	if (d->kind != REC_CLASS || d->parent != REC_NONE || d->phys == REC_NONE ||
	    l->p.devs[d->phys].kind == REC_CLASS)
		return 0;	/* nested, virtual, or below a class device: no glue */
	memcpy(l->scratch, d->path, plen);
	if (!d->glued) {
		/* recorded right below its physical device: the glue goes between */
		if (plen + 1 + d->subsyslen >= sizeof(l->scratch))
			return 0;
		l->scratch[plen] = '/';
		memcpy(l->scratch + plen + 1, d->subsys, d->subsyslen);
		glen = plen + 1 + d->subsyslen;
	}
	other = cfs_rec_lookup_tree(l, l->scratch, glen);
	if (other == REC_NONE - 1)
		return -ENOMEM;
	if (other == REC_NONE)
		return 0;
	d = &l->p.devs[i];
	return cfs_rec_error(&l->p, d->lineno,
			     "%.*s is both a device and the '%.*s' glue directory of %.*s",
			     (int)glen, l->scratch, (int)d->subsyslen, d->subsys,
			     (int)d->pathlen, d->path);
}

/* is device @idx (a class device, or below one) in /devices/virtual in the tree? */
static bool in_virtual(const struct rec_load *l, uint32_t idx)
{
	for (int depth = 0; idx != REC_NONE && depth < REC_MAX_DEPTH * 2; depth++) {
		const struct rec_pdev *c = &l->p.devs[idx];

		if (c->existing)	/* its path is where the tree has it */
			return c->kind == REC_CLASS && c->pathlen > 17 &&
			       !memcmp(c->path, "/devices/virtual/", 17);
		if (c->kind != REC_CLASS)
			return false;
		if (c->parent == REC_NONE)
			return c->phys == REC_NONE;	/* recorded there, or moved there */
		idx = c->parent;
	}
	return false;
}

/*
 * /devices/virtual holds class devices only.  A physical device recorded
 * (or made as an ancestor) below a class device that goes there, such as
 * a class device recorded right below /devices, would be saved at a path
 * no record may hold: refused.
 */
static int check_virtual(struct rec_load *l, uint32_t i)
{
	const struct rec_pdev *d = &l->p.devs[i], *up;

	if (d->kind == REC_CLASS || d->existing || d->parent == REC_NONE ||
	    !in_virtual(l, d->parent))
		return 0;
	up = &l->p.devs[d->parent];
	return cfs_rec_error(&l->p, d->lineno, "physical device %.*s would be below %.*s, "
			     "which goes in /devices/virtual", (int)d->pathlen, d->path,
			     (int)up->pathlen, up->path);
}

/*
 * The devices already in the tree join the record's index when a path
 * names one (cfs_rec_lookup_tree()), so that a record's unrecorded ancestors are the
 * devices already there (records sharing /devices/pci0000:00 load one
 * after the other), and a recorded device already there is refused
 * before anything is built.
 */
/*
 * Can the tree hold a device at one of the record's paths?  Physical
 * devices are below devices/ in both layouts: when no recorded path's
 * first component (/devices/pci0000:00/...) is there, none can be, and the
 * lookups in the tree are skipped.  Below /devices/virtual the first two
 * components count (virtual/block, virtual/workqueue): a virtual bus's
 * root, or a class's glue directory holding class devices a recorded one
 * may be nested in (virtual/block/sda/sda1 loaded after sda).
 */
static bool may_overlap(struct rec_load *l, size_t nrecorded)
{
	const char *last = NULL;
	size_t lastlen = 0;

	for (size_t i = 0; i < nrecorded; i++) {
		const struct rec_pdev *d = &l->p.devs[i];
		const char *first = d->path + 9;	/* after "/devices/" */
		const char *end = memchr(first, '/', d->pathlen - 9);
		size_t n = end ? (size_t)(end - first) : d->pathlen - 9;
		char rel[2 * NAME_MAX + 16];
		struct classfs_stat st;

		if (n == 7 && !memcmp(first, "virtual", 7) && end) {
			/* devices/virtual/X: the root of a virtual bus, or a glue directory */
			const char *second = end + 1;
			const char *end2 = memchr(second, '/', d->pathlen - (size_t)(second - d->path));

			n = end2 ? (size_t)(end2 - first) : d->pathlen - 9;
		}
		if ((n == 7 && !memcmp(first, "virtual", 7)) ||
		    (last && n == lastlen && !memcmp(first, last, n)))
			continue;
		snprintf(rel, sizeof(rel), "devices/%.*s", (int)n, first);
		if (classfs_path_stat(l->tree, rel, &st) == 0)
			return true;
		last = first;
		lastlen = n;
	}
	return false;
}

/*
 * A recorded device already in the tree is refused before anything is
 * built; the tree's devices at the record's other paths (its unrecorded
 * ancestors, link targets) are found by path as they are needed (cfs_rec_lookup_tree()).
 */
static int add_existing(struct rec_load *l)
{
	const struct rec_pdev *first = NULL;
	char path[PATH_MAX];

	if (!may_overlap(l, l->p.ndevs))
		return 0;
	l->overlap = true;
	/* the one to name: the shallowest (parents first), then the first recorded */
	for (size_t i = 0; i < l->p.ndevs; i++) {
		const struct rec_pdev *d = &l->p.devs[i];
		struct classfs_device *dev;

		if (d->pathlen >= sizeof(path) || (first && d->depth >= first->depth))
			continue;
		memcpy(path, d->path, d->pathlen);
		path[d->pathlen] = '\0';
		dev = classfs_tree_find_device(l->tree, path);
		if (dev) {
			classfs_device_put(dev);
			first = d;
		}
	}
	if (!first)
		return 0;
	cfs_rec_error(&l->p, first->lineno, "device %.*s is already in the tree",
		      (int)first->pathlen, first->path);
	return -EEXIST;
}

/* build order: parents (shorter paths) first, by a counting sort on depth */
static int sort_by_depth(struct rec_load *l)
{
	size_t n = l->p.ndevs, maxd = 0;
	size_t *start;

	for (size_t i = 0; i < n; i++)
		if (l->p.devs[i].depth > maxd)
			maxd = l->p.devs[i].depth;
	start = calloc(maxd + 2, sizeof(*start));
	l->order = malloc(n * sizeof(*l->order));
	if (!start || !l->order) {
		free(start);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		start[l->p.devs[i].depth + 1]++;
	for (size_t k = 1; k <= maxd + 1; k++)
		start[k] += start[k - 1];
	for (size_t i = 0; i < n; i++)
		l->order[start[l->p.devs[i].depth]++] = (uint32_t)i;
	free(start);
	return 0;
}


/**
 * cfs_rec_link_all() - place every recorded device of @l; the build order
 * Return: 0, -EINVAL (error filled), -EEXIST (already in the tree), -ENOMEM.
 */
int cfs_rec_link_all(struct rec_load *l)
{
	size_t nrecorded = l->p.ndevs;
	int r = add_existing(l);

	if (l->p.exact) {
		for (uint32_t i = 0; !r && i < nrecorded; i++)
			r = link_exact(l, i);
		for (uint32_t i = 0; !r && l->overlap && i < nrecorded; i++)
			r = check_fill(l, i);
		goto targets;
	}

	/*
	 * Physical devices first: the unrecorded ancestors they make are
	 * there when a class device asks whether its parent path is a device
	 * or a glue directory, whatever the order of the record.
	 */
	for (uint32_t i = 0; !r && i < nrecorded; i++)
		if (l->p.devs[i].kind != REC_CLASS)
			r = link_dev(l, i);
	for (uint32_t i = 0; !r && i < nrecorded; i++)
		if (l->p.devs[i].kind == REC_CLASS)
			r = link_dev(l, i);
	for (uint32_t i = 0; !r && i < nrecorded; i++)
		r = check_glue(l, i);
	for (uint32_t i = 0; !r && i < l->p.ndevs; i++)	/* with unrecorded ancestors */
		r = check_virtual(l, i);
targets:
	/* link targets in the tree join the index now: building adds no entry */
	for (uint32_t i = 0; !r && l->overlap && i < nrecorded; i++) {
		for (uint32_t k = 0; k < l->p.devs[i].nlines; k++) {
			const struct rec_line *ln = &l->p.lines[l->p.devs[i].first + k];
			size_t n;

			if (ln->tag != 'L')
				continue;
			n = cfs_rec_resolve_link(l, &l->p.devs[i], ln);
			if (n && cfs_rec_lookup_tree(l, l->scratch, n) == REC_NONE - 1) {
				r = -ENOMEM;
				break;
			}
		}
	}
	return r ? r : sort_by_depth(l);
}

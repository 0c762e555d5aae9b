// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * view.c - the tree as files: inode numbers, lookup, readdir and
 * readlink, in the tree's layout (read and write are in io.c).  The FUSE
 * filesystem and the in-process path API (path.c) both call these.
 *
 * An entry is (node, slot).  Slot 0 is the node itself; other slots are
 * entries computed from a device when asked for, so a device costs one
 * node however many standard files it shows:
 *   in its directory    uevent, dev, subsystem, device, and the class's
 *                       and type's default attribute groups
 *                       (cfs_group_slot(): group << 8 | attribute,
 *                       CFS_SLOT_GROUP_DIR for a named group's directory)
 *   elsewhere           class/CLASS/NAME alias, block/NAME,
 *                       dev/{block,char}/MAJ:MIN.
 * An inode number is generation << 40 | id << 12 | slot (root: 1); a
 * removed node's numbers answer -ENOENT.
 *
 * readdir offsets: each directory lists up to two regions; an offset is
 * region << 61 | position, where the position is an ordinal for computed
 * entries and a table key (hash and node id, see htab.c) for hashed ones,
 * so a listing resumes correctly however the directory changed, also
 * between two entries whose names' hashes collide.
 */
#include "internal.h"

#define OFF_REGION(off) ((unsigned int)((off) >> 61))
#define OFF_POS(off) ((off) & ((1ull << 61) - 1))
#define OFF_MAKE(r, pos) (((uint64_t)(r) << 61) | (pos))

/* node ids are the tables' key2: a key + 1 fits a position */
_Static_assert(CFS_INO_ID_BITS <= CFS_HTAB_KEY2_BITS, "node ids must fit key2");
_Static_assert(32 + CFS_HTAB_KEY2_BITS < 61, "keys must fit a position");

enum { R_COMPUTED = 0, R_CHILDREN = 1, R_INDEX = 2, R_DEVT = 3, R_END = 4 };

/* %CLASSFS_ROOT_INO: 1, as FUSE wants it */
uint64_t classfs_root_ino(void)
{
	return CLASSFS_ROOT_INO;
}

struct classfs_device *cfs_entry_device(const struct cfs_entry *e)
{
	return (e->n->flags & CFS_NF_DEVICE) ? cfs_node_device(e->n) : NULL;
}

/* group @g (1-based) of a device: the class's groups, then the type's */
const struct classfs_attribute_group *cfs_vgroup(const struct classfs_device *dev, unsigned int g)
{
	unsigned int i = 1;

	if (dev->cls && dev->cls->dev_groups)
		for (const struct classfs_attribute_group *const *p = dev->cls->dev_groups; *p; p++, i++)
			if (i == g)
				return *p;
	if (dev->type && dev->type->groups)
		for (const struct classfs_attribute_group *const *p = dev->type->groups; *p; p++, i++)
			if (i == g)
				return *p;
	return NULL;
}

static unsigned int group_nattrs(const struct classfs_attribute_group *grp, unsigned int *ntext)
{
	unsigned int n = 0, b = 0;

	for (const struct classfs_device_attribute *const *a = grp->attrs; a && *a; a++)
		n++;
	for (const struct classfs_bin_attribute *const *a = grp->bin_attrs; a && *a; a++)
		b++;
	*ntext = n;
	return n + b;
}

/* attribute @a of group @grp: text (*bin NULL) or binary */
const struct classfs_attribute *cfs_group_attr(const struct classfs_attribute_group *grp,
						  unsigned int a,
						  const struct classfs_device_attribute **text,
						  const struct classfs_bin_attribute **bin)
{
	unsigned int ntext, n = group_nattrs(grp, &ntext);

	*text = NULL;
	*bin = NULL;
	if (a >= n || a >= CFS_GROUP_MAX_ATTRS)
		return NULL;
	if (a < ntext) {
		*text = grp->attrs[a];
		return &(*text)->attr;
	}
	*bin = grp->bin_attrs[a - ntext];
	return &(*bin)->attr;
}

static bool is_first_devt(struct classfs_tree *t, const struct classfs_device *dev)
{
	uint32_t h = cfs_hash_devt(dev->devt);
	bool blk = dev->cls && dev->cls->p.block;

	for (struct classfs_device *d = cfs_htab_chain(&t->devts, h); d; d = d->p.devt_next) {
		if (d->devt == dev->devt && (d->cls && d->cls->p.block) == blk)
			return d == dev;
	}
	return false;
}

/* does computed slot @slot exist for @dev? (under L) */
static bool slot_exists(struct classfs_tree *t, const struct classfs_device *dev, unsigned int slot)
{
	unsigned int hide = cfs_slot_hide_bit(slot);

	/* unlinked through the filesystem (plain.c) */
	if (hide && cfs_dev_state(dev, hide))
		return false;
	switch (slot) {
	case CFS_SLOT_UEVENT:
		return true;
	case CFS_SLOT_DEV:
		return major(dev->devt) != 0;
	case CFS_SLOT_SUBSYSTEM:
		return dev->cls || dev->bus;
	case CFS_SLOT_DEVICE:
		return dev->cls && dev->phys;
	case CFS_SLOT_ALIAS:
		return dev->cls && (t->layout == CLASSFS_LAYOUT_DEVICES || dev->parent) &&
		       !cfs_dev_state(dev, CFS_DS_UNINDEXED);
	case CFS_SLOT_BLOCK:
		/* block/NAME lists the block class by name, as class/block/NAME does */
		return dev->cls && dev->cls->p.block && !dev->parent &&
		       !cfs_dev_state(dev, CFS_DS_UNINDEXED);
	case CFS_SLOT_DEVNUM:
		return major(dev->devt) && is_first_devt(t, dev);
	}
	unsigned int g = cfs_slot_group(slot), a = cfs_slot_attr(slot);
	const struct classfs_attribute_group *grp = g ? cfs_vgroup(dev, g) : NULL;
	const struct classfs_device_attribute *text;
	const struct classfs_bin_attribute *bin;

	if (!grp)
		return false;
	if (a == CFS_SLOT_GROUP_DIR)
		return grp->name != NULL;
	if (cfs_hide_any() && cfs_hidden_locked(t ? t : cfs_device_tree_of(dev), &dev->p.node, slot))
		return false;
	return cfs_group_attr(grp, a, &text, &bin) != NULL;
}

/* is group attribute @slot of @dev hidden (hide.c)?  Under L */
static bool attr_hidden(const struct classfs_device *dev, unsigned int slot)
{
	return cfs_hide_any() && cfs_hidden_locked(cfs_device_tree_of(dev), &dev->p.node, slot);
}

int cfs_resolve_locked(struct classfs_tree *t, uint64_t ino, struct cfs_entry *e)
{
	cfs_assert_held(t);
	if (ino == CLASSFS_ROOT_INO) {
		*e = (struct cfs_entry){ &t->root, 0 };
		return 0;
	}
	uint32_t id = (uint32_t)((ino >> CFS_INO_SLOT_BITS) & CFS_MAX_ID);
	unsigned int slot = (unsigned int)(ino & ((1u << CFS_INO_SLOT_BITS) - 1));
	struct classfs_node *n = cfs_node_by_id(t, id);

	if (!n || (n->flags & CFS_NF_DEAD) || (n->gen & 0xFFFFFF) != (uint32_t)(ino >> 40))
		return -ENOENT;
	if (slot && (!(n->flags & CFS_NF_DEVICE) || !slot_exists(t, cfs_node_device(n), slot)))
		return -ENOENT;
	*e = (struct cfs_entry){ n, slot };
	return 0;
}

static const char *entry_name(const struct cfs_entry *e, char *buf, size_t size)
{
	struct classfs_device *dev = cfs_entry_device(e);
	const struct classfs_device_attribute *text;
	const struct classfs_bin_attribute *bin;

	switch (e->slot) {
	case CFS_SLOT_SELF:
	case CFS_SLOT_ALIAS:
	case CFS_SLOT_BLOCK:
		return e->n->name;
	case CFS_SLOT_UEVENT:
		return "uevent";
	case CFS_SLOT_DEV:
		return "dev";
	case CFS_SLOT_SUBSYSTEM:
		return "subsystem";
	case CFS_SLOT_DEVICE:
		return "device";
	case CFS_SLOT_DEVNUM:
		snprintf(buf, size, "%u:%u", major(dev->devt), minor(dev->devt));
		return buf;
	}
	const struct classfs_attribute_group *grp = cfs_vgroup(dev, cfs_slot_group(e->slot));

	if (cfs_slot_attr(e->slot) == CFS_SLOT_GROUP_DIR)
		return grp->name;
	return cfs_group_attr(grp, cfs_slot_attr(e->slot), &text, &bin)->name;
}

void cfs_entry_stat(const struct cfs_entry *e, struct classfs_stat *st)
{
	const struct classfs_node *n = e->n;

	*st = (struct classfs_stat){ .ino = cfs_ino(n, e->slot), .generation = n->gen & 0xFFFFFF };
	switch (e->slot) {
	case CFS_SLOT_SELF:
		st->mode = n->mode;
		if (n->type == CFS_NT_DIR) {
			st->type = CLASSFS_FT_DIR;
		} else if (n->type == CFS_NT_LNK) {
			st->type = CLASSFS_FT_LNK;
		} else if (n->flags & CFS_NF_VALUE) {
			/* bytes the tree keeps: their length, cached until they change */
			st->type = CLASSFS_FT_REG;
			st->size = (off_t)cfs_bytes_len(cfs_value_bytes(n));
		} else {
			st->type = CLASSFS_FT_REG;
			st->dynamic = true;
			st->size = n->type == CFS_NT_BIN
					   ? (off_t)((const struct classfs_bin_attribute *)n->u.attr)->size
					   : CLASSFS_ATTR_MAX;
		}
		return;
	case CFS_SLOT_UEVENT:
		*st = (struct classfs_stat){ st->ino, st->generation, CLASSFS_FT_REG, 0644,
					     CLASSFS_ATTR_MAX, true };
		return;
	case CFS_SLOT_DEV: {
		/* "MAJOR:MINOR\n", fixed for the inode */
		dev_t devt = cfs_entry_device(e)->devt;
		char buf[32];
		int len = snprintf(buf, sizeof(buf), "%u:%u\n", major(devt), minor(devt));

		*st = (struct classfs_stat){ st->ino, st->generation, CLASSFS_FT_REG, 0444, len,
					     false };
		return;
	}
	case CFS_SLOT_SUBSYSTEM:
	case CFS_SLOT_DEVICE:
	case CFS_SLOT_ALIAS:
	case CFS_SLOT_BLOCK:
	case CFS_SLOT_DEVNUM:
		st->type = CLASSFS_FT_LNK;
		st->mode = 0777;
		return;
	}
	const struct classfs_attribute_group *grp = cfs_vgroup(cfs_entry_device(e), e->slot >> 8);
	const struct classfs_device_attribute *text;
	const struct classfs_bin_attribute *bin;

	if ((e->slot & 0xFF) == CFS_SLOT_GROUP_DIR) {
		st->type = CLASSFS_FT_DIR;
		st->mode = 0755;
		return;
	}
	const struct classfs_attribute *a = cfs_group_attr(grp, e->slot & 0xFF, &text, &bin);

	struct cfs_bytes *stored = cfs_stored_bytes(cfs_entry_device(e), text);

	st->type = CLASSFS_FT_REG;
	st->mode = a->mode & 07777;
	st->dynamic = !stored;
	st->size = stored ? (off_t)cfs_bytes_len(stored) : bin ? (off_t)bin->size : CLASSFS_ATTR_MAX;
}

/**
 * cfs_entry_dir() - the directory file @e (a node, or an entry computed in
 * a device's directory: not a link shown elsewhere) is in, and its name
 * there (in @buf when computed); under L
 * Return: the directory's inode number.
 */
uint64_t cfs_entry_dir(const struct cfs_entry *e, const char **name, char *buf, size_t size)
{
	*name = entry_name(e, buf, size);
	if (!e->slot)
		return e->n->parent ? cfs_ino(e->n->parent, 0) : CLASSFS_ROOT_INO;
	if (e->slot <= CFS_SLOT_FIXED_MAX || cfs_slot_attr(e->slot) == CFS_SLOT_GROUP_DIR ||
	    !cfs_vgroup(cfs_entry_device(e), cfs_slot_group(e->slot))->name)
		return cfs_ino(e->n, 0);
	return cfs_ino(e->n, cfs_group_slot(cfs_slot_group(e->slot), CFS_SLOT_GROUP_DIR));
}

/* the entry's link target and the directory the link is in */
static int link_ends(struct classfs_tree *t, const struct cfs_entry *e,
		     const struct classfs_node **from, const struct classfs_node **to)
{
	struct classfs_device *dev = cfs_entry_device(e);

	switch (e->slot) {
	case CFS_SLOT_SELF:
		if (e->n->type != CFS_NT_LNK)
			return -EINVAL;
		*from = e->n->parent;
		*to = e->n->u.target;
		return 0;
	case CFS_SLOT_SUBSYSTEM:
		*from = e->n;
		*to = dev->cls ? &dev->cls->p.node : &dev->bus->p.node;
		return 0;
	case CFS_SLOT_DEVICE:
		*from = e->n;
		*to = &dev->phys->p.node;
		return 0;
	case CFS_SLOT_ALIAS:
		*from = &dev->cls->p.node;
		*to = e->n;
		return 0;
	case CFS_SLOT_BLOCK:
		*from = t->block_dir;
		*to = e->n;
		return 0;
	case CFS_SLOT_DEVNUM:
		*from = dev->cls && dev->cls->p.block ? t->dev_block : t->dev_char;
		*to = e->n;
		return 0;
	}
	return -EINVAL;
}

int classfs_getattr(struct classfs_tree *t, uint64_t ino, struct classfs_stat *st)
{
	struct cfs_entry e;
	int r;

	if (!t || !st)
		return -EINVAL;
	cfs_lock(t);
	r = cfs_resolve_locked(t, ino, &e);
	if (!r)
		cfs_entry_stat(&e, st);
	cfs_unlock(t);
	return r;
}

/*
 * Call @fn for each computed entry of @dev's directory, in order, at most
 * CFS_MAX_COMPUTED: the fixed entries the device has, then each default
 * group's directory (named group) or attributes (unnamed group).  Stops
 * at, and returns, @fn's first true.  Needs no lock: it reads only the
 * device's own fields and its class's and type's groups.
 */
static bool computed_each(const struct classfs_device *dev,
			  bool (*fn)(const struct classfs_device *dev, unsigned int slot,
				     void *ctx),
			  void *ctx)
{
	int n = 0;

	/* (whether a device has its fixed entries does not depend on the tree) */
	for (unsigned int s = CFS_SLOT_UEVENT; s <= CFS_SLOT_FIXED_MAX; s++) {
		if (!slot_exists(NULL, dev, s))
			continue;
		n++;
		if (fn(dev, s, ctx))
			return true;
	}
	for (unsigned int g = 1; g <= CFS_MAX_VGROUPS; g++) {
		const struct classfs_attribute_group *grp = cfs_vgroup(dev, g);
		unsigned int ntext, na;

		if (!grp)
			break;
		if (grp->name) {
			if (n == CFS_MAX_COMPUTED)
				return false;
			n++;
			if (fn(dev, cfs_group_slot(g, CFS_SLOT_GROUP_DIR), ctx))
				return true;
			continue;
		}
		na = group_nattrs(grp, &ntext);
		for (unsigned int a = 0; a < na && a < CFS_GROUP_MAX_ATTRS; a++) {
			if (n == CFS_MAX_COMPUTED)
				return false;
			n++;
			if (attr_hidden(dev, cfs_group_slot(g, a)))
				continue;
			if (fn(dev, cfs_group_slot(g, a), ctx))
				return true;
		}
	}
	return false;
}

struct slot_list {
	unsigned int *slots;
	int n;
};

static bool slot_collect(const struct classfs_device *dev, unsigned int slot, void *ctx)
{
	struct slot_list *l = ctx;

	(void)dev;
	l->slots[l->n++] = slot;
	return false;
}

/* the ordered list of computed entries of a device directory (CFS_MAX_COMPUTED slots) */
static int computed_slots(const struct classfs_device *dev, unsigned int *slots)
{
	struct slot_list l = { slots, 0 };

	computed_each(dev, slot_collect, &l);
	return l.n;
}

static bool slot_named(const struct classfs_device *dev, unsigned int slot, void *ctx)
{
	struct cfs_entry e = { (struct classfs_node *)&dev->p.node, slot };

	/* a device directory's computed names are never formatted: no buffer */
	return !strcmp(entry_name(&e, NULL, 0), ctx);
}

/*
 * Is @name one of @dev's computed entries?  Every attribute, value and
 * link added to a device asks.  `dev`, `subsystem` and `device` only
 * where the device has them: a PCI device's `device` file is an
 * attribute of its own (its device id), as in Linux.
 */
bool cfs_name_is_virtual(const struct classfs_device *dev, const char *name)
{
	return computed_each(dev, slot_named, (void *)name);
}

static int parse_devnum(const char *name, dev_t *devt)
{
	unsigned int ma, mi;
	int len;

	if (sscanf(name, "%u:%u%n", &ma, &mi, &len) != 2 || name[len] || !ma)
		return -ENOENT;
	*devt = makedev(ma, mi);
	return 0;
}

static int lookup_locked(struct classfs_tree *t, const struct cfs_entry *dir, const char *name,
			 struct cfs_entry *out)
{
	struct classfs_device *dev = cfs_entry_device(dir);
	struct classfs_node *c;
	char buf[32];

	cfs_assert_held(t);
	if (dir->slot) {
		/* a named default group's directory */
		const struct classfs_attribute_group *grp;
		unsigned int ntext, na;

		if (cfs_slot_attr(dir->slot) != CFS_SLOT_GROUP_DIR)
			return -ENOTDIR;
		grp = cfs_vgroup(dev, cfs_slot_group(dir->slot));
		na = group_nattrs(grp, &ntext);
		for (unsigned int a = 0; a < na && a < CFS_GROUP_MAX_ATTRS; a++) {
			*out = (struct cfs_entry){ dir->n, cfs_group_slot(cfs_slot_group(dir->slot), a) };
			if (!attr_hidden(dev, out->slot) &&
			    !strcmp(entry_name(out, buf, sizeof(buf)), name))
				return 0;
		}
		return -ENOENT;
	}
	if (dir->n->type != CFS_NT_DIR)
		return -ENOTDIR;
	if (dev) {
		unsigned int slots[CFS_MAX_COMPUTED];
		int n = computed_slots(dev, slots);

		for (int i = 0; i < n; i++) {
			*out = (struct cfs_entry){ dir->n, slots[i] };
			if (!strcmp(entry_name(out, buf, sizeof(buf)), name))
				return 0;
		}
	}
	c = cfs_dir_lookup(dir->n, name);
	if (c) {
		*out = (struct cfs_entry){ c, 0 };
		return 0;
	}
	if (dir->n->flags & CFS_NF_CLASS) {
		struct classfs_device *d = cfs_class_lookup_locked(cfs_node_class(dir->n), name);

		if (d && slot_exists(t, d, CFS_SLOT_ALIAS)) {
			*out = (struct cfs_entry){ &d->p.node, CFS_SLOT_ALIAS };
			return 0;
		}
	} else if (dir->n == t->block_dir && t->block_class) {
		struct classfs_device *d = cfs_class_lookup_locked(t->block_class, name);

		if (d && slot_exists(t, d, CFS_SLOT_BLOCK)) {
			*out = (struct cfs_entry){ &d->p.node, CFS_SLOT_BLOCK };
			return 0;
		}
	} else if (dir->n == t->dev_block || dir->n == t->dev_char) {
		bool blk = dir->n == t->dev_block;
		dev_t devt;

		if (parse_devnum(name, &devt) < 0)
			return -ENOENT;
		uint32_t h = cfs_hash_devt(devt);

		for (struct classfs_device *d = cfs_htab_chain(&t->devts, h); d; d = d->p.devt_next)
			if (d->devt == devt && (d->cls && d->cls->p.block) == blk) {
				if (cfs_dev_state(d, CFS_DS_HIDE_DEVNUM))
					return -ENOENT;
				*out = (struct cfs_entry){ &d->p.node, CFS_SLOT_DEVNUM };
				return 0;
			}
	}
	return -ENOENT;
}

/* entry @name of directory @dir (under L): 0, -ENOENT, -ENOTDIR */
int cfs_lookup_locked(struct classfs_tree *t, const struct cfs_entry *dir, const char *name,
		      struct cfs_entry *out)
{
	return lookup_locked(t, dir, name, out);
}

int classfs_lookup(struct classfs_tree *t, uint64_t dir, const char *name, struct classfs_stat *st)
{
	struct cfs_entry d, e;
	int r;

	if (!t || !name || !st)
		return -EINVAL;
	cfs_lock(t);
	r = cfs_resolve_locked(t, dir, &d);
	if (!r)
		r = lookup_locked(t, &d, name, &e);
	if (!r)
		cfs_entry_stat(&e, st);
	cfs_unlock(t);
	return r;
}

/* ---- readdir ---- */

struct dent {
	struct classfs_stat st;
	uint64_t next_off;
	char name[NAME_MAX + 1];
};

#define DENT_BATCH 64

struct dbatch {
	struct dent d[DENT_BATCH];
	int n;
};

static bool batch_add(struct dbatch *b, const struct cfs_entry *e, uint64_t next_off)
{
	char buf[32];
	struct dent *d;

	if (b->n == DENT_BATCH)
		return false;
	d = &b->d[b->n++];
	cfs_entry_stat(e, &d->st);
	snprintf(d->name, sizeof(d->name), "%s", entry_name(e, buf, sizeof(buf)));
	d->next_off = next_off;
	return true;
}

/* the regions a directory lists, in order */
static int dir_regions(struct classfs_tree *t, const struct cfs_entry *dir, int *regions)
{
	int n = 0;

	if (dir->slot)
		regions[n++] = R_COMPUTED;
	else if (dir->n->flags & CFS_NF_DEVICE) {
		regions[n++] = R_COMPUTED;
		regions[n++] = R_CHILDREN;
	} else if (dir->n->flags & CFS_NF_CLASS) {
		regions[n++] = R_CHILDREN;
		regions[n++] = R_INDEX;
	} else if (dir->n == t->block_dir) {
		regions[n++] = R_INDEX;
	} else if (dir->n == t->dev_block || dir->n == t->dev_char) {
		regions[n++] = R_DEVT;
	} else {
		regions[n++] = R_CHILDREN;
	}
	return n;
}

/* fill @b from offset @off (under L); returns false when the listing ended */
static bool readdir_locked(struct classfs_tree *t, const struct cfs_entry *dir, uint64_t off,
			   struct dbatch *b)
{
	int regions[3], nr = dir_regions(t, dir, regions);

	cfs_assert_held(t);
	for (int i = 0; i < nr; i++) {
		int r = regions[i];
		uint64_t pos;

		if (OFF_REGION(off) > (unsigned int)r)
			continue;
		pos = OFF_REGION(off) == (unsigned int)r ? OFF_POS(off) : 0;
		if (r == R_COMPUTED) {
			unsigned int slots[CFS_MAX_COMPUTED];
			int n;

			if (dir->slot) {
				unsigned int g = cfs_slot_group(dir->slot);
				const struct classfs_attribute_group *grp =
					cfs_vgroup(cfs_entry_device(dir), g);
				unsigned int ntext, na = group_nattrs(grp, &ntext);

				n = 0;
				for (unsigned int a = 0; a < na && a < CFS_GROUP_MAX_ATTRS; a++)
					if (!attr_hidden(cfs_entry_device(dir), cfs_group_slot(g, a)))
						slots[n++] = cfs_group_slot(g, a);
			} else {
				n = computed_slots(cfs_entry_device(dir), slots);
			}
			for (int k = (int)pos; k < n; k++) {
				struct cfs_entry e = { dir->n, slots[k] };

				if (!batch_add(b, &e, OFF_MAKE(r, (uint64_t)k + 1)))
					return true;
			}
		} else if (r == R_CHILDREN) {
			struct classfs_htab *h = dir->n->u.dir;

			if (!h)
				continue;
			for (struct classfs_node *c = cfs_htab_first_from(h, &cfs_node_htab_ops, pos); c;
			     c = cfs_htab_next(h, &cfs_node_htab_ops, c)) {
				struct cfs_entry e = { c, 0 };

				if (!batch_add(b, &e, OFF_MAKE(r, cfs_htab_key(&cfs_node_htab_ops, c) + 1)))
					return true;
			}
		} else if (r == R_INDEX) {
			struct classfs_class *cls = (dir->n->flags & CFS_NF_CLASS)
							    ? cfs_node_class(dir->n)
							    : t->block_class;
			unsigned int slot = (dir->n->flags & CFS_NF_CLASS) ? CFS_SLOT_ALIAS
									   : CFS_SLOT_BLOCK;

			if (!cls)
				continue;
			/* class layout: only nested devices have aliases here */
			if (slot == CFS_SLOT_ALIAS && t->layout == CLASSFS_LAYOUT_CLASS &&
			    !cls->p.nested)
				continue;
			for (struct classfs_device *d =
				     cfs_htab_first_from(&cls->p.names, &cfs_name_htab_ops, pos);
			     d; d = cfs_htab_next(&cls->p.names, &cfs_name_htab_ops, d)) {
				struct cfs_entry e = { &d->p.node, slot };

				if (!slot_exists(t, d, slot))
					continue;
				if (!batch_add(b, &e, OFF_MAKE(r, cfs_htab_key(&cfs_name_htab_ops, d) + 1)))
					return true;
			}
		} else if (r == R_DEVT) {
			bool blk = dir->n == t->dev_block;

			for (struct classfs_device *d = cfs_htab_first_from(&t->devts, &cfs_devt_htab_ops, pos);
			     d; d = cfs_htab_next(&t->devts, &cfs_devt_htab_ops, d)) {
				struct cfs_entry e = { &d->p.node, CFS_SLOT_DEVNUM };

				if ((d->cls && d->cls->p.block) != blk || !slot_exists(t, d, CFS_SLOT_DEVNUM))
					continue;
				if (!batch_add(b, &e, OFF_MAKE(r, cfs_htab_key(&cfs_devt_htab_ops, d) + 1)))
					return true;
			}
		}
	}
	return false;
}

int classfs_readdir(struct classfs_tree *t, uint64_t dir, uint64_t off,
		    int (*fill)(void *ctx, const char *name, const struct classfs_stat *st,
				uint64_t next_off),
		    void *ctx)
{
	struct dbatch *b;
	struct cfs_entry d;
	int r = 0;

	if (!t || !fill)
		return -EINVAL;
	b = cfs_malloc(sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (;;) {
		bool more;

		b->n = 0;
		cfs_lock(t);
		r = cfs_resolve_locked(t, dir, &d);
		if (!r) {
			struct classfs_stat st;

			cfs_entry_stat(&d, &st);
			if (st.type != CLASSFS_FT_DIR)
				r = -ENOTDIR;
		}
		more = !r && readdir_locked(t, &d, off, b);
		cfs_unlock(t);
		if (r)
			break;
		for (int i = 0; i < b->n; i++) {
			if (fill(ctx, b->d[i].name, &b->d[i].st, b->d[i].next_off))
				goto out;
			off = b->d[i].next_off;
		}
		if (!more)
			break;
	}
out:
	cfs_free(b);
	return r;
}

ssize_t classfs_readlink(struct classfs_tree *t, uint64_t ino, char *buf, size_t size)
{
	const struct classfs_node *from, *to;
	struct cfs_entry e;
	int r;

	if (!t || !buf)
		return -EINVAL;
	cfs_lock(t);
	r = cfs_resolve_locked(t, ino, &e);
	if (!r && e.slot == CFS_SLOT_SELF && (e.n->flags & CFS_NF_LINK_TEXT)) {
		size_t len = strlen(cfs_link_text(e.n));

		r = len < size ? (int)len : -ERANGE;
		if (r > 0)
			memcpy(buf, cfs_link_text(e.n), len + 1);
		cfs_unlock(t);
		return r;
	}
	if (!r)
		r = link_ends(t, &e, &from, &to);
	/* a publisher's link to a device removed since */
	if (!r && (to->flags & CFS_NF_DEAD))
		r = -ENOENT;
	if (!r)
		r = cfs_rel_path(from, to, buf, size);
	cfs_unlock(t);
	return r;
}

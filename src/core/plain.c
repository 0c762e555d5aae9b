// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * plain.c - entries made through the filesystem: files, directories and
 * symlinks that are no device's code, made, changed and removed with
 * plain file calls on the mounted tree (a test suite written for
 * umockdev's writable /sys does so), and the computed entries of a
 * device unlinked the same way.
 *
 * A file is a binary stored value (value.c): it holds what was written
 * at the offsets written, reports its length as its size and is
 * truncated as a regular file; a directory is a plain directory; a
 * symlink is a publisher's literal link.  Each carries CFS_NF_PLAIN, so
 * classfs_tree_remove_plain() finds them.  They may be made anywhere a
 * real directory is (not in a named attribute group's computed
 * directory), under a name nothing in that directory shows, computed
 * entries included.  Stored values, publishers' links and plain
 * directories may be removed, renamed and replaced this way too; a
 * device's code attributes, its directory, and the directories the tree
 * makes may not (EPERM; a device's directory EBUSY: devices go through
 * the API).
 *
 * A computed entry (a device's `dev`, `subsystem`, `device`, its
 * class/CLASS/NAME, block/NAME and dev/{block,char}/M:m links, the
 * attributes of its class's and type's groups, a record's attributes
 * among them) is unlinked by hiding it for that device (a CFS_DS_HIDE_*
 * state bit, or hide.c's table, under L): the device, its `uevent` and
 * its events are unchanged, and the entry stays hidden until the device
 * goes; a file of the same name may then be made in its place.  An
 * unlinked class/CLASS/NAME also takes the device out of its class's
 * name index (CFS_DS_UNINDEXED): a later device of that class and name
 * may be added and owns class/CLASS/NAME (and block/NAME), and a lookup
 * by class and name finds that one.
 *
 * An entry may be made immutable (classfs_set_flags()): it is then not
 * written, truncated, chmod-ed, removed, renamed nor replaced (-EPERM),
 * whoever asks, until the flag is cleared.
 *
 * Who may do what is the caller's to decide (the FUSE view: the kernel,
 * from the modes and the tree owner's uid it reports).  All under L, as
 * any change of the tree; each call lets the views know before it
 * returns (cfs_watch_sync()).
 */
#include "internal.h"

/* is @n, or its nearest device, going away? (under L) */
bool cfs_node_going(const struct classfs_node *n)
{
	if (__atomic_load_n(&n->active, __ATOMIC_ACQUIRE) < 0 || (n->flags & CFS_NF_DEAD))
		return true;
	for (; n; n = n->parent)
		if (n->flags & CFS_NF_DEVICE)
			return !cfs_dev_alive(cfs_node_device(n));
	return false;
}

/*
 * The real directory at inode @dir (under L): *@d.  Return: 0, -ENOENT
 * (gone or going), -ENOTDIR, -EPERM (a named group's computed directory).
 */
static int real_dir_locked(struct classfs_tree *t, uint64_t dir, struct cfs_entry *d)
{
	int r = cfs_resolve_locked(t, dir, d);

	if (r < 0)
		return r;
	if (d->slot)
		return cfs_slot_attr(d->slot) == CFS_SLOT_GROUP_DIR ? -EPERM : -ENOTDIR;
	if (d->n->type != CFS_NT_DIR)
		return -ENOTDIR;
	return cfs_node_going(d->n) ? -ENOENT : 0;
}

/* may directory @d get entry @name? (under L) 0, -EEXIST, real_dir_locked()'s errors */
static int name_free_locked(struct classfs_tree *t, const struct cfs_entry *d, const char *name)
{
	struct cfs_entry e;
	int r = cfs_lookup_locked(t, d, name, &e);

	if (r == 0)
		return -EEXIST;
	return r == -ENOENT ? 0 : r;
}

/* put new node @n (freed on error) in directory @dir as @n->name; *@st its stat */
static int plain_add(struct classfs_tree *t, uint64_t dir, struct classfs_node *n,
		     struct classfs_stat *st)
{
	struct cfs_entry d;
	int r;

	if (!n)
		return -ENOMEM;
	n->flags |= CFS_NF_PLAIN;
	cfs_lock(t);
	r = real_dir_locked(t, dir, &d);
	if (!r)
		r = name_free_locked(t, &d, n->name);
	if (!r)
		r = cfs_node_add(t, d.n, n);
	if (!r && st)
		cfs_entry_stat(&(struct cfs_entry){ n, 0 }, st);
	cfs_unlock(t);
	if (r < 0) {
		cfs_node_free(n);
		return r;
	}
	cfs_watch_sync(t);
	return 0;
}

static int plain_args(struct classfs_tree *t, const char *name, mode_t mode)
{
	if (!t || !name || (mode & ~07777u))
		return -EINVAL;
	return classfs_name_valid(name);
}

/**
 * classfs_create() - make an empty file @name in directory @dir
 * @tree: the tree
 * @dir: the directory's inode number
 * @name: the new entry's name
 * @mode: its permission bits
 * @st: receives its stat, or NULL
 *
 * The file holds what is written to it (classfs_write() at any offset,
 * classfs_truncate()) and reports its length as its size; no uevent.
 * Return: 0, -EINVAL (NULL, bad @mode, a name with '/' or a control
 * character, ".", ".."), -EEXIST (the directory shows that name),
 * -ENOENT (@dir is gone or going), -ENOTDIR, -EPERM (@dir is a named
 * attribute group's), -ENOMEM, -ENOSPC (no inode number left).
 */
int classfs_create(struct classfs_tree *tree, uint64_t dir, const char *name, mode_t mode,
		   struct classfs_stat *st)
{
	int r = plain_args(tree, name, mode);

	if (r < 0)
		return r;
	return plain_add(tree, dir, cfs_value_node_new(name, mode, NULL, 0, true), st);
}

/**
 * classfs_mkdir() - make an empty directory @name in directory @dir
 * @tree: the tree
 * @dir: the directory's inode number
 * @name: the new directory's name
 * @mode: its permission bits
 * @st: receives its stat, or NULL
 *
 * Return: as classfs_create().
 */
int classfs_mkdir(struct classfs_tree *tree, uint64_t dir, const char *name, mode_t mode,
		  struct classfs_stat *st)
{
	struct classfs_node *n;
	int r = plain_args(tree, name, mode);

	if (r < 0)
		return r;
	n = cfs_node_new(name, CFS_NT_DIR, mode);
	if (n)
		n->flags |= CFS_NF_PLAIN_DIR;
	return plain_add(tree, dir, n, st);
}

/**
 * classfs_symlink() - make a symlink @name to @target in directory @dir
 * @tree: the tree
 * @dir: the directory's inode number
 * @name: the link's name
 * @target: its text, kept as given (relative or absolute, may dangle)
 * @st: receives its stat, or NULL
 *
 * Return: as classfs_create(); -EINVAL also for an empty @target or one
 * of PATH_MAX bytes or more.
 */
int classfs_symlink(struct classfs_tree *tree, uint64_t dir, const char *name,
		    const char *target, struct classfs_stat *st)
{
	int r = plain_args(tree, name, 0);

	if (r < 0)
		return r;
	if (!target || !*target || strlen(target) >= PATH_MAX)
		return -EINVAL;
	return plain_add(tree, dir, cfs_link_node_new(name, target), st);
}

/* may @n be removed, renamed or replaced through the filesystem? 0, -EBUSY, -EPERM */
int cfs_plain_movable(const struct classfs_node *n)
{
	if (n->flags & CFS_NF_DEVICE)
		return -EBUSY;
	if (!(n->flags & (CFS_NF_VALUE | CFS_NF_USER_LINK | CFS_NF_PLAIN_DIR)))
		return -EPERM;
	return 0;
}

static bool dir_empty(const struct classfs_node *n)
{
	return !n->u.dir || !n->u.dir->count;
}

/*
 * Under L: class/CLASS/NAME of @dev unlinked.  The device leaves its
 * class's name index (CFS_DS_UNINDEXED; its block/NAME goes with it), so
 * that a later device of the class may take the name, as a kernel whose
 * class link went would let it (upower's test emulates that bug).  It
 * stays where it is, in the class's device list, with its uevents.
 */
static void alias_unlink_locked(struct classfs_tree *t, struct classfs_device *dev)
{
	cfs_assert_held(t);
	cfs_dev_state_set(dev, CFS_DS_HIDE_ALIAS | CFS_DS_UNINDEXED);
	cfs_watch_device_locked(t, dev);
}

/* remove entry @name of @dir: a directory (@rmdir) or anything else */
static int plain_remove(struct classfs_tree *t, uint64_t dir, const char *name, bool rmdir)
{
	struct classfs_node *freelist = NULL;
	struct cfs_entry d, e;
	unsigned int hide;
	int r;

	if (!t || !name)
		return -EINVAL;
	cfs_lock(t);
	r = real_dir_locked(t, dir, &d);
	if (r == -EPERM)	/* a named group's directory: its attributes hide */
		r = cfs_lookup_locked(t, &d, name, &e);
	else if (!r)
		r = cfs_lookup_locked(t, &d, name, &e);
	if (r)
		goto out;
	if (e.slot) {
		/* computed: a named group's directory, its attributes, or a fixed entry */
		unsigned int g = cfs_slot_group(e.slot);
		bool group = g >= 1 && g <= CFS_MAX_VGROUPS;
		bool isdir = group && cfs_slot_attr(e.slot) == CFS_SLOT_GROUP_DIR;

		hide = cfs_slot_hide_bit(e.slot);
		if (rmdir && !isdir)
			r = -ENOTDIR;
		else if (!rmdir && isdir)
			r = -EISDIR;
		else if (group && !isdir)
			r = cfs_hide_locked(t, e.n, e.slot);
		else if (hide == CFS_DS_HIDE_ALIAS)
			alias_unlink_locked(t, cfs_node_device(e.n));
		else if (hide)
			cfs_dev_state_set(cfs_node_device(e.n), hide);
		else
			r = -EPERM;	/* `uevent`, a named group's directory */
		if (!r)
			cfs_watch_entry_locked(t, d.n, d.slot, name);
		goto out;
	}
	if (cfs_node_going(e.n))
		r = -ENOENT;	/* going with its device */
	else if (rmdir && e.n->type != CFS_NT_DIR)
		r = -ENOTDIR;
	else if (!rmdir && e.n->type == CFS_NT_DIR)
		r = -EISDIR;
	else if ((r = cfs_plain_movable(e.n)) < 0)
		;
	else if (e.n->flags & CFS_NF_PINNED)
		r = -EPERM;
	else if (rmdir && !dir_empty(e.n))
		r = -ENOTEMPTY;
	else if (e.n == t->virtual_dir)
		r = -EBUSY;	/* taken over for devices (placement.c) */
	else
		r = cfs_node_remove_locked(t, e.n, &freelist);
out:
	cfs_unlock(t);
	cfs_watch_sync(t);
	cfs_free_list(freelist);
	return r;
}

/**
 * classfs_unlink() - remove entry @name (not a directory) of directory @dir
 * @tree: the tree
 * @dir: the directory's inode number
 * @name: the entry
 *
 * A stored value (a file made through the filesystem, a loaded or
 * published attribute value) or a publisher's link goes; a device's
 * computed `dev`, `subsystem`, `device`, class/CLASS/NAME, block/NAME or
 * dev/{block,char}/M:m entry, or an attribute of its class's or type's
 * groups (in a named group's directory too), is hidden for that device
 * until it goes.
 * Return: 0, -EINVAL (NULL), -ENOENT, -ENOTDIR, -EISDIR, -EPERM
 * (`uevent`, links and directories the tree makes, an immutable or
 * append-only file),
 * -ENOMEM, -EDEADLK (called from the entry's own callback).
 */
int classfs_unlink(struct classfs_tree *tree, uint64_t dir, const char *name)
{
	return plain_remove(tree, dir, name, false);
}

/**
 * classfs_rmdir() - remove empty plain directory @name of directory @dir
 * @tree: the tree
 * @dir: the directory's inode number
 * @name: the directory
 *
 * Return: 0, -EINVAL (NULL), -ENOENT, -ENOTDIR, -ENOTEMPTY, -EBUSY (a
 * device's directory: devices go through the API), -EPERM (a directory
 * the tree makes: class, glue, attribute group, the fixed ones).
 */
int classfs_rmdir(struct classfs_tree *tree, uint64_t dir, const char *name)
{
	return plain_remove(tree, dir, name, true);
}

/**
 * classfs_chmod() - set the permission bits of entry @ino
 * @tree: the tree
 * @ino: the entry: a stored value, a plain directory or a plain link
 * @mode: the new bits
 * @st: receives its stat, or NULL
 *
 * Return: 0, -EINVAL (NULL, bad @mode), -ENOENT, -EPERM (code, computed
 * entries, directories the tree makes, an immutable or append-only file).
 */
int classfs_chmod(struct classfs_tree *tree, uint64_t ino, mode_t mode, struct classfs_stat *st)
{
	struct cfs_entry e;
	int r;

	if (!tree || (mode & ~07777u))
		return -EINVAL;
	cfs_lock(tree);
	r = cfs_resolve_locked(tree, ino, &e);
	if (!r && (e.slot || cfs_plain_movable(e.n) < 0 || (e.n->flags & CFS_NF_PINNED)))
		r = -EPERM;
	if (!r) {
		e.n->mode = (uint16_t)mode;
		if (e.n->flags & CFS_NF_VALUE)
			cfs_value_set_name_mode(e.n);
		if (st)
			cfs_entry_stat(&e, st);
	}
	cfs_unlock(tree);
	return r;
}

/**
 * classfs_truncate() - set the length of file @ino to @size
 * @tree: the tree
 * @ino: the file
 * @size: its new length: a file made through the filesystem is cut or
 *        extended with zeros; any other writable file is left as it is
 *        (sysfs: how `echo x > attr` opens)
 * @st: receives its stat after, or NULL
 *
 * Return: 0, -EINVAL (NULL, negative @size, a link), -ENOENT, -EISDIR,
 * -EACCES (not writable: no write bit), -EPERM (immutable, append-only),
 * -EFBIG, -ENOMEM.
 */
int classfs_truncate(struct classfs_tree *tree, uint64_t ino, off_t size, struct classfs_stat *st)
{
	struct classfs_node *value = NULL;
	struct classfs_stat cs;
	struct cfs_entry e;
	int r;

	if (!tree || size < 0)
		return -EINVAL;
	cfs_lock(tree);
	r = cfs_resolve_locked(tree, ino, &e);
	if (!r) {
		cfs_entry_stat(&e, &cs);
		if (!e.slot && (e.n->flags & CFS_NF_PINNED))
			r = -EPERM;
		else if (cs.type == CLASSFS_FT_DIR)
			r = -EISDIR;
		else if (cs.type == CLASSFS_FT_LNK)
			r = -EINVAL;
		else if (!(cs.mode & 0222))
			r = -EACCES;
		else if (!e.slot && (e.n->flags & CFS_NF_VALUE))
			r = cfs_active_get(e.n) ? (value = e.n, 0) : -ENOENT;
	}
	cfs_unlock(tree);
	if (r < 0)
		return r;
	if (value) {
		r = cfs_value_truncate(tree, value, size);
		cfs_active_put(tree, value);
		if (r < 0)
			return r;
		cfs_watch_value(tree, ino);
	}
	return st ? classfs_getattr(tree, ino, st) : 0;
}

/* ---- inode flags (chattr, lsattr) ---- */

/**
 * classfs_get_flags() - the inode flags of entry @ino
 * @tree: the tree
 * @ino: the entry
 * @flags: receives its CLASSFS_FL_* flags (0: none; computed entries,
 *         code and directories have none)
 *
 * Return: 0, -EINVAL (NULL), -ENOENT.
 */
int classfs_get_flags(struct classfs_tree *tree, uint64_t ino, unsigned int *flags)
{
	struct cfs_entry e;
	int r;

	if (!tree || !flags)
		return -EINVAL;
	cfs_lock(tree);
	r = cfs_resolve_locked(tree, ino, &e);
	*flags = 0;
	if (!r && !e.slot && (e.n->flags & CFS_NF_IMMUTABLE))
		*flags |= CLASSFS_FL_IMMUTABLE;
	if (!r && !e.slot && (e.n->flags & CFS_NF_APPEND))
		*flags |= CLASSFS_FL_APPEND;
	cfs_unlock(tree);
	return r;
}

/**
 * classfs_set_flags() - set the inode flags of entry @ino, as chattr does
 * @tree: the tree
 * @ino: the entry: a stored value (a file made through the filesystem, a
 *       loaded or published attribute value) for CLASSFS_FL_IMMUTABLE, a
 *       file made through the filesystem for CLASSFS_FL_APPEND; any entry
 *       for none
 * @flags: CLASSFS_FL_IMMUTABLE, CLASSFS_FL_APPEND, both, or 0
 *
 * An immutable file is not written, truncated, chmod-ed, removed nor
 * renamed, nor replaced by a rename, through the filesystem calls
 * (classfs_write(), classfs_truncate(), classfs_chmod(),
 * classfs_unlink(), classfs_rename(): -EPERM), whoever asks, as on
 * Linux; an append-only one is the same but for classfs_write(), which
 * writes at its end whatever the offset.  Its device's removal, the
 * publisher's calls and classfs_tree_remove_plain() still remove or
 * change it.  Who may set the flags is the caller's to decide (the FUSE
 * view: the tree's owner or root, the kernel having checked
 * CAP_LINUX_IMMUTABLE).
 * Return: 0, -EINVAL (NULL), -ENOENT, -EOPNOTSUPP (another flag, or a
 * flag on an entry that cannot have it).
 */
int classfs_set_flags(struct classfs_tree *tree, uint64_t ino, unsigned int flags)
{
	struct cfs_entry e;
	int r;

	if (!tree)
		return -EINVAL;
	if (flags & ~(CLASSFS_FL_IMMUTABLE | CLASSFS_FL_APPEND))
		return -EOPNOTSUPP;
	cfs_lock(tree);
	r = cfs_resolve_locked(tree, ino, &e);
	if (r)
		goto out;
	if (!flags) {
		if (!e.slot)
			e.n->flags &= (uint16_t)~CFS_NF_PINNED;
	} else if (e.slot || !(e.n->flags & CFS_NF_VALUE) ||
		   ((flags & CLASSFS_FL_APPEND) &&
		    (!(e.n->flags & CFS_NF_PLAIN) || e.n->type != CFS_NT_BIN))) {
		r = -EOPNOTSUPP;	/* append: a file's, not an attribute replaced whole */
	} else if (cfs_node_going(e.n)) {
		r = -ENOENT;
	} else {
		e.n->flags &= (uint16_t)~CFS_NF_PINNED;
		if (flags & CLASSFS_FL_IMMUTABLE)
			e.n->flags |= CFS_NF_IMMUTABLE;
		if (flags & CLASSFS_FL_APPEND)
			e.n->flags |= CFS_NF_APPEND;
	}
out:
	cfs_unlock(tree);
	return r;
}

/* ---- a device placed where a directory was made: it takes it over (exact.c) ---- */

/**
 * cfs_plain_adoptable() - may @dev, about to be added, take over @p, the
 * entry of its name in the directory it goes in?  (under L)
 * @p: a directory made through the filesystem holding data only, none of
 *     it named like one of @dev's computed entries (umockdev's tests make
 *     /sys/devices/system/cpu/cpufreq, then a record's cpu0 needs
 *     /sys/devices/system, an unrecorded ancestor, as a device)
 * @dev: the device, its directory empty
 */
bool cfs_plain_adoptable(const struct classfs_node *p, const struct classfs_device *dev)
{
	if (p->type != CFS_NT_DIR || !(p->flags & CFS_NF_PLAIN) ||
	    !(p->flags & CFS_NF_PLAIN_DIR) || dev->p.node.u.dir || !cfs_plain_only_data(p))
		return false;
	if (p->u.dir)
		for (struct classfs_node *c = cfs_htab_first_from(p->u.dir, &cfs_node_htab_ops, 0); c;
		     c = cfs_htab_next(p->u.dir, &cfs_node_htab_ops, c))
			if (cfs_name_is_virtual(dev, c->name))
				return false;
	return true;
}

/* ---- the tree as new: every plain entry removed (a testbed's reset) ---- */

struct plain_ids {
	uint32_t (*v)[2];	/* id, generation */
	size_t n, cap;
};

/* does @n hold only data: values, publishers' links, plain directories? (under L) */
bool cfs_plain_only_data(const struct classfs_node *n)
{
	if (!(n->flags & (CFS_NF_VALUE | CFS_NF_USER_LINK | CFS_NF_PLAIN_DIR)) ||
	    (n->flags & CFS_NF_DEVICE))
		return false;
	if (n->type == CFS_NT_DIR && n->u.dir)
		for (struct classfs_node *c = cfs_htab_first_from(n->u.dir, &cfs_node_htab_ops, 0); c;
		     c = cfs_htab_next(n->u.dir, &cfs_node_htab_ops, c))
			if (!cfs_plain_only_data(c))
				return false;
	return true;
}

/*
 * Under L: the topmost plain entries below @dir that hold nothing but
 * data, in @ids; below the others, look further.  Return: 0, -ENOMEM.
 */
static int plain_collect_locked(struct classfs_tree *t, const struct classfs_node *dir,
				struct plain_ids *ids)
{
	if (dir->type != CFS_NT_DIR || !dir->u.dir)
		return 0;
	for (struct classfs_node *c = cfs_htab_first_from(dir->u.dir, &cfs_node_htab_ops, 0); c;
	     c = cfs_htab_next(dir->u.dir, &cfs_node_htab_ops, c)) {
		int r;

		/* devices/virtual taken over for devices (placement.c) stays the tree's */
		if (!(c->flags & CFS_NF_PLAIN) || c == t->virtual_dir || !cfs_plain_only_data(c)) {
			r = plain_collect_locked(t, c, ids);
			if (r < 0)
				return r;
			continue;
		}
		if (ids->n == ids->cap) {
			size_t cap = ids->cap ? 2 * ids->cap : 64;
			void *v = cfs_realloc(ids->v, cap * sizeof(ids->v[0]));

			if (!v)
				return -ENOMEM;
			ids->v = v;
			ids->cap = cap;
		}
		ids->v[ids->n][0] = c->id;
		ids->v[ids->n++][1] = c->gen;
	}
	return 0;
}

/* under L: show again every computed entry hidden below @dir */
static void plain_unhide_locked(struct classfs_tree *t, const struct classfs_node *dir)
{
	static const char *const names[] = { "dev", "subsystem", "device" };

	if (dir->type != CFS_NT_DIR || !dir->u.dir)
		return;
	for (struct classfs_node *c = cfs_htab_first_from(dir->u.dir, &cfs_node_htab_ops, 0); c;
	     c = cfs_htab_next(dir->u.dir, &cfs_node_htab_ops, c)) {
		if (c->flags & CFS_NF_DEVICE) {
			struct classfs_device *dev = cfs_node_device(c);

			if (cfs_dev_state(dev, CFS_DS_HIDE_ALL)) {
				unsigned int bits = CFS_DS_HIDE_ALL | CFS_DS_UNINDEXED;

				/* its name taken meanwhile: it stays out of the index */
				if (cfs_dev_state(dev, CFS_DS_UNINDEXED) &&
				    cfs_class_lookup_locked(dev->cls, c->name))
					bits &= ~(unsigned int)(CFS_DS_HIDE_ALIAS | CFS_DS_UNINDEXED);
				cfs_dev_state_clear(dev, bits);
				for (size_t i = 0; i < CFS_ARRAY_SIZE(names); i++)
					cfs_watch_entry_locked(t, c, 0, names[i]);
				cfs_watch_device_locked(t, dev);
			}
		}
		plain_unhide_locked(t, c);
	}
}

/**
 * classfs_tree_remove_plain() - return @tree's entries to what the API made
 * @tree: the tree
 *
 * Removes every file, directory and symlink made through the filesystem
 * (classfs_create(), classfs_mkdir(), classfs_symlink()) that holds
 * nothing but data (values, publishers' links, plain directories: a
 * directory a device was since placed in stays, its plain contents go),
 * and shows again every computed entry classfs_unlink() hid (a class
 * link too, its device back in the name index, unless another device of
 * the class took the name meanwhile).  Devices,
 * classes and what their publishers added are left alone.
 * Return: 0, -EINVAL (NULL), -ENOMEM (nothing changed).
 */
int classfs_tree_remove_plain(struct classfs_tree *tree)
{
	struct plain_ids ids = { 0 };
	int r;

	if (!tree)
		return -EINVAL;
	cfs_lock(tree);
	r = plain_collect_locked(tree, &tree->root, &ids);
	if (!r) {
		plain_unhide_locked(tree, &tree->root);
		cfs_unhide_all_locked(tree);
	}
	cfs_unlock(tree);
	for (size_t i = 0; !r && i < ids.n; i++) {
		struct classfs_node *n, *freelist = NULL;

		cfs_lock(tree);
		/* gone meanwhile (with its device, or by another call): its id moved on */
		n = cfs_node_by_id(tree, ids.v[i][0]);
		if (n && n->gen == ids.v[i][1] && !(n->flags & CFS_NF_DEAD))
			(void)cfs_node_remove_locked(tree, n, &freelist);
		cfs_unlock(tree);
		cfs_free_list(freelist);
	}
	cfs_free(ids.v);
	cfs_watch_sync(tree);
	return r;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * plain-rename.c - moving a file, directory or symlink made through the
 * filesystem (or any stored value, publisher's link or plain directory:
 * plain.c says which entries are data) to another name or directory,
 * replacing what the new name held, as rename(2) does.  "Write a
 * temporary file, rename it over the old one" is how many programs save
 * a file.
 *
 * The node moves: its inode number stays, so open files and the
 * kernel's cached inode follow it.  A new name is allocated before L is
 * taken; the entry it replaces is removed first (which may wait for
 * running reads of it, L released), and then everything is checked again.
 */
#include "internal.h"

#define RENAME_NOREPLACE_FLAG 1u	/* renameat2()'s RENAME_NOREPLACE */

/* is @n @anc or below it? */
static bool is_below(const struct classfs_node *n, const struct classfs_node *anc)
{
	for (; n; n = n->parent)
		if (n == anc)
			return true;
	return false;
}

struct rename_req {
	uint64_t dir, newdir;
	const char *name, *newname;
	unsigned int flags;
	char *copy;			/* @newname, for the node (NULL: taken) */
};

/*
 * Under L: check the rename; *@src the node to move, *@to the directory
 * it goes to, *@victim what the new name holds now (to remove first).
 */
static int rename_check_locked(struct classfs_tree *t, const struct rename_req *rq,
			       struct classfs_node **src, struct classfs_node **to,
			       struct classfs_node **victim)
{
	struct cfs_entry d, nd, e, o;
	int r;

	*victim = NULL;
	r = cfs_resolve_locked(t, rq->dir, &d);
	if (!r)
		r = cfs_resolve_locked(t, rq->newdir, &nd);
	if (r)
		return r;
	if (d.slot || nd.slot)
		return -EPERM;	/* a named group's directory: computed */
	if (d.n->type != CFS_NT_DIR || nd.n->type != CFS_NT_DIR)
		return -ENOTDIR;
	r = cfs_lookup_locked(t, &d, rq->name, &e);
	if (r)
		return r;
	if (e.slot)
		return -EPERM;
	if (cfs_node_going(e.n))
		return -ENOENT;	/* removed with its device: it stays for the removal */
	r = cfs_plain_movable(e.n);
	if (r)
		return r;
	if (e.n->flags & CFS_NF_PINNED)
		return -EPERM;
	/* devices/virtual taken over, a directory a device was placed in: the devices' */
	if (e.n == t->virtual_dir || !cfs_plain_only_data(e.n))
		return -EBUSY;
	if (cfs_node_going(nd.n))
		return -ENOENT;
	if (e.n->type == CFS_NT_DIR && is_below(nd.n, e.n))
		return -EINVAL;
	*src = e.n;
	*to = nd.n;
	r = cfs_lookup_locked(t, &nd, rq->newname, &o);
	if (r == -ENOENT)
		return 0;
	if (r)
		return r;
	if (!o.slot && o.n == e.n)
		return 1;	/* the same entry: nothing to do */
	if (rq->flags & RENAME_NOREPLACE_FLAG)
		return -EEXIST;
	if (o.slot)
		return -EPERM;	/* a computed entry: unlink it first */
	r = cfs_plain_movable(o.n);
	if (r)
		return r;
	if (o.n->flags & CFS_NF_PINNED)
		return -EPERM;
	if (o.n == t->virtual_dir)
		return -EBUSY;
	if (o.n->type == CFS_NT_DIR && e.n->type != CFS_NT_DIR)
		return -EISDIR;
	if (o.n->type != CFS_NT_DIR && e.n->type == CFS_NT_DIR)
		return -ENOTDIR;
	if (o.n->type == CFS_NT_DIR && o.n->u.dir && o.n->u.dir->count)
		return -ENOTEMPTY;
	*victim = o.n;
	return 0;
}

/* under L, checked: move @n into @to as rq->newname; cannot fail once @to is reserved */
static const char *rename_move_locked(struct rename_req *rq, struct classfs_node *n,
				      struct classfs_node *to)
{
	const char *old = NULL;

	cfs_watch_moved_locked(cfs_node_tree(n));
	if (n->parent == to)
		cfs_dir_unlink_keep(n);
	else
		cfs_dir_unlink(n);
	if (strcmp(n->name, rq->newname)) {
		if (n->flags & CFS_NF_OWN_NAME)
			old = n->name;
		n->name = rq->copy;
		rq->copy = NULL;
		n->flags |= CFS_NF_OWN_NAME;
		n->hash = cfs_hash_name(n->name);
		if (n->flags & CFS_NF_VALUE)
			cfs_value_set_name_mode(n);
	}
	cfs_dir_link(to, n);
	return old;
}

/**
 * classfs_rename() - move entry @name of directory @dir to @newname in @newdir
 * @tree: the tree
 * @dir: the entry's directory (inode number)
 * @name: the entry: a stored value, a publisher's link or a plain directory
 * @newdir: the directory it goes to
 * @newname: its new name
 * @flags: 0, or 1 (RENAME_NOREPLACE: -EEXIST when @newname exists)
 *
 * What @newname held is replaced when it is of the same kind and data
 * too (a directory only when empty).  A directory moves with what is in
 * it.  Moving an entry in or out of a device's directory makes it part
 * of that device or no longer (a record of the device saves it or not).
 * Return: 0, -EINVAL (NULL, bad name, unknown @flags, RENAME_EXCHANGE, a
 * directory into itself), -ENOENT, -ENOTDIR, -EISDIR, -ENOTEMPTY,
 * -EEXIST, -EBUSY (a device's directory), -EPERM (code, computed
 * entries, directories the tree makes, an immutable or append-only file
 * either side),
 * -ENOMEM, -EDEADLK.
 */
int classfs_rename(struct classfs_tree *tree, uint64_t dir, const char *name, uint64_t newdir,
		   const char *newname, unsigned int flags)
{
	struct rename_req rq = { dir, newdir, name, newname, flags, NULL };
	struct classfs_node *src, *to, *victim, *freelist = NULL;
	const char *old = NULL;
	int r, tries = 0;

	if (!tree || !name || !newname || (flags & ~RENAME_NOREPLACE_FLAG))
		return -EINVAL;
	r = classfs_name_valid(newname);
	if (r < 0)
		return r;
	rq.copy = cfs_strdup(newname);
	if (!rq.copy)
		return -ENOMEM;
	cfs_lock(tree);
	for (;;) {
		r = rename_check_locked(tree, &rq, &src, &to, &victim);
		if (r != 0 || !victim)
			break;
		/* may wait for its readers, L released: then look again */
		r = cfs_node_remove_locked(tree, victim, &freelist);
		if (r < 0 || ++tries > 8)
			break;
	}
	if (r == 0 && !victim)
		r = cfs_dir_reserve(to);
	if (r == 0 && !victim)
		old = rename_move_locked(&rq, src, to);
	else if (r == 0)
		r = -EBUSY;	/* replaced again and again meanwhile */
	cfs_unlock(tree);
	cfs_watch_sync(tree);
	cfs_free_list(freelist);
	cfs_free((void *)old);
	cfs_free(rq.copy);
	return r < 0 ? r : 0;
}

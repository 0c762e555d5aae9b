// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * walk.c - visiting every class and every device of a tree, for printers,
 * record export and shutdown.  The set is taken under L with a reference
 * on each member; the caller's function runs with no lock held, so it may
 * call back into the API (and even remove what it visits).
 */
#include "internal.h"

struct ptr_vec {
	void **v;
	size_t n, cap;
};

static int vec_push(struct ptr_vec *vec, void *p)
{
	if (vec->n == vec->cap) {
		size_t cap = vec->cap ? 2 * vec->cap : 64;
		void **v = cfs_realloc(vec->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		vec->v = v;
		vec->cap = cap;
	}
	vec->v[vec->n++] = p;
	return 0;
}

int classfs_tree_for_each_class(struct classfs_tree *tree,
				int (*fn)(struct classfs_class *cls, void *data), void *data)
{
	struct ptr_vec vec = { 0 };
	size_t i;
	int r = 0;

	if (!tree || !fn)
		return -EINVAL;
	cfs_lock(tree);
	for (struct classfs_class *c = tree->classes; c && !r; c = c->p.next)
		r = vec_push(&vec, classfs_class_get(c));
	cfs_unlock(tree);
	if (r < 0) {
		for (i = 0; i < vec.n; i++)
			classfs_class_put(vec.v[i]);
		cfs_free(vec.v);
		return r;
	}
	for (i = 0; i < vec.n && !r; i++)
		r = fn(vec.v[i], data);
	for (i = 0; i < vec.n; i++)
		classfs_class_put(vec.v[i]);
	cfs_free(vec.v);
	return r;
}

static void mark(struct classfs_device *dev, bool on)
{
	if (on)
		__atomic_or_fetch(&dev->p.state, CFS_DS_MARK, __ATOMIC_RELAXED);
	else
		__atomic_and_fetch(&dev->p.state, ~(unsigned int)CFS_DS_MARK, __ATOMIC_RELAXED);
}

/* push @dev after its nesting parent and its physical device (under L) */
static int collect_device(struct ptr_vec *vec, struct classfs_device *dev, int depth)
{
	int r = 0;

	if (cfs_dev_state(dev, CFS_DS_MARK) || !cfs_dev_alive(dev))
		return 0;
	if (depth > 64)
		return -ELOOP;
	mark(dev, true);
	if (dev->parent)
		r = collect_device(vec, dev->parent, depth + 1);
	if (r == 0 && dev->phys)
		r = collect_device(vec, dev->phys, depth + 1);
	if (r == 0)
		r = vec_push(vec, dev);
	if (r == 0)
		classfs_device_get(dev);
	else
		mark(dev, false);
	return r;
}

/* every device node below @n, depth first (under L) */
static int collect_dir(struct ptr_vec *vec, struct classfs_node *n)
{
	int r = 0;

	if (n->flags & CFS_NF_DEVICE)
		r = collect_device(vec, cfs_node_device(n), 0);
	if (r < 0 || n->type != CFS_NT_DIR || !n->u.dir || !n->u.dir->buckets)
		return r;
	for (struct classfs_node *c = cfs_htab_first_from(n->u.dir, &cfs_node_htab_ops, 0);
	     c && r == 0; c = cfs_htab_next(n->u.dir, &cfs_node_htab_ops, c))
		if (c->type == CFS_NT_DIR)
			r = collect_dir(vec, c);
	return r;
}

int classfs_tree_for_each_device(struct classfs_tree *tree,
				 int (*fn)(struct classfs_device *dev, void *data), void *data)
{
	struct ptr_vec vec = { 0 };
	size_t i;
	int r;

	if (!tree || !fn)
		return -EINVAL;
	cfs_lock(tree);
	r = collect_dir(&vec, &tree->root);
	/* the marks are only for this walk, which holds L throughout */
	for (i = 0; i < vec.n; i++)
		mark(vec.v[i], false);
	cfs_unlock(tree);
	for (i = 0; i < vec.n && r == 0; i++)
		r = fn(vec.v[i], data);
	for (i = 0; i < vec.n; i++)
		classfs_device_put(vec.v[i]);
	cfs_free(vec.v);
	return r;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * tree.c - trees, their fixed directories and files, the default tree.
 */
#include "internal.h"

static ssize_t seqnum_show(struct classfs_tree *t, char *buf)
{
	return snprintf(buf, CLASSFS_ATTR_MAX, "%llu\n",
			(unsigned long long)classfs_tree_seqnum(t));
}

static const struct cfs_tree_attr uevent_seqnum_attr = {
	.name = "uevent_seqnum",
	.mode = 0444,
	.show = seqnum_show,
};

static struct classfs_node *tree_file(struct classfs_tree *t, struct classfs_node *dir,
				      const struct cfs_tree_attr *a)
{
	struct classfs_node *n = cfs_node_new(a->name, CFS_NT_REG, a->mode);

	if (!n)
		return NULL;
	n->flags |= CFS_NF_TREEATTR;
	n->u.attr = a;
	if (cfs_node_add(t, dir, n) < 0) {
		cfs_node_free(n);
		return NULL;
	}
	return n;
}

static int tree_populate(struct classfs_tree *t)
{
	struct classfs_node *r = &t->root;

	if (!(t->class_dir = cfs_mkdir(t, r, "class")) ||
	    !(t->devices_dir = cfs_mkdir(t, r, "devices")) ||
	    !(t->block_dir = cfs_mkdir(t, r, "block")) ||
	    !(t->bus_dir = cfs_mkdir(t, r, "bus")) ||
	    !(t->dev_dir = cfs_mkdir(t, r, "dev")) ||
	    !(t->dev_block = cfs_mkdir(t, t->dev_dir, "block")) ||
	    !(t->dev_char = cfs_mkdir(t, t->dev_dir, "char")) ||
	    !(t->kernel_dir = cfs_mkdir(t, r, "kernel")) ||
	    !tree_file(t, t->kernel_dir, &uevent_seqnum_attr) ||
	    !tree_file(t, t->kernel_dir, &cfs_uevent_helper_attr))
		return -ENOMEM;
	if (t->layout == CLASSFS_LAYOUT_DEVICES &&
	    !(t->virtual_dir = cfs_mkdir(t, t->devices_dir, "virtual")))
		return -ENOMEM;
	return 0;
}

/*
 * The tree's own directories go (a tree nobody else holds: being made or
 * freed).  Under L all the same: the unlinking is the same code as for
 * live trees, and it states that rule.
 */
static void tree_release_nodes(struct classfs_tree *t)
{
	struct classfs_node *freelist = NULL;
	struct classfs_node *c;

	cfs_lock(t);
	while (t->root.u.dir && (c = cfs_htab_first_from(t->root.u.dir, &cfs_node_htab_ops, 0)))
		cfs_subtree_unlink(t, c, &freelist);
	cfs_unlock(t);
	cfs_free_list(freelist);
}

struct classfs_tree *classfs_tree_new(enum classfs_layout layout)
{
	struct classfs_tree *t;
	int r;

	if (layout != CLASSFS_LAYOUT_CLASS && layout != CLASSFS_LAYOUT_DEVICES) {
		errno = EINVAL;
		return NULL;
	}
	t = cfs_zalloc(sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->evlock, NULL);
	pthread_cond_init(&t->drained, NULL);
	pthread_cond_init(&t->removed, NULL);
	pthread_cond_init(&t->intf_free, NULL);
	pthread_cond_init(&t->intf_idle, NULL);
	pthread_cond_init(&t->renamed, NULL);
	pthread_cond_init(&t->evcond, NULL);
	t->layout = layout;
	t->evq_tail = &t->evq_head;
	t->next_listener_id = 1;
	t->free_head = t->free_tail = UINT32_MAX;
	cfs_node_init(&t->root, "", CFS_NT_DIR, 0755, 0);
	/* no one else sees @t yet, but the node code's rule is L held */
	cfs_lock(t);
	r = cfs_node_id_alloc(t, &t->root);
	if (r == 0)
		r = tree_populate(t);
	cfs_unlock(t);
	if (r < 0) {
		tree_release_nodes(t);
		cfs_node_free(&t->root);
		cfs_free(t->ids);
		cfs_free(t);
		errno = ENOMEM;
		return NULL;
	}
	return t;
}

int classfs_tree_free(struct classfs_tree *t)
{
	if (!t || t->default_tree)
		return -EINVAL;
	cfs_lock(t);
	if (t->classes || t->buses || t->ndevices) {
		cfs_unlock(t);
		return -EBUSY;
	}
	cfs_unhide_all_locked(t);
	cfs_unlock(t);
	cfs_events_deliver(t);
	cfs_helper_stop(t);
	tree_release_nodes(t);
	cfs_free_list(t->graveyard);
	cfs_node_free(&t->root);
	cfs_htab_destroy(&t->devts);
	cfs_free(t->ids);
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->evlock);
	pthread_cond_destroy(&t->drained);
	pthread_cond_destroy(&t->removed);
	pthread_cond_destroy(&t->intf_free);
	pthread_cond_destroy(&t->intf_idle);
	pthread_cond_destroy(&t->renamed);
	pthread_cond_destroy(&t->evcond);
	cfs_free(t);
	return 0;
}

enum classfs_layout classfs_tree_layout(const struct classfs_tree *t)
{
	return t->layout;
}

size_t classfs_tree_node_count(struct classfs_tree *t)
{
	size_t n;

	cfs_lock(t);
	n = t->live_nodes;
	cfs_unlock(t);
	return n;
}

uint64_t classfs_tree_seqnum(struct classfs_tree *t)
{
	uint64_t s;

	pthread_mutex_lock(&t->evlock);
	s = t->seqnum;
	pthread_mutex_unlock(&t->evlock);
	return s;
}

static pthread_mutex_t default_lock = PTHREAD_MUTEX_INITIALIZER;
static struct classfs_tree *default_tree;
static enum classfs_layout default_layout = CLASSFS_LAYOUT_CLASS;

struct classfs_tree *classfs_default_tree(void)
{
	struct classfs_tree *t = __atomic_load_n(&default_tree, __ATOMIC_ACQUIRE);

	if (t)
		return t;
	pthread_mutex_lock(&default_lock);
	t = default_tree;
	if (!t) {
		t = classfs_tree_new(default_layout);
		if (t) {
			t->default_tree = true;
			__atomic_store_n(&default_tree, t, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&default_lock);
	return t;
}

int classfs_set_default_layout(enum classfs_layout layout)
{
	int r = 0;

	if (layout != CLASSFS_LAYOUT_CLASS && layout != CLASSFS_LAYOUT_DEVICES)
		return -EINVAL;
	pthread_mutex_lock(&default_lock);
	if (default_tree && default_tree->layout != layout) {
		struct classfs_tree *t = default_tree;

		cfs_lock(t);
		if (t->ndevices || t->classes || t->buses) {
			r = -EBUSY;
		} else {
			/* empty: switch the layout of its fixed directories */
			struct classfs_node *freelist = NULL, *c;

			while (t->root.u.dir &&
			       (c = cfs_htab_first_from(t->root.u.dir, &cfs_node_htab_ops, 0)))
				cfs_subtree_unlink(t, c, &freelist);
			cfs_free_list(freelist);
			t->virtual_dir = NULL;
			t->layout = layout;
			r = tree_populate(t);
		}
		cfs_unlock(t);
	}
	if (!r)
		default_layout = layout;
	pthread_mutex_unlock(&default_lock);
	return r;
}

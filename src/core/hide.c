// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * hide.c - a device's computed attributes unlinked through the
 * filesystem (plain.c): the attributes of its class's and type's groups,
 * which are code shared by every device of the kind (a recorded
 * attribute is one, record/shape.c), so hiding one for one device is
 * kept beside the tree, as (node id, generation, slot).  The fixed
 * entries (`dev`, `subsystem`, ...) hide with a state bit of the device
 * instead (CFS_DS_HIDE_*).
 *
 * Few are expected (a test breaking a tree on purpose): a vector under
 * L, searched linearly, and a process-wide count so that trees without
 * any pay one atomic load per directory lookup.  Entries of removed
 * devices are dropped when the next one is added (their ids moved on),
 * and all at classfs_tree_remove_plain() and when the tree goes.
 */
#include "internal.h"

static int cfs_hidden_trees;	/* trees holding hidden entries */

/* may any tree hold hidden entries?  (no lock: a hint, checked again under L) */
bool cfs_hide_any(void)
{
	return __atomic_load_n(&cfs_hidden_trees, __ATOMIC_ACQUIRE) != 0;
}

/* under L: is computed entry @slot of device node @n hidden? */
bool cfs_hidden_locked(const struct classfs_tree *t, const struct classfs_node *n,
		       unsigned int slot)
{
	cfs_assert_held((struct classfs_tree *)t);
	for (size_t i = 0; i < t->nhidden; i++)
		if (t->hidden[i].id == n->id && t->hidden[i].slot == slot &&
		    t->hidden[i].gen == n->gen)
			return true;
	return false;
}

/* under L: forget the entries whose device went (its id is free or reused) */
static void hide_prune_locked(struct classfs_tree *t)
{
	size_t j = 0;

	for (size_t i = 0; i < t->nhidden; i++) {
		struct classfs_node *n = cfs_node_by_id(t, t->hidden[i].id);

		if (n && n->gen == t->hidden[i].gen && !(n->flags & CFS_NF_DEAD))
			t->hidden[j++] = t->hidden[i];
	}
	t->nhidden = j;
}

/**
 * cfs_hide_locked() - hide computed entry @slot of device node @n (under L)
 * Return: 0 or -ENOMEM.
 */
int cfs_hide_locked(struct classfs_tree *t, const struct classfs_node *n, unsigned int slot)
{
	cfs_assert_held(t);
	hide_prune_locked(t);
	if (t->nhidden == t->hidden_cap) {
		size_t cap = t->hidden_cap ? 2 * t->hidden_cap : 8;
		struct cfs_hidden *v = cfs_realloc(t->hidden, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->hidden = v;
		t->hidden_cap = cap;
	}
	if (!t->nhidden)
		__atomic_add_fetch(&cfs_hidden_trees, 1, __ATOMIC_RELEASE);
	t->hidden[t->nhidden++] = (struct cfs_hidden){ n->id, n->gen, slot };
	return 0;
}

/* under L: the views learn that hidden entry @h shows again */
static void unhide_watch_locked(struct classfs_tree *t, const struct cfs_hidden *h)
{
	struct classfs_node *n = cfs_node_by_id(t, h->id);
	const struct classfs_attribute_group *grp;
	const struct classfs_device_attribute *text;
	const struct classfs_bin_attribute *bin;
	const struct classfs_attribute *a;
	unsigned int g = cfs_slot_group(h->slot);

	if (!n || n->gen != h->gen || (n->flags & CFS_NF_DEAD) || !(n->flags & CFS_NF_DEVICE))
		return;
	grp = cfs_vgroup(cfs_node_device(n), g);
	a = grp ? cfs_group_attr(grp, cfs_slot_attr(h->slot), &text, &bin) : NULL;
	if (a)
		cfs_watch_entry_locked(t, n, grp->name ? cfs_group_slot(g, CFS_SLOT_GROUP_DIR) : 0,
				       a->name);
}

/* show every hidden computed attribute again (under L), the views told */
void cfs_unhide_all_locked(struct classfs_tree *t)
{
	cfs_assert_held(t);
	for (size_t i = 0; i < t->nhidden; i++)
		unhide_watch_locked(t, &t->hidden[i]);
	if (t->nhidden)
		__atomic_sub_fetch(&cfs_hidden_trees, 1, __ATOMIC_RELEASE);
	cfs_free(t->hidden);
	t->hidden = NULL;
	t->nhidden = t->hidden_cap = 0;
}

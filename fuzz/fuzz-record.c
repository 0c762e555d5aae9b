// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-record.c - umockdev record files from anywhere.  A refused record
 * leaves the tree as it was and says why; an accepted one saves, loads
 * again into a second tree and saves to the same bytes; unloading empties
 * both trees to the nodes they started with.  Every input in both layouts.
 *
 * The trees live as long as the process: made once per layout, emptied
 * after each input, not made and torn down four times an input.  That a
 * tree is back to its first node count after each input is checked, so an
 * input that leaves anything behind fails itself, not a later one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfs/record.h"
#include "classfs-internal/testing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* a tree kept across inputs, and its node count when empty */
struct kept {
	struct classfs_tree *t;
	size_t nodes;
};

static struct kept kept[2][2];	/* [layout][first, second] */

static struct kept *kept_tree(enum classfs_layout layout, int which)
{
	struct kept *k = &kept[layout == CLASSFS_LAYOUT_DEVICES][which];

	if (!k->t) {
		k->t = classfs_tree_new(layout);
		if (!k->t)
			abort();
		k->nodes = classfs_tree_node_count(k->t);
	}
	return k;
}

static char *save(struct classfs_tree *t, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f || classfs_record_save(t, NULL, f) < 0)
		abort();
	fclose(f);
	return buf;
}

/* unload what @k's tree holds: it must be as empty as it was made */
static void unload(struct kept *k)
{
	classfs_record_unload(k->t);
	if (classfs_tree_node_count(k->t) != k->nodes)
		abort();
}

static void one_layout(enum classfs_layout layout, const char *data, size_t size)
{
	struct classfs_record_error err = { .line = 0 };
	struct kept *k = kept_tree(layout, 0), *k2;
	size_t len1, len2;
	uint64_t seq = classfs_tree_seqnum(k->t);
	char *s1, *s2;
	int r;

	r = classfs_record_load(k->t, data, size, NULL, &err);
	if (r < 0) {
		if (classfs_tree_node_count(k->t) != k->nodes || classfs_tree_seqnum(k->t) != seq)
			abort();
		if (r == -EINVAL && !err.reason[0])
			abort();
		unload(k);
		return;
	}
	s1 = save(k->t, &len1);
	k2 = kept_tree(layout, 1);
	if (classfs_record_load(k2->t, s1, len1, NULL, &err) < 0)
		abort();
	s2 = save(k2->t, &len2);
	if (len1 != len2 || memcmp(s1, s2, len1))
		abort();
	free(s1);
	free(s2);
	unload(k2);
	unload(k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_layout(CLASSFS_LAYOUT_CLASS, (const char *)data, size);
	one_layout(CLASSFS_LAYOUT_DEVICES, (const char *)data, size);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-record.c - umockdev record files from anywhere.  A refused record
 * leaves the tree as it was and says why; an accepted one saves, loads
 * again into a fresh tree and saves to the same bytes; unloading empties
 * the tree.  Every input in both layouts.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfs/record.h"
#include "classfs-internal/testing.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *save(struct classfs_tree *t, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f || classfs_record_save(t, NULL, f) < 0)
		abort();
	fclose(f);
	return buf;
}

static void unload(struct classfs_tree *t)
{
	classfs_record_unload(t);
	if (classfs_tree_free(t) < 0)
		abort();
}

static void one_layout(enum classfs_layout layout, const char *data, size_t size)
{
	struct classfs_record_error err = { .line = 0 };
	struct classfs_tree *t, *t2;
	size_t nodes, len1, len2;
	char *s1, *s2;
	int r;

	t = classfs_tree_new(layout);
	if (!t)
		return;
	nodes = classfs_tree_node_count(t);
	r = classfs_record_load(t, data, size, NULL, &err);
	if (r < 0) {
		if (classfs_tree_node_count(t) != nodes || classfs_tree_seqnum(t) != 0)
			abort();
		if (r == -EINVAL && !err.reason[0])
			abort();
		unload(t);
		return;
	}
	s1 = save(t, &len1);
	t2 = classfs_tree_new(layout);
	if (!t2 || classfs_record_load(t2, s1, len1, NULL, &err) < 0)
		abort();
	s2 = save(t2, &len2);
	if (len1 != len2 || memcmp(s1, s2, len1))
		abort();
	free(s1);
	free(s2);
	unload(t2);
	unload(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one_layout(CLASSFS_LAYOUT_CLASS, (const char *)data, size);
	one_layout(CLASSFS_LAYOUT_DEVICES, (const char *)data, size);
	return 0;
}

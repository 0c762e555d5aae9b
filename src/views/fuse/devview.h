/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devview.h - the devtmpfs-style view of a tree, shared by its table
 * (devview.c: what /dev holds, built from the tree) and its requests
 * (devview-ops.c).
 */
#ifndef CLASSFS_FUSE_DEVVIEW_H
#define CLASSFS_FUSE_DEVVIEW_H

#include "fuse-internal.h"

#define FIXED_TIMEOUT 86400.0

struct dv_entry {
	char *path;			/* "" for the root, "input/event5" */
	const char *name;		/* the last component of @path */
	uint64_t ino, parent;
	mode_t mode;			/* type and permission bits */
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	char *target;			/* a link's text */
	unsigned char *data;		/* a regular file's bytes */
	size_t len;
	bool fixed;			/* never changes: cached by the kernel */
};

/* the inode number a name keeps while its file type does */
struct dv_ino {
	char *path;
	mode_t type;
	uint64_t ino;
};

/* one build of the view: the entries, found by path and by inode */
struct dv_table {
	struct dv_entry **e;
	size_t n, cap;
	void *by_path, *by_ino;		/* tsearch() trees of struct dv_entry */
};

struct cfs_devview {
	struct classfs_tree *tree;
	pthread_mutex_t lock;		/* the table, the inode numbers */
	uint64_t changes;		/* the tree's changes so far (atomic) */
	uint64_t built;			/* @changes the table was built at */
	bool have_table;
	struct dv_table t;
	void *inos;			/* struct dv_ino, kept across rebuilds */
	uint64_t next_ino;
	time_t mtime;
};


struct dv_table *cfs_devview_current(struct cfs_devview *dv);
struct dv_entry *cfs_devview_by_path(const struct dv_table *t, const char *path);
struct dv_entry *cfs_devview_by_ino(const struct dv_table *t, uint64_t ino);

#endif

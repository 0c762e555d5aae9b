/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record-node.h - the /dev side of loaded records, from the record view
 * (src/views/record/udevdb.c) to the two views that make a /dev of it:
 * the devtmpfs-style mount (src/views/fuse/devview.c, behind the public
 * classfs_mount_devtmpfs()) and classfs-run's /dev (src/run/devfs.c).
 *
 * In-library interface (see fs.h beside it): not installed, not exported.
 */
#ifndef CLASSFS_INTERNAL_RECORD_NODE_H
#define CLASSFS_INTERNAL_RECORD_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "classfs/classfs.h"

/**
 * struct classfs_record_node - the /dev entry of a loaded device
 * @syspath: the device's Linux path ("/devices/...").
 * @devname: the node's path ("/dev/input/event5").
 * @block: a block device node (else a character device node).
 * @devt: its number (0 when the record had none).
 * @mode: permission bits (E: DEVMODE when recorded, else 0666).
 * @contents: the bytes of `N: name=HEX` (NULL, 0 when none).
 * @symlinks: @nsymlinks `S:` links, relative to /dev.
 */
struct classfs_record_node {
	const char *syspath;
	const char *devname;
	bool block;
	dev_t devt;
	mode_t mode;
	const unsigned char *contents;
	size_t contents_len;
	const char *const *symlinks;
	size_t nsymlinks;
};

/**
 * classfs_record_for_each_node() - call @fn for each loaded device that has
 * a device node (N:, E: DEVNAME or a device number), parents first; stops at
 * a non-zero return, which it returns.  @fn's argument lives until it returns.
 */
int classfs_record_for_each_node(struct classfs_tree *tree,
				 int (*fn)(const struct classfs_record_node *node, void *data),
				 void *data);

#endif

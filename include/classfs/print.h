/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * print.h - a tree and its devices for people, scripts and Graphviz.
 *
 * Printers take a snapshot of the tree (every class and device, with a
 * reference held) and print it with no lock held, so a tree that changes
 * meanwhile is printed as it was when the snapshot was taken, minus
 * devices removed before they were reached.  Siblings are sorted by name
 * so the same tree always prints the same.  Formats: docs/json.md.
 */
#ifndef CLASSFS_PRINT_H
#define CLASSFS_PRINT_H

#include <stdio.h>

#include "classfs.h"

#ifdef __cplusplus
extern "C" {
#endif

/** enum classfs_print_format - what a printer writes */
enum classfs_print_format {
	CLASSFS_PRINT_TEXT,	/* indented tree, for people */
	CLASSFS_PRINT_JSON,	/* one JSON document (json-c), docs/json.md */
	CLASSFS_PRINT_DOT,	/* Graphviz: `dot -Tsvg` renders it */
};

/**
 * classfs_tree_print() - print every class, class device and physical
 * device of @tree
 * @tree: the tree.
 * @fmt: the format.
 * @out: where to print.
 *
 * TEXT: "class NAME" per class, its devices indented below it and
 * nested devices below their parents (two spaces per level), each with
 * its devt, DEVTYPE and physical device; then "devices" and the
 * physical devices, children below parents.
 * JSON: {"layout", "seqnum", "classes": [{"name", "devices": [...]}],
 * "devices": [...]}, each device with its "children".
 * DOT: one cluster per class, nesting as solid edges parent -> child,
 * physical parents as dashed edges physical device -> device.
 *
 * Return: 0, -EINVAL (NULL argument, unknown format), -ENOMEM, or -EIO
 * when writing to @out failed.
 */
CLASSFS_PUBLIC int classfs_tree_print(struct classfs_tree *tree, enum classfs_print_format fmt,
				      FILE *out);

/**
 * classfs_device_print_info() - print what is known about one device
 * @dev: an added device.
 * @fmt: the format.
 * @out: where to print.
 *
 * Name, class, DEVPATH, syspath (the devices layout's path), parent,
 * physical parent, devt, DEVTYPE, the variables of its `uevent` file,
 * its attributes with their values and its links, all read through the
 * path API (so as a reader of the filesystem sees them).  DOT draws the
 * device with its ancestors, physical parent and children.
 *
 * Return: 0, -EINVAL (NULL argument, device not added, unknown format),
 * -ENOMEM, -EIO.
 */
CLASSFS_PUBLIC int classfs_device_print_info(struct classfs_device *dev,
					     enum classfs_print_format fmt, FILE *out);

#ifdef __cplusplus
}
#endif
#endif

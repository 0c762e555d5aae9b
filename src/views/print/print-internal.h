/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * print-internal.h - the snapshot the printers share.
 */
#ifndef CLASSFS_PRINT_INTERNAL_H
#define CLASSFS_PRINT_INTERNAL_H

#include <stdbool.h>
#include <stdio.h>

#include <json-c/json.h>

#include "classfs/print.h"
#include "util.h"

#define CFS_NONE ((size_t)-1)

/* one device as the snapshot saw it; strings are the snapshot's own */
struct cfs_pdev {
	struct classfs_device *dev;	/* referenced until the snapshot is freed */
	char *devpath;
	char *syspath;
	const char *name;		/* the last component of @devpath */
	const char *cls;		/* class name; NULL for a physical device */
	const char *devtype;		/* NULL: none */
	const char *bus;		/* NULL: none */
	size_t parent, phys;		/* indexes in the snapshot, or CFS_NONE */
	size_t child, next;		/* first child, next sibling (sorted by name) */
	bool has_devt;
	unsigned int major, minor;
};

struct cfs_pclass {
	const char *name;
	size_t first;			/* first top-level device, sorted; CFS_NONE */
};

struct cfs_psnap {
	struct classfs_tree *tree;
	struct cfs_pdev *dev;
	size_t ndev, devcap;
	struct classfs_class **clsref;	/* referenced classes */
	struct cfs_pclass *cls;		/* sorted by name */
	size_t ncls, clscap;
	size_t phys_first;		/* first top-level physical device; CFS_NONE */
};

/* take a snapshot of @tree; 0 or -errno (nothing held on error) */
int cfs_psnap_take(struct classfs_tree *tree, struct cfs_psnap *s);
void cfs_psnap_free(struct cfs_psnap *s);
/* is the device at @i the top of its own list (class or /devices)? */
bool cfs_psnap_is_root(const struct cfs_psnap *s, size_t i);

/* "MAJ:MIN" of a device, "" when it has none */
void cfs_pdev_devt(const struct cfs_pdev *d, char *buf, size_t size);

int cfs_print_text(const struct cfs_psnap *s, FILE *out);
int cfs_print_json(const struct cfs_psnap *s, FILE *out);
int cfs_print_dot(const struct cfs_psnap *s, FILE *out);

/* one device's info (info.c), in TEXT or JSON */
int cfs_print_info(struct classfs_device *dev, enum classfs_print_format fmt, FILE *out);
/* one device's neighbourhood in DOT (dot.c) */
int cfs_print_info_dot(struct classfs_device *dev, FILE *out);

/* json-c helpers: add to @o (util.h: cfs_json_add()), a string or null; -ENOMEM */
int cfs_json_add_str(struct json_object *o, const char *key, const char *s);
/* print @o followed by a newline; 0 or -EIO */
int cfs_json_print(struct json_object *o, FILE *out);

/* 0, or -EIO when @out failed */
int cfs_print_finish(FILE *out);

#endif

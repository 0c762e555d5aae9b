/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * bytes.h - the bytes an attribute stores: the core's value storage
 * (src/core/bytes.c), used by its value nodes (value.c) and by the record
 * view's shaped attributes (src/views/record/shape.c).  They start in
 * their owner's allocation and move to a buffer of their own, from the
 * core's allocator, when a write makes them longer.
 *
 * Locking: each struct cfs_bytes is guarded by one of a few striped
 * mutexes (by its address): a reader copies out under it, a writer swaps
 * a new buffer in under it and frees the old one after, so a reader sees
 * the old bytes or the new, never a mix.  The stripes are the core's
 * (libclassfs.so holds the only copy).
 *
 * In-library interface (see fs.h beside it): not installed, not exported.
 */
#ifndef CLASSFS_INTERNAL_BYTES_H
#define CLASSFS_INTERNAL_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classfs/classfs.h"

struct cfs_bytes {
	char *data;
	uint32_t len;
	uint32_t cap;		/* CFS_BYTES_OWN: data is an allocation of its own */
};

#define CFS_BYTES_OWN 0x80000000u
#define CFS_BYTES_MAX (CFS_BYTES_OWN - 1)	/* longest bytes (2 GiB - 1) */

/* @len bytes of @src copied to @inl (at least @len bytes of the owner's) */
void cfs_bytes_init(struct cfs_bytes *b, char *inl, const void *src, size_t len);
/* up to @count bytes from @off into @buf; how many */
size_t cfs_bytes_read(struct cfs_bytes *b, char *buf, size_t off, size_t count);
/* the length now */
size_t cfs_bytes_len(struct cfs_bytes *b);
/*
 * Make @buf[@count] the bytes at @off, those after kept (@truncate false:
 * a binary file's write) or dropped (true: a text attribute's store);
 * a gap before @off is zeros.  Return: 0, -EFBIG past CFS_BYTES_MAX, -ENOMEM.
 */
int cfs_bytes_put(struct cfs_bytes *b, const char *buf, size_t count, size_t off, bool truncate);
/* free the buffer it grew into, if any (its owner goes) */
void cfs_bytes_free(struct cfs_bytes *b);

/**
 * struct cfs_stored_attr - a device text attribute whose value is bytes
 * the tree keeps (a recorded value), not code: its show() and store() are
 * cfs_stored_show() and cfs_stored_store() (or NULL), which read and
 * replace the bytes @bytes finds for a device.  The core knows such an
 * attribute by its show(): stat reports the value's length, and a view
 * may keep the value cached until the tree reports a change (watch.h:
 * value), since only the tree's own calls change it.
 */
struct cfs_stored_attr {
	struct classfs_device_attribute def;
	struct cfs_bytes *(*bytes)(struct classfs_device *dev, const struct cfs_stored_attr *a);
};

ssize_t cfs_stored_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			char *buf);
ssize_t cfs_stored_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 const char *buf, size_t count);
/* @a's bytes when it is a stored attribute of @dev (show() cfs_stored_show()), else NULL */
struct cfs_bytes *cfs_stored_bytes(struct classfs_device *dev,
				   const struct classfs_device_attribute *a);

#endif

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

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ioctl-tree.h - umockdev's ioctl trees inside src/devio: the requests
 * the format knows (ioctl-tree.c), a tree's nodes, and the pieces
 * ioctl-file.c puts together (the tree's replay, ioctl-replay.c; SPI
 * logs, spi.c).
 *
 * A tree is what `umockdev-record --ioctl` writes: one line per distinct
 * answer, "NAME RET DATA", indented one space under the line it followed
 * (a URB read in answer to the URB written before it).  Replay walks it
 * in that order from the last line that answered, so a program asking
 * the same questions in the recorded order gets the recorded answers.
 */
#ifndef CFS_DEVIO_IOCTL_TREE_H
#define CFS_DEVIO_IOCTL_TREE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/ioctl.h>

#include "classfs-internal/devio.h"

/* ChromeOS EC (include/uapi/linux/cros_ec_chardev.h, not in every libc's headers) */
#define CROS_EC_CMD_HDR 20 /* version, command, outsize, insize, result */
#define CROS_EC_DEV_IOCXCMD_V2 _IOC(_IOC_READ | _IOC_WRITE, 0xEC, 0, CROS_EC_CMD_HDR)
#define CROS_EC_DEV_IOCEVENTMASK_V2 _IO(0xEC, 2)

enum ioctl_kind {
	IK_NOSTATE,	/* answered without the tree: success or an errno */
	IK_SIMPLE,	/* the recorded bytes are copied to the argument */
	IK_VARLEN,	/* cros_ec: a header whose insize gives the length */
	IK_URB,		/* REAPURB(NDELAY): a URB and its buffer */
	IK_SUBMIT,	/* SUBMITURB: answered by the URB nodes, never recorded */
};

/**
 * struct ioctl_type - a request the format knows
 * @id: its request number (for a range, the first; for a length given by
 *      the data, umockdev's arbitrary 32)
 * @nr_range: how many numbers past @id's are the same request with an
 *            index (EVIOCGABS(abs), EVIOCGBIT(ev))
 * @kind: how it is answered
 * @err: IK_NOSTATE: the errno of its answer, 0 for success
 * @name: its name in the file
 */
struct ioctl_type {
	unsigned long id;
	unsigned int nr_range;
	enum ioctl_kind kind;
	int err;
	const char *name;
};

/* what a REAPURB line holds of the URB (struct usbdevfs_urb's fields) */
struct urb_rec {
	unsigned char type, endpoint;
	int status;
	unsigned int flags;
	int buffer_length, actual_length, error_count;
};

/**
 * struct ioctl_node - one line of a tree
 * @type: its request
 * @id: the request it answers (@type's with the index and the data's
 *      length folded in: EVIOCGNAME(256) answers only a 256 byte buffer)
 * @depth: its indentation
 * @ret: the recorded result
 * @urb: IK_URB: the URB's fields
 * @data: IK_SIMPLE, IK_VARLEN: the argument's bytes; IK_URB: the buffer's
 *        (fewer than buffer_length: the rest are zeros)
 * @len: bytes at @data
 * @child: the first line indented under it
 * @tail: the last of those (where a recorder appends)
 * @next: the next line at its own depth
 * @parent: the line it is indented under
 * @all: the next node the tree allocated (freed in one loop)
 */
struct ioctl_node {
	const struct ioctl_type *type;
	unsigned long id;
	int depth;
	int ret;
	struct urb_rec urb;
	uint8_t *data;
	size_t len;
	struct ioctl_node *child, *tail, *next, *parent, *all;
};

/**
 * struct cfs_ioctl_tree - a tree: parsed, or built by a recorder
 * @root: the first top-level line (NULL: empty)
 * @top_tail: the last top-level line
 * @last_reap: the REAPURB line a recorder added or met last (the parent
 *             of the URBs read next)
 * @nodes: every node, newest first
 */
struct cfs_ioctl_tree {
	struct ioctl_node *root, *top_tail, *last_reap, *nodes;
};

const struct ioctl_type *ioctl_type_by_id(unsigned long id);
void ioctl_describe(unsigned long request, char *buf, size_t size);
struct ioctl_node *ioctl_node_next(const struct ioctl_node *n);
int ioctl_tree_parse(const char *text, size_t len, const char *name,
		     struct cfs_ioctl_tree **out, char *msg, size_t msgsize);

/* ioctl-replay.c: a handler replaying @t (it takes @t, also on failure) */
int ioctl_tree_handler(struct cfs_ioctl_tree *t, const char *name,
		       struct cfs_ioctl_handler *out);

/* spi.c: an SPI log (the whole file, "@DEV ... (SPI)" line included) */
int spi_text_load(const char *text, size_t len, const char *name,
		  struct cfs_ioctl_handler *out, char *msg, size_t msgsize);

/* a request as the kernel sees it: 32 bits, whatever long holds */
static inline unsigned long ioctl_req32(unsigned long request)
{
	return request & 0xffffffffUL;
}

#endif

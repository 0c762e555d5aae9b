// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ioctl-replay.c - an ioctl tree replayed: the handler that answers a
 * program's ioctl() of an emulated node from a umockdev recording, with
 * umockdev's rules (its IoctlTreeHandler and ioctl_tree_execute()):
 *
 * - the search starts after the line that answered last and goes round
 *   the whole tree once, so a program asking in the recorded order gets
 *   the recorded answers, and one asking the same question again gets
 *   the next answer recorded for it; each open() of the node starts it
 *   from the top again (umockdev keeps the position per client);
 * - a line answers a request with its number, the length included: the
 *   recorded bytes are the argument's, the recorded result the call's;
 * - USBDEVFS_SUBMITURB is answered by a REAPURB line recording the same
 *   URB (type, endpoint, flags, length, and an OUT URB's bytes), and the
 *   next REAPURB(NDELAY) hands it back filled in from that line; a reap
 *   with nothing submitted is EAGAIN, and does not move the position;
 * - a request the tree does not answer is ENOENT for evdev ('E'), whose
 *   callers probe for what a device has, ENOTTY for anything else.
 *
 * Beyond umockdev (which asserts on a second SUBMITURB before a reap and
 * answers DISCARDURB ENOTTY): submitted URBs queue and are reaped in
 * order, and a discarded one is reaped with status -ENOENT, as the
 * kernel does, so libusb's cancellation works; and a control URB reading
 * from the device replays (see control_in()).  The queue is the
 * handler's, not a static as umockdev's: each node replays on its own.
 */
#include <endian.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <linux/usbdevice_fs.h>

#include "ioctl-tree.h"

/* the kernel's default usbfs_memory_mb: no recording holds larger URBs */
#define URB_MAX (16u << 20)
/* a control URB's buffer starts with its setup packet */
#define USB_SETUP 8

/* a URB a program submitted, until it reaps it */
struct pending_urb {
	uint64_t addr;			/* the program's struct usbdevfs_urb */
	uint64_t buffer;		/* its buffer */
	const struct ioctl_node *node;	/* the line that answers it */
	bool discarded;
};

struct replay {
	struct cfs_ioctl_tree *tree;
	const struct ioctl_node *last;
	unsigned long opens;		/* the node's open()s when @last was set */
	struct pending_urb *pending;
	size_t npending, cap_pending;
	struct cfs_once logged;		/* the requests reported missing */
	char name[];
};

/* what a call's argument holds, read before any line answers it */
struct call_args {
	struct usbdevfs_urb urb;	/* SUBMITURB: the program's URB */
	uint8_t *buf;			/* ... and its buffer */
	uint32_t ec_insize;		/* cros_ec: the answer's room */
};

static int grow(void **v, size_t *cap, size_t n, size_t elem)
{
	size_t c = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return 0;
	p = reallocarray(*v, c, elem);
	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = c;
	return 0;
}

/* once per request: a user extends the recording, not reads a flood */
static void log_missing(struct replay *r, const struct cfs_ioctl_call *call, unsigned long req)
{
	char desc[64];

	if (!cfs_once(&r->logged, req))
		return;
	ioctl_describe(req, desc, sizeof(desc));
	cfs_devio_log("%s: ioctl 0x%lx (%s, size %u) is not in the recording %s",
		      call->node ? call->node : "?", req, desc, (unsigned int)_IOC_SIZE(req), r->name);
}

/*
 * umockdev reads a known request's argument before looking for its
 * answer: a bad pointer is EFAULT whether or not the tree answers it
 */
static int read_args(const struct ioctl_type *type, unsigned long req,
		     const struct cfs_ioctl_call *call, struct call_args *a)
{
	uint8_t hdr[CROS_EC_CMD_HDR];
	size_t size = _IOC_SIZE(req);
	void *scratch;
	int err;

	switch (type->kind) {
	case IK_SUBMIT:
		err = cfs_mem_read(call->mem, call->arg, &a->urb, sizeof(a->urb));
		if (err)
			return err;
		if (a->urb.buffer_length < 0)
			return -EINVAL;
		if ((unsigned int)a->urb.buffer_length > URB_MAX)
			return -ENOMEM;
		if (!a->urb.buffer_length)
			return 0;
		a->buf = malloc((size_t)a->urb.buffer_length);
		if (!a->buf)
			return -ENOMEM;
		return cfs_mem_read(call->mem, (uintptr_t)a->urb.buffer, a->buf,
				    (size_t)a->urb.buffer_length);
	case IK_VARLEN:
		err = cfs_mem_read(call->mem, call->arg, hdr, sizeof(hdr));
		memcpy(&a->ec_insize, hdr + 12, sizeof(a->ec_insize));
		a->ec_insize = le32toh(a->ec_insize);
		return err;
	default:
		/* IK_URB: the reaped URB's pointer; IK_SIMPLE: the buffer */
		if (!size)
			return 0;
		scratch = malloc(size);
		if (!scratch)
			return -ENOMEM;
		err = cfs_mem_read(call->mem, call->arg, scratch, size);
		free(scratch);
		return err;
	}
}

static bool urb_in(const struct urb_rec *u)
{
	return u->endpoint & 0x80;
}

/*
 * a control URB reading from the device (the setup packet's direction
 * bit): its buffer is the setup packet, then the answer.  It goes to
 * endpoint 0, an OUT endpoint by number, so the recording holds its whole
 * buffer as after the call, answer included; umockdev compares all of
 * it with the program's buffer (never the same: the answer is not there
 * yet) and copies nothing back, so no such URB replays there.  Here the
 * setup packet is compared and the answer copied back.
 */
static bool control_in(const struct ioctl_node *n)
{
	return n->urb.type == USBDEVFS_URB_TYPE_CONTROL && n->urb.buffer_length >= USB_SETUP &&
	       n->len && (n->data[0] & 0x80);
}

/* does line @n record the URB the program submits? */
static bool submit_matches(const struct ioctl_node *n, const struct call_args *a)
{
	const struct urb_rec *u = &n->urb;
	size_t cmp = (size_t)u->buffer_length;

	if (u->type != a->urb.type || u->endpoint != a->urb.endpoint ||
	    u->flags != a->urb.flags || u->buffer_length != a->urb.buffer_length)
		return false;
	/* an IN URB's buffer is the device's to fill, whatever it holds now */
	if (urb_in(u) || !u->buffer_length)
		return true;
	if (control_in(n))
		cmp = USB_SETUP;
	for (size_t i = 0; i < cmp; i++)
		if (a->buf[i] != (i < n->len ? n->data[i] : 0))
			return false;
	return true;
}

/* the device's bytes of a reaped URB: where in the buffer, how many */
static size_t urb_answer(const struct ioctl_node *n, int actual, size_t *at)
{
	size_t len = (size_t)actual;

	*at = 0;
	if (control_in(n)) {
		*at = USB_SETUP;
		if (len > (size_t)n->urb.buffer_length - USB_SETUP)
			len = (size_t)n->urb.buffer_length - USB_SETUP;
		return len;
	}
	return urb_in(&n->urb) ? len : 0;
}

/* the oldest submitted URB handed back, filled in from its line */
static int reap(struct replay *r, const struct cfs_ioctl_call *call)
{
	const struct pending_urb *p = &r->pending[0];
	const struct urb_rec *u = &p->node->urb;
	int status = u->status, actual = u->actual_length, errors = u->error_count;
	const struct cfs_mem *m = call->mem;
	uintptr_t ptr = (uintptr_t)p->addr;
	size_t len, at;
	int err = 0;

	if (p->discarded) {
		/* what the kernel reports of an URB unlinked before it completed */
		status = -ENOENT;
		actual = errors = 0;
	} else if ((len = urb_answer(p->node, actual, &at))) {
		uint8_t *buf = calloc(1, len);

		if (!buf)
			return -ENOMEM;
		if (p->node->len > at)
			memcpy(buf, p->node->data + at,
			       p->node->len - at < len ? p->node->len - at : len);
		err = cfs_mem_write(m, p->buffer + at, buf, len);
		free(buf);
	}
	if (!err)
		err = cfs_mem_write(m, p->addr + offsetof(struct usbdevfs_urb, status), &status,
				    sizeof(status));
	if (!err)
		err = cfs_mem_write(m, p->addr + offsetof(struct usbdevfs_urb, actual_length),
				    &actual, sizeof(actual));
	if (!err)
		err = cfs_mem_write(m, p->addr + offsetof(struct usbdevfs_urb, error_count),
				    &errors, sizeof(errors));
	/* REAPURB's argument is where the reaped URB's address goes */
	if (!err)
		err = cfs_mem_write(m, call->arg, &ptr, sizeof(ptr));
	if (err)
		return err;
	r->npending--;
	memmove(r->pending, r->pending + 1, r->npending * sizeof(*r->pending));
	return 0;
}

/*
 * line @n answering @req: 0 (it does not), 1 (it does: the position
 * moves to it), 2 (it does, the position stays), or -errno of the
 * program's memory; *@ret the call's result
 */
static int execute(struct replay *r, const struct ioctl_node *n, unsigned long req,
		   const struct cfs_ioctl_call *call, const struct call_args *a, int dflt,
		   long *ret)
{
	size_t len;
	int err;

	switch (n->type->kind) {
	case IK_SIMPLE:
		if (req != n->id)
			return 0;
		err = cfs_mem_write(call->mem, call->arg, n->data, n->len);
		if (err)
			return err;
		*ret = n->ret < 0 ? -dflt : n->ret;
		return 1;
	case IK_VARLEN:
		if (req != n->id)
			return 0;
		/* the recorded answer, as far as the program's command has room */
		len = n->len;
		if (len > CROS_EC_CMD_HDR + (size_t)a->ec_insize)
			len = CROS_EC_CMD_HDR + (size_t)a->ec_insize;
		err = cfs_mem_write(call->mem, call->arg, n->data, len);
		if (err)
			return err;
		*ret = n->ret < 0 ? -dflt : n->ret;
		return 1;
	case IK_URB:
		if (req == ioctl_req32(USBDEVFS_SUBMITURB)) {
			if (!submit_matches(n, a))
				return 0;
			err = grow((void **)&r->pending, &r->cap_pending, r->npending,
				   sizeof(*r->pending));
			if (err)
				return err;
			r->pending[r->npending++] = (struct pending_urb){
				.addr = call->arg, .buffer = (uintptr_t)a->urb.buffer, .node = n };
			*ret = 0;
			return 1;
		}
		if (req != n->type->id)
			return 0;
		if (!r->npending) {
			*ret = -EAGAIN;
			return 2;
		}
		err = reap(r, call);
		if (err)
			return err;
		*ret = 0;
		return 2;
	default:
		return 0;
	}
}

/* USBDEVFS_DISCARDURB: its argument is the URB's address itself */
static long discard(struct replay *r, uint64_t urb)
{
	for (size_t i = 0; i < r->npending; i++) {
		if (r->pending[i].addr == urb && !r->pending[i].discarded) {
			r->pending[i].discarded = true;
			return 0;
		}
	}
	return -EINVAL;
}

static const struct ioctl_node *next_wrap(const struct replay *r, const struct ioctl_node *n)
{
	const struct ioctl_node *next = n ? ioctl_node_next(n) : NULL;

	return next ? next : r->tree->root;
}

static long replay_ioctl(void *data, const struct cfs_ioctl_call *call)
{
	struct replay *r = data;
	unsigned long req = ioctl_req32(call->request);
	const struct ioctl_type *type = ioctl_type_by_id(req);
	int dflt = _IOC_TYPE(req) == 'E' ? ENOENT : ENOTTY;
	const struct ioctl_node *i, *root = r->tree->root;
	struct call_args a = { .buf = NULL };
	long ret = -dflt;
	int handled;

	/* opened again since: a new open file's search starts at the top (pending URBs stay) */
	if (call->opens != r->opens) {
		r->opens = call->opens;
		r->last = NULL;
	}
	if (type && type->kind == IK_NOSTATE)
		return -type->err;
	if (req == ioctl_req32(USBDEVFS_DISCARDURB))
		return discard(r, call->arg);
	if (type) {
		handled = read_args(type, req, call, &a);
		if (handled) {
			ret = handled;
			goto out;
		}
	}
	if (!root)
		goto missing;
	for (i = next_wrap(r, r->last);; i = next_wrap(r, i)) {
		handled = execute(r, i, req, call, &a, dflt, &ret);
		if (handled < 0) {
			ret = handled;
			goto out;
		}
		if (handled) {
			if (handled == 1)
				r->last = i;
			goto out;
		}
		/* round once: from the line after the last answer back to it */
		if (i == r->last || (!r->last && next_wrap(r, i) == root))
			break;
	}
missing:
	log_missing(r, call, req);
	ret = -dflt;
out:
	free(a.buf);
	return ret;
}

static void replay_free(void *data)
{
	struct replay *r = data;

	if (!r)
		return;
	cfs_ioctl_tree_free(r->tree);
	free(r->pending);
	cfs_once_free(&r->logged);
	free(r);
}

/**
 * ioctl_tree_handler() - a handler answering from tree @t
 * @t: a parsed tree; the handler's from now on (freed with it, or here
 *     on failure).
 * @name: the recording's file name, for the log line of a missing ioctl.
 * @out: filled in.
 *
 * Return: 0 or -ENOMEM.
 */
int ioctl_tree_handler(struct cfs_ioctl_tree *t, const char *name,
		       struct cfs_ioctl_handler *out)
{
	size_t len = strlen(name) + 1;
	struct replay *r = calloc(1, sizeof(*r) + len);

	if (!r) {
		cfs_ioctl_tree_free(t);
		return -ENOMEM;
	}
	r->tree = t;
	memcpy(r->name, name, len);
	*out = (struct cfs_ioctl_handler){ .ioctl = replay_ioctl, .free = replay_free, .data = r };
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * record.c - a recorder's side of a program's ioctl(): the call is made
 * again on the recorder's side (an "execute" callback: the recorder's
 * copy of the program's descriptor, or a replay in a unit test) with
 * the argument copied out of the program's memory, the results copied
 * back, and what succeeded added to an ioctl tree, as umockdev-record's
 * IoctlTreeRecorder does.
 *
 * Why the copies: the recorder is another process.  The kernel reads and
 * writes the argument in the caller's memory, so each pointer an ioctl
 * follows must point into ours when we make the call.  Requests carry
 * their size (_IOC_SIZE); those that hold pointers of their own are
 * known here one by one (usbdevfs URBs, transfers, cros_ec commands).
 * A request we cannot copy (no size, an argument that is no readable
 * address) is CFS_IOCTL_PASS: the program's own call goes to the kernel
 * unchanged on the same open file, and is not recorded - the format
 * could not hold it anyway.
 *
 * usbdevfs URBs: the kernel hands a reaped URB back by the address it
 * was submitted with, and fills in its buffer only at the reap, in the
 * reaper's memory.  So a URB is submitted, reaped and discarded here
 * only: a copy (struct and buffer) is kept from SUBMITURB to its reap,
 * and the reap's address is translated back to the program's, whose URB
 * then gets the status, lengths and buffer of the copy.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/usbdevice_fs.h>

#include "ioctl-tree.h"

/* the kernel's default usbfs_memory_mb: no URB is larger */
#define URB_MAX (16u << 20)
/* a cros_ec command's data (the kernel's limit is smaller) */
#define CROS_EC_MAX (64u << 10)
/* iso packets of one URB (the kernel's limit: 128) */
#define ISO_MAX 128

/* a URB the program submitted, until it is reaped */
struct rec_urb {
	struct rec_urb *next;
	uint64_t prog;			/* the program's struct usbdevfs_urb */
	uint64_t prog_buffer;		/* ... and its buffer */
	struct usbdevfs_urb *urb;	/* ours, what the kernel sees; iso packets follow */
	size_t urb_size;
	uint8_t *buf;			/* ours */
};

struct cfs_ioctl_recorder {
	pthread_mutex_t lock;		/* everything below; never held across a call */
	struct cfs_ioctl_tree *tree;
	struct rec_urb *urbs;
	struct cfs_once logged;		/* requests reported as not recordable */
	int err;			/* the first error of adding (-ENOMEM) */
};

/**
 * cfs_ioctl_recorder_new() - a recorder adding to @tree
 * @tree: what was recorded before (cfs_ioctl_file_tree()), the
 *        recorder's from now on (freed here on failure); NULL: an empty
 *        tree.
 *
 * Return: the recorder, NULL when out of memory.
 */
struct cfs_ioctl_recorder *cfs_ioctl_recorder_new(struct cfs_ioctl_tree *tree)
{
	struct cfs_ioctl_recorder *r = calloc(1, sizeof(*r));

	if (!r) {
		cfs_ioctl_tree_free(tree);
		return NULL;
	}
	r->tree = tree ? tree : cfs_ioctl_tree_new();
	if (!r->tree) {
		free(r);
		return NULL;
	}
	pthread_mutex_init(&r->lock, NULL);
	return r;
}

static void urb_free(struct rec_urb *u)
{
	free(u->urb);
	free(u->buf);
	free(u);
}

/**
 * cfs_ioctl_recorder_free() - free @r, its tree and the URBs not reaped
 * @r: a recorder, or NULL.
 */
void cfs_ioctl_recorder_free(struct cfs_ioctl_recorder *r)
{
	struct rec_urb *u, *next;

	if (!r)
		return;
	for (u = r->urbs; u; u = next) {
		next = u->next;
		urb_free(u);
	}
	cfs_ioctl_tree_free(r->tree);
	cfs_once_free(&r->logged);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/**
 * cfs_ioctl_recorder_write() - the tree recorded so far, as umockdev-record
 *                              writes it
 * @r: the recorder.
 * @dev: the node recorded, for the "@DEV" first line (NULL: none).
 * @f: where to.
 *
 * Return: 0; the first error of recording (-ENOMEM: calls are missing);
 * -EIO when @f failed.
 */
int cfs_ioctl_recorder_write(struct cfs_ioctl_recorder *r, const char *dev, FILE *f)
{
	int err;

	pthread_mutex_lock(&r->lock);
	err = cfs_ioctl_tree_write(r->tree, dev, f);
	if (!err)
		err = r->err;
	pthread_mutex_unlock(&r->lock);
	return err;
}

/* add a call that succeeded to the tree; a request the format lacks is logged once */
static void add(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		unsigned long req, const void *arg, size_t len, long result)
{
	char desc[64];
	int err;

	pthread_mutex_lock(&r->lock);
	err = cfs_ioctl_tree_add(r->tree, req, arg, len, result);
	if (err == -EOPNOTSUPP) {
		if (!cfs_once(&r->logged, req))
			goto out;
		ioctl_describe(req, desc, sizeof(desc));
		cfs_devio_log("%s: ioctl 0x%lx (%s) is none of umockdev's ioctl format: made, not "
			      "recorded", call->node ? call->node : "?", req, desc);
	} else if (err && !r->err) {
		r->err = err;
	}
out:
	pthread_mutex_unlock(&r->lock);
}

/* ---- usbdevfs ---- */

static int submit(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		  cfs_record_exec_fn exec, void *ctx, long *ret)
{
	struct usbdevfs_urb head;
	struct rec_urb *u, **p;
	size_t niso = 0;
	int err;

	err = cfs_mem_read(call->mem, call->arg, &head, sizeof(head));
	if (err)
		return err;
	if (head.buffer_length < 0)
		return -EINVAL;
	if ((unsigned int)head.buffer_length > URB_MAX)
		return -ENOMEM;
	if (head.type == USBDEVFS_URB_TYPE_ISO) {
		if (head.number_of_packets < 0 || head.number_of_packets > ISO_MAX)
			return -EINVAL;
		niso = (size_t)head.number_of_packets;
	}
	u = calloc(1, sizeof(*u));
	if (!u)
		return -ENOMEM;
	u->urb_size = sizeof(head) + niso * sizeof(struct usbdevfs_iso_packet_desc);
	u->urb = malloc(u->urb_size);
	u->buf = malloc(head.buffer_length ? (size_t)head.buffer_length : 1);
	err = -ENOMEM;
	if (!u->urb || !u->buf)
		goto fail;
	/* the iso packets' lengths come after the struct */
	err = cfs_mem_read(call->mem, call->arg, u->urb, u->urb_size);
	if (!err)
		err = cfs_mem_read(call->mem, (uintptr_t)head.buffer, u->buf,
				   (size_t)head.buffer_length);
	if (err)
		goto fail;
	u->prog = call->arg;
	u->prog_buffer = (uintptr_t)head.buffer;
	u->urb->buffer = u->buf;
	/*
	 * in the list before the kernel has it: another thread of the
	 * program may reap it the moment it completes
	 */
	pthread_mutex_lock(&r->lock);
	u->next = r->urbs;
	r->urbs = u;
	pthread_mutex_unlock(&r->lock);
	*ret = exec(ctx, USBDEVFS_SUBMITURB, (uintptr_t)u->urb);
	if (*ret >= 0)
		return 0;
	pthread_mutex_lock(&r->lock);
	for (p = &r->urbs; *p; p = &(*p)->next)
		if (*p == u) {
			*p = u->next;
			break;
		}
	pthread_mutex_unlock(&r->lock);
	urb_free(u);
	return 0;
fail:
	urb_free(u);
	return err;
}

/* the URB we submitted at @ours (taken off the list), NULL when none */
static struct rec_urb *take_urb(struct cfs_ioctl_recorder *r, uint64_t ours)
{
	struct rec_urb **p, *u = NULL;

	pthread_mutex_lock(&r->lock);
	for (p = &r->urbs; *p; p = &(*p)->next)
		if ((uintptr_t)(*p)->urb == ours) {
			u = *p;
			*p = u->next;
			break;
		}
	pthread_mutex_unlock(&r->lock);
	return u;
}

static int reap(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		unsigned long req, cfs_record_exec_fn exec, void *ctx, long *ret)
{
	const struct cfs_mem *m = call->mem;
	struct usbdevfs_urb done;
	struct rec_urb *u;
	uint8_t *rec;
	size_t len;
	void *ours = NULL;
	int err;

	*ret = exec(ctx, req, (uintptr_t)&ours);
	if (*ret < 0)
		return 0;
	u = take_urb(r, (uintptr_t)ours);
	if (!u) {
		/* not one of ours: nothing of the program's to fill in */
		cfs_devio_log("%s: a reaped URB was never submitted here", call->node);
		*ret = -EIO;
		return 0;
	}
	/* the program's URB as the kernel would leave it: its own pointers, our results */
	done = *u->urb;
	done.buffer = (void *)(uintptr_t)u->prog_buffer;
	err = cfs_mem_write(m, u->prog_buffer, u->buf, (size_t)u->urb->buffer_length);
	if (!err) {
		/* the iso packets' results too */
		memcpy(u->urb, &done, sizeof(done));
		err = cfs_mem_write(m, u->prog, u->urb, u->urb_size);
	}
	if (!err)
		err = cfs_mem_write(m, call->arg, &u->prog, sizeof(u->prog));
	if (err)
		goto out;
	/* what the tree holds: the reaped struct and its buffer */
	len = sizeof(done) + (size_t)done.buffer_length;
	rec = malloc(len);
	if (rec) {
		memcpy(rec, &done, sizeof(done));
		memcpy(rec + sizeof(done), u->buf, (size_t)done.buffer_length);
		add(r, call, req, rec, len, *ret);
		free(rec);
	} else {
		pthread_mutex_lock(&r->lock);
		r->err = r->err ? r->err : -ENOMEM;
		pthread_mutex_unlock(&r->lock);
	}
out:
	urb_free(u);
	return err;
}

/* DISCARDURB's argument is the URB's address itself: ours instead */
static int discard(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		   cfs_record_exec_fn exec, void *ctx, long *ret)
{
	uintptr_t ours = 0;

	pthread_mutex_lock(&r->lock);
	for (struct rec_urb *u = r->urbs; u; u = u->next)
		if (u->prog == call->arg) {
			ours = (uintptr_t)u->urb;
			break;
		}
	pthread_mutex_unlock(&r->lock);
	/* the kernel's answer to a URB it does not know */
	*ret = ours ? exec(ctx, USBDEVFS_DISCARDURB, ours) : -EINVAL;
	return 0;
}

/*
 * CONTROL, BULK: a struct with a data pointer and its length; @dir_in
 * whether the data comes from the device
 */
static int transfer(const struct cfs_ioctl_call *call, unsigned long req, void *s, void **data,
		    size_t len, bool dir_in, cfs_record_exec_fn exec, void *ctx, long *ret)
{
	uint64_t prog = (uintptr_t)*data;
	uint8_t *buf;
	int err;

	buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	err = cfs_mem_read(call->mem, prog, buf, len);
	if (err)
		goto out;
	*data = buf;
	*ret = exec(ctx, req, (uintptr_t)s);
	*data = (void *)(uintptr_t)prog;
	if (*ret > 0 && dir_in)
		err = cfs_mem_write(call->mem, prog, buf,
				    (size_t)*ret < len ? (size_t)*ret : len);
out:
	free(buf);
	return err;
}

static int control(const struct cfs_ioctl_call *call, cfs_record_exec_fn exec, void *ctx,
		   long *ret)
{
	struct usbdevfs_ctrltransfer c;
	int err = cfs_mem_read(call->mem, call->arg, &c, sizeof(c));

	if (err)
		return err;
	return transfer(call, USBDEVFS_CONTROL, &c, &c.data, c.wLength,
			c.bRequestType & 0x80, exec, ctx, ret);
}

static int bulk(const struct cfs_ioctl_call *call, cfs_record_exec_fn exec, void *ctx, long *ret)
{
	struct usbdevfs_bulktransfer b;
	int err = cfs_mem_read(call->mem, call->arg, &b, sizeof(b));

	if (err)
		return err;
	if (b.len > URB_MAX)
		return -EINVAL;
	return transfer(call, USBDEVFS_BULK, &b, &b.data, b.len, b.ep & 0x80, exec,
			ctx, ret);
}

/* USBDEVFS_IOCTL: an ioctl to an interface's driver, its argument by pointer */
static int usb_ioctl(const struct cfs_ioctl_call *call, cfs_record_exec_fn exec, void *ctx,
		     long *ret)
{
	struct usbdevfs_ioctl io;
	int err = cfs_mem_read(call->mem, call->arg, &io, sizeof(io));

	if (err)
		return err;
	/* no data, or a size only its direction tells */
	if (_IOC_DIR((unsigned int)io.ioctl_code) == _IOC_NONE || !io.data) {
		io.data = NULL;
		*ret = exec(ctx, USBDEVFS_IOCTL, (uintptr_t)&io);
		return 0;
	}
	return transfer(call, USBDEVFS_IOCTL, &io, &io.data,
			_IOC_SIZE((unsigned int)io.ioctl_code),
			_IOC_DIR((unsigned int)io.ioctl_code) & _IOC_READ, exec, ctx, ret);
}

/* ---- everything with a size ---- */

/* cros_ec: a header, then outsize bytes to the EC, room for insize from it */
static int cros_ec(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		   unsigned long req, cfs_record_exec_fn exec, void *ctx, long *ret)
{
	uint8_t hdr[CROS_EC_CMD_HDR], *cmd;
	uint32_t outsize, insize;
	size_t len;
	int err;

	err = cfs_mem_read(call->mem, call->arg, hdr, sizeof(hdr));
	if (err)
		return err;
	memcpy(&outsize, hdr + 8, sizeof(outsize));
	memcpy(&insize, hdr + 12, sizeof(insize));
	outsize = le32toh(outsize);
	insize = le32toh(insize);
	if (outsize > CROS_EC_MAX || insize > CROS_EC_MAX)
		return -EINVAL;
	len = CROS_EC_CMD_HDR + (outsize > insize ? outsize : insize);
	cmd = calloc(1, len);
	if (!cmd)
		return -ENOMEM;
	err = cfs_mem_read(call->mem, call->arg, cmd, CROS_EC_CMD_HDR + outsize);
	if (!err) {
		*ret = exec(ctx, req, (uintptr_t)cmd);
		if (*ret >= 0)
			err = cfs_mem_write(call->mem, call->arg, cmd, CROS_EC_CMD_HDR + insize);
		if (!err)
			add(r, call, req, cmd, CROS_EC_CMD_HDR + insize, *ret);
	}
	free(cmd);
	return err;
}

/*
 * _IOR, _IOW, _IOWR: @size bytes, always read first (EVIOCGKEYCODE is
 * _IOR but takes the scancode in it), written back after a success when
 * the kernel writes them: _IOC_READ, or a request the format records
 * the answer of (USBDEVFS_CONNECTINFO is _IOW and filled in).
 */
static int plain(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		 unsigned long req, cfs_record_exec_fn exec, void *ctx, long *ret)
{
	const struct ioctl_type *type = ioctl_type_by_id(req);
	size_t size = _IOC_SIZE(req);
	uint8_t *buf;
	int err;

	buf = malloc(size);
	if (!buf)
		return -ENOMEM;
	err = cfs_mem_read(call->mem, call->arg, buf, size);
	if (err) {
		/* no address: an int by value (EVIOCGRAB's) the kernel may take as it is */
		free(buf);
		return CFS_IOCTL_PASS;
	}
	*ret = exec(ctx, req, (uintptr_t)buf);
	if (*ret >= 0) {
		if ((_IOC_DIR(req) & _IOC_READ) || (type && type->kind == IK_SIMPLE))
			err = cfs_mem_write(call->mem, call->arg, buf, size);
		if (!err)
			add(r, call, req, buf, size, *ret);
	}
	free(buf);
	return err;
}

/**
 * cfs_ioctl_record() - make a program's ioctl() through @exec and record it
 * @r: the recorder.
 * @call: the program's call: its request, argument and memory; @node
 *        names the node in messages.
 * @exec: makes the call on the recorder's side with an argument in the
 *        recorder's memory (the request, and a local address or the
 *        program's integer argument): its result, or -errno.
 * @ctx: passed to @exec.
 *
 * Called from several threads at once (a program's threads each wait in
 * their own call, a blocking REAPURB among them): @r's lock is never held
 * while @exec runs.
 *
 * Return: the call's result (>= 0) or -errno, for the program;
 * CFS_IOCTL_PASS when the request cannot be made here (no size, its
 * argument no address of the program): the program's call is to go to
 * the kernel as it is, unrecorded.
 */
long cfs_ioctl_record(struct cfs_ioctl_recorder *r, const struct cfs_ioctl_call *call,
		      cfs_record_exec_fn exec, void *ctx)
{
	unsigned long req = ioctl_req32(call->request);
	long ret = 0;
	int err;

	switch (req) {
	case USBDEVFS_SUBMITURB:
		err = submit(r, call, exec, ctx, &ret);
		break;
	case USBDEVFS_REAPURB:
	case USBDEVFS_REAPURBNDELAY:
		err = reap(r, call, req, exec, ctx, &ret);
		break;
	case USBDEVFS_DISCARDURB:
		err = discard(r, call, exec, ctx, &ret);
		break;
	case USBDEVFS_CONTROL:
		err = control(call, exec, ctx, &ret);
		break;
	case USBDEVFS_BULK:
		err = bulk(call, exec, ctx, &ret);
		break;
	case USBDEVFS_IOCTL:
		err = usb_ioctl(call, exec, ctx, &ret);
		break;
	case CROS_EC_DEV_IOCXCMD_V2:
		err = cros_ec(r, call, req, exec, ctx, &ret);
		break;
	default:
		/*
		 * no size: an int by value, or a pointer to what only the
		 * driver knows the size of (the terminal requests)
		 */
		if (_IOC_DIR(req) == _IOC_NONE || !_IOC_SIZE(req))
			return CFS_IOCTL_PASS;
		err = plain(r, call, req, exec, ctx, &ret);
		break;
	}
	if (err == CFS_IOCTL_PASS)
		return CFS_IOCTL_PASS;
	return err ? err : ret;
}

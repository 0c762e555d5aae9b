// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pcap-replay.c - a usbmon capture of one USB device answering a
 * program's usbdevfs requests (libusb's), the way umockdev's pcap replay
 * (umockdev-run --pcap, UMockdev.Testbed.load_pcap) does, so that what
 * replays there (libfprint's driver tests) replays here alike:
 *
 * - SUBMITURB only queues the program's URB (and a copy of its buffer);
 *   REAPURB and REAPURBNDELAY walk the capture in order from where the
 *   last walk stopped.  A submission ('S') is the oldest queued URB that
 *   has not been matched yet and agrees with it: transfer type, endpoint
 *   (not for control transfers: libusb says 0 where usbmon says 0x00 or
 *   0x80), length, setup packet and the data the program sends.  A
 *   completion ('C') of a matched URB is what the reap returns: its
 *   status, actual length and the data it carries.  A completion of no
 *   queued URB is passed over (the kernel's own control transfers, URBs
 *   the program discarded), and so is a submission of a standard control
 *   request that matches nothing (the kernel's GET_DESCRIPTOR and the
 *   like, or libusb's that a capture holds and a replay need not make).
 *   Any other submission the program has not made (yet) stops the walk:
 *   the reap fails with EAGAIN, and so it does at the end of the capture.
 *   Data the program sends that differs from the capture is therefore no
 *   error: its URB waits, unmatched, until the program discards it (its
 *   timeout), the replay is stuck meanwhile, and a log line says so.
 * - An URB the program discards is reaped first (newest first) with
 *   status -ENOENT, whether the capture had reached it or not.
 * - Time: umockdev answers as soon as the capture's order allows and
 *   does not wait out the capture's time between events, so neither does
 *   this (a capture of a timeout replays as the discard of the program's
 *   own timeout).  The capture's times only measure whether the replay is
 *   stuck: waiting at a packet 2 s longer than the capture took there is
 *   logged, with the URBs in flight and why none matches.
 * - GET_CAPABILITIES says what a recent kernel says; CLAIMINTERFACE,
 *   RELEASEINTERFACE, CLEAR_HALT, RESET and RESETEP succeed; every other
 *   request (CONTROL, BULK, SETINTERFACE, SETCONFIGURATION, CONNECTINFO,
 *   GETDRIVER, DISCONNECT_CLAIM, a terminal's...) fails with ENOTTY as
 *   umockdev's does, but for the few the kernel answers for any
 *   descriptor (FIONBIO, FIOCLEX, ...), which go to the descriptor.
 *
 * Beyond umockdev, which asserts on them: an 'E' event (a submission the
 * kernel refused) completes its URB with its status; ISO URBs get their
 * descriptors' status and lengths; a capture cut short by its snaplen
 * compares the data it holds.
 *
 * Polling: libusb waits for a completion by poll()ing the node for
 * POLLOUT and then reaping with REAPURBNDELAY.  The descriptor the
 * program holds is a memfd or a pty, always writable, so its poll()
 * returns at once: while the capture waits for a submission the program
 * has not made (an interrupt URB queued early, a thread that has yet to
 * submit), libusb's event loop spins on REAPURBNDELAY, each call a round
 * trip through the supervisor answered -EAGAIN.  That costs CPU, not
 * correctness, and umockdev's replay spins the same way.
 *
 * Programs of this host's word size only: a 32-bit program's
 * SUBMITURB32 and REAPURB32 are other requests and fail with ENOTTY.
 *
 * All state is the handler's: one node's calls come from one thread at
 * a time (devio.h), whichever thread that is, so no lock and no thread.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/usbdevice_fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include "classfs-internal/devio.h"
#include "pcap.h"

/* umockdev's: the capabilities that make libusb submit what it submits
 * to a recent kernel (one URB per bulk transfer, zero packets) */
#define PCAP_CAPS                                                                      \
	(USBDEVFS_CAP_BULK_SCATTER_GATHER | USBDEVFS_CAP_BULK_CONTINUATION |           \
	 USBDEVFS_CAP_NO_PACKET_SIZE_LIM | USBDEVFS_CAP_REAP_AFTER_DISCONNECT |        \
	 USBDEVFS_CAP_ZERO_PACKET)

/* waiting at a packet this much longer than the capture did is logged */
#define STUCK_MS 2000
/* the kernel's limits: usbfs_memory_mb's default, ISO packets per URB */
#define URB_BUFFER_MAX (16u << 20)
#define ISO_PACKETS_MAX 128
/* bytes of a data mismatch a log line shows */
#define DUMP_MAX 16

/**
 * struct inflight - a URB the program submitted and has not reaped
 * @addr: its struct usbdevfs_urb in the program
 * @urb: that struct as submitted
 * @buf: its buffer's content at submission (setup packet, data sent)
 * @done: the capture's completion of it, once reached (NULL: discarded)
 * @pcap_id: the capture's URB it was matched to
 * @matched: @pcap_id is set (the capture's submission was reached)
 */
struct inflight {
	uint64_t addr;
	struct usbdevfs_urb urb;
	uint8_t *buf;
	const struct pcap_event *done;
	uint64_t pcap_id;
	bool matched;
};

/* a growing array of URBs, in the order they went in */
struct urb_list {
	struct inflight **v;
	size_t n, cap;
};

struct pcap_replay {
	struct pcap_capture *cap;
	size_t pos;			/* the next event to replay */
	struct urb_list urbs;		/* submitted, oldest first */
	struct urb_list discarded;	/* reaped from the end: newest first */
	bool started;
	bool end_logged;
	uint64_t start_ms;		/* the capture's first time */
	uint64_t last_pkt_ms;		/* the capture's time of the last progress */
	uint64_t waiting_since;		/* monotonic ms of the last progress */
};

/**
 * pcap_xfer_name() - a usbmon/usbdevfs transfer type's name
 * @type: PCAP_XFER_*.
 *
 * Return: "ISO", "INTERRUPT", "CONTROL", "BULK" or "UNKNOWN".
 */
const char *pcap_xfer_name(unsigned type)
{
	static const char *const names[] = { "ISO", "INTERRUPT", "CONTROL", "BULK" };

	return type < 4 ? names[type] : "UNKNOWN";
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int list_add(struct urb_list *l, struct inflight *u)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? 2 * l->cap : 8;
		struct inflight **nv = realloc(l->v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		l->v = nv;
		l->cap = ncap;
	}
	l->v[l->n++] = u;
	return 0;
}

/* removes the @i'th, keeping the order: matching goes oldest first */
static struct inflight *list_take(struct urb_list *l, size_t i)
{
	struct inflight *u = l->v[i];

	memmove(&l->v[i], &l->v[i + 1], (l->n - i - 1) * sizeof(*l->v));
	l->n--;
	return u;
}

static void inflight_free(struct inflight *u)
{
	if (u) {
		free(u->buf);
		free(u);
	}
}

/* the part of a URB's buffer usbmon records as data: a control
 * transfer's setup packet is apart (usbmon's header holds it) */
static const uint8_t *urb_data(const struct inflight *u, uint32_t *len)
{
	size_t skip = u->urb.type == USBDEVFS_URB_TYPE_CONTROL ? 8 : 0;

	*len = (uint32_t)u->urb.buffer_length - (uint32_t)skip;
	return u->buf + skip;
}

static void dump_hex(char *out, size_t size, const uint8_t *p, size_t len)
{
	size_t n = 0;

	out[0] = '\0';
	for (size_t i = 0; i < len && i < DUMP_MAX && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, " %02x", p[i]);
	if (len > DUMP_MAX && n < size)
		snprintf(out + n, size - n, " ...");
}

/* what a queued URB differs from a submission of the capture in */
enum mismatch { MM_TYPE, MM_ENDPOINT, MM_LENGTH, MM_SETUP, MM_DATA };

/*
 * Why queued URB @u is not submission @e (when the replay is stuck):
 * the reasons umockdev prints then, to find what the program does
 * otherwise than the recorded one.  @at: the first byte of MM_DATA's
 * that differs.
 */
static void log_mismatch(const struct pcap_replay *r, const struct pcap_event *e,
			 const struct inflight *u, size_t i, enum mismatch why, uint32_t at)
{
	static const char *const what[] = { "transfer type", "endpoint", "length",
					    "setup packet", "data" };
	char want[DUMP_MAX * 3 + 8], got[DUMP_MAX * 3 + 8];
	uint32_t len;
	const uint8_t *d = urb_data(u, &len);

	cfs_devio_log("  queued URB %zu (%s ep 0x%02x, %u bytes) differs in its %s", i,
		      pcap_xfer_name(u->urb.type), u->urb.endpoint, len, what[why]);
	if (why == MM_SETUP) {
		dump_hex(want, sizeof(want), e->setup, 8);
		dump_hex(got, sizeof(got), u->buf, 8);
	} else if (why == MM_DATA && at < e->data_len && at < len) {
		dump_hex(want, sizeof(want), r->cap->blob + e->data + at, e->data_len - at);
		dump_hex(got, sizeof(got), d + at, len - at);
		cfs_devio_log("    from byte %u on:", at);
	} else {
		return;
	}
	cfs_devio_log("    capture:%s", want);
	cfs_devio_log("    program:%s", got);
}

/* the first byte where the program's data and the capture's differ, or -1 */
static long data_differs(const struct pcap_replay *r, const struct pcap_event *e,
			 const uint8_t *d)
{
	const uint8_t *c;

	/* none captured (an IN transfer's submission): nothing to compare */
	if (!e->data_len)
		return -1;
	c = r->cap->blob + e->data;
	for (uint32_t i = 0; i < e->data_len; i++)
		if (c[i] != d[i])
			return i;
	return -1;
}

/* matches submission @e to the oldest queued URB that agrees with it */
static bool match_submit(struct pcap_replay *r, const struct pcap_event *e, bool debug)
{
	for (size_t i = 0; i < r->urbs.n; i++) {
		struct inflight *u = r->urbs.v[i];
		uint32_t len;
		const uint8_t *d;
		long at;

		if (u->matched)
			continue;
		d = urb_data(u, &len);
		if (u->urb.type != e->type) {
			if (debug)
				log_mismatch(r, e, u, i, MM_TYPE, 0);
			continue;
		}
		if (u->urb.type != USBDEVFS_URB_TYPE_CONTROL && u->urb.endpoint != e->ep) {
			if (debug)
				log_mismatch(r, e, u, i, MM_ENDPOINT, 0);
			continue;
		}
		if (len != e->urb_len) {
			if (debug)
				log_mismatch(r, e, u, i, MM_LENGTH, 0);
			continue;
		}
		if (e->has_setup && memcmp(u->buf, e->setup, 8)) {
			if (debug)
				log_mismatch(r, e, u, i, MM_SETUP, 0);
			continue;
		}
		/* the data sent; e->data_len <= len: the lengths agree, and a
		 * capture's data is at most its URB's */
		at = e->data_len <= len ? data_differs(r, e, d) : 0;
		if (at >= 0) {
			if (debug)
				log_mismatch(r, e, u, i, MM_DATA, (uint32_t)at);
			continue;
		}
		u->matched = true;
		u->pcap_id = e->id;
		return true;
	}
	return false;
}

static void log_inflight(const struct pcap_replay *r)
{
	for (size_t i = 0; i < r->urbs.n; i++) {
		const struct inflight *u = r->urbs.v[i];

		cfs_devio_log("  in flight: %s URB for ep 0x%02x, %d bytes, %s", pcap_xfer_name(u->urb.type),
			      u->urb.endpoint, u->urb.buffer_length,
			      u->matched ? "submitted in the capture" : "NOT submitted in the capture");
	}
}

static void log_stuck(const struct pcap_replay *r, const struct pcap_event *e, const char *node,
		      uint64_t waited, uint64_t took)
{
	cfs_devio_log("%s: replay of %s may be stuck: waited %" PRIu64
		      " ms at packet %u (%c %s ep 0x%02x, %u bytes, %.3f s into the capture), which the capture reached in %" PRIu64
		      " ms; %zu URBs in flight",
		      node, r->cap->path, waited, e->number, e->event, pcap_xfer_name(e->type), e->ep,
		      e->urb_len, (double)(e->ts_ms - r->start_ms) / 1000.0, took, r->urbs.n);
	log_inflight(r);
}

/* a standard control request (GET_DESCRIPTOR, SET_CONFIGURATION, ...)
 * no queued URB matches: umockdev passes over it */
static bool skippable(const struct pcap_event *e)
{
	return e->type == PCAP_XFER_CONTROL && e->event == 'S' && e->has_setup &&
	       (e->setup[0] & 0x60) == 0;
}

/*
 * The next URB the capture completes, walking it from where the last
 * walk stopped; NULL when the capture waits for a submission the
 * program has not made, or has ended.
 */
static struct inflight *next_reapable(struct pcap_replay *r, const char *node)
{
	uint64_t now = now_ms();
	bool debug = false;

	/* with nothing queued, nothing may be passed over: a standard
	 * control request the program is about to submit would be lost */
	if (!r->urbs.n)
		return NULL;
	if (!r->started) {
		r->started = true;
		r->waiting_since = now;
		r->start_ms = r->last_pkt_ms = r->cap->ev[0].ts_ms;
	}
	for (; r->pos < r->cap->nev; r->pos++, r->waiting_since = now) {
		const struct pcap_event *e = &r->cap->ev[r->pos];
		int64_t took = (int64_t)(e->ts_ms - r->last_pkt_ms);
		uint64_t waited = now - r->waiting_since;

		if (took < 0)
			took = 0;
		if (!debug && waited > STUCK_MS + (uint64_t)took) {
			log_stuck(r, e, node, waited, (uint64_t)took);
			r->waiting_since = now;
			debug = true;
		}
		if (e->event == 'S') {
			if (match_submit(r, e, debug)) {
				r->last_pkt_ms = e->ts_ms;
				continue;
			}
			if (skippable(e))
				continue;
			return NULL;
		}
		/* 'C', or 'E': the kernel refused the submission */
		for (size_t i = 0; i < r->urbs.n; i++) {
			struct inflight *u = r->urbs.v[i];

			if (u->matched && u->pcap_id == e->id) {
				u->done = e;
				list_take(&r->urbs, i);
				r->last_pkt_ms = e->ts_ms;
				r->pos++;
				r->waiting_since = now;
				return u;
			}
		}
		/* no queued URB is it: the kernel's own, or one discarded */
	}
	if (!r->end_logged && now - r->waiting_since > STUCK_MS) {
		cfs_devio_log("%s: replay of %s is at the end of the capture with %zu URBs in flight",
			      node, r->cap->path, r->urbs.n);
		log_inflight(r);
		r->end_logged = true;
	}
	return NULL;
}

static int put_field(const struct cfs_ioctl_call *c, uint64_t addr, size_t off, int32_t v)
{
	return cfs_mem_write(c->mem, addr + off, &v, sizeof(v));
}

/* what the kernel writes back of a completed URB: status, lengths, error
 * count, ISO start frame and packets, the data an IN transfer brought */
static int write_back(const struct pcap_replay *r, const struct inflight *u,
		      const struct cfs_ioctl_call *c)
{
	const struct pcap_event *e = u->done;
	bool iso = u->urb.type == USBDEVFS_URB_TYPE_ISO;
	int32_t status = e ? e->status : -ENOENT;
	int32_t actual = e ? (int32_t)e->urb_len : 0;
	int32_t errors = e && iso ? e->error_count : 0;
	int err;

	if (e && e->data_len) {
		uint32_t room, n;
		size_t skip = u->urb.type == USBDEVFS_URB_TYPE_CONTROL ? 8 : 0;

		urb_data(u, &room);
		n = e->data_len < room ? e->data_len : room;
		err = cfs_mem_write(c->mem, (uint64_t)(uintptr_t)u->urb.buffer + skip,
				    r->cap->blob + e->data, n);
		if (err)
			return err;
	}
	err = put_field(c, u->addr, offsetof(struct usbdevfs_urb, status), status);
	if (!err)
		err = put_field(c, u->addr, offsetof(struct usbdevfs_urb, actual_length), actual);
	if (!err)
		err = put_field(c, u->addr, offsetof(struct usbdevfs_urb, error_count), errors);
	if (err || !e || !iso)
		return err;
	err = put_field(c, u->addr, offsetof(struct usbdevfs_urb, start_frame), e->start_frame);
	for (uint32_t i = 0; !err && i < e->ndesc && (int)i < u->urb.number_of_packets; i++) {
		struct pcap_isodesc d;
		uint64_t at = u->addr + offsetof(struct usbdevfs_urb, iso_frame_desc) +
			      i * sizeof(struct usbdevfs_iso_packet_desc);

		memcpy(&d, r->cap->blob + e->iso + i * sizeof(d), sizeof(d));
		err = put_field(c, at, offsetof(struct usbdevfs_iso_packet_desc, actual_length),
				(int32_t)d.len);
		if (!err)
			err = put_field(c, at, offsetof(struct usbdevfs_iso_packet_desc, status),
					d.status);
	}
	return err;
}

static long submit(struct pcap_replay *r, const struct cfs_ioctl_call *c)
{
	struct inflight *u = calloc(1, sizeof(*u));
	int err;

	if (!u)
		return -ENOMEM;
	u->addr = c->arg;
	err = cfs_mem_read(c->mem, c->arg, &u->urb, sizeof(u->urb));
	if (err)
		goto out_free;
	/* what the kernel refuses before the device sees anything */
	err = -EINVAL;
	if (u->urb.type > USBDEVFS_URB_TYPE_BULK || u->urb.buffer_length < 0)
		goto out_free;
	if (u->urb.type == USBDEVFS_URB_TYPE_CONTROL && u->urb.buffer_length < 8)
		goto out_free;
	if (u->urb.type == USBDEVFS_URB_TYPE_ISO &&
	    (u->urb.number_of_packets < 1 || u->urb.number_of_packets > ISO_PACKETS_MAX))
		goto out_free;
	err = -ENOMEM;
	if ((unsigned)u->urb.buffer_length > URB_BUFFER_MAX)
		goto out_free;
	/* +1: a zero-length URB's buffer is no NULL to tell from a failure */
	u->buf = malloc((size_t)u->urb.buffer_length + 1);
	if (!u->buf)
		goto out_free;
	/* the whole buffer, IN transfers' too: what the kernel checks */
	err = cfs_mem_read(c->mem, (uint64_t)(uintptr_t)u->urb.buffer, u->buf,
			   (size_t)u->urb.buffer_length);
	if (err)
		goto out_free;
	/* the replay was not waiting while nothing was in flight: a program
	 * that paused between transfers is not a stuck replay */
	if (!r->urbs.n)
		r->waiting_since = now_ms();
	err = list_add(&r->urbs, u);
	if (err)
		goto out_free;
	return 0;

out_free:
	inflight_free(u);
	return err;
}

static long reap(struct pcap_replay *r, const struct cfs_ioctl_call *c)
{
	struct inflight *u;
	void *ptr;
	int err;

	if (r->discarded.n) {
		u = list_take(&r->discarded, r->discarded.n - 1);
		/* a URB the program gave up on before the capture had it
		 * submitted: its timeout, most likely, while the replay waits
		 * for something else */
		if (!u->matched)
			cfs_devio_log("%s: replay of %s may be stuck: reaping a discarded %s URB for ep 0x%02x, %d bytes, that the capture never submitted",
				      c->node, r->cap->path, pcap_xfer_name(u->urb.type),
				      u->urb.endpoint, u->urb.buffer_length);
		u->done = NULL;
	} else {
		u = next_reapable(r, c->node);
		/* REAPURB too: it would block for good, nothing else answering */
		if (!u)
			return -EAGAIN;
	}
	/* the URB is gone whether its results reach the program or not */
	err = write_back(r, u, c);
	if (!err) {
		ptr = (void *)(uintptr_t)u->addr;
		err = cfs_mem_write(c->mem, c->arg, &ptr, sizeof(ptr));
	}
	inflight_free(u);
	return err;
}

static long discard(struct pcap_replay *r, const struct cfs_ioctl_call *c)
{
	for (size_t i = 0; i < r->urbs.n; i++) {
		if (r->urbs.v[i]->addr == c->arg) {
			struct inflight *u = r->urbs.v[i];
			int err = list_add(&r->discarded, u);

			if (err)
				return err;
			list_take(&r->urbs, i);
			return 0;
		}
	}
	return -EINVAL;
}

static long pcap_ioctl(void *data, const struct cfs_ioctl_call *call)
{
	struct pcap_replay *r = data;
	struct cfs_ioctl_call c = *call;
	uint32_t caps = PCAP_CAPS;

	if (!c.node)
		c.node = "usbdevfs node";
	switch ((uint32_t)c.request) {
	case USBDEVFS_SUBMITURB:
		return submit(r, &c);
	case USBDEVFS_REAPURB:
	case USBDEVFS_REAPURBNDELAY:
		return reap(r, &c);
	case USBDEVFS_DISCARDURB:
		return discard(r, &c);
	case USBDEVFS_GET_CAPABILITIES:
		return cfs_mem_write(c.mem, c.arg, &caps, sizeof(caps));
	case USBDEVFS_CLAIMINTERFACE:
	case USBDEVFS_RELEASEINTERFACE:
	case USBDEVFS_CLEAR_HALT:
	case USBDEVFS_RESET:
	case USBDEVFS_RESETEP:
		return 0;
	/* the kernel's for every descriptor, before any driver's */
	case FIONBIO:
	case FIOASYNC:
	case FIOCLEX:
	case FIONCLEX:
		return CFS_IOCTL_PASS;
	default:
		return -ENOTTY;
	}
}

static void list_free(struct urb_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		inflight_free(l->v[i]);
	free(l->v);
}

static void pcap_free(void *data)
{
	struct pcap_replay *r = data;

	list_free(&r->urbs);
	list_free(&r->discarded);
	pcap_capture_free(r->cap);
	free(r);
}

/**
 * pcap_replay_new() - the handler replaying a device's capture
 * @cap: its events (at least one); the handler's from now on, freed
 *       with it, or at once when this fails.
 * @out: filled in.
 *
 * Return: 0 or -ENOMEM.
 */
int pcap_replay_new(struct pcap_capture *cap, struct cfs_ioctl_handler *out)
{
	struct pcap_replay *r = calloc(1, sizeof(*r));

	if (!r) {
		pcap_capture_free(cap);
		return -ENOMEM;
	}
	r->cap = cap;
	*out = (struct cfs_ioctl_handler){ .ioctl = pcap_ioctl, .free = pcap_free, .data = r };
	return 0;
}

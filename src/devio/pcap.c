// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pcap.c - reading a usbmon capture (wireshark's or tcpdump's pcap or
 * pcapng of a usbmonN interface, as umockdev-run --pcap and libfprint's
 * driver tests use) for the replay of one USB device (pcap-replay.c).
 *
 * The whole file is read at load: its errors are the loader's, with the
 * number of the packet at fault, not a replay that stops halfway, and
 * the replay then holds no libpcap handle (whose reading state is not
 * meant for calls from changing threads).  Only the events of the
 * device asked for are kept; libfprint's captures are a few MB at most.
 */
#include <errno.h>
#include <pcap/pcap.h>
#include <pcap/usb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfs-internal/devio.h"
#include "pcap.h"

/* LINKTYPE_USB_LINUX_MMAPPED (220): the 64-byte header of usbmon's binary
 * interface; LINKTYPE_USB_LINUX (189): its first 48 bytes, no ISO fields */
#define HDR_MMAPPED sizeof(pcap_usb_header_mmapped)
#define HDR_PLAIN sizeof(pcap_usb_header)

/* the other devices a capture holds, named when the one asked for is not */
#define SEEN_MAX 8

struct loader {
	struct pcap_capture *cap;
	size_t evcap, bloblen, blobcap;
	unsigned busnum, devnum;
	unsigned seen[SEEN_MAX];
	unsigned nseen;
	char *msg;
	size_t msgsize;
};

__attribute__((format(printf, 3, 4))) static int fail(struct loader *l, int err,
						      const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!l->msgsize)
		return err;
	n = snprintf(l->msg, l->msgsize, "%s: ", l->cap->path);
	if (n < 0 || (size_t)n >= l->msgsize)
		return err;
	va_start(ap, fmt);
	vsnprintf(l->msg + n, l->msgsize - (size_t)n, fmt, ap);
	va_end(ap);
	return err;
}

static int blob_add(struct loader *l, const void *p, size_t len, size_t *off)
{
	*off = l->bloblen;
	/* nothing to keep: the blob may not be there yet */
	if (!len)
		return 0;
	if (l->bloblen + len > l->blobcap) {
		size_t ncap = l->blobcap ? l->blobcap : 4096;
		uint8_t *nb;

		while (ncap < l->bloblen + len)
			ncap *= 2;
		nb = realloc(l->cap->blob, ncap);
		if (!nb)
			return -ENOMEM;
		l->cap->blob = nb;
		l->blobcap = ncap;
	}
	memcpy(l->cap->blob + l->bloblen, p, len);
	l->bloblen += len;
	return 0;
}

static void note_device(struct loader *l, unsigned bus, unsigned dev)
{
	unsigned key = bus << 8 | dev;

	for (unsigned i = 0; i < l->nseen; i++)
		if (l->seen[i] == key)
			return;
	if (l->nseen < SEEN_MAX)
		l->seen[l->nseen++] = key;
}

/* one packet of the file: kept when it is the device's */
static int add_packet(struct loader *l, const struct pcap_pkthdr *h, const uint8_t *bytes,
		      size_t hdrlen, uint32_t number)
{
	pcap_usb_header_mmapped u = { 0 };
	struct pcap_event *e;
	size_t avail, isolen;
	int err;

	if (h->caplen < hdrlen)
		return fail(l, -EINVAL, "packet %u: %u bytes, too short for a usbmon header (%zu)",
			    number, h->caplen, hdrlen);
	/* libpcap has put the header in this host's byte order already */
	memcpy(&u, bytes, hdrlen);
	if (u.bus_id != l->busnum || u.device_address != l->devnum) {
		note_device(l, u.bus_id, u.device_address);
		return 0;
	}
	if (u.event_type != 'S' && u.event_type != 'C' && u.event_type != 'E')
		return fail(l, -EINVAL, "packet %u: usbmon event type 0x%02x is none of S, C, E",
			    number, u.event_type);
	if (u.transfer_type > PCAP_XFER_BULK)
		return fail(l, -EINVAL, "packet %u: usbmon transfer type %u is none of 0-3",
			    number, u.transfer_type);

	if (l->cap->nev == l->evcap) {
		size_t ncap = l->evcap ? 2 * l->evcap : 256;
		struct pcap_event *ne = realloc(l->cap->ev, ncap * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		l->cap->ev = ne;
		l->evcap = ncap;
	}
	e = &l->cap->ev[l->cap->nev];
	*e = (struct pcap_event){
		.id = u.id,
		.ts_ms = (uint64_t)u.ts_sec * 1000 + (uint64_t)u.ts_usec / 1000,
		.number = number,
		.urb_len = u.urb_len,
		.status = u.status,
		.event = u.event_type,
		.type = u.transfer_type,
		.ep = u.endpoint_number,
	};
	if (u.transfer_type == PCAP_XFER_CONTROL && u.event_type == 'S' && !u.setup_flag) {
		e->has_setup = true;
		memcpy(e->setup, &u.s.setup, sizeof(e->setup));
	}
	avail = h->caplen - hdrlen;
	if (hdrlen == HDR_MMAPPED && u.transfer_type == PCAP_XFER_ISO) {
		e->start_frame = u.start_frame;
		e->error_count = u.s.iso.error_count;
		/* the descriptors come first; a capture cut short (snaplen)
		 * keeps those it holds */
		e->ndesc = u.ndesc;
		if (e->ndesc > avail / sizeof(struct pcap_isodesc))
			e->ndesc = (uint32_t)(avail / sizeof(struct pcap_isodesc));
		isolen = e->ndesc * sizeof(struct pcap_isodesc);
		err = blob_add(l, bytes + hdrlen, isolen, &e->iso);
		if (err)
			return err;
		avail -= isolen;
		hdrlen += isolen;
	}
	/* data_flag 0: data captured (usbmon says why not with a letter);
	 * snaplen may have cut it, the replay compares what is there */
	e->data_len = u.data_flag ? 0 : u.data_len;
	if (e->data_len > avail)
		e->data_len = (uint32_t)avail;
	err = blob_add(l, bytes + hdrlen, e->data_len, &e->data);
	if (err)
		return err;
	l->cap->nev++;
	return 0;
}

static int read_packets(struct loader *l, pcap_t *p)
{
	size_t hdrlen = pcap_datalink(p) == DLT_USB_LINUX_MMAPPED ? HDR_MMAPPED : HDR_PLAIN;
	struct pcap_pkthdr *h;
	const u_char *bytes;
	uint32_t number = 0;
	int rc, err;

	while ((rc = pcap_next_ex(p, &h, &bytes)) == 1) {
		err = add_packet(l, h, bytes, hdrlen, ++number);
		if (err)
			return err;
	}
	if (rc != PCAP_ERROR_BREAK)
		return fail(l, -EINVAL, "packet %u: %s", number + 1, pcap_geterr(p));
	if (!l->cap->nev) {
		char others[SEEN_MAX * 9 + 1] = "";
		size_t n = 0;

		for (unsigned i = 0; i < l->nseen; i++)
			n += (size_t)snprintf(others + n, sizeof(others) - n, "%s%03u/%03u",
					      i ? ", " : "", l->seen[i] >> 8, l->seen[i] & 0xff);
		return fail(l, -ENOENT, "no packet of USB device %03u/%03u, nothing to replay (%s%s)",
			    l->busnum, l->devnum, l->nseen ? "the capture's devices: " : "",
			    l->nseen ? others : "the capture holds no packet");
	}
	return 0;
}

void pcap_capture_free(struct pcap_capture *cap)
{
	if (!cap)
		return;
	free(cap->path);
	free(cap->ev);
	free(cap->blob);
	free(cap);
}

/**
 * cfs_pcap_file_load() - a usbmon capture of one USB device, replayed as
 *                        its usbdevfs node's answers
 * @path: the capture: pcap or pcapng, LINKTYPE_USB_LINUX_MMAPPED (what
 *        wireshark and tcpdump record of usbmonN) or LINKTYPE_USB_LINUX.
 * @busnum: the device's bus number (its sysfs busnum).
 * @devnum: its address on the bus (its sysfs devnum).
 * @out: the handler, filled in on success.
 * @msg: why it failed: "PATH: reason" or "PATH: packet N: reason".
 * @msgsize: size of @msg (0: no message).
 *
 * The packets of other devices are left out.  The handler answers as
 * umockdev's pcap replay does (pcap-replay.c).
 *
 * Return: 0; -ENOENT or another -errno of opening @path; -EINVAL when it is
 * no usbmon capture or a packet is malformed; -ENOENT when the capture
 * holds no packet of @busnum/@devnum (@msg names the devices it holds);
 * -ENOMEM.
 */
int cfs_pcap_file_load(const char *path, unsigned busnum, unsigned devnum,
		       struct cfs_ioctl_handler *out, char *msg, size_t msgsize)
{
	char errbuf[PCAP_ERRBUF_SIZE] = "";
	struct loader l = { .busnum = busnum, .devnum = devnum, .msg = msg, .msgsize = msgsize };
	pcap_t *p = NULL;
	FILE *f;
	int link, err;

	if (msgsize)
		msg[0] = '\0';
	l.cap = calloc(1, sizeof(*l.cap));
	if (!l.cap)
		return -ENOMEM;
	l.cap->path = strdup(path);
	if (!l.cap->path) {
		err = -ENOMEM;
		goto out_free;
	}
	/* opened here, not by libpcap, for the errno of a missing file */
	f = fopen(path, "rb");
	if (!f) {
		err = fail(&l, -errno, "%s", strerror(errno));
		goto out_free;
	}
	p = pcap_fopen_offline(f, errbuf);
	if (!p) {
		fclose(f);
		err = fail(&l, -EINVAL, "not a pcap or pcapng file (%s)", errbuf);
		goto out_free;
	}
	link = pcap_datalink(p);
	if (link != DLT_USB_LINUX_MMAPPED && link != DLT_USB_LINUX) {
		const char *name = pcap_datalink_val_to_name(link);

		err = fail(&l, -EINVAL,
			   "link type %d (%s) is no usbmon capture (USB_LINUX_MMAPPED or USB_LINUX)",
			   link, name ? name : "unknown");
		goto out_close;
	}
	if (busnum > 0xffff || devnum > 0xff) {
		err = fail(&l, -EINVAL, "no USB device can be %u/%u", busnum, devnum);
		goto out_close;
	}
	err = read_packets(&l, p);
	if (err)
		goto out_close;
	pcap_close(p);
	return pcap_replay_new(l.cap, out);

out_close:
	pcap_close(p);
out_free:
	pcap_capture_free(l.cap);
	return err;
}

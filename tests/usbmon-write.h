/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * usbmon-write.h - usbmon captures written by the tests themselves
 * (libpcap, LINKTYPE_USB_LINUX_MMAPPED or LINKTYPE_USB_LINUX), for the
 * replay's unit test (tests/devio/test-pcap.c) and classfs-run's
 * (tests/run/make-capture.c): no capture file is committed.
 *
 * An event is usbmon's: 'S'ubmission or 'C'ompletion of URB @id, with
 * @setup for a control submission and @data what usbmon captured (a
 * submission's data sent, a completion's data received).  @bus and @dev
 * 0 are the capture's own device (cap_open()'s).  Events are a
 * millisecond apart: the replay does not wait them out.
 */
#ifndef CLASSFS_TEST_USBMON_WRITE_H
#define CLASSFS_TEST_USBMON_WRITE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>
#include <pcap/usb.h>

struct capture {
	pcap_t *p;
	pcap_dumper_t *d;
	int link;
	uint8_t bus, dev;	/* the device events are of by default */
	uint64_t t_us;
};

struct event {
	char ev;
	uint8_t type, ep, bus, dev;
	uint64_t id;
	const uint8_t *setup;
	int32_t status;
	uint32_t urb_len;
	const void *data;
	uint32_t data_len;
};

/* a capture of link type @link at @path, of device @bus/@dev; aborts on failure */
static inline void cap_open(struct capture *c, int link, const char *path, uint8_t bus,
			    uint8_t dev)
{
	*c = (struct capture){ .link = link, .bus = bus, .dev = dev,
			       .t_us = 1700000000ull * 1000000 };
	c->p = pcap_open_dead(link, 65535);
	c->d = c->p ? pcap_dump_open(c->p, path) : NULL;
	if (!c->d)
		abort();
}

static inline void cap_event(struct capture *c, const struct event *e)
{
	uint8_t pkt[sizeof(pcap_usb_header_mmapped) + 256];
	pcap_usb_header_mmapped h = {
		.id = e->id,
		.event_type = (uint8_t)e->ev,
		.transfer_type = e->type,
		.endpoint_number = e->ep,
		.device_address = e->dev ? e->dev : c->dev,
		.bus_id = e->bus ? e->bus : c->bus,
		/* usbmon's flags: 0 when present, else a letter saying why not */
		.setup_flag = e->setup ? 0 : '-',
		.data_flag = e->data_len ? 0 : (e->ev == 'S' ? '<' : '>'),
		.status = e->status,
		.urb_len = e->urb_len,
		.data_len = e->data_len,
	};
	size_t hlen = c->link == DLT_USB_LINUX_MMAPPED ? sizeof(pcap_usb_header_mmapped)
						       : sizeof(pcap_usb_header);
	struct pcap_pkthdr ph;

	if (e->data_len > sizeof(pkt) - hlen)
		abort();
	c->t_us += 1000;
	h.ts_sec = (int64_t)(c->t_us / 1000000);
	h.ts_usec = (int32_t)(c->t_us % 1000000);
	if (e->setup)
		memcpy(&h.s.setup, e->setup, 8);
	memcpy(pkt, &h, hlen);
	if (e->data_len)
		memcpy(pkt + hlen, e->data, e->data_len);
	ph.ts.tv_sec = (time_t)h.ts_sec;
	ph.ts.tv_usec = h.ts_usec;
	ph.caplen = ph.len = (bpf_u_int32)(hlen + e->data_len);
	pcap_dump((u_char *)c->d, &ph, pkt);
}

static inline void cap_close(struct capture *c)
{
	pcap_dump_close(c->d);
	pcap_close(c->p);
}

#endif

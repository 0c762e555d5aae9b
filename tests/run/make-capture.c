// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * make-capture - writes the usbmon captures test-nodes.sh replays with
 * classfs-run -p for tests/run/data/usbdev.umockdev (bus 1, device 5),
 * so that no binary file is kept in the repository:
 *
 *   make-capture probe FILE   what node-probe's usb mode does: a
 *                             GET_DESCRIPTOR of the device descriptor, a
 *                             bulk OUT of "ping" on endpoint 0x02 and a
 *                             bulk IN on 0x81 that brings back "pong";
 *                             between them talk device 1/6 (a bulk OUT no
 *                             program here makes: were it not left out,
 *                             the replay would wait for it for good) and
 *                             the same address on bus 2
 *   make-capture lsusb FILE   what lsusb -v asks of the device beyond the
 *                             descriptors it reads in /sys: the device
 *                             qualifier, the debug descriptor (stalled, as
 *                             most devices do) and GET_STATUS
 *
 * The captures are pcap, LINKTYPE_USB_LINUX_MMAPPED, as wireshark and
 * tcpdump record usbmonN.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <pcap/pcap.h>
#include <pcap/usb.h>

#include "../usbmon-write.h"

#define BUS 1
#define DEV 5

/* usbmon's transfer types */
#define XFER_CONTROL 2
#define XFER_BULK 3

/* the URB ids (the kernel's URB addresses) */
#define ID_OTHER 0xffff888000000100ull
#define ID_BUS2 0xffff888000000200ull
#define ID_CTRL 0xffff888000000300ull
#define ID_OUT 0xffff888000000400ull
#define ID_IN 0xffff888000000500ull
#define ID_QUALIFIER 0xffff888000000600ull
#define ID_DEBUG 0xffff888000000700ull
#define ID_STATUS 0xffff888000000800ull

/* GET_DESCRIPTOR(DEVICE), 18 bytes, and what tests/run/data/usbdev.umockdev records */
static const uint8_t get_descriptor[8] = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00 };
static const uint8_t device_descriptor[18] = { 0x12, 0x01, 0x00, 0x02, 0xff, 0x00, 0x00, 0x40,
					       0x34, 0x12, 0x78, 0x56, 0x00, 0x01, 0x01, 0x02,
					       0x00, 0x01 };
/* lsusb -v's: GET_DESCRIPTOR(DEVICE_QUALIFIER) and (DEBUG), GET_STATUS(DEVICE) */
static const uint8_t get_qualifier[8] = { 0x80, 0x06, 0x00, 0x06, 0x00, 0x00, 0x0a, 0x00 };
static const uint8_t qualifier[10] = { 0x0a, 0x06, 0x00, 0x02, 0xff, 0x00, 0x00, 0x40, 0x01, 0x00 };
static const uint8_t get_debug[8] = { 0x80, 0x06, 0x00, 0x0a, 0x00, 0x00, 0x04, 0x00 };
static const uint8_t get_status[8] = { 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00 };
static const uint8_t status[2] = { 0x00, 0x00 };

/* an event of the device unless .bus or .dev say otherwise, into @cap */
#define S(...) cap_event(cap, &(struct event){ .ev = 'S', __VA_ARGS__ })
#define C(...) cap_event(cap, &(struct event){ .ev = 'C', __VA_ARGS__ })

static void probe_session(struct capture *cap)
{
	S(.type = XFER_BULK, .ep = 0x02, .dev = 6, .id = ID_OTHER, .urb_len = 4, .data = "xxxx",
	  .data_len = 4);
	S(.type = XFER_CONTROL, .ep = 0x80, .id = ID_CTRL, .setup = get_descriptor, .urb_len = 18);
	S(.type = XFER_BULK, .ep = 0x81, .bus = 2, .id = ID_BUS2, .urb_len = 64);
	C(.type = XFER_CONTROL, .ep = 0x80, .id = ID_CTRL, .urb_len = 18,
	  .data = device_descriptor, .data_len = 18);
	C(.type = XFER_BULK, .ep = 0x02, .dev = 6, .id = ID_OTHER, .urb_len = 4);
	S(.type = XFER_BULK, .ep = 0x02, .id = ID_OUT, .urb_len = 4, .data = "ping", .data_len = 4);
	C(.type = XFER_BULK, .ep = 0x02, .id = ID_OUT, .urb_len = 4);
	S(.type = XFER_BULK, .ep = 0x81, .id = ID_IN, .urb_len = 64);
	C(.type = XFER_BULK, .ep = 0x81, .bus = 2, .id = ID_BUS2, .urb_len = 3, .data = "abc",
	  .data_len = 3);
	C(.type = XFER_BULK, .ep = 0x81, .id = ID_IN, .urb_len = 4, .data = "pong", .data_len = 4);
}

/* in the order lsusb (usbutils 014) asks; a request missing here would
 * wait for libusb's timeout (5 s) and fail */
static void lsusb_session(struct capture *cap)
{
	S(.type = XFER_CONTROL, .ep = 0x80, .id = ID_QUALIFIER, .setup = get_qualifier,
	  .urb_len = 10);
	C(.type = XFER_CONTROL, .ep = 0x80, .id = ID_QUALIFIER, .urb_len = 10, .data = qualifier,
	  .data_len = 10);
	S(.type = XFER_CONTROL, .ep = 0x80, .id = ID_DEBUG, .setup = get_debug, .urb_len = 4);
	C(.type = XFER_CONTROL, .ep = 0x80, .id = ID_DEBUG, .status = -EPIPE);
	S(.type = XFER_CONTROL, .ep = 0x80, .id = ID_STATUS, .setup = get_status, .urb_len = 2);
	C(.type = XFER_CONTROL, .ep = 0x80, .id = ID_STATUS, .urb_len = 2, .data = status,
	  .data_len = 2);
}

int main(int argc, char **argv)
{
	struct capture c = { .link = DLT_USB_LINUX_MMAPPED, .bus = BUS, .dev = DEV,
			     .t_us = 1700000000ull * 1000000 };
	void (*session)(struct capture *) = NULL;

	if (argc == 3 && !strcmp(argv[1], "probe"))
		session = probe_session;
	else if (argc == 3 && !strcmp(argv[1], "lsusb"))
		session = lsusb_session;
	if (!session) {
		fprintf(stderr, "usage: make-capture probe|lsusb FILE\n");
		return 2;
	}
	c.p = pcap_open_dead(DLT_USB_LINUX_MMAPPED, 65535);
	c.d = c.p ? pcap_dump_open(c.p, argv[2]) : NULL;
	if (!c.d) {
		fprintf(stderr, "make-capture: %s: %s\n", argv[2],
			c.p ? pcap_geterr(c.p) : "pcap_open_dead failed");
		return 1;
	}
	session(&c);
	/* a full disk is no capture: say so rather than replay half of one */
	if (pcap_dump_flush(c.d)) {
		fprintf(stderr, "make-capture: %s: cannot write it\n", argv[2]);
		return 1;
	}
	cap_close(&c);
	return 0;
}

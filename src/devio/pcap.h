/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * pcap.h - what pcap.c (reading a usbmon capture) hands pcap-replay.c
 * (answering a program's usbdevfs requests from it); private to devio.
 */
#ifndef CLASSFS_DEVIO_PCAP_H
#define CLASSFS_DEVIO_PCAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cfs_ioctl_handler;

/* usbmon's transfer types, which are usbdevfs's USBDEVFS_URB_TYPE_* too */
#define PCAP_XFER_ISO 0
#define PCAP_XFER_INTERRUPT 1
#define PCAP_XFER_CONTROL 2
#define PCAP_XFER_BULK 3

/* one ISO descriptor as usbmon records it (struct mon_bin_isodesc) */
struct pcap_isodesc {
	int32_t status;
	uint32_t offset;
	uint32_t len;
	uint32_t pad;
};

/**
 * struct pcap_event - one usbmon event of the replayed device
 * @id: the kernel's URB address: pairs a completion with its submission
 * @ts_ms: its time in the capture, in ms (umockdev's resolution)
 * @data: offset of its data in the capture's blob
 * @iso: offset of its ISO descriptors in the blob
 * @number: its number in the file (1 = first packet), for messages
 * @urb_len: 'S': the length submitted; 'C': the length transferred
 * @data_len: the bytes captured at @data
 * @ndesc: the ISO descriptors at @iso
 * @status: the URB's status ('C', 'E')
 * @start_frame: ISO start frame (LINKTYPE_USB_LINUX_MMAPPED only)
 * @error_count: ISO error count ('C' of an ISO URB)
 * @event: 'S' (submitted), 'C' (completed) or 'E' (submission failed)
 * @type: PCAP_XFER_*
 * @ep: the endpoint, 0x80 set for IN
 * @has_setup: @setup holds a control submission's setup packet
 * @setup: the setup packet, as on the wire
 */
struct pcap_event {
	uint64_t id;
	uint64_t ts_ms;
	size_t data;
	size_t iso;
	uint32_t number;
	uint32_t urb_len;
	uint32_t data_len;
	uint32_t ndesc;
	int32_t status;
	int32_t start_frame;
	int32_t error_count;
	uint8_t event;
	uint8_t type;
	uint8_t ep;
	bool has_setup;
	uint8_t setup[8];
};

/**
 * struct pcap_capture - the events of one device, in capture order
 * @path: the file, for messages
 * @ev: the events
 * @nev: how many
 * @blob: their data and ISO descriptors
 */
struct pcap_capture {
	char *path;
	struct pcap_event *ev;
	size_t nev;
	uint8_t *blob;
};

void pcap_capture_free(struct pcap_capture *cap);
/* pcap-replay.c: a handler replaying @cap, which it takes (freed with it) */
int pcap_replay_new(struct pcap_capture *cap, struct cfs_ioctl_handler *out);
const char *pcap_xfer_name(unsigned type);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-ioctl-file.c - a umockdev ioctl recording (tree or SPI log) as
 * cfs_ioctl_text_load() reads it, then a program's calls answered from
 * it: evdev, hidraw and cros_ec queries, URBs submitted, reaped and
 * discarded, an SPI message.  Checked here: no crash and no access past
 * a buffer of the request's size (ASan), a refused file is -EINVAL with
 * a message and no handler, a call's result is >= 0 or a -errno.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hidraw.h>
#include <linux/input.h>
#include <linux/spi/spidev.h>
#include <linux/usbdevice_fs.h>

#include "classfs-internal/devio.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CROS_EC_DEV_IOCXCMD_V2 _IOC(_IOC_READ | _IOC_WRITE, 0xEC, 0, 20)

static long call(struct cfs_ioctl_handler *h, unsigned long req, void *arg)
{
	struct cfs_ioctl_call c = { .request = req, .arg = (uintptr_t)arg,
				    .mem = &cfs_mem_self, .node = "/dev/fuzz" };
	long r = h->ioctl(h->data, &c);

	if (r < -4095 && r != CFS_IOCTL_PASS)
		abort();
	return r;
}

/* each buffer exactly the request's size: ASan sees an answer too long */
static void calls(struct cfs_ioctl_handler *h)
{
	uint8_t *name = malloc(256), *bits = malloc(96), *in = malloc(64), out[4] = "PING";
	struct hidraw_report_descriptor *rd = malloc(sizeof(*rd));
	struct input_absinfo *abs = malloc(sizeof(*abs));
	struct {
		uint32_t version, command, outsize, insize, result;
		uint8_t data[16];
	} *ec = calloc(1, sizeof(*ec));
	struct usbdevfs_urb ui = { .type = USBDEVFS_URB_TYPE_BULK, .endpoint = 0x81,
				   .buffer = in, .buffer_length = 64 };
	struct usbdevfs_urb uo = { .type = USBDEVFS_URB_TYPE_BULK, .endpoint = 0x02,
				   .buffer = out, .buffer_length = 4 };
	struct usbdevfs_urb *reaped;
	uint8_t tx[2] = { 0x8f, 0 }, rx[2];
	struct spi_ioc_transfer x = { .tx_buf = (uintptr_t)tx, .rx_buf = (uintptr_t)rx, .len = 2 };
	int v;

	for (int round = 0; round < 2; round++) {
		call(h, EVIOCGVERSION, &v);
		call(h, EVIOCGNAME(256), name);
		call(h, EVIOCGBIT(EV_KEY, 96), bits);
		call(h, EVIOCGABS(ABS_X), abs);
		call(h, HIDIOCGRDESCSIZE, &v);
		call(h, HIDIOCGRDESC, rd);
		ec->insize = 16;
		call(h, CROS_EC_DEV_IOCXCMD_V2, ec);
		call(h, USBDEVFS_SUBMITURB, &uo);
		call(h, USBDEVFS_SUBMITURB, &ui);
		call(h, USBDEVFS_REAPURBNDELAY, &reaped);
		call(h, USBDEVFS_DISCARDURB, &ui);
		call(h, USBDEVFS_REAPURB, &reaped);
		call(h, USBDEVFS_REAPURB, &reaped);
		call(h, SPI_IOC_MESSAGE(1), &x);
	}
	free(name);
	free(bits);
	free(in);
	free(rd);
	free(abs);
	free(ec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfs_ioctl_handler h = { 0 };
	char msg[256] = "";
	int err;

	err = cfs_ioctl_text_load((const char *)data, size, "fuzz", NULL, &h, msg, sizeof(msg));
	if (err) {
		if ((err != -EINVAL && err != -ENOMEM) || !msg[0] || h.ioctl)
			abort();
		return 0;
	}
	calls(&h);
	h.free(h.data);
	return 0;
}

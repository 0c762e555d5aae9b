// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-ioctl-tree.c - umockdev ioctl recordings answering ioctl()
 * (src/devio/ioctl-*.c, spi.c): our own made-up devices in umockdev's
 * format (tests/devio/data: a USB device's control, bulk and interrupt
 * URBs, an evdev keyboard, a hidraw token, a cros_ec command pair, an SPI
 * sensor) replayed with the kernel's structs in this process's memory
 * (cfs_mem_self), as a program's calls would be; every error a file or a
 * call can meet; and a recorder's tree written and read back.
 */
#include <fcntl.h>
#include <unistd.h>
#include <linux/hidraw.h>
#include <linux/input.h>
#include <linux/spi/spidev.h>
#include <linux/usbdevice_fs.h>

#include "../harness.h"
#include "classfs-internal/devio.h"

#ifndef DATA_DIR
#error "DATA_DIR: the recordings' folder"
#endif

#define CROS_EC_DEV_IOCXCMD_V2 _IOC(_IOC_READ | _IOC_WRITE, 0xEC, 0, 20)
#define CROS_EC_DEV_IOCEVENTMASK_V2 _IO(0xEC, 2)

/* ---- helpers ---- */

static struct cfs_ioctl_handler load(const char *file, const char *node)
{
	struct cfs_ioctl_handler h = { 0 };
	char path[512], msg[512] = "";
	int err;

	snprintf(path, sizeof(path), "%s/%s", DATA_DIR, file);
	err = cfs_ioctl_file_load(path, node, &h, msg, sizeof(msg));
	if (err)
		fprintf(stderr, "  loading %s: %d %s\n", path, err, msg);
	return h;
}

/* the node's open()s so far, as the supervisor counts them */
static unsigned long opens;

static long call_mem(struct cfs_ioctl_handler *h, unsigned long req, const void *arg,
		     const struct cfs_mem *mem)
{
	struct cfs_ioctl_call c = { .request = req, .arg = (uintptr_t)arg, .mem = mem,
				    .node = "/dev/test", .opens = opens };

	return h->ioctl(h->data, &c);
}

static long call(struct cfs_ioctl_handler *h, unsigned long req, const void *arg)
{
	return call_mem(h, req, arg, &cfs_mem_self);
}

/* the lines cfs_devio_log() writes while a test's calls run */
static int saved_stderr = -1;
static FILE *captured;

static void capture(void)
{
	fflush(stderr);
	captured = tmpfile();
	saved_stderr = dup(2);
	dup2(fileno(captured), 2);
}

static char *captured_text(void)
{
	static char text[4096];
	size_t n;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	rewind(captured);
	n = fread(text, 1, sizeof(text) - 1, captured);
	text[n] = '\0';
	fclose(captured);
	fputs(text, stderr);	/* a failing CHECK's own line, if any, is seen */
	return text;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* a process whose memory faults at one address (a write to it) */
static uint64_t fault_at;

static int fault_write(void *ctx, uint64_t addr, const void *buf, size_t len)
{
	if (addr <= fault_at && fault_at < addr + len)
		return -EFAULT;
	return cfs_mem_self.write(ctx, addr, buf, len);
}

static int plain_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return cfs_mem_self.read(ctx, addr, buf, len);
}

static const struct cfs_mem fault_mem = { .read = plain_read, .write = fault_write };

/* ---- USB ---- */

static struct usbdevfs_urb urb(unsigned char type, unsigned char ep, void *buf, int len)
{
	return (struct usbdevfs_urb){ .type = type, .endpoint = ep, .buffer = buf,
				      .buffer_length = len };
}

TEST(usb_stateless_and_simple)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", "/dev/bus/usb/001/002");
	struct usbdevfs_connectinfo ci = { 0 };
	uint32_t caps = 0;
	unsigned int iface = 0;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, USBDEVFS_CONNECTINFO, &ci), 0);
	CHECK_INT(ci.devnum, 2);
	CHECK_INT(call(&h, USBDEVFS_GET_CAPABILITIES, &caps), 0);
	CHECK_INT(caps, 0xf);
	/* answered without the tree, as umockdev does */
	CHECK_INT(call(&h, USBDEVFS_CLAIMINTERFACE, &iface), 0);
	CHECK_INT(call(&h, USBDEVFS_RELEASEINTERFACE, &iface), 0);
	CHECK_INT(call(&h, USBDEVFS_RESET, NULL), 0);
	CHECK_INT(call(&h, USBDEVFS_GETDRIVER, &iface), -ENODATA);
	h.free(h.data);
}

TEST(usb_control_in_urb)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", NULL);
	uint8_t buf[26] = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00 };
	struct usbdevfs_urb u = urb(USBDEVFS_URB_TYPE_CONTROL, 0, buf, sizeof(buf));
	struct usbdevfs_urb *reaped = NULL;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &u), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &u);
	CHECK_INT(u.status, 0);
	CHECK_INT(u.actual_length, 18);
	CHECK_INT(buf[8], 0x12);	/* bLength */
	CHECK_INT(buf[9], 0x01);	/* bDescriptorType: device */
	CHECK_INT(buf[16] | buf[17] << 8, 0x1d6b);
	/* the setup packet stays the program's */
	CHECK_INT(buf[0], 0x80);
	/* another request's setup packet is not in the recording */
	buf[2] = 0x03;
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &u), -ENOTTY);
	h.free(h.data);
}

TEST(usb_bulk_exchange)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", NULL);
	char out[4], in[64];
	struct usbdevfs_urb o = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, 4);
	struct usbdevfs_urb i = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, 64);
	struct usbdevfs_urb *reaped = NULL;

	REQUIRE(h.ioctl);
	memcpy(out, "PING", 4);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &o), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &o);
	CHECK_INT(o.actual_length, 4);
	memset(in, 'x', sizeof(in));
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &i), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &i);
	CHECK_INT(i.actual_length, 4);
	CHECK(!memcmp(in, "PONGx", 5));
	/* the same read again: the answer recorded under the first */
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &i), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK_INT(i.actual_length, 6);
	CHECK(!memcmp(in, "PONG?!", 6));
	/* QUIT is answered with a stall */
	memcpy(out, "QUIT", 4);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &o), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &i), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK_INT(i.status, -EPIPE);
	CHECK_INT(i.actual_length, 0);
	/* nothing submitted: nothing to reap */
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), -EAGAIN);
	CHECK_INT(call(&h, USBDEVFS_REAPURBNDELAY, &reaped), -EAGAIN);
	h.free(h.data);
}

TEST(usb_submits_queue)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", NULL);
	char out[4] = { 'P', 'I', 'N', 'G' }, in[64];
	struct usbdevfs_urb o = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, 4);
	struct usbdevfs_urb i = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, 64);
	struct usbdevfs_urb *reaped = NULL;

	REQUIRE(h.ioctl);
	/* libusb submits a write and the read of its answer before reaping */
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &o), 0);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &i), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &o);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &i);
	CHECK(!memcmp(in, "PONG", 4));
	h.free(h.data);
}

TEST(usb_interrupt_ndelay)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", NULL);
	uint8_t buf[8] = { 0 };
	struct usbdevfs_urb u = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, buf, 8);
	struct usbdevfs_urb *reaped = NULL;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &u), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURBNDELAY, &reaped), 0);
	CHECK(reaped == &u);
	CHECK_INT(buf[0], 1);
	CHECK_INT(buf[7], 8);
	h.free(h.data);
}

TEST(usb_discard)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", NULL);
	char in[64];
	struct usbdevfs_urb i = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, 64), other = i;
	struct usbdevfs_urb *reaped = NULL;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &i), 0);
	CHECK_INT(call(&h, USBDEVFS_DISCARDURB, &other), -EINVAL);
	CHECK_INT(call(&h, USBDEVFS_DISCARDURB, &i), 0);
	CHECK_INT(call(&h, USBDEVFS_DISCARDURB, &i), -EINVAL);
	/* reaped all the same, unlinked: what libusb waits for */
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &i);
	CHECK_INT(i.status, -ENOENT);
	CHECK_INT(i.actual_length, 0);
	h.free(h.data);
}

TEST(usb_unrecorded_logged_once)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", NULL);
	char out[4] = { 'P', 'A', 'N', 'G' };
	struct usbdevfs_urb o = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, 4);
	struct usbdevfs_ctrltransfer ct = { 0 };
	char *log;

	REQUIRE(h.ioctl);
	capture();
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &o), -ENOTTY);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &o), -ENOTTY);
	/* not in umockdev's format: a program gets what umockdev answers */
	CHECK_INT(call(&h, USBDEVFS_CONTROL, &ct), -ENOTTY);
	log = captured_text();
	CHECK_INT(count(log, "classfs: /dev/test: ioctl 0x"), 2);
	CHECK_INT(count(log, "(USBDEVFS_SUBMITURB, size "), 1);
	CHECK_INT(count(log, "(_IOWR('U', 0x00), size 24) is not in the recording "), 1);
	CHECK(strstr(log, "/usb-device.ioctl\n") != NULL);
	h.free(h.data);
}

TEST(usb_bad_pointers)
{
	struct cfs_ioctl_handler h = load("usb-device.ioctl", NULL);
	char out[4] = { 'P', 'I', 'N', 'G' };
	struct usbdevfs_urb o = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, 4);
	struct usbdevfs_urb nobuf = urb(USBDEVFS_URB_TYPE_BULK, 0x02, NULL, 4);
	struct usbdevfs_urb neg = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, -1);
	struct usbdevfs_urb *reaped = NULL;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, USBDEVFS_CONNECTINFO, NULL), -EFAULT);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, NULL), -EFAULT);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &nobuf), -EFAULT);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &neg), -EINVAL);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &o), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, NULL), -EFAULT);
	/* the URB's status cannot be written: it stays to be reaped */
	fault_at = (uintptr_t)&o.status;
	CHECK_INT(call_mem(&h, USBDEVFS_REAPURB, &reaped, &fault_mem), -EFAULT);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &o);
	h.free(h.data);
}

/* ---- evdev ---- */

TEST(evdev_queries)
{
	struct cfs_ioctl_handler h = load("keyboard.ioctl", "/dev/input/event3");
	char name[256], phys[256];
	unsigned long evbits[1] = { 0 }, keys[96 / sizeof(long)] = { 0 };
	struct input_absinfo abs = { 0 };
	struct input_id id = { 0 };
	unsigned int rep[2] = { 0 };
	int32_t slots[5] = { ABS_MT_POSITION_X };
	int version = 0;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, EVIOCGVERSION, &version), 0);
	CHECK_INT(version, 0x010001);
	CHECK_INT(call(&h, EVIOCGID, &id), 0);
	CHECK_INT(id.bustype, BUS_USB);
	CHECK_INT(id.vendor, 0x1d6b);
	CHECK_INT(call(&h, EVIOCGNAME(sizeof(name)), name), 22);
	CHECK_STR(name, "classfs test keyboard");
	CHECK_INT(call(&h, EVIOCGPHYS(sizeof(phys)), phys), 10);
	CHECK_STR(phys, "usb-1/in0");
	CHECK_INT(call(&h, EVIOCGBIT(0, sizeof(evbits)), evbits), 8);
	CHECK(evbits[0] & (1 << EV_KEY));
	CHECK(evbits[0] & (1 << EV_REP));
	CHECK_INT(call(&h, EVIOCGBIT(EV_KEY, sizeof(keys)), keys), 96);
	CHECK(keys[0] & (1 << KEY_ESC));
	CHECK_INT(call(&h, EVIOCGREP, rep), 0);
	CHECK_INT(rep[0], 250);
	CHECK_INT(call(&h, EVIOCGKEY(sizeof(keys)), keys), 96);
	CHECK_INT(keys[0], 0);
	CHECK_INT(call(&h, EVIOCGABS(ABS_X), &abs), 0);
	CHECK_INT(abs.value, 100);
	CHECK_INT(abs.maximum, 4095);
	CHECK_INT(call(&h, EVIOCGABS(ABS_Y), &abs), 0);
	CHECK_INT(abs.value, 200);
	CHECK_INT(call(&h, EVIOCGABS(ABS_MT_SLOT), &abs), 0);
	CHECK_INT(abs.maximum, 9);
	CHECK_INT(call(&h, EVIOCGMTSLOTS(sizeof(slots)), slots), 0);
	CHECK_INT(slots[1], 7);
	CHECK_INT(slots[2], -1);
	/* asked again, out of order: the search goes round the tree */
	version = 0;
	CHECK_INT(call(&h, EVIOCGVERSION, &version), 0);
	CHECK_INT(version, 0x010001);
	CHECK_INT(call(&h, EVIOCGRAB, (void *)1), 0);
	h.free(h.data);
}

TEST(evdev_missing_is_enoent)
{
	struct cfs_ioctl_handler h = load("keyboard.ioctl", NULL);
	char name[64], uniq[256];
	unsigned long absbits[1];
	struct input_absinfo abs;
	int clk = 1;
	char *log;

	REQUIRE(h.ioctl);
	capture();
	/* the name was recorded for a 256 byte buffer: another is another request */
	CHECK_INT(call(&h, EVIOCGNAME(sizeof(name)), name), -ENOENT);
	CHECK_INT(call(&h, EVIOCGNAME(sizeof(name)), name), -ENOENT);
	CHECK_INT(call(&h, EVIOCGUNIQ(sizeof(uniq)), uniq), -ENOENT);
	CHECK_INT(call(&h, EVIOCGBIT(EV_ABS, sizeof(absbits)), absbits), -ENOENT);
	CHECK_INT(call(&h, EVIOCGABS(ABS_PRESSURE), &abs), -ENOENT);
	CHECK_INT(call(&h, EVIOCSCLOCKID, &clk), -ENOENT);
	/* not evdev: ENOTTY */
	CHECK_INT(call(&h, HIDIOCGRDESCSIZE, &clk), -ENOTTY);
	CHECK_INT(call(&h, _IO('T', 0x01), NULL), -ENOTTY);
	log = captured_text();
	CHECK_INT(count(log, "classfs: "), 7);
	CHECK_INT(count(log, "(EVIOCGNAME, size 64) is not in the recording"), 1);
	CHECK_INT(count(log, "(EVIOCGBIT(3), size 8)"), 1);
	CHECK_INT(count(log, "(EVIOCGABS(24), size 24)"), 1);
	CHECK_INT(count(log, "(_IOW('E', 0xa0), size 4)"), 1);
	CHECK_INT(count(log, "(_IO('T', 0x01), size 0)"), 1);
	h.free(h.data);
}

/* ---- hidraw, cros_ec ---- */

TEST(hidraw_queries)
{
	struct cfs_ioctl_handler h = load("hidraw.ioctl", "/dev/hidraw0");
	struct hidraw_report_descriptor rd = { 0 };
	struct hidraw_devinfo info = { 0 };
	char name[256], feature[16] = { 5 };
	int size = 0;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, HIDIOCGRDESCSIZE, &size), 0);
	CHECK_INT(size, 34);
	CHECK_INT(call(&h, HIDIOCGRDESC, &rd), 0);
	CHECK_INT(rd.size, 34);
	CHECK_INT(rd.value[0], 0x06);
	CHECK_INT(rd.value[33], 0xc0);
	CHECK_INT(call(&h, HIDIOCGRAWINFO, &info), 0);
	CHECK_INT(info.bustype, BUS_USB);
	CHECK_INT((uint16_t)info.vendor, 0x1d6b);
	CHECK_INT(call(&h, HIDIOCGRAWNAME(sizeof(name)), name), 20);
	CHECK_STR(name, "classfs test token");
	CHECK_INT(call(&h, HIDIOCGFEATURE(sizeof(feature)), feature), 4);
	CHECK_INT((uint8_t)feature[1], 0xde);
	CHECK_INT(call(&h, HIDIOCGFEATURE(8), feature), -ENOTTY);
	CHECK_INT(call(&h, HIDIOCGRDESC, NULL), -EFAULT);
	h.free(h.data);
}

struct ec_cmd {
	uint32_t version, command, outsize, insize, result;
	uint8_t data[8];
};

TEST(cros_ec_in_order)
{
	struct cfs_ioctl_handler h = load("cros-ec.ioctl", "/dev/cros_fp");
	struct ec_cmd c = { .command = 0x402, .insize = 8 };

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 4);
	CHECK_INT(c.insize, 4);
	CHECK_INT(c.data[3], 4);
	memset(&c, 0, sizeof(c));
	c.insize = 1;	/* room for one byte of the answer: no more is written */
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 2);
	CHECK_INT(c.command, 0x403);
	CHECK_INT(c.data[0], 0xab);
	CHECK_INT(c.data[1], 0);
	/* the third goes round to the first answer */
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 4);
	CHECK_INT(c.command, 0x402);
	CHECK_INT(call(&h, CROS_EC_DEV_IOCEVENTMASK_V2, NULL), -ENODATA);
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, NULL), -EFAULT);
	h.free(h.data);
}

/* each open starts the search from the top, as each client of umockdev's does */
TEST(open_starts_from_the_top)
{
	struct cfs_ioctl_handler h = load("cros-ec.ioctl", "/dev/cros_fp");
	struct ec_cmd c = { .insize = 8 };

	REQUIRE(h.ioctl);
	opens++;
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 4);
	CHECK_INT(c.command, 0x402);
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 2);
	CHECK_INT(c.command, 0x403);
	/* a second program opens the node: the first answer again, then the second */
	opens++;
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 4);
	CHECK_INT(c.command, 0x402);
	opens++;
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 4);
	CHECK_INT(c.command, 0x402);
	CHECK_INT(call(&h, CROS_EC_DEV_IOCXCMD_V2, &c), 2);
	CHECK_INT(c.command, 0x403);
	h.free(h.data);
}

/* ---- SPI ---- */

static struct spi_ioc_transfer xfer(const void *tx, void *rx, uint32_t len)
{
	return (struct spi_ioc_transfer){ .tx_buf = (uintptr_t)tx, .rx_buf = (uintptr_t)rx,
					  .len = len };
}

TEST(spi_exchange)
{
	struct cfs_ioctl_handler h = load("spi-sensor.ioctl", "/dev/spidev0.0");
	uint8_t reg = 0x8f, val = 0, two[2] = { 0 }, fd_tx[2] = { 0x0f, 0 }, fd_rx[2] = { 0 };
	struct spi_ioc_transfer m[2] = { xfer(&reg, NULL, 1), xfer(NULL, &val, 1) };
	uint8_t mode = 0;

	REQUIRE(h.ioctl);
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(2), m), 2);
	CHECK_INT(val, 0x33);
	/* the recorded two-byte read as two one-byte transfers */
	reg = 0xa8;
	m[1] = xfer(NULL, two, 1);
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(2), m), 2);
	m[0] = xfer(NULL, two + 1, 1);
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(1), m), 1);
	CHECK_INT(two[0], 0x11);
	CHECK_INT(two[1], 0x22);
	m[0] = xfer(fd_tx, fd_rx, 2);
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(1), m), 2);
	CHECK_INT(fd_rx[1], 0xaa);
	/* past the recording's end */
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(1), m), -ENOENT);
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(0), m), 0);
	capture();
	CHECK_INT(call(&h, SPI_IOC_RD_MODE, &mode), -ENOTTY);
	CHECK_INT(call(&h, SPI_IOC_RD_MODE, &mode), -ENOTTY);
	CHECK_INT(count(captured_text(), "SPI_IOC_MESSAGE only"), 1);
	h.free(h.data);
}

TEST(spi_errors)
{
	struct cfs_ioctl_handler h = load("spi-sensor.ioctl", NULL);
	uint8_t reg = 0x8e, val;
	struct spi_ioc_transfer m[2] = { xfer(&reg, NULL, 1), xfer(NULL, &val, 1) };

	REQUIRE(h.ioctl);
	capture();
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(2), m), -ENOMSG);	/* another register */
	reg = 0x8f;
	m[0] = xfer(NULL, &val, 1);				/* reads, log writes */
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(1), m), -ENOMSG);
	CHECK_INT(count(captured_text(), "spi-sensor.ioctl:3 ("), 2);
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(1), NULL), -EFAULT);
	m[0] = xfer(NULL, NULL, 1);			/* no buffers: nothing moves */
	CHECK_INT(call(&h, SPI_IOC_MESSAGE(1), m), 0);
	/* not a number of transfers */
	CHECK_INT(call(&h, _IOW(SPI_IOC_MAGIC, 0, char[33]), m), -EINVAL);
	h.free(h.data);
}

/* ---- files ---- */

struct bad_case {
	const char *text, *msg;
};

TEST(bad_files)
{
	static const struct bad_case cases[] = {
		{ "OBSOLETE: Release news\n", "t.ioctl:1: unknown ioctl \"OBSOLETE:\"" },
		{ "EVIOCGVERSION 0 01000100\nEVIOCGFOO 0 00\n", "t.ioctl:2: unknown ioctl \"EVIOCGFOO\"" },
		{ "EVIOCGVERSION 0 0100010G\n", "t.ioctl:1: 'G' in the data is no hexadecimal digit" },
		{ "EVIOCGVERSION 0 010001000\n", "t.ioctl:1: the data has an odd number" },
		{ "EVIOCGVERSION 0 01 00\n", "t.ioctl:1: ' ' in the data" },
		{ "EVIOCGVERSION\n", "t.ioctl:1: EVIOCGVERSION's result is missing" },
		{ "EVIOCGVERSION x 00\n", "t.ioctl:1: EVIOCGVERSION's result is missing or no number" },
		{ "# c\n EVIOCGVERSION 0 01000100\n", "t.ioctl:2: the first entry is indented" },
		{ "EVIOCGID 0 00\n  EVIOCGVERSION 0 00\n", "t.ioctl:2: indented 2 levels, the line above 0" },
		{ "EVIOCGID 0 00\n\tEVIOCGVERSION 0 00\n", "t.ioctl:2: a tab in the indentation" },
		{ "EVIOCGABS(64) 0 00\n", "t.ioctl:1: \"EVIOCGABS(64)\": index 64 is past EVIOCGABS's last, 63" },
		{ "EVIOCGABS(x) 0 00\n", "the index in parentheses is no number" },
		{ "EVIOCGBIT(1 0 00\n", "the index in parentheses is no number" },
		{ "USBDEVFS_CLAIMINTERFACE 0\n", "t.ioctl:1: USBDEVFS_CLAIMINTERFACE is never recorded" },
		{ "USBDEVFS_SUBMITURB 0 3 2 0 0 4 4 0 00\n", "a REAPURB line answers its URB" },
		{ "USBDEVFS_REAPURB 0 3 2 0 0 4\n", "t.ioctl:1: the URB's actual_length is missing" },
		{ "USBDEVFS_REAPURB 0 3 256 0 0 4 4 0 00\n", "the URB's endpoint is missing or out of range" },
		{ "USBDEVFS_REAPURB 0 3 129 0 0 4 5 0 00\n", "actual_length 5 exceeds its buffer_length 4" },
		{ "USBDEVFS_REAPURB 0 3 2 0 0 1 1 0 0000\n", "holds 2 bytes, more than its buffer_length 1" },
		{ "CROS_EC_DEV_IOCXCMD_V2 0 0000\n", "2 bytes of data, not a command and its insize" },
		{ "EVIOCGVERSION 0 01\0 00\n", "t.ioctl:1: a NUL byte in the line" },
		{ "@DEV /dev/input/event9\nEVIOCGVERSION 0 01000100\n", "t.ioctl:1: a recording of /dev/input/event9, not of /dev/test" },
		{ "@DEV /dev/test (pcap)\n", "t.ioctl:1: \"pcap\" is no format" },
		{ "@DEV \n", "t.ioctl:1: \"@DEV\" names no node" },
		{ "", "t.ioctl: no ioctl in the recording (an empty file)" },
		{ "# only\n@DEV /dev/test\n\n", "t.ioctl: no ioctl in the recording (only comments" },
		{ "@DEV /dev/test (SPI)\nXW 00\n", "t.ioctl:2: a line starts with T" },
		{ "@DEV /dev/test (SPI)\nCW 00\n", "t.ioctl:2: a continued transfer (C) with no transfer" },
		{ "@DEV /dev/test (SPI)\n R 00\n", "t.ioctl:2: a line starts with T" },
		{ "@DEV /dev/test (SPI)\nTX 00\n", "t.ioctl:2: 'X' is no direction" },
		{ "@DEV /dev/test (SPI)\nTW 0\n", "t.ioctl:2: the data has an odd number" },
		{ "@DEV /dev/test (SPI)\nTW zz\n", "t.ioctl:2: 'z' in the data" },
		{ "@DEV /dev/test (SPI)\nTW\n", "t.ioctl:2: not \"TW HEX\"" },
		{ "@DEV /dev/test (SPI)\nTW 00\n W 00\n", "t.ioctl:3: a second W in one transfer" },
		{ "@DEV /dev/test (SPI)\nTW 0000\n R 00\n", "t.ioctl:3: 1 bytes, the transfer's other direction 2" },
	};
	char msg[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cfs_ioctl_handler h = { 0 };
		/* the NUL case's length is its literal's */
		size_t len = strlen(cases[i].text);
		int err;

		if (strstr(cases[i].msg, "NUL byte"))
			len = sizeof("EVIOCGVERSION 0 01\0 00\n") - 1;
		msg[0] = '\0';
		err = cfs_ioctl_text_load(cases[i].text, len, "t.ioctl", "/dev/test", &h, msg,
					  sizeof(msg));
		CHECK_INT(err, -EINVAL);
		if (!strstr(msg, cases[i].msg)) {
			fprintf(stderr, "  case %zu: \"%s\", expected \"", i, msg);
			fputs(cases[i].msg, stderr);
			fputs("\"\n", stderr);
			test_failed_now = 1;
		}
		CHECK(h.ioctl == NULL);
	}
}

TEST(good_headers)
{
	static const char *const texts[] = {
		"@DEV /dev/test\nEVIOCGVERSION 0 01000100\n",
		"# recorded by hand\n\n@DEV /dev/test\nEVIOCGVERSION 0 01000100\r\n",
		"EVIOCGVERSION 0 01000100",	/* no @DEV, no last newline */
		"@DEV /dev/test (SPI)\n",	/* an SPI log of nothing */
	};
	int version;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		struct cfs_ioctl_handler h = { 0 };
		char msg[256] = "";

		CHECK_INT(cfs_ioctl_text_load(texts[i], strlen(texts[i]), "t", "/dev/test", &h,
					      msg, sizeof(msg)), 0);
		CHECK_STR(msg, "");
		if (!h.ioctl)
			continue;
		version = 0;
		if (i < 3) {
			CHECK_INT(call(&h, EVIOCGVERSION, &version), 0);
			CHECK_INT(version, 0x010001);
		}
		h.free(h.data);
	}
}

TEST(file_errors)
{
	struct cfs_ioctl_handler h = { 0 };
	char msg[512], path[512];
	FILE *f;

	CHECK_INT(cfs_ioctl_file_load("/non/existing.ioctl", NULL, &h, msg, sizeof(msg)),
		  -ENOENT);
	CHECK_STR(msg, "/non/existing.ioctl: No such file or directory");
	/* umockdev-run -i /dev/bus/usb/001/011=/dev/null: refused */
	CHECK_INT(cfs_ioctl_file_load("/dev/null", "/dev/bus/usb/001/011", &h, msg, sizeof(msg)),
		  -EINVAL);
	CHECK_STR(msg, "/dev/null: no ioctl in the recording (an empty file)");
	CHECK_INT(cfs_ioctl_file_load(DATA_DIR, NULL, &h, msg, sizeof(msg)), -EISDIR);
	CHECK_INT(cfs_ioctl_file_load(DATA_DIR "/keyboard.ioctl", "/dev/input/event4", &h, msg,
				      sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "keyboard.ioctl:1: a recording of /dev/input/event3, not of "
			  "/dev/input/event4") != NULL);
	snprintf(path, sizeof(path), "/tmp/test-ioctl-tree-%d.ioctl.xz", (int)getpid());
	f = fopen(path, "w");
	REQUIRE(f);
	fputs("\xfd" "7zXZ", f);
	fputc(0, f);
	fclose(f);
	CHECK_INT(cfs_ioctl_file_load(path, NULL, &h, msg, sizeof(msg)), -EINVAL);
	CHECK(strstr(msg, "xz-compressed") != NULL);
	unlink(path);
	CHECK(h.ioctl == NULL);
}

/* ---- a recorder's tree ---- */

TEST(writer_round_trip)
{
	struct cfs_ioctl_tree *t = cfs_ioctl_tree_new();
	struct {
		struct usbdevfs_urb u;
		char buf[8];
	} o = { .u = urb(USBDEVFS_URB_TYPE_BULK, 0x02, NULL, 4), .buf = "PING" },
	  i = { .u = urb(USBDEVFS_URB_TYPE_BULK, 0x81, NULL, 64), .buf = "PONG" };
	struct input_absinfo abs = { .value = 5, .maximum = 10 };
	char name[16] = "kbd", *text = NULL, msg[256] = "";
	struct ec_cmd ec = { .command = 2, .insize = 1, .data = { 0x7f } };
	struct cfs_ioctl_handler h = { 0 };
	struct usbdevfs_urb *reaped = NULL;
	char out[4] = { 'P', 'I', 'N', 'G' }, in[64];
	struct usbdevfs_urb po = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, 4);
	struct usbdevfs_urb pi = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, 64);
	unsigned int version = 0x010001;
	size_t len = 0;
	FILE *f;

	REQUIRE(t);
	o.u.actual_length = 4;
	i.u.actual_length = 4;
	CHECK_INT(cfs_ioctl_tree_add(t, EVIOCGNAME(sizeof(name)), name, sizeof(name), 4), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, EVIOCGABS(ABS_Y), &abs, sizeof(abs), 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, EVIOCGVERSION, &version, 4, 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, EVIOCGVERSION, &version, 4, 0), 0);	/* the same */
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_REAPURB, &o, sizeof(o.u) + 4, 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_REAPURB, &i, sizeof(i.u) + 4, 0), 0);
	memcpy(i.buf, "PONG?!", 6);
	i.u.actual_length = 6;
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_REAPURB, &i, sizeof(i.u) + 6, 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_REAPURB, &o, sizeof(o.u) + 4, 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_REAPURB, &i, sizeof(i.u) + 6, 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, CROS_EC_DEV_IOCXCMD_V2, &ec, 21, 1), 0);
	/* nothing to add, or nothing the format holds */
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_CLAIMINTERFACE, NULL, 0, 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_SUBMITURB, &o, sizeof(o.u), 0), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, EVIOCGID, &abs, 8, -1), 0);
	CHECK_INT(cfs_ioctl_tree_add(t, _IOR('X', 1, int), &version, 4, 0), -EOPNOTSUPP);
	CHECK_INT(cfs_ioctl_tree_add(t, EVIOCGID, &abs, 7, 0), -EINVAL);
	CHECK_INT(cfs_ioctl_tree_add(t, USBDEVFS_REAPURB, &i, sizeof(i.u) + 5, 0), -EINVAL);
	CHECK_INT(cfs_ioctl_tree_add(t, CROS_EC_DEV_IOCXCMD_V2, &ec, 20, 1), -EINVAL);

	f = open_memstream(&text, &len);
	REQUIRE(f);
	CHECK_INT(cfs_ioctl_tree_write(t, "/dev/test", f), 0);
	fclose(f);
	cfs_ioctl_tree_free(t);
	CHECK_STR(text, "@DEV /dev/test\n"
			"EVIOCGNAME(0) 4 6B626400000000000000000000000000\n"
			"EVIOCGABS(1) 0 05000000000000000A000000000000000000000000000000\n"
			"EVIOCGVERSION 0 01000100\n"
			"USBDEVFS_REAPURB 0 3 2 0 0 4 4 0 50494E47\n"
			" USBDEVFS_REAPURB 0 3 129 0 0 64 4 0 504F4E47\n"
			"  USBDEVFS_REAPURB 0 3 129 0 0 64 6 0 504F4E473F21\n"
			" USBDEVFS_REAPURB 0 3 129 0 0 64 6 0 504F4E473F21\n"
			"CROS_EC_DEV_IOCXCMD_V2 1 00000000020000000000000001000000000000007F\n");

	/* read back, and answering as recorded */
	CHECK_INT(cfs_ioctl_text_load(text, len, "rec", "/dev/test", &h, msg, sizeof(msg)), 0);
	free(text);
	REQUIRE(h.ioctl);
	memset(name, 0, sizeof(name));
	CHECK_INT(call(&h, EVIOCGNAME(sizeof(name)), name), 4);
	CHECK_STR(name, "kbd");
	CHECK_INT(call(&h, EVIOCGABS(ABS_Y), &abs), 0);
	CHECK_INT(abs.maximum, 10);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &po), 0);
	CHECK_INT(call(&h, USBDEVFS_SUBMITURB, &pi), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK_INT(call(&h, USBDEVFS_REAPURB, &reaped), 0);
	CHECK(reaped == &pi);
	CHECK(!memcmp(in, "PONG", 4));
	h.free(h.data);
}

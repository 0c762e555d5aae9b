// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * node-probe - what a program that talks to a device node (an input
 * device, a tty, a USB device through usbdevfs, an SPI device through
 * spidev) sees of it, printed: linked statically in the tests (umockdev's preload library
 * cannot reach such a program; classfs's supervisor must).
 *
 *   node-probe evdev NODE COUNT   fstat(), EVIOCGVERSION, EVIOCGID,
 *                                 EVIOCGNAME, EVIOCGBIT(EV_KEY), then
 *                                 COUNT events read
 *   node-probe ioctl NODE REQUEST [HEX]  one ioctl of REQUEST (hex) with a
 *                                 64-byte buffer holding HEX; prints the
 *                                 result, errno and the buffer's first
 *                                 8 bytes
 *   node-probe echo NODE TEXT     write TEXT, then print one read's bytes
 *   node-probe usb NODE HEX       what libusb does with a usbdevfs node:
 *                                 GET_CAPABILITIES, a control URB reading
 *                                 the device descriptor, a bulk OUT URB of
 *                                 HEX on endpoint 0x02 and a bulk IN URB on
 *                                 0x81, each submitted and reaped
 *                                 (REAPURBNDELAY, retried for a second),
 *                                 or discarded when nothing came back
 *   node-probe spi NODE XFER...   one SPI_IOC_MESSAGE per XFER: HEX is
 *                                 one full-duplex transfer (HEX written,
 *                                 as many bytes read), HEX/N two (HEX
 *                                 written, then N bytes read, chip select
 *                                 held: a register read); prints the
 *                                 result, errno and the bytes read
 *
 * Its system calls are made with syscall(2), not through libc's
 * wrappers, as a Go program's are.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <linux/input.h>
#include <linux/spi/spidev.h>
#include <linux/usbdevice_fs.h>

/* a reap is retried this often, this far apart: libusb waits in poll()
 * up to its timeout, but the node's descriptor (a memfd) is always
 * ready, so a second's bound stands in for that timeout here */
#define REAP_TRIES 100
#define REAP_PAUSE_NS 10000000L

static long sys_ioctl(int fd, unsigned long req, void *arg)
{
	return syscall(SYS_ioctl, fd, req, arg);
}

static int open_node(const char *node, int flags)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, node, flags | O_CLOEXEC);

	if (fd < 0) {
		printf("open %s: %s\n", node, strerror(errno));
		exit(1);
	}
	return fd;
}

/* what the descriptor says the node is */
static void print_fstat(int fd)
{
	struct stat st;

	if (syscall(SYS_fstat, fd, &st) == 0)
		printf("fstat: %s %u:%u\n", S_ISCHR(st.st_mode) ? "char" : "other",
		       major(st.st_rdev), minor(st.st_rdev));
}

static int evdev(const char *node, int count)
{
	int fd = open_node(node, O_RDONLY), version = 0;
	unsigned char keys[KEY_MAX] = { 0 };	/* evtest's size */
	char name[256] = "";
	struct input_id id = { 0 };
	int nkeys = 0;

	print_fstat(fd);
	if (sys_ioctl(fd, EVIOCGVERSION, &version) < 0)
		printf("EVIOCGVERSION: %s\n", strerror(errno));
	else
		printf("version: %#x\n", version);
	if (sys_ioctl(fd, EVIOCGID, &id) == 0)
		printf("id: bus %#x vendor %#x product %#x version %#x\n", id.bustype, id.vendor,
		       id.product, id.version);
	if (sys_ioctl(fd, EVIOCGNAME(sizeof(name)), name) >= 0)
		printf("name: %s\n", name);
	if (sys_ioctl(fd, EVIOCGBIT(EV_KEY, sizeof(keys)), keys) >= 0) {
		for (int k = 0; k <= KEY_MAX; k++)
			nkeys += keys[k / 8] >> (k % 8) & 1;
		printf("keys: %d\n", nkeys);
	}
	for (int i = 0; i < count; i++) {
		struct input_event ev;
		ssize_t n = syscall(SYS_read, fd, &ev, sizeof(ev));

		if (n != sizeof(ev)) {
			printf("read: %zd (%s)\n", n, n < 0 ? strerror(errno) : "short");
			return 1;
		}
		printf("event: type %u code %u value %d\n", ev.type, ev.code, ev.value);
	}
	close(fd);
	return 0;
}

/* HEX's bytes into @buf (at most @size, up to the first character that is
 * none of a pair); how many */
static size_t from_hex(const char *hex, unsigned char *buf, size_t size)
{
	size_t i;

	for (i = 0; hex && hex[2 * i] && hex[2 * i + 1] && i < size; i++)
		if (sscanf(hex + 2 * i, "%2hhx", &buf[i]) != 1)
			break;
	return i;
}

static void print_bytes(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf(" %02x", p[i]);
	printf("\n");
}

static int one_ioctl(const char *node, unsigned long req, const char *hex)
{
	unsigned char buf[64] = { 0 };
	int fd = open_node(node, O_RDWR);
	long r;

	from_hex(hex, buf, sizeof(buf));
	r = sys_ioctl(fd, req, buf);
	printf("ioctl %#lx: %ld errno %d buf", req, r, r < 0 ? errno : 0);
	for (int i = 0; i < 8; i++)
		printf(" %02x", buf[i]);
	printf("\n");
	close(fd);
	return 0;
}

static int echo(const char *node, const char *text)
{
	int fd = open_node(node, O_RDWR);
	char buf[256];
	ssize_t n;

	if (syscall(SYS_write, fd, text, strlen(text)) != (long)strlen(text)) {
		printf("write: %s\n", strerror(errno));
		return 1;
	}
	n = syscall(SYS_read, fd, buf, sizeof(buf) - 1);
	if (n < 0) {
		printf("read: %s\n", strerror(errno));
		return 1;
	}
	buf[n] = '\0';
	printf("read: %s\n", buf);
	close(fd);
	return 0;
}

/* reaps until @urb comes back, as libusb's event loop does after poll():
 * 0, or the last reap's -errno (-EAGAIN: nothing completed in time) */
static int reap_urb(int fd, struct usbdevfs_urb *urb)
{
	struct timespec pause = { .tv_nsec = REAP_PAUSE_NS };
	void *got = NULL;

	for (int i = 0; i < REAP_TRIES; i++) {
		if (sys_ioctl(fd, USBDEVFS_REAPURBNDELAY, &got) == 0) {
			if (got == urb)
				return 0;
			/* only one URB is ever in flight here */
			printf("reap: an URB never submitted (%p)\n", got);
			return -EINVAL;
		}
		if (errno != EAGAIN)
			return -errno;
		syscall(SYS_nanosleep, &pause, NULL);
	}
	return -EAGAIN;
}

/*
 * @urb submitted and reaped; prints its status and length, and the data
 * when @in.  With no completion the URB is discarded and reaped again,
 * as libusb does at a transfer's timeout (the kernel, and the replay,
 * hold on to a URB until then).
 */
static int usb_transfer(int fd, const char *what, struct usbdevfs_urb *urb, size_t skip, bool in)
{
	int r;

	if (sys_ioctl(fd, USBDEVFS_SUBMITURB, urb) < 0) {
		printf("%s: submit: %s\n", what, strerror(errno));
		return -1;
	}
	r = reap_urb(fd, urb);
	if (r == -EAGAIN) {
		printf("%s: no completion (%s)\n", what, strerror(-r));
		if (sys_ioctl(fd, USBDEVFS_DISCARDURB, urb) < 0)
			printf("%s: discard: %s\n", what, strerror(errno));
		else if (reap_urb(fd, urb) == 0)
			printf("%s: discarded, status %d\n", what, urb->status);
		return -1;
	}
	if (r < 0) {
		printf("%s: reap: %s\n", what, strerror(-r));
		return -1;
	}
	printf("%s: status %d, %d bytes", what, urb->status, urb->actual_length);
	/* no further than the buffer, whatever length comes back */
	if (in && urb->actual_length >= 0 &&
	    (size_t)urb->actual_length <= (size_t)urb->buffer_length - skip)
		print_bytes((unsigned char *)urb->buffer + skip, (size_t)urb->actual_length);
	else if (in)
		printf(" (past the %zu-byte buffer)\n", (size_t)urb->buffer_length - skip);
	else
		printf("\n");
	return 0;
}

static int usb(const char *node, const char *hex)
{
	/* GET_DESCRIPTOR(DEVICE), 18 bytes: libusb's setup packet leads the buffer */
	unsigned char ctrl[8 + 18] = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00 };
	unsigned char out[64], in[64] = { 0 };
	struct usbdevfs_urb urb;
	int fd = open_node(node, O_RDWR), ret = 1;
	unsigned int caps = 0, iface = 0;

	print_fstat(fd);

	if (sys_ioctl(fd, USBDEVFS_GET_CAPABILITIES, &caps) < 0)
		printf("GET_CAPABILITIES: %s\n", strerror(errno));
	else
		printf("capabilities: %#x\n", caps);
	if (sys_ioctl(fd, USBDEVFS_CLAIMINTERFACE, &iface) < 0)
		printf("CLAIMINTERFACE: %s\n", strerror(errno));

	urb = (struct usbdevfs_urb){ .type = USBDEVFS_URB_TYPE_CONTROL, .endpoint = 0,
				     .buffer = ctrl, .buffer_length = sizeof(ctrl) };
	if (usb_transfer(fd, "control", &urb, 8, true))
		goto out;
	urb = (struct usbdevfs_urb){ .type = USBDEVFS_URB_TYPE_BULK, .endpoint = 0x02,
				     .buffer = out,
				     .buffer_length = (int)from_hex(hex, out, sizeof(out)) };
	if (usb_transfer(fd, "bulk out", &urb, 0, false))
		goto out;
	urb = (struct usbdevfs_urb){ .type = USBDEVFS_URB_TYPE_BULK, .endpoint = 0x81,
				     .buffer = in, .buffer_length = sizeof(in) };
	if (usb_transfer(fd, "bulk in", &urb, 0, true))
		goto out;
	ret = 0;
out:
	sys_ioctl(fd, USBDEVFS_RELEASEINTERFACE, &iface);
	close(fd);
	return ret;
}

/* one SPI_IOC_MESSAGE of @xfer ("HEX" or "HEX/N", see the top) */
static void spi_message(int fd, const char *xfer)
{
	unsigned char tx[64] = { 0 }, rx[64] = { 0 };
	struct spi_ioc_transfer t[2] = { 0 };
	const char *slash = strchr(xfer, '/');
	size_t ntx = from_hex(xfer, tx, sizeof(tx)), nrx = ntx;
	long r;

	t[0].tx_buf = (unsigned long)tx;
	t[0].len = (unsigned int)ntx;
	if (slash) {
		nrx = strtoul(slash + 1, NULL, 10);
		if (nrx > sizeof(rx))
			nrx = sizeof(rx);
		t[1].rx_buf = (unsigned long)rx;
		t[1].len = (unsigned int)nrx;
		r = sys_ioctl(fd, SPI_IOC_MESSAGE(2), t);
	} else {
		t[0].rx_buf = (unsigned long)rx;
		r = sys_ioctl(fd, SPI_IOC_MESSAGE(1), t);
	}
	printf("spi %s: %ld errno %d read", xfer, r, r < 0 ? errno : 0);
	print_bytes(rx, nrx);
}

static int spi(const char *node, int n, char **xfers)
{
	int fd = open_node(node, O_RDWR);

	print_fstat(fd);
	for (int i = 0; i < n; i++)
		spi_message(fd, xfers[i]);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "evdev"))
		return evdev(argv[2], atoi(argv[3]));
	if ((argc == 4 || argc == 5) && !strcmp(argv[1], "ioctl"))
		return one_ioctl(argv[2], strtoul(argv[3], NULL, 16), argc == 5 ? argv[4] : NULL);
	if (argc == 4 && !strcmp(argv[1], "echo"))
		return echo(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "usb"))
		return usb(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "spi"))
		return spi(argv[2], argc - 3, argv + 3);
	fprintf(stderr, "usage: node-probe evdev NODE COUNT | ioctl NODE REQUEST [HEX] | "
			"echo NODE TEXT | usb NODE HEX | spi NODE XFER...\n");
	return 2;
}

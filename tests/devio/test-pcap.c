// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-pcap.c - usbmon captures replayed as a USB device's usbdevfs
 * answers (src/devio/pcap.c, pcap-replay.c): the captures of a fake
 * device (bus 1, address 5) are written here with libpcap, among packets
 * of other devices the replay must leave out, and the handler is driven
 * as libusb drives the kernel, with real struct usbdevfs_urb in this
 * process's memory (cfs_mem_self).
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/usbdevice_fs.h>
#include <pcap/pcap.h>
#include <pcap/usb.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../harness.h"
#include "../usbmon-write.h"
#include "classfs-internal/devio.h"

#define NODE "/dev/bus/usb/001/005"
#define BUS 1
#define DEV 5

/* the URB ids of the capture (the kernel's URB addresses) */
#define ID_KERNEL 0xffff888000000100ull
#define ID_OTHER 0xffff888000000200ull
#define ID_INT 0xffff888000000300ull
#define ID_CTRL 0xffff888000000400ull
#define ID_OUT 0xffff888000000500ull
#define ID_IN 0xffff888000000600ull
#define ID_CLASS 0xffff888000000700ull
#define ID_STALL 0xffff888000000800ull

static const uint8_t get_descriptor[8] = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00 };
static const uint8_t device_descriptor[18] = { 0x12, 0x01, 0x00, 0x02, 0xff, 0x00, 0x00, 0x40,
					       0x34, 0x12, 0x78, 0x56, 0x00, 0x01, 0x01, 0x02,
					       0x00, 0x01 };
static const uint8_t vendor_in[8] = { 0xc0, 0x01, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00 };
static const uint8_t vendor_reply[4] = { 0xde, 0xad, 0xbe, 0xef };
static const uint8_t bulk_out[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
static const uint8_t bulk_reply[5] = { 'h', 'e', 'l', 'l', 'o' };
static const uint8_t int_report[8] = { 0, 0, 0x0c, 0, 0, 0, 0, 0 };
static const uint8_t class_out[8] = { 0x21, 0x09, 0x00, 0x02, 0x00, 0x00, 0x02, 0x00 };
static const uint8_t class_data[2] = { 0xaa, 0xbb };

/* ---- writing captures (usbmon-write.h) ---------------------------- */

static char tmpdir[64];

/* at exit, whichever tests ran: the captures' folder and what it holds */
static void tmp_remove(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_name[0] != '.')
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
	rmdir(tmpdir);
}

static const char *tmp_path(const char *name)
{
	static char path[128];

	if (!tmpdir[0]) {
		snprintf(tmpdir, sizeof(tmpdir), "/tmp/test-pcap-XXXXXX");
		if (!mkdtemp(tmpdir))
			abort();
		atexit(tmp_remove);
	}
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	return path;
}

/* an event of the fake device unless .bus or .dev say otherwise */
#define S(...) cap_event(&c, &(struct event){ .ev = 'S', __VA_ARGS__ })
#define C(...) cap_event(&c, &(struct event){ .ev = 'C', __VA_ARGS__ })

/*
 * The fake device's session: the kernel reads its device descriptor;
 * the program queues an interrupt URB, makes a vendor control IN
 * transfer, a bulk OUT and a bulk IN exchange, gets the interrupt
 * report, sends a class control OUT request and gets a stall on bulk
 * IN.  Another device (1/6) and the same address on bus 2 talk between.
 */
static const char *write_session(int link, const char *name)
{
	const char *path = tmp_path(name);
	struct capture c;

	cap_open(&c, link, path, BUS, DEV);
	S(.type = 2, .ep = 0x80, .id = ID_KERNEL, .setup = get_descriptor, .urb_len = 18);
	C(.type = 2, .ep = 0x80, .id = ID_KERNEL, .urb_len = 18, .data = device_descriptor,
	  .data_len = 18);
	/* a bulk OUT no program of ours makes: replaying it would stop */
	S(.type = 3, .ep = 0x02, .dev = 6, .id = ID_OTHER, .urb_len = 4, .data = "xxxx",
	  .data_len = 4);
	S(.type = 1, .ep = 0x83, .id = ID_INT, .urb_len = 8);
	S(.type = 2, .ep = 0x80, .id = ID_CTRL, .setup = vendor_in, .urb_len = 4);
	C(.type = 3, .ep = 0x02, .dev = 6, .id = ID_OTHER, .urb_len = 4);
	C(.type = 2, .ep = 0x80, .id = ID_CTRL, .urb_len = 4, .data = vendor_reply, .data_len = 4);
	S(.type = 3, .ep = 0x81, .bus = 2, .id = ID_OTHER, .urb_len = 64);
	S(.type = 3, .ep = 0x02, .id = ID_OUT, .urb_len = 8, .data = bulk_out, .data_len = 8);
	C(.type = 3, .ep = 0x02, .id = ID_OUT, .urb_len = 8);
	S(.type = 3, .ep = 0x81, .id = ID_IN, .urb_len = 64);
	C(.type = 3, .ep = 0x81, .id = ID_IN, .urb_len = 5, .data = bulk_reply, .data_len = 5);
	C(.type = 3, .ep = 0x81, .bus = 2, .id = ID_OTHER, .urb_len = 3, .data = "abc",
	  .data_len = 3);
	C(.type = 1, .ep = 0x83, .id = ID_INT, .urb_len = 8, .data = int_report, .data_len = 8);
	S(.type = 2, .ep = 0x00, .id = ID_CLASS, .setup = class_out, .urb_len = 2,
	  .data = class_data, .data_len = 2);
	C(.type = 2, .ep = 0x00, .id = ID_CLASS, .urb_len = 2);
	S(.type = 3, .ep = 0x81, .id = ID_STALL, .urb_len = 64);
	C(.type = 3, .ep = 0x81, .id = ID_STALL, .status = -EPIPE);
	cap_close(&c);
	return path;
}

/* ---- driving the handler -------------------------------------------- */

static struct cfs_ioctl_handler load_session(int link)
{
	struct cfs_ioctl_handler h = { 0 };
	char msg[256] = "";
	const char *path = write_session(link, "session.pcap");
	int rc = cfs_pcap_file_load(path, BUS, DEV, &h, msg, sizeof(msg));

	if (rc)
		fprintf(stderr, "  load: %d %s\n", rc, msg);
	/* read whole at load: the file is not needed any more */
	unlink(path);
	return h;
}

static long io(struct cfs_ioctl_handler *h, unsigned long request, const void *arg)
{
	struct cfs_ioctl_call call = {
		.request = request,
		.arg = (uint64_t)(uintptr_t)arg,
		.mem = &cfs_mem_self,
		.node = NODE,
	};

	return h->ioctl(h->data, &call);
}

static struct usbdevfs_urb urb(unsigned char type, unsigned char ep, void *buf, int len)
{
	return (struct usbdevfs_urb){ .type = type, .endpoint = ep, .buffer = buf,
				      .buffer_length = len };
}

/* REAPURBNDELAY: the URB reaped, NULL when it fails (*@err: why) */
static struct usbdevfs_urb *reap(struct cfs_ioctl_handler *h, long *err)
{
	void *p = NULL;
	long rc = io(h, USBDEVFS_REAPURBNDELAY, &p);

	if (err)
		*err = rc;
	return rc ? NULL : p;
}

/* a control transfer's buffer: setup packet, then room for its data */
struct ctrl_buf {
	uint8_t setup[8];
	uint8_t data[64];
};

static struct usbdevfs_urb ctrl(struct ctrl_buf *b, const uint8_t *setup)
{
	memcpy(b->setup, setup, 8);
	return urb(USBDEVFS_URB_TYPE_CONTROL, 0, b, 8 + (setup[6] | setup[7] << 8));
}

/* stderr of a stretch of a test, in a memfd */
static int stderr_saved = -1;

static void stderr_begin(void)
{
	int fd = memfd_create("stderr", 0);

	fflush(stderr);
	stderr_saved = dup(2);
	dup2(fd, 2);
	close(fd);
}

static const char *stderr_end(void)
{
	static char text[8192];
	ssize_t n;

	fflush(stderr);
	lseek(2, 0, SEEK_SET);
	n = read(2, text, sizeof(text) - 1);
	text[n > 0 ? n : 0] = '\0';
	dup2(stderr_saved, 2);
	close(stderr_saved);
	return text;
}

/* the rest of the session after the interrupt report, as the capture has it */
static void replay_tail(struct cfs_ioctl_handler *h)
{
	struct ctrl_buf cb;
	uint8_t in[64];
	struct usbdevfs_urb cu, iu;
	long err;

	cu = ctrl(&cb, class_out);
	memcpy(cb.data, class_data, 2);
	CHECK_INT(io(h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(h, NULL) == &cu);
	CHECK_INT(cu.status, 0);
	CHECK_INT(cu.actual_length, 2);

	/* a completion's error status reaches the program */
	iu = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, sizeof(in));
	CHECK_INT(io(h, USBDEVFS_SUBMITURB, &iu), 0);
	CHECK(reap(h, NULL) == &iu);
	CHECK_INT(iu.status, -EPIPE);
	CHECK_INT(iu.actual_length, 0);
	CHECK(reap(h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);
}

TEST(replay_in_order)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	struct ctrl_buf cb = { 0 };
	uint8_t rep[8] = { 0 }, out[8], in[64] = { 0 };
	struct usbdevfs_urb iu, cu, ou, bu;
	long err;

	REQUIRE(h.ioctl != NULL);
	/* nothing submitted, nothing to reap */
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);

	iu = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rep, sizeof(rep));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	/* the interrupt URB is submitted; its completion comes later */
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);

	/* the kernel's GET_DESCRIPTOR is passed over: the vendor request is next */
	cu = ctrl(&cb, vendor_in);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(&h, NULL) == &cu);
	CHECK_INT(cu.status, 0);
	CHECK_INT(cu.actual_length, 4);
	CHECK(!memcmp(cb.setup, vendor_in, 8));
	CHECK(!memcmp(cb.data, vendor_reply, 4));
	/* the capture waits for the bulk OUT now */
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);

	memcpy(out, bulk_out, sizeof(out));
	ou = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, sizeof(out));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &ou), 0);
	CHECK(reap(&h, NULL) == &ou);
	CHECK_INT(ou.status, 0);
	CHECK_INT(ou.actual_length, 8);

	bu = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, sizeof(in));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &bu), 0);
	/* REAPURB answers as REAPURBNDELAY does */
	void *p = NULL;
	CHECK_INT(io(&h, USBDEVFS_REAPURB, &p), 0);
	CHECK(p == &bu);
	CHECK_INT(bu.actual_length, 5);
	CHECK(!memcmp(in, bulk_reply, 5));
	CHECK_INT(in[5], 0);

	/* and the interrupt report, in its place in the capture */
	CHECK(reap(&h, NULL) == &iu);
	CHECK_INT(iu.status, 0);
	CHECK_INT(iu.actual_length, 8);
	CHECK(!memcmp(rep, int_report, 8));

	replay_tail(&h);
	h.free(h.data);
}

TEST(submission_order)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	struct ctrl_buf cb = { 0 };
	uint8_t rep[8], out[8], in[64];
	struct usbdevfs_urb iu, cu, ou, bu;
	long err;

	REQUIRE(h.ioctl != NULL);
	/* the control transfer first: the capture's interrupt submission
	 * comes before it, and waits for the program's */
	cu = ctrl(&cb, vendor_in);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);
	iu = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rep, sizeof(rep));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	CHECK(reap(&h, NULL) == &cu);

	/* bulk IN queued before bulk OUT: each matches its own */
	bu = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, sizeof(in));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &bu), 0);
	memcpy(out, bulk_out, sizeof(out));
	ou = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, sizeof(out));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &ou), 0);
	CHECK(reap(&h, NULL) == &ou);
	CHECK(reap(&h, NULL) == &bu);
	CHECK(!memcmp(in, bulk_reply, 5));
	CHECK(reap(&h, NULL) == &iu);
	CHECK(!memcmp(rep, int_report, 8));
	h.free(h.data);
}

TEST(standard_request_replayed)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	struct ctrl_buf cb = { 0 };
	struct usbdevfs_urb cu;

	REQUIRE(h.ioctl != NULL);
	/* a program that makes the capture's GET_DESCRIPTOR gets its answer */
	cu = ctrl(&cb, get_descriptor);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(&h, NULL) == &cu);
	CHECK_INT(cu.actual_length, 18);
	CHECK(!memcmp(cb.data, device_descriptor, 18));
	h.free(h.data);
}

TEST(data_mismatch_waits)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	struct ctrl_buf cb = { 0 };
	uint8_t rep[8], out[8], in[64];
	struct usbdevfs_urb iu, cu, ou, bu;
	const char *log;
	long err;

	REQUIRE(h.ioctl != NULL);
	iu = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rep, sizeof(rep));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	/* a vendor request with another wValue is not the capture's */
	cu = ctrl(&cb, vendor_in);
	cb.setup[2] = 1;
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &cu), 0);
	stderr_begin();
	CHECK(reap(&h, NULL) == &cu);
	log = stderr_end();
	CHECK_INT(cu.status, -ENOENT);
	CHECK(strstr(log, "reaping a discarded CONTROL URB for ep 0x00, 12 bytes, that the capture never submitted") != NULL);
	cu = ctrl(&cb, vendor_in);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(&h, NULL) == &cu);

	/*
	 * Data sent that differs from the capture's is no error, as in
	 * umockdev: the URB waits unmatched and the replay with it, until
	 * the program gives up on it (its timeout: DISCARDURB), and is then
	 * reaped -ENOENT with a line saying the replay may be stuck.
	 */
	memcpy(out, bulk_out, sizeof(out));
	out[3] = 0x40;
	ou = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, sizeof(out));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &ou), 0);
	for (int i = 0; i < 3; i++) {
		CHECK(reap(&h, &err) == NULL);
		CHECK_INT(err, -EAGAIN);
	}
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &ou), 0);
	/* discarding what is no longer in flight fails */
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &ou), -EINVAL);
	stderr_begin();
	CHECK(reap(&h, NULL) == &ou);
	log = stderr_end();
	CHECK_INT(ou.status, -ENOENT);
	CHECK_INT(ou.actual_length, 0);
	CHECK(strstr(log, "classfs: " NODE ": replay of ") != NULL);
	CHECK(strstr(log, "may be stuck: reaping a discarded BULK URB for ep 0x02, 8 bytes") != NULL);

	/* the right data, and the replay goes on */
	memcpy(out, bulk_out, sizeof(out));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &ou), 0);
	CHECK(reap(&h, NULL) == &ou);
	CHECK_INT(ou.status, 0);
	bu = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, sizeof(in));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &bu), 0);
	CHECK(reap(&h, NULL) == &bu);
	CHECK(reap(&h, NULL) == &iu);
	h.free(h.data);
}

TEST(discard)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	uint8_t rep[8], rep2[8];
	struct usbdevfs_urb iu, iu2;
	long err;

	REQUIRE(h.ioctl != NULL);
	/* an URB never submitted */
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &iu), -EINVAL);
	iu = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rep, sizeof(rep));
	iu2 = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x84, rep2, sizeof(rep2));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu2), 0);
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &iu), 0);
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &iu2), 0);
	/* newest discarded first, as umockdev reaps them */
	stderr_begin();
	CHECK(reap(&h, NULL) == &iu2);
	CHECK(reap(&h, NULL) == &iu);
	/* iu had been submitted in the capture: no line for it */
	CHECK(strstr(stderr_end(), "ep 0x83") == NULL);
	CHECK_INT(iu.status, -ENOENT);
	CHECK_INT(iu2.status, -ENOENT);
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);
	h.free(h.data);
}

TEST(end_of_capture)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	struct ctrl_buf cb = { 0 };
	uint8_t rep[8], out[8], in[64];
	struct usbdevfs_urb iu, cu, ou, bu;
	long err;

	REQUIRE(h.ioctl != NULL);
	iu = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rep, sizeof(rep));
	cu = ctrl(&cb, vendor_in);
	memcpy(out, bulk_out, sizeof(out));
	ou = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, sizeof(out));
	bu = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, sizeof(in));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &ou), 0);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &bu), 0);
	CHECK(reap(&h, NULL) == &cu);
	CHECK(reap(&h, NULL) == &ou);
	CHECK(reap(&h, NULL) == &bu);
	CHECK(reap(&h, NULL) == &iu);
	replay_tail(&h);

	/* past the end: what is submitted waits for good */
	bu = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, sizeof(in));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &bu), 0);
	for (int i = 0; i < 3; i++) {
		CHECK(reap(&h, &err) == NULL);
		CHECK_INT(err, -EAGAIN);
	}
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &bu), 0);
	stderr_begin();
	CHECK(reap(&h, NULL) == &bu);
	stderr_end();
	CHECK_INT(bu.status, -ENOENT);
	h.free(h.data);
}

TEST(linktype_usb_linux)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX);
	struct ctrl_buf cb = { 0 };
	uint8_t rep[8], out[8], in[64];
	struct usbdevfs_urb iu, cu, ou, bu;

	REQUIRE(h.ioctl != NULL);
	iu = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rep, sizeof(rep));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	cu = ctrl(&cb, vendor_in);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(&h, NULL) == &cu);
	CHECK(!memcmp(cb.data, vendor_reply, 4));
	memcpy(out, bulk_out, sizeof(out));
	ou = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, sizeof(out));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &ou), 0);
	CHECK(reap(&h, NULL) == &ou);
	bu = urb(USBDEVFS_URB_TYPE_BULK, 0x81, in, sizeof(in));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &bu), 0);
	CHECK(reap(&h, NULL) == &bu);
	CHECK(!memcmp(in, bulk_reply, 5));
	CHECK(reap(&h, NULL) == &iu);
	CHECK(!memcmp(rep, int_report, 8));
	replay_tail(&h);
	h.free(h.data);
}

TEST(handlers_apart)
{
	/* two nodes of one capture replay on their own: no shared state */
	struct cfs_ioctl_handler a = load_session(DLT_USB_LINUX_MMAPPED);
	struct cfs_ioctl_handler b = load_session(DLT_USB_LINUX_MMAPPED);
	struct ctrl_buf ca = { 0 }, cbb = { 0 };
	uint8_t ra[8], rb[8];
	struct usbdevfs_urb ia, ib, ua, ub;

	REQUIRE(a.ioctl != NULL && b.ioctl != NULL);
	ia = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, ra, sizeof(ra));
	ib = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rb, sizeof(rb));
	ua = ctrl(&ca, vendor_in);
	ub = ctrl(&cbb, vendor_in);
	CHECK_INT(io(&a, USBDEVFS_SUBMITURB, &ia), 0);
	CHECK_INT(io(&a, USBDEVFS_SUBMITURB, &ua), 0);
	CHECK_INT(io(&b, USBDEVFS_SUBMITURB, &ib), 0);
	CHECK(reap(&a, NULL) == &ua);
	CHECK(reap(&b, NULL) == NULL);
	CHECK_INT(io(&b, USBDEVFS_SUBMITURB, &ub), 0);
	CHECK(reap(&b, NULL) == &ub);
	CHECK(!memcmp(cbb.data, vendor_reply, 4));
	a.free(a.data);
	b.free(b.data);
}

TEST(other_requests)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	struct usbdevfs_connectinfo ci;
	struct usbdevfs_setinterface si = { 0, 1 };
	uint32_t caps = 0;
	unsigned int one = 1;

	REQUIRE(h.ioctl != NULL);
	CHECK_INT(io(&h, USBDEVFS_GET_CAPABILITIES, &caps), 0);
	CHECK_INT(caps, USBDEVFS_CAP_BULK_SCATTER_GATHER | USBDEVFS_CAP_BULK_CONTINUATION |
				USBDEVFS_CAP_NO_PACKET_SIZE_LIM |
				USBDEVFS_CAP_REAP_AFTER_DISCONNECT | USBDEVFS_CAP_ZERO_PACKET);
	CHECK_INT(io(&h, USBDEVFS_CLAIMINTERFACE, &one), 0);
	CHECK_INT(io(&h, USBDEVFS_RELEASEINTERFACE, &one), 0);
	CHECK_INT(io(&h, USBDEVFS_CLEAR_HALT, &one), 0);
	CHECK_INT(io(&h, USBDEVFS_RESETEP, &one), 0);
	CHECK_INT(io(&h, USBDEVFS_RESET, NULL), 0);
	/* what umockdev's replay does not answer */
	CHECK_INT(io(&h, USBDEVFS_SETINTERFACE, &si), -ENOTTY);
	CHECK_INT(io(&h, USBDEVFS_SETCONFIGURATION, &one), -ENOTTY);
	CHECK_INT(io(&h, USBDEVFS_CONNECTINFO, &ci), -ENOTTY);
	CHECK_INT(io(&h, USBDEVFS_CONTROL, &ci), -ENOTTY);
	CHECK_INT(io(&h, USBDEVFS_BULK, &ci), -ENOTTY);
	CHECK_INT(io(&h, USBDEVFS_GETDRIVER, &ci), -ENOTTY);
	CHECK_INT(io(&h, USBDEVFS_DISCONNECT_CLAIM, &ci), -ENOTTY);
	/* no terminal, whatever the descriptor is */
	CHECK_INT(io(&h, TCGETS, &ci), -ENOTTY);
	/* the kernel's own for any descriptor */
	CHECK_INT(io(&h, FIONBIO, &one), CFS_IOCTL_PASS);
	CHECK_INT(io(&h, FIOCLEX, NULL), CFS_IOCTL_PASS);
	h.free(h.data);
}

TEST(bad_urbs)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	uint8_t b[8];
	struct usbdevfs_urb u;

	REQUIRE(h.ioctl != NULL);
	/* a control URB without room for its setup packet */
	u = urb(USBDEVFS_URB_TYPE_CONTROL, 0, b, 4);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &u), -EINVAL);
	u = urb(7, 0x81, b, 8);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &u), -EINVAL);
	u = urb(USBDEVFS_URB_TYPE_BULK, 0x81, b, -1);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &u), -EINVAL);
	u = urb(USBDEVFS_URB_TYPE_BULK, 0x81, NULL, 8);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &u), -EFAULT);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, NULL), -EFAULT);
	CHECK_INT(io(&h, USBDEVFS_GET_CAPABILITIES, NULL), -EFAULT);
	/* none of them is queued */
	CHECK_INT(io(&h, USBDEVFS_DISCARDURB, &u), -EINVAL);
	h.free(h.data);
}

TEST(stuck_is_logged)
{
	struct cfs_ioctl_handler h = load_session(DLT_USB_LINUX_MMAPPED);
	struct ctrl_buf cb = { 0 };
	uint8_t rep[8], out[8];
	struct usbdevfs_urb iu, cu, ou;
	const char *log;
	long err;

	REQUIRE(h.ioctl != NULL);
	iu = urb(USBDEVFS_URB_TYPE_INTERRUPT, 0x83, rep, sizeof(rep));
	cu = ctrl(&cb, vendor_in);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &cu), 0);
	CHECK(reap(&h, NULL) == &cu);
	memcpy(out, bulk_out, sizeof(out));
	out[5] = 0;
	ou = urb(USBDEVFS_URB_TYPE_BULK, 0x02, out, sizeof(out));
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &ou), 0);
	stderr_begin();
	CHECK(reap(&h, &err) == NULL);
	/* quiet until the replay waited 2 s longer than the capture there */
	CHECK(stderr_end()[0] == '\0');
	usleep(2100 * 1000);
	stderr_begin();
	CHECK(reap(&h, &err) == NULL);
	CHECK_INT(err, -EAGAIN);
	log = stderr_end();
	CHECK(strstr(log, "may be stuck: waited ") != NULL);
	CHECK(strstr(log, "at packet 9 (S BULK ep 0x02, 8 bytes, 0.008 s into the capture)") != NULL);
	CHECK(strstr(log, "2 URBs in flight") != NULL);
	CHECK(strstr(log, "in flight: INTERRUPT URB for ep 0x83, 8 bytes, submitted in the capture") != NULL);
	/* the interrupt URB is the capture's already: no reason why not */
	CHECK(strstr(log, "queued URB 0") == NULL);
	CHECK(strstr(log, "queued URB 1 (BULK ep 0x02, 8 bytes) differs in its data") != NULL);
	CHECK(strstr(log, "from byte 5 on:") != NULL);
	CHECK(strstr(log, "capture: 06 07 08") != NULL);
	CHECK(strstr(log, "program: 00 07 08") != NULL);
	if (test_failed_now)
		fprintf(stderr, "%s", log);
	/* once per stuck stretch */
	stderr_begin();
	CHECK(reap(&h, &err) == NULL);
	CHECK(stderr_end()[0] == '\0');
	h.free(h.data);
}

/* ---- loading ---------------------------------------------------------- */

static int load(const char *path, unsigned bus, unsigned dev, char *msg, size_t size)
{
	struct cfs_ioctl_handler h = { 0 };
	int rc = cfs_pcap_file_load(path, bus, dev, &h, msg, size);

	if (!rc)
		h.free(h.data);
	return rc;
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		abort();
	close(fd);
}

TEST(wrong_device)
{
	const char *path = write_session(DLT_USB_LINUX_MMAPPED, "wrong.pcap");
	char msg[256], want[256];

	CHECK_INT(load(path, 1, 7, msg, sizeof(msg)), -ENOENT);
	snprintf(want, sizeof(want),
		 "%s: no packet of USB device 001/007, nothing to replay (the capture's devices: 001/005, 001/006, 002/005)",
		 path);
	CHECK_STR(msg, want);
	CHECK_INT(load(path, 2, 5, msg, sizeof(msg)), 0);
	CHECK_INT(load(path, 1, 5, msg, sizeof(msg)), 0);
	CHECK_STR(msg, "");
	/* no room for a message is no overflow */
	CHECK_INT(load(path, 3, 5, NULL, 0), -ENOENT);
	CHECK_INT(load(path, 3, 5, msg, 4), -ENOENT);
	CHECK_INT(strlen(msg), 3);
	unlink(path);
}

TEST(bad_files)
{
	const char *path;
	char msg[512], want[512];
	struct capture c;

	path = tmp_path("missing.pcap");
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -ENOENT);
	snprintf(want, sizeof(want), "%s: No such file or directory", path);
	CHECK_STR(msg, want);

	path = tmp_path("empty.pcap");
	write_file(path, "", 0);
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a pcap or pcapng file (", path);
	CHECK(!strncmp(msg, want, strlen(want)));
	unlink(path);

	path = tmp_path("text.pcap");
	write_file(path, "no capture at all, just words\n", 30);
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a pcap or pcapng file (", path);
	CHECK(!strncmp(msg, want, strlen(want)));
	unlink(path);

	/* a capture of an ethernet interface */
	path = tmp_path("ether.pcap");
	cap_open(&c, DLT_EN10MB, path, BUS, DEV);
	cap_close(&c);
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want),
		 "%s: link type 1 (EN10MB) is no usbmon capture (USB_LINUX_MMAPPED or USB_LINUX)",
		 path);
	CHECK_STR(msg, want);
	unlink(path);

	/* a usbmon capture with no packet at all */
	path = tmp_path("nothing.pcap");
	cap_open(&c, DLT_USB_LINUX_MMAPPED, path, BUS, DEV);
	cap_close(&c);
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -ENOENT);
	snprintf(want, sizeof(want),
		 "%s: no packet of USB device 001/005, nothing to replay (the capture holds no packet)",
		 path);
	CHECK_STR(msg, want);
	unlink(path);

	/* packet 2 too short for its header */
	path = tmp_path("short.pcap");
	cap_open(&c, DLT_USB_LINUX_MMAPPED, path, BUS, DEV);
	{
		uint8_t pkt[64] = { 0 };
		struct pcap_pkthdr ph = { .caplen = 20, .len = 20 };

		cap_event(&c, &(struct event){ .ev = 'S', .type = 3, .ep = 0x81, .bus = BUS,
					       .dev = DEV, .id = 1, .urb_len = 8 });
		pcap_dump((u_char *)c.d, &ph, pkt);
	}
	cap_close(&c);
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: packet 2: 20 bytes, too short for a usbmon header (64)",
		 path);
	CHECK_STR(msg, want);
	unlink(path);

	/* an event usbmon never writes, of the device */
	path = tmp_path("event.pcap");
	cap_open(&c, DLT_USB_LINUX_MMAPPED, path, BUS, DEV);
	cap_event(&c, &(struct event){ .ev = 'S', .type = 3, .ep = 0x81, .bus = BUS, .dev = 9,
				       .id = 1, .urb_len = 8 });
	cap_event(&c, &(struct event){ .ev = 'X', .type = 3, .ep = 0x81, .bus = BUS, .dev = DEV,
				       .id = 1, .urb_len = 8 });
	cap_close(&c);
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: packet 2: usbmon event type 0x58 is none of S, C, E",
		 path);
	CHECK_STR(msg, want);
	/* of another device: left out unread */
	CHECK_INT(load(path, BUS, 9, msg, sizeof(msg)), 0);
	unlink(path);

	/* a pcap file cut short inside a packet */
	path = write_session(DLT_USB_LINUX_MMAPPED, "cut.pcap");
	/* file header, packets 1-3 (record header, usbmon header, data) */
	CHECK_INT(truncate(path, 24 + (16 + 64) + (16 + 64 + 18) + (16 + 64 + 4) + 10), 0);
	CHECK_INT(load(path, BUS, DEV, msg, sizeof(msg)), -EINVAL);
	snprintf(want, sizeof(want), "%s: packet 4: ", path);
	CHECK(!strncmp(msg, want, strlen(want)));
	if (strncmp(msg, want, strlen(want)))
		fprintf(stderr, "  message: %s\n", msg);
	unlink(path);
}

TEST(iso)
{
	const char *path = tmp_path("iso.pcap");
	struct cfs_ioctl_handler h = { 0 };
	struct {
		struct usbdevfs_urb u;
		struct usbdevfs_iso_packet_desc d[2];
	} iu = { 0 };
	uint8_t in[16] = { 0 };
	struct pcap_pkthdr ph;
	struct capture c;
	char msg[256];
	void *p = NULL;
	usb_isodesc desc[2] = { { .status = 0, .offset = 0, .len = 3 },
				{ .status = -EXDEV, .offset = 8, .len = 0 } };
	pcap_usb_header_mmapped hd = { .id = 42, .event_type = 'S', .transfer_type = 0,
				       .endpoint_number = 0x81, .device_address = DEV,
				       .bus_id = BUS, .setup_flag = '-', .data_flag = '<',
				       .urb_len = 16, .ndesc = 2 };

	cap_open(&c, DLT_USB_LINUX_MMAPPED, path, BUS, DEV);
	hd.s.iso.numdesc = 2;
	ph = (struct pcap_pkthdr){ .caplen = sizeof(hd) + sizeof(desc), .len = sizeof(hd) + sizeof(desc) };
	{
		uint8_t all[sizeof(hd) + sizeof(desc) + 16];

		memcpy(all, &hd, sizeof(hd));
		memcpy(all + sizeof(hd), desc, sizeof(desc));
		pcap_dump((u_char *)c.d, &ph, all);
		hd.event_type = 'C';
		hd.data_flag = 0;
		hd.data_len = 11;
		hd.start_frame = 77;
		hd.s.iso.error_count = 1;
		memcpy(all, &hd, sizeof(hd));
		memcpy(all + sizeof(hd) + sizeof(desc), "abc\0\0\0\0\0xyz", 11);
		ph.caplen = ph.len = sizeof(hd) + sizeof(desc) + 11;
		pcap_dump((u_char *)c.d, &ph, all);
	}
	cap_close(&c);
	CHECK_INT(cfs_pcap_file_load(path, BUS, DEV, &h, msg, sizeof(msg)), 0);
	unlink(path);
	REQUIRE(h.ioctl != NULL);
	iu.u = urb(USBDEVFS_URB_TYPE_ISO, 0x81, in, sizeof(in));
	iu.u.number_of_packets = 2;
	iu.d[0].length = iu.d[1].length = 8;
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), 0);
	CHECK_INT(io(&h, USBDEVFS_REAPURBNDELAY, &p), 0);
	CHECK(p == &iu);
	CHECK_INT(iu.u.status, 0);
	CHECK_INT(iu.u.actual_length, 16);
	CHECK_INT(iu.u.start_frame, 77);
	CHECK_INT(iu.u.error_count, 1);
	CHECK_INT(iu.d[0].actual_length, 3);
	CHECK_INT(iu.d[0].status, 0);
	CHECK_INT(iu.d[1].actual_length, 0);
	CHECK_INT((int)iu.d[1].status, -EXDEV);
	CHECK(!memcmp(in, "abc\0\0\0\0\0xyz", 11));
	/* ISO URBs carry packets: none or too many is refused */
	iu.u.number_of_packets = 0;
	CHECK_INT(io(&h, USBDEVFS_SUBMITURB, &iu), -EINVAL);
	h.free(h.data);
}

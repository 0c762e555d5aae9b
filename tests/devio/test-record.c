// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-record.c - the recorder's side of ioctl() (src/devio/record.c),
 * without a device: its "execute" callback is a replay of a recording
 * (tests/devio/data) in this process's memory, and the "program" is this
 * test, its arguments in its own memory too (cfs_mem_self).  Making a
 * recording's calls through the recorder must give back the recording:
 * the same tree, written as umockdev-record writes it (round trip).
 *
 * There is no USB, evdev or hidraw device in CI: this is where the ioctl
 * path is tested end to end; classfs-record's own test (tests/run/
 * test-record.sh) records a pty's reads and writes.
 */
#include <linux/hidraw.h>
#include <linux/input.h>
#include <linux/usbdevice_fs.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "../harness.h"
#include "classfs-internal/devio.h"

#ifndef DATA_DIR
#error "DATA_DIR: the recordings' folder"
#endif

#define CROS_EC_DEV_IOCXCMD_V2 _IOC(_IOC_READ | _IOC_WRITE, 0xEC, 0, 20)

/* ---- helpers ---- */

static char *slurp(const char *name, size_t *len)
{
	char path[512], *buf = NULL;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", DATA_DIR, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	buf = calloc(1, 1 << 16);
	if (buf)
		*len = fread(buf, 1, (1 << 16) - 1, f);
	fclose(f);
	return buf;
}

/* a recording without its comment lines: what a recorder writes of it */
static char *without_comments(const char *text)
{
	char *out = calloc(1, strlen(text) + 1), *o = out;

	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t n = nl ? (size_t)(nl - l) + 1 : strlen(l);

		if (*l != '#') {
			memcpy(o, l, n);
			o += n;
		}
		l += n;
	}
	return out;
}

static struct cfs_ioctl_handler load_text(const char *text, size_t len, const char *name)
{
	struct cfs_ioctl_handler h = { 0 };
	char msg[512] = "";

	if (cfs_ioctl_text_load(text, len, name, NULL, &h, msg, sizeof(msg)))
		fprintf(stderr, "  loading %s: %s\n", name, msg);
	return h;
}

/* the execute callback: the replay answers in this process's memory */
static long exec_replay(void *ctx, unsigned long request, unsigned long arg)
{
	struct cfs_ioctl_handler *h = ctx;
	struct cfs_ioctl_call c = { .request = request, .arg = arg, .mem = &cfs_mem_self,
				    .node = "/dev/replayed" };
	long r = h->ioctl(h->data, &c);

	return r == CFS_IOCTL_PASS ? -ENOTTY : r;
}

/* the program's call, through the recorder */
static long rec_call(struct cfs_ioctl_recorder *r, void *exec_ctx, unsigned long req,
		     const void *arg)
{
	struct cfs_ioctl_call c = { .request = req, .arg = (uintptr_t)arg, .mem = &cfs_mem_self,
				    .node = "/dev/recorded" };

	return cfs_ioctl_record(r, &c, exec_replay, exec_ctx);
}

/* what the recorder wrote (a string to free) */
static char *written(struct cfs_ioctl_recorder *r, const char *dev)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	if (cfs_ioctl_recorder_write(r, dev, f))
		fprintf(stderr, "  writing the tree failed\n");
	fclose(f);
	return buf;
}

static int hexval(char c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

/* the request numbers of the simple lines' names (the test's own table) */
static const struct {
	const char *name;
	unsigned long req;
} simple[] = {
	{ "EVIOCGVERSION", EVIOCGVERSION },	{ "EVIOCGID", EVIOCGID },
	{ "EVIOCGNAME", EVIOCGNAME(0) },	{ "EVIOCGPHYS", EVIOCGPHYS(0) },
	{ "EVIOCGBIT", EVIOCGBIT(0, 0) },	{ "EVIOCGREP", EVIOCGREP },
	{ "EVIOCGKEY", EVIOCGKEY(0) },		{ "EVIOCGLED", EVIOCGLED(0) },
	{ "EVIOCGABS", EVIOCGABS(0) },		{ "EVIOCGMTSLOTS", EVIOCGMTSLOTS(0) },
	{ "HIDIOCGRDESCSIZE", HIDIOCGRDESCSIZE }, { "HIDIOCGRDESC", HIDIOCGRDESC },
	{ "HIDIOCGRAWINFO", HIDIOCGRAWINFO },	{ "HIDIOCGRAWNAME", HIDIOCGRAWNAME(0) },
	{ "HIDIOCGFEATURE", HIDIOCGFEATURE(0) },
	{ "CROS_EC_DEV_IOCXCMD_V2", CROS_EC_DEV_IOCXCMD_V2 },
};

/*
 * Make each line's call of a recording of simple requests (and cros_ec
 * commands) through @r, as a program asking in the recorded order would,
 * each checked against the line: its result and bytes.  Return: the
 * number of calls made, -1 on a mismatch.
 */
static int replay_lines(struct cfs_ioctl_recorder *r, struct cfs_ioctl_handler *h,
			const char *text)
{
	static char hex[16384];
	char name[64];
	int calls = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		unsigned int idx = 0;
		unsigned long req = 0;
		static uint8_t want[8192], arg[8192];
		size_t len;
		long ret, got;
		char *paren;

		if (*l == '#' || *l == '@' || *l == '\n')
			continue;
		if (sscanf(l, "%63s %ld %16383s", name, &ret, hex) != 3)
			return -1;
		paren = strchr(name, '(');
		if (paren) {
			idx = (unsigned int)atoi(paren + 1);
			*paren = '\0';
		}
		for (size_t i = 0; i < sizeof(simple) / sizeof(simple[0]); i++)
			if (!strcmp(simple[i].name, name))
				req = simple[i].req;
		len = strlen(hex) / 2;
		if (!req || len > sizeof(want))
			return -1;
		for (size_t i = 0; i < len; i++)
			want[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
		memset(arg, 0, sizeof(arg));
		if (req == CROS_EC_DEV_IOCXCMD_V2) {
			/* the program's command: the recorded header, room for the answer */
			memcpy(arg, want, 20);
		} else {
			req = _IOC(_IOC_DIR(req), _IOC_TYPE(req), _IOC_NR(req) + idx, len);
		}
		got = rec_call(r, h, req, arg);
		if (got != ret || memcmp(arg, want, len)) {
			fprintf(stderr, "  %s: result %ld (recorded %ld), bytes %s\n", name, got,
				ret, memcmp(arg, want, len) ? "differ" : "equal");
			return -1;
		}
		calls++;
	}
	return calls;
}

/* record the replay of recording @file; the written tree must be the file's */
static void round_trip_simple(const char *file, const char *dev, int want_calls)
{
	struct cfs_ioctl_recorder *r = cfs_ioctl_recorder_new(NULL);
	struct cfs_ioctl_handler h;
	char *text, *expect, *got = NULL;
	size_t len = 0;

	text = slurp(file, &len);
	REQUIRE(text && r);
	h = load_text(text, len, file);
	REQUIRE(h.ioctl);
	CHECK_INT(replay_lines(r, &h, text), want_calls);
	got = written(r, dev);
	expect = without_comments(text);
	CHECK_STR(got, expect);
	h.free(h.data);
	cfs_ioctl_recorder_free(r);
	free(text);
	free(expect);
	free(got);
}

/* ---- evdev, hidraw, cros_ec ---- */

TEST(keyboard_round_trip)
{
	round_trip_simple("keyboard.ioctl", "/dev/input/event3", 14);
}

TEST(hidraw_round_trip)
{
	round_trip_simple("hidraw.ioctl", "/dev/hidraw0", 5);
}

TEST(cros_ec_round_trip)
{
	round_trip_simple("cros-ec.ioctl", "/dev/cros_fp", 2);
}

/*
 * A recording made before (the first lines of the keyboard's) is added
 * to, as umockdev-record does: recording the whole replay again gives
 * the whole file, each answer once; another node's file is refused.
 */
TEST(added_to_an_earlier_recording)
{
	char part[] = "/tmp/test-record-part.XXXXXX", msg[256] = "";
	struct cfs_ioctl_tree *before = NULL;
	struct cfs_ioctl_recorder *r;
	struct cfs_ioctl_handler h;
	char *text, *expect, *got, *third;
	size_t len = 0;
	int fd;

	text = slurp("keyboard.ioctl", &len);
	REQUIRE(text);
	expect = without_comments(text);
	REQUIRE(expect);
	/* "@DEV" and two answers */
	third = strchr(strchr(strchr(expect, '\n') + 1, '\n') + 1, '\n') + 1;
	fd = mkstemp(part);
	REQUIRE(fd >= 0);
	REQUIRE(write(fd, expect, (size_t)(third - expect)) == third - expect);
	close(fd);
	CHECK_INT(cfs_ioctl_file_tree(part, "/dev/input/event9", &before, msg, sizeof(msg)),
		  -EINVAL);
	CHECK(strstr(msg, ":1: a recording of /dev/input/event3, not of /dev/input/event9") != NULL);
	CHECK_INT(cfs_ioctl_file_tree(part, "/dev/input/event3", &before, msg, sizeof(msg)), 0);
	r = cfs_ioctl_recorder_new(before);
	REQUIRE(r);
	h = load_text(text, len, "keyboard.ioctl");
	REQUIRE(h.ioctl);
	CHECK_INT(replay_lines(r, &h, text), 14);
	got = written(r, "/dev/input/event3");
	CHECK_STR(got, expect);
	h.free(h.data);
	cfs_ioctl_recorder_free(r);
	unlink(part);
	free(text);
	free(expect);
	free(got);
}

/* what fails is answered, not recorded; what has no size is the kernel's */
TEST(failures_and_passes)
{
	struct cfs_ioctl_recorder *r = cfs_ioctl_recorder_new(NULL);
	struct cfs_ioctl_handler h;
	char *text, *got;
	char name[64] = "";
	size_t len = 0;
	struct termios tio;

	text = slurp("keyboard.ioctl", &len);
	REQUIRE(text && r);
	h = load_text(text, len, "keyboard.ioctl");
	REQUIRE(h.ioctl);
	/* a name buffer of another length is not in the recording: ENOENT, as evdev's */
	CHECK_INT(rec_call(r, &h, EVIOCGNAME(64), name), -ENOENT);
	/* the terminal requests have no size: the program's own call goes on */
	CHECK_INT(rec_call(r, &h, TCGETS, &tio), CFS_IOCTL_PASS);
	CHECK_INT(rec_call(r, &h, _IO('E', 0x01), NULL), CFS_IOCTL_PASS);
	got = written(r, "/dev/input/event3");
	CHECK_STR(got, "@DEV /dev/input/event3\n");
	free(got);
	h.free(h.data);
	cfs_ioctl_recorder_free(r);
	free(text);
}

/* an execute callback that fills the argument with 0x42 and succeeds */
static long exec_fill(void *ctx, unsigned long request, unsigned long arg)
{
	memset((void *)arg, 0x42, _IOC_SIZE(request));
	return 7;
}

/* a request the format lacks is made and answered, not recorded; _IOW is not written back */
TEST(unknown_request)
{
	struct cfs_ioctl_recorder *r = cfs_ioctl_recorder_new(NULL);
	struct cfs_ioctl_call c = { .mem = &cfs_mem_self, .node = "/dev/x" };
	const uint32_t in = 5;
	uint32_t out = 0;
	char *got;

	REQUIRE(r);
	c.request = _IOR('X', 1, uint32_t);
	c.arg = (uintptr_t)&out;
	CHECK_INT(cfs_ioctl_record(r, &c, exec_fill, NULL), 7);
	CHECK_INT(out, 0x42424242);
	/* a const argument: the kernel only reads it, and so does the recorder */
	c.request = _IOW('X', 2, uint32_t);
	c.arg = (uintptr_t)&in;
	CHECK_INT(cfs_ioctl_record(r, &c, exec_fill, NULL), 7);
	CHECK_INT(in, 5);
	got = written(r, NULL);
	CHECK_STR(got, "");
	free(got);
	cfs_ioctl_recorder_free(r);
}

/* ---- usbdevfs: URBs submitted and reaped through copies ---- */

struct usb_prog {
	struct usbdevfs_urb urb[9];
	uint8_t buf[9][64];
};

static long submit(struct cfs_ioctl_recorder *r, struct cfs_ioctl_handler *h,
		   struct usbdevfs_urb *u, uint8_t *buf, unsigned char type, unsigned char ep,
		   const void *data, int len, int room)
{
	*u = (struct usbdevfs_urb){ .type = type, .endpoint = ep, .buffer = buf,
				    .buffer_length = room };
	memset(buf, 0, (size_t)room);
	if (len)
		memcpy(buf, data, (size_t)len);
	return rec_call(r, h, USBDEVFS_SUBMITURB, u);
}

/* reap one URB: it must be @u, with @status, @actual and (an IN URB) @data */
static bool reap(struct cfs_ioctl_recorder *r, struct cfs_ioctl_handler *h, unsigned long req,
		 struct usbdevfs_urb *u, int status, int actual, const void *data, size_t at)
{
	void *p = NULL;
	long ret = rec_call(r, h, req, &p);

	if (ret || p != u || u->status != status || u->actual_length != actual) {
		fprintf(stderr, "  reap: %ld, urb %p (want %p), status %d, actual %d\n", ret, p,
			(void *)u, u->status, u->actual_length);
		return false;
	}
	return !data || !memcmp((uint8_t *)u->buffer + at, data, (size_t)actual);
}

/* tests/devio/data/usb-device.ioctl's conversation, as libusb would hold it */
static void usb_conversation(struct cfs_ioctl_recorder *r, struct cfs_ioctl_handler *h)
{
	static const uint8_t setup[8] = { 0x80, 0x06, 0x00, 0x01, 0x00, 0x00, 0x12, 0x00 };
	static const uint8_t desc[18] = { 0x12, 0x01, 0x00, 0x02, 0, 0, 0, 0x40, 0x6b, 0x1d,
					  0x04, 0x01, 0x00, 0x01, 0x01, 0x02, 0x03, 0x01 };
	static const uint8_t intr[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
	struct usbdevfs_connectinfo ci = { 0 };
	static struct usb_prog p;
	uint32_t caps = 0;

	CHECK_INT(rec_call(r, h, USBDEVFS_CONNECTINFO, &ci), 0);
	CHECK_INT(ci.devnum, 2);
	CHECK_INT(rec_call(r, h, USBDEVFS_GET_CAPABILITIES, &caps), 0);
	CHECK_INT(caps, 0xf);
	/* the device descriptor: a control URB, the answer after the setup packet */
	CHECK_INT(submit(r, h, &p.urb[0], p.buf[0], USBDEVFS_URB_TYPE_CONTROL, 0, setup, 8, 26), 0);
	CHECK(reap(r, h, USBDEVFS_REAPURB, &p.urb[0], 0, 18, desc, 8));
	CHECK_INT(submit(r, h, &p.urb[1], p.buf[1], USBDEVFS_URB_TYPE_BULK, 2, "PING", 4, 4), 0);
	CHECK(reap(r, h, USBDEVFS_REAPURB, &p.urb[1], 0, 4, NULL, 0));
	CHECK_INT(submit(r, h, &p.urb[2], p.buf[2], USBDEVFS_URB_TYPE_BULK, 0x81, NULL, 0, 64), 0);
	CHECK(reap(r, h, USBDEVFS_REAPURB, &p.urb[2], 0, 4, "PONG", 0));
	CHECK_INT(submit(r, h, &p.urb[3], p.buf[3], USBDEVFS_URB_TYPE_BULK, 0x81, NULL, 0, 64), 0);
	CHECK(reap(r, h, USBDEVFS_REAPURB, &p.urb[3], 0, 6, "PONG?!", 0));
	CHECK_INT(submit(r, h, &p.urb[4], p.buf[4], USBDEVFS_URB_TYPE_BULK, 2, "QUIT", 4, 4), 0);
	CHECK(reap(r, h, USBDEVFS_REAPURB, &p.urb[4], 0, 4, NULL, 0));
	CHECK_INT(submit(r, h, &p.urb[5], p.buf[5], USBDEVFS_URB_TYPE_BULK, 0x81, NULL, 0, 64), 0);
	CHECK(reap(r, h, USBDEVFS_REAPURB, &p.urb[5], -32, 0, NULL, 0));
	/* nothing submitted: EAGAIN, nothing recorded */
	{
		void *none = NULL;

		CHECK_INT(rec_call(r, h, USBDEVFS_REAPURBNDELAY, &none), -EAGAIN);
	}
	CHECK_INT(submit(r, h, &p.urb[6], p.buf[6], USBDEVFS_URB_TYPE_INTERRUPT, 0x83, NULL, 0, 8),
		  0);
	CHECK(reap(r, h, USBDEVFS_REAPURBNDELAY, &p.urb[6], 0, 8, intr, 0));
}

/*
 * The recording's last URB, from the interrupt endpoint, stands at the
 * top there; a recorder puts every URB read from the device under the
 * URB reaped before it (umockdev's insertion rule), so recorded it is
 * indented under the stalled read.  Recorded again, that tree stays.
 */
TEST(usb_round_trip)
{
	struct cfs_ioctl_recorder *r1 = cfs_ioctl_recorder_new(NULL), *r2 = cfs_ioctl_recorder_new(NULL);
	struct cfs_ioctl_handler h1, h2;
	char *text, *expect, *got1 = NULL, *got2 = NULL, *last;
	size_t len = 0;

	text = slurp("usb-device.ioctl", &len);
	REQUIRE(text && r1 && r2);
	h1 = load_text(text, len, "usb-device.ioctl");
	REQUIRE(h1.ioctl);
	usb_conversation(r1, &h1);
	got1 = written(r1, "/dev/bus/usb/001/002");
	expect = without_comments(text);
	last = strstr(expect, "USBDEVFS_REAPURBNDELAY");
	REQUIRE(last);
	memmove(last + 2, last, strlen(last) + 1);
	memcpy(last, "  ", 2);
	CHECK_STR(got1, expect);

	h2 = load_text(got1, strlen(got1), "recorded.ioctl");
	REQUIRE(h2.ioctl);
	usb_conversation(r2, &h2);
	got2 = written(r2, "/dev/bus/usb/001/002");
	CHECK_STR(got2, got1);
	h1.free(h1.data);
	h2.free(h2.data);
	cfs_ioctl_recorder_free(r1);
	cfs_ioctl_recorder_free(r2);
	free(text);
	free(expect);
	free(got1);
	free(got2);
}

/* a discarded URB is reaped with -ENOENT, by the program's address */
TEST(usb_discard)
{
	struct cfs_ioctl_recorder *r = cfs_ioctl_recorder_new(NULL);
	struct cfs_ioctl_handler h;
	static struct usb_prog p;
	char *text;
	size_t len = 0;

	text = slurp("usb-device.ioctl", &len);
	REQUIRE(text && r);
	h = load_text(text, len, "usb-device.ioctl");
	REQUIRE(h.ioctl);
	CHECK_INT(submit(r, &h, &p.urb[0], p.buf[0], USBDEVFS_URB_TYPE_BULK, 0x81, NULL, 0, 64), 0);
	CHECK_INT(rec_call(r, &h, USBDEVFS_DISCARDURB, &p.urb[0]), 0);
	CHECK(reap(r, &h, USBDEVFS_REAPURB, &p.urb[0], -ENOENT, 0, NULL, 0));
	/* one never submitted: the kernel's EINVAL */
	CHECK_INT(rec_call(r, &h, USBDEVFS_DISCARDURB, &p.urb[1]), -EINVAL);
	h.free(h.data);
	cfs_ioctl_recorder_free(r);
	free(text);
}

/* an execute callback that answers a bulk IN transfer with "abc" */
static long exec_bulk(void *ctx, unsigned long request, unsigned long arg)
{
	struct usbdevfs_bulktransfer *b = (void *)arg;

	if (request != USBDEVFS_BULK)
		return -ENOTTY;
	*(int *)ctx = b->ep;
	memcpy(b->data, "abc", 3);
	return 3;
}

/* USBDEVFS_BULK: the data pointer is followed, the answer copied back */
TEST(usb_bulk_transfer)
{
	struct cfs_ioctl_recorder *r = cfs_ioctl_recorder_new(NULL);
	char data[16] = "zzzzzzzz";
	struct usbdevfs_bulktransfer b = { .ep = 0x81, .len = sizeof(data), .data = data };
	struct cfs_ioctl_call c = { .request = USBDEVFS_BULK, .arg = (uintptr_t)&b,
				    .mem = &cfs_mem_self, .node = "/dev/x" };
	int ep = 0;

	REQUIRE(r);
	CHECK_INT(cfs_ioctl_record(r, &c, exec_bulk, &ep), 3);
	CHECK_INT(ep, 0x81);
	CHECK(!memcmp(data, "abczzzzz", 8));
	/* the program's struct keeps its own pointer */
	CHECK(b.data == data);
	cfs_ioctl_recorder_free(r);
}

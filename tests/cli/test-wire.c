// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-wire.c - event wire formats: the udev message byte by byte, both
 * decoders on what we encode (and on what they must refuse), the
 * `udevadm monitor --kernel --property` text, JSON of an event.  Sending
 * to real listeners is test-udevadm.sh's (in a private network namespace).
 */
#include <endian.h>
#include <json-c/json.h>

#include "harness.h"
#include "classfs/wire.h"

/* a real event of the core: ADD of block/sda (disk) */
struct caught {
	char buf[4096];
	const char *envp[80];
	struct classfs_uevent ev;
	int n;
};

static void catch_one(const struct classfs_uevent *ev, void *data)
{
	struct caught *c = data;
	size_t off = 0;

	if (c->n++)
		return;	/* the first one only */
	c->ev = *ev;
	for (int i = 0; i < ev->envc; i++) {
		size_t l = strlen(ev->envp[i]) + 1;

		memcpy(c->buf + off, ev->envp[i], l);
		c->envp[i] = c->buf + off;
		off += l;
	}
	c->ev.envp = c->envp;
	c->ev.devpath = classfs_uevent_get(&c->ev, "DEVPATH");
	c->ev.subsystem = classfs_uevent_get(&c->ev, "SUBSYSTEM");
}

static const struct classfs_device_type disk = { .name = "disk" };

static struct classfs_tree *make_event(struct caught *c)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_class *blk = classfs_class_create(t, "block");
	struct classfs_device *d = classfs_zalloc(sizeof(*d));
	int id = classfs_listener_add(t, catch_one, c);

	*c = (struct caught){ 0 };
	classfs_device_initialize(d);
	d->cls = blk;
	d->devt = makedev(8, 0);
	d->type = &disk;
	d->release = (void (*)(struct classfs_device *))classfs_free;
	classfs_device_set_name(d, "sda");
	CHECK_INT(classfs_device_add(d), 0);
	classfs_listener_remove(t, id);
	CHECK_INT(c->n, 1);
	return t;
}

static void free_tree(struct classfs_tree *t)
{
	struct classfs_class *blk = classfs_class_find(t, "block");

	classfs_class_destroy(blk);
	classfs_class_put(blk);
	CHECK_INT(classfs_tree_free(t), 0);
}

static uint32_t word(const char *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

TEST(udev_message_bytes)
{
	struct caught c;
	struct classfs_tree *t = make_event(&c);
	char msg[1024], small[50];
	size_t len, plen = 0;

	for (int i = 0; i < c.ev.envc; i++)
		plen += strlen(c.ev.envp[i]) + 1;
	len = classfs_uevent_format_udev(&c.ev, NULL, 0);
	CHECK_INT(len, 40 + plen);
	CHECK_INT(classfs_uevent_format_udev(&c.ev, msg, sizeof(msg)), len);
	CHECK(!memcmp(msg, "libudev\0", 8));
	CHECK(!memcmp(msg + 8, "\xfe\xed\xca\xfe", 4));	/* magic, big-endian */
	CHECK_INT(word(msg + 12), 40);			/* header_size, host order */
	CHECK_INT(word(msg + 16), 40);			/* properties_off */
	CHECK_INT(word(msg + 20), plen);		/* properties_len */
	CHECK(word(msg + 24) != 0);			/* subsystem hash */
	CHECK(word(msg + 28) != 0);			/* devtype hash: DEVTYPE=disk */
	CHECK_INT(word(msg + 32), 0);			/* no TAGS: empty bloom */
	CHECK_INT(word(msg + 36), 0);
	CHECK_STR(msg + 40, "ACTION=add");
	CHECK_STR(msg + 40 + 11, "DEVPATH=/class/block/sda");
	CHECK(!memcmp(msg + len - strlen(c.ev.envp[c.ev.envc - 1]) - 1, "SEQNUM=", 7));
	/* a short buffer: the size is still told, nothing written past it */
	memset(small, 'x', sizeof(small));
	CHECK_INT(classfs_uevent_format_udev(&c.ev, small, 45), len);
	CHECK(small[45] == 'x' && small[49] == 'x');

	/* a second event of another subsystem hashes differently; the same one the same */
	char msg2[1024];
	const char *envp2[] = { "ACTION=change", "DEVPATH=/class/input/input0", "SUBSYSTEM=input",
				"SEQNUM=7" };
	struct classfs_uevent ev2 = { .seqnum = 7, .action = CLASSFS_ACTION_CHANGE,
				      .devpath = envp2[1] + 8, .subsystem = "input",
				      .envc = 4, .envp = envp2 };

	CHECK(classfs_uevent_format_udev(&ev2, msg2, sizeof(msg2)) > 40);
	CHECK(word(msg2 + 24) != word(msg + 24));
	CHECK_INT(word(msg2 + 28), 0);			/* no DEVTYPE */
	free_tree(t);
}

TEST(udev_tag_bloom)
{
	const char *envp[] = { "ACTION=add", "DEVPATH=/class/input/event3", "SUBSYSTEM=input",
			       "TAGS=:seat:uaccess:", "SEQNUM=9" };
	const char *one[] = { "ACTION=add", "DEVPATH=/class/input/event3", "SUBSYSTEM=input",
			      "TAGS=:seat:", "SEQNUM=9" };
	struct classfs_uevent ev = { .seqnum = 9, .action = CLASSFS_ACTION_ADD, .envc = 5,
				     .envp = envp };
	char a[512], b[512];
	uint64_t ba, bb;

	CHECK(classfs_uevent_format_udev(&ev, a, sizeof(a)) > 40);
	ev.envp = one;
	CHECK(classfs_uevent_format_udev(&ev, b, sizeof(b)) > 40);
	ba = (uint64_t)be32toh(word(a + 32)) << 32 | be32toh(word(a + 36));
	bb = (uint64_t)be32toh(word(b + 32)) << 32 | be32toh(word(b + 36));
	CHECK(bb != 0);
	CHECK((ba & bb) == bb);			/* "seat" is in both filters */
	CHECK(ba != bb);			/* "uaccess" added bits */
	CHECK(__builtin_popcountll(bb) >= 1 && __builtin_popcountll(bb) <= 4);
}

TEST(format_refuses_incomplete_events)
{
	const char *no_seq[] = { "ACTION=add", "DEVPATH=/a", "SUBSYSTEM=x" };
	const char *zero_seq[] = { "ACTION=add", "DEVPATH=/a", "SUBSYSTEM=x", "SEQNUM=0" };
	const char *no_sub[] = { "ACTION=add", "DEVPATH=/a", "SEQNUM=3" };
	const char *bad_act[] = { "ACTION=jump", "DEVPATH=/a", "SUBSYSTEM=x", "SEQNUM=3" };
	const char *no_eq[] = { "ACTION=add", "DEVPATH=/a", "SUBSYSTEM=x", "JUNK", "SEQNUM=3" };
	const char *twice[] = { "ACTION=add", "DEVPATH=/a", "SUBSYSTEM=x", "SUBSYSTEM=y",
				"SEQNUM=3" };
	const char *ok[] = { "ACTION=add", "DEVPATH=/a", "SUBSYSTEM=x", "SEQNUM=3" };
	struct classfs_uevent ev = { .action = CLASSFS_ACTION_ADD };
	char buf[256];

#define TRY(arr) (ev.envp = (arr), ev.envc = (int)(sizeof(arr) / sizeof(arr[0])), \
		  classfs_uevent_format_udev(&ev, buf, sizeof(buf)))
	CHECK_INT(TRY(no_seq), 0);
	CHECK_INT(TRY(zero_seq), 0);
	CHECK_INT(TRY(no_sub), 0);
	CHECK_INT(TRY(bad_act), 0);
	CHECK_INT(TRY(no_eq), 0);
	CHECK_INT(TRY(twice), 0);
	CHECK(TRY(ok) > 40);
	ev.action = CLASSFS_ACTION_REMOVE;		/* fields disagree with variables */
	CHECK_INT(TRY(ok), 0);
	ev.action = CLASSFS_ACTION_ADD;
	ev.seqnum = 4;
	CHECK_INT(TRY(ok), 0);
#undef TRY
	CHECK_INT(classfs_uevent_format_udev(NULL, buf, sizeof(buf)), 0);
	CHECK_INT(classfs_netlink_udev_send(-1, &ev), -EBADF);
}

TEST(decode_what_we_encode)
{
	struct caught c;
	struct classfs_tree *t = make_event(&c);
	struct classfs_wire_event *w = malloc(sizeof(*w));
	char msg[1024];
	size_t len = classfs_uevent_format_udev(&c.ev, msg, sizeof(msg));

	CHECK_INT(classfs_uevent_decode_udev(msg, len, w), 0);
	CHECK_INT(w->ev.envc, c.ev.envc);
	for (int i = 0; i < c.ev.envc; i++)
		CHECK_STR(w->ev.envp[i], c.ev.envp[i]);
	CHECK_INT(w->ev.seqnum, c.ev.seqnum);
	CHECK_INT(w->ev.action, CLASSFS_ACTION_ADD);
	CHECK_STR(w->ev.devpath, "/class/block/sda");
	CHECK_STR(w->ev.subsystem, "block");
	CHECK_STR(w->devtype, "disk");

	/* the kernel form, from the core's own encoder */
	len = classfs_uevent_format_kernel(&c.ev, msg, sizeof(msg));
	CHECK_INT(classfs_uevent_decode_kernel(msg, len, w), 0);
	CHECK_INT(w->ev.envc, c.ev.envc);
	CHECK_STR(w->ev.envp[c.ev.envc - 1], c.ev.envp[c.ev.envc - 1]);
	CHECK_INT(w->ev.seqnum, c.ev.seqnum);
	CHECK_STR(w->ev.devpath, "/class/block/sda");
	/* each decoder refuses the other's form */
	CHECK_INT(classfs_uevent_decode_udev(msg, len, w), -EBADMSG);
	len = classfs_uevent_format_udev(&c.ev, msg, sizeof(msg));
	CHECK_INT(classfs_uevent_decode_kernel(msg, len, w), -EBADMSG);
	free(w);
	free_tree(t);
}

TEST(decoders_refuse_malformed)
{
	struct caught c;
	struct classfs_tree *t = make_event(&c);
	struct classfs_wire_event *w = malloc(sizeof(*w));
	char msg[1024], bad[1024];
	size_t len = classfs_uevent_format_udev(&c.ev, msg, sizeof(msg));
	uint32_t v;

	/* every truncation is refused */
	for (size_t l = 0; l < len; l++)
		if (classfs_uevent_decode_udev(msg, l, w) != -EBADMSG) {
			CHECK_INT(l, -1);
			break;
		}
	/* each header field */
	memcpy(bad, msg, len); bad[0] = 'L';
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	memcpy(bad, msg, len); bad[11] ^= 1;		/* magic */
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	memcpy(bad, msg, len); v = 39; memcpy(bad + 12, &v, 4);	/* header_size */
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	memcpy(bad, msg, len); v = (uint32_t)len + 1; memcpy(bad + 16, &v, 4);	/* properties_off */
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	memcpy(bad, msg, len); v = 0xfffffff0u; memcpy(bad + 20, &v, 4);	/* properties_len */
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	memcpy(bad, msg, len); bad[27] ^= 1;		/* subsystem hash */
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	memcpy(bad, msg, len); bad[31] ^= 1;		/* devtype hash */
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	/* properties: an empty string in the middle, a missing '=' */
	memcpy(bad, msg, len); bad[40 + 10] = '\0'; bad[40 + 11] = '\0';
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	memcpy(bad, msg, len); bad[40 + 6] = 'X';	/* "ACTIONXadd" */
	CHECK_INT(classfs_uevent_decode_udev(bad, len, w), -EBADMSG);
	/* too large, NULLs */
	CHECK_INT(classfs_uevent_decode_udev(msg, CLASSFS_WIRE_MAX + 1, w), -E2BIG);
	CHECK_INT(classfs_uevent_decode_udev(NULL, len, w), -EINVAL);
	CHECK_INT(classfs_uevent_decode_udev(msg, len, NULL), -EINVAL);
	/* still decodes untouched */
	CHECK_INT(classfs_uevent_decode_udev(msg, len, w), 0);

	/* kernel form: head and variables must agree */
	static const char k_ok[] = "add@/a\0ACTION=add\0DEVPATH=/a\0SUBSYSTEM=x\0SEQNUM=5";
	static const char k_head[] = "add@/b\0ACTION=add\0DEVPATH=/a\0SUBSYSTEM=x\0SEQNUM=5";
	static const char k_act[] = "remove@/a\0ACTION=add\0DEVPATH=/a\0SUBSYSTEM=x\0SEQNUM=5";
	static const char k_noat[] = "add\0ACTION=add\0DEVPATH=/a\0SUBSYSTEM=x\0SEQNUM=5";

	CHECK_INT(classfs_uevent_decode_kernel(k_ok, sizeof(k_ok), w), 0);
	CHECK_INT(w->ev.seqnum, 5);
	CHECK_INT(classfs_uevent_decode_kernel(k_ok, sizeof(k_ok) - 1, w), -EBADMSG);
	CHECK_INT(classfs_uevent_decode_kernel(k_head, sizeof(k_head), w), -EBADMSG);
	CHECK_INT(classfs_uevent_decode_kernel(k_act, sizeof(k_act), w), -EBADMSG);
	CHECK_INT(classfs_uevent_decode_kernel(k_noat, sizeof(k_noat), w), -EBADMSG);
	CHECK_INT(classfs_uevent_decode_kernel("", 0, w), -EBADMSG);

	/* more properties than a decoded event holds */
	size_t off = sizeof(k_ok);
	char *big = malloc(CLASSFS_WIRE_MAX);

	memcpy(big, k_ok, sizeof(k_ok));
	for (int i = 0; off + 8 < CLASSFS_WIRE_MAX; i++)
		off += (size_t)sprintf(big + off, "K%d=", i % 1000) + 1;
	CHECK_INT(classfs_uevent_decode_kernel(big, off, w), -E2BIG);
	free(big);
	free(w);
	free_tree(t);
}

static char *capture_monitor(const struct classfs_uevent *ev, const struct timespec *ts,
			     bool json, int *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	*r = json ? classfs_uevent_print_json(ev, ts, f) : classfs_uevent_print_monitor(ev, ts, f);
	fclose(f);
	return buf;
}

TEST(monitor_text_and_json)
{
	const char *envp[] = { "ACTION=add", "DEVPATH=/class/block/sda", "SUBSYSTEM=block",
			       "MAJOR=8", "MINOR=0", "DEVNAME=sda", "DEVTYPE=disk", "SEQNUM=42" };
	const char *envp2[] = { "ACTION=offline", "DEVPATH=/class/cpu/cpu1", "SUBSYSTEM=cpu",
				"X=\"q\"", "SEQNUM=43" };
	struct classfs_uevent ev = { .seqnum = 42, .action = CLASSFS_ACTION_ADD,
				     .devpath = "/class/block/sda", .subsystem = "block",
				     .envc = 8, .envp = envp };
	struct timespec ts = { .tv_sec = 1234, .tv_nsec = 5678000 };
	struct json_object *o, *v;
	char *out;
	int r;

	out = capture_monitor(&ev, &ts, false, &r);
	CHECK_INT(r, 0);
	/* udevadm: "%-6s[%lu.%06lu] %-8s %s (%s)" then the properties and an empty line */
	/* DEVNAME absolute, MAJOR and MINOR last: as sd-device holds them */
	CHECK_STR(out, "KERNEL[1234.005678] add      /class/block/sda (block)\n"
		       "ACTION=add\nDEVPATH=/class/block/sda\nSUBSYSTEM=block\n"
		       "DEVNAME=/dev/sda\nDEVTYPE=disk\nSEQNUM=42\nMAJOR=8\nMINOR=0\n\n");
	free(out);
	ev = (struct classfs_uevent){ .seqnum = 43, .action = CLASSFS_ACTION_OFFLINE,
				      .devpath = "/class/cpu/cpu1", .subsystem = "cpu",
				      .envc = 5, .envp = envp2 };
	out = capture_monitor(&ev, &ts, false, &r);
	CHECK_INT(r, 0);
	CHECK(out && !strncmp(out, "KERNEL[1234.005678] offline  /class/cpu/cpu1 (cpu)\n", 51));
	free(out);

	out = capture_monitor(&ev, &ts, true, &r);
	CHECK_INT(r, 0);
	CHECK(out && strchr(out, '\n') == out + strlen(out) - 1);	/* one line */
	o = json_tokener_parse(out);
	CHECK(o != NULL);
	CHECK(json_object_object_get_ex(o, "seqnum", &v) && json_object_get_uint64(v) == 43);
	CHECK(json_object_object_get_ex(o, "action", &v) &&
	      !strcmp(json_object_get_string(v), "offline"));
	CHECK(json_object_object_get_ex(o, "devpath", &v) &&
	      !strcmp(json_object_get_string(v), "/class/cpu/cpu1"));
	CHECK(json_object_object_get_ex(o, "subsystem", &v) &&
	      !strcmp(json_object_get_string(v), "cpu"));
	CHECK(json_object_object_get_ex(o, "usec", &v) && json_object_get_uint64(v) == 1234005678);
	CHECK(json_object_object_get_ex(o, "properties", &v) &&
	      json_object_object_length(v) == 5);
	CHECK(json_object_object_get_ex(v, "X", &v) && !strcmp(json_object_get_string(v), "\"q\""));
	json_object_put(o);
	free(out);

	/* no time given: now, monotonic */
	out = capture_monitor(&ev, NULL, false, &r);
	CHECK_INT(r, 0);
	CHECK(out && !strncmp(out, "KERNEL[", 7));
	free(out);
	CHECK_INT(classfs_uevent_print_monitor(NULL, NULL, stdout), -EINVAL);
	CHECK_INT(classfs_uevent_print_json(&ev, NULL, NULL), -EINVAL);
	FILE *full = fopen("/dev/full", "w");

	if (full) {
		CHECK_INT(classfs_uevent_print_monitor(&ev, &ts, full), -EIO);
		fclose(full);
	}
}

/* mangled messages: never a crash or a read out of bounds (ASan build);
 * what decodes encodes back to a message that decodes the same */
TEST(decoders_survive_mutation)
{
	struct caught c;
	struct classfs_tree *t = make_event(&c);
	struct classfs_wire_event *w = malloc(sizeof(*w)), *w2 = malloc(sizeof(*w2));
	char msg[1024], m[1024], re[CLASSFS_WIRE_MAX];
	size_t len = classfs_uevent_format_udev(&c.ev, msg, sizeof(msg));
	size_t klen = 0;
	char kmsg[1024];
	unsigned int seed = 12345, ok = 0;

	klen = classfs_uevent_format_kernel(&c.ev, kmsg, sizeof(kmsg));
	for (int i = 0; i < 20000; i++) {
		bool kernel = i & 1;
		size_t l = kernel ? klen : len;
		size_t cut = (size_t)rand_r(&seed) % (l + 1);
		int flips = 1 + rand_r(&seed) % 3, r;

		memcpy(m, kernel ? kmsg : msg, l);
		for (int f = 0; f < flips; f++)
			m[(size_t)rand_r(&seed) % l] = (char)rand_r(&seed);
		if (i % 7 == 0)
			l = cut;	/* also truncated */
		r = kernel ? classfs_uevent_decode_kernel(m, l, w) : classfs_uevent_decode_udev(m, l, w);
		if (r < 0) {
			CHECK(r == -EBADMSG || r == -E2BIG);
			continue;
		}
		ok++;
		size_t n = classfs_uevent_format_udev(&w->ev, re, sizeof(re));

		CHECK(n > 0);
		CHECK_INT(classfs_uevent_decode_udev(re, n, w2), 0);
		CHECK_INT(w2->ev.envc, w->ev.envc);
		CHECK_INT(w2->ev.seqnum, w->ev.seqnum);
	}
	CHECK(ok > 0);	/* some flips (inside values) still decode */
	free(w);
	free(w2);
	free_tree(t);
}

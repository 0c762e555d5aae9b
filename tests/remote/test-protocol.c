// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-protocol.c - the control protocol's decoder on its own (valid,
 * malformed and randomly mutated messages), and a daemon fed malformed
 * and hostile messages on a raw socket: each gets an error reply, nothing
 * changes, and the connection and the daemon stay healthy.
 */
#include <dirent.h>
#include <poll.h>
#include <sys/resource.h>

#include <json-c/json.h>

#include "../harness.h"
#include "protocol.h"
#include "remote-util.h"

static void valid_add(struct cfs_buf *b)
{
	cfs_buf_init(b);
	cfs_buf_hdr(b, CFS_OP_DEVICE_ADD, 7, CFS_F_BIND);
	cfs_buf_str(b, CFS_T_CLASS, "block");
	cfs_buf_str(b, CFS_T_NAME, "sda");
	cfs_buf_u64(b, CFS_T_DEVT, makedev(8, 0));
	cfs_buf_attr(b, 0444, 0, "size", "100\n", 4);
	cfs_buf_attr(b, 0644, CFS_A_REMOTE | CFS_A_STORE, "queue/scheduler", NULL, 0);
	cfs_buf_seal(b);
}

/* seal (write the length into the header) and decode */
#define DEC(b, m) (cfs_buf_seal(b), cfs_msg_decode((b)->p, (b)->len, (m)))

TEST(decode_valid)
{
	struct cfs_buf b;
	struct cfs_msg m;
	struct cfs_attr a;
	const uint8_t *v;
	size_t off = 0, len;

	valid_add(&b);
	CHECK_INT(DEC(&b, &m), 0);
	CHECK_INT(m.op, CFS_OP_DEVICE_ADD);
	CHECK_INT(m.serial, 7);
	CHECK_INT(m.flags, CFS_F_BIND);
	CHECK_STR(m.cls, "block");
	CHECK_STR(m.name, "sda");
	CHECK(m.devt == makedev(8, 0));
	CHECK_INT(m.nattrs, 2);
	CHECK(cfs_msg_next(&m, &off, CFS_T_ATTR, &v, &len) == 1);
	CHECK_INT(cfs_attr_decode(v, len, &a), 0);
	CHECK_STR(a.name, "size");
	CHECK(a.len == 4 && !memcmp(a.value, "100\n", 4));
	CHECK(cfs_msg_next(&m, &off, CFS_T_ATTR, &v, &len) == 1);
	CHECK_INT(cfs_attr_decode(v, len, &a), 0);
	CHECK_STR(a.name, "queue/scheduler");
	CHECK_INT(a.flags, CFS_A_REMOTE | CFS_A_STORE);
	CHECK(cfs_msg_next(&m, &off, CFS_T_ATTR, &v, &len) == 0);
	cfs_buf_free(&b);

	/* an event record and a batch */
	{
		const char *env[] = { "ACTION=add", "DEVPATH=/class/block/sda", "SUBSYSTEM=block",
				      "SEQNUM=5" };
		struct cfs_event ev;

		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_EVENTS, 0, 0);
		cfs_buf_event(&b, 5, CLASSFS_ACTION_ADD, 4, env);
		CHECK_INT(DEC(&b, &m), 0);
		off = 0;
		CHECK(cfs_msg_next(&m, &off, CFS_T_EVENT, &v, &len) == 1);
		CHECK_INT(cfs_event_decode(v, len, &ev), 0);
		CHECK(ev.seqnum == 5 && ev.envc == 4);
		cfs_buf_free(&b);
	}
	{
		size_t mark;

		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_BATCH, 1, 0);
		for (int i = 0; i < 3; i++) {
			mark = cfs_buf_sub_begin(&b);
			cfs_buf_hdr(&b, CFS_OP_CLASS_CREATE, 0, 0);
			cfs_buf_str(&b, CFS_T_CLASS, "x");
			cfs_buf_sub_end(&b, mark);
		}
		CHECK_INT(DEC(&b, &m), 0);
		CHECK_INT(m.nsubs, 3);
		cfs_buf_free(&b);
	}
}

/* build a message with @op and one raw field */
static void one_field(struct cfs_buf *b, uint16_t op, uint16_t tag, const void *v, size_t len)
{
	cfs_buf_init(b);
	cfs_buf_hdr(b, op, 9, 0);
	cfs_buf_bytes(b, tag, v, len);
}

TEST(decode_malformed)
{
	struct cfs_buf b;
	struct cfs_msg m;
	uint8_t raw[64];

	/* truncated anywhere: header, field header, field value */
	valid_add(&b);
	for (size_t cut = 0; cut < b.len; cut++) {
		int r = cfs_msg_decode(b.p, cut, &m);

		if (r != -EBADMSG) {
			CHECK_INT(r, -EBADMSG);
			break;
		}
	}
	/* bad magic, version, unknown operation, unknown flag */
	memcpy(raw, b.p, CFS_HDR_SIZE);
	raw[0] ^= 0xff;
	CHECK_INT(cfs_msg_decode(raw, CFS_HDR_SIZE, &m), -EPROTO);
	memcpy(raw, b.p, CFS_HDR_SIZE);
	raw[4] = 2;
	CHECK_INT(cfs_msg_decode(raw, CFS_HDR_SIZE, &m), -EPROTONOSUPPORT);
	memcpy(raw, b.p, CFS_HDR_SIZE);
	raw[6] = 200;
	CHECK_INT(cfs_msg_decode(raw, CFS_HDR_SIZE, &m), -EOPNOTSUPP);
	CHECK_INT(m.serial, 7);
	memcpy(raw, b.p, CFS_HDR_SIZE);
	raw[6] = 0;
	CHECK_INT(cfs_msg_decode(raw, CFS_HDR_SIZE, &m), -EOPNOTSUPP);
	memcpy(raw, b.p, CFS_HDR_SIZE);
	raw[12] = 0x80;
	CHECK_INT(cfs_msg_decode(raw, CFS_HDR_SIZE, &m), -EBADMSG);
	cfs_buf_free(&b);

	/* wrong types: a u32 of 3 bytes, a string without NUL, a NUL inside */
	one_field(&b, CFS_OP_TREE, CFS_T_FORMAT, "abc", 3);
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	one_field(&b, CFS_OP_CLASS_CREATE, CFS_T_CLASS, "abc", 3);
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	one_field(&b, CFS_OP_CLASS_CREATE, CFS_T_CLASS, "a\0c", 4);
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	/* bad names */
	static const char *const bad[] = { "", ".", "..", "a/b", "tab\there", "\x7f",
					   "hx\xff", "caf\xe9", "\xc0\xaf", "\xed\xa0\x80" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		one_field(&b, CFS_OP_CLASS_CREATE, CFS_T_CLASS, bad[i], strlen(bad[i]) + 1);
		CHECK_INT(DEC(&b, &m), -EINVAL);
		cfs_buf_free(&b);
	}
	{
		char longname[300];

		memset(longname, 'x', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		one_field(&b, CFS_OP_CLASS_CREATE, CFS_T_CLASS, longname, sizeof(longname));
		CHECK_INT(DEC(&b, &m), -EINVAL);
		cfs_buf_free(&b);
	}
	/*
	 * TRIGGER's variables: KEY of [A-Za-z0-9_], a VALUE without control
	 * bytes (a newline would forge a line in monitor text); the decoder
	 * refuses the rest before any handler runs
	 */
	{
		static const char *const bad_env[] = {
			"FOO=x\nACTION=remove", "FOO=a\rb", "FOO=\x1b[2J", "FOO=a\x7f", "FOO=",
			"=x", "FOO", "A-B=1", "A B=1", "\xc3\x89=1",
		};
		static const char *const good_env[] = { "LD_PRELOAD=/tmp/evil.so", "A=x=y z", "_9=1" };

		for (size_t i = 0; i < sizeof(bad_env) / sizeof(bad_env[0]); i++) {
			cfs_buf_init(&b);
			cfs_buf_hdr(&b, CFS_OP_TRIGGER, 1, 0);
			cfs_buf_str(&b, CFS_T_NAME, "sda");
			cfs_buf_u32(&b, CFS_T_ACTION, CLASSFS_ACTION_CHANGE);
			cfs_buf_str(&b, CFS_T_ENV, "OK=1");
			cfs_buf_str(&b, CFS_T_ENV, bad_env[i]);
			CHECK_INT(DEC(&b, &m), -EINVAL);
			cfs_buf_free(&b);
		}
		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_TRIGGER, 1, 0);
		cfs_buf_str(&b, CFS_T_NAME, "sda");
		cfs_buf_u32(&b, CFS_T_ACTION, CLASSFS_ACTION_CHANGE);
		for (size_t i = 0; i < sizeof(good_env) / sizeof(good_env[0]); i++)
			cfs_buf_str(&b, CFS_T_ENV, good_env[i]);
		CHECK_INT(DEC(&b, &m), 0);
		CHECK_INT(m.nenv, 3);
		cfs_buf_free(&b);
	}
	/* a field the operation does not take, a missing one, a duplicate */
	one_field(&b, CFS_OP_CLASS_CREATE, CFS_T_DEVT, &(uint64_t){ 1 }, 8);
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_RENAME, 1, 0);
	cfs_buf_str(&b, CFS_T_CLASS, "a");
	cfs_buf_str(&b, CFS_T_NAME, "b");
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_str(&b, CFS_T_NAME, "c");
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	/* ATTR_GET, DEVICE_REMOVE: CLASS and NAME, or SYSPATH alone; neither, or both, is refused */
	{
		static const struct {
			const char *cls, *name, *syspath;
			int want;
		} g[] = {
			{ "c", "n", NULL, 0 },
			{ NULL, "n", NULL, 0 },
			{ NULL, NULL, "/devices/virtual/c/n", 0 },
			{ NULL, NULL, NULL, -EBADMSG },
			{ NULL, "n", "/devices/virtual/c/n", -EBADMSG },
			{ "c", NULL, "/devices/virtual/c/n", -EBADMSG },
			{ NULL, NULL, "devices/virtual/c/n", -EINVAL },
		};

		for (size_t i = 0; i < 2 * sizeof(g) / sizeof(g[0]); i++) {
			size_t k = i % (sizeof(g) / sizeof(g[0]));
			bool get = i == k;

			cfs_buf_init(&b);
			cfs_buf_hdr(&b, get ? CFS_OP_ATTR_GET : CFS_OP_DEVICE_REMOVE, 1, 0);
			cfs_buf_str(&b, CFS_T_CLASS, g[k].cls);
			cfs_buf_str(&b, CFS_T_NAME, g[k].name);
			cfs_buf_str(&b, CFS_T_SYSPATH, g[k].syspath);
			if (get)
				cfs_buf_str(&b, CFS_T_ATTR_NAME, "uevent");
			CHECK_INT(DEC(&b, &m), g[k].want);
			cfs_buf_free(&b);
		}
	}
	/* unknown tag, non-zero reserved bytes */
	one_field(&b, CFS_OP_STATUS, 999, "", 0);
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_CLASS_CREATE, 1, 0);
	cfs_buf_str(&b, CFS_T_CLASS, "a");
	b.p[CFS_HDR_SIZE + 2] = 1;
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	/* a field length past the end */
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_CLASS_CREATE, 1, 0);
	cfs_buf_str(&b, CFS_T_CLASS, "a");
	b.p[CFS_HDR_SIZE + 4] = 0xff;
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	/* values: too long; attribute records: bad mode, stored value on a remote one */
	{
		static char big[CFS_VALUE_MAX + 1];

		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_ATTR_SET, 1, 0);
		cfs_buf_str(&b, CFS_T_NAME, "a");
		cfs_buf_str(&b, CFS_T_ATTR_NAME, "x");
		cfs_buf_bytes(&b, CFS_T_VALUE, big, sizeof(big));
		CHECK_INT(DEC(&b, &m), -E2BIG);
		cfs_buf_free(&b);
	}
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_DEVICE_ADD, 1, 0);
	cfs_buf_str(&b, CFS_T_NAME, "a");
	cfs_buf_attr(&b, 0100000, 0, "x", "", 0);
	CHECK_INT(DEC(&b, &m), -EINVAL);
	cfs_buf_free(&b);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_DEVICE_ADD, 1, 0);
	cfs_buf_str(&b, CFS_T_NAME, "a");
	cfs_buf_attr(&b, 0444, CFS_A_REMOTE, "x", "v", 1);
	CHECK_INT(DEC(&b, &m), -EBADMSG);
	cfs_buf_free(&b);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_DEVICE_ADD, 1, 0);
	cfs_buf_str(&b, CFS_T_NAME, "a");
	cfs_buf_attr(&b, 0444, 0, "../x", "v", 1);
	CHECK_INT(DEC(&b, &m), -EINVAL);
	cfs_buf_free(&b);
	/* a batch inside a batch, a non-publishing request inside a batch */
	{
		size_t outer, inner;

		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_BATCH, 1, 0);
		outer = cfs_buf_sub_begin(&b);
		cfs_buf_hdr(&b, CFS_OP_BATCH, 0, 0);
		inner = cfs_buf_sub_begin(&b);
		cfs_buf_hdr(&b, CFS_OP_STATUS, 0, 0);
		cfs_buf_sub_end(&b, inner);
		cfs_buf_sub_end(&b, outer);
		CHECK_INT(DEC(&b, &m), -EBADMSG);
		cfs_buf_free(&b);
		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_BATCH, 1, 0);
		outer = cfs_buf_sub_begin(&b);
		cfs_buf_hdr(&b, CFS_OP_SUBSCRIBE, 0, 0);
		cfs_buf_sub_end(&b, outer);
		CHECK_INT(DEC(&b, &m), -EBADMSG);
		cfs_buf_free(&b);
	}
}

/* random mutations of valid messages: the decoder answers, never crashes (run under ASan) */
TEST(decode_mutations)
{
	struct cfs_buf b;
	struct cfs_msg m;
	unsigned int seed = 12345, accepted = 0;
	uint8_t *copy;

	valid_add(&b);
	copy = malloc(b.len);
	for (int i = 0; i < 200000; i++) {
		size_t len = b.len;

		memcpy(copy, b.p, b.len);
		for (int k = 0; k < 1 + i % 4; k++) {
			seed = seed * 1103515245u + 12345u;
			copy[(seed >> 8) % b.len] = (uint8_t)(seed >> 20);
		}
		if (i % 3 == 0) {
			/* cut short, with a header that agrees: the fields must catch it */
			len = (seed >> 4) % (b.len + 1);
			if (len >= CFS_HDR_SIZE) {
				uint32_t l = (uint32_t)len;

				memcpy(copy + 16, &l, 4);
			}
		}
		if (cfs_msg_decode(copy, len, &m) == 0)
			accepted++;
	}
	CHECK(accepted > 0);	/* some mutations stay valid (values, modes) */
	free(copy);
	cfs_buf_free(&b);
}

/* ---- against a daemon ---- */

/*
 * The next final REPLY on @fd into @m (decoded in @buf), the MORE ones
 * before it skipped; false when none comes within 5 s or it is malformed
 */
static bool final_reply(int fd, uint8_t *buf, size_t size, struct cfs_msg *m)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&pfd, 1, 5000) != 1 || (n = recv(fd, buf, size, 0)) <= 0 ||
		    cfs_msg_decode(buf, (size_t)n, m) < 0)
			return false;
		if (m->op == CFS_OP_REPLY && !(m->flags & CFS_F_MORE))
			return true;
	}
}

static int raw_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* send @len bytes, return the reply's error (1 when no reply within 5 s) */
static int raw_call(int fd, const void *msg, size_t len, uint32_t *serial, char *text, size_t tsz)
{
	static uint8_t buf[1 << 17];
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	struct cfs_msg m;
	ssize_t n;

	if (send(fd, msg, len, MSG_NOSIGNAL) != (ssize_t)len)
		return 2;
	if (poll(&pfd, 1, 5000) != 1)
		return 1;
	n = recv(fd, buf, sizeof(buf), 0);
	if (n <= 0 || cfs_msg_decode(buf, (size_t)n, &m) < 0 || m.op != CFS_OP_REPLY)
		return 3;
	if (serial)
		*serial = m.serial;
	if (text)
		snprintf(text, tsz, "%s", m.message ? m.message : "");
	return m.error;
}

TEST(daemon_refuses_malformed)
{
	const char *const args[] = { "--max-message", "8192", NULL };
	struct daemon d;
	struct classfs_client *c;
	struct classfs_client_status st0, st1;
	struct cfs_buf b;
	uint8_t big[9000];
	char text[1100];
	uint32_t serial;
	int fd;

	CHECK_INT(start_daemon(&d, true, args), 0);
	c = classfs_client_connect(d.sock, 0);
	fd = raw_connect(d.sock);
	CHECK(c && fd >= 0);
	if (!c || fd < 0)
		goto out;
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "keep", .name = "k0",
		.attrs = &(struct classfs_client_attr){ .name = "v", .mode = 0644, .value = "1\n",
			.len = 2 }, .nattrs = 1 }), 0);
	CHECK_INT(classfs_client_status(c, &st0), 0);

	/* truncated header, bad magic, bad version */
	CHECK_INT(raw_call(fd, "CFS", 3, NULL, text, sizeof(text)), -EBADMSG);
	memset(big, 0, 64);
	CHECK_INT(raw_call(fd, big, CFS_HDR_SIZE, NULL, text, sizeof(text)), -EPROTO);
	CHECK(strstr(text, "magic") != NULL);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 77, 0);
	b.p[4] = 9;
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, &serial, text, sizeof(text)), -EPROTONOSUPPORT);
	CHECK_INT(serial, 77);
	/* unknown operation, a daemon-to-client operation */
	b.p[4] = 1;
	b.p[6] = 99;
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, &serial, text, sizeof(text)), -EOPNOTSUPP);
	CHECK_INT(serial, 77);
	b.p[6] = CFS_OP_EVENTS;
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text, sizeof(text)), -EBADMSG);
	b.p[6] = CFS_OP_GAP;
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text, sizeof(text)), -EBADMSG);
	cfs_buf_free(&b);
	/* oversized: refused whole, named in the message */
	memset(big, 'x', sizeof(big));
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 78, 0);
	memcpy(big, b.p, b.len);
	cfs_buf_free(&b);
	CHECK_INT(raw_call(fd, big, sizeof(big), &serial, text, sizeof(text)), -EMSGSIZE);
	CHECK_INT(serial, 78);
	CHECK(strstr(text, "8192") != NULL);
	/* wrong types and bad names in a request that would change the tree */
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_DEVICE_REMOVE, 79, 0);
	cfs_buf_bytes(&b, CFS_T_CLASS, "keep", 4);	/* no NUL */
	cfs_buf_str(&b, CFS_T_NAME, "k0");
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text, sizeof(text)), -EBADMSG);
	cfs_buf_free(&b);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_DEVICE_ADD, 80, 0);
	cfs_buf_str(&b, CFS_T_CLASS, "keep");
	cfs_buf_str(&b, CFS_T_NAME, "../../etc");
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text, sizeof(text)), -EINVAL);
	cfs_buf_free(&b);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_ATTR_SET, 81, 0);
	cfs_buf_str(&b, CFS_T_CLASS, "keep");
	cfs_buf_str(&b, CFS_T_NAME, "k0");
	cfs_buf_str(&b, CFS_T_ATTR_NAME, "v");
	cfs_buf_u32(&b, CFS_T_ACTION, 1);	/* not for ATTR_SET; VALUE missing */
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text, sizeof(text)), -EBADMSG);
	cfs_buf_free(&b);
	/* ATTR_SET's create flags: known ones only, binary and link only with create, not both */
	{
		static const struct { uint32_t flags; const char *v; size_t len; int err; } bad[] = {
			{ CFS_F_BINARY, "1", 1, -EINVAL },
			{ CFS_F_LINK, "t", 1, -EINVAL },
			{ CFS_F_CREATE | CFS_F_BINARY | CFS_F_LINK, "t", 1, -EINVAL },
			{ CFS_F_CREATE | CFS_F_LINK, "a\0b", 3, -EINVAL },
			{ CFS_F_CREATE | CFS_F_LINK, "", 0, -EINVAL },
			{ CFS_F_CREATE | 0x100u, "1", 1, -EBADMSG },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			cfs_buf_init(&b);
			cfs_buf_hdr(&b, CFS_OP_ATTR_SET, 90, bad[i].flags);
			cfs_buf_str(&b, CFS_T_CLASS, "keep");
			cfs_buf_str(&b, CFS_T_NAME, "k0");
			cfs_buf_str(&b, CFS_T_ATTR_NAME, "made");
			cfs_buf_bytes(&b, CFS_T_VALUE, bad[i].v, bad[i].len);
			CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text,
					   sizeof(text)), bad[i].err);
			cfs_buf_free(&b);
		}
		CHECK_INT(classfs_client_attr_get(c, "keep", "k0", "made", text, sizeof(text)),
			  -ENOENT);
	}
	/* a batch whose second request fails: the first stays, the reply says which */
	{
		size_t mark;

		cfs_buf_init(&b);
		cfs_buf_hdr(&b, CFS_OP_BATCH, 82, 0);
		mark = cfs_buf_sub_begin(&b);
		cfs_buf_hdr(&b, CFS_OP_DEVICE_ADD, 0, 0);
		cfs_buf_str(&b, CFS_T_CLASS, "keep");
		cfs_buf_str(&b, CFS_T_NAME, "k1");
		cfs_buf_sub_end(&b, mark);
		mark = cfs_buf_sub_begin(&b);
		cfs_buf_hdr(&b, CFS_OP_DEVICE_ADD, 0, 0);
		cfs_buf_str(&b, CFS_T_CLASS, "keep");
		cfs_buf_str(&b, CFS_T_NAME, "k0");
		cfs_buf_sub_end(&b, mark);
		CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text, sizeof(text)), -EEXIST);
		CHECK(strstr(text, "request 2") != NULL);
		cfs_buf_free(&b);
		CHECK_INT(classfs_client_device_remove(c, "keep", "k1"), 0);
	}
	/* trigger with an unknown action */
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_TRIGGER, 83, 0);
	cfs_buf_str(&b, CFS_T_CLASS, "keep");
	cfs_buf_str(&b, CFS_T_NAME, "k0");
	cfs_buf_u32(&b, CFS_T_ACTION, 1000);
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, NULL, text, sizeof(text)), -EINVAL);
	cfs_buf_free(&b);
	/* random garbage */
	{
		unsigned int seed = 99;

		for (int i = 0; i < 200; i++) {
			size_t len = 1 + (size_t)(i * 37 % 600);

			for (size_t k = 0; k < len; k++) {
				seed = seed * 1103515245u + 12345u;
				big[k] = (uint8_t)(seed >> 16);
			}
			if (i % 2) {	/* a valid header, garbage fields */
				cfs_buf_init(&b);
				cfs_buf_hdr(&b, (uint16_t)(1 + i % (CFS_OP_COUNT - 1)), 1, 0);
				memcpy(big, b.p, CFS_HDR_SIZE);
				cfs_buf_free(&b);
				if (len < CFS_HDR_SIZE)
					len = CFS_HDR_SIZE + 3;
			}
			if (big[6] == CFS_OP_SUBSCRIBE && i % 2)
				big[6] = CFS_OP_STATUS;	/* a subscription would turn the socket into an event stream */
			{
				int rr = raw_call(fd, big, len, NULL, NULL, 0);

				if (rr > 0)
					fprintf(stderr, "garbage %d (op %u, len %zu): %d\n", i, big[6], len, rr);
				CHECK(rr <= 0);
			}
		}
	}

	/* nothing changed (no event was sent), the connection and the daemon are fine */
	CHECK_INT(classfs_client_status(c, &st1), 0);
	CHECK(st1.seqnum == st0.seqnum + 2);	/* k1's ADD and REMOVE only */
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 84, 0);
	CHECK_INT(raw_call(fd, (cfs_buf_seal(&b), b.p), b.len, &serial, NULL, 0), 0);
	CHECK_INT(serial, 84);
	cfs_buf_free(&b);
	{
		char buf[8], path[256];

		CHECK_INT(classfs_client_attr_get(c, "keep", "k0", "v", buf, sizeof(buf)), 2);
		snprintf(path, sizeof(path), "%s/class/keep", d.mnt);
		CHECK(access(path, F_OK) == 0);
		snprintf(path, sizeof(path), "%s/class/keep/k1", d.mnt);
		CHECK(access(path, F_OK) < 0);
	}
	close(fd);
	classfs_client_disconnect(c);
out:
	CHECK_INT(stop_daemon(&d), 0);
}

/* the fuzz corpus (fuzz/corpus/protocol) starts from valid messages */
/* a name that is not UTF-8 is refused wherever a client gives one; the tree stays JSON */
TEST(daemon_refuses_names_not_utf8)
{
	struct classfs_client_attr a = { .name = "caf\xe9", .mode = 0644, .value = "1", .len = 1 };
	struct classfs_client_attr ok = { .name = "v", .mode = 0644, .value = "1", .len = 1 };
	struct daemon d;
	struct classfs_client *c;
	struct json_object *doc;
	char *json = NULL;
	size_t len = 0;
	FILE *f;

	CHECK_INT(start_daemon(&d, false, NULL), 0);
	c = classfs_client_connect(d.sock, 0);
	REQUIRE(c);
	CHECK_INT(classfs_client_class_create(c, "hx\xff", 0), -EINVAL);
	CHECK(strstr(classfs_client_error_message(c), "UTF-8") != NULL);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "u", .name = "d\xff" }), -EINVAL);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "u", .name = "d", .attrs = &a, .nattrs = 1 }), -EINVAL);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "u", .name = "caf\xc3\xa9", .attrs = &ok, .nattrs = 1 }), 0);
	CHECK_INT(classfs_client_attr_add(c, "u", "caf\xc3\xa9", "g/\xff", "1", 1, 0), -EINVAL);
	CHECK_INT(classfs_client_device_rename(c, "u", "caf\xc3\xa9", "n\xff"), -EINVAL);
	/* what was accepted prints as JSON a parser takes */
	f = open_memstream(&json, &len);
	REQUIRE(f);
	CHECK_INT(classfs_client_tree(c, CLASSFS_CLIENT_JSON, f), 0);
	fclose(f);
	doc = json_tokener_parse(json);
	CHECK(doc != NULL);
	CHECK(json && strstr(json, "caf\xc3\xa9") && !strstr(json, "hx"));
	json_object_put(doc);
	free(json);
	classfs_client_disconnect(c);
	CHECK_INT(stop_daemon(&d), 0);
}

TEST(corpus_seeds_valid)
{
	DIR *dir = opendir(CORPUS);
	struct dirent *e;
	int n = 0;

	CHECK(dir != NULL);
	while (dir && (e = readdir(dir))) {
		char path[512];
		uint8_t buf[4096];
		struct cfs_msg m;
		size_t len;
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", CORPUS, e->d_name);
		f = fopen(path, "rb");
		CHECK(f != NULL);
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		if (cfs_msg_decode(buf, len, &m) != 0) {
			fprintf(stderr, "  seed %s refused\n", e->d_name);
			CHECK(0);
		}
		n++;
	}
	if (dir)
		closedir(dir);
	CHECK(n >= 10);
}

#define NCONNS 300

/*
 * Connections cost the daemon no thread of their own: 300 subscribers
 * are served by its event loop and a bounded pool, and each still gets
 * every event.
 */
TEST(connections_hold_no_thread)
{
	static uint8_t buf[1 << 17];
	struct daemon d;
	struct classfs_client *c;
	int fds[NCONNS];
	struct cfs_buf b;
	long threads;
	int subscribed = 0, got = 0;

	CHECK_INT(start_daemon(&d, false, NULL), 0);
	c = classfs_client_connect(d.sock, 0);
	CHECK(c != NULL);
	cfs_buf_init(&b);
	for (int i = 0; i < NCONNS; i++) {
		fds[i] = raw_connect(d.sock);
		if (fds[i] < 0)
			continue;
		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_SUBSCRIBE, (uint32_t)i + 1, 0);
		cfs_buf_seal(&b);
		subscribed += raw_call(fds[i], b.p, b.len, NULL, NULL, 0) == 0;
	}
	cfs_buf_free(&b);
	CHECK_INT(subscribed, NCONNS);
	threads = proc_status(d.pid, "Threads");
	/* the loop, the call timer, the pool (CFSD_WORKERS_MAX, 32) and a few more */
	CHECK(threads > 0 && threads <= 40);
	if (threads > 40)
		fprintf(stderr, "  classfsd has %ld threads for %d connections\n", threads, NCONNS);
	if (c)
		CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
			.cls = "many", .name = "m0" }), 0);
	for (int i = 0; i < NCONNS; i++) {
		struct pollfd pfd = { .fd = fds[i], .events = POLLIN };
		struct cfs_msg m;
		ssize_t n;

		if (fds[i] < 0)
			continue;
		if (poll(&pfd, 1, 5000) == 1 && (n = recv(fds[i], buf, sizeof(buf), 0)) > 0 &&
		    cfs_msg_decode(buf, (size_t)n, &m) == 0 && m.op == CFS_OP_EVENTS)
			got++;
		close(fds[i]);
	}
	CHECK_INT(got, NCONNS);
	classfs_client_disconnect(c);
	CHECK_INT(stop_daemon(&d), 0);
}

/*
 * A client that sends requests and reads no reply stalls only itself:
 * the daemon stops reading it while its output waits, others are served
 * meanwhile, and it gets every reply, in order, when it reads.
 */
TEST(stalled_requester_alone)
{
	static uint8_t buf[1 << 17];
	struct daemon d;
	struct classfs_client *c;
	struct classfs_client_status st;
	struct cfs_buf b;
	uint32_t sent = 0, got = 0, disorder = 0;
	double t0;
	int fd;

	CHECK_INT(start_daemon(&d, false, NULL), 0);
	c = classfs_client_connect(d.sock, 0);
	fd = raw_connect(d.sock);
	CHECK(c && fd >= 0);
	if (!c || fd < 0)
		goto out;
	cfs_buf_init(&b);
	/* until the daemon stops reading it and its socket is full too */
	while (sent < 200000) {
		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_TREE, sent + 1, 0);
		cfs_buf_u32(&b, CFS_T_FORMAT, 0);
		cfs_buf_seal(&b);
		if (send(fd, b.p, b.len, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
			break;
		sent++;
	}
	cfs_buf_free(&b);
	CHECK(sent < 200000);
	/* the others go on */
	t0 = now_s();
	CHECK_INT(classfs_client_status(c, &st), 0);
	CHECK_INT(classfs_client_device_add(c, &(struct classfs_client_device){
		.cls = "alone", .name = "a0" }), 0);
	CHECK(now_s() - t0 < 2);
	/* every final reply, in order (each TREE also streams DATA replies first) */
	while (got < sent) {
		struct cfs_msg m;

		if (!final_reply(fd, buf, sizeof(buf), &m))
			break;
		disorder += m.serial != got + 1 || m.error != 0;
		got++;
	}
	CHECK_INT(got, sent);
	CHECK_INT(disorder, 0);
out:
	if (fd >= 0)
		close(fd);
	classfs_client_disconnect(c);
	CHECK_INT(stop_daemon(&d), 0);
}

/*
 * A request the daemon cannot copy for lack of memory is answered ENOMEM
 * in its turn, never dropped: with every 3rd copy failing
 * (CLASSFSD_TEST_FAIL_QUEUE, pool.c's fault seam), 9 requests sent at once
 * get 9 final replies, in order, the 3rd, 6th and 9th ENOMEM.
 */
TEST(queue_out_of_memory)
{
	static uint8_t buf[1 << 17];
	struct daemon d;
	struct cfs_buf b;
	uint32_t got = 0, disorder = 0, enomem = 0, wrong = 0;
	int fd, r;

	setenv("CLASSFSD_TEST_FAIL_QUEUE", "3", 1);
	r = start_daemon(&d, false, NULL);
	unsetenv("CLASSFSD_TEST_FAIL_QUEUE");
	CHECK_INT(r, 0);
	fd = raw_connect(d.sock);
	CHECK(fd >= 0);
	if (fd < 0)
		goto out;
	cfs_buf_init(&b);
	for (uint32_t i = 1; i <= 9; i++) {
		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_STATUS, i, 0);
		cfs_buf_seal(&b);
		CHECK(send(fd, b.p, b.len, MSG_NOSIGNAL) == (ssize_t)b.len);
	}
	cfs_buf_free(&b);
	while (got < 9) {
		struct cfs_msg m;

		if (!final_reply(fd, buf, sizeof(buf), &m))
			break;
		got++;
		disorder += m.serial != got;
		enomem += m.error == -ENOMEM;
		wrong += m.error != (m.serial % 3 == 0 ? -ENOMEM : 0);
	}
	CHECK_INT(got, 9);
	CHECK_INT(disorder, 0);
	CHECK_INT(enomem, 3);
	CHECK_INT(wrong, 0);
	/* the connection goes on */
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 10, 0);
	cfs_buf_seal(&b);
	CHECK_INT(raw_call(fd, b.p, b.len, NULL, NULL, 0), 0);
	cfs_buf_free(&b);
	close(fd);
out:
	CHECK_INT(stop_daemon(&d), 0);
}

/* the daemon's CPU time so far, in clock ticks */
static long proc_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	/* after the name: state, then fields 4..13, then utime and stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

#define NPENDING 60

/*
 * Out of descriptors, the daemon leaves new connections in the backlog
 * without spinning on them, and takes them once connections end.
 */
TEST(out_of_descriptors)
{
	struct rlimit rl = { 40, 40 };
	struct daemon d;
	struct cfs_buf b;
	int fds[NPENDING], answered = 0;
	long t0, t1;

	CHECK_INT(start_daemon(&d, false, NULL), 0);
	CHECK_INT(prlimit(d.pid, RLIMIT_NOFILE, &rl, NULL), 0);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_STATUS, 1, 0);
	cfs_buf_seal(&b);
	for (int i = 0; i < NPENDING; i++) {
		fds[i] = raw_connect(d.sock);
		CHECK(fds[i] >= 0);
		if (fds[i] >= 0 && send(fds[i], b.p, b.len, MSG_NOSIGNAL) != (ssize_t)b.len)
			CHECK(0);
	}
	cfs_buf_free(&b);
	usleep(200000);
	t0 = proc_cpu_ticks(d.pid);
	usleep(1000000);
	t1 = proc_cpu_ticks(d.pid);
	CHECK(t0 >= 0 && t1 - t0 < sysconf(_SC_CLK_TCK) / 5);
	/* the first half goes: the rest are served */
	for (int i = 0; i < NPENDING / 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	for (int i = NPENDING / 2; i < NPENDING; i++) {
		struct pollfd pfd = { .fd = fds[i], .events = POLLIN };
		uint8_t buf[4096];
		struct cfs_msg m;
		ssize_t n;

		if (fds[i] < 0)
			continue;
		if (poll(&pfd, 1, 5000) == 1 && (n = recv(fds[i], buf, sizeof(buf), 0)) > 0 &&
		    cfs_msg_decode(buf, (size_t)n, &m) == 0 && m.op == CFS_OP_REPLY && m.error == 0)
			answered++;
		close(fds[i]);
	}
	CHECK_INT(answered, NPENDING / 2);
	CHECK_INT(stop_daemon(&d), 0);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * protocol.c - encoding and decoding of control messages (docs/protocol.md).
 *
 * The decoder checks everything a handler relies on (types, sizes, names,
 * which fields an operation needs and allows), so a handler never sees a
 * malformed request and a fuzzer can drive cfs_msg_decode() alone.
 * Integers are in host byte order: the socket is local.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"
#include "util.h"

enum ftype {
	FT_NONE, FT_I32, FT_U32, FT_U64, FT_STR, FT_NAME, FT_PATH, FT_SYSPATH, FT_ENV,
	FT_BYTES, FT_VALUE, FT_ATTR, FT_EVENT, FT_SUB,
};

static const uint8_t tag_type[CFS_T_COUNT_TAGS] = {
	[CFS_T_ERROR] = FT_I32,		[CFS_T_MESSAGE] = FT_STR,
	[CFS_T_CLASS] = FT_NAME,	[CFS_T_NAME] = FT_NAME,
	[CFS_T_PARENT] = FT_NAME,	[CFS_T_DEVT] = FT_U64,
	[CFS_T_PHYS] = FT_NAME,		[CFS_T_PHYS_CLASS] = FT_NAME,
	[CFS_T_BUS] = FT_NAME,		[CFS_T_DEVTYPE] = FT_NAME,
	[CFS_T_ATTR] = FT_ATTR,		[CFS_T_ATTR_NAME] = FT_PATH,
	[CFS_T_VALUE] = FT_VALUE,	[CFS_T_NEW_NAME] = FT_NAME,
	[CFS_T_ACTION] = FT_U32,	[CFS_T_ENV] = FT_ENV,
	[CFS_T_SEQNUM] = FT_U64,	[CFS_T_SEQNUM_LAST] = FT_U64,
	[CFS_T_FORMAT] = FT_U32,	[CFS_T_DATA] = FT_BYTES,
	[CFS_T_SYSPATH] = FT_SYSPATH,	[CFS_T_LAYOUT] = FT_U32,
	[CFS_T_MOUNT] = FT_STR,		[CFS_T_VERSION] = FT_U32,
	[CFS_T_EVENT] = FT_EVENT,	[CFS_T_CALL_ID] = FT_U64,
	[CFS_T_CALL_KIND] = FT_U32,	[CFS_T_SUB] = FT_SUB,
	[CFS_T_COUNT] = FT_U64,		[CFS_T_FILENAME] = FT_STR,
};

#define B(t) (UINT64_C(1) << (t))
#define REPEATED (B(CFS_T_ATTR) | B(CFS_T_ENV) | B(CFS_T_EVENT) | B(CFS_T_SUB))

struct schema {
	uint64_t required;
	uint64_t allowed;	/* besides required */
	uint32_t flags;		/* header flags it may carry */
};

static const struct schema schemas[CFS_OP_COUNT] = {
	[CFS_OP_REPLY] = { 0, B(CFS_T_ERROR) | B(CFS_T_MESSAGE) | B(CFS_T_VALUE) | B(CFS_T_DATA) |
				      B(CFS_T_EVENT) | B(CFS_T_COUNT) | B(CFS_T_VERSION) |
				      B(CFS_T_LAYOUT) | B(CFS_T_SEQNUM) | B(CFS_T_SEQNUM_LAST) |
				      B(CFS_T_MOUNT), CFS_F_MORE },
	[CFS_OP_STATUS] = { 0, 0, 0 },
	[CFS_OP_CLASS_CREATE] = { B(CFS_T_CLASS), 0, CFS_F_BIND },
	[CFS_OP_CLASS_REMOVE] = { B(CFS_T_CLASS), 0, 0 },
	[CFS_OP_DEVICE_ADD] = { B(CFS_T_NAME), B(CFS_T_CLASS) | B(CFS_T_PARENT) | B(CFS_T_DEVT) |
					   B(CFS_T_PHYS) | B(CFS_T_PHYS_CLASS) | B(CFS_T_BUS) |
					   B(CFS_T_DEVTYPE) | B(CFS_T_ATTR), CFS_F_BIND | CFS_F_OPEN },
	[CFS_OP_DEVICE_REMOVE] = { 0, B(CFS_T_CLASS) | B(CFS_T_NAME) | B(CFS_T_SYSPATH), 0 },
	[CFS_OP_RENAME] = { B(CFS_T_CLASS) | B(CFS_T_NAME) | B(CFS_T_NEW_NAME), 0, 0 },
	[CFS_OP_ATTR_GET] = { B(CFS_T_ATTR_NAME), B(CFS_T_CLASS) | B(CFS_T_NAME) | B(CFS_T_SYSPATH), 0 },
	[CFS_OP_ATTR_SET] = { B(CFS_T_NAME) | B(CFS_T_ATTR_NAME) | B(CFS_T_VALUE), B(CFS_T_CLASS),
			      CFS_F_CREATE | CFS_F_BINARY | CFS_F_LINK },
	[CFS_OP_TRIGGER] = { B(CFS_T_NAME) | B(CFS_T_ACTION), B(CFS_T_CLASS) | B(CFS_T_ENV), 0 },
	[CFS_OP_SUBSCRIBE] = { 0, B(CFS_T_SEQNUM), 0 },
	[CFS_OP_REPLAY] = { B(CFS_T_SEQNUM) | B(CFS_T_SEQNUM_LAST), 0, 0 },
	[CFS_OP_LOAD] = { B(CFS_T_DATA), B(CFS_T_FILENAME), CFS_F_MORE },
	[CFS_OP_SAVE] = { 0, B(CFS_T_SYSPATH), 0 },
	[CFS_OP_TREE] = { B(CFS_T_FORMAT), 0, 0 },
	[CFS_OP_INFO] = { B(CFS_T_NAME) | B(CFS_T_FORMAT), B(CFS_T_CLASS), 0 },
	[CFS_OP_BATCH] = { B(CFS_T_SUB), 0, 0 },
	[CFS_OP_EVENTS] = { B(CFS_T_EVENT), 0, 0 },
	[CFS_OP_GAP] = { B(CFS_T_SEQNUM) | B(CFS_T_SEQNUM_LAST), 0, 0 },
	[CFS_OP_CALL] = { B(CFS_T_CALL_ID) | B(CFS_T_CALL_KIND) | B(CFS_T_NAME) | B(CFS_T_ATTR_NAME),
			  B(CFS_T_CLASS) | B(CFS_T_VALUE), 0 },
	[CFS_OP_CALL_REPLY] = { B(CFS_T_CALL_ID) | B(CFS_T_ERROR), B(CFS_T_VALUE), 0 },
	[CFS_OP_RESET] = { 0, 0, 0 },
};

/* what a BATCH may hold: the publishing operations */
#define BATCHABLE (B(CFS_OP_CLASS_CREATE) | B(CFS_OP_DEVICE_ADD) | B(CFS_OP_DEVICE_REMOVE) | \
		   B(CFS_OP_ATTR_SET) | B(CFS_OP_TRIGGER) | B(CFS_OP_CLASS_REMOVE) |          \
		   B(CFS_OP_RENAME))

static const char *const op_names[CFS_OP_COUNT] = {
	[CFS_OP_REPLY] = "REPLY",		[CFS_OP_STATUS] = "STATUS",
	[CFS_OP_CLASS_CREATE] = "CLASS_CREATE",	[CFS_OP_CLASS_REMOVE] = "CLASS_REMOVE",
	[CFS_OP_DEVICE_ADD] = "DEVICE_ADD",	[CFS_OP_DEVICE_REMOVE] = "DEVICE_REMOVE",
	[CFS_OP_RENAME] = "RENAME",		[CFS_OP_ATTR_GET] = "ATTR_GET",
	[CFS_OP_ATTR_SET] = "ATTR_SET",		[CFS_OP_TRIGGER] = "TRIGGER",
	[CFS_OP_SUBSCRIBE] = "SUBSCRIBE",	[CFS_OP_REPLAY] = "REPLAY",
	[CFS_OP_LOAD] = "LOAD",			[CFS_OP_SAVE] = "SAVE",
	[CFS_OP_TREE] = "TREE",			[CFS_OP_INFO] = "INFO",
	[CFS_OP_BATCH] = "BATCH",		[CFS_OP_EVENTS] = "EVENTS",
	[CFS_OP_GAP] = "GAP",			[CFS_OP_CALL] = "CALL",
	[CFS_OP_CALL_REPLY] = "CALL_REPLY",	[CFS_OP_RESET] = "RESET",
};

const char *cfs_op_name(unsigned int op)
{
	return op < CFS_OP_COUNT && op_names[op] ? op_names[op] : "?";
}

static uint16_t rd16(const uint8_t *p)
{
	uint16_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* a NUL-terminated string filling exactly @len bytes, no NUL inside */
static int check_str(const uint8_t *v, size_t len)
{
	if (len == 0 || v[len - 1] != '\0' || memchr(v, '\0', len - 1))
		return -EBADMSG;
	return 0;
}

/* classfs_name_valid()'s rule, kept here so the decoder depends on nothing */
static int check_name(const char *s, size_t n)
{
	bool high = false;

	if (n == 0 || n > NAME_MAX || !strcmp(s, ".") || !strcmp(s, ".."))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '/' || c < 0x20 || c == 0x7f)
			return -EINVAL;
		high |= c >= 0x80;
	}
	return high && !cfs_utf8_valid(s, n) ? -EINVAL : 0;
}

/* "name" or "dir/.../name": each component a valid name */
static int check_path(const char *s, size_t n)
{
	size_t start = 0;

	if (n == 0 || n >= CFS_PATH_MAX)
		return -EINVAL;
	for (size_t i = 0; i <= n; i++) {
		if (i == n || s[i] == '/') {
			char comp[NAME_MAX + 1];
			size_t clen = i - start;

			if (clen == 0 || clen > NAME_MAX)
				return -EINVAL;
			memcpy(comp, s + start, clen);
			comp[clen] = '\0';
			if (check_name(comp, clen) < 0)
				return -EINVAL;
			start = i + 1;
		}
	}
	return 0;
}

/* a variable of an event the daemon sends: KEY=VALUE, KEY without blanks */
static int check_env(const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);

	if (!eq || eq == s || n >= CFS_ENV_MAX)
		return -EINVAL;
	for (const char *k = s; k < eq; k++)
		if (*k <= ' ' || *k == 0x7f)
			return -EINVAL;
	return 0;
}

/*
 * A variable a client adds to TRIGGER (classfs_synth_arg_valid()'s rule,
 * kept here so the decoder depends on nothing): KEY of [A-Za-z0-9_], a
 * VALUE of one or more bytes without control bytes.  It is sent as
 * SYNTH_ARG_KEY=VALUE; a newline in it would make a line of its own in
 * monitor text.
 */
static int check_arg(const char *s, size_t n)
{
	const char *eq = memchr(s, '=', n);

	if (!eq || eq == s || eq + 1 == s + n || n >= CFS_ENV_MAX)
		return -EINVAL;
	for (const char *k = s; k < eq; k++)
		if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') ||
		      (*k >= '0' && *k <= '9') || *k == '_'))
			return -EINVAL;
	for (const char *v = eq + 1; v < s + n; v++)
		if ((unsigned char)*v < 0x20 || *v == 0x7f)
			return -EINVAL;
	return 0;
}

int cfs_attr_decode(const uint8_t *v, size_t len, struct cfs_attr *a)
{
	const uint8_t *nul;
	int r;

	if (len < 9)
		return -EBADMSG;
	a->mode = rd32(v);
	a->flags = rd32(v + 4);
	nul = memchr(v + 8, '\0', len - 8);
	if (!nul)
		return -EBADMSG;
	a->name = (const char *)(v + 8);
	a->value = nul + 1;
	a->len = len - (size_t)(a->value - v);
	if (a->mode & ~07777u || a->flags & ~CFS_A_KNOWN)
		return -EINVAL;
	r = check_path(a->name, (size_t)(nul - (v + 8)));
	if (r < 0)
		return r;
	if (a->len > CFS_VALUE_MAX)
		return -E2BIG;
	if ((a->flags & CFS_A_REMOTE) && a->len)
		return -EBADMSG;	/* a remote attribute has no stored value */
	if ((a->flags & CFS_A_STORE) && !(a->flags & CFS_A_REMOTE))
		return -EINVAL;
	return 0;
}

int cfs_event_decode(const uint8_t *v, size_t len, struct cfs_event *ev)
{
	const uint8_t *p, *end = v + len;

	if (len < 16)
		return -EBADMSG;
	ev->seqnum = rd64(v);
	ev->action = rd32(v + 8);
	ev->envc = rd32(v + 12);
	ev->env = (const char *)(v + 16);
	ev->env_len = len - 16;
	if (ev->envc == 0 || ev->envc > CFS_EVENT_VARS_MAX)
		return -EBADMSG;
	p = v + 16;
	for (uint32_t i = 0; i < ev->envc; i++) {
		const uint8_t *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul)
			return -EBADMSG;
		if (check_env((const char *)p, (size_t)(nul - p)) < 0)
			return -EINVAL;
		p = nul + 1;
	}
	return p == end ? 0 : -EBADMSG;
}

static int cfs_msg_decode_depth(const void *buf, size_t len, struct cfs_msg *m, int depth);

static int check_field(uint16_t tag, const uint8_t *v, size_t len, int depth)
{
	struct cfs_attr a;
	struct cfs_event ev;
	struct cfs_msg sub;
	int r;

	switch (tag_type[tag]) {
	case FT_I32:
	case FT_U32:
		return len == 4 ? 0 : -EBADMSG;
	case FT_U64:
		return len == 8 ? 0 : -EBADMSG;
	case FT_STR:
		return check_str(v, len);
	case FT_NAME:
		r = check_str(v, len);
		return r < 0 ? r : check_name((const char *)v, len - 1);
	case FT_PATH:
		r = check_str(v, len);
		return r < 0 ? r : check_path((const char *)v, len - 1);
	case FT_SYSPATH:
		r = check_str(v, len);
		if (r < 0)
			return r;
		return v[0] == '/' && len > 2 && check_path((const char *)v + 1, len - 2) == 0
			       ? 0 : -EINVAL;
	case FT_ENV:
		r = check_str(v, len);
		return r < 0 ? r : check_arg((const char *)v, len - 1);
	case FT_BYTES:
		return 0;
	case FT_VALUE:
		return len > CFS_VALUE_MAX ? -E2BIG : 0;
	case FT_ATTR:
		return cfs_attr_decode(v, len, &a);
	case FT_EVENT:
		return cfs_event_decode(v, len, &ev);
	case FT_SUB:
		if (depth > 0)
			return -EBADMSG;	/* no BATCH inside a BATCH */
		r = cfs_msg_decode_depth(v, len, &sub, depth + 1);
		if (r < 0)
			return r;
		return (BATCHABLE >> sub.op) & 1u ? 0 : -EBADMSG;
	default:
		return -EBADMSG;
	}
}

static void store_field(struct cfs_msg *m, uint16_t tag, const uint8_t *v, size_t len)
{
	const char *s = (const char *)v;

	switch (tag) {
	case CFS_T_ERROR: m->error = (int32_t)rd32(v); break;
	case CFS_T_MESSAGE: m->message = s; break;
	case CFS_T_CLASS: m->cls = s; break;
	case CFS_T_NAME: m->name = s; break;
	case CFS_T_PARENT: m->parent = s; break;
	case CFS_T_DEVT: m->devt = rd64(v); break;
	case CFS_T_PHYS: m->phys = s; break;
	case CFS_T_PHYS_CLASS: m->phys_class = s; break;
	case CFS_T_BUS: m->bus = s; break;
	case CFS_T_DEVTYPE: m->devtype = s; break;
	case CFS_T_ATTR: m->nattrs++; break;
	case CFS_T_ATTR_NAME: m->attr_name = s; break;
	case CFS_T_VALUE: m->value = v; m->value_len = len; break;
	case CFS_T_NEW_NAME: m->new_name = s; break;
	case CFS_T_ACTION: m->action = rd32(v); break;
	case CFS_T_ENV: m->nenv++; break;
	case CFS_T_SEQNUM: m->seqnum = rd64(v); break;
	case CFS_T_SEQNUM_LAST: m->seqnum_last = rd64(v); break;
	case CFS_T_FORMAT: m->format = rd32(v); break;
	case CFS_T_DATA: m->data = v; m->data_len = len; break;
	case CFS_T_SYSPATH: m->syspath = s; break;
	case CFS_T_LAYOUT: m->layout = rd32(v); break;
	case CFS_T_MOUNT: m->mount = s; break;
	case CFS_T_VERSION: m->proto_version = rd32(v); break;
	case CFS_T_EVENT: m->nevents++; break;
	case CFS_T_CALL_ID: m->call_id = rd64(v); break;
	case CFS_T_CALL_KIND: m->call_kind = rd32(v); break;
	case CFS_T_SUB: m->nsubs++; break;
	case CFS_T_COUNT: m->count = rd64(v); break;
	case CFS_T_FILENAME: m->filename = s; break;
	}
}

static int cfs_msg_decode_depth(const void *buf, size_t len, struct cfs_msg *m, int depth)
{
	const uint8_t *p = buf;
	const struct schema *sc;
	size_t off;
	int r;

	*m = (struct cfs_msg){ 0 };
	if (!buf || len < CFS_HDR_SIZE)
		return -EBADMSG;
	if (rd32(p) != CFS_PROTO_MAGIC)
		return -EPROTO;
	m->version = rd16(p + 4);
	m->op = rd16(p + 6);
	m->serial = rd32(p + 8);
	m->flags = rd32(p + 12);
	if (m->version != CFS_PROTO_VERSION)
		return -EPROTONOSUPPORT;
	if (m->op == 0 || m->op >= CFS_OP_COUNT)
		return -EOPNOTSUPP;
	/* the length in the header makes a message cut at a field boundary detectable */
	if (rd32(p + 16) != len)
		return -EBADMSG;
	sc = &schemas[m->op];
	if (m->flags & ~sc->flags)
		return -EBADMSG;
	m->body = p + CFS_HDR_SIZE;
	m->body_len = len - CFS_HDR_SIZE;
	for (off = CFS_HDR_SIZE; off < len;) {
		uint16_t tag;
		uint32_t flen;

		if (len - off < CFS_FIELD_HDR_SIZE)
			return -EBADMSG;
		tag = rd16(p + off);
		flen = rd32(p + off + 4);
		if (rd16(p + off + 2) != 0)
			return -EBADMSG;
		off += CFS_FIELD_HDR_SIZE;
		if (flen > len - off)
			return -EBADMSG;
		if (tag == 0 || tag >= CFS_T_COUNT_TAGS)
			return -EBADMSG;
		if (!((sc->required | sc->allowed) >> tag & 1u))
			return -EBADMSG;
		if (CFS_HAS(m, tag) && !(REPEATED >> tag & 1u))
			return -EBADMSG;
		r = check_field(tag, p + off, flen, depth);
		if (r < 0)
			return r;
		m->present |= B(tag);
		store_field(m, tag, p + off, flen);
		off += flen;
	}
	if ((m->present & sc->required) != sc->required)
		return -EBADMSG;
	/* ATTR_GET and DEVICE_REMOVE name their device by CLASS and NAME, or by SYSPATH */
	if ((m->op == CFS_OP_ATTR_GET || m->op == CFS_OP_DEVICE_REMOVE) &&
	    (CFS_HAS(m, CFS_T_NAME) == CFS_HAS(m, CFS_T_SYSPATH) ||
	     (CFS_HAS(m, CFS_T_CLASS) && !CFS_HAS(m, CFS_T_NAME))))
		return -EBADMSG;
	return 0;
}

int cfs_msg_decode(const void *buf, size_t len, struct cfs_msg *m)
{
	return cfs_msg_decode_depth(buf, len, m, 0);
}

int cfs_msg_next(const struct cfs_msg *m, size_t *off, uint16_t tag, const uint8_t **val,
		 size_t *len)
{
	while (*off + CFS_FIELD_HDR_SIZE <= m->body_len) {
		const uint8_t *f = m->body + *off;
		uint32_t flen = rd32(f + 4);

		*off += CFS_FIELD_HDR_SIZE + flen;
		if (rd16(f) == tag) {
			*val = f + CFS_FIELD_HDR_SIZE;
			*len = flen;
			return 1;
		}
	}
	return 0;
}

const char *cfs_msg_error_text(int err)
{
	switch (err) {
	case -EPROTO: return "not a classfs control message (bad magic)";
	case -EPROTONOSUPPORT: return "unsupported protocol version";
	case -EOPNOTSUPP: return "unknown operation";
	case -EBADMSG: return "malformed message (truncated, wrong field type, or missing, unexpected or duplicate field)";
	case -EINVAL: return "invalid name, path, mode or variable in message (a name is 1-255 bytes of UTF-8 without '/' or control characters, not . or ..)";
	case -E2BIG: return "value longer than 4096 bytes";
	case -EMSGSIZE: return "message larger than the size limit";
	default: return "bad message";
	}
}

/* ---- encoding ---- */

void cfs_buf_init(struct cfs_buf *b)
{
	*b = (struct cfs_buf){ 0 };
}

void cfs_buf_free(struct cfs_buf *b)
{
	free(b->p);
	*b = (struct cfs_buf){ 0 };
}

static uint8_t *grow(struct cfs_buf *b, size_t n)
{
	if (b->err)
		return NULL;
	if (n > SIZE_MAX / 2 - b->len) {
		b->err = -ENOMEM;
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->err = -ENOMEM;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	b->len += n;
	return b->p + b->len - n;
}

void cfs_buf_raw(struct cfs_buf *b, const void *v, size_t len)
{
	uint8_t *p = grow(b, len);

	if (p && len)
		memcpy(p, v, len);
}

void cfs_buf_truncate(struct cfs_buf *b, size_t len)
{
	if (len < b->len)
		b->len = len;
}

void cfs_buf_hdr(struct cfs_buf *b, uint16_t op, uint32_t serial, uint32_t flags)
{
	uint32_t magic = CFS_PROTO_MAGIC, zero = 0;
	uint16_t version = CFS_PROTO_VERSION;

	cfs_buf_raw(b, &magic, 4);
	cfs_buf_raw(b, &version, 2);
	cfs_buf_raw(b, &op, 2);
	cfs_buf_raw(b, &serial, 4);
	cfs_buf_raw(b, &flags, 4);
	cfs_buf_raw(b, &zero, 4);	/* length: cfs_buf_seal() or cfs_buf_sub_end() */
}

void cfs_buf_seal(struct cfs_buf *b)
{
	uint32_t l = (uint32_t)b->len;

	if (!b->err && b->len >= CFS_HDR_SIZE)
		memcpy(b->p + 16, &l, 4);
}

static void field_hdr(struct cfs_buf *b, uint16_t tag, size_t len)
{
	uint16_t zero = 0;
	uint32_t l = (uint32_t)len;

	if (len > UINT32_MAX) {
		if (!b->err)
			b->err = -EMSGSIZE;
		return;
	}
	cfs_buf_raw(b, &tag, 2);
	cfs_buf_raw(b, &zero, 2);
	cfs_buf_raw(b, &l, 4);
}

void cfs_buf_bytes(struct cfs_buf *b, uint16_t tag, const void *v, size_t len)
{
	field_hdr(b, tag, len);
	cfs_buf_raw(b, v, len);
}

void cfs_buf_str(struct cfs_buf *b, uint16_t tag, const char *s)
{
	if (s)
		cfs_buf_bytes(b, tag, s, strlen(s) + 1);
}

void cfs_buf_u32(struct cfs_buf *b, uint16_t tag, uint32_t v)
{
	cfs_buf_bytes(b, tag, &v, 4);
}

void cfs_buf_i32(struct cfs_buf *b, uint16_t tag, int32_t v)
{
	cfs_buf_bytes(b, tag, &v, 4);
}

void cfs_buf_u64(struct cfs_buf *b, uint16_t tag, uint64_t v)
{
	cfs_buf_bytes(b, tag, &v, 8);
}

void cfs_buf_attr(struct cfs_buf *b, uint32_t mode, uint32_t flags, const char *name,
		  const void *value, size_t len)
{
	size_t nlen = strlen(name) + 1;

	field_hdr(b, CFS_T_ATTR, 8 + nlen + len);
	cfs_buf_raw(b, &mode, 4);
	cfs_buf_raw(b, &flags, 4);
	cfs_buf_raw(b, name, nlen);
	cfs_buf_raw(b, value, len);
}

void cfs_buf_event(struct cfs_buf *b, uint64_t seqnum, uint32_t action, int envc,
		   const char *const *envp)
{
	size_t total = 16;
	uint32_t n = (uint32_t)envc;

	for (int i = 0; i < envc; i++)
		total += strlen(envp[i]) + 1;
	field_hdr(b, CFS_T_EVENT, total);
	cfs_buf_raw(b, &seqnum, 8);
	cfs_buf_raw(b, &action, 4);
	cfs_buf_raw(b, &n, 4);
	for (int i = 0; i < envc; i++)
		cfs_buf_raw(b, envp[i], strlen(envp[i]) + 1);
}

size_t cfs_buf_sub_begin(struct cfs_buf *b)
{
	size_t mark = b->len;

	field_hdr(b, CFS_T_SUB, 0);
	return mark;
}

void cfs_buf_sub_end(struct cfs_buf *b, size_t mark)
{
	uint32_t l;

	if (b->err)
		return;
	l = (uint32_t)(b->len - mark - CFS_FIELD_HDR_SIZE);
	memcpy(b->p + mark + 4, &l, 4);
	if (l >= CFS_HDR_SIZE)
		memcpy(b->p + mark + CFS_FIELD_HDR_SIZE + 16, &l, 4);	/* the nested header's length */
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ioctl-tree.c - umockdev's ioctl tree format: the requests it knows,
 * reading a tree from its text (every fault a "FILE:LINE: reason"), and
 * a recorder's side, building a tree call by call and writing it as
 * umockdev-record does, so that umockdev-run reads our recordings and we
 * read its.
 *
 * Written from umockdev's format and behaviour (src/ioctl_tree.c) as
 * documentation; stricter where umockdev reads a bad line silently (it
 * stops at the first line it cannot parse, keeping what came before), so
 * a typo in a hand-edited recording is an error here, not a shorter
 * recording.
 */
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/hidraw.h>
#include <linux/input.h>
#include <linux/ioctl.h>
#include <linux/usbdevice_fs.h>

#include "ioctl-tree.h"
#include "util.h"

#define NOSTATE(req, e) { req, 0, IK_NOSTATE, e, #req }
#define SIMPLE(req) { req, 0, IK_SIMPLE, 0, #req }
/* a request whose index or length the file gives: "EVIOCGBIT(3) 8 ..." */
#define INDEXED(req, range, name) { req, range, IK_SIMPLE, 0, name }

/* umockdev's table, in its order (a number two entries share goes to the first) */
static const struct ioctl_type ioctl_types[] = {
	SIMPLE(USBDEVFS_CONNECTINFO),
	{ USBDEVFS_SUBMITURB, 0, IK_SUBMIT, 0, "USBDEVFS_SUBMITURB" },
	{ USBDEVFS_REAPURB, 0, IK_URB, 0, "USBDEVFS_REAPURB" },
	{ USBDEVFS_REAPURBNDELAY, 0, IK_URB, 0, "USBDEVFS_REAPURBNDELAY" },
	SIMPLE(USBDEVFS_GET_CAPABILITIES),
	/* what a device's state does not change: umockdev answers them itself */
	NOSTATE(USBDEVFS_CLAIMINTERFACE, 0),
	NOSTATE(USBDEVFS_RELEASEINTERFACE, 0),
	NOSTATE(USBDEVFS_CLEAR_HALT, 0),
	NOSTATE(USBDEVFS_RESET, 0),
	NOSTATE(USBDEVFS_RESETEP, 0),
	NOSTATE(USBDEVFS_GETDRIVER, ENODATA),
	NOSTATE(USBDEVFS_IOCTL, ENOTTY),
	NOSTATE(EVIOCGRAB, 0),
	SIMPLE(EVIOCGVERSION),
	SIMPLE(EVIOCGID),
	SIMPLE(EVIOCGREP),
	SIMPLE(EVIOCGKEYCODE),
	SIMPLE(EVIOCGKEYCODE_V2),
	SIMPLE(EVIOCGEFFECTS),
	INDEXED(EVIOCGABS(0), ABS_MAX, "EVIOCGABS"),
	/* 32: umockdev's length for these; a line's data gives the real one */
	INDEXED(EVIOCGBIT(0, 32), EV_MAX, "EVIOCGBIT"),
	INDEXED(EVIOCGNAME(32), 0, "EVIOCGNAME"),
	INDEXED(EVIOCGPHYS(32), 0, "EVIOCGPHYS"),
	INDEXED(EVIOCGUNIQ(32), 0, "EVIOCGUNIQ"),
	INDEXED(EVIOCGPROP(32), 0, "EVIOCGPROP"),
	INDEXED(EVIOCGKEY(32), 0, "EVIOCGKEY"),
	INDEXED(EVIOCGLED(32), 0, "EVIOCGLED"),
	INDEXED(EVIOCGSND(32), 0, "EVIOCGSND"),
	INDEXED(EVIOCGSW(32), 0, "EVIOCGSW"),
	INDEXED(EVIOCGMTSLOTS(32), 0, "EVIOCGMTSLOTS"),
	SIMPLE(HIDIOCGRDESCSIZE),
	SIMPLE(HIDIOCGRDESC),
	SIMPLE(HIDIOCGRAWINFO),
	INDEXED(HIDIOCGRAWNAME(32), 0, "HIDIOCGRAWNAME"),
	INDEXED(HIDIOCGRAWPHYS(32), 0, "HIDIOCGRAWPHYS"),
	INDEXED(HIDIOCSFEATURE(32), 0, "HIDIOCSFEATURE"),
	INDEXED(HIDIOCGFEATURE(32), 0, "HIDIOCGFEATURE"),
#ifdef HIDIOCGRAWUNIQ
	INDEXED(HIDIOCGRAWUNIQ(32), 0, "HIDIOCGRAWUNIQ"),
#endif
#ifdef HIDIOCSINPUT
	INDEXED(HIDIOCSINPUT(32), 0, "HIDIOCSINPUT"),
	INDEXED(HIDIOCGINPUT(32), 0, "HIDIOCGINPUT"),
	INDEXED(HIDIOCSOUTPUT(32), 0, "HIDIOCSOUTPUT"),
	INDEXED(HIDIOCGOUTPUT(32), 0, "HIDIOCGOUTPUT"),
#endif
	{ CROS_EC_DEV_IOCXCMD_V2, 0, IK_VARLEN, 0, "CROS_EC_DEV_IOCXCMD_V2" },
	NOSTATE(CROS_EC_DEV_IOCEVENTMASK_V2, ENODATA),
};

#define N_TYPES (sizeof(ioctl_types) / sizeof(ioctl_types[0]))

/* the length is not compared: it is the caller's buffer, a line's data */
static bool type_matches(const struct ioctl_type *t, unsigned long id)
{
	return _IOC_TYPE(id) == _IOC_TYPE(t->id) && _IOC_DIR(id) == _IOC_DIR(t->id) &&
	       _IOC_NR(id) >= _IOC_NR(t->id) && _IOC_NR(id) <= _IOC_NR(t->id) + t->nr_range;
}

/**
 * ioctl_type_by_id() - the request of the format @id is
 * @id: a request number (32 bits).
 *
 * Return: its type, NULL when the format does not know it.
 */
const struct ioctl_type *ioctl_type_by_id(unsigned long id)
{
	for (size_t i = 0; i < N_TYPES; i++)
		if (type_matches(&ioctl_types[i], id))
			return &ioctl_types[i];
	return NULL;
}

static const struct ioctl_type *type_by_name(const char *name, size_t len)
{
	for (size_t i = 0; i < N_TYPES; i++)
		if (strlen(ioctl_types[i].name) == len && !memcmp(ioctl_types[i].name, name, len))
			return &ioctl_types[i];
	return NULL;
}

/**
 * ioctl_describe() - a request for a message: its name in the format
 *                    ("EVIOCGABS(3)"), else its parts ("_IOR('X', 0x2a)")
 * @request: the request.
 * @buf: filled in, NUL-terminated.
 * @size: @buf's size.
 */
void ioctl_describe(unsigned long request, char *buf, size_t size)
{
	static const char *const dirs[] = { "_IO", "_IOW", "_IOR", "_IOWR" };
	const struct ioctl_type *t = ioctl_type_by_id(request);
	unsigned int type = (unsigned int)_IOC_TYPE(request);

	if (t && t->nr_range)
		snprintf(buf, size, "%s(%u)", t->name,
			 (unsigned int)(_IOC_NR(request) - _IOC_NR(t->id)));
	else if (t)
		snprintf(buf, size, "%s", t->name);
	else if (type >= 0x20 && type < 0x7f && type != '\'')
		snprintf(buf, size, "%s('%c', 0x%02x)", dirs[_IOC_DIR(request) & 3], type,
			 (unsigned int)_IOC_NR(request));
	else
		snprintf(buf, size, "%s(0x%02x, 0x%02x)", dirs[_IOC_DIR(request) & 3], type,
			 (unsigned int)_IOC_NR(request));
}

/**
 * ioctl_node_next() - the line after @n in the file: its first child, its
 *                     next sibling, or the next sibling of a parent
 * @n: a node.
 *
 * Return: that node, NULL after the last line.
 */
struct ioctl_node *ioctl_node_next(const struct ioctl_node *n)
{
	if (n->child)
		return n->child;
	for (; n; n = n->parent)
		if (n->next)
			return n->next;
	return NULL;
}

static struct ioctl_node *node_new(struct cfs_ioctl_tree *t, const struct ioctl_type *type,
				   unsigned long id)
{
	struct ioctl_node *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->type = type;
	n->id = id;
	n->all = t->nodes;
	t->nodes = n;
	return n;
}

/* a cros_ec command's length with its answer: the header's insize says */
static size_t cros_ec_size(const uint8_t *cmd)
{
	uint32_t insize;

	memcpy(&insize, cmd + 12, sizeof(insize));
	return CROS_EC_CMD_HDR + (size_t)le32toh(insize);
}

/* ---- reading ---- */

struct parser {
	const char *name;
	unsigned int lineno;
	char *msg;
	size_t msgsize;
};

__attribute__((format(printf, 2, 3)))
static int bad(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(p->msg, p->msgsize, "%s:%u: ", p->name, p->lineno);
	if (n >= 0 && (size_t)n < p->msgsize) {
		va_start(ap, fmt);
		vsnprintf(p->msg + n, p->msgsize - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* @s (to its end, no blank in it) as bytes; a node's @data */
static int parse_hex(struct parser *p, const char *s, struct ioctl_node *n)
{
	size_t digits = strlen(s);

	for (size_t i = 0; i < digits; i++)
		if (cfs_hex_digit(s[i]) < 0)
			return bad(p, "'%c' in the data is no hexadecimal digit", s[i]);
	if (digits % 2)
		return bad(p, "the data has an odd number of hexadecimal digits (%zu)", digits);
	n->len = digits / 2;
	if (!n->len)
		return 0;
	n->data = malloc(n->len);
	if (!n->data)
		return -ENOMEM;
	for (size_t i = 0; i < n->len; i++)
		n->data[i] = (uint8_t)(cfs_hex_digit(s[2 * i]) << 4 | cfs_hex_digit(s[2 * i + 1]));
	return 0;
}

/* the next blank-separated word of *@s as a number in [@min, @max] */
static bool next_num(const char **s, int base, long long min, long long max, long long *out)
{
	const char *p = *s + strspn(*s, " \t");
	char *end;

	errno = 0;
	*out = strtoll(p, &end, base);
	if (end == p || errno || *out < min || *out > max || (*end && *end != ' ' && *end != '\t'))
		return false;
	*s = end + strspn(end, " \t");
	return true;
}

/* "TYPE ENDPOINT STATUS FLAGS BUFFER_LENGTH ACTUAL_LENGTH ERROR_COUNT HEX" */
static int parse_urb(struct parser *p, const char *s, struct ioctl_node *n)
{
	static const char *const what[] = { "type", "endpoint", "status", "flags",
					     "buffer_length", "actual_length", "error_count" };
	/* the %u fields are decimal, the %i ones C numbers: umockdev's scanf */
	static const int base[] = { 10, 10, 0, 10, 0, 0, 0 };
	static const long long lo[] = { 0, 0, INT32_MIN, 0, 0, 0, INT32_MIN };
	static const long long hi[] = { 255, 255, INT32_MAX, UINT32_MAX, INT32_MAX, INT32_MAX,
					INT32_MAX };
	long long v[7];
	struct urb_rec *u = &n->urb;
	size_t want;
	int err;

	for (int i = 0; i < 7; i++)
		if (!next_num(&s, base[i], lo[i], hi[i], &v[i]))
			return bad(p, "the URB's %s is missing or out of range", what[i]);
	*u = (struct urb_rec){ .type = (unsigned char)v[0], .endpoint = (unsigned char)v[1],
			       .status = (int)v[2], .flags = (unsigned int)v[3],
			       .buffer_length = (int)v[4], .actual_length = (int)v[5],
			       .error_count = (int)v[6] };
	/* a reap copies actual_length bytes into the program's buffer */
	if (u->actual_length > u->buffer_length)
		return bad(p, "the URB's actual_length %d exceeds its buffer_length %d",
			   u->actual_length, u->buffer_length);
	err = parse_hex(p, s, n);
	if (err)
		return err;
	want = (size_t)(u->endpoint & 0x80 ? u->actual_length : u->buffer_length);
	if (n->len > want)
		return bad(p, "the URB's data holds %zu bytes, more than its %s %zu", n->len,
			   u->endpoint & 0x80 ? "actual_length" : "buffer_length", want);
	return 0;
}

/* "NAME" or "NAME(INDEX)": the request, with its index */
static int parse_name(struct parser *p, const char *word, size_t len,
		      const struct ioctl_type **type, unsigned long *id)
{
	const char *paren = memchr(word, '(', len);
	size_t name_len = paren ? (size_t)(paren - word) : len;
	unsigned long idx = 0;

	*type = type_by_name(word, name_len);
	if (!*type)
		return bad(p, "unknown ioctl \"%.*s\"", (int)name_len, word);
	if (paren) {
		const char *d = paren + 1, *close = word + len - 1;

		if (*close != ')' || close == d || strspn(d, "0123456789") != (size_t)(close - d))
			return bad(p, "\"%.*s\": the index in parentheses is no number", (int)len,
				   word);
		idx = strtoul(d, NULL, 10);
		if (idx > (*type)->nr_range)
			return bad(p, "\"%.*s\": index %lu is past %s's last, %u", (int)len, word,
				   idx, (*type)->name, (*type)->nr_range);
	}
	*id = (*type)->id + (idx << _IOC_NRSHIFT);
	return 0;
}

/* one line, without its newline and trailing blanks: a node of @t */
static int parse_line(struct parser *p, struct cfs_ioctl_tree *t, const char *line,
		      struct ioctl_node **out)
{
	size_t depth = strspn(line, " ");
	const char *word = line + depth, *s;
	size_t word_len = strcspn(word, " \t");
	const struct ioctl_type *type;
	struct ioctl_node *n;
	unsigned long id;
	long long ret;
	int err;

	if (*word == '\t')
		return bad(p, "a tab in the indentation (one space per level)");
	if (depth > 100000)
		return bad(p, "indented %zu levels", depth);
	err = parse_name(p, word, word_len, &type, &id);
	if (err)
		return err;
	/* umockdev answers these without a tree and cannot read them in one */
	if (type->kind == IK_NOSTATE || type->kind == IK_SUBMIT)
		return bad(p, "%s is never recorded (%s)", type->name,
			   type->kind == IK_SUBMIT ? "a REAPURB line answers its URB"
						   : "it is answered without a recording");
	s = word + word_len;
	if (!next_num(&s, 0, INT32_MIN, INT32_MAX, &ret))
		return bad(p, "%s's result is missing or no number", type->name);
	n = node_new(t, type, id);
	if (!n)
		return -ENOMEM;
	n->depth = (int)depth;
	n->ret = (int)ret;
	*out = n;
	switch (type->kind) {
	case IK_URB:
		return parse_urb(p, s, n);
	case IK_VARLEN:
		err = parse_hex(p, s, n);
		if (!err && (n->len < CROS_EC_CMD_HDR || n->len != cros_ec_size(n->data)))
			return bad(p, "%s: %zu bytes of data, not a command and its insize bytes",
				   type->name, n->len);
		return err;
	default:
		err = parse_hex(p, s, n);
		if (err)
			return err;
		/* the data's length is the request's: EVIOCGNAME(256) is another */
		if (n->len > _IOC_SIZEMASK)
			return bad(p, "%zu bytes of data, more than an ioctl's %u", n->len,
				   _IOC_SIZEMASK);
		n->id = _IOC(_IOC_DIR(id), _IOC_TYPE(id), _IOC_NR(id), n->len);
		return 0;
	}
}

/* @n below @prev by its depth: a child, or the next sibling of an ancestor */
static int place(struct parser *p, struct cfs_ioctl_tree *t, struct ioctl_node *prev,
		 struct ioctl_node *n)
{
	if (!prev) {
		if (n->depth)
			return bad(p, "the first entry is indented");
		t->root = t->top_tail = n;
		return 0;
	}
	if (n->depth > prev->depth) {
		if (n->depth != prev->depth + 1)
			return bad(p, "indented %d levels, the line above %d (one more at most)",
				   n->depth, prev->depth);
		prev->child = prev->tail = n;
		n->parent = prev;
		return 0;
	}
	while (prev->depth != n->depth)
		prev = prev->parent;
	prev->next = n;
	n->parent = prev->parent;
	if (n->parent)
		n->parent->tail = n;
	else
		t->top_tail = n;
	return 0;
}

/**
 * ioctl_tree_parse() - a tree from its text
 * @text: the file's contents (need not end in NUL).
 * @len: its length.
 * @name: the file's name, for messages.
 * @out: the tree (no entry at all: an empty tree, root NULL).
 * @msg: "NAME:LINE: reason" on -EINVAL.
 * @msgsize: @msg's size.
 *
 * Blank lines, comments ('#') and metadata ('@') are skipped, wherever
 * they are, as umockdev does.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int ioctl_tree_parse(const char *text, size_t len, const char *name,
		     struct cfs_ioctl_tree **out, char *msg, size_t msgsize)
{
	struct parser p = { .name = name, .msg = msg, .msgsize = msgsize };
	struct ioctl_node *prev = NULL, *n;
	struct cfs_ioctl_tree *t;
	size_t pos = 0;
	char *line = NULL;
	int err = 0;

	t = cfs_ioctl_tree_new();
	if (!t)
		return -ENOMEM;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - text - pos) : len - pos;

		p.lineno++;
		free(line);
		line = strndup(text + pos, l);
		pos += l + 1;
		if (!line) {
			err = -ENOMEM;
			goto fail;
		}
		if (strlen(line) != l) {
			err = bad(&p, "a NUL byte in the line");
			goto fail;
		}
		while (l && strchr(" \t\r", line[l - 1]))
			line[--l] = '\0';
		if (!l || line[0] == '#' || line[0] == '@')
			continue;
		n = NULL;
		err = parse_line(&p, t, line, &n);
		if (!err)
			err = place(&p, t, prev, n);
		if (err)
			goto fail;
		prev = n;
	}
	free(line);
	*out = t;
	return 0;
fail:
	if (err == -ENOMEM)
		snprintf(msg, msgsize, "%s:%u: out of memory", name, p.lineno);
	free(line);
	cfs_ioctl_tree_free(t);
	return err;
}

/* ---- a recorder's side ---- */

/**
 * cfs_ioctl_tree_new() - an empty tree, for a recorder to add calls to
 *
 * Return: the tree, NULL when out of memory.
 */
struct cfs_ioctl_tree *cfs_ioctl_tree_new(void)
{
	return calloc(1, sizeof(struct cfs_ioctl_tree));
}

/**
 * cfs_ioctl_tree_free() - free @t and its nodes
 * @t: a tree, or NULL.
 */
void cfs_ioctl_tree_free(struct cfs_ioctl_tree *t)
{
	struct ioctl_node *n, *next;

	if (!t)
		return;
	for (n = t->nodes; n; n = next) {
		next = n->all;
		free(n->data);
		free(n);
	}
	free(t);
}

static bool urb_in(const struct ioctl_node *n)
{
	return n->urb.endpoint & 0x80;
}

/* the same answer: a recorder keeps one line for calls answered alike */
static bool node_equal(const struct ioctl_node *a, const struct ioctl_node *b)
{
	if (a->id != b->id || a->type != b->type)
		return false;
	switch (a->type->kind) {
	case IK_SIMPLE:
		return a->len == b->len && (!a->len || !memcmp(a->data, b->data, a->len));
	case IK_URB:
		/*
		 * never IN URBs: the same read answered differently later
		 * would find the first answer again
		 */
		if (urb_in(a) || urb_in(b))
			return false;
		return a->urb.type == b->urb.type && a->urb.endpoint == b->urb.endpoint &&
		       a->urb.status == b->urb.status && a->urb.flags == b->urb.flags &&
		       a->urb.buffer_length == b->urb.buffer_length &&
		       a->urb.actual_length == b->urb.actual_length && a->len == b->len &&
		       (!a->len || !memcmp(a->data, b->data, a->len));
	default:
		/* an EC command's answer depends on what came before */
		return false;
	}
}

/* fill @n from a call's argument bytes: 0 or -EINVAL (too short) */
static int node_from_call(struct ioctl_node *n, const void *arg, size_t len)
{
	size_t need;

	switch (n->type->kind) {
	case IK_URB: {
		struct usbdevfs_urb u;

		if (len < sizeof(u))
			return -EINVAL;
		memcpy(&u, arg, sizeof(u));
		n->urb = (struct urb_rec){ .type = u.type, .endpoint = u.endpoint,
					   .status = u.status, .flags = u.flags,
					   .buffer_length = u.buffer_length,
					   .actual_length = u.actual_length,
					   .error_count = u.error_count };
		if (u.buffer_length < 0 || u.actual_length < 0 ||
		    u.actual_length > u.buffer_length)
			return -EINVAL;
		need = (size_t)(urb_in(n) ? u.actual_length : u.buffer_length);
		if (len - sizeof(u) < need)
			return -EINVAL;
		arg = (const uint8_t *)arg + sizeof(u);
		break;
	}
	case IK_VARLEN:
		if (len < CROS_EC_CMD_HDR)
			return -EINVAL;
		need = cros_ec_size(arg);
		break;
	default:
		need = _IOC_SIZE(n->id);
		break;
	}
	if (len < need)
		return -EINVAL;
	n->len = need;
	if (!need)
		return 0;
	n->data = malloc(need);
	if (!n->data)
		return -ENOMEM;
	memcpy(n->data, arg, need);
	return 0;
}

/* unlink the newest node (one add_call() made and does not keep) */
static void drop_newest(struct cfs_ioctl_tree *t)
{
	struct ioctl_node *n = t->nodes;

	t->nodes = n->all;
	free(n->data);
	free(n);
}

/**
 * cfs_ioctl_tree_add() - add a call a recorder saw to @t, as umockdev's
 *                        recorder does
 * @t: the tree.
 * @request: the call's request.
 * @arg: the argument's bytes after the call (devio.h says which).
 * @len: bytes at @arg.
 * @result: what the call returned (< 0: it failed, nothing is added).
 *
 * An answer the tree holds already is not added again; a URB read from
 * an IN endpoint goes under the URB reaped last (the answer under its
 * question), everything else at the top.
 *
 * Return: 0, -EOPNOTSUPP, -EINVAL or -ENOMEM.
 */
int cfs_ioctl_tree_add(struct cfs_ioctl_tree *t, unsigned long request, const void *arg,
		       size_t len, long result)
{
	unsigned long req = ioctl_req32(request);
	const struct ioctl_type *type = ioctl_type_by_id(req);
	struct ioctl_node *n, *o, *parent = NULL;
	int err;

	if (result < 0)
		return 0;
	if (!type)
		return -EOPNOTSUPP;
	if (type->kind == IK_NOSTATE || type->kind == IK_SUBMIT)
		return 0;
	if (result > INT32_MAX)
		return -EINVAL;
	n = node_new(t, type, req);
	if (!n)
		return -ENOMEM;
	n->ret = (int)result;
	err = node_from_call(n, arg, len);
	if (err) {
		drop_newest(t);
		return err;
	}
	for (o = t->root; o; o = ioctl_node_next(o))
		if (node_equal(o, n))
			break;
	if (o) {
		drop_newest(t);
		if (o->type->kind == IK_URB)
			t->last_reap = o;
		return 0;
	}
	if (type->kind == IK_URB) {
		if (urb_in(n))
			parent = t->last_reap;
		t->last_reap = n;
	}
	n->parent = parent;
	if (parent) {
		n->depth = parent->depth + 1;
		if (parent->tail)
			parent->tail->next = n;
		else
			parent->child = n;
		parent->tail = n;
	} else if (t->top_tail) {
		t->top_tail->next = n;
		t->top_tail = n;
	} else {
		t->root = t->top_tail = n;
	}
	return 0;
}

static void write_hex(FILE *f, const uint8_t *data, size_t len, size_t total)
{
	for (size_t i = 0; i < total; i++)
		fprintf(f, "%02X", i < len ? data[i] : 0);
}

/**
 * cfs_ioctl_tree_write() - @t as umockdev-record writes a tree
 * @t: the tree.
 * @dev: the node it was recorded from, for the "@DEV" line (NULL: none).
 * @f: where to.
 *
 * Return: 0, or -EIO when @f failed.
 */
int cfs_ioctl_tree_write(const struct cfs_ioctl_tree *t, const char *dev, FILE *f)
{
	const struct ioctl_node *n;

	if (dev)
		fprintf(f, "@DEV %s\n", dev);
	for (n = t->root; n; n = ioctl_node_next(n)) {
		const struct urb_rec *u = &n->urb;

		fprintf(f, "%*s", n->depth, "");
		/* the index, and for a length the data gives, "(0)": umockdev's rule */
		if (n->id != n->type->id)
			fprintf(f, "%s(%u) %d ", n->type->name,
				(unsigned int)(_IOC_NR(n->id) - _IOC_NR(n->type->id)), n->ret);
		else
			fprintf(f, "%s %d ", n->type->name, n->ret);
		if (n->type->kind == IK_URB) {
			fprintf(f, "%u %u %d %u %d %d %d ", u->type, u->endpoint, u->status,
				u->flags, u->buffer_length, u->actual_length, u->error_count);
			write_hex(f, n->data, n->len,
				  (size_t)(urb_in(n) ? u->actual_length : u->buffer_length));
		} else {
			write_hex(f, n->data, n->len, n->len);
		}
		fputc('\n', f);
	}
	return fflush(f) || ferror(f) ? -EIO : 0;
}

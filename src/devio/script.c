// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * script.c - umockdev's read/write scripts (umockdev-record --script,
 * docs/script-format.txt of umockdev), replayed on the other end of an
 * emulated node.
 *
 * One operation a line, "OP VALUE DATA":
 *   r MS DATA   the program reads: DATA is written to it, MS ms after the
 *               previous operation ended
 *   w MS DATA   the program writes: DATA must come, in as many pieces as
 *               the program likes (MS is the recording's, not waited for)
 *   f PCT -     from here on, a 'w' block may differ in PCT% of its bytes
 *   d 0 NODE    the node the script was recorded from (cfs_script_node())
 *   Q           the end: nothing after it is read (notes may follow)
 *   # ...       a comment; empty lines are skipped too
 * DATA escapes the bytes below 32 as '^' and the byte plus 64, and '^'
 * itself as "^`".
 *
 * Unlike umockdev, which ignores what it does not know at replay time,
 * the whole script is parsed before the play starts: an unknown
 * operation, a bad number or escape is an error naming its line, before
 * the program runs.  DATA starts right after the single space that ends
 * VALUE, spaces included (umockdev drops leading spaces, which then
 * cannot be in a block); a CR ending a line is the line's end (the
 * format escapes every CR of the data).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "classfs-internal/devio.h"
#include "player.h"

/* a delay above this (24 days) is a typo, not a recording */
#define SCRIPT_DELAY_MAX 2147483647u

struct script_op {
	char op;
	unsigned line;
	uint32_t value;
	size_t off, len;	/* data: bytes [off, off + len) of the script's */
};

struct cfs_script {
	char *name;
	struct script_op *ops;
	size_t nops;
	uint8_t *data;
	size_t wmax;		/* the largest 'w' block: the play's read buffer */
};

struct script_player {
	struct cfs_player base;
	struct cfs_script *script;
	int fd;
};

/**
 * script_free() - free a parsed script
 * @s: the script (NULL: nothing)
 */
void script_free(struct cfs_script *s)
{
	if (!s)
		return;
	free(s->name);
	free(s->ops);
	free(s->data);
	free(s);
}

/* a byte of a message: itself when printable, else escaped */
static const char *show_char(unsigned char c, char buf[8])
{
	if (c >= 33 && c < 127)
		snprintf(buf, 8, "%c", c);
	else
		snprintf(buf, 8, "\\x%02x", c);
	return buf;
}

/*
 * The data of an 'r' or 'w' line, unescaped into @out (room for @len
 * bytes: unescaping only shrinks).  Return: the number of bytes, or -1
 * with the reason in @why.
 */
static long unescape(const char *t, size_t len, uint8_t *out, char *why, size_t whysize)
{
	size_t n = 0;
	char cb[8];

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];

		if (c != '^') {
			out[n++] = c;
			continue;
		}
		if (++i == len) {
			snprintf(why, whysize, "'^' at the end of the line (\"^`\" is a '^')");
			return -1;
		}
		c = (unsigned char)t[i];
		if (c == '`') {
			out[n++] = '^';
		} else if (c >= '@' && c <= '_') {
			out[n++] = (uint8_t)(c - 64);
		} else {
			snprintf(why, whysize, "invalid escape '^%s' (^@ to ^_ and ^` only)",
				 show_char(c, cb));
			return -1;
		}
	}
	return (long)n;
}

/* VALUE of a line: decimal digits.  Return: its end, NULL if none or too big */
static const char *parse_value(const char *p, const char *end, uint32_t *v)
{
	uint64_t x = 0;
	const char *start = p;

	while (p < end && *p >= '0' && *p <= '9') {
		x = x * 10 + (uint64_t)(*p - '0');
		if (x > SCRIPT_DELAY_MAX)
			return NULL;
		p++;
	}
	if (p == start)
		return NULL;
	*v = (uint32_t)x;
	return p;
}

/* one line (without its newline) into @s; 1 for a 'Q', 0 on, -1 bad */
static int parse_line(struct cfs_script *s, size_t *cap, const char *t, size_t len,
		      unsigned lineno, size_t *datalen, char *why, size_t whysize)
{
	const char *end = t + len, *p;
	struct script_op op = { .op = t[0], .line = lineno };
	char cb[8];

	switch (op.op) {
	case 'Q':
		return 1;
	case 'r': case 'w': case 'f': case 'd':
		break;
	default:
		snprintf(why, whysize, "unknown operation '%s' (r, w, f, d, Q or # expected)",
			 show_char((unsigned char)op.op, cb));
		return -1;
	}
	if (len < 2 || t[1] != ' ') {
		snprintf(why, whysize, "no space after the operation '%c'", op.op);
		return -1;
	}
	p = parse_value(t + 2, end, &op.value);
	if (!p || (p < end && *p != ' ')) {
		const char *v = t + 2, *ve = memchr(v, ' ', (size_t)(end - v));
		int vl = (int)((ve ? ve : end) - v);

		snprintf(why, whysize, "invalid %s '%.*s' (decimal digits expected)",
			 op.op == 'f' ? "fuzz percentage" : "time value", vl > 40 ? 40 : vl, v);
		return -1;
	}
	if (op.op == 'f' && op.value > 100) {
		snprintf(why, whysize, "fuzz percentage %u is over 100", (unsigned)op.value);
		return -1;
	}
	if (p < end)
		p++;	/* the space before DATA */
	if (op.op == 'r' || op.op == 'w') {
		long n = unescape(p, (size_t)(end - p), s->data + *datalen, why, whysize);

		if (n < 0)
			return -1;
		op.off = *datalen;
		op.len = (size_t)n;
		*datalen += (size_t)n;
		if (op.op == 'w' && op.len > s->wmax)
			s->wmax = op.len;
	}
	if (s->nops == *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct script_op *o = realloc(s->ops, ncap * sizeof(*o));

		if (!o)
			return -2;
		s->ops = o;
		*cap = ncap;
	}
	s->ops[s->nops++] = op;
	return 0;
}

/**
 * script_parse() - parse a read/write script
 * @text: the script
 * @len: its length (it may hold any byte; no terminating NUL needed)
 * @name: its name in messages (a file name)
 * @out: filled with the parsed script, for script_play() and script_free()
 * @msg: filled with the reason of a failure
 * @msgsize: the size of @msg
 *
 * Return: 0; -EINVAL (@msg "NAME:LINE: reason"); -ENOMEM.
 */
int script_parse(const char *text, size_t len, const char *name, struct cfs_script **out,
		 char *msg, size_t msgsize)
{
	struct cfs_script *s;
	size_t cap = 0, datalen = 0;
	unsigned lineno = 0;
	char why[160];
	int r = -ENOMEM;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->name = strdup(name ? name : "<script>");
	/* the data of all lines, unescaped, is never longer than the text */
	s->data = malloc(len ? len : 1);
	if (!s->name || !s->data)
		goto fail;
	for (size_t pos = 0; pos < len;) {
		const char *t = text + pos, *nl = memchr(t, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - t) : len - pos;
		int k;

		lineno++;
		pos += ll + 1;
		/* a script gone through a CRLF editor: a raw CR is never data */
		if (ll && t[ll - 1] == '\r')
			ll--;
		if (ll == 0 || t[0] == '#')
			continue;
		k = parse_line(s, &cap, t, ll, lineno, &datalen, why, sizeof(why));
		if (k == 1)
			break;
		if (k == -2)
			goto fail;
		if (k < 0) {
			snprintf(msg, msgsize, "%s:%u: %s", s->name, lineno, why);
			r = -EINVAL;
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	if (r == -ENOMEM)
		snprintf(msg, msgsize, "%s: out of memory", name ? name : "<script>");
	script_free(s);
	return r;
}

/* @b escaped for a message; one too long for @out ends in "..." */
static void show_block(const uint8_t *b, size_t len, char *out, size_t outsize)
{
	if (cfs_script_escape(b, len, out, outsize) < outsize || outsize < 4)
		return;
	cfs_script_escape(b, len, out, outsize - 3);
	strcat(out, "...");
}

/* a 'w' block that did not come: its message, logged too */
static int mismatch(const struct cfs_script *s, const struct script_op *op, const uint8_t *exp,
		    const uint8_t *got, size_t n, size_t diffs, unsigned fuzz, char *msg,
		    size_t msgsize)
{
	char e[200], g[200], how[96] = "";
	size_t first = 0;

	while (first < n && exp[first] == got[first])
		first++;
	show_block(exp, op->len, e, sizeof(e));
	show_block(got, n, g, sizeof(g));
	if (fuzz)
		snprintf(how, sizeof(how), ", %zu of %zu bytes differ (over the fuzz of %u%%)",
			 diffs, op->len, fuzz);
	snprintf(msg, msgsize,
		 "%s:%u: expected '%s' (%zu bytes), got '%s' (%s%zu bytes), first difference at byte %zu%s",
		 s->name, op->line, e, op->len, g, n < op->len ? "the first " : "", n, first, how);
	cfs_devio_log("%s", msg);
	return -EPROTO;
}

/*
 * A 'w' block: read it from @fd (the program may write it in pieces)
 * and compare.  A block that already differs more than the fuzz allows
 * fails at once, not when (if ever) the rest comes.
 */
static int play_write(const struct cfs_script *s, const struct script_op *op, int fd,
		      int stopfd, unsigned fuzz, uint8_t *buf, char *msg, size_t msgsize)
{
	const uint8_t *exp = s->data + op->off;
	size_t got = 0, diffs = 0;

	while (got < op->len) {
		ssize_t n;
		int r = player_poll(stopfd, fd, POLLIN);

		if (r)
			return r;
		n = read(fd, buf + got, op->len - got);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n <= 0) {
			char e[200];

			/* EOF of a socket, EIO of a pty whose slave is closed */
			if (n < 0 && errno != EIO && errno != ECONNRESET)
				r = -errno;
			else
				r = -EPIPE;
			show_block(exp + got, op->len - got, e, sizeof(e));
			snprintf(msg, msgsize, "%s:%u: %s while '%s' was still expected", s->name,
				 op->line, r == -EPIPE ? "the other side closed" : strerror(-r), e);
			cfs_devio_log("%s", msg);
			return r;
		}
		for (size_t i = got; i < got + (size_t)n; i++)
			diffs += buf[i] != exp[i];
		got += (size_t)n;
		/* umockdev's rule: differences * 100 <= fuzz * length */
		if (diffs * 100 > (size_t)fuzz * op->len)
			return mismatch(s, op, exp, buf, got, diffs, fuzz, msg, msgsize);
	}
	return 0;
}

/**
 * script_play() - play a parsed script on @fd
 * @s: the script
 * @fd: the other end of the program's descriptor, non-blocking
 * @stopfd: the player's stop eventfd
 * @msg: filled with the reason of a failure
 * @msgsize: the size of @msg
 *
 * Return: 0 at the end of the script (or its 'Q'); -EPROTO when the
 * program wrote something else; -EPIPE when it closed its end before the
 * script's end; -ECANCELED when stopped; -ENOMEM; another -errno of @fd.
 */
int script_play(const struct cfs_script *s, int fd, int stopfd, char *msg, size_t msgsize)
{
	uint8_t *buf = malloc(s->wmax ? s->wmax : 1);
	unsigned fuzz = 0;
	int r = 0;

	if (!buf) {
		snprintf(msg, msgsize, "%s: out of memory", s->name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nops && !r; i++) {
		const struct script_op *op = &s->ops[i];

		switch (op->op) {
		case 'r':
			r = player_sleep_until(stopfd, player_now_ns() + op->value * 1000000ull);
			if (!r)
				r = player_write_all(stopfd, fd, s->data + op->off, op->len);
			if (r && r != -ECANCELED) {
				snprintf(msg, msgsize, "%s:%u: cannot write the block: %s", s->name,
					 op->line, r == -EPIPE ? "the other side closed" : strerror(-r));
				cfs_devio_log("%s", msg);
			}
			break;
		case 'w':
			r = play_write(s, op, fd, stopfd, fuzz, buf, msg, msgsize);
			break;
		case 'f':
			fuzz = op->value;
			break;
		default:
			/* 'd': the node is the caller's business (cfs_script_node()) */
			break;
		}
	}
	free(buf);
	return r;
}

static void *script_thread(void *arg)
{
	struct script_player *sp = arg;
	char msg[PLAYER_MSG_MAX] = "";
	int flags, r;

	r = player_nonblock(sp->fd, &flags);
	if (r) {
		snprintf(msg, sizeof(msg), "%s: cannot use the descriptor: %s", sp->script->name,
			 strerror(-r));
		cfs_devio_log("%s", msg);
	} else {
		r = script_play(sp->script, sp->fd, sp->base.stopfd, msg, sizeof(msg));
		player_restore_flags(sp->fd, flags);
	}
	player_finish(&sp->base, r, msg);
	return NULL;
}

static void script_release(struct cfs_player *p)
{
	struct script_player *sp = (struct script_player *)p;

	player_destroy(p);
	script_free(sp->script);
	free(sp);
}

/**
 * cfs_script_start() - play a read/write script on a descriptor
 * @text: the script (umockdev's format; need not end in NUL)
 * @len: its length
 * @name: its name in messages (its file's name)
 * @fd: the other end of the node (a pty's master, a socket): stays the
 *      caller's; non-blocking for the play (its flags come back at the end)
 * @out: filled with the player, for cfs_player_wait() and cfs_player_stop()
 * @msg: filled with the reason of a failure
 * @msgsize: the size of @msg
 *
 * The script is parsed first: a bad one starts nothing.  A pty whose
 * slave nobody holds reads as closed, so the caller keeps a slave open
 * until the program holds its own, if the script starts with a 'w'.
 *
 * Return: 0; -EINVAL (@msg "NAME:LINE: reason"); -ENOMEM; another -errno
 * of starting the thread.
 */
int cfs_script_start(const char *text, size_t len, const char *name, int fd,
		     struct cfs_player **out, char *msg, size_t msgsize)
{
	struct script_player *sp;
	int r;

	sp = calloc(1, sizeof(*sp));
	if (!sp) {
		snprintf(msg, msgsize, "%s: out of memory", name ? name : "<script>");
		return -ENOMEM;
	}
	r = script_parse(text, len, name, &sp->script, msg, msgsize);
	if (r)
		goto fail;
	sp->fd = fd;
	r = player_init(&sp->base, script_release);
	if (r)
		goto fail_script;
	r = player_spawn(&sp->base.thread, script_thread, sp);
	if (r)
		goto fail_player;
	*out = &sp->base;
	return 0;

fail_player:
	player_destroy(&sp->base);
fail_script:
	snprintf(msg, msgsize, "%s: cannot start the player: %s", sp->script->name, strerror(-r));
	script_free(sp->script);
fail:
	free(sp);
	return r;
}

/**
 * cfs_script_node() - the node a script was recorded from
 * @text: the script
 * @len: its length
 * @node: filled with the node ("/dev/hidraw5")
 * @size: the size of @node
 *
 * umockdev-record writes "d 0 NODE" first; only comments may come before.
 *
 * Return: 0; -ENOENT when the script has no such line; -ENAMETOOLONG.
 */
int cfs_script_node(const char *text, size_t len, char *node, size_t size)
{
	for (size_t pos = 0; pos < len;) {
		const char *t = text + pos, *nl = memchr(t, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - t) : len - pos;

		pos += ll + 1;
		if (ll && t[ll - 1] == '\r')
			ll--;
		if (ll == 0 || t[0] == '#')
			continue;
		if (ll <= 4 || memcmp(t, "d 0 ", 4))
			return -ENOENT;
		if (ll - 4 >= size)
			return -ENAMETOOLONG;
		memcpy(node, t + 4, ll - 4);
		node[ll - 4] = '\0';
		return 0;
	}
	return -ENOENT;
}

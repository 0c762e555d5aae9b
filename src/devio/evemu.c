// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * evemu.c - evemu event files (evemu-record, umockdev-record --evemu-events)
 * replayed as an input device's events: each "E: SEC.USEC TYPE CODE VALUE"
 * line (TYPE and CODE hex, VALUE decimal) is written to the node's other
 * end as this machine's struct input_event, its time the file's.  The
 * times are relative: the first event comes at once, each next one as
 * long after the one before as in the file (none earlier: a file that
 * goes back in time has its event at once, as umockdev does).  Events of
 * the same time go in one write, the way the kernel hands over a frame.
 *
 * The description evemu-record writes first (N:, I:, P:, B:, A:, L:, S:
 * lines) is the device's, not its events: skipped, as comments are;
 * "# device NODE" names the node recorded (cfs_evemu_node()).
 */
#include <errno.h>
#include <linux/input.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classfs-internal/devio.h"
#include "player.h"

struct evemu_event {
	uint64_t sec;
	uint32_t usec;
	uint16_t type, code;
	int32_t value;
	uint64_t at_us;		/* since the first event */
};

struct evemu_player {
	struct cfs_player base;
	char *name;
	struct evemu_event *ev;
	size_t nev;
	int fd;
};

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* unsigned number of @base at @p, at most @max; NULL when none or bigger */
static const char *parse_num(const char *p, const char *end, int base, uint64_t max,
			     uint64_t *v, unsigned *ndigits)
{
	uint64_t x = 0;
	unsigned n = 0;

	for (; p < end; p++, n++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		x = x * (uint64_t)base + (uint64_t)d;
		if (x > max)
			return NULL;
	}
	if (!n)
		return NULL;
	*v = x;
	if (ndigits)
		*ndigits = n;
	return p;
}

/* an "E:" line's fields after the "E:"; -1 with @why when bad */
static int parse_event(const char *p, const char *end, struct evemu_event *ev, char *why,
		       size_t whysize)
{
	uint64_t v, frac;
	unsigned nd;
	bool neg;

	p = skip_blanks(p, end);
	p = parse_num(p, end, 10, UINT32_MAX * 1000ull, &ev->sec, NULL);
	if (!p || p == end || *p != '.')
		goto bad_time;
	/* SEC.USEC is a decimal: evemu writes 6 digits, ".5" is half a second */
	p = parse_num(p + 1, end, 10, 999999, &frac, &nd);
	if (!p || nd > 6)
		goto bad_time;
	while (nd++ < 6)
		frac *= 10;
	ev->usec = (uint32_t)frac;

	p = skip_blanks(p, end);
	p = parse_num(p, end, 16, 0xffff, &v, NULL);
	if (!p)
		goto bad_field;
	ev->type = (uint16_t)v;
	p = skip_blanks(p, end);
	p = parse_num(p, end, 16, 0xffff, &v, NULL);
	if (!p)
		goto bad_field;
	ev->code = (uint16_t)v;
	p = skip_blanks(p, end);
	neg = p < end && *p == '-';
	p = parse_num(p + neg, end, 10, neg ? 2147483648u : 2147483647u, &v, NULL);
	if (!p)
		goto bad_field;
	ev->value = neg ? (int32_t)(-(int64_t)v) : (int32_t)v;
	/* what follows is evemu-record's comment ("# EV_KEY / KEY_A") */
	p = skip_blanks(p, end);
	if (p < end && *p != '#' && *p != '\r') {
		snprintf(why, whysize, "unexpected text after the value");
		return -1;
	}
	return 0;
bad_time:
	snprintf(why, whysize, "invalid time (SEC.USEC expected, at most 6 digits of USEC)");
	return -1;
bad_field:
	snprintf(why, whysize, "invalid event (hex TYPE, hex CODE, decimal VALUE expected)");
	return -1;
}

static bool is_description(const char *t, size_t ll)
{
	return ll >= 2 && t[1] == ':' && strchr("NIPBALS", t[0]);
}

/*
 * Parse @text into @ep's events.  Return: 0; -EINVAL with @msg
 * "NAME:LINE: reason"; -ENOMEM.
 */
static int evemu_parse(struct evemu_player *ep, const char *text, size_t len, char *msg,
		       size_t msgsize)
{
	size_t cap = 0;
	unsigned lineno = 0;
	char why[128];

	for (size_t pos = 0; pos < len;) {
		const char *t = text + pos, *nl = memchr(t, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - t) : len - pos;
		struct evemu_event ev = { 0 };

		lineno++;
		pos += ll + 1;
		if (ll && t[ll - 1] == '\r')
			ll--;
		if (ll == 0 || t[0] == '#' || is_description(t, ll))
			continue;
		if (ll < 2 || memcmp(t, "E:", 2)) {
			snprintf(msg, msgsize, "%s:%u: not an evemu line (E: for an event, "
				 "# for a comment, N: I: P: B: A: L: S: for the device)",
				 ep->name, lineno);
			return -EINVAL;
		}
		if (parse_event(t + 2, t + ll, &ev, why, sizeof(why))) {
			snprintf(msg, msgsize, "%s:%u: %s", ep->name, lineno, why);
			return -EINVAL;
		}
		if (ep->nev) {
			const struct evemu_event *prev = &ep->ev[ep->nev - 1];
			uint64_t t0 = prev->sec * 1000000u + prev->usec;
			uint64_t t1 = ev.sec * 1000000u + ev.usec;

			ev.at_us = prev->at_us + (t1 > t0 ? t1 - t0 : 0);
		}
		if (ep->nev == cap) {
			size_t ncap = cap ? cap * 2 : 64;
			struct evemu_event *e = realloc(ep->ev, ncap * sizeof(*e));

			if (!e) {
				snprintf(msg, msgsize, "%s: out of memory", ep->name);
				return -ENOMEM;
			}
			ep->ev = e;
			cap = ncap;
		}
		ep->ev[ep->nev++] = ev;
	}
	return 0;
}

static void *evemu_thread(void *arg)
{
	struct evemu_player *ep = arg;
	struct input_event frame[64];
	char msg[PLAYER_MSG_MAX] = "";
	uint64_t start = player_now_ns();
	int flags, r;

	r = player_nonblock(ep->fd, &flags);
	if (r) {
		snprintf(msg, sizeof(msg), "%s: cannot use the descriptor: %s", ep->name,
			 strerror(-r));
		cfs_devio_log("%s", msg);
		goto out;
	}
	for (size_t i = 0; i < ep->nev && !r;) {
		size_t n = 0;

		r = player_sleep_until(ep->base.stopfd, start + ep->ev[i].at_us * 1000u);
		if (r)
			break;
		/* the events of one time (a frame up to its SYN_REPORT) in one write */
		do {
			const struct evemu_event *e = &ep->ev[i + n];

			memset(&frame[n], 0, sizeof(frame[n]));
			frame[n].input_event_sec = (__typeof__(frame[n].input_event_sec))e->sec;
			frame[n].input_event_usec = (__typeof__(frame[n].input_event_usec))e->usec;
			frame[n].type = e->type;
			frame[n].code = e->code;
			frame[n].value = e->value;
			n++;
		} while (i + n < ep->nev && n < 64 && ep->ev[i + n].at_us == ep->ev[i].at_us);
		r = player_write_all(ep->base.stopfd, ep->fd, frame, n * sizeof(frame[0]));
		if (r && r != -ECANCELED) {
			snprintf(msg, sizeof(msg), "%s: cannot write event %zu: %s", ep->name, i + 1,
				 r == -EPIPE ? "the other side closed" : strerror(-r));
			cfs_devio_log("%s", msg);
		}
		i += n;
	}
	player_restore_flags(ep->fd, flags);
out:
	player_finish(&ep->base, r, msg);
	return NULL;
}

static void evemu_free(struct evemu_player *ep)
{
	free(ep->name);
	free(ep->ev);
	free(ep);
}

static void evemu_release(struct cfs_player *p)
{
	player_destroy(p);
	evemu_free((struct evemu_player *)p);
}

/**
 * cfs_evemu_start() - play an evemu event file on a descriptor
 * @text: the file's text (need not end in NUL)
 * @len: its length
 * @name: its name in messages
 * @fd: the other end of the node (a raw pty's master, a socket): stays the
 *      caller's; non-blocking for the play (its flags come back at the end)
 * @out: filled with the player, for cfs_player_wait() and cfs_player_stop()
 * @msg: filled with the reason of a failure
 * @msgsize: the size of @msg
 *
 * Return: 0; -EINVAL (@msg "NAME:LINE: reason"); -ENOMEM; another -errno
 * of starting the thread.
 */
int cfs_evemu_start(const char *text, size_t len, const char *name, int fd,
		    struct cfs_player **out, char *msg, size_t msgsize)
{
	struct evemu_player *ep;
	int r;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->name = strdup(name ? name : "<evemu>");
	if (!ep->name) {
		snprintf(msg, msgsize, "%s: out of memory", name ? name : "<evemu>");
		r = -ENOMEM;
		goto fail;
	}
	ep->fd = fd;
	r = evemu_parse(ep, text, len, msg, msgsize);
	if (r)
		goto fail;
	r = player_init(&ep->base, evemu_release);
	if (r)
		goto fail_msg;
	r = player_spawn(&ep->base.thread, evemu_thread, ep);
	if (r) {
		player_destroy(&ep->base);
		goto fail_msg;
	}
	*out = &ep->base;
	return 0;

fail_msg:
	snprintf(msg, msgsize, "%s: cannot start the player: %s", ep->name, strerror(-r));
fail:
	evemu_free(ep);
	return r;
}

/**
 * cfs_evemu_node() - the node an evemu file was recorded from
 * @text: the file's text
 * @len: its length
 * @node: filled with the node ("/dev/input/event3")
 * @size: the size of @node
 *
 * umockdev-record writes it as a "# device NODE" line.
 *
 * Return: 0; -ENOENT when the file has no such line; -ENAMETOOLONG.
 */
int cfs_evemu_node(const char *text, size_t len, char *node, size_t size)
{
	int r = -ENOENT;

	for (size_t pos = 0; pos < len;) {
		const char *t = text + pos, *nl = memchr(t, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - t) : len - pos;

		pos += ll + 1;
		if (ll <= 9 || memcmp(t, "# device ", 9))
			continue;
		/* the last one counts, as in umockdev */
		if (ll - 9 >= size) {
			r = -ENAMETOOLONG;
			continue;
		}
		memcpy(node, t + 9, ll - 9);
		node[ll - 9] = '\0';
		r = 0;
	}
	return r;
}

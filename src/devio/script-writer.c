// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * script-writer.c - the recorder's side of umockdev's read/write scripts
 * (script.c plays them): the program's reads and writes of a node as
 * "r MS DATA" and "w MS DATA" lines, MS the time since the operation
 * before.  As umockdev-record does, a read or write less than 10 ms after
 * one of the same kind is appended to its block: a program that writes a
 * command in pieces has one 'w' block, which the replay accepts in any
 * pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "classfs-internal/devio.h"

/* operations closer than this (ms) are one block, as in umockdev-record */
#define SCRIPT_MERGE_MS 10

struct cfs_script_writer {
	FILE *f;
	uint64_t last_ms;	/* the time of the last operation (or the start) */
	char op;		/* the block being written, 0 before the first */
	int err;		/* the first error of writing @f */
};

/**
 * cfs_script_escape() - a block as a script's DATA
 * @buf: the bytes
 * @len: their number
 * @out: filled with the escaped text, NUL-terminated, cut to fit
 * @outsize: the size of @out (0: nothing written, the length counted)
 *
 * A byte below 32 becomes '^' and the byte plus 64 ("^@" for 0, "^J" for
 * a newline), '^' becomes "^`" ("^^" being 30), every other byte stays.
 *
 * Return: the length of the whole escaped text (as snprintf() counts).
 */
size_t cfs_script_escape(const void *buf, size_t len, char *out, size_t outsize)
{
	const unsigned char *b = buf;
	size_t n = 0, put_len = 0;

	for (size_t i = 0; i < len; i++) {
		char e[2] = { (char)b[i], 0 };
		size_t el = 1;

		if (b[i] < 32) {
			e[0] = '^';
			e[1] = (char)(b[i] + 64);
			el = 2;
		} else if (b[i] == '^') {
			e[0] = '^';
			e[1] = '`';
			el = 2;
		}
		/*
		 * a cut never splits an escape (a lone '^' would read as a
		 * bad escape); once one does not fit, no later one does
		 */
		if (n + el < outsize) {
			memcpy(out + n, e, el);
			put_len = n + el;
		}
		n += el;
	}
	if (outsize)
		out[put_len] = '\0';
	return n;
}

/**
 * cfs_script_now_ms() - CLOCK_MONOTONIC in milliseconds, for the writer
 *
 * Return: the time.
 */
uint64_t cfs_script_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void put(struct cfs_script_writer *w, const char *s, size_t len)
{
	if (!w->err && fwrite(s, 1, len, w->f) != len)
		w->err = errno ? -errno : -EIO;
}

/**
 * cfs_script_writer_new() - start a script
 * @f: where it goes (stays the caller's: closed by nobody here)
 * @node: the node recorded ("/dev/ttyUSB0"), written as the "d 0 NODE"
 *        line a replay without a node of its own uses; NULL for none
 * @now_ms: the time of the start (cfs_script_now_ms()): the first
 *          operation's MS counts from it
 * @out: filled with the writer
 *
 * Return: 0; -EINVAL for a @node with a newline; -ENOMEM; -errno of
 * writing @f.
 */
int cfs_script_writer_new(FILE *f, const char *node, uint64_t now_ms,
			  struct cfs_script_writer **out)
{
	struct cfs_script_writer *w;

	if (node && strchr(node, '\n'))
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->f = f;
	w->last_ms = now_ms;
	if (node) {
		put(w, "d 0 ", 4);
		put(w, node, strlen(node));
		put(w, "\n", 1);
	}
	if (!w->err && fflush(f))
		w->err = -errno;
	if (w->err) {
		int r = w->err;

		free(w);
		return r;
	}
	*out = w;
	return 0;
}

/**
 * cfs_script_writer_add() - record one read or write of the program
 * @w: the writer
 * @op: 'r' (the program read @buf) or 'w' (it wrote @buf)
 * @buf: the bytes
 * @len: their number (0: nothing recorded, as umockdev-record does)
 * @now_ms: the time of the operation (cfs_script_now_ms())
 *
 * The line is flushed at once, so a recording cut short by a crash keeps
 * what came before; its newline comes with the next block (or at
 * cfs_script_writer_finish()), since a block may still grow.
 *
 * Return: 0; -EINVAL for another @op; the first -errno of writing.
 */
int cfs_script_writer_add(struct cfs_script_writer *w, char op, const void *buf, size_t len,
			  uint64_t now_ms)
{
	char chunk[512];
	uint64_t delta;

	if (op != 'r' && op != 'w')
		return -EINVAL;
	if (!len)
		return w->err;
	delta = now_ms > w->last_ms ? now_ms - w->last_ms : 0;
	w->last_ms = now_ms;
	if (delta >= SCRIPT_MERGE_MS || op != w->op) {
		char head[40];
		int n = snprintf(head, sizeof(head), "%s%c %llu ", w->op ? "\n" : "", op,
				 (unsigned long long)delta);

		put(w, head, (size_t)n);
		w->op = op;
	}
	/* in pieces that never split an escape: at most 2 bytes of text a byte */
	for (size_t off = 0; off < len;) {
		size_t take = len - off < sizeof(chunk) / 2 - 1 ? len - off : sizeof(chunk) / 2 - 1;
		size_t n = cfs_script_escape((const char *)buf + off, take, chunk, sizeof(chunk));

		put(w, chunk, n);
		off += take;
	}
	if (!w->err && fflush(w->f))
		w->err = -errno;
	return w->err;
}

/**
 * cfs_script_writer_finish() - end the last line, flush and free the writer
 * @w: the writer (NULL: nothing)
 *
 * Return: 0, or the first -errno of writing the script.
 */
int cfs_script_writer_finish(struct cfs_script_writer *w)
{
	int r;

	if (!w)
		return 0;
	if (w->op)
		put(w, "\n", 1);
	if (!w->err && fflush(w->f))
		w->err = -errno;
	r = w->err;
	free(w);
	return r;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-util-text.c - src/util's text helpers: a log line made whole and
 * cut to its buffer, hex digits.
 */
#include <stdarg.h>
#include <string.h>

#include "harness.h"
#include "util.h"

static size_t line_of(char *buf, size_t size, const char *prefix, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = cfs_log_line(buf, size, prefix, fmt, ap);
	va_end(ap);
	return n;
}

TEST(log_line_whole)
{
	char buf[64];
	size_t n = line_of(buf, sizeof(buf), "classfs: ", "node %s: %d", "/dev/x", 7);

	CHECK_INT(n, strlen("classfs: node /dev/x: 7\n"));
	CHECK(!memcmp(buf, "classfs: node /dev/x: 7\n", n));
}

TEST(log_line_cut_to_fit)
{
	char buf[16];
	size_t n;

	memset(buf, 'z', sizeof(buf));
	/* the message cut, the newline kept, nothing written past the buffer */
	n = line_of(buf, sizeof(buf), "<4>", "%s", "a message far longer than the line");
	CHECK_INT(n, sizeof(buf) - 1);
	CHECK(!memcmp(buf, "<4>a message f\n", n));
	/* a prefix longer than the buffer: still one line, ending in '\n' */
	n = line_of(buf, 8, "0123456789", "%s", "x");
	CHECK_INT(n, 7);
	CHECK(!memcmp(buf, "012345\n", n));
	/* an empty message */
	n = line_of(buf, sizeof(buf), "", "%s", "");
	CHECK_INT(n, 1);
	CHECK(buf[0] == '\n');
}

TEST(hex_digits)
{
	CHECK_INT(cfs_hex_digit('0'), 0);
	CHECK_INT(cfs_hex_digit('9'), 9);
	CHECK_INT(cfs_hex_digit('a'), 10);
	CHECK_INT(cfs_hex_digit('F'), 15);
	CHECK_INT(cfs_hex_digit('g'), -1);
	CHECK_INT(cfs_hex_digit('\0'), -1);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * text.c - numbers, device node names and tag lists as the kernel's
 * `uevent` files and udev's database write them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "util.h"

/**
 * cfs_utf8_valid() - are @len bytes at @s well-formed UTF-8?
 *
 * As RFC 3629 has it: no overlong form, no surrogate (U+D800..DFFF),
 * nothing above U+10FFFF, no sequence cut short.  Names must be (a JSON
 * document, udev and Python's str take them as text).
 */
bool cfs_utf8_valid(const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;

	while (p < end) {
		unsigned char c = *p;
		size_t n;
		unsigned int lo = 0x80, hi = 0xbf;	/* the second byte's range */

		if (c < 0x80) {
			p++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
		else
			return false;
		if ((size_t)(end - p) <= n || p[1] < lo || p[1] > hi)
			return false;
		for (size_t k = 2; k <= n; k++)
			if ((p[k] & 0xc0) != 0x80)
				return false;
		p += n + 1;
	}
	return true;
}

/**
 * cfs_parse_uint() - @len bytes at @s as a decimal number of at most @max
 * Only digits, at most 10 of them (no sign, no space, no base prefix).
 * Return: false when the text is not such a number or the number is above @max.
 */
bool cfs_parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!len || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

/**
 * cfs_dev_rel_name() - "/dev/input/event5" or "input/event5" as
 * "input/event5" in @buf
 * Return: false when the name is empty, absolute elsewhere, too long, or
 * has an empty, "." or ".." component.
 */
bool cfs_dev_rel_name(const char *devname, char *buf, size_t size)
{
	const char *s = devname;

	if (!s)
		return false;
	if (!strncmp(s, "/dev/", 5))
		s += 5;
	if (!*s || *s == '/')
		return false;
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p && !*++p)
			return false;	/* a trailing '/' */
	}
	return snprintf(buf, size, "%s", s) < (int)size;
}

/**
 * cfs_put_tags() - udev's ":a:b:" tag list @tags (or NULL) as database
 * lines "@tag:a", "@tag:b", one per tag
 */
void cfs_put_tags(FILE *f, char tag, const char *tags)
{
	for (const char *s = tags; s && *s;) {
		size_t n = strcspn(s, ":");

		if (n)
			fprintf(f, "%c:%.*s\n", tag, (int)n, s);
		s += n;
		if (*s)
			s++;
	}
}

/**
 * cfs_hex_digit() - the value of hex digit @c (either case), or -1
 */
int cfs_hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/**
 * cfs_log_line() - @prefix and the message of @fmt as one line in @buf
 * (cut to fit, ending in '\n', not NUL-terminated), to be written whole
 * with one call: whole lines in a log that other processes share
 * @size: @buf's size, at least 2.
 *
 * Return: the line's length.
 */
size_t cfs_log_line(char *buf, size_t size, const char *prefix, const char *fmt, va_list ap)
{
	int n = snprintf(buf, size, "%s", prefix);

	if (n < 0)
		n = 0;
	if ((size_t)n < size - 1) {
		int m = vsnprintf(buf + n, size - (size_t)n - 1, fmt, ap);

		n += m > 0 ? m : 0;
	}
	if ((size_t)n > size - 2)
		n = (int)size - 2;
	buf[n++] = '\n';
	return (size_t)n;
}

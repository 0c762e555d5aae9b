// SPDX-License-Identifier: LGPL-2.1-or-later
/* log.c - what the node emulation tells its user, one line each on stderr */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "classfs-internal/devio.h"
#include "util.h"

/**
 * cfs_devio_log() - one line on stderr, prefixed "classfs: "
 * @fmt: printf format of the line, without its newline.
 *
 * The line is written with one write (a line of its own even while other
 * processes share stderr).
 */
void cfs_devio_log(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	size_t n;

	va_start(ap, fmt);
	n = cfs_log_line(line, sizeof(line), "classfs: ", fmt, ap);
	va_end(ap);
	fwrite(line, 1, n, stderr);
	fflush(stderr);
}

/**
 * cfs_once() - whether @key is new to @o (and remember it): what is told
 * once per request, so that a user extends a recording rather than reads
 * a flood
 * Return: true the first time (also when out of memory: then it is told
 * again next time, which is no harm), false after.
 */
bool cfs_once(struct cfs_once *o, unsigned long key)
{
	for (size_t i = 0; i < o->n; i++)
		if (o->seen[i] == key)
			return false;
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 8;
		unsigned long *p = reallocarray(o->seen, cap, sizeof(*p));

		if (!p)
			return true;
		o->seen = p;
		o->cap = cap;
	}
	o->seen[o->n++] = key;
	return true;
}

void cfs_once_free(struct cfs_once *o)
{
	free(o->seen);
	*o = (struct cfs_once){ 0 };
}

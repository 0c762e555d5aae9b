// SPDX-License-Identifier: LGPL-2.1-or-later
/* log.c - what the node emulation tells its user, one line each on stderr */
#include <stdarg.h>
#include <stdio.h>

#include "classfs-internal/devio.h"

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
	int n;

	n = snprintf(line, sizeof(line), "classfs: ");
	va_start(ap, fmt);
	n += vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fwrite(line, 1, (size_t)n, stderr);
	fflush(stderr);
}

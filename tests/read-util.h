/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * read-util.h - reading a file as the tests' readers do: in one read(),
 * as a sysfs reader takes a value, or whole, until read() gives 0.  Both
 * NUL-terminate what they got (@size - 1 bytes at most).
 */
#ifndef CLASSFS_TEST_READ_UTIL_H
#define CLASSFS_TEST_READ_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

/* one read() of the file at @path from its start: length or -errno */
static inline ssize_t tu_read_once(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/* the whole file at @path, read() after read() until 0: length or -errno */
static inline ssize_t tu_read_whole(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf + got, size - 1 - got)) > 0)
		got += (size_t)n;
	if (n < 0)
		n = -errno;
	close(fd);
	if (n < 0)
		return n;
	buf[got] = '\0';
	return (ssize_t)got;
}

/* the whole file through descriptor @fd from offset 0: length or -errno */
static inline ssize_t tu_pread_whole(int fd, char *buf, size_t size)
{
	size_t got = 0;
	ssize_t n;

	while ((n = pread(fd, buf + got, size - 1 - got, (off_t)got)) > 0)
		got += (size_t)n;
	if (n < 0)
		return -errno;
	buf[got] = '\0';
	return (ssize_t)got;
}

#endif

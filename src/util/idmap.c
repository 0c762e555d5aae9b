// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * idmap.c - the id maps of a user namespace the calling process just
 * made (classfs-run's holder, the Python package's own namespaces).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

/** cfs_write_text_file() - write @text to the existing file @path in one write; 0 or -errno */
int cfs_write_text_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), r = 0;
	size_t len = strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len)
		r = -errno;
	close(fd);
	return r;
}

/**
 * cfs_idmap_write() - map @inner_uid and @inner_gid of the calling
 * process's new user namespace to @uid and @gid outside, one id each
 *
 * setgroups is denied first: a process with no right to setgroups() may
 * map its gid only with setgroups denied.
 * Return: 0 or -errno of the first write that failed.
 */
int cfs_idmap_write(uid_t inner_uid, uid_t uid, gid_t inner_gid, gid_t gid)
{
	char map[64];
	int r;

	r = cfs_write_text_file("/proc/self/setgroups", "deny");
	if (r < 0)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)inner_uid, (unsigned int)uid);
	r = cfs_write_text_file("/proc/self/uid_map", map);
	if (r < 0)
		return r;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned int)inner_gid, (unsigned int)gid);
	return cfs_write_text_file("/proc/self/gid_map", map);
}

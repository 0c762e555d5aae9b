// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * devdir.c - files made below a directory and never beside it: the
 * private /dev and the udev database of a classfs-run environment.
 *
 * Names come from records and from devices other uids publish.  Every
 * directory on the way is opened with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV) from the root's descriptor, so a
 * symlink such as /dev/fd (to /proc/self/fd) or a mount such as /dev/pts
 * is never walked through; the last component is made, replaced or
 * removed with the *at() calls, which act on the entry itself.  A new
 * entry is made under a temporary name and renamed into place: a reader
 * never sees half of it, and what it replaces is only ever an entry of
 * the directory, never what a link there points to.
 *
 * Which names a device may have: the rules of the private /dev (the
 * host's nodes stay the host's, the environment's own entries are not
 * anybody's to take).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "run-internal.h"

#define TMP_SUFFIX ".classfs-run~"

/* the host's nodes bound into the private /dev: a device of that name keeps the host's */
static const char *const host_names[] = {
	"null", "zero", "full", "random", "urandom", "tty", "ptmx",
};
/* the environment's own entries (and what is below them): nobody's to take */
static const char *const own_names[] = { "fd", "stdin", "stdout", "stderr", "pts", "shm" };

static bool first_component_is(const char *rel, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(rel, name, n) && (rel[n] == '\0' || rel[n] == '/');
}

/**
 * cfs_dev_name_kind() - what a name relative to /dev is to the private /dev
 * @rel: "sda", "input/event5" (already checked by cfs_dev_rel_name()).
 * Return: %CFS_DEV_NAME_HOST for a host node a device of that name leaves
 * in place, %CFS_DEV_NAME_OWN for an entry of the environment itself (fd,
 * stdin, stdout, stderr, pts, shm, or below them), else %CFS_DEV_NAME_FREE.
 */
enum cfs_dev_name cfs_dev_name_kind(const char *rel)
{
	for (size_t i = 0; i < sizeof(own_names) / sizeof(own_names[0]); i++)
		if (first_component_is(rel, own_names[i]))
			return CFS_DEV_NAME_OWN;
	for (size_t i = 0; i < sizeof(host_names) / sizeof(host_names[0]); i++)
		if (!strcmp(rel, host_names[i]))
			return CFS_DEV_NAME_HOST;
	return CFS_DEV_NAME_FREE;
}

/* the directory @name below @dirfd: no symlink, no "..", no other mount on the way */
static int open_beneath(int dirfd, const char *name)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

/*
 * The directory holding @rel below @root, made when @create (mode 0755,
 * as udev makes them); *@leaf points at @rel's last component.
 * Return: a descriptor to close, or -errno (-ELOOP: a symlink on the way,
 * -EXDEV: a mount on the way).
 */
static int open_parent(int root, const char *rel, bool create, const char **leaf)
{
	char buf[PATH_MAX], *p, *slash;
	int fd, r;

	if (snprintf(buf, sizeof(buf), "%s", rel) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	fd = open_beneath(root, ".");
	if (fd < 0)
		return fd;
	for (p = buf; (slash = strchr(p, '/')); p = slash + 1) {
		int next;

		*slash = '\0';
		if (create && mkdirat(fd, p, 0755) < 0 && errno != EEXIST) {
			r = -errno;
			close(fd);
			return r;
		}
		next = open_beneath(fd, p);
		close(fd);
		if (next < 0)
			return next;
		fd = next;
	}
	*leaf = rel + (p - buf);
	return fd;
}

/* @leaf's temporary name, beside it */
static int tmp_name(const char *leaf, char *buf, size_t size)
{
	return snprintf(buf, size, "%s" TMP_SUFFIX, leaf) < (int)size ? 0 : -ENAMETOOLONG;
}

/* move the temporary entry @tmp over @leaf in @dirfd; on failure it goes */
static int put_in_place(int dirfd, const char *tmp, const char *leaf)
{
	int r = 0;

	if (renameat(dirfd, tmp, dirfd, leaf) < 0) {
		r = -errno;
		unlinkat(dirfd, tmp, 0);
	}
	return r;
}

/**
 * cfs_devdir_mknod() - make the device node @rel below @root (its
 * directories too), replacing the entry there
 * @mode: S_IFCHR or S_IFBLK and the permission bits.
 * Return: 0 or -errno (-ELOOP, -EXDEV: a symlink or a mount on the way;
 * -EISDIR, -EBUSY: a directory or a mount point at @rel).
 */
int cfs_devdir_mknod(int root, const char *rel, mode_t mode, dev_t devt)
{
	char tmp[NAME_MAX + 1];
	const char *leaf;
	int fd = open_parent(root, rel, true, &leaf), r;

	if (fd < 0)
		return fd;
	r = tmp_name(leaf, tmp, sizeof(tmp));
	if (r == 0) {
		unlinkat(fd, tmp, 0);
		if (mknodat(fd, tmp, mode, devt) < 0)
			r = -errno;
		else if (fchmodat(fd, tmp, mode & 07777, 0) < 0)
			r = -errno;	/* the umask is not udev's business */
		if (r < 0)
			unlinkat(fd, tmp, 0);
		else
			r = put_in_place(fd, tmp, leaf);
	}
	close(fd);
	return r;
}

/**
 * cfs_devdir_symlink() - the symlink @rel below @root with text @target,
 * replacing the entry there.  Return: 0 or -errno.
 */
int cfs_devdir_symlink(int root, const char *target, const char *rel)
{
	char tmp[NAME_MAX + 1];
	const char *leaf;
	int fd = open_parent(root, rel, true, &leaf), r;

	if (fd < 0)
		return fd;
	r = tmp_name(leaf, tmp, sizeof(tmp));
	if (r == 0) {
		unlinkat(fd, tmp, 0);
		if (symlinkat(target, fd, tmp) < 0)
			r = -errno;
		else
			r = put_in_place(fd, tmp, leaf);
	}
	close(fd);
	return r;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/**
 * cfs_devdir_write() - the regular file @rel below @root holding @len bytes
 * of @data with permission bits @mode, replacing the entry there.
 * Return: 0 or -errno.
 */
int cfs_devdir_write(int root, const char *rel, const void *data, size_t len, mode_t mode)
{
	char tmp[NAME_MAX + 1];
	const char *leaf;
	int dirfd = open_parent(root, rel, true, &leaf), fd, r;

	if (dirfd < 0)
		return dirfd;
	r = tmp_name(leaf, tmp, sizeof(tmp));
	if (r < 0)
		goto out;
	unlinkat(dirfd, tmp, 0);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	r = write_all(fd, data, len);
	if (r == 0 && fchmod(fd, mode & 07777) < 0)
		r = -errno;
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r < 0)
		unlinkat(dirfd, tmp, 0);
	else
		r = put_in_place(dirfd, tmp, leaf);
out:
	close(dirfd);
	return r;
}

/**
 * cfs_devdir_unlink() - remove the entry @rel below @root (a link itself,
 * never what it points to).  Return: 0 or -errno (-ENOENT when absent).
 */
int cfs_devdir_unlink(int root, const char *rel)
{
	const char *leaf;
	int fd = open_parent(root, rel, false, &leaf), r = 0;

	if (fd < 0)
		return fd;
	if (unlinkat(fd, leaf, 0) < 0)
		r = -errno;
	close(fd);
	return r;
}

/**
 * cfs_devdir_readlink() - the text of the symlink @rel below @root, in @buf
 * Return: its length, or -errno.
 */
ssize_t cfs_devdir_readlink(int root, const char *rel, char *buf, size_t size)
{
	const char *leaf;
	int fd = open_parent(root, rel, false, &leaf);
	ssize_t n;

	if (fd < 0)
		return fd;
	if (size == 0)
		n = -ERANGE;
	else if ((n = readlinkat(fd, leaf, buf, size - 1)) < 0)
		n = -errno;
	else
		buf[n] = '\0';
	close(fd);
	return n;
}

/* @len bytes at @s as a name relative to /dev in @buf; false when it is not one */
static bool line_name(const char *s, size_t len, char *buf, size_t size)
{
	char raw[PATH_MAX];

	if (len >= sizeof(raw))
		return false;
	memcpy(raw, s, len);
	raw[len] = '\0';
	return cfs_dev_rel_name(raw, buf, size);
}

/**
 * cfs_dev_check_record() - refuse a record whose nodes or links would
 * take an entry of the environment itself
 * @data: the record's @len bytes.
 * @file: its name, for the message.
 * @msg: told which line and why.
 * @msgsize: its size.
 *
 * A device's node (`N:`, `E: DEVNAME=`) may not be fd, stdin, stdout,
 * stderr, pts or shm, or below them; a host node's name (null, ptmx...)
 * is allowed there: such a device keeps the host's node.  A link (`S:`)
 * may be none of those.  What the record loader refuses is left to it.
 * Return: 0, or -EINVAL with @msg set to "FILE:LINE: ...".
 */
int cfs_dev_check_record(const char *data, size_t len, const char *file, char *msg,
			 size_t msgsize)
{
	unsigned long lineno = 0;

	for (const char *s = data, *end = data + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *e = nl ? nl : end;
		size_t n = (size_t)(e - s);
		char rel[PATH_MAX];
		enum cfs_dev_name kind;
		bool link = false;

		lineno++;
		if (n > 3 && !memcmp(s, "N: ", 3)) {
			const char *eq = memchr(s + 3, '=', n - 3);

			n = (size_t)((eq ? eq : e) - (s + 3));
		} else if (n > 3 && !memcmp(s, "S: ", 3)) {
			n -= 3;
			link = true;
		} else if (n > 11 && !memcmp(s, "E: DEVNAME=", 11)) {
			s += 8;
			n -= 11;
		} else {
			s = nl ? nl + 1 : end;
			continue;
		}
		if (line_name(s + 3, n, rel, sizeof(rel)) &&
		    (kind = cfs_dev_name_kind(rel)) != CFS_DEV_NAME_FREE &&
		    (link || kind == CFS_DEV_NAME_OWN)) {
			snprintf(msg, msgsize,
				 "%s:%lu: %s /dev/%s: that name is the environment's own /dev entry "
				 "(fd, stdin, stdout, stderr, ptmx, pts, shm, the host's nodes)",
				 file, lineno, link ? "link" : "node", rel);
			return -EINVAL;
		}
		s = nl ? nl + 1 : end;
	}
	return 0;
}

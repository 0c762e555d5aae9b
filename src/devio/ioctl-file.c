// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ioctl-file.c - a umockdev ioctl recording loaded for a node: its
 * "@DEV" line says which node it was recorded from and in which format
 * ("@DEV /dev/spidev0.0 (SPI)": an SPI transfer log; no format: an ioctl
 * tree, which may also come without any "@DEV" line), as umockdev's
 * umockdev_testbed_load_ioctl() reads it.
 *
 * Refused where umockdev-run refuses too, with a message saying why: a
 * recording of another node, an empty one (umockdev-run -i
 * NODE=/dev/null), one that is not a recording at all; and, where
 * umockdev would read on silently, a line it could not parse.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ioctl-tree.h"

/* a recording larger than this is no recording (umockdev's largest: 1 MB) */
#define FILE_MAX (256u << 20)

/* the first line not a comment, and its number: umockdev's header */
static const char *first_line(const char *text, size_t len, size_t *line_len,
			      unsigned int *lineno)
{
	size_t pos = 0;

	*lineno = 0;
	while (pos < len) {
		const char *line = text + pos, *nl = memchr(line, '\n', len - pos);
		size_t l = nl ? (size_t)(nl - line) : len - pos;

		++*lineno;
		pos += l + 1;
		while (l && strchr(" \t\r", line[l - 1]))
			l--;
		if (l && line[0] != '#') {
			*line_len = l;
			return line;
		}
	}
	return NULL;
}

/**
 * cfs_ioctl_text_load() - a handler answering ioctl() of @node from a
 *                         recording's text
 * @text: the recording (need not end in NUL).
 * @len: its length.
 * @name: its file name, for messages.
 * @node: the node it is loaded for; NULL: whichever its "@DEV" names.
 * @out: filled in on success.
 * @msg: the reason on -EINVAL ("NAME:LINE: reason", or "NAME: reason" of
 *       the whole file).
 * @msgsize: @msg's size.
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
/*
 * The "@DEV" header of a recording, if any, checked against @node (NULL:
 * any).  Return: 0 (an ioctl tree follows), 1 (an SPI log), -EINVAL
 * (@msg says why).
 */
static int check_header(const char *text, size_t len, const char *name, const char *node,
			char *msg, size_t msgsize)
{
	const char *line, *dev, *format = NULL;
	size_t l, dev_len, format_len = 0;
	unsigned int lineno;

	line = first_line(text, len, &l, &lineno);
	if (!line || l < 4 || memcmp(line, "@DEV", 4) || (l > 4 && line[4] != ' '))
		return 0;
	dev = line + 4 + (l > 4);
	dev_len = l - 4 - (l > 4);
	/* "@DEV PATH (FORMAT)": the format in the last parentheses */
	if (dev_len && dev[dev_len - 1] == ')') {
		for (size_t i = dev_len - 1; i-- > 0;) {
			if (dev[i] == '(' && i > 0 && dev[i - 1] == ' ') {
				format = dev + i + 1;
				format_len = dev_len - i - 2;
				dev_len = i - 1;
				break;
			}
		}
	}
	if (!dev_len || memchr(dev, ' ', dev_len)) {
		snprintf(msg, msgsize, "%s:%u: \"@DEV\" names no node", name, lineno);
		return -EINVAL;
	}
	if (node && (strlen(node) != dev_len || memcmp(node, dev, dev_len))) {
		snprintf(msg, msgsize, "%s:%u: a recording of %.*s, not of %s", name, lineno,
			 (int)dev_len, dev, node);
		return -EINVAL;
	}
	if (format && format_len == 3 && !memcmp(format, "SPI", 3))
		return 1;
	if (format) {
		snprintf(msg, msgsize, "%s:%u: \"%.*s\" is no format of ioctl recordings "
			 "(SPI, or none for an ioctl tree)", name, lineno, (int)format_len, format);
		return -EINVAL;
	}
	return 0;
}

int cfs_ioctl_text_load(const char *text, size_t len, const char *name, const char *node,
			struct cfs_ioctl_handler *out, char *msg, size_t msgsize)
{
	struct cfs_ioctl_tree *t;
	int err;

	err = check_header(text, len, name, node, msg, msgsize);
	if (err < 0)
		return err;
	if (err == 1)
		return spi_text_load(text, len, name, out, msg, msgsize);
	err = ioctl_tree_parse(text, len, name, &t, msg, msgsize);
	if (err)
		return err;
	if (!t->root) {
		/* umockdev-run refuses an empty recording (-i NODE=/dev/null) too */
		snprintf(msg, msgsize, "%s: no ioctl in the recording (%s)", name,
			 len ? "only comments and metadata" : "an empty file");
		cfs_ioctl_tree_free(t);
		return -EINVAL;
	}
	err = ioctl_tree_handler(t, name, out);
	if (err)
		snprintf(msg, msgsize, "%s: out of memory", name);
	return err;
}

/* @path's contents, NUL-terminated: 0 or -errno */
static int read_file(const char *path, char **text, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = NULL, *p;
	struct stat st;
	ssize_t r;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	for (;;) {
		if (n + 1 >= cap || !buf) {
			if (buf)
				cap *= 2;
			if (cap > FILE_MAX) {
				err = -EFBIG;
				goto out;
			}
			p = realloc(buf, cap);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			buf = p;
		}
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			goto out;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*text = buf;
	*len = n;
	buf = NULL;
out:
	free(buf);
	close(fd);
	return err;
}

/* @path's text: 0, or -errno with @msg naming @path (an xz-compressed file: -EINVAL) */
static int read_text(const char *path, char **text, size_t *len, char *msg, size_t msgsize)
{
	static const char xz_magic[] = { '\xfd', '7', 'z', 'X', 'Z', '\0' };
	int err = read_file(path, text, len);

	if (err) {
		snprintf(msg, msgsize, "%s: %s", path, strerror(-err));
		return err;
	}
	/* umockdev unpacks these with xz(1); we read text only */
	if (*len >= sizeof(xz_magic) && !memcmp(*text, xz_magic, sizeof(xz_magic))) {
		snprintf(msg, msgsize, "%s: xz-compressed: unpack it first (xz -dk %s)", path,
			 path);
		free(*text);
		*text = NULL;
		return -EINVAL;
	}
	return 0;
}

/**
 * cfs_ioctl_file_load() - a handler answering ioctl() of @node from the
 *                         recording at @path
 * @path: the recording.
 * @node: the node it is loaded for; NULL: whichever its "@DEV" names.
 * @out: filled in on success.
 * @msg: the reason of a failure ("PATH:LINE: reason", "PATH: reason").
 * @msgsize: @msg's size.
 *
 * Return: 0, -EINVAL (not a recording for @node), -ENOMEM, or the -errno
 * of reading @path (-ENOENT, -EACCES, -EISDIR, -EFBIG, ...).
 */
int cfs_ioctl_file_load(const char *path, const char *node, struct cfs_ioctl_handler *out,
			char *msg, size_t msgsize)
{
	size_t len = 0;
	char *text = NULL;
	int err;

	err = read_text(path, &text, &len, msg, msgsize);
	if (err)
		return err;
	err = cfs_ioctl_text_load(text, len, path, node, out, msg, msgsize);
	free(text);
	return err;
}

/**
 * cfs_ioctl_file_tree() - the ioctl tree recorded in @path, for a
 *                         recorder to add to (umockdev-record appends)
 * @path: an existing recording.
 * @node: the node recorded: a file of another node's is refused.
 * @out: receives the tree (cfs_ioctl_tree_free() it).
 * @msg: the reason of a failure ("PATH:LINE: reason", "PATH: reason").
 * @msgsize: @msg's size.
 *
 * Return: 0, -EINVAL (not an ioctl tree of @node: an SPI log, another
 * node's, a line that does not parse), -ENOMEM, or the -errno of reading
 * @path.
 */
int cfs_ioctl_file_tree(const char *path, const char *node, struct cfs_ioctl_tree **out,
			char *msg, size_t msgsize)
{
	size_t len = 0;
	char *text = NULL;
	int err;

	err = read_text(path, &text, &len, msg, msgsize);
	if (err)
		return err;
	err = check_header(text, len, path, node, msg, msgsize);
	if (err == 1) {
		snprintf(msg, msgsize, "%s: an SPI transfer log: only an ioctl tree can be added to",
			 path);
		err = -EINVAL;
	}
	if (!err)
		err = ioctl_tree_parse(text, len, path, out, msg, msgsize);
	free(text);
	return err;
}

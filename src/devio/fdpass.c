// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fdpass.c - one message on a Unix socket with at most one descriptor
 * beside it (SCM_RIGHTS): a child's seccomp listener to its supervisor,
 * classfs-run's node server and its clients.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "classfs-internal/devio.h"

/**
 * cfs_send_fd() - send @iov as one message, with @fd beside it
 * @sock: a connected Unix socket.
 * @iov: the message's parts.
 * @iovcnt: how many.
 * @fd: the descriptor to pass, or -1 for none.
 *
 * Return: 0 or -errno (no SIGPIPE: -EPIPE).
 */
int cfs_send_fd(int sock, const struct iovec *iov, int iovcnt, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl = { 0 };
	struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };

	if (fd >= 0) {
		struct cmsghdr *c;

		m.msg_control = ctl.buf;
		m.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	while (sendmsg(sock, &m, MSG_NOSIGNAL) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

/**
 * cfs_recv_fd() - one message into @buf, and the descriptor beside it
 * @sock: a Unix socket.
 * @buf: receives the message (cut at @size).
 * @size: @buf's size.
 * @fd: receives the descriptor (close-on-exec), or -1 when none came.
 *
 * Return: the message's length (0: EOF), or -errno.
 */
ssize_t cfs_recv_fd(int sock, void *buf, size_t size, int *fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &m, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			memcpy(fd, CMSG_DATA(c), sizeof(int));
	return n;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * send.c - multicast an event in udev's format on NETLINK_KOBJECT_UEVENT.
 *
 * Group 2 is where udevd announces processed events; libudev and
 * sd-device monitors (udevadm monitor --udev) accept messages there from
 * any root sender of their network namespace.  Group 1 is the kernel's:
 * listeners ignore it from userspace, so we never use it.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/netlink.h>

#include "wire-internal.h"

/**
 * classfs_netlink_udev_open() - a NETLINK_KOBJECT_UEVENT socket to send with
 *
 * Return: the descriptor, or -errno.
 */
int classfs_netlink_udev_open(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);

	return fd < 0 ? -errno : fd;
}

/**
 * classfs_netlink_udev_send() - send @ev in udev format to group 2
 * @fd: the socket.
 * @ev: the event.
 *
 * Return: 0, -EINVAL, -ENOMEM or the send's -errno.
 */
int classfs_netlink_udev_send(int fd, const struct classfs_uevent *ev)
{
	struct sockaddr_nl to = {
		.nl_family = AF_NETLINK,
		.nl_groups = CLASSFS_NETLINK_GROUP_UDEV,
	};
	char stack[CLASSFS_WIRE_MAX];
	char *buf = stack;
	size_t len;
	ssize_t n;
	int r = 0;

	if (fd < 0)
		return -EBADF;
	len = classfs_uevent_format_udev(ev, NULL, 0);
	if (!len)
		return -EINVAL;
	if (len > sizeof(stack)) {
		buf = malloc(len);
		if (!buf)
			return -ENOMEM;
	}
	classfs_uevent_format_udev(ev, buf, len);
	n = sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof(to));
	/* a multicast with nobody listening reports ECONNREFUSED: not a failure */
	if (n < 0 && errno != ECONNREFUSED)
		r = -errno;
	else if (n >= 0 && (size_t)n != len)
		r = -EMSGSIZE;
	if (buf != stack)
		free(buf);
	return r;
}

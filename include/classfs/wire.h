/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wire.h - uevents on the wire and on the screen.
 *
 * The two netlink forms an event takes on Linux (the kernel's
 * "ACTION@DEVPATH\0KEY=VALUE\0..." and udev's 40-byte "libudev" header
 * followed by KEY=VALUE\0 properties), their decoders, the text
 * `udevadm monitor --kernel --property` prints, one JSON object per
 * event, and a sender of udev-format messages to netlink group 2 (what
 * `udevadm monitor --udev` and libudev monitors listen to).
 *
 * Every function takes the core's struct classfs_uevent, whose envp holds
 * ACTION, DEVPATH, SUBSYSTEM, the device's variables and SEQNUM, in order.
 */
#ifndef CLASSFS_WIRE_H
#define CLASSFS_WIRE_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "classfs.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the udev netlink header: "libudev\0", then eight 32-bit words */
#define CLASSFS_UDEV_HEADER_SIZE	40
#define CLASSFS_UDEV_MAGIC		0xfeedcafeu
/* the netlink multicast groups of NETLINK_KOBJECT_UEVENT */
#define CLASSFS_NETLINK_GROUP_KERNEL	1u
#define CLASSFS_NETLINK_GROUP_UDEV	2u

/* the largest message the decoders take (udev's own receive buffer) */
#define CLASSFS_WIRE_MAX		8192
/* the most properties a decoded message may hold */
#define CLASSFS_WIRE_MAX_VARS		256

/**
 * struct classfs_wire_event - a decoded message
 * @ev: the event; its strings point into @buf and @envp, so it lives as
 *      long as this structure and does not move with a copy of it.
 * @devtype: the DEVTYPE property, or NULL.
 *
 * About 10 KiB: allocate it rather than put it on a small stack.
 */
struct classfs_wire_event {
	struct classfs_uevent ev;
	const char *devtype;
	const char *envp[CLASSFS_WIRE_MAX_VARS];
	char buf[CLASSFS_WIRE_MAX];
};

/**
 * classfs_uevent_format_udev() - the udev netlink message of @ev
 * @ev: an event with ACTION, DEVPATH, SUBSYSTEM and a non-zero SEQNUM
 *      among its variables.
 * @buf: where to write (may be NULL when @size is 0).
 * @size: room at @buf.
 *
 * The 40-byte header ("libudev\0", magic 0xfeedcafe big-endian,
 * header_size 40, properties_off 40, properties_len in host order,
 * MurmurHash2 (seed 0) of SUBSYSTEM and DEVTYPE big-endian, the bloom
 * filter of the TAGS property's tags, 0 without TAGS), then every
 * variable of @ev as KEY=VALUE\0, in order.
 *
 * Return: the bytes the message needs (nothing is written past @size),
 * or 0 when @ev lacks a required variable, has a malformed one or does
 * not agree with its own fields (devpath, subsystem, action, seqnum).
 */
CLASSFS_PUBLIC size_t classfs_uevent_format_udev(const struct classfs_uevent *ev, char *buf,
						  size_t size);

/**
 * classfs_uevent_decode_udev() - the event in a udev netlink message
 * @msg: the message, @len bytes.
 * @out: filled on success; untouched fields are unspecified on error.
 *
 * Checks the prefix, magic, header and properties bounds, the
 * properties (each KEY=VALUE, NUL-terminated, KEY not empty), the
 * required ACTION (a known action), DEVPATH, SUBSYSTEM and SEQNUM
 * (non-zero decimal), and the header's subsystem and devtype hashes.
 * Return: 0, -EBADMSG for a malformed message, -E2BIG when it is larger
 * than %CLASSFS_WIRE_MAX or has more than %CLASSFS_WIRE_MAX_VARS
 * properties, -EINVAL for NULL arguments.
 */
CLASSFS_PUBLIC int classfs_uevent_decode_udev(const void *msg, size_t len,
					      struct classfs_wire_event *out);

/**
 * classfs_uevent_decode_kernel() - the event in a kernel netlink message
 * ("ACTION@DEVPATH\0KEY=VALUE\0...", as classfs_uevent_format_kernel()
 * writes it)
 *
 * The head's ACTION and DEVPATH must match the ACTION and DEVPATH
 * variables; otherwise as classfs_uevent_decode_udev().
 * Return: as classfs_uevent_decode_udev().
 */
CLASSFS_PUBLIC int classfs_uevent_decode_kernel(const void *msg, size_t len,
						struct classfs_wire_event *out);

/**
 * classfs_uevent_print_monitor() - print @ev as `udevadm monitor --kernel
 * --property` does
 * @when: the event's time (udevadm shows CLOCK_MONOTONIC); NULL: now.
 *
 * "KERNEL[SECONDS.USEC] ACTION   DEVPATH (SUBSYSTEM)", each variable as
 * KEY=VALUE on a line of its own, then an empty line; flushed.  As
 * udevadm does, DEVNAME is shown absolute (/dev/...) and MAJOR, MINOR
 * (then TAGS, CURRENT_TAGS, DEVLINKS) after the other variables.
 * Return: 0, -EINVAL, or -EIO when @out failed.
 */
CLASSFS_PUBLIC int classfs_uevent_print_monitor(const struct classfs_uevent *ev,
						const struct timespec *when, FILE *out);

/**
 * classfs_uevent_print_json() - print @ev as one line of JSON
 * @when: as for classfs_uevent_print_monitor().
 *
 * {"seqnum":N,"action":"add","devpath":"...","subsystem":"...",
 *  "usec":MONOTONIC_USEC,"properties":{"ACTION":"add",...}} and a newline
 * (docs/json.md); flushed.
 * Return: 0, -EINVAL, -ENOMEM, or -EIO when @out failed.
 */
CLASSFS_PUBLIC int classfs_uevent_print_json(const struct classfs_uevent *ev,
					     const struct timespec *when, FILE *out);

/**
 * classfs_netlink_udev_open() - a NETLINK_KOBJECT_UEVENT socket to send with
 *
 * Sending to a multicast group needs CAP_NET_ADMIN in the socket's
 * network namespace; the event reaches every listener of that namespace:
 * tests must use a private one (unshare -n).
 * Return: the descriptor (close-on-exec), or -errno.
 */
CLASSFS_PUBLIC int classfs_netlink_udev_open(void);

/**
 * classfs_netlink_udev_send() - send @ev in udev format to group 2
 * @fd: from classfs_netlink_udev_open().
 *
 * Having no listener is not an error.
 * Return: 0, -EINVAL (@ev not encodable, see classfs_uevent_format_udev()),
 * -ENOMEM, or the send's -errno (-EPERM without CAP_NET_ADMIN).
 */
CLASSFS_PUBLIC int classfs_netlink_udev_send(int fd, const struct classfs_uevent *ev);

#ifdef __cplusplus
}
#endif
#endif

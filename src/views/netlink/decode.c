// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * decode.c - from netlink bytes back to an event: the kernel form
 * ("ACTION@DEVPATH\0KEY=VALUE\0...") and the udev form (header, then
 * KEY=VALUE\0 properties).
 *
 * Messages come from other processes (or a fuzzer): every length and
 * offset is checked before use, nothing is read past @len, and the
 * result points only into the caller's struct classfs_wire_event.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "wire-internal.h"

/*
 * Split the @len bytes at @props (already copied into out->buf) into
 * NUL-terminated strings, then check them as an event.
 */
static int split_props(struct classfs_wire_event *out, char *props, size_t len)
{
	struct cfs_wire_fields f;
	size_t off = 0;
	int n = 0;

	if (!len || props[len - 1] != '\0')
		return -EBADMSG;	/* the last property must be terminated */
	while (off < len) {
		size_t l = strlen(props + off);

		if (!l)
			return -EBADMSG;	/* an empty string is no KEY=VALUE */
		if (n == CLASSFS_WIRE_MAX_VARS)
			return -E2BIG;
		out->envp[n++] = props + off;
		off += l + 1;
	}
	if (cfs_wire_scan(out->envp, n, &f))
		return -EBADMSG;
	out->ev = (struct classfs_uevent){
		.seqnum = f.seqnum,
		.action = (enum classfs_action)f.action_id,
		.devpath = f.devpath,
		.subsystem = f.subsystem,
		.envc = n,
		.envp = out->envp,
	};
	out->devtype = f.devtype;
	return 0;
}

/**
 * classfs_uevent_decode_kernel() - the event in a kernel netlink message
 * @msg: the message.
 * @len: its length.
 * @out: the decoded event.
 *
 * Return: 0, -EBADMSG, -E2BIG, -EINVAL.
 */
int classfs_uevent_decode_kernel(const void *msg, size_t len, struct classfs_wire_event *out)
{
	const char *head, *at, *action, *devpath;
	size_t hl;
	int r;

	if (!msg || !out)
		return -EINVAL;
	if (len > sizeof(out->buf))
		return -E2BIG;
	if (!len)
		return -EBADMSG;
	memcpy(out->buf, msg, len);
	head = out->buf;
	hl = strnlen(head, len);
	if (hl == len)
		return -EBADMSG;	/* the head is not terminated */
	if (!memcmp(head, "libudev", 8))
		return -EBADMSG;	/* a udev message, not a kernel one */
	at = memchr(head, '@', hl);
	if (!at || at == head)
		return -EBADMSG;
	r = split_props(out, out->buf + hl + 1, len - hl - 1);
	if (r)
		return r;
	/* the head repeats ACTION and DEVPATH: they must agree */
	action = classfs_action_name(out->ev.action);
	devpath = out->ev.devpath;
	if ((size_t)(at - head) != strlen(action) || memcmp(head, action, strlen(action)) ||
	    strcmp(at + 1, devpath))
		return -EBADMSG;
	return 0;
}

static uint32_t word(const char *p)
{
	uint32_t w;

	memcpy(&w, p, 4);
	return w;
}

/**
 * classfs_uevent_decode_udev() - the event in a udev netlink message
 * @msg: the message.
 * @len: its length.
 * @out: the decoded event.
 *
 * Return: 0, -EBADMSG, -E2BIG, -EINVAL.
 */
int classfs_uevent_decode_udev(const void *msg, size_t len, struct classfs_wire_event *out)
{
	const char *m = msg;
	uint32_t hsize, off, plen, subsys_hash, devtype_hash;
	int r;

	if (!msg || !out)
		return -EINVAL;
	if (len > sizeof(out->buf))
		return -E2BIG;
	if (len < CLASSFS_UDEV_HEADER_SIZE || memcmp(m, "libudev", 8) ||
	    be32toh(word(m + 8)) != CLASSFS_UDEV_MAGIC)
		return -EBADMSG;
	hsize = word(m + 12);
	off = word(m + 16);
	plen = word(m + 20);
	subsys_hash = be32toh(word(m + 24));
	devtype_hash = be32toh(word(m + 28));
	/* a longer header is a later version: its extra words are skipped */
	if (hsize < CLASSFS_UDEV_HEADER_SIZE || off < hsize || off > len || plen > len - off)
		return -EBADMSG;
	memcpy(out->buf, m + off, plen);
	r = split_props(out, out->buf, plen);
	if (r)
		return r;
	if (subsys_hash != cfs_wire_murmur2(out->ev.subsystem) ||
	    devtype_hash != (out->devtype ? cfs_wire_murmur2(out->devtype) : 0))
		return -EBADMSG;
	return 0;
}

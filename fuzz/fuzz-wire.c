// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-wire.c - the event decoders (udev and kernel netlink formats) take
 * any bytes; what they accept must encode again and decode to the same
 * event (decode what we encode).  The first input byte picks the format.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "classfs/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_event(const struct classfs_uevent *a, const struct classfs_uevent *b)
{
	if (a->seqnum != b->seqnum || a->action != b->action || a->envc != b->envc ||
	    strcmp(a->devpath, b->devpath) || strcmp(a->subsystem, b->subsystem))
		abort();
	for (int i = 0; i < a->envc; i++)
		if (strcmp(a->envp[i], b->envp[i]))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct classfs_wire_event ev, again;
	static char buf[2 * CLASSFS_WIRE_MAX];
	size_t len;
	int r;

	if (size < 1)
		return 0;
	if (data[0] & 1)
		r = classfs_uevent_decode_udev(data + 1, size - 1, &ev);
	else
		r = classfs_uevent_decode_kernel(data + 1, size - 1, &ev);
	if (r < 0)
		return 0;
	/* accepted: the udev form of it decodes to the same event */
	len = classfs_uevent_format_udev(&ev.ev, buf, sizeof(buf));
	if (len == 0 || len > sizeof(buf))
		abort();
	if (classfs_uevent_decode_udev(buf, len, &again) < 0)
		abort();
	same_event(&ev.ev, &again.ev);
	/* and so does its kernel form */
	len = classfs_uevent_format_kernel(&ev.ev, buf, sizeof(buf));
	if (len > sizeof(buf) || classfs_uevent_decode_kernel(buf, len, &again) < 0)
		abort();
	same_event(&ev.ev, &again.ev);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fuzz-protocol.c - the control protocol's decoder takes any bytes; what
 * it accepts must hold together: every repeated record (attribute, event,
 * nested request) decodes on its own, the counts agree, and the message
 * cut by one byte (its header's length fixed) is refused.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "protocol.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned int count_and_check(const struct cfs_msg *m, uint16_t tag)
{
	const uint8_t *v;
	size_t off = 0, len;
	unsigned int n = 0;

	while (cfs_msg_next(m, &off, tag, &v, &len)) {
		struct cfs_attr a;
		struct cfs_event ev;
		struct cfs_msg sub;

		if ((tag == CFS_T_ATTR && cfs_attr_decode(v, len, &a) < 0) ||
		    (tag == CFS_T_EVENT && cfs_event_decode(v, len, &ev) < 0) ||
		    (tag == CFS_T_SUB && cfs_msg_decode(v, len, &sub) < 0))
			abort();
		n++;
	}
	return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cfs_msg m;
	uint8_t *copy;

	if (cfs_msg_decode(data, size, &m) < 0)
		return 0;
	if (count_and_check(&m, CFS_T_ATTR) != m.nattrs ||
	    count_and_check(&m, CFS_T_EVENT) != m.nevents ||
	    count_and_check(&m, CFS_T_SUB) != m.nsubs || m.op == 0 || m.op >= CFS_OP_COUNT)
		abort();
	/* one byte short, header agreeing: the last field (or the header) no longer fits */
	copy = malloc(size);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (size - 1 >= CFS_HDR_SIZE) {
		uint32_t l = (uint32_t)(size - 1);

		memcpy(copy + 16, &l, 4);
	}
	if (cfs_msg_decode(copy, size - 1, &m) == 0)
		abort();
	free(copy);
	return 0;
}

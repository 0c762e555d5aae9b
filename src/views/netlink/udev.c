// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * udev.c - the udev netlink format: the "libudev" header and its hashes.
 *
 * What udevd multicasts to group 2 after rule processing, and what
 * libudev/sd-device monitors accept: a 40-byte header whose filter words
 * let a listener's socket filter drop events by subsystem, devtype and
 * tag in the kernel, followed by the properties as KEY=VALUE\0 strings.
 * The header's sizes are in host order, its magic and filter words
 * big-endian (the socket filter compares them as network-order words).
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "wire-internal.h"

/*
 * MurmurHash2 (Austin Appleby), seed 0, as udev's string_hash32():
 * 32-bit blocks read in the host's byte order, which udev does too, so
 * sender and socket filter agree on any one machine.
 */
uint32_t cfs_wire_murmur2_len(const char *s, size_t len)
{
	const uint32_t m = 0x5bd1e995;
	const unsigned char *p = (const unsigned char *)s;
	uint32_t h = (uint32_t)len;	/* seed 0 xor length */

	for (; len >= 4; len -= 4, p += 4) {
		uint32_t k;

		memcpy(&k, p, 4);
		k *= m;
		k ^= k >> 24;
		k *= m;
		h *= m;
		h ^= k;
	}
	switch (len) {
	case 3:
		h ^= (uint32_t)p[2] << 16;
		/* fall through */
	case 2:
		h ^= (uint32_t)p[1] << 8;
		/* fall through */
	case 1:
		h ^= p[0];
		h *= m;
	}
	h ^= h >> 13;
	h *= m;
	h ^= h >> 15;
	return h;
}

uint32_t cfs_wire_murmur2(const char *s)
{
	return cfs_wire_murmur2_len(s, strlen(s));
}

/* four bits per tag, taken from successive 6-bit slices of its hash */
uint64_t cfs_wire_tag_bloom(const char *tags)
{
	uint64_t bits = 0;
	const char *p = tags;

	while (p && *p) {
		size_t n = strcspn(p, ":");

		if (n) {
			uint32_t h = cfs_wire_murmur2_len(p, n);

			for (int i = 0; i < 4; i++)
				bits |= UINT64_C(1) << ((h >> (6 * i)) & 63);
		}
		p += n;
		if (*p == ':')
			p++;
	}
	return bits;
}

static bool seqnum_parse(const char *s, uint64_t *out)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return !errno && !*end && *out;
}

int cfs_wire_scan(const char *const *envp, int envc, struct cfs_wire_fields *f)
{
	struct {
		const char *key;
		const char **val;
	} want[] = {
		{ "ACTION", &f->action },	{ "DEVPATH", &f->devpath },
		{ "SUBSYSTEM", &f->subsystem }, { "DEVTYPE", &f->devtype },
		{ "TAGS", &f->tags },
	};
	const char *seq = NULL;

	*f = (struct cfs_wire_fields){ .action_id = -1 };
	if (envc < 0 || (envc && !envp))
		return -EBADMSG;
	for (int i = 0; i < envc; i++) {
		const char *v = envp[i], *eq;
		size_t kl;

		if (!v || !(eq = strchr(v, '=')) || eq == v)
			return -EBADMSG;
		kl = (size_t)(eq - v);
		for (size_t k = 0; k < kl; k++)
			if ((unsigned char)v[k] <= ' ' || (unsigned char)v[k] == 0x7f)
				return -EBADMSG;
		if (kl == 6 && !memcmp(v, "SEQNUM", 6)) {
			if (seq)
				return -EBADMSG;
			seq = eq + 1;
			continue;
		}
		for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
			if (strlen(want[w].key) != kl || memcmp(v, want[w].key, kl))
				continue;
			if (*want[w].val)	/* twice: which one would a reader take? */
				return -EBADMSG;
			*want[w].val = eq + 1;
		}
	}
	if (!f->action || !f->devpath || !f->subsystem || !seq)
		return -EBADMSG;
	f->action_id = classfs_action_parse(f->action, strlen(f->action));
	if (f->action_id < 0 || f->devpath[0] != '/' || !f->subsystem[0] ||
	    !seqnum_parse(seq, &f->seqnum))
		return -EBADMSG;
	return 0;
}

/* the header, byte by byte as it goes on the wire */
static void put_header(char *h, uint32_t props_len, const struct cfs_wire_fields *f)
{
	uint64_t bloom = f->tags ? cfs_wire_tag_bloom(f->tags) : 0;
	uint32_t w[8] = {
		htobe32(CLASSFS_UDEV_MAGIC),
		CLASSFS_UDEV_HEADER_SIZE,	/* header_size, host order */
		CLASSFS_UDEV_HEADER_SIZE,	/* properties_off */
		props_len,			/* properties_len */
		htobe32(cfs_wire_murmur2(f->subsystem)),
		f->devtype ? htobe32(cfs_wire_murmur2(f->devtype)) : 0,
		htobe32((uint32_t)(bloom >> 32)),
		htobe32((uint32_t)bloom),
	};

	memcpy(h, "libudev", 8);	/* with its NUL */
	memcpy(h + 8, w, sizeof(w));
}

/**
 * classfs_uevent_format_udev() - the udev netlink message of @ev
 * @ev: the event.
 * @buf: where to write.
 * @size: room at @buf.
 *
 * Return: bytes needed, 0 when @ev cannot be sent (see wire.h).
 */
size_t classfs_uevent_format_udev(const struct classfs_uevent *ev, char *buf, size_t size)
{
	struct cfs_wire_fields f;
	char head[CLASSFS_UDEV_HEADER_SIZE];
	size_t len = CLASSFS_UDEV_HEADER_SIZE;

	if (!ev || (size && !buf) || cfs_wire_scan(ev->envp, ev->envc, &f))
		return 0;
	/* the fields and the variables must tell the same story */
	if ((unsigned int)f.action_id != (unsigned int)ev->action ||
	    (ev->seqnum && ev->seqnum != f.seqnum) ||
	    (ev->devpath && strcmp(ev->devpath, f.devpath)) ||
	    (ev->subsystem && strcmp(ev->subsystem, f.subsystem)))
		return 0;
	for (int i = 0; i < ev->envc; i++) {
		size_t n = strlen(ev->envp[i]) + 1;

		if (len + n <= size)
			memcpy(buf + len, ev->envp[i], n);
		len += n;
	}
	if (len - CLASSFS_UDEV_HEADER_SIZE > UINT32_MAX)
		return 0;
	if (size >= CLASSFS_UDEV_HEADER_SIZE) {
		put_header(head, (uint32_t)(len - CLASSFS_UDEV_HEADER_SIZE), &f);
		memcpy(buf, head, sizeof(head));
	}
	return len;
}

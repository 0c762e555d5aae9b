/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * wire-internal.h - what the wire-format files share.
 */
#ifndef CLASSFS_WIRE_INTERNAL_H
#define CLASSFS_WIRE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classfs/wire.h"

/* the required variables of an event, as found by cfs_wire_scan() */
struct cfs_wire_fields {
	const char *action;	/* values, pointing into the scanned strings */
	const char *devpath;
	const char *subsystem;
	const char *devtype;	/* NULL: none */
	const char *tags;	/* NULL: none */
	uint64_t seqnum;
	int action_id;
};

/*
 * cfs_wire_scan() - check @envc "KEY=VALUE" strings and find the required
 * ones: every string has a non-empty key made of printable characters
 * other than '='; ACTION (known), DEVPATH (starting with '/'), SUBSYSTEM
 * (not empty) and SEQNUM (non-zero decimal) appear exactly once.
 * Return: 0 or -EBADMSG.
 */
int cfs_wire_scan(const char *const *envp, int envc, struct cfs_wire_fields *f);

/* MurmurHash2 with seed 0 of a string, as udev's string_hash32() */
uint32_t cfs_wire_murmur2(const char *s);
uint32_t cfs_wire_murmur2_len(const char *s, size_t len);

/* the 64-bit bloom filter of the tags of a TAGS value (":a:b:") */
uint64_t cfs_wire_tag_bloom(const char *tags);

#endif

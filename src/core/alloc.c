// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * alloc.c - the one allocation path of the library (so tests can fail the
 * Nth allocation), name hashing and name validation.
 */
#include "internal.h"
#include "util.h"

static bool (*alloc_hook)(size_t size, void *data);
static void *alloc_hook_data;

void classfs_set_alloc_hook(bool (*hook)(size_t size, void *data), void *data)
{
	__atomic_store_n(&alloc_hook_data, data, __ATOMIC_RELEASE);
	__atomic_store_n(&alloc_hook, hook, __ATOMIC_RELEASE);
}

static bool alloc_allowed(size_t size)
{
	bool (*hook)(size_t, void *) = __atomic_load_n(&alloc_hook, __ATOMIC_ACQUIRE);

	return !hook || hook(size, __atomic_load_n(&alloc_hook_data, __ATOMIC_ACQUIRE));
}

void *cfs_malloc(size_t size)
{
	if (!alloc_allowed(size)) {
		errno = ENOMEM;
		return NULL;
	}
	return malloc(size ? size : 1);
}

void *cfs_zalloc(size_t size)
{
	if (!alloc_allowed(size)) {
		errno = ENOMEM;
		return NULL;
	}
	return calloc(1, size ? size : 1);
}

void *cfs_realloc(void *p, size_t size)
{
	if (!alloc_allowed(size)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, size ? size : 1);
}

char *cfs_strdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *d = cfs_malloc(len);

	if (d)
		memcpy(d, s, len);
	return d;
}

void cfs_free(void *p)
{
	free(p);
}

void *classfs_malloc(size_t size)
{
	return cfs_malloc(size);
}

void *classfs_zalloc(size_t size)
{
	return cfs_zalloc(size);
}

void classfs_free(void *p)
{
	cfs_free(p);
}

/* FNV-1a with a murmur3 finalizer: the table uses the hash's top bits */
static uint32_t fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

uint32_t cfs_hash_name(const char *name)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	return fmix32(h);
}

uint32_t cfs_hash_devt(dev_t devt)
{
	uint64_t v = (uint64_t)devt;

	return fmix32((uint32_t)v ^ fmix32((uint32_t)(v >> 32) + 0x9e3779b9u));
}

/*
 * cfs_name_hash_valid() - cfs_hash_name() of @name into *@hash, in the
 * same pass as the checks of classfs_name_valid(): 0 or -EINVAL.
 */
int cfs_name_hash_valid(const char *name, uint32_t *hash)
{
	uint32_t h = 2166136261u;
	bool high = false;
	size_t len;

	if (!name || !*name)
		return -EINVAL;
	if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
		return -EINVAL;
	for (len = 0; name[len]; len++) {
		unsigned char c = (unsigned char)name[len];

		if (c == '/' || c < 0x20 || c == 0x7f || len >= NAME_MAX)
			return -EINVAL;
		high |= c >= 0x80;
		h = (h ^ c) * 16777619u;
	}
	/* names are text: a JSON document, udev and Python take them as UTF-8 */
	if (high && !cfs_utf8_valid(name, len))
		return -EINVAL;
	*hash = fmix32(h);
	return 0;
}

int classfs_name_valid(const char *name)
{
	uint32_t h;

	return cfs_name_hash_valid(name, &h);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bytes.c - the bytes an attribute stores, read and replaced under a
 * striped lock (classfs-internal/bytes.h).  Allocations go through the
 * core's allocator, so its allocation hook reaches them.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include "internal.h"

#define BYTES_LOCKS 64
static pthread_mutex_t bytes_locks[BYTES_LOCKS] = {
	[0 ... BYTES_LOCKS - 1] = PTHREAD_MUTEX_INITIALIZER,
};

static pthread_mutex_t *bytes_lock(const struct cfs_bytes *b)
{
	uintptr_t p = (uintptr_t)b;

	return &bytes_locks[(p >> 4 ^ p >> 10) % BYTES_LOCKS];
}

void cfs_bytes_init(struct cfs_bytes *b, char *inl, const void *src, size_t len)
{
	*b = (struct cfs_bytes){ .data = inl, .len = (uint32_t)len, .cap = (uint32_t)len };
	if (len)
		memcpy(inl, src, len);
}

size_t cfs_bytes_read(struct cfs_bytes *b, char *buf, size_t off, size_t count)
{
	pthread_mutex_t *lock = bytes_lock(b);
	size_t n = 0;

	pthread_mutex_lock(lock);
	if (off < b->len) {
		n = b->len - off;
		if (n > count)
			n = count;
		memcpy(buf, b->data + off, n);
	}
	pthread_mutex_unlock(lock);
	return n;
}

size_t cfs_bytes_len(struct cfs_bytes *b)
{
	pthread_mutex_t *lock = bytes_lock(b);
	size_t len;

	pthread_mutex_lock(lock);
	len = b->len;
	pthread_mutex_unlock(lock);
	return len;
}

int cfs_bytes_put(struct cfs_bytes *b, const char *buf, size_t count, size_t off, bool truncate)
{
	pthread_mutex_t *lock = bytes_lock(b);
	char *old = NULL;
	size_t len;

	if (off > CFS_BYTES_MAX || count > CFS_BYTES_MAX - off)
		return -EFBIG;
	pthread_mutex_lock(lock);
	len = truncate || off + count > b->len ? off + count : b->len;
	if (len > (b->cap & ~CFS_BYTES_OWN)) {
		char *data = cfs_malloc(len);

		if (!data) {
			pthread_mutex_unlock(lock);
			return -ENOMEM;
		}
		memcpy(data, b->data, b->len);
		if (b->cap & CFS_BYTES_OWN)
			old = b->data;
		b->data = data;
		b->cap = (uint32_t)len | CFS_BYTES_OWN;
	}
	if (off > b->len)
		memset(b->data + b->len, 0, off - b->len);
	memcpy(b->data + off, buf, count);
	b->len = (uint32_t)len;
	pthread_mutex_unlock(lock);
	cfs_free(old);
	return 0;
}

void cfs_bytes_free(struct cfs_bytes *b)
{
	if (b->cap & CFS_BYTES_OWN)
		cfs_free(b->data);
	b->data = NULL;
	b->cap = 0;
}

static const struct cfs_stored_attr *stored_of(const struct classfs_device_attribute *a)
{
	return cfs_container_of(a, struct cfs_stored_attr, def);
}

ssize_t cfs_stored_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			char *buf)
{
	const struct cfs_stored_attr *sa = stored_of(a);

	return (ssize_t)cfs_bytes_read(sa->bytes(dev, sa), buf, 0, CLASSFS_ATTR_MAX);
}

ssize_t cfs_stored_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 const char *buf, size_t count)
{
	const struct cfs_stored_attr *sa = stored_of(a);
	int r;

	if (count > CLASSFS_ATTR_MAX)
		return -E2BIG;
	r = cfs_bytes_put(sa->bytes(dev, sa), buf, count, 0, true);
	return r < 0 ? r : (ssize_t)count;
}

struct cfs_bytes *cfs_stored_bytes(struct classfs_device *dev,
				   const struct classfs_device_attribute *a)
{
	if (!a || a->show != cfs_stored_show)
		return NULL;
	return stored_of(a)->bytes(dev, stored_of(a));
}

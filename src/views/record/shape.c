// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * shape.c - recorded attributes without a node each.
 *
 * Devices recorded with the same DEVTYPE and the same top-level attribute
 * names and modes share one device type, their "shape", whose group shows
 * and store each device's own bytes, kept with the device (struct
 * rec_dev: vals).  A million partitions with `partition`, `size` and
 * `start` are then one type and no attribute node: the core computes the
 * entries as it does any type's groups.  A value node costs 120 bytes
 * before its name and text, an allocation and a directory insert; a
 * shaped value 16 bytes and its text.
 *
 * Shapes are interned for the process in a hash table and counted: each
 * device holds a reference, dropped by its release.  Attributes that do
 * not fit a shape (binary ones, those in directories, names the tree
 * computes itself, more than a group's slots) stay value nodes: load.c
 * decides.
 *
 * Locking: shape_lock guards the table and the counts; a device's bytes
 * are struct cfs_bytes, as a value node's, and its attributes the core's
 * stored attributes (classfs-internal/bytes.h): the core reads and stores
 * them, reports their length, and tells the views when they change.
 */
#include "record-internal.h"

#include <pthread.h>
#include <stdlib.h>

struct rec_attr {
	struct cfs_stored_attr stored;	/* first: its def is the group's attribute */
	uint32_t index;			/* in the device's vals */
};

struct rec_shape {
	struct classfs_device_type type;	/* first: the device's type */
	struct rec_shape *next;			/* in its hash chain */
	uint32_t hash;
	uint32_t refs;				/* its devices (under shape_lock) */
	size_t siglen;
	const struct classfs_attribute_group *groupv[2];
	struct classfs_attribute_group group;
	struct rec_attr *attrs;
	const struct classfs_device_attribute **attrv;	/* the group's, NULL-ended */
	char *sig;					/* what the table compares */
	char *names;					/* a copy cut into names */
};

static pthread_mutex_t shape_lock = PTHREAD_MUTEX_INITIALIZER;
static struct rec_shape **shape_table;
static size_t shape_buckets, nshapes;

/* the bytes of attribute @a (a struct rec_attr) of @dev, as the core reads and stores them */
static struct cfs_bytes *val_of(struct classfs_device *dev, const struct cfs_stored_attr *a)
{
	const struct rec_attr *ra = (const struct rec_attr *)a;

	return &cfs_rec_vals(cfs_rec_of(dev))[ra->index];
}

/** cfs_rec_vals_free() - the buffers a device's values grew into (its release) */
void cfs_rec_vals_free(struct rec_dev *rd)
{
	struct cfs_bytes *v = cfs_rec_vals(rd);

	for (uint32_t i = 0; i < rd->nvals; i++)
		cfs_bytes_free(&v[i]);
}

static int table_grow(void)
{
	size_t n = shape_buckets ? shape_buckets * 2 : 64;
	struct rec_shape **t = calloc(n, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (size_t i = 0; i < shape_buckets; i++)
		for (struct rec_shape *s = shape_table[i], *next; s; s = next) {
			next = s->next;
			s->next = t[s->hash & (n - 1)];
			t[s->hash & (n - 1)] = s;
		}
	free(shape_table);
	shape_table = t;
	shape_buckets = n;
	return 0;
}

/*
 * A new shape from its signature: the type, its group and attributes in
 * one allocation.  The signature is (see cfs_rec_shape_get()) a DEVTYPE
 * entry, then per attribute, in name order, a mode byte and its path.
 */
static struct rec_shape *shape_new(const char *sig, size_t siglen, uint32_t hash,
				   const struct rec_shape_attr *attrs, uint32_t nattrs)
{
	size_t size = sizeof(struct rec_shape) + nattrs * sizeof(struct rec_attr) +
		      (nattrs + 1) * sizeof(void *) + 2 * siglen;
	struct rec_shape *s;
	char *p;

	s = calloc(1, size);
	if (!s)
		return NULL;
	s->attrs = (struct rec_attr *)(s + 1);
	s->attrv = (const struct classfs_device_attribute **)(s->attrs + nattrs);
	s->sig = (char *)(s->attrv + nattrs + 1);
	s->names = s->sig + siglen;
	memcpy(s->sig, sig, siglen);
	memcpy(s->names, sig, siglen);
	s->siglen = siglen;
	s->hash = hash;
	s->type.uevent = cfs_rec_uevent;
	s->type.devnode = cfs_rec_devnode;
	s->type.groups = s->groupv;
	s->groupv[0] = &s->group;
	s->group.attrs = s->attrv;
	/* the DEVTYPE entry: '-' for none, '+' then the name */
	p = s->names;
	if (*p++ == '+')
		s->type.name = p;
	p += strlen(p) + 1;

	for (uint32_t i = 0; i < nattrs; i++) {
		const char *name = p + 1;
		mode_t mode = *p == 'w' ? 0644 : 0444;

		s->attrs[i] = (struct rec_attr){
			.stored = {
				.def = {
					.attr = { .name = name, .mode = mode },
					.show = cfs_stored_show,
					.store = (mode & 0200) ? cfs_stored_store : NULL,
				},
				.bytes = val_of,
			},
			.index = i,
		};
		s->attrv[i] = &s->attrs[i].stored.def;
		p = (char *)name + strlen(name) + 1;
	}
	return s;
}

/**
 * cfs_rec_shape_get() - the shape of @nattrs attributes (sorted by
 * cfs_rec_shape_sort()) for DEVTYPE @devtype (NULL: none), referenced.
 * @sig: a buffer of at least cfs_rec_shape_siglen() bytes.
 * Return: its device type, or NULL (out of memory).
 */
const struct classfs_device_type *cfs_rec_shape_get(const char *devtype, size_t devtypelen,
						    const struct rec_shape_attr *attrs,
						    uint32_t nattrs, char *sig)
{
	struct rec_shape *s;
	size_t len = 0;
	uint32_t h;

	sig[len++] = devtype ? '+' : '-';
	if (devtype)
		memcpy(sig + len, devtype, devtypelen), len += devtypelen;
	sig[len++] = '\0';
	for (uint32_t i = 0; i < nattrs; i++) {
		sig[len++] = (attrs[i].mode & 0200) ? 'w' : 'r';
		memcpy(sig + len, attrs[i].name, attrs[i].len);
		len += attrs[i].len;
		sig[len++] = '\0';
	}
	h = cfs_rec_hash(sig, len);

	pthread_mutex_lock(&shape_lock);
	for (s = shape_buckets ? shape_table[h & (shape_buckets - 1)] : NULL; s; s = s->next)
		if (s->hash == h && s->siglen == len && !memcmp(s->sig, sig, len))
			break;
	if (!s && (nshapes < 2 * shape_buckets || table_grow() == 0) &&
	    (s = shape_new(sig, len, h, attrs, nattrs))) {
		s->next = shape_table[h & (shape_buckets - 1)];
		shape_table[h & (shape_buckets - 1)] = s;
		nshapes++;
	}
	if (s)
		s->refs++;
	pthread_mutex_unlock(&shape_lock);
	return s ? &s->type : NULL;
}

/** cfs_rec_shape_put() - drop a device's reference on its shape (its release) */
void cfs_rec_shape_put(const struct classfs_device_type *type)
{
	struct rec_shape *s = (struct rec_shape *)type;

	pthread_mutex_lock(&shape_lock);
	if (--s->refs == 0) {
		for (struct rec_shape **p = &shape_table[s->hash & (shape_buckets - 1)]; *p;
		     p = &(*p)->next)
			if (*p == s) {
				*p = s->next;
				break;
			}
		nshapes--;
		free(s);
	}
	pthread_mutex_unlock(&shape_lock);
}

/** cfs_rec_shape_siglen() - the signature buffer cfs_rec_shape_get() needs */
size_t cfs_rec_shape_siglen(size_t devtypelen, const struct rec_shape_attr *attrs, uint32_t nattrs)
{
	size_t n = devtypelen + 2;

	for (uint32_t i = 0; i < nattrs; i++)
		n += attrs[i].len + 2;
	return n;
}

/* by name: a shape's attributes are in one order whatever the record's */
static int cmp_attr(const void *x, const void *y)
{
	const struct rec_shape_attr *a = x, *b = y;
	size_t n = a->len < b->len ? a->len : b->len;
	int c = memcmp(a->name, b->name, n);

	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/** cfs_rec_shape_sort() - put @attrs in the order of their shape's indexes */
void cfs_rec_shape_sort(struct rec_shape_attr *attrs, uint32_t n)
{
	/* a few attributes a device: insertion sort, qsort() past 16 */
	if (n > 16) {
		qsort(attrs, n, sizeof(*attrs), cmp_attr);
		return;
	}
	for (uint32_t i = 1; i < n; i++) {
		struct rec_shape_attr x = attrs[i];
		uint32_t k = i;

		for (; k > 0 && cmp_attr(&attrs[k - 1], &x) > 0; k--)
			attrs[k] = attrs[k - 1];
		attrs[k] = x;
	}
}

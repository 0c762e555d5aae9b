/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * record-internal.h - what the record loader, saver and exporters share:
 * the parsed form of a record (temporary), the side data every loaded
 * device keeps (struct rec_dev: one allocation per device), and the
 * tables of keys.c.
 */
#ifndef CLASSFS_RECORD_INTERNAL_H
#define CLASSFS_RECORD_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <classfs/classfs.h>
#include <classfs/record.h>
#include "classfs-internal/bytes.h"	/* the core's: the bytes of shaped attributes */
#include "classfs-internal/fs.h"
#include "classfs-internal/record-node.h"
#include "classfs-internal/watch.h"
#include <limits.h>
#include <stdio.h>

#define REC_NONE UINT32_MAX
#define REC_MAX_DEPTH 60	/* components of a recorded device path */

enum rec_kind {
	REC_PLAIN,	/* physical device without subsystem (or unrecorded ancestor) */
	REC_BUS,	/* physical device of a bus */
	REC_CLASS,	/* class device */
};

/*
 * One line of a record: TAG: KEY=VAL (S: has no key; P: lines are devices).
 * 12 bytes: a 1M-device record has 12M of them, written once, read twice.
 * Its number is not kept: a device's lines follow its P: line one by one
 * (cfs_rec_lineno()).
 */
struct rec_line {
	uint32_t off;			/* of the key, or of an S: line's value, in the data */
	uint32_t vallen;
	uint16_t keylen;		/* names are at most PATH_MAX */
	char tag;
};

/* one device of a record being loaded (recorded or unrecorded ancestor) */
struct rec_pdev {
	const char *path;		/* "/devices/..." (into the data or owned) */
	uint32_t pathlen;
	uint32_t lineno;		/* of its P: line; 0 for an unrecorded ancestor */
	uint32_t first, nlines;		/* its lines in rec_parse.lines */
	uint32_t up;			/* the device at the parent path, or REC_NONE */
	uint32_t parent;		/* nesting parent (class) / physical parent */
	uint32_t phys;			/* a class device's physical device */
	uint32_t depth;			/* path components */
	const char *subsys;		/* SUBSYSTEM (class or bus name) */
	uint32_t subsyslen;
	const char *devtype;
	uint32_t devtypelen;
	dev_t devt;
	uint8_t kind;
	bool placeholder;		/* unrecorded ancestor */
	bool misplaced;			/* the layout places it elsewhere */
	bool glued;			/* its parent path is a glue directory */
	bool moved;			/* it or an ancestor is not where recorded */
	bool existing;			/* already in the tree (path owned) */
	bool vroot;			/* a plain device right below /devices/virtual */
	bool fills;			/* at a plain directory of the tree (devices layout) */
	struct rec_dev *built;		/* made by this load */
	struct classfs_device *dev;	/* in the tree: built or existing */
};

struct rec_parse {
	const char *file;
	const char *data;		/* the record (at most 4 GiB: offsets are 32-bit) */
	size_t len;
	char *own;			/* a copy of it, once a name needed decoding (data then) */
	struct rec_line *lines;
	size_t nlines;
	struct rec_pdev *devs;
	size_t ndevs, capdevs;
	uint64_t *hash;			/* open addressing: hash << 32 | index + 1; 0 empty */
	size_t hashsize;		/* power of two */
	uint32_t pending_hash;		/* of the device whose paragraph is being read */
	bool exact;			/* a `devices` layout tree: devices at their paths */
	struct classfs_record_error *err;
};

/* the number of line @l of device @d */
static inline uint32_t cfs_rec_lineno(const struct rec_parse *p, const struct rec_pdev *d,
				      const struct rec_line *l)
{
	return d->lineno + 1 + (uint32_t)(l - &p->lines[d->first]);
}

/* a line's key and value: the value follows "KEY=" */
static inline const char *cfs_rec_key(const struct rec_parse *p, const struct rec_line *l)
{
	return p->data + l->off;
}

static inline const char *cfs_rec_val(const struct rec_parse *p, const struct rec_line *l)
{
	return p->data + l->off + (l->keylen ? l->keylen + 1u : 0u);
}

/* the side data of a loaded device: one allocation with the device */
enum {
	REC_F_PLACEHOLDER = 0x1,	/* unrecorded ancestor: never saved, no events */
	REC_F_BLOCK = 0x2,		/* its node is a block device */
};

/*
 * The blob holds tagged entries, each a tag byte then NUL-terminated
 * strings (a first string that is a common name of keys.c is 0x01 CODE):
 * 'n' name | 'E' key val (udev's) | 'U' key val (also in the `uevent`) |
 * 'L' name text | 'A' name | 'H' name | 'S' link | 'N' name hex |
 * 'D' name raw-text (computed attributes).  Values are as recorded.
 */
struct rec_dev {
	struct classfs_device dev;
	dev_t devt;			/* recorded (bus devices carry none in the core) */
	uint32_t bloblen;
	uint16_t flags;
	uint16_t nvals;			/* values of its shape (shape.c), after the blob */
	char blob[];
};

/* the values of a shaped device's attributes follow the blob, aligned */
static inline struct cfs_bytes *cfs_rec_vals(const struct rec_dev *rd)
{
	uintptr_t p = (uintptr_t)(rd->blob + rd->bloblen);

	return (struct cfs_bytes *)((p + _Alignof(struct cfs_bytes) - 1) &
				    ~(uintptr_t)(_Alignof(struct cfs_bytes) - 1));
}

/* an attribute of a shape being made: its path in the record */
struct rec_shape_attr {
	const char *name;		/* a top-level name: "dir/name" are value nodes */
	uint32_t len;
	mode_t mode;
	uint32_t line;			/* its line (rec_parse.lines) */
};

#define REC_SHAPE_ATTRS 254		/* attributes a shape has: its one group's slots */

struct rec_entry {
	char tag;
	const char *a, *b;		/* b: NULL for one-string entries */
};

/* FNV-1a of @len bytes: the record's index of paths, the tables of names */
static inline uint32_t cfs_rec_hash(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	return h;
}

/* keys.c: the bus list and the uevent key lists (the one place for both) */
bool cfs_rec_is_bus(const char *name, size_t len);
bool cfs_rec_uevent_key(const char *subsystem, const char *key, size_t keylen);
bool cfs_rec_udev_only_key(const char *key);
#define CFS_REC_CODED '\x01'	/* in a blob: a name of the table follows as one byte */
unsigned int cfs_rec_name_code(const char *name, size_t len);
const char *cfs_rec_name_of(unsigned int code);

/* parse.c */
int cfs_rec_parse(struct rec_parse *p, const char *data, size_t len);
void cfs_rec_parse_free(struct rec_parse *p);
int cfs_rec_error(struct rec_parse *p, unsigned long line, const char *fmt, ...)
	CLASSFS_PRINTF(3, 4);
uint32_t cfs_rec_lookup(const struct rec_parse *p, const char *path, size_t len);
int cfs_rec_unescape(const char *s, size_t len, char *out, size_t *outlen, const char **why);
int cfs_rec_unhex(const char *s, size_t len, unsigned char *out);
uint32_t cfs_rec_add_placeholder(struct rec_parse *p, const char *path, size_t len);

/* the devices of a tree, parents first, referenced (save, export, nodes) */
struct rec_devlist {
	struct classfs_device **v;
	size_t n, cap;
	int err;
};

/* classes and buses the loader made (side.c keeps them per tree) */
struct rec_class {
	struct classfs_class cls;
	char name[];
};

struct rec_bus {
	struct classfs_bus bus;
	char name[];
};

/* the subsystems of one load: found or made, undone on failure */
struct rec_subsys {
	const char *name;
	uint32_t len;
	uint8_t kind;
	bool made;
	struct classfs_class *cls;	/* referenced */
	struct classfs_bus *bus;
};

struct rec_load {
	struct classfs_tree *tree;
	struct rec_parse p;
	const struct classfs_record_options *opt;
	struct rec_subsys *subs;
	size_t nsubs, capsubs;
	uint32_t *order;		/* build order: by depth */
	struct rec_devlist existing;	/* the tree's devices the record names */
	bool overlap;			/* the tree may hold some of the record's paths */
	size_t linking;			/* the device being linked (link.c) */
	char *blob;			/* a device's blob in the making */
	size_t blobcap;
	size_t evbytes, evvars;		/* its uevent variables: at most (make_dev()) */
	struct rec_shape_attr *sattrs;	/* a device's shaped attributes in the making */
	size_t capsattrs;
	char *sig;			/* its shape's signature */
	size_t capsig;
	char scratch[2 * PATH_MAX];
};

/* link.c */
int cfs_rec_link_all(struct rec_load *l);
void cfs_rec_warn(struct rec_load *l, unsigned long line, const char *fmt, ...)
	CLASSFS_PRINTF(3, 4);
size_t cfs_rec_parent_len(const char *path, size_t len);
uint32_t cfs_rec_lookup_tree(struct rec_load *l, const char *path, size_t len);

/* subsys.c */
struct rec_subsys *cfs_rec_subsys_get(struct rec_load *l, const struct rec_pdev *d);
void cfs_rec_subsys_unmake(struct rec_load *l);
void cfs_rec_subsys_release(struct rec_load *l);

/* load.c */
size_t cfs_rec_resolve_link(struct rec_load *l, const struct rec_pdev *d,
			    const struct rec_line *ln);

/* shape.c */
const struct classfs_device_type *cfs_rec_shape_get(const char *devtype, size_t devtypelen,
						    const struct rec_shape_attr *attrs,
						    uint32_t nattrs, char *sig);
void cfs_rec_shape_put(const struct classfs_device_type *type);
size_t cfs_rec_shape_siglen(size_t devtypelen, const struct rec_shape_attr *attrs,
			    uint32_t nattrs);
void cfs_rec_shape_sort(struct rec_shape_attr *attrs, uint32_t n);
void cfs_rec_vals_free(struct rec_dev *rd);

/* side.c */
int cfs_rec_uevent(struct classfs_device *dev, struct classfs_uevent_env *env);
bool cfs_rec_own_hooks(const struct classfs_device *dev);
const char *cfs_rec_devnode(struct classfs_device *dev, char *buf, size_t size);
void cfs_rec_class_release(struct classfs_class *cls);
const struct classfs_device_type *cfs_rec_intern_type(const char *name, size_t len);
int cfs_rec_remember(struct classfs_tree *tree, struct rec_class *cls, struct rec_bus *bus);
void cfs_rec_forget(struct rec_class *cls, struct rec_bus *bus);
void cfs_rec_release(struct classfs_device *dev);
static inline struct rec_dev *cfs_rec_of(struct classfs_device *dev)
{
	if (!dev || dev->release != cfs_rec_release)
		return NULL;
	return (struct rec_dev *)((char *)dev - offsetof(struct rec_dev, dev));
}
bool cfs_rec_next(const struct rec_dev *rd, size_t *off, struct rec_entry *e);
const char *cfs_rec_prop(const struct rec_dev *rd, const char *key);
const char *cfs_rec_subsystem(const struct classfs_device *dev);

int cfs_rec_collect(struct classfs_tree *tree, struct rec_devlist *l);
void cfs_rec_devlist_free(struct rec_devlist *l);

/* later.c: a save's reads answered later (classfs_defer()), waited for together */
struct rec_later;
struct rec_later_set {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct rec_later *list;		/* newest first */
	size_t pending;			/* not answered yet */
};
void cfs_rec_later_init(struct rec_later_set *set);
ssize_t cfs_rec_read_value(struct classfs_tree *tree, const struct classfs_stat *st, char **buf,
			   struct rec_later_set *set, void *owner, char tag, const char *name);
void cfs_rec_later_each(struct rec_later_set *set,
			void (*fn)(void *owner, char tag, const char *name, const char *value,
				   size_t len, void *data),
			void *data);
void cfs_rec_later_free(struct rec_later_set *set);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * devview.c - a tree served as a devtmpfs-style /dev through FUSE: every
 * device with a number appears at its node name as a character or block
 * special file of that number, mode and owner, with the `S:` links of
 * its record and the char/M:m and block/M:m links udev makes.
 *
 * Where the entries come from, in this order (a name, once given, stays
 * with the first one that claimed it):
 *  - what every Linux /dev holds: the memory devices (null, zero, full,
 *    random, urandom), tty, the links fd, stdin, stdout, stderr and ptmx,
 *    and the directories pts and shm where those are mounted; no device
 *    takes these names;
 *  - the devices loaded from records, parents first: the recorded node
 *    (`N:`, `E: DEVNAME`, the number of `dev`, `E: DEVMODE`), a regular
 *    file for a node recorded with contents, the recorded `S:` links;
 *  - every other device with a number: its own `uevent` file (DEVNAME,
 *    else its name; DEVMODE, else 0600 as udev leaves an untouched node;
 *    DEVUID, DEVGID).
 *
 * The view is computed from the tree, not kept in step by events: the
 * tree's watch counts changes, and the first request after a change
 * rebuilds the table (the ADD event of a device goes out after the device
 * is complete, so whoever hears it and looks finds its node).  Device
 * entries and negative lookups are never cached by the kernel (timeouts
 * 0), so no invalidation has to be pushed; the fixed entries are cached
 * for a day.  Inode numbers stay with a name as long as its file type
 * does.
 *
 * The mount is always nodev: its nodes can be stat()ed, never opened
 * (EACCES), as in a user namespace where every FUSE mount is nodev.
 * Its requests are in devview-ops.c.
 */
#include "devview.h"
#include "util.h"

#include <search.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <classfs/record.h>
#include "classfs-internal/record-node.h"

/* the names a device never takes: see above */
static const struct {
	const char *name;
	mode_t mode;
	unsigned int major, minor;
	const char *target;
} fixed_entries[] = {
	{ "null", S_IFCHR | 0666, 1, 3, NULL },	 { "zero", S_IFCHR | 0666, 1, 5, NULL },
	{ "full", S_IFCHR | 0666, 1, 7, NULL },	 { "random", S_IFCHR | 0666, 1, 8, NULL },
	{ "urandom", S_IFCHR | 0666, 1, 9, NULL }, { "tty", S_IFCHR | 0666, 5, 0, NULL },
	{ "pts", S_IFDIR | 0755, 0, 0, NULL },	 { "shm", S_IFDIR | 01777, 0, 0, NULL },
	{ "fd", S_IFLNK | 0777, 0, 0, "/proc/self/fd" },
	{ "stdin", S_IFLNK | 0777, 0, 0, "/proc/self/fd/0" },
	{ "stdout", S_IFLNK | 0777, 0, 0, "/proc/self/fd/1" },
	{ "stderr", S_IFLNK | 0777, 0, 0, "/proc/self/fd/2" },
	{ "ptmx", S_IFLNK | 0777, 0, 0, "pts/ptmx" },
};
#define N_FIXED (sizeof(fixed_entries) / sizeof(fixed_entries[0]))


/* ------------------------------------------------------------------ */
/* the table                                                           */
/* ------------------------------------------------------------------ */

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct dv_entry *)a)->path, ((const struct dv_entry *)b)->path);
}

static int cmp_ino(const void *a, const void *b)
{
	uint64_t x = ((const struct dv_entry *)a)->ino, y = ((const struct dv_entry *)b)->ino;

	return x < y ? -1 : x > y;
}

static int cmp_ino_path(const void *a, const void *b)
{
	return strcmp(((const struct dv_ino *)a)->path, ((const struct dv_ino *)b)->path);
}

static void nothing(void *p)
{
	(void)p;
}

static void entry_free(void *p)
{
	struct dv_entry *e = p;

	free(e->path);
	free(e->target);
	free(e->data);
	free(e);
}

static void table_free(struct dv_table *t)
{
	tdestroy(t->by_path, nothing);
	tdestroy(t->by_ino, nothing);
	for (size_t i = 0; i < t->n; i++)
		entry_free(t->e[i]);
	free(t->e);
	memset(t, 0, sizeof(*t));
}

/** cfs_devview_by_path() - the entry at @path ("" the root), or NULL */
struct dv_entry *cfs_devview_by_path(const struct dv_table *t, const char *path)
{
	struct dv_entry key = { .path = (char *)path }, **slot;

	slot = tfind(&key, &t->by_path, cmp_path);
	return slot ? *slot : NULL;
}

/** cfs_devview_by_ino() - the entry of inode @ino, or NULL */
struct dv_entry *cfs_devview_by_ino(const struct dv_table *t, uint64_t ino)
{
	struct dv_entry key = { .ino = ino }, **slot;

	slot = tfind(&key, &t->by_ino, cmp_ino);
	return slot ? *slot : NULL;
}

/* the inode number of @path while it is of @type: kept from the last builds */
static int ino_of(struct cfs_devview *dv, const char *path, mode_t type, uint64_t *ino)
{
	struct dv_ino key = { .path = (char *)path }, **slot, *i;

	if (!*path) {
		*ino = FUSE_ROOT_ID;
		return 0;
	}
	slot = tfind(&key, &dv->inos, cmp_ino_path);
	if (slot) {
		i = *slot;
		/* another type under the same name is another inode to the kernel */
		if (i->type != type) {
			i->type = type;
			i->ino = dv->next_ino++;
		}
		*ino = i->ino;
		return 0;
	}
	i = calloc(1, sizeof(*i));
	if (!i || !(i->path = strdup(path)))
		goto nomem;
	i->type = type;
	i->ino = dv->next_ino++;
	if (!tsearch(i, &dv->inos, cmp_ino_path))
		goto nomem;
	*ino = i->ino;
	return 0;
nomem:
	if (i)
		free(i->path);
	free(i);
	return -ENOMEM;
}

/*
 * Add @path of @mode to @t (its directories too, 0755).  Return: the
 * entry; NULL with -EEXIST when the name or a directory on the way is
 * taken by something else, -ENOMEM.
 */
static struct dv_entry *table_add(struct cfs_devview *dv, struct dv_table *t, const char *path,
				  mode_t mode, int *err)
{
	const char *slash = strrchr(path, '/');
	struct dv_entry *e, *parent;
	char dir[PATH_MAX];

	if (cfs_devview_by_path(t, path)) {
		*err = -EEXIST;
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	parent = cfs_devview_by_path(t, dir);
	if (!parent && *path) {
		parent = table_add(dv, t, dir, S_IFDIR | 0755, err);
		if (!parent)
			return NULL;
	}
	if (parent && !S_ISDIR(parent->mode)) {
		*err = -EEXIST;
		return NULL;
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 128;
		struct dv_entry **n = realloc(t->e, cap * sizeof(*n));

		if (!n)
			goto nomem;
		t->e = n;
		t->cap = cap;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		goto nomem;
	e->path = strdup(path);
	if (!e->path || ino_of(dv, path, mode & S_IFMT, &e->ino) < 0) {
		entry_free(e);
		goto nomem;
	}
	e->name = slash ? e->path + (slash - path) + 1 : e->path;
	e->parent = parent ? parent->ino : FUSE_ROOT_ID;
	e->mode = mode;
	if (!tsearch(e, &t->by_path, cmp_path)) {
		entry_free(e);
		goto nomem;
	}
	if (!tsearch(e, &t->by_ino, cmp_ino)) {
		tdelete(e, &t->by_path, cmp_path);
		entry_free(e);
		goto nomem;
	}
	t->e[t->n++] = e;
	return e;
nomem:
	*err = -ENOMEM;
	return NULL;
}

/* a name of the fixed entries, or below one of them */
static bool reserved(const char *rel)
{
	for (size_t i = 0; i < N_FIXED; i++) {
		size_t n = strlen(fixed_entries[i].name);

		if (!strncmp(rel, fixed_entries[i].name, n) && (rel[n] == '\0' || rel[n] == '/'))
			return true;
	}
	return false;
}

/* the text of a link at @link to @node (both relative to /dev), as udev writes it */
static char *relative_target(const char *link, const char *node)
{
	size_t up = 0;
	char *s;

	for (const char *p = link; *p; p++)
		up += *p == '/';
	s = malloc(up * 3 + strlen(node) + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < up; i++)
		memcpy(s + i * 3, "../", 3);
	strcpy(s + up * 3, node);
	return s;
}

static int add_link(struct cfs_devview *dv, struct dv_table *t, const char *link,
		    const char *node)
{
	struct dv_entry *e;
	int err = 0;

	if (reserved(link) || !strcmp(link, node))
		return 0;
	e = table_add(dv, t, link, S_IFLNK | 0777, &err);
	if (!e)
		return err == -EEXIST ? 0 : err;
	e->target = relative_target(link, node);
	return e->target ? 0 : -ENOMEM;
}

/*
 * The node @devname of a device: a special file of @devt (a regular file
 * holding @data when given, or when there is no number) and its number
 * link.  A name already taken stays with what took it.
 * Return: the entry (NULL when the name was unusable or taken), or NULL
 * with *@err = -ENOMEM.
 */
static struct dv_entry *add_node(struct cfs_devview *dv, struct dv_table *t, const char *devname,
				 bool block, dev_t devt, mode_t perm, uid_t uid, gid_t gid,
				 const unsigned char *data, size_t len, int *err)
{
	char rel[PATH_MAX], link[64];
	mode_t type = data || !major(devt) ? S_IFREG : block ? S_IFBLK : S_IFCHR;
	struct dv_entry *e;

	*err = 0;
	if (!cfs_dev_rel_name(devname, rel, sizeof(rel)) || reserved(rel))
		return NULL;
	e = table_add(dv, t, rel, type | (perm & 07777), err);
	if (!e) {
		if (*err == -EEXIST)
			*err = 0;
		return NULL;
	}
	e->uid = uid;
	e->gid = gid;
	if (type != S_IFREG)
		e->rdev = devt;
	if (data && len) {
		e->data = malloc(len);
		if (!e->data) {
			*err = -ENOMEM;
			return NULL;
		}
		memcpy(e->data, data, len);
		e->len = len;
	}
	if (major(devt)) {
		snprintf(link, sizeof(link), "%s/%u:%u", block ? "block" : "char", major(devt),
			 minor(devt));
		*err = add_link(dv, t, link, rel);
	}
	return *err ? NULL : e;
}

/* the numbers the records gave a node: the other devices of a number are looked at */
struct build {
	struct cfs_devview *dv;
	struct dv_table *t;
	void *recorded;			/* tsearch() of (block << 63 | devt) values, as keys */
	uint64_t *keys;
	size_t nkeys, ckeys;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t number_key(bool block, dev_t devt)
{
	return ((uint64_t)block << 63) | (uint64_t)devt;
}

static int note_recorded(struct build *b, bool block, dev_t devt)
{
	if (b->nkeys == b->ckeys) {
		size_t c = b->ckeys ? b->ckeys * 2 : 64;
		uint64_t *k = realloc(b->keys, c * sizeof(*k));

		if (!k)
			return -ENOMEM;
		b->keys = k;
		b->ckeys = c;
	}
	b->keys[b->nkeys++] = number_key(block, devt);
	return 0;
}

/* a classfs_record_for_each_node() callback */
static int build_recorded(const struct classfs_record_node *node, void *data)
{
	struct build *b = data;
	struct dv_entry *e;
	int err;

	if (major(node->devt) && note_recorded(b, node->block, node->devt) < 0)
		return -ENOMEM;
	e = add_node(b->dv, b->t, node->devname, node->block, node->devt, node->mode, 0, 0,
		     node->contents, node->contents_len, &err);
	if (err)
		return err;
	if (!e)
		return 0;
	for (size_t i = 0; i < node->nsymlinks; i++) {
		char link[PATH_MAX];

		if (!cfs_dev_rel_name(node->symlinks[i], link, sizeof(link)))
			continue;
		err = add_link(b->dv, b->t, link, e->path);
		if (err)
			return err;
	}
	return 0;
}

/* what a device's own `uevent` file says of its node */
struct own {
	unsigned long major, minor, uid, gid;
	bool have_major, have_minor;
	mode_t mode;
	char devname[PATH_MAX];
};

static void parse_uevent(const char *text, size_t len, struct own *o)
{
	memset(o, 0, sizeof(*o));
	for (const char *s = text, *end = text + len; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *e = nl ? nl : end;
		const char *eq = memchr(s, '=', (size_t)(e - s));
		size_t kl = eq ? (size_t)(eq - s) : 0, vl = eq ? (size_t)(e - eq - 1) : 0;
		unsigned long v;

#define KEY_IS(k) (kl == strlen(k) && !memcmp(s, k, kl))
		if (!eq) {
			/* not a variable */
		} else if (KEY_IS("MAJOR")) {
			o->have_major = cfs_parse_uint(eq + 1, vl, 0xfff, &o->major);
		} else if (KEY_IS("MINOR")) {
			o->have_minor = cfs_parse_uint(eq + 1, vl, 0xfffff, &o->minor);
		} else if (KEY_IS("DEVNAME") && vl < sizeof(o->devname)) {
			memcpy(o->devname, eq + 1, vl);
			o->devname[vl] = '\0';
		} else if (KEY_IS("DEVMODE") && vl && vl <= 4 && strspn(eq + 1, "01234567") >= vl) {
			o->mode = (mode_t)(strtoul(eq + 1, NULL, 8) & 07777);
		} else if (KEY_IS("DEVUID") && cfs_parse_uint(eq + 1, vl, 0xfffffffe, &v)) {
			o->uid = v;
		} else if (KEY_IS("DEVGID") && cfs_parse_uint(eq + 1, vl, 0xfffffffe, &v)) {
			o->gid = v;
		}
#undef KEY_IS
		s = nl ? nl + 1 : end;
	}
}

/* a classfs_tree_for_each_device() callback: a device with a number no record gave a node */
static int build_device(struct classfs_device *dev, void *data)
{
	struct build *b = data;
	char devpath[PATH_MAX], path[PATH_MAX + 16], text[4096], link[PATH_MAX];
	const char *base;
	struct own o;
	uint64_t key;
	bool block;
	ssize_t n;
	dev_t devt;
	int err;

	if (classfs_device_devpath(dev, devpath, sizeof(devpath)) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/uevent", devpath + 1);
	n = classfs_path_read(b->dv->tree, path, text, sizeof(text));
	if (n <= 0)
		return 0;
	parse_uevent(text, (size_t)n, &o);
	if (!o.have_major || !o.have_minor || !o.major)
		return 0;
	devt = makedev(o.major, o.minor);
	snprintf(path, sizeof(path), "%s/subsystem", devpath + 1);
	n = classfs_path_readlink(b->dv->tree, path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	base = strrchr(link, '/');
	block = !strcmp(base ? base + 1 : link, "block");
	key = number_key(block, devt);
	if (tfind(&key, &b->recorded, cmp_u64))
		return 0;
	if (!o.devname[0]) {
		base = strrchr(devpath, '/');
		snprintf(o.devname, sizeof(o.devname), "%s", base ? base + 1 : devpath);
	}
	add_node(b->dv, b->t, o.devname, block, devt, o.mode ? o.mode : 0600, (uid_t)o.uid,
		 (gid_t)o.gid, NULL, 0, &err);
	return err;
}

/* a new table from the tree as it is now; Return: 0 or -ENOMEM */
static int build(struct cfs_devview *dv, struct dv_table *t)
{
	struct build b = { .dv = dv, .t = t };
	struct dv_entry *e;
	int err = 0, r;

	e = table_add(dv, t, "", S_IFDIR | 0755, &err);
	if (!e)
		return err;
	e->fixed = true;
	for (size_t i = 0; i < N_FIXED; i++) {
		e = table_add(dv, t, fixed_entries[i].name, fixed_entries[i].mode, &err);
		if (!e)
			return err;
		e->fixed = true;
		e->rdev = makedev(fixed_entries[i].major, fixed_entries[i].minor);
		if (fixed_entries[i].target && !(e->target = strdup(fixed_entries[i].target)))
			return -ENOMEM;
	}
	r = classfs_record_for_each_node(dv->tree, build_recorded, &b);
	for (size_t i = 0; r == 0 && i < b.nkeys; i++)
		if (!tsearch(&b.keys[i], &b.recorded, cmp_u64))
			r = -ENOMEM;
	if (r == 0)
		r = classfs_tree_for_each_device(dv->tree, build_device, &b);
	tdestroy(b.recorded, nothing);
	free(b.keys);
	return r < 0 ? r : 0;
}

/**
 * cfs_devview_current() - the table, rebuilt when the tree changed since
 * it was built (under dv->lock).  Return: the table, or NULL (no memory
 * for a first one; a later failure keeps the last good one).
 */
struct dv_table *cfs_devview_current(struct cfs_devview *dv)
{
	uint64_t changes = __atomic_load_n(&dv->changes, __ATOMIC_ACQUIRE);
	struct dv_table t = { 0 };

	if (dv->have_table && dv->built == changes)
		return &dv->t;
	if (build(dv, &t) < 0) {
		table_free(&t);
		return dv->have_table ? &dv->t : NULL;
	}
	if (dv->have_table)
		table_free(&dv->t);
	dv->t = t;
	dv->have_table = true;
	dv->built = changes;
	return &dv->t;
}

/* ------------------------------------------------------------------ */
/* following the tree                                                  */
/* ------------------------------------------------------------------ */

static void watch_changed(void *data, uint64_t dir, const char *name)
{
	struct cfs_devview *dv = data;

	(void)dir;
	(void)name;
	__atomic_add_fetch(&dv->changes, 1, __ATOMIC_RELEASE);
}

const struct classfs_watch_ops cfs_devview_watch_ops = {
	.changed = watch_changed,
};

/**
 * cfs_devview_new() - the devtmpfs-style view of @tree (not yet mounted)
 * Return: the view, or NULL (no memory).
 */
struct cfs_devview *cfs_devview_new(struct classfs_tree *tree)
{
	struct cfs_devview *dv = calloc(1, sizeof(*dv));

	if (!dv)
		return NULL;
	dv->tree = tree;
	dv->next_ino = FUSE_ROOT_ID + 1;
	dv->mtime = time(NULL);
	pthread_mutex_init(&dv->lock, NULL);
	return dv;
}

static void ino_free(void *p)
{
	struct dv_ino *i = p;

	free(i->path);
	free(i);
}

/** cfs_devview_free() - free @dv (its mount is gone); NULL is ignored */
void cfs_devview_free(struct cfs_devview *dv)
{
	if (!dv)
		return;
	if (dv->have_table)
		table_free(&dv->t);
	tdestroy(dv->inos, ino_free);
	pthread_mutex_destroy(&dv->lock);
	free(dv);
}


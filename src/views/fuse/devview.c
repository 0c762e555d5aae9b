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
 */
#include "fuse-internal.h"

#include <search.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <classfs/record.h>

#define FIXED_TIMEOUT 86400.0

struct dv_entry {
	char *path;			/* "" for the root, "input/event5" */
	const char *name;		/* the last component of @path */
	uint64_t ino, parent;
	mode_t mode;			/* type and permission bits */
	uid_t uid;
	gid_t gid;
	dev_t rdev;
	char *target;			/* a link's text */
	unsigned char *data;		/* a regular file's bytes */
	size_t len;
	bool fixed;			/* never changes: cached by the kernel */
};

/* the inode number a name keeps while its file type does */
struct dv_ino {
	char *path;
	mode_t type;
	uint64_t ino;
};

/* one build of the view: the entries, found by path and by inode */
struct dv_table {
	struct dv_entry **e;
	size_t n, cap;
	void *by_path, *by_ino;		/* tsearch() trees of struct dv_entry */
};

struct cfs_devview {
	struct classfs_tree *tree;
	pthread_mutex_t lock;		/* the table, the inode numbers */
	uint64_t changes;		/* the tree's changes so far (atomic) */
	uint64_t built;			/* @changes the table was built at */
	bool have_table;
	struct dv_table t;
	void *inos;			/* struct dv_ino, kept across rebuilds */
	uint64_t next_ino;
	time_t mtime;
};

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

static struct dv_entry *table_path(const struct dv_table *t, const char *path)
{
	struct dv_entry key = { .path = (char *)path }, **slot;

	slot = tfind(&key, &t->by_path, cmp_path);
	return slot ? *slot : NULL;
}

static struct dv_entry *table_ino(const struct dv_table *t, uint64_t ino)
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

	if (table_path(t, path)) {
		*err = -EEXIST;
		return NULL;
	}
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	parent = table_path(t, dir);
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

/* "/dev/input/event5" or "input/event5" as "input/event5"; false when unusable */
static bool rel_name(const char *devname, char *buf, size_t size)
{
	const char *s = devname;

	if (!s)
		return false;
	if (!strncmp(s, "/dev/", 5))
		s += 5;
	if (!*s || *s == '/')
		return false;
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p && !*++p)
			return false;
	}
	return snprintf(buf, size, "%s", s) < (int)size;
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
	if (!rel_name(devname, rel, sizeof(rel)) || reserved(rel))
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

		if (!rel_name(node->symlinks[i], link, sizeof(link)))
			continue;
		err = add_link(b->dv, b->t, link, e->path);
		if (err)
			return err;
	}
	return 0;
}

static bool parse_uint(const char *s, size_t len, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!len || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
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
			o->have_major = parse_uint(eq + 1, vl, 0xfff, &o->major);
		} else if (KEY_IS("MINOR")) {
			o->have_minor = parse_uint(eq + 1, vl, 0xfffff, &o->minor);
		} else if (KEY_IS("DEVNAME") && vl < sizeof(o->devname)) {
			memcpy(o->devname, eq + 1, vl);
			o->devname[vl] = '\0';
		} else if (KEY_IS("DEVMODE") && vl && vl <= 4 && strspn(eq + 1, "01234567") >= vl) {
			o->mode = (mode_t)(strtoul(eq + 1, NULL, 8) & 07777);
		} else if (KEY_IS("DEVUID") && parse_uint(eq + 1, vl, 0xfffffffe, &v)) {
			o->uid = v;
		} else if (KEY_IS("DEVGID") && parse_uint(eq + 1, vl, 0xfffffffe, &v)) {
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

/*
 * The table, rebuilt when the tree changed since it was built (under
 * dv->lock).  Return: the table, or NULL (no memory for a first one;
 * a later failure keeps the last good one).
 */
static struct dv_table *current(struct cfs_devview *dv)
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

/* ------------------------------------------------------------------ */
/* the requests                                                        */
/* ------------------------------------------------------------------ */

static struct cfs_devview *dv_of(fuse_req_t req)
{
	return ((struct classfs_mount *)fuse_req_userdata(req))->devview;
}

static void fill_stat(const struct cfs_devview *dv, const struct dv_entry *e, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = e->ino;
	st->st_mode = e->mode;
	st->st_nlink = S_ISDIR(e->mode) ? 2 : 1;
	st->st_uid = e->uid;
	st->st_gid = e->gid;
	st->st_rdev = e->rdev;
	st->st_blksize = 4096;
	if (S_ISREG(e->mode))
		st->st_size = (off_t)e->len;
	else if (S_ISLNK(e->mode))
		st->st_size = (off_t)strlen(e->target);
	st->st_atime = st->st_mtime = st->st_ctime = dv->mtime;
}

static void dv_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cfs_devview *dv = dv_of(req);
	struct fuse_entry_param ep = { 0 };
	struct dv_table *t;
	struct dv_entry *p, *e = NULL;
	char path[PATH_MAX];

	pthread_mutex_lock(&dv->lock);
	t = current(dv);
	p = t ? table_ino(t, parent) : NULL;
	if (p && S_ISDIR(p->mode) &&
	    snprintf(path, sizeof(path), "%s%s%s", p->path, *p->path ? "/" : "", name) <
		    (int)sizeof(path))
		e = table_path(t, path);
	if (e) {
		ep.ino = e->ino;
		fill_stat(dv, e, &ep.attr);
		/* devices come and go without an invalidation: only fixed entries are cached */
		ep.attr_timeout = ep.entry_timeout = e->fixed ? FIXED_TIMEOUT : 0;
	}
	pthread_mutex_unlock(&dv->lock);
	if (!t)
		fuse_reply_err(req, ENOMEM);
	else if (!p)
		fuse_reply_err(req, ESTALE);
	else if (!e)
		fuse_reply_err(req, ENOENT);	/* a negative entry, never cached */
	else
		fuse_reply_entry(req, &ep);
}

static void dv_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)ino;
	(void)nlookup;
	fuse_reply_none(req);
}

static void dv_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cfs_devview *dv = dv_of(req);
	struct dv_table *t;
	struct dv_entry *e = NULL;
	struct stat st;
	double timeout = 0;

	(void)fi;
	pthread_mutex_lock(&dv->lock);
	t = current(dv);
	if (t && (e = table_ino(t, ino))) {
		fill_stat(dv, e, &st);
		timeout = e->fixed ? FIXED_TIMEOUT : 0;
	}
	pthread_mutex_unlock(&dv->lock);
	if (!e)
		fuse_reply_err(req, t ? ENOENT : ENOMEM);
	else
		fuse_reply_attr(req, &st, timeout);
}

static void dv_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct cfs_devview *dv = dv_of(req);
	char buf[PATH_MAX] = "";
	struct dv_table *t;
	struct dv_entry *e;
	int err = 0;

	pthread_mutex_lock(&dv->lock);
	t = current(dv);
	e = t ? table_ino(t, ino) : NULL;
	if (!e)
		err = t ? ENOENT : ENOMEM;
	else if (!S_ISLNK(e->mode))
		err = EINVAL;
	else
		snprintf(buf, sizeof(buf), "%s", e->target);
	pthread_mutex_unlock(&dv->lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_readlink(req, buf);
}

/* an open regular file (a node recorded with contents) reads the bytes it had at open */
struct dv_file {
	size_t len;
	unsigned char data[];
};

static void dv_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cfs_devview *dv = dv_of(req);
	struct dv_file *f = NULL;
	struct dv_table *t;
	struct dv_entry *e;
	int err = 0;

	pthread_mutex_lock(&dv->lock);
	t = current(dv);
	e = t ? table_ino(t, ino) : NULL;
	if (!e)
		err = t ? ENOENT : ENOMEM;
	else if (S_ISDIR(e->mode))
		err = EISDIR;
	else if (!S_ISREG(e->mode))
		err = EACCES;	/* special files are the kernel's to refuse (nodev) */
	else if ((fi->flags & O_ACCMODE) != O_RDONLY)
		err = EACCES;
	else if (!(f = malloc(sizeof(*f) + e->len)))
		err = ENOMEM;
	else {
		f->len = e->len;
		memcpy(f->data, e->data, e->len);
	}
	pthread_mutex_unlock(&dv->lock);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)f;
	fi->direct_io = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void dv_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct dv_file *f = (void *)(uintptr_t)fi->fh;

	(void)ino;
	if (off < 0 || (size_t)off >= f->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, (const char *)f->data + off,
			       size < f->len - (size_t)off ? size : f->len - (size_t)off);
}

static void dv_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* a directory lists the names it had at opendir: offsets stay valid while devices come */
struct dv_dir {
	size_t n;
	struct {
		uint64_t ino;
		mode_t mode;
		char *name;
	} ent[];
};

static void dir_free(struct dv_dir *d)
{
	for (size_t i = 0; d && i < d->n; i++)
		free(d->ent[i].name);
	free(d);
}

static void dv_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cfs_devview *dv = dv_of(req);
	struct dv_dir *d = NULL;
	struct dv_table *t;
	struct dv_entry *p;
	size_t n = 0;
	int err = 0;

	pthread_mutex_lock(&dv->lock);
	t = current(dv);
	p = t ? table_ino(t, ino) : NULL;
	if (!p)
		err = t ? ENOENT : ENOMEM;
	else if (!S_ISDIR(p->mode))
		err = ENOTDIR;
	for (size_t i = 0; !err && i < t->n; i++)
		n += t->e[i]->parent == ino && t->e[i]->ino != ino;
	if (!err && !(d = calloc(1, sizeof(*d) + n * sizeof(d->ent[0]))))
		err = ENOMEM;
	for (size_t i = 0; !err && i < t->n; i++) {
		struct dv_entry *e = t->e[i];

		if (e->parent != ino || e->ino == ino)
			continue;
		d->ent[d->n].ino = e->ino;
		d->ent[d->n].mode = e->mode;
		if (!(d->ent[d->n].name = strdup(e->name)))
			err = ENOMEM;
		else
			d->n++;
	}
	pthread_mutex_unlock(&dv->lock);
	if (err) {
		dir_free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0)
		dir_free(d);
}

static void dv_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dv_dir *d = (void *)(uintptr_t)fi->fh;
	char *buf = malloc(size);
	size_t used = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* offsets 0 and 1 are "." and "..", entry i is offset i + 2 */
	for (off_t i = off; i < (off_t)d->n + 2; i++) {
		struct stat st = { .st_ino = ino, .st_mode = S_IFDIR };
		const char *name = i == 0 ? "." : "..";
		size_t need;

		if (i >= 2) {
			st.st_ino = d->ent[i - 2].ino;
			st.st_mode = d->ent[i - 2].mode;
			name = d->ent[i - 2].name;
		}
		need = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void dv_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	dir_free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void dv_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = NAME_MAX };

	(void)ino;
	fuse_reply_statfs(req, &sv);
}

static void dv_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	conn->want &= ~(unsigned)(FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_SPLICE_READ |
				  FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE |
				  FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_EXPORT_SUPPORT);
}

/* entries come and go with the tree's devices only: a devtmpfs nobody writes */
static void dv_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	fuse_reply_err(req, EPERM);
}

static void dv_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	fuse_reply_err(req, EACCES);
}

static void dv_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	fuse_reply_err(req, EPERM);
}

static void dv_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, EPERM);
}

static void dv_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void dv_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void dv_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EPERM);
}

static void dv_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EPERM);
}

const struct fuse_lowlevel_ops cfs_devview_ops = {
	.init = dv_init,
	.lookup = dv_lookup,
	.forget = dv_forget,
	.getattr = dv_getattr,
	.setattr = dv_setattr,
	.readlink = dv_readlink,
	.open = dv_open,
	.read = dv_read,
	.release = dv_release,
	.opendir = dv_opendir,
	.readdir = dv_readdir,
	.releasedir = dv_releasedir,
	.statfs = dv_statfs,
	.create = dv_create,
	.mknod = dv_mknod,
	.mkdir = dv_mkdir,
	.unlink = dv_unlink,
	.rmdir = dv_unlink,
	.symlink = dv_symlink,
	.rename = dv_rename,
	.link = dv_link,
};

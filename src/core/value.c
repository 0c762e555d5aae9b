// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * value.c - entries that are data rather than code: stored-value
 * attributes, links added by a publisher (with literal or computed
 * targets), and the plain directories their paths need.  The record
 * loader and the daemon publish devices this way; the filesystem and
 * the path API see ordinary attributes and links.
 *
 * A value is an ordinary text or binary attribute whose show()/store()
 * read and replace bytes kept beside it, so active references, modes and
 * removal work as for any attribute.  Reads and writes (io.c) reach the
 * bytes directly (cfs_value_read(), cfs_value_write()), so a value needs
 * no device: the files made through the filesystem (plain.c) are binary
 * values wherever they are.  Its bytes are guarded by one of a few
 * striped mutexes: a reader copies them out under it, a writer swaps in
 * a new buffer under it.
 */
#include "internal.h"

struct cfs_value {
	union {
		struct classfs_device_attribute text;
		struct classfs_bin_attribute bin;
	} def;
	struct cfs_bytes bytes;	/* first in the allocation, after the value */
};

/*
 * A value is one allocation: its node, the value, the first bytes, the
 * name.  A loaded record adds millions of them, so one allocation each
 * rather than two: fewer calls, and no second chunk header.
 */
struct cfs_value_node {
	struct classfs_node node;
	struct cfs_value v;
};

static struct cfs_value *text_value(const struct classfs_device_attribute *a)
{
	return cfs_container_of(a, struct cfs_value, def.text);
}

static struct cfs_value *bin_value(const struct classfs_bin_attribute *a)
{
	return cfs_container_of(a, struct cfs_value, def.bin);
}

static ssize_t value_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	return (ssize_t)cfs_bytes_read(&text_value(a)->bytes, buf, 0, CLASSFS_ATTR_MAX);
}

static ssize_t value_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			   const char *buf, size_t count)
{
	int r = cfs_bytes_put(&text_value(a)->bytes, buf, count, 0, true);

	return r < 0 ? r : (ssize_t)count;
}

static ssize_t value_read(struct classfs_device *dev, const struct classfs_bin_attribute *a,
			  char *buf, off_t off, size_t count)
{
	return (ssize_t)cfs_bytes_read(&bin_value(a)->bytes, buf, (size_t)off, count);
}

/* the size stat reports is read under L: change it under L */
static void bin_size_update(struct classfs_device *dev, struct cfs_value *v)
{
	struct classfs_tree *t = cfs_device_tree_of(dev);

	cfs_lock(t);
	v->def.bin.size = cfs_bytes_len(&v->bytes);
	cfs_unlock(t);
}

static ssize_t value_write(struct classfs_device *dev, const struct classfs_bin_attribute *a,
			   const char *buf, off_t off, size_t count)
{
	int r = cfs_bytes_put(&bin_value(a)->bytes, buf, count, (size_t)off, false);

	if (r < 0)
		return r;
	bin_size_update(dev, bin_value(a));
	return (ssize_t)count;
}

/*
 * Free what a node's value holds apart from its node (node.c, for nodes
 * with CFS_NF_VALUE): its bytes, once they grew out of the allocation.
 */
void cfs_value_free(const void *attr)
{
	cfs_bytes_free(&((struct cfs_value *)attr)->bytes);
}

/* what a publisher's link leaves behind when it goes (node.c) */
void cfs_user_link_free(struct classfs_node *n)
{
	if (!(n->flags & CFS_NF_LINK_TEXT) && n->u.target)
		classfs_device_put(cfs_node_device(n->u.target));
}

/* the text of a literal link (view.c): kept in ->u.attr, so a rename may change the name */
const char *cfs_link_text(const struct classfs_node *n)
{
	return n->u.attr;
}

/* the bytes of stored value @n (CFS_NF_VALUE) */
struct cfs_bytes *cfs_value_bytes(const struct classfs_node *n)
{
	return &((struct cfs_value *)n->u.attr)->bytes;
}

/**
 * cfs_value_read() - read stored value @n from @off, without a show()
 * @n: a node with CFS_NF_VALUE, an active reference held
 *
 * A text value is read as its show() page would be, cut at @off.
 * Return: the bytes copied.
 */
ssize_t cfs_value_read(struct classfs_node *n, char *buf, size_t size, off_t off)
{
	struct cfs_value *v = (struct cfs_value *)n->u.attr;

	return (ssize_t)cfs_bytes_read(&v->bytes, buf, (size_t)off, size);
}

/**
 * cfs_value_write() - write stored value @n (CFS_NF_VALUE, active
 * reference held), no lock held
 *
 * A text value is replaced by the whole buffer, as its store() does
 * (@off is not used, CLASSFS_ATTR_MAX bytes at most); a binary value
 * takes the bytes at @off within its size, as a sysfs binary attribute
 * does (-EFBIG at or past its end, unless it is empty); a file made
 * through the filesystem (CFS_NF_PLAIN) as a regular file does, growing
 * (a gap before @off reads as zeros); @append (such a file made
 * append-only): at its end, whatever @off.
 * Return: bytes taken, -E2BIG, -EFBIG, -ENOMEM.
 */
ssize_t cfs_value_write(struct classfs_tree *t, struct classfs_node *n, const char *buf,
			size_t size, off_t off, bool append)
{
	struct cfs_value *v = (struct cfs_value *)n->u.attr;
	int r;

	if (n->type == CFS_NT_REG) {
		if (size > CLASSFS_ATTR_MAX)
			return -E2BIG;
		r = cfs_bytes_put(&v->bytes, buf, size, 0, true);
		return r < 0 ? r : (ssize_t)size;
	}
	if (!(n->flags & CFS_NF_PLAIN)) {
		size_t len = cfs_bytes_len(&v->bytes);

		if (len && (size_t)off >= len)
			return -EFBIG;
		if (len && size > len - (size_t)off)
			size = len - (size_t)off;
	}
	if (append)
		off = (off_t)cfs_bytes_len(&v->bytes);
	r = cfs_bytes_put(&v->bytes, buf, size, (size_t)off, false);
	if (r < 0)
		return r;
	cfs_lock(t);
	v->def.bin.size = cfs_bytes_len(&v->bytes);
	cfs_unlock(t);
	return (ssize_t)size;
}

/**
 * cfs_value_truncate() - set the length of @n, a file made through the
 * filesystem, to @size (its active reference held, no lock held); a
 * published value is left as it is, as sysfs leaves an attribute opened
 * with O_TRUNC.
 * Return: 0, -EFBIG, -ENOMEM.
 */
int cfs_value_truncate(struct classfs_tree *t, struct classfs_node *n, off_t size)
{
	struct cfs_value *v = (struct cfs_value *)n->u.attr;
	int r;

	if (!(n->flags & CFS_NF_PLAIN) || n->type != CFS_NT_BIN)
		return 0;
	if ((uint64_t)size > CFS_BYTES_MAX)
		return -EFBIG;
	r = cfs_bytes_put(&v->bytes, "", 0, (size_t)size, true);
	if (r < 0)
		return r;
	cfs_lock(t);
	v->def.bin.size = cfs_bytes_len(&v->bytes);
	cfs_unlock(t);
	return 0;
}

/* under L: value @n's definition follows its node's name and mode (a rename, a chmod) */
void cfs_value_set_name_mode(struct classfs_node *n)
{
	struct cfs_value *v = (struct cfs_value *)n->u.attr;

	if (n->type == CFS_NT_BIN) {
		v->def.bin.attr.name = n->name;
		v->def.bin.attr.mode = n->mode;
	} else {
		v->def.text.attr.name = n->name;
		v->def.text.attr.mode = n->mode;
	}
}

/*
 * Split @path into at most CFS_PATH_DEPTH valid components, in place in
 * @buf.  Return: the number of components or -EINVAL.
 */
#define CFS_PATH_DEPTH 8

static int split_path(const char *path, char *buf, size_t size, char **comp)
{
	int n = 0;

	if (!path || strlen(path) >= size)
		return -EINVAL;
	strcpy(buf, path);
	for (char *s = buf, *slash;; s = slash + 1) {
		slash = strchr(s, '/');
		if (slash)
			*slash = '\0';
		if (n == CFS_PATH_DEPTH || classfs_name_valid(s) < 0)
			return -EINVAL;
		comp[n++] = s;
		if (!slash)
			return n;
	}
}

/* may @n hold a publisher's entries?  The device itself, or a plain dir in it */
static bool holds_entries(const struct classfs_node *n)
{
	return n->type == CFS_NT_DIR && (n->flags & (CFS_NF_DEVICE | CFS_NF_PLAIN_DIR));
}

/*
 * Link @leaf at @comp[0..ncomp) below @dev's directory, making the plain
 * directories missing on the way (under L).  On failure nothing is left:
 * the directories made here go again.
 */
static int place_locked(struct classfs_tree *t, struct classfs_device *dev, char **comp,
			int ncomp, struct classfs_node *leaf, struct classfs_node **freelist)
{
	struct classfs_node *dir = &dev->p.node, *made = NULL;
	int r = 0;

	cfs_assert_held(t);
	for (int i = 0; i < ncomp - 1; i++) {
		struct classfs_node *c = cfs_dir_lookup(dir, comp[i]);

		if (c) {
			if (!holds_entries(c) || (c->flags & CFS_NF_DEVICE)) {
				r = -EEXIST;
				goto fail;
			}
			dir = c;
			continue;
		}
		if (dir == &dev->p.node && cfs_name_is_virtual(dev, comp[i])) {
			r = -EEXIST;
			goto fail;
		}
		c = cfs_node_new(comp[i], CFS_NT_DIR, 0755);
		if (!c) {
			r = -ENOMEM;
			goto fail;
		}
		c->flags |= CFS_NF_PLAIN_DIR;
		r = cfs_node_add(t, dir, c);
		if (r < 0) {
			cfs_node_free(c);
			goto fail;
		}
		if (!made)
			made = c;
		dir = c;
	}
	if (cfs_dir_lookup(dir, leaf->name) ||
	    (dir == &dev->p.node && cfs_name_is_virtual(dev, leaf->name))) {
		r = -EEXIST;
		goto fail;
	}
	r = cfs_node_add(t, dir, leaf);
	if (r == 0)
		return 0;
fail:
	if (made)
		cfs_subtree_unlink(t, made, freelist);
	return r;
}

/* add @leaf (freed on error) at @path below an added @dev */
static int entry_add(struct classfs_device *dev, const char *path, struct classfs_node *leaf)
{
	struct classfs_node *freelist = NULL;
	struct classfs_tree *t = cfs_device_tree_of(dev);
	char buf[CFS_PATH_DEPTH * (NAME_MAX + 1)], *comp[CFS_PATH_DEPTH];
	int n = split_path(path, buf, sizeof(buf), comp), r;

	if (n < 0) {
		r = n;
		goto out;
	}
	cfs_lock(t);
	r = cfs_dev_alive(dev) ? place_locked(t, dev, comp, n, leaf, &freelist) : -ENODEV;
	cfs_unlock(t);
	cfs_watch_sync(t);
	cfs_free_list(freelist);
out:
	if (r < 0)
		cfs_node_free(leaf);
	return r;
}

/* the last component of a split-able @path, or NULL */
static const char *leaf_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

/**
 * cfs_value_node_new() - a stored value's node, not yet in the tree
 * @name: its name (copied)
 * @mode: its permission bits; a write is refused by them (io.c), never
 *        by a missing store(), so a chmod makes a value writable
 * @value: its first bytes, @len of them
 * @binary: a binary attribute (written at offsets, st_size its length)
 *
 * Return: the node (freed by cfs_node_free()), or NULL (out of memory).
 */
struct classfs_node *cfs_value_node_new(const char *name, mode_t mode, const void *value,
					size_t len, bool binary)
{
	struct cfs_value_node *vn;
	struct classfs_node *n;
	struct cfs_value *v;
	size_t namelen = strlen(name) + 1;

	/* the node, the value, its bytes, its name */
	vn = cfs_malloc(sizeof(*vn) + len + namelen);
	if (!vn)
		return NULL;
	n = &vn->node;
	v = &vn->v;
	cfs_bytes_init(&v->bytes, (char *)(vn + 1), value, len);
	memcpy((char *)(vn + 1) + len, name, namelen);
	cfs_node_init(n, (char *)(vn + 1) + len, binary ? CFS_NT_BIN : CFS_NT_REG, mode,
		      CFS_NF_ALLOC);
	if (binary)
		v->def.bin = (struct classfs_bin_attribute){
			.attr = { .name = n->name, .mode = mode },
			.size = len,
			.read = value_read,
			.write = value_write,
		};
	else
		v->def.text = (struct classfs_device_attribute){
			.attr = { .name = n->name, .mode = mode },
			.show = value_show,
			.store = value_store,
		};
	n->u.attr = v;
	n->flags |= CFS_NF_VALUE;
	return n;
}

int classfs_device_add_value(struct classfs_device *dev, const char *path, mode_t mode,
			     const void *value, size_t len, unsigned int flags)
{
	bool binary = flags & CLASSFS_VALUE_BINARY;
	const char *name = leaf_name(path);
	struct classfs_node *n;

	if (!dev || !name || (flags & ~CLASSFS_VALUE_BINARY) || (len && !value) ||
	    (mode & ~07777u))
		return -EINVAL;
	if ((!binary && len > CLASSFS_ATTR_MAX) || len > CFS_BYTES_MAX)
		return -E2BIG;
	if (!cfs_dev_state(dev, CFS_DS_ADDED))
		return -ENODEV;
	n = cfs_value_node_new(name, mode, value, len, binary);
	if (!n)
		return -ENOMEM;
	return entry_add(dev, path, n);
}

/* the node at @path below @dev (under L), or NULL */
static struct classfs_node *entry_find_locked(struct classfs_device *dev, const char *path)
{
	char buf[CFS_PATH_DEPTH * (NAME_MAX + 1)], *comp[CFS_PATH_DEPTH];
	struct classfs_node *n = &dev->p.node;
	int ncomp = split_path(path, buf, sizeof(buf), comp);

	for (int i = 0; i < ncomp && n; i++) {
		if (i && !(n->flags & CFS_NF_PLAIN_DIR))
			return NULL;
		n = cfs_dir_lookup(n, comp[i]);
	}
	return ncomp > 0 ? n : NULL;
}

/*
 * Take @dev's tree lock and find the entry at @path (*@np, NULL: none).
 * Return: the tree, locked; NULL (not locked) when @dev is not added.
 */
static struct classfs_tree *entry_find_lock(struct classfs_device *dev, const char *path,
					    struct classfs_node **np)
{
	struct classfs_tree *t;

	if (!cfs_dev_state(dev, CFS_DS_ADDED))
		return NULL;
	t = cfs_device_tree_of(dev);
	cfs_lock(t);
	*np = entry_find_locked(dev, path);
	return t;
}

int classfs_device_set_value(struct classfs_device *dev, const char *path, const void *value,
			     size_t len)
{
	struct classfs_tree *t;
	struct classfs_node *n;
	struct cfs_value *v = NULL;
	int r;

	if (!dev || !path || (len && !value))
		return -EINVAL;
	t = entry_find_lock(dev, path, &n);
	if (!t)
		return -ENOENT;
	if (n && (n->flags & CFS_NF_VALUE) && cfs_active_get(n))
		v = (struct cfs_value *)n->u.attr;
	cfs_unlock(t);
	if (!v)
		return -ENOENT;
	if ((n->type == CFS_NT_REG && len > CLASSFS_ATTR_MAX) || len > CFS_BYTES_MAX)
		r = -E2BIG;
	else
		r = cfs_bytes_put(&v->bytes, value, len, 0, true);
	if (r == 0 && n->type == CFS_NT_BIN)
		bin_size_update(dev, v);
	cfs_active_put(t, n);
	if (r == 0)
		(void)classfs_device_notify(dev, path);
	return r;
}

/**
 * cfs_link_node_new() - a link's node, not yet in the tree
 * @name: its name (copied)
 * @text: its literal target (copied), or NULL: its target is set in
 *        ->u.target by the caller (a device, referenced)
 *
 * Return: the node (freed by cfs_node_free()), or NULL (out of memory).
 */
struct classfs_node *cfs_link_node_new(const char *name, const char *text)
{
	size_t nl = strlen(name) + 1, tl = text ? strlen(text) + 1 : 0;
	struct classfs_node *n = cfs_malloc(sizeof(*n) + nl + tl);

	if (!n)
		return NULL;
	memcpy((char *)(n + 1), name, nl);
	if (text)
		memcpy((char *)(n + 1) + nl, text, tl);
	cfs_node_init(n, (char *)(n + 1), CFS_NT_LNK, 0777,
		      CFS_NF_ALLOC | CFS_NF_USER_LINK | (text ? CFS_NF_LINK_TEXT : 0));
	if (text)
		n->u.attr = (char *)(n + 1) + nl;
	return n;
}

int classfs_device_add_link(struct classfs_device *dev, const char *path, const char *target)
{
	struct classfs_node *n;

	if (!dev || !leaf_name(path) || !target || !*target || strlen(target) >= PATH_MAX)
		return -EINVAL;
	if (!cfs_dev_state(dev, CFS_DS_ADDED))
		return -ENODEV;
	n = cfs_link_node_new(leaf_name(path), target);
	if (!n)
		return -ENOMEM;
	return entry_add(dev, path, n);
}

int classfs_device_add_link_to(struct classfs_device *dev, const char *path,
			       struct classfs_device *target)
{
	struct classfs_node *n;
	int r;

	if (!dev || !target || !leaf_name(path))
		return -EINVAL;
	if (!cfs_dev_state(dev, CFS_DS_ADDED) || !cfs_dev_state(target, CFS_DS_ADDED))
		return -ENODEV;
	if (cfs_device_tree_of(dev) != cfs_device_tree_of(target))
		return -EINVAL;
	n = cfs_link_node_new(leaf_name(path), NULL);
	if (!n)
		return -ENOMEM;
	n->u.target = &classfs_device_get(target)->p.node;
	r = entry_add(dev, path, n);	/* frees @n, and so puts @target, on error */
	return r;
}

int classfs_device_remove_entry(struct classfs_device *dev, const char *path)
{
	struct classfs_node *n, *freelist = NULL;
	struct classfs_tree *t;
	int r = 0;

	if (!dev || !path)
		return -EINVAL;
	t = entry_find_lock(dev, path, &n);
	if (!t)
		return -ENOENT;
	if (!n || !(n->flags & (CFS_NF_VALUE | CFS_NF_USER_LINK | CFS_NF_PLAIN_DIR)))
		r = -ENOENT;
	else if ((n->flags & CFS_NF_PLAIN_DIR) && n->u.dir && n->u.dir->count)
		r = -ENOTEMPTY;
	else
		r = cfs_node_remove_locked(t, n, &freelist);
	cfs_unlock(t);
	cfs_watch_sync(t);
	cfs_free_list(freelist);
	return r;
}

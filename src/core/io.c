// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * io.c - reading and writing entries: show()/store() and the other
 * callbacks run with an active reference on their node and no lock held,
 * so a removal can wait for them and they can call back into the API.
 *
 * A device text attribute's show()/store() may also answer later
 * (classfs_defer()): the caller's offer is kept in the callback's frame,
 * so only the callback the caller itself runs can take it, never one that
 * callback runs in turn.  The answer then comes after the active
 * reference is dropped: what completes the reply may not use the
 * attribute any more, only what it copied.
 */
#include "internal.h"

enum call_kind { CALL_NONE, CALL_DEV_TEXT, CALL_DEV_BIN, CALL_CLASS, CALL_TREE, CALL_UEVENT,
		 CALL_DEVNUM, CALL_VALUE };

struct call {
	enum call_kind kind;
	struct classfs_node *active;	/* whose active reference is held */
	struct classfs_device *dev;
	struct classfs_class *cls;
	const void *attr;
	mode_t mode;
	dev_t devt;
	bool immutable;		/* a stored value made immutable (plain.c) */
	bool append;		/* a file made append-only (plain.c) */
	bool plain;		/* a file made through the filesystem (plain.c) */
};

static struct classfs_node *owner_of(struct classfs_node *n, uint8_t flag)
{
	for (n = n->parent; n; n = n->parent)
		if (n->flags & flag)
			return n;
	return NULL;
}

/* what reading or writing @e calls; takes the active reference (under L) */
static int call_prepare_locked(const struct cfs_entry *e, struct call *c)
{
	struct classfs_stat st;

	cfs_entry_stat(e, &st);
	*c = (struct call){ .mode = st.mode };
	if (st.type == CLASSFS_FT_DIR)
		return -EISDIR;
	if (st.type == CLASSFS_FT_LNK)
		return -EINVAL;
	if (e->slot == CFS_SLOT_DEV) {
		c->kind = CALL_DEVNUM;
		c->devt = cfs_entry_device(e)->devt;
		return 0;
	}
	if (e->slot) {
		const struct classfs_device_attribute *text;
		const struct classfs_bin_attribute *bin;

		c->dev = cfs_entry_device(e);
		c->active = e->n;
		if (e->slot == CFS_SLOT_UEVENT) {
			c->kind = CALL_UEVENT;
		} else {
			cfs_group_attr(cfs_vgroup(c->dev, cfs_slot_group(e->slot)),
				       cfs_slot_attr(e->slot), &text, &bin);
			c->kind = text ? CALL_DEV_TEXT : CALL_DEV_BIN;
			c->attr = text ? (const void *)text : (const void *)bin;
		}
	} else {
		struct classfs_node *o;

		c->active = e->n;
		c->attr = e->n->u.attr;
		if (e->n->flags & CFS_NF_TREEATTR) {
			c->kind = CALL_TREE;
		} else if (e->n->flags & CFS_NF_VALUE) {
			c->kind = CALL_VALUE;	/* bytes, not code: no owner needed */
			c->immutable = e->n->flags & CFS_NF_IMMUTABLE;
			c->append = e->n->flags & CFS_NF_APPEND;
			c->plain = e->n->flags & CFS_NF_PLAIN;
		} else if ((o = owner_of(e->n, CFS_NF_DEVICE | CFS_NF_CLASS)) &&
			   (o->flags & CFS_NF_DEVICE)) {
			c->kind = e->n->type == CFS_NT_BIN ? CALL_DEV_BIN : CALL_DEV_TEXT;
			c->dev = cfs_node_device(o);
		} else if (o) {
			c->kind = CALL_CLASS;
			c->cls = cfs_node_class(o);
		} else {
			return -EIO;
		}
	}
	if (!cfs_active_get(c->active))
		return -ENODEV;
	return 0;
}

static int call_begin(struct classfs_tree *t, uint64_t ino, struct call *c, struct cfs_frame **f)
{
	struct cfs_entry e;
	int r;

	*f = NULL;
	cfs_lock(t);
	r = cfs_resolve_locked(t, ino, &e);
	if (!r)
		r = call_prepare_locked(&e, c);
	cfs_unlock(t);
	if (r < 0 || !c->active)
		return r;
	*f = cfs_frame_push(c->active);
	if (!*f) {
		cfs_active_put(t, c->active);
		return -EBUSY;
	}
	return 0;
}

static ssize_t uevent_show(struct classfs_device *dev, char *page)
{
	struct classfs_uevent_env *env = cfs_malloc(sizeof(*env));
	size_t len = 0;
	int r;

	if (!env)
		return -ENOMEM;
	env->envp_idx = 0;
	env->buflen = 0;
	r = cfs_env_device_vars(dev, env);
	/* a veto only hides the event, the file still shows the variables */
	(void)r;
	for (int i = 0; i < env->envp_idx; i++) {
		size_t l = strlen(env->envp[i]);

		if (len + l + 1 > CLASSFS_ATTR_MAX)
			break;
		memcpy(page + len, env->envp[i], l);
		len += l;
		page[len++] = '\n';
	}
	cfs_free(env);
	return (ssize_t)len;
}

/*
 * what a show()/store() given @f's offer returned: once it took the
 * offer the answer is its to give, whatever it returned; claiming to
 * answer later without having taken it is an error.
 */
static ssize_t offer_result(const struct cfs_frame *f, ssize_t r)
{
	if (f->taken)
		return -CLASSFS_DEFERRED;
	return r == -CLASSFS_DEFERRED ? -EIO : r;
}

struct classfs_reply *classfs_defer(void)
{
	struct cfs_frame *f = cfs_frame_top();
	struct classfs_reply *reply;

	if (!f || !f->offer || f->taken)
		return NULL;
	reply = f->offer->take(f->offer);
	f->taken = reply != NULL;
	return reply;
}

int classfs_io_error(long err)
{
	if (err >= 0 || err < -511)
		return -EIO;
	switch (-err) {
	case EBADF: case EFAULT: case ESPIPE: case EISDIR: case ENOTDIR: case ENAMETOOLONG:
	case ELOOP: case EMFILE: case ENFILE:
	case EAGAIN: case EINTR:
	case ENOSYS: case ENOTCONN: case EPIPE:
		return -EIO;
	default:
		return (int)err;
	}
}

ssize_t classfs_read(struct classfs_tree *t, uint64_t ino, char *buf, size_t size, off_t off)
{
	return classfs_read_offer(t, ino, buf, size, off, NULL);
}

ssize_t classfs_read_offer(struct classfs_tree *t, uint64_t ino, char *buf, size_t size, off_t off,
			   struct classfs_reply_offer *offer)
{
	struct cfs_frame *f;
	struct call c;
	ssize_t len;
	char *page;
	int r;

	if (!t || (!buf && size) || off < 0)
		return -EINVAL;
	r = call_begin(t, ino, &c, &f);
	if (r < 0)
		return r;
	if (!(c.mode & 0444)) {
		len = -EACCES;
		goto out;
	}
	if (c.kind == CALL_VALUE) {
		len = cfs_value_read(c.active, buf, size, off);
		goto out;
	}
	if (c.kind == CALL_DEV_BIN) {
		const struct classfs_bin_attribute *a = c.attr;

		if (!a->read)
			len = -EIO;
		else if (a->size && (size_t)off >= a->size)
			len = 0;
		else
			len = a->read(c.dev, a, buf, off,
				      a->size && off + size > a->size ? a->size - (size_t)off : size);
		goto out;
	}
	page = cfs_malloc(CLASSFS_ATTR_MAX + 1);
	if (!page) {
		len = -ENOMEM;
		goto out;
	}
	switch (c.kind) {
	case CALL_DEVNUM:
		len = snprintf(page, CLASSFS_ATTR_MAX, "%u:%u\n", major(c.devt), minor(c.devt));
		break;
	case CALL_UEVENT:
		len = uevent_show(c.dev, page);
		break;
	case CALL_DEV_TEXT: {
		const struct classfs_device_attribute *a = c.attr;

		f->offer = offer;
		len = offer_result(f, a->show ? a->show(c.dev, a, page) : -EIO);
		break;
	}
	case CALL_CLASS: {
		const struct classfs_class_attribute *a = c.attr;

		len = a->show ? a->show(c.cls, a, page) : -EIO;
		break;
	}
	case CALL_TREE: {
		const struct cfs_tree_attr *a = c.attr;

		len = a->show ? a->show(t, page) : -EIO;
		break;
	}
	default:
		len = -EIO;
	}
	if (len > CLASSFS_ATTR_MAX)
		len = CLASSFS_ATTR_MAX;	/* a show() may not overrun its page */
	if (len >= 0) {	/* (-CLASSFS_DEFERRED: the reply cuts the value itself) */
		if (off >= len) {
			len = 0;
		} else {
			len -= off;
			if ((size_t)len > size)
				len = (ssize_t)size;
			memcpy(buf, page + off, (size_t)len);
		}
	}
	cfs_free(page);
out:
	if (f)
		cfs_frame_pop(t, f);
	return len;
}

ssize_t classfs_write(struct classfs_tree *t, uint64_t ino, const char *buf, size_t size, off_t off)
{
	return classfs_write_offer(t, ino, buf, size, off, NULL);
}

static ssize_t write_entry(struct classfs_tree *t, uint64_t ino, const char *buf, size_t size,
			   off_t off, struct classfs_reply_offer *offer, bool created);

ssize_t classfs_write_offer(struct classfs_tree *t, uint64_t ino, const char *buf, size_t size,
			    off_t off, struct classfs_reply_offer *offer)
{
	return write_entry(t, ino, buf, size, off, offer, false);
}

ssize_t classfs_write_created(struct classfs_tree *t, uint64_t ino, const char *buf,
			      size_t size, off_t off)
{
	return write_entry(t, ino, buf, size, off, NULL, true);
}

/* @created: by its creator's descriptor, which a file made so writes whatever its mode */
static ssize_t write_entry(struct classfs_tree *t, uint64_t ino, const char *buf, size_t size,
			   off_t off, struct classfs_reply_offer *offer, bool created)
{
	struct cfs_frame *f;
	struct call c;
	ssize_t r;
	char *page = NULL;
	bool changed = false;	/* a value views may cache was written */

	if (!t || (!buf && size) || off < 0)
		return -EINVAL;
	r = call_begin(t, ino, &c, &f);
	if (r < 0)
		return r;
	if (c.immutable) {
		r = -EPERM;	/* before the mode, as Linux's inode_permission() */
		goto out;
	}
	if ((!(c.mode & 0222) && !(created && c.plain)) || c.kind == CALL_DEVNUM) {
		r = -EACCES;
		goto out;
	}
	if (c.kind == CALL_VALUE) {
		r = cfs_value_write(t, c.active, buf, size, off, c.append);
		changed = true;
		goto out;
	}
	if (c.kind == CALL_DEV_BIN) {
		const struct classfs_bin_attribute *a = c.attr;

		if (!a->write)
			r = -EIO;
		else if (a->size && (size_t)off >= a->size)
			r = -EFBIG;
		else
			r = a->write(c.dev, a, buf, off,
				     a->size && off + size > a->size ? a->size - (size_t)off : size);
		goto out;
	}
	if (size > CLASSFS_ATTR_MAX) {
		r = -E2BIG;
		goto out;
	}
	/* store() gets a NUL-terminated copy, as sysfs gives it */
	page = cfs_malloc(size + 1);
	if (!page) {
		r = -ENOMEM;
		goto out;
	}
	memcpy(page, buf, size);
	page[size] = '\0';
	switch (c.kind) {
	case CALL_UEVENT:
		r = cfs_uevent_file_write(c.dev, page, size);
		if (r == 0)
			r = (ssize_t)size;
		break;
	case CALL_DEV_TEXT: {
		const struct classfs_device_attribute *a = c.attr;

		f->offer = offer;
		r = offer_result(f, a->store ? a->store(c.dev, a, page, size) : -EIO);
		/*
		 * stored bytes replaced, or a show() that may answer otherwise
		 * now: a view's snapshot, and a getattr of it answered before
		 * the store, must not outlive it (the FUSE view's push makes the
		 * kernel drop both)
		 */
		changed = true;
		break;
	}
	case CALL_CLASS: {
		const struct classfs_class_attribute *a = c.attr;

		r = a->store ? a->store(c.cls, a, page, size) : -EIO;
		break;
	}
	case CALL_TREE: {
		const struct cfs_tree_attr *a = c.attr;

		r = a->store ? a->store(t, page, size) : -EIO;
		break;
	}
	default:
		r = -EIO;
	}
	if (r > (ssize_t)size)
		r = (ssize_t)size;
out:
	cfs_free(page);
	if (f)
		cfs_frame_pop(t, f);
	/* views that keep the value drop it before the caller goes on */
	if (changed && r >= 0)
		cfs_watch_value(t, ino);
	return r;
}

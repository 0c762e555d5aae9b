// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops-attr.c - ATTR_GET and ATTR_SET, and whether a caller may read
 * what INFO prints: a device's attributes through the socket, with the
 * modes the mount would apply, and the quota a stored value's bytes
 * count against.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ops.h"

/*
 * The read permission the mount would give: the mount shows every file
 * as root's, so without this a uid could read through the socket what
 * the kernel refuses it through the filesystem (a 0400 attribute).  Root
 * reads what the tree lets it read; the device's owner gets the owner
 * bits (it may also change the device); anyone else the "other" bits.
 */
static int may_read(const struct cfsd_conn *c, uid_t owner, const char *path, struct cfsd_reply *rp)
{
	struct classfs_stat st;
	int r;

	if (c->uid == 0)
		return 0;
	r = classfs_path_stat(cfsd.tree, path, &st);
	if (r < 0) {
		snprintf(rp->msg, sizeof(rp->msg), "cannot read %.900s: %s", path, strerror(-r));
		return r;
	}
	if (st.mode & (c->uid == owner ? S_IRUSR : S_IROTH))
		return 0;
	snprintf(rp->msg, sizeof(rp->msg), "uid %u may not read %.900s (mode %04o)",
		 (unsigned int)c->uid, path, (unsigned int)st.mode);
	return -EACCES;
}

struct readable_ctx {
	const struct cfsd_conn *c;
	uid_t owner;
	const char *dir;	/* the directory listed, below the root */
	int depth;
	struct cfsd_reply *rp;
	int err;
};

/* one entry of a device's directory: an attribute the caller may read, or a group of them */
static int readable_one(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct readable_ctx *x = ctx, sub = *x;
	struct classfs_stat ust;
	char path[CFS_PATH_MAX * 2];

	snprintf(path, sizeof(path), "%.4000s/%.255s", x->dir, name);
	if (st->type == CLASSFS_FT_REG)
		x->err = may_read(x->c, x->owner, path, x->rp);
	else if (st->type == CLASSFS_FT_DIR && x->depth == 0) {
		char uev[CFS_PATH_MAX * 2 + 8];

		snprintf(uev, sizeof(uev), "%s/uevent", path);
		if (classfs_path_stat(cfsd.tree, uev, &ust) == 0)
			return 0;	/* a child device: not part of this one's info */
		sub.dir = path;
		sub.depth = 1;
		sub.err = 0;
		classfs_path_list(cfsd.tree, path, readable_one, &sub);
		x->err = sub.err;
	}
	return x->err;
}

/**
 * cfsd_may_read_all() - may @c read every attribute of @dev (owned by
 * @owner)?  INFO prints every value, so the caller must be allowed to
 * read each of them (may_read()), as through the mount.
 * Return: 0, -EACCES (@rp says which), -errno.
 */
int cfsd_may_read_all(const struct cfsd_conn *c, uid_t owner, struct classfs_device *dev,
		      struct cfsd_reply *rp)
{
	char path[CFS_PATH_MAX * 2];
	struct readable_ctx x = { .c = c, .owner = owner, .dir = path, .rp = rp };
	int r;

	if (c->uid == 0)
		return 0;
	r = classfs_device_devpath(dev, path, sizeof(path));
	if (r < 0)
		return r;
	memmove(path, path + 1, (size_t)r);	/* below the root: drop the leading '/' */
	r = classfs_path_list(cfsd.tree, path, readable_one, &x);
	return x.err < 0 ? x.err : r < 0 ? r : 0;
}

/** cfsd_op_attr_get() - ATTR_GET: an attribute's value, if the caller may read it */
int cfsd_op_attr_get(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	struct classfs_device *dev = NULL;
	char path[CFS_PATH_MAX * 2], who[2 * 256 + 2];
	uid_t owner = 0;
	char *buf;
	ssize_t n;
	int r;

	r = cfsd_dev_ref(c, m, false, rp, &dev, &owner);
	if (r < 0)
		return r;
	buf = malloc(CFS_VALUE_MAX);
	r = buf ? cfsd_attr_path(dev, m->attr_name, path, sizeof(path)) : -ENOMEM;
	/* the owner of the device that holds the file; through a link: the "other" bits */
	if (r == 0 && c->uid != 0 &&
	    cfsd_file_owner(dev, path, m->attr_name, &owner, who, sizeof(who)) > 0)
		owner = (uid_t)-1;
	if (r == 0)
		r = may_read(c, owner, path, rp);
	if (r == 0) {
		/* no lock held: a remote show() may take up to the call timeout */
		n = classfs_path_read(cfsd.tree, path, buf, CFS_VALUE_MAX);
		if (n < 0) {
			r = (int)n;
			snprintf(rp->msg, sizeof(rp->msg), "cannot read %.900s: %s", path, strerror(-r));
		} else {
			cfs_buf_bytes(&rp->extra, CFS_T_VALUE, buf, (size_t)n);
		}
	}
	free(buf);
	classfs_device_put(dev);
	return r;
}

/*
 * Is the file @attr names in @rd's own directories a value the core
 * stores (one ATTR_SET CREATE made, or root through the mount), not one
 * of @rd's published attributes (attrs.c counts those) nor a computed
 * file?  Only such a value's replacement is counted here.
 */
static bool core_value(const struct cfsd_rdev *rd, const char *attr)
{
	const char *leaf = strrchr(attr, '/');

	if (!strcmp(leaf ? leaf + 1 : attr, "uevent"))
		return false;
	for (unsigned int i = 0; i < rd->nattrs; i++)
		if (!strcmp(rd->attrs[i].path, attr))
			return false;
	return true;
}

/*
 * A uid's write replaces a stored value of its own device: the
 * difference in size counts against it (quota.c), charged before the
 * write (-EDQUOT: nothing written).  *@delta receives what was charged,
 * to give back if the write fails.  Two writes of one file at once may
 * each count against the old size: the device's charge may then be off
 * by a value's size until the device goes, which gives back all of it.
 */
static int replace_charge(struct cfsd_conn *c, struct classfs_device *dev, const struct cfs_msg *m,
			  const char *path, struct cfsd_rdev **rdp, long *delta, struct cfsd_reply *rp)
{
	struct cfsd_rdev *rd = cfsd_rdev_of(dev);
	char *old;
	ssize_t n;
	int r;

	*rdp = NULL;
	*delta = 0;
	if (!rd || !core_value(rd, m->attr_name))
		return 0;
	old = malloc(CFS_VALUE_MAX);
	if (!old)
		return -ENOMEM;
	n = classfs_path_read(cfsd.tree, path, old, CFS_VALUE_MAX);	/* stored: no call */
	free(old);
	if (n < 0)
		return 0;	/* the write says why */
	r = cfsd_quota_dev_charge(rd, 0, (long)m->value_len - (long)n, rp->msg, sizeof(rp->msg));
	if (r == 0) {
		*rdp = rd;
		*delta = (long)m->value_len - (long)n;
	}
	return r;
}

/**
 * cfsd_op_attr_set() - ATTR_SET: write an attribute (CREATE: make it, a
 * stored value, a binary one or a link), by the device's owner or root,
 * within the owner's quota
 */
int cfsd_op_attr_set(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	struct classfs_device *dev = NULL;
	char path[CFS_PATH_MAX * 2], who[2 * 256 + 2];
	struct cfsd_rdev *charged = NULL;
	struct classfs_stat st;
	uid_t owner = 0;
	long delta = 0;
	ssize_t n;
	int r;

	r = cfsd_attr_create_check(m, rp->msg, sizeof(rp->msg));
	if (r < 0)
		return r;
	/* the right to change is checked on the device that holds the file */
	r = cfsd_dev_ref(c, m, false, rp, &dev, &owner);
	if (r < 0)
		return r;
	snprintf(who, sizeof(who), "%s%s%s", m->cls ? m->cls : "", m->cls ? "/" : "", m->name);
	r = cfsd_attr_path(dev, m->attr_name, path, sizeof(path));
	if (r == 0 && (m->flags & CFS_F_CREATE) &&
	    classfs_path_stat(cfsd.tree, path, &st) == -ENOENT) {
		r = cfsd_attr_create(c, m, dev, owner, who, rp->msg, sizeof(rp->msg));
		classfs_device_put(dev);
		return r;
	}
	if (r == 0 && (m->flags & CFS_F_LINK)) {
		snprintf(rp->msg, sizeof(rp->msg), "cannot make link %.900s: it exists", path);
		r = -EEXIST;
	}
	if (r == 0 && c->uid != 0) {
		char named[sizeof(who)];

		snprintf(named, sizeof(named), "%s", who);
		r = cfsd_file_owner(dev, path, m->attr_name, &owner, who, sizeof(who));
		if (r < 0)
			snprintf(rp->msg, sizeof(rp->msg), "cannot write %.900s: %s", path,
				 strerror(-r));
		else if (r > 0)
			snprintf(rp->msg, sizeof(rp->msg),
				 "uid %u may not write %.900s: the path leaves the device through a link",
				 (unsigned int)c->uid, path);
		r = r > 0 ? -EPERM : r;
		if (r == 0 && owner != c->uid)
			r = cfsd_denied(rp, c, "device", who, owner);
		/* a file of the device named itself, not of a nested child's */
		if (r == 0 && !strcmp(named, who))
			r = replace_charge(c, dev, m, path, &charged, &delta, rp);
	}
	if (r == 0) {
		/* as a write(2) through the mount: the mode bits decide */
		n = classfs_path_write(cfsd.tree, path, (const char *)m->value, m->value_len);
		if (n < 0) {
			r = (int)n;
			snprintf(rp->msg, sizeof(rp->msg), "cannot write %.900s: %s", path, strerror(-r));
			if (charged)
				cfsd_quota_dev_charge(charged, 0, -delta, NULL, 0);
		}
	}
	classfs_device_put(dev);
	return r;
}


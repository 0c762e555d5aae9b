// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attr-create.c - ATTR_SET with CFS_F_CREATE: a path that does not exist
 * is made (umockdev's set_attribute) as a stored value or link of the
 * device named, instead of written.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "daemon.h"

/**
 * cfsd_attr_create_check() - are an ATTR_SET's flags a valid request?
 * @m: the request.
 * @msg: receives the reason on error.
 * @msgsz: its size.
 *
 * CFS_F_BINARY and CFS_F_LINK go with CFS_F_CREATE only, never both; a
 * link's target is a path without NUL.  Checked before anything is looked
 * up, so a refused request changes nothing.
 * Return: 0 or -EINVAL.
 */
int cfsd_attr_create_check(const struct cfs_msg *m, char *msg, size_t msgsz)
{
	uint32_t kind = m->flags & (CFS_F_BINARY | CFS_F_LINK);

	if (kind && !(m->flags & CFS_F_CREATE)) {
		snprintf(msg, msgsz, "binary and link are flags of a create");
		return -EINVAL;
	}
	if (kind == (CFS_F_BINARY | CFS_F_LINK)) {
		snprintf(msg, msgsz, "an attribute is either binary or a link");
		return -EINVAL;
	}
	if ((m->flags & CFS_F_LINK) &&
	    (!m->value_len || memchr(m->value, '\0', m->value_len) || m->value_len >= PATH_MAX)) {
		snprintf(msg, msgsz, "a link's target must be a path of 1 to %d bytes without NUL",
			 PATH_MAX - 1);
		return -EINVAL;
	}
	return 0;
}

/**
 * cfsd_attr_create() - make the missing attribute an ATTR_SET names
 * @c: the caller.
 * @m: the request (CFS_F_CREATE, checked by cfsd_attr_create_check()).
 * @dev: the device named, referenced by the caller.
 * @owner: its owner (root for a record's devices).
 * @who: its "CLASS/NAME", for messages.
 * @msg: receives the reason on error.
 * @msgsz: its size.
 *
 * Only @dev's owner or root may add to it, and only root a link (its text
 * is anything); no one a name the tree makes (cfsd_path_reserved()), at
 * any depth.  The entry and its value's bytes count against @dev's
 * owner (quota.c), checked before anything is made and given back when
 * the device goes.  The core places the entry in @dev's own directory only,
 * never through a link or into a child device's directory, and leaves
 * nothing of a failed add (the plain directories it made go again).  No
 * event: Linux sends none when a driver adds an attribute either.
 * Return: 0, -EPERM, -EEXIST (a reserved name), -EDQUOT, or
 * classfs_device_add_value()'s and classfs_device_add_link()'s errors.
 */
int cfsd_attr_create(const struct cfsd_conn *c, const struct cfs_msg *m,
		     struct classfs_device *dev, uid_t owner, const char *who, char *msg,
		     size_t msgsz)
{
	long bytes = (m->flags & CFS_F_LINK) ? 0 : (long)m->value_len;
	char target[PATH_MAX];
	struct cfsd_rdev *rd;
	int r;

	if (c->uid != 0 && (m->flags & CFS_F_LINK)) {
		snprintf(msg, msgsz, "uid %u may not make a link in %s: root only",
			 (unsigned int)c->uid, who);
		return -EPERM;
	}
	if (c->uid != 0 && owner != c->uid) {
		snprintf(msg, msgsz, "uid %u may not change device %s (owned by uid %u)",
			 (unsigned int)c->uid, who, (unsigned int)owner);
		return -EPERM;
	}
	r = cfsd_path_reserved(m->attr_name, msg, msgsz);
	if (r < 0)
		return r;
	rd = cfsd_rdev_of(dev);
	if (rd && (r = cfsd_quota_dev_charge(rd, 1, bytes, msg, msgsz)) < 0)
		return r;
	if (m->flags & CFS_F_LINK) {
		memcpy(target, m->value, m->value_len);
		target[m->value_len] = '\0';
		r = classfs_device_add_link(dev, m->attr_name, target);
	} else {
		r = classfs_device_add_value(dev, m->attr_name, 0644, m->value, m->value_len,
					     m->flags & CFS_F_BINARY ? CLASSFS_VALUE_BINARY : 0);
	}
	if (r < 0 && rd)
		cfsd_quota_dev_charge(rd, -1, -bytes, NULL, 0);
	if (r < 0)
		snprintf(msg, msgsz, "cannot add %.300s to %s: %s", m->attr_name, who,
			 r == -EINVAL	? "not a relative path of up to 8 names"
			 : r == -EEXIST ? "a component is a link, a device or a file"
					: strerror(-r));
	return r;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * attrs.c - a published device's attributes: the names a client gives
 * them, checked before anything is made, their groups (one per
 * subdirectory), and their show()/store(): a stored value under
 * cfsd.vlock, or a remote call to the publisher.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"

#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

static ssize_t rattr_show(struct classfs_device *dev, const struct classfs_device_attribute *attr,
			  char *buf)
{
	struct cfsd_rattr *ra = container_of(attr, struct cfsd_rattr, a);
	ssize_t r;

	if (ra->remote) {
		struct cfsd_conn *c;

		pthread_mutex_lock(&cfsd.vlock);
		c = cfsd_conn_get(ra->d->remote);
		pthread_mutex_unlock(&cfsd.vlock);
		if (!c)
			return -EIO;
		r = cfsd_remote_call(c, ra, CFS_CALL_SHOW, buf, NULL, 0);
		cfsd_conn_put(c);
		return r;
	}
	pthread_mutex_lock(&cfsd.vlock);
	memcpy(buf, ra->value, ra->len);
	r = (ssize_t)ra->len;
	pthread_mutex_unlock(&cfsd.vlock);
	return r;
}

static ssize_t rattr_store(struct classfs_device *dev, const struct classfs_device_attribute *attr,
			   const char *buf, size_t count)
{
	struct cfsd_rattr *ra = container_of(attr, struct cfsd_rattr, a);
	uint8_t *v;
	int r;

	if (ra->remote) {
		struct cfsd_conn *c;
		ssize_t n;

		pthread_mutex_lock(&cfsd.vlock);
		c = cfsd_conn_get(ra->d->remote);
		pthread_mutex_unlock(&cfsd.vlock);
		if (!c)
			return -EIO;
		n = cfsd_remote_call(c, ra, CFS_CALL_STORE, NULL, buf, count);
		cfsd_conn_put(c);
		return n;
	}
	v = malloc(count ? count : 1);
	if (!v)
		return -ENOMEM;
	memcpy(v, buf, count);
	pthread_mutex_lock(&cfsd.vlock);
	/* the new value's size against the owner's bytes (quota.c), under the value lock */
	r = cfsd_quota_dev_charge(ra->d, 0, (long)count - (long)ra->len, NULL, 0);
	if (r < 0) {
		pthread_mutex_unlock(&cfsd.vlock);
		free(v);
		return r == -ENODEV ? -ENODEV : -EDQUOT;
	}
	free(ra->value);
	ra->value = v;
	ra->len = count;
	pthread_mutex_unlock(&cfsd.vlock);
	return (ssize_t)count;
}

/* order of attribute paths: by first component, then the rest ("x" before "x/y") */
static int cmp_attr_path(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t xl = strcspn(x, "/"), yl = strcspn(y, "/");
	int r = strncmp(x, y, xl < yl ? xl : yl);

	if (r || xl != yl)
		return r ? r : xl < yl ? -1 : 1;
	return strcmp(x + xl, y + xl);
}

/*
 * The names the tree makes in a device's directory (entries.c's fixed
 * entries): `uevent`; `dev` (a record reads a `dev` attribute as the
 * device number, so none without one either); `subsystem` (a class or a
 * bus); `device` (a physical device).  The core refuses them only where
 * it makes them now; a client may use none of them anywhere in a
 * device: not where the tree may make them later (a class, a bus, a
 * number), and not deeper, where a child device's directory, or a
 * record's reader, would take them for the tree's.  DEVICE_ADD's
 * attributes and ATTR_SET CREATE both ask here.
 */
bool cfsd_name_reserved(const char *s, size_t len)
{
	static const char *const reserved[] = { "uevent", "dev", "subsystem", "device" };

	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (strlen(reserved[i]) == len && !memcmp(s, reserved[i], len))
			return true;
	return false;
}

/**
 * cfsd_path_reserved() - does an attribute path use a reserved name?
 * @path: "name" or "dir/.../name", as a client gave it.
 * @msg: receives which name, when one is.
 * @msgsz: its size.
 *
 * Return: 0, or -EEXIST when a component is a name the tree makes
 * (cfsd_name_reserved()).
 */
int cfsd_path_reserved(const char *path, char *msg, size_t msgsz)
{
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, "/");

		if (cfsd_name_reserved(p, len)) {
			snprintf(msg, msgsz, "attribute %.300s: the tree makes '%.*s' itself", path,
				 (int)len, p);
			return -EEXIST;
		}
		p += len;
		p += *p == '/';
	}
	return 0;
}

/*
 * Every attribute's place in the device's directory its own: none twice,
 * none the tree's.  Asked first, so that a refused add makes nothing (not
 * even its class).
 */
/**
 * cfsd_attrs_check() - the attributes @m names are the device's own
 * @m: a DEVICE_ADD request (decoded, so each ATTR record is well formed).
 * @msg: receives what was wrong.
 * @msgsz: its size.
 *
 * Return: 0, -EEXIST (a name twice, one the tree makes itself, or a file
 * and a directory sharing one), -ENOMEM.
 */
int cfsd_attrs_check(const struct cfs_msg *m, char *msg, size_t msgsz)
{
	const char **v;
	const uint8_t *p;
	size_t off = 0, len;
	unsigned int n = 0;
	int r = 0;

	if (!m->nattrs)
		return 0;
	v = malloc(m->nattrs * sizeof(*v));
	if (!v)
		return -ENOMEM;
	while (n < m->nattrs && cfs_msg_next(m, &off, CFS_T_ATTR, &p, &len)) {
		struct cfs_attr a;

		cfs_attr_decode(p, len, &a);	/* checked by the decoder */
		v[n++] = a.name;
	}
	qsort(v, n, sizeof(*v), cmp_attr_path);
	for (unsigned int i = 0; i < n && !r; i++) {
		const char *a = v[i], *q = i ? v[i - 1] : NULL;
		size_t al = strcspn(a, "/");

		if ((r = cfsd_path_reserved(a, msg, msgsz)) < 0) {
			;
		} else if (q && !strcmp(a, q)) {
			snprintf(msg, msgsz, "attribute %s given twice", a);
			r = -EEXIST;
		} else if (q && strcspn(q, "/") == al && !strncmp(a, q, al) && (!q[al] || !a[al])) {
			snprintf(msg, msgsz, "attribute %s and directory %.*s/ share a name",
				 a[al] ? q : a, (int)al, a);
			r = -EEXIST;
		}
	}
	free(v);
	return r;
}

/**
 * cfsd_attrs_build() - @rd's attributes from @m's records, in groups: the
 * device's own directory, then one per subdirectory
 * @rd: the device being made (its attrs, groups and pointers are set).
 * @m: the DEVICE_ADD request, checked by cfsd_attrs_check().
 * @msg: receives what was wrong.
 * @msgsz: its size.
 *
 * Return: 0, -EINVAL (a path two directories deep), -ENOMEM; on error
 * what was made is @rd's, freed with it.
 */
int cfsd_attrs_build(struct cfsd_rdev *rd, const struct cfs_msg *m, char *msg, size_t msgsz)
{
	const uint8_t *v;
	size_t off = 0, len, k = 0;
	unsigned int n = 0;
	char **dirs;

	if (!m->nattrs)
		return 0;
	rd->attrs = calloc(m->nattrs, sizeof(*rd->attrs));
	dirs = calloc(m->nattrs + 1, sizeof(*dirs));
	if (!rd->attrs || !dirs) {
		free(dirs);
		return -ENOMEM;
	}
	rd->nattrs = m->nattrs;
	while (cfs_msg_next(m, &off, CFS_T_ATTR, &v, &len)) {
		struct cfsd_rattr *ra = &rd->attrs[n++];
		struct cfs_attr a;
		char *slash;

		cfs_attr_decode(v, len, &a);	/* checked by the decoder */
		ra->d = rd;
		ra->path = strdup(a.name);
		ra->remote = a.flags & CFS_A_REMOTE;
		ra->len = a.len;
		ra->value = malloc(a.len ? a.len : 1);
		if (!ra->path || !ra->value)
			goto enomem;
		memcpy(ra->value, a.value, a.len);
		slash = strchr(ra->path, '/');
		if (slash && strchr(slash + 1, '/')) {
			snprintf(msg, msgsz, "attribute %s: one directory level at most", a.name);
			goto einval;
		}
		ra->a = (struct classfs_device_attribute){
			.attr = { .name = slash ? slash + 1 : ra->path, .mode = a.mode },
			.show = rattr_show,
			.store = !ra->remote || (a.flags & CFS_A_STORE) ? rattr_store : NULL,
		};
	}
	/* distinct directories: dirs[0] = NULL stands for the device's own */
	rd->ngroups = 0;
	for (unsigned int i = 0; i < n; i++) {
		char *slash = strchr(rd->attrs[i].path, '/');
		size_t dl = slash ? (size_t)(slash - rd->attrs[i].path) : 0;
		bool found = false;

		for (unsigned int g = 0; g < rd->ngroups; g++) {
			if (!dirs[g] ? !slash : (slash && strlen(dirs[g]) == dl &&
						  !strncmp(dirs[g], rd->attrs[i].path, dl)))
				found = true;
		}
		if (found)
			continue;
		dirs[rd->ngroups] = slash ? strndup(rd->attrs[i].path, dl) : NULL;
		if (slash && !dirs[rd->ngroups])
			goto enomem_dirs;
		rd->ngroups++;
	}
	rd->groups = calloc(rd->ngroups, sizeof(*rd->groups));
	rd->group_ptrs = calloc(rd->ngroups + 1, sizeof(*rd->group_ptrs));
	rd->attr_ptrs = calloc(n + rd->ngroups, sizeof(*rd->attr_ptrs));
	if (!rd->groups || !rd->group_ptrs || !rd->attr_ptrs)
		goto enomem_dirs;
	for (unsigned int g = 0; g < rd->ngroups; g++) {
		rd->groups[g].name = dirs[g];
		rd->groups[g].attrs = &rd->attr_ptrs[k];
		rd->group_ptrs[g] = &rd->groups[g];
		for (unsigned int i = 0; i < n; i++) {
			char *slash = strchr(rd->attrs[i].path, '/');
			size_t dl = slash ? (size_t)(slash - rd->attrs[i].path) : 0;

			if (!dirs[g] ? !slash : (slash && strlen(dirs[g]) == dl &&
						 !strncmp(dirs[g], rd->attrs[i].path, dl)))
				rd->attr_ptrs[k++] = &rd->attrs[i].a;
		}
		rd->attr_ptrs[k++] = NULL;
	}
	free(dirs);
	return 0;
enomem_dirs:
	for (unsigned int g = 0; g < rd->ngroups; g++)
		free(dirs[g]);
	rd->ngroups = 0;
enomem:
	free(dirs);
	return -ENOMEM;
einval:
	free(dirs);
	return -EINVAL;
}

/**
 * cfsd_attrs_charge() - count @rd's attributes and their stored values
 * against its owner (quota.c), before it is added
 * @rd: built by cfsd_attrs_build(), its owner set.
 * @msg: receives why a refusal was made.
 * @msgsz: its size.
 *
 * Given back when @rd leaves the registry or is freed.
 * Return: 0, -EDQUOT, -ENOMEM.
 */
int cfsd_attrs_charge(struct cfsd_rdev *rd, char *msg, size_t msgsz)
{
	size_t bytes = 0;

	for (unsigned int i = 0; i < rd->nattrs; i++)
		bytes += rd->attrs[i].remote ? 0 : rd->attrs[i].len;
	return cfsd_quota_dev_charge(rd, (long)rd->nattrs, (long)bytes, msg, msgsz);
}

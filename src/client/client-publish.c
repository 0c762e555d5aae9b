// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * client-publish.c - publishing through the client library: classes,
 * devices (one or many per message), attributes, events; and the
 * bookkeeping of remote attributes and bound objects that reconnecting needs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "client-internal.h"

int cfs_client_bound_add(struct classfs_client *c, char *key, const uint8_t *msg, size_t len)
{
	struct bound *b;

	if (!key)
		return -ENOMEM;
	if (c->nbound == c->cbound) {
		size_t cap = c->cbound ? c->cbound * 2 : 16;

		b = realloc(c->bound, cap * sizeof(*b));
		if (!b)
			goto enomem;
		c->bound = b;
		c->cbound = cap;
	}
	b = &c->bound[c->nbound];
	b->msg = malloc(len);
	if (!b->msg)
		goto enomem;
	memcpy(b->msg, msg, len);
	b->len = len;
	b->key = key;
	c->nbound++;
	return 0;
enomem:
	free(key);
	return -ENOMEM;
}

/* forget bound objects whose key is @key or starts with @prefix */
void cfs_client_bound_forget(struct classfs_client *c, const char *key, const char *prefix)
{
	size_t j = 0, plen = prefix ? strlen(prefix) : 0;

	for (size_t i = 0; i < c->nbound; i++) {
		struct bound *b = &c->bound[i];

		if ((key && !strcmp(b->key, key)) || (prefix && !strncmp(b->key, prefix, plen))) {
			free(b->key);
			free(b->msg);
			continue;
		}
		c->bound[j++] = *b;
	}
	c->nbound = j;
}

void cfs_client_rattr_forget(struct classfs_client *c, const char *prefix)
{
	size_t j = 0, plen = strlen(prefix);

	for (size_t i = 0; i < c->nrattrs; i++) {
		if (!strncmp(c->rattrs[i].key, prefix, plen)) {
			free(c->rattrs[i].key);
			continue;
		}
		c->rattrs[j++] = c->rattrs[i];
	}
	c->nrattrs = j;
}

int classfs_client_class_create(struct classfs_client *c, const char *cls, unsigned int flags)
{
	struct cfs_buf b;
	int r;

	if (!c || !cls || (flags & ~CLASSFS_CLIENT_BIND))
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_CLASS_CREATE, 0, flags & CLASSFS_CLIENT_BIND ? CFS_F_BIND : 0);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	r = cfs_client_transact(c, &b, NULL);
	if (r == 0 && (flags & CLASSFS_CLIENT_BIND))
		r = cfs_client_bound_add(c, strdup(cls), b.p, b.len);
	cfs_buf_free(&b);
	return r;
}

int classfs_client_class_remove(struct classfs_client *c, const char *cls)
{
	struct cfs_buf b;
	char *prefix;
	int r;

	if (!c || !cls)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_CLASS_REMOVE, 0, 0);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	r = cfs_client_transact(c, &b, NULL);
	cfs_buf_free(&b);
	if (r == 0 && (prefix = cfs_client_key(cls, "", NULL))) {
		cfs_client_bound_forget(c, cls, prefix);
		cfs_client_rattr_forget(c, prefix);
		free(prefix);
	}
	return r;
}

/* append @d's request (a whole message) to @b; 0 or -errno */
static int encode_device(struct cfs_buf *b, const struct classfs_client_device *d)
{
	if (!d || !d->name || (d->flags & ~(CLASSFS_CLIENT_BIND | CLASSFS_CLIENT_OPEN)) ||
	    (d->nattrs && !d->attrs))
		return -EINVAL;
	cfs_buf_hdr(b, CFS_OP_DEVICE_ADD, 0,
		    (d->flags & CLASSFS_CLIENT_BIND ? CFS_F_BIND : 0) |
		    (d->flags & CLASSFS_CLIENT_OPEN ? CFS_F_OPEN : 0));
	cfs_buf_str(b, CFS_T_CLASS, d->cls);
	cfs_buf_str(b, CFS_T_NAME, d->name);
	cfs_buf_str(b, CFS_T_PARENT, d->parent);
	if (d->devt)
		cfs_buf_u64(b, CFS_T_DEVT, (uint64_t)d->devt);
	cfs_buf_str(b, CFS_T_PHYS, d->phys);
	cfs_buf_str(b, CFS_T_PHYS_CLASS, d->phys_class);
	cfs_buf_str(b, CFS_T_BUS, d->bus);
	cfs_buf_str(b, CFS_T_DEVTYPE, d->devtype);
	for (size_t i = 0; i < d->nattrs; i++) {
		const struct classfs_client_attr *a = &d->attrs[i];

		if (!a->name || (a->len && !a->value && !a->show))
			return -EINVAL;
		if (a->show)
			cfs_buf_attr(b, (uint32_t)a->mode,
				     CFS_A_REMOTE | (a->store ? CFS_A_STORE : 0), a->name, NULL, 0);
		else
			cfs_buf_attr(b, (uint32_t)a->mode, 0, a->name, a->value, a->len);
	}
	return b->err;
}

/*
 * Remote attributes are installed before the request that publishes them
 * goes out: the daemon may forward a read as soon as the device exists,
 * before its reply reaches us.  Names are unique in the daemon, so an
 * entry already under a key belongs to a device that is gone (removed
 * with its parent, say) and the new one takes its place; the undo log
 * puts it back if the daemon refuses the device.
 */
struct rattr_undo {
	size_t idx;		/* where in c->rattrs */
	bool replaced;		/* @old was there before */
	struct rattr old;
};

struct undo_log {
	struct rattr_undo *v;
	size_t n, cap;
};

static int rattrs_install(struct classfs_client *c, const struct classfs_client_device *d,
			  struct undo_log *log)
{
	for (size_t i = 0; i < d->nattrs; i++) {
		const struct classfs_client_attr *a = &d->attrs[i];
		struct rattr nr = { .show = a->show, .store = a->store, .data = a->data }, *ra;
		struct rattr_undo u = { .idx = c->nrattrs };

		if (!a->show)
			continue;
		if (log->n == log->cap) {
			size_t cap = log->cap ? 2 * log->cap : 16;
			struct rattr_undo *v = realloc(log->v, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			log->v = v;
			log->cap = cap;
		}
		nr.key = cfs_client_key(d->cls, d->name, a->name);
		if (!nr.key)
			return -ENOMEM;
		ra = cfs_client_rattr_find(c, nr.key);
		if (ra) {
			u = (struct rattr_undo){ .idx = (size_t)(ra - c->rattrs), .replaced = true,
						 .old = *ra };
			*ra = nr;
		} else {
			if (c->nrattrs == c->crattrs) {
				size_t cap = c->crattrs ? c->crattrs * 2 : 16;

				ra = realloc(c->rattrs, cap * sizeof(*ra));
				if (!ra) {
					free(nr.key);
					return -ENOMEM;
				}
				c->rattrs = ra;
				c->crattrs = cap;
			}
			c->rattrs[c->nrattrs++] = nr;
		}
		log->v[log->n++] = u;
	}
	return 0;
}

/* keep what entries @from.. of @log installed (the daemon took those devices) */
static void rattrs_commit(struct undo_log *log, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (log->v[i].replaced)
			free(log->v[i].old.key);
}

/* take back entries @from.. of @log, newest first */
static void rattrs_rollback(struct classfs_client *c, struct undo_log *log, size_t from, size_t to)
{
	for (size_t i = to; i-- > from;) {
		struct rattr_undo *u = &log->v[i];

		free(c->rattrs[u->idx].key);
		if (u->replaced)
			c->rattrs[u->idx] = u->old;
		else
			c->rattrs[u->idx] = c->rattrs[--c->nrattrs];	/* the newest: the last */
	}
}

/* after a successful add of a bound device: keep its request to publish it again */
static int device_bound(struct classfs_client *c, const struct classfs_client_device *d,
			const uint8_t *msg, size_t len)
{
	if (d->flags & CLASSFS_CLIENT_BIND)
		return cfs_client_bound_add(c, cfs_client_key(d->cls, d->name, NULL), msg, len);
	return 0;
}

int classfs_client_device_add(struct classfs_client *c, const struct classfs_client_device *d)
{
	struct cfs_buf b;
	int r;

	struct undo_log log = { 0 };

	if (!c)
		return -EINVAL;
	cfs_buf_init(&b);
	r = encode_device(&b, d);
	if (r < 0)
		cfs_client_error(c, r, "invalid device description");
	else if ((r = rattrs_install(c, d, &log)) < 0)
		cfs_client_error(c, r, "out of memory");
	if (r == 0)
		r = cfs_client_transact(c, &b, NULL);
	if (r == 0) {
		rattrs_commit(&log, 0, log.n);
		r = device_bound(c, d, b.p, b.len);
	} else {
		rattrs_rollback(c, &log, 0, log.n);
	}
	free(log.v);
	cfs_buf_free(&b);
	return r;
}

int classfs_client_device_add_batch(struct classfs_client *c,
				    const struct classfs_client_device *devs, size_t n,
				    size_t *done)
{
	struct undo_log log = { 0 };
	struct cfs_buf b;
	size_t i = 0, ndone = 0;
	int r = 0, bad = 0;

	if (done)
		*done = 0;
	if (!c || (n && !devs))
		return -EINVAL;
	c->errmsg[0] = '\0';
	cfs_buf_init(&b);
	while (i < n && r == 0 && bad == 0) {
		size_t first = i, count;
		struct call_ctx ctx = { 0 };

		/* as many requests as fit in one message */
		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_BATCH, 0, 0);
		while (i < n) {
			size_t before = b.len, mark = cfs_buf_sub_begin(&b);

			bad = encode_device(&b, &devs[i]);
			cfs_buf_sub_end(&b, mark);
			if (bad < 0 || b.len > c->max_msg) {
				cfs_buf_truncate(&b, before);
				b.err = 0;
				break;
			}
			i++;
		}
		if (i == first) {
			if (bad == 0)
				bad = -EMSGSIZE;
			break;
		}
		/* the remote attributes of the message's devices, before it goes */
		size_t *mark = malloc((i - first + 1) * sizeof(*mark));

		log.n = 0;
		for (size_t k = first; mark && k < i && r == 0; k++) {
			mark[k - first] = log.n;
			r = rattrs_install(c, &devs[k], &log);
		}
		if (!mark || r < 0) {
			rattrs_rollback(c, &log, 0, log.n);
			free(mark);
			r = cfs_client_error(c, -ENOMEM, "out of memory");
			break;
		}
		mark[i - first] = log.n;
		r = cfs_client_transact(c, &b, &ctx);
		count = r == 0 ? i - first : (size_t)ctx.reply.count;
		if (count > i - first)
			count = i - first;
		rattrs_commit(&log, 0, mark[count]);
		rattrs_rollback(c, &log, mark[count], log.n);
		free(mark);
		for (size_t k = 0; k < count; k++) {
			const struct classfs_client_device *dv = &devs[first + k];
			struct cfs_buf one;
			int r2;

			if (!(dv->flags & CLASSFS_CLIENT_BIND))
				continue;	/* nothing to remember */
			cfs_buf_init(&one);
			r2 = encode_device(&one, dv);
			if (r2 == 0)
				r2 = device_bound(c, dv, one.p, one.len);
			cfs_buf_free(&one);
			if (r2 < 0 && r == 0)
				r = cfs_client_error(c, r2, "out of memory");
		}
		ndone += count;
	}
	free(log.v);
	cfs_buf_free(&b);
	if (r == 0 && bad < 0)
		r = cfs_client_error(c, bad, bad == -EMSGSIZE ? "device %zu alone exceeds the message size limit"
						       : "invalid description of device %zu", ndone);
	if (done)
		*done = ndone;
	return r;
}

int classfs_client_device_remove(struct classfs_client *c, const char *cls, const char *name)
{
	struct cfs_buf b;
	char *key;
	int r;

	if (!c || !name)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_DEVICE_REMOVE, 0, 0);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	cfs_buf_str(&b, CFS_T_NAME, name);
	r = cfs_client_transact(c, &b, NULL);
	cfs_buf_free(&b);
	if (r == 0 && (key = cfs_client_key(cls, name, NULL))) {
		char *prefix = cfs_client_key(cls, name, "");

		cfs_client_bound_forget(c, key, NULL);
		if (prefix)
			cfs_client_rattr_forget(c, prefix);
		free(prefix);
		free(key);
	}
	return r;
}

/**
 * classfs_client_device_remove_path() - remove the device at @syspath
 * and the devices that depend on it, as classfs_client_device_remove()
 * @c: the client.
 * @syspath: its path in Linux's devices layout ("/devices/..."), or its
 *           DEVPATH in a class-layout tree: also a device that no class
 *           and name find any more (its class link was unlinked through
 *           the filesystem and another device took the name).
 *
 * Return: 0, -EINVAL (not starting with '/'), -ENOENT, -EPERM, -EBUSY.
 */
int classfs_client_device_remove_path(struct classfs_client *c, const char *syspath)
{
	struct cfs_buf b;
	int r;

	if (!c || !syspath || syspath[0] != '/')
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_DEVICE_REMOVE, 0, 0);
	cfs_buf_str(&b, CFS_T_SYSPATH, syspath);
	r = cfs_client_transact(c, &b, NULL);
	cfs_buf_free(&b);
	return r;
}

/* the string value of field @tag of a stored request, or NULL */
static const char *stored_field(const uint8_t *msg, size_t len, uint16_t tag)
{
	for (size_t off = CFS_HDR_SIZE; off + CFS_FIELD_HDR_SIZE <= len;) {
		uint16_t t;
		uint32_t flen;

		memcpy(&t, msg + off, 2);
		memcpy(&flen, msg + off + 4, 4);
		if (t == tag)
			return (const char *)msg + off + CFS_FIELD_HDR_SIZE;
		off += CFS_FIELD_HDR_SIZE + flen;
	}
	return NULL;
}

static bool same(const char *a, const char *b)
{
	return a && b && !strcmp(a, b);
}

/*
 * A class device was renamed: the stored requests of bound objects use the
 * new name after a restart, where they name it (as the device itself, as a
 * parent, as a physical device).
 */
static void bound_rename(struct classfs_client *c, const char *cls, const char *name,
			 const char *new_name)
{
	for (size_t i = 0; i < c->nbound; i++) {
		struct bound *bd = &c->bound[i];
		const char *dcls = stored_field(bd->msg, bd->len, CFS_T_CLASS);
		const char *pcls = stored_field(bd->msg, bd->len, CFS_T_PHYS_CLASS);
		bool self = same(dcls, cls) && same(stored_field(bd->msg, bd->len, CFS_T_NAME), name);
		struct cfs_buf b;
		size_t off;

		if (!self && !(same(dcls, cls) && same(stored_field(bd->msg, bd->len, CFS_T_PARENT), name)) &&
		    !(same(pcls, cls) && same(stored_field(bd->msg, bd->len, CFS_T_PHYS), name)))
			continue;
		/* copy the header and every field, the old name replaced */
		cfs_buf_init(&b);
		cfs_buf_raw(&b, bd->msg, CFS_HDR_SIZE);
		for (off = CFS_HDR_SIZE; off + CFS_FIELD_HDR_SIZE <= bd->len;) {
			const char *v = (const char *)bd->msg + off + CFS_FIELD_HDR_SIZE;
			uint16_t tag;
			uint32_t flen;

			memcpy(&tag, bd->msg + off, 2);
			memcpy(&flen, bd->msg + off + 4, 4);
			if ((tag == CFS_T_NAME && self) ||
			    (tag == CFS_T_PARENT && same(dcls, cls) && same(v, name)) ||
			    (tag == CFS_T_PHYS && same(pcls, cls) && same(v, name)))
				cfs_buf_str(&b, tag, new_name);
			else
				cfs_buf_raw(&b, bd->msg + off, CFS_FIELD_HDR_SIZE + flen);
			off += CFS_FIELD_HDR_SIZE + flen;
		}
		cfs_buf_seal(&b);
		if (!b.err) {
			char *nkey = self ? cfs_client_key(cls, new_name, NULL) : NULL;

			if (!self || nkey) {
				if (self) {
					free(bd->key);
					bd->key = nkey;
				}
				free(bd->msg);
				bd->msg = b.p;
				bd->len = b.len;
				b.p = NULL;
			}
		}
		cfs_buf_free(&b);
	}
}

int classfs_client_device_rename(struct classfs_client *c, const char *cls, const char *name,
				 const char *new_name)
{
	struct cfs_buf b;
	int r;

	if (!c || !cls || !name || !new_name)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_RENAME, 0, 0);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	cfs_buf_str(&b, CFS_T_NAME, name);
	cfs_buf_str(&b, CFS_T_NEW_NAME, new_name);
	r = cfs_client_transact(c, &b, NULL);
	cfs_buf_free(&b);
	if (r == 0) {
		/* follow the new name: remote attribute keys */
		char *old = cfs_client_key(cls, name, ""), *nw = cfs_client_key(cls, new_name, "");
		size_t olen = old ? strlen(old) : 0;

		for (size_t i = 0; old && nw && i < c->nrattrs; i++) {
			char *k;

			if (strncmp(c->rattrs[i].key, old, olen))
				continue;
			if (asprintf(&k, "%s%s", nw, c->rattrs[i].key + olen) < 0)
				continue;
			free(c->rattrs[i].key);
			c->rattrs[i].key = k;
		}
		free(old);
		free(nw);
		bound_rename(c, cls, name, new_name);
	}
	return r;
}

/* ATTR_GET of the device named by @cls and @name, or by @syspath */
static ssize_t attr_get(struct classfs_client *c, const char *cls, const char *name,
			const char *syspath, const char *attr, void *buf, size_t size)
{
	struct cfs_buf b;
	struct call_ctx ctx = { 0 };
	int r;

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_ATTR_GET, 0, 0);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	cfs_buf_str(&b, CFS_T_NAME, name);
	cfs_buf_str(&b, CFS_T_SYSPATH, syspath);
	cfs_buf_str(&b, CFS_T_ATTR_NAME, attr);
	r = cfs_client_transact(c, &b, &ctx);
	cfs_buf_free(&b);
	if (r < 0)
		return r;
	if (ctx.reply.value_len > size)
		return cfs_client_error(c, -ERANGE, "value of %zu bytes does not fit", ctx.reply.value_len);
	if (ctx.reply.value_len)
		memcpy(buf, ctx.reply.value, ctx.reply.value_len);
	return (ssize_t)ctx.reply.value_len;
}

ssize_t classfs_client_attr_get(struct classfs_client *c, const char *cls, const char *name,
				const char *attr, void *buf, size_t size)
{
	if (!c || !name || !attr || (!buf && size))
		return -EINVAL;
	return attr_get(c, cls, name, NULL, attr, buf, size);
}

ssize_t classfs_client_attr_get_path(struct classfs_client *c, const char *syspath,
				     const char *attr, void *buf, size_t size)
{
	if (!c || !syspath || syspath[0] != '/' || !attr || (!buf && size))
		return -EINVAL;
	return attr_get(c, NULL, NULL, syspath, attr, buf, size);
}

/* ATTR_SET, with @hdr_flags (CFS_F_CREATE...) */
static int attr_set(struct classfs_client *c, const char *cls, const char *name,
		    const char *attr, const void *value, size_t len, uint32_t hdr_flags)
{
	struct cfs_buf b;
	int r;

	if (!c || !name || !attr || (!value && len))
		return -EINVAL;
	if (len > CFS_VALUE_MAX)
		return cfs_client_error(c, -E2BIG, "value longer than %u bytes", CFS_VALUE_MAX);
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_ATTR_SET, 0, hdr_flags);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	cfs_buf_str(&b, CFS_T_NAME, name);
	cfs_buf_str(&b, CFS_T_ATTR_NAME, attr);
	cfs_buf_bytes(&b, CFS_T_VALUE, value, len);
	r = cfs_client_transact(c, &b, NULL);
	cfs_buf_free(&b);
	return r;
}

int classfs_client_attr_set(struct classfs_client *c, const char *cls, const char *name,
			    const char *attr, const void *value, size_t len)
{
	return attr_set(c, cls, name, attr, value, len, 0);
}

int classfs_client_attr_add(struct classfs_client *c, const char *cls, const char *name,
			    const char *attr, const void *value, size_t len, unsigned int flags)
{
	uint32_t hdr = CFS_F_CREATE;

	if (flags & ~(CLASSFS_CLIENT_ADD_BINARY | CLASSFS_CLIENT_ADD_LINK) ||
	    flags == (CLASSFS_CLIENT_ADD_BINARY | CLASSFS_CLIENT_ADD_LINK))
		return -EINVAL;
	if (flags & CLASSFS_CLIENT_ADD_BINARY)
		hdr |= CFS_F_BINARY;
	if (flags & CLASSFS_CLIENT_ADD_LINK)
		hdr |= CFS_F_LINK;
	return attr_set(c, cls, name, attr, value, len, hdr);
}

int classfs_client_trigger(struct classfs_client *c, const char *cls, const char *name,
			   enum classfs_action action, const char *const *extra)
{
	struct cfs_buf b;
	int r;

	if (!c || !name)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_TRIGGER, 0, 0);
	cfs_buf_str(&b, CFS_T_CLASS, cls);
	cfs_buf_str(&b, CFS_T_NAME, name);
	cfs_buf_u32(&b, CFS_T_ACTION, (uint32_t)action);
	for (size_t i = 0; extra && extra[i]; i++)
		cfs_buf_str(&b, CFS_T_ENV, extra[i]);
	r = cfs_client_transact(c, &b, NULL);
	cfs_buf_free(&b);
	return r;
}

/**
 * classfs_client_reset() - return the daemon's tree to a new daemon's state
 * @c: the client
 *
 * Removes every device (each after those below it and on it, with its
 * REMOVE event), every class and bus, and every file, directory and link
 * made through the filesystem or ATTR_SET with create; the mount, the
 * connections and their subscriptions stay, and SEQNUM goes on.  What
 * this client published and bound is forgotten (not published again
 * after a reconnect).  Root or the daemon's own uid only.
 * Return: 0, -EACCES (another uid), -EINVAL (NULL), the connection's errors.
 */
int classfs_client_reset(struct classfs_client *c)
{
	struct cfs_buf b;
	int r;

	if (!c)
		return -EINVAL;
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_RESET, 0, 0);
	r = cfs_client_transact(c, &b, NULL);
	cfs_buf_free(&b);
	if (r == 0) {
		cfs_client_bound_forget(c, NULL, "");
		cfs_client_rattr_forget(c, "");
	}
	return r;
}

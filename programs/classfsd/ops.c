// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops.c - the requests: decode, check the caller's right, do, reply.
 *
 * Every request gets exactly one final REPLY carrying 0 or -errno and a
 * message; a request the decoder refuses changes nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <classfs/print.h>
#include <classfs/record.h>

#include "daemon.h"
#include "ops.h"

#define LOAD_MAX (256u * 1024u * 1024u)
#define FORMAT_LAST 2u	/* formats: text, JSON, DOT */

/** cfsd_not_found() - -ENOENT, @rp's message naming the device @m names */
int cfsd_not_found(struct cfsd_reply *rp, const struct cfs_msg *m)
{
	snprintf(rp->msg, sizeof(rp->msg), "no %s %s%s%s",
		 m->cls ? "class device" : "physical device", m->cls ? m->cls : "",
		 m->cls ? "/" : "", m->name);
	return -ENOENT;
}

/** cfsd_denied() - -EPERM, @rp's message naming @c's uid, @what @name and its @owner */
int cfsd_denied(struct cfsd_reply *rp, const struct cfsd_conn *c, const char *what,
		const char *name, uid_t owner)
{
	snprintf(rp->msg, sizeof(rp->msg), "uid %u may not change %s %s (owned by uid %u)",
		 (unsigned int)c->uid, what, name, (unsigned int)owner);
	return -EPERM;
}

struct find_ctx {
	const char *name;
	struct classfs_device *found;
};

static int match_name(struct classfs_device *dev, void *data)
{
	struct find_ctx *f = data;
	const char *n = classfs_device_name(dev);

	if (!dev->cls && n && !strcmp(n, f->name) && !cfsd_dev_is_entry(dev)) {
		f->found = classfs_device_get(dev);
		return 1;
	}
	return 0;
}

/*
 * A device no client published (the record loader made it), owned by
 * root: a class device by its class's name index (not one whose class
 * link was unlinked through the filesystem: another may have its name
 * now), a physical one by a walk.  Returns it with a reference, or NULL.
 * A client's device that a removal took out of the registry is none:
 * not found, though the tree still holds it while it drains.
 * Called with cfsd.lock held: the walk reads published devices' names.
 */
static struct classfs_device *foreign_find(const char *cls_name, const char *name)
{
	struct find_ctx f = { .name = name };

	if (cls_name) {
		struct classfs_class *cls = classfs_class_find(cfsd.tree, cls_name);

		/* by the class's name index: the device whose class link it is */
		f.found = cls ? classfs_class_find_device(cls, name) : NULL;
		if (f.found && (!classfs_device_is_added(f.found) || cfsd_dev_is_entry(f.found))) {
			classfs_device_put(f.found);
			f.found = NULL;
		}
		classfs_class_put(cls);
	} else {
		classfs_tree_for_each_device(cfsd.tree, match_name, &f);
	}
	return f.found;
}

/* cfsd_dev_ref() of a request that names its device by SYSPATH ("/devices/...") */
static int dev_ref_syspath(struct cfsd_conn *c, const struct cfs_msg *m, bool change,
			   struct cfsd_reply *rp, struct classfs_device **out, uid_t *owner)
{
	struct classfs_device *dev = classfs_tree_find_device(cfsd.tree, m->syspath);
	uid_t who;

	if (!dev) {
		snprintf(rp->msg, sizeof(rp->msg), "no device at %.900s", m->syspath);
		return -ENOENT;
	}
	cfsd_lock();
	who = cfsd_dev_owner(dev);
	cfsd_unlock();
	if (change && c->uid != 0 && c->uid != who) {
		classfs_device_put(dev);
		return cfsd_denied(rp, c, "device", m->syspath, who);
	}
	if (owner)
		*owner = who;
	*out = dev;
	return 0;
}

/**
 * cfsd_dev_ref() - find the device @m names, check that the caller may
 * change it (@change), and take a reference so it can be used with
 * cfsd.lock released; @owner (may be NULL) receives the device's owner
 * (root for a record's devices).
 * Return: 0 (*@out referenced), -ENOENT, -EPERM (@rp says why).
 */
int cfsd_dev_ref(struct cfsd_conn *c, const struct cfs_msg *m, bool change, struct cfsd_reply *rp,
		 struct classfs_device **out, uid_t *owner)
{
	struct cfsd_rdev *rd;
	int r = 0;

	if (m->syspath)
		return dev_ref_syspath(c, m, change, rp, out, owner);
	cfsd_lock();
	rd = cfsd_dev_lookup(m->cls, m->name);
	if (!rd)
		r = cfsd_not_found(rp, m);
	else if (change && !cfsd_may_change(&rd->o, c->uid))
		r = cfsd_denied(rp, c, "device", rd->key, rd->o.owner);
	else
		*out = classfs_device_get(&rd->dev);
	if (rd && owner)
		*owner = rd->o.owner;
	/* foreign_find() reads devices' names: under cfsd.lock, where RENAME frees them */
	if (!rd)
		*out = foreign_find(m->cls, m->name);
	cfsd_unlock();
	if (!rd && *out) {
		rp->msg[0] = '\0';
		r = 0;
		if (owner)
			*owner = 0;
		if (change && c->uid != 0) {
			r = cfsd_denied(rp, c, "device", m->name, 0);
			classfs_device_put(*out);
			*out = NULL;
		}
	}
	return r;
}

/** cfsd_attr_path() - "class/x/y/ATTR": @attr's path below the tree's root, into @buf */
int cfsd_attr_path(struct classfs_device *dev, const char *attr, char *buf, size_t size)
{
	int n = classfs_device_devpath(dev, buf, size);

	if (n < 0)
		return n;
	if ((size_t)n + strlen(attr) + 2 > size)
		return -ENAMETOOLONG;
	memmove(buf, buf + 1, (size_t)n);	/* drop the leading '/' */
	snprintf(buf + n - 1, size - (size_t)n + 1, "/%s", attr);
	return 0;
}

static int op_status(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	cfs_buf_u32(&rp->extra, CFS_T_VERSION, CFS_PROTO_VERSION);
	cfs_buf_u32(&rp->extra, CFS_T_LAYOUT, (uint32_t)cfsd.cfg.layout);
	cfs_buf_u64(&rp->extra, CFS_T_SEQNUM, classfs_tree_seqnum(cfsd.tree));
	cfs_buf_str(&rp->extra, CFS_T_MOUNT, cfsd.mount ? cfsd.cfg.mountpoint : "");
	cfs_buf_u64(&rp->extra, CFS_T_COUNT, cfsd.cfg.max_msg);
	/* what each uid holds, within which limits (quota.c): `classctl status` */
	return cfsd_quota_usage(&rp->extra);
}

static int op_class_create(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	int r;

	cfsd_lock();
	r = cfsd_class_create(m->cls, c->uid, m->flags & CFS_F_BIND ? c : NULL, NULL, rp->msg,
			      sizeof(rp->msg));
	cfsd_unlock();
	return r;
}

static int op_class_remove(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	struct cfsd_removal rm;
	char what[300];
	struct cfsd_rclass *rc;
	int r = 0;

	cfsd_removal_init(&rm);
	cfsd_lock();
	rc = cfsd_class_lookup(m->cls);
	if (!rc) {
		snprintf(rp->msg, sizeof(rp->msg), "no class %s", m->cls);
		r = -ENOENT;
	} else if (!cfsd_may_change(&rc->o, c->uid)) {
		r = cfsd_denied(rp, c, "class", m->cls, rc->o.owner);
	} else if (rc->foreign) {
		snprintf(rp->msg, sizeof(rp->msg),
			 "class %s was made by the record loader: remove its devices instead", m->cls);
		r = -EPERM;
	} else {
		snprintf(what, sizeof(what), "class %s", m->cls);
		r = cfsd_remove_with_dependents(c->uid, rc, NULL, what, &rm, rp->msg,
						sizeof(rp->msg));
	}
	cfsd_unlock();
	/* out of the registry: the tree removes them, waiting for their running calls */
	cfsd_removal_finish(&rm);
	return r;
}

static int op_device_add(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	int r;

	cfsd_lock();
	r = cfsd_dev_add(m, c->uid, c, rp->msg, sizeof(rp->msg));
	cfsd_unlock();
	return r;
}

static int op_device_remove(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	struct classfs_device *dev = NULL;
	struct cfsd_removal rm;
	char what[600];
	struct cfsd_rdev *rd;
	int r = 0;

	cfsd_removal_init(&rm);
	if (m->syspath) {
		/* by its path: also a device that left its class's name index */
		snprintf(what, sizeof(what), "device %.580s", m->syspath);
		dev = classfs_tree_find_device(cfsd.tree, m->syspath);
		cfsd_lock();
		rd = dev ? cfsd_dev_lookup(dev->cls ? dev->cls->name : NULL,
					   classfs_device_name(dev)) : NULL;
		if (rd && &rd->dev != dev)
			rd = NULL;	/* the registry's of that name is another */
		/* (a client's device whose entry another removal took: it is going) */
		if (!dev || (!rd && cfsd_dev_is_entry(dev))) {
			snprintf(rp->msg, sizeof(rp->msg), "no device at %.900s", m->syspath);
			r = -ENOENT;
		}
	} else {
		snprintf(what, sizeof(what), "device %s%s%s", m->cls ? m->cls : "",
			 m->cls ? "/" : "", m->name);
		cfsd_lock();
		rd = cfsd_dev_lookup(m->cls, m->name);
		if (rd)
			dev = classfs_device_get(&rd->dev);
		else
			dev = foreign_find(m->cls, m->name);	/* a record's: root's */
		if (!dev)
			r = cfsd_not_found(rp, m);
	}
	if (r < 0)
		;
	else if (rd ? !cfsd_may_change(&rd->o, c->uid) : c->uid != 0)
		r = cfsd_denied(rp, c, "device", rd ? rd->key : m->name ? m->name : m->syspath,
			   rd ? rd->o.owner : 0);
	else
		r = cfsd_remove_with_dependents(c->uid, NULL, dev, what, &rm, rp->msg,
						sizeof(rp->msg));
	cfsd_unlock();
	/* out of the registry: the tree removes them, waiting for their running calls */
	cfsd_removal_finish(&rm);
	classfs_device_put(dev);
	return r;
}

static int op_rename(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	struct cfsd_rdev *rd;
	int r;

	cfsd_lock();
	rd = cfsd_dev_lookup(m->cls, m->name);
	if (!rd) {
		r = cfsd_not_found(rp, m);
	} else if (!cfsd_may_change(&rd->o, c->uid)) {
		r = cfsd_denied(rp, c, "device", rd->key, rd->o.owner);
	} else if (rd->dev.parent && cfsd_name_reserved(m->new_name, strlen(m->new_name))) {
		/* in its parent's directory: as cfsd_dev_place_check() refuses it at add */
		snprintf(rp->msg, sizeof(rp->msg), "cannot rename %s to %s: the tree makes that "
			 "name in a device's directory", rd->key, m->new_name);
		r = -EEXIST;
	} else {
		r = cfsd_dev_rename(rd, m->new_name, c);
		if (r < 0)
			snprintf(rp->msg, sizeof(rp->msg), "cannot rename %s to %s: %s", rd->key,
				 m->new_name, strerror(-r));
	}
	cfsd_unlock();
	return r;
}

/*
 * Variables that say which event it is and of which device.  A caller's
 * variables arrive as SYNTH_ARG_KEY (classfs_device_synth_uevent()), so
 * a DEVPATH= could not make an event of its own device pass for one of
 * another uid's devices; it is still refused, so that the caller learns
 * it cannot set them rather than finding SYNTH_ARG_DEVPATH in the event.
 */
static bool own_variable(const char *kv)
{
	static const char *const own[] = { "ACTION", "DEVPATH", "DEVPATH_OLD", "SUBSYSTEM",
					   "SEQNUM" };
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
		if (strlen(own[i]) == klen && !strncmp(kv, own[i], klen))
			return true;
	return false;
}

static int op_trigger(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	const char *extra[CFS_EVENT_VARS_MAX + 1];
	struct classfs_device *dev = NULL;
	const uint8_t *v;
	size_t off = 0, len, n = 0;
	int r;

	if (m->action >= CLASSFS_ACTION_COUNT) {
		snprintf(rp->msg, sizeof(rp->msg), "unknown action %u", m->action);
		return -EINVAL;
	}
	if (m->nenv > CFS_EVENT_VARS_MAX) {
		snprintf(rp->msg, sizeof(rp->msg), "too many variables");
		return -E2BIG;
	}
	while (cfs_msg_next(m, &off, CFS_T_ENV, &v, &len)) {
		if (own_variable((const char *)v)) {
			snprintf(rp->msg, sizeof(rp->msg),
				 "%.200s: the event's own variable cannot be given", (const char *)v);
			return -EINVAL;
		}
		extra[n++] = (const char *)v;
	}
	extra[n] = NULL;
	r = cfsd_dev_ref(c, m, true, rp, &dev, NULL);
	if (r < 0)
		return r;
	/* a synthetic event, as a write to the device's `uevent` file makes */
	r = classfs_device_synth_uevent(dev, (enum classfs_action)m->action, NULL,
					n ? extra : NULL);
	if (r < 0)
		snprintf(rp->msg, sizeof(rp->msg), "cannot send %s: %s",
			 classfs_action_name((enum classfs_action)m->action), strerror(-r));
	classfs_device_put(dev);
	return r;
}

static int op_load(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	int r = 0;

	/*
	 * A record's devices are root's (the registry does not track them):
	 * loaded by another uid they would be devices it made but may not
	 * remove, passing for root's.  Refused at the first chunk, so
	 * nothing is buffered either.
	 */
	if (c->uid != 0) {
		snprintf(rp->msg, sizeof(rp->msg),
			 "uid %u may not load a record (its devices would belong to root)",
			 (unsigned int)c->uid);
		return -EPERM;
	}
	if (c->load_len + m->data_len > LOAD_MAX) {
		free(c->load);
		c->load = NULL;
		c->load_len = c->load_cap = 0;
		snprintf(rp->msg, sizeof(rp->msg), "record larger than %u bytes", LOAD_MAX);
		return -EFBIG;
	}
	if (c->load_len + m->data_len > c->load_cap) {
		size_t cap = c->load_cap ? c->load_cap : 65536;
		uint8_t *p;

		while (cap < c->load_len + m->data_len)
			cap *= 2;
		p = realloc(c->load, cap);
		if (!p) {
			free(c->load);
			c->load = NULL;
			c->load_len = c->load_cap = 0;
			return -ENOMEM;
		}
		c->load = p;
		c->load_cap = cap;
	}
	memcpy(c->load + c->load_len, m->data, m->data_len);
	c->load_len += m->data_len;
	if (m->flags & CFS_F_MORE)
		return 0;
	{
		struct classfs_record_options opt = { .filename = m->filename ? m->filename : "(client)" };
		struct classfs_record_error err = { 0 };

		r = classfs_record_load(cfsd.tree, (const char *)c->load, c->load_len, &opt, &err);
		if (r < 0 && err.reason[0])
			snprintf(rp->msg, sizeof(rp->msg), "%s:%lu: %s", err.file[0] ? err.file : opt.filename,
				 err.line, err.reason);
		else if (r < 0)
			snprintf(rp->msg, sizeof(rp->msg), "cannot load %s: %s", opt.filename, strerror(-r));
		else
			log_info("uid %u loaded %s (%zu bytes)", (unsigned int)c->uid, opt.filename,
				 c->load_len);
	}
	free(c->load);
	c->load = NULL;
	c->load_len = c->load_cap = 0;
	return r;
}

/* send @data as DATA chunks of MORE replies; the final reply is the caller's */
static int stream_data(struct cfsd_conn *c, uint32_t serial, const char *data, size_t len)
{
	size_t chunk = cfsd.cfg.max_msg - CFS_HDR_SIZE - CFS_FIELD_HDR_SIZE;
	struct cfs_buf b;
	int r = 0;

	cfs_buf_init(&b);
	for (size_t off = 0; off < len && r == 0; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		cfs_buf_truncate(&b, 0);
		cfs_buf_hdr(&b, CFS_OP_REPLY, serial, CFS_F_MORE);
		cfs_buf_bytes(&b, CFS_T_DATA, data + off, n);
		r = cfsd_conn_send(c, &b);
	}
	cfs_buf_free(&b);
	return r;
}

/* render with @fn into memory and stream it */
static int op_render(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	char *data = NULL;
	size_t len = 0;
	FILE *f;
	int r;
	struct classfs_device *dev = NULL;
	uid_t owner = 0;

	if ((m->op == CFS_OP_TREE || m->op == CFS_OP_INFO) && m->format > FORMAT_LAST) {
		snprintf(rp->msg, sizeof(rp->msg), "unknown format %u", m->format);
		return -EINVAL;
	}
	f = open_memstream(&data, &len);
	if (!f)
		return -ENOMEM;
	switch (m->op) {
	case CFS_OP_SAVE:
		/*
		 * A record holds every attribute's value, also those only
		 * root may read (mode 0400): through the mount another uid
		 * cannot read them, so it may not save them either.
		 */
		if (c->uid != 0) {
			snprintf(rp->msg, sizeof(rp->msg),
				 "uid %u may not save: a record holds values only root may read",
				 (unsigned int)c->uid);
			r = -EPERM;
			break;
		}
		r = classfs_record_save(cfsd.tree, m->syspath, f);
		break;
	case CFS_OP_TREE:
		r = classfs_tree_print(cfsd.tree, (enum classfs_print_format)m->format, f);
		break;
	case CFS_OP_INFO:
		r = cfsd_dev_ref(c, m, false, rp, &dev, &owner);
		if (r == 0)
			r = cfsd_may_read_all(c, owner, dev, rp);
		if (r == 0)
			r = classfs_device_print_info(dev, (enum classfs_print_format)m->format, f);
		classfs_device_put(dev);
		break;
	default:
		snprintf(rp->msg, sizeof(rp->msg), "not a SAVE, TREE or INFO request");
		r = -EINVAL;
	}
	if (fclose(f) != 0 && r == 0)
		r = -ENOMEM;
	if (r < 0 && !rp->msg[0])
		snprintf(rp->msg, sizeof(rp->msg), "%s failed: %s", cfs_op_name(m->op), strerror(-r));
	if (r == 0)
		r = stream_data(c, m->serial, data, len);
	free(data);
	return r;
}

/* a subscription counts for its uid (quota.c) until its connection ends */
static int op_subscribe(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	bool charge = !c->subscribed && !c->sub_charged;
	int r;

	if (charge) {
		r = cfsd_quota_charge(c->uid, CFSD_Q_SUB, 1, rp->msg, sizeof(rp->msg));
		if (r < 0)
			return r;
	}
	r = cfsd_subscribe(c, m->serial, m->seqnum);
	if (charge && r < 0)
		cfsd_quota_uncharge(c->uid, CFSD_Q_SUB, 1);
	else if (charge)
		c->sub_charged = true;
	return r;
}

static int execute(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp);

static int op_batch(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	const uint8_t *v;
	size_t off = 0, len;
	int r = 0;

	while (r == 0 && cfs_msg_next(m, &off, CFS_T_SUB, &v, &len)) {
		struct cfs_msg sub;

		cfs_msg_decode(v, len, &sub);	/* checked with the batch */
		r = execute(c, &sub, rp);
		if (r == 0)
			rp->count++;
	}
	if (r < 0) {
		char inner[sizeof(rp->msg)];

		snprintf(inner, sizeof(inner), "%s", rp->msg[0] ? rp->msg : strerror(-r));
		snprintf(rp->msg, sizeof(rp->msg), "request %llu of the batch: %.900s",
			 (unsigned long long)rp->count + 1, inner);
	}
	return r;
}

static int execute(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp)
{
	switch (m->op) {
	case CFS_OP_STATUS: return op_status(c, m, rp);
	case CFS_OP_CLASS_CREATE: return op_class_create(c, m, rp);
	case CFS_OP_CLASS_REMOVE: return op_class_remove(c, m, rp);
	case CFS_OP_DEVICE_ADD: return op_device_add(c, m, rp);
	case CFS_OP_DEVICE_REMOVE: return op_device_remove(c, m, rp);
	case CFS_OP_RENAME: return op_rename(c, m, rp);
	case CFS_OP_ATTR_GET: return cfsd_op_attr_get(c, m, rp);
	case CFS_OP_ATTR_SET: return cfsd_op_attr_set(c, m, rp);
	case CFS_OP_TRIGGER: return op_trigger(c, m, rp);
	case CFS_OP_SUBSCRIBE: return op_subscribe(c, m, rp);
	case CFS_OP_REPLAY:
		return cfsd_replay(c, m->serial, m->seqnum, m->seqnum_last, rp->msg, sizeof(rp->msg));
	case CFS_OP_LOAD: return op_load(c, m, rp);
	case CFS_OP_SAVE:
	case CFS_OP_TREE:
	case CFS_OP_INFO: return op_render(c, m, rp);
	case CFS_OP_BATCH: return op_batch(c, m, rp);
	case CFS_OP_RESET: return cfsd_reset(c->uid, rp->msg, sizeof(rp->msg));
	default:
		snprintf(rp->msg, sizeof(rp->msg), "%s is not a request", cfs_op_name(m->op));
		return -EOPNOTSUPP;
	}
}

/* a request whose work makes events (the loop lingers for more until its end) */
static bool makes_events(uint16_t op)
{
	switch (op) {
	case CFS_OP_DEVICE_ADD:
	case CFS_OP_DEVICE_REMOVE:
	case CFS_OP_CLASS_REMOVE:
	case CFS_OP_RENAME:
	case CFS_OP_ATTR_SET:
	case CFS_OP_TRIGGER:
	case CFS_OP_LOAD:
	case CFS_OP_BATCH:
	case CFS_OP_RESET:
		return true;
	default:
		return false;
	}
}

/**
 * cfsd_reply_error() - the final REPLY of @c's request @serial that could
 * not run: @err (-errno) and @msg
 */
void cfsd_reply_error(struct cfsd_conn *c, uint32_t serial, int err, const char *msg)
{
	struct cfs_buf b;
	int r;

	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLY, serial, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, err);
	cfs_buf_str(&b, CFS_T_MESSAGE, msg);
	r = cfsd_conn_send(c, &b);
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		log_debug("pid %d: cannot send a reply: %s", (int)c->pid, strerror(-r));
	cfs_buf_free(&b);
}

void cfsd_handle(struct cfsd_conn *c, const uint8_t *buf, size_t len)
{
	struct cfsd_reply rp = { .msg = "" };
	struct cfs_msg m;
	struct cfs_buf b;
	int r;

	cfs_buf_init(&rp.extra);
	r = cfs_msg_decode(buf, len, &m);
	if (r < 0) {
		snprintf(rp.msg, sizeof(rp.msg), "%s", cfs_msg_error_text(r));
		log_debug("pid %d: refused a message of %zu bytes: %s", (int)c->pid, len, rp.msg);
	} else {
		bool changes = makes_events(m.op);

		if (changes)
			cfsd_events_busy(true);
		cfsd_quota_caller = c->uid;
		r = execute(c, &m, &rp);
		cfsd_quota_caller = 0;
		if (changes)
			cfsd_events_busy(false);
		if (r == REPLIED) {
			cfs_buf_free(&rp.extra);
			return;
		}
	}
	if (r < 0 && !rp.msg[0])
		snprintf(rp.msg, sizeof(rp.msg), "%s", strerror(-r));
	else if (r == 0)
		snprintf(rp.msg, sizeof(rp.msg), "ok");
	cfs_buf_init(&b);
	cfs_buf_hdr(&b, CFS_OP_REPLY, m.serial, 0);
	cfs_buf_i32(&b, CFS_T_ERROR, r < 0 ? r : 0);
	if (rp.msg[0])
		cfs_buf_str(&b, CFS_T_MESSAGE, rp.msg);
	if (m.op == CFS_OP_BATCH)
		cfs_buf_u64(&b, CFS_T_COUNT, rp.count);
	if (r == 0 && rp.extra.len)
		cfs_buf_raw(&b, rp.extra.p, rp.extra.len);
	if (rp.extra.err && !b.err)
		b.err = rp.extra.err;
	r = cfsd_conn_send(c, &b);
	if (r < 0 && r != -EPIPE && r != -ECONNRESET)
		log_debug("pid %d: cannot send a reply: %s", (int)c->pid, strerror(-r));
	cfs_buf_free(&b);
	cfs_buf_free(&rp.extra);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * ops.h - what the request handlers share (ops.c, ops-attr.c): the reply
 * a handler fills in, and finding the device a request names.
 */
#ifndef CLASSFSD_OPS_H
#define CLASSFSD_OPS_H

#include "daemon.h"

#define REPLIED 1		/* the handler sent its reply itself */

/* what a handler answers beside its status: cfsd_handle() sends it */
struct cfsd_reply {
	struct cfs_buf extra;	/* fields after ERROR and MESSAGE */
	char msg[1024];
	uint64_t count;		/* BATCH: requests done */
};

/* ops.c */
int cfsd_not_found(struct cfsd_reply *rp, const struct cfs_msg *m);
int cfsd_denied(struct cfsd_reply *rp, const struct cfsd_conn *c, const char *what,
		const char *name, uid_t owner);
int cfsd_dev_ref(struct cfsd_conn *c, const struct cfs_msg *m, bool change, struct cfsd_reply *rp,
		 struct classfs_device **out, uid_t *owner);
int cfsd_attr_path(struct classfs_device *dev, const char *attr, char *buf, size_t size);

/* ops-attr.c */
int cfsd_op_attr_get(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp);
int cfsd_op_attr_set(struct cfsd_conn *c, const struct cfs_msg *m, struct cfsd_reply *rp);
int cfsd_may_read_all(const struct cfsd_conn *c, uid_t owner, struct classfs_device *dev,
		      struct cfsd_reply *rp);

#endif

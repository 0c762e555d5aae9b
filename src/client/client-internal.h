/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * client-internal.h - what the client library's files share: the client
 * itself, its bookkeeping of remote attributes and bound objects, and
 * the request/reply machinery (client.c).
 */
#ifndef CLASSFS_CLIENT_CLIENT_INTERNAL_H
#define CLASSFS_CLIENT_CLIENT_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <classfs/client.h>

#include "protocol.h"

/* a remote attribute this client serves */
struct rattr {
	char *key;		/* "CLASS/NAME/ATTR" ("/NAME/ATTR" for a physical device) */
	ssize_t (*show)(void *data, char *buf, size_t size);
	ssize_t (*store)(void *data, const char *buf, size_t count);
	void *data;
};

/* a bound object, kept as its encoded request to publish it again after a restart */
struct bound {
	char *key;		/* "CLASS" for a class, "CLASS/NAME" or "/NAME" for a device */
	uint8_t *msg;
	size_t len;
};

struct classfs_client {
	char *path;
	unsigned int flags;
	int fd;
	int sub_fd;
	int epfd;
	uint32_t serial;
	size_t max_msg;
	uint8_t *rbuf;
	size_t rcap;
	char errmsg[512];

	struct rattr *rattrs;
	size_t nrattrs, crattrs;
	struct bound *bound;
	size_t nbound, cbound;

	bool subscribed;
	classfs_client_event_fn ev_fn;
	classfs_client_gap_fn gap_fn;
	void *ev_data;
	uint64_t last_seqnum;
};

/* per-call handling of streamed replies (MORE) */
struct call_ctx {
	int (*part)(struct classfs_client *c, const struct cfs_msg *m, void *data);
	void *data;
	struct cfs_msg reply;	/* final reply, valid until the next receive */
};

/* client.c */
int cfs_client_error(struct classfs_client *c, int err, const char *fmt, ...)
	CLASSFS_PRINTF(3, 4);
char *cfs_client_key(const char *a, const char *b, const char *d);
struct rattr *cfs_client_rattr_find(struct classfs_client *c, const char *key);
int cfs_client_sock_connect(const char *path);
int cfs_client_send(int fd, struct cfs_buf *b);
ssize_t cfs_client_recv(struct classfs_client *c, int fd, bool nonblock);
int cfs_client_refusal(struct classfs_client *c, int fd, int r);
/* send a request and wait for its reply (reconnecting when asked to) */
int cfs_client_transact(struct classfs_client *c, struct cfs_buf *b, struct call_ctx *ctx);

/* client-publish.c */
int cfs_client_bound_add(struct classfs_client *c, char *key, const uint8_t *msg, size_t len);
void cfs_client_bound_forget(struct classfs_client *c, const char *key, const char *prefix);
void cfs_client_rattr_forget(struct classfs_client *c, const char *prefix);

/* client-events.c */
int cfs_client_open_sub(struct classfs_client *c, uint64_t from);
int cfs_client_deliver_events(struct classfs_client *c, const struct cfs_msg *m,
			      classfs_client_event_fn fn, void *data, bool live);
int cfs_client_fast_events(struct classfs_client *c, const uint8_t *p, size_t len);
int cfs_client_fill_gap(struct classfs_client *c, uint64_t first, uint64_t last);

#endif

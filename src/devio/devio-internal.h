/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * devio-internal.h - between the supervisor's pieces (src/devio): the
 * seccomp filter and its notifications (seccomp.c), the nodes of one
 * environment (nodes.c) and how their calls are answered (answer.c).
 */
#ifndef CLASSFS_DEVIO_INTERNAL_H
#define CLASSFS_DEVIO_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <linux/seccomp.h>

#include "classfs-internal/devio.h"

/* seccomp.c */

int cfs_seccomp_receive(int listener, struct seccomp_notif *req);
bool cfs_seccomp_valid(int listener, uint64_t id);
int cfs_seccomp_continue(int listener, uint64_t id);
int cfs_seccomp_answer(int listener, uint64_t id, long result);
int cfs_seccomp_send_fd(int listener, uint64_t id, int fd, bool cloexec);

#define CFS_NODE_PLAYERS 8

/*
 * One emulated node.  Its identity fields are set once, when it is made;
 * the handler and players change under @call_lock, which also keeps one
 * call at a time on the node (handlers keep a replay position).
 */
struct cfs_node {
	struct cfs_node *next;		/* in cfs_nodes.list, under its lock */
	char *name;			/* the path it was first named by ("/dev/...") */
	mode_t type;			/* S_IFCHR, S_IFBLK; S_IFREG: a file in /dev (below) */
	dev_t file_dev;			/* S_IFREG: that file; empty, it opens as a pty, */
	ino_t file_ino;			/* ... else as a memfd of its recorded contents */
	dev_t rdev;
	mode_t dev_type;		/* what fstat() says: S_IFCHR, S_IFBLK; 0: the file's own */
	mode_t perm;
	int master;			/* a pty's master (the other end); -1 */
	int slave;			/* ... and a slave kept open, so that the master never reads EIO */
	int memfd;			/* block and USB nodes: what a program reads; -1 */
	dev_t id_dev;			/* what a program's descriptor of it is (fstat) */
	ino_t id_ino;
	pthread_mutex_t call_lock;
	unsigned long opens;		/* open()s answered so far (atomic) */
	struct cfs_ioctl_handler handler;	/* .ioctl NULL: none */
	struct cfs_player *players[CFS_NODE_PLAYERS];
};

/*
 * One environment's nodes.  @lock guards the list and the refs; a node's
 * @call_lock is taken after it (never while holding it).
 */
struct cfs_nodes {
	pthread_mutex_t lock;
	unsigned refs;			/* the owner's, the supervisor's in-flight calls */
	struct cfs_node *list;
	struct cfs_player *sockets[CFS_NODE_PLAYERS];	/* socket scripts */
	int root;			/* the environment's root directory (O_PATH) */
	dev_t dev_dev;			/* st_dev of its /dev: only what is there gets a node */
};

/* nodes.c */
struct cfs_node *cfs_nodes_by_number(struct cfs_nodes *n, mode_t type, dev_t rdev, mode_t perm,
				     const char *name);
struct cfs_node *cfs_nodes_by_identity(struct cfs_nodes *n, dev_t dev, ino_t ino);
struct cfs_node *cfs_nodes_by_file(struct cfs_nodes *n, const struct stat *st, int file,
				   const char *name);
int cfs_node_open(struct cfs_node *node, int flags);

/* answer.c */
void cfs_answer(struct cfs_nodes *n, int listener, const struct seccomp_notif *req);

#endif

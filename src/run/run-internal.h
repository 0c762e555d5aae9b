/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run-internal.h - the pieces of <classfs/run.h>: the caller's handle
 * (run.c), the holder process that owns the namespaces (holder.c), the
 * user namespace of a caller who is not root (userns.c), and the private
 * /dev and /run/udev it keeps (devfs.c).
 */
#ifndef CLASSFS_RUN_INTERNAL_H
#define CLASSFS_RUN_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include <classfs/classfs.h>
#include <classfs/client.h>
#include <classfs/record.h>
#include <classfs/run.h>

#include "util.h"

#define CFS_RUN_SOCKET_MAX sizeof(((struct sockaddr_un *)0)->sun_path)
/* $TMPDIR (at most 64 bytes) + "/classfs-run.XXXXXX": room for "/control" in a socket path */
#define CFS_RUN_TMPDIR_MAX 88

/* what the holder reports once, through the ready pipe */
struct cfs_run_report {
	int status;		/* 0: ready; else -errno */
	uint64_t sys_dev;	/* st_dev of the tree mounted on the environment's /sys */
	char message[512];
};

/* everything the holder needs, prepared by the caller before fork() */
struct cfs_holder_args {
	const struct classfs_run_options *opt;
	const char *daemon;		/* classfsd to start; NULL when joining */
	char socket[CFS_RUN_SOCKET_MAX];
	char tmpdir[CFS_RUN_TMPDIR_MAX];	/* "" when joining */
	bool userns;			/* not root: FUSE mounted by the holder, /dev a view (userns.c) */
	bool new_userns;		/* ... in a user namespace the holder makes */
	uid_t uid;			/* the caller's, mapped to themselves (or to 0) */
	gid_t gid;
	int ready_fd;			/* write end: one struct cfs_run_report */
	int ctl_fd;			/* read end: EOF means stop */
};

struct classfs_run {
	pid_t holder;
	int ctl_fd;			/* write end of the holder's control pipe */
	int ns_user;			/* the holder's user namespace; -1: none of its own */
	int ns_mnt, ns_net;		/* the holder's namespaces, to join */
	int root;			/* the holder's root directory (the caller's chroot) */
	dev_t sys_dev;			/* what /sys must be inside (the tree's st_dev) */
	char socket[CFS_RUN_SOCKET_MAX];
	char tmpdir[CFS_RUN_TMPDIR_MAX];	/* our socket directory; "" when joining */
	struct cfs_nodes *nodes;	/* the device nodes that answer (src/devio) */
	struct cfs_node_server *server;	/* ... served to the programs inside (run-serve.c) */
	char nodes_socket[CFS_RUN_SOCKET_MAX];	/* its socket; "" when none */
	bool server_failed;		/* ... could not start: not tried again */
	bool verbose;
};

/* holder.c: never returns */
_Noreturn void cfs_holder_main(const struct cfs_holder_args *a);

/* udev-props.c: properties as "KEY=VALUE" strings, one after another */
struct cfs_props {
	char *buf;		/* each NUL-terminated */
	size_t len;
	size_t count;
	char node[256];		/* the record's `N:` name (its contents left out); "" for none */
};
struct classfs_client;
void cfs_props_free(struct cfs_props *p);
bool cfs_props_in_event(const struct classfs_uevent *ev, const char *kv);
int cfs_client_save_mem(struct classfs_client *c, const char *devpath, char **buf, size_t *len);
int cfs_props_recorded(struct classfs_client *c, const struct classfs_uevent *ev,
		       struct cfs_props *out);

/* devfs.c, devfs-events.c: the private /dev and /run/udev */
struct cfs_devfs;
int cfs_devfs_setup(struct cfs_devfs **out, int host_dev, struct classfs_client *req,
		    bool verbose, char *msg, size_t msgsize);
void cfs_devfs_free(struct cfs_devfs *d);
int cfs_devfs_fill(struct cfs_devfs *d, struct classfs_tree *tree);
int cfs_devfs_event_before(struct cfs_devfs *d, const struct classfs_uevent *ev,
			   const struct cfs_props *recorded);
int cfs_devfs_broadcast(struct cfs_devfs *d, int nl_fd, const struct classfs_uevent *ev);
int cfs_devfs_event_after(struct cfs_devfs *d, const struct classfs_uevent *ev);

/* devdir.c: names below /dev, and files made below a directory, never beside it */
enum cfs_dev_name {
	CFS_DEV_NAME_FREE,	/* a device may have it */
	CFS_DEV_NAME_HOST,	/* a host node bound in: stays the host's */
	CFS_DEV_NAME_OWN,	/* the environment's own entry (fd, stdin, pts, ...) */
};
int cfs_dev_check_record(const char *data, size_t len, const char *file, char *msg,
			 size_t msgsize);
enum cfs_dev_name cfs_dev_name_kind(const char *rel);
int cfs_devdir_mknod(int root, const char *rel, mode_t mode, dev_t devt);
int cfs_devdir_symlink(int root, const char *target, const char *rel);
int cfs_devdir_write(int root, const char *rel, const void *data, size_t len, mode_t mode);
int cfs_devdir_unlink(int root, const char *rel);
ssize_t cfs_devdir_readlink(int root, const char *rel, char *buf, size_t size);

/* userns.c: the environment of a caller who is not root */
int cfs_userns_refusal(int err, const char *step, char *msg, size_t size);
int cfs_userns_enter(uid_t uid, gid_t gid, bool as_root, char *msg, size_t size);
bool cfs_userns_capable(void);
bool cfs_userns_privileged(void);
int cfs_userns_fuse_detached(const char *fsname, uid_t uid, gid_t gid, int *fuse_fd, int *mnt_fd,
			     char *msg, size_t size);
int cfs_userns_attach(int mnt_fd, const char *where);

/* run-nodes.c, run-serve.c: device nodes that answer */
struct cfs_nodes;
int cfs_run_load(struct cfs_nodes *nodes, int root, enum classfs_recording kind,
		 const char *target, const char *file, const char *data, size_t len,
		 const char *name, char *msg, size_t size);
struct cfs_node_server;
int cfs_node_server_start(struct cfs_nodes *nodes, int root, const char *dir,
			  struct cfs_node_server **out, char *path, size_t size);
void cfs_node_server_stop(struct cfs_node_server *s);

/* run.c */
void cfs_run_log(bool verbose, const char *fmt, ...) CLASSFS_PRINTF(2, 3);
pid_t cfs_run_fork_paired(int *fd);

#endif

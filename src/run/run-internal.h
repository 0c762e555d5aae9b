/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * run-internal.h - the pieces of <classfs/run.h>: the caller's handle
 * (run.c), the holder process that owns the namespaces (holder.c) and
 * the private /dev and /run/udev it keeps (devfs.c).
 */
#ifndef CLASSFS_RUN_INTERNAL_H
#define CLASSFS_RUN_INTERNAL_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include <classfs/classfs.h>
#include <classfs/record.h>
#include <classfs/run.h>

#define CFS_RUN_SOCKET_MAX sizeof(((struct sockaddr_un *)0)->sun_path)
/* $TMPDIR (at most 64 bytes) + "/classfs-run.XXXXXX": room for "/control" in a socket path */
#define CFS_RUN_TMPDIR_MAX 88

/* what the holder reports once, through the ready pipe */
struct cfs_run_report {
	int status;		/* 0: ready; else -errno */
	char message[512];
};

/* everything the holder needs, prepared by the caller before fork() */
struct cfs_holder_args {
	const struct classfs_run_options *opt;
	const char *daemon;		/* classfsd to start; NULL when joining */
	char socket[CFS_RUN_SOCKET_MAX];
	char tmpdir[CFS_RUN_TMPDIR_MAX];	/* "" when joining */
	int ready_fd;			/* write end: one struct cfs_run_report */
	int ctl_fd;			/* read end: EOF means stop */
};

struct classfs_run {
	pid_t holder;
	int ctl_fd;			/* write end of the holder's control pipe */
	int ns_mnt, ns_net;		/* the holder's namespaces, to join */
	char socket[CFS_RUN_SOCKET_MAX];
	char tmpdir[CFS_RUN_TMPDIR_MAX];	/* our socket directory; "" when joining */
};

/* holder.c: never returns */
_Noreturn void cfs_holder_main(const struct cfs_holder_args *a);

/* devfs.c: the private /dev and /run/udev */
struct cfs_devfs;
int cfs_devfs_setup(struct cfs_devfs **out, bool verbose, char *msg, size_t msgsize);
void cfs_devfs_free(struct cfs_devfs *d);
int cfs_devfs_add_record_node(const struct classfs_record_node *node, void *data);
int cfs_devfs_event_before(struct cfs_devfs *d, const struct classfs_uevent *ev);
int cfs_devfs_event_after(struct cfs_devfs *d, const struct classfs_uevent *ev);

/* run.c */
void cfs_run_log(bool verbose, const char *fmt, ...) CLASSFS_PRINTF(2, 3);

#endif

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fuse-internal.h - what the files of the FUSE view share: the mount, the
 * request handlers (ops.c), answers to reads and writes (reply.c),
 * invalidation and poll (notify.c), the directories the kernel holds
 * (known.c), the session loop (loop.c) and mounting (mount.c), the
 * requests that change names (ns-ops.c); the devtmpfs-style view has
 * requests of its own (devview.c).
 */
#ifndef CLASSFS_FUSE_INTERNAL_H
#define CLASSFS_FUSE_INTERNAL_H

/*
 * 3.12: below it fuse_session_loop_mt() is the 3.2 entry point, which
 * reads the config from fuse_loop_cfg_create() as the old public struct
 * (clone_fd, max_idle_threads): the thread cap was lost and an idle limit
 * of 1 made libfuse start and end a worker thread (cloning /dev/fuse) for
 * nearly every request, ~35 us of daemon CPU each (bench-fs).  Kept at
 * 3.12 for the same view of the API although loop.c runs its own loop.
 */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <classfs/classfs.h>
#include "classfs-internal/fs.h"
#include "classfs-internal/watch.h"

#define CFS_FUSE_TIMEOUT 86400.0	/* entries and attributes: a day, pushed invalidation */

struct cfs_snap;

struct cfs_inval {
	struct cfs_inval *next;
	uint64_t dir;		/* entry @name of directory @dir; or, @name "", inode @dir
				 * (0: every link the kernel holds) */
	bool dir_only;		/* the entry is not cached: the directory alone */
	char name[];
};

struct cfs_poller {
	struct cfs_poller *next;
	uint64_t ino;
	uint64_t events;		/* notifications so far */
	uint64_t seen;			/* ... as of the last read from offset 0 */
	struct fuse_pollhandle *ph;	/* waiting poll, or NULL */
};

/* the directories the kernel holds (known.c) */
struct cfs_known_ent {
	uint64_t ino;			/* 0: empty */
	uint64_t nlookup;		/* lookup replies the kernel has not forgotten */
};

enum cfs_known_state {
	CFS_KNOWN_NOTHING,		/* the kernel does not hold the directory */
	CFS_KNOWN_DIR,			/* the directory, not the entry */
	CFS_KNOWN_ENTRY,		/* the entry too (a lookup of its name was answered) */
};

struct cfs_known {
	pthread_mutex_t lock;
	struct cfs_known_ent *ents;
	size_t size, count;		/* size: a power of two, or 0 */
	uint64_t *names;		/* hashes of (directory, name) answered; 0: empty */
	size_t nsize, ncount;
	bool all;			/* out of memory once: every directory counts as held */
	bool all_names;			/* too many names once: every name counts as cached */
	bool links_lost;		/* a link not tracked (out of memory): its text may stay */
};


struct classfs_mount {
	struct classfs_tree *tree;
	uid_t uid;			/* the tree's owner, as getattr reports it: who serves it */
	gid_t gid;
	struct cfs_devview *devview;	/* the devtmpfs-style view; NULL: the sysfs one */
	struct fuse_session *se;
	struct cfs_fuse_loop *loop;
	char *mountpoint;
	int watch_id;
	pthread_t notifier;
	bool notifier_started, loop_started;
	time_t mtime;

	pthread_mutex_t qlock;		/* the invalidation queue */
	pthread_cond_t qwork, qdone;
	struct cfs_inval *qhead, **qtail;
	uint64_t queued, pushed;
	bool push_now;			/* a sync waits, or the queue is long: no lingering */
	uint64_t changes;		/* entries gained or lost: directories' mtime */
	bool stopping;

	struct cfs_known known;		/* directories the kernel holds */

	pthread_mutex_t plock;		/* pollers */
	struct cfs_poller *pollers;
	uint64_t stamp;			/* computed files' mtimes (cfs_fuse_new_mtime_ns()) */

	pthread_mutex_t slock;		/* computed values' snapshots (snap.c) */
	struct cfs_snap **snaps;	/* SNAP_BUCKETS chains, or NULL */
	struct cfs_snap *snap_oldest, *snap_newest;
	size_t nsnaps;
	uint64_t snap_ticket;		/* getattrs taking one, in the order they began (__atomic) */

	pthread_mutex_t dlock;		/* requests answered later (reply.c) */
	pthread_cond_t dempty;		/* the list emptied */
	struct cfs_fuse_deferred *deferred;
	bool dstopping;
};

/* a read's or write's readiness to be answered later (reply.c) */
struct cfs_fuse_offer {
	struct classfs_reply_offer offer;
	struct classfs_mount *m;
	fuse_req_t req;
	size_t size;
	off_t off;
	bool write;
	const struct classfs_stat *snap;	/* a getattr that takes a snapshot (snap.c) */
	uint64_t ticket;			/* ... its place in line (cfs_fuse_snap_ticket()) */
};

/* ops.c */
extern const struct fuse_lowlevel_ops cfs_fuse_ops;

/* common-ops.c: the requests both mounts answer alike */
void cfs_fuse_init(void *data, struct fuse_conn_info *conn);
void cfs_fuse_statfs(fuse_req_t req, fuse_ino_t ino);
void cfs_fuse_refuse_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			    struct fuse_file_info *fi);
void cfs_fuse_refuse_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			   dev_t rdev);
void cfs_fuse_refuse_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void cfs_fuse_refuse_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void cfs_fuse_refuse_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
			     const char *name);
void cfs_fuse_refuse_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
			    fuse_ino_t newparent, const char *newname, unsigned int flags);
void cfs_fuse_refuse_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
			  const char *newname);
/* the members of both mounts' fuse_lowlevel_ops that common-ops.c answers */
#define CFS_FUSE_COMMON_OPS				\
	.init = cfs_fuse_init,				\
	.statfs = cfs_fuse_statfs,			\
	.link = cfs_fuse_refuse_link
/* the devtmpfs-style view's: names change only through the tree */
#define CFS_FUSE_REFUSE_NS_OPS				\
	.create = cfs_fuse_refuse_create,		\
	.mknod = cfs_fuse_refuse_mknod,			\
	.mkdir = cfs_fuse_refuse_mkdir,			\
	.unlink = cfs_fuse_refuse_unlink,		\
	.rmdir = cfs_fuse_refuse_unlink,		\
	.symlink = cfs_fuse_refuse_symlink,		\
	.rename = cfs_fuse_refuse_rename

/* ops.c (shared with ns-ops.c) */
void cfs_fuse_fill_stat(struct classfs_mount *m, const struct classfs_stat *cs, struct stat *st);
void cfs_fuse_entry_param(struct classfs_mount *m, const struct classfs_stat *cs,
			  struct fuse_entry_param *e);
void cfs_fuse_reply_entry(fuse_req_t req, const struct classfs_stat *cs);
double cfs_fuse_attr_timeout(const struct classfs_stat *cs);
uint64_t cfs_fuse_new_mtime_ns(struct classfs_mount *m);
uint64_t cfs_fuse_created_fh(uint64_t ino);
/* the file a write request of this thread is writing: its own change is not pushed back */
extern __thread struct classfs_mount *cfs_fuse_writing_mount;
extern __thread uint64_t cfs_fuse_writing_ino;

/* ns-ops.c: the sysfs view's requests that change names, modes and sizes */
extern __thread struct classfs_mount *cfs_fuse_serving;	/* the mount this thread answers */
void cfs_fuse_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     struct fuse_file_info *fi);
void cfs_fuse_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		    dev_t rdev);
void cfs_fuse_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode);
void cfs_fuse_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name);
void cfs_fuse_unlink(fuse_req_t req, fuse_ino_t parent, const char *name);
void cfs_fuse_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name);
void cfs_fuse_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		     const char *newname, unsigned int flags);
void cfs_fuse_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		    struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		    size_t in_bufsz, size_t out_bufsz);
void cfs_fuse_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		      struct fuse_file_info *fi);
#define CFS_FUSE_NS_OPS					\
	.create = cfs_fuse_create,			\
	.mknod = cfs_fuse_mknod,			\
	.mkdir = cfs_fuse_mkdir,			\
	.unlink = cfs_fuse_unlink,			\
	.rmdir = cfs_fuse_rmdir,			\
	.symlink = cfs_fuse_symlink,			\
	.rename = cfs_fuse_rename,			\
	.setattr = cfs_fuse_setattr,			\
	.ioctl = cfs_fuse_ioctl

/* reply.c */
void cfs_fuse_reply_io_err(fuse_req_t req, long err);
void cfs_fuse_offer_init(struct cfs_fuse_offer *o, struct classfs_mount *m, fuse_req_t req,
			 size_t size, off_t off, bool write);
void cfs_fuse_deferred_abort(struct classfs_mount *m);

/* snap.c: computed values as the page cache holds them */
/* a computed value small enough for a snapshot: its reads take one first */
static inline bool cfs_fuse_snapshotted(const struct classfs_stat *cs)
{
	return cs->dynamic && cs->type == CLASSFS_FT_REG && cs->size <= CLASSFS_ATTR_MAX;
}
uint64_t cfs_fuse_snap_ticket(struct classfs_mount *m);
int cfs_fuse_snap_set(struct classfs_mount *m, uint64_t ino, uint64_t ticket, const char *bytes,
		      size_t *len, int err, uint64_t *version);
void cfs_fuse_snap_changed(struct classfs_mount *m, uint64_t ino);
bool cfs_fuse_snap_stale(struct classfs_mount *m, uint64_t ino);
bool cfs_fuse_snap_stat(struct classfs_mount *m, uint64_t ino, size_t *len, uint64_t *version);
ssize_t cfs_fuse_snap_read(struct classfs_mount *m, uint64_t ino, char *buf, size_t size,
			   off_t off, bool *found);
void cfs_fuse_snap_answer(struct classfs_mount *m, fuse_req_t req,
			  const struct classfs_stat *cs, uint64_t ticket, ssize_t r,
			  const char *page);
void cfs_fuse_snap_free(struct classfs_mount *m);

/* notify.c */
extern const struct classfs_watch_ops cfs_fuse_watch_ops;
void *cfs_fuse_notifier_main(void *arg);
void cfs_fuse_poll_ack(struct classfs_mount *m, uint64_t ino);
struct cfs_poller *cfs_fuse_poller_get(struct classfs_mount *m, uint64_t ino, bool create);
void cfs_fuse_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		   struct fuse_pollhandle *ph);
void cfs_fuse_notify_free(struct classfs_mount *m);

/* known.c */
void cfs_fuse_known_get(struct classfs_mount *m, uint64_t ino, bool link);
ssize_t cfs_fuse_known_links(struct classfs_mount *m, uint64_t **out);
void cfs_fuse_known_put(struct classfs_mount *m, uint64_t ino, uint64_t nlookup);
void cfs_fuse_known_look_in(struct classfs_mount *m, uint64_t dir, const char *name);
enum cfs_known_state cfs_fuse_known(struct classfs_mount *m, uint64_t ino, const char *name);
void cfs_fuse_known_free(struct classfs_mount *m);

/* devview.c: the devtmpfs-style view */
struct cfs_devview;
extern const struct fuse_lowlevel_ops cfs_devview_ops;
extern const struct classfs_watch_ops cfs_devview_watch_ops;
struct cfs_devview *cfs_devview_new(struct classfs_tree *tree);
void cfs_devview_free(struct cfs_devview *dv);

/* loop.c */
struct cfs_fuse_loop;
struct cfs_fuse_loop *cfs_fuse_loop_new(struct fuse_session *se);
int cfs_fuse_loop_start(struct cfs_fuse_loop *l);
#define CFS_FUSE_OPCODES 64	/* opcodes counted apart (higher ones count as 0) */
uint64_t cfs_fuse_loop_requests(struct cfs_fuse_loop *l, int op);
int cfs_fuse_loop_stop(struct cfs_fuse_loop *l);
void cfs_fuse_loop_free(struct cfs_fuse_loop *l);

#endif

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * common-ops.c - the requests both mounts (the sysfs view, ops.c, and the
 * devtmpfs-style view, devview-ops.c) answer alike: the connection's
 * options, statfs, hard links (refused), and what the devtmpfs-style
 * view refuses.  Its entries come and go only through the tree, so
 * creating, linking, renaming and removing fail as sysfs makes them fail
 * (EACCES for a new file, EPERM for the others) rather than with FUSE's
 * ENOSYS, which `echo 1 > attr-typo` would print as "Function not
 * implemented".  The sysfs view changes names itself (ns-ops.c).
 */
#include <sys/statvfs.h>

#include "fuse-internal.h"

void cfs_fuse_init(void *data, struct fuse_conn_info *conn)
{
	const struct classfs_mount *m = data;

	/* O_TRUNC arrives as setattr(size 0); no splice, no writeback cache */
	conn->want &= ~(unsigned)(FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_SPLICE_READ |
				  FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE |
				  FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_EXPORT_SUPPORT |
				  FUSE_CAP_EXPLICIT_INVAL_DATA);
	if (m->devview)
		return;
	/*
	 * The sysfs view (ops.c): zero-message opens (its OPEN and OPENDIR
	 * answer ENOSYS); cached pages dropped when a getattr finds another
	 * mtime or size (computed values); link texts cached, invalidated when
	 * an entry moves (notify.c).
	 */
	conn->want |= conn->capable & (FUSE_CAP_AUTO_INVAL_DATA | FUSE_CAP_NO_OPEN_SUPPORT |
				       FUSE_CAP_NO_OPENDIR_SUPPORT | FUSE_CAP_CACHE_SYMLINKS);
}

void cfs_fuse_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = NAME_MAX };

	(void)ino;
	fuse_reply_statfs(req, &sv);
}

void cfs_fuse_refuse_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			    struct fuse_file_info *fi)
{
	fuse_reply_err(req, EACCES);
}

void cfs_fuse_refuse_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
			   dev_t rdev)
{
	fuse_reply_err(req, EPERM);
}

void cfs_fuse_refuse_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, EPERM);
}

void cfs_fuse_refuse_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

void cfs_fuse_refuse_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

void cfs_fuse_refuse_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
			    const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EPERM);
}

void cfs_fuse_refuse_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EPERM);
}

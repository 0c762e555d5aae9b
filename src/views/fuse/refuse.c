// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * refuse.c - what both mounts (the sysfs view, ops.c, and the
 * devtmpfs-style view, devview-ops.c) refuse: entries come and go only
 * through the tree, so creating, linking, renaming and removing fail as
 * sysfs makes them fail (EACCES for a new file, EPERM for the others)
 * rather than with FUSE's ENOSYS, which `echo 1 > attr-typo` would print
 * as "Function not implemented".
 */
#include "fuse-internal.h"

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

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ns-ops.c - the requests that change the sysfs view's names and
 * attributes: create (and mknod of a regular file), mkdir, symlink,
 * unlink, rmdir, rename, setattr (mode, size), and the inode flags
 * ioctls (chattr +i).  The tree decides
 * what may change (src/core/plain.c); the kernel has checked the
 * caller's permissions against the modes and the owner that getattr
 * reports (default_permissions), so a test's uid makes, writes and
 * removes files in the testbed it owns as in a tmpfs of its own.
 *
 * The kernel updates its own entries from these replies (a new entry
 * replaces a cached negative one, a removed or renamed one moves), so a
 * request does not wait for the invalidations its change queued (the
 * tree's sync): the notifier pushes them for the parent directory whose
 * lock the kernel holds until this request is answered, so waiting would
 * stall for the sync's timeout.  The thread marks the mount it serves
 * (cfs_fuse_serving) and notify.c's sync returns at once for it.
 */
#include "fuse-internal.h"

#include <linux/fs.h>
#include <sys/stat.h>

__thread struct classfs_mount *cfs_fuse_serving;

static struct classfs_mount *ns_begin(fuse_req_t req, fuse_ino_t dir, const char *name)
{
	struct classfs_mount *m = fuse_req_userdata(req);

	/* the kernel will cache the name: a later change of it is pushed (known.c) */
	if (name)
		cfs_fuse_known_look_in(m, dir, name);
	cfs_fuse_serving = m;
	return m;
}

static void ns_end(void)
{
	cfs_fuse_serving = NULL;
}

static void reply_made(fuse_req_t req, int r, const struct classfs_stat *cs)
{
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		cfs_fuse_reply_entry(req, cs);
}

void cfs_fuse_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct classfs_mount *m = ns_begin(req, parent, name);
	struct classfs_stat cs;
	int r = classfs_create(m->tree, parent, name, mode & 07777, &cs);

	ns_end();
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	/*
	 * open(O_CREAT) gives a descriptor that writes whatever mode it asked
	 * for (umask 0333 makes a 0444 file written once by its creator):
	 * its writes carry this fh (ops.c), the only per-open state kept
	 */
	fi->fh = cfs_fuse_created_fh(cs.ino);
	fi->keep_cache = 1;
	fi->noflush = 1;
	struct fuse_entry_param e;

	cfs_fuse_entry_param(m, &cs, &e);
	fuse_reply_create(req, &e, fi);
}

/* mknod(2) of a regular file is a create; device nodes and FIFOs are no sysfs entries */
void cfs_fuse_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	struct classfs_mount *m;
	struct classfs_stat cs;
	int r;

	(void)rdev;
	if (!S_ISREG(mode)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	m = ns_begin(req, parent, name);
	r = classfs_create(m->tree, parent, name, mode & 07777, &cs);
	ns_end();
	reply_made(req, r, &cs);
}

void cfs_fuse_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct classfs_mount *m = ns_begin(req, parent, name);
	struct classfs_stat cs;
	int r = classfs_mkdir(m->tree, parent, name, mode & 07777, &cs);

	ns_end();
	reply_made(req, r, &cs);
}

void cfs_fuse_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	struct classfs_mount *m = ns_begin(req, parent, name);
	struct classfs_stat cs;
	int r = classfs_symlink(m->tree, parent, name, link, &cs);

	ns_end();
	reply_made(req, r, &cs);
}

void cfs_fuse_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct classfs_mount *m = ns_begin(req, parent, NULL);
	int r = classfs_unlink(m->tree, parent, name);

	ns_end();
	fuse_reply_err(req, -r);
}

void cfs_fuse_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct classfs_mount *m = ns_begin(req, parent, NULL);
	int r = classfs_rmdir(m->tree, parent, name);

	ns_end();
	fuse_reply_err(req, -r);
}

void cfs_fuse_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct classfs_mount *m;
	int r;

	/* RENAME_NOREPLACE (1) only: RENAME_EXCHANGE and RENAME_WHITEOUT are not kept */
	if (flags & ~1u) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	m = ns_begin(req, newparent, newname);
	r = classfs_rename(m->tree, parent, name, newparent, newname, flags);
	ns_end();
	fuse_reply_err(req, -r);
}

/*
 * chmod of what the filesystem may change (the tree refuses the rest);
 * chown only to the owner it is (nothing else can be kept); truncation:
 * a file made through the filesystem is cut, an attribute is left alone
 * (how `echo x > attr` opens); times are not kept.
 */
void cfs_fuse_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct classfs_mount *m = fuse_req_userdata(req);
	struct classfs_stat cs;
	struct stat st;
	int r = classfs_getattr(m->tree, ino, &cs);

	unsigned int fl;

	(void)fi;
	/* times are not kept, but an immutable file refuses them too (touch) */
	if (r == 0 && (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) &&
	    classfs_get_flags(m->tree, ino, &fl) == 0 && (fl & CLASSFS_FL_IMMUTABLE))
		r = -EPERM;
	if (r == 0 && (((to_set & FUSE_SET_ATTR_UID) && attr->st_uid != m->uid) ||
		       ((to_set & FUSE_SET_ATTR_GID) && attr->st_gid != m->gid)))
		r = -EPERM;
	if (r == 0 && (to_set & FUSE_SET_ATTR_MODE) && (attr->st_mode & 07777) != cs.mode)
		r = classfs_chmod(m->tree, ino, attr->st_mode & 07777, &cs);
	if (r == 0 && (to_set & FUSE_SET_ATTR_SIZE))
		r = classfs_truncate(m->tree, ino, attr->st_size, &cs);
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	cfs_fuse_fill_stat(m, &cs, &st);
	fuse_reply_attr(req, &st, cfs_fuse_attr_timeout(&cs));
}

/* reply to a flags ioctl: @r (a classfs error) or, 0, @out of @size bytes */
static void flags_reply(fuse_req_t req, int r, const void *out, size_t size)
{
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_ioctl(req, 0, out, size);
}

/* may the caller of @req change inode flags?  The tree's owner or root */
static int flags_may_set(fuse_req_t req, const struct classfs_mount *m)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	return ctx->uid == 0 || ctx->uid == m->uid ? 0 : -EPERM;
}

/*
 * The inode flags, as lsattr and chattr read and set them.  The kernel
 * sends them through its fileattr path, having checked that the caller
 * owns the inode (or is root) and, to change the immutable flag, has
 * CAP_LINUX_IMMUTABLE: FS_IOC_GETFLAGS and FS_IOC_SETFLAGS with a 4-byte
 * int, and FS_IOC_FSGETXATTR (struct fsxattr) for the flags a set
 * changes from.  Only the immutable flag (on stored values) and the
 * append-only flag (on files made through the filesystem) are kept
 * (classfs_set_flags()); changing flags is the tree owner's or root's.
 * Any other ioctl is no file's here: ENOTTY at once (Python's open()
 * asks TCGETS of every file it opens).
 */
void cfs_fuse_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		    struct fuse_file_info *fi, unsigned int flags, const void *in_buf,
		    size_t in_bufsz, size_t out_bufsz)
{
	struct classfs_mount *m = fuse_req_userdata(req);
	struct fsxattr fx;
	unsigned int fl;
	int v, r;

	(void)arg;
	(void)fi;
	if (flags & FUSE_IOCTL_COMPAT) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	switch (cmd) {
	case (unsigned int)FS_IOC_GETFLAGS:
	case (unsigned int)FS_IOC32_GETFLAGS:
		r = out_bufsz < sizeof(v) ? -EINVAL : classfs_get_flags(m->tree, ino, &fl);
		v = r < 0 ? 0 : (int)fl;
		flags_reply(req, r, &v, sizeof(v));
		return;
	case (unsigned int)FS_IOC_SETFLAGS:
	case (unsigned int)FS_IOC32_SETFLAGS:
		r = in_bufsz < sizeof(v) || !in_buf ? -EINVAL : flags_may_set(req, m);
		if (r == 0) {
			memcpy(&v, in_buf, sizeof(v));
			r = classfs_set_flags(m->tree, ino, (unsigned int)v);
		}
		flags_reply(req, r, NULL, 0);
		return;
	case (unsigned int)FS_IOC_FSGETXATTR:
		r = out_bufsz < sizeof(fx) ? -EINVAL : classfs_get_flags(m->tree, ino, &fl);
		memset(&fx, 0, sizeof(fx));
		if (r == 0 && (fl & CLASSFS_FL_IMMUTABLE))
			fx.fsx_xflags |= FS_XFLAG_IMMUTABLE;
		if (r == 0 && (fl & CLASSFS_FL_APPEND))
			fx.fsx_xflags |= FS_XFLAG_APPEND;
		flags_reply(req, r, &fx, sizeof(fx));
		return;
	case (unsigned int)FS_IOC_FSSETXATTR:
		r = in_bufsz < sizeof(fx) || !in_buf ? -EINVAL : flags_may_set(req, m);
		if (r == 0) {
			memcpy(&fx, in_buf, sizeof(fx));
			if ((fx.fsx_xflags & ~(unsigned int)(FS_XFLAG_IMMUTABLE | FS_XFLAG_APPEND)) ||
			    fx.fsx_extsize || fx.fsx_projid || fx.fsx_cowextsize)
				r = -EOPNOTSUPP;
			else
				r = classfs_set_flags(m->tree, ino,
						      ((fx.fsx_xflags & FS_XFLAG_IMMUTABLE)
							       ? CLASSFS_FL_IMMUTABLE : 0) |
						      ((fx.fsx_xflags & FS_XFLAG_APPEND)
							       ? CLASSFS_FL_APPEND : 0));
		}
		flags_reply(req, r, NULL, 0);
		return;
	}
	fuse_reply_err(req, ENOTTY);
}

/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fs.h - the tree as a filesystem, by inode number: what the core offers
 * the library's views (the FUSE view serves it; the record view reads
 * attributes through it) and what the path API of <classfs/classfs.h>
 * resolves to.
 *
 * The in-library interface (src/include/classfs-internal/): on the
 * layers' include path only, never installed, and not exported from
 * libclassfs.so (no CLASSFS_PUBLIC: the project builds with
 * -fvisibility=hidden).  Programs and the Python extension use the
 * public headers; the project's own tests, fuzzers and benchmarks that
 * call these link the layers' static libraries (classfs_internal_dep).
 */
#ifndef CLASSFS_INTERNAL_FS_H
#define CLASSFS_INTERNAL_FS_H

#include "classfs/classfs.h"

/*
 * Every entry of the tree has an inode number (struct classfs_stat's
 * @ino): the node's id, the node's generation and a slot (0 for the node
 * itself, else one of the entries computed from it: `dev`, `uevent`,
 * default attributes, links).  A stale number (its node gone) answers
 * -ENOENT.
 */
#define CLASSFS_ROOT_INO	((uint64_t)1)	/* every tree's root */

/** classfs_root_ino() - %CLASSFS_ROOT_INO, the inode number of every tree's root */
uint64_t classfs_root_ino(void);
/** classfs_getattr() - stat an entry; 0, -EINVAL (NULL), -ENOENT (gone) */
int classfs_getattr(struct classfs_tree *tree, uint64_t ino, struct classfs_stat *st);
/** classfs_lookup() - the entry @name in directory @dir; 0, -EINVAL, -ENOENT, -ENOTDIR */
int classfs_lookup(struct classfs_tree *tree, uint64_t dir, const char *name,
		   struct classfs_stat *st);
/**
 * classfs_read() - read an entry: an attribute's whole value from @off
 * Return: bytes, or -errno: -EINVAL (NULL, negative @off, a link),
 * -ENOENT (no such entry), -ENODEV once removed, -EACCES when not
 * readable, -EISDIR, -EBUSY (attribute callbacks nested more than 16 deep
 * on this thread), -ENOMEM, -EIO (the attribute has no show() or
 * read()), the show()'s error.
 */
ssize_t classfs_read(struct classfs_tree *tree, uint64_t ino, char *buf, size_t size, off_t off);
/**
 * classfs_write() - one store() with the whole buffer (-E2BIG over
 * CLASSFS_ATTR_MAX); binary attributes take @off.
 * Return: bytes consumed or -errno: -EACCES when not writable, -EPERM
 * (an immutable file: classfs_set_flags()), -E2BIG,
 * -EFBIG (a binary write past 2 GiB - 1), -EIO (the attribute has no
 * store() or write()), the store()'s error, or any of classfs_read()'s
 * other errors.
 */
ssize_t classfs_write(struct classfs_tree *tree, uint64_t ino, const char *buf, size_t size,
		      off_t off);
/**
 * classfs_readlink() - a link's relative target
 * Return: length, -EINVAL (NULL, or not a link), -ENOENT (gone, or a link
 * to a removed device), -ERANGE (@size too small).
 */
ssize_t classfs_readlink(struct classfs_tree *tree, uint64_t ino, char *buf, size_t size);
/**
 * classfs_readdir() - list a directory from @off (0 = start)
 * @fill: called per entry with the offset to resume after it, no library
 *        lock held; a non-zero return stops the listing (entry not consumed).
 * Offsets stay valid while the directory changes: an entry present for
 * the whole listing is seen exactly once.  "." and ".." are not listed.
 * Return: 0 (also when @fill stopped it), -EINVAL, -ENOENT, -ENOTDIR, -ENOMEM.
 */
int classfs_readdir(struct classfs_tree *tree, uint64_t dir, uint64_t off,
		    int (*fill)(void *ctx, const char *name, const struct classfs_stat *st,
				uint64_t next_off),
		    void *ctx);

/*
 * Answers given later (see struct classfs_reply in <classfs/classfs.h>):
 * a reader that can wait for its answer without holding a thread (the
 * FUSE view) passes an offer, which a device attribute's show()/store()
 * takes with classfs_defer().
 */

/**
 * struct classfs_reply_offer - a caller's readiness to be answered later
 * @take: the reply the callback will complete, or NULL (it cannot be
 *        answered later, e.g. out of memory: the callback answers at once)
 */
struct classfs_reply_offer {
	struct classfs_reply *(*take)(struct classfs_reply_offer *offer);
};

/**
 * classfs_read_offer() - classfs_read(), but a device text attribute's
 * show() may answer later through @offer
 * Return: as classfs_read(), or -CLASSFS_DEFERRED: the show() took the
 * offer and the answer (the whole value, not cut to @off and @size)
 * comes through the reply.
 */
ssize_t classfs_read_offer(struct classfs_tree *tree, uint64_t ino, char *buf, size_t size,
			   off_t off, struct classfs_reply_offer *offer);
/**
 * classfs_write_offer() - classfs_write(), but a device text attribute's
 * store() may answer later through @offer.
 * Return: as classfs_write(), or -CLASSFS_DEFERRED (see classfs_read_offer()).
 */
ssize_t classfs_write_offer(struct classfs_tree *tree, uint64_t ino, const char *buf,
			    size_t size, off_t off, struct classfs_reply_offer *offer);
/**
 * classfs_write_created() - classfs_write() through the descriptor whose
 * open(O_CREAT) made file @ino (classfs_create()): as open(2) gives it,
 * the file's mode does not refuse the write (a file made 0444 is written
 * by its creator); its other rules stay.
 */
ssize_t classfs_write_created(struct classfs_tree *tree, uint64_t ino, const char *buf,
			      size_t size, off_t off);

/*
 * Changing the tree as a filesystem (what the mounted tree does for
 * open(O_CREAT), mkdir, symlink, unlink, rmdir, rename, chmod and
 * truncate; the kernel checks the caller's permissions before).  Files
 * made so are stored values that hold what is written at any offset and
 * report their length; directories and symlinks are plain ones.  A
 * device's code attributes and directory, and the directories the tree
 * makes, are not changed this way.  Each function's comment in
 * src/core/plain.c and plain-rename.c gives its errors.
 * classfs_tree_remove_plain() (public) removes all of it again.
 */
/** classfs_create() - make an empty file @name (mode @mode) in directory @dir; 0 or -errno */
int classfs_create(struct classfs_tree *tree, uint64_t dir, const char *name, mode_t mode,
		   struct classfs_stat *st);
/** classfs_mkdir() - make an empty directory @name in directory @dir; 0 or -errno */
int classfs_mkdir(struct classfs_tree *tree, uint64_t dir, const char *name, mode_t mode,
		  struct classfs_stat *st);
/** classfs_symlink() - make a symlink @name with text @target in directory @dir; 0 or -errno */
int classfs_symlink(struct classfs_tree *tree, uint64_t dir, const char *name,
		    const char *target, struct classfs_stat *st);
/**
 * classfs_unlink() - remove a stored value or link @name of directory
 * @dir; a device's computed entry (`dev`, `subsystem`, `device`,
 * class/CLASS/NAME, block/NAME, dev/TYPE/M:m, an attribute of its class's
 * or type's groups) is hidden for that device until it goes; with its
 * class/CLASS/NAME it leaves the class's name index, so that another
 * device of that class may take the name.  0 or -errno (-EPERM:
 * `uevent`, links and directories the tree makes, an immutable file).
 */
int classfs_unlink(struct classfs_tree *tree, uint64_t dir, const char *name);
/** classfs_rmdir() - remove empty plain directory @name of @dir; 0, -ENOTEMPTY, -EBUSY (a device's), -EPERM, ... */
int classfs_rmdir(struct classfs_tree *tree, uint64_t dir, const char *name);
/**
 * classfs_rename() - move entry @name of @dir to @newname in @newdir,
 * replacing what was there (@flags 1: RENAME_NOREPLACE); 0 or -errno
 */
int classfs_rename(struct classfs_tree *tree, uint64_t dir, const char *name, uint64_t newdir,
		   const char *newname, unsigned int flags);
/** classfs_chmod() - set the mode of a stored value, plain directory or link; 0 or -errno */
int classfs_chmod(struct classfs_tree *tree, uint64_t ino, mode_t mode, struct classfs_stat *st);
/**
 * classfs_truncate() - set the length of a file made through the
 * filesystem; other writable files are left alone (sysfs's O_TRUNC).
 * 0 or -errno
 */
int classfs_truncate(struct classfs_tree *tree, uint64_t ino, off_t size, struct classfs_stat *st);

/* the inode flags kept (FS_IOC_GETFLAGS/SETFLAGS, chattr and lsattr): Linux's values */
#define CLASSFS_FL_IMMUTABLE 0x00000010u	/* FS_IMMUTABLE_FL */
#define CLASSFS_FL_APPEND 0x00000020u		/* FS_APPEND_FL */
/**
 * classfs_get_flags() - the inode flags of entry @ino (CLASSFS_FL_*) in
 * *@flags; 0 or -errno
 */
int classfs_get_flags(struct classfs_tree *tree, uint64_t ino, unsigned int *flags);
/**
 * classfs_set_flags() - set the inode flags of a stored value @ino:
 * CLASSFS_FL_IMMUTABLE, CLASSFS_FL_APPEND (a file made through the
 * filesystem), or none.  An immutable entry is not written, truncated,
 * chmod-ed, removed nor renamed (-EPERM) through the filesystem calls,
 * whoever asks; an append-only one is written at its end only.  0,
 * -EOPNOTSUPP (another flag, or a flag on an entry that cannot have it),
 * -ENOENT, -EINVAL
 */
int classfs_set_flags(struct classfs_tree *tree, uint64_t ino, unsigned int flags);

#endif

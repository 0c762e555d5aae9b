// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops.c - the FUSE requests: inode numbers are the tree's own (root 1;
 * generation in the number), so no node table is kept here; only the
 * directories the kernel holds are counted (known.c: lookup adds, forget()
 * takes back).  Lookups and attributes are cached by the kernel for a day
 * (notify.c pushes invalidations); negative entries too.
 *
 * What a read of a stored value costs is what the kernel asks: nothing,
 * once cached.  Opens are zero-message (FUSE_CAP_NO_OPEN_SUPPORT: OPEN
 * and OPENDIR answer ENOSYS once, and the kernel opens every file of the
 * connection itself, with the page cache kept, and sends no RELEASE),
 * FLUSH answers ENOSYS once (the kernel then sends none), so an
 * open+read+close of a cached value never reaches this process.  The
 * kernel tells files apart by their attributes instead:
 *  - a stored value (the tree keeps its bytes: loaded, set, written, made
 *    through the filesystem; `dev`) reports its length and is cached, its
 *    pages and attributes, until the tree replaces it: notify.c then
 *    invalidates the inode before the change's call returns, so before
 *    any uevent that announces it;
 *  - a computed one (a show(), a remote publisher's, `uevent`) has
 *    attributes valid for no time: the kernel (auto_inval_data) asks them
 *    before each read, and that getattr runs show() and answers the
 *    value's length and version (snap.c); the kernel drops its cached
 *    pages when the version moved, and its READ gets those same bytes.
 *    Every read(2) reaches show(), so no reader gets a stale page (of a
 *    value changed by a store() or notified: snap.c says why others may).
 * No per-open state is kept: poll's "notified since read" is the inode's
 * (notify.c), and a file made through the filesystem is written by its
 * creator through the descriptor the create answered (its fh names it).
 */
#include "fuse-internal.h"

#include <sys/stat.h>

#define MAX_READ (128 * 1024)
#define CREATED_FH 0x43465343524541ull	/* "CFSCREA": an fh a create answered */

__thread struct classfs_mount *cfs_fuse_writing_mount;
__thread uint64_t cfs_fuse_writing_ino;

static struct classfs_mount *m_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/*
 * Entries belong to the tree's owner, the uid and gid that serve it (in
 * a testbed, its user; root for a daemon run as root): the kernel checks
 * the mode bits against them (default_permissions), so the owner may
 * write a 0644 attribute and make entries in a 0755 directory, as in a
 * tmpfs of its own, and other uids may not.
 */
void cfs_fuse_fill_stat(struct classfs_mount *m, const struct classfs_stat *cs, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = cs->ino;
	st->st_uid = m->uid;
	st->st_gid = m->gid;
	st->st_mode = cs->mode & 07777;
	switch (cs->type) {
	case CLASSFS_FT_DIR:
		st->st_mode |= S_IFDIR;
		st->st_nlink = 2;
		break;
	case CLASSFS_FT_LNK:
		st->st_mode |= S_IFLNK;
		st->st_nlink = 1;
		break;
	default:
		st->st_mode |= S_IFREG;
		st->st_nlink = 1;
		st->st_size = cs->size;
	}
	st->st_blksize = 4096;
	st->st_atime = st->st_mtime = st->st_ctime = m->mtime;
	if (cfs_fuse_snapshotted(cs)) {
		/* the snapshot the reads take (snap.c): its length and version */
		size_t len;
		uint64_t version;

		if (cfs_fuse_snap_stat(m, cs->ino, &len, &version)) {
			st->st_size = (off_t)len;
			st->st_mtim.tv_nsec = st->st_ctim.tv_nsec = (long)version;
		}
	} else if (cs->dynamic) {
		/*
		 * A computed file of a known size (a large binary attribute): a
		 * new mtime each time, the kernel drops the pages it cached
		 * (auto_inval_data), every read reaches read()
		 */
		st->st_mtim.tv_nsec = st->st_ctim.tv_nsec = (long)cfs_fuse_new_mtime_ns(m);
	}
	if (cs->type == CLASSFS_FT_DIR) {
		/* moves with every change: the kernel then drops a cached listing */
		long ns = (long)(__atomic_load_n(&m->changes, __ATOMIC_RELAXED) % 1000000000);

		st->st_mtim.tv_nsec = st->st_ctim.tv_nsec = ns;
	}
}

/**
 * cfs_fuse_new_mtime_ns() - nanoseconds for an mtime no file of @m showed
 * lately (1 .. 999,999,999): the kernel drops a file's cached pages when
 * its mtime moves (auto_inval_data)
 */
uint64_t cfs_fuse_new_mtime_ns(struct classfs_mount *m)
{
	return __atomic_add_fetch(&m->stamp, 1, __ATOMIC_RELAXED) % 999999999 + 1;
}

/*
 * how long the kernel may keep @cs's attributes: a day, pushed
 * invalidation, except for a computed value, whose attributes are asked
 * before each read
 */
double cfs_fuse_attr_timeout(const struct classfs_stat *cs)
{
	return cs->dynamic ? 0.0 : CFS_FUSE_TIMEOUT;
}

/* the fh a create answers for file @ino: its writes are its creator's */
uint64_t cfs_fuse_created_fh(uint64_t ino)
{
	return ino ^ CREATED_FH;
}

/*
 * @e: entry @cs as a lookup or create of @m answers it (a directory or
 * link counted as held: known.c)
 */
void cfs_fuse_entry_param(struct classfs_mount *m, const struct classfs_stat *cs,
			  struct fuse_entry_param *e)
{
	*e = (struct fuse_entry_param){
		.ino = cs->ino,
		.generation = cs->generation,
		.attr_timeout = cfs_fuse_attr_timeout(cs),
		.entry_timeout = CFS_FUSE_TIMEOUT,
	};
	/* before the reply: changes below it (or of a link's text) from now on are pushed */
	if (cs->type == CLASSFS_FT_DIR || cs->type == CLASSFS_FT_LNK)
		cfs_fuse_known_get(m, cs->ino, cs->type == CLASSFS_FT_LNK);
	cfs_fuse_fill_stat(m, cs, &e->attr);
}

/* answer @req with entry @cs */
void cfs_fuse_reply_entry(fuse_req_t req, const struct classfs_stat *cs)
{
	struct fuse_entry_param e;

	cfs_fuse_entry_param(m_of(req), cs, &e);
	fuse_reply_entry(req, &e);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct classfs_stat cs;
	int r;

	/* before reading the tree: a change it does not see is pushed by name */
	cfs_fuse_known_look_in(m_of(req), parent, name);
	r = classfs_lookup(m_of(req)->tree, parent, name, &cs);
	if (r == -ENOENT) {
		/* a negative entry, cached too: additions are pushed */
		struct fuse_entry_param e = { .ino = 0, .entry_timeout = CFS_FUSE_TIMEOUT };

		fuse_reply_entry(req, &e);
		return;
	}
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	cfs_fuse_reply_entry(req, &cs);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	cfs_fuse_known_put(m_of(req), ino, nlookup);
	fuse_reply_none(req);
}

/*
 * A getattr with an open file's handle comes before each read (computed
 * values' attributes are valid for no time): a computed value's is
 * answered with its snapshot, taken now (snap.c), as is a plain one
 * (an open's permission check) while the snapshot kept is of the value
 * before a change.  For an entry gone meanwhile, that read fails ENODEV,
 * as sysfs's.
 */
static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	struct classfs_stat cs;
	struct stat st;
	int r = classfs_getattr(m->tree, ino, &cs);

	if (r < 0) {
		fuse_reply_err(req, fi && r == -ENOENT ? ENODEV : -r);
		return;
	}
	if (cfs_fuse_snapshotted(&cs) && (fi || cfs_fuse_snap_stale(m, ino))) {
		char page[CLASSFS_ATTR_MAX];
		struct cfs_fuse_offer o;
		ssize_t n;

		/* show() runs for a read: a notification is acknowledged, as in sysfs */
		if (fi)
			cfs_fuse_poll_ack(m, ino);
		/* a remote show() answers from reply.c, holding no thread meanwhile */
		cfs_fuse_offer_init(&o, m, req, sizeof(page), 0, false);
		o.snap = &cs;
		o.ticket = cfs_fuse_snap_ticket(m);	/* before show() reads anything */
		n = classfs_read_offer(m->tree, ino, page, sizeof(page), 0, &o.offer);
		if (n != -CLASSFS_DEFERRED)
			cfs_fuse_snap_answer(m, req, &cs, o.ticket, n, page);
		return;
	}
	cfs_fuse_fill_stat(m_of(req), &cs, &st);
	fuse_reply_attr(req, &st, cfs_fuse_attr_timeout(&cs));
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	char buf[PATH_MAX];
	ssize_t r = classfs_readlink(m_of(req)->tree, ino, buf, sizeof(buf));

	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_readlink(req, buf);
}

/*
 * Zero-message opens: ENOSYS tells the kernel to open every file of the
 * connection itself from now on (FUSE_CAP_NO_OPEN_SUPPORT), keeping its
 * page cache, with no RELEASE.  What an OPEN checked, the write checks:
 * sysfs refuses a write to a file without write bits even to root, the
 * tree does too (-EACCES), and an immutable file's (-EPERM).
 */
static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, ENOSYS);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	char stack[4096], *buf = stack;
	struct cfs_fuse_offer o;
	bool found;
	ssize_t r;

	(void)fi;
	if (size > MAX_READ)
		size = MAX_READ;
	if (size > sizeof(stack) && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* re-reading from the start acknowledges a notification (notify.c) */
	if (off == 0)
		cfs_fuse_poll_ack(m, ino);
	/* a computed value's snapshot, taken by the getattr before this read (snap.c) */
	r = cfs_fuse_snap_read(m, ino, buf, size, off, &found);
	if (!found) {
		/* a remote show() answers from reply.c, holding no thread meanwhile */
		cfs_fuse_offer_init(&o, m, req, size, off, false);
		r = classfs_read_offer(m->tree, ino, buf, size, off, &o.offer);
	}
	if (r == -CLASSFS_DEFERRED)
		;
	else if (r < 0)
		cfs_fuse_reply_io_err(req, r);
	else
		fuse_reply_buf(req, buf, (size_t)r);
	if (buf != stack)
		free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	struct cfs_fuse_offer o;
	ssize_t r;

	/* the kernel holds this file's pages locked until the answer (notify.c) */
	cfs_fuse_writing_mount = m;
	cfs_fuse_writing_ino = ino;
	if (fi->fh && fi->fh == cfs_fuse_created_fh(ino)) {
		r = classfs_write_created(m->tree, ino, buf, size, off);
	} else {
		cfs_fuse_offer_init(&o, m, req, size, off, true);
		r = classfs_write_offer(m->tree, ino, buf, size, off, &o.offer);
	}
	cfs_fuse_writing_mount = NULL;
	if (r == -CLASSFS_DEFERRED)
		;
	else if (r < 0)
		cfs_fuse_reply_io_err(req, r);
	else
		fuse_reply_write(req, (size_t)r);
}

struct dirbuf {
	fuse_req_t req;
	char *buf;
	size_t size, used;
};

static int dir_fill(void *ctx, const char *name, const struct classfs_stat *cs, uint64_t next)
{
	struct dirbuf *d = ctx;
	struct stat st = { .st_ino = cs->ino };
	size_t need;

	st.st_mode = cs->type == CLASSFS_FT_DIR ? S_IFDIR : cs->type == CLASSFS_FT_LNK ? S_IFLNK
										     : S_IFREG;
	/* our offsets start at 0; FUSE's 0 and 1 are "." and ".." */
	need = fuse_add_direntry(d->req, d->buf + d->used, d->size - d->used, name, &st,
				 (off_t)(next + 2));
	if (need > d->size - d->used)
		return 1;
	d->used += need;
	return 0;
}

/*
 * Zero-message opendir, as open: the kernel then opens each directory
 * itself with its listing cached (FOPEN_CACHE_DIR, FOPEN_KEEP_CACHE)
 * until the notifier drops it.
 */
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	(void)fi;
	fuse_reply_err(req, ENOSYS);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dirbuf d = { .req = req, .size = size };
	struct stat st = { .st_mode = S_IFDIR };
	int r = 0;

	(void)fi;
	d.buf = malloc(size);
	if (!d.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off == 0) {
		st.st_ino = ino;
		d.used += fuse_add_direntry(req, d.buf, size, ".", &st, 1);
		off = 1;
	}
	if (off == 1) {
		size_t need = fuse_add_direntry(req, d.buf + d.used, size - d.used, "..", &st, 2);

		if (need <= size - d.used) {
			d.used += need;
			off = 2;
		}
	}
	if (off >= 2)
		r = classfs_readdir(m_of(req)->tree, ino, (uint64_t)off - 2, dir_fill, &d);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

const struct fuse_lowlevel_ops cfs_fuse_ops = {
	CFS_FUSE_COMMON_OPS,
	CFS_FUSE_NS_OPS,
	.lookup = op_lookup,
	.forget = op_forget,
	.getattr = op_getattr,
	.readlink = op_readlink,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.poll = cfs_fuse_poll,
};

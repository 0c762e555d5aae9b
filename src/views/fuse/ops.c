// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ops.c - the FUSE requests: inode numbers are the tree's own (root 1;
 * generation in the number), so no node table is kept here; only the
 * directories the kernel holds are counted (known.c: lookup adds, forget()
 * takes back).  Lookups and attributes are cached by the kernel for a day
 * (notify.c pushes invalidations); negative entries too.
 *
 * Attributes computed on every read use direct_io (the whole value in one
 * read, never a stale page); `dev` files never change for an inode and use
 * the page cache (keep_cache).  No FLUSH (noflush): a close costs one
 * asynchronous RELEASE.
 */
#include "fuse-internal.h"

#include <sys/stat.h>

#define MAX_READ (128 * 1024)
#define MAX_SPARE 64		/* released open files kept for the next opens */

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
	if (cs->type == CLASSFS_FT_DIR) {
		/* moves with every change: the kernel then drops a cached listing */
		long ns = (long)(__atomic_load_n(&m->changes, __ATOMIC_RELAXED) % 1000000000);

		st->st_mtim.tv_nsec = st->st_ctim.tv_nsec = ns;
	}
}

/* answer @req with entry @cs (its directory counted as held: known.c) */
void cfs_fuse_reply_entry(fuse_req_t req, const struct classfs_stat *cs)
{
	struct fuse_entry_param e = {
		.ino = cs->ino,
		.generation = cs->generation,
		.attr_timeout = CFS_FUSE_TIMEOUT,
		.entry_timeout = CFS_FUSE_TIMEOUT,
	};

	/* before the reply: changes below it from now on are pushed */
	if (cs->type == CLASSFS_FT_DIR)
		cfs_fuse_known_get(m_of(req), cs->ino);
	cfs_fuse_fill_stat(m_of(req), cs, &e.attr);
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

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct classfs_stat cs;
	struct stat st;
	int r = classfs_getattr(m_of(req)->tree, ino, &cs);

	(void)fi;
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	cfs_fuse_fill_stat(m_of(req), &cs, &st);
	fuse_reply_attr(req, &st, CFS_FUSE_TIMEOUT);
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

/**
 * cfs_fuse_open_file() - make @fi the open file of entry @cs (a regular
 * file): its poll state, its caching
 * Return: 0 or -ENOMEM.
 */
int cfs_fuse_open_file(struct classfs_mount *m, const struct classfs_stat *cs,
		       struct fuse_file_info *fi)
{
	struct cfs_open_file *of;
	struct cfs_poller *p;

	pthread_mutex_lock(&m->plock);
	/* one allocation less per open+read+close: a released one */
	of = m->spare;
	if (of) {
		m->spare = of->next;
		m->nspare--;
	} else if (!(of = malloc(sizeof(*of)))) {
		pthread_mutex_unlock(&m->plock);
		return -ENOMEM;
	}
	p = cfs_fuse_poller_get(m, cs->ino, false);
	*of = (struct cfs_open_file){ .seen = p ? p->events : 0, .next = m->files,
				      .mode_at_release = -1 };
	if (of->next)
		of->next->prev = of;
	m->files = of;
	pthread_mutex_unlock(&m->plock);
	fi->fh = (uintptr_t)of;
	if (cs->dynamic)
		fi->direct_io = 1;
	else
		fi->keep_cache = 1;
	fi->noflush = 1;
	return 0;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	struct classfs_stat cs;
	int acc = fi->flags & O_ACCMODE;
	int r = classfs_getattr(m->tree, ino, &cs);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if (cs.type == CLASSFS_FT_DIR) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	unsigned int fl;

	/*
	 * An immutable file (chattr +i) is written by no one, root neither,
	 * an append-only one (chattr +a) only with O_APPEND: EPERM first
	 */
	if ((acc != O_RDONLY || (fi->flags & O_TRUNC)) &&
	    classfs_get_flags(m->tree, ino, &fl) == 0 &&
	    ((fl & CLASSFS_FL_IMMUTABLE) ||
	     ((fl & CLASSFS_FL_APPEND) && (!(fi->flags & O_APPEND) || (fi->flags & O_TRUNC))))) {
		fuse_reply_err(req, EPERM);
		return;
	}
	/* sysfs enforces the mode bits even for root */
	if ((acc != O_WRONLY && !(cs.mode & 0444)) || (acc != O_RDONLY && !(cs.mode & 0222))) {
		fuse_reply_err(req, EACCES);
		return;
	}
	r = cfs_fuse_open_file(m, &cs, fi);
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		fuse_reply_open(req, fi);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	struct cfs_open_file *of = (void *)(uintptr_t)fi->fh;

	if (of->mode_at_release >= 0)
		(void)classfs_chmod(m->tree, ino, (mode_t)of->mode_at_release, NULL);
	pthread_mutex_lock(&m->plock);
	if (of->prev)
		of->prev->next = of->next;
	else
		m->files = of->next;
	if (of->next)
		of->next->prev = of->prev;
	if (m->nspare < MAX_SPARE) {
		of->next = m->spare;
		m->spare = of;
		m->nspare++;
		of = NULL;
	}
	pthread_mutex_unlock(&m->plock);
	free(of);
	fuse_reply_err(req, 0);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	struct cfs_open_file *of = (void *)(uintptr_t)fi->fh;
	char stack[4096], *buf = stack;
	struct cfs_fuse_offer o;
	ssize_t r;

	if (size > MAX_READ)
		size = MAX_READ;
	if (size > sizeof(stack) && !(buf = malloc(size))) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off == 0 && of) {
		/* re-reading from the start acknowledges a notification */
		pthread_mutex_lock(&m->plock);
		struct cfs_poller *p = cfs_fuse_poller_get(m, ino, false);

		if (p)
			of->seen = p->events;
		pthread_mutex_unlock(&m->plock);
	}
	/* a remote show() answers from reply.c, holding no thread meanwhile */
	cfs_fuse_offer_init(&o, m, req, size, off, false);
	r = classfs_read_offer(m->tree, ino, buf, size, off, &o.offer);
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
	struct cfs_fuse_offer o;
	ssize_t r;

	(void)fi;
	cfs_fuse_offer_init(&o, m_of(req), req, size, off, true);
	r = classfs_write_offer(m_of(req)->tree, ino, buf, size, off, &o.offer);
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

/* listings are cached by the kernel until the notifier drops them */
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
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
	.release = op_release,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.poll = cfs_fuse_poll,
};

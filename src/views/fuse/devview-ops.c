// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * devview-ops.c - the FUSE requests of the devtmpfs-style view: every one
 * looks at the table as the tree is now (devview.c rebuilds it after a
 * change), under the view's lock, and answers from a copy of what it
 * needs.  Open files and directories keep what they had at open: a
 * listing's offsets stay valid while devices come and go.  Nothing is
 * writable.
 */
#include "devview.h"

#include <sys/stat.h>


static struct cfs_devview *dv_of(fuse_req_t req)
{
	return ((struct classfs_mount *)fuse_req_userdata(req))->devview;
}

static void fill_stat(const struct cfs_devview *dv, const struct dv_entry *e, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = e->ino;
	st->st_mode = e->mode;
	st->st_nlink = S_ISDIR(e->mode) ? 2 : 1;
	st->st_uid = e->uid;
	st->st_gid = e->gid;
	st->st_rdev = e->rdev;
	st->st_blksize = 4096;
	if (S_ISREG(e->mode))
		st->st_size = (off_t)e->len;
	else if (S_ISLNK(e->mode))
		st->st_size = (off_t)strlen(e->target);
	st->st_atime = st->st_mtime = st->st_ctime = dv->mtime;
}

static void dv_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct cfs_devview *dv = dv_of(req);
	struct fuse_entry_param ep = { 0 };
	struct dv_table *t;
	struct dv_entry *p, *e = NULL;
	char path[PATH_MAX];

	pthread_mutex_lock(&dv->lock);
	t = cfs_devview_current(dv);
	p = t ? cfs_devview_by_ino(t, parent) : NULL;
	if (p && S_ISDIR(p->mode) &&
	    snprintf(path, sizeof(path), "%s%s%s", p->path, *p->path ? "/" : "", name) <
		    (int)sizeof(path))
		e = cfs_devview_by_path(t, path);
	if (e) {
		ep.ino = e->ino;
		fill_stat(dv, e, &ep.attr);
		/* devices come and go without an invalidation: only fixed entries are cached */
		ep.attr_timeout = ep.entry_timeout = e->fixed ? FIXED_TIMEOUT : 0;
	}
	pthread_mutex_unlock(&dv->lock);
	if (!t)
		fuse_reply_err(req, ENOMEM);
	else if (!p)
		fuse_reply_err(req, ESTALE);
	else if (!e)
		fuse_reply_err(req, ENOENT);	/* a negative entry, never cached */
	else
		fuse_reply_entry(req, &ep);
}

static void dv_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)ino;
	(void)nlookup;
	fuse_reply_none(req);
}

static void dv_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cfs_devview *dv = dv_of(req);
	struct dv_table *t;
	struct dv_entry *e = NULL;
	struct stat st;
	double timeout = 0;

	(void)fi;
	pthread_mutex_lock(&dv->lock);
	t = cfs_devview_current(dv);
	if (t && (e = cfs_devview_by_ino(t, ino))) {
		fill_stat(dv, e, &st);
		timeout = e->fixed ? FIXED_TIMEOUT : 0;
	}
	pthread_mutex_unlock(&dv->lock);
	if (!e)
		fuse_reply_err(req, t ? ENOENT : ENOMEM);
	else
		fuse_reply_attr(req, &st, timeout);
}

static void dv_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct cfs_devview *dv = dv_of(req);
	char buf[PATH_MAX] = "";
	struct dv_table *t;
	struct dv_entry *e;
	int err = 0;

	pthread_mutex_lock(&dv->lock);
	t = cfs_devview_current(dv);
	e = t ? cfs_devview_by_ino(t, ino) : NULL;
	if (!e)
		err = t ? ENOENT : ENOMEM;
	else if (!S_ISLNK(e->mode))
		err = EINVAL;
	else
		snprintf(buf, sizeof(buf), "%s", e->target);
	pthread_mutex_unlock(&dv->lock);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_readlink(req, buf);
}

/* an open regular file (a node recorded with contents) reads the bytes it had at open */
struct dv_file {
	size_t len;
	unsigned char data[];
};

static void dv_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cfs_devview *dv = dv_of(req);
	struct dv_file *f = NULL;
	struct dv_table *t;
	struct dv_entry *e;
	int err = 0;

	pthread_mutex_lock(&dv->lock);
	t = cfs_devview_current(dv);
	e = t ? cfs_devview_by_ino(t, ino) : NULL;
	if (!e)
		err = t ? ENOENT : ENOMEM;
	else if (S_ISDIR(e->mode))
		err = EISDIR;
	else if (!S_ISREG(e->mode))
		err = EACCES;	/* special files are the kernel's to refuse (nodev) */
	else if ((fi->flags & O_ACCMODE) != O_RDONLY)
		err = EACCES;
	else if (!(f = malloc(sizeof(*f) + e->len)))
		err = ENOMEM;
	else {
		f->len = e->len;
		memcpy(f->data, e->data, e->len);
	}
	pthread_mutex_unlock(&dv->lock);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)f;
	fi->direct_io = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void dv_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct dv_file *f = (void *)(uintptr_t)fi->fh;

	(void)ino;
	if (off < 0 || (size_t)off >= f->len)
		fuse_reply_buf(req, NULL, 0);
	else
		fuse_reply_buf(req, (const char *)f->data + off,
			       size < f->len - (size_t)off ? size : f->len - (size_t)off);
}

static void dv_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* a directory lists the names it had at opendir: offsets stay valid while devices come */
struct dv_dir {
	size_t n;
	struct {
		uint64_t ino;
		mode_t mode;
		char *name;
	} ent[];
};

static void dir_free(struct dv_dir *d)
{
	for (size_t i = 0; d && i < d->n; i++)
		free(d->ent[i].name);
	free(d);
}

static void dv_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct cfs_devview *dv = dv_of(req);
	struct dv_dir *d = NULL;
	struct dv_table *t;
	struct dv_entry *p;
	size_t n = 0;
	int err = 0;

	pthread_mutex_lock(&dv->lock);
	t = cfs_devview_current(dv);
	p = t ? cfs_devview_by_ino(t, ino) : NULL;
	if (!p)
		err = t ? ENOENT : ENOMEM;
	else if (!S_ISDIR(p->mode))
		err = ENOTDIR;
	for (size_t i = 0; !err && i < t->n; i++)
		n += t->e[i]->parent == ino && t->e[i]->ino != ino;
	if (!err && !(d = calloc(1, sizeof(*d) + n * sizeof(d->ent[0]))))
		err = ENOMEM;
	for (size_t i = 0; !err && i < t->n; i++) {
		struct dv_entry *e = t->e[i];

		if (e->parent != ino || e->ino == ino)
			continue;
		d->ent[d->n].ino = e->ino;
		d->ent[d->n].mode = e->mode;
		if (!(d->ent[d->n].name = strdup(e->name)))
			err = ENOMEM;
		else
			d->n++;
	}
	pthread_mutex_unlock(&dv->lock);
	if (err) {
		dir_free(d);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uintptr_t)d;
	if (fuse_reply_open(req, fi) != 0)
		dir_free(d);
}

static void dv_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dv_dir *d = (void *)(uintptr_t)fi->fh;
	char *buf = malloc(size);
	size_t used = 0;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* offsets 0 and 1 are "." and "..", entry i is offset i + 2 */
	for (off_t i = off; i < (off_t)d->n + 2; i++) {
		struct stat st = { .st_ino = ino, .st_mode = S_IFDIR };
		const char *name = i == 0 ? "." : "..";
		size_t need;

		if (i >= 2) {
			st.st_ino = d->ent[i - 2].ino;
			st.st_mode = d->ent[i - 2].mode;
			name = d->ent[i - 2].name;
		}
		need = fuse_add_direntry(req, buf + used, size - used, name, &st, i + 1);
		if (need > size - used)
			break;
		used += need;
	}
	fuse_reply_buf(req, buf, used);
	free(buf);
}

static void dv_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	dir_free((void *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* entries come and go with the tree's devices only: a devtmpfs nobody writes */
static void dv_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	fuse_reply_err(req, EPERM);
}

const struct fuse_lowlevel_ops cfs_devview_ops = {
	CFS_FUSE_COMMON_OPS,
	CFS_FUSE_REFUSE_NS_OPS,
	.lookup = dv_lookup,
	.forget = dv_forget,
	.getattr = dv_getattr,
	.setattr = dv_setattr,
	.readlink = dv_readlink,
	.open = dv_open,
	.read = dv_read,
	.release = dv_release,
	.opendir = dv_opendir,
	.readdir = dv_readdir,
	.releasedir = dv_releasedir,
};


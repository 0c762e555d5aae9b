// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mount.c - a tree served as a live sysfs through FUSE's low-level API.
 *
 * Inode numbers are the tree's own (root 1; generation in the number), so
 * no node table is kept here and forget() has nothing to do.  Lookups and
 * attributes are cached by the kernel for a day; correctness comes from
 * pushing invalidations: the tree reports every entry that appears or
 * goes (watch ops, under its lock), a notifier thread sends them with
 * fuse_lowlevel_notify_inval_entry(), and the API call that made the
 * change waits until they are out (sync), so its caller's next stat sees
 * the change.  Requests are served by a multithreaded loop: a handler
 * whose store() changed the tree waits for the notifier, whose
 * invalidation may need another request (holding the directory lock) to
 * be answered first.
 *
 * Attributes computed on every read use direct_io (whole value, one
 * read); `dev` files never change for an inode and use the page cache.
 * Directory listings are cached by the kernel too (FOPEN_CACHE_DIR): the
 * notifier also invalidates each changed directory's inode (its cached
 * listing and attributes), and a directory's mtime moves with every
 * change, which the kernel checks when a listing starts (so a listing
 * read from the daemon just before a change is not kept).
 */
/*
 * 3.12: below it fuse_session_loop_mt() is the 3.2 entry point, which
 * reads the config from fuse_loop_cfg_create() as the old public struct
 * (clone_fd, max_idle_threads): the thread cap was lost and an idle limit
 * of 1 made libfuse start and end a worker thread (cloning /dev/fuse) for
 * nearly every request, ~35 us of daemon CPU each (bench-fs).
 */
#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../core/internal.h"

#define CACHE_TIMEOUT 86400.0
#define SYNC_TIMEOUT_S 5
#define MAX_READ (128 * 1024)

struct inval {
	struct inval *next;
	uint64_t dir;
	char name[];
};

struct poller {
	struct poller *next;
	uint64_t ino;
	uint64_t events;		/* notifications so far */
	struct fuse_pollhandle *ph;	/* waiting poll, or NULL */
};

struct open_file {
	struct open_file *prev, *next;	/* the mount's open files (plock) */
	uint64_t seen;			/* notifications seen at the last read from 0 */
};

struct classfs_mount {
	struct classfs_tree *tree;
	struct fuse_session *se;
	char *mountpoint;
	int watch_id;
	pthread_t loop_thread, notifier;
	bool notifier_started, loop_started;
	time_t mtime;

	pthread_mutex_t qlock;		/* the invalidation queue */
	pthread_cond_t qwork, qdone;
	struct inval *qhead, **qtail;
	uint64_t queued, pushed;
	uint64_t changes;		/* entries gained or lost: directories' mtime */
	bool stopping;

	pthread_mutex_t plock;		/* pollers */
	struct poller *pollers;
	struct open_file *files;	/* freed at unmount if never released */
};

static struct classfs_mount *m_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* ---- the tree's watch: record under its lock, push from our thread ---- */

static void watch_changed(void *data, uint64_t dir, const char *name)
{
	struct classfs_mount *m = data;
	size_t len = strlen(name) + 1;
	struct inval *iv;

	__atomic_add_fetch(&m->changes, 1, __ATOMIC_RELAXED);
	iv = malloc(sizeof(*iv) + len);
	if (!iv)
		return;	/* the entry stays cached until its timeout: logged below */
	iv->next = NULL;
	iv->dir = dir;
	memcpy(iv->name, name, len);
	pthread_mutex_lock(&m->qlock);
	*m->qtail = iv;
	m->qtail = &iv->next;
	m->queued++;
	pthread_cond_signal(&m->qwork);
	pthread_mutex_unlock(&m->qlock);
}

static void watch_sync(void *data)
{
	struct classfs_mount *m = data;
	struct timespec until;
	uint64_t target;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SYNC_TIMEOUT_S;
	pthread_mutex_lock(&m->qlock);
	target = m->queued;
	while (m->pushed < target && !m->stopping)
		if (pthread_cond_timedwait(&m->qdone, &m->qlock, &until) == ETIMEDOUT) {
			fprintf(stderr, "classfs: invalidations for %s late by %d s\n",
				m->mountpoint, SYNC_TIMEOUT_S);
			break;
		}
	pthread_mutex_unlock(&m->qlock);
}

static struct poller *poller_get(struct classfs_mount *m, uint64_t ino, bool create)
{
	struct poller *p;

	for (p = m->pollers; p; p = p->next)
		if (p->ino == ino)
			return p;
	if (!create || !(p = calloc(1, sizeof(*p))))
		return NULL;
	p->ino = ino;
	p->next = m->pollers;
	m->pollers = p;
	return p;
}

static void watch_notify(void *data, uint64_t ino)
{
	struct classfs_mount *m = data;
	struct fuse_pollhandle *ph = NULL;
	struct poller *p;

	pthread_mutex_lock(&m->plock);
	p = poller_get(m, ino, true);
	if (p) {
		p->events++;
		ph = p->ph;
		p->ph = NULL;
	}
	pthread_mutex_unlock(&m->plock);
	if (ph) {
		fuse_lowlevel_notify_poll(ph);
		fuse_pollhandle_destroy(ph);
	}
}

static const struct classfs_watch_ops watch_ops = {
	.changed = watch_changed,
	.sync = watch_sync,
	.notify = watch_notify,
};

/*
 * Pushes in batches: every change recorded so far, each entry, then each
 * directory once (its cached listing and attributes: FOPEN_CACHE_DIR, and
 * the kernel compares the mtime, which moved, when a listing starts).
 */
static void *notifier_main(void *arg)
{
	struct classfs_mount *m = arg;

	pthread_mutex_lock(&m->qlock);
	for (;;) {
		struct inval *batch = m->qhead, *iv;
		uint64_t dirs[16], n = 0;
		int ndirs = 0;

		if (!batch) {
			if (m->stopping)
				break;
			pthread_cond_wait(&m->qwork, &m->qlock);
			continue;
		}
		m->qhead = NULL;
		m->qtail = &m->qhead;
		pthread_mutex_unlock(&m->qlock);
		while ((iv = batch)) {
			int i = 0;

			batch = iv->next;
			/* the kernel may not know the entry: -ENOENT is fine */
			fuse_lowlevel_notify_inval_entry(m->se, iv->dir, iv->name, strlen(iv->name));
			while (i < ndirs && dirs[i] != iv->dir)
				i++;
			if (i == ndirs && ndirs < 16)
				dirs[ndirs++] = iv->dir;
			else if (i == ndirs)
				fuse_lowlevel_notify_inval_inode(m->se, iv->dir, 0, 0);
			free(iv);
			n++;
		}
		for (int i = 0; i < ndirs; i++)
			fuse_lowlevel_notify_inval_inode(m->se, dirs[i], 0, 0);
		pthread_mutex_lock(&m->qlock);
		m->pushed += n;
		pthread_cond_broadcast(&m->qdone);
	}
	m->pushed = m->queued;
	pthread_cond_broadcast(&m->qdone);
	pthread_mutex_unlock(&m->qlock);
	return NULL;
}

/* ---- requests ---- */

static void fill_stat(struct classfs_mount *m, const struct classfs_stat *cs, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = cs->ino;
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

static void reply_entry(fuse_req_t req, const struct classfs_stat *cs)
{
	struct fuse_entry_param e = {
		.ino = cs->ino,
		.generation = cs->generation,
		.attr_timeout = CACHE_TIMEOUT,
		.entry_timeout = CACHE_TIMEOUT,
	};

	fill_stat(m_of(req), cs, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_init(void *data, struct fuse_conn_info *conn)
{
	(void)data;
	/* O_TRUNC arrives as setattr(size 0); no splice, no writeback cache */
	conn->want &= ~(unsigned)(FUSE_CAP_ATOMIC_O_TRUNC | FUSE_CAP_SPLICE_READ |
				  FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE |
				  FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_EXPORT_SUPPORT);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct classfs_stat cs;
	int r = classfs_lookup(m_of(req)->tree, parent, name, &cs);

	if (r == -ENOENT) {
		/* a negative entry, cached too: additions are pushed */
		struct fuse_entry_param e = { .ino = 0, .entry_timeout = CACHE_TIMEOUT };

		fuse_reply_entry(req, &e);
		return;
	}
	if (r < 0)
		fuse_reply_err(req, -r);
	else
		reply_entry(req, &cs);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	(void)ino;
	(void)nlookup;
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
	fill_stat(m_of(req), &cs, &st);
	fuse_reply_attr(req, &st, CACHE_TIMEOUT);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct classfs_stat cs;
	struct stat st;
	int r = classfs_getattr(m_of(req)->tree, ino, &cs);

	(void)attr;
	(void)fi;
	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	/* truncation is how `echo x > attr` opens: allowed on writable files */
	if ((to_set & FUSE_SET_ATTR_SIZE) && (cs.type != CLASSFS_FT_REG || !(cs.mode & 0222))) {
		fuse_reply_err(req, cs.type == CLASSFS_FT_DIR ? EISDIR : EACCES);
		return;
	}
	fill_stat(m_of(req), &cs, &st);
	fuse_reply_attr(req, &st, CACHE_TIMEOUT);
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

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct classfs_stat cs;
	struct open_file *of;
	int acc = fi->flags & O_ACCMODE;
	int r = classfs_getattr(m_of(req)->tree, ino, &cs);

	if (r < 0) {
		fuse_reply_err(req, -r);
		return;
	}
	if (cs.type == CLASSFS_FT_DIR) {
		fuse_reply_err(req, EISDIR);
		return;
	}
	/* sysfs enforces the mode bits even for root */
	if ((acc != O_WRONLY && !(cs.mode & 0444)) || (acc != O_RDONLY && !(cs.mode & 0222))) {
		fuse_reply_err(req, EACCES);
		return;
	}
	of = calloc(1, sizeof(*of));
	if (!of) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_lock(&m_of(req)->plock);
	struct poller *p = poller_get(m_of(req), ino, false);

	of->seen = p ? p->events : 0;
	of->next = m_of(req)->files;
	if (of->next)
		of->next->prev = of;
	m_of(req)->files = of;
	pthread_mutex_unlock(&m_of(req)->plock);
	fi->fh = (uintptr_t)of;
	if (cs.dynamic)
		fi->direct_io = 1;
	else
		fi->keep_cache = 1;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	struct open_file *of = (void *)(uintptr_t)fi->fh;

	(void)ino;
	pthread_mutex_lock(&m->plock);
	if (of->prev)
		of->prev->next = of->next;
	else
		m->files = of->next;
	if (of->next)
		of->next->prev = of->prev;
	pthread_mutex_unlock(&m->plock);
	free(of);
	fuse_reply_err(req, 0);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct classfs_mount *m = m_of(req);
	struct open_file *of = (void *)(uintptr_t)fi->fh;
	char stack[4096], *buf = stack;
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
		struct poller *p = poller_get(m, ino, false);

		if (p)
			of->seen = p->events;
		pthread_mutex_unlock(&m->plock);
	}
	r = classfs_read(m->tree, ino, buf, size, off);
	if (r == -ENOENT)
		r = -ENODEV;	/* the attribute went while open */
	if (r < 0)
		fuse_reply_err(req, (int)-r);
	else
		fuse_reply_buf(req, buf, (size_t)r);
	if (buf != stack)
		free(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	ssize_t r = classfs_write(m_of(req)->tree, ino, buf, size, off);

	(void)fi;
	if (r == -ENOENT)
		r = -ENODEV;
	if (r < 0)
		fuse_reply_err(req, (int)-r);
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

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct classfs_mount *m = m_of(req);
	struct open_file *of = (void *)(uintptr_t)fi->fh;
	unsigned int revents = POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM;
	struct poller *p;

	pthread_mutex_lock(&m->plock);
	p = poller_get(m, ino, ph != NULL);
	if (p && of && of->seen != p->events)
		revents |= POLLERR | POLLPRI;
	if (p && ph) {
		if (p->ph)
			fuse_pollhandle_destroy(p->ph);
		p->ph = ph;
		ph = NULL;
	}
	pthread_mutex_unlock(&m->plock);
	if (ph)
		fuse_pollhandle_destroy(ph);
	fuse_reply_poll(req, revents);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct statvfs sv = { .f_bsize = 4096, .f_frsize = 4096, .f_namemax = NAME_MAX };

	(void)ino;
	fuse_reply_statfs(req, &sv);
}

/*
 * Entries come and go only through the tree: refuse the rest as sysfs
 * does (EACCES for a new file, EPERM for the others) rather than with
 * FUSE's ENOSYS, which `echo 1 > attr-typo` would print as "Function not
 * implemented".
 */
static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	fuse_reply_err(req, EACCES);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	fuse_reply_err(req, EPERM);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, EPERM);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EPERM);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EPERM);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EPERM);
}

static const struct fuse_lowlevel_ops ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.release = op_release,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.poll = op_poll,
	.statfs = op_statfs,
	.create = op_create,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_unlink,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
};

/* ---- mounting ---- */

static void *loop_main(void *arg)
{
	struct classfs_mount *m = arg;
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();

	if (!cfg) {
		fuse_session_loop(m->se);
		return NULL;
	}
	fuse_loop_cfg_set_clone_fd(cfg, 1);
	/* no idle limit (libfuse's default): workers stay, at most 8 */
	fuse_loop_cfg_set_max_threads(cfg, 8);
	fuse_session_loop_mt(m->se, cfg);
	fuse_loop_cfg_destroy(cfg);
	return NULL;
}

/* "allow_other,ro" -> FUSE's -o list; -EINVAL for anything unknown */
static int mount_options(const char *options, char *out, size_t size)
{
	char copy[256], *save = NULL;
	size_t len;

	len = (size_t)snprintf(out, size, "fsname=classfs,subtype=classfs,default_permissions");
	if (!options || !*options)
		return 0;
	if (strlen(options) >= sizeof(copy))
		return -EINVAL;
	strcpy(copy, options);
	for (char *o = strtok_r(copy, ",", &save); o; o = strtok_r(NULL, ",", &save)) {
		static const char *const allowed[] = { "allow_other", "allow_root", "ro", "rw",
						       "noatime", "nosuid", "nodev", "noexec" };
		bool ok = false;

		for (size_t i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
			ok |= !strcmp(o, allowed[i]);
		if (!ok || len + strlen(o) + 2 > size)
			return -EINVAL;
		len += (size_t)snprintf(out + len, size - len, ",%s", o);
	}
	return 0;
}

static void mount_free(struct classfs_mount *m)
{
	struct inval *iv;

	if (m->watch_id > 0)
		classfs_tree_watch_remove(m->tree, m->watch_id);
	if (m->notifier_started) {
		pthread_mutex_lock(&m->qlock);
		m->stopping = true;
		pthread_cond_broadcast(&m->qwork);
		pthread_mutex_unlock(&m->qlock);
		pthread_join(m->notifier, NULL);
	}
	if (m->se) {
		if (m->loop_started) {
			fuse_session_exit(m->se);
			fuse_session_unmount(m->se);
			pthread_join(m->loop_thread, NULL);
		}
		fuse_session_destroy(m->se);
	}
	while ((iv = m->qhead)) {
		m->qhead = iv->next;
		free(iv);
	}
	/* files still open when the mount went get no release */
	while (m->files) {
		struct open_file *of = m->files;

		m->files = of->next;
		free(of);
	}
	while (m->pollers) {
		struct poller *p = m->pollers;

		m->pollers = p->next;
		if (p->ph)
			fuse_pollhandle_destroy(p->ph);
		free(p);
	}
	pthread_mutex_destroy(&m->qlock);
	pthread_mutex_destroy(&m->plock);
	pthread_cond_destroy(&m->qwork);
	pthread_cond_destroy(&m->qdone);
	free(m->mountpoint);
	free(m);
}

/**
 * classfs_mount_tree() - serve @tree at @mountpoint from background threads
 * @options: comma-separated: allow_other, ro, nosuid, nodev, noexec, ...
 *
 * One tree may be served at several mount points.
 * Return: the mount, or NULL with errno (EINVAL for bad options, or the
 * mount's error).
 */
struct classfs_mount *classfs_mount_tree(struct classfs_tree *tree, const char *mountpoint,
					 const char *options)
{
	char opts[512];
	char *argv[] = { "classfs", "-o", opts, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct classfs_mount *m;
	int r;

	if (!tree || !mountpoint) {
		errno = EINVAL;
		return NULL;
	}
	r = mount_options(options, opts, sizeof(opts));
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->tree = tree;
	m->mtime = time(NULL);
	m->qtail = &m->qhead;
	pthread_mutex_init(&m->qlock, NULL);
	pthread_mutex_init(&m->plock, NULL);
	pthread_cond_init(&m->qwork, NULL);
	pthread_cond_init(&m->qdone, NULL);
	m->mountpoint = strdup(mountpoint);
	if (!m->mountpoint)
		goto fail_errno;
	m->se = fuse_session_new(&args, &ops, sizeof(ops), m);
	/* its option parsing left @args allocated */
	fuse_opt_free_args(&args);
	if (!m->se) {
		errno = EINVAL;
		goto fail_errno;
	}
	if (fuse_session_mount(m->se, mountpoint) != 0) {
		errno = errno ? errno : EIO;
		goto fail_errno;
	}
	if ((r = pthread_create(&m->notifier, NULL, notifier_main, m))) {
		errno = r;
		goto fail_unmount;
	}
	m->notifier_started = true;
	if ((r = pthread_create(&m->loop_thread, NULL, loop_main, m))) {
		errno = r;
		goto fail_unmount;
	}
	m->loop_started = true;
	m->watch_id = classfs_tree_watch_add(tree, &watch_ops, m);
	if (m->watch_id < 0) {
		errno = -m->watch_id;
		goto fail_errno;
	}
	return m;

fail_unmount:
	if (!m->loop_started)
		fuse_session_unmount(m->se);
fail_errno:
	r = errno;
	mount_free(m);
	errno = r;
	return NULL;
}

/** classfs_mount_close() - unmount and stop serving; 0 or -EINVAL */
int classfs_mount_close(struct classfs_mount *m)
{
	if (!m)
		return -EINVAL;
	mount_free(m);
	return 0;
}

/** classfs_mount_point() - where @m is mounted */
const char *classfs_mount_point(const struct classfs_mount *m)
{
	return m ? m->mountpoint : NULL;
}

static pthread_mutex_t default_mount_lock = PTHREAD_MUTEX_INITIALIZER;
static struct classfs_mount *default_mount;

/**
 * classfs_mount() - serve the default tree (the kernel-compatible API's)
 * at @mountpoint.  Return: 0, -EBUSY (already mounted), or -errno.
 */
int classfs_mount(const char *mountpoint, const char *options)
{
	struct classfs_tree *t = classfs_default_tree();
	int r = 0;

	if (!t)
		return -ENOMEM;
	pthread_mutex_lock(&default_mount_lock);
	if (default_mount) {
		r = -EBUSY;
	} else {
		default_mount = classfs_mount_tree(t, mountpoint, options);
		if (!default_mount)
			r = -errno;
	}
	pthread_mutex_unlock(&default_mount_lock);
	return r;
}

/** classfs_unmount() - stop serving the default tree.  Return: 0 or -EINVAL. */
int classfs_unmount(void)
{
	struct classfs_mount *m;

	pthread_mutex_lock(&default_mount_lock);
	m = default_mount;
	default_mount = NULL;
	pthread_mutex_unlock(&default_mount_lock);
	return classfs_mount_close(m);
}

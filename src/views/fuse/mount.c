// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * mount.c - a tree served as a live sysfs through FUSE's low-level API:
 * mounting, options, and the public calls.
 *
 * A mount has four parts: the request handlers (ops.c), the answers
 * given after a handler returned (reply.c), the notifier thread that
 * pushes invalidations and poll wake-ups (notify.c), and the session loop
 * (loop.c: one reader thread, another one taking over while a request
 * blocks).  The same tree may also be served as a devtmpfs-style /dev
 * (devview.c), with requests of its own and nothing pushed.
 */
#include "fuse-internal.h"
#include "classfs-internal/testing.h"

#include <time.h>
#include <unistd.h>

/* "allow_other,ro" -> FUSE's -o list (@base first); -EINVAL for anything unknown */
static int mount_options(const char *base, const char *options, char *out, size_t size)
{
	char copy[256], *save = NULL;
	size_t len;

	len = (size_t)snprintf(out, size, "%s", base);
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
	int r;

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
			/* no thread may read the device once it is closed */
			fuse_session_exit(m->se);
			r = cfs_fuse_loop_stop(m->loop);
			if (r < 0)
				fprintf(stderr, "classfs: serving %s: %s\n", m->mountpoint,
					strerror(-r));
			/* answered while the session is there to take the answers */
			cfs_fuse_deferred_abort(m);
			fuse_session_unmount(m->se);
		}
		fuse_session_destroy(m->se);
	}
	cfs_fuse_loop_free(m->loop);
	cfs_fuse_notify_free(m);
	cfs_fuse_snap_free(m);
	cfs_fuse_known_free(m);
	cfs_devview_free(m->devview);
	pthread_mutex_destroy(&m->qlock);
	pthread_mutex_destroy(&m->plock);
	pthread_mutex_destroy(&m->slock);
	pthread_mutex_destroy(&m->dlock);
	pthread_cond_destroy(&m->dempty);
	pthread_mutex_destroy(&m->known.lock);
	pthread_cond_destroy(&m->qwork);
	pthread_cond_destroy(&m->qdone);
	free(m->mountpoint);
	free(m);
}

/*
 * Serve @tree at @mountpoint: the sysfs view, or the devtmpfs-style one
 * when @devview.  Return: the mount, or NULL with errno.
 */
static struct classfs_mount *mount_view(struct classfs_tree *tree, const char *mountpoint,
					const char *options, bool devview)
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
	/* the nodes of a /dev view are never a way to the host's devices */
	r = mount_options(devview ? "fsname=classfs-dev,subtype=classfs,default_permissions,nodev"
				  : "fsname=classfs,subtype=classfs,default_permissions",
			  options, opts, sizeof(opts));
	if (r < 0) {
		errno = -r;
		return NULL;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->tree = tree;
	m->uid = geteuid();
	m->gid = getegid();
	m->mtime = time(NULL);
	m->qtail = &m->qhead;
	pthread_mutex_init(&m->qlock, NULL);
	pthread_mutex_init(&m->plock, NULL);
	pthread_mutex_init(&m->slock, NULL);
	pthread_mutex_init(&m->dlock, NULL);
	pthread_cond_init(&m->dempty, NULL);
	pthread_mutex_init(&m->known.lock, NULL);
	pthread_cond_init(&m->qwork, NULL);
	pthread_cond_init(&m->qdone, NULL);
	m->mountpoint = strdup(mountpoint);
	if (!m->mountpoint)
		goto fail_errno;
	if (devview && !(m->devview = cfs_devview_new(tree)))
		goto fail_errno;
	m->se = fuse_session_new(&args, devview ? &cfs_devview_ops : &cfs_fuse_ops,
				 sizeof(cfs_fuse_ops), m);
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
	/* the devtmpfs view pushes nothing: its device entries are never cached */
	if (!devview) {
		r = pthread_create(&m->notifier, NULL, cfs_fuse_notifier_main, m);
		if (r) {
			errno = r;
			goto fail_unmount;
		}
		m->notifier_started = true;
	}
	m->loop = cfs_fuse_loop_new(m->se);
	if (!m->loop) {
		errno = ENOMEM;
		goto fail_unmount;
	}
	if ((r = cfs_fuse_loop_start(m->loop)) < 0) {
		errno = -r;
		goto fail_unmount;
	}
	m->loop_started = true;
	m->watch_id = classfs_tree_watch_add(tree, devview ? &cfs_devview_watch_ops
							   : &cfs_fuse_watch_ops,
					     devview ? (void *)m->devview : (void *)m);
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
	return mount_view(tree, mountpoint, options, false);
}

/**
 * classfs_mount_devtmpfs() - serve the devices of @tree as a devtmpfs at
 * @mountpoint (devview.c says what it holds)
 * @options: as classfs_mount_tree()'s; the mount is nodev whatever they say.
 *
 * Return: the mount (classfs_mount_close() ends it), or NULL with errno.
 */
struct classfs_mount *classfs_mount_devtmpfs(struct classfs_tree *tree, const char *mountpoint,
					     const char *options)
{
	return mount_view(tree, mountpoint, options, true);
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

/* documented in classfs-internal/testing.h */
uint64_t classfs_mount_requests(struct classfs_mount *m, int opcode)
{
	return m && m->loop ? cfs_fuse_loop_requests(m->loop, opcode) : 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * devfs.c - the private /dev and /run/udev of a classfs-run environment:
 * setup, what each device owns there, and the devices of the snapshot.
 *
 * As root, /dev is a tmpfs mounted nodev: every device node made here has
 * the type, number and mode udev would give it, so stat() sees a real
 * node, but no open() can reach real hardware through it.  In a user
 * namespace (no mknod() there) /dev is the daemon's devtmpfs-style view
 * of the tree instead, nodev too, and only the udev database is kept
 * here.  The few host nodes
 * programs cannot live without (null, zero, full, random, urandom, tty)
 * are bind mounts of the host's: a bind mount keeps the flags of its
 * source, so those stay usable inside the nodev tmpfs.  /dev/ptmx is a
 * link to pts/ptmx, which the kernel opens only on the devpts mounted
 * at pts beside it: as root /dev/pts is the host's (its ptmx is 0000,
 * which root may open anyway); in a user namespace, where nothing of
 * the host's 0000 ptmx may be opened, a devpts of its own (ptmxmode
 * 0666), so that programs there open pseudo-terminals as on the host.
 *
 * /run/udev is a tmpfs holding the udev database (data/) and a `control`
 * file: libudev opens a "udev" monitor only when that file exists (or
 * /dev is devtmpfs), and treats a device as initialized when its
 * database file exists.
 *
 * Everything below /dev and /run/udev/data is made through devdir.c,
 * never through a symlink or into another mount; each node, link and
 * database file is noted as one device's (devfs-internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <search.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "devfs-internal.h"

/* host nodes bound into the private /dev (the only openable ones) */
static const char *const host_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
#define N_HOST_NODES (sizeof(host_nodes) / sizeof(host_nodes[0]))

/* ------------------------------------------------------------------ */
/* what each device owns                                               */
/* ------------------------------------------------------------------ */

static int cmp_devpath(const void *a, const void *b)
{
	return strcmp(((const struct devent *)a)->devpath, ((const struct devent *)b)->devpath);
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const struct devent *)a)->node, ((const struct devent *)b)->node);
}

static int cmp_db(const void *a, const void *b)
{
	return strcmp(((const struct devent *)a)->db, ((const struct devent *)b)->db);
}

/**
 * cfs_devent_get() - the entry of the device at @devpath; made when
 * @create.  Return: the entry, or NULL (none, or no memory).
 */
struct devent *cfs_devent_get(struct cfs_devfs *d, const char *devpath, bool create)
{
	struct devent key = { .devpath = (char *)devpath }, *e, **slot;

	slot = tfind(&key, &d->by_devpath, cmp_devpath);
	if (slot)
		return *slot;
	if (!create)
		return NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->devpath = strdup(devpath);
	if (!e->devpath || !tsearch(e, &d->by_devpath, cmp_devpath)) {
		free(e->devpath);
		free(e);
		return NULL;
	}
	return e;
}

static void devent_free(void *p)
{
	struct devent *e = p;

	free(e->devpath);
	free(e->node);
	free(e->db);
	free(e);
}

/** cfs_devent_drop() - forget @e (what it owned stays where it is) */
void cfs_devent_drop(struct cfs_devfs *d, struct devent *e)
{
	if (e->node)
		tdelete(e, &d->by_node, cmp_node);
	if (e->db)
		tdelete(e, &d->by_db, cmp_db);
	tdelete(e, &d->by_devpath, cmp_devpath);
	devent_free(e);
}

/** cfs_devent_refile() - file @e under @devpath (its device was renamed); 0 or -ENOMEM */
int cfs_devent_refile(struct cfs_devfs *d, struct devent *e, const char *devpath)
{
	char *p = strdup(devpath);

	if (!p)
		return -ENOMEM;
	tdelete(e, &d->by_devpath, cmp_devpath);
	free(e->devpath);
	e->devpath = p;
	if (!tsearch(e, &d->by_devpath, cmp_devpath)) {
		cfs_devent_drop(d, e);
		return -ENOMEM;
	}
	return 0;
}

/** cfs_devfs_node_owner() - the device whose node is @rel (relative to /dev), or NULL */
const struct devent *cfs_devfs_node_owner(struct cfs_devfs *d, const char *rel)
{
	struct devent key = { .node = (char *)rel }, **slot;

	slot = tfind(&key, &d->by_node, cmp_node);
	return slot ? *slot : NULL;
}

/* the relative text of a link at @link to @node (both relative to /dev), as udev writes it */
static int relative_target(const char *link, const char *node, char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (const char *p = link; *p; p++) {
		if (*p != '/')
			continue;
		if (off + 3 >= size)
			return -ENAMETOOLONG;
		memcpy(buf + off, "../", 4);
		off += 3;
	}
	if (snprintf(buf + off, size - off, "%s", node) >= (int)(size - off))
		return -ENAMETOOLONG;
	return 0;
}

static void devnum_link(char *buf, size_t size, bool block, dev_t devt)
{
	snprintf(buf, size, "%s/%u:%u", block ? "block" : "char", major(devt), minor(devt));
}

/* char/M:m or block/M:m -> ../NAME, as udev makes them */
static int put_devnum_link(struct cfs_devfs *d, const char *node, bool block, dev_t devt)
{
	char link[64], target[PATH_MAX];
	int r;

	devnum_link(link, sizeof(link), block, devt);
	r = relative_target(link, node, target, sizeof(target));
	return r < 0 ? r : cfs_devdir_symlink(d->dev_fd, target, link);
}

/* a name taken by another entry, a link or a mount on the way: not this device's to make */
static bool name_conflict(int r)
{
	return r == -ELOOP || r == -EXDEV || r == -EISDIR || r == -ENOTDIR || r == -EBUSY ||
	       r == -EEXIST || r == -ENAMETOOLONG || r == -ENOTEMPTY;
}

/**
 * cfs_devfs_make_node() - make the node @devname of the device @e and
 * note it as @e's: a regular file with @contents when given, else a
 * device node of @devt (an empty regular file when there is no number),
 * and its char/ or block/ number link.  A name that is a host node, an
 * entry of the environment itself, or another device's node is left
 * alone (logged).
 * Return: 0 (made or left alone), or -errno.
 */
int cfs_devfs_make_node(struct cfs_devfs *d, struct devent *e, const char *devname, bool block,
			dev_t devt, mode_t mode, const unsigned char *contents, size_t len)
{
	const struct devent *owner;
	char rel[PATH_MAX];
	int r;

	/* a devtmpfs-style view on /dev: the daemon shows the node */
	if (d->dev_fd < 0)
		return 0;
	if (!cfs_dev_rel_name(devname, rel, sizeof(rel))) {
		cfs_run_log(d->verbose, "%s: unusable node name '%s', skipped", e->devpath, devname);
		return 0;
	}
	switch (cfs_dev_name_kind(rel)) {
	case CFS_DEV_NAME_HOST:
		cfs_run_log(d->verbose, "%s: /dev/%s stays the host's node", e->devpath, rel);
		return 0;
	case CFS_DEV_NAME_OWN:
		cfs_run_log(d->verbose, "%s: /dev/%s is the environment's own: no node", e->devpath,
			    rel);
		return 0;
	case CFS_DEV_NAME_FREE:
		break;
	}
	owner = cfs_devfs_node_owner(d, rel);
	if (owner && owner != e) {
		cfs_run_log(d->verbose, "%s: /dev/%s is the node of %s: not taken over", e->devpath,
			    rel, owner->devpath);
		return 0;
	}
	if (e->node && strcmp(e->node, rel))
		cfs_devfs_remove_node(d, e);	/* the device's node has another name now */
	if (contents || !major(devt))
		r = cfs_devdir_write(d->dev_fd, rel, contents ? contents : (const unsigned char *)"",
				  contents ? len : 0, mode);
	else
		r = cfs_devdir_mknod(d->dev_fd, rel, (block ? S_IFBLK : S_IFCHR) | (mode & 07777), devt);
	if (r < 0) {
		if (!name_conflict(r))
			return r;
		cfs_run_log(d->verbose, "%s: cannot make /dev/%s: %s", e->devpath, rel,
			    strerror(-r));
		return 0;
	}
	if (!e->node) {
		e->node = strdup(rel);
		if (!e->node)
			return -ENOMEM;
		if (!tsearch(e, &d->by_node, cmp_node)) {
			free(e->node);
			e->node = NULL;
			return -ENOMEM;
		}
	}
	e->block = block;
	e->devt = devt;
	if (major(devt)) {
		r = put_devnum_link(d, rel, block, devt);
		if (r < 0 && !name_conflict(r))
			return r;
	}
	return 0;
}

/** cfs_devfs_remove_node() - remove @e's node, the links to it and its number link */
void cfs_devfs_remove_node(struct cfs_devfs *d, struct devent *e)
{
	char link[64], target[PATH_MAX], want[PATH_MAX];
	int r;

	if (!e->node)
		return;
	r = cfs_devdir_unlink(d->dev_fd, e->node);
	if (r < 0 && r != -ENOENT)
		cfs_run_log(d->verbose, "cannot remove /dev/%s: %s", e->node, strerror(-r));
	for (size_t i = 0; i < d->nlinks;) {
		struct devlink *l = &d->links[i];

		if (strcmp(l->node, e->node)) {
			i++;
			continue;
		}
		/* unless a device's node took the link's name meanwhile */
		if (!cfs_devfs_node_owner(d, l->path))
			cfs_devdir_unlink(d->dev_fd, l->path);
		free(l->path);
		free(l->node);
		*l = d->links[--d->nlinks];
	}
	/* the number link, unless the number went to another node meanwhile */
	if (major(e->devt)) {
		devnum_link(link, sizeof(link), e->block, e->devt);
		if (cfs_devdir_readlink(d->dev_fd, link, target, sizeof(target)) > 0 &&
		    relative_target(link, e->node, want, sizeof(want)) == 0 && !strcmp(want, target))
			cfs_devdir_unlink(d->dev_fd, link);
	}
	tdelete(e, &d->by_node, cmp_node);
	free(e->node);
	e->node = NULL;
}

/**
 * cfs_devfs_claim_db() - note the database file @name as @e's
 * Return: true when it is @e's now; false when another device holds it,
 * @e holds another one, or memory ran out.
 */
bool cfs_devfs_claim_db(struct cfs_devfs *d, struct devent *e, const char *name)
{
	struct devent key = { .db = (char *)name };

	if (e->db)
		return !strcmp(e->db, name);
	if (tfind(&key, &d->by_db, cmp_db))
		return false;
	e->db = strdup(name);
	if (!e->db)
		return false;
	if (!tsearch(e, &d->by_db, cmp_db)) {
		free(e->db);
		e->db = NULL;
		return false;
	}
	return true;
}

/**
 * cfs_devfs_take_db() - give the database file @name, another device's,
 * to @e (holding none): the other forgets it, the file stays to be
 * written again
 * Return: true when it is @e's now; false when no other device holds it
 * or memory ran out.
 */
bool cfs_devfs_take_db(struct cfs_devfs *d, struct devent *e, const char *name)
{
	struct devent key = { .db = (char *)name }, **found = tfind(&key, &d->by_db, cmp_db);
	struct devent *other = found ? *found : NULL;	/* @found goes with tdelete() */

	if (e->db || !other || other == e)
		return false;
	tdelete(other, &d->by_db, cmp_db);
	free(other->db);
	other->db = NULL;
	return cfs_devfs_claim_db(d, e, name);
}

/** cfs_devfs_remove_db() - remove @e's database file */
void cfs_devfs_remove_db(struct cfs_devfs *d, struct devent *e)
{
	if (!e->db)
		return;
	if (unlinkat(d->db_fd, e->db, 0) < 0 && errno != ENOENT)
		cfs_run_log(d->verbose, "cannot remove /run/udev/data/%s: %m", e->db);
	tdelete(e, &d->by_db, cmp_db);
	free(e->db);
	e->db = NULL;
}

/**
 * cfs_devfs_rename_db() - give @e's database file the name @name (a
 * renamed device's "+SUBSYSTEM:NAME")
 * Return: 0 or -errno.
 */
int cfs_devfs_rename_db(struct cfs_devfs *d, struct devent *e, const char *name)
{
	char *n = strdup(name);

	if (!n)
		return -ENOMEM;
	if (renameat(d->db_fd, e->db, d->db_fd, n) < 0 && errno != ENOENT) {
		int r = -errno;

		free(n);
		return r;
	}
	tdelete(e, &d->by_db, cmp_db);
	free(e->db);
	e->db = n;
	if (!tsearch(e, &d->by_db, cmp_db)) {
		free(e->db);
		e->db = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* the devices of the snapshot                                         */
/* ------------------------------------------------------------------ */

struct fill {
	struct cfs_devfs *d;
	struct classfs_tree *tree;
};

static int remember_link(struct cfs_devfs *d, const char *path, const char *node)
{
	struct devlink *l;

	for (size_t i = 0; i < d->nlinks; i++) {
		if (strcmp(d->links[i].path, path))
			continue;
		/* a later device claims the name (as udev's link priority would) */
		char *n = strdup(node);

		if (!n)
			return -ENOMEM;
		free(d->links[i].node);
		d->links[i].node = n;
		return 0;
	}
	if (d->nlinks == d->clinks) {
		size_t c = d->clinks ? d->clinks * 2 : 32;

		l = realloc(d->links, c * sizeof(*l));
		if (!l)
			return -ENOMEM;
		d->links = l;
		d->clinks = c;
	}
	l = &d->links[d->nlinks];
	l->path = strdup(path);
	l->node = strdup(node);
	if (!l->path || !l->node) {
		free(l->path);
		free(l->node);
		return -ENOMEM;
	}
	d->nlinks++;
	return 0;
}

/* the recorded `S:` links of a device whose node is @e's */
static int put_record_links(struct cfs_devfs *d, const struct devent *e,
			    const struct classfs_record_node *node)
{
	for (size_t i = 0; i < node->nsymlinks; i++) {
		char link[PATH_MAX], target[PATH_MAX];
		int r;

		if (!cfs_dev_rel_name(node->symlinks[i], link, sizeof(link)) ||
		    cfs_dev_name_kind(link) != CFS_DEV_NAME_FREE || !strcmp(link, e->node) ||
		    cfs_devfs_node_owner(d, link)) {
			cfs_run_log(d->verbose, "%s: unusable link name '%s', skipped",
				    node->syspath, node->symlinks[i]);
			continue;
		}
		r = relative_target(link, e->node, target, sizeof(target));
		if (r == 0)
			r = cfs_devdir_symlink(d->dev_fd, target, link);
		if (r == 0)
			r = remember_link(d, link, e->node);
		if (r < 0 && !name_conflict(r))
			return r;
	}
	return 0;
}

/* the DEVPATH its events give the device at @syspath, in @buf */
static void devpath_of(struct classfs_tree *tree, const char *syspath, char *buf, size_t size)
{
	struct classfs_device *dev = classfs_tree_find_device(tree, syspath);

	if (!dev || classfs_device_devpath(dev, buf, size) < 0)
		snprintf(buf, size, "%s", syspath);
	classfs_device_put(dev);
}

/* a classfs_record_for_each_node() callback: node, number link, `S:` links */
static int fill_node(const struct classfs_record_node *node, void *data)
{
	struct fill *f = data;
	struct cfs_devfs *d = f->d;
	char devpath[PATH_MAX];
	struct devent *e;
	int r;

	devpath_of(f->tree, node->syspath, devpath, sizeof(devpath));
	e = cfs_devent_get(d, devpath, true);
	if (!e)
		return -ENOMEM;
	r = cfs_devfs_make_node(d, e, node->devname, node->block, node->devt, node->mode,
				node->contents, node->contents_len);
	if (r < 0 || !e->node)
		return r;
	return put_record_links(d, e, node);
}

/* a classfs_tree_for_each_device() callback: note the device's database file as its */
static int fill_db(struct classfs_device *dev, void *data)
{
	struct fill *f = data;
	char devpath[PATH_MAX], path[PATH_MAX + 16], text[4096], link[PATH_MAX], name[PATH_MAX];
	const char *subsystem = NULL;
	struct own_vars o;
	struct devent *e;
	ssize_t n;

	if (classfs_device_devpath(dev, devpath, sizeof(devpath)) < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/subsystem", devpath + 1);
	n = classfs_path_readlink(f->tree, path, link, sizeof(link) - 1);
	if (n > 0) {
		link[n] = '\0';
		subsystem = strrchr(link, '/') ? strrchr(link, '/') + 1 : link;
	}
	snprintf(path, sizeof(path), "%s/uevent", devpath + 1);
	n = classfs_path_read(f->tree, path, text, sizeof(text));
	cfs_own_vars_parse(text, n > 0 ? (size_t)n : 0, &o);
	if (!cfs_db_name(subsystem, devpath, subsystem && !strcmp(subsystem, "block"), &o, name,
			 sizeof(name)) || faccessat(f->d->db_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	e = cfs_devent_get(f->d, devpath, true);
	if (!e)
		return -ENOMEM;
	cfs_devfs_claim_db(f->d, e, name);
	return 0;
}

/**
 * cfs_devfs_fill() - the /dev entries and the udev database of the
 * devices of @tree (the daemon's tree as its record gave it), each noted
 * as its device's
 * Return: 0 or -errno.
 */
int cfs_devfs_fill(struct cfs_devfs *d, struct classfs_tree *tree)
{
	struct fill f = { .d = d, .tree = tree };
	int r;

	r = classfs_record_for_each_node(tree, fill_node, &f);
	if (r < 0)
		return r;
	r = classfs_record_export_udevdb(tree, "/run/udev/data");
	if (r < 0)
		return r;
	return classfs_tree_for_each_device(tree, fill_db, &f);
}

/* ------------------------------------------------------------------ */
/* setup                                                               */
/* ------------------------------------------------------------------ */

static int fail(char *msg, size_t size, int r, const char *fmt, ...) CLASSFS_PRINTF(4, 5);

static int fail(char *msg, size_t size, int r, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, size, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < size)
		snprintf(msg + n, size - (size_t)n, ": %s", strerror(-r));
	return r;
}

/* bind the host's node held open in @fd over an empty file at /dev/@name */
static int bind_host_node(int dev_fd, int fd, const char *name)
{
	char src[64], dst[PATH_MAX];
	int r;

	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	snprintf(dst, sizeof(dst), "/dev/%s", name);
	r = cfs_devdir_write(dev_fd, name, "", 0, 0666);
	if (r < 0)
		return r;
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return -errno;
	return 0;
}

/* the environment's own entries of /dev: links to the process's descriptors, shm */
static int own_entries(int dev_fd)
{
	static const char *const links[][2] = {
		{ "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
		{ "/proc/self/fd/1", "stdout" }, { "/proc/self/fd/2", "stderr" },
	};

	if (mkdirat(dev_fd, "shm", 01777) < 0 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlinkat(links[i][0], dev_fd, links[i][1]) < 0)
			return -errno;
	return 0;
}

static int open_dir(const char *path)
{
	int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/*
 * The private /dev in a user namespace: the daemon's devtmpfs-style view
 * is mounted there already, with the entries below as its own; the
 * host's nodes, /dev/pts and a tmpfs go over them.
 */
static int setup_view(int host_dev, char *msg, size_t msgsize)
{
	char src[64], dst[64];
	int fd, r = 0;

	for (size_t i = 0; i < N_HOST_NODES && r == 0; i++) {
		fd = openat(host_dev, host_nodes[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
		snprintf(dst, sizeof(dst), "/dev/%s", host_nodes[i]);
		if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
			r = fail(msg, msgsize, -errno, "cannot bind the host's /dev/%s", host_nodes[i]);
		close(fd);
	}
	if (r < 0)
		return r;
	if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
		  "newinstance,ptmxmode=0666,mode=0620") < 0) {
		fd = openat(host_dev, "pts", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0) {
			snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
			if (mount(src, "/dev/pts", NULL, MS_BIND | MS_REC, NULL) < 0)
				r = fail(msg, msgsize, -errno, "cannot bind the host's /dev/pts");
			close(fd);
		}
	}
	if (r == 0 && mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0)
		r = fail(msg, msgsize, -errno, "cannot mount a tmpfs on /dev/shm");
	return r;
}

/* as root: a nodev tmpfs on /dev, the host's nodes bound in, our own entries */
static int setup_tmpfs(int *out, char *msg, size_t msgsize)
{
	int fds[N_HOST_NODES], pts, dev_fd = -1, r = 0;

	for (size_t i = 0; i < N_HOST_NODES; i++) {
		char p[64];

		snprintf(p, sizeof(p), "/dev/%s", host_nodes[i]);
		fds[i] = open(p, O_PATH | O_CLOEXEC);
	}
	pts = open("/dev/pts", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0) {
		r = fail(msg, msgsize, -errno, "cannot mount a tmpfs on /dev");
		goto out;
	}
	dev_fd = open_dir("/dev");
	if (dev_fd < 0) {
		r = fail(msg, msgsize, dev_fd, "cannot open the private /dev");
		goto out;
	}
	for (size_t i = 0; i < N_HOST_NODES; i++) {
		if (fds[i] < 0)
			continue;
		r = bind_host_node(dev_fd, fds[i], host_nodes[i]);
		if (r < 0) {
			fail(msg, msgsize, r, "cannot bind the host's /dev/%s", host_nodes[i]);
			goto out;
		}
	}
	if (pts >= 0) {
		char src[64];

		snprintf(src, sizeof(src), "/proc/self/fd/%d", pts);
		if (mkdirat(dev_fd, "pts", 0755) < 0 ||
		    mount(src, "/dev/pts", NULL, MS_BIND | MS_REC, NULL) < 0 ||
		    symlinkat("pts/ptmx", dev_fd, "ptmx") < 0) {
			r = fail(msg, msgsize, -errno, "cannot bind the host's /dev/pts");
			goto out;
		}
	}
	r = own_entries(dev_fd);
	if (r < 0) {
		fail(msg, msgsize, r, "cannot fill the private /dev");
		goto out;
	}
	*out = dev_fd;
	dev_fd = -1;
out:
	if (dev_fd >= 0)
		close(dev_fd);
	for (size_t i = 0; i < N_HOST_NODES; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (pts >= 0)
		close(pts);
	return r;
}

/**
 * cfs_devfs_setup() - mount the private /dev and /run/udev (in the
 * holder's own mount namespace)
 * @out: receives the state hotplug needs.
 * @host_dev: -1: a tmpfs of nodes on /dev (root); else the host's /dev
 *            (under the devtmpfs-style view mounted there, in a user
 *            namespace): the view shows the nodes, we keep the database.
 * @req: a connection to the daemon (not subscribed) that hotplug asks a
 *       new device's `uevent` file of, in one round trip; NULL: hotplug
 *       reads it in /sys (needed when the tree's DEVPATHs are not the
 *       devices layout's, which is what the daemon finds devices by).
 * @verbose: log skipped entries.
 * @msg: told what failed.
 * @msgsize: its size.
 * Return: 0 or -errno.
 */
int cfs_devfs_setup(struct cfs_devfs **out, int host_dev, struct classfs_client *req,
		    bool verbose, char *msg, size_t msgsize)
{
	int dev_fd = -1, r;
	struct cfs_devfs *d;
	struct stat st;

	if (host_dev >= 0)
		r = setup_view(host_dev, msg, msgsize);
	else
		r = setup_tmpfs(&dev_fd, msg, msgsize);
	if (r < 0)
		goto out;

	/*
	 * /run/udev must exist as a mount point; on a host without udev it
	 * does not, and an empty directory there is what udev's package
	 * would leave: harmless to the host.
	 */
	if (stat("/run/udev", &st) < 0 && mkdir("/run/udev", 0755) < 0 && errno != EEXIST) {
		r = fail(msg, msgsize, -errno, "cannot create /run/udev");
		goto out;
	}
	if (mount("tmpfs", "/run/udev", "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") < 0) {
		r = fail(msg, msgsize, -errno, "cannot mount a tmpfs on /run/udev");
		goto out;
	}
	if (mkdir("/run/udev/data", 0755) < 0) {
		r = fail(msg, msgsize, -errno, "cannot create /run/udev/data");
		goto out;
	}
	{
		int run_fd = open_dir("/run/udev");

		r = run_fd < 0 ? run_fd : cfs_devdir_write(run_fd, "control", "", 0, 0644);
		if (run_fd >= 0)
			close(run_fd);
	}
	if (r < 0) {
		fail(msg, msgsize, r, "cannot create /run/udev/control");
		goto out;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		r = fail(msg, msgsize, -ENOMEM, "private /dev");
		goto out;
	}
	d->db_fd = open_dir("/run/udev/data");
	if (d->db_fd < 0) {
		r = fail(msg, msgsize, d->db_fd, "cannot open /run/udev/data");
		free(d);
		goto out;
	}
	d->verbose = verbose;
	d->req = req;
	d->dev_fd = dev_fd;
	dev_fd = -1;
	*out = d;
out:
	if (dev_fd >= 0)
		close(dev_fd);
	return r;
}

static void nothing(void *p)
{
	(void)p;
}

/** cfs_devfs_free() - forget what was made (the mounts go with the namespace) */
void cfs_devfs_free(struct cfs_devfs *d)
{
	if (!d)
		return;
	/* the entries are the devpath tree's; the other two only point at them */
	tdestroy(d->by_node, nothing);
	tdestroy(d->by_db, nothing);
	tdestroy(d->by_devpath, devent_free);
	for (size_t i = 0; i < d->nlinks; i++) {
		free(d->links[i].path);
		free(d->links[i].node);
	}
	free(d->links);
	if (d->dev_fd >= 0)
		close(d->dev_fd);
	close(d->db_fd);
	free(d);
}

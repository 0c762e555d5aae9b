// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * devfs.c - the private /dev and /run/udev of a classfs-run environment.
 *
 * /dev is a tmpfs mounted nodev: every device node made here has the
 * type, number and mode udev would give it, so stat() sees a real node,
 * but no open() can reach real hardware through it.  The few host nodes
 * programs cannot live without (null, zero, full, random, urandom, tty)
 * and /dev/pts are bind mounts of the host's: a bind mount keeps the
 * flags of its source, so those stay usable inside the nodev tmpfs.
 *
 * /run/udev is a tmpfs holding the udev database (data/) and a `control`
 * file: libudev opens a "udev" monitor only when that file exists (or
 * /dev is devtmpfs), and treats a device as initialized when its
 * database file exists.
 *
 * Hotplug follows udev's order: for an add, node and database entry
 * exist before the event is broadcast; for a remove, they go after it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "run-internal.h"

/* host nodes bound into the private /dev (the only openable ones) */
static const char *const host_nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
#define N_HOST_NODES (sizeof(host_nodes) / sizeof(host_nodes[0]))

/* a /dev symlink we made, to remove with the node it points to */
struct devlink {
	char *path;		/* "/dev/disk/by-id/..." */
	char *node;		/* "/dev/sda" */
};

struct cfs_devfs {
	bool verbose;
	struct devlink *links;
	size_t nlinks, clinks;
};

/* "/dev/input/event5" or "input/event5" -> "/dev/input/event5"; false when unsafe */
static bool node_path(const char *devname, char *buf, size_t size)
{
	const char *s = devname;

	if (!strncmp(s, "/dev/", 5))
		s += 5;
	if (!*s || *s == '/')
		return false;
	/* no component may climb out of /dev or be empty */
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p)
			p++;
	}
	return snprintf(buf, size, "/dev/%s", s) < (int)size;
}

/* mkdir -p of the directories above @path */
static int mkdir_parents(const char *path)
{
	char buf[PATH_MAX];

	if (snprintf(buf, sizeof(buf), "%s", path) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

static bool is_host_node(const char *path)
{
	for (size_t i = 0; i < N_HOST_NODES; i++)
		if (!strncmp(path, "/dev/", 5) && !strcmp(path + 5, host_nodes[i]))
			return true;
	return !strcmp(path, "/dev/pts") || !strncmp(path, "/dev/pts/", 9) ||
	       !strcmp(path, "/dev/shm") || !strncmp(path, "/dev/shm/", 9);
}

/* write @len bytes to @path through a temporary name: readers never see half */
static int write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	char tmp[PATH_MAX];
	const char *p = data;
	int fd, r = 0;

	if (snprintf(tmp, sizeof(tmp), "%s.classfs-run~", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -errno;
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = -errno;
			break;
		}
		p += n;
		len -= (size_t)n;
	}
	if (close(fd) < 0 && r == 0)
		r = -errno;
	if (r == 0 && fchmodat(AT_FDCWD, tmp, mode, 0) < 0)
		r = -errno;
	if (r == 0 && rename(tmp, path) < 0)
		r = -errno;
	if (r < 0)
		unlink(tmp);
	return r;
}

/* a symlink at @path with text @target, replacing what is there */
static int put_symlink(const char *target, const char *path)
{
	char tmp[PATH_MAX];
	int r;

	r = mkdir_parents(path);
	if (r < 0)
		return r;
	if (snprintf(tmp, sizeof(tmp), "%s.classfs-run~", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	unlink(tmp);
	if (symlink(target, tmp) < 0)
		return -errno;
	if (rename(tmp, path) < 0) {
		r = -errno;
		unlink(tmp);
		return r;
	}
	return 0;
}

/* the relative text of a link at @link (under /dev) to @node (under /dev), as udev writes it */
static int relative_target(const char *link, const char *node, char *buf, size_t size)
{
	size_t depth = 0, off = 0;

	for (const char *p = link + 5; *p; p++)
		if (*p == '/')
			depth++;
	buf[0] = '\0';
	for (size_t i = 0; i < depth; i++) {
		if (off + 3 >= size)
			return -ENAMETOOLONG;
		memcpy(buf + off, "../", 4);
		off += 3;
	}
	if (snprintf(buf + off, size - off, "%s", node + 5) >= (int)(size - off))
		return -ENAMETOOLONG;
	return 0;
}

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

/* /dev/char/M:m or /dev/block/M:m -> ../NAME, as udev makes them */
static int put_devnum_link(const char *node, bool block, dev_t devt)
{
	char link[64], target[PATH_MAX];
	int r;

	snprintf(link, sizeof(link), "/dev/%s/%u:%u", block ? "block" : "char", major(devt),
		 minor(devt));
	r = relative_target(link, node, target, sizeof(target));
	return r < 0 ? r : put_symlink(target, link);
}

/*
 * make the node at @path: a regular file with @contents when given, else a
 * device node of @devt (an empty regular file when there is no number)
 */
static int make_node(const char *path, bool block, dev_t devt, mode_t mode,
		     const unsigned char *contents, size_t len)
{
	int r = mkdir_parents(path);

	if (r < 0)
		return r;
	if (contents || !major(devt))
		return write_file(path, contents ? contents : (const unsigned char *)"",
				  contents ? len : 0, mode & 07777);
	if (mknod(path, (block ? S_IFBLK : S_IFCHR) | (mode & 07777), devt) < 0) {
		if (errno != EEXIST)
			return -errno;
		/* a node of the previous holder of the name: replace it */
		if (unlink(path) < 0 || mknod(path, (block ? S_IFBLK : S_IFCHR) | (mode & 07777),
					      devt) < 0)
			return -errno;
	}
	return 0;
}

/**
 * cfs_devfs_add_record_node() - the /dev entries of one loaded device:
 * its node (or file with the recorded contents), its `S:` links and its
 * /dev/char|block link; a classfs_record_for_each_node() callback.
 */
int cfs_devfs_add_record_node(const struct classfs_record_node *node, void *data)
{
	struct cfs_devfs *d = data;
	char path[PATH_MAX];
	int r;

	if (!node_path(node->devname, path, sizeof(path))) {
		cfs_run_log(d->verbose, "%s: unusable node name '%s', skipped", node->syspath,
			    node->devname);
		return 0;
	}
	if (is_host_node(path)) {
		cfs_run_log(d->verbose, "%s: %s stays the host's node", node->syspath, path);
		return 0;
	}
	r = make_node(path, node->block, node->devt, node->mode, node->contents,
		      node->contents_len);
	if (r < 0)
		return r;
	if (major(node->devt)) {
		r = put_devnum_link(path, node->block, node->devt);
		if (r < 0)
			return r;
	}
	for (size_t i = 0; i < node->nsymlinks; i++) {
		char link[PATH_MAX], target[PATH_MAX];

		if (!node_path(node->symlinks[i], link, sizeof(link)) || is_host_node(link) ||
		    !strcmp(link, path)) {
			cfs_run_log(d->verbose, "%s: unusable link name '%s', skipped",
				    node->syspath, node->symlinks[i]);
			continue;
		}
		r = relative_target(link, path, target, sizeof(target));
		if (r == 0)
			r = put_symlink(target, link);
		if (r == 0)
			r = remember_link(d, link, path);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* hotplug                                                             */
/* ------------------------------------------------------------------ */

static const char *ev_get(const struct classfs_uevent *ev, const char *key)
{
	const char *v = classfs_uevent_get(ev, key);

	return v && *v ? v : NULL;
}

static bool parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!s || !*s)
		return false;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static dev_t ev_devt(const struct classfs_uevent *ev)
{
	unsigned long ma, mi;

	if (!parse_uint(ev_get(ev, "MAJOR"), 0xfffff, &ma) ||
	    !parse_uint(ev_get(ev, "MINOR"), 0xfffff, &mi))
		return 0;
	return makedev(ma, mi);
}

static bool ev_block(const struct classfs_uevent *ev)
{
	return ev->subsystem && !strcmp(ev->subsystem, "block");
}

/* the database file of the event's device (same names as the record loader's) */
static bool db_path(const struct classfs_uevent *ev, const char *devpath, char *buf, size_t size)
{
	dev_t devt = ev_devt(ev);
	const char *ifindex = ev_get(ev, "IFINDEX"), *name;

	if (major(devt))
		return snprintf(buf, size, "/run/udev/data/%c%u:%u", ev_block(ev) ? 'b' : 'c',
				major(devt), minor(devt)) < (int)size;
	if (!ev->subsystem || !devpath)
		return false;
	if (!strcmp(ev->subsystem, "net") && ifindex)
		return snprintf(buf, size, "/run/udev/data/n%s", ifindex) < (int)size;
	name = strrchr(devpath, '/');
	name = name ? name + 1 : devpath;
	if (!*name)
		return false;
	return snprintf(buf, size, "/run/udev/data/+%s:%s", ev->subsystem, name) < (int)size;
}

/* what the kernel's uevent (and so the uevent file) already says: not udev properties */
static bool kernel_key(const char *kv)
{
	static const char *const keys[] = {
		"ACTION", "DEVPATH", "DEVPATH_OLD", "SUBSYSTEM", "SEQNUM", "MAJOR", "MINOR",
		"DEVNAME", "DEVTYPE", "DEVMODE", "DEVUID", "DEVGID", "TAGS", "CURRENT_TAGS",
		"SYNTH_UUID",
	};
	size_t n = strcspn(kv, "=");

	if (!strncmp(kv, "SYNTH_ARG_", 10))
		return true;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i]) == n && !strncmp(kv, keys[i], n))
			return true;
	return false;
}

static void put_tags(FILE *f, char tag, const char *tags)
{
	for (const char *s = tags; s && *s;) {
		size_t n = strcspn(s, ":");

		if (n)
			fprintf(f, "%c:%.*s\n", tag, (int)n, s);
		s += n;
		if (*s)
			s++;
	}
}

/* the database entry udev would write for a device it just handled */
static int write_db(const struct classfs_uevent *ev, const char *path)
{
	struct timespec ts;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int r;

	if (!f)
		return -errno;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	/* udev's USEC_INITIALIZED is CLOCK_MONOTONIC in microseconds */
	fprintf(f, "I:%llu\n",
		(unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000);
	for (int i = 0; i < ev->envc; i++)
		if (!kernel_key(ev->envp[i]))
			fprintf(f, "E:%s\n", ev->envp[i]);
	put_tags(f, 'G', ev_get(ev, "TAGS"));
	put_tags(f, 'Q', ev_get(ev, "CURRENT_TAGS"));
	fputs("V:1\n", f);
	if (fclose(f) != 0) {
		free(buf);
		return -ENOMEM;
	}
	r = write_file(path, buf, len, 0644);
	free(buf);
	return r;
}

/* remove the node at @path and every link we made to it */
static void remove_node(struct cfs_devfs *d, const char *path, bool block, dev_t devt)
{
	char link[64], target[PATH_MAX];
	ssize_t n;

	if (unlink(path) < 0 && errno != ENOENT)
		cfs_run_log(d->verbose, "cannot remove %s: %m", path);
	for (size_t i = 0; i < d->nlinks;) {
		struct devlink *l = &d->links[i];

		if (strcmp(l->node, path)) {
			i++;
			continue;
		}
		unlink(l->path);
		free(l->path);
		free(l->node);
		*l = d->links[--d->nlinks];
	}
	if (!major(devt))
		return;
	/* the number link, unless the number went to another node meanwhile */
	snprintf(link, sizeof(link), "/dev/%s/%u:%u", block ? "block" : "char", major(devt),
		 minor(devt));
	n = readlink(link, target, sizeof(target) - 1);
	if (n > 0) {
		char want[PATH_MAX];

		target[n] = '\0';
		if (relative_target(link, path, want, sizeof(want)) == 0 && !strcmp(want, target))
			unlink(link);
	}
}

/**
 * cfs_devfs_event_before() - apply an event's effects that come before
 * its broadcast: for an add, the node and the database entry; for a
 * move, the database entry under its new name.
 * Return: 0 or -errno (the event is broadcast anyway).
 */
int cfs_devfs_event_before(struct cfs_devfs *d, const struct classfs_uevent *ev)
{
	const char *devname = ev_get(ev, "DEVNAME");
	char path[PATH_MAX], db[PATH_MAX];
	unsigned long mode = 0600;	/* udev's default for a node no rule touched */
	int r = 0;

	if (ev->action != CLASSFS_ACTION_ADD && ev->action != CLASSFS_ACTION_MOVE)
		return 0;
	if (ev->action == CLASSFS_ACTION_MOVE) {
		const char *old = ev_get(ev, "DEVPATH_OLD");

		if (old && db_path(ev, old, path, sizeof(path)) &&
		    db_path(ev, ev->devpath, db, sizeof(db)) && strcmp(path, db) &&
		    rename(path, db) < 0 && errno != ENOENT)
			return -errno;
		return 0;
	}
	if (devname && major(ev_devt(ev))) {
		if (!node_path(devname, path, sizeof(path)))
			return -EINVAL;
		if (!is_host_node(path)) {
			const char *m = ev_get(ev, "DEVMODE");

			if (m) {
				char *end;

				mode = strtoul(m, &end, 8);
				if (*end || mode > 07777)
					mode = 0600;
			}
			r = make_node(path, ev_block(ev), ev_devt(ev), (mode_t)mode, NULL, 0);
			if (r == 0)
				r = put_devnum_link(path, ev_block(ev), ev_devt(ev));
			if (r < 0)
				return r;
		}
	}
	/* a device the snapshot already had keeps its recorded entry */
	if (db_path(ev, ev->devpath, db, sizeof(db)) && access(db, F_OK) < 0)
		r = write_db(ev, db);
	return r;
}

/**
 * cfs_devfs_event_after() - apply an event's effects that come after its
 * broadcast: for a remove, the node, its links and the database entry go.
 * Return: 0 or -errno.
 */
int cfs_devfs_event_after(struct cfs_devfs *d, const struct classfs_uevent *ev)
{
	const char *devname = ev_get(ev, "DEVNAME");
	char path[PATH_MAX], db[PATH_MAX];

	if (ev->action != CLASSFS_ACTION_REMOVE)
		return 0;
	if (devname && node_path(devname, path, sizeof(path)) && !is_host_node(path))
		remove_node(d, path, ev_block(ev), ev_devt(ev));
	if (db_path(ev, ev->devpath, db, sizeof(db)) && unlink(db) < 0 && errno != ENOENT)
		return -errno;
	return 0;
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
static int bind_host_node(int fd, const char *name)
{
	char src[64], dst[PATH_MAX];
	int r;

	snprintf(src, sizeof(src), "/proc/self/fd/%d", fd);
	snprintf(dst, sizeof(dst), "/dev/%s", name);
	r = write_file(dst, "", 0, 0666);
	if (r < 0)
		return r;
	if (mount(src, dst, NULL, MS_BIND, NULL) < 0)
		return -errno;
	return 0;
}

/**
 * cfs_devfs_setup() - mount the private /dev and /run/udev (in the
 * holder's own mount namespace)
 * @out: receives the state hotplug needs.
 * @verbose: log skipped entries.
 * @msg: told what failed.
 * @msgsize: its size.
 * Return: 0 or -errno.
 */
int cfs_devfs_setup(struct cfs_devfs **out, bool verbose, char *msg, size_t msgsize)
{
	int fds[N_HOST_NODES], pts, r = 0;
	struct cfs_devfs *d;
	struct stat st;

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
	for (size_t i = 0; i < N_HOST_NODES; i++) {
		if (fds[i] < 0)
			continue;
		r = bind_host_node(fds[i], host_nodes[i]);
		if (r < 0) {
			fail(msg, msgsize, r, "cannot bind the host's /dev/%s", host_nodes[i]);
			goto out;
		}
	}
	if (pts >= 0) {
		char src[64];

		snprintf(src, sizeof(src), "/proc/self/fd/%d", pts);
		if (mkdir("/dev/pts", 0755) < 0 ||
		    mount(src, "/dev/pts", NULL, MS_BIND | MS_REC, NULL) < 0 ||
		    symlink("pts/ptmx", "/dev/ptmx") < 0) {
			r = fail(msg, msgsize, -errno, "cannot bind the host's /dev/pts");
			goto out;
		}
	}
	if (mkdir("/dev/shm", 01777) < 0 ||
	    mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777") < 0 ||
	    symlink("/proc/self/fd", "/dev/fd") < 0 || symlink("/proc/self/fd/0", "/dev/stdin") < 0 ||
	    symlink("/proc/self/fd/1", "/dev/stdout") < 0 ||
	    symlink("/proc/self/fd/2", "/dev/stderr") < 0) {
		r = fail(msg, msgsize, -errno, "cannot fill the private /dev");
		goto out;
	}

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
	r = write_file("/run/udev/control", "", 0, 0644);
	if (r < 0) {
		fail(msg, msgsize, r, "cannot create /run/udev/control");
		goto out;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		r = fail(msg, msgsize, -ENOMEM, "private /dev");
		goto out;
	}
	d->verbose = verbose;
	*out = d;
out:
	for (size_t i = 0; i < N_HOST_NODES; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (pts >= 0)
		close(pts);
	return r;
}

/** cfs_devfs_free() - forget the links made (the mounts go with the namespace) */
void cfs_devfs_free(struct cfs_devfs *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nlinks; i++) {
		free(d->links[i].path);
		free(d->links[i].node);
	}
	free(d->links);
	free(d);
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * nodes.c - the emulated nodes of one environment.
 *
 * A node is made the first time a program opens it or a caller names it
 * (a recording loaded for it, its other end asked for), as umockdev makes
 * a testbed's: a character device is a pty, raw (no echo, no line
 * editing, no newline translation), whose master is the device's side
 * (a player writes what the program reads there, and reads what it
 * writes); a block device or a USB device (usbdevfs, major 189) is a
 * memfd, empty unless the recording gave contents, which programs read
 * as a file.  A node whose recording gave contents is a regular file in
 * the environment's /dev: programs open it themselves, and only their
 * ioctl()s of it come here.
 *
 * Only what the environment's own /dev holds becomes a node: the host's
 * null, zero, tty, pts/ ... bound into it are other file systems (their
 * st_dev is not /dev's), and they stay what they are.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include <linux/openat2.h>
#include <sys/syscall.h>

#include "devio-internal.h"

#define USB_DEVICE_MAJOR 189

/**
 * cfs_nodes_new() - the nodes of the environment whose root directory is @root
 * @root: a descriptor of that directory (duplicated: the caller keeps its own).
 * @out: receives the table.
 * Return: 0, -ENOENT (no /dev there), -ENOMEM or another -errno.
 */
int cfs_nodes_new(int root, struct cfs_nodes **out)
{
	struct cfs_nodes *n;
	struct stat st;
	int r;

	if (fstatat(root, "dev", &st, 0) < 0)
		return -errno;
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	*n = (struct cfs_nodes){ .refs = 1, .dev_dev = st.st_dev };
	n->root = fcntl(root, F_DUPFD_CLOEXEC, 3);
	if (n->root < 0) {
		r = -errno;
		free(n);
		return r;
	}
	pthread_mutex_init(&n->lock, NULL);
	*out = n;
	return 0;
}

static void node_free(struct cfs_node *node)
{
	for (int i = 0; i < CFS_NODE_PLAYERS; i++)
		if (node->players[i])
			cfs_player_stop(node->players[i]);
	if (node->handler.free)
		node->handler.free(node->handler.data);
	if (node->master >= 0)
		close(node->master);
	if (node->slave >= 0)
		close(node->slave);
	if (node->memfd >= 0)
		close(node->memfd);
	pthread_mutex_destroy(&node->call_lock);
	free(node->name);
	free(node);
}

void cfs_nodes_get(struct cfs_nodes *n)
{
	pthread_mutex_lock(&n->lock);
	n->refs++;
	pthread_mutex_unlock(&n->lock);
}

void cfs_nodes_put(struct cfs_nodes *n)
{
	struct cfs_node *node, *next;
	unsigned refs;

	pthread_mutex_lock(&n->lock);
	refs = --n->refs;
	pthread_mutex_unlock(&n->lock);
	if (refs)
		return;
	for (node = n->list; node; node = next) {
		next = node->next;
		node_free(node);
	}
	close(n->root);
	pthread_mutex_destroy(&n->lock);
	free(n);
}

/**
 * cfs_nodes_release() - the owner is done with @n
 *
 * The supervisor stops sending calls to it, players and socket scripts
 * stop; the nodes go with the last call in flight.
 */
void cfs_nodes_release(struct cfs_nodes *n)
{
	struct cfs_player *sockets[CFS_NODE_PLAYERS];
	struct cfs_node *node, *first;

	if (!n)
		return;
	cfs_supervise_forget(n);
	pthread_mutex_lock(&n->lock);
	memcpy(sockets, n->sockets, sizeof(sockets));
	memset(n->sockets, 0, sizeof(n->sockets));
	/* nodes are only added, at the head: the rest of the list stays as it is */
	first = n->list;
	pthread_mutex_unlock(&n->lock);
	for (int i = 0; i < CFS_NODE_PLAYERS; i++)
		if (sockets[i])
			cfs_player_stop(sockets[i]);
	/* players first: one blocked on a master must not outlive it */
	for (node = first; node; node = node->next) {
		pthread_mutex_lock(&node->call_lock);
		for (int i = 0; i < CFS_NODE_PLAYERS; i++) {
			if (node->players[i])
				cfs_player_stop(node->players[i]);
			node->players[i] = NULL;
		}
		pthread_mutex_unlock(&node->call_lock);
	}
	cfs_nodes_put(n);
}

/* a raw pty: its master, and a slave kept open; 0 or -errno */
static int make_pty(struct cfs_node *node)
{
	struct termios tio;
	struct stat st;
	int r;

	node->master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (node->master < 0)
		return -errno;
	if (unlockpt(node->master) < 0)
		goto fail;
	node->slave = ioctl(node->master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (node->slave < 0)
		goto fail;
	if (tcgetattr(node->master, &tio) < 0)
		goto fail;
	/* what a device gives: bytes as they are, no echo, no line editing */
	cfmakeraw(&tio);
	if (tcsetattr(node->master, TCSANOW, &tio) < 0 || fstat(node->slave, &st) < 0)
		goto fail;
	node->id_dev = st.st_dev;
	node->id_ino = st.st_ino;
	return 0;
fail:
	r = -errno;
	if (node->slave >= 0)
		close(node->slave);
	close(node->master);
	node->master = node->slave = -1;
	return r;
}

/* copy what @file (an O_PATH descriptor) holds into @fd: 0 or -errno */
static int copy_contents(int file, int fd)
{
	char path[64], buf[8192];
	ssize_t k;
	int in, r = 0;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", file);
	in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	while ((k = read(in, buf, sizeof(buf))) != 0) {
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 || write(fd, buf, (size_t)k) != k) {
			r = k < 0 ? -errno : -EIO;
			break;
		}
	}
	close(in);
	return r;
}

/*
 * A memfd for programs to read: empty (a block or USB device), or a copy
 * of @file's contents (a node whose recording gave them), which a program
 * may also open for writing (libusb opens usbdevfs nodes read-write), as
 * the /dev view of a user namespace does not let it.
 */
static int make_memfd(struct cfs_node *node, int file)
{
	struct stat st;
	int r;

	node->memfd = memfd_create(node->name, MFD_CLOEXEC);
	if (node->memfd < 0)
		return -errno;
	r = file >= 0 ? copy_contents(file, node->memfd) : 0;
	if (r == 0 && fstat(node->memfd, &st) < 0)
		r = -errno;
	if (r < 0) {
		close(node->memfd);
		node->memfd = -1;
		return r;
	}
	node->id_dev = st.st_dev;
	node->id_ino = st.st_ino;
	return 0;
}

/*
 * A new node of @type, @rdev (or the regular file @file), not in the list
 * yet; NULL: -errno in *@r.  Called without the table's lock: making a
 * pty opens /dev/ptmx and sets its terminal modes, calls the filter sends
 * to the supervisor when a thread of this process that reports to it
 * makes them (a Python test attaching a handler), and the supervisor
 * takes the lock.
 */
/*
 * The number of the device whose node is the regular file @file (a node
 * of recorded contents): the /dev/char or /dev/block link that leads to
 * it, as the environment makes one for each numbered node.  A program's
 * fstat() of it then says what the device is, as umockdev's does.
 * Return: true and *@type, *@rdev set; false for none (no number).
 */
static bool number_of_file(int root, const struct stat *file, mode_t *type, dev_t *rdev)
{
	static const char *const dirs[2] = { "dev/char", "dev/block" };

	for (int i = 0; i < 2; i++) {
		int fd = openat(root, dirs[i], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		struct dirent *de;
		DIR *d;

		if (fd < 0)
			continue;
		d = fdopendir(fd);
		if (!d) {
			close(fd);
			continue;
		}
		while ((de = readdir(d))) {
			unsigned int ma, mi;
			struct stat st;

			if (sscanf(de->d_name, "%u:%u", &ma, &mi) != 2 ||
			    fstatat(dirfd(d), de->d_name, &st, 0) < 0 ||
			    st.st_dev != file->st_dev || st.st_ino != file->st_ino)
				continue;
			*type = i ? S_IFBLK : S_IFCHR;
			*rdev = makedev(ma, mi);
			closedir(d);
			return true;
		}
		closedir(d);
	}
	return false;
}

static struct cfs_node *node_make(mode_t type, dev_t rdev, mode_t perm, const struct stat *file,
				  int filefd, const char *name, int *r)
{
	struct cfs_node *node = calloc(1, sizeof(*node));

	*r = -ENOMEM;
	if (!node)
		return NULL;
	*node = (struct cfs_node){ .type = type, .rdev = rdev, .perm = perm,
				   .dev_type = type, .master = -1, .slave = -1, .memfd = -1 };
	pthread_mutex_init(&node->call_lock, NULL);
	node->name = strdup(name);
	if (!node->name)
		goto fail;
	if (file) {
		node->file_dev = file->st_dev;
		node->file_ino = file->st_ino;
		/* a name without a number or contents (`N: test`): a pty, as umockdev's */
		*r = file->st_size ? make_memfd(node, filefd) : make_pty(node);
	} else if (type == S_IFBLK || major(rdev) == USB_DEVICE_MAJOR) {
		*r = make_memfd(node, -1);
	} else {
		*r = make_pty(node);
	}
	if (*r == 0)
		return node;
fail:
	pthread_mutex_destroy(&node->call_lock);
	free(node->name);
	free(node);
	return NULL;
}

/* under the table's lock: the node that is @type, @rdev or the file @file */
static struct cfs_node *find_locked(struct cfs_nodes *n, mode_t type, dev_t rdev,
				    const struct stat *file)
{
	struct cfs_node *node;

	for (node = n->list; node; node = node->next)
		if (file ? node->type == S_IFREG && node->file_dev == file->st_dev &&
			   node->file_ino == file->st_ino
			 : node->type == type && node->rdev == rdev)
			return node;
	return NULL;
}

/* the node, made when new (one that raced us in wins); it lives as long as the table */
static struct cfs_node *find_or_make(struct cfs_nodes *n, mode_t type, dev_t rdev, mode_t perm,
				     const struct stat *file, int filefd, const char *name, int *r)
{
	struct cfs_node *node, *made;

	*r = 0;
	pthread_mutex_lock(&n->lock);
	node = find_locked(n, type, rdev, file);
	pthread_mutex_unlock(&n->lock);
	if (node)
		return node;
	made = node_make(type, rdev, perm, file, filefd, name, r);
	if (!made)
		return NULL;
	if (file && !number_of_file(n->root, file, &made->dev_type, &made->rdev))
		made->dev_type = 0;
	pthread_mutex_lock(&n->lock);
	node = find_locked(n, type, rdev, file);
	if (!node) {
		node = made;
		node->next = n->list;
		n->list = node;
		made = NULL;
	}
	pthread_mutex_unlock(&n->lock);
	if (made)
		node_free(made);
	return node;
}

/**
 * cfs_nodes_by_number() - the node of a device, made when new
 * @type: S_IFCHR or S_IFBLK.
 * @rdev: its number.
 * @perm: its permission bits (what fstat() of it says).
 * @name: its path, for a new node's messages.
 * Return: the node (it lives as long as the table), or
 * NULL (no memory, no pty: errno).
 */
struct cfs_node *cfs_nodes_by_number(struct cfs_nodes *n, mode_t type, dev_t rdev, mode_t perm,
				     const char *name)
{
	struct cfs_node *node;
	int r;

	node = find_or_make(n, type, rdev, perm, NULL, -1, name, &r);
	if (!node)
		errno = -r;
	return node;
}

/**
 * cfs_nodes_by_identity() - the node a program's descriptor refers to
 * @dev: st_dev of the descriptor's file.
 * @ino: its st_ino.
 * Return: the node (as long as the table), or NULL (not one).
 */
struct cfs_node *cfs_nodes_by_identity(struct cfs_nodes *n, dev_t dev, ino_t ino)
{
	struct cfs_node *node;

	pthread_mutex_lock(&n->lock);
	for (node = n->list; node; node = node->next)
		if (node->id_ino == ino && node->id_dev == dev && (node->master >= 0 ||
		    node->memfd >= 0 || node->type == S_IFREG))
			break;
	pthread_mutex_unlock(&n->lock);
	return node;
}

/**
 * cfs_node_open() - a new open file of @node for a program's open(),
 * counted first (struct cfs_ioctl_call's @opens)
 * @flags: the program's open flags (access mode and O_NONBLOCK are kept).
 * Return: a descriptor (close-on-exec) to send, or -errno.
 */
int cfs_node_open(struct cfs_node *node, int flags)
{
	int keep = (flags & O_ACCMODE) | (flags & O_NONBLOCK) | O_NOCTTY | O_CLOEXEC;
	char path[64];
	int fd;

	/* counted, not told: a handler that blocks holds call_lock, and we are the supervisor */
	__atomic_add_fetch(&node->opens, 1, __ATOMIC_SEQ_CST);
	if (node->master >= 0) {
		fd = ioctl(node->master, TIOCGPTPEER, keep);
		return fd < 0 ? -errno : fd;
	}
	if (node->memfd < 0)
		return -ENODEV;
	/* an open file of its own (its own offset), of the same memfd */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", node->memfd);
	fd = open(path, keep | (flags & O_APPEND));
	return fd < 0 ? -errno : fd;
}

/*
 * The node at @path in the environment, made when new; a reference of the
 * caller's.  Return: the node, or NULL with -errno in *@r.
 */
static struct cfs_node *node_at(struct cfs_nodes *n, const char *path, int *r)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	struct cfs_node *node;
	struct stat st;
	int fd;

	*r = -EINVAL;
	if (!path || path[0] != '/')
		return NULL;
	fd = (int)syscall(SYS_openat2, n->root, path, &how, sizeof(how));
	if (fd < 0) {
		*r = -errno;
		return NULL;
	}
	node = NULL;
	*r = fstat(fd, &st) < 0 ? -errno : -ENODEV;
	if (*r != -ENODEV || st.st_dev != n->dev_dev)
		;
	else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		node = cfs_nodes_by_number(n, st.st_mode & S_IFMT, st.st_rdev, st.st_mode & 07777,
					   path);
	else if (S_ISREG(st.st_mode))
		node = cfs_nodes_by_file(n, &st, fd, path);
	else
		errno = ENODEV;
	if (!node && *r == -ENODEV && st.st_dev == n->dev_dev)
		*r = -errno;
	close(fd);
	return node;
}

/**
 * cfs_nodes_by_file() - the node of a regular file of the environment's
 * /dev, made when new: one of recorded contents, which opens as a memfd
 * holding a copy of them, or an empty one (a device with a name and no
 * number), which opens as a pty
 * @st: the file's.
 * @file: an O_PATH descriptor of it, to copy its contents from.
 * @name: its path, for messages.
 * Return: the node (as long as the table), or NULL (errno).
 */
struct cfs_node *cfs_nodes_by_file(struct cfs_nodes *n, const struct stat *st, int file,
				   const char *name)
{
	struct cfs_node *node;
	int r;

	node = find_or_make(n, S_IFREG, 0, st->st_mode & 07777, st, file, name, &r);
	if (!node)
		errno = -r;
	return node;
}

static int no_node(int r, const char *path, char *msg, size_t msgsize)
{
	if (r == -ENODEV)
		snprintf(msg, msgsize, "%s: not a device node of the environment", path);
	else
		snprintf(msg, msgsize, "%s: %s", path, strerror(-r));
	return r;
}

/**
 * cfs_nodes_set_handler() - @path's ioctl()s are answered by @h from now on
 *
 * Replaces (and frees) the handler it had.  Takes @h: on error, it is
 * freed.  Return: 0 or -errno (@msg says what).
 */
int cfs_nodes_set_handler(struct cfs_nodes *n, const char *path, struct cfs_ioctl_handler *h,
			  char *msg, size_t msgsize)
{
	struct cfs_ioctl_handler old;
	struct cfs_node *node;
	int r;

	node = node_at(n, path, &r);
	if (!node) {
		if (h->free)
			h->free(h->data);
		return no_node(r, path, msg, msgsize);
	}
	pthread_mutex_lock(&node->call_lock);
	old = node->handler;
	node->handler = *h;
	pthread_mutex_unlock(&node->call_lock);
	if (old.free)
		old.free(old.data);
	return 0;
}

/**
 * cfs_nodes_play() - play a script or evemu events on @path's other end
 *
 * The player starts at once (as umockdev's load_script()).  Return: 0,
 * -ENODEV (not a node, or one without another end: a block or USB
 * device), -ENOSPC (too many players on it), -EINVAL (a bad file: @msg
 * "NAME:LINE: reason"), or another -errno.
 */
int cfs_nodes_play(struct cfs_nodes *n, const char *path, enum cfs_player_kind kind,
		   const char *text, size_t len, const char *name, char *msg, size_t msgsize)
{
	struct cfs_player *p = NULL;
	struct cfs_node *node;
	int r, slot = -1;

	node = node_at(n, path, &r);
	if (!node)
		return no_node(r, path, msg, msgsize);
	r = -ENODEV;
	if (node->master < 0) {
		snprintf(msg, msgsize, "%s: a block or USB device node has no other end to play on",
			 path);
		goto out;
	}
	/* started without the node's lock: a call on the node must not wait for it */
	if (kind == CFS_PLAYER_EVEMU)
		r = cfs_evemu_start(text, len, name, node->master, &p, msg, msgsize);
	else
		r = cfs_script_start(text, len, name, node->master, &p, msg, msgsize);
	if (r < 0)
		goto out;
	pthread_mutex_lock(&node->call_lock);
	for (int i = 0; i < CFS_NODE_PLAYERS && slot < 0; i++)
		if (!node->players[i])
			slot = i;
	if (slot >= 0)
		node->players[slot] = p;
	pthread_mutex_unlock(&node->call_lock);
	if (slot < 0) {
		cfs_player_stop(p);
		snprintf(msg, msgsize, "%s: %d players at once is the most", path,
			 CFS_NODE_PLAYERS);
		r = -ENOSPC;
	}
out:
	return r;
}

/* the directories of @path from its byte @from on that are missing, made (0755) */
static int make_parents(const char *path, size_t from)
{
	char dir[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, len + 1);
	for (char *s = dir + from; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		*s = '/';
	}
	return 0;
}

/**
 * cfs_nodes_play_socket() - a Unix stream socket at @path (in the
 * environment) plays the script to each client.  Return: as
 * cfs_nodes_play().
 */
int cfs_nodes_play_socket(struct cfs_nodes *n, const char *path, const char *text, size_t len,
			  const char *name, char *msg, size_t msgsize)
{
	char where[PATH_MAX];
	struct cfs_player *p;
	int r, slot = -1;

	if (!path || path[0] != '/')
		return -EINVAL;
	/* the path as the environment's programs see it */
	snprintf(where, sizeof(where), "/proc/self/fd/%d%s", n->root, path);
	pthread_mutex_lock(&n->lock);
	for (int i = 0; i < CFS_NODE_PLAYERS && slot < 0; i++)
		if (!n->sockets[i])
			slot = i;
	pthread_mutex_unlock(&n->lock);
	if (slot < 0) {
		snprintf(msg, msgsize, "%s: %d socket scripts at once is the most", path,
			 CFS_NODE_PLAYERS);
		return -ENOSPC;
	}
	/* below /dev, its directories are made as umockdev makes them in its testbed's */
	if (!strncmp(path, "/dev/", 5)) {
		r = make_parents(where, strlen(where) - strlen(path) + 5);
		if (r < 0) {
			snprintf(msg, msgsize, "%s: cannot make its directory: %s", path,
				 strerror(-r));
			return r;
		}
	}
	r = cfs_socket_script_start(text, len, name, where, &p, msg, msgsize);
	if (r < 0)
		return r;
	pthread_mutex_lock(&n->lock);
	n->sockets[slot] = p;
	pthread_mutex_unlock(&n->lock);
	return 0;
}

/**
 * cfs_nodes_wait() - wait until every player of @path played to its end
 * Return: 0, -ENODEV, or the first player's error (@msg says what: a
 * write the script did not expect).
 */
int cfs_nodes_wait(struct cfs_nodes *n, const char *path, char *msg, size_t msgsize)
{
	struct cfs_player *players[CFS_NODE_PLAYERS];
	struct cfs_node *node;
	int r, first = 0;

	node = node_at(n, path, &r);
	if (!node)
		return no_node(r, path, msg, msgsize);
	pthread_mutex_lock(&node->call_lock);
	memcpy(players, node->players, sizeof(players));
	memset(node->players, 0, sizeof(node->players));
	pthread_mutex_unlock(&node->call_lock);
	for (int i = 0; i < CFS_NODE_PLAYERS; i++) {
		if (!players[i])
			continue;
		r = cfs_player_wait(players[i], first ? NULL : msg, first ? 0 : msgsize);
		if (r < 0 && !first)
			first = r;
		cfs_player_stop(players[i]);
	}
	return first;
}

/**
 * cfs_nodes_dev_fd() - the other end of @path (a pty's master), as
 * umockdev's get_dev_fd(): what a test writes there the program reads.
 * Return: the descriptor (the node's: do not close it), or -errno
 * (-ENODEV: not a node, or a block or USB device, which have none).
 */
int cfs_nodes_dev_fd(struct cfs_nodes *n, const char *path)
{
	struct cfs_node *node;
	int r;

	node = node_at(n, path, &r);
	if (!node)
		return r;
	r = node->master >= 0 ? node->master : -ENODEV;
	return r;
}

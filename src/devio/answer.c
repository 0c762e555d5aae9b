// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * answer.c - what the supervisor answers to a call the filter sent.
 *
 * open(): the path is read from the program's memory and resolved as the
 * program would, in its root and working directory (/proc/TID/root,
 * /proc/TID/cwd, /proc/TID/fd/N), without opening anything (O_PATH); a
 * device of the environment's /dev is answered with a new open file of
 * its node, sent into the program (SECCOMP_ADDFD_FLAG_SEND); anything
 * else continues to the kernel.  ioctl(): the program's descriptor is
 * looked at through /proc/TID/fd/N; one of a node with a handler is
 * answered by the handler, reading and writing the program's memory; any
 * other continues.  fstat() and statx() of a node's descriptor say what
 * the device is (character or block, its number), as the real device's
 * would.
 *
 * Continuing is safe here because nothing is being enforced: a program
 * that swaps a path between our look and the kernel's open gets the file
 * it named, as without the filter.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "devio-internal.h"

/* read the NUL-terminated string at @addr (a page at a time: the next one may be unmapped) */
static int read_path(const struct cfs_mem *mem, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	while (got < size) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		char *nul;
		int r;

		if (chunk > size - got)
			chunk = size - got;
		r = cfs_mem_read(mem, addr + got, buf + got, chunk);
		if (r < 0)
			return r;
		nul = memchr(buf + got, '\0', chunk);
		if (nul)
			return 0;
		got += chunk;
	}
	return -ENAMETOOLONG;
}

/* open the directory a path of the program is resolved from: 0..., or -errno */
static int base_dir(pid_t tid, int dirfd, const char *path)
{
	char p[64];
	int fd;

	if (path[0] == '/')
		snprintf(p, sizeof(p), "/proc/%d/root", tid);
	else if (dirfd == AT_FDCWD)
		snprintf(p, sizeof(p), "/proc/%d/cwd", tid);
	else
		snprintf(p, sizeof(p), "/proc/%d/fd/%d", tid, dirfd);
	fd = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* what @path of the program is, without opening it: an O_PATH descriptor of it, or -errno */
static int look(pid_t tid, int dirfd, const char *path, int flags, struct stat *st)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC | (flags & O_NOFOLLOW) };
	int base, fd, r;

	base = base_dir(tid, dirfd, path);
	if (base < 0)
		return base;
	/* an absolute path, and absolute links on the way, start at the program's root */
	if (path[0] == '/')
		how.resolve = RESOLVE_IN_ROOT;
	fd = (int)syscall(SYS_openat2, base, path, &how, sizeof(how));
	r = fd < 0 ? -errno : 0;
	close(base);
	if (r < 0)
		return r;
	if (fstat(fd, st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	return fd;
}

static void answer_open(struct cfs_nodes *n, int listener, const struct seccomp_notif *req)
{
	const struct seccomp_data *d = &req->data;
	char path[PATH_MAX];
	struct cfs_mem mem;
	struct cfs_node *node;
	struct stat st;
	uint64_t path_arg;
	int dirfd = AT_FDCWD, flags, fd, file;
	pid_t tid = (pid_t)req->pid;

	cfs_mem_process(&mem, &tid);
	if (d->nr == __NR_open) {
		path_arg = d->args[0];
		flags = (int)d->args[1];
	} else if (d->nr == __NR_openat) {
		dirfd = (int)d->args[0];
		path_arg = d->args[1];
		flags = (int)d->args[2];
	} else {
		struct open_how how;

		dirfd = (int)d->args[0];
		path_arg = d->args[1];
		if (d->args[3] < sizeof(how.flags) ||
		    cfs_mem_read(&mem, d->args[2], &how.flags, sizeof(how.flags)) < 0)
			goto pass;
		flags = (int)how.flags;
	}
	if (flags & (O_PATH | O_CREAT | O_DIRECTORY | O_TMPFILE))
		goto pass;
	if (read_path(&mem, path_arg, path, sizeof(path)) < 0 || !path[0])
		goto pass;
	/* the common case first: an absolute path that is not below /dev */
	if (path[0] == '/' && strncmp(path, "/dev/", 5) != 0)
		goto pass;
	file = look(tid, dirfd, path, flags, &st);
	if (file < 0)
		goto pass;
	node = NULL;
	errno = 0;
	if (st.st_dev != n->dev_dev)
		;
	else if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
		node = cfs_nodes_by_number(n, st.st_mode & S_IFMT, st.st_rdev, st.st_mode & 07777,
					   path);
	else if (S_ISREG(st.st_mode))
		node = cfs_nodes_by_file(n, &st, file, path);
	close(file);
	if (!node && !errno)
		goto pass;
	if (!node) {
		cfs_seccomp_answer(listener, req->id, -errno);
		return;
	}
	fd = cfs_node_open(node, flags);
	if (fd < 0) {
		cfs_seccomp_answer(listener, req->id, fd);
		return;
	}
	if (cfs_seccomp_valid(listener, req->id))
		cfs_seccomp_send_fd(listener, req->id, fd, flags & O_CLOEXEC);
	close(fd);
	return;
pass:
	cfs_seccomp_continue(listener, req->id);
}

/* the node a descriptor of the program refers to, or NULL */
static struct cfs_node *node_of_fd(struct cfs_nodes *n, pid_t tid, int fd)
{
	char p[64];
	struct stat st;

	snprintf(p, sizeof(p), "/proc/%d/fd/%d", tid, fd);
	if (stat(p, &st) < 0)
		return NULL;
	return cfs_nodes_by_identity(n, st.st_dev, st.st_ino);
}

/* the handler's answer to @req (a call on @node), given to the program */
static void call_handler(struct cfs_nodes *n, struct cfs_node *node, int listener,
			 const struct seccomp_notif *req)
{
	pid_t tid = (pid_t)req->pid;
	struct cfs_ioctl_call call;
	struct cfs_mem mem;
	long r = CFS_IOCTL_PASS;

	cfs_mem_process(&mem, &tid);
	call = (struct cfs_ioctl_call){
		.request = (unsigned int)req->data.args[1],
		.arg = req->data.args[2],
		.mem = &mem,
		.node = node->name,
		.pid = tid,
		.opens = __atomic_load_n(&node->opens, __ATOMIC_SEQ_CST),
	};
	pthread_mutex_lock(&node->call_lock);
	if (node->handler.ioctl)
		r = node->handler.ioctl(node->handler.data, &call);
	pthread_mutex_unlock(&node->call_lock);
	if (r != CFS_IOCTL_PASS)
		cfs_seccomp_answer(listener, req->id, r);
	else
		cfs_seccomp_continue(listener, req->id);
}

/* a call a handler that may block answers, in a thread of its own */
struct blocking_call {
	struct cfs_nodes *nodes;	/* a reference */
	struct cfs_node *node;		/* a reference */
	int listener;			/* a descriptor of its own: the supervisor may close its */
	struct seccomp_notif req;
};

static void *blocking_call_main(void *arg)
{
	struct blocking_call *b = arg;

	call_handler(b->nodes, b->node, b->listener, &b->req);
	cfs_nodes_put(b->nodes);
	close(b->listener);
	free(b);
	return NULL;
}

/* @node's handler may block: answer in a thread; false when none could start */
static bool call_in_thread(struct cfs_nodes *n, struct cfs_node *node, int listener,
			   const struct seccomp_notif *req)
{
	struct blocking_call *b = malloc(sizeof(*b));
	int r;

	if (!b)
		return false;
	*b = (struct blocking_call){ .nodes = n, .node = node, .req = *req };
	b->listener = fcntl(listener, F_DUPFD_CLOEXEC, 3);
	if (b->listener < 0) {
		free(b);
		return false;
	}
	cfs_nodes_get(n);
	r = cfs_thread_create(NULL, true, blocking_call_main, b);
	if (r < 0) {
		cfs_nodes_put(n);
		close(b->listener);
		free(b);
		return false;
	}
	return true;
}

static void answer_ioctl(struct cfs_nodes *n, int listener, const struct seccomp_notif *req)
{
	pid_t tid = (pid_t)req->pid;
	struct cfs_node *node = node_of_fd(n, tid, (int)req->data.args[0]);

	if (!node) {
		cfs_seccomp_continue(listener, req->id);
		return;
	}
	if (node->handler.may_block) {
		if (call_in_thread(n, node, listener, req))
			return;
		cfs_seccomp_answer(listener, req->id, -ENOMEM);
		return;
	}
	call_handler(n, node, listener, req);
}

/* fstat(fd, buf), newfstatat(fd, "", buf, AT_EMPTY_PATH), statx(fd, "", AT_EMPTY_PATH, mask, buf) */
static void answer_stat(struct cfs_nodes *n, int listener, const struct seccomp_notif *req)
{
	const struct seccomp_data *d = &req->data;
	pid_t tid = (pid_t)req->pid;
	struct cfs_node *node;
	struct cfs_mem mem;
	char p[64], c;
	uint64_t buf;
	int fd = (int)d->args[0];
	long r;

	cfs_mem_process(&mem, &tid);
	if (d->nr != __NR_fstat) {
		/* of a descriptor only: an empty path */
		if (cfs_mem_read(&mem, d->args[1], &c, 1) < 0 || c)
			goto pass;
	}
	node = node_of_fd(n, tid, fd);
	if (!node)
		goto pass;
	/* a name without a number (a pty): as umockdev's, what the pty is */
	if (!node->dev_type) {
		goto pass;
	}
	snprintf(p, sizeof(p), "/proc/%d/fd/%d", tid, fd);
	if (d->nr == __NR_statx) {
		struct statx stx;

		buf = d->args[4];
		r = statx(AT_FDCWD, p, 0, (unsigned int)d->args[3], &stx) < 0 ? -errno : 0;
		stx.stx_mode = (uint16_t)(node->dev_type | node->perm);
		stx.stx_rdev_major = major(node->rdev);
		stx.stx_rdev_minor = minor(node->rdev);
		if (node->type != S_IFREG)	/* recorded contents keep their size */
			stx.stx_size = 0;
		if (r == 0)
			r = cfs_mem_write(&mem, buf, &stx, sizeof(stx));
	} else {
		struct stat st;

		buf = d->nr == __NR_fstat ? d->args[1] : d->args[2];
		r = stat(p, &st) < 0 ? -errno : 0;
		st.st_mode = node->dev_type | node->perm;
		st.st_rdev = node->rdev;
		if (node->type != S_IFREG)
			st.st_size = 0;
		if (r == 0)
			r = cfs_mem_write(&mem, buf, &st, sizeof(st));
	}
	if (cfs_seccomp_valid(listener, req->id))
		cfs_seccomp_answer(listener, req->id, r);
	return;
pass:
	cfs_seccomp_continue(listener, req->id);
}

/**
 * cfs_answer() - answer one call the filter sent
 * @n: the nodes of the caller's environment; NULL: none (every call continues).
 * @listener: where @req came from.
 * @req: the call.
 *
 * Every call is answered (or continued), so no program waits for ever.
 */
void cfs_answer(struct cfs_nodes *n, int listener, const struct seccomp_notif *req)
{
	if (!n) {
		cfs_seccomp_continue(listener, req->id);
		return;
	}
	switch (req->data.nr) {
	case __NR_open:
	case __NR_openat:
	case __NR_openat2:
		answer_open(n, listener, req);
		break;
	case __NR_ioctl:
		answer_ioctl(n, listener, req);
		break;
	case __NR_fstat:
	case __NR_newfstatat:
	case __NR_statx:
		answer_stat(n, listener, req);
		break;
	default:
		cfs_seccomp_continue(listener, req->id);
	}
}

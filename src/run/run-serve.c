// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * run-serve.c - an environment's nodes, for a process inside it.
 *
 * A program classfs-run started reports its calls to classfs-run's
 * supervisor, and the kernel lets it have no supervisor of its own: a
 * Python test run as `classfs-run -- python3 -m pytest` cannot load a
 * recording into, or answer the ioctls of, nodes it does not supervise.
 * So the environment serves its nodes on a Unix socket, named to its
 * programs by $CLASSFS_NODES_SOCKET (a directory of the caller's, 0700):
 * a recording's file is passed as a descriptor, a node's other end comes
 * back as one, and a connection that attaches to a node carries that
 * node's ioctls to the process and its answers back.
 *
 * Messages (SOCK_SEQPACKET, one each way per request, host byte order):
 *   request:  struct node_request, then "TARGET\0NAME\0"; a descriptor with LOAD
 *   reply:    struct node_reply, then "MESSAGE\0"; a descriptor with DEV_FD
 *   after ATTACH's reply, the connection is the node's: each ioctl comes
 *   as struct node_call then "NODE\0", answered by struct node_answer
 *   (CLASSFS_IOCTL_PASS: the descriptor answers).  The process reads and
 *   writes the caller's memory itself (/proc/PID/mem: it is the program,
 *   or its parent).  Closing the connection detaches the handler.
 *
 * The attached handler waits for a process that reports to the
 * supervisor, so its calls are answered in threads of their own
 * (may_block): the process's own calls go on being answered meanwhile.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "classfs-internal/devio.h"
#include "run-internal.h"

enum { NODE_LOAD = 1, NODE_DEV_FD, NODE_WAIT, NODE_ATTACH, NODE_DETACH };

struct node_request {
	uint32_t op;
	int32_t kind;
};

struct node_reply {
	int32_t status;
};

struct node_call {
	uint64_t request;
	uint64_t arg;
	int32_t pid;
};

struct node_answer {
	int64_t result;
};

#define NODE_MSG_MAX 8192
#define NODE_LOAD_MAX (256u << 20)

struct cfs_node_server {
	pthread_mutex_t lock;
	unsigned refs;			/* the owner's, each connection's */
	struct cfs_nodes *nodes;	/* a reference */
	int root;			/* the environment's root directory */
	int listen_fd;
	char dir[PATH_MAX];		/* 0700, the socket in it */
	bool own_dir;			/* made here: removed with the socket */
	pthread_t thread;
};

static void server_put(struct cfs_node_server *s)
{
	unsigned refs;

	pthread_mutex_lock(&s->lock);
	refs = --s->refs;
	pthread_mutex_unlock(&s->lock);
	if (refs)
		return;
	cfs_nodes_put(s->nodes);
	close(s->root);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* @head then @text (with its NUL), and @passed when >= 0; 0 or -errno */
static int send_msg(int fd, const void *head, size_t hlen, const char *text, int passed)
{
	struct iovec iov[2] = { { .iov_base = (void *)head, .iov_len = hlen },
				{ .iov_base = (void *)text, .iov_len = strlen(text) + 1 } };

	return cfs_send_fd(fd, iov, 2, passed);
}

static int reply(int fd, int status, const char *msg, int passed)
{
	struct node_reply r = { .status = status };

	return send_msg(fd, &r, sizeof(r), msg, passed);
}

/* all of what @fd holds, up to NODE_LOAD_MAX: 0 or -errno */
static int read_all(int fd, char **data, size_t *len)
{
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k;

		if (n == cap) {
			char *more = cap < NODE_LOAD_MAX ? realloc(buf, cap * 2) : NULL;

			if (!more) {
				free(buf);
				return cap < NODE_LOAD_MAX ? -ENOMEM : -EFBIG;
			}
			buf = more;
			cap *= 2;
		}
		k = read(fd, buf + n, cap - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			free(buf);
			return -errno;
		}
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*data = buf;
	*len = n;
	return 0;
}

/*
 * A node's ioctls, carried to the process on the other end of @fd, once
 * it has the reply to its ATTACH (@ready): a call may come before that,
 * from another program, and must not arrive first.
 */
struct remote {
	int fd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool ready;
};

static long remote_ioctl(void *data, const struct cfs_ioctl_call *call)
{
	struct remote *r = data;
	struct node_call c = { .request = call->request, .arg = call->arg, .pid = call->pid };
	struct node_answer a;
	int passed;
	ssize_t n;

	pthread_mutex_lock(&r->lock);
	while (!r->ready)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	if (send_msg(r->fd, &c, sizeof(c), call->node ? call->node : "", -1) < 0)
		return CFS_IOCTL_PASS;
	n = cfs_recv_fd(r->fd, &a, sizeof(a), &passed);
	if (passed >= 0)
		close(passed);
	/* gone: the node is as if detached */
	if (n != sizeof(a))
		return CFS_IOCTL_PASS;
	return a.result == CLASSFS_IOCTL_PASS ? CFS_IOCTL_PASS : (long)a.result;
}

static void remote_free(void *data)
{
	struct remote *r = data;

	close(r->fd);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/*
 * One request of connection @fd; Return: 0 to read the next one, 1 when
 * the connection became a node's (@fd is the handler's now), < 0 to end.
 */
static int serve_one(struct cfs_node_server *s, int fd)
{
	char buf[NODE_MSG_MAX + 1], msg[512] = "", *target, *name, *data = NULL;
	struct node_request rq;
	size_t len = 0, tl;
	int passed, r;
	ssize_t n;

	n = cfs_recv_fd(fd, buf, NODE_MSG_MAX, &passed);
	if (n < (ssize_t)sizeof(rq)) {
		if (passed >= 0)
			close(passed);
		return n < 0 ? (int)n : -EPIPE;
	}
	buf[n] = '\0';
	memcpy(&rq, buf, sizeof(rq));
	target = buf + sizeof(rq);
	tl = strlen(target);
	name = target + tl < buf + n ? target + tl + 1 : target + tl;
	switch (rq.op) {
	case NODE_LOAD:
		if (passed < 0) {
			r = -EINVAL;
			snprintf(msg, sizeof(msg), "a recording comes as a descriptor");
			break;
		}
		if (rq.kind != CLASSFS_RECORDING_PCAP) {
			r = read_all(passed, &data, &len);
			if (r < 0) {
				snprintf(msg, sizeof(msg), "%s: %s", name, strerror(-r));
				break;
			}
		}
		{
			char file[64];

			/* a capture is read by libpcap, from the descriptor passed */
			snprintf(file, sizeof(file), "/proc/self/fd/%d", passed);
			r = cfs_run_load(s->nodes, s->root, (enum classfs_recording)rq.kind,
					 target, file, data, len, name, msg, sizeof(msg));
		}
		free(data);
		break;
	case NODE_DEV_FD:
		r = cfs_nodes_dev_fd(s->nodes, target);
		if (passed >= 0)
			close(passed);
		return reply(fd, r < 0 ? r : 0, r < 0 ? strerror(-r) : "", r) < 0 ? -EPIPE : 0;
	case NODE_WAIT:
		r = cfs_nodes_wait(s->nodes, target, msg, sizeof(msg));
		break;
	case NODE_ATTACH: {
		struct cfs_ioctl_handler h = { .ioctl = remote_ioctl, .free = remote_free,
					       .may_block = true };
		struct remote *rm = calloc(1, sizeof(*rm));

		r = -ENOMEM;
		if (!rm)
			break;
		/* its own descriptor of the connection: a refusal below frees the handler */
		rm->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (rm->fd < 0) {
			r = -errno;
			free(rm);
			break;
		}
		pthread_mutex_init(&rm->lock, NULL);
		pthread_cond_init(&rm->cond, NULL);
		h.data = rm;
		r = cfs_nodes_set_handler(s->nodes, target, &h, msg, sizeof(msg));
		if (r < 0)
			break;
		if (passed >= 0)
			close(passed);
		r = reply(fd, 0, "", -1);
		/* from here the connection is the handler's, calls may go */
		pthread_mutex_lock(&rm->lock);
		rm->ready = true;
		pthread_cond_broadcast(&rm->cond);
		pthread_mutex_unlock(&rm->lock);
		close(fd);
		return r < 0 ? -EBADF : 1;
	}
	case NODE_DETACH: {
		struct cfs_ioctl_handler none = { 0 };

		r = cfs_nodes_set_handler(s->nodes, target, &none, msg, sizeof(msg));
		break;
	}
	default:
		r = -EINVAL;
		snprintf(msg, sizeof(msg), "unknown request %u", rq.op);
	}
	if (passed >= 0)
		close(passed);
	if (r < 0 && !msg[0])
		snprintf(msg, sizeof(msg), "%s", strerror(-r));
	return reply(fd, r, r < 0 ? msg : "", -1) < 0 ? -EPIPE : 0;
}

struct conn {
	struct cfs_node_server *s;
	int fd;
};

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	int r;

	while ((r = serve_one(c->s, c->fd)) == 0)
		;
	/* 1, -EBADF: the node's handler has the connection (its own descriptor of it) */
	if (r < 0 && r != -EBADF)
		close(c->fd);
	server_put(c->s);
	free(c);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct cfs_node_server *s = arg;

	for (;;) {
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			break;		/* shut down */
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		pthread_mutex_lock(&s->lock);
		s->refs++;
		pthread_mutex_unlock(&s->lock);
		*c = (struct conn){ .s = s, .fd = fd };
		if (cfs_thread_create(NULL, true, conn_main, c) < 0) {
			close(fd);
			free(c);
			server_put(s);
		}
	}
	return NULL;
}

/**
 * cfs_node_server_start() - serve @nodes on a socket "nodes" in @dir (the
 * environment's own directory), or when "" in a new directory of $TMPDIR
 * (or /tmp)
 * @root: the environment's root directory (duplicated).
 * @out: receives the server.
 * @path: receives the socket's path.
 * Return: 0 or -errno.
 */
int cfs_node_server_start(struct cfs_nodes *nodes, int root, const char *dir,
			  struct cfs_node_server **out, char *path, size_t size)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *tmp = getenv("TMPDIR");
	struct cfs_node_server *s;
	int r;

	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	*s = (struct cfs_node_server){ .refs = 1, .nodes = nodes, .listen_fd = -1 };
	if (dir[0]) {
		snprintf(s->dir, sizeof(s->dir), "%s", dir);
	} else {
		snprintf(s->dir, sizeof(s->dir), "%s/classfs-nodes.XXXXXX",
			 tmp && tmp[0] == '/' ? tmp : "/tmp");
		if (!mkdtemp(s->dir)) {
			r = -errno;
			free(s);
			return r;
		}
		s->own_dir = true;
	}
	r = snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/nodes", s->dir);
	if (r >= (int)sizeof(sa.sun_path) || (size_t)r >= size) {
		r = -ENAMETOOLONG;
		goto fail_dir;
	}
	s->root = fcntl(root, F_DUPFD_CLOEXEC, 3);
	s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->root < 0 || s->listen_fd < 0 ||
	    bind(s->listen_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(s->listen_fd, 16) < 0) {
		r = -errno;
		goto fail;
	}
	pthread_mutex_init(&s->lock, NULL);
	r = cfs_thread_create(&s->thread, false, accept_main, s);
	if (r < 0) {
		pthread_mutex_destroy(&s->lock);
		goto fail;
	}
	cfs_nodes_get(nodes);
	snprintf(path, size, "%s", sa.sun_path);
	*out = s;
	return 0;
fail:
	if (s->listen_fd >= 0)
		close(s->listen_fd);
	if (s->root >= 0)
		close(s->root);
	unlink(sa.sun_path);
fail_dir:
	if (s->own_dir)
		rmdir(s->dir);
	free(s);
	return r;
}

/**
 * cfs_node_server_stop() - no more connections; the socket and its
 * directory go.  Connections in flight end with the nodes' release
 * (their waits return) or their process.
 */
void cfs_node_server_stop(struct cfs_node_server *s)
{
	char p[PATH_MAX + 8];

	if (!s)
		return;
	shutdown(s->listen_fd, SHUT_RDWR);
	pthread_join(s->thread, NULL);
	close(s->listen_fd);
	snprintf(p, sizeof(p), "%s/nodes", s->dir);
	unlink(p);
	if (s->own_dir)
		rmdir(s->dir);
	server_put(s);
}

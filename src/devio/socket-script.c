// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * socket-script.c - a Unix stream socket backed by a read/write script
 * (umockdev's load_socket_script): the player listens at a path, and
 * plays the script from its start to each client that connects, each in
 * a session thread of its own, several at a time if several connect.  A
 * session's end closes the client's connection.
 *
 * The listener reaps the sessions that ended as it goes, and joins the
 * rest when stopped; the stop eventfd all of them poll ends every wait
 * at once.  cfs_player_wait() returns when a session ended and none is
 * under way, with the first failure any session had.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "classfs-internal/devio.h"
#include "player.h"

/* how long the listener waits before accepting again after a failure */
#define ACCEPT_RETRY_NS 100000000ull

struct session {
	struct socket_player *sp;
	pthread_t thread;
	int fd;
	bool ended;		/* under the player's lock */
	struct session *next;
};

struct socket_player {
	struct cfs_player base;
	struct cfs_script *script;
	char *path;
	int lfd;
	dev_t dev;		/* the socket file made, removed only if still it */
	ino_t ino;
	struct session *sessions;	/* the listener's alone */
	/* under base.lock: */
	unsigned running, ended;
	bool failed;
};

static void *session_thread(void *arg)
{
	struct session *se = arg;
	struct socket_player *sp = se->sp;
	char msg[PLAYER_MSG_MAX] = "";
	int r;

	r = script_play(sp->script, se->fd, sp->base.stopfd, msg, sizeof(msg));
	/* the client sees the end of the script as the end of the connection */
	shutdown(se->fd, SHUT_RDWR);

	pthread_mutex_lock(&sp->base.lock);
	se->ended = true;
	sp->running--;
	sp->ended++;
	if (r && r != -ECANCELED && !sp->failed) {
		sp->failed = true;
		sp->base.result = r;
		snprintf(sp->base.msg, sizeof(sp->base.msg), "%s", msg);
	}
	if (!sp->running) {
		sp->base.done = true;
		pthread_cond_broadcast(&sp->base.cond);
	}
	pthread_mutex_unlock(&sp->base.lock);
	return NULL;
}

/* join and free the sessions that ended (all of them: @all) */
static void reap(struct socket_player *sp, bool all)
{
	struct session **pp = &sp->sessions;

	for (;;) {
		struct session *se;
		bool ended;

		pthread_mutex_lock(&sp->base.lock);
		se = *pp;
		ended = se && se->ended;
		pthread_mutex_unlock(&sp->base.lock);
		if (!se)
			return;
		if (!ended && !all) {
			pp = &se->next;
			continue;
		}
		/* only the listener changes the list: unlinking needs no lock */
		pthread_join(se->thread, NULL);
		*pp = se->next;
		close(se->fd);
		free(se);
	}
}

static void start_session(struct socket_player *sp, int fd)
{
	struct session *se = calloc(1, sizeof(*se));
	int r;

	if (!se) {
		cfs_devio_log("%s: a client refused: out of memory", sp->path);
		close(fd);
		return;
	}
	se->sp = sp;
	se->fd = fd;
	pthread_mutex_lock(&sp->base.lock);
	sp->running++;
	sp->base.done = false;
	pthread_mutex_unlock(&sp->base.lock);
	r = player_spawn(&se->thread, session_thread, se);
	if (r) {
		cfs_devio_log("%s: a client refused: no thread: %s", sp->path, strerror(-r));
		pthread_mutex_lock(&sp->base.lock);
		sp->running--;
		sp->base.done = sp->ended && !sp->running;
		pthread_mutex_unlock(&sp->base.lock);
		close(fd);
		free(se);
		return;
	}
	se->next = sp->sessions;
	sp->sessions = se;
}

static void *listen_thread(void *arg)
{
	struct socket_player *sp = arg;
	int stopfd = sp->base.stopfd;

	while (!player_poll(stopfd, sp->lfd, POLLIN)) {
		int fd = accept4(sp->lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		reap(sp, false);
		if (fd >= 0) {
			start_session(sp, fd);
			continue;
		}
		if (errno == EAGAIN || errno == EINTR || errno == ECONNABORTED)
			continue;
		/* out of descriptors or memory: wait rather than spin */
		cfs_devio_log("%s: accept: %s", sp->path, strerror(errno));
		if (player_sleep_until(stopfd, player_now_ns() + ACCEPT_RETRY_NS))
			break;
	}
	reap(sp, true);
	return NULL;
}

static void socket_free(struct socket_player *sp)
{
	script_free(sp->script);
	free(sp->path);
	free(sp);
}

static void unlink_ours(struct socket_player *sp)
{
	struct stat st;

	/* someone else's file at the path since is not ours to remove */
	if (!lstat(sp->path, &st) && st.st_dev == sp->dev && st.st_ino == sp->ino)
		unlink(sp->path);
}

static void socket_release(struct cfs_player *p)
{
	struct socket_player *sp = (struct socket_player *)p;

	close(sp->lfd);
	unlink_ours(sp);
	player_destroy(p);
	socket_free(sp);
}

/**
 * cfs_socket_script_start() - a Unix stream socket that plays a script to
 * each client
 * @text: the script (umockdev's read/write format; need not end in NUL)
 * @len: its length
 * @name: its name in messages
 * @path: where the socket is made (its folder must exist; nothing may be
 *        there yet); cfs_player_stop() removes it
 * @out: filled with the player, for cfs_player_wait() and cfs_player_stop()
 * @msg: filled with the reason of a failure
 * @msgsize: the size of @msg
 *
 * Return: 0; -EINVAL (@msg "NAME:LINE: reason"); -ENAMETOOLONG for a
 * @path that does not fit a socket address; -EADDRINUSE when @path
 * exists; -ENOMEM; another -errno of making the socket.
 */
int cfs_socket_script_start(const char *text, size_t len, const char *name, const char *path,
			    struct cfs_player **out, char *msg, size_t msgsize)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct socket_player *sp;
	struct stat st;
	int r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(msg, msgsize, "%s: too long for a socket's address", path);
		return -ENAMETOOLONG;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	sp = calloc(1, sizeof(*sp));
	if (!sp) {
		snprintf(msg, msgsize, "%s: out of memory", path);
		return -ENOMEM;
	}
	sp->lfd = -1;
	sp->path = strdup(path);
	if (!sp->path) {
		snprintf(msg, msgsize, "%s: out of memory", path);
		r = -ENOMEM;
		goto fail;
	}
	r = script_parse(text, len, name, &sp->script, msg, msgsize);
	if (r)
		goto fail;
	sp->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (sp->lfd < 0) {
		r = -errno;
		snprintf(msg, msgsize, "%s: socket: %s", path, strerror(-r));
		goto fail;
	}
	if (bind(sp->lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		r = -errno;
		snprintf(msg, msgsize, "%s: bind: %s", path, strerror(-r));
		goto fail_close;
	}
	if (stat(path, &st) < 0 || listen(sp->lfd, SOMAXCONN) < 0) {
		r = -errno;
		snprintf(msg, msgsize, "%s: listen: %s", path, strerror(-r));
		goto fail_unlink;
	}
	sp->dev = st.st_dev;
	sp->ino = st.st_ino;
	r = player_init(&sp->base, socket_release);
	if (r)
		goto fail_unlink;
	r = player_spawn(&sp->base.thread, listen_thread, sp);
	if (r) {
		player_destroy(&sp->base);
		snprintf(msg, msgsize, "%s: cannot start the player: %s", path, strerror(-r));
		goto fail_unlink;
	}
	*out = &sp->base;
	return 0;

fail_unlink:
	unlink(path);
fail_close:
	close(sp->lfd);
fail:
	socket_free(sp);
	return r;
}

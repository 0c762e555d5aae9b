/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * player.h - what the players (script.c, evemu.c, socket-script.c) share:
 * the player's thread, its stop signal and its outcome (player.c), and a
 * parsed read/write script (script.c), which the socket player plays to
 * each of its clients.
 *
 * Every wait of a player (a delay, a descriptor not yet readable or
 * writable) is a poll() that also watches the player's stop eventfd, so
 * cfs_player_stop() ends any of them at once.  The eventfd is written
 * once and never read: every poll after the stop sees it.
 */
#ifndef CLASSFS_DEVIO_PLAYER_H
#define CLASSFS_DEVIO_PLAYER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PLAYER_MSG_MAX 1024

/**
 * struct cfs_player - what every kind of player has
 * @thread: the player's thread (the listener for a socket player)
 * @stopfd: eventfd written by cfs_player_stop()
 * @release: after the thread is joined: free the kind's state and @p
 * @lock: guards @done, @result and @msg
 * @cond: signalled when @done becomes true
 * @done: what cfs_player_wait() waits for
 * @result: 0 or the -errno that ended the play
 * @msg: the reason of a failing @result ("FILE:LINE: ...")
 */
struct cfs_player {
	pthread_t thread;
	int stopfd;
	void (*release)(struct cfs_player *p);
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	int result;
	char msg[PLAYER_MSG_MAX];
};

/* player.c */
int player_init(struct cfs_player *p, void (*release)(struct cfs_player *p));
void player_destroy(struct cfs_player *p);
int player_spawn(pthread_t *thread, void *(*fn)(void *), void *arg);
void player_finish(struct cfs_player *p, int result, const char *msg);
uint64_t player_now_ns(void);
int player_sleep_until(int stopfd, uint64_t deadline_ns);
int player_poll(int stopfd, int fd, short events);
int player_write_all(int stopfd, int fd, const void *buf, size_t len);
int player_nonblock(int fd, int *oldflags);
void player_restore_flags(int fd, int oldflags);

/*
 * script.c: a parsed read/write script, immutable once parsed (the
 * socket player's sessions share it)
 */
struct cfs_script;
int script_parse(const char *text, size_t len, const char *name, struct cfs_script **out,
		 char *msg, size_t msgsize);
void script_free(struct cfs_script *s);
int script_play(const struct cfs_script *s, int fd, int stopfd, char *msg, size_t msgsize);

#endif

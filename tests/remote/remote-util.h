/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * remote-util.h - start a classfsd of its own for a test (temporary
 * socket and mount point), stop it, and wait for conditions.
 *
 * The daemon gets PR_SET_PDEATHSIG, so it ends (and unmounts) even when
 * the test dies; stop_daemon() checks that it exits 0, removed its socket
 * and unmounted.
 */
#ifndef CLASSFS_TESTS_REMOTE_UTIL_H
#define CLASSFS_TESTS_REMOTE_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <classfs/client.h>

#include "../read-util.h"

/*
 * The sanitizers' builds (gcc says so with __SANITIZE_*__, clang with
 * __has_feature): under either the daemon's memory is not its own to
 * judge (shadow memory, ASan's quarantine and redzones), so memory
 * bounds are printed, not checked; under TSan a process has a thread of
 * the runtime's from its start, so it cannot enter namespaces
 * (classfs-run: EINVAL).
 */
#if defined(__has_feature)
#define CFS_TEST_FEATURE(x) __has_feature(x)
#else
#define CFS_TEST_FEATURE(x) 0
#endif
#if defined(__SANITIZE_THREAD__) || CFS_TEST_FEATURE(thread_sanitizer)
#define CFS_TEST_TSAN 1
#else
#define CFS_TEST_TSAN 0
#endif
#if defined(__SANITIZE_ADDRESS__) || CFS_TEST_FEATURE(address_sanitizer) || CFS_TEST_TSAN
#define CFS_TEST_SANITIZED 1
#else
#define CFS_TEST_SANITIZED 0
#endif

struct daemon {
	pid_t pid;
	char dir[64];
	char sock[128];
	char mnt[128];
	bool mounted;
};

static inline double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static inline const char *classfsd_path(void)
{
	const char *p = getenv("CLASSFSD");

	return p ? p : "./programs/classfsd/classfsd";
}

static inline bool sock_alive(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;
	bool ok;

	if (strlen(path) >= sizeof(sa.sun_path))
		return false;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	memcpy(sa.sun_path, path, strlen(path));
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

static inline bool is_mounted(const char *dir)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen("/proc/self/mounts", "re");

	while (f && fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' ');

		if (sp && !strncmp(sp + 1, dir, strlen(dir)) && sp[1 + strlen(dir)] == ' ')
			found = true;
	}
	if (f)
		fclose(f);
	return found;
}

/* exec classfsd on @d's socket (and mount, if @mount) with extra arguments (NULL-terminated) */
static inline int daemon_exec(struct daemon *d, bool mount, const char *const *extra)
{
	const char *argv[32];
	int argc = 0;

	argv[argc++] = classfsd_path();
	argv[argc++] = "--socket";
	argv[argc++] = d->sock;
	if (mount) {
		argv[argc++] = "--mount";
		argv[argc++] = d->mnt;
	}
	for (int i = 0; extra && extra[i] && argc < 30; i++)
		argv[argc++] = extra[i];
	argv[argc] = NULL;
	d->pid = fork();
	if (d->pid < 0)
		return -errno;
	if (d->pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (!getenv("CLASSFSD_LOG")) {
			int fd = open("/dev/null", O_WRONLY);

			if (fd >= 0)
				dup2(fd, 2);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	for (double t0 = now_s(); now_s() - t0 < 10;) {
		int st;

		if (sock_alive(d->sock) && (!mount || is_mounted(d->mnt))) {
			d->mounted = mount;
			return 0;
		}
		if (waitpid(d->pid, &st, WNOHANG) == d->pid) {
			d->pid = 0;
			return -ECHILD;
		}
		usleep(10000);
	}
	return -ETIMEDOUT;
}

static inline int start_daemon(struct daemon *d, bool mount, const char *const *extra)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "/tmp/classfsd-test-XXXXXX");
	if (!mkdtemp(d->dir))
		return -errno;
	chmod(d->dir, 0755);	/* other uids reach the socket (ownership tests) */
	snprintf(d->sock, sizeof(d->sock), "%s/control", d->dir);
	snprintf(d->mnt, sizeof(d->mnt), "%s/mnt", d->dir);
	if (mount && mkdir(d->mnt, 0755) < 0)
		return -errno;
	return daemon_exec(d, mount, extra);
}

/* SIGTERM; 0 when it exited 0 having removed its socket and unmounted */
static inline int kill_daemon(struct daemon *d)
{
	int st = 0, r = 0;

	if (d->pid > 0) {
		kill(d->pid, SIGTERM);
		if (waitpid(d->pid, &st, 0) != d->pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			r = -EIO;
		d->pid = 0;
	}
	if (access(d->sock, F_OK) == 0)
		r = -EEXIST;
	if (d->mounted && is_mounted(d->mnt))
		r = -EBUSY;
	return r;
}

static inline int stop_daemon(struct daemon *d)
{
	int r = kill_daemon(d);

	if (d->mounted && is_mounted(d->mnt))
		umount2(d->mnt, MNT_DETACH);
	unlink(d->sock);
	rmdir(d->mnt);
	rmdir(d->dir);
	return r;
}

/* a field of /proc/PID/status (kB for memory), -1 when missing */
static inline long proc_status(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* read a file (through the mount) in one read(); length or -errno */
static inline ssize_t read_file(const char *path, char *buf, size_t size)
{
	return tu_read_once(path, buf, size);
}

/* ---- an event log for subscriber callbacks ---- */

struct evlog {
	uint64_t *seq;
	char **devpath;
	int *action;
	size_t n, cap;
	uint64_t gap_first, gap_last;	/* the first gap's start, the last one's end */
	uint64_t range[8][2];		/* each gap told, the first 8 */
	unsigned int gaps;
	atomic_ullong last;
};

static inline void evlog_add(const struct classfs_uevent *ev, void *data)
{
	struct evlog *l = data;

	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 1024;
		l->seq = realloc(l->seq, l->cap * sizeof(*l->seq));
		l->devpath = realloc(l->devpath, l->cap * sizeof(*l->devpath));
		l->action = realloc(l->action, l->cap * sizeof(*l->action));
	}
	l->seq[l->n] = ev->seqnum;
	l->devpath[l->n] = strdup(ev->devpath);
	l->action[l->n] = ev->action;
	l->n++;
	atomic_store(&l->last, ev->seqnum);
}

static inline void evlog_gap(uint64_t first, uint64_t last, void *data)
{
	struct evlog *l = data;

	if (!l->gaps)
		l->gap_first = first;
	l->gap_last = last;
	if (l->gaps < 8) {
		l->range[l->gaps][0] = first;
		l->range[l->gaps][1] = last;
	}
	l->gaps++;
	atomic_store(&l->last, last);
}

static inline void evlog_free(struct evlog *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->devpath[i]);
	free(l->seq);
	free(l->devpath);
	free(l->action);
	memset(l, 0, sizeof(*l));
}

/* how many events of @action @l holds */
static inline size_t evlog_count(const struct evlog *l, int action)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += l->action[i] == action;
	return n;
}

/* the position of the first event of @action for @devpath in @l, or -1 */
static inline long evlog_find(const struct evlog *l, int action, const char *devpath)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->action[i] == action && !strcmp(l->devpath[i], devpath))
			return (long)i;
	return -1;
}

static inline void dispatch_until(struct classfs_client *c, struct evlog *l, uint64_t seq, double secs)
{
	for (double t0 = now_s(); atomic_load(&l->last) < seq && now_s() - t0 < secs;)
		classfs_client_dispatch(c, 100);
}

#endif

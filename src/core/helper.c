// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * helper.c - kernel/uevent_helper: the 2005 /sbin/hotplug contract.  The
 * program named there runs once per event with SUBSYSTEM as argv[1] and
 * an environment of the event's variables plus HOME=/ and
 * PATH=/sbin:/bin:/usr/sbin:/usr/bin, nothing else: not the process's
 * own environment, and never a HOME or PATH of the event's.  A writer's
 * variables (`uevent` file, TRIGGER) reach it only as SYNTH_ARG_KEY
 * (synth.c), so none can set LD_PRELOAD or the like for a helper that
 * runs as root.  An empty value disables it.
 *
 * Delivery copies each event to a queue; one thread per tree spawns the
 * helpers in SEQNUM order and reaps them, with at most HELPER_MAX running
 * at once, so a slow or hanging helper never blocks the tree (as Linux's
 * UMH_NO_WAIT).
 */
#include <spawn.h>
#include <sys/wait.h>

#include "internal.h"

#define HELPER_MAX 8

struct helper_job {
	struct helper_job *next;
	char *argv[3];
	char **envp;
	char data[];
};

struct cfs_helper {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct helper_job *head, **tail;
	char path[PATH_MAX];
	bool stopping;
	unsigned long spawned, failed;
};

extern char **environ;

static void *helper_main(void *arg)
{
	struct cfs_helper *h = arg;
	int running = 0;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		struct helper_job *job = h->head;
		pid_t pid;

		if (!job) {
			if (h->stopping)
				break;
			pthread_mutex_unlock(&h->lock);
			/* reap what finished while idle, without blocking */
			while (running && waitpid(-1, NULL, WNOHANG) > 0)
				running--;
			pthread_mutex_lock(&h->lock);
			if (!h->head && !h->stopping) {
				struct timespec ts;

				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 100 * 1000 * 1000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&h->cond, &h->lock, &ts);
			}
			continue;
		}
		h->head = job->next;
		if (!h->head)
			h->tail = &h->head;
		pthread_mutex_unlock(&h->lock);
		while (running >= HELPER_MAX && waitpid(-1, NULL, 0) > 0)
			running--;
		if (posix_spawn(&pid, job->argv[0], NULL, NULL, job->argv, job->envp) == 0) {
			running++;
			__atomic_add_fetch(&h->spawned, 1, __ATOMIC_RELAXED);
		} else {
			__atomic_add_fetch(&h->failed, 1, __ATOMIC_RELAXED);
		}
		cfs_free(job);
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	while (running && waitpid(-1, NULL, 0) > 0)
		running--;
	return NULL;
}

static const char *const fixed_env[] = { "HOME=/", "PATH=/sbin:/bin:/usr/sbin:/usr/bin" };
#define FIXED_ENV (sizeof(fixed_env) / sizeof(fixed_env[0]))

/* does event variable @kv name one of fixed_env[]? those stay fixed */
static bool is_fixed(const char *kv)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < FIXED_ENV; i++)
		if (!strncmp(kv, fixed_env[i], klen) && fixed_env[i][klen] == '=')
			return true;
	return false;
}

/* called for each delivered event, without locks */
void cfs_helper_event(struct classfs_tree *t, const struct classfs_uevent *ev)
{
	struct cfs_helper *h = __atomic_load_n(&t->helper, __ATOMIC_ACQUIRE);
	struct helper_job *job;
	size_t strings = 0, n = 0;
	char path[PATH_MAX];
	char *p;

	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	snprintf(path, sizeof(path), "%s", h->path);
	pthread_mutex_unlock(&h->lock);
	if (!path[0])
		return;
	for (int i = 0; i < ev->envc; i++)
		strings += strlen(ev->envp[i]) + 1;
	for (size_t i = 0; i < FIXED_ENV; i++)
		strings += strlen(fixed_env[i]) + 1;
	strings += strlen(path) + 1 + (ev->subsystem ? strlen(ev->subsystem) : 0) + 1;
	job = cfs_malloc(sizeof(*job) + ((size_t)ev->envc + FIXED_ENV + 1) * sizeof(char *) +
			 strings);
	if (!job)
		return;
	job->envp = (char **)(void *)job->data;
	p = (char *)(job->envp + ev->envc + FIXED_ENV + 1);
#define COPY(dst, s) do { size_t l_ = strlen(s) + 1; memcpy(p, s, l_); dst = p; p += l_; } while (0)
	COPY(job->argv[0], path);
	COPY(job->argv[1], ev->subsystem ? ev->subsystem : "");
	job->argv[2] = NULL;
	for (int i = 0; i < ev->envc; i++)
		if (!is_fixed(ev->envp[i]))
			COPY(job->envp[n++], ev->envp[i]);
	for (size_t i = 0; i < FIXED_ENV; i++)
		COPY(job->envp[n++], fixed_env[i]);
#undef COPY
	job->envp[n] = NULL;
	job->next = NULL;
	pthread_mutex_lock(&h->lock);
	*h->tail = job;
	h->tail = &job->next;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

bool cfs_helper_active(struct classfs_tree *t)
{
	struct cfs_helper *h = __atomic_load_n(&t->helper, __ATOMIC_ACQUIRE);
	bool on;

	if (!h)
		return false;
	pthread_mutex_lock(&h->lock);
	on = h->path[0] != '\0';
	pthread_mutex_unlock(&h->lock);
	return on;
}

static ssize_t helper_show(struct classfs_tree *t, char *buf)
{
	struct cfs_helper *h = __atomic_load_n(&t->helper, __ATOMIC_ACQUIRE);
	int len;

	if (!h)
		return snprintf(buf, CLASSFS_ATTR_MAX, "\n");
	pthread_mutex_lock(&h->lock);
	len = snprintf(buf, CLASSFS_ATTR_MAX, "%s\n", h->path);
	pthread_mutex_unlock(&h->lock);
	return len;
}

/* the helper thread starts with the first non-empty path */
static ssize_t helper_store(struct classfs_tree *t, const char *buf, size_t count)
{
	struct cfs_helper *h;
	size_t len = count;

	if (len && buf[len - 1] == '\n')
		len--;
	if (len >= PATH_MAX || memchr(buf, '\0', len))
		return -EINVAL;
	if (len && buf[0] != '/')
		return -EINVAL;	/* no PATH search: it must name a program */
	cfs_lock(t);
	h = t->helper;
	if (!h && len) {
		h = cfs_zalloc(sizeof(*h));
		if (!h) {
			cfs_unlock(t);
			return -ENOMEM;
		}
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->cond, NULL);
		h->tail = &h->head;
		if (pthread_create(&h->thread, NULL, helper_main, h)) {
			pthread_mutex_destroy(&h->lock);
			pthread_cond_destroy(&h->cond);
			cfs_free(h);
			cfs_unlock(t);
			return -EAGAIN;
		}
		__atomic_store_n(&t->helper, h, __ATOMIC_RELEASE);
	}
	cfs_unlock(t);
	if (h) {
		pthread_mutex_lock(&h->lock);
		memcpy(h->path, buf, len);
		h->path[len] = '\0';
		pthread_mutex_unlock(&h->lock);
	}
	return (ssize_t)count;
}

const struct cfs_tree_attr cfs_uevent_helper_attr = {
	.name = "uevent_helper",
	.mode = 0644,
	.show = helper_show,
	.store = helper_store,
};

/* at tree free: let queued helpers start, then wait for all of them */
void cfs_helper_stop(struct classfs_tree *t)
{
	struct cfs_helper *h = t->helper;

	if (!h)
		return;
	pthread_mutex_lock(&h->lock);
	h->stopping = true;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	pthread_join(h->thread, NULL);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	cfs_free(h);
	t->helper = NULL;
}

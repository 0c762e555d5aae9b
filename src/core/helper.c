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
 * UMH_NO_WAIT).  The queue is bounded in bytes (classfs_helper_set_queue(),
 * CLASSFS_HELPER_QUEUE_DEFAULT): an event past it is dropped and counted,
 * and whoever set the bound is told, as the kernel's helper fails rather
 * than wait for memory.  Stopping (classfs_helper_stop(), the tree's
 * free) drops what waits and kills, with their process group, the
 * helpers still running after STOP_GRACE_MS, so it takes a bounded time
 * whatever was queued.
 *
 * A helper starts as a fresh program would: every signal at its default
 * disposition, none blocked (the process may block or ignore some, as
 * classfsd does for its signalfd), in a process group of its own, so a
 * stop reaches what it started too.  It is fork()ed, not posix_spawn()ed:
 * glibc's posix_spawn() leaves its own two signals ignored in the child.
 * Only the helpers' own pids are reaped: the process's other children
 * are not the library's.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "internal.h"

#define HELPER_MAX 8
#define STOP_GRACE_MS 300
#define REAP_POLL_MS 10

struct helper_job {
	struct helper_job *next;
	size_t size;		/* what it takes in the queue */
	char *argv[3];
	char **envp;
	char data[];
};

struct cfs_helper {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct helper_job *head, **tail;
	size_t max_bytes;
	classfs_helper_overflow_fn overflow;
	void *overflow_data;
	struct timespec overflow_told;	/* CLOCK_MONOTONIC of the last report (0: none yet) */
	char path[PATH_MAX];
	bool stopping;		/* the thread is to end */
	bool stopped;		/* it ended: events are dropped */
	struct classfs_helper_stats st;
	/* the thread's own */
	pid_t running[HELPER_MAX];
	int nrunning;
};

static void timespec_add_ms(struct timespec *ts, long ms)
{
	ts->tv_nsec += ms * 1000000L;
	while (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (now.tv_sec - t0->tv_sec) * 1000L + (now.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* the thread: reap the helpers that ended (@block: wait for each) */
static void reap(struct cfs_helper *h, bool block)
{
	for (int i = 0; i < h->nrunning;) {
		pid_t r = waitpid(h->running[i], NULL, block ? 0 : WNOHANG);

		if (r == 0 || (r < 0 && errno == EINTR)) {
			i++;
			continue;
		}
		/* ended, or not ours any more (ECHILD: reaped by someone else) */
		h->running[i] = h->running[--h->nrunning];
	}
}

/*
 * The child of helper_run(): a fresh program's signal state, a process
 * group of its own, then the helper.  Async-signal-safe calls only (the
 * process has other threads).  sigaction() refuses SIGKILL, SIGSTOP and
 * glibc's own signals: those hold a handler, which execve() makes the
 * default (posix_spawn() would leave glibc's ignored instead).
 */
static void helper_child(const struct helper_job *job, int errfd)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t none;
	int err;

	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL);
	setpgid(0, 0);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	execve(job->argv[0], job->argv, job->envp);
	err = errno;
	if (write(errfd, &err, sizeof(err)) < 0)
		err = 0;	/* nobody to tell */
	_exit(127);
}

/* the thread: start @job's helper; its pid, or -errno when it could not be started */
static pid_t helper_run(const struct helper_job *job)
{
	sigset_t all, old;
	int pfd[2], err;
	ssize_t n;
	pid_t pid;

	/* tells the exec's failure; closed by a successful one */
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	/* no handler of the process may run in the child before its reset */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0)
		helper_child(job, pfd[1]);
	err = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(pfd[1]);
	if (pid < 0) {
		close(pfd[0]);
		return -err;
	}
	do
		n = read(pfd[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(pfd[0]);
	if (n == sizeof(err)) {
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return -err;
	}
	return pid;
}

/* the thread: run @job's helper; under h->lock, dropped meanwhile */
static void spawn_job(struct cfs_helper *h, struct helper_job *job)
{
	pid_t pid;

	pthread_mutex_unlock(&h->lock);
	pid = helper_run(job);
	cfs_free(job);
	pthread_mutex_lock(&h->lock);
	if (pid > 0) {
		h->running[h->nrunning++] = pid;
		h->st.started++;
	} else {
		h->st.failed++;
	}
}

static void *helper_main(void *arg)
{
	struct cfs_helper *h = arg;
	struct helper_job *drop;
	struct timespec t0;

	pthread_mutex_lock(&h->lock);
	for (;;) {
		struct helper_job *job = h->head;

		reap(h, false);
		if (h->stopping)
			break;
		if (job && h->nrunning < HELPER_MAX) {
			h->head = job->next;
			if (!h->head)
				h->tail = &h->head;
			h->st.queued--;
			h->st.queued_bytes -= job->size;
			spawn_job(h, job);
			continue;
		}
		if (h->nrunning) {
			/* a child's end is no event of ours: look again shortly */
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			timespec_add_ms(&ts, REAP_POLL_MS);
			pthread_cond_timedwait(&h->cond, &h->lock, &ts);
		} else {
			pthread_cond_wait(&h->cond, &h->lock);
		}
	}
	/* stopping: what never started is dropped */
	drop = h->head;
	h->head = NULL;
	h->tail = &h->head;
	h->st.dropped += h->st.queued;
	h->st.queued = h->st.queued_bytes = 0;
	pthread_mutex_unlock(&h->lock);
	while (drop) {
		struct helper_job *next = drop->next;

		cfs_free(drop);
		drop = next;
	}
	/* what runs gets a grace, then is killed with what it started */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (h->nrunning && ms_since(&t0) < STOP_GRACE_MS) {
		reap(h, false);
		if (h->nrunning)
			nanosleep(&(struct timespec){ .tv_nsec = REAP_POLL_MS * 1000000L }, NULL);
	}
	for (int i = 0; i < h->nrunning; i++)
		kill(-h->running[i], SIGKILL);
	pthread_mutex_lock(&h->lock);
	h->st.killed += (uint64_t)h->nrunning;
	pthread_mutex_unlock(&h->lock);
	reap(h, true);
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
	size_t strings = 0, n = 0, size;
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
	size = sizeof(*job) + ((size_t)ev->envc + FIXED_ENV + 1) * sizeof(char *) + strings;
	job = cfs_malloc(size);
	if (!job) {
		pthread_mutex_lock(&h->lock);
		h->st.dropped++;
		pthread_mutex_unlock(&h->lock);
		return;
	}
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
	job->size = size;
	pthread_mutex_lock(&h->lock);
	if (h->stopping || h->stopped) {
		h->st.dropped++;
		pthread_mutex_unlock(&h->lock);
		cfs_free(job);
		return;
	}
	if (h->st.queued_bytes + size > h->max_bytes) {
		classfs_helper_overflow_fn fn = NULL;
		struct classfs_helper_stats st;
		void *data = h->overflow_data;

		h->st.dropped++;
		/* told at the first drop, then at most once a second */
		if (h->overflow && (!h->overflow_told.tv_sec || ms_since(&h->overflow_told) >= 1000)) {
			clock_gettime(CLOCK_MONOTONIC, &h->overflow_told);
			fn = h->overflow;
			st = h->st;
		}
		pthread_mutex_unlock(&h->lock);
		cfs_free(job);
		if (fn)
			fn(&st, data);
		return;
	}
	*h->tail = job;
	h->tail = &job->next;
	h->st.queued++;
	h->st.queued_bytes += size;
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

/* under L: @h's queue and its thread; 0 or -errno, nothing left on error */
static int helper_init(struct classfs_tree *t, struct cfs_helper *h)
{
	cfs_assert_held(t);
	h->tail = &h->head;
	h->max_bytes = t->helper_queue_max ? t->helper_queue_max : CLASSFS_HELPER_QUEUE_DEFAULT;
	h->overflow = t->helper_overflow;
	h->overflow_data = t->helper_overflow_data;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	if (pthread_create(&h->thread, NULL, helper_main, h)) {
		pthread_mutex_destroy(&h->lock);
		pthread_cond_destroy(&h->cond);
		return -EAGAIN;
	}
	return 0;
}

/* the helper thread starts with the first non-empty path */
static ssize_t helper_store(struct classfs_tree *t, const char *buf, size_t count)
{
	struct cfs_helper *h;
	size_t len = count;
	int r;

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
		r = helper_init(t, h);
		if (r < 0) {
			cfs_free(h);
			cfs_unlock(t);
			return r;
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

int classfs_helper_set_queue(struct classfs_tree *t, size_t max_bytes,
			     classfs_helper_overflow_fn overflow, void *data)
{
	struct cfs_helper *h;

	if (!t)
		return -EINVAL;
	if (!max_bytes)
		max_bytes = CLASSFS_HELPER_QUEUE_DEFAULT;
	cfs_lock(t);
	t->helper_queue_max = max_bytes;
	t->helper_overflow = overflow;
	t->helper_overflow_data = data;
	h = t->helper;
	if (h) {
		pthread_mutex_lock(&h->lock);
		h->max_bytes = max_bytes;
		h->overflow = overflow;
		h->overflow_data = data;
		pthread_mutex_unlock(&h->lock);
	}
	cfs_unlock(t);
	return 0;
}

/* end @h's thread (once): what waits is dropped, what runs killed after the grace */
static void helper_halt(struct cfs_helper *h)
{
	bool join;

	pthread_mutex_lock(&h->lock);
	join = !h->stopping;
	h->stopping = true;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	if (!join)
		return;
	pthread_join(h->thread, NULL);
	pthread_mutex_lock(&h->lock);
	h->stopped = true;
	pthread_mutex_unlock(&h->lock);
}

int classfs_helper_stop(struct classfs_tree *t, struct classfs_helper_stats *st)
{
	struct cfs_helper *h;

	if (!t)
		return -EINVAL;
	/* the helper lives as long as the tree: a later event finds it stopped */
	h = __atomic_load_n(&t->helper, __ATOMIC_ACQUIRE);
	if (!h) {
		if (st)
			*st = (struct classfs_helper_stats){ 0 };
		return 0;
	}
	helper_halt(h);
	if (st) {
		pthread_mutex_lock(&h->lock);
		*st = h->st;
		pthread_mutex_unlock(&h->lock);
	}
	return 0;
}

/* at tree free: as classfs_helper_stop(), then its memory */
void cfs_helper_stop(struct classfs_tree *t)
{
	struct cfs_helper *h = t->helper;

	if (!h)
		return;
	helper_halt(h);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
	cfs_free(h);
	t->helper = NULL;
}

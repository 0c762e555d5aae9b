// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-fuse-reply.c - how the live sysfs answers reads and writes:
 *  - a show()/store() error the kernel's FUSE would refuse (-512 and
 *    below) or a reader would misread (-EAGAIN, -ENOSYS...) reaches the
 *    reader as EIO, and at once: a refused reply left the reader in state
 *    D until the unmount;
 *  - a show()/store() that answers later (classfs_defer()) holds no
 *    thread of the mount: a dozen readers wait on it while reads, lookups
 *    and listings are served; its answer is cut to the reader's offset
 *    and size, a store()'s count to the write's size;
 *  - a nested read (a show() reading another attribute) is never offered;
 *  - a reader killed while it waits is freed at once (the kernel's
 *    interrupt answers it), and the late answer goes nowhere;
 *  - an unmount answers whoever still waits with EIO, and an answer that
 *    comes after the unmount touches nothing that is gone.
 *
 * Needs root and /dev/fuse; every mount is undone on every path (atexit,
 * fatal signals).
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "../harness.h"

#define READERS 12
#define MAX_PENDING 64

static char mnt_dir[64];
static volatile sig_atomic_t mnt_live;
static pid_t main_pid;

static void cleanup(void)
{
	if (getpid() != main_pid || !mnt_live)
		return;
	umount2(mnt_dir, MNT_DETACH);
	rmdir(mnt_dir);
	mnt_live = 0;
}

static void on_signal(int sig)
{
	cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

__attribute__((constructor)) static void install_cleanup(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGABRT, SIGTERM, SIGINT, SIGALRM };

	main_pid = getpid();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	atexit(cleanup);
	alarm(120);
}

/* ---- the attributes ---- */

static atomic_long err_value;		/* what `err`'s show() and store() return */

static ssize_t err_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			char *buf)
{
	(void)dev;
	(void)a;
	(void)buf;
	return atomic_load(&err_value);
}

static ssize_t err_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 const char *buf, size_t count)
{
	(void)dev;
	(void)a;
	(void)buf;
	(void)count;
	return atomic_load(&err_value);
}

/* `later` takes every reply it is offered; the test answers them */
static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct classfs_reply *replies[MAX_PENDING];
	bool is_store[MAX_PENDING];
	int n;
} later = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, { 0 }, { 0 }, 0 };

static ssize_t later_take(char *buf, bool store)
{
	struct classfs_reply *r = classfs_defer();

	if (!r)
		return store ? 1 : sprintf(buf, "now\n");
	pthread_mutex_lock(&later.lock);
	if (later.n == MAX_PENDING) {
		pthread_mutex_unlock(&later.lock);
		r->done(r, -ENOSPC, NULL);
		return -CLASSFS_DEFERRED;
	}
	later.is_store[later.n] = store;
	later.replies[later.n++] = r;
	pthread_cond_broadcast(&later.cond);
	pthread_mutex_unlock(&later.lock);
	return -CLASSFS_DEFERRED;
}

static ssize_t later_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	(void)dev;
	(void)a;
	return later_take(buf, false);
}

static ssize_t later_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			   const char *buf, size_t count)
{
	(void)dev;
	(void)a;
	(void)buf;
	(void)count;
	return later_take(NULL, true);
}

/* wait up to @s seconds until @n replies are pending; how many are */
static int later_wait(int n, int s)
{
	struct timespec until;
	int got;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += s;
	pthread_mutex_lock(&later.lock);
	while (later.n < n && pthread_cond_timedwait(&later.cond, &later.lock, &until) == 0)
		;
	got = later.n;
	pthread_mutex_unlock(&later.lock);
	return got;
}

/* answer every pending reply: shows with @value, stores with @count; how many */
static int later_answer(const char *value, ssize_t count)
{
	struct classfs_reply *r[MAX_PENDING];
	bool st[MAX_PENDING];
	int n;

	pthread_mutex_lock(&later.lock);
	n = later.n;
	memcpy(r, later.replies, sizeof(r[0]) * (size_t)n);
	memcpy(st, later.is_store, sizeof(st[0]) * (size_t)n);
	later.n = 0;
	pthread_mutex_unlock(&later.lock);
	for (int i = 0; i < n; i++)
		r[i]->done(r[i], st[i] ? count : (ssize_t)strlen(value), st[i] ? NULL : value);
	return n;
}

static struct classfs_tree *tree;

/* `nested` reads `later` through the path API: never offered, answered now */
static ssize_t nested_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			   char *buf)
{
	(void)dev;
	(void)a;
	return classfs_path_read(tree, "class/test/d0/later", buf, CLASSFS_ATTR_MAX);
}

static const struct classfs_device_attribute attr_err = { { "err", 0644 }, err_show, err_store };
static const struct classfs_device_attribute attr_later = { { "later", 0644 }, later_show,
							    later_store };
static const struct classfs_device_attribute attr_nested = { { "nested", 0444 }, nested_show,
							     NULL };

static ssize_t value_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	(void)dev;
	(void)a;
	return sprintf(buf, "value\n");
}

static const struct classfs_device_attribute attr_value = { { "value", 0444 }, value_show, NULL };

/* ---- the fixture: class test, device d0, mounted ---- */

static struct classfs_class *cls;
static struct classfs_device *d0;
static struct classfs_mount *mnt;

static bool setup(void)
{
	char tmpl[] = "/tmp/classfs-reply-XXXXXX";

	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		fprintf(stderr, "  needs root and /dev/fuse\n");
		CHECK(!"root and /dev/fuse");
		return false;
	}
	tree = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	cls = tree ? classfs_class_create(tree, "test") : NULL;
	d0 = cls ? classfs_device_create(cls, NULL, 0, NULL, NULL, "d0") : NULL;
	CHECK(d0 != NULL);
	if (!d0)
		return false;
	CHECK_INT(classfs_device_create_file(d0, &attr_err), 0);
	CHECK_INT(classfs_device_create_file(d0, &attr_later), 0);
	CHECK_INT(classfs_device_create_file(d0, &attr_nested), 0);
	CHECK_INT(classfs_device_create_file(d0, &attr_value), 0);
	if (!mkdtemp(tmpl))
		return false;
	snprintf(mnt_dir, sizeof(mnt_dir), "%s", tmpl);
	mnt_live = 1;
	mnt = classfs_mount_tree(tree, mnt_dir, NULL);
	CHECK(mnt != NULL);
	return mnt != NULL;
}

static void teardown(void)
{
	if (mnt)
		CHECK_INT(classfs_mount_close(mnt), 0);
	mnt = NULL;
	if (mnt_live) {
		CHECK_INT(rmdir(mnt_dir), 0);
		mnt_live = 0;
	}
	later_answer("", 0);	/* late answers: nothing left to touch */
	if (d0)
		classfs_device_unregister(d0);
	d0 = NULL;
	classfs_class_destroy(cls);
	cls = NULL;
	if (tree)
		CHECK_INT(classfs_tree_free(tree), 0);
	tree = NULL;
}

static const char *path(const char *name)
{
	static char b[4][128];
	static int k;

	k = (k + 1) % 4;
	snprintf(b[k], sizeof(b[k]), "%s/%s", mnt_dir, name);
	return b[k];
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* ---- readers in threads, waited for with a bound ---- */

struct io {
	pthread_t thread;
	const char *path;
	bool write;
	off_t off;
	size_t size;
	char buf[128];
	ssize_t r;		/* bytes or -errno */
	bool done;
};

static pthread_mutex_t io_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t io_cond = PTHREAD_COND_INITIALIZER;

static void *io_main(void *arg)
{
	struct io *io = arg;
	int fd = open(io->path, io->write ? O_WRONLY : O_RDONLY);
	ssize_t r;

	if (fd < 0) {
		r = -errno;
	} else {
		r = io->write ? pwrite(fd, "12345678", io->size, io->off)
			      : pread(fd, io->buf, io->size, io->off);
		if (r < 0)
			r = -errno;
		close(fd);
	}
	pthread_mutex_lock(&io_lock);
	if (r >= 0 && !io->write)
		io->buf[r] = '\0';
	io->r = r;
	io->done = true;
	pthread_cond_broadcast(&io_cond);
	pthread_mutex_unlock(&io_lock);
	return NULL;
}

static bool io_start(struct io *io, const char *p, bool write, off_t off, size_t size)
{
	*io = (struct io){ .path = p, .write = write, .off = off, .size = size, .r = -EINPROGRESS };
	return pthread_create(&io->thread, NULL, io_main, io) == 0;
}

/* has @io ended within @ms? */
static bool io_wait(struct io *io, int ms)
{
	struct timespec until;
	bool done;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&io_lock);
	while (!io->done && pthread_cond_timedwait(&io_cond, &io_lock, &until) == 0)
		;
	done = io->done;
	pthread_mutex_unlock(&io_lock);
	return done;
}

/* one read or write of `err` returning @err: what the reader gets, within 2 s */
static long err_io(long err, bool write)
{
	struct io io;
	long r;

	atomic_store(&err_value, err);
	if (!io_start(&io, path("class/test/d0/err"), write, 0, write ? 4 : 64))
		return -1000;
	if (!io_wait(&io, 2000)) {
		/* refused by the kernel: only the unmount frees the reader */
		fprintf(stderr, "  %s returning %ld: no answer within 2 s\n", write ? "store" : "show",
			err);
		CHECK_INT(classfs_mount_close(mnt), 0);
		mnt = NULL;
	}
	pthread_join(io.thread, NULL);
	r = io.r;
	return r;
}

TEST(errors_a_reader_can_take)
{
	static const struct {
		long err, want;
	} cases[] = {
		{ -600, -EIO },		{ -512, -EIO },	    { -4096, -EIO },  { -2147483648L, -EIO },
		{ -EAGAIN, -EIO },	{ -ENOSYS, -EIO },  { -EINTR, -EIO }, { -ENOTCONN, -EIO },
		{ -EBADF, -EIO },	{ -511, -511 },	    { -EINVAL, -EINVAL }, { -ENODEV, -ENODEV },
		{ -EBUSY, -EBUSY },	{ -EEXIST, -EEXIST }, { -ENOENT, -ENODEV },
	};

	if (!setup())
		goto out;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]) && mnt; i++) {
		for (int w = 0; w < 2 && mnt; w++) {
			long got = err_io(cases[i].err, w);

			if (got != cases[i].want)
				fprintf(stderr, "  %s returning %ld\n", w ? "store" : "show",
					cases[i].err);
			CHECK_INT(got, cases[i].want);
		}
	}
	/* the rule itself, for the daemon's callers too */
	CHECK_INT(classfs_io_error(0), -EIO);
	CHECK_INT(classfs_io_error(5), -EIO);
	CHECK_INT(classfs_io_error(-EPIPE), -EIO);
	CHECK_INT(classfs_io_error(-ERANGE), -ERANGE);
out:
	teardown();
}

TEST(answered_later_holds_no_thread)
{
	struct io r[READERS], fast, w;
	double t0, t;
	int started = 0;
	struct stat st;

	if (!setup())
		goto out;
	for (int i = 0; i < READERS; i++) {
		if (!io_start(&r[i], path("class/test/d0/later"), false, 0, 64))
			break;
		started++;
	}
	CHECK_INT(started, READERS);
	/* every one of them is waiting in the tree's hands, none in a thread */
	CHECK_INT(later_wait(started, 10), started);

	/* meanwhile: a read, a lookup, a listing, all at once */
	t0 = now_ms();
	CHECK(io_start(&fast, path("class/test/d0/value"), false, 0, 64));
	CHECK(io_wait(&fast, 1000));
	pthread_join(fast.thread, NULL);
	CHECK_INT(fast.r, 6);
	CHECK_STR(fast.buf, "value\n");
	CHECK_INT(stat(path("class/test/d0/uevent"), &st), 0);
	CHECK_INT(access(path("class/test/d0/nested"), R_OK), 0);
	t = now_ms() - t0;
	if (t >= 1000)
		fprintf(stderr, "  read, lookup while %d wait: %.0f ms\n", started, t);
	CHECK(t < 1000);
	for (int i = 0; i < started; i++)
		CHECK(!r[i].done);

	/* a nested read is answered now, never offered */
	CHECK(io_start(&fast, path("class/test/d0/nested"), false, 0, 64));
	CHECK(io_wait(&fast, 1000));
	pthread_join(fast.thread, NULL);
	CHECK_STR(fast.buf, "now\n");

	/* the answers: each reader its own, in full */
	CHECK_INT(later_answer("0123456789\n", 0), started);
	for (int i = 0; i < started; i++) {
		CHECK(io_wait(&r[i], 2000));
		pthread_join(r[i].thread, NULL);
		CHECK_INT(r[i].r, 11);
		CHECK_STR(r[i].buf, "0123456789\n");
	}

	/* cut to the reader's offset and size; past the end: nothing */
	CHECK(io_start(&r[0], path("class/test/d0/later"), false, 3, 4));
	CHECK(io_start(&r[1], path("class/test/d0/later"), false, 20, 4));
	CHECK_INT(later_wait(2, 10), 2);
	CHECK_INT(later_answer("0123456789\n", 0), 2);
	for (int i = 0; i < 2; i++) {
		CHECK(io_wait(&r[i], 2000));
		pthread_join(r[i].thread, NULL);
	}
	CHECK_INT(r[0].r, 4);
	CHECK_STR(r[0].buf, "3456");
	CHECK_INT(r[1].r, 0);

	/* a store()'s count: at most the write's size; an error as errno */
	CHECK(io_start(&w, path("class/test/d0/later"), true, 0, 8));
	CHECK_INT(later_wait(1, 10), 1);
	CHECK_INT(later_answer("", 100), 1);
	CHECK(io_wait(&w, 2000));
	pthread_join(w.thread, NULL);
	CHECK_INT(w.r, 8);
	CHECK(io_start(&w, path("class/test/d0/later"), true, 0, 8));
	CHECK_INT(later_wait(1, 10), 1);
	CHECK_INT(later_answer("", -600), 1);
	CHECK(io_wait(&w, 2000));
	pthread_join(w.thread, NULL);
	CHECK_INT(w.r, -EIO);
out:
	teardown();
}

TEST(killed_reader_freed_at_once)
{
	pid_t pid;
	int status = 0;
	double t0;
	bool reaped = false;

	if (!setup())
		goto out;
	pid = fork();
	if (pid == 0) {
		char b[64];
		int fd = open(path("class/test/d0/later"), O_RDONLY);

		_exit(fd >= 0 && read(fd, b, sizeof(b)) >= 0 ? 0 : 1);
	}
	CHECK(pid > 0);
	if (pid < 0)
		goto out;
	CHECK_INT(later_wait(1, 10), 1);
	t0 = now_ms();
	kill(pid, SIGKILL);
	while (now_ms() - t0 < 2000 && !reaped) {
		reaped = waitpid(pid, &status, WNOHANG) == pid;
		if (!reaped)
			usleep(5000);
	}
	if (!reaped)
		fprintf(stderr, "  the killed reader still waits after 2 s\n");
	CHECK(reaped);
	/* the answer comes after the kernel's interrupt was answered: it goes nowhere */
	CHECK_INT(later_answer("late\n", 0), 1);
	if (!reaped)
		waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	/* and the mount serves on */
	{
		struct io io;

		CHECK(io_start(&io, path("class/test/d0/value"), false, 0, 64));
		CHECK(io_wait(&io, 1000));
		pthread_join(io.thread, NULL);
		CHECK_STR(io.buf, "value\n");
	}
out:
	teardown();
}

TEST(unmount_answers_the_waiting)
{
	struct io r[3];

	if (!setup())
		goto out;
	for (int i = 0; i < 3; i++)
		CHECK(io_start(&r[i], path("class/test/d0/later"), false, 0, 64));
	CHECK_INT(later_wait(3, 10), 3);
	CHECK_INT(classfs_mount_close(mnt), 0);
	mnt = NULL;
	for (int i = 0; i < 3; i++) {
		CHECK(io_wait(&r[i], 2000));
		pthread_join(r[i].thread, NULL);
		CHECK(r[i].r < 0);
	}
	/* the answers after the unmount (teardown gives them) touch nothing gone */
out:
	teardown();
}

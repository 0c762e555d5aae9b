// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-fuse.c - the live sysfs, checked through plain POSIX calls.
 *
 * Each test builds a tree (both layouts), serves it at one or two fresh
 * mount points (mkdtemp under /tmp) and checks the sysfs rules of
 * docs/design.md (rules, tools, FUSE view) with open/read/write/close,
 * stat/lstat, getdents64, readlink, realpath and poll, some of them from
 * a forked child (another process must see changes at once):
 *  - files: st_size 4096, the whole value in one read(), `dev` is
 *    "MAJ:MIN\n", d_type set, every link relative and resolving inside;
 *  - writes: one store() per write() with the whole buffer, E2BIG over
 *    4096 bytes, store()'s error as errno, mode bits enforced for root,
 *    O_TRUNC opens, the `uevent` file (read and synthetic events), "ro",
 *    what stays the tree's (a device's directory, nodes, hard links);
 *  - removal while open (ENODEV), poll() after classfs_device_notify();
 *  - additions and removals visible at once (negative entries cached),
 *    also when made by a store();
 *  - readdir of 100,000 devices, also under concurrent change, and
 *    entries whose names share a hash;
 *  - kernel/uevent_seqnum, mount options;
 *  - show() calls that block hold up no other request (reads, lookups, a
 *    store() adding a device), and an unmount waits for them.
 *
 * Needs root and /dev/fuse (CI has both): without them every test FAILS,
 * it does not skip.  Every mount is undone at the end of its test, and on
 * a crash, a timeout or a sanitizer report by a handler; the last test
 * checks /proc/mounts and the temporary directories.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "../harness.h"
#include "classfs-internal/fs.h"
#include "classfs-internal/testing.h"
#include "../native-util.h"

#define UUID "12345678-1234-1234-1234-123456789abc"
#define TEST_TIMEOUT_S 240
#define MANY 100000

#define MOUNT_GUARD_NAME "fuse"
#include "mount-guard.h"

/* is @dir a mount point in /proc/mounts? (-1: cannot read it) */
static int mounted(const char *dir)
{
	char line[4096];
	FILE *f = fopen("/proc/mounts", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char dev[1024], mp[1024], type[256];

		if (sscanf(line, "%1023s %1023s %255s", dev, mp, type) == 3 && !strcmp(mp, dir))
			found = 1;
	}
	fclose(f);
	return found;
}

static bool have_fuse(void)
{
	static int reported;

	if (geteuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0)
		return true;
	if (!reported++)
		fprintf(stderr, "  test-fuse needs root and /dev/fuse (euid %d, /dev/fuse %s); "
				"run it as root where FUSE is available\n",
			(int)geteuid(),
			access("/dev/fuse", F_OK)		   ? "missing"
			: access("/dev/fuse", R_OK | W_OK) ? "not read-writable"
							   : "usable");
	return false;
}

struct mnt {
	const char *dir;
	struct classfs_mount *m;
};

/* serve @t at a new directory; false (and a failed check) when it cannot */
static bool mnt_open(struct mnt *mt, struct classfs_tree *t, const char *options)
{
	mt->m = NULL;
	mt->dir = NULL;
	if (!have_fuse()) {
		CHECK(!"root and /dev/fuse are required");
		return false;
	}
	mt->dir = new_dir();
	CHECK(mt->dir != NULL);
	if (!mt->dir)
		return false;
	mt->m = classfs_mount_tree(t, mt->dir, options);
	if (!mt->m) {
		fprintf(stderr, "  classfs_mount_tree(%s, \"%s\"): %s\n", mt->dir,
			options ? options : "", strerror(errno));
		CHECK(mt->m != NULL);
		drop_dir(mt->dir);
		mt->dir = NULL;
		return false;
	}
	CHECK_STR(classfs_mount_point(mt->m), mt->dir);
	CHECK_INT(mounted(mt->dir), 1);
	return true;
}

static void mnt_close(struct mnt *mt)
{
	if (mt->m) {
		CHECK_INT(classfs_mount_close(mt->m), 0);
		mt->m = NULL;
	}
	if (mt->dir) {
		CHECK_INT(mounted(mt->dir), 0);
		drop_dir(mt->dir);
		mt->dir = NULL;
	}
}

/* ------------------------------------------------------------------ */
/* POSIX helpers                                                       */
/* ------------------------------------------------------------------ */

static char pbufs[16][PATH_MAX];
static int pnext;

/* "<dir>/<fmt...>" in a rotating buffer */
static NU_PRINTF(2, 3) const char *P(const char *dir, const char *fmt, ...)
{
	char *b = pbufs[pnext];
	va_list ap;
	int n;

	pnext = (pnext + 1) % 16;
	n = snprintf(b, PATH_MAX, "%s/", dir);
	va_start(ap, fmt);
	vsnprintf(b + n, (size_t)(PATH_MAX - n), fmt, ap);
	va_end(ap);
	return b;
}

static int err_of(int r)
{
	return r < 0 ? -errno : r;
}

static int stat_r(const char *path)
{
	struct stat st;

	return err_of(stat(path, &st));
}

static int lstat_r(const char *path)
{
	struct stat st;

	return err_of(lstat(path, &st));
}

/* one read() of @size at offset 0: bytes or -errno; *second gets a 2nd read's result */
static ssize_t read_once(const char *path, char *buf, size_t size, ssize_t *second)
{
	char more[64];
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size);
	if (n < 0)
		n = -errno;
	else if (second)
		*second = read(fd, more, sizeof(more));
	if (n >= 0 && (size_t)n < size)
		buf[n] = '\0';
	close(fd);
	return n;
}

/* the whole value as a string (static rotating buffer), or "ERR:-N" */
static const char *val(const char *path)
{
	char *b = nu_buf();
	ssize_t n = read_once(path, b, CLASSFS_ATTR_MAX, NULL);

	if (n < 0)
		snprintf(b, 32, "ERR:%zd", n);
	else
		b[n] = '\0';
	return b;
}

/* open(O_WRONLY | @flags), one write(), close: bytes or -errno */
static ssize_t write_once(const char *path, int flags, const void *s, size_t len)
{
	int fd = open(path, O_WRONLY | flags);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		n = -errno;
	close(fd);
	return n;
}

static ssize_t write_str(const char *path, int flags, const char *s)
{
	return write_once(path, flags, s, strlen(s));
}

/* the open(@flags) error, 0 when it opens */
static int open_err(const char *path, int flags)
{
	int fd = open(path, flags);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

/*
 * the first error of opening @path with @flags and reading (O_RDONLY) or
 * writing "x\n" once: opens are the kernel's own (zero-message), so for
 * root a mode the tree refuses fails at the read or write
 */
static int io_err(const char *path, int flags)
{
	char buf[16];
	int fd = open(path, flags);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = (flags & O_ACCMODE) == O_RDONLY ? read(fd, buf, sizeof(buf)) : write(fd, "x\n", 2);
	n = n < 0 ? -errno : 0;
	close(fd);
	return (int)n;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/*
 * List directory @path with getdents64 in @bufsize chunks; @fn per entry
 * ("." and ".." skipped), @between after each chunk.  Return: entries or
 * -errno.  Async-signal-safe except for what @fn does (used in children).
 */
static long list_dir(const char *path, size_t bufsize,
		     void (*fn)(void *ctx, const char *name, unsigned char type), void *ctx,
		     void (*between)(void *ctx))
{
	char buf[65536] __attribute__((aligned(8)));
	int fd = open(path, O_RDONLY | O_DIRECTORY);
	long count = 0;

	if (fd < 0)
		return -errno;
	if (bufsize > sizeof(buf))
		bufsize = sizeof(buf);
	for (;;) {
		long n = syscall(SYS_getdents64, fd, buf, bufsize);

		if (n < 0) {
			count = -errno;
			break;
		}
		if (n == 0)
			break;
		for (long off = 0; off < n;) {
			struct linux_dirent64 *d = (void *)(buf + off);

			off += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			count++;
			if (fn)
				fn(ctx, d->d_name, d->d_type);
		}
		if (between)
			between(ctx);
	}
	close(fd);
	return count;
}

struct find_ctx {
	const char *name;
	int seen;
	unsigned char type;
};

static void find_fn(void *ctx, const char *name, unsigned char type)
{
	struct find_ctx *f = ctx;

	if (!strcmp(name, f->name)) {
		f->seen++;
		f->type = type;
	}
}

/* how often directory @dir lists @name (-errno on error) */
static long listed_n(const char *dir, const char *name)
{
	struct find_ctx f = { name, 0, 0 };
	long r = list_dir(dir, 65536, find_fn, &f, NULL);

	return r < 0 ? r : f.seen;
}

/* ---- another process: fork, check, exit 0 (as expected) or 1 ---- */

enum child_op { C_STAT_OK, C_STAT_ENOENT, C_LISTED, C_NOT_LISTED };

struct child_check {
	enum child_op op;
	const char *path;
	const char *name;
};

static int child_run(const struct child_check *c)
{
	struct stat st;
	struct find_ctx f;

	switch (c->op) {
	case C_STAT_OK:
		return stat(c->path, &st) == 0 ? 0 : 1;
	case C_STAT_ENOENT:
		return stat(c->path, &st) < 0 && errno == ENOENT ? 0 : 1;
	case C_LISTED:
	case C_NOT_LISTED:
		f = (struct find_ctx){ c->name, 0, 0 };
		if (list_dir(c->path, 65536, find_fn, &f, NULL) < 0)
			return 1;
		return f.seen == (c->op == C_LISTED ? 1 : 0) ? 0 : 1;
	}
	return 1;
}

/* true when a forked child finds what @op expects */
static bool in_child(enum child_op op, const char *path, const char *name)
{
	struct child_check c = { op, path, name };
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return false;
	if (pid == 0) {
		alarm(20);
		_exit(child_run(&c));
	}
	if (waitpid(pid, &status, 0) != pid)
		return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* ------------------------------------------------------------------ */
/* the test devices and their attributes                               */
/* ------------------------------------------------------------------ */

struct tdata {
	pthread_mutex_t lock;
	char value[CLASSFS_ATTR_MAX + 1];
	size_t len;
	atomic_int stores;		/* store() calls of `value` */
	size_t last_count;		/* count of the last store() */
	atomic_int err;			/* what `err`'s store() returns (-errno) */
};

static struct tdata *tdata_new(void)
{
	struct tdata *d = calloc(1, sizeof(*d));

	pthread_mutex_init(&d->lock, NULL);
	strcpy(d->value, "initial\n");
	d->len = strlen(d->value);
	return d;
}

static void tdata_free(struct tdata *d)
{
	if (!d)
		return;
	pthread_mutex_destroy(&d->lock);
	free(d);
}

static ssize_t value_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	struct tdata *d = dev->drvdata;
	size_t len;

	pthread_mutex_lock(&d->lock);
	memcpy(buf, d->value, d->len);
	len = d->len;
	pthread_mutex_unlock(&d->lock);
	return (ssize_t)len;
}

static ssize_t value_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			   const char *buf, size_t count)
{
	struct tdata *d = dev->drvdata;

	pthread_mutex_lock(&d->lock);
	memcpy(d->value, buf, count);
	d->len = count;
	d->last_count = count;
	pthread_mutex_unlock(&d->lock);
	atomic_fetch_add(&d->stores, 1);
	return (ssize_t)count;
}

static ssize_t ro_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
		       char *buf)
{
	return sprintf(buf, "read-only\n");
}

static ssize_t never_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			   const char *buf, size_t count)
{
	struct tdata *d = dev->drvdata;

	atomic_fetch_add(&d->stores, 1000);	/* must never run */
	return (ssize_t)count;
}

static ssize_t err_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 const char *buf, size_t count)
{
	struct tdata *d = dev->drvdata;

	return atomic_load(&d->err);
}

/* exactly 4096 bytes */
static ssize_t big_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			char *buf)
{
	for (int i = 0; i < CLASSFS_ATTR_MAX - 1; i++)
		buf[i] = (char)('a' + i % 26);
	buf[CLASSFS_ATTR_MAX - 1] = '\n';
	return CLASSFS_ATTR_MAX;
}

static ssize_t create_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			    const char *buf, size_t count)
{
	char name[NAME_MAX + 1];
	struct classfs_device *nd;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(buf, "\n"), buf);
	/* drvdata: the creator's, so `value` works; freed with the creator */
	nd = classfs_device_create(dev->cls, NULL, 0, NULL, dev->drvdata, "%s", name);
	return nd ? (ssize_t)count : -errno;
}

static ssize_t delete_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			    const char *buf, size_t count)
{
	int r = classfs_device_unregister_self(dev);

	return r < 0 ? r : (ssize_t)count;
}

static const struct classfs_device_attribute attr_value = { { "value", 0644 }, value_show,
							     value_store };
static const struct classfs_device_attribute attr_ro = { { "ro", 0444 }, ro_show, never_store };
static const struct classfs_device_attribute attr_wo = { { "wo", 0200 }, ro_show, value_store };
static const struct classfs_device_attribute attr_err = { { "err", 0644 }, ro_show, err_store };
static const struct classfs_device_attribute attr_big = { { "big", 0444 }, big_show, NULL };
static const struct classfs_device_attribute attr_create = { { "create", 0200 }, NULL,
							      create_store };
static const struct classfs_device_attribute attr_delete = { { "delete", 0200 }, NULL,
							      delete_store };
/* added after the device, a file of its own (not a default attribute) */
static const struct classfs_device_attribute attr_extra = { { "extra", 0644 }, value_show,
							     value_store };

static const struct classfs_device_attribute *const test_attrs[] = {
	&attr_value, &attr_ro, &attr_wo, &attr_err, &attr_big, &attr_create, &attr_delete, NULL,
};
static const struct classfs_attribute_group test_group = { NULL, test_attrs, NULL };
static const struct classfs_attribute_group *const test_groups[] = { &test_group, NULL };

/*
 * The fixture: bus "pci" with 0000:00:1f.2, class block with sda (8:0,
 * device link to the PCI device) and nested sda1 (8:1), class input with
 * input0 and nested event0 (13:64), class test with t0 (240:0) carrying
 * the test attributes; served at mount points a and b.
 */
struct fx {
	enum classfs_layout layout;
	struct classfs_tree *t;
	struct classfs_bus bus;
	struct classfs_device pdev;
	bool pdev_added;
	struct classfs_class *block, *input;
	struct classfs_class test;
	bool test_registered;
	struct classfs_device *sda, *sda1, *input0, *event0, *t0;
	struct tdata *td;
	struct mnt a, b;
	struct recorder rec;
};

static void pdev_release(struct classfs_device *dev)
{
	(void)dev;
}

static const char *devpath(struct classfs_device *dev)
{
	char *b = nu_buf();

	if (classfs_device_devpath(dev, b, 4096) < 0)
		strcpy(b, "/<no devpath>");
	return b;
}

/* the path of @dev's directory under mount @dir */
static const char *dpath(const char *dir, struct classfs_device *dev)
{
	return P(dir, "%s", devpath(dev) + 1);
}

static bool fx_build(struct fx *f, enum classfs_layout layout)
{
	memset(f, 0, sizeof(*f));
	f->layout = layout;
	f->t = classfs_tree_new(layout);
	CHECK(f->t != NULL);
	if (!f->t)
		return false;
	f->td = tdata_new();
	f->bus.name = "pci";
	CHECK_INT(classfs_bus_register(f->t, &f->bus), 0);
	classfs_device_initialize(&f->pdev);
	f->pdev.bus = &f->bus;
	f->pdev.release = pdev_release;
	CHECK_INT(classfs_device_set_name(&f->pdev, "0000:00:1f.2"), 0);
	CHECK_INT(classfs_device_add(&f->pdev), 0);
	f->pdev_added = classfs_device_is_added(&f->pdev);

	f->block = classfs_class_create(f->t, "block");
	f->input = classfs_class_create(f->t, "input");
	f->test.name = "test";
	f->test.dev_groups = test_groups;
	f->test_registered = classfs_class_register(f->t, &f->test) == 0;
	CHECK(f->test_registered);
	CHECK(f->block && f->input);
	if (!f->block || !f->input || !f->test_registered)
		return false;
	f->sda = classfs_device_create(f->block, NULL, makedev(8, 0), &f->pdev, NULL, "sda");
	CHECK(f->sda != NULL);
	if (f->sda)
		f->sda1 = classfs_device_create(f->block, f->sda, makedev(8, 1), NULL, NULL, "sda1");
	f->input0 = classfs_device_create(f->input, NULL, 0, NULL, NULL, "input0");
	CHECK(f->input0 != NULL);
	if (f->input0)
		f->event0 = classfs_device_create(f->input, f->input0, makedev(13, 64), NULL, NULL,
						  "event0");
	f->t0 = classfs_device_create(&f->test, NULL, makedev(240, 0), NULL, f->td, "t0");
	CHECK(f->sda1 && f->event0 && f->t0);
	if (!f->sda1 || !f->event0 || !f->t0)
		return false;
	CHECK_INT(classfs_device_create_file(f->t0, &attr_extra), 0);
	return true;
}

static int collect_fn(struct classfs_device *dev, void *data)
{
	struct classfs_device ***v = data;

	*(*v)++ = classfs_device_get(dev);
	return 0;
}

/* unregister every device of @cls (nested ones may go with their parent) */
static void unregister_all(struct classfs_class *cls)
{
	static struct classfs_device *v[1024];
	struct classfs_device **p = v;

	if (!cls)
		return;
	classfs_class_for_each_device(cls, collect_fn, &p);
	/* children first where we can: the class lists parents and children */
	for (struct classfs_device **q = p; q > v;) {
		struct classfs_device *d = *--q;

		if (d->parent)
			classfs_device_unregister(d);
	}
	for (struct classfs_device **q = v; q < p; q++) {
		if (!(*q)->parent)
			classfs_device_unregister(*q);
		classfs_device_put(*q);
	}
}

static void fx_mount(struct fx *f, bool two)
{
	mnt_open(&f->a, f->t, NULL);
	if (two)
		mnt_open(&f->b, f->t, "allow_other");
}

static void fx_destroy(struct fx *f)
{
	mnt_close(&f->b);
	mnt_close(&f->a);
	if (f->rec.id > 0)
		rec_stop(&f->rec);
	if (!f->t)
		return;
	unregister_all(f->block);
	unregister_all(f->input);
	if (f->test_registered)
		unregister_all(&f->test);
	if (f->pdev_added)
		classfs_device_unregister(&f->pdev);
	classfs_class_destroy(f->block);
	classfs_class_destroy(f->input);
	if (f->test_registered)
		classfs_class_unregister(&f->test);
	if (f->bus.p.registered)
		classfs_bus_unregister(&f->bus);
	CHECK_INT(classfs_tree_free(f->t), 0);
	tdata_free(f->td);
	f->t = NULL;
}

static const char *layout_name(enum classfs_layout l)
{
	return l == CLASSFS_LAYOUT_CLASS ? "class" : "devices";
}

/* wait up to 2 s for @n events, then a little for any extra one */
static int rec_wait(struct recorder *r, int n)
{
	int got = 0;

	for (int i = 0; i < 2000; i++) {
		pthread_mutex_lock(&r->lock);
		got = r->n;
		pthread_mutex_unlock(&r->lock);
		if (got >= n)
			break;
		usleep(1000);
	}
	usleep(20000);
	pthread_mutex_lock(&r->lock);
	got = r->n;
	pthread_mutex_unlock(&r->lock);
	return got;
}

static void test_begin(const char *name)
{
	current_test = name;
	alarm(TEST_TIMEOUT_S);
}

static bool mnt_ok(const struct mnt *m)
{
	return m->m != NULL;
}

/* ------------------------------------------------------------------ */
/* tests                                                               */
/* ------------------------------------------------------------------ */

TEST(environment)
{
	test_begin("environment");
	CHECK(have_fuse());
}

/* ---- files: size, one read, dev, links, d_type ---- */

struct walk {
	const char *root;
	size_t rootlen;
	int files, links, dirs, bad;
};

static void walk_dir(struct walk *w, const char *dir, int depth);

struct walk_list {
	char names[512][NAME_MAX + 1];
	unsigned char types[512];
	int n;
};

static void walk_list_fn(void *ctx, const char *name, unsigned char type)
{
	struct walk_list *l = ctx;

	if (l->n < 512) {
		snprintf(l->names[l->n], NAME_MAX + 1, "%s", name);
		l->types[l->n++] = type;
	}
}

static void walk_bad(struct walk *w, const char *path, const char *what)
{
	if (w->bad++ < 20)
		fprintf(stderr, "  %s: %s\n", path, what);
}

static void walk_entry(struct walk *w, const char *path, unsigned char dtype, int depth)
{
	struct stat st;
	char target[PATH_MAX], real[PATH_MAX], buf[CLASSFS_ATTR_MAX + 1];

	if (lstat(path, &st) < 0) {
		walk_bad(w, path, "listed but lstat fails");
		return;
	}
	if ((S_ISDIR(st.st_mode) && dtype != DT_DIR) || (S_ISREG(st.st_mode) && dtype != DT_REG) ||
	    (S_ISLNK(st.st_mode) && dtype != DT_LNK))
		walk_bad(w, path, "d_type does not match lstat");
	if (S_ISDIR(st.st_mode)) {
		w->dirs++;
		if (depth < 32)
			walk_dir(w, path, depth + 1);
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, target, sizeof(target) - 1);

		w->links++;
		if (n <= 0) {
			walk_bad(w, path, "readlink fails");
			return;
		}
		target[n] = '\0';
		if (target[0] == '/')
			walk_bad(w, path, "absolute link");
		if (!realpath(path, real))
			walk_bad(w, path, "link does not resolve");
		else if (strncmp(real, w->root, w->rootlen) || real[w->rootlen] != '/')
			walk_bad(w, path, "link resolves outside the mount");
	} else if (S_ISREG(st.st_mode)) {
		ssize_t second = -1, n;

		off_t before = st.st_size;

		w->files++;
		if (!(st.st_mode & 0444))
			return;
		/* systool -v: every readable file once, 4096 bytes */
		n = read_once(path, buf, CLASSFS_ATTR_MAX, &second);
		if (n < 0)
			walk_bad(w, path, "read fails");
		else if (second != 0)
			walk_bad(w, path, "value not whole in one read (a second read gave more)");
		else if (n > 0 && buf[n - 1] != '\n')
			walk_bad(w, path, "value does not end in a newline");
		/*
		 * a stored value's size is its length; a computed one's the
		 * length of its value as last read (4096 before)
		 */
		if (n >= 0 && before != n && before != CLASSFS_ATTR_MAX)
			walk_bad(w, path, "st_size is neither 4096 nor the value's length");
		if (n >= 0 && lstat(path, &st) == 0 && st.st_size != n)
			walk_bad(w, path, "st_size after a read is not the value's length");
	} else {
		walk_bad(w, path, "neither directory, file nor link");
	}
}

static void walk_dir(struct walk *w, const char *dir, int depth)
{
	struct walk_list *l = calloc(1, sizeof(*l));
	char path[PATH_MAX];

	if (list_dir(dir, 65536, walk_list_fn, l, NULL) < 0)
		walk_bad(w, dir, "cannot list");
	for (int i = 0; i < l->n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, l->names[i]);
		walk_entry(w, path, l->types[i], depth);
	}
	free(l);
}

/* @link is a relative symlink that resolves to @want (a path below the mount) */
static void check_link(const char *link, const char *want)
{
	char target[PATH_MAX], real[PATH_MAX];
	struct stat st;
	ssize_t n;

	CHECK_INT(lstat(link, &st) == 0 ? 0 : -errno, 0);
	CHECK(S_ISLNK(st.st_mode));
	n = readlink(link, target, sizeof(target) - 1);
	CHECK(n > 0);
	if (n <= 0) {
		fprintf(stderr, "  readlink(%s): %s\n", link, strerror(errno));
		return;
	}
	target[n] = '\0';
	CHECK(target[0] != '/');
	if (!realpath(link, real)) {
		fprintf(stderr, "  %s -> %s does not resolve\n", link, target);
		CHECK(!"link resolves");
		return;
	}
	CHECK_STR(real, want);
	CHECK_INT(stat(link, &st), 0);
}

static void check_files(enum classfs_layout layout)
{
	struct fx f;
	char buf[2 * CLASSFS_ATTR_MAX];
	struct stat st;
	ssize_t second = -1;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, true);
	if (!mnt_ok(&f.a) || !mnt_ok(&f.b))
		goto out;
	for (int k = 0; k < 2; k++) {
		const char *m = k ? f.b.dir : f.a.dir;
		char real[PATH_MAX];
		struct walk w = { .root = m, .rootlen = strlen(m) };

		/* st_size (a computed value not read yet: 4096) and the whole value in one read */
		CHECK_INT(stat(P(dpath(m, f.t0), "value"), &st), 0);
		CHECK(S_ISREG(st.st_mode));
		CHECK_INT(st.st_size, 4096);
		CHECK_INT(st.st_mode & 07777, 0644);
		CHECK_INT(read_once(P(dpath(m, f.t0), "big"), buf, 4096, &second), 4096);
		CHECK_INT(second, 0);
		CHECK(buf[0] == 'a' && buf[4094] == 'a' + 4094 % 26 && buf[4095] == '\n');
		CHECK_INT(read_once(P(dpath(m, f.t0), "value"), buf, 4096, &second), 8);
		CHECK_INT(second, 0);
		CHECK_STR(buf, "initial\n");
		CHECK_STR(val(P(dpath(m, f.t0), "ro")), "read-only\n");

		/* dev: "MAJ:MIN\n", also a second time, and its size is its length */
		CHECK_STR(val(P(dpath(m, f.sda), "dev")), "8:0\n");
		CHECK_STR(val(P(dpath(m, f.sda), "dev")), "8:0\n");
		CHECK_STR(val(P(dpath(m, f.sda1), "dev")), "8:1\n");
		CHECK_STR(val(P(dpath(m, f.event0), "dev")), "13:64\n");
		CHECK_STR(val(P(dpath(m, f.t0), "dev")), "240:0\n");
		CHECK_INT(stat(P(dpath(m, f.sda), "dev"), &st), 0);
		CHECK_INT(st.st_size, 4);
		CHECK_INT(st.st_mode & 07777, 0444);
		CHECK_INT(lstat_r(P(dpath(m, f.input0), "dev")), -ENOENT);

		/* the links tools follow */
		snprintf(real, sizeof(real), "%s/class/block", m);
		check_link(P(dpath(m, f.sda), "subsystem"), real);
		check_link(P(dpath(m, f.sda1), "subsystem"), real);
		snprintf(real, sizeof(real), "%s/class/input", m);
		check_link(P(dpath(m, f.event0), "subsystem"), real);
		snprintf(real, sizeof(real), "%s", dpath(m, &f.pdev));
		check_link(P(dpath(m, f.sda), "device"), real);
		snprintf(real, sizeof(real), "%s/bus/pci", m);
		check_link(P(dpath(m, &f.pdev), "subsystem"), real);
		check_link(P(m, "class/block/sda1"), dpath(m, f.sda1));
		check_link(P(m, "class/input/event0"), dpath(m, f.event0));
		check_link(P(m, "block/sda"), dpath(m, f.sda));
		CHECK_INT(lstat_r(P(m, "block/sda1")), -ENOENT);	/* partitions: not in block/ */
		check_link(P(m, "dev/block/8:0"), dpath(m, f.sda));
		check_link(P(m, "dev/block/8:1"), dpath(m, f.sda1));
		check_link(P(m, "dev/char/13:64"), dpath(m, f.event0));
		check_link(P(m, "dev/char/240:0"), dpath(m, f.t0));
		check_link(P(m, "bus/pci/devices/0000:00:1f.2"), dpath(m, &f.pdev));
		if (layout == CLASSFS_LAYOUT_DEVICES) {
			check_link(P(m, "class/block/sda"), dpath(m, f.sda));
			check_link(P(m, "class/test/t0"), dpath(m, f.t0));
		} else {
			CHECK_INT(lstat(P(m, "class/block/sda"), &st), 0);
			CHECK(S_ISDIR(st.st_mode));
			CHECK_STR(devpath(f.sda1), "/class/block/sda/sda1");
		}
		/* lsblk takes the last component of dev/block/M:m as the name */
		{
			char t[PATH_MAX];
			ssize_t n = readlink(P(m, "dev/block/8:1"), t, sizeof(t) - 1);

			CHECK(n > 5);
			if (n > 5) {
				t[n] = '\0';
				CHECK_STR(strrchr(t, '/') ? strrchr(t, '/') + 1 : t, "sda1");
			}
		}

		/* d_type of some known entries */
		{
			struct find_ctx fc = { "uevent", 0, 0 };

			list_dir(dpath(m, f.sda), 4096, find_fn, &fc, NULL);
			CHECK_INT(fc.seen, 1);
			CHECK_INT(fc.type, DT_REG);
			fc = (struct find_ctx){ "subsystem", 0, 0 };
			list_dir(dpath(m, f.sda), 4096, find_fn, &fc, NULL);
			CHECK_INT(fc.type, DT_LNK);
			fc = (struct find_ctx){ "sda1", 0, 0 };
			list_dir(P(m, "class/block"), 4096, find_fn, &fc, NULL);
			CHECK_INT(fc.seen, 1);
			CHECK_INT(fc.type, DT_LNK);
			fc = (struct find_ctx){ "sda", 0, 0 };
			list_dir(P(m, "class/block"), 4096, find_fn, &fc, NULL);
			CHECK_INT(fc.seen, 1);
			CHECK_INT(fc.type, layout == CLASSFS_LAYOUT_CLASS ? DT_DIR : DT_LNK);
			fc = (struct find_ctx){ "kernel", 0, 0 };
			list_dir(m, 4096, find_fn, &fc, NULL);
			CHECK_INT(fc.type, DT_DIR);
		}

		/* every entry of the mount: d_type, size, one read, links inside */
		walk_dir(&w, m, 0);
		CHECK_INT(w.bad, 0);
		CHECK(w.links >= 12);
		CHECK(w.files >= 20);
	}
out:
	fx_destroy(&f);
}

TEST(files_class_layout)
{
	test_begin("files_class_layout");
	check_files(CLASSFS_LAYOUT_CLASS);
}

TEST(files_devices_layout)
{
	test_begin("files_devices_layout");
	check_files(CLASSFS_LAYOUT_DEVICES);
}

/* ---- writes ---- */

static void check_writes(enum classfs_layout layout)
{
	struct fx f;
	char big[CLASSFS_ATTR_MAX + 2], value[PATH_MAX];
	const char *m;
	int fd;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, true);
	if (!mnt_ok(&f.a) || !mnt_ok(&f.b))
		goto out;
	m = f.a.dir;
	snprintf(value, sizeof(value), "%s", P(dpath(m, f.t0), "value"));

	/* one store() per write() with the whole buffer */
	fd = open(value, O_WRONLY);
	CHECK(fd >= 0);
	CHECK_INT(write(fd, "hello\n", 6), 6);
	CHECK_INT(atomic_load(&f.td->stores), 1);
	CHECK_INT(f.td->last_count, 6);
	CHECK_INT(write(fd, "second write\n", 13), 13);
	CHECK_INT(atomic_load(&f.td->stores), 2);
	CHECK_INT(f.td->last_count, 13);
	close(fd);
	CHECK_STR(val(value), "second write\n");
	CHECK_STR(val(P(dpath(f.b.dir, f.t0), "value")), "second write\n");

	/* 4096 bytes: one store(); 4097: E2BIG, no store() */
	memset(big, 'x', sizeof(big));
	big[CLASSFS_ATTR_MAX - 1] = '\n';
	CHECK_INT(write_once(value, 0, big, CLASSFS_ATTR_MAX), CLASSFS_ATTR_MAX);
	CHECK_INT(atomic_load(&f.td->stores), 3);
	CHECK_INT(f.td->last_count, CLASSFS_ATTR_MAX);
	CHECK_INT(write_once(value, 0, big, CLASSFS_ATTR_MAX + 1), -E2BIG);
	CHECK_INT(write_once(value, O_TRUNC, big, CLASSFS_ATTR_MAX + 1), -E2BIG);
	CHECK_INT(atomic_load(&f.td->stores), 3);
	CHECK_INT(f.td->last_count, CLASSFS_ATTR_MAX);

	/* store()'s error is the writer's errno */
	atomic_store(&f.td->err, -EINVAL);
	CHECK_INT(write_str(P(dpath(m, f.t0), "err"), 0, "1\n"), -EINVAL);
	atomic_store(&f.td->err, -EBUSY);
	CHECK_INT(write_str(P(dpath(m, f.t0), "err"), 0, "1\n"), -EBUSY);
	atomic_store(&f.td->err, -ENOSPC);
	CHECK_INT(write_str(P(dpath(f.b.dir, f.t0), "err"), O_TRUNC, "1\n"), -ENOSPC);

	/* mode bits, enforced for root too (at the read or write: opens are the kernel's) */
	CHECK_INT(io_err(P(dpath(m, f.t0), "ro"), O_WRONLY), -EACCES);
	CHECK_INT(io_err(P(dpath(m, f.t0), "ro"), O_RDWR), -EACCES);
	CHECK_INT(io_err(P(dpath(m, f.t0), "ro"), O_WRONLY | O_TRUNC), -EACCES);
	CHECK_INT(io_err(P(dpath(m, f.t0), "big"), O_WRONLY), -EACCES);
	CHECK_INT(io_err(P(dpath(m, f.sda), "dev"), O_WRONLY), -EACCES);
	CHECK_INT(io_err(P(dpath(m, f.t0), "wo"), O_RDONLY), -EACCES);
	CHECK_INT(io_err(P(m, "kernel/uevent_seqnum"), O_WRONLY), -EACCES);
	CHECK_STR(val(P(dpath(m, f.t0), "ro")), "read-only\n");
	CHECK_STR(val(P(dpath(m, f.sda), "dev")), "8:0\n");
	CHECK_INT(atomic_load(&f.td->stores), 3);
	CHECK_INT(write_str(P(dpath(m, f.t0), "wo"), 0, "w\n"), 2);
	CHECK_INT(atomic_load(&f.td->stores), 4);
	/* opened to append (Python's "a"): lseek(SEEK_END) asks the size, no show() error */
	fd = open(P(dpath(m, f.t0), "wo"), O_WRONLY | O_APPEND);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(lseek(fd, 0, SEEK_END) >= 0);
		CHECK_INT(write(fd, "a\n", 2), 2);
		close(fd);
	}
	CHECK_INT(atomic_load(&f.td->stores), 5);

	/* `echo x > attr`: O_WRONLY|O_TRUNC|O_CREAT on a writable attribute */
	fd = open(value, O_WRONLY | O_TRUNC | O_CREAT, 0644);
	CHECK_INT(fd >= 0 ? 0 : -errno, 0);
	if (fd >= 0) {
		CHECK_INT(write(fd, "echoed\n", 7), 7);
		close(fd);
	}
	CHECK_INT(atomic_load(&f.td->stores), 6);
	CHECK_STR(val(value), "echoed\n");
	CHECK_INT(write_str(value, O_TRUNC, "again\n"), 6);
	CHECK_STR(val(value), "again\n");
	CHECK_INT(atomic_load(&f.td->stores), 7);
	/* a file added after the device (a node of its own) behaves the same */
	CHECK_INT(write_str(P(dpath(m, f.t0), "extra"), O_TRUNC, "extra\n"), 6);
	CHECK_STR(val(P(dpath(m, f.t0), "extra")), "extra\n");
	CHECK_INT(atomic_load(&f.td->stores), 8);
	/*
	 * Files, directories and links may be made (tests/run/
	 * test-fs-writable.sh); a device's directory and code attributes are
	 * the tree's: a code attribute does not move, unlinking hides it for
	 * that device; nodes and hard links are no sysfs entries.
	 */
	CHECK_INT(err_of(mknod(P(dpath(m, f.t0), "newnode"), S_IFIFO | 0644, 0)), -EPERM);
	CHECK_INT(err_of(link(value, P(dpath(m, f.t0), "newhard"))), -EPERM);
	CHECK_INT(err_of(rename(value, P(dpath(m, f.t0), "renamed"))), -EPERM);
	CHECK_INT(err_of(rmdir(dpath(m, f.sda1))), -EBUSY);
	CHECK_INT(stat_r(value), 0);
	CHECK_INT(err_of(unlink(value)), 0);
	CHECK_INT(stat_r(value), -ENOENT);
	CHECK_INT(stat_r(dpath(m, f.sda1)), 0);
	CHECK_INT(open_err(dpath(m, f.t0), O_WRONLY), -EISDIR);
out:
	fx_destroy(&f);
}

TEST(writes_class_layout)
{
	test_begin("writes_class_layout");
	check_writes(CLASSFS_LAYOUT_CLASS);
}

TEST(writes_devices_layout)
{
	test_begin("writes_devices_layout");
	check_writes(CLASSFS_LAYOUT_DEVICES);
}

/* ---- the uevent file ---- */

static bool uevent_lines_ok(const char *s)
{
	size_t len = strlen(s);

	if (!len || s[len - 1] != '\n')
		return false;
	for (const char *l = s; *l;) {
		const char *nl = strchr(l, '\n'), *eq = strchr(l, '=');

		if (!nl || !eq || eq > nl || eq == l)
			return false;
		for (const char *k = l; k < eq; k++)
			if (!((*k >= 'A' && *k <= 'Z') || (*k >= '0' && *k <= '9') || *k == '_'))
				return false;
		if (!strncmp(l, "ACTION=", 7) || !strncmp(l, "DEVPATH=", 8) ||
		    !strncmp(l, "SUBSYSTEM=", 10) || !strncmp(l, "SEQNUM=", 7))
			return false;
		l = nl + 1;
	}
	return true;
}

static void check_uevent(enum classfs_layout layout)
{
	struct fx f;
	char ue[PATH_MAX];
	const char *s;
	int fd, n;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, true);
	if (!mnt_ok(&f.a) || !mnt_ok(&f.b))
		goto out;
	snprintf(ue, sizeof(ue), "%s", P(dpath(f.a.dir, f.sda1), "uevent"));

	/* readable: KEY=VALUE lines */
	s = val(ue);
	CHECK(uevent_lines_ok(s));
	CHECK(strstr(s, "MAJOR=8\n") != NULL);
	CHECK(strstr(s, "MINOR=1\n") != NULL);
	CHECK(strstr(s, "DEVNAME=sda1\n") != NULL);
	s = val(P(dpath(f.b.dir, f.event0), "uevent"));
	CHECK(uevent_lines_ok(s));
	CHECK(strstr(s, "MAJOR=13\nMINOR=64\n") != NULL);
	s = val(P(dpath(f.a.dir, f.input0), "uevent"));
	CHECK(strstr(s, "MAJOR=") == NULL);

	CHECK(rec_start(&f.rec, f.t) > 0);
	/* udevadm trigger: "change\n", open O_WRONLY (no O_TRUNC) then write */
	fd = open(ue, O_WRONLY);
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK_INT(write(fd, "change\n", 7), 7);
		close(fd);
	}
	n = rec_wait(&f.rec, 1);
	CHECK_INT(n, 1);
	if (n >= 1) {
		CHECK_INT(f.rec.ev[0].action, CLASSFS_ACTION_CHANGE);
		CHECK_STR(f.rec.ev[0].devpath, devpath(f.sda1));
		CHECK_STR(rec_get(&f.rec, 0, "SYNTH_UUID"), "0");
		CHECK_STR(rec_get(&f.rec, 0, "SUBSYSTEM"), "block");
	}
	rec_clear(&f.rec);

	/* udevadm trigger --action=add: "add UUID\n" */
	CHECK_INT(write_str(ue, 0, "add " UUID "\n"), 41);
	n = rec_wait(&f.rec, 1);
	CHECK_INT(n, 1);
	if (n >= 1) {
		CHECK_INT(f.rec.ev[0].action, CLASSFS_ACTION_ADD);
		CHECK_STR(f.rec.ev[0].devpath, devpath(f.sda1));
		CHECK_STR(rec_get(&f.rec, 0, "SYNTH_UUID"), UUID);
		CHECK_STR(rec_get(&f.rec, 0, "MAJOR"), "8");
	}
	rec_clear(&f.rec);

	/* with arguments, through the other mount */
	CHECK_INT(write_str(P(dpath(f.b.dir, f.event0), "uevent"), 0,
			    "change " UUID " FOO=bar\n"), 52);
	n = rec_wait(&f.rec, 1);
	CHECK_INT(n, 1);
	if (n >= 1) {
		CHECK_STR(f.rec.ev[0].devpath, devpath(f.event0));
		CHECK_STR(rec_get(&f.rec, 0, "SYNTH_UUID"), UUID);
		CHECK_STR(rec_get(&f.rec, 0, "SYNTH_ARG_FOO"), "bar");
		CHECK_STR(rec_get(&f.rec, 0, "SUBSYSTEM"), "input");
	}
	rec_clear(&f.rec);

	/* `echo add > uevent`: O_TRUNC */
	CHECK_INT(write_str(ue, O_TRUNC, "add\n"), 4);
	n = rec_wait(&f.rec, 1);
	CHECK_INT(n, 1);
	if (n >= 1) {
		CHECK_INT(f.rec.ev[0].action, CLASSFS_ACTION_ADD);
		CHECK_STR(rec_get(&f.rec, 0, "SYNTH_UUID"), "0");
	}
	rec_clear(&f.rec);
	CHECK_INT(write_str(P(dpath(f.a.dir, f.t0), "uevent"), O_TRUNC | O_CREAT, "change"), 6);
	n = rec_wait(&f.rec, 1);
	CHECK_INT(n, 1);
	if (n >= 1)
		CHECK_STR(f.rec.ev[0].devpath, devpath(f.t0));
	rec_clear(&f.rec);

	/* anything else: EINVAL and no event */
	CHECK_INT(write_str(ue, 0, "bogus\n"), -EINVAL);
	CHECK_INT(write_str(ue, O_TRUNC, "bogus\n"), -EINVAL);
	CHECK_INT(write_str(ue, 0, "add not-a-uuid\n"), -EINVAL);
	CHECK_INT(write_str(ue, 0, "\n"), -EINVAL);
	/* a value holding a newline would forge a line of monitor text: EINVAL too */
	CHECK_INT(write_str(ue, 0, "change " UUID " FOO=x\nACTION=remove\n"), -EINVAL);
	CHECK_INT(write_str(ue, O_TRUNC, "change " UUID " FOO=a\rb\n"), -EINVAL);
	CHECK_INT(write_str(ue, 0, "change " UUID " A-B=1\n"), -EINVAL);
	CHECK_INT(rec_wait(&f.rec, 0), 0);
	/* what a writer names arrives as SYNTH_ARG_ only */
	CHECK_INT(write_str(ue, 0, "change " UUID " LD_PRELOAD=/tmp/evil.so\n"), 68);
	n = rec_wait(&f.rec, 1);
	CHECK_INT(n, 1);
	if (n >= 1) {
		CHECK_STR(rec_get(&f.rec, 0, "SYNTH_ARG_LD_PRELOAD"), "/tmp/evil.so");
		CHECK(rec_get(&f.rec, 0, "LD_PRELOAD") == NULL);
	}
	rec_clear(&f.rec);
	/* the file still reads the same */
	CHECK(strstr(val(ue), "DEVNAME=sda1\n") != NULL);
out:
	fx_destroy(&f);
}

TEST(uevent_file_class_layout)
{
	test_begin("uevent_file_class_layout");
	check_uevent(CLASSFS_LAYOUT_CLASS);
}

TEST(uevent_file_devices_layout)
{
	test_begin("uevent_file_devices_layout");
	check_uevent(CLASSFS_LAYOUT_DEVICES);
}

/* ---- removal while open ---- */

static void check_removal_open(enum classfs_layout layout)
{
	struct fx f;
	struct classfs_device *d;
	struct tdata *td = tdata_new();
	char buf[256], path[PATH_MAX], epath[PATH_MAX], upath[PATH_MAX];
	int fd, fde, fdu, fdw, fds, fdd;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, false);
	if (!mnt_ok(&f.a))
		goto out;
	d = classfs_device_create(&f.test, NULL, makedev(240, 7), NULL, td, "gone");
	CHECK(d != NULL);
	if (!d)
		goto out;
	CHECK_INT(classfs_device_create_file(d, &attr_extra), 0);
	CHECK_INT(classfs_device_add_value(d, "kept", 0444, "stored\n", 7, 0), 0);
	snprintf(path, sizeof(path), "%s", P(dpath(f.a.dir, d), "value"));
	snprintf(epath, sizeof(epath), "%s", P(dpath(f.a.dir, d), "extra"));
	snprintf(upath, sizeof(upath), "%s", P(dpath(f.a.dir, d), "uevent"));
	fd = open(path, O_RDONLY);
	fde = open(epath, O_RDONLY);
	fdu = open(upath, O_RDONLY);
	fdw = open(path, O_WRONLY);
	/* stored values, cached by the kernel: their open files read ENODEV too */
	fds = open(P(dpath(f.a.dir, d), "kept"), O_RDONLY);
	fdd = open(P(dpath(f.a.dir, d), "dev"), O_RDONLY);
	CHECK(fd >= 0 && fde >= 0 && fdu >= 0 && fdw >= 0 && fds >= 0 && fdd >= 0);
	CHECK_INT(pread(fds, buf, sizeof(buf), 0), 7);
	CHECK_INT(pread(fdd, buf, sizeof(buf), 0), 6);
	CHECK_INT(read(fd, buf, sizeof(buf)), 8);
	CHECK_INT(pread(fde, buf, sizeof(buf), 0), 8);
	CHECK(pread(fdu, buf, sizeof(buf), 0) > 0);

	CHECK_INT(classfs_device_unregister(d), 0);
	errno = 0;
	CHECK_INT(pread(fd, buf, sizeof(buf), 0), -1);
	CHECK_INT(errno, ENODEV);
	errno = 0;
	CHECK_INT(pread(fde, buf, sizeof(buf), 0), -1);
	CHECK_INT(errno, ENODEV);
	errno = 0;
	CHECK_INT(pread(fdu, buf, sizeof(buf), 0), -1);
	CHECK_INT(errno, ENODEV);
	errno = 0;
	CHECK_INT(write(fdw, "x\n", 2), -1);
	CHECK_INT(errno, ENODEV);
	errno = 0;
	CHECK_INT(pread(fds, buf, sizeof(buf), 0), -1);
	CHECK_INT(errno, ENODEV);
	errno = 0;
	CHECK_INT(pread(fdd, buf, sizeof(buf), 0), -1);
	CHECK_INT(errno, ENODEV);
	CHECK_INT(atomic_load(&td->stores), 0);
	CHECK_INT(close(fd), 0);
	CHECK_INT(close(fde), 0);
	CHECK_INT(close(fdu), 0);
	CHECK_INT(close(fdw), 0);
	CHECK_INT(close(fds), 0);
	CHECK_INT(close(fdd), 0);
	CHECK_INT(stat_r(path), -ENOENT);
	CHECK_INT(lstat_r(P(f.a.dir, "class/test/gone")), -ENOENT);
	CHECK_INT(lstat_r(P(f.a.dir, "dev/char/240:7")), -ENOENT);
	/* a device of the same name comes back as a new one */
	d = classfs_device_create(&f.test, NULL, 0, NULL, td, "gone");
	CHECK(d != NULL);
	CHECK_STR(val(P(dpath(f.a.dir, d), "value")), "initial\n");
	classfs_device_unregister(d);
out:
	fx_destroy(&f);
	tdata_free(td);
}

TEST(removal_while_open_class_layout)
{
	test_begin("removal_while_open_class_layout");
	check_removal_open(CLASSFS_LAYOUT_CLASS);
}

TEST(removal_while_open_devices_layout)
{
	test_begin("removal_while_open_devices_layout");
	check_removal_open(CLASSFS_LAYOUT_DEVICES);
}

/* ---- poll ---- */

struct poll_arg {
	int fd;
	int timeout_ms;
	int ret;
	short revents;
	atomic_int started;
};

static void *poll_thread(void *p)
{
	struct poll_arg *a = p;
	struct pollfd pfd = { a->fd, POLLPRI | POLLERR, 0 };

	atomic_store(&a->started, 1);
	a->ret = poll(&pfd, 1, a->timeout_ms);
	a->revents = pfd.revents;
	return NULL;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* poll @fd (already read) while @attr of @dev is notified from here */
static void poll_one(int fd, struct classfs_device *dev, const char *attr)
{
	struct poll_arg a = { .fd = fd, .timeout_ms = 10000 };
	struct pollfd pfd = { fd, POLLPRI | POLLERR, 0 };
	pthread_t th;
	char buf[64];
	double t0;

	/* nothing pending once read from the start */
	CHECK_INT(lseek(fd, 0, SEEK_SET), 0);
	CHECK(read(fd, buf, sizeof(buf)) > 0);
	CHECK_INT(poll(&pfd, 1, 0), 0);
	CHECK_INT(pthread_create(&th, NULL, poll_thread, &a), 0);
	while (!atomic_load(&a.started))
		usleep(1000);
	usleep(200000);		/* let it block in poll() */
	t0 = now_s();
	CHECK_INT(classfs_device_notify(dev, attr), 0);
	pthread_join(th, NULL);
	CHECK_INT(a.ret, 1);
	CHECK_INT(a.revents & (POLLERR | POLLPRI), POLLERR | POLLPRI);
	CHECK(now_s() - t0 < 5.0);
	/* still reported until re-read from the start */
	pfd.revents = 0;
	CHECK_INT(poll(&pfd, 1, 0), 1);
	CHECK_INT(pfd.revents & (POLLERR | POLLPRI), POLLERR | POLLPRI);
	CHECK_INT(lseek(fd, 0, SEEK_SET), 0);
	CHECK(read(fd, buf, sizeof(buf)) > 0);
	pfd.revents = 0;
	CHECK_INT(poll(&pfd, 1, 100), 0);
	CHECK_INT(pfd.revents, 0);
	/* a notify before the poll: reported at once */
	CHECK_INT(classfs_device_notify(dev, attr), 0);
	pfd.revents = 0;
	CHECK_INT(poll(&pfd, 1, 2000), 1);
	CHECK_INT(pfd.revents & (POLLERR | POLLPRI), POLLERR | POLLPRI);
	CHECK_INT(lseek(fd, 0, SEEK_SET), 0);
	CHECK(read(fd, buf, sizeof(buf)) > 0);
	pfd.revents = 0;
	CHECK_INT(poll(&pfd, 1, 0), 0);
}

static void check_poll(enum classfs_layout layout)
{
	struct fx f;
	char buf[64];
	int fd, fdb, fde;
	struct pollfd pfd;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, true);
	if (!mnt_ok(&f.a) || !mnt_ok(&f.b))
		goto out;
	fd = open(P(dpath(f.a.dir, f.t0), "value"), O_RDONLY);
	fdb = open(P(dpath(f.b.dir, f.t0), "value"), O_RDONLY);
	fde = open(P(dpath(f.a.dir, f.t0), "extra"), O_RDONLY);
	CHECK(fd >= 0 && fdb >= 0 && fde >= 0);
	if (fd < 0 || fdb < 0 || fde < 0)
		goto close;
	CHECK(read(fd, buf, sizeof(buf)) > 0);
	CHECK(read(fdb, buf, sizeof(buf)) > 0);
	CHECK(read(fde, buf, sizeof(buf)) > 0);
	/* one notify reaches the openers at every mount point, only those of the file */
	CHECK_INT(classfs_device_notify(f.t0, "value"), 0);
	pfd = (struct pollfd){ fd, POLLPRI | POLLERR, 0 };
	CHECK_INT(poll(&pfd, 1, 1000), 1);
	pfd = (struct pollfd){ fdb, POLLPRI | POLLERR, 0 };
	CHECK_INT(poll(&pfd, 1, 1000), 1);
	pfd = (struct pollfd){ fde, POLLPRI | POLLERR, 0 };
	CHECK_INT(poll(&pfd, 1, 0), 0);
	/* a default attribute, through each mount point, and a file added later */
	poll_one(fd, f.t0, "value");
	poll_one(fdb, f.t0, "value");
	poll_one(fde, f.t0, "extra");
	/* a stored value, cached by the kernel: its reread reaches the mount too */
	CHECK_INT(classfs_device_add_value(f.t0, "pstored", 0644, "kept\n", 5, 0), 0);
	{
		int fds = open(P(dpath(f.a.dir, f.t0), "pstored"), O_RDONLY);

		CHECK(fds >= 0);
		if (fds >= 0) {
			CHECK_INT(read(fds, buf, sizeof(buf)), 5);
			poll_one(fds, f.t0, "pstored");
			poll_one(fds, f.t0, "pstored");
			close(fds);
		}
	}
	/* another attribute's notify wakes nobody here */
	CHECK_INT(pread(fd, buf, sizeof(buf), 0) > 0, 1);
	CHECK_INT(classfs_device_notify(f.t0, "ro"), 0);
	pfd = (struct pollfd){ fd, POLLPRI | POLLERR, 0 };
	CHECK_INT(poll(&pfd, 1, 100), 0);
	CHECK_INT(classfs_device_notify(f.t0, "nosuch"), -ENOENT);
close:
	if (fd >= 0)
		close(fd);
	if (fdb >= 0)
		close(fdb);
	if (fde >= 0)
		close(fde);
out:
	fx_destroy(&f);
}

TEST(poll_class_layout)
{
	test_begin("poll_class_layout");
	check_poll(CLASSFS_LAYOUT_CLASS);
}

TEST(poll_devices_layout)
{
	test_begin("poll_devices_layout");
	check_poll(CLASSFS_LAYOUT_DEVICES);
}

/* ---- what a reader costs the serving process ---- */

/*
 * Stored values (a value, `dev`) are read from the kernel's page cache:
 * once read, open+read+close and stat reach no request; a change through
 * the API or a write through the mount is read at once.  A computed
 * value's reads each ask (a getattr that runs show()).  Link texts are
 * cached until an entry moves.
 */
static void check_read_costs(enum classfs_layout layout)
{
	char stored[PATH_MAX], dev[PATH_MAX], computed[PATH_MAX];
	struct fx f;
	struct stat st;
	uint64_t base, n;
	int bad = 0;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, false);
	if (!mnt_ok(&f.a))
		goto out;
	CHECK_INT(classfs_device_add_value(f.t0, "stored", 0644, "12345\n", 6, 0), 0);
	snprintf(stored, sizeof(stored), "%s", P(dpath(f.a.dir, f.t0), "stored"));
	snprintf(dev, sizeof(dev), "%s", P(dpath(f.a.dir, f.sda), "dev"));
	snprintf(computed, sizeof(computed), "%s", P(dpath(f.a.dir, f.t0), "value"));
	CHECK_STR(val(stored), "12345\n");
	CHECK_STR(val(dev), "8:0\n");
	CHECK_INT(stat(stored, &st), 0);
	CHECK_INT(st.st_size, 6);

	/* a thousand reads and stats of each: nothing reaches the mount (a few strays allowed) */
	base = classfs_mount_requests(f.a.m, -1);
	for (int i = 0; i < 1000; i++) {
		bad += strcmp(val(stored), "12345\n") != 0;
		bad += strcmp(val(dev), "8:0\n") != 0;
		bad += stat(stored, &st) != 0 || st.st_size != 6;
	}
	n = classfs_mount_requests(f.a.m, -1) - base;
	CHECK_INT(bad, 0);
	if (n > 4)
		fprintf(stderr, "  2,000 cached reads and 1,000 stats made %llu requests\n",
			(unsigned long long)n);
	CHECK(n <= 4);

	/* changed through the API: the next read has it, whatever its length */
	CHECK_INT(classfs_device_set_value(f.t0, "stored", "7\n", 2), 0);
	CHECK_STR(val(stored), "7\n");
	CHECK_INT(classfs_device_set_value(f.t0, "stored", "8\n", 2), 0);
	CHECK_STR(val(stored), "8\n");
	CHECK_INT(stat(stored, &st), 0);
	CHECK_INT(st.st_size, 2);
	CHECK_INT(classfs_device_set_value(f.t0, "stored", "a longer value\n", 15), 0);
	CHECK_STR(val(stored), "a longer value\n");
	/* written through the mount: the writer reads back what it wrote */
	CHECK_INT(write_str(stored, 0, "9\n"), 2);
	CHECK_STR(val(stored), "9\n");
	CHECK_INT(write_str(stored, 0, "written\n"), 8);
	CHECK_STR(val(stored), "written\n");
	CHECK_INT(write_str(stored, 0, "wrote!!\n"), 8);
	CHECK_STR(val(stored), "wrote!!\n");

	/* a computed value: each read asks (its show() runs), and gets what show() says */
	CHECK_STR(val(computed), "initial\n");
	base = classfs_mount_requests(f.a.m, FUSE_GETATTR);
	for (int i = 0; i < 100; i++)
		bad += strcmp(val(computed), "initial\n") != 0;
	CHECK_INT(bad, 0);
	CHECK(classfs_mount_requests(f.a.m, FUSE_GETATTR) - base >= 100);
	CHECK_INT(write_str(computed, 0, "changed\n"), 8);
	CHECK_STR(val(computed), "changed\n");
	CHECK_INT(write_str(computed, 0, "longer than before\n"), 19);
	CHECK_STR(val(computed), "longer than before\n");
	CHECK_INT(stat(computed, &st), 0);
	CHECK_INT(st.st_size, 19);	/* the length of the value last read */

	/* a link's text is cached too, and read anew once an entry moved */
	{
		char link[PATH_MAX], t[PATH_MAX];
		ssize_t len = readlink(P(f.a.dir, "class/block/sda1"), t, sizeof(t) - 1);

		snprintf(link, sizeof(link), "%s", P(f.a.dir, "class/block/sda1"));
		CHECK(len > 0);
		t[len > 0 ? len : 0] = '\0';
		CHECK(strstr(t, "sda/sda1") != NULL);
		base = classfs_mount_requests(f.a.m, FUSE_READLINK);
		for (int i = 0; i < 100; i++)
			bad += readlink(link, t, sizeof(t) - 1) != len;
		CHECK_INT(bad, 0);
		CHECK(classfs_mount_requests(f.a.m, FUSE_READLINK) - base <= 1);
		CHECK_INT(classfs_device_rename(f.sda, "sdz"), 0);
		len = readlink(link, t, sizeof(t) - 1);
		CHECK(len > 0);
		t[len > 0 ? len : 0] = '\0';
		CHECK(strstr(t, "sdz/sda1") != NULL);
		CHECK_INT(classfs_device_rename(f.sda, "sda"), 0);
		len = readlink(link, t, sizeof(t) - 1);
		t[len > 0 ? len : 0] = '\0';
		CHECK(strstr(t, "sda/sda1") != NULL);
	}
out:
	fx_destroy(&f);
}

TEST(read_costs_class_layout)
{
	test_begin("read_costs_class_layout");
	check_read_costs(CLASSFS_LAYOUT_CLASS);
}

TEST(read_costs_devices_layout)
{
	test_begin("read_costs_devices_layout");
	check_read_costs(CLASSFS_LAYOUT_DEVICES);
}

/* ---- changes visible at once ---- */

/* both mounts, this process and another: @path exists (or not) */
static void seen_everywhere(struct fx *f, const char *rel, bool exists)
{
	for (int k = 0; k < 2; k++) {
		const char *path = P(k ? f->b.dir : f->a.dir, "%s", rel);

		if (exists) {
			CHECK_INT(stat_r(path), 0);
			CHECK(in_child(C_STAT_OK, path, NULL));
		} else {
			CHECK_INT(stat_r(path), -ENOENT);
			CHECK(in_child(C_STAT_ENOENT, path, NULL));
		}
	}
}

static void listed_everywhere(struct fx *f, const char *reldir, const char *name, bool listed)
{
	for (int k = 0; k < 2; k++) {
		const char *dir = P(k ? f->b.dir : f->a.dir, "%s", reldir);

		CHECK_INT(listed_n(dir, name), listed ? 1 : 0);
		CHECK(in_child(listed ? C_LISTED : C_NOT_LISTED, dir, name));
	}
}

static void check_visible(enum classfs_layout layout)
{
	struct fx f;
	struct classfs_device *v0, *v0c;
	char rel[PATH_MAX], crel[PATH_MAX];

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, true);
	if (!mnt_ok(&f.a) || !mnt_ok(&f.b))
		goto out;

	for (int round = 0; round < 2; round++) {
		/* absent first: the negative entries get cached */
		seen_everywhere(&f, "class/test/v0", false);
		seen_everywhere(&f, "class/test/v0/value", false);
		seen_everywhere(&f, "dev/char/240:10", false);
		seen_everywhere(&f, "class/test/v0c", false);
		listed_everywhere(&f, "class/test", "v0", false);

		v0 = classfs_device_create(&f.test, NULL, makedev(240, 10), NULL, f.td, "v0");
		CHECK(v0 != NULL);
		if (!v0)
			goto out;
		snprintf(rel, sizeof(rel), "%s", devpath(v0) + 1);
		seen_everywhere(&f, "class/test/v0", true);
		seen_everywhere(&f, "class/test/v0/value", true);
		seen_everywhere(&f, "dev/char/240:10", true);
		seen_everywhere(&f, rel, true);
		listed_everywhere(&f, "class/test", "v0", true);
		CHECK_STR(val(P(f.b.dir, "class/test/v0/value")), "initial\n");

		seen_everywhere(&f, P(rel, "v0c"), false);
		v0c = classfs_device_create(&f.test, v0, makedev(240, 11), NULL, f.td, "v0c");
		CHECK(v0c != NULL);
		if (!v0c)
			goto out;
		snprintf(crel, sizeof(crel), "%s", devpath(v0c) + 1);
		seen_everywhere(&f, "class/test/v0c", true);
		seen_everywhere(&f, crel, true);
		seen_everywhere(&f, "dev/char/240:11", true);
		listed_everywhere(&f, "class/test", "v0c", true);
		{
			char pdir[PATH_MAX];

			snprintf(pdir, sizeof(pdir), "%s", crel);
			*strrchr(pdir, '/') = '\0';
			listed_everywhere(&f, pdir, "v0c", true);
		}

		/* removal: the positive entries (cached by now) go at once */
		CHECK_INT(classfs_device_unregister(v0c), 0);
		seen_everywhere(&f, "class/test/v0c", false);
		seen_everywhere(&f, crel, false);
		seen_everywhere(&f, "dev/char/240:11", false);
		listed_everywhere(&f, "class/test", "v0c", false);
		seen_everywhere(&f, "class/test/v0", true);
		CHECK_INT(classfs_device_unregister(v0), 0);
		seen_everywhere(&f, "class/test/v0", false);
		seen_everywhere(&f, "class/test/v0/value", false);
		seen_everywhere(&f, rel, false);
		seen_everywhere(&f, "dev/char/240:10", false);
		listed_everywhere(&f, "class/test", "v0", false);
	}

	/* a store() that adds a device: visible once write() returns */
	seen_everywhere(&f, "class/test/made", false);
	CHECK_INT(write_str(P(dpath(f.a.dir, f.t0), "create"), 0, "made\n"), 5);
	seen_everywhere(&f, "class/test/made", true);
	seen_everywhere(&f, "class/test/made/delete", true);
	listed_everywhere(&f, "class/test", "made", true);
	/* a store() that removes its own device: gone once write() returns */
	CHECK_INT(write_str(P(f.b.dir, "class/test/made/delete"), 0, "1\n"), 2);
	seen_everywhere(&f, "class/test/made", false);
	seen_everywhere(&f, "class/test/made/delete", false);
	listed_everywhere(&f, "class/test", "made", false);
	if (layout == CLASSFS_LAYOUT_DEVICES)
		seen_everywhere(&f, "devices/virtual/test/made", false);
	/* and again with the same name, through O_TRUNC */
	CHECK_INT(write_str(P(dpath(f.b.dir, f.t0), "create"), O_TRUNC, "made\n"), 5);
	seen_everywhere(&f, "class/test/made/value", true);
	CHECK_INT(write_str(P(f.a.dir, "class/test/made/delete"), O_TRUNC, "1\n"), 2);
	seen_everywhere(&f, "class/test/made", false);
	/* a store() refusing a name: its error, nothing added */
	CHECK_INT(write_str(P(dpath(f.a.dir, f.t0), "create"), 0, "t0\n"), -EEXIST);
	CHECK_INT(write_str(P(dpath(f.a.dir, f.t0), "create"), 0, "..\n"), -EINVAL);
out:
	fx_destroy(&f);
}

TEST(visible_at_once_class_layout)
{
	test_begin("visible_at_once_class_layout");
	check_visible(CLASSFS_LAYOUT_CLASS);
}

TEST(visible_at_once_devices_layout)
{
	test_begin("visible_at_once_devices_layout");
	check_visible(CLASSFS_LAYOUT_DEVICES);
}

/* ---- readdir of 100,000 devices ---- */

struct tally {
	uint8_t *d;		/* d%d: the stable ones */
	uint8_t *c;		/* c%d: churned */
	int nd, nc;
	long other, dup, bad_type;
	unsigned char want_type;
	/* mutations between getdents64 calls */
	struct classfs_class *cls;
	struct classfs_device **cdev;
	int cursor;
	long ops;
	bool step;
};

static void tally_fn(void *ctx, const char *name, unsigned char type)
{
	struct tally *t = ctx;
	char *end;
	long i;

	if (type != t->want_type)
		t->bad_type++;
	if ((name[0] == 'd' || name[0] == 'c') && name[1] >= '0' && name[1] <= '9') {
		i = strtol(name + 1, &end, 10);
		if (!*end && i >= 0) {
			uint8_t *v = name[0] == 'd' ? t->d : t->c;
			int n = name[0] == 'd' ? t->nd : t->nc;

			if (i < n) {
				if (v[i]++)
					t->dup++;
				return;
			}
		}
	}
	t->other++;
}

/* between two getdents64 calls: remove and re-add a few churn devices */
static void churn_step(void *ctx)
{
	struct tally *t = ctx;

	if (!t->step)
		return;
	for (int k = 0; k < 8; k++) {
		int i = t->cursor++ % t->nc;

		if (t->cdev[i]) {
			classfs_device_unregister(t->cdev[i]);
			t->cdev[i] = NULL;
		} else {
			t->cdev[i] = classfs_device_create(t->cls, NULL, 0, NULL, NULL, "c%d", i);
		}
		t->ops++;
	}
}

struct churner {
	struct tally *t;
	atomic_int stop;
	pthread_mutex_t lock;
};

static void *churn_thread(void *p)
{
	struct churner *c = p;

	while (!atomic_load(&c->stop)) {
		pthread_mutex_lock(&c->lock);
		c->t->step = true;
		churn_step(c->t);
		c->t->step = false;
		pthread_mutex_unlock(&c->lock);
	}
	return NULL;
}

static void tally_reset(struct tally *t)
{
	memset(t->d, 0, (size_t)t->nd);
	memset(t->c, 0, (size_t)t->nc);
	t->other = t->dup = t->bad_type = 0;
}

static void tally_check_stable(struct tally *t, const char *what)
{
	long missing = 0, twice = 0;

	for (int i = 0; i < t->nd; i++) {
		missing += t->d[i] == 0;
		twice += t->d[i] > 1;
	}
	if (missing || twice || t->dup || t->other || t->bad_type)
		fprintf(stderr, "  %s: %ld missing, %ld twice, %ld duplicates, %ld unknown, %ld bad d_type\n",
			what, missing, twice, t->dup, t->other, t->bad_type);
	CHECK_INT(missing, 0);
	CHECK_INT(twice, 0);
	CHECK_INT(t->dup, 0);
	CHECK_INT(t->other, 0);
	CHECK_INT(t->bad_type, 0);
}

static void check_many(enum classfs_layout layout)
{
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *cls = t ? classfs_class_create(t, "many") : NULL;
	struct classfs_device **dev = calloc(MANY, sizeof(*dev));
	struct tally ty = { .nd = MANY, .nc = 256 };
	struct mnt m = { 0 };
	struct churner ch = { .t = &ty };
	char dir[PATH_MAX];
	pthread_t th;
	double t0;
	long n;

	ty.d = calloc(MANY, 1);
	ty.c = calloc((size_t)ty.nc, 1);
	ty.cdev = calloc((size_t)ty.nc, sizeof(*ty.cdev));
	ty.cls = cls;
	ty.want_type = layout == CLASSFS_LAYOUT_CLASS ? DT_DIR : DT_LNK;
	pthread_mutex_init(&ch.lock, NULL);
	CHECK(cls != NULL);
	if (!cls)
		goto out;
	for (int i = 0; i < MANY; i++) {
		dev[i] = classfs_device_create(cls, NULL, 0, NULL, NULL, "d%d", i);
		if (!dev[i]) {
			CHECK(dev[i] != NULL);
			goto out;
		}
	}
	if (!mnt_open(&m, t, "ro"))
		goto out;
	snprintf(dir, sizeof(dir), "%s", P(m.dir, "class/many"));

	/* every name exactly once, with big and with small buffers */
	t0 = now_s();
	n = list_dir(dir, 65536, tally_fn, &ty, NULL);
	fprintf(stderr, "  [%s] readdir of %d entries: %.1f ms\n", layout_name(layout), MANY,
		(now_s() - t0) * 1e3);
	CHECK_INT(n, MANY);
	tally_check_stable(&ty, "64 KiB buffer");
	tally_reset(&ty);
	n = list_dir(dir, 1000, tally_fn, &ty, NULL);
	CHECK_INT(n, MANY);
	tally_check_stable(&ty, "1000-byte buffer");
	tally_reset(&ty);
	CHECK(in_child(C_LISTED, dir, "d99999"));

	/* devices come and go between getdents64 calls */
	ty.step = true;
	n = list_dir(dir, 2048, tally_fn, &ty, churn_step);
	ty.step = false;
	CHECK(ty.ops > 1000);
	tally_check_stable(&ty, "changes between getdents64 calls");
	tally_reset(&ty);

	/* ... and all the time, from another thread */
	CHECK_INT(pthread_create(&th, NULL, churn_thread, &ch), 0);
	for (int round = 0; round < 2; round++) {
		n = list_dir(dir, round ? 600 : 32768, tally_fn, &ty, NULL);
		CHECK(n >= MANY);
		tally_check_stable(&ty, "changes during the listing");
		tally_reset(&ty);
	}
	atomic_store(&ch.stop, 1);
	pthread_join(th, NULL);
	fprintf(stderr, "  [%s] %ld devices added or removed meanwhile\n", layout_name(layout),
		ty.ops);

	/* the churned ones are listed exactly when present */
	n = list_dir(dir, 65536, tally_fn, &ty, NULL);
	tally_check_stable(&ty, "after the changes");
	for (int i = 0; i < ty.nc; i++)
		CHECK_INT(ty.c[i], ty.cdev[i] ? 1 : 0);
out:
	mnt_close(&m);
	if (cls) {
		for (int i = 0; i < ty.nc; i++)
			if (ty.cdev[i])
				classfs_device_unregister(ty.cdev[i]);
		for (int i = 0; i < MANY && dev[i]; i++)
			classfs_device_unregister(dev[i]);
		classfs_class_destroy(cls);
	}
	if (t)
		CHECK_INT(classfs_tree_free(t), 0);
	pthread_mutex_destroy(&ch.lock);
	free(dev);
	free(ty.d);
	free(ty.c);
	free(ty.cdev);
}

TEST(readdir_many_class_layout)
{
	test_begin("readdir_many_class_layout");
	check_many(CLASSFS_LAYOUT_CLASS);
}

TEST(readdir_many_devices_layout)
{
	test_begin("readdir_many_devices_layout");
	check_many(CLASSFS_LAYOUT_DEVICES);
}

/* ---- names whose hashes collide: still each listed once ---- */

struct offs {
	uint64_t *off;
	char (*name)[24];
	int n, cap;
	int stop_after;		/* >0: stop the listing after that many entries */
	int this_call;
};

static int offs_fn(void *ctx, const char *name, const struct classfs_stat *st, uint64_t next)
{
	struct offs *o = ctx;

	(void)st;
	if (o->stop_after && o->this_call == o->stop_after)
		return 1;
	o->this_call++;
	if (o->n < o->cap) {
		snprintf(o->name[o->n], 24, "%s", name);
		o->off[o->n++] = next;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * A copy of the library's name hash (src/core/alloc.c: FNV-1a and a
 * murmur3 finalizer), to make names that collide.  Should the library's
 * hash change, the adjacency check below fails: update the copy.
 */
static uint32_t copy_hash_name(const char *name)
{
	uint32_t h = 2166136261u;

	for (const unsigned char *p = (const unsigned char *)name; *p; p++)
		h = (h ^ *p) * 16777619u;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

static void random_name(char *buf, size_t size, uint64_t *seed, int i)
{
	*seed = *seed * 6364136223846793005ull + 1442695040888963407ull;
	snprintf(buf, size, "r%08x-%d", (unsigned int)(*seed >> 32), i);
}

/*
 * In process: 250,000 random names (about 7 pairs share a 32-bit hash)
 * in one class directory; no two entries may share a resume offset.
 */
static void check_offsets_unique(struct classfs_tree *t)
{
	enum { SCAN = 250000 };
	struct classfs_class *cls = classfs_class_create(t, "scan");
	struct classfs_device **dev = calloc(SCAN, sizeof(*dev));
	struct offs o = { calloc(SCAN, sizeof(uint64_t)), calloc(SCAN, 24), 0, SCAN, 0, 0 };
	struct classfs_stat st;
	uint64_t seed = 1;
	char name[24];
	int same = 0;

	CHECK(cls != NULL);
	if (!cls)
		goto out;
	for (int i = 0; i < SCAN; i++) {
		random_name(name, sizeof(name), &seed, i);
		dev[i] = classfs_device_create(cls, NULL, 0, NULL, NULL, "%s", name);
		if (!dev[i]) {
			CHECK(dev[i] != NULL);
			goto out;
		}
	}
	CHECK_INT(classfs_path_stat(t, "class/scan", &st), 0);
	CHECK_INT(classfs_readdir(t, st.ino, 0, offs_fn, &o), 0);
	CHECK_INT(o.n, SCAN);
	qsort(o.off, (size_t)o.n, sizeof(uint64_t), cmp_u64);
	for (int i = 1; i < o.n; i++)
		same += o.off[i] == o.off[i - 1];
	if (same)
		fprintf(stderr, "  %d entries share their resume offset with another\n", same);
	CHECK_INT(same, 0);
out:
	if (cls) {
		for (int i = 0; i < SCAN; i++)
			if (dev[i])
				classfs_device_unregister(dev[i]);
		classfs_class_destroy(cls);
	}
	free(dev);
	free(o.off);
	free(o.name);
}

/*
 * Through the mount: a directory holding pairs of names with the same
 * hash, read one entry per getdents64 call (and in process one entry per
 * classfs_readdir call), so that a reader stops between every two.
 */
static void check_collisions(enum classfs_layout layout)
{
	enum { SEARCH = 200000, NPAIRS = 4, OTHERS = 50 };
	struct classfs_tree *t = classfs_tree_new(layout);
	struct classfs_class *cls = NULL;
	struct classfs_device *dev[2 * NPAIRS + OTHERS] = { 0 };
	char names[2 * NPAIRS + OTHERS][24];
	uint64_t *hv = calloc(SEARCH, sizeof(uint64_t));
	struct offs o = { calloc(256, sizeof(uint64_t)), calloc(256, 24), 0, 256, 0, 0 };
	struct mnt m = { 0 };
	uint64_t seed = 7;
	int n = 0, adjacent = 0;
	struct classfs_stat st;
	char name[24];

	CHECK(t != NULL);
	if (!t)
		goto out;
	check_offsets_unique(t);

	/* pairs of colliding names */
	for (int i = 0; i < SEARCH; i++) {
		random_name(name, sizeof(name), &seed, i);
		hv[i] = (uint64_t)copy_hash_name(name) << 32 | (uint32_t)i;
	}
	qsort(hv, SEARCH, sizeof(uint64_t), cmp_u64);
	for (int i = 1; i < SEARCH && n < 2 * NPAIRS; i++) {
		if (hv[i] >> 32 != hv[i - 1] >> 32)
			continue;
		for (int k = 0; k < 2; k++) {
			uint32_t want = (uint32_t)hv[i - 1 + k];

			seed = 7;
			for (uint32_t j = 0; j <= want; j++)
				random_name(names[n], sizeof(names[n]), &seed, (int)j);
			n++;
		}
	}
	CHECK_INT(n, 2 * NPAIRS);
	for (int i = 0; i < OTHERS; i++)
		snprintf(names[n++], sizeof(names[0]), "other%d", i);

	cls = classfs_class_create(t, "coll");
	CHECK(cls != NULL);
	if (!cls)
		goto out;
	for (int i = 0; i < n; i++) {
		dev[i] = classfs_device_create(cls, NULL, 0, NULL, NULL, "%s", names[i]);
		CHECK(dev[i] != NULL);
	}

	/* the copy of the hash is right: each pair is listed side by side */
	CHECK_INT(classfs_path_stat(t, "class/coll", &st), 0);
	CHECK_INT(classfs_readdir(t, st.ino, 0, offs_fn, &o), 0);
	for (int p = 0; p < 2 * NPAIRS; p += 2)
		for (int i = 1; i < o.n; i++)
			adjacent += (!strcmp(o.name[i - 1], names[p]) && !strcmp(o.name[i], names[p + 1])) ||
				    (!strcmp(o.name[i], names[p]) && !strcmp(o.name[i - 1], names[p + 1]));
	if (adjacent != NPAIRS)
		fprintf(stderr, "  the test's copy of the name hash differs from the library's\n");
	CHECK_INT(adjacent, NPAIRS);

	/* in process: one entry per call */
	o.n = 0;
	o.stop_after = 1;
	for (uint64_t off = 0;;) {
		int before = o.n;

		o.this_call = 0;
		CHECK_INT(classfs_readdir(t, st.ino, off, offs_fn, &o), 0);
		if (o.n == before || o.n > 2 * n)
			break;
		off = o.off[o.n - 1];
	}
	CHECK_INT(o.n, n);
	for (int i = 0; i < n; i++) {
		int seen = 0;

		for (int k = 0; k < o.n; k++)
			seen += !strcmp(o.name[k], names[i]);
		CHECK_INT(seen, 1);
	}

	/* through the mount, one entry per getdents64 */
	if (!mnt_open(&m, t, NULL))
		goto out;
	for (int i = 0; i < n; i++) {
		const char *dir = P(m.dir, "class/coll");
		struct find_ctx f = { names[i], 0, 0 };
		long total = list_dir(dir, sizeof(struct linux_dirent64) + 24, find_fn, &f, NULL);

		if (f.seen != 1)
			fprintf(stderr, "  '%s' listed %d times with a small buffer\n", names[i], f.seen);
		CHECK_INT(f.seen, 1);
		CHECK_INT(total, n);
		if (i >= 2 * NPAIRS)
			break;	/* the pairs are what matters */
	}
out:
	mnt_close(&m);
	for (int i = 0; i < n; i++)
		if (dev[i])
			classfs_device_unregister(dev[i]);
	classfs_class_destroy(cls);
	if (t)
		CHECK_INT(classfs_tree_free(t), 0);
	free(hv);
	free(o.off);
	free(o.name);
}

TEST(readdir_hash_collisions_class_layout)
{
	test_begin("readdir_hash_collisions_class_layout");
	check_collisions(CLASSFS_LAYOUT_CLASS);
}

TEST(readdir_hash_collisions_devices_layout)
{
	test_begin("readdir_hash_collisions_devices_layout");
	check_collisions(CLASSFS_LAYOUT_DEVICES);
}

/* ---- kernel/uevent_seqnum, options, several mount points ---- */

static void check_kernel_and_options(enum classfs_layout layout)
{
	struct fx f;
	struct mnt ro = { 0 }, opts = { 0 };
	const char *d;
	char want[64];
	int fd;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, true);
	if (!mnt_ok(&f.a) || !mnt_ok(&f.b))
		goto out;

	/* kernel/uevent_seqnum follows the tree's SEQNUM */
	snprintf(want, sizeof(want), "%llu\n", (unsigned long long)classfs_tree_seqnum(f.t));
	CHECK(classfs_tree_seqnum(f.t) > 0);
	CHECK_STR(val(P(f.a.dir, "kernel/uevent_seqnum")), want);
	CHECK_STR(val(P(f.b.dir, "kernel/uevent_seqnum")), want);
	CHECK_INT(write_str(P(dpath(f.a.dir, f.sda), "uevent"), 0, "change\n"), 7);
	snprintf(want, sizeof(want), "%llu\n", (unsigned long long)classfs_tree_seqnum(f.t));
	CHECK_STR(val(P(f.a.dir, "kernel/uevent_seqnum")), want);
	CHECK_STR(val(P(f.b.dir, "kernel/uevent_seqnum")), want);
	CHECK_STR(val(P(f.a.dir, "kernel/uevent_helper")), "\n");

	/* unknown options: NULL with EINVAL, nothing mounted */
	d = new_dir();
	CHECK(d != NULL);
	if (d) {
		static const char *const bad[] = { "bogus", "allow_other,bogus", "ro,,x",
						   "default_permissions=0", "max_read=1" };

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct classfs_mount *mm;

			errno = 0;
			mm = classfs_mount_tree(f.t, d, bad[i]);
			CHECK(mm == NULL);
			if (mm) {
				fprintf(stderr, "  option \"%s\" accepted\n", bad[i]);
				classfs_mount_close(mm);
			} else {
				CHECK_INT(errno, EINVAL);
			}
			CHECK_INT(mounted(d), 0);
		}
		errno = 0;
		CHECK(classfs_mount_tree(NULL, d, NULL) == NULL);
		CHECK_INT(errno, EINVAL);
		CHECK_INT(classfs_mount_close(NULL), -EINVAL);
		drop_dir(d);
	}

	/* "ro": reads work, writes fail with EROFS */
	if (mnt_open(&ro, f.t, "ro")) {
		CHECK_STR(val(P(dpath(ro.dir, f.t0), "value")), "initial\n");
		CHECK_INT(open_err(P(dpath(ro.dir, f.t0), "value"), O_WRONLY), -EROFS);
		CHECK_INT(open_err(P(dpath(ro.dir, f.t0), "value"), O_WRONLY | O_TRUNC), -EROFS);
		CHECK_INT(open_err(P(dpath(ro.dir, f.sda), "uevent"), O_WRONLY), -EROFS);
		CHECK_INT(open_err(P(dpath(ro.dir, f.t0), "ro"), O_WRONLY), -EROFS);
		CHECK_INT(atomic_load(&f.td->stores), 0);
		/* the same tree stays writable at its other mount points */
		CHECK_INT(write_str(P(dpath(f.a.dir, f.t0), "value"), 0, "rw\n"), 3);
		CHECK_STR(val(P(dpath(ro.dir, f.t0), "value")), "rw\n");
	}

	/* the other options a FUSE user expects */
	if (mnt_open(&opts, f.t, "allow_other,nosuid,nodev,noexec,noatime,rw")) {
		CHECK_STR(val(P(dpath(opts.dir, f.sda), "dev")), "8:0\n");
		fd = open(P(dpath(opts.dir, f.t0), "value"), O_WRONLY);
		CHECK(fd >= 0);
		if (fd >= 0) {
			CHECK_INT(write(fd, "o\n", 2), 2);
			close(fd);
		}
	}
	/* four mount points of one tree; closing some leaves the others working */
	mnt_close(&ro);
	{
		struct classfs_device *x = classfs_device_create(&f.test, NULL, 0, NULL, f.td, "x");

		CHECK(x != NULL);
		CHECK_INT(stat_r(P(f.a.dir, "class/test/x")), 0);
		CHECK_INT(stat_r(P(opts.dir ? opts.dir : f.a.dir, "class/test/x")), 0);
		classfs_device_unregister(x);
		CHECK_INT(stat_r(P(f.b.dir, "class/test/x")), -ENOENT);
	}
	mnt_close(&opts);
	mnt_close(&f.a);
	CHECK_STR(val(P(dpath(f.b.dir, f.t0), "value")), "o\n");
	CHECK(in_child(C_STAT_OK, P(dpath(f.b.dir, f.sda), "dev"), NULL));
out:
	mnt_close(&ro);
	mnt_close(&opts);
	fx_destroy(&f);
}

TEST(kernel_and_options_class_layout)
{
	test_begin("kernel_and_options_class_layout");
	check_kernel_and_options(CLASSFS_LAYOUT_CLASS);
}

TEST(kernel_and_options_devices_layout)
{
	test_begin("kernel_and_options_devices_layout");
	check_kernel_and_options(CLASSFS_LAYOUT_DEVICES);
}

/* ---- a show() that blocks holds up nobody else ---- */

/*
 * `slow` blocks in show() until the test lets it go (a remote attribute
 * waiting for its client does the same, for seconds).  Other requests,
 * other slow reads included, must be served meanwhile: lookups, reads, a
 * store() that adds a device (it waits for its invalidations, which the
 * kernel may only take once a lookup was answered).
 */
#define SLOW_READERS 3
#define SLOW_WAIT_S 20		/* a show() never blocks longer than this */

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int entered;		/* show() calls started */
	bool go;		/* let them return */
} slow = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, false };

static ssize_t slow_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += SLOW_WAIT_S;
	pthread_mutex_lock(&slow.lock);
	slow.entered++;
	pthread_cond_broadcast(&slow.cond);
	while (!slow.go && pthread_cond_timedwait(&slow.cond, &slow.lock, &until) == 0)
		;
	pthread_mutex_unlock(&slow.lock);
	return sprintf(buf, "slow\n");
}

static const struct classfs_device_attribute attr_slow = { { "slow", 0444 }, slow_show, NULL };

struct slow_read {
	pthread_t thread;
	char path[PATH_MAX];
	char buf[64];
	ssize_t n;
};

static void *slow_read_main(void *arg)
{
	struct slow_read *r = arg;

	r->n = read_once(r->path, r->buf, sizeof(r->buf), NULL);
	return NULL;
}

/* lets the blocked show() calls return after 200 ms (thread) */
static void *slow_release_main(void *arg)
{
	usleep(200 * 1000);
	pthread_mutex_lock(&slow.lock);
	slow.go = true;
	pthread_cond_broadcast(&slow.cond);
	pthread_mutex_unlock(&slow.lock);
	return arg;
}

/* wait until @n show() calls are blocked (or @s seconds passed): how many are */
static int slow_wait_entered(int n, int s)
{
	struct timespec until;
	int got;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += s;
	pthread_mutex_lock(&slow.lock);
	while (slow.entered < n && pthread_cond_timedwait(&slow.cond, &slow.lock, &until) == 0)
		;
	got = slow.entered;
	pthread_mutex_unlock(&slow.lock);
	return got;
}

static void check_slow_show(enum classfs_layout layout)
{
	struct fx f;
	struct classfs_device *d;
	struct slow_read r[SLOW_READERS], fast;
	char dir[PATH_MAX];
	int started = 0;

	if (!fx_build(&f, layout))
		goto out;
	fx_mount(&f, false);
	if (!mnt_ok(&f.a))
		goto out;
	d = classfs_device_create(&f.test, NULL, 0, NULL, f.td, "slowdev");
	CHECK(d != NULL);
	if (!d)
		goto out;
	CHECK_INT(classfs_device_create_file(d, &attr_slow), 0);
	snprintf(dir, sizeof(dir), "%s", dpath(f.a.dir, f.t0));
	for (int i = 0; i < SLOW_READERS; i++) {
		snprintf(r[i].path, sizeof(r[i].path), "%s", P(dpath(f.a.dir, d), "slow"));
		r[i].n = -EINPROGRESS;
		if (pthread_create(&r[i].thread, NULL, slow_read_main, &r[i]) != 0)
			break;
		started++;
		/* one at a time: each must get in while the others block */
		if (slow_wait_entered(i + 1, 10) != i + 1)
			break;
	}
	CHECK_INT(started, SLOW_READERS);
	CHECK_INT(slow_wait_entered(SLOW_READERS, 0), SLOW_READERS);
	if (slow_wait_entered(SLOW_READERS, 0) != SLOW_READERS)
		goto release;	/* served one at a time: the rest would only wait */

	/* while all of them block: a read, a new name, a store() adding a device */
	snprintf(fast.path, sizeof(fast.path), "%s", P(dir, "value"));
	fast.n = -EINPROGRESS;
	if (pthread_create(&fast.thread, NULL, slow_read_main, &fast) == 0) {
		pthread_join(fast.thread, NULL);
		CHECK_INT(fast.n, 8);
		CHECK_STR(fast.buf, "initial\n");
	} else {
		CHECK(!"pthread_create");
	}
	CHECK_INT(lstat_r(P(f.a.dir, "class/test/made-while-slow")), -ENOENT);
	CHECK_INT(write_str(P(dir, "create"), 0, "made-while-slow\n"), 16);
	CHECK_INT(lstat_r(P(f.a.dir, "class/test/made-while-slow")), 0);
	CHECK_STR(val(P(f.a.dir, "class/test/made-while-slow/value")), "initial\n");
	CHECK_INT(slow_wait_entered(SLOW_READERS, 0), SLOW_READERS);	/* none done yet */
release:
	pthread_mutex_lock(&slow.lock);
	slow.go = true;
	pthread_cond_broadcast(&slow.cond);
	pthread_mutex_unlock(&slow.lock);
	for (int i = 0; i < started; i++) {
		pthread_join(r[i].thread, NULL);
		CHECK_INT(r[i].n, 5);
		CHECK_STR(r[i].buf, "slow\n");
	}
	if (started < SLOW_READERS)
		goto out;
	/* and the mount reads on normally afterwards */
	CHECK_STR(val(P(dpath(f.a.dir, d), "slow")), "slow\n");

	/*
	 * Unmounting while a show() blocks (and another thread waits for the
	 * next request): the unmount waits for the show(), whose answer still
	 * reaches its reader, and nothing stays behind.
	 */
	pthread_mutex_lock(&slow.lock);
	slow.entered = 0;
	slow.go = false;
	pthread_mutex_unlock(&slow.lock);
	r[0].n = -EINPROGRESS;
	if (pthread_create(&r[0].thread, NULL, slow_read_main, &r[0]) != 0) {
		CHECK(!"pthread_create");
		goto out;
	}
	CHECK_INT(slow_wait_entered(1, 10), 1);
	usleep(50 * 1000);	/* the watchdog has handed reading over by now */
	if (pthread_create(&fast.thread, NULL, slow_release_main, NULL) != 0) {
		CHECK(!"pthread_create");
		slow_release_main(NULL);
	} else {
		mnt_close(&f.a);	/* returns once the show() is done */
		pthread_join(fast.thread, NULL);
	}
	pthread_join(r[0].thread, NULL);
	CHECK_INT(r[0].n, 5);
	CHECK_STR(r[0].buf, "slow\n");
out:
	pthread_mutex_lock(&slow.lock);
	slow.go = true;		/* whatever failed above: nobody stays blocked */
	pthread_cond_broadcast(&slow.cond);
	pthread_mutex_unlock(&slow.lock);
	fx_destroy(&f);
	pthread_mutex_lock(&slow.lock);
	slow.entered = 0;
	slow.go = false;
	pthread_mutex_unlock(&slow.lock);
}

TEST(slow_show_holds_up_nothing_class_layout)
{
	test_begin("slow_show_holds_up_nothing_class_layout");
	check_slow_show(CLASSFS_LAYOUT_CLASS);
}

TEST(slow_show_holds_up_nothing_devices_layout)
{
	test_begin("slow_show_holds_up_nothing_devices_layout");
	check_slow_show(CLASSFS_LAYOUT_DEVICES);
}

/* ---- last: nothing left behind ---- */

TEST(nothing_left_mounted)
{
	test_begin("nothing_left_mounted");
	alarm(0);
	for (int i = 0; i < ndirs; i++) {
		CHECK_INT(mounted(dirs[i]), 0);
		CHECK_INT(lstat_r(dirs[i]), -ENOENT);
		CHECK_INT(dir_live[i], 0);
	}
	{
		char line[4096];
		FILE *fp = fopen("/proc/mounts", "r");
		int ours = 0;

		CHECK(fp != NULL);
		while (fp && fgets(line, sizeof(line), fp))
			if (strstr(line, "fuse.classfs") && strstr(line, "/tmp/classfs-fuse-"))
				for (int i = 0; i < ndirs; i++)
					ours += strstr(line, dirs[i]) != NULL;
		if (fp)
			fclose(fp);
		CHECK_INT(ours, 0);
	}
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test-fresh.c - a reader of the mount that saw a change's uevent reads
 * the new value, never one the kernel cached before, whichever way the
 * library changed it.
 *
 * Stored values (classfs_device_add_value(), recorded attributes, `dev`)
 * are cached by the kernel, pages and size, until the tree replaces them
 * and the mount pushes an invalidation before the changing call returns
 * (src/views/fuse/notify.c); computed ones are read through a snapshot a
 * getattr takes (snap.c).  Each test changes values many times, their
 * lengths varying (empty, a few bytes, up to a page, up to three pages
 * for a binary value; about a third of the changes keep the length) and
 * announces each change with a uevent.  A checker thread, told of the
 * event by a uevent listener, reads every file of the change through two
 * mounts of the tree (by path, through a descriptor it keeps open, and
 * its stat size) and compares with the bytes the change made, while the
 * change's maker waits.  Meanwhile two hammer threads open, read and
 * close the files in a loop, keeping the kernel's page cache hot
 * (fresh-util.h: their reads that race a change may be torn, and are
 * counted; one that is no value made fails).  The checker's read of one
 * value caches it, so a change the mount does not push fails the next
 * check: the tests cannot pass without the invalidations.
 *
 * The paths: classfs_device_set_value() (a text and a binary value),
 * classfs_path_write() (a value and a recorded attribute), a computed
 * attribute changed by its driver with classfs_device_notify(), or by
 * its store() (classfs_path_write()), a write through mount A by another
 * thread (which reads it back at once; the checker reads through A and
 * B), a device removed and added again with another number and value
 * (its `dev`; a descriptor kept open on the old value reads an error,
 * never the old bytes), and a record unloaded and loaded again with
 * other values (the same).  A computed value that changes with neither
 * (computed_silent) runs on demand only: see there.
 *
 * Needs root and /dev/fuse, as test-fuse.  Every mount is undone at the
 * end of its test, and on a crash, a timeout or a sanitizer report.
 */
#include <time.h>

#include "classfs/classfs.h"
#include "classfs/record.h"
#include "../harness.h"
#include "fresh-util.h"

#define TEST_TIMEOUT_S 240
#define CHECK_WAIT_S 10		/* for one change's check */
#define STALE_MAX 20		/* a test ends after this many */

#define FRESH0 "devices/virtual/fresh/fresh0"
#define FRESH1 "devices/virtual/fresh/fresh1"
#define REC0 "devices/virtual/frec/rec0"
#define REC1 "devices/virtual/frec/rec1"

/* ------------------------------------------------------------------ */
/* the tree: fresh0 (values, a computed attribute), rec0 (a record)    */
/* ------------------------------------------------------------------ */

struct fx {
	struct classfs_tree *t;
	struct classfs_class cls;	/* "fresh" */
	bool cls_registered;
	struct classfs_device *dev;	/* fresh0, 241:0 */
	struct classfs_device *dev1;	/* fresh1, 242:N: added again and again */
	pthread_mutex_t lock;
	unsigned int computed;		/* the change fresh0/computed shows, under lock */
	unsigned int knob;		/* the change fresh0/knob shows, under lock */
	atomic_int readback_bad;	/* a writer read back another value */
	struct classfs_mount *m[2];
	int slot[2];
};

static ssize_t computed_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			     char *buf)
{
	struct fx *f = dev->drvdata;
	unsigned int i;

	(void)a;
	pthread_mutex_lock(&f->lock);
	i = f->computed;
	pthread_mutex_unlock(&f->lock);
	return (ssize_t)value_of(K_COMPUTED, i, buf);
}

static ssize_t knob_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			 char *buf)
{
	struct fx *f = dev->drvdata;
	unsigned int i;

	(void)a;
	pthread_mutex_lock(&f->lock);
	i = f->knob;
	pthread_mutex_unlock(&f->lock);
	return (ssize_t)value_of(K_KNOB, i, buf);
}

/* takes a change's number: knob then shows that change's value */
static ssize_t knob_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  const char *buf, size_t count)
{
	struct fx *f = dev->drvdata;
	unsigned int i;

	(void)a;
	if (sscanf(buf, "%u", &i) != 1)
		return -EINVAL;
	pthread_mutex_lock(&f->lock);
	f->knob = i;
	pthread_mutex_unlock(&f->lock);
	return (ssize_t)count;
}

static const struct classfs_device_attribute attr_computed = { { "computed", 0444 },
								computed_show, NULL };
static const struct classfs_device_attribute attr_knob = { { "knob", 0644 }, knob_show,
							    knob_store };
static const struct classfs_device_attribute *const fresh_attrs[] = { &attr_computed, &attr_knob,
								       NULL };
static const struct classfs_attribute_group fresh_group = { NULL, fresh_attrs, NULL };
static const struct classfs_attribute_group *const fresh_groups[] = { &fresh_group, NULL };

/* device @name of class "frec" as a umockdev record: number @major:@i, `rec` change @i of @k */
static size_t record_text(char *out, size_t size, const char *name, int major, unsigned int k,
			  unsigned int i)
{
	char v[CLASSFS_ATTR_MAX];
	size_t len = value_of(k, i, v);

	return (size_t)snprintf(out, size,
				"P: /devices/virtual/frec/%s\nE: SUBSYSTEM=frec\n"
				"A: dev=%d:%u\\n\nA: rec=%.*s\n",
				name, major, i, (int)len, v);
}

static int load(struct fx *f, const char *name, int major, unsigned int k, unsigned int i)
{
	char rec[CLASSFS_ATTR_MAX + 256];
	struct classfs_record_error err;
	size_t len = record_text(rec, sizeof(rec), name, major, k, i);
	int r = classfs_record_load(f->t, rec, len, NULL, &err);

	if (r < 0)
		fprintf(stderr, "  record line %lu: %s\n", err.line, err.reason);
	return r;
}

static bool fx_build(struct fx *f)
{
	char buf[BIN_MAX];
	size_t len;

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->lock, NULL);
	f->slot[0] = f->slot[1] = -1;
	f->t = classfs_tree_new(CLASSFS_LAYOUT_DEVICES);
	CHECK(f->t != NULL);
	if (!f->t)
		return false;
	f->cls.name = "fresh";
	f->cls.dev_groups = fresh_groups;
	f->cls_registered = classfs_class_register(f->t, &f->cls) == 0;
	CHECK(f->cls_registered);
	if (!f->cls_registered)
		return false;
	f->dev = classfs_device_create(&f->cls, NULL, makedev(241, 0), NULL, f, "fresh0");
	CHECK(f->dev != NULL);
	if (!f->dev)
		return false;
	len = value_of(K_VALUE, 0, buf);
	CHECK_INT(classfs_device_add_value(f->dev, "value", 0644, buf, len, 0), 0);
	len = value_of(K_BIN, 0, buf);
	CHECK_INT(classfs_device_add_value(f->dev, "bin", 0644, buf, len, CLASSFS_VALUE_BINARY),
		  0);
	CHECK_INT(load(f, "rec0", 244, K_REC, 0), 0);
	for (int m = 0; m < 2; m++) {
		f->m[m] = mount_new(f->t, &f->slot[m]);
		CHECK(f->m[m] != NULL);
	}
	return !test_failed_now;
}

static void fx_destroy(struct fx *f)
{
	mount_end(&f->m[1], f->slot[1]);
	mount_end(&f->m[0], f->slot[0]);
	if (f->t) {
		if (f->dev1)
			CHECK_INT(classfs_device_unregister(f->dev1), 0);
		if (f->dev)
			CHECK_INT(classfs_device_unregister(f->dev), 0);
		classfs_record_unload(f->t);
		if (f->cls_registered)
			classfs_class_unregister(&f->cls);
		CHECK_INT(classfs_tree_free(f->t), 0);
	}
	pthread_mutex_destroy(&f->lock);
}

/* "<mount point of @m>/<@rel>" into @out (PATH_MAX) */
static const char *mpath(const struct fx *f, int m, const char *rel, char *out)
{
	snprintf(out, 4096, "%s/%s", classfs_mount_point(f->m[m]), rel);
	return out;
}

/* ------------------------------------------------------------------ */
/* the checker: reads what each announced change made                  */
/* ------------------------------------------------------------------ */

struct target {
	const char *rel;	/* below the mount point */
	unsigned int kind;
};

#define MAX_TARGETS 2
#define QUEUE 64

struct phase {
	const char *name;
	unsigned int changes;
	struct target targets[MAX_TARGETS];
	const char *devpath;	/* the device whose events announce the changes */
	bool readd;		/* announced by the device's ADD (MINOR: the change) */
	bool mixed;		/* written through the mount: reads meanwhile may mix (hammer) */
	int (*change)(struct fx *f, unsigned int i);	/* make change @i and announce it */
};

struct checker {
	struct fx *f;
	const struct phase *ph;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int q[QUEUE];	/* changes announced, not yet checked */
	unsigned int head, tail;
	unsigned int done;	/* the last change checked */
	bool stop;
	int held[2][MAX_TARGETS];	/* descriptors kept open, per mount and target */
	/* results, under lock */
	int checks, stale, reported, overflow;
	int gone_err, gone_read;	/* reads of a removed value: errors, bytes */
	int listener;
	pthread_t thread;
};

static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct checker *c = data;
	const char *v = NULL;

	if (strcmp(ev->devpath, c->ph->devpath))
		return;
	if (!c->ph->readd && ev->action == CLASSFS_ACTION_CHANGE)
		v = classfs_uevent_get(ev, "FRESH_SEQ");
	else if (c->ph->readd && ev->action == CLASSFS_ACTION_ADD)
		v = classfs_uevent_get(ev, "MINOR");
	if (!v)
		return;
	pthread_mutex_lock(&c->lock);
	if (c->tail - c->head < QUEUE)
		c->q[c->tail++ % QUEUE] = (unsigned int)strtoul(v, NULL, 10);
	else
		c->overflow++;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
}

/* one mismatch, told in full for the first few */
static void stale(struct checker *c, unsigned int i, const char *how, const char *path,
		  const char *got, ssize_t n, const char *want, size_t len)
{
	pthread_mutex_lock(&c->lock);
	c->stale++;
	if (c->reported++ < REPORT_MAX)
		fprintf(stderr, "  %s: after change %u, %s %s: %zd bytes \"%.24s\", expected %zu "
				"bytes \"%.24s\"\n",
			c->ph->name, i, how, path, n, n > 0 ? got : "", len, want);
	pthread_mutex_unlock(&c->lock);
}

/*
 * A device added again: the descriptors kept open on its predecessor's
 * files read an error now (ENODEV, as sysfs), never the bytes the kernel
 * cached of them.
 */
static void check_gone(struct checker *c, unsigned int i)
{
	char buf[READ_MAX];

	for (int m = 0; m < 2; m++)
		for (int t = 0; t < MAX_TARGETS; t++) {
			int fd = c->held[m][t];
			ssize_t n;

			if (fd < 0)
				continue;
			n = pread_all(fd, buf);
			pthread_mutex_lock(&c->lock);
			if (n < 0) {
				c->gone_err++;
			} else {
				c->gone_read++;
				if (c->reported++ < REPORT_MAX)
					fprintf(stderr, "  %s: before change %u, a descriptor on the "
							"removed %s read %zd bytes \"%.24s\"\n",
						c->ph->name, i, c->ph->targets[t].rel, n, buf);
			}
			pthread_mutex_unlock(&c->lock);
			close(fd);
			c->held[m][t] = -1;
		}
}

/* every file of change @i, through both mounts: by path, its size, by a kept descriptor */
static void check_change(struct checker *c, unsigned int i)
{
	char path[4096], got[READ_MAX], want[READ_MAX];
	struct stat st;

	if (c->ph->readd)
		check_gone(c, i);
	for (int m = 0; m < 2; m++)
		for (int t = 0; t < MAX_TARGETS && c->ph->targets[t].rel; t++) {
			const struct target *tg = &c->ph->targets[t];
			size_t len = expect_of(tg->kind, i, want);
			ssize_t n = read_file(mpath(c->f, m, tg->rel, path), got);

			want[len] = '\0';
			if (n != (ssize_t)len || memcmp(got, want, len))
				stale(c, i, m ? "mount B read" : "mount A read", tg->rel, got, n,
				      want, len);
			if (stat(path, &st) < 0 || st.st_size != (off_t)len)
				stale(c, i, m ? "mount B stat of" : "mount A stat of", tg->rel, "",
				      -1, want, len);
			if (c->held[m][t] < 0) {
				/* kept open from now on (a device added again: until the next) */
				c->held[m][t] = open(path, O_RDONLY);
			} else {
				n = pread_all(c->held[m][t], got);
				if (n != (ssize_t)len || memcmp(got, want, len))
					stale(c, i, m ? "mount B descriptor on" : "mount A descriptor on",
					      tg->rel, got, n, want, len);
			}
			pthread_mutex_lock(&c->lock);
			c->checks++;
			pthread_mutex_unlock(&c->lock);
		}
}

static void *checker_main(void *arg)
{
	struct checker *c = arg;

	pthread_mutex_lock(&c->lock);
	for (;;) {
		unsigned int i;

		while (c->head == c->tail && !c->stop)
			pthread_cond_wait(&c->cond, &c->lock);
		if (c->head == c->tail)
			break;
		i = c->q[c->head++ % QUEUE];
		pthread_mutex_unlock(&c->lock);
		check_change(c, i);
		pthread_mutex_lock(&c->lock);
		c->done = i;
		pthread_cond_broadcast(&c->cond);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

static bool checker_start(struct checker *c, struct fx *f, const struct phase *ph)
{
	memset(c, 0, sizeof(*c));
	c->f = f;
	c->ph = ph;
	memset(c->held, -1, sizeof(c->held));
	pthread_mutex_init(&c->lock, NULL);
	pthread_cond_init(&c->cond, NULL);
	if (pthread_create(&c->thread, NULL, checker_main, c) != 0) {
		CHECK(!"pthread_create");
		return false;
	}
	c->listener = classfs_listener_add(f->t, on_event, c);
	CHECK(c->listener > 0);
	return c->listener > 0;
}

/* wait until change @i was checked: false after CHECK_WAIT_S */
static bool checker_wait(struct checker *c, unsigned int i)
{
	struct timespec until;
	bool ok = true;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += CHECK_WAIT_S;
	pthread_mutex_lock(&c->lock);
	while (c->done != i && ok)
		ok = pthread_cond_timedwait(&c->cond, &c->lock, &until) == 0;
	pthread_mutex_unlock(&c->lock);
	return ok || c->done == i;
}

static void checker_stop(struct checker *c)
{
	if (c->listener > 0)
		CHECK_INT(classfs_listener_remove(c->f->t, c->listener), 0);
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	for (int m = 0; m < 2; m++)
		for (int t = 0; t < MAX_TARGETS; t++)
			if (c->held[m][t] >= 0)
				close(c->held[m][t]);
	pthread_cond_destroy(&c->cond);
	pthread_mutex_destroy(&c->lock);
}

/* ------------------------------------------------------------------ */
/* the changes                                                         */
/* ------------------------------------------------------------------ */

/* CHANGE with FRESH_SEQ=@i: the event the checker waits for */
static int announce(struct classfs_device *dev, unsigned int i)
{
	char seq[32];
	const char *const extra[] = { seq, NULL };

	snprintf(seq, sizeof(seq), "FRESH_SEQ=%u", i);
	return classfs_device_uevent(dev, CLASSFS_ACTION_CHANGE, extra);
}

static int change_set_value(struct fx *f, unsigned int i)
{
	char buf[BIN_MAX];
	size_t len = value_of(K_VALUE, i, buf);
	int r = classfs_device_set_value(f->dev, "value", buf, len);

	if (r == 0) {
		len = value_of(K_BIN, i, buf);
		r = classfs_device_set_value(f->dev, "bin", buf, len);
	}
	return r < 0 ? r : announce(f->dev, i);
}

static int change_path_write(struct fx *f, unsigned int i)
{
	char buf[CLASSFS_ATTR_MAX];
	size_t len = value_of(K_VALUE, i, buf);
	ssize_t n = classfs_path_write(f->t, FRESH0 "/value", buf, len);

	if (n == (ssize_t)len) {
		len = value_of(K_REC, i, buf);
		n = classfs_path_write(f->t, REC0 "/rec", buf, len);
	}
	if (n < 0)
		return (int)n;
	return n == (ssize_t)len ? announce(f->dev, i) : -EIO;
}

static int change_notify(struct fx *f, unsigned int i)
{
	int r;

	pthread_mutex_lock(&f->lock);
	f->computed = i;
	pthread_mutex_unlock(&f->lock);
	r = classfs_device_notify(f->dev, "computed");
	return r < 0 ? r : announce(f->dev, i);
}

/* a store() of the computed attribute knob, through the path API */
static int change_store(struct fx *f, unsigned int i)
{
	char num[16];
	int len = snprintf(num, sizeof(num), "%u\n", i);
	ssize_t n = classfs_path_write(f->t, FRESH0 "/knob", num, (size_t)len);

	if (n < 0)
		return (int)n;
	return n == len ? announce(f->dev, i) : -EIO;
}

/* the driver's value changes, with no notification: show() runs on every read */
static int change_silent(struct fx *f, unsigned int i)
{
	pthread_mutex_lock(&f->lock);
	f->computed = i;
	pthread_mutex_unlock(&f->lock);
	return announce(f->dev, i);
}

struct writer {
	struct fx *f;
	unsigned int i;
	int r;
};

/*
 * Write change @i through mount A (open O_TRUNC, one write, close, as
 * `echo v > attr`), read each file back at once through A, and announce
 * it: all from a thread of its own.
 */
static void *writer_main(void *arg)
{
	static const struct target files[] = { { FRESH0 "/value", K_WVALUE },
						{ REC0 "/rec", K_WREC } };
	struct writer *w = arg;
	char path[4096], buf[CLASSFS_ATTR_MAX], got[READ_MAX];

	w->r = 0;
	for (size_t t = 0; t < 2 && w->r == 0; t++) {
		size_t len = value_of(files[t].kind, w->i, buf);
		int fd = open(mpath(w->f, 0, files[t].rel, path), O_WRONLY | O_TRUNC);
		ssize_t n;

		if (fd < 0) {
			w->r = -errno;
			break;
		}
		n = write(fd, buf, len);
		if (n < 0)
			w->r = -errno;
		else if (n != (ssize_t)len)
			w->r = -EIO;
		close(fd);
		n = read_file(path, got);
		if (w->r == 0 && (n != (ssize_t)len || memcmp(got, buf, len))) {
			if (atomic_fetch_add(&w->f->readback_bad, 1) < REPORT_MAX)
				fprintf(stderr, "  mount_write: change %u read back from %s: %zd "
						"bytes \"%.24s\", wrote %zu\n",
					w->i, files[t].rel, n, n > 0 ? got : "", len);
		}
	}
	if (w->r == 0)
		w->r = announce(w->f->dev, w->i);
	return NULL;
}

static int change_mount_write(struct fx *f, unsigned int i)
{
	struct writer w = { f, i, 0 };
	pthread_t th;

	if (pthread_create(&th, NULL, writer_main, &w) != 0)
		return -EAGAIN;
	pthread_join(th, NULL);
	return w.r;
}

/*
 * fresh1 removed (when there) and added again as 242:@i with value
 * change @i, quietly until the value is in, then ADD
 */
static int change_readd(struct fx *f, unsigned int i)
{
	char buf[CLASSFS_ATTR_MAX];
	size_t len = value_of(K_VALUE1, i, buf);
	struct classfs_device *d;
	int r;

	if (f->dev1) {
		r = classfs_device_unregister(f->dev1);
		if (r < 0)
			return r;
		f->dev1 = NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	classfs_device_initialize(d);
	d->cls = &f->cls;
	d->devt = makedev(242, i);
	d->drvdata = f;
	d->release = (void (*)(struct classfs_device *))free;
	r = classfs_device_set_name(d, "fresh1");
	classfs_device_set_uevent_suppress(d, true);
	if (r == 0)
		r = classfs_device_add(d);
	if (r < 0) {
		classfs_device_put(d);
		return r;
	}
	f->dev1 = d;
	r = classfs_device_add_value(d, "value", 0644, buf, len, 0);
	classfs_device_set_uevent_suppress(d, false);
	return r < 0 ? r : classfs_device_uevent(d, CLASSFS_ACTION_ADD, NULL);
}

/* every record unloaded, rec1 loaded as 243:@i with `rec` change @i: its ADD */
static int change_reload(struct fx *f, unsigned int i)
{
	classfs_record_unload(f->t);
	return load(f, "rec1", 243, K_REC1, i);
}

/* ------------------------------------------------------------------ */
/* the tests                                                           */
/* ------------------------------------------------------------------ */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Make @ph's changes one by one, each checked before the next, with the
 * hammers reading meanwhile; every file of every change must have been
 * checked through both mounts, and never found stale.
 */
static void run_phase(const struct phase *ph)
{
	struct checker c;
	struct hammer h;
	struct fx f;
	unsigned int i, made = 0;
	int ntargets = 0, stale_n;
	double t0 = now_s();

	alarm(TEST_TIMEOUT_S);
	while (ntargets < MAX_TARGETS && ph->targets[ntargets].rel)
		ntargets++;
	if (!fx_build(&f)) {
		fx_destroy(&f);
		return;
	}
	if (!checker_start(&c, &f, ph)) {
		checker_stop(&c);
		fx_destroy(&f);
		return;
	}
	memset(&h, 0, sizeof(h));
	h.name = ph->name;
	h.mixed = ph->mixed;
	for (int m = 0; m < 2; m++)
		for (int t = 0; t < ntargets; t++, h.npaths++) {
			mpath(&f, m, ph->targets[t].rel, h.path[h.npaths]);
			h.any[h.npaths] = is_dev(ph->targets[t].kind);
		}
	hammer_start(&h);
	for (i = 1; i <= ph->changes; i++) {
		int r = ph->change(&f, i);

		if (r < 0) {
			fprintf(stderr, "  %s: change %u: %s\n", ph->name, i, strerror(-r));
			CHECK_INT(r, 0);
			break;
		}
		made++;
		if (!checker_wait(&c, i)) {
			fprintf(stderr, "  %s: change %u not checked within %d s (its event lost?)\n",
				ph->name, i, CHECK_WAIT_S);
			CHECK(!"each change's event reaches the checker");
			break;
		}
		pthread_mutex_lock(&c.lock);
		stale_n = c.stale;
		pthread_mutex_unlock(&c.lock);
		if (stale_n >= STALE_MAX)
			break;
	}
	hammer_stop(&h);
	checker_stop(&c);
	printf("  %s: %u changes, %d files checked (%d stale), %ld hammer reads (%ld torn), "
	       "%.1f s\n", ph->name, made, c.checks, c.stale, atomic_load(&h.reads),
	       atomic_load(&h.torn), now_s() - t0);
	CHECK_INT(c.stale, 0);
	CHECK_INT(c.overflow, 0);
	/* not vacuous: every change made, every file of each checked through both mounts */
	CHECK_INT(made, ph->changes);
	CHECK_INT(c.checks, (int)made * ntargets * 2);
	CHECK(atomic_load(&h.reads) > 0);
	CHECK_INT(atomic_load(&h.foreign), 0);
	CHECK_INT(atomic_load(&f.readback_bad), 0);
	if (ph->readd) {
		/* every change but the first replaced a device whose files were held open */
		CHECK_INT(c.gone_read, 0);
		CHECK_INT(c.gone_err, made > 0 ? ((int)made - 1) * ntargets * 2 : 0);
	}
	fx_destroy(&f);
}

#define FRESH0_EVENTS "/devices/virtual/fresh/fresh0"

TEST(set_value)
{
	static const struct phase ph = {
		.name = "set_value", .changes = 2000, .change = change_set_value,
		.targets = { { FRESH0 "/value", K_VALUE }, { FRESH0 "/bin", K_BIN } },
		.devpath = FRESH0_EVENTS,
	};

	run_phase(&ph);
}

TEST(path_write)
{
	static const struct phase ph = {
		.name = "path_write", .changes = 1000, .change = change_path_write,
		.targets = { { FRESH0 "/value", K_VALUE }, { REC0 "/rec", K_REC } },
		.devpath = FRESH0_EVENTS,
	};

	run_phase(&ph);
}

TEST(notify_computed)
{
	static const struct phase ph = {
		.name = "notify_computed", .changes = 1000, .change = change_notify,
		.targets = { { FRESH0 "/computed", K_COMPUTED } },
		.devpath = FRESH0_EVENTS,
	};

	run_phase(&ph);
}

TEST(store_computed)
{
	static const struct phase ph = {
		.name = "store_computed", .changes = 1000, .change = change_store,
		.targets = { { FRESH0 "/knob", K_KNOB } },
		.devpath = FRESH0_EVENTS,
	};

	run_phase(&ph);
}

/*
 * A computed value that changes with neither a store() nor a
 * notification: the tree cannot tell the mount, and the kernel keeps
 * the first of two getattr answers that overlap, which may be one whose
 * show() ran before the change (src/views/fuse/snap.c).  Known to fail
 * now and then; run on demand.
 */
TEST(computed_silent)
{
	static const struct phase ph = {
		.name = "computed_silent", .changes = 1000, .change = change_silent,
		.targets = { { FRESH0 "/computed", K_COMPUTED } },
		.devpath = FRESH0_EVENTS,
	};

	if (!getenv("CLASSFS_FRESH_SILENT"))
		SKIP_TEST("a computed value changed without store() or notification may be read "
			  "stale (snap.c); CLASSFS_FRESH_SILENT=1 runs it");
	run_phase(&ph);
}

TEST(mount_write)
{
	static const struct phase ph = {
		.name = "mount_write", .changes = 1000, .change = change_mount_write,
		.targets = { { FRESH0 "/value", K_WVALUE }, { REC0 "/rec", K_WREC } },
		.devpath = FRESH0_EVENTS, .mixed = true,
	};

	run_phase(&ph);
}

TEST(readd)
{
	static const struct phase ph = {
		.name = "readd", .changes = 300, .change = change_readd,
		.targets = { { FRESH1 "/dev", K_DEV1 }, { FRESH1 "/value", K_VALUE1 } },
		.devpath = "/devices/virtual/fresh/fresh1", .readd = true,
	};

	run_phase(&ph);
}

TEST(record_reload)
{
	static const struct phase ph = {
		.name = "record_reload", .changes = 300, .change = change_reload,
		.targets = { { REC1 "/dev", K_DEV_REC1 }, { REC1 "/rec", K_REC1 } },
		.devpath = "/devices/virtual/frec/rec1", .readd = true,
	};

	run_phase(&ph);
}

/* last: no mount and no directory of this run left */
TEST(nothing_left_mounted)
{
	char line[4096];
	FILE *fp = fopen("/proc/mounts", "r");
	int ours = 0;

	alarm(0);
	for (int i = 0; i < ndirs; i++) {
		CHECK_INT(dir_live[i], 0);
		CHECK_INT(access(dirs[i], F_OK) == 0 ? 0 : -errno, -ENOENT);
	}
	CHECK(fp != NULL);
	while (fp && fgets(line, sizeof(line), fp))
		for (int i = 0; i < ndirs; i++)
			ours += strstr(line, dirs[i]) != NULL;
	if (fp)
		fclose(fp);
	CHECK_INT(ours, 0);
}

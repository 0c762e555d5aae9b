/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fresh-util.h - test-fresh.c's means: its mounts (mount-guard.h), the values its changes make (each change's bytes
 * known from its kind and number, and what a read got told from them),
 * whole-file reads, and the hammer threads that read files in a loop.
 * Include after harness.h.
 */
#ifndef CLASSFS_TEST_FRESH_UTIL_H
#define CLASSFS_TEST_FRESH_UTIL_H

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "../read-util.h"

#define HAMMERS 2
#define BIN_MAX (3 * 4096)	/* a binary value spans up to three pages */
#define READ_MAX (BIN_MAX + 64)
#define REPORT_MAX 5		/* reads told in full, per test */

/* ------------------------------------------------------------------ */
/* mounts: undone on every path, crashes included                      */
/* ------------------------------------------------------------------ */

#define MOUNT_GUARD_NAME "fresh"
#include "mount-guard.h"

/* serve @t at a new directory under /tmp (its slot in dirs[] at *@slot); NULL when it cannot */
static struct classfs_mount *mount_new(struct classfs_tree *t, int *slot)
{
	struct classfs_mount *m;
	const char *d;

	*slot = -1;
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		fprintf(stderr, "  test-fresh needs root and /dev/fuse: run it as root where "
				"FUSE is available\n");
		return NULL;
	}
	d = new_dir();
	if (!d)
		return NULL;
	m = classfs_mount_tree(t, d, NULL);
	if (!m) {
		fprintf(stderr, "  classfs_mount_tree(%s): %s\n", d, strerror(errno));
		drop_dir(d);
		return NULL;
	}
	*slot = (int)((const char (*)[64])d - dirs);
	return m;
}

static void mount_end(struct classfs_mount **m, int slot)
{
	if (*m) {
		CHECK_INT(classfs_mount_close(*m), 0);
		*m = NULL;
	}
	if (slot >= 0)
		drop_dir(dirs[slot]);
}

/* ------------------------------------------------------------------ */
/* the values: each change's bytes, known from its kind and number     */
/* ------------------------------------------------------------------ */

enum kind {
	K_VALUE = 1,	/* fresh0/value */
	K_BIN,		/* fresh0/bin, binary */
	K_REC,		/* rec0/rec, a recorded attribute */
	K_COMPUTED,	/* fresh0/computed, a show() */
	K_KNOB,		/* fresh0/knob, a show() of what its store() took */
	K_WVALUE,	/* fresh0/value written through the mount: never empty */
	K_WREC,		/* rec0/rec written through the mount: never empty */
	K_VALUE1,	/* fresh1/value */
	K_REC1,		/* rec1/rec */
	K_DEV1,		/* fresh1/dev: "242:N\n" */
	K_DEV_REC1,	/* rec1/dev: "243:N\n" */
};

static uint32_t mix(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	x *= 0x846ca68bu;
	x ^= x >> 16;
	return x;
}

/* the length of change @i of kind @k: about a third keep the one before */
static size_t len_of(unsigned int k, unsigned int i)
{
	size_t max = k == K_BIN ? BIN_MAX : CLASSFS_ATTR_MAX;
	uint32_t h;

	while (i > 0 && mix(k * 7919u + i) % 3 == 0)
		i--;
	h = mix(k * 104729u + i);
	switch (h % 8) {
	case 0:
		/* a write of nothing is no write: no store(), as in sysfs */
		return k == K_WVALUE || k == K_WREC ? 16 : 0;
	case 1:
	case 2:
	case 3:
		return 16 + h / 8 % 48;
	case 4:
	case 5:
		return 64 + h / 8 % 1024;
	default:
		return 16 + h / 8 % (max - 15);
	}
}

/* the bytes of change @i of kind @k into @buf (BIN_MAX bytes): "K:I;" and letters */
static size_t value_of(unsigned int k, unsigned int i, char *buf)
{
	size_t len = len_of(k, i);
	char head[32];
	size_t n = (size_t)snprintf(head, sizeof(head), "%u:%u;", k, i);

	for (size_t j = 0; j < len; j++)
		buf[j] = j < n ? head[j] : (char)('a' + (i + j / 64) % 26);
	return len;
}

static bool is_dev(unsigned int k)
{
	return k == K_DEV1 || k == K_DEV_REC1;
}

/* what a read of kind @k must return after change @i; its length */
static size_t expect_of(unsigned int k, unsigned int i, char *buf)
{
	if (is_dev(k))
		return (size_t)sprintf(buf, "%d:%u\n", k == K_DEV1 ? 242 : 243, i);
	return value_of(k, i, buf);
}

enum shape { EXACT, TORN, FOREIGN };

#define PAGE 4096

/*
 * Bytes [@from, @to) of @buf (within one page): the filler a change's
 * value has there (value_of(): one letter per 64 bytes, from the change's
 * number modulo 26: @r, or -1 for any), then NULs only.
 */
static bool filler_then_nuls(const char *buf, size_t from, size_t to, int r)
{
	size_t j = from;

	for (; j < to && buf[j]; j++) {
		if (buf[j] < 'a' || buf[j] > 'z')
			return false;
		if (r < 0)
			r = (buf[j] - 'a' - (int)(j / 64 % 26) + 26) % 26;
		if (buf[j] != (char)('a' + (r + j / 64) % 26))
			return false;
	}
	for (; j < to; j++)
		if (buf[j])
			return false;
	return true;
}

/*
 * What a read of @n bytes at @buf (NUL-terminated) got: EXACT, one of
 * the values made (any kind and change); TORN, the start of one, cut
 * short or followed by NULs, or followed by whole pages of other changes'
 * values (struct hammer says when); FOREIGN, anything else (no value's
 * start, bytes of no value made, two values within a page).  *@at: the
 * first byte that is not the value whose start it is.
 */
static enum shape shape_of(const char *buf, size_t n, size_t *at)
{
	char want[BIN_MAX];
	unsigned int k, i;
	size_t len, same = 0, end;

	*at = 0;
	if (n == 0)
		return EXACT;
	/* NULs only: a value's start cut at nothing (an empty value's READ), then NULs */
	if (!buf[0])
		return filler_then_nuls(buf, 0, n, 0) ? TORN : FOREIGN;
	if (sscanf(buf, "%u:%u;", &k, &i) != 2 || k < K_VALUE || k > K_REC1)
		return FOREIGN;
	len = value_of(k, i, want);
	while (same < n && same < len && buf[same] == want[same])
		same++;
	*at = same;
	if (same == n)
		return n == len ? EXACT : TORN;
	/* the rest of its page: the value's page as another change of its letters has it */
	end = (same / PAGE + 1) * PAGE < n ? (same / PAGE + 1) * PAGE : n;
	if (same % PAGE && !filler_then_nuls(buf, same, end, (int)(i % 26)))
		return FOREIGN;
	/* each page after it: any change's */
	for (size_t p = (same + PAGE - 1) / PAGE * PAGE; p < n; p += PAGE)
		if (!filler_then_nuls(buf, p, p + PAGE < n ? p + PAGE : n, -1))
			return FOREIGN;
	return TORN;
}

/* the whole file at @path (READ_MAX - 1 bytes at most): length or -errno */
static ssize_t read_file(const char *path, char *buf)
{
	return tu_read_whole(path, buf, READ_MAX);
}

/*
 * one read() of the file at @path from its start, as a sysfs reader takes
 * a value: several read()s may mix two values when it changes in between
 * (no state is kept per open file: zero-message opens, unlike sysfs's
 * buffer)
 */
static ssize_t read_once(const char *path, char *buf)
{
	return tu_read_once(path, buf, READ_MAX);
}

/* the whole file through descriptor @fd from offset 0: length or -errno */
static ssize_t pread_all(int fd, char *buf)
{
	return tu_pread_whole(fd, buf, READ_MAX);
}

/* ------------------------------------------------------------------ */
/* the hammers: the files read in a loop meanwhile                     */
/* ------------------------------------------------------------------ */

#define HAMMER_FILES 8

/*
 * A read concurrent with a change may get the start of the new value,
 * cut at the old one's length or followed by NULs up to it: the tree
 * answers a READ with the new bytes while the kernel still holds the old
 * size (until the change's invalidation lands, or with the size of a
 * computed value's getattr answered before it).  A read of several
 * pages may also get some pages as they were before the change (cached,
 * not yet invalidated) and the others after it, whole pages of two
 * values.  Such torn reads are counted, not failed: a reader that saw the
 * change's event never gets one (test-fresh.c's checker).  A read racing a write through the mount
 * may also get the written bytes over the old ones, as in any file the
 * kernel caches (@mixed).  Anything else is foreign: a failure.
 */
struct hammer {
	const char *name;		/* the test's, for reports */
	char path[HAMMER_FILES][4096];
	bool any[HAMMER_FILES];		/* not one of the values made (`dev`): not looked at */
	int npaths;
	bool mixed;
	atomic_bool stop;
	atomic_long reads, torn, foreign;
	pthread_mutex_t lock;	/* the first foreign reads' reports */
	pthread_t th[HAMMERS];
	int started;
};

static void *hammer_main(void *arg)
{
	struct hammer *h = arg;
	char buf[READ_MAX];
	size_t at;

	while (!atomic_load(&h->stop))
		for (int i = 0; i < h->npaths; i++) {
			ssize_t n = read_once(h->path[i], buf);
			enum shape s;

			if (n < 0)
				continue;	/* a device between removal and addition */
			atomic_fetch_add(&h->reads, 1);
			s = h->any[i] ? EXACT : shape_of(buf, (size_t)n, &at);
			if (s == FOREIGN && h->mixed)
				s = TORN;
			if (s == TORN)
				atomic_fetch_add(&h->torn, 1);
			if (s != FOREIGN || atomic_fetch_add(&h->foreign, 1) >= REPORT_MAX)
				continue;
			pthread_mutex_lock(&h->lock);
			fprintf(stderr, "  %s: a read of %s got %zd bytes that are no value made: "
					"\"%.24s\", the value's up to byte %zu, then \"%.16s\"\n",
				h->name, h->path[i], n, buf, at, buf + at);
			pthread_mutex_unlock(&h->lock);
		}
	return NULL;
}

/* hammer the files set in @h (path, any, npaths; name, mixed) until hammer_stop() */
static void hammer_start(struct hammer *h)
{
	pthread_mutex_init(&h->lock, NULL);
	for (; h->started < HAMMERS; h->started++)
		if (pthread_create(&h->th[h->started], NULL, hammer_main, h) != 0) {
			CHECK(!"pthread_create");
			break;
		}
}

static void hammer_stop(struct hammer *h)
{
	atomic_store(&h->stop, true);
	for (int i = 0; i < h->started; i++)
		pthread_join(h->th[i], NULL);
	pthread_mutex_destroy(&h->lock);
}

#endif

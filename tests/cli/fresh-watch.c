// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fresh-watch.c - the reader of test-fresh-daemon.sh: follows a classfsd's
 * events and, for each change the script made and names, reads the
 * changed files through the daemon's mount once the change's event has
 * arrived, while hammer threads read the files in a loop meanwhile.
 *
 *   fresh-watch SOCKET MOUNT FILE...
 *
 * The FILEs (below MOUNT) are read in a loop by two threads from the
 * start, which keeps the kernel's cache of them hot.  Commands come on
 * stdin, one a line, fields separated by single spaces; each is answered
 * with one line on stdout, "ok N" or "FAIL N: what was read":
 *
 *   change CLASS NAME FILE VALUE [FILE VALUE]...
 *	CHANGE is sent for the device (classfs_client_trigger(), with
 *	FRESH_SEQ=N); once its event arrives, each FILE must read VALUE and
 *	a newline, by path, by its stat size and through a descriptor kept
 *	open on it;
 *   add DEVPATH MODALIAS FILE VALUE [FILE VALUE]...
 *	the ADD of DEVPATH whose MODALIAS is MODALIAS (a record loaded
 *	again) must have arrived, or arrive; then each FILE as above, after
 *	the descriptors kept open on the files of the device's previous ADD
 *	read an error (never their old bytes).
 *
 * At the end of stdin: "hammer READS", and exit 0 (1 on a usage or
 * connection error).  Only the main thread uses the client.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <classfs/client.h>

#include "../read-util.h"

#define HAMMERS 2
#define WAIT_S 20
#define READ_MAX 8192
#define MAX_FILES 16
#define EVENTS 512		/* events kept for the commands to find */

struct event {
	enum classfs_action action;
	char *devpath;
	char *modalias;		/* MODALIAS, or NULL */
	unsigned long seq;	/* SYNTH_ARG_FRESH_SEQ, or 0 */
};

static struct event events[EVENTS];
static unsigned int nevents;	/* ever received; events[n % EVENTS] */
static unsigned long gaps;

static const char *mount_dir;
static const char *hammered[MAX_FILES];
static int nhammered;
static atomic_bool stop;
static atomic_long hammer_reads;

/* descriptors kept open: per file path, the one opened at its last check */
static struct {
	char *path;
	int fd;
} held[MAX_FILES];

static void on_event(const struct classfs_uevent *ev, void *data)
{
	struct event *e = &events[nevents++ % EVENTS];
	const char *v;

	(void)data;
	free(e->devpath);
	free(e->modalias);
	e->action = ev->action;
	e->devpath = strdup(ev->devpath);
	e->modalias = (v = classfs_uevent_get(ev, "MODALIAS")) ? strdup(v) : NULL;
	v = classfs_uevent_get(ev, "SYNTH_ARG_FRESH_SEQ");
	e->seq = v ? strtoul(v, NULL, 10) : 0;
}

static void on_gap(uint64_t first, uint64_t last, void *data)
{
	(void)data;
	gaps += last - first + 1;
}

/* the whole file through descriptor @fd from offset 0: length or -errno */
static ssize_t pread_all(int fd, char *buf)
{
	return tu_pread_whole(fd, buf, READ_MAX);
}

static void *hammer_main(void *arg)
{
	char path[4096], buf[READ_MAX];

	(void)arg;
	while (!atomic_load(&stop)) {
		for (int i = 0; i < nhammered; i++) {
			snprintf(path, sizeof(path), "%s/%s", mount_dir, hammered[i]);
			if (tu_read_whole(path, buf, READ_MAX) >= 0)
				atomic_fetch_add(&hammer_reads, 1);
		}
		/* a breath: on 2 CPUs the daemon and the script's classctl need some */
		usleep(200);
	}
	return NULL;
}

/* the held descriptor slot of @path (made when missing), or NULL */
static int *held_fd(const char *path)
{
	int i;

	for (i = 0; i < MAX_FILES && held[i].path; i++)
		if (!strcmp(held[i].path, path))
			return &held[i].fd;
	if (i == MAX_FILES || !(held[i].path = strdup(path)))
		return NULL;
	held[i].fd = -1;
	return &held[i].fd;
}

/* the first bytes of @n at @buf for an answer line: control bytes escaped (static buffer) */
static const char *shown(const char *buf, ssize_t n)
{
	static char out[4][24 * 4 + 1];
	static int next;
	char *o = out[next++ % 4], *p = o;

	for (ssize_t i = 0; i < n && i < 24; i++) {
		unsigned char ch = (unsigned char)buf[i];

		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			*p++ = (char)ch;
		else
			p += sprintf(p, ch == '\n' ? "\\n" : "\\x%02x", ch);
	}
	*p = '\0';
	return o;
}

/* append to the answer's complaint */
static __attribute__((format(printf, 3, 4))) void complain(char *why, size_t size,
							   const char *fmt, ...)
{
	size_t l = strlen(why);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why + l, size - l, fmt, ap);
	va_end(ap);
}

/*
 * FILE VALUE pairs @fv (@n words), after the change's event: each file by
 * path, stat and kept descriptor; @gone: the descriptors kept open before
 * are of a removed device's files and must read an error first
 */
static bool check_files(char **fv, int n, bool gone, char *why, size_t size)
{
	char path[4096], got[READ_MAX], want[READ_MAX];
	bool ok = true;

	for (int i = 0; i + 1 < n; i += 2) {
		int *fd;
		ssize_t r;
		size_t len;
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", mount_dir, fv[i]);
		len = (size_t)snprintf(want, sizeof(want), "%s\n", fv[i + 1]);
		fd = held_fd(path);
		if (gone && fd && *fd >= 0) {
			r = pread_all(*fd, got);
			if (r >= 0) {
				complain(why, size, " [a descriptor on the removed %s read %zd bytes "
					 "\"%s\"]", fv[i], r, shown(got, r));
				ok = false;
			}
			close(*fd);
			*fd = -1;
		}
		r = tu_read_whole(path, got, READ_MAX);
		if (r != (ssize_t)len || memcmp(got, want, len)) {
			complain(why, size, " [%s read %zd bytes \"%s\"]", fv[i], r, shown(got, r));
			ok = false;
		}
		if (stat(path, &st) < 0) {
			complain(why, size, " [stat %s: %s]", fv[i], strerror(errno));
			ok = false;
		} else if (st.st_size != (off_t)len) {
			complain(why, size, " [%s stat size %lld, not %zu]", fv[i],
				 (long long)st.st_size, len);
			ok = false;
		}
		if (fd && *fd < 0) {
			*fd = open(path, O_RDONLY);
		} else if (fd) {
			r = pread_all(*fd, got);
			if (r != (ssize_t)len || memcmp(got, want, len)) {
				complain(why, size, " [a descriptor on %s read %zd bytes \"%s\"]",
					 fv[i], r, shown(got, r));
				ok = false;
			}
		}
	}
	return ok;
}

/* the first event from @*from on that @match takes, dispatching until it comes */
static bool wait_event(struct classfs_client *c, unsigned int *from,
		       bool (*match)(const struct event *e, void *ctx), void *ctx)
{
	time_t until = time(NULL) + WAIT_S;

	for (;;) {
		if (nevents - *from > EVENTS)
			*from = nevents - EVENTS;	/* fell out of the window: lost */
		for (; *from < nevents; (*from)++)
			if (match(&events[*from % EVENTS], ctx)) {
				(*from)++;
				return true;
			}
		if (time(NULL) > until || classfs_client_dispatch(c, 100) < 0)
			return false;
	}
}

static bool is_change(const struct event *e, void *ctx)
{
	return e->action == CLASSFS_ACTION_CHANGE && e->seq == *(unsigned long *)ctx;
}

struct add_match {
	const char *devpath, *modalias;
};

static bool is_add(const struct event *e, void *ctx)
{
	const struct add_match *a = ctx;

	return e->action == CLASSFS_ACTION_ADD && !strcmp(e->devpath, a->devpath) && e->modalias &&
	       !strcmp(e->modalias, a->modalias);
}

/* split @line at single spaces into @w (at most @max words) */
static int words(char *line, char **w, int max)
{
	int n = 0;

	line[strcspn(line, "\n")] = '\0';
	for (char *p = line; p && *p && n < max;) {
		w[n++] = p;
		p = strchr(p, ' ');
		if (p)
			*p++ = '\0';
	}
	return n;
}

/* one command: its answer on stdout */
static void command(struct classfs_client *c, char *line, unsigned long seq, unsigned int *from)
{
	char why[4096] = "", num[32];
	char *w[2 + 2 * MAX_FILES + 2];
	int n = words(line, w, (int)(sizeof(w) / sizeof(w[0])));
	bool ok;

	if (n >= 5 && n % 2 == 1 && !strcmp(w[0], "change")) {
		const char *const extra[] = { num, NULL };
		int r;

		snprintf(num, sizeof(num), "FRESH_SEQ=%lu", seq);
		r = classfs_client_trigger(c, w[1], w[2], CLASSFS_ACTION_CHANGE, extra);
		if (r < 0) {
			printf("FAIL %lu: trigger %s %s: %s (%s)\n", seq, w[1], w[2], strerror(-r),
			       classfs_client_error_message(c));
			return;
		}
		ok = wait_event(c, from, is_change, &seq);
		if (!ok)
			snprintf(why, sizeof(why), " [its event did not come in %d s]", WAIT_S);
		else
			ok = check_files(w + 3, n - 3, false, why, sizeof(why));
	} else if (n >= 5 && n % 2 == 1 && !strcmp(w[0], "add")) {
		struct add_match a = { w[1], w[2] };

		ok = wait_event(c, from, is_add, &a);
		if (!ok)
			snprintf(why, sizeof(why), " [no ADD of %s with MODALIAS=%s in %d s]", w[1],
				 w[2], WAIT_S);
		else
			ok = check_files(w + 3, n - 3, true, why, sizeof(why));
	} else {
		printf("FAIL %lu: bad command \"%s\"\n", seq, w[0] ? w[0] : "");
		return;
	}
	if (ok)
		printf("ok %lu\n", seq);
	else
		printf("FAIL %lu:%s\n", seq, why);
}

int main(int argc, char **argv)
{
	struct classfs_client *c;
	pthread_t th[HAMMERS];
	char *line = NULL;
	size_t cap = 0;
	unsigned long seq = 0;
	unsigned int from = 0;
	int started = 0, r;

	if (argc < 3 || argc - 3 > MAX_FILES) {
		fprintf(stderr, "usage: fresh-watch SOCKET MOUNT FILE... (at most %d)\n", MAX_FILES);
		return 1;
	}
	mount_dir = argv[2];
	for (int i = 3; i < argc; i++)
		hammered[nhammered++] = argv[i];
	setvbuf(stdout, NULL, _IOLBF, 0);
	c = classfs_client_connect(argv[1], 0);
	if (!c) {
		fprintf(stderr, "fresh-watch: cannot connect to %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	r = classfs_client_subscribe(c, 0, on_event, on_gap, NULL);
	if (r < 0) {
		fprintf(stderr, "fresh-watch: subscribe: %s\n", strerror(-r));
		classfs_client_disconnect(c);
		return 1;
	}
	for (; started < HAMMERS; started++)
		if (pthread_create(&th[started], NULL, hammer_main, NULL) != 0)
			break;
	while (getline(&line, &cap, stdin) > 0)
		command(c, line, ++seq, &from);
	atomic_store(&stop, true);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	printf("hammer %ld\n", atomic_load(&hammer_reads));
	if (gaps)
		printf("FAIL gaps: %lu events lost\n", gaps);
	for (int i = 0; i < MAX_FILES && held[i].path; i++) {
		if (held[i].fd >= 0)
			close(held[i].fd);
		free(held[i].path);
	}
	for (unsigned int i = 0; i < EVENTS; i++) {
		free(events[i].devpath);
		free(events[i].modalias);
	}
	free(line);
	classfs_client_disconnect(c);
	return 0;
}

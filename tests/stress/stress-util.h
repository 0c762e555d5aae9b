/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * stress-util.h - what both stress programs share: reader processes
 * that walk a mount (every file read, links read, an attribute polled
 * and written) and count the errors a sysfs reader would not get, the
 * violation counter, and reading a process's resident memory.
 */
#ifndef CLASSFS_STRESS_UTIL_H
#define CLASSFS_STRESS_UTIL_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

/* under a sanitizer memory is not the program's own to judge: no memory check */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define STRESS_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define STRESS_SANITIZED 1
#endif
#endif
#ifndef STRESS_SANITIZED
#define STRESS_SANITIZED 0
#endif

/* the run's length: --seconds, else CLASSFS_STRESS_SECONDS, else 20 */
static int stress_default_seconds(void)
{
	const char *e = getenv("CLASSFS_STRESS_SECONDS");

	return e && atoi(e) > 0 ? atoi(e) : 20;
}

static atomic_long violations;

#define VIOLATION(...)                                                  \
	do {                                                            \
		if (atomic_fetch_add(&violations, 1) < 20)              \
			fprintf(stderr, "stress: violation: " __VA_ARGS__); \
	} while (0)

/* ---- readers: separate processes walking the mount ---- */

static bool expected_errno(int e)
{
	return e == ENOENT || e == ENODEV || e == ENOTDIR || e == ESTALE || e == EACCES ||
	       e == EINTR;	/* poll() when told to stop */
}

static long reader_ops, reader_bad;

static void reader_error(const char *what, const char *path)
{
	if (expected_errno(errno))
		return;
	if (reader_bad++ < 10)
		fprintf(stderr, "stress: reader: %s %s: %s\n", what, path, strerror(errno));
}

static void walk(const char *dir, int depth)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	if (!d) {
		reader_error("opendir", dir);
		return;
	}
	reader_ops++;
	while ((e = readdir(d))) {
		char path[4096], buf[4096];
		int fd;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR && depth < 12) {
			walk(path, depth + 1);
		} else if (e->d_type == DT_REG) {
			fd = open(path, O_RDONLY);
			if (fd < 0) {
				reader_error("open", path);
				continue;
			}
			if (read(fd, buf, sizeof(buf)) < 0)
				reader_error("read", path);
			close(fd);
			reader_ops++;
		} else if (e->d_type == DT_LNK) {
			if (readlink(path, buf, sizeof(buf)) < 0)
				reader_error("readlink", path);
			reader_ops++;
		}
	}
	closedir(d);
}

/* poll a disk's state attribute for a moment (it may go away meanwhile) */
static void poll_one(const char *mnt, const char *cls)
{
	char path[4096], buf[64];
	struct pollfd pfd;
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "%s/class/%s", mnt, cls);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d)) && e->d_name[0] == '.')
		;
	if (e) {
		snprintf(path, sizeof(path), "%s/class/%s/%s/state", mnt, cls, e->d_name);
		pfd.fd = open(path, O_RDONLY);
		if (pfd.fd >= 0) {
			pfd.events = POLLPRI | POLLERR;
			if (read(pfd.fd, buf, sizeof(buf)) < 0)
				reader_error("read", path);
			if (poll(&pfd, 1, 20) < 0)
				reader_error("poll", path);
			close(pfd.fd);
			/* and a store through the mount */
			pfd.fd = open(path, O_WRONLY);
			if (pfd.fd >= 0 && write(pfd.fd, "1\n", 2) < 0)
				reader_error("write", path);
			if (pfd.fd >= 0)
				close(pfd.fd);
			else
				reader_error("open", path);
			reader_ops++;
		} else {
			reader_error("open", path);
		}
	}
	closedir(d);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * A reader is forked before any thread exists (a child of a threaded
 * process, sanitizers' runtimes included, may hang), waits for the byte
 * that says the mount is up, walks until its deadline and reports.
 */
static void reader(const char *mnt, const char *cls, int go, int report, int seconds)
{
	char line[64];
	double end;

	if (read(go, line, 1) != 1)
		_exit(3);
	end = now() + seconds;
	while (now() < end) {
		walk(mnt, 0);
		poll_one(mnt, cls);
	}
	snprintf(line, sizeof(line), "%ld %ld\n", reader_ops, reader_bad);
	_exit(write(report, line, strlen(line)) < 0 ? 2 : 0);
}

/* ---- memory ---- */

/* VmRSS of process @pid (0: this one) in KiB, or -1 */
static long rss_kib(pid_t pid)
{
	char name[64];
	FILE *f;

	snprintf(name, sizeof(name), "/proc/%d/status", pid ? (int)pid : (int)getpid());
	f = fopen(name, "r");
	char line[256];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* append @line to @path, making its folder if missing (one level) */
static void stress_record(const char *path, const char *line)
{
	char dir[4096];
	char *slash;
	FILE *f;

	if (!path)
		return;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash) {
		*slash = '\0';
		mkdir(dir, 0755);
	}
	f = fopen(path, "a");
	if (f) {
		fputs(line, f);
		fclose(f);
	}
}

#endif

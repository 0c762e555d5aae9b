// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * node-loop - one kind of call, N times, timed: what an emulated node
 * costs a program (bench/nodes/nodes.sh runs it under classfs-run and
 * umockdev-run, and bare).
 *
 *   node-loop ioctl NODE N   N EVIOCGVERSION ioctls of NODE
 *   node-loop read NODE N    N one-byte reads of NODE (a script feeds it)
 *   node-loop file PATH N [SIZE]  N preads of SIZE bytes (default 1) of a
 *                            regular file
 *
 * Prints "ns/call: X" (the loop's wall time over N).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include <linux/input.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static char buf[65536];
	long n, i, size = argc > 4 ? atol(argv[4]) : 1;
	double t0, t1;
	char c;
	int fd, v;

	if (argc < 4 || argc > 5 || size < 1 || size > (long)sizeof(buf)) {
		fprintf(stderr, "usage: node-loop ioctl|read|file PATH N [SIZE]\n");
		return 2;
	}
	n = atol(argv[3]);
	fd = open(argv[2], strcmp(argv[1], "file") ? O_RDWR : O_RDONLY);
	if (fd < 0) {
		perror(argv[2]);
		return 1;
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (!strcmp(argv[1], "ioctl")) {
			if (ioctl(fd, EVIOCGVERSION, &v) < 0)
				break;
		} else if (!strcmp(argv[1], "read")) {
			if (read(fd, &c, 1) != 1)
				break;
		} else if (pread(fd, buf, (size_t)size, 0) != size) {
			break;
		}
	}
	t1 = now_ns();
	if (i < n) {
		perror(argv[1]);
		return 1;
	}
	printf("ns/call: %.0f\n", (t1 - t0) / (double)n);
	return 0;
}

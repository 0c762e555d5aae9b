// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * fault-driver.c - a remote driver that misbehaves on request, for
 * tests/faults/test-faults.sh.  It connects to a classfsd, publishes
 * devices of class "fault" bound to its connection, prints "ready" once
 * they are all there, then serves its remote attributes until killed.
 *
 * usage: fault-driver SOCKET MODE [N]
 *   bulk N       publish N bound devices (with nested children) in batches,
 *                printing "batch K" after each, pausing 50 ms between them
 *                (so a kill lands mid-batch)
 *   hang         one device whose `state` show() never returns
 *   errno N      one device whose `state` show() and `ctl` store() answer
 *                -N (any number, in range or not)
 *   crash        one device whose `state` show() aborts the process
 *   reconnect N  N bound devices with a remote `state`, reconnecting (and
 *                publishing again) after a daemon restart
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "classfs/client.h"

static const char *mode;
static long answer;		/* errno mode: what show() and store() return */

static ssize_t ctl_store(void *data, const char *buf, size_t count)
{
	(void)data;
	(void)buf;
	(void)count;
	return answer;
}

static ssize_t state_show(void *data, char *buf, size_t size)
{
	(void)data;
	if (!strcmp(mode, "errno"))
		return answer;
	if (!strcmp(mode, "hang"))
		for (;;)
			pause();
	if (!strcmp(mode, "crash"))
		abort();
	return snprintf(buf, size, "ok\n");
}

static int fail(struct classfs_client *c, const char *what, int r)
{
	fprintf(stderr, "fault-driver: %s: %s (%s)\n", what, strerror(-r),
		c ? classfs_client_error_message(c) : "");
	return 1;
}

int main(int argc, char **argv)
{
	struct classfs_client *c;
	unsigned int flags = 0;
	long n = argc > 3 ? atol(argv[3]) : 1;
	int r;

	if (argc < 3) {
		fprintf(stderr, "usage: fault-driver SOCKET bulk|hang|crash|errno|reconnect [N]\n");
		return 2;
	}
	mode = argv[2];
	if (!strcmp(mode, "reconnect"))
		flags = CLASSFS_CLIENT_RECONNECT;
	if (!strcmp(mode, "errno")) {
		answer = -n;
		n = 1;
	}
	setvbuf(stdout, NULL, _IONBF, 0);
	c = classfs_client_connect(argv[1], flags);
	if (!c)
		return fail(NULL, "connect", -errno);

	struct classfs_client_attr attrs[] = {
		{ .name = "state", .mode = 0444, .show = state_show },
		{ .name = "size", .mode = 0444, .value = "8\n", .len = 2 },
		{ .name = "ctl", .mode = 0644, .show = state_show, .store = ctl_store },
	};
	if (!strcmp(mode, "bulk")) {
		enum { BATCH = 500 };
		static struct classfs_client_device devs[BATCH];
		static char names[BATCH][32], parents[BATCH][32];

		for (long done = 0, k = 1; done < n; k++) {
			size_t m = 0;

			/* disks and their partitions: nested, parents first */
			for (; m + 1 < BATCH && done < n; m += 2, done += 2) {
				snprintf(names[m], sizeof(names[m]), "bulk%ld", done / 2);
				snprintf(names[m + 1], sizeof(names[m + 1]), "bulk%ldp1", done / 2);
				snprintf(parents[m + 1], sizeof(parents[m + 1]), "bulk%ld", done / 2);
				devs[m] = (struct classfs_client_device){
					.cls = "fault", .name = names[m], .attrs = attrs + 1, .nattrs = 1,
					.flags = CLASSFS_CLIENT_BIND };
				devs[m + 1] = (struct classfs_client_device){
					.cls = "fault", .name = names[m + 1], .parent = parents[m + 1],
					.attrs = attrs + 1, .nattrs = 1, .flags = CLASSFS_CLIENT_BIND };
			}
			r = classfs_client_device_add_batch(c, devs, m, NULL);
			if (r < 0)
				return fail(c, "add", r);
			printf("batch %ld\n", k);
			usleep(50000);
		}
		printf("ready\n");
		for (;;)
			pause();
	}
	for (long i = 0; i < n; i++) {
		char name[32];
		struct classfs_client_device d = {
			/* a number (a /dev node) is root's to give: none as another uid */
			.cls = "fault", .name = name,
			.devt = getuid() == 0 ? makedev(240, (unsigned int)i) : 0,
			.attrs = attrs, .nattrs = !strcmp(mode, "errno") ? 3 : 2,
			.flags = CLASSFS_CLIENT_BIND,
		};

		snprintf(name, sizeof(name), "%s%ld", mode, i);
		r = classfs_client_device_add(c, &d);
		if (r < 0)
			return fail(c, "add", r);
	}
	printf("ready\n");
	for (int lost = 0;;) {
		r = classfs_client_dispatch(c, -1);
		if (r >= 0 || r == -EINTR) {
			lost = 0;
			continue;
		}
		/* a restarting daemon: the library reconnects on a later call */
		if (flags && ++lost < 50) {
			usleep(200000);
			continue;
		}
		return fail(c, "dispatch", r);
	}
}

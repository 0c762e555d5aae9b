// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench-record.c - loading and saving umockdev records: a generated
 * machine of N block devices (one third disks below PCI storage
 * controllers, two thirds partitions nested in them), N = 10k, 100k, 1M
 * (--quick: 10k, 100k); load and save time (median of several runs for
 * the small sizes), resident memory per device; and, on the same 1,500
 * device file (500 with --quick), `umockdev-run -d FILE -- true` against
 * classfs_record_load() (skipped when umockdev-run is missing).  Prints
 * markdown tables.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../bench-util.h"
#include "classfs/classfs.h"
#include "classfs/record.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Linux's disk names: sda .. sdz, sdaa .. */
static void disk_name(char *buf, size_t size, unsigned int i)
{
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = (char)('a' + i % 26);
		i = i / 26;
	} while (i-- > 0);
	snprintf(buf, size, "sd");
	for (int k = 0; k < n && k + 3 < (int)size; k++)
		buf[2 + k] = tmp[n - 1 - k], buf[3 + k] = '\0';
}

/* the record of @ndev devices: disks with two partitions each */
static char *generate(size_t ndev, size_t *len)
{
	size_t ndisks = (ndev + 2) / 3, cap = ndev * 420 + 4096, off = 0, made = 0;
	char *s = malloc(cap);
	unsigned int minor = 0;

	if (!s)
		return NULL;
	for (size_t d = 0; d < ndisks && made < ndev; d++) {
		char disk[16], ctrl[64], path[256];
		unsigned int dmin = minor++;

		disk_name(disk, sizeof(disk), (unsigned int)d);
		/* a storage controller per 1000 disks: the disks' bus parent */
		snprintf(ctrl, sizeof(ctrl), "/devices/pci0000:00/0000:00:%02zx.%zu",
			 (d / 1000) / 8 % 32, (d / 1000) % 8);
		if (d % 1000 == 0 && d / 1000 < 256)
			off += (size_t)snprintf(s + off, cap - off,
				"P: %s\nE: DRIVER=ahci\nE: PCI_CLASS=10601\nE: SUBSYSTEM=pci\n"
				"A: class=0x010601\\n\nA: vendor=0x8086\\n\n\n", ctrl);
		if (d / 1000 >= 256)	/* past 256 controllers: all on the last one */
			snprintf(ctrl, sizeof(ctrl), "/devices/pci0000:00/0000:00:1f.7");
		snprintf(path, sizeof(path), "%s/block/%s", ctrl, disk);
		off += (size_t)snprintf(s + off, cap - off,
			"P: %s\nN: %s\nE: DEVNAME=/dev/%s\nE: DEVTYPE=disk\nE: MAJOR=259\n"
			"E: MINOR=%u\nE: SUBSYSTEM=block\nE: ID_SERIAL=disk-%zu\n"
			"A: dev=259:%u\\n\nA: removable=0\\n\nA: size=7814037168\\n\n\n",
			path, disk, disk, dmin, d, dmin);
		made++;
		for (int p = 1; p <= 2 && made < ndev; p++, made++) {
			unsigned int pmin = minor++;

			off += (size_t)snprintf(s + off, cap - off,
				"P: %s/%s%d\nN: %s%d\nE: DEVNAME=/dev/%s%d\nE: DEVTYPE=partition\n"
				"E: MAJOR=259\nE: MINOR=%u\nE: PARTN=%d\nE: SUBSYSTEM=block\n"
				"A: dev=259:%u\\n\nA: partition=%d\\n\nA: size=2097152\\n\n"
				"A: start=%d\\n\n\n",
				path, disk, p, disk, p, disk, p, pmin, p, pmin, p, 2048 + p * 2097152);
		}
	}
	*len = off;
	return s;
}

struct result {
	double load, save, load_user, load_sys;
	long rss, faults;
};

struct usage {
	double user, sys;
	long faults;
};

static struct usage usage_now(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (struct usage){
		.user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
		.sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		.faults = ru.ru_minflt,
	};
}

/*
 * The reference for the system time of a load: seconds to touch @pages
 * pages of fresh anonymous memory, as many as the load faulted in.  The
 * kernel zeroes each page on its first touch; on a virtual machine the
 * host may have to back it too, which makes the figure vary with the
 * host's state: it is measured right after the load it stands beside.
 */
static double touch_fresh(long pages)
{
	size_t size = (size_t)pages * 4096;
	char *m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0;

	if (m == MAP_FAILED)
		return -1;
	t0 = now();
	for (size_t off = 0; off < size; off += 4096)
		((volatile char *)m)[off] = 1;
	t0 = now() - t0;
	munmap(m, size);
	return t0;
}

/* one load and save; when @touch, also the fresh-memory reference of the load */
static int one_run(const char *data, size_t len, struct result *res, double *touch)
{
	struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	struct classfs_record_error err;
	long rss0 = rss_bytes(getpid());
	FILE *null = fopen("/dev/null", "w");
	struct usage u0, u1;
	double t0;
	int r;

	t0 = now();
	u0 = usage_now();
	r = classfs_record_load(t, data, len, NULL, &err);
	res->load = now() - t0;
	u1 = usage_now();
	res->load_user = u1.user - u0.user;
	res->load_sys = u1.sys - u0.sys;
	res->faults = u1.faults - u0.faults;
	res->rss = rss_bytes(getpid()) - rss0;
	if (touch && r == 0)
		*touch = touch_fresh(res->faults);
	if (r < 0) {
		fprintf(stderr, "load: %d %s:%lu: %s\n", r, err.file, err.line, err.reason);
		fclose(null);
		return r;
	}
	t0 = now();
	r = classfs_record_save(t, NULL, null);
	res->save = now() - t0;
	fclose(null);
	classfs_record_unload(t);
	classfs_tree_free(t);
	return r;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* seconds of `umockdev-run -d FILE -- true`, or < 0 */
static double umockdev_run(const char *file)
{
	double t0;
	int status;
	pid_t pid;

	fflush(stdout);		/* the child must not write our buffer again */
	t0 = now();
	pid = fork();

	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execlp("umockdev-run", "umockdev-run", "-d", file, "--", "true", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	return now() - t0;
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && !strcmp(argv[1], "--quick");

	/* --load N: one load of N devices, nothing printed (instructions.sh) */
	if (argc == 3 && !strcmp(argv[1], "--load")) {
		size_t len, n = strtoul(argv[2], NULL, 10);
		char *data = generate(n, &len);
		struct classfs_tree *t = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
		struct classfs_record_error err;
		int r;

		if (!data || !t)
			return 1;
		r = classfs_record_load(t, data, len, NULL, &err);
		if (r < 0)
			fprintf(stderr, "load: %d %s:%lu: %s\n", r, err.file, err.line, err.reason);
		return r < 0;
	}
	/* --write N FILE: the record of N devices, for run.sh's daemon rows */
	if (argc == 4 && !strcmp(argv[1], "--write")) {
		size_t len, n = strtoul(argv[2], NULL, 10);
		char *data = generate(n, &len);
		FILE *f = fopen(argv[3], "w");

		if (!data || !f || fwrite(data, 1, len, f) != len || fclose(f)) {
			perror(argv[3]);
			return 1;
		}
		free(data);
		return 0;
	}
	static const size_t sizes[] = { 10000, 100000, 1000000 };
	size_t nsizes = quick ? 2 : 3;
	int fails = 0;

	double per10k = 0, per1m = 0, user10k = 0, user1m = 0;

	printf("| devices | record MB | load s | load us/device | CPU us/device: user + sys | "
	       "fresh memory faulted, B/device | touching as much alone, us/device | save s | "
	       "RSS B/device | target | met? |\n");
	printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n");
	for (size_t i = 0; i < nsizes; i++) {
		size_t len, n = sizes[i];
		char *data = generate(n, &len);
		int runs = n <= 10000 ? 7 : n <= 100000 ? 3 : 1;
		double loads[7], cpus[7], users[7], syss[7], saves[7], load, touch = -1;
		double target = n == 10000 ? 0.05 : 5.0;
		struct result res = { 0 };
		long rss = 0, faults = 0;

		if (!data)
			return 1;
		for (int k = 0; k < runs; k++) {
			if (one_run(data, len, &res, !k ? &touch : NULL) < 0) {
				fails++;
				break;
			}
			loads[k] = res.load;
			cpus[k] = res.load_user + res.load_sys;
			users[k] = res.load_user;
			syss[k] = res.load_sys;
			saves[k] = res.save;
			if (!k) {
				rss = res.rss;	/* later runs reuse the heap */
				faults = res.faults;
			}
		}
		qsort(loads, (size_t)runs, sizeof(double), cmp_double);
		qsort(cpus, (size_t)runs, sizeof(double), cmp_double);
		qsort(users, (size_t)runs, sizeof(double), cmp_double);
		qsort(syss, (size_t)runs, sizeof(double), cmp_double);
		qsort(saves, (size_t)runs, sizeof(double), cmp_double);
		load = loads[runs / 2];
		if (n == 10000) {
			per10k = cpus[runs / 2] / (double)n;
			user10k = users[runs / 2] / (double)n;
		}
		if (n == 1000000) {
			per1m = cpus[runs / 2] / (double)n;
			user1m = users[runs / 2] / (double)n;
		}
		printf("| %zu | %.1f | %.4f | %.2f | %.2f + %.2f | %ld | %.2f | %.4f | %ld | %s | %s |\n",
		       n, (double)len / 1e6, load, load * 1e6 / (double)n,
		       users[runs / 2] * 1e6 / (double)n, syss[runs / 2] * 1e6 / (double)n,
		       faults * 4096 / (long)n, touch * 1e6 / (double)n, saves[runs / 2],
		       rss / (long)n, n == 10000 ? "< 0.05 s" : n == 1000000 ? "< 5 s" : "-",
		       n == 100000 ? "-" : load < target ? "yes" : "**no**");
		fflush(stdout);
		free(data);
	}
	if (per1m > 0) {
		printf("| linear: CPU per device at 1M over 10k | | | | %.2fx (user %.2fx) | | | | | "
		       "<= 1.5x | %s |\n", per1m / per10k, user1m / user10k,
		       per1m / per10k <= 1.5 ? "yes" : "**no**");
	}
	printf("\nload s, save s, CPU: medians (7 runs at 10k, 3 at 100k, 1 at 1M); load and "
	       "save s: wall clock; user + sys: the process's (getrusage).  Fresh memory: the "
	       "first run's page faults, which the later runs of a size mostly do not take "
	       "(the heap is reused); beside it, the time to touch as many fresh pages with "
	       "nothing else, measured right after that first load: the part of a cold load "
	       "that is the kernel's (zeroing, and on a virtual machine the host backing the "
	       "pages), and varies with the host.\n");

	/*
	 * The same file for umockdev-run and for classfs: 1,500 devices, 500
	 * with --quick (umockdev's parser is quadratic: 1,500 take 8 to 30 s
	 * here, too long for CI's quick run).
	 */
	{
		char file[] = "/tmp/bench-record.XXXXXX";
		size_t len, ncmp = quick ? 500 : 1500;
		char *data = generate(ncmp, &len);
		int fd = mkstemp(file);
		double ours[7], theirs;
		struct result res;

		if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
			perror("temporary record");
			return 1;
		}
		close(fd);
		for (int k = 0; k < 7; k++) {
			if (one_run(data, len, &res, NULL) < 0)
				fails++;
			ours[k] = res.load;
		}
		qsort(ours, 7, sizeof(double), cmp_double);
		theirs = umockdev_run(file);
		printf("\n| %zu-device file | seconds |\n| --- | ---: |\n", ncmp);
		printf("| classfs_record_load (median of 7) | %.5f |\n", ours[3]);
		if (theirs < 0)
			printf("| umockdev-run -d FILE -- true | skipped (umockdev-run missing "
			       "or failed) |\n");
		else
			printf("| umockdev-run -d FILE -- true | %.3f |\n"
			       "| ratio (target >= 100x) | %.0fx |\n", theirs, theirs / ours[3]);
		unlink(file);
		free(data);
	}
	return fails ? 1 : 0;
}

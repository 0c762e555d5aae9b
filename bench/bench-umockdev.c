// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench-umockdev.c - the reference for bench-core: umockdev's add-device
 * API (libumockdev, the best userspace peer) on N nested devices (N/3
 * parents, each with two children, each with a `dev` attribute and
 * MAJOR/MINOR properties), the same shape bench-core builds with classfs.
 *
 * Per device, median of --reps runs (default 3), each on a fresh testbed:
 *   create   umockdev_testbed_add_device()
 *   lookup   stat(2) of the device's /sys path, redirected into the
 *            testbed by libumockdev-preload (what a program under
 *            umockdev does; umockdev has no lookup call of its own)
 *   destroy  umockdev_testbed_remove_device(), children first
 * Prints "devices N", "create US", "lookup US", "destroy US" (microseconds
 * per device) on stdout, for bench-core --umockdev FILE.  The testbed's
 * temporary directory is removed before exit.
 *
 * umockdev checks a parent device through /sys, which only its preload
 * library redirects into the testbed (as umockdev-wrapper does), so the
 * program re-executes itself with LD_PRELOAD=libumockdev-preload.so.0.
 */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <umockdev.h>

#define MAX_REPS 15

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void rm_tree(const char *dir)
{
	struct stat st;

	if (dir && stat(dir, &st) == 0)
		nftw(dir, rm_entry, 64, FTW_DEPTH | FTW_PHYS);
}

struct result {
	double create_s, lookup_s, destroy_s;
};

static int run_one(unsigned nparents, struct result *res)
{
	unsigned ndev = 3 * nparents;
	UMockdevTestbed *tb = umockdev_testbed_new();
	gchar **paths = g_new0(gchar *, ndev);
	gchar *root = umockdev_testbed_get_root_dir(tb);
	char devnum[32], mi[16];
	struct stat st;
	double t0;
	int rc = 0;

	t0 = now();
	for (unsigned i = 0; i < nparents; i++) {
		char name[32];
		unsigned k = 3 * i;

		snprintf(name, sizeof(name), "d%u", i);
		snprintf(devnum, sizeof(devnum), "%u:%u", 8 + (k >> 16), k & 0xFFFF);
		snprintf(mi, sizeof(mi), "%u", k & 0xFFFF);
		paths[k] = umockdev_testbed_add_device(tb, "block", name, NULL, "dev", devnum, NULL,
						       "MAJOR", "8", "MINOR", mi, NULL);
		for (unsigned j = 1; j <= 2; j++) {
			k = 3 * i + j;
			snprintf(name, sizeof(name), "d%up%u", i, j);
			snprintf(devnum, sizeof(devnum), "%u:%u", 8 + (k >> 16), k & 0xFFFF);
			snprintf(mi, sizeof(mi), "%u", k & 0xFFFF);
			paths[k] = umockdev_testbed_add_device(tb, "block", name, paths[3 * i],
							       "dev", devnum, NULL, "MAJOR", "8",
							       "MINOR", mi, NULL);
		}
	}
	res->create_s = now() - t0;
	for (unsigned k = 0; k < ndev; k++) {
		if (!paths[k]) {
			fprintf(stderr, "bench-umockdev: add_device failed at device %u\n", k);
			rc = -1;
			goto out;
		}
	}

	t0 = now();
	for (unsigned k = 0; k < ndev; k++) {
		if (stat(paths[k], &st) < 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "bench-umockdev: %s: not a directory\n", paths[k]);
			rc = -1;
			goto out;
		}
	}
	res->lookup_s = now() - t0;

	t0 = now();
	for (unsigned i = 0; i < nparents; i++) {
		umockdev_testbed_remove_device(tb, paths[3 * i + 1]);
		umockdev_testbed_remove_device(tb, paths[3 * i + 2]);
	}
	for (unsigned i = 0; i < nparents; i++)
		umockdev_testbed_remove_device(tb, paths[3 * i]);
	res->destroy_s = now() - t0;

out:
	for (unsigned k = 0; k < ndev; k++)
		g_free(paths[k]);
	g_free(paths);
	g_object_unref(tb);
	rm_tree(root);		/* in case the testbed left it behind */
	g_free(root);
	return rc;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	unsigned n = 1000;
	int reps = 3;
	double c[MAX_REPS], l[MAX_REPS], d[MAX_REPS];

	if (!getenv("BENCH_UMOCKDEV_PRELOADED")) {
		const char *old = getenv("LD_PRELOAD");
		char *preload = g_strdup_printf("libumockdev-preload.so.0%s%s", old ? ":" : "",
						old ? old : "");

		setenv("LD_PRELOAD", preload, 1);
		setenv("BENCH_UMOCKDEV_PRELOADED", "1", 1);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "bench-umockdev: cannot re-execute with %s\n", preload);
		return 1;
	}
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			n = (unsigned)strtoul(argv[++i], NULL, 10);
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1 || reps > MAX_REPS)
				reps = 3;
		} else {
			fprintf(stderr, "usage: %s [--n N] [--reps R]\n", argv[0]);
			return 2;
		}
	}
	unsigned nparents = n / 3, ndev = 3 * nparents;

	if (!nparents) {
		fprintf(stderr, "bench-umockdev: --n must be >= 3\n");
		return 2;
	}
	for (int k = 0; k < reps; k++) {
		struct result r = { 0 };

		if (run_one(nparents, &r) < 0)
			return 1;
		c[k] = r.create_s * 1e6 / ndev;
		l[k] = r.lookup_s * 1e6 / ndev;
		d[k] = r.destroy_s * 1e6 / ndev;
		fprintf(stderr, "  umockdev N=%u run %d: create %.1f us, stat %.2f us, remove %.1f us "
			"per device\n", ndev, k + 1, c[k], l[k], d[k]);
	}
	printf("devices %u\ncreate %.2f\nlookup %.3f\ndestroy %.2f\n", ndev, median(c, reps),
	       median(l, reps), median(d, reps));
	return 0;
}

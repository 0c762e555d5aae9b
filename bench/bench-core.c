// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench-core.c - a benchmark of the core (not a test: it prints a table).
 *
 * For N = 10k, 100k, 1M (--quick: 10k and 100k) it creates N nested
 * class devices with the kernel-compatible API (N/3 parents "dI", each
 * with two children "dIpJ", every device with its own dev_t), looks each
 * one up by path, destroys them all by devt with class_device_destroy()
 * (children first, then parents), then creates them again and destroys
 * only the parents (the children go with them).  Each measurement runs
 * in a fresh child process (fork) so memory figures start clean; each is
 * repeated (--reps, default 3) and the medians are printed.
 *
 * Memory: resident set (/proc/self/statm) after malloc_trim(0), before
 * creating and after creating, divided by the number of devices; and
 * after destroying, how much of that growth is still resident (before
 * and after another malloc_trim(0)).
 *
 * --umockdev FILE reads the reference figures printed by bench-umockdev
 * ("create US", "lookup US", "destroy US" per line) and adds them to the
 * table.  Exit status: non-zero only if a run fails (crash, wrong result);
 * a missed target is reported in the table, never by the exit status.
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <classfs/kernel.h>

#define MAX_REPS 15
#define TARGET_CREATE_NS 1000.0		/* 1M in < 1 s */
#define TARGET_DESTROY_NS 1000.0	/* 1M in < 1 s */
#define TARGET_BYTES 300.0		/* per device */
#define TARGET_FLAT 1.5			/* ns/device at 1M over at 10k */

struct result {
	uint64_t ndev;
	double create_s, lookup_s, destroy_s, destroy_parents_s;
	double bytes_per_dev;		/* RSS growth / ndev after create */
	double residual_bytes;		/* RSS above baseline after destroy */
	double residual_trim_bytes;	/* ... after malloc_trim(0) */
	double baseline_bytes;		/* RSS before creating */
	size_t nodes_after;		/* classfs_tree_node_count() back to base? */
	size_t nodes_base;
	int ok;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long rss_bytes(void)
{
	long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (!f)
		return -1;
	if (fscanf(f, "%ld %ld", &size, &resident) != 2)
		resident = -1;
	fclose(f);
	return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

/* device k of the creation order: parent i is 3i, its children 3i+1, 3i+2 */
static dev_t devt_of(uint32_t k)
{
	/* 2^16 minors per major, majors from 8 up: 16 majors for 1M devices */
	return MKDEV(8 + (k >> 16), k & 0xFFFF);
}

static int fail(const char *what, uint32_t k, long r)
{
	fprintf(stderr, "bench-core: %s failed at device %u: %ld (%s)\n", what, k, r,
		r < 0 ? strerror((int)-r) : "");
	return -1;
}

static int create_all(struct class *cls, struct class_device **v, uint32_t nparents)
{
	for (uint32_t i = 0; i < nparents; i++) {
		struct class_device *p = class_device_create(cls, NULL, devt_of(3 * i), NULL,
							     "d%u", i);

		if (IS_ERR(p))
			return fail("class_device_create(parent)", 3 * i, PTR_ERR(p));
		v[3 * i] = p;
		for (uint32_t j = 1; j <= 2; j++) {
			struct class_device *c = class_device_create(cls, p, devt_of(3 * i + j),
								     NULL, "d%up%u", i, j);

			if (IS_ERR(c))
				return fail("class_device_create(child)", 3 * i + j, PTR_ERR(c));
			v[3 * i + j] = c;
		}
	}
	return 0;
}

static int run_one(uint32_t n, struct result *res)
{
	struct classfs_tree *tree = classfs_default_tree();
	uint32_t nparents = n / 3, ndev = 3 * nparents;
	struct class_device **v;
	struct classfs_stat st;
	struct class *cls;
	char path[64];
	long base, after, r;
	double t0;

	memset(res, 0, sizeof(*res));
	res->ndev = ndev;
	if (!tree)
		return fail("classfs_default_tree", 0, -ENOMEM);
	cls = class_create(THIS_MODULE, "block");
	if (IS_ERR(cls))
		return fail("class_create", 0, PTR_ERR(cls));
	/* the benchmark's own array is made resident before the baseline */
	v = calloc(ndev, sizeof(*v));
	if (!v)
		return fail("calloc", 0, -ENOMEM);
	memset(v, 0xff, ndev * sizeof(*v));
	res->nodes_base = classfs_tree_node_count(tree);
	malloc_trim(0);
	base = rss_bytes();
	res->baseline_bytes = (double)base;

	/* create */
	t0 = now();
	if (create_all(cls, v, nparents) < 0)
		return -1;
	res->create_s = now() - t0;
	after = rss_bytes();
	res->bytes_per_dev = (double)(after - base) / ndev;

	/* look up each one by path (the path is formatted inside the loop) */
	t0 = now();
	for (uint32_t i = 0; i < nparents; i++) {
		snprintf(path, sizeof(path), "class/block/d%u", i);
		r = classfs_path_stat(tree, path, &st);
		if (r < 0 || st.type != CLASSFS_FT_DIR)
			return fail("classfs_path_stat(parent)", 3 * i, r);
		for (uint32_t j = 1; j <= 2; j++) {
			snprintf(path, sizeof(path), "class/block/d%u/d%up%u", i, i, j);
			r = classfs_path_stat(tree, path, &st);
			if (r < 0 || st.type != CLASSFS_FT_DIR)
				return fail("classfs_path_stat(child)", 3 * i + j, r);
		}
	}
	res->lookup_s = now() - t0;

	/* a sample of the tree as a reader sees it: `dev` of the last child */
	{
		char buf[32], want[32];
		uint32_t k = ndev - 1;

		snprintf(path, sizeof(path), "class/block/d%u/d%up2/dev", nparents - 1,
			 nparents - 1);
		snprintf(want, sizeof(want), "%u:%u\n", MAJOR(devt_of(k)), MINOR(devt_of(k)));
		r = classfs_path_read(tree, path, buf, sizeof(buf) - 1);
		if (r < 0)
			return fail("classfs_path_read(dev)", k, r);
		buf[r] = '\0';
		if (strcmp(buf, want))
			return fail("dev contents", k, 0);
	}

	/* destroy by devt: children first, then parents */
	t0 = now();
	for (uint32_t i = 0; i < nparents; i++) {
		class_device_destroy(cls, devt_of(3 * i + 1));
		class_device_destroy(cls, devt_of(3 * i + 2));
	}
	for (uint32_t i = 0; i < nparents; i++)
		class_device_destroy(cls, devt_of(3 * i));
	res->destroy_s = now() - t0;
	if (classfs_tree_node_count(tree) != res->nodes_base)
		return fail("node count after destroy", 0, (long)classfs_tree_node_count(tree));
	if (classfs_path_stat(tree, "class/block/d0", &st) != -ENOENT)
		return fail("lookup after destroy", 0, 0);
	res->residual_bytes = (double)(rss_bytes() - base);
	malloc_trim(0);
	res->residual_trim_bytes = (double)(rss_bytes() - base);

	/* variant: create again, destroy only the parents */
	if (create_all(cls, v, nparents) < 0)
		return -1;
	t0 = now();
	for (uint32_t i = 0; i < nparents; i++)
		class_device_destroy(cls, devt_of(3 * i));
	res->destroy_parents_s = now() - t0;
	res->nodes_after = classfs_tree_node_count(tree);
	if (res->nodes_after != res->nodes_base)
		return fail("node count after parents-only destroy", 0, (long)res->nodes_after);

	class_destroy(cls);
	free(v);
	res->ok = 1;
	return 0;
}

/* one measurement in a fresh child process; its result comes back through a pipe */
static int run_child(uint32_t n, struct result *res)
{
	int fds[2], status;
	pid_t pid;
	ssize_t got;

	if (pipe(fds) < 0)
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct result r;
		int rc;

		close(fds[0]);
		rc = run_one(n, &r);
		if (write(fds[1], &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(3);
		_exit(rc < 0 ? 2 : 0);
	}
	close(fds[1]);
	got = read(fds[0], res, sizeof(*res));
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	if (WIFSIGNALED(status)) {
		fprintf(stderr, "bench-core: N=%u: child killed by signal %d\n", n,
			WTERMSIG(status));
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) || got != (ssize_t)sizeof(*res) || !res->ok) {
		fprintf(stderr, "bench-core: N=%u: child failed (status %d)\n", n,
			WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		return -1;
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(const struct result *rs, int n, size_t off)
{
	double v[MAX_REPS];

	for (int i = 0; i < n; i++)
		v[i] = *(const double *)(const void *)((const char *)&rs[i] + off);
	qsort(v, (size_t)n, sizeof(double), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MED(field) median(rs, reps, offsetof(struct result, field))

struct row {
	uint32_t n;
	uint64_t ndev;
	double create_ns, lookup_ns, destroy_ns, destroy_parents_ns;
	double create_s, destroy_s;
	double bytes, residual, residual_trim, baseline;
};

/* umockdev reference (us/device), negative when absent */
static double ref_create = -1, ref_lookup = -1, ref_destroy = -1;
static unsigned ref_n;

static void read_ref(const char *file)
{
	char key[32];
	double v;
	FILE *f = fopen(file, "r");

	if (!f) {
		fprintf(stderr, "bench-core: %s: %s (umockdev column left empty)\n", file,
			strerror(errno));
		return;
	}
	while (fscanf(f, "%31s %lf", key, &v) == 2) {
		if (!strcmp(key, "create"))
			ref_create = v;
		else if (!strcmp(key, "lookup"))
			ref_lookup = v;
		else if (!strcmp(key, "destroy"))
			ref_destroy = v;
		else if (!strcmp(key, "devices"))
			ref_n = (unsigned)v;
	}
	fclose(f);
}

static void fmt_ref(char *buf, size_t size, double us)
{
	if (us < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f (N=%u)", us, ref_n);
}

static void fmt_ratio(char *buf, size_t size, double us, double ns)
{
	if (us < 0 || ns <= 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.0fx faster", us * 1000.0 / ns);
}

static void print_table(const struct row *rows, int nrows, int reps)
{
	const struct row *big = &rows[nrows - 1], *small = &rows[0];
	char ref[48], ratio[48], target[64];

	printf("| what | N | classfs ns/device | classfs bytes/device | umockdev us/device | "
	       "ratio | target | met? |\n");
	printf("|---|---:|---:|---:|---:|---:|---|---|\n");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		bool is1m = r->n >= 1000000;

		fmt_ref(ref, sizeof(ref), ref_create);
		fmt_ratio(ratio, sizeof(ratio), ref_create, r->create_ns);
		snprintf(target, sizeof(target), "1M in < 1 s (%.3f s here)", r->create_s);
		printf("| create (class_device_create) | %u | %.0f | %.0f | %s | %s | %s | %s |\n",
		       r->n, r->create_ns, r->bytes, ref, ratio, is1m ? target : "-",
		       is1m ? (r->create_ns < TARGET_CREATE_NS ? "yes" : "**no**") : "-");
		fmt_ref(ref, sizeof(ref), ref_lookup);
		fmt_ratio(ratio, sizeof(ratio), ref_lookup, r->lookup_ns);
		printf("| lookup (classfs_path_stat) | %u | %.0f | - | %s | %s | - | - |\n", r->n,
		       r->lookup_ns, ref, ratio);
		fmt_ref(ref, sizeof(ref), ref_destroy);
		fmt_ratio(ratio, sizeof(ratio), ref_destroy, r->destroy_ns);
		snprintf(target, sizeof(target), "1M in < 1 s (%.3f s here)", r->destroy_s);
		printf("| destroy by devt, children first | %u | %.0f | - | %s | %s | %s | %s |\n",
		       r->n, r->destroy_ns, ref, ratio, is1m ? target : "-",
		       is1m ? (r->destroy_ns < TARGET_DESTROY_NS ? "yes" : "**no**") : "-");
		printf("| destroy parents only (children go with them) | %u | %.0f | - | - | - | "
		       "- | - |\n", r->n, r->destroy_parents_ns);
		printf("| resident memory growth after create | %u | - | %.0f | - | - | "
		       "< %.0f B/device | %s |\n", r->n, r->bytes, TARGET_BYTES,
		       r->bytes < TARGET_BYTES ? "yes" : "**no**");
		printf("| still resident after destroy (after malloc_trim) | %u | - | %.1f (%.1f) "
		       "| - | - | back near baseline | %s |\n", r->n, r->residual / (double)r->ndev,
		       r->residual_trim / (double)r->ndev,
		       r->residual_trim / (double)r->ndev < 0.1 * r->bytes ? "yes" : "**no**");
	}
	if (nrows > 1) {
		double fc = big->create_ns / small->create_ns;
		double fl = big->lookup_ns / small->lookup_ns;
		double fd = big->destroy_ns / small->destroy_ns;
		double fm = big->bytes / small->bytes;

		printf("| flat: ns/device at N=%u over N=%u | - | create %.2fx, lookup %.2fx, "
		       "destroy %.2fx | %.2fx | - | - | <= %.1fx (linear) | %s |\n",
		       big->n, small->n, fc, fl, fd, fm, TARGET_FLAT,
		       fc <= TARGET_FLAT && fl <= TARGET_FLAT && fd <= TARGET_FLAT ? "yes"
										: "**no**");
	}
	printf("\nMedians of %d runs, each in a fresh process; devices = 3 * floor(N/3); "
	       "baseline RSS before creating: %.1f MiB (N=%u).\n", reps, big->baseline / 1048576.0,
	       big->n);
}

int main(int argc, char **argv)
{
	static uint32_t full[] = { 10000, 100000, 1000000 };
	struct row rows[3];
	int reps = 3, nsizes = 3;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick")) {
			nsizes = 2;
		} else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
			reps = atoi(argv[++i]);
			if (reps < 1 || reps > MAX_REPS) {
				fprintf(stderr, "bench-core: --reps 1..%d\n", MAX_REPS);
				return 2;
			}
		} else if (!strcmp(argv[i], "--n") && i + 1 < argc) {
			full[0] = (uint32_t)strtoul(argv[++i], NULL, 10);	/* one size only */
			nsizes = 1;
			if (full[0] < 3) {
				fprintf(stderr, "bench-core: --n must be >= 3\n");
				return 2;
			}
		} else if (!strcmp(argv[i], "--umockdev") && i + 1 < argc) {
			read_ref(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--quick | --n N] [--reps R] [--umockdev FILE]\n", argv[0]);
			return 2;
		}
	}

	for (int s = 0; s < nsizes; s++) {
		struct result rs[MAX_REPS];
		struct row *r = &rows[s];

		for (int k = 0; k < reps; k++) {
			if (run_child(full[s], &rs[k]) < 0)
				return 1;
			fprintf(stderr, "  N=%u run %d: create %.3f s, lookup %.3f s, destroy %.3f s, "
				"destroy parents %.3f s, %.0f B/device\n", full[s], k + 1,
				rs[k].create_s, rs[k].lookup_s, rs[k].destroy_s,
				rs[k].destroy_parents_s, rs[k].bytes_per_dev);
		}
		r->n = full[s];
		r->ndev = rs[0].ndev;
		r->create_s = MED(create_s);
		r->destroy_s = MED(destroy_s);
		r->create_ns = r->create_s * 1e9 / (double)r->ndev;
		r->lookup_ns = MED(lookup_s) * 1e9 / (double)r->ndev;
		r->destroy_ns = r->destroy_s * 1e9 / (double)r->ndev;
		r->destroy_parents_ns = MED(destroy_parents_s) * 1e9 / (double)r->ndev;
		r->bytes = MED(bytes_per_dev);
		r->residual = MED(residual_bytes);
		r->residual_trim = MED(residual_trim_bytes);
		r->baseline = MED(baseline_bytes);
	}
	print_table(rows, nsizes, reps);
	return 0;
}

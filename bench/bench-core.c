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
 * Times: wall clock (the targets) and the process's CPU time beside it,
 * which tells the code's own cost on a shared machine.
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
#include "classfs-internal/testing.h"

#include "bench-util.h"

#define MAX_REPS 15
#define TARGET_CREATE_NS 1000.0		/* 1M in < 1 s */
#define TARGET_DESTROY_NS 1000.0	/* 1M in < 1 s */
#define TARGET_BYTES 300.0		/* per device */
#define TARGET_FLAT 1.5			/* ns/device at 1M over at 10k */

/* one timed step: wall-clock seconds and this process's CPU seconds */
struct span {
	double wall, cpu;
};

struct result {
	uint64_t ndev;
	struct span create, lookup, destroy, destroy_parents;
	double bytes_per_dev;		/* RSS growth / ndev after create */
	double residual_bytes;		/* RSS above baseline after destroy */
	double residual_trim_bytes;	/* ... after malloc_trim(0) */
	double baseline_bytes;		/* RSS before creating */
	size_t nodes_after;		/* classfs_tree_node_count() back to base? */
	size_t nodes_base;
	int ok;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct span now(void)
{
	return (struct span){ clock_s(CLOCK_MONOTONIC), clock_s(CLOCK_PROCESS_CPUTIME_ID) };
}

static struct span since(struct span t0)
{
	struct span t = now();

	return (struct span){ t.wall - t0.wall, t.cpu - t0.cpu };
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
	struct span t0;

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
	base = rss_bytes(getpid());
	res->baseline_bytes = (double)base;

	/* create */
	t0 = now();
	if (create_all(cls, v, nparents) < 0)
		return -1;
	res->create = since(t0);
	after = rss_bytes(getpid());
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
	res->lookup = since(t0);

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
	res->destroy = since(t0);
	if (classfs_tree_node_count(tree) != res->nodes_base)
		return fail("node count after destroy", 0, (long)classfs_tree_node_count(tree));
	if (classfs_path_stat(tree, "class/block/d0", &st) != -ENOENT)
		return fail("lookup after destroy", 0, 0);
	res->residual_bytes = (double)(rss_bytes(getpid()) - base);
	malloc_trim(0);
	res->residual_trim_bytes = (double)(rss_bytes(getpid()) - base);

	/* variant: create again, destroy only the parents */
	if (create_all(cls, v, nparents) < 0)
		return -1;
	t0 = now();
	for (uint32_t i = 0; i < nparents; i++)
		class_device_destroy(cls, devt_of(3 * i));
	res->destroy_parents = since(t0);
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
	struct span create, lookup, destroy, destroy_parents;	/* ns/device, medians */
	double create_s, destroy_s;				/* wall seconds, medians */
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

/*
 * Targets are judged on wall-clock time; on a shared machine the CPU time
 * of the process says whether the code itself would meet them.
 */
static const char *verdict(double wall, double cpu, double limit)
{
	if (wall < limit)
		return "yes";
	if (cpu < limit)
		return "**no** on wall clock, yes on CPU time";
	return "**no**";
}

static void print_table(const struct row *rows, int nrows, int reps)
{
	const struct row *big = &rows[nrows - 1], *small = &rows[0];
	char ref[48], ratio[48], target[96];

	printf("| what | N | classfs ns/device (CPU) | classfs bytes/device | umockdev us/device | "
	       "ratio | target | met? |\n");
	printf("|---|---:|---:|---:|---:|---:|---|---|\n");
	for (int i = 0; i < nrows; i++) {
		const struct row *r = &rows[i];
		bool is1m = r->n >= 1000000;
		double left = r->residual_trim, limit = 0.1 * r->bytes * (double)r->ndev;

		if (limit < 1048576.0)
			limit = 1048576.0;
		fmt_ref(ref, sizeof(ref), ref_create);
		fmt_ratio(ratio, sizeof(ratio), ref_create, r->create.wall);
		snprintf(target, sizeof(target), "1M in < 1 s (%.3f s here)", r->create_s);
		printf("| create (class_device_create) | %u | %.0f (%.0f) | %.0f | %s | %s | %s | "
		       "%s |\n", r->n, r->create.wall, r->create.cpu, r->bytes, ref, ratio,
		       is1m ? target : "-",
		       is1m ? verdict(r->create.wall, r->create.cpu, TARGET_CREATE_NS) : "-");
		fmt_ref(ref, sizeof(ref), ref_lookup);
		fmt_ratio(ratio, sizeof(ratio), ref_lookup, r->lookup.wall);
		printf("| lookup (classfs_path_stat; umockdev: stat(2)) | %u | %.0f (%.0f) | - | %s "
		       "| %s | - | - |\n", r->n, r->lookup.wall, r->lookup.cpu, ref, ratio);
		fmt_ref(ref, sizeof(ref), ref_destroy);
		fmt_ratio(ratio, sizeof(ratio), ref_destroy, r->destroy.wall);
		snprintf(target, sizeof(target), "1M in < 1 s (%.3f s here)", r->destroy_s);
		printf("| destroy by devt, children first | %u | %.0f (%.0f) | - | %s | %s | %s | "
		       "%s |\n", r->n, r->destroy.wall, r->destroy.cpu, ref, ratio,
		       is1m ? target : "-",
		       is1m ? verdict(r->destroy.wall, r->destroy.cpu, TARGET_DESTROY_NS) : "-");
		printf("| destroy by devt, parents only (children go with them) | %u | %.0f (%.0f) "
		       "| - | - | - | - | - |\n", r->n, r->destroy_parents.wall,
		       r->destroy_parents.cpu);
		printf("| resident memory growth after create | %u | - | %.0f | - | - | "
		       "< %.0f B/device | %s |\n", r->n, r->bytes, TARGET_BYTES,
		       r->bytes < TARGET_BYTES ? "yes" : "**no**");
		printf("| still resident after destroy (after malloc_trim) | %u | - | %.1f (%.1f) "
		       "| - | - | back near baseline (< 10%% or < 1 MiB) | %s |\n", r->n,
		       r->residual / (double)r->ndev, left / (double)r->ndev,
		       left < limit ? "yes" : "**no**");
	}
	if (nrows > 1) {
		double fc = big->create.wall / small->create.wall;
		double fl = big->lookup.wall / small->lookup.wall;
		double fd = big->destroy.wall / small->destroy.wall;
		double cc = big->create.cpu / small->create.cpu;
		double cl = big->lookup.cpu / small->lookup.cpu;
		double cd = big->destroy.cpu / small->destroy.cpu;
		double fm = big->bytes / small->bytes;
		double cworst = cc > cl ? cc : cl;

		cworst = cworst > cd ? cworst : cd;
		/* judged on CPU time: short runs at small N are the noisiest on the wall clock */
		printf("| flat: per device at N=%u over N=%u | - | create %.2fx (%.2fx), lookup "
		       "%.2fx (%.2fx), destroy %.2fx (%.2fx) | %.2fx | - | - | <= %.1fx on CPU "
		       "time (linear) | %s |\n", big->n, small->n, fc, cc, fl, cl, fd, cd, fm,
		       TARGET_FLAT, cworst <= TARGET_FLAT ? "yes" : "**no**");
	}
	printf("\nns/device: wall clock, and in parentheses the CPU time of the process; medians "
	       "of %d runs, each in a fresh process; devices = 3 * floor(N/3); baseline RSS "
	       "before creating: %.1f MiB (N=%u).\n", reps, big->baseline / 1048576.0, big->n);
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
			fprintf(stderr, "  N=%u run %d: create %.3f s (CPU %.3f), lookup %.3f s, "
				"destroy %.3f s (CPU %.3f), destroy parents %.3f s, %.0f B/device\n",
				full[s], k + 1, rs[k].create.wall, rs[k].create.cpu,
				rs[k].lookup.wall, rs[k].destroy.wall, rs[k].destroy.cpu,
				rs[k].destroy_parents.wall, rs[k].bytes_per_dev);
		}
		double per = 1e9 / (double)rs[0].ndev;

		r->n = full[s];
		r->ndev = rs[0].ndev;
		r->create_s = MED(create.wall);
		r->destroy_s = MED(destroy.wall);
		r->create = (struct span){ r->create_s * per, MED(create.cpu) * per };
		r->lookup = (struct span){ MED(lookup.wall) * per, MED(lookup.cpu) * per };
		r->destroy = (struct span){ r->destroy_s * per, MED(destroy.cpu) * per };
		r->destroy_parents = (struct span){ MED(destroy_parents.wall) * per,
						    MED(destroy_parents.cpu) * per };
		r->bytes = MED(bytes_per_dev);
		r->residual = MED(residual_bytes);
		r->residual_trim = MED(residual_trim_bytes);
		r->baseline = MED(baseline_bytes);
	}
	print_table(rows, nsizes, reps);
	return 0;
}

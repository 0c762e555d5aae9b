// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * bench-fs.c - the live sysfs (FUSE mount) against the kernel's sysfs and
 * tmpfs (not a test: it prints a table).
 *
 * The process builds a tree: class "net" with a device "lo" holding a
 * computed attribute `mtu` (show() formats a counter: a new value on every
 * read), a stored value `type` (classfs_device_add_value(), "772\n" as the
 * kernel's lo has) and its `dev` file (stored too: the device's number),
 * and class "bench" with 100,000 devices (--ndev).  It mounts the tree on
 * a temporary directory and serves it from its background threads; a
 * child process measures, through plain system calls, side by side in the
 * same run:
 *
 *   read computed  open+read(4096)+close  class/net/lo/mtu   /sys/class/net/lo/mtu
 *   read stored    open+read(4096)+close  class/net/lo/type  /sys/class/net/lo/type
 *   read dev       open+read(4096)+close  class/net/lo/dev   /sys/class/net/lo/ifindex
 *   stat stored    stat() of one path     class/net/lo/type  /sys/class/net/lo/type
 *   stat computed  stat() of one path     class/net/lo/mtu   /sys/class/net/lo/mtu
 *   lookup first   fstatat(dir, name) of names never looked up before:
 *                  class/bench/dK; sysfs: the files of a sysfs instance
 *                  mounted fresh (new superblock, empty dentry cache) in a
 *                  private mount + network namespace, per run
 *   readdir 100k   open+getdents64(32 KiB)+close of class/bench, full listing,
 *                  cached (repeated) and first after a change (a write to
 *                  class/net/lo/churn adds or removes device "extra"; tmpfs:
 *                  a file created or unlinked), checked to show the change
 *
 * and the same files on tmpfs (class/net/lo/{mtu,type,dev} and 100,000
 * files in class/bench; a tmpfs's entries are always in the dentry cache,
 * so its "first lookup" is a cached one).
 *
 * Requests: after the timed runs the child counts the FUSE requests each
 * operation sends (the kernel's fuse:fuse_request_send tracepoint, enabled
 * in a tracing instance of its own, filtered on the mount's connection, in
 * a tracefs mounted in the private mount namespace; the instance is
 * removed after, and the machine's own tracing settings are not touched).
 * Skipped, with a note, where tracefs or the tracepoint is missing.
 *
 * Pinned (the default pass): every thread of the serving process and the
 * measuring child on one CPU (--cpu, default the last allowed one), as
 * docs/design.md's FUSE section says.  The unpinned pass (--no-unpinned skips it)
 * lets both sides run on every CPU.  Each figure is the median of --reps
 * runs (default 7, --quick 3), each run many iterations, each operation
 * run on classfs, sysfs and tmpfs in turn (the order rotating per run) so
 * drift hits all alike; the ratio is the median of the runs' ratios.
 *
 * Memory: resident set of the serving process (/proc/self/statm, after
 * malloc_trim(0)) before the 100,000 devices are created, after, and once
 * the child is done (mounted, listed, looked up); growth / devices, against
 * the core's budget of 300 bytes per device.
 *
 * --rt runs both sides SCHED_FIFO in the pinned pass (other tenants of a
 * shared machine kept out).  --hold mounts and waits for a signal
 * (profiling: nsenter -t PID -m).
 *
 * Safety: as root the program first enters a private mount namespace, so
 * its mounts (the FUSE mount, the tmpfs) go away with it whatever happens;
 * signals are taken synchronously and end in an unmount; the kernel's /sys
 * is only read.  Exit status: 0, 77 when it cannot run (not root, no
 * /dev/fuse), 1 when a run fails (error, wrong result).  A missed target
 * shows in the table, never in the exit status.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <classfs/classfs.h>

#include "bench-util.h"

#define MAX_REPS 31
#define MAX_LOOKUP 20000
#define TARGET_BYTES 300.0

enum fs { FS_CLASSFS, FS_SYSFS, FS_TMPFS, NFS };
enum op {
	OP_READ_DYN, OP_READ_VALUE, OP_READ_DEV, OP_STAT_VALUE, OP_STAT_DYN, OP_LOOKUP, OP_READDIR,
	OP_READDIR_NEW, NOP
};
/* the files of each filesystem the operations use */
enum path { P_DYN, P_VALUE, P_DEV, P_DIR, NPATH };
enum pass { PASS_PINNED, PASS_UNPINNED, NPASS };

static const char *const fs_name[NFS] = { "classfs", "sysfs", "tmpfs" };

/*
 * Targets (docs/design.md): a stored value's bytes are in the page cache
 * (open and close send nothing), so 1.2x sysfs; a computed one costs a
 * GETATTR (whose show() fills the snapshot) and a READ, so 2.7x.  A stat
 * of a computed value has no target: its attributes are valid for no time
 * by design (the size a read is served with must be the value's, taken
 * right before the read), so each stat is a round trip.
 */
static const struct {
	const char *label;
	const char *unit;	/* of the figures shown */
	double scale;		/* us -> that unit */
	enum fs ref;		/* the ratio's denominator */
	double target;		/* classfs / ref at most this; 0 = none */
} op_info[NOP] = {
	[OP_READ_DYN] = { "open+read+close, computed value `mtu`, a show() per read", "us", 1,
			  FS_SYSFS, 2.7 },
	[OP_READ_VALUE] = { "open+read+close, stored value `type`", "us", 1, FS_SYSFS, 1.2 },
	[OP_READ_DEV] = { "open+read+close, stored `dev`", "us", 1, FS_SYSFS, 2.0 },
	[OP_STAT_VALUE] = { "stat, same path repeated, stored value `type`", "us", 1, FS_SYSFS,
			    1.0 },
	[OP_STAT_DYN] = { "stat, same path repeated, computed value `mtu`", "us", 1, FS_SYSFS, 0 },
	[OP_LOOKUP] = { "first-time lookup, fstatat of a new name", "us", 1, FS_SYSFS, 0 },
	[OP_READDIR] = { "readdir of 100,000 entries", "ms per listing", 1e-3, FS_TMPFS, 1.0 },
	[OP_READDIR_NEW] = { "readdir of 100,000 entries, first after a change", "ms", 1e-3,
			     FS_TMPFS, 0 },
};

/* shared with the measuring child */
struct results {
	double us[NPASS][NOP][NFS][MAX_REPS];	/* < 0: not measured */
	int npass;
	long entries[NFS];			/* readdir: entries seen */
	long lookups[NFS];			/* names per lookup run */
	char reqs[NOP][160];			/* FUSE requests per operation, by opcode */
	char reqs_note[200];			/* why they were not counted */
	char error[256];
	int ok;
};

struct config {
	unsigned ndev;
	int reps;
	long it_read, it_stat, it_lookup, it_readdir;
	int cpu;
	bool unpinned;
	bool hold;		/* --hold: mount, tell where, wait for a signal */
	bool rt;		/* --rt: both sides SCHED_FIFO (other load kept out) */
	cpu_set_t all;		/* CPUs the process may use */
};

static struct results *res;
static struct config cfg;
static char mnt_dir[64], tmpfs_dir[64], sysfs_dir[64];
static bool tmpfs_mounted, private_ns;
/* request counting: tracefs mounted here, and the tracing instance made in it */
static char trace_dir[64], trace_inst[128];

/* ---- the tree ---- */

static atomic_ulong counter;

static ssize_t mtu_show(struct classfs_device *dev, const struct classfs_device_attribute *attr,
			char *buf)
{
	(void)dev;
	(void)attr;
	return snprintf(buf, CLASSFS_ATTR_MAX, "%lu\n", atomic_fetch_add(&counter, 1) + 65536);
}

static const struct classfs_device_attribute mtu_attr = {
	.attr = { .name = "mtu", .mode = 0444 },
	.show = mtu_show,
};

/* lo/churn: each write adds device "extra" to class bench, or removes it */
static struct classfs_class *big_cls;
static struct classfs_device *extra;

static ssize_t churn_store(struct classfs_device *dev, const struct classfs_device_attribute *attr,
			   const char *buf, size_t count)
{
	(void)dev;
	(void)attr;
	(void)buf;
	if (extra) {
		classfs_device_unregister(extra);
		extra = NULL;
	} else if (!(extra = classfs_device_create(big_cls, NULL, 0, NULL, NULL, "extra"))) {
		return -errno;
	}
	return (ssize_t)count;
}

static const struct classfs_device_attribute churn_attr = {
	.attr = { .name = "churn", .mode = 0200 },
	.store = churn_store,
};

/* ---- helpers ---- */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void set_error(const char *fmt, const char *what, int err)
{
	if (res->error[0])
		return;
	snprintf(res->error, sizeof(res->error), fmt, what, strerror(err));
}

/* every thread of @pid onto @set (threads created later inherit it) */
static int set_affinity_all(pid_t pid, const cpu_set_t *set)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' &&
		    sched_setaffinity((pid_t)atoi(e->d_name), sizeof(*set), set) < 0 && errno != ESRCH)
			r = -errno;
	closedir(d);
	return r;
}

static int set_fifo(pid_t tid, bool fifo)
{
	struct sched_param sp = { .sched_priority = fifo ? 10 : 0 };

	return sched_setscheduler(tid, fifo ? SCHED_FIFO : SCHED_OTHER, &sp);
}

/* every thread of @pid SCHED_FIFO or back (threads created later inherit it) */
static int set_fifo_all(pid_t pid, bool fifo)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int r = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return -errno;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && set_fifo((pid_t)atoi(e->d_name), fifo) < 0 && errno != ESRCH)
			r = -errno;
	closedir(d);
	return r;
}

static int write_file(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC, 0444);
	ssize_t len = (ssize_t)strlen(text);

	if (fd < 0)
		return -errno;
	if (write(fd, text, (size_t)len) != len) {
		close(fd);
		return -EIO;
	}
	return close(fd) < 0 ? -errno : 0;
}

/* tmpfs: class/net/lo/{mtu,type,dev} and class/bench/d0..d(ndev-1) */
static int make_tmpfs_tree(const char *root, unsigned ndev)
{
	char path[128];
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/class", root);
	if (mkdir(path, 0755) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/class/net", root);
	if (mkdir(path, 0755) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/class/net/lo", root);
	if (mkdir(path, 0755) < 0)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	if (!(r = write_file(fd, "mtu", "65536\n")) && !(r = write_file(fd, "type", "772\n")))
		r = write_file(fd, "dev", "10:1\n");
	close(fd);
	if (r)
		return r;
	snprintf(path, sizeof(path), "%s/class/bench", root);
	if (mkdir(path, 0755) < 0 || (fd = open(path, O_RDONLY | O_DIRECTORY)) < 0)
		return -errno;
	for (unsigned i = 0; i < ndev && !r; i++) {
		char name[16];

		snprintf(name, sizeof(name), "d%u", i);
		r = write_file(fd, name, "");
	}
	close(fd);
	return r;
}

/* ---- measurements (in the child) ---- */

static double m_read(const char *path, long iters)
{
	char buf[4096];
	double t0 = now();

	for (long i = 0; i < iters; i++) {
		int fd = open(path, O_RDONLY);

		if (fd < 0) {
			set_error("open %s: %s", path, errno);
			return -1;
		}
		if (read(fd, buf, sizeof(buf)) <= 0) {
			set_error("read %s: %s", path, errno ? errno : EIO);
			close(fd);
			return -1;
		}
		close(fd);
	}
	return (now() - t0) * 1e6 / (double)iters;
}

static double m_stat(const char *path, long iters)
{
	struct stat st;
	double t0 = now();

	for (long i = 0; i < iters; i++)
		if (stat(path, &st) < 0) {
			set_error("stat %s: %s", path, errno);
			return -1;
		}
	return (now() - t0) * 1e6 / (double)iters;
}

static double m_lookup(int dirfd, char (*names)[12], long count)
{
	struct stat st;
	double t0 = now();

	for (long i = 0; i < count; i++)
		if (fstatat(dirfd, names[i], &st, AT_SYMLINK_NOFOLLOW) < 0) {
			set_error("fstatat %s: %s", names[i], errno);
			return -1;
		}
	return (now() - t0) * 1e6 / (double)count;
}

static double m_readdir(const char *path, long iters, long *entries)
{
	static char buf[32768] __attribute__((aligned(8)));
	double t0 = now();

	for (long i = 0; i < iters; i++) {
		int fd = open(path, O_RDONLY | O_DIRECTORY);
		long n = 0, r;

		if (fd < 0) {
			set_error("open %s: %s", path, errno);
			return -1;
		}
		while ((r = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
			for (long off = 0; off < r;) {
				unsigned short reclen;

				memcpy(&reclen, buf + off + 16, sizeof(reclen));	/* d_reclen */
				off += reclen;
				n++;
			}
		close(fd);
		if (r < 0) {
			set_error("getdents64 %s: %s", path, errno);
			return -1;
		}
		*entries = n;
	}
	return (now() - t0) * 1e6 / (double)iters;
}

/*
 * The first listing after a change: @change adds or removes one entry,
 * then the directory is listed (timed); consecutive listings must differ
 * by that entry (the change is visible at once).
 */
static double m_readdir_changed(const char *path, long iters, int (*change)(const char *),
				const char *arg, long *entries)
{
	double total = 0;
	long prev = -1;

	for (long i = 0; i < iters; i++) {
		double t0;
		long n = 0;

		if (change(arg) < 0) {
			set_error("change %s: %s", arg, errno);
			return -1;
		}
		t0 = now();
		if (m_readdir(path, 1, &n) < 0)
			return -1;
		total += now() - t0;
		if (prev >= 0 && labs(n - prev) != 1) {
			snprintf(res->error, sizeof(res->error),
				 "%s: %ld then %ld entries around a change", path, prev, n);
			return -1;
		}
		prev = n;
		*entries = n;
	}
	return total * 1e6 / (double)iters;
}

static int change_classfs(const char *churn)
{
	int fd = open(churn, O_WRONLY);
	int r = fd < 0 || write(fd, "1", 1) != 1 ? -1 : 0;

	if (fd >= 0)
		close(fd);
	return r;
}

static int change_tmpfs(const char *file)
{
	int fd;

	if (unlink(file) == 0)
		return 0;
	if (errno != ENOENT || (fd = open(file, O_WRONLY | O_CREAT | O_EXCL, 0444)) < 0)
		return -1;
	return close(fd);
}

/*
 * sysfs, first-time lookups: in a grandchild, a private mount and network
 * namespace and a sysfs mounted there (a superblock of its own: no entry
 * of it was ever looked up); its directories are opened (they are looked
 * up) and up to @count of their other entries stat'ed once each.
 */
struct sysfs_names {
	int dirfd[4096];
	int ndirs;
	struct {
		int dir;
		char name[NAME_MAX + 1];
	} *v;
	long n, max;
};

static void sysfs_collect(struct sysfs_names *s, int fd, int depth)
{
	static char buf[32768] __attribute__((aligned(8)));
	int idx = -1;
	long r;

	if (s->ndirs >= (int)(sizeof(s->dirfd) / sizeof(s->dirfd[0]))) {
		close(fd);
		return;
	}
	idx = s->ndirs++;
	s->dirfd[idx] = fd;
	/* names first, then subdirectories: the buffer is reused below */
	struct {
		char name[NAME_MAX + 1];
	} *sub = NULL;
	size_t nsub = 0;

	while ((r = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < r;) {
			unsigned short reclen;
			unsigned char type = (unsigned char)buf[off + 18];
			const char *name = buf + off + 19;

			memcpy(&reclen, buf + off + 16, sizeof(reclen));
			off += reclen;
			if (!strcmp(name, ".") || !strcmp(name, ".."))
				continue;
			if (type == DT_DIR) {
				void *p = realloc(sub, (nsub + 1) * sizeof(*sub));

				if (!p)
					continue;
				sub = p;
				snprintf(sub[nsub++].name, NAME_MAX + 1, "%s", name);
			} else if (s->n < s->max) {
				s->v[s->n].dir = idx;
				snprintf(s->v[s->n].name, NAME_MAX + 1, "%s", name);
				s->n++;
			}
		}
	for (size_t i = 0; i < nsub && s->n < s->max && depth < 12; i++) {
		int sfd = openat(fd, sub[i].name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

		if (sfd >= 0)
			sysfs_collect(s, sfd, depth + 1);
	}
	free(sub);
}

static int sysfs_cold_child(long count, double *out, long *got)
{
	struct rlimit rl = { 8192, 8192 };
	struct sysfs_names s = { .max = count };
	struct stat st;
	double t0;
	int fd;

	if (unshare(CLONE_NEWNS | CLONE_NEWNET) < 0)
		return -errno;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -errno;
	if (mount("sysfs", sysfs_dir, "sysfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -errno;
	setrlimit(RLIMIT_NOFILE, &rl);
	s.v = calloc((size_t)count, sizeof(*s.v));
	if (!s.v)
		return -ENOMEM;
	fd = open(sysfs_dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -errno;
	sysfs_collect(&s, fd, 0);
	if (s.n == 0)
		return -ENOENT;
	t0 = now();
	for (long i = 0; i < s.n; i++)
		fstatat(s.dirfd[s.v[i].dir], s.v[i].name, &st, AT_SYMLINK_NOFOLLOW);
	*out = (now() - t0) * 1e6 / (double)s.n;
	*got = s.n;
	return 0;
}

static double m_sysfs_cold(long count, long *got)
{
	double *shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	double r = -1;
	int status;
	pid_t pid;

	if (shared == MAP_FAILED)
		return -1;
	shared[0] = -1;
	pid = fork();
	if (pid == 0) {
		long n = 0;
		int e = sysfs_cold_child(count, &shared[0], &n);

		shared[1] = (double)n;
		_exit(e < 0 ? -e : 0);
	}
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
		if (WEXITSTATUS(status) == 0) {
			r = shared[0];
			*got = (long)shared[1];
		} else {
			/* not comparable here (no namespaces): reported, not fatal */
			fprintf(stderr, "bench-fs: fresh sysfs instance: %s\n",
				strerror(WEXITSTATUS(status)));
		}
	}
	munmap(shared, 4096);
	return r;
}

static double median(const double *v, int n)
{
	double s[MAX_REPS];
	int k = 0;

	for (int i = 0; i < n; i++)
		if (v[i] >= 0)
			s[k++] = v[i];
	if (!k)
		return -1;
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0 && s[j] < s[j - 1]; j--) {
			double t = s[j];

			s[j] = s[j - 1];
			s[j - 1] = t;
		}
	return k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
}

/* one run of operation @o on filesystem @f; -1 when not applicable or failed */
static double measure(int o, int f, char (*path)[160], int dirfd, char (*names)[12],
		      long per_run, const char *churn)
{
	long n;

	switch (o) {
	case OP_READ_DYN:
		return m_read(path[P_DYN], cfg.it_read);
	case OP_READ_VALUE:
		return m_read(path[P_VALUE], cfg.it_read);
	case OP_READ_DEV:
		return m_read(path[P_DEV], cfg.it_read);
	case OP_STAT_VALUE:
		return m_stat(path[P_VALUE], cfg.it_stat);
	case OP_STAT_DYN:
		return m_stat(path[P_DYN], cfg.it_stat);
	case OP_LOOKUP:
		if (f == FS_SYSFS)
			return m_sysfs_cold(per_run, &res->lookups[f]);
		res->lookups[f] = per_run;
		return m_lookup(dirfd, names, per_run);
	case OP_READDIR:
		return path[P_DIR][0] ? m_readdir(path[P_DIR], cfg.it_readdir, &res->entries[f]) : -1;
	case OP_READDIR_NEW:
		if (!path[P_DIR][0])
			return -1;
		return m_readdir_changed(path[P_DIR], cfg.it_readdir,
					 f == FS_CLASSFS ? change_classfs : change_tmpfs, churn, &n);
	}
	return -1;
}

/* ---- FUSE requests per operation (in the child, after the timed runs) ---- */

#define COUNT_ITERS 1000L

static int trace_put(const char *file, const char *text)
{
	char path[256];
	ssize_t len = (ssize_t)strlen(text);
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", trace_inst, file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -errno;
	if (len && write(fd, text, (size_t)len) != len)
		r = errno ? -errno : -EIO;
	close(fd);
	return r;
}

/* the instance's buffer as "total (NAME n, ...)" per operation into @out */
static int trace_tally(long ops, char *out, size_t size)
{
	struct {
		char name[24];
		long n;
	} op[16];
	char path[160], *line = NULL;
	size_t cap = 0, k = 0, used;
	long total = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/trace", trace_inst);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		const char *p = strstr(line, " opcode ");
		unsigned code;
		char name[24];
		size_t i;

		if (line[0] == '#' || !p || sscanf(p, " opcode %u (FUSE_%23[A-Z_])", &code, name) != 2)
			continue;
		for (i = 0; i < k && strcmp(op[i].name, name); i++)
			;
		if (i == k) {
			if (k == sizeof(op) / sizeof(op[0]))
				continue;
			snprintf(op[k].name, sizeof(op[k].name), "%s", name);
			op[k++].n = 0;
		}
		op[i].n++;
		total++;
	}
	free(line);
	fclose(f);
	used = (size_t)snprintf(out, size, "%.3g", (double)total / (double)ops);
	for (size_t i = 0; i < k && used < size; i++)
		used += (size_t)snprintf(out + used, size - used, "%s%s %.3g", i ? ", " : " (",
					 op[i].name, (double)op[i].n / (double)ops);
	if (k && used < size)
		snprintf(out + used, size - used, ")");
	return 0;
}

/*
 * Each operation on classfs COUNT_ITERS times (lookups: as many names
 * never looked up as are left) with the kernel's fuse:fuse_request_send
 * tracepoint on, in a tracing instance of its own filtered on this
 * mount's connection: the machine's own tracing (the top instance, other
 * instances) is left as it is.  The instance goes at the end (the parent
 * removes it too, should this process die).
 */
static void count_requests(char (*path)[160], int dirfd, char (*names)[12], long nnames,
			   const char *churn)
{
	char filter[64];
	struct stat st;
	long dummy;
	int e;

	if (!private_ns) {
		snprintf(res->reqs_note, sizeof(res->reqs_note),
			 "not counted: no private mount namespace for tracefs");
		return;
	}
	if (mount("nodev", trace_dir, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0) {
		snprintf(res->reqs_note, sizeof(res->reqs_note), "not counted: mount tracefs: %s",
			 strerror(errno));
		return;
	}
	if (mkdir(trace_inst, 0700) < 0) {
		snprintf(res->reqs_note, sizeof(res->reqs_note), "not counted: mkdir %s: %s", trace_inst,
			 strerror(errno));
		goto out;
	}
	if (stat(mnt_dir, &st) < 0) {
		e = -errno;
		goto fail;
	}
	/* the event's connection is the kernel's dev_t of the mount: major << 20 | minor */
	snprintf(filter, sizeof(filter), "connection == %u\n",
		 (unsigned)(major(st.st_dev) << 20 | minor(st.st_dev)));
	if ((e = trace_put("tracing_on", "0")) < 0 ||
	    (e = trace_put("events/fuse/fuse_request_send/filter", filter)) < 0 ||
	    (e = trace_put("events/fuse/fuse_request_send/enable", "1")) < 0)
		goto fail;
	for (int o = 0; o < NOP; o++) {
		long ops = COUNT_ITERS;
		double r = 0;

		if (o == OP_READDIR || o == OP_READDIR_NEW)
			ops = 2;
		else if (o == OP_LOOKUP && (ops = nnames < ops ? nnames : ops) <= 0)
			continue;
		if ((e = trace_put("trace", "")) < 0 || (e = trace_put("tracing_on", "1")) < 0)
			goto fail;
		switch (o) {
		case OP_READ_DYN:
			r = m_read(path[P_DYN], ops);
			break;
		case OP_READ_VALUE:
			r = m_read(path[P_VALUE], ops);
			break;
		case OP_READ_DEV:
			r = m_read(path[P_DEV], ops);
			break;
		case OP_STAT_VALUE:
			r = m_stat(path[P_VALUE], ops);
			break;
		case OP_STAT_DYN:
			r = m_stat(path[P_DYN], ops);
			break;
		case OP_LOOKUP:
			r = m_lookup(dirfd, names, ops);
			break;
		case OP_READDIR:
			r = m_readdir(path[P_DIR], ops, &dummy);
			break;
		case OP_READDIR_NEW:
			/* the write to lo/churn that changes the directory is counted too */
			r = m_readdir_changed(path[P_DIR], ops, change_classfs, churn, &dummy);
			break;
		}
		if ((e = trace_put("tracing_on", "0")) < 0)
			goto fail;
		if (r < 0)
			break;	/* res->error says why */
		if ((e = trace_tally(ops, res->reqs[o], sizeof(res->reqs[o]))) < 0)
			goto fail;
	}
	e = 0;
fail:
	if (e < 0)
		snprintf(res->reqs_note, sizeof(res->reqs_note), "not counted: tracing instance: %s",
			 strerror(-e));
	trace_put("events/fuse/fuse_request_send/enable", "0");
	if (rmdir(trace_inst) < 0)
		fprintf(stderr, "bench-fs: rmdir %s: %s\n", trace_inst, strerror(errno));
out:
	umount2(trace_dir, MNT_DETACH);
}

static int child_main(void)
{
	static const char *const file[NPATH] = { "mtu", "type", "dev", NULL };
	char path[NFS][NPATH][160];
	char churn[2][160];	/* what changes the big directory: classfs, tmpfs */
	char (*names)[12];
	long per_run, used = 0;
	int dirfd[NFS] = { -1, -1, -1 };
	cpu_set_t one;

	for (int i = 0; i < P_DIR; i++) {
		snprintf(path[FS_CLASSFS][i], 160, "%s/class/net/lo/%s", mnt_dir, file[i]);
		snprintf(path[FS_TMPFS][i], 160, "%s/class/net/lo/%s", tmpfs_dir, file[i]);
		/* lo has no device number: its ifindex, a plain attribute, stands in for dev */
		snprintf(path[FS_SYSFS][i], 160, "/sys/class/net/lo/%s",
			 i == P_DEV ? "ifindex" : file[i]);
	}
	snprintf(path[FS_CLASSFS][P_DIR], 160, "%s/class/bench", mnt_dir);
	path[FS_SYSFS][P_DIR][0] = 0;
	snprintf(path[FS_TMPFS][P_DIR], 160, "%s/class/bench", tmpfs_dir);
	snprintf(churn[0], 160, "%s/class/net/lo/churn", mnt_dir);
	snprintf(churn[1], 160, "%s/class/bench/extra", tmpfs_dir);

	int e = make_tmpfs_tree(tmpfs_dir, cfg.ndev);

	if (e < 0) {
		set_error("tmpfs tree in %s: %s", tmpfs_dir, -e);
		return 1;
	}
	names = calloc(cfg.ndev, sizeof(*names));
	if (!names)
		return 1;
	for (unsigned i = 0; i < cfg.ndev; i++)
		snprintf(names[i], sizeof(names[i]), "d%u", i);
	for (int f = 0; f < NFS; f++)
		if (path[f][P_DIR][0] &&
		    (dirfd[f] = open(path[f][P_DIR], O_RDONLY | O_DIRECTORY)) < 0) {
			set_error("open %s: %s", path[f][P_DIR], errno);
			return 1;
		}
	/* distinct names per (pass, run): never looked up before */
	per_run = cfg.it_lookup;
	if (per_run * res->npass * cfg.reps > (long)cfg.ndev)
		per_run = (long)cfg.ndev / (res->npass * cfg.reps);

	CPU_ZERO(&one);
	CPU_SET(cfg.cpu, &one);
	for (int p = 0; p < res->npass; p++) {
		const cpu_set_t *set = p == PASS_PINNED ? &one : &cfg.all;
		long dummy;

		if (set_affinity_all(getppid(), set) < 0 || sched_setaffinity(0, sizeof(*set), set) < 0) {
			set_error("%s: %s", "sched_setaffinity", errno);
			return 1;
		}
		if (cfg.rt && (set_fifo_all(getppid(), p == PASS_PINNED) < 0 ||
			       set_fifo(0, p == PASS_PINNED) < 0)) {
			set_error("%s: %s", "SCHED_FIFO", errno);
			return 1;
		}
		/* warm up: caches, page cache of stored values, worker threads */
		for (int f = 0; f < NFS; f++) {
			for (int i = 0; i < P_DIR; i++)
				if (m_read(path[f][i], cfg.it_read / 10 + 1) < 0 ||
				    m_stat(path[f][i], cfg.it_stat / 10 + 1) < 0)
					return 1;
			if (path[f][P_DIR][0] && m_readdir(path[f][P_DIR], 1, &dummy) < 0)
				return 1;
		}
		for (int r = 0; r < cfg.reps; r++) {
			/* each operation on the three in turn, the order rotating per run */
			for (int o = 0; o < NOP; o++)
				for (int k = 0; k < NFS; k++) {
					int f = (k + r) % NFS;

					res->us[p][o][f][r] = measure(o, f, path[f], dirfd[f],
								      names + used, per_run,
								      churn[f == FS_CLASSFS ? 0 : 1]);
					if (res->error[0])
						return 1;
				}
			used += per_run;
		}
	}
	count_requests(path[FS_CLASSFS], dirfd[FS_CLASSFS], names + used, (long)cfg.ndev - used,
		       churn[0]);
	if (res->error[0])
		return 1;
	if (res->entries[FS_CLASSFS] < (long)cfg.ndev || res->entries[FS_TMPFS] < (long)cfg.ndev) {
		snprintf(res->error, sizeof(res->error), "readdir saw %ld (classfs), %ld (tmpfs) entries",
			 res->entries[FS_CLASSFS], res->entries[FS_TMPFS]);
		return 1;
	}
	res->ok = 1;
	return 0;
}

/* ---- the table ---- */

static void fmt_val(char *buf, size_t size, double v)
{
	if (v < 0)
		snprintf(buf, size, "n/a");
	else if (v < 10)
		snprintf(buf, size, "%.2f", v);
	else
		snprintf(buf, size, "%.1f", v);
}

static void print_table(int p)
{
	printf("| operation | classfs | sysfs | tmpfs | ratio | target | met? |\n");
	printf("| --- | ---: | ---: | ---: | ---: | --- | --- |\n");
	for (int o = 0; o < NOP; o++) {
		double med[NFS];
		char v[NFS][32], ratio[48] = "n/a", target[48] = "-", met[8] = "-";

		for (int f = 0; f < NFS; f++) {
			med[f] = median(res->us[p][o][f], cfg.reps);
			fmt_val(v[f], sizeof(v[f]), med[f] < 0 ? -1 : med[f] * op_info[o].scale);
		}
		if (med[FS_CLASSFS] >= 0 && med[op_info[o].ref] > 0) {
			/* the median of each run's ratio (the two measured one right after the other) */
			const double *a = res->us[p][o][FS_CLASSFS], *b = res->us[p][o][op_info[o].ref];
			double ratios[MAX_REPS], q;

			for (int r = 0; r < cfg.reps; r++)
				ratios[r] = a[r] >= 0 && b[r] > 0 ? a[r] / b[r] : -1;
			q = median(ratios, cfg.reps);

			snprintf(ratio, sizeof(ratio), "%.2fx %s", q, fs_name[op_info[o].ref]);
			if (op_info[o].target > 0 && p == PASS_PINNED)
				snprintf(met, sizeof(met), "%s", q <= op_info[o].target ? "yes" : "**no**");
		}
		if (op_info[o].target > 0 && p == PASS_PINNED)
			snprintf(target, sizeof(target), "<= %.1fx %s", op_info[o].target,
				 fs_name[op_info[o].ref]);
		printf("| %s (%s) | %s | %s | %s | %s | %s | %s |\n", op_info[o].label, op_info[o].unit,
		       v[FS_CLASSFS],
		       v[FS_SYSFS], v[FS_TMPFS], ratio, target, met);
	}
}

/* ---- the serving process ---- */

static int parse_args(int argc, char **argv)
{
	bool quick = false;
	int reps = 0;

	cfg.ndev = 100000;
	cfg.cpu = -1;
	cfg.unpinned = true;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = true;
		else if (!strcmp(argv[i], "--hold"))
			cfg.hold = true;
		else if (!strcmp(argv[i], "--rt"))
			cfg.rt = true;
		else if (!strcmp(argv[i], "--no-unpinned"))
			cfg.unpinned = false;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cfg.cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--ndev") && i + 1 < argc)
			cfg.ndev = (unsigned)strtoul(argv[++i], NULL, 10);
		else {
			fprintf(stderr,
				"usage: %s [--quick] [--reps N] [--cpu N] [--ndev N] [--no-unpinned] "
				"[--rt] [--hold]\n",
				argv[0]);
			return -1;
		}
	}
	cfg.reps = reps > 0 ? reps : quick ? 3 : 7;
	if (cfg.reps > MAX_REPS)
		cfg.reps = MAX_REPS;
	if (cfg.ndev < 1000)
		cfg.ndev = 1000;
	cfg.it_read = quick ? 3000 : 20000;
	cfg.it_stat = quick ? 30000 : 200000;
	cfg.it_lookup = quick ? 2000 : 5000;
	cfg.it_readdir = quick ? 2 : 5;
	if (sched_getaffinity(0, sizeof(cfg.all), &cfg.all) < 0)
		return -1;
	if (cfg.cpu < 0)
		for (int c = 0; c < CPU_SETSIZE; c++)
			if (CPU_ISSET(c, &cfg.all))
				cfg.cpu = c;	/* the last one: CPU 0 takes most interrupts */
	if (cfg.cpu < 0 || cfg.cpu >= CPU_SETSIZE || !CPU_ISSET(cfg.cpu, &cfg.all)) {
		fprintf(stderr, "bench-fs: CPU %d not allowed\n", cfg.cpu);
		return -1;
	}
	if (CPU_COUNT(&cfg.all) < 2)
		cfg.unpinned = false;
	return 0;
}

static void cleanup_dirs(void)
{
	if (tmpfs_mounted)
		umount2(tmpfs_dir, MNT_DETACH);
	else if (tmpfs_dir[0]) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", tmpfs_dir);
		if (system(cmd) != 0)
			fprintf(stderr, "bench-fs: could not remove %s\n", tmpfs_dir);
	}
	if (tmpfs_dir[0])
		rmdir(tmpfs_dir);
	if (mnt_dir[0])
		rmdir(mnt_dir);
	if (sysfs_dir[0])
		rmdir(sysfs_dir);
	if (trace_dir[0]) {
		/* the child removes its tracing instance; this is for a child that died */
		if (rmdir(trace_inst) == 0)
			fprintf(stderr, "bench-fs: removed a tracing instance left behind\n");
		umount2(trace_dir, MNT_DETACH);
		rmdir(trace_dir);
	}
}

int main(int argc, char **argv)
{
	struct classfs_tree *tree;
	struct classfs_class *net, *big;
	struct classfs_device *lo;
	struct classfs_mount *m = NULL;
	long base, after_create, after_serve;
	double t_create;
	sigset_t sigs, old;
	cpu_set_t one;
	pid_t child;
	int status = 0, rc = 1;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (parse_args(argc, argv) < 0)
		return 2;
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) < 0) {
		fprintf(stderr, "bench-fs: needs root and /dev/fuse (mounts)\n");
		return 77;
	}
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED)
		return 1;
	for (int p = 0; p < NPASS; p++)
		for (int o = 0; o < NOP; o++)
			for (int f = 0; f < NFS; f++)
				for (int r = 0; r < MAX_REPS; r++)
					res->us[p][o][f][r] = -1;
	res->npass = cfg.unpinned ? 2 : 1;

	/* mounts private to this process: nothing outlives it */
	if (unshare(CLONE_NEWNS) == 0 && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		private_ns = true;
	else
		fprintf(stderr, "bench-fs: no private mount namespace (%s): unmounting by hand\n",
			strerror(errno));

	/* signals are waited for, not handled: every exit path unmounts */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGQUIT);
	sigaddset(&sigs, SIGCHLD);
	sigprocmask(SIG_BLOCK, &sigs, &old);

	strcpy(mnt_dir, "/tmp/bench-fs.XXXXXX");
	strcpy(sysfs_dir, "/tmp/bench-fs-sysfs.XXXXXX");
	strcpy(tmpfs_dir, private_ns ? "/tmp/bench-fs-tmpfs.XXXXXX" : "/dev/shm/bench-fs.XXXXXX");
	if (!mkdtemp(mnt_dir) || !mkdtemp(sysfs_dir) || !mkdtemp(tmpfs_dir)) {
		perror("bench-fs: mkdtemp");
		mnt_dir[0] = sysfs_dir[0] = tmpfs_dir[0] = 0;
		return 1;
	}
	if (private_ns && mount("tmpfs", tmpfs_dir, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755") == 0)
		tmpfs_mounted = true;
	/* tracefs for counting requests: only where its mount goes away with this process */
	strcpy(trace_dir, "/tmp/bench-fs-trace.XXXXXX");
	if (!private_ns || !mkdtemp(trace_dir))
		trace_dir[0] = 0;
	else
		snprintf(trace_inst, sizeof(trace_inst), "%s/instances/bench-fs-%d", trace_dir,
			 (int)getpid());

	/* the serving threads (created by the mount) inherit this CPU */
	CPU_ZERO(&one);
	CPU_SET(cfg.cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0) {
		perror("bench-fs: sched_setaffinity");
		goto out;
	}

	tree = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	if (!tree || !(net = classfs_class_create(tree, "net")) ||
	    !(lo = classfs_device_create(net, NULL, makedev(10, 1), NULL, NULL, "lo")) ||
	    classfs_device_create_file(lo, &mtu_attr) < 0 ||
	    classfs_device_create_file(lo, &churn_attr) < 0 ||
	    (errno = -classfs_device_add_value(lo, "type", 0444, "772\n", 4, 0)) != 0) {
		perror("bench-fs: building the tree");
		goto out;
	}
	if (!(big = big_cls = classfs_class_create(tree, "bench"))) {
		perror("bench-fs: class bench");
		goto out;
	}
	malloc_trim(0);
	base = rss_bytes(getpid());
	t_create = now();
	for (unsigned i = 0; i < cfg.ndev; i++)
		if (!classfs_device_create(big, NULL, makedev(240 + (i >> 16), i & 0xFFFF), NULL, NULL,
					   "d%u", i)) {
			fprintf(stderr, "bench-fs: device d%u: %s\n", i, strerror(errno));
			goto out;
		}
	t_create = now() - t_create;
	malloc_trim(0);
	after_create = rss_bytes(getpid());

	m = classfs_mount_tree(tree, mnt_dir, NULL);
	if (!m) {
		fprintf(stderr, "bench-fs: mount on %s: %s\n", mnt_dir, strerror(errno));
		goto out;
	}

	if (cfg.hold) {
		/* for profiling: nsenter -t PID -m, then use the mount */
		printf("pid %d serving %s on CPU %d (mount namespace of pid %d); "
		       "waiting for a signal\n", (int)getpid(), mnt_dir, cfg.cpu, (int)getpid());
		for (int sig = -1; sig < 0 || sig == SIGCHLD;)
			sig = sigwaitinfo(&sigs, NULL);	/* -1: EINTR (a tracer attached) */
		rc = 0;
		goto out;
	}
	child = fork();
	if (child < 0) {
		perror("bench-fs: fork");
		goto out;
	}
	if (child == 0) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		_exit(child_main());
	}
	for (;;) {
		siginfo_t si;
		int sig = sigwaitinfo(&sigs, &si);

		if (sig == SIGCHLD) {
			if (waitpid(child, &status, WNOHANG) == child)
				break;
		} else if (sig > 0) {
			fprintf(stderr, "bench-fs: signal %d: stopping\n", sig);
			kill(child, SIGKILL);
			waitpid(child, &status, 0);
			goto out;
		}
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !res->ok) {
		fprintf(stderr, "bench-fs: measuring child failed (%s %d)\n",
			WIFEXITED(status) ? "exit status" : "signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		if (res->error[0])
			fprintf(stderr, "bench-fs: %s\n", res->error);
		goto out;
	}
	malloc_trim(0);
	after_serve = rss_bytes(getpid());

	printf("Pinned: the serving process's threads and the measuring process on CPU %d%s; "
	       "medians of %d runs (ratio: the median of the runs' ratios, the two figures of a run "
	       "measured one right after the other).\n\n",
	       cfg.cpu, cfg.rt ? ", both SCHED_FIFO" : "", cfg.reps);
	print_table(PASS_PINNED);
	printf("\nsysfs first-time lookups: %ld entries of a freshly mounted sysfs instance per run; "
	       "classfs: %ld device directories never looked up; tmpfs: %ld names "
	       "(always in the dentry cache). readdir: %ld entries (classfs), %ld (tmpfs), "
	       "getdents64 with 32 KiB, the listing cached by the kernel "
	       "or the first one after an entry was added or removed (classfs: a write to "
	       "lo/churn, whose store() adds or removes a device); sysfs has no such "
	       "directory.\n",
	       res->lookups[FS_SYSFS], res->lookups[FS_CLASSFS], res->lookups[FS_TMPFS],
	       res->entries[FS_CLASSFS], res->entries[FS_TMPFS]);
	if (res->reqs_note[0]) {
		printf("\nFUSE requests per operation: %s.\n", res->reqs_note);
	} else {
		printf("\nFUSE requests per operation on classfs (the kernel's fuse:fuse_request_send "
		       "tracepoint in a tracing instance of the benchmark's own, after the timed runs: "
		       "%ld of each operation, 2 listings; after a change, the write to lo/churn that "
		       "makes the change is counted too; by opcode in parentheses):\n\n",
		       COUNT_ITERS);
		printf("| operation | requests per operation |\n| --- | --- |\n");
		for (int o = 0; o < NOP; o++)
			printf("| %s | %s |\n", op_info[o].label, res->reqs[o][0] ? res->reqs[o] : "n/a");
	}
	if (res->npass > 1) {
		printf("\nUnpinned (every CPU for both sides), same runs interleaved:\n\n");
		print_table(PASS_UNPINNED);
	}
	printf("\n| memory of the serving process (%u devices) | bytes/device | budget | met? |\n",
	       cfg.ndev);
	printf("| --- | ---: | ---: | --- |\n");
	printf("| RSS growth after creating the devices (%.2f s) | %.0f | | |\n", t_create,
	       (double)(after_create - base) / cfg.ndev);
	printf("| RSS growth after mounting, listing, looking up | %.0f | %.0f | %s |\n",
	       (double)(after_serve - base) / cfg.ndev, TARGET_BYTES,
	       (double)(after_serve - base) / cfg.ndev <= TARGET_BYTES ? "yes" : "**no**");
	rc = 0;
out:
	if (m)
		classfs_mount_close(m);
	cleanup_dirs();
	return rc;
}

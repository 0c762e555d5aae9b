// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * stress-local.c - the library under load, for a bounded time: writer
 * threads add, rename, notify and remove nested devices (disks with
 * partitions, each with a callback attribute and stored values) while
 * reader processes walk the FUSE mount (every file read, large class
 * directories listed, attributes polled) and listeners follow the events.
 *
 * Violations counted (all must be zero):
 *  - a show()/store() running after the removal of its device returned;
 *  - a listener seeing a SEQNUM that is not the last one plus one;
 *  - a REMOVE without an ADD before it, an ADD of a devpath already added,
 *    a device left added at the end;
 *  - a reader getting an error a sysfs reader would not (anything but
 *    ENOENT, ENODEV, ENOTDIR, ESTALE, EACCES, or EINTR at the end);
 *  - nodes left in the tree at the end; memory growing over the run.
 *
 * usage: stress-local [--seconds N] [--writers N] [--readers N]
 *                     [--results FILE]  (needs root and /dev/fuse)
 * Prints one line of figures; appends it as TSV to FILE when given.
 */
#include <getopt.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classfs/classfs.h"
#include "classfs-internal/testing.h"
#include "stress-util.h"

#define MAX_WRITERS 8
#define MAX_READERS 8
#define MAX_PARTS 3

static atomic_long shows, writes, adds, removes, renames, notifies;
static atomic_bool stop;
static struct classfs_tree *tree;
static struct classfs_class *block;

/* ---- devices and their callback attribute ---- */

struct sdev {
	struct classfs_device dev;
	atomic_bool removed;	/* set once the removal returned */
	atomic_int value;
};

static ssize_t state_show(struct classfs_device *dev, const struct classfs_device_attribute *a,
			  char *buf)
{
	struct sdev *s = (struct sdev *)dev;

	if (atomic_load(&s->removed))
		VIOLATION("show() of %s after its removal\n", classfs_device_name(dev));
	atomic_fetch_add(&shows, 1);
	return sprintf(buf, "%d\n", atomic_load(&s->value));
}

static ssize_t state_store(struct classfs_device *dev, const struct classfs_device_attribute *a,
			   const char *buf, size_t count)
{
	struct sdev *s = (struct sdev *)dev;

	if (atomic_load(&s->removed))
		VIOLATION("store() of %s after its removal\n", classfs_device_name(dev));
	atomic_store(&s->value, atoi(buf));
	atomic_fetch_add(&writes, 1);
	return (ssize_t)count;
}

static const struct classfs_device_attribute state_attr = {
	.attr = { .name = "state", .mode = 0644 },
	.show = state_show,
	.store = state_store,
};
static const struct classfs_device_attribute *const state_attrs[] = { &state_attr, NULL };
static const struct classfs_attribute_group state_group = { .attrs = state_attrs };
static const struct classfs_attribute_group *const state_groups[] = { &state_group, NULL };
static const struct classfs_device_type disk_type = { .name = "disk", .groups = state_groups };
static const struct classfs_device_type part_type = { .name = "partition",
						      .groups = state_groups };

static void sdev_release(struct classfs_device *dev)
{
	free(dev);
}

static struct sdev *sdev_add(struct classfs_device *parent, const char *name, dev_t devt,
			     const struct classfs_device_type *type)
{
	struct sdev *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	classfs_device_initialize(&s->dev);
	s->dev.cls = block;
	s->dev.parent = parent;
	s->dev.devt = devt;
	s->dev.type = type;
	s->dev.release = sdev_release;
	if (classfs_device_set_name(&s->dev, "%s", name) ||
	    classfs_device_add_to(tree, &s->dev)) {
		classfs_device_put(&s->dev);
		return NULL;
	}
	if (classfs_device_add_value(&s->dev, "size", 0444, "2048\n", 5, 0) ||
	    classfs_device_add_value(&s->dev, "queue/rotational", 0644, "1\n", 2, 0))
		VIOLATION("values of %s\n", name);
	atomic_fetch_add(&adds, 1);
	return s;
}

/* one writer: disks with partitions, renamed, notified, removed */
static void *writer(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 7919u, w = (unsigned int)(uintptr_t)arg;
	unsigned long round = 0;

	while (!atomic_load(&stop)) {
		struct sdev *disk, *parts[MAX_PARTS] = { NULL };
		int nparts = rand_r(&seed) % (MAX_PARTS + 1);
		char name[64];

		snprintf(name, sizeof(name), "w%ud%lu", w, round % 64);
		disk = sdev_add(NULL, name, makedev(200 + w, (round % 64) * 8), &disk_type);
		if (!disk) {
			VIOLATION("add %s\n", name);
			break;
		}
		for (int i = 0; i < nparts; i++) {
			char pname[80];

			snprintf(pname, sizeof(pname), "%sp%d", name, i + 1);
			parts[i] = sdev_add(&disk->dev, pname,
					    makedev(200 + w, (round % 64) * 8 + 1 + i), &part_type);
		}
		if (rand_r(&seed) % 4 == 0) {
			char newname[80];

			snprintf(newname, sizeof(newname), "%sr", name);
			if (classfs_device_rename(&disk->dev, newname) == 0)
				atomic_fetch_add(&renames, 1);
		}
		for (int i = 0; i < 3; i++) {
			classfs_device_notify(&disk->dev, "state");
			classfs_device_set_value(&disk->dev, "size", "4096\n", 5);
			atomic_fetch_add(&notifies, 1);
		}
		usleep((useconds_t)(rand_r(&seed) % 2000));
		/* children first by hand, or all with their parent */
		if (rand_r(&seed) % 2)
			for (int i = nparts - 1; i >= 0; i--) {
				if (!parts[i])
					continue;
				classfs_device_get(&parts[i]->dev);
				classfs_device_unregister(&parts[i]->dev);
				atomic_store(&parts[i]->removed, true);
				atomic_fetch_add(&removes, 1);
				classfs_device_put(&parts[i]->dev);
				parts[i] = NULL;
			}
		for (int i = 0; i < nparts; i++)
			if (parts[i])
				classfs_device_get(&parts[i]->dev);
		classfs_device_get(&disk->dev);
		classfs_device_unregister(&disk->dev);
		atomic_store(&disk->removed, true);
		atomic_fetch_add(&removes, 1);
		for (int i = 0; i < nparts; i++)
			if (parts[i]) {
				/* removed with their parent: done once it returned */
				atomic_store(&parts[i]->removed, true);
				atomic_fetch_add(&removes, 1);
				classfs_device_put(&parts[i]->dev);
			}
		classfs_device_put(&disk->dev);
		round++;
	}
	return NULL;
}

/* ---- listeners: gap-free SEQNUMs, ADD/REMOVE matched ---- */

#define MAX_PATHS 4096

struct follower {
	uint64_t last;
	long events;
	char *added[MAX_PATHS];
	int nadded;
};

static int find_path(struct follower *f, const char *p)
{
	for (int i = 0; i < f->nadded; i++)
		if (!strcmp(f->added[i], p))
			return i;
	return -1;
}

static void drop_path(struct follower *f, int i)
{
	free(f->added[i]);
	f->added[i] = f->added[--f->nadded];
}

static void follow(const struct classfs_uevent *ev, void *data)
{
	struct follower *f = data;
	int i = find_path(f, ev->devpath);

	if (ev->seqnum != f->last + 1)
		VIOLATION("SEQNUM %llu after %llu\n", (unsigned long long)ev->seqnum,
			  (unsigned long long)f->last);
	f->last = ev->seqnum;
	f->events++;
	switch (ev->action) {
	case CLASSFS_ACTION_ADD:
		if (i >= 0)
			VIOLATION("second ADD of %s\n", ev->devpath);
		else if (f->nadded < MAX_PATHS)
			f->added[f->nadded++] = strdup(ev->devpath);
		break;
	case CLASSFS_ACTION_REMOVE:
		if (i < 0)
			VIOLATION("REMOVE of %s without ADD\n", ev->devpath);
		else
			drop_path(f, i);
		break;
	case CLASSFS_ACTION_MOVE: {
		const char *old = classfs_uevent_get(ev, "DEVPATH_OLD");
		size_t ol = old ? strlen(old) : 0;

		if (!old || (i = find_path(f, old)) < 0) {
			VIOLATION("MOVE of %s without ADD\n", old ? old : "?");
			break;
		}
		/* the renamed device and everything below it move */
		for (int k = 0; k < f->nadded; k++)
			if (!strncmp(f->added[k], old, ol) &&
			    (f->added[k][ol] == '\0' || f->added[k][ol] == '/')) {
				char *p;

				if (asprintf(&p, "%s%s", ev->devpath, f->added[k] + ol) < 0)
					abort();
				free(f->added[k]);
				f->added[k] = p;
			}
		break;
	}
	default:
		break;
	}
}

int main(int argc, char **argv)
{
	int seconds = stress_default_seconds(), nwriters = 2, nreaders = 2;
	int memcheck = !STRESS_SANITIZED;
	const char *results = NULL;
	static const struct option opts[] = {
		{ "seconds", required_argument, NULL, 's' },
		{ "writers", required_argument, NULL, 'w' },
		{ "readers", required_argument, NULL, 'r' },
		{ "results", required_argument, NULL, 'o' },
		{ "no-memcheck", no_argument, NULL, 'm' },
		{ 0 },
	};
	pthread_t wt[MAX_WRITERS];
	pid_t rp[MAX_READERS];
	int pipes[MAX_READERS][2];
	struct follower fol[2] = { { 0 } };
	char mnt[] = "/tmp/classfs-stress-XXXXXX";
	struct classfs_mount *m;
	long rss[64] = { 0 }, rops = 0, rbad = 0;
	size_t base_nodes;
	int c, nsamples = 0, go[2];

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 's': seconds = atoi(optarg); break;
		case 'w': nwriters = atoi(optarg); break;
		case 'r': nreaders = atoi(optarg); break;
		case 'o': results = optarg; break;
		case 'm': memcheck = 0; break;
		default:
			fprintf(stderr, "usage: %s [--seconds N] [--writers N] [--readers N] "
					"[--results FILE] [--no-memcheck]\n", argv[0]);
			return 2;
		}
	}
	if (seconds < 1 || nwriters < 1 || nwriters > MAX_WRITERS || nreaders < 0 ||
	    nreaders > MAX_READERS) {
		fprintf(stderr, "stress: bad --seconds, --writers or --readers\n");
		return 2;
	}
	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) < 0) {
		printf("SKIP: needs root and /dev/fuse\n");
		return 77;
	}
	if (!mkdtemp(mnt) || pipe(go) < 0) {
		perror("stress: setup");
		return 1;
	}
	for (int i = 0; i < nreaders; i++) {
		if (pipe(pipes[i]) < 0)
			return 1;
		rp[i] = fork();
		if (rp[i] < 0)
			return 1;
		if (rp[i] == 0) {
			close(go[1]);
			close(pipes[i][0]);
			reader(mnt, "block", go[0], pipes[i][1], seconds);
		}
		close(pipes[i][1]);
	}
	close(go[0]);
	tree = classfs_tree_new(CLASSFS_LAYOUT_CLASS);
	block = classfs_class_create(tree, "block");
	if (!tree || !block) {
		perror("stress: setup");
		return 1;
	}
	base_nodes = classfs_tree_node_count(tree);
	for (int i = 0; i < 2; i++)
		if (classfs_listener_add(tree, follow, &fol[i]) < 0)
			return 1;
	m = classfs_mount_tree(tree, mnt, NULL);
	if (!m) {
		perror("stress: mount");
		rmdir(mnt);
		close(go[1]);	/* the readers end without a walk */
		return 1;
	}
	for (int i = 0; i < nreaders; i++)
		if (write(go[1], "g", 1) != 1)
			return 1;
	close(go[1]);
	for (int i = 0; i < nwriters; i++)
		pthread_create(&wt[i], NULL, writer, (void *)(uintptr_t)i);

	for (int s = 0; s < seconds; s++) {
		sleep(1);
		if (nsamples < 64)
			rss[nsamples++] = rss_kib(0);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < nwriters; i++)
		pthread_join(wt[i], NULL);
	for (int i = 0; i < nreaders; i++) {
		char line[64] = "";
		long ops = 0, bad = 0;
		int status = 0;
		ssize_t n;

		n = read(pipes[i][0], line, sizeof(line) - 1);
		waitpid(rp[i], &status, 0);
		close(pipes[i][0]);
		if (n <= 0 || sscanf(line, "%ld %ld", &ops, &bad) != 2 || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			VIOLATION("reader %d died (status %d)\n", i, status);
			continue;
		}
		rops += ops;
		rbad += bad;
	}
	if (rbad)
		VIOLATION("%ld unexpected reader errors\n", rbad);
	if (classfs_mount_close(m) < 0)
		VIOLATION("unmount\n");
	rmdir(mnt);

	for (int i = 0; i < 2; i++) {
		if (fol[i].nadded)
			VIOLATION("%d devices never removed (%s)\n", fol[i].nadded, fol[i].added[0]);
		if (fol[i].events != fol[0].events)
			VIOLATION("listeners saw %ld and %ld events\n", fol[0].events,
				  fol[i].events);
	}
	if (classfs_tree_node_count(tree) != base_nodes)
		VIOLATION("%zu nodes left\n", classfs_tree_node_count(tree) - base_nodes);
	/* flat: the last quarter's RSS within 25% + 8 MiB of the second quarter's */
	long early = 0, late = 0;

	for (int i = nsamples / 4; i < nsamples / 2; i++)
		early = rss[i] > early ? rss[i] : early;
	for (int i = 3 * nsamples / 4; i < nsamples; i++)
		late = rss[i] > late ? rss[i] : late;
	if (memcheck && nsamples >= 8 && late > early + early / 4 + 8192)
		VIOLATION("memory grew from %ld to %ld KiB\n", early, late);

	classfs_class_destroy(block);
	if (classfs_tree_free(tree) < 0)
		VIOLATION("tree not empty at the end\n");

	char line[512];

	snprintf(line, sizeof(line),
		 "stress-local\t%d\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld\t%ld/%ld\t%ld\n", seconds,
		 atomic_load(&adds), atomic_load(&removes), atomic_load(&renames),
		 atomic_load(&notifies), atomic_load(&shows), rops, fol[0].events,
		 atomic_load(&writes), early, late, atomic_load(&violations));
	printf("seconds adds removes renames notifies shows reader-ops events stores "
	       "rss-KiB(early/late) violations\n%s", strchr(line, '\t') + 1);
	stress_record(results, line);
	return atomic_load(&violations) ? 1 : 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * classfs-demo - a small machine built with the 2.6.15 class API, shown
 * the way a user of /sys would look at it: the events as they happen, the
 * tree with its links and values, then the removal.
 *
 *   classfs-demo [--layout class|devices] [--mount DIR]
 *
 * With --mount the machine is served at DIR (a live sysfs) until SIGINT or
 * SIGTERM instead of being printed; "ready" on stdout says it is up.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <classfs/kernel.h>

/* ---- a disk driver: one disk with two partitions ---- */

struct part {
	unsigned long start, nr_sects;
};

static struct part parts[] = { { 2048, 1048576 }, { 1050624, 2097152 } };

static ssize_t size_show(struct class_device *cdev, char *buf)
{
	struct part *p = class_get_devdata(cdev);

	return sprintf(buf, "%lu\n", p ? p->nr_sects : 3147776UL);
}
static CLASS_DEVICE_ATTR(size, S_IRUGO, size_show, NULL);

static ssize_t start_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%lu\n", ((struct part *)class_get_devdata(cdev))->start);
}
static CLASS_DEVICE_ATTR(start, S_IRUGO, start_show, NULL);

static ssize_t partition_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%u\n", MINOR(cdev->devt) % 16);
}
static CLASS_DEVICE_ATTR(partition, S_IRUGO, partition_show, NULL);

static int block_hotplug(struct class_device *cdev, char **envp, int num_envp, char *buffer,
			 int buffer_size)
{
	int i = 0, len = 0;

	return add_hotplug_env_var(envp, num_envp, &i, buffer, buffer_size, &len, "DEVTYPE=%s",
				   cdev->parent ? "partition" : "disk");
}

static struct class block_class = { .name = "block", .hotplug = block_hotplug };
static struct device pci = { .bus_id = "pci0000:00" };
static struct device ata = { .bus_id = "0000:00:1f.2" };
static struct class_device *sda, *sda1, *sda2;

/* ---- an input driver: a mouse with nested event and mouse interfaces ---- */

static struct class *input_class;
static struct class_device *input0, *event0, *mouse0, *mice;

static ssize_t name_show(struct class_device *cdev, char *buf)
{
	return sprintf(buf, "%s\n", "ImExPS/2 Generic Explorer Mouse");
}
static CLASS_DEVICE_ATTR(name, S_IRUGO, name_show, NULL);

/* ---- showing it ---- */

static void on_event(const struct classfs_uevent *ev, void *data)
{
	(void)data;
	printf("UEVENT[%llu] %-6s %s (%s)\n", (unsigned long long)ev->seqnum,
	       classfs_action_name(ev->action), ev->devpath, ev->subsystem ? ev->subsystem : "");
}

struct walk {
	struct classfs_tree *t;
	char path[1024];
	int depth;
};

static int show_entry(void *ctx, const char *name, const struct classfs_stat *st);

/* list a directory sorted by name, as ls would show it */
struct listing {
	size_t n;
	struct { char name[256]; struct classfs_stat st; } e[256];
};

static int collect(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct listing *l = ctx;

	if (l->n < 256) {
		snprintf(l->e[l->n].name, sizeof(l->e[0].name), "%s", name);
		l->e[l->n++].st = *st;
	}
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

static void show_dir(struct walk *w)
{
	struct listing *l = calloc(1, sizeof(*l));

	if (!l)
		return;
	classfs_path_list(w->t, w->path, collect, l);
	qsort(l->e, l->n, sizeof(l->e[0]), by_name);
	for (size_t i = 0; i < l->n; i++)
		show_entry(w, l->e[i].name, &l->e[i].st);
	free(l);
}

static int show_entry(void *ctx, const char *name, const struct classfs_stat *st)
{
	struct walk *w = ctx;
	size_t len = strlen(w->path);
	char buf[4097];
	ssize_t n;

	snprintf(w->path + len, sizeof(w->path) - len, "%s%s", len ? "/" : "", name);
	printf("%*s", w->depth * 4, "");
	if (st->type == CLASSFS_FT_DIR) {
		printf("%s/\n", name);
		w->depth++;
		show_dir(w);
		w->depth--;
	} else if (st->type == CLASSFS_FT_LNK) {
		n = classfs_path_readlink(w->t, w->path, buf, sizeof(buf));
		printf("%s -> %s\n", name, n >= 0 ? buf : "?");
	} else if (!strcmp(name, "uevent")) {
		n = classfs_path_read(w->t, w->path, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		for (char *l = buf, *e; *l; l = e + 1) {
			e = strchr(l, '\n');
			if (!e)
				break;
			*e = '\0';
			printf("%s%s", l == buf ? "uevent: " : ", ", l);
		}
		printf("%s\n", buf[0] ? "" : "uevent");
	} else {
		n = classfs_path_read(w->t, w->path, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		if (n > 0 && buf[n - 1] == '\n')
			buf[n - 1] = '\0';
		printf("%s = %s\n", name, n >= 0 ? buf : "(unreadable)");
	}
	w->path[len] = '\0';
	return 0;
}

static void fail(const char *what, long err)
{
	fprintf(stderr, "classfs-demo: %s: %s\n", what, strerror((int)-err));
	exit(1);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "layout", required_argument, NULL, 'l' },
		{ "mount", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	enum classfs_layout layout = CLASSFS_LAYOUT_CLASS;
	const char *mountpoint = NULL;
	struct walk w = { 0 };
	int c, r;

	while ((c = getopt_long(argc, argv, "l:m:h", opts, NULL)) != -1) {
		if (c == 'm') {
			mountpoint = optarg;
		} else if (c == 'l' && !strcmp(optarg, "class")) {
			layout = CLASSFS_LAYOUT_CLASS;
		} else if (c == 'l' && !strcmp(optarg, "devices")) {
			layout = CLASSFS_LAYOUT_DEVICES;
		} else {
			fprintf(c == 'h' ? stdout : stderr,
				"usage: classfs-demo [--layout class|devices] [--mount DIR]\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if ((r = classfs_set_default_layout(layout)) < 0)
		fail("layout", r);
	w.t = classfs_default_tree();
	classfs_listener_add(w.t, on_event, NULL);

	printf("== building: physical devices, a disk with partitions, an input device\n");
	if ((r = device_register(&pci)) < 0)
		fail("pci0000:00", r);
	ata.parent = &pci;
	if ((r = device_register(&ata)) < 0)
		fail("0000:00:1f.2", r);
	if ((r = class_register(&block_class)) < 0)
		fail("class block", r);
	sda = class_device_create(&block_class, NULL, MKDEV(8, 0), &ata, "sda");
	if (IS_ERR(sda))
		fail("sda", PTR_ERR(sda));
	class_device_create_file(sda, &class_device_attr_size);
	sda1 = class_device_create(&block_class, sda, MKDEV(8, 1), NULL, "sda%d", 1);
	sda2 = class_device_create(&block_class, sda, MKDEV(8, 2), NULL, "sda%d", 2);
	if (IS_ERR(sda1) || IS_ERR(sda2))
		fail("partitions", IS_ERR(sda1) ? PTR_ERR(sda1) : PTR_ERR(sda2));
	class_set_devdata(sda1, &parts[0]);
	class_set_devdata(sda2, &parts[1]);
	for (int i = 0; i < 2; i++) {
		struct class_device *p = i ? sda2 : sda1;

		class_device_create_file(p, &class_device_attr_size);
		class_device_create_file(p, &class_device_attr_start);
		class_device_create_file(p, &class_device_attr_partition);
	}

	input_class = class_create(THIS_MODULE, "input");
	if (IS_ERR(input_class))
		fail("class input", PTR_ERR(input_class));
	input0 = class_device_create(input_class, NULL, 0, NULL, "input0");
	if (IS_ERR(input0))
		fail("input0", PTR_ERR(input0));
	class_device_create_file(input0, &class_device_attr_name);
	event0 = class_device_create(input_class, input0, MKDEV(13, 64), NULL, "event0");
	mouse0 = class_device_create(input_class, input0, MKDEV(13, 32), NULL, "mouse0");
	mice = class_device_create(input_class, NULL, MKDEV(13, 63), NULL, "mice");
	if (IS_ERR(event0) || IS_ERR(mouse0) || IS_ERR(mice))
		fail("input interfaces", -EINVAL);

	if (mountpoint) {
		sigset_t set;
		int sig;

		sigemptyset(&set);
		sigaddset(&set, SIGINT);
		sigaddset(&set, SIGTERM);
		pthread_sigmask(SIG_BLOCK, &set, NULL);
		if ((r = classfs_mount(mountpoint, NULL)) < 0)
			fail(mountpoint, r);
		printf("ready\n");
		fflush(stdout);
		sigwait(&set, &sig);
		classfs_unmount();
	} else {
		printf("\n== the tree (layout %s)\n",
		       layout == CLASSFS_LAYOUT_CLASS ? "class" : "devices");
		show_dir(&w);
	}

	printf("\n== rename sda2 -> sda3\n");
	class_device_rename(sda2, "sda3");

	printf("\n== removing the disk with its partitions still there, then the rest\n");
	class_device_unregister(sda);
	class_device_destroy(input_class, MKDEV(13, 63));
	class_device_unregister(input0);
	class_destroy(input_class);
	class_unregister(&block_class);
	device_unregister(&ata);
	device_unregister(&pci);
	printf("\n== what is left: the fixed directories\n");
	show_dir(&w);
	return 0;
}

// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * udevdb.c - what the loaded devices look like to udev's users: the udev
 * database (the files of /run/udev/data that libudev and sd-device read
 * next to /sys) and the device nodes /dev needs.
 *
 * A database file is named after the device: "b8:0"/"c189:10" for a
 * device with a number, "n3" for a network interface, else
 * "+SUBSYSTEM:NAME".  Its lines: "S:" devlinks (relative to /dev), "G:"
 * tags, "Q:" current tags, "I:" USEC_INITIALIZED, "E:KEY=VALUE" every
 * other recorded property, "V:1" the format version.
 */
#include "record-internal.h"
#include "util.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* the database file name of a loaded device, or false when it has none */
static bool db_name(struct rec_dev *rd, char *buf, size_t size)
{
	const char *subsystem = cfs_rec_subsystem(&rd->dev), *ifindex;

	if (major(rd->devt)) {
		snprintf(buf, size, "%c%u:%u", (rd->flags & REC_F_BLOCK) ? 'b' : 'c',
			 major(rd->devt), minor(rd->devt));
		return true;
	}
	if (!subsystem)
		return false;
	ifindex = cfs_rec_prop(rd, "IFINDEX");
	if (!strcmp(subsystem, "net") && ifindex && *ifindex) {
		snprintf(buf, size, "n%s", ifindex);
		return true;
	}
	snprintf(buf, size, "+%s:%s", subsystem, classfs_device_name(&rd->dev));
	return true;
}

static int write_db(struct rec_dev *rd, int dirfd)
{
	char name[NAME_MAX + 32], tmp[NAME_MAX + 40];
	bool have_s = false;
	struct rec_entry e;
	size_t off = 0;
	FILE *f;
	int fd, r = 0;

	if (!db_name(rd, name, sizeof(name)))
		return 0;
	/* written aside and renamed: a reader never sees half a file */
	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		r = -errno;
		close(fd);
		unlinkat(dirfd, tmp, 0);
		return r;
	}
	while (cfs_rec_next(rd, &off, &e))
		if (e.tag == 'S') {
			fprintf(f, "S:%s\n", e.a);
			have_s = true;
		}
	off = 0;
	while (cfs_rec_next(rd, &off, &e)) {
		if (e.tag != 'E' && e.tag != 'U')
			continue;
		if (!strcmp(e.a, "DEVLINKS")) {
			/* devlinks only as a property: one S: each */
			for (const char *s = e.b; !have_s && *s;) {
				size_t n = strcspn(s, " ");

				if (n > 5 && !strncmp(s, "/dev/", 5))
					fprintf(f, "S:%.*s\n", (int)n - 5, s + 5);
				s += n;
				s += strspn(s, " ");
			}
		} else if (!strcmp(e.a, "TAGS")) {
			cfs_put_tags(f, 'G', e.b);
		} else if (!strcmp(e.a, "CURRENT_TAGS")) {
			cfs_put_tags(f, 'Q', e.b);
		} else if (!strcmp(e.a, "USEC_INITIALIZED")) {
			fprintf(f, "I:%s\n", e.b);
		} else if (!cfs_rec_udev_only_key(e.a)) {
			fprintf(f, "E:%s=%s\n", e.a, e.b);
		}
	}
	fputs("V:1\n", f);
	if (ferror(f))
		r = -EIO;
	if (fclose(f) && !r)
		r = -errno;
	if (!r && renameat(dirfd, tmp, dirfd, name) < 0)
		r = -errno;
	if (r)
		unlinkat(dirfd, tmp, 0);
	return r;
}

/**
 * classfs_record_export_udevdb() - write the udev database of the loaded
 * devices of @tree into @dir (which must exist).
 * Return: 0, -EINVAL, -ENOMEM, or the -errno of a file that failed.
 */
int classfs_record_export_udevdb(struct classfs_tree *tree, const char *dir)
{
	struct rec_devlist l;
	int dirfd, r;

	if (!tree || !dir)
		return -EINVAL;
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -errno;
	r = cfs_rec_collect(tree, &l);
	for (size_t i = 0; !r && i < l.n; i++) {
		struct rec_dev *rd = cfs_rec_of(l.v[i]);

		if (rd && !(rd->flags & REC_F_PLACEHOLDER))
			r = write_db(rd, dirfd);
	}
	cfs_rec_devlist_free(&l);
	close(dirfd);
	return r;
}

/* the node of one loaded device; false when it has none */
static int node_of(struct rec_dev *rd, struct classfs_record_node *node, char *syspath,
		   size_t syssize, char *devname, size_t namesize, const char **links,
		   size_t maxlinks, unsigned char **contents)
{
	const char *name = NULL, *hex = NULL, *prop, *mode;
	struct rec_entry e;
	size_t off = 0, nlinks = 0;

	while (cfs_rec_next(rd, &off, &e)) {
		if (e.tag == 'N') {
			name = e.a;
			hex = e.b;
		} else if (e.tag == 'S' && nlinks < maxlinks) {
			links[nlinks++] = e.a;
		}
	}
	prop = cfs_rec_prop(rd, "DEVNAME");
	if (!name && prop)
		name = strncmp(prop, "/dev/", 5) ? prop : prop + 5;
	if (!name && !major(rd->devt))
		return 0;
	if (!name)
		name = classfs_device_name(&rd->dev);
	if (classfs_device_syspath(&rd->dev, syspath, syssize) < 0)
		return 0;
	snprintf(devname, namesize, "%s%s", name[0] == '/' ? "" : "/dev/", name);
	mode = cfs_rec_prop(rd, "DEVMODE");
	*node = (struct classfs_record_node){
		.syspath = syspath,
		.devname = devname,
		.block = rd->flags & REC_F_BLOCK,
		.devt = rd->devt,
		.mode = mode ? (mode_t)strtoul(mode, NULL, 8) & 07777 : 0666,
		.symlinks = links,
		.nsymlinks = nlinks,
	};
	if (hex && *hex) {
		size_t len = strlen(hex) / 2;

		*contents = malloc(len ? len : 1);
		if (!*contents)
			return -ENOMEM;
		cfs_rec_unhex(hex, strlen(hex), *contents);
		node->contents = *contents;
		node->contents_len = len;
	}
	return 1;
}

/**
 * classfs_record_for_each_node() - call @fn for each loaded device with a
 * device node, parents first; stops at (and returns) a non-zero return.
 * Return: 0, @fn's non-zero return, -EINVAL, -ENOMEM.
 */
int classfs_record_for_each_node(struct classfs_tree *tree,
				 int (*fn)(const struct classfs_record_node *node, void *data),
				 void *data)
{
	struct rec_devlist l;
	int r;

	if (!tree || !fn)
		return -EINVAL;
	r = cfs_rec_collect(tree, &l);
	for (size_t i = 0; !r && i < l.n; i++) {
		struct rec_dev *rd = cfs_rec_of(l.v[i]);
		struct classfs_record_node node;
		char syspath[PATH_MAX], devname[PATH_MAX];
		const char *links[64];
		unsigned char *contents = NULL;

		if (!rd || (rd->flags & REC_F_PLACEHOLDER))
			continue;
		r = node_of(rd, &node, syspath, sizeof(syspath), devname, sizeof(devname), links,
			    64, &contents);
		if (r > 0)
			r = fn(&node, data);
		free(contents);
	}
	cfs_rec_devlist_free(&l);
	return r;
}
